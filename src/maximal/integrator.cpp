#include "marsden/maximal/integrator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <limits>
#include <numbers>

#include <Eigen/LU>
#include <Eigen/QR>

#include "contact_rows.hpp"
#include "marsden/error.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/velocity.hpp"
#include "marsden/solve/tree_ldu.hpp"

namespace marsden::maximal {

namespace {

// Node blocks of the sparse LDU (solve/tree_ldu.hpp), fixed 6x6 and padded.
using Block = LduBlock;
// Loop-closing rows are few (§4.3); their Schur complement has inline storage.
constexpr int kMaxLoopRows = 60;
using LoopVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxLoopRows, 1>;
using LoopMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxLoopRows,
                              kMaxLoopRows>;

}  // namespace

struct Workspace {
  // Rank-revealing: redundant loop rows get zero pivots and zero multipliers.
  Eigen::FullPivLU<LoopMat> loop_lu;  // first: the constructor sizes it

  explicit Workspace(const Model& model)
      : loop_lu(model.topology().loop_rows, model.topology().loop_rows),
        ldus{TreeLdu(model.topology().num_nodes), TreeLdu(model.topology().num_nodes)},
        vectors(model.topology().size()) {
    const Topology& topo = model.topology();
    if (topo.loop_rows > kMaxLoopRows) {
      throw InputError("maximal model: " + std::to_string(topo.loop_rows) +
                       " rows close loops (loop-closing joints, couplings and joint limits), at most " +
                       std::to_string(kMaxLoopRows) + " are supported (the Newton system's "
                       "loop block is a dense Schur complement of fixed size)");
    }
    const int n = topo.size();
    const int nb = model.num_bodies();
    const int nj = model.num_joints();
    s.setZero(n);
    for (Eigen::VectorXd& h : past) h.setZero(n);
    s_spare.setZero(n);
    fresh_guess.setZero(n);
    weight.setOnes(n);
    next.resize(nb);
    R_k.resize(nb);
    R_next.resize(nb);
    external.resize(nb);
    momentum_k.resize(nb);
    Gt_parent.resize(nj, Block::Zero());
    Gt_child.resize(nj, Block::Zero());
    C_parent.resize(nj, Block::Zero());
    C_child.resize(nj, Block::Zero());
    coupling.resize(topo.coupling_offset.size());
    const std::size_t nv = topo.velocity_constraint.size();
    velocity_Gt.resize(nv);
    half_A_k.resize(nv);
    velocity_C.resize(nv);
    for (std::size_t k = 0; k < nv; ++k) {
      if (topo.velocity_coupling[k] >= 0) continue;  // a loop row
      const int b = model.velocity_constraints()[topo.velocity_constraint[k]].body;
      auto it = std::find_if(constrained.begin(), constrained.end(),
                             [b](const ConstrainedBody& c) { return c.body == b; });
      if (it == constrained.end()) {
        constrained.emplace_back();
        it = constrained.end() - 1;
        it->body = b;
        for (int node = 0; node < topo.num_nodes; ++node)
          if (topo.parent_node[node] == b) it->children.push_back(node);
        it->child_down.resize(it->children.size());
      }
      it->rows[std::size_t(it->k++)] = int(k);
    }
    limit.resize(topo.limit_joint.size());
    W.setZero(topo.tree_rows, topo.loop_rows);
    S.setZero(topo.loop_rows, topo.loop_rows);
    loop_rhs.setZero(topo.loop_rows);
    loop_y.setZero(topo.loop_rows);
    const int nd = static_cast<int>(model.degenerate_rows().size());
    Z.setZero(topo.tree_rows, nd);
    K.setZero(nd, nd);
    degenerate_eps.setZero(nd);
    degenerate_t.setZero(nd);
    degenerate_y.setZero(nd);
    if (nd > 0) K_lu = Eigen::PartialPivLU<Eigen::MatrixXd>(nd);
    for (int b = 0; b < nb; ++b) {
      weight.segment<3>(6 * b).setConstant(1.0 / model.mass_scale(b));
      weight.segment<3>(6 * b + 3).setConstant(1.0 / model.inertia_scale(b));
    }
    const std::size_t num_points = model.contact_points().size();
    contact.resize(num_points);
    active.reserve(num_points);
    contact_residuals.resize(num_points);
    if (model.has_restitution()) {
      flying.resize(num_points);
      impulse.resize(num_points);
      impact_time.resize(num_points);
      arrival.resize(num_points);
      lambda.resize(num_points);
      interval_start.resize(nb);
      step_start.resize(nb);
    }
  }

