// Scene batches (run/batch.hpp): each run's scene is the base scene with its initial state
// and controls replaced, made into its system on the worker thread that runs it.
#include "marsden/run/batch.hpp"

#include <cmath>

#include <Eigen/Geometry>
#include <type_traits>
#include <variant>

#include "marsden/error.hpp"
#include "marsden/run/run.hpp"

namespace marsden::run {

std::vector<std::string> initial_state_names(const io::Scene& scene) {
  if (std::holds_alternative<io::VehicleScene>(scene.system))
    return {"x", "y", "z", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "vx", "vy", "vz"};
  if (std::holds_alternative<io::PlanarVehicleScene>(scene.system))
    return {"theta", "x", "y", "omega", "v1", "v2"};
  if (const auto* tree = std::get_if<io::TreeScene>(&scene.system)) {
    std::vector<std::string> names;
    for (const tree::Coordinate& c : tree->model->coords()) names.push_back(c.name);
    for (const tree::Coordinate& c : tree->model->coords()) names.push_back("qd_" + c.name);
    return names;
  }
  throw InputError(scene.file + ": initial states from arrays are taken by the holonomic "
                   "vehicles and tree systems; a \"" + scene.system_type + "\" scene keeps its own");
}

void set_initial_state(io::Scene& scene, std::span<const double> state, const std::string& what) {
  const std::vector<std::string> names = initial_state_names(scene);
  if (state.size() != names.size())
    throw InputError(what + ": expected " + std::to_string(names.size()) + " entries (" +
                     names.front() + " .. " + names.back() + "), got " +
                     std::to_string(state.size()));
  for (std::size_t k = 0; k < state.size(); ++k)
    if (!std::isfinite(state[k]))
      throw InputError(what + ": entry " + std::to_string(k) + " (" + names[k] +
                       ") is not finite");
  if (auto* v = std::get_if<io::VehicleScene>(&scene.system)) {
    // As the scene reader turns "quaternion" into a rotation, so that a state given here
    // and the same state in a scene file give the same run to the bit.
    const Eigen::Quaterniond q(state[3], state[4], state[5], state[6]);
    if (!(q.norm() > 0.0)) throw InputError(what + ": the quaternion (qw, qx, qy, qz) is zero");
    v->initial_state.g.x = Vec3(state[0], state[1], state[2]);
    v->initial_state.g.R = q.normalized().toRotationMatrix();
    for (int k = 0; k < 6; ++k) v->initial_state.xi[k] = state[7 + static_cast<std::size_t>(k)];
    return;
  }
  if (auto* v = std::get_if<io::PlanarVehicleScene>(&scene.system)) {
    // As the scene reader builds the pose from theta.
    v->initial_state.g = SE2::from_angle(state[0], Vec2(state[1], state[2]));
    for (int k = 0; k < 3; ++k) v->initial_state.xi[k] = state[3 + static_cast<std::size_t>(k)];
    return;
  }
  auto& tree = std::get<io::TreeScene>(scene.system);
  const Eigen::Index n = tree.model->num_coords();
  tree.q0 = Eigen::Map<const Eigen::VectorXd>(state.data(), n);
  tree.qd0 = Eigen::Map<const Eigen::VectorXd>(state.data() + n, n);
}

void set_controls(io::Scene& scene, std::shared_ptr<const Signal> controls) {
  std::visit([&](auto& setup) { setup.controls = std::move(controls); }, scene.system);
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
    if (state_size > 0)
      set_initial_state(scene, std::span(batch.initial_states).subspan(i * state_size, state_size),
                        "initial_states[" + std::to_string(i) + "]");
    if (!batch.controls.empty()) set_controls(scene, batch.controls[i]);
    return make_system(scene);
  };
  return sim::rollout(batch.runs, make, options, threads);
}

}  // namespace marsden::run
