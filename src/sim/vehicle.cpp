#include "marsden/sim/vehicle.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>
#include <string>
#include <type_traits>

#include "marsden/error.hpp"
#include "marsden/lie/quaternion.hpp"
#include "marsden/sim/inputs.hpp"
#include "sim/state.hpp"
#include "vehicle/stepper.hpp"

namespace marsden::sim {
namespace {

using vehicle::holonomic_residual;
using vehicle::HolonomicModel;
using vehicle::HolonomicResidual;
using vehicle::initial_xi_km1;
using vehicle::InputVec;
using vehicle::make_stepper;
using vehicle::Method;
using vehicle::spatial_momentum;
using vehicle::StepInputs;
using vehicle::vehicle_energy;
using vehicle::VehicleInputs;
using vehicle::VehicleState;
using vehicle::VehicleStepper;

// The vehicle's inputs from the scene's signals: a missing one is zero.
class SignalInputs final : public VehicleInputs {
 public:
  SignalInputs(const StepSignal* shape, const StepSignal* controls)
      : shape_(shape), controls_(controls) {}
  void sample(double t, StepInputs& in) const override {
    if (shape_)
      shape_->eval(t, std::span<double>(in.gamma.data(), std::size_t(in.gamma.size())));
    else
      in.gamma.setZero();
    if (controls_)
      controls_->eval(t, std::span<double>(in.u.data(), std::size_t(in.u.size())));
    else
      in.u.setZero();
  }

 private:
  const StepSignal* shape_;
  const StepSignal* controls_;
};

template <class G>
class VehicleSystem final : public System {
  static constexpr bool kSpatial = std::is_same_v<G, SE3>;
  static constexpr int n = G::kDim;
  using Tangent = typename G::Tangent;

 public:
  explicit VehicleSystem(const HolonomicSetup<G>& s)
      : setup_(s),
        stepper_(make_stepper<G>(s.method, s.model, s.options)),
        cur_(s.initial_state) {
    if constexpr (!kSpatial) heading_.value = cur_.g.angle();
    const int nu = s.controls ? s.controls->size() : 0, ns = s.shape ? s.shape->size() : 0;
    if (nu != s.model->num_controls() || ns != s.model->num_shape())
      throw InputError("vehicle: controls or shape signal size does not match the system");
    layout_.add("", {"t"}, {});
    if constexpr (kSpatial) {
      layout_.add("position", {"x", "y", "z"}, {3});
      layout_.add("quaternion", {"qw", "qx", "qy", "qz"}, {4});
      layout_.add("angular_velocity", {"wx", "wy", "wz"}, {3});
      layout_.add("linear_velocity", {"vx", "vy", "vz"}, {3});
    } else {
      // As the nonholonomic vehicles on SE(2) name them, so the player draws both alike.
      layout_.add("pose", {"theta", "x", "y"}, {3});
      layout_.add("body_velocity", {"omega", "v1", "v2"}, {3});
    }
    layout_.add("energy", {"energy"}, {});
    layout_.add("controls", numbered("u", nu), {std::size_t(nu)});
    layout_.add("shape", numbered("gamma", ns), {std::size_t(ns)});
    if (s.controls) controls_ = std::make_unique<StepSignal>(s.controls);
    if (s.shape) shape_ = std::make_unique<StepSignal>(s.shape);
  }

  const Layout& layout() const override { return layout_; }
  void checkpoint() override {
    saved_ = cur_;
    saved_restart_ = restart_;
    saved_heading_ = heading_;
    if (!restart_) stepper_->save();
  }
  // A step retried with the same length repeats the kept one to the bit; with another
  // length (a subdivision) the stepper restarts from the state: the VI re-derives its
  // velocity of the last interval from the body velocity, so the momentum carries over.
  void rollback() override {
    cur_ = saved_;
    restart_ = saved_restart_;
    heading_ = saved_heading_;
    if (!restart_) stepper_->restore();
  }

