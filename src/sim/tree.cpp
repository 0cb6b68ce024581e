#include "marsden/sim/tree.hpp"

#include <Eigen/LU>
#include <optional>
#include <string>

#include "marsden/error.hpp"
#include "marsden/solve/rk.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/tree/dynamics.hpp"
#include "sim/state.hpp"

namespace marsden::sim {
namespace {

using tree::MatX;
using tree::Model;
using tree::VecX;

// The prescribed coordinates' values, velocities and accelerations at time t: q0 plus the
// signals' displacements, differentiated by central differences (signals are given as
// values only).
class PrescribedPath {
 public:
  explicit PrescribedPath(const TreeSetup& tree) : tree_(tree) {}

  double displacement(std::size_t i, double t) const {
    if (!tree_.prescribed[i]) return 0.0;
    double s = 0.0;
    tree_.prescribed[i]->eval(t, std::span<double>(&s, 1));
    return s;
  }
  // Writes the prescribed entries of q (and qd, qdd if non-null: qdd is num_prescribed long).
  void at(double t, VecX& q, VecX* qd, VecX* qdd) const {
    const Model& model = *tree_.model;
    for (std::size_t i = 0; i < model.prescribed_coords().size(); ++i) {
      const int c = model.prescribed_coords()[i];
      const double s = displacement(i, t);
      q[c] = tree_.q0[c] + s;
      if (!tree_.prescribed[i]) {
        if (qd) (*qd)[c] = tree_.qd0[c];
        if (qdd) (*qdd)[static_cast<Eigen::Index>(i)] = 0.0;
        continue;
      }
      if (qd) (*qd)[c] = (displacement(i, t + kDv) - displacement(i, t - kDv)) / (2.0 * kDv);
      if (qdd)
        (*qdd)[static_cast<Eigen::Index>(i)] =
            (displacement(i, t + kDa) - 2.0 * s + displacement(i, t - kDa)) / (kDa * kDa);
    }
  }

 private:
  // Steps balancing truncation against round-off for signals of order one.
  static constexpr double kDv = 1e-6, kDa = 1e-4;
  const TreeSetup& tree_;
};

// A tree scene as a sim::System. The variational integrators (midpoint, Galerkin) carry
// (t, q, p), RK4 carries (q, qd); the other of qd and p, the energy and the constraint
// residual are completed after each step (velocity_from_momentum for the VIs). Prescribed
// coordinates follow their path.
class TreeSystem final : public sim::System {
  // The largest constraint violation set_state accepts (m or rad).
  static constexpr double kConstraintTolerance = 1e-9;

 public:
  explicit TreeSystem(const TreeSetup& ts)
      : ts_(ts),
        model_(*ts_.model),
        data_(model_, ts_.memory_limit),
        path_(ts_),
        midpoint_(ts.method == TreeMethod::Midpoint),
        variational_(ts.method != TreeMethod::Rk4),
        u_(VecX::Zero(model_.num_inputs())),
        qdd_prescribed_(model_.num_prescribed()),
        q_prescribed_(model_.num_prescribed()),
        M_dd_(model_.num_dynamic(), model_.num_dynamic()),
        rhs_(model_.num_dynamic()),
        qd_d_(model_.num_dynamic()),
        lu_(model_.num_dynamic()),
        y_(2 * model_.num_coords()),
        q_stage_(model_.num_coords()),
        v_stage_(model_.num_coords()),
        rk_(2 * model_.num_coords()) {
    const int n = model_.num_coords(), nd = model_.num_dynamic(), nu = model_.num_inputs();
    std::vector<std::string> q, qd, p;
    for (const auto& c : model_.coords()) q.push_back(c.name);
    for (const auto& c : model_.coords()) qd.push_back("qd_" + c.name);
    for (int i : model_.dynamic_coords()) p.push_back("p_" + model_.coords()[i].name);
    layout_.add("", {"t"}, {});
    layout_.add("q", q, {std::size_t(n)});
    layout_.add("qd", qd, {std::size_t(n)});
    layout_.add("p", p, {std::size_t(nd)});
    layout_.add("energy", {"energy"}, {});
    layout_.add("constraint_residual", {"constraint_residual"}, {});
    layout_.add("controls", numbered("u", nu), {std::size_t(nu)});

    if (ts.method == TreeMethod::Galerkin) {
      galerkin_.emplace(model_, ts_.galerkin);
      u_nodes_.resize(nu, galerkin_->tableau.c.size());
    }
    qd_ = ts.qd0;
    x_.q = ts.q0;
    path_.at(0.0, x_.q, &qd_, nullptr);
    start(0.0);
  }

