// Scene files for mechanisms in maximal coordinates (maximal-coordinates paper): a built-in
// mechanism of maximal/setup.hpp or a URDF file, run with the variational integrator of
// maximal/integrator.hpp. The schema is in docs/scene.md; scene.cpp dispatches here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/io/writers.hpp"
#include "marsden/maximal/setup.hpp"
#include "scene_detail.hpp"

namespace marsden::io::detail {

namespace {

using maximal::BodyState;
using maximal::JointCoords;
using maximal::Mechanism;

void number_if(const JsonNode& obj, std::string_view key, double& field) {
  if (const auto n = obj.find(key)) field = n->number();
}

Mechanism builtin_mechanism(const JsonNode& sys, const std::string& name) {
  // Without "parameters" every default applies (sys has none of their keys).
  const std::optional<JsonNode> given = sys.find("parameters");
  const JsonNode params = given ? *given : sys;
  if (name == "pendulum_chain" || name == "closed_chain") {
    // A closed chain's shape is fixed by the loop: it takes no initial angle.
    if (given && name == "pendulum_chain")
      params.expect_keys({"n", "joint", "link_length", "link_mass", "link_radius",
                          "initial_angle"});
    if (given && name == "closed_chain")
      params.expect_keys({"n", "joint", "link_length", "link_mass", "link_radius"});
    maximal::ChainOptions o;
    if (const auto j = params.find("joint"))
      o.joint = j->one_of({"revolute", "spherical"}) == "revolute" ? maximal::JointType::Revolute
                                                                   : maximal::JointType::Spherical;
    set_if(params, "link_length", o.link_length, 0.0, true);
    set_if(params, "link_mass", o.link_mass, 0.0, true);
    set_if(params, "link_radius", o.link_radius, 0.0, true);
    number_if(params, "initial_angle", o.initial_angle);
    // n has no default.
    const int n = sys.at("parameters").at("n").integer(1, 100000);
    return with_field(params, [&] {
      return name == "pendulum_chain" ? maximal::pendulum_chain(n, o) : maximal::closed_chain(n, o);
    });
  }
  if (name == "four_bar_chain") {
    if (given) params.expect_keys({"segments", "tilt"});
    const int k = params.find("segments") ? params.at("segments").integer(1, 10000) : 1;
    double tilt = 0.3;
    number_if(params, "tilt", tilt);
    return with_field(params, [&] { return maximal::four_bar_chain(k, tilt); });
  }
  if (given) params.expect_keys({"hip_half_angle"});
  double half = 0.5;
  number_if(params, "hip_half_angle", half);
  return with_field(params, [&] { return maximal::minitaur_leg(half); });
}

// The URDF's joint coordinates from "initial_state": {"q": {joint: value}, "qd": {...}}
// (rad or m, rad/s or m/s; others zero), turned into poses and discrete velocities.
void urdf_initial_state(const JsonNode& s, double dt, Mechanism& mech) {
  s.expect_keys({"q", "qd"});
  const maximal::Model& model = mech.model;
  const auto nj = static_cast<std::size_t>(model.num_joints());
  std::vector<JointCoords> q(nj), qd(nj);
  for (std::size_t j = 0; j < nj; ++j) {
    const int dofs = maximal::joint_dofs(model.joints()[j].type);
    q[j] = JointCoords::Zero(dofs);
    qd[j] = JointCoords::Zero(dofs);
  }
  auto read = [&](const char* key, std::vector<JointCoords>& out) {
    const auto n = s.find(key);
    if (!n) return;
    if (!n->is_object()) n->fail("expected an object {joint name: value}");
    for (const auto& item : n->raw().items()) {
      const JsonNode v = n->at(item.key());
      const auto it = std::find_if(model.joints().begin(), model.joints().end(),
                                   [&](const maximal::Joint& j) { return j.name == item.key(); });
      if (it == model.joints().end()) v.fail("no joint named '" + item.key() + "'");
      const auto j = static_cast<std::size_t>(it - model.joints().begin());
      if (out[j].size() != 1) v.fail("joint '" + item.key() + "' is fixed: it has no coordinate");
      out[j](0) = v.number();
    }
  };
  read("q", q);
  read("qd", qd);
  mech.state = with_field(s, [&] {
    return maximal::state_from_joint_coordinates(model, mech.state, q, qd, dt);
  });
}

// A stable name of the failure for summary.json ("message" has the explanation).
const char* failure_code(maximal::StepFailure f) {
  switch (f) {
    case maximal::StepFailure::None: return "none";
    case maximal::StepFailure::NotConverged: return "not_converged";
    case maximal::StepFailure::AngularRateLimit: return "angular_rate_limit";
    case maximal::StepFailure::NonFinite: return "non_finite";
  }
  return "unknown";
}

}  // namespace

void parse_maximal(const JsonNode& root, Scene& scene) {
  auto ms = std::make_shared<MaximalScene>();
  const JsonNode sys = root.at("system");
  if (int(sys.has("mechanism")) + int(sys.has("urdf")) != 1)
    sys.fail("expected exactly one of \"mechanism\", \"urdf\"");
  // The discrete velocities of an initial state given by joint rates depend on dt.
  const double dt = root.at("dt").number_greater(0.0);
  std::optional<Mechanism> mech;
  if (const auto m = sys.find("mechanism")) {
    sys.expect_keys({"type", "mechanism", "parameters", "gravity"});
    ms->source = m->one_of({"pendulum_chain", "closed_chain", "four_bar_chain", "minitaur_leg"});
    mech.emplace(builtin_mechanism(sys, ms->source));
    if (const auto s = root.find("initial_state"))
      s->fail("built-in mechanisms start from their parameters (e.g. initial_angle); "
              "initial joint coordinates apply to URDF systems only");
  } else {
    sys.expect_keys({"type", "urdf", "gravity"});
    ms->source = "urdf";
    const JsonNode file = sys.at("urdf");
    const std::filesystem::path path =
        std::filesystem::path(scene.file).parent_path() / file.string();
    // read_urdf's errors name the URDF file and element; say which scene field led there.
    mech.emplace(with_field(file, [&] {
      return maximal_from_urdf(read_urdf(path), Vec3(0.0, 0.0, -9.81));
    }));
    if (const auto s = root.find("initial_state")) urdf_initial_state(*s, dt, *mech);
  }
  // Gravity is the model's: rebuild it around the same bodies and joints.
  std::shared_ptr<const maximal::Model> model;
  if (const auto g = sys.find("gravity")) {
    const Vec3 gravity = g->vec3();
    model = with_field(*g, [&] {
      return std::make_shared<const maximal::Model>(mech->model.bodies(), mech->model.joints(),
                                                    gravity);
    });
  } else {
    model = std::make_shared<const maximal::Model>(mech->model);
  }
  ms->model = std::move(model);
  ms->state0 = std::move(mech->state);

  if (const auto in = root.find("integrator")) {
    in->expect_keys({"tolerance", "max_iterations", "line_search", "solver", "on_failure",
                     "max_subdivisions"});
    NewtonOptions& newton = ms->step.newton;
    if (const auto n = in->find("tolerance")) newton.tolerance = n->number_greater(0.0);
    if (const auto n = in->find("max_iterations")) newton.max_iterations = n->integer(1, 1000);
    if (const auto n = in->find("line_search")) newton.line_search = n->boolean();
    SceneIntegrator policy;
    parse_failure_policy(*in, policy);
    ms->step.max_subdivisions =
        policy.on_failure == OnFailure::Subdivide ? policy.max_subdivisions : 0;
    if (const auto n = in->find("solver"))
      ms->step.solver = n->one_of({"sparse", "dense"}) == "sparse" ? maximal::LinearSolver::SparseLDU
                                                                   : maximal::LinearSolver::DenseLU;
  }
  for (const char* key : {"controls", "shape", "kinematic"})
    if (const auto n = root.find(key)) n->fail("maximal-coordinate systems take no inputs");
  scene.maximal = std::move(ms);
}

SceneRunSummary run_maximal_scene(const Scene& scene, const std::filesystem::path& out_dir) {
  const auto wall_start = std::chrono::steady_clock::now();
  const MaximalScene& ms = *scene.maximal;
  if (!ms.model) throw InputError(scene.file + ": scene has no system");
  const maximal::Model& model = *ms.model;
  const int nb = model.num_bodies();
  if (!(scene.dt > 0.0) || !std::isfinite(scene.dt) || scene.steps < 1 || scene.output_every < 1)
    throw InputError(scene.file + ": scene needs dt > 0, steps >= 1 and output every >= 1");
  if (static_cast<int>(ms.state0.size()) != nb)
    throw InputError(scene.file + ": the initial state does not match the mechanism");
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir.string() + ": cannot create output directory: " + ec.message());

