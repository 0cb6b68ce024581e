// The papers' experiments from Python: list them, run one into a folder (results.json with
// the claims checked; the Python layer reads it into a dict).
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
      [](const std::string& name, const std::filesystem::path& out_dir, bool quick) {
        experiments::ExperimentOutcome outcome;
        {
          nb::gil_scoped_release release;
          outcome = experiments::run_experiment(name, out_dir, quick);
        }
        return outcome.results_file;
      },
      nb::arg("name"), nb::arg("out_dir"), nb::arg("quick"));
}

}  // namespace marsden::python
