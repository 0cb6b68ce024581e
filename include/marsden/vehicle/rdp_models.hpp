// Nonholonomic vehicle models for the RDP integrator (vehicles §5.2) on G = SE(2), tangent
// order xi = (omega, v1, v2), and their continuous references for tests:
//   - the car of Kelly and Murray (§5.2.1, connection eq. (18)), through the general
//     Newton path and through the paper's explicit update;
//   - the snakeboard (§5.2.2, eq. (19)) with the connection corrected in docs/papers.md;
//   - the Chaplygin sleigh (docs/papers.md).
#pragma once

#include "marsden/description/car.hpp"
#include "marsden/vehicle/rdp.hpp"

namespace marsden::vehicle {

// l = 1/2 z^T M z with z = (u, xi) and M constant: the three vehicles here. l does not
// depend on r, so dl/dr = 0.
class ConstantMetricRdpModel : public RdpModel<SE2> {
 public:
  ConstantMetricRdpModel(int num_shape, int num_symmetry,
                         const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0,
                                             kRdpMaxShape + 3, kRdpMaxShape + 3>& metric);
  int num_shape() const override { return nr_; }
  int num_symmetry() const override { return nb_; }
  double lagrangian(const ShapeVec& r, const ShapeVec& u, const Vec3& xi, LagVec* grad,
                    LagMat* hess) const override;
  // Kinetic energy l at (u, xi): the conserved energy of the unforced vehicles.
  double energy(const ShapeVec& u, const Vec3& xi) const;

 private:
  int nr_, nb_;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxShape + 3, kRdpMaxShape + 3>
      metric_;
};

// ---------------------------------------------------------------- car (vehicles §5.2.1)

// CarParams: marsden/description/car.hpp (shared with the full-coordinate NhCar).

// Shape r = (psi, sigma) (rear wheel angle, tan of steering angle), u = (u_psi, u_sigma).
// Controls: the torque f_psi (force on psi; f_sigma is ignored) and the steering rate
// u_sigma, a prescribed velocity. No symmetry directions (n_b = 0): xi = -A(r) u.
class CarModel final : public ConstantMetricRdpModel {
 public:
  explicit CarModel(const CarParams& p);
  const CarParams& params() const { return p_; }
  bool prescribed(int i) const override { return i == 1; }
  // eq. (18): A = [[-(rho/l) sigma, 0], [-rho, 0], [0, 0]].
  void connection(const ShapeVec& r, ConnectionMat<SE2>& A,
                  std::array<ConnectionMat<SE2>, kRdpMaxShape>* dA) const override;
  void symmetry_basis(const ShapeVec& r, SymBasisMat<SE2>& E,
                      std::array<SymBasisMat<SE2>, kRdpMaxShape>* dE) const override;