  // The tree part of the Newton Jacobian: per node D, up = F(i, parent), down = F(parent, i).
  // Two of them: the step's Newton iterations fill ldus[slot], while the other keeps the
  // last step's factors for the predictor (predict). factored[i]: ldus[i] holds the factors
  // of a whole Jacobian (a Jacobian evaluation not yet factored leaves a mix).
  std::array<TreeLdu, 2> ldus;
  std::array<bool, 2> factored{};
  int slot = 0;
  TreeLdu& ldu() { return ldus[static_cast<std::size_t>(slot)]; }
  const TreeLdu& ldu() const { return ldus[static_cast<std::size_t>(slot)]; }
  NewtonVectors<Eigen::VectorXd> vectors;
  Eigen::VectorXd s, weight;
  // The solutions before s, newest first, for the extrapolated guess (initial_guess), and
  // whether s and each of them are consecutive solutions at history_dt.
  std::array<Eigen::VectorXd, 3> past;
  Eigen::VectorXd s_spare;
  // The last guess made fresh from a state (its velocities, the multipliers then last), so
  // that a step repeated from that state after a rollback starts from it again.
  Eigen::VectorXd fresh_guess;
  bool fresh_valid = false;
  bool s_solved = false;
  std::array<bool, 3> past_solved{};
  double history_dt = 0.0;
  double dt = 0.0;  // of the last prepare()
  // Degenerate bodies (Model::degenerate_rows, selected by E): the tree factors are those of
  // F + E diag(eps) E^T, regular, and with Z = (F + E diag(eps) E^T)^-1 E and
  // K = diag(1 / eps) - E^T Z, the Woodbury identity gives F^-1 x = y + Z K^-1 E^T y for
  // y = (F + E diag(eps) E^T)^-1 x: exact for any eps, F singular exactly when K is.
  Eigen::MatrixXd Z, K;
  Eigen::PartialPivLU<Eigen::MatrixXd> K_lu;
  Eigen::VectorXd degenerate_eps, degenerate_t, degenerate_y;
  bool singular = false;  // the last factorisation's K was singular
  std::vector<BodyState> next;  // the poses of the last residual evaluation
  // Rotation matrices of the poses at t_k and of `next`: each body's once per evaluation,
  // not once per joint that uses it.
  std::vector<Mat3> R_k, R_next;
  std::vector<Vec6> external;    // explicit forces at t_k (force world, torque body)
  std::vector<Vec6> momentum_k;  // the t_k terms of (26) and (33)
  // Constraint Jacobians at x_k (G) and at x_kp1 chained to (v, omega) (C), stored padded
  // as the tree's coupling blocks: -G^T in the first m columns (set once per step), C in
  // the first m rows (the rows and columns beyond m stay zero).
  std::vector<Block> Gt_parent, Gt_child, C_parent, C_child;
  // Per coupling (a row of the loop block): the bodies of its follower and leader joints
  // (parent, child, parent, child; kWorld ones unused, a body may come twice), its columns
  // of -G^T at x_k and its Jacobian row at x_kp1 chained to (v, omega), per body.
  // Joint limits (Topology::limit_joint) are rows of this kind too, after the couplings: two
  // bodies (then kWorld), their columns of the impulse at x_k and their row of phi / dt at
  // x_kp1, and the interior point's diagonal sigma / nu in the loop block (0 for couplings).
  // A limit's row is scaled by nu / (nu + sigma) (row_scale, 1 for couplings), so that its
  // diagonal sigma / (nu + sigma) stays within [0, 1]: unscaled, an inactive limit's
  // sigma / nu reaches 1e14 and the loop block's rank-revealing LU took an active one's
  // row for redundant.
  struct CouplingBlocks {
    std::array<int, 4> body{};
    std::array<Vec6, 4> Gt{}, C{};
    double diag = 0.0, row_scale = 1.0;
  };
  std::vector<CouplingBlocks> coupling;
  // A joint limit's slack sigma (the gap rate phi / dt, rad/s or m/s), its gap phi at the
  // iterate, the scale of its impulse (the child's inertia or mass over dt: the impulse
  // unknown nu in s is a rate) and the interior point's steps.
  struct LimitSlack {
    double sigma = 0.0, phi = 0.0, scale = 1.0;
    double d_nu_aff = 0.0, d_sigma_aff = 0.0, d_nu = 0.0, d_sigma = 0.0;
  };
  std::vector<LimitSlack> limit;
  // Velocity constraint rows (Topology::velocity_constraint): the column -a(q_k)^T of the
  // force on the body, fixed in the step; a(q_k) / 2; and the row's Jacobian with respect to
  // the body's (v, omega) at the iterate.
  std::vector<Vec6> velocity_Gt, half_A_k, velocity_C;
  // A body with velocity constraint rows G^T mu and C w = r_v, eliminated at the body so the
  // tree keeps its shape: its 6 rows are replaced by P (its rows) (the 6 - k combinations
  // P = [L; 0] free of mu, L G = 0) and the k constraint rows, a row operation of the body's
  // node alone; mu is recovered afterwards from the body's rows, mu = M (r_b - F_b x) with
  // M G = I. The blocks before the operation are kept for that (constrain_bodies).
  struct ConstrainedBody {
    int body = 0, k = 0;
    std::array<int, 5> rows{};  // its velocity rows, indices into Topology::velocity_*
    std::vector<int> children;  // tree nodes whose parent is the body
    Block P = Block::Zero(), M = Block::Zero();
    Block D = Block::Zero(), up = Block::Zero();  // before the row operation
    std::vector<Block> child_down;
    Vec6 rhs = Vec6::Zero();
  };
  std::vector<ConstrainedBody> constrained;
  Eigen::MatrixXd W;  // A^-1 B: tree solves of the loop columns
  LoopMat S;
  LoopVec loop_rhs, loop_y;
  Eigen::MatrixXd F_dense;
  Eigen::PartialPivLU<Eigen::MatrixXd> dense_lu;
  // Contact: a row per candidate contact (contact_rows.hpp), the indices of those in the
  // step's solve, and their residuals at the current target.
  std::vector<contact_rows::Row> contact;
  std::vector<int> active;
  std::vector<contact_rows::Residuals> contact_residuals;
  // Impacts (step_with_impacts): per candidate contact, whether it is in flight (left out of
  // the solve, its crossing timed), the step's impulse (N s) and impact time, and at an
  // impact its arrival speed and impulse; the states at the step's and interval's start.
  std::vector<char> flying;
  std::vector<double> impulse, impact_time, arrival, lambda;
  std::vector<BodyState> interval_start, step_start;
};

Data::Data(const Model& model) : Data(model, std::vector<BodyState>(model.num_bodies())) {}

Data::Data(const Model& model, std::vector<BodyState> initial)
    : state(std::move(initial)),
      body_force(model.num_bodies(), Vec3::Zero()),
      body_torque(model.num_bodies(), Vec3::Zero()),
      joint_input(model.num_joints(), 0.0),
      contact(model.contact_points().size()),
      limit_force(model.topology().limit_joint.size(), 0.0),
      velocity_force(model.topology().velocity_constraint.size(), 0.0),
      joint_target(model.num_joints(), 0.0),
      drive_force(model.num_joints(), 0.0),
      workspace_(std::make_unique<Workspace>(model)) {
  if (static_cast<int>(state.size()) != model.num_bodies()) {
    throw InputError("data: " + std::to_string(state.size()) + " body states for " +
                     std::to_string(model.num_bodies()) + " bodies");
  }
  for (int b = 0; b < model.num_bodies(); ++b) {
    const BodyState& st = state[b];
    const char* bad = !st.x.allFinite()       ? "position x is not finite"
                      : !st.q.q.allFinite()   ? "quaternion q is not finite"
                      : st.q.q.norm() < 1e-12 ? "quaternion q is zero"
                      : !st.v.allFinite()     ? "velocity v is not finite"
                      : !st.omega.allFinite() ? "angular velocity omega is not finite"
                                              : nullptr;
    if (bad != nullptr) {
      throw InputError("maximal state: body " + std::to_string(b) + " ('" +
                       model.bodies()[b].name + "'): " + bad);
    }
    state[b].q.q.normalize();
  }
  for (std::size_t i = 0; i < contact.size(); ++i) {
    const ContactPoint& c = model.contact_points()[i];
    contact[i].phi = contact_rows::distance(c, state[c.body].x, state[c.body].q.matrix());
  }
  for (int j = 0; j < model.num_joints(); ++j) {
    const Joint& joint = model.joints()[j];
    if (joint.prescribed) {
      joint_target[std::size_t(j)] = joint_coordinate(
          joint, joint.parent == kWorld ? world_state() : state[joint.parent], state[joint.child],
          nullptr, nullptr);
    }
  }
}

Data::Data(const Data& other)
    : state(other.state),
      body_force(other.body_force),
      body_torque(other.body_torque),
      joint_input(other.joint_input),
      contact(other.contact),
      limit_force(other.limit_force),
      velocity_force(other.velocity_force),
      joint_target(other.joint_target),
      drive_force(other.drive_force),
      time(other.time),
      steps(other.steps),
      last_dt(other.last_dt),
      workspace_(std::make_unique<Workspace>(*other.workspace_)) {}

Data& Data::operator=(const Data& other) {
  if (this != &other) *this = Data(other);
  return *this;
}

Data::Data(Data&&) noexcept = default;
Data& Data::operator=(Data&&) noexcept = default;
Data::~Data() = default;

const char* describe(StepFailure failure) {
  switch (failure) {
    case StepFailure::None: return "ok";
    case StepFailure::NotConverged:
      return "Newton's method did not reach the tolerance within max_iterations";
    case StepFailure::AngularRateLimit:
      return "angular rate |omega| >= 2 / dt: eq. (32) has no unit quaternion; reduce dt";
    case StepFailure::NonFinite: return "non-finite state, force or residual";
    case StepFailure::ConstraintUndefined:
      return "a rolling wheel's axle is along its ground's normal (the wheel lies flat): its "
             "rolling constraint has no lowest point";
    case StepFailure::Singular:
      return "the Newton matrix is singular: a body without mass or with a singular inertia "
             "(a point mass) is not determined by its joints; give it an inertia or weld it "
             "to its parent (docs/maximal.md)";
  }
  return "unknown";
}

namespace {

// sqrt(4 / dt^2 - |omega|^2) of eqs. (32)-(33); NaN when |omega| >= 2 / dt.
double rate_root(const Vec3& omega, double dt) {
  const double a = 4.0 / (dt * dt) - omega.squaredNorm();
  return a > 0.0 ? std::sqrt(a) : std::nan("");
}

// d/d omega_k of the t_k body momentum of eq. (33) as prepare() scales it,
// (dt_prev / 2 dt) (r(dt_prev) J w - w x J w).
Mat3 momentum_k_derivative(const Mat3& J, const Vec3& omega, double dt_prev, double dt) {
  const double root = rate_root(omega, dt_prev);
  const Vec3 Jw = J * omega;
  return 0.5 * dt_prev / dt *
         (root * J - Jw * omega.transpose() / root + Quat::hat(Jw) - Quat::hat(omega) * J);
}

const BodyState& pose_of(const std::vector<BodyState>& poses, int b) {
  return b == kWorld ? world_state() : poses[b];
}

const Mat3& rotation_of(const std::vector<Mat3>& R, int b) {
  static const Mat3 identity = Mat3::Identity();
  return b == kWorld ? identity : R[b];
}

// c = s(follower) - multiplier s(leader) - offset at the poses, with dc/d(dx, dphi) of the
// four bodies (follower's parent and child, leader's); kWorld bodies get a zero gradient.
double coupling_gradient(const Model& model, const Coupling& c,
                         const std::vector<BodyState>& poses, std::array<int, 4>& body,
                         std::array<Vec6, 4>& gradient) {
  const Joint& follower = model.joints()[c.follower];
  const Joint& leader = model.joints()[c.leader];
  body = {follower.parent, follower.child, leader.parent, leader.child};
  const double s_f = joint_coordinate(follower, pose_of(poses, follower.parent),
                                      poses[follower.child], &gradient[0], &gradient[1]);
  const double s_l = joint_coordinate(leader, pose_of(poses, leader.parent),
                                      poses[leader.child], &gradient[2], &gradient[3]);
  gradient[2] *= -c.multiplier;
  gradient[3] *= -c.multiplier;
  return s_f - c.multiplier * s_l - c.offset;
}

}  // namespace

// d(dx, dphi)/d(v, omega) of one step's pose update, scaled by 1 / dt: dx = dt dv and
// dphi = dt Phi domega from eq. (32), so a pose gradient C becomes [C_x, C_phi Phi].
Mat3 rotation_update_map(const Vec3& omega, double dt) {
  const double root = rate_root(omega, dt);
  return 0.5 * dt * (root * Mat3::Identity() + omega * omega.transpose() / root -
                     Quat::hat(omega));
}

namespace {

// Terms of the step that depend on t_k only: constraint Jacobians at x_k (for the
// forces G^T lambda), explicit forces, and the momentum-like terms of v_k, omega_k.
StepFailure prepare(const Model& model, const Data& data, Workspace& ws, double dt) {
  const auto& bodies = model.bodies();
  ws.dt = dt;
  // The t_k side of eq. (33) is the body momentum left by the previous interval, of
  // length dt_prev: (dt_prev / 2) (r(dt_prev) J w_k - w_k x J w_k), here divided by dt.
  const double dt_prev = data.last_dt > 0.0 ? data.last_dt : dt;
  for (int b = 0; b < model.num_bodies(); ++b) {
    const BodyState& st = data.state[b];
    const Mat3& J = bodies[b].inertia;
    const double root = rate_root(st.omega, dt_prev);
    if (!std::isfinite(root)) return StepFailure::AngularRateLimit;
    const Vec3 Jw = J * st.omega;
    ws.R_k[b] = st.q.matrix();
    ws.momentum_k[b] << bodies[b].mass * st.v / dt,
        0.5 * dt_prev / dt * (root * Jw - st.omega.cross(Jw));
    ws.external[b] << bodies[b].mass * model.gravity() + data.body_force[b],
        ws.R_k[b].transpose() * data.body_torque[b];
  }
  for (int j = 0; j < model.num_joints(); ++j) {
    const Joint& joint = model.joints()[j];
    const BodyState& a = pose_of(data.state, joint.parent);
    const BodyState& c = data.state[joint.child];
    JointBlock G_parent, G_child;
    joint_jacobians(joint, a, rotation_of(ws.R_k, joint.parent), c, ws.R_k[joint.child],
                    G_parent, G_child);
    const int m = constraint_rows(joint.type);
    // Column by column at fixed size: the run-time-sized block copy took a fifth of prepare().
    for (int c = 0; c < m; ++c) {
      ws.Gt_parent[j].col(c) = -G_parent.row(c).transpose();
      ws.Gt_child[j].col(c) = -G_child.row(c).transpose();
    }
    if (joint_dofs(joint.type) != 1) continue;
    const double input = data.joint_input[j];
    if (joint.stiffness == 0.0 && !has_coordinate_row(joint) && input == 0.0) continue;
    Vec6 ds_a, ds_c;
    const double coord = joint_coordinate(joint, a, c, &ds_a, &ds_c);
    // The damper's or the prescribed coordinate's force mu is an unknown of the step (row m
    // of the joint): it acts along ds like a multiplier, so -ds is its column of -G^T.
    if (has_coordinate_row(joint)) {
      ws.Gt_parent[j].col(m) = -ds_a;
      ws.Gt_child[j].col(m) = -ds_c;
    }
    const double f = -joint.stiffness * (coord - joint.rest) + input;
    if (joint.parent != kWorld) ws.external[joint.parent] += f * ds_a;
    ws.external[joint.child] += f * ds_c;
  }
  for (std::size_t k = 0; k < model.couplings().size(); ++k) {
    coupling_gradient(model, model.couplings()[k], data.state, ws.coupling[k].body,
                      ws.coupling[k].Gt);
    for (Vec6& column : ws.coupling[k].Gt) column = -column;
  }
  // A joint limit's impulse side * scale * nu acts on the joint's coordinate at x_k.
  const Topology& topo = model.topology();
  for (std::size_t k = 0; k < topo.limit_joint.size(); ++k) {
    const Joint& joint = model.joints()[topo.limit_joint[k]];
    auto& cb = ws.coupling[model.couplings().size() + k];
    const double scale =
        (joint_kind(joint.type).turn == Turn::Axis ? model.inertia_scale(joint.child)
                                                   : model.mass_scale(joint.child)) / dt;
    ws.limit[k].scale = scale;
    cb.body = {joint.parent, joint.child, kWorld, kWorld};
    joint_coordinate(joint, pose_of(data.state, joint.parent), data.state[joint.child], &cb.Gt[0],
                     &cb.Gt[1]);
    for (Vec6& column : cb.Gt) column *= -topo.limit_side[k] * scale;
    cb.Gt[2].setZero();
    cb.Gt[3].setZero();
  }
  // Velocity constraints (docs/maximal.md, Nonholonomic constraints): the force
  // -A(q_k)^T mu, as a joint's, and the row (A(q_k) + A(q_kp1)) / 2 w_kp1 = 0 (evaluate).
  for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k) {
    const VelocityConstraint& c = model.velocity_constraints()[topo.velocity_constraint[k]];
    if (topo.velocity_row[k] > 0) continue;  // filled with the constraint's first row
    VelocityRows A;
    if (!velocity_constraint_rows(c, ws.R_k[c.body], A)) return StepFailure::ConstraintUndefined;
    for (int i = 0; i < A.rows(); ++i) {
      ws.velocity_Gt[k + i] = -A.row(i).transpose();
      ws.half_A_k[k + i] = 0.5 * A.row(i).transpose();
      if (const int c_row = topo.velocity_coupling[k + i]; c_row >= 0) {
        auto& cb = ws.coupling[std::size_t(c_row)];
        cb.body = {c.body, kWorld, kWorld, kWorld};
        cb.Gt[0] = ws.velocity_Gt[k + i];
      }
    }
  }
  return StepFailure::None;
}

// Lambda of joint j inside s.
Eigen::VectorBlock<const Eigen::VectorXd> lambda_of(const Topology& topo, int j,
                                                    const Eigen::VectorXd& s, int rows) {
  const int node = topo.joint_node[j];
  if (node >= 0) return s.segment(topo.node_offset[node], rows);
  int k = 0;
  while (topo.loop_joints[k] != j) ++k;
  return s.segment(topo.tree_rows + topo.loop_offset[k], rows);
}

int row_of(const Topology& topo, int j) {
  const int node = topo.joint_node[j];
  if (node >= 0) return topo.node_offset[node];
  int k = 0;
  while (topo.loop_joints[k] != j) ++k;
  return topo.tree_rows + topo.loop_offset[k];
}

// A prescribed coordinate's offset from its target: an angle's modulo 2 pi, so that a
// joint turned past pi (a spinning rotor) follows its path without a jump.
double coordinate_offset(const Joint& joint, double s, double target) {
  return joint.type == JointType::Revolute ? std::remainder(s - target, 2.0 * std::numbers::pi)
                                           : s - target;
}

// Residual f(s) (eqs. (26), (33), g(x_kp1) / dt) into r; next poses into `next`. With
// `jacobian`, also the constraint blocks C at x_kp1 and the diagonal body blocks.
// Returns false when some |omega| >= 2 / dt.
bool evaluate(const Model& model, const Data& data, Workspace& ws, double dt,
              const Eigen::VectorXd& s, Eigen::VectorXd& r, std::vector<BodyState>& next,
              bool jacobian) {
  const Topology& topo = model.topology();
  const auto& bodies = model.bodies();
  // The body blocks below overwrite the current buffer's factors.
  if (jacobian) ws.factored[static_cast<std::size_t>(ws.slot)] = false;
  for (int b = 0; b < model.num_bodies(); ++b) {
    const Vec3 v = s.segment<3>(6 * b);
    const Vec3 omega = s.segment<3>(6 * b + 3);
    const double root = rate_root(omega, dt);
    if (!std::isfinite(root)) return false;
    const BodyState& st = data.state[b];
    next[b].x = st.x + dt * v;  // eq. (27)
    Quat f;
    f.q << 0.5 * dt * root, 0.5 * dt * omega;  // eq. (32)
    next[b].q = st.q * f;
    ws.R_next[b] = next[b].q.matrix();
    next[b].v = v;
    next[b].omega = omega;
    const Mat3& J = bodies[b].inertia;
    const Vec3 Jw = J * omega;
    Vec6 d;
    d << bodies[b].mass * v / dt, 0.5 * (root * Jw + omega.cross(Jw));
    r.segment<6>(6 * b) = d - ws.momentum_k[b] - ws.external[b];
    if (jacobian) {
      Block& D = ws.ldu().D[b];
      D.setZero();
      D.topLeftCorner<3, 3>().diagonal().setConstant(bodies[b].mass / dt);
      D.bottomRightCorner<3, 3>() = 0.5 * (root * J - Jw * omega.transpose() / root +
                                           Quat::hat(omega) * J - Quat::hat(Jw));
    }
  }
  for (int j = 0; j < model.num_joints(); ++j) {
    const Joint& joint = model.joints()[j];
    const int m = constraint_rows(joint.type);
    const int rows = step_rows(joint);
    // Padded to 6 rows, so the force products have fixed size (the padding columns of
    // -G^T are zero).
    Vec6 lambda = Vec6::Zero();
    lambda.head(rows) = lambda_of(topo, j, s, rows);
    if (joint.parent != kWorld) {
      r.segment<6>(6 * joint.parent).noalias() += ws.Gt_parent[j] * lambda;
    }
    r.segment<6>(6 * joint.child).noalias() += ws.Gt_child[j] * lambda;
    const BodyState& a = pose_of(next, joint.parent);
    const BodyState& c = next[joint.child];
    const int row = row_of(topo, j);
    Vec6 ds_a = Vec6::Zero(), ds_c = Vec6::Zero();
    if (joint.prescribed) {
      // The prescribed coordinate at x_kp1, (s(x_kp1) - s_target) / dt, as the joint's own
      // rows: imposed on the next configuration, its force along ds(x_k).
      r[row + m] = coordinate_offset(joint, joint_coordinate(joint, a, c, &ds_a, &ds_c),
                                     data.joint_target[std::size_t(j)]) / dt;
    } else if (rows > m) {
      // The implicit damper, mu = -c s_dot with s_dot = ds(x_k) . (v, omega) of the step:
      // as stable as backward Euler however short the damping time constant is.
      double rate = -ws.Gt_child[j].col(m).dot(s.segment<6>(6 * joint.child));
      if (joint.parent != kWorld) {
        rate -= ws.Gt_parent[j].col(m).dot(s.segment<6>(6 * joint.parent));
      }
      r[row + m] = rate + lambda[m] / joint.damping;
    }
    const Mat3& R_a = rotation_of(ws.R_next, joint.parent);
    const Mat3& R_c = ws.R_next[joint.child];
    if (!jacobian) {
      r.segment(row, m) = joint_residual(joint, a, R_a, c, R_c) / dt;
    } else {
      JointBlock Cp, Cc;
      JointVec g;
      joint_jacobians(joint, a, R_a, c, R_c, Cp, Cc, &g);
      r.segment(row, m) = g / dt;
      // d(g / dt)/d(v, omega): dx = dt dv, and dphi = (dt^2 / 2) Phi domega from eq. (32).
      auto chain = [dt, m](const JointBlock& C, const Vec3& omega, Block& out) {
        out.topRows(m) = C;
        out.rightCols<3>() = (out.rightCols<3>() * rotation_update_map(omega, dt)).eval();
      };
      if (joint.parent != kWorld) chain(Cp, a.omega, ws.C_parent[j]);
      chain(Cc, c.omega, ws.C_child[j]);
      if (joint.prescribed) {
        ws.C_parent[j].row(m) << ds_a.head<3>().transpose(),
            ds_a.tail<3>().transpose() * rotation_update_map(a.omega, dt);
        ws.C_child[j].row(m) << ds_c.head<3>().transpose(),
            ds_c.tail<3>().transpose() * rotation_update_map(c.omega, dt);
      } else if (rows > m) {
        ws.C_parent[j].row(m) = -ws.Gt_parent[j].col(m).transpose();
        ws.C_child[j].row(m) = -ws.Gt_child[j].col(m).transpose();
      }
    }
  }
  for (std::size_t k = 0; k < model.couplings().size(); ++k) {
    auto& cb = ws.coupling[k];
    const double mu = s[topo.tree_rows + topo.coupling_offset[k]];
    for (int i = 0; i < 4; ++i) {
      if (cb.body[i] != kWorld) r.segment<6>(6 * cb.body[i]) += mu * cb.Gt[i];
    }
    std::array<int, 4> body;
    const double c = coupling_gradient(model, model.couplings()[k], next, body, cb.C);
    r[topo.tree_rows + topo.coupling_offset[k]] = c / dt;
    if (!jacobian) continue;
    for (int i = 0; i < 4; ++i) {
      if (body[i] == kWorld) continue;
      cb.C[i].tail<3>() = (cb.C[i].tail<3>().transpose() *
                           rotation_update_map(next[body[i]].omega, dt)).transpose();
    }
  }
  // Joint limits: the impulse in the bodies' rows; the gap phi at x_kp1 and, with the
  // Jacobian, its row d(phi / dt)/d(v, omega). The row's residual is the interior point's
  // (interior_point), 0 here.
  for (std::size_t k = 0; k < topo.limit_joint.size(); ++k) {
    const Joint& joint = model.joints()[topo.limit_joint[k]];
    const std::size_t kk = model.couplings().size() + k;
    auto& cb = ws.coupling[kk];
    const int row = topo.tree_rows + topo.coupling_offset[kk];
    const double nu = s[row];
    if (joint.parent != kWorld) r.segment<6>(6 * joint.parent) += nu * cb.Gt[0];
    r.segment<6>(6 * joint.child) += nu * cb.Gt[1];
    const double side = topo.limit_side[k];
    const double coord = joint_coordinate(joint, pose_of(next, joint.parent), next[joint.child],
                                          &cb.C[0], &cb.C[1]);
    ws.limit[k].phi = side * (coord - (side > 0.0 ? joint.lower : joint.upper));
    r[row] = 0.0;
    if (!jacobian) continue;
    for (int i = 0; i < 2; ++i) {
      if (cb.body[i] == kWorld) continue;
      cb.C[i] *= side;
      cb.C[i].tail<3>() = (cb.C[i].tail<3>().transpose() *
                           rotation_update_map(next[cb.body[i]].omega, dt)).transpose();
    }
  }
  // Velocity constraints: the force at q_k; the row, trapezoidal in the constraint's rows,
  // on the step's velocity, and with the Jacobian its derivative through q_kp1 (eq. (32)).
  for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k) {
    if (topo.velocity_row[k] > 0) continue;
    const VelocityConstraint& c = model.velocity_constraints()[topo.velocity_constraint[k]];
    const int b = c.body;
    const Vec6 w = s.segment<6>(6 * b);
    VelocityRows A_kp1;
    if (!velocity_constraint_rows(c, ws.R_next[b], A_kp1)) return false;
    Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 2, 3> dAw_dphi;
    Eigen::Matrix<double, 6, 3> unused;
    if (jacobian) {
      velocity_constraint_derivatives(c, ws.R_next[b], w, Eigen::Vector2d::Zero(), dAw_dphi, unused);
    }
    for (int i = 0; i < A_kp1.rows(); ++i) {
      const int row = topo.velocity_index[k + i];
      r.segment<6>(6 * b) += s[row] * ws.velocity_Gt[k + i];
      r[row] = (ws.half_A_k[k + i] + 0.5 * A_kp1.row(i).transpose()).dot(w);
      if (!jacobian) continue;
      Vec6& C = ws.velocity_C[k + i];
      C = ws.half_A_k[k + i] + 0.5 * A_kp1.row(i).transpose();
      C.tail<3>() += 0.5 * dt * (dAw_dphi.row(i) * rotation_update_map(next[b].omega, dt)).transpose();
      if (const int c_row = topo.velocity_coupling[k + i]; c_row >= 0)
        ws.coupling[std::size_t(c_row)].C[0] = C;
    }
  }
  return true;
}

