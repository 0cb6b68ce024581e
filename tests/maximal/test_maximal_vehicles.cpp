// The car of Kelly and Murray and the snakeboard assembled from bodies in the maximal engine
// (maximal::car, maximal::snakeboard) against the nonholonomic engine's reduced models
// (nonholonomic::NhCar, nonholonomic::Snakeboard): the same kinetic energy, and, driven by
// the same torques from the same state, trajectories that converge to the reduced model's
// continuous one at second order and stay near its RATTLE, with the joints held.
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/maximal/velocity.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/nonholonomic/model.hpp"

namespace marsden::maximal {
namespace {

using nonholonomic::NhMat;
using nonholonomic::NhVec;

struct Planar {
  double theta, x, y;
};

double heading(const BodyState& b) {
  return 2.0 * std::atan2(b.q.q[3], b.q.q[0]);  // (w, x, y, z): a turn about z
}

double distance(const Planar& a, const Planar& b) {
  return std::max({std::abs(std::remainder(a.theta - b.theta, 2 * M_PI)), std::abs(a.x - b.x),
                   std::abs(a.y - b.y)});
}

// Joint inputs at time t, one per joint of the model.
using Inputs = std::function<void(double t, std::vector<double>& u)>;

struct Outcome {
  Planar pose{};
  double worst_joint = 0.0;     // max |g| of the joints (and coupling), every step
  double worst_velocity = 0.0;  // max |(A_k + A_kp1) / 2 w_kp1| of the velocity constraints
};

// Runs a started mechanism to time T with the inputs of t_k in the step from t_k (the
// engine applies them at the pose x_k, between the intervals before and after it); the
// pose of body 0 at T.
Outcome run_maximal(const Mechanism& mech, const Inputs& inputs, double dt, double T) {
  Data data(mech.model, mech.state);
  StepOptions options;
  options.dt = dt;
  options.newton.tolerance = 1e-13;
  Outcome run;
  const int n = int(std::lround(T / dt));
  for (int k = 0; k < n; ++k) {
    inputs(k * dt, data.joint_input);
    const std::vector<BodyState> before = data.state;
    const StepStatus status = step(mech.model, data, options);
    EXPECT_TRUE(status.ok()) << describe(status.failure);
    run.worst_joint = std::max(run.worst_joint, max_constraint_violation(mech.model, data.state));
    for (const Coupling& c : mech.model.couplings()) {
      const std::vector<JointCoords> s = current_joint_coordinates(mech.model, data.state);
      run.worst_joint = std::max(
          run.worst_joint, std::abs(s[c.follower][0] - c.multiplier * s[c.leader][0] - c.offset));
    }
    const double velocity = max_velocity_violation(mech.model, before, data.state);
    EXPECT_TRUE(std::isfinite(velocity));
    run.worst_velocity = std::max(run.worst_velocity, velocity);
  }
  run.pose = {heading(data.state[0]), data.state[0].x.x(), data.state[0].x.y()};
  return run;
}

// The reduced model's (theta, x, y) at T: RK4 on its continuous equations with the controls
// of each stage's time, or RATTLE with the controls of each interval's midpoint (they act
// over the interval in (a) and (c)).
using Controls = std::function<void(double t, NhVec& u)>;

Planar reduced(const nonholonomic::NonholonomicModel& model, bool rattle, NhVec q, NhVec qdot,
               const Controls& controls, double dt, double T) {
  const int n = int(std::lround(T / dt));
  NhVec u(model.num_controls());
  if (!rattle) {
    for (int k = 0; k < n; ++k)
      nonholonomic::nh_rk_step(model, RungeKutta::Classic4, k * dt, dt, controls, q, qdot);
    return {q[2], q[3], q[4]};
  }
  NhMat M;
  model.mass(q, M);
  NhVec p = M * qdot, q_next = q, p_next = p;
  const NhVec prescribed = q;  // the car's steering sigma, held (ignored by the snakeboard)
  NewtonOptions newton;
  newton.tolerance = 1e-13;
  for (int k = 0; k < n; ++k) {
    controls((k + 0.5) * dt, u);
    q_next = q + dt * qdot;
    EXPECT_TRUE(
        nonholonomic::rattle_step(model, dt, q, p, u, q_next, p_next, newton, &prescribed).converged);
    qdot = (q_next - q) / dt;
    q = q_next;
    p = p_next;
  }
  return {q[2], q[3], q[4]};
}

// The kinetic energy at joint rates qd (the discrete velocities of a tiny interval, so they
// are the rates to round-off), less the potential at rest.
double kinetic(const Mechanism& mech, const std::vector<JointCoords>& q,
               const std::vector<JointCoords>& qd) {
  const double h = 1e-5;
  std::vector<JointCoords> rest = qd;
  for (JointCoords& r : rest) r.setZero();
  return energy(mech.model, set_joint_state(mech.model, mech.state, q, qd, h)) -
         energy(mech.model, set_joint_state(mech.model, mech.state, q, rest, h));
}

// Observed orders of e at dt, dt / 2, dt / 4, printed.
void expect_order(const char* what, const double e[3], double order) {
  std::printf("%s errors at dt 0.02, 0.01, 0.005: %.3e %.3e %.3e (orders %.3f, %.3f)\n", what,
              e[0], e[1], e[2], std::log2(e[0] / e[1]), std::log2(e[1] / e[2]));
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(std::log2(e[i] / e[i + 1]), order, 0.1) << what << ": " << e[i] << ", " << e[i + 1];
}

const double kDts[3] = {0.02, 0.01, 0.005};

// ------------------------------------------------------------------------------ the car

const CarParams kCar{};  // m 1 kg, I 0.1 kg m^2, K 0.2 kg m^2, rho 0.3 m, l 1 m
constexpr double kSteering = 0.3, kSpin = 2.0;  // rad; rear wheel rate at t = 0, rad/s

// From the rear wheel's spin, the car's rates at heading 0: x_dot = rho psi_dot and
// theta_dot = (rho / l) tan(steering) psi_dot (NhCar's constraints).
double car_turn_rate() { return kCar.rho / kCar.l * std::tan(kSteering) * kSpin; }

Mechanism started_car(double dt) {
  Mechanism mech = car(kCar, kSteering);
  std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state), qd = q;
  for (JointCoords& r : qd) r.setZero();
  qd[0] = Vec3(kCar.rho * kSpin, 0.0, car_turn_rate());
  qd[1] = Eigen::Matrix<double, 1, 1>(kSpin);
  mech.state = set_joint_state(mech.model, mech.state, q, qd, dt);
  return mech;
}

Planar reduced_car(bool rattle, const std::function<double(double)>& drive, double dt, double T) {
  const nonholonomic::NhCar model(kCar);
  NhVec q(5), qdot(5);
  q << 0.0, std::tan(kSteering), 0.0, 0.0, 0.0;
  qdot << kSpin, 0.0, car_turn_rate(), kCar.rho * kSpin, 0.0;
  return reduced(model, rattle, q, qdot, [&](double t, NhVec& u) { u.setConstant(1, drive(t)); },
                 dt, T);
}

Inputs car_inputs(const std::function<double(double)>& drive) {
  return [drive](double t, std::vector<double>& u) { u[1] = drive(t); };  // joint 1: "axle"
}

// The bodies' kinetic energy is NhCar's 1/2 (I psi_dot^2 + K theta_dot^2 + m |v|^2) at
// random rates, headings and wheel angles, with the steering fixed or a hinge at rest.
TEST(MaximalCar, HasTheKineticEnergyOfTheReducedCar) {
  std::mt19937 rng(11);
  std::normal_distribution<double> n(0.0, 1.0);
  for (const double Js : {0.0, 0.05}) {
    const Mechanism mech = car(kCar, kSteering, Js);
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state), qd = q;
      for (JointCoords& r : qd) r.setZero();
      q[0] = Vec3(n(rng), n(rng), n(rng));
      q[1] = Eigen::Matrix<double, 1, 1>(n(rng));
      const Vec3 planar(n(rng), n(rng), n(rng));  // x_dot, y_dot (world), theta_dot
      const double spin = n(rng);
      qd[0] = planar;
      qd[1] = Eigen::Matrix<double, 1, 1>(spin);
      const double expected = 0.5 * (kCar.I * spin * spin + kCar.K * planar.z() * planar.z() +
                                     kCar.m * planar.head<2>().squaredNorm());
      EXPECT_NEAR(kinetic(mech, q, qd), expected, 1e-8 * expected) << "steering inertia " << Js;
    }
  }
}

