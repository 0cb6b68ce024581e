// Nonholonomic vehicles on Q = M x G: the reduced d'Alembert-Pontryagin (RDP) integrator of
// vehicles §3.2 (principle (5)) and §5.1 (eqs. (16)-(17)), as one residual with exact
// Jacobians, solved by Newton.
//
// Notation (one step k, quadrature point alpha in [0, 1], step h (dt here)):
//   r_k+alpha   = r_k + alpha h u_k,        r_k-1+alpha = r_k - (1 - alpha) h u_k-1
//   Omega_k     = E(r_k+alpha) w_k           (E = [e_1 .. e_nb], so Omega_k lies in s_r)
//   xi_k        = Omega_k - A(r_k+alpha) u_k (body velocity over [t_k, t_k+1])
//   p_k = dl/du, mu_k = dl/dxi, lr_k = dl/dr, all at (r_k+alpha, u_k, xi_k), partials
//   at fixed (r, u, xi): the d A/dr terms of dl/dr cancel against those of <mu, -xi>.
// Unknowns of a step: x_k = (u_k (n_r), w_k (n_b)). The paper's Omega_k in g with the
// constraint Omega_k in s_r is parametrised by w_k, so the constraints hold by construction
// and the system is square. Residual rows (shape rows first, then symmetry rows):
//   shape: p_k - p_k-1 - h(alpha lr_k-1 + (1-alpha) lr_k)
//          - A(r_k)^T DEP(k) - h(alpha f_k-1+alpha + (1-alpha) f_k+alpha)     (eq. (16))
// f_k+alpha is the control force of segment k plus the model's shape force f_r(r, u, xi)
// at the segment's point (r_k+alpha, u_k, xi_k), where lr_k is taken: the same discrete
// Lagrange-d'Alembert force with the same quadrature, so a force -dV/dr is the potential
// V(r) written into l.
//   sym:   E(r_k)^T DEP(k)                                                    (eq. (16))
//   DEP(k) = C(h xi_k)^T mu_k - C(-h xi_k-1)^T mu_k-1                         (eq. (17))
// Shape coordinates whose velocity is an input (e.g. the car's steering rate) replace their
// shape row by u_k[i] - u_prescribed[i]: the actuator supplies whatever force that takes.
// Update: g_k+1 = g_k tau(h xi_k), r_k+1 = r_k + h u_k.
//
// Everything of step k-1 enters the residual through the left momenta
//   p^- = p_k-1 + alpha h (lr_k-1 + f_k-1+alpha),   mu^- = C(-h xi_k-1)^T mu_k-1,
// so a run can start from continuous momenta (p^-, mu^-) = (dl/du, dl/dxi) at t_0 (the
// discrete Legendre transform), which keeps second order from the first step.
#pragma once

#include <array>

#include "marsden/vehicle/holonomic.hpp"

namespace marsden::vehicle {

inline constexpr int kRdpMaxShape = 4;
inline constexpr int kRdpMaxUnknowns = kRdpMaxShape + 6;
inline constexpr int kRdpMaxLagrangian = 2 * kRdpMaxShape + 6;  // (r, u, xi)

// Run-time sizes with fixed capacity: stored inline, so a step never allocates.
using ShapeVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kRdpMaxShape, 1>;
using RdpVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kRdpMaxUnknowns, 1>;
using RdpMat =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxUnknowns, kRdpMaxUnknowns>;
// (n x n_r) blocks: residual w.r.t. r_k, forces or prescribed velocities.
using RdpShapeCols =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxUnknowns, kRdpMaxShape>;
// (n_r x n) blocks: shape momenta w.r.t. the unknowns.
using RdpShapeRows =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxShape, kRdpMaxUnknowns>;
using LagVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kRdpMaxLagrangian, 1>;
using LagMat =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxLagrangian, kRdpMaxLagrangian>;
// (n_r x (2 n_r + dim G)): a shape force's derivatives by (r, u, xi).
using ShapeForceJac =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRdpMaxShape, kRdpMaxLagrangian>;
template <class G>
using ConnectionMat = Eigen::Matrix<double, G::kDim, Eigen::Dynamic, 0, G::kDim, kRdpMaxShape>;
template <class G>
using SymBasisMat = Eigen::Matrix<double, G::kDim, Eigen::Dynamic, 0, G::kDim, G::kDim>;

// Immutable description of a nonholonomic vehicle with shape r (n_r <= 4) and pose g in G.
template <class G>
class RdpModel {
 public:
  using Tangent = typename G::Tangent;
  virtual ~RdpModel() = default;

