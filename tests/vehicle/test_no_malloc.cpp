// No heap allocation inside a step. The step code is compiled again with
// EIGEN_RUNTIME_NO_MALLOC (Eigen asserts on any allocation while it is forbidden) and
// support/allocation_counter counts every other allocation.
#include <gtest/gtest.h>

#include "marsden/vehicle/models.hpp"
#include "vehicle/stepper.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::vehicle {
namespace {

using test_support::allocations_during;

struct Case {
  Method method;
  DiffMap map;
  TangentMap tangent;
};

TEST(NoMalloc, EveryStepperOnEveryModel) {
  HelicopterParams hp;
  BoatParams bp;
  auto boat = std::make_shared<const Boat>(bp);
  const std::shared_ptr<const HolonomicModel<SE3>> models[] = {
      std::make_shared<const FreeBody<SE3>>(rigid_body_inertia(Vec3(1, 2, 3), 1.5)),
      std::make_shared<const Helicopter>(hp), boat};
  InputVec u(2), gamma(2);
  u << 10.0, 1.0;
  gamma << 0.05, 0.02;
  // The free body takes no inputs, the helicopter gamma and u, the boat u only.
  const ConstantInputs inputs[] = {ConstantInputs(), ConstantInputs(gamma, u),
                                   ConstantInputs(InputVec(0), u)};
  const Case cases[] = {{Method::VI, DiffMap::Cay, TangentMap::TLN},
                        {Method::VI, DiffMap::Cay, TangentMap::Exact},
                        {Method::VI, DiffMap::Exp, TangentMap::TLN},
                        {Method::VI, DiffMap::Exp, TangentMap::Exact},
                        {Method::RK2, DiffMap::Cay, TangentMap::TLN},
                        {Method::RK2Implicit, DiffMap::Cay, TangentMap::TLN},
                        {Method::RK4, DiffMap::Cay, TangentMap::TLN},
                        {Method::LieNewmark, DiffMap::Cay, TangentMap::TLN}};
  for (std::size_t m = 0; m < 3; ++m) {
    for (const Case& c : cases) {
      HolonomicOptions<SE3> opt;
      opt.map = c.map;
      opt.tangent = c.tangent;
      auto stepper = make_stepper<SE3>(c.method, models[m], opt);
      VehicleState<SE3> s0;
      s0.xi << 0.2, -0.3, 0.1, 0.5, 0.0, 0.0;
      if (m == 2) s0.g.x.z() = boat->equilibrium_height();
      stepper->reset(s0, 0.01);
      ASSERT_TRUE(stepper->step(inputs[m]).converged);  // warm-up outside the count
      const long n = allocations_during([&] {
        for (int k = 0; k < 50; ++k) stepper->step(inputs[m]);
      });
      EXPECT_EQ(n, 0) << "model " << m << " method " << method_name(c.method);
    }
  }
}

TEST(NoMalloc, ResidualWithJacobians) {
  const FreeBody<SE3> model(rigid_body_inertia(Vec3(1, 2, 3), 1.5));
  HolonomicOptions<SE3> opt;
  HolonomicResidual<SE3> out;
  StepInputs in;
  const Vec6 xi = Vec6::Constant(0.1);
  const long n = allocations_during([&] {
    holonomic_residual(model, opt, 0.01, 0.0, SE3::identity(), xi, xi, in, true, out);
  });
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace marsden::vehicle
