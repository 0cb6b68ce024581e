// Scenes of maximal-coordinate systems (system type "maximal", src/io/scene_maximal.cpp).
#include <algorithm>
#include <fstream>
#include <sstream>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "io/scene_errors.hpp"
#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::io {
namespace {

using test::read_file;
using test::expect_message;
using test::load_error;
using test::TempDir;

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "scenes" / (name + ".json");
}

// A valid scene; each error test replaces one piece of it.
std::string chain_scene(const std::string& system =
                            R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3}})",
                        const std::string& extra = "", const std::string& dt = "0.01") {
  return R"({
  "system": )" + system + R"(,
  "dt": )" + dt + R"(,
  "duration": 0.2)" + extra + "\n}\n";
}

TEST(MaximalScene, ExampleScenesLoadAndRun) {
  for (const char* name : {"maximal_chain", "maximal_loop", "maximal_urdf_double_pendulum",
                           "maximal_sleigh", "maximal_rolling_disk", "maximal_trailers",
                           "maximal_lane_change"}) {
    SCOPED_TRACE(name);
    Scene scene = load_scene(example(name));
    ASSERT_TRUE(std::holds_alternative<MaximalScene>(scene.system));
    EXPECT_EQ(scene.system_type, "maximal");
    scene.steps = std::min(scene.steps, 50);  // a short run is enough here
    TempDir dir;
    const run::SceneRunSummary s = run::run_scene(scene, dir.path());
    EXPECT_TRUE(s.ok) << s.message;
    EXPECT_EQ(s.steps_done, scene.steps);
    EXPECT_GE(s.newton_min, 1);
    EXPECT_LT(s.constraint_violation_max, 1e-9);
    EXPECT_LT(s.energy_drift_relative, 1e-2);
    const std::string summary = read_file(dir / "summary.json");
    EXPECT_NE(summary.find("\"system\": \"maximal\""), std::string::npos);
    EXPECT_NE(summary.find("\"status\": \"ok\""), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(dir / "trajectory.npz"));
  }
}

TEST(MaximalScene, ChainColumnsAndInitialAngle) {
  TempDir dir;
  const Scene scene = load_scene(dir.write(
      "scene.json",
      chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                      "parameters": {"n": 2, "initial_angle": 0.3}})",
                  R"(, "output": {"every": 10})")));
  ASSERT_EQ(std::get<MaximalScene>(scene.system).model->num_bodies(), 2);
  EXPECT_EQ(scene.steps, 20);
  const run::SceneRunSummary s = run::run_scene(scene, dir / "out");
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.rows_written, 3u);  // t = 0, 0.1, 0.2
  const std::string csv = read_file(dir / "out" / "trajectory.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "t,link0_x,link0_y,link0_z,link0_qw,link0_qx,link0_qy,link0_qz,link1_x,link1_y,"
            "link1_z,link1_qw,link1_qx,link1_qy,link1_qz,energy,constraint_violation");
}

TEST(MaximalScene, UrdfInitialJointCoordinates) {
  Scene scene = load_scene(example("maximal_urdf_double_pendulum"));
  ASSERT_EQ(scene.source, "urdf");
  // The shoulder at 1 rad: the upper body's centre of mass 0.5 m from the axis at that angle.
  const Vec3 x = std::get<MaximalScene>(scene.system).state0[0].x;
  EXPECT_NEAR(std::atan2(x.y(), -x.z()), 1.0, 1e-12);
  EXPECT_NEAR(x.norm(), 0.5, 1e-12);
}

