// Marsden against its peers, one step of the same chain, all three in one process:
// Marsden's tree midpoint VI and maximal-coordinates VI (tolerance 1e-10), Pinocchio's
// articulated-body algorithm (ABA) under classical RK4, and MuJoCo's RK4 (mj_step), the
// peers linked from the C++ libraries of their PyPI wheels (bench/peers/run.sh).
//
// Timing: thread CPU time, the engines interleaved within each round (their order turned
// every round), several rounds; a ratio Marsden / peer is taken within a round, so load
// from other processes that lasts longer than a round affects both sides alike. Every
// engine restarts from the same state every 100 steps (1 s), as bench_tree and
// bench_maximal do, so all run the same motion; the restarts are not timed.
//
// The chains are built here with identical parameters for every engine:
//   tree: N links of 1 m turning about x, a 1 kg ball of radius 0.05 m at each link's end
//         (marsden::tree::n_link_pendulum), released at 0.3 rad;
//   maximal: n uniform rods of 1 m, 1 kg, radius 0.05 m hinged about y at their ends
//         (marsden::maximal::pendulum_chain), released at 0.5 rad.
// Before timing, the program prints how closely they agree: the energy at a common state
// and the first joint's angle after 0.5 s at dt = 10 ms and 1 ms (the VI and RK4 differ
// by O(dt^2); Pinocchio and MuJoCo run the same RK4 and should agree to round-off).
//
// Usage: peers [rounds]   (default 5)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mujoco/mujoco.h>

#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/energy.hpp>
#include <pinocchio/multibody/data.hpp>
#include <pinocchio/multibody/model.hpp>

#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/midpoint.hpp"

namespace {

constexpr double kDt = 0.01;
constexpr double kGravity = 9.81;
constexpr int kRestartSteps = 100;
// CPU time each engine runs per round and size (whole 100-step runs).
constexpr double kSecondsPerSample = 0.04;

double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The chain every engine builds: joint axis, link length, point of the mass on the link
// (from the joint, along the link), mass, inertia about the centre of mass (diagonal).
struct Chain {
  int n;
  int axis;  // 0: x, 1: y
  double length = 1.0;
  double com = 1.0;
  double mass = 1.0;
  Eigen::Vector3d inertia = Eigen::Vector3d::Zero();
  double q0;
};

// MuJoCo refuses bodies without rotational inertia, so the tree's point masses become
// small spheres (radius 0.05 m) in every engine.
constexpr double kBallInertia = 0.4 * 1.0 * 0.05 * 0.05;

Chain tree_chain(int n) { return {n, 0, 1.0, 1.0, 1.0, Eigen::Vector3d::Constant(kBallInertia), 0.3}; }

marsden::tree::Model tree_model(int n) {
  marsden::tree::PendulumParams p;
  p.link_inertia = kBallInertia * marsden::Mat3::Identity();
  return marsden::tree::n_link_pendulum(n, p);
}

Chain rod_chain(int n) {
  const marsden::maximal::ChainOptions o;
  const double across = o.link_mass * (3.0 * o.link_radius * o.link_radius +
                                       o.link_length * o.link_length) / 12.0;
  const double along = 0.5 * o.link_mass * o.link_radius * o.link_radius;
  return {n, 1, o.link_length, 0.5 * o.link_length, o.link_mass,
          Eigen::Vector3d(across, across, along), o.initial_angle};
}

// An engine as the timing loop sees it: back to the initial state, one step, the first
// joint's angle.
struct Engine {
  std::function<void()> reset;
  std::function<void()> step;
  std::function<double()> first_angle;
};

// ---------------------------------------------------------------------------------------
// Pinocchio: the model built in code, ABA under classical RK4, no allocation per step.

struct PinocchioRk4 {
  pinocchio::Model model;
  std::unique_ptr<pinocchio::Data> data;
  Eigen::VectorXd q, v, tau, q_stage, v_stage, a1, a2, a3, a4, q_init;
  double dt = kDt;

