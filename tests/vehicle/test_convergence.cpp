// Accuracy of the holonomic VI and the baselines against a continuous reference: RK4 on
// eqs. (7)-(8) with tiny steps. Observed orders are fitted over a halving sequence of dt.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "marsden/vehicle/models.hpp"
#include "marsden/vehicle/stepper.hpp"

namespace marsden {
namespace {

double pose_error(const SE3& a, const SE3& b) { return SE3::log(a.inverse() * b).norm(); }

SE3 simulate(Method method, const HolonomicOptions<SE3>& opt,
             const std::shared_ptr<const HolonomicModel<SE3>>& model, const VehicleState<SE3>& s0,
             double dt, double T) {
  auto stepper = make_stepper<SE3>(method, model, opt);
  stepper->reset(s0, dt);
  const int n = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < n; ++k) EXPECT_TRUE(stepper->step(nullptr, nullptr).converged);
  return stepper->state().g;
}

struct OrderCase {
  Method method;
  DiffMap map;
  TangentMap tangent;
  double expected_order;
};

class ConvergenceOrder : public ::testing::TestWithParam<OrderCase> {};

TEST_P(ConvergenceOrder, MatchesTheMethodsOrder) {
  const OrderCase c = GetParam();
  // A general (non-diagonal) inertia, tumbling about an unstable axis.
  Mat6 A = Mat6::Identity();
  A.topLeftCorner<3, 3>() << 1.0, 0.1, 0.0, 0.1, 2.0, 0.2, 0.0, 0.2, 3.0;
  A.bottomRightCorner<3, 3>() = 2.0 * Mat3::Identity();
  const auto model = std::make_shared<FreeBody<SE3>>(A);
  VehicleState<SE3> s0;
  s0.xi << 0.3, 2.0, 0.4, 1.0, -0.5, 0.2;
  HolonomicOptions<SE3> opt;
  opt.map = c.map;
  opt.tangent = c.tangent;
  const double T = 2.0;
  const SE3 ref = simulate(Method::RK4, opt, model, s0, 1e-4, T);
  std::vector<double> errors;
  for (double dt : {0.02, 0.01, 0.005})
    errors.push_back(pose_error(simulate(c.method, opt, model, s0, dt, T), ref));
  const double order = std::log2(errors[1] / errors[2]);
  EXPECT_NEAR(order, c.expected_order, 0.25) << "errors " << errors[0] << " " << errors[1] << " "
                                             << errors[2];
  EXPECT_NEAR(std::log2(errors[0] / errors[1]), c.expected_order, 0.35);
}

INSTANTIATE_TEST_SUITE_P(
    Methods, ConvergenceOrder,
    ::testing::Values(OrderCase{Method::VI, DiffMap::Cay, TangentMap::TLN, 2.0},
                      OrderCase{Method::VI, DiffMap::Cay, TangentMap::Exact, 2.0},
                      OrderCase{Method::VI, DiffMap::Exp, TangentMap::TLN, 2.0},
                      OrderCase{Method::VI, DiffMap::Exp, TangentMap::Exact, 2.0},
                      OrderCase{Method::RK2, DiffMap::Cay, TangentMap::TLN, 2.0},
                      OrderCase{Method::RK2Implicit, DiffMap::Cay, TangentMap::TLN, 2.0},
                      OrderCase{Method::RK4, DiffMap::Cay, TangentMap::TLN, 4.0},
                      OrderCase{Method::LieNewmark, DiffMap::Cay, TangentMap::TLN, 2.0}));

// Collective equal to m g with the rotor level holds the helicopter still, for every method.
TEST(Helicopter, HoversWhenCollectiveBalancesGravity) {
  HelicopterParams p;
  const auto model = std::make_shared<Helicopter>(p);
  InputVec u(2), gamma(2);
  u << p.mass * p.gravity, 0.0;
  gamma << 0.0, 0.0;
  const ConstantSignal u_sig(u), gamma_sig(gamma);
  for (Method m : {Method::VI, Method::RK2, Method::RK2Implicit, Method::RK4, Method::LieNewmark}) {
    auto stepper = make_stepper<SE3>(m, model, HolonomicOptions<SE3>{});
    VehicleState<SE3> s0;
    s0.g.x = Vec3(1.0, 2.0, 10.0);
    stepper->reset(s0, 0.02);
    for (int k = 0; k < 500; ++k) ASSERT_TRUE(stepper->step(&gamma_sig, &u_sig).converged);
    const auto s = stepper->state();
    EXPECT_LT((s.g.x - s0.g.x).norm(), 1e-9) << method_name(m);
    EXPECT_LT(s.xi.norm(), 1e-9) << method_name(m);
  }
}

// Pitching the rotor forward (gamma_p > 0) tilts the lift towards +x: the helicopter
// accelerates forward; less collective than m g makes it sink.
TEST(Helicopter, RespondsToTiltAndCollective) {
  HelicopterParams p;
  const auto model = std::make_shared<Helicopter>(p);
  InputVec u(2), gamma(2);
  u << p.mass * p.gravity, 0.0;
  gamma << 0.05, 0.0;
  const ConstantSignal u_sig(u), gamma_sig(gamma);
  auto stepper = make_stepper<SE3>(Method::VI, model, HolonomicOptions<SE3>{});
  stepper->reset(VehicleState<SE3>{}, 0.01);
  for (int k = 0; k < 20; ++k) ASSERT_TRUE(stepper->step(&gamma_sig, &u_sig).converged);
  EXPECT_GT(stepper->state().g.x.x(), 0.0);

  u[0] = 0.5 * p.mass * p.gravity;
  gamma.setZero();
  const ConstantSignal u_low(u), level(gamma);
  stepper->reset(VehicleState<SE3>{}, 0.01);
  for (int k = 0; k < 100; ++k) ASSERT_TRUE(stepper->step(&level, &u_low).converged);
  // Half of gravity uncompensated: z(1 s) = -g/4, to the scheme's O(dt) accuracy here.
  EXPECT_NEAR(stepper->state().g.x.z(), -0.25 * p.gravity, 0.05);
}

}  // namespace
}  // namespace marsden
