// Problem files: the example problems (helicopter, car, tree systems) load, solve and
// re-simulate; an infeasible problem is reported as such with every output written;
// malformed files name the file and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/control/tree_ocp.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::test {
namespace {

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "problems" / (name + ".json");
}

nlohmann::json read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// A solved problem: constraints met, the optimum reproduced by re-simulation, obstacles
// cleared.
void expect_feasible_and_reproduced(const run::OptimizeSummary& sum) {
  EXPECT_LT(sum.solution.constraint_violation, 1e-9);
  EXPECT_LT(sum.resimulation_error, 1e-6);
  EXPECT_GE(sum.min_clearance, -1e-8);
}

// The scene run::run_problem writes (resimulate.json: the problem's system, its controls
// held over each step) run by the scene driver gives the optimal trajectory: every state
// column the scene and the problem's table share (the tree's q_NAME is the scene's NAME),
// at every knot, within the re-simulation tolerance. Not the SE(3) body velocities: the
// table gives the discrete xi_k-1 of the step ending at the knot, the scene the continuous
// I^-1 p_k^+ of the Legendre transform (they differ by O(dt)).
void expect_scene_reproduces(const io::Problem& problem, const run::OptimizeSummary& sum,
                             const std::filesystem::path& out) {
  ASSERT_TRUE(std::filesystem::exists(out / "resimulate.json"));
  EXPECT_EQ(read(out / "summary.json")["resimulation_scene"], "resimulate.json");
  const io::Scene scene = io::load_scene(out / "resimulate.json");
  const auto system = run::make_system(scene);
  sim::RunOptions run;
  run.dt = scene.dt;
  run.steps = scene.steps;
  sim::MemoryRecorder rec;
  ASSERT_TRUE(sim::simulate(*system, run, rec).ok);
  control::Table states, controls;
  problem.ocp->tables(sum.solution.x, states, controls);
  ASSERT_EQ(rec.rows, static_cast<std::size_t>(states.rows.rows()));
  const auto& columns = rec.layout.columns;
  int compared = 0;
  for (std::size_t c = 1; c < states.columns.size(); ++c) {
    std::string name = states.columns[c];
    if (name == "energy" || (name.size() == 2 && (name[0] == 'w' || name[0] == 'v'))) continue;
    if (name.starts_with("q_")) name = name.substr(2);
    const auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end()) continue;
    const std::size_t sc = static_cast<std::size_t>(it - columns.begin());
    for (std::size_t k = 0; k < rec.rows; ++k) {
      EXPECT_NEAR(rec.values[k * columns.size() + sc], states.rows(Eigen::Index(k), Eigen::Index(c)),
                  1e-6)
          << name << " at knot " << k;
    }
    ++compared;
  }
  EXPECT_GE(compared, 2);
}

TEST(ProblemFiles, HelicopterCanyonSolvesAndIsReproducedBySimulation) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("helicopter_canyon"));
  const auto sum = run::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  expect_feasible_and_reproduced(sum);
  for (const char* f : {"trajectory.csv", "controls.csv", "trajectory.npz", "summary.json",
                        "decision_vector.txt", "ipopt.log"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  expect_scene_reproduces(problem, sum, dir.path());
  // A warm start from the solution returns to the same point in fewer iterations (Ipopt
  // pushes the start off the active bounds, so not in zero).
  problem.warm_start = io::read_decision_vector(dir / "decision_vector.txt");
  TempDir again;
  const auto warm = run::run_problem(problem, again.path());
  ASSERT_TRUE(warm.ok) << warm.message;
  EXPECT_LT(warm.solution.iterations, sum.solution.iterations);
  EXPECT_NEAR(warm.solution.cost, sum.solution.cost, 1e-6 * (1.0 + sum.solution.cost));
}

// The canyon against the clock: the final time is a decision variable.
TEST(ProblemFiles, FreeFinalTimeCanyonSolvesWithinItsTimeBounds) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("helicopter_canyon_dash"));
  const auto sum = run::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  EXPECT_LT(sum.resimulation_error, 1e-6);
  EXPECT_GE(sum.min_clearance, -1e-8);
  const auto summary = read(dir / "summary.json");
  const double T = summary["final_time"].get<double>();
  EXPECT_GE(T, 6.0 - 1e-9);
  EXPECT_LE(T, 20.0 + 1e-9);
  // Not the guess (12 s): the time was optimised.
  EXPECT_GT(std::abs(T - 12.0), 0.1);
  control::Table states, controls;
  problem.ocp->tables(sum.solution.x, states, controls);
  EXPECT_NEAR(states.rows(states.rows.rows() - 1, 0), T, 1e-12);
}

