// Group-generic helpers over the tangent maps: select d_tau / d_tau^-1 by DiffMap, and
// the trapezoidal Lie-Newmark approximation C_TLN = I - ad/2 (vehicles §4.2).
#pragma once

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
// ad_{e_i}^T mu.
template <class G>
typename G::Jacobian ad_transpose_derivative(const typename G::Tangent& mu) {
  typename G::Jacobian M;
  for (int i = 0; i < G::kDim; ++i)
    M.col(i) = G::ad(G::Tangent::Unit(i)).transpose() * mu;
  return M;
}

}  // namespace marsden
