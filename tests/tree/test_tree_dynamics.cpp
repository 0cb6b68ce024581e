// The tree engine against finite differences, against itself through independent
// formulations (the paper's recursion and the spatial one), and the midpoint integrator's
// structure: energy, momentum, constraints, order, step derivatives.
#include <cmath>

#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/midpoint.hpp"
#include "tree/tree_models.hpp"

namespace marsden::tree {
namespace {

using test::double_pendulum_model;
using test::peers_chain;
using test::peers_chain_q0;
using test::random_tree;

constexpr double kH = 1e-6;

VecX random_vector(std::mt19937& rng, int n, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  VecX v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

double rel_err(const MatX& a, const MatX& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / (1.0 + b.lpNorm<Eigen::Infinity>());
}

// A random tree with one constraint of each kind (for derivative checks; the constraints
// need not hold at the test point).
Model constrained_tree(unsigned seed) {
  ModelBuilder b;
  const Model base = random_tree(seed, 6, false);
  for (const Frame& f : base.frames()) {
    if (f.coord >= 0)
      b.add_joint_frame(f.name, f.parent, f.type, base.coords()[f.coord].name);
    else if (f.type == Transform::Const)
      b.add_const_frame(f.name, f.parent, f.constant);
    else
      b.add_fixed_frame(f.name, f.parent, f.type, f.value);
  }
  for (const Mass& m : base.masses()) b.add_mass(m.frame, m.mass, m.com, m.inertia);
  const int len = b.add_joint_frame("len_frame", kWorld, Transform::Tx, "len", true);
  b.add_distance_constraint("dist", b.frame_index("j1"), b.frame_index("j5"), 0.7);
  b.add_prescribed_distance_constraint("string", b.frame_index("j2"), len, b.coord_index("len"));
  b.add_point_on_plane_constraint("plane", b.frame_index("j3"), b.frame_index("j4"),
                                  Vec3(0.3, -0.5, 0.8));
  b.add_point_to_point_constraint("pin", b.frame_index("j5"), b.frame_index("c2"));
  return b.build();
}

// A planar three-link chain (y-z plane) whose tip hangs from a string to a puppeteer point
// moved by prescribed coordinates; the string length is a prescribed coordinate too.
Model string_chain() {
  ModelBuilder b;
  int parent = kWorld;
  for (int k = 0; k < 3; ++k) {
    const int j = b.add_joint_frame("link" + std::to_string(k), parent, Transform::Rx,
                                    "theta" + std::to_string(k));
    parent = b.add_fixed_frame("end" + std::to_string(k), j, Transform::Tz, -0.5);
    b.add_mass(parent, 0.4, Vec3::Zero(), 1e-3 * Mat3::Identity());
  }
  const int hy = b.add_joint_frame("hand_y", kWorld, Transform::Ty, "hand_y", true);
  const int hz = b.add_joint_frame("hand_z", hy, Transform::Tz, "hand_z", true);
  // The string length is a prescribed coordinate; its frame only carries it.
  b.add_joint_frame("len_frame", kWorld, Transform::Tx, "length", true);
  b.add_prescribed_distance_constraint("string", parent, hz, b.coord_index("length"));
  b.add_coordinate_damper(0, 0.05);
  return b.build();
}

// The string chain at rest-like angles with the prescribed coordinates consistent.
VecX string_chain_configuration(const Model& model, Data& data, double hand_y, double hand_z) {
  VecX q = VecX::Zero(model.num_coords());
  q[model.coord_index("theta0")] = 0.3;
  q[model.coord_index("theta1")] = -0.2;
  q[model.coord_index("theta2")] = 0.4;
  q[model.coord_index("hand_y")] = hand_y;
  q[model.coord_index("hand_z")] = hand_z;
  frame_kinematics(model, data, q, VecX::Zero(model.num_coords()), 0);
  const Vec3 tip = data.g_s[model.frame_index("end2")].x;
  q[model.coord_index("length")] = (tip - Vec3(0.0, hand_y, hand_z)).norm();
  return q;
}

// ---------------------------------------------------------------------------------------
// The paper's recursion, eqs. (1)-(11), against finite differences.

TEST(TreeKinematics, PoseAndBodyVelocityDerivativesMatchFiniteDifferences) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const Model model = random_tree(seed, 7, false);
    Data data(model), probe(model);
    std::mt19937 rng(seed + 10);
    const int n = model.num_coords();
    const VecX q = random_vector(rng, n, 1.0), qd = random_vector(rng, n, 1.0);
    frame_kinematics(model, data, q, qd, 2);
    for (int k = 0; k < model.num_frames(); ++k) {
      for (int i = 0; i < n; ++i) {
        VecX qp = q, qm = q, qdp = qd, qdm = qd;
        qp[i] += kH;
        qm[i] -= kH;
        qdp[i] += kH;
        qdm[i] -= kH;
        frame_kinematics(model, probe, qp, qd, 1);
        const Mat4 g_p = probe.g_s[k].matrix();
        const Vec6 v_p = probe.v_b[k];
        std::vector<Mat4> dg_p(n);
        std::vector<Vec6> dv_p(n), dvd_p(n);
        for (int j = 0; j < n; ++j) {
          dg_p[j] = frame_pose_dq(probe, k, j);
          dv_p[j] = body_velocity_dq(probe, k, j);
          dvd_p[j] = body_velocity_dqd(probe, k, j);
        }
        frame_kinematics(model, probe, qm, qd, 1);
        EXPECT_LT(rel_err(frame_pose_dq(data, k, i),
                          (g_p - probe.g_s[k].matrix()) / (2 * kH)), 1e-7);
        EXPECT_LT(rel_err(body_velocity_dq(data, k, i), (v_p - probe.v_b[k]) / (2 * kH)), 1e-7);
        for (int j = 0; j < n; ++j) {
          EXPECT_LT(rel_err(frame_pose_dqdq(data, k, j, i),
                            (dg_p[j] - frame_pose_dq(probe, k, j)) / (2 * kH)), 1e-6)
              << "frame " << k << " i " << i << " j " << j;
          EXPECT_LT(rel_err(body_velocity_dqdq(data, k, j, i),
                            (dv_p[j] - body_velocity_dq(probe, k, j)) / (2 * kH)), 1e-6);
          EXPECT_LT(rel_err(body_velocity_dqd_dq(data, k, j, i),
                            (dvd_p[j] - body_velocity_dqd(probe, k, j)) / (2 * kH)), 1e-6);
        }
        frame_kinematics(model, probe, q, qdp, 0);
        const Vec6 vd_p = probe.v_b[k];
        frame_kinematics(model, probe, q, qdm, 0);
        EXPECT_LT(rel_err(body_velocity_dqd(data, k, i), (vd_p - probe.v_b[k]) / (2 * kH)), 1e-7);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Lagrangian terms: three formulations agree, and each derivative matches differences.

TEST(TreeLagrangian, SpatialAndPaperRecursionsAgree) {
  for (unsigned seed : {4u, 5u, 6u}) {
    const Model model = random_tree(seed, 9, true);
    Data a(model), b(model), c(model);
    std::mt19937 rng(seed);
    const VecX q = random_vector(rng, model.num_coords(), 1.5);
    const VecX qd = random_vector(rng, model.num_coords(), 2.0);
    lagrangian_terms(model, a, q, qd, true, LagrangianAlgorithm::Spatial);
    lagrangian_terms(model, b, q, qd, true, LagrangianAlgorithm::PaperCached);
    lagrangian_terms(model, c, q, qd, true, LagrangianAlgorithm::PaperUncached);
    for (const Data* other : {&b, &c}) {
      EXPECT_NEAR(a.kinetic, other->kinetic, 1e-12 * (1 + std::abs(a.kinetic)));
      EXPECT_NEAR(a.potential, other->potential, 1e-12 * (1 + std::abs(a.potential)));
      EXPECT_LT(rel_err(a.L_q, other->L_q), 1e-12);
      EXPECT_LT(rel_err(a.L_v, other->L_v), 1e-12);
      EXPECT_LT(rel_err(a.L_qq, other->L_qq), 1e-12);
      EXPECT_LT(rel_err(a.L_qv, other->L_qv), 1e-12);
      EXPECT_LT(rel_err(a.M, other->M), 1e-12);
    }
  }
}

TEST(TreeLagrangian, DerivativesMatchFiniteDifferences) {
  for (unsigned seed : {7u, 8u}) {
    const Model model = random_tree(seed, 8, true);
    const int n = model.num_coords();
    Data data(model), probe(model);
    std::mt19937 rng(seed);
    const VecX q = random_vector(rng, n, 1.5), qd = random_vector(rng, n, 2.0);
    lagrangian_terms(model, data, q, qd, true);
    auto lag = [&](const VecX& qq, const VecX& vv) {
      lagrangian_terms(model, probe, qq, vv, false);
      return probe.kinetic - probe.potential;
    };
    for (int i = 0; i < n; ++i) {
      VecX qp = q, qm = q, vp = qd, vm = qd;
      qp[i] += kH;
      qm[i] -= kH;
      vp[i] += kH;
      vm[i] -= kH;
      EXPECT_NEAR(data.L_q[i], (lag(qp, qd) - lag(qm, qd)) / (2 * kH), 1e-6 * (1 + std::abs(data.L_q[i])));
      EXPECT_NEAR(data.L_v[i], (lag(q, vp) - lag(q, vm)) / (2 * kH), 1e-6 * (1 + std::abs(data.L_v[i])));
      lagrangian_terms(model, probe, qp, qd, false);
      VecX Lq_p = probe.L_q, Lv_p = probe.L_v;
      lagrangian_terms(model, probe, qm, qd, false);
      // Column i of L_qq; row i of L_qv is d(L_v)/dq_i.
      EXPECT_LT(rel_err(data.L_qq.col(i), (Lq_p - probe.L_q) / (2 * kH)), 1e-6);
      EXPECT_LT(rel_err(data.L_qv.row(i).transpose(), (Lv_p - probe.L_v) / (2 * kH)), 1e-6);
      lagrangian_terms(model, probe, q, vp, false);
      Lv_p = probe.L_v;
      lagrangian_terms(model, probe, q, vm, false);
      EXPECT_LT(rel_err(data.M.col(i), (Lv_p - probe.L_v) / (2 * kH)), 1e-6);
    }
  }
}

TEST(TreeForces, DerivativesMatchFiniteDifferences) {
  const Model model = random_tree(9, 8, true);
  const int n = model.num_coords(), nu = model.num_inputs();
  Data data(model), probe(model);
  std::mt19937 rng(9);
  const VecX q = random_vector(rng, n, 1.5), qd = random_vector(rng, n, 2.0);
  const VecX u = random_vector(rng, nu, 3.0);
  generalized_forces(model, data, q, qd, u, true);
  EXPECT_GT(data.Q.norm(), 0.0);
  for (int i = 0; i < n; ++i) {
    VecX p = q, m = q;
    p[i] += kH;
    m[i] -= kH;
    generalized_forces(model, probe, p, qd, u, false);
    const VecX Qp = probe.Q;
    generalized_forces(model, probe, m, qd, u, false);
    EXPECT_LT(rel_err(data.Q_q.col(i), (Qp - probe.Q) / (2 * kH)), 1e-6) << "q " << i;
    p = qd;
    m = qd;
    p[i] += kH;
    m[i] -= kH;
    generalized_forces(model, probe, q, p, u, false);
    const VecX Qvp = probe.Q;
    generalized_forces(model, probe, q, m, u, false);
    EXPECT_LT(rel_err(data.Q_v.col(i), (Qvp - probe.Q) / (2 * kH)), 1e-6) << "qd " << i;
  }
  for (int k = 0; k < nu; ++k) {
    VecX p = u, m = u;
    p[k] += kH;
    m[k] -= kH;
    generalized_forces(model, probe, q, qd, p, false);
    const VecX Qp = probe.Q;
    generalized_forces(model, probe, q, qd, m, false);
    EXPECT_LT(rel_err(data.Q_u.col(k), (Qp - probe.Q) / (2 * kH)), 1e-6) << "u " << k;
  }
}

TEST(TreeConstraints, JacobianAndWeightedHessianMatchFiniteDifferences) {
  for (unsigned seed : {11u, 12u}) {
    const Model model = constrained_tree(seed);
    const int n = model.num_coords(), m = model.num_constraint_rows();
    ASSERT_EQ(m, 6);
    Data data(model), probe(model);
    std::mt19937 rng(seed);
    const VecX q = random_vector(rng, n, 1.5), w = random_vector(rng, m, 1.0);
    constraint_terms(model, data, q, &w);
    for (int i = 0; i < n; ++i) {
      VecX p = q, mm = q;
      p[i] += kH;
      mm[i] -= kH;
      constraint_terms(model, probe, p, nullptr);
      const VecX h_p = probe.h;
      const VecX g_p = probe.Dh.transpose() * w;
      constraint_terms(model, probe, mm, nullptr);
      EXPECT_LT(rel_err(data.Dh.col(i), (h_p - probe.h) / (2 * kH)), 1e-7);
      EXPECT_LT(rel_err(data.h_qq_w.col(i), (g_p - probe.Dh.transpose() * w) / (2 * kH)), 1e-6);
    }
  }
}

// The continuous dynamics satisfy the Euler-Lagrange equations with constraint forces:
// d/dt dL/dqd - dL/dq = Q + Dh^T lambda, the time derivative taken by differences along
// (q + qd t, qd + qdd t); and Dh qdd + d/dt(Dh) qd = 0.
TEST(TreeContinuous, AccelerationSatisfiesEulerLagrangeAndConstraints) {
  const Model model = string_chain();
  const int n = model.num_coords();
  Data data(model), probe(model);
  VecX q = string_chain_configuration(model, data, 0.1, 0.8);
  std::mt19937 rng(3);
  VecX qd = random_vector(rng, n, 1.0);
  const VecX qdd_prescribed = random_vector(rng, model.num_prescribed(), 1.0);
  const Acceleration acc = continuous_dynamics(model, data, q, qd, VecX(), qdd_prescribed);
  lagrangian_terms(model, probe, q, qd, false);
  const VecX Lq = probe.L_q;
  generalized_forces(model, probe, q, qd, VecX(), false);
  const VecX Qf = probe.Q;
  constraint_terms(model, probe, q, nullptr);
  const VecX forces = Lq + Qf + probe.Dh.transpose() * acc.lambda;
  const double dt = 1e-6;
  lagrangian_terms(model, probe, q + dt * qd, qd + dt * acc.qdd, false);
  const VecX Lv_p = probe.L_v;
  lagrangian_terms(model, probe, q - dt * qd, qd - dt * acc.qdd, false);
  const VecX ddt_Lv = (Lv_p - probe.L_v) / (2 * dt);
  for (int i : model.dynamic_coords()) EXPECT_NEAR(ddt_Lv[i], forces[i], 1e-6);
  constraint_terms(model, probe, q + dt * qd + 0.5 * dt * dt * acc.qdd, nullptr);
  const double h_p = probe.h[0];
  constraint_terms(model, probe, q, nullptr);
  const double h_0 = probe.h[0];
  constraint_terms(model, probe, q - dt * qd + 0.5 * dt * dt * acc.qdd, nullptr);
  // Second difference of h along the trajectory: h'' = Dh qdd + qd^T d2h qd.
  EXPECT_NEAR((h_p - 2 * h_0 + probe.h[0]) / (dt * dt), 0.0, 1e-3);
}

// ---------------------------------------------------------------------------------------
// The midpoint integrator.

TEST(TreeMidpoint, StepDerivativesMatchFiniteDifferencesOfTheStep) {
  struct Case {
    Model model;
    VecX q0, qd0, u, q_prescribed;
  };
  std::vector<Case> cases;
  {
    Model m = random_tree(21, 6, true);
    std::mt19937 rng(21);
    const int n = m.num_coords();
    VecX q0 = random_vector(rng, n, 0.5), qd0 = random_vector(rng, n, 0.5);
    VecX u = random_vector(rng, m.num_inputs(), 1.0);
    cases.push_back({std::move(m), q0, qd0, u, VecX()});
  }
  {
    Model m = string_chain();
    Data d(m);
    VecX q0 = string_chain_configuration(m, d, 0.1, 0.9);
    VecX qd0 = VecX::Zero(m.num_coords());
    VecX q_prescribed(3);
    q_prescribed << 0.12, 0.91, q0[m.coord_index("length")] + 0.01;
    cases.push_back({std::move(m), q0, qd0, VecX(), q_prescribed});
  }
  for (Case& c : cases) {
    const Model& model = c.model;
    Data data(model);
    MidpointOptions opt;
    opt.newton.tolerance = 1e-13;
    const double dt = 0.01;
    const TreeState x0 = midpoint_initial_state(model, data, 0.0, c.q0, c.qd0);
    TreeState x1;
    ASSERT_TRUE(midpoint_step(model, data, opt, dt, x0, c.u, c.q_prescribed, x1).converged);
    StepDerivatives D;
    midpoint_step_derivatives(model, data, opt, dt, x0, c.u, c.q_prescribed, x1, D);
    const auto& dyn = model.dynamic_coords();
    auto step = [&](const TreeState& x, const VecX& u, const VecX& k) {
      Data fresh(model);
      TreeState out;
      EXPECT_TRUE(midpoint_step(model, fresh, opt, dt, x, u, k, out).converged);
      VecX y(2 * model.num_dynamic());
      for (int a = 0; a < model.num_dynamic(); ++a) y[a] = out.q[dyn[a]];
      y.tail(model.num_dynamic()) = out.p;
      return y;
    };
    const double h = 1e-6;
    const int nd = model.num_dynamic();
    auto check = [&](const MatX& dq, const MatX& dp, int col, const VecX& fd, const char* what) {
      EXPECT_LT(rel_err(dq.col(col), fd.head(nd)), 1e-5) << what << " column " << col;
      EXPECT_LT(rel_err(dp.col(col), fd.tail(nd)), 1e-5) << what << " column " << col;
    };
    for (int j = 0; j < model.num_coords(); ++j) {
      TreeState xp = x0, xm = x0;
      xp.q[j] += h;
      xm.q[j] -= h;
      check(D.dq_dq, D.dp_dq, j,
            (step(xp, c.u, c.q_prescribed) - step(xm, c.u, c.q_prescribed)) / (2 * h), "q_k");
    }
    for (int j = 0; j < nd; ++j) {
      TreeState xp = x0, xm = x0;
      xp.p[j] += h;
      xm.p[j] -= h;
      check(D.dq_dp, D.dp_dp, j,
            (step(xp, c.u, c.q_prescribed) - step(xm, c.u, c.q_prescribed)) / (2 * h), "p_k");
    }
    for (int j = 0; j < model.num_inputs(); ++j) {
      VecX up = c.u, um = c.u;
      up[j] += h;
      um[j] -= h;
      check(D.dq_du, D.dp_du, j,
            (step(x0, up, c.q_prescribed) - step(x0, um, c.q_prescribed)) / (2 * h), "u");
    }
    for (int j = 0; j < model.num_prescribed(); ++j) {
      VecX kp = c.q_prescribed, km = c.q_prescribed;
      kp[j] += h;
      km[j] -= h;
      check(D.dq_dk, D.dp_dk, j, (step(x0, c.u, kp) - step(x0, c.u, km)) / (2 * h), "prescribed");
    }
  }
}

TEST(TreeMidpoint, DoublePendulumEnergyStaysBoundedOverLongRuns) {
  const Model model = double_pendulum_model();
  Data data(model);
  VecX q0(2), qd0(2);
  q0 << 1.2, -0.4;
  qd0 << 0.0, 0.0;
  const double E0 = energy(model, data, q0, qd0);
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, qd0), next;
  const MidpointOptions opt;
  const double dt = 0.01;
  double max_dev = 0.0, max_dev_late = 0.0;
  const int steps = 100000;  // 1000 s, about 400 periods
  for (int k = 0; k < steps; ++k) {
    ASSERT_TRUE(midpoint_step(model, data, opt, dt, x, VecX(), VecX(), next).converged) << k;
    x = next;
    if (k % 10 != 0) continue;
    const VecX v = data.v_m;  // the step's velocity, a second-order estimate at t_k+1/2
    const double dev = std::abs(energy(model, data, data.q_m, v) - E0);
    max_dev = std::max(max_dev, dev);
    if (k > steps / 2) max_dev_late = std::max(max_dev_late, dev);
  }
  // No drift: the late error is no larger than the early one, and small.
  EXPECT_LT(max_dev, 5e-3 * std::abs(E0));
  EXPECT_LE(max_dev_late, 1.5 * max_dev);
}

TEST(TreeMidpoint, MomentumOfACyclicCoordinateIsConserved) {
  // The cyclic yaw's discrete momentum is exactly conserved (discrete Noether theorem).
  const test::CyclicTree tree = test::cyclic_yaw_tree();
  const Model& model = tree.model;
  const VecX &q0 = tree.q0, &qd0 = tree.qd0;
  Data data(model);
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, qd0), next;
  const double p0 = x.p[0];
  MidpointOptions opt;
  double max_drift = 0.0, residual_sum = 0.0;
  for (int k = 0; k < 5000; ++k) {
    const NewtonStatus s = midpoint_step(model, data, opt, 0.01, x, VecX(), VecX(), next);
    ASSERT_TRUE(s.converged);
    x = next;
    residual_sum += s.residual_norm;
    max_drift = std::max(max_drift, std::abs(x.p[0] - p0));
  }
  // The cyclic row of the residual is p_k - p_kp1 exactly, so the momentum moves only by
  // what each Newton solve leaves (plus rounding).
  EXPECT_LE(max_drift, residual_sum + 1e-12);
  EXPECT_GT(std::abs(x.p[1] - midpoint_initial_state(model, data, 0.0, q0, qd0).p[1]), 1e-3);
}

TEST(TreeMidpoint, ConstraintsHoldEveryStepWithoutDrift) {
  const Model model = string_chain();
  Data data(model);
  // The puppeteer's hand beside the chain, well inside its reach (a string pulled to the
  // chain's full extension would be a singular configuration).
  VecX q0 = string_chain_configuration(model, data, 0.8, -0.3);
  const double length = q0[model.coord_index("length")];
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(model.num_coords())), next;
  const MidpointOptions opt;
  const double dt = 0.005;
  double max_h = 0.0;
  for (int k = 1; k <= 4000; ++k) {
    const double t = k * dt;
    VecX q_prescribed(3);
    q_prescribed << 0.8 + 0.3 * std::sin(1.3 * t), -0.3 + 0.1 * std::sin(2.1 * t),
        length + 0.05 * std::sin(0.7 * t);
    ASSERT_TRUE(midpoint_step(model, data, opt, dt, x, VecX(), q_prescribed, next).converged) << k;
    x = next;
    constraint_terms(model, data, x.q, nullptr);
    max_h = std::max(max_h, data.h.lpNorm<Eigen::Infinity>());
  }
  EXPECT_LT(max_h, 1e-10);
}

// Global error at t = 1 s against RK4 with tiny steps on the continuous dynamics, eq. (14):
// order 2 at alpha = 1/2, order 1 otherwise.
double observed_order(double alpha) {
  const Model model = double_pendulum_model(0.2);
  Data data(model);
  VecX q0(2), qd0(2);
  q0 << 1.0, 0.5;
  qd0 << 0.3, -0.2;
  auto f = [&](const VecX& y) {
    VecX dy(4);
    dy.head(2) = y.tail(2);
    dy.tail(2) = continuous_dynamics(model, data, y.head(2), y.tail(2), VecX(), VecX()).qdd;
    return dy;
  };
  VecX y(4);
  y << q0, qd0;
  const double T = 1.0, dt_ref = 1e-4;
  for (int k = 0; k < int(std::lround(T / dt_ref)); ++k) {
    const VecX k1 = f(y), k2 = f(y + 0.5 * dt_ref * k1), k3 = f(y + 0.5 * dt_ref * k2),
               k4 = f(y + dt_ref * k3);
    y += dt_ref / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  MidpointOptions opt;
  opt.alpha = alpha;
  opt.newton.tolerance = 1e-13;
  std::vector<double> errors;
  for (double dt : {0.02, 0.01, 0.005}) {
    TreeState x = midpoint_initial_state(model, data, 0.0, q0, qd0), next;
    for (int k = 0; k < int(std::lround(T / dt)); ++k) {
      EXPECT_TRUE(midpoint_step(model, data, opt, dt, x, VecX(), VecX(), next).converged);
      x = next;
    }
    errors.push_back((x.q - y.head(2)).norm());
  }
  return std::log2(errors[1] / errors[2]);
}

TEST(TreeMidpoint, ObservedOrderIsTwoAtTheMidpointAndOneElsewhere) {
  EXPECT_NEAR(observed_order(0.5), 2.0, 0.15);
  EXPECT_NEAR(observed_order(0.25), 1.0, 0.2);
}

TEST(TreeMidpoint, PaperAlgorithmsGiveTheSameTrajectory) {
  const Model model = random_tree(31, 5, false);
  std::mt19937 rng(31);
  const VecX q0 = random_vector(rng, model.num_coords(), 0.5);
  const VecX qd0 = random_vector(rng, model.num_coords(), 0.5);
  std::vector<VecX> finals;
  for (LagrangianAlgorithm alg : {LagrangianAlgorithm::Spatial, LagrangianAlgorithm::PaperCached,
                                  LagrangianAlgorithm::PaperUncached}) {
    Data data(model);
    MidpointOptions opt;
    opt.algorithm = alg;
    TreeState x = midpoint_initial_state(model, data, 0.0, q0, qd0), next;
    for (int k = 0; k < 50; ++k) {
      ASSERT_TRUE(midpoint_step(model, data, opt, 0.01, x, VecX(), VecX(), next).converged);
      x = next;
    }
    finals.push_back(x.q);
  }
  EXPECT_LT((finals[0] - finals[1]).norm(), 1e-9);
  EXPECT_LT((finals[0] - finals[2]).norm(), 1e-9);
}

// The articulated-body solve against a dense solve with the mass matrix of the recursions,
// on branched trees of translations and rotations, with some coordinates held.
TEST(TreeMassMatrix, ArticulatedSolveEqualsDenseSolve) {
  for (const unsigned seed : {3u, 17u}) {
    const Model model = random_tree(seed, 9, false);
    std::mt19937 rng(seed);
    const int n = model.num_coords();
    const VecX q = random_vector(rng, n, 1.0), b = random_vector(rng, n, 1.0);
    VecX d = random_vector(rng, n, 1.0).cwiseAbs();
    Data data(model);
    VecX x;
    solve_mass_matrix(model, data, q, d, b, x);
    lagrangian_terms(model, data, q, VecX::Zero(n), true);
    const MatX A = data.M + MatX(d.asDiagonal());
    EXPECT_LT((A.lu().solve(b) - x).norm(), 1e-10 * x.norm());
  }
  // Held coordinates: the marionette's strings are prescribed.
  const Model puppet = marionette();
  Data data(puppet);
  const int n = puppet.num_coords();
  std::mt19937 rng(5);
  const VecX q = marionette_configuration(puppet, random_vector(rng, n, 0.3));
  const VecX b = random_vector(rng, n, 1.0), d = VecX::Zero(n);
  VecX x;
  solve_mass_matrix(puppet, data, q, d, b, x);
  lagrangian_terms(puppet, data, q, VecX::Zero(n), true);
  const auto& dyn = puppet.dynamic_coords();
  const int nd = puppet.num_dynamic();
  MatX M_dd(nd, nd);
  VecX b_d(nd), x_d(nd);
  for (int a = 0; a < nd; ++a) {
    b_d[a] = b[dyn[a]];
    x_d[a] = x[dyn[a]];
    for (int c = 0; c < nd; ++c) M_dd(a, c) = data.M(dyn[a], dyn[c]);
  }
  EXPECT_LT((M_dd.lu().solve(b_d) - x_d).norm(), 1e-10 * x_d.norm());
  for (const int k : puppet.prescribed_coords()) EXPECT_EQ(x[k], 0.0);
}

// The simplified Newton of the articulated-body matrix and the exact Newton solve the same
// step equations to the same tolerance: one trajectory, on a chain and on branched trees
// with springs, dampers and inputs; and few iterations (a broken factorisation would fall
// back to the exact Jacobian after max_iterations).
TEST(TreeMidpoint, ArticulatedAndExactNewtonGiveTheSameTrajectory) {
  std::vector<Model> models;
  models.push_back(n_link_pendulum(12));
  models.push_back(random_tree(41, 7, true));
  for (const Model& model : models) {
    std::mt19937 rng(41);
    const int n = model.num_coords();
    const VecX q0 = random_vector(rng, n, 0.5), qd0 = random_vector(rng, n, 1.0);
    const VecX u = random_vector(rng, model.num_inputs(), 0.5);
    std::vector<VecX> finals;
    for (const bool articulated : {true, false}) {
      Data data(model);
      MidpointOptions opt;
      opt.articulated_newton_from = articulated ? 0 : 1 << 30;
      TreeState x = midpoint_initial_state(model, data, 0.0, q0, qd0), next;
      int iterations = 0;
      for (int k = 0; k < 100; ++k) {
        const NewtonStatus status = midpoint_step(model, data, opt, 0.01, x, u, VecX(), next);
        ASSERT_TRUE(status.converged);
        iterations += status.iterations;
        x = next;
      }
      if (articulated) {
        EXPECT_LE(iterations, 100 * 8);
      }
      finals.push_back(x.q);
    }
    EXPECT_LT((finals[0] - finals[1]).norm(), 1e-8);
  }
}

// On a long chain the raw articulated-body steps contract by about 10x per iteration at
// first, more slowly near the solution. On the momentum balance's tolerance alone (1e-10
// (1 + |p_k|), |p_k| up to 3e4) the secant correction of the later steps brought 4.0
// iterations per step from the 10th to the 50th here to 3.1, and the trajectory ended 5e-7
// from the exact Newton's; with the distance to the step's solution bounded by 1e-10 too,
// it takes 6.6, and the trajectories agree to 1.1e-9, within the 50 steps' sum of about
// 2e-10 each (the tolerance relative to 1 + |q|).
TEST(TreeMidpoint, SecantCorrectedArticulatedNewtonOnALongChain) {
  const Model model = peers_chain(200);
  const VecX q0 = peers_chain_q0(200);
  std::vector<VecX> finals;
  for (const bool articulated : {true, false}) {
    Data data(model);
    MidpointOptions opt;
    opt.articulated_newton_from = articulated ? 0 : 1 << 30;
    TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(200)), next;
    int later_iterations = 0;
    for (int k = 0; k < 50; ++k) {
      const NewtonStatus status = midpoint_step(model, data, opt, 0.01, x, VecX(), VecX(), next);
      ASSERT_TRUE(status.converged);
      if (k >= 10) later_iterations += status.iterations;
      x = next;
    }
    if (articulated) {
      EXPECT_LE(later_iterations, 40 * 7);
    }
    finals.push_back(x.q);
  }
  EXPECT_LT((finals[0] - finals[1]).lpNorm<Eigen::Infinity>(), 50 * 2e-10);
}

// The tolerance bounds each step's distance to its exact solution whichever Newton runs:
// from every state of a 30-link chain's 10 s, the articulated-body Newton's q_k+1 is
// within the tolerance (relative to 1 + |q_k+1|) of a solve at 1e-14, up to the accuracy
// of the distance's estimate from the last step and contraction (at most 1.03 times it
// measured). On the residual alone the linear iteration stopped up to 5e-9 away, 50 times
// the tolerance; now the articulated and the exact Newton's trajectories end equally near
// the exact one.
TEST(TreeMidpoint, ToleranceBoundsTheArticulatedStepsDistance) {
  const Model model = peers_chain(30);
  const VecX q0 = peers_chain_q0(30);
  MidpointOptions articulated, exact, tight;
  articulated.articulated_newton_from = 0;
  exact.articulated_newton_from = tight.articulated_newton_from = 1 << 30;
  tight.newton.tolerance = 1e-14;
  Data data(model), data_exact(model), data_tight(model);
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(30)), x_exact = x, next,
            reference;
  double worst = 0.0;
  for (int k = 0; k < 1000; ++k) {
    ASSERT_TRUE(midpoint_step(model, data, articulated, 0.01, x, VecX(), VecX(), next).converged);
    ASSERT_TRUE(midpoint_step(model, data_tight, tight, 0.01, x, VecX(), VecX(), reference).converged);
    worst = std::max(worst, (next.q - reference.q).lpNorm<Eigen::Infinity>() /
                                (1e-10 * (1.0 + next.q.lpNorm<Eigen::Infinity>())));
    x = next;
    ASSERT_TRUE(midpoint_step(model, data_exact, exact, 0.01, x_exact, VecX(), VecX(), next).converged);
    x_exact = next;
  }
  EXPECT_LE(worst, 2.0);
  // The exact discrete trajectory, solved at 1e-14 from the start.
  Data data_ref(model);
  TreeState x_ref = midpoint_initial_state(model, data_ref, 0.0, q0, VecX::Zero(30));
  for (int k = 0; k < 1000; ++k) {
    ASSERT_TRUE(midpoint_step(model, data_ref, tight, 0.01, x_ref, VecX(), VecX(), next).converged);
    x_ref = next;
  }
  const double end_articulated = (x.q - x_ref.q).lpNorm<Eigen::Infinity>();
  const double end_exact = (x_exact.q - x_ref.q).lpNorm<Eigen::Infinity>();
  EXPECT_LT(end_articulated, 2.0 * end_exact) << end_articulated << " vs " << end_exact;
}

// From rest the momentum balance is the forces' impulse (a 200-link chain: gravity
// ~2e3 N m s); a tolerance relative to it is met as on any later step, in a few iterations,
// by both Newton directions, and the step agrees with a tiny-tolerance solve to well within
// the nominal tolerance times that scale.
TEST(TreeMidpoint, FirstStepFromRestConvergesRelativeToTheImpulse) {
  const Model model = peers_chain(200);
  const VecX q0 = peers_chain_q0(200);
  for (const bool articulated : {true, false}) {
    MidpointOptions opt;
    opt.articulated_newton_from = articulated ? 0 : 1 << 30;
    Data data(model);
    const TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(200));
    TreeState next, reference;
    const NewtonStatus status = midpoint_step(model, data, opt, 0.01, x, VecX(), VecX(), next);
    ASSERT_TRUE(status.converged);
    EXPECT_LE(status.iterations, 6) << (articulated ? "articulated" : "exact");
    MidpointOptions tight;
    tight.articulated_newton_from = 1 << 30;
    tight.newton.tolerance = 1e-15;
    tight.newton.max_iterations = 50;
    Data data_ref(model);
    midpoint_step(model, data_ref, tight, 0.01, x, VecX(), VecX(), reference);
    EXPECT_LT((next.p - reference.p).lpNorm<Eigen::Infinity>(), 1e-10 * 2e3 * 10);
  }
}

