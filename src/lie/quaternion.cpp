// Unit quaternions, Hamilton convention (maximal-coordinates paper §2.1). The tangent
// maps are those of SO(3): the cover is a local isomorphism with the same Lie algebra.
#include "marsden/lie/quaternion.hpp"

#include <cmath>

#include "marsden/lie/so3.hpp"
#include "scalar_series.hpp"

namespace marsden {

namespace quat {

Mat4 L(const Vec4& q) {
  Mat4 M;
  M(0, 0) = q(0);
  M.block<1, 3>(0, 1) = -q.tail<3>().transpose();
  M.block<3, 1>(1, 0) = q.tail<3>();
  M.block<3, 3>(1, 1) = q(0) * Mat3::Identity() + SO3::hat(q.tail<3>());
  return M;
}

Mat4 R(const Vec4& q) {
  Mat4 M;
  M(0, 0) = q(0);
  M.block<1, 3>(0, 1) = -q.tail<3>().transpose();
  M.block<3, 1>(1, 0) = q.tail<3>();
  M.block<3, 3>(1, 1) = q(0) * Mat3::Identity() - SO3::hat(q.tail<3>());
  return M;
}

Mat4 T() { return Vec4(1.0, -1.0, -1.0, -1.0).asDiagonal(); }

Mat34 V() {
  Mat34 M = Mat34::Zero();
  M.rightCols<3>() = Mat3::Identity();
  return M;
}

}  // namespace quat

// eq. (3).
// V L(q) R(q)^T V^T p expanded: (q_w^2 - |q_v|^2) p + 2 q_v (q_v . p) + 2 q_w q_v x p.
Vec3 Quat::act(const Vec3& p) const {
  const double w = q(0);
  const Vec3 v = q.tail<3>();
  return (w * w - v.squaredNorm()) * p + 2.0 * v.dot(p) * v + 2.0 * w * (SO3::hat(v) * p);
}

// The same quadratic form as act, so matrix() * p == act(p) to round-off.
// Shepperd's method: divide by the largest of 4 q_w^2, 4 q_x^2, 4 q_y^2, 4 q_z^2 so no
// branch divides by a small number (robust at rotation angle pi). Returns q_w >= 0.
Quat Quat::from_rotation(const Mat3& M) {
  const double tr = M.trace();
  Vec4 r;
  int k = 0;
  const Vec4 d(tr, M(0, 0), M(1, 1), M(2, 2));
  d.maxCoeff(&k);
  if (k == 0) {
    const double s = 2.0 * std::sqrt(1.0 + tr);  // 4 q_w
    r << 0.25 * s, (M(2, 1) - M(1, 2)) / s, (M(0, 2) - M(2, 0)) / s, (M(1, 0) - M(0, 1)) / s;
  } else if (k == 1) {
    const double s = 2.0 * std::sqrt(1.0 + M(0, 0) - M(1, 1) - M(2, 2));  // 4 q_x
    r << (M(2, 1) - M(1, 2)) / s, 0.25 * s, (M(0, 1) + M(1, 0)) / s, (M(0, 2) + M(2, 0)) / s;
  } else if (k == 2) {
    const double s = 2.0 * std::sqrt(1.0 - M(0, 0) + M(1, 1) - M(2, 2));  // 4 q_y
    r << (M(0, 2) - M(2, 0)) / s, (M(0, 1) + M(1, 0)) / s, 0.25 * s, (M(1, 2) + M(2, 1)) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 - M(0, 0) - M(1, 1) + M(2, 2));  // 4 q_z
    r << (M(1, 0) - M(0, 1)) / s, (M(0, 2) + M(2, 0)) / s, (M(1, 2) + M(2, 1)) / s, 0.25 * s;
  }
  if (r(0) < 0.0) r = -r;
  return Quat{r.normalized()};
}

Vec3 Quat::vee(const Mat3& W) { return SO3::vee(W); }

Quat Quat::exp(const Vec3& w) {
  const double h = 0.5 * w.norm();
  Quat r;
  r.q(0) = std::cos(h);
  r.q.tail<3>() = 0.5 * lie_detail::sinc(h) * w;  // sin(h) w / |w|
  return r;
}

// theta = 2 atan2(|q_v|, q_w) in [0, 2 pi], so exp(log q) = q on both sheets.
// atan2(s, q_w)/s has no cancellation for any s > 0; s = 0 is q = +-1.
Vec3 Quat::log(const Quat& g) {
  const Vec3 v = g.q.tail<3>();
  const double s = v.norm();
  if (s < 1e-300) {
    // q = 1: the zero vector. q = -1: any rotation by 2 pi; take the x axis.
    return g.q(0) >= 0.0 ? Vec3((2.0 / g.q(0)) * v) : Vec3(2.0 * lie_detail::kPi, 0.0, 0.0);
  }
  return (2.0 * std::atan2(s, g.q(0)) / s) * v;
}

// SO(3)'s Cayley map on the sheet q_w > 0: cos(theta/2) = 1/sqrt(1 + |w|^2/4) and
// w = 2 tan(theta/2) n.
Quat Quat::cay(const Vec3& w) {
  const double k = 1.0 / std::sqrt(1.0 + 0.25 * w.squaredNorm());
  Quat r;
  r.q << k, 0.5 * k * w;
  return r;
}

// 2 q_v / q_w takes the same value on q and -q; defined for q_w != 0 (angle != pi).
Vec3 Quat::cay_inv(const Quat& g) { return (2.0 / g.q(0)) * g.q.tail<3>(); }

Quat Quat::ccsk(const Vec3& a) {
  Quat r;
  for (int i = 0; i < 3; ++i) {
    Quat f;
    f.q << std::cos(0.5 * a(i)), 0.0, 0.0, 0.0;
    f.q(1 + i) = std::sin(0.5 * a(i));
    r = r * f;
  }
  return r;
}

// Angles of the rotation as SO3::ccsk_inv (|a1| < pi/2, a2 in (-pi, pi]); a0 is then
// moved by 2 pi when needed to land on q's sheet, so a0 in (-2 pi, 2 pi].
Vec3 Quat::ccsk_inv(const Quat& g) {
  Vec3 a = SO3::ccsk_inv(SO3{g.matrix()});
  constexpr double kTwoPi = 2.0 * lie_detail::kPi;
  if (ccsk(a).q.dot(g.q) < 0.0) a(0) += a(0) <= 0.0 ? kTwoPi : -kTwoPi;
  return a;
}

Mat3 Quat::dexp(const Vec3& w) { return SO3::dexp(w); }
Mat3 Quat::dexp_inv(const Vec3& w) { return SO3::dexp_inv(w); }
Mat3 Quat::dcay(const Vec3& w) { return SO3::dcay(w); }
Mat3 Quat::dcay_inv(const Vec3& w) { return SO3::dcay_inv(w); }
Mat3 Quat::dccsk(const Vec3& a) { return SO3::dccsk(a); }
Mat3 Quat::dccsk_inv(const Vec3& a) { return SO3::dccsk_inv(a); }

}  // namespace marsden
