// DMOC with the RDP integrator (vehicles §6, Fig. 10 right): derivatives of the
// transcription, the car through the tunnel, and the errors of bad problems.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "control/nlp_checks.hpp"
#include "marsden/control/pose_chart.hpp"
#include "marsden/control/rdp_ocp.hpp"
#include "marsden/error.hpp"
#include "marsden/vehicle/rdp_models.hpp"

namespace marsden::control {
namespace {

using vehicle::CarModel;
using vehicle::rdp_segment_velocity;
using vehicle::RdpModel;
using vehicle::RdpOptions;
using vehicle::RdpVec;
using vehicle::ShapeVec;
using vehicle::SnakeboardModel;
using vehicle::SnakeboardParams;

RdpOcpSpec snakeboard_problem() {
  RdpOcpSpec s;
  s.model = std::make_shared<SnakeboardModel>(SnakeboardParams{}, false);
  s.integrator.map = DiffMap::Exp;
  s.integrator.alpha = 0.3;
  s.dt = 0.1;
  s.steps = 6;
  s.g0 = SE2::from_angle(0.4, Vec2(1.0, -0.5));
  s.r0 = ShapeVec(2);
  s.r0 << 0.2, 0.3;
  s.u0 = ShapeVec(2);
  s.u0 << 0.5, 0.2;
  s.w0 = RdpVec::Constant(1, -0.4);
  s.control_weights = {1.0, 0.5};
  s.shape_weights = {0.0, 2.0};
  s.guess_speed = 0.5;
  return s;
}

TEST(RdpSegmentVelocity, DerivativesMatchFiniteDifferences) {
  const RdpOptions opt;
  const double dt = 0.2, eps = 1e-6;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  const CarModel car(CarParams{});
  const SnakeboardModel board(SnakeboardParams{}, false);
  for (const RdpModel<SE2>* model :
       {static_cast<const RdpModel<SE2>*>(&car), static_cast<const RdpModel<SE2>*>(&board)}) {
    const int nr = model->num_shape(), n = nr + model->num_symmetry();
    ShapeVec r(nr);
    RdpVec x(n);
    for (int i = 0; i < nr; ++i) r[i] = U(rng);
    for (int i = 0; i < n; ++i) x[i] = U(rng);
    SegmentJacobian J_r, J_x;
    const Vec3 xi = rdp_segment_velocity_jacobians(*model, opt, dt, r, x, J_r, J_x);
    EXPECT_LT((xi - rdp_segment_velocity(*model, opt, dt, r, x)).norm(), 1e-15);
    double worst = 0.0;
    for (int j = 0; j < nr; ++j) {
      ShapeVec rp = r, rm = r;
      rp[j] += eps;
      rm[j] -= eps;
      const Vec3 fd = (rdp_segment_velocity(*model, opt, dt, rp, x) -
                       rdp_segment_velocity(*model, opt, dt, rm, x)) /
                      (2.0 * eps);
      worst = std::max(worst, (fd - J_r.col(j)).lpNorm<Eigen::Infinity>());
    }
    for (int j = 0; j < n; ++j) {
      RdpVec xp = x, xm = x;
      xp[j] += eps;
      xm[j] -= eps;
      const Vec3 fd = (rdp_segment_velocity(*model, opt, dt, r, xp) -
                       rdp_segment_velocity(*model, opt, dt, r, xm)) /
                      (2.0 * eps);
      worst = std::max(worst, (fd - J_x.col(j)).lpNorm<Eigen::Infinity>());
    }
    EXPECT_LT(worst, 1e-8) << "model with n_r = " << nr;
  }
}

TEST(RdpOcp, CarDerivativesMatchFiniteDifferences) {
  RdpOcpSpec spec = car_tunnel_problem(8);
  spec.path.hazard_weight = 2.0;
  spec.path.hazard_distance = 3.0;
  spec.path.path_length_weight = 0.1;
  RdpOcp with_obstacles(spec);
  EXPECT_GT(with_obstacles.num_constraints(), 8 * 7);
  testing::expect_derivatives_match(with_obstacles, testing::perturbed_guess(with_obstacles, 0.05),
                                    1e-6, 1e-6);
  spec.path = PathSpec{};
  RdpOcp free_tunnel(spec);
  EXPECT_EQ(free_tunnel.num_constraints(), 8 * 7);
  testing::expect_derivatives_match(free_tunnel, testing::perturbed_guess(free_tunnel, 0.05), 1e-6,
                                    1e-6);
}

TEST(RdpOcp, SnakeboardDerivativesMatchFiniteDifferences) {
  RdpOcp ocp(snakeboard_problem());
  EXPECT_EQ(ocp.num_variables(), 6 * (3 + 2 + 3 + 2) + 5);
  EXPECT_EQ(ocp.num_constraints(), 6 * (3 + 2 + 3));
  testing::expect_derivatives_match(ocp, testing::perturbed_guess(ocp, 0.1), 1e-6, 1e-6);
}

// The step as a variable adds a column to every row of a step (the RDP residual through
// r_k+alpha, C(dt xi) and the force terms; the reconstruction; the shape update), the
// equal-step rows and the time cost; all are checked like every other.
TEST(RdpOcp, FreeFinalTimeDerivativesMatchFiniteDifferences) {
  RdpOcpSpec car = car_tunnel_problem(8);
  car.free_final_time = true;
  car.dt_min = 0.2;
  car.dt_max = 3.0;
  car.time_weight = 2.0;
  RdpOcp car_ocp(car);
  EXPECT_EQ(car_ocp.num_variables(), 8 * (3 + 2 + 2 + 2 + 1) + 5);
  EXPECT_EQ(car_ocp.num_constraints(), 8 * 7 + 7 + 3 * 8);
  EXPECT_EQ(car_ocp.variable_name(car_ocp.dt_index(3)), "h step 3");
  EXPECT_EQ(car_ocp.constraint_name(8 * 7 + 2), "equal steps h_3 = h_2");
  testing::expect_derivatives_match(car_ocp, testing::perturbed_guess(car_ocp, 0.05), 1e-6, 1e-6);

  RdpOcpSpec board = snakeboard_problem();
  board.free_final_time = true;
  board.dt_min = 0.01;
  board.dt_max = 1.0;
  board.time_weight = 0.5;
  RdpOcp board_ocp(board);
  testing::expect_derivatives_match(board_ocp, testing::perturbed_guess(board_ocp, 0.1), 1e-6,
                                    1e-6);
}

// With the final time free the optimum is stationary in T: the fixed-time problem at the
// optimal step reaches the same cost, and at a step a little shorter or longer no less.
TEST(RdpOcp, FreeFinalTimeIsOptimalAgainstFixedTimes) {
  const int N = 30;
  RdpOcpSpec spec = car_tunnel_problem(N);
  spec.path = PathSpec{};
  spec.free_final_time = true;
  spec.dt_min = 0.1;
  spec.dt_max = 1.0;
  spec.time_weight = 0.05;
  IpoptOptions opt;
  opt.max_iterations = 1000;
  opt.constraint_tolerance = 1e-10;
  opt.tolerance = 1e-10;
  RdpOcp free_ocp(spec);
  const NlpSolution sol = solve_with_ipopt(free_ocp, opt);
  ASSERT_TRUE(sol.ok()) << sol.message << " after " << sol.iterations << " iterations";
  EXPECT_LT(free_ocp.resimulation_error(sol.x), 1e-7);
  const double dt_star = sol.x[free_ocp.dt_index(0)];
  for (int k = 1; k < N; ++k) EXPECT_NEAR(sol.x[free_ocp.dt_index(k)], dt_star, 1e-9);
  ASSERT_GT(dt_star, spec.dt_min + 1e-3);  // an interior optimum
  ASSERT_LT(dt_star, spec.dt_max - 1e-3);
  Table states, controls;
  free_ocp.tables(sol.x, states, controls);
  EXPECT_NEAR(states.rows(N, 0), N * dt_star, 1e-12);

  testing::expect_free_time_is_optimal(sol.cost, dt_star, N, spec.time_weight, 0.05, 1e-6,
                                       [&](double dt) {
                                         RdpOcpSpec fixed = spec;
                                         fixed.free_final_time = false;
                                         fixed.dt = dt;
                                         RdpOcp ocp(fixed);
                                         const NlpSolution s = solve_with_ipopt(ocp, opt);
                                         EXPECT_TRUE(s.ok()) << "dt = " << dt << ": " << s.message;
                                         return s.cost;
                                       });
}

TEST(RdpOcp, NamesSayWhatAndWhere) {
  RdpOcp ocp(car_tunnel_problem(20));
  EXPECT_EQ(ocp.variable_name(ocp.coords_index(3)), "theta at knot 3");
  EXPECT_EQ(ocp.variable_name(ocp.shape_index(20) + 1), "sigma at knot 20");
  EXPECT_EQ(ocp.variable_name(ocp.unknowns_index(4)), "u_psi step 4");
  EXPECT_EQ(ocp.variable_name(ocp.controls_index(5)), "f_psi step 5");
  EXPECT_EQ(ocp.variable_name(ocp.controls_index(5) + 1), "u_sigma_in step 5");
  const int rows = 3 + 2 + 2;
  EXPECT_EQ(ocp.constraint_name(12 * rows + 5 + 1), "dynamics step 12 row 1");
  EXPECT_EQ(ocp.constraint_name(2 * rows + 1), "reconstruction step 2 (x)");
  EXPECT_EQ(ocp.constraint_name(20 * rows), "clearance of obstacle 'pillar 1' at knot 1");
}

// The initial guess is a pose path through the waypoints, not a feasible trajectory; Ipopt
// finds one that the simulator reproduces.
TEST(RdpOcp, CarDrivesThroughTheTunnel) {
  const RdpOcpSpec spec = car_tunnel_problem(50);
  RdpOcp ocp(spec);
  IpoptOptions options;
  options.max_iterations = 1000;
  const NlpSolution sol = solve_with_ipopt(ocp, options);
  ASSERT_TRUE(sol.ok()) << sol.message << " after " << sol.iterations << " iterations";
  const VecX& x = sol.x;

  EXPECT_LT((x.segment<3>(ocp.coords_index(50)) - *spec.final_coords).lpNorm<Eigen::Infinity>(),
            1e-6);
  EXPECT_NEAR(x[ocp.shape_index(50) + 1], 0.0, 1e-6);
  VecX x_l, x_u, g_l, g_u;
  ocp.bounds(x_l, x_u, g_l, g_u);
  for (int j = 0; j < x.size(); ++j) {
    EXPECT_GE(x[j], x_l[j] - 1e-9) << ocp.variable_name(j);
    EXPECT_LE(x[j], x_u[j] + 1e-9) << ocp.variable_name(j);
  }
  EXPECT_GE(ocp.min_clearance(x), -1e-7);
  EXPECT_LT(ocp.resimulation_error(x), 1e-6);

  // It weaves: the car passes below, above and below the pillars, and steers to do so.
  Table states, controls;
  ocp.tables(x, states, controls);
  ASSERT_EQ(states.rows.rows(), 51);
  ASSERT_EQ(controls.rows.rows(), 50);
  EXPECT_EQ(states.columns.back(), "sigma");
  EXPECT_EQ(controls.columns[2], "u_sigma_in");
  auto y_at = [&](double x_pos) {
    for (int k = 0; k < 50; ++k)
      if (states.rows(k, 2) <= x_pos && states.rows(k + 1, 2) > x_pos) return states.rows(k, 3);
    return 0.0;
  };
  EXPECT_LT(y_at(4.0), -0.3);
  EXPECT_GT(y_at(7.5), 0.3);
  EXPECT_LT(y_at(11.0), -0.3);
  EXPECT_GT(states.rows.col(5).cwiseAbs().maxCoeff(), 0.05);
}

// A rock fall fills the tunnel from wall to wall, too deep to pass between two knots.
TEST(RdpOcp, BlockedTunnelIsNotSolved) {
  RdpOcpSpec spec = car_tunnel_problem(16);
  Obstacle wall;
  wall.kind = Obstacle::Kind::Box;
  wall.name = "rock fall";
  wall.center = Vec3(7.5, 0.0, 0.0);
  wall.half_size = Vec3(3.0, 3.0, 1.0);
  spec.path.obstacles.push_back(wall);
  RdpOcp ocp(spec);
  IpoptOptions options;
  options.max_iterations = 300;
  const NlpSolution sol = solve_with_ipopt(ocp, options);
  EXPECT_FALSE(sol.ok()) << sol.message;
  EXPECT_LT(ocp.min_clearance(sol.x), 0.0);
}

TEST(RdpOcp, BadSpecsNameTheField) {
  const RdpOcpSpec good = car_tunnel_problem(10);
  RdpOcpSpec s = good;
  s.model.reset();
  testing::expect_spec_error<RdpOcp>(s, "model");
  s = good;
  s.dt = 0.0;
  testing::expect_spec_error<RdpOcp>(s, "dt");
  s = good;
  s.dt = std::nan("");
  testing::expect_spec_error<RdpOcp>(s, "dt");
  s = good;
  s.steps = 0;
  testing::expect_spec_error<RdpOcp>(s, "steps");
  s = good;
  s.r0 = ShapeVec::Zero(3);
  testing::expect_spec_error<RdpOcp>(s, "r0");
  s = good;
  s.u0[0] = std::numeric_limits<double>::infinity();
  testing::expect_spec_error<RdpOcp>(s, "u0");
  s = good;
  s.w0 = RdpVec::Zero(1);
  testing::expect_spec_error<RdpOcp>(s, "w0");
  s = good;
  s.control_bounds[1] = {1.0, -1.0};
  testing::expect_spec_error<RdpOcp>(s, "control_bounds[1]");
  s = good;
  s.shape_bounds.pop_back();
  testing::expect_spec_error<RdpOcp>(s, "shape_bounds");
  s = good;
  s.y_bounds = {0.5, 2.0};
  testing::expect_spec_error<RdpOcp>(s, "g0");
  s = good;
  s.control_weights[0] = -1.0;
  testing::expect_spec_error<RdpOcp>(s, "control_weights[0]");
  s = good;
  s.final_shape = ShapeVec::Zero(1);
  testing::expect_spec_error<RdpOcp>(s, "final_shape");
  s = good;
  s.final_shape_velocity = ShapeVec::Zero(2);
  testing::expect_spec_error<RdpOcp>(s, "final_shape_velocity");
  s = good;
  s.shape_names = {"psi"};
  testing::expect_spec_error<RdpOcp>(s, "shape_names");
  s = good;
  s.guess_speed = -1.0;
  testing::expect_spec_error<RdpOcp>(s, "guess_speed");
  s = good;
  s.path.obstacles[0].radius = 0.0;
  testing::expect_spec_error<RdpOcp>(s, "pillar 1");
  s = good;
  s.free_final_time = true;
  s.dt_min = 2.0 * s.dt;
  testing::expect_spec_error<RdpOcp>(s, "dt_min");
  s.dt_min = 0.5 * s.dt;
  s.time_weight = -1.0;
  testing::expect_spec_error<RdpOcp>(s, "time_weight");
  s.time_weight = 1.0;
  s.path.hazard_weight = 1.0;
  testing::expect_spec_error<RdpOcp>(s, "hazard_weight");
  EXPECT_THROW(car_tunnel_problem(0), InputError);
}

}  // namespace
}  // namespace marsden::control