  const sim::Layout& layout() const override { return layout_; }
  // The VIs' warm start (the midpoint's last velocities and multipliers, in Data; the
  // Galerkin step's last polynomial) is kept too, so that a step retried after rollback()
  // repeats the first to the bit.
  void checkpoint() override {
    saved_fresh_ = last_set_.fresh();
    if (galerkin_) saved_galerkin_warm_ = galerkin_->warm;
    saved_x_ = x_;
    saved_qd_ = qd_;
    saved_energy_ = energy_;
    saved_residual_ = residual_;
    saved_warm_ = {data_.q_prev_end, data_.v_prev,    data_.v_prev2,
                   data_.lambda,     data_.have_prev, data_.have_prev2};
  }
  void rollback() override {
    last_set_.restore(saved_fresh_);
    if (galerkin_) galerkin_->warm = saved_galerkin_warm_;
    x_ = saved_x_;
    qd_ = saved_qd_;
    energy_ = saved_energy_;
    residual_ = saved_residual_;
    data_.q_prev_end = saved_warm_.q_prev_end;
    data_.v_prev = saved_warm_.v_prev;
    data_.v_prev2 = saved_warm_.v_prev2;
    data_.lambda = saved_warm_.lambda;
    data_.have_prev = saved_warm_.have_prev;
    data_.have_prev2 = saved_warm_.have_prev2;
  }

  sim::StepStatus step(double t, double dt) override {
    last_set_.moved();
    NewtonStatus status{true, 0, 0.0};
    if (midpoint_) {
      path_.at(t + dt, q_prescribed_next_, nullptr, nullptr);
      for (int i = 0; i < model_.num_prescribed(); ++i)
        q_prescribed_[i] =
            q_prescribed_next_[model_.prescribed_coords()[static_cast<std::size_t>(i)]];
      next_ = x_;
      // The inputs act at the quadrature point of the discrete Lagrangian (tree/midpoint.hpp).
      status = tree::midpoint_step(model_, data_, ts_.midpoint, dt, x_,
                                   input_at(t, t + ts_.midpoint.alpha * dt), q_prescribed_, next_);
      if (!status.converged) return {false, status.iterations, status.residual_norm, {}};
      x_ = next_;
    } else if (galerkin_) {
      // The inputs act at the quadrature nodes t + c_i dt (tree/galerkin.hpp).
      const tree::VecX& c = galerkin_->tableau.c;
      for (Eigen::Index i = 0; i < c.size(); ++i) u_nodes_.col(i) = input_at(t, t + c[i] * dt);
      next_ = x_;
      status = tree::galerkin_step(model_, data_, *galerkin_, ts_.galerkin, dt, x_, u_nodes_, next_);
      if (!status.converged) return {false, status.iterations, status.residual_norm, {}};
      x_ = next_;
    } else {
      rk4(t, dt);
    }
    x_.t = t + dt;
    complete(t + dt);
    return {true, status.iterations, status.residual_norm, {}};
  }

