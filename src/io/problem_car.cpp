// Problem files for the car (vehicles §5.2.1) with the RDP integrator: RdpOcp
// (control/rdp_ocp.hpp). Schema in docs/dmoc.md; problem.cpp dispatches here.
#include <cmath>
#include <limits>
#include <memory>

#include "marsden/control/rdp_ocp.hpp"
#include "marsden/vehicle/rdp_models.hpp"
#include "problem_detail.hpp"
#include "scene_detail.hpp"

namespace marsden::io::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The bounds of one entry per shape dof (or control) from parse_range's arrays.
std::vector<control::Interval> intervals(const double* lower, const double* upper) {
  return {{lower[0], upper[0]}, {lower[1], upper[1]}};
}

}  // namespace

std::unique_ptr<control::Ocp> parse_car_problem(const JsonNode& root) {
  root.expect_keys({"name", "description", "system", "integrator", "dt", "steps", "initial_state",
                    "final_state", "final_time", "bounds", "cost", "obstacles", "initial_guess",
                    "solver"});
  control::RdpOcpSpec s;
  s.model = std::make_shared<const vehicle::CarModel>(parse_car(root.at("system")));
  s.shape_names = {"psi", "sigma"};
  const std::string u_what = "rear-wheel torque f_psi [N m], steering rate u_sigma [1/s]";
  parse_rdp_integrator_and_steps(root, s);

  // Initial state: pose, shape (psi, sigma = tan of the steering angle), wheel rate; the
  // steering rate is the first control, not a state.
  s.r0 = vehicle::ShapeVec::Zero(2);
  s.u0 = vehicle::ShapeVec::Zero(2);
  s.w0 = vehicle::RdpVec::Zero(0);
  if (const auto init = root.find("initial_state")) {
    init->expect_keys({"theta", "x", "y", "psi", "sigma", "psi_dot"});
    const auto num = [&](const char* key) { return init->has(key) ? init->at(key).number() : 0.0; };
    s.g0 = SE2::from_angle(num("theta"), Vec2(num("x"), num("y")));
    s.r0 << num("psi"), num("sigma");
    s.u0[0] = num("psi_dot");
  }

  // Final state: each pose or shape entry given is fixed, the others are free.
  if (const auto fin = root.find("final_state")) {
    fin->expect_keys({"theta", "x", "y", "psi", "sigma", "at_rest"});
    parse_final_pose(*fin, s);
    if (fin->has("psi") || fin->has("sigma")) {
      vehicle::ShapeVec r = vehicle::ShapeVec::Zero(2);
      s.final_shape_fixed = {fin->has("psi"), fin->has("sigma")};
      if (fin->has("psi")) r[0] = fin->at("psi").number();
      if (fin->has("sigma")) r[1] = fin->at("sigma").number();
      s.final_shape = r;
    }
    if (const auto r = fin->find("at_rest")) s.final_at_rest = r->boolean();
  }

  if (const auto b = root.find("bounds")) {
    b->expect_keys({"controls", "shape", "position"});
    double lo[2] = {-kInf, -kInf}, hi[2] = {kInf, kInf};
    parse_range(*b, "controls", 2, lo, hi);
    s.control_bounds = intervals(lo, hi);
    double slo[2] = {-kInf, -kInf}, shi[2] = {kInf, kInf};
    parse_range(*b, "shape", 2, slo, shi);
    s.shape_bounds = intervals(slo, shi);
    double plo[2] = {-kInf, -kInf}, phi[2] = {kInf, kInf};
    parse_range(*b, "position", 2, plo, phi);
    s.x_bounds = {plo[0], phi[0]};
    s.y_bounds = {plo[1], phi[1]};
  }

  // The states given must lie within the bounds (the spec checks it too, in its own C++
  // names); named here by the problem's fields.
  const auto within = [&](const char* state, const char* key, double value,
                          const control::Interval& b, const std::string& bound) {
    if (b.lower <= value && value <= b.upper) return;
    const std::string what = "lies outside " + bound + " (" + number_text(value) +
                             " not in [" + number_text(b.lower) + ", " +
                             number_text(b.upper) + "])";
    const auto node = root.find(state);
    if (node && node->has(key)) node->at(key).fail(what);
    root.at("bounds").fail(std::string(state) + "." + key + " (0 when absent) " + what);
  };
  within("initial_state", "x", s.g0.x.x(), s.x_bounds, "bounds.position (x)");
  within("initial_state", "y", s.g0.x.y(), s.y_bounds, "bounds.position (y)");
  const char* shape_keys[2] = {"psi", "sigma"};
  for (std::size_t i = 0; i < s.shape_bounds.size() && i < 2; ++i)
    within("initial_state", shape_keys[i], s.r0[Eigen::Index(i)], s.shape_bounds[i],
           std::string("bounds.shape (") + shape_keys[i] + ")");
  if (s.final_coords) {
    if (s.final_coords_fixed[1])
      within("final_state", "x", (*s.final_coords)[1], s.x_bounds, "bounds.position (x)");
    if (s.final_coords_fixed[2])
      within("final_state", "y", (*s.final_coords)[2], s.y_bounds, "bounds.position (y)");
  }
  if (s.final_shape)
    for (std::size_t i = 0; i < s.shape_bounds.size() && i < 2; ++i)
      if (s.final_shape_fixed[i])
        within("final_state", shape_keys[i], (*s.final_shape)[Eigen::Index(i)], s.shape_bounds[i],
               std::string("bounds.shape (") + shape_keys[i] + ")");

  return finish_rdp_problem(root, std::move(s), 2, u_what,
                            "wheel angle psi [rad], steering sigma [-]");
}

