// maximal-performance: the maximal-coordinates paper, Figs. 5, 6 and 8 (our engine only;
// the minimal-coordinate peers are out of scope). 1000 steps of n-link pendulums,
// revolute and spherical, open and closed by one loop; chains of four-bar segments
// driven through their singular configuration, at Newton tolerances 1e-6, 1e-8, 1e-10.
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
  int failures = 0;  // failed steps; a run stops at its first
  double max_violation = 0.0;
  bool aborted = false;
};

RunResult simulate(const Mechanism& mech, StepOptions options, int steps) {
  Data data(mech.model, mech.state);
  RunResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    if (!step(mech.model, data, options).ok()) {
      ++result.failures;
      result.aborted = true;
      break;
    }
    result.max_violation = std::max(result.max_violation,
                                    max_constraint_violation(mech.model, data.state));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void pendulums(ExperimentContext& ctx, int steps) {
  const std::vector<int> links = ctx.quick() ? std::vector<int>{1, 5, 10, 20}
                                             : std::vector<int>{1, 5, 10, 25, 50, 100, 150};
  io::CsvWriter csv(ctx.out_dir() / "pendulums.csv",
                    {"links", "spherical", "loop", "seconds", "failures", "max_violation"});
  int total_failures = 0;
  std::ostringstream linear;
  bool linear_ok = true;
  for (const bool spherical : {false, true}) {
    for (const bool loop : {false, true}) {
      std::vector<double> times;
      for (const int n : links) {
        if (loop && n < 3) continue;
        ChainOptions options;
        options.joint = spherical ? JointType::Spherical : JointType::Revolute;
        const Mechanism mech = loop ? closed_chain(n, options) : pendulum_chain(n, options);
        const RunResult r = simulate(mech, StepOptions{}, steps);
        total_failures += r.failures;
        times.push_back(r.seconds);
        csv.write_row({static_cast<double>(n), spherical ? 1.0 : 0.0, loop ? 1.0 : 0.0,
                       r.seconds, static_cast<double>(r.failures), r.max_violation});
      }
      const double ratio = times[times.size() - 1] / times[times.size() - 2];
      const double n_ratio = static_cast<double>(links[links.size() - 1]) / links[links.size() - 2];
      linear << (spherical ? "spherical" : "revolute") << (loop ? " loop" : " open")
             << ": time ratio " << ratio << " for n ratio " << n_ratio << "; ";
      linear_ok = linear_ok && ratio <= 1.3 * n_ratio;
    }
  }
  ctx.add_data_file(csv.path(), "seconds for the run, failed steps, max |g| per pendulum");
  ctx.add_claim({"pendulums-no-failure", "Every pendulum run (open and closed, revolute and "
                 "spherical) completes without a failed step.", "maximal-coordinates paper, Figs. 5, 6",
                 static_cast<double>(total_failures), "0 failed steps", total_failures == 0});
  ctx.add_claim({"pendulums-linear-time", "Time per run grows at most linearly in the number "
                 "of links.", "maximal-coordinates paper, Fig. 5", linear.str(),
                 "time ratio <= 1.3 x n ratio for the two largest n", linear_ok});
}

void four_bars(ExperimentContext& ctx, int steps) {
  const int max_segments = ctx.quick() ? 3 : 10;
  io::CsvWriter csv(ctx.out_dir() / "four_bars.csv",
                    {"segments", "tolerance", "seconds", "failures", "max_violation"});
  std::ostringstream m;
  int failures = 0;
  for (const double tol : {1e-6, 1e-8, 1e-10}) {
    int at_tol = 0;
    for (int k = 1; k <= max_segments; ++k) {
      StepOptions options;
      options.dt = 0.005;
      options.newton.tolerance = tol;
      // tilt > pi / 2: the links start above the horizontal and swing through it, where
      // links and bars are collinear (the singular configuration).
      const RunResult r = simulate(four_bar_chain(k, 1.8), options, steps);
      at_tol += r.failures;
      csv.write_row({static_cast<double>(k), tol, r.seconds, static_cast<double>(r.failures),
                     r.max_violation});
    }
    m << "tolerance " << tol << ": " << at_tol << " failed runs; ";
    failures += at_tol;
  }
  ctx.add_data_file(csv.path(), "four-bar chains through the singular configuration");
  ctx.add_claim({"four-bars-robust", "Chains of 1 to 10 four-bar segments pass their singular "
                 "configurations without failed steps at tolerances 1e-6, 1e-8 and 1e-10.",
                 "maximal-coordinates paper, Fig. 8", m.str(), "0 failed runs", failures == 0});
}

void run(ExperimentContext& ctx) {
  const int steps = ctx.quick() ? 200 : 1000;
  ctx.add_parameter("steps", steps);
  ctx.add_parameter("dt_pendulums", 0.01);
  ctx.add_parameter("dt_four_bars", 0.005);
  pendulums(ctx, steps);
  four_bars(ctx, steps);
  run_plot_script(ctx, "python/plots/maximal_performance.py");
}

}  // namespace

void register_maximal_performance() {
  register_experiment("maximal-performance",
                      "maximal coordinates, Figs. 5, 6, 8: n-link pendulums and four-bar chains",
                      run);
}

}  // namespace marsden::experiments
