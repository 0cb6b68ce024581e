// The mutable side of a tree Model: every cache of an evaluation, sized once from the
// Model so that evaluating and stepping never allocate. One Data per thread.
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>
#include <Eigen/LU>

#include "marsden/solve/newton.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::tree {

using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;

// How the Lagrangian and its derivatives are evaluated.
enum class LagrangianAlgorithm {
  // World-frame spatial recursions: O(n) for L_q and L_v and O(n d) for the second
  // derivatives (d the depth of the tree), from composite inertias and momenta.
  Spatial,
  // The paper's recursion, eqs. (1)-(11) and (15)-(18): frame poses and body velocities
  // with their derivatives along ancestors, each computed once and cached in the Data.
  PaperCached,
  // The same equations evaluated by plain recursion without caching (the dotted line of
  // the paper's Fig. 3), for the scaling experiment.
  PaperUncached
};

// The memory a Data may take before it is refused (docs/tree.md): 4 GiB by default.
inline constexpr std::size_t kDataMemoryLimit = std::size_t{4} << 30;

// Bytes a Data of the model takes: the dense n x n work space (always) and the cache of
// the paper's recursion up to `paper_order` (0: none; 2: second derivatives, sum over the
// frames of (driven ancestors)^2 entries, n^3 / 3 on a chain). Saturates instead of
// overflowing.
std::size_t data_memory_estimate(const Model& model, int paper_order);

struct Data {
  // Throws InputError, naming the estimate and the limit, when the dense work space would
  // take more than memory_limit bytes.
  explicit Data(const Model& model, std::size_t memory_limit = kDataMemoryLimit);
  std::size_t memory_limit;

  // --- Lagrangian terms at (q, qd): all coordinates, n = model.num_coords().
  double kinetic = 0.0, potential = 0.0;
  VecX L_q, L_v;      // dL/dq, dL/dqd
  MatX L_qq, L_qv;    // d2L/dq dq, d2L/dq_i dqd_j (row i, column j)
  MatX M;             // d2L/dqd dqd, the mass matrix

  // --- Generalized non-conservative forces Q(t, q, qd, u) (dampers, inputs).
  VecX Q;
  MatX Q_q, Q_v, Q_u;

  // --- Constraints: h(q), Dh(q) (rows x n), and sum_c w_c d2h_c/dq2 for a weight w.
  VecX h;
  MatX Dh;
  MatX h_qq_w;

  // --- The paper's recursion (frame level), filled by frame_kinematics().
  std::vector<SE3> g_s;   // pose of every frame in the world, eq. (1)
  std::vector<Vec6> v_b;  // body velocity of every frame, eq. (6)
  // Per frame k, the coordinates of its driven ancestors (itself included), root first,
  // and the offsets of its first and second derivative blocks in the arrays below. Built
  // by frame_kinematics on first use (order >= 1), after checking memory_limit: only the
  // paper's algorithms need them.
  std::vector<std::vector<int>> anc;
  std::vector<std::size_t> d1_offset, d2_offset;
  std::size_t d1_size = 0, d2_size = 0;  // entries of the first and second derivatives
  std::vector<Mat4> dg, ddg;                  // eqs. (3), (4)
  std::vector<Vec6> dvb_dq, dvb_dqd;          // eq. (7) and d v_b / d qd_i
  std::vector<Vec6> ddvb_dqdq, ddvb_dqd_dq;   // eqs. (8), (9)-(10)

  // --- Spatial recursion, per joint (world axes).
  std::vector<SE3> g_joint;
  std::vector<Vec6> S, V, c, F, e, H;
  std::vector<double> m_c;        // composite mass
  std::vector<Vec3> h_c, gamma;   // composite first moment; gravity Hessian factor
  std::vector<Mat3> I_c;          // composite rotational inertia about the world origin

  // --- Work space of the midpoint integrator (midpoint.hpp): the full configurations at
  // the new time and the quadrature point, the velocity (q_kp1 - q_k) / dt, Dh(q_k), the
  // unknowns z = (dynamic q_kp1, lambda), d/dq_kp1 of the residual's dynamic part (D1),
  // the guess kept for a second solve, and the last steps' end and velocities for the
  // extrapolated guess of the next one.
  VecX q_kp1, q_m, v_m, lambda, z, z_guess;
  MatX Dh_k, D1;
  VecX q_prev_end, v_prev, v_prev2;
  bool have_prev = false, have_prev2 = false;
  NewtonWorkspace<VecX> newton;

  // --- The articulated-body factorisation of M + diag(d) at the current joint poses, the
  // midpoint step's simplified Newton matrix (O(n) per factorisation and per solve):
  // articulated inertias, U = IA S and D = S . U + d per joint, the solve's bias forces and
  // accelerations, and the diagonal d, right side and solution over all coordinates.
  std::vector<Mat6> IA;
  std::vector<Vec6> U_art, p_art, a_art;
  std::vector<double> D_art, u_art;
  VecX d_art, b_art, x_art;
  // The secant (Anderson) correction of the articulated-body Newton steps: the current
  // iterate, and the last iterate and raw step A^-1 r before it, over the unknowns z.
  VecX z_art, z_art_prev, g_art, g_art_prev;

  // --- Work space of the continuous dynamics (accelerations(), the RK baselines): the
  // accelerations and multipliers of eq. (14), its right side, the saddle-point system of
  // the dynamic accelerations and multipliers, and its factorisation.
  VecX qdd, lambda_dynamics;
  VecX rhs_dynamics, b_dynamics, x_dynamics, product_n, product_m, weight_m;
  MatX A_dynamics;
  Eigen::FullPivLU<MatX> lu_dynamics;

  // --- Scratch of the point and constraint helpers.
  MatX J3_a, J3_b;
  VecX grad_n;
  MatX hess_n;
};

}  // namespace marsden::tree
