#include "marsden/vehicle/rdp_models.hpp"

#include <cmath>

#include "marsden/error.hpp"

namespace marsden::vehicle {

ConstantMetricRdpModel::ConstantMetricRdpModel(
    int num_shape, int num_symmetry,
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxShape + 3,
                        kRdpMaxShape + 3>& metric)
    : nr_(num_shape), nb_(num_symmetry), metric_(metric) {
  if (nr_ < 0 || nr_ > kRdpMaxShape || nb_ < 0 || nb_ > 3)
    throw InputError("RDP model: need 0 <= n_r <= 4 and 0 <= n_b <= 3");
  if (metric_.rows() != nr_ + 3 || metric_.cols() != nr_ + 3 || !metric_.allFinite() ||
      !metric_.isApprox(metric_.transpose(), 1e-12))
    throw InputError("RDP model: metric must be a finite symmetric (n_r + 3) square matrix");
}

double ConstantMetricRdpModel::lagrangian(const ShapeVec&, const ShapeVec& u, const Vec3& xi,
                                          LagVec* grad, LagMat* hess) const {
  const int nz = nr_ + 3;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kRdpMaxShape + 3, 1> z(nz);
  z << u, xi;
  const auto Mz = (metric_ * z).eval();
  if (grad) {
    grad->setZero(nr_ + nz);
    grad->tail(nz) = Mz;
  }
  if (hess) {
    hess->setZero(nr_ + nz, nr_ + nz);
    hess->bottomRightCorner(nz, nz) = metric_;
  }
  return 0.5 * z.dot(Mz);
}

double ConstantMetricRdpModel::energy(const ShapeVec& u, const Vec3& xi) const {
  return lagrangian(ShapeVec::Zero(nr_), u, xi, nullptr, nullptr);
}

namespace {

using Metric =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxShape + 3, kRdpMaxShape + 3>;

Metric car_metric(const CarParams& p) {
  if (!(p.m > 0 && p.I > 0 && p.K > 0 && p.rho > 0 && p.l > 0))
    throw InputError("CarParams: m, I, K, rho, l must be positive");
  Metric M = Metric::Zero(5, 5);
  M.diagonal() << p.I, 0.0, p.K, p.m, p.m;  // no steering inertia (§5.2.1)
  return M;
}

Metric snakeboard_metric(const SnakeboardParams& p) {
  if (!(p.m > 0 && p.l > 0 && p.I > 0 && p.J > 0))
    throw InputError("SnakeboardParams: m, l, I, J must be positive");
  Metric M = Metric::Zero(5, 5);
  // §5.2.2 mass matrix over (psi_dot, phi_dot, omega, v1, v2)
  M(0, 0) = p.I;
  M(0, 2) = M(2, 0) = p.I;
  M(1, 1) = 2.0 * p.J;
  M(2, 2) = p.m * p.l * p.l;
  M(3, 3) = M(4, 4) = p.m;
  return M;
}

Metric sleigh_metric(const SleighParams& p) {
  if (!(p.m > 0 && p.J > 0) || !std::isfinite(p.a))
    throw InputError("SleighParams: m and J must be positive, a finite");
  Metric M = Metric::Zero(3, 3);
  M.diagonal() << p.J, p.m, p.m;
  return M;
}

}  // namespace

// ------------------------------------------------------------------------------ car

CarModel::CarModel(const CarParams& p) : ConstantMetricRdpModel(2, 0, car_metric(p)), p_(p) {}

void CarModel::connection(const ShapeVec& r, ConnectionMat<SE2>& A,
                          std::array<ConnectionMat<SE2>, kRdpMaxShape>* dA) const {
  A.setZero(3, 2);
  A(0, 0) = -(p_.rho / p_.l) * r[1];  // eq. (18)
  A(1, 0) = -p_.rho;
  if (dA) {
    (*dA)[0].setZero(3, 2);
    (*dA)[1].setZero(3, 2);
    (*dA)[1](0, 0) = -p_.rho / p_.l;
  }
}

void CarModel::symmetry_basis(const ShapeVec&, SymBasisMat<SE2>& E,
                              std::array<SymBasisMat<SE2>, kRdpMaxShape>* dE) const {
  E.resize(3, 0);
  if (dE)
    for (int j = 0; j < 2; ++j) (*dE)[j].resize(3, 0);
}

CarExplicitState car_explicit_initial(const CarParams& p, double theta, double x, double y,
                                      double psi, double sigma, double psi_dot) {
  CarExplicitState s;
  s.theta = theta;
  s.x = x;
  s.y = y;
  s.psi = psi;
  s.sigma = sigma;
  const double k = p.K * p.rho * p.rho / (p.l * p.l);
  s.p_left = (p.I + p.m * p.rho * p.rho + k * sigma * sigma) * psi_dot;
  s.u_psi = psi_dot;
  return s;
}

void car_explicit_step(const CarParams& p, double dt, double alpha, double f_ka, double u_sigma_k,
                       CarExplicitState& s) {
  const double k = p.K * p.rho * p.rho / (p.l * p.l);
  const double mI = p.I + p.m * p.rho * p.rho;
  const double sigma_ka = s.sigma + alpha * dt * u_sigma_k;
  // §5.2.1 shape equation, linear in u_k: explicit for any alpha.
  const double u = (s.p_left + dt * (1.0 - alpha) * f_ka) / (mI + k * s.sigma * sigma_ka);
  const double v = p.rho * u;
  const double w = (p.rho / p.l) * sigma_ka * u;
  // Closed-form exp on SE(2) (§5.2.1): (v/w)(sin(th + dt w) - sin th) written as
  // dt v cos(th + dt w/2) sinc(dt w/2), the same value without cancellation as w -> 0.
  const double half = 0.5 * dt * w;
  const double sinc = std::abs(half) > 1e-4 ? std::sin(half) / half : 1.0 - half * half / 6.0;
  const double th1 = s.theta + dt * w;
  s.x += dt * v * std::cos(s.theta + half) * sinc;
  s.y += dt * v * std::sin(s.theta + half) * sinc;
  s.theta = th1;
  s.psi += dt * u;
  const double sigma_kp1 = s.sigma + dt * u_sigma_k;
  s.p_left = (mI + k * sigma_kp1 * sigma_ka) * u + alpha * dt * f_ka;
  s.sigma = sigma_kp1;
  s.u_psi = u;
}

CarContinuousState car_continuous_rhs(const CarParams& p, const CarContinuousState& s, double f_psi,
                                      double u_sigma) {
  const double th = s[0], sigma = s[4], psid = s[5];
  const double k = p.K * p.rho * p.rho / (p.l * p.l);
  // (I + m rho^2) psi_dd + k sigma (sigma_dot psi_dot + sigma psi_dd) = f_psi
  const double psidd =
      (f_psi - k * sigma * u_sigma * psid) / (p.I + p.m * p.rho * p.rho + k * sigma * sigma);
  CarContinuousState d;
  d << (p.rho / p.l) * sigma * psid, p.rho * psid * std::cos(th), p.rho * psid * std::sin(th), psid,
      u_sigma, psidd;
  return d;
}

// ----------------------------------------------------------------------- snakeboard

SnakeboardModel::SnakeboardModel(const SnakeboardParams& p, bool prescribe_shape)
    : ConstantMetricRdpModel(2, 1, snakeboard_metric(p)), p_(p), prescribe_(prescribe_shape) {}

void SnakeboardModel::connection(const ShapeVec& r, ConnectionMat<SE2>& A,
                                 std::array<ConnectionMat<SE2>, kRdpMaxShape>* dA) const {
  const double phi = r[1], ml = p_.m * p_.l;
  A.setZero(3, 2);
  A(0, 0) = p_.I / (ml * p_.l) * std::sin(phi) * std::sin(phi);
  A(1, 0) = -p_.I / (2.0 * ml) * std::sin(2.0 * phi);
  if (dA) {
    (*dA)[0].setZero(3, 2);
    (*dA)[1].setZero(3, 2);
    (*dA)[1](0, 0) = p_.I / (ml * p_.l) * std::sin(2.0 * phi);
    (*dA)[1](1, 0) = -p_.I / ml * std::cos(2.0 * phi);
  }
}

void SnakeboardModel::symmetry_basis(const ShapeVec& r, SymBasisMat<SE2>& E,
                                     std::array<SymBasisMat<SE2>, kRdpMaxShape>* dE) const {
  const double phi = r[1], c = std::cos(phi);
  E.resize(3, 1);
  E << std::sin(2.0 * phi), -2.0 * p_.l * c * c, 0.0;
  if (dE) {
    (*dE)[0].setZero(3, 1);
    (*dE)[1].resize(3, 1);
    (*dE)[1] << 2.0 * std::cos(2.0 * phi), 2.0 * p_.l * std::sin(2.0 * phi), 0.0;
  }
}

double SnakeboardModel::nonholonomic_momentum(const ShapeVec& r, const ShapeVec& u,
                                              const Vec3& xi) const {
  LagVec grad;
  lagrangian(r, u, xi, &grad, nullptr);
  SymBasisMat<SE2> E;
  symmetry_basis(r, E, nullptr);
  return grad.tail<3>().dot(E.col(0));
}

// --------------------------------------------------------------------------- sleigh

SleighModel::SleighModel(const SleighParams& p)
    : ConstantMetricRdpModel(0, 2, sleigh_metric(p)), p_(p) {}

void SleighModel::connection(const ShapeVec&, ConnectionMat<SE2>& A,
                             std::array<ConnectionMat<SE2>, kRdpMaxShape>*) const {
  A.resize(3, 0);
}

void SleighModel::symmetry_basis(const ShapeVec&, SymBasisMat<SE2>& E,
                                 std::array<SymBasisMat<SE2>, kRdpMaxShape>*) const {
  E.setZero(3, 2);
  E(0, 0) = 1.0;  // rotation about the CoM with the skate's lateral slip removed
  E(2, 0) = -p_.a;
  E(1, 1) = 1.0;  // rolling along the skate
}

SleighContinuousState sleigh_continuous_rhs(const SleighParams& p, const SleighContinuousState& s) {
  const double th = s[0], w = s[3], v1 = s[4], v2 = -p.a * w;
  SleighContinuousState d;
  d << w, std::cos(th) * v1 - std::sin(th) * v2, std::sin(th) * v1 + std::cos(th) * v2,
      p.m * p.a * v1 * w / (p.J + p.m * p.a * p.a), -p.a * w * w;
  return d;
}

}  // namespace marsden::vehicle
