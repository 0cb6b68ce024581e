// Closed loop over the contract (control/lqr.hpp): the exact step derivatives of the tree
// midpoint VI in the (q, qd) chart against central differences of the step map through
// set_state; the Riccati gains against a dense solve of the same LQ problem; the DARE
// against the Riccati recursion run to its limit; a tracking loop with no perturbation
// reproduces its nominal, and with one it stays close where the open loop drifts away.
// iLQR reaches the optimum DMOC finds with Ipopt for the same discrete problem, and its
// final gains are the TV-LQR gains of its own run.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>
#include <random>

#include <Eigen/Dense>

#include "marsden/control/ilqr.hpp"
#include "marsden/control/lqr.hpp"
#include "marsden/control/nlp.hpp"
#include "marsden/control/tree_ocp.hpp"
#include "marsden/error.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/sim/maximal.hpp"
#include "marsden/sim/tree.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::control {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
constexpr double kPi = std::numbers::pi;

// The cart-pole of examples/problems/cart_pole_swing_up.json (pole from the downward
// vertical), with a damper on the cart so that Q of the step depends on qd.
std::shared_ptr<const tree::Model> cart_pole(double cart_damping = 0.0) {
  tree::ModelBuilder b;
  b.set_gravity(Vec3(0.0, 0.0, -9.81));
  const int cart = b.add_joint_frame("cart", tree::kWorld, tree::Transform::Ty, "cart");
  b.add_mass(cart, 1.0, Vec3::Zero(), Mat3::Zero());
  const int pole = b.add_joint_frame("pole", cart, tree::Transform::Rx, "pole");
  b.add_mass(pole, 0.3, Vec3(0.0, 0.0, -0.5), Mat3::Zero());
  b.add_coordinate_force_input(b.coord_index("cart"));
  if (cart_damping > 0.0) b.add_coordinate_damper(b.coord_index("cart"), cart_damping);
  return std::make_shared<const tree::Model>(b.build());
}

struct Plant {
  std::shared_ptr<sim::HeldInput> input;
  std::unique_ptr<sim::System> system;
};

Plant plant(std::shared_ptr<const tree::Model> model, double alpha = 0.5,
            double tolerance = 1e-14) {
  Plant p;
  p.input = std::make_shared<sim::HeldInput>(model->num_inputs());
  sim::TreeSetup setup;
  setup.model = model;
  setup.midpoint.alpha = alpha;
  setup.midpoint.newton.tolerance = tolerance;
  setup.q0 = setup.qd0 = VectorXd::Zero(model->num_coords());
  setup.controls = p.input;
  p.system = sim::make_tree_system(setup);
  return p;
}

double relative(const MatrixXd& a, const MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

// A swinging nominal: from x0 under inputs that vary step to step.
Nominal swinging(Plant& p, const VectorXd& x0, int steps, double dt) {
  MatrixXd u(steps, p.input->size());
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < u.cols(); ++i) u(k, i) = 2.0 * std::sin(0.7 * k + i) + 0.5;
  return rollout(*p.system, *p.input, 0.0, dt, x0, u);
}

