// Group-generic helpers over the tangent maps: select d_tau / d_tau^-1 by DiffMap, and
// the trapezoidal Lie-Newmark approximation C_TLN = I - ad/2 (vehicles §4.2).
#pragma once

#include "marsden/lie/se2.hpp"
#include "marsden/lie/se3.hpp"
#include "marsden/lie/types.hpp"

namespace marsden {

template <class G>
typename G::Jacobian dtau(DiffMap map, const typename G::Tangent& xi) {
  return map == DiffMap::Exp ? G::dexp(xi) : G::dcay(xi);
}

template <class G>
typename G::Jacobian dtau_inv(DiffMap map, const typename G::Tangent& xi) {
  return map == DiffMap::Exp ? G::dexp_inv(xi) : G::dcay_inv(xi);
}

template <class G>
G tau(DiffMap map, const typename G::Tangent& xi) {
  return map == DiffMap::Exp ? G::exp(xi) : G::cay(xi);
}

template <class G>
typename G::Tangent tau_inv(DiffMap map, const G& g) {
  return map == DiffMap::Exp ? G::log(g) : G::cay_inv(g);
}

template <class G>
typename G::Jacobian c_tln(const typename G::Tangent& xi) {
  return G::Jacobian::Identity() - 0.5 * G::ad(xi);
}

}  // namespace marsden

namespace marsden {

// d/d eta [ad_eta^T mu] at fixed mu (the map eta -> ad_eta^T mu is linear): column i is
// ad_{e_i}^T mu. Closed forms for SE(3) and SE(2) follow the generic definition.
template <class G>
typename G::Jacobian ad_transpose_derivative(const typename G::Tangent& mu) {
  typename G::Jacobian M;
  for (int i = 0; i < G::kDim; ++i)
    M.col(i) = G::ad(G::Tangent::Unit(i)).transpose() * mu;
  return M;
}

// ad_(w, v)^T (m, p) = (m x w + p x v, p x w), so the derivative is [[m^, p^], [p^, 0]].
template <>
inline Mat6 ad_transpose_derivative<SE3>(const Vec6& mu) {
  Mat6 M;
  const Mat3 m_hat = SO3::hat(mu.head<3>()), p_hat = SO3::hat(mu.tail<3>());
  M << m_hat, p_hat, p_hat, Mat3::Zero();
  return M;
}

// ad_(w, v)^T (m, p1, p2) = (v2 p1 - v1 p2, w p2, -w p1) on SE(2).
template <>
inline Mat3 ad_transpose_derivative<SE2>(const Vec3& mu) {
  Mat3 M;
  M << 0.0, -mu[2], mu[1], mu[2], 0.0, 0.0, -mu[1], 0.0, 0.0;
  return M;
}

}  // namespace marsden
