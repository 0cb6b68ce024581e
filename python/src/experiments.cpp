// The papers' experiments from Python: list them, run one into a folder (results.json with
// the claims checked; the Python layer reads it into a dict).
#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "marsden/experiments/experiment.hpp"
#include "module.hpp"

namespace nb = nanobind;

namespace marsden::python {

void bind_experiments(nb::module_ m) {
  m.def(
      "_list_experiments",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& e : experiments::list_experiments()) out.emplace_back(e.name, e.description);
        return out;
      },
      "(name, description) of every experiment, sorted by name.");
  m.def(
      "_run_experiment",
      [](const std::string& name, const std::filesystem::path& out_dir, bool quick,
         const nb::object& progress) {
        // As simulate(): at most once a second the experiment takes the GIL; Ctrl-C (a
        // pending KeyboardInterrupt) stops it at its next safe point, with results.json
        // saying "interrupted"; an exception of the callback stops it too and is raised.
        std::atomic<bool> stop{false};
        std::optional<nb::python_error> callback_error;
        experiments::ExperimentControl control;
        control.stop = &stop;
        control.progress = [&](const std::string& experiment, const std::string& part,
                               double elapsed) {
          nb::gil_scoped_acquire acquire;
          if (PyErr_CheckSignals() != 0) {
            PyErr_Clear();
            stop = true;
            return;
          }
          if (progress.is_none() || callback_error) return;
          try {
            progress(experiment, part, elapsed);
          } catch (nb::python_error& e) {
            callback_error.emplace(std::move(e));
            stop = true;
          }
        };
        experiments::ExperimentOutcome outcome;
        {
          nb::gil_scoped_release release;
          outcome = experiments::run_experiment(name, out_dir, quick, control);
        }
        if (callback_error) throw std::move(*callback_error);
        return outcome.results_file;
      },
      nb::arg("name"), nb::arg("out_dir"), nb::arg("quick"), nb::arg("progress").none());
}

}  // namespace marsden::python
