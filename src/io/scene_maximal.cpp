// Scene files for mechanisms in maximal coordinates (maximal-coordinates paper): a built-in
// mechanism of maximal/setup.hpp or a URDF file, run with the variational integrator of
// maximal/integrator.hpp. The schema is in docs/scene.md; scene.cpp dispatches here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/support/text.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/urdf.hpp"
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
    // Each segment closes a loop of 5 rows; the loop block holds 60 (maximal/integrator.cpp).
    const int k = params.find("segments") ? params.at("segments").integer(1, 12) : 1;
    double tilt = 0.3;
    number_if(params, "tilt", tilt);
    return with_field(params, [&] { return maximal::four_bar_chain(k, tilt); });
  }
  if (name == "chaplygin_sleigh") {
    if (given) params.expect_keys({"mass", "inertia", "skate_offset"});
    double mass = 1.0, inertia = 0.1, offset = 0.5;
    set_if(params, "mass", mass, 0.0, true);
    set_if(params, "inertia", inertia, 0.0, true);
    number_if(params, "skate_offset", offset);
    return with_field(params, [&] { return maximal::chaplygin_sleigh(mass, inertia, offset); });
  }
  if (name == "trailer_train") {
    if (given) params.expect_keys({"trailers", "steering"});
    const int trailers = params.find("trailers") ? params.at("trailers").integer(0, 100000) : 3;
    double steering = 0.0;
    number_if(params, "steering", steering);
    return with_field(params, [&] { return maximal::trailer_train(trailers, steering); });
  }
  if (name == "rolling_disk") {
    if (given) params.expect_keys({"mass", "radius"});
    double mass = 1.0, radius = 0.5;
    set_if(params, "mass", mass, 0.0, true);
    set_if(params, "radius", radius, 0.0, true);
    return with_field(params, [&] { return maximal::rolling_disk(mass, radius); });
  }
  if (name == "car") {
    // The nonholonomic car's field names (docs/scene.md), plus the steering.
    if (given)
      params.expect_keys({"mass", "wheel_inertia", "body_inertia", "wheel_radius",
                          "axle_distance", "steering", "steering_inertia"});
    CarParams p;
    set_if(params, "mass", p.m, 0.0, true);
    set_if(params, "wheel_inertia", p.I, 0.0, true);
    set_if(params, "body_inertia", p.K, 0.0, true);
    set_if(params, "wheel_radius", p.rho, 0.0, true);
    set_if(params, "axle_distance", p.l, 0.0, true);
    double steering = 0.0, steering_inertia = 0.0;
    number_if(params, "steering", steering);
    set_if(params, "steering_inertia", steering_inertia, 0.0, false);
    return with_field(params, [&] { return maximal::car(p, steering, steering_inertia); });
  }
  if (name == "snakeboard") {
    if (given) params.expect_keys({"mass", "half_length", "rotor_inertia", "wheel_inertia"});
    double mass = 1.0, half_length = 0.5, rotor = 0.1, wheels = 0.05;
    set_if(params, "mass", mass, 0.0, true);
    set_if(params, "half_length", half_length, 0.0, true);
    set_if(params, "rotor_inertia", rotor, 0.0, true);
    set_if(params, "wheel_inertia", wheels, 0.0, true);
    return with_field(params, [&] {
      return maximal::snakeboard(mass, half_length, rotor, wheels);
    });
  }
  if (given) params.expect_keys({"hip_half_angle"});
  double half = 0.5;
  number_if(params, "hip_half_angle", half);
  return with_field(params, [&] { return maximal::minitaur_leg(half); });
}

