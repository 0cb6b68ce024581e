// Batch rollouts (sim/batch.hpp) on 2 threads against 1 thread: 64 rigid-body runs and 64
// runs of a 19-link pendulum chain, wall time of each batch, the two thread counts
// interleaved in one process. Prints the speed-up (1-thread time / 2-thread time) per
// round, its median and its spread (min .. max). A plain program: a batch takes 0.1-1 s.
//
//   ./build/release/bench/bench_batch [rounds=7]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "marsden/io/scene.hpp"
#include "marsden/run/batch.hpp"

namespace {

using namespace marsden;

run::SceneBatch make_batch(const char* json, std::size_t runs, unsigned seed, bool rates) {
  run::SceneBatch batch;
  batch.scenes = {io::parse_scene(json, "bench")};
  batch.runs = runs;
  const std::size_t n = run::initial_state_names(batch.scenes[0]).size();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  batch.initial_states.resize(runs * n);
  for (std::size_t i = 0; i < runs; ++i)
    for (std::size_t k = 0; k < n; ++k)
      batch.initial_states[i * n + k] = (rates || k < n / 2) ? u(rng) : 0.0;
  return batch;
}

double seconds(const run::SceneBatch& batch, int threads) {
  const auto start = std::chrono::steady_clock::now();
  const sim::BatchOutput out = run::rollout_scenes(batch, threads);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const sim::RunSummary& r : out.summaries)
    if (!r.ok) std::fprintf(stderr, "a run failed: %s\n", r.message.c_str());
  return s;
}

void report(const char* name, const run::SceneBatch& batch, int rounds) {
  std::vector<double> ratios, one, two;
  seconds(batch, 2);  // warm-up
  for (int r = 0; r < rounds; ++r) {
    // Alternate which goes first, so a drift of the machine's load hits both alike.
    double t1, t2;
    if (r % 2 == 0) {
      t1 = seconds(batch, 1);
      t2 = seconds(batch, 2);
    } else {
      t2 = seconds(batch, 2);
      t1 = seconds(batch, 1);
    }
    one.push_back(t1);
    two.push_back(t2);
    ratios.push_back(t1 / t2);
  }
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  std::sort(one.begin(), one.end());
  std::sort(two.begin(), two.end());
  std::printf("%-28s 1 thread %.3f s, 2 threads %.3f s (medians); speed-up %.2fx "
              "(min %.2f, max %.2f, %d rounds)\n",
              name, one[one.size() / 2], two[two.size() / 2], sorted[sorted.size() / 2],
              sorted.front(), sorted.back(), rounds);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const auto rigid = make_batch(
      R"({"system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
          "integrator": {"method": "vi", "map": "cay", "tangent": "tln", "tolerance": 1e-12},
          "dt": 0.01, "duration": 20.0, "output": {"every": 10}})",
      64, 1, true);
  const auto chain = make_batch(
      R"({"system": {"type": "tree", "model": "n_link_pendulum",
          "parameters": {"n": 19, "length": 0.1, "mass": 0.1}},
          "integrator": {"method": "midpoint", "tolerance": 1e-10},
          "dt": 0.002, "duration": 0.5, "output": {"every": 5}})",
      64, 2, false);
  std::printf("batch rollouts, 2 threads against 1 (goal: >= 1.8x)\n");
  report("64 rigid bodies, 2000 steps", rigid, rounds);
  report("64 19-link chains, 250 steps", chain, rounds);
  return 0;
}
