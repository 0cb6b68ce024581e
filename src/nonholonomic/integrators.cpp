// Nonholonomic integrators in full coordinates; equations in integrators.hpp.
#include "marsden/nonholonomic/integrators.hpp"

#include <string>

#include <Eigen/Cholesky>

#include "marsden/error.hpp"

namespace marsden::nonholonomic {
namespace {

// The prescription q_prescribed_kp1 is required (size n) when the model prescribes coordinates;
// nullptr is returned for models without any, so that the caller's pointer is ignored.
const NhVec* checked_prescription(const NonholonomicModel& model, const NhVec* q_prescribed,
                                  const char* where) {
  if (!model.has_prescribed()) return nullptr;
  if (!q_prescribed || q_prescribed->size() != model.dof())
    throw InputError(std::string(where) +
                     ": the model has prescribed coordinates; pass q_prescribed_kp1 of size " +
                     std::to_string(model.dof()));
  return q_prescribed;
}

// Rows of prescribed coordinates: r_i = dq_i - (q_prescribed_i - q_k_i), i.e. q_k+1[i] =
// q_prescribed[i] in the increment unknown dq = q_k+1 - q_k; J's row i becomes e_i^T (J has
// n + m columns for SHAKE/RATTLE, n for GNI).
template <class Vec, class Mat>
void impose_prescription(const NonholonomicModel& model, const NhVec* q_prescribed,
                         const NhVec& q_k, const NhVec& dq, Vec& r, Mat* J) {
  if (!q_prescribed) return;
  for (int i = 0; i < model.dof(); ++i) {
    if (!model.prescribed(i)) continue;
    r[i] = dq[i] - ((*q_prescribed)[i] - q_k[i]);
    if (J) {
      J->row(i).setZero();
      (*J)(i, i) = 1.0;
    }
  }
}

// Zeroes the prescribed entries of a momentum whose rows are replaced (Newton's scale).
void drop_prescribed(const NonholonomicModel& model, const NhVec* q_prescribed, NhVec& p) {
  if (!q_prescribed) return;
  for (int i = 0; i < model.dof(); ++i)
    if (model.prescribed(i)) p[i] = 0.0;
}

// W(:, i) = dM/dq_i (q) v: every first-derivative term of M contracts with one velocity.
void mass_derivative_times(const NonholonomicModel& model, const NhVec& q, const NhVec& v,
                           NhMat& W) {
  const int n = model.dof();
  NhMat dM;
  W.resize(n, n);
  for (int i = 0; i < n; ++i) {
    model.mass_derivative(q, i, dM);
    W.col(i) = dM * v;
  }
}

// Midpoint velocity constraint c = mu(q_m) (q1 - q0)/dt (m) and J_c_q1 (m x n).
// The unknown of every step is the increment dq = q1 - q0, not q1: far from the origin
// (q1 - q0)/dt would otherwise lose digits to cancellation and stall Newton.
void midpoint_constraint(const NonholonomicModel& model, double dt, const NhVec& q0,
                         const NhVec& dq, NhVec& c, NhMat* J_c_q1) {
  const NhVec qm = q0 + 0.5 * dq;
  const NhVec v = dq / dt;
  NhMat mu;
  model.constraint(qm, mu);
  c = mu * v;
  if (J_c_q1) {
    NhMat dmu;
    J_c_q1->resize(model.num_constraints(), model.dof());
    for (int j = 0; j < model.dof(); ++j) {
      model.constraint_derivative(qm, j, dmu);
      J_c_q1->col(j) = 0.5 * (dmu * v) + mu.col(j) / dt;
    }
  }
}

// dt B(q) u, or zeros when the model has no controls.
void control_force(const NonholonomicModel& model, double dt, const NhVec& q, const NhVec& u,
                   NhVec& f) {
  f.setZero(model.dof());
  if (model.num_controls() == 0 || u.size() == 0) return;  // empty u: no control
  NhMat B;
  model.control_directions(q, B);
  f.noalias() = dt * (B * u);
}

// D1 L_d, D2 L_d at (q0, q0 + dq) and their Jacobians with respect to q1 (= w.r.t. dq).
void ld_derivatives(const NonholonomicModel& model, double dt, const NhVec& q0,
                    const NhVec& dq, NhVec& D1, NhVec& D2, NhMat* J_D1_q1, NhMat* J_D2_q1) {
  const int n = model.dof();
  const NhVec qm = q0 + 0.5 * dq;
  const NhVec v = dq / dt;
  NhMat M, W;
  NhVec gradV;
  model.mass(qm, M);
  mass_derivative_times(model, qm, v, W);
  model.potential_gradient(qm, gradV);
  const bool jacobians = J_D1_q1 || J_D2_q1;
  NhVec Q;
  NhMat dQ_dq, dQ_dv;
  if (model.has_force())
    model.force(qm, v, Q, jacobians ? &dQ_dq : nullptr, jacobians ? &dQ_dv : nullptr);
  else
    Q.setZero(n);
  // dt/2 (dL/dq(q_m, v) + Q(q_m, v)), with dL/dq_i = 1/2 v^T dM/dq_i v - dV/dq_i: the
  // discrete forces f-_d = f+_d = dt/2 Q(q_m, v) enter exactly where -dt/2 grad V does.
  const NhVec half_dt_g = 0.5 * dt * (0.5 * (W.transpose() * v) - gradV + Q);
  const NhVec Mv = M * v;
  D1 = half_dt_g - Mv;
  D2 = half_dt_g + Mv;
  if (!jacobians) return;
  // d(dt/2 g)/dq1 = dt/4 (1/2 v^T d2M/dq_i dq_j v - d2V/dq_i dq_j + dQ/dq) + 1/2 W^T
  // + 1/2 dQ/dqdot (q_m moves by half of q1, v by 1/dt of it); d(M v)/dq1 = 1/2 W + M/dt.
  NhMat A(n, n), ddM, H;
  model.potential_hessian(qm, H);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      model.mass_second_derivative(qm, i, j, ddM);
      A(i, j) = 0.25 * dt * (0.5 * v.dot(ddM * v) - H(i, j));
    }
  A += 0.5 * W.transpose();
  if (model.has_force()) A += 0.25 * dt * dQ_dq + 0.5 * dQ_dv;
  const NhMat J_Mv = 0.5 * W + M / dt;
  if (J_D1_q1) *J_D1_q1 = A - J_Mv;
  if (J_D2_q1) *J_D2_q1 = A + J_Mv;
}

// Solves -D1 L_d(q_k, q_k + dq) = p_minus for the increment dq, prescribed rows replaced,
// from the guess in q_kp1: the implicit half of GNI and of the projected RATTLE.
NewtonStatus solve_post_momentum(const NonholonomicModel& model, double dt, const NhVec& q_k,
                                 NhVec p_minus, const NhVec* q_prescribed, const NewtonOptions& opt,
                                 NhVec& q_kp1, NhVec& dq) {
  drop_prescribed(model, q_prescribed, p_minus);  // rows replaced: keep them out of the scale
  auto residual = [&](const NhVec& x, NhVec& r, NhMat* J) {
    NhVec D1, D2;
    NhMat J_D1;
    ld_derivatives(model, dt, q_k, x, D1, D2, J ? &J_D1 : nullptr, nullptr);
    r = -D1 - p_minus;
    if (J) *J = -J_D1;
    impose_prescription(model, q_prescribed, q_k, x, r, J);
  };
  dq = q_kp1 - q_k;
  const NewtonStatus st = newton_solve(residual, dq, p_minus.lpNorm<Eigen::Infinity>(), opt);
  q_kp1 = q_k + dq;
  return st;
}

}  // namespace

