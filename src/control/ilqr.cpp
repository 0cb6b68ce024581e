// iLQR and MPC over the step contract (control/ilqr.hpp, docs/control.md).
#include "marsden/control/ilqr.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "marsden/error.hpp"
#include "marsden/support/text.hpp"
#include "control/weights.hpp"

namespace marsden::control {

using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

std::span<const double> span_of(const VectorXd& v) { return {v.data(), std::size_t(v.size())}; }
std::span<double> span_of(VectorXd& v) { return {v.data(), std::size_t(v.size())}; }

// The problem checked and completed: references filled in, bounds of the input size.
struct Checked {
  IlqrProblem p;
  int nx = 0, nt = 0, nu = 0;
};

Checked check(const sim::System& system, const sim::HeldInput& input, const IlqrProblem& in) {
  Checked c{in, system.state_size(), system.tangent_size(), input.size()};
  IlqrProblem& p = c.p;
  const int N = p.steps;
  if (N < 1) throw InputError("ilqr: steps must be >= 1");
  if (!(p.dt > 0.0) || !std::isfinite(p.dt) || !std::isfinite(p.t0))
    throw InputError("ilqr: dt must be a finite number > 0 (s) and t0 finite");
  if (p.x0.size() != c.nx || !p.x0.allFinite())
    throw InputError("ilqr: x0 needs " + std::to_string(c.nx) + " finite entries");
  if (p.x_goal.size() == 0) p.x_goal = p.x0;
  if (p.x_goal.size() != c.nx || !p.x_goal.allFinite())
    throw InputError("ilqr: x_goal needs " + std::to_string(c.nx) + " finite entries");
  if (p.x_ref.size() == 0) p.x_ref = p.x_goal.transpose().replicate(N + 1, 1);
  if (p.x_ref.rows() != N + 1 || p.x_ref.cols() != c.nx || !p.x_ref.allFinite())
    throw InputError("ilqr: x_ref must be (steps + 1) x " + std::to_string(c.nx) + ", finite");
  if (p.u_ref.size() == 0) p.u_ref = MatrixXd::Zero(N, c.nu);
  if (p.u_ref.rows() != N || p.u_ref.cols() != c.nu || !p.u_ref.allFinite())
    throw InputError("ilqr: u_ref must be steps x " + std::to_string(c.nu) + ", finite");
  if (p.Q.size() == 0) p.Q = MatrixXd::Zero(c.nt, c.nt);
  if (p.Q_N.size() == 0) p.Q_N = MatrixXd::Zero(c.nt, c.nt);
  check_weight(p.Q, c.nt, "ilqr", "Q", false);
  check_weight(p.Q_N, c.nt, "ilqr", "Q_N", false);
  check_weight(p.R, c.nu, "ilqr", "R", true);
  for (int i : p.terminal)
    if (i < 0 || i >= c.nt)
      throw InputError("ilqr: terminal entry " + std::to_string(i) + " is not a tangent entry (0.." +
                       std::to_string(c.nt - 1) + ")");
  const double inf = std::numeric_limits<double>::infinity();
  if (p.u_lower.size() == 0) p.u_lower = VectorXd::Constant(c.nu, -inf);
  if (p.u_upper.size() == 0) p.u_upper = VectorXd::Constant(c.nu, inf);
  if (p.u_lower.size() != c.nu || p.u_upper.size() != c.nu)
    throw InputError("ilqr: u_lower and u_upper need one entry per input (" +
                     std::to_string(c.nu) + ")");
  for (int i = 0; i < c.nu; ++i)
    if (std::isnan(p.u_lower[i]) || std::isnan(p.u_upper[i]) || p.u_lower[i] > p.u_upper[i])
      throw InputError("ilqr: the bounds of input u" + std::to_string(i) +
                       " must be numbers with lower <= upper");
  return c;
}

// The augmented Lagrangian's terminal terms: multipliers and penalty.
struct Terminal {
  VectorXd lambda;
  double rho = 0.0;
};

// Costs of a run: J (the problem's) and the merit J + lambda'c + rho/2 |c|^2.
struct Costs {
  double cost = 0.0, merit = 0.0, violation = 0.0;
};

class Solver {
 public:
  Solver(sim::System& system, sim::HeldInput& input, const Checked& c)
      : system_(system), input_(input), p_(c.p), nt_(c.nt), nu_(c.nu) {
    dx_.resize(nt_);
    x_.resize(c.nx);
    ref_.resize(c.nx);
  }

