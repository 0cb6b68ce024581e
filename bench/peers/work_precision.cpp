// Work against precision: for each integrator of Marsden and of its peers and a ladder of
// steps dt, the thread CPU time per simulated second against
//   (a) the trajectory error: max over joints of |q(1 s) - q_ref(1 s)|, rad, against
//       Pinocchio's ABA + RK4 at dt = 0.05 / 2^12 (its own error printed, from the run at
//       twice that step), and
//   (b) the energy error: max over 100 s of |E(t) - E(0)|, J, sampled every 10 ms.
// Integrators: Marsden's tree midpoint VI and Galerkin VIs of order 4 and 6 (Lobatto,
// s = 2, 3) on the tree chains, Marsden's maximal-coordinates VI on the rod chains;
// Pinocchio's ABA with semi-implicit Euler and with RK4; MuJoCo's Euler (semi-implicit),
// implicitfast and RK4. The chains are those of peers.cpp (engines.hpp).
//
// The maximal VI's initial velocities are those of the interval before t = 0
// (docs/maximal.md): its state after k steps is compared with the reference released at
// rest half a step earlier, at t = (k + 1/2) dt. Its energy is that of the last interval,
// its kinetic energy (maximal::energy's) with the mean of the potentials at the interval's
// ends (maximal::energy takes the potential at its end, which makes that energy's error
// first order in dt); the tree VIs' is Pinocchio's at q_k and v_k = M(q_k)^-1 p_k.
//
// The Galerkin VIs' Newton tolerance is 1e-12 here (the default 1e-10 stops their errors at
// about 1e-9 rad on the 2-link chain), the setting of a user after those accuracies; the
// midpoint VI runs at both 1e-10 (the default, cheaper at low accuracy) and 1e-12; the
// maximal VI keeps its default 1e-10 (at 1e-12 its steps below 1 ms fail: the residual's
// round-off, ~1e-12 m/s there, is above it).
//
// Every (integrator, dt) is run once for its errors; the ladder of an integrator stops
// below an error of 1e-11 rad or above 1 s of CPU per simulated second, and the 100 s
// energy run is skipped above 2 s of CPU. Timing: several rounds, in each every point once
// (whole 1 s runs until 20 ms are spent), in an order turned every round. Then, for each
// trajectory accuracy 1e-2 ... 1e-8 rad and energy accuracy 1e-1 ... 1e-8 J, the CPU time
// each integrator needs to reach it (log-log interpolation along its ladder) and the ratio
// Marsden's best / the fastest peer's, per round: median (min-max).
//
// Usage: work_precision [rounds] [csv]   (default 3 rounds; csv: every point, for
//        plot_work_precision.py)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <pinocchio/algorithm/crba.hpp>

#include "engines.hpp"
#include "marsden/tree/galerkin.hpp"

