// Nonholonomic (velocity) constraints in the maximal engine (docs/maximal.md, Nonholonomic
// constraints): the rows against the velocity of the material point they constrain, their
// derivatives against central differences, and the sleigh and rolling disk against the
// nonholonomic engine's reduced model and a closed form.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/geometry/shapes.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/maximal/velocity.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/nonholonomic/model.hpp"

namespace marsden::maximal {
namespace {

Mat3 random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return Quat::exp(Vec3(n(rng), n(rng), n(rng))).matrix();
}

Vec6 random_velocity(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec6 w;
  for (int i = 0; i < 6; ++i) w[i] = n(rng);
  return w;
}

VelocityConstraint wheel() {
  VelocityConstraint c;
  c.type = VelocityConstraintType::RollingWheel;
  c.point = Vec3(0.1, -0.2, 0.05);
  c.axis = Vec3(0.3, 1.0, -0.2).normalized();
  c.radius = 0.4;
  c.ground_normal = Vec3(0.1, -0.2, 1.0).normalized();
  return c;
}

VelocityConstraint ball() {
  VelocityConstraint c = wheel();
  c.type = VelocityConstraintType::RollingBall;
  return c;
}

VelocityConstraint skate() {
  VelocityConstraint c;
  c.point = Vec3(0.5, 0.1, -0.1);
  c.axis = Vec3(0.0, 1.0, 0.2).normalized();
  return c;
}

// Velocity of the material point at world offset o from the centre of mass, for the body's
// world velocity v and body-frame angular velocity omega, by central differences of its
// position along the motion x + h v, R exp(h omega).
Vec3 point_velocity(const Mat3& R, const Vec3& o, const Vec6& w) {
  const double h = 1e-6;
  const Vec3 p_body = R.transpose() * o;
  auto at = [&](double t) {
    return Vec3(t * w.head<3>() + R * Quat::exp(t * Vec3(w.tail<3>())).matrix() * p_body);
  };
  return (at(h) - at(-h)) / (2 * h);
}

// The lowest point of a wheel's rim, found independently: the rim point r (cos s e1 +
// sin s e2) that minimises its height along the ground normal, by a fine search refined by
// golden section.
Vec3 lowest_rim_offset(const VelocityConstraint& c, const Mat3& R) {
  const Vec3 a = R * c.axis;
  const Vec3 e1 = a.unitOrthogonal(), e2 = a.cross(e1);
  auto height = [&](double s) { return c.ground_normal.dot(std::cos(s) * e1 + std::sin(s) * e2); };
  double best = 0.0;
  for (int i = 0; i < 3600; ++i) {
    const double s = 2 * M_PI * i / 3600;
    if (height(s) < height(best)) best = s;
  }
  double lo = best - 2 * M_PI / 3600, hi = best + 2 * M_PI / 3600;
  for (int i = 0; i < 100; ++i) {
    const double m1 = hi - 0.618 * (hi - lo), m2 = lo + 0.618 * (hi - lo);
    (height(m1) < height(m2) ? hi : lo) = (height(m1) < height(m2) ? m2 : m1);
  }
  const double s = 0.5 * (lo + hi);
  return R * c.point + c.radius * (std::cos(s) * e1 + std::sin(s) * e2);
}

// Each kind's rows measure the velocity of the point they hold: a skate's along its blocked
// direction; a wheel's and a ball's, of the material point touching the ground, in the
// ground's plane (two orthonormal rows: the norm of that velocity's part in the plane).
TEST(VelocityConstraintRows, MeasureTheVelocityOfTheirPoint) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const Mat3 R = random_rotation(rng);
    const Vec6 w = random_velocity(rng);
    VelocityRows A;
    const VelocityConstraint s = skate();
    ASSERT_TRUE(velocity_constraint_rows(s, R, A));
    ASSERT_EQ(A.rows(), 1);
    EXPECT_NEAR((A * w)(0), (R * s.axis).dot(point_velocity(R, R * s.point, w)), 1e-8);
    for (const VelocityConstraint& c : {wheel(), ball()}) {
      ASSERT_TRUE(velocity_constraint_rows(c, R, A));
      ASSERT_EQ(A.rows(), 2);
      const Vec3 o = c.type == VelocityConstraintType::RollingWheel
                         ? lowest_rim_offset(c, R)
                         : Vec3(R * c.point - c.radius * c.ground_normal);
      const Vec3 u = point_velocity(R, o, w);
      const Vec3 tangential = u - c.ground_normal.dot(u) * c.ground_normal;
      EXPECT_NEAR((A * w).norm(), tangential.norm(), 1e-7) << velocity_constraint_type_name(c.type);
      // Both rows lie in the ground's plane and are orthonormal there.
      EXPECT_LT((A.leftCols<3>() * c.ground_normal).norm(), 1e-12);
      EXPECT_LT((A.leftCols<3>() * A.leftCols<3>().transpose() - Mat2::Identity()).norm(), 1e-12);
    }
  }
}

