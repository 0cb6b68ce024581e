#include "marsden/sim/nonholonomic.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/nonholonomic/model.hpp"
#include "marsden/sim/inputs.hpp"
#include "marsden/solve/rk.hpp"
#include "sim/full_coordinates.hpp"
#include "sim/state.hpp"

namespace marsden::sim {

namespace {

using nonholonomic::ChaplyginSleigh;
using nonholonomic::nh_energy;
using nonholonomic::nh_rk_step;
using nonholonomic::NhMat;
using nonholonomic::NhVec;
using nonholonomic::NonholonomicModel;
using nonholonomic::Snakeboard;

using vehicle::car_continuous_rhs;
using vehicle::car_explicit_initial;
using vehicle::car_explicit_step;
using vehicle::CarContinuousState;
using vehicle::CarExplicitState;
using vehicle::CarModel;
using vehicle::ConnectionMat;
using vehicle::ConstantMetricRdpModel;
using vehicle::InputVec;
using vehicle::kRdpMaxShape;
using vehicle::kRdpMaxUnknowns;
using vehicle::rdp_initial_state;
using vehicle::rdp_left_momentum;
using vehicle::rdp_residual_given_left;
using vehicle::rdp_segment_velocity;
using vehicle::rdp_step;
using vehicle::RdpLeftJacobians;
using vehicle::RdpLeftMomentum;
using vehicle::RdpModel;
using vehicle::RdpOptions;
using vehicle::RdpResidual;
using vehicle::RdpShapeCols;
using vehicle::RdpState;
using vehicle::RdpVec;
using vehicle::ShapeVec;
using vehicle::SleighModel;
using vehicle::SnakeboardModel;
using vehicle::SnakeboardParams;
using vehicle::SymBasisMat;

}  // namespace

std::string method_name(NonholonomicMethod m) {
  switch (m) {
    case NonholonomicMethod::Rdp:
      return "rdp";
    case NonholonomicMethod::RdpExplicit:
      return "rdp_explicit";
    case NonholonomicMethod::Gni:
      return "gni";
    case NonholonomicMethod::Rattle:
      return "rattle";
    case NonholonomicMethod::Rk4:
      return "rk4";
  }
  return "?";
}

int num_shape(const NonholonomicSetup& s) {
  if (s.vehicle == NonholonomicVehicle::Generated)
    return s.generated ? s.generated->num_shape() : 0;
  return s.vehicle == NonholonomicVehicle::Sleigh ? 0 : 2;
}
int num_controls(const NonholonomicSetup& s) { return num_shape(s); }

namespace {

// One output sample: pose, shape and its velocity, body velocity xi = (omega, v1, v2),
// energy and the constraint violation.
struct Sample {
  double theta = 0.0, x = 0.0, y = 0.0;
  ShapeVec r, rdot;
  Vec3 xi = Vec3::Zero();
  RdpVec w;  // generated RDP vehicles: the locked velocity
  double energy = 0.0;
  double violation = 0.0;
};

// Inf-norm of the nonholonomic constraints in body form at shape r (evaluated where the
// method imposes them) for shape velocity u and body velocity xi = (omega, v1, v2).
double constraint_violation(NonholonomicVehicle kind, const NonholonomicSetup& nh,
                            const ShapeVec& r, const ShapeVec& u, const Vec3& xi) {
  const double w = xi[0], v1 = xi[1], v2 = xi[2];
  switch (kind) {
    case NonholonomicVehicle::Car: {
      const CarParams& p = nh.car;
      return std::max(
          {std::abs(v1 - p.rho * u[0]), std::abs(v2), std::abs(w - (p.rho / p.l) * r[1] * u[0])});
    }
    case NonholonomicVehicle::Snakeboard: {
      const double l = nh.snakeboard.l, c = std::cos(r[1]), s = std::sin(r[1]);
      return std::max(std::abs(-l * c * w - s * v1 + c * v2),
                      std::abs(l * c * w + s * v1 + c * v2));
    }
    case NonholonomicVehicle::Sleigh:
      return std::abs(v2 + nh.sleigh.a * w);
    case NonholonomicVehicle::Generated: {
      // xi + A u must lie in span E (vehicles §3.2): its part orthogonal to E.
      ConnectionMat<SE2> A;
      SymBasisMat<SE2> E;
      nh.generated->connection(r, A, nullptr);
      nh.generated->symmetry_basis(r, E, nullptr);
      Vec3 d = xi + A * u;
      if (E.cols() > 0) d -= E * (E.transpose() * E).ldlt().solve(E.transpose() * d);
      return d.lpNorm<Eigen::Infinity>();
    }
  }
  return 0.0;
}

// A stepping method with a copyable state, so that a failed step can be retried from its
// start.
class Sim {
 public:
  virtual ~Sim() = default;
  virtual std::unique_ptr<Sim> clone() const = 0;
  // Assigns this state to dst, a Sim of the same class (no allocation).
  virtual void copy_to(Sim& dst) const = 0;
  // One step of size dt from time t; each method samples the controls u where it needs
  // them (sim/inputs.hpp).
  virtual NewtonStatus step(double t, double dt, const Signal& u) = 0;
  virtual Sample sample() const = 0;
  // The step's residual (System::residual), for the implicit methods.
  virtual bool has_residual() const { return false; }
  virtual ResidualPoint residual_point(double, double, const Signal&) const { return {}; }
  virtual void residual(double, const ResidualPoint&, ResidualBlocks&, bool) const {}
};

double wrap_angle(double a) { return std::remainder(a, 2.0 * std::numbers::pi); }

// The controls at t; their size, the vehicle's shape dimension, is at most kRdpMaxShape.
InputVec eval_at(const Signal& s, double t) {
  InputVec v;
  eval_into(s, t, v);
  return v;
}

// ---------------------------------------------------------------- RDP on SE(2)

class RdpSim final : public Sim {
 public:
  RdpSim(NonholonomicVehicle kind, const NonholonomicSetup& nh,
         std::shared_ptr<const RdpModel<SE2>> m, const RdpOptions& opt, const InputVec& u0)
      : kind_(kind), nh_(&nh), model_(std::move(m)), opt_(opt) {
    const int nr = model_->num_shape(), nb = model_->num_symmetry();
    ShapeVec f, u_prescribed;
    split(u0, f, u_prescribed);
    ShapeVec u = nh.shape_velocity;
    for (int i = 0; i < nr; ++i)
      if (model_->prescribed(i)) u[i] = u_prescribed[i];
    RdpVec w(nb);
    if (kind == NonholonomicVehicle::Generated) {
      w = nh.locked_velocity;
    } else if (kind == NonholonomicVehicle::Sleigh) {
      w << nh.omega, nh.v1;
    } else if (kind == NonholonomicVehicle::Snakeboard) {
      // v1 = E(1, 0) w - (A u)[1]: solve for the locked velocity w.
      ConnectionMat<SE2> A;
      SymBasisMat<SE2> E;
      model_->connection(nh.shape, A, nullptr);
      model_->symmetry_basis(nh.shape, E, nullptr);
      w << (nh.v1 + (A * u)[1]) / E(1, 0);
    }
    state_ = rdp_initial_state<SE2>(*model_, nh.shape, SE2::from_angle(nh.theta, Vec2(nh.x, nh.y)),
                                    u, w);
    theta_ = nh.theta;
    r_seg_ = state_.r;
  }
  std::unique_ptr<Sim> clone() const override { return std::make_unique<RdpSim>(*this); }
  void copy_to(Sim& dst) const override { static_cast<RdpSim&>(dst) = *this; }