void midpoint_ld_derivatives(const NonholonomicModel& model, double dt, const NhVec& q0,
                             const NhVec& q1, NhVec& D1, NhVec& D2, NhMat* J_D1_q1,
                             NhMat* J_D2_q1) {
  ld_derivatives(model, dt, q0, NhVec(q1 - q0), D1, D2, J_D1_q1, J_D2_q1);
}

void gni_residual(const NonholonomicModel& model, double dt, const NhVec& q_k,
                  const NhVec& p_plus_k, const NhVec& u_k, const NhVec& q_kp1, NhVec& r,
                  NhMat* J_r_qkp1, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed = checked_prescription(model, q_prescribed_kp1, "gni_residual");
  NhMat P_star, Q_star, J_D1;
  NhVec D1, D2, f;
  nh_projectors(model, q_k, P_star, Q_star);
  control_force(model, dt, q_k, u_k, f);
  ld_derivatives(model, dt, q_k, NhVec(q_kp1 - q_k), D1, D2, J_r_qkp1 ? &J_D1 : nullptr,
                 nullptr);
  // p-_k = (P* - Q*) p+_k + dt P* B u  (eq. (6) with the discrete control force).
  r = -D1 - (P_star - Q_star) * p_plus_k - P_star * f;
  if (J_r_qkp1) *J_r_qkp1 = -J_D1;
  impose_prescription(model, q_prescribed, q_k, NhVec(q_kp1 - q_k), r, J_r_qkp1);
}

