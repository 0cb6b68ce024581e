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