// A URDF <mimic> survives the scene's rebuilding of the model (gravity, springs, dampers):
// the follower starts where its leader puts it and stays coupled.
TEST(MaximalScene, UrdfMimicIsACouplingFromTheInitialState) {
  TempDir dir;
  const std::string inertial = R"(<inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.001"/></inertial>)";
  dir.write("mimic.urdf", R"(<robot name="m"><link name="a"/><link name="b">)" + inertial +
                              R"(</link><link name="c">)" + inertial + R"(</link>
      <joint name="j1" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/></joint>
      <joint name="j2" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0 0 -1"/>
        <axis xyz="1 0 0"/><mimic joint="j1" multiplier="-0.5" offset="0.1"/></joint></robot>)");
  const Scene scene = load_scene(dir.write("scene.json", chain_scene(
      R"({"type": "maximal", "urdf": "mimic.urdf", "dampers": [{"joint": "j1", "damping": 0.05}]})",
      R"(, "initial_state": {"q": {"j1": 0.4}})")));
  const auto& ms = std::get<MaximalScene>(scene.system);
  ASSERT_EQ(ms.model->couplings().size(), 1u);
  auto coordinates = [&](const std::vector<maximal::BodyState>& state) {
    return maximal::current_joint_coordinates(*ms.model, state);
  };
  EXPECT_NEAR(coordinates(ms.state0)[0][0], 0.4, 1e-12);
  EXPECT_NEAR(coordinates(ms.state0)[1][0], -0.5 * 0.4 + 0.1, 1e-12);
  maximal::Data data(*ms.model, ms.state0);
  maximal::StepOptions options;
  options.dt = 0.01;
  for (int k = 0; k < 100; ++k) ASSERT_TRUE(maximal::step(*ms.model, data, options).ok()) << k;
  const auto q = coordinates(data.state);
  EXPECT_GT(std::abs(q[0][0] - 0.4), 0.05);  // it swung
  EXPECT_NEAR(q[1][0], -0.5 * q[0][0] + 0.1, 1e-9);
}

// The dense solver's n^2 matrix is refused when the scene is read, naming the field (issue
// 23: a 3000-link chain with "solver": "dense" ended in std::bad_alloc).
TEST(MaximalScene, DenseSolverTooLargeForMemoryNamesTheField) {
  TempDir dir;
  expect_message(dir,
                 load_error(dir, chain_scene(
                     R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3000}})",
                     R"(, "integrator": {"solver": "dense"})")),
                 "integrator.solver", "GiB");
}

// A step that cannot converge ends the run: status "failed", the step, time and reason in
// summary.json, and the rows computed before it kept.
TEST(MaximalScene, FailedStepIsReported) {
  TempDir dir;
  const Scene scene = load_scene(dir.write(
      "scene.json",
      chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3}})",
                  R"(, "integrator": {"max_iterations": 1, "tolerance": 1e-14})")));
  const run::SceneRunSummary s = run::run_scene(scene, dir / "out");
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.failures, 1);
  EXPECT_NE(s.message.find("step " + std::to_string(s.steps_done)), std::string::npos) << s.message;
  EXPECT_EQ(s.rows_written, static_cast<std::size_t>(s.steps_done) + 1);
  const std::string summary = read_file(dir / "out" / "summary.json");
  EXPECT_NE(summary.find("\"status\": \"failed\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"failed_step\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"reason\": \"not_converged\""), std::string::npos) << summary;
}

// Two seconds of a 30-link hanging loop at dt = 10 ms, with the given integrator block.
std::string large_loop_scene(const std::string& integrator) {
  return R"({
  "system": {"type": "maximal", "mechanism": "closed_chain", "parameters": {"n": 30}},
  "dt": 0.01,
  "duration": 2.0,
  "integrator": )" + integrator + "\n}\n";
}

TEST(MaximalScene, SubdivisionRescuesALargeLoop) {
  TempDir dir;
  const Scene stop = load_scene(dir.write("stop.json", large_loop_scene("{}")));
  const run::SceneRunSummary failed = run::run_scene(stop, dir / "stop");
  ASSERT_FALSE(failed.ok) << "the loop no longer fails at dt = 10 ms: the test needs a harder case";
  EXPECT_EQ(failed.failures, 1);
  const Scene subdivide = load_scene(dir.write(
      "subdivide.json", large_loop_scene(R"({"on_failure": "subdivide", "max_subdivisions": 4})")));
  const run::SceneRunSummary s = run::run_scene(subdivide, dir / "subdivide");
  EXPECT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.steps_done, 200);
  EXPECT_FALSE(s.subdivisions.empty());
  EXPECT_GE(s.failures, static_cast<int>(s.subdivisions.size()));
  const std::string summary = read_file(dir / "subdivide" / "summary.json");
  EXPECT_NE(summary.find("\"on_failure\": \"subdivide\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"substeps\""), std::string::npos) << summary;
}

