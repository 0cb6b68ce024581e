#include "marsden/tree/midpoint.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "marsden/error.hpp"
#include "marsden/tree/dynamics.hpp"
#include "tree/detail.hpp"

namespace marsden::tree {

namespace {

bool has_forces(const Model& model) {
  return !model.coordinate_dampers().empty() || !model.frame_dampers().empty() ||
         !model.inputs().empty() || !model.generated_forces().empty();
}

// The quadrature point and velocity of L_d: q_m = q_k + alpha (q_kp1 - q_k),
// v = (q_kp1 - q_k) / dt, then L and Q there (eq. (22)).
void evaluate_at_quadrature_point(const Model& model, Data& data, const MidpointOptions& opt,
                                  double dt, const VecX& q_k, const VecX& u,
                                  bool second_order) {
  data.v_m = (data.q_kp1 - q_k) / dt;
  data.q_m = q_k + opt.alpha * (data.q_kp1 - q_k);
  lagrangian_terms(model, data, data.q_m, data.v_m, second_order, opt.algorithm);
  if (has_forces(model))
    detail::forces_at_current_kinematics(model, data, data.q_m, data.v_m, u, second_order);
}

// d/dq_kp1 of the step residual without the constraint term (eq. (26) with forces), all
// coordinates, into data.D1 as one vectorised expression.
void d1_jacobian(Data& data, double alpha, double dt) {
  data.D1 = ((1.0 - alpha) * alpha * dt) * (data.L_qq + data.Q_q) +
            (1.0 - alpha) * (data.L_qv + data.Q_v) - alpha * data.L_qv.transpose() - data.M / dt;
}

// p_kp1 = D2 L_d + f^+ (row i), after evaluate_at_quadrature_point.
double next_momentum(const Data& data, double alpha, double dt, int i) {
  return alpha * dt * (data.L_q[i] + data.Q[i]) + data.L_v[i];
}

// d/dq_kp1,j of p_kp1 = D2 L_d + f^+ (row i).
double d2_jacobian_next(const Data& data, double alpha, double dt, int i, int j) {
  return alpha * dt *
             (alpha * (data.L_qq(i, j) + data.Q_q(i, j)) + (data.L_qv(i, j) + data.Q_v(i, j)) / dt) +
         (alpha * data.L_qv(j, i) + data.M(i, j) / dt);
}

// d/dq_k,j of p_kp1 (row i).
double d2_jacobian_prev(const Data& data, double alpha, double dt, int i, int j) {
  return alpha * dt *
             ((1.0 - alpha) * (data.L_qq(i, j) + data.Q_q(i, j)) -
              (data.L_qv(i, j) + data.Q_v(i, j)) / dt) +
         ((1.0 - alpha) * data.L_qv(j, i) - data.M(i, j) / dt);
}

// d/dq_k,j of the step residual's row i, without the constraint term.
double d1_jacobian_prev(const Data& data, double alpha, double dt, int i, int j) {
  return (1.0 - alpha) * dt *
             ((1.0 - alpha) * (data.L_qq(i, j) + data.Q_q(i, j)) -
              (data.L_qv(i, j) + data.Q_v(i, j)) / dt) -
         ((1.0 - alpha) * data.L_qv(j, i) - data.M(i, j) / dt);
}

void check_step_inputs(const Model& model, const MidpointOptions& opt, double dt,
                       const TreeState& x_k, const VecX& u, const VecX& q_prescribed) {
  if (!(dt > 0.0) || !std::isfinite(dt))
    throw InputError("tree midpoint step: dt must be positive and finite");
  if (!(opt.alpha >= 0.0 && opt.alpha <= 1.0))
    throw InputError("tree midpoint step: alpha must lie in [0, 1]");
  if (x_k.q.size() != model.num_coords() || x_k.p.size() != model.num_dynamic())
    throw InputError("tree midpoint step: the state needs " +
                     std::to_string(model.num_coords()) + " coordinates and " +
                     std::to_string(model.num_dynamic()) + " momenta");
  if (u.size() != model.num_inputs())
    throw InputError("tree midpoint step: u needs " + std::to_string(model.num_inputs()) +
                     " entries, got " + std::to_string(u.size()));
  if (q_prescribed.size() != model.num_prescribed())
    throw InputError("tree midpoint step: the prescribed coordinates need " +
                     std::to_string(model.num_prescribed()) + " values, got " +
                     std::to_string(q_prescribed.size()));
  if (!x_k.q.allFinite() || !x_k.p.allFinite() || !u.allFinite() || !q_prescribed.allFinite())
    throw InputError("tree midpoint step at t = " + std::to_string(x_k.t) +
                     ": the state or an input is not finite");
}

// Dh(q_k), constant during the solve.
void constraints_at_start(const Model& model, Data& data, const VecX& q_k) {
  if (model.num_constraint_rows() == 0) return;
  constraint_terms(model, data, q_k, nullptr);
  data.Dh_k = data.Dh;
}

// The step equations at z = (dynamic q_kp1, lambda): r and, if J, dr/dz.
void step_residual(const Model& model, Data& data, const MidpointOptions& opt, double dt,
                   const TreeState& x_k, const VecX& u, const VecX& z, VecX& r, MatX* J) {
  const auto& dyn = model.dynamic_coords();
  const int nd = model.num_dynamic(), m = model.num_constraint_rows();
  for (int a = 0; a < nd; ++a) data.q_kp1[dyn[a]] = z[a];
  if (m > 0) {
    detail::joint_poses(model, data, data.q_kp1);
    detail::constraints_at_current_kinematics(model, data, data.q_kp1, nullptr);
  }
  evaluate_at_quadrature_point(model, data, opt, dt, x_k.q, u, J != nullptr);
  const double alpha = opt.alpha;
  for (int a = 0; a < nd; ++a) {
    const int i = dyn[a];
    double value = x_k.p[a] + (1.0 - alpha) * dt * (data.L_q[i] + data.Q[i]) - data.L_v[i];
    for (int c = 0; c < m; ++c) value -= data.Dh_k(c, i) * z[nd + c];
    r[a] = value;
  }
  for (int c = 0; c < m; ++c) r[nd + c] = data.h[c];
  if (!J) return;
  d1_jacobian(data, alpha, dt);
  if (model.num_prescribed() == 0)
    J->topLeftCorner(nd, nd) = data.D1;
  else
    for (int b = 0; b < nd; ++b)
      for (int a = 0; a < nd; ++a) (*J)(a, b) = data.D1(dyn[a], dyn[b]);
  for (int a = 0; a < nd; ++a) {
    const int i = dyn[a];
    for (int c = 0; c < m; ++c) {
      (*J)(a, nd + c) = -data.Dh_k(c, i);
      (*J)(nd + c, a) = data.Dh(c, i);
    }
  }
  J->bottomRightCorner(m, m).setZero();
}

// The step equations of a model without constraints, for newton_iterate, with the
// simplified Newton matrix of MidpointOptions::articulated_newton_from: residuals are
// first-order evaluations (O(n)), factor() the articulated-body recursion at the current
// iterate's quadrature point, solve() the raw step g = J_A^-1 r = -dt (M + diag d)^-1 r.
// The raw steps converge linearly, by the neglected velocity and dt-scaled terms of the
// Jacobian; from the second step on, solve() applies the secant (Anderson, depth one)
// correction: with dz, dg the changes of the iterate and of g since the last step and
// gamma = (dg . g) / (dg . dg), the step is g + gamma (dz - dg), the combination of the
// last two fixed-point updates whose raw step is least. Where the neglected terms act
// mostly along one direction of the error, as on long chains, that cuts an iteration
// (200 links: 4.0 to 3.2 per step), and the line search still guards every step. On a
// contraction |gamma| stays well below 1 (0.01-0.06 on chains); a larger one comes from
// steps at the residual's round-off, where the raw step is the safer.
struct ArticulatedNewton {
  const Model& model;
  Data& data;
  const MidpointOptions& opt;
  double dt;
  const TreeState& x_k;
  const VecX& u;
  bool have_prev = false;

