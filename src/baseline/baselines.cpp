#include "baseline/baselines.hpp"

#include <cmath>

#include "marsden/error.hpp"
#include "marsden/solve/rk.hpp"
#include "marsden/lie/quaternion.hpp"
#include "marsden/lie/tangent.hpp"

namespace marsden::vehicle::baseline {

namespace {

// Pose coordinates for the Runge-Kutta baselines: (q, x) with q a unit quaternion on
// SE(3), (theta, x, y) on SE(2).
template <class G>
struct Chart;

template <>
struct Chart<SE3> {
  using Pose = Eigen::Matrix<double, 7, 1>;
  static Pose from_group(const SE3& g) {
    Pose y;
    y << Quat::from_rotation(g.R).q, g.x;
    return y;
  }
  static SE3 to_group(const Pose& y) {
    return SE3{Quat{y.head<4>().normalized()}.matrix(), y.tail<3>()};
  }
  // q_dot = q (x) (0, omega) / 2, x_dot = R(q) v: vehicles eq. (7) in quaternions.
  static Pose rate(const Pose& y, const Vec6& xi) {
    Vec4 w_q;
    w_q << 0.0, xi.head<3>();
    Pose dy;
    dy << 0.5 * quat::L(y.head<4>()) * w_q, Quat{y.head<4>()}.act(xi.tail<3>());
    return dy;
  }
  static void normalize(Pose& y) { y.head<4>().normalize(); }
};

template <>
struct Chart<SE2> {
  using Pose = Vec3;
  static Pose from_group(const SE2& g) { return Pose(g.angle(), g.x[0], g.x[1]); }
  static SE2 to_group(const Pose& y) { return SE2::from_angle(y[0], y.tail<2>()); }
  static Pose rate(const Pose& y, const Vec3& xi) {
    const double c = std::cos(y[0]), s = std::sin(y[0]);
    return Pose(xi[0], c * xi[1] - s * xi[2], s * xi[1] + c * xi[2]);
  }
  static void normalize(Pose&) {}
};

// Shared state and bookkeeping of the baselines.
template <class G>
class BaselineStepper : public VehicleStepper<G> {
 public:
  explicit BaselineStepper(std::shared_ptr<const HolonomicModel<G>> model)
      : model_(std::move(model)) {}
  void reset(const VehicleState<G>& s0, double dt) override {
    if (!(dt > 0.0)) throw InputError("time step must be > 0");
    this->dt_ = dt;
    s_ = s0;
  }
  VehicleState<G> state() const override { return s_; }
  void set_time(double t) override { s_.t = t; }
  void save() override {
    saved_ = s_;
    saved_dt_ = this->dt_;
  }
  void restore() override {
    s_ = saved_;
    this->dt_ = saved_dt_;
  }

 protected:
  typename G::Tangent accel(double t, const G& g, const typename G::Tangent& xi,
                            const VehicleInputs& inputs) {
    sample_inputs(*model_, inputs, t, in_);
    return euler_poincare_rhs(*model_, t, g, xi, in_.gamma, in_.u);
  }
  // Accepts the new state only if it is finite.
  NewtonStatus accept(const VehicleState<G>& next, int iterations = 0, double residual = 0.0) {
    NewtonStatus st;
    st.iterations = iterations;
    st.residual_norm = residual;
    st.converged = next.g.R.allFinite() && next.g.x.allFinite() && next.xi.allFinite();
    if (st.converged) s_ = next;
    return st;
  }

  std::shared_ptr<const HolonomicModel<G>> model_;
  VehicleState<G> s_, saved_;
  double saved_dt_ = 0.0;
  StepInputs in_;
};

template <class G>
class ExplicitRK final : public BaselineStepper<G> {
  using C = Chart<G>;
  using Pose = typename C::Pose;
  using Tangent = typename G::Tangent;

 public:
  ExplicitRK(std::shared_ptr<const HolonomicModel<G>> model, int order)
      : BaselineStepper<G>(std::move(model)), order_(order) {}

  NewtonStatus step(const VehicleInputs& inputs) override {
    constexpr int np = Pose::RowsAtCompileTime, nv = Tangent::RowsAtCompileTime;
    using Y = Eigen::Matrix<double, np + nv, 1>;  // (pose in the chart, body velocity)
    const double dt = this->dt_, t = this->s_.t;
    Y y0;
    y0 << C::from_group(this->s_.g), this->s_.xi;
    // Each stage reads the pose normalised; the inputs are sampled at the stage time.
    auto f = [&](double ts, const Y& y) {
      Pose pose = y.template head<np>();
      C::normalize(pose);
      const Tangent xi = y.template tail<nv>();
      Y dy;
      dy << C::rate(pose, xi), this->accel(ts, C::to_group(pose), xi, inputs);
      return dy;
    };
    const Y y1 = rk_step(order_ == 2 ? RungeKutta::Heun2 : RungeKutta::Classic4,
                              t, dt, y0, f);
    Pose pose1 = y1.template head<np>();
    C::normalize(pose1);
    return this->accept(VehicleState<G>{t + dt, C::to_group(pose1), y1.template tail<nv>()});
  }

