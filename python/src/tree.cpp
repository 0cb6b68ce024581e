// Tree systems from Python (tree paper): the model builder over frames, coordinates,
// masses, springs, dampers, inputs and constraints (python/marsden/tree.py wraps it with
// names, as trep does), the built-in models, URDF files, and the system of a model.
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "marsden/error.hpp"
#include "marsden/io/mjcf.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/sim/tree.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/model.hpp"
#include "marsden/urdf.hpp"
#include "module.hpp"
#include "recorded.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

using tree::Model;
using tree::ModelBuilder;
using tree::Transform;

Transform transform_of(const std::string& name) {
  static const char* names[] = {"tx", "ty", "tz", "rx", "ry", "rz"};
  for (int k = 0; k < 6; ++k)
    if (name == names[k]) return static_cast<Transform>(k);
  throw InputError("type: expected one of tx, ty, tz, rx, ry, rz, got \"" + name + "\"");
}

void check_coordinates(const Model& model, const Eigen::VectorXd& x, const char* name) {
  if (x.size() != model.num_coords())
    throw InputError(std::string(name) + ": expected " + std::to_string(model.num_coords()) +
                     " values (one per coordinate), got " + std::to_string(x.size()));
  if (!x.allFinite()) throw InputError(std::string(name) + ": not finite");
}

std::shared_ptr<const Model> shared(Model&& model) {
  return std::make_shared<const Model>(std::move(model));
}

// The builder's add_generated_potential / _force / _constraint, and a model copy with such
// elements added, each taking the compiled objects as paths.
using AddGenerated = void (ModelBuilder::*)(const std::string&);

auto add_generated(AddGenerated add) {
  return [add](ModelBuilder& b, const std::filesystem::path& library) {
    (b.*add)(library.string());
  };
}

auto with_generated(AddGenerated add) {
  return [add](const std::shared_ptr<const Model>& model,
               const std::vector<std::filesystem::path>& libraries) {
    if (!model) throw InputError("model: none given");
    ModelBuilder b(*model);
    for (const auto& library : libraries) (b.*add)(library.string());
    return shared(b.build());
  };
}

std::unique_ptr<sim::System> make_tree_system(
    nb::object model_object, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
    const std::string& method, std::shared_ptr<sim::Signal> controls,
    const std::vector<std::shared_ptr<sim::Signal>>& prescribed, double alpha, double tolerance,
    int stages, const std::string& quadrature) {
  const auto model = nb::cast<std::shared_ptr<const Model>>(model_object);
  if (!model) throw InputError("model: none given");
  sim::TreeSetup setup;
  setup.model = model;
  if (method != "midpoint" && method != "galerkin" && method != "rk4")
    throw InputError("method: expected \"midpoint\", \"galerkin\" or \"rk4\", got \"" + method +
                     "\"");
  setup.method = method == "midpoint"   ? sim::TreeMethod::Midpoint
                 : method == "galerkin" ? sim::TreeMethod::Galerkin
                                        : sim::TreeMethod::Rk4;
  if (!(alpha >= 0.0 && alpha <= 1.0)) throw InputError("alpha: must be in [0, 1]");
  if (!(tolerance > 0.0)) throw InputError("tolerance: must be > 0");
  if (stages < 1 || stages > tree::kGalerkinMaxStages)
    throw InputError("stages: must be in 1.." + std::to_string(tree::kGalerkinMaxStages) +
                     ", got " + std::to_string(stages));
  const auto rule = tree::galerkin_quadrature_from_name(quadrature);
  if (!rule)
    throw InputError("quadrature: expected \"lobatto\", \"gauss\" or \"radau\", got \"" +
                     quadrature + "\"");
  setup.midpoint.alpha = alpha;
  setup.midpoint.newton.tolerance = tolerance;
  setup.galerkin.newton.tolerance = tolerance;
  setup.galerkin.stages = stages;
  setup.galerkin.quadrature = *rule;
  const Eigen::Index n = model->num_coords();
  if (q0.size() != n || qd0.size() != n)
    throw InputError("q0 and qd0: the model has " + std::to_string(n) + " coordinates, got " +
                     std::to_string(q0.size()) + " and " + std::to_string(qd0.size()));
  setup.q0 = q0;
  setup.qd0 = qd0;
  setup.controls = std::move(controls);
  if (prescribed.size() > static_cast<std::size_t>(model->num_prescribed()))
    throw InputError("prescribed: " + std::to_string(prescribed.size()) + " signals for " +
                     std::to_string(model->num_prescribed()) + " prescribed coordinates");
  setup.prescribed.assign(prescribed.begin(), prescribed.end());
  setup.prescribed.resize(static_cast<std::size_t>(model->num_prescribed()));
  return recorded(sim::make_tree_system(setup), "tree.make_system",
                  nb::make_tuple(model_object, q0, qd0, method, setup.controls, prescribed, alpha,
                                 tolerance, stages, quadrature));
}

}  // namespace

