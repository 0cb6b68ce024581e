// URDF robot descriptions (docs/urdf.md): an engine-neutral, validated reading of the
// kinematic tree (links, joints, inertias, limits), which io::read_urdf fills from a file,
// and its conversions into a tree::Model (tree/urdf.cpp) and a maximal::Mechanism
// (maximal/urdf.cpp).
#pragma once

#include <string>
#include <vector>

#include "marsden/lie/se3.hpp"
#include "marsden/lie/types.hpp"

// Declared only, so that the neutral description does not pull in the engines; callers
// of the conversions include marsden/tree/model.hpp or marsden/maximal/setup.hpp.
namespace marsden::tree {
class Model;
}
namespace marsden::maximal {
struct Mechanism;
struct CollisionShape;
struct Joint;
}

namespace marsden {

// Inertia eigenvalues from -(relative * largest + absolute) to 0 are round-off, read as 0.
inline constexpr double kInertiaRelativeRoundOff = 1e-9;
inline constexpr double kInertiaAbsoluteRoundOff = 1e-12;  // kg m^2

// <visual>: geometry drawn by the player (docs/viewer.md), not part of the dynamics.
// Capsule, Ellipsoid and Plane come from MJCF geoms only (io::read_mjcf).
enum class UrdfShape { Box, Cylinder, Sphere, Mesh, Capsule, Ellipsoid, Plane };

struct UrdfVisual {
  SE3 origin;                       // the geometry's frame in the link frame
  UrdfShape shape = UrdfShape::Box;
  Vec3 size = Vec3::Zero();         // box: full edge lengths (m), each > 0; ellipsoid: its
                                    // three semi-axes (m); plane: half x and y extents (0:
                                    // infinite) and MJCF's grid spacing
  double radius = 0.0;              // cylinder, sphere, capsule (m, > 0)
  double length = 0.0;              // cylinder, capsule: of the cylindrical part, along z (m)
  std::string filename;             // mesh: as the file gives it (package://, file://, path)
  Vec3 scale = Vec3::Ones();        // mesh: per axis, each non-zero
  // <material>: its <color rgba> given here, or by name in a <material> of the robot or of
  // another visual; none when absent, a texture only or a name defined nowhere.
  std::string material;
  bool has_color = false;
  Vec4 rgba = Vec4::Ones();         // each in [0, 1]
  // MJCF <geom friction>: its sliding coefficient (>= 0); URDF has none.
  bool has_friction = false;
  double friction = 0.0;
};

struct UrdfLink {
  std::string name;
  std::vector<UrdfVisual> visuals;  // in file order
  // <collision>: the same geometry (its material fields unused), in file order; the
  // maximal engine's contact reads it (maximal::collision_shapes_from_urdf).
  std::vector<UrdfVisual> collisions;
  // Without <inertial>, or with mass and inertia 0, a link is massless; otherwise mass >= 0
  // and inertia is symmetric, not both zero. Physical consistency is a property of a rigid
  // body: the inertia of the links welded together by fixed joints (UrdfRigidBody) is
  // positive semi-definite (zero for a point mass), a single link's need not be.
  bool has_inertial = false;
  double mass = 0.0;
  SE3 inertial_origin;              // the centre-of-mass frame in the link frame
  Mat3 inertia = Mat3::Zero();      // about the centre of mass, in inertial_origin's axes
};

enum class UrdfJointType { Revolute, Continuous, Prismatic, Fixed };

struct UrdfJoint {
  std::string name;
  UrdfJointType type = UrdfJointType::Fixed;
  std::string parent, child;        // link names
  int parent_index = -1, child_index = -1;  // into UrdfModel::links
  // The joint frame in the parent link frame; at zero displacement it is the child link
  // frame. R = Rz(yaw) Ry(pitch) Rx(roll).
  SE3 origin;
  Vec3 axis = Vec3::UnitX();        // unit, in the joint frame
  // <limit>: required for revolute and prismatic joints (lower <= upper; rad or m),
  // optional for continuous ones (whose lower/upper URDF ignores). Absent: all zero.
  bool has_limits = false;
  double lower = 0.0, upper = 0.0, effort = 0.0, velocity = 0.0;
  // <dynamics>: viscous damping (N m s/rad or N s/m) and Coulomb friction, >= 0.
  double damping = 0.0, friction = 0.0;
  // <mimic joint multiplier offset>: this joint's coordinate is multiplier * q(mimic) +
  // offset; empty for an independent joint.
  std::string mimic;
  double mimic_multiplier = 1.0, mimic_offset = 0.0;
  // MJCF only (URDF has none, all zero): rotor inertia added to this coordinate's diagonal
  // of the mass matrix, a kinetic energy 1/2 armature qd^2 (kg m^2 or kg), and a spring on
  // the coordinate, force -stiffness (q - springref) (N m/rad or N/m; springref in rad or m).
  double armature = 0.0, stiffness = 0.0, springref = 0.0;
};

// MJCF <motor>: a generalized force gear * ctrl on the named joint's coordinate, the control
// clamped to [ctrl_lower, ctrl_upper] when ctrl_limited: the inputs of the tree model
// (tree::model_from_urdf) and of a maximal scene, in this order.
struct UrdfActuator {
  std::string name;
  std::string joint;
  double gear = 1.0;                // N m or N per unit of control
  bool ctrl_limited = false;
  double ctrl_lower = 0.0, ctrl_upper = 0.0;
};

struct UrdfModel {
  std::string name;
  std::vector<UrdfLink> links;      // in file order
  // Parent first: a joint comes after the joint that brings in its parent link; siblings
  // keep their file order.
  std::vector<UrdfJoint> joints;
  std::string root;                 // the one link that is no joint's child

