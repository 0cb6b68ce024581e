// Scene batches (run/batch.hpp): each run's system is made from the base scene (its controls
// replaced) on the worker thread that runs it, and started from its initial state by
// System::set_state.
#include "marsden/run/batch.hpp"

#include "marsden/error.hpp"
#include "marsden/run/run.hpp"

namespace marsden::run {

std::vector<std::string> initial_state_names(const io::Scene& scene) {
  return make_system(scene)->state_names();
}

void set_controls(io::Scene& scene, std::shared_ptr<const sim::Signal> controls) {
  scene.set_controls(std::move(controls));
}

sim::BatchOutput rollout_scenes(const SceneBatch& batch, int threads,
                                const std::atomic<bool>* stop) {
  if (batch.scenes.empty()) throw InputError("rollout: no scene");
  if (batch.scenes.size() != 1 && batch.scenes.size() != batch.runs)
    throw InputError("rollout: expected one scene or one per run (" + std::to_string(batch.runs) +
                     "), got " + std::to_string(batch.scenes.size()));
  if (!batch.controls.empty() && batch.controls.size() != batch.runs)
    throw InputError("rollout: expected a control signal per run (" + std::to_string(batch.runs) +
                     "), got " + std::to_string(batch.controls.size()));
  const io::Scene& base = batch.scenes.front();
  std::size_t state_size = 0;
  if (!batch.initial_states.empty()) {
    state_size = initial_state_names(base).size();
    if (batch.initial_states.size() != batch.runs * state_size)
      throw InputError("initial_states: expected " + std::to_string(batch.runs) + " x " +
                       std::to_string(state_size) + " values, got " +
                       std::to_string(batch.initial_states.size()));
  }
  sim::RunOptions options;
  options.dt = base.dt;
  options.steps = base.steps;
  options.output_every = base.output_every;
  options.policy = base.policy;
  options.stop = stop;
  const sim::SystemFactory make = [&](std::size_t i) {
    io::Scene scene = batch.scenes.size() == 1 ? base : batch.scenes[i];
    if (!batch.controls.empty()) set_controls(scene, batch.controls[i]);
    std::unique_ptr<sim::System> system = make_system(scene);
    if (state_size > 0) {
      try {
        system->set_state(std::span(batch.initial_states).subspan(i * state_size, state_size));
      } catch (const InputError& e) {
        throw InputError("initial_states[" + std::to_string(i) + "]: " + e.what());
      }
    }
    return system;
  };
  return sim::rollout(batch.runs, make, options, threads);
}

}  // namespace marsden::run
