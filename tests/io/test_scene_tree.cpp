#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "io/scene_errors.hpp"
#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/run/run.hpp"

namespace marsden::io {
namespace {

using test::read_file;
using test::expect_message;
using test::load_error;
using test::TempDir;

// A valid double-pendulum scene; each error test replaces one piece of it.
std::string pendulum_scene(const std::string& system = R"({"type": "tree", "model": "double_pendulum"})",
                           const std::string& initial = R"({"q": {"q1": 1.0}, "qd": {"q2": 0.5}})",
                           const std::string& dt = "0.01", const std::string& extra = "") {
  return R"({
  "system": )" + system + R"(,
  "dt": )" + dt + R"(,
  "duration": 0.2,
  "initial_state": )" + initial + extra + "\n}\n";
}

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "scenes" / (name + ".json");
}

TEST(TreeScene, ExampleScenesLoadAndRun) {
  for (const char* name :
       {"double_pendulum", "pendulum_chain", "four_bar", "marionette", "urdf_arm"}) {
    SCOPED_TRACE(name);
    Scene scene = load_scene(example(name));
    ASSERT_TRUE(std::holds_alternative<TreeScene>(scene.system));
    scene.steps = std::min(scene.steps, 20);  // a short run is enough here
    TempDir dir;
    const run::SceneRunSummary s = run::run_scene(scene, dir.path());
    EXPECT_TRUE(s.ok) << s.message;
    EXPECT_EQ(s.steps_done, scene.steps);
    EXPECT_GE(s.newton_min, 1);
    EXPECT_LE(s.constraint_violation_max, 1e-8);
    EXPECT_TRUE(std::filesystem::exists(dir / "trajectory.npz"));
    EXPECT_NE(read_file(dir / "summary.json").find("\"status\": \"ok\""), std::string::npos);
  }
}

TEST(TreeScene, DoublePendulumWritesNamedColumnsAndConservesEnergy) {
  TempDir dir;
  const Scene scene = load_scene(dir.write("scene.json", pendulum_scene()));
  EXPECT_EQ(scene.system_type, "tree");
  EXPECT_EQ(std::get<TreeScene>(scene.system).q0[0], 1.0);
  EXPECT_EQ(std::get<TreeScene>(scene.system).q0[1], 0.0);  // missing coordinates are zero
  EXPECT_EQ(std::get<TreeScene>(scene.system).qd0[1], 0.5);
  const run::SceneRunSummary s = run::run_scene(scene, dir / "out");
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.steps_done, 20);
  EXPECT_EQ(s.rows_written, 21u);
  EXPECT_LE(s.energy_drift_relative, 1e-3);
  const std::string csv = read_file(dir / "out" / "trajectory.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "t,q1,q2,qd_q1,qd_q2,p_q1,p_q2,energy,constraint_residual");
}

// "base": "floating" frees the URDF's root: six coordinates come first, and from rest
// under gravity the whole arm falls without moving its joints, z = -g t^2 / 2 (the midpoint
// rule is exact for a constant acceleration).
TEST(TreeScene, FloatingUrdfBaseFallsFreely) {
  TempDir dir;
  const std::string urdf = (std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "urdf" /
                            "arm.urdf").string();
  const Scene scene = load_scene(dir.write(
      "scene.json", pendulum_scene(R"({"type": "tree", "urdf": ")" + urdf + R"(", "base": "floating"})",
                                   "{}")));
  const auto& model = *std::get<TreeScene>(scene.system).model;
  ASSERT_EQ(model.coords()[0].name, "base_link_x");
  ASSERT_EQ(model.coords()[5].name, "base_link_roll");
  const run::SceneRunSummary s = run::run_scene(scene, dir / "out");
  ASSERT_TRUE(s.ok) << s.message;
  const std::string csv = read_file(dir / "out" / "trajectory.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  std::string last = csv.substr(0, csv.size() - 1);
  last = last.substr(last.rfind('\n') + 1);
  auto column = [&](const std::string& name) {
    int index = 0;
    for (std::size_t at = 0; at < header.find("," + name + ","); ++at) index += header[at] == ',';
    std::size_t begin = 0;
    for (int k = 0; k < index + 1; ++k) begin = last.find(',', begin) + 1;
    return std::stod(last.substr(begin));
  };
  EXPECT_NEAR(column("base_link_z"), -0.5 * 9.81 * 0.2 * 0.2, 1e-9);
  EXPECT_NEAR(column("base_link_x"), 0.0, 1e-12);
  EXPECT_NEAR(column("elbow"), 0.0, 1e-9);
  expect_message(dir, load_error(dir, pendulum_scene(R"({"type": "tree", "urdf": ")" + urdf +
                                                         R"(", "base": "wobbly"})", "{}")),
                 "system.base", "floating");
}

