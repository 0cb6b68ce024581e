#include "marsden/tree/galerkin.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "marsden/error.hpp"
#include "marsden/tree/dynamics.hpp"
#include "tree/detail.hpp"

namespace marsden::tree {

namespace {

// Legendre P_n and P_n' at x in (-1, 1) by the three-term recurrence.
struct Legendre {
  double p, dp;
};
Legendre legendre(int n, double x) {
  double p0 = 1.0, p1 = x;
  if (n == 0) return {1.0, 0.0};
  for (int k = 1; k < n; ++k) {
    const double p2 = ((2 * k + 1) * x * p1 - k * p0) / (k + 1);
    p0 = p1;
    p1 = p2;
  }
  return {p1, n * (x * p1 - p0) / (x * x - 1.0)};
}

// Newton on a root of f from x, to machine precision (the guesses below are within the
// root's basin for n <= kGalerkinMaxStages + 1).
template <class F>
double polish_root(F&& f_over_df, double x) {
  for (int it = 0; it < 100; ++it) {
    const double dx = f_over_df(x);
    x -= dx;
    if (std::abs(dx) < 1e-16) break;
  }
  return x;
}

// Gauss-Legendre nodes (roots of P_n) and weights 2 / ((1 - x^2) P_n'(x)^2) on [-1, 1],
// mapped to [0, 1], ascending.
void gauss_rule(int n, VecX& c, VecX& b) {
  c.resize(n);
  b.resize(n);
  for (int i = 0; i < n; ++i) {
    const double guess = -std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5));
    const auto step = [n](double y) {
      const Legendre l = legendre(n, y);
      return l.p / l.dp;
    };
    const double x = polish_root(step, guess);
    const double dp = legendre(n, x).dp;
    c[i] = 0.5 * (1.0 + x);
    b[i] = 1.0 / ((1.0 - x * x) * dp * dp);
  }
}

// Gauss-Lobatto nodes (+-1 and the roots of P_s') and weights 2 / (s (s + 1) P_s(x)^2)
// on [-1, 1] for s + 1 points, mapped to [0, 1], ascending.
void lobatto_rule(int s, VecX& c, VecX& b) {
  c.resize(s + 1);
  b.resize(s + 1);
  const double w_end = 1.0 / (s * (s + 1));
  c[0] = 0.0;
  c[s] = 1.0;
  b[0] = b[s] = w_end;
  for (int i = 1; i < s; ++i) {
    // P_s'' = (2 x P_s' - s (s + 1) P_s) / (1 - x^2).
    const auto step = [s](double y) {
      const Legendre l = legendre(s, y);
      return l.dp * (1.0 - y * y) / (2.0 * y * l.dp - s * (s + 1) * l.p);
    };
    const double x = polish_root(step, -std::cos(std::numbers::pi * i / s));
    const double p = legendre(s, x).p;
    c[i] = 0.5 * (1.0 + x);
    b[i] = w_end / (p * p);
  }
}

// Gauss-Radau nodes with the right endpoint (Radau IIA): the mirror image of the rule
// with -1 fixed, whose other nodes are the roots of P_s-1 + P_s and whose weights are
// 2 / s^2 at -1 and (1 - x) / (s^2 P_s-1(x)^2) elsewhere; mapped to [0, 1], ascending.
void radau_rule(int s, VecX& c, VecX& b) {
  c.resize(s);
  b.resize(s);
  c[s - 1] = 1.0;
  b[s - 1] = 1.0 / (s * s);
  for (int i = 1; i < s; ++i) {
    const auto step = [s](double y) {
      const Legendre a = legendre(s - 1, y), l = legendre(s, y);
      return (a.p + l.p) / (a.dp + l.dp);
    };
    // Roots ascending in x, so descending in c = (1 - x) / 2.
    const double x = polish_root(step, -std::cos(2.0 * std::numbers::pi * i / (2 * s - 1)));
    const double p = legendre(s - 1, x).p;
    c[s - 1 - i] = 0.5 * (1.0 - x);
    b[s - 1 - i] = 0.5 * (1.0 - x) / (s * s * p * p);
  }
}

// l_nu(x) and l_nu'(x) of the Lagrange basis on the nodes tau.
double basis(const VecX& tau, int nu, double x) {
  double v = 1.0;
  for (int mu = 0; mu < tau.size(); ++mu)
    if (mu != nu) v *= (x - tau[mu]) / (tau[nu] - tau[mu]);
  return v;
}
double basis_derivative(const VecX& tau, int nu, double x) {
  double sum = 0.0;
  for (int kappa = 0; kappa < tau.size(); ++kappa) {
    if (kappa == nu) continue;
    double v = 1.0 / (tau[nu] - tau[kappa]);
    for (int mu = 0; mu < tau.size(); ++mu)
      if (mu != nu && mu != kappa) v *= (x - tau[mu]) / (tau[nu] - tau[mu]);
    sum += v;
  }
  return sum;
}