// "initial_state": {"q": {joint: value}, "qd": {joint: rate}} over the mechanism's own
// coordinates (rad or m, rad/s or m/s; a number for a one-dof joint, an array of its
// coordinates otherwise), turned into poses and discrete velocities; a mechanism with loops
// is then projected onto its loop constraints.
void joint_initial_state(const JsonNode& s, double dt, Mechanism& mech) {
  s.expect_keys({"q", "qd", "base", "clearance"});
  const maximal::Model& model = mech.model;
  std::vector<JointCoords> q = maximal::current_joint_coordinates(model, mech.state), qd;
  for (const JointCoords& c : q) qd.push_back(JointCoords::Zero(c.size()));
  auto read = [&](const char* key, std::vector<JointCoords>& out) {
    const auto n = s.find(key);
    if (!n) return;
    if (!n->is_object()) n->fail("expected an object {joint name: value}");
    for (const auto& item : n->raw().items()) {
      const JsonNode v = n->at(item.key());
      const auto it = std::find_if(model.joints().begin(), model.joints().end(),
                                   [&](const maximal::Joint& j) { return j.name == item.key(); });
      if (it == model.joints().end()) v.fail("no joint named '" + shown(item.key()) + "'");
      const auto j = static_cast<std::size_t>(it - model.joints().begin());
      const auto dofs = static_cast<std::size_t>(out[j].size());
      if (dofs == 0) v.fail("joint '" + shown(item.key()) + "' is fixed: it has no coordinate");
      if (dofs == 1) {
        out[j](0) = v.number();
      } else {
        const std::vector<double> values = v.numbers();
        if (values.size() != dofs)
          v.fail("joint '" + shown(item.key()) + "' (" + maximal::joint_type_name(it->type) + ") has " +
                 std::to_string(dofs) + " coordinates");
        for (std::size_t i = 0; i < dofs; ++i) out[j](Eigen::Index(i)) = values[i];
      }
    }
  };
  read("q", q);
  read("qd", qd);
  mech.state = with_field(s, [&] { return maximal::set_joint_state(model, mech.state, q, qd, dt); });
}

// The index of the one-degree-of-freedom joint a JSON string names.
int one_dof_joint(const JsonNode& name_node, const std::vector<maximal::Joint>& joints) {
  const std::string name = name_node.string();
  const auto it = std::find_if(joints.begin(), joints.end(),
                               [&](const maximal::Joint& j) { return j.name == name; });
  if (it == joints.end()) name_node.fail("no joint named '" + shown(name) + "'");
  if (maximal::joint_dofs(it->type) != 1)
    name_node.fail("joint '" + shown(name) + "' is not a revolute or prismatic joint");
  return static_cast<int>(it - joints.begin());
}

// "springs": [{"joint", "stiffness" (>= 0, N m/rad or N/m), "rest" (rad or m, 0)}],
// "limits": [{"joint", "lower", "upper"}] (rad or m) and "dampers": [{"joint", "damping"
// (>= 0, N m s/rad or N s/m)}] on one-dof joints.
void parse_joint_elements(const JsonNode& sys, std::vector<maximal::Joint>& joints) {
  if (const auto springs = sys.find("springs")) {
    for (std::size_t i = 0; i < springs->array_size(); ++i) {
      const JsonNode e = (*springs)[i];
      e.expect_keys({"joint", "stiffness", "rest"});
      maximal::Joint& j = joints[std::size_t(one_dof_joint(e.at("joint"), joints))];
      j.stiffness = e.at("stiffness").number_at_least(0.0);
      if (const auto r = e.find("rest")) j.rest = r->number();
    }
  }
  if (const auto limits = sys.find("limits")) {
    for (std::size_t i = 0; i < limits->array_size(); ++i) {
      const JsonNode e = (*limits)[i];
      e.expect_keys({"joint", "lower", "upper"});
      if (!e.has("lower") && !e.has("upper")) e.fail("expected \"lower\", \"upper\" or both");
      maximal::Joint& j = joints[std::size_t(one_dof_joint(e.at("joint"), joints))];
      if (const auto l = e.find("lower")) j.lower = l->number();
      if (const auto u = e.find("upper")) j.upper = u->number();
    }
  }
  if (const auto dampers = sys.find("dampers")) {
    for (std::size_t i = 0; i < dampers->array_size(); ++i) {
      const JsonNode e = (*dampers)[i];
      e.expect_keys({"joint", "damping"});
      joints[std::size_t(one_dof_joint(e.at("joint"), joints))].damping =
          e.at("damping").number_at_least(0.0);
    }
  }
}

// The body a JSON string names.
int body_index(const JsonNode& name_node, const std::vector<maximal::Body>& bodies) {
  const std::string name = name_node.string();
  const auto it = std::find_if(bodies.begin(), bodies.end(),
                               [&](const maximal::Body& b) { return b.name == name; });
  if (it == bodies.end()) name_node.fail("no body named '" + shown(name) + "'");
  return static_cast<int>(it - bodies.begin());
}