TEST(Lqr, TreeStepDerivativesEqualCentralDifferencesOfTheStepMap) {
  struct Case {
    const char* name;
    std::shared_ptr<const tree::Model> model;
    double alpha;
    VectorXd x0;
  };
  VectorXd x_cp(4), x_ac(4);
  x_cp << 0.3, 2.5, -0.4, 1.7;
  x_ac << 0.9, -1.2, 2.0, -0.5;
  const Case cases[] = {
      {"cart-pole", cart_pole(), 0.5, x_cp},
      {"damped cart-pole, alpha 0.3", cart_pole(0.8), 0.3, x_cp},
      {"acrobot", std::make_shared<const tree::Model>(acrobot()), 0.5, x_ac},
  };
  for (const Case& c : cases) {
    Plant p = plant(c.model, c.alpha);
    ASSERT_TRUE(p.system->has_step_derivatives());
    const Nominal nominal = swinging(p, c.x0, 5, 0.02);
    const Linearization exact = linearize(*p.system, p.input.get(), nominal, Derivatives::Exact);
    const Linearization fd =
        linearize(*p.system, p.input.get(), nominal, Derivatives::Differences, 1e-5);
    EXPECT_TRUE(exact.exact);
    EXPECT_FALSE(fd.exact);
    for (int k = 0; k < nominal.steps(); ++k) {
      EXPECT_LT(relative(exact.A[k], fd.A[k]), 1e-6) << c.name << " A_" << k << "\n"
                                                    << exact.A[k] << "\n\n"
                                                    << fd.A[k];
      EXPECT_LT(relative(exact.B[k], fd.B[k]), 1e-6) << c.name << " B_" << k;
      // Not a trivial agreement: the step is far from the identity.
      EXPECT_GT((exact.A[k] - MatrixXd::Identity(4, 4)).cwiseAbs().maxCoeff(), 1e-2);
    }
  }
}

