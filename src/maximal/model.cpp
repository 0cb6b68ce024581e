#include "marsden/maximal/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include "marsden/error.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/velocity.hpp"

namespace marsden::maximal {

namespace {

std::string body_label(const std::vector<Body>& bodies, int b) {
  return "body " + std::to_string(b) + (bodies[b].name.empty() ? "" : " ('" + bodies[b].name + "')");
}

std::string joint_label(const Joint& joint, int j) {
  return "joint " + std::to_string(j) + (joint.name.empty() ? "" : " ('" + joint.name + "')");
}

void check_finite(const Eigen::Ref<const Eigen::MatrixXd>& value, const std::string& what) {
  if (!value.allFinite()) throw InputError(what + " is not finite");
}

void validate_body(const std::vector<Body>& bodies, int b) {
  const Body& body = bodies[b];
  const std::string label = body_label(bodies, b);
  if (!std::isfinite(body.mass) || body.mass < 0.0) {
    throw InputError(label + ": mass must be non-negative and finite, got " +
                     std::to_string(body.mass));
  }
  check_finite(body.inertia, label + ": inertia");
  if (!body.inertia.isApprox(body.inertia.transpose(), 1e-12)) {
    throw InputError(label + ": inertia tensor is not symmetric");
  }
  const Vec3 lambda =
      Eigen::SelfAdjointEigenSolver<Mat3>(body.inertia, Eigen::EigenvaluesOnly).eigenvalues();
  if (lambda.minCoeff() < -1e-12 * lambda.maxCoeff()) {
    throw InputError(label + ": inertia tensor is not positive semi-definite (smallest "
                     "eigenvalue " + std::to_string(lambda.minCoeff()) + ")");
  }
}

Vec3 unit_axis(const Vec3& axis, const std::string& what) {
  check_finite(axis, what);
  const double norm = axis.norm();
  if (norm < 1e-12) throw InputError(what + " must be a non-zero vector");
  return axis / norm;
}

Joint validated_joint(Joint joint, int j, int num_bodies) {
  const std::string label = joint_label(joint, j);
  if (joint.parent < kWorld || joint.parent >= num_bodies) {
    throw InputError(label + ": parent index " + std::to_string(joint.parent) +
                     " is not a body or kWorld (" + std::to_string(num_bodies) + " bodies)");
  }
  if (joint.child < 0 || joint.child >= num_bodies) {
    throw InputError(label + ": child index " + std::to_string(joint.child) +
                     " is not a body (" + std::to_string(num_bodies) + " bodies)");
  }
  if (joint.parent == joint.child) throw InputError(label + ": joins body " + std::to_string(joint.child) + " to itself");
  check_finite(joint.p_parent, label + ": p_parent");
  check_finite(joint.p_child, label + ": p_child");
  check_finite(joint.q_offset.q, label + ": q_offset");
  if (joint.q_offset.q.norm() < 1e-12) throw InputError(label + ": q_offset is zero");
  joint.q_offset.q.normalize();
  joint.axis = unit_axis(joint.axis, label + ": axis");
  if (joint_kind(joint.type).turn == Turn::Universal) {
    joint.axis2 = unit_axis(joint.axis2, label + ": axis2");
    if (std::abs(joint.axis.dot(joint.axis2)) > 1e-9) {
      throw InputError(label + ": universal joint axes must be orthogonal");
    }
  }
  for (const auto& [value, name] : {std::pair{joint.stiffness, "stiffness"},
                                    std::pair{joint.damping, "damping"}}) {
    if (!std::isfinite(value) || value < 0.0) {
      throw InputError(label + ": " + name + " must be non-negative and finite");
    }
  }
  if (!std::isfinite(joint.rest)) throw InputError(label + ": rest is not finite");
  if (std::isnan(joint.lower) || std::isnan(joint.upper) || joint.lower > joint.upper ||
      joint.lower == std::numeric_limits<double>::infinity() ||
      joint.upper == -std::numeric_limits<double>::infinity()) {
    throw InputError(label + ": limits must satisfy lower <= upper (got " +
                     std::to_string(joint.lower) + ", " + std::to_string(joint.upper) + ")");
  }
  if (joint_dofs(joint.type) != 1 && (std::isfinite(joint.lower) || std::isfinite(joint.upper))) {
    throw InputError(label + ": limits are supported on revolute and prismatic joints only, not "
                     "on " + std::string(joint_type_name(joint.type)));
  }
  if (joint_dofs(joint.type) != 1 && (joint.stiffness != 0.0 || joint.damping != 0.0)) {
    throw InputError(label + ": springs and dampers are supported on revolute and prismatic "
                     "joints only, not on " + joint_type_name(joint.type));
  }
  if (joint.prescribed) {
    if (joint_dofs(joint.type) != 1) {
      throw InputError(label + ": only a revolute or prismatic joint's coordinate can be "
                       "prescribed, not a " + std::string(joint_type_name(joint.type)) + "'s");
    }
    // Its coordinate is given: a damper or a limit on it would have nothing to act on.
    if (joint.damping != 0.0 || std::isfinite(joint.lower) || std::isfinite(joint.upper)) {
      throw InputError(label + ": a prescribed joint takes no damper and no limits (its "
                       "coordinate follows its path)");
    }
  }
  return joint;
}

void validate_velocity_constraint(VelocityConstraint& c, int k, int num_bodies) {
  const std::string label = "velocity constraint " + std::to_string(k) +
                            (c.name.empty() ? "" : " ('" + c.name + "')");
  if (c.body < 0 || c.body >= num_bodies) {
    throw InputError(label + ": body index " + std::to_string(c.body) + " is not a body (" +
                     std::to_string(num_bodies) + " bodies)");
  }
  check_finite(c.point, label + ": point");
  c.axis = unit_axis(c.axis, label + ": axis");
  c.ground_normal = unit_axis(c.ground_normal, label + ": ground_normal");
  if (c.type != VelocityConstraintType::Skate && !(std::isfinite(c.radius) && c.radius > 0.0)) {
    throw InputError(label + ": a " + velocity_constraint_type_name(c.type) +
                     " needs a positive finite radius, got " + std::to_string(c.radius));
  }
}

// Whether body b's velocity rows can be eliminated at the body (integrator.cpp,
// constrain_bodies): the forces its parent tree joint exerts on it and its constraints'
// forces must be independent on the body alone, else the joint's pivot is singular once
// the body is eliminated. Checked at the joint's zero configuration, the parent at the
// identity, where a dependence that the kinds of joint and constraint build in shows: a
// skate at a hinge's anchor across its axis (its force one of the hinge's), or rows
// beyond six (a wheel on an axle hinge, 5 + 2).
bool eliminable_at_body(int b, const Topology& topo, const std::vector<Joint>& joints,
                        const std::vector<VelocityConstraint>& constraints) {
  using Wrenches = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 12>;
  Wrenches W(6, 0);
  auto add = [&W](const Vec6& column) {
    W.conservativeResize(6, W.cols() + 1);
    W.col(W.cols() - 1) = column;
  };
  Mat3 R = Mat3::Identity();
  if (const int node = topo.parent_node[std::size_t(b)]; node >= 0) {
    const Joint& joint = joints[std::size_t(topo.node_joint[std::size_t(node)])];
    const BodyState parent;
    const BodyState child =
        place_child(joint, parent, BodyState(), JointCoords::Zero(joint_dofs(joint.type)));
    JointBlock G_parent, G_child;
    joint_jacobians(joint, parent, child, G_parent, G_child);
    const JointBlock& G = joint.child == b ? G_child : G_parent;
    for (int i = 0; i < G.rows(); ++i) add(G.row(i).transpose());
    if (has_coordinate_row(joint)) {
      Vec6 ds_parent, ds_child;
      joint_coordinate(joint, parent, child, &ds_parent, &ds_child);
      add(joint.child == b ? ds_child : ds_parent);
    }
    if (joint.child == b) R = child.q.matrix();
  }
  for (const VelocityConstraint& c : constraints) {
    if (c.body != b) continue;
    VelocityRows A;
    if (!velocity_constraint_rows(c, R, A)) return false;
    for (int i = 0; i < A.rows(); ++i) add(A.row(i).transpose());
  }
  if (W.cols() > 6) return false;
  const Eigen::JacobiSVD<Wrenches> svd(W);
  const auto sigma = svd.singularValues();
  return sigma.minCoeff() > 1e-9 * sigma.maxCoeff();
}

// Depth-first spanning forest of the graph (world and bodies as vertices, joints as
// edges), rooted at the world first. Nodes are discovered parents first, so the reversed
// discovery order eliminates every node after all of its children: no fill-in (§4.2).
Topology build_topology(int num_bodies, const std::vector<Joint>& joints) {
  const int num_joints = static_cast<int>(joints.size());
  std::vector<std::vector<int>> incident(num_bodies + 1);  // vertex 0 is the world
  for (int j = 0; j < num_joints; ++j) {
    incident[joints[j].parent + 1].push_back(j);
    incident[joints[j].child + 1].push_back(j);
  }
  Topology topo;
  topo.joint_node.assign(num_joints, -1);
  std::vector<int> vertex_node(num_bodies + 1, -1);
  std::vector<bool> visited(num_bodies + 1, false), used(num_joints, false);
  std::vector<int> discovery, node_parent_tmp(num_bodies + num_joints, -1);
  std::vector<int> joint_nodes_in_order;
  std::vector<int> stack;
  for (int b = 0; b < num_bodies; ++b) vertex_node[b + 1] = b;
  for (int root = 0; root <= num_bodies; ++root) {
    if (visited[root] || (root == 0 && incident[0].empty())) continue;
    visited[root] = true;
    if (root > 0) discovery.push_back(vertex_node[root]);
    stack.push_back(root);
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (const int j : incident[u]) {
        if (used[j]) continue;
        used[j] = true;
        const int w = (joints[j].parent + 1 == u) ? joints[j].child + 1 : joints[j].parent + 1;
        if (visited[w]) {
          topo.loop_joints.push_back(j);
          continue;
        }
        visited[w] = true;
        const int jn = num_bodies + static_cast<int>(joint_nodes_in_order.size());
        joint_nodes_in_order.push_back(j);
        topo.joint_node[j] = jn;
        node_parent_tmp[jn] = vertex_node[u];  // -1 for the world
        node_parent_tmp[vertex_node[w]] = jn;
        discovery.push_back(jn);
        discovery.push_back(vertex_node[w]);
        stack.push_back(w);
      }
    }
  }
  const int num_nodes = num_bodies + static_cast<int>(joint_nodes_in_order.size());
  topo.num_nodes = num_nodes;
  topo.parent_node.assign(node_parent_tmp.begin(), node_parent_tmp.begin() + num_nodes);
  topo.order.assign(discovery.rbegin(), discovery.rend());
  topo.node_joint.assign(num_nodes, -1);
  topo.node_size.assign(num_nodes, 6);
  topo.node_offset.assign(num_nodes, 0);
  topo.tree_joint_order = joint_nodes_in_order;
  for (int k = 0; k < static_cast<int>(joint_nodes_in_order.size()); ++k) {
    const int j = joint_nodes_in_order[k];
    topo.node_joint[num_bodies + k] = j;
    topo.node_size[num_bodies + k] = step_rows(joints[j]);
  }
  int offset = 0;
  for (int n = 0; n < num_nodes; ++n) {
    topo.node_offset[n] = offset;
    offset += topo.node_size[n];
  }
  topo.tree_rows = offset;
  for (const int j : topo.loop_joints) {
    topo.loop_offset.push_back(topo.loop_rows);
    topo.loop_rows += step_rows(joints[j]);
  }
  return topo;
}

}  // namespace

