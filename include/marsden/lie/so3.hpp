// SO(3): rotation matrices. Tangent vectors are body angular velocities omega in R^3.
// Conventions (docs/conventions.md): tangents are right-trivialised as in vehicles §3.1,
// d tau_xi delta = (D tau(xi) . delta) tau(xi)^-1.
#pragma once

#include "marsden/lie/types.hpp"

namespace marsden {

struct SO3 {
  static constexpr int kDim = 3;
  using Tangent = Vec3;
  using Jacobian = Mat3;

  Mat3 R = Mat3::Identity();

  static SO3 identity() { return SO3{}; }
  SO3 operator*(const SO3& other) const { return SO3{R * other.R}; }
  SO3 inverse() const { return SO3{R.transpose()}; }
  Vec3 act(const Vec3& p) const { return R * p; }
  Mat3 matrix() const { return R; }

  static Mat3 hat(const Vec3& w) {
    Mat3 W;
    W << 0.0, -w.z(), w.y(),
         w.z(), 0.0, -w.x(),
         -w.y(), w.x(), 0.0;
    return W;
  }
  static Vec3 vee(const Mat3& W);
  Mat3 Ad() const { return R; }
  static Mat3 ad(const Vec3& w) { return hat(w); }

  // exp and log (log returns |omega| in [0, pi], accurate near 0 and pi).
  static SO3 exp(const Vec3& w);
  static Vec3 log(const SO3& g);
  // Cayley map cay(w) = (I - w^/2)^-1 (I + w^/2), vehicles eq. (12), and its inverse
  // (defined for rotation angles < pi).
  static SO3 cay(const Vec3& w);
  static Vec3 cay_inv(const SO3& g);
  // Canonical coordinates of the second kind: exp(a1 e1) exp(a2 e2) exp(a3 e3).
  static SO3 ccsk(const Vec3& a);
  static Vec3 ccsk_inv(const SO3& g);

  // Right-trivialised tangents and their inverses, closed form.
  static Mat3 dexp(const Vec3& w);
  static Mat3 dexp_inv(const Vec3& w);
  static Mat3 dcay(const Vec3& w);
  static Mat3 dcay_inv(const Vec3& w);
  static Mat3 dccsk(const Vec3& a);
  static Mat3 dccsk_inv(const Vec3& a);
};

}  // namespace marsden