TEST(MaximalScene, BadScenesNameTheField) {
  TempDir dir;
  expect_message(dir, load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "rope"})")),
                 "system.mechanism", "pendulum_chain");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                 "parameters": {"n": 0}})")),
                 "system.parameters.n", "");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                 "parameters": {"n": 2, "link_mass": -1}})")),
                 "system.parameters.link_mass", "must be > 0");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "closed_chain",
                                                 "parameters": {"n": 2, "joint": "ball"}})")),
                 "system.parameters.joint", "revolute");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                 "parameters": {"n": 2}})",
                                             R"(, "integrator": {"solver": "qr"})")),
                 "integrator.solver", "sparse");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                 "parameters": {"n": 2}})",
                                             R"(, "integrator": {"tolerance": -1})")),
                 "integrator.tolerance", "must be > 0");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                 "parameters": {"n": 2, "joint": "spherical"}})",
                                             R"(, "initial_state": {"qd": {"joint1": [1, 2]}})")),
                 "initial_state.qd.joint1", "has 3 coordinates");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "four_bar_chain"})",
                                             R"(, "controls": [1])")),
                 "controls", "takes no joint inputs");
  // Neither or both of mechanism and urdf.
  expect_message(dir, load_error(dir, chain_scene(R"({"type": "maximal"})")), "system",
                 "exactly one of");

  // URDF systems: a missing file, a massless moving link, an unknown joint name.
  expect_message(dir, load_error(dir, chain_scene(R"({"type": "maximal", "urdf": "none.urdf"})")),
                 "system.urdf", "none.urdf");
  dir.write("ghost.urdf", R"(<robot name="g"><link name="base"/>
      <joint name="j" type="continuous"><parent link="base"/><child link="ghost"/>
        <axis xyz="0 1 0"/></joint><link name="ghost"/></robot>)");
  expect_message(dir, load_error(dir, chain_scene(R"({"type": "maximal", "urdf": "ghost.urdf"})")),
                 "system.urdf", "joint \"j\" moves no mass");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "urdf": "ghost.urdf",
                                                 "massless_joints": "glue"})")),
                 "system.massless_joints", "\"weld\"");
  // Degenerate bodies' dense storage counts against limits.memory_bytes.
  dir.write("virtual.urdf", R"(<robot name="v"><link name="base"/><link name="v"/>
      <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
        <inertia ixx="0.1" iyy="0.1" izz="0.01"/></inertial></link>
      <joint name="a" type="continuous"><parent link="base"/><child link="v"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="b" type="continuous"><parent link="v"/><child link="arm"/>
        <axis xyz="1 0 0"/></joint></robot>)");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "urdf": "virtual.urdf"})",
                                             R"(, "limits": {"memory_bytes": 100})")),
                 "system", "6 rows of bodies without mass");
  // With "weld", a joint that moves no mass is fixed and the rest runs.
  dir.write("hand.urdf", R"(<robot name="h"><link name="base"/>
      <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
        <inertia ixx="0.1" iyy="0.1" izz="0.01"/></inertial></link>
      <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/>
        <axis xyz="0 1 0"/></joint>
      <joint name="j" type="continuous"><parent link="arm"/><child link="ghost"/>
        <axis xyz="0 1 0"/></joint><link name="ghost"/></robot>)");
  for (const std::string type : {"maximal", "tree"}) {
    SCOPED_TRACE(type);
    const Scene welded = load_scene(dir.write(
        "welded.json", chain_scene(R"({"type": ")" + type +
                                   R"(", "urdf": "hand.urdf", "massless_joints": "weld"})")));
    TempDir out;
    const run::SceneRunSummary s = run::run_scene(welded, out.path());
    EXPECT_TRUE(s.ok) << s.message;
    EXPECT_EQ(s.steps_done, 20);
  }
  const std::string pendulum = "\"" + (std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" /
                                       "urdf" / "double_pendulum.urdf")
                                          .string() + "\"";
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "urdf": )" + pendulum + "}",
                                             R"(, "initial_state": {"q": {"wrist": 1}})")),
                 "initial_state.q.wrist", "no joint named 'wrist'");
}

// The link's angle about world y from its quaternion, unwrapped along the rows.
std::vector<double> hinge_angles(const sim::MemoryRecorder& rec) {
  const std::size_t cols = rec.layout.columns.size();
  std::vector<double> angle;
  for (std::size_t r = 0; r < rec.rows; ++r) {
    const double qw = rec.values[r * cols + 4], qy = rec.values[r * cols + 6];
    double a = 2.0 * std::atan2(qy, qw);
    if (!angle.empty()) a = angle.back() + std::remainder(a - angle.back(), 2.0 * M_PI);
    angle.push_back(a);
  }
  return angle;
}

