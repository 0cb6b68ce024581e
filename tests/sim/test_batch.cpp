// Batch rollouts (sim/batch.hpp, run/batch.hpp): every run of a batch is bit for bit the
// run sim::simulate gives alone from the same System::set_state, whatever the number of
// threads; failures and bad states are reported per run; maximal and nonholonomic scenes
// take initial states as every family does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/run/batch.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/batch.hpp"

namespace marsden::run {
namespace {

io::Scene rigid_body_scene() {
  return io::parse_scene(R"({"system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
    "integrator": {"method": "vi"}, "dt": 0.01, "duration": 0.5, "output": {"every": 3}})",
                         "rigid_body");
}

io::Scene chain_scene() {
  return io::parse_scene(R"({"system": {"type": "tree", "model": "n_link_pendulum",
    "parameters": {"n": 5, "length": 0.1, "mass": 0.1}},
    "integrator": {"method": "midpoint", "tolerance": 1e-10}, "dt": 0.005, "duration": 0.2})",
                         "chain");
}

std::vector<double> random_states(const io::Scene& scene, std::size_t runs, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t n = initial_state_names(scene).size();
  std::vector<double> states(runs * n);
  for (double& x : states) x = u(rng);
  return states;
}

// Every run of the batch against sim::simulate of the same scene alone, to the bit.
void expect_batch_equals_single_runs(const SceneBatch& batch, int threads) {
  const sim::BatchOutput out = rollout_scenes(batch, threads);
  const std::size_t columns = out.layout.columns.size();
  const std::size_t n = batch.initial_states.size() / batch.runs;
  for (std::size_t i = 0; i < batch.runs; ++i) {
    const io::Scene& scene = batch.scenes.front();
    auto system = make_system(scene);
    system->set_state(std::span(batch.initial_states).subspan(i * n, n));
    sim::RunOptions options;
    options.dt = scene.dt;
    options.steps = scene.steps;
    options.output_every = scene.output_every;
    sim::MemoryRecorder rows;
    const sim::RunSummary alone = sim::simulate(*system, options, rows);
    ASSERT_TRUE(alone.ok);
    ASSERT_EQ(rows.rows, out.rows_per_run);
    EXPECT_EQ(out.summaries[i].ok, alone.ok);
    EXPECT_EQ(out.summaries[i].newton_total, alone.newton_total);
    EXPECT_EQ(std::memcmp(rows.values.data(), out.values.data() + i * out.rows_per_run * columns,
                          rows.values.size() * sizeof(double)),
              0)
        << "run " << i;
  }
}

TEST(Batch, RowsOfRun) {
  EXPECT_EQ(sim::rows_of_run(10, 1), 11u);
  EXPECT_EQ(sim::rows_of_run(10, 3), 5u);  // 0, 3, 6, 9, 10
  EXPECT_EQ(sim::rows_of_run(9, 3), 4u);   // 0, 3, 6, 9
}

TEST(Batch, RigidBodyRunsEqualSingleRunsBitForBit) {
  SceneBatch batch;
  batch.scenes = {rigid_body_scene()};
  batch.runs = 12;
  batch.initial_states = random_states(batch.scenes[0], batch.runs, 7);
  for (int threads : {1, 2, 3}) expect_batch_equals_single_runs(batch, threads);
}

TEST(Batch, ChainRunsEqualSingleRunsBitForBit) {
  SceneBatch batch;
  batch.scenes = {chain_scene()};
  batch.runs = 6;
  batch.initial_states = random_states(batch.scenes[0], batch.runs, 11);
  for (std::size_t k = batch.initial_states.size() / 2; k < batch.initial_states.size(); ++k)
    batch.initial_states[k] = 0.0;  // rates: the chain's states are random angles at rest
  for (int threads : {1, 2}) expect_batch_equals_single_runs(batch, threads);
}

TEST(Batch, BadStateNamesTheRunAndEntry) {
  SceneBatch batch;
  batch.scenes = {rigid_body_scene()};
  batch.runs = 3;
  batch.initial_states = random_states(batch.scenes[0], batch.runs, 3);
  batch.initial_states[13 * 2 + 8] = std::nan("");
  try {
    rollout_scenes(batch, 2);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("run 2: initial_states[2]: vehicle state: entry 8 (wy)"),
              std::string::npos)
        << e.what();
  }
  batch.initial_states.pop_back();
  EXPECT_THROW(rollout_scenes(batch, 2), InputError);
}

TEST(Batch, FailedRunKeepsItsRowsAndPadsWithNaN) {
  // A spin too fast for the VI's Newton at this dt fails, the others run to the end.
  io::Scene scene = io::parse_scene(
      R"({"system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
    "integrator": {"method": "vi", "max_iterations": 3}, "dt": 0.1, "duration": 1.0})",
      "rigid_body");
  SceneBatch batch;
  batch.scenes = {scene};
  batch.runs = 2;
  batch.initial_states = {0, 0, 0, 1, 0, 0, 0, 0.1, 0.2, 0.1, 0, 0, 0,
                          0, 0, 0, 1, 0, 0, 0, 40, 90, 30, 0, 0, 0};
  const sim::BatchOutput out = rollout_scenes(batch, 2);
  ASSERT_TRUE(out.summaries[0].ok);
  ASSERT_FALSE(out.summaries[1].ok);
  const std::size_t columns = out.layout.columns.size();
  const std::size_t written = out.summaries[1].rows_written;
  ASSERT_LT(written, out.rows_per_run);
  const double* run1 = out.values.data() + out.rows_per_run * columns;
  EXPECT_TRUE(std::isfinite(run1[(written - 1) * columns + 1]));
  EXPECT_TRUE(std::isnan(run1[written * columns + 1]));
}

}  // namespace
}  // namespace marsden::run
