// The one launcher (marsden/run/python.hpp): an argv vector, extra environment entries, the
// output captured, discarded or written to a file, and a stop that ends the child's group
// by SIGINT, then SIGKILL.
#include "marsden/run/python.hpp"

#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/temp_dir.hpp"

namespace marsden::run {
namespace {

using test::read_file;
using test::TempDir;

PythonRun python(const std::vector<std::string>& args, const PythonOptions& options = {}) {
  return run_python(python_command(), args, options);
}

PythonOptions output_to(PythonOutput output, const std::filesystem::path& file = {}) {
  PythonOptions o;
  o.output = output;
  o.output_file = file;
  return o;
}

TEST(RunPython, ArgumentsReachThePythonAsTheyAreWithTheEnvironmentEntriesGiven) {
  // No shell: quotes, spaces and a semicolon are one argument each.
  PythonOptions options;
  options.environment = {"MARSDEN_TEST_ENTRY=a b"};
  const PythonRun r = python(
      {"-c", "import os, sys; print(repr(sys.argv[1:]), os.environ['MARSDEN_TEST_ENTRY'])",
       "it's one; word", "$HOME"},
      options);
  ASSERT_TRUE(r.succeeded()) << r.err;
  EXPECT_EQ(r.out, "[\"it's one; word\", '$HOME'] a b\n");
  EXPECT_FALSE(r.stopped);
  EXPECT_FALSE(r.timed_out);
}

TEST(RunPython, OutputGoesToAFileEmptiedOrAppendedToOrNowhere) {
  TempDir dir;
  const auto log = dir / "child.log";
  std::ofstream(log) << "before\n";
  const std::vector<std::string> both = {
      "-c", "import sys; print('out', flush=True); print('err', file=sys.stderr)"};
  ASSERT_TRUE(python(both, output_to(PythonOutput::File, log)).succeeded());
  EXPECT_EQ(read_file(log), "out\nerr\n");
  ASSERT_TRUE(python(both, output_to(PythonOutput::Append, log)).succeeded());
  EXPECT_EQ(read_file(log), "out\nerr\nout\nerr\n");

  const PythonRun discarded = python(both, output_to(PythonOutput::Discard));
  EXPECT_TRUE(discarded.succeeded());
  EXPECT_TRUE(discarded.out.empty() && discarded.err.empty());

  // A file that cannot be written is a failed start.
  const PythonRun no_file =
      python(both, output_to(PythonOutput::File, dir / "no-such-folder" / "log"));
  EXPECT_EQ(no_file.start_error, ENOENT);
  EXPECT_FALSE(no_file.succeeded());
}

TEST(RunPython, APackageFolderGoesFirstOnPythonPathWhenItHoldsThePackage) {
  TempDir dir;
  const std::vector<std::string> path = {"-c", "import sys; print(sys.path[1])"};
  std::filesystem::create_directories(dir / "with" / "marsden");
  std::filesystem::create_directories(dir / "without");
  PythonOptions with, without;
  with.package_dir = dir / "with";
  without.package_dir = dir / "without";
  EXPECT_EQ(python(path, with).out, (dir / "with").string() + "\n");
  EXPECT_NE(python(path, without).out, (dir / "without").string() + "\n");
}

TEST(RunPython, AStopSendsSigintToTheGroupThenSigkillAfterTheGrace) {
  TempDir dir;
  const auto started = dir / "started";
  // The stop is asked once the child is running; the wait reports the stop.
  int polls = 0;
  const auto stop_once_started = [&] {
    ++polls;
    return std::filesystem::exists(started);
  };
  const std::string sleeper =
      "import pathlib, sys, time\npathlib.Path(sys.argv[1]).touch()\ntime.sleep(600)";
  PythonOptions options = output_to(PythonOutput::Discard);
  options.stop = stop_once_started;
  PythonRun r = python({"-c", sleeper, started.string()}, options);
  EXPECT_TRUE(r.stopped);
  EXPECT_GT(polls, 1);
  ASSERT_TRUE(WIFSIGNALED(r.wait_status)) << r.wait_status;
  EXPECT_EQ(WTERMSIG(r.wait_status), SIGINT) << "Python's KeyboardInterrupt ends it by SIGINT";

  // A child that ignores SIGINT is killed once the grace has passed.
  std::filesystem::remove(started);
  const std::string deaf =
      "import pathlib, signal, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
      "pathlib.Path(sys.argv[1]).touch()\ntime.sleep(600)";
  const auto begin = std::chrono::steady_clock::now();
  options.stop_grace_s = 0.2;
  r = python({"-c", deaf, started.string()}, options);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(60));
  EXPECT_TRUE(r.stopped);
  ASSERT_TRUE(WIFSIGNALED(r.wait_status)) << r.wait_status;
  EXPECT_EQ(WTERMSIG(r.wait_status), SIGKILL);
}

TEST(RunPython, ATimeLimitKillsTheChild) {
  PythonOptions options;
  options.time_limit_s = 0.3;
  const PythonRun r = python({"-c", "import time; time.sleep(600)"}, options);
  EXPECT_TRUE(r.timed_out);
  ASSERT_TRUE(WIFSIGNALED(r.wait_status));
  EXPECT_EQ(WTERMSIG(r.wait_status), SIGKILL);
  EXPECT_FALSE(r.succeeded());
}

}  // namespace
}  // namespace marsden::run
