#include "marsden/sim/maximal.hpp"

#include <algorithm>
#include <string>

#include <Eigen/QR>

#include "marsden/error.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/sim/inputs.hpp"
#include "marsden/sim/simulate.hpp"
#include "sim/state.hpp"

namespace marsden::sim {
namespace {

using maximal::BodyState;

const char* failure_code(maximal::StepFailure f) {
  switch (f) {
    case maximal::StepFailure::None:
      return "none";
    case maximal::StepFailure::NotConverged:
      return "not_converged";
    case maximal::StepFailure::AngularRateLimit:
      return "angular_rate_limit";
    case maximal::StepFailure::NonFinite:
      return "non_finite";
    case maximal::StepFailure::Singular:
      return "singular";
    case maximal::StepFailure::ConstraintUndefined:
      return "constraint_undefined";
  }
  return "unknown";
}

// A maximal mechanism as a sim::System: maximal::step, one dt at a time. The rotational
// momentum a step carries is the previous interval's (Data::last_dt), so a step retried in
// substeps keeps the momentum balance exact.
class MaximalSystem final : public sim::System {
  // The largest joint violation set_state accepts (m, or the joint's own measure).
  static constexpr double kConstraintTolerance = 1e-9;

 public:
  explicit MaximalSystem(const MaximalSetup& ms)
      : keep_(ms.model),
        model_(*keep_),
        input_joints_(ms.input_joints),
        motors_(ms.motors.empty() ? std::vector<MaximalSetup::Motor>(ms.input_joints.size())
                                  : ms.motors),
        controls_(ms.controls ? std::make_unique<StepSignal>(ms.controls) : nullptr),
        u_(Eigen::VectorXd::Zero(Eigen::Index(input_joints_.size()))),
        options_(ms.step),
        data_(model_, ms.state0),
        last_q_(static_cast<std::size_t>(model_.num_bodies()), Vec4::Zero()) {
    for (int j = 0; j < model_.num_joints(); ++j) {
      const maximal::Joint& joint = model_.joints()[std::size_t(j)];
      if (!joint.prescribed) continue;
      prescribed_joints_.push_back(j);
      path_start_.push_back(data_.joint_target[std::size_t(j)]);
      const auto path = ms.prescribed.find(joint.name);
      paths_.push_back(path == ms.prescribed.end() ? nullptr : path->second);
    }
    layout_.add("", {"t"}, {});
    const int nb = model_.num_bodies();
    for (const maximal::Body& b : model_.bodies())
      for (const char* c : {"_x", "_y", "_z", "_qw", "_qx", "_qy", "_qz"})
        layout_.columns.push_back(b.name + c);
    sim::ArrayLayout position{"position", {std::size_t(nb), 3}, {}};
    sim::ArrayLayout quaternion{"quaternion", {std::size_t(nb), 4}, {}};
    for (int b = 0; b < nb; ++b) {
      for (int i = 0; i < 3; ++i) position.columns.push_back(1 + 7 * b + i);
      for (int i = 3; i < 7; ++i) quaternion.columns.push_back(1 + 7 * b + i);
    }
    layout_.arrays = {std::move(position), std::move(quaternion)};
    layout_.add("energy", {"energy"}, {});
    layout_.add("constraint_violation", {"constraint_violation"}, {});
    layout_.add("controls", numbered("u", static_cast<int>(input_joints_.size())),
                {input_joints_.size()});
    if (!model_.contact_points().empty()) {
      layout_.add("contact_force", {"contact_force"}, {});
      layout_.add("penetration", {"penetration"}, {});
      layout_.add("active_contacts", {"active_contacts"}, {});
      layout_.add("complementarity", {"complementarity"}, {});
      layout_.add("contact_iterations", {"contact_iterations"}, {});
    }
    if (model_.has_restitution()) layout_.add("impacts", {"impacts"}, {});
    // Velocity constraints' forces (N), NAME_force, or NAME_force0 and NAME_force1 for the
    // two rows of a wheel or a ball (maximal::Data::velocity_force).
    if (const std::size_t nv = model_.topology().velocity_constraint.size(); nv > 0)
      layout_.add("velocity_force", velocity_force_columns(model_), {nv});
    // Prescribed joints' driving forces (N m or N, maximal::Data::drive_force).
    if (!prescribed_joints_.empty()) {
      std::vector<std::string> names;
      for (const int j : prescribed_joints_) names.push_back(model_.joints()[std::size_t(j)].name + "_drive");
      layout_.add("drive_force", names, {prescribed_joints_.size()});
    }
    checkpoint();  // sizes the saved copies
    for (int b = 0; b < nb; ++b) quaternion_at_.push_back(13 * b + 3);
  }