// The maximal VI's exact step derivatives against central differences of its step map. A
// maximal state off its joints is refused by set_state, so the directions checked are the
// ones a state can take: every body velocity entry, and each joint coordinate moved with
// the bodies it carries (the poses from maximal::state_from_joint_coordinates).
TEST(Lqr, MaximalStepDerivativesEqualCentralDifferencesAlongTheJoints) {
  // A chain, the closed five-bar leg, and a tractor with two trailers on its axles'
  // velocity constraints (docs/maximal.md, Nonholonomic constraints), driven at its hitches.
  for (const int kind : {0, 1, 2}) {
    const bool loop = kind == 1;
    maximal::Mechanism mech = kind == 0   ? maximal::pendulum_chain(3)
                              : kind == 1 ? maximal::minitaur_leg()
                                          : maximal::trailer_train(2, 0.3);
    if (kind == 2)
      for (maximal::BodyState& b : mech.state) b.v = Vec3(1.0, 0.0, 0.0);
    auto input = std::make_shared<sim::HeldInput>(2);
    sim::MaximalSetup setup;
    setup.model = std::make_shared<const maximal::Model>(mech.model);
    setup.state0 = mech.state;
    setup.step.newton.tolerance = 1e-13;
    setup.input_joints = kind == 2 ? std::vector<int>{1, 2} : std::vector<int>{0, 1};
    setup.controls = input;
    auto system = sim::make_maximal_system(setup);
    const double dt = 0.01;
    const std::vector<double> u0 = {0.3, -0.2};
    input->set(u0);
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(system->step(k * dt, dt).converged);  // moving
    ASSERT_TRUE(system->has_step_derivatives());
    const int nx = system->state_size(), nt = system->tangent_size();
    VectorXd x(nx), y(nx), d(nt), fd(nt);
    system->get_state({x.data(), std::size_t(nx)});
    MatrixXd A, B;
    system->set_state({x.data(), std::size_t(nx)});
    system->step_derivatives(0.0, dt, u0, A, B);
    // F(x), differenced in the chart of F(x): (F(x+) (-) F(x)) - (F(x-) (-) F(x)).
    auto F = [&](const VectorXd& start, const std::vector<double>& u) {
      system->set_state({start.data(), std::size_t(nx)});
      input->set(u);
      EXPECT_TRUE(system->step(0.0, dt).converged);
      VectorXd out(nx);
      system->get_state({out.data(), std::size_t(nx)});
      return out;
    };
    const VectorXd y0 = F(x, u0);
    auto chart_diff = [&](const VectorXd& a, const VectorXd& b) {
      VectorXd out(nt);
      system->state_difference({b.data(), std::size_t(nx)}, {a.data(), std::size_t(nx)},
                               {out.data(), std::size_t(nt)});
      return out;  // a (-) b
    };
    const double h = 1e-6;
    auto check = [&](const VectorXd& plus, const VectorXd& minus, const VectorXd& direction,
                     const MatrixXd& predicted_of, const std::string& what) {
      fd = (chart_diff(F(plus, u0), y0) - chart_diff(F(minus, u0), y0)) / (2.0 * h);
      const VectorXd exact = predicted_of * direction;
      EXPECT_LT((exact - fd).cwiseAbs().maxCoeff(), 1e-6 * std::max(1.0, fd.cwiseAbs().maxCoeff()))
          << (kind == 2 ? "train " : loop ? "leg " : "chain ") << what << "\nexact " << exact.transpose() << "\nfd    "
          << fd.transpose();
    };
    // Velocity entries: the state chart's own directions.
    for (int b = 0; b < mech.model.num_bodies(); ++b)
      for (int i = 6; i < 12; ++i) {
        VectorXd e = VectorXd::Zero(nt), plus(nx), minus(nx);
        e[12 * b + i] = h;
        system->state_integrate({x.data(), std::size_t(nx)}, {e.data(), std::size_t(nt)},
                                {plus.data(), std::size_t(nx)});
        e = -e;
        system->state_integrate({x.data(), std::size_t(nx)}, {e.data(), std::size_t(nt)},
                                {minus.data(), std::size_t(nx)});
        check(plus, minus, chart_diff(plus, minus) / (2.0 * h), A,
              "velocity entry " + std::to_string(12 * b + i));
      }
    // Joint coordinates, the velocities held (a tree joint moves the bodies beyond it).
    std::vector<maximal::BodyState> bodies(std::size_t(mech.model.num_bodies()));
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      const Eigen::Index c = Eigen::Index(13 * b);
      bodies[b].x = x.segment<3>(c);
      bodies[b].q.q = x.segment<4>(c + 3);
      bodies[b].v = x.segment<3>(c + 7);
      bodies[b].omega = x.segment<3>(c + 10);
    }
    const std::vector<maximal::JointCoords> q = maximal::current_joint_coordinates(mech.model, bodies);
    std::vector<maximal::JointCoords> zero = q;
    for (auto& z : zero) z.setZero();
    for (std::size_t j = 0; j < q.size() && !loop; ++j) {
      VectorXd plus = x, minus = x;
      for (const double sign : {1.0, -1.0}) {
        std::vector<maximal::JointCoords> moved = q;
        moved[j][0] += sign * h;
        const std::vector<maximal::BodyState> posed =
            maximal::state_from_joint_coordinates(mech.model, bodies, moved, zero, dt);
        VectorXd& out = sign > 0 ? plus : minus;
        for (std::size_t b = 0; b < posed.size(); ++b) {
          out.segment<3>(Eigen::Index(13 * b)) = posed[b].x;
          out.segment<4>(Eigen::Index(13 * b + 3)) = posed[b].q.q;
        }
      }
      check(plus, minus, chart_diff(plus, minus) / (2.0 * h), A,
            "joint " + std::to_string(j));
    }
    // Inputs.
    for (int i = 0; i < 2; ++i) {
      std::vector<double> up = u0, down = u0;
      up[std::size_t(i)] += h;
      down[std::size_t(i)] -= h;
      fd = (chart_diff(F(x, up), y0) - chart_diff(F(x, down), y0)) / (2.0 * h);
      EXPECT_LT((B.col(i) - fd).cwiseAbs().maxCoeff(), 1e-6 * std::max(1.0, fd.cwiseAbs().maxCoeff()))
          << (loop ? "leg" : "chain") << " input " << i;
    }
  }
}

TEST(Lqr, LinearizeRefusesWhatItCannotDo) {
  Plant p = plant(cart_pole());
  VectorXd x0 = VectorXd::Zero(4);
  const Nominal nominal = swinging(p, x0, 2, 0.02);
  EXPECT_THROW(linearize(*p.system, nullptr, nominal, Derivatives::Differences), InputError);
  Nominal wrong = nominal;
  wrong.x.conservativeResize(2, 4);
  EXPECT_THROW(linearize(*p.system, p.input.get(), wrong), InputError);
  EXPECT_THROW(rollout(*p.system, *p.input, 0.0, 0.02, x0, MatrixXd::Zero(3, 2)), InputError);
}