// The derivatives that residual_blocks uses, against central differences on R exp(phi).
TEST(VelocityConstraintRows, DerivativesMatchCentralDifferences) {
  std::mt19937 rng(3);
  for (const VelocityConstraint& c : {skate(), wheel(), ball()}) {
    for (int trial = 0; trial < 5; ++trial) {
      const Mat3 R = random_rotation(rng);
      const Vec6 w = random_velocity(rng);
      const Eigen::Vector2d mu(0.7, -1.3);
      const int m = velocity_rows(c.type);
      Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 2, 3> dAw;
      Eigen::Matrix<double, 6, 3> dAtmu;
      ASSERT_TRUE(velocity_constraint_derivatives(c, R, w, mu, dAw, dAtmu));
      const double h = 1e-6;
      for (int k = 0; k < 3; ++k) {
        VelocityRows Ap, Am;
        ASSERT_TRUE(velocity_constraint_rows(c, R * Quat::exp(h * Vec3::Unit(k)).matrix(), Ap));
        ASSERT_TRUE(velocity_constraint_rows(c, R * Quat::exp(-h * Vec3::Unit(k)).matrix(), Am));
        const Eigen::VectorXd fd_Aw = (Ap * w - Am * w) / (2 * h);
        const Vec6 fd_Atmu = (Ap.transpose() - Am.transpose()) * mu.head(m) / (2 * h);
        EXPECT_LT((fd_Aw - dAw.col(k)).norm(), 1e-8) << velocity_constraint_type_name(c.type);
        EXPECT_LT((fd_Atmu - dAtmu.col(k)).norm(), 1e-8) << velocity_constraint_type_name(c.type);
      }
    }
  }
}

TEST(VelocityConstraintRows, AFlatWheelHasNoRowsAndItsStepSaysWhy) {
  VelocityConstraint c = wheel();
  c.ground_normal = Vec3::UnitZ();
  c.axis = Vec3::UnitZ();
  VelocityRows A;
  EXPECT_FALSE(velocity_constraint_rows(c, Mat3::Identity(), A));
  Model model({{"wheel", 1.0, Mat3::Identity()}}, {}, Vec3(0, 0, -9.81), {}, {}, {c});
  Data data(model);
  const StepStatus status = step(model, data, StepOptions{});
  EXPECT_EQ(status.failure, StepFailure::ConstraintUndefined);
  EXPECT_EQ(data.steps, 0);
}

