// maximal-performance: the maximal-coordinates paper, Figs. 5, 6 and 8 (our engine only;
// the minimal-coordinate peers are out of scope), at the paper's dt = 10 ms and 1000
// steps: n-link pendulums, revolute and spherical, open and closed by one loop (Fig. 5);
// chains of four-bar segments driven through their singular configuration (Fig. 6); open
// revolute pendulums at Newton tolerances 1e-6, 1e-8 and 1e-10 (Fig. 8; the four-bar
// chains are run at the three tolerances too).
#include <chrono>
#include <cmath>
#include <sstream>

#include "experiments/builtin.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"

namespace marsden::experiments {

namespace {

using namespace marsden::maximal;

struct RunResult {
  double seconds = 0.0;
  int steps = 0;     // completed steps
  int failures = 0;  // failed steps; a run stops at its first
  long iterations = 0;
  double max_violation = 0.0;
  // After a failure: its time, and the longest step that solves from the failed step's
  // start (bisected to 1e-3 dt).
  double t_failure = 0.0;
  double solvable_dt = 0.0;
  // Per completed step, so that a run stopped early still measures the cost of a step.
  double us_per_step() const { return steps > 0 ? 1e6 * seconds / steps : 0.0; }
  double iterations_per_step() const { return steps > 0 ? double(iterations) / steps : 0.0; }
};

// A failed step leaves data unchanged, so the bisection starts from the failed step's start.
double longest_solvable_step(const Model& model, const Data& data, const StepOptions& options) {
  double lo = 0.0, hi = options.dt;
  while (hi - lo > 1e-3 * options.dt) {
    StepOptions trial = options;
    trial.dt = 0.5 * (lo + hi);
    Data copy = data;
    (step(model, copy, trial).ok() ? lo : hi) = trial.dt;
  }
  return lo;
}

RunResult simulate(const Mechanism& mech, StepOptions options, int steps) {
  Data data(mech.model, mech.state);
  RunResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    const StepStatus status = step(mech.model, data, options);
    if (!status.ok()) {
      ++result.failures;
      break;
    }
    ++result.steps;
    result.iterations += status.newton.iterations;
    result.max_violation = std::max(result.max_violation,
                                    max_constraint_violation(mech.model, data.state));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.failures > 0) {
    result.t_failure = data.time;
    result.solvable_dt = longest_solvable_step(mech.model, data, options);
  }
  return result;
}

// Every failed run, with where it failed and how long a step would have solved there. A
// continuation in dt (docs/maximal.md) ends at the same length: there the discrete
// equations lose their solution, so the failure is not one the solver missed.
struct FailureLog {
  explicit FailureLog(const ExperimentContext& ctx)
      : csv(ctx.out_dir() / "failed_steps.csv",
            {"four_bar", "size", "spherical", "loop", "tolerance", "t_failure", "solvable_dt"},
            record::CsvWriter::Staging::Hidden) {}

  // Records a failed run and describes it on `out`; a run without failure is skipped.
  void add(std::ostringstream& out, const std::string& name, bool four_bar, int size,
           bool spherical, bool loop, double tolerance, const RunResult& r) {
    if (r.failures == 0) return;
    csv.write_row({four_bar ? 1.0 : 0.0, static_cast<double>(size), spherical ? 1.0 : 0.0,
                   loop ? 1.0 : 0.0, tolerance, r.t_failure, r.solvable_dt});
    out << name << " fails at t = " << r.t_failure << " s, solves up to dt = "
        << 1e3 * r.solvable_dt << " ms; ";
  }