TEST(TreeScene, Rk4RunsTheContinuousDynamics) {
  TempDir dir;
  const Scene scene = load_scene(dir.write(
      "scene.json", pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                                   R"({"q": [1.0, 0.0]}, "integrator": {"method": "rk4"})")));
  EXPECT_EQ(std::get<TreeScene>(scene.system).method, TreeMethod::Rk4);
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.newton_total, 0);
  EXPECT_LE(s.energy_drift_relative, 1e-6);
}

TEST(TreeScene, GalerkinRunsFromASceneAndKeepsEnergyAndConstraints) {
  TempDir dir;
  const Scene scene = load_scene(dir.write(
      "scene.json",
      pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                     R"({"q": [1.0, 0.0]}, "integrator": {"method": "galerkin", "stages": 3,
                         "quadrature": "gauss", "tolerance": 1e-12})")));
  const TreeScene& ts = std::get<TreeScene>(scene.system);
  EXPECT_EQ(ts.method, TreeMethod::Galerkin);
  EXPECT_EQ(ts.galerkin.stages, 3);
  EXPECT_EQ(ts.galerkin.quadrature, tree::GalerkinQuadrature::Gauss);
  EXPECT_EQ(ts.galerkin.newton.tolerance, 1e-12);
  const run::SceneRunSummary s = run::run_scene(scene, dir / "out");
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_GE(s.newton_min, 1);
  // Order 6 at 10 ms: the energy error (qd recovered from p) is far below the midpoint's.
  EXPECT_LE(s.energy_drift_relative, 1e-9);
  EXPECT_NE(read_file(dir / "out" / "summary.json").find("\"galerkin\""), std::string::npos);

  Scene bar = load_scene(example("four_bar"));
  std::get<TreeScene>(bar.system).method = TreeMethod::Galerkin;
  bar.steps = 100;
  const run::SceneRunSummary sb = run::run_scene(bar, dir / "bar");
  ASSERT_TRUE(sb.ok) << sb.message;
  EXPECT_LE(sb.constraint_violation_max, 1e-8);
}

TEST(TreeSceneErrors, GalerkinFields) {
  TempDir dir;
  const auto with = [](const std::string& integrator, const std::string& model = "double_pendulum") {
    return pendulum_scene(R"({"type": "tree", "model": ")" + model + R"("})", "{}", "0.01",
                          R"(, "integrator": )" + integrator);
  };
  expect_message(dir, load_error(dir, with(R"({"method": "midpoint", "stages": 2})")),
                 "integrator.stages", "galerkin");
  expect_message(dir, load_error(dir, with(R"({"method": "rk4", "quadrature": "gauss"})")),
                 "integrator.quadrature", "galerkin");
  expect_message(dir, load_error(dir, with(R"({"method": "galerkin", "alpha": 0.5})")),
                 "integrator.alpha", "midpoint");
  expect_message(dir, load_error(dir, with(R"({"method": "galerkin", "stages": 0})")),
                 "integrator.stages", "");
  expect_message(dir, load_error(dir, with(R"({"method": "galerkin", "quadrature": "simpson"})")),
                 "integrator.quadrature", "lobatto");
  expect_message(dir, load_error(dir, with(R"({"method": "galerkin"})", "marionette")),
                 "integrator.method", "kinematic");
}

TEST(TreeScene, Rk4OnAConstrainedModelReportsTheDrift) {
  Scene scene = load_scene(example("four_bar"));
  std::get<TreeScene>(scene.system).method = TreeMethod::Rk4;
  scene.steps = 100;
  TempDir dir;
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_TRUE(s.has_constraint);
  // Index-1 dynamics: h drifts, slowly at this step.
  EXPECT_GT(s.constraint_violation_max, 0.0);
  EXPECT_LE(s.constraint_violation_max, 1e-6);
}

TEST(TreeScene, FourBarIsAssembledFromTheCrank) {
  TempDir dir;
  // Without an initial state: crank at 0, at rest.
  Scene scene = load_scene(dir.write(
      "scene.json", pendulum_scene(R"({"type": "tree", "model": "four_bar"})", "{}")));
  EXPECT_EQ(std::get<TreeScene>(scene.system).q0[0], 0.0);
  EXPECT_GT(std::abs(std::get<TreeScene>(scene.system).q0[2]), 0.1);
  scene = load_scene(dir.write(
      "scene.json", pendulum_scene(R"({"type": "tree", "model": "four_bar"})",
                                   R"({"crank_angle": 1.0, "crank_rate": 2.0, "branch": -1})")));
  EXPECT_EQ(std::get<TreeScene>(scene.system).q0[0], 1.0);
  EXPECT_EQ(std::get<TreeScene>(scene.system).qd0[0], 2.0);
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  EXPECT_TRUE(s.ok) << s.message;
  EXPECT_LE(s.constraint_violation_max, 1e-10);
}