// A tight tolerance at a small step: M (q_k+1 - q_k) / dt puts the momentum balance's
// round-off (3e-12 on a 10-link chain at dt = 1 ms) above 1e-12 (1 + scale), where Newton
// used to fail the first step. It converges now, to the steps of the default tolerance
// within that tolerance's reach.
TEST(TreeMidpoint, TightToleranceAtASmallStepConverges) {
  const Model model = peers_chain(10);
  const VecX q0 = peers_chain_q0(10);
  std::vector<VecX> finals;
  for (const double tolerance : {1e-12, 1e-10}) {
    MidpointOptions opt;
    opt.newton.tolerance = tolerance;
    Data data(model);
    TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(10)), next;
    for (int k = 0; k < 200; ++k) {
      ASSERT_TRUE(midpoint_step(model, data, opt, 0.001, x, VecX(), VecX(), next).converged)
          << "tolerance " << tolerance << ", step " << k;
      x = next;
    }
    finals.push_back(x.q);
  }
  EXPECT_LT((finals[0] - finals[1]).lpNorm<Eigen::Infinity>(), 200 * 1e-10 * 2.0);
}

TEST(TreeMidpoint, BadInputIsReported) {
  const Model model = double_pendulum_model();
  Data data(model);
  const TreeState x = midpoint_initial_state(model, data, 0.0, VecX::Zero(2), VecX::Zero(2));
  TreeState next;
  const MidpointOptions opt;
  EXPECT_THROW(midpoint_step(model, data, opt, 0.0, x, VecX(), VecX(), next), InputError);
  EXPECT_THROW(midpoint_step(model, data, opt, -0.1, x, VecX(), VecX(), next), InputError);
  TreeState bad = x;
  bad.q[0] = std::nan("");
  EXPECT_THROW(midpoint_step(model, data, opt, 0.01, bad, VecX(), VecX(), next), InputError);
  EXPECT_THROW(midpoint_step(model, data, opt, 0.01, x, VecX::Zero(1), VecX(), next), InputError);
  EXPECT_THROW(midpoint_initial_state(model, data, 0.0, VecX::Zero(3), VecX::Zero(2)), InputError);
}

