// Problem files: the example problems load, solve and re-simulate; an infeasible problem is
// reported as such with every output written; malformed files name the file and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/io/problem.hpp"

namespace marsden::test {
namespace {

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "problems" / (name + ".json");
}

nlohmann::json read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(ProblemFiles, HelicopterCanyonSolvesAndIsReproducedBySimulation) {
  TempDir dir;
  io::Problem problem = io::load_problem(example("helicopter_canyon"));
  const auto sum = io::run_problem(problem, dir.path());
  ASSERT_TRUE(sum.ok) << sum.message;
  EXPECT_LT(sum.solution.constraint_violation, 1e-9);
  EXPECT_LT(sum.resimulation_error, 1e-6);
  EXPECT_GE(sum.min_clearance, -1e-8);
  for (const char* f : {"trajectory.csv", "controls.csv", "trajectory.npz", "summary.json",
                        "decision_vector.txt", "ipopt.log"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  // A warm start from the solution returns to the same point in fewer iterations (Ipopt
  // pushes the start off the active bounds, so not in zero).
  problem.warm_start = io::read_decision_vector(dir / "decision_vector.txt");
  TempDir again;
  const auto warm = io::run_problem(problem, again.path());
  ASSERT_TRUE(warm.ok) << warm.message;
  EXPECT_LT(warm.solution.iterations, sum.solution.iterations);
  EXPECT_NEAR(warm.solution.cost, sum.solution.cost, 1e-6 * (1.0 + sum.solution.cost));
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
  const auto sum = io::run_problem(problem, dir / "out");
  EXPECT_FALSE(sum.ok);
  EXPECT_FALSE(sum.solution.ok()) << sum.message;
  EXPECT_GT(sum.solution.constraint_violation, 1.0);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "summary.json"));
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

TEST(ProblemFiles, BadFieldsAreNamed) {
  TempDir dir;
  const auto base = read(example("helicopter_canyon"));
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
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
  };
  for (const auto& c : cases) {
    auto j = base;
    c.edit(j);
    const std::string msg = error_of(dir, j);
    EXPECT_NE(msg.find((dir / "bad.json").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in: " << msg;
  }
  EXPECT_THROW(io::load_problem(dir / "missing.json"), InputError);
}

}  // namespace
}  // namespace marsden::test
