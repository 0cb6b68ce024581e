// Kinematics, Lagrangian terms and continuous dynamics of a tree (tree paper §III-VI).
#pragma once

#include <string>
#include <utility>

#include "marsden/tree/data.hpp"

namespace marsden::tree {

// The paper's recursion, eqs. (1)-(11): poses g_s of every frame, body velocities v_b and,
// up to `order` (0, 1 or 2), their derivatives with respect to q and qd, each along the
// frame's ancestors only, computed once and cached in data (see Data for the layout).
void frame_kinematics(const Model& model, Data& data, const VecX& q, const VecX& qd,
                      int order);

// Accessors of the cache, zero for coordinates that are not ancestors of the frame.
Mat4 frame_pose_dq(const Data& data, int frame, int i);                // d g_s / d q_i
Mat4 frame_pose_dqdq(const Data& data, int frame, int i, int j);       // d2 g_s / dq_i dq_j
Vec6 body_velocity_dq(const Data& data, int frame, int i);             // d v_b / d q_i
Vec6 body_velocity_dqd(const Data& data, int frame, int i);            // d v_b / d qd_i
Vec6 body_velocity_dqdq(const Data& data, int frame, int i, int j);    // d2 v_b / dq_i dq_j
Vec6 body_velocity_dqd_dq(const Data& data, int frame, int i, int j);  // d2 v_b / dqd_i dq_j

// L = T - V (eq. (15)) with gravity and the springs of the model, and its derivatives
// L_q, L_v (eq. (16)) and, if second_order, L_qq, L_qv and M (eqs. (17), (18)).
void lagrangian_terms(const Model& model, Data& data, const VecX& q, const VecX& qd,
                      bool second_order,
                      LagrangianAlgorithm algorithm = LagrangianAlgorithm::Spatial);

// Non-conservative generalized forces Q (dampers and inputs u) and, if derivatives,
// Q_q, Q_v, Q_u.
void generalized_forces(const Model& model, Data& data, const VecX& q, const VecX& qd,
                        const VecX& u, bool derivatives);

// h(q) and Dh(q); with weight non-null also data.h_qq_w = sum_c w_c d2h_c/dq2.
void constraint_terms(const Model& model, Data& data, const VecX& q, const VecX* weight);

// Total energy T + V at (q, qd).
double energy(const Model& model, Data& data, const VecX& q, const VecX& qd);

// The largest |h_c(q)| over the holonomic constraints (0 without constraints), and with the
// name of that constraint ({0, ""} without constraints).
double max_constraint_violation(const Model& model, Data& data, const VecX& q);
std::pair<double, std::string> worst_constraint(const Model& model, Data& data, const VecX& q);
// Refuses (InputError naming the constraint, its object and its rank) a generated
// constraint whose h or Dh is not finite at q, or whose rows are dependent there: Dh over
// its dynamic coordinates of rank below its m rows, which would leave the step's multipliers
// undetermined. The runs and tree DMOC call it at the initial configuration, before any step.
void check_generated_constraints(const Model& model, Data& data, const VecX& q);

// The continuous dynamics, eq. (14), with constraint forces Dh^T lambda: solves
//   M qdd = L_q - L_vq qd + Q + Dh^T lambda,   Dh qdd + d/dt(Dh) qd = 0
// for the dynamic accelerations and lambda, the prescribed accelerations being given
// (qdd_prescribed, one per prescribed coordinate). Returns qdd for all coordinates.
// Throws SolverError when the constrained mass matrix is singular.
struct Acceleration {
  VecX qdd;
  VecX lambda;
};
Acceleration continuous_dynamics(const Model& model, Data& data, const VecX& q, const VecX& qd,
                                 const VecX& u, const VecX& qdd_prescribed);
// The same without allocating: qdd into data.qdd and lambda into data.lambda_dynamics.
void accelerations(const Model& model, Data& data, const VecX& q, const VecX& qd, const VecX& u,
                   const VecX& qdd_prescribed);

// x = (M(q) + diag d)^-1 b over the dynamic coordinates, by the articulated-body
// recursion in O(n), without forming M (d and b over all coordinates; prescribed
// coordinates are held: their entries of b are ignored and of x set to zero). The midpoint
// step's simplified Newton matrix (MidpointOptions::articulated_newton_from).
// Throws InputError on sizes or non-finite values.
void solve_mass_matrix(const Model& model, Data& data, const VecX& q, const VecX& d,
                       const VecX& b, VecX& x);

// One classical RK4 step of size dt on (q, qd) over all coordinates, with the inputs u held
// and the prescribed coordinates unaccelerated: the non-structure-preserving baseline the
// midpoint VI is compared with.
void rk4_step(const Model& model, Data& data, double dt, const VecX& u, VecX& q, VecX& qd);

}  // namespace marsden::tree
