// nonholonomic-maximal: nonholonomic constraints in maximal coordinates (docs/maximal.md,
// Nonholonomic constraints; issue 40). The nonholonomic paper's §6 sleigh rerun with the
// maximal engine (a body on a planar joint with a skate) against the reduced model's
// continuous equations, the rolling disk against its closed-form circle, the car and the
// snakeboard driven by torques against their reduced models, the snakeboard's drive gait
// (rotor and steering prescribed) against RDP, and the tractor with trailers through a lane
// change (steering prescribed) and for the linear-time claim. Claims as measured:
//   - the maximal sleigh, disk, car and snakeboard converge at second order (fitted order
//     2 +- 0.1), and so do the gait and the lane change;
//   - the gait's nonholonomic momentum agrees with RDP's at the same step to O(h^2);
//   - the sleigh holds its discrete skate constraint to round-off at every step of a long
//     run, its energy stays bounded without drift, and it settles to straight motion as the
//     continuous solution does (GNI does not: nonholonomic-comparison);
//   - after the lane change the trailers fall in line behind the tractor;
//   - a step of the trailer train costs O(n): time(2n) / time(n) within 2 +- 0.3.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/builtin.hpp"
#include "experiments/statistics.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/maximal/velocity.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/nonholonomic/model.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/vehicle/rdp.hpp"
#include "marsden/vehicle/rdp_models.hpp"

