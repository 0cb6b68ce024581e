#include "vehicle/stepper.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "baseline/baselines.hpp"
#include "marsden/error.hpp"
#include "marsden/lie/tangent.hpp"

namespace marsden::vehicle {

ConstantInputs::ConstantInputs(const InputVec& gamma, const InputVec& u)
    : zero_(false), value_{gamma, u} {}

void ConstantInputs::sample(double, StepInputs& in) const {
  if (zero_) {
    in.gamma.setZero();
    in.u.setZero();
    return;
  }
  if (value_.gamma.size() != in.gamma.size() || value_.u.size() != in.u.size())
    throw InputError("constant vehicle inputs: gamma has " + std::to_string(value_.gamma.size()) +
                     " and u " + std::to_string(value_.u.size()) + " entries; the model takes " +
                     std::to_string(in.gamma.size()) + " shape inputs and " +
                     std::to_string(in.u.size()) + " controls");
  in = value_;
}

namespace {

template <class G>
class VariationalStepper final : public VehicleStepper<G> {
 public:
  VariationalStepper(std::shared_ptr<const HolonomicModel<G>> model, HolonomicOptions<G> opt)
      : model_(std::move(model)), opt_(opt) {}

  void reset(const VehicleState<G>& s0, double dt) override {
    if (!(dt > 0.0)) throw InputError("time step must be > 0");
    this->dt_ = dt;
    t_ = s0.t;
    g_ = s0.g;
    xi_km1_ = initial_xi_km1(*model_, opt_, dt, s0.xi);
    history_ = 1;
  }

  NewtonStatus step(const VehicleInputs& inputs) override {
    baseline::sample_inputs(*model_, inputs, t_, in_);
    // Quadratic extrapolation of the velocity history as Newton's starting guess.
    typename G::Tangent xi_k = history_ >= 3 ? typename G::Tangent(3.0 * xi_km1_ - 3.0 * xi_km2_ + xi_km3_)
                             : history_ == 2 ? typename G::Tangent(2.0 * xi_km1_ - xi_km2_)
                                             : xi_km1_;
    G g_kp1;
    const NewtonStatus st =
        holonomic_step(*model_, opt_, this->dt_, t_, g_, xi_km1_, in_, xi_k, g_kp1);
    if (st.converged) {
      g_ = g_kp1;
      xi_km3_ = xi_km2_;
      xi_km2_ = xi_km1_;
      xi_km1_ = xi_k;
      history_ = std::min(history_ + 1, 3);
      t_ += this->dt_;
    }
    return st;
  }

  void set_time(double t) override { t_ = t; }

  VehicleState<G> state() const override {
    return VehicleState<G>{
        t_, g_, model_->inertia_inv() * momentum_plus(*model_, opt_, this->dt_, xi_km1_)};
  }

  const typename G::Tangent* velocity_km1() const override {
    return history_ > 0 ? &xi_km1_ : nullptr;
  }

  void save() override { saved_ = {this->dt_, t_, g_, xi_km1_, xi_km2_, xi_km3_, history_}; }
  void restore() override {
    this->dt_ = saved_.dt;
    t_ = saved_.t;
    g_ = saved_.g;
    xi_km1_ = saved_.xi_km1;
    xi_km2_ = saved_.xi_km2;
    xi_km3_ = saved_.xi_km3;
    history_ = saved_.history;
  }

 private:
  struct Saved {
    double dt = 0.0, t = 0.0;
    G g;
    typename G::Tangent xi_km1, xi_km2, xi_km3;
    int history = 0;
  };
  Saved saved_;
  std::shared_ptr<const HolonomicModel<G>> model_;
  HolonomicOptions<G> opt_;
  double t_ = 0.0;
  G g_;
  typename G::Tangent xi_km1_, xi_km2_, xi_km3_;
  int history_ = 0;  // how many of xi_km1_, xi_km2_, xi_km3_ are valid
  StepInputs in_;
};

}  // namespace

template <class G>
std::unique_ptr<VehicleStepper<G>> make_stepper(Method method,
                                                std::shared_ptr<const HolonomicModel<G>> model,
                                                const HolonomicOptions<G>& options) {
  if (!model) throw InputError("vehicle stepper: no model");
  if (model->num_controls() > kMaxInputs || model->num_shape() > kMaxInputs)
    throw InputError("vehicle stepper: the model takes " + std::to_string(model->num_controls()) +
                     " controls and " + std::to_string(model->num_shape()) +
                     " shape inputs; a vehicle takes at most " + std::to_string(kMaxInputs) +
                     " of each (kMaxInputs, vehicle/controls.hpp)");
  switch (method) {
    case Method::VI: return std::make_unique<VariationalStepper<G>>(std::move(model), options);
    case Method::RK2: return baseline::make_explicit_rk<G>(std::move(model), 2);
    case Method::RK4: return baseline::make_explicit_rk<G>(std::move(model), 4);
    case Method::RK2Implicit:
      return baseline::make_implicit_midpoint<G>(std::move(model), options.newton);
    case Method::LieNewmark: return baseline::make_lie_newmark<G>(std::move(model));
  }
  throw InputError("unknown method");
}

#define MARSDEN_INSTANTIATE_STEPPER(G)                                                       \
  template std::unique_ptr<VehicleStepper<G>> make_stepper<G>(                              \
      Method, std::shared_ptr<const HolonomicModel<G>>, const HolonomicOptions<G>&);

MARSDEN_INSTANTIATE_STEPPER(SE2)
MARSDEN_INSTANTIATE_STEPPER(SE3)

}  // namespace marsden::vehicle
