// Problem files: a JSON description of one optimal-control (DMOC) problem, validated field
// by field like scene files, solved by `marsden optimize`. Schema: docs/dmoc.md.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "marsden/control/ocp.hpp"

namespace marsden::io {

struct Problem {
  std::string file;         // label used in messages
  std::string name;
  std::string system_type;  // "helicopter", "boat", "car", "tree"
  std::unique_ptr<control::Ocp> ocp;
  control::IpoptOptions solver;
  control::VecX warm_start;  // empty: start from the problem's initial guess
};

// Throws InputError "FILE: field 'a.b': problem" on anything malformed or inconsistent.
Problem load_problem(const std::filesystem::path& path);
Problem parse_problem_text(std::string_view text, std::string file_label);

// Reads a decision vector written by run_problem (decision_vector.txt), for warm starts.
control::VecX read_decision_vector(const std::filesystem::path& path);

struct OptimizeSummary {
  control::NlpSolution solution;
  double resimulation_error = 0.0;  // +inf if the re-simulation failed
  double min_clearance = 0.0;
  std::string resimulation_message;
  bool ok = false;                  // solved, and the re-simulation reproduces the solution
  std::string message;
};

// Solves the problem and writes to out_dir: trajectory.csv (states at the knots),
// controls.csv (controls held over each step), trajectory.npz (both), summary.json,
// decision_vector.txt (for warm starts) and ipopt.log (the solver's iterations). Outputs
// are written whatever the outcome, and summary.json says whether the point is a solution.
OptimizeSummary run_problem(Problem& problem, const std::filesystem::path& out_dir);

}  // namespace marsden::io
