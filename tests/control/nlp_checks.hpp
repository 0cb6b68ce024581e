// The generic checks every transcription inherits: the cost gradient and the sparse
// constraint Jacobian against central differences, no nonzero outside the pattern, and the
// banded difference Hessian against a dense one (which checks the stage coupling it
// assumes).
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <Eigen/Core>
#include <gtest/gtest.h>

#include "marsden/control/nlp.hpp"
#include "marsden/error.hpp"

namespace marsden::control::testing {

// A point near the initial guess (relative perturbation of size scale), where the
// derivatives are checked.
inline VecX perturbed_guess(SparseNlp& nlp, double scale, unsigned seed = 7) {
  VecX x(nlp.num_variables());
  nlp.initial_guess(x);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (int j = 0; j < x.size(); ++j) x[j] += scale * U(rng) * (1.0 + std::abs(x[j]));
  return x;
}

// Dense analytic Jacobian assembled from the sink (duplicates add up, as Ipopt reads them).
inline Eigen::MatrixXd analytic_jacobian(SparseNlp& nlp, const VecX& x,
                                         Eigen::MatrixXi* pattern = nullptr) {
  BlockSink sink;
  sink.begin_structure();
  nlp.jacobian(x, sink);
  std::vector<double> values(sink.count());
  BlockSink value_sink = sink;
  value_sink.begin_values(values.data());
  nlp.jacobian(x, value_sink);
  EXPECT_EQ(value_sink.written(), sink.count()) << "the value pass must match the structure";
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(nlp.num_constraints(), nlp.num_variables());
  if (pattern) *pattern = Eigen::MatrixXi::Zero(J.rows(), J.cols());
  for (int e = 0; e < sink.count(); ++e) {
    J(sink.rows()[e], sink.cols()[e]) += values[e];
    if (pattern) (*pattern)(sink.rows()[e], sink.cols()[e]) = 1;
  }
  return J;
}

// The Hessian of the Lagrangian that Ipopt gets (variables of every third stage perturbed
// together, band of neighbouring stages) against central differences of the same exact
// gradient with one variable at a time over the whole matrix. With the stage coupling the
// transcription declares, both see the same columns and agree to rounding; a term that
// couples stages further apart shows up outside the band.
inline void expect_banded_hessian_matches_dense(SparseNlp& nlp, const VecX& x) {
  const int n = nlp.num_variables(), m = nlp.num_constraints();
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  VecX lambda(m);
  for (int i = 0; i < m; ++i) lambda[i] = U(rng);
  const double sigma = 0.7;
  const Eigen::MatrixXd H = difference_hessian(nlp, x, sigma, lambda);
  auto gradient = [&](const VecX& at) {
    VecX g = VecX::Zero(n);
    nlp.cost(at, &g);
    return VecX(sigma * g + analytic_jacobian(nlp, at).transpose() * lambda);
  };
  Eigen::MatrixXd D(n, n);
  for (int j = 0; j < n; ++j) {
    const double eps = 1e-5 * std::max(1.0, std::abs(x[j]));
    VecX xp = x, xm = x;
    xp[j] += eps;
    xm[j] -= eps;
    D.col(j) = (gradient(xp) - gradient(xm)) / (xp[j] - xm[j]);
  }
  D = 0.5 * (D + D.transpose()).eval();
  Eigen::Index i_worst, j_worst;
  const double worst = (H - D).cwiseAbs().maxCoeff(&i_worst, &j_worst);
  EXPECT_LT(worst, 1e-7 * (1.0 + D.cwiseAbs().maxCoeff()))
      << "Hessian of the Lagrangian, worst at " << nlp.variable_name(static_cast<int>(i_worst))
      << " / " << nlp.variable_name(static_cast<int>(j_worst));
}

// Checks grad f and dg/dx at x against central differences with step eps; tol is relative
// to max(1, |entry|).
inline void expect_derivatives_match(SparseNlp& nlp, const VecX& x, double eps, double tol) {
  const int n = nlp.num_variables(), m = nlp.num_constraints();
  VecX grad = VecX::Zero(n);
  nlp.cost(x, &grad);
  Eigen::MatrixXi pattern;
  const Eigen::MatrixXd J = analytic_jacobian(nlp, x, &pattern);
  VecX gp(m), gm(m);
  double worst_grad = 0.0, worst_jac = 0.0;
  std::string where_grad, where_jac;
  for (int j = 0; j < n; ++j) {
    VecX xp = x, xm = x;
    xp[j] += eps;
    xm[j] -= eps;
    const double dfd = (nlp.cost(xp, nullptr) - nlp.cost(xm, nullptr)) / (2.0 * eps);
    const double eg = std::abs(dfd - grad[j]) / std::max(1.0, std::abs(dfd));
    if (eg > worst_grad) {
      worst_grad = eg;
      where_grad = nlp.variable_name(j);
    }
    nlp.constraints(xp, gp);
    nlp.constraints(xm, gm);
    for (int i = 0; i < m; ++i) {
      const double fd = (gp[i] - gm[i]) / (2.0 * eps);
      if (!pattern(i, j) && std::abs(fd) > 1e-8)
        ADD_FAILURE() << "nonzero " << fd << " outside the Jacobian pattern: "
                      << nlp.constraint_name(i) << " / " << nlp.variable_name(j);
      const double e = std::abs(fd - J(i, j)) / std::max(1.0, std::abs(fd));
      if (e > worst_jac) {
        worst_jac = e;
        where_jac = nlp.constraint_name(i) + " / " + nlp.variable_name(j);
      }
    }
  }
  EXPECT_LT(worst_grad, tol) << "cost gradient, worst at " << where_grad;
  EXPECT_LT(worst_jac, tol) << "constraint Jacobian, worst at " << where_jac;
  if (nlp.stage_size() > 0) expect_banded_hessian_matches_dense(nlp, x);
}

// A free-final-time optimum is stationary and minimal in T: solve_fixed(dt) solves the same
// problem with the step fixed at dt and returns its cost, to which the time cost
// time_weight * N dt is added; at dt_star it must equal the free optimum's cost, and at
// (1 -/+ spread) dt_star be no lower (to rel_tol).
template <class SolveFixed>
void expect_free_time_is_optimal(double cost, double dt_star, int N, double time_weight,
                                 double spread, double rel_tol, SolveFixed solve_fixed) {
  auto fixed_cost = [&](double dt) { return solve_fixed(dt) + time_weight * N * dt; };
  EXPECT_NEAR(fixed_cost(dt_star), cost, rel_tol * cost);
  EXPECT_GE(fixed_cost((1.0 - spread) * dt_star), cost - rel_tol * cost);
  EXPECT_GE(fixed_cost((1.0 + spread) * dt_star), cost - rel_tol * cost);
}

// Building Transcription from spec throws InputError whose message names `field`.
template <class Transcription, class Spec>
void expect_spec_error(const Spec& spec, const std::string& field) {
  try {
    Transcription ocp(spec);
    ADD_FAILURE() << "expected InputError naming " << field;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

}  // namespace marsden::control::testing
