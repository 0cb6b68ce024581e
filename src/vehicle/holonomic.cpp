#include "marsden/vehicle/holonomic.hpp"

#include <cmath>
#include <sstream>

#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <Eigen/LU>

#include "lie/dexp_inv_derivative.hpp"
#include "marsden/error.hpp"
#include "marsden/lie/tangent.hpp"
#include "vehicle/newton_advice.hpp"

namespace marsden::vehicle {

template <class G>
HolonomicModel<G>::HolonomicModel(const Jac& inertia) : inertia_(inertia) {
  if (!inertia.allFinite()) throw InputError("inertia matrix contains NaN or infinite entries");
  if (!inertia.isApprox(inertia.transpose(), 1e-12))
    throw InputError("inertia matrix is not symmetric");
  Eigen::LLT<Jac> llt(inertia);
  if (llt.info() != Eigen::Success || inertia.diagonal().minCoeff() <= 0.0)
    throw InputError("inertia matrix is not positive definite");
  inertia_inv_ = llt.solve(Jac::Identity());
}

template <class G>
void HolonomicModel<G>::control_wrench(const InputVec&, const InputVec& u, Tangent& f,
                                       InputJacobian<G>* J_f_u,
                                       InputJacobian<G>* J_f_gamma) const {
  f.setZero();
  if (J_f_u) J_f_u->setZero(G::kDim, u.size());
  if (J_f_gamma) J_f_gamma->resize(G::kDim, 0);
}

template <class G>
void HolonomicModel<G>::external_wrench(double, const G&, const Tangent&, Tangent& f,
                                        Jac* J_f_g, Jac* J_f_xi) const {
  f.setZero();
  if (J_f_g) J_f_g->setZero();
  if (J_f_xi) J_f_xi->setZero();
}

namespace {

// d/d eta [dcay^-1_eta^T mu] in closed form, from C_cay of vehicles eq. (14):
// C^T mu = (A^T m + 1/2 v x q, q) with A^T = I + w^/2 + w w^T/4, q = p + w x p/2.
Mat6 cay_transpose_derivative(const Vec6& eta, const Vec6& mu) {
  const Vec3 w = eta.head<3>(), v = eta.tail<3>();
  const Vec3 m = mu.head<3>(), p = mu.tail<3>();
  const Vec3 q = p + 0.5 * w.cross(p);
  Mat6 D;
  D.topLeftCorner<3, 3>() = -0.5 * SO3::hat(m) + 0.25 * (w * m.transpose()) +
                            0.25 * w.dot(m) * Mat3::Identity() -
                            0.25 * SO3::hat(v) * SO3::hat(p);
  D.topRightCorner<3, 3>() = -0.5 * SO3::hat(q);
  D.bottomLeftCorner<3, 3>() = -0.5 * SO3::hat(p);
  D.bottomRightCorner<3, 3>().setZero();
  return D;
}

// SE(2), vehicles eq. (22): C^T mu = mu - ad_v^T mu / 2 + e1 v1 (v . mu) / 4.
Mat3 cay_transpose_derivative(const Vec3& eta, const Vec3& mu) {
  Mat3 D = -0.5 * ad_transpose_derivative<SE2>(mu);
  D.row(0) += 0.25 * (eta.dot(mu) * Vec3::UnitX().transpose() + eta[0] * mu.transpose());
  return D;
}

}  // namespace

template <class G>
typename G::Jacobian tangent_c(DiffMap map, TangentMap tangent,
                               const typename G::Tangent& eta) {
  if (tangent == TangentMap::TLN) return c_tln<G>(eta);
  return dtau_inv<G>(map, eta);
}

template <class G>
typename G::Jacobian tangent_c_transpose_derivative(DiffMap map, TangentMap tangent,
                                                    const typename G::Tangent& eta,
                                                    const typename G::Tangent& mu) {
  if (tangent == TangentMap::TLN) return -0.5 * ad_transpose_derivative<G>(mu);
  if (map == DiffMap::Cay) return cay_transpose_derivative(eta, mu);
  return detail::dexp_inv_transpose_derivative(eta, mu);
}

namespace {

// C(s dt xi)^T I xi and, if J is given, its derivative in xi: the discrete momenta of
// eq. (10), p_k^- = C(dt xi_k)^T I xi_k (s = +1) and p_k^+ = C(-dt xi_k-1)^T I xi_k-1 (s = -1).
template <class G>
typename G::Tangent discrete_momentum(const HolonomicModel<G>& model,
                                      const HolonomicOptions<G>& opt, double s_dt,
                                      const typename G::Tangent& xi, typename G::Jacobian* J) {
  const typename G::Jacobian& I = model.inertia();
  const typename G::Tangent mu = I * xi;
  const typename G::Jacobian C = tangent_c<G>(opt.map, opt.tangent, s_dt * xi);
  if (J)
    *J = C.transpose() * I +
         s_dt * tangent_c_transpose_derivative<G>(opt.map, opt.tangent, s_dt * xi, mu);
  return C.transpose() * mu;
}

// Solves discrete_momentum(s dt, xi) = b for xi: a step (s = +1) or the Legendre transform
// at t_0 (s = -1).
template <class G>
NewtonStatus solve_momentum_balance(const HolonomicModel<G>& model,
                                    const HolonomicOptions<G>& opt, double s_dt,
                                    const typename G::Tangent& b, typename G::Tangent& xi) {
  auto residual = [&](const typename G::Tangent& x, typename G::Tangent& r,
                      typename G::Jacobian* J) {
    r = discrete_momentum(model, opt, s_dt, x, J) - b;
  };
  return newton_solve(residual, xi, b.template lpNorm<Eigen::Infinity>(), opt.newton);
}

}  // namespace

template <class G>
void holonomic_residual(const HolonomicModel<G>& model, const HolonomicOptions<G>& opt,
                        double dt, double t_k, const G& g_k,
                        const typename G::Tangent& xi_km1, const typename G::Tangent& xi_k,
                        const StepInputs& in, bool want_jacobians, HolonomicResidual<G>& out) {
  using Tangent = typename G::Tangent;
  using Jac = typename G::Jacobian;
  Tangent f_u, f_ext;
  Jac J_fe_g, J_fe_xi;
  model.control_wrench(in.gamma, in.u, f_u, want_jacobians ? &out.J_r_u_k : nullptr,
                       want_jacobians ? &out.J_r_gamma_k : nullptr);
  model.external_wrench(t_k, g_k, xi_km1, f_ext, want_jacobians ? &J_fe_g : nullptr,
                        want_jacobians ? &J_fe_xi : nullptr);
  // vehicles eq. (10)
  out.r = discrete_momentum(model, opt, dt, xi_k, want_jacobians ? &out.J_r_xi_k : nullptr) -
          discrete_momentum(model, opt, -dt, xi_km1, want_jacobians ? &out.J_r_xi_km1 : nullptr) -
          dt * (f_u + f_ext);
  if (!want_jacobians) return;
  // dD(s dt, xi)/d(dt) = s T(s dt xi, I xi) xi, with T = d/d eta [C(eta)^T mu].
  const Jac& I = model.inertia();
  out.J_r_dt =
      tangent_c_transpose_derivative<G>(opt.map, opt.tangent, dt * xi_k, I * xi_k) * xi_k +
      tangent_c_transpose_derivative<G>(opt.map, opt.tangent, -dt * xi_km1, I * xi_km1) * xi_km1 -
      (f_u + f_ext);
  out.J_r_xi_km1 = -out.J_r_xi_km1 - dt * J_fe_xi;
  out.J_r_g_k = -dt * J_fe_g;
  out.J_r_u_k *= -dt;
  out.J_r_gamma_k *= -dt;
}

template <class G>
typename G::Tangent momentum_plus(const HolonomicModel<G>& model,
                                  const HolonomicOptions<G>& opt, double dt,
                                  const typename G::Tangent& xi_km1) {
  return discrete_momentum(model, opt, -dt, xi_km1, nullptr);
}

template <class G>
typename G::Tangent initial_xi_km1(const HolonomicModel<G>& model,
                                   const HolonomicOptions<G>& opt, double dt,
                                   const typename G::Tangent& xi_0) {
  typename G::Tangent xi = xi_0;
  const NewtonStatus st = solve_momentum_balance(model, opt, -dt, model.inertia() * xi_0, xi);
  if (!st.converged) {
    std::ostringstream msg;
    msg << "discrete Legendre transform at t_0 did not converge after " << st.iterations
        << " iterations (residual " << st.residual_norm
        << "); " << detail::newton_advice(st.residual_norm, model.inertia());
    throw SolverError(msg.str());
  }
  return xi;
}

template <class G>
typename G::Tangent initial_xi_km1_ddt(const HolonomicModel<G>& model,
                                       const HolonomicOptions<G>& opt, double dt,
                                       const typename G::Tangent& xi_km1) {
  typename G::Jacobian J_D;
  discrete_momentum(model, opt, -dt, xi_km1, &J_D);
  const typename G::Tangent rhs =
      tangent_c_transpose_derivative<G>(opt.map, opt.tangent, -dt * xi_km1,
                                        model.inertia() * xi_km1) * xi_km1;
  return J_D.partialPivLu().solve(rhs);
}

template <class G>
NewtonStatus holonomic_step(const HolonomicModel<G>& model, const HolonomicOptions<G>& opt,
                            double dt, double t_k, const G& g_k,
                            const typename G::Tangent& xi_km1, const StepInputs& in,
                            typename G::Tangent& xi_k, G& g_kp1) {
  using Tangent = typename G::Tangent;
  Tangent f_u, f_ext;
  model.control_wrench(in.gamma, in.u, f_u, nullptr, nullptr);
  model.external_wrench(t_k, g_k, xi_km1, f_ext, nullptr, nullptr);
  // Everything in eq. (10) that does not depend on xi_k.
  const Tangent b = momentum_plus(model, opt, dt, xi_km1) + dt * (f_u + f_ext);
  NewtonStatus st = solve_momentum_balance(model, opt, dt, b, xi_k);
  if (!st.converged) {
    // At very large steps an extrapolated guess can lie outside Newton's basin; the
    // previous velocity is the other natural start.
    xi_k = xi_km1;
    const int spent = st.iterations;
    st = solve_momentum_balance(model, opt, dt, b, xi_k);
    st.iterations += spent;
  }
  if (st.converged) g_kp1 = g_k * tau<G>(opt.map, dt * xi_k);  // eq. (9)
  return st;
}

template <class G>
typename G::Tangent spatial_momentum(const G& g_k, const typename G::Tangent& p_k) {
  return g_k.inverse().Ad().transpose() * p_k;
}

template <class G>
typename G::Tangent euler_poincare_rhs(const HolonomicModel<G>& model, double t, const G& g,
                                       const typename G::Tangent& xi, const InputVec& gamma,
                                       const InputVec& u) {
  typename G::Tangent f_u, f_ext;
  model.control_wrench(gamma, u, f_u, nullptr, nullptr);
  model.external_wrench(t, g, xi, f_ext, nullptr, nullptr);
  const typename G::Tangent mu = model.inertia() * xi;
  return model.inertia_inv() * (G::ad(xi).transpose() * mu + f_u + f_ext);
}

template <class G>
double vehicle_energy(const HolonomicModel<G>& model, const G& g,
                      const typename G::Tangent& xi) {
  return 0.5 * xi.dot(model.inertia() * xi) + model.potential_energy(g);
}

#define MARSDEN_INSTANTIATE_HOLONOMIC(G)                                                    \
  template class HolonomicModel<G>;                                                         \
  template G::Jacobian tangent_c<G>(DiffMap, TangentMap, const G::Tangent&);               \
  template G::Jacobian tangent_c_transpose_derivative<G>(DiffMap, TangentMap,              \
                                                          const G::Tangent&,                \
                                                          const G::Tangent&);               \
  template void holonomic_residual<G>(const HolonomicModel<G>&, const HolonomicOptions<G>&, \
                                      double, double, const G&, const G::Tangent&,          \
                                      const G::Tangent&, const StepInputs&, bool,           \
                                      HolonomicResidual<G>&);                               \
  template G::Tangent momentum_plus<G>(const HolonomicModel<G>&, const HolonomicOptions<G>&,\
                                       double, const G::Tangent&);                          \
  template G::Tangent initial_xi_km1<G>(const HolonomicModel<G>&,                           \
                                        const HolonomicOptions<G>&, double,                 \
                                        const G::Tangent&);                                 \
  template G::Tangent initial_xi_km1_ddt<G>(const HolonomicModel<G>&,                       \
                                            const HolonomicOptions<G>&, double,             \
                                            const G::Tangent&);                             \
  template NewtonStatus holonomic_step<G>(const HolonomicModel<G>&,                         \
                                          const HolonomicOptions<G>&, double, double,       \
                                          const G&, const G::Tangent&, const StepInputs&,   \
                                          G::Tangent&, G&);                                 \
  template G::Tangent spatial_momentum<G>(const G&, const G::Tangent&);                     \
  template G::Tangent euler_poincare_rhs<G>(const HolonomicModel<G>&, double, const G&,     \
                                            const G::Tangent&, const InputVec&,             \
                                            const InputVec&);                               \
  template double vehicle_energy<G>(const HolonomicModel<G>&, const G&, const G::Tangent&);

MARSDEN_INSTANTIATE_HOLONOMIC(SE2)
MARSDEN_INSTANTIATE_HOLONOMIC(SE3)

}  // namespace marsden::vehicle
