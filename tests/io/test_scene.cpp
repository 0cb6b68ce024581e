#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "io/scene_errors.hpp"
#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/run/run.hpp"

namespace marsden::io {
namespace {

using test::read_file;
using test::expect_message;
using test::load_error;
using test::TempDir;

// A valid free-body scene; each error test replaces one piece of it.
std::string rigid_body_scene(const std::string& dt = "0.01",
                             const std::string& inertia = R"({"J": [1, 2, 3], "mass": 1})",
                             const std::string& integrator = R"({"method": "vi"})",
                             const std::string& extra = "") {
  return R"({
  "system": {"type": "rigid_body", "inertia": )" + inertia + R"(},
  "integrator": )" + integrator + R"(,
  "dt": )" + dt + R"(,
  "duration": 0.1,
  "initial_state": {"angular_velocity": [0.1, 2.0, 0.1], "linear_velocity": [1, 0, 0]})" +
         extra + "\n}\n";
}

// Every input that once crashed, hung or exhausted memory (issue 23, and whatever
// scripts/fuzz.sh ever finds) is kept in tests/io/regressions/, named after its reader: it
// must be read, or refused with an InputError, and nothing else. These four were refused
// only after a crash or std::bad_alloc before.
TEST(Regressions, InputsThatOnceFailedAreRefusedCleanly) {
  const std::filesystem::path dir =
      std::filesystem::path(MARSDEN_SOURCE_DIR) / "tests" / "io" / "regressions";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::filesystem::path& path = entry.path();
    const std::string name = path.filename().string();
    SCOPED_TRACE(name);
    ++files;
    try {
      if (name.rfind("scene-", 0) == 0) {
        load_scene(path);
      } else if (name.rfind("problem-", 0) == 0) {
        load_problem(path);
      } else if (name.rfind("urdf-", 0) == 0) {
        read_urdf(path);
      } else {
        ADD_FAILURE() << "unknown reader";
      }
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(files, 4);
}

// A run that would write more rows than kMaxOutputRows is refused before it starts,
// naming output.every and the value that would do (issue 23: dt = 2e-9 s ran for hours).
TEST(SceneErrors, OutputTooLargeNamesOutputEvery) {
  TempDir dir;
  const std::string scene = R"({"system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
    "dt": 2e-9, "duration": 1.0, "output": {"every": 1}})";
  const std::string msg = load_error(dir, scene);
  expect_message(dir, msg, "output", "set output.every to at least 26");
  EXPECT_NO_THROW(load_scene(dir.write("ok.json", R"({"system": {"type": "rigid_body",
    "inertia": {"J": [1, 2, 3], "mass": 1}}, "dt": 2e-9, "duration": 1.0, "output": {"every": 26}})")));
}

TEST(SceneErrors, MissingField) {
  TempDir dir;
  std::string text = rigid_body_scene();
  text.replace(text.find("\"dt\": 0.01,"), 11, "");
  expect_message(dir, load_error(dir, text), "dt", "missing");
}

TEST(SceneErrors, WrongType) {
  TempDir dir;
  expect_message(dir, load_error(dir, rigid_body_scene("\"0.01\"")), "dt",
                 "expected a number, got string");
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2], "mass": 1})")),
                 "system.inertia.J", "expected an array of 3 numbers, got an array of 2");
  expect_message(dir,
                 load_error(dir, rigid_body_scene("0.01", R"({"J": [1, true, 3], "mass": 1})")),
                 "system.inertia.J[1]", "expected a number, got boolean");
}

TEST(SceneErrors, OutOfRange) {
  TempDir dir;
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                       R"({"tolerance": -0.1})")),
                 "integrator.tolerance", "must be > 0 (got -0.1)");
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                       R"({"max_iterations": 2.5})")),
                 "integrator.max_iterations", "expected an integer (got 2.5)");
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                       R"({"method": "euler"})")),
                 "integrator.method", "must be one of \"vi\", \"rk2\"");
}

TEST(SceneErrors, NaNOrInfinite) {
  TempDir dir;
  expect_message(dir, load_error(dir, rigid_body_scene("\"nan\"")), "dt", "NaN or infinite");
  // JSON has no infinity: a number that overflows a double is reported at its field.
  expect_message(dir, load_error(dir, rigid_body_scene("1e400")), "dt", "NaN or infinite");
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, -1e999, 3], "mass": 1})")),
                 "system.inertia.J[1]", "NaN or infinite");
}