  virtual int num_shape() const = 0;     // n_r
  virtual int num_symmetry() const = 0;  // n_b = dim s_r
  // True where u[i] is a prescribed input (kinematic actuator), not a dynamic unknown.
  virtual bool prescribed(int) const { return false; }

  // Reduced Lagrangian l(r, u, xi). grad (2 n_r + dim G) = (dl/dr, dl/du, dl/dxi); hess its
  // symmetric Hessian in the same order. Either pointer may be null.
  virtual double lagrangian(const ShapeVec& r, const ShapeVec& u, const Tangent& xi, LagVec* grad,
                            LagMat* hess) const = 0;

  // Connection A(r) (dim G x n_r), and dA[j] = dA/dr_j when dA is not null.
  virtual void connection(const ShapeVec& r, ConnectionMat<G>& A,
                          std::array<ConnectionMat<G>, kRdpMaxShape>* dA) const = 0;

  // Basis E(r) = [e_1 .. e_nb] of s_r (dim G x n_b), and dE[j] = dE/dr_j.
  virtual void symmetry_basis(const ShapeVec& r, SymBasisMat<G>& E,
                              std::array<SymBasisMat<G>, kRdpMaxShape>* dE) const = 0;

  // Optional shape force f_r(r, u, xi) (n_r; N or N m per shape coordinate, like the
  // controls it is added to), e.g. a joint's damper or spring. Only called when
  // has_shape_force(), so models without one pay nothing. J (n_r x (2 n_r + dim G)) its
  // derivatives by (r, u, xi) in the Lagrangian's order, when not null.
  virtual bool has_shape_force() const { return false; }
  virtual void shape_force(const ShapeVec& /*r*/, const ShapeVec& /*u*/, const Tangent& /*xi*/,
                           ShapeVec& f, ShapeForceJac* J) const {
    f.setZero(num_shape());
    if (J) J->setZero(num_shape(), 2 * num_shape() + G::kDim);
  }
};

struct RdpOptions {
  double alpha = 0.5;
  DiffMap map = DiffMap::Cay;
  TangentMap tangent = TangentMap::TLN;
  NewtonOptions newton;
};

// Left momenta at t_k (see the header comment) and their Jacobians w.r.t. x_k-1, r_k,
// f_k-1+alpha and the step dt.
template <class G>
struct RdpLeftMomentum {
  ShapeVec p;              // p^- (n_r)
  typename G::Tangent mu;  // mu^- (dim G)
};

template <class G>
struct RdpLeftJacobians {
  using TanCols = Eigen::Matrix<double, G::kDim, Eigen::Dynamic, 0, G::kDim, kRdpMaxUnknowns>;
  RdpShapeRows J_p_x;       // n_r x n
  RdpShapeCols J_p_r;       // n_r x n_r
  RdpShapeCols J_p_f;       // n_r x n_r
  TanCols J_mu_x;           // dim G x n
  ConnectionMat<G> J_mu_r;  // dim G x n_r
  ShapeVec J_p_dt;          // n_r
  typename G::Tangent J_mu_dt;
};

template <class G>
struct RdpResidual {
  RdpVec r;                       // n = n_r + n_b
  RdpMat J_r_x_k;                 // n x n
  RdpMat J_r_x_km1;               // n x n
  RdpShapeCols J_r_r_k;           // n x n_r
  RdpShapeCols J_r_f_ka;          // n x n_r, w.r.t. f_k+alpha
  RdpShapeCols J_r_f_km1a;        // n x n_r, w.r.t. f_k-1+alpha
  RdpShapeCols J_r_u_prescribed;  // n x n_r, w.r.t. the prescribed velocities of step k
  RdpVec J_r_dt;                  // n, w.r.t. the step dt (free final time in optimal control)
};

// Body velocity xi_k = E(r_k+alpha) w_k - A(r_k+alpha) u_k of the segment [t_k, t_k+1].
template <class G>
typename G::Tangent rdp_segment_velocity(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                                         const ShapeVec& r_k, const RdpVec& x_k);

// Continuous momenta (dl/du, dl/dxi) at (r, u, xi): the left momenta that start a run.
template <class G>
RdpLeftMomentum<G> rdp_continuous_momentum(const RdpModel<G>& model, const ShapeVec& r,
                                           const ShapeVec& u, const typename G::Tangent& xi);

// Left momenta at t_k from the previous segment (x_k-1) and force f_k-1+alpha.
template <class G>
void rdp_left_momentum(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                       const ShapeVec& r_k, const RdpVec& x_km1, const ShapeVec& f_km1a,
                       RdpLeftMomentum<G>& out, RdpLeftJacobians<G>* J);

// Residual of eqs. (16)-(17) given the left momenta. Jacobians (if want_jacobians) fill
// J_r_x_k, J_r_r_k, J_r_dt (left momenta held fixed), J_r_f_ka, J_r_u_prescribed;
// J_r_p_left (n x n_r) and J_r_mu_left (n x dim G) are returned through the optional pointers.
template <class G>
void rdp_residual_given_left(
    const RdpModel<G>& model, const RdpOptions& opt, double dt, const ShapeVec& r_k,
    const RdpLeftMomentum<G>& left, const RdpVec& x_k, const ShapeVec& f_ka,
    const ShapeVec& u_prescribed, bool want_jacobians, RdpResidual<G>& out,
    RdpShapeCols* J_r_p_left = nullptr,
    Eigen::Matrix<double, Eigen::Dynamic, G::kDim, 0, kRdpMaxUnknowns, G::kDim>* J_r_mu_left =
        nullptr);

// Full residual R(x_k-1, x_k; r_k, f_k-1+alpha, f_k+alpha, u_prescribed) with every block, as
// used by optimal control (DMOC constraints).
template <class G>
void rdp_residual(const RdpModel<G>& model, const RdpOptions& opt, double dt, const ShapeVec& r_k,
                  const RdpVec& x_km1, const RdpVec& x_k, const ShapeVec& f_km1a,
                  const ShapeVec& f_ka, const ShapeVec& u_prescribed, bool want_jacobians,
                  RdpResidual<G>& out);

// One step: solves the residual for x_k by Newton from the guess passed in x_k, then
// r_k+1 = r_k + dt u_k and g_k+1 = g_k tau(dt xi_k) (eq. (16), first two lines).
template <class G>
NewtonStatus rdp_step(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                      const ShapeVec& r_k, const G& g_k, const RdpLeftMomentum<G>& left,
                      const ShapeVec& f_ka, const ShapeVec& u_prescribed, RdpVec& x_k,
                      ShapeVec& r_kp1, G& g_kp1);

// The whole state carried from step to step, and the usual loop body: step, then the left
// momenta of the next step. Throws SolverError (naming step and residual) if Newton fails.
template <class G>
struct RdpState {
  ShapeVec r;
  G g;
  RdpVec x;                 // last segment's unknowns (also the next Newton guess)
  RdpLeftMomentum<G> left;  // left momenta at the current time
};

// Starts at (r_0, g_0) with shape velocity u_0 and locked velocity w_0 (Omega = E(r_0) w_0).
template <class G>
RdpState<G> rdp_initial_state(const RdpModel<G>& model, const ShapeVec& r_0, const G& g_0,
                              const ShapeVec& u_0, const RdpVec& w_0);

template <class G>
NewtonStatus rdp_advance(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                         const ShapeVec& f_ka, const ShapeVec& u_prescribed, RdpState<G>& state,
                         int step_index = -1);

}  // namespace marsden::vehicle
