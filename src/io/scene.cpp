#include "marsden/io/scene.hpp"

#include <chrono>
#include <climits>
#include <cmath>
#include <limits>

#include <Eigen/Geometry>

#include "json_access.hpp"
#include "scene_detail.hpp"
#include "marsden/error.hpp"
#include "marsden/io/writers.hpp"
#include "marsden/lie/quaternion.hpp"
#include "marsden/vehicle/models.hpp"

namespace marsden::io {

using detail::format_number;
using detail::time_text;
using detail::JsonNode;
using detail::parse_boat;
using detail::parse_helicopter;
using detail::parse_orientation;

namespace {

// ---------------------------------------------------------------------------------------
// Parsing

using detail::set_if;
using detail::with_field;

void set_vec3_if(const JsonNode& obj, std::string_view key, Vec3& field) {
  if (const auto n = obj.find(key)) field = n->vec3();
}

void set_positive_vec3_if(const JsonNode& obj, std::string_view key, Vec3& field) {
  if (const auto n = obj.find(key)) {
    for (std::size_t i = 0; i < 3; ++i) (*n)[i].number_greater(0.0);
    field = n->vec3();
  }
}

std::shared_ptr<const HolonomicModel<SE3>> parse_rigid_body(const JsonNode& sys) {
  sys.expect_keys({"type", "inertia"});
  const JsonNode in = sys.at("inertia");
  in.expect_keys({"J", "mass", "matrix"});
  Mat6 inertia;
  if (const auto m = in.find("matrix")) {
    if (in.has("J") || in.has("mass"))
      in.fail("give either \"matrix\" or \"J\" and \"mass\", not both");
    inertia = m->matrix(6, 6);
  } else {
    if (!in.has("J") && !in.has("mass")) in.fail("expected \"J\" and \"mass\", or \"matrix\"");
    const JsonNode J = in.at("J");
    J.numbers(3);
    for (std::size_t i = 0; i < 3; ++i) J[i].number_greater(0.0);
    const double mass = in.at("mass").number_greater(0.0);
    inertia = rigid_body_inertia(J.vec3(), mass);
  }
  return with_field(in, [&] { return std::make_shared<const FreeBody<SE3>>(inertia); });
}

}  // namespace

namespace detail {

std::shared_ptr<const HolonomicModel<SE3>> parse_helicopter(const JsonNode& sys) {
  sys.expect_keys({"type", "mass", "J_principal", "d_t", "d_r", "gravity"});
  HelicopterParams p;
  set_if(sys, "mass", p.mass, 0.0, true);
  set_positive_vec3_if(sys, "J_principal", p.J_principal);
  set_if(sys, "d_t", p.d_t, 0.0, false);
  set_if(sys, "d_r", p.d_r, 0.0, false);
  set_if(sys, "gravity", p.gravity, 0.0, false);
  return with_field(sys, [&] { return std::make_shared<const Helicopter>(p); });
}

std::shared_ptr<const HolonomicModel<SE3>> parse_boat(const JsonNode& sys) {
  sys.expect_keys({"type", "mass", "J_principal", "hull_size", "water_density", "damping_E",
                   "pressure_P", "current", "wind_force", "wind_point", "thruster_right",
                   "thruster_left", "patches_per_side", "wet_smoothing", "gravity"});
  BoatParams p;
  set_if(sys, "mass", p.mass, 0.0, true);
  set_positive_vec3_if(sys, "J_principal", p.J_principal);
  set_positive_vec3_if(sys, "hull_size", p.hull_size);
  set_if(sys, "water_density", p.water_density, 0.0, true);
  if (const auto e = sys.find("damping_E")) {
    if (e->is_array() && e->array_size() > 0 && !e->raw()[0].is_array()) {
      e->numbers(3);
      Vec3 diag;
      for (std::size_t i = 0; i < 3; ++i) diag[static_cast<Eigen::Index>(i)] = (*e)[i].number_at_least(0.0);
      p.damping_E = diag.asDiagonal();
    } else {
      p.damping_E = e->matrix(3, 3);
    }
  }
  set_if(sys, "pressure_P", p.pressure_P, 0.0, false);
  set_vec3_if(sys, "current", p.current);
  set_vec3_if(sys, "wind_force", p.wind_force);
  set_vec3_if(sys, "wind_point", p.wind_point);
  set_vec3_if(sys, "thruster_right", p.thruster_right);
  set_vec3_if(sys, "thruster_left", p.thruster_left);
  if (const auto n = sys.find("patches_per_side")) p.patches_per_side = n->integer(1, 64);
  set_if(sys, "wet_smoothing", p.wet_smoothing, 0.0, false);
  set_if(sys, "gravity", p.gravity, 0.0, false);
  return with_field(sys, [&] { return std::make_shared<const Boat>(p); });
}

Mat3 parse_orientation(const JsonNode& o) {
  o.expect_keys({"quaternion", "rpy", "rotation_vector"});
  const int given = int(o.has("quaternion")) + int(o.has("rpy")) + int(o.has("rotation_vector"));
  if (given != 1) o.fail("expected exactly one of \"quaternion\", \"rpy\", \"rotation_vector\"");
  if (const auto q = o.find("quaternion")) {
    const std::vector<double> v = q->numbers(4);
    const Eigen::Quaterniond quat(v[0], v[1], v[2], v[3]);
    const double norm = quat.norm();
    // Accept a few digits of rounding in hand-written values; anything else is a mistake.
    if (std::abs(norm - 1.0) > 1e-3)
      q->fail("must be a unit quaternion [w, x, y, z] (got norm " + format_number(norm) + ")");
    return quat.normalized().toRotationMatrix();
  }
  if (const auto r = o.find("rpy")) {
    const Vec3 a = r->vec3();
    // Roll about x, then pitch about y, then yaw about z (fixed axes): R = Rz Ry Rx.
    return (Eigen::AngleAxisd(a[2], Vec3::UnitZ()) * Eigen::AngleAxisd(a[1], Vec3::UnitY()) *
            Eigen::AngleAxisd(a[0], Vec3::UnitX()))
        .toRotationMatrix();
  }
  const Vec3 w = o.at("rotation_vector").vec3();
  const double angle = w.norm();
  if (angle == 0.0) return Mat3::Identity();
  return Eigen::AngleAxisd(angle, w / angle).toRotationMatrix();
}

}  // namespace detail

namespace {

VehicleState<SE3> parse_initial_state(const JsonNode& s) {
  s.expect_keys({"position", "orientation", "angular_velocity", "linear_velocity"});
  VehicleState<SE3> state;
  if (const auto p = s.find("position")) state.g.x = p->vec3();
  if (const auto o = s.find("orientation")) state.g.R = parse_orientation(*o);
  if (const auto w = s.find("angular_velocity")) state.xi.head<3>() = w->vec3();
  if (const auto v = s.find("linear_velocity")) state.xi.tail<3>() = v->vec3();
  return state;
}

InputVec to_input(const std::vector<double>& v) {
  InputVec out(static_cast<Eigen::Index>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) out[static_cast<Eigen::Index>(i)] = v[i];
  return out;
}

// A vector of `expected` numbers, with a message that says what the components are.
std::vector<double> input_vector(const JsonNode& n, int expected, const std::string& what) {
  if (!n.is_array())
    n.fail("expected an array of " + std::to_string(expected) + " numbers (" + what + "), got " +
           (n.raw().is_object() ? "object" : n.raw().type_name()));
  if (n.array_size() != static_cast<std::size_t>(expected))
    n.fail("expected " + std::to_string(expected) + " numbers (" + what + "), got " +
           std::to_string(n.array_size()));
  return n.numbers();
}

}  // namespace

namespace detail {

std::shared_ptr<const Signal> parse_signal(const JsonNode& sig, int expected,
                                           const std::string& what) {
  const std::string type = sig.at("type").one_of({"constant", "table", "sinusoid"});
  if (type == "constant") {
    sig.expect_keys({"type", "value"});
    return std::make_shared<const ConstantSignal>(
        to_input(input_vector(sig.at("value"), expected, what)));
  }
  if (type == "table") {
    sig.expect_keys({"type", "times", "values"});
    const JsonNode times_node = sig.at("times");
    const std::vector<double> times = times_node.numbers();
    if (times.empty()) times_node.fail("must not be empty");
    for (std::size_t i = 1; i < times.size(); ++i)
      if (!(times[i] > times[i - 1]))
        times_node[i].fail("times must be strictly increasing (got " + format_number(times[i]) +
                           " after " + format_number(times[i - 1]) + ")");
    const JsonNode values_node = sig.at("values");
    if (values_node.array_size() != times.size())
      values_node.fail("expected " + std::to_string(times.size()) +
                       " rows, one per entry of \"times\", got " +
                       std::to_string(values_node.array_size()));
    std::vector<InputVec> values;
    for (std::size_t i = 0; i < times.size(); ++i)
      values.push_back(to_input(input_vector(values_node[i], expected, what)));
    return with_field(sig, [&] {
      return std::make_shared<const TableSignal>(times, std::move(values));
    });
  }
  sig.expect_keys({"type", "offset", "amplitude", "frequency_hz", "phase"});
  const InputVec offset = to_input(input_vector(sig.at("offset"), expected, what));
  const InputVec amplitude = to_input(input_vector(sig.at("amplitude"), expected, what));
  const InputVec frequency = to_input(input_vector(sig.at("frequency_hz"), expected, what));
  InputVec phase = InputVec::Zero(expected);
  if (const auto p = sig.find("phase")) phase = to_input(input_vector(*p, expected, what));
  return with_field(sig, [&] {
    return std::make_shared<const SinusoidSignal>(offset, amplitude, frequency, phase);
  });
}

// Controls or shape: optional (zero when absent); null when the model takes none.
std::shared_ptr<const Signal> parse_input(const JsonNode& root, std::string_view key,
                                          int expected, const std::string& what) {
  const auto node = root.find(key);
  if (expected == 0) {
    if (node) node->fail("the system takes no " + what + "; remove this field");
    return nullptr;
  }
  if (!node) return std::make_shared<const ConstantSignal>(InputVec::Zero(expected));
  return parse_signal(*node, expected, what);
}

void set_run_fields(Json& summary, const Scene& scene, const SceneRunSummary& sum, double dt,
                    double final_time) {
  Json subdivisions = Json::array();
  for (const SubdivisionEvent& e : sum.subdivisions)
    subdivisions.push_back(Json::object().set("step", e.step).set("t", e.t).set("level", e.level)
                               .set("substeps", 1 << e.level));
  summary.set("dt", dt)
      .set("duration", scene.duration)
      .set("steps_requested", sum.steps_requested)
      .set("steps_done", sum.steps_done)
      .set("final_time", final_time)
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

void parse_failure_policy(const JsonNode& in, SceneIntegrator& s) {
  if (const auto n = in.find("on_failure"))
    s.on_failure = n->one_of({"stop", "subdivide"}) == "stop" ? OnFailure::Stop : OnFailure::Subdivide;
  if (const auto n = in.find("max_subdivisions")) s.max_subdivisions = n->integer(0, 20);
}

}  // namespace detail

namespace {

using detail::parse_input;

SceneIntegrator parse_integrator(const JsonNode& in) {
  in.expect_keys({"method", "map", "tangent", "tolerance", "max_iterations", "line_search",
                  "on_failure", "max_subdivisions"});
  SceneIntegrator s;
  if (const auto n = in.find("method"))
    s.method = parse_method(n->one_of({"vi", "rk2", "rk2_implicit", "rk4", "lie_newmark"}));
  if (const auto n = in.find("map"))
    s.options.map = n->one_of({"cay", "exp"}) == "cay" ? DiffMap::Cay : DiffMap::Exp;
  if (const auto n = in.find("tangent"))
    s.options.tangent = n->one_of({"tln", "exact"}) == "tln" ? TangentMap::TLN : TangentMap::Exact;
  if (const auto n = in.find("tolerance")) s.options.newton.tolerance = n->number_greater(0.0);
  if (const auto n = in.find("max_iterations")) s.options.newton.max_iterations = n->integer(1, 1000);
  if (const auto n = in.find("line_search")) s.options.newton.line_search = n->boolean();
  detail::parse_failure_policy(in, s);
  return s;
}

void parse_timing_and_output(const JsonNode& root, Scene& scene) {
  const JsonNode dt = root.at("dt");
  scene.dt = dt.number_greater(0.0);
  scene.duration = root.at("duration").number_greater(0.0);
  if (scene.dt > scene.duration)
    dt.fail("must be <= duration (got dt = " + format_number(scene.dt) +
            ", duration = " + format_number(scene.duration) + ")");
  const double steps = std::round(scene.duration / scene.dt);
  if (steps > static_cast<double>(INT_MAX))
    dt.fail("duration / dt = " + format_number(steps) + " steps is too many");
  scene.steps = static_cast<int>(steps);

  if (const auto out = root.find("output")) {
    out->expect_keys({"every"});
    if (const auto e = out->find("every")) scene.output_every = e->integer(1, INT_MAX);
  }
}

Scene build_scene(const detail::JsonDocument& doc) {
  const JsonNode root(doc);
  root.expect_keys({"description", "system", "integrator", "dt", "duration", "initial_state",
                    "controls", "shape", "kinematic", "output"});
  if (const auto d = root.find("description")) d->string();

  Scene scene;
  scene.file = doc.file;
  const JsonNode sys = root.at("system");
  scene.system_type = sys.at("type").one_of(
      {"rigid_body", "helicopter", "boat", "car", "snakeboard", "sleigh", "tree", "maximal"});
  if (scene.system_type == "tree") {
    detail::parse_tree(root, scene);
    parse_timing_and_output(root, scene);
    return scene;
  }
  if (scene.system_type == "maximal") {
    detail::parse_maximal(root, scene);
    parse_timing_and_output(root, scene);
    return scene;
  }
  if (const auto k = root.find("kinematic")) k->fail("applies to tree systems only");
  if (scene.system_type == "car" || scene.system_type == "snakeboard" ||
      scene.system_type == "sleigh") {
    detail::parse_nonholonomic(root, scene);
    parse_timing_and_output(root, scene);
    return scene;
  }
  std::string controls_what, shape_what;
  if (scene.system_type == "rigid_body") {
    scene.model = parse_rigid_body(sys);
  } else if (scene.system_type == "helicopter") {
    scene.model = parse_helicopter(sys);
    controls_what = "helicopter controls: collective u_c [N], tail rotor u_psi [N]";
    shape_what = "helicopter rotor tilt: pitch, roll [rad]";
  } else {
    scene.model = parse_boat(sys);
    controls_what = "boat thrusters: right u_r [N], left u_l [N]";
  }
  if (controls_what.empty()) controls_what = "controls";
  if (shape_what.empty()) shape_what = "shape";

  if (const auto in = root.find("integrator")) scene.integrator = parse_integrator(*in);

  parse_timing_and_output(root, scene);
  if (const auto s = root.find("initial_state")) scene.initial_state = parse_initial_state(*s);
  scene.controls = parse_input(root, "controls", scene.model->num_controls(), controls_what);
  scene.shape = parse_input(root, "shape", scene.model->num_shape(), shape_what);

  return scene;
}

// ---------------------------------------------------------------------------------------
// Running

bool finite_state(const VehicleState<SE3>& s) {
  return std::isfinite(s.t) && s.g.R.allFinite() && s.g.x.allFinite() && s.xi.allFinite();
}

// Row buffers for the .npz, filled as the CSV rows are written.
struct Trajectory {
  std::vector<double> t, position, quaternion, angular_velocity, linear_velocity, energy,
      controls, shape;
  Vec4 last_q = Vec4::Zero();
};

}  // namespace

namespace detail {

std::string time_text(double t) { return format_number(t) + " s"; }

std::string step_failure_message(int step, double t, const NewtonStatus& st,
                                 const std::string& error, int max_level) {
  std::string msg = "step " + std::to_string(step) + " (t = " + time_text(t) + ") ";
  msg += error.empty() ? "did not converge: residual " + format_number(st.residual_norm) +
                             " after " + std::to_string(st.iterations) + " Newton iterations"
                       : "failed: " + error;
  if (max_level > 0)
    msg += " (also with " + std::to_string(1 << max_level) + " substeps of dt/" +
           std::to_string(1 << max_level) + ")";
  return msg;
}

}  // namespace detail

Scene parse_scene(std::string_view json_text, const std::string& file_label) {
  return build_scene(detail::parse_json_text(json_text, file_label));
}

Scene load_scene(const std::filesystem::path& path) {
  return build_scene(detail::read_json_file(path));
}

SceneRunSummary run_scene(const Scene& scene, const std::filesystem::path& out_dir) {
  if (scene.nonholonomic) return detail::run_nonholonomic_scene(scene, out_dir);
  if (scene.tree) return detail::run_tree_scene(scene, out_dir);
  if (scene.maximal) return detail::run_maximal_scene(scene, out_dir);
  const auto wall_start = std::chrono::steady_clock::now();
  // A Scene built by hand rather than by load_scene gets the same basic checks.
  if (!scene.model) throw InputError(scene.file + ": scene has no system");
  if (!(scene.dt > 0.0) || !std::isfinite(scene.dt) || scene.steps < 1 || scene.output_every < 1)
    throw InputError(scene.file + ": scene needs dt > 0, steps >= 1 and output every >= 1");
  if ((scene.controls ? scene.controls->size() : 0) != scene.model->num_controls() ||
      (scene.shape ? scene.shape->size() : 0) != scene.model->num_shape())
    throw InputError(scene.file + ": controls or shape signal size does not match the system");
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir.string() + ": cannot create output directory: " + ec.message());