  const sim::Layout& layout() const override { return layout_; }
  // The state and what the rows report of the last step (same sizes: no allocation).
  void checkpoint() override {
    saved_ = data_.state;
    saved_last_dt_ = data_.last_dt;
    saved_contact_ = data_.contact;
    saved_velocity_force_ = data_.velocity_force;
    saved_drive_force_ = data_.drive_force;
    saved_last_ = last_;
  }
  void rollback() override {
    data_.state = saved_;
    data_.last_dt = saved_last_dt_;
    data_.contact = saved_contact_;
    data_.velocity_force = saved_velocity_force_;
    data_.drive_force = saved_drive_force_;
    last_ = saved_last_;
  }
  sim::StepStatus step(double t, double dt) override {
    options_.dt = dt;
    data_.time = t;
    if (controls_) {
      // Joint inputs act at the node t_k, where the step evaluates its forces.
      controls_->begin_step(t);
      eval_into(*controls_, t, u_);
      apply_inputs(u_, data_);
    }
    set_targets(t + dt, data_);
    const maximal::StepStatus st = maximal::step(model_, data_, options_);
    if (st.ok()) {
      last_ = st;
      return {true, st.newton.iterations, st.newton.residual_norm, {}};
    }
    std::string why = maximal::describe(st.failure);
    if (st.failure == maximal::StepFailure::NotConverged)
      why += " (residual " + number_text(st.newton.residual_norm) + " after " +
             std::to_string(st.newton.iterations) + " iterations)";
    return {false, st.newton.iterations, st.newton.residual_norm, std::move(why),
            failure_code(st.failure)};
  }
  // Per body: position x (m, world), unit quaternion q (local to world), linear velocity v
  // (m/s, world) and angular velocity omega (rad/s, body) of the interval ending now.
  int state_size() const override { return 13 * model_.num_bodies(); }
  std::vector<std::string> state_names() const override {
    std::vector<std::string> names;
    for (const maximal::Body& b : model_.bodies())
      for (const char* c : {"_x", "_y", "_z", "_qw", "_qx", "_qy", "_qz", "_vx", "_vy", "_vz",
                            "_wx", "_wy", "_wz"})
        names.push_back(b.name + c);
    return names;
  }
  std::span<const int> state_quaternions() const override { return quaternion_at_; }
  void get_state(std::span<double> x) const override {
    std::size_t c = 0;
    for (const BodyState& s : data_.state) {
      for (int i = 0; i < 3; ++i) x[c++] = s.x[i];
      for (int i = 0; i < 4; ++i) x[c++] = s.q.q[i];
      for (int i = 0; i < 3; ++i) x[c++] = s.v[i];
      for (int i = 0; i < 3; ++i) x[c++] = s.omega[i];
    }
  }
  // As a fresh start: the rotational momentum of the first step is taken at its own dt
  // (Data::last_dt = 0) and Newton forgets its history. Poses must satisfy every joint.
  void set_state(std::span<const double> x) override {
    const std::vector<std::string> names = state_names();
    check_state("maximal", names, x);
    std::vector<BodyState> state(data_.state.size());
    for (std::size_t b = 0; b < state.size(); ++b) {
      const std::size_t c = 13 * b;
      state[b].x = Vec3(x[c], x[c + 1], x[c + 2]);
      state[b].q.q = state_quaternion("maximal", names, x, int(c) + 3);
      state[b].v = Vec3(x[c + 7], x[c + 8], x[c + 9]);
      state[b].omega = Vec3(x[c + 10], x[c + 11], x[c + 12]);
    }
    const BodyState world;
    for (const maximal::Joint& joint : model_.joints()) {
      const BodyState& parent =
          joint.parent == maximal::kWorld ? world : state[std::size_t(joint.parent)];
      const double g =
          maximal::joint_residual(joint, parent, state[std::size_t(joint.child)]).lpNorm<Eigen::Infinity>();
      if (!(g <= kConstraintTolerance))
        throw InputError("maximal state: the bodies violate joint '" + joint.name + "' by " +
                         number_text(g) + " (more than " + number_text(kConstraintTolerance) +
                         ")");
    }
    const double coupled = maximal::max_constraint_violation(model_, state);
    if (!(coupled <= kConstraintTolerance))
      throw InputError("maximal state: the bodies violate a joint coupling by " +
                       number_text(coupled) + " (more than " + number_text(kConstraintTolerance) +
                       ")");
    data_ = maximal::Data(model_, state);
    data_.state = std::move(state);  // as given: a state read back sets the same bits
    std::fill(last_q_.begin(), last_q_.end(), Vec4::Zero());
  }

