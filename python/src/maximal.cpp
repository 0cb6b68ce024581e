// Mechanisms in maximal coordinates from Python (maximal-coordinates paper): the paper's
// builders and URDF files give a Mechanism (bodies, joints, a consistent state); its
// system takes springs, dampers, limits and joint inputs by joint name, initial joint
// coordinates and rates, contact shapes and surfaces (docs/contact.md), and the linear
// solver.
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "marsden/error.hpp"
#include "marsden/io/mjcf.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/sim/maximal.hpp"
#include "marsden/urdf.hpp"
#include "module.hpp"
#include "recorded.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

using maximal::JointCoords;
using maximal::Mechanism;

maximal::JointType joint_type(const std::string& name) {
  if (name == "revolute") return maximal::JointType::Revolute;
  if (name == "spherical") return maximal::JointType::Spherical;
  throw InputError("joint: expected \"revolute\" or \"spherical\", got \"" + name + "\"");
}

int joint_index(const maximal::Model& model, const std::string& name, const char* what) {
  for (int j = 0; j < model.num_joints(); ++j)
    if (model.joints()[std::size_t(j)].name == name) return j;
  throw InputError(std::string(what) + ": no joint named '" + name + "'");
}

// A shape (body name, "sphere" | "capsule" | "box", sizes: radius | radius, half length |
// half extents, position in the body, friction, restitution) and a surface (normal, a point
// on it, friction, restitution), as marsden.maximal.system passes them.
using ShapeArgs =
    std::tuple<std::string, std::string, std::vector<double>, std::vector<double>, double, double>;
using SurfaceArgs = std::tuple<std::vector<double>, std::vector<double>, double, double>;

// (name, body, type, point, axis, radius, ground_normal), as marsden.maximal.system makes it.
using VelocityArgs = std::tuple<std::string, std::string, std::string, std::vector<double>,
                                std::vector<double>, double, std::vector<double>>;

Vec3 three(const std::vector<double>& v, const std::string& what) {
  if (v.size() != 3) throw InputError(what + ": expected 3 numbers, got " + std::to_string(v.size()));
  return Vec3(v[0], v[1], v[2]);
}

int body_named(const maximal::Model& model, const std::string& name, const std::string& what) {
  for (int k = 0; k < model.num_bodies(); ++k)
    if (model.bodies()[std::size_t(k)].name == name) return k;
  throw InputError(what + ": no body named '" + name + "'");
}

// The mechanism's velocity constraints, then the given ones.
std::vector<maximal::VelocityConstraint> velocity_constraints_of(
    const maximal::Model& model, const std::vector<VelocityArgs>& given) {
  std::vector<maximal::VelocityConstraint> out = model.velocity_constraints();
  for (std::size_t i = 0; i < given.size(); ++i) {
    const auto& [name, body, type, point, axis, radius, normal] = given[i];
    const std::string what = "velocity_constraints[" + std::to_string(i) + "]";
    maximal::VelocityConstraint c;
    c.name = name;
    c.body = body_named(model, body, what + ".body");
    if (type == "skate") c.type = maximal::VelocityConstraintType::Skate;
    else if (type == "rolling_wheel") c.type = maximal::VelocityConstraintType::RollingWheel;
    else if (type == "rolling_ball") c.type = maximal::VelocityConstraintType::RollingBall;
    else
      throw InputError(what + ".type: expected \"skate\", \"rolling_wheel\" or \"rolling_ball\", got \"" +
                       type + "\"");
    c.point = three(point, what + ".point");
    c.axis = three(axis, what + ".axis");
    c.radius = radius;
    c.ground_normal = three(normal, what + ".ground_normal");
    out.push_back(std::move(c));
  }
  return out;
}