  Costs costs(const Nominal& run, const Terminal& t) {
    Costs out;
    for (int k = 0; k <= p_.steps; ++k) {
      difference(run.x, k, p_.x_ref, dx_);
      if (k < p_.steps) {
        const VectorXd du = run.u.row(k) - p_.u_ref.row(k);
        out.cost += p_.dt * (dx_.dot(p_.Q * dx_) + du.dot(p_.R * du));
      }
    }
    difference_to_goal(run.x, dx_);
    out.cost += dx_.dot(p_.Q_N * dx_);
    const VectorXd c = constraint(dx_);
    out.violation = c.size() ? c.cwiseAbs().maxCoeff() : 0.0;
    out.merit = out.cost + (c.size() ? t.lambda.dot(c) + 0.5 * t.rho * c.squaredNorm() : 0.0);
    return out;
  }

  // x_N (-) x_goal at the terminal entries.
  VectorXd constraint(const VectorXd& dx_goal) const {
    VectorXd c(Eigen::Index(p_.terminal.size()));
    for (std::size_t i = 0; i < p_.terminal.size(); ++i) c[Eigen::Index(i)] = dx_goal[p_.terminal[i]];
    return c;
  }

  // The backward pass at regularisation mu: gains and the expected decrease's two terms.
  // False when some Q_uu over the free inputs is not positive definite.
  bool backward(const Nominal& run, const Linearization& lin, const Terminal& t, double mu,
                std::vector<VectorXd>& k_ff, std::vector<MatrixXd>& K, double& dV1,
                double& dV2) {
    const int N = p_.steps;
    difference_to_goal(run.x, dx_);
    const VectorXd c = constraint(dx_);
    VectorXd V_x = 2.0 * p_.Q_N * dx_;
    MatrixXd V_xx = 2.0 * p_.Q_N;
    for (std::size_t i = 0; i < p_.terminal.size(); ++i) {
      const int e = p_.terminal[i];
      V_x[e] += t.lambda[Eigen::Index(i)] + t.rho * c[Eigen::Index(i)];
      V_xx(e, e) += t.rho;
    }
    dV1 = dV2 = 0.0;
    for (int k = N; k-- > 0;) {
      const MatrixXd& A = lin.A[std::size_t(k)];
      const MatrixXd& B = lin.B[std::size_t(k)];
      difference(run.x, k, p_.x_ref, dx_);
      const VectorXd du = run.u.row(k) - p_.u_ref.row(k);
      const VectorXd Q_x = 2.0 * p_.dt * p_.Q * dx_ + A.transpose() * V_x;
      const VectorXd Q_u = 2.0 * p_.dt * p_.R * du + B.transpose() * V_x;
      const MatrixXd Q_xx = 2.0 * p_.dt * p_.Q + A.transpose() * V_xx * A;
      MatrixXd Q_uu = 2.0 * p_.dt * p_.R + B.transpose() * V_xx * B;
      const MatrixXd Q_ux = B.transpose() * V_xx * A;
      Q_uu.diagonal().array() += mu;
      const VectorXd lo = p_.u_lower - run.u.row(k).transpose();
      const VectorXd hi = p_.u_upper - run.u.row(k).transpose();
      VectorXd& kk = k_ff[std::size_t(k)];
      MatrixXd& KK = K[std::size_t(k)];
      std::vector<int> free;
      if (!box_qp(Q_uu, Q_u, lo, hi, kk, free)) return false;
      // Gains on the free inputs; an input at its bound does not respond to dx.
      KK = MatrixXd::Zero(nu_, nt_);
      if (!free.empty()) {
        const Eigen::Index nf = Eigen::Index(free.size());
        MatrixXd H(nf, nf), G(nf, nt_);
        for (Eigen::Index a = 0; a < nf; ++a) {
          G.row(a) = Q_ux.row(free[std::size_t(a)]);
          for (Eigen::Index b = 0; b < nf; ++b) H(a, b) = Q_uu(free[std::size_t(a)], free[std::size_t(b)]);
        }
        const Eigen::LLT<MatrixXd> llt(H);
        if (llt.info() != Eigen::Success) return false;
        const MatrixXd Kf = llt.solve(G);
        for (Eigen::Index a = 0; a < nf; ++a) KK.row(free[std::size_t(a)]) = Kf.row(a);
      }
      // du = kk - KK dx: the value function's expansion with that policy.
      dV1 += kk.dot(Q_u);
      dV2 += 0.5 * kk.dot(Q_uu * kk);
      V_x = Q_x - KK.transpose() * Q_uu * kk - KK.transpose() * Q_u + Q_ux.transpose() * kk;
      V_xx = Q_xx + KK.transpose() * Q_uu * KK - KK.transpose() * Q_ux - Q_ux.transpose() * KK;
      V_xx = 0.5 * (V_xx + V_xx.transpose());
    }
    return true;
  }

