// SO(3) closed forms. Coefficients with cancellation near 0 come from scalar_series.hpp.
#include "marsden/lie/so3.hpp"

#include <cmath>

#include "lie/dexp_inv_derivative.hpp"
#include "scalar_series.hpp"

namespace marsden {

using lie_detail::sinc;

namespace {

// exp(a E_i): the elementary rotation about coordinate axis i.
Mat3 axis_rotation(int i, double a) {
  const double c = std::cos(a), s = std::sin(a);
  const int j = (i + 1) % 3, k = (i + 2) % 3;
  Mat3 R = Mat3::Identity();
  R(j, j) = c;
  R(j, k) = -s;
  R(k, j) = s;
  R(k, k) = c;
  return R;
}

}  // namespace

Vec3 SO3::vee(const Mat3& W) { return Vec3(W(2, 1), W(0, 2), W(1, 0)); }

// Rodrigues, vehicles eq. (11); (1 - cos)/theta^2 in half-angle form keeps it exact near 0.
SO3 SO3::exp(const Vec3& w) {
  const double theta = w.norm();
  const Mat3 W = hat(w);
  return SO3{Mat3::Identity() + sinc(theta) * W +
             lie_detail::one_minus_cos_over_sq(theta) * (W * W)};
}

Vec3 SO3::log(const SO3& g) {
  const Mat3& R = g.R;
  // s = sin(theta) n from the skew part, c = cos(theta) from the trace; atan2 keeps the
  // angle accurate at both ends, unlike acos near 0 or asin near pi.
  const Vec3 s = 0.5 * Vec3(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  const double c = 0.5 * (R.trace() - 1.0);
  const double theta = std::atan2(s.norm(), c);
  if (c > -0.9) return s / sinc(theta);  // theta n = theta s / sin(theta)
  // Near pi the skew part vanishes and s / sin(theta) loses digits. The symmetric part
  // (R + R^T)/2 - cos(theta) I = (1 - cos(theta)) n n^T gives the axis to round-off;
  // its largest column is the best conditioned. The skew part only fixes the sign.
  const Mat3 B = 0.5 * (R + R.transpose()) - c * Mat3::Identity();
  int k = 0;
  B.diagonal().maxCoeff(&k);
  Vec3 n = B.col(k).normalized();
  if (n.dot(s) < 0.0) n = -n;
  return theta * n;
}

// vehicles eq. (12): (I - W/2)^-1 (I + W/2) = I + 4/(4 + |w|^2) (W + W^2/2).
SO3 SO3::cay(const Vec3& w) {
  const Mat3 W = hat(w);
  return SO3{Mat3::Identity() + (4.0 / (4.0 + w.squaredNorm())) * (W + 0.5 * (W * W))};
}

// w = 2 tan(theta/2) n = 2 vee(R - R^T) / (1 + tr R); defined for theta < pi.
Vec3 SO3::cay_inv(const SO3& g) {
  const Mat3& R = g.R;
  const Vec3 a(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
  return (2.0 / (1.0 + R.trace())) * a;
}

SO3 SO3::ccsk(const Vec3& a) {
  return SO3{axis_rotation(0, a(0)) * axis_rotation(1, a(1)) * axis_rotation(2, a(2))};
}

// Intrinsic x-y-z angles of R = Rx(a0) Ry(a1) Rz(a2): R(0,2) = sin a1,
// R(1,2) = -sin a0 cos a1, R(2,2) = cos a0 cos a1, R(0,1) = -cos a1 sin a2,
// R(0,0) = cos a1 cos a2. Domain: |a1| < pi/2 (gimbal lock at +-pi/2);
// returns a0, a2 in (-pi, pi], a1 in [-pi/2, pi/2].
Vec3 SO3::ccsk_inv(const SO3& g) {
  const Mat3& R = g.R;
  return Vec3(std::atan2(-R(1, 2), R(2, 2)),
              std::atan2(R(0, 2), std::hypot(R(0, 0), R(0, 1))),
              std::atan2(-R(0, 1), R(0, 0)));
}

// Left Jacobian sum_k W^k/(k+1)! = I + (1 - cos)/theta^2 W + (theta - sin)/theta^3 W^2
// (vehicles eq. (13), B_exp).
Mat3 SO3::dexp(const Vec3& w) {
  const double theta = w.norm();
  const Mat3 W = hat(w);
  return Mat3::Identity() + lie_detail::one_minus_cos_over_sq(theta) * W +
         lie_detail::x_minus_sin_over_cube(theta) * (W * W);
}

// I - W/2 + (1 - (theta/2) cot(theta/2))/theta^2 W^2; singular at theta = 2 pi.
Mat3 SO3::dexp_inv(const Vec3& w) { return detail::so3_dexp_inv<double>(w); }

Mat3 SO3::dcay(const Vec3& w) {
  return (2.0 / (4.0 + w.squaredNorm())) * (2.0 * Mat3::Identity() + hat(w));
}

// (I - W/2) delta^ (I + W/2), vee'd: I - W/2 + w w^T/4 (vehicles eq. (14), C_cay block).
Mat3 SO3::dcay_inv(const Vec3& w) {
  return Mat3::Identity() - 0.5 * hat(w) + 0.25 * (w * w.transpose());
}

// Columns Ad_{exp(a0 e0) ... exp(a_{i-1} e_{i-1})} e_i:
// e0, Rx(a0) e1, Rx(a0) Ry(a1) e2.
Mat3 SO3::dccsk(const Vec3& a) {
  const double s0 = std::sin(a(0)), c0 = std::cos(a(0));
  const double s1 = std::sin(a(1)), c1 = std::cos(a(1));
  Mat3 M;
  M << 1.0, 0.0, s1,
       0.0, c0, -s0 * c1,
       0.0, s0, c0 * c1;
  return M;
}

// Closed-form inverse of dccsk (det = cos a1): singular at gimbal lock |a1| = pi/2.
Mat3 SO3::dccsk_inv(const Vec3& a) {
  const double s0 = std::sin(a(0)), c0 = std::cos(a(0));
  const double s1 = std::sin(a(1)), c1 = std::cos(a(1));
  const double t1 = s1 / c1;
  Mat3 M;
  M << 1.0, t1 * s0, -t1 * c0,
       0.0, c0, s0,
       0.0, -s0 / c1, c0 / c1;
  return M;
}

}  // namespace marsden
