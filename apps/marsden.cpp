// The `marsden` command: simulate a scene file, solve an optimal-control problem, list and
// run experiments, run sweeps, write a run's 3-D player page and an experiment's report
// (the last three through the Python package: marsden.sweep, marsden.viewer,
// marsden.experiment_report). Exit codes: 0 success, 1 internal error, 2 bad input (scene,
// problem, arguments, output directory, a run the player cannot read), 3 the solver failed
// (a step did not converge, or the optimisation found no solution; the outputs computed are
// written), 4 out of memory (std::bad_alloc: the machine or the process's limit gave no
// more), 130 interrupted by SIGINT or SIGTERM (the outputs computed are written,
// summary.json or results.json says "interrupted").
#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/run/code.hpp"
#include "marsden/run/python.hpp"
#include "marsden/run/run.hpp"
#include "marsden/run/track.hpp"

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitInput = 2;
constexpr int kExitSolver = 3;
constexpr int kExitOutOfMemory = 4;
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it

// What the command is doing, for a message that has nothing else to say (out of memory).
std::string g_activity = "starting";

int error(const std::string& message, int code) {
  std::cerr << "marsden: error: " << message << '\n';
  return code;
}

// SIGINT and SIGTERM end a run at the next step (sim::RunOptions::stop), never in the
// middle of writing; a second signal kills as usual.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  g_stop.store(true);
  std::signal(signal, SIG_DFL);
}

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

constexpr const char* kAllowCodeHelp =
    "Run the Python modules and load the compiled libraries that the file names (its code "
    "runs: only for files you trust; docs/reliability.md, \"Trust model\")";

struct Options {
  bool force = false;       // --force: replace the previous run's files in --out
  bool progress = false;    // --progress, or standard error is a terminal
  bool view = false;        // --view: write OUT/view.html, the run's player
  bool allow_code = false;  // --allow-code: run the code the file names (run/code.hpp)
  double track = 0.0;       // optimize --track OFFSET: follow the optimum with TV-LQR
};

// One line on standard error, rewritten in place: steps, simulated time, rate, time left.
marsden::run::RunControl run_control(const Options& options) {
  marsden::run::RunControl control;
  control.stop = &g_stop;
  if (options.progress) {
    control.solver_progress = [](int iteration, double objective, double infeasibility) {
      std::fprintf(stderr, "\rmarsden: Ipopt iteration %d, objective %.6g, infeasibility %.3g ",
                   iteration, objective, infeasibility);
      std::fflush(stderr);
    };
    control.progress = [](const marsden::sim::Progress& p) {
      const double rate = p.wall_s > 0.0 ? p.steps_done / p.wall_s : 0.0;
      const double left = rate > 0.0 ? (p.steps - p.steps_done) / rate : 0.0;
      std::fprintf(stderr, "\rmarsden: step %d of %d (%.1f %%), t = %.6g s, %.3g steps/s, %.0f s left ",
                   p.steps_done, p.steps, 100.0 * p.steps_done / p.steps, p.t, rate, left);
      if (p.steps_done == p.steps || g_stop.load()) std::fputc('\n', stderr);
      std::fflush(stderr);
    };
  }
  return control;
}

// An output folder that already holds files is refused, so that a new run never mixes
// with an old one; --force removes the files this command writes there (and only those).
void prepare_out(const std::filesystem::path& out, bool force,
                 std::initializer_list<const char*> files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw marsden::InputError(out.string() + ": exists and is not a directory (--out)");
  if (fs::is_empty(out, ec)) return;
  std::string names;
  for (const char* f : files) names += std::string(names.empty() ? "" : ", ") + f;
  if (!force)
    throw marsden::InputError(out.string() + ": already holds files; choose another --out, or "
                              "add --force to replace the previous run's (" + names + ")");
  for (const char* f : files) {
    fs::remove_all(out / f, ec);
    if (ec) throw marsden::InputError((out / f).string() + ": cannot remove: " + ec.message());
  }
}

// A page writer of the package (marsden.MODULE.main: DIR [--out FILE]) in a child
// process; returns its exit code.
int python_page(const char* module, const std::string& run_dir, const std::string& out_file) {
  std::vector<std::string> args = {run_dir};
  if (!out_file.empty()) args.insert(args.end(), {"--out", out_file});
  std::cout.flush();
  const int status = marsden::run::call_python_main(
      {module, args, MARSDEN_PYTHON_DIR},
      "the pages need Python with the marsden package and meshcat");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return error(marsden::run::python_command().executable + ": marsden." + module +
                   " was killed",
               kExitInternal);
}

