// A URDF description as a tree of frames (docs/urdf.md).
#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "marsden/error.hpp"
#include "marsden/urdf.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::tree {
namespace {

// The primitive of a joint whose axis is exactly +x, +y or +z, else Const (no shortcut).
Transform unit_axis_primitive(const Vec3& axis, bool revolute) {
  for (int k = 0; k < 3; ++k) {
    if (axis == Vec3::Unit(k)) {
      static constexpr Transform kRot[] = {Transform::Rx, Transform::Ry, Transform::Rz};
      static constexpr Transform kTrans[] = {Transform::Tx, Transform::Ty, Transform::Tz};
      return revolute ? kRot[k] : kTrans[k];
    }
  }
  return Transform::Const;
}

}  // namespace

Model model_from_urdf(const UrdfModel& urdf, const UrdfTreeOptions& options) {
  check_joints_move_mass(urdf);
  ModelBuilder builder;
  builder.set_gravity(options.gravity);

  std::vector<int> link_frame(urdf.links.size(), -1);
  int root = -1;
  for (std::size_t i = 0; i < urdf.links.size(); ++i)
    if (urdf.links[i].name == urdf.root) root = static_cast<int>(i);
  if (root < 0)
    throw InputError("URDF robot \"" + urdf.name + "\": no root link \"" + urdf.root + "\"");
  // Link frames keep the link names; a joint's frames take the joint's name, made unique
  // against the links' (files may name a link and a joint alike).
  std::set<std::string> taken;
  for (const UrdfLink& link : urdf.links) taken.insert(link.name);
  auto fresh = [&taken](std::string name) {
    while (!taken.insert(name).second) name += "_joint";
    return name;
  };

  // The root link is the base, fixed or floating; a frame of its own lets users refer to
  // it by name.
  int base = kWorld;
  if (options.floating_base) {
    base = builder.add_const_frame(fresh(urdf.root + "_floating_origin"), kWorld,
                                   options.base_pose);
    static constexpr Transform kChain[] = {Transform::Tx, Transform::Ty, Transform::Tz,
                                           Transform::Rz, Transform::Ry, Transform::Rx};
    static constexpr const char* kSuffix[] = {"_x", "_y", "_z", "_yaw", "_pitch", "_roll"};
    for (int k = 0; k < 6; ++k) {
      const std::string name = fresh(urdf.root + kSuffix[k]);
      base = builder.add_joint_frame(name, base, kChain[k], name);
    }
    link_frame[root] = builder.add_const_frame(urdf.root, base, SE3::identity());
  } else {
    link_frame[root] = builder.add_const_frame(urdf.root, kWorld, options.base_pose);
  }

  for (const UrdfJoint& joint : urdf.joints) {
    const int parent = link_frame[joint.parent_index];
    if (joint.type == UrdfJointType::Fixed) {
      link_frame[joint.child_index] = builder.add_const_frame(joint.child, parent, joint.origin);
      continue;
    }
    const bool revolute = joint.type != UrdfJointType::Prismatic;
    const std::string joint_frame = fresh(joint.name);
    int frame = builder.add_const_frame(fresh(joint_frame + "_origin"), parent, joint.origin);
    Transform primitive = unit_axis_primitive(joint.axis, revolute);
    // g_origin_align turns e_z onto the axis, so that Rz (Tz) in the aligned frame moves
    // about (along) the axis; its inverse after the joint restores the URDF child frame.
    SE3 g_origin_align;
    if (primitive == Transform::Const) {
      g_origin_align.R =
          Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), joint.axis).toRotationMatrix();
      frame = builder.add_const_frame(fresh(joint_frame + "_align"), frame, g_origin_align);
      primitive = revolute ? Transform::Rz : Transform::Tz;
    }
    frame = builder.add_joint_frame(joint_frame, frame, primitive, joint.name);
    link_frame[joint.child_index] = builder.add_const_frame(joint.child, frame,
                                                            g_origin_align.inverse());

    const int coord = builder.coord_index(joint.name);
    if (joint.has_limits && joint.type != UrdfJointType::Continuous)
      builder.set_limits(coord, joint.lower, joint.upper);
    if (joint.damping > 0.0) builder.add_coordinate_damper(coord, joint.damping);
    if (joint.armature > 0.0) builder.set_armature(coord, joint.armature);
    if (joint.stiffness > 0.0) builder.add_coordinate_spring(coord, joint.stiffness, joint.springref);
  }
  for (const UrdfJoint& joint : urdf.joints) {
    if (joint.mimic.empty()) continue;
    builder.add_coordinate_coupling_constraint(
        joint.name + "_mimic", builder.coord_index(joint.name), builder.coord_index(joint.mimic),
        joint.mimic_multiplier, joint.mimic_offset);
  }

  // MJCF motors, in file order (MuJoCo's ctrl order): inputs gear * ctrl on their joints.
  for (const UrdfActuator& a : urdf.actuators) {
    const auto joint = std::find_if(urdf.joints.begin(), urdf.joints.end(),
                                    [&](const UrdfJoint& j) { return j.name == a.joint; });
    if (joint == urdf.joints.end() || joint->type == UrdfJointType::Fixed)
      throw InputError("motor \"" + a.name + "\": its joint \"" + a.joint +
                       "\" has no coordinate (welded, or not a hinge or slide joint)");
    const double inf = std::numeric_limits<double>::infinity();
    builder.add_coordinate_force_input(builder.coord_index(a.joint), a.gear,
                                       a.ctrl_limited ? a.ctrl_lower : -inf,
                                       a.ctrl_limited ? a.ctrl_upper : inf);
  }

  // One mass per rigid body (links welded by fixed joints), on its first link's frame,
  // whose axes the body's inertia already has. A fixed base's mass cannot move.
  const UrdfRigidBodies rb = rigid_bodies(urdf);
  for (std::size_t g = options.floating_base ? 0 : 1; g < rb.bodies.size(); ++g) {
    const UrdfRigidBody& body = rb.bodies[g];
    if (!body.moves_mass()) continue;
    const int first = body.links.front();
    builder.add_mass(link_frame[first], body.mass,
                     rb.world_link[first].inverse().act(body.world_body.x), body.inertia);
  }
  return builder.build();
}

}  // namespace marsden::tree