  // The midpoint VI's step equations r_a of tree eq. (21) (tree::midpoint_residual_blocks):
  // z = (q_kp1, lambda_k), delta = increments of (q_k, p_k), u = the inputs at the
  // quadrature point. Models with prescribed coordinates have no residual blocks yet.
  // The Galerkin VI's step equations (tree::galerkin_residual): z = (q^1..q^s, lambda),
  // u = the inputs at the quadrature nodes, node after node; d/dz only (no optimal control).
  bool has_residual() const override {
    return (midpoint_ && model_.num_prescribed() == 0) || galerkin_.has_value();
  }
  ResidualPoint residual_point(double t_k, double dt) const override {
    if (!has_residual()) return System::residual_point(t_k, dt);
    if (galerkin_) {
      ResidualPoint at;
      at.z = galerkin_->z;
      at.delta = VecX::Zero(2 * model_.num_coords());
      const VecX& c = galerkin_->tableau.c;
      const Eigen::Index nu = model_.num_inputs();
      at.u.resize(nu * c.size());
      for (Eigen::Index i = 0; i < c.size(); ++i)
        at.u.segment(i * nu, nu) = input_at(t_k, t_k + c[i] * dt);
      return at;
    }
    const Eigen::Index n = model_.num_coords(), m = model_.num_constraint_rows();
    ResidualPoint at;
    at.z.resize(n + m);
    at.z << x_.q, (data_.lambda.size() == m ? VecX(data_.lambda) : VecX::Zero(m));
    at.delta = VecX::Zero(2 * n);
    at.u = input_at(t_k, t_k + ts_.midpoint.alpha * dt);
    return at;
  }
  void residual(double t_k, double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    if (!has_residual()) return System::residual(t_k, dt, at, out, jacobians);
    if (galerkin_) return galerkin_residual_blocks(dt, at, out, jacobians);
    const Eigen::Index n = model_.num_coords(), m = model_.num_constraint_rows();
    if (at.z.size() != n + m || at.delta.size() != 2 * n || at.u.size() != model_.num_inputs())
      throw InputError("tree residual: z, delta or u has the wrong size");
    tree::TreeState x_k = x_;
    x_k.q += at.delta.head(n);
    x_k.p += at.delta.tail(n);
    tree::Data data(model_, ts_.memory_limit);
    tree::MidpointResidualBlocks blocks;
    tree::midpoint_residual_blocks(model_, data, ts_.midpoint, dt, x_k, at.u, at.z.head(n),
                                   x_k.p, at.z.tail(m), blocks);
    out.r = blocks.r_a;
    if (!jacobians) return;
    out.J_r_z.resize(n + m, n + m);
    out.J_r_z << blocks.Ja_qkp1, blocks.Ja_lambda;
    out.J_r_state.resize(n + m, 2 * n);
    out.J_r_state << blocks.Ja_qk, blocks.Ja_pk;
    out.J_r_u = blocks.Ja_u;
  }