 private:
  CarParams p_;
};

// The paper's explicit car update (§5.2.1, tau = exp, any alpha). p_left is the left
// momentum conjugate to psi, (I + m rho^2 + K rho^2 sigma_k sigma_k-1+alpha / l^2) u_k-1
// + alpha dt f_k-1+alpha, i.e. p^-_psi - A_psi(r_k)^T mu^- of the general path.
struct CarExplicitState {
  double theta = 0.0, x = 0.0, y = 0.0;
  double psi = 0.0, sigma = 0.0;
  double p_left = 0.0;
  double u_psi = 0.0;  // last segment's wheel rate (output)
};

// Continuous start: p_left = (I + m rho^2 + K rho^2 sigma^2 / l^2) psi_dot_0.
CarExplicitState car_explicit_initial(const CarParams& p, double theta, double x, double y,
                                      double psi, double sigma, double psi_dot);

// One step with torque f_k+alpha and steering rate u_sigma_k (an input). It equals the
// general path with tau = exp and C = C_TLN to round-off: A(r_k)^T ad_xi^T mu vanishes for
// the car, so DEP reduces to mu_k - mu_k-1 as the paper writes. With C = d exp^-1 exactly
// the ad^2 term survives once sigma varies: an O(dt^3) local difference (test_rdp).
void car_explicit_step(const CarParams& p, double dt, double alpha, double f_ka, double u_sigma_k,
                       CarExplicitState& s);

// Continuous car (docs/papers.md): state (theta, x, y, psi, sigma, psi_dot).
using CarContinuousState = Eigen::Matrix<double, 6, 1>;
CarContinuousState car_continuous_rhs(const CarParams& p, const CarContinuousState& s, double f_psi,
                                      double u_sigma);

// ------------------------------------------------------- snakeboard (vehicles §5.2.2)

struct SnakeboardParams {
  double m = 1.0;   // mass of the board
  double l = 0.5;   // distance from the centre to the wheel axles
  double I = 0.2;   // rotor inertia
  double J = 0.05;  // inertia of each wheel pair about its steering axis
};

// Shape r = (psi, phi) (rotor angle, steering angle), u = (psi_dot, phi_dot);
// l = 1/2 (I psi_dot^2 + 2 I psi_dot omega + m l^2 omega^2 + 2 J phi_dot^2 + m |v|^2).
// With prescribe_shape the shape velocities are inputs (a gait); otherwise the controls are
// torques on (psi, phi).
class SnakeboardModel final : public ConstantMetricRdpModel {
 public:
  SnakeboardModel(const SnakeboardParams& p, bool prescribe_shape);
  const SnakeboardParams& params() const { return p_; }
  bool prescribed(int) const override { return prescribe_; }
  // docs/papers.md: A = [[(I/(m l^2)) sin^2 phi, 0], [-(I/(2 m l)) sin 2phi, 0], [0, 0]].
  void connection(const ShapeVec& r, ConnectionMat<SE2>& A,
                  std::array<ConnectionMat<SE2>, kRdpMaxShape>* dA) const override;
  // e1 = (sin 2phi, -2 l cos^2 phi, 0), eq. (19) in body coordinates.
  void symmetry_basis(const ShapeVec& r, SymBasisMat<SE2>& E,
                      std::array<SymBasisMat<SE2>, kRdpMaxShape>* dE) const override;
  // Nonholonomic momentum p = <dl/dxi, e1(r)>.
  double nonholonomic_momentum(const ShapeVec& r, const ShapeVec& u, const Vec3& xi) const;

 private:
  SnakeboardParams p_;
  bool prescribe_;
};

// ------------------------------------------------------------------- Chaplygin sleigh

struct SleighParams {
  double m = 1.0;  // mass
  double J = 0.1;  // inertia about the centre of mass
  double a = 0.5;  // skate position on the body x axis
};

// No shape; xi at the centre of mass; constraint v2 + a omega = 0, so
// s = span{(1, 0, -a), (0, 1, 0)}: w = (omega, v1).
class SleighModel final : public ConstantMetricRdpModel {
 public:
  explicit SleighModel(const SleighParams& p);
  const SleighParams& params() const { return p_; }
  void connection(const ShapeVec& r, ConnectionMat<SE2>& A,
                  std::array<ConnectionMat<SE2>, kRdpMaxShape>* dA) const override;
  void symmetry_basis(const ShapeVec& r, SymBasisMat<SE2>& E,
                      std::array<SymBasisMat<SE2>, kRdpMaxShape>* dE) const override;

 private:
  SleighParams p_;
};

// Continuous sleigh: state (theta, x, y, omega, v1); (J + m a^2) omega_dot = m a v1 omega,
// v1_dot = -a omega^2, and the centre of mass moves with body velocity (v1, -a omega).
using SleighContinuousState = Eigen::Matrix<double, 5, 1>;
SleighContinuousState sleigh_continuous_rhs(const SleighParams& p, const SleighContinuousState& s);

}  // namespace marsden::vehicle