  // From MJCF files only (io::read_mjcf); a URDF description leaves them at these values.
  // floating_root: the root link carries a <freejoint>, to be converted with floating_base;
  // root_pose is then its pose in the world in the file (the floating coordinates' start).
  bool floating_root = false;
  SE3 root_pose;
  // <worldbody> geoms of a floating-root file (they cannot hang on the root link): static
  // geometry, kept for the player and contact, not yet used by the engines.
  std::vector<UrdfVisual> world_geoms;
  std::vector<UrdfActuator> actuators;
  double timestep = 0.0;            // <option timestep> (s); 0: not given
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);  // <option gravity> (m/s^2)
  // Elements read but ignored because they do not change the dynamics, each named with its
  // file and line ("model.xml: <sensor>: ignored, not part of the dynamics (line 40)").
  std::vector<std::string> warnings;
};

// Links welded together by fixed joints move as one rigid body: the root link's group, then
// one group per movable joint, in joint order (so a parent's group comes first).
struct UrdfRigidBody {
  int joint = -1;                   // into UrdfModel::joints: the movable joint that moves
                                    // the group; -1 for the root link's group
  std::vector<int> links;           // into UrdfModel::links, the first one (the root link or
                                    // the joint's child) first
  int parent = -1;                  // the group the joint's parent link belongs to
  double mass = 0.0;
  // At the zero configuration with the root link at the world origin: axes of the first
  // link, origin at the centre of mass (at the first link's origin when massless).
  SE3 world_body;
  Mat3 inertia = Mat3::Zero();      // about the centre of mass, in world_body's axes; round-off
                                    // below zero (kInertia...RoundOff) is set to zero
  double smallest_eigenvalue = 0.0; // of the combined inertia before that
  bool moves_mass() const { return mass > 0.0 || inertia.cwiseAbs().maxCoeff() > 0.0; }
};

struct UrdfRigidBodies {
  std::vector<SE3> world_link;      // each link's pose at the zero configuration
  std::vector<int> body_of_link;    // the group of each link
  std::vector<UrdfRigidBody> bodies;
};

UrdfRigidBodies rigid_bodies(const UrdfModel& urdf);

// The movable joints that move no mass (their child's group and every group beyond have
// neither mass nor inertia), whose accelerations no engine can determine; a <mimic> leader
// and its followers are among them only together (if one of them moves mass, the
// couplings determine the others).
std::vector<int> joints_moving_no_mass(const UrdfModel& urdf);
// An InputError naming those joints and the remedies, if there are any.
void check_joints_move_mass(const UrdfModel& urdf);
// The description with those joints turned into fixed joints at their zero position, and
// their names in `welded`: the other coordinates' dynamics are unchanged, since the welded
// links carry no mass (the "massless_joints": "weld" of scenes).
UrdfModel weld_joints_moving_no_mass(UrdfModel urdf, std::vector<std::string>* welded = nullptr);

