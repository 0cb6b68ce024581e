// A generated system in full coordinates (nonholonomic/generated.hpp) as a sim::System:
// GNI and RATTLE (nonholonomic/integrators.hpp) and RK4 on the continuous equations, on the
// state (q, p), p the momentum (GNI: p+), or (q, qdot) for RK4.
#include <Eigen/Cholesky>
#include <cmath>
#include <string>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/nonholonomic/generated.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/sim/inputs.hpp"
#include "marsden/sim/nonholonomic.hpp"
#include "sim/full_coordinates.hpp"
#include "sim/state.hpp"

namespace marsden::sim {

namespace {

using nonholonomic::GeneratedNonholonomicModel;
using nonholonomic::nh_energy;
using nonholonomic::nh_rk_step;
using nonholonomic::NhMat;
using nonholonomic::NhVec;

using vehicle::InputVec;
using vehicle::kMaxInputs;

class GeneratedNhSystem final : public System {
 public:
  GeneratedNhSystem(const NonholonomicSetup& nh, Eigen::VectorXd u0)
      : model_(nh.full_coordinates),
        method_(nh.method),
        newton_(nh.newton),
        n_(model_->dof()),
        c_(model_->num_controls()),
        controls_(nh.controls ? nh.controls
                              : std::make_shared<const ConstantSignal>(std::move(u0))) {
    for (int i = 0; i < n_; ++i)
      if (model_->prescribed(i)) prescribed_.push_back(i);
    x_.q = NhVec::Map(nh.q0.data(), n_);
    const NhVec qdot = NhVec::Map(nh.qdot0.data(), n_);
    NhMat M;
    model_->mass(x_.q, M);
    x_.p = method_ == NonholonomicMethod::Rk4 ? qdot : NhVec(M * qdot);
    std::vector<std::string> q_names, rates, controls;
    for (int i = 0; i < n_; ++i) {
      q_names.push_back(model_->coordinate_name(i));
      rates.push_back(model_->coordinate_name(i));
      rates.back().append("_dot");
    }
    for (int i = 0; i < num_inputs(); ++i) {
      controls.emplace_back("u");  // appended: GCC 12 warns falsely on "u" + std::string
      controls.back().append(std::to_string(i));
    }
    layout_.add("", {"t"}, {});
    layout_.add("q", q_names, {std::size_t(n_)});
    layout_.add("qdot", rates, {std::size_t(n_)});
    layout_.add("energy", {"energy"}, {});
    layout_.add("constraint_violation", {"constraint_violation"}, {});
    layout_.add("controls", controls, {std::size_t(num_inputs())});
    sample();
  }

  const Layout& layout() const override { return layout_; }
  void checkpoint() override {
    saved_fresh_ = last_set_.fresh();
    saved_x_ = x_;
    saved_energy_ = energy_;
    saved_violation_ = violation_;
  }
  void rollback() override {
    last_set_.restore(saved_fresh_);
    x_ = saved_x_;
    energy_ = saved_energy_;
    violation_ = saved_violation_;
  }

  // q then qdot, named by the model's coordinates (their units).
  int state_size() const override { return 2 * n_; }
  std::vector<std::string> state_names() const override {
    std::vector<std::string> names;
    for (int i = 0; i < n_; ++i) names.push_back(model_->coordinate_name(i));
    for (int i = 0; i < n_; ++i) names.push_back(model_->coordinate_name(i) + "_dot");
    return names;
  }
  void get_state(std::span<double> x) const override {
    if (last_set_.get(x)) return;
    Eigen::Map<Eigen::VectorXd>(x.data(), n_) = x_.q;
    Eigen::Map<Eigen::VectorXd>(x.data() + n_, n_) = velocity();
  }
  // As a scene's initial state: the model's checks at (q, qdot), p = M(q) qdot.
  void set_state(std::span<const double> x) override {
    check_state("generated nonholonomic", state_names(), x);
    const NhVec q = NhVec::Map(x.data(), n_), qdot = NhVec::Map(x.data() + n_, n_);
    model_->check_at(q, "the state", &qdot);
    NhMat M;
    model_->mass(q, M);
    x_.q = q;
    x_.p = method_ == NonholonomicMethod::Rk4 ? qdot : NhVec(M * qdot);
    sample();
    last_set_.set(x);
  }

