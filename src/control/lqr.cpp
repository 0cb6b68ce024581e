// Closed loop over the step contract (control/lqr.hpp, docs/control.md).
#include "marsden/control/lqr.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <string>

#include "marsden/error.hpp"
#include "marsden/support/text.hpp"
#include "control/weights.hpp"

namespace marsden::control {

using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

std::span<const double> row_span(const MatrixXd& m, Eigen::Index r, VectorXd& buffer) {
  buffer = m.row(r).transpose();
  return {buffer.data(), std::size_t(buffer.size())};
}

std::span<double> span_of(VectorXd& v) { return {v.data(), std::size_t(v.size())}; }
std::span<const double> span_of(const VectorXd& v) { return {v.data(), std::size_t(v.size())}; }

void step_or_throw(sim::System& system, double t_k, double dt, int k, const char* what) {
  const sim::StepStatus status = system.step(t_k, dt);
  if (!status.converged)
    throw SolverError(std::string(what) + ": step " + std::to_string(k) + " from t = " +
                      time_text(t_k) + " did not converge (" +
                      (status.reason.empty() ? "residual " + number_text(status.residual)
                                             : status.reason) +
                      ")");
}

}  // namespace

void check_weight(const MatrixXd& M, Eigen::Index n, const std::string& where, const char* name,
                  bool definite) {
  if (M.rows() != n || M.cols() != n)
    throw InputError(where + ": " + name + " must be " + std::to_string(n) + " x " +
                     std::to_string(n) + ", got " + std::to_string(M.rows()) + " x " +
                     std::to_string(M.cols()));
  if (!M.allFinite()) throw InputError(where + ": " + name + " has entries that are not finite");
  const double scale = std::max(1.0, M.cwiseAbs().maxCoeff());
  if ((M - M.transpose()).cwiseAbs().maxCoeff() > 1e-12 * scale)
    throw InputError(where + ": " + name + " is not symmetric");
  if (n == 0) return;
  const double lowest = Eigen::SelfAdjointEigenSolver<MatrixXd>(M).eigenvalues()[0];
  if (definite ? !(lowest > 0.0) : lowest < -1e-12 * scale)
    throw InputError(where + ": " + name + " must be positive " +
                     (definite ? "definite" : "semidefinite") + " (its smallest eigenvalue is " +
                     number_text(lowest) + ")");
}

int Nominal::step_at(double t) const {
  const double s = (t - t0) / dt;
  return std::clamp(int(std::floor(s + 1e-9 * std::max(1.0, std::abs(s)))), 0, steps());
}

Nominal rollout(sim::System& system, sim::HeldInput& input, double t0, double dt,
                const VectorXd& x0, const MatrixXd& u) {
  if (!(dt > 0.0) || !std::isfinite(t0))
    throw InputError("rollout: dt must be > 0 and t0 finite (got dt = " + number_text(dt) + ")");
  if (u.cols() != input.size())
    throw InputError("rollout: u needs " + std::to_string(input.size()) +
                     " columns (one per input), got " + std::to_string(u.cols()));
  if (!u.allFinite()) throw InputError("rollout: u has entries that are not finite");
  Nominal out;
  out.t0 = t0;
  out.dt = dt;
  out.u = u;
  out.x.resize(u.rows() + 1, system.state_size());
  system.set_state(span_of(x0));
  VectorXd x(system.state_size()), u_k;
  system.get_state(span_of(x));
  out.x.row(0) = x.transpose();
  for (Eigen::Index k = 0; k < u.rows(); ++k) {
    input.set(row_span(u, k, u_k));
    step_or_throw(system, t0 + double(k) * dt, dt, int(k), "rollout");
    system.get_state(span_of(x));
    out.x.row(k + 1) = x.transpose();
  }
  return out;
}

