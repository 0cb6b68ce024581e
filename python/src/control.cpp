// Optimal control from Python: a problem file (or its JSON text, e.g. json.dumps of a dict
// built in Python) solved by DMOC with Ipopt (docs/dmoc.md), with the optimal trajectory
// and the solver's report as numpy arrays and a dict.
#include <string>

#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "marsden/control/nlp.hpp"
#include "marsden/error.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/run/run.hpp"
#include "module.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

nb::dict table_dict(const control::Table& t) {
  nb::dict d;
  d["columns"] = t.columns;
  d["values"] = Eigen::MatrixXd(t.rows);
  return d;
}

nb::dict solve(io::Problem& problem, const std::optional<Eigen::VectorXd>& warm_start) {
  control::Ocp& ocp = *problem.ocp;
  run::OptimizeSummary summary;
  {
    nb::gil_scoped_release release;
    summary = run::solve_problem(problem, problem.solver,
                                 warm_start ? *warm_start : problem.warm_start);
  }
  const control::NlpSolution& sol = summary.solution;
  nb::dict out;
  out["status"] = std::string(control::to_string(sol.status));
  out["ok"] = sol.ok();
  out["message"] = sol.message;
  out["cost"] = sol.cost;
  out["iterations"] = sol.iterations;
  out["constraint_violation"] = sol.constraint_violation;
  out["worst_constraint"] = sol.worst_constraint;
  out["solve_time_s"] = sol.solve_time_s;
  out["x"] = sol.x;
  if (sol.x.size() > 0) {
    control::Table states, controls;
    ocp.tables(sol.x, states, controls);
    out["states"] = table_dict(states);
    out["controls"] = table_dict(controls);
    out["min_clearance"] = summary.min_clearance;
    if (summary.resimulation_message.empty())
      out["resimulation_error"] = summary.resimulation_error;
    else
      out["resimulation_message"] = summary.resimulation_message;
  }
  return out;
}

}  // namespace

void bind_control(nb::module_ m) {
  nb::class_<io::Problem>(m, "Problem",
                          "An optimal-control problem (docs/dmoc.md), parsed and validated.")
      .def_ro("file", &io::Problem::file)
      .def(
          "__reduce__",
          [](const io::Problem& p) {
            if (p.text.empty())
              throw nb::type_error("this Problem was not parsed from text and cannot be pickled");
            return nb::make_tuple(nb::module_::import_("marsden._pickle").attr("parse_problem"),
                                  nb::make_tuple(p.text, p.file));
          },
          "Pickle and copy: the problem's text and file, parsed again.")
      .def_ro("name", &io::Problem::name)
      .def_ro("system_type", &io::Problem::system_type)
      .def_prop_ro("num_variables", [](const io::Problem& p) { return p.ocp->num_variables(); })
      .def_prop_ro("num_constraints",
                   [](const io::Problem& p) { return p.ocp->num_constraints(); })
      .def_prop_ro("steps", [](const io::Problem& p) { return p.ocp->num_steps(); })
      .def("solve", &solve, nb::arg("warm_start").none() = nb::none(),
           "Solves with Ipopt (the GIL released). Returns a dict: status, ok, message, cost, "
           "iterations, constraint_violation, worst_constraint, solve_time_s, x (the "
           "decision vector, for a warm start), and when there is an iterate states and "
           "controls ({columns, values}: knots x columns and steps x columns, controls held "
           "over each step), min_clearance and resimulation_error.");
  m.def(
      "load_problem",
      [](const std::filesystem::path& path, bool allow_code) {
        return run::load_problem(path, python_allowance(allow_code));
      },
      nb::arg("path"), nb::arg("allow_code") = false,
      "Reads and validates a problem file; raises InputError naming the file and field. The "
      "code it names runs only with allow_code=True or in a trusted folder, as for "
      "load_scene.");
  m.def(
      "parse_problem",
      [](std::string_view text, const std::string& label, bool allow_code) {
        return run::parse_problem(text, label, python_allowance(allow_code));
      },
      nb::arg("text"), nb::arg("label") = "<string>", nb::arg("allow_code") = false,
      "The same from JSON text; the code it names runs only with allow_code=True.");
  m.def(
      "run_problem",
      [](io::Problem& problem, const std::filesystem::path& out_dir) {
        run::OptimizeSummary s;
        {
          nb::gil_scoped_release release;
          s = run::run_problem(problem, out_dir);
        }
        nb::dict d;
        d["ok"] = s.ok;
        d["message"] = s.message;
        d["cost"] = s.solution.cost;
        d["iterations"] = s.solution.iterations;
        d["resimulation_error"] = s.resimulation_error;
        d["min_clearance"] = s.min_clearance;
        return d;
      },
      nb::arg("problem"), nb::arg("out_dir"),
      "Solves as `marsden optimize` does, writing its files (trajectory.csv, controls.csv, "
      "trajectory.npz, summary.json, decision_vector.txt, resimulate.json) to out_dir.");
}

}  // namespace marsden::python
