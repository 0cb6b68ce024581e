// DMOC on trees: the midpoint step's residual blocks against finite differences and against
// the simulator, the transcription's derivatives, and the acrobot swing-up solved by Ipopt
// and reproduced by re-simulating its controls.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "control/nlp_checks.hpp"
#include "marsden/control/tree_ocp.hpp"
#include "marsden/error.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/midpoint.hpp"
#include "tree/tree_models.hpp"

namespace marsden::control {
namespace {

using tree::MatX;
using tree::MidpointResidualBlocks;

struct StepPoint {
  tree::TreeState x_k;
  VecX u, q_kp1, p_kp1, lambda;
};

VecX random_vector(std::mt19937& rng, int size, double scale) {
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  VecX v(size);
  for (int i = 0; i < size; ++i) v[i] = scale * U(rng);
  return v;
}

// A point off the solution manifold (every argument independent), near a plausible step.
StepPoint random_point(const tree::Model& model, const VecX& q, double dt, unsigned seed) {
  std::mt19937 rng(seed);
  const int n = model.num_coords();
  StepPoint s;
  s.x_k.t = 0.3;
  s.x_k.q = q;
  s.x_k.p = random_vector(rng, n, 1.0);
  s.u = random_vector(rng, model.num_inputs(), 1.0);
  s.q_kp1 = q + dt * random_vector(rng, n, 1.0);
  s.p_kp1 = random_vector(rng, n, 1.0);
  s.lambda = random_vector(rng, model.num_constraint_rows(), 2.0);
  return s;
}

// Every block of midpoint_residual_blocks against central differences of (r_a, r_b).
void expect_blocks_match(const tree::Model& model, const tree::MidpointOptions& options,
                         double dt, const StepPoint& s) {
  tree::Data data(model);
  MidpointResidualBlocks B;
  tree::midpoint_residual_blocks(model, data, options, dt, s.x_k, s.u, s.q_kp1, s.p_kp1,
                                 s.lambda, B);
  const int n = model.num_coords(), m = model.num_constraint_rows();
  ASSERT_EQ(B.r_a.size(), n + m);
  ASSERT_EQ(B.r_b.size(), n);

  // Central differences of (r_a, r_b) with respect to the argument `arg` selects.
  auto fd = [&](const std::function<VecX&(StepPoint&)>& arg) {
    const double eps = 1e-6;
    StepPoint t = s;
    const int cols = static_cast<int>(arg(t).size());
    MatX Da(n + m, cols), Db(n, cols);
    tree::Data d(model);
    MidpointResidualBlocks plus, minus;
    for (int j = 0; j < cols; ++j) {
      arg(t)[j] += eps;
      tree::midpoint_residual_blocks(model, d, options, dt, t.x_k, t.u, t.q_kp1, t.p_kp1,
                                     t.lambda, plus);
      arg(t)[j] -= 2.0 * eps;
      tree::midpoint_residual_blocks(model, d, options, dt, t.x_k, t.u, t.q_kp1, t.p_kp1,
                                     t.lambda, minus);
      arg(t)[j] += eps;
      Da.col(j) = (plus.r_a - minus.r_a) / (2.0 * eps);
      Db.col(j) = (plus.r_b - minus.r_b) / (2.0 * eps);
    }
    return std::pair{Da, Db};
  };
  auto check = [&](const MatX& analytic, const MatX& numeric, const std::string& what) {
    ASSERT_EQ(analytic.rows(), numeric.rows()) << what;
    ASSERT_EQ(analytic.cols(), numeric.cols()) << what;
    const double scale = std::max(1.0, numeric.lpNorm<Eigen::Infinity>());
    const double err = numeric.size() ? (analytic - numeric).lpNorm<Eigen::Infinity>() / scale
                                      : 0.0;
    EXPECT_LT(err, 1e-6) << what << " (alpha " << options.alpha << ")";
    std::printf("  %-9s alpha %.1f: relative FD error %.2e\n", what.c_str(), options.alpha, err);
  };
  const auto [Da_qk, Db_qk] = fd([](StepPoint& t) -> VecX& { return t.x_k.q; });
  check(B.Ja_qk, Da_qk, "Ja_qk");
  check(B.Jb_qk, Db_qk, "Jb_qk");
  const auto [Da_pk, Db_pk] = fd([](StepPoint& t) -> VecX& { return t.x_k.p; });
  check(B.Ja_pk, Da_pk, "Ja_pk");
  EXPECT_EQ(Db_pk.lpNorm<Eigen::Infinity>(), 0.0) << "r_b does not depend on p_k";
  const auto [Da_q1, Db_q1] = fd([](StepPoint& t) -> VecX& { return t.q_kp1; });
  check(B.Ja_qkp1, Da_q1, "Ja_qkp1");
  check(B.Jb_qkp1, Db_q1, "Jb_qkp1");
  const auto [Da_p1, Db_p1] = fd([](StepPoint& t) -> VecX& { return t.p_kp1; });
  EXPECT_LT(Da_p1.lpNorm<Eigen::Infinity>(), 1e-12) << "r_a does not depend on p_kp1";
  check(B.Jb_pkp1, Db_p1, "Jb_pkp1");
  const auto [Da_u, Db_u] = fd([](StepPoint& t) -> VecX& { return t.u; });
  check(B.Ja_u, Da_u, "Ja_u");
  check(B.Jb_u, Db_u, "Jb_u");
  const auto [Da_l, Db_l] = fd([](StepPoint& t) -> VecX& { return t.lambda; });
  check(B.Ja_lambda, Da_l, "Ja_lambda");
  EXPECT_LT(Db_l.size() ? Db_l.lpNorm<Eigen::Infinity>() : 0.0, 1e-12)
      << "r_b does not depend on lambda_k";

  // The step itself, for a free final time.
  const double eps = 1e-7;
  tree::Data d(model);
  MidpointResidualBlocks plus, minus;
  tree::midpoint_residual_blocks(model, d, options, dt + eps, s.x_k, s.u, s.q_kp1, s.p_kp1,
                                 s.lambda, plus);
  tree::midpoint_residual_blocks(model, d, options, dt - eps, s.x_k, s.u, s.q_kp1, s.p_kp1,
                                 s.lambda, minus);
  check(B.Ja_dt, (plus.r_a - minus.r_a) / (2.0 * eps), "Ja_dt");
  check(B.Jb_dt, (plus.r_b - minus.r_b) / (2.0 * eps), "Jb_dt");
}

// One midpoint_step, then the residual at its result: r_a = 0 and r_b = 0 (one residual
// for simulation and optimal control).
void expect_step_is_a_root(const tree::Model& model, const tree::MidpointOptions& options,
                           double dt, const VecX& q0, const VecX& qd0, const VecX& u) {
  tree::Data data(model);
  const tree::TreeState x0 = tree::midpoint_initial_state(model, data, 0.0, q0, qd0);
  tree::TreeState x1;
  ASSERT_TRUE(tree::midpoint_step(model, data, options, dt, x0, u, VecX(), x1).converged);
  const VecX lambda = data.lambda;
  MidpointResidualBlocks B;
  tree::midpoint_residual_blocks(model, data, options, dt, x0, u, x1.q, x1.p, lambda, B);
  EXPECT_LT(B.r_a.lpNorm<Eigen::Infinity>(), 1e-9) << "alpha " << options.alpha;
  EXPECT_LT(B.r_b.lpNorm<Eigen::Infinity>(), 1e-9) << "alpha " << options.alpha;
}

TEST(MidpointResidualBlocks, MatchFiniteDifferencesOnRandomTreeWithInputs) {
  const tree::Model model = tree::test::random_tree(11, 4, true);
  ASSERT_GT(model.num_inputs(), 0);
  for (double alpha : {0.5, 0.3}) {
    tree::MidpointOptions options;
    options.alpha = alpha;
    std::mt19937 rng(3);
    const VecX q = random_vector(rng, model.num_coords(), 0.5);
    expect_blocks_match(model, options, 0.02, random_point(model, q, 0.02, 5));
  }
}

TEST(MidpointResidualBlocks, MatchFiniteDifferencesOnFourBar) {
  const tree::FourBarParams params{.damping = 0.2};
  const tree::Model model = tree::four_bar(params);
  ASSERT_GT(model.num_constraint_rows(), 0);
  const tree::FourBarState s = tree::four_bar_state(params, 0.7, 1.5);
  for (double alpha : {0.5, 0.3}) {
    tree::MidpointOptions options;
    options.alpha = alpha;
    expect_blocks_match(model, options, 0.01, random_point(model, s.q, 0.01, 9));
  }
}

TEST(MidpointResidualBlocks, VanishAtTheSimulatedStep) {
  const tree::Model tree_model = tree::test::random_tree(11, 4, true);
  std::mt19937 rng(4);
  const VecX q = random_vector(rng, tree_model.num_coords(), 0.5);
  const VecX qd = random_vector(rng, tree_model.num_coords(), 1.0);
  const VecX u = random_vector(rng, tree_model.num_inputs(), 1.0);
  const tree::FourBarParams params{.damping = 0.2};
  const tree::Model bar = tree::four_bar(params);
  const tree::FourBarState s = tree::four_bar_state(params, 0.7, 1.5);
  for (double alpha : {0.5, 0.3}) {
    tree::MidpointOptions options;
    options.alpha = alpha;
    expect_step_is_a_root(tree_model, options, 0.02, q, qd, u);
    expect_step_is_a_root(bar, options, 0.01, s.q, s.qd, VecX());
  }
}

TEST(MidpointResidualBlocks, RejectsPrescribedCoordinates) {
  tree::ModelBuilder b;
  const int f = b.add_joint_frame("cart", tree::kWorld, tree::Transform::Ty, "x", true);
  const int g = b.add_joint_frame("pole", f, tree::Transform::Rx, "theta");
  b.add_mass(g, 1.0, Vec3(0.0, 0.0, -1.0), Mat3::Zero());
  const tree::Model model = b.build();
  tree::Data data(model);
  tree::TreeState x{0.0, VecX::Zero(2), VecX::Zero(1)};
  MidpointResidualBlocks B;
  try {
    tree::midpoint_residual_blocks(model, data, {}, 0.01, x, VecX(), VecX::Zero(2),
                                   VecX::Zero(1), VecX(), B);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("prescribed"), std::string::npos) << e.what();
  }
}

// --- The transcription

TEST(TreeOcp, DerivativesMatchOnAcrobot) {
  TreeOcp ocp(acrobot_swing_up({}, 0.05, 6, 8.0));
  EXPECT_EQ(ocp.num_variables(), 6 * 5 + 4);
  EXPECT_EQ(ocp.num_constraints(), 6 * 4);
  testing::expect_derivatives_match(ocp, testing::perturbed_guess(ocp, 0.1), 1e-6, 1e-6);
}

TEST(TreeOcp, DerivativesMatchOnRandomTreeWithInputs) {
  TreeOcpSpec spec;
  spec.model = std::make_shared<const tree::Model>(tree::test::random_tree(11, 3, true));
  const int n = spec.model->num_coords(), nu = spec.model->num_inputs();
  spec.dt = 0.03;
  spec.steps = 3;
  spec.q0 = VecX::Constant(n, 0.1);
  spec.qd0 = VecX::Constant(n, -0.2);
  spec.q_final = VecX::Constant(n, 0.3);
  spec.q_final_fixed.assign(n, false);
  spec.q_final_fixed[0] = true;
  spec.final_at_rest = false;
  spec.u_lower = VecX::Constant(nu, -5.0);
  spec.u_upper = VecX::Constant(nu, 5.0);
  spec.effort_weights = VecX::LinSpaced(nu, 0.5, 2.0);
  spec.u_guess = VecX::Constant(nu, 0.4);
  spec.integrator.alpha = 0.3;
  TreeOcp ocp(spec);
  testing::expect_derivatives_match(ocp, testing::perturbed_guess(ocp, 0.1), 1e-6, 1e-6);
}

// Three steps of a damped four-bar (no inputs, closed by constraints), its end free.
TreeOcpSpec four_bar_spec() {
  const tree::FourBarParams params{.damping = 0.1};
  const tree::FourBarState s = tree::four_bar_state(params, 0.7, 1.5);
  TreeOcpSpec spec;
  spec.model = std::make_shared<const tree::Model>(tree::four_bar(params));
  spec.dt = 0.02;
  spec.steps = 3;
  spec.q0 = s.q;
  spec.qd0 = s.qd;
  spec.q_final = s.q;
  spec.q_final_fixed.assign(3, false);
  spec.final_at_rest = false;
  return spec;
}

TEST(TreeOcp, DerivativesMatchOnConstrainedFourBar) {
  TreeOcp ocp(four_bar_spec());
  EXPECT_EQ(ocp.num_constraints(), 3 * (2 * 3 + 2));
  testing::expect_derivatives_match(ocp, testing::perturbed_guess(ocp, 0.05), 1e-6, 1e-6);
}

// The step as a variable: the residual blocks' dt columns, the equal-step rows and the time
// cost, on an unconstrained and a constrained tree.
TEST(TreeOcp, FreeFinalTimeDerivativesMatch) {
  TreeOcpSpec acro = acrobot_swing_up({}, 0.05, 6, 8.0);
  acro.free_final_time = true;
  acro.dt_min = 0.01;
  acro.dt_max = 0.2;
  acro.time_weight = 3.0;
  TreeOcp acro_ocp(acro);
  // The generic perturbation would send a 50 ms step negative: unequal steps near dt instead.
  auto near_guess = [](TreeOcp& ocp, double scale) {
    VecX x = testing::perturbed_guess(ocp, scale);
    for (int k = 0; k < ocp.num_steps(); ++k)
      x[ocp.dt_offset(k)] = ocp.spec().dt * (1.0 + 0.2 * std::sin(k + 1.0));
    return x;
  };
  EXPECT_EQ(acro_ocp.num_variables(), 6 * 6 + 4);
  EXPECT_EQ(acro_ocp.num_constraints(), 6 * 4 + 5);
  EXPECT_EQ(acro_ocp.variable_name(acro_ocp.dt_offset(2)), "h at step 2");
  EXPECT_EQ(acro_ocp.constraint_name(6 * 4 + 1), "equal steps h_2 = h_1");
  testing::expect_derivatives_match(acro_ocp, near_guess(acro_ocp, 0.1), 1e-6, 1e-6);

  TreeOcpSpec bar = four_bar_spec();
  bar.free_final_time = true;
  bar.dt_min = 0.001;
  bar.time_weight = 1.0;
  TreeOcp bar_ocp(bar);
  testing::expect_derivatives_match(bar_ocp, near_guess(bar_ocp, 0.05), 1e-6, 1e-6);
}

// With the final time free the optimum is stationary in T: the fixed-time problem at the
// optimal step reaches the same cost, and at a step a little shorter or longer no less. The
// swing-up has many local optima, so the fixed-time solves start from the free one (its
// steps dropped) and stay within 1% of its step, where they find the same local optimum (5%
// shorter, Ipopt already finds another, slightly cheaper one).
TEST(TreeOcp, FreeFinalTimeSwingUpIsOptimalAgainstFixedTimes) {
  const int N = 80;
  TreeOcpSpec spec = acrobot_swing_up({}, 0.05, N, 20.0);
  spec.free_final_time = true;
  spec.dt_min = 0.02;
  spec.dt_max = 0.1;
  spec.time_weight = 20.0;
  IpoptOptions opt;
  opt.print_level = 0;
  opt.max_iterations = 1000;
  opt.constraint_tolerance = 1e-10;
  opt.tolerance = 1e-10;
  TreeOcp free_ocp(spec);
  const NlpSolution sol = solve_with_ipopt(free_ocp, opt);
  ASSERT_TRUE(sol.ok()) << sol.message << " after " << sol.iterations << " iterations";
  const double dt_star = sol.x[free_ocp.dt_offset(0)];
  std::printf("acrobot free final time: T = %.4f s, cost %.6g, %d iterations\n", N * dt_star,
              sol.cost, sol.iterations);
  EXPECT_LT(free_ocp.resimulation_error(sol.x), 1e-6);
  for (int k = 1; k < N; ++k) EXPECT_NEAR(sol.x[free_ocp.dt_offset(k)], dt_star, 1e-9);
  ASSERT_GT(dt_star, spec.dt_min + 1e-3);  // an interior optimum
  ASSERT_LT(dt_star, spec.dt_max - 1e-3);

  testing::expect_free_time_is_optimal(
      sol.cost, dt_star, N, spec.time_weight, 0.01, 1e-7, [&](double dt) {
        TreeOcpSpec fixed = spec;
        fixed.free_final_time = false;
        fixed.dt = dt;
        TreeOcp ocp(fixed);
        VecX start(ocp.num_variables());
        for (int k = 0; k <= N; ++k) {
          const int size = k < N ? ocp.stage_size() : 2 * ocp.spec().q0.size();
          start.segment(ocp.q_offset(k), size) = sol.x.segment(free_ocp.q_offset(k), size);
        }
        const NlpSolution s = solve_with_ipopt(ocp, opt, start);
        EXPECT_TRUE(s.ok()) << "dt = " << dt << ": " << s.message;
        return s.cost;
      });
}

TEST(TreeOcp, NamesAndTables) {
  TreeOcp ocp(acrobot_swing_up({}, 0.05, 4, 8.0));
  EXPECT_EQ(ocp.variable_name(ocp.q_offset(2) + 1), "q[1] at knot 2");
  EXPECT_EQ(ocp.variable_name(ocp.p_offset(3)), "p[0] at knot 3");
  EXPECT_EQ(ocp.variable_name(ocp.u_offset(1)), "u[0] at step 1");
  EXPECT_EQ(ocp.constraint_name(4 * 2 + 1), "dynamics r_a step 2 row 1");
  EXPECT_EQ(ocp.constraint_name(4 * 2 + 3), "dynamics r_b step 2 row 1");
  VecX x;
  ocp.initial_guess(x);
  Table states, controls;
  ocp.tables(x, states, controls);
  EXPECT_EQ(states.columns, (std::vector<std::string>{"t", "q_shoulder", "q_elbow",
                                                       "p_shoulder", "p_elbow"}));
  EXPECT_EQ(states.rows.rows(), 5);
  EXPECT_DOUBLE_EQ(states.rows(4, 0), 0.2);
  EXPECT_DOUBLE_EQ(states.rows(4, 1), std::numbers::pi);
  EXPECT_EQ(controls.columns, (std::vector<std::string>{"t", "u_0"}));
  EXPECT_EQ(controls.rows.rows(), 4);
  EXPECT_TRUE(std::isinf(ocp.min_clearance(x)));
  EXPECT_THROW(ocp.resimulation_error(VecX::Zero(3)), InputError);
}

// 3 s, 60 steps, |tau| <= 20 N m: the optimum pumps (the shoulder swings forward, back
// past -0.8 rad, then up) with the torque at its limit.
TEST(TreeOcp, AcrobotSwingUpIsReproducedBySimulation) {
  const double limit = 20.0;
  TreeOcp ocp(acrobot_swing_up({}, 0.05, 60, limit));
  IpoptOptions options;
  options.print_level = 0;
  options.max_cpu_time_s = 60.0;
  const NlpSolution sol = solve_with_ipopt(ocp, options);
  ASSERT_TRUE(sol.ok()) << sol.message << ", worst constraint " << sol.worst_constraint;
  const int N = ocp.num_steps();
  EXPECT_LT(std::abs(sol.x[ocp.q_offset(N)] - std::numbers::pi), 1e-6);
  EXPECT_LT(std::abs(sol.x[ocp.q_offset(N) + 1]), 1e-6);
  EXPECT_LT(sol.x.segment(ocp.p_offset(N), 2).lpNorm<Eigen::Infinity>(), 1e-6);
  double u_max = 0.0, shoulder_min = 0.0;
  for (int k = 0; k < N; ++k) {
    u_max = std::max(u_max, std::abs(sol.x[ocp.u_offset(k)]));
    shoulder_min = std::min(shoulder_min, sol.x[ocp.q_offset(k)]);
  }
  EXPECT_LE(u_max, limit + 1e-9);
  EXPECT_GT(u_max, limit - 1e-3) << "the torque limit should be active";
  EXPECT_LT(shoulder_min, -0.5) << "the swing-up should swing";
  const double resim = ocp.resimulation_error(sol.x);
  EXPECT_LT(resim, 1e-6);
  std::printf("acrobot swing-up: %d iterations, %.3f s in Ipopt, cost %.6g, max |u| %.6g, "
              "constraint violation %.3g, resimulation error %.3g\n",
              sol.iterations, sol.solve_time_s, sol.cost, u_max, sol.constraint_violation,
              resim);
}

// --- Bad specifications

TEST(TreeOcp, BadSpecsNameTheField) {
  const TreeOcpSpec good = acrobot_swing_up({}, 0.05, 10, 8.0);
  EXPECT_NO_THROW(TreeOcp{good});
  TreeOcpSpec s = good;
  s.dt = 0.0;
  testing::expect_spec_error<TreeOcp>(s, "dt");
  s = good;
  s.dt = -0.1;
  testing::expect_spec_error<TreeOcp>(s, "dt");
  s = good;
  s.steps = 0;
  testing::expect_spec_error<TreeOcp>(s, "steps");
  s = good;
  s.q0 = VecX::Zero(3);
  testing::expect_spec_error<TreeOcp>(s, "q0");
  s = good;
  s.qd0 = VecX::Zero(1);
  testing::expect_spec_error<TreeOcp>(s, "qd0");
  s = good;
  s.q_final = VecX::Zero(1);
  testing::expect_spec_error<TreeOcp>(s, "q_final");
  s = good;
  s.q_final_fixed = {true};
  testing::expect_spec_error<TreeOcp>(s, "q_final_fixed");
  s = good;
  s.free_final_time = true;
  s.dt_min = 2.0 * s.dt;
  testing::expect_spec_error<TreeOcp>(s, "dt_min");
  s.dt_min = 0.5 * s.dt;
  s.time_weight = std::nan("");
  testing::expect_spec_error<TreeOcp>(s, "time_weight");
  s = good;
  s.u_lower = VecX::Zero(2);
  testing::expect_spec_error<TreeOcp>(s, "u_lower");
  s = good;
  s.u_upper = VecX::Constant(1, -10.0);
  testing::expect_spec_error<TreeOcp>(s, "u bounds");
  s = good;
  s.effort_weights = VecX();
  testing::expect_spec_error<TreeOcp>(s, "effort_weights");
  s = good;
  s.q_lower = VecX::Zero(1);
  testing::expect_spec_error<TreeOcp>(s, "q_lower");
  s = good;
  s.q0[0] = std::nan("");
  testing::expect_spec_error<TreeOcp>(s, "q0");
  s = good;
  s.model.reset();
  testing::expect_spec_error<TreeOcp>(s, "model");
  EXPECT_THROW(acrobot({.mass1 = -1.0}), InputError);
}

}  // namespace
}  // namespace marsden::control