Linearization linearize(sim::System& system, sim::HeldInput* input, const Nominal& nominal,
                        Derivatives derivatives, double step) {
  const int N = nominal.steps(), nx = system.state_size(), nt = system.tangent_size();
  if (nominal.x.rows() != N + 1 || nominal.x.cols() != nx)
    throw InputError("linearize: the nominal needs " + std::to_string(N + 1) + " states of " +
                     std::to_string(nx) + " entries, got " + std::to_string(nominal.x.rows()) +
                     " x " + std::to_string(nominal.x.cols()));
  const bool exact = derivatives == Derivatives::Exact ||
                     (derivatives == Derivatives::Auto && system.has_step_derivatives());
  if (exact && !system.has_step_derivatives())
    throw InputError("linearize: this system has no exact step derivatives; difference "
                     "its step map instead");
  if (!exact && input == nullptr)
    throw InputError("linearize: differencing the step map needs the system's held input");
  if (!(step > 0.0)) throw InputError("linearize: the difference step must be > 0");
  const Eigen::Index nu = nominal.u.cols();

  Linearization out;
  out.exact = exact;
  out.A.resize(std::size_t(N));
  out.B.resize(std::size_t(N));
  VectorXd x_k, u_k, x_kp1, probe(nx), y(nx), d_plus(nt), d_minus(nt), e(nt), u_probe;
  for (int k = 0; k < N; ++k) {
    const double t_k = nominal.t0 + double(k) * nominal.dt;
    row_span(nominal.x, k, x_k);
    row_span(nominal.u, k, u_k);
    row_span(nominal.x, k + 1, x_kp1);
    MatrixXd& A = out.A[std::size_t(k)];
    MatrixXd& B = out.B[std::size_t(k)];
    system.set_state(span_of(x_k));
    if (exact) {
      system.step_derivatives(t_k, nominal.dt, span_of(u_k), A, B);
      continue;
    }
    A.resize(nt, nt);
    B.resize(nt, nu);
    // One side of a central difference: the step from x_k (+) dx under u, as y (-) x_kp1.
    auto side = [&](const VectorXd& dx, const VectorXd& u, VectorXd& d) {
      system.state_integrate(span_of(x_k), span_of(dx), span_of(probe));
      system.set_state(span_of(probe));
      input->set(span_of(u));
      step_or_throw(system, t_k, nominal.dt, k, "linearize");
      system.get_state(span_of(y));
      system.state_difference(span_of(x_kp1), span_of(y), span_of(d));
    };
    for (int j = 0; j < nt; ++j) {
      e.setZero();
      e[j] = step;
      side(e, u_k, d_plus);
      side(-e, u_k, d_minus);
      A.col(j) = (d_plus - d_minus) / (2.0 * step);
    }
    e.setZero();
    for (Eigen::Index i = 0; i < nu; ++i) {
      const double h = step * std::max(1.0, std::abs(u_k[i]));
      u_probe = u_k;
      u_probe[i] += h;
      side(e, u_probe, d_plus);
      u_probe[i] = u_k[i] - h;
      side(e, u_probe, d_minus);
      B.col(i) = (d_plus - d_minus) / (2.0 * h);
    }
  }
  system.set_state(row_span(nominal.x, N, x_k));
  if (!exact && N > 0) input->set(row_span(nominal.u, N - 1, u_k));
  return out;
}

Gains tvlqr(const Linearization& lin, const MatrixXd& Q, const MatrixXd& R, const MatrixXd& Q_N) {
  const std::size_t N = lin.A.size();
  if (N == 0 || lin.B.size() != N) throw InputError("tvlqr: the linearisation has no steps");
  const Eigen::Index nt = lin.A[0].rows(), nu = lin.B[0].cols();
  for (std::size_t k = 0; k < N; ++k)
    if (lin.A[k].rows() != nt || lin.A[k].cols() != nt || lin.B[k].rows() != nt ||
        lin.B[k].cols() != nu)
      throw InputError("tvlqr: A_" + std::to_string(k) + " or B_" + std::to_string(k) +
                       " does not have the sizes of A_0 (" + std::to_string(nt) + " x " +
                       std::to_string(nt) + ") and B_0 (" + std::to_string(nt) + " x " +
                       std::to_string(nu) + ")");
  check_weight(Q, nt, "tvlqr", "Q", false);
  check_weight(Q_N, nt, "tvlqr", "Q_N", false);
  check_weight(R, nu, "tvlqr", "R", true);
  Gains out;
  out.K.resize(N);
  out.S.resize(N + 1);
  out.S[N] = Q_N;
  for (std::size_t k = N; k-- > 0;) {
    const MatrixXd& A = lin.A[k];
    const MatrixXd& B = lin.B[k];
    const MatrixXd SB = out.S[k + 1] * B;
    const MatrixXd H = R + B.transpose() * SB;
    out.K[k] = H.llt().solve(SB.transpose() * A);
    const MatrixXd S = Q + A.transpose() * out.S[k + 1] * (A - B * out.K[k]);
    out.S[k] = 0.5 * (S + S.transpose());
  }
  return out;
}

