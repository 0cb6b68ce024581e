// The `marsden` command: simulate a scene file, solve an optimal-control problem, list and
// run experiments. Exit codes: 0 success, 1 internal error, 2 bad input (scene, problem,
// arguments, output directory), 3 the solver failed (a step did not converge, or the
// optimisation found no solution; the outputs computed are written).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/run/run.hpp"

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitInput = 2;
constexpr int kExitSolver = 3;

int error(const std::string& message, int code) {
  std::cerr << "marsden: error: " << message << '\n';
  return code;
}

int simulate(const std::string& scene_file, const std::string& out_dir) {
  const marsden::io::Scene scene = marsden::io::load_scene(scene_file);
  const auto s = marsden::run::run_scene(scene, out_dir);
  const std::filesystem::path out(out_dir);
  std::cout << scene.system_type << ": " << s.steps_done << " of " << s.steps_requested
            << " steps in " << s.wall_time_s << " s; wrote "
            << (out / "trajectory.csv").string() << ", " << (out / "trajectory.npz").string()
            << ", " << (out / "summary.json").string() << '\n';
  if (!s.ok) return error(s.message, kExitSolver);
  return 0;
}

int optimize(const std::string& problem_file, const std::string& out_dir,
             const std::string& warm_start) {
  marsden::io::Problem problem = marsden::io::load_problem(problem_file);
  if (!warm_start.empty()) problem.warm_start = marsden::io::read_decision_vector(warm_start);
  const auto s = marsden::run::run_problem(problem, out_dir);
  const auto& sol = s.solution;
  std::cout << problem.name << " (" << problem.system_type << "): " << to_string(sol.status)
            << " in " << sol.iterations << " iterations, " << sol.solve_time_s
            << " s; cost " << sol.cost << ", constraint violation " << sol.constraint_violation
            << ", re-simulation error " << s.resimulation_error << "; wrote "
            << (std::filesystem::path(out_dir) / "summary.json").string() << '\n';
  if (!s.ok) return error(s.message, kExitSolver);
  return 0;
}

int list_experiments() {
  const auto all = marsden::experiments::list_experiments();
  if (all.empty()) std::cout << "(no experiments registered)\n";
  for (const auto& e : all) std::cout << e.name << "  " << e.description << '\n';
  return 0;
}

int run_experiment(const std::string& name, const std::string& out_dir, bool quick) {
  const auto r = marsden::experiments::run_experiment(name, out_dir, quick);
  std::size_t holding = 0;
  for (const auto& c : r.claims) {
    holding += c.holds ? 1 : 0;
    std::cout << (c.holds ? "  holds  " : "  FAILS  ") << c.id << ": " << c.statement << '\n';
  }
  std::cout << name << ": " << holding << " of " << r.claims.size() << " claims hold; wrote "
            << r.results_file.string() << '\n';
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"Marsden: structure-preserving simulation of mechanical systems", "marsden"};
  app.set_version_flag("--version", std::string("marsden ") + MARSDEN_VERSION);
  app.require_subcommand(1);

  std::string scene_file, sim_out;
  auto* sim = app.add_subcommand("simulate", "Simulate a scene file (docs/scene.md)");
  sim->add_option("scene", scene_file, "Scene file (JSON)")->required();
  sim->add_option("--out,-o", sim_out, "Output directory (created if needed)")->required();

  std::string problem_file, opt_out, warm_start;
  auto* opt = app.add_subcommand("optimize", "Solve an optimal-control problem file (docs/dmoc.md)");
  opt->add_option("problem", problem_file, "Problem file (JSON)")->required();
  opt->add_option("--out,-o", opt_out, "Output directory (created if needed)")->required();
  opt->add_option("--warm-start", warm_start,
                  "decision_vector.txt of an earlier solution of the same problem");

  auto* exp = app.add_subcommand("experiment", "List or run the paper-reproduction experiments");
  exp->require_subcommand(1);
  auto* exp_list = exp->add_subcommand("list", "List the registered experiments");
  std::string exp_name, exp_out;
  bool quick = false;
  auto* exp_run = exp->add_subcommand("run", "Run one experiment; writes DIR/results.json");
  exp_run->add_option("name", exp_name, "Experiment name (see `marsden experiment list`)")
      ->required();
  exp_run->add_flag("--quick", quick, "Short run for smoke tests");
  exp_run->add_option("--out,-o", exp_out, "Output directory (created if needed)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitInput;
  }

  if (sim->parsed()) return simulate(scene_file, sim_out);
  if (opt->parsed()) return optimize(problem_file, opt_out, warm_start);
  if (exp_list->parsed()) return list_experiments();
  if (exp_run->parsed()) return run_experiment(exp_name, exp_out, quick);
  return kExitInput;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const marsden::InputError& e) {
    return error(e.what(), kExitInput);
  } catch (const marsden::SolverError& e) {
    return error(e.what(), kExitSolver);
  } catch (const std::exception& e) {
    return error(std::string("internal: ") + e.what(), kExitInternal);
  } catch (...) {
    return error("internal: unknown exception", kExitInternal);
  }
}