  double energy() const override { return maximal::energy(model_, data_.state); }
  bool has_constraint() const override { return true; }
  double constraint_violation() const override {
    return maximal::max_constraint_violation(model_, data_.state);
  }
  // z: v, omega of every body and the joints' lambda (maximal::residual_blocks); delta: 12
  // per body (maximal::retract_state); u: the input joints' generalised forces at t_k.
  // Without contacts and limits: their rows are not in the residual's blocks yet (docs/contact.md).
  bool has_residual() const override { return !model_.has_inequalities(); }
  ResidualPoint residual_point(double t_k, double) const override {
    ResidualPoint at;
    at.z = maximal::inspect::warm_start(model_, data_);
    at.delta = Eigen::VectorXd::Zero(12 * model_.num_bodies());
    at.u = Eigen::VectorXd::Zero(Eigen::Index(input_joints_.size()));
    if (controls_) {
      eval_into(controls_->inner(), t_k, u_);
      at.u = u_;
    }
    return at;
  }
  void residual(double t_k, double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    if (at.u.size() != Eigen::Index(input_joints_.size()))
      throw InputError("maximal residual: u has " + std::to_string(at.u.size()) +
                       " entries for " + std::to_string(input_joints_.size()) + " input joints");
    maximal::Data data = data_;
    data.state = maximal::retract_state(data_.state, at.delta);
    apply_inputs(at.u, data);
    set_targets(t_k + dt, data);
    if (!jacobians) {
      out.r = maximal::residual(model_, data, dt, at.z);
      return;
    }
    maximal::ResidualBlocks blocks;
    maximal::residual_blocks(model_, data, dt, at.z, blocks);
    out.r = std::move(blocks.r);
    out.J_r_z = std::move(blocks.J_r_s);
    out.J_r_state = std::move(blocks.J_r_state);
    out.J_r_u.resize(out.r.size(), Eigen::Index(input_joints_.size()));
    for (std::size_t i = 0; i < input_joints_.size(); ++i)
      out.J_r_u.col(Eigen::Index(i)) =
          input_rate(i, at.u[Eigen::Index(i)]) * blocks.J_r_u.col(input_joints_[i]);
  }

