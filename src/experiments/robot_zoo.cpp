// Experiment robot-zoo (docs/urdf.md): every URDF of the PyPI package example-robot-data in
// both engines, checked against Pinocchio. Pinocchio is reached from Python, so the work is
// python/marsden/robot_zoo.py; this file installs what it needs, runs it and turns its
// table into the experiment's claims.
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "builtin.hpp"

namespace marsden::experiments {
namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The build's copy of the package first, so that the command works before `pip install .`.
std::string python_command() {
  std::string env;
#ifdef MARSDEN_PYTHON_DIR
  if (std::filesystem::is_directory(MARSDEN_PYTHON_DIR "/marsden"))
    env = "PYTHONPATH=" + quoted(MARSDEN_PYTHON_DIR) + "${PYTHONPATH:+:$PYTHONPATH} ";
#endif
  return env + "python3";
}

bool have_peers(const std::string& python) {
  return std::system((python + " -c 'import pinocchio, importlib.metadata as m; "
                               "m.distribution(\"example-robot-data\")' >/dev/null 2>&1")
                         .c_str()) == 0;
}

void run_zoo(ExperimentContext& ctx) {
  const std::string python = python_command();
  const std::filesystem::path log = ctx.out_dir() / "robot_zoo.log";
  if (!have_peers(python)) {
    const std::filesystem::path requirements = find_shipped_file("requirements-robots.txt");
    const std::string install = python + " -m pip install -q -r " + quoted(requirements.string()) +
                                " >" + quoted(log.string()) + " 2>&1";
    if (requirements.empty() || std::system(install.c_str()) != 0 || !have_peers(python)) {
      throw InputError("robot-zoo needs the PyPI packages pin and example-robot-data in the "
                       "environment of python3, and installing them (requirements-robots.txt) "
                       "failed; see " + log.string());
    }
  }
  const std::string cmd = python + " -m marsden.robot_zoo " + quoted(ctx.out_dir().string()) +
                          (ctx.quick() ? " --quick" : "") + " 2>>" + quoted(log.string());
  if (std::system(cmd.c_str()) != 0)
    throw InputError("robot-zoo: python -m marsden.robot_zoo failed; see " + log.string());

  std::ifstream in(ctx.out_dir() / "robot_zoo.json");
  const nlohmann::json result = nlohmann::json::parse(in, nullptr, false);
  if (result.is_discarded())
    throw InputError("robot-zoo: " + (ctx.out_dir() / "robot_zoo.json").string() +
                     " is not valid JSON");
  ctx.add_parameter("pinocchio", result.at("pinocchio").get<std::string>());
  ctx.add_parameter("example_robot_data", result.at("example_robot_data").get<std::string>());
  ctx.add_parameter("robots", static_cast<double>(result.at("robots").size()));
  for (const auto& c : result.at("claims")) {
    ctx.add_claim({c.at("id"), c.at("statement"), c.at("source"),
                   c.at("measured").get<std::string>(), c.at("expected"), c.at("holds")});
  }
  for (const auto& robot : result.at("robots")) {
    for (const char* engine : {"tree", "maximal"}) {
      const std::string status = robot.at(engine);
      if (status != "loads")
        ctx.add_note(robot.at("robot").get<std::string>() + " (" + engine + "): " + status);
    }
  }
  for (const auto& note : result.at("notes")) ctx.add_note(note);
  ctx.add_data_file(ctx.out_dir() / "robot_zoo.csv",
                    "one row per robot: loads in each engine, agreement with Pinocchio, "
                    "trajectory errors and orders, step times, energy drift");
  ctx.add_data_file(ctx.out_dir() / "robot_zoo.json", "the same rows, the claims and notes");
  ctx.add_data_file(log, "the run's progress, one line per robot");
}

}  // namespace

void register_robot_zoo() {
  register_experiment("robot-zoo",
                      "Every URDF of example-robot-data in the tree and maximal engines, "
                      "against Pinocchio (CRBA, RNEA, ABA + RK4)",
                      run_zoo);
}

}  // namespace marsden::experiments
