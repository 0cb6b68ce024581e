// Newton's method with a backtracking line search: one loop (newton_iterate) for every
// family, with a dense LU (newton_solve) or the problem's own linear solver. It stops on
// a tolerance, never after a fixed number of iterations, and reports.
#pragma once

#include <cmath>
#include <limits>
#include <utility>

#include <Eigen/Core>
#include <Eigen/LU>

namespace marsden {

struct NewtonOptions {
  // Converged when ||r||_inf <= tolerance * (1 + residual_scale); the caller passes the
  // scale of the terms that make up r (e.g. a momentum), so the test is relative.
  double tolerance = 1e-12;
  int max_iterations = 25;
  bool line_search = true;
  // Simplified Newton: keep the factorised Jacobian of the first iterate while each
  // iteration cuts the residual at least fourfold, and re-evaluate it otherwise. From a
  // good guess one exact Jacobian then serves the whole solve.
  bool reuse_jacobian = false;
  // Where positive, converged also needs the iterate's estimated distance to the solution,
  // |dx| c / (1 - c) from the last step dx and the residual's contraction c over it, at most
  // step_tolerance (1 + ||x||_inf). A linearly converging iteration stops just inside the
  // residual tolerance, a quadratic one far inside it; this makes a tolerance mean the same
  // accuracy of x for both. And where a full step within that bound cuts the residual by
  // less than a tenth, the residual is at its round-off, which may lie above the tolerance
  // (a difference quotient (x_k+1 - x_k) / dt at a small dt): x is then as near the
  // solution as the arithmetic tells, and the solve has converged.
  double step_tolerance = 0.0;
};

struct NewtonStatus {
  bool converged = false;
  int iterations = 0;
  double residual_norm = 0.0;  // ||r||_inf at the returned iterate
};

// Run-time sizes up to MaxN with inline storage, for systems whose size a model decides.
template <int MaxN>
using SmallVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, MaxN, 1>;
template <int MaxN>
using SmallMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxN, MaxN>;

// The iterates and residuals of a Newton solve, kept by a caller that solves many systems
// of one size so that run-time sizes do not allocate.
template <class Vec>
struct NewtonVectors {
  explicit NewtonVectors(Eigen::Index n) : r(n), r_trial(n), x_trial(n), dx(n) {}
  Vec r, r_trial, x_trial, dx;
};

// ||r||_inf with NaN propagated: a residual outside its domain (a NaN entry) must not read
// as converged, as lpNorm<Infinity>, which may skip NaN entries, can. 0 for an empty r.
template <class Derived>
double inf_norm_propagating_nan(const Eigen::MatrixBase<Derived>& r) {
  return r.size() > 0 ? r.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>() : 0.0;
}

// Newton's method with a backtracking line search on a problem that keeps its own
// Jacobian and linear solver (a dense LU below, the block LDU of solve/tree_ldu.hpp in the
// maximal engine). The problem provides
//   residual(x, r, jacobian)  r = r(x) (NaN entries where x is outside its domain); with
//                             jacobian, also evaluates and keeps dr/dx
//   factor()                  factorises the kept Jacobian
//   solve(r, dx)              dx = J^-1 r with the last factors
//   norm(r)                   the norm compared with tol
// The Jacobian is requested only where a Newton direction is needed, so a converged solve
// from a good guess costs one Jacobian and one factorisation; with reuse_jacobian the
// factors are kept while each iteration cuts the norm at least fourfold. The last call of
// residual is always at the returned x, so a problem may keep quantities that call left.
template <class Problem, class Vec>
NewtonStatus newton_iterate(Problem& problem, Vec& x, double tol, const NewtonOptions& opt,
                            NewtonVectors<Vec>& v) {
  auto& [r, r_trial, x_trial, dx] = v;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  NewtonStatus status;
  problem.residual(x, r, true);
  bool have_jacobian = true, factored = false;
  double contraction = 1.0;  // norm ratio of the last iteration
  double distance = opt.step_tolerance > 0.0 ? kInf : 0.0;  // estimated, to the solution
  bool at_round_off = false;
  const auto done = [&] {
    const double near = opt.step_tolerance * (1.0 + inf_norm_propagating_nan(x));
    return (status.residual_norm <= tol || at_round_off) && distance <= near;
  };
  status.residual_norm = problem.norm(r);
  while (std::isfinite(status.residual_norm) && !done() &&
         status.iterations < opt.max_iterations) {
    if (!(opt.reuse_jacobian && factored && contraction < 0.25)) {
      if (!have_jacobian) problem.residual(x, r, true);
      problem.factor();
      factored = true;
    }
    problem.solve(r, dx);
    ++status.iterations;
    double alpha = 1.0;
    for (;;) {
      x_trial = x - alpha * dx;
      problem.residual(x_trial, r_trial, false);
      const double norm_trial = problem.norm(r_trial);
      // Sufficient decrease of the norm; give up shrinking at 1/64.
      if (!opt.line_search || (std::isfinite(norm_trial) &&
                               norm_trial <= (1.0 - 1e-4 * alpha) * status.residual_norm) ||
          alpha < 1.0 / 64.0) {
        x.swap(x_trial);
        r.swap(r_trial);
        contraction = norm_trial / status.residual_norm;
        status.residual_norm = norm_trial;
        // A step that cut the residual by less than a tenth has met its round-off (noise
        // also makes some steps there look like slight decreases); the step's size is then
        // the noise's.
        if (opt.step_tolerance > 0.0) {
          const double full_step = inf_norm_propagating_nan(dx);
          at_round_off = !(contraction <= 0.9);
          distance = at_round_off ? full_step : alpha * full_step * contraction / (1.0 - contraction);
        }
        have_jacobian = false;
        break;
      }
      alpha *= 0.5;
    }
  }
  status.converged = std::isfinite(status.residual_norm) && done();
  return status;
}

// The vectors and the dense factorisation of newton_solve.
template <class Vec>
struct NewtonWorkspace {
  using Mat = Eigen::Matrix<double, Vec::RowsAtCompileTime, Vec::RowsAtCompileTime, 0,
                            Vec::MaxRowsAtCompileTime, Vec::MaxRowsAtCompileTime>;
  explicit NewtonWorkspace(Eigen::Index n) : vectors(n), J(n, n), lu(n) {}
  NewtonVectors<Vec> vectors;
  Mat J;
  Eigen::PartialPivLU<Mat> lu;
};

// Solves residual(x) = 0 with the work space ws (sized x.size()), with a dense LU and the
// inf-norm: converged when ||r||_inf <= tolerance (1 + residual_scale).
// residual(x, r, J) fills r(x) and, when J is not null, J = dr/dx.
template <class Vec, class Residual>
NewtonStatus newton_solve(Residual&& residual, Vec& x, double residual_scale,
                          const NewtonOptions& opt, NewtonWorkspace<Vec>& ws) {
  using Mat = typename NewtonWorkspace<Vec>::Mat;
  struct Dense {
    Residual& f;
    NewtonWorkspace<Vec>& ws;
    void residual(const Vec& x, Vec& r, bool jacobian) {
      f(x, r, jacobian ? &ws.J : static_cast<Mat*>(nullptr));
    }
    void factor() { ws.lu.compute(ws.J); }
    void solve(const Vec& r, Vec& dx) { dx.noalias() = ws.lu.solve(r); }
    double norm(const Vec& r) const { return inf_norm_propagating_nan(r); }
  } problem{residual, ws};
  return newton_iterate(problem, x, opt.tolerance * (1.0 + residual_scale), opt, ws.vectors);
}

// Solves residual(x) = 0 for a fixed-size vector (Eigen::Matrix<double, N, 1>) or a
// fixed-capacity one (SmallVec<MaxN>); no heap allocation either way.
template <class Vec, class Residual>
NewtonStatus newton_solve(Residual&& residual, Vec& x, double residual_scale,
                          const NewtonOptions& opt) {
  NewtonWorkspace<Vec> ws(x.size());
  return newton_solve(std::forward<Residual>(residual), x, residual_scale, opt, ws);
}

}  // namespace marsden