sim::MemoryRecorder run_rows(const Scene& scene) {
  auto system = sim::make_maximal_system(std::get<MaximalScene>(scene.system));
  sim::RunOptions o;
  o.dt = scene.dt;
  o.steps = scene.steps;
  sim::MemoryRecorder rec;
  const sim::RunSummary s = sim::simulate(*system, o, rec);
  EXPECT_TRUE(s.ok) << s.message;
  return rec;
}

TEST(MaximalScene, JointTorqueAgainstADamperReachesTheTerminalRate) {
  // No gravity, one link on a hinge with damper c and constant torque tau: the rate tends
  // to tau / c (time constant I / c, about 0.34 s here).
  const Scene scene = parse_scene(R"({
    "system": {"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 1},
               "gravity": [0, 0, 0], "inputs": ["joint0"],
               "dampers": [{"joint": "joint0", "damping": 2.0}]},
    "controls": {"type": "constant", "value": [0.5]},
    "dt": 0.001, "duration": 5.0})", "torque");
  const sim::MemoryRecorder rec = run_rows(scene);
  const auto angle = hinge_angles(rec);
  const double rate = (angle.back() - angle[angle.size() - 101]) / 0.1;
  EXPECT_NEAR(std::abs(rate), 0.25, 0.25 * 1e-3);
  // The controls are recorded: column u0.
  EXPECT_EQ(rec.layout.columns.back(), "u0");
  EXPECT_EQ(rec.values.back(), 0.5);
}

TEST(MaximalScene, TheWorkOfAJointTorqueBecomesKineticEnergy) {
  // No gravity, no damper: E(T) = tau (theta(T) - theta(0)), to the integrator's O(dt).
  const Scene scene = parse_scene(R"({
    "system": {"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 1},
               "gravity": [0, 0, 0], "inputs": ["joint0"]},
    "controls": {"type": "constant", "value": [0.3]},
    "dt": 0.0005, "duration": 1.0})", "work");
  const sim::MemoryRecorder rec = run_rows(scene);
  const auto angle = hinge_angles(rec);
  const std::size_t cols = rec.layout.columns.size();
  const double energy = rec.values[(rec.rows - 1) * cols + 8];
  const double work = 0.3 * std::abs(angle.back() - angle.front());
  EXPECT_GT(work, 0.1);
  EXPECT_NEAR(energy, work, 2e-3 * work);
}

TEST(MaximalScene, BuiltInMechanismsTakeInitialJointRates) {
  // No gravity, one link on a hinge spinning at 2 rad/s from its initial_angle (0.5 rad, kept
  // when "q" does not name the joint): the rate stays 2 rad/s, the angle grows by 2 t.
  const Scene scene = parse_scene(R"({
    "system": {"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 1},
               "gravity": [0, 0, 0]},
    "initial_state": {"qd": {"joint0": 2.0}},
    "dt": 0.001, "duration": 1.0})", "spin");
  const auto angle = hinge_angles(run_rows(scene));
  EXPECT_NEAR(std::abs(angle.front()), 0.5, 1e-12);
  EXPECT_NEAR(std::abs(angle.back() - angle.front()), 2.0, 1e-9);
  // A closed loop: the rates are projected onto its velocity constraints, and the run keeps
  // them (constraint violation at round-off).
  const Scene loop = parse_scene(R"({
    "system": {"type": "maximal", "mechanism": "closed_chain", "parameters": {"n": 4}},
    "initial_state": {"qd": {"joint0": 1.0}},
    "dt": 0.001, "duration": 0.2})", "loop");
  const sim::MemoryRecorder rec = run_rows(loop);
  const std::size_t cols = rec.layout.columns.size();
  double worst = 0.0;
  for (std::size_t r = 0; r < rec.rows; ++r)
    worst = std::max(worst, rec.values[r * cols + cols - 1]);
  EXPECT_LT(worst, 1e-9);
  // The loop moves: the first link's orientation changes.
  EXPECT_GT(std::abs(rec.values[(rec.rows - 1) * cols + 4] - rec.values[4]), 1e-3);
}

