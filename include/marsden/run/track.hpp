// Closed loops over scene files (docs/control.md): runs that return their states, and the
// study `marsden optimize --track` writes beside an optimum: its re-simulation followed by
// time-varying LQR (control/lqr.hpp) from perturbed starts, against the open loop.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "marsden/io/scene.hpp"
#include "marsden/sim/feedback.hpp"
#include "marsden/sim/signal.hpp"
#include "marsden/sim/system.hpp"

namespace marsden::run {

// The scene's system with a HeldInput of `inputs` entries in place of its controls: the
// plant that control::rollout, control::linearize and control::Mpc set inputs on. Throws
// InputError when the scene's family takes no controls.
struct HeldSystem {
  std::shared_ptr<sim::HeldInput> held;
  std::unique_ptr<sim::System> system;
};
HeldSystem held_system(const io::Scene& scene, int inputs);

// The states after every step of a run of the scene's system from x0 (a state of its
// layout), steps of dt from t0: under `controller` when given (inputs saturated to
// [lower, upper], one entry per input or empty for none), else under the scene's own
// controls. A step that fails is retried in substeps, as `marsden simulate` does; a run
// that still fails keeps the states before and says why in `failed`.
struct StateRun {
  Eigen::MatrixXd x;  // (steps done + 1) x state_size
  std::string failed;
};
StateRun run_states(const io::Scene& scene, std::shared_ptr<sim::Controller> controller,
                    const std::vector<double>& lower, const std::vector<double>& upper,
                    const Eigen::VectorXd& x0, double t0, double dt, int steps);

// The largest |x (-) reference| over the configuration: the first half of the state's
// tangent (q of a tree; the pose of a vehicle), in rad or m.
double configuration_error(const sim::System& chart, const Eigen::VectorXd& reference,
                           const Eigen::VectorXd& x);

struct TrackCase {
  std::string entry;   // the perturbed tangent entry, by the state's names
  double offset = 0.0;
  double open_loop_error = 0.0, closed_loop_error = 0.0;  // at the end; +inf when failed
  std::string open_loop_failed;
};
struct TrackSummary {
  bool exact = false;  // the step derivatives were exact (else central differences)
  std::vector<TrackCase> cases;
};

// The re-simulation scene of an optimum (resimulate.json: the optimal controls as tables
// held over each step) followed by TV-LQR from x0 (+) offset e_j, for +offset and -offset
// and every tangent entry j of the configuration (the first half of the state's tangent),
// against its open loop. Weights: Q = I, R = I, Q_N = 100 I; no saturation. Writes
// out_dir/tracking.csv (per case and time: the largest configuration error against the
// nominal, open and closed loop) and out_dir/tracking.json (per case: the final errors).
// Throws InputError when the scene has no controls to feed back.
TrackSummary track_optimum(const io::Scene& resimulation, const std::filesystem::path& out_dir,
                           double offset);

}  // namespace marsden::run