  const HolonomicModel<SE3>& model = *scene.model;
  const int nu = scene.controls ? scene.controls->size() : 0;
  const int ns = scene.shape ? scene.shape->size() : 0;
  const bool free_body = scene.system_type == "rigid_body";

  std::vector<std::string> columns = {"t",  "x",  "y",  "z",  "qw", "qx", "qy", "qz",
                                      "wx", "wy", "wz", "vx", "vy", "vz", "energy"};
  for (int i = 0; i < nu; ++i) columns.push_back(std::string("u") + std::to_string(i));
  for (int i = 0; i < ns; ++i) columns.push_back(std::string("gamma") + std::to_string(i));
  CsvWriter csv(out_dir / "trajectory.csv", columns);

  Trajectory traj;
  std::vector<double> row(columns.size());
  InputVec u, gamma;
  // Appends one output row; false if anything in it is not finite (nothing is written).
  auto record = [&](const VehicleState<SE3>& s) {
    if (!finite_state(s)) return false;
    Vec4 q = Quat::from_rotation(s.g.R).q;
    // q and -q are the same rotation: keep the sign continuous along the trajectory.
    if (traj.last_q.dot(q) < 0.0) q = -q;
    const double energy = vehicle_energy<SE3>(model, s.g, s.xi);
    if (scene.controls) scene.controls->eval(s.t, u);
    if (scene.shape) scene.shape->eval(s.t, gamma);
    std::size_t c = 0;
    row[c++] = s.t;
    for (int i = 0; i < 3; ++i) row[c++] = s.g.x[i];
    for (int i = 0; i < 4; ++i) row[c++] = q[i];
    for (int i = 0; i < 6; ++i) row[c++] = s.xi[i];
    row[c++] = energy;
    for (int i = 0; i < nu; ++i) row[c++] = u[i];
    for (int i = 0; i < ns; ++i) row[c++] = gamma[i];
    for (double x : row)
      if (!std::isfinite(x)) return false;
    csv.write_row(row);
    traj.last_q = q;
    traj.t.push_back(s.t);
    traj.position.insert(traj.position.end(), row.begin() + 1, row.begin() + 4);
    traj.quaternion.insert(traj.quaternion.end(), row.begin() + 4, row.begin() + 8);
    traj.angular_velocity.insert(traj.angular_velocity.end(), row.begin() + 8, row.begin() + 11);
    traj.linear_velocity.insert(traj.linear_velocity.end(), row.begin() + 11, row.begin() + 14);
    traj.energy.push_back(energy);
    traj.controls.insert(traj.controls.end(), row.begin() + 15, row.begin() + 15 + nu);
    traj.shape.insert(traj.shape.end(), row.begin() + 15 + nu, row.end());
    return true;
  };

