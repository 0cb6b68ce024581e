// Scenes, systems and the simulation driver from Python: a scene file parsed into
// marsden.Scene, its system (marsden.System, the step contract of sim/system.hpp) stepped
// by hand or run by sim::simulate, and the discrete residual with its Jacobian blocks as
// numpy arrays.
#include <time.h>

#include <atomic>
#include <chrono>
#include <algorithm>
#include <exception>
#include <span>
#include <thread>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/run/batch.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/feedback.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/tree/model.hpp"
#include "module.hpp"
#include "numpy.hpp"
#include "recorded.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

// A vector argument of the expected size, or a ValueError naming it.
void check_size(const Eigen::VectorXd& v, Eigen::Index size, const char* name) {
  if (v.size() != size)
    throw InputError(std::string(name) + ": expected " + std::to_string(size) +
                     " entries, got " + std::to_string(v.size()));
}

nb::dict summary_dict(const sim::RunSummary& s) {
  nb::dict d;
  d["ok"] = s.ok;
  d["status"] = s.ok ? "ok" : s.interrupted ? "interrupted" : "failed";
  d["message"] = s.message;
  d["steps_requested"] = s.steps_requested;
  d["steps_done"] = s.steps_done;
  d["final_time"] = s.final_time;
  d["rows_written"] = s.rows_written;
  nb::dict newton;
  newton["min"] = s.newton_min;
  newton["mean"] = s.newton_mean;
  newton["max"] = s.newton_max;
  newton["total"] = s.newton_total;
  d["newton_iterations"] = newton;
  d["failures"] = s.failures;
  nb::list subdivisions;
  for (const sim::SubdivisionEvent& e : s.subdivisions) {
    nb::dict event;
    event["step"] = e.step;
    event["t"] = e.t;
    event["level"] = e.level;
    subdivisions.append(event);
  }
  d["subdivisions"] = subdivisions;
  if (s.failed_step >= 0) {
    nb::dict failed;
    failed["step"] = s.failed_step;
    failed["t"] = s.failed_t;
    failed["reason"] = s.failed_code;
    d["failed_step"] = failed;
  }
  nb::dict energy;
  energy["initial"] = s.energy_initial;
  energy["max_abs_drift"] = s.energy_drift;
  energy["relative_drift"] = s.energy_drift_relative;
  d["energy"] = energy;
  if (!s.momentum_initial.empty()) {
    nb::dict momentum;
    momentum["initial"] = s.momentum_initial;
    momentum["max_abs_drift"] = s.momentum_drift;
    momentum["relative_drift"] = s.momentum_drift_relative;
    d["momentum"] = momentum;
  }
  if (s.has_constraint) d["constraint_violation_max"] = s.constraint_violation_max;
  d["wall_time_s"] = s.wall_time_s;
  return d;
}

// A controller u = pi(t, x) from a Python callable, called with the GIL held (the driver
// releases it while it runs) with t (s) and a copy of the state as a numpy array. A result
// of the wrong size is an InputError naming t; an exception raised by pi propagates to the
// caller of simulate, the rows so far kept by the driver.
class CallableController final : public sim::Controller {
 public:
  explicit CallableController(nb::callable f) : f_(std::move(f)) {}
  ~CallableController() override {
    nb::gil_scoped_acquire acquire;
    f_.reset();
  }
  void control(double t, std::span<const double> x, std::span<double> u) override {
    nb::gil_scoped_acquire acquire;
    std::vector<double> v;
    const nb::object result = f_(t, to_numpy(std::vector<double>(x.begin(), x.end()), {x.size()}));
    if (!nb::try_cast(result, v)) {
      // A scalar for a system with one input.
      double scalar = 0.0;
      if (u.size() == 1 && nb::try_cast(result, scalar)) v = {scalar};
    }
    if (v.size() != u.size())
      throw InputError("controller: pi(t, x) must return " + std::to_string(u.size()) +
                       " numbers (one per input), got " +
                       (v.empty() ? std::string("something else") : std::to_string(v.size())) +
                       " at t = " + time_text(t));
    std::copy(v.begin(), v.end(), u.begin());
  }

