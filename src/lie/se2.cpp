// SE(2) closed forms, xi = (omega, v1, v2). With J the rotation by pi/2, hat(xi) =
// [[omega J, v], [0, 0]]; every map reduces to 2x2 blocks a I + b J.
#include "marsden/lie/se2.hpp"

#include <cmath>

#include "scalar_series.hpp"

namespace marsden {

namespace {

Mat2 rot(double theta) {
  const double c = std::cos(theta), s = std::sin(theta);
  Mat2 R;
  R << c, -s, s, c;
  return R;
}

// a I + b J.
Mat2 rot_like(double a, double b) {
  Mat2 M;
  M << a, -b, b, a;
  return M;
}

// J v = (-v2, v1).
Vec2 perp(const Vec2& v) { return Vec2(-v.y(), v.x()); }

}  // namespace

SE2 SE2::from_angle(double theta, const Vec2& x) { return SE2{rot(theta), x}; }

double SE2::angle() const { return std::atan2(R(1, 0), R(0, 0)); }

Mat3 SE2::matrix() const {
  Mat3 M = Mat3::Identity();
  M.topLeftCorner<2, 2>() = R;
  M.topRightCorner<2, 1>() = x;
  return M;
}

Mat3 SE2::hat(const Vec3& xi) {
  Mat3 X;
  X << 0.0, -xi(0), xi(1),
       xi(0), 0.0, xi(2),
       0.0, 0.0, 0.0;
  return X;
}

Vec3 SE2::vee(const Mat3& X) { return Vec3(X(1, 0), X(0, 2), X(1, 2)); }

// g hat(xi) g^-1 = [[omega J, R v - omega J x]]: Ad = [[1, 0], [-J x, R]].
Mat3 SE2::Ad() const {
  Mat3 A = Mat3::Zero();
  A(0, 0) = 1.0;
  A(1, 0) = x.y();
  A(2, 0) = -x.x();
  A.bottomRightCorner<2, 2>() = R;
  return A;
}

Mat3 SE2::ad(const Vec3& xi) {
  Mat3 A;
  A << 0.0, 0.0, 0.0,
       xi(2), 0.0, -xi(0),
       -xi(1), xi(0), 0.0;
  return A;
}

// Translation V(w) v with V = sum (wJ)^k/(k+1)! = sin(w)/w I + (1 - cos w)/w J
// (vehicles Appendix B).
SE2 SE2::exp(const Vec3& xi) {
  const double w = xi(0);
  const Mat2 V = rot_like(lie_detail::sinc(w), w * lie_detail::one_minus_cos_over_sq(w));
  return SE2{rot(w), V * xi.tail<2>()};
}

// omega in (-pi, pi]; V^-1 = (w/2) cot(w/2) I - (w/2) J, regular up to |w| = pi.
Vec3 SE2::log(const SE2& g) {
  const double w = g.angle();
  const Mat2 Vi = rot_like(lie_detail::half_cot(w), -0.5 * w);
  Vec3 xi;
  xi << w, Vi * g.x;
  return xi;
}

// (I - X/2)^-1 (I + X/2) with (I - wJ/2)^-1 = (I + wJ/2) / (1 + w^2/4): rotation
// ((4 - w^2) I + 4 w J)/(4 + w^2), translation (4 v + 2 w J v)/(4 + w^2).
SE2 SE2::cay(const Vec3& xi) {
  const double w = xi(0);
  const double k = 1.0 / (4.0 + w * w);
  const Vec2 v = xi.tail<2>();
  return SE2{rot_like(k * (4.0 - w * w), k * 4.0 * w), k * (4.0 * v + 2.0 * w * perp(v))};
}

// w = 2 tan(theta/2) = 2 sin / (1 + cos), v = (I - wJ/2) x; defined for |theta| < pi.
Vec3 SE2::cay_inv(const SE2& g) {
  const double w = 2.0 * (g.R(1, 0) - g.R(0, 1)) / (2.0 + g.R(0, 0) + g.R(1, 1));
  Vec3 xi;
  xi << w, g.x - 0.5 * w * perp(g.x);
  return xi;
}

// exp(a0 E0) exp(a1 E1) exp(a2 E2) = (R(a0), R(a0) (a1, a2)).
SE2 SE2::ccsk(const Vec3& a) {
  const Mat2 R = rot(a(0));
  return SE2{R, R * a.tail<2>()};
}

// a0 in (-pi, pi]; defined everywhere.
Vec3 SE2::ccsk_inv(const SE2& g) {
  Vec3 a;
  a << g.angle(), g.R.transpose() * g.x;
  return a;
}

// ad = [[0, 0], [-J v, w J]], so sum ad^k/(k+1)! = [[1, 0], [-W J v, V]] with
// W = sum (wJ)^k/(k+2)! = (1 - cos w)/w^2 I + (w - sin w)/w^2 J.
Mat3 SE2::dexp(const Vec3& xi) {
  const double w = xi(0);
  const double b = lie_detail::one_minus_cos_over_sq(w);
  const Vec2 v = xi.tail<2>();
  const Mat2 W = rot_like(b, w * lie_detail::x_minus_sin_over_cube(w));
  Mat3 D = Mat3::Zero();
  D(0, 0) = 1.0;
  D.bottomLeftCorner<2, 1>() = -(W * perp(v));
  D.bottomRightCorner<2, 2>() = rot_like(lie_detail::sinc(w), w * b);
  return D;
}

// [[1, 0], [V^-1 W J v, V^-1]].
Mat3 SE2::dexp_inv(const Vec3& xi) {
  const double w = xi(0);
  const Vec2 v = xi.tail<2>();
  const Mat2 W = rot_like(lie_detail::one_minus_cos_over_sq(w),
                          w * lie_detail::x_minus_sin_over_cube(w));
  const Mat2 Vi = rot_like(lie_detail::half_cot(w), -0.5 * w);
  Mat3 D = Mat3::Zero();
  D(0, 0) = 1.0;
  D.bottomLeftCorner<2, 1>() = Vi * (W * perp(v));
  D.bottomRightCorner<2, 2>() = Vi;
  return D;
}

// Inverse of dcay_inv = [[1 + w^2/4, 0], [(1/2) D J v, D]], D = I - wJ/2:
// (1/(4 + w^2)) [[4, 0], [-2 J v, 4 I + 2 w J]].
Mat3 SE2::dcay(const Vec3& xi) {
  const double w = xi(0);
  const double k = 1.0 / (4.0 + w * w);
  Mat3 D = Mat3::Zero();
  D(0, 0) = 4.0 * k;
  D.bottomLeftCorner<2, 1>() = -2.0 * k * perp(xi.tail<2>());
  D.bottomRightCorner<2, 2>() = rot_like(4.0 * k, 2.0 * w * k);
  return D;
}

// (I - X/2) Delta (I + X/2), vee'd: I - ad/2 + (1/4) [w xi, 0_{3x2}] (vehicles eq. (22)).
Mat3 SE2::dcay_inv(const Vec3& xi) {
  Mat3 C = Mat3::Identity() - 0.5 * ad(xi);
  C.col(0) += 0.25 * xi(0) * xi;
  return C;
}

// Columns e0, (0, R(a0) e1), (0, R(a0) e2): Ad of a pure rotation (then of a
// translation, which leaves translations alone).
Mat3 SE2::dccsk(const Vec3& a) {
  Mat3 D = Mat3::Zero();
  D(0, 0) = 1.0;
  D.bottomRightCorner<2, 2>() = rot(a(0));
  return D;
}

Mat3 SE2::dccsk_inv(const Vec3& a) {
  Mat3 D = Mat3::Zero();
  D(0, 0) = 1.0;
  D.bottomRightCorner<2, 2>() = rot(a(0)).transpose();
  return D;
}

}  // namespace marsden