  SceneRunSummary sum;
  sum.steps_requested = scene.steps;
  const double dt = scene.dt;
  const double t0 = scene.initial_state.t;
  const Signal* u_sig = scene.controls.get();
  const Signal* gamma_sig = scene.shape.get();
  auto stepper = make_stepper<SE3>(scene.integrator.method, scene.model, scene.integrator.options);

  VehicleState<SE3> s = scene.initial_state;
  sum.energy_initial = vehicle_energy<SE3>(model, s.g, s.xi);
  const Vec6 mu0 = free_body ? spatial_momentum<SE3>(s.g, model.inertia() * s.xi) : Vec6::Zero();
  sum.has_momentum = free_body;

  int newton_steps = 0;
  int last_recorded = 0;
  auto fail = [&](std::string msg) {
    sum.ok = false;
    sum.message = std::move(msg);
  };

  sum.ok = true;
  if (!record(s)) fail("the initial state is not finite");
  // The stepper is (re)started lazily, inside a step attempt, so that a start that fails
  // (the VI solves for xi_-1 when it starts) is handled like a failed step.
  bool restart = true;

  for (int n = 0; sum.ok && n < scene.steps; ++n) {
    const double t_n = s.t;
    int iterations = 0;
    NewtonStatus st;
    std::string error;
    // One attempt of `count` steps of size h from s; false on any failure.
    auto attempt = [&](int count, double h, bool fresh) {
      return detail::run_substeps(
          count, st, iterations, error,
          [&](int j) {
            if (j == 0 && fresh) stepper->reset(s, h);
            return stepper->step(gamma_sig, u_sig);
          },
          [&] { return finite_state(stepper->state()); });
    };

    const int level = detail::step_with_failure_policy(
        scene.integrator, dt,
        [&](int count, double h, bool first) { return attempt(count, h, !first || restart); },
        sum.failures);
    restart = false;
    if (level < 0) {
      fail(detail::step_failure_message(n, t_n, st, error,
                                        scene.integrator.on_failure == OnFailure::Subdivide
                                            ? scene.integrator.max_subdivisions
                                            : 0));
      break;
    }

    s = stepper->state();
    if (level > 0) {
      sum.subdivisions.push_back({n, t_n, level});
      s.t = t0 + (n + 1) * dt;  // no drift from summing substeps
      restart = true;
    }

    const double energy = vehicle_energy<SE3>(model, s.g, s.xi);
    if (!std::isfinite(energy)) {
      fail("step " + std::to_string(n) + " (t = " + time_text(t_n) + "): the energy is not finite");
      break;
    }
    sum.energy_drift = std::max(sum.energy_drift, std::abs(energy - sum.energy_initial));
    if (free_body) {
      const Vec6 mu = spatial_momentum<SE3>(s.g, model.inertia() * s.xi);
      sum.momentum_drift = std::max(sum.momentum_drift, (mu - mu0).lpNorm<Eigen::Infinity>());
    }
    sum.newton_min = newton_steps == 0 ? iterations : std::min(sum.newton_min, iterations);
    sum.newton_max = std::max(sum.newton_max, iterations);
    sum.newton_total += iterations;
    ++newton_steps;
    sum.steps_done = n + 1;

    if ((n + 1) % scene.output_every == 0 || n + 1 == scene.steps) {
      if (!record(s)) {
        fail("step " + std::to_string(n) + " (t = " + time_text(t_n) + "): the state is not finite");
        break;
      }
      last_recorded = n + 1;
    }
  }
  // After a failure, the last good state is part of what was computed: keep it.
  if (sum.steps_done > last_recorded) record(s);

