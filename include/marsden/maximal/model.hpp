// Mechanisms in maximal coordinates (maximal-coordinates paper §2.2): rigid bodies with
// six degrees of freedom each, joined by position-level constraints. The Model is
// immutable once built; everything that changes in a simulation lives in Data.
// Units SI, world z up; a body's pose is (x, q): position of its centre of mass in the
// world and the unit quaternion mapping body to world (Hamilton, local to global);
// its angular velocity is in the body frame, as in eq. (16).
#pragma once

#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "marsden/lie/quaternion.hpp"
#include "marsden/maximal/contact.hpp"
#include "marsden/lie/types.hpp"

namespace marsden::maximal {

inline constexpr int kWorld = -1;

enum class JointType { Fixed, Revolute, Prismatic, Spherical, Cylindrical, Planar, Universal };

// What a joint leaves free, as a slide of the child's anchor from the parent's and a turn
// of the child relative to the parent (joint axes in the parent frame), with the
// coordinates of each, slide first:
//   Slide::None  no slide: 3 anchor rows          Turn::None       no turn: 3 rotation rows
//   Slide::Axis  along axis (m): 2 rows           Turn::Axis       about axis (rad): 2 rows
//   Slide::Plane in the plane normal to axis,     Turn::Universal  about axis, then about
//                along a fixed orthonormal pair                    axis2 (rad): 1 row
//                (x, y for axis z) (m): 1 row     Turn::Ball       rotation vector: 0 rows
// A joint constrains the rest (src/maximal/joints.cpp builds its rows, their derivatives,
// its placement and coordinates from these two kinds), so a new joint type is a row of
// kJointKinds, and a new kind is a case in joints.cpp, each checked against finite
// differences by tests/maximal/test_maximal.cpp.
enum class Slide { None, Axis, Plane };
enum class Turn { None, Axis, Universal, Ball };

struct JointKind {
  JointType type;
  const char* name;
  Slide slide;
  Turn turn;
};

// The joint types, in JointType order.
inline constexpr JointKind kJointKinds[] = {
    {JointType::Fixed, "fixed", Slide::None, Turn::None},
    {JointType::Revolute, "revolute", Slide::None, Turn::Axis},
    {JointType::Prismatic, "prismatic", Slide::Axis, Turn::None},
    {JointType::Spherical, "spherical", Slide::None, Turn::Ball},
    {JointType::Cylindrical, "cylindrical", Slide::Axis, Turn::Axis},
    {JointType::Planar, "planar", Slide::Plane, Turn::Axis},
    {JointType::Universal, "universal", Slide::None, Turn::Universal},
};

constexpr bool joint_kinds_in_order() {
  for (int i = 0; i < int(std::size(kJointKinds)); ++i)
    if (static_cast<int>(kJointKinds[i].type) != i) return false;
  return true;
}
static_assert(joint_kinds_in_order(), "kJointKinds must list the joint types in order");

constexpr const JointKind& joint_kind(JointType type) {
  return kJointKinds[static_cast<int>(type)];
}
constexpr const char* joint_type_name(JointType type) { return joint_kind(type).name; }

constexpr int slide_dofs(Slide s) { return s == Slide::None ? 0 : s == Slide::Axis ? 1 : 2; }
constexpr int turn_dofs(Turn t) {
  return t == Turn::None ? 0 : t == Turn::Axis ? 1 : t == Turn::Universal ? 2 : 3;
}

// Inline, as the constraint and step row counts: every residual evaluation asks them per
// joint.
constexpr int joint_dofs(JointType type) {
  return slide_dofs(joint_kind(type).slide) + turn_dofs(joint_kind(type).turn);
}

// Number of constraint rows (6 minus the joint's degrees of freedom).
constexpr int constraint_rows(JointType type) { return 6 - joint_dofs(type); }

// mass >= 0 and inertia symmetric positive semi-definite. A degenerate body (no mass, or a
// singular inertia such as a point mass's) is allowed where its joints determine its
// motion: a massless link between two revolute joints with different axes, a point mass
// off its joint's axis; at least one body has a mass.
struct Body {
  std::string name;
  double mass = 1.0;
  Mat3 inertia = Mat3::Identity();  // about the centre of mass, body frame
};

// A joint between `parent` (a body index or kWorld) and `child`. The joint frame is
// attached to the parent: anchors p_parent (parent frame, or world for kWorld) and
// p_child (child frame) coincide, and at joint coordinate zero the child's orientation
// is q_parent * q_offset. Axes are unit vectors in the parent frame: `axis` is the
// hinge / slide / plane normal; `axis2` the child-side axis of a universal joint
// (orthogonal to `axis` at zero).
struct Joint {
  std::string name;
  JointType type = JointType::Revolute;
  int parent = kWorld;
  int child = 0;
  Vec3 p_parent = Vec3::Zero();
  Vec3 p_child = Vec3::Zero();
  Quat q_offset;
  Vec3 axis = Vec3::UnitZ();
  Vec3 axis2 = Vec3::UnitX();
  // Spring and damper on the coordinate of a one-degree-of-freedom joint (revolute
  // angle or prismatic displacement): force = -stiffness (s - rest) - damping s_dot.
  double stiffness = 0.0;
  double damping = 0.0;
  double rest = 0.0;
  // Limits of a one-degree-of-freedom joint's coordinate (rad or m), lower <= upper; each
  // finite one is a one-sided constraint solved with the contacts (docs/contact.md, Joint
  // limits): plastic, its impulse pushing the coordinate back inside.
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  // A revolute or prismatic joint whose coordinate is prescribed: each step imposes its
  // value at t_k+1 (Data::joint_target) as one more row of the joint, its multiplier the
  // force that drives it (trep's kinematic coordinates; files: "kinematic"). No damper and
  // no limits on it.
  bool prescribed = false;
};

// A coupling of two one-degree-of-freedom joints' coordinates (URDF's <mimic>):
// s(follower) = multiplier s(leader) + offset, one constraint row in the loop block.
struct Coupling {
  std::string name;
  int follower = 0, leader = 0;  // joint indices
  double multiplier = 1.0, offset = 0.0;
};

// A velocity (nonholonomic) constraint local to one body, linear in its velocity:
// A(q) (v, omega) = 0 (docs/maximal.md, Nonholonomic constraints). Kinds:
//   Skate         a knife edge at `point` (body frame, m) that cannot slide along the body
//                 direction `axis` (unit): 1 row, (R axis) . (velocity of the point) = 0;
//   RollingWheel  a disk of `radius` (m) centred at `point`, axle `axis` (body frame),
//                 rolling without slip on the plane of world normal `ground_normal`: the
//                 material point touching the plane is at rest along the plane's two
//                 directions (2 rows); turning about the normal (pivot) and about the axle
//                 (spin) stay free;
//   RollingBall   a sphere of `radius` centred at `point` rolling without slip on that
//                 plane: its lowest point at rest along the plane (2 rows).
// The plane itself is not a constraint here: hold the body on it with a joint (a planar
// joint to the world) or gravity and contact.
enum class VelocityConstraintType { Skate, RollingWheel, RollingBall };

struct VelocityConstraint {
  std::string name;
  VelocityConstraintType type = VelocityConstraintType::Skate;
  int body = 0;
  Vec3 point = Vec3::Zero();
  Vec3 axis = Vec3::UnitY();
  double radius = 0.0;
  Vec3 ground_normal = Vec3::UnitZ();
};

constexpr int velocity_rows(VelocityConstraintType type) {
  return type == VelocityConstraintType::Skate ? 1 : 2;
}
const char* velocity_constraint_type_name(VelocityConstraintType type);

// Whether a joint has a row on its coordinate after its constraint rows: its damper's force
// when damping > 0 (the damper is implicit: integrator.hpp), or a prescribed coordinate's
// value (its multiplier the driving force). A joint has at most one of the two.
inline bool has_coordinate_row(const Joint& joint) {
  return joint.damping > 0.0 || joint.prescribed;
}

// Rows of a joint among a step's unknowns: its constraint rows and its coordinate row.
inline int step_rows(const Joint& joint) {
  return constraint_rows(joint.type) + (has_coordinate_row(joint) ? 1 : 0);
}

// Pose and velocity of one body. v is the world-frame velocity and omega the
// body-frame angular velocity of the interval that ends at the current pose.
struct BodyState {
  Vec3 x = Vec3::Zero();
  Quat q;
  Vec3 v = Vec3::Zero();
  Vec3 omega = Vec3::Zero();
};

// Graph of the Jacobian (paper §4.2): nodes are bodies then tree joints; loop joints
// are the non-tree edges of a depth-first spanning forest rooted at the world.
struct Topology {
  int num_nodes = 0;
  std::vector<int> order;        // leaves to root (children before parents)
  std::vector<int> parent_node;  // -1 for a root
  std::vector<int> node_size;    // 6 for a body, step_rows for a joint
  std::vector<int> node_offset;  // first row of the node in the stacked system
  std::vector<int> joint_node;   // joint index -> node, -1 for a loop joint
  std::vector<int> node_joint;   // node -> joint index, -1 for a body
  std::vector<int> loop_joints;  // joints closing loops
  std::vector<int> loop_offset;  // first row of each loop joint in the loop block
  // The row of each coupling, then of each joint limit, in the loop block.
  std::vector<int> coupling_offset;
  // Per joint limit (after the couplings in coupling_offset): its joint and side, +1 for
  // the lower limit (s - lower >= 0), -1 for the upper (upper - s >= 0).
  std::vector<int> limit_joint;
  std::vector<double> limit_side;
  // Velocity constraint rows (Model::velocity_constraints, in order). Per row: its
  // constraint, the row within it, its row in the step's unknowns, and -1 where the Newton
  // solve eliminates it at its body (the rows after the nodes', inside tree_rows), else its
  // index among the loop block's coupling rows (coupling_offset, after the limits): a body
  // whose parent joint's forces and its constraints' are dependent on it (a wheel on an
  // axle hinge, 5 + 2 rows; a skate at a hinge's anchor) cannot take them (docs/maximal.md,
  // Nonholonomic constraints).
  std::vector<int> velocity_constraint, velocity_row, velocity_index, velocity_coupling;
  std::vector<int> tree_joint_order;  // tree joints, each after the joint of its parent
  int tree_rows = 0;             // 6 bodies + tree joint rows + velocity constraint rows
  int loop_rows = 0;
  int size() const { return tree_rows + loop_rows; }
};

class Model {
 public:
  // Validates everything (throws InputError naming the body, joint or shape and the
  // problem) and builds the topology and the candidate contacts (contact.hpp).
  Model(std::vector<Body> bodies, std::vector<Joint> joints,
        Vec3 gravity = Vec3(0.0, 0.0, -9.81), std::vector<Coupling> couplings = {},
        Contacts contacts = {}, std::vector<VelocityConstraint> velocity_constraints = {});