TEST(VelocityConstraints, BadInputNamesTheConstraint) {
  const std::vector<Body> bodies = {{"b", 1.0, Mat3::Identity()}};
  auto message = [&](VelocityConstraint c) {
    try {
      Model model(bodies, {}, Vec3(0, 0, -9.81), {}, {}, {c});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  VelocityConstraint c = skate();
  c.name = "blade";
  c.body = 3;
  EXPECT_NE(message(c).find("velocity constraint 0 ('blade'): body index 3"), std::string::npos)
      << message(c);
  c.body = 0;
  c.axis = Vec3::Zero();
  EXPECT_NE(message(c).find("'blade'): axis must be a non-zero vector"), std::string::npos)
      << message(c);
  VelocityConstraint w = wheel();
  w.name = "front";
  w.radius = 0.0;
  EXPECT_NE(message(w).find("'front'): a rolling_wheel needs a positive finite radius"),
            std::string::npos) << message(w);
  w.radius = 0.3;
  w.point = Vec3(NAN, 0, 0);
  EXPECT_NE(message(w).find("'front'): point is not finite"), std::string::npos) << message(w);
}

// The Chaplygin sleigh (papers/NOTES.md): J = 0.1 kg m^2, m = 1 kg, a = 0.5 m, started with
// omega = 2 rad/s and v1 = 0.5 m/s.
constexpr double kJ = 0.1, kM = 1.0, kA = 0.5, kOmega = 2.0, kV1 = 0.5;

struct Planar {
  double theta, x, y;
};

Mechanism started_sleigh(double dt) {
  Mechanism mech = chaplygin_sleigh(kM, kJ, kA);
  std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state);
  std::vector<JointCoords> qd = q;
  qd[0] = Vec3(kV1, -kA * kOmega, kOmega);  // (x, y, heading) rates at heading 0
  mech.state = set_joint_state(mech.model, mech.state, q, qd, dt);
  return mech;
}

double heading(const BodyState& b) {
  return 2.0 * std::atan2(b.q.q[3], b.q.q[0]);  // (w, x, y, z): a turn about z
}

// Runs the maximal sleigh to time T; `check` sees every step's states before and after.
template <typename Check>
Planar run_sleigh(double dt, double T, Check check) {
  Mechanism mech = started_sleigh(dt);
  Data data(mech.model, mech.state);
  StepOptions options;
  options.dt = dt;
  options.newton.tolerance = 1e-13;
  const int n = int(std::lround(T / dt));
  for (int k = 0; k < n; ++k) {
    const std::vector<BodyState> before = data.state;
    const StepStatus status = step(mech.model, data, options);
    EXPECT_TRUE(status.ok()) << describe(status.failure);
    check(mech.model, before, data.state);
  }
  return {heading(data.state[0]), data.state[0].x.x(), data.state[0].x.y()};
}

Planar run_sleigh(double dt, double T) {
  return run_sleigh(dt, T, [](const Model&, const auto&, const auto&) {});
}

// The reduced sleigh of the nonholonomic engine in full coordinates (theta, x, y).
Planar reduced_sleigh(bool rattle, double dt, double T) {
  const nonholonomic::ChaplyginSleigh model(kJ, kM, kA);
  nonholonomic::NhVec q(3), qdot(3), u(0);
  q << 0.0, 0.0, 0.0;
  qdot << kOmega, kV1, -kA * kOmega;
  const int n = int(std::lround(T / dt));
  if (!rattle) {
    for (int k = 0; k < n; ++k) nonholonomic::nh_rk4_step(model, dt, u, q, qdot);
    return {q[0], q[1], q[2]};
  }
  nonholonomic::NhMat M;
  model.mass(q, M);
  nonholonomic::NhVec p = M * qdot, q_next = q, p_next = p;
  NewtonOptions newton;
  newton.tolerance = 1e-13;
  for (int k = 0; k < n; ++k) {
    q_next = q + dt * qdot;
    EXPECT_TRUE(nonholonomic::rattle_step(model, dt, q, p, u, q_next, p_next, newton).converged);
    qdot = (q_next - q) / dt;
    q = q_next;
    p = p_next;
  }
  return {q[0], q[1], q[2]};
}

double distance(const Planar& a, const Planar& b) {
  return std::max({std::abs(a.theta - b.theta), std::abs(a.x - b.x), std::abs(a.y - b.y)});
}

// Second order against the reduced model's continuous equations (RK4 at dt = 1e-4): the
// constraint's discretisation is symmetric.
TEST(MaximalSleigh, ConvergesAtSecondOrderToTheReducedModel) {
  const double T = 2.0;
  const Planar exact = reduced_sleigh(false, 1e-4, T);
  double e[3];
  const double dts[3] = {0.02, 0.01, 0.005};
  for (int i = 0; i < 3; ++i) e[i] = distance(run_sleigh(dts[i], T), exact);
  std::printf("sleigh errors at dt 0.02, 0.01, 0.005: %.3e %.3e %.3e\n", e[0], e[1], e[2]);
  for (int i = 0; i < 2; ++i) {
    const double order = std::log2(e[i] / e[i + 1]);
    EXPECT_NEAR(order, 2.0, 0.1) << "dt " << dts[i] << ": errors " << e[i] << ", " << e[i + 1];
  }
  // And the maximal sleigh is as close to it as the nonholonomic engine's RATTLE at the same
  // step, to within its own O(dt^2).
  const double to_rattle = distance(run_sleigh(0.01, T), reduced_sleigh(true, 0.01, T));
  std::printf("sleigh at dt 0.01: %.3e from RATTLE\n", to_rattle);
  EXPECT_LT(to_rattle, 2.0 * e[1]);
}

// The skate's force (Data::velocity_force) is the reduced model's multiplier: with the
// lateral force lambda at the skate, m (v2_dot + omega v1) = lambda and J omega_dot = a lambda,
// so lambda = J m v1 omega / (J + m a^2) (papers/NOTES.md). The force of a step stands
// between its two intervals, so it is compared with lambda at the mean of their velocities;
// it converges at second order. The first step's force is half of lambda: a started state's
// velocity is the interval before t_0, already on the constraint (docs/maximal.md, the
// finding on the start), so it is left out.
TEST(MaximalSleigh, TheSkatesForceIsTheReducedModelsMultiplier) {
  double worst[2];
  const double dts[2] = {0.01, 0.005};
  for (int i = 0; i < 2; ++i) {
    double peak = 0.0;
    worst[i] = 0.0;
    Mechanism mech = started_sleigh(dts[i]);
    Data data(mech.model, mech.state);
    StepOptions options;
    options.dt = dts[i];
    options.newton.tolerance = 1e-13;
    for (int k = 0; k < int(std::lround(2.0 / dts[i])); ++k) {
      const BodyState before = data.state[0];
      ASSERT_TRUE(step(mech.model, data, options).ok());
      const BodyState& after = data.state[0];
      // Body-frame velocities of the two intervals, at the mean of their headings.
      const Mat3 R = before.q.matrix();
      const double v1 = 0.5 * (R.col(0).dot(before.v) + R.col(0).dot(after.v));
      const double omega = 0.5 * (before.omega.z() + after.omega.z());
      const double lambda = kJ * kM * v1 * omega / (kJ + kM * kA * kA);
      if (k == 0) continue;  // the start's step (below)
      worst[i] = std::max(worst[i], std::abs(data.velocity_force[0] - lambda));
      peak = std::max(peak, std::abs(lambda));
    }
    EXPECT_LT(worst[i], 1e-2 * peak) << "dt " << dts[i];
  }
  std::printf("sleigh skate force from lambda: %.2e at dt 0.01, %.2e at 0.005\n", worst[0], worst[1]);
  EXPECT_NEAR(std::log2(worst[0] / worst[1]), 2.0, 0.1);
}

// Each step holds its discrete constraint, the skate's rows averaged over the step's two
// poses times the step's velocity, to round-off, and the planar joint to round-off; the energy stays within O(dt^2) of its
// start over 100 s without drifting.
TEST(MaximalSleigh, HoldsItsConstraintsAndItsEnergy) {
  const double dt = 0.01;
  const double E0 = 0.5 * (kM * (kV1 * kV1 + kA * kA * kOmega * kOmega) + kJ * kOmega * kOmega);
  double worst_skate = 0.0, worst_joint = 0.0, worst_energy_early = 0.0, worst_energy = 0.0;
  int k = 0;
  run_sleigh(dt, 100.0, [&](const Model& model, const std::vector<BodyState>& before,
                            const std::vector<BodyState>& after) {
    const double skate = max_velocity_violation(model, before, after);
    ASSERT_TRUE(std::isfinite(skate));
    worst_skate = std::max(worst_skate, skate);
    worst_joint = std::max(worst_joint, max_constraint_violation(model, after));
    const double dE = std::abs(energy(model, after) - E0) / E0;
    worst_energy = std::max(worst_energy, dE);
    if (++k <= 1000) worst_energy_early = worst_energy;
  });
  std::printf("sleigh over 100 s: skate %.1e, joint %.1e, energy %.2e (first 10 s %.2e)\n",
              worst_skate, worst_joint, worst_energy, worst_energy_early);
  EXPECT_LT(worst_skate, 1e-12);
  EXPECT_LT(worst_joint, 1e-12);
  EXPECT_LT(worst_energy, 1e-3);
  // Bounded, not drifting: the worst over 100 s is the worst of the first 10 s.
  EXPECT_LT(worst_energy, 1.5 * worst_energy_early);
}

// The vertical rolling disk (radius 0.5 m, spin 4 rad/s, turning at 1 rad/s): with nothing
// acting in the plane both rates stay constant and the centre runs round a circle of radius
// r spin / turn, the closed form it converges to at second order; the discrete spin and turn
// rates stay constant to round-off.
TEST(MaximalRollingDisk, RunsRoundItsClosedFormCircleAtSecondOrder) {
  const double radius = 0.5, spin = 4.0, turn = 1.0, T = 2.0;
  const double R_circle = radius * spin / turn;
  double e[3];
  const double dts[3] = {0.02, 0.01, 0.005};
  for (int i = 0; i < 3; ++i) {
    Mechanism mech = rolling_disk(1.0, radius);
    std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state);
    std::vector<JointCoords> qd = q;
    qd[0] = Vec3(radius * spin, 0.0, turn);
    qd[1] = Eigen::Matrix<double, 1, 1>(spin);
    mech.state = set_joint_state(mech.model, mech.state, q, qd, dts[i]);
    Data data(mech.model, mech.state);
    StepOptions options;
    options.dt = dts[i];
    options.newton.tolerance = 1e-13;
    const int n = int(std::lround(T / dts[i]));
    // The discrete rates of eq. (32) (a rotation vector per interval) are the continuous ones
    // to O(dt^2); from the first interval on they are to stay as they are.
    auto rates = [&] {
      const Mat3 R = data.state[1].q.matrix();
      const Vec3 omega_world = R * data.state[1].omega;
      return Vec2(omega_world.z(), omega_world.dot(R * Vec3::UnitY()));
    };
    ASSERT_TRUE(step(mech.model, data, options).ok());
    const Vec2 first = rates();
    EXPECT_LT((first - Vec2(turn, spin)).norm(), dts[i] * dts[i] * spin * spin);
    for (int k = 1; k < n; ++k) ASSERT_TRUE(step(mech.model, data, options).ok());
    EXPECT_LT((rates() - first).norm(), 1e-9);
    const Vec3 centre = data.state[1].x;
    const Vec3 expected(R_circle * std::sin(turn * T), R_circle * (1.0 - std::cos(turn * T)), radius);
    const double heading_error =
        std::abs(std::remainder(heading(data.state[0]) - turn * T, 2 * M_PI));
    e[i] = std::max((centre - expected).lpNorm<Eigen::Infinity>(), heading_error);
  }
  std::printf("rolling disk errors at dt 0.02, 0.01, 0.005: %.3e %.3e %.3e\n", e[0], e[1], e[2]);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(std::log2(e[i] / e[i + 1]), 2.0, 0.1) << e[i] << " " << e[i + 1];
}