// Off-diagonal tree blocks from the padded joint blocks: C as the coupling F(joint, body),
// -G^T as F(body, joint).
void assemble_tree(const Model& model, Workspace& ws) {
  const Topology& topo = model.topology();
  for (int node = model.num_bodies(); node < topo.num_nodes; ++node) {
    const int j = topo.node_joint[node];
    const Joint& joint = model.joints()[j];
    ws.ldu().D[node] = padded_zero_block(topo.node_size[node]);
    if (joint.damping > 0.0) {  // a prescribed coordinate's row has 0 there
      const int m = constraint_rows(joint.type);
      ws.ldu().D[node](m, m) = 1.0 / joint.damping;
    }
    const int tree_parent = topo.parent_node[node];
    const bool parent_side_up = tree_parent == joint.parent && tree_parent >= 0;
    const int tree_child = parent_side_up || tree_parent < 0 ? joint.child : joint.parent;
    const bool child_down = parent_side_up || tree_parent < 0;
    if (tree_parent >= 0) {
      ws.ldu().up[node] = parent_side_up ? ws.C_parent[j] : ws.C_child[j];
      ws.ldu().down[node] = parent_side_up ? ws.Gt_parent[j] : ws.Gt_child[j];
    }
    ws.ldu().up[tree_child] = child_down ? ws.Gt_child[j] : ws.Gt_parent[j];
    ws.ldu().down[tree_child] = child_down ? ws.C_child[j] : ws.C_parent[j];
  }
}

BlockTree block_tree(const Topology& topo) {
  return {topo.order, topo.parent_node, topo.node_size, topo.node_offset};
}

// The shift of the degenerate rows, eps = (mass or inertia scale) / dt: the size of a
// regular body's block, so that F + E diag(eps) E^T is as well conditioned as F would be.
void shift_degenerate_rows(const Model& model, Workspace& ws) {
  const auto& rows = model.degenerate_rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int b = rows[i] / 6, k = rows[i] % 6;
    const double eps = (k < 3 ? model.mass_scale(b) : model.inertia_scale(b)) / ws.dt;
    ws.degenerate_eps[static_cast<Eigen::Index>(i)] = eps;
    ws.ldu().D[b](k, k) += eps;
  }
}

// Velocity constraint rows, eliminated at their bodies (Workspace::ConstrainedBody): each
// such body's rows become P (its rows) and its constraint rows, before the factorisation.
// The blocks before are kept for the multipliers.
void constrain_bodies(const Model& model, Workspace& ws) {
  const Topology& topo = model.topology();
  TreeLdu& ldu = ws.ldu();
  for (Workspace::ConstrainedBody& cb : ws.constrained) {
    const int b = cb.body, k = cb.k;
    Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 5> G(6, k);
    for (int i = 0; i < k; ++i) G.col(i) = ws.velocity_Gt[std::size_t(cb.rows[std::size_t(i)])];
    // L: an orthonormal basis of the complement of G's columns, from G's Householder QR.
    const Eigen::HouseholderQR<decltype(G)> qr(G);
    const Block Q = qr.householderQ();
    cb.P.setZero();
    cb.P.topRows(6 - k) = Q.rightCols(6 - k).transpose();
    // M = (G^T G)^-1 G^T = R^-1 Q_k^T.
    cb.M.setZero();
    cb.M.topRows(k) = qr.matrixQR().topLeftCorner(k, k).triangularView<Eigen::Upper>().solve(
        Q.leftCols(k).transpose());
    cb.D = ldu.D[b];
    ldu.D[b] = cb.P * cb.D;
    for (int i = 0; i < k; ++i)
      ldu.D[b].row(6 - k + i) = ws.velocity_C[std::size_t(cb.rows[std::size_t(i)])].transpose();
    if (topo.parent_node[b] >= 0) {
      cb.up = ldu.up[b];
      ldu.up[b] = cb.P * cb.up;
    }
    for (std::size_t c = 0; c < cb.children.size(); ++c) {
      Block& down = ldu.down[std::size_t(cb.children[c])];
      cb.child_down[c] = down;
      down = cb.P * cb.child_down[c];
    }
  }
}

// x <- F_s^-1 x on the tree's rows (F_s: F with the degenerate rows shifted): the body rows
// of constrained bodies turned as constrain_bodies turned their blocks, the block LDU, then
// each constrained body's multipliers from its rows as they were.
void shifted_solve(const Model& model, Workspace& ws, Eigen::Ref<Eigen::VectorXd> x) {
  const Topology& topo = model.topology();
  for (Workspace::ConstrainedBody& cb : ws.constrained) {
    cb.rhs = x.segment<6>(6 * cb.body);
    Vec6 turned = cb.P * cb.rhs;
    for (int i = 0; i < cb.k; ++i)
      turned[6 - cb.k + i] = x[topo.velocity_index[std::size_t(cb.rows[std::size_t(i)])]];
    x.segment<6>(6 * cb.body) = turned;
  }
  ws.ldu().solve(block_tree(topo), x);
  for (const Workspace::ConstrainedBody& cb : ws.constrained) {
    const int b = cb.body;
    Vec6 rest = cb.rhs - cb.D * x.segment<6>(6 * b);
    if (const int p = topo.parent_node[b]; p >= 0) {
      const int n = topo.node_size[std::size_t(p)];
      rest.noalias() -= cb.up.leftCols(n) * x.segment(topo.node_offset[std::size_t(p)], n);
    }
    for (std::size_t c = 0; c < cb.children.size(); ++c) {
      const auto node = std::size_t(cb.children[c]);
      const int n = topo.node_size[node];
      rest.noalias() -= cb.child_down[c].leftCols(n) * x.segment(topo.node_offset[node], n);
    }
    const Vec6 mu = cb.M * rest;
    for (int i = 0; i < cb.k; ++i) x[topo.velocity_index[std::size_t(cb.rows[std::size_t(i)])]] = mu[i];
  }
}

// x <- F^-1 x on the tree's rows: the block LDU, corrected for degenerate rows.
void tree_solve(const Model& model, Workspace& ws, Eigen::Ref<Eigen::VectorXd> x) {
  shifted_solve(model, ws, x);
  const auto& rows = model.degenerate_rows();
  if (rows.empty()) return;
  if (ws.singular) {
    x.setConstant(std::nan(""));
    return;
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    ws.degenerate_t[static_cast<Eigen::Index>(i)] = x[rows[i]];
  ws.degenerate_y = ws.K_lu.solve(ws.degenerate_t);
  x.noalias() += ws.Z * ws.degenerate_y;
}

// Z and K of the Woodbury correction, after the tree factorisation of the shifted matrix.
void factor_degenerate(const Model& model, Workspace& ws) {
  const auto& rows = model.degenerate_rows();
  ws.singular = false;
  if (rows.empty()) return;
  ws.Z.setZero();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto z = ws.Z.col(static_cast<Eigen::Index>(i));
    z[rows[i]] = 1.0;
    shifted_solve(model, ws, z);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t c = 0; c < rows.size(); ++c) {
      ws.K(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) =
          -ws.Z(rows[i], static_cast<Eigen::Index>(c));
    }
    ws.K(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i)) +=
        1.0 / ws.degenerate_eps[static_cast<Eigen::Index>(i)];
  }
  ws.K_lu.compute(ws.K);
  // A pivot at round-off of the largest (PartialPivLU does not reveal rank by itself): the
  // degenerate rows are not determined by the joints.
  const auto pivots = ws.K_lu.matrixLU().diagonal().cwiseAbs();
  ws.singular = !(pivots.minCoeff() > 1e-10 * pivots.maxCoeff()) || !ws.Z.allFinite();
}

