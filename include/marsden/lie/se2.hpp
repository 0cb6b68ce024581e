// SE(2): planar poses g = (R(theta), x). Tangent ordering xi = (omega, v1, v2) with
// (v1, v2) the body linear velocity, as (theta, x, y) in vehicles Appendix B.
#pragma once

#include "marsden/lie/types.hpp"

namespace marsden {

struct SE2 {
  static constexpr int kDim = 3;
  using Tangent = Vec3;
  using Jacobian = Mat3;

  Mat2 R = Mat2::Identity();
  Vec2 x = Vec2::Zero();

  static SE2 identity() { return SE2{}; }
  static SE2 from_angle(double theta, const Vec2& x);
  double angle() const;
  SE2 operator*(const SE2& o) const { return SE2{R * o.R, R * o.x + x}; }
  SE2 inverse() const { return SE2{R.transpose(), -(R.transpose() * x)}; }
  Vec2 act(const Vec2& p) const { return R * p + x; }
  Mat3 matrix() const;

  static Mat3 hat(const Vec3& xi);
  static Vec3 vee(const Mat3& X);
  Mat3 Ad() const;
  // [[0, 0, 0], [v2, 0, -omega], [-v1, omega, 0]] (vehicles Appendix B).
  static Mat3 ad(const Vec3& xi);

  static SE2 exp(const Vec3& xi);
  static Vec3 log(const SE2& g);
  static SE2 cay(const Vec3& xi);
  static Vec3 cay_inv(const SE2& g);
  static SE2 ccsk(const Vec3& a);
  static Vec3 ccsk_inv(const SE2& g);

  static Mat3 dexp(const Vec3& xi);
  static Mat3 dexp_inv(const Vec3& xi);
  static Mat3 dcay(const Vec3& xi);
  // dcay_inv is the paper's C_cay for SE(2) (vehicles eq. (22)).
  static Mat3 dcay_inv(const Vec3& xi);
  static Mat3 dccsk(const Vec3& a);
  static Mat3 dccsk_inv(const Vec3& a);
};

}  // namespace marsden
