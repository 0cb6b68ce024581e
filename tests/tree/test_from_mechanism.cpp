// The tree counterpart of a maximal mechanism is the same mechanism: the same poses and
// energy at the start, the same motion (both engines converge to one solution as dt -> 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "marsden/error.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/bridge/tree_from_mechanism.hpp"

namespace marsden::tree {
namespace {

using maximal::ChainOptions;
using maximal::JointType;
using maximal::Mechanism;

Mechanism spherical_chain(int n) {
  ChainOptions options;
  options.joint = JointType::Spherical;
  return maximal::pendulum_chain(n, options);
}

// Gravity with sideways components sets the symmetric loops, at rest, moving.
Mechanism spherical_loop(int n) {
  ChainOptions options;
  options.joint = JointType::Spherical;
  options.gravity = Vec3(2.0, 1.0, -9.81);
  return maximal::closed_chain(n, options);
}

Mechanism revolute_loop(int n) {
  ChainOptions options;
  options.gravity = Vec3(2.0, 0.0, -9.81);
  return maximal::closed_chain(n, options);
}

// Each body's frame in the tree sits where the maximal state has the body.
void expect_same_poses(const Mechanism& mech, const MinimalCounterpart& minimal, const VecX& q) {
  Data data(minimal.model);
  frame_kinematics(minimal.model, data, q, VecX::Zero(q.size()), 0);
  for (int b = 0; b < mech.model.num_bodies(); ++b) {
    const std::string& name = mech.model.bodies()[b].name;
    const int f = minimal.model.frame_index(name);
    EXPECT_LT((data.g_s[f].x - mech.state[b].x).norm(), 1e-12) << name;
    EXPECT_LT((data.g_s[f].R - mech.state[b].q.matrix()).norm(), 1e-12) << name;
  }
}

TEST(MinimalCounterpart, HasTheMechanismsPosesAndEnergy) {
  for (const Mechanism& mech :
       {maximal::pendulum_chain(4), spherical_chain(3), maximal::closed_chain(5), spherical_loop(4)}) {
    const MinimalCounterpart minimal = minimal_counterpart(mech);
    expect_same_poses(mech, minimal, minimal.q0);
    Data data(minimal.model);
    EXPECT_NEAR(energy(minimal.model, data, minimal.q0, minimal.qd0),
                maximal::energy(mech.model, mech.state), 1e-12);
    EXPECT_LT(max_constraint_violation(minimal.model, data, minimal.q0), 1e-12);
  }
}

TEST(MinimalCounterpart, FourBarChainBodiesKeepTheirNames) {
  const Mechanism mech = maximal::four_bar_chain(2, 0.3);
  const MinimalCounterpart minimal = minimal_counterpart(mech);
  EXPECT_EQ(minimal.model.num_dynamic(), 6);
  EXPECT_EQ(minimal.model.num_constraint_rows(), 4);  // two in-plane rows per closure
  Data data(minimal.model);
  frame_kinematics(minimal.model, data, minimal.q0, minimal.qd0, 0);
  for (int b = 0; b < mech.model.num_bodies(); ++b) {
    const int f = minimal.model.frame_index(mech.model.bodies()[b].name + "_body");
    EXPECT_LT((data.g_s[f].x - mech.state[b].x).norm(), 1e-12);
  }
}

// The bodies' positions after 0.3 s: the tree's RK4 at dt = 1e-4 (error ~1e-14, drift of
// the loops' acceleration-level constraints ~1e-12) against the first-order maximal VI at
// dt = 1e-4 and 5e-5, whose error halves.
TEST(MinimalCounterpart, BothEnginesConvergeToOneMotion) {
  for (const Mechanism& mech : {maximal::pendulum_chain(3), spherical_chain(2), spherical_loop(3),
                                revolute_loop(4)}) {
    const MinimalCounterpart minimal = minimal_counterpart(mech);
    Data data(minimal.model);
    VecX q = minimal.q0, qd = minimal.qd0;
    const VecX u = VecX::Zero(0);
    for (int k = 0; k < 3000; ++k) rk4_step(minimal.model, data, 1e-4, u, q, qd);
    frame_kinematics(minimal.model, data, q, qd, 0);
    double error[2] = {0.0, 0.0}, travel = 0.0;
    for (int level = 0; level < 2; ++level) {
      maximal::StepOptions options;
      options.dt = level == 0 ? 1e-4 : 5e-5;
      maximal::Data md(mech.model, mech.state);
      const int steps = static_cast<int>(std::lround(0.3 / options.dt));
      for (int k = 0; k < steps; ++k) ASSERT_TRUE(maximal::step(mech.model, md, options).ok());
      for (int b = 0; b < mech.model.num_bodies(); ++b) {
        const Vec3& x_tree = data.g_s[minimal.model.frame_index(mech.model.bodies()[b].name)].x;
        error[level] = std::max(error[level], (md.state[b].x - x_tree).norm());
        travel = std::max(travel, (x_tree - mech.state[b].x).norm());
      }
    }
    SCOPED_TRACE(std::to_string(mech.model.num_bodies()) + " bodies");
    EXPECT_GT(travel, 0.05);  // it moves
    EXPECT_LT(error[0], 1e-3);
    EXPECT_NEAR(error[0] / error[1], 2.0, 0.3);
  }
}

TEST(MinimalCounterpart, RefusesWhatItCannotRepresent) {
  Mechanism moving = maximal::pendulum_chain(2);
  moving.state[1].omega = Vec3(0.0, 1.0, 0.0);
  EXPECT_THROW(minimal_counterpart(moving), InputError);
  const Mechanism leg = maximal::minitaur_leg();  // a revolute loop, planar: accepted
  EXPECT_NO_THROW(minimal_counterpart(leg));
  const Mechanism chain = maximal::pendulum_chain(2);
  std::vector<maximal::Joint> joints = chain.model.joints();
  joints[1].prescribed = true;
  try {
    minimal_counterpart({maximal::Model(chain.model.bodies(), joints), chain.state});
    ADD_FAILURE() << "a prescribed joint was carried over";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"joint1\": a prescribed coordinate"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace marsden::tree