// Loop joints: W = A^-1 B column by column, then S = C W (§4.3 via a Schur complement).
void factor_loops(const Model& model, Workspace& ws, double rank_tolerance) {
  const Topology& topo = model.topology();
  if (topo.loop_rows == 0) return;
  ws.W.setZero();
  for (int k = 0; k < static_cast<int>(topo.loop_joints.size()); ++k) {
    const int j = topo.loop_joints[k];
    const Joint& joint = model.joints()[j];
    const int m = step_rows(joint);
    for (int c = 0; c < m; ++c) {
      auto w = ws.W.col(topo.loop_offset[k] + c);
      if (joint.parent != kWorld) w.segment<6>(6 * joint.parent) = ws.Gt_parent[j].col(c);
      w.segment<6>(6 * joint.child) = ws.Gt_child[j].col(c);
      tree_solve(model, ws, w);
    }
  }
  for (std::size_t k = 0; k < ws.coupling.size(); ++k) {
    auto w = ws.W.col(topo.coupling_offset[k]);
    for (int i = 0; i < 4; ++i) {
      const int b = ws.coupling[k].body[i];
      if (b != kWorld) w.segment<6>(6 * b) += ws.coupling[k].Gt[i];
    }
    tree_solve(model, ws, w);
  }
  ws.S.setZero();
  for (int k = 0; k < static_cast<int>(topo.loop_joints.size()); ++k) {
    const int j = topo.loop_joints[k];
    const Joint& joint = model.joints()[j];
    const int m = step_rows(joint);
    auto rows = ws.S.middleRows(topo.loop_offset[k], m);
    if (joint.parent != kWorld) {
      rows += ws.C_parent[j].topRows(m).lazyProduct(ws.W.middleRows<6>(6 * joint.parent));
    }
    rows += ws.C_child[j].topRows(m).lazyProduct(ws.W.middleRows<6>(6 * joint.child));
    // S = C A^-1 B - D: a damper row has D = 1 / c on its diagonal.
    if (joint.damping > 0.0) {
      const int d = topo.loop_offset[k] + m - 1;
      ws.S(d, d) -= 1.0 / joint.damping;
    }
  }
  for (std::size_t k = 0; k < ws.coupling.size(); ++k) {
    auto row = ws.S.row(topo.coupling_offset[k]);
    for (int i = 0; i < 4; ++i) {
      const int b = ws.coupling[k].body[i];
      if (b == kWorld) continue;
      const Vec6 c = ws.coupling[k].row_scale * ws.coupling[k].C[i];
      row += c.transpose().lazyProduct(ws.W.middleRows<6>(6 * b));
    }
    ws.S(topo.coupling_offset[k], topo.coupling_offset[k]) -= ws.coupling[k].diag;
  }
  ws.loop_lu.setThreshold(rank_tolerance);
  ws.loop_lu.compute(ws.S);
}

// dx = F^-1 rhs with the factors above.
void solve_factored(const Model& model, Workspace& ws, const Eigen::VectorXd& rhs,
                    Eigen::VectorXd& dx) {
  const Topology& topo = model.topology();
  dx = rhs;
  tree_solve(model, ws, dx.head(topo.tree_rows));
  if (topo.loop_rows == 0) return;
  ws.loop_rhs = -rhs.tail(topo.loop_rows);
  for (int k = 0; k < static_cast<int>(topo.loop_joints.size()); ++k) {
    const int j = topo.loop_joints[k];
    const Joint& joint = model.joints()[j];
    const int m = step_rows(joint);
    auto rows = ws.loop_rhs.segment(topo.loop_offset[k], m);
    if (joint.parent != kWorld) {
      rows.noalias() += ws.C_parent[j].topRows(m) * dx.segment<6>(6 * joint.parent);
    }
    rows.noalias() += ws.C_child[j].topRows(m) * dx.segment<6>(6 * joint.child);
  }
  for (std::size_t k = 0; k < ws.coupling.size(); ++k) {
    for (int i = 0; i < 4; ++i) {
      const int b = ws.coupling[k].body[i];
      if (b == kWorld) continue;
      ws.loop_rhs[topo.coupling_offset[k]] +=
          ws.coupling[k].row_scale * ws.coupling[k].C[i].dot(dx.segment<6>(6 * b));
    }
  }
  ws.loop_y = ws.loop_lu.solve(ws.loop_rhs);
  dx.head(topo.tree_rows).noalias() -= ws.W.lazyProduct(ws.loop_y);
  dx.tail(topo.loop_rows) = ws.loop_y;
}

void assemble_dense(const Model& model, Workspace& ws) {
  const Topology& topo = model.topology();
  const int n = topo.size();
  if (ws.F_dense.rows() != n) ws.F_dense.resize(n, n);
  ws.F_dense.setZero();
  for (int i = 0; i < topo.num_nodes; ++i) {
    const int oi = topo.node_offset[i];
    const int ni = topo.node_size[i];
    ws.F_dense.block(oi, oi, ni, ni) = ws.ldu().D[i].topLeftCorner(ni, ni);
    const int p = topo.parent_node[i];
    if (p < 0) continue;
    const int op = topo.node_offset[p];
    const int np = topo.node_size[p];
    ws.F_dense.block(oi, op, ni, np) = ws.ldu().up[i].topLeftCorner(ni, np);
    ws.F_dense.block(op, oi, np, ni) = ws.ldu().down[i].topLeftCorner(np, ni);
  }
  for (int k = 0; k < static_cast<int>(topo.loop_joints.size()); ++k) {
    const int j = topo.loop_joints[k];
    const Joint& joint = model.joints()[j];
    const int m = step_rows(joint);
    const int row = topo.tree_rows + topo.loop_offset[k];
    if (joint.damping > 0.0) {
      ws.F_dense(row + m - 1, row + m - 1) = 1.0 / joint.damping;
    }
    if (joint.parent != kWorld) {
      ws.F_dense.block(6 * joint.parent, row, 6, m) = ws.Gt_parent[j].leftCols(m);
      ws.F_dense.block(row, 6 * joint.parent, m, 6) = ws.C_parent[j].topRows(m);
    }
    ws.F_dense.block(6 * joint.child, row, 6, m) = ws.Gt_child[j].leftCols(m);
    ws.F_dense.block(row, 6 * joint.child, m, 6) = ws.C_child[j].topRows(m);
  }
  for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k) {
    if (topo.velocity_coupling[k] >= 0) continue;  // with the loop rows below
    const int b = model.velocity_constraints()[topo.velocity_constraint[k]].body;
    const int row = topo.velocity_index[k];
    ws.F_dense.block<6, 1>(6 * b, row) = ws.velocity_Gt[k];
    ws.F_dense.block<1, 6>(row, 6 * b) = ws.velocity_C[k].transpose();
  }
  for (std::size_t k = 0; k < ws.coupling.size(); ++k) {
    const int row = topo.tree_rows + topo.coupling_offset[k];
    ws.F_dense(row, row) = ws.coupling[k].diag;
    for (int i = 0; i < 4; ++i) {
      const int b = ws.coupling[k].body[i];
      if (b == kWorld) continue;
      ws.F_dense.block<6, 1>(6 * b, row) += ws.coupling[k].Gt[i];
      ws.F_dense.block<1, 6>(row, 6 * b) += ws.coupling[k].row_scale * ws.coupling[k].C[i].transpose();
    }
  }
}

// dx = F^-1 rhs with the factors of the last newton_direction; evaluate(..., false)
// leaves them alone.
void solve_direction(const Model& model, Workspace& ws, const StepOptions& options,
                     const Eigen::VectorXd& rhs, Eigen::VectorXd& dx) {
  if (options.solver == LinearSolver::DenseLU)
    dx = ws.dense_lu.solve(rhs);
  else
    solve_factored(model, ws, rhs, dx);
}

// The Jacobian at s (evaluated by the last evaluate(..., jacobian = true)), assembled and
// factored.
void factor_jacobian(const Model& model, Workspace& ws, const StepOptions& options) {
  assemble_tree(model, ws);
  if (options.solver == LinearSolver::DenseLU) {
    assemble_dense(model, ws);
    ws.dense_lu.compute(ws.F_dense);
  } else {
    shift_degenerate_rows(model, ws);
    constrain_bodies(model, ws);
    ws.ldu().factor(block_tree(model.topology()));
    ws.factored[static_cast<std::size_t>(ws.slot)] = true;
    factor_degenerate(model, ws);
    factor_loops(model, ws, options.loop_rank_tolerance);
  }
}

double scaled_norm(const Model& model, const Workspace& ws, const Eigen::VectorXd& r, double dt) {
  const int nb6 = 6 * model.num_bodies();
  const double bodies =
      dt * inf_norm_propagating_nan(r.head(nb6).cwiseProduct(ws.weight.head(nb6)));
  const double constraints = inf_norm_propagating_nan(r.tail(r.size() - nb6));
  // NaN propagates through the max too: std::max(NaN, x) is NaN but std::max(x, NaN) is x.
  return std::isnan(constraints) ? constraints : std::max(bodies, constraints);
}

void load_velocities(const Model& model, const Data& data, Eigen::VectorXd& s) {
  for (int b = 0; b < model.num_bodies(); ++b) {
    s.segment<3>(6 * b) = data.state[b].v;
    s.segment<3>(6 * b + 3) = data.state[b].omega;
  }
}

bool velocities_match(const Model& model, const Data& data, const Eigen::VectorXd& s) {
  for (int b = 0; b < model.num_bodies(); ++b) {
    if (s.segment<3>(6 * b) != data.state[b].v || s.segment<3>(6 * b + 3) != data.state[b].omega)
      return false;
  }
  return true;
}

// The guess from consecutive solutions h0 (newest), h1, h2 (null where unknown): their
// quadratic extrapolation 3 h0 - 3 h1 + h2, the linear 2 h0 - h1, or h0.
void extrapolate(const Eigen::VectorXd& h0, const Eigen::VectorXd* h1, const Eigen::VectorXd* h2,
                 Eigen::VectorXd& out) {
  if (h1 != nullptr && h2 != nullptr) out = 3.0 * h0 - 3.0 * *h1 + *h2;
  else if (h1 != nullptr) out = 2.0 * h0 - *h1;
  else out = h0;
}

// Where a step's starting point came from (initial_guess).
enum class Guess {
  Continues,  // the last step's solution left the current state
  Repeats,    // the solution before it did: the last step is being repeated after a rollback
  Fresh,      // neither: the state's velocities and the last multipliers
};

// Newton's starting point in ws.s, extrapolated from the last solutions when the last one
// left the current state (its velocities are the state's) at this dt: velocities and
// multipliers change smoothly along a chain's motion. One solution more is kept, so that a
// step repeated after a one-step rollback (sim::System) starts from the same guess and
// gives the same bits.
Guess initial_guess(const Model& model, const Data& data, Workspace& ws, double dt) {
  auto& past = ws.past;
  auto& solved = ws.past_solved;
  if (ws.history_dt != dt) ws.s_solved = solved[0] = solved[1] = solved[2] = false;
  if (ws.s_solved && velocities_match(model, data, ws.s)) {
    extrapolate(ws.s, solved[0] ? &past[0] : nullptr,
                solved[0] && solved[1] ? &past[1] : nullptr, ws.s_spare);
    // (s, past) <- (guess, s, past[0], past[1]).
    past[2].swap(past[1]);
    past[1].swap(past[0]);
    past[0].swap(ws.s);
    ws.s.swap(ws.s_spare);
    solved = {true, solved[0], solved[1]};
    return Guess::Continues;
  }
  if (solved[0] && velocities_match(model, data, past[0])) {
    extrapolate(past[0], solved[1] ? &past[1] : nullptr,
                solved[1] && solved[2] ? &past[2] : nullptr, ws.s);
    return Guess::Repeats;
  }
  if (ws.fresh_valid && velocities_match(model, data, ws.fresh_guess)) {
    ws.s = ws.fresh_guess;  // a repeat from the state of the last fresh guess: the same bits
  } else {
    load_velocities(model, data, ws.s);
    ws.fresh_guess = ws.s;
    ws.fresh_valid = true;
  }
  solved = {false, false, false};
  return Guess::Fresh;
}

// The predictor: one simplified Newton iteration from the extrapolated guess with the
// factors of the last step's Jacobian, s <- s - F_prev^-1 f(s). Where a chain oscillates
// faster than extrapolation can follow (a 200-link chain's top links, omega dt ~ 0.5), the
// guess is 1e-2 off and Newton needs a third iteration; after the predictor it is about
// 1e-4 off and the step's own Jacobian converges in one. The step's Newton iterations
// then fill the other buffer, so the last step's factors stay for a repeat after a
// rollback, which predicts with them again and gives the same bits. Only on trees without
// degenerate bodies (the loop and Woodbury corrections are the step's own); kept only where
// the correction is finite and within the angular rate limit. Returns whether it ran.
bool predict(const Model& model, const Data& data, Workspace& ws, const StepOptions& options,
             double dt, Guess guess) {
  const Topology& topo = model.topology();
  if (guess == Guess::Fresh || options.solver != LinearSolver::SparseLDU ||
      topo.loop_rows != 0 || !model.degenerate_rows().empty() ||
      !model.contact_points().empty() || !ws.constrained.empty()) {
    return false;
  }
  const int last = guess == Guess::Continues ? ws.slot : ws.slot ^ 1;
  const auto prev = static_cast<std::size_t>(last);
  if (guess == Guess::Continues) ws.slot ^= 1;
  if (!ws.factored[prev]) return false;
  Eigen::VectorXd& r = ws.vectors.r;
  Eigen::VectorXd& dx = ws.vectors.dx;
  if (!evaluate(model, data, ws, dt, ws.s, r, ws.next, false)) return false;
  dx = r;
  ws.ldus[prev].solve(block_tree(topo), dx);
  Eigen::VectorXd& s_new = ws.vectors.x_trial;
  s_new = ws.s - dx;
  if (!s_new.allFinite()) return false;
  for (int b = 0; b < model.num_bodies(); ++b) {
    if (!std::isfinite(rate_root(s_new.segment<3>(6 * b + 3), dt))) return false;
  }
  ws.s.swap(s_new);
  return true;
}