// final_state's pose entries (theta, x, y): each one given is fixed, the others are free.
void parse_final_pose(const JsonNode& fin, control::RdpOcpSpec& s) {
  const char* pose_keys[3] = {"theta", "x", "y"};
  Vec3 c = Vec3::Zero();
  bool any = false;
  for (int i = 0; i < 3; ++i) {
    s.final_coords_fixed[static_cast<std::size_t>(i)] = fin.has(pose_keys[i]);
    if (fin.has(pose_keys[i])) c[i] = fin.at(pose_keys[i]).number();
    any = any || fin.has(pose_keys[i]);
  }
  if (any) s.final_coords = c;
}

// The integrator (alpha, map, tangent), dt, steps and final time of an RDP problem file.
void parse_rdp_integrator_and_steps(const JsonNode& root, control::RdpOcpSpec& s) {
  if (const auto in = root.find("integrator")) {
    in->expect_keys({"alpha", "map", "tangent"});
    if (const auto a = in->find("alpha")) {
      s.integrator.alpha = a->number_at_least(0.0);
      if (s.integrator.alpha > 1.0) a->fail("must be <= 1");
    }
    parse_map_and_tangent(*in, s.integrator.map, s.integrator.tangent);
  }
  s.dt = root.at("dt").number_greater(0.0);
  s.steps = root.at("steps").integer(1, 100000);
  parse_final_time(root, s.dt, s.steps, s.free_final_time, s.dt_min, s.dt_max, s.time_weight);
}

// The obstacles, cost, initial guess and final-time checks every RDP problem file shares
// (the car's, a generated vehicle's); then the OCP. nr weights per cost term, each
// described by its labels.
std::unique_ptr<control::Ocp> finish_rdp_problem(const JsonNode& root, control::RdpOcpSpec s,
                                                 int nr, const std::string& controls_what,
                                                 const std::string& shape_what) {
  s.path.obstacles = parse_obstacles(root, 2);
  if (const auto cost = root.find("cost")) {
    cost->expect_keys({"control_weights", "shape_weights", "path_length", "hazard"});
    if (const auto w = cost->find("control_weights")) {
      const vehicle::InputVec v = input_vec(*w, nr, controls_what);
      s.control_weights.assign(v.data(), v.data() + nr);
    }
    if (const auto w = cost->find("shape_weights")) {
      const vehicle::InputVec v = input_vec(*w, nr, shape_what);
      s.shape_weights.assign(v.data(), v.data() + nr);
    }
    parse_path_weights(*cost, s.path);
  }

  if (const auto g = root.find("initial_guess")) {
    g->expect_keys({"waypoints", "speed"});
    check_guess_magnitudes(*g);
    if (const auto w = g->find("waypoints")) {
      if (!w->is_array()) w->fail("expected an array of [x, y] points");
      for (std::size_t i = 0; i < w->array_size(); ++i) {
        const auto p = (*w)[i].numbers(2);
        s.waypoints.emplace_back(p[0], p[1]);
      }
    }
    if (const auto v = g->find("speed")) s.guess_speed = v->number_at_least(0.0);
  }
  if (s.free_final_time && s.path.hazard_weight > 0.0)
    root.at("cost").at("hazard").fail("must be absent (or its weight 0) with a free final time "
                                      "(use the obstacles' margins)");
  return with_field(root, [&] {
    return std::unique_ptr<control::Ocp>(std::make_unique<control::RdpOcp>(std::move(s)));
  });
}

}  // namespace marsden::io::detail