// Driven by a sinusoidal torque on the rear axle (zero at t = 0) at constant steering, the
// maximal car converges to NhCar's continuous motion at second order, is as close to it as
// RATTLE at the same step, and holds its joints and its discrete velocity constraints.
TEST(MaximalCar, ConvergesAtSecondOrderToTheReducedCar) {
  const double T = 2.0;
  const auto drive = [](double t) { return 0.1 * std::sin(3.0 * t); };  // N m
  const Planar exact = reduced_car(false, drive, 1e-4, T);
  double e[3];
  Outcome runs[3];
  for (int i = 0; i < 3; ++i) {
    runs[i] = run_maximal(started_car(kDts[i]), car_inputs(drive), kDts[i], T);
    e[i] = distance(runs[i].pose, exact);
  }
  expect_order("car (sinusoidal drive)", e, 2.0);
  const double to_rattle = distance(runs[1].pose, reduced_car(true, drive, 0.01, T));
  std::printf("car at dt 0.01: %.3e from RATTLE; joints %.1e, velocity rows %.1e\n", to_rattle,
              runs[1].worst_joint, runs[1].worst_velocity);
  EXPECT_LT(to_rattle, 2.0 * e[1]);
  for (const Outcome& r : runs) {
    EXPECT_LT(r.worst_joint, 1e-12);
    EXPECT_LT(r.worst_velocity, 1e-12);
  }
}

