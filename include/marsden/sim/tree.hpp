// Tree systems (tree/) as a sim::System: the generalized midpoint VI (tree/midpoint.hpp),
// the Galerkin VI of order 2s (tree/galerkin.hpp) or RK4 on the continuous dynamics, with
// prescribed coordinates driven by signals.
#pragma once

#include <memory>
#include <vector>

#include "marsden/sim/system.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/galerkin.hpp"
#include "marsden/tree/midpoint.hpp"
#include "marsden/tree/model.hpp"
#include "marsden/sim/signal.hpp"

namespace marsden::sim {

enum class TreeMethod {
  Midpoint,  // the generalized midpoint variational integrator (tree/midpoint.hpp)
  Galerkin,  // the Galerkin variational integrator of order 2s (tree/galerkin.hpp)
  Rk4        // classical RK4 on the continuous dynamics in (q, qd)
};

struct TreeSetup {
  std::shared_ptr<const tree::Model> model;
  TreeMethod method = TreeMethod::Midpoint;
  tree::MidpointOptions midpoint;  // alpha, Newton options, Lagrangian algorithm
  tree::GalerkinOptions galerkin;  // stages, quadrature, Newton options, Lagrangian algorithm
  Eigen::VectorXd q0, qd0;         // every coordinate at t = 0 (rad, m; rad/s, m/s)
  // Per prescribed coordinate (in model.prescribed_coords() order): its displacement from
  // q0 as a 1-component signal of time, or null to hold it at q0.
  std::vector<std::shared_ptr<const Signal>> prescribed;
  std::shared_ptr<const Signal> controls;  // model.num_inputs() components, or null
  // The most the run's tree::Data may take (a scene's limits.memory_bytes).
  std::size_t memory_limit = tree::kDataMemoryLimit;
};

// Columns t, q (coordinate names), qd_NAME, p_NAME (dynamic coordinates), energy,
// constraint_residual, u0..; arrays q, qd, p, energy, constraint_residual, controls.
// Throws InputError on sizes that do not match the model (and for Galerkin on kinematic
// coordinates, which it does not support), SolverError when the initial state cannot be
// set up.
std::unique_ptr<System> make_tree_system(const TreeSetup& setup);

}  // namespace marsden::sim
