// The papers' experiments from Python: list them, run one into a folder (results.json with
// the claims checked; the Python layer reads it into a dict); and the accuracy studies'
// rows and claims (marsden/experiments/studies.hpp), which marsden.sweep runs as sweeps.
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "marsden/experiments/experiment.hpp"
#include "marsden/experiments/studies.hpp"
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
        // As simulate(): at most once a second the experiment takes the GIL
        // (PythonProgress); Ctrl-C stops it at its next safe point, with results.json
        // saying "interrupted".
        PythonProgress python(progress);
        experiments::ExperimentControl control;
        control.stop = &python.stop;
        control.progress = [&python](const std::string& experiment, const std::string& part,
                                     double elapsed) { python(experiment, part, elapsed); };
        experiments::ExperimentOutcome outcome;
        {
          nb::gil_scoped_release release;
          outcome = experiments::run_experiment(name, out_dir, quick, control);
        }
        python.rethrow();
        return outcome.results_file;
      },
      nb::arg("name"), nb::arg("out_dir"), nb::arg("quick"), nb::arg("progress").none());

  m.def("_study_names", &experiments::study_names, "The accuracy studies' names, sorted.");
  m.def(
      "_study_rows",
      [](const std::string& name, bool quick) {
        std::vector<std::tuple<int, int, int>> out;
        for (const auto& k : experiments::study_rows(name, quick))
          out.emplace_back(k.run, k.method, k.level);
        return out;
      },
      nb::arg("name"), nb::arg("quick"),
      "Every (run, method, level) key of a study, in the experiment's order.");
  m.def(
      "_study_row",
      [](const std::string& name, bool quick, int run, int method, int level) {
        experiments::StudyRow row;
        {
          nb::gil_scoped_release release;
          row = experiments::study_row(name, quick, {run, method, level});
        }
        nb::dict out;
        for (const auto& [measure, value] : row.measures) out[measure.c_str()] = value;
        return out;
      },
      nb::arg("name"), nb::arg("quick"), nb::arg("run"), nb::arg("method"), nb::arg("level"),
      "One row of a study: {measure: value} (NaN where a measure does not exist).");
  m.def(
      "_study_claims",
      [](const std::string& name, bool quick,
         const std::vector<std::tuple<int, int, int, std::map<std::string, double>>>& table) {
        std::vector<experiments::StudyRow> rows;
        for (const auto& [run, method, level, measures] : table)
          rows.push_back({{run, method, level}, {measures.begin(), measures.end()}});
        const experiments::StudyResult result = experiments::study_claims(name, quick, rows);
        nb::list claims;
        for (const auto& c : result.claims) {
          nb::dict d;
          d["id"] = c.id;
          d["statement"] = c.statement;
          d["source"] = c.source;
          if (std::holds_alternative<double>(c.measured))
            d["measured"] = std::get<double>(c.measured);
          else
            d["measured"] = std::get<std::string>(c.measured);
          d["expected"] = c.expected;
          d["holds"] = c.holds;
          claims.append(d);
        }
        nb::dict parameters;
        for (const auto& [key, value] : result.parameters) parameters[key.c_str()] = value.dump(-1);
        nb::dict out;
        out["claims"] = claims;
        out["notes"] = result.notes;
        out["parameters"] = parameters;
        out["summary"] = result.summary.dump(-1);
        return out;
      },
      nb::arg("name"), nb::arg("quick"), nb::arg("rows"),
      "The claims of a study from its full table [(run, method, level, {measure: value})]: "
      "{claims: [{id, statement, source, measured, expected, holds}], notes, parameters "
      "{name: JSON text}, summary (JSON text)}.");
}

}  // namespace marsden::python