 private:
  nb::object f_;
};

// The run of sim::simulate with the rows kept in memory: (columns, values (rows x columns),
// arrays [(name, shape, column indices)], summary). The GIL is released while it runs.
nb::tuple simulate(sim::System& system, double t0, double dt, int steps, int output_every,
                   const std::string& on_failure, int max_subdivisions,
                   const nb::object& progress, double progress_interval,
                   sim::Feedback* feedback) {
  sim::RunOptions options;
  options.feedback = feedback;
  options.t0 = t0;
  options.dt = dt;
  options.steps = steps;
  options.output_every = output_every;
  if (on_failure != "stop" && on_failure != "subdivide")
    throw InputError("on_failure: expected \"stop\" or \"subdivide\", got \"" + on_failure + "\"");
  options.policy.on_failure =
      on_failure == "stop" ? sim::OnFailure::Stop : sim::OnFailure::Subdivide;
  options.policy.max_subdivisions = max_subdivisions;
  if (!(progress_interval > 0.0)) throw InputError("progress_interval: must be > 0 (s)");
  // Every interval (0.2 s without a callback) the driver takes the GIL (PythonProgress):
  // Ctrl-C ends the run at the next step with status "interrupted".
  PythonProgress control(progress);
  options.stop = &control.stop;
  options.progress_interval_s = control.has_callback() ? progress_interval : 0.2;
  options.progress = [&control](const sim::Progress& p) {
    control(p.steps_done, p.steps, p.t, p.wall_s);
  };
  sim::MemoryRecorder recorder;
  sim::RunSummary summary;
  auto* record = dynamic_cast<RecordedSystem*>(&system);
  if (record) record->pause(true);
  try {
    nb::gil_scoped_release release;
    summary = sim::simulate(system, options, recorder);
  } catch (...) {
    if (record) {
      record->pause(false);
      record->unreplayable("a run of it ended with an exception");
    }
    throw;
  }
  if (record) {
    record->pause(false);
    record->record_run(options, summary);
  }
  control.rethrow();
  const std::size_t columns = recorder.layout.columns.size();
  nb::list arrays;
  for (const sim::ArrayLayout& a : recorder.layout.arrays)
    arrays.append(nb::make_tuple(a.name, a.shape, a.columns));
  return nb::make_tuple(recorder.layout.columns,
                        to_numpy(std::move(recorder.values), {recorder.rows, columns}), arrays,
                        summary_dict(summary));
}

// Batch rollouts (run/batch.hpp): (columns, values (runs x rows x columns), arrays,
// summaries). The GIL is released while the threads run; Ctrl-C stops every run at its
// next step (checked by the calling thread every 0.2 s).
nb::tuple rollout(const std::vector<io::Scene>& scenes, std::size_t runs,
                  std::optional<nb::ndarray<const double, nb::ndim<2>, nb::c_contig>> states,
                  const std::vector<std::shared_ptr<sim::Signal>>& controls, int threads) {
  run::SceneBatch batch;
  batch.scenes = scenes;
  batch.runs = runs;
  if (states) {
    if (states->shape(0) != runs)
      throw InputError("initial_states: expected " + std::to_string(runs) + " rows (one per run), got " +
                       std::to_string(states->shape(0)));
    batch.initial_states.assign(states->data(), states->data() + states->size());
  }
  batch.controls.assign(controls.begin(), controls.end());
  if (threads < 0) throw InputError("threads: must be >= 0 (0: one per core)");
  PythonProgress watch{nb::none()};  // no callback: Ctrl-C only
  sim::BatchOutput out;
  {
    nb::gil_scoped_release release;
    std::exception_ptr error;
    std::atomic<bool> done{false};
    std::thread runner([&] {
      try {
        out = run::rollout_scenes(batch, threads, &watch.stop);
      } catch (...) {
        error = std::current_exception();
      }
      done = true;
    });
    // The calling thread watches for Ctrl-C while the pool works.
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      watch();
    }
    runner.join();
    if (error) std::rethrow_exception(error);
  }
  const std::size_t columns = out.layout.columns.size();
  nb::list arrays;
  for (const sim::ArrayLayout& a : out.layout.arrays)
    arrays.append(nb::make_tuple(a.name, a.shape, a.columns));
  nb::list summaries;
  for (const sim::RunSummary& s : out.summaries) summaries.append(summary_dict(s));
  return nb::make_tuple(out.layout.columns,
                        to_numpy(std::move(out.values), {runs, out.rows_per_run, columns}), arrays,
                        summaries);
}

