// Experiment model-suites (docs/mjcf.md): every MJCF file of Gymnasium's and dm_control's
// suites in both engines, checked against MuJoCo. MuJoCo is reached from Python, so the work
// is python/marsden/model_suites.py; this file installs what it needs, runs it and turns its
// table into the experiment's claims.
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "builtin.hpp"
#include "marsden/error.hpp"

namespace marsden::experiments {
namespace {

constexpr const char* kTable = "model_suites.csv";
constexpr const char* kResult = "model_suites.json";
constexpr const char* kSummary = "model_suites.md";
constexpr const char* kLog = "model_suites.log";

// The build's copy of the package first on PYTHONPATH, the output appended to the log.
run::PythonOptions options(const std::filesystem::path& log) {
  run::PythonOptions o;
  o.package_dir = python_package_dir();
  o.output = run::PythonOutput::Append;
  o.output_file = log;
  return o;
}

// What the study needs in the environment of the Python that Marsden starts: the mujoco
// package, and the suites' XML files where model_suites.suites_dir() looks for them.
constexpr const char* kHasMujoco = "import mujoco";
constexpr const char* kHasSuites = "from marsden import model_suites; model_suites.suite_files()";

bool has(ExperimentContext& ctx, const char* check, const std::filesystem::path& log) {
  return ctx.run_python({"-c", check}, options(log)).succeeded();
}

// Runs `python ARGS` from the source tree's FILE when `check` fails, and checks again.
void install_if_missing(ExperimentContext& ctx, const char* check, const std::string& what,
                        const std::string& file, std::vector<std::string> args,
                        const std::filesystem::path& log) {
  if (has(ctx, check, log)) return;
  ctx.part("installing " + what);
  const std::filesystem::path path = find_shipped_file(file);
  if (!path.empty()) {
    for (auto& arg : args)
      if (arg == "FILE") arg = path.string();
    ctx.run_python(args, options(log));
  }
  if (path.empty() || !has(ctx, check, log)) {
    const run::PythonCommand python = run::python_command();
    throw InputError("model-suites needs " + what + " in the environment of " +
                     python.executable + " (" + python.origin + "), and installing it (" +
                     file + ") failed; see " + log.string());
  }
}

void run_suites(ExperimentContext& ctx) {
  const std::filesystem::path out = ctx.out_dir();
  const std::filesystem::path log = out / kLog;
  // A failed or stopped run leaves no table of an earlier one behind under a final name.
  for (const char* file : {kTable, kResult, kSummary, kLog}) {
    std::error_code ec;
    std::filesystem::remove(out / file, ec);
  }
  ctx.part("checking for MuJoCo and the suites' MJCF files");
  install_if_missing(ctx, kHasMujoco, "the PyPI package mujoco", "requirements-robots.txt",
                     {"-m", "pip", "install", "-q", "-r", "FILE"}, log);
  install_if_missing(ctx, kHasSuites, "the suites' MJCF files",
                     "scripts/install_model_suites.py", {"FILE"}, log);
  ctx.part("comparing the suites' models with MuJoCo");
  std::vector<std::string> args = {"-m", "marsden.model_suites", out.string()};
  if (ctx.quick()) args.emplace_back("--quick");
  const run::PythonRun study = ctx.run_python(args, options(log));
  if (!study.succeeded())
    throw InputError("model-suites: python -m marsden.model_suites failed (" +
                     run_failure(study) + "); see " + log.string());

  std::ifstream in(out / kResult);
  const nlohmann::json result = nlohmann::json::parse(in, nullptr, false);
  if (result.is_discarded())
    throw InputError("model-suites: " + (out / kResult).string() + " is not valid JSON");
  ctx.add_parameter("mujoco", result.at("mujoco").get<std::string>());
  ctx.add_parameter("suites", result.at("suites").get<std::string>());
  ctx.add_parameter("run_duration_s", result.at("duration").get<double>());
  for (const auto& [name, value] : result.at("counts").items()) {
    if (value.is_number())
      ctx.add_parameter(name, value.get<double>());
    else
      ctx.add_parameter(name, value.get<std::string>());
  }
  for (const auto& c : result.at("claims")) {
    ctx.add_claim({c.at("id"), c.at("statement"), c.at("source"),
                   c.at("measured").get<std::string>(), c.at("expected"), c.at("holds")});
  }
  for (const auto& model : result.at("models")) {
    const std::string name = model.at("model");
    for (const char* engine : {"mujoco", "tree", "maximal"}) {
      const std::string status = model.at(engine);
      if (!status.empty() && status != "loads")
        ctx.add_note(name + " (" + engine + "): " + status);
    }
    for (const char* run : {"tree_run", "maximal_run"}) {
      const std::string status = model.at(run);
      if (!status.empty() && status != "ok") ctx.add_note(name + " (" + run + "): " + status);
    }
  }
  for (const auto& note : result.at("notes")) ctx.add_note(note);
  ctx.add_data_file(out / kTable,
                    "one row per MJCF file: what MuJoCo makes of it, loads in each engine, "
                    "agreement with MuJoCo, trajectory errors and order, 5 s runs, energy, "
                    "step times");
  ctx.add_data_file(out / kResult, "the same rows, the counts, the claims and notes");
  ctx.add_data_file(out / kSummary, "the table to read, the refusals and the claims");
  ctx.add_data_file(out / kLog, "the run's progress, one line per file");
}

}  // namespace

void register_model_suites() {
  register_experiment("model-suites",
                      "Every MJCF file of Gymnasium's and dm_control's suites in the tree and "
                      "maximal engines, against MuJoCo (mass matrix, bias, RK4 trajectories, "
                      "5 s runs, step times)",
                      run_suites);
}

}  // namespace marsden::experiments
