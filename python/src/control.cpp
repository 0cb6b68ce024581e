// Optimal control from Python: a problem file (or its JSON text, e.g. json.dumps of a dict
// built in Python) solved by DMOC with Ipopt (docs/dmoc.md), with the optimal trajectory
// and the solver's report as numpy arrays and a dict.
#include <string>

#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "marsden/control/ilqr.hpp"
#include "marsden/control/lqr.hpp"
#include "marsden/control/nlp.hpp"
#include "marsden/error.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/run/run.hpp"
#include "module.hpp"
#include "numpy.hpp"

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


// Matrices of one size as a numpy array (count, rows, cols).
Array stack(const std::vector<Eigen::MatrixXd>& ms) {
  const std::size_t rows = ms.empty() ? 0 : std::size_t(ms[0].rows());
  const std::size_t cols = ms.empty() ? 0 : std::size_t(ms[0].cols());
  std::vector<double> v;
  v.reserve(ms.size() * rows * cols);
  for (const Eigen::MatrixXd& m : ms)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) v.push_back(m(i, j));
  return to_numpy(std::move(v), {ms.size(), rows, cols});
}

control::Derivatives derivatives_from(const std::string& name) {
  if (name == "auto") return control::Derivatives::Auto;
  if (name == "exact") return control::Derivatives::Exact;
  if (name == "differences") return control::Derivatives::Differences;
  throw InputError("derivatives: expected \"auto\", \"exact\" or \"differences\", got \"" +
                   name + "\"");
}