TEST(MaximalScene, AJointSpringOscillatesWithItsPeriod) {
  // No gravity, spring k about the rest angle 0, started at 0.5 rad (the initial_angle):
  // the period is 2 pi sqrt(I / k), I the link's inertia about the hinge.
  const Scene scene = parse_scene(R"({
    "system": {"type": "maximal", "mechanism": "pendulum_chain",
               "parameters": {"n": 1, "link_radius": 0.01}, "gravity": [0, 0, 0],
               "springs": [{"joint": "joint0", "stiffness": 3.0}]},
    "dt": 0.0005, "duration": 5.0})", "spring");
  const sim::MemoryRecorder rec = run_rows(scene);
  const auto angle = hinge_angles(rec);
  // Upward zero crossings, linearly interpolated.
  std::vector<double> crossings;
  for (std::size_t r = 1; r < angle.size(); ++r)
    if (angle[r - 1] < 0.0 && angle[r] >= 0.0)
      crossings.push_back((r - 1 + angle[r - 1] / (angle[r - 1] - angle[r])) * 0.0005);
  ASSERT_GE(crossings.size(), 2u);
  const double I = 1.0 / 3.0 + 0.25 * 0.01 * 0.01;  // rod about its end, plus its radius
  EXPECT_NEAR(crossings[1] - crossings[0], 2.0 * M_PI * std::sqrt(I / 3.0), 2e-3);
}

TEST(MaximalScene, InputsAndJointElementsAreValidated) {
  TempDir dir;
  auto scene = [](const std::string& system_extra, const std::string& extra) {
    return R"({"system": {"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 2})" +
           system_extra + R"(}, "dt": 0.01, "duration": 0.1)" + extra + "}";
  };
  expect_message(dir, load_error(dir, scene(R"(, "inputs": ["elbow"])", "")), "system.inputs[0]",
                 "no joint named 'elbow'");
  expect_message(dir, load_error(dir, scene(R"(, "inputs": ["joint0"])",
                                  R"(, "controls": {"type": "constant", "value": [1, 2]})")),
                 "controls.value", "expected 1");
  expect_message(dir, load_error(dir, scene("", R"(, "controls": {"type": "constant", "value": [1]})")),
                 "controls", "remove this field");
  expect_message(dir, load_error(dir, scene(R"(, "dampers": [{"joint": "joint1", "damping": -1}])", "")),
                 "system.dampers[0].damping", "must be >= 0");
}

// The dense solver's budget is "limits.memory_bytes" too: raised, the 3000-link chain
// loads (it is not run); lowered, a 3-link chain is refused with its estimate.
TEST(MaximalScene, DenseSolverLimitIsTheScenesToSet) {
  TempDir dir;
  EXPECT_NO_THROW(load_scene(dir.write("raised.json", chain_scene(
      R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3000}})",
      R"(, "integrator": {"solver": "dense"}, "limits": {"memory_bytes": 1e12})"))));
  const std::string msg =
      load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3}})",
                                  R"(, "integrator": {"solver": "dense"}, "limits": {"memory_bytes": 100})"));
  expect_message(dir, msg, "integrator.solver", "over limits.memory_bytes = 100 bytes");
  EXPECT_NE(msg.find("the dense solver needs about"), std::string::npos) << msg;
}

// The box toss of examples/scenes/box_toss.json (hard contact, docs/contact.md): the run
// writes the contact columns, and the box comes to rest on a face, its centre half its edge
// above the ground, carried by its weight.
TEST(MaximalScene, BoxTossComesToRestOnAFace) {
  Scene scene = load_scene(example("box_toss"));
  TempDir dir;
  const run::SceneRunSummary s = run::run_scene(scene, dir.path());
  ASSERT_TRUE(s.ok) << s.message;
  const std::string csv = read_file(dir / "trajectory.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find("contact_force,penetration,active_contacts,complementarity,"
                        "contact_iterations"),
            std::string::npos)
      << header;
  // The last row: t, box x y z qw qx qy qz, energy, violation, then the contact columns.
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
  std::vector<double> row;
  std::stringstream in(last);
  for (std::string cell; std::getline(in, cell, ',');) row.push_back(std::stod(cell));
  ASSERT_EQ(row.size(), 15u);
  EXPECT_NEAR(row[3], 0.25, 1e-3);
  EXPECT_NEAR(row[10], 9.81, 1e-6);  // the ground carries the weight of the 1 kg box
  const std::string summary = read_file(dir / "summary.json");
  EXPECT_NE(summary.find("\"candidates\": 8"), std::string::npos) << summary;
}

