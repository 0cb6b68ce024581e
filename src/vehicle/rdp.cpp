#include "marsden/vehicle/rdp.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/lie/tangent.hpp"
#include "vehicle/newton_advice.hpp"

namespace marsden::vehicle {

namespace {

using LagCols = LagMat;  // (2 n_r + dim G) x (n + n_r), fits in the Lagrangian capacity

// One segment's quantities at (rho, u, w): rho is r_k+alpha (or r_k-1+alpha) and depends on
// the unknown u through d rho/d u = s I and on r_k through d rho/d r_k = I.
template <class G>
struct Segment {
  typename G::Tangent xi;
  LagMat hess;
  ConnectionMat<G> A;
  SymBasisMat<G> E;
  std::array<ConnectionMat<G>, kRdpMaxShape> dA;
  std::array<SymBasisMat<G>, kRdpMaxShape> dE;
  LagCols Z;      // d(rho, u, xi) / d(u, w, r_k)
  LagVec grad;    // (dl/dr + f_r, dl/du, dl/dxi): the shape force rides with dl/dr
  LagCols dgrad;  // grad's derivatives by (u, w, r_k) = hess Z (+ df_r Z)
};

template <class G>
void eval_segment(const RdpModel<G>& model, const ShapeVec& rho, const ShapeVec& u, const RdpVec& w,
                  double s, bool jac, Segment<G>& seg) {
  constexpr int dG = G::kDim;
  const int nr = model.num_shape(), nb = model.num_symmetry(), n = nr + nb;
  model.connection(rho, seg.A, jac ? &seg.dA : nullptr);
  model.symmetry_basis(rho, seg.E, jac ? &seg.dE : nullptr);
  seg.xi.noalias() = seg.E * w;
  seg.xi.noalias() -= seg.A * u;
  model.lagrangian(rho, u, seg.xi, &seg.grad, jac ? &seg.hess : nullptr);
  // The shape force enters every equation where dl/dr does, at the same point and with the
  // same weights (header comment), so it is added to dl/dr: grad's head is lr + f_r.
  const bool forced = model.has_shape_force();
  ShapeForceJac J_f;
  if (forced) {
    ShapeVec f;
    model.shape_force(rho, u, seg.xi, f, jac ? &J_f : nullptr);
    seg.grad.head(nr) += f;
  }
  if (!jac) return;
  seg.Z.setZero(2 * nr + dG, n + nr);
  for (int j = 0; j < nr; ++j) {
    // d xi / d rho_j at fixed (u, w)
    typename G::Tangent x_rho = seg.dE[j] * w;
    x_rho.noalias() -= seg.dA[j] * u;
    seg.Z.col(j).segment(2 * nr, dG) = s * x_rho;
    seg.Z.col(n + j).segment(2 * nr, dG) = x_rho;
    seg.Z(j, j) = s;
    seg.Z(j, n + j) = 1.0;
    seg.Z(nr + j, j) = 1.0;
  }
  seg.Z.block(2 * nr, 0, dG, nr) -= seg.A;
  seg.Z.block(2 * nr, nr, dG, nb) = seg.E;
  seg.dgrad.noalias() = seg.hess * seg.Z;
  if (forced) seg.dgrad.topRows(nr).noalias() += J_f * seg.Z;
}

}  // namespace

template <class G>
typename G::Tangent rdp_segment_velocity(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                                         const ShapeVec& r_k, const RdpVec& x_k) {
  const int nr = model.num_shape(), nb = model.num_symmetry();
  const ShapeVec u = x_k.head(nr);
  const ShapeVec rho = r_k + opt.alpha * dt * u;
  ConnectionMat<G> A;
  SymBasisMat<G> E;
  model.connection(rho, A, nullptr);
  model.symmetry_basis(rho, E, nullptr);
  typename G::Tangent xi = E * x_k.tail(nb);
  xi.noalias() -= A * u;
  return xi;
}

template <class G>
RdpLeftMomentum<G> rdp_continuous_momentum(const RdpModel<G>& model, const ShapeVec& r,
                                           const ShapeVec& u, const typename G::Tangent& xi) {
  const int nr = model.num_shape();
  LagVec grad;
  model.lagrangian(r, u, xi, &grad, nullptr);
  RdpLeftMomentum<G> m;
  m.p = grad.segment(nr, nr);
  m.mu = grad.tail(G::kDim);
  return m;
}

template <class G>
void rdp_left_momentum(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                       const ShapeVec& r_k, const RdpVec& x_km1, const ShapeVec& f_km1a,
                       RdpLeftMomentum<G>& out, RdpLeftJacobians<G>* J) {
  using Jac = typename G::Jacobian;
  constexpr int dG = G::kDim;
  const int nr = model.num_shape(), nb = model.num_symmetry(), n = nr + nb;
  const double a = opt.alpha;
  const double s = -(1.0 - a) * dt;  // r_k-1+alpha = r_k + s u_k-1
  const ShapeVec u = x_km1.head(nr);
  const RdpVec w = x_km1.tail(nb);
  const ShapeVec rho = r_k + s * u;
  Segment<G> seg;
  eval_segment(model, rho, u, w, s, J != nullptr, seg);
  const typename G::Tangent mu = seg.grad.tail(dG);
  const Jac C = tangent_c<G>(opt.map, opt.tangent, -dt * seg.xi);
  // mu^- = C(-dt xi_k-1)^T mu_k-1,  p^- = p_k-1 + alpha dt (lr_k-1 + f_k-1+alpha)   (eq. (17))
  out.mu.noalias() = C.transpose() * mu;
  out.p = seg.grad.segment(nr, nr) + a * dt * (seg.grad.head(nr) + f_km1a);
  if (!J) return;
  const Jac D = tangent_c_transpose_derivative<G>(opt.map, opt.tangent, -dt * seg.xi, mu);
  Eigen::Matrix<double, dG, Eigen::Dynamic, 0, dG, kRdpMaxLagrangian> Jmu(dG, n + nr);
  Jmu.noalias() = C.transpose() * seg.dgrad.bottomRows(dG);
  Jmu.noalias() -= dt * D * seg.Z.bottomRows(dG);
  LagCols Jp = seg.dgrad.middleRows(nr, nr) + a * dt * seg.dgrad.topRows(nr);
  J->J_mu_x = Jmu.leftCols(n);
  J->J_mu_r = Jmu.rightCols(nr);
  J->J_p_x = Jp.leftCols(n);
  J->J_p_r = Jp.rightCols(nr);
  J->J_p_f = a * dt * RdpShapeCols::Identity(nr, nr);
  // dt moves r_k-1+alpha by s/dt u_k-1 at fixed r_k: the r_k columns of Z times u, scaled.
  const LagVec z_dt = -(1.0 - a) * (seg.Z.rightCols(nr) * u);
  const LagVec dgrad_dt = -(1.0 - a) * (seg.dgrad.rightCols(nr) * u);
  J->J_mu_dt.noalias() = C.transpose() * dgrad_dt.tail(dG);
  J->J_mu_dt.noalias() -= D * (seg.xi + dt * z_dt.tail(dG));
  J->J_p_dt =
      dgrad_dt.segment(nr, nr) + a * (seg.grad.head(nr) + f_km1a) + a * dt * dgrad_dt.head(nr);
}

template <class G>
void rdp_residual_given_left(
    const RdpModel<G>& model, const RdpOptions& opt, double dt, const ShapeVec& r_k,
    const RdpLeftMomentum<G>& left, const RdpVec& x_k, const ShapeVec& f_ka,
    const ShapeVec& u_prescribed, bool want_jacobians, RdpResidual<G>& out,
    RdpShapeCols* J_r_p_left,
    Eigen::Matrix<double, Eigen::Dynamic, G::kDim, 0, kRdpMaxUnknowns, G::kDim>* J_r_mu_left) {
  using Tangent = typename G::Tangent;
  using Jac = typename G::Jacobian;
  constexpr int dG = G::kDim;
  const int nr = model.num_shape(), nb = model.num_symmetry(), n = nr + nb;
  const double a = opt.alpha;
  const ShapeVec u = x_k.head(nr);
  const RdpVec w = x_k.tail(nb);
  const ShapeVec rho = r_k + a * dt * u;
  Segment<G> seg;
  eval_segment(model, rho, u, w, a * dt, want_jacobians, seg);
  const Tangent mu = seg.grad.tail(dG);
  const Jac C = tangent_c<G>(opt.map, opt.tangent, dt * seg.xi);
  // The projections at r_k, with their r-derivatives for the r_k columns.
  ConnectionMat<G> A_k;
  SymBasisMat<G> E_k;
  std::array<ConnectionMat<G>, kRdpMaxShape> dA_k;
  std::array<SymBasisMat<G>, kRdpMaxShape> dE_k;
  model.connection(r_k, A_k, want_jacobians ? &dA_k : nullptr);
  model.symmetry_basis(r_k, E_k, want_jacobians ? &dE_k : nullptr);

  // DEP(k) of eq. (17); the k-1 part is mu^-.
  Tangent dep = C.transpose() * mu;
  dep -= left.mu;
  out.r.resize(n);
  // eq. (16), shape rows then symmetry rows
  out.r.head(nr) = seg.grad.segment(nr, nr) - (1.0 - a) * dt * (seg.grad.head(nr) + f_ka) - left.p;
  out.r.head(nr).noalias() -= A_k.transpose() * dep;
  out.r.tail(nb).noalias() = E_k.transpose() * dep;
  for (int i = 0; i < nr; ++i)
    if (model.prescribed(i)) out.r[i] = u[i] - u_prescribed[i];
  if (!want_jacobians) return;

  const Jac D = tangent_c_transpose_derivative<G>(opt.map, opt.tangent, dt * seg.xi, mu);
  Eigen::Matrix<double, dG, Eigen::Dynamic, 0, dG, kRdpMaxLagrangian> Ddep(dG, n + nr);
  Ddep.noalias() = C.transpose() * seg.dgrad.bottomRows(dG);
  Ddep.noalias() += dt * D * seg.Z.bottomRows(dG);
  LagCols Jfull(n, n + nr);
  Jfull.topRows(nr) = seg.dgrad.middleRows(nr, nr) - (1.0 - a) * dt * seg.dgrad.topRows(nr);
  Jfull.topRows(nr).noalias() -= A_k.transpose() * Ddep;
  Jfull.bottomRows(nb).noalias() = E_k.transpose() * Ddep;
  for (int j = 0; j < nr; ++j) {
    Jfull.col(n + j).head(nr).noalias() -= dA_k[j].transpose() * dep;
    Jfull.col(n + j).tail(nb).noalias() += dE_k[j].transpose() * dep;
  }
  out.J_r_x_k = Jfull.leftCols(n);
  out.J_r_r_k = Jfull.rightCols(nr);
  // dt moves r_k+alpha by alpha u_k at fixed r_k (the r_k columns of Z times u) and scales
  // the argument of C(dt xi_k) and the force terms.
  const LagVec z_dt = a * (seg.Z.rightCols(nr) * u);
  const LagVec dgrad_dt = a * (seg.dgrad.rightCols(nr) * u);
  Tangent ddep_dt = C.transpose() * dgrad_dt.tail(dG);
  ddep_dt.noalias() += D * (seg.xi + dt * z_dt.tail(dG));
  out.J_r_dt.resize(n);
  out.J_r_dt.head(nr) = dgrad_dt.segment(nr, nr) - (1.0 - a) * (seg.grad.head(nr) + f_ka) -
                        (1.0 - a) * dt * dgrad_dt.head(nr);
  out.J_r_dt.head(nr).noalias() -= A_k.transpose() * ddep_dt;
  out.J_r_dt.tail(nb).noalias() = E_k.transpose() * ddep_dt;
  out.J_r_f_ka.setZero(n, nr);
  out.J_r_f_ka.topRows(nr).diagonal().setConstant(-(1.0 - a) * dt);
  out.J_r_u_prescribed.setZero(n, nr);
  if (J_r_p_left) {
    J_r_p_left->setZero(n, nr);
    J_r_p_left->topRows(nr).diagonal().setConstant(-1.0);
  }
  if (J_r_mu_left) {
    J_r_mu_left->resize(n, dG);
    J_r_mu_left->topRows(nr) = A_k.transpose();
    J_r_mu_left->bottomRows(nb) = -E_k.transpose();
  }
  for (int i = 0; i < nr; ++i) {
    if (!model.prescribed(i)) continue;
    out.J_r_x_k.row(i).setZero();
    out.J_r_x_k(i, i) = 1.0;
    out.J_r_r_k.row(i).setZero();
    out.J_r_dt[i] = 0.0;
    out.J_r_f_ka.row(i).setZero();
    out.J_r_u_prescribed(i, i) = -1.0;
    if (J_r_p_left) J_r_p_left->row(i).setZero();
    if (J_r_mu_left) J_r_mu_left->row(i).setZero();
  }
}

template <class G>
void rdp_residual(const RdpModel<G>& model, const RdpOptions& opt, double dt, const ShapeVec& r_k,
                  const RdpVec& x_km1, const RdpVec& x_k, const ShapeVec& f_km1a,
                  const ShapeVec& f_ka, const ShapeVec& u_prescribed, bool want_jacobians,
                  RdpResidual<G>& out) {
  RdpLeftMomentum<G> left;
  RdpLeftJacobians<G> LJ;
  rdp_left_momentum(model, opt, dt, r_k, x_km1, f_km1a, left, want_jacobians ? &LJ : nullptr);
  RdpShapeCols J_p;
  Eigen::Matrix<double, Eigen::Dynamic, G::kDim, 0, kRdpMaxUnknowns, G::kDim> J_mu;
  rdp_residual_given_left(model, opt, dt, r_k, left, x_k, f_ka, u_prescribed, want_jacobians, out,
                          want_jacobians ? &J_p : nullptr, want_jacobians ? &J_mu : nullptr);
  if (!want_jacobians) return;
  // Chain rule through the left momenta.
  out.J_r_x_km1.noalias() = J_p * LJ.J_p_x;
  out.J_r_x_km1.noalias() += J_mu * LJ.J_mu_x;
  out.J_r_r_k.noalias() += J_p * LJ.J_p_r;
  out.J_r_r_k.noalias() += J_mu * LJ.J_mu_r;
  out.J_r_f_km1a.noalias() = J_p * LJ.J_p_f;
  out.J_r_dt.noalias() += J_p * LJ.J_p_dt;
  out.J_r_dt.noalias() += J_mu * LJ.J_mu_dt;
}

template <class G>
NewtonStatus rdp_step(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                      const ShapeVec& r_k, const G& g_k, const RdpLeftMomentum<G>& left,
                      const ShapeVec& f_ka, const ShapeVec& u_prescribed, RdpVec& x_k,
                      ShapeVec& r_kp1, G& g_kp1) {
  const int nr = model.num_shape();
  if (r_k.size() != nr || f_ka.size() != nr || u_prescribed.size() != nr ||
      x_k.size() != nr + model.num_symmetry())
    throw InputError(
        "rdp_step: sizes of r_k, f_ka, u_prescribed (n_r) or x_k (n_r + n_b) do not "
        "match the model");
  for (int i = 0; i < nr; ++i)
    if (model.prescribed(i)) x_k[i] = u_prescribed[i];
  RdpResidual<G> res;
  auto residual = [&](const RdpVec& x, RdpVec& r, RdpMat* J) {
    rdp_residual_given_left(model, opt, dt, r_k, left, x, f_ka, u_prescribed, J != nullptr, res);
    r = res.r;
    if (J) *J = res.J_r_x_k;
  };
  double scale = left.mu.template lpNorm<Eigen::Infinity>();
  if (nr > 0) scale = std::max(scale, left.p.template lpNorm<Eigen::Infinity>());
  const NewtonStatus st = newton_solve(residual, x_k, scale, opt.newton);
  if (st.converged) {
    const typename G::Tangent xi = rdp_segment_velocity(model, opt, dt, r_k, x_k);
    r_kp1 = r_k + dt * x_k.head(nr);         // eq. (16), line 2
    g_kp1 = g_k * tau<G>(opt.map, dt * xi);  // eq. (16), line 1
  }
  return st;
}

template <class G>
RdpState<G> rdp_initial_state(const RdpModel<G>& model, const ShapeVec& r_0, const G& g_0,
                              const ShapeVec& u_0, const RdpVec& w_0) {
  const int nr = model.num_shape(), nb = model.num_symmetry();
  if (nr < 0 || nr > kRdpMaxShape || nb < 0 || nb > G::kDim)
    throw InputError("rdp_initial_state: the model needs 0 <= n_r <= 4 and 0 <= n_b <= dim G");
  if (r_0.size() != nr || u_0.size() != nr || w_0.size() != nb)
    throw InputError("rdp_initial_state: sizes of r_0, u_0, w_0 do not match the model");
  ConnectionMat<G> A;
  SymBasisMat<G> E;
  model.connection(r_0, A, nullptr);
  model.symmetry_basis(r_0, E, nullptr);
  const typename G::Tangent xi_0 = E * w_0 - A * u_0;
  RdpState<G> s;
  s.r = r_0;
  s.g = g_0;
  s.x.resize(nr + nb);
  s.x << u_0, w_0;
  s.left = rdp_continuous_momentum(model, r_0, u_0, xi_0);
  return s;
}

template <class G>
NewtonStatus rdp_advance(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                         const ShapeVec& f_ka, const ShapeVec& u_prescribed, RdpState<G>& state,
                         int step_index) {
  RdpVec x = state.x;
  ShapeVec r_kp1;
  G g_kp1;
  NewtonStatus st =
      rdp_step(model, opt, dt, state.r, state.g, state.left, f_ka, u_prescribed, x, r_kp1, g_kp1);
  if (!st.converged) {
    // The kinetic metric in the dynamic unknowns (u, w), xi = E w - A u (a prescribed u
    // carries no inertia): its condition, not dt, is what a near-singular inertia spoils.
    const int nr = model.num_shape(), nb = model.num_symmetry(), n = G::kDim;
    ConnectionMat<G> A;
    SymBasisMat<G> E;
    model.connection(state.r, A, nullptr);
    model.symmetry_basis(state.r, E, nullptr);
    const ShapeVec u = state.x.head(nr);
    const typename G::Tangent xi = E * state.x.tail(nb) - A * u;
    LagMat hess;
    model.lagrangian(state.r, u, xi, nullptr, &hess);
    Eigen::MatrixXd T = Eigen::MatrixXd::Zero(nr + n, nr + nb);
    T.topLeftCorner(nr, nr).setIdentity();
    T.bottomLeftCorner(n, nr) = -A;
    T.bottomRightCorner(n, nb) = E;
    const Eigen::MatrixXd full =
        T.transpose() * Eigen::MatrixXd(hess.bottomRightCorner(nr + n, nr + n)) * T;
    std::vector<Eigen::Index> dynamic;
    for (int i = 0; i < nr + nb; ++i)
      if (i >= nr || !model.prescribed(i)) dynamic.push_back(i);
    const Eigen::MatrixXd metric = full(dynamic, dynamic);
    std::ostringstream msg;
    msg << "RDP step " << step_index << ": Newton did not converge after " << st.iterations
        << " iterations (residual " << st.residual_norm << "); " << detail::newton_advice(st.residual_norm, metric);
    throw SolverError(msg.str());
  }
  rdp_left_momentum(model, opt, dt, r_kp1, x, f_ka, state.left,
                    static_cast<RdpLeftJacobians<G>*>(nullptr));
  state.r = r_kp1;
  state.g = g_kp1;
  state.x = x;
  return st;
}

#define MARSDEN_INSTANTIATE_RDP(G)                                                               \
  template G::Tangent rdp_segment_velocity<G>(const RdpModel<G>&, const RdpOptions&, double,     \
                                              const ShapeVec&, const RdpVec&);                   \
  template RdpLeftMomentum<G> rdp_continuous_momentum<G>(const RdpModel<G>&, const ShapeVec&,    \
                                                         const ShapeVec&, const G::Tangent&);    \
  template void rdp_left_momentum<G>(const RdpModel<G>&, const RdpOptions&, double,              \
                                     const ShapeVec&, const RdpVec&, const ShapeVec&,            \
                                     RdpLeftMomentum<G>&, RdpLeftJacobians<G>*);                 \
  template void rdp_residual_given_left<G>(                                                      \
      const RdpModel<G>&, const RdpOptions&, double, const ShapeVec&, const RdpLeftMomentum<G>&, \
      const RdpVec&, const ShapeVec&, const ShapeVec&, bool, RdpResidual<G>&, RdpShapeCols*,     \
      Eigen::Matrix<double, Eigen::Dynamic, G::kDim, 0, kRdpMaxUnknowns, G::kDim>*);             \
  template void rdp_residual<G>(const RdpModel<G>&, const RdpOptions&, double, const ShapeVec&,  \
                                const RdpVec&, const RdpVec&, const ShapeVec&, const ShapeVec&,  \
                                const ShapeVec&, bool, RdpResidual<G>&);                         \
  template NewtonStatus rdp_step<G>(const RdpModel<G>&, const RdpOptions&, double,               \
                                    const ShapeVec&, const G&, const RdpLeftMomentum<G>&,        \
                                    const ShapeVec&, const ShapeVec&, RdpVec&, ShapeVec&, G&);   \
  template RdpState<G> rdp_initial_state<G>(const RdpModel<G>&, const ShapeVec&, const G&,       \
                                            const ShapeVec&, const RdpVec&);                     \
  template NewtonStatus rdp_advance<G>(const RdpModel<G>&, const RdpOptions&, double,            \
                                       const ShapeVec&, const ShapeVec&, RdpState<G>&, int);

MARSDEN_INSTANTIATE_RDP(SE2)
MARSDEN_INSTANTIATE_RDP(SE3)

}  // namespace marsden::vehicle
