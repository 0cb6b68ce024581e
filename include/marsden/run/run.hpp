// Running parsed files as the command line does: a scene simulated into a folder of
// outputs, a problem solved into another. io/ parses files into typed objects; this layer
// runs them (sim::simulate, control::solve_with_ipopt) and writes what they produce
// (record/).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

#include "marsden/io/problem.hpp"
#include "marsden/io/scene.hpp"

namespace marsden::run {

// What a run did (sim/simulate.hpp): status, Newton statistics, subdivisions, drift.
using SceneRunSummary = sim::RunSummary;

// The scene's system, ready for sim::simulate (sim::make_*_system on its setup). Throws
// InputError naming the file when the setup is inconsistent, SolverError when the initial
// state cannot be set up.
std::unique_ptr<sim::System> make_system(const io::Scene& scene);

// What a caller adds to a run: an interrupt flag and a progress report (the command's
// SIGINT and SIGTERM handler and its line on standard error; Python's callback).
struct RunControl {
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const sim::Progress&)> progress;
  double progress_interval_s = 1.0;
  // Optimisation: every Ipopt iteration's number, objective and constraint violation.
  std::function<void(int iteration, double objective, double infeasibility)> solver_progress;
};

// Simulates the scene with sim::simulate and writes OUT_DIR/trajectory.csv (streamed row
// by row), OUT_DIR/trajectory.npz and OUT_DIR/summary.json, each under its final name
// only when complete; creates OUT_DIR if needed. A step that does not converge (and cannot
// be rescued by subdivision) ends the run with ok == false; everything computed until then
// is written, never a NaN. An interrupt (control.stop) ends it the same way, with status
// "interrupted" in summary.json. Throws InputError if an output file cannot be written.
SceneRunSummary run_scene(const io::Scene& scene, const std::filesystem::path& out_dir,
                          const RunControl& control = {});

struct OptimizeSummary {
  control::NlpSolution solution;
  double resimulation_error = 0.0;  // +inf if the re-simulation failed
  double min_clearance = 0.0;
  std::string resimulation_message;
  bool ok = false;                  // solved, and the re-simulation reproduces the solution
  std::string message;
};

// Solves the problem with Ipopt from warm_start (empty: the problem's initial guess) and
// re-simulates the solution: status, re-simulation error, clearance, ok (solved and
// reproduced to 1e-6) and a message. Throws InputError for a warm start of the wrong size.
OptimizeSummary solve_problem(io::Problem& problem, const control::IpoptOptions& options,
                              const control::VecX& warm_start);

// Solves the problem (solve_problem) and writes to out_dir: trajectory.csv (states at the knots),
// controls.csv (controls held over each step), trajectory.npz (both), summary.json,
// decision_vector.txt (for warm starts) and ipopt.log (the solver's iterations). Outputs
// are written whatever the outcome, and summary.json says whether the point is a solution.
// control.stop ends the solve at the next Ipopt iteration (status "interrupted"; the
// outputs of the last iterate are written as for any other outcome).
OptimizeSummary run_problem(io::Problem& problem, const std::filesystem::path& out_dir,
                            const RunControl& control = {});

}  // namespace marsden::run