// The closed-loop tools of control/lqr.hpp as marsden._core.control (docs/control.md).
void bind_lqr(nb::module_ c) {
  nb::class_<control::Nominal>(
      c, "Nominal",
      "A run to follow: states x (N+1, state_size) in the system's state layout and inputs "
      "u (N, inputs) held over each step, from t0 in steps of dt (s).")
      .def(
          "__init__",
          [](control::Nominal* self, const Eigen::MatrixXd& x, const Eigen::MatrixXd& u,
             double dt, double t0) {
            if (x.rows() != u.rows() + 1)
              throw InputError("Nominal: x needs one row more than u (N + 1 states for N "
                               "steps), got " + std::to_string(x.rows()) + " and " +
                               std::to_string(u.rows()));
            if (!(dt > 0.0)) throw InputError("Nominal: dt must be > 0 (s)");
            new (self) control::Nominal{t0, dt, x, u};
          },
          nb::arg("x"), nb::arg("u"), nb::arg("dt"), nb::arg("t0") = 0.0,
          "InputError unless x has one row more than u and dt > 0.")
      .def_ro("t0", &control::Nominal::t0, "Start time (s).")
      .def_ro("dt", &control::Nominal::dt, "Step (s).")
      .def_ro("x", &control::Nominal::x, "States x_0..x_N, (N+1, state_size).")
      .def_ro("u", &control::Nominal::u, "Inputs u_0..u_{N-1}, (N, inputs).")
      .def_prop_ro("steps", &control::Nominal::steps, "Steps N (rows of u).")
      .def("__repr__", [](const control::Nominal& n) {
        return "Nominal(" + std::to_string(n.steps()) + " steps of " + std::to_string(n.dt) +
               " s from t0 = " + std::to_string(n.t0) + " s, " + std::to_string(n.x.cols()) +
               " states, " + std::to_string(n.u.cols()) + " inputs)";
      });
  c.def("rollout", &control::rollout, nb::arg("system"), nb::arg("input"), nb::arg("t0"),
        nb::arg("dt"), nb::arg("x0"), nb::arg("u"),
        "Runs system from x0 (set_state) under u (N, inputs), each row held over its step "
        "through input, the HeldInput given to the system as its controls. Returns the "
        "Nominal; raises SolverError naming a step that does not converge.");
  c.def(
      "linearize",
      [](sim::System& system, const control::Nominal& nominal, sim::HeldInput* input,
         const std::string& derivatives, double step) {
        const control::Linearization lin =
            control::linearize(system, input, nominal, derivatives_from(derivatives), step);
        nb::dict d;
        d["A"] = stack(lin.A);
        d["B"] = stack(lin.B);
        d["exact"] = lin.exact;
        return d;
      },
      nb::arg("system"), nb::arg("nominal"), nb::arg("input").none() = nb::none(),
      nb::arg("derivatives") = "auto", nb::arg("step") = 1e-5,
      "The step map linearised along the nominal in the state chart: A (N, tangent, "
      "tangent), B (N, tangent, inputs) and exact (bool). derivatives: \"exact\", "
      "\"differences\" (central, through set_state and input) or \"auto\".");
  c.def(
      "tvlqr",
      [](const std::vector<Eigen::MatrixXd>& A, const std::vector<Eigen::MatrixXd>& B,
         const Eigen::MatrixXd& Q, const Eigen::MatrixXd& R, const Eigen::MatrixXd& Q_N) {
        const control::Gains g = control::tvlqr({A, B, false}, Q, R, Q_N);
        nb::dict d;
        d["K"] = stack(g.K);
        d["S"] = stack(g.S);
        return d;
      },
      nb::arg("A"), nb::arg("B"), nb::arg("Q"), nb::arg("R"), nb::arg("Q_N"),
      "Time-varying LQR by the discrete Riccati recursion: K (N, inputs, tangent) with "
      "du_k = -K_k dx_k, and the cost-to-go S (N+1, tangent, tangent).");
  c.def(
      "dare",
      [](const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& Q,
         const Eigen::MatrixXd& R) {
        const control::Dare r = control::dare(A, B, Q, R);
        nb::dict d;
        d["S"] = r.S;
        d["K"] = r.K;
        d["iterations"] = r.iterations;
        return d;
      },
      nb::arg("A"), nb::arg("B"), nb::arg("Q"), nb::arg("R"),
      "The discrete algebraic Riccati equation of an equilibrium (structure-preserving "
      "doubling): S and the gain K = (R + B'SB)^-1 B'SA.");
  nb::class_<control::Tracking, sim::Controller>(
      c, "Tracking",
      "u = u_k - K_k (x (-) x_k): follows a Nominal with gains K (N, inputs, tangent), "
      "K_final after its end (default the last gain). Give it to marsden.Feedback.")
      .def(
          "__init__",
          [](control::Tracking* self, const sim::System& system, const control::Nominal& nominal,
             const std::vector<Eigen::MatrixXd>& K, const std::optional<Eigen::MatrixXd>& K_final) {
            new (self) control::Tracking(system.state_chart(), nominal, K,
                                         K_final.value_or(Eigen::MatrixXd()));
          },
          nb::arg("system"), nb::arg("nominal"), nb::arg("K"),
          nb::arg("K_final").none() = nb::none(),
          "Gains in the state chart of system (System.state_difference).")
      .def_prop_ro("nominal", &control::Tracking::nominal, "The Nominal followed.")
      .def("__repr__",
           [](nb::handle self) {
             return "Tracking(" + std::string(nb::repr(self.attr("nominal")).c_str()) + ")";
           })
      .def(
          "__call__",
          [](control::Tracking& self, double t, const Eigen::VectorXd& x) {
            Eigen::VectorXd u(self.nominal().u.cols());
            self.control(t, {x.data(), std::size_t(x.size())}, {u.data(), std::size_t(u.size())});
            return u;
          },
          nb::arg("t"), nb::arg("x"), "u at time t (s) and state x.");
  c.def(
      "ilqr",
      [](sim::System& system, sim::HeldInput& input, const Eigen::VectorXd& x0,
         const Eigen::MatrixXd& u_guess, double dt, double t0,
         const std::optional<Eigen::VectorXd>& x_goal,
         const std::optional<Eigen::MatrixXd>& x_ref, const std::optional<Eigen::MatrixXd>& u_ref,
         const std::optional<Eigen::MatrixXd>& Q, const Eigen::MatrixXd& R,
         const std::optional<Eigen::MatrixXd>& Q_N, const std::vector<int>& terminal,
         const std::optional<Eigen::VectorXd>& u_lower,
         const std::optional<Eigen::VectorXd>& u_upper, int max_iterations, double tolerance,
         double constraint_tolerance, double penalty, double regularization,
         const std::string& derivatives) {
        control::IlqrProblem p;
        p.t0 = t0;
        p.dt = dt;
        p.steps = int(u_guess.rows());
        p.x0 = x0;
        p.x_goal = x_goal.value_or(Eigen::VectorXd());
        p.x_ref = x_ref.value_or(Eigen::MatrixXd());
        p.u_ref = u_ref.value_or(Eigen::MatrixXd());
        p.Q = Q.value_or(Eigen::MatrixXd());
        p.R = R;
        p.Q_N = Q_N.value_or(Eigen::MatrixXd());
        p.terminal = terminal;
        p.u_lower = u_lower.value_or(Eigen::VectorXd());
        p.u_upper = u_upper.value_or(Eigen::VectorXd());
        control::IlqrOptions o;
        o.max_iterations = max_iterations;
        o.tolerance = tolerance;
        o.constraint_tolerance = constraint_tolerance;
        o.penalty = penalty;
        o.regularization = regularization;
        o.derivatives = derivatives_from(derivatives);
        control::IlqrResult r;
        {
          nb::gil_scoped_release release;
          r = control::ilqr(system, input, p, u_guess, o);
        }
        nb::dict d;
        d["nominal"] = r.nominal;
        d["K"] = stack(r.K);
        d["cost"] = r.cost;
        d["constraint_violation"] = r.constraint_violation;
        d["iterations"] = r.iterations;
        d["rounds"] = r.rounds;
        d["converged"] = r.converged;
        d["message"] = r.message;
        d["solve_time_s"] = r.solve_time_s;
        return d;
      },
      nb::arg("system"), nb::arg("input"), nb::arg("x0"), nb::arg("u_guess"), nb::arg("dt"),
      nb::kw_only(), nb::arg("t0") = 0.0, nb::arg("x_goal").none() = nb::none(),
      nb::arg("x_ref").none() = nb::none(), nb::arg("u_ref").none() = nb::none(),
      nb::arg("Q").none() = nb::none(), nb::arg("R"), nb::arg("Q_N").none() = nb::none(),
      nb::arg("terminal") = std::vector<int>{}, nb::arg("u_lower").none() = nb::none(),
      nb::arg("u_upper").none() = nb::none(), nb::arg("max_iterations") = 1000,
      nb::arg("tolerance") = 1e-9, nb::arg("constraint_tolerance") = 1e-8,
      nb::arg("penalty") = 1e3, nb::arg("regularization") = 1e-8,
      nb::arg("derivatives") = "auto",
      "iLQR over the contract (docs/control.md): minimises sum_k dt (dx_k' Q dx_k + du_k' R "
      "du_k) + dx_N' Q_N dx_N (dx = x (-) x_ref_k, du = u - u_ref_k) over the inputs "
      "(u_guess: N x inputs), within [u_lower, u_upper], with the tangent entries listed in "
      "terminal of x_N (-) x_goal held at zero (augmented Lagrangian). Returns a dict: "
      "nominal, K (N, inputs, tangent), cost, constraint_violation, iterations, rounds, "
      "converged, message, solve_time_s (the GIL released).");
  nb::class_<control::Mpc, sim::Controller>(
      c, "Mpc",
      "Receding-horizon iLQR tracking a reference Nominal from the measured state at every "
      "step, warm-started from its last plan shifted by one step; plans on `planner`, a "
      "system of its own made with controls=input. Give it to marsden.Feedback.")
      .def(
          "__init__",
          [](control::Mpc* self, std::shared_ptr<sim::System> planner,
             std::shared_ptr<sim::HeldInput> input, const control::Nominal& reference,
             int horizon, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& R,
             const Eigen::MatrixXd& Q_N, const std::optional<Eigen::VectorXd>& u_lower,
             const std::optional<Eigen::VectorXd>& u_upper, int max_iterations,
             double tolerance) {
            control::MpcOptions o;
            o.horizon = horizon;
            o.Q = Q;
            o.R = R;
            o.Q_N = Q_N;
            o.u_lower = u_lower.value_or(Eigen::VectorXd());
            o.u_upper = u_upper.value_or(Eigen::VectorXd());
            o.ilqr.max_iterations = max_iterations;
            o.ilqr.tolerance = tolerance;
            new (self) control::Mpc(std::move(planner), std::move(input), reference, o);
          },
          nb::arg("planner"), nb::arg("input"), nb::arg("reference"), nb::arg("horizon"),
          nb::arg("Q"), nb::arg("R"), nb::arg("Q_N"), nb::arg("u_lower").none() = nb::none(),
          nb::arg("u_upper").none() = nb::none(), nb::arg("max_iterations") = 20,
          nb::arg("tolerance") = 1e-6)
      .def_prop_ro(
          "solve_times",
          [](const control::Mpc& m) { return m.solve_times(); },
          "Wall time of each solve so far (s).")
      .def_prop_ro(
          "solve_iterations",
          [](const control::Mpc& m) { return m.solve_iterations(); },
          "iLQR iterations of each solve so far.");
}

}  // namespace

