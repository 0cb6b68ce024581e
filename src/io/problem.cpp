#include "marsden/io/problem.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "json_access.hpp"
#include "problem_detail.hpp"
#include "scene_detail.hpp"
#include "marsden/control/holonomic_ocp.hpp"
#include "marsden/error.hpp"
#include "marsden/support/text.hpp"
#include "marsden/vehicle/generated.hpp"
#include "marsden/vehicle/models.hpp"

namespace marsden::io {

namespace {

using vehicle::GeneratedPlanarVehicle;
using vehicle::GeneratedVehicle;
using vehicle::HolonomicModel;
using vehicle::InputVec;
using vehicle::TangentMap;
using vehicle::VehicleState;

constexpr double kInf = std::numeric_limits<double>::infinity();
}

namespace detail {

std::vector<double> numbers_or_null(const JsonNode& n, std::size_t size, double null_value) {
  if (!n.is_array() || n.array_size() != size)
    n.fail("expected an array of " + std::to_string(size) + " numbers or nulls");
  std::vector<double> v(size);
  for (std::size_t i = 0; i < size; ++i) v[i] = n[i].raw().is_null() ? null_value : n[i].number();
  return v;
}

void parse_range(const JsonNode& parent, std::string_view key, std::size_t size,
                 double* lower, double* upper) {
  const auto r = parent.find(key);
  if (!r) return;
  r->expect_keys({"lower", "upper"});
  if (const auto lo = r->find("lower")) {
    const auto v = numbers_or_null(*lo, size, -kInf);
    std::copy(v.begin(), v.end(), lower);
  }
  if (const auto hi = r->find("upper")) {
    const auto v = numbers_or_null(*hi, size, kInf);
    std::copy(v.begin(), v.end(), upper);
  }
  for (std::size_t i = 0; i < size; ++i)
    if (lower[i] > upper[i])
      r->fail("lower bound " + number_text(lower[i]) + " above upper bound " +
              number_text(upper[i]) + " at entry " + std::to_string(i));
}

std::vector<control::Obstacle> parse_obstacles(const JsonNode& root, int dim) {
  std::vector<control::Obstacle> out;
  const auto list = root.find("obstacles");
  if (!list) return out;
  if (!list->is_array()) list->fail("expected an array of obstacles");
  auto point = [dim](const JsonNode& n) {
    Vec3 p = Vec3::Zero();
    const auto v = n.numbers(static_cast<std::size_t>(dim));
    for (int i = 0; i < dim; ++i) p[i] = v[i];
    return p;
  };
  for (std::size_t i = 0; i < list->array_size(); ++i) {
    const JsonNode o = (*list)[i];
    control::Obstacle ob;
    const std::string type =
        o.at("type").one_of({"sphere", "cylinder", "box", "capsule", "half_space"});
    ob.name = o.has("name") ? o.at("name").string() : type + " " + std::to_string(i);
    if (const auto m = o.find("margin")) ob.margin = m->number_at_least(0.0);
    if (type == "sphere" || type == "cylinder") {
      o.expect_keys({"type", "name", "center", "radius", "margin"});
      ob.kind = type == "sphere" ? control::Obstacle::Kind::Sphere
                                 : control::Obstacle::Kind::Cylinder;
      ob.center = point(o.at("center"));
      ob.radius = o.at("radius").number_greater(0.0);
    } else if (type == "box") {
      o.expect_keys({"type", "name", "center", "half_size", "margin"});
      ob.kind = control::Obstacle::Kind::Box;
      ob.center = point(o.at("center"));
      const JsonNode hs = o.at("half_size");
      hs.numbers(static_cast<std::size_t>(dim));
      for (int k = 0; k < dim; ++k) ob.half_size[k] = hs[static_cast<std::size_t>(k)].number_greater(0.0);
    } else if (type == "capsule") {
      o.expect_keys({"type", "name", "a", "b", "radius", "margin"});
      ob.kind = control::Obstacle::Kind::Capsule;
      ob.a = point(o.at("a"));
      ob.b = point(o.at("b"));
      ob.radius = o.at("radius").number_greater(0.0);
    } else {
      o.expect_keys({"type", "name", "point", "normal", "margin"});
      ob.kind = control::Obstacle::Kind::HalfSpace;
      ob.center = point(o.at("point"));
      ob.normal = point(o.at("normal"));
      if (!(ob.normal.norm() > 0.0)) o.at("normal").fail("must not be zero");
    }
    out.push_back(ob);
  }
  return out;
}

void parse_path_weights(const JsonNode& cost, control::PathSpec& path) {
  if (const auto w = cost.find("path_length")) path.path_length_weight = w->number_at_least(0.0);
  if (const auto hz = cost.find("hazard")) {
    hz->expect_keys({"weight", "distance"});
    path.hazard_weight = hz->at("weight").number_at_least(0.0);
    if (const auto d = hz->find("distance")) path.hazard_distance = d->number_greater(0.0);
  }
}
control::IpoptOptions parse_solver(const JsonNode& root) {
  control::IpoptOptions opt;
  opt.constraint_tolerance = 1e-10;
  const auto s = root.find("solver");
  if (!s) return opt;
  s->expect_keys({"tolerance", "constraint_tolerance", "max_iterations", "max_cpu_time", "hessian"});
  if (const auto t = s->find("tolerance")) opt.tolerance = t->number_greater(0.0);
  if (const auto t = s->find("constraint_tolerance")) opt.constraint_tolerance = t->number_greater(0.0);
  if (const auto t = s->find("max_iterations")) opt.max_iterations = t->integer(0, 1000000);
  if (const auto t = s->find("max_cpu_time")) opt.max_cpu_time_s = t->number_greater(0.0);
  if (const auto h = s->find("hessian"))
    opt.hessian = h->one_of({"differences", "limited_memory"}) == "differences"
                      ? control::HessianMode::Differences
                      : control::HessianMode::LimitedMemory;
  return opt;
}

void parse_map_and_tangent(const JsonNode& in, DiffMap& map, TangentMap& tangent) {
  if (const auto m = in.find("map"))
    map = m->one_of({"cay", "exp"}) == "cay" ? DiffMap::Cay : DiffMap::Exp;
  if (const auto t = in.find("tangent"))
    tangent = t->one_of({"tln", "exact"}) == "tln" ? TangentMap::TLN : TangentMap::Exact;
}

void parse_final_time(const JsonNode& root, double dt, int steps, bool& free, double& dt_min,
                      double& dt_max, double& weight) {
  const auto ft = root.find("final_time");
  if (!ft) return;
  ft->expect_keys({"free", "lower", "upper", "weight"});
  free = ft->at("free").boolean();
  if (!free) return;
  dt_min = ft->at("lower").number_greater(0.0) / steps;
  dt_max = ft->has("upper") ? ft->at("upper").number_greater(0.0) / steps : kInf;
  if (const auto w = ft->find("weight")) weight = w->number_at_least(0.0);
  if (!(dt_min <= dt && dt <= dt_max))
    ft->fail("the guess dt * steps = " + number_text(dt * steps) +
             " s must lie within [lower, upper]");
}

InputVec input_vec(const JsonNode& n, int size, const std::string& what) {
  if (!n.is_array() || n.array_size() != static_cast<std::size_t>(size))
    n.fail("expected " + std::to_string(size) + " numbers (" + what + ")");
  const auto v = n.numbers();
  InputVec out(size);
  for (int i = 0; i < size; ++i) out[i] = v[static_cast<std::size_t>(i)];
  return out;
}

void check_guess_magnitudes(const JsonNode& guess) {
  if (guess.is_array()) {
    for (std::size_t i = 0; i < guess.array_size(); ++i) check_guess_magnitudes(guess[i]);
  } else if (guess.is_object()) {
    for (const auto& item : guess.raw().items()) check_guess_magnitudes(guess.at(item.key()));
  } else if (guess.raw().is_number()) {
    const double x = guess.number();
    if (std::abs(x) > kMaxGuessMagnitude)
      guess.fail("an initial guess must be at most " + number_text(kMaxGuessMagnitude) +
                 " in magnitude (got " + number_text(x) + "); beyond it the "
                 "transcription's values overflow");
  }
}

}  // namespace detail

namespace {

using detail::JsonNode;

// The holonomic vehicles: helicopter, boat and generated ones on SE(3), generated ones on
// SE(2) (HolonomicOcp<G>). On SE(2) the states are written as a planar vehicle's scene
// writes them (theta, position [x, y], angular_velocity omega, linear_velocity [v1, v2]),
// so that the re-simulation scene takes the problem's initial state unchanged.
// `generated`: a generated vehicle's loaded model (type "generated").
template <class G>
std::unique_ptr<control::Ocp> parse_holonomic(const JsonNode& root, const std::string& type,
                                              const GeneratedHolonomicModel& generated) {
  constexpr bool kPlanar = std::is_same_v<G, SE2>;
  constexpr std::size_t kPositionDim = kPlanar ? 2 : 3;
  root.expect_keys({"name", "description", "system", "integrator", "dt", "steps", "initial_state",
                    "final_state", "final_time", "bounds", "cost", "obstacles", "initial_guess",
                    "solver"});
  control::HolonomicOcpSpec<G> s;
  const JsonNode sys = root.at("system");
  if constexpr (kPlanar)
    s.model = std::get<std::shared_ptr<const GeneratedPlanarVehicle>>(generated);
  else
    s.model = type == "helicopter" ? detail::parse_helicopter(sys)
               : type == "boat"
                   ? detail::parse_boat(sys)
                   : std::shared_ptr<const HolonomicModel<SE3>>(
                         std::get<std::shared_ptr<const GeneratedVehicle>>(generated));
  const int nu = s.model->num_controls(), ns = s.model->num_shape();
  const std::string u_what = type == "helicopter" ? "collective u_c [N], tail rotor u_psi [N]"
                             : type == "boat" ? "right thruster u_r [N], left thruster u_l [N]"
                                              : "controls";
  const std::string gamma_what = type == "helicopter" ? "rotor tilt pitch, roll [rad]" : "shape";
  if (const auto in = root.find("integrator")) {
    in->expect_keys({"map", "tangent"});
    detail::parse_map_and_tangent(*in, s.integrator.map, s.integrator.tangent);
  }
  s.dt = root.at("dt").number_greater(0.0);
  s.steps = root.at("steps").integer(1, 100000);

  VehicleState<G> init;
  if constexpr (kPlanar) init = detail::parse_planar_initial_state(root.at("initial_state"));
  else init = detail::parse_vehicle_initial_state(root.at("initial_state"));
  s.g0 = init.g;
  s.xi0 = init.xi;

  if (const auto fin = root.find("final_state")) {
    if constexpr (kPlanar)
      fin->expect_keys({"position", "theta", "angular_velocity", "linear_velocity", "at_rest"});
    else
      fin->expect_keys({"position", "orientation", "heading", "angular_velocity",
                        "linear_velocity", "at_rest"});
    if (const auto p = fin->find("position")) {
      const auto v = detail::numbers_or_null(*p, kPositionDim,
                                             std::numeric_limits<double>::quiet_NaN());
      for (std::size_t i = 0; i < kPositionDim; ++i) {
        s.final_position_fixed[i] = !std::isnan(v[i]);
        s.final_position[static_cast<Eigen::Index>(i)] = s.final_position_fixed[i] ? v[i] : 0.0;
      }
    }
    if constexpr (kPlanar) {
      if (const auto th = fin->find("theta"))
        s.final_orientation = SE2::from_angle(th->number(), Vec2::Zero());
    } else {
      if (const auto o = fin->find("orientation")) {
        if (fin->has("heading")) fin->fail("give \"orientation\" or \"heading\", not both");
        SE3 g;
        g.R = detail::parse_orientation(*o);
        s.final_orientation = g;
      }
      if (const auto h = fin->find("heading")) s.final_heading = h->number();
    }
    const bool at_rest = fin->has("at_rest") && fin->at("at_rest").boolean();
    if (at_rest && (fin->has("angular_velocity") || fin->has("linear_velocity")))
      fin->fail("give \"at_rest\" or velocities, not both");
    if (at_rest) s.final_velocity = G::Tangent::Zero();
    if (fin->has("angular_velocity") != fin->has("linear_velocity"))
      fin->fail("give both \"angular_velocity\" and \"linear_velocity\" (the last segment's body velocity)");
    if (fin->has("angular_velocity")) {
      typename G::Tangent xi;
      if constexpr (kPlanar) {
        const std::vector<double> v = fin->at("linear_velocity").numbers(2);
        xi << fin->at("angular_velocity").number(), v[0], v[1];
      } else {
        xi << fin->at("angular_velocity").vec3(), fin->at("linear_velocity").vec3();
      }
      s.final_velocity = xi;
    }
  }

  detail::parse_final_time(root, s.dt, s.steps, s.free_final_time, s.dt_min, s.dt_max,
                           s.time_weight);

  s.u_lower = InputVec::Constant(nu, -kInf);
  s.u_upper = InputVec::Constant(nu, kInf);
  s.gamma_lower = InputVec::Constant(ns, -kInf);
  s.gamma_upper = InputVec::Constant(ns, kInf);
  if (const auto b = root.find("bounds")) {
    b->expect_keys({"controls", "shape", "position", "velocity"});
    detail::parse_range(*b, "controls", static_cast<std::size_t>(nu), s.u_lower.data(), s.u_upper.data());
    if (ns == 0 && b->has("shape")) b->at("shape").fail("this vehicle has no shape variables");
    detail::parse_range(*b, "shape", static_cast<std::size_t>(ns), s.gamma_lower.data(),
                        s.gamma_upper.data());
    detail::parse_range(*b, "position", kPositionDim, s.position_lower.data(),
                        s.position_upper.data());
    detail::parse_range(*b, "velocity", G::kDim, s.xi_lower.data(), s.xi_upper.data());
  }

  s.path.obstacles = detail::parse_obstacles(root, static_cast<int>(kPositionDim));
  if (const auto cost = root.find("cost")) {
    cost->expect_keys({"control_weights", "control_reference", "shape_weights", "path_length", "hazard"});
    if (const auto w = cost->find("control_weights")) s.u_weights = detail::input_vec(*w, nu, u_what);
    if (const auto r = cost->find("control_reference")) s.u_reference = detail::input_vec(*r, nu, u_what);
    if (const auto w = cost->find("shape_weights")) {
      if (ns == 0) w->fail("this vehicle has no shape variables");
      s.gamma_weights = detail::input_vec(*w, ns, gamma_what);
    }
    detail::parse_path_weights(*cost, s.path);
  }

  if (const auto g = root.find("initial_guess")) {
    g->expect_keys({"waypoints", "controls", "shape", "simulate"});
    detail::check_guess_magnitudes(*g);
    if (const auto w = g->find("waypoints")) {
      if (!w->is_array())
        w->fail(kPlanar ? "expected an array of [x, y] points" : "expected an array of [x, y, z] points");
      for (std::size_t i = 0; i < w->array_size(); ++i) {
        if constexpr (kPlanar) {
          const std::vector<double> v = (*w)[i].numbers(2);
          s.waypoints.emplace_back(v[0], v[1], 0.0);
        } else {
          s.waypoints.push_back((*w)[i].vec3());
        }
      }
    }
    if (const auto u = g->find("controls")) s.u_guess = detail::input_vec(*u, nu, u_what);
    if (const auto u = g->find("shape")) s.gamma_guess = detail::input_vec(*u, ns, gamma_what);
    if (const auto sim = g->find("simulate")) s.simulate_guess = sim->boolean();
  }
  return detail::with_field(root, [&] {
    return std::unique_ptr<control::Ocp>(std::make_unique<control::HolonomicOcp<G>>(std::move(s)));
  });
}

Problem build_problem(detail::JsonDocument doc, const CodeResolver& code) {
  const JsonNode root(doc);
  if (!root.is_object()) root.fail("a problem file must be a JSON object");
  detail::resolve_python_modules(doc, code);
  Problem p;
  p.file = doc.file;
  p.name = root.has("name") ? root.at("name").string() : std::string("problem");
  const JsonNode sys = root.at("system");
  p.system_type = sys.at("type").one_of(
      {"helicopter", "boat", "generated", "car", "generated_rdp", "tree"});
  // A generated object says its group: one on SE(2) is a planar holonomic vehicle.
  GeneratedHolonomicModel generated;
  if (p.system_type == "generated")
    generated = code.holonomic_vehicle(detail::generated_library(sys));
  const bool planar =
      std::holds_alternative<std::shared_ptr<const GeneratedPlanarVehicle>>(generated);
  if (p.system_type == "car") p.ocp = detail::parse_car_problem(root);
  else if (p.system_type == "generated_rdp")
    p.ocp = detail::parse_generated_rdp_problem(root, code);
  else if (p.system_type == "tree") p.ocp = detail::parse_tree_problem(root, code);
  else if (planar) p.ocp = parse_holonomic<SE2>(root, p.system_type, generated);
  else p.ocp = parse_holonomic<SE3>(root, p.system_type, generated);
  p.solver = detail::parse_solver(root);
  nlohmann::json fields = nlohmann::json::object();
  for (const char* key : {"system", "integrator", "initial_state"})
    if (root.has(key)) fields[key] = root.at(key).raw();
  // A URDF or generated library is found relative to the file that names it: the scene is
  // written elsewhere.
  const auto make_absolute = [&](nlohmann::json& path) {
    path = std::filesystem::absolute(std::filesystem::path(p.file).parent_path() /
                                     path.get<std::string>())
               .string();
  };
  for (const char* key : {"urdf", "library"})
    if (fields["system"].contains(key)) make_absolute(fields["system"][key]);
  for (const char* key : {"potentials", "forces"}) {  // a tree's generated elements
    if (!fields["system"].contains(key) || !fields["system"][key].is_array()) continue;
    for (auto& element : fields["system"][key])
      if (element.is_object() && element.contains("library") && element["library"].is_string())
        make_absolute(element["library"]);
  }
  p.scene_fields = fields.dump();
  nlohmann::json view = nlohmann::json::object();
  if (root.has("obstacles")) {
    view["obstacles"] = root.at("obstacles").raw();
    view["dimension"] = p.system_type == "car" || p.system_type == "generated_rdp" || planar ? 2 : 3;
  }
  // The helicopter's landing pad and the boat's dock stand at the final pose (a free
  // coordinate at 0: the boat's height is the water's). A helicopter lands when its final
  // height is the least its bounds allow (the pad's); it ends a canyon flight hovering.
  const auto fin = root.find("final_state");
  const nlohmann::json& raw = root.raw();
  const nlohmann::json lowest =
      raw.contains("bounds") && raw["bounds"].contains("position") &&
              raw["bounds"]["position"].contains("lower")
          ? raw["bounds"]["position"]["lower"]
          : nlohmann::json();
  const bool lands = fin && fin->has("position") && lowest.is_array() && lowest.size() == 3 &&
                     lowest[2].is_number() && fin->at("position").raw()[2] == lowest[2];
  if (((p.system_type == "helicopter" && lands) || p.system_type == "boat") && fin &&
      fin->has("position")) {
    nlohmann::json position = fin->at("position").raw();
    for (auto& x : position)
      if (x.is_null()) x = 0.0;
    nlohmann::json goal = {{"kind", p.system_type == "boat" ? "dock" : "landing_pad"},
                           {"position", position}};
    if (fin->has("orientation")) goal["orientation"] = fin->at("orientation").raw();
    if (fin->has("heading"))
      goal["orientation"] = {{"rpy", {0.0, 0.0, fin->at("heading").raw()}}};
    view["goal"] = goal;
  }
  if (!view.empty()) p.view_fields = view.dump();
  return p;
}

}  // namespace

Problem load_problem(const std::filesystem::path& path, const CodeResolver& code) {
  return parse_problem_text(detail::read_input_file(path, "a JSON file"), path.string(), code);
}

Problem load_problem(const std::filesystem::path& path) { return load_problem(path, RefuseCode()); }

Problem parse_problem_text(std::string_view text, std::string file_label,
                           const CodeResolver& code) {
  Problem problem = build_problem(detail::parse_json_text(text, std::move(file_label)), code);
  problem.text = std::string(text);
  return problem;
}

Problem parse_problem_text(std::string_view text, std::string file_label) {
  return parse_problem_text(text, std::move(file_label), RefuseCode());
}

std::string resimulation_scene(const Problem& problem, double dt,
                               const Eigen::Ref<const Eigen::MatrixXd>& controls,
                               const Eigen::Ref<const Eigen::MatrixXd>& shape) {
  if (problem.scene_fields.empty()) return {};
  nlohmann::json scene = nlohmann::json::parse(problem.scene_fields);
  const Eigen::Index steps = controls.rows();
  scene["dt"] = dt;
  scene["duration"] = static_cast<double>(steps) * dt;
  // The step k starts at k dt (sim::simulate's clock), where a zero-order hold samples.
  auto table = [&](const Eigen::Ref<const Eigen::MatrixXd>& values) {
    nlohmann::json times = nlohmann::json::array(), rows = nlohmann::json::array();
    for (Eigen::Index k = 0; k < steps; ++k) {
      times.push_back(static_cast<double>(k) * dt);
      nlohmann::json row = nlohmann::json::array();
      for (Eigen::Index i = 0; i < values.cols(); ++i) row.push_back(values(k, i));
      rows.push_back(std::move(row));
    }
    return nlohmann::json{{"type", "table"}, {"times", times}, {"values", rows},
                          {"hold", "zero_order"}};
  };
  if (controls.cols() > 0) scene["controls"] = table(controls);
  if (shape.cols() > 0) scene["shape"] = table(shape);
  if (!problem.view_fields.empty()) scene["view"] = nlohmann::json::parse(problem.view_fields);
  return scene.dump(2) + "\n";
}

control::VecX read_decision_vector(const std::filesystem::path& path) {
  std::istringstream in(detail::read_input_file(path, "a warm-start vector, one number per line"));
  std::vector<double> v;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::istringstream ls(line);
    double x;
    if (!(ls >> x) || !std::isfinite(x))
      throw InputError(path.string() + ": line " + std::to_string(line_no) +
                       ": expected one finite number");
    if (std::abs(x) > detail::kMaxGuessMagnitude)
      throw InputError(path.string() + ": line " + std::to_string(line_no) + ": " +
                       number_text(x) + " is beyond " +
                       number_text(detail::kMaxGuessMagnitude) +
                       " in magnitude, more than a warm start may hold");
    v.push_back(x);
  }
  // An empty file would silently mean "no warm start".
  if (v.empty()) throw InputError(path.string() + ": no numbers; expected a warm-start vector");
  return Eigen::Map<const control::VecX>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace marsden::io