  explicit PinocchioRk4(const Chain& c) {
    pinocchio::JointIndex parent = 0;
    for (int i = 0; i < c.n; ++i) {
      const pinocchio::SE3 placement(Eigen::Matrix3d::Identity(),
                                     Eigen::Vector3d(0.0, 0.0, i == 0 ? 0.0 : -c.length));
      const std::string name = "j" + std::to_string(i);
      parent = c.axis == 0 ? model.addJoint(parent, pinocchio::JointModelRX(), placement, name)
                           : model.addJoint(parent, pinocchio::JointModelRY(), placement, name);
      model.appendBodyToJoint(parent,
                              pinocchio::Inertia(c.mass, Eigen::Vector3d(0.0, 0.0, -c.com),
                                                 Eigen::Matrix3d(c.inertia.asDiagonal())),
                              pinocchio::SE3::Identity());
    }
    model.gravity.linear(Eigen::Vector3d(0.0, 0.0, -kGravity));
    data = std::make_unique<pinocchio::Data>(model);
    for (Eigen::VectorXd* x : {&q, &v, &tau, &q_stage, &v_stage, &a1, &a2, &a3, &a4, &q_init})
      x->setZero(c.n);
    q_init[0] = c.q0;
    reset();
  }
  void reset() {
    q = q_init;
    v.setZero();
  }
  // The wheel's libpinocchio_default exports no ABA instantiation: this call instantiates
  // the header template here, with the harness's flags (Release, as Marsden's library).
  void accel(const Eigen::VectorXd& qq, const Eigen::VectorXd& vv, Eigen::VectorXd& a) {
    a = pinocchio::aba(model, *data, qq, vv, tau);
  }
  void step() {
    accel(q, v, a1);
    q_stage = q + 0.5 * dt * v;
    v_stage = v + 0.5 * dt * a1;
    accel(q_stage, v_stage, a2);
    q_stage = q + 0.5 * dt * v_stage;
    v_stage = v + 0.5 * dt * a2;
    accel(q_stage, v_stage, a3);
    q_stage = q + dt * v_stage;
    v_stage = v + dt * a3;
    accel(q_stage, v_stage, a4);
    q += dt * v + (dt * dt / 6.0) * (a1 + a2 + a3);
    v += (dt / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
  }
  double energy(const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
    return pinocchio::computeKineticEnergy(model, *data, qq, vv) +
           pinocchio::computePotentialEnergy(model, *data, qq);
  }
};

// ---------------------------------------------------------------------------------------
// MuJoCo: the model from an MJCF string written here, mj_step with its RK4 integrator.

std::string mjcf(const Chain& c, double dt) {
  const char* axis = c.axis == 0 ? "1 0 0" : "0 1 0";
  char buf[512];
  std::string bodies;
  for (int i = 0; i < c.n; ++i) {
    std::snprintf(buf, sizeof buf,
                  "<body pos=\"0 0 %g\"><joint type=\"hinge\" axis=\"%s\"/>"
                  "<inertial pos=\"0 0 %.17g\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>",
                  i == 0 ? 0.0 : -c.length, axis, -c.com, c.mass, c.inertia.x(), c.inertia.y(),
                  c.inertia.z());
    bodies += buf;
  }
  for (int i = 0; i < c.n; ++i) bodies += "</body>";
  std::snprintf(buf, sizeof buf,
                "<mujoco><option timestep=\"%.17g\" integrator=\"RK4\" gravity=\"0 0 %.17g\">"
                "<flag contact=\"disable\"/></option><worldbody>",
                dt, -kGravity);
  return buf + bodies + "</worldbody></mujoco>";
}

struct MujocoRk4 {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  double q0;

  MujocoRk4(const Chain& c, double dt) : q0(c.q0) {
    const std::string xml = mjcf(c, dt);
    auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    mj_addBufferVFS(vfs.get(), "chain.xml", xml.data(), static_cast<int>(xml.size()));
    char error[1000] = "";
    m = mj_loadXML("chain.xml", vfs.get(), error, sizeof error);
    mj_deleteVFS(vfs.get());
    if (!m) throw std::runtime_error(std::string("MuJoCo could not load the chain: ") + error);
    d = mj_makeData(m);
    reset();
  }
  ~MujocoRk4() {
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  MujocoRk4(const MujocoRk4&) = delete;
  MujocoRk4& operator=(const MujocoRk4&) = delete;
  void reset() {
    mj_resetData(m, d);
    d->qpos[0] = q0;
  }
  void step() { mj_step(m, d); }
  double energy(const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    m->opt.enableflags |= mjENBL_ENERGY;
    for (int i = 0; i < m->nq; ++i) {
      d->qpos[i] = q[i];
      d->qvel[i] = v[i];
    }
    mj_forward(m, d);
    m->opt.enableflags &= ~mjENBL_ENERGY;
    const double e = d->energy[0] + d->energy[1];
    reset();
    return e;
  }
};

// ---------------------------------------------------------------------------------------
// Marsden's engines.

struct TreeVi {
  marsden::tree::Model model;
  marsden::tree::Data data;
  marsden::tree::MidpointOptions options;  // tolerance 1e-10
  marsden::tree::TreeState x0, x, next;
  marsden::tree::VecX none;
  double dt;