maximal::Contacts contacts_of(const maximal::Model& model, const std::vector<ShapeArgs>& shapes,
                              const std::vector<SurfaceArgs>& surfaces) {
  maximal::Contacts contacts;
  for (std::size_t i = 0; i < surfaces.size(); ++i) {
    const auto& [normal, point, friction, restitution] = surfaces[i];
    const std::string what = "surfaces[" + std::to_string(i) + "]";
    const Vec3 n = three(normal, what + ".normal");
    if (!(n.norm() > 0.0)) throw InputError(what + ".normal: must be a non-zero vector");
    contacts.surfaces.push_back(
        {"", geometry::HalfSpace::through(three(point, what + ".point"), n.normalized()), friction,
         restitution});
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& [body, type, sizes, position, friction, restitution] = shapes[i];
    const std::string what = "shapes[" + std::to_string(i) + "]";
    const int b = body_named(model, body, what + ".body");
    SE3 g_bs;
    g_bs.x = three(position, what + ".position");
    const std::size_t need = type == "sphere" ? 1 : type == "capsule" ? 2 : type == "box" ? 3 : 0;
    if (need == 0)
      throw InputError(what + ".type: expected \"sphere\", \"capsule\" or \"box\", got \"" + type + "\"");
    if (sizes.size() != need)
      throw InputError(what + ": a " + type + " takes " + std::to_string(need) + " sizes, got " +
                       std::to_string(sizes.size()));
    geometry::Shape shape = type == "sphere"    ? geometry::Shape(geometry::Sphere(sizes[0], g_bs))
                            : type == "capsule" ? geometry::Shape(geometry::Capsule(sizes[0], sizes[1], g_bs))
                                                : geometry::Shape(geometry::Box(Vec3(sizes[0], sizes[1], sizes[2]), g_bs));
    contacts.shapes.push_back({body, b, std::move(shape), friction, restitution});
  }
  return contacts;
}

std::unique_ptr<sim::System> make_maximal_system(
    nb::object mechanism, const std::vector<std::string>& inputs,
    std::shared_ptr<sim::Signal> controls, const std::map<std::string, std::pair<double, double>>& springs,
    const std::map<std::string, double>& dampers,
    const std::map<std::string, std::vector<double>>& q,
    const std::map<std::string, std::vector<double>>& qd, double dt, const std::string& solver,
    double tolerance, const std::map<std::string, std::pair<double, double>>& limits,
    const std::vector<ShapeArgs>& shapes, const std::vector<SurfaceArgs>& surfaces,
    const std::vector<VelocityArgs>& velocity_constraints,
    const std::map<std::string, std::shared_ptr<sim::Signal>>& kinematic,
    const std::vector<std::tuple<std::string, double, double, double>>& motors) {
  const Mechanism& mech = nb::cast<const Mechanism&>(mechanism);
  std::vector<maximal::Joint> joints = mech.model.joints();
  auto one_dof = [&](const std::string& name, const char* what) -> maximal::Joint& {
    maximal::Joint& joint = joints[std::size_t(joint_index(mech.model, name, what))];
    if (maximal::joint_dofs(joint.type) != 1)
      throw InputError(std::string(what) + ": joint '" + name +
                       "' is not a revolute or prismatic joint");
    return joint;
  };
  for (const auto& [name, spring] : springs) {
    if (!(spring.first >= 0.0)) throw InputError("springs: stiffness of '" + name + "' < 0");
    one_dof(name, "springs").stiffness = spring.first;
    one_dof(name, "springs").rest = spring.second;
  }
  for (const auto& [name, c] : dampers) {
    if (!(c >= 0.0)) throw InputError("dampers: damping of '" + name + "' < 0");
    one_dof(name, "dampers").damping = c;
  }
  for (const auto& [name, bounds] : limits) {
    one_dof(name, "limits").lower = bounds.first;
    one_dof(name, "limits").upper = bounds.second;
  }
  std::map<std::string, std::shared_ptr<const sim::Signal>> paths;
  for (const auto& [name, path] : kinematic) {
    if (!path) throw InputError("kinematic: the path of '" + name + "' is None");
    one_dof(name, "kinematic").prescribed = true;
    paths.emplace(name, path);
  }
  if (!shapes.empty() && surfaces.empty())
    throw InputError("shapes: a contact needs at least one of surfaces");
  if (solver != "sparse" && solver != "dense")
    throw InputError("solver: expected \"sparse\" or \"dense\", got \"" + solver + "\"");
  if (!(tolerance > 0.0)) throw InputError("tolerance: must be > 0");
  if (!(dt > 0.0)) throw InputError("dt: must be > 0");
  sim::MaximalSetup setup;
  setup.model = std::make_shared<const maximal::Model>(
      mech.model.bodies(), joints, mech.model.gravity(), mech.model.couplings(),
      contacts_of(mech.model, shapes, surfaces),
      velocity_constraints_of(mech.model, velocity_constraints));
  const maximal::Model& model = *setup.model;
  // Initial joint coordinates and rates over the mechanism's own (dt: the step the
  // discrete velocities are taken over).
  std::vector<JointCoords> q0 = maximal::current_joint_coordinates(model, mech.state), qd0;
  for (const JointCoords& c : q0) qd0.push_back(JointCoords::Zero(c.size()));
  auto set = [&](const std::map<std::string, std::vector<double>>& values,
                 std::vector<JointCoords>& out, const char* what) {
    for (const auto& [name, v] : values) {
      const auto j = std::size_t(joint_index(model, name, what));
      if (v.size() != std::size_t(out[j].size()))
        throw InputError(std::string(what) + ": joint '" + name + "' has " +
                         std::to_string(out[j].size()) + " coordinates, got " +
                         std::to_string(v.size()));
      for (std::size_t i = 0; i < v.size(); ++i) out[j](Eigen::Index(i)) = v[i];
    }
  };
  set(q, q0, "q");
  set(qd, qd0, "qd");
  setup.state0 = q.empty() && qd.empty()
                     ? mech.state
                     : maximal::set_joint_state(model, mech.state, q0, qd0, dt);
  setup.step.solver = solver == "sparse" ? maximal::LinearSolver::SparseLDU
                                         : maximal::LinearSolver::DenseLU;
  setup.step.newton.tolerance = tolerance;
  for (const std::string& name : inputs) setup.input_joints.push_back(joint_index(model, name, "inputs"));
  if (!motors.empty() && !inputs.empty())
    throw InputError("inputs: the MJCF file's <motor>s are the inputs; leave inputs out");
  for (const auto& [joint, gear, lower, upper] : motors) {
    setup.input_joints.push_back(joint_index(model, joint, "motors"));
    setup.motors.push_back({gear, lower, upper});
  }
  setup.controls = controls;
  setup.prescribed = std::move(paths);
  return recorded(sim::make_maximal_system(setup), "maximal.make_system",
                  nb::make_tuple(mechanism, inputs, controls, springs, dampers, q, qd, dt,
                                 solver, tolerance, limits, shapes, surfaces,
                                 velocity_constraints, kinematic, motors));
}

}  // namespace