TEST(SceneErrors, InertiaNotPositiveDefinite) {
  TempDir dir;
  const std::string indefinite = R"({"matrix": [[1, 0, 0, 0, 0, 0], [0, -2, 0, 0, 0, 0],
      [0, 0, 3, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]})";
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", indefinite)), "system.inertia", "");
  const std::string asymmetric = R"({"matrix": [[1, 0.5, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0],
      [0, 0, 3, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]})";
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", asymmetric)), "system.inertia", "");
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 0, 3], "mass": 1})")),
                 "system.inertia.J[1]", "must be > 0 (got 0)");
}

TEST(SceneErrors, TimeStepNotPositiveOrLongerThanDuration) {
  TempDir dir;
  expect_message(dir, load_error(dir, rigid_body_scene("0")), "dt", "must be > 0 (got 0)");
  expect_message(dir, load_error(dir, rigid_body_scene("-0.1")), "dt", "must be > 0 (got -0.1)");
  expect_message(dir, load_error(dir, rigid_body_scene("0.5")), "dt", "must be <= duration");
}

TEST(SceneErrors, UnknownKeyListsAllowedKeys) {
  TempDir dir;
  std::string text = rigid_body_scene();
  text.replace(text.find("\"integrator\""), 12, "\"integrater\"");
  const std::string msg = load_error(dir, text);
  expect_message(dir, msg, "integrater", "unknown key");
  EXPECT_NE(msg.find("integrator"), std::string::npos) << msg;
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                       R"({"tolerence": 1e-9})")),
                 "integrator.tolerence", "allowed keys here: method, map, tangent, tolerance");
}

TEST(SceneErrors, InputSizeMustMatchTheModel) {
  TempDir dir;
  const std::string heli = R"({"system": {"type": "helicopter"}, "dt": 0.01, "duration": 1,
      "controls": {"type": "constant", "value": [49.05]}})";
  expect_message(dir, load_error(dir, heli), "controls.value", "expected 2 numbers");
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                       "{}", R"(, "controls": {"type": "constant", "value": [1]})")),
                 "controls", "takes no controls");
  const std::string table = R"({"system": {"type": "boat"}, "dt": 0.01, "duration": 1,
      "controls": {"type": "table", "times": [0, 1, 1], "values": [[0, 0], [1, 1], [2, 2]]}})";
  expect_message(dir, load_error(dir, table), "controls.times[2]", "strictly increasing");
}

TEST(SceneErrors, OrientationNeedsExactlyOneForm) {
  TempDir dir;
  const std::string two = R"(, "initial_state": {"orientation": {"rpy": [0, 0, 0], "rotation_vector": [0, 0, 0]}})";
  std::string text = rigid_body_scene();
  text.replace(text.find(",\n  \"initial_state\""), std::string::npos, two + "\n}\n");
  expect_message(dir, load_error(dir, text), "initial_state.orientation", "exactly one of");
  text = rigid_body_scene();
  text.replace(text.find(",\n  \"initial_state\""), std::string::npos,
               R"(, "initial_state": {"orientation": {"quaternion": [2, 0, 0, 0]}}})");
  expect_message(dir, load_error(dir, text), "initial_state.orientation.quaternion", "unit quaternion");
}

TEST(SceneErrors, FileThatDoesNotExist) {
  TempDir dir;
  const auto path = dir / "nope.json";
  try {
    load_scene(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": no such file");
  }
}

TEST(SceneErrors, InvalidJsonReportsLineAndColumn) {
  TempDir dir;
  const std::string msg = load_error(dir, "{\n  \"dt\": 0.1\n  \"duration\": 1\n}\n");
  EXPECT_NE(msg.find((dir / "scene.json").string() + ": invalid JSON at line 3, column"),
            std::string::npos)
      << msg;
  const std::string dup = load_error(dir, R"({"dt": 0.1, "dt": 0.2})");
  expect_message(dir, dup, "dt", "duplicate key");
}

