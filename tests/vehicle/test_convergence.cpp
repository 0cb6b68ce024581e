// Accuracy of the holonomic VI and the baselines against a continuous reference: RK4 on
// eqs. (7)-(8) with tiny steps. Observed orders are fitted over a halving sequence of dt.
// Also the helicopter's response to its inputs, and the bound on a vehicle's inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "marsden/error.hpp"
#include "marsden/vehicle/models.hpp"
#include "vehicle/stepper.hpp"

namespace marsden::vehicle {
namespace {

double pose_error(const SE3& a, const SE3& b) { return SE3::log(a.inverse() * b).norm(); }

SE3 simulate(Method method, const HolonomicOptions<SE3>& opt,
             const std::shared_ptr<const HolonomicModel<SE3>>& model, const VehicleState<SE3>& s0,
             double dt, double T) {
  auto stepper = make_stepper<SE3>(method, model, opt);
  stepper->reset(s0, dt);
  const int n = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < n; ++k) EXPECT_TRUE(stepper->step(ConstantInputs()).converged);
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
  const ConstantInputs inputs(gamma, u);
  for (Method m : {Method::VI, Method::RK2, Method::RK2Implicit, Method::RK4, Method::LieNewmark}) {
    auto stepper = make_stepper<SE3>(m, model, HolonomicOptions<SE3>{});
    VehicleState<SE3> s0;
    s0.g.x = Vec3(1.0, 2.0, 10.0);
    stepper->reset(s0, 0.02);
    for (int k = 0; k < 500; ++k) ASSERT_TRUE(stepper->step(inputs).converged);
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
  const ConstantInputs tilted(gamma, u);
  auto stepper = make_stepper<SE3>(Method::VI, model, HolonomicOptions<SE3>{});
  stepper->reset(VehicleState<SE3>{}, 0.01);
  for (int k = 0; k < 20; ++k) ASSERT_TRUE(stepper->step(tilted).converged);
  EXPECT_GT(stepper->state().g.x.x(), 0.0);

  u[0] = 0.5 * p.mass * p.gravity;
  gamma.setZero();
  const ConstantInputs level(gamma, u);
  stepper->reset(VehicleState<SE3>{}, 0.01);
  for (int k = 0; k < 100; ++k) ASSERT_TRUE(stepper->step(level).converged);
  // Half of gravity uncompensated: z(1 s) = -g/4, to the scheme's O(dt) accuracy here.
  EXPECT_NEAR(stepper->state().g.x.z(), -0.25 * p.gravity, 0.05);
}

// A vehicle takes at most kMaxInputs controls and shape inputs: a model with more is
// refused when a stepper is made for it, naming the bound, and constant inputs of the wrong
// size are refused at the first step, naming both sizes.
class ManyControls final : public HolonomicModel<SE3> {
 public:
  explicit ManyControls(int nu) : HolonomicModel<SE3>(Mat6::Identity()), nu_(nu) {}
  int num_controls() const override { return nu_; }

 private:
  int nu_;
};

TEST(VehicleInputs, ModelsWithMoreThanTheBoundAndInputsOfTheWrongSizeAreRefused) {
  const auto many = std::make_shared<const ManyControls>(kMaxInputs + 1);
  for (Method m : {Method::VI, Method::RK4}) {
    try {
      make_stepper<SE3>(m, many, HolonomicOptions<SE3>{});
      ADD_FAILURE() << method_name(m) << ": a model with 9 controls was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("at most 8"), std::string::npos) << e.what();
    }
  }
  const auto two = std::make_shared<const ManyControls>(2);
  auto stepper = make_stepper<SE3>(Method::VI, two, HolonomicOptions<SE3>{});
  stepper->reset(VehicleState<SE3>{}, 0.01);
  try {
    stepper->step(ConstantInputs(InputVec(0), InputVec::Zero(3)));
    ADD_FAILURE() << "three controls were taken by a model of two";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("u 3 entries"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 controls"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(stepper->step(ConstantInputs(InputVec(0), InputVec::Zero(2))).converged);
}

}  // namespace
}  // namespace marsden::vehicle
