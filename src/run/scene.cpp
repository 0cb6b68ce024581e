#include "marsden/run/run.hpp"

#include <string>
#include <system_error>

#include "family.hpp"
#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/run/view.hpp"

namespace marsden::run {

using io::Scene;
using record::FileRecorder;
using record::Json;

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
// fields, the family's own fields, wall time and files.
SceneRunSummary run_system(const Scene& scene, const Family& family,
                           const std::filesystem::path& out_dir, const RunControl& control) {
  const std::unique_ptr<sim::System> system = make_system(scene);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir.string() + ": cannot create output directory: " + ec.message());
  std::filesystem::remove(out_dir / "summary.json", ec);
  view_model(scene).write_file(out_dir / "model.json");

  sim::RunOptions run;
  run.t0 = family.t0();
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
    sum = sim::simulate(*system, run, *recorder);
  } catch (const InputError& e) {
    throw InputError(scene.file + ": " + e.what());
  }

  Json integrator = family.integrator();
  integrator.set("on_failure", scene.policy.on_failure == sim::OnFailure::Stop ? "stop" : "subdivide")
      .set("max_subdivisions", scene.policy.max_subdivisions);
  Json summary = Json::object();
  summary.set("scene", scene.file)
      .set("system", scene.system_type)
      .set("status", sum.ok ? "ok" : sum.interrupted ? "interrupted" : "failed")
      .set("message", sum.message)
      .set("integrator", std::move(integrator));
  set_run_fields(summary, scene, sum);
  family.summary(summary, *system, sum);
  Json files_written = Json::array();
  files_written.push_back("trajectory.csv").push_back("trajectory.npz").push_back("model.json");
  if (family.writes_frames()) files_written.push_back("frames.npz");
  summary.set("wall_time_s", sum.wall_time_s)
      .set("files", std::move(files_written));
  summary.write_file(out_dir / "summary.json");
  return sum;
}

}  // namespace

std::unique_ptr<sim::System> make_system(const io::Scene& scene) {
  try {
    return family(scene)->make_system();
  } catch (const InputError& e) {
    throw InputError(scene.file + ": " + e.what());
  } catch (const SolverError& e) {
    throw SolverError(scene.file + ": the initial state could not be set up: " + e.what());
  }
}

SceneRunSummary run_scene(const io::Scene& scene, const std::filesystem::path& out_dir,
                          const RunControl& control) {
  return run_system(scene, *family(scene), out_dir, control);
}

}  // namespace marsden::run