TEST(Scene, ParsesEveryForm) {
  const Scene s = parse_scene(R"({
    "system": {"type": "helicopter", "mass": 4},
    "integrator": {"method": "rk4", "map": "exp", "tangent": "exact", "on_failure": "subdivide",
                   "max_subdivisions": 3},
    "dt": 0.1, "duration": 1.04,
    "initial_state": {"position": [1, 2, 3], "orientation": {"rpy": [0, 0, 1.5707963267948966]},
                      "angular_velocity": [0, 0, 1], "linear_velocity": [2, 0, 0]},
    "controls": {"type": "sinusoid", "offset": [39.24, 0], "amplitude": [1, 0],
                 "frequency_hz": [0.5, 0]},
    "output": {"every": 3}})",
                                "inline");
  EXPECT_EQ(s.system_type, "helicopter");
  EXPECT_EQ(s.steps, 10);  // round(1.04 / 0.1)
  const VehicleScene& v = std::get<VehicleScene>(s.system);
  EXPECT_EQ(v.method, vehicle::Method::RK4);
  EXPECT_EQ(v.options.map, DiffMap::Exp);
  EXPECT_EQ(v.options.tangent, vehicle::TangentMap::Exact);
  EXPECT_EQ(s.policy.on_failure, OnFailure::Subdivide);
  EXPECT_EQ(s.policy.max_subdivisions, 3);
  EXPECT_EQ(s.output_every, 3);
  EXPECT_EQ(v.model->num_controls(), 2);
  ASSERT_TRUE(v.controls && v.shape);
  EXPECT_EQ(v.shape->size(), 2) << "absent shape defaults to zero tilt";
  EXPECT_TRUE(v.initial_state.g.R.isApprox(
      (Mat3() << 0, -1, 0, 1, 0, 0, 0, 0, 1).finished(), 1e-12));
  EXPECT_EQ(v.initial_state.xi, (Vec6() << 0, 0, 1, 2, 0, 0).finished());
}

TEST(Scene, ExampleScenesLoad) {
  for (const char* name : {"rigid_body", "helicopter_hover", "helicopter_turn", "boat_thrust",
                           "boat_wind_current", "car_parallel_park", "snakeboard_gait",
                           "sleigh"}) {
    const auto path = std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "scenes" /
                      (std::string(name) + ".json");
    EXPECT_NO_THROW(load_scene(path)) << path;
  }
}

// ------------------------------------------------------------------------------ running

TEST(RunScene, FreeBodyWritesConsistentOutputsAndConservesMomentum) {
  TempDir dir;
  const Scene scene = parse_scene(rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                   R"({"method": "vi"})",
                                                   R"(, "output": {"every": 3})"),
                                  "inline");
  const run::SceneRunSummary s = run::run_scene(scene, dir / "out");
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.steps_requested, 10);
  EXPECT_EQ(s.steps_done, 10);
  EXPECT_EQ(s.rows_written, 5u);  // steps 0, 3, 6, 9 and the last one
  EXPECT_FALSE(s.momentum_initial.empty());
  EXPECT_LT(s.energy_drift_relative, 1e-6);
  EXPECT_LT(s.momentum_drift_relative, 1e-6);
  EXPECT_GE(s.newton_min, 1);
  const std::string csv = read_file(dir / "out" / "trajectory.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "t,x,y,z,qw,qx,qy,qz,wx,wy,wz,vx,vy,vz,energy");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
  EXPECT_TRUE(std::filesystem::file_size(dir / "out" / "trajectory.npz") > 0);
  const std::string summary = read_file(dir / "out" / "summary.json");
  EXPECT_NE(summary.find("\"status\": \"ok\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"spatial_momentum\""), std::string::npos) << summary;
}

TEST(RunScene, HelicopterHoversAtCollectiveEqualToWeight) {
  TempDir dir;
  const Scene scene = parse_scene(R"({"system": {"type": "helicopter", "mass": 5, "gravity": 9.81},
      "dt": 0.01, "duration": 2, "initial_state": {"position": [0, 0, 10]},
      "controls": {"type": "constant", "value": [49.05, 0]}})",
                                  "inline");
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  ASSERT_TRUE(s.ok) << s.message;
  const std::string csv = read_file(dir / "trajectory.csv");
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
  // t, x, y, z of the last row: still at (0, 0, 10).
  double t, x, y, z;
  ASSERT_EQ(std::sscanf(last.c_str(), "%lf,%lf,%lf,%lf", &t, &x, &y, &z), 4) << last;
  EXPECT_NEAR(t, 2.0, 1e-9);
  EXPECT_NEAR(x, 0.0, 1e-9);
  EXPECT_NEAR(y, 0.0, 1e-9);
  EXPECT_NEAR(z, 10.0, 1e-9);
}

