// Classical RK4 on a tree model's continuous dynamics (tree/dynamics.hpp), state (q, qd)
// over all coordinates, with zero inputs and the kinematic coordinates unaccelerated: the
// non-structure-preserving baseline of the tree experiments. Private to the library.
#pragma once

#include "marsden/tree/dynamics.hpp"

namespace marsden::experiments {

inline void tree_rk4_step(const tree::Model& model, tree::Data& data, double dt, tree::VecX& q,
                          tree::VecX& qd) {
  const tree::VecX u = tree::VecX::Zero(model.num_inputs());
  const tree::VecX qdd_kinematic = tree::VecX::Zero(model.num_kinematic());
  auto accel = [&](const tree::VecX& x, const tree::VecX& v) {
    return tree::continuous_dynamics(model, data, x, v, u, qdd_kinematic).qdd;
  };
  const tree::VecX a1 = accel(q, qd);
  const tree::VecX v2 = qd + 0.5 * dt * a1;
  const tree::VecX a2 = accel(q + 0.5 * dt * qd, v2);
  const tree::VecX v3 = qd + 0.5 * dt * a2;
  const tree::VecX a3 = accel(q + 0.5 * dt * v2, v3);
  const tree::VecX v4 = qd + dt * a3;
  const tree::VecX a4 = accel(q + dt * v3, v4);
  q += (dt / 6.0) * (qd + 2.0 * v2 + 2.0 * v3 + v4);
  qd += (dt / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
}

}  // namespace marsden::experiments
