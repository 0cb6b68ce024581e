// Tree engine benchmarks: one midpoint step of N-link pendulums for each way of evaluating
// the Lagrangian (spatial recursion, the paper's cached and uncached recursions), the
// spatial one also with the exact and with the articulated-body Newton matrix at every
// size, RK4 on the continuous dynamics at the same step for reference, one Galerkin step of
// order 2s (s = 1, 2, 3), the 19-link 10 s simulation of the paper's Fig. 3, the
// marionette, and the error at a fixed final time against the CPU time of the run for the
// midpoint and Galerkin VIs. bench/report_tree.py prints the ratios and the fitted growth
// exponent.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/galerkin.hpp"
#include "marsden/tree/midpoint.hpp"

namespace {

using namespace marsden;
using namespace marsden::tree;

constexpr double kDt = 0.01;

// A straight chain released at 0.3 rad from the vertical.
VecX pendulum_start(int n) {
  VecX q = VecX::Zero(n);
  q[0] = 0.3;
  return q;
}

// Times step(x, next) from x0, restarting every 10 s of simulated time so that every N runs
// the same motion; reports the Newton iterations per step.
template <class Step>
void time_steps(benchmark::State& state, int n, const TreeState& x0, Step&& step) {
  TreeState x = x0, next;
  double iterations = 0.0;
  int steps = 0, since_reset = 0;
  for (auto _ : state) {
    const NewtonStatus s = step(x, next);
    if (!s.converged) state.SkipWithError("Newton did not converge");
    iterations += s.iterations;
    ++steps;
    x = ++since_reset == 1000 ? x0 : next;
    if (since_reset == 1000) since_reset = 0;
  }
  state.counters["newton_iterations"] = iterations / std::max(steps, 1);
  state.counters["N"] = n;
}

void midpoint_steps(benchmark::State& state, LagrangianAlgorithm algorithm,
                    int articulated_newton_from = MidpointOptions{}.articulated_newton_from) {
  const int n = static_cast<int>(state.range(0));
  const Model model = n_link_pendulum(n);
  Data data(model);
  MidpointOptions opt;
  opt.algorithm = algorithm;
  opt.articulated_newton_from = articulated_newton_from;
  const VecX none;
  time_steps(state, n, midpoint_initial_state(model, data, 0.0, pendulum_start(n), VecX::Zero(n)),
             [&](const TreeState& x, TreeState& next) {
               return midpoint_step(model, data, opt, kDt, x, none, none, next);
             });
}

void BM_Spatial(benchmark::State& s) { midpoint_steps(s, LagrangianAlgorithm::Spatial); }
// Newton with the exact Jacobian at every size, and with the articulated-body matrix at
// every size (MidpointOptions::articulated_newton_from), either side of the default's switch.
void BM_SpatialExact(benchmark::State& s) {
  midpoint_steps(s, LagrangianAlgorithm::Spatial, 1 << 30);
}
void BM_SpatialArticulated(benchmark::State& s) {
  midpoint_steps(s, LagrangianAlgorithm::Spatial, 0);
}
void BM_PaperCached(benchmark::State& s) { midpoint_steps(s, LagrangianAlgorithm::PaperCached); }
void BM_PaperUncached(benchmark::State& s) {
  midpoint_steps(s, LagrangianAlgorithm::PaperUncached);
}

void BM_Rk4(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Model model = n_link_pendulum(n);
  Data data(model);
  const VecX none;
  VecX q = pendulum_start(n), qd = VecX::Zero(n);
  for (auto _ : state) {
    rk4_step(model, data, kDt, none, q, qd);
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["N"] = n;
}

// The paper's Fig. 3 run: 10 s at dt = 0.01 (1000 steps), whole simulation per iteration.
void BM_Simulation10s(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Model model = n_link_pendulum(n);
  Data data(model);
  const MidpointOptions opt;
  const VecX none;
  for (auto _ : state) {
    TreeState x = midpoint_initial_state(model, data, 0.0, pendulum_start(n), VecX::Zero(n)), next;
    for (int k = 0; k < 1000; ++k) {
      if (!midpoint_step(model, data, opt, kDt, x, none, none, next).converged)
        state.SkipWithError("Newton did not converge");
      x = next;
    }
    benchmark::DoNotOptimize(x.q.data());
  }
  state.counters["N"] = n;
}

void BM_Marionette(benchmark::State& state) {
  const Model model = marionette();
  Data data(model);
  const VecX q0 = marionette_configuration(model, VecX::Zero(model.num_coords()));
  const MidpointOptions opt;
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, VecX::Zero(model.num_coords())), next;
  VecX q_prescribed(model.num_prescribed());
  for (int a = 0; a < model.num_prescribed(); ++a)
    q_prescribed[a] = q0[model.prescribed_coords()[a]];
  const VecX none;
  double iterations = 0.0;
  int steps = 0;
  for (auto _ : state) {
    const NewtonStatus s = midpoint_step(model, data, opt, kDt, x, none, q_prescribed, next);
    if (!s.converged) state.SkipWithError("Newton did not converge");
    iterations += s.iterations;
    ++steps;
    x = next;
  }
  state.counters["newton_iterations"] = iterations / std::max(steps, 1);
  state.counters["N"] = model.num_coords();
}

// One Galerkin step (Lobatto quadrature) of an N-link pendulum at dt = 0.01, s = range(1).
void BM_Galerkin(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Model model = n_link_pendulum(n);
  Data data(model);
  GalerkinOptions opt;
  opt.stages = static_cast<int>(state.range(1));
  GalerkinWorkspace ws(model, opt);
  const MatX none;
  time_steps(state, n, midpoint_initial_state(model, data, 0.0, pendulum_start(n), VecX::Zero(n)),
             [&](const TreeState& x, TreeState& next) {
               return galerkin_step(model, data, ws, opt, kDt, x, none, next);
             });
}

// Accuracy per cost: a 5-link pendulum released at 1 rad, 2 s in range(0) steps; the error
// is max |q(2 s) - q_ref| against RK4 at 1e-4 s (error ~1e-13), the time that of a run.
constexpr int kAccuracyLinks = 5;
constexpr double kAccuracyTime = 2.0;

VecX accuracy_start() {
  VecX q = VecX::Zero(kAccuracyLinks);
  q[0] = 1.0;
  return q;
}

const VecX& accuracy_reference() {
  static const VecX q_ref = [] {
    const Model model = n_link_pendulum(kAccuracyLinks);
    Data data(model);
    VecX q = accuracy_start(), qd = VecX::Zero(kAccuracyLinks);
    for (int k = 0; k < 20000; ++k) rk4_step(model, data, kAccuracyTime / 20000, VecX(), q, qd);
    return q;
  }();
  return q_ref;
}

// stages 0: the midpoint VI; otherwise the Galerkin VI with Lobatto quadrature.
void BM_Accuracy(benchmark::State& state, int stages) {
  const int steps = static_cast<int>(state.range(0));
  const double dt = kAccuracyTime / steps;
  const Model model = n_link_pendulum(kAccuracyLinks);
  Data data(model);
  const MidpointOptions mid;
  GalerkinOptions gal;
  gal.stages = std::max(stages, 1);
  GalerkinWorkspace ws(model, gal);
  const VecX& q_ref = accuracy_reference();
  const VecX none;
  const MatX none_u;
  double error = 0.0;
  for (auto _ : state) {
    TreeState x = midpoint_initial_state(model, data, 0.0, accuracy_start(),
                                         VecX::Zero(kAccuracyLinks)),
              next;
    for (int k = 0; k < steps; ++k) {
      const NewtonStatus s = stages == 0 ? midpoint_step(model, data, mid, dt, x, none, none, next)
                                         : galerkin_step(model, data, ws, gal, dt, x, none_u, next);
      if (!s.converged) state.SkipWithError("Newton did not converge");
      x = next;
    }
    error = (x.q - q_ref).lpNorm<Eigen::Infinity>();
  }
  state.counters["error"] = error;
  state.counters["dt"] = dt;
}
void BM_AccuracyMidpoint(benchmark::State& s) { BM_Accuracy(s, 0); }
void BM_AccuracyGalerkin2(benchmark::State& s) { BM_Accuracy(s, 2); }
void BM_AccuracyGalerkin3(benchmark::State& s) { BM_Accuracy(s, 3); }

void sizes(benchmark::internal::Benchmark* b, int max_n) {
  for (int n : {1, 2, 5, 10, 15, 19, 20, 30, 50, 100, 200})
    if (n <= max_n) b->Arg(n);
}

}  // namespace