// The run's player page (docs/viewer.md).
int view(const std::string& run_dir, const std::string& out_file) {
  return python_page("viewer", run_dir, out_file);
}

int simulate(const std::string& scene_file, const std::string& out_dir, const Options& options) {
  g_activity = "reading " + scene_file;
  const marsden::io::Scene scene =
      marsden::run::load_scene(scene_file, {.allow_code = options.allow_code});
  prepare_out(out_dir, options.force, {"trajectory.csv", "trajectory.npz", "summary.json",
                                      "model.json", "frames.npz", "view.html"});
  g_activity = "simulating " + scene_file;
  const auto s = marsden::run::run_scene(scene, out_dir, run_control(options));
  const std::filesystem::path out(out_dir);
  std::cout << scene.system_type << ": " << s.steps_done << " of " << s.steps_requested
            << " steps in " << s.wall_time_s << " s; wrote "
            << (out / "trajectory.csv").string() << ", " << (out / "trajectory.npz").string()
            << ", " << (out / "summary.json").string() << '\n';
  if (s.interrupted) return error(s.message, kExitInterrupted);
  if (!s.ok) return error(s.message, kExitSolver);
  return options.view ? view(out_dir, "") : 0;
}

// The player of an optimum: the solution's re-simulation (resimulate.json, which reproduces
// it to 1e-6 or the run is not ok) run into OUT/resimulation, its page written to
// OUT/view.html. The re-simulation names the code the problem named: it runs where the
// problem's did.
int view_optimum(const std::string& problem_file, const std::string& out_dir,
                 const Options& options) {
  const std::filesystem::path out(out_dir);
  if (!std::filesystem::exists(out / "resimulate.json"))
    return error(out_dir + ": no view: this problem has no scene form to re-simulate (docs/viewer.md)",
                 kExitInput);
  const marsden::io::Scene scene = marsden::run::load_scene(
      out / "resimulate.json",
      {.allow_code = options.allow_code || marsden::run::in_trusted_folder(problem_file)});
  const auto r = marsden::run::run_scene(scene, out / "resimulation", run_control(options));
  if (!r.ok) return error("the re-simulation for the view failed: " + r.message, kExitSolver);
  return view((out / "resimulation").string(), (out / "view.html").string());
}

// The optimum followed by TV-LQR from perturbed starts (run/track.hpp): OUT/tracking.csv and
// OUT/tracking.json, and a line per perturbation.
int track_optimum(const std::string& problem_file, const std::string& out_dir,
                  const Options& options) {
  const std::filesystem::path out(out_dir);
  if (!std::filesystem::exists(out / "resimulate.json"))
    return error(out_dir + ": no tracking: this problem has no scene form to re-simulate", kExitInput);
  g_activity = "tracking the optimum of " + problem_file;
  const marsden::io::Scene scene = marsden::run::load_scene(
      out / "resimulate.json",
      {.allow_code = options.allow_code || marsden::run::in_trusted_folder(problem_file)});
  const auto t = marsden::run::track_optimum(scene, out, options.track);
  std::cout << "tracking (TV-LQR on " << (t.exact ? "exact" : "differenced")
            << " step derivatives), final configuration error:\n";
  for (const auto& c : t.cases)
    std::cout << "  " << c.entry << ' ' << (c.offset > 0 ? "+" : "") << c.offset << ": open loop "
              << (c.open_loop_failed.empty() ? std::to_string(c.open_loop_error) : "failed")
              << ", closed loop " << c.closed_loop_error << '\n';
  std::cout << "wrote " << (out / "tracking.json").string() << '\n';
  return 0;
}