void bind_tree(nb::module_ m) {
  nb::class_<Model>(m, "Model", nb::dynamic_attr(), "An immutable tree of frames (tree paper §II).")
      .def("__reduce__", &reduce_by_recipe,
           "Pickle and copy: the function of the marsden package that made it, called again.")
      .def_prop_ro("coordinates",
                   [](const Model& model) {
                     std::vector<std::string> names;
                     for (const auto& c : model.coords()) names.push_back(c.name);
                     return names;
                   },
                   "Coordinate names, in the model's order (the order of q).")
      .def_prop_ro("prescribed",
                   [](const Model& model) {
                     std::vector<std::string> names;
                     for (const int i : model.prescribed_coords())
                       names.push_back(model.coords()[std::size_t(i)].name);
                     return names;
                   },
                   "Names of the prescribed (kinematic) coordinates.")
      .def_prop_ro("frames",
                   [](const Model& model) {
                     std::vector<std::string> names;
                     for (const auto& f : model.frames()) names.push_back(f.name);
                     return names;
                   },
                   "Frame names, parents first (the fixed world frame is not one).")
      .def_prop_ro("num_inputs", &Model::num_inputs,
                   "Entries of the controls u: one per coordinate force, six per wrench.")
      .def_prop_ro("num_constraint_rows", &Model::num_constraint_rows,
                   "Rows of the holonomic constraints h(q) = 0.")
      .def_prop_ro(
          "gravity", [](const Model& model) -> Vec3 { return model.gravity(); },
          "Gravity in the world frame (3,), m/s^2.")
      .def("__repr__", [](nb::handle self) {
        const Model& model = nb::cast<const Model&>(self);
        return "Model(" + count_text(model.num_frames(), "frame") + ", " +
               count_text(model.num_coords(), "coordinate") + " (" +
               std::to_string(model.num_prescribed()) + " prescribed), " +
               count_text(model.num_inputs(), "input") + ", " +
               count_text(model.num_constraint_rows(), "constraint row") +
               recipe_origin(self) + ")";
      });

  nb::class_<ModelBuilder>(m, "ModelBuilder",
                           "Low-level model builder (indices); use marsden.tree.Builder.")
      .def(nb::init<>())
      .def(
          "add_joint_frame",
          [](ModelBuilder& b, const std::string& name, int parent, const std::string& type,
             const std::string& coordinate, bool prescribed) {
            return b.add_joint_frame(name, parent, transform_of(type), coordinate, prescribed);
          },
          nb::arg("name"), nb::arg("parent"), nb::arg("type"), nb::arg("coordinate"),
          nb::arg("prescribed") = false,
          "A frame under parent (a frame index, -1: the world) moved by a primitive type "
          "(\"tx\" .. \"rz\") of a new coordinate, prescribed or dynamic; returns its index.")
      .def(
          "add_fixed_frame",
          [](ModelBuilder& b, const std::string& name, int parent, const std::string& type,
             double value) { return b.add_fixed_frame(name, parent, transform_of(type), value); },
          nb::arg("name"), nb::arg("parent"), nb::arg("type"), nb::arg("value"),
          "A frame under parent by a primitive type fixed at value (m or rad); returns its "
          "index.")
      .def(
          "add_const_frame",
          [](ModelBuilder& b, const std::string& name, int parent, const Mat4& g) {
            return b.add_const_frame(name, parent, SE3{g.topLeftCorner<3, 3>(),
                                                       g.topRightCorner<3, 1>()});
          },
          nb::arg("name"), nb::arg("parent"), nb::arg("transform"),
          "A frame under parent by a constant transform (4x4 homogeneous matrix); returns "
          "its index.")
      .def("add_mass", &ModelBuilder::add_mass, nb::arg("frame"), nb::arg("mass"),
           nb::arg("com"), nb::arg("inertia"),
           "A rigid body on a frame: mass (kg), centre of mass com (3,) in the frame (m) and "
           "inertia (3x3, kg m^2) about it in the frame's axes.")
      .def("set_gravity", &ModelBuilder::set_gravity, nb::arg("g"),
           "Gravity (3,) in the world frame, m/s^2.")
      .def("set_limits", &ModelBuilder::set_limits, nb::arg("coord"), nb::arg("lower"),
           nb::arg("upper"), "Records a coordinate's limits (m or rad); not enforced.")
      .def("add_coordinate_spring", &ModelBuilder::add_coordinate_spring, nb::arg("coord"),
           nb::arg("stiffness"), nb::arg("rest"),
           "A linear spring on a coordinate: stiffness N/m or N m/rad, rest m or rad.")
      .def("add_frame_spring", &ModelBuilder::add_frame_spring, nb::arg("frame_a"),
           nb::arg("frame_b"), nb::arg("stiffness"), nb::arg("rest_length"),
           "A spring between two frames' origins: stiffness N/m, rest_length m.")
      .def("add_generated_potential", add_generated(&ModelBuilder::add_generated_potential),
           nb::arg("library"),
           "The potential compiled by marsden.symbolic.TreePotential at library, on the "
           "coordinates it names; InputError naming the file or coordinate otherwise.")
      .def("add_generated_force", add_generated(&ModelBuilder::add_generated_force),
           nb::arg("library"),
           "The same for a force compiled by marsden.symbolic.TreeForce.")
      .def("add_generated_constraint", add_generated(&ModelBuilder::add_generated_constraint),
           nb::arg("library"),
           "The same for a constraint compiled by marsden.symbolic.TreeConstraint.")
      .def("add_coordinate_damper", &ModelBuilder::add_coordinate_damper, nb::arg("coord"),
           nb::arg("damping"), "A viscous damper on a coordinate: N s/m or N m s/rad.")
      .def("add_frame_damper", &ModelBuilder::add_frame_damper, nb::arg("frame_a"),
           nb::arg("frame_b"), nb::arg("damping"),
           "A damper between two frames' origins, N s/m.")
      .def("add_coordinate_force_input", &ModelBuilder::add_coordinate_force_input,
           nb::arg("coord"), nb::arg("gear") = 1.0,
           nb::arg("lower") = -std::numeric_limits<double>::infinity(),
           nb::arg("upper") = std::numeric_limits<double>::infinity(),
           "A generalised force on a coordinate (N or N m) as one entry of the controls: "
           "gear * u with u clamped to [lower, upper] (a motor; by default u itself); "
           "returns its index in u.")
      .def("add_wrench_input", &ModelBuilder::add_wrench_input, nb::arg("frame"),
           nb::arg("body_axes"),
           "A wrench (torque, force) at a frame's origin, in its axes or the world's, as "
           "six entries of the controls; returns the first one's index in u.")
      .def("add_distance_constraint", &ModelBuilder::add_distance_constraint, nb::arg("name"),
           nb::arg("frame_a"), nb::arg("frame_b"), nb::arg("distance"),
           "|p_a - p_b| = distance (m) between two frames' origins.")
      .def("add_point_on_plane_constraint", &ModelBuilder::add_point_on_plane_constraint,
           nb::arg("name"), nb::arg("frame_a"), nb::arg("plane_frame"), nb::arg("normal"),
           "frame_a's origin on the plane through plane_frame's origin with normal (3,) in "
           "plane_frame's axes.")
      .def("add_point_to_point_constraint", &ModelBuilder::add_point_to_point_constraint,
           nb::arg("name"), nb::arg("frame_a"), nb::arg("frame_b"),
           "Two frames' origins coincide (3 rows).")
      .def("frame_index", &ModelBuilder::frame_index, nb::arg("name"),
           "A frame's index; InputError naming the frames when there is none of that name.")
      .def("coord_index", &ModelBuilder::coord_index, nb::arg("name"),
           "A coordinate's index; InputError naming the coordinates when there is none of "
           "that name.")
      .def("build", [](ModelBuilder& b) { return shared(b.build()); },
           "Validates the model and returns it; the builder is left empty.");

  m.def(
      "with_generated_potentials", with_generated(&ModelBuilder::add_generated_potential),
      nb::arg("model"), nb::arg("libraries"),
      "A copy of the model with the potentials compiled by marsden.symbolic.TreePotential "
      "added.");
  m.def(
      "with_generated_forces", with_generated(&ModelBuilder::add_generated_force),
      nb::arg("model"), nb::arg("libraries"),
      "A copy of the model with the forces compiled by marsden.symbolic.TreeForce added.");
  m.def(
      "with_generated_constraints", with_generated(&ModelBuilder::add_generated_constraint),
      nb::arg("model"), nb::arg("libraries"),
      "A copy of the model with the constraints compiled by marsden.symbolic.TreeConstraint "
      "added.");
  m.def(
      "n_link_pendulum",
      [](int n, double length, double mass, double damping) {
        tree::PendulumParams p;
        p.length = length;
        p.mass = mass;
        p.damping = damping;
        return shared(tree::n_link_pendulum(n, p));
      },
      nb::arg("n"), nb::arg("length") = 1.0, nb::arg("mass") = 1.0, nb::arg("damping") = 0.0,
      "The planar chain of the tree paper's Fig. 3: coordinates q1..qn (rad), point masses "
      "(kg) at the links' ends (m), hanging along -z.");
  m.def("four_bar", [] { return shared(tree::four_bar()); },
        "The crank-rocker four-bar linkage (coordinates crank, coupler, rocker).");
  m.def(
      "four_bar_state",
      [](double crank_angle, double crank_rate) {
        const tree::FourBarState x = tree::four_bar_state(tree::FourBarParams(), crank_angle,
                                                          crank_rate);
        return std::make_pair(Eigen::VectorXd(x.q), Eigen::VectorXd(x.qd));
      },
      nb::arg("crank_angle"), nb::arg("crank_rate") = 0.0,
      "(q, qd) of the assembled four_bar() at a crank angle (rad) and rate (rad/s).");
  m.def(
      "marionette_configuration",
      [](const std::shared_ptr<const Model>& model, const Eigen::VectorXd& q) -> Eigen::VectorXd {
        return tree::marionette_configuration(*model, q);
      },
      nb::arg("model"), nb::arg("q"),
      "A consistent configuration of marionette(): the body posed by q's dynamic "
      "coordinates, each string end straight above its attachment point.");
  m.def("marionette", [] { return shared(tree::marionette()); },
        "The marionette of the tree paper §VIII (15 prescribed string coordinates).");
  m.def(
      "model_from_urdf",
      [](const std::filesystem::path& path, const Vec3& gravity, bool floating_base,
         bool weld_massless_joints) {
        UrdfTreeOptions options;
        options.gravity = gravity;
        options.floating_base = floating_base;
        UrdfModel urdf = io::read_urdf(path);
        if (weld_massless_joints) urdf = weld_joints_moving_no_mass(std::move(urdf));
        return shared(tree::model_from_urdf(urdf, options));
      },
      nb::arg("path"), nb::arg("gravity") = Vec3(0.0, 0.0, -9.81),
      nb::arg("floating_base") = false, nb::arg("weld_massless_joints") = false,
      "A URDF file as a tree model (docs/urdf.md): one coordinate per moving joint, named "
      "as the joint; with floating_base six more for the root (ROOT_x, _y, _z, _yaw, "
      "_pitch, _roll: world position and Z-Y-X Euler angles). A joint that moves no mass "
      "is an error, or with weld_massless_joints a fixed joint (no coordinate).");
  m.def(
      "model_from_mjcf",
      [](const std::filesystem::path& path, bool weld_massless_joints) {
        UrdfModel description = io::read_mjcf(path);
        if (weld_massless_joints) description = weld_joints_moving_no_mass(std::move(description));
        UrdfTreeOptions options;
        options.gravity = description.gravity;
        options.floating_base = description.floating_root;
        options.base_pose = description.root_pose;
        return shared(tree::model_from_urdf(description, options));
      },
      nb::arg("path"), nb::arg("weld_massless_joints") = false,
      "An MJCF file as a tree model (docs/mjcf.md), gravity from its <option>: one "
      "coordinate per hinge or slide joint, named as the joint, zero at the file's pose "
      "(MuJoCo's qpos0); a <freejoint> root adds six (ROOT_x, _y, _z, _yaw, _pitch, _roll) "
      "from the root's pose in the file. Armature and joint springs are the model's, and "
      "its inputs are the <motor>s in file order: gear * u, u clamped to ctrlrange.");
  m.def(
      "lagrangian_terms",
      [](const std::shared_ptr<const Model>& model, const Eigen::VectorXd& q,
         const Eigen::VectorXd& qd) {
        check_coordinates(*model, q, "q");
        check_coordinates(*model, qd, "qd");
        tree::Data data(*model);
        tree::lagrangian_terms(*model, data, q, qd, true);
        nb::dict out;
        out["kinetic"] = data.kinetic;
        out["potential"] = data.potential;
        out["L_q"] = Eigen::VectorXd(data.L_q);
        out["L_v"] = Eigen::VectorXd(data.L_v);
        out["L_qv"] = Eigen::MatrixXd(data.L_qv);
        out["M"] = Eigen::MatrixXd(data.M);
        return out;
      },
      nb::arg("model"), nb::arg("q"), nb::arg("qd"),
      "L = T - V and its derivatives at (q, qd) over all coordinates (tree paper eqs. "
      "(15)-(18)): kinetic, potential (J), L_q, L_v, L_qv (d2L/dq_i dqd_j) and the mass "
      "matrix M. The equations of motion read M qdd = L_q - L_qv^T qd + Q.");
  m.def(
      "continuous_dynamics",
      [](const std::shared_ptr<const Model>& model, const Eigen::VectorXd& q,
         const Eigen::VectorXd& qd, const std::optional<Eigen::VectorXd>& u) {
        check_coordinates(*model, q, "q");
        check_coordinates(*model, qd, "qd");
        const Eigen::VectorXd inputs = u ? *u : Eigen::VectorXd::Zero(model->num_inputs());
        if (inputs.size() != model->num_inputs())
          throw InputError("u: expected " + std::to_string(model->num_inputs()) +
                           " inputs, got " + std::to_string(inputs.size()));
        tree::Data data(*model);
        const tree::Acceleration a = tree::continuous_dynamics(
            *model, data, q, qd, inputs, Eigen::VectorXd::Zero(model->num_prescribed()));
        return std::make_pair(Eigen::VectorXd(a.qdd), Eigen::VectorXd(a.lambda));
      },
      nb::arg("model"), nb::arg("q"), nb::arg("qd"), nb::arg("u").none() = nb::none(),
      "(qdd, lambda): the accelerations of eq. (14) with dampers, inputs u and the "
      "constraint forces Dh^T lambda, prescribed coordinates unaccelerated.");
  m.def("make_system", &make_tree_system, nb::arg("model"), nb::arg("q0"), nb::arg("qd0"),
        nb::arg("method") = "midpoint", nb::arg("controls").none() = nullptr,
        nb::arg("prescribed") = std::vector<std::shared_ptr<sim::Signal>>(),
        nb::arg("alpha") = 0.5, nb::arg("tolerance") = 1e-10, nb::arg("stages") = 2,
        nb::arg("quadrature") = "lobatto",
        "The system of a tree model at (q0, qd0) (rad or m; per second): the midpoint VI, "
        "the Galerkin VI of order 2 stages, or RK4; controls (num_inputs components) and prescribed coordinates' "
        "displacements (1 component each) are Signals.");
}

}  // namespace marsden::python
