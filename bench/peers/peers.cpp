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
#include <vector>

#include "engines.hpp"

namespace {

using namespace peers;

constexpr int kRestartSteps = 100;
// CPU time each engine runs per round and size (whole 100-step runs).
constexpr double kSecondsPerSample = 0.04;

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
