// Experiments: named, reproducible runs that check claims of the papers and write
// OUT_DIR/results.json. Experiments are registered explicitly (register_experiment, or in
// register_builtin_experiments) and run by name, e.g. `marsden experiment run NAME`.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "marsden/record/writers.hpp"
#include "marsden/run/python.hpp"

namespace marsden::experiments {

// One checked statement, e.g. "the VI keeps the energy error bounded over 1000 periods".
struct Claim {
  std::string id;         // short stable key, e.g. "energy-bounded"
  std::string statement;  // what is claimed, in words
  std::string source;     // paper and figure or section, e.g. "vehicles, Fig. 3"
  std::variant<std::string, double> measured;
  std::string expected;   // the criterion, e.g. "< 1e-3"
  bool holds = false;
};

// What a caller adds to a run (the command's SIGINT and SIGTERM handler and its line on
// standard error): a flag that ends the run at the experiment's next safe point, and a
// report of the part under way with the seconds since the run began, called when a part
// begins and about once a second while it runs.
struct ExperimentControl {
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string& experiment, const std::string& part, double elapsed_s)>
      progress;
};

// Thrown by ExperimentContext::part, poll and run_python once the stop flag is raised;
// run_experiment catches it and writes results.json with "status": "interrupted".
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ExperimentContext {
 public:
  ExperimentContext(std::string experiment, std::filesystem::path out_dir, bool quick,
                    ExperimentControl control = {});

  const std::string& experiment() const { return experiment_; }
  const std::filesystem::path& out_dir() const { return out_dir_; }
  // A short run (CI, smoke test) rather than the full reproduction.
  bool quick() const { return quick_; }

  // Parameters are stored in insertion order; a repeated name replaces the value.
  void add_parameter(const std::string& name, record::Json value);
  // A file the experiment wrote; a path inside out_dir is recorded relative to it.
  void add_data_file(const std::filesystem::path& path, std::string description);
  void add_claim(Claim claim);
  void add_note(std::string note);

  const std::vector<Claim>& claims() const { return claims_; }
  // True when every claim holds (also when there are none).
  bool all_claims_hold() const;

  // Safe points. part() names the part that begins (reported as progress); poll() may be
  // called as often as wanted inside a part. Both throw Interrupted once the stop flag is
  // raised, so an experiment must leave no partial file under a final name when they do
  // (record::CsvWriter::Staging::Hidden, record::Json::write_file).
  void part(std::string name);
  void poll();
  // The stop flag, for runs an experiment starts (run::RunControl::stop); may be null.
  const std::atomic<bool>* stop_flag() const { return control_.stop; }
  // Runs `python args...` through run::run_python, with the Python that the rest of
  // Marsden starts (run::python_command()), in a process group of its own, and returns
  // what it did (its output and environment as options say; their stop is replaced by this
  // context's, which reports the progress while the child runs). When the stop flag is
  // raised meanwhile, the group gets SIGINT (SIGKILL 10 s later if it is still there) and
  // Interrupted is thrown once it has ended; a child killed by SIGINT throws the same.
  run::PythonRun run_python(const std::vector<std::string>& args, run::PythonOptions options = {});

  // Writes out_dir/results.json: experiment, quick, status ("ok", or "interrupted" after
  // set_interrupted), message, parameters, data_files, claims, all_claims_hold, notes.
  void write_results() const;
  void set_interrupted(std::string message);
  bool interrupted() const { return interrupted_; }
  const std::string& message() const { return message_; }

 private:
  void report(bool always);

  std::string experiment_;
  std::filesystem::path out_dir_;
  bool quick_;
  ExperimentControl control_;
  std::chrono::steady_clock::time_point start_, last_report_;
  std::string part_;
  bool interrupted_ = false;
  std::string message_;
  record::Json parameters_;
  std::vector<std::pair<std::string, std::string>> data_files_;
  std::vector<Claim> claims_;
  std::vector<std::string> notes_;
};

using ExperimentFn = std::function<void(ExperimentContext&)>;

struct ExperimentInfo {
  std::string name;
  std::string description;
};

// Throws std::invalid_argument if the name is empty or already registered.
void register_experiment(std::string name, std::string description, ExperimentFn fn);

// Registers the experiments shipped with the library (defined in
// src/experiments/builtin.cpp). list_experiments and run_experiment call it exactly once,
// on first use; do not call it yourself.
void register_builtin_experiments();

// All registered experiments, sorted by name.
std::vector<ExperimentInfo> list_experiments();

struct ExperimentOutcome {
  std::filesystem::path results_file;
  std::vector<Claim> claims;
  bool all_claims_hold = true;
  bool interrupted = false;  // control.stop ended the run; results.json says so
  std::string message;       // for an interrupted run: in which part, after how long
};

// Creates out_dir, runs the experiment and writes results.json. Throws InputError for an
// unknown name (listing the known ones) or an output directory that cannot be created;
// errors thrown by the experiment propagate. control.stop ends the run at its next safe
// point: results.json then holds the claims measured so far with "status": "interrupted",
// and every data file it lists is complete.
ExperimentOutcome run_experiment(const std::string& name, const std::filesystem::path& out_dir,
                                 bool quick, const ExperimentControl& control = {});

// A file shipped with the library, given relative to the source tree (e.g.
// "examples/problems/car_tunnel.json"): found in the share/marsden directory beside the
// running executable's (an installed command, or the wheel's marsden/bin/marsden), else in
// the source tree this library was built from, else in the install prefix's share/marsden;
// empty when in none.
std::filesystem::path find_shipped_file(const std::string& relative);

// Runs `python SCRIPT OUT_DIR` (run::python_command(), MPLBACKEND=Agg) for a script given
// relative to the source tree (e.g. "python/plots/rigid_body_accuracy.py"), found in the
// source tree this library was built from or in the installed share/marsden directory.
// Records each PNG written to out_dir as a data file. Never throws for a missing Python,
// matplotlib or script, or a failing script: it records a note instead and returns false.
bool run_plot_script(ExperimentContext& ctx, const std::string& script);

}  // namespace marsden::experiments
