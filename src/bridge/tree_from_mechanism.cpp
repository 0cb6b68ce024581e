// The tree model of a maximal mechanism (tree/from_mechanism.hpp).
#include "marsden/bridge/tree_from_mechanism.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_set>

#include "marsden/error.hpp"
#include "marsden/maximal/joints.hpp"

namespace marsden::tree {

namespace {

using maximal::JointType;

[[noreturn]] void refuse(const maximal::Joint& joint, const std::string& why) {
  throw InputError("minimal_counterpart: joint \"" + joint.name + "\": " + why);
}

// A rotation taking e_z to the unit vector a.
Mat3 rotation_taking_z_to(const Vec3& a) {
  const Vec3 k = Vec3::UnitZ().cross(a);
  const double s = k.norm(), c = a.z();
  if (s < 1e-15) return c > 0.0 ? Mat3::Identity() : Mat3(Eigen::Vector3d(1.0, -1.0, -1.0).asDiagonal());
  return Quat::exp(std::atan2(s, c) * k / s).matrix();
}

// Z-Y-X Euler angles (a, b, c) of R = Rz(a) Ry(b) Rx(c).
Vec3 euler_zyx(const Mat3& R) {
  return Vec3(std::atan2(R(1, 0), R(0, 0)), std::asin(std::clamp(-R(2, 0), -1.0, 1.0)),
              std::atan2(R(2, 1), R(2, 2)));
}

SE3 translation(const Vec3& p) { return SE3{Mat3::Identity(), p}; }

}  // namespace

MinimalCounterpart minimal_counterpart(const maximal::Mechanism& mechanism) {
  const maximal::Model& mm = mechanism.model;
  const std::vector<maximal::BodyState>& state = mechanism.state;
  if (!mm.couplings().empty()) {
    throw InputError("minimal_counterpart: couplings are not supported (coupling \"" +
                     mm.couplings().front().name + "\")");
  }
  for (int b = 0; b < mm.num_bodies(); ++b) {
    if (state[b].v.norm() > 0.0 || state[b].omega.norm() > 0.0) {
      throw InputError("minimal_counterpart: body \"" + mm.bodies()[b].name +
                       "\" moves; only a mechanism at rest is converted");
    }
  }
  const std::vector<maximal::JointCoords> coords = maximal::current_joint_coordinates(mm, state);
  auto world_axis = [&](const maximal::Joint& joint) {
    const Mat3 R = joint.parent == maximal::kWorld ? Mat3::Identity() : state[joint.parent].q.matrix();
    return Vec3(R * joint.axis);
  };

  // A body's frame is named after it, unless a joint's frame already has that name.
  std::unordered_set<std::string> joint_names;
  for (const maximal::Joint& joint : mm.joints()) joint_names.insert(joint.name);
  auto body_frame_name = [&](const maximal::Body& body) {
    return joint_names.count(body.name) ? body.name + "_body" : body.name;
  };

  ModelBuilder builder;
  builder.set_gravity(mm.gravity());
  std::vector<int> body_frame(mm.num_bodies(), kWorld);
  std::vector<double> q0;
  auto parent_frame = [&](const maximal::Joint& joint) {
    return joint.parent == maximal::kWorld ? kWorld : body_frame[joint.parent];
  };
  // The spanning tree: passes over the joints in their order, each joint that reaches an
  // unplaced child from a placed parent (or the world) joining it; the rest close loops.
  std::vector<int> tree_joints, loop_joints;
  std::vector<bool> placed(mm.num_bodies(), false), in_tree(mm.num_joints(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (int j = 0; j < mm.num_joints(); ++j) {
      const maximal::Joint& joint = mm.joints()[j];
      if (!in_tree[j] && !placed[joint.child] &&
          (joint.parent == maximal::kWorld || placed[joint.parent])) {
        in_tree[j] = placed[joint.child] = grew = true;
        tree_joints.push_back(j);
      }
    }
  }
  for (int j = 0; j < mm.num_joints(); ++j) {
    const maximal::Joint& joint = mm.joints()[j];
    if (in_tree[j]) continue;
    if (!placed[joint.child] || (joint.parent != maximal::kWorld && !placed[joint.parent])) {
      refuse(joint, "its parent is reached from the world only through its child");
    }
    loop_joints.push_back(j);
  }
  for (const int j : tree_joints) {
    const maximal::Joint& joint = mm.joints()[j];
    // A kinematic coordinate's path is its run's input, which the tree's model does not carry.
    if (joint.prescribed) refuse(joint, "a prescribed coordinate (not carried over)");
    int frame = builder.add_const_frame(joint.name + "_anchor", parent_frame(joint),
                                        translation(joint.p_parent));
    if (joint.type == JointType::Revolute) {
      const Vec3& a = joint.axis;
      std::optional<Transform> primitive;
      for (int i = 0; i < 3; ++i) {
        if (a(i) == 1.0) primitive = std::array{Transform::Rx, Transform::Ry, Transform::Rz}[i];
      }
      if (primitive) {
        frame = builder.add_joint_frame(joint.name, frame, *primitive, joint.name);
      } else {
        const Mat3 R_align = rotation_taking_z_to(a);
        frame = builder.add_const_frame(joint.name + "_align", frame, SE3{R_align, Vec3::Zero()});
        frame = builder.add_joint_frame(joint.name, frame, Transform::Rz, joint.name);
        frame = builder.add_const_frame(joint.name + "_unalign", frame,
                                        SE3{R_align.transpose(), Vec3::Zero()});
      }
      const int coord = builder.coord_index(joint.name);
      if (joint.stiffness > 0.0) builder.add_coordinate_spring(coord, joint.stiffness, joint.rest);
      if (joint.damping > 0.0) builder.add_coordinate_damper(coord, joint.damping);
      q0.push_back(coords[j](0));
    } else if (joint.type == JointType::Spherical) {
      if (joint.stiffness > 0.0 || joint.damping > 0.0) refuse(joint, "a spherical spring or damper");
      const Vec3 angles = euler_zyx(Quat::exp(coords[j].head<3>()).matrix());
      const char* axis_names[] = {"_z", "_y", "_x"};
      const Transform axes[] = {Transform::Rz, Transform::Ry, Transform::Rx};
      for (int i = 0; i < 3; ++i) {
        const std::string name = joint.name + axis_names[i];
        frame = builder.add_joint_frame(name, frame, axes[i], name);
        q0.push_back(angles(i));
      }
    } else {
      refuse(joint, std::string("joint type ") + maximal::joint_type_name(joint.type) +
                        " (revolute and spherical only)");
    }
    const Mat3 R_offset = joint.q_offset.matrix();
    const maximal::Body& body = mm.bodies()[joint.child];
    frame = builder.add_const_frame(body_frame_name(body), frame, SE3{R_offset, -(R_offset * joint.p_child)});
    body_frame[joint.child] = frame;
    if (body.mass > 0.0 || body.inertia.cwiseAbs().maxCoeff() > 0.0) {
      builder.add_mass(frame, body.mass, Vec3::Zero(), body.inertia);
    }
  }
  for (const int j : loop_joints) {
    const maximal::Joint& joint = mm.joints()[j];
    if (joint.type != JointType::Revolute && joint.type != JointType::Spherical) {
      refuse(joint, std::string("loop joint type ") + maximal::joint_type_name(joint.type) +
                        " (revolute and spherical only)");
    }
    const int on_parent = builder.add_const_frame(joint.name + "_parent_anchor",
                                                  parent_frame(joint), translation(joint.p_parent));
    const int on_child = builder.add_const_frame(joint.name + "_child_anchor",
                                                 body_frame[joint.child], translation(joint.p_child));
    if (joint.type == JointType::Spherical) {
      builder.add_point_to_point_constraint(joint.name, on_child, on_parent);
      continue;
    }
    const Vec3 normal = world_axis(joint);
    for (const maximal::Joint& other : mm.joints()) {
      if (other.type != JointType::Revolute || world_axis(other).cross(normal).norm() > 1e-12) {
        refuse(joint, "a revolute loop closure is supported in planar mechanisms only (joint \"" +
                          other.name + "\" is not a revolute joint parallel to it)");
      }
    }
    // Two in-plane directions, in the parent anchor's axes (the parent body's).
    const Mat3 R_plane = rotation_taking_z_to(joint.axis);
    builder.add_point_on_plane_constraint(joint.name + "_a", on_child, on_parent, R_plane.col(0));
    builder.add_point_on_plane_constraint(joint.name + "_b", on_child, on_parent, R_plane.col(1));
  }
  MinimalCounterpart out{builder.build(), VecX(), VecX()};
  out.q0 = Eigen::Map<const VecX>(q0.data(), static_cast<Eigen::Index>(q0.size()));
  out.qd0 = VecX::Zero(out.q0.size());
  return out;
}

}  // namespace marsden::tree
