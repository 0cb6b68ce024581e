// nonholonomic-maximal: nonholonomic constraints in maximal coordinates (docs/maximal.md,
// Nonholonomic constraints; issue 40). The nonholonomic paper's §6 sleigh rerun with the
// maximal engine (a body on a planar joint with a skate) against the reduced model's
// continuous equations, the rolling disk against its closed-form circle, the car and the
// snakeboard driven by torques against their reduced models, and the tractor with trailers
// for the linear-time claim. Claims as measured:
//   - the maximal sleigh, disk, car and snakeboard converge at second order (fitted order
//     2 +- 0.1);
//   - the sleigh holds its discrete skate constraint to round-off at every step of a long
//     run, its energy stays bounded without drift, and it settles to straight motion as the
//     continuous solution does (GNI does not: nonholonomic-comparison);
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

// Steps `n` times; `each(k, before, after)` after every step. False on a failed step.
bool run(ExperimentContext& ctx, Mechanism& mech, double dt, long n,
         const std::function<void(long, const std::vector<BodyState>&, const Data&)>& each = {},
         const std::function<void(double, std::vector<double>&)>& inputs = {},
         double tolerance = 1e-13) {
  Data data(mech.model, mech.state);
  StepOptions options;
  options.dt = dt;
  options.newton.tolerance = tolerance;
  for (long k = 0; k < n; ++k) {
    if (inputs) inputs(double(k) * dt, data.joint_input);
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
                    maximal::JointCoords()},
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
      if (run(ctx, mech, dt, n, {}, driven[v].inputs, 1e-12))
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
    const maximal::VelocityConstraint& c = s.model.velocity_constraints()[0];
    maximal::VelocityRows A_k, A_kp1;
    maximal::velocity_constraint_rows(c, before[0].q.matrix(), A_k);
    maximal::velocity_constraint_rows(c, data.state[0].q.matrix(), A_kp1);
    Vec6 w;
    w << data.state[0].v, data.state[0].omega;
    worst_constraint = std::max(worst_constraint, std::abs((0.5 * (A_k + A_kp1) * w)(0)));
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
                      "issue 40 item 3; vehicles §5.2.2", board}}) {
    ctx.add_claim({o.id, o.statement, o.source, order_text(o.c), "fitted order 2 +- 0.1",
                   std::abs(o.c.order - 2.0) <= 0.1});
  }
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
                      "nonholonomic constraints in maximal coordinates: the sleigh and the "
                      "rolling disk against the reduced model and a closed form, and the "
                      "trailer train's linear time",
                      nonholonomic_maximal);
}

}  // namespace marsden::experiments
