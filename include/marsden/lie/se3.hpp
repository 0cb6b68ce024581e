// SE(3): poses g = (R, x), acting on points as p -> R p + x.
// Tangent ordering xi = (omega, v): body angular velocity first, then body linear
// velocity, vehicles eq. (6). Coadjoint quantities (momenta, wrenches) are ordered
// (torque, force) to match.
#pragma once

#include "marsden/lie/so3.hpp"

namespace marsden {

struct SE3 {
  static constexpr int kDim = 6;
  using Tangent = Vec6;
  using Jacobian = Mat6;

  Mat3 R = Mat3::Identity();
  Vec3 x = Vec3::Zero();

  static SE3 identity() { return SE3{}; }
  SE3 operator*(const SE3& o) const { return SE3{R * o.R, R * o.x + x}; }
  SE3 inverse() const { return SE3{R.transpose(), -(R.transpose() * x)}; }
  Vec3 act(const Vec3& p) const { return R * p + x; }
  Mat4 matrix() const;

  static Mat4 hat(const Vec6& xi);
  static Vec6 vee(const Mat4& X);
  // Ad_g xi = vee(g hat(xi) g^-1); for xi = (omega, v): [[R, 0], [x^ R, R]].
  Mat6 Ad() const;
  // ad_xi eta = [xi, eta]; [[omega^, 0], [v^, omega^]] (vehicles eq. (14)).
  static Mat6 ad(const Vec6& xi);

  static SE3 exp(const Vec6& xi);
  static Vec6 log(const SE3& g);
  // cay(xi) = (I - xi^/2)^-1 (I + xi^/2); rotation part is SO3::cay (vehicles eq. (12)),
  // translation (I - omega^/2)^-1 v = (4I + 2 omega^ + omega omega^T) v / (4 + |omega|^2).
  // The paper's printed B_cay (after eq. (13)) lacks the omega omega^T term; the
  // definition is used (it is the one consistent with C_cay, eq. (14)).
  static SE3 cay(const Vec6& xi);
  static Vec6 cay_inv(const SE3& g);
  // Canonical coordinates of the second kind: prod_i exp(a_i E_i) in the basis order.
  static SE3 ccsk(const Vec6& a);
  static Vec6 ccsk_inv(const SE3& g);

  static Mat6 dexp(const Vec6& xi);
  static Mat6 dexp_inv(const Vec6& xi);
  static Mat6 dcay(const Vec6& xi);
  // dcay_inv is the paper's C_cay (vehicles eq. (14)).
  static Mat6 dcay_inv(const Vec6& xi);
  static Mat6 dccsk(const Vec6& a);
  static Mat6 dccsk_inv(const Vec6& a);
};

}  // namespace marsden
