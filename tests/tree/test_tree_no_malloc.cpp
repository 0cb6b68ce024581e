// A midpoint or Galerkin step of a tree, and the continuous dynamics the RK baselines evaluate,
// allocate nothing once its Data exists: built against the step code compiled with
// EIGEN_RUNTIME_NO_MALLOC, with operator new counted.
#include <gtest/gtest.h>

#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/galerkin.hpp"
#include "marsden/tree/midpoint.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::tree {
namespace {

using test_support::allocations_during;

// One step sizes next (x -> next by step(x, next)); the 20 after it allocate nothing.
template <class Step>
void expect_steps_after_the_first_allocate_nothing(const Model& model, Data& data,
                                                   const VecX& q0, Step&& step) {
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(model.num_coords()));
  TreeState next = x;
  ASSERT_TRUE(step(x, next).converged);
  x = next;
  bool converged = true;
  const long n = allocations_during([&] {
    for (int k = 0; k < 20; ++k) {
      converged = converged && step(x, next).converged;
      x.q = next.q;
      x.p = next.p;
      x.t = next.t;
    }
  });
  EXPECT_TRUE(converged);
  EXPECT_EQ(n, 0);
}

void expect_steps_without_allocation(const Model& model, const VecX& q0, const VecX& u,
                                     const VecX& q_prescribed, const MidpointOptions& opt = {}) {
  Data data(model);
  expect_steps_after_the_first_allocate_nothing(
      model, data, q0, [&](const TreeState& x, TreeState& next) {
        return midpoint_step(model, data, opt, 0.01, x, u, q_prescribed, next);
      });
}

TEST(TreeNoMalloc, PendulumChainStep) {
  const Model model = n_link_pendulum(12);
  VecX q0 = VecX::Zero(12);
  q0[0] = 0.4;
  expect_steps_without_allocation(model, q0, VecX(), VecX());
}

TEST(TreeNoMalloc, PendulumChainStepWithTheArticulatedBodyNewtonMatrix) {
  const Model model = n_link_pendulum(12);
  VecX q0 = VecX::Zero(12);
  q0[0] = 0.4;
  MidpointOptions opt;
  opt.articulated_newton_from = 0;
  expect_steps_without_allocation(model, q0, VecX(), VecX(), opt);
}

TEST(TreeNoMalloc, ConstrainedFourBarStep) {
  const FourBarParams p;
  const Model model = four_bar(p);
  expect_steps_without_allocation(model, four_bar_state(p, 0.3, 0.0).q, VecX(), VecX());
}

TEST(TreeNoMalloc, MarionetteStepWithPrescribedStrings) {
  const Model model = marionette();
  const VecX q0 = marionette_configuration(model, VecX::Zero(model.num_coords()));
  VecX q_prescribed(model.num_prescribed());
  for (int a = 0; a < model.num_prescribed(); ++a)
    q_prescribed[a] = q0[model.prescribed_coords()[a]];
  expect_steps_without_allocation(model, q0, VecX(), q_prescribed);
}

void expect_galerkin_steps_without_allocation(const Model& model, const VecX& q0, int stages,
                                              GalerkinQuadrature quadrature) {
  Data data(model);
  GalerkinOptions opt;
  opt.stages = stages;
  opt.quadrature = quadrature;
  GalerkinWorkspace ws(model, opt);
  const MatX u(model.num_inputs(), ws.tableau.c.size());
  expect_steps_after_the_first_allocate_nothing(
      model, data, q0, [&](const TreeState& x, TreeState& next) {
        return galerkin_step(model, data, ws, opt, 0.01, x, u, next);
      });
}

TEST(TreeNoMalloc, GalerkinChainStep) {
  VecX q0 = VecX::Zero(12);
  q0[0] = 0.4;
  expect_galerkin_steps_without_allocation(n_link_pendulum(12), q0, 3, GalerkinQuadrature::Lobatto);
}

TEST(TreeNoMalloc, GalerkinConstrainedFourBarStep) {
  const FourBarParams p;
  expect_galerkin_steps_without_allocation(four_bar(p), four_bar_state(p, 0.3, 0.0).q, 2,
                                           GalerkinQuadrature::Gauss);
}

TEST(TreeNoMalloc, ConstrainedAccelerations) {
  const FourBarParams p;
  const Model model = four_bar(p);
  Data data(model);
  const FourBarState x = four_bar_state(p, 0.3, 0.7);
  const VecX none;
  EXPECT_EQ(allocations_during([&] { accelerations(model, data, x.q, x.qd, none, none); }), 0);
  EXPECT_TRUE(data.qdd.allFinite());
}

}  // namespace
}  // namespace marsden::tree
