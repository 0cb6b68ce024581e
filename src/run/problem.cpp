#include "marsden/run/run.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::run {

using record::CsvWriter;
using record::Json;
using record::NpyArray;
using record::npy_vector;
using record::write_npz;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Under its final name only when complete.
void write_csv(const std::filesystem::path& path, const control::Table& t) {
  CsvWriter csv(path, t.columns, CsvWriter::Staging::Hidden);
  std::vector<double> row(t.columns.size());
  for (Eigen::Index r = 0; r < t.rows.rows(); ++r) {
    for (Eigen::Index c = 0; c < t.rows.cols(); ++c) row[static_cast<std::size_t>(c)] = t.rows(r, c);
    csv.write_row(row);
  }
  csv.close();
}

void add_columns(std::vector<NpyArray>& arrays, const control::Table& t, const std::string& prefix) {
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const Eigen::VectorXd col = t.rows.col(static_cast<Eigen::Index>(c));
    arrays.push_back(npy_vector(prefix + t.columns[c], std::span<const double>(col.data(), col.size())));
  }
}

// Writes text to path under its final name only when complete.
void write_text(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path part = record::part_path(path);
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw InputError(path.string() + ": cannot write");
  }
  record::publish(part, path);
}

}  // namespace

OptimizeSummary solve_problem(io::Problem& problem, const control::IpoptOptions& options,
                              const control::VecX& warm_start) {
  control::Ocp& ocp = *problem.ocp;
  if (warm_start.size() != 0 && warm_start.size() != ocp.num_variables())
    throw InputError(problem.file + ": the warm start has " + std::to_string(warm_start.size()) +
                     " values, this problem " + std::to_string(ocp.num_variables()));
  OptimizeSummary sum;
  sum.solution = control::solve_with_ipopt(ocp, options, warm_start);
  const control::NlpSolution& sol = sum.solution;
  if (sol.x.size() == 0) {
    sum.message = std::string("no solution: ") + sol.message;
    return sum;
  }
  if (!sol.x.allFinite()) {
    Eigen::Index i = 0;
    while (std::isfinite(sol.x[i])) ++i;
    sum.message = std::string(to_string(sol.status)) + ", but the solver's point is not finite "
                  "(" + ocp.variable_name(static_cast<int>(i)) + " is " + number_text(sol.x[i]) +
                  "); no trajectory was written. Start from a guess nearer the solution "
                  "(initial_guess, --warm-start)";
    sum.resimulation_error = kInf;
    return sum;
  }
  try {
    sum.resimulation_error = ocp.resimulation_error(sol.x);
  } catch (const SolverError& e) {
    sum.resimulation_error = kInf;
    sum.resimulation_message = e.what();
  }
  sum.min_clearance = ocp.min_clearance(sol.x);
  // Re-simulation reproduces the solution to well within the constraint tolerance times the
  // number of steps unless the dynamics amplify errors; ok needs it below 1e-6.
  sum.ok = sol.ok() && sum.resimulation_error < 1e-6;
  const std::string resimulation =
      sum.resimulation_message.empty()
          ? "the re-simulation differs by " + number_text(sum.resimulation_error)
          : sum.resimulation_message;
  sum.message = sol.ok() ? (sum.ok ? "solved" : "solved, but " + resimulation)
                         : std::string(to_string(sol.status)) + ": " + sol.message;
  return sum;
}

OptimizeSummary run_problem(io::Problem& problem, const std::filesystem::path& out_dir,
                            const RunControl& control) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir.string() + ": cannot create output directory: " + ec.message());
  std::filesystem::remove(out_dir / "resimulate.json", ec);  // never a stale one
  control::Ocp& ocp = *problem.ocp;
  control::IpoptOptions opt = problem.solver;
  opt.log_file = out_dir / "ipopt.log";
  opt.stop = control.stop;
  opt.progress = control.solver_progress;

  OptimizeSummary sum = solve_problem(problem, opt, problem.warm_start);
  const control::NlpSolution& sol = sum.solution;
  double final_time = std::numeric_limits<double>::quiet_NaN();  // s, of the last iterate
  std::string resimulation_scene;
  // A point whose outputs cannot be written (a non-finite state) still gets its summary.
  if (sol.x.size() > 0 && sol.x.allFinite()) try {
    control::Table states, controls;
    ocp.tables(sol.x, states, controls);
    final_time = states.rows(states.rows.rows() - 1, 0);
    write_csv(out_dir / "trajectory.csv", states);
    write_csv(out_dir / "controls.csv", controls);
    std::vector<NpyArray> arrays;
    add_columns(arrays, states, "");
    add_columns(arrays, controls, "control_");
    arrays.push_back(npy_vector("decision_vector", std::span<const double>(sol.x.data(), sol.x.size())));
    write_npz(out_dir / "trajectory.npz", arrays);
    std::string decision;
    for (Eigen::Index j = 0; j < sol.x.size(); ++j) decision += number_text(sol.x[j]) + '\n';
    write_text(out_dir / "decision_vector.txt", decision);
    // The scene that re-simulates the solution, its controls held over each step.
    const control::Ocp::SceneInputs in = ocp.scene_inputs();
    resimulation_scene = io::resimulation_scene(
        problem, final_time / ocp.num_steps(), controls.rows.middleCols(1, in.controls),
        controls.rows.middleCols(1 + in.controls, in.shape));
    if (!resimulation_scene.empty()) write_text(out_dir / "resimulate.json", resimulation_scene);
  } catch (const SolverError& e) {
    sum.ok = false;
    sum.message += std::string("; its trajectory was not written: ") + e.what();
  }

  Json summary = Json::object();
  summary.set("problem", problem.name);
  summary.set("system", problem.system_type);
  summary.set("status", to_string(sol.status));
  summary.set("ok", sum.ok);
  summary.set("message", sum.message);
  summary.set("cost", sol.cost);
  summary.set("iterations", sol.iterations);
  summary.set("constraint_violation", sol.constraint_violation);
  summary.set("worst_constraint", sol.worst_constraint);
  summary.set("solve_time_s", sol.solve_time_s);
  summary.set("resimulation_error", sum.resimulation_error);
  if (!sum.resimulation_message.empty()) summary.set("resimulation_message", sum.resimulation_message);
  summary.set("min_clearance", sum.min_clearance);
  summary.set("steps", ocp.num_steps());
  summary.set("dt", ocp.time_step());
  if (std::isfinite(final_time)) summary.set("final_time", final_time);
  if (!resimulation_scene.empty()) summary.set("resimulation_scene", "resimulate.json");
  summary.set("variables", ocp.num_variables());
  summary.set("constraints", ocp.num_constraints());
  summary.write_file(out_dir / "summary.json");
  return sum;
}

}  // namespace marsden::run
