#include "marsden/run/run.hpp"

#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/run/view.hpp"

namespace marsden::run {

using io::MaximalScene;
using io::NhMethod;
using io::NonholonomicScene;
using io::PlanarVehicleScene;
using io::Scene;
using io::TreeScene;
using io::VehicleScene;
using record::FileRecorder;
using record::Json;
using Kind = sim::NonholonomicVehicle;

namespace {

// The summary.json fields every family shares, in order: dt, duration, steps requested and
// done, final time, rows written, Newton iterations, failures, subdivisions, energy.
void set_run_fields(Json& summary, const Scene& scene, const SceneRunSummary& sum) {
  Json subdivisions = Json::array();
  for (const sim::SubdivisionEvent& e : sum.subdivisions)
    subdivisions.push_back(Json::object().set("step", e.step).set("t", e.t).set("level", e.level)
                               .set("substeps", 1 << e.level));
  summary.set("dt", scene.dt)
      .set("duration", scene.duration)
      .set("steps_requested", sum.steps_requested)
      .set("steps_done", sum.steps_done)
      .set("final_time", sum.final_time)
      .set("rows_written", sum.rows_written)
      .set("newton_iterations", Json::object()
                                    .set("min", sum.newton_min)
                                    .set("mean", sum.newton_mean)
                                    .set("max", sum.newton_max)
                                    .set("total", sum.newton_total))
      .set("failures", sum.failures)
      .set("subdivisions", Json::object()
                               .set("count", sum.subdivisions.size())
                               .set("events", std::move(subdivisions)))
      .set("energy", Json::object()
                         .set("initial", sum.energy_initial)
                         .set("max_abs_drift", sum.energy_drift)
                         .set("relative_drift", sum.energy_drift_relative));
}

// Runs the system under the scene's timing, output and failure policy (sim::simulate),
// streaming OUT_DIR/trajectory.csv and .npz, writes OUT_DIR/model.json (and a tree's or a
// generated system's frames.npz) for the player (run/view.hpp) and OUT_DIR/summary.json: scene,
// system, status, message, integrator (with the failure policy added), the shared run
// fields, what extra adds, wall time and files.
SceneRunSummary run_system(const Scene& scene, sim::System& system, double t0,
                           const std::filesystem::path& out_dir, const RunControl& control,
                           Json integrator,
                           const std::function<void(Json&, const SceneRunSummary&)>& extra) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir.string() + ": cannot create output directory: " + ec.message());
  std::filesystem::remove(out_dir / "summary.json", ec);
  view_model(scene).write_file(out_dir / "model.json");

  sim::RunOptions run;
  run.t0 = t0;
  run.dt = scene.dt;
  run.steps = scene.steps;
  run.output_every = scene.output_every;
  run.policy = scene.policy;
  run.stop = control.stop;
  run.progress = control.progress;
  run.progress_interval_s = control.progress_interval_s;
  FileRecorder files(out_dir);
  const std::unique_ptr<sim::Recorder> recorder = view_recorder(scene, files, out_dir);
  SceneRunSummary sum;
  try {
    sum = sim::simulate(system, run, *recorder);
  } catch (const InputError& e) {
    throw InputError(scene.file + ": " + e.what());
  }

  integrator.set("on_failure", scene.policy.on_failure == sim::OnFailure::Stop ? "stop" : "subdivide")
      .set("max_subdivisions", scene.policy.max_subdivisions);
  Json summary = Json::object();
  summary.set("scene", scene.file)
      .set("system", scene.system_type)
      .set("status", sum.ok ? "ok" : sum.interrupted ? "interrupted" : "failed")
      .set("message", sum.message)
      .set("integrator", std::move(integrator));
  set_run_fields(summary, scene, sum);
  if (extra) extra(summary, sum);
  Json files_written = Json::array();
  files_written.push_back("trajectory.csv").push_back("trajectory.npz").push_back("model.json");
  if (writes_frames(scene)) files_written.push_back("frames.npz");
  summary.set("wall_time_s", sum.wall_time_s)
      .set("files", std::move(files_written));
  summary.write_file(out_dir / "summary.json");
  return sum;
}