// A wall across the canyon, before the goal: no trajectory exists.
TEST(ProblemFiles, WallAcrossTheCanyonIsReportedInfeasible) {
  TempDir dir;
  auto j = read(example("helicopter_canyon"));
  j["steps"] = 30;
  j["dt"] = 0.4;
  j["obstacles"].push_back({{"type", "half_space"}, {"name", "wall"}, {"point", {20, 0, 0}},
                            {"normal", {-1, 0, 0}}});
  const auto path = dir.write("wall.json", j.dump());
  io::Problem problem = io::load_problem(path);
  const auto sum = run::run_problem(problem, dir / "out");
  EXPECT_FALSE(sum.ok);
  EXPECT_FALSE(sum.solution.ok()) << sum.message;
  EXPECT_GT(sum.solution.constraint_violation, 1.0);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "summary.json"));
}

TEST(ProblemFiles, CarTunnelSolvesClearsThePillarsAndIsReproducedBySimulation) {
  TempDir dir;
  auto j = read(example("car_tunnel"));
  j["steps"] = 50;
  j["dt"] = 0.2;
  const auto path = dir.write("car.json", j.dump());
  io::Problem problem = io::load_problem(path);
  EXPECT_EQ(problem.system_type, "car");
  const auto sum = run::run_problem(problem, dir / "out");
  ASSERT_TRUE(sum.ok) << sum.message;
  expect_feasible_and_reproduced(sum);
  expect_scene_reproduces(problem, sum, dir / "out");
}

// The tunnel against the clock: the step of the RDP transcription is a decision variable.
TEST(ProblemFiles, FreeFinalTimeCarTunnelSolvesWithinItsTimeBounds) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("car_tunnel_dash"));
  const auto sum = run::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  expect_feasible_and_reproduced(sum);
  const double T = read(dir / "summary.json")["final_time"].get<double>();
  EXPECT_GT(T, 5.0 + 1e-3);  // interior: the time cost and the torque limit balance
  EXPECT_LT(T, 20.0 - 1e-3);
  EXPECT_GT(std::abs(T - 10.0), 0.1);  // not the guess
}

// The boat's hydrodynamic forces are smoothed over the waterline (system.wet_smoothing);
// with them the docking converges and is reproduced by simulation, its scene too.
TEST(ProblemFiles, BoatDockingSolvesAndIsReproducedBySimulation) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("boat_docking"));
  const auto sum = run::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  expect_feasible_and_reproduced(sum);
  expect_scene_reproduces(problem, sum, dir.path());
}

// The acrobot written as frames in a problem file and the library's acrobot() are two
// descriptions of one system: the same swing-up has the same optimal cost.
TEST(ProblemFiles, AcrobotFileAgreesWithTheBuiltInAcrobot) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("acrobot_swing_up"));
  EXPECT_EQ(problem.system_type, "tree");
  const auto sum = run::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  EXPECT_LT(sum.resimulation_error, 1e-6);

  control::TreeOcp builtin(control::acrobot_swing_up({}, 0.05, 60, 20.0));
  control::IpoptOptions opt = problem.solver;
  const control::NlpSolution ref = control::solve_with_ipopt(builtin, opt);
  ASSERT_TRUE(ref.ok()) << ref.message;
  EXPECT_NEAR(sum.solution.cost, ref.cost, 1e-6 * ref.cost);
}