  sum.rows_written = csv.rows_written();
  sum.newton_mean = newton_steps > 0 ? double(sum.newton_total) / newton_steps : 0.0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  sum.energy_drift_relative =
      sum.energy_initial != 0.0 ? sum.energy_drift / std::abs(sum.energy_initial) : nan;
  const double mu0_norm = mu0.lpNorm<Eigen::Infinity>();
  sum.momentum_drift_relative = mu0_norm != 0.0 ? sum.momentum_drift / mu0_norm : nan;

  const std::size_t rows = traj.t.size();
  auto arr = [rows](std::string name, const std::vector<double>& data, std::size_t cols) {
    return NpyArray{std::move(name), {rows, cols}, data};
  };
  write_npz(out_dir / "trajectory.npz",
            {npy_vector("t", traj.t), arr("position", traj.position, 3),
             arr("quaternion", traj.quaternion, 4),
             arr("angular_velocity", traj.angular_velocity, 3),
             arr("linear_velocity", traj.linear_velocity, 3), npy_vector("energy", traj.energy),
             arr("controls", traj.controls, std::size_t(nu)),
             arr("shape", traj.shape, std::size_t(ns))});

  sum.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const auto& opt = scene.integrator.options;
  Json summary = Json::object();
  summary.set("scene", scene.file)
      .set("system", scene.system_type)
      .set("status", sum.ok ? "ok" : "failed")
      .set("message", sum.message)
      .set("integrator", Json::object()
                             .set("method", method_name(scene.integrator.method))
                             .set("map", opt.map == DiffMap::Cay ? "cay" : "exp")
                             .set("tangent", opt.tangent == TangentMap::TLN ? "tln" : "exact")
                             .set("tolerance", opt.newton.tolerance)
                             .set("max_iterations", opt.newton.max_iterations)
                             .set("on_failure", scene.integrator.on_failure == OnFailure::Stop
                                                    ? "stop"
                                                    : "subdivide")
                             .set("max_subdivisions", scene.integrator.max_subdivisions));
  detail::set_run_fields(summary, scene, sum, dt, s.t);
  if (free_body)
    summary.set("spatial_momentum", Json::object()
                                        .set("initial", Json::array(mu0))
                                        .set("max_abs_drift", sum.momentum_drift)
                                        .set("relative_drift", sum.momentum_drift_relative));
  summary.set("wall_time_s", sum.wall_time_s)
      .set("files", Json::array().push_back("trajectory.csv").push_back("trajectory.npz"));
  summary.write_file(out_dir / "summary.json");
  return sum;
}

}  // namespace marsden::io