// A shape's pose in its body: "position" (3 numbers, m, default 0) and "orientation"
// (parse_orientation, default the body's axes).
SE3 shape_pose(const JsonNode& e) {
  SE3 g;
  if (const auto p = e.find("position")) g.x = p->vec3();
  if (const auto o = e.find("orientation")) g.R = parse_orientation(*o);
  return g;
}

// "velocity_constraints": [{"name", "type", "body", "point", "axis", "radius",
// "ground_normal"}] (docs/scene.md, Velocity constraints), after the mechanism's own.
std::vector<maximal::VelocityConstraint> parse_velocity_constraints(
    const JsonNode& list, const std::vector<maximal::Body>& bodies,
    std::vector<maximal::VelocityConstraint> out) {
  for (std::size_t i = 0; i < list.array_size(); ++i) {
    const JsonNode e = list[i];
    e.expect_keys({"name", "type", "body", "point", "axis", "radius", "ground_normal"});
    maximal::VelocityConstraint c;
    const std::string type = e.at("type").one_of({"skate", "rolling_wheel", "rolling_ball"});
    c.type = type == "skate"           ? maximal::VelocityConstraintType::Skate
             : type == "rolling_wheel" ? maximal::VelocityConstraintType::RollingWheel
                                       : maximal::VelocityConstraintType::RollingBall;
    c.body = body_index(e.at("body"), bodies);
    c.name = e.find("name") ? e.at("name").string() : type + "_" + std::to_string(i);
    if (const auto p = e.find("point")) c.point = p->vec3();
    if (const auto a = e.find("axis")) c.axis = a->vec3();
    if (const auto n = e.find("ground_normal")) c.ground_normal = n->vec3();
    if (c.type != maximal::VelocityConstraintType::Skate) c.radius = e.at("radius").number_greater(0.0);
    else if (e.find("radius")) e.at("radius").fail("a skate has no radius");
    out.push_back(std::move(c));
  }
  return out;
}

// "contact": {"surfaces": [...], "shapes": [...], "urdf_collisions": {"friction"}}
// (docs/scene.md, Contact).
maximal::Contacts parse_contacts(const JsonNode& c, const std::vector<maximal::Body>& bodies,
                                 const UrdfModel* urdf, bool floating_base,
                                 std::vector<std::string>& left_out) {
  c.expect_keys({"surfaces", "shapes", "urdf_collisions"});
  maximal::Contacts out;
  const JsonNode surfaces = c.at("surfaces");
  if (surfaces.array_size() == 0) surfaces.fail("expected at least one surface");
  for (std::size_t i = 0; i < surfaces.array_size(); ++i) {
    const JsonNode e = surfaces[i];
    e.expect_keys({"name", "normal", "point", "friction", "restitution"});
    maximal::Surface surface;
    if (const auto n = e.find("name")) surface.name = n->string();
    const Vec3 normal = e.find("normal") ? e.at("normal").vec3() : Vec3::UnitZ();
    const Vec3 point = e.find("point") ? e.at("point").vec3() : Vec3::Zero();
    if (!(normal.norm() > 0.0)) e.at("normal").fail("must be a non-zero vector");
    surface.half_space = with_field(e, [&] {
      return geometry::HalfSpace::through(point, normal.normalized());
    });
    if (const auto f = e.find("friction")) surface.friction = f->number_at_least(0.0);
    if (const auto r = e.find("restitution")) surface.restitution = r->number_in(0.0, 1.0);
    out.surfaces.push_back(std::move(surface));
  }
  if (const auto shapes = c.find("shapes")) {
    for (std::size_t i = 0; i < shapes->array_size(); ++i) {
      const JsonNode e = (*shapes)[i];
      e.expect_keys({"name", "body", "type", "radius", "half_length", "half_extents", "position",
                     "orientation", "friction", "restitution"});
      maximal::CollisionShape shape;
      shape.body = body_index(e.at("body"), bodies);
      shape.name = e.find("name") ? e.at("name").string() : bodies[std::size_t(shape.body)].name;
      if (const auto f = e.find("friction")) shape.friction = f->number_at_least(0.0);
      if (const auto r = e.find("restitution")) shape.restitution = r->number_in(0.0, 1.0);
      const SE3 g_bs = shape_pose(e);
      const std::string type = e.at("type").one_of({"sphere", "capsule", "box"});
      shape.shape = with_field(e, [&]() -> geometry::Shape {
        if (type == "sphere") return geometry::Sphere(e.at("radius").number_greater(0.0), g_bs);
        if (type == "capsule")
          return geometry::Capsule(e.at("radius").number_greater(0.0),
                                   e.at("half_length").number_greater(0.0), g_bs);
        return geometry::Box(e.at("half_extents").vec3(), g_bs);
      });
      out.shapes.push_back(std::move(shape));
    }
  }
  if (const auto u = c.find("urdf_collisions")) {
    if (urdf == nullptr) u->fail("only a URDF system has <collision> geometry");
    u->expect_keys({"friction"});
    const double friction = u->find("friction") ? u->at("friction").number_at_least(0.0) : 0.0;
    for (maximal::CollisionShape& shape :
         maximal::collision_shapes_from_urdf(*urdf, floating_base, friction, &left_out))
      out.shapes.push_back(std::move(shape));
  }
  return out;
}