TEST(RunScene, NonConvergenceStopsAndKeepsWhatWasComputed) {
  TempDir dir;
  // A tolerance no iterate can meet: the first Newton step fails.
  const Scene scene = parse_scene(rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                   R"({"method": "rk2_implicit", "tolerance": 1e-300,
                                                       "max_iterations": 2})"),
                                  "inline");
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.steps_done, 0);
  EXPECT_NE(s.message.find("step 0 (t = 0 s)"), std::string::npos) << s.message;
  EXPECT_EQ(s.rows_written, 1u);
  const std::string summary = read_file(dir / "summary.json");
  EXPECT_NE(summary.find("\"status\": \"failed\""), std::string::npos) << summary;
  EXPECT_TRUE(std::filesystem::exists(dir / "trajectory.npz"));
}

TEST(RunScene, SubdivisionRescuesAStepThatFailsAtFullSize) {
  TempDir dir;
  // A fast spin with few Newton iterations: dt = 0.2 fails, dt / 2^k converges.
  const std::string integrator = R"({"method": "vi", "tolerance": 1e-12, "max_iterations": 3,
                                     "on_failure": "subdivide", "max_subdivisions": 6})";
  std::string text = rigid_body_scene("0.2", R"({"J": [1, 2, 3], "mass": 1})", integrator);
  text.replace(text.find("\"duration\": 0.1"), 15, "\"duration\": 0.4");
  text.replace(text.find("[0.1, 2.0, 0.1]"), 15, "[3.0, 8.0, 3.0]");
  const Scene scene = parse_scene(text, "inline");
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.steps_done, 2);
  EXPECT_GE(s.failures, 1);
  ASSERT_FALSE(s.subdivisions.empty());
  EXPECT_GE(s.subdivisions.front().level, 1);
  EXPECT_LE(s.subdivisions.front().level, 6);
}

// ------------------------------------------------------------ nonholonomic vehicles

// A valid scene of a nonholonomic vehicle; each error test changes one piece of it.
std::string nh_scene(const std::string& system, const std::string& integrator = "{}",
                     const std::string& extra = "") {
  return R"({"system": )" + system + R"(, "integrator": )" + integrator +
         R"(, "dt": 0.01, "duration": 0.1)" + extra + "}";
}

TEST(NonholonomicSceneErrors, UnknownAndMissingFields) {
  TempDir dir;
  expect_message(dir, load_error(dir, nh_scene(R"({"type": "car", "masss": 1})")), "system.masss",
                 "unknown key; allowed keys here: type, mass, wheel_inertia");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "sleigh"})", "{}",
                                          R"(, "initial_state": {"omega": 1, "psi": 0})")),
                 "initial_state.psi", "unknown key");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "car"})", "{}",
                                          R"(, "controls": {"type": "table", "times": [0, 1]})")),
                 "controls.values", "missing");
  expect_message(dir, load_error(dir, nh_scene(R"({"type": "snakeboard", "mass": -1})")),
                 "system.mass", "must be > 0");
  expect_message(dir, load_error(dir, nh_scene(R"({"type": "snakeboard", "rotor_inertia": 0.3})")),
                 "system", "mass * half_length^2 > rotor_inertia");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "snakeboard"})", "{}",
                                          R"(, "initial_state": {"phi": 1.5707963267948966})")),
                 "initial_state.phi", "must not be +-pi/2");
}

TEST(NonholonomicSceneErrors, ControlsMustMatchTheSystem) {
  TempDir dir;
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "car"})", "{}",
                                          R"(, "controls": {"type": "constant", "value": [1]})")),
                 "controls.value", "expected 2 numbers (car: rear-wheel torque");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "snakeboard"})", "{}",
                                          R"(, "controls": {"type": "sinusoid", "offset": [0, 0],
                                              "amplitude": [1, 1, 1], "frequency_hz": [1, 1]})")),
                 "controls.amplitude", "expected 2 numbers (snakeboard torques");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "sleigh"})", "{}",
                                          R"(, "controls": {"type": "constant", "value": []})")),
                 "controls", "the system takes no");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "car"})", "{}",
                                          R"(, "shape": {"type": "constant", "value": [0]})")),
                 "shape", "the system takes no");
  // With prescribed shape rates, the initial rates come from the controls.
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "snakeboard", "actuation": "velocity"})", "{}",
                                          R"(, "initial_state": {"psi_dot": 1})")),
                 "initial_state.psi_dot", "the shape velocities are the controls");
}