// A Newton system at the data's state (the unknowns moved off the last solution) solved by the
// step's block elimination equals a dense LU of the residual's Jacobian.
void expect_block_solve_equals_dense(const Model& model, Data& data, const StepOptions& options) {
  ResidualBlocks blocks;
  Eigen::VectorXd s = inspect::warm_start(model, data);
  for (Eigen::Index i = 0; i < s.size(); ++i) s[i] += 0.01 * std::sin(1.0 + double(i));
  residual_blocks(model, data, options.dt, s, blocks);
  const Eigen::VectorXd rhs = Eigen::VectorXd::LinSpaced(s.size(), -1.0, 2.0);
  const Eigen::VectorXd dense = blocks.J_r_s.partialPivLu().solve(rhs);
  const Eigen::VectorXd sparse = inspect::sparse_solve(model, data, options, s, rhs);
  EXPECT_LT((sparse - dense).norm(), 1e-9 * dense.norm());
}

// The tractor and trailers: every axle's row is eliminated at its body (in the loop block
// they would make the step's cost grow with the cube of the axles) but the steered axle's,
// whose body its prescribed hinge fixes: one loop row; pulled round a curve by a force on
// the tractor, every hitch and every axle holds its discrete constraint to round-off, and a
// Newton system's block solve equals a dense LU.
TEST(TrailerTrain, EveryAxleIsEliminatedAtItsBodyAndHolds) {
  const Mechanism train = trailer_train(50, 0.3);
  const Topology& topo = train.model.topology();
  EXPECT_EQ(topo.loop_rows, 1);
  ASSERT_EQ(topo.velocity_constraint.size(), 52u);
  for (std::size_t k = 0; k < 51; ++k) EXPECT_EQ(topo.velocity_coupling[k], -1) << k;
  EXPECT_EQ(train.model.velocity_constraints()[std::size_t(topo.velocity_constraint[51])].name,
            "tractor_front");
  EXPECT_GE(topo.velocity_coupling[51], 0);

  Data data(train.model, train.state);
  StepOptions options;
  options.newton.tolerance = 1e-12;
  double worst_axle = 0.0, worst_joint = 0.0;
  for (int k = 0; k < 300; ++k) {
    data.body_force[0] = data.state[0].q.matrix() * Vec3(20.0, 0.0, 0.0);
    const std::vector<BodyState> before = data.state;
    ASSERT_TRUE(step(train.model, data, options).ok()) << "step " << k;
    const double axles = max_velocity_violation(train.model, before, data.state);
    ASSERT_TRUE(std::isfinite(axles));
    worst_axle = std::max(worst_axle, axles);
    worst_joint = std::max(worst_joint, max_constraint_violation(train.model, data.state));
  }
  EXPECT_LT(worst_axle, 1e-11);
  EXPECT_LT(worst_joint, 1e-11);
  // It moved and turned: the tractor's heading changed by over 0.5 rad.
  EXPECT_GT(std::abs(heading(data.state[0])), 0.5);

  expect_block_solve_equals_dense(train.model, data, options);
}