int optimize(const std::string& problem_file, const std::string& out_dir,
             const std::string& warm_start, const Options& options) {
  g_activity = "reading " + problem_file;
  marsden::io::Problem problem =
      marsden::run::load_problem(problem_file, {.allow_code = options.allow_code});
  prepare_out(out_dir, options.force,
              {"trajectory.csv", "controls.csv", "trajectory.npz", "summary.json",
               "decision_vector.txt", "ipopt.log", "resimulate.json", "resimulation",
               "view.html", "tracking.csv", "tracking.json"});
  if (!warm_start.empty()) problem.warm_start = marsden::io::read_decision_vector(warm_start);
  g_activity = "solving " + problem_file;
  const auto s = marsden::run::run_problem(problem, out_dir, run_control(options));
  if (options.progress) std::fputc('\n', stderr);
  const auto& sol = s.solution;
  std::cout << problem.name << " (" << problem.system_type << "): " << to_string(sol.status)
            << " in " << sol.iterations << " iterations, " << sol.solve_time_s
            << " s; cost " << sol.cost << ", constraint violation " << sol.constraint_violation
            << ", re-simulation error " << s.resimulation_error << "; wrote "
            << (std::filesystem::path(out_dir) / "summary.json").string() << '\n';
  if (sol.status == marsden::control::NlpStatus::Interrupted)
    return error("interrupted at Ipopt iteration " + std::to_string(sol.iterations), kExitInterrupted);
  if (!s.ok) return error(s.message, kExitSolver);
  if (options.track > 0.0) {
    const int rc = track_optimum(problem_file, out_dir, options);
    if (rc != 0) return rc;
  }
  return options.view ? view_optimum(problem_file, out_dir, options) : 0;
}

int list_experiments() {
  const auto all = marsden::experiments::list_experiments();
  if (all.empty()) std::cout << "(no experiments registered)\n";
  for (const auto& e : all) std::cout << e.name << "  " << e.description << '\n';
  return 0;
}

// Progress of an experiment: the part under way and the time since the start, one line
// per part, rewritten in place while it runs.
marsden::experiments::ExperimentControl experiment_control(const Options& options) {
  marsden::experiments::ExperimentControl control;
  control.stop = &g_stop;
  if (options.progress) {
    control.progress = [last = std::string()](const std::string& experiment,
                                              const std::string& part, double elapsed) mutable {
      if (part != last && !last.empty()) std::fputc('\n', stderr);
      last = part;
      std::fprintf(stderr, "\rmarsden: experiment %s: %s, %.0f s elapsed ", experiment.c_str(),
                   part.c_str(), elapsed);
      std::fflush(stderr);
    };
  }
  return control;
}

