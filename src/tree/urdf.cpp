// A URDF description as a tree of frames (docs/urdf.md).
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
  ModelBuilder builder;
  builder.set_gravity(options.gravity);

  std::vector<int> link_frame(urdf.links.size(), -1);
  int root = -1;
  for (std::size_t i = 0; i < urdf.links.size(); ++i)
    if (urdf.links[i].name == urdf.root) root = static_cast<int>(i);
  if (root < 0)
    throw InputError("URDF robot \"" + urdf.name + "\": no root link \"" + urdf.root + "\"");
  // The root link is the fixed base; a frame of its own lets users refer to it by name.
  link_frame[root] = builder.add_const_frame(urdf.root, kWorld, options.base_pose);

  for (const UrdfJoint& joint : urdf.joints) {
    const int parent = link_frame[joint.parent_index];
    if (joint.type == UrdfJointType::Fixed) {
      link_frame[joint.child_index] = builder.add_const_frame(joint.child, parent, joint.origin);
      continue;
    }
    const bool revolute = joint.type != UrdfJointType::Prismatic;
    int frame = builder.add_const_frame(joint.name + "_origin", parent, joint.origin);
    Transform primitive = unit_axis_primitive(joint.axis, revolute);
    // g_origin_align turns e_z onto the axis, so that Rz (Tz) in the aligned frame moves
    // about (along) the axis; its inverse after the joint restores the URDF child frame.
    SE3 g_origin_align;
    if (primitive == Transform::Const) {
      g_origin_align.R =
          Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), joint.axis).toRotationMatrix();
      frame = builder.add_const_frame(joint.name + "_align", frame, g_origin_align);
      primitive = revolute ? Transform::Rz : Transform::Tz;
    }
    frame = builder.add_joint_frame(joint.name, frame, primitive, joint.name);
    link_frame[joint.child_index] = builder.add_const_frame(joint.child, frame,
                                                            g_origin_align.inverse());

    const int coord = builder.coord_index(joint.name);
    if (joint.type != UrdfJointType::Continuous)
      builder.set_limits(coord, joint.lower, joint.upper);
    if (joint.damping > 0.0) builder.add_coordinate_damper(coord, joint.damping);
  }

  for (std::size_t i = 0; i < urdf.links.size(); ++i) {
    const UrdfLink& link = urdf.links[i];
    // The base is fixed to the world: its mass cannot move.
    if (static_cast<int>(i) == root || !link.has_inertial) continue;
    const Mat3& R_link_com = link.inertial_origin.R;
    builder.add_mass(link_frame[i], link.mass, link.inertial_origin.x,
                     R_link_com * link.inertia * R_link_com.transpose());
  }
  return builder.build();
}

}  // namespace marsden::tree
