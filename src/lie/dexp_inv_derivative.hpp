// The closed-form dexp^-1 of SE(3), written once for any scalar type so that the same
// formula serves SE3::dexp_inv (double) and, through forward-mode automatic
// differentiation, the exact derivative d/d eta [dexp^-1_eta^T mu] needed by the Newton
// Jacobian of the exact-exp variational integrator. Private to the library.
#pragma once

#include <cmath>

#include <Eigen/Core>

#include "marsden/lie/types.hpp"

namespace marsden::detail {

template <class S>
Eigen::Matrix<S, 3, 3> hat_t(const Eigen::Matrix<S, 3, 1>& w) {
  Eigen::Matrix<S, 3, 3> W;
  W << S(0), -w[2], w[1], w[2], S(0), -w[0], -w[1], w[0], S(0);
  return W;
}

// Coefficients of dexp^-1 in theta^2 = |omega|^2; Taylor series below theta = 0.1 where
// the closed forms lose digits to cancellation (the series is truncated at theta^10,
// far below round-off there). Returns (c1, c2, c3, c4) with
//   c1 = (t - sin t)/t^3, c2 = (t^2 + 2 cos t - 2)/(2 t^4),
//   c3 = (2t - 3 sin t + t cos t)/(2 t^5), c4 = 1/t^2 - (1 + cos t)/(2 t sin t).
template <class S>
void dexp_inv_coefficients(const S& t2, S& c1, S& c2, S& c3, S& c4) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  if (t2 < S(1e-2)) {
    const S t4 = t2 * t2, t6 = t4 * t2, t8 = t4 * t4;
    c1 = 1.0 / 6 - t2 / 120 + t4 / 5040 - t6 / 362880 + t8 / 39916800;
    c2 = 1.0 / 24 - t2 / 720 + t4 / 40320 - t6 / 3628800 + t8 / 479001600;
    c3 = 1.0 / 120 - t2 / 2520 + t4 / 120960 - t6 / 9979200 + t8 / 1245404160;
    c4 = 1.0 / 12 + t2 / 720 + t4 / 30240 + t6 / 1209600 + t8 / 47900160;
    return;
  }
  const S t = sqrt(t2);
  const S s = sin(t), c = cos(t);
  c1 = (t - s) / (t2 * t);
  c2 = (t2 + 2.0 * c - 2.0) / (2.0 * t2 * t2);
  c3 = (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t);
  c4 = 1.0 / t2 - (1.0 + c) / (2.0 * t * s);
}

// dexp^-1 of SE(3) for xi = (omega, v): [[Jinv, 0], [-Jinv Q Jinv, Jinv]], with Jinv the
// inverse of the SO(3) right-trivialised tangent and Q the coupling block of dexp.
template <class S>
Eigen::Matrix<S, 6, 6> se3_dexp_inv(const Eigen::Matrix<S, 6, 1>& xi) {
  using M3 = Eigen::Matrix<S, 3, 3>;
  const Eigen::Matrix<S, 3, 1> w = xi.template head<3>(), v = xi.template tail<3>();
  S c1, c2, c3, c4;
  dexp_inv_coefficients<S>(w.dot(w), c1, c2, c3, c4);
  const M3 W = hat_t<S>(w), V = hat_t<S>(v);
  const M3 WV = W * V, VW = V * W, WW = W * W, WVW = WV * W;
  const M3 Q = 0.5 * V + c1 * (WV + VW + WVW) + c2 * (WW * V + VW * W - 3.0 * WVW) +
               c3 * (WVW * W + W * WVW);
  const M3 Jinv = M3::Identity() - 0.5 * W + c4 * WW;
  Eigen::Matrix<S, 6, 6> D;
  D.template topLeftCorner<3, 3>() = Jinv;
  D.template topRightCorner<3, 3>().setZero();
  D.template bottomLeftCorner<3, 3>() = -Jinv * Q * Jinv;
  D.template bottomRightCorner<3, 3>() = Jinv;
  return D;
}

// d/d eta [dexp^-1_eta^T mu] at fixed mu, exact (forward-mode AD of se3_dexp_inv).
Mat6 dexp_inv_transpose_derivative(const Vec6& eta, const Vec6& mu);
// The same on SE(2), through the embedding se(2) -> se(3), (w, v1, v2) -> (0, 0, w, v1, v2, 0),
// a Lie algebra homomorphism whose image is ad-invariant, so dexp^-1 restricts exactly.
Mat3 dexp_inv_transpose_derivative(const Vec3& eta, const Vec3& mu);

}  // namespace marsden::detail