namespace {

using namespace peers;
using Eigen::VectorXd;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kCoarsestDt = 0.05;
constexpr int kLadder = 11;        // dt = 0.05 / 2^j, j = 0..10
constexpr int kReferenceHalvings = 12;
constexpr double kEnergySeconds = 100.0;
constexpr double kEnergyBudget = 2.0;   // CPU seconds for one energy run at most
constexpr double kLadderBudget = 1.0;   // CPU seconds per simulated second at most
constexpr double kLadderFloor = 1e-11;  // rad: below this a finer step shows nothing
constexpr double kSampleSeconds = 0.02;
constexpr double kMarsdenTolerance = 1e-12;
constexpr double kDefaultTolerance = 1e-10;

// One integrator on one chain; configure(dt) before reset().
struct Integrator {
  std::string name;
  bool marsden = false;
  double start_shift = 0.0;  // its t = 0 state is the reference's at start_shift * dt
  virtual ~Integrator() = default;
  virtual void configure(double dt) = 0;
  virtual void reset() = 0;
  virtual void step() = 0;  // throws on a failed step
  virtual void angles(VectorXd& q) = 0;
  virtual double energy() = 0;  // after remember() and a step
  virtual void remember() {}   // before a step whose energy is asked for
};

// Energies of the generalized-coordinate engines, and the tree VIs' velocities.
struct EnergyMeter {
  PinocchioRk4 pin;
  VectorXd v;
  explicit EnergyMeter(const Chain& c) : pin(c), v(c.n) {}
  double at(const VectorXd& q, const VectorXd& qd) { return pin.energy(q, qd); }
  double from_momentum(const VectorXd& q, const VectorXd& p) {
    pinocchio::crba(pin.model, *pin.data, q);
    pin.data->M.triangularView<Eigen::StrictlyLower>() =
        pin.data->M.transpose().triangularView<Eigen::StrictlyLower>();
    v = pin.data->M.ldlt().solve(p);
    return pin.energy(q, v);
  }
};

struct TreeMidpoint : Integrator {
  TreeVi vi;
  EnergyMeter& meter;
  TreeMidpoint(int n, double tolerance, EnergyMeter& m) : vi(n, kCoarsestDt), meter(m) {
    vi.options.newton.tolerance = tolerance;
    char label[64];
    std::snprintf(label, sizeof label, "Marsden midpoint VI, tolerance %.0e", tolerance);
    name = label;
    marsden = true;
  }
  void configure(double dt) override { vi.dt = dt; }
  void reset() override { vi.reset(); }
  void step() override { vi.step(); }
  void angles(VectorXd& q) override { q = vi.x.q; }
  double energy() override { return meter.from_momentum(vi.x.q, vi.x.p); }
};

struct TreeGalerkin : Integrator {
  marsden::tree::Model model;
  marsden::tree::Data data;
  marsden::tree::GalerkinOptions options;
  marsden::tree::GalerkinWorkspace ws;
  marsden::tree::TreeState x0, x, next;
  marsden::tree::MatX none;
  EnergyMeter& meter;
  double dt = kCoarsestDt;
  static marsden::tree::GalerkinOptions with_stages(int s) {
    marsden::tree::GalerkinOptions o;
    o.stages = s;
    o.newton.tolerance = kMarsdenTolerance;
    return o;
  }
  TreeGalerkin(int n, int stages, EnergyMeter& m)
      : model(tree_model(n)), data(model), options(with_stages(stages)), ws(model, options),
        meter(m) {
    name = "Marsden Galerkin VI order " + std::to_string(2 * stages);
    marsden = true;
    VectorXd q = VectorXd::Zero(n);
    q[0] = tree_chain(n).q0;
    x0 = marsden::tree::midpoint_initial_state(model, data, 0.0, q, VectorXd::Zero(n));
  }
  void configure(double dt_) override { dt = dt_; }
  void reset() override { x = x0; }
  void step() override {
    if (!marsden::tree::galerkin_step(model, data, ws, options, dt, x, none, next).converged)
      throw std::runtime_error("Galerkin VI: Newton did not converge");
    std::swap(x, next);
  }
  void angles(VectorXd& q) override { q = x.q; }
  double energy() override { return meter.from_momentum(x.q, x.p); }
};

struct Maximal : Integrator {
  MaximalVi vi;
  explicit Maximal(int n, EnergyMeter& m) : vi(n, kCoarsestDt), meter(m) {
    name = "Marsden maximal VI";
    marsden = true;
    start_shift = 0.5;
  }
  void configure(double dt) override { vi.options.dt = dt; }
  void reset() override { vi.reset(); }
  void step() override { vi.step(); }
  // Joint angles: differences of the rods' angles about y.
  void angles(VectorXd& q) override {
    const int n = static_cast<int>(vi.data.state.size());
    q.resize(n);
    double previous = 0.0;
    for (int i = 0; i < n; ++i) {
      const marsden::Mat3 R = vi.data.state[i].q.matrix();
      const double absolute = std::atan2(R(0, 2), R(2, 2));
      q[i] = std::remainder(absolute - previous, 2.0 * M_PI);
      previous = absolute;
    }
  }
  EnergyMeter& meter;
  VectorXd q;
  double potential_before = 0.0;
  double potential() {
    angles(q);
    return pinocchio::computePotentialEnergy(meter.pin.model, *meter.pin.data, q);
  }
  void remember() override { potential_before = potential(); }
  double energy() override {
    return marsden::maximal::energy(vi.mech.model, vi.data.state) +
           0.5 * (potential_before - potential());
  }
};

struct Pinocchio : Integrator {
  PinocchioRk4 pin;
  EnergyMeter& meter;
  bool rk4;
  Pinocchio(const Chain& c, bool rk4_, EnergyMeter& m) : pin(c), meter(m), rk4(rk4_) {
    name = rk4 ? "Pinocchio ABA + RK4" : "Pinocchio ABA + semi-implicit Euler";
  }
  void configure(double dt) override { pin.dt = dt; }
  void reset() override { pin.reset(); }
  void step() override { rk4 ? pin.step() : pin.step_euler(); }
  void angles(VectorXd& q) override { q = pin.q; }
  double energy() override { return meter.at(pin.q, pin.v); }
};

struct Mujoco : Integrator {
  MujocoRk4 mj;
  EnergyMeter& meter;
  VectorXd q, v;
  Mujoco(const Chain& c, int integrator, const char* label, EnergyMeter& m)
      : mj(c, kCoarsestDt), meter(m) {
    name = std::string("MuJoCo ") + label;
    mj.m->opt.integrator = integrator;
  }
  void configure(double dt) override { mj.m->opt.timestep = dt; }
  void reset() override { mj.reset(); }
  // MuJoCo resets the state itself when its accelerations blow up: that is a failure here.
  void step() override {
    const int bad = mj.d->warning[mjWARN_BADQACC].number;
    mj.step();
    if (mj.d->warning[mjWARN_BADQACC].number != bad)
      throw std::runtime_error("MuJoCo: unstable (bad accelerations)");
  }
  void angles(VectorXd& out) override { out = Eigen::Map<const VectorXd>(mj.d->qpos, mj.m->nq); }
  double energy() override {
    q = Eigen::Map<const VectorXd>(mj.d->qpos, mj.m->nq);
    v = Eigen::Map<const VectorXd>(mj.d->qvel, mj.m->nv);
    return meter.at(q, v);
  }
};

struct System {
  std::string label;
  Chain chain;
  std::vector<std::unique_ptr<Integrator>> integrators;
};

System tree_system(int n, EnergyMeter& meter) {
  System s{"tree chain N = " + std::to_string(n), tree_chain(n), {}};
  s.integrators.push_back(std::make_unique<TreeMidpoint>(n, kDefaultTolerance, meter));
  s.integrators.push_back(std::make_unique<TreeMidpoint>(n, kMarsdenTolerance, meter));
  s.integrators.push_back(std::make_unique<TreeGalerkin>(n, 2, meter));
  s.integrators.push_back(std::make_unique<TreeGalerkin>(n, 3, meter));
  return s;
}

System maximal_system(int n, EnergyMeter& meter) {
  System s{"rod chain n = " + std::to_string(n), rod_chain(n), {}};
  s.integrators.push_back(std::make_unique<Maximal>(n, meter));
  return s;
}

void add_peers(System& s, EnergyMeter& meter) {
  s.integrators.push_back(std::make_unique<Pinocchio>(s.chain, false, meter));
  s.integrators.push_back(std::make_unique<Pinocchio>(s.chain, true, meter));
  s.integrators.push_back(std::make_unique<Mujoco>(s.chain, mjINT_EULER, "Euler", meter));
  s.integrators.push_back(
      std::make_unique<Mujoco>(s.chain, mjINT_IMPLICITFAST, "implicitfast", meter));
  s.integrators.push_back(std::make_unique<Mujoco>(s.chain, mjINT_RK4, "RK4", meter));
}

double ladder_dt(int j) { return kCoarsestDt / std::ldexp(1.0, j); }
long steps_for(double seconds, double dt) { return std::lround(seconds / dt); }

// The reference: Pinocchio's RK4 at dt = 0.05 / 2^halvings, its joint angles at t = 1 s
// and at t = 1 s + dt_j / 2 for every ladder step dt_j.
struct Reference {
  VectorXd at_one;
  std::vector<VectorXd> at_half_step_later;  // by ladder index
};

Reference reference(const Chain& c, int halvings) {
  PinocchioRk4 pin(c);
  pin.dt = ladder_dt(halvings);
  Reference r;
  r.at_half_step_later.resize(kLadder);
  const long one = steps_for(1.0, pin.dt);
  const long last = one + (1L << (halvings - 1));  // 1 s + 0.025 s
  for (long k = 1; k <= last; ++k) {
    pin.step();
    if (k == one) r.at_one = pin.q;
    for (int j = 0; j < kLadder; ++j)
      if (k == one + (1L << (halvings - j - 1))) r.at_half_step_later[j] = pin.q;
  }
  return r;
}

struct Point {
  Integrator* integrator;
  int j;
  double trajectory_error = kInf;
  double energy_error = std::numeric_limits<double>::quiet_NaN();  // not run
  std::vector<double> seconds;  // CPU per simulated second, one per round
};

// Runs a simulated second and returns the joint-angle error; inf when a step fails.
double trajectory_error(Integrator& in, int j, const Reference& ref) {
  const double dt = ladder_dt(j);
  in.configure(dt);
  in.reset();
  VectorXd q;
  try {
    for (long k = 0; k < steps_for(1.0, dt); ++k) in.step();
  } catch (const std::exception&) {
    return kInf;
  }
  in.angles(q);
  const VectorXd& r = in.start_shift > 0.0 ? ref.at_half_step_later[j] : ref.at_one;
  const double e = (q - r).lpNorm<Eigen::Infinity>();
  return std::isfinite(e) ? e : kInf;
}

double energy_error(Integrator& in, int j) {
  const double dt = ladder_dt(j);
  in.configure(dt);
  in.reset();
  in.remember();
  const double e0 = in.energy();
  const long every = std::max(1L, steps_for(0.01, dt));
  double worst = 0.0;
  try {
    for (long k = 1; k <= steps_for(kEnergySeconds, dt); ++k) {
      if (k % every == 0) in.remember();
      in.step();
      if (k % every == 0) worst = std::max(worst, std::abs(in.energy() - e0));
    }
  } catch (const std::exception&) {
    return kInf;
  }
  // Beyond a megajoule (the chains hold at most a few kJ) the run has blown up.
  return worst <= 1e6 ? worst : kInf;
}

double seconds_per_simulated_second(Integrator& in, int j) {
  const double dt = ladder_dt(j);
  in.configure(dt);
  const long steps = steps_for(1.0, dt);
  double spent = 0.0;
  int runs = 0;
  while (spent < kSampleSeconds) {
    in.reset();
    const double start = thread_seconds();
    for (long k = 0; k < steps; ++k) in.step();
    spent += thread_seconds() - start;
    ++runs;
  }
  return spent / runs;
}

// CPU seconds an integrator needs for an error at most `level`: the cheapest ladder point
// that reaches it, or the log-log interpolation on the segment from the point before.
double cost_at(const std::vector<const Point*>& ladder, double level, bool energy, int round) {
  double best = kInf;
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    const double e = energy ? ladder[i]->energy_error : ladder[i]->trajectory_error;
    if (!(e <= level)) continue;
    double t = ladder[i]->seconds[round];
    if (i > 0) {
      const double e_prev = energy ? ladder[i - 1]->energy_error : ladder[i - 1]->trajectory_error;
      const double t_prev = ladder[i - 1]->seconds[round];
      if (std::isfinite(e_prev) && e_prev > level && e > 0.0) {
        const double w = std::log(level / e_prev) / std::log(e / e_prev);
        t = std::exp(std::log(t_prev) + w * (std::log(t) - std::log(t_prev)));
      }
    }
    best = std::min(best, t);
  }
  return best;
}