// A drive torque already acting at t = 0 (constant). The engine takes a started state's
// velocity as the momentum of the interval before t_0 and applies the inputs of t_0 in full
// at x_0, so from the continuous state (q_0, qdot_0) the first interval's momentum is off by
// dt/2 f(0): the trajectory is first order. Half the input in the first step (the forced
// discrete Legendre transform p_0 = -D1 L_d - f-_d, as GNI's start in
// nonholonomic/integrators.hpp) restores second order, so the step itself is second order.
TEST(MaximalCar, ADriveActingAtTheStartIsFirstOrderUnlessTheFirstStepTakesHalfOfIt) {
  const double T = 2.0, f = 0.1;  // N m
  const auto drive = [f](double) { return f; };
  const Planar exact = reduced_car(false, drive, 1e-4, T);
  double full[3], half[3], to_rattle = 0.0;
  for (int i = 0; i < 3; ++i) {
    full[i] = distance(run_maximal(started_car(kDts[i]), car_inputs(drive), kDts[i], T).pose, exact);
    const Planar p = run_maximal(
        started_car(kDts[i]), car_inputs([f](double t) { return t == 0.0 ? 0.5 * f : f; }),
        kDts[i], T).pose;
    half[i] = distance(p, exact);
    if (i == 1) to_rattle = distance(p, reduced_car(true, drive, 0.01, T));
  }
  expect_order("car (constant drive, full first input)", full, 1.0);
  expect_order("car (constant drive, half first input)", half, 2.0);
  std::printf("car (constant drive, half first input) at dt 0.01: %.3e from RATTLE\n", to_rattle);
  EXPECT_LT(to_rattle, 2.0 * half[1]);
}