TEST(NonholonomicSceneErrors, MethodMustSuitTheSystem) {
  TempDir dir;
  expect_message(dir, load_error(dir, nh_scene(R"({"type": "car"})", R"({"method": "gni"})")),
                 "integrator.method",
                 "\"gni\" is not available for this system; must be one of \"rdp\", "
                 "\"rdp_explicit\", \"rk4\"");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "sleigh"})", R"({"method": "rdp_explicit"})")),
                 "integrator.method", "not available for this system");
  expect_message(dir, load_error(dir, nh_scene(R"({"type": "sleigh"})", R"({"method": "vi"})")),
                 "integrator.method", "not available for this system");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "snakeboard", "actuation": "velocity"})",
                                          R"({"method": "rattle"})")),
                 "integrator.method", "needs system.actuation \"torque\"");
  expect_message(dir,
                 load_error(dir, nh_scene(R"({"type": "sleigh"})", R"({"method": "rattle", "map": "exp"})")),
                 "integrator.map", "applies to method \"rdp\" only");
  expect_message(dir, load_error(dir, nh_scene(R"({"type": "car"})", R"({"alpha": 1.5})")),
                 "integrator.alpha", "must be <= 1");
  // The SE(3) methods' options stay where they were.
  expect_message(dir, load_error(dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})",
                                                       R"({"method": "rdp"})")),
                 "integrator.method", "must be one of");
}

// Final (theta, x, y) and summary of a nonholonomic scene run from text.
struct NhRun {
  run::SceneRunSummary sum;
  double theta = 0, x = 0, y = 0;
};

NhRun run_nh(const TempDir& dir, const std::string& name, const std::string& text) {
  NhRun r;
  r.sum = run::run_scene(parse_scene(text, name), dir / name);
  const std::string csv = read_file(dir / name / "trajectory.csv");
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
  double t;
  EXPECT_EQ(std::sscanf(last.c_str(), "%lf,%lf,%lf,%lf", &t, &r.theta, &r.x, &r.y), 4) << last;
  return r;
}

TEST(RunNonholonomicScene, SleighMethodsAgreeAndKeepTheConstraint) {
  TempDir dir;
  const std::string sys = R"({"type": "sleigh", "mass": 1, "inertia": 0.1, "skate_offset": 0.5})";
  const std::string init = R"(, "initial_state": {"omega": 2, "v1": 0.5})";
  auto text = [&](const char* m) {
    return R"({"system": )" + sys + R"(, "integrator": {"method": ")" + m +
           R"("}, "dt": 0.005, "duration": 3)" + init + "}";
  };
  const NhRun rdp = run_nh(dir, "rdp", text("rdp"));
  const NhRun rattle = run_nh(dir, "rattle", text("rattle"));
  const NhRun rk4 = run_nh(dir, "rk4", text("rk4"));
  for (const NhRun* r : {&rdp, &rattle, &rk4}) {
    ASSERT_TRUE(r->sum.ok) << r->sum.message;
    EXPECT_TRUE(r->sum.has_constraint);
    EXPECT_LT(r->sum.constraint_violation_max, 1e-9);
    EXPECT_LT(r->sum.energy_drift_relative, 1e-3);
    EXPECT_NEAR(r->theta, rk4.theta, 1e-3);
    EXPECT_NEAR(r->x, rk4.x, 1e-3);
    EXPECT_NEAR(r->y, rk4.y, 1e-3);
  }
  EXPECT_LT(rattle.sum.constraint_violation_max, 1e-12);
  const std::string csv = read_file(dir / "rdp" / "trajectory.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "t,theta,x,y,omega,v1,v2,energy,constraint_violation");
  const std::string summary = read_file(dir / "rdp" / "summary.json");
  EXPECT_NE(summary.find("\"constraint_violation\""), std::string::npos) << summary;
}

