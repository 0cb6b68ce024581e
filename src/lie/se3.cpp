// SE(3) closed forms, xi = (omega, v). The rotation parts delegate to SO3.
#include "marsden/lie/se3.hpp"

#include "lie/dexp_inv_derivative.hpp"

namespace marsden {

namespace {

// (I - W/2)^-1 = (4 I + 2 W + w w^T) / (4 + |w|^2): the translation part of the matrix
// Cayley map and the lower-right block of dcay.
Mat3 cay_translation(const Vec3& w) {
  return (4.0 * Mat3::Identity() + 2.0 * SO3::hat(w) + w * w.transpose()) /
         (4.0 + w.squaredNorm());
}

}  // namespace

Mat4 SE3::matrix() const {
  Mat4 M = Mat4::Identity();
  M.topLeftCorner<3, 3>() = R;
  M.topRightCorner<3, 1>() = x;
  return M;
}

Mat4 SE3::hat(const Vec6& xi) {
  Mat4 X = Mat4::Zero();
  X.topLeftCorner<3, 3>() = SO3::hat(xi.head<3>());
  X.topRightCorner<3, 1>() = xi.tail<3>();
  return X;
}

Vec6 SE3::vee(const Mat4& X) {
  Vec6 xi;
  xi << SO3::vee(X.topLeftCorner<3, 3>()), X.topRightCorner<3, 1>();
  return xi;
}

Mat6 SE3::Ad() const {
  Mat6 A = Mat6::Zero();
  A.topLeftCorner<3, 3>() = R;
  A.bottomLeftCorner<3, 3>() = SO3::hat(x) * R;
  A.bottomRightCorner<3, 3>() = R;
  return A;
}

Mat6 SE3::ad(const Vec6& xi) {
  const Mat3 W = SO3::hat(xi.head<3>());
  Mat6 A = Mat6::Zero();
  A.topLeftCorner<3, 3>() = W;
  A.bottomLeftCorner<3, 3>() = SO3::hat(xi.tail<3>());
  A.bottomRightCorner<3, 3>() = W;
  return A;
}

// vehicles eq. (9) with tau = exp: translation B_exp(omega) v, B_exp the SO(3) left Jacobian.
SE3 SE3::exp(const Vec6& xi) {
  const Vec3 w = xi.head<3>();
  return SE3{SO3::exp(w).R, SO3::dexp(w) * xi.tail<3>()};
}

Vec6 SE3::log(const SE3& g) {
  const Vec3 w = SO3::log(SO3{g.R});
  Vec6 xi;
  xi << w, SO3::dexp_inv(w) * g.x;
  return xi;
}

// The matrix definition (I - X/2)^-1 (I + X/2) has translation (I - W/2)^-1 v. The
// paper's B_cay(omega) = 2/(4 + |omega|^2)(2I + omega^) (after vehicles eq. (13)) drops the
// omega omega^T/(4 + |omega|^2) term and is not consistent with its own C_cay; the
// definition is used here.
SE3 SE3::cay(const Vec6& xi) {
  const Vec3 w = xi.head<3>();
  return SE3{SO3::cay(w).R, cay_translation(w) * xi.tail<3>()};
}

// Defined for rotation angles < pi.
Vec6 SE3::cay_inv(const SE3& g) {
  const Vec3 w = SO3::cay_inv(SO3{g.R});
  Vec6 xi;
  xi << w, g.x - 0.5 * SO3::hat(w) * g.x;
  return xi;
}

// exp(a0 E0) ... exp(a2 E2) is the pure rotation SO3::ccsk; the translations that follow
// are along its body axes: x = R (a3, a4, a5).
SE3 SE3::ccsk(const Vec6& a) {
  const Mat3 R = SO3::ccsk(a.head<3>()).R;
  return SE3{R, R * a.tail<3>()};
}

// Same domain as SO3::ccsk_inv for the angles; the translations are global.
Vec6 SE3::ccsk_inv(const SE3& g) {
  Vec6 a;
  a << SO3::ccsk_inv(SO3{g.R}), g.R.transpose() * g.x;
  return a;
}

// [[J, 0], [Q, J]], J the SO(3) left Jacobian.
Mat6 SE3::dexp(const Vec6& xi) {
  const Vec3 w = xi.head<3>();
  const Mat3 J = SO3::dexp(w);
  Mat6 D = Mat6::Zero();
  D.topLeftCorner<3, 3>() = J;
  D.bottomLeftCorner<3, 3>() = detail::barfoot_q<double>(w, xi.tail<3>());
  D.bottomRightCorner<3, 3>() = J;
  return D;
}

Mat6 SE3::dexp_inv(const Vec6& xi) { return detail::se3_dexp_inv<double>(xi); }

// Inverse of dcay_inv = [[A, 0], [-(1/2) D v^, D]] with D = I - W/2:
// [[A^-1, 0], [(1/2) v^ A^-1, D^-1]], A^-1 = SO3::dcay.
Mat6 SE3::dcay(const Vec6& xi) {
  const Vec3 w = xi.head<3>();
  const Mat3 Ai = SO3::dcay(w);
  Mat6 D = Mat6::Zero();
  D.topLeftCorner<3, 3>() = Ai;
  D.bottomLeftCorner<3, 3>() = 0.5 * SO3::hat(xi.tail<3>()) * Ai;
  D.bottomRightCorner<3, 3>() = cay_translation(w);
  return D;
}

// (I - X/2) Delta (I + X/2), vee'd; this is the paper's C_cay (vehicles eq. (14)).
Mat6 SE3::dcay_inv(const Vec6& xi) {
  const Vec3 w = xi.head<3>();
  const Mat3 D = Mat3::Identity() - 0.5 * SO3::hat(w);
  Mat6 C = Mat6::Zero();
  C.topLeftCorner<3, 3>() = SO3::dcay_inv(w);
  C.bottomLeftCorner<3, 3>() = -0.5 * D * SO3::hat(xi.tail<3>());
  C.bottomRightCorner<3, 3>() = D;
  return C;
}

// The first three prefixes are pure rotations, so the angular columns are SO3::dccsk;
// the translation E_{3+j} is transported by Ad of (R, .) to (0, R e_j).
Mat6 SE3::dccsk(const Vec6& a) {
  Mat6 D = Mat6::Zero();
  D.topLeftCorner<3, 3>() = SO3::dccsk(a.head<3>());
  D.bottomRightCorner<3, 3>() = SO3::ccsk(a.head<3>()).R;
  return D;
}

Mat6 SE3::dccsk_inv(const Vec6& a) {
  Mat6 D = Mat6::Zero();
  D.topLeftCorner<3, 3>() = SO3::dccsk_inv(a.head<3>());
  D.bottomRightCorner<3, 3>() = SO3::ccsk(a.head<3>()).R.transpose();
  return D;
}

}  // namespace marsden