  std::vector<std::string> columns = {"t"};
  for (const maximal::Body& b : model.bodies())
    for (const char* c : {"_x", "_y", "_z", "_qw", "_qx", "_qy", "_qz"}) columns.push_back(b.name + c);
  columns.push_back("energy");
  columns.push_back("constraint_violation");
  CsvWriter csv(out_dir / "trajectory.csv", columns);

  maximal::StepOptions options = ms.step;
  options.dt = scene.dt;
  maximal::Data data(model, ms.state0);

  struct {
    std::vector<double> t, position, quaternion, energy, violation;
  } traj;
  // q and -q are the same rotation: keep each body's sign continuous along the trajectory.
  std::vector<Vec4> last_q(static_cast<std::size_t>(nb), Vec4::Zero());
  std::vector<double> row(columns.size());
  // Appends one output row; false if anything in it is not finite (nothing is written).
  auto record = [&](double energy, double violation) {
    std::size_t c = 0;
    row[c++] = data.time;
    for (int b = 0; b < nb; ++b) {
      const BodyState& s = data.state[static_cast<std::size_t>(b)];
      Vec4 q = s.q.q;
      if (last_q[static_cast<std::size_t>(b)].dot(q) < 0.0) q = -q;
      for (int i = 0; i < 3; ++i) row[c++] = s.x[i];
      for (int i = 0; i < 4; ++i) row[c++] = q[i];
    }
    row[c++] = energy;
    row[c++] = violation;
    for (double x : row)
      if (!std::isfinite(x)) return false;
    csv.write_row(row);
    traj.t.push_back(data.time);
    for (int b = 0; b < nb; ++b) {
      const auto first = row.begin() + 1 + 7 * b;
      traj.position.insert(traj.position.end(), first, first + 3);
      traj.quaternion.insert(traj.quaternion.end(), first + 3, first + 7);
      last_q[static_cast<std::size_t>(b)] = Eigen::Map<const Vec4>(&*(first + 3));
    }
    traj.energy.push_back(energy);
    traj.violation.push_back(violation);
    return true;
  };