TEST(TreeScene, InlineFramesWithSpringDamperConstraintAndInput) {
  TempDir dir;
  const std::string system = R"({"type": "tree",
    "frames": [
      {"name": "cart", "type": "ty", "coordinate": "y", "mass": {"mass": 2.0}},
      {"name": "pole", "parent": "cart", "type": "rx", "coordinate": "theta"},
      {"name": "tip", "parent": "pole", "type": "tz", "value": 0.5,
       "mass": {"mass": 0.5, "inertia": [0.01, 0.01, 0.001]}},
      {"name": "anchor", "type": "const", "translation": [0, 0, -1], "rpy": [0, 0, 0.1]}
    ],
    "springs": [{"coordinate": "y", "stiffness": 10.0, "rest": 0.0}],
    "dampers": [{"coordinate": "theta", "damping": 0.05}],
    "inputs": [{"type": "force", "coordinate": "y"}]})";
  const Scene scene = load_scene(dir.write(
      "scene.json",
      pendulum_scene(system, R"({"q": {"theta": 0.2}})", "0.01",
                     R"(, "controls": {"type": "constant", "value": [1.0]})")));
  EXPECT_EQ(scene.source, "frames");
  EXPECT_EQ(std::get<TreeScene>(scene.system).model->num_inputs(), 1);
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  EXPECT_TRUE(s.ok) << s.message;
  const std::string csv = read_file(dir / "trajectory.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "t,y,theta,qd_y,qd_theta,p_y,p_theta,energy,constraint_residual,u0");
}

TEST(TreeScene, NonConvergenceStopsAndKeepsWhatWasComputed) {
  TempDir dir;
  const Scene scene = load_scene(dir.write(
      "scene.json",
      pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                     R"({"q": [1.0, 0.0]}, "integrator": {"tolerance": 1e-300, "max_iterations": 2})")));
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.steps_done, 0);
  EXPECT_NE(s.message.find("step 0 (t = 0 s) did not converge"), std::string::npos) << s.message;
  EXPECT_EQ(s.rows_written, 1u);
  EXPECT_NE(read_file(dir / "summary.json").find("\"status\": \"failed\""), std::string::npos);
}

TEST(TreeSceneErrors, UnknownModel) {
  TempDir dir;
  expect_message(dir, load_error(dir, pendulum_scene(R"({"type": "tree", "model": "triple"})")),
                 "system.model", "must be one of \"n_link_pendulum\"");
}

TEST(TreeSceneErrors, UnknownCoordinateName) {
  TempDir dir;
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                                                R"({"q": {"q3": 1.0}})")),
                 "initial_state.q.q3", "q3");
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                                                R"({"q": [1.0]})")),
                 "initial_state.q", "expected an array of 2 numbers");
}

TEST(TreeSceneErrors, NegativeMassAndNaN) {
  TempDir dir;
  expect_message(
      dir,
      load_error(dir, pendulum_scene(
                          R"({"type": "tree", "model": "double_pendulum", "parameters": {"mass": -1}})")),
      "system.parameters.mass", "must be > 0 (got -1)");
  expect_message(
      dir,
      load_error(dir, pendulum_scene(
                          R"({"type": "tree", "model": "double_pendulum", "parameters": {"length": "nan"}})")),
      "system.parameters.length", "NaN or infinite");
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "frames": [
                     {"name": "a", "type": "rx", "coordinate": "q", "mass": {"mass": -2}}]})")),
                 "system.frames[0].mass.mass", "must be > 0 (got -2)");
}

// Issue 23's reproducers: sizes that would crash or exhaust memory are refused when the
// scene is read, naming the field that asked for them.
TEST(TreeSceneErrors, ModelsTooLargeForMemoryNameTheField) {
  TempDir dir;
  const std::string chain = R"({"type": "tree", "model": "n_link_pendulum", "parameters": {"n": 2344}})";
  expect_message(dir,
                 load_error(dir, pendulum_scene(chain, "{}", "0.01",
                                                R"(, "integrator": {"lagrangian": "paper_cached"})")),
                 "integrator.lagrangian", "GiB");
  expect_message(dir,
                 load_error(dir, pendulum_scene(
                     R"({"type": "tree", "model": "n_link_pendulum", "parameters": {"n": 100000}})", "{}")),
                 "system.parameters.n", "GiB");
}