  // Forces and prescribed shape velocities act at the quadrature point t + alpha dt, where
  // RDP evaluates the shape r_k+alpha (vehicles eq. (16)).
  NewtonStatus step(double t, double dt, const Signal& u) override {
    ShapeVec f, u_prescribed;
    split(eval_at(u, t + opt_.alpha * dt), f, u_prescribed);
    RdpVec x = state_.x;
    for (int i = 0; i < model_->num_shape(); ++i)
      if (model_->prescribed(i)) x[i] = u_prescribed[i];  // exact guess for those rows
    ShapeVec r1;
    SE2 g1;
    const NewtonStatus st = rdp_step<SE2>(*model_, opt_, dt, state_.r, state_.g, state_.left, f,
                                          u_prescribed, x, r1, g1);
    if (!st.converged) return st;
    rdp_left_momentum<SE2>(*model_, opt_, dt, r1, x, f, state_.left,
                           static_cast<RdpLeftJacobians<SE2>*>(nullptr));
    theta_ += wrap_angle(g1.angle() - state_.g.angle());
    r_seg_ = state_.r;
    dt_seg_ = dt;
    state_.r = r1;
    state_.g = g1;
    state_.x = x;
    return st;
  }

  // RDP's residual of eqs. (16)-(17) given the left momenta: z = x_k (shape velocities, then
  // locked velocities), delta = increments of (r_k, p^-, mu^-), u = the controls at the
  // quadrature point (forces or prescribed shape velocities, as split() maps them).
  bool has_residual() const override { return true; }
  ResidualPoint residual_point(double t, double dt, const Signal& u) const override {
    ResidualPoint at;
    at.u = eval_at(u, t + opt_.alpha * dt);
    ShapeVec f, u_prescribed;
    split(at.u, f, u_prescribed);
    at.z = state_.x;
    for (int i = 0; i < model_->num_shape(); ++i)
      if (model_->prescribed(i)) at.z[i] = u_prescribed[i];
    at.delta = Eigen::VectorXd::Zero(2 * model_->num_shape() + 3);
    return at;
  }
  void residual(double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    const Eigen::Index nr = model_->num_shape(), n = state_.x.size(), nu = at.u.size();
    if (at.z.size() != n || at.delta.size() != 2 * nr + 3)
      throw InputError("RDP residual: z or delta has the wrong size");
    ShapeVec f, u_prescribed;
    split(at.u, f, u_prescribed);
    const ShapeVec r_k = state_.r + at.delta.head(nr);
    RdpLeftMomentum<SE2> left = state_.left;
    left.p += at.delta.segment(nr, nr);
    left.mu += at.delta.tail<3>();
    RdpResidual<SE2> R;
    RdpShapeCols J_r_p;
    Eigen::Matrix<double, Eigen::Dynamic, 3, 0, kRdpMaxUnknowns, 3> J_r_mu;
    rdp_residual_given_left<SE2>(*model_, opt_, dt, r_k, left, RdpVec(at.z), f, u_prescribed, jacobians,
                                 R, &J_r_p, &J_r_mu);
    out.r = R.r;
    if (!jacobians) return;
    out.J_r_z = R.J_r_x_k;
    out.J_r_state.resize(n, 2 * nr + 3);
    out.J_r_state << R.J_r_r_k, J_r_p, J_r_mu;
    // d(f, u_prescribed)/du is a selection (split): column i of u is a force or prescribed column.
    out.J_r_u.setZero(n, nu);
    for (Eigen::Index i = 0; i < nu; ++i) {
      InputVec e = InputVec::Zero(nu);
      e[i] = 1.0;
      ShapeVec df, du_prescribed;
      split(e, df, du_prescribed);
      out.J_r_u.col(i) = R.J_r_f_ka * Eigen::VectorXd(df) + R.J_r_u_prescribed * Eigen::VectorXd(du_prescribed);
    }
  }