bool has_forces(const Model& model) {
  return !model.coordinate_dampers().empty() || !model.frame_dampers().empty() ||
         !model.inputs().empty() || !model.generated_forces().empty();
}

void check_model(const Model& model) {
  if (model.num_prescribed() > 0)
    throw InputError("tree galerkin step: the model has " +
                     std::to_string(model.num_prescribed()) + " kinematic coordinates (first: '" +
                     model.coords()[model.prescribed_coords()[0]].name +
                     "'); the galerkin integrator needs every coordinate dynamic (use the "
                     "midpoint integrator)");
}

void check_step_inputs(const Model& model, const GalerkinWorkspace& ws,
                       const GalerkinOptions& opt, double dt, const TreeState& x_k,
                       const MatX& u_nodes) {
  if (!(dt > 0.0) || !std::isfinite(dt))
    throw InputError("tree galerkin step: dt must be positive and finite");
  if (opt.stages != ws.tableau.stages || opt.quadrature != ws.quadrature)
    throw InputError("tree galerkin step: the options ask for " + std::to_string(opt.stages) +
                     " stages, the workspace was built for " +
                     std::to_string(ws.tableau.stages) + " (or another quadrature)");
  check_model(model);
  if (x_k.q.size() != model.num_coords() || x_k.p.size() != model.num_dynamic())
    throw InputError("tree galerkin step: the state needs " +
                     std::to_string(model.num_coords()) + " coordinates and momenta");
  const int nu = model.num_inputs(), nodes = static_cast<int>(ws.tableau.c.size());
  if (u_nodes.rows() != nu || (nu > 0 && u_nodes.cols() != 1 && u_nodes.cols() != nodes))
    throw InputError("tree galerkin step: u_nodes needs " + std::to_string(nu) +
                     " rows and 1 or " + std::to_string(nodes) + " columns (one per quadrature "
                     "node), got " + std::to_string(u_nodes.rows()) + " x " +
                     std::to_string(u_nodes.cols()));
  if (!x_k.q.allFinite() || !x_k.p.allFinite() || !u_nodes.allFinite())
    throw InputError("tree galerkin step at t = " + std::to_string(x_k.t) +
                     ": the state or an input is not finite");
}