  // The VI applies the inputs as impulses at the node t_k (vehicles eq. (10)); the
  // Runge-Kutta baselines sample them at their stage times.
  StepStatus step(double t_k, double dt) override {
    // The VI starts (solving for xi_-1) inside a step, so a failed start is a failed step.
    if (restart_ || dt != stepper_->dt()) stepper_->reset(cur_, dt);
    restart_ = false;
    stepper_->set_time(t_k);  // the driver's t_0 + k dt samples the inputs
    if (controls_) controls_->begin_step(t_k);
    if (shape_) shape_->begin_step(t_k);
    const NewtonStatus st = stepper_->step(SignalInputs(shape_.get(), controls_.get()));
    if (st.converged) {
      cur_ = stepper_->state();
      if constexpr (!kSpatial)
        heading_.value += std::remainder(cur_.g.angle() - heading_.value, 2.0 * std::numbers::pi);
    }
    return StepStatus{st.converged, st.iterations, st.residual_norm, {}};
  }

  // SE(3): position, the unit quaternion of R (local to world), body angular and linear
  // velocity; SE(2): the heading theta (unwrapped along the run), position, body velocity.
  int state_size() const override { return kSpatial ? 13 : 6; }
  std::vector<std::string> state_names() const override {
    if constexpr (kSpatial)
      return {"x", "y", "z", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "vx", "vy", "vz"};
    else
      return {"theta", "x", "y", "omega", "v1", "v2"};
  }
  std::span<const int> state_quaternions() const override {
    static constexpr int kAt[] = {3};
    return kSpatial ? std::span<const int>(kAt) : std::span<const int>();
  }
  void get_state(std::span<double> x) const override {
    std::size_t c = 0;
    if constexpr (kSpatial) {
      for (int i = 0; i < 3; ++i) x[c++] = cur_.g.x[i];
      // The quaternion that was set, while R is still the rotation made from it.
      const Vec4 q = cur_.g.R == heading_.R ? heading_.q : Quat::from_rotation(cur_.g.R).q;
      for (int i = 0; i < 4; ++i) x[c++] = q[i];
    } else {
      x[c++] = heading_.value;
      for (int i = 0; i < 2; ++i) x[c++] = cur_.g.x[i];
    }
    for (int i = 0; i < n; ++i) x[c++] = cur_.xi[i];
  }
  // As a scene's initial state: the rotation from the normalised quaternion as the scene
  // reader makes it, the pose from the heading; the VI derives xi_k-1 anew at the next step.
  void set_state(std::span<const double> x) override {
    const std::vector<std::string> names = state_names();
    check_state(kSpatial ? "vehicle" : "planar vehicle", names, x);
    VehicleState<G> s = cur_;
    std::size_t c = 0;
    if constexpr (kSpatial) {
      heading_.q = state_quaternion("vehicle", names, x, 3);
      s.g.x = Vec3(x[0], x[1], x[2]);
      s.g.R = Eigen::Quaterniond(x[3], x[4], x[5], x[6]).normalized().toRotationMatrix();
      heading_.R = s.g.R;
      c = 7;
    } else {
      heading_.value = x[0];
      s.g = SE2::from_angle(x[0], Vec2(x[1], x[2]));
      c = 3;
    }
    for (int i = 0; i < n; ++i) s.xi[i] = x[c++];
    cur_ = s;
    restart_ = true;
    last_q_.setZero();
    last_theta_ = 0.0;
  }

  double energy() const override { return vehicle_energy<G>(*setup_.model, cur_.g, cur_.xi); }
  int momentum_size() const override { return setup_.conserves_momentum ? n : 0; }
  void momentum(std::span<double> out) const override {
    const Tangent mu = spatial_momentum<G>(cur_.g, setup_.model->inertia() * cur_.xi);
    for (int i = 0; i < n; ++i) out[std::size_t(i)] = mu[i];
  }

  // The VI's residual r(xi_k) of vehicles eq. (10): z = xi_k, delta = (g_k exp(delta_g),
  // xi_k-1 + delta_xi), u = (controls, shape) at the node t_k.
  bool has_residual() const override { return setup_.method == Method::VI; }
  ResidualPoint residual_point(double t_k, double dt) const override {
    if (!has_residual()) return System::residual_point(t_k, dt);
    ResidualPoint at;
    at.z = velocity_km1(dt);
    at.delta = Eigen::VectorXd::Zero(2 * n);
    const StepInputs in = inputs_at(t_k);
    at.u.resize(in.u.size() + in.gamma.size());
    at.u << in.u, in.gamma;
    return at;
  }
  void residual(double t_k, double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    if (!has_residual()) return System::residual(t_k, dt, at, out, jacobians);
    const HolonomicModel<G>& model = *setup_.model;
    const Eigen::Index nu = model.num_controls(), ns = model.num_shape();
    if (at.z.size() != n || at.delta.size() != 2 * n || at.u.size() != nu + ns)
      throw InputError("vehicle residual: z, delta or u has the wrong size");
    const G g_k = cur_.g * G::exp(at.delta.template head<n>());
    const Tangent xi_km1 = velocity_km1(dt) + at.delta.template tail<n>();
    StepInputs in;
    in.u = at.u.head(nu);
    in.gamma = at.u.tail(ns);
    HolonomicResidual<G> R;
    holonomic_residual<G>(model, setup_.options, dt, t_k, g_k, xi_km1, at.z, in, jacobians, R);
    out.r = R.r;
    if (!jacobians) return;
    out.J_r_z = R.J_r_xi_k;
    out.J_r_state.resize(n, 2 * n);
    out.J_r_state << R.J_r_g_k, R.J_r_xi_km1;
    out.J_r_u.resize(n, nu + ns);
    out.J_r_u << R.J_r_u_k, R.J_r_gamma_k;
  }