struct UrdfTreeOptions {
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  SE3 base_pose;                    // the root link's pose in the world (fixed base), or
                                    // the origin of the floating base's coordinates
  bool floating_base = false;       // the root link free in space (six coordinates)
};

}  // namespace marsden

namespace marsden::tree {

// The tree model of a URDF description (docs/urdf.md): the root link is a constant frame
// fixed to the world, or with floating_base the end of a chain Tx Ty Tz Rz Ry Rx driven by
// coordinates "ROOT_x", "_y", "_z", "_yaw", "_pitch", "_roll" (world position, then
// Z-Y-X Euler angles, singular at pitch = +-pi/2); a joint J of the parent link P adds,
// in order,
//   "J_origin"  Const, the joint origin, child of P
//   "J_align"   Const, a rotation taking e_z to the axis (absent if the axis is +x, +y, +z)
//   "J"         Rz/Tz (or Rx.. Tz on the matching axis) driven by coordinate "J"
//   child link  Const, undoing the alignment, so that its frame is the URDF child frame;
// a fixed joint adds the child link as one Const frame. Each rigid body's combined
// inertial (UrdfRigidBody) becomes one Mass on its first link's frame, limits of
// revolute/prismatic joints become coordinate limits, <dynamics damping> a coordinate
// damper, and the MJCF fields armature the coordinate's armature and stiffness a coordinate
// spring at springref. Coulomb friction is not modelled (ignored). A
// <mimic> joint keeps its coordinate, tied to its leader's by a coupling constraint
// q = multiplier q_leader + offset. A joint frame whose name a link already has is named
// "J_joint" (the coordinate keeps the name J). A joint that moves no mass is an
// InputError (check_joints_move_mass).
Model model_from_urdf(const UrdfModel& urdf, const UrdfTreeOptions& options = {});

}  // namespace marsden::tree

namespace marsden::maximal {

// The same description in maximal coordinates (callers include marsden/maximal/setup.hpp):
// each rigid body (UrdfRigidBody: links welded by fixed joints) is one body, with its
// frame, mass and inertia; the bodies are placed at the zero
// configuration with the root link at the world origin. The root's group is the world
// itself (fixed base) or a free body (floating_base). Revolute and continuous joints
// become maximal revolute joints, prismatic ones prismatic, with anchors at the joint
// origin and the axis in the parent body's frame; <dynamics damping> becomes the joint's
// (implicit) damper; limits and friction are not modelled; MJCF armature and joint
// stiffness are an InputError (no maximal form yet); a <mimic> joint is a Coupling
// of its coordinate to its leader's. Bodies without mass or with a singular inertia (a
// massless link between two joints, a point mass) are allowed where their joints
// determine them (docs/maximal.md); a joint that moves no mass is an InputError
// (check_joints_move_mass).
Mechanism mechanism_from_urdf(const UrdfModel& urdf, const Vec3& gravity,
                              bool floating_base = false);
// The <limit lower upper> of the description's revolute and prismatic joints (not
// continuous ones) as the limits of the same-named joints of mechanism_from_urdf's
// mechanism (Joint::lower, upper), which the maximal step then enforces (docs/contact.md).
void set_limits_from_urdf(const UrdfModel& urdf, std::vector<Joint>& joints);
// The <collision> geometry as collision shapes (marsden/maximal/contact.hpp) on the bodies of
// mechanism_from_urdf(urdf, ..., floating_base), each at its link's pose in its body, named
// after its link, with its own friction coefficient (MJCF geoms) or else the given one:
// spheres, boxes and (MJCF) capsules. Cylinders and meshes have no contact points yet, and
// a fixed base's links belong to the world, whose shapes do not collide yet: those are left
// out, each named in *left_out when given ("link 'FR_hip': cylinder"; so are MJCF's
// ellipsoids and planes).
std::vector<CollisionShape> collision_shapes_from_urdf(const UrdfModel& urdf, bool floating_base,
                                                       double friction,
                                                       std::vector<std::string>* left_out);

}  // namespace marsden::maximal