  Sample sample() const override {
    const int nr = model_->num_shape();
    Sample s;
    s.theta = theta_;
    s.x = state_.g.x[0];
    s.y = state_.g.x[1];
    s.r = state_.r;
    s.rdot = state_.x.head(nr);
    if (kind_ == NonholonomicVehicle::Generated) s.w = state_.x.tail(state_.x.size() - nr);
    // The velocity of the last segment, where RDP imposes the constraints: at the
    // quadrature point r + alpha dt u of that segment.
    s.xi = rdp_segment_velocity<SE2>(*model_, opt_, dt_seg_, r_seg_, state_.x);
    const ShapeVec r_alpha = r_seg_ + opt_.alpha * dt_seg_ * s.rdot;
    s.energy = kind_ == NonholonomicVehicle::Generated
                   ? nh_->generated->energy(r_alpha, s.rdot, s.xi)
                   : static_cast<const ConstantMetricRdpModel&>(*model_).energy(s.rdot, s.xi);
    s.violation = constraint_violation(kind_, *nh_, r_alpha, s.rdot, s.xi);
    return s;
  }

 private:
  // Controls -> forces on the shape and prescribed shape velocities.
  void split(const InputVec& u, ShapeVec& f, ShapeVec& u_prescribed) const {
    const int nr = model_->num_shape();
    f = ShapeVec::Zero(nr);
    u_prescribed = ShapeVec::Zero(nr);
    if (kind_ == NonholonomicVehicle::Generated) {
      for (int i = 0; i < nr; ++i) (model_->prescribed(i) ? u_prescribed : f)[i] = u[i];
    } else if (kind_ == NonholonomicVehicle::Car) {
      f[0] = u[0];
      u_prescribed[1] = u[1];
    } else if (kind_ == NonholonomicVehicle::Snakeboard) {
      (nh_->prescribe_shape ? u_prescribed : f) << u[0], u[1];
    }
  }

