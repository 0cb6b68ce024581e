// A URDF description in maximal coordinates (docs/urdf.md): one rigid body per group of
// links welded together by fixed joints, joined by revolute and prismatic joints.
#include <cmath>
#include <string>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/urdf.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"

namespace marsden::maximal {

Mechanism mechanism_from_urdf(const UrdfModel& urdf, const Vec3& gravity, bool floating_base) {
  const std::string where = "URDF robot \"" + urdf.name + "\": ";
  const std::size_t nl = urdf.links.size();
  std::size_t root = nl;
  for (std::size_t i = 0; i < nl; ++i)
    if (urdf.links[i].name == urdf.root) root = i;
  if (root == nl) throw InputError(where + "no root link \"" + urdf.root + "\"");

  // The zero configuration with the root link at the world origin, and the groups of links
  // welded by fixed joints: the root's group, then one per movable joint (joints come
  // parent first, so a parent's group exists before its children's).
  std::vector<SE3> world_link(nl);
  std::vector<int> group(nl, 0);
  std::vector<std::size_t> group_first{root};
  std::vector<const UrdfJoint*> group_joint{nullptr};  // the joint that moves the group
  for (const UrdfJoint& uj : urdf.joints) {
    const auto p = static_cast<std::size_t>(uj.parent_index);
    const auto c = static_cast<std::size_t>(uj.child_index);
    world_link[c] = world_link[p] * uj.origin;
    if (uj.type == UrdfJointType::Fixed) {
      group[c] = group[p];
    } else {
      group[c] = static_cast<int>(group_first.size());
      group_first.push_back(c);
      group_joint.push_back(&uj);
    }
  }

  // Each group's mass, centre of mass and inertia about it in the axes of its first link.
  const std::size_t ng = group_first.size();
  std::vector<double> mass(ng, 0.0);
  std::vector<Vec3> first_moment(ng, Vec3::Zero());
  for (std::size_t i = 0; i < nl; ++i) {
    const UrdfLink& link = urdf.links[i];
    if (!link.has_inertial) continue;
    mass[group[i]] += link.mass;
    first_moment[group[i]] += link.mass * world_link[i].act(link.inertial_origin.x);
  }
  std::vector<SE3> world_body(ng);
  std::vector<Mat3> inertia(ng, Mat3::Zero());
  for (std::size_t g = 0; g < ng; ++g) {
    world_body[g].R = world_link[group_first[g]].R;
    if (mass[g] > 0.0) world_body[g].x = first_moment[g] / mass[g];
  }
  for (std::size_t i = 0; i < nl; ++i) {
    const UrdfLink& link = urdf.links[i];
    if (!link.has_inertial) continue;
    const SE3& body = world_body[group[i]];
    // The link's inertia in the body's axes, moved to the body's centre of mass.
    const Mat3 R = body.R.transpose() * world_link[i].R * link.inertial_origin.R;
    const Vec3 d = body.R.transpose() * (world_link[i].act(link.inertial_origin.x) - body.x);
    inertia[group[i]] += R * link.inertia * R.transpose() +
                         link.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
  }

  // Group 0 is the world for a fixed base, else a free body; the other groups are bodies.
  std::vector<int> group_body(ng, kWorld);
  std::vector<Body> bodies;
  std::vector<BodyState> state;
  for (std::size_t g = floating_base ? 0 : 1; g < ng; ++g) {
    const std::string& name = urdf.links[group_first[g]].name;
    if (!(mass[g] > 0.0)) {
      throw InputError(where + "link \"" + name + "\" and the links welded to it have no mass" +
                       (g == 0 ? std::string(" but form the floating base")
                               : " but joint \"" + group_joint[g]->name + "\" moves them") +
                       "; in maximal coordinates every moving body needs a mass");
    }
    group_body[g] = static_cast<int>(bodies.size());
    bodies.push_back({name, mass[g], inertia[g]});
    BodyState s;
    s.x = world_body[g].x;
    s.q = Quat::from_rotation(world_body[g].R);
    state.push_back(s);
  }
  if (!floating_base) world_body[0] = SE3::identity();  // the world's own frame

  std::vector<Joint> joints;
  for (std::size_t g = 1; g < ng; ++g) {
    const UrdfJoint& uj = *group_joint[g];
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
    joints.push_back(j);
  }
  if (bodies.empty())
    throw InputError(where + "no moving link has an <inertial>: nothing can move");
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

}  // namespace marsden::maximal
