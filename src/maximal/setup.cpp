#include "marsden/maximal/setup.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include <Eigen/Dense>

#include "marsden/error.hpp"

namespace marsden::maximal {

namespace {

const BodyState& pose_in(const std::vector<BodyState>& poses, int b) {
  return b == kWorld ? world_state() : poses[b];
}

// The pose of the interval start for a body at `st` moving with (v, omega) over dt:
// inverse of eqs. (27), (32).
BodyState previous_pose(const BodyState& st, double dt) {
  BodyState prev = st;
  prev.x = st.x - dt * st.v;
  Quat f;
  const double a = 1.0 - 0.25 * dt * dt * st.omega.squaredNorm();
  f.q << std::sqrt(std::max(a, 0.0)), 0.5 * dt * st.omega;
  prev.q = st.q * f.inverse();
  return prev;
}

double max_violation(const Model& model, const std::vector<BodyState>& state) {
  double worst = 0.0;
  for (const Joint& joint : model.joints()) {
    const JointVec g = joint_residual(joint, pose_in(state, joint.parent), state[joint.child]);
    worst = std::max(worst, g.lpNorm<Eigen::Infinity>());
  }
  return worst;
}

}  // namespace

std::vector<BodyState> state_from_joint_coordinates(const Model& model,
                                                    const std::vector<BodyState>& reference,
                                                    const std::vector<JointCoords>& coords,
                                                    const std::vector<JointCoords>& rates,
                                                    double dt) {
  const int nj = model.num_joints();
  if (static_cast<int>(reference.size()) != model.num_bodies() ||
      static_cast<int>(coords.size()) != nj || static_cast<int>(rates.size()) != nj) {
    throw InputError("joint coordinates: need one body state per body and coordinates and "
                     "rates for every joint");
  }
  if (!(dt > 0.0)) throw InputError("joint coordinates: dt must be positive");
  std::vector<BodyState> now = reference, before(reference.size());
  for (int b = 0; b < model.num_bodies(); ++b) before[b] = previous_pose(reference[b], dt);
  const Topology& topo = model.topology();
  for (const int j : topo.tree_joint_order) {
    const Joint& joint = model.joints()[j];
    const int dofs = joint_dofs(joint.type);
    if (coords[j].size() != dofs || rates[j].size() != dofs || !coords[j].allFinite() ||
        !rates[j].allFinite()) {
      throw InputError("joint coordinates: joint " + std::to_string(j) + " (" +
                       joint_type_name(joint.type) + ") needs " + std::to_string(dofs) +
                       " finite coordinates and rates");
    }
    // The joint places the body on its far side from the tree: usually its child, but a
    // joint reached from its child (a loop's spanning tree may do that) places its parent.
    const int from = topo.parent_node[topo.joint_node[j]];
    const bool forward = from == joint.parent || (from < 0 && joint.parent == kWorld);
    const int placed = forward ? joint.child : joint.parent;
    if (placed == kWorld) {
      throw InputError("joint coordinates: joint " + std::to_string(j) +
                       " would move the world");
    }
    const JointCoords coords_before = coords[j] - dt * rates[j];
    auto place = [&](std::vector<BodyState>& poses, const JointCoords& c) {
      poses[placed] = forward ? place_child(joint, pose_in(poses, joint.parent), poses[placed], c)
                              : place_parent(joint, poses[placed], poses[joint.child], c);
    };
    place(now, coords[j]);
    place(before, coords_before);
    BodyState& st = now[placed];
    st.v = (st.x - before[placed].x) / dt;
    Vec4 f = (before[placed].q.inverse() * st.q).q;
    if (f(0) < 0.0) f = -f;
    st.omega = 2.0 / dt * f.tail<3>();
  }
  return now;
}

std::vector<JointCoords> current_joint_coordinates(const Model& model,
                                                   const std::vector<BodyState>& state) {
  std::vector<JointCoords> q;
  for (const Joint& joint : model.joints())
    q.push_back(joint_coordinates(joint, pose_in(state, joint.parent), state[joint.child]));
  return q;
}

std::vector<BodyState> set_joint_state(const Model& model, const std::vector<BodyState>& state,
                                       const std::vector<JointCoords>& q,
                                       const std::vector<JointCoords>& qd, double dt) {
  // A coupled joint follows its leader: its own coordinate and rate given here are ignored.
  std::vector<JointCoords> q_coupled = q, qd_coupled = qd;
  for (const Coupling& c : model.couplings()) {
    if (q_coupled.size() == model.joints().size() && q_coupled[c.leader].size() == 1 &&
        q_coupled[c.follower].size() == 1) {
      q_coupled[c.follower][0] = c.multiplier * q_coupled[c.leader][0] + c.offset;
    }
    if (qd_coupled.size() == model.joints().size() && qd_coupled[c.leader].size() == 1 &&
        qd_coupled[c.follower].size() == 1) {
      qd_coupled[c.follower][0] = c.multiplier * qd_coupled[c.leader][0];
    }
  }
  std::vector<BodyState> out =
      state_from_joint_coordinates(model, state, q_coupled, qd_coupled, dt);
  if (model.topology().loop_joints.empty()) return out;
  const ProjectionReport report = project_state(model, out);
  if (!report.converged) {
    throw InputError("these joint coordinates cannot close the mechanism's loops (violation " +
                     std::to_string(report.violation) + " after the projection)");
  }
  return out;
}

ProjectionReport project_state(const Model& model, std::vector<BodyState>& state,
                               double tolerance, int max_iterations) {
  const int nb = model.num_bodies();
  int m = 0;
  for (const Joint& joint : model.joints()) m += constraint_rows(joint.type);
  Eigen::VectorXd inv_mass(6 * nb);
  for (int b = 0; b < nb; ++b) {
    inv_mass.segment<3>(6 * b).setConstant(1.0 / model.mass_scale(b));
    inv_mass.segment<3>(6 * b + 3).setConstant(1.0 / model.inertia_scale(b));
  }
  Eigen::VectorXd g(m);
  Eigen::MatrixXd G(m, 6 * nb);
  auto linearise = [&]() {
    G.setZero();
    int row = 0;
    for (const Joint& joint : model.joints()) {
      const int k = constraint_rows(joint.type);
      JointBlock G_a, G_b;
      const BodyState& a = pose_in(state, joint.parent);
      const BodyState& c = state[joint.child];
      JointVec g_joint;
      joint_jacobians(joint, a, c, G_a, G_b, &g_joint);
      g.segment(row, k) = g_joint;
      if (joint.parent != kWorld) G.block(row, 6 * joint.parent, k, 6) = G_a;
      G.block(row, 6 * joint.child, k, 6) = G_b;
      row += k;
    }
  };
  // Minimum-norm correction in the metric M: dz = -M^-1 G^T (G M^-1 G^T)^+ rhs.
  auto correction = [&](const Eigen::VectorXd& rhs) {
    const Eigen::MatrixXd GMinv = G * inv_mass.asDiagonal();
    // A tiny Levenberg-Marquardt shift keeps redundant (rank-deficient) rows harmless.
    Eigen::MatrixXd A = GMinv * G.transpose();
    A.diagonal().array() += 1e-12 * (1.0 + A.diagonal().maxCoeff());
    const Eigen::VectorXd mu = A.ldlt().solve(rhs);
    return Eigen::VectorXd(-(GMinv.transpose() * mu));
  };
  ProjectionReport report;
  for (; report.iterations < max_iterations; ++report.iterations) {
    linearise();
    report.violation = m > 0 ? g.lpNorm<Eigen::Infinity>() : 0.0;
    if (report.violation <= tolerance) break;
    const Eigen::VectorXd dz = correction(g);
    const std::vector<BodyState> start = state;
    // Backtrack until the violation decreases: near-redundant constraints give long steps.
    for (double alpha = 1.0; alpha > 1e-3; alpha *= 0.5) {
      for (int b = 0; b < nb; ++b) {
        state[b].x = start[b].x + alpha * dz.segment<3>(6 * b);
        state[b].q = start[b].q * Quat::exp(alpha * dz.segment<3>(6 * b + 3));
      }
      if (max_violation(model, state) < report.violation) break;
      if (alpha < 2e-3) state = start;
    }
  }
  report.converged = report.violation <= tolerance;
  if (m > 0) {
    linearise();
    Eigen::VectorXd z(6 * nb);
    for (int b = 0; b < nb; ++b) z.segment<6>(6 * b) << state[b].v, state[b].omega;
    const Eigen::VectorXd dz = correction(G * z);
    for (int b = 0; b < nb; ++b) {
      state[b].v += dz.segment<3>(6 * b);
      state[b].omega += dz.segment<3>(6 * b + 3);
    }
  }
  return report;
}

namespace {

Body rod(const std::string& name, double mass, double length, double radius, bool along_x) {
  Body body;
  body.name = name;
  body.mass = mass;
  const double across = mass * (3.0 * radius * radius + length * length) / 12.0;
  const double along = 0.5 * mass * radius * radius;
  body.inertia = along_x ? Vec3(along, across, across).asDiagonal()
                         : Vec3(across, across, along).asDiagonal();
  return body;
}

// A link whose body -z axis points along the unit direction d in the xz plane.
Quat link_orientation(const Vec3& d) {
  return Quat::exp(std::atan2(-d.x(), -d.z()) * Vec3::UnitY());
}

Joint hinge(std::string name, JointType type, int parent, int child, const Vec3& p_parent,
            const Vec3& p_child, const Quat& q_parent, const Quat& q_child) {
  Joint joint;
  joint.name = std::move(name);
  joint.type = type;
  joint.parent = parent;
  joint.child = child;
  joint.p_parent = p_parent;
  joint.p_child = p_child;
  joint.axis = Vec3::UnitY();
  joint.q_offset = q_parent.inverse() * q_child;
  return joint;
}

void require_links(int n, int minimum, const char* what) {
  if (n < minimum) {
    throw InputError(std::string(what) + ": needs at least " + std::to_string(minimum) +
                     " links, got " + std::to_string(n));
  }
}

}  // namespace

Mechanism pendulum_chain(int n, const ChainOptions& options) {
  require_links(n, 1, "pendulum_chain");
  const double l = options.link_length;
  std::vector<Body> bodies;
  std::vector<Joint> joints;
  for (int i = 0; i < n; ++i) {
    bodies.push_back(rod("link" + std::to_string(i), options.link_mass, l, options.link_radius, false));
    Joint joint;
    joint.name = "joint" + std::to_string(i);
    joint.type = options.joint;
    joint.parent = i == 0 ? kWorld : i - 1;
    joint.child = i;
    joint.p_parent = i == 0 ? Vec3::Zero() : Vec3(0.0, 0.0, -0.5 * l);
    joint.p_child = Vec3(0.0, 0.0, 0.5 * l);
    joint.axis = Vec3::UnitY();
    joints.push_back(joint);
  }
  Model model(std::move(bodies), std::move(joints), options.gravity);
  std::vector<JointCoords> coords(n), rates(n);
  for (int i = 0; i < n; ++i) {
    const int dofs = joint_dofs(options.joint);
    coords[i] = JointCoords::Zero(dofs);
    rates[i] = JointCoords::Zero(dofs);
  }
  if (options.joint == JointType::Spherical) {
    coords[0] << 0.2, options.initial_angle, 0.0;
  } else {
    coords[0](0) = options.initial_angle;
  }
  auto state = state_from_joint_coordinates(model, std::vector<BodyState>(n), coords, rates, 0.01);
  return {std::move(model), std::move(state)};
}

Mechanism closed_chain(int n, const ChainOptions& options) {
  require_links(n, 2, "closed_chain");
  const double l = options.link_length;
  const double half = std::numbers::pi / (n + 1);
  const double R = l / (2.0 * std::sin(half));
  const Vec3 centre(0.0, 0.0, -R * std::cos(half));
  std::vector<Vec3> vertex(n + 1);
  for (int k = 0; k <= n; ++k) {
    const double beta = -half - 2.0 * half * k;
    vertex[k] = centre + R * Vec3(std::sin(beta), 0.0, std::cos(beta));
  }
  std::vector<Body> bodies;
  std::vector<Joint> joints;
  std::vector<BodyState> state(n);
  for (int i = 0; i < n; ++i) {
    bodies.push_back(rod("link" + std::to_string(i), options.link_mass, l, options.link_radius, false));
    state[i].x = 0.5 * (vertex[i] + vertex[i + 1]);
    state[i].q = link_orientation((vertex[i + 1] - vertex[i]).normalized());
  }
  for (int i = 0; i < n; ++i) {
    const int parent = i == 0 ? kWorld : i - 1;
    joints.push_back(hinge("joint" + std::to_string(i), options.joint, parent, i,
                           i == 0 ? vertex[0] : Vec3(0.0, 0.0, -0.5 * l), Vec3(0.0, 0.0, 0.5 * l),
                           i == 0 ? Quat() : state[i - 1].q, state[i].q));
  }
  joints.push_back(hinge("closure", options.joint, kWorld, n - 1, vertex[n],
                         Vec3(0.0, 0.0, -0.5 * l), Quat(), state[n - 1].q));
  Model model(std::move(bodies), std::move(joints), options.gravity);
  return {std::move(model), std::move(state)};
}

Mechanism four_bar_chain(int k, double tilt, const Vec3& gravity) {
  require_links(k, 1, "four_bar_chain");
  const double h = 0.5;  // link length
  const double w = 0.4;  // bar length
  const Vec3 d(std::sin(tilt), 0.0, -std::cos(tilt));
  const Quat q_link = link_orientation(d);
  std::vector<Body> bodies;
  std::vector<Joint> joints;
  std::vector<BodyState> state;
  const Vec3 left(-0.5 * w, 0.0, 0.0), right(0.5 * w, 0.0, 0.0);
  const Vec3 top(0.0, 0.0, 0.5 * h), bottom(0.0, 0.0, -0.5 * h);
  for (int i = 0; i < k; ++i) {
    const std::string tag = std::to_string(i);
    const int prev_bar = i == 0 ? kWorld : 3 * i - 1;
    const int l_link = 3 * i, r_link = 3 * i + 1, bar = 3 * i + 2;
    bodies.push_back(rod("left" + tag, 0.5, h, 0.02, false));
    bodies.push_back(rod("right" + tag, 0.5, h, 0.02, false));
    bodies.push_back(rod("bar" + tag, 0.4, w, 0.02, true));
    BodyState st;
    st.q = q_link;
    st.x = left + (i + 0.5) * h * d;
    state.push_back(st);
    st.x = right + (i + 0.5) * h * d;
    state.push_back(st);
    st.q = Quat();
    st.x = (i + 1.0) * h * d;
    state.push_back(st);
    const Quat q_prev;  // bars and world keep the identity orientation
    joints.push_back(hinge("left" + tag, JointType::Revolute, prev_bar, l_link, left, top, q_prev, q_link));
    joints.push_back(hinge("right" + tag, JointType::Revolute, prev_bar, r_link, right, top, q_prev, q_link));
    joints.push_back(hinge("bar" + tag, JointType::Revolute, l_link, bar, bottom, left, q_link, Quat()));
    joints.push_back(hinge("close" + tag, JointType::Revolute, r_link, bar, bottom, right, q_link, Quat()));
  }
  Model model(std::move(bodies), std::move(joints), gravity);
  return {std::move(model), std::move(state)};
}

Mechanism minitaur_leg(double hip_half_angle) {
  const double a = 0.1, b = 0.2;
  const double s = std::sin(hip_half_angle), c = std::cos(hip_half_angle);
  const Vec3 d_left(-s, 0.0, -c), d_right(s, 0.0, -c);
  const Vec3 knee_left = a * d_left, knee_right = a * d_right;
  const Vec3 foot(0.0, 0.0, -(a * c + std::sqrt(b * b - a * a * s * s)));
  std::vector<Body> bodies = {rod("upper_left", 0.1, a, 0.01, false),
                              rod("upper_right", 0.1, a, 0.01, false),
                              rod("lower_left", 0.15, b, 0.01, false),
                              rod("lower_right", 0.15, b, 0.01, false)};
  std::vector<BodyState> state(4);
  state[0].x = 0.5 * knee_left;
  state[0].q = link_orientation(d_left);
  state[1].x = 0.5 * knee_right;
  state[1].q = link_orientation(d_right);
  state[2].x = 0.5 * (knee_left + foot);
  state[2].q = link_orientation((foot - knee_left).normalized());
  state[3].x = 0.5 * (knee_right + foot);
  state[3].q = link_orientation((foot - knee_right).normalized());
  const Vec3 top_a(0.0, 0.0, 0.5 * a), bottom_a(0.0, 0.0, -0.5 * a);
  const Vec3 top_b(0.0, 0.0, 0.5 * b), bottom_b(0.0, 0.0, -0.5 * b);
  std::vector<Joint> joints = {
      hinge("hip_left", JointType::Revolute, kWorld, 0, Vec3::Zero(), top_a, Quat(), state[0].q),
      hinge("hip_right", JointType::Revolute, kWorld, 1, Vec3::Zero(), top_a, Quat(), state[1].q),
      hinge("knee_left", JointType::Revolute, 0, 2, bottom_a, top_b, state[0].q, state[2].q),
      hinge("knee_right", JointType::Revolute, 1, 3, bottom_a, top_b, state[1].q, state[3].q),
      hinge("foot", JointType::Revolute, 2, 3, bottom_b, bottom_b, state[2].q, state[3].q)};
  Model model(std::move(bodies), std::move(joints));
  return {std::move(model), std::move(state)};
}

Mechanism chaplygin_sleigh(double mass, double inertia, double skate_offset) {
  if (!(mass > 0.0) || !(inertia > 0.0) || !std::isfinite(mass) || !std::isfinite(inertia) ||
      !std::isfinite(skate_offset)) {
    throw InputError("chaplygin_sleigh: mass and inertia must be positive and finite, and the "
                     "skate offset finite");
  }
  Joint plane;
  plane.name = "plane";
  plane.type = JointType::Planar;
  plane.child = 0;
  VelocityConstraint skate;
  skate.name = "skate";
  skate.point = Vec3(skate_offset, 0.0, 0.0);
  skate.axis = Vec3::UnitY();
  Model model({{"sleigh", mass, inertia * Mat3::Identity()}}, {plane}, Vec3(0.0, 0.0, -9.81), {},
              {}, {skate});
  return {std::move(model), std::vector<BodyState>(1)};
}

Mechanism rolling_disk(double mass, double radius) {
  if (!(mass > 0.0) || !(radius > 0.0) || !std::isfinite(mass) || !std::isfinite(radius))
    throw InputError("rolling_disk: mass and radius must be positive and finite");
  const double r2 = radius * radius;
  // A uniform disk in its body x-z plane, axle along body y.
  Body disk{"disk", mass, mass * r2 * Vec3(0.25, 0.5, 0.25).asDiagonal()};
  Joint plane;
  plane.name = "plane";
  plane.type = JointType::Planar;
  plane.child = 0;
  plane.p_parent = Vec3(0.0, 0.0, radius);
  Joint axle;
  axle.name = "axle";
  axle.type = JointType::Revolute;
  axle.parent = 0;
  axle.child = 1;
  axle.axis = Vec3::UnitY();
  VelocityConstraint rolling;
  rolling.name = "rolling";
  rolling.type = VelocityConstraintType::RollingWheel;
  rolling.body = 1;
  rolling.axis = Vec3::UnitY();
  rolling.radius = radius;
  std::vector<BodyState> state(2);
  for (BodyState& b : state) b.x = Vec3(0.0, 0.0, radius);
  // The fork carries no mass: the planar joint and the axle determine it (a degenerate body,
  // docs/maximal.md), so the mechanism is the disk alone.
  Model model({{"fork", 0.0, Mat3::Zero()}, disk}, {plane, axle}, Vec3(0.0, 0.0, -9.81), {}, {},
              {rolling});
  return {std::move(model), std::move(state)};
}

Mechanism trailer_train(int trailers, double steering) {
  if (trailers < 0 || trailers > 100000 || !std::isfinite(steering) ||
      std::abs(steering) >= 0.5 * std::numbers::pi) {
    throw InputError("trailer_train: trailers must be in [0, 100000] and |steering| < pi / 2");
  }
  // Bodies 1 m long (mass 1 kg, a slender box's inertia), hitched 0.5 m behind and ahead of
  // their centres; each rides on an axle 0.2 m behind its centre that cannot slide sideways.
  const int n = trailers + 1;
  std::vector<Body> bodies;
  std::vector<Joint> joints;
  std::vector<VelocityConstraint> axles;
  std::vector<BodyState> state(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    bodies.push_back(solid_box(i == 0 ? "tractor" : "trailer" + std::to_string(i), 1.0,
                               Vec3(0.5, 0.2, 0.1)));
    state[std::size_t(i)].x = Vec3(-1.0 * i, 0.0, 0.0);
    Joint j;
    if (i == 0) {
      j.name = "plane";
      j.type = JointType::Planar;
    } else {
      j.name = "hitch" + std::to_string(i);
      j.parent = i - 1;
      j.p_parent = Vec3(-0.5, 0.0, 0.0);
      j.p_child = Vec3(0.5, 0.0, 0.0);
      j.axis = Vec3::UnitZ();
    }
    j.child = i;
    joints.push_back(j);
    VelocityConstraint axle;
    axle.name = i == 0 ? "tractor_rear" : "axle" + std::to_string(i);
    axle.body = i;
    axle.point = Vec3(-0.2, 0.0, 0.0);
    axles.push_back(axle);
  }
  // The steered front axle, last: a light axle (0.1 kg; massless, it would cost a dense
  // Woodbury correction of six rows) on the prescribed hinge "steering" 0.3 m ahead of the
  // tractor's centre, its skate turned with it. Its hinge fixes it to the tractor, so its
  // skate row joins the loop block (one row, whatever the length).
  bodies.push_back(solid_box("steered_axle", 0.1, Vec3(0.05, 0.2, 0.05)));
  Joint steer;
  steer.name = "steering";
  steer.parent = 0;
  steer.child = n;
  steer.p_parent = Vec3(0.3, 0.0, 0.0);
  steer.axis = Vec3::UnitZ();
  steer.prescribed = true;
  joints.push_back(steer);
  BodyState axle_state;
  axle_state.x = Vec3(0.3, 0.0, 0.0);
  axle_state.q = Quat::exp(steering * Vec3::UnitZ());
  state.push_back(axle_state);
  VelocityConstraint front;
  front.name = "tractor_front";
  front.body = n;
  axles.push_back(front);
  Model model(std::move(bodies), std::move(joints), Vec3(0.0, 0.0, -9.81), {}, {},
              std::move(axles));
  return {std::move(model), std::move(state)};
}

// NhCar's Lagrangian 1/2 (I psi_dot^2 + K theta_dot^2 + m (x_dot^2 + y_dot^2)), (x, y) the
// rear axle, from bodies: the chassis has all the mass m, centred at the rear axle, and the
// yaw inertia K (less the front set's J_s); the wheel, centred there too, has no mass and
// the inertia I about its axle only (diag(0, I, 0)), so it adds I psi_dot^2 and nothing to
// the yaw; the front set is massless, with J_s about every axis (its yaw rate is
// theta_dot + steering rate, so at a held steering angle it adds J_s theta_dot^2). Rows of
// NhCar's constraint: "rear" gives rolling (x_dot, y_dot) . heading = rho psi_dot and no
// lateral slip; "front", the velocity of the point l ahead normal to the steered wheels,
// -sin(delta) v + cos(delta) l theta_dot = 0, i.e. theta_dot = (v / l) tan(delta).
Mechanism car(const CarParams& p, double steering, double steering_inertia) {
  if (!(p.m > 0.0) || !(p.I > 0.0) || !(p.K > 0.0) || !(p.rho > 0.0) || !(p.l > 0.0) ||
      !std::isfinite(p.m + p.I + p.K + p.rho + p.l)) {
    throw InputError("car: mass, wheel inertia, body inertia, wheel radius and axle distance "
                     "must be positive and finite");
  }
  if (!(std::abs(steering) < 0.5 * std::numbers::pi))
    throw InputError("car: steering must be a finite angle in (-pi/2, pi/2) rad");
  if (!(steering_inertia >= 0.0) || !(steering_inertia < p.K)) {
    throw InputError("car: steering_inertia must be >= 0 and below the body inertia K (the "
                     "front set's yaw inertia is part of K)");
  }
  const bool steerable = steering_inertia > 0.0;
  const Quat turn = Quat::exp(steering * Vec3::UnitZ());
  std::vector<Body> bodies = {
      {"chassis", p.m, (p.K - steering_inertia) * Mat3::Identity()},
      {"wheel", 0.0, Vec3(0.0, p.I, 0.0).asDiagonal()},
      {"front", 0.0, steering_inertia * Mat3::Identity()}};
  Joint plane;
  plane.name = "plane";
  plane.type = JointType::Planar;
  plane.child = 0;
  plane.p_parent = Vec3(0.0, 0.0, p.rho);
  Joint axle;
  axle.name = "axle";
  axle.parent = 0;
  axle.child = 1;
  axle.axis = Vec3::UnitY();
  // A hinge whose coordinate is the steering angle: turned by a torque, or prescribed.
  Joint steer;
  steer.name = "steering";
  steer.parent = 0;
  steer.child = 2;
  steer.p_parent = Vec3(p.l, 0.0, 0.0);
  steer.axis = Vec3::UnitZ();
  steer.prescribed = !steerable;
  VelocityConstraint rear;
  rear.name = "rear";
  rear.type = VelocityConstraintType::RollingWheel;
  rear.body = 1;
  rear.axis = Vec3::UnitY();
  rear.radius = p.rho;
  VelocityConstraint front;
  front.name = "front";
  front.body = 2;
  front.axis = Vec3::UnitY();
  std::vector<BodyState> state(3);
  state[0].x = state[1].x = Vec3(0.0, 0.0, p.rho);
  state[2].x = Vec3(p.l, 0.0, p.rho);
  state[2].q = turn;
  Model model(std::move(bodies), {plane, axle, steer}, Vec3(0.0, 0.0, -9.81), {}, {},
              {rear, front});
  return {std::move(model), std::move(state)};
}

// Snakeboard's mass matrix (vehicles §5.2.2) is the kinetic energy
//   1/2 (I (theta_dot + psi_dot)^2 + (m l^2 - I) theta_dot^2 + 2 J phi_dot^2 + m |v|^2),
// and wheel sets of yaw inertia J each, turning at theta_dot + phi_dot and theta_dot - phi_dot,
// have 1/2 J (2 theta_dot^2 + 2 phi_dot^2): so the board has the mass m and the yaw inertia
// m l^2 - I - 2 J (m l^2 is the whole yaw inertia, as in the paper), the rotor, turning at
// theta_dot + psi_dot, has I, and rotor and wheel sets are massless (their mass is the
// board's m). Snakeboard's constraint rows are the skates at -l turned by phi (row 1) and at
// +l turned by -phi (row 2).
Mechanism snakeboard(double mass, double half_length, double rotor_inertia,
                     double wheel_inertia) {
  const double m = mass, l = half_length, I = rotor_inertia, J = wheel_inertia;
  if (!(m > 0.0) || !(l > 0.0) || !(I > 0.0) || !(J > 0.0) || !std::isfinite(m + l + I + J)) {
    throw InputError("snakeboard: mass, half_length, rotor_inertia and wheel_inertia must be "
                     "positive and finite");
  }
  const double board = m * l * l - I - 2.0 * J;
  if (!(board > 0.0)) {
    throw InputError("snakeboard: needs mass * half_length^2 > rotor_inertia + 2 wheel_inertia "
                     "(the board's own yaw inertia is the rest of m l^2), got " +
                     std::to_string(m * l * l) + " <= " + std::to_string(I + 2.0 * J));
  }
  std::vector<Body> bodies = {{"board", m, board * Mat3::Identity()},
                              {"rotor", 0.0, I * Mat3::Identity()},
                              {"back", 0.0, J * Mat3::Identity()},
                              {"front", 0.0, J * Mat3::Identity()}};
  std::vector<Joint> joints(4);
  const char* names[4] = {"plane", "rotor", "steering", "steering_front"};
  const double along[4] = {0.0, 0.0, -l, l};
  for (int j = 0; j < 4; ++j) {
    joints[j].name = names[j];
    joints[j].type = j == 0 ? JointType::Planar : JointType::Revolute;
    joints[j].parent = j == 0 ? kWorld : 0;
    joints[j].child = j;
    joints[j].p_parent = Vec3(along[j], 0.0, 0.0);
    joints[j].axis = Vec3::UnitZ();
  }
  Coupling mirror;
  mirror.name = "mirror";
  mirror.follower = 3;
  mirror.leader = 2;
  mirror.multiplier = -1.0;
  std::vector<VelocityConstraint> skates(2);
  for (int i = 0; i < 2; ++i) {
    skates[i].name = i == 0 ? "back" : "front";
    skates[i].body = 2 + i;
    skates[i].axis = Vec3::UnitY();
  }
  std::vector<BodyState> state(4);
  for (int b = 0; b < 4; ++b) state[b].x = Vec3(along[b], 0.0, 0.0);
  Model model(std::move(bodies), std::move(joints), Vec3(0.0, 0.0, -9.81), {mirror}, {},
              std::move(skates));
  return {std::move(model), std::move(state)};
}

Body solid_box(const std::string& name, double mass, const Vec3& half_extents) {
  const Vec3 e2 = (2.0 * half_extents).cwiseAbs2();
  return {name, mass, (mass / 12.0) * Vec3(e2.y() + e2.z(), e2.x() + e2.z(), e2.x() + e2.y()).asDiagonal()};
}

Body solid_sphere(const std::string& name, double mass, double radius) {
  return {name, mass, (0.4 * mass * radius * radius) * Mat3::Identity()};
}

}  // namespace marsden::maximal