  NonholonomicVehicle kind_;
  const NonholonomicSetup* nh_;
  std::shared_ptr<const RdpModel<SE2>> model_;
  RdpOptions opt_;
  RdpState<SE2> state_;
  double theta_ = 0.0;   // unwrapped heading
  ShapeVec r_seg_;       // shape at the start of the last segment
  double dt_seg_ = 0.0;  // its length (0 before the first step)
};

// ------------------------------------------------------ car: explicit RDP, RK4

class CarExplicitSim final : public Sim {
 public:
  CarExplicitSim(const NonholonomicSetup& nh, double u_sigma0)
      : nh_(&nh), model_(nh.car), u_sigma_(u_sigma0) {
    s_ = car_explicit_initial(nh.car, nh.theta, nh.x, nh.y, nh.shape[0], nh.shape[1],
                              nh.shape_velocity[0]);
    sigma_alpha_ = s_.sigma;
  }
  std::unique_ptr<Sim> clone() const override { return std::make_unique<CarExplicitSim>(*this); }
  void copy_to(Sim& dst) const override { static_cast<CarExplicitSim&>(dst) = *this; }
  NewtonStatus step(double t, double dt, const Signal& u_signal) override {
    const InputVec u = eval_at(u_signal, t + nh_->alpha * dt);  // the quadrature point
    sigma_alpha_ = s_.sigma + nh_->alpha * dt * u[1];
    u_sigma_ = u[1];
    car_explicit_step(nh_->car, dt, nh_->alpha, u[0], u[1], s_);
    return NewtonStatus{true, 0, 0.0};
  }
  Sample sample() const override {
    const CarParams& p = nh_->car;
    Sample s;
    s.theta = s_.theta;
    s.x = s_.x;
    s.y = s_.y;
    s.r.resize(2);
    s.r << s_.psi, s_.sigma;
    s.rdot.resize(2);
    s.rdot << s_.u_psi, u_sigma_;
    s.xi << (p.rho / p.l) * sigma_alpha_ * s_.u_psi, p.rho * s_.u_psi, 0.0;
    s.energy = model_.energy(s.rdot, s.xi);
    ShapeVec ra = s.r;
    ra[1] = sigma_alpha_;
    s.violation = constraint_violation(NonholonomicVehicle::Car, *nh_, ra, s.rdot, s.xi);
    return s;
  }

 private:
  const NonholonomicSetup* nh_;
  CarModel model_;
  CarExplicitState s_;
  double u_sigma_;
  double sigma_alpha_;
};

class CarRk4Sim final : public Sim {
 public:
  CarRk4Sim(const NonholonomicSetup& nh, double u_sigma0)
      : nh_(&nh), model_(nh.car), u_sigma_(u_sigma0) {
    y_ << nh.theta, nh.x, nh.y, nh.shape[0], nh.shape[1], nh.shape_velocity[0];
  }
  std::unique_ptr<Sim> clone() const override { return std::make_unique<CarRk4Sim>(*this); }
  void copy_to(Sim& dst) const override { static_cast<CarRk4Sim&>(dst) = *this; }
  NewtonStatus step(double t, double dt, const Signal& u) override {
    const CarParams& p = nh_->car;
    y_ = rk_step(RungeKutta::Classic4, t, dt, y_, [&](double ts, const CarContinuousState& y) {
      const InputVec u_t = eval_at(u, ts);  // at the stage time
      return car_continuous_rhs(p, y, u_t[0], u_t[1]);
    });
    u_sigma_ = eval_at(u, t + dt)[1];
    return NewtonStatus{true, 0, 0.0};
  }
  Sample sample() const override {
    const CarParams& p = nh_->car;
    Sample s;
    s.theta = y_[0];
    s.x = y_[1];
    s.y = y_[2];
    s.r.resize(2);
    s.r << y_[3], y_[4];
    s.rdot.resize(2);
    s.rdot << y_[5], u_sigma_;
    s.xi << (p.rho / p.l) * y_[4] * y_[5], p.rho * y_[5], 0.0;
    s.energy = model_.energy(s.rdot, s.xi);
    s.violation = constraint_violation(NonholonomicVehicle::Car, *nh_, s.r, s.rdot, s.xi);
    return s;
  }