// Off-tracking, in closed form: with the steering held, the tractor's rear axle runs on a
// circle of radius R0 = wheelbase / tan(steering) (wheelbase 0.5 m, its two axles), and each
// trailer settles where its axle's velocity is tangent to a concentric circle: its hitch,
// 0.3 m behind the axle ahead of it, is 0.7 m ahead of its own axle, so
// R_i^2 = R_i-1^2 + 0.3^2 - 0.7^2 = R0^2 - 0.4 i.
TEST(TrailerTrain, SettlesOnTheClosedFormOffTrackingCircles) {
  const int trailers = 10;
  const double steering = 0.2, R0 = 0.5 / std::tan(steering);
  auto worst_radius_error = [&](double dt) {
    Mechanism train = trailer_train(trailers, steering);
    std::vector<JointCoords> q = current_joint_coordinates(train.model, train.state);
    std::vector<JointCoords> qd = q;
    for (JointCoords& r : qd) r.setZero();
    qd[0] = Vec3(1.0, 0.0, 1.0 / R0);  // rolling at 1 m/s onto the circle
    Data data(train.model, set_joint_state(train.model, train.state, q, qd, dt));
    StepOptions options;
    options.dt = dt;
    options.newton.tolerance = 1e-12;
    // 40 s: settled (the error is the same after 160 s).
    for (long k = 0; k < std::lround(40.0 / dt); ++k) EXPECT_TRUE(step(train.model, data, options).ok());
    // The circle's centre: R0 to the left of the tractor's rear axle.
    const Mat3 R = data.state[0].q.matrix();
    const Vec3 rear = data.state[0].x + R * Vec3(-0.2, 0.0, 0.0);
    const Vec3 centre = rear + R0 * (R * Vec3::UnitY());
    double worst = 0.0;
    for (int i = 1; i <= trailers; ++i) {
      const BodyState& b = data.state[std::size_t(i)];
      const Vec3 axle = b.x + b.q.matrix() * Vec3(-0.2, 0.0, 0.0);
      const double radius = (axle - centre).head<2>().norm();
      worst = std::max(worst, std::abs(radius - std::sqrt(R0 * R0 - 0.4 * i)));
    }
    return worst;
  };
  const double coarse = worst_radius_error(0.02), fine = worst_radius_error(0.01);
  std::printf("trailer axles' radii from the closed form: %.2e m at dt 0.02, %.2e at 0.01\n",
              coarse, fine);
  EXPECT_LT(fine, 1e-4);
  EXPECT_NEAR(std::log2(coarse / fine), 2.0, 0.1);
}