void bind_control(nb::module_ m) {
  nb::class_<io::Problem>(m, "Problem",
                          "An optimal-control problem (docs/dmoc.md), parsed and validated.")
      .def_ro("file", &io::Problem::file,
              "The path load_problem read it from, as given, or parse_problem's label.")
      .def(
          "__reduce__",
          [](const io::Problem& p) {
            if (p.text.empty())
              throw nb::type_error("this Problem was not parsed from text and cannot be pickled");
            return nb::make_tuple(nb::module_::import_("marsden._pickle").attr("parse_problem"),
                                  nb::make_tuple(p.text, p.file));
          },
          "Pickle and copy: the problem's text and file, parsed again.")
      .def_ro("name", &io::Problem::name, "The file's \"name\" (default \"problem\").")
      .def_ro("system_type", &io::Problem::system_type,
              "The family: \"helicopter\", \"boat\", \"generated\", \"car\", "
              "\"generated_rdp\" or \"tree\".")
      .def_prop_ro("num_variables", [](const io::Problem& p) { return p.ocp->num_variables(); },
                   "Size of the NLP's decision vector (Problem.solve()'s x).")
      .def_prop_ro("num_constraints",
                   [](const io::Problem& p) { return p.ocp->num_constraints(); },
                   "Rows of the NLP's constraints.")
      .def_prop_ro("steps", [](const io::Problem& p) { return p.ocp->num_steps(); },
                   "Time steps N of the discretisation (N + 1 knots).")
      .def("__repr__",
           [](const io::Problem& p) {
             return "Problem(" + quoted(p.name) + ", " + p.system_type + ", " +
                    count_text(p.ocp->num_steps(), "step") + ", " +
                    count_text(p.ocp->num_variables(), "variable") + ", " +
                    count_text(p.ocp->num_constraints(), "constraint") + ", from " +
                    quoted(p.file) + ")";
           })
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
  bind_lqr(m.def_submodule(
      "control", "Closed loop over the step contract: nominal runs, linearisation, TV-LQR, "
                 "DARE and tracking (docs/control.md)."));
}

}  // namespace marsden::python