namespace marsden::experiments {

namespace {

using maximal::BodyState;
using maximal::Data;
using maximal::Mechanism;
using maximal::StepOptions;

// The §6 sleigh of nonholonomic-comparison: J = 1, m = 2, a = 0.5; omega0 = 1, v1 = 0.8.
constexpr double kJ = 1.0, kM = 2.0, kA = 0.5, kOmega0 = 1.0, kV10 = 0.8;

struct Planar {
  double theta = 0.0, x = 0.0, y = 0.0;
};

double heading(const BodyState& b) { return 2.0 * std::atan2(b.q.q[3], b.q.q[0]); }

double distance(const Planar& a, const Planar& b) {
  return std::max(std::abs(std::remainder(a.theta - b.theta, 2.0 * M_PI)),
                  std::hypot(a.x - b.x, a.y - b.y));
}

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(3);
  s << x;
  return s.str();
}

Mechanism started(Mechanism mech, const std::vector<maximal::JointCoords>& rates, double dt) {
  std::vector<maximal::JointCoords> q = maximal::current_joint_coordinates(mech.model, mech.state);
  mech.state = maximal::set_joint_state(mech.model, mech.state, q, rates, dt);
  return mech;
}

Mechanism started_sleigh(double dt) {
  return started(maximal::chaplygin_sleigh(kM, kJ, kA),
                 {Vec3(kV10, -kA * kOmega0, kOmega0)}, dt);
}

// Steps `n` times; `inputs(k, data)` before every step sets its inputs (joint forces,
// prescribed joints' targets), `each(k, before, after)` follows it. False on a failed step.
bool run(ExperimentContext& ctx, Mechanism& mech, double dt, long n,
         const std::function<void(long, const std::vector<BodyState>&, const Data&)>& each = {},
         const std::function<void(long, Data&)>& inputs = {}, double tolerance = 1e-13) {
  Data data(mech.model, mech.state);
  StepOptions options;
  options.dt = dt;
  options.newton.tolerance = tolerance;
  for (long k = 0; k < n; ++k) {
    if (inputs) inputs(k, data);
    const std::vector<BodyState> before = data.state;
    if (!maximal::step(mech.model, data, options).ok()) return false;
    if (each) each(k, before, data);
    if (k % 500 == 0) ctx.poll();
  }
  mech.state = data.state;
  return true;
}

// The reduced sleigh's continuous equations in (theta, x, y) by RK4 at step h.
Planar reduced_sleigh(double h, double T, double* theta_dot = nullptr) {
  const nonholonomic::ChaplyginSleigh model(kJ, kM, kA);
  nonholonomic::NhVec q(3), qd(3), u(0);
  q << 0.0, 0.0, 0.0;
  qd << kOmega0, kV10, -kA * kOmega0;
  const long n = std::lround(T / h);
  for (long k = 0; k < n; ++k) nonholonomic::nh_rk4_step(model, h, u, q, qd);
  if (theta_dot) *theta_dot = qd[0];
  return {q[0], q[1], q[2]};
}

struct Convergence {
  std::vector<double> dts, errors;
  double order = 0.0;
};

// A vehicle driven by joint torques u(t) (zero at t = 0: a force acting at the start makes
// a run from a continuous state first order, docs/maximal.md), against its reduced model.
struct Driven {
  std::function<Mechanism(double dt)> started;
  std::function<void(double t, std::vector<double>& joint_input)> inputs;
  Planar reference;  // the reduced model's RK4 at dt = 1e-4, controls at the stage times
};

// (theta, x, y) of the reduced model at T: RK4 at h with the controls of each stage's time.
Planar reduced_driven(const nonholonomic::NonholonomicModel& model, nonholonomic::NhVec q,
                      nonholonomic::NhVec qdot,
                      const std::function<void(double, nonholonomic::NhVec&)>& controls,
                      double h, double T) {
  const long n = std::lround(T / h);
  for (long k = 0; k < n; ++k)
    nonholonomic::nh_rk_step(model, RungeKutta::Classic4, double(k) * h, h, controls, q, qdot);
  return {q[2], q[3], q[4]};
}

// The car of Kelly and Murray (CarParams' defaults) at steering 0.3 rad, its rear wheel
// spinning at 2 rad/s, driven by 0.1 sin(3 t) N m; NhCar holds sigma = tan(0.3).
Driven driven_car(double T) {
  const CarParams p;
  const double steering = 0.3, spin = 2.0, turn = p.rho / p.l * std::tan(steering) * spin;
  const auto drive = [](double t) { return 0.1 * std::sin(3.0 * t); };
  Driven d;
  d.started = [=](double dt) {
    return started(maximal::car(p, steering),
                   {Vec3(p.rho * spin, 0.0, turn), maximal::JointCoords::Constant(1, spin),
                    maximal::JointCoords::Zero(1)},
                   dt);
  };
  d.inputs = [=](double t, std::vector<double>& u) { u[1] = drive(t); };  // joint "axle"
  nonholonomic::NhVec q(5), qdot(5);
  q << 0.0, std::tan(steering), 0.0, 0.0, 0.0;
  qdot << spin, 0.0, turn, p.rho * spin, 0.0;
  d.reference = reduced_driven(nonholonomic::NhCar(p), q, qdot,
                               [=](double t, nonholonomic::NhVec& u) { u.setConstant(1, drive(t)); },
                               1e-4, T);
  return d;
}

// The snakeboard (m 1 kg, l 0.5 m, I 0.1, J 0.05 kg m^2) rolling at 0.5 m/s with its wheels
// at phi = 0.3 rad, driven by rotor and steering torques 0.2 and 0.05 sin(pi t) N m.
Driven driven_snakeboard(double T) {
  const double m = 1.0, l = 0.5, I = 0.1, J = 0.05, phi = 0.3, v1 = 0.5;
  const double turn = -v1 * std::tan(phi) / l;
  Driven d;
  d.started = [=](double dt) {
    Mechanism board = maximal::snakeboard(m, l, I, J);
    std::vector<maximal::JointCoords> q = maximal::current_joint_coordinates(board.model, board.state);
    std::vector<maximal::JointCoords> qd = q;
    for (maximal::JointCoords& r : qd) r.setZero();
    q[2] = maximal::JointCoords::Constant(1, phi);  // "steering"; "steering_front" follows
    qd[0] = Vec3(v1, 0.0, turn);
    board.state = maximal::set_joint_state(board.model, board.state, q, qd, dt);
    return board;
  };
  d.inputs = [](double t, std::vector<double>& u) {
    u[1] = 0.2 * std::sin(M_PI * t);   // joint "rotor"
    u[2] = 0.05 * std::sin(M_PI * t);  // joint "steering"
  };
  nonholonomic::NhVec q(5), qdot(5);
  q << 0.0, phi, 0.0, 0.0, 0.0;
  qdot << 0.0, 0.0, turn, v1, 0.0;
  d.reference = reduced_driven(nonholonomic::Snakeboard(I, J, m, l), q, qdot,
                               [](double t, nonholonomic::NhVec& u) {
                                 u.resize(2);
                                 u << 0.2 * std::sin(M_PI * t), 0.05 * std::sin(M_PI * t);
                               },
                               1e-4, T);
  return d;
}

// The lane change: a tractor with 5 trailers rolling at 2 m/s, its front axle's prescribed
// hinge "steering" turned through one period of A sin(2 pi t / T_s), then held straight.
constexpr int kLaneTrailers = 5;
constexpr double kLaneAmplitude = 0.08, kLanePeriod = 6.0, kLaneSpeed = 2.0, kLaneEnd = 20.0;

double lane_steering(double t) {
  return t < kLanePeriod ? kLaneAmplitude * std::sin(2.0 * M_PI * t / kLanePeriod) : 0.0;
}

struct LaneChange {
  bool completed = false;
  std::vector<BodyState> final;
  std::vector<double> t, x_tractor, y_tractor, x_last, y_last, steering, drive;  // every 0.1 s
};

LaneChange lane_change(ExperimentContext& ctx, double dt) {
  Mechanism train = maximal::trailer_train(kLaneTrailers, 0.0);
  std::vector<maximal::JointCoords> rates = maximal::current_joint_coordinates(train.model, train.state);
  for (maximal::JointCoords& r : rates) r.setZero();
  rates[0] = Vec3(kLaneSpeed, 0.0, 0.0);  // "plane": along the tractor's heading
  train = started(std::move(train), rates, dt);
  const auto steer = std::size_t(train.model.num_joints() - 1);  // "steering", the last joint
  LaneChange out;
  const long every = std::max(1L, std::lround(0.1 / dt));
  auto record = [&](long k, const std::vector<BodyState>&, const Data& data) {
    if ((k + 1) % every != 0) return;
    out.t.push_back(double(k + 1) * dt);
    out.x_tractor.push_back(data.state[0].x.x());
    out.y_tractor.push_back(data.state[0].x.y());
    out.x_last.push_back(data.state[kLaneTrailers].x.x());
    out.y_last.push_back(data.state[kLaneTrailers].x.y());
    out.steering.push_back(data.joint_target[steer]);
    out.drive.push_back(data.drive_force[steer]);
  };
  auto steering = [&](long k, Data& data) {
    data.joint_target[steer] = lane_steering(double(k + 1) * dt);
  };
  // 1e-10 m/s: tighter stalls at the reference's step, whose rows are g / h with g's
  // round-off at 40 m from the origin about 1e-14 m.
  out.completed = run(ctx, train, dt, std::lround(kLaneEnd / dt), record, steering, 1e-10);
  out.final = train.state;
  return out;
}

// The largest pose difference over the tractor and the trailers (rad or m).
double train_distance(const std::vector<BodyState>& a, const std::vector<BodyState>& b) {
  if (a.size() != b.size()) return std::nan("");
  double worst = 0.0;
  for (int i = 0; i <= kLaneTrailers; ++i) {
    worst = std::max(worst, distance({heading(a[std::size_t(i)]), a[std::size_t(i)].x.x(), a[std::size_t(i)].x.y()},
                                     {heading(b[std::size_t(i)]), b[std::size_t(i)].x.x(), b[std::size_t(i)].x.y()}));
  }
  return worst;
}

// The snakeboard gait of examples/scenes/snakeboard_gait.json on the maximal snakeboard: the
// rotor and the steering prescribed as psi = (A_psi / w) sin(w t), phi = (A_phi / w) sin(w t),
// the board starting at rest; against RDP with the same shape velocities prescribed.
constexpr double kGaitM = 1.0, kGaitL = 0.5, kGaitI = 0.1, kGaitJ = 0.05, kGaitPsi = 1.5,
                 kGaitPhi = 0.6, kGaitW = M_PI, kGaitT = 10.0;

struct Gait {
  bool completed = false;
  Planar pose;                     // the board at T
  std::vector<double> momentum;    // nonholonomic momentum p of every step's interval
};

// p = <dl/dxi, e1(r)> of a step from its shape at the interval's middle, its shape rates and
// the board's body velocity in the middle's heading.
double gait_momentum(const vehicle::SnakeboardModel& model, double psi_k, double psi_kp1,
                     double phi_k, double phi_kp1, double theta_mid, double omega,
                     const Vec3& v_world, double dt) {
  vehicle::ShapeVec r(2), u(2);
  r << 0.5 * (psi_k + psi_kp1), 0.5 * (phi_k + phi_kp1);
  u << (psi_kp1 - psi_k) / dt, (phi_kp1 - phi_k) / dt;
  const double c = std::cos(theta_mid), s = std::sin(theta_mid);
  return model.nonholonomic_momentum(r, u, Vec3(omega, c * v_world.x() + s * v_world.y(),
                                                -s * v_world.x() + c * v_world.y()));
}

Gait maximal_gait(ExperimentContext& ctx, double dt) {
  const vehicle::SnakeboardModel reduced({kGaitM, kGaitL, kGaitI, kGaitJ}, true);
  const Mechanism free_board = maximal::snakeboard(kGaitM, kGaitL, kGaitI, kGaitJ);
  std::vector<maximal::Joint> joints = free_board.model.joints();
  joints[1].prescribed = joints[2].prescribed = true;  // "rotor", "steering"
  Mechanism board{maximal::Model(free_board.model.bodies(), joints, free_board.model.gravity(),
                                 free_board.model.couplings(), {},
                                 free_board.model.velocity_constraints()),
                  free_board.state};
  auto psi = [](double t) { return kGaitPsi / kGaitW * std::sin(kGaitW * t); };
  auto phi = [](double t) { return kGaitPhi / kGaitW * std::sin(kGaitW * t); };
  // At rest, the shape moving along its path over the interval that ends at t = 0.
  std::vector<maximal::JointCoords> rates = maximal::current_joint_coordinates(board.model, board.state);
  for (maximal::JointCoords& r : rates) r.setZero();
  rates[1].setConstant(-psi(-dt) / dt);
  rates[2].setConstant(-phi(-dt) / dt);
  rates[3].setConstant(phi(-dt) / dt);  // "steering_front" mirrors the steering
  board = started(std::move(board), rates, dt);
  Gait out;
  auto gait = [&](long k, Data& data) {
    data.joint_target[1] = psi(double(k + 1) * dt);
    data.joint_target[2] = phi(double(k + 1) * dt);
  };
  auto momentum = [&](long k, const std::vector<BodyState>& before, const Data& data) {
    const double t_k = double(k) * dt, t_kp1 = double(k + 1) * dt, theta_k = heading(before[0]);
    const double theta_mid =
        theta_k + 0.5 * std::remainder(heading(data.state[0]) - theta_k, 2.0 * M_PI);
    out.momentum.push_back(gait_momentum(reduced, psi(t_k), psi(t_kp1), phi(t_k), phi(t_kp1),
                                         theta_mid, data.state[0].omega.z(), data.state[0].v, dt));
  };
  out.completed = run(ctx, board, dt, std::lround(kGaitT / dt), momentum, gait, 1e-12);
  out.pose = {heading(board.state[0]), board.state[0].x.x(), board.state[0].x.y()};
  return out;
}

// RDP (alpha = 1/2) with the gait's shape velocities prescribed at each segment's midpoint.
Gait rdp_gait(double dt) {
  const vehicle::SnakeboardModel model({kGaitM, kGaitL, kGaitI, kGaitJ}, true);
  const vehicle::RdpOptions opt;
  vehicle::ShapeVec r0 = vehicle::ShapeVec::Zero(2), u0(2), zero = vehicle::ShapeVec::Zero(2), u(2);
  u0 << kGaitPsi, kGaitPhi;
  vehicle::RdpVec w0 = vehicle::RdpVec::Zero(1);
  vehicle::RdpState<SE2> st = vehicle::rdp_initial_state<SE2>(model, r0, SE2::identity(), u0, w0);
  Gait out;
  const long n = std::lround(kGaitT / dt);
  for (long k = 0; k < n; ++k) {
    const double c = std::cos(kGaitW * (double(k) + opt.alpha) * dt);
    u << kGaitPsi * c, kGaitPhi * c;
    const vehicle::ShapeVec r_k = st.r;
    if (!vehicle::rdp_advance(model, opt, dt, zero, u, st, int(k)).converged) return out;
    const vehicle::ShapeVec u_k = st.x.head(2);
    const Vec3 xi = vehicle::rdp_segment_velocity(model, opt, dt, r_k, st.x);
    out.momentum.push_back(model.nonholonomic_momentum(r_k + opt.alpha * dt * u_k, u_k, xi));
  }
  out.completed = true;
  out.pose = {st.g.angle(), st.g.x[0], st.g.x[1]};
  return out;
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Least CPU seconds per step over `repeats` runs of 100 steps of the trailer train.
double trailer_step_seconds(int trailers, int repeats) {
  Mechanism train = maximal::trailer_train(trailers, 0.3);
  for (BodyState& b : train.state) b.v = Vec3(1.0, 0.0, 0.0);
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    Data data(train.model, train.state);
    const StepOptions options;
    const double start = cpu_seconds();
    for (int k = 0; k < 100; ++k) maximal::step(train.model, data, options);
    best = std::min(best, (cpu_seconds() - start) / 100.0);
  }
  return best;
}

void nonholonomic_maximal(ExperimentContext& ctx) {
  const bool quick = ctx.quick();
  const double T = 10.0;
  ctx.add_parameter("sleigh", "J = 1, m = 2, a = 0.5; omega0 = 1, v1_0 = 0.8 (as "
                              "nonholonomic-comparison); a body on a planar joint with a skate");
  ctx.add_parameter("rolling_disk", "m = 1, radius 0.5 m, spin 4 rad/s, turning 1 rad/s");
  ctx.add_parameter("car", "CarParams' defaults (m 1, I 0.1, K 0.2, rho 0.3, l 1), steering "
                           "0.3 rad held, rear wheel at 2 rad/s, drive 0.1 sin(3 t) N m; "
                           "reference NhCar, RK4 at 1e-4 s");
  ctx.add_parameter("snakeboard", "m 1, l 0.5, I 0.1, J 0.05; v1 0.5 m/s at phi 0.3 rad; "
                                  "rotor and steering torques 0.2 and 0.05 sin(pi t) N m; "
                                  "reference Snakeboard, RK4 at 1e-4 s");
  ctx.add_parameter("convergence", "pose error max(|heading|, |position|) at T = 10 s against "
                                   "the reduced model's RK4 with 65536 steps (sleigh) or the "
                                   "closed form (disk), h = 10 / (160 2^k) s; order fitted on the 4 "
                                   "smallest steps (the disk's error from h = 0.0625 s to 0.03 s "
                                   "falls 8-fold: not yet asymptotic)");
  record::Json systems = record::Json::array();

  // Sleigh and disk: error against step.
  ctx.part("convergence");
  const int levels = 6;  // cheap (under a second) even in quick mode
  const Planar sleigh_ref = reduced_sleigh(T / 65536, T);
  Convergence sleigh, disk, car, board;
  const double radius = 0.5, spin = 4.0, turn = 1.0;
  const Driven driven[2] = {driven_car(T), driven_snakeboard(T)};
  Convergence* driven_results[2] = {&car, &board};
  for (int level = 0; level < levels; ++level) {
    const long n = 160L << level;
    const double dt = T / double(n);
    Mechanism s = started_sleigh(dt);
    Planar p{std::nan(""), std::nan(""), std::nan("")};
    if (run(ctx, s, dt, n)) p = {heading(s.state[0]), s.state[0].x.x(), s.state[0].x.y()};
    sleigh.dts.push_back(dt);
    sleigh.errors.push_back(distance(p, sleigh_ref));
    Mechanism d = started(maximal::rolling_disk(1.0, radius),
                          {Vec3(radius * spin, 0.0, turn), maximal::JointCoords::Constant(1, spin)},
                          dt);
    Planar e{std::nan(""), std::nan(""), std::nan("")};
    if (run(ctx, d, dt, n)) e = {heading(d.state[0]), d.state[1].x.x(), d.state[1].x.y()};
    const double R = radius * spin / turn;
    disk.dts.push_back(dt);
    disk.errors.push_back(distance(e, {turn * T, R * std::sin(turn * T), R * (1 - std::cos(turn * T))}));
    for (int v = 0; v < 2; ++v) {
      Mechanism mech = driven[v].started(dt);
      Planar pose{std::nan(""), std::nan(""), std::nan("")};
      // 1e-13 stalls at h = 2 ms on the car: its rows are g / h, and g's round-off 1e-16.
      if (run(ctx, mech, dt, n, {},
              [&](long k, Data& data) { driven[v].inputs(double(k) * dt, data.joint_input); },
              1e-12))
        pose = {heading(mech.state[0]), mech.state[0].x.x(), mech.state[0].x.y()};
      driven_results[v]->dts.push_back(dt);
      driven_results[v]->errors.push_back(distance(pose, driven[v].reference));
    }
  }
  for (Convergence* c : {&sleigh, &disk, &car, &board}) {
    const std::size_t tail = 4;
    c->order = fitted_order(std::vector<double>(c->dts.end() - tail, c->dts.end()),
                            std::vector<double>(c->errors.end() - tail, c->errors.end()));
  }
  for (const auto& [name, c] : {std::pair<const char*, const Convergence*>{"sleigh", &sleigh},
                                {"rolling_disk", &disk}, {"car", &car}, {"snakeboard", &board}}) {
    systems.push_back(record::Json::object()
                          .set("system", name)
                          .set("h", record::Json::array(c->dts))
                          .set("pose_error", record::Json::array(c->errors))
                          .set("order", c->order));
  }

  // The §6 long run at h = 0.05.
  ctx.part("long run");
  const double h = 0.05, T_long = quick ? 200.0 : 400.0;
  const long n_long = std::lround(T_long / h);
  ctx.add_parameter("long_run", "h = 0.05, T = " + fmt(T_long) + " s; reference RK4 at h / 20");
  double ref_theta_dot = 0.0;
  reduced_sleigh(h / 20, T_long, &ref_theta_dot);
  Mechanism s = started_sleigh(h);
  const double E0 = 0.5 * (kM * (kV10 * kV10 + kA * kA * kOmega0 * kOmega0) + kJ * kOmega0 * kOmega0);
  double worst_constraint = 0.0, worst_energy = 0.0, worst_energy_first = 0.0, late_theta_dot = 0.0;
  std::vector<double> t_series, energy_series, omega_series;
  const long every = std::max(1L, n_long / 400);
  const bool completed = run(ctx, s, h, n_long, [&](long k, const std::vector<BodyState>& before,
                                                    const Data& data) {
    // NaN (a row undefined) fails the claim: std::max would drop it.
    const double violation = maximal::max_velocity_violation(s.model, before, data.state);
    worst_constraint = std::isnan(violation) ? violation : std::max(worst_constraint, violation);
    const double e = std::abs(maximal::energy(s.model, data.state) - E0) / E0;
    worst_energy = std::max(worst_energy, e);
    if (k < n_long / 10) worst_energy_first = worst_energy;
    const double omega = data.state[0].omega.z();
    if (k >= n_long - 20) late_theta_dot = std::max(late_theta_dot, std::abs(omega));
    if ((k + 1) % every == 0) {
      t_series.push_back(double(k + 1) * h);
      energy_series.push_back(e);
      omega_series.push_back(omega);
    }
  });

  // The lane change: convergence of the whole train's poses at t = 20 s against a run at
  // h / 8 of the smallest step, and the train's alignment after 14 s of straight driving.
  ctx.part("lane change");
  ctx.add_parameter("lane_change", "trailer_train(5): rolling at 2 m/s, steering " +
                                       fmt(kLaneAmplitude) + " sin(2 pi t / " + fmt(kLanePeriod) +
                                       ") rad for one period, then 0 (prescribed hinge); T = " +
                                       fmt(kLaneEnd) + " s; h = 0.02 / 2^k, reference h = 0.02 / 64");
  Convergence lane;
  const LaneChange lane_ref = lane_change(ctx, 0.02 / 64);
  LaneChange lane_series;
  for (int level = 0; level < 4; ++level) {
    const double dt = 0.02 / double(1 << level);
    LaneChange run_at = lane_change(ctx, dt);
    lane.dts.push_back(dt);
    lane.errors.push_back(run_at.completed && lane_ref.completed
                              ? train_distance(run_at.final, lane_ref.final)
                              : std::nan(""));
    if (level == 1) lane_series = std::move(run_at);
  }
  lane.order = fitted_order(lane.dts, lane.errors);
  // Alignment at T: every trailer's heading against the tractor's, and its axle's distance
  // from the line of the tractor's rear axle along that heading.
  double misalignment = std::nan(""), offset = std::nan(""), lane_shift = std::nan(""),
         final_heading = std::nan("");
  if (lane_ref.completed) {
    const BodyState& tractor = lane_ref.final[0];
    final_heading = heading(tractor);
    const Mat3 R = tractor.q.matrix();
    const Vec3 rear = tractor.x + R * Vec3(-0.2, 0.0, 0.0), side = R * Vec3::UnitY();
    misalignment = offset = 0.0;
    for (int i = 1; i <= kLaneTrailers; ++i) {
      const BodyState& b = lane_ref.final[std::size_t(i)];
      misalignment = std::max(misalignment,
                              std::abs(std::remainder(heading(b) - final_heading, 2.0 * M_PI)));
      offset = std::max(offset, std::abs((b.x + b.q.matrix() * Vec3(-0.2, 0.0, 0.0) - rear).dot(side)));
    }
    lane_shift = tractor.x.y();
  }

  // The snakeboard gait: the maximal board's pose at T against RDP at h = 1e-4, and the
  // nonholonomic momentum of the two at the same step.
  ctx.part("gait");
  ctx.add_parameter("gait", "snakeboard m 1, l 0.5, I 0.1, J 0.05 from rest; psi = (1.5 / pi) "
                            "sin(pi t), phi = (0.6 / pi) sin(pi t) prescribed (maximal: the "
                            "hinges' paths; RDP: the shape velocities); T = 10 s; reference "
                            "RDP at h = 1e-4; h = 0.02 / 2^k");
  const Gait gait_ref = rdp_gait(1e-4);
  Convergence gait, gait_momentum_gap;
  double gait_p_final = std::nan("");
  for (int level = 0; level < 4; ++level) {
    const double dt = 0.02 / double(1 << level);
    const Gait m = maximal_gait(ctx, dt), r = rdp_gait(dt);
    gait.dts.push_back(dt);
    gait.errors.push_back(m.completed && gait_ref.completed ? distance(m.pose, gait_ref.pose)
                                                            : std::nan(""));
    double gap = std::nan("");
    if (m.completed && r.completed && m.momentum.size() == r.momentum.size()) {
      gap = 0.0;
      for (std::size_t k = 0; k < m.momentum.size(); ++k)
        gap = std::max(gap, std::abs(m.momentum[k] - r.momentum[k]));
      gait_p_final = m.momentum.back();
    }
    gait_momentum_gap.dts.push_back(dt);
    gait_momentum_gap.errors.push_back(gap);
  }
  gait.order = fitted_order(gait.dts, gait.errors);
  gait_momentum_gap.order = fitted_order(gait_momentum_gap.dts, gait_momentum_gap.errors);

  // Trailers: cost per step against n.
  ctx.part("trailers");
  const std::vector<int> sizes = quick ? std::vector<int>{25, 50, 100} : std::vector<int>{25, 50, 100, 200};
  std::vector<double> seconds, ratios;
  for (const int n : sizes) {
    seconds.push_back(trailer_step_seconds(n, quick ? 3 : 9));
    ctx.poll();
  }
  for (std::size_t i = 1; i < sizes.size(); ++i) ratios.push_back(seconds[i] / seconds[i - 1]);
  ctx.add_parameter("trailers", "tractor steered at 0.3 rad, all moving at 1 m/s; CPU time per "
                                "step, least of " + std::string(quick ? "3" : "9") +
                                " runs of 100 steps");

  record::Json data = record::Json::object();
  data.set("systems", std::move(systems))
      .set("long_run", record::Json::object()
                           .set("h", h)
                           .set("T", T_long)
                           .set("completed", completed)
                           .set("max_discrete_constraint", worst_constraint)
                           .set("max_relative_energy_error", worst_energy)
                           .set("late_abs_theta_dot", late_theta_dot)
                           .set("reference_late_abs_theta_dot", std::abs(ref_theta_dot))
                           .set("t", record::Json::array(t_series))
                           .set("relative_energy_error", record::Json::array(energy_series))
                           .set("theta_dot", record::Json::array(omega_series)))
      .set("lane_change", record::Json::object()
                              .set("h", record::Json::array(lane.dts))
                              .set("pose_error", record::Json::array(lane.errors))
                              .set("order", lane.order)
                              .set("series_h", 0.01)
                              .set("t", record::Json::array(lane_series.t))
                              .set("x_tractor", record::Json::array(lane_series.x_tractor))
                              .set("y_tractor", record::Json::array(lane_series.y_tractor))
                              .set("x_last_trailer", record::Json::array(lane_series.x_last))
                              .set("y_last_trailer", record::Json::array(lane_series.y_last))
                              .set("steering", record::Json::array(lane_series.steering))
                              .set("steering_drive", record::Json::array(lane_series.drive)))
      .set("gait", record::Json::object()
                       .set("h", record::Json::array(gait.dts))
                       .set("pose_error", record::Json::array(gait.errors))
                       .set("order", gait.order)
                       .set("momentum_gap", record::Json::array(gait_momentum_gap.errors))
                       .set("momentum_gap_order", gait_momentum_gap.order))
      .set("trailers", record::Json::object()
                           .set("n", record::Json::array(std::vector<double>(sizes.begin(), sizes.end())))
                           .set("seconds_per_step", record::Json::array(seconds)));
  const auto path = ctx.out_dir() / "nonholonomic_maximal.json";
  data.write_file(path);
  ctx.add_data_file(path, "per vehicle: pose error against step and fitted order; the "
                          "sleigh's long run (constraint, energy, theta_dot series); trailer "
                          "step times");

  auto order_text = [](const Convergence& c) {
    std::string s = "errors";
    for (double e : c.errors) s += " " + fmt(e);
    return s + " at h = " + fmt(c.dts.front()) + " .. " + fmt(c.dts.back()) + "; fitted order " +
           fmt(c.order);
  };
  struct OrderClaim {
    const char* id;
    const char* statement;
    const char* source;
    const Convergence& c;
  };
  for (const OrderClaim& o : {
           OrderClaim{"maximal-sleigh-second-order",
                      "The sleigh assembled from a body and a skate converges at second order "
                      "to the reduced model's motion.",
                      "issue 40 item 3; nonholonomic §6", sleigh},
           OrderClaim{"maximal-disk-second-order",
                      "The rolling disk on its fork converges at second order to its "
                      "closed-form circle.",
                      "issue 40 item 3", disk},
           OrderClaim{"maximal-car-second-order",
                      "The car assembled from a chassis, a rolling rear wheel and a skated "
                      "front set, driven at its rear axle, converges at second order to the "
                      "reduced car.",
                      "issue 40 item 3; vehicles §5.2.1", car},
           OrderClaim{"maximal-snakeboard-second-order",
                      "The snakeboard assembled from a board, a rotor and two skated wheel "
                      "sets, driven at its rotor and steering, converges at second order to "
                      "the reduced snakeboard.",
                      "issue 40 item 3; vehicles §5.2.2", board},
           OrderClaim{"maximal-snakeboard-gait-second-order",
                      "The maximal snakeboard whose rotor and steering hinges follow the drive "
                      "gait converges at second order to the gait's motion computed by RDP.",
                      "issue 40 item 3; vehicles §5.2.2", gait},
           OrderClaim{"lane-change-second-order",
                      "The tractor with 5 trailers, its steering hinge prescribed through a "
                      "lane change, converges at second order (every body's pose at T).",
                      "issue 40 item 4", lane}}) {
    ctx.add_claim({o.id, o.statement, o.source, order_text(o.c), "fitted order 2 +- 0.1",
                   std::abs(o.c.order - 2.0) <= 0.1});
  }
  ctx.add_claim({"lane-change-trailers-fall-in-line",
                 "After the lane change the trailers fall in line behind the tractor: 14 s of "
                 "straight driving later every trailer is aligned with the tractor and its axle "
                 "is on the line of the tractor's rear axle.",
                 "issue 40 item 4",
                 "tractor moved " + fmt(lane_shift) + " m sideways, final heading " +
                     fmt(final_heading) + " rad; worst trailer heading difference " +
                     fmt(misalignment) + " rad, axle off the line by " + fmt(offset) + " m",
                 "heading difference <= 1e-3 rad and offset <= 1e-3 m",
                 misalignment <= 1e-3 && offset <= 1e-3});
  ctx.add_claim({"maximal-snakeboard-gait-momentum",
                 "The nonholonomic momentum p = <dl/dxi, e1(r)> of the maximal snakeboard "
                 "follows the reduced momentum equation: at every step it agrees with RDP's at "
                 "the same step to O(h^2), as the gait pumps it from 0.",
                 "issue 40 item 3; nonholonomic §6, vehicles eq. (19)",
                 "max over the run |p_maximal - p_RDP| " + [&] {
                   std::string t;
                   for (double e : gait_momentum_gap.errors) t += fmt(e) + " ";
                   return t;
                 }() + "at h = 0.02 .. 0.0025, fitted order " + fmt(gait_momentum_gap.order) +
                     "; p at T = 10 s: " + fmt(gait_p_final) + " kg m^2/s",
                 "fitted order 2 +- 0.2", std::abs(gait_momentum_gap.order - 2.0) <= 0.2});
  ctx.add_claim({"maximal-sleigh-constraint-to-roundoff",
                 "Every step holds the sleigh's discrete skate constraint to round-off (the "
                 "Newton tolerance, 1e-13).",
                 "issue 40 item 3", "max |(A_k + A_k+1) / 2 w_k+1| = " + fmt(worst_constraint) +
                     " over " + fmt(T_long) + " s at h = 0.05",
                 "<= 1e-12", completed && worst_constraint <= 1e-12});
  ctx.add_claim({"maximal-sleigh-energy-bounded",
                 "The sleigh's energy error stays bounded over the long run, without drift.",
                 "issue 40 item 3; nonholonomic §6",
                 "max relative energy error " + fmt(worst_energy) + " (first tenth of the run: " +
                     fmt(worst_energy_first) + ")",
                 "max over the run <= 1.5 x max over its first tenth, and <= 1e-2",
                 completed && worst_energy <= 1.5 * worst_energy_first && worst_energy <= 1e-2});
  ctx.add_claim({"maximal-sleigh-settles",
                 "The maximal sleigh settles to straight motion along its skate, as the "
                 "continuous solution does (GNI's does not: nonholonomic-comparison).",
                 "nonholonomic §6.1",
                 "late |theta_dot| " + fmt(late_theta_dot) + " (continuous " +
                     fmt(std::abs(ref_theta_dot)) + ", initially 1)",
                 "< 1e-6", completed && late_theta_dot < 1e-6});
  std::string measured;
  bool linear = true;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    measured += (i ? ", " : "") + std::string("time(") + std::to_string(sizes[i + 1]) +
                ") / time(" + std::to_string(sizes[i]) + ") = " + fmt(ratios[i]);
    linear = linear && std::abs(ratios[i] - 2.0) <= 0.3;
  }
  measured += " (" + fmt(1e6 * seconds.front()) + " us per step at " +
              std::to_string(sizes.front()) + " trailers)";
  ctx.add_claim({"trailers-linear-time",
                 "A step of a tractor with n trailers, each on an axle that cannot slide "
                 "sideways, costs O(n).",
                 "issue 40 item 4; maximal paper §4", measured, "each ratio 2 +- 0.3", linear});
  run_plot_script(ctx, "python/plots/nonholonomic_maximal.py");
}

}  // namespace

void register_nonholonomic_maximal() {
  register_experiment("nonholonomic-maximal",
                      "nonholonomic constraints in maximal coordinates: the sleigh, disk, car "
                      "and snakeboard against reduced models and a closed form, the snakeboard "
                      "gait against RDP, the trailer train's lane change and linear time",
                      nonholonomic_maximal);
}

}  // namespace marsden::experiments