Dare dare(const MatrixXd& A, const MatrixXd& B, const MatrixXd& Q, const MatrixXd& R,
          int max_iterations) {
  const Eigen::Index n = A.rows();
  if (A.cols() != n || B.rows() != n)
    throw InputError("dare: A must be square and B have its rows (got A " +
                     std::to_string(A.rows()) + " x " + std::to_string(A.cols()) + ", B " +
                     std::to_string(B.rows()) + " x " + std::to_string(B.cols()) + ")");
  check_weight(Q, n, "dare", "Q", false);
  check_weight(R, B.cols(), "dare", "R", true);
  // Structure-preserving doubling (Chu, Fan, Lin and Wang, 2004): A_j, G_j, H_j with
  // H_j -> S. Each iteration doubles the horizon of the Riccati recursion it sums.
  MatrixXd A_j = A, G_j = B * R.llt().solve(B.transpose()), H_j = Q;
  const MatrixXd I = MatrixXd::Identity(n, n);
  Dare out;
  for (int j = 1; j <= max_iterations; ++j) {
    const Eigen::PartialPivLU<MatrixXd> W(I + G_j * H_j);
    const MatrixXd WA = W.solve(A_j), WG = W.solve(G_j);
    const MatrixXd H_next = H_j + A_j.transpose() * H_j * WA;
    G_j = G_j + A_j * WG * A_j.transpose();
    A_j = A_j * WA;
    const double change = (H_next - H_j).cwiseAbs().maxCoeff();
    H_j = 0.5 * (H_next + H_next.transpose());
    if (!H_j.allFinite()) break;
    if (change <= 1e-14 * std::max(1.0, H_j.cwiseAbs().maxCoeff())) {
      out.S = H_j;
      out.K = (R + B.transpose() * H_j * B).llt().solve(B.transpose() * H_j * A);
      out.iterations = j;
      return out;
    }
  }
  throw SolverError("dare: the doubling did not converge in " + std::to_string(max_iterations) +
                    " iterations (is (A, B) stabilisable and (A, Q) detectable?)");
}

Tracking::Tracking(sim::StateChart chart, Nominal nominal, std::vector<MatrixXd> K,
                   MatrixXd K_final)
    : chart_(std::move(chart)), nominal_(std::move(nominal)), K_(std::move(K)),
      K_final_(std::move(K_final)) {
  const int N = nominal_.steps();
  const Eigen::Index nt = chart_.tangent_size(), nu = nominal_.u.cols();
  if (N < 1 || nominal_.x.rows() != N + 1 || nominal_.x.cols() != chart_.size)
    throw InputError("tracking: the nominal needs N >= 1 steps and N + 1 states of " +
                     std::to_string(chart_.size) + " entries");
  if (!(nominal_.dt > 0.0)) throw InputError("tracking: the nominal's dt must be > 0");
  if (K_.size() != std::size_t(N))
    throw InputError("tracking: one gain per step (" + std::to_string(N) + "), got " +
                     std::to_string(K_.size()));
  if (K_final_.size() == 0) K_final_ = K_.back();
  for (std::size_t k = 0; k <= K_.size(); ++k) {
    const MatrixXd& K_k = k < K_.size() ? K_[k] : K_final_;
    if (K_k.rows() != nu || K_k.cols() != nt || !K_k.allFinite())
      throw InputError("tracking: gain " + (k < K_.size() ? std::to_string(k) : "K_final") +
                       " must be " + std::to_string(nu) + " x " + std::to_string(nt) +
                       " and finite");
  }
  dx_.resize(nt);
  x_ref_.resize(chart_.size);
}

void Tracking::control(double t_k, std::span<const double> x_k, std::span<double> u_k) {
  const int N = nominal_.steps();
  if (Eigen::Index(u_k.size()) != nominal_.u.cols())
    throw InputError("tracking: the system takes " + std::to_string(u_k.size()) +
                     " inputs, the nominal " + std::to_string(nominal_.u.cols()));
  const int k = nominal_.step_at(t_k);
  const MatrixXd& K = k < N ? K_[std::size_t(k)] : K_final_;
  x_ref_ = nominal_.x.row(k).transpose();
  chart_.difference(span_of(x_ref_), x_k, span_of(dx_));
  Eigen::Map<VectorXd> u(u_k.data(), Eigen::Index(u_k.size()));
  u.noalias() = nominal_.u.row(std::min(k, N - 1)).transpose();
  u.noalias() -= K * dx_;
}

}  // namespace marsden::control