// "initial_state": "base" {"position", "orientation", "linear_velocity",
// "angular_velocity"} moves the whole mechanism rigidly so that its first body (a floating
// base) has that pose, and gives every body the velocity of that rigid motion; then
// "clearance" (m) lifts it along the normal of the surface nearest to it until its lowest
// contact point is that far above its surface.
void place_mechanism(const JsonNode& s, const maximal::Model& model,
                     std::vector<BodyState>& state) {
  // Moving the whole mechanism would tear a joint to the world.
  auto check_free = [&](const JsonNode& field) {
    for (const maximal::Joint& j : model.joints()) {
      if (j.parent == maximal::kWorld)
        field.fail("the mechanism is held by joint '" + shown(j.name) +
                   "' to the world: only a free mechanism (a floating base) can be moved");
    }
  };
  if (const auto base = s.find("base")) {
    check_free(*base);
    base->expect_keys({"position", "orientation", "linear_velocity", "angular_velocity"});
    SE3 target{state[0].q.matrix(), state[0].x};
    if (const auto p = base->find("position")) target.x = p->vec3();
    if (const auto o = base->find("orientation")) target.R = parse_orientation(*o);
    const SE3 current{state[0].q.matrix(), state[0].x};
    const SE3 move = target * current.inverse();
    const Vec3 v = base->find("linear_velocity") ? base->at("linear_velocity").vec3() : Vec3::Zero();
    const Vec3 w = base->find("angular_velocity") ? base->at("angular_velocity").vec3() : Vec3::Zero();
    for (BodyState& b : state) {
      b.x = move.act(b.x);
      const Mat3 R = move.R * b.q.matrix();
      b.q = Quat::from_rotation(R);
      // The rigid motion's velocity: v at the base's centre, w in the world.
      b.v = v + w.cross(b.x - target.x);
      b.omega = R.transpose() * w;
    }
  }
  if (const auto c = s.find("clearance")) {
    const double clearance = c->number_at_least(0.0);
    if (model.contact_points().empty()) c->fail("the system has no contact points");
    check_free(*c);
    const maximal::Data data(model, state);
    std::size_t lowest = 0;
    for (std::size_t i = 1; i < data.contact.size(); ++i)
      if (data.contact[i].phi < data.contact[lowest].phi) lowest = i;
    const Vec3 lift = (clearance - data.contact[lowest].phi) * model.contact_points()[lowest].n;
    for (BodyState& b : state) b.x += lift;
  }
}

}  // namespace