BENCHMARK(BM_Spatial)->Name("tree_step/spatial")->Apply([](auto* b) { sizes(b, 200); });
BENCHMARK(BM_SpatialExact)->Name("tree_step/spatial_exact_newton")->Apply([](auto* b) { sizes(b, 200); });
BENCHMARK(BM_SpatialArticulated)->Name("tree_step/spatial_articulated_newton")->Apply([](auto* b) { sizes(b, 200); });
BENCHMARK(BM_PaperCached)->Name("tree_step/paper_cached")->Apply([](auto* b) { sizes(b, 30); });
BENCHMARK(BM_PaperUncached)->Name("tree_step/paper_uncached")->Apply([](auto* b) { sizes(b, 15); });
BENCHMARK(BM_Rk4)->Name("tree_step/rk4")->Apply([](auto* b) { sizes(b, 100); });
BENCHMARK(BM_Galerkin)->Name("tree_galerkin_step/lobatto")->ArgsProduct({{2, 10, 50}, {1, 2, 3}});
BENCHMARK(BM_AccuracyMidpoint)->Name("tree_accuracy/midpoint")->RangeMultiplier(2)->Range(50, 1600)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AccuracyGalerkin2)->Name("tree_accuracy/galerkin_s2")->RangeMultiplier(2)->Range(10, 160)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AccuracyGalerkin3)->Name("tree_accuracy/galerkin_s3")->RangeMultiplier(2)->Range(10, 80)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simulation10s)->Name("tree_sim10s/spatial")->Arg(19)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Marionette)->Name("tree_marionette/spatial");
BENCHMARK_MAIN();