  TreeVi(int n, double dt_) : model(tree_model(n)), data(model), dt(dt_) {
    marsden::tree::VecX q = marsden::tree::VecX::Zero(n);
    q[0] = tree_chain(n).q0;
    x0 = marsden::tree::midpoint_initial_state(model, data, 0.0, q, marsden::tree::VecX::Zero(n));
    reset();
  }
  void reset() { x = x0; }
  void step() {
    if (!marsden::tree::midpoint_step(model, data, options, dt, x, none, none, next).converged)
      throw std::runtime_error("tree VI: Newton did not converge");
    std::swap(x, next);
  }
};

struct MaximalVi {
  marsden::maximal::Mechanism mech;
  marsden::maximal::Data initial, data;
  marsden::maximal::StepOptions options;  // tolerance 1e-10

  MaximalVi(int n, double dt)
      : mech(marsden::maximal::pendulum_chain(n)),
        initial(mech.model, mech.state),
        data(initial) {
    options.dt = dt;
  }
  void reset() { data = initial; }
  void step() {
    const auto status = marsden::maximal::step(mech.model, data, options);
    if (!status.ok())
      throw std::runtime_error(std::string("maximal VI: ") + describe(status.failure));
  }
  // The first rod's angle about y, from its orientation.
  double first_angle() const {
    const marsden::Mat3 R = data.state[0].q.matrix();
    return std::atan2(R(0, 2), R(2, 2));
  }
};

// ---------------------------------------------------------------------------------------
// Agreement and timing.

double angle_after(Engine& e, int steps) {
  e.reset();
  for (int k = 0; k < steps; ++k) e.step();
  return e.first_angle();
}

// Seconds of thread CPU time per step, over whole 100-step runs from the initial state
// until at least `budget` seconds are spent (the restarts untimed).
double seconds_per_step(Engine& e, double budget) {
  double spent = 0.0;
  long steps = 0;
  while (spent < budget) {
    e.reset();
    const double start = thread_seconds();
    for (int k = 0; k < kRestartSteps; ++k) e.step();
    spent += thread_seconds() - start;
    steps += kRestartSteps;
  }
  return spent / static_cast<double>(steps);
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t m = x.size() / 2;
  return x.size() % 2 ? x[m] : 0.5 * (x[m - 1] + x[m]);
}

// Times engines[0] (Marsden) and the peers interleaved, prints one row.
void time_row(const char* engine, int n, std::vector<Engine>& engines, int rounds) {
  const std::size_t k = engines.size();
  std::vector<std::vector<double>> t(k);
  for (Engine& e : engines) seconds_per_step(e, 0.2 * kSecondsPerSample);  // warm up
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t e = (j + static_cast<std::size_t>(r)) % k;
      t[e].push_back(seconds_per_step(engines[e], kSecondsPerSample));
    }
  std::printf("| %-7s | %4d | %9.2f µs |", engine, n, 1e6 * median(t[0]));
  for (std::size_t p = 1; p < k; ++p) {
    std::vector<double> ratio(static_cast<std::size_t>(rounds));
    for (int r = 0; r < rounds; ++r) ratio[r] = t[0][r] / t[p][r];
    std::printf(" %5.2f (%4.2f-%4.2f), %8.2f µs |", median(ratio),
                *std::min_element(ratio.begin(), ratio.end()),
                *std::max_element(ratio.begin(), ratio.end()), 1e6 * median(t[p]));
  }
  std::printf("\n");
  std::fflush(stdout);
}

std::vector<Engine> tree_engines(TreeVi& vi, PinocchioRk4& pin, MujocoRk4& mj) {
  return {{[&] { vi.reset(); }, [&] { vi.step(); }, [&] { return vi.x.q[0]; }},
          {[&] { pin.reset(); }, [&] { pin.step(); }, [&] { return pin.q[0]; }},
          {[&] { mj.reset(); }, [&] { mj.step(); }, [&] { return mj.d->qpos[0]; }}};
}

std::vector<Engine> maximal_engines(MaximalVi& vi, PinocchioRk4& pin, MujocoRk4& mj) {
  return {{[&] { vi.reset(); }, [&] { vi.step(); }, [&] { return vi.first_angle(); }},
          {[&] { pin.reset(); }, [&] { pin.step(); }, [&] { return pin.q[0]; }},
          {[&] { mj.reset(); }, [&] { mj.step(); }, [&] { return mj.d->qpos[0]; }}};
}

// First joint's angle at t = 0.5 s with dt = 10 ms and 1 ms: |Marsden - Pinocchio| and
// |Pinocchio - MuJoCo|. The maximal VI's initial velocities are those of the interval
// before t = 0 (state_from_joint_coordinates): at rest at t = -dt/2, not at t = 0; there
// the peers take steps of dt/2 and one more, so that all three start at rest together.
template <class Vi>
void check_trajectories(const char* engine, int n, const Chain& chain, bool half_step_shift,
                        std::vector<Engine> (*engines)(Vi&, PinocchioRk4&, MujocoRk4&)) {
  std::printf("  %-7s %s = %3d: first angle at 0.5 s", engine, half_step_shift ? "n" : "N", n);
  for (const double dt : {0.01, 0.001}) {
    const double dt_peer = half_step_shift ? 0.5 * dt : dt;
    Vi vi(n, dt);
    PinocchioRk4 pin(chain);
    pin.dt = dt_peer;
    MujocoRk4 mj(chain, dt_peer);
    auto e = engines(vi, pin, mj);
    const int steps = static_cast<int>(std::lround(0.5 / dt));
    const int peer_steps = half_step_shift ? 2 * steps + 1 : steps;
    const double a_vi = angle_after(e[0], steps), a_pin = angle_after(e[1], peer_steps),
                 a_mj = angle_after(e[2], peer_steps);
    std::printf(", dt = %g: %.4f, |VI - ABA| %.1e, |ABA - MuJoCo| %.1e", dt, a_vi,
                std::abs(a_vi - a_pin), std::abs(a_pin - a_mj));
  }
  std::printf("\n");
}

// Energy at a common state with every joint moving: the masses, inertias and geometry.
void check_tree_energy(int n) {
  const Chain chain = tree_chain(n);
  marsden::tree::VecX q(n), v(n);
  for (int i = 0; i < n; ++i) {
    q[i] = 0.4 * std::sin(1.0 + i);
    v[i] = 0.7 * std::cos(2.0 + i);
  }
  TreeVi vi(n, kDt);
  PinocchioRk4 pin(chain);
  MujocoRk4 mj(chain, kDt);
  const double e_vi = marsden::tree::energy(vi.model, vi.data, q, v);
  const double e_pin = pin.energy(q, v), e_mj = mj.energy(q, v);
  std::printf("  tree    N = %3d: energy %.6f J, |Marsden - Pinocchio| %.1e, "
              "|Pinocchio - MuJoCo| %.1e\n",
              n, e_vi, std::abs(e_vi - e_pin), std::abs(e_pin - e_mj));
}

// Energy at the initial state (at rest: the masses and their positions).
void check_maximal_energy(int n) {
  const Chain chain = rod_chain(n);
  const MaximalVi vi(n, kDt);
  PinocchioRk4 pin(chain);
  MujocoRk4 mj(chain, kDt);
  const double e_vi = marsden::maximal::energy(vi.mech.model, vi.data.state);
  const double e_pin = pin.energy(pin.q, pin.v), e_mj = mj.energy(pin.q, pin.v);
  std::printf("  maximal n = %3d: energy at rest %.6f J, |Marsden - Pinocchio| %.1e, "
              "|Pinocchio - MuJoCo| %.1e\n",
              n, e_vi, std::abs(e_vi - e_pin), std::abs(e_pin - e_mj));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  if (rounds < 1 || rounds > 1000) {
    std::fprintf(stderr, "peers: rounds must be in 1..1000 (got '%s')\n", argv[1]);
    return 2;
  }
  const std::vector<int> tree_sizes{2, 5, 10, 50, 100, 200};
  const std::vector<int> maximal_sizes{10, 50, 100, 200};
  try {
    std::printf("Agreement (same chains in all three engines):\n");
    for (const int n : tree_sizes) check_tree_energy(n);
    for (const int n : {2, 10, 50}) check_trajectories<TreeVi>("tree", n, tree_chain(n), false, tree_engines);
    for (const int n : maximal_sizes) check_maximal_energy(n);
    for (const int n : {10, 50})
      check_trajectories<MaximalVi>("maximal", n, rod_chain(n), true, maximal_engines);

    std::printf("\nOne step at dt = 10 ms, thread CPU time, %d interleaved rounds; ratio "
                "Marsden / peer: median (min-max over rounds), then the peer's median time\n\n",
                rounds);
    std::printf("| engine  |    n |   Marsden    | / Pinocchio ABA + RK4          "
                "| / MuJoCo RK4                   |\n");
    std::printf("|---------|-----:|-------------:|-------------------------------:"
                "|-------------------------------:|\n");
    for (const int n : tree_sizes) {
      TreeVi vi(n, kDt);
      PinocchioRk4 pin(tree_chain(n));
      MujocoRk4 mj(tree_chain(n), kDt);
      auto e = tree_engines(vi, pin, mj);
      time_row("tree", n, e, rounds);
    }
    for (const int n : maximal_sizes) {
      MaximalVi vi(n, kDt);
      PinocchioRk4 pin(rod_chain(n));
      MujocoRk4 mj(rod_chain(n), kDt);
      auto e = maximal_engines(vi, pin, mj);
      time_row("maximal", n, e, rounds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peers: %s\n", e.what());
    return 1;
  }
  return 0;
}