// The same with the final time free: the file's "final_time" reaches the midpoint
// transcription's step variables as the spec's fields do.
TEST(ProblemFiles, FreeFinalTimeAcrobotFileAgreesWithTheBuiltInAcrobot) {
  TempDir dir;
  auto j = read(example("acrobot_swing_up"));
  j["steps"] = 80;
  j["final_time"] = {{"free", true}, {"lower", 1.6}, {"upper", 8}, {"weight", 20}};
  io::Problem problem = io::load_problem(dir.write("acrobot.json", j.dump()));
  const auto sum = run::run_problem(problem, dir / "out");
  ASSERT_TRUE(sum.ok) << sum.message;
  EXPECT_LT(sum.resimulation_error, 1e-6);

  control::TreeOcpSpec spec = control::acrobot_swing_up({}, 0.05, 80, 20.0);
  spec.free_final_time = true;
  spec.dt_min = 0.02;
  spec.dt_max = 0.1;
  spec.time_weight = 20.0;
  control::TreeOcp builtin(spec);
  const control::NlpSolution ref = control::solve_with_ipopt(builtin, problem.solver);
  ASSERT_TRUE(ref.ok()) << ref.message;
  EXPECT_NEAR(sum.solution.cost, ref.cost, 1e-6 * ref.cost);
  EXPECT_NEAR(read(dir / "out" / "summary.json")["final_time"].get<double>(),
              80 * ref.x[builtin.dt_offset(0)], 1e-6);
}

TEST(ProblemFiles, CartPoleSwingsUpWithinItsTrack) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("cart_pole_swing_up"));
  const auto sum = run::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  EXPECT_LT(sum.resimulation_error, 1e-6);
  expect_scene_reproduces(problem, sum, dir.path());
  control::Table states, controls;
  problem.ocp->tables(sum.solution.x, states, controls);
  ASSERT_EQ(states.columns[1], "q_cart");
  ASSERT_EQ(controls.columns[1], "u_0");
  EXPECT_LE(states.rows.col(1).cwiseAbs().maxCoeff(), 1.5 + 1e-8);
  EXPECT_LE(controls.rows.col(1).cwiseAbs().maxCoeff(), 15.0 + 1e-8);
  EXPECT_NEAR(states.rows(states.rows.rows() - 1, 2), std::numbers::pi, 1e-9);
}