  // The step solved in a copy of the workspace, then the implicit-function theorem on its
  // residual: ds = -J_s^-1 (J_state ddelta + J_u du), ddelta in the chart of
  // retract_state, which is the state chart's (x + dx, q exp(dphi), v + dv, omega + domega).
  // The next state is x_kp1 = x_k + dt v_kp1, q_kp1 = q_k f(omega_kp1) (eq. (32)) and the
  // velocities s: so dx_kp1 = dx_k + dt dv_kp1, dphi_kp1 = R(f)^T dphi_k + dt Phi domega_kp1
  // (maximal::rotation_update_map), and the velocity rows are ds's.
  // With contacts, at the relaxation kappa of StepOptions::contact_relaxation (> 0), where
  // the step is smooth: the implicit-function theorem on maximal::relaxed_residual_blocks
  // (docs/contact.md, Derivatives through contact). Joint limits and restitution have none.
  bool has_step_derivatives() const override {
    return !model_.has_inequalities() ||
           (options_.contact_relaxation > 0.0 && model_.topology().limit_joint.empty() &&
            !model_.has_restitution());
  }
  void step_derivatives(double t_k, double dt, std::span<const double> u_k, Eigen::MatrixXd& A,
                        Eigen::MatrixXd& B) const override {
    if (!has_step_derivatives()) {
      throw InputError(
          "maximal step derivatives: through contact they need the integrator's "
          "contact_relaxation > 0, and joint limits and restitution have none yet "
          "(docs/contact.md, Derivatives through contact)");
    }
    if (u_k.size() != input_joints_.size())
      throw InputError("maximal step derivatives: expected " +
                       std::to_string(input_joints_.size()) + " inputs, got " +
                       std::to_string(u_k.size()));
    maximal::Data start = data_;
    apply_inputs(Eigen::Map<const Eigen::VectorXd>(u_k.data(), Eigen::Index(u_k.size())), start);
    set_targets(t_k + dt, start);
    maximal::Data next = start;
    maximal::StepOptions options = options_;
    options.dt = dt;
    const maximal::StepStatus st = maximal::step(model_, next, options);
    if (!st.ok())
      throw SolverError("maximal step derivatives: the step did not converge (residual " +
                        number_text(st.newton.residual_norm) + ")");
    const Eigen::VectorXd s = maximal::inspect::warm_start(model_, next);
    maximal::ResidualBlocks blocks;
    if (model_.contact_points().empty()) {
      maximal::residual_blocks(model_, start, dt, s, blocks);
    } else {
      maximal::relaxed_residual_blocks(model_, start, dt, options.contact_relaxation,
                                       options.contact_compliance, s,
                                       maximal::inspect::contact_unknowns(model_, next), blocks);
    }
    // Rank-revealing: a loop closed by a revolute joint has redundant rows, whose
    // multipliers are not unique; the velocities' derivatives are (the least-norm solve).
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> solver(blocks.J_r_s);
    solver.setThreshold(1e-10);
    const Eigen::MatrixXd ds_dx = -solver.solve(blocks.J_r_state);
    Eigen::MatrixXd J_u(blocks.J_r_s.rows(), Eigen::Index(input_joints_.size()));
    for (std::size_t i = 0; i < input_joints_.size(); ++i)
      J_u.col(Eigen::Index(i)) = input_rate(i, u_k[i]) * blocks.J_r_u.col(input_joints_[i]);
    const Eigen::MatrixXd ds_du =
        J_u.cols() > 0 ? Eigen::MatrixXd(-solver.solve(J_u)) : Eigen::MatrixXd(J_u.rows(), 0);
    const Eigen::Index nt = 12 * model_.num_bodies();
    A.setZero(nt, nt);
    B.setZero(nt, ds_du.cols());
    for (Eigen::Index b = 0; b < model_.num_bodies(); ++b) {
      const Eigen::Index row = 12 * b, v = 6 * b, w = 6 * b + 3;
      const BodyState& after = next.state[std::size_t(b)];
      const Quat f = data_.state[std::size_t(b)].q.inverse() * after.q;
      const Mat3 Phi = maximal::rotation_update_map(after.omega, dt);
      A.block(row, 0, 3, nt) = dt * ds_dx.middleRows(v, 3);
      A.block(row, row, 3, 3) += Mat3::Identity();
      A.block(row + 3, 0, 3, nt) = dt * Phi * ds_dx.middleRows(w, 3);
      A.block(row + 3, row + 3, 3, 3) += f.matrix().transpose();
      A.middleRows(row + 6, 3) = ds_dx.middleRows(v, 3);
      A.middleRows(row + 9, 3) = ds_dx.middleRows(w, 3);
      if (ds_du.cols() == 0) continue;  // rows of no columns point nowhere (UBSan)
      B.middleRows(row, 3) = dt * ds_du.middleRows(v, 3);
      B.middleRows(row + 3, 3) = dt * Phi * ds_du.middleRows(w, 3);
      B.middleRows(row + 6, 3) = ds_du.middleRows(v, 3);
      B.middleRows(row + 9, 3) = ds_du.middleRows(w, 3);
    }
  }

