// Problem files: a JSON description of one optimal-control (DMOC) problem, validated field
// by field like scene files, solved by `marsden optimize`. Schema: docs/dmoc.md.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "marsden/control/ocp.hpp"
#include "marsden/io/code.hpp"

namespace marsden::io {

struct Problem {
  std::string file;         // label used in messages
  std::string text;         // the JSON text parsed (parse_problem_text(text, file) again)
  std::string name;
  std::string system_type;  // "helicopter", "boat", "car", "tree"
  std::unique_ptr<control::Ocp> ocp;
  control::IpoptOptions solver;
  control::VecX warm_start;  // empty: start from the problem's initial guess
  // The problem's "system", "integrator" and "initial_state" as a scene would read them
  // (JSON text, a URDF path made absolute).
  std::string scene_fields;
  // The problem's obstacles, and the helicopter's landing pad or the boat's dock at the
  // final pose, as a scene's "view" (JSON text; empty without either), so that the player
  // draws them beside the re-simulated optimum.
  std::string view_fields;
};

// Throws InputError "FILE: field 'a.b': problem" on anything malformed or inconsistent.
// The code the file names is resolved by `code`, else refused (as for scenes, scene.hpp).
Problem load_problem(const std::filesystem::path& path, const CodeResolver& code);
Problem load_problem(const std::filesystem::path& path);
Problem parse_problem_text(std::string_view text, std::string file_label,
                           const CodeResolver& code);
Problem parse_problem_text(std::string_view text, std::string file_label);

// The scene file (JSON text) that re-simulates a solution of the problem: its system,
// integrator and initial state, dt and steps, and the controls u_k (steps x controls) and
// shape inputs gamma_k (steps x shape, or no columns) as tables held over each step
// ("hold": "zero_order", scene.md), so that `marsden simulate` reproduces the optimum.
// Empty when the problem has no scene form (Problem::scene_fields empty).
std::string resimulation_scene(const Problem& problem, double dt,
                               const Eigen::Ref<const Eigen::MatrixXd>& controls,
                               const Eigen::Ref<const Eigen::MatrixXd>& shape);

// Reads a decision vector written by run::run_problem (decision_vector.txt), for warm starts.
control::VecX read_decision_vector(const std::filesystem::path& path);

}  // namespace marsden::io