  const std::vector<Body>& bodies() const { return bodies_; }
  const std::vector<Joint>& joints() const { return joints_; }
  const std::vector<Coupling>& couplings() const { return couplings_; }
  const Contacts& contacts() const { return contacts_; }
  const std::vector<VelocityConstraint>& velocity_constraints() const {
    return velocity_constraints_;
  }
  const std::vector<ContactPoint>& contact_points() const { return contact_points_; }
  // Whether a step has inequalities to solve: contacts or joint limits (the interior point).
  bool has_inequalities() const {
    return !contact_points_.empty() || !topology_.limit_joint.empty();
  }
  // Whether a candidate contact has restitution above 0 (its impacts are timed).
  bool has_restitution() const { return has_restitution_; }
  const Vec3& gravity() const { return gravity_; }
  const Topology& topology() const { return topology_; }
  int num_bodies() const { return static_cast<int>(bodies_.size()); }
  int num_joints() const { return static_cast<int>(joints_.size()); }
  // Body b's mass and largest principal moment (row scalings of its residual); for a
  // degenerate body, the mean over the bodies that have them.
  double mass_scale(int b) const { return mass_scale_[b]; }
  double inertia_scale(int b) const { return inertia_scale_[b]; }
  // Rows 6 b + k of the degenerate bodies' blocks that may be singular: k = 0..2 for a body
  // without mass, 3..5 for a singular inertia (smallest moment <= kDegenerateInertia times
  // the inertia scale). The Newton solve treats them exactly (integrator.cpp).
  const std::vector<int>& degenerate_rows() const { return degenerate_rows_; }

 private:
  void set_scales();

  std::vector<Body> bodies_;
  std::vector<Joint> joints_;
  std::vector<Coupling> couplings_;
  Contacts contacts_;
  std::vector<VelocityConstraint> velocity_constraints_;
  std::vector<ContactPoint> contact_points_;
  bool has_restitution_ = false;
  Vec3 gravity_;
  Topology topology_;
  std::vector<double> mass_scale_, inertia_scale_;
  std::vector<int> degenerate_rows_;
};

// Principal moments below this fraction of a body's inertia scale make it degenerate.
inline constexpr double kDegenerateInertia = 1e-8;

}  // namespace marsden::maximal