  void row(double t, std::span<double> out) const override {
    if (setup_.controls) eval_into(*setup_.controls, t, u_);
    if (setup_.shape) eval_into(*setup_.shape, t, gamma_);
    std::size_t c = 0;
    out[c++] = t;
    if constexpr (kSpatial) {
      Vec4 q = Quat::from_rotation(cur_.g.R).q;
      // q and -q are the same rotation: keep the sign continuous along the trajectory.
      if (last_q_.dot(q) < 0.0) q = -q;
      last_q_ = q;
      for (int i = 0; i < 3; ++i) out[c++] = cur_.g.x[i];
      for (int i = 0; i < 4; ++i) out[c++] = q[i];
    } else {
      // The heading unwrapped: the step from the last row's is taken in (-pi, pi].
      const double theta = cur_.g.angle();
      last_theta_ += std::remainder(theta - last_theta_, 2.0 * std::numbers::pi);
      out[c++] = last_theta_;
      for (int i = 0; i < 2; ++i) out[c++] = cur_.g.x[i];
    }
    for (int i = 0; i < n; ++i) out[c++] = cur_.xi[i];
    out[c++] = energy();
    for (int i = 0; setup_.controls && i < u_.size(); ++i) out[c++] = u_[i];
    for (int i = 0; setup_.shape && i < gamma_.size(); ++i) out[c++] = gamma_[i];
  }

 private:
  // xi_k-1 of the next step: the stepper's, or the one a restart derives from the body
  // velocity (as step() would).
  Tangent velocity_km1(double dt) const {
    const Tangent* xi_km1 = restart_ ? nullptr : stepper_->velocity_km1();
    return xi_km1 ? *xi_km1 : initial_xi_km1<G>(*setup_.model, setup_.options, dt, cur_.xi);
  }
  StepInputs inputs_at(double t) const {
    StepInputs in;
    in.u.setZero(setup_.model->num_controls());
    in.gamma.setZero(setup_.model->num_shape());
    if (setup_.controls) eval_into(*setup_.controls, t, in.u);
    if (setup_.shape) eval_into(*setup_.shape, t, in.gamma);
    return in;
  }

  HolonomicSetup<G> setup_;
  Layout layout_;
  std::unique_ptr<VehicleStepper<G>> stepper_;
  std::unique_ptr<StepSignal> controls_, shape_;
  VehicleState<G> cur_, saved_;
  bool restart_ = true, saved_restart_ = true;
  // What get_state reports of the orientation: on SE(2) the heading unwrapped along the run;
  // on SE(3) the quaternion last set, while the rotation R made from it is unchanged.
  struct Heading {
    double value = 0.0;
    Mat3 R = Mat3::Zero();
    Vec4 q = Vec4::Zero();
  } heading_, saved_heading_;
  mutable Vec4 last_q_ = Vec4::Zero();
  mutable double last_theta_ = 0.0;
  mutable InputVec u_, gamma_;
};

}  // namespace

std::unique_ptr<System> make_vehicle_system(const VehicleSetup& setup) {
  if (!setup.model) throw InputError("vehicle: no model");
  return std::make_unique<VehicleSystem<SE3>>(setup);
}

std::unique_ptr<System> make_vehicle_system(const PlanarVehicleSetup& setup) {
  if (!setup.model) throw InputError("planar vehicle: no model");
  return std::make_unique<VehicleSystem<SE2>>(setup);
}

}  // namespace marsden::sim