// The controls a scene's system takes (controls: the signal make_system was given, if any):
// the count each family's setup defines.
int scene_controls(const io::Scene& scene, const std::shared_ptr<sim::Signal>& controls) {
  return std::visit(
      [&](const auto& setup) -> int {
        using T = std::decay_t<decltype(setup)>;
        if constexpr (std::is_same_v<T, io::TreeScene>) {
          return setup.model->num_inputs();
        } else if constexpr (std::is_same_v<T, io::MaximalScene>) {
          return static_cast<int>(setup.input_joints.size());
        } else if constexpr (std::is_same_v<T, io::NonholonomicScene>) {
          return sim::num_controls(setup);
        } else {
          if (controls) return controls->size();
          return setup.controls ? setup.controls->size() : 0;
        }
      },
      scene.system);
}

// What a system is: its family, controls and scene file, known from what made it
// (RecordedSystem's factory and arguments), and its sizes.
std::string system_repr(const sim::System& s) {
  std::string family = "unknown family", file;
  int controls = -1;  // unknown
  if (const auto* r = dynamic_cast<const RecordedSystem*>(&s)) {
    const nb::tuple& args = r->args();
    if (r->factory() == "make_system") {
      const auto& scene = nb::cast<const io::Scene&>(args[0]);
      family = scene.system_type;
      controls = scene_controls(scene, nb::cast<std::shared_ptr<sim::Signal>>(args[1]));
      file = ", from " + quoted(scene.file);
    } else if (r->factory() == "tree.make_system") {
      family = "tree " + nb::cast<std::string>(args[3]);
      controls = nb::cast<const tree::Model&>(args[0]).num_inputs();
    } else if (r->factory() == "maximal.make_system") {
      family = "maximal";
      controls = static_cast<int>(nb::len(nb::object(args[1])));
    }
  }
  return "System(" + family + ", " + count_text(s.state_size(), "state") + " (" +
         std::to_string(s.tangent_size()) + " in the tangent chart)" +
         (controls < 0 ? "" : ", " + count_text(controls, "control")) + file + ")";
}

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