NewtonStatus gni_step(const NonholonomicModel& model, double dt, const NhVec& q_k,
                      const NhVec& p_plus_k, const NhVec& u_k, NhVec& q_kp1,
                      NhVec& p_plus_kp1, NhVec* p_minus_k, const NewtonOptions& opt,
                      const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed = checked_prescription(model, q_prescribed_kp1, "gni_step");
  NhMat P_star, Q_star;
  NhVec f;
  nh_projectors(model, q_k, P_star, Q_star);
  control_force(model, dt, q_k, u_k, f);
  // The target post-momentum depends on q_k only: compute it once per step.
  NhVec p_minus = P_star * f;
  p_minus.noalias() += (P_star - Q_star) * p_plus_k;
  NhVec dq;
  const NewtonStatus st =
      solve_post_momentum(model, dt, q_k, p_minus, q_prescribed, opt, q_kp1, dq);
  NhVec D1;
  ld_derivatives(model, dt, q_k, dq, D1, p_plus_kp1, nullptr, nullptr);
  if (p_minus_k) *p_minus_k = -D1;
  return st;
}

namespace {

// Shared by SHAKE and RATTLE, in y = (dq, lambda): r = (base + D1 L_d(q_k, q_k + dq) +
// s mu(q_k)^T lambda, mu(q_m) dq/dt), with the momentum terms known at q_k in `base`.
void multiplier_residual(const NonholonomicModel& model, double dt, double s,
                         const NhVec& q_k, const NhMat& mu_k, const NhVec& base,
                         const NhVec* q_prescribed, const NhUnknown& y, NhUnknown& r,
                         NhJacobian* J) {
  const int n = model.dof(), m = model.num_constraints();
  const NhVec dq = y.head(n);
  NhVec D1, D2, c;
  NhMat J_D1, J_c;
  ld_derivatives(model, dt, q_k, dq, D1, D2, J ? &J_D1 : nullptr, nullptr);
  midpoint_constraint(model, dt, q_k, dq, c, J ? &J_c : nullptr);
  r.resize(n + m);
  r.head(n) = base + D1 + s * (mu_k.transpose() * y.tail(m));
  r.tail(m) = c;
  if (J) {
    J->setZero(n + m, n + m);
    J->topLeftCorner(n, n) = J_D1;
    J->topRightCorner(n, m) = s * mu_k.transpose();
    J->bottomLeftCorner(m, n) = J_c;
  }
  impose_prescription(model, q_prescribed, q_k, dq, r, J);
}

// Solves multiplier_residual = 0 from the guesses in q_kp1 and lambda (zero if unsized).
NewtonStatus solve_multiplier_step(const NonholonomicModel& model, double dt, double s,
                                   const NhVec& q_k, const NhMat& mu_k, NhVec base,
                                   const NhVec* q_prescribed, NhVec& q_kp1, NhVec& lambda,
                                   NhVec& dq, const NewtonOptions& opt) {
  drop_prescribed(model, q_prescribed, base);  // rows replaced: keep them out of the scale
  const int n = model.dof(), m = model.num_constraints();
  NhUnknown y(n + m);
  y.head(n) = q_kp1 - q_k;
  if (lambda.size() == m) y.tail(m) = lambda; else y.tail(m).setZero();
  auto residual = [&](const NhUnknown& x, NhUnknown& r, NhJacobian* J) {
    multiplier_residual(model, dt, s, q_k, mu_k, base, q_prescribed, x, r, J);
  };
  const NewtonStatus st = newton_solve(
      residual, y, base.lpNorm<Eigen::Infinity>(), opt);
  dq = y.head(n);
  q_kp1 = q_k + dq;
  lambda = y.tail(m);
  return st;
}

// x = (q_k+1, lambda) -> (q_k+1 - q_k, lambda).
NhUnknown to_increment(const NhUnknown& x, const NhVec& q_k) {
  NhUnknown y = x;
  y.head(q_k.size()) -= q_k;
  return y;
}

}  // namespace

