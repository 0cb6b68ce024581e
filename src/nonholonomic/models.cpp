#include <cmath>
#include <string>

#include <Eigen/Cholesky>

#include "marsden/error.hpp"
#include "marsden/nonholonomic/model.hpp"

namespace marsden::nonholonomic {

NonholonomicModel::NonholonomicModel(int dof, int num_constraints, int num_controls)
    : n_(dof), m_(num_constraints), c_(num_controls) {
  if (dof < 1 || dof > kNhMaxDof || num_constraints < 1 || num_constraints >= dof ||
      num_controls < 0 || num_controls > kNhMaxDof)
    throw InputError("NonholonomicModel: need 0 < m < n <= " + std::to_string(kNhMaxDof) +
                     " and 0 <= c <= " + std::to_string(kNhMaxDof) + ", got n = " +
                     std::to_string(dof) + ", m = " + std::to_string(num_constraints) +
                     ", c = " + std::to_string(num_controls));
}

void NonholonomicModel::mass_derivative(const NhVec&, int, NhMat& dM) const {
  dM.setZero(n_, n_);
}
void NonholonomicModel::mass_second_derivative(const NhVec&, int, int, NhMat& ddM) const {
  ddM.setZero(n_, n_);
}
void NonholonomicModel::potential_gradient(const NhVec&, NhVec& g) const { g.setZero(n_); }
void NonholonomicModel::potential_hessian(const NhVec&, NhMat& H) const { H.setZero(n_, n_); }
void NonholonomicModel::control_directions(const NhVec&, NhMat& B) const { B.setZero(n_, c_); }
void NonholonomicModel::force(const NhVec&, const NhVec&, NhVec& Q, NhMat* dQ_dq,
                              NhMat* dQ_dqdot) const {
  Q.setZero(n_);
  if (dQ_dq) dQ_dq->setZero(n_, n_);
  if (dQ_dqdot) dQ_dqdot->setZero(n_, n_);
}
bool NonholonomicModel::has_prescribed() const {
  for (int i = 0; i < n_; ++i)
    if (prescribed(i)) return true;
  return false;
}

double nh_energy(const NonholonomicModel& model, const NhVec& q, const NhVec& qdot) {
  NhMat M;
  model.mass(q, M);
  return 0.5 * qdot.dot(M * qdot) + model.potential(q);
}

void nh_projectors(const NonholonomicModel& model, const NhVec& q, NhMat& P_star,
                   NhMat& Q_star) {
  const int n = model.dof();
  NhMat M, mu;
  model.mass(q, M);
  model.constraint(q, mu);
  const Eigen::LLT<NhMat> M_llt(M);
  const NhMat Minv_muT = M_llt.solve(mu.transpose());  // (n x m)
  const NhMat S = mu * Minv_muT;                        // (m x m), SPD as mu has full rank
  // Q* = mu^T S^-1 mu M^-1 = mu^T S^-1 (M^-1 mu^T)^T (M symmetric).
  Q_star = mu.transpose() * Eigen::LLT<NhMat>(S).solve(Minv_muT.transpose());
  P_star = NhMat::Identity(n, n) - Q_star;
}

ChaplyginSleigh::ChaplyginSleigh(double inertia, double mass, double a)
    : NonholonomicModel(3, 1, 0), J_(inertia), m_(mass), a_(a) {
  if (!(inertia > 0.0) || !(mass > 0.0) || !std::isfinite(a) || !std::isfinite(inertia) ||
      !std::isfinite(mass))
    throw InputError("ChaplyginSleigh: inertia and mass must be positive and finite, a finite");
}

void ChaplyginSleigh::mass(const NhVec&, NhMat& M) const {
  M.setZero(3, 3);
  M.diagonal() << J_, m_, m_;
}

void ChaplyginSleigh::constraint(const NhVec& q, NhMat& mu) const {
  mu.resize(1, 3);
  mu << a_, -std::sin(q[0]), std::cos(q[0]);
}

void ChaplyginSleigh::constraint_derivative(const NhVec& q, int i, NhMat& dmu) const {
  dmu.setZero(1, 3);
  if (i == 0) dmu << 0.0, -std::cos(q[0]), -std::sin(q[0]);
}

Snakeboard::Snakeboard(double rotor_inertia, double steering_inertia, double mass, double l)
    : NonholonomicModel(5, 2, 2), I_(rotor_inertia), J_(steering_inertia), m_(mass), l_(l) {
  if (!(rotor_inertia > 0.0) || !(steering_inertia > 0.0) || !(mass > 0.0) || !(l > 0.0) ||
      !(mass * l * l > rotor_inertia) || !std::isfinite(mass * l * l + rotor_inertia + J_))
    throw InputError("Snakeboard: need I, J, m, l > 0 and m l^2 > I (M positive definite)");
}

void Snakeboard::mass(const NhVec&, NhMat& M) const {
  // vehicles §5.2.2: rotor psi couples to theta through I.
  M.setZero(5, 5);
  M(0, 0) = I_;
  M(0, 2) = M(2, 0) = I_;
  M(1, 1) = 2.0 * J_;
  M(2, 2) = m_ * l_ * l_;
  M(3, 3) = m_;
  M(4, 4) = m_;
}

void Snakeboard::constraint(const NhVec& q, NhMat& mu) const {
  const double phi = q[1], th = q[2];
  mu.setZero(2, 5);
  mu.row(0).tail<3>() << -l_ * std::cos(phi), -std::sin(th + phi), std::cos(th + phi);
  mu.row(1).tail<3>() << l_ * std::cos(phi), -std::sin(th - phi), std::cos(th - phi);
}

void Snakeboard::constraint_derivative(const NhVec& q, int i, NhMat& dmu) const {
  const double phi = q[1], th = q[2];
  dmu.setZero(2, 5);
  if (i == 1) {
    dmu.row(0).tail<3>() << l_ * std::sin(phi), -std::cos(th + phi), -std::sin(th + phi);
    dmu.row(1).tail<3>() << -l_ * std::sin(phi), std::cos(th - phi), std::sin(th - phi);
  } else if (i == 2) {
    dmu.row(0).tail<3>() << 0.0, -std::cos(th + phi), -std::sin(th + phi);
    dmu.row(1).tail<3>() << 0.0, -std::cos(th - phi), -std::sin(th - phi);
  }
}

void Snakeboard::control_directions(const NhVec&, NhMat& B) const {
  B.setZero(5, 2);
  B(0, 0) = 1.0;
  B(1, 1) = 1.0;
}

NhCar::NhCar(const CarParams& p, double steering_inertia)
    : NonholonomicModel(5, 3, 1), p_(p), J_s_(steering_inertia) {
  if (!(p.m > 0.0) || !(p.I > 0.0) || !(p.K > 0.0) || !(p.rho > 0.0) || !(p.l > 0.0) ||
      !(steering_inertia > 0.0) ||
      !std::isfinite(p.m + p.I + p.K + p.rho + p.l + steering_inertia))
    throw InputError("NhCar: need m, I, K, rho, l and the steering inertia J_s positive and "
                     "finite");
}

void NhCar::mass(const NhVec&, NhMat& M) const {
  M.setZero(5, 5);
  M.diagonal() << p_.I, J_s_, p_.K, p_.m, p_.m;
}

void NhCar::constraint(const NhVec& q, NhMat& mu) const {
  const double sigma = q[1], c = std::cos(q[2]), s = std::sin(q[2]);
  mu.setZero(3, 5);
  mu.row(0) << -p_.rho, 0.0, 0.0, c, s;
  mu.row(1) << 0.0, 0.0, 0.0, -s, c;
  mu.row(2) << -(p_.rho / p_.l) * sigma, 0.0, 1.0, 0.0, 0.0;
}

void NhCar::constraint_derivative(const NhVec& q, int i, NhMat& dmu) const {
  dmu.setZero(3, 5);
  if (i == 1) {
    dmu(2, 0) = -p_.rho / p_.l;
  } else if (i == 2) {
    const double c = std::cos(q[2]), s = std::sin(q[2]);
    dmu(0, 3) = -s;
    dmu(0, 4) = c;
    dmu(1, 3) = -c;
    dmu(1, 4) = -s;
  }
}

void NhCar::control_directions(const NhVec&, NhMat& B) const {
  B.setZero(5, 1);
  B(0, 0) = 1.0;
}

}  // namespace marsden::nonholonomic