// Each family's integrator options and its own summary fields.
SceneRunSummary run_nonholonomic(const Scene& scene, const std::filesystem::path& out_dir,
                                 const RunControl& control) {
  const NonholonomicScene& nh = std::get<NonholonomicScene>(scene.system);
  const std::unique_ptr<sim::System> system = make_system(scene);

  Json integrator = Json::object();
  integrator.set("method", sim::method_name(nh.method));
  if (nh.method == NhMethod::Rdp || nh.method == NhMethod::RdpExplicit)
    integrator.set("alpha", nh.alpha).set("map", nh.map == DiffMap::Cay ? "cay" : "exp");
  if (nh.method == NhMethod::Rdp)
    integrator.set("tangent", nh.tangent == TangentMap::TLN ? "tln" : "exact");
  integrator.set("tolerance", nh.newton.tolerance).set("max_iterations", nh.newton.max_iterations);
  return run_system(scene, *system, 0.0, out_dir, control, std::move(integrator),
                    [&](Json& summary, const SceneRunSummary& sum) {
                      if (nh.vehicle == Kind::Snakeboard)
                        summary.set("actuation", nh.prescribe_shape ? "velocity" : "torque");
                      // The last state's pose: columns theta, x, y of its row (a generated
                      // system: its coordinates q, columns 1..n).
                      std::vector<double> row(system->layout().columns.size());
                      system->row(sum.final_time, row);
                      summary.set("constraint_violation",
                                  Json::object().set("max", sum.constraint_violation_max));
                      if (nh.full_coordinates) {
                        Json q = Json::object();
                        for (std::size_t i = 0; i < nh.q0.size(); ++i)
                          q.set(system->layout().columns[i + 1], row[i + 1]);
                        summary.set("final_q", std::move(q));
                      } else {
                        summary.set("final_pose", Json::object()
                                                      .set("theta", row[1])
                                                      .set("x", row[2])
                                                      .set("y", row[3]));
                      }
                    });
}

SceneRunSummary run_tree(const Scene& scene, const std::filesystem::path& out_dir,
                         const RunControl& control) {
  const TreeScene& ts = std::get<TreeScene>(scene.system);
  const std::unique_ptr<sim::System> system = make_system(scene);
  const tree::Model& model = *ts.model;

  const auto lagrangian = [](tree::LagrangianAlgorithm a) {
    return a == tree::LagrangianAlgorithm::Spatial        ? "spatial"
           : a == tree::LagrangianAlgorithm::PaperCached ? "paper_cached"
                                                          : "paper_uncached";
  };
  Json integrator = Json::object();
  if (ts.method == sim::TreeMethod::Midpoint) {
    const auto& m = ts.midpoint;
    integrator.set("method", "midpoint")
        .set("alpha", m.alpha)
        .set("tolerance", m.newton.tolerance)
        .set("max_iterations", m.newton.max_iterations)
        .set("lagrangian", lagrangian(m.algorithm));
  } else if (ts.method == sim::TreeMethod::Galerkin) {
    const auto& g = ts.galerkin;
    integrator.set("method", "galerkin")
        .set("stages", g.stages)
        .set("quadrature", tree::galerkin_quadrature_name(g.quadrature))
        .set("tolerance", g.newton.tolerance)
        .set("max_iterations", g.newton.max_iterations)
        .set("lagrangian", lagrangian(g.algorithm));
  } else {
    integrator.set("method", "rk4");
  }
  return run_system(scene, *system, 0.0, out_dir, control, std::move(integrator),
                    [&](Json& summary, const SceneRunSummary& sum) {
                      Json coordinates = Json::array(), prescribed = Json::array();
                      for (const auto& c : model.coords())
                        (c.prescribed ? prescribed : coordinates).push_back(c.name);
                      summary.set("model", scene.source)
                          .set("dynamic_coordinates", std::move(coordinates))
                          .set("kinematic_coordinates", std::move(prescribed))
                          .set("constraint_rows", model.num_constraint_rows())
                          .set("constraint_residual",
                               Json::object().set("max", sum.constraint_violation_max));
                    });
}