// The LQ problem from step k0 at dx_k0 = x0, solved densely: dx = Phi x0 + Gamma du, the
// cost quadratic in du. Returns du_k0.
VectorXd dense_first_input(const Linearization& lin, int k0, const MatrixXd& Q,
                           const MatrixXd& R, const MatrixXd& QN, const VectorXd& x0) {
  const int N = int(lin.A.size()) - k0;
  const Eigen::Index nx = Q.rows(), nu = R.rows();
  MatrixXd Phi = MatrixXd::Zero(nx * (N + 1), nx), Gamma = MatrixXd::Zero(nx * (N + 1), nu * N);
  Phi.topRows(nx).setIdentity();
  for (int k = 0; k < N; ++k) {
    const MatrixXd& A = lin.A[std::size_t(k0 + k)];
    const MatrixXd& B = lin.B[std::size_t(k0 + k)];
    Phi.middleRows((k + 1) * nx, nx) = A * Phi.middleRows(k * nx, nx);
    Gamma.middleRows((k + 1) * nx, nx) = A * Gamma.middleRows(k * nx, nx);
    Gamma.block((k + 1) * nx, k * nu, nx, nu) = B;
  }
  MatrixXd Qbar = MatrixXd::Zero(nx * (N + 1), nx * (N + 1)), Rbar = MatrixXd::Zero(nu * N, nu * N);
  for (int k = 0; k < N; ++k) {
    Qbar.block(k * nx, k * nx, nx, nx) = Q;
    Rbar.block(k * nu, k * nu, nu, nu) = R;
  }
  Qbar.bottomRightCorner(nx, nx) = QN;
  const MatrixXd H = Gamma.transpose() * Qbar * Gamma + Rbar;
  const VectorXd g = Gamma.transpose() * Qbar * Phi * x0;
  return (-H.ldlt().solve(g)).head(nu);
}

TEST(Lqr, RiccatiGainsEqualADenseSolveOfTheSameProblem) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  auto random = [&](Eigen::Index r, Eigen::Index c) {
    return MatrixXd(MatrixXd::NullaryExpr(r, c, [&] { return normal(rng); }));
  };
  const int N = 7, nx = 4, nu = 2;
  Linearization lin;
  for (int k = 0; k < N; ++k) {
    lin.A.push_back(MatrixXd::Identity(nx, nx) + 0.3 * random(nx, nx));
    lin.B.push_back(random(nx, nu));
  }
  const MatrixXd L = random(nx, nx), LN = random(nx, 2);
  const MatrixXd Q = L * L.transpose(), QN = LN * LN.transpose();  // QN only semidefinite
  const MatrixXd LR = random(nu, nu);
  const MatrixXd R = LR * LR.transpose() + 0.1 * MatrixXd::Identity(nu, nu);
  const Gains gains = tvlqr(lin, Q, R, QN);
  ASSERT_EQ(gains.K.size(), std::size_t(N));
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < nx; ++j) {
      const VectorXd e = VectorXd::Unit(nx, j);
      const VectorXd du = dense_first_input(lin, k, Q, R, QN, e);
      const VectorXd riccati = -gains.K[std::size_t(k)] * e;
      EXPECT_LT((du - riccati).cwiseAbs().maxCoeff() / std::max(1.0, du.cwiseAbs().maxCoeff()),
                1e-10)
          << "K_" << k << " column " << j;
    }
  EXPECT_THROW(tvlqr(lin, Q, -R, QN), InputError);
  EXPECT_THROW(tvlqr(lin, random(nx, nx), R, QN), InputError);
}

