#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"
#include "marsden/run/python.hpp"

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
      run::run_python(run::python_command(), {"-c", "import matplotlib"}).succeeded();
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

// Every file under out_dir, hidden ones included, relative to it.
std::vector<std::string> files_in(const std::filesystem::path& out_dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(out_dir))
    names.push_back(e.path().lexically_relative(out_dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Experiments, AStopEndsTheRunAtItsNextSafePointWithCompleteFilesOnly) {
  std::atomic<bool> stop{false};
  std::vector<std::string> parts;
  register_experiment("test-interrupted", "stops in its second part", [&](ExperimentContext& ctx) {
    ctx.part("first");
    {
      record::CsvWriter csv(ctx.out_dir() / "first.csv", {"k"}, record::CsvWriter::Staging::Hidden);
      csv.write_row({1.0});
      csv.close();
      ctx.add_data_file(csv.path(), "the first part's rows");
    }
    ctx.add_claim({"first", "the first part ran", "test", 1.0, "1", true});
    ctx.part("second");
    record::CsvWriter csv(ctx.out_dir() / "second.csv", {"k"}, record::CsvWriter::Staging::Hidden);
    csv.write_row({1.0});
    stop = true;  // as the command's signal handler would
    ctx.poll();
    ADD_FAILURE() << "poll() returned with the stop flag up";
  });
  TempDir dir;
  ExperimentControl control;
  control.stop = &stop;
  control.progress = [&](const std::string& experiment, const std::string& part, double elapsed) {
    EXPECT_EQ(experiment, "test-interrupted");
    EXPECT_GE(elapsed, 0.0);
    parts.push_back(part);
  };
  const ExperimentOutcome out = run_experiment("test-interrupted", dir / "run", false, control);
  EXPECT_TRUE(out.interrupted);
  EXPECT_NE(out.message.find("interrupted in part 'second'"), std::string::npos) << out.message;
  EXPECT_EQ(parts, (std::vector<std::string>{"first", "second"}));
  // The second part's file was being written: it is gone, hidden file and all.
  EXPECT_EQ(files_in(dir / "run"), (std::vector<std::string>{"first.csv", "results.json"}));
  const nlohmann::json r = read_json(dir / "run" / "results.json");
  EXPECT_EQ(r["status"], "interrupted");
  EXPECT_EQ(r["message"], out.message);
  ASSERT_EQ(r["claims"].size(), 1u);
  ASSERT_EQ(r["data_files"].size(), 1u);
  EXPECT_EQ(r["data_files"][0]["path"], "first.csv");
  EXPECT_EQ(read_file(dir / "run" / "first.csv"), "k\n1\n");

  // Not stopped, the same framework says "ok".
  stop = false;
  register_experiment("test-ok", "", [](ExperimentContext& ctx) { ctx.part("only"); });
  ExperimentControl flag_only;
  flag_only.stop = &stop;
  const ExperimentOutcome ok = run_experiment("test-ok", dir / "ok", false, flag_only);
  EXPECT_FALSE(ok.interrupted);
  EXPECT_EQ(read_json(dir / "ok" / "results.json")["status"], "ok");
}

TEST(Experiments, AStopReachesTheCommandAnExperimentRuns) {
  std::atomic<bool> stop{false};
  register_experiment("test-command", "waits on a child", [&](ExperimentContext& ctx) {
    // The child would run for ten minutes; the flag goes up once it has started (it
    // touches a file), and the SIGINT forwarded to its group ends it.
    std::thread raise([&] {
      while (!std::filesystem::exists(ctx.out_dir() / "started"))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      stop = true;
    });
    try {
      ctx.run_python({"-c",
                      "import pathlib, sys, time\n"
                      "pathlib.Path(sys.argv[1]).touch()\n"
                      "time.sleep(600)",
                      (ctx.out_dir() / "started").string()});
    } catch (...) {
      raise.join();
      throw;
    }
    raise.join();
    ADD_FAILURE() << "run_python returned with the stop flag up";
  });
  TempDir dir;
  ExperimentControl control;
  control.stop = &stop;
  const ExperimentOutcome out = run_experiment("test-command", dir / "run", false, control);
  EXPECT_TRUE(out.interrupted);
  EXPECT_EQ(read_json(dir / "run" / "results.json")["status"], "interrupted");

  // Without a stop, the child's exit status comes back as waitpid gives it.
  ExperimentContext ctx("status", dir.path(), true);
  const run::PythonRun r = ctx.run_python({"-c", "raise SystemExit(3)"});
  ASSERT_EQ(r.start_error, 0);
  EXPECT_FALSE(r.stopped);
  ASSERT_TRUE(WIFEXITED(r.wait_status));
  EXPECT_EQ(WEXITSTATUS(r.wait_status), 3);
  EXPECT_FALSE(r.succeeded());
}

}  // namespace
}  // namespace marsden::experiments