TEST(MaximalScene, ContactFieldsAreValidated) {
  TempDir dir;
  const std::string chain = R"({"type": "maximal", "mechanism": "pendulum_chain",
                                "parameters": {"n": 2}, "contact": )";
  expect_message(dir, load_error(dir, chain_scene(chain + R"({"surfaces": []}})")),
                 "system.contact.surfaces", "at least one surface");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{"normal": [0, 0, 0]}]}})")),
                 "system.contact.surfaces[0].normal", "non-zero");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}], "shapes": [
                   {"body": "nobody", "type": "sphere", "radius": 0.1}]}})")),
                 "system.contact.shapes[0].body", "no body named");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}], "shapes": [
                   {"body": "link0", "type": "cylinder", "radius": 0.1}]}})")),
                 "system.contact.shapes[0].type", "sphere");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}], "shapes": [
                   {"body": "link0", "type": "box", "half_extents": [0.1, 0, 0.1]}]}})")),
                 "system.contact.shapes[0]", "half_extents");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{"friction": -1}]}})")),
                 "system.contact.surfaces[0].friction", "");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{"restitution": 1.5}]}})")),
                 "system.contact.surfaces[0].restitution", "in [0, 1]");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}], "shapes": [
                   {"body": "link1", "type": "sphere", "radius": 0.1, "restitution": 0.5}]}})")),
                 "system", "needs a body without joints");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}], "urdf_collisions": {}}})")),
                 "system.contact.urdf_collisions", "URDF");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                 "parameters": {"n": 2}})",
                                             R"(, "initial_state": {"clearance": 0.01})")),
                 "initial_state.clearance", "no contact points");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}]}})",
                                             R"(, "integrator": {"contact_compliance": -1})")),
                 "integrator.contact_compliance", "");
  expect_message(dir,
                 load_error(dir, chain_scene(chain + R"({"surfaces": [{}], "shapes": [
                   {"body": "link1", "type": "sphere", "radius": 0.1}]}})",
                                             R"(, "initial_state": {"clearance": 0.01})")),
                 "initial_state.clearance", "held by joint 'joint0' to the world");
}

// A scene's velocity constraints join the mechanism's: a second skate behind the sleigh's
// centre, parallel to the first, leaves it only sliding along its axis. From a spinning
// start the first step removes the turn and the sideways slide (the impulse of the
// constraints), and then it coasts straight at constant speed.
TEST(MaximalScene, VelocityConstraintsJoinTheMechanismsOwn) {
  TempDir dir;
  const Scene scene = load_scene(dir.write("scene.json", chain_scene(
      R"({"type": "maximal", "mechanism": "chaplygin_sleigh",
          "velocity_constraints": [{"name": "rear", "type": "skate", "body": "sleigh",
                                    "point": [-0.5, 0, 0], "axis": [0, 1, 0]}]})",
      R"(, "initial_state": {"qd": {"plane": [0.5, -1.0, 2.0]}})")));
  const auto& ms = std::get<MaximalScene>(scene.system);
  ASSERT_EQ(ms.model->velocity_constraints().size(), 2u);
  EXPECT_EQ(ms.model->velocity_constraints()[1].name, "rear");
  const sim::MemoryRecorder rec = run_rows(scene);
  const auto& names = rec.layout.columns;
  const std::size_t n = names.size();
  ASSERT_GE(rec.rows, 3u);
  const auto at = [&](std::size_t row, const std::string& name) {
    const auto c = std::size_t(std::find(names.begin(), names.end(), name) - names.begin());
    EXPECT_LT(c, n) << name;
    return rec.values[row * n + c];
  };
  const std::size_t last = rec.rows - 1;
  EXPECT_NEAR(at(last, "sleigh_y"), at(1, "sleigh_y"), 1e-12);
  EXPECT_NEAR(at(last, "sleigh_qz"), at(1, "sleigh_qz"), 1e-12);
  const double v1 = (at(2, "sleigh_x") - at(1, "sleigh_x")) / (at(2, "t") - at(1, "t"));
  const double v = (at(last, "sleigh_x") - at(1, "sleigh_x")) / (at(last, "t") - at(1, "t"));
  EXPECT_GT(v1, 0.1);
  EXPECT_NEAR(v, v1, 1e-12);

  const std::string sleigh = R"({"type": "maximal", "mechanism": "chaplygin_sleigh",
                                 "velocity_constraints": [)";
  expect_message(dir, load_error(dir, chain_scene(sleigh + R"({"type": "skate", "body": "cart"}]})")),
                 "system.velocity_constraints[0].body", "no body named 'cart'");
  expect_message(dir,
                 load_error(dir, chain_scene(sleigh + R"({"type": "skate", "body": "sleigh", "radius": 1}]})")),
                 "system.velocity_constraints[0].radius", "a skate has no radius");
  expect_message(dir,
                 load_error(dir, chain_scene(sleigh + R"({"type": "rolling_wheel", "body": "sleigh"}]})")),
                 "system.velocity_constraints[0].radius", "missing");
  expect_message(dir, load_error(dir, chain_scene(sleigh + R"({"type": "wheel", "body": "sleigh"}]})")),
                 "system.velocity_constraints[0].type", "skate");
  expect_message(dir,
                 load_error(dir, chain_scene(sleigh + R"({"type": "skate", "body": "sleigh", "axis": [0, 0, 0]}]})")),
                 "system", "axis must be a non-zero vector");
}