TEST(Lqr, DareIsTheLimitOfTheRiccatiRecursion) {
  // The cart-pole at its upright equilibrium, linearised exactly.
  Plant p = plant(cart_pole());
  VectorXd up(4);
  up << 0.0, kPi, 0.0, 0.0;
  const Nominal rest = rollout(*p.system, *p.input, 0.0, 0.01, up, MatrixXd::Zero(1, 1));
  const Linearization lin = linearize(*p.system, p.input.get(), rest);
  const MatrixXd& A = lin.A[0];
  const MatrixXd& B = lin.B[0];
  MatrixXd Q = MatrixXd::Identity(4, 4), R = 0.1 * MatrixXd::Identity(1, 1);
  Q(1, 1) = 10.0;
  const Dare d = dare(A, B, Q, R);
  const MatrixXd residual =
      Q + A.transpose() * d.S * A -
      A.transpose() * d.S * B * (R + B.transpose() * d.S * B).inverse() * B.transpose() * d.S * A -
      d.S;
  EXPECT_LT(residual.cwiseAbs().maxCoeff() / d.S.cwiseAbs().maxCoeff(), 1e-12);
  Linearization long_horizon;
  long_horizon.A.assign(4000, A);
  long_horizon.B.assign(4000, B);
  const Gains g = tvlqr(long_horizon, Q, R, Q);
  EXPECT_LT(relative(g.S[0], d.S), 1e-9);
  EXPECT_LT(relative(g.K[0], d.K), 1e-9);
  // The closed loop is stable: every eigenvalue of A - B K inside the unit circle.
  const Eigen::VectorXcd eig = (A - B * d.K).eigenvalues();
  EXPECT_LT(eig.cwiseAbs().maxCoeff(), 1.0);
  EXPECT_GT(eig.cwiseAbs().maxCoeff(), 0.5);  // but dt = 10 ms is not a dead-beat step
  // Unstabilisable: an unstable mode that B cannot reach.
  MatrixXd A_bad = MatrixXd::Identity(2, 2) * 1.5, B_bad(2, 1);
  B_bad << 1.0, 0.0;
  EXPECT_THROW(dare(A_bad, B_bad, MatrixXd::Identity(2, 2), MatrixXd::Identity(1, 1)),
               SolverError);
}

// The closed loop of a tracking controller on a fresh system from x0 (+) dx0.
sim::RunSummary closed_loop(const std::shared_ptr<const tree::Model>& model,
                            std::shared_ptr<Tracking> tracking, const VectorXd& x0,
                            sim::MemoryRecorder& rows) {
  sim::Feedback feedback(tracking, model->num_inputs(), {-15.0}, {15.0});
  sim::TreeSetup setup;
  setup.model = model;
  setup.midpoint.newton.tolerance = 1e-14;
  setup.q0 = setup.qd0 = VectorXd::Zero(model->num_coords());
  setup.controls = feedback.signal();
  auto system = sim::make_tree_system(setup);
  system->set_state({x0.data(), std::size_t(x0.size())});
  sim::RunOptions o;
  o.t0 = tracking->nominal().t0;
  o.dt = tracking->nominal().dt;
  o.steps = tracking->nominal().steps();
  o.feedback = &feedback;
  return sim::simulate(*system, o, rows);
}