  SceneRunSummary sum;
  sum.steps_requested = scene.steps;
  sum.has_constraint = true;
  sum.ok = true;
  auto fail = [&](std::string msg) {
    sum.ok = false;
    sum.message = std::move(msg);
  };
  sum.energy_initial = maximal::energy(model, data.state);
  double energy_now = sum.energy_initial;
  double violation_now = maximal::max_constraint_violation(model, data.state);
  sum.constraint_violation_max = violation_now;
  if (!record(energy_now, violation_now)) fail("the initial state is not finite");

  // The step that failed, for summary.json.
  struct {
    int step = -1;
    double t = 0.0;
    std::string reason;
  } failed;
  int last_recorded = 0;
  for (int k = 0; sum.ok && k < scene.steps; ++k) {
    const double t_k = data.time;
    const maximal::StepStatus st = maximal::step(model, data, options);
    sum.newton_min = k == 0 ? st.newton.iterations : std::min(sum.newton_min, st.newton.iterations);
    sum.newton_max = std::max(sum.newton_max, st.newton.iterations);
    sum.newton_total += st.newton.iterations;
    if (st.ok() && st.level > 0) {
      sum.failures += st.level;  // the attempts at k = 0 .. level - 1
      sum.subdivisions.push_back({k, t_k, st.level});
    }
    if (!st.ok()) {
      sum.failures += 1 + st.level;  // every attempt, k = 0 .. level
      failed = {k, t_k, failure_code(st.failure)};
      std::string why = maximal::describe(st.failure);
      if (st.failure == maximal::StepFailure::NotConverged)
        why += " (residual " + format_number(st.newton.residual_norm) + " after " +
               std::to_string(st.newton.iterations) + " iterations)";
      fail(step_failure_message(k, t_k, st.newton, why, options.max_subdivisions));
      break;
    }
    data.time = (k + 1) * scene.dt;  // no drift from summing steps
    energy_now = maximal::energy(model, data.state);
    violation_now = maximal::max_constraint_violation(model, data.state);
    if (!std::isfinite(energy_now) || !std::isfinite(violation_now)) {
      fail("step " + std::to_string(k) + " (t = " + time_text(t_k) + "): the state is not finite");
      break;
    }
    sum.energy_drift = std::max(sum.energy_drift, std::abs(energy_now - sum.energy_initial));
    sum.constraint_violation_max = std::max(sum.constraint_violation_max, violation_now);
    sum.steps_done = k + 1;
    if ((k + 1) % scene.output_every == 0 || k + 1 == scene.steps) {
      if (!record(energy_now, violation_now)) {
        fail("step " + std::to_string(k) + " (t = " + time_text(t_k) + "): the state is not finite");
        break;
      }
      last_recorded = k + 1;
    }
  }
  // After a failure, the last good state is part of what was computed: keep it.
  if (sum.steps_done > last_recorded) record(energy_now, violation_now);