void bind_sim(nb::module_ m) {
  nb::class_<io::Scene>(m, "Scene",
                        "A parsed scene file (docs/scene.md): timing, output, failure policy and "
                        "one family's system.")
      .def_ro("file", &io::Scene::file,
              "The path load_scene read it from, as given, or parse_scene's label.")
      .def(
          "__reduce__",
          [](const io::Scene& s) {
            if (s.text.empty())
              throw nb::type_error("this Scene was not parsed from text and cannot be pickled");
            return nb::make_tuple(nb::module_::import_("marsden._pickle").attr("parse_scene"),
                                  nb::make_tuple(s.text, s.file));
          },
          "Pickle and copy: the scene's text and file, parsed again (relative paths resolve "
          "from the file's folder).")
      .def_ro("system_type", &io::Scene::system_type,
              "The family, the system's \"type\": \"rigid_body\", \"helicopter\", \"boat\", "
              "\"generated\", \"car\", \"snakeboard\", \"sleigh\", \"generated_rdp\", "
              "\"generated_nonholonomic\", \"tree\" or \"maximal\".")
      .def_ro("source", &io::Scene::source,
              "Tree and maximal systems: the built-in model's name, \"frames\" (built inline) "
              "or \"urdf\"; empty for the other families.")
      .def_ro("dt", &io::Scene::dt, "Time step, s.")
      .def_ro("duration", &io::Scene::duration, "Simulated time, s.")
      .def_ro("steps", &io::Scene::steps,
              "Steps of dt: round(duration / dt) (dt <= duration, so at least 1).")
      .def_ro("output_every", &io::Scene::output_every,
              "Every output_every-th step is written (and the last one).")
      .def_prop_ro(
          "on_failure",
          [](const io::Scene& s) {
            return std::string(s.policy.on_failure == sim::OnFailure::Stop ? "stop" : "subdivide");
          },
          "The scene's failure policy, \"stop\" or \"subdivide\".")
      .def_prop_ro(
          "max_subdivisions", [](const io::Scene& s) { return s.policy.max_subdivisions; },
          "With on_failure \"subdivide\": a failed step is retried as 2^k substeps of "
          "dt / 2^k, k = 1..max_subdivisions.")
      .def("__repr__", [](const io::Scene& s) {
        return "Scene(" + s.system_type + (s.source.empty() ? "" : ": " + s.source) + ", " +
               count_text(s.steps, "step") + " of " + number_text(s.dt) + " s, from " +
               quoted(s.file) + ")";
      });

  m.def(
      "load_scene",
      [](const std::filesystem::path& path, bool allow_code) {
        return run::load_scene(path, python_allowance(allow_code));
      },
      nb::arg("path"), nb::arg("allow_code") = false,
      "Reads and validates a scene file; raises InputError naming the file and field. A "
      "file that names a Python module or a compiled library runs that code as it is read: "
      "refused (InputError naming the field) unless allow_code=True or the file lies in a "
      "folder of $MARSDEN_TRUSTED_FOLDERS (docs/reliability.md, \"Trust model\").");
  m.def(
      "parse_scene",
      [](std::string_view text, const std::string& label, bool allow_code) {
        return run::parse_scene(text, label, python_allowance(allow_code));
      },
      nb::arg("text"), nb::arg("label") = "<string>", nb::arg("allow_code") = false,
      "The same from JSON text; label names the source in messages. Code the text names "
      "runs only with allow_code=True.");
  m.def("_in_trusted_folder", &run::in_trusted_folder, nb::arg("path"),
        "Whether the file lies in a folder of $MARSDEN_TRUSTED_FOLDERS (run/code.hpp).");

  nb::class_<sim::StepStatus>(m, "StepStatus", "What one step did.")
      .def_ro("converged", &sim::StepStatus::converged,
              "Whether the step succeeded (also bool(status)); if not, see System.step.")
      .def_ro("iterations", &sim::StepStatus::iterations, "Newton iterations (0: explicit).")
      .def_ro("residual", &sim::StepStatus::residual, "The solver's final residual norm.")
      .def_ro("reason", &sim::StepStatus::reason,
              "Why the step failed when that is not a plain Newton non-convergence (e.g. "
              "\"the state became NaN or infinite\"); empty otherwise.")
      .def_prop_ro(
          "code", [](const sim::StepStatus& s) { return std::string(s.code); },
          "Why the step failed as a short word (\"not_converged\", \"non_finite\", "
          "\"angular_rate_limit\", ...); may be empty.")
      .def("__bool__", [](const sim::StepStatus& s) { return s.converged; })
      .def("__repr__", [](const sim::StepStatus& s) {
        return "StepStatus(converged=" + std::string(s.converged ? "True" : "False") +
               ", iterations=" + std::to_string(s.iterations) +
               ", residual=" + number_text(s.residual) + ")";
      });

  nb::class_<sim::System>(
      m, "System",
      "One family's model, workspace, state and inputs behind the step contract "
      "(docs/architecture.md). Build one with make_system(scene).")
      .def_prop_ro("columns", [](const sim::System& s) { return s.layout().columns; },
                   "Names of the output row's columns (time first).")
      .def("step", &sim::System::step, nb::arg("t_k"), nb::arg("dt"),
           nb::call_guard<nb::gil_scoped_release>(),
           "Advances from t_k (s) by dt (s). On failure (converged False) the state may be "
           "anywhere: call rollback().")
      .def("checkpoint", &sim::System::checkpoint, "Keeps the current state; see rollback().")
      .def("rollback", &sim::System::rollback, "Returns to the state of the last checkpoint().")
      .def("energy", &sim::System::energy, "Total energy of the current state, J.")
      .def(
          "momentum",
          [](const sim::System& s) {
            std::vector<double> mu(static_cast<std::size_t>(s.momentum_size()));
            s.momentum(mu);
            return to_numpy(std::move(mu), {mu.size()});
          },
          "A momentum the dynamics conserve (empty when no symmetry gives one).")
      .def("constraint_violation", &sim::System::constraint_violation,
           "Largest constraint violation of the current state (0 without constraints).")
      .def(
          "row",
          [](const sim::System& s, double t) {
            std::vector<double> out(s.layout().columns.size());
            s.row(t, out);
            const std::size_t n = out.size();
            return to_numpy(std::move(out), {n});
          },
          nb::arg("t"), "The output row of the current state at time t.")
      .def_prop_ro("state_size", &sim::System::state_size,
                   "Entries of the state vector (System.state_names).")
      .def_prop_ro("tangent_size", &sim::System::tangent_size,
                   "Entries of a state difference: state_size less one per quaternion.")
      .def_prop_ro("state_names", &sim::System::state_names,
                   "Names of the state's entries, in order (units in docs/architecture.md).")
      .def_prop_ro(
          "state_quaternions",
          [](const sim::System& s) {
            const std::span<const int> q = s.state_quaternions();
            return std::vector<int>(q.begin(), q.end());
          },
          "Where unit quaternions (w, x, y, z) start in the state; the rest are vectors.")
      .def_prop_ro(
          "state",
          [](const sim::System& s) {
            std::vector<double> x(std::size_t(s.state_size()));
            s.get_state(x);
            const std::size_t n = x.size();
            return to_numpy(std::move(x), {n});
          },
          nb::rv_policy::move, "A copy of the current state (state_names order), float64 array.")
      .def(
          "set_state",
          [](sim::System& s, const std::vector<double>& x) { s.set_state(x); },
          nb::arg("x"),
          "Makes x the current state and restarts the method from it as a scene's initial "
          "state would. InputError names the entry of a wrong size, a NaN, a zero quaternion "
          "or a configuration off the constraints.")
      .def(
          "state_difference",
          [](const sim::System& s, const std::vector<double>& x, const std::vector<double>& y) {
            std::vector<double> dx(std::size_t(s.tangent_size()));
            s.state_difference(x, y, dx);
            const std::size_t n = dx.size();
            return to_numpy(std::move(dx), {n});
          },
          nb::arg("x"), nb::arg("y"),
          "y (-) x in the state's tangent chart (tangent_size entries): y - x on vectors, "
          "log(q_x^-1 q_y) on quaternions.")
      .def(
          "state_integrate",
          [](const sim::System& s, const std::vector<double>& x, const std::vector<double>& dx) {
            std::vector<double> y(std::size_t(s.state_size()));
            s.state_integrate(x, dx, y);
            const std::size_t n = y.size();
            return to_numpy(std::move(y), {n});
          },
          nb::arg("x"), nb::arg("dx"),
          "x (+) dx, the inverse of state_difference: x + dx on vectors, q exp(dphi) on "
          "quaternions.")
      .def_prop_ro("has_step_derivatives", &sim::System::has_step_derivatives,
                   "True where marsden.control.linearize can take the step map's exact "
                   "derivatives (the tree midpoint VI, the maximal VI); otherwise it differences the step.")
      .def_prop_ro("has_residual", &sim::System::has_residual,
                   "Whether the method solves a discrete residual (implicit methods).")
      .def(
          "residual_point",
          [](const sim::System& s, double t_k, double dt) {
            const sim::ResidualPoint at = s.residual_point(t_k, dt);
            return nb::make_tuple(at.z, at.delta, at.u);
          },
          nb::arg("t_k"), nb::arg("dt"),
          "(z, delta, u) of the step from t_k: the Newton guess for the unknowns z, a zero "
          "perturbation delta of the state at t_k, and the step's inputs u.")
      .def(
          "residual",
          [](const sim::System& s, double t_k, double dt, const Eigen::VectorXd& z,
             const Eigen::VectorXd& delta, const Eigen::VectorXd& u, bool jacobians) {
            const sim::ResidualPoint guess = s.residual_point(t_k, dt);
            check_size(z, guess.z.size(), "z");
            check_size(delta, guess.delta.size(), "delta");
            check_size(u, guess.u.size(), "u");
            sim::ResidualBlocks blocks;
            s.residual(t_k, dt, sim::ResidualPoint{z, delta, u}, blocks, jacobians);
            nb::dict out;
            out["r"] = blocks.r;
            if (jacobians) {
              out["J_r_z"] = blocks.J_r_z;
              out["J_r_state"] = blocks.J_r_state;
              out["J_r_u"] = blocks.J_r_u;
            }
            return out;
          },
          nb::arg("t_k"), nb::arg("dt"), nb::arg("z"), nb::arg("delta"), nb::arg("u"),
          nb::arg("jacobians") = true,
          "The discrete residual R(z; x_k (+) delta, u) of the step from t_k and, with "
          "jacobians, its blocks J_r_z, J_r_state (at delta = 0) and J_r_u; a block the "
          "family does not provide has no columns.")
      .def(
          "__reduce__",
          [](const sim::System& s) {
            const auto* r = dynamic_cast<const RecordedSystem*>(&s);
            if (r == nullptr) throw nb::type_error("this System cannot be pickled");
            return r->reduce();
          },
          "Pickle and copy.deepcopy: the factory that made the system, its arguments and "
          "the calls since (from the last set_state), replayed on unpickling, so that the "
          "copy continues bit for bit.")
      .def("__repr__", &system_repr);
  m.def("_restore_system", &restore_system, nb::arg("factory"), nb::arg("args"),
        nb::arg("calls"));

  nb::class_<sim::Controller>(
      m, "Controller",
      "A controller written in C++ (marsden.control.Tracking): give it to Feedback as a "
      "callable would be given.");
  nb::class_<sim::Feedback>(
      m, "Feedback",
      "A controller u = pi(t, x) closing the loop on one system (docs/architecture.md, "
      "Feedback): build the system with controls=feedback and pass feedback= to simulate. "
      "pi is called once per step with the state at its start t_k and held over the step.")
      .def(
          "__init__",
          [](sim::Feedback* self, std::shared_ptr<sim::Controller> controller, int inputs,
             std::optional<std::vector<double>> lower, std::optional<std::vector<double>> upper) {
            new (self) sim::Feedback(std::move(controller), inputs,
                                     lower.value_or(std::vector<double>{}),
                                     upper.value_or(std::vector<double>{}));
          },
          nb::arg("controller"), nb::arg("inputs"), nb::arg("lower").none() = nb::none(),
          nb::arg("upper").none() = nb::none(),
          "controller: a Controller written in C++ (marsden.control.Tracking); inputs, "
          "lower and upper as below.")
      .def(
          "__init__",
          [](sim::Feedback* self, nb::callable controller, int inputs,
             std::optional<std::vector<double>> lower, std::optional<std::vector<double>> upper) {
            new (self) sim::Feedback(std::make_shared<CallableController>(std::move(controller)),
                                     inputs, lower.value_or(std::vector<double>{}),
                                     upper.value_or(std::vector<double>{}));
          },
          nb::arg("controller"), nb::arg("inputs"), nb::arg("lower").none() = nb::none(),
          nb::arg("upper").none() = nb::none(),
          "controller(t, x) -> u (inputs numbers, or a float for one input); lower and upper "
          "(inputs,) saturate each input (None: no limit). InputError for sizes that do "
          "not match, lower > upper, NaN limits or inputs < 1.")
      .def(
          "signal",
          [](const sim::Feedback& f) { return std::const_pointer_cast<sim::Signal>(f.signal()); },
          "The held input, to give a system as its controls.")
      .def_prop_ro(
          "value",
          [](const sim::Feedback& f) {
            const std::span<const double> u = f.value();
            return to_numpy(std::vector<double>(u.begin(), u.end()), {u.size()});
          },
          nb::rv_policy::move, "The input held now (after saturation).")
      .def("__repr__", [](const sim::Feedback& f) {
        const std::span<const double> u = f.value();
        return "Feedback(" + count_text(static_cast<long long>(u.size()), "input") + ", value " +
               list_text(u) + ")";
      });

  m.def(
      "make_system",
      [](const io::Scene& scene, std::shared_ptr<sim::Signal> controls, std::shared_ptr<sim::Signal> shape) {
        const nb::tuple args = nb::make_tuple(scene, controls, shape);
        if (!controls && !shape) return recorded(run::make_system(scene), "make_system", args);
        io::Scene copy = scene;
        std::visit(
            [&](auto& setup) {
              if (controls) setup.controls = controls;
              using T = std::decay_t<decltype(setup)>;
              if constexpr (std::is_same_v<T, io::VehicleScene> ||
                            std::is_same_v<T, io::PlanarVehicleScene>) {
                if (shape) setup.shape = shape;
              } else if (shape) {
                throw InputError("shape: only the holonomic vehicles take shape inputs");
              }
            },
            copy.system);
        return recorded(run::make_system(copy), "make_system", args);
      },
      nb::arg("scene"), nb::arg("controls").none() = nullptr, nb::arg("shape").none() = nullptr,
      "The scene's system, at its initial state. controls (and, for the holonomic vehicles, "
      "shape) replace the scene's signals, e.g. with a Python callable; their sizes must "
      "match the system (InputError otherwise).");
  m.def(
      "run_scene",
      [](const io::Scene& scene, const std::filesystem::path& out_dir) {
        sim::RunSummary s;
        {
          nb::gil_scoped_release release;
          s = run::run_scene(scene, out_dir);
        }
        return summary_dict(s);
      },
      nb::arg("scene"), nb::arg("out_dir"),
      "Runs the scene as `marsden simulate` does: trajectory.csv, trajectory.npz and "
      "summary.json in out_dir. Returns the summary.");
  // Baselines for bench/python_bench.py: the same work timed inside C++ (thread CPU s).
  m.def("_time_steps", [](sim::System& system, double t0, double dt, int n) {
    if (auto* r = dynamic_cast<RecordedSystem*>(&system)) r->unreplayable("a benchmark timed it");
    const double start = thread_seconds();
    for (int k = 0; k < n; ++k) system.step(t0 + k * dt, dt);
    return thread_seconds() - start;
  });
  m.def("_time_simulate", [](sim::System& system, double dt, int steps) {
    if (auto* r = dynamic_cast<RecordedSystem*>(&system)) r->unreplayable("a benchmark timed it");
    sim::RunOptions options;
    options.dt = dt;
    options.steps = steps;
    sim::MemoryRecorder recorder;
    const double start = thread_seconds();
    sim::simulate(system, options, recorder);
    return thread_seconds() - start;
  });
  m.def("_rollout", &rollout, nb::arg("scenes"), nb::arg("runs"), nb::arg("initial_states").none(),
        nb::arg("controls"), nb::arg("threads"));
  m.def("_initial_state_names", &run::initial_state_names, nb::arg("scene"));
  m.def("_simulate", &simulate, nb::arg("system"), nb::arg("t0"), nb::arg("dt"),
        nb::arg("steps"), nb::arg("output_every"), nb::arg("on_failure"),
        nb::arg("max_subdivisions"), nb::arg("progress").none(), nb::arg("progress_interval"),
        nb::arg("feedback").none());
}

}  // namespace marsden::python