TEST(Lqr, TrackingFollowsTheNominalWhereTheOpenLoopDriftsAway) {
  const auto model = cart_pole();
  Plant p = plant(model);
  VectorXd x0(4);
  x0 << 0.0, 2.6, 0.0, 0.0;  // 0.54 rad short of upright: the nominal swings through it
  const Nominal nominal = swinging(p, x0, 150, 0.02);
  const Linearization lin = linearize(*p.system, p.input.get(), nominal);
  MatrixXd Q = MatrixXd::Identity(4, 4);
  Q(1, 1) = 10.0;
  const Gains gains = tvlqr(lin, Q, 0.1 * MatrixXd::Identity(1, 1), 10.0 * Q);
  auto tracking = std::make_shared<Tracking>(p.system->state_chart(), nominal, gains.K);

  auto pole_error = [&](const sim::MemoryRecorder& rows) {
    const std::size_t cols = rows.layout.columns.size();
    double worst = 0.0;
    for (int k = 0; k <= nominal.steps(); ++k)
      worst = std::max(worst, std::abs(rows.values[std::size_t(k) * cols + 2] - nominal.x(k, 1)));
    return worst;
  };
  {
    sim::MemoryRecorder rows;
    ASSERT_TRUE(closed_loop(model, tracking, x0, rows).ok);
    EXPECT_LT(pole_error(rows), 1e-9);  // with no perturbation, the nominal itself
  }
  VectorXd x_off = x0;
  x_off[1] += 0.05;
  sim::MemoryRecorder tracked;
  ASSERT_TRUE(closed_loop(model, tracking, x_off, tracked).ok);
  const Nominal open = rollout(*p.system, *p.input, 0.0, 0.02, x_off, nominal.u);
  double open_error = 0.0;
  for (int k = 0; k <= nominal.steps(); ++k)
    open_error = std::max(open_error, std::abs(open.x(k, 1) - nominal.x(k, 1)));
  const std::size_t cols = tracked.layout.columns.size(), N = std::size_t(nominal.steps());
  const double tracked_final = std::abs(tracked.values[N * cols + 2] - nominal.x(long(N), 1));
  const double open_final = std::abs(open.x(long(N), 1) - nominal.x(long(N), 1));
  EXPECT_GT(open_error, 0.5);
  EXPECT_LE(pole_error(tracked), 0.05 + 1e-12);  // never farther than it started
  EXPECT_LT(tracked_final, 1e-2 * open_final) << tracked_final << " " << open_final;
}

TEST(Lqr, TrackingRefusesGainsOfTheWrongShape) {
  Plant p = plant(cart_pole());
  const Nominal nominal = swinging(p, VectorXd::Zero(4), 3, 0.02);
  EXPECT_THROW(Tracking(p.system->state_chart(), nominal, {MatrixXd::Zero(1, 4)}), InputError);
  EXPECT_THROW(Tracking(p.system->state_chart(), nominal,
                        std::vector<MatrixXd>(3, MatrixXd::Zero(2, 4))),
               InputError);
}

// The swing-ups of the acrobot (test_tree_ocp.cpp: 3 s, 60 steps, |tau| <= 20 N m) and of
// the cart-pole (examples/problems/cart_pole_swing_up.json: 2.5 s, 50 steps, |F| <= 15 N),
// least effort, upright at rest at the end: the same discrete problem for DMOC (Ipopt on
// the transcription) and iLQR (on the step map).
TreeOcpSpec cart_pole_swing_up() {
  TreeOcpSpec s;
  s.model = cart_pole();
  s.dt = 0.05;
  s.steps = 50;
  s.q0 = s.qd0 = VectorXd::Zero(2);
  s.q_final = VectorXd(2);
  s.q_final << 0.0, kPi;
  s.u_lower = VectorXd::Constant(1, -15.0);
  s.u_upper = VectorXd::Constant(1, 15.0);
  s.effort_weights = VectorXd::Ones(1);
  s.integrator.newton.tolerance = 1e-13;
  return s;
}

IlqrProblem ilqr_problem(const TreeOcpSpec& spec) {
  IlqrProblem p;
  p.dt = spec.dt;
  p.steps = spec.steps;
  p.x0 = VectorXd::Zero(4);
  p.x_goal = VectorXd::Zero(4);
  p.x_goal.head(2) = spec.q_final;
  p.terminal = {0, 1, 2, 3};
  p.R = spec.effort_weights.asDiagonal();
  p.u_lower = spec.u_lower;
  p.u_upper = spec.u_upper;
  return p;
}

MatrixXd dmoc_controls(const TreeOcp& ocp, const VectorXd& x) {
  Table states, controls;
  ocp.tables(x, states, controls);
  return controls.rows.rightCols(controls.rows.cols() - 1);
}