bool inputs_finite(const Data& data) {
  for (std::size_t b = 0; b < data.state.size(); ++b) {
    if (!data.body_force[b].allFinite() || !data.body_torque[b].allFinite()) return false;
  }
  for (const double u : data.joint_input) {
    if (!std::isfinite(u)) return false;
  }
  return true;
}


// One step's Newton problem for newton_iterate (solve/newton.hpp): evaluate() as the
// residual, the block LDU with the loop Schur complement (or a dense LU) as the linear
// solver, and the residual scaled to velocities as the norm.
struct StepProblem {
  const Model& model;
  const Data& data;
  Workspace& ws;
  const StepOptions& options;
  double dt;
  bool rate_limited = false;  // the last evaluation had some |omega| >= 2 / dt

  void residual(const Eigen::VectorXd& s, Eigen::VectorXd& r, bool jacobian) {
    rate_limited = !evaluate(model, data, ws, dt, s, r, ws.next, jacobian);
    if (rate_limited) r.setConstant(std::nan(""));
  }
  void factor() { factor_jacobian(model, ws, options); }
  void solve(const Eigen::VectorXd& r, Eigen::VectorXd& dx) {
    solve_direction(model, ws, options, r, dx);
  }
  double norm(const Eigen::VectorXd& r) const { return scaled_norm(model, ws, r, dt); }
};

// A pair of an interior-point iterate whose product falls below this fraction of the mean
// is too near its boundary (interior_point).
constexpr double kCentrality = 1e-3;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Contact (docs/contact.md, The step with contact). A candidate contact enters the step's
// solve when it may touch its surface within the step: its gap at t_k is at most twice
// the distance its point can travel at its speed plus a step of gravity's.
bool may_touch(const Model& model, const Data& data, const ContactPoint& c, double dt) {
  const BodyState& st = data.state[c.body];
  const double phi = contact_rows::distance(c, st.x, st.q.matrix());
  const double speed = st.v.norm() + st.omega.norm() * (c.c_b.norm() + c.radius) +
                       model.gravity().norm() * dt;
  return phi <= 2.0 * dt * speed;
}

bool rates_in_domain(const Model& model, const Eigen::VectorXd& s, double dt) {
  for (int b = 0; b < model.num_bodies(); ++b) {
    if (!std::isfinite(rate_root(s.segment<3>(6 * b + 3), dt))) return false;
  }
  return true;
}

// The step's solve with the active contacts: Mehrotra's predictor-corrector interior
// point on the whole residual, each contact's unknowns eliminated onto its body's block
// (contact_rows.hpp), so every linear system is the mechanism's (block LDU, loops,
// degenerate bodies as without contact). Each iteration evaluates the Jacobian at the
// iterate; its last evaluation is at the returned s.
NewtonStatus interior_point(const Model& model, const Data& data, Workspace& ws,
                            const StepOptions& options, double dt, StepStatus& step_status,
                            bool& rate_limited) {
  using namespace contact_rows;
  const auto& points = model.contact_points();
  const Topology& topo = model.topology();
  const std::size_t nc = model.couplings().size();
  const std::size_t nl = topo.limit_joint.size();
  NewtonStatus status;
  Eigen::VectorXd& r = ws.vectors.r;
  Eigen::VectorXd& rhs = ws.vectors.r_trial;
  Eigen::VectorXd& dx = ws.vectors.dx;
  Eigen::VectorXd& s_trial = ws.vectors.x_trial;
  // The first iteration uses this evaluation (with the Jacobian); the start below needs
  // the positions it puts in ws.next.
  rate_limited = !evaluate(model, data, ws, dt, ws.s, r, ws.next, true);
  if (rate_limited) {
    status.residual_norm = std::nan("");
    return status;
  }
  bool evaluated = true;
  // Relaxed (StepOptions::contact_relaxation): converged on the central path at kappa, where
  // the cone's angle has no tolerance of its own.
  const double relaxation = options.contact_relaxation;
  const double angle_tolerance = relaxation > 0.0 ? 0.0 : options.friction_angle_tolerance;
  // Joint limits: their impulse nu is the loop-block unknown at limit_row(k) of s, their
  // slack sigma in ws.limit; d(phi / dt) . v over their two bodies is limit_rate(k, v).
  const auto limit_row = [&](std::size_t k) { return topo.tree_rows + topo.coupling_offset[nc + k]; };
  const auto limit_rate = [&](std::size_t k, const Eigen::VectorXd& v) {
    const auto& cb = ws.coupling[nc + k];
    double rate = 0.0;
    for (int i = 0; i < 2; ++i)
      if (cb.body[i] != kWorld) rate += cb.C[i].dot(v.segment<6>(6 * cb.body[i]));
    return rate;
  };
  // Start inside the cones, at the scale of one step of gravity's impulse.
  const double start = std::max(model.gravity().norm() * dt, 1e-3);
  for (const int i : ws.active) {
    const ContactPoint& c = points[i];
    Row& row = ws.contact[i];
    row.point = i;
    row.mu = c.mu;
    row.friction = c.mu > 0.0;
    row.scale = model.mass_scale(c.body) / dt;
    row.compliance = options.contact_compliance;
    force_columns(c, ws.R_k[c.body], row);
    kinematics(c, ws.next[c.body].x, ws.R_next[c.body], ws.next[c.body].v,
               ws.next[c.body].omega, dt, row);
    row.x = Unknowns{};
    row.x.gamma = start;
    row.x.sigma = std::max(row.phi / dt, start);
    if (row.friction) {
      row.x.eta = row.w;
      row.x.psi = row.w.norm() + start;
    }
  }
  for (std::size_t k = 0; k < nl; ++k) {
    ws.s[limit_row(k)] = start;
    ws.limit[k].sigma = std::max(ws.limit[k].phi / dt, start);
  }
  // The direction for target kappa into dx (ds = -dx), each contact's `out` and each
  // limit's steps (the predictor's when `affine`).
  auto direction = [&](double kappa, bool corrector, Unknowns Row::*out, bool affine) {
    rhs = r;
    for (const int i : ws.active) {
      Row& row = ws.contact[i];
      ws.contact_residuals[i] = residuals(row, kappa, corrector);
      rhs.segment<6>(6 * points[i].body) -= eliminate_rhs(row, ws.contact_residuals[i]);
    }
    // A limit's row, sigma eliminated: C ds + (sigma / nu) dnu = -(c1 - nu e1) / nu, times
    // its row scale nu / (nu + sigma).
    for (std::size_t k = 0; k < nl; ++k) {
      const Workspace::LimitSlack& l = ws.limit[k];
      const double nu = ws.s[limit_row(k)];
      const double e1 = l.sigma - l.phi / dt;
      const double c1 = nu * l.sigma - kappa + (corrector ? l.d_nu_aff * l.d_sigma_aff : 0.0);
      rhs[limit_row(k)] = (c1 - nu * e1) / (nu + l.sigma);
    }
    solve_direction(model, ws, options, rhs, dx);
    for (const int i : ws.active) {
      Row& row = ws.contact[i];
      recover(row, ws.contact_residuals[i], -dx.segment<6>(6 * points[i].body), row.*out);
    }
    for (std::size_t k = 0; k < nl; ++k) {
      Workspace::LimitSlack& l = ws.limit[k];
      const double e1 = l.sigma - l.phi / dt;
      (affine ? l.d_nu_aff : l.d_nu) = -dx[limit_row(k)];
      (affine ? l.d_sigma_aff : l.d_sigma) = -limit_rate(k, dx) - e1;
    }
  };
  // Over every pair at x + alpha d: the largest feasible step, the products' sum and the
  // least product.
  auto limit_step = [&](std::size_t k, bool affine, double fraction) {
    const Workspace::LimitSlack& l = ws.limit[k];
    const double nu = ws.s[limit_row(k)];
    const double d_nu = affine ? l.d_nu_aff : l.d_nu, d_sigma = affine ? l.d_sigma_aff : l.d_sigma;
    double alpha = 1.0;
    if (d_nu < 0.0) alpha = std::min(alpha, -fraction * nu / d_nu);
    if (d_sigma < 0.0) alpha = std::min(alpha, -fraction * l.sigma / d_sigma);
    return alpha;
  };
  auto limit_product = [&](std::size_t k, bool affine, double alpha) {
    const Workspace::LimitSlack& l = ws.limit[k];
    return (ws.s[limit_row(k)] + alpha * (affine ? l.d_nu_aff : l.d_nu)) *
           (l.sigma + alpha * (affine ? l.d_sigma_aff : l.d_sigma));
  };
  // The mean of every pair's product at x + alpha d (d: the rows' `d` or `d_aff`).
  auto mean_product = [&](Unknowns Row::*d, bool affine, double alpha) {
    double sum = 0.0;
    int count = 0;
    for (const int i : ws.active) {
      sum += complementarity(ws.contact[i], ws.contact[i].*d, alpha);
      count += pairs(ws.contact[i]);
    }
    for (std::size_t k = 0; k < nl; ++k, ++count) sum += limit_product(k, affine, alpha);
    return sum / count;
  };
  for (;;) {
    if (!evaluated) rate_limited = !evaluate(model, data, ws, dt, ws.s, r, ws.next, true);
    evaluated = false;
    if (rate_limited) {
      status.residual_norm = std::nan("");
      return status;
    }
    double infeasibility = 0.0, worst_gap = 0.0;
    for (const int i : ws.active) {
      const ContactPoint& c = points[i];
      Row& row = ws.contact[i];
      r.segment<6>(6 * c.body).noalias() -= row.scale * (row.N * row.x.gamma + row.D * row.x.b);
      kinematics(c, ws.next[c.body].x, ws.R_next[c.body], ws.next[c.body].v,
                 ws.next[c.body].omega, dt, row);
      const Residuals res = residuals(row, relaxation, false);
      infeasibility = std::max(infeasibility, feasibility(res));
      worst_gap = std::max(worst_gap, gap(row, res, angle_tolerance));
    }
    for (std::size_t k = 0; k < nl; ++k) {
      const Workspace::LimitSlack& l = ws.limit[k];
      infeasibility = std::max(infeasibility, std::abs(l.sigma - l.phi / dt));
      worst_gap = std::max(worst_gap, std::abs(ws.s[limit_row(k)] * l.sigma - relaxation));
    }
    status.residual_norm = std::max(scaled_norm(model, ws, r, dt), infeasibility);
    step_status.complementarity = worst_gap;
    if (!std::isfinite(status.residual_norm) || !std::isfinite(worst_gap)) {
      status.residual_norm = std::nan("");
      return status;
    }
    if (status.residual_norm <= options.newton.tolerance &&
        worst_gap <= options.complementarity_tolerance) {
      status.converged = true;
      return status;
    }
    if (status.iterations >= options.newton.max_iterations) return status;
    ++status.iterations;
    for (const int i : ws.active) ws.ldu().D[points[i].body] += eliminate(ws.contact[i]);
    for (std::size_t k = 0; k < nl; ++k) {
      const double nu = ws.s[limit_row(k)], sigma = ws.limit[k].sigma;
      ws.coupling[nc + k].row_scale = nu / (nu + sigma);
      ws.coupling[nc + k].diag = sigma / (nu + sigma);
    }
    factor_jacobian(model, ws, options);
    double mean = 0.0;  // the mean complementarity product at the iterate
    if (relaxation > 0.0) {
      // Plain Newton on the central path at kappa: Mehrotra's corrector would move its
      // fixed point by the products of a predictor that no longer vanishes there.
      direction(relaxation, false, &Row::d, false);
      mean = mean_product(&Row::d, false, 0.0);
    } else {
      // Predictor (kappa = 0), then the centring target from how far it gets.
      direction(0.0, false, &Row::d_aff, true);
      double alpha_aff = 1.0;
      for (const int i : ws.active)
        alpha_aff = std::min(alpha_aff, step_to_boundary(ws.contact[i], ws.contact[i].d_aff, 1.0));
      for (std::size_t k = 0; k < nl; ++k) alpha_aff = std::min(alpha_aff, limit_step(k, true, 1.0));
      mean = mean_product(&Row::d_aff, true, 0.0);
      const double mean_aff = mean_product(&Row::d_aff, true, alpha_aff);
      // The target stops a decade below the tolerance: driving gamma sigma to round-off
      // only makes the elimination's gamma / sigma overflow the Newton matrix's precision.
      const double floor = 0.1 * options.complementarity_tolerance;
      const double centring = mean > 0.0 ? std::pow(std::max(mean_aff, 0.0) / mean, 3) : 0.0;
      direction(std::max(centring * mean, floor), true, &Row::d, false);
    }
    // Nearer the solution the fraction tends to 1 (as 1 - mean complementarity), so that
    // the last iterations converge faster than by the fraction's factor.
    const double fraction =
        std::max(options.fraction_to_boundary, std::min(1.0 - mean, 1.0 - 1e-4));
    double alpha = 1.0;
    for (const int i : ws.active) {
      const Row& row = ws.contact[i];
      alpha = std::min(alpha, step_to_boundary(row, row.d, fraction));
    }
    for (std::size_t k = 0; k < nl; ++k) alpha = std::min(alpha, limit_step(k, false, fraction));
    // Stay near the central path: every pair's product at least kCentrality times the mean
    // (a wide neighbourhood), or the next directions of a pair pinned to its cone's boundary
    // point out of it and the iteration stalls.
    auto centred = [&](double a) {
      double least = kInfinity;
      for (const int i : ws.active)
        least = std::min(least, least_product(ws.contact[i], ws.contact[i].d, a));
      for (std::size_t k = 0; k < nl; ++k) least = std::min(least, limit_product(k, false, a));
      return least >= kCentrality * mean_product(&Row::d, false, a);
    };
    for (int halvings = 0; halvings < 30 && !centred(alpha); ++halvings) alpha *= 0.5;
    // A pair that blocks the step (its boundary within 1e-3 of it along the direction) is
    // moved back inside, its slacks widened by a step of gravity's impulse, and the
    // iteration starts again from there: far from the solution, where the mechanism's
    // Newton step is large, a pair near its boundary can otherwise pin every later step at
    // zero length (ANYmal pushed at 300 N with stiff joints, measured).
    if (alpha < 1e-3) {
      for (const int i : ws.active) {
        Row& row = ws.contact[i];
        if (step_to_boundary(row, row.d, fraction) >= 1e-3) continue;
        row.x.sigma = std::max(row.x.sigma, start);
        row.x.gamma = std::max(row.x.gamma, start);
        if (row.friction) {
          row.x.psi = row.x.eta.norm() + start;
          const double b = row.x.b.norm();
          if (b > 0.5 * row.mu * row.x.gamma) row.x.b *= 0.5 * row.mu * row.x.gamma / b;
        }
      }
      for (std::size_t k = 0; k < nl; ++k) {
        if (limit_step(k, false, fraction) >= 1e-3) continue;
        ws.limit[k].sigma = std::max(ws.limit[k].sigma, start);
        ws.s[limit_row(k)] = std::max(ws.s[limit_row(k)], start);
      }
      continue;
    }
    // Keep every angular rate in eq. (32)'s domain.
    for (;;) {
      s_trial = ws.s - alpha * dx;
      if (rates_in_domain(model, s_trial, dt) || alpha < 1e-8) break;
      alpha *= 0.5;
    }
    ws.s.swap(s_trial);
    for (const int i : ws.active) {
      Row& row = ws.contact[i];
      row.x.gamma += alpha * row.d.gamma;
      row.x.sigma += alpha * row.d.sigma;
      row.x.psi += alpha * row.d.psi;
      row.x.b += alpha * row.d.b;
      row.x.eta += alpha * row.d.eta;
    }
    for (std::size_t k = 0; k < nl; ++k) ws.limit[k].sigma += alpha * ws.limit[k].d_sigma;
  }
}

