// A URDF description in maximal coordinates (docs/urdf.md): one rigid body per link with
// an inertial, joined by revolute, prismatic and fixed joints.
#include <string>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/urdf.hpp"
#include "marsden/maximal/setup.hpp"

namespace marsden::maximal {

Mechanism mechanism_from_urdf(const UrdfModel& urdf, const Vec3& gravity) {
  const std::string where = "URDF robot \"" + urdf.name + "\": ";
  const std::size_t nl = urdf.links.size();
  int root = -1;
  for (std::size_t i = 0; i < nl; ++i)
    if (urdf.links[i].name == urdf.root) root = static_cast<int>(i);
  if (root < 0) throw InputError(where + "no root link \"" + urdf.root + "\"");

  // Per link: the body it belongs to (kWorld for the massless root and what is welded to
  // it) and the link frame in that body's frame. A body's frame has the axes of its own
  // link and its origin at the centre of mass, as maximal::Body expects.
  std::vector<int> link_body(nl, kWorld);
  std::vector<SE3> body_link(nl);
  std::vector<SE3> world_link(nl);  // URDF zero configuration, root at the world origin
  std::vector<Body> bodies;
  std::vector<BodyState> state;
  std::vector<Joint> joints;

  // Makes link i a body whose link frame is at world_link[i]; returns its index.
  auto add_body = [&](std::size_t i) {
    const UrdfLink& link = urdf.links[i];
    const Mat3& R_com = link.inertial_origin.R;
    bodies.push_back({link.name, link.mass, R_com * link.inertia * R_com.transpose()});
    body_link[i] = SE3{Mat3::Identity(), -link.inertial_origin.x};
    BodyState s;
    s.x = world_link[i].act(link.inertial_origin.x);
    s.q = Quat::from_rotation(world_link[i].R);
    state.push_back(s);
    link_body[i] = static_cast<int>(bodies.size()) - 1;
    return link_body[i];
  };

  if (urdf.links[static_cast<std::size_t>(root)].has_inertial) {
    // A massive base is a body welded to the world, at its place.
    const int b = add_body(static_cast<std::size_t>(root));
    Joint weld;
    weld.name = urdf.root + "_world";
    weld.type = JointType::Fixed;
    weld.parent = kWorld;
    weld.child = b;
    weld.p_parent = state[static_cast<std::size_t>(b)].x;
    weld.q_offset = state[static_cast<std::size_t>(b)].q;
    joints.push_back(weld);
  }

  // Joints come parent first, so the parent link is placed before its child.
  for (const UrdfJoint& uj : urdf.joints) {
    const auto p = static_cast<std::size_t>(uj.parent_index);
    const auto c = static_cast<std::size_t>(uj.child_index);
    world_link[c] = world_link[p] * uj.origin;
    const int parent_body = link_body[p];
    // The joint frame in the parent body's frame (in the world for kWorld).
    const SE3 body_joint = body_link[p] * uj.origin;
    const UrdfLink& child = urdf.links[c];
    if (!child.has_inertial) {
      if (uj.type != UrdfJointType::Fixed)
        throw InputError(where + "link \"" + child.name + "\" has no <inertial> but joint \"" +
                         uj.name + "\" moves it; in maximal coordinates every moving link is "
                         "a body and needs a mass (give it one, or attach it by a fixed joint)");
      // A massless frame welded to its parent is part of the parent's body.
      link_body[c] = parent_body;
      body_link[c] = body_joint;
      continue;
    }
    const int b = add_body(c);
    Joint j;
    j.name = uj.name;
    j.type = uj.type == UrdfJointType::Fixed       ? JointType::Fixed
             : uj.type == UrdfJointType::Prismatic ? JointType::Prismatic
                                                   : JointType::Revolute;
    j.parent = parent_body;
    j.child = b;
    j.p_parent = body_joint.x;
    // At zero the child link frame is the joint frame, seen from the child's centre of mass.
    j.p_child = -child.inertial_origin.x;
    j.q_offset = Quat::from_rotation(body_joint.R);
    j.axis = body_joint.R * uj.axis;
    // Only viscous damping carries over; URDF limits and friction have no maximal form.
    if (uj.type != UrdfJointType::Fixed) j.damping = uj.damping;
    joints.push_back(j);
  }
  if (bodies.empty()) throw InputError(where + "no link with an <inertial>: nothing can move");
  Model model(std::move(bodies), std::move(joints), gravity);
  return {std::move(model), std::move(state)};
}

}  // namespace marsden::maximal
