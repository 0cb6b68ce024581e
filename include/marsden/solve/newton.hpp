// Newton's method on a small fixed-size system with a backtracking line search.
// It stops on a tolerance, never after a fixed number of iterations, and reports.
#pragma once

#include <cmath>
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

// The iterates, residuals and factorisation of newton_solve, kept by a caller that solves
// many systems of one size (e.g. in its Data) so that run-time sizes do not allocate.
template <class Vec>
struct NewtonWorkspace {
  using Mat = Eigen::Matrix<double, Vec::RowsAtCompileTime, Vec::RowsAtCompileTime, 0,
                            Vec::MaxRowsAtCompileTime, Vec::MaxRowsAtCompileTime>;
  explicit NewtonWorkspace(Eigen::Index n) : r(n), r_trial(n), x_trial(n), dx(n), J(n, n), lu(n) {}
  Vec r, r_trial, x_trial, dx;
  Mat J;
  Eigen::PartialPivLU<Mat> lu;
};

// Solves residual(x) = 0 with the work space ws (sized x.size()).
// residual(x, r, J) fills r(x) and, when J is not null, J = dr/dx. The Jacobian is
// requested only where a Newton direction is needed, so a converged solve from a good
// guess costs one Jacobian and one factorisation. The last call of residual is always at
// the returned x, so a caller may read quantities that call left behind.
template <class Vec, class Residual>
NewtonStatus newton_solve(Residual&& residual, Vec& x, double residual_scale,
                          const NewtonOptions& opt, NewtonWorkspace<Vec>& ws) {
  using Mat = typename NewtonWorkspace<Vec>::Mat;
  auto& [r, r_trial, x_trial, dx, J, lu] = ws;
  const Eigen::Index n = x.size();
  NewtonStatus status;
  const double tol = opt.tolerance * (1.0 + residual_scale);
  residual(x, r, &J);
  bool have_jacobian = true, factored = false;
  double contraction = 1.0;  // residual ratio of the last iteration
  status.residual_norm = n > 0 ? r.template lpNorm<Eigen::Infinity>() : 0.0;
  while (std::isfinite(status.residual_norm) && status.residual_norm > tol &&
         status.iterations < opt.max_iterations) {
    if (!(opt.reuse_jacobian && factored && contraction < 0.25)) {
      if (!have_jacobian) residual(x, r, &J);
      lu.compute(J);
      factored = true;
    }
    dx.noalias() = lu.solve(r);
    ++status.iterations;
    double alpha = 1.0;
    for (;;) {
      x_trial = x - alpha * dx;
      residual(x_trial, r_trial, static_cast<Mat*>(nullptr));
      const double norm_trial = r_trial.template lpNorm<Eigen::Infinity>();
      // Sufficient decrease on the inf-norm; give up shrinking at 1/64.
      if (!opt.line_search || (std::isfinite(norm_trial) &&
                               norm_trial <= (1.0 - 1e-4 * alpha) * status.residual_norm) ||
          alpha < 1.0 / 64.0) {
        x = x_trial;
        r = r_trial;
        contraction = norm_trial / status.residual_norm;
        status.residual_norm = norm_trial;
        have_jacobian = false;
        break;
      }
      alpha *= 0.5;
    }
  }
  status.converged = std::isfinite(status.residual_norm) && status.residual_norm <= tol;
  return status;
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
