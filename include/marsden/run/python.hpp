// The one way Marsden starts a process, always Python: the modules that scene and problem
// files name (run/code.hpp, python -m marsden.symbolic.module), the package's commands that
// the `marsden` command hands over to (view, report, sweep: marsden.MODULE.main), and the
// experiments' plot scripts and Python studies (ExperimentContext::run_python). Arguments
// are an argv vector, never a shell line.
#pragma once

#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace marsden::run {

// Which Python runs, and why that one (for messages): $MARSDEN_PYTHON, else the
// interpreter this build was configured with when it is still there, else python3 on PATH.
struct PythonCommand {
  std::string executable;
  std::string origin;
};
PythonCommand python_command();

// Where a Python child's standard output and error go.
enum class PythonOutput {
  Capture,  // read into PythonRun::out and err
  Inherit,  // this process's
  Discard,  // /dev/null
  File,     // PythonOptions::output_file, emptied first
  Append,   // PythonOptions::output_file, appended to
};

// How run_python runs a child.
struct PythonOptions {
  // NAME=VALUE entries of the child's environment, over this process's.
  std::vector<std::string> environment;
  // Goes first on the child's PYTHONPATH when it holds the package (marsden/): a build
  // tree's copy, so that what the child imports works before `pip install .`.
  std::filesystem::path package_dir;
  PythonOutput output = PythonOutput::Capture;
  std::filesystem::path output_file;
  // Killed (SIGKILL) when it has not ended after this many seconds.
  double time_limit_s = std::numeric_limits<double>::infinity();
  // Called about every 20 ms while the child runs; once it returns true, the child's
  // process group gets SIGINT (Python's KeyboardInterrupt), and SIGKILL stop_grace_s
  // later if it has not ended. With a stop the child runs in a process group of its own,
  // so a Ctrl-C on the terminal reaches this process only, which decides through stop.
  std::function<bool()> stop;
  double stop_grace_s = 10.0;
};

// What a Python child process did: start_error is the errno of a failed start, wait_status
// waitpid's status, timed_out says it was killed at its time limit, stopped that stop asked
// it to end; out is its standard output (the first 1 MiB), err the tail of its standard
// error (PythonOutput::Capture only).
struct PythonRun {
  int start_error = 0;
  int wait_status = 0;
  bool timed_out = false;
  bool stopped = false;
  std::string out, err;
  // Started, and exited with status 0.
  bool succeeded() const;
};

// Runs `python args...` with standard input /dev/null and SIGINT and SIGTERM at their
// default actions, and waits for it to end (reading its output to its end when captured).
// A file that cannot be opened for its output is a failed start (start_error).
PythonRun run_python(const PythonCommand& python, const std::vector<std::string>& args,
                     const PythonOptions& options = {});

// marsden.MODULE.main() of the package on `args` (`-c`, not `-m`, which would import the
// module twice, as the package imports it). When package_dir holds marsden/MODULE.py (a
// build tree's copy of the package) it goes first on the child's PYTHONPATH.
struct PythonMain {
  std::string module;
  std::vector<std::string> args;
  std::filesystem::path package_dir;
};

// Runs it as a child sharing this process's standard streams; returns waitpid's status.
// InputError "cannot run PYTHON (needs; set MARSDEN_PYTHON)" when it cannot start.
int call_python_main(const PythonMain& main, const std::string& needs);
// Replaces this process by it, so that signals and the exit status are the module's own.
// Returns only by that InputError.
[[noreturn]] void exec_python_main(const PythonMain& main, const std::string& needs);

}  // namespace marsden::run