// With steering_inertia > 0 the steering is a live hinge: without a steering torque nothing
// turns the front set about its own axis (the skate acts at the hinge, the hinge passes no
// torque about z), so its yaw rate in the world stays what it was while the steering angle
// changes under it (started turning, it settles where the chassis turns at that rate).
TEST(MaximalCar, AFreeSteeringHingeKeepsTheFrontSetsYawRate) {
  const double dt = 0.01;
  Mechanism mech = car(kCar, kSteering, 0.05);
  std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state), qd = q;
  for (JointCoords& r : qd) r.setZero();
  qd[0] = Vec3(kCar.rho * kSpin, 0.0, car_turn_rate());
  qd[1] = Eigen::Matrix<double, 1, 1>(kSpin);
  qd[2] = Eigen::Matrix<double, 1, 1>(0.2);  // steering rate, rad/s: at a constant angle the
                                             // car runs round its circle and nothing drifts
  mech.state = set_joint_state(mech.model, mech.state, q, qd, dt);
  Data data(mech.model, mech.state);
  StepOptions options;
  options.dt = dt;
  options.newton.tolerance = 1e-13;
  auto front_yaw_rate = [&] { return (data.state[2].q.matrix() * data.state[2].omega).z(); };
  ASSERT_TRUE(step(mech.model, data, options).ok());
  const double first = front_yaw_rate();
  double worst = 0.0;
  for (int k = 1; k < 300; ++k) {
    ASSERT_TRUE(step(mech.model, data, options).ok());
    worst = std::max(worst, std::abs(front_yaw_rate() - first));
  }
  const double steering_now = current_joint_coordinates(mech.model, data.state)[2][0];
  std::printf("free steering over 3 s: front yaw rate within %.1e of %.4f rad/s, steering %.4f "
              "-> %.4f rad\n", worst, first, kSteering, steering_now);
  EXPECT_LT(worst, 1e-10);
  EXPECT_GT(std::abs(steering_now - kSteering), 1e-2);
  EXPECT_LT(max_constraint_violation(mech.model, data.state), 1e-12);
}

// ------------------------------------------------------------------------ the snakeboard

// m 1 kg, l 0.5 m, I 0.1 kg m^2, J 0.05 kg m^2: m l^2 = 0.25 > I + 2 J = 0.2.
constexpr double kBoardMass = 1.0, kHalf = 0.5, kRotor = 0.1, kWheels = 0.05;
// Started rolling at v1 = 0.5 m/s with the wheels turned by phi = 0.3 rad, so turning at
// theta_dot = -v1 tan(phi) / l (Snakeboard's constraints at theta = 0).
constexpr double kPhi = 0.3, kV1 = 0.5;
double board_turn_rate() { return -kV1 * std::tan(kPhi) / kHalf; }

// In-phase sinusoidal torques on the rotor and the steering (the drive gait's shape, as
// torques), zero at t = 0.
double rotor_torque(double t) { return 0.2 * std::sin(M_PI * t); }
double steering_torque(double t) { return 0.05 * std::sin(M_PI * t); }

Mechanism started_snakeboard(double dt) {
  Mechanism mech = snakeboard(kBoardMass, kHalf, kRotor, kWheels);
  std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state), qd = q;
  for (JointCoords& r : qd) r.setZero();
  q[2] = Eigen::Matrix<double, 1, 1>(kPhi);  // "steering"; "steering_front" follows at -phi
  qd[0] = Vec3(kV1, 0.0, board_turn_rate());
  mech.state = set_joint_state(mech.model, mech.state, q, qd, dt);
  return mech;
}

Planar reduced_snakeboard(bool rattle, double dt, double T) {
  const nonholonomic::Snakeboard model(kRotor, kWheels, kBoardMass, kHalf);
  NhVec q(5), qdot(5);
  q << 0.0, kPhi, 0.0, 0.0, 0.0;
  qdot << 0.0, 0.0, board_turn_rate(), kV1, 0.0;
  return reduced(model, rattle, q, qdot,
                 [](double t, NhVec& u) {
                   u.resize(2);
                   u << rotor_torque(t), steering_torque(t);
                 },
                 dt, T);
}

const Inputs kSnakeboardInputs = [](double t, std::vector<double>& u) {
  u[1] = rotor_torque(t);     // joint "rotor"
  u[2] = steering_torque(t);  // joint "steering"
};