void parse_maximal(const JsonNode& root, Scene& scene) {
  auto ms = std::make_shared<MaximalScene>();
  const JsonNode sys = root.at("system");
  if (int(sys.has("mechanism")) + int(sys.has("urdf")) + int(sys.has("mjcf")) != 1)
    sys.fail("expected exactly one of \"mechanism\", \"urdf\", \"mjcf\"");
  // The discrete velocities of an initial state given by joint rates depend on dt.
  const double dt = root.at("dt").number_greater(0.0);
  std::optional<Mechanism> mech;
  if (const auto m = sys.find("mechanism")) {
    sys.expect_keys({"type", "mechanism", "parameters", "gravity", "inputs", "springs", "dampers",
                     "limits", "contact", "velocity_constraints"});
    scene.source = m->one_of({"pendulum_chain", "closed_chain", "four_bar_chain", "minitaur_leg",
                              "chaplygin_sleigh", "rolling_disk", "trailer_train", "car",
                              "snakeboard"});
    mech.emplace(builtin_mechanism(sys, scene.source));
  } else {
    sys.expect_keys({"type", "urdf", "mjcf", "gravity", "base", "massless_joints", "inputs",
                     "springs", "dampers", "limits", "urdf_limits", "contact",
                     "velocity_constraints"});
    const SceneUrdf in = read_scene_urdf(sys, scene.file);
    scene.source = in.key();
    scene.urdf = std::make_shared<const UrdfModel>(in.urdf);
    scene.urdf_file = in.file;
    scene.urdf_floating_base = in.floating_base;
    mech.emplace(with_field(sys.at(in.key()), [&] {
      return maximal::mechanism_from_urdf(in.urdf, in.gravity(sys), in.floating_base);
    }));
  }
  if (const auto s = root.find("initial_state")) joint_initial_state(*s, dt, *mech);
  // Gravity, springs and dampers are the model's: rebuild it around the same bodies and
  // joints.
  std::vector<maximal::Joint> joints = mech->model.joints();
  if (const auto u = sys.find("urdf_limits"); u && u->boolean())
    maximal::set_limits_from_urdf(*scene.urdf, joints);
  parse_joint_elements(sys, joints);
  // "kinematic": {joint: signal}, each a revolute or prismatic joint whose coordinate
  // follows its initial value plus the signal (rad or m); the built-in vehicles' steering
  // joints are prescribed already and held without it.
  if (const auto k = root.find("kinematic")) {
    if (!k->is_object()) k->fail("expected an object {joint: signal}");
    for (const auto& item : k->raw().items()) {
      const JsonNode sig = k->at(item.key());
      const auto it = std::find_if(joints.begin(), joints.end(), [&](const maximal::Joint& j) {
        return j.name == item.key();
      });
      if (it == joints.end()) sig.fail("no joint named '" + shown(item.key()) + "'");
      if (maximal::joint_dofs(it->type) != 1)
        sig.fail("joint '" + shown(item.key()) + "' is not a revolute or prismatic joint");
      if (it->damping != 0.0 || std::isfinite(it->lower) || std::isfinite(it->upper))
        sig.fail("joint '" + shown(item.key()) + "' has a damper or limits; a prescribed "
                 "joint takes neither");
      it->prescribed = true;
      ms->prescribed[item.key()] =
          parse_signal(sig, 1, "displacement of '" + item.key() + "' [rad or m]");
    }
  }
  Vec3 gravity = mech->model.gravity();
  if (const auto g = sys.find("gravity")) gravity = g->vec3();
  maximal::Contacts contacts;
  if (const auto c = sys.find("contact")) {
    contacts = parse_contacts(*c, mech->model.bodies(), scene.urdf.get(),
                              scene.urdf_floating_base, scene.contact_left_out);
  }
  std::vector<maximal::VelocityConstraint> velocity = mech->model.velocity_constraints();
  if (const auto v = sys.find("velocity_constraints"))
    velocity = parse_velocity_constraints(*v, mech->model.bodies(), std::move(velocity));
  ms->model = with_field(sys, [&] {
    return std::make_shared<const maximal::Model>(mech->model.bodies(), joints, gravity,
                                                  mech->model.couplings(), contacts,
                                                  std::move(velocity));
  });
  if (const auto s = root.find("initial_state")) place_mechanism(*s, *ms->model, mech->state);
  // Memory before work: massless and point-mass bodies are solved with a dense block of
  // tree rows x degenerate rows and a square one per degenerate row (docs/maximal.md).
  const double degenerate = double(ms->model->degenerate_rows().size());
  const double need_degenerate =
      (double(ms->model->topology().tree_rows) + 2.0 * degenerate) * degenerate * sizeof(double);
  if (need_degenerate > double(scene.memory_bytes)) {
    sys.fail("its " + number_text(degenerate) + " rows of bodies without mass or with a "
             "singular inertia need about " + bytes_text(need_degenerate) +
             " for their exact treatment, over limits.memory_bytes = " +
             bytes_text(double(scene.memory_bytes)));
  }
  if (const auto in = sys.find("inputs")) {
    if (scene.urdf && !scene.urdf->actuators.empty())
      in->fail("the MJCF file's <motor>s are the inputs; remove this field");
    for (std::size_t i = 0; i < in->array_size(); ++i) {
      ms->input_joints.push_back(one_dof_joint((*in)[i], joints));
      if (joints[std::size_t(ms->input_joints.back())].prescribed)
        (*in)[i].fail("joint '" + shown((*in)[i].string()) + "' is prescribed (kinematic): its "
                      "path moves it, not a force");
    }
  }
  // An MJCF file's motors, in file order: gear * u on their joints, u clamped to ctrlrange.
  if (scene.urdf) {
    for (const UrdfActuator& a : scene.urdf->actuators) {
      const auto j = std::find_if(joints.begin(), joints.end(),
                                  [&](const maximal::Joint& joint) { return joint.name == a.joint; });
      if (j == joints.end() || maximal::joint_dofs(j->type) != 1)
        sys.at(scene.source).fail("motor \"" + a.name + "\": its joint \"" + a.joint +
                                  "\" is not a one-degree-of-freedom joint of the mechanism "
                                  "(welded, or not a hinge or slide joint)");
      ms->input_joints.push_back(int(j - joints.begin()));
      const double inf = std::numeric_limits<double>::infinity();
      ms->motors.push_back({a.gear, a.ctrl_limited ? a.ctrl_lower : -inf,
                            a.ctrl_limited ? a.ctrl_upper : inf});
    }
  }
  ms->state0 = std::move(mech->state);

  if (const auto in = root.find("integrator")) {
    in->expect_keys({"tolerance", "max_iterations", "line_search", "solver", "on_failure",
                     "max_subdivisions", "complementarity_tolerance", "contact_compliance",
                     "friction_angle_tolerance", "contact_relaxation"});
    if (const auto n = in->find("complementarity_tolerance"))
      ms->step.complementarity_tolerance = n->number_greater(0.0);
    if (const auto n = in->find("contact_compliance"))
      ms->step.contact_compliance = n->number_at_least(0.0);
    if (const auto n = in->find("friction_angle_tolerance"))
      ms->step.friction_angle_tolerance = n->number_greater(0.0);
    if (const auto n = in->find("contact_relaxation"))
      ms->step.contact_relaxation = n->number_at_least(0.0);
    NewtonOptions& newton = ms->step.newton;
    if (const auto n = in->find("tolerance")) newton.tolerance = n->number_greater(0.0);
    if (const auto n = in->find("max_iterations")) newton.max_iterations = n->integer(1, 1000);
    if (const auto n = in->find("line_search")) newton.line_search = n->boolean();
    // Failed steps are subdivided by sim::simulate, not inside maximal::step.
    parse_failure_policy(*in, scene.policy);
    if (const auto n = in->find("solver")) {
      ms->step.solver = n->one_of({"sparse", "dense"}) == "sparse" ? maximal::LinearSolver::SparseLDU
                                                                   : maximal::LinearSolver::DenseLU;
      // Memory before work: the dense matrix and its LU, n^2 doubles each, within
      // limits.memory_bytes.
      const double rows = maximal::system_size(*ms->model);
      const double need = 2.0 * rows * rows * sizeof(double);
      if (ms->step.solver == maximal::LinearSolver::DenseLU && need > double(scene.memory_bytes)) {
        std::ostringstream msg;
        msg << "the dense solver needs about " << bytes_text(need) << " for " << rows
            << " unknowns, over limits.memory_bytes = " << bytes_text(double(scene.memory_bytes))
            << "; the sparse solver (the default) needs O(n)";
        n->fail(msg.str());
      }
    }
  }
  if (const auto n = root.find("shape"))
    n->fail("maximal-coordinate systems take no such input; use system.inputs and controls, "
            "or kinematic");
  ms->controls = parse_input(root, "controls", int(ms->input_joints.size()),
                             ms->motors.empty()
                                 ? "joint inputs (one per system.inputs entry) [N m or N]"
                                 : "motor controls (one per <motor> of the MJCF file)");
  scene.system = std::move(*ms);
}

}  // namespace marsden::io::detail
