// Experiments: named, reproducible runs that check claims of the papers and write
// OUT_DIR/results.json. Experiments are registered explicitly (register_experiment, or in
// register_builtin_experiments) and run by name, e.g. `marsden experiment run NAME`.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "marsden/record/writers.hpp"

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

class ExperimentContext {
 public:
  ExperimentContext(std::string experiment, std::filesystem::path out_dir, bool quick);

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

  // Writes out_dir/results.json: experiment, quick, parameters, data_files, claims,
  // all_claims_hold, notes.
  void write_results() const;

 private:
  std::string experiment_;
  std::filesystem::path out_dir_;
  bool quick_;
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
};

// Creates out_dir, runs the experiment and writes results.json. Throws InputError for an
// unknown name (listing the known ones) or an output directory that cannot be created;
// errors thrown by the experiment propagate.
ExperimentOutcome run_experiment(const std::string& name, const std::filesystem::path& out_dir,
                                 bool quick);

// A file shipped with the library, given relative to the source tree (e.g.
// "examples/problems/car_tunnel.json"): found in the source tree this library was built from,
// else in the installed share/marsden directory; empty when in neither.
std::filesystem::path find_shipped_file(const std::string& relative);

// Runs `python3 SCRIPT OUT_DIR` for a script given relative to the source tree (e.g.
// "python/plots/rigid_body_accuracy.py"), found in the source tree this library was built
// from or in the installed share/marsden directory. Records each PNG written to out_dir as
// a data file. Never throws for a missing python3, matplotlib or script, or a failing
// script: it records a note instead and returns false.
bool run_plot_script(ExperimentContext& ctx, const std::string& script);

}  // namespace marsden::experiments
