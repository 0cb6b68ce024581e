// Scene files for the nonholonomic vehicles on SE(2): the car (vehicles §5.2.1), the
// snakeboard (§5.2.2) and the Chaplygin sleigh, with the RDP integrator (vehicle/rdp.hpp),
// the car's explicit RDP update, GNI and RATTLE in full coordinates
// (nonholonomic/integrators.hpp) and RK4 on the continuous equations. The schema is in
// docs/scene.md; the SE(3) vehicles are in scene.cpp, which dispatches here.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"
#include "scene_detail.hpp"

namespace marsden::io {

namespace detail {

namespace {

using Kind = sim::NonholonomicVehicle;
using sim::num_controls;
using sim::num_shape;

Kind kind_of(const std::string& type) {
  if (type == "car") return Kind::Car;
  if (type == "snakeboard") return Kind::Snakeboard;
  return Kind::Sleigh;
}

// ---------------------------------------------------------------------------------------
// Parsing

double positive_if(const JsonNode& obj, std::string_view key, double value) {
  if (const auto n = obj.find(key)) return n->number_greater(0.0);
  return value;
}

double number_if(const JsonNode& obj, std::string_view key, double value) {
  if (const auto n = obj.find(key)) return n->number();
  return value;
}

void parse_system(const JsonNode& sys, Kind kind, NonholonomicScene& nh) {
  switch (kind) {
    case Kind::Car: {
      sys.expect_keys({"type", "mass", "wheel_inertia", "body_inertia", "wheel_radius",
                       "axle_distance"});
      CarParams& p = nh.car;
      p.m = positive_if(sys, "mass", p.m);
      p.I = positive_if(sys, "wheel_inertia", p.I);
      p.K = positive_if(sys, "body_inertia", p.K);
      p.rho = positive_if(sys, "wheel_radius", p.rho);
      p.l = positive_if(sys, "axle_distance", p.l);
      break;
    }
    case Kind::Snakeboard: {
      sys.expect_keys({"type", "mass", "half_length", "rotor_inertia", "wheel_inertia",
                       "actuation"});
      SnakeboardParams& p = nh.snakeboard;
      p.m = positive_if(sys, "mass", p.m);
      p.l = positive_if(sys, "half_length", p.l);
      p.I = positive_if(sys, "rotor_inertia", p.I);
      p.J = positive_if(sys, "wheel_inertia", p.J);
      if (!(p.m * p.l * p.l > p.I))
        sys.fail("needs mass * half_length^2 > rotor_inertia for a positive definite mass "
                 "matrix (got " + sim::number_text(p.m * p.l * p.l) + " <= " + sim::number_text(p.I) +
                 ")");
      if (const auto a = sys.find("actuation"))
        nh.prescribe_shape = a->one_of({"torque", "velocity"}) == "velocity";
      break;
    }
    case Kind::Sleigh: {
      sys.expect_keys({"type", "mass", "inertia", "skate_offset"});
      SleighParams& p = nh.sleigh;
      p.m = positive_if(sys, "mass", p.m);
      p.J = positive_if(sys, "inertia", p.J);
      p.a = number_if(sys, "skate_offset", p.a);
      break;
    }
  }
}

void parse_integrator(const JsonNode& in, Kind kind, NonholonomicScene& nh,
                      sim::FailurePolicy& policy) {
  in.expect_keys({"method", "alpha", "map", "tangent", "tolerance", "max_iterations",
                  "line_search", "on_failure", "max_subdivisions"});
  if (const auto n = in.find("method")) {
    const std::string m = n->string();
    const std::vector<std::string> allowed =
        kind == Kind::Car ? std::vector<std::string>{"rdp", "rdp_explicit", "rk4"}
                          : std::vector<std::string>{"rdp", "gni", "rattle", "rk4"};
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
    if (std::find(allowed.begin(), allowed.end(), m) == allowed.end())
      n->fail("method \"" + m + "\" is not available for this system; must be one of " + list);
    nh.method = m == "rdp"            ? NhMethod::Rdp
                : m == "rdp_explicit" ? NhMethod::RdpExplicit
                : m == "gni"          ? NhMethod::Gni
                : m == "rattle"       ? NhMethod::Rattle
                                      : NhMethod::Rk4;
    if (nh.prescribe_shape && nh.method != NhMethod::Rdp)
      n->fail("method \"" + m + "\" needs system.actuation \"torque\"; prescribed shape "
              "velocities are supported by \"rdp\" only");
  }
  const bool rdp = nh.method == NhMethod::Rdp;
  if (const auto n = in.find("alpha")) {
    if (!rdp && nh.method != NhMethod::RdpExplicit)
      n->fail("applies to methods \"rdp\" and \"rdp_explicit\" only");
    nh.alpha = n->number_at_least(0.0);
    if (nh.alpha > 1.0) n->fail("must be <= 1 (got " + sim::number_text(nh.alpha) + ")");
  }
  if (const auto n = in.find("map")) {
    if (!rdp) n->fail("applies to method \"rdp\" only (rdp_explicit uses exp)");
    nh.map = n->one_of({"cay", "exp"}) == "cay" ? DiffMap::Cay : DiffMap::Exp;
  }
  if (const auto n = in.find("tangent")) {
    if (!rdp) n->fail("applies to method \"rdp\" only");
    nh.tangent = n->one_of({"tln", "exact"}) == "tln" ? TangentMap::TLN : TangentMap::Exact;
  }
  if (nh.method == NhMethod::RdpExplicit) nh.map = DiffMap::Exp;
  if (const auto n = in.find("tolerance")) nh.newton.tolerance = n->number_greater(0.0);
  if (const auto n = in.find("max_iterations")) nh.newton.max_iterations = n->integer(1, 1000);
  if (const auto n = in.find("line_search")) nh.newton.line_search = n->boolean();
  parse_failure_policy(in, policy);
}

void parse_initial_state(const JsonNode& s, Kind kind, NonholonomicScene& nh) {
  switch (kind) {
    case Kind::Car: s.expect_keys({"theta", "x", "y", "psi", "sigma", "psi_dot"}); break;
    case Kind::Snakeboard:
      s.expect_keys({"theta", "x", "y", "psi", "phi", "psi_dot", "phi_dot", "v1"});
      break;
    case Kind::Sleigh: s.expect_keys({"theta", "x", "y", "omega", "v1"}); break;
  }
  nh.theta = number_if(s, "theta", 0.0);
  nh.x = number_if(s, "x", 0.0);
  nh.y = number_if(s, "y", 0.0);
  if (kind == Kind::Car) {
    nh.shape << number_if(s, "psi", 0.0), number_if(s, "sigma", 0.0);
    nh.shape_velocity[0] = number_if(s, "psi_dot", 0.0);
  } else if (kind == Kind::Snakeboard) {
    nh.shape << number_if(s, "psi", 0.0), number_if(s, "phi", 0.0);
    for (const char* key : {"psi_dot", "phi_dot"})
      if (const auto n = s.find(key); n && nh.prescribe_shape)
        n->fail("with system.actuation \"velocity\" the shape velocities are the controls; "
                "remove this field");
    nh.shape_velocity << number_if(s, "psi_dot", 0.0), number_if(s, "phi_dot", 0.0);
    nh.v1 = number_if(s, "v1", 0.0);
    const double c = std::cos(nh.shape[1]);
    if (c * c < 1e-12) {
      const JsonNode phi = s.at("phi");
      phi.fail("the steering angle must not be +-pi/2 (the wheel axles are parallel and the "
               "board velocity is undetermined)");
    }
  } else {
    nh.omega = number_if(s, "omega", 0.0);
    nh.v1 = number_if(s, "v1", 0.0);
  }
}

}  // namespace

CarParams parse_car(const JsonNode& sys) {
  NonholonomicScene nh;
  parse_system(sys, Kind::Car, nh);
  return nh.car;
}

void parse_nonholonomic(const JsonNode& root, Scene& scene) {
  const Kind kind = kind_of(scene.system_type);
  auto nh = std::make_shared<NonholonomicScene>();
  nh->vehicle = kind;
  nh->shape = ShapeVec::Zero(num_shape(kind));
  nh->shape_velocity = ShapeVec::Zero(num_shape(kind));
  parse_system(root.at("system"), kind, *nh);
  if (const auto in = root.find("integrator")) parse_integrator(*in, kind, *nh, scene.policy);
  if (const auto s = root.find("initial_state")) parse_initial_state(*s, kind, *nh);
  std::string what = "controls";
  if (kind == Kind::Car) what = "car: rear-wheel torque f_psi [N m], steering rate u_sigma [1/s]";
  if (kind == Kind::Snakeboard)
    what = nh->prescribe_shape
               ? "snakeboard shape rates: rotor psi_dot [rad/s], steering phi_dot [rad/s]"
               : "snakeboard torques: rotor [N m], steering [N m]";
  nh->controls = parse_input(root, "controls", num_controls(kind), what);
  parse_input(root, "shape", 0, "shape input (use controls)");
  scene.system = std::move(*nh);
}

}  // namespace detail
}  // namespace marsden::io