  StepStatus step(double t_k, double dt) override {
    last_set_.moved();
    controls_.begin_step(t_k);
    auto controls_at = [&](double ts, NhVec& u_t) {
      InputVec v;
      eval_into(controls_, ts, v);
      u_t = v.head(c_);
    };
    if (method_ == NonholonomicMethod::Rk4) {
      nh_rk_step(*model_, RungeKutta::Classic4, t_k, dt, controls_at, x_.q, x_.p);  // stage times
      sample();
      return {x_.q.allFinite() && x_.p.allFinite(), 0, 0.0, {}};
    }
    InputVec v;
    step_inputs([&](double ts, InputVec& out) { eval_into(controls_, ts, out); }, t_k, dt, v);
    NhVec q1 = x_.q + dt * velocity(), q_prescribed;
    prescribed_from(v, dt, q_prescribed);
    for (int i : prescribed_) q1[i] = q_prescribed[i];
    const NewtonStatus st = detail::full_coordinate_step(*model_, method_, newton_, dt,
                                                         NhVec(v.head(c_)), &q_prescribed, q1, x_);
    if (!st.converged) return {false, st.iterations, st.residual_norm, {}};
    sample();
    return {true, st.iterations, st.residual_norm, {}};
  }

  double energy() const override { return energy_; }
  bool has_constraint() const override { return true; }
  double constraint_violation() const override { return violation_; }
  void row(double t, std::span<double> out) const override {
    InputVec u;
    eval_into(controls_.inner(), t, u);
    const NhVec qdot = velocity();
    std::size_t c = 0;
    out[c++] = t;
    for (int i = 0; i < n_; ++i) out[c++] = x_.q[i];
    for (int i = 0; i < n_; ++i) out[c++] = qdot[i];
    out[c++] = energy_;
    out[c++] = violation_;
    for (int i = 0; i < num_inputs(); ++i) out[c++] = u[i];
  }

  // GNI: r(q_k+1) of its momentum jump; RATTLE: (a)-(b) in (q_k+1, lambda_k). Only the
  // Jacobian in z is provided. u: the controls and prescribed rates of step_inputs.
  bool has_residual() const override { return method_ != NonholonomicMethod::Rk4; }
  ResidualPoint residual_point(double t_k, double dt) const override {
    if (!has_residual()) return System::residual_point(t_k, dt);
    ResidualPoint at;
    InputVec v;
    step_inputs([&](double ts, InputVec& out) { eval_into(controls_.inner(), ts, out); }, t_k,
                dt, v);
    at.u = v;
    NhVec q1 = x_.q + dt * velocity(), q_prescribed;
    prescribed_from(v, dt, q_prescribed);
    for (int i : prescribed_) q1[i] = q_prescribed[i];
    const int m = method_ == NonholonomicMethod::Rattle ? model_->num_constraints() : 0;
    at.z = Eigen::VectorXd::Zero(n_ + m);
    at.z.head(n_) = q1;
    return at;
  }
  void residual(double t_k, double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    if (!has_residual()) return System::residual(t_k, dt, at, out, jacobians);
    if (at.u.size() != num_inputs())
      throw InputError("generated nonholonomic residual: u must have " +
                       std::to_string(num_inputs()) + " entries (controls, then prescribed "
                       "rates), got " + std::to_string(at.u.size()));
    const InputVec v = at.u;
    NhVec q_prescribed;
    prescribed_from(v, dt, q_prescribed);
    detail::full_coordinate_residual(*model_, method_, x_, dt, NhVec(v.head(c_)), &q_prescribed,
                                     at, out, jacobians, "generated nonholonomic");
  }

 private:
  int num_inputs() const { return c_ + static_cast<int>(prescribed_.size()); }

