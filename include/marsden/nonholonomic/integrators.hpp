// Nonholonomic integrators in full coordinates (nonholonomic paper §4, docs/papers.md
// "Simulating nonholonomic dynamics"), each a residual with exact Jacobians solved by
// Newton (solve/newton.hpp). All use, with step h (dt here), the midpoint discrete Lagrangian
//   L_d(q0, q1) = h L(q_m, v),   q_m = (q0 + q1)/2,   v = (q1 - q0)/h,
// so D1 L_d = h/2 dL/dq(q_m, v) - M(q_m) v and D2 L_d = h/2 dL/dq(q_m, v) + M(q_m) v, with
// dL/dq_i = 1/2 v^T dM/dq_i v - dV/dq_i. Discrete momenta p+_k = D2 L_d(q_k-1, q_k),
// p-_k = -D1 L_d(q_k, q_k+1).
//
// A generalized force Q(q, qdot) of the model (model.hpp) enters by the discrete
// Lagrange-d'Alembert principle with the midpoint discrete forces
//   f-_d(q0, q1) = f+_d(q0, q1) = h/2 Q(q_m, v),
// added to D1 L_d and D2 L_d wherever they appear below (the forced discrete Legendre
// transforms p-_k = -D1 L_d(q_k, q_k+1) - f-_d, p+_k+1 = D2 L_d(q_k, q_k+1) + f+_d). So GNI's
// jump P*(p+_k - p-_k) = 0 is the projected forced discrete Euler-Lagrange equation, its
// averaged constraint and RATTLE's (a) and (c) carry the half-step forces, and Newton's
// Jacobians gain d f-_d/dq1 = h/4 dQ/dq + 1/2 dQ/dqdot. A conservative Q = -grad V gives the
// scheme of the potential V itself (V enters D1 and D2 as -h/2 grad V(q_m)). The controls
// are discretised at the nodes instead (B(q_k) u_k below), as before.
//
// GNI (paper eqs. (5), (6)): unknown q_k+1,
//   P*(q_k) (p+_k - p-_k + h B(q_k) u_k) = 0,   Q*(q_k) (p+_k + p-_k) = 0,
// solved in the momentum-jump form
//   r(q_k+1) = p-_k - (P*(q_k) - Q*(q_k)) p+_k - h P*(q_k) B(q_k) u_k = 0.
// Q*(p+ + p-) = 0 says mu(q_k) M(q_k)^-1 (p+_k + p-_k) = 0 (the averaged constraint).
// The first step takes p+_0 = M(q_0) qdot_0 (it satisfies the constraint, so p-_0 = p+_0).
// GNI is second order and reversible, and for constant M and V = 0 it is the explicit
// reflection v_k+1/2 = (P - Q)(q_k) v_k-1/2, so it conserves energy exactly. But the
// constraint holds only on averages: the constraint-normal part of the velocity flips sign
// every step, a period-2 mode that on the sleigh grows until it carries the energy (the
// sleigh then never settles; see tests/nonholonomic). Prefer RATTLE for long runs.
//
// Nonholonomic SHAKE (our discretisation, cf. eq. (9)): unknowns (q_k+1, lambda_k),
//   D2 L_d(q_k-1, q_k) + D1 L_d(q_k, q_k+1) + h mu(q_k)^T lambda_k + h B(q_k) u_k = 0,
//   mu(q_k+1/2) (q_k+1 - q_k)/h = 0,                  q_k+1/2 = (q_k + q_k+1)/2.
// The constraint is imposed on every midpoint velocity, a symmetric O(h^2) discretisation
// of mu(q) qdot = 0 at t_k+1/2. (With the alternative mu(q_k)(q_k+1 - q_k-1) = 0 and
// constant M, V = 0, SHAKE would coincide with GNI; this is a genuinely different scheme.)
//
// Nonholonomic RATTLE (position-momentum form of the SHAKE above, cf. eq. (10)):
//   (a) p_k + D1 L_d(q_k, q_k+1) + h/2 mu(q_k)^T lambda_k + h/2 B(q_k) u_k = 0
//   (b) mu(q_k+1/2) (q_k+1 - q_k)/h = 0                  -> Newton on (q_k+1, lambda_k)
//   (c) p_k+1 = D2 L_d(q_k, q_k+1) + h/2 mu(q_k+1)^T Lambda_k + h/2 B(q_k+1) u_k
//   (d) mu(q_k+1) M(q_k+1)^-1 p_k+1 = 0                  -> explicit: p_k+1 = P*(q_k+1)(...)
// Adding (c) at k-1 and (a) at k gives the SHAKE equation with lambda = (Lambda_k-1 +
// lambda_k)/2, so RATTLE and SHAKE produce the same positions; RATTLE's momentum satisfies
// the constraint exactly at every step.
//
// Projected nonholonomic RATTLE (multiplier-free; docs/papers.md: "the projected form drops the
// multipliers by using P and Q; control inputs enter through a matrix of control
// directions"). The paper's equations of this form were lost in extraction; the following
// is our reading of it. State (q_k, p_k) with Q*(q_k) p_k = 0; the first multiplier of
// RATTLE is replaced by the projection P*(q_k), the second by P*(q_k+1):
//   (a) -D1 L_d(q_k, q_k+1) = P*(q_k) (p_k + h/2 B(q_k) u_k)    -> Newton on q_k+1 (n x n)
//   (b) p_k+1 = P*(q_k+1) (D2 L_d(q_k, q_k+1) + h/2 B(q_k+1) u_k)   (explicit)
// so every p_k+1 satisfies the constraints exactly (mu(q_k+1) M(q_k+1)^-1 p_k+1 = 0), and
// so does p-_k = -D1 L_d at q_k. No constraint is imposed on the midpoint velocity, and the
// first half-step carries no constraint force (with P*(q_k) p_k = p_k, (a) projects only the
// control): the constraint force enters once per step, through (b). Consequences
// (measured in tests/nonholonomic): FIRST order, not second like RATTLE above (observed
// 0.96-1.00 on the test model, sleigh and snakeboard, with and without controls: q_k+1
// misses the O(h^2) constraint-force term, a local error O(h^2)); for constant M and V = 0
// (the sleigh) the step is v_k+1/2 = v_k, v_k+1 = P(q_k+1) v_k+1/2, an M-orthogonal
// projection, so the energy never increases: bounded by E0 but dissipated by O(h) (6.7e-2
// relative at h = 0.1 on the sleigh before it settles, 3.4e-2 at h = 0.05).
//
// Continuous reference (Lagrange-d'Alembert): M qddot + c(q, qdot) + grad V = mu^T lambda
// + B u + Q(q, qdot) with c_i = sum_j qdot_j (dM/dq_j qdot)_i - 1/2 qdot^T dM/dq_i qdot, and
// lambda from mu qddot + (d mu/dt) qdot = 0; integrated by classical RK4.
#pragma once