  void row(double t, std::span<double> out) const override {
    std::size_t c = 0;
    out[c++] = t;
    for (std::size_t b = 0; b < data_.state.size(); ++b) {
      const BodyState& s = data_.state[b];
      Vec4 q = s.q.q;
      // q and -q are the same rotation: keep each body's sign continuous.
      if (last_q_[b].dot(q) < 0.0) q = -q;
      last_q_[b] = q;
      for (int i = 0; i < 3; ++i) out[c++] = s.x[i];
      for (int i = 0; i < 4; ++i) out[c++] = q[i];
    }
    out[c++] = energy();
    out[c++] = constraint_violation();
    if (controls_) {
      eval_into(controls_->inner(), t, u_);
      for (Eigen::Index i = 0; i < u_.size(); ++i) out[c++] = u_[i];
    }
    if (!model_.contact_points().empty()) {
      double force = 0.0, penetration = 0.0;
      for (const maximal::ContactState& contact : data_.contact) {
        force += contact.normal_force;
        penetration = std::max(penetration, -contact.phi);
      }
      out[c++] = force;
      out[c++] = penetration;
      out[c++] = last_.active_contacts;
      out[c++] = last_.complementarity;
      out[c++] = last_.newton.iterations;
    }
    if (model_.has_restitution()) out[c++] = last_.impacts;
    for (const double f : data_.velocity_force) out[c++] = f;
    for (const int j : prescribed_joints_) out[c++] = data_.drive_force[std::size_t(j)];
  }

 private:
  // The prescribed joints' coordinates at t: each path's start plus its displacement.
  void set_targets(double t, maximal::Data& data) const {
    for (std::size_t i = 0; i < prescribed_joints_.size(); ++i) {
      double d = 0.0;
      if (paths_[i]) paths_[i]->eval(t, std::span<double>(&d, 1));
      data.joint_target[std::size_t(prescribed_joints_[i])] = path_start_[i] + d;
    }
  }
  // The joints' forces from the controls: gear * u, u clamped to the motor's range.
  void apply_inputs(const Eigen::Ref<const Eigen::VectorXd>& u, maximal::Data& data) const {
    for (std::size_t i = 0; i < input_joints_.size(); ++i) {
      const MaximalSetup::Motor& m = motors_[i];
      data.joint_input[std::size_t(input_joints_[i])] =
          m.gear * std::clamp(u[Eigen::Index(i)], m.lower, m.upper);
    }
  }
  // d(force)/du of input i at u: the gear inside the range, 0 where clamped.
  double input_rate(std::size_t i, double u) const {
    const MaximalSetup::Motor& m = motors_[i];
    return u > m.lower && u < m.upper ? m.gear : 0.0;
  }

