// Time per step of the maximal-coordinates integrator against the number of links, and
// one Newton system solved by the sparse block LDU against a dense LU (paper Fig. 4c).
// After the Google Benchmark runs, prints time(200) / time(100) per mechanism (and for the
// trailer train from 25 trailers up): the O(n) claim expects about 2.
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <functional>
#include <vector>

#include <benchmark/benchmark.h>

#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"

namespace {

using namespace marsden::maximal;

enum Kind { RevoluteChain, SphericalChain, RevoluteLoop, SphericalLoop, TrailerTrain };

Mechanism build(Kind kind, int n) {
  // n trailers behind a tractor steered at 0.3 rad, all rolling forward at 1 m/s (the
  // first step turns the tractor's velocity onto its steered axle): one skate per body,
  // eliminated at the body (docs/maximal.md, Nonholonomic constraints).
  if (kind == TrailerTrain) {
    Mechanism train = trailer_train(n, 0.3);
    for (BodyState& b : train.state) b.v = marsden::Vec3(1.0, 0.0, 0.0);
    return train;
  }
  ChainOptions options;
  options.joint = kind == SphericalChain || kind == SphericalLoop ? JointType::Spherical
                                                                   : JointType::Revolute;
  return kind == RevoluteLoop || kind == SphericalLoop ? closed_chain(n, options)
                                                       : pendulum_chain(n, options);
}

// Steps with a fresh copy of the initial data every 100 steps (1 s at dt = 10 ms): the
// large loops fold violently later and need a smaller dt (see docs/maximal.md).
void run_steps(benchmark::State& bench, const Mechanism& mech, const StepOptions& options) {
  const Data initial(mech.model, mech.state);
  Data data = initial;
  int since_reset = 0;
  long iterations = 0;
  for (auto _ : bench) {
    const StepStatus status = step(mech.model, data, options);
    iterations += status.newton.iterations;
    if (!status.ok()) {
      bench.SkipWithError(describe(status.failure));
      break;
    }
    if (++since_reset == 100) {
      bench.PauseTiming();
      data = initial;
      since_reset = 0;
      bench.ResumeTiming();
    }
  }
  bench.counters["newton_iters"] =
      benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kAvgIterations);
}

template <Kind kind>
void BM_Step(benchmark::State& bench) {
  run_steps(bench, build(kind, static_cast<int>(bench.range(0))), StepOptions{});
}

void BM_Step_FourBarChain(benchmark::State& bench) {
  StepOptions options;
  options.dt = 0.005;
  run_steps(bench, four_bar_chain(static_cast<int>(bench.range(0)), 1.8), options);
}

template <LinearSolver solver>
void BM_NewtonSystem(benchmark::State& bench) {
  const Mechanism mech = build(RevoluteChain, static_cast<int>(bench.range(0)));
  Data data(mech.model, mech.state);
  StepOptions options;
  options.solver = solver;
  for (auto _ : bench) inspect::newton_system_solve(mech.model, data, options);
}

#define LINKS Arg(10)->Arg(25)->Arg(50)->Arg(100)->Arg(200)->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_Step<RevoluteChain>)->LINKS;
BENCHMARK(BM_Step<SphericalChain>)->LINKS;
BENCHMARK(BM_Step<RevoluteLoop>)->LINKS;
BENCHMARK(BM_Step<SphericalLoop>)->LINKS;
BENCHMARK(BM_Step<TrailerTrain>)->LINKS;
BENCHMARK(BM_Step_FourBarChain)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(12)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NewtonSystem<LinearSolver::SparseLDU>)->LINKS;
BENCHMARK(BM_NewtonSystem<LinearSolver::DenseLU>)
    ->Arg(10)->Arg(25)->Arg(50)->Arg(100)->Unit(benchmark::kMicrosecond);

// Least CPU seconds per step over `repeats` runs of `steps` steps: CPU time and the
// minimum, the figures least disturbed by other load on a shared machine.
double seconds_per_step(Kind kind, int n, int steps, int repeats) {
  const Mechanism mech = build(kind, n);
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    Data data(mech.model, mech.state);
    const std::clock_t start = std::clock();
    for (int k = 0; k < steps; ++k) step(mech.model, data, StepOptions{});
    samples.push_back(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC / steps);
  }
  return *std::min_element(samples.begin(), samples.end());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const char* names[] = {"revolute chain", "spherical chain", "revolute loop", "spherical loop",
                         "trailer train"};
  std::printf("\nO(n) check, CPU time, least of 9 runs of 100 steps (goal 2 +- 0.3):\n");
  for (const Kind kind : {RevoluteChain, SphericalChain, RevoluteLoop, SphericalLoop, TrailerTrain}) {
    const double t100 = seconds_per_step(kind, 100, 100, 9);
    const double t200 = seconds_per_step(kind, 200, 100, 9);
    std::printf("  %-16s time(100) = %8.1f us  time(200) = %8.1f us  ratio = %.2f\n",
                names[kind], 1e6 * t100, 1e6 * t200, t200 / t100);
  }
  // Issue 40's claim for the trailers: time(2n) / time(n) within 2 +- 0.3 from n = 25 to 200.
  for (const int n : {25, 50}) {
    const double t1 = seconds_per_step(TrailerTrain, n, 100, 9);
    const double t2 = seconds_per_step(TrailerTrain, 2 * n, 100, 9);
    std::printf("  %-16s time(%d) = %8.1f us  time(%d) = %8.1f us  ratio = %.2f\n",
                names[TrailerTrain], n, 1e6 * t1, 2 * n, 1e6 * t2, t2 / t1);
  }
  return 0;
}