// The step's solve on a model with contacts: the contacts that may touch within the step,
// then again with any other that the solution puts through its surface.
NewtonStatus solve_with_contact(const Model& model, const Data& data, Workspace& ws,
                                const StepOptions& options, double dt, StepStatus& step_status,
                                bool& rate_limited) {
  const auto& points = model.contact_points();
  ws.active.clear();
  const auto in_flight = [&ws](std::size_t i) { return !ws.flying.empty() && ws.flying[i]; };
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!in_flight(i) &&
        (options.contact_relaxation > 0.0 || may_touch(model, data, points[i], dt)))
      ws.active.push_back(static_cast<int>(i));
  }
  for (;;) {
    NewtonStatus status;
    if (ws.active.empty() && model.topology().limit_joint.empty()) {
      StepProblem problem{model, data, ws, options, dt};
      status = newton_iterate(problem, ws.s, options.newton.tolerance, options.newton, ws.vectors);
      rate_limited = problem.rate_limited;
    } else {
      status = interior_point(model, data, ws, options, dt, step_status, rate_limited);
    }
    if (!status.converged) return status;
    bool added = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const ContactPoint& c = points[i];
      if (in_flight(i) ||
          std::find(ws.active.begin(), ws.active.end(), static_cast<int>(i)) != ws.active.end())
        continue;
      if (contact_rows::distance(c, ws.next[c.body].x, ws.R_next[c.body]) < 0.0) {
        ws.active.push_back(static_cast<int>(i));
        added = true;
      }
    }
    if (!added) return status;
  }
}

// Data::contact after a converged step.
void record_contacts(const Model& model, Data& data, const Workspace& ws) {
  const auto& points = model.contact_points();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ContactPoint& c = points[i];
    ContactState& out = data.contact[i];
    out = ContactState{};
    out.phi = contact_rows::distance(c, ws.next[c.body].x, ws.R_next[c.body]);
  }
  for (const int i : ws.active) {
    const contact_rows::Row& row = ws.contact[i];
    const ContactPoint& c = points[i];
    ContactState& out = data.contact[i];
    out.active = true;
    out.normal_force = row.scale * row.x.gamma;
    out.friction_force = row.scale * (c.T * row.x.b);
    out.force = out.normal_force * c.n + out.friction_force;
  }
}

// One interval of length dt from data's state (the whole step, or a part of one split by
// impacts), committed into data when it converges.
StepStatus step_interval(const Model& model, Data& data, const StepOptions& options, double dt) {
  Workspace& ws = data.workspace();
  StepStatus status;
  if (!inputs_finite(data)) {
    status.failure = StepFailure::NonFinite;
    return status;
  }
  status.failure = prepare(model, data, ws, dt);
  if (!status.ok()) return status;
  const Guess guess = initial_guess(model, data, ws, dt);
  bool rate_limited = false;
  if (!model.has_inequalities()) {
    const bool predicted = predict(model, data, ws, options, dt, guess);
    StepProblem problem{model, data, ws, options, dt};
    status.newton =
        newton_iterate(problem, ws.s, options.newton.tolerance, options.newton, ws.vectors);
    rate_limited = problem.rate_limited;
    if (predicted) ++status.newton.iterations;
  } else {
    status.newton = solve_with_contact(model, data, ws, options, dt, status, rate_limited);
    status.active_contacts = static_cast<int>(ws.active.size());
  }
  ws.s_solved = status.newton.converged;
  ws.history_dt = dt;
  if (!status.newton.converged) {
    const bool finite = std::isfinite(status.newton.residual_norm);
    // A singular matrix gives a non-finite direction, which may then read as a rate limit.
    status.failure = !finite && ws.singular          ? StepFailure::Singular
                     : !finite && rate_limited ? StepFailure::AngularRateLimit
                     : !finite                         ? StepFailure::NonFinite
                                                       : StepFailure::NotConverged;
    if (!finite) status.newton.residual_norm = -1.0;
    return status;
  }
  for (int b = 0; b < model.num_bodies(); ++b) {
    data.state[b] = ws.next[b];  // the poses of the last evaluation, at the returned s
    data.state[b].q.q.normalize();
  }
  if (!model.contact_points().empty()) record_contacts(model, data, ws);
  const Topology& topo = model.topology();
  for (std::size_t k = 0; k < topo.limit_joint.size(); ++k) {
    const std::size_t row = std::size_t(topo.tree_rows) +
                            std::size_t(topo.coupling_offset[model.couplings().size() + k]);
    data.limit_force[k] = topo.limit_side[k] * ws.limit[k].scale * ws.s[Eigen::Index(row)];
  }
  for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k)
    data.velocity_force[k] = ws.s[topo.velocity_index[k]];
  for (int j = 0; j < model.num_joints(); ++j) {
    const Joint& joint = model.joints()[j];
    if (joint.prescribed)
      data.drive_force[std::size_t(j)] = ws.s[row_of(topo, j) + constraint_rows(joint.type)];
  }
  data.time += dt;
  data.last_dt = dt;
  ++data.steps;
  return status;
}

// Impacts with restitution (docs/contact.md, Impacts): the collision time is an unknown of
// the step, as in the variational collision integrators of Fetecau, Marsden, Ortiz and West
// (2003). The step runs without the pairs in flight; where one ends through its surface,
// false position on the interval's length finds when the first of them touches, Newton's
// impulse law acts there on the bodies' momenta, and the rest of the step follows.
constexpr int kMaxImpactsPerStep = 16;  // splits of one step; the rest is plain contact

// The body momentum of eq. (33) at the end of an interval of length h at rate omega.
Vec3 body_momentum(const Mat3& J, const Vec3& omega, double h) {
  const Vec3 Jw = J * omega;
  return 0.5 * h * (rate_root(omega, h) * Jw - omega.cross(Jw));
}

// The rate of an interval of length h whose eq. (33) momentum is pi, by Newton from omega.
Vec3 rate_for_momentum(const Mat3& J, const Vec3& pi, double h, Vec3 omega) {
  for (int it = 0; it < 30; ++it) {
    const Vec3 F = body_momentum(J, omega, h) - pi;
    if (!(F.norm() > 4.0 * std::numeric_limits<double>::epsilon() * pi.norm())) break;
    omega -= momentum_k_derivative(J, omega, h, 1.0).partialPivLu().solve(F);
  }
  return omega;
}

// Re-expresses every body's velocity as that of an interval of length h ending at the same
// state: the body momentum of eq. (33) kept, and v moved by g (last - h) / 2, because the
// step applies gravity at an interval's start, so that free flight under gravity stays
// exact across intervals of different lengths.
void reexpress(const Model& model, Data& data, double h) {
  const double last = data.last_dt > 0.0 ? data.last_dt : h;
  if (last == h) return;
  for (int b = 0; b < model.num_bodies(); ++b) {
    BodyState& st = data.state[b];
    const Mat3& J = model.bodies()[b].inertia;
    st.v += 0.5 * (last - h) * model.gravity();
    st.omega = rate_for_momentum(J, body_momentum(J, st.omega, last), h, st.omega);
  }
  data.last_dt = h;
}

// The speed of the point of c along its surface's normal, at the body's velocity (v, omega
// in the body frame).
double normal_speed(const ContactPoint& c, const Mat3& R, const Vec3& v, const Vec3& omega) {
  return c.n.dot(v) + c.c_b.cross(R.transpose() * c.n).dot(omega);
}

// Newton's law at the impact time for the pairs in flight that touch: each approaching
// pair leaves at -e times its arrival speed (at 0 when it arrives slower than `slow`), by
// normal impulses >= 0 solved jointly per body (projected Gauss-Seidel: simultaneous
// impacts of one body, such as a face landing flat, share its impulse). The velocities
// before are the instantaneous ones of the interval that ended (length data.last_dt): v
// plus half its gravity, and the body momentum of eq. (33).
int apply_impacts(const Model& model, Data& data, Workspace& ws, double slow, double touch) {
  const auto& points = model.contact_points();
  const double h = data.last_dt;
  int impacts = 0;
  for (int b = 0; b < model.num_bodies(); ++b) {
    const Body& body = model.bodies()[b];
    BodyState& st = data.state[b];
    const Mat3 R = st.q.matrix();
    const Mat3 J_inv = body.inertia.inverse();
    Vec3 v = st.v + 0.5 * h * model.gravity();
    Vec3 Omega = J_inv * body_momentum(body.inertia, st.omega, h);
    // The pairs of b that touch and approach.
    const auto hits = [&](std::size_t i) {
      return points[i].body == b && ws.flying[i] && ws.arrival[i] > 0.0;
    };
    bool any = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (points[i].body != b) continue;
      ws.lambda[i] = 0.0;
      ws.arrival[i] = 0.0;
      if (!ws.flying[i] || contact_rows::distance(points[i], st.x, R) > touch) continue;
      ws.arrival[i] = std::max(0.0, -normal_speed(points[i], R, v, Omega));
      any = any || ws.arrival[i] > 0.0;
    }
    if (!any) continue;
    for (int sweep = 0; sweep < 200; ++sweep) {
      double largest = 0.0;
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (!hits(i)) continue;
        const ContactPoint& c = points[i];
        const double target = ws.arrival[i] > slow ? c.restitution * ws.arrival[i] : 0.0;
        const Vec3 a = c.c_b.cross(R.transpose() * c.n);
        const double inverse_mass = 1.0 / body.mass + a.dot(J_inv * a);
        const double next = std::max(
            0.0, ws.lambda[i] + (target - normal_speed(c, R, v, Omega)) / inverse_mass);
        const double change = next - ws.lambda[i];
        ws.lambda[i] = next;
        v += change / body.mass * c.n;
        Omega += change * (J_inv * a);
        largest = std::max(largest, std::abs(change) * inverse_mass);
      }
      if (largest <= 1e-15 * (v.norm() + Omega.norm() + 1.0)) break;
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!hits(i) || ws.lambda[i] == 0.0) continue;
      ws.impulse[i] += ws.lambda[i];
      ws.impact_time[i] = data.time;
      ++impacts;
    }
    st.v = v - 0.5 * h * model.gravity();
    st.omega = rate_for_momentum(body.inertia, body.inertia * Omega, h, st.omega);
  }
  return impacts;
}