 private:
  const NonholonomicSetup* nh_;
  CarModel model_;
  CarContinuousState y_;
  double u_sigma_;
};

// ------------------------------------- full coordinates: GNI, RATTLE, RK4

class FullSim final : public Sim {
 public:
  FullSim(NonholonomicVehicle kind, const NonholonomicSetup& nh, NonholonomicMethod method,
          const NewtonOptions& newton, std::shared_ptr<const NonholonomicModel> model,
          const Vec3& xi0)
      : kind_(kind), nh_(&nh), method_(method), newton_(newton), model_(std::move(model)) {
    const int n = model_->dof();
    it_ = kind == NonholonomicVehicle::Snakeboard ? 2 : 0;
    x_.q = NhVec::Zero(n);
    NhVec qdot = NhVec::Zero(n);
    if (kind == NonholonomicVehicle::Snakeboard) {
      x_.q.head(2) = nh.shape;
      qdot.head(2) = nh.shape_velocity;
    }
    x_.q.segment(it_, 3) << nh.theta, nh.x, nh.y;
    const double c = std::cos(nh.theta), s = std::sin(nh.theta);
    qdot.segment(it_, 3) << xi0[0], c * xi0[1] - s * xi0[2], s * xi0[1] + c * xi0[2];
    NhMat M;
    model_->mass(x_.q, M);
    x_.p = method == NonholonomicMethod::Rk4 ? qdot : NhVec(M * qdot);
  }
  std::unique_ptr<Sim> clone() const override { return std::make_unique<FullSim>(*this); }
  void copy_to(Sim& dst) const override { static_cast<FullSim&>(dst) = *this; }

  NewtonStatus step(double t, double dt, const Signal& u_signal) override {
    const int nc = model_->num_controls();
    auto controls_at = [&](double ts, NhVec& u_t) {
      const InputVec v = eval_at(u_signal, ts);
      u_t.resize(nc);
      for (int i = 0; i < nc; ++i) u_t[i] = v[i];
    };
    if (method_ == NonholonomicMethod::Rk4) {
      nh_rk_step(*model_, RungeKutta::Classic4, t, dt, controls_at, x_.q, x_.p);  // stage times
      return NewtonStatus{true, 0, 0.0};
    }
    NhVec u;
    controls_at(detail::full_control_time(method_, t, dt), u);
    return detail::full_coordinate_step(*model_, method_, newton_, dt, u, nullptr,
                                        NhVec(x_.q + dt * velocity()), x_);
  }

  // GNI: r(q_k+1) of its momentum jump and constraints; RATTLE: (a)-(b) in
  // (q_k+1, lambda_k). Only the Jacobian in z is provided. u: the controls at
  // full_control_time (GNI's impulse weighting for a first step or a change of step is part
  // of its residual).
  bool has_residual() const override {
    return method_ == NonholonomicMethod::Gni || method_ == NonholonomicMethod::Rattle;
  }
  ResidualPoint residual_point(double t, double dt, const Signal& u) const override {
    ResidualPoint at;
    const InputVec v = eval_at(u, detail::full_control_time(method_, t, dt));
    at.u = v.head(model_->num_controls());
    const NhVec q1 = x_.q + dt * velocity();
    const Eigen::Index n = q1.size(), m = method_ == NonholonomicMethod::Rattle ? model_->num_constraints() : 0;
    at.z = Eigen::VectorXd::Zero(n + m);
    at.z.head(n) = q1;
    return at;
  }
  void residual(double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    detail::full_coordinate_residual(*model_, method_, x_, dt, NhVec(at.u), nullptr, at, out,
                                     jacobians, "nonholonomic");
  }

  Sample sample() const override {
    const NhVec qdot = velocity();
    Sample s;
    s.theta = x_.q[it_];
    s.x = x_.q[it_ + 1];
    s.y = x_.q[it_ + 2];
    const int nr = num_shape(*nh_);
    s.r = ShapeVec::Zero(nr);
    s.rdot = ShapeVec::Zero(nr);
    for (int i = 0; i < nr && i < kRdpMaxShape; ++i) {
      s.r[i] = x_.q[i];
      s.rdot[i] = qdot[i];
    }
    const double c = std::cos(s.theta), sn = std::sin(s.theta);
    const double xd = qdot[it_ + 1], yd = qdot[it_ + 2];
    s.xi << qdot[it_], c * xd + sn * yd, -sn * xd + c * yd;
    s.energy = nh_energy(*model_, x_.q, qdot);
    s.violation = constraint_violation(kind_, *nh_, s.r, s.rdot, s.xi);
    return s;
  }

 private:
  NhVec velocity() const {
    if (method_ == NonholonomicMethod::Rk4) return x_.p;
    NhMat M;
    model_->mass(x_.q, M);
    return Eigen::LLT<NhMat>(M).solve(x_.p);
  }