int run_experiment(const std::string& name, const std::string& out_dir, bool quick,
                   const Options& options) {
  g_activity = "running experiment " + name;
  const auto r =
      marsden::experiments::run_experiment(name, out_dir, quick, experiment_control(options));
  if (options.progress) std::fputc('\n', stderr);
  std::size_t holding = 0;
  for (const auto& c : r.claims) {
    holding += c.holds ? 1 : 0;
    std::cout << (c.holds ? "  holds  " : "  FAILS  ") << c.id << ": " << c.statement << '\n';
  }
  std::cout << name << ": " << holding << " of " << r.claims.size() << " claims hold; wrote "
            << r.results_file.string() << '\n';
  if (r.interrupted) return error(r.message, kExitInterrupted);
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"Marsden: structure-preserving simulation of mechanical systems", "marsden"};
  app.set_version_flag("--version", std::string("marsden ") + MARSDEN_VERSION);
  app.require_subcommand(1);

  Options options;
  options.progress = isatty(STDERR_FILENO) != 0;
  std::string scene_file, sim_out;
  auto* sim = app.add_subcommand("simulate", "Simulate a scene file (docs/scene.md)");
  sim->add_option("scene", scene_file, "Scene file (JSON)")->required();
  sim->add_option("--out,-o", sim_out, "Output directory (created if needed)")->required();
  sim->add_flag("--force", options.force,
                "Replace the outputs of an earlier run in --out (refused otherwise)");
  sim->add_flag("--progress", options.progress,
                "Report progress on standard error (the default when it is a terminal)");
  sim->add_flag("--view", options.view, "Also write OUT/view.html, the run's 3-D player");
  sim->add_flag("--allow-code", options.allow_code, kAllowCodeHelp);

  std::string problem_file, opt_out, warm_start;
  auto* opt = app.add_subcommand("optimize", "Solve an optimal-control problem file (docs/dmoc.md)");
  opt->add_option("problem", problem_file, "Problem file (JSON)")->required();
  opt->add_option("--out,-o", opt_out, "Output directory (created if needed)")->required();
  opt->add_option("--warm-start", warm_start,
                  "decision_vector.txt of an earlier solution of the same problem");
  opt->add_flag("--force", options.force,
                "Replace the outputs of an earlier run in --out (refused otherwise)");
  opt->add_flag("--progress", options.progress,
                "Report Ipopt's iterations on standard error (the default on a terminal)");
  opt->add_flag("--view", options.view,
                "Also write OUT/view.html, the 3-D player of the optimum (its re-simulation)");
  opt->add_option("--track", options.track,
                  "Also follow the optimum with TV-LQR from starts perturbed by +-OFFSET (rad "
                  "or m) in each configuration entry: OUT/tracking.csv, tracking.json "
                  "(docs/control.md)")
      ->check(CLI::PositiveNumber);
  opt->add_flag("--allow-code", options.allow_code, kAllowCodeHelp);

  std::string view_dir, view_out;
  auto* viewer = app.add_subcommand(
      "view", "Write one self-contained HTML page playing a run offline (docs/viewer.md)");
  viewer->add_option("run_dir", view_dir, "Output folder of `marsden simulate`")->required();
  viewer->add_option("--out,-o", view_out, "The page (default RUN_DIR/view.html)");

  std::string report_dir, report_out;
  auto* report = app.add_subcommand(
      "report", "Write an experiment's report.html: claims, parameters, figures (docs/viewer.md)");
  report->add_option("run_dir", report_dir, "Output folder of `marsden experiment run`")->required();
  report->add_option("--out,-o", report_out, "The page (default RUN_DIR/report.html)");

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
  exp_run->add_flag("--progress", options.progress,
                    "Report the part under way on standard error (the default on a terminal)");

  std::string sweep_file, sweep_out, sweep_address;
  int sweep_workers = 0;
  auto* swp = app.add_subcommand(
      "sweep", "Run a sweep or Monte Carlo study on Dask (docs/sweeps.md), with the Python "
               "package's marsden.sweep (MARSDEN_PYTHON, else the build's Python)");
  swp->add_option("sweep", sweep_file, "Sweep file (JSON)")->required();
  swp->add_option("--out,-o", sweep_out, "Folder of results.parquet and results.csv")->required();
  swp->add_option("--address", sweep_address, "A running Dask scheduler, tcp://HOST:PORT");
  swp->add_option("--workers", sweep_workers, "LocalCluster worker processes (default: cores)")
      ->check(CLI::PositiveNumber);
  swp->add_flag("--progress", options.progress, "A progress bar on standard error");
  swp->add_flag("--allow-code", options.allow_code, kAllowCodeHelp);

  // From the start, so that a signal never kills a run that has begun writing.
  catch_stop_signals();
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitInput;
  }

  if (sim->parsed()) return simulate(scene_file, sim_out, options);
  if (opt->parsed()) return optimize(problem_file, opt_out, warm_start, options);
  if (viewer->parsed()) return view(view_dir, view_out);
  if (report->parsed()) return python_page("experiment_report", report_dir, report_out);
  if (exp_list->parsed()) return list_experiments();
  if (exp_run->parsed()) return run_experiment(exp_name, exp_out, quick, options);
  if (swp->parsed()) {
    std::vector<std::string> args = {sweep_file, "--out", sweep_out};
    if (!sweep_address.empty()) args.insert(args.end(), {"--address", sweep_address});
    if (sweep_workers > 0) args.insert(args.end(), {"--workers", std::to_string(sweep_workers)});
    if (options.progress) args.push_back("--progress");
    if (options.allow_code) args.push_back("--allow-code");
    // The command becomes the sweep: signals and the exit code are the module's own.
    marsden::run::exec_python_main({"sweep", args, MARSDEN_PYTHON_DIR},
                                   "sweeps need Python with the marsden package, dask and pyarrow");
  }
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
  } catch (const std::bad_alloc&) {
    return error("out of memory while " + g_activity +
                     ": the machine (or the process's limit, ulimit -v) gave no more. Reduce the "
                     "model's size, the run's duration or its output (output.every), or run "
                     "where more memory is free; the sizes checked before a run, and the "
                     "\"limits\" key that changes them, are in docs/reliability.md",
                 kExitOutOfMemory);
  } catch (const std::exception& e) {
    return error(std::string("internal: ") + e.what(), kExitInternal);
  } catch (...) {
    return error("internal: unknown exception", kExitInternal);
  }
}
