// DMOC solve times (vehicles §6): each shipped problem file re-discretised at 50, 100 and 200
// steps over its own horizon (dt = T / N), solved with Ipopt from the file's initial guess.
// Prints iterations, solve time, time per iteration and how the time grows with N, then
// compares the two Hessian modes (banded differences of the exact gradient against Ipopt's
// limited-memory quasi-Newton) at each file's own N, in the same process.
//
//   bench_dmoc [--json FILE] [--scenario NAME]... [--max-cpu SECONDS]
//
// Solves are seconds long, so this is a plain program rather than a Google Benchmark loop;
// every figure is one solve (Ipopt is deterministic; the time varies by a few per cent).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"
#include "marsden/io/problem.hpp"

namespace {

using marsden::control::HessianMode;
using marsden::control::NlpSolution;

const char* const kScenarios[] = {"helicopter_canyon",  "helicopter_canyon_dash",
                                  "helicopter_landing", "boat_docking",
                                  "car_tunnel",         "car_tunnel_dash",
                                  "acrobot_swing_up",   "cart_pole_swing_up"};
const int kSteps[] = {50, 100, 200};

struct Run {
  std::string scenario;
  int steps = 0;
  std::string hessian;
  std::string status;
  bool ok = false;
  int iterations = 0;
  double time_s = 0.0, resimulation_error = 0.0;
};

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw marsden::InputError(path + ": cannot read");
  return nlohmann::json::parse(in);
}

// One solve of the problem in `file` with `steps` steps over the file's horizon, with the
// file's Hessian mode or `hessian` when given.
Run solve(const std::string& name, const nlohmann::json& file, int steps,
          std::optional<HessianMode> hessian, double max_cpu_s) {
  nlohmann::json j = file;
  const double horizon = j["dt"].get<double>() * j["steps"].get<int>();
  j["steps"] = steps;
  j["dt"] = horizon / steps;
  marsden::io::Problem problem = marsden::io::parse_problem_text(j.dump(), name);
  if (hessian) problem.solver.hessian = *hessian;
  problem.solver.max_cpu_time_s = std::min(problem.solver.max_cpu_time_s, max_cpu_s);
  Run r;
  r.scenario = name;
  r.steps = steps;
  r.hessian = problem.solver.hessian == HessianMode::Differences ? "differences" : "limited-memory";
  try {
    const NlpSolution sol = marsden::control::solve_with_ipopt(*problem.ocp, problem.solver);
    r.status = marsden::control::to_string(sol.status);
    r.iterations = sol.iterations;
    r.time_s = sol.solve_time_s;
    r.resimulation_error = sol.x.size() ? problem.ocp->resimulation_error(sol.x) : NAN;
    r.ok = sol.ok() && r.resimulation_error < 1e-6;
  } catch (const marsden::SolverError& e) {
    // The initial guess or the re-simulation failed: a result, not a crash.
    r.status = std::string("error: ") + e.what();
    r.resimulation_error = NAN;
  }
  return r;
}

void print(const Run& r) {
  std::printf("%-20s %5d  %-14s %-28.28s %6d %9.3f %10.4f  %s\n", r.scenario.c_str(), r.steps,
              r.hessian.c_str(), r.status.c_str(), r.iterations, r.time_s,
              r.iterations ? r.time_s / r.iterations : NAN, r.ok ? "ok" : "NOT OK");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_out;
  std::vector<std::string> only;
  double max_cpu_s = 60.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json_out = argv[++i];
    else if (a == "--scenario" && i + 1 < argc) only.push_back(argv[++i]);
    else if (a == "--max-cpu" && i + 1 < argc) max_cpu_s = std::stod(argv[++i]);
    else {
      std::cerr << "usage: bench_dmoc [--json FILE] [--scenario NAME]... [--max-cpu SECONDS]\n";
      return 2;
    }
  }
  try {
    std::vector<Run> runs;
    std::printf("%-20s %5s  %-14s %-28s %6s %9s %10s\n", "scenario", "N", "hessian", "status",
                "iter", "time [s]", "s / iter");
    for (const char* name : kScenarios) {
      if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
      const std::string relative = std::string("examples/problems/") + name + ".json";
      const std::filesystem::path path = marsden::experiments::find_shipped_file(relative);
      if (path.empty()) throw marsden::InputError(relative + ": not found");
      const nlohmann::json file = read_json(path.string());
      std::vector<Run> sweep;
      for (int steps : kSteps) {
        sweep.push_back(solve(name, file, steps, std::nullopt, max_cpu_s));
        print(sweep.back());
      }
      // Growth of the solve time per doubling of N (only between runs that both succeeded).
      for (std::size_t k = 1; k < sweep.size(); ++k)
        if (sweep[k].ok && sweep[k - 1].ok)
          std::printf("%-20s        time(N=%d) / time(N=%d) = %.2f\n", name, sweep[k].steps,
                      sweep[k - 1].steps, sweep[k].time_s / sweep[k - 1].time_s);
      runs.insert(runs.end(), sweep.begin(), sweep.end());
      // The other Hessian mode at the file's own N (its own-mode run reused from the sweep).
      const int steps = file["steps"].get<int>();
      const auto swept = std::find_if(sweep.begin(), sweep.end(),
                                      [steps](const Run& r) { return r.steps == steps; });
      const Run a =
          swept != sweep.end() ? *swept : solve(name, file, steps, std::nullopt, max_cpu_s);
      const HessianMode other = a.hessian == "differences" ? HessianMode::LimitedMemory
                                                           : HessianMode::Differences;
      const Run b = solve(name, file, steps, other, max_cpu_s);
      if (swept == sweep.end()) print(a);
      print(b);
      if (a.ok && b.ok)
        std::printf("%-20s        time(%s) / time(%s) = %.2f\n", name, b.hessian.c_str(),
                    a.hessian.c_str(), b.time_s / a.time_s);
      else
        std::printf("%-20s        %s: %s; %s: %s\n", name, a.hessian.c_str(),
                    a.ok ? "ok" : "not ok", b.hessian.c_str(), b.ok ? "ok" : "not ok");
      runs.push_back(b);
    }
    if (!json_out.empty()) {
      nlohmann::json out = nlohmann::json::array();
      for (const Run& r : runs)
        out.push_back({{"scenario", r.scenario}, {"steps", r.steps}, {"hessian", r.hessian},
                       {"status", r.status}, {"ok", r.ok}, {"iterations", r.iterations},
                       {"time_s", r.time_s}});
      std::ofstream(json_out) << out.dump(1) << '\n';
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_dmoc: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
