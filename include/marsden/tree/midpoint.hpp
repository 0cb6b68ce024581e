// The generalized midpoint variational integrator of the tree paper §VII:
//   L_d(q_k, q_k+1) = dt L(q_k + alpha (q_k+1 - q_k), (q_k+1 - q_k) / dt)     (eq. (22))
// with forces at the same point (f^- = (1 - alpha) dt Q, f^+ = alpha dt Q) and the
// constraints imposed on the new configuration:
//   p_k + D1 L_d(q_k, q_k+1) + f^- - Dh(q_k)^T lambda_k = 0,   h(q_k+1) = 0     (eq. (21))
//   p_k+1 = D2 L_d(q_k, q_k+1) + f^+.
// The rows are those of the dynamic coordinates; a prescribed coordinate's next value is an
// input of the step. Newton uses the exact Jacobian, eq. (26).
#pragma once

#include "marsden/solve/newton.hpp"
#include "marsden/tree/data.hpp"

namespace marsden::tree {

struct MidpointOptions {
  double alpha = 0.5;  // quadrature point in [0, 1]; 1/2 is second order
  // Tolerance 1e-10, on the momentum balance (relative to 1 + |p_k|) and on the estimated
  // distance of q_k+1 to the step's exact solution (relative to 1 + |q|): the step sets
  // step_tolerance to tolerance, so the linearly converging articulated-body Newton below
  // stops as near the solution as the exact one (docs/tree.md). The exact Jacobian of the
  // first iterate is kept while it contracts fast (NewtonOptions::reuse_jacobian), which
  // from the extrapolated guess usually means one Jacobian per step.
  NewtonOptions newton{1e-10, 30, true, true};
  LagrangianAlgorithm algorithm = LagrangianAlgorithm::Spatial;
  // On models without constraints and with at least this many dynamic coordinates,
  // Newton's direction comes first from the Jacobian's dominant part,
  // -(M(q_m) + diag(alpha (1 - alpha) dt^2 k + (1 - alpha) dt c)) / dt (coordinate springs
  // k, dampers c), factorised by the articulated-body recursion in O(n) instead of the
  // exact Jacobian's O(n d) assembly and dense O(n^3) LU; it converges linearly (by about
  // dt |qd| per iteration) to the same tolerance, and if it does not converge the step is
  // solved again with the exact Jacobian. On chains it is the faster from about 20 links
  // (docs/tree.md); 0 uses it always, a larger number than the model's coordinates never.
  int articulated_newton_from = 20;
};

// Discrete state: time, all coordinates (dynamic and prescribed), momenta of the dynamic
// coordinates (p = dL/dqd at t0, then the discrete momenta).
struct TreeState {
  double t = 0.0;
  VecX q;
  VecX p;
};

// Initial state from (q, qd) by the continuous Legendre transform p = dL/dqd.
// Throws InputError on sizes or non-finite values.
TreeState midpoint_initial_state(const Model& model, Data& data, double t0, const VecX& q0,
                                 const VecX& qd0);

// One step of size dt from x_k with inputs u (model.num_inputs()) and the next values of
// the prescribed coordinates. On success x_kp1 holds the new state and data.lambda the
// constraint multipliers; on failure x_kp1 is left untouched. Never allocates.
NewtonStatus midpoint_step(const Model& model, Data& data, const MidpointOptions& options,
                           double dt, const TreeState& x_k, const VecX& u,
                           const VecX& q_prescribed_kp1, TreeState& x_kp1);

// Derivatives of one step (x_k, u, q_prescribed_kp1) -> x_kp1, by the implicit function
// theorem on the converged residual: what optimal control and LQR linearisation need.
// Rows: dynamic coordinates (q) and their momenta (p); columns: all of q_k, p_k, u and the
// prescribed coordinates' next values.
struct StepDerivatives {
  MatX dq_dq, dq_dp, dq_du, dq_dk;
  MatX dp_dq, dp_dp, dp_du, dp_dk;
};
void midpoint_step_derivatives(const Model& model, Data& data, const MidpointOptions& options,
                               double dt, const TreeState& x_k, const VecX& u,
                               const VecX& q_prescribed_kp1, const TreeState& x_kp1,
                               StepDerivatives& out);

// The residual of the step equations at a trial (q_kp1, lambda), for tests and for
// optimal control: r has num_dynamic + num_constraint_rows entries.
void midpoint_residual(const Model& model, Data& data, const MidpointOptions& options,
                       double dt, const TreeState& x_k, const VecX& u, const VecX& q_kp1,
                       const VecX& lambda, VecX& r);

// The whole discrete residual of one step with its exact Jacobian blocks, for optimal
// control (DMOC): the equations midpoint_step solves, as functions of every argument:
//   r_a = ( p_k + D1 L_d(q_k, q_kp1) + f^- - Dh(q_k)^T lambda_k ;  h(q_kp1) )   (nd + m)
//   r_b = p_kp1 - D2 L_d(q_k, q_kp1) - f^+                                       (nd)
// (eqs. (21), (22)). midpoint_step solves r_a = 0 for (q_kp1, lambda_k) and sets p_kp1 by
// r_b = 0; at its result both vanish. J<row>_<argument> is d r_<row> / d <argument>:
// Ja_qk (nd+m x nd) carries the lambda-weighted constraint Hessian at q_k, Ja_pk
// (nd+m x nd), Ja_qkp1 (nd+m x nd), Ja_u (nd+m x nu), Ja_lambda (nd+m x m); Jb_qk,
// Jb_qkp1, Jb_pkp1 (the identity) (nd x nd) and Jb_u (nd x nu); Ja_dt (nd+m) and Jb_dt (nd)
// are the derivatives in dt, for a free final time.
// Only for models without prescribed coordinates (nd = n, the q columns are all
// coordinates); throws InputError otherwise, and on sizes or non-finite values.
struct MidpointResidualBlocks {
  VecX r_a, r_b;
  MatX Ja_qk, Ja_pk, Ja_qkp1, Ja_u, Ja_lambda;
  MatX Jb_qk, Jb_qkp1, Jb_pkp1, Jb_u;
  VecX Ja_dt, Jb_dt;
};
void midpoint_residual_blocks(const Model& model, Data& data, const MidpointOptions& options,
                              double dt, const TreeState& x_k, const VecX& u,
                              const VecX& q_kp1, const VecX& p_kp1, const VecX& lambda_k,
                              MidpointResidualBlocks& out);

}  // namespace marsden::tree