  NonholonomicVehicle kind_;
  const NonholonomicSetup* nh_;
  NonholonomicMethod method_;
  NewtonOptions newton_;
  std::shared_ptr<const NonholonomicModel> model_;
  int it_ = 0;   // index of theta in q
  // p: momentum (GNI: p+, RATTLE: p), or the velocity for RK4
  detail::FullCoordinateState x_;
};

std::unique_ptr<Sim> make_sim(const NonholonomicSetup& nh, const InputVec& u0) {
  const NonholonomicVehicle kind = nh.vehicle;
  std::shared_ptr<const RdpModel<SE2>> rdp_model;
  switch (kind) {
    case NonholonomicVehicle::Generated:
      if (nh.method != NonholonomicMethod::Rdp)
        throw InputError("method " + method_name(nh.method) +
                         " is not available for a generated vehicle; use rdp");
      rdp_model = nh.generated;
      break;
    case NonholonomicVehicle::Car:
      rdp_model = std::make_shared<const CarModel>(nh.car);
      break;
    case NonholonomicVehicle::Snakeboard:
      rdp_model = std::make_shared<const SnakeboardModel>(nh.snakeboard, nh.prescribe_shape);
      break;
    case NonholonomicVehicle::Sleigh:
      rdp_model = std::make_shared<const SleighModel>(nh.sleigh);
      break;
  }
  if (nh.method == NonholonomicMethod::Rdp) {
    RdpOptions opt;
    opt.alpha = nh.alpha;
    opt.map = nh.map;
    opt.tangent = nh.tangent;
    opt.newton = nh.newton;
    return std::make_unique<RdpSim>(kind, nh, rdp_model, opt, u0);
  }
  if (kind == NonholonomicVehicle::Car) {
    if (nh.method == NonholonomicMethod::RdpExplicit)
      return std::make_unique<CarExplicitSim>(nh, u0[1]);
    if (nh.method == NonholonomicMethod::Rk4) return std::make_unique<CarRk4Sim>(nh, u0[1]);
    throw InputError("method " + method_name(nh.method) + " is not available for the car");
  }
  if (nh.method == NonholonomicMethod::RdpExplicit)
    throw InputError("method rdp_explicit is for the car only");
  if (nh.prescribe_shape) throw InputError("prescribed shape velocities need method rdp");
  // Initial body velocity from the same data as the RDP start.
  Vec3 xi0 = Vec3::Zero();
  std::shared_ptr<const NonholonomicModel> full;
  if (kind == NonholonomicVehicle::Sleigh) {
    xi0 << nh.omega, nh.v1, -nh.sleigh.a * nh.omega;
    full = std::make_shared<const ChaplyginSleigh>(nh.sleigh.J, nh.sleigh.m, nh.sleigh.a);
  } else {
    ConnectionMat<SE2> A;
    SymBasisMat<SE2> E;
    rdp_model->connection(nh.shape, A, nullptr);
    rdp_model->symmetry_basis(nh.shape, E, nullptr);
    const double w = (nh.v1 + (A * nh.shape_velocity)[1]) / E(1, 0);
    xi0 = E.col(0) * w - A * nh.shape_velocity;
    const SnakeboardParams& p = nh.snakeboard;
    full = std::make_shared<const Snakeboard>(p.I, p.J, p.m, p.l);
  }
  return std::make_unique<FullSim>(kind, nh, nh.method, nh.newton, full, xi0);
}

// The driver's view of a Sim: the state is cloned at each checkpoint so that a failed step
// can be retried from its start.
class NhSystem final : public sim::System {
 public:
  // The Sims point into *setup, which the system keeps alive.
  NhSystem(std::shared_ptr<const NonholonomicSetup> setup, std::unique_ptr<Sim> sim)
      : setup_(std::move(setup)),
        kind_(setup_->vehicle),
        controls_(setup_->controls ? setup_->controls
                                   : std::make_shared<const ConstantSignal>(
                                         Eigen::VectorXd::Zero(num_controls(*setup_)))),
        sim_(std::move(sim)),
        nu_(num_controls(*setup_)) {
    const NonholonomicVehicle kind = kind_;
    const int nr = num_shape(*setup_);
    std::vector<std::string> shape_names;
    if (kind == NonholonomicVehicle::Car) shape_names = {"psi", "sigma"};
    if (kind == NonholonomicVehicle::Snakeboard) shape_names = {"psi", "phi"};
    if (kind == NonholonomicVehicle::Generated) shape_names = numbered("r", nr);
    std::vector<std::string> rates;
    for (const auto& n : shape_names) rates.push_back(n + "_dot");
    const std::vector<std::string> controls = numbered("u", nu_);
    layout_.add("", {"t"}, {});
    layout_.add("pose", {"theta", "x", "y"}, {3});
    layout_.add("shape", shape_names, {std::size_t(nr)});
    layout_.add("shape_velocity", rates, {std::size_t(nr)});
    layout_.add("body_velocity", {"omega", "v1", "v2"}, {3});
    layout_.add("energy", {"energy"}, {});
    layout_.add("constraint_violation", {"constraint_violation"}, {});
    layout_.add("controls", controls, {std::size_t(nu_)});
    cur_ = sim_->sample();
  }