// "kinematic" prescribes a joint's coordinate: the rod's hinge angle, read back from its
// centre of mass (0.5 m below the pivot at angle 0, turned about +y), follows its initial
// 0.5 rad plus the signal at every row, and the drive's torque is written.
TEST(MaximalScene, KinematicJointsFollowTheirSignal) {
  TempDir dir;
  const Scene scene = load_scene(dir.write("scene.json", chain_scene(
      R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 1}})",
      R"(, "kinematic": {"joint0": {"type": "sinusoid", "offset": [0], "amplitude": [0.2],
                                    "frequency_hz": [2]}})")));
  const sim::MemoryRecorder rec = run_rows(scene);
  const auto& names = rec.layout.columns;
  const std::size_t n = names.size();
  const auto column = [&](const std::string& name) {
    const auto c = std::size_t(std::find(names.begin(), names.end(), name) - names.begin());
    EXPECT_LT(c, n) << name;
    return c;
  };
  const std::size_t t = column("t"), x = column("link0_x"), z = column("link0_z"),
                    drive = column("joint0_drive");
  ASSERT_GE(rec.rows, 20u);
  double largest_drive = 0.0;
  for (std::size_t row = 0; row < rec.rows; ++row) {
    const double* v = &rec.values[row * n];
    const double angle = std::atan2(-v[x], -v[z]);
    EXPECT_NEAR(angle, 0.5 + 0.2 * std::sin(4.0 * M_PI * v[t]), 1e-9) << "row " << row;
    largest_drive = std::max(largest_drive, std::abs(v[drive]));
  }
  EXPECT_GT(largest_drive, 1.0);  // at least the weight's torque, m g (L / 2) sin 0.5 = 2.35

  auto scene_with = [](const std::string& system, const std::string& extra) {
    return chain_scene(system, R"(, "kinematic": )" + extra);
  };
  const std::string rod = R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 1})";
  const std::string sine = R"({"type": "sinusoid", "offset": [0], "amplitude": [0.2], "frequency_hz": [2]})";
  expect_message(dir, load_error(dir, scene_with(rod + "}", R"({"elbow": )" + sine + "}")),
                 "kinematic.elbow", "no joint named 'elbow'");
  expect_message(dir, load_error(dir, scene_with(rod + R"(, "dampers": [{"joint": "joint0", "damping": 1}]})",
                                                 R"({"joint0": )" + sine + "}")),
                 "kinematic.joint0", "a prescribed joint takes neither");
  expect_message(dir, load_error(dir, scene_with(rod + R"(, "inputs": ["joint0"]})",
                                                 R"({"joint0": )" + sine + "}")),
                 "system.inputs[0]", "is prescribed");
  expect_message(dir,
                 load_error(dir, scene_with(R"({"type": "maximal", "mechanism": "pendulum_chain",
                                                "parameters": {"n": 1, "joint": "spherical"}})",
                                            R"({"joint0": )" + sine + "}")),
                 "kinematic.joint0", "not a revolute or prismatic joint");
  expect_message(dir, load_error(dir, scene_with(rod + "}", R"({"joint0": {"type": "constant", "value": [1, 2]}})")),
                 "kinematic.joint0.value", "expected 1");
}