TEST(RunNonholonomicScene, SnakeboardMethodsAgreeUnderTorques) {
  TempDir dir;
  auto text = [](const char* m) {
    return std::string(R"({"system": {"type": "snakeboard"}, "integrator": {"method": ")") + m +
           R"("}, "dt": 0.005, "duration": 2,
       "initial_state": {"v1": 0.3, "phi": 0.2, "psi_dot": 0.5},
       "controls": {"type": "sinusoid", "offset": [0, 0], "amplitude": [0.3, 0.1],
                    "frequency_hz": [0.5, 0.5], "phase": [0, 0.5]}})";
  };
  const NhRun rk4 = run_nh(dir, "rk4", text("rk4"));
  for (const char* m : {"rdp", "rattle", "gni"}) {
    const NhRun r = run_nh(dir, m, text(m));
    ASSERT_TRUE(r.sum.ok) << m << ": " << r.sum.message;
    EXPECT_NEAR(r.theta, rk4.theta, 5e-3) << m;
    EXPECT_NEAR(r.x, rk4.x, 5e-3) << m;
    EXPECT_NEAR(r.y, rk4.y, 5e-3) << m;
    if (std::string(m) != "gni") {
      EXPECT_LT(r.sum.constraint_violation_max, 1e-9) << m;
    }
  }
  const std::string csv = read_file(dir / "rdp" / "trajectory.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "t,theta,x,y,psi,phi,psi_dot,phi_dot,omega,v1,v2,energy,constraint_violation,u0,u1");
}

TEST(RunNonholonomicScene, CarMethodsAgree) {
  TempDir dir;
  auto text = [](const char* m) {
    return std::string(R"({"system": {"type": "car"}, "integrator": {"method": ")") + m +
           R"("}, "dt": 0.01, "duration": 3, "initial_state": {"psi_dot": 1, "sigma": 0.1},
       "controls": {"type": "sinusoid", "offset": [0.1, 0], "amplitude": [0.3, 0.3],
                    "frequency_hz": [0.5, 0.3]}})";
  };
  const NhRun rk4 = run_nh(dir, "rk4", text("rk4"));
  for (const char* m : {"rdp", "rdp_explicit"}) {
    const NhRun r = run_nh(dir, m, text(m));
    ASSERT_TRUE(r.sum.ok) << m << ": " << r.sum.message;
    EXPECT_LT(r.sum.constraint_violation_max, 1e-12) << m;
    EXPECT_NEAR(r.theta, rk4.theta, 1e-3) << m;
    EXPECT_NEAR(r.x, rk4.x, 1e-3) << m;
    EXPECT_NEAR(r.y, rk4.y, 1e-3) << m;
  }
}

TEST(RunNonholonomicScene, NonConvergenceStopsAndKeepsWhatWasComputed) {
  TempDir dir;
  const Scene scene = parse_scene(
      nh_scene(R"({"type": "snakeboard"})", R"({"method": "rattle", "tolerance": 1e-300,
                                              "max_iterations": 1})",
               R"(, "initial_state": {"v1": 1, "phi": 0.3})"),
      "inline");
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.steps_done, 0);
  EXPECT_NE(s.message.find("step 0 (t = 0 s) did not converge"), std::string::npos) << s.message;
  EXPECT_EQ(s.rows_written, 1u);
  const std::string summary = read_file(dir / "summary.json");
  EXPECT_NE(summary.find("\"status\": \"failed\""), std::string::npos) << summary;
  EXPECT_TRUE(std::filesystem::exists(dir / "trajectory.npz"));
}

TEST(RunNonholonomicScene, SubdivisionRescuesAStep) {
  TempDir dir;
  // Few Newton iterations at a large step fail; smaller substeps converge.
  const Scene scene = parse_scene(
      R"({"system": {"type": "snakeboard"}, "integrator": {"method": "rdp", "max_iterations": 2,
          "on_failure": "subdivide", "max_subdivisions": 10}, "dt": 0.5, "duration": 1.0,
          "initial_state": {"v1": 2, "phi": 0.6, "psi_dot": 3},
          "controls": {"type": "constant", "value": [2, 2]}})",
      "inline");
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.steps_done, 2);
  EXPECT_GE(s.failures, 1);
  ASSERT_FALSE(s.subdivisions.empty());
  EXPECT_GE(s.subdivisions.front().level, 1);
}