// The step equations at z (see galerkin.hpp), rows (R_0..R_s-1, h(q^1)..h(q^s)), with
// ws.Dh_k = Dh(q_k) already set.
void step_residual(const Model& model, Data& data, GalerkinWorkspace& ws,
                   const GalerkinOptions& opt, double dt, const TreeState& x_k,
                   const MatX& u_nodes, const VecX& z, VecX& r, MatX* J) {
  const GalerkinTableau& tab = ws.tableau;
  const int s = tab.stages, n = model.num_coords(), m = model.num_constraint_rows();
  const int nodes = static_cast<int>(tab.c.size());
  const bool forces = has_forces(model), second_order = J != nullptr;
  ws.q_ctrl.col(0) = x_k.q;
  for (int nu = 1; nu <= s; ++nu) ws.q_ctrl.col(nu) = z.segment((nu - 1) * n, n);
  ws.G.setZero();
  if (J) J->setZero();

  for (int i = 0; i < nodes; ++i) {
    // From the increments q^nu - q^0 (the basis sums to 1, its derivatives to 0): the
    // velocity then carries no cancellation of the q^nu / dt.
    ws.q_i = x_k.q;
    ws.v_i.setZero();
    for (int nu = 1; nu <= s; ++nu) {
      ws.q_i += tab.A(i, nu) * (ws.q_ctrl.col(nu) - x_k.q);
      ws.v_i += (tab.B(i, nu) / dt) * (ws.q_ctrl.col(nu) - x_k.q);
    }
    lagrangian_terms(model, data, ws.q_i, ws.v_i, second_order, opt.algorithm);
    ws.force_i = data.L_q;
    if (forces) {
      ws.u_i = u_nodes.col(u_nodes.cols() == 1 ? 0 : i);
      detail::forces_at_current_kinematics(model, data, ws.q_i, ws.v_i, ws.u_i, second_order);
      ws.force_i += data.Q;
    }
    const double w = tab.b[i];
    for (int nu = 0; nu <= s; ++nu)
      ws.G.col(nu) += (dt * w * tab.A(i, nu)) * ws.force_i + (w * tab.B(i, nu)) * data.L_v;
    if (!J) continue;
    // d/dq^mu of D_{q^nu} L_d + f^nu at this node: A_nu A_mu dt (L_qq + Q_q)
    // + A_nu B_mu (L_qv + Q_v) + B_nu A_mu L_qv^T + B_nu B_mu M / dt, all times b_i.
    ws.K_i = (dt * w) * data.L_qq;
    ws.C_i = w * data.L_qv;
    if (forces) {
      ws.K_i += (dt * w) * data.Q_q;
      ws.C_i += w * data.Q_v;
    }
    for (int nu = 0; nu < s; ++nu)
      for (int mu = 1; mu <= s; ++mu) {
        const double a_nu = tab.A(i, nu), b_nu = tab.B(i, nu);
        const double a_mu = tab.A(i, mu), b_mu = tab.B(i, mu);
        auto block = J->block(nu * n, (mu - 1) * n, n, n);
        block += (a_nu * a_mu) * ws.K_i + (a_nu * b_mu) * ws.C_i;
        block += (b_nu * a_mu * w) * data.L_qv.transpose() + (b_nu * b_mu * w / dt) * data.M;
      }
  }

  // Rows R_0..R_s-1 and the constraints at q^1..q^s.
  r.head(n) = x_k.p + ws.G.col(0);
  for (int nu = 1; nu < s; ++nu) r.segment(nu * n, n) = ws.G.col(nu);
  if (m == 0) return;
  const int lam = s * n;  // first multiplier in z, first constraint row in r
  r.head(n).noalias() -= ws.Dh_k.transpose() * z.segment(lam, m);
  if (J) J->block(0, lam, n, m) = -ws.Dh_k.transpose();
  for (int nu = 1; nu <= s; ++nu) {
    const bool internal = nu < s;
    if (internal) ws.weight = z.segment(lam + nu * m, m);
    ws.q_i = ws.q_ctrl.col(nu);  // a vector, not a block: constraint_terms takes a VecX
    constraint_terms(model, data, ws.q_i, internal && J ? &ws.weight : nullptr);
    r.segment(lam + (nu - 1) * m, m) = data.h;
    if (internal)
      r.segment(nu * n, n).noalias() -= data.Dh.transpose() * z.segment(lam + nu * m, m);
    if (!J) continue;
    J->block(lam + (nu - 1) * m, (nu - 1) * n, m, n) = data.Dh;
    if (internal) {
      J->block(nu * n, lam + nu * m, n, m) = -data.Dh.transpose();
      J->block(nu * n, (nu - 1) * n, n, n) -= data.h_qq_w;
    }
  }
}

void constraints_at_start(const Model& model, Data& data, GalerkinWorkspace& ws,
                          const VecX& q_k) {
  if (model.num_constraint_rows() == 0) return;
  constraint_terms(model, data, q_k, nullptr);
  ws.Dh_k = data.Dh;
}

}  // namespace

std::optional<GalerkinQuadrature> galerkin_quadrature_from_name(const std::string& name) {
  if (name == "lobatto") return GalerkinQuadrature::Lobatto;
  if (name == "gauss") return GalerkinQuadrature::Gauss;
  if (name == "radau") return GalerkinQuadrature::Radau;
  return std::nullopt;
}

const char* galerkin_quadrature_name(GalerkinQuadrature q) {
  return q == GalerkinQuadrature::Lobatto ? "lobatto"
         : q == GalerkinQuadrature::Gauss ? "gauss"
                                          : "radau";
}

GalerkinTableau galerkin_tableau(int stages, GalerkinQuadrature quadrature) {
  if (stages < 1 || stages > kGalerkinMaxStages)
    throw InputError("tree galerkin: stages must be in 1.." + std::to_string(kGalerkinMaxStages) +
                     " (got " + std::to_string(stages) + ")");
  GalerkinTableau t;
  t.stages = stages;
  VecX unused;
  lobatto_rule(stages, t.tau, unused);
  if (quadrature == GalerkinQuadrature::Lobatto)
    lobatto_rule(stages, t.c, t.b);
  else if (quadrature == GalerkinQuadrature::Gauss)
    gauss_rule(stages, t.c, t.b);
  else
    radau_rule(stages, t.c, t.b);
  const int nodes = static_cast<int>(t.c.size());
  t.A.resize(nodes, stages + 1);
  t.B.resize(nodes, stages + 1);
  for (int i = 0; i < nodes; ++i)
    for (int nu = 0; nu <= stages; ++nu) {
      t.A(i, nu) = basis(t.tau, nu, t.c[i]);
      t.B(i, nu) = basis_derivative(t.tau, nu, t.c[i]);
    }
  return t;
}

