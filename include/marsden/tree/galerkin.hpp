// A higher-order variational integrator of trees: the Galerkin discrete Lagrangian of
// order s (Marsden & West 2001 §2.2.6; Ober-Blöbaum & Saake 2015; Leok & Shingel 2012).
// On [t_k, t_k + dt] the curve is the degree-s polynomial through the control points
// q^0 = q_k, q^1, ..., q^s = q_k+1 at the Gauss-Lobatto nodes tau_0 = 0 < ... < tau_s = 1,
//   q(tau) = sum_nu l_nu(tau) q^nu,   qdot(tau) = sum_nu l_nu'(tau) q^nu / dt,
// and the action is integrated by a quadrature (c_i, b_i) on [0, 1]:
//   L_d(q^0, ..., q^s) = dt sum_i b_i L(q(c_i), qdot(c_i)).
// Forces (dampers, inputs) by the same quadrature, f^nu = dt sum_i b_i l_nu(c_i) Q_i
// (discrete Lagrange-d'Alembert). The step equations, with the holonomic constraints
// h = 0 at every control point and the multiplier of q^0 carried by the step that starts
// there (the midpoint step's form, tree/midpoint.hpp):
//   p_k + D_{q^0} L_d + f^0 - Dh(q_k)^T lambda_0 = 0
//   D_{q^nu} L_d + f^nu - Dh(q^nu)^T lambda_nu = 0,   nu = 1..s-1
//   h(q^nu) = 0,                                      nu = 1..s
//   p_k+1 = D_{q^s} L_d + f^s.
// Unknowns z = (q^1, ..., q^s, lambda_0, ..., lambda_s-1), solved by Newton with the exact
// Jacobian from L_qq, L_qv, M (and Q_q, Q_v) at the quadrature points. s = 1 with Gauss
// quadrature is the midpoint step (alpha = 1/2); s = 1 with Lobatto is the trapezoidal
// discrete Lagrangian. Order 2s with Lobatto (s + 1 nodes) or Gauss (s nodes) quadrature,
// the order of the quadrature; 2s - 1 with Radau (s nodes): 3 at s = 2, as the maximal
// paper's third-order comparison.
//
// Models with prescribed (kinematic) coordinates are refused: their values at the internal
// control points would be further inputs of the step. No step derivatives for optimal
// control (the midpoint step has them).
#pragma once

#include <optional>
#include <string>

#include "marsden/solve/newton.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/midpoint.hpp"

namespace marsden::tree {

enum class GalerkinQuadrature {
  Lobatto,  // s + 1 Gauss-Lobatto nodes, endpoints included: exact to degree 2s - 1
  Gauss,    // s Gauss-Legendre nodes: exact to degree 2s - 1
  Radau     // s Gauss-Radau nodes, t_k+1 included: exact to degree 2s - 2, order 2s - 1
};

// "lobatto", "gauss", "radau" (scenes, Python); nullopt for another name.
std::optional<GalerkinQuadrature> galerkin_quadrature_from_name(const std::string& name);
const char* galerkin_quadrature_name(GalerkinQuadrature q);

inline constexpr int kGalerkinMaxStages = 10;

struct GalerkinOptions {
  int stages = 2;  // s: polynomial degree, s + 1 control points; 1..kGalerkinMaxStages
  GalerkinQuadrature quadrature = GalerkinQuadrature::Lobatto;
  // As MidpointOptions; converged at ||r||_inf <= tolerance (1 + |p_k| + dt |L_q(q_k)|)
  // and, as there, an estimated distance to the solution within tolerance (1 + |z|).
  NewtonOptions newton{1e-10, 30, true, true};
  LagrangianAlgorithm algorithm = LagrangianAlgorithm::Spatial;
};

// The polynomial and the quadrature on [0, 1]: control nodes tau (s + 1, Gauss-Lobatto),
// quadrature nodes c and weights b, and the basis at the quadrature nodes,
// A(i, nu) = l_nu(c_i), B(i, nu) = l_nu'(c_i). Throws InputError for s outside
// 1..kGalerkinMaxStages.
struct GalerkinTableau {
  int stages = 0;
  VecX tau, c, b;
  MatX A, B;
};
GalerkinTableau galerkin_tableau(int stages, GalerkinQuadrature quadrature);

// Everything a step needs besides the tree::Data, sized once from the model and the options
// so that the step never allocates; one per thread. Also keeps the last step's polynomial
// for the next step's guess. Throws InputError for a bad s and for models with prescribed
// coordinates.
struct GalerkinWorkspace {
  GalerkinWorkspace(const Model& model, const GalerkinOptions& options);
  GalerkinQuadrature quadrature;
  GalerkinTableau tableau;
  MatX q_ctrl;              // n x (s + 1): the control points q^0..q^s
  MatX G;                   // n x (s + 1): D_{q^nu} L_d + f^nu
  MatX Dh_k;                // Dh(q_k)
  VecX q_i, v_i, force_i, u_i, weight;  // one quadrature point; a multiplier block
  MatX K_i, C_i;            // one quadrature point's blocks of the Jacobian
  VecX z;                   // the unknowns
  NewtonWorkspace<VecX> newton;
  // The last converged step: its control points, multipliers and dt (warm start).
  struct WarmStart {
    MatX q_ctrl;
    VecX lambda;
    double dt = 0.0;
    bool valid = false;
  } warm;
};

// One step of size dt from x_k (a TreeState as for the midpoint step; start from
// midpoint_initial_state). u_nodes holds the inputs at the quadrature nodes t_k + c_i dt,
// one column per node, or a single column held over the step (any shape without rows when
// the model has no inputs). On success x_kp1 holds the new state; on failure it is left
// untouched. Never allocates. Throws InputError on sizes, non-finite values, dt <= 0, or
// options whose stages or quadrature differ from the workspace's.
NewtonStatus galerkin_step(const Model& model, Data& data, GalerkinWorkspace& ws,
                           const GalerkinOptions& options, double dt, const TreeState& x_k,
                           const MatX& u_nodes, TreeState& x_kp1);

// The step equations at a trial z = (q^1..q^s, lambda_0..lambda_s-1): r (s (n + m)
// entries) and, if J is non-null, dr/dz; for tests. Leaves D_{q^nu} L_d + f^nu in ws.G.
void galerkin_residual(const Model& model, Data& data, GalerkinWorkspace& ws,
                       const GalerkinOptions& options, double dt, const TreeState& x_k,
                       const MatX& u_nodes, const VecX& z, VecX& r, MatX* J);

}  // namespace marsden::tree