std::string format_seconds(double s) {
  char buf[32];
  if (!std::isfinite(s)) return "-";
  if (s >= 1.0)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g ms", 1e3 * s);
  else
    std::snprintf(buf, sizeof buf, "%.3g µs", 1e6 * s);
  return buf;
}

// NaN: not run (over the CPU budget); inf: a step failed or the run blew up within 100 s.
std::string format_energy_error(double e) {
  if (std::isnan(e)) return "not run";
  if (!std::isfinite(e)) return "failed or blew up";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", e);
  return buf;
}

void accuracy_table(const System& s, const std::vector<Point>& points, bool energy, int rounds) {
  std::map<const Integrator*, std::vector<const Point*>> ladders;
  for (const Point& p : points) ladders[p.integrator].push_back(&p);
  std::printf("\n%s, %s: CPU time per simulated second to reach the accuracy\n\n",
              s.label.c_str(), energy ? "energy error over 100 s (J)" : "error at 1 s (rad)");
  std::printf("| accuracy | Marsden's best | fastest peer | Marsden / peer |\n");
  std::printf("|---:|---|---|---:|\n");
  const std::vector<double> levels =
      energy ? std::vector<double>{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8}
             : std::vector<double>{1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8};
  for (const double level : levels) {
    std::vector<double> ratio;
    std::vector<double> ours_t, peer_t;
    std::map<std::string, int> ours_name, peer_name;
    for (int r = 0; r < rounds; ++r) {
      double ours = kInf, peer = kInf;
      std::string on, pn;
      for (const auto& [in, ladder] : ladders) {
        const double t = cost_at(ladder, level, energy, r);
        if (in->marsden && t < ours) ours = t, on = in->name;
        if (!in->marsden && t < peer) peer = t, pn = in->name;
      }
      ours_t.push_back(ours);
      peer_t.push_back(peer);
      ++ours_name[on];
      ++peer_name[pn];
      ratio.push_back(ours / peer);
    }
    const auto mode = [](const std::map<std::string, int>& m) {
      return std::max_element(m.begin(), m.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; })
          ->first;
    };
    const double rm = median(ratio);
    const std::string ours_best = mode(ours_name), peer_best = mode(peer_name);
    std::printf("| %.0e | %s, %s | %s, %s | ", level,
                ours_best.empty() ? "none" : ours_best.c_str(),
                format_seconds(median(ours_t)).c_str(),
                peer_best.empty() ? "none" : peer_best.c_str(),
                format_seconds(median(peer_t)).c_str());
    if (std::isfinite(rm) && rm > 0.0)
      std::printf("%.2g (%.2g-%.2g) |\n", rm, *std::min_element(ratio.begin(), ratio.end()),
                  *std::max_element(ratio.begin(), ratio.end()));
    else
      std::printf("%s |\n", std::isfinite(median(ours_t)) ? "0 (no peer reaches it)" : "-");
  }
}

