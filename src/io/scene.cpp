#include "marsden/io/scene.hpp"

#include <chrono>
#include <functional>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <cmath>
#include <limits>

#include <Eigen/Geometry>

#include "json_access.hpp"
#include "problem_detail.hpp"
#include "scene_detail.hpp"
#include "marsden/error.hpp"
#include "marsden/io/mjcf.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/support/text.hpp"
#include "marsden/lie/quaternion.hpp"
#include "marsden/sim/vehicle.hpp"
#include "marsden/vehicle/models.hpp"

namespace marsden::io {

namespace {

using vehicle::Boat;
using vehicle::BoatParams;
using vehicle::FreeBody;
using vehicle::GeneratedPlanarVehicle;
using vehicle::GeneratedVehicle;
using vehicle::Helicopter;
using vehicle::HelicopterParams;
using vehicle::HolonomicModel;
using vehicle::parse_method;
using vehicle::rigid_body_inertia;
using vehicle::TangentMap;
using vehicle::VehicleState;

}  // namespace

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

// The MJCF suites that scripts/install_model_suites.py unpacks (gymnasium/, dm_control/):
// $MARSDEN_MODEL_SUITES_DIR, else share/marsden-model-suites of the active virtual
// environment.
std::filesystem::path model_suites_dir(const JsonNode& file) {
  if (const char* dir = std::getenv("MARSDEN_MODEL_SUITES_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  std::error_code ec;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    const std::filesystem::path suites =
        std::filesystem::path(venv) / "share" / "marsden-model-suites";
    if (std::filesystem::is_directory(suites, ec)) return suites;
  }
  file.fail("names a model of the MJCF suites, which are not installed in the active Python "
            "environment: run scripts/install-deps.sh --suites and source .venv/bin/activate, "
            "or set MARSDEN_MODEL_SUITES_DIR to their folder");
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

std::filesystem::path path_relative_to(const JsonNode& node, const std::string& file) {
  std::filesystem::path path = node.string();
  if (path.is_relative()) path = std::filesystem::path(file).parent_path() / path;
  return path;
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
      q->fail("must be a unit quaternion [w, x, y, z] (got norm " + number_text(norm) + ")");
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

namespace {

constexpr std::string_view kRobotData = "example-robot-data:";
constexpr std::string_view kModelSuites = "model-suites:";

// The robots folder of the example-robot-data package: $MARSDEN_ROBOTS_DIR, else the one
// installed in the active virtual environment ($VIRTUAL_ENV, as .venv/bin/activate sets).
std::filesystem::path robot_data_dir(const JsonNode& file) {
  if (const char* dir = std::getenv("MARSDEN_ROBOTS_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(venv) / "lib", ec)) {
      const std::filesystem::path robots =
          entry.path() / "site-packages" / "cmeel.prefix" / "share" / "example-robot-data" / "robots";
      if (entry.path().filename().string().rfind("python3", 0) == 0 &&
          std::filesystem::is_directory(robots, ec))
        return robots;
    }
  }
  file.fail("names a robot of example-robot-data, which is not installed in the active Python "
            "environment: run scripts/install-deps.sh --robots and source .venv/bin/activate, "
            "or set MARSDEN_ROBOTS_DIR to its robots folder");
}

}  // namespace

SceneUrdf read_scene_urdf(const JsonNode& sys, const std::string& scene_file) {
  SceneUrdf out;
  out.mjcf = sys.has("mjcf");
  const JsonNode file = sys.at(out.key());
  const std::string name = file.string();
  const std::string_view prefix = out.mjcf ? kModelSuites : kRobotData;
  if (name.rfind(prefix, 0) == 0)
    out.file = (out.mjcf ? model_suites_dir(file) : robot_data_dir(file)) / name.substr(prefix.size());
  else
    out.file = std::filesystem::path(scene_file).parent_path() / name;
  if (const auto b = sys.find("base")) {
    if (out.mjcf) b->fail("an MJCF file says its base itself (a <freejoint> on its root); remove this field");
    out.floating_base = b->one_of({"fixed", "floating"}) == "floating";
  }
  const bool weld = sys.has("massless_joints") &&
                    sys.at("massless_joints").one_of({"error", "weld"}) == "weld";
  // The readers' errors name the file and element; say which scene field led there.
  out.urdf = with_field(file, [&] { return out.mjcf ? read_mjcf(out.file) : read_urdf(out.file); });
  if (out.mjcf) out.floating_base = out.urdf.floating_root;
  if (weld) out.urdf = weld_joints_moving_no_mass(std::move(out.urdf));
  return out;
}

Vec3 SceneUrdf::gravity(const JsonNode& sys) const {
  if (const auto g = sys.find("gravity")) return g->vec3();
  return mjcf ? urdf.gravity : Vec3(0.0, 0.0, -9.81);
}

VehicleState<SE3> parse_vehicle_initial_state(const JsonNode& s) {
  s.expect_keys({"position", "orientation", "angular_velocity", "linear_velocity"});
  VehicleState<SE3> state;
  if (const auto p = s.find("position")) state.g.x = p->vec3();
  if (const auto o = s.find("orientation")) state.g.R = parse_orientation(*o);
  if (const auto w = s.find("angular_velocity")) state.xi.head<3>() = w->vec3();
  if (const auto v = s.find("linear_velocity")) state.xi.tail<3>() = v->vec3();
  return state;
}

VehicleState<SE2> parse_planar_initial_state(const JsonNode& s) {
  s.expect_keys({"theta", "position", "angular_velocity", "linear_velocity"});
  VehicleState<SE2> state;
  double theta = 0.0;
  if (const auto n = s.find("theta")) theta = n->number();
  Vec2 x = Vec2::Zero();
  if (const auto n = s.find("position")) {
    const std::vector<double> v = n->numbers(2);
    x = Vec2(v[0], v[1]);
  }
  state.g = SE2::from_angle(theta, x);
  if (const auto n = s.find("angular_velocity")) state.xi[0] = n->number();
  if (const auto n = s.find("linear_velocity")) {
    const std::vector<double> v = n->numbers(2);
    state.xi.tail<2>() = Vec2(v[0], v[1]);
  }
  return state;
}

}  // namespace detail

namespace {

Eigen::VectorXd to_input(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
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

namespace {

std::shared_ptr<const sim::Signal> parse_signal_values(const JsonNode& sig, int expected,
                                                       const std::string& what) {
  const std::string type = sig.at("type").one_of({"constant", "table", "sinusoid"});
  if (type == "constant") {
    sig.expect_keys({"type", "value", "hold"});
    return std::make_shared<const sim::ConstantSignal>(
        to_input(input_vector(sig.at("value"), expected, what)));
  }
  if (type == "table") {
    sig.expect_keys({"type", "times", "values", "hold"});
    const JsonNode times_node = sig.at("times");
    const std::vector<double> times = times_node.numbers();
    if (times.empty()) times_node.fail("must not be empty");
    for (std::size_t i = 1; i < times.size(); ++i)
      if (!(times[i] > times[i - 1]))
        times_node[i].fail("times must be strictly increasing (got " + number_text(times[i]) +
                           " after " + number_text(times[i - 1]) + ")");
    const JsonNode values_node = sig.at("values");
    if (values_node.array_size() != times.size())
      values_node.fail("expected " + std::to_string(times.size()) +
                       " rows, one per entry of \"times\", got " +
                       std::to_string(values_node.array_size()));
    std::vector<Eigen::VectorXd> values;
    for (std::size_t i = 0; i < times.size(); ++i)
      values.push_back(to_input(input_vector(values_node[i], expected, what)));
    return with_field(sig, [&] {
      return std::make_shared<const sim::TableSignal>(times, values);
    });
  }
  sig.expect_keys({"type", "offset", "amplitude", "frequency_hz", "phase", "until", "hold"});
  const Eigen::VectorXd offset = to_input(input_vector(sig.at("offset"), expected, what));
  const Eigen::VectorXd amplitude = to_input(input_vector(sig.at("amplitude"), expected, what));
  const Eigen::VectorXd frequency = to_input(input_vector(sig.at("frequency_hz"), expected, what));
  Eigen::VectorXd phase = Eigen::VectorXd::Zero(expected);
  if (const auto p = sig.find("phase")) phase = to_input(input_vector(*p, expected, what));
  const double until = sig.has("until") ? sig.at("until").number()
                                        : std::numeric_limits<double>::infinity();
  return with_field(sig, [&] {
    return std::make_shared<const sim::SinusoidSignal>(offset, amplitude, frequency, phase, until);
  });
}

}  // namespace

// A signal, sampled where the integrator needs it ("hold": "sampled", the default) or held
// at each step's start value ("hold": "zero_order").
std::shared_ptr<const sim::Signal> parse_signal(const JsonNode& sig, int expected,
                                                const std::string& what) {
  std::shared_ptr<const sim::Signal> s = parse_signal_values(sig, expected, what);
  if (const auto h = sig.find("hold"); h && h->one_of({"sampled", "zero_order"}) == "zero_order")
    return std::make_shared<const sim::HeldSignal>(std::move(s));
  return s;
}

// Controls or shape: optional (zero when absent); null when the model takes none.
std::shared_ptr<const sim::Signal> parse_input(const JsonNode& root, std::string_view key,
                                               int expected, const std::string& what) {
  const auto node = root.find(key);
  if (expected == 0) {
    if (node) node->fail("the system takes no " + what + "; remove this field");
    return nullptr;
  }
  if (!node) return std::make_shared<const sim::ConstantSignal>(Eigen::VectorXd::Zero(expected));
  return parse_signal(*node, expected, what);
}

void parse_failure_policy(const JsonNode& in, sim::FailurePolicy& s) {
  if (const auto n = in.find("on_failure"))
    s.on_failure = n->one_of({"stop", "subdivide"}) == "stop" ? OnFailure::Stop : OnFailure::Subdivide;
  if (const auto n = in.find("max_subdivisions")) s.max_subdivisions = n->integer(0, 20);
}

}  // namespace detail

namespace {

using detail::parse_input;

template <class Setup>
void parse_integrator(const JsonNode& in, Setup& s, sim::FailurePolicy& policy) {
  in.expect_keys({"method", "map", "tangent", "tolerance", "max_iterations", "line_search",
                  "on_failure", "max_subdivisions"});
  if (const auto n = in.find("method"))
    s.method = parse_method(n->one_of({"vi", "rk2", "rk2_implicit", "rk4", "lie_newmark"}));
  if (const auto n = in.find("map"))
    s.options.map = n->one_of({"cay", "exp"}) == "cay" ? DiffMap::Cay : DiffMap::Exp;
  if (const auto n = in.find("tangent"))
    s.options.tangent = n->one_of({"tln", "exact"}) == "tln" ? TangentMap::TLN : TangentMap::Exact;
  if (const auto n = in.find("tolerance")) s.options.newton.tolerance = n->number_greater(0.0);
  if (const auto n = in.find("max_iterations")) s.options.newton.max_iterations = n->integer(1, 1000);
  if (const auto n = in.find("line_search")) s.options.newton.line_search = n->boolean();
  detail::parse_failure_policy(in, policy);
}

// "limits": the budgets a scene may change. Whole numbers, positive and at most 2^53 (a
// double holds them exactly; no machine has 9 PB of memory).
void parse_limits(const JsonNode& root, Scene& scene) {
  const auto limits = root.find("limits");
  if (!limits) return;
  limits->expect_keys({"memory_bytes", "output_rows"});
  const auto whole = [](const JsonNode& n) {
    const double x = n.number_greater(0.0);
    if (x != std::floor(x) || x > 9007199254740992.0)
      n.fail("expected a whole number in [1, 2^53] (got " + number_text(x) + ")");
    return x;
  };
  if (const auto m = limits->find("memory_bytes"))
    scene.memory_bytes = static_cast<std::size_t>(whole(*m));
  if (const auto r = limits->find("output_rows"))
    scene.output_rows = static_cast<long long>(whole(*r));
}

void parse_timing_and_output(const JsonNode& root, Scene& scene) {
  const JsonNode dt = root.at("dt");
  scene.dt = dt.number_greater(0.0);
  scene.duration = root.at("duration").number_greater(0.0);
  if (scene.dt > scene.duration)
    dt.fail("must be <= duration (got dt = " + number_text(scene.dt) +
            ", duration = " + number_text(scene.duration) + ")");
  const double steps = std::round(scene.duration / scene.dt);
  if (steps > static_cast<double>(INT_MAX))
    dt.fail("duration / dt = " + number_text(steps) + " steps is too many");
  scene.steps = static_cast<int>(steps);

  if (const auto out = root.find("output")) {
    out->expect_keys({"every"});
    if (const auto e = out->find("every")) scene.output_every = e->integer(1, INT_MAX);
  }
  // Output before work: a run may write at most scene.output_rows rows (docs/reliability.md).
  const long long rows = scene.steps / scene.output_every + 2;
  if (rows > scene.output_rows) {
    const long long every =
        scene.output_rows > 2 ? scene.steps / (scene.output_rows - 2) + 1 : scene.steps + 1;
    const std::string msg = "the run would write " + std::to_string(rows) + " rows (" +
                            std::to_string(scene.steps) + " steps of dt, every " +
                            std::to_string(scene.output_every) + "), more than the limit of " +
                            std::to_string(scene.output_rows) + " (limits.output_rows); set " +
                            "output.every to at least " + std::to_string(every) +
                            ", shorten duration or raise limits.output_rows";
    if (const auto out = root.find("output")) out->fail(msg);
    root.at("duration").fail(msg);
  }
}

SceneView read_view(const JsonNode& root) {
  SceneView out;
  const auto view = root.find("view");
  if (!view) return out;
  view->expect_keys({"obstacles", "dimension", "goal"});
  if (const auto d = view->find("dimension")) out.dimension = d->integer(2, 3);
  out.obstacles = detail::parse_obstacles(*view, out.dimension);
  if (const auto goal = view->find("goal")) {
    goal->expect_keys({"kind", "position", "orientation"});
    out.goal_kind = goal->at("kind").one_of({"landing_pad", "dock"});
    out.goal.x = goal->at("position").vec3();
    if (const auto o = goal->find("orientation")) out.goal.R = parse_orientation(*o);
  }
  return out;
}

Scene build_scene(detail::JsonDocument doc, const CodeResolver& code) {
  detail::resolve_python_modules(doc, code);
  const JsonNode root(doc);
  root.expect_keys({"description", "system", "integrator", "dt", "duration", "initial_state",
                    "controls", "shape", "kinematic", "output", "limits", "view"});
  if (const auto d = root.find("description")) d->string();

  Scene scene;
  scene.file = doc.file;
  parse_limits(root, scene);
  read_view(root);  // validated here, read by the player's writer (parse_scene_view)
  const JsonNode sys = root.at("system");
  scene.system_type = sys.at("type").one_of(
      {"rigid_body", "helicopter", "boat", "generated", "car", "snakeboard", "sleigh",
       "generated_rdp", "generated_nonholonomic", "tree", "maximal"});
  if (scene.system_type == "tree") {
    detail::parse_tree(root, scene, code);
    parse_timing_and_output(root, scene);
    return scene;
  }
  if (scene.system_type == "maximal") {
    detail::parse_maximal(root, scene);
    parse_timing_and_output(root, scene);
    return scene;
  }
  if (const auto k = root.find("kinematic")) k->fail("applies to tree and maximal systems only");
  if (scene.system_type == "generated_nonholonomic") {
    detail::parse_generated_nonholonomic(root, scene, code);
    parse_timing_and_output(root, scene);
    return scene;
  }
  if (scene.system_type == "car" || scene.system_type == "snakeboard" ||
      scene.system_type == "sleigh" || scene.system_type == "generated_rdp") {
    detail::parse_nonholonomic(root, scene, code);
    parse_timing_and_output(root, scene);
    return scene;
  }
  GeneratedHolonomicModel generated;
  if (scene.system_type == "generated")
    generated = code.holonomic_vehicle(detail::generated_library(sys));
  if (const auto* planar = std::get_if<std::shared_ptr<const GeneratedPlanarVehicle>>(&generated)) {
    PlanarVehicleScene v;
    v.model = *planar;
    if (const auto in = root.find("integrator")) parse_integrator(*in, v, scene.policy);
    parse_timing_and_output(root, scene);
    if (const auto s = root.find("initial_state"))
      v.initial_state = detail::parse_planar_initial_state(*s);
    v.controls = parse_input(root, "controls", v.model->num_controls(), "controls");
    v.shape = parse_input(root, "shape", v.model->num_shape(), "shape");
    scene.system = std::move(v);
    return scene;
  }
  VehicleScene v;
  std::string controls_what, shape_what;
  if (scene.system_type == "rigid_body") {
    v.model = parse_rigid_body(sys);
    v.conserves_momentum = true;
  } else if (scene.system_type == "helicopter") {
    v.model = parse_helicopter(sys);
    controls_what = "helicopter controls: collective u_c [N], tail rotor u_psi [N]";
    shape_what = "helicopter rotor tilt: pitch, roll [rad]";
  } else if (scene.system_type == "generated") {
    v.model = std::get<std::shared_ptr<const GeneratedVehicle>>(generated);
  } else {
    v.model = parse_boat(sys);
    controls_what = "boat thrusters: right u_r [N], left u_l [N]";
  }
  if (controls_what.empty()) controls_what = "controls";
  if (shape_what.empty()) shape_what = "shape";

  if (const auto in = root.find("integrator")) parse_integrator(*in, v, scene.policy);

  parse_timing_and_output(root, scene);
  if (const auto s = root.find("initial_state"))
    v.initial_state = detail::parse_vehicle_initial_state(*s);
  v.controls = parse_input(root, "controls", v.model->num_controls(), controls_what);
  v.shape = parse_input(root, "shape", v.model->num_shape(), shape_what);
  scene.system = std::move(v);
  return scene;
}

}  // namespace

Scene parse_scene(std::string_view json_text, const std::string& file_label,
                  const CodeResolver& code) {
  Scene scene = build_scene(detail::parse_json_text(json_text, file_label), code);
  scene.text = std::string(json_text);
  return scene;
}

std::shared_ptr<const sim::Signal> Scene::controls() const {
  return std::visit([](const auto& setup) -> std::shared_ptr<const sim::Signal> { return setup.controls; },
                    system);
}

void Scene::set_controls(std::shared_ptr<const sim::Signal> controls) {
  std::visit([&](auto& setup) { setup.controls = std::move(controls); }, system);
}

SceneView parse_scene_view(const Scene& scene) {
  if (scene.text.empty()) return {};
  const detail::JsonDocument doc = detail::parse_json_text(scene.text, scene.file);
  return read_view(JsonNode(doc));
}

Scene load_scene(const std::filesystem::path& path, const CodeResolver& code) {
  return parse_scene(detail::read_input_file(path, "a JSON file"), path.string(), code);
}

Scene parse_scene(std::string_view json_text, const std::string& file_label) {
  return parse_scene(json_text, file_label, RefuseCode());
}

Scene load_scene(const std::filesystem::path& path) { return load_scene(path, RefuseCode()); }

}  // namespace marsden::io