  const sim::Layout& layout() const override { return layout_; }
  void checkpoint() override {
    if (!saved_) saved_ = sim_->clone();  // once; then copied in place
    sim_->copy_to(*saved_);
    saved_cur_ = cur_;
    saved_setup_ = setup_;
    saved_fresh_ = last_set_.fresh();
  }
  void rollback() override {
    saved_->copy_to(*sim_);
    cur_ = saved_cur_;
    setup_ = saved_setup_;
    last_set_.restore(saved_fresh_);
  }
  sim::StepStatus step(double t_k, double dt) override {
    last_set_.moved();
    controls_.begin_step(t_k);
    const NewtonStatus st = sim_->step(t_k, dt, controls_);
    if (st.converged) cur_ = sim_->sample();
    return {st.converged, st.iterations, st.residual_norm, {}};
  }

  // The data a scene's initial state gives: pose (theta, x, y), shape and shape velocities
  // (those the controls prescribe included: RDP carries the last segment's), and the body
  // velocity components the vehicle takes as data (sleigh: omega, v1; snakeboard: v1;
  // generated: the locked velocity w).
  int state_size() const override { return int(state_names().size()); }
  std::vector<std::string> state_names() const override {
    std::vector<std::string> names = {"theta", "x", "y"};
    const int nr = num_shape(*setup_);
    for (int i = 0; i < nr; ++i) names.push_back(layout_.columns[std::size_t(4 + i)]);
    for (int i = 0; i < nr; ++i) names.push_back(layout_.columns[std::size_t(4 + nr + i)]);
    if (kind_ == NonholonomicVehicle::Sleigh) names.insert(names.end(), {"omega", "v1"});
    if (kind_ == NonholonomicVehicle::Snakeboard) names.push_back("v1");
    if (kind_ == NonholonomicVehicle::Generated)
      for (const std::string& w : numbered("w", int(setup_->locked_velocity.size())))
        names.push_back(w);
    return names;
  }
  void get_state(std::span<double> x) const override {
    if (last_set_.get(x)) return;
    std::size_t c = 0;
    x[c++] = cur_.theta;
    x[c++] = cur_.x;
    x[c++] = cur_.y;
    const int nr = num_shape(*setup_);
    for (int i = 0; i < nr; ++i) x[c++] = cur_.r[i];
    for (int i = 0; i < nr; ++i) x[c++] = cur_.rdot[i];
    if (kind_ == NonholonomicVehicle::Sleigh || kind_ == NonholonomicVehicle::Snakeboard) {
      if (kind_ == NonholonomicVehicle::Sleigh) x[c++] = cur_.xi[0];
      x[c++] = cur_.xi[1];
    }
    for (Eigen::Index i = 0; kind_ == NonholonomicVehicle::Generated && i < cur_.w.size(); ++i)
      x[c++] = cur_.w[i];
  }
  // Starts the method anew from the setup with this initial state.
  void set_state(std::span<const double> x) override {
    check_state("nonholonomic", state_names(), x);
    auto setup = std::make_shared<NonholonomicSetup>(*setup_);
    std::size_t c = 0;
    setup->theta = x[c++];
    setup->x = x[c++];
    setup->y = x[c++];
    const int nr = num_shape(*setup_);
    for (int i = 0; i < nr; ++i) setup->shape[i] = x[c++];
    // The shape velocities the controls prescribe start as given, as inputs u0 would.
    InputVec u0 = InputVec::Zero(nu_);
    for (int i = 0; i < nr; ++i) {
      setup->shape_velocity[i] = x[c++];
      if (prescribed(i)) u0[i] = setup->shape_velocity[i];
    }
    if (kind_ == NonholonomicVehicle::Sleigh) setup->omega = x[c++];
    if (kind_ == NonholonomicVehicle::Sleigh || kind_ == NonholonomicVehicle::Snakeboard)
      setup->v1 = x[c++];
    for (Eigen::Index i = 0; kind_ == NonholonomicVehicle::Generated && i < setup->locked_velocity.size(); ++i)
      setup->locked_velocity[i] = x[c++];
    std::unique_ptr<Sim> sim = make_sim(*setup, u0);
    sim_ = std::move(sim);
    setup_ = std::move(setup);
    cur_ = sim_->sample();
    last_set_.set(x);
  }
  bool has_residual() const override { return sim_->has_residual(); }
  ResidualPoint residual_point(double t_k, double dt) const override {
    if (!sim_->has_residual()) return System::residual_point(t_k, dt);
    return sim_->residual_point(t_k, dt, controls_.inner());
  }
  void residual(double t_k, double dt, const ResidualPoint& at, ResidualBlocks& out,
                bool jacobians) const override {
    if (!sim_->has_residual()) return System::residual(t_k, dt, at, out, jacobians);
    if (at.u.size() != nu_)
      throw InputError("nonholonomic residual: u has " + std::to_string(at.u.size()) +
                       " entries, the vehicle takes " + std::to_string(nu_));
    sim_->residual(dt, at, out, jacobians);
  }