void run_system(System& s, int rounds, std::ofstream* csv) {
  std::printf("\n## %s\n\n", s.label.c_str());
  std::fflush(stdout);
  const Reference ref = reference(s.chain, kReferenceHalvings);
  const Reference coarse = reference(s.chain, kReferenceHalvings - 1);
  std::printf("Reference: Pinocchio ABA + RK4 at dt = %.3g s; |q(1 s)| changes by %.1e rad "
              "from the run at twice that step (its own error about 1/15 of that)\n\n",
              ladder_dt(kReferenceHalvings), (ref.at_one - coarse.at_one).lpNorm<Eigen::Infinity>());
  std::vector<Point> points;
  for (auto& in : s.integrators) {
    for (int j = 0; j < kLadder; ++j) {
      Point p{in.get(), j};
      p.trajectory_error = trajectory_error(*in, j, ref);
      const double once = std::isfinite(p.trajectory_error) ? seconds_per_simulated_second(*in, j)
                                                            : 0.0;
      if (std::isfinite(p.trajectory_error) && kEnergySeconds * once <= kEnergyBudget)
        p.energy_error = energy_error(*in, j);
      if (std::isfinite(p.trajectory_error))
        points.push_back(p);
      else
        std::printf("%s at dt = %.3g s: a step failed (or went unstable) within 1 s\n",
                    in->name.c_str(), ladder_dt(j));
      if (p.trajectory_error < kLadderFloor || once > kLadderBudget) break;
    }
  }
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < points.size(); ++i) {
      Point& p = points[(i + static_cast<std::size_t>(r) * 7) % points.size()];
      p.seconds.push_back(seconds_per_simulated_second(*p.integrator, p.j));
    }
  std::printf("\n| integrator | dt (s) | CPU per simulated s | error at 1 s (rad) | "
              "energy error, 100 s (J) |\n|---|---:|---:|---:|---:|\n");
  for (const Point& p : points)
    std::printf("| %s | %.3g | %s | %.2e | %s |\n", p.integrator->name.c_str(), ladder_dt(p.j),
                format_seconds(median(p.seconds)).c_str(), p.trajectory_error,
                format_energy_error(p.energy_error).c_str());
  if (csv)
    for (const Point& p : points)
      *csv << '"' << s.label << "\",\"" << p.integrator->name << "\","
           << (p.integrator->marsden ? 1 : 0) << ','
           << ladder_dt(p.j) << ',' << median(p.seconds) << ',' << p.trajectory_error << ','
           << p.energy_error << '\n';
  accuracy_table(s, points, false, rounds);
  accuracy_table(s, points, true, rounds);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  if (rounds < 1 || rounds > 100) {
    std::fprintf(stderr, "work_precision: rounds must be in 1..100 (got '%s')\n", argv[1]);
    return 2;
  }
  std::unique_ptr<std::ofstream> csv;
  if (argc > 2) {
    csv = std::make_unique<std::ofstream>(argv[2]);
    if (!*csv) {
      std::fprintf(stderr, "work_precision: cannot write '%s'\n", argv[2]);
      return 2;
    }
    *csv << "system,integrator,marsden,dt,cpu_seconds_per_simulated_second,"
            "trajectory_error_rad,energy_error_J\n";
  }
  mju_user_warning = [](const char*) {};  // instabilities are reported as failed points
  try {
    std::printf("# Work against precision (thread CPU time, %d rounds)\n", rounds);
    for (const int n : {2, 10, 50}) {
      EnergyMeter meter(tree_chain(n));
      System s = tree_system(n, meter);
      add_peers(s, meter);
      run_system(s, rounds, csv.get());
    }
    for (const int n : {10, 50}) {
      EnergyMeter meter(rod_chain(n));
      System s = maximal_system(n, meter);
      add_peers(s, meter);
      run_system(s, rounds, csv.get());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "work_precision: %s\n", e.what());
    return 1;
  }
  return 0;
}