  // The midpoint VI steps (q, p); the state is (q, qd) with p = dL/dqd(q, qd) (the
  // Legendre transform set_state applies and get_state inverts). So
  //   A = V_kp1 D P_k, B = V_kp1 D_u,
  // with D, D_u the step's derivatives in (q, p) (tree::midpoint_step_derivatives),
  // P_k = [I 0; L_qv^T M] at (q_k, qd_k) and V_kp1 = [I 0; -M^-1 L_qv^T M^-1] at
  // (q_kp1, qd_kp1), since dp = L_qv^T dq + M dqd. Models with prescribed coordinates
  // (whose paths move the state in time) are differenced instead.
  bool has_step_derivatives() const override {
    return midpoint_ && model_.num_prescribed() == 0;
  }
  void step_derivatives(double t_k, double dt, std::span<const double> u_k, MatX& A,
                        MatX& B) const override {
    if (!has_step_derivatives()) return System::step_derivatives(t_k, dt, u_k, A, B);
    const Eigen::Index n = model_.num_coords(), nu = model_.num_inputs();
    if (Eigen::Index(u_k.size()) != nu)
      throw InputError("tree step derivatives: expected " + std::to_string(nu) +
                       " inputs, got " + std::to_string(u_k.size()));
    const VecX u = Eigen::Map<const VecX>(u_k.data(), nu);
    tree::Data data(model_, ts_.memory_limit);
    tree::TreeState next;
    const VecX none;
    const NewtonStatus status = tree::midpoint_step(model_, data, ts_.midpoint, dt, x_, u, none, next);
    if (!status.converged)
      throw SolverError("tree step derivatives: the step from t = " + time_text(t_k) +
                        " did not converge (residual " + number_text(status.residual_norm) + ")");
    tree::StepDerivatives D;
    tree::midpoint_step_derivatives(model_, data, ts_.midpoint, dt, x_, u, none, next, D);

    tree::lagrangian_terms(model_, data, x_.q, qd_, true);
    MatX P = MatX::Zero(2 * n, 2 * n);
    P.topLeftCorner(n, n).setIdentity();
    P.bottomLeftCorner(n, n) = data.L_qv.transpose();
    P.bottomRightCorner(n, n) = data.M;

    // qd_kp1 = M^-1 p_kp1 by the articulated-body recursion, which needs no Lagrangian
    // terms, so that those at q_kp1 are evaluated once, at (q_kp1, qd_kp1).
    VecX qd_kp1;
    tree::solve_mass_matrix(model_, data, next.q, VecX::Zero(n), next.p, qd_kp1);
    tree::lagrangian_terms(model_, data, next.q, qd_kp1, true);
    const Eigen::PartialPivLU<MatX> M_kp1(data.M);
    MatX V = MatX::Zero(2 * n, 2 * n);
    V.topLeftCorner(n, n).setIdentity();
    V.bottomRightCorner(n, n) = M_kp1.inverse();
    V.bottomLeftCorner(n, n) = -V.bottomRightCorner(n, n) * data.L_qv.transpose();

    MatX D_x(2 * n, 2 * n), D_u(2 * n, nu);
    D_x << D.dq_dq, D.dq_dp, D.dp_dq, D.dp_dp;
    D_u << D.dq_du, D.dp_du;
    A = V * D_x * P;
    B = V * D_u;
  }

  // q then qd of every coordinate (rad or m, rad/s or m/s), as a scene's initial state.
  // Prescribed coordinates start from the values given and follow their paths from the
  // next step on.
  int state_size() const override { return 2 * model_.num_coords(); }
  std::vector<std::string> state_names() const override {
    std::vector<std::string> names;
    for (const tree::Coordinate& c : model_.coords()) names.push_back(c.name);
    for (const tree::Coordinate& c : model_.coords()) names.push_back("qd_" + c.name);
    return names;
  }
  void get_state(std::span<double> x) const override {
    if (last_set_.get(x)) return;  // the VIs' qd is completed from p: report what was set
    const Eigen::Index n = model_.num_coords();
    Eigen::Map<VecX>(x.data(), n) = x_.q;
    Eigen::Map<VecX>(x.data() + n, n) = qd_;
  }
  // The VIs take p from (q, qd) by the Legendre transform, as at the start of a run, and
  // forget their warm starts.
  void set_state(std::span<const double> x) override {
    const std::vector<std::string> names = state_names();
    check_state("tree", names, x);
    const Eigen::Index n = model_.num_coords();
    const VecX q = Eigen::Map<const VecX>(x.data(), n), qd = Eigen::Map<const VecX>(x.data() + n, n);
    // Checked in a workspace of their own, so that a refused state leaves this one as it was.
    tree::Data check(model_, ts_.memory_limit);
    tree::check_generated_constraints(model_, check, q);
    const double violation = tree::max_constraint_violation(model_, check, q);
    if (violation > kConstraintTolerance)
      throw InputError("tree state: q is off the model's constraints (largest violation " +
                       number_text(violation) + ", more than " +
                       number_text(kConstraintTolerance) + ")");
    data_ = tree::Data(model_, ts_.memory_limit);
    if (galerkin_) galerkin_.emplace(model_, ts_.galerkin);
    x_.q = q;
    qd_ = qd;
    start(x_.t);
    last_set_.set(x);
  }

