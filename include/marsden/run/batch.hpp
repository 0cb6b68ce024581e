// Batch rollouts of a scene (sim/batch.hpp) from arrays: per run an initial state and a
// control signal replacing the scene's, or one scene per run (parameters differ). The
// Python binding marsden.rollout and bench/bench_batch use it.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "marsden/io/scene.hpp"
#include "marsden/sim/batch.hpp"

namespace marsden::run {

// The names of a scene's initial state vector, in order: its system's
// System::state_names() (for the SE(3) vehicles x, y, z, qw, qx, qy, qz, wx, wy, wz, vx, vy,
// vz; for tree systems q then qd_ per coordinate; docs/architecture.md lists every family).
std::vector<std::string> initial_state_names(const io::Scene& scene);

// Replaces the scene's controls (io::Scene::set_controls).
void set_controls(io::Scene& scene, std::shared_ptr<const sim::Signal> controls);

struct SceneBatch {
  std::vector<io::Scene> scenes;  // one (every run) or one per run
  std::size_t runs = 0;
  // runs x initial_state_names(scene).size(), row-major, each row given to the run's
  // System::set_state; empty: the scenes' own states.
  std::vector<double> initial_states;
  // One per run, or empty: the scenes' own controls.
  std::vector<std::shared_ptr<const sim::Signal>> controls;
};

// Runs the batch over `threads` threads (0: one per hardware thread) with the first scene's
// dt, steps, output_every and failure policy (sim::rollout). Throws InputError naming the
// run for bad states, and when the scenes are not of one model.
sim::BatchOutput rollout_scenes(const SceneBatch& batch, int threads,
                                const std::atomic<bool>* stop = nullptr);

}  // namespace marsden::run