  record::CsvWriter csv;
};

std::vector<int> pendulum_links(const ExperimentContext& ctx) {
  return ctx.quick() ? std::vector<int>{1, 5, 10, 20}
                     : std::vector<int>{1, 5, 10, 25, 50, 100, 150};
}

void pendulums(ExperimentContext& ctx, FailureLog& log, int steps) {
  const std::vector<int> links = pendulum_links(ctx);
  record::CsvWriter csv(ctx.out_dir() / "pendulums.csv",
                    {"links", "spherical", "loop", "seconds", "steps", "us_per_step", "failures",
                     "max_violation"}, record::CsvWriter::Staging::Hidden);
  ctx.part("pendulums");
  int total_failures = 0;
  std::ostringstream failed, linear;
  bool linear_ok = true;
  for (const bool spherical : {false, true}) {
    for (const bool loop : {false, true}) {
      std::vector<double> times;
      for (const int n : links) {
        if (loop && n < 3) continue;
        ctx.poll();
        ChainOptions options;
        options.joint = spherical ? JointType::Spherical : JointType::Revolute;
        const Mechanism mech = loop ? closed_chain(n, options) : pendulum_chain(n, options);
        const RunResult r = simulate(mech, StepOptions{}, steps);
        total_failures += r.failures;
        log.add(failed, std::string(spherical ? "spherical" : "revolute") +
                            (loop ? " loop" : " chain") + " n = " + std::to_string(n),
                false, n, spherical, loop, StepOptions{}.newton.tolerance, r);
        times.push_back(r.us_per_step());
        csv.write_row({static_cast<double>(n), spherical ? 1.0 : 0.0, loop ? 1.0 : 0.0,
                       r.seconds, static_cast<double>(r.steps), r.us_per_step(),
                       static_cast<double>(r.failures), r.max_violation});
      }
      const double ratio = times[times.size() - 1] / times[times.size() - 2];
      const double n_ratio = static_cast<double>(links[links.size() - 1]) / links[links.size() - 2];
      linear << (spherical ? "spherical" : "revolute") << (loop ? " loop" : " open")
             << ": time ratio " << ratio << " for n ratio " << n_ratio << "; ";
      linear_ok = linear_ok && ratio <= 1.3 * n_ratio;
    }
  }
  csv.close();
  ctx.add_data_file(csv.path(), "seconds and completed steps of each run, time per step, "
                    "failed steps, max |g| per pendulum");
  ctx.add_claim({"pendulums-no-failure", "Every pendulum run (open and closed, revolute and "
                 "spherical) completes without a failed step.", "maximal-coordinates paper, Figs. 5, 6",
                 std::to_string(total_failures) + " failed steps; " + failed.str(),
                 "0 failed steps", total_failures == 0});
  ctx.add_claim({"pendulums-linear-time", "Time per step grows at most linearly in the number "
                 "of links.", "maximal-coordinates paper, Fig. 5", linear.str(),
                 "time ratio <= 1.3 x n ratio for the two largest n", linear_ok});
}

// Fig. 8: open revolute pendulums solved to each tolerance.
void tolerances(ExperimentContext& ctx, FailureLog& log, int steps) {
  record::CsvWriter csv(ctx.out_dir() / "pendulum_tolerances.csv",
                    {"links", "tolerance", "seconds", "steps", "us_per_step",
                     "iterations_per_step", "failures"}, record::CsvWriter::Staging::Hidden);
  ctx.part("pendulum tolerances");
  std::ostringstream m;
  int failures = 0;
  for (const double tol : {1e-6, 1e-8, 1e-10}) {
    int at_tol = 0;
    std::ostringstream failed;
    for (const int n : pendulum_links(ctx)) {
      ctx.poll();
      StepOptions options;
      options.newton.tolerance = tol;
      const RunResult r = simulate(pendulum_chain(n), options, steps);
      at_tol += r.failures;
      log.add(failed, "chain n = " + std::to_string(n), false, n, false, false, tol, r);
      csv.write_row({static_cast<double>(n), tol, r.seconds, static_cast<double>(r.steps),
                     r.us_per_step(), r.iterations_per_step(), static_cast<double>(r.failures)});
    }
    m << "tolerance " << tol << ": " << at_tol << " failed runs; " << failed.str();
    failures += at_tol;
  }
  csv.close();
  ctx.add_data_file(csv.path(), "open revolute pendulums at three Newton tolerances");
  ctx.add_claim({"pendulums-tolerances", "Open revolute pendulums complete without failed "
                 "steps at tolerances 1e-6, 1e-8 and 1e-10.", "maximal-coordinates paper, Fig. 8",
                 m.str(), "0 failed runs", failures == 0});
}

void four_bars(ExperimentContext& ctx, FailureLog& log, int steps) {
  ctx.part("four-bar chains");
  const int max_segments = ctx.quick() ? 3 : 10;
  record::CsvWriter csv(ctx.out_dir() / "four_bars.csv",
                    {"segments", "tolerance", "seconds", "steps", "us_per_step", "failures",
                     "max_violation"}, record::CsvWriter::Staging::Hidden);
  std::ostringstream m;
  int failures = 0;
  for (const double tol : {1e-6, 1e-8, 1e-10}) {
    int at_tol = 0;
    std::ostringstream failed;
    for (int k = 1; k <= max_segments; ++k) {
      ctx.poll();
      StepOptions options;
      options.newton.tolerance = tol;
      // tilt > pi / 2: the links start above the horizontal and swing through it, where
      // links and bars are collinear (the singular configuration).
      const RunResult r = simulate(four_bar_chain(k, 1.8), options, steps);
      at_tol += r.failures;
      log.add(failed, std::to_string(k) + " segments", true, k, false, true, tol, r);
      csv.write_row({static_cast<double>(k), tol, r.seconds, static_cast<double>(r.steps),
                     r.us_per_step(), static_cast<double>(r.failures), r.max_violation});
    }
    m << "tolerance " << tol << ": " << at_tol << " failed runs; " << failed.str();
    failures += at_tol;
  }
  csv.close();
  ctx.add_data_file(csv.path(), "four-bar chains through the singular configuration");
  ctx.add_claim({"four-bars-robust", "Chains of 1 to 10 four-bar segments pass their singular "
                 "configurations without failed steps at tolerances 1e-6, 1e-8 and 1e-10.",
                 "maximal-coordinates paper, Fig. 6", m.str(), "0 failed runs", failures == 0});
}

void run(ExperimentContext& ctx) {
  const int steps = ctx.quick() ? 200 : 1000;
  ctx.add_parameter("steps", steps);
  ctx.add_parameter("dt", StepOptions{}.dt);
  FailureLog log(ctx);
  pendulums(ctx, log, steps);
  tolerances(ctx, log, steps);
  four_bars(ctx, log, steps);
  log.csv.close();
  ctx.add_data_file(log.csv.path(), "every failed run: time of the failed step and the "
                    "longest step that solves from its start");
  run_plot_script(ctx, "python/plots/maximal_performance.py");
}

}  // namespace

void register_maximal_performance() {
  register_experiment("maximal-performance",
                      "maximal coordinates, Figs. 5, 6, 8: n-link pendulums and four-bar chains",
                      run);
}

}  // namespace marsden::experiments