  // The inputs of the step from t_k: the controls at full_control_time, then the prescribed
  // rates at the midpoint (q_k+1 = q_k + dt rate, the midpoint rule).
  template <class Eval>
  void step_inputs(Eval&& eval, double t_k, double dt, InputVec& v) const {
    InputVec mid;
    eval(t_k + 0.5 * dt, mid);
    eval(detail::full_control_time(method_, t_k, dt), v);
    v.tail(v.size() - c_) = mid.tail(mid.size() - c_);
  }
  // q_k+1 of the prescribed coordinates: q_k + dt times their rate in v.
  void prescribed_from(const InputVec& v, double dt, NhVec& q_prescribed) const {
    q_prescribed = x_.q;
    for (std::size_t k = 0; k < prescribed_.size(); ++k)
      q_prescribed[prescribed_[k]] += dt * v[c_ + static_cast<int>(k)];
  }

  NhVec velocity() const {
    if (method_ == NonholonomicMethod::Rk4) return x_.p;
    NhMat M;
    model_->mass(x_.q, M);
    return Eigen::LLT<NhMat>(M).solve(x_.p);
  }

  void sample() {
    const NhVec qdot = velocity();
    energy_ = nh_energy(*model_, x_.q, qdot);
    NhMat mu;
    model_->constraint(x_.q, mu);
    violation_ = (mu * qdot).cwiseAbs().maxCoeff();
  }

  std::shared_ptr<const GeneratedNonholonomicModel> model_;
  NonholonomicMethod method_;
  NewtonOptions newton_;
  int n_, c_;
  std::vector<int> prescribed_;
  StepSignal controls_;
  Layout layout_;
  // p: momentum (GNI: p+, RATTLE: p), or qdot for RK4
  detail::FullCoordinateState x_, saved_x_;
  double energy_ = 0.0, violation_ = 0.0, saved_energy_ = 0.0, saved_violation_ = 0.0;
  LastSetState last_set_;
  bool saved_fresh_ = false;
};

}  // namespace

std::unique_ptr<System> make_generated_nonholonomic_system(const NonholonomicSetup& setup) {
  const auto& model = setup.full_coordinates;
  if (!model) throw InputError("generated nonholonomic system: no model");
  const int n = model->dof();
  int inputs = model->num_controls();
  for (int i = 0; i < n; ++i) inputs += model->prescribed(i) ? 1 : 0;
  if (inputs > kMaxInputs)
    throw InputError("generated nonholonomic system: " + std::to_string(inputs) +
                     " inputs (controls and prescribed rates), at most " +
                     std::to_string(kMaxInputs));
  if (static_cast<int>(setup.q0.size()) != n || static_cast<int>(setup.qdot0.size()) != n)
    throw InputError("generated nonholonomic system: initial_state q and qdot must have " +
                     std::to_string(n) + " entries (got " + std::to_string(setup.q0.size()) +
                     " and " + std::to_string(setup.qdot0.size()) + ")");
  if ((setup.controls ? setup.controls->size() : inputs) != inputs)
    throw InputError("generated nonholonomic system: controls must have " +
                     std::to_string(inputs) + " entries (" +
                     std::to_string(model->num_controls()) +
                     " forces, then one rate per prescribed coordinate), got " +
                     std::to_string(setup.controls->size()));
  if (setup.method != NonholonomicMethod::Gni && setup.method != NonholonomicMethod::Rattle &&
      setup.method != NonholonomicMethod::Rk4)
    throw InputError("generated nonholonomic system: method " + method_name(setup.method) +
                     " is not available; use gni, rattle or rk4");
  if (setup.method == NonholonomicMethod::Rk4 && inputs != model->num_controls())
    throw InputError("generated nonholonomic system: method rk4 does not take prescribed "
                     "coordinates; use gni or rattle");
  const NhVec qdot0 = NhVec::Map(setup.qdot0.data(), n);
  model->check_at(NhVec::Map(setup.q0.data(), n), "the initial state", &qdot0);
  return std::make_unique<GeneratedNhSystem>(setup, Eigen::VectorXd::Zero(inputs));
}

}  // namespace marsden::sim