 private:
  int order_;
};

template <class G>
class ImplicitMidpoint final : public BaselineStepper<G> {
  using C = Chart<G>;
  using Pose = typename C::Pose;
  using Tangent = typename G::Tangent;
  using Jac = typename G::Jacobian;

 public:
  ImplicitMidpoint(std::shared_ptr<const HolonomicModel<G>> model, const NewtonOptions& newton)
      : BaselineStepper<G>(std::move(model)), newton_(newton) {}

  NewtonStatus step(const VehicleInputs& inputs) override {
    const HolonomicModel<G>& model = *this->model_;
    const double dt = this->dt_, t = this->s_.t;
    const G& g0 = this->s_.g;
    const Tangent xi0 = this->s_.xi;
    sample_inputs(model, inputs, t + 0.5 * dt, this->in_);
    Tangent f_u;
    model.control_wrench(this->in_.gamma, this->in_.u, f_u, nullptr, nullptr);
    const Jac& I = model.inertia();
    // I (xi1 - xi0) = dt (ad_m^T I m + F u + f_ext(g0, m)), m = (xi0 + xi1)/2; the pose is
    // frozen at g_k inside the dynamics, as the dynamics and reconstruction are split.
    auto residual = [&](const Tangent& xi1, Tangent& r, Jac* J) {
      const Tangent m = 0.5 * (xi0 + xi1);
      const Tangent mu = I * m;
      Tangent f_ext;
      Jac J_fe_xi;
      model.external_wrench(t + 0.5 * dt, g0, m, f_ext, nullptr, J ? &J_fe_xi : nullptr);
      r = I * (xi1 - xi0) - dt * (G::ad(m).transpose() * mu + f_u + f_ext);
      if (J)
        *J = I - 0.5 * dt * (G::ad(m).transpose() * I + ad_transpose_derivative<G>(mu) + J_fe_xi);
    };
    Tangent xi1 = xi0 + dt * model.inertia_inv() * (G::ad(xi0).transpose() * (I * xi0) + f_u);
    const NewtonStatus st =
        newton_solve(residual, xi1, (I * xi0).template lpNorm<Eigen::Infinity>(), newton_);
    if (!st.converged) return st;
    // Heun on the reconstruction with the old and the new velocity.
    const Pose y0 = C::from_group(g0);
    const Pose k1 = C::rate(y0, xi0);
    Pose y_pred = y0 + dt * k1;
    C::normalize(y_pred);
    Pose y1 = y0 + 0.5 * dt * (k1 + C::rate(y_pred, xi1));
    C::normalize(y1);
    return this->accept(VehicleState<G>{t + dt, C::to_group(y1), xi1}, st.iterations,
                        st.residual_norm);
  }

 private:
  NewtonOptions newton_;
};

template <class G>
class LieNewmark final : public BaselineStepper<G> {
  using Tangent = typename G::Tangent;

 public:
  using BaselineStepper<G>::BaselineStepper;

  NewtonStatus step(const VehicleInputs& inputs) override {
    const double dt = this->dt_, t = this->s_.t;
    const Tangent a0 = this->accel(t, this->s_.g, this->s_.xi, inputs);
    const Tangent xi_half = this->s_.xi + 0.5 * dt * a0;
    const G g1 = this->s_.g * G::exp(dt * xi_half);
    const Tangent a1 = this->accel(t + dt, g1, xi_half + 0.5 * dt * a0, inputs);
    return this->accept(VehicleState<G>{t + dt, g1, xi_half + 0.5 * dt * a1});
  }
};

}  // namespace

template <class G>
std::unique_ptr<VehicleStepper<G>> make_explicit_rk(std::shared_ptr<const HolonomicModel<G>> model,
                                                    int order) {
  return std::make_unique<ExplicitRK<G>>(std::move(model), order);
}

template <class G>
std::unique_ptr<VehicleStepper<G>> make_implicit_midpoint(
    std::shared_ptr<const HolonomicModel<G>> model, const NewtonOptions& newton) {
  return std::make_unique<ImplicitMidpoint<G>>(std::move(model), newton);
}

template <class G>
std::unique_ptr<VehicleStepper<G>> make_lie_newmark(std::shared_ptr<const HolonomicModel<G>> model) {
  return std::make_unique<LieNewmark<G>>(std::move(model));
}

#define MARSDEN_INSTANTIATE_BASELINES(G)                                                      \
  template std::unique_ptr<VehicleStepper<G>> make_explicit_rk<G>(                           \
      std::shared_ptr<const HolonomicModel<G>>, int);                                        \
  template std::unique_ptr<VehicleStepper<G>> make_implicit_midpoint<G>(                     \
      std::shared_ptr<const HolonomicModel<G>>, const NewtonOptions&);                       \
  template std::unique_ptr<VehicleStepper<G>> make_lie_newmark<G>(                           \
      std::shared_ptr<const HolonomicModel<G>>);

MARSDEN_INSTANTIATE_BASELINES(SE2)
MARSDEN_INSTANTIATE_BASELINES(SE3)

}  // namespace marsden::vehicle::baseline
