// Unit quaternions q = (q_w, q_v) in the Hamilton convention, local to global
// (maximal-coordinates paper §2.1). Stored as Vec4 (w, x, y, z). As a group it is the
// double cover of SO(3); tangents are rotation vectors omega in R^3 with
// exp(omega) = (cos(|omega|/2), sin(|omega|/2) omega/|omega|).
#pragma once

#include "marsden/lie/so3.hpp"
#include "marsden/lie/types.hpp"

namespace marsden {

struct Quat {
  static constexpr int kDim = 3;
  using Tangent = Vec3;
  using Jacobian = Mat3;

  Vec4 q = Vec4(1.0, 0.0, 0.0, 0.0);

  static Quat identity() { return Quat{}; }
  Quat operator*(const Quat& o) const;  // q (x) p, eq. (3)
  Quat inverse() const;                  // q^dagger = T q, eq. (12)
  Vec3 act(const Vec3& p) const;         // V L(q) R(q)^T V^T p, eq. (15)
  Mat3 matrix() const;                   // the rotation matrix
  static Quat from_rotation(const Mat3& R);

  static Mat3 hat(const Vec3& w) { return SO3::hat(w); }
  static Vec3 vee(const Mat3& W);
  Mat3 Ad() const { return matrix(); }
  static Mat3 ad(const Vec3& w) { return hat(w); }

  static Quat exp(const Vec3& w);
  // Rotation vector with |omega| in [0, 2 pi]: exact inverse of exp on the double cover.
  static Vec3 log(const Quat& g);
  // The Cayley map of SO(3) lifted to the cover with q_w >= 0.
  static Quat cay(const Vec3& w);
  static Vec3 cay_inv(const Quat& g);
  static Quat ccsk(const Vec3& a);
  static Vec3 ccsk_inv(const Quat& g);

  static Mat3 dexp(const Vec3& w);
  static Mat3 dexp_inv(const Vec3& w);
  static Mat3 dcay(const Vec3& w);
  static Mat3 dcay_inv(const Vec3& w);
  static Mat3 dccsk(const Vec3& a);
  static Mat3 dccsk_inv(const Vec3& a);
};

// Matrices of the maximal-coordinates paper, eqs. (7)-(10).
namespace quat {
Mat4 L(const Vec4& q);  // q (x) p = L(q) p
Mat4 R(const Vec4& q);  // q (x) p = R(p) q
Mat4 T();               // conjugation
Mat34 V();              // vector part
}  // namespace quat

// The small products are inline: the maximal-coordinates step calls them per joint per
// Newton iteration.
inline Quat Quat::operator*(const Quat& o) const {
  const double pw = o.q(0), qw = q(0);
  const Vec3 pv = o.q.tail<3>(), qv = q.tail<3>();
  Quat r;
  r.q(0) = qw * pw - qv.dot(pv);
  r.q.tail<3>() = qw * pv + pw * qv + SO3::hat(qv) * pv;
  return r;
}

inline Quat Quat::inverse() const { return Quat{Vec4(q(0), -q(1), -q(2), -q(3))}; }

inline Mat3 Quat::matrix() const {
  const double w = q(0);
  const Vec3 v = q.tail<3>();
  return (w * w - v.squaredNorm()) * Mat3::Identity() + 2.0 * (v * v.transpose()) +
         2.0 * w * SO3::hat(v);
}

}  // namespace marsden
