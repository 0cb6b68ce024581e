// Holonomic vehicles on G = SE(2) or SE(3): the discrete Euler-Poincare integrator of
// vehicles §3.1 and §4.2, eqs. (9)-(14), written as one residual with exact Jacobians.
//
// Unknown of a step: xi_k, the body velocity over [t_k, t_k+1]. Given (g_k, xi_k-1) and the
// step h (dt here):
//   r(xi_k) = C(h xi_k)^T I xi_k - C(-h xi_k-1)^T I xi_k-1
//             - h F(gamma_k) u_k - h f_ext(t_k, g_k, xi_k-1) = 0      (eq. (10))
//   g_k+1 = g_k tau(h xi_k)                                        (eq. (9))
// with C = d tau^-1 (exact) or C_TLN = I - ad/2. The residual and its Jacobian blocks are
// public so that optimal control can impose r = 0 as a constraint unchanged.
#pragma once

#include <memory>

#include "marsden/lie/se2.hpp"
#include "marsden/lie/se3.hpp"
#include "marsden/solve/newton.hpp"
#include "marsden/vehicle/controls.hpp"

namespace marsden::vehicle {

enum class TangentMap { Exact, TLN };

template <class G>
using InputJacobian =
    Eigen::Matrix<double, G::kDim, Eigen::Dynamic, 0, G::kDim, kMaxInputs>;

// Immutable description of a holonomic vehicle. Wrenches are body-frame covectors
// ordered like the tangent: (torque, force) on SE(3), (torque, f1, f2) on SE(2).
template <class G>
class HolonomicModel {
 public:
  using Tangent = typename G::Tangent;
  using Jac = typename G::Jacobian;

  explicit HolonomicModel(const Jac& inertia);  // throws InputError unless SPD and finite
  virtual ~HolonomicModel() = default;

  const Jac& inertia() const { return inertia_; }
  const Jac& inertia_inv() const { return inertia_inv_; }

  virtual int num_controls() const { return 0; }
  virtual int num_shape() const { return 0; }

  // Control wrench F(gamma) u with J_f_u = F(gamma) and J_f_gamma = d(F(gamma) u)/d gamma.
  // Pointers may be null when a Jacobian is not needed.
  virtual void control_wrench(const InputVec& gamma, const InputVec& u, Tangent& f,
                              InputJacobian<G>* J_f_u, InputJacobian<G>* J_f_gamma) const;

  // External wrench f_ext(t, g, xi) with J_f_g (w.r.t. a right perturbation g exp(delta))
  // and J_f_xi.
  virtual void external_wrench(double t, const G& g, const Tangent& xi, Tangent& f,
                               Jac* J_f_g, Jac* J_f_xi) const;
  // True if external_wrench depends on t. Optimal control with a free final time needs
  // time-invariant wrenches (it does not differentiate t) and refuses such models.
  virtual bool wrench_depends_on_time() const { return false; }

  // Potential energy whose gradient is part of f_ext (0 if f_ext is not conservative).
  virtual double potential_energy(const G&) const { return 0.0; }

 private:
  Jac inertia_;
  Jac inertia_inv_;
};

template <class G>
struct HolonomicOptions {
  DiffMap map = DiffMap::Cay;
  TangentMap tangent = TangentMap::TLN;
  NewtonOptions newton;
};

// The inputs held over one step: actuator angles gamma_k and controls u_k at t_k.
struct StepInputs {
  InputVec gamma;
  InputVec u;
};

template <class G>
struct HolonomicResidual {
  using Tangent = typename G::Tangent;
  using Jac = typename G::Jacobian;
  Tangent r;
  Jac J_r_xi_k;
  Jac J_r_xi_km1;
  Jac J_r_g_k;  // right perturbation of g_k
  InputJacobian<G> J_r_u_k;
  InputJacobian<G> J_r_gamma_k;
  // dr/d(dt) at fixed t_k (and xi_k-1): for a free time step.
  Tangent J_r_dt;
};

// The matrix C(eta) of eq. (10): d tau^-1_eta (Exact, eq. (14)) or I - ad_eta/2 (TLN).
template <class G>
typename G::Jacobian tangent_c(DiffMap map, TangentMap tangent, const typename G::Tangent& eta);

// d/d eta [C(eta)^T mu] at fixed mu: the derivative that makes the Newton Jacobian exact.
template <class G>
typename G::Jacobian tangent_c_transpose_derivative(DiffMap map, TangentMap tangent,
                                                    const typename G::Tangent& eta,
                                                    const typename G::Tangent& mu);

// Evaluates r of eq. (10) and, if want_jacobians, every Jacobian block.
template <class G>
void holonomic_residual(const HolonomicModel<G>& model, const HolonomicOptions<G>& opt,
                        double dt, double t_k, const G& g_k,
                        const typename G::Tangent& xi_km1, const typename G::Tangent& xi_k,
                        const StepInputs& in, bool want_jacobians, HolonomicResidual<G>& out);

// Discrete momentum at t_k seen from the right, p_k^+ = C(-dt xi_k-1)^T I xi_k-1 (the
// discrete Legendre transform); the continuous momentum I xi(t_k) is identified with it.
template <class G>
typename G::Tangent momentum_plus(const HolonomicModel<G>& model,
                                  const HolonomicOptions<G>& opt, double dt,
                                  const typename G::Tangent& xi_km1);

// xi_-1 such that momentum_plus(xi_-1) = I xi_0: starts the scheme from a continuous
// body velocity with second-order consistency. Throws SolverError if Newton fails.
template <class G>
typename G::Tangent initial_xi_km1(const HolonomicModel<G>& model,
                                   const HolonomicOptions<G>& opt, double dt,
                                   const typename G::Tangent& xi_0);

// d xi_-1 / d(dt) of initial_xi_km1 at its solution xi_km1 (the Legendre transform at t_0
// moves with the step): J_D^-1 T(-dt xi_-1, I xi_-1) xi_-1, with J_D = dD(-dt, xi)/dxi.
template <class G>
typename G::Tangent initial_xi_km1_ddt(const HolonomicModel<G>& model,
                                       const HolonomicOptions<G>& opt, double dt,
                                       const typename G::Tangent& xi_km1);

// One step: solves r(xi_k) = 0 by Newton from the guess passed in xi_k (retrying from
// xi_k-1 if that fails), then updates g. A guess extrapolated from the last three
// velocities (O(dt^3) error) usually converges in one Newton iteration.
template <class G>
NewtonStatus holonomic_step(const HolonomicModel<G>& model, const HolonomicOptions<G>& opt,
                            double dt, double t_k, const G& g_k,
                            const typename G::Tangent& xi_km1, const StepInputs& in,
                            typename G::Tangent& xi_k, G& g_kp1);

// Spatial momentum Ad_{g_k^-1}^T p_k^+: conserved by the free body (Noether).
template <class G>
typename G::Tangent spatial_momentum(const G& g_k, const typename G::Tangent& p_k);

// Continuous forced Euler-Poincare equations, vehicles eq. (8):
// I xi_dot = ad_xi^T I xi + F(gamma) u + f_ext(t, g, xi).
template <class G>
typename G::Tangent euler_poincare_rhs(const HolonomicModel<G>& model, double t, const G& g,
                                       const typename G::Tangent& xi, const InputVec& gamma,
                                       const InputVec& u);

// Kinetic plus potential energy.
template <class G>
double vehicle_energy(const HolonomicModel<G>& model, const G& g, const typename G::Tangent& xi);

}  // namespace marsden::vehicle
