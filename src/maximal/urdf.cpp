// A URDF description in maximal coordinates (docs/urdf.md): one rigid body per group of
// links welded together by fixed joints, joined by revolute and prismatic joints.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/urdf.hpp"
#include "marsden/maximal/contact.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"

namespace marsden::maximal {

Mechanism mechanism_from_urdf(const UrdfModel& urdf, const Vec3& gravity, bool floating_base) {
  check_joints_move_mass(urdf);
  const UrdfRigidBodies rb = rigid_bodies(urdf);
  const std::size_t ng = rb.bodies.size();

  // Group 0 is the world for a fixed base, else a free body; the other groups are bodies.
  std::vector<int> group_body(ng, kWorld);
  std::vector<SE3> world_body(ng);
  std::vector<Body> bodies;
  std::vector<BodyState> state;
  for (std::size_t g = floating_base ? 0 : 1; g < ng; ++g) {
    const UrdfRigidBody& body = rb.bodies[g];
    world_body[g] = body.world_body;
    group_body[g] = static_cast<int>(bodies.size());
    bodies.push_back({urdf.links[body.links.front()].name, body.mass, body.inertia});
    BodyState s;
    s.x = body.world_body.x;
    s.q = Quat::from_rotation(body.world_body.R);
    state.push_back(s);
  }
  const auto& world_link = rb.world_link;
  const auto& group = rb.body_of_link;

  std::vector<Joint> joints;
  for (std::size_t g = 1; g < ng; ++g) {
    const UrdfJoint& uj = urdf.joints[rb.bodies[g].joint];
    const auto p = static_cast<std::size_t>(uj.parent_index);
    const auto c = static_cast<std::size_t>(uj.child_index);
    // The joint frame in the parent body's frame; at zero it is the child link frame, whose
    // axes are the child body's.
    const SE3 body_joint = world_body[group[p]].inverse() * world_link[p] * uj.origin;
    Joint j;
    j.name = uj.name;
    j.type = uj.type == UrdfJointType::Prismatic ? JointType::Prismatic : JointType::Revolute;
    j.parent = group_body[group[p]];
    j.child = group_body[g];
    j.p_parent = body_joint.x;
    j.p_child = (world_body[g].inverse() * world_link[c]).x;
    j.q_offset = Quat::from_rotation(body_joint.R);
    j.axis = body_joint.R * uj.axis;
    // Only viscous damping carries over; URDF limits and friction have no maximal form.
    j.damping = uj.damping;
    // MJCF rotor inertia and joint springs have no maximal form yet: refused, not dropped.
    if (uj.armature != 0.0 || uj.stiffness != 0.0)
      throw InputError("robot \"" + urdf.name + "\": joint \"" + uj.name +
                       "\": armature and joint stiffness are not supported by the maximal "
                       "engine yet (the tree engine takes them)");
    joints.push_back(j);
  }
  if (bodies.empty() || std::none_of(bodies.begin(), bodies.end(), [](const Body& b) {
        return b.mass > 0.0;
      })) {
    throw InputError("URDF robot \"" + urdf.name + "\": no moving link has a mass: nothing can move");
  }
  // <mimic>: couplings of the joints' coordinates (every movable URDF joint is one joint).
  std::vector<Coupling> couplings;
  auto joint_index = [&joints](const std::string& name) {
    for (std::size_t j = 0; j < joints.size(); ++j)
      if (joints[j].name == name) return static_cast<int>(j);
    return -1;
  };
  for (const UrdfJoint& uj : urdf.joints) {
    if (uj.mimic.empty() || uj.type == UrdfJointType::Fixed) continue;
    couplings.push_back({uj.name + "_mimic", joint_index(uj.name), joint_index(uj.mimic),
                         uj.mimic_multiplier, uj.mimic_offset});
  }
  // A revolute coordinate is 2 atan2(sin, cos) of the relative quaternion, in (-2 pi, 2 pi]:
  // with the child's quaternion of the other sign it reads 2 pi at zero. Parent first, each
  // child takes the sign that reads 0, so springs and couplings start from the URDF's zero.
  for (const Joint& j : joints) {
    if (j.type != JointType::Revolute) continue;
    const BodyState parent = j.parent == kWorld ? BodyState() : state[j.parent];
    if (std::abs(joint_coordinate(j, parent, state[j.child], nullptr, nullptr)) > 3.0)
      state[j.child].q.q = -state[j.child].q.q;
  }
  Model model(std::move(bodies), std::move(joints), gravity, std::move(couplings));
  // An offset moves the follower away from zero: place it where its leader says.
  bool offsets = false;
  for (const Coupling& c : model.couplings()) offsets = offsets || c.offset != 0.0;
  if (offsets) {
    const std::vector<JointCoords> q = current_joint_coordinates(model, state);
    std::vector<JointCoords> qd;
    for (const JointCoords& x : q) qd.push_back(JointCoords::Zero(x.size()));
    state = set_joint_state(model, state, q, qd, 1.0);
  }
  return {std::move(model), std::move(state)};
}

void set_limits_from_urdf(const UrdfModel& urdf, std::vector<Joint>& joints) {
  for (const UrdfJoint& uj : urdf.joints) {
    if (!uj.has_limits || (uj.type != UrdfJointType::Revolute && uj.type != UrdfJointType::Prismatic))
      continue;
    for (Joint& j : joints) {
      if (j.name != uj.name) continue;
      j.lower = uj.lower;
      j.upper = uj.upper;
    }
  }
}

std::vector<CollisionShape> collision_shapes_from_urdf(const UrdfModel& urdf, bool floating_base,
                                                       double friction,
                                                       std::vector<std::string>* left_out) {
  const UrdfRigidBodies rb = rigid_bodies(urdf);
  // The body of each group, as mechanism_from_urdf numbers them (kWorld: a fixed base).
  std::vector<int> group_body(rb.bodies.size(), kWorld);
  int next = 0;
  for (std::size_t g = floating_base ? 0 : 1; g < rb.bodies.size(); ++g) group_body[g] = next++;
  std::vector<CollisionShape> shapes;
  for (std::size_t l = 0; l < urdf.links.size(); ++l) {
    const UrdfLink& link = urdf.links[l];
    const int group = rb.body_of_link[l];
    for (const UrdfVisual& c : link.collisions) {
      const std::string label = "link '" + link.name + "'";
      const char* why = group_body[std::size_t(group)] == kWorld ? "on the fixed base"
                        : c.shape == UrdfShape::Cylinder       ? "cylinder"
                        : c.shape == UrdfShape::Mesh           ? "mesh"
                        : c.shape == UrdfShape::Ellipsoid      ? "ellipsoid"
                        : c.shape == UrdfShape::Plane          ? "plane"
                                                               : nullptr;
      if (why != nullptr) {
        if (left_out != nullptr) left_out->push_back(label + ": " + why);
        continue;
      }
      // The shape's pose in its body: the body's frame is its group's root link's.
      const SE3 g_bs = rb.bodies[std::size_t(group)].world_body.inverse() * rb.world_link[l] * c.origin;
      CollisionShape shape;
      shape.name = link.name;
      shape.body = group_body[std::size_t(group)];
      shape.friction = c.has_friction ? c.friction : friction;  // an MJCF geom's own first
      if (c.shape == UrdfShape::Sphere)
        shape.shape = geometry::Sphere(c.radius, g_bs);
      else if (c.shape == UrdfShape::Capsule)
        shape.shape = geometry::Capsule(c.radius, 0.5 * c.length, g_bs);
      else
        shape.shape = geometry::Box(0.5 * c.size, g_bs);
      shapes.push_back(std::move(shape));
    }
  }
  return shapes;
}

}  // namespace marsden::maximal