#include "marsden/nonholonomic/model.hpp"
#include "marsden/solve/rk.hpp"
#include "marsden/solve/newton.hpp"

namespace marsden::nonholonomic {

inline constexpr int kNhMaxUnknowns = 2 * kNhMaxDof;
using NhUnknown = SmallVec<kNhMaxUnknowns>;
using NhJacobian = SmallMat<kNhMaxUnknowns>;

// D1 L_d and D2 L_d at (q0, q1) with optional Jacobians with respect to q1 (n x n). For a
// model with a force these are D1 L_d + f-_d and D2 L_d + f+_d (above).
void midpoint_ld_derivatives(const NonholonomicModel& model, double dt, const NhVec& q0,
                             const NhVec& q1, NhVec& D1, NhVec& D2, NhMat* J_D1_q1,
                             NhMat* J_D2_q1);

// Prescribed coordinates (NonholonomicModel::prescribed, e.g. the car's steering): in every
// residual and step below, the row of such a coordinate i in the first n equations (the
// momentum jump of GNI, the discrete Euler-Lagrange equation of SHAKE, RATTLE's (a)) is
// replaced by q_k+1[i] - q_prescribed[i] = 0, with q_prescribed = *q_prescribed_kp1 (size n,
// only prescribed entries read). q_prescribed_kp1 is required (InputError otherwise) when the
// model prescribes coordinates and ignored when it does not. Where mu(q) M(q)^-1 e_i = 0 (no
// constraint on qdot_i, M not coupling i: the car), this is exactly the scheme with an unknown
// actuator force along e_i, P* e_i = e_i, and nothing else of the step (RATTLE's projection
// (d) included) sees coordinate i's momentum. Otherwise it is the row replacement as stated.
//
// Controls u_k have size c, or size 0 for none. Newton's unknown in every step is the
// increment q_k+1 - q_k (exact velocities far from the origin); residuals are public in
// q_k+1, for optimal control.
//
// GNI residual r(q_k+1) (n) and J_r_qkp1 (n x n) for given q_k, p+_k and u_k.
void gni_residual(const NonholonomicModel& model, double dt, const NhVec& q_k,
                  const NhVec& p_plus_k, const NhVec& u_k, const NhVec& q_kp1, NhVec& r,
                  NhMat* J_r_qkp1, const NhVec* q_prescribed_kp1 = nullptr);

// One GNI step on the state (q_k, p+_k): q_kp1 holds the guess on entry (q_k + dt M^-1 p+_k
// is good) and the solution on return, with p+_k+1 = D2 L_d(q_k, q_k+1) and optionally
// p-_k, both evaluated on the solved increment so that no digits are lost far from 0.
// Start from a continuous state (q_0, qdot_0) with p+_0 = M(q_0) qdot_0 and u_0/2 in the
// first step: the discrete force of the half interval before t_0 is absent.
NewtonStatus gni_step(const NonholonomicModel& model, double dt, const NhVec& q_k,
                      const NhVec& p_plus_k, const NhVec& u_k, NhVec& q_kp1,
                      NhVec& p_plus_kp1, NhVec* p_minus_k = nullptr,
                      const NewtonOptions& opt = {}, const NhVec* q_prescribed_kp1 = nullptr);

// SHAKE residual in x = (q_k+1, lambda_k) (n + m), with J_r_x.
void shake_residual(const NonholonomicModel& model, double dt, const NhVec& q_km1,
                    const NhVec& q_k, const NhVec& u_k, const NhUnknown& x, NhUnknown& r,
                    NhJacobian* J_r_x, const NhVec* q_prescribed_kp1 = nullptr);

NewtonStatus shake_step(const NonholonomicModel& model, double dt, const NhVec& q_km1,
                        const NhVec& q_k, const NhVec& u_k, NhVec& q_kp1, NhVec& lambda_k,
                        const NewtonOptions& opt = {}, const NhVec* q_prescribed_kp1 = nullptr);

// RATTLE residual of (a)-(b) in x = (q_k+1, lambda_k) (n + m), with J_r_x.
void rattle_residual(const NonholonomicModel& model, double dt, const NhVec& q_k,
                     const NhVec& p_k, const NhVec& u_k, const NhUnknown& x, NhUnknown& r,
                     NhJacobian* J_r_x, const NhVec* q_prescribed_kp1 = nullptr);

// One RATTLE step (a)-(d): (q_k, p_k) -> (q_k+1, p_k+1); q_kp1 holds the guess on entry.
NewtonStatus rattle_step(const NonholonomicModel& model, double dt, const NhVec& q_k,
                         const NhVec& p_k, const NhVec& u_k, NhVec& q_kp1, NhVec& p_kp1,
                         const NewtonOptions& opt = {}, const NhVec* q_prescribed_kp1 = nullptr);

// Projected RATTLE residual of (a), r(q_k+1) (n), with J_r_qkp1 (n x n).
void projected_rattle_residual(const NonholonomicModel& model, double dt, const NhVec& q_k,
                               const NhVec& p_k, const NhVec& u_k, const NhVec& q_kp1,
                               NhVec& r, NhMat* J_r_qkp1, const NhVec* q_prescribed_kp1 = nullptr);

// One projected RATTLE step (a)-(b): (q_k, p_k) -> (q_k+1, p_k+1); q_kp1 holds the guess on
// entry (q_k + dt M^-1 p_k is good).
NewtonStatus projected_rattle_step(const NonholonomicModel& model, double dt,
                                   const NhVec& q_k, const NhVec& p_k, const NhVec& u_k,
                                   NhVec& q_kp1, NhVec& p_kp1, const NewtonOptions& opt = {},
                                   const NhVec* q_prescribed_kp1 = nullptr);

// Continuous Lagrange-d'Alembert acceleration and multiplier (size m).
void nh_acceleration(const NonholonomicModel& model, const NhVec& q, const NhVec& qdot,
                     const NhVec& u, NhVec& qddot, NhVec* lambda = nullptr);

// One explicit midpoint (RK2) step of the same equations: the second-order baseline.
void nh_rk2_step(const NonholonomicModel& model, double dt, const NhVec& u, NhVec& q,
                 NhVec& qdot);

// One classical RK4 step of the continuous equations on (q, qdot), u held constant.
void nh_rk4_step(const NonholonomicModel& model, double dt, const NhVec& u, NhVec& q,
                 NhVec& qdot);

// One explicit Runge-Kutta step (sim/rk.hpp) of the continuous equations on (q, qdot)
// from time t, with controls u(t) sampled at the stage times: u_at(t, u_t) fills u_t
// (num_controls()). nh_rk2_step and nh_rk4_step are this with u held.
template <class ControlsAt>
void nh_rk_step(const NonholonomicModel& model, RungeKutta method, double t, double dt,
                ControlsAt&& u_at, NhVec& q, NhVec& qdot) {
  const int n = static_cast<int>(q.size());
  using Y = NhUnknown;
  Y y(2 * n);
  y << q, qdot;
  NhVec u_t(model.num_controls()), a;
  const Y y1 = rk_step(method, t, dt, y, [&](double ts, const Y& s) {
    u_at(ts, u_t);
    nh_acceleration(model, s.head(n), s.tail(n), u_t, a);
    Y ds(2 * n);
    ds << s.tail(n), a;
    return ds;
  });
  q = y1.head(n);
  qdot = y1.tail(n);
}

}  // namespace marsden::nonholonomic