  std::shared_ptr<const maximal::Model> keep_;
  const maximal::Model& model_;
  std::vector<int> input_joints_;
  std::vector<MaximalSetup::Motor> motors_;  // one per input joint
  std::unique_ptr<StepSignal> controls_;
  mutable Eigen::VectorXd u_;  // one entry per input joint, sized once
  std::vector<int> prescribed_joints_;  // in joint order
  std::vector<double> path_start_;      // their coordinates at the initial state
  std::vector<std::shared_ptr<const Signal>> paths_;  // their displacements, or null
  maximal::StepOptions options_;
  maximal::Data data_;
  sim::Layout layout_;
  std::vector<BodyState> saved_;
  double saved_last_dt_ = 0.0;
  std::vector<maximal::ContactState> saved_contact_;
  std::vector<double> saved_velocity_force_, saved_drive_force_;
  maximal::StepStatus saved_last_;
  maximal::StepStatus last_;  // of the last step that succeeded (the contact columns)
  mutable std::vector<Vec4> last_q_;
  std::vector<int> quaternion_at_;
};

}  // namespace

std::vector<std::string> velocity_force_columns(const maximal::Model& model) {
  const maximal::Topology& topo = model.topology();
  std::vector<std::string> names;
  for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k) {
    const int index = topo.velocity_constraint[k];
    const maximal::VelocityConstraint& c = model.velocity_constraints()[std::size_t(index)];
    std::string name = c.name.empty() ? "velocity" + std::to_string(index) : c.name;
    name += "_force";
    if (maximal::velocity_rows(c.type) > 1) name += std::to_string(topo.velocity_row[k]);
    names.push_back(std::move(name));
  }
  return names;
}

std::unique_ptr<System> make_maximal_system(const MaximalSetup& setup) {
  if (!setup.model) throw InputError("maximal system: no mechanism");
  if (static_cast<int>(setup.state0.size()) != setup.model->num_bodies())
    throw InputError("maximal system: the initial state does not match the mechanism");
  for (const int j : setup.input_joints) {
    if (j < 0 || j >= setup.model->num_joints())
      throw InputError("maximal system: input joint index " + std::to_string(j) + " out of range");
    if (maximal::joint_dofs(setup.model->joints()[std::size_t(j)].type) != 1)
      throw InputError("maximal system: input joint '" +
                       setup.model->joints()[std::size_t(j)].name +
                       "' must have one degree of freedom (revolute or prismatic)");
    if (setup.model->joints()[std::size_t(j)].prescribed)
      throw InputError("maximal system: input joint '" +
                       setup.model->joints()[std::size_t(j)].name +
                       "' is prescribed (its path, not a force, moves it)");
  }
  for (const auto& [name, path] : setup.prescribed) {
    const auto& joints = setup.model->joints();
    const std::string& named = name;  // a structured binding cannot be captured (C++17)
    const auto joint = std::find_if(joints.begin(), joints.end(),
                                    [&](const maximal::Joint& j) { return j.name == named; });
    if (joint == joints.end() || !joint->prescribed)
      throw InputError("maximal system: a path for '" + name + "', which is not a prescribed joint");
    if (!path || path->size() != 1)
      throw InputError("maximal system: the path of prescribed joint '" + name +
                       "' must be a signal of 1 component (its displacement)");
  }
  if ((setup.controls ? std::size_t(setup.controls->size()) : setup.input_joints.size()) !=
          setup.input_joints.size() ||
      (!setup.controls && !setup.input_joints.empty()))
    throw InputError("maximal system: the controls must have one component per input joint");
  if (!setup.motors.empty() && setup.motors.size() != setup.input_joints.size())
    throw InputError("maximal system: " + std::to_string(setup.motors.size()) + " motors for " +
                     std::to_string(setup.input_joints.size()) + " input joints");
  for (std::size_t i = 0; i < setup.motors.size(); ++i) {
    const MaximalSetup::Motor& m = setup.motors[i];
    const std::string& joint = setup.model->joints()[std::size_t(setup.input_joints[i])].name;
    if (!std::isfinite(m.gear) || m.gear == 0.0)
      throw InputError("maximal system: the motor of joint '" + joint +
                       "': gear must be finite and non-zero");
    if (std::isnan(m.lower) || std::isnan(m.upper) || !(m.lower < m.upper) ||
        m.lower == std::numeric_limits<double>::infinity() ||
        m.upper == -std::numeric_limits<double>::infinity())
      throw InputError("maximal system: the motor of joint '" + joint +
                       "': its control range needs lower < upper");
  }
  return std::make_unique<MaximalSystem>(setup);
}

}  // namespace marsden::sim