// "limits" changes the output budget both ways: a run refused by default loads with a
// raised limit, a lowered one refuses a small run with its estimate; bad limits are named.
TEST(SceneErrors, LimitsRaiseAndLowerTheOutputBudget) {
  TempDir dir;
  const std::string body = R"("system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}})";
  const std::string huge = "{" + body + R"(, "dt": 2e-9, "duration": 1.0)";
  expect_message(dir, load_error(dir, huge + "}"), "duration", "(limits.output_rows)");
  const Scene raised =
      load_scene(dir.write("raised.json", huge + R"(, "limits": {"output_rows": 6e8}})"));
  EXPECT_EQ(raised.steps, 500000000);
  EXPECT_EQ(raised.output_rows, 600000000);

  const std::string small = "{" + body + R"(, "dt": 0.01, "duration": 1.0)";
  EXPECT_NO_THROW(load_scene(dir.write("small.json", small + "}")));
  const std::string msg = load_error(dir, small + R"(, "limits": {"output_rows": 50}})");
  expect_message(dir, msg, "duration", "the run would write 102 rows");
  EXPECT_NE(msg.find("more than the limit of 50 (limits.output_rows)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set output.every to at least 3"), std::string::npos) << msg;
  EXPECT_NO_THROW(load_scene(dir.write(
      "every.json", small + R"(, "output": {"every": 3}, "limits": {"output_rows": 50}})")));

  for (const auto& [limits, field, problem] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {R"({"output_rows": 0})", "limits.output_rows", "must be > 0"},
           {R"({"memory_bytes": -1})", "limits.memory_bytes", "must be > 0"},
           {R"({"memory_bytes": 1.5})", "limits.memory_bytes", "expected a whole number"},
           {R"({"memory_bytes": 1e300})", "limits.memory_bytes", "expected a whole number"},
           {R"({"memory_bytes": "8 GB"})", "limits.memory_bytes", "expected a number"},
           {R"({"cpu_seconds": 10})", "limits.cpu_seconds", "unknown key"},
           {R"([1])", "limits", "expected an object"}})
    expect_message(dir, load_error(dir, small + R"(, "limits": )" + limits + "}"), field, problem);
}

// "view" holds what the player draws beside a run (an optimisation's obstacles): read as a
// problem file's obstacles are, errors named; no part of the dynamics.
TEST(SceneErrors, ViewObstaclesAreReadAndNamed) {
  TempDir dir;
  const std::string body = R"({"system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
      "dt": 0.01, "duration": 0.1, "view": )";
  const SceneView view = parse_scene_view(load_scene(dir.write("view.json", body + R"({"dimension": 2,
      "obstacles": [{"type": "cylinder", "center": [4, 0.3], "radius": 0.5}]}})")));
  ASSERT_EQ(view.obstacles.size(), 1u);
  EXPECT_EQ(view.dimension, 2);
  EXPECT_EQ(view.obstacles[0].center, Vec3(4.0, 0.3, 0.0));
  for (const auto& [view, field, problem] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {R"({"dimension": 4})", "view.dimension", "4"},
           {R"({"obstacles": [{"type": "cone"}]})", "view.obstacles[0].type", "cone"},
           {R"({"obstacles": [{"type": "sphere", "center": [0, 0, 0], "radius": -1}]})",
            "view.obstacles[0].radius", "must be > 0"},
           {R"({"walls": []})", "view.walls", "unknown key"}})
    expect_message(dir, load_error(dir, body + view + "}"), field, problem);
}

// "view.goal": an optimisation's landing pad or dock at its final pose.
TEST(SceneErrors, ViewGoalIsReadAndNamed) {
  TempDir dir;
  const std::string body = R"({"system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
      "dt": 0.01, "duration": 0.1, "view": )";
  const SceneView view = parse_scene_view(load_scene(dir.write("goal.json", body + R"({"goal": {"kind": "dock",
      "position": [25, 10, 0], "orientation": {"rpy": [0, 0, 1.5707963267948966]}}}})")));
  EXPECT_EQ(view.goal_kind, "dock");
  EXPECT_EQ(view.goal.x, Vec3(25, 10, 0));
  EXPECT_LT((view.goal.R * Vec3::UnitX() - Vec3::UnitY()).norm(), 1e-15);
  EXPECT_TRUE(view.obstacles.empty());
  EXPECT_EQ(parse_scene_view(load_scene(dir.write("none.json", body + "{}}"))).goal_kind, "");
  for (const auto& [view, field, problem] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {R"({"goal": {"kind": "helipad", "position": [0, 0, 0]}})", "view.goal.kind", "helipad"},
           {R"({"goal": {"kind": "dock"}})", "view.goal.position", "missing"},
           {R"({"goal": {"kind": "dock", "position": [0, 0]}})", "view.goal.position", "3"},
           {R"({"goal": {"kind": "dock", "position": [0, 0, 0], "heading": 1}})", "view.goal.heading",
            "unknown key"}})
    expect_message(dir, load_error(dir, body + view + "}"), field, problem);
}