  double energy() const override { return energy_; }
  bool has_constraint() const override { return model_.num_constraint_rows() > 0; }
  double constraint_violation() const override { return residual_; }
  void row(double t, std::span<double> out) const override {
    const VecX& uc = controls_at(t);
    const int n = model_.num_coords(), nd = model_.num_dynamic();
    std::size_t c = 0;
    out[c++] = t;
    for (int i = 0; i < n; ++i) out[c++] = x_.q[i];
    for (int i = 0; i < n; ++i) out[c++] = qd_[i];
    for (int i = 0; i < nd; ++i) out[c++] = x_.p[i];
    out[c++] = energy_;
    out[c++] = residual_;
    for (int i = 0; i < uc.size(); ++i) out[c++] = uc[i];
  }

 private:
  void galerkin_residual_blocks(double dt, const ResidualPoint& at, ResidualBlocks& out,
                                bool jacobians) const {
    const Eigen::Index n = model_.num_coords(), nu = model_.num_inputs();
    const Eigen::Index nodes = galerkin_->tableau.c.size();
    if (at.z.size() != galerkin_->z.size() || at.delta.size() != 2 * n ||
        at.u.size() != nu * nodes)
      throw InputError("tree galerkin residual: z needs " + std::to_string(galerkin_->z.size()) +
                       " entries, delta " + std::to_string(2 * n) + " and u " +
                       std::to_string(nu * nodes) + " (the inputs at each quadrature node)");
    tree::TreeState x_k = x_;
    x_k.q += at.delta.head(n);
    x_k.p += at.delta.tail(n);
    const MatX u_nodes = Eigen::Map<const MatX>(at.u.data(), nu, nodes);
    tree::Data data(model_, ts_.memory_limit);
    tree::GalerkinWorkspace ws(model_, ts_.galerkin);
    tree::galerkin_residual(model_, data, ws, ts_.galerkin, dt, x_k, u_nodes, at.z, out.r,
                            jacobians ? &out.J_r_z : nullptr);
    out.J_r_state.resize(out.r.size(), 0);
    out.J_r_u.resize(out.r.size(), 0);
  }

  // The inputs at time t for the output rows.
  const VecX& controls_at(double t) const {
    if (ts_.controls) eval_into(*ts_.controls, t, u_);
    return u_;
  }
  // The inputs a step from t_k samples at time t: t itself, or t_k under a zero-order hold.
  const VecX& input_at(double t_k, double t) const {
    return controls_at(ts_.controls && ts_.controls->zero_order_hold() ? t_k : t);
  }

  // The start of a run (or a restart) from x_.q, qd_ at time t, their prescribed entries as
  // they are: p by the Legendre transform for the VIs.
  void start(double t) {
    tree::check_generated_constraints(model_, data_, x_.q);
    if (variational_) {
      x_ = tree::midpoint_initial_state(model_, data_, t, x_.q, qd_);
    } else {
      x_.t = t;
      x_.p = VecX::Zero(model_.num_dynamic());
    }
    complete(t, false);
    q_prescribed_next_ = x_.q;
  }

  // Completes qd and p (whichever the method does not carry), the energy and the residual;
  // with on_path, the prescribed coordinates' q and qd first from their paths at t.
  void complete(double t, bool on_path = true) {
    if (on_path) path_.at(t, x_.q, &qd_, nullptr);
    const std::vector<int>& dyn = model_.dynamic_coords();
    if (variational_) {
      velocity_from_momentum();
    } else {
      tree::lagrangian_terms(model_, data_, x_.q, qd_, false);
      for (std::size_t a = 0; a < dyn.size(); ++a) x_.p[Eigen::Index(a)] = data_.L_v[dyn[a]];
    }
    energy_ = tree::energy(model_, data_, x_.q, qd_);
    residual_ = tree::max_constraint_violation(model_, data_, x_.q);
  }