StepStatus step_with_impacts(const Model& model, Data& data, const StepOptions& options) {
  Workspace& ws = data.workspace();
  const auto& points = model.contact_points();
  const double dt = options.dt;
  const double g = model.gravity().norm();
  // A pair that arrives slower than a step of gravity's speed, within a step of gravity's
  // fall of its surface, is in plain (plastic) contact: a bouncing ball's ever shorter
  // last bounces end there. A pair touches at the impact time when within `touch`.
  const double slow = g * dt;
  const double near = 0.5 * g * dt * dt;
  constexpr double touch = 1e-9;   // m
  constexpr double found = 1e-13;  // m: false position's stop, on the touching side
  const double t_start = data.time;
  const long steps_start = data.steps;
  ws.step_start = data.state;
  const double last_dt_start = data.last_dt;
  std::fill(ws.impulse.begin(), ws.impulse.end(), 0.0);
  std::fill(ws.impact_time.begin(), ws.impact_time.end(), 0.0);
  double elapsed = 0.0;
  int impacts = 0, splits = 0;
  bool plain = false;
  StepStatus status;
  for (;;) {
    const double remaining = dt - elapsed;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const ContactPoint& c = points[i];
      ws.flying[i] = 0;
      if (c.restitution == 0.0 || plain || splits >= kMaxImpactsPerStep) continue;
      const BodyState& st = data.state[c.body];
      const double h = data.last_dt > 0.0 ? data.last_dt : dt;
      const Mat3 R = st.q.matrix();
      const Vec3 Omega = model.bodies()[c.body].inertia.inverse() *
                         body_momentum(model.bodies()[c.body].inertia, st.omega, h);
      const double speed = normal_speed(c, R, st.v + 0.5 * h * model.gravity(), Omega);
      ws.flying[i] = contact_rows::distance(c, st.x, R) > near || speed < -slow;
    }
    ws.interval_start = data.state;
    const double last_dt = data.last_dt;
    // The interval of length h from its start.
    const auto run = [&](double h) {
      data.state = ws.interval_start;
      data.last_dt = last_dt;
      data.time = t_start + elapsed;
      reexpress(model, data, h);
      return step_interval(model, data, options, h);
    };
    const auto restore = [&] {
      data.state = ws.step_start;
      data.last_dt = last_dt_start;
      data.time = t_start;
      data.steps = steps_start;
    };
    status = run(remaining);
    if (!status.ok()) {
      restore();
      return status;
    }
    // The pairs in flight that end through their surface.
    bool crossed = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!ws.flying[i]) continue;
      const ContactPoint& c = points[i];
      if (contact_rows::distance(c, data.state[c.body].x, data.state[c.body].q.matrix()) < 0.0)
        crossed = true;
      else
        ws.flying[i] = 0;  // no impact of it in this interval
    }
    if (!crossed) break;
    // The least gap of the pairs that crossed.
    const auto least_gap = [&] {
      double least = kInfinity;
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (!ws.flying[i]) continue;
        const ContactPoint& c = points[i];
        least = std::min(least, contact_rows::distance(c, data.state[c.body].x,
                                                       data.state[c.body].q.matrix()));
      }
      return least;
    };
    // False position (Illinois) for the fraction of the interval at which the first pair
    // touches, kept on the touching side.
    double lo = 0.0, f_lo = kInfinity, hi = 1.0, f_hi = least_gap();
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!ws.flying[i]) continue;
      const ContactPoint& c = points[i];
      const BodyState& st = ws.interval_start[c.body];
      f_lo = std::min(f_lo, contact_rows::distance(c, st.x, st.q.matrix()));
    }
    double tau = 0.0, f = f_lo;
    int side = 0;
    for (int it = 0; it < 100; ++it) {
      tau = std::clamp((lo * f_hi - hi * f_lo) / (f_hi - f_lo), lo, hi);
      if (tau == lo || tau == hi) tau = 0.5 * (lo + hi);
      status = run(tau * remaining);
      if (!status.ok()) {
        restore();
        return status;
      }
      f = least_gap();
      if (f >= 0.0) {
        lo = tau;
        f_lo = f;
        if (side == 1) f_hi *= 0.5;
        side = 1;
        if (f <= found) break;
      } else {
        hi = tau;
        f_hi = f;
        if (side == -1) f_lo *= 0.5;
        side = -1;
      }
      if (hi - lo <= 4.0 * std::numeric_limits<double>::epsilon()) break;
    }
    if (f < 0.0 && lo == 0.0) {
      // Touching at the interval's start, with no time to split off: the interval again
      // from its start, in plain contact.
      data.state = ws.interval_start;
      data.last_dt = last_dt;
      data.time = t_start + elapsed;
      plain = true;
      continue;
    }
    if (f < 0.0) {
      tau = lo;
      status = run(tau * remaining);
      if (!status.ok()) {
        restore();
        return status;
      }
    }
    impacts += apply_impacts(model, data, ws, slow, touch);
    ++splits;
    elapsed += tau * remaining;
    if (tau >= 1.0) break;
  }
  reexpress(model, data, dt);
  data.time = t_start + dt;
  data.steps = steps_start + 1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    data.contact[i].impulse = ws.impulse[i];
    data.contact[i].impact_time = ws.impulse[i] > 0.0 ? ws.impact_time[i] : 0.0;
  }
  status.impacts = impacts;
  return status;
}

}  // namespace

StepStatus step(const Model& model, Data& data, const StepOptions& options) {
  return model.has_restitution() ? step_with_impacts(model, data, options)
                                 : step_interval(model, data, options, options.dt);
}

double energy(const Model& model, const std::vector<BodyState>& state) {
  double e = 0.0;
  for (int b = 0; b < model.num_bodies(); ++b) {
    const Body& body = model.bodies()[b];
    const BodyState& st = state[b];
    e += 0.5 * body.mass * st.v.squaredNorm() + 0.5 * st.omega.dot(body.inertia * st.omega) -
         body.mass * model.gravity().dot(st.x);
  }
  for (const Joint& joint : model.joints()) {
    if (joint.stiffness == 0.0) continue;
    const double s = joint_coordinate(joint, pose_of(state, joint.parent), state[joint.child],
                                      nullptr, nullptr);
    e += 0.5 * joint.stiffness * (s - joint.rest) * (s - joint.rest);
  }
  return e;
}

Vec3 linear_momentum(const Model& model, const std::vector<BodyState>& state) {
  Vec3 p = Vec3::Zero();
  for (int b = 0; b < model.num_bodies(); ++b) p += model.bodies()[b].mass * state[b].v;
  return p;
}

Vec3 angular_momentum(const Model& model, const std::vector<BodyState>& state, double dt) {
  Vec3 l = Vec3::Zero();
  for (int b = 0; b < model.num_bodies(); ++b) {
    const Body& body = model.bodies()[b];
    const BodyState& st = state[b];
    const Vec3 Jw = body.inertia * st.omega;
    // Body momentum at the end of the interval, the t_kp1 side of eq. (33).
    const Vec3 mu = 0.5 * dt * (rate_root(st.omega, dt) * Jw - st.omega.cross(Jw));
    l += st.x.cross(body.mass * st.v) + st.q.matrix() * mu;
  }
  return l;
}

double excess_penetration(const Model& model, const Data& data, const StepOptions& options) {
  double worst = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < data.contact.size(); ++i) {
    const ContactState& c = data.contact[i];
    const double m = model.mass_scale(model.contact_points()[i].body);
    const double allowed = options.dt * options.newton.tolerance +
                           options.contact_compliance * options.dt * options.dt * c.normal_force / m;
    worst = std::max(worst, -c.phi - allowed);
  }
  return worst;
}

double max_constraint_violation(const Model& model, const std::vector<BodyState>& state) {
  double worst = 0.0;
  for (const Joint& joint : model.joints()) {
    const JointVec g = joint_residual(joint, pose_of(state, joint.parent), state[joint.child]);
    worst = std::max(worst, g.lpNorm<Eigen::Infinity>());
  }
  for (const Coupling& c : model.couplings()) {
    std::array<int, 4> body;
    std::array<Vec6, 4> gradient;
    worst = std::max(worst, std::abs(coupling_gradient(model, c, state, body, gradient)));
  }
  return worst;
}

int system_size(const Model& model) { return model.topology().size(); }

namespace {

// The workspace after prepare() and evaluate() at s; throws where the step has no solution.
// The contacts' rows are relaxed_residual_blocks'.
void evaluate_at(const Model& model, const Data& data, Workspace& ws, double dt,
                 const Eigen::VectorXd& s, Eigen::VectorXd& r, bool jacobian,
                 bool with_contacts = false) {
  if (model.has_inequalities() && !with_contacts) {
    throw InputError("maximal residual: the model has contacts or joint limits, whose rows the "
                     "residual's blocks do not include yet (docs/contact.md)");
  }
  if (s.size() != model.topology().size()) {
    throw InputError("maximal residual: " + std::to_string(s.size()) + " unknowns for a system of " +
                     std::to_string(model.topology().size()));
  }
  r.resize(s.size());
  if (const StepFailure f = prepare(model, data, ws, dt); f != StepFailure::None)
    throw SolverError(describe(f));
  if (!evaluate(model, data, ws, dt, s, r, ws.next, jacobian))
    throw SolverError(describe(StepFailure::AngularRateLimit));
}

}  // namespace

Eigen::VectorXd residual(const Model& model, const Data& data, double dt,
                         const Eigen::VectorXd& s) {
  Workspace ws(model);
  Eigen::VectorXd r;
  evaluate_at(model, data, ws, dt, s, r, false);
  return r;
}

namespace {

// residual_blocks in the workspace ws, which keeps the poses at t_k and t_k+1.
void fill_residual_blocks(const Model& model, const Data& data, double dt,
                          const Eigen::VectorXd& s, ResidualBlocks& out, Workspace& ws,
                          bool with_contacts) {
  evaluate_at(model, data, ws, dt, s, out.r, true, with_contacts);
  assemble_tree(model, ws);
  assemble_dense(model, ws);
  out.J_r_s = ws.F_dense;
  const int n = model.topology().size();
  const int nb = model.num_bodies();
  out.J_r_state.setZero(n, 12 * nb);
  out.J_r_u.setZero(n, model.num_joints());
  auto& J_r_state = out.J_r_state;
  // The t_k momenta and the body torque (applied in the body frame: R_k^T tau).
  const double dt_prev = data.last_dt > 0.0 ? data.last_dt : dt;
  for (int b = 0; b < nb; ++b) {
    const Body& body = model.bodies()[b];
    const BodyState& st = data.state[b];
    J_r_state.block<3, 3>(6 * b, 12 * b + 6).diagonal().setConstant(-body.mass / dt);
    J_r_state.block<3, 3>(6 * b + 3, 12 * b + 9) =
        -momentum_k_derivative(body.inertia, st.omega, dt_prev, dt);
    J_r_state.block<3, 3>(6 * b + 3, 12 * b + 3) =
        -Quat::hat(st.q.matrix().transpose() * data.body_torque[b]);
  }
  for (int j = 0; j < model.num_joints(); ++j) {
    const Joint& joint = model.joints()[j];
    const int m = constraint_rows(joint.type);
    const BodyState& a = pose_of(data.state, joint.parent);
    const BodyState& c = data.state[joint.child];
    const int ends[2] = {joint.parent, joint.child};
    // Adds sign * M (rows and columns: parent then child, 6 each) into the body rows and
    // the columns at col_shift (0: dx, dphi; 6: dv, domega) of the two bodies.
    auto scatter = [&](const Mat12& M, int col_shift) {
      for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 2; ++k) {
          if (ends[i] == kWorld || ends[k] == kWorld) continue;
          J_r_state.block<6, 6>(6 * ends[i], 12 * ends[k] + col_shift) +=
              M.block<6, 6>(6 * i, 6 * k);
        }
      }
    };
    // The constraint force -G(x_k)^T lambda.
    JointVec lambda = lambda_of(model.topology(), j, s, m);
    scatter(-joint_force_derivative(joint, a, c, lambda), 0);
    // g(x_kp1) / dt, and a prescribed coordinate's row s(x_kp1) / dt after them,
    // x_kp1 = x_k + dt v and q_kp1 = q_k f: a perturbation q_k exp(dphi) moves q_kp1 by
    // exp(R_f^T dphi).
    JointBlock C_ends[2];
    const BodyState& a_next = pose_of(ws.next, joint.parent);
    joint_jacobians(joint, a_next, ws.next[joint.child], C_ends[0], C_ends[1]);
    Vec6 ds_next[2];
    if (joint.prescribed) joint_coordinate(joint, a_next, ws.next[joint.child], &ds_next[0], &ds_next[1]);
    const int row = row_of(model.topology(), j);
    for (int i = 0; i < 2; ++i) {
      if (ends[i] == kWorld) continue;
      const Mat3 R_f = (data.state[ends[i]].q.inverse() * ws.next[ends[i]].q).matrix();
      J_r_state.block(row, 12 * ends[i], m, 3) = C_ends[i].leftCols<3>() / dt;
      J_r_state.block(row, 12 * ends[i] + 3, m, 3) = C_ends[i].rightCols<3>() * R_f.transpose() / dt;
      if (!joint.prescribed) continue;
      J_r_state.block<1, 3>(row + m, 12 * ends[i]) = ds_next[i].head<3>().transpose() / dt;
      J_r_state.block<1, 3>(row + m, 12 * ends[i] + 3) =
          ds_next[i].tail<3>().transpose() * R_f.transpose() / dt;
    }
    // Spring, damper and input on a one-degree-of-freedom joint: the force f ds enters with
    // a minus sign, f = -k (s - rest) - c s_dot + u and s_dot = ds . velocities.
    if (joint_dofs(joint.type) != 1) continue;
    Vec6 ds_a, ds_c;
    const double coord = joint_coordinate(joint, a, c, &ds_a, &ds_c);
    Vec12 ds;
    ds << ds_a, ds_c;
    for (int i = 0; i < 2; ++i) {
      if (ends[i] != kWorld) out.J_r_u.block<6, 1>(6 * ends[i], j) = -ds.segment<6>(6 * i);
    }
    // The damper's or the prescribed coordinate's force mu (an unknown) acts along ds(x_k);
    // the damper's row reads s_dot = ds(x_k) . (v, omega) of the step.
    const double mu = has_coordinate_row(joint) ? s[row + m] : 0.0;
    const double f = -joint.stiffness * (coord - joint.rest) + data.joint_input[j] + mu;
    if (f == 0.0 && joint.stiffness == 0.0 && !has_coordinate_row(joint)) continue;
    const Mat12 H = joint_coordinate_derivative(joint, a, c);
    scatter(joint.stiffness * ds * ds.transpose() - f * H, 0);
    if (joint.damping == 0.0) continue;
    Vec12 vel_step = Vec12::Zero();
    if (joint.parent != kWorld) vel_step.head<6>() = s.segment<6>(6 * joint.parent);
    vel_step.tail<6>() = s.segment<6>(6 * joint.child);
    const Eigen::Matrix<double, 1, 12> J_rate_pose = vel_step.transpose() * H;
    for (int i = 0; i < 2; ++i) {
      if (ends[i] != kWorld) {
        J_r_state.block<1, 6>(row + m, 12 * ends[i]) = J_rate_pose.segment<6>(6 * i);
      }
    }
  }
  // Couplings: the force -mu dc(x_k) (each joint's share moves with its own bodies) and the
  // row c(x_kp1) / dt, through x_kp1 = x_k + dt v and q_kp1 = q_k f.
  for (std::size_t k = 0; k < model.couplings().size(); ++k) {
    const Coupling& coupling = model.couplings()[k];
    const int row = model.topology().tree_rows + model.topology().coupling_offset[k];
    const double mu = s[row];
    for (const auto& [j, weight] : {std::pair{coupling.follower, 1.0},
                                    std::pair{coupling.leader, -coupling.multiplier}}) {
      const Joint& joint = model.joints()[j];
      const Mat12 H = joint_coordinate_derivative(joint, pose_of(data.state, joint.parent),
                                                  data.state[joint.child]);
      const int ends[2] = {joint.parent, joint.child};
      for (int a = 0; a < 2; ++a) {
        for (int b = 0; b < 2; ++b) {
          if (ends[a] == kWorld || ends[b] == kWorld) continue;
          J_r_state.block<6, 6>(6 * ends[a], 12 * ends[b]) -=
              mu * weight * H.block<6, 6>(6 * a, 6 * b);
        }
      }
    }
    std::array<int, 4> body;
    std::array<Vec6, 4> gradient;
    coupling_gradient(model, coupling, ws.next, body, gradient);
    for (int i = 0; i < 4; ++i) {
      if (body[i] == kWorld) continue;
      const Mat3 R_f = (data.state[body[i]].q.inverse() * ws.next[body[i]].q).matrix();
      J_r_state.block<1, 3>(row, 12 * body[i]) += gradient[i].head<3>().transpose() / dt;
      J_r_state.block<1, 3>(row, 12 * body[i] + 3) +=
          gradient[i].tail<3>().transpose() * R_f.transpose() / dt;
    }
  }
  // Velocity constraints: the force -A(q_k)^T mu and the row (A(q_k) + A(q_kp1)) / 2 w_kp1
  // move with q_k, the row also through q_kp1 = q_k f (turned by exp(R_f^T dphi)).
  const Topology& topo = model.topology();
  for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k) {
    if (topo.velocity_row[k] > 0) continue;
    const VelocityConstraint& c = model.velocity_constraints()[topo.velocity_constraint[k]];
    const int b = c.body;
    const int m = velocity_rows(c.type);
    const Vec6 w = s.segment<6>(6 * b);
    Eigen::Vector2d mu = Eigen::Vector2d::Zero();
    for (int i = 0; i < m; ++i) mu[i] = s[topo.velocity_index[k + std::size_t(i)]];
    Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 2, 3> dAw_k, dAw_kp1;
    Eigen::Matrix<double, 6, 3> dAtmu_k, unused;
    velocity_constraint_derivatives(c, ws.R_k[b], w, mu, dAw_k, dAtmu_k);
    velocity_constraint_derivatives(c, ws.R_next[b], w, mu, dAw_kp1, unused);
    const Mat3 R_f = (data.state[b].q.inverse() * ws.next[b].q).matrix();
    J_r_state.block<6, 3>(6 * b, 12 * b + 3) -= dAtmu_k;
    const Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 2, 3> dRow = 0.5 * (dAw_k + dAw_kp1 * R_f.transpose());
    for (int i = 0; i < m; ++i)
      J_r_state.block<1, 3>(topo.velocity_index[k + std::size_t(i)], 12 * b + 3) += dRow.row(i);
  }
}

}  // namespace

