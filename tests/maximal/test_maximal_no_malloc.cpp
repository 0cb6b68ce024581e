// No heap allocation inside a step (trees and loops), with Eigen's runtime check on.
#include <gtest/gtest.h>

#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::maximal {
namespace {

void expect_no_allocation(const Mechanism& mech) {
  Data data(mech.model, mech.state);
  StepOptions options;
  ASSERT_TRUE(step(mech.model, data, options).ok());
  bool ok = true;
  const long n = test_support::allocations_during([&] {
    for (int k = 0; k < 5; ++k) ok = ok && step(mech.model, data, options).ok();
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(n, 0);
}

TEST(MaximalNoMalloc, TreeStep) {
  ChainOptions spherical;
  spherical.joint = JointType::Spherical;
  expect_no_allocation(pendulum_chain(10));
  expect_no_allocation(pendulum_chain(10, spherical));
}

// A point-mass leaf and a massless link between two joints: the Woodbury correction of
// degenerate rows (integrator.cpp) works in the Workspace's storage too.
TEST(MaximalNoMalloc, DegenerateBodiesStep) {
  const Mechanism chain = pendulum_chain(4);
  std::vector<Body> bodies = chain.model.bodies();
  bodies[1] = {"massless", 0.0, Mat3::Zero()};
  bodies[3].inertia.setZero();
  std::vector<Joint> joints = chain.model.joints();
  joints[2].axis = Vec3::UnitX();  // not parallel to joint 1's, so the massless link is determined
  const Model model(bodies, joints);
  ASSERT_EQ(model.degenerate_rows().size(), 9u);
  expect_no_allocation({model, chain.state});
}

TEST(MaximalNoMalloc, FailedStep) {
  const Mechanism mech = closed_chain(8);
  Data data(mech.model, mech.state);
  StepOptions options;
  options.newton.max_iterations = 1;  // the step fails
  bool failed = true;
  const long n = test_support::allocations_during(
      [&] { failed = !step(mech.model, data, options).ok(); });
  EXPECT_TRUE(failed);
  EXPECT_EQ(n, 0);
}

TEST(MaximalNoMalloc, LoopStep) {
  expect_no_allocation(closed_chain(8));
  expect_no_allocation(four_bar_chain(3, 1.8));
  expect_no_allocation(minitaur_leg());
}

// Velocity constraints: eliminated at their bodies (the trailers' axles, turning) and in the
// loop block (the rolling disk on its axle hinge).
TEST(MaximalNoMalloc, VelocityConstraintStep) {
  Mechanism train = trailer_train(6, 0.3);
  for (BodyState& b : train.state) b.v = Vec3(1.0, 0.0, 0.0);
  expect_no_allocation(train);
  Mechanism disk = rolling_disk(1.0, 0.5);
  disk.state[1].omega = Vec3(0.0, 2.0, 0.0);
  disk.state[0].v = disk.state[1].v = Vec3(1.0, 0.0, 0.0);
  expect_no_allocation(disk);
}

// Steps through contact, where the interior point runs: a box landing on the ground with
// friction, and a chain whose last link lands on it.
TEST(MaximalNoMalloc, ContactStep) {
  Contacts contacts;
  contacts.shapes.push_back({"box", 0, geometry::Box(Vec3(0.1, 0.2, 0.1)), 0.5});
  contacts.surfaces.push_back({"ground", geometry::HalfSpace(Vec3::UnitZ(), 0.0), 0.0});
  const Model box({Body{"box", 1.0, 0.01 * Mat3::Identity()}}, {}, Vec3(0.0, 0.0, -9.81), {},
                  contacts);
  BodyState st;
  st.x = Vec3(0.0, 0.0, 0.1005);
  st.v = Vec3(1.0, 0.0, -0.5);
  st.omega = Vec3(0.3, 0.2, 1.0);
  expect_no_allocation({box, {st}});
  // An impact with restitution in the measured steps: the step splits at its time.
  contacts.shapes[0].restitution = 0.8;
  const Model bouncing({Body{"box", 1.0, 0.01 * Mat3::Identity()}}, {}, Vec3(0.0, 0.0, -9.81),
                       {}, contacts);
  st.x.z() = 0.12;
  st.v.z() = -1.0;
  expect_no_allocation({bouncing, {st}});
  const Mechanism chain = pendulum_chain(5);
  contacts.shapes[0] = {"tip", 4, geometry::Sphere(0.1), 0.5};
  contacts.surfaces[0].half_space =
      geometry::HalfSpace(Vec3::UnitZ(), chain.state[4].x.z() - 0.1 - 1e-4);
  const Model touching(chain.model.bodies(), chain.model.joints(), chain.model.gravity(), {},
                       contacts);
  expect_no_allocation({touching, chain.state});
  // Joint limits, one of them active from the start.
  std::vector<Joint> joints = chain.model.joints();
  joints[0].lower = 0.0;
  joints[0].upper = 0.5;
  joints[2].lower = -0.05;
  const Model limited(chain.model.bodies(), joints, chain.model.gravity());
  expect_no_allocation({limited, chain.state});
}

}  // namespace
}  // namespace marsden::maximal