// A body whose parent joint's forces and its constraints' are dependent on it keeps its rows
// in the loop block: the rolling disk on its axle hinge (5 + 2 rows > 6), and the
// snakeboard's wheel sets, whose skates sit at their steering hinges' anchors (a skate's
// force there is one of the hinge's). Both step, and solve as a dense LU does.
TEST(TrailerTrain, DependentRowsUseTheLoopBlock) {
  const Mechanism disk = rolling_disk(1.0, 0.5);
  EXPECT_EQ(disk.model.topology().loop_rows, 2);
  for (const int c : disk.model.topology().velocity_coupling) EXPECT_GE(c, 0);
  Mechanism board = snakeboard(1.0, 0.5, 0.1, 0.05);
  const Topology& topo = board.model.topology();
  ASSERT_EQ(topo.velocity_coupling.size(), 2u);
  for (const int c : topo.velocity_coupling) EXPECT_GE(c, 0);
  for (BodyState& b : board.state) b.v = Vec3(0.5, 0.0, 0.0);
  Data data(board.model, board.state);
  const StepOptions options;
  ASSERT_TRUE(step(board.model, data, options).ok());
  expect_block_solve_equals_dense(board.model, data, options);
}

// Two formulations of rolling in one library (issue 40 item 6): a ball on a 15 degree
// incline, rolling across it at 0.5 m/s and pivoting at 3 rad/s about the normal, held by
// hard contact with friction 1 (enough to stick: (2/7) tan 15 = 0.077), and the same ball on
// frictionless contact with a rolling-ball constraint. Both converge to the closed form
// (down the slope at (5/7) g sin 15, across at constant speed), and they agree.
TEST(RollingTwoWays, FrictionContactFollowsTheRollingConstraint) {
  const double r = 0.1, a = 15.0 * M_PI / 180.0, g = 9.81, T = 1.0;
  const Vec3 n(-std::sin(a), 0.0, std::cos(a)), down(-std::cos(a), 0.0, -std::sin(a));
  const Vec3 across(0.0, 0.5, 0.0);
  auto ball = [&](bool constraint, double dt) {
    Contacts contacts;
    contacts.shapes.push_back({"ball", 0, geometry::Sphere(r), constraint ? 0.0 : 1.0});
    contacts.surfaces.push_back({"incline", geometry::HalfSpace(n, 0.0), 0.0});
    std::vector<VelocityConstraint> rolling;
    if (constraint) {
      VelocityConstraint c;
      c.type = VelocityConstraintType::RollingBall;
      c.radius = r;
      c.ground_normal = n;
      rolling.push_back(c);
    }
    const Model model({solid_sphere("ball", 1.0, r)}, {}, Vec3(0.0, 0.0, -g), {}, contacts,
                      rolling);
    BodyState st;
    st.x = r * n;
    st.v = across;
    st.omega = n.cross(across) / r + 3.0 * n;  // rolling across, pivoting about the normal
    Data data(model, {st});
    StepOptions options;
    options.dt = dt;
    const int steps = int(std::lround(T / dt));
    std::vector<Vec3> path;
    for (int k = 0; k < steps; ++k) {
      const StepStatus status = step(model, data, options);
      EXPECT_TRUE(status.ok()) << describe(status.failure);
      path.push_back(data.state[0].x);
    }
    return path;
  };
  const Vec3 exact = r * n + 0.5 * (5.0 / 7.0) * g * std::sin(a) * T * T * down + T * across;
  double d[3], e_contact[3], e_constraint[3];
  const double dts[3] = {0.01, 0.005, 0.0025};
  for (int i = 0; i < 3; ++i) {
    const std::vector<Vec3> contact = ball(false, dts[i]), constraint = ball(true, dts[i]);
    d[i] = 0.0;
    for (std::size_t k = 0; k < contact.size(); ++k)
      d[i] = std::max(d[i], (contact[k] - constraint[k]).norm());
    e_contact[i] = (contact.back() - exact).norm();
    e_constraint[i] = (constraint.back() - exact).norm();
  }
  std::printf("rolling two ways at dt 0.01, 0.005, 0.0025: apart %.2e %.2e %.2e; from the closed "
              "form, contact %.2e %.2e %.2e, constraint %.2e %.2e %.2e\n",
              d[0], d[1], d[2], e_contact[0], e_contact[1], e_contact[2], e_constraint[0],
              e_constraint[1], e_constraint[2]);
  // The rows of a ball centred on its body do not depend on its orientation, and a sticking
  // contact holds the same slip velocity at zero: the two are one discretisation, equal to
  // the solvers' tolerances. Under gravity both are first order (docs/maximal.md).
  for (int i = 0; i < 3; ++i) EXPECT_LT(d[i], 1e-10) << "dt " << dts[i];
  for (int i = 0; i < 2; ++i) {
    EXPECT_GT(e_contact[i] / e_contact[i + 1], 1.8) << "dt " << dts[i];
    EXPECT_GT(e_constraint[i] / e_constraint[i + 1], 1.8) << "dt " << dts[i];
  }
}

}  // namespace
}  // namespace marsden::maximal