// "clearance" puts the lowest contact point that far above its surface, and "base" moves
// the whole mechanism rigidly with its velocity.
TEST(MaximalScene, ClearanceAndBasePlaceTheMechanism) {
  TempDir dir;
  const std::filesystem::path urdf = std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "urdf" / "box.urdf";
  const std::string text = R"({
  "system": {"type": "maximal", "urdf": ")" + urdf.string() + R"(", "base": "floating",
             "contact": {"surfaces": [{"point": [0, 0, -1]}], "urdf_collisions": {}}},
  "initial_state": {"base": {"position": [2, 0, 5], "orientation": {"rpy": [0.3, 0, 0]},
                             "linear_velocity": [1, 0, 0]},
                    "clearance": 0.125},
  "dt": 0.01, "duration": 0.01
})";
  const std::filesystem::path file = dir / "scene.json";
  std::ofstream(file) << text;
  const Scene scene = load_scene(file);
  const auto& ms = std::get<MaximalScene>(scene.system);
  const maximal::Data data(*ms.model, ms.state0);
  double lowest = 1e9;
  for (const maximal::ContactState& c : data.contact) lowest = std::min(lowest, c.phi);
  EXPECT_NEAR(lowest, 0.125, 1e-12);
  EXPECT_NEAR(ms.state0[0].x.x(), 2.0, 1e-12);
  EXPECT_NEAR(ms.state0[0].v.x(), 1.0, 1e-12);
  // The lowest vertex of a box rolled 0.3 rad about x: its centre sits half the box's
  // extent along z, 0.25 (cos 0.3 + sin 0.3), above it.
  EXPECT_NEAR(ms.state0[0].x.z(), -1.0 + 0.125 + 0.25 * (std::cos(0.3) + std::sin(0.3)), 1e-12);
}

// "limits" bound a joint's coordinate ("urdf_limits" takes the file's <limit>s): the URDF
// double pendulum released with its shoulder at 1 rad folds its elbow against the stops.
TEST(MaximalScene, JointLimitsHoldTheCoordinates) {
  TempDir dir;
  const std::filesystem::path urdf =
      std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "urdf" / "double_pendulum.urdf";
  const std::filesystem::path file = dir / "scene.json";
  std::ofstream(file) << R"({
  "system": {"type": "maximal", "urdf": ")" + urdf.string() + R"(",
             "limits": [{"joint": "elbow", "lower": -0.2, "upper": 0.25}]},
  "initial_state": {"q": {"shoulder": 1.0}},
  "dt": 0.005, "duration": 2.0
})";
  const Scene scene = load_scene(file);
  const auto& ms = std::get<MaximalScene>(scene.system);
  const maximal::Model& model = *ms.model;
  ASSERT_EQ(model.topology().limit_joint.size(), 2u);
  maximal::Data data(model, ms.state0);
  maximal::StepOptions options = ms.step;
  options.dt = scene.dt;
  const maximal::Joint& elbow = model.joints()[1];
  double low = 1.0, high = -1.0;
  for (int k = 0; k < scene.steps; ++k) {
    ASSERT_TRUE(maximal::step(model, data, options).ok()) << k;
    const double s = maximal::joint_coordinate(elbow, data.state[0], data.state[1], nullptr, nullptr);
    low = std::min(low, s);
    high = std::max(high, s);
  }
  EXPECT_GE(low, -0.2 - 1e-9);
  EXPECT_LE(high, 0.25 + 1e-9);
  EXPECT_LT(low, -0.19);  // it reached both stops
  EXPECT_GT(high, 0.24);
  // The file's <limit>s of the arm.
  const std::filesystem::path arm =
      std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "urdf" / "arm.urdf";
  std::ofstream(dir / "arm.json") << R"({"system": {"type": "maximal", "urdf": ")" + arm.string() +
                                         R"(", "urdf_limits": true}, "dt": 0.01, "duration": 0.1})";
  const Scene arm_scene = load_scene(dir / "arm.json");
  const maximal::Model& arm_model = *std::get<MaximalScene>(arm_scene.system).model;
  EXPECT_FALSE(arm_model.topology().limit_joint.empty());
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                   "parameters": {"n": 2}, "limits": [{"joint": "joint1", "lower": 1, "upper": 0}]})")),
                 "system", "lower <= upper");
  expect_message(dir,
                 load_error(dir, chain_scene(R"({"type": "maximal", "mechanism": "pendulum_chain",
                   "parameters": {"n": 2}, "limits": [{"joint": "joint1"}]})")),
                 "system.limits[0]", "lower");
}

}  // namespace
}  // namespace marsden::io