// DMOC's decision vector (q_k, p_k, u_k) of an iLQR run (q, qd per knot).
VectorXd dmoc_point(const TreeOcp& ocp, const TreeOcpSpec& spec, const IlqrResult& r) {
  VectorXd x(ocp.num_variables());
  ocp.initial_guess(x);
  tree::Data data(*spec.model);
  for (int k = 0; k <= spec.steps; ++k) {
    const VectorXd q = r.nominal.x.row(k).head(2).transpose(), qd = r.nominal.x.row(k).tail(2).transpose();
    tree::lagrangian_terms(*spec.model, data, q, qd, false);
    x.segment(ocp.q_offset(k), 2) = q;
    x.segment(ocp.p_offset(k), 2) = data.L_v;
    if (k < spec.steps) x.segment(ocp.u_offset(k), 1) = r.nominal.u.row(k).transpose();
  }
  return x;
}

// iLQR's optimum is one of the same problem for DMOC: Ipopt started there stays to 1e-6 of
// the cost, from either of iLQR's starts (DMOC's optimum, and rest). Started at DMOC's
// optimum, iLQR stays at its cost on the cart-pole; on the acrobot its first rounds leave
// it for a cheaper optimum nearby (docs/control.md). From rest both swing-ups converge.
TEST(Ilqr, ReachesOptimaOfTheProblemDmocSolves) {
  for (const char* name : {"cart-pole", "acrobot"}) {
    const bool acrobot = std::string(name) == "acrobot";
    const TreeOcpSpec spec = acrobot ? acrobot_swing_up({}, 0.05, 60, 20.0) : cart_pole_swing_up();
    TreeOcp ocp(spec);
    IpoptOptions options;
    options.print_level = 0;
    const NlpSolution dmoc = solve_with_ipopt(ocp, options);
    ASSERT_TRUE(dmoc.ok()) << name << ": " << dmoc.message;
    Plant p = plant(spec.model, 0.5, spec.integrator.newton.tolerance);
    const IlqrProblem problem = ilqr_problem(spec);
    // An iLQR optimum, checked: feasible, within bounds, and where Ipopt stays.
    auto check = [&](const IlqrResult& r, const char* start) {
      ASSERT_TRUE(r.converged) << name << " from " << start << ": " << r.message;
      EXPECT_LT(r.constraint_violation, 1e-8) << name << " from " << start;
      EXPECT_LE(r.nominal.u.cwiseAbs().maxCoeff(), spec.u_upper[0]);
      const NlpSolution back = solve_with_ipopt(ocp, options, dmoc_point(ocp, spec, r));
      ASSERT_TRUE(back.ok()) << name << " from " << start << ": " << back.message;
      EXPECT_LT(std::abs(r.cost - back.cost), 1e-6 * r.cost)
          << name << " from " << start << ": iLQR " << r.cost << ", DMOC from it " << back.cost;
      std::printf("%s, iLQR from %s: %.9g (%d iterations, %d rounds, %.3f s); DMOC from "
                  "there %.9g\n",
                  name, start, r.cost, r.iterations, r.rounds, r.solve_time_s, back.cost);
    };
    // Started at an optimum, a large first penalty keeps the augmented Lagrangian near it
    // while its multipliers build up.
    IlqrOptions warm;
    warm.penalty = 1e4;
    const IlqrResult from_dmoc =
        ilqr(*p.system, *p.input, problem, dmoc_controls(ocp, dmoc.x), warm);
    check(from_dmoc, "DMOC's optimum");
    if (!acrobot) {
      EXPECT_LT(std::abs(from_dmoc.cost - dmoc.cost), 1e-6 * dmoc.cost)
          << name << ": iLQR " << from_dmoc.cost << ", DMOC " << dmoc.cost;
    }
    check(ilqr(*p.system, *p.input, problem, MatrixXd::Zero(spec.steps, 1)), "rest");
    std::printf("%s, DMOC from its default guess: %.9g (%d iterations, %.3f s)\n", name,
                dmoc.cost, dmoc.iterations, dmoc.solve_time_s);
  }
}