const char* velocity_constraint_type_name(VelocityConstraintType type) {
  switch (type) {
    case VelocityConstraintType::Skate: return "skate";
    case VelocityConstraintType::RollingWheel: return "rolling_wheel";
    case VelocityConstraintType::RollingBall: return "rolling_ball";
  }
  return "unknown";
}

Model::Model(std::vector<Body> bodies, std::vector<Joint> joints, Vec3 gravity,
             std::vector<Coupling> couplings, Contacts contacts,
             std::vector<VelocityConstraint> velocity_constraints)
    : bodies_(std::move(bodies)),
      couplings_(std::move(couplings)),
      contacts_(std::move(contacts)),
      velocity_constraints_(std::move(velocity_constraints)),
      gravity_(gravity) {
  if (bodies_.empty()) throw InputError("model: a mechanism needs at least one body");
  check_finite(gravity_, "model: gravity");
  const int num_bodies = static_cast<int>(bodies_.size());
  for (int b = 0; b < num_bodies; ++b) validate_body(bodies_, b);
  for (int j = 0; j < static_cast<int>(joints.size()); ++j) {
    joints_.push_back(validated_joint(std::move(joints[j]), j, num_bodies));
  }
  set_scales();
  const int num_joints = static_cast<int>(joints_.size());
  for (const Coupling& c : couplings_) {
    const std::string label = "coupling '" + c.name + "'";
    for (const int j : {c.follower, c.leader}) {
      if (j < 0 || j >= num_joints)
        throw InputError(label + ": joint index " + std::to_string(j) + " out of range");
      if (joint_dofs(joints_[j].type) != 1)
        throw InputError(label + ": joint '" + joints_[j].name +
                         "' is not revolute or prismatic (a coupling ties one coordinate)");
    }
    if (c.follower == c.leader) throw InputError(label + ": couples a joint with itself");
    if (!std::isfinite(c.multiplier) || !std::isfinite(c.offset))
      throw InputError(label + ": multiplier and offset must be finite");
  }
  topology_ = build_topology(num_bodies, joints_);
  contact_points_ = maximal::contact_points(bodies_, contacts_);
  // An impact's impulse is solved for one free body at a time (integrator.cpp, Impacts).
  for (const ContactPoint& c : contact_points_) {
    if (c.restitution == 0.0) continue;
    has_restitution_ = true;
    const Body& body = bodies_[c.body];
    if (!(body.mass > 0.0) || body.inertia.llt().info() != Eigen::Success) {
      throw InputError("collision shape '" + contacts_.shapes[c.shape].name + "' on body '" +
                       body.name + "': restitution above 0 needs a body with mass and a "
                       "positive definite inertia (its impulse divides by them)");
    }
    for (const Joint& joint : joints_) {
      if (joint.parent != c.body && joint.child != c.body) continue;
      throw InputError("collision shape '" + contacts_.shapes[c.shape].name + "' on body '" +
                       bodies_[c.body].name + "': restitution above 0 needs a body without "
                       "joints, and joint '" + joint.name + "' holds it (docs/contact.md, Impacts)");
    }
  }
  for (std::size_t k = 0; k < couplings_.size(); ++k) {
    topology_.coupling_offset.push_back(topology_.loop_rows);
    ++topology_.loop_rows;
  }
  // A joint limit couples the joint's two bodies through its impulse: a loop row too.
  for (int j = 0; j < num_joints; ++j) {
    for (const double side : {1.0, -1.0}) {
      if (!std::isfinite(side > 0.0 ? joints_[j].lower : joints_[j].upper)) continue;
      topology_.limit_joint.push_back(j);
      topology_.limit_side.push_back(side);
      topology_.coupling_offset.push_back(topology_.loop_rows);
      ++topology_.loop_rows;
    }
  }
  // A velocity constraint's rows follow the nodes' (docs/maximal.md, Nonholonomic
  // constraints): the Newton solve eliminates them at their body where its parent joint's
  // forces and theirs are independent on it (eliminable_at_body), else they join the loop
  // block. A degenerate body is fine: the elimination works on the shifted matrix that the
  // Woodbury correction starts from.
  std::vector<int> rows_on(bodies_.size(), 0);
  for (std::size_t k = 0; k < velocity_constraints_.size(); ++k) {
    VelocityConstraint& c = velocity_constraints_[k];
    validate_velocity_constraint(c, int(k), num_bodies);
    const std::string label = "velocity constraint " + std::to_string(k) +
                              (c.name.empty() ? "" : " ('" + c.name + "')") + " on " +
                              body_label(bodies_, c.body);
    rows_on[c.body] += velocity_rows(c.type);
    if (rows_on[c.body] > 5) {
      throw InputError(label + ": a body takes at most 5 rows of velocity constraints (it "
                       "would have no motion left)");
    }
  }
  std::vector<int> at_body(bodies_.size(), -1);  // unknown yet
  for (std::size_t k = 0; k < velocity_constraints_.size(); ++k) {
    const int b = velocity_constraints_[k].body;
    if (at_body[std::size_t(b)] < 0) {
      at_body[std::size_t(b)] =
          eliminable_at_body(b, topology_, joints_, velocity_constraints_) ? 1 : 0;
    }
    for (int i = 0; i < velocity_rows(velocity_constraints_[k].type); ++i) {
      topology_.velocity_constraint.push_back(int(k));
      topology_.velocity_row.push_back(i);
      if (at_body[std::size_t(b)] == 1) {
        topology_.velocity_index.push_back(topology_.tree_rows++);
        topology_.velocity_coupling.push_back(-1);
      } else {
        topology_.velocity_index.push_back(-1);  // set below, after the tree rows
        topology_.velocity_coupling.push_back(int(topology_.coupling_offset.size()));
        topology_.coupling_offset.push_back(topology_.loop_rows++);
      }
    }
  }
  for (std::size_t k = 0; k < topology_.velocity_index.size(); ++k) {
    if (topology_.velocity_coupling[k] >= 0) {
      topology_.velocity_index[k] =
          topology_.tree_rows + topology_.coupling_offset[std::size_t(topology_.velocity_coupling[k])];
    }
  }
}