std::string error_of(const TempDir& dir, const nlohmann::json& j) {
  const auto path = dir.write("bad.json", j.dump());
  try {
    io::load_problem(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct BadCase {
  std::function<void(nlohmann::json&)> edit;
  std::string expected;
};

void expect_errors_named(const std::string& example_name, const std::vector<BadCase>& cases) {
  TempDir dir;
  const auto base = read(example(example_name));
  for (const auto& c : cases) {
    auto j = base;
    c.edit(j);
    const std::string msg = error_of(dir, j);
    EXPECT_NE(msg.find((dir / "bad.json").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in: " << msg;
    EXPECT_EQ(msg.find("Spec."), std::string::npos) << "a C++ name in: " << msg;
  }
}

// The player's goal (resimulate.json's "view"): the landing's pad at its final pose, whose
// height is the bound's; the canyon flights end hovering, with no pad; the dock at the
// water's height where the boat's final height is free.
TEST(ProblemFiles, ViewGoalIsTheLandingPadOrTheDock) {
  const auto goal = [](const std::string& name) {
    const std::string view = io::load_problem(example(name)).view_fields;
    const nlohmann::json j = view.empty() ? nlohmann::json::object() : nlohmann::json::parse(view);
    return j.contains("goal") ? j["goal"] : nlohmann::json();
  };
  const nlohmann::json pad = goal("helicopter_landing");
  EXPECT_EQ(pad["kind"], "landing_pad");
  EXPECT_EQ(pad["position"], nlohmann::json({20, 5, 0.5}));
  EXPECT_EQ(pad["orientation"]["rpy"][2], std::numbers::pi / 2);
  EXPECT_TRUE(goal("helicopter_canyon").is_null());
  EXPECT_TRUE(goal("helicopter_canyon_dash").is_null());
  const nlohmann::json dock = goal("boat_docking");
  EXPECT_EQ(dock["kind"], "dock");
  EXPECT_EQ(dock["position"], nlohmann::json({25, 10, 0.0}));
  EXPECT_EQ(dock["orientation"]["rpy"][2], std::numbers::pi / 2);
  EXPECT_TRUE(goal("car_tunnel").is_null());
}

TEST(ProblemFiles, BadFieldsAreNamed) {
  expect_errors_named("helicopter_canyon", {
      {[](auto& j) { j.erase("dt"); }, "field 'dt'"},
      {[](auto& j) { j["dt"] = -0.1; }, "field 'dt'"},
      {[](auto& j) { j["steps"] = 0; }, "field 'steps'"},
      {[](auto& j) { j["system"]["type"] = "submarine"; }, "field 'system.type'"},
      {[](auto& j) { j["system"]["mass"] = -5; }, "field 'system.mass'"},
      {[](auto& j) { j["bounds"]["controls"]["lower"] = {0}; }, "field 'bounds.controls.lower'"},
      {[](auto& j) { j["bounds"]["controls"]["lower"] = {200, 0}; }, "field 'bounds.controls'"},
      {[](auto& j) { j["obstacles"][0]["type"] = "pyramid"; }, "field 'obstacles[0].type'"},
      {[](auto& j) { j["obstacles"][1]["half_size"] = {1, 0, 1}; }, "field 'obstacles[1].half_size[1]'"},
      {[](auto& j) { j["obstacles"][2]["radius"] = nullptr; }, "field 'obstacles[2].radius'"},
      {[](auto& j) { j["cost"]["control_weights"] = {1, 1, 1}; }, "field 'cost.control_weights'"},
      {[](auto& j) { j["final_state"]["position"] = {40, 0}; }, "field 'final_state.position'"},
      {[](auto& j) { j["final_state"]["position"] = {40, 0, 20}; }, "final position"},
      {[](auto& j) { j["unknown"] = 1; }, "unknown"},
      // A finite extreme guess once became NaN in the solver and the run wrote no summary.
      {[](auto& j) { j["initial_guess"]["waypoints"][0][0] = 1e308; },
       "field 'initial_guess.waypoints[0][0]': an initial guess must be at most 1e+09 in magnitude (got 1e+308)"},
      {[](auto& j) { j["initial_guess"]["controls"][0] = -1e10; },
       "field 'initial_guess.controls[0]': an initial guess must be at most"},
      {[](auto& j) { j["final_time"] = {{"free", true}, {"lower", 13}}; }, "field 'final_time'"},
      {[](auto& j) { j["final_time"] = {{"free", true}}; }, "field 'final_time.lower'"},
      {[](auto& j) { j["final_time"] = {{"free", true}, {"lower", 6}}; }, "hazard"},
  });
  TempDir dir;
  EXPECT_THROW(io::load_problem(dir / "missing.json"), InputError);
}

TEST(ProblemFiles, BadCarFieldsAreNamed) {
  expect_errors_named("car_tunnel", {
      {[](auto& j) { j["system"]["axle_distance"] = 0; }, "field 'system.axle_distance'"},
      {[](auto& j) { j["integrator"]["alpha"] = 1.5; }, "field 'integrator.alpha'"},
      {[](auto& j) { j["initial_state"]["v"] = 1; }, "field 'initial_state.v'"},
      {[](auto& j) { j["final_state"]["x"] = "far"; }, "field 'final_state.x'"},
      {[](auto& j) { j["bounds"]["shape"]["lower"] = {0, 0, 0}; }, "field 'bounds.shape.lower'"},
      {[](auto& j) { j["bounds"]["position"]["upper"] = {-2, 2}; }, "field 'bounds.position'"},
      {[](auto& j) { j["obstacles"][0]["center"] = {4, 0.3, 0}; }, "field 'obstacles[0].center'"},
      {[](auto& j) { j["initial_guess"]["waypoints"] = {{4}}; }, "field 'initial_guess.waypoints[0]'"},
      {[](auto& j) { j["initial_guess"]["waypoints"] = {{4, 1e308}}; },
       "field 'initial_guess.waypoints[0][1]': an initial guess must be at most"},
      {[](auto& j) { j["initial_guess"]["speed"] = 1e308; },
       "field 'initial_guess.speed': an initial guess must be at most"},
      // Bounds name the problem's fields (they once read "RdpOcpSpec.final_coords").
      {[](auto& j) { j["initial_state"]["y"] = 5; },
       "field 'initial_state.y': lies outside bounds.position (y) (5 not in"},
      {[](auto& j) { j["final_state"]["x"] = 20; },
       "field 'final_state.x': lies outside bounds.position (x) (20 not in"},
      {[](auto& j) { j["final_state"]["sigma"] = 1; },
       "field 'final_state.sigma': lies outside bounds.shape (sigma)"},
      {[](auto& j) { j["final_time"] = {{"free", true}, {"lower", 13}}; }, "field 'final_time'"},
      {[](auto& j) { j["final_time"] = {{"free", "yes"}}; }, "field 'final_time.free'"},
      {[](auto& j) {
         j["final_time"] = {{"free", true}, {"lower", 5}};
         j["cost"]["hazard"] = {{"weight", 1}};
       },
       "hazard"},
  });
}

TEST(ProblemFiles, BadTreeFieldsAreNamed) {
  expect_errors_named("cart_pole_swing_up", {
      {[](auto& j) { j["integrator"] = {{"method", "rk4"}}; }, "field 'integrator.method'"},
      // The Galerkin VI has no step derivatives for DMOC.
      {[](auto& j) { j["integrator"] = {{"method", "galerkin"}}; },
       "field 'integrator.method': optimal control uses the midpoint variational integrator only"},
      {[](auto& j) { j["system"]["inputs"] = nlohmann::json::array(); }, "no inputs"},
      {[](auto& j) { j["system"]["frames"][1]["kinematic"] = true; }, "kinematic"},
      {[](auto& j) { j["final_state"]["q"] = {{"slider", 1.0}}; }, "field 'final_state.q.slider'"},
      {[](auto& j) { j["bounds"]["q"]["lower"] = {{"cart", "left"}}; }, "field 'bounds.q.lower.cart'"},
      {[](auto& j) { j["bounds"]["controls"]["upper"] = {15, 15}; }, "field 'bounds.controls.upper'"},
      {[](auto& j) { j["cost"]["control_weights"] = {-1}; }, "effort_weights"},
      {[](auto& j) { j["obstacles"] = nlohmann::json::array(); }, "unknown"},
      {[](auto& j) { j["initial_guess"] = {{"controls", {1e308}}}; },
       "field 'initial_guess.controls[0]': an initial guess must be at most"},
      {[](auto& j) { j["final_time"] = {{"free", true}}; }, "field 'final_time.lower'"},
      {[](auto& j) { j["final_time"] = {{"free", true}, {"lower", 1}, {"weight", -1}}; },
       "field 'final_time.weight'"},
  });
}

// A warm start is bounded like a guess: 1e308 names its line.
TEST(ProblemFiles, ExtremeWarmStartValuesNameTheLine) {
  TempDir dir;
  const auto path = dir.write("warm.txt", "0.5\n1e308\n");
  try {
    io::read_decision_vector(path);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("warm.txt: line 2: 1e+308 is beyond"), std::string::npos)
        << e.what();
  }
}

// A solution the re-simulation cannot be compared with (an infinite entry) names the entry,
// the step and time and both values (it once said "the re-simulation differs by inf").
TEST(ProblemFiles, ResimulationThatCannotBeComparedNamesTheStateStepAndTime) {
  io::Problem problem = io::load_problem(example("car_tunnel"));
  control::Ocp& ocp = *problem.ocp;
  control::VecX x(ocp.num_variables());
  ocp.initial_guess(x);
  int set = 0;
  for (int j = 0; j < ocp.num_variables(); ++j)
    if (ocp.variable_name(j) == "x at knot 3") x[j] = -std::numeric_limits<double>::infinity(), ++set;
  ASSERT_EQ(set, 1);
  try {
    ocp.resimulation_error(x);
    ADD_FAILURE() << "no error";
  } catch (const SolverError& e) {
    const std::string msg = e.what();
    const std::string t = number_text(3 * ocp.time_step());
    EXPECT_NE(msg.find("re-simulation: after step 2 (t = " + t + " s) x is "), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(" in the re-simulation and " + number_text(-std::numeric_limits<double>::infinity()) + " in the solution; their difference "
                       "is not finite"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace marsden::test