void bind_maximal(nb::module_ m) {
  nb::class_<Mechanism>(m, "Mechanism", nb::dynamic_attr(),
                        "Bodies joined by joints, with a state consistent with the joints.")
      .def("__reduce__", &reduce_by_recipe,
           "Pickle and copy: the function of the marsden package that made it, called again.")
      .def_prop_ro("bodies",
                   [](const Mechanism& mech) {
                     std::vector<std::string> names;
                     for (const auto& b : mech.model.bodies()) names.push_back(b.name);
                     return names;
                   },
                   "Body names, in the order of the rows' NAME_x .. NAME_qz columns.")
      .def_prop_ro("velocity_constraints",
                   [](const Mechanism& mech) {
                     std::vector<std::pair<std::string, std::string>> out;
                     for (const auto& c : mech.model.velocity_constraints())
                       out.emplace_back(c.name, maximal::velocity_constraint_type_name(c.type));
                     return out;
                   },
                   "(name, type) of every velocity constraint: skate, rolling_wheel, "
                   "rolling_ball.")
      .def_prop_ro("joints",
                   [](const Mechanism& mech) {
                     std::vector<std::pair<std::string, std::string>> out;
                     for (const auto& j : mech.model.joints())
                       out.emplace_back(j.name, maximal::joint_type_name(j.type));
                     return out;
                   },
                   "(name, type) of every joint.")
      .def("__repr__", [](nb::handle self) {
        const Mechanism& mech = nb::cast<const Mechanism&>(self);
        return "Mechanism(" + count_text(mech.model.num_bodies(), "body", "bodies") + ", " +
               count_text(mech.model.num_joints(), "joint") + recipe_origin(self) + ")";
      });

  m.def(
      "pendulum_chain",
      [](int n, const std::string& joint, double link_length, double link_mass,
         double initial_angle) {
        maximal::ChainOptions o;
        o.joint = joint_type(joint);
        o.link_length = link_length;
        o.link_mass = link_mass;
        o.initial_angle = initial_angle;
        return maximal::pendulum_chain(n, o);
      },
      nb::arg("n"), nb::arg("joint") = "revolute", nb::arg("link_length") = 1.0,
      nb::arg("link_mass") = 1.0, nb::arg("initial_angle") = 0.5,
      "n links (m, kg) hanging from the world, joints joint0..; the first at initial_angle "
      "(rad).");
  m.def(
      "closed_chain",
      [](int n, const std::string& joint) {
        maximal::ChainOptions o;
        o.joint = joint_type(joint);
        return maximal::closed_chain(n, o);
      },
      nb::arg("n"), nb::arg("joint") = "revolute",
      "n links closing a regular (n + 1)-gon with the world.");
  m.def("four_bar_chain", &maximal::four_bar_chain, nb::arg("k"), nb::arg("tilt") = 0.3,
        nb::arg("gravity") = Vec3(0.0, 0.0, -9.81),
        "k stacked parallelogram four-bar segments (redundant loop constraints).");
  m.def("minitaur_leg", &maximal::minitaur_leg, nb::arg("hip_half_angle") = 0.5,
        "The five-bar leg of the paper's Minitaur example.");
  m.def("chaplygin_sleigh", &maximal::chaplygin_sleigh, nb::arg("mass") = 1.0,
        nb::arg("inertia") = 0.1, nb::arg("skate_offset") = 0.5,
        "The Chaplygin sleigh: a body on a planar joint 'plane' with a skate (docs/maximal.md).");
  m.def("trailer_train", &maximal::trailer_train, nb::arg("trailers"), nb::arg("steering") = 0.0,
        "A tractor pulling trailers, each body on an axle that cannot slide sideways "
        "(docs/maximal.md).");
  m.def("rolling_disk", &maximal::rolling_disk, nb::arg("mass") = 1.0, nb::arg("radius") = 0.5,
        "The vertical rolling disk: a disk on a massless fork, rolling without slip "
        "(docs/maximal.md).");
  m.def(
      "car",
      [](double mass, double wheel_inertia, double body_inertia, double wheel_radius,
         double axle_distance, double steering, double steering_inertia) {
        return maximal::car({mass, wheel_inertia, body_inertia, wheel_radius, axle_distance},
                            steering, steering_inertia);
      },
      nb::arg("mass") = 1.0, nb::arg("wheel_inertia") = 0.1, nb::arg("body_inertia") = 0.2,
      nb::arg("wheel_radius") = 0.3, nb::arg("axle_distance") = 1.0, nb::arg("steering") = 0.0,
      nb::arg("steering_inertia") = 0.0,
      "The car of Kelly and Murray from bodies: chassis, rear wheel rolling without slip, "
      "steered front wheel set with a skate (docs/maximal.md).");
  m.def("snakeboard", &maximal::snakeboard, nb::arg("mass") = 1.0, nb::arg("half_length") = 0.5,
        nb::arg("rotor_inertia") = 0.1, nb::arg("wheel_inertia") = 0.05,
        "The snakeboard from bodies: board, rotor, two skated wheel sets with mirrored "
        "steering (docs/maximal.md).");
  m.def(
      "mechanism_from_urdf",
      [](const std::filesystem::path& path, const Vec3& gravity, bool floating_base,
         bool weld_massless_joints) {
        UrdfModel urdf = io::read_urdf(path);
        if (weld_massless_joints) urdf = weld_joints_moving_no_mass(std::move(urdf));
        return maximal::mechanism_from_urdf(urdf, gravity, floating_base);
      },
      nb::arg("path"), nb::arg("gravity") = Vec3(0.0, 0.0, -9.81),
      nb::arg("floating_base") = false, nb::arg("weld_massless_joints") = false,
      "A URDF file in maximal coordinates (docs/urdf.md), at its zero configuration: one "
      "body per group of links welded by fixed joints; the root's group fixed to the world "
      "or, with floating_base, free. A joint that moves no mass is an error, or with "
      "weld_massless_joints a fixed joint.");
  m.def(
      "mechanism_from_mjcf",
      [](const std::filesystem::path& path, bool weld_massless_joints) {
        UrdfModel description = io::read_mjcf(path);
        if (weld_massless_joints) description = weld_joints_moving_no_mass(std::move(description));
        nb::object mech = nb::cast(maximal::mechanism_from_urdf(
            description, description.gravity, description.floating_root));
        // The file's <motor>s, in file order, for system(): (joint, gear, lower, upper).
        nb::list motors;
        const double inf = std::numeric_limits<double>::infinity();
        for (const UrdfActuator& a : description.actuators)
          motors.append(nb::make_tuple(a.joint, a.gear, a.ctrl_limited ? a.ctrl_lower : -inf,
                                       a.ctrl_limited ? a.ctrl_upper : inf));
        mech.attr("motors") = motors;
        return mech;
      },
      nb::arg("path"), nb::arg("weld_massless_joints") = false,
      "An MJCF file in maximal coordinates (docs/mjcf.md), gravity from its <option>, at "
      "the file's pose with the root at the world origin; a <freejoint> root is a free body; "
      "its <motor>s as the attribute motors, (joint, gear, lower, upper) in file order. "
      "Armature and joint stiffness are an error (no maximal form yet).");
  m.def(
      "joint_coordinates",
      [](const maximal::Mechanism& mech, const Eigen::MatrixXd& poses) {
        const maximal::Model& model = mech.model;
        if (poses.rows() != model.num_bodies() || poses.cols() != 7)
          throw InputError("poses: expected shape (" + std::to_string(model.num_bodies()) +
                           ", 7), one row (x, y, z, qw, qx, qy, qz) per body, got (" +
                           std::to_string(poses.rows()) + ", " + std::to_string(poses.cols()) + ")");
        std::vector<maximal::BodyState> state(model.num_bodies());
        for (int b = 0; b < model.num_bodies(); ++b) {
          state[b].x = poses.row(b).head<3>().transpose();
          state[b].q.q = poses.row(b).tail<4>().transpose();
          if (!poses.row(b).allFinite() || state[b].q.q.norm() < 1e-12)
            throw InputError("poses: row " + std::to_string(b) + " is not finite or has a zero quaternion");
          state[b].q.q.normalize();
        }
        const std::vector<maximal::JointCoords> q = maximal::current_joint_coordinates(model, state);
        std::map<std::string, Eigen::VectorXd> out;
        for (int j = 0; j < model.num_joints(); ++j) out[model.joints()[j].name] = q[j];
        return out;
      },
      nb::arg("mechanism"), nb::arg("poses"),
      "{joint: coordinates} of the mechanism at body poses (one row x, y, z, qw, qx, qy, "
      "qz per body, as a trajectory's columns BODY_x .. BODY_qz).");
  m.def("make_system", &make_maximal_system, nb::arg("mechanism"),
        nb::arg("inputs") = std::vector<std::string>(), nb::arg("controls").none() = nullptr,
        nb::arg("springs") = std::map<std::string, std::pair<double, double>>(),
        nb::arg("dampers") = std::map<std::string, double>(),
        nb::arg("q") = std::map<std::string, std::vector<double>>(),
        nb::arg("qd") = std::map<std::string, std::vector<double>>(), nb::arg("dt") = 0.01,
        nb::arg("solver") = "sparse", nb::arg("tolerance") = 1e-10,
        nb::arg("limits") = std::map<std::string, std::pair<double, double>>(),
        nb::arg("shapes") = std::vector<ShapeArgs>(), nb::arg("surfaces") = std::vector<SurfaceArgs>(),
        nb::arg("velocity_constraints") = std::vector<VelocityArgs>(),
        nb::arg("kinematic") = std::map<std::string, std::shared_ptr<sim::Signal>>(),
        nb::arg("motors") = std::vector<std::tuple<std::string, double, double, double>>(),
        "The system of a mechanism (marsden.maximal.system spells its arguments): springs "
        "{joint: (stiffness, rest)}, dampers {joint: damping}, q and qd {joint: "
        "coordinates}, limits {joint: (lower, upper)}, contact shapes (body, type, sizes, "
        "position, friction, restitution), surfaces (normal, point, friction, restitution) and "
        "velocity constraints (name, body, type, point, axis, radius, ground_normal), kinematic "
        "{joint: displacement signal}, motors (joint, gear, lower, upper) as the inputs; "
        "InputError naming the joint or value.");
}

}  // namespace marsden::python
