// The one way Marsden starts Python: the modules that scene and problem files name
// (run/code.hpp, python -m marsden.symbolic.module) and the package's commands that the
// `marsden` command hands over to (view, report, sweep: marsden.MODULE.main). Arguments are
// an argv vector, never a shell line.
#pragma once

#include <filesystem>
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

// What a Python child process did: start_error is the errno of a failed start, wait_status
// waitpid's status, timed_out says it was killed at its time limit; out is its standard
// output (the first 1 MiB), err the tail of its standard error.
struct PythonRun {
  int start_error = 0;
  int wait_status = 0;
  bool timed_out = false;
  std::string out, err;
};

// Runs `python args...` with standard input /dev/null, reading its standard output and
// error to their end; killed (SIGKILL) when it has not ended after time_limit_s seconds.
PythonRun run_python(const PythonCommand& python, const std::vector<std::string>& args,
                     double time_limit_s);

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