  sum.rows_written = csv.rows_written();
  const int attempts = sum.steps_done + sum.failures;
  sum.newton_mean = attempts > 0 ? double(sum.newton_total) / attempts : 0.0;
  sum.energy_drift_relative = sum.energy_initial != 0.0
                                  ? sum.energy_drift / std::abs(sum.energy_initial)
                                  : std::numeric_limits<double>::quiet_NaN();

  const std::size_t rows = traj.t.size(), bodies = static_cast<std::size_t>(nb);
  write_npz(out_dir / "trajectory.npz",
            {npy_vector("t", traj.t), NpyArray{"position", {rows, bodies, 3}, traj.position},
             NpyArray{"quaternion", {rows, bodies, 4}, traj.quaternion},
             npy_vector("energy", traj.energy),
             npy_vector("constraint_violation", traj.violation)});

  sum.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  Json body_names = Json::array();
  for (const maximal::Body& b : model.bodies()) body_names.push_back(b.name);
  int rows_total = 0;
  for (const maximal::Joint& j : model.joints()) rows_total += maximal::constraint_rows(j.type);
  Json summary = Json::object();
  summary.set("scene", scene.file)
      .set("system", scene.system_type)
      .set("mechanism", ms.source)
      .set("bodies", std::move(body_names))
      .set("joints", model.num_joints())
      .set("constraint_rows", rows_total)
      .set("status", sum.ok ? "ok" : "failed")
      .set("message", sum.message)
      .set("integrator",
           Json::object()
               .set("tolerance", options.newton.tolerance)
               .set("max_iterations", options.newton.max_iterations)
               .set("line_search", options.newton.line_search)
               .set("on_failure", options.max_subdivisions > 0 ? "subdivide" : "stop")
               .set("max_subdivisions", options.max_subdivisions)
               .set("solver", options.solver == maximal::LinearSolver::SparseLDU ? "sparse" : "dense"));
  set_run_fields(summary, scene, sum, scene.dt, data.time);
  summary.set("constraint_violation", Json::object().set("max", sum.constraint_violation_max));
  if (failed.step >= 0)
    summary.set("failed_step",
                Json::object().set("step", failed.step).set("t", failed.t).set("reason", failed.reason));
  summary.set("wall_time_s", sum.wall_time_s)
      .set("files", Json::array().push_back("trajectory.csv").push_back("trajectory.npz"));
  summary.write_file(out_dir / "summary.json");
  return sum;
}

}  // namespace marsden::io::detail
