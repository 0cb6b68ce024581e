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

// Reads a decision vector written by run::run_problem (decision_vector.txt), for warm starts.
control::VecX read_decision_vector(const std::filesystem::path& path);

}  // namespace marsden::io