SceneRunSummary run_maximal(const Scene& scene, const std::filesystem::path& out_dir,
                            const RunControl& control) {
  const MaximalScene& ms = std::get<MaximalScene>(scene.system);
  const std::unique_ptr<sim::System> system = make_system(scene);
  const maximal::Model& model = *ms.model;
  const maximal::StepOptions& options = ms.step;
  Json integrator = Json::object();
  integrator.set("tolerance", options.newton.tolerance)
      .set("max_iterations", options.newton.max_iterations)
      .set("line_search", options.newton.line_search)
      .set("solver", options.solver == maximal::LinearSolver::SparseLDU ? "sparse" : "dense");
  if (!model.contact_points().empty()) {
    integrator.set("complementarity_tolerance", options.complementarity_tolerance)
        .set("contact_compliance", options.contact_compliance)
        .set("friction_angle_tolerance", options.friction_angle_tolerance);
  }
  return run_system(scene, *system, 0.0, out_dir, control, std::move(integrator),
                    [&](Json& summary, const SceneRunSummary& sum) {
                      Json body_names = Json::array();
                      for (const maximal::Body& b : model.bodies()) body_names.push_back(b.name);
                      int rows_total = 0;
                      for (const maximal::Joint& j : model.joints())
                        rows_total += maximal::constraint_rows(j.type);
                      Json inputs = Json::array();
                      for (const int j : ms.input_joints)
                        inputs.push_back(model.joints()[std::size_t(j)].name);
                      if (!model.contact_points().empty()) {
                        Json left_out = Json::array();
                        for (const std::string& l : scene.contact_left_out) left_out.push_back(l);
                        summary.set("contact", Json::object()
                                                   .set("shapes", int(model.contacts().shapes.size()))
                                                   .set("surfaces", int(model.contacts().surfaces.size()))
                                                   .set("candidates", int(model.contact_points().size()))
                                                   .set("restitution", model.has_restitution())
                                                   .set("left_out", std::move(left_out)));
                      }
                      summary.set("mechanism", scene.source)
                          .set("bodies", std::move(body_names))
                          .set("inputs", std::move(inputs))
                          .set("joints", model.num_joints())
                          .set("constraint_rows", rows_total)
                          .set("constraint_violation",
                               Json::object().set("max", sum.constraint_violation_max));
                      if (sum.failed_step >= 0)
                        summary.set("failed_step",
                                    Json::object()
                                        .set("step", sum.failed_step)
                                        .set("t", sum.failed_t)
                                        .set("reason", sum.failed_code));
                    });
}

// The holonomic vehicles on SE(3) and SE(2).
template <class Setup>
SceneRunSummary run_holonomic(const Scene& scene, const Setup& v,
                              const std::filesystem::path& out_dir, const RunControl& control) {
  const std::unique_ptr<sim::System> system = make_system(scene);

  const auto& opt = v.options;
  Json integrator = Json::object();
  integrator.set("method", method_name(v.method))
      .set("map", opt.map == DiffMap::Cay ? "cay" : "exp")
      .set("tangent", opt.tangent == TangentMap::TLN ? "tln" : "exact")
      .set("tolerance", opt.newton.tolerance)
      .set("max_iterations", opt.newton.max_iterations);
  return run_system(scene, *system, v.initial_state.t, out_dir, control, std::move(integrator),
                            [](Json& summary, const SceneRunSummary& sum) {
                              if (sum.momentum_initial.empty()) return;
                              summary.set("spatial_momentum",
                                          Json::object()
                                              .set("initial", Json::array(sum.momentum_initial))
                                              .set("max_abs_drift", sum.momentum_drift)
                                              .set("relative_drift", sum.momentum_drift_relative));
                            });
}

}  // namespace

std::unique_ptr<sim::System> make_system(const io::Scene& scene) {
  try {
    return std::visit(
        [](const auto& setup) -> std::unique_ptr<sim::System> {
          using T = std::decay_t<decltype(setup)>;
          if constexpr (std::is_same_v<T, VehicleScene> || std::is_same_v<T, PlanarVehicleScene>)
            return sim::make_vehicle_system(setup);
          if constexpr (std::is_same_v<T, NonholonomicScene>)
            return sim::make_nonholonomic_system(setup);
          if constexpr (std::is_same_v<T, TreeScene>) return sim::make_tree_system(setup);
          if constexpr (std::is_same_v<T, MaximalScene>) return sim::make_maximal_system(setup);
        },
        scene.system);
  } catch (const InputError& e) {
    throw InputError(scene.file + ": " + e.what());
  } catch (const SolverError& e) {
    throw SolverError(scene.file + ": the initial state could not be set up: " + e.what());
  }
}

SceneRunSummary run_scene(const io::Scene& scene, const std::filesystem::path& out_dir,
                          const RunControl& control) {
  if (std::holds_alternative<NonholonomicScene>(scene.system))
    return run_nonholonomic(scene, out_dir, control);
  if (std::holds_alternative<TreeScene>(scene.system)) return run_tree(scene, out_dir, control);
  if (std::holds_alternative<MaximalScene>(scene.system))
    return run_maximal(scene, out_dir, control);
  if (const auto* planar = std::get_if<PlanarVehicleScene>(&scene.system))
    return run_holonomic(scene, *planar, out_dir, control);
  return run_holonomic(scene, std::get<VehicleScene>(scene.system), out_dir, control);
}

}  // namespace marsden::run