// The bodies' kinetic energy is 1/2 qdot^T M qdot with Snakeboard's M (vehicles §5.2.2) at
// random rates, headings, rotor and steering angles.
TEST(MaximalSnakeboard, HasTheKineticEnergyOfTheReducedSnakeboard) {
  const nonholonomic::Snakeboard model(kRotor, kWheels, kBoardMass, kHalf);
  const Mechanism mech = snakeboard(kBoardMass, kHalf, kRotor, kWheels);
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state), qd = q;
    for (JointCoords& r : qd) r.setZero();
    NhVec s(5), sdot(5);  // (psi, phi, theta, x, y) and rates
    for (int i = 0; i < 5; ++i) {
      s[i] = n(rng);
      sdot[i] = n(rng);
    }
    q[0] = Vec3(s[3], s[4], s[2]);
    qd[0] = Vec3(sdot[3], sdot[4], sdot[2]);
    q[1] = Eigen::Matrix<double, 1, 1>(s[0]);
    qd[1] = Eigen::Matrix<double, 1, 1>(sdot[0]);
    q[2] = Eigen::Matrix<double, 1, 1>(s[1]);
    qd[2] = Eigen::Matrix<double, 1, 1>(sdot[1]);
    NhMat M;
    model.mass(s, M);
    const double expected = 0.5 * sdot.dot(M * sdot);
    EXPECT_NEAR(kinetic(mech, q, qd), expected, 1e-8 * expected);
  }
}

// Driven by sinusoidal rotor and steering torques, the maximal snakeboard converges to
// Snakeboard's continuous motion at second order, is as close to it as RATTLE at the same
// step, and holds its joints, the steering coupling and its skates.
TEST(MaximalSnakeboard, ConvergesAtSecondOrderToTheReducedSnakeboard) {
  const double T = 2.0;
  const Planar exact = reduced_snakeboard(false, 1e-4, T);
  double e[3];
  Outcome runs[3];
  for (int i = 0; i < 3; ++i) {
    runs[i] = run_maximal(started_snakeboard(kDts[i]), kSnakeboardInputs, kDts[i], T);
    e[i] = distance(runs[i].pose, exact);
  }
  expect_order("snakeboard (sinusoidal torques)", e, 2.0);
  const double to_rattle = distance(runs[1].pose, reduced_snakeboard(true, 0.01, T));
  std::printf("snakeboard at dt 0.01: %.3e from RATTLE; joints %.1e, velocity rows %.1e\n",
              to_rattle, runs[1].worst_joint, runs[1].worst_velocity);
  EXPECT_LT(to_rattle, 2.0 * e[1]);
  for (const Outcome& r : runs) {
    EXPECT_LT(r.worst_joint, 1e-12);
    EXPECT_LT(r.worst_velocity, 1e-12);
  }
}

// ----------------------------------------------------------------------------- bad input

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MaximalVehicles, BadParametersNameWhatIsWrong) {
  CarParams p;
  p.rho = 0.0;
  EXPECT_NE(message_of([&] { car(p, 0.1); }).find("car: mass, wheel inertia"), std::string::npos);
  EXPECT_NE(message_of([&] { car(CarParams{}, 2.0); }).find("car: steering"), std::string::npos);
  EXPECT_NE(message_of([&] { car(CarParams{}, 0.1, 0.3); }).find("car: steering_inertia"),
            std::string::npos);
  // The default nonholonomic snakeboard (I 0.2, J 0.05, m 1, l 0.5) has m l^2 < I + 2 J.
  EXPECT_NE(message_of([&] { snakeboard(1.0, 0.5, 0.2, 0.05); })
                .find("snakeboard: needs mass * half_length^2 > rotor_inertia + 2 wheel_inertia"),
            std::string::npos);
  EXPECT_NE(message_of([&] { snakeboard(1.0, -0.5, 0.1, 0.05); }).find("snakeboard: mass"),
            std::string::npos);
}

}  // namespace
}  // namespace marsden::maximal