TEST(TreeModel, BuilderRejectsBadInput) {
  ModelBuilder b;
  const int j = b.add_joint_frame("j", kWorld, Transform::Rx, "q");
  EXPECT_THROW(b.add_joint_frame("j", kWorld, Transform::Rx, "q2"), InputError);
  EXPECT_THROW(b.add_joint_frame("k", kWorld, Transform::Rx, "q"), InputError);
  EXPECT_THROW(b.add_joint_frame("k", 7, Transform::Rx, "q3"), InputError);
  EXPECT_THROW(b.add_joint_frame("k", kWorld, Transform::Const, "q3"), InputError);
  EXPECT_THROW(b.add_mass(j, 0.0, Vec3::Zero(), Mat3::Zero()), InputError);
  EXPECT_THROW(b.add_mass(j, -1.0, Vec3::Zero(), Mat3::Identity()), InputError);
  EXPECT_THROW(b.add_mass(j, 1.0, Vec3::Zero(), -Mat3::Identity()), InputError);
  EXPECT_THROW(b.add_mass(j, std::nan(""), Vec3::Zero(), Mat3::Identity()), InputError);
  Mat3 asym = Mat3::Identity();
  asym(0, 1) = 0.5;
  EXPECT_THROW(b.add_mass(j, 1.0, Vec3::Zero(), asym), InputError);
  EXPECT_THROW(b.add_fixed_frame("f", j, Transform::Tx, std::nan("")), InputError);
  SE3 skew;
  skew.R(0, 0) = 2.0;
  EXPECT_THROW(b.add_const_frame("c", j, skew), InputError);
  EXPECT_THROW(b.add_distance_constraint("d", j, j, -1.0), InputError);
  EXPECT_THROW(b.add_coordinate_damper(0, -1.0), InputError);
  EXPECT_THROW(b.add_point_on_plane_constraint("p", j, j, Vec3::Zero()), InputError);
  try {
    b.frame_index("nope");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
}

}  // namespace
}  // namespace marsden::tree