void residual_blocks(const Model& model, const Data& data, double dt, const Eigen::VectorXd& s,
                     ResidualBlocks& out) {
  Workspace ws(model);
  fill_residual_blocks(model, data, dt, s, out, ws, false);
}

int contact_unknowns_size(const Model& model) {
  int m = 0;
  for (const ContactPoint& c : model.contact_points()) m += c.mu > 0.0 ? 7 : 2;
  return m;
}

void relaxed_residual_blocks(const Model& model, const Data& data, double dt, double kappa,
                             double compliance, const Eigen::VectorXd& s,
                             const Eigen::VectorXd& z, ResidualBlocks& out) {
  if (!model.topology().limit_joint.empty() || model.has_restitution()) {
    throw InputError("maximal relaxed residual: joint limits and restitution have no relaxed "
                     "rows yet (docs/contact.md, Derivatives through contact)");
  }
  const int m = contact_unknowns_size(model);
  if (z.size() != m) {
    throw InputError("maximal relaxed residual: " + std::to_string(z.size()) +
                     " contact unknowns for " + std::to_string(m));
  }
  Workspace ws(model);
  ResidualBlocks base;
  fill_residual_blocks(model, data, dt, s, base, ws, true);
  const int n = model.topology().size();
  const int nb = model.num_bodies();
  out.r.setZero(n + m);
  out.r.head(n) = base.r;
  out.J_r_s.setZero(n + m, n + m);
  out.J_r_s.topLeftCorner(n, n) = base.J_r_s;
  out.J_r_state.setZero(n + m, 12 * nb);
  out.J_r_state.topRows(n) = base.J_r_state;
  out.J_r_u.setZero(n + m, model.num_joints());
  out.J_r_u.topRows(n) = base.J_r_u;
  auto& J = out.J_r_s;
  auto& J_x = out.J_r_state;
  int o = n;
  for (const ContactPoint& c : model.contact_points()) {
    const int b = c.body;
    contact_rows::Row row;
    row.mu = c.mu;
    row.friction = c.mu > 0.0;
    row.scale = model.mass_scale(b) / dt;
    force_columns(c, ws.R_k[b], row);
    kinematics(c, ws.next[b].x, ws.R_next[b], ws.next[b].v, ws.next[b].omega, dt, row);
    const double gamma = z[o - n], sigma = z[o - n + 1];
    Vec2 impulse_t = Vec2::Zero();
    if (row.friction) impulse_t = z.segment<2>(o - n + 2);
    // The impulse on the body rows, at x_k: its rotational part R_k^T (a x F), a = R_k c -
    // r n, F = gamma n + T b, moves with a perturbation R_k exp(dphi) by
    // [hat(R_k^T (a x F)) + R_k^T F^ R_k c^] dphi.
    out.r.segment<6>(6 * b) -= row.scale * (row.N * gamma + row.D * impulse_t);
    J.block<6, 1>(6 * b, o) = -row.scale * row.N;
    const Mat3& R_k = ws.R_k[b];
    const Vec3 a = R_k * c.c_b - c.radius * c.n;
    const Vec3 F = gamma * c.n + c.T * impulse_t;
    J_x.block<3, 3>(6 * b + 3, 12 * b + 3) -=
        row.scale * (Quat::hat(R_k.transpose() * a.cross(F)) +
                     R_k.transpose() * Quat::hat(F) * R_k * Quat::hat(c.c_b));
    // e1 = sigma - phi(x_kp1) / dt - eps gamma, x_kp1 = x_k + dt v, R_kp1 = R_k f, so a
    // perturbation R_k exp(dphi) turns R_kp1 by exp(R_f^T dphi).
    const Mat3& R_kp1 = ws.R_next[b];
    const Mat3 R_f = (data.state[b].q.inverse() * ws.next[b].q).matrix();
    out.r[o] = sigma - row.phi / dt - compliance * gamma;
    J.block<1, 6>(o, 6 * b) = -row.P.transpose();
    J(o, o) = -compliance;
    J(o, o + 1) = 1.0;
    J_x.block<1, 3>(o, 12 * b) = -c.n.transpose() / dt;
    J_x.block<1, 3>(o, 12 * b + 3) =
        c.n.transpose() * R_kp1 * Quat::hat(c.c_b) * R_f.transpose() / dt;
    // c1 = gamma sigma - kappa.
    out.r[o + 1] = gamma * sigma - kappa;
    J(o + 1, o) = sigma;
    J(o + 1, o + 1) = gamma;
    if (row.friction) {
      J.block<6, 2>(6 * b, o + 2) = -row.scale * row.D;
      const double psi = z[o - n + 4];
      const Vec2 eta = z.segment<2>(o - n + 5);
      // e2 = eta - w, w = T^T u(x_kp1): du/dphi_kp1 = -R hat(omega x c) - r n^ R omega^.
      out.r.segment<2>(o + 2) = eta - row.w;
      J.block<2, 6>(o + 2, 6 * b) = -row.Q;
      J.block<2, 2>(o + 2, o + 5).setIdentity();
      const Vec3& omega = ws.next[b].omega;
      const Mat3 du_dphi = -R_kp1 * Quat::hat(omega.cross(c.c_b)) -
                           c.radius * Quat::hat(c.n) * R_kp1 * Quat::hat(omega);
      J_x.block<2, 3>(o + 2, 12 * b + 3) = -c.T.transpose() * du_dphi * R_f.transpose();
      // c2 = z o y - kappa (1, 0, 0), z = (mu gamma, b), y = (psi, eta).
      const double z0 = c.mu * gamma;
      out.r[o + 4] = z0 * psi + impulse_t.dot(eta) - kappa;
      out.r.segment<2>(o + 5) = z0 * eta + psi * impulse_t;
      J(o + 4, o) = c.mu * psi;
      J.block<1, 2>(o + 4, o + 2) = eta.transpose();
      J(o + 4, o + 4) = z0;
      J.block<1, 2>(o + 4, o + 5) = impulse_t.transpose();
      J.block<2, 1>(o + 5, o) = c.mu * eta;
      J.block<2, 2>(o + 5, o + 2) = psi * Mat2::Identity();
      J.block<2, 1>(o + 5, o + 4) = impulse_t;
      J.block<2, 2>(o + 5, o + 5) = z0 * Mat2::Identity();
    }
    o += row.friction ? 7 : 2;
  }
}

std::vector<BodyState> retract_state(const std::vector<BodyState>& state,
                                     const Eigen::VectorXd& delta) {
  if (delta.size() != 12 * static_cast<Eigen::Index>(state.size())) {
    throw InputError("maximal retract_state: " + std::to_string(delta.size()) +
                     " perturbation entries for " + std::to_string(state.size()) +
                     " bodies (12 each)");
  }
  std::vector<BodyState> out = state;
  for (std::size_t b = 0; b < state.size(); ++b) {
    const auto d = delta.segment<12>(12 * static_cast<Eigen::Index>(b));
    out[b].x += d.segment<3>(0);
    out[b].q = state[b].q * Quat::exp(d.segment<3>(3));
    out[b].v += d.segment<3>(6);
    out[b].omega += d.segment<3>(9);
  }
  return out;
}

namespace inspect {

Eigen::VectorXd sparse_solve(const Model& model, Data& data, const StepOptions& options,
                             const Eigen::VectorXd& s, const Eigen::VectorXd& rhs) {
  Workspace& ws = data.workspace();
  evaluate_at(model, data, ws, options.dt, s, ws.vectors.r, true);
  StepOptions sparse = options;
  sparse.solver = LinearSolver::SparseLDU;
  factor_jacobian(model, ws, sparse);
  Eigen::VectorXd dx(rhs.size());
  solve_direction(model, ws, sparse, rhs, dx);
  return dx;
}

Eigen::VectorXd contact_unknowns(const Model& model, const Data& data) {
  Eigen::VectorXd z(contact_unknowns_size(model));
  const Workspace& ws = data.workspace();
  const auto& points = model.contact_points();
  std::vector<char> solved(points.size(), 0);
  for (const int i : ws.active) solved[std::size_t(i)] = 1;
  Eigen::Index o = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!solved[i]) {
      throw InputError("maximal contact unknowns: contact " + std::to_string(i) +
                       " was not in the last step's solve (a relaxed step solves every one)");
    }
    const contact_rows::Unknowns& x = ws.contact[i].x;
    z[o] = x.gamma;
    z[o + 1] = x.sigma;
    if (points[i].mu > 0.0) {
      z.segment<2>(o + 2) = x.b;
      z[o + 4] = x.psi;
      z.segment<2>(o + 5) = x.eta;
    }
    o += points[i].mu > 0.0 ? 7 : 2;
  }
  return z;
}

Eigen::VectorXd warm_start(const Model& model, const Data& data) {
  Eigen::VectorXd s = data.workspace().s;
  load_velocities(model, data, s);
  return s;
}

void newton_system_solve(const Model& model, Data& data, const StepOptions& options) {
  Workspace& ws = data.workspace();
  if (const StepFailure f = prepare(model, data, ws, options.dt); f != StepFailure::None)
    throw SolverError(describe(f));
  load_velocities(model, data, ws.s);
  if (!evaluate(model, data, ws, options.dt, ws.s, ws.vectors.r, ws.next, true)) {
    throw SolverError(describe(StepFailure::AngularRateLimit));
  }
  factor_jacobian(model, ws, options);
  solve_direction(model, ws, options, ws.vectors.r, ws.vectors.dx);
}

}  // namespace inspect

}  // namespace marsden::maximal