void shake_residual(const NonholonomicModel& model, double dt, const NhVec& q_km1,
                    const NhVec& q_k, const NhVec& u_k, const NhUnknown& x, NhUnknown& r,
                    NhJacobian* J_r_x, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed = checked_prescription(model, q_prescribed_kp1, "shake_residual");
  NhVec D1, p_plus, f;
  NhMat mu_k;
  midpoint_ld_derivatives(model, dt, q_km1, q_k, D1, p_plus, nullptr, nullptr);
  control_force(model, dt, q_k, u_k, f);
  model.constraint(q_k, mu_k);
  multiplier_residual(model, dt, dt, q_k, mu_k, NhVec(p_plus + f), q_prescribed,
                      to_increment(x, q_k), r, J_r_x);
}

NewtonStatus shake_step(const NonholonomicModel& model, double dt, const NhVec& q_km1,
                        const NhVec& q_k, const NhVec& u_k, NhVec& q_kp1, NhVec& lambda_k,
                        const NewtonOptions& opt, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed = checked_prescription(model, q_prescribed_kp1, "shake_step");
  NhVec D1, p_plus, f;
  NhMat mu_k;
  midpoint_ld_derivatives(model, dt, q_km1, q_k, D1, p_plus, nullptr, nullptr);
  control_force(model, dt, q_k, u_k, f);
  model.constraint(q_k, mu_k);
  NhVec dq;
  return solve_multiplier_step(model, dt, dt, q_k, mu_k, NhVec(p_plus + f), q_prescribed, q_kp1,
                               lambda_k, dq, opt);
}

void rattle_residual(const NonholonomicModel& model, double dt, const NhVec& q_k,
                     const NhVec& p_k, const NhVec& u_k, const NhUnknown& x, NhUnknown& r,
                     NhJacobian* J_r_x, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed = checked_prescription(model, q_prescribed_kp1, "rattle_residual");
  NhVec f;
  NhMat mu_k;
  control_force(model, dt, q_k, u_k, f);
  model.constraint(q_k, mu_k);
  multiplier_residual(model, dt, 0.5 * dt, q_k, mu_k, NhVec(p_k + 0.5 * f), q_prescribed,
                      to_increment(x, q_k), r, J_r_x);
}

NewtonStatus rattle_step(const NonholonomicModel& model, double dt, const NhVec& q_k,
                         const NhVec& p_k, const NhVec& u_k, NhVec& q_kp1, NhVec& p_kp1,
                         const NewtonOptions& opt, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed = checked_prescription(model, q_prescribed_kp1, "rattle_step");
  NhVec f, lambda;
  NhMat mu_k;
  control_force(model, dt, q_k, u_k, f);
  model.constraint(q_k, mu_k);
  NhVec dq;
  const NewtonStatus st = solve_multiplier_step(model, dt, 0.5 * dt, q_k, mu_k,
                                                NhVec(p_k + 0.5 * f), q_prescribed, q_kp1, lambda,
                                                dq, opt);
  // (c)-(d): the second multiplier only projects, p_k+1 = P*(q_k+1)(D2 L_d + dt/2 B u).
  // D2 is evaluated on the solved increment (q_kp1 - q_k would lose digits far out).
  NhVec D1, D2, f1;
  NhMat P_star, Q_star;
  ld_derivatives(model, dt, q_k, dq, D1, D2, nullptr, nullptr);
  control_force(model, dt, q_kp1, u_k, f1);
  nh_projectors(model, q_kp1, P_star, Q_star);
  p_kp1 = P_star * (D2 + 0.5 * f1);
  return st;
}