// Echoed input is cut: a 10 MB key once filled the message.
TEST(SceneErrors, LongKeysAndValuesAreShownCut) {
  TempDir dir;
  const std::string key(10'000'000, 'k');
  const std::string msg = load_error(dir, R"({")" + key + R"(": 1})");
  EXPECT_LT(msg.size(), 1000u);
  EXPECT_NE(msg.find("field '" + key.substr(0, 60) + "\u2026(10000000 bytes)': unknown key"),
            std::string::npos) << msg.substr(0, 1000);
  const std::string value(5'000'000, 'v');
  const std::string msg2 = load_error(
      dir, rigid_body_scene("0.01", R"({"J": [1, 2, 3], "mass": 1})", R"({"method": ")" + value + R"("})"));
  EXPECT_LT(msg2.size(), 1000u);
  expect_message(dir, msg2, "integrator.method", "(got \"" + value.substr(0, 60) +
                                                     "\u2026(5000000 bytes)\")");
}

// ------------------------------------------------------------------ code that files name
// The readers of io/ run no code: the keys around a reference are checked, and then, with
// no resolver, every module and library is refused before anything runs (the fuzz targets'
// readers). tests/run/test_code.cpp tests the resolver of run/ and the user's allowance;
// tests/python/test_symbolic_module.py runs modules.

std::string module_scene(const std::string& system) {
  return R"({"system": )" + system + R"(, "dt": 0.01, "duration": 0.1})";
}

TEST(SceneCodeErrors, BothModuleAndLibraryStrayKeysAndObjectNames) {
  TempDir dir;
  dir.write("m.py", "");
  expect_message(dir, load_error(dir, module_scene(R"({"module": "m.py", "library": "m.so"})")),
                 "system", "give either \"module\" or \"library\", not both");
  expect_message(dir, load_error(dir, module_scene(R"({"type": "generated", "module": "m.py"})")),
                 "system.type", "unknown key; allowed keys here: module, object");
  expect_message(dir, load_error(dir, module_scene(R"({"module": "m.py", "object": "a b"})")),
                 "system.object", "expected a Python attribute name, got 'a b'");
  expect_message(dir,
                 load_error(dir, module_scene(R"({"type": "generated", "library": "m.so",
                                                  "object": "quad"})")),
                 "system.object", "unknown key; allowed keys here: type, library");
}

// A library here is text: a reader that tried to load it would say "cannot be loaded".
TEST(SceneCodeErrors, ReadersWithoutAResolverRefuseModulesAndLibraries) {
  TempDir dir;
  dir.write("m.py", "");
  dir.write("m.so", "not a shared object");
  const std::string module = "names a Python module ('m.py'), which this reader does not run";
  const std::string library = "names a compiled library ('m.so'), which this reader does not load";
  expect_message(dir, load_error(dir, module_scene(R"({"module": "m.py"})")), "system.module",
                 module);
  expect_message(dir, load_error(dir, module_scene(R"({"type": "tree",
      "model": "double_pendulum", "potentials": [{"module": "m.py"}]})")),
                 "system.potentials[0].module", module);
  for (const char* type : {"generated", "generated_rdp", "generated_nonholonomic"})
    expect_message(dir,
                   load_error(dir, module_scene(R"({"type": ")" + std::string(type) +
                                                R"(", "library": "m.so"})")),
                   "system.library", library);
  for (const char* key : {"potentials", "forces", "generated_constraints"})
    expect_message(dir, load_error(dir, module_scene(R"({"type": "tree",
        "model": "double_pendulum", ")" + std::string(key) + R"(": [{"library": "m.so"}]})")),
                   "system." + std::string(key) + "[0].library", library);
  for (const char* system : {R"({"module": "m.py", "object": "quad"})",
                             R"({"type": "generated", "library": "m.so"})",
                             R"({"type": "generated_rdp", "library": "m.so"})"}) {
    std::string problem;
    try {
      parse_problem_text(R"({"system": )" + std::string(system) + "}",
                         (dir / "scene.json").string());
    } catch (const InputError& e) {
      problem = e.what();
    }
    EXPECT_NE(problem.find("which this reader does not"), std::string::npos) << problem;
    expect_message(dir, problem, std::string(system).find("module") != std::string::npos
                                     ? "system.module" : "system.library", "names a");
  }
}

}  // namespace
}  // namespace marsden::io