  double energy() const override { return cur_.energy; }
  bool has_constraint() const override { return true; }
  double constraint_violation() const override { return cur_.violation; }
  void row(double t, std::span<double> out) const override {
    const InputVec u = controls_at(t);
    const int nr = num_shape(*setup_);
    std::size_t c = 0;
    out[c++] = t;
    out[c++] = cur_.theta;
    out[c++] = cur_.x;
    out[c++] = cur_.y;
    for (int i = 0; i < nr; ++i) out[c++] = cur_.r[i];
    for (int i = 0; i < nr; ++i) out[c++] = cur_.rdot[i];
    for (int i = 0; i < 3; ++i) out[c++] = cur_.xi[i];
    out[c++] = cur_.energy;
    out[c++] = cur_.violation;
    for (int i = 0; i < nu_; ++i) out[c++] = u[i];
  }

 private:
  // Shape velocities the controls give (the car's steering rate; the snakeboard's with
  // prescribe_shape; a generated vehicle's prescribed shape coordinates).
  bool prescribed(int i) const {
    switch (kind_) {
      case NonholonomicVehicle::Car:
        return i == 1;
      case NonholonomicVehicle::Snakeboard:
        return setup_->prescribe_shape;
      case NonholonomicVehicle::Generated:
        return setup_->generated->prescribed(i);
      case NonholonomicVehicle::Sleigh:
        return false;
    }
    return false;
  }
  InputVec controls_at(double t) const { return eval_at(controls_.inner(), t); }

  // The Sims point into the setup of their start: the checkpoint's is kept alive with it.
  std::shared_ptr<const NonholonomicSetup> setup_, saved_setup_;
  NonholonomicVehicle kind_;
  StepSignal controls_;  // zero when the setup has none
  std::unique_ptr<Sim> sim_, saved_;
  int nu_;
  sim::Layout layout_;
  Sample cur_, saved_cur_;
  LastSetState last_set_;
  bool saved_fresh_ = false;
};

}  // namespace

std::unique_ptr<System> make_nonholonomic_system(const NonholonomicSetup& setup) {
  if (setup.full_coordinates) return make_generated_nonholonomic_system(setup);
  if (setup.vehicle == NonholonomicVehicle::Generated &&
      (!setup.generated || setup.locked_velocity.size() != setup.generated->num_symmetry()))
    throw InputError("generated RDP vehicle: no model, or locked velocity w_0 of size " +
                     std::to_string(setup.locked_velocity.size()) + " for its " +
                     std::to_string(setup.generated ? setup.generated->num_symmetry() : 0) +
                     " symmetry directions");
  const int nr = num_shape(setup), nu = num_controls(setup);
  if ((setup.controls ? setup.controls->size() : 0) != nu || setup.shape.size() != nr ||
      setup.shape_velocity.size() != nr)
    throw InputError(
        "nonholonomic vehicle: controls or initial state sizes do not match the vehicle");
  InputVec u0 = InputVec::Zero(nu);
  if (setup.controls) eval_into(*setup.controls, 0.0, u0);
  auto owned = std::make_shared<const NonholonomicSetup>(setup);
  std::unique_ptr<Sim> sim = make_sim(*owned, u0);
  return std::make_unique<NhSystem>(std::move(owned), std::move(sim));
}

}  // namespace marsden::sim