void projected_rattle_residual(const NonholonomicModel& model, double dt, const NhVec& q_k,
                               const NhVec& p_k, const NhVec& u_k, const NhVec& q_kp1, NhVec& r,
                               NhMat* J_r_qkp1, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed =
      checked_prescription(model, q_prescribed_kp1, "projected_rattle_residual");
  NhMat P_star, Q_star, J_D1;
  NhVec D1, D2, f;
  nh_projectors(model, q_k, P_star, Q_star);
  control_force(model, dt, q_k, u_k, f);
  const NhVec dq = q_kp1 - q_k;
  ld_derivatives(model, dt, q_k, dq, D1, D2, J_r_qkp1 ? &J_D1 : nullptr, nullptr);
  // (a): -D1 L_d(q_k, q_k+1) - P*(q_k) (p_k + dt/2 B u) = 0.
  r = -D1 - P_star * (p_k + 0.5 * f);
  if (J_r_qkp1) *J_r_qkp1 = -J_D1;
  impose_prescription(model, q_prescribed, q_k, dq, r, J_r_qkp1);
}

NewtonStatus projected_rattle_step(const NonholonomicModel& model, double dt, const NhVec& q_k,
                                   const NhVec& p_k, const NhVec& u_k, NhVec& q_kp1, NhVec& p_kp1,
                                   const NewtonOptions& opt, const NhVec* q_prescribed_kp1) {
  const NhVec* q_prescribed =
      checked_prescription(model, q_prescribed_kp1, "projected_rattle_step");
  NhMat P_star, Q_star;
  NhVec f;
  nh_projectors(model, q_k, P_star, Q_star);
  control_force(model, dt, q_k, u_k, f);
  // The target p-_k of (a) depends on q_k only: compute it once per step.
  NhVec dq;
  const NewtonStatus st = solve_post_momentum(model, dt, q_k, NhVec(P_star * (p_k + 0.5 * f)),
                                              q_prescribed, opt, q_kp1, dq);
  // (b), with D2 evaluated on the solved increment (q_kp1 - q_k would lose digits far out).
  NhVec D1, D2, f1;
  ld_derivatives(model, dt, q_k, dq, D1, D2, nullptr, nullptr);
  control_force(model, dt, q_kp1, u_k, f1);
  nh_projectors(model, q_kp1, P_star, Q_star);
  p_kp1 = P_star * (D2 + 0.5 * f1);
  return st;
}

void nh_acceleration(const NonholonomicModel& model, const NhVec& q, const NhVec& qdot,
                     const NhVec& u, NhVec& qddot, NhVec* lambda) {
  const int n = model.dof();
  NhMat M, W, mu, dmu, mudot;
  NhVec gradV, f;
  model.mass(q, M);
  mass_derivative_times(model, q, qdot, W);
  model.potential_gradient(q, gradV);
  control_force(model, 1.0, q, u, f);
  // Coriolis/centrifugal c = (dM/dt) qdot - dL_kin/dq.
  f -= W * qdot - 0.5 * (W.transpose() * qdot) + gradV;
  if (model.has_force()) {
    NhVec Q;
    model.force(q, qdot, Q, nullptr, nullptr);
    f += Q;
  }
  model.constraint(q, mu);
  mudot.setZero(model.num_constraints(), n);
  for (int i = 0; i < n; ++i) {
    model.constraint_derivative(q, i, dmu);
    mudot += qdot[i] * dmu;
  }
  // mu qddot = -mudot qdot with qddot = M^-1 (f + mu^T lambda).
  const Eigen::LLT<NhMat> M_llt(M);
  const NhMat Minv_muT = M_llt.solve(mu.transpose());
  const NhMat S = mu * Minv_muT;
  const NhVec lam = Eigen::LLT<NhMat>(S).solve(NhVec(-(mudot * qdot) - mu * M_llt.solve(f)));
  qddot = M_llt.solve(NhVec(f + mu.transpose() * lam));
  if (lambda) *lambda = lam;
}

void nh_rk2_step(const NonholonomicModel& model, double dt, const NhVec& u, NhVec& q,
                 NhVec& qdot) {
  nh_rk_step(model, RungeKutta::Midpoint2, 0.0, dt, [&](double, NhVec& u_t) { u_t = u; }, q,
             qdot);
}

void nh_rk4_step(const NonholonomicModel& model, double dt, const NhVec& u, NhVec& q,
                 NhVec& qdot) {
  nh_rk_step(model, RungeKutta::Classic4, 0.0, dt, [&](double, NhVec& u_t) { u_t = u; }, q,
             qdot);
}

}  // namespace marsden::nonholonomic