GalerkinWorkspace::GalerkinWorkspace(const Model& model, const GalerkinOptions& options)
    : quadrature(options.quadrature),
      tableau(galerkin_tableau(options.stages, options.quadrature)),
      newton(options.stages * (model.num_coords() + model.num_constraint_rows())) {
  check_model(model);
  const int s = options.stages, n = model.num_coords(), m = model.num_constraint_rows();
  q_ctrl = G = MatX::Zero(n, s + 1);
  Dh_k = MatX::Zero(m, n);
  q_i = v_i = force_i = VecX::Zero(n);
  u_i = VecX::Zero(model.num_inputs());
  weight = VecX::Zero(m);
  K_i = C_i = MatX::Zero(n, n);
  z = VecX::Zero(s * (n + m));
  warm.q_ctrl = MatX::Zero(n, s + 1);
  warm.lambda = VecX::Zero(s * m);
}

void galerkin_residual(const Model& model, Data& data, GalerkinWorkspace& ws,
                       const GalerkinOptions& options, double dt, const TreeState& x_k,
                       const MatX& u_nodes, const VecX& z, VecX& r, MatX* J) {
  check_step_inputs(model, ws, options, dt, x_k, u_nodes);
  const int k = static_cast<int>(ws.z.size());
  if (z.size() != k)
    throw InputError("tree galerkin residual: z needs " + std::to_string(k) + " entries");
  r.resize(k);
  if (J) J->resize(k, k);
  constraints_at_start(model, data, ws, x_k.q);
  step_residual(model, data, ws, options, dt, x_k, u_nodes, z, r, J);
}

NewtonStatus galerkin_step(const Model& model, Data& data, GalerkinWorkspace& ws,
                           const GalerkinOptions& options, double dt, const TreeState& x_k,
                           const MatX& u_nodes, TreeState& x_kp1) {
  check_step_inputs(model, ws, options, dt, x_k, u_nodes);
  const GalerkinTableau& tab = ws.tableau;
  const int s = tab.stages, n = model.num_coords(), m = model.num_constraint_rows();
  constraints_at_start(model, data, ws, x_k.q);

  // Warm start when this step continues the last one: its polynomial extrapolated to this
  // step's control times (exact to O(dt^(s+1))); otherwise rest at q_k.
  const auto& warm = ws.warm;
  const bool continues = warm.valid && warm.q_ctrl.col(s) == x_k.q;
  for (int nu = 1; nu <= s; ++nu) {
    auto q_nu = ws.z.segment((nu - 1) * n, n);
    if (!continues) {
      q_nu = x_k.q;
      continue;
    }
    const double tau = 1.0 + tab.tau[nu] * dt / warm.dt;  // in the last step's time
    q_nu.setZero();
    for (int mu = 0; mu <= s; ++mu) q_nu += basis(tab.tau, mu, tau) * warm.q_ctrl.col(mu);
  }
  if (continues)
    ws.z.tail(s * m) = warm.lambda;
  else
    ws.z.tail(s * m).setZero();

  // The residual's scale: the momenta and the impulse of the conservative forces over the
  // step, dt |L_q(q_k)| (first order, O(n)). From rest p_k = 0 while the internal rows
  // still carry dt L_q, whose rounding a long chain puts above an absolute 1e-10.
  ws.v_i.setZero();
  lagrangian_terms(model, data, x_k.q, ws.v_i, false, options.algorithm);
  const double scale = (n > 0 ? x_k.p.lpNorm<Eigen::Infinity>() : 0.0) +
                       dt * (n > 0 ? data.L_q.lpNorm<Eigen::Infinity>() : 0.0);
  // As in the midpoint step, the tolerance also bounds the distance to the solution, which
  // lets a step whose residual's round-off lies above the tolerance (small dt) converge.
  NewtonOptions newton = options.newton;
  newton.step_tolerance = newton.tolerance;
  const NewtonStatus status = newton_solve(
      [&](const VecX& z, VecX& r, MatX* J) {
        step_residual(model, data, ws, options, dt, x_k, u_nodes, z, r, J);
      },
      ws.z, scale, newton, ws.newton);
  if (!status.converged) {
    ws.warm.valid = false;
    return status;
  }
  // newton_solve's last residual call was at the solution: G and q_ctrl are there.
  x_kp1.t = x_k.t + dt;
  x_kp1.q = ws.q_ctrl.col(s);
  x_kp1.p = ws.G.col(s);
  ws.warm.q_ctrl = ws.q_ctrl;
  ws.warm.lambda = ws.z.tail(s * m);
  ws.warm.dt = dt;
  ws.warm.valid = true;
  return status;
}

}  // namespace marsden::tree