// Input files are read only when they are regular files of a bounded size.
TEST(TreeSceneErrors, InputFilesMustBeRegularFilesOfBoundedSize) {
  TempDir dir;
  for (const char* path : {"/dev/zero", "/tmp"}) {
    try {
      load_scene(path);
      ADD_FAILURE() << path;
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_TRUE(msg.find("not a regular file") != std::string::npos ||
                  msg.find("is a directory") != std::string::npos) << msg;
    }
  }
  std::filesystem::create_directories(dir / "robot.urdf");  // a directory named like a file
  expect_message(dir, load_error(dir, pendulum_scene(R"({"type": "tree", "urdf": "robot.urdf"})")),
                 "system.urdf", "is a directory");
}

TEST(TreeSceneErrors, TimeStepMustBePositive) {
  TempDir dir;
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                                                R"({})", "0")),
                 "dt", "must be > 0 (got 0)");
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})",
                                                R"({})", "-0.01")),
                 "dt", "must be > 0 (got -0.01)");
}

TEST(TreeSceneErrors, ModelSpecificFields) {
  TempDir dir;
  // n_link_pendulum needs n.
  expect_message(dir,
                 load_error(dir, pendulum_scene(
                                     R"({"type": "tree", "model": "n_link_pendulum", "parameters": {}})")),
                 "system.parameters.n", "missing");
  // A four-bar configuration that does not close.
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "four_bar"})",
                                                R"({"q": [0.5, 0.0, 0.0]})")),
                 "initial_state.q", "does not hold at the initial configuration");
  // Kinematic signals apply to kinematic coordinates only.
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "marionette"})", "{}",
                                                "0.01",
                                                R"(, "kinematic": {"neck_rz": {"type": "constant", "value": [0]}})")),
                 "kinematic.neck_rz", "is not kinematic");
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})", "{}",
                                                "0.01", R"(, "controls": {"type": "constant", "value": [0]})")),
                 "controls", "takes no");
  // A URDF path is relative to the scene file.
  expect_message(dir, load_error(dir, pendulum_scene(R"({"type": "tree", "urdf": "missing.urdf"})")),
                 "system.urdf", "missing.urdf");
  // An inline frame with an unknown parent.
  expect_message(dir,
                 load_error(dir, pendulum_scene(R"({"type": "tree", "frames": [
                     {"name": "a", "parent": "nowhere", "type": "rx", "coordinate": "q"}]})")),
                 "system.frames[0].parent", "nowhere");
}

// "limits": {"memory_bytes"} sets the tree's memory budget: the model's estimate itself
// loads and runs, one byte less is refused naming the field and the estimate; a model
// refused by default loads under a raised limit.
TEST(TreeSceneErrors, MemoryLimitIsTheScenesToSet) {
  TempDir dir;
  const auto model = tree::double_pendulum();
  const std::size_t need = tree::data_memory_estimate(model, 0);
  const auto with_limit = [&](std::size_t bytes) {
    return pendulum_scene(R"({"type": "tree", "model": "double_pendulum"})", "{}", "0.01",
                          R"(, "limits": {"memory_bytes": )" + std::to_string(bytes) + "}");
  };
  const Scene scene = load_scene(dir.write("fits.json", with_limit(need)));
  EXPECT_TRUE(run::run_scene(scene, dir / "out").ok);
  const std::string msg = load_error(dir, with_limit(need - 1));
  expect_message(dir, msg, "system", "needs about " + std::to_string(need) + " bytes");
  EXPECT_NE(msg.find("over limits.memory_bytes = " + std::to_string(need - 1) + " bytes"),
            std::string::npos) << msg;

  // n = 400 with the cached recursion (800 frames): about 9 GiB, over the default 4 GiB.
  const std::string big = pendulum_scene(
      R"({"type": "tree", "model": "n_link_pendulum", "parameters": {"n": 400}})", "{}", "0.01",
      R"(, "integrator": {"lagrangian": "paper_cached"})");
  expect_message(dir, load_error(dir, big), "integrator.lagrangian", "limits.memory_bytes");
  std::string raised = big;
  raised.insert(raised.rfind('}'), R"(, "limits": {"memory_bytes": 1.2e10})");
  EXPECT_NO_THROW(load_scene(dir.write("raised.json", raised)));
}

}  // namespace
}  // namespace marsden::io