  // Velocities of the dynamic coordinates from their momenta at q (the prescribed entries
  // of qd given): L is quadratic in qd, so p = M_dd qd_d + M_dk qd_k. In place, in the
  // workspace sized by the constructor.
  void velocity_from_momentum() {
    tree::lagrangian_terms(model_, data_, x_.q, qd_, true);
    const std::vector<int>& dyn = model_.dynamic_coords();
    const Eigen::Index nd = static_cast<Eigen::Index>(dyn.size());
    rhs_ = x_.p;
    for (Eigen::Index a = 0; a < nd; ++a) {
      for (Eigen::Index b = 0; b < nd; ++b) M_dd_(a, b) = data_.M(dyn[a], dyn[b]);
      for (int k : model_.prescribed_coords()) rhs_[a] -= data_.M(dyn[a], k) * qd_[k];
    }
    lu_.compute(M_dd_);
    qd_d_.noalias() = lu_.solve(rhs_);
    for (Eigen::Index a = 0; a < nd; ++a) qd_[dyn[a]] = qd_d_[a];
  }

  // Classical RK4 (sim/rk.hpp) on (q, qd) with the inputs sampled at the stage times: the
  // dynamic entries integrate, the prescribed ones follow the path. In place, in buffers
  // sized by the constructor.
  void rk4(double t, double dt) {
    const Eigen::Index n = x_.q.size();
    y_ << x_.q, qd_;
    rk_step_in_place(
        RungeKutta::Classic4, t, dt, y_,
        [&](double ts, const VecX& s, VecX& ds) {
          q_stage_ = s.head(n);
          v_stage_ = s.tail(n);
          path_.at(ts, q_stage_, &v_stage_, &qdd_prescribed_);
          tree::accelerations(model_, data_, q_stage_, v_stage_, input_at(t, ts), qdd_prescribed_);
          ds << v_stage_, data_.qdd;
        },
        rk_);
    x_.q = y_.head(n);
    qd_ = y_.tail(n);
    path_.at(t + dt, x_.q, &qd_, nullptr);
  }

  TreeSetup ts_;
  const Model& model_;
  tree::Data data_;
  PrescribedPath path_;
  bool midpoint_, variational_;
  std::optional<tree::GalerkinWorkspace> galerkin_;
  tree::GalerkinWorkspace::WarmStart saved_galerkin_warm_;
  MatX u_nodes_;  // the inputs at the Galerkin quadrature nodes
  sim::Layout layout_;
  tree::TreeState x_, saved_x_;
  struct {
    VecX q_prev_end, v_prev, v_prev2, lambda;
    bool have_prev = false, have_prev2 = false;
  } saved_warm_;
  VecX qd_, saved_qd_, q_prescribed_next_;
  double energy_ = 0.0, residual_ = 0.0, saved_energy_ = 0.0, saved_residual_ = 0.0;
  mutable VecX u_;
  VecX qdd_prescribed_, q_prescribed_;
  tree::TreeState next_;
  MatX M_dd_;
  VecX rhs_, qd_d_;
  Eigen::PartialPivLU<MatX> lu_;
  VecX y_, q_stage_, v_stage_;  // the RK4 state and a stage's (q, qd)
  RkWorkspace<VecX> rk_;
  LastSetState last_set_;
  bool saved_fresh_ = false;
};

}  // namespace

std::unique_ptr<System> make_tree_system(const TreeSetup& setup) {
  if (!setup.model) throw InputError("tree system: no model");
  const Model& model = *setup.model;
  const int n = model.num_coords();
  if (setup.q0.size() != n || setup.qd0.size() != n ||
      setup.prescribed.size() != static_cast<std::size_t>(model.num_prescribed()) ||
      (setup.controls && setup.controls->size() != model.num_inputs()))
    throw InputError(
        "tree system: initial state, prescribed or control sizes do not match the model");
  for (std::size_t i = 0; i < setup.prescribed.size(); ++i)
    if (setup.prescribed[i] && setup.prescribed[i]->size() != 1)
      throw InputError("tree system: the displacement of kinematic coordinate '" +
                       model.coords()[std::size_t(model.prescribed_coords()[i])].name +
                       "' must be a signal of one component, got " +
                       std::to_string(setup.prescribed[i]->size()));
  return std::make_unique<TreeSystem>(setup);
}

}  // namespace marsden::sim
