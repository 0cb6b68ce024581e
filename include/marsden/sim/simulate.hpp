// One driver for every family: simulate() steps a System (sim/system.hpp) under a failure
// policy, gathers Newton statistics and drift, and hands every output row to a Recorder,
// which streams it (the file recorder of io/recorder.hpp writes CSV and .npz as the run
// goes). Time is t_0 + k dt, never a running sum of steps.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "marsden/sim/system.hpp"
#include "marsden/support/text.hpp"

namespace marsden::sim {

class Feedback;  // sim/feedback.hpp

enum class OnFailure {
  Stop,      // stop at the failed step and keep what was computed
  Subdivide  // retry the step as 2^k substeps of dt / 2^k, k = 1..max_subdivisions
};

struct FailurePolicy {
  OnFailure on_failure = OnFailure::Stop;
  int max_subdivisions = 6;
};

// Where a run is, for a progress report.
struct Progress {
  int steps_done = 0, steps = 0;
  double t = 0.0;       // simulated time reached, s
  double wall_s = 0.0;  // wall time since the start, s
};

struct RunOptions {
  double t0 = 0.0;       // s
  double dt = 0.0;       // s, > 0
  int steps = 0;         // >= 1
  int output_every = 1;  // record every n-th step, the first and the last state
  FailurePolicy policy;
  // Read before each step: once it is true the run ends there, interrupted, with every row
  // so far recorded (a SIGINT or SIGTERM handler sets it; docs/architecture.md).
  const std::atomic<bool>* stop = nullptr;
  // Called after a step when progress_interval_s of wall time have passed since the last
  // call, and once at the end.
  std::function<void(const Progress&)> progress;
  double progress_interval_s = 1.0;
  // A controller closing the loop (sim/feedback.hpp): updated at t_0 and after every
  // (sub)step, so that each step holds u = pi(t_k, x_k) and each row shows the input of its
  // state. The system's controls must be feedback->signal().
  Feedback* feedback = nullptr;
};

// Receives the output rows of a run. begin() comes first, then one row() per recorded
// state, then finish(ok) exactly once, also when the run fails or the recorder throws.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void begin(const Layout& layout) = 0;
  virtual void row(std::span<const double> values) = 0;
  // ok == false: the run stopped early; what was recorded is still complete and kept.
  virtual void finish(bool ok) = 0;
};

// Keeps the rows in memory (tests, bindings).
class MemoryRecorder final : public Recorder {
 public:
  void begin(const Layout& layout) override;
  void row(std::span<const double> values) override;
  void finish(bool ok) override { finished_ok = ok; }

  Layout layout;
  std::vector<double> values;  // rows x columns, row-major
  std::size_t rows = 0;
  bool finished_ok = false;
};

struct SubdivisionEvent {
  int step = 0;    // index of the step that was subdivided
  double t = 0.0;  // its start time, s
  int level = 0;   // k: the step was covered by 2^k substeps of dt / 2^k
};

struct RunSummary {
  bool ok = false;
  std::string message;  // why the run stopped, if !ok
  int steps_requested = 0;
  int steps_done = 0;
  double final_time = 0.0;  // t_0 + steps_done dt
  std::size_t rows_written = 0;
  int newton_min = 0, newton_max = 0;  // iterations per step (all attempts included)
  double newton_mean = 0.0;            // per attempt
  long long newton_total = 0;
  int failures = 0;  // step attempts that did not converge, rescued or not
  std::vector<SubdivisionEvent> subdivisions;
  // The step that ended the run: its index (-1 if none), start time and reason code
  // (StepStatus::code, or "not_converged", "non_finite", "error").
  int failed_step = -1;
  double failed_t = 0.0;
  std::string failed_code;
  double energy_initial = 0.0;
  double energy_drift = 0.0;             // max |E - E0| over the steps done, J
  double energy_drift_relative = 0.0;    // energy_drift / |E0| (NaN if E0 == 0)
  std::vector<double> momentum_initial;  // empty when the system has no momentum
  double momentum_drift = 0.0;           // max ||mu - mu0||_inf
  double momentum_drift_relative = 0.0;
  bool has_constraint = false;
  double constraint_violation_max = 0.0;
  double wall_time_s = 0.0;
  bool interrupted = false;  // RunOptions::stop ended the run (ok is false)
};

// Runs the system for options.steps steps of options.dt from options.t0. A step that fails
// (and cannot be rescued by subdivision) ends the run with ok == false and the state of
// its start recorded; no row holds NaN or infinity. Throws InputError on bad options
// (dt <= 0 or not finite, steps < 1, output_every < 1, max_subdivisions outside 0..30).
RunSummary simulate(System& system, const RunOptions& options, Recorder& recorder);

}  // namespace marsden::sim