  // The run from x0 under u_k = clamp(u_bar_k + alpha k_k - K_k (x_k (-) x_bar_k)); false
  // when a step fails.
  bool forward(const Nominal& bar, const std::vector<VectorXd>& k_ff, const std::vector<MatrixXd>& K,
               double alpha, Nominal& out) {
    out.t0 = p_.t0;
    out.dt = p_.dt;
    out.x.resize(p_.steps + 1, x_.size());
    out.u.resize(p_.steps, nu_);
    system_.set_state(span_of(p_.x0));
    system_.get_state(span_of(x_));
    out.x.row(0) = x_.transpose();
    VectorXd u(nu_);
    for (int k = 0; k < p_.steps; ++k) {
      ref_ = bar.x.row(k).transpose();
      system_.state_difference(span_of(ref_), span_of(x_), span_of(dx_));
      u = bar.u.row(k).transpose() + alpha * k_ff[std::size_t(k)] - K[std::size_t(k)] * dx_;
      u = u.cwiseMax(p_.u_lower).cwiseMin(p_.u_upper);
      out.u.row(k) = u.transpose();
      input_.set(span_of(u));
      if (!system_.step(p_.t0 + k * p_.dt, p_.dt).converged) return false;
      system_.get_state(span_of(x_));
      if (!x_.allFinite()) return false;
      out.x.row(k + 1) = x_.transpose();
    }
    return true;
  }

 private:
  void difference(const MatrixXd& x, int k, const MatrixXd& ref, VectorXd& dx) {
    ref_ = ref.row(k).transpose();
    x_ = x.row(k).transpose();
    system_.state_difference(span_of(ref_), span_of(x_), span_of(dx));
  }
  void difference_to_goal(const MatrixXd& x, VectorXd& dx) {
    x_ = x.row(p_.steps).transpose();
    system_.state_difference(span_of(p_.x_goal), span_of(x_), span_of(dx));
  }

  // min 1/2 d'Hd + g'd over lo <= d <= hi by projected Newton from d (clamped), H
  // positive definite on the free set. False when it is not. free: the entries that the
  // gradient at the d returned does not hold at a bound (those the gains act on).
  static bool box_qp(const MatrixXd& H, const VectorXd& g, const VectorXd& lo, const VectorXd& hi,
                     VectorXd& d, std::vector<int>& free) {
    const Eigen::Index n = g.size();
    if (d.size() != n) d = VectorXd::Zero(n);
    d = d.cwiseMax(lo).cwiseMin(hi);
    auto objective = [&](const VectorXd& v) { return 0.5 * v.dot(H * v) + g.dot(v); };
    VectorXd grad;
    auto find_free = [&] {
      grad = g + H * d;
      free.clear();
      for (Eigen::Index i = 0; i < n; ++i)
        if (!((d[i] <= lo[i] && grad[i] > 0.0) || (d[i] >= hi[i] && grad[i] < 0.0)))
          free.push_back(int(i));
    };
    for (int it = 0; it < 100; ++it) {
      find_free();
      if (free.empty()) return true;
      const Eigen::Index nf = Eigen::Index(free.size());
      MatrixXd H_ff(nf, nf);
      VectorXd g_f(nf);
      for (Eigen::Index a = 0; a < nf; ++a) {
        g_f[a] = grad[free[std::size_t(a)]];
        for (Eigen::Index b = 0; b < nf; ++b) H_ff(a, b) = H(free[std::size_t(a)], free[std::size_t(b)]);
      }
      const Eigen::LLT<MatrixXd> llt(H_ff);
      if (llt.info() != Eigen::Success) return false;
      if (g_f.cwiseAbs().maxCoeff() <= 1e-14 * (1.0 + g.cwiseAbs().maxCoeff())) return true;
      const VectorXd s_f = -llt.solve(g_f);
      VectorXd s = VectorXd::Zero(n);
      for (Eigen::Index a = 0; a < nf; ++a) s[free[std::size_t(a)]] = s_f[a];
      const double f0 = objective(d);
      double step = 1.0;
      bool moved = false;
      while (step > 1e-12) {
        const VectorXd trial = (d + step * s).cwiseMax(lo).cwiseMin(hi);
        if (objective(trial) < f0 + 1e-4 * grad.dot(trial - d)) {
          moved = (trial - d).cwiseAbs().maxCoeff() > 1e-15 * (1.0 + d.cwiseAbs().maxCoeff());
          d = trial;
          break;
        }
        step *= 0.5;
      }
      if (!moved) break;
    }
    find_free();  // d may have moved since the free set was found
    return true;
  }

