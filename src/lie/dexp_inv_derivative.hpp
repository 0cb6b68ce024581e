// The closed-form dexp^-1 of SO(3) and SE(3), written once for any scalar type: the same
// formula serves SO3::dexp_inv and SE3::dexp / dexp_inv (double) and, through forward-mode
// automatic differentiation, the exact derivative d/d eta [dexp^-1_eta^T mu] that the
// Newton Jacobian of the exact-exp variational integrator needs. Private to the library.
#pragma once

#include <cmath>

#include <Eigen/Core>

#include "marsden/lie/types.hpp"
#include "scalar_series.hpp"

namespace marsden::detail {

template <class S>
using M3 = Eigen::Matrix<S, 3, 3>;
template <class S>
using V3 = Eigen::Matrix<S, 3, 1>;

template <class S>
M3<S> hat_t(const V3<S>& w) {
  M3<S> W;
  W << S(0), -w[2], w[1], w[2], S(0), -w[0], -w[1], w[0], S(0);
  return W;
}

// |w| with a zero derivative at w = 0, where sqrt's is infinite; every coefficient below is
// a smooth function of |w|^2, so that is the true derivative.
template <class S>
S rotation_angle(const V3<S>& w) {
  using std::sqrt;
  const S t = w.squaredNorm();
  return t > 0.0 ? S(sqrt(t)) : S(0.0);
}

// Inverse of the SO(3) right-trivialised tangent: I - W/2 + c(theta) W^2.
template <class S>
M3<S> so3_dexp_inv(const V3<S>& w) {
  const M3<S> W = hat_t<S>(w);
  return M3<S>::Identity() - 0.5 * W +
         lie_detail::inv_jacobian_coeff(rotation_angle<S>(w)) * (W * W);
}

// Lower-left block of the SE(3) left Jacobian sum_k ad^k/(k+1)! (Barfoot's Q with the blocks
// reordered for (omega, v)): Q = sum_k 1/(k+1)! sum_{i+j=k-1} W^i V W^j, which collapses
// onto the six products below.
template <class S>
M3<S> barfoot_q(const V3<S>& w, const V3<S>& v) {
  const S theta = rotation_angle<S>(w);
  const M3<S> W = hat_t<S>(w), V = hat_t<S>(v);
  const M3<S> WV = W * V, VW = V * W, WW = W * W;
  const M3<S> WVW = WV * W;
  return 0.5 * V + lie_detail::x_minus_sin_over_cube(theta) * (WV + VW + WVW) +
         lie_detail::cos_remainder_over_quartic(theta) * (WW * V + V * WW - 3.0 * WVW) +
         lie_detail::barfoot_c3(theta) * (WVW * W + W * WVW);
}

// dexp^-1 of SE(3) for xi = (omega, v): the block-triangular inverse
// [[J^-1, 0], [-J^-1 Q J^-1, J^-1]] of dexp = [[J, 0], [Q, J]].
template <class S>
Eigen::Matrix<S, 6, 6> se3_dexp_inv(const Eigen::Matrix<S, 6, 1>& xi) {
  const V3<S> w = xi.template head<3>(), v = xi.template tail<3>();
  const M3<S> Ji = so3_dexp_inv<S>(w);
  Eigen::Matrix<S, 6, 6> D;
  D.template topLeftCorner<3, 3>() = Ji;
  D.template topRightCorner<3, 3>().setZero();
  D.template bottomLeftCorner<3, 3>() = -Ji * barfoot_q<S>(w, v) * Ji;
  D.template bottomRightCorner<3, 3>() = Ji;
  return D;
}

// d/d eta [dexp^-1_eta^T mu] at fixed mu, exact (forward-mode AD of se3_dexp_inv).
Mat6 dexp_inv_transpose_derivative(const Vec6& eta, const Vec6& mu);
// The same on SE(2), through the embedding se(2) -> se(3), (w, v1, v2) -> (0, 0, w, v1, v2, 0),
// a Lie algebra homomorphism whose image is ad-invariant, so dexp^-1 restricts exactly.
Mat3 dexp_inv_transpose_derivative(const Vec3& eta, const Vec3& mu);

}  // namespace marsden::detail
