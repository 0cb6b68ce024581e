// Experiment robot-zoo (docs/urdf.md): every URDF of the PyPI package example-robot-data in
// both engines, checked against Pinocchio. Pinocchio is reached from Python, so the work is
// python/marsden/robot_zoo.py; this file installs what it needs, runs it and turns its
// table into the experiment's claims.
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "builtin.hpp"
#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"

namespace marsden::experiments {
namespace {

// The build's copy of the package first on PYTHONPATH, the output as given.
run::PythonOptions options(run::PythonOutput output, const std::filesystem::path& file = {}) {
  run::PythonOptions o;
  o.package_dir = python_package_dir();
  o.output = output;
  o.output_file = file;
  return o;
}

bool have_peers(ExperimentContext& ctx) {
  return ctx
      .run_python({"-c", "import pinocchio, importlib.metadata as m; "
                         "m.distribution('example-robot-data')"},
                  options(run::PythonOutput::Discard))
      .succeeded();
}

// The study writes into a hidden folder whose files are moved into the output folder only
// when it has finished: a stopped run (SIGINT is forwarded to the Python, which ends with
// KeyboardInterrupt) leaves no table under a final name, and the folder is removed.
class Staging {
 public:
  explicit Staging(const std::filesystem::path& out_dir)
      : out_dir_(out_dir), dir_(out_dir / ".robot-zoo.part") {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw InputError(dir_.string() + ": cannot create: " + ec.message());
  }
  ~Staging() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const std::filesystem::path& dir() const { return dir_; }
  // Moves FILE from the hidden folder into the output folder (if it is there); returns
  // its final path.
  std::filesystem::path publish(const std::string& file) const {
    std::error_code ec;
    if (std::filesystem::exists(dir_ / file, ec)) record::publish(dir_ / file, out_dir_ / file);
    return out_dir_ / file;
  }

 private:
  std::filesystem::path out_dir_, dir_;
};

void run_zoo(ExperimentContext& ctx) {
  const Staging staging(ctx.out_dir());
  const std::filesystem::path log = staging.dir() / "robot_zoo.log";
  ctx.part("checking for Pinocchio and example-robot-data");
  if (!have_peers(ctx)) {
    ctx.part("installing requirements-robots.txt");
    const std::filesystem::path requirements = find_shipped_file("requirements-robots.txt");
    if (requirements.empty() ||
        !ctx.run_python({"-m", "pip", "install", "-q", "-r", requirements.string()},
                        options(run::PythonOutput::File, log))
             .succeeded() ||
        !have_peers(ctx)) {
      const run::PythonCommand python = run::python_command();
      throw InputError("robot-zoo needs the PyPI packages pin and example-robot-data in the "
                       "environment of " + python.executable + " (" + python.origin +
                       "), and installing them (requirements-robots.txt) failed; see " +
                       staging.publish("robot_zoo.log").string());
    }
  }
  ctx.part("comparing the robots with Pinocchio");
  std::vector<std::string> args = {"-m", "marsden.robot_zoo", staging.dir().string()};
  if (ctx.quick()) args.emplace_back("--quick");
  const run::PythonRun study =
      ctx.run_python(args, options(run::PythonOutput::Append, log));
  if (!study.succeeded())
    throw InputError("robot-zoo: python -m marsden.robot_zoo failed (" + run_failure(study) +
                     "); see " + staging.publish("robot_zoo.log").string());
  for (const char* file : {"robot_zoo.csv", "robot_zoo.log", "robot_zoo.json"})
    staging.publish(file);

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
  ctx.add_data_file(ctx.out_dir() / "robot_zoo.log", "the run's progress, one line per robot");
}

}  // namespace

void register_robot_zoo() {
  register_experiment("robot-zoo",
                      "Every URDF of example-robot-data in the tree and maximal engines, "
                      "against Pinocchio (CRBA, RNEA, ABA + RK4)",
                      run_zoo);
}

}  // namespace marsden::experiments