  sim::System& system_;
  sim::HeldInput& input_;
  const IlqrProblem& p_;
  int nt_, nu_;
  VectorXd dx_, x_, ref_;
};

}  // namespace

IlqrResult ilqr(sim::System& system, sim::HeldInput& input, const IlqrProblem& problem,
                const MatrixXd& u_guess, const IlqrOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Checked c = check(system, input, problem);
  const IlqrProblem& p = c.p;
  if (u_guess.rows() != p.steps || u_guess.cols() != c.nu || !u_guess.allFinite())
    throw InputError("ilqr: u_guess must be " + std::to_string(p.steps) + " x " +
                     std::to_string(c.nu) + " and finite");
  if (!(options.tolerance > 0.0) || !(options.constraint_tolerance > 0.0) ||
      !(options.penalty > 0.0) || !(options.regularization >= 0.0) || options.max_iterations < 1)
    throw InputError("ilqr: tolerances and the penalty must be > 0, regularization >= 0 and "
                     "max_iterations >= 1");
  Solver solver(system, input, c);
  MatrixXd u0 = u_guess;
  for (Eigen::Index k = 0; k < u0.rows(); ++k)
    u0.row(k) = u0.row(k).cwiseMax(p.u_lower.transpose()).cwiseMin(p.u_upper.transpose());

  IlqrResult r;
  r.nominal = rollout(system, input, p.t0, p.dt, p.x0, u0);
  Terminal t{VectorXd::Zero(Eigen::Index(p.terminal.size())), p.terminal.empty() ? 0.0 : options.penalty};
  Costs now = solver.costs(r.nominal, t);
  std::vector<VectorXd> k_ff(std::size_t(p.steps), VectorXd::Zero(c.nu));
  std::vector<MatrixXd> K(std::size_t(p.steps));
  Nominal trial;
  double mu = options.regularization, last_violation = now.violation;
  r.rounds = 1;
  Linearization lin = linearize(system, &input, r.nominal, options.derivatives);
  while (r.iterations < options.max_iterations) {
    ++r.iterations;
    double dV1 = 0.0, dV2 = 0.0;
    if (!solver.backward(r.nominal, lin, t, mu, k_ff, K, dV1, dV2)) {
      mu = std::max(10.0 * mu, 1e-6);
      if (mu > 1e12) {
        r.message = "the regularisation grew past 1e12 (Q_uu not positive definite)";
        break;
      }
      continue;
    }
    // An augmented-Lagrangian round far from feasible need not solve its subproblem to
    // the end: its multipliers are about to change (an inexact augmented Lagrangian).
    const double tolerance =
        p.terminal.empty() ? options.tolerance
                           : std::max(options.tolerance, std::min(1e-4, 0.1 * now.violation));
    bool accepted = false, inner_done = false;
    for (double alpha = 1.0; alpha > 1e-4; alpha *= 0.5) {
      if (!solver.forward(r.nominal, k_ff, K, alpha, trial)) continue;
      const Costs next = solver.costs(trial, t);
      const double expected = -(alpha * dV1 + alpha * alpha * dV2);
      const double decrease = now.merit - next.merit;
      if (decrease > 0.0 && decrease >= 1e-4 * expected) {
        inner_done = decrease <= tolerance * std::max(1.0, std::abs(now.merit));
        r.nominal = std::move(trial);
        now = next;
        accepted = true;
        break;
      }
      if (expected <= tolerance * std::max(1.0, std::abs(now.merit))) {
        inner_done = true;  // nothing left to gain at this regularisation
        break;
      }
    }
    if (!accepted && !inner_done) {
      mu = std::max(10.0 * mu, 1e-6);
      if (mu > 1e12) {
        r.message = "the line search failed at every regularisation";
        break;
      }
      continue;
    }
    mu = std::max(options.regularization, 0.1 * mu);
    if (accepted) lin = linearize(system, &input, r.nominal, options.derivatives);
    if (!inner_done) continue;
    // The augmented Lagrangian's round ends: done, or multipliers updated.
    if (now.violation <= options.constraint_tolerance) {
      r.converged = true;
      break;
    }
    VectorXd dx_goal(c.nt);
    const VectorXd x_N = r.nominal.x.row(p.steps).transpose();
    system.state_difference(span_of(p.x_goal), span_of(x_N), span_of(dx_goal));
    t.lambda += t.rho * solver.constraint(dx_goal);
    if (now.violation > 0.25 * last_violation) t.rho *= 10.0;
    last_violation = now.violation;
    ++r.rounds;
    now = solver.costs(r.nominal, t);
  }
  // The gains of the final point, for tracking: the backward pass at the smallest
  // regularisation around the run returned.
  double dV1 = 0.0, dV2 = 0.0;
  if (!solver.backward(r.nominal, lin, t, options.regularization, k_ff, K, dV1, dV2))
    solver.backward(r.nominal, lin, t, std::max(mu, 1e-6), k_ff, K, dV1, dV2);
  r.K = K;
  r.cost = now.cost;
  r.constraint_violation = now.violation;
  if (r.message.empty())
    r.message = r.converged ? "converged"
                            : "stopped after " + std::to_string(r.iterations) +
                                  " iterations (constraint violation " +
                                  number_text(now.violation) + ")";
  // Leave the system at the optimised run's end, the held input its last value.
  const VectorXd x_N = r.nominal.x.row(p.steps).transpose();
  system.set_state(span_of(x_N));
  input.set(span_of(VectorXd(r.nominal.u.row(p.steps - 1).transpose())));
  r.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

Mpc::Mpc(std::shared_ptr<sim::System> planner, std::shared_ptr<sim::HeldInput> input,
         Nominal reference, MpcOptions options)
    : planner_(std::move(planner)), input_(std::move(input)), reference_(std::move(reference)),
      options_(std::move(options)) {
  if (!planner_ || !input_) throw InputError("mpc: needs a planner system and its held input");
  if (options_.horizon < 1) throw InputError("mpc: the horizon must be >= 1 step");
  if (reference_.steps() < 1 || reference_.x.rows() != reference_.steps() + 1 ||
      reference_.x.cols() != planner_->state_size() || reference_.u.cols() != input_->size())
    throw InputError("mpc: the reference must be a Nominal of the planner's state and inputs");
}

void Mpc::control(double t_k, std::span<const double> x_k, std::span<double> u_k) {
  const auto start = std::chrono::steady_clock::now();
  const int N = reference_.steps(), H = options_.horizon;
  const int k0 = reference_.step_at(t_k);
  IlqrProblem p;
  p.t0 = t_k;
  p.dt = reference_.dt;
  p.steps = H;
  p.x0 = Eigen::Map<const VectorXd>(x_k.data(), Eigen::Index(x_k.size()));
  p.x_ref.resize(H + 1, reference_.x.cols());
  p.u_ref.resize(H, reference_.u.cols());
  for (int j = 0; j <= H; ++j) p.x_ref.row(j) = reference_.x.row(std::min(k0 + j, N));
  for (int j = 0; j < H; ++j) p.u_ref.row(j) = reference_.u.row(std::min(k0 + j, N - 1));
  p.x_goal = p.x_ref.row(H).transpose();
  p.Q = options_.Q;
  p.R = options_.R;
  p.Q_N = options_.Q_N;
  p.u_lower = options_.u_lower;
  p.u_upper = options_.u_upper;
  MatrixXd guess = p.u_ref;
  if (warm_.rows() == H) {
    guess.topRows(H - 1) = warm_.bottomRows(H - 1);
    guess.row(H - 1) = warm_.row(H - 1);
  }
  const IlqrResult r = ilqr(*planner_, *input_, p, guess, options_.ilqr);
  warm_ = r.nominal.u;
  for (std::size_t i = 0; i < u_k.size(); ++i) u_k[i] = warm_(0, Eigen::Index(i));
  solve_iterations_.push_back(r.iterations);
  solve_times_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace marsden::control
