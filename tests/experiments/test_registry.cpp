#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"

namespace marsden::experiments {
namespace {

using test::read_file;
using test::TempDir;

nlohmann::json read_json(const std::filesystem::path& p) {
  return nlohmann::json::parse(read_file(p));
}

TEST(Experiments, RunWritesResultsWithParametersFilesAndClaims) {
  register_experiment("test-two-claims", "two claims, one failing", [](ExperimentContext& ctx) {
    ctx.add_parameter("dt", 0.01);
    ctx.add_parameter("method", "vi");
    ctx.add_parameter("steps", ctx.quick() ? 10 : 1000);
    std::ofstream(ctx.out_dir() / "series.csv") << "t\n0\n";
    ctx.add_data_file(ctx.out_dir() / "series.csv", "a time series");
    ctx.add_claim({"bounded", "energy error stays bounded", "vehicles, Fig. 3", 1e-9, "< 1e-6",
                   true});
    ctx.add_claim({"order", "second order", "vehicles, §4.2", std::string("1.2"), "2 +- 0.2",
                   false});
  });
  bool listed = false;
  for (const auto& e : list_experiments())
    listed = listed || (e.name == "test-two-claims" && e.description == "two claims, one failing");
  EXPECT_TRUE(listed);

  TempDir dir;
  const ExperimentOutcome out = run_experiment("test-two-claims", dir / "run", true);
  EXPECT_FALSE(out.all_claims_hold);
  EXPECT_EQ(out.claims.size(), 2u);
  EXPECT_EQ(out.results_file, dir / "run" / "results.json");

  const nlohmann::json r = read_json(out.results_file);
  EXPECT_EQ(r["experiment"], "test-two-claims");
  EXPECT_EQ(r["quick"], true);
  EXPECT_EQ(r["parameters"]["dt"], 0.01);
  EXPECT_EQ(r["parameters"]["method"], "vi");
  EXPECT_EQ(r["parameters"]["steps"], 10);
  ASSERT_EQ(r["data_files"].size(), 1u);
  EXPECT_EQ(r["data_files"][0]["path"], "series.csv") << "recorded relative to the output dir";
  ASSERT_EQ(r["claims"].size(), 2u);
  EXPECT_EQ(r["claims"][0]["id"], "bounded");
  EXPECT_EQ(r["claims"][0]["measured"], 1e-9);
  EXPECT_EQ(r["claims"][0]["source"], "vehicles, Fig. 3");
  EXPECT_EQ(r["claims"][0]["holds"], true);
  EXPECT_EQ(r["claims"][1]["measured"], "1.2");
  EXPECT_EQ(r["claims"][1]["expected"], "2 +- 0.2");
  EXPECT_EQ(r["all_claims_hold"], false);
}

TEST(Experiments, UnknownNameAndDuplicateRegistrationAreErrors) {
  TempDir dir;
  try {
    run_experiment("no-such-experiment", dir.path(), false);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown experiment 'no-such-experiment'"),
              std::string::npos);
  }
  register_experiment("test-dup", "", [](ExperimentContext&) {});
  EXPECT_THROW(register_experiment("test-dup", "", [](ExperimentContext&) {}),
               std::invalid_argument);
  EXPECT_THROW(register_experiment("", "", [](ExperimentContext&) {}), std::invalid_argument);
}

TEST(Experiments, PlotScriptsNeverFailTheExperiment) {
  TempDir dir;
  ExperimentContext ctx("plots", dir.path(), true);
  EXPECT_FALSE(run_plot_script(ctx, "python/plots/does_not_exist.py"));

  std::ofstream(dir / "data.txt") << "1 3 2 4\n";
  const bool have_matplotlib =
      std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
  EXPECT_EQ(run_plot_script(ctx, "tests/experiments/plot_fixture.py"), have_matplotlib);
  ctx.write_results();
  const nlohmann::json r = read_json(dir / "results.json");
  EXPECT_NE(r["notes"][0].get<std::string>().find("does_not_exist.py not found"),
            std::string::npos);
  if (have_matplotlib) {
    ASSERT_EQ(r["data_files"].size(), 1u) << r.dump();
    EXPECT_EQ(r["data_files"][0]["path"], "fixture.png");
    EXPECT_TRUE(std::filesystem::exists(dir / "fixture.png"));
  }
  EXPECT_EQ(r["all_claims_hold"], true) << "vacuously, with no claims";
}

}  // namespace
}  // namespace marsden::experiments
