// The parts of the extension module, one per source file.
#pragma once

#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <nanobind/nanobind.h>

#include "marsden/run/code.hpp"
#include "marsden/support/text.hpp"

namespace marsden::python {

// The stop flag and progress of a run that releases the GIL (simulate, run_experiment):
// called from the run, it takes the GIL; Ctrl-C (a pending KeyboardInterrupt) raises the
// flag, so the run ends at its next step and returns what it computed; otherwise the
// Python callback, if any, gets the arguments, and an exception of it raises the flag too
// and is raised again by rethrow() once the run has returned.
class PythonProgress {
 public:
  explicit PythonProgress(nanobind::object callback) : callback_(std::move(callback)) {}
  std::atomic<bool> stop{false};
  bool has_callback() const { return !callback_.is_none(); }

  template <class... Args>
  void operator()(const Args&... args) {
    nanobind::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      stop = true;
      return;
    }
    if (callback_.is_none() || error_) return;
    try {
      callback_(args...);
    } catch (nanobind::python_error& e) {
      error_.emplace(std::move(e));
      stop = true;
    }
  }
  void rethrow() {
    if (error_) throw std::move(*error_);
  }

 private:
  nanobind::object callback_;
  std::optional<nanobind::python_error> error_;
};

// What Python callers allow of the code a scene or problem names (marsden.load_scene(...,
// allow_code=True); run/code.hpp), and what a refusal tells them to do.
inline run::CodeAllowance python_allowance(bool allow_code) {
  return {allow_code, "pass allow_code=True"};
}

// Text for the classes' reprs: a string as Python quotes it, a vector as a Python list,
// and "n things" (the plural given, or the noun with an s, when n != 1).
inline std::string quoted(const std::string& text) {
  return nanobind::repr(nanobind::str(text.c_str(), text.size())).c_str();
}
inline std::string list_text(std::span<const double> v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + number_text(v[i]);
  return out + "]";
}
inline std::string count_text(long long n, const std::string& noun,
                              const std::string& plural = "") {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

void bind_lie(nanobind::module_ m);          // lie.cpp
void bind_signals(nanobind::module_ m);      // signals.cpp
void bind_sim(nanobind::module_ m);          // sim.cpp: scenes, systems, the driver
void bind_tree(nanobind::module_ m);         // tree.cpp
void bind_maximal(nanobind::module_ m);      // maximal.cpp
void bind_control(nanobind::module_ m);      // control.cpp: problems, DMOC with Ipopt
void bind_experiments(nanobind::module_ m);  // experiments.cpp

}  // namespace marsden::python