// Degenerate bodies take the mean mass and largest moment of the regular ones as scales
// (a rod keeps its own largest moment if larger); a mechanism without a regular inertia
// takes m l^2, with m the mean mass and l its longest joint anchor (or 1 m).
void Model::set_scales() {
  std::vector<Vec3> moments;
  double mass_sum = 0.0, inertia_sum = 0.0;
  int massive = 0, rotating = 0;
  for (const Body& body : bodies_) {
    moments.push_back(
        Eigen::SelfAdjointEigenSolver<Mat3>(body.inertia, Eigen::EigenvaluesOnly).eigenvalues());
    if (body.mass > 0.0) {
      mass_sum += body.mass;
      ++massive;
    }
    if (moments.back().minCoeff() > kDegenerateInertia * moments.back().maxCoeff()) {
      inertia_sum += moments.back().maxCoeff();
      ++rotating;
    }
  }
  if (massive == 0) {
    throw InputError("model: no body has a mass (a mechanism of massless bodies cannot move)");
  }
  const double mean_mass = mass_sum / massive;
  double length = 0.0;
  for (const Joint& j : joints_) length = std::max({length, j.p_parent.norm(), j.p_child.norm()});
  const double mean_inertia =
      rotating > 0 ? inertia_sum / rotating : mean_mass * std::pow(length > 0.0 ? length : 1.0, 2);
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const int row = 6 * static_cast<int>(b);
    const bool massless = !(bodies_[b].mass > kDegenerateInertia * mean_mass);
    const bool singular = !(moments[b].minCoeff() >
                            kDegenerateInertia * std::max(moments[b].maxCoeff(), mean_inertia));
    mass_scale_.push_back(massless ? mean_mass : bodies_[b].mass);
    inertia_scale_.push_back(singular ? std::max(moments[b].maxCoeff(), mean_inertia)
                                      : moments[b].maxCoeff());
    for (int k = 0; k < 3; ++k) {
      if (massless) degenerate_rows_.push_back(row + k);
    }
    for (int k = 3; k < 6; ++k) {
      if (singular) degenerate_rows_.push_back(row + k);
    }
  }
}

}  // namespace marsden::maximal
