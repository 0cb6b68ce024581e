// DMOC for holonomic vehicles: the pose chart's reconstruction and its derivatives, every
// Jacobian of the transcription against differences, and solved problems whose optimal
// controls, re-simulated, reproduce the optimal trajectory.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "marsden/control/holonomic_ocp.hpp"
#include "marsden/error.hpp"
#include "marsden/lie/tangent.hpp"
#include "marsden/vehicle/models.hpp"
#include "nlp_checks.hpp"

namespace marsden::control {
namespace {

using vehicle::Boat;
using vehicle::BoatParams;
using vehicle::FreeBody;
using vehicle::Helicopter;
using vehicle::HelicopterParams;
using vehicle::InputVec;
using vehicle::planar_body_inertia;
using vehicle::TangentMap;

template <class G>
typename PoseChart<G>::Coords random_coords(std::mt19937& rng, double q_scale) {
  std::normal_distribution<double> n(0.0, 1.0);
  typename PoseChart<G>::Coords c;
  for (int i = 0; i < c.size(); ++i) c[i] = n(rng);
  if constexpr (std::is_same_v<G, SE3>) c.template tail<4>() *= q_scale / c.template tail<4>().norm();
  return c;
}

template <class G>
class ChartTest : public ::testing::Test {};
using Groups = ::testing::Types<SE2, SE3>;
TYPED_TEST_SUITE(ChartTest, Groups);

// compose(c, eta) is the chart of pose(c) tau(eta), and its Jacobians match differences,
// also off the unit sphere (the NLP's iterates are not unit quaternions).
TYPED_TEST(ChartTest, ComposeMatchesGroupAndDifferences) {
  using G = TypeParam;
  using Chart = PoseChart<G>;
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0.0, 0.4);
  for (DiffMap map : {DiffMap::Exp, DiffMap::Cay}) {
    for (double q_scale : {1.0, 1.3}) {
      const auto c = random_coords<G>(rng, q_scale);
      typename G::Tangent eta;
      for (int i = 0; i < eta.size(); ++i) eta[i] = n(rng);
      typename Chart::JacCC J_c;
      typename Chart::JacCT J_eta;
      const auto out = Chart::compose(c, map, eta, &J_c, &J_eta);
      const G expected = Chart::pose(c) * tau<G>(map, eta);
      EXPECT_LT((Chart::pose(out).matrix() - expected.matrix()).norm(), 1e-12);
      const double eps = 1e-6;
      for (int j = 0; j < c.size(); ++j) {
        auto cp = c, cm = c;
        cp[j] += eps;
        cm[j] -= eps;
        const typename Chart::Coords fd = (Chart::compose(cp, map, eta, nullptr, nullptr) -
                         Chart::compose(cm, map, eta, nullptr, nullptr)) / (2 * eps);
        EXPECT_LT((fd - J_c.col(j)).norm(), 1e-8) << "d/dc column " << j;
      }
      for (int j = 0; j < eta.size(); ++j) {
        auto ep = eta, em = eta;
        ep[j] += eps;
        em[j] -= eps;
        const typename Chart::Coords fd = (Chart::compose(c, map, ep, nullptr, nullptr) -
                         Chart::compose(c, map, em, nullptr, nullptr)) / (2 * eps);
        EXPECT_LT((fd - J_eta.col(j)).norm(), 1e-8) << "d/deta column " << j;
      }
      // right_from_coords: pose(c + dc) = pose(c) exp(B dc + O(dc^2)).
      const auto B = Chart::right_from_coords(c);
      for (int j = 0; j < c.size(); ++j) {
        auto cp = c, cm = c;
        cp[j] += eps;
        cm[j] -= eps;
        const typename G::Tangent fd =
            (G::log(Chart::pose(c).inverse() * Chart::pose(cp)) -
             G::log(Chart::pose(c).inverse() * Chart::pose(cm))) / (2 * eps);
        EXPECT_LT((fd - B.col(j)).norm(), 1e-8) << "right perturbation column " << j;
      }
    }
  }
}

std::shared_ptr<const Helicopter> helicopter() {
  return std::make_shared<const Helicopter>(HelicopterParams{});
}

// A short helicopter flight exercising every term: all obstacle kinds, hazard, path
// length, a heading, position and velocity bounds, a pose-dependent external wrench
// (gravity) and actuator angles.
HolonomicOcpSpec<SE3> helicopter_spec(int steps) {
  HolonomicOcpSpec<SE3> s;
  s.model = helicopter();
  s.dt = 0.1;
  s.steps = steps;
  s.g0.x = Vec3(0.0, 0.0, 1.0);
  s.final_position = Vec3(6.0, 1.0, 2.0);
  s.final_position_fixed = {true, true, true};
  s.final_heading = 0.3;
  s.final_velocity = Vec6::Zero();
  const double hover = HelicopterParams{}.mass * HelicopterParams{}.gravity;
  s.u_lower = InputVec(2);
  s.u_lower << 0.0, -20.0;
  s.u_upper = InputVec(2);
  s.u_upper << 3.0 * hover, 20.0;
  s.gamma_lower = InputVec::Constant(2, -0.5);
  s.gamma_upper = InputVec::Constant(2, 0.5);
  s.u_reference = InputVec(2);
  s.u_reference << hover, 0.0;
  s.u_guess = s.u_reference;
  s.gamma_weights = InputVec::Constant(2, 10.0);
  s.position_lower = Vec3(-1.0, -3.0, 0.2);
  Obstacle sphere;
  sphere.kind = Obstacle::Kind::Sphere;
  sphere.name = "sphere";
  sphere.center = Vec3(3.0, 1.5, 1.5);
  sphere.radius = 0.6;
  sphere.margin = 0.1;
  Obstacle pillar = sphere;
  pillar.kind = Obstacle::Kind::Cylinder;
  pillar.name = "pillar";
  pillar.center = Vec3(4.5, -1.5, 0.0);
  pillar.radius = 0.4;
  Obstacle box;
  box.kind = Obstacle::Kind::Box;
  box.name = "box";
  box.center = Vec3(2.0, -1.5, 1.0);
  box.half_size = Vec3(0.3, 0.4, 0.5);
  Obstacle capsule;
  capsule.kind = Obstacle::Kind::Capsule;
  capsule.name = "capsule";
  capsule.a = Vec3(1.0, 2.0, 0.0);
  capsule.b = Vec3(1.5, 2.5, 3.0);
  capsule.radius = 0.3;
  Obstacle ceiling;
  ceiling.kind = Obstacle::Kind::HalfSpace;
  ceiling.name = "ceiling";
  ceiling.center = Vec3(0.0, 0.0, 6.0);
  ceiling.normal = Vec3(0.0, 0.1, -1.0);
  s.path.obstacles = {sphere, pillar, box, capsule, ceiling};
  s.path.hazard_weight = 2.0;
  s.path.hazard_distance = 1.5;
  s.path.path_length_weight = 0.1;
  return s;
}

// A planar free body, moving at t = 0, to a point.
HolonomicOcpSpec<SE2> planar_spec() {
  HolonomicOcpSpec<SE2> s;
  s.model = std::make_shared<const FreeBody<SE2>>(planar_body_inertia(0.3, 2.0));
  s.dt = 0.1;
  s.steps = 6;
  s.xi0 = Vec3(0.2, 1.0, 0.0);
  s.final_position = Vec3(2.0, 1.0, 0.0);
  s.final_position_fixed = {true, true, false};
  return s;
}

TEST(HolonomicOcp, HelicopterDerivativesMatchDifferences) {
  for (DiffMap map : {DiffMap::Cay, DiffMap::Exp}) {
    for (TangentMap tangent : {TangentMap::TLN, TangentMap::Exact}) {
      auto spec = helicopter_spec(6);
      spec.integrator.map = map;
      spec.integrator.tangent = tangent;
      HolonomicOcp<SE3> ocp(spec);
      const VecX x = testing::perturbed_guess(ocp, 0.05);
      testing::expect_derivatives_match(ocp, x, 1e-6, 2e-6);
    }
  }
}

TEST(HolonomicOcp, BoatAndPlanarBodyDerivativesMatchDifferences) {
  HolonomicOcpSpec<SE3> boat;
  BoatParams bp;
  // With the paper's sharp wet set the hydrodynamic forces jump where a patch crosses the
  // waterline and differences across a jump mean nothing; the smooth set is differentiable.
  bp.wet_smoothing = 0.02;
  bp.current = Vec3(0.1, -0.2, 0.0);
  bp.wind_force = Vec3(10.0, 30.0, 0.0);
  boat.model = std::make_shared<const Boat>(bp);
  boat.dt = 0.2;
  boat.steps = 5;
  boat.g0.x = Vec3(0.0, 0.0, Boat(bp).equilibrium_height());
  boat.final_position = Vec3(5.0, 2.0, 0.0);
  boat.final_position_fixed = {true, true, false};
  boat.final_heading = 0.5;
  HolonomicOcp<SE3> boat_ocp(boat);
  testing::expect_derivatives_match(boat_ocp, testing::perturbed_guess(boat_ocp, 0.02), 1e-6,
                                    2e-6);

  HolonomicOcpSpec<SE2> planar = planar_spec();
  planar.final_orientation = SE2::from_angle(1.0, Vec2::Zero());
  Obstacle disc;
  disc.kind = Obstacle::Kind::Sphere;
  disc.name = "disc";
  disc.center = Vec3(1.0, 0.5, 0.0);
  disc.radius = 0.2;
  planar.path.obstacles = {disc};
  planar.path.hazard_weight = 1.0;
  HolonomicOcp<SE2> planar_ocp(planar);
  testing::expect_derivatives_match(planar_ocp, testing::perturbed_guess(planar_ocp, 0.05), 1e-6,
                                    2e-6);
}

// The guess meets the reconstruction rows exactly and starts at the initial pose.
TEST(HolonomicOcp, GuessMeetsReconstruction) {
  HolonomicOcp<SE3> ocp(helicopter_spec(20));
  VecX x, g;
  ocp.initial_guess(x);
  ocp.constraints(x, g);
  for (int k = 0; k < 20; ++k)
    EXPECT_LT(g.segment<7>(k * 13).lpNorm<Eigen::Infinity>(), 1e-12) << "step " << k;
}

TEST(HolonomicOcp, HelicopterFlightSolvedAndReproducedBySimulation) {
  HolonomicOcp<SE3> ocp(helicopter_spec(30));
  IpoptOptions opt;
  opt.constraint_tolerance = 1e-10;
  const NlpSolution sol = solve_with_ipopt(ocp, opt);
  ASSERT_TRUE(sol.ok()) << sol.message << " (violation " << sol.constraint_violation << " at "
                        << sol.worst_constraint << ")";
  EXPECT_LT(sol.constraint_violation, 1e-9);
  const auto& spec = ocp.spec();
  const int cN = ocp.coords_index(30);
  EXPECT_LT((sol.x.segment<3>(cN) - spec.final_position).norm(), 1e-9);
  EXPECT_GT(ocp.min_clearance(sol.x), -1e-8);
  for (int k = 0; k < 30; ++k) {
    for (int i = 0; i < 2; ++i) {
      EXPECT_GE(sol.x[ocp.u_index(k) + i], spec.u_lower[i] - 1e-9);
      EXPECT_LE(sol.x[ocp.u_index(k) + i], spec.u_upper[i] + 1e-9);
      EXPECT_LE(std::abs(sol.x[ocp.gamma_index(k) + i]), 0.5 + 1e-9);
    }
  }
  // The whole point of DMOC: the optimal motion is a motion of the discrete system.
  EXPECT_LT(ocp.resimulation_error(sol.x), 1e-7);
}

// A free final time adds dt_k to every stage: its derivative blocks (reconstruction,
// residual, the equal-step rows, effort and time cost, and xi_-1 moving with dt_0 when the
// vehicle starts moving) are checked like every other.
TEST(HolonomicOcp, FreeFinalTimeDerivativesMatchDifferences) {
  auto heli = helicopter_spec(6);
  heli.xi0 << 0.1, -0.2, 0.3, 2.0, 0.5, -0.3;
  heli.path.hazard_weight = 0.0;
  heli.free_final_time = true;
  heli.dt_min = 0.02;
  heli.dt_max = 0.5;
  heli.time_weight = 3.0;
  HolonomicOcp<SE3> heli_ocp(heli);
  testing::expect_derivatives_match(heli_ocp, testing::perturbed_guess(heli_ocp, 0.05), 1e-6,
                                    2e-6);

  HolonomicOcpSpec<SE2> planar = planar_spec();
  planar.free_final_time = true;
  planar.dt_min = 0.01;
  planar.dt_max = 1.0;
  planar.time_weight = 1.0;
  HolonomicOcp<SE2> planar_ocp(planar);
  testing::expect_derivatives_match(planar_ocp, testing::perturbed_guess(planar_ocp, 0.05), 1e-6,
                                    2e-6);
}

// With the final time free the optimum is stationary in T: solving with the time step fixed
// a little above or below the optimal one costs no less, and at the optimal step the fixed-
// time problem finds the same cost.
TEST(HolonomicOcp, FreeFinalTimeIsOptimalAgainstFixedTimes) {
  auto spec = helicopter_spec(20);
  spec.path = PathSpec{};
  spec.final_heading.reset();
  spec.dt = 0.15;
  spec.free_final_time = true;
  spec.dt_min = 0.02;
  spec.dt_max = 0.5;
  spec.time_weight = 20.0;
  IpoptOptions opt;
  opt.constraint_tolerance = 1e-10;
  opt.tolerance = 1e-10;
  HolonomicOcp<SE3> free_ocp(spec);
  const NlpSolution sol = solve_with_ipopt(free_ocp, opt);
  ASSERT_TRUE(sol.ok()) << sol.message;
  EXPECT_LT(free_ocp.resimulation_error(sol.x), 1e-7);
  const double dt_star = sol.x[free_ocp.dt_index(0)];
  for (int k = 1; k < 20; ++k) EXPECT_NEAR(sol.x[free_ocp.dt_index(k)], dt_star, 1e-9);
  ASSERT_GT(dt_star, spec.dt_min + 1e-3);  // an interior optimum
  ASSERT_LT(dt_star, spec.dt_max - 1e-3);

  testing::expect_free_time_is_optimal(sol.cost, dt_star, 20, spec.time_weight, 0.05, 1e-6,
                                       [&](double dt) {
                                         auto fixed = spec;
                                         fixed.free_final_time = false;
                                         fixed.dt = dt;
                                         HolonomicOcp<SE3> ocp(fixed);
                                         const NlpSolution s = solve_with_ipopt(ocp, opt);
                                         EXPECT_TRUE(s.ok()) << "dt = " << dt << ": " << s.message;
                                         return s.cost;
                                       });
}

TEST(HolonomicOcp, BadSpecsNameTheField) {
  auto s = helicopter_spec(5);
  s.dt = 0.0;
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "dt");
  s = helicopter_spec(5);
  s.steps = 0;
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "steps");
  s = helicopter_spec(5);
  s.u_lower = InputVec::Zero(3);
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "control_lower");
  s = helicopter_spec(5);
  s.gamma_upper = InputVec::Constant(2, -1.0);
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "shape bounds");
  s = helicopter_spec(5);
  s.final_position.z() = 0.0;
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "final position");
  s = helicopter_spec(5);
  s.path.obstacles[0].radius = -1.0;
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "sphere");
  s = helicopter_spec(5);
  s.free_final_time = true;
  s.dt_min = 0.2;  // above dt
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "final time");
  s = helicopter_spec(5);
  s.free_final_time = true;
  s.dt_min = 0.01;
  testing::expect_spec_error<HolonomicOcp<SE3>>(s, "hazard");
}

}  // namespace
}  // namespace marsden::control