TEST(Ilqr, FinalGainsAreTheTvlqrGainsOfItsRun) {
  // An unconstrained tracking problem (no bounds, no terminal constraint): at the optimum
  // the backward pass is the Riccati recursion of the run's linearisation with the cost's
  // Hessians, Q -> dt Q, R -> dt R.
  const auto model = cart_pole();
  Plant p = plant(model);
  IlqrProblem problem;
  problem.dt = 0.02;
  problem.steps = 40;
  problem.x0 = VectorXd::Zero(4);
  problem.x0[1] = 0.3;
  problem.x_goal = VectorXd::Zero(4);
  problem.x_goal[1] = 1.0;
  problem.Q = VectorXd::Constant(4, 1.0).asDiagonal();
  problem.R = MatrixXd::Constant(1, 1, 0.01);
  problem.Q_N = 50.0 * problem.Q;
  IlqrOptions exact;
  exact.regularization = 0.0;  // the gains of the final backward pass, unregularised
  const IlqrResult r = ilqr(*p.system, *p.input, problem, MatrixXd::Zero(40, 1), exact);
  ASSERT_TRUE(r.converged) << r.message;
  const Linearization lin = linearize(*p.system, p.input.get(), r.nominal);
  const Gains g = tvlqr(lin, problem.dt * problem.Q, problem.dt * problem.R, problem.Q_N);
  for (int k = 0; k < problem.steps; ++k)
    EXPECT_LT(relative(r.K[std::size_t(k)], g.K[std::size_t(k)]), 1e-6) << "K_" << k;
  // And the run is a minimum: the cost rises along random input perturbations.
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 5; ++trial) {
    MatrixXd du = MatrixXd::NullaryExpr(40, 1, [&] { return 1e-3 * normal(rng); });
    const Nominal moved = rollout(*p.system, *p.input, 0.0, 0.02, problem.x0, r.nominal.u + du);
    double cost = 0.0;
    for (int k = 0; k <= 40; ++k) {
      VectorXd dx = moved.x.row(k).transpose() - problem.x_goal;
      if (k < 40) cost += 0.02 * (dx.squaredNorm() + 0.01 * moved.u(k, 0) * moved.u(k, 0));
      else cost += 50.0 * dx.squaredNorm();
    }
    EXPECT_GT(cost, r.cost);
  }
}

TEST(Ilqr, KeepsInputsInTheirBoundsAndRefusesBadProblems) {
  const TreeOcpSpec spec = acrobot_swing_up({}, 0.05, 60, 20.0);
  Plant p = plant(spec.model, 0.5, spec.integrator.newton.tolerance);
  IlqrProblem problem = ilqr_problem(spec);
  problem.u_lower[0] = -6.0;
  problem.u_upper[0] = 6.0;
  problem.terminal.clear();
  problem.Q_N = 100.0 * MatrixXd::Identity(4, 4);
  const IlqrResult r = ilqr(*p.system, *p.input, problem, MatrixXd::Zero(60, 1));
  EXPECT_LE(r.nominal.u.cwiseAbs().maxCoeff(), 6.0);
  EXPECT_GT(r.nominal.u.cwiseAbs().maxCoeff(), 6.0 - 1e-9) << "the bound should be active";
  IlqrProblem bad = problem;
  bad.R = -bad.R;
  EXPECT_THROW(ilqr(*p.system, *p.input, bad, MatrixXd::Zero(60, 1)), InputError);
  bad = problem;
  bad.terminal = {7};
  EXPECT_THROW(ilqr(*p.system, *p.input, bad, MatrixXd::Zero(60, 1)), InputError);
  bad = problem;
  bad.u_lower[0] = 30.0;
  EXPECT_THROW(ilqr(*p.system, *p.input, bad, MatrixXd::Zero(60, 1)), InputError);
  EXPECT_THROW(ilqr(*p.system, *p.input, problem, MatrixXd::Zero(59, 1)), InputError);
}

}  // namespace
}  // namespace marsden::control