  // newton_iterate calls solve() after a residual at the current iterate: keep it.
  void residual(const VecX& z, VecX& r, bool) {
    data.z_art = z;
    step_residual(model, data, opt, dt, x_k, u, z, r, nullptr);
  }
  void factor() { detail::articulated_factor(model, data); }
  void solve(const VecX& r, VecX& dx) {
    const auto& dyn = model.dynamic_coords();
    const int nd = static_cast<int>(dyn.size());
    for (int a = 0; a < nd; ++a) data.b_art[dyn[a]] = r[a];
    detail::articulated_solve(model, data);
    VecX& g = data.g_art;
    for (int a = 0; a < nd; ++a) g[a] = -dt * data.x_art[dyn[a]];
    double dg_g = 0.0, dg_dg = 0.0;
    if (have_prev) {
      for (int a = 0; a < nd; ++a) {
        const double dg = g[a] - data.g_art_prev[a];
        dg_g += dg * g[a];
        dg_dg += dg * dg;
      }
    }
    const double gamma = dg_dg > 0.0 ? dg_g / dg_dg : 0.0;
    if (gamma != 0.0 && std::abs(gamma) < 1.0) {
      for (int a = 0; a < nd; ++a) {
        const double dz = data.z_art[a] - data.z_art_prev[a];
        const double dg = g[a] - data.g_art_prev[a];
        dx[a] = g[a] + gamma * (dz - dg);
      }
    } else {
      dx = g;
    }
    data.z_art_prev.swap(data.z_art);
    data.g_art_prev.swap(g);
    have_prev = true;
  }
  double norm(const VecX& r) const { return inf_norm_propagating_nan(r); }
};

// The diagonal of ArticulatedNewton's matrix beyond M: the coordinate springs' and
// dampers' parts of the Jacobian, times -dt. Generated elements add the diagonals of
// d2V/dq2 and -dQ/dqd at q_k and the velocity estimate qd_k where they stiffen or damp (a
// negative entry would bring M + diag d nearer singular for a matrix that is only a
// preconditioner).
void articulated_diagonal(const Model& model, Data& data, double alpha, double dt,
                          const VecX& q_k, const VecX& qd_k) {
  data.d_art.setZero();
  for (const CoordinateSpring& s : model.coordinate_springs())
    data.d_art[s.coord] += alpha * (1.0 - alpha) * dt * dt * s.stiffness;
  for (const GeneratedPotential& p : model.generated_potentials()) {
    constexpr int kMax = kGeneratedElementMaxCoords;
    std::array<double, kMax> q_c, grad_V;
    std::array<double, kMax * kMax> hess_V;
    double V = 0.0;
    for (int a = 0; a < p.size; ++a) q_c[a] = q_k[p.coords[a]];
    if (p.evaluate(q_c.data(), &V, grad_V.data(), hess_V.data()) != 0) continue;
    for (int a = 0; a < p.size; ++a)
      if (hess_V[a + p.size * a] > 0.0)
        data.d_art[p.coords[a]] += alpha * (1.0 - alpha) * dt * dt * hess_V[a + p.size * a];
  }
  for (const GeneratedForce& f : model.generated_forces()) {
    constexpr int kMax = kGeneratedElementMaxCoords;
    std::array<double, kMax> q_c, qd_c, Q_c;
    std::array<double, kMax * kMax> Q_v;
    for (int a = 0; a < f.size; ++a) {
      q_c[a] = q_k[f.coords[a]];
      qd_c[a] = qd_k[f.coords[a]];
    }
    if (f.evaluate(q_c.data(), qd_c.data(), Q_c.data(), nullptr, Q_v.data()) != 0) continue;
    for (int a = 0; a < f.size; ++a)
      if (Q_v[a + f.size * a] < 0.0)
        data.d_art[f.coords[a]] -= (1.0 - alpha) * dt * Q_v[a + f.size * a];
  }
  for (const CoordinateDamper& d : model.coordinate_dampers())
    data.d_art[d.coord] += (1.0 - alpha) * dt * d.damping;
}

void set_prescribed(const Model& model, const VecX& q_prescribed, VecX& q) {
  const auto& prescribed = model.prescribed_coords();
  for (int a = 0; a < model.num_prescribed(); ++a) q[prescribed[a]] = q_prescribed[a];
}

}  // namespace

TreeState midpoint_initial_state(const Model& model, Data& data, double t0, const VecX& q0,
                                 const VecX& qd0) {
  if (q0.size() != model.num_coords() || qd0.size() != model.num_coords())
    throw InputError("tree initial state: q and qd need " + std::to_string(model.num_coords()) +
                     " entries");
  if (!q0.allFinite() || !qd0.allFinite() || !std::isfinite(t0))
    throw InputError("tree initial state: t, q or qd is not finite");
  lagrangian_terms(model, data, q0, qd0, false);
  TreeState x;
  x.t = t0;
  x.q = q0;
  x.p.resize(model.num_dynamic());
  for (int a = 0; a < model.num_dynamic(); ++a) x.p[a] = data.L_v[model.dynamic_coords()[a]];
  data.have_prev = data.have_prev2 = false;
  return x;
}

void midpoint_residual(const Model& model, Data& data, const MidpointOptions& options,
                       double dt, const TreeState& x_k, const VecX& u, const VecX& q_kp1,
                       const VecX& lambda, VecX& r) {
  const int nd = model.num_dynamic(), m = model.num_constraint_rows();
  if (q_kp1.size() != model.num_coords() || lambda.size() != m)
    throw InputError("tree midpoint residual: q_kp1 or lambda has the wrong size");
  VecX q_prescribed(model.num_prescribed());
  for (int a = 0; a < model.num_prescribed(); ++a)
    q_prescribed[a] = q_kp1[model.prescribed_coords()[a]];
  check_step_inputs(model, options, dt, x_k, u, q_prescribed);
  constraints_at_start(model, data, x_k.q);
  data.q_kp1 = q_kp1;
  VecX z(nd + m);
  for (int a = 0; a < nd; ++a) z[a] = q_kp1[model.dynamic_coords()[a]];
  z.tail(m) = lambda;
  r.resize(nd + m);
  step_residual(model, data, options, dt, x_k, u, z, r, nullptr);
}

NewtonStatus midpoint_step(const Model& model, Data& data, const MidpointOptions& options,
                           double dt, const TreeState& x_k, const VecX& u,
                           const VecX& q_prescribed_kp1, TreeState& x_kp1) {
  check_step_inputs(model, options, dt, x_k, u, q_prescribed_kp1);
  const auto& dyn = model.dynamic_coords();
  const int nd = model.num_dynamic(), m = model.num_constraint_rows();
  constraints_at_start(model, data, x_k.q);

  // Warm start when this step continues the last one: extrapolate its velocity, to second
  // order (q_kp1 - q_k ~ dt (2 v_prev - v_prev2)) when the one before is known too.
  const bool continues = data.have_prev && data.q_prev_end == x_k.q;
  for (int a = 0; a < nd; ++a) {
    const int i = dyn[a];
    const double v = !continues ? 0.0
                     : data.have_prev2 ? 2.0 * data.v_prev[i] - data.v_prev2[i]
                                       : data.v_prev[i];
    data.z[a] = x_k.q[i] + dt * v;
  }
  if (continues)
    data.z.tail(m) = data.lambda;
  else
    data.z.tail(m).setZero();
  data.q_kp1 = x_k.q;
  set_prescribed(model, q_prescribed_kp1, data.q_kp1);

  // The tolerance is relative to the size of the momentum balance, 1 + scale: |p_k|, and
  // on a step that does not continue the last one (a start, often from rest) also the
  // residual at the guess, the forces' impulse over the step. From rest |p_k| = 0 left an
  // absolute tolerance that on a 200-link chain (gravity impulse ~2e3 N m s, round-off
  // ~5e-9) only round-off luck could meet: 15-17 iterations instead of 3-4.
  double scale = x_k.p.size() ? x_k.p.lpNorm<Eigen::Infinity>() : 0.0;
  if (!continues) {
    VecX& r_guess = data.newton.vectors.r;  // sized nd + m; newton_iterate overwrites it
    step_residual(model, data, options, dt, x_k, u, data.z, r_guess, nullptr);
    const double impulse = inf_norm_propagating_nan(r_guess);
    if (std::isfinite(impulse)) scale = std::max(scale, impulse);
  }
  // The tolerance bounds the estimated distance to the solution too, which the linearly
  // converging articulated Newton would otherwise meet only within about 50x it.
  NewtonOptions newton = options.newton;
  newton.step_tolerance = newton.tolerance;
  NewtonStatus status;
  if (m == 0 && nd >= options.articulated_newton_from) {
    data.z_guess = data.z;  // should the exact Jacobian be needed after all
    // The last step's velocity where this one continues it, else rest.
    if (!continues) data.v_m.setZero();
    articulated_diagonal(model, data, options.alpha, dt, x_k.q,
                         continues ? data.v_prev : data.v_m);
    ArticulatedNewton problem{model, data, options, dt, x_k, u};
    status = newton_iterate(problem, data.z, newton.tolerance * (1.0 + scale), newton,
                            data.newton.vectors);
    if (!status.converged) data.z = data.z_guess;
  }
  if (!status.converged) {
    const int articulated_iterations = status.iterations;
    status = newton_solve(
        [&](const VecX& z, VecX& r, MatX* J) { step_residual(model, data, options, dt, x_k, u, z, r, J); },
        data.z, scale, newton, data.newton);
    status.iterations += articulated_iterations;
  }
  if (!status.converged) {
    data.have_prev = data.have_prev2 = false;
    return status;
  }
  // newton_solve's last residual call was at the solution: read L and Q left there.
  const double alpha = options.alpha;
  x_kp1.t = x_k.t + dt;
  x_kp1.q = data.q_kp1;
  x_kp1.p.resize(nd);
  for (int a = 0; a < nd; ++a) x_kp1.p[a] = next_momentum(data, alpha, dt, dyn[a]);
  data.lambda = data.z.tail(m);
  data.have_prev2 = continues;
  data.v_prev2 = data.v_prev;
  data.q_prev_end = x_kp1.q;
  data.v_prev = data.v_m;
  data.have_prev = true;
  return status;
}

void midpoint_step_derivatives(const Model& model, Data& data, const MidpointOptions& options,
                               double dt, const TreeState& x_k, const VecX& u,
                               const VecX& q_prescribed_kp1, const TreeState& x_kp1,
                               StepDerivatives& out) {
  check_step_inputs(model, options, dt, x_k, u, q_prescribed_kp1);
  const auto& dyn = model.dynamic_coords();
  const auto& prescribed = model.prescribed_coords();
  const int n = model.num_coords(), nd = model.num_dynamic(), nk = model.num_prescribed();
  const int m = model.num_constraint_rows(), nu = model.num_inputs();
  const double alpha = options.alpha;
  if (data.lambda.size() != m || x_kp1.q.size() != n)
    throw InputError("tree step derivatives: x_kp1 is not a state of this model");

  // Dh(q_k), sum_c lambda_c d2h_c(q_k), Dh(q_kp1); then L and Q with second derivatives.
  MatX H_k = MatX::Zero(n, n), Dh_kp1 = MatX::Zero(m, n);
  if (m > 0) {
    constraint_terms(model, data, x_k.q, &data.lambda);
    data.Dh_k = data.Dh;
    H_k = data.h_qq_w;
    constraint_terms(model, data, x_kp1.q, nullptr);
    Dh_kp1 = data.Dh;
  }
  data.q_kp1 = x_kp1.q;
  evaluate_at_quadrature_point(model, data, options, dt, x_k.q, u, true);

  d1_jacobian(data, alpha, dt);
  MatX J = MatX::Zero(nd + m, nd + m);
  for (int a = 0; a < nd; ++a) {
    for (int b = 0; b < nd; ++b) J(a, b) = data.D1(dyn[a], dyn[b]);
    for (int c = 0; c < m; ++c) {
      J(a, nd + c) = -data.Dh_k(c, dyn[a]);
      J(nd + c, a) = Dh_kp1(c, dyn[a]);
    }
  }
  MatX B_q = MatX::Zero(nd + m, n), B_p = MatX::Zero(nd + m, nd);
  MatX B_u = MatX::Zero(nd + m, nu), B_k = MatX::Zero(nd + m, nk);
  for (int a = 0; a < nd; ++a) {
    const int i = dyn[a];
    for (int j = 0; j < n; ++j) B_q(a, j) = d1_jacobian_prev(data, alpha, dt, i, j) - H_k(i, j);
    B_p(a, a) = 1.0;
    // A row of a matrix without columns points nowhere (UBSan's pointer check).
    if (nu > 0) B_u.row(a) = (1.0 - alpha) * dt * data.Q_u.row(i);
    for (int b = 0; b < nk; ++b) B_k(a, b) = data.D1(i, prescribed[b]);
  }
  for (int c = 0; c < m; ++c)
    for (int b = 0; b < nk; ++b) B_k(nd + c, b) = Dh_kp1(c, prescribed[b]);

  const Eigen::PartialPivLU<MatX> lu(J);
  // Eigen's triangular solve indexes a right-hand side without columns (no inputs, no
  // prescribed coordinates): those derivatives are simply empty.
  auto dz = [&](const MatX& B) { return B.cols() > 0 ? MatX(-lu.solve(B)) : MatX(nd + m, 0); };
  const MatX dz_dq = dz(B_q), dz_dp = dz(B_p), dz_du = dz(B_u), dz_dk = dz(B_k);
  out.dq_dq = dz_dq.topRows(nd);
  out.dq_dp = dz_dp.topRows(nd);
  out.dq_du = dz_du.topRows(nd);
  out.dq_dk = dz_dk.topRows(nd);

  MatX P_next_dyn(nd, nd), P_next_prescribed(nd, nk), P_prev(nd, n);
  for (int a = 0; a < nd; ++a) {
    const int i = dyn[a];
    for (int b = 0; b < nd; ++b) P_next_dyn(a, b) = d2_jacobian_next(data, alpha, dt, i, dyn[b]);
    for (int b = 0; b < nk; ++b)
      P_next_prescribed(a, b) = d2_jacobian_next(data, alpha, dt, i, prescribed[b]);
    for (int j = 0; j < n; ++j) P_prev(a, j) = d2_jacobian_prev(data, alpha, dt, i, j);
  }
  MatX Q_u_dyn(nd, nu);
  if (nu > 0)
    for (int a = 0; a < nd; ++a) Q_u_dyn.row(a) = data.Q_u.row(dyn[a]);
  out.dp_dq = P_prev + P_next_dyn * out.dq_dq;
  out.dp_dp = P_next_dyn * out.dq_dp;
  out.dp_du = alpha * dt * Q_u_dyn + P_next_dyn * out.dq_du;
  out.dp_dk = P_next_prescribed + P_next_dyn * out.dq_dk;
}

void midpoint_residual_blocks(const Model& model, Data& data, const MidpointOptions& options,
                              double dt, const TreeState& x_k, const VecX& u,
                              const VecX& q_kp1, const VecX& p_kp1, const VecX& lambda_k,
                              MidpointResidualBlocks& out) {
  const int n = model.num_coords(), m = model.num_constraint_rows(), nu = model.num_inputs();
  if (model.num_prescribed() > 0)
    throw InputError("tree midpoint residual blocks: the model has " +
                     std::to_string(model.num_prescribed()) + " prescribed coordinates (first: " +
                     model.coords()[model.prescribed_coords()[0]].name +
                     "); optimal control needs every coordinate dynamic");
  check_step_inputs(model, options, dt, x_k, u, VecX());
  if (q_kp1.size() != n || p_kp1.size() != n || lambda_k.size() != m)
    throw InputError("tree midpoint residual blocks: q_kp1 and p_kp1 need " +
                     std::to_string(n) + " entries and lambda_k " + std::to_string(m));
  if (!q_kp1.allFinite() || !p_kp1.allFinite() || !lambda_k.allFinite())
    throw InputError("tree midpoint residual blocks at t = " + std::to_string(x_k.t) +
                     ": q_kp1, p_kp1 or lambda_k is not finite");
  const double alpha = options.alpha;

  // Dh(q_k) and H_k = sum_c lambda_c d2h_c(q_k) into data.h_qq_w, which the constraint
  // evaluation at q_kp1 below (no weight) leaves alone.
  if (m > 0) {
    constraint_terms(model, data, x_k.q, &lambda_k);
    data.Dh_k = data.Dh;
  }
  // r_a and d r_a / d(q_kp1, lambda_k) by the very function Newton solves in midpoint_step;
  // it leaves L, Q and their derivatives at the quadrature point in data.
  data.q_kp1 = q_kp1;
  data.z.head(n) = q_kp1;
  data.z.tail(m) = lambda_k;
  out.r_a.resize(n + m);
  MatX J_z(n + m, n + m);
  step_residual(model, data, options, dt, x_k, u, data.z, out.r_a, &J_z);
  out.Ja_qkp1 = J_z.leftCols(n);
  out.Ja_lambda = J_z.rightCols(m);

  // The remaining blocks of r_a: h(q_kp1) depends on q_kp1 only.
  out.Ja_qk.setZero(n + m, n);
  out.Ja_pk.setZero(n + m, n);
  out.Ja_u.setZero(n + m, nu);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) out.Ja_qk(i, j) = d1_jacobian_prev(data, alpha, dt, i, j);
    out.Ja_pk(i, i) = 1.0;
  }
  if (m > 0) out.Ja_qk.topRows(n) -= data.h_qq_w;
  out.Ja_u.topRows(n) = (1.0 - alpha) * dt * data.Q_u;

  // r_b = p_kp1 - (D2 L_d + f^+), the momentum update of midpoint_step.
  out.r_b.resize(n);
  out.Jb_qk.resize(n, n);
  out.Jb_qkp1.resize(n, n);
  for (int i = 0; i < n; ++i) {
    out.r_b[i] = p_kp1[i] - next_momentum(data, alpha, dt, i);
    for (int j = 0; j < n; ++j) {
      out.Jb_qk(i, j) = -d2_jacobian_prev(data, alpha, dt, i, j);
      out.Jb_qkp1(i, j) = -d2_jacobian_next(data, alpha, dt, i, j);
    }
  }
  out.Jb_pkp1.setIdentity(n, n);
  out.Jb_u = (-alpha * dt) * data.Q_u;

  // d/d dt at fixed (q_k, q_kp1): q_m stays, v = (q_kp1 - q_k) / dt moves by -v / dt.
  const VecX v_dt = -data.v_m / dt;
  const VecX force = data.L_q + data.Q;
  const VecX force_dt = (data.L_qv + data.Q_v) * v_dt;
  const VecX momentum_dt = data.M * v_dt;  // d L_v / d dt, L_vv = M
  out.Ja_dt.setZero(n + m);
  out.Ja_dt.head(n) = (1.0 - alpha) * (force + dt * force_dt) - momentum_dt;
  out.Jb_dt = -alpha * (force + dt * force_dt) - momentum_dt;
}

}  // namespace marsden::tree
