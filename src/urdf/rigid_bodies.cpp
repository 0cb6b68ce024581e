// The rigid bodies of a URDF description (docs/urdf.md): links welded by fixed joints,
// with their combined mass and inertia, shared by the file check and both engines.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include <Eigen/Eigenvalues>

#include "marsden/error.hpp"
#include "marsden/urdf.hpp"

namespace marsden {

UrdfRigidBodies rigid_bodies(const UrdfModel& urdf) {
  const std::size_t nl = urdf.links.size();
  UrdfRigidBodies out;
  out.world_link.assign(nl, SE3::identity());
  out.body_of_link.assign(nl, 0);
  int root = -1;
  for (std::size_t i = 0; i < nl; ++i)
    if (urdf.links[i].name == urdf.root) root = static_cast<int>(i);
  if (root < 0) throw InputError("URDF robot \"" + urdf.name + "\": no root link \"" + urdf.root + "\"");
  UrdfRigidBody root_body;
  root_body.links = {root};
  out.bodies.push_back(root_body);
  // Joints come parent first, so a link's parent group exists before the link.
  for (std::size_t j = 0; j < urdf.joints.size(); ++j) {
    const UrdfJoint& uj = urdf.joints[j];
    const auto p = static_cast<std::size_t>(uj.parent_index);
    const auto c = static_cast<std::size_t>(uj.child_index);
    out.world_link[c] = out.world_link[p] * uj.origin;
    if (uj.type == UrdfJointType::Fixed) {
      out.body_of_link[c] = out.body_of_link[p];
      out.bodies[out.body_of_link[c]].links.push_back(uj.child_index);
    } else {
      UrdfRigidBody body;
      body.joint = static_cast<int>(j);
      body.links = {uj.child_index};
      body.parent = out.body_of_link[p];
      out.body_of_link[c] = static_cast<int>(out.bodies.size());
      out.bodies.push_back(body);
    }
  }

  for (UrdfRigidBody& body : out.bodies) {
    Vec3 first_moment = Vec3::Zero();
    for (const int i : body.links) {
      const UrdfLink& link = urdf.links[i];
      if (!link.has_inertial) continue;
      body.mass += link.mass;
      first_moment += link.mass * out.world_link[i].act(link.inertial_origin.x);
    }
    body.world_body.R = out.world_link[body.links.front()].R;
    body.world_body.x = body.mass > 0.0 ? Vec3(first_moment / body.mass)
                                        : out.world_link[body.links.front()].x;
    Mat3 inertia = Mat3::Zero();
    for (const int i : body.links) {
      const UrdfLink& link = urdf.links[i];
      if (!link.has_inertial) continue;
      // The link's inertia in the body's axes, moved to the body's centre of mass.
      const Mat3 R = body.world_body.R.transpose() * out.world_link[i].R * link.inertial_origin.R;
      const Vec3 d = body.world_body.R.transpose() *
                     (out.world_link[i].act(link.inertial_origin.x) - body.world_body.x);
      inertia += R * link.inertia * R.transpose() +
                 link.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
    }
    inertia = 0.5 * (inertia + inertia.transpose());
    const Eigen::SelfAdjointEigenSolver<Mat3> eig(inertia);
    const Vec3 lambda = eig.eigenvalues();
    body.smallest_eigenvalue = lambda.minCoeff();
    body.inertia = eig.eigenvectors() * lambda.cwiseMax(0.0).asDiagonal() *
                   eig.eigenvectors().transpose();
  }
  return out;
}

std::vector<int> joints_moving_no_mass(const UrdfModel& urdf) {
  const UrdfRigidBodies rb = rigid_bodies(urdf);
  // Children come after parents: one backward sweep gathers each subtree.
  std::vector<bool> subtree_moves(rb.bodies.size(), false);
  for (std::size_t g = rb.bodies.size(); g-- > 0;) {
    const UrdfRigidBody& body = rb.bodies[g];
    if (body.moves_mass()) subtree_moves[g] = true;
    if (subtree_moves[g] && body.parent >= 0) subtree_moves[body.parent] = true;
  }
  // A <mimic> leader and its followers move together: they move no mass only if none of
  // them does (one that does determines the others through the couplings).
  std::vector<bool> moves(urdf.joints.size(), true);
  for (std::size_t g = 1; g < rb.bodies.size(); ++g) moves[rb.bodies[g].joint] = subtree_moves[g];
  std::unordered_map<std::string, int> index;
  for (std::size_t j = 0; j < urdf.joints.size(); ++j)
    index.emplace(urdf.joints[j].name, static_cast<int>(j));
  std::vector<int> group(urdf.joints.size());
  for (std::size_t j = 0; j < urdf.joints.size(); ++j) {
    const auto leader = urdf.joints[j].mimic.empty() ? index.end() : index.find(urdf.joints[j].mimic);
    group[j] = leader == index.end() ? static_cast<int>(j) : leader->second;
  }
  std::vector<bool> group_moves(urdf.joints.size(), false);
  for (std::size_t j = 0; j < urdf.joints.size(); ++j)
    if (moves[j]) group_moves[group[j]] = true;
  std::vector<int> out;
  for (std::size_t g = 1; g < rb.bodies.size(); ++g) {
    const int j = rb.bodies[g].joint;
    if (!group_moves[group[j]]) out.push_back(j);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_joints_move_mass(const UrdfModel& urdf) {
  const std::vector<int> joints = joints_moving_no_mass(urdf);
  if (joints.empty()) return;
  std::string names;
  for (std::size_t k = 0; k < joints.size() && k < 20; ++k)
    names += (k == 0 ? "\"" : ", \"") + urdf.joints[joints[k]].name + "\"";
  if (joints.size() > 20) names += " and " + std::to_string(joints.size() - 20) + " more";
  throw InputError("URDF robot \"" + urdf.name + "\": joint" + (joints.size() > 1 ? "s " : " ") +
                   names + (joints.size() > 1 ? " move" : " moves") +
                   " no mass (no link beyond carries mass or inertia), so no engine can "
                   "determine their accelerations; give those links an <inertial>, or weld "
                   "such joints (scene \"massless_joints\": \"weld\", Python "
                   "weld_massless_joints=True)");
}

UrdfModel weld_joints_moving_no_mass(UrdfModel urdf, std::vector<std::string>* welded) {
  for (const int j : joints_moving_no_mass(urdf)) {
    UrdfJoint& joint = urdf.joints[j];
    joint.type = UrdfJointType::Fixed;
    joint.mimic.clear();  // its whole <mimic> group is welded with it
    joint.has_limits = false;
    joint.damping = joint.friction = 0.0;
    if (welded != nullptr) welded->push_back(joint.name);
  }
  return urdf;
}

}  // namespace marsden
