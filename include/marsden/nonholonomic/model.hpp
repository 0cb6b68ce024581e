// Nonholonomic mechanical systems in full coordinates q in R^n (nonholonomic paper §4,
// docs/papers.md "Simulating nonholonomic dynamics"):
//   L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q),   mu(q) qdot = 0   (mu: m x n, full rank),
// with optional control forces B(q) u (B: n x c) and an optional generalized force
// Q(q, qdot) (n): d/dt dL/dqdot - dL/dq = Q + B u + mu^T lambda. Sizes are run-time, at
// most kNhMaxDof, and every matrix is fixed-max-size so that nothing allocates inside a step.
#pragma once

#include <Eigen/Core>

#include "marsden/description/car.hpp"

namespace marsden::nonholonomic {

inline constexpr int kNhMaxDof = 8;

using NhVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kNhMaxDof, 1>;
using NhMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kNhMaxDof, kNhMaxDof>;

// Immutable model. Derivatives are with respect to the coordinates q_i; the second
// derivatives of M and V are needed only for exact Newton Jacobians of the discrete
// residuals (a constant-M, V = 0 model leaves them at their zero defaults).
class NonholonomicModel {
 public:
  // Throws InputError unless 0 < m < n <= kNhMaxDof and 0 <= c <= kNhMaxDof.
  NonholonomicModel(int dof, int num_constraints, int num_controls);
  virtual ~NonholonomicModel() = default;

  int dof() const { return n_; }
  int num_constraints() const { return m_; }
  int num_controls() const { return c_; }

  virtual void mass(const NhVec& q, NhMat& M) const = 0;                    // (n x n)
  virtual void mass_derivative(const NhVec& q, int i, NhMat& dM) const;      // dM/dq_i
  virtual void mass_second_derivative(const NhVec& q, int i, int j, NhMat& ddM) const;
  virtual double potential(const NhVec&) const { return 0.0; }
  virtual void potential_gradient(const NhVec& q, NhVec& g) const;           // (n)
  virtual void potential_hessian(const NhVec& q, NhMat& H) const;            // (n x n)
  virtual void constraint(const NhVec& q, NhMat& mu) const = 0;              // (m x n)
  virtual void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const = 0;
  virtual void control_directions(const NhVec& q, NhMat& B) const;           // (n x c)
  // Generalized force Q(q, qdot) (n; N or N m per coordinate, like dL/dq) and, where the
  // pointers are given, dQ/dq and dQ/dqdot (n x n). Default: none; has_force() is false and
  // the integrators never call force(), so a model without one costs nothing.
  virtual bool has_force() const { return false; }
  virtual void force(const NhVec& q, const NhVec& qdot, NhVec& Q, NhMat* dQ_dq,
                     NhMat* dQ_dqdot) const;
  // Coordinates whose trajectory is an input (e.g. a steering angle whose rate is
  // commanded). In every discrete step the equation of motion of such a coordinate is
  // replaced by q_k+1[i] = q_prescribed[i] (integrators.hpp). Default: none.
  virtual bool prescribed(int /*i*/) const { return false; }
  bool has_prescribed() const;

 private:
  int n_, m_, c_;
};

// E = 1/2 qdot^T M(q) qdot + V(q).
double nh_energy(const NonholonomicModel& model, const NhVec& q, const NhVec& qdot);

// The M-orthogonal projectors of docs/papers.md acting on momenta (covectors) at q:
//   P* = I - mu^T S^-1 mu M^-1,  Q* = mu^T S^-1 mu M^-1,  S = mu M^-1 mu^T.
void nh_projectors(const NonholonomicModel& model, const NhVec& q, NhMat& P_star,
                   NhMat& Q_star);

// Chaplygin sleigh in q = (theta, x, y), (x, y) the centre of mass; skate at distance a
// along the body x axis. Constraint (skate slides along the body axis):
//   -sin(theta) xdot + cos(theta) ydot + a thetadot = 0, i.e. v2 + a omega = 0 in the body.
class ChaplyginSleigh final : public NonholonomicModel {
 public:
  ChaplyginSleigh(double inertia, double mass, double a);
  void mass(const NhVec& q, NhMat& M) const override;
  void constraint(const NhVec& q, NhMat& mu) const override;
  void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const override;
  double a() const { return a_; }
  double body_mass() const { return m_; }
  double body_inertia() const { return J_; }

 private:
  double J_, m_, a_;
};

// Snakeboard in q = (psi, phi, theta, x, y) (vehicles §5.2.2): rotor psi, steering phi,
// board pose (theta, x, y). Mass matrix of §5.2.2 (needs m l^2 > I), constraints
//   -l cos(phi) thetadot - sin(theta + phi) xdot + cos(theta + phi) ydot = 0,
//    l cos(phi) thetadot - sin(theta - phi) xdot + cos(theta - phi) ydot = 0,
// controls: torques on psi and phi (B = [e_psi, e_phi]).
class Snakeboard final : public NonholonomicModel {
 public:
  Snakeboard(double rotor_inertia, double steering_inertia, double mass, double l);
  void mass(const NhVec& q, NhMat& M) const override;
  void constraint(const NhVec& q, NhMat& mu) const override;
  void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const override;
  void control_directions(const NhVec& q, NhMat& B) const override;
  double l() const { return l_; }

 private:
  double I_, J_, m_, l_;
};

// Car of Kelly and Murray (vehicles §5.2.1) in full coordinates q = (psi, sigma, theta,
// x, y): rear wheel angle psi, sigma = tan(steering angle), heading theta, rear axle
// position (x, y). Parameters from CarParams (vehicle/rdp_models.hpp):
//   L = 1/2 (I psi_dot^2 + J_s sigma_dot^2 + K theta_dot^2 + m (x_dot^2 + y_dot^2)),
// constraints (wheels roll without slipping, front axle steered by sigma):
//    cos(theta) x_dot + sin(theta) y_dot - rho psi_dot = 0,
//   -sin(theta) x_dot + cos(theta) y_dot              = 0,
//    theta_dot - (rho / l) sigma psi_dot              = 0,
// control: a torque on psi (B = e_psi). sigma is prescribed (its rate is the steering
// input). J_s > 0 is an arbitrary steering inertia that only makes M invertible: no
// constraint involves sigma_dot and M is diagonal, so mu M^-1 e_sigma = 0, the sigma row
// of every discrete equation is the one replaced by the prescription, and J_s enters no
// other row: it cannot affect the motion (tested). Then the discrete schemes are those
// with an unknown actuator force on sigma, and the continuous limit is docs/papers.md's
//   (I + m rho^2) psi_ddot + (K rho^2 / l^2) sigma d/dt(sigma psi_dot) = f_psi.
class NhCar final : public NonholonomicModel {
 public:
  explicit NhCar(const CarParams& p, double steering_inertia = 1.0);
  void mass(const NhVec& q, NhMat& M) const override;
  void constraint(const NhVec& q, NhMat& mu) const override;
  void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const override;
  void control_directions(const NhVec& q, NhMat& B) const override;
  bool prescribed(int i) const override { return i == 1; }
  const CarParams& params() const { return p_; }
  double steering_inertia() const { return J_s_; }

 private:
  CarParams p_;
  double J_s_;
};

}  // namespace marsden::nonholonomic
