// Closed loop over the step contract (docs/control.md): a nominal run of a system under
// inputs held over each step, the step map linearised along it in the state chart, the
// time-varying LQR gains of the discrete Riccati recursion, the infinite-horizon DARE for
// an equilibrium, and a tracking controller u = u_k - K_k (x (-) x_k) for sim::Feedback.
// Errors in the chart are tangent vectors (sim::StateChart: a rotation vector for a
// quaternion), as GCOP's LQR on Lie groups.
#pragma once

#include <span>
#include <vector>

#include <Eigen/Core>

#include "marsden/sim/feedback.hpp"
#include "marsden/sim/signal.hpp"
#include "marsden/sim/system.hpp"

namespace marsden::control {

// A run of a system from t0 in steps of dt: states x_0..x_N (rows of x, the system's state
// layout) and the inputs u_0..u_{N-1} held over each step (rows of u).
struct Nominal {
  double t0 = 0.0, dt = 0.0;
  Eigen::MatrixXd x, u;
  int steps() const { return static_cast<int>(u.rows()); }
  // The step t falls in, 0..steps(); a time a rounding below a step's start belongs to it.
  int step_at(double t) const;
};

// Runs system from x0 (set_state) under the inputs u (steps x inputs), each held over its
// step through `input`, which must be the system's controls. Throws InputError on sizes and
// SolverError naming the step that does not converge (the steps before are lost: a nominal
// is all or nothing). Leaves the system at x_N.
Nominal rollout(sim::System& system, sim::HeldInput& input, double t0, double dt,
                const Eigen::VectorXd& x0, const Eigen::MatrixXd& u);

// x_kp1 (-) x_kp1_nominal = A_k (x_k (-) x_k_nominal) + B_k (u_k - u_k_nominal) + O(2).
struct Linearization {
  std::vector<Eigen::MatrixXd> A, B;  // per step: tangent x tangent, tangent x inputs
  bool exact = false;                 // the system's exact step derivatives, or differences
};

enum class Derivatives {
  Auto,         // exact where the system has them (System::has_step_derivatives), else differences
  Exact,        // exact, or InputError
  Differences,  // central differences of the step map through set_state and input
};

// The step map linearised at every step of the nominal. Differences set the state
// x_k (+) h e_j and the inputs u_k +- h e_i (h = `step` times max(1, |u_k,i|) for the
// inputs) and need `input`, the system's controls; exact derivatives do not. Leaves the
// system at the nominal's last state.
Linearization linearize(sim::System& system, sim::HeldInput* input, const Nominal& nominal,
                        Derivatives derivatives = Derivatives::Auto, double step = 1e-5);

// The finite-horizon LQ problem along a linearisation:
//   min sum_k (dx_k' Q dx_k + du_k' R du_k) + dx_N' Q_N dx_N,  dx_kp1 = A_k dx_k + B_k du_k,
// solved by the discrete Riccati recursion (S_N = Q_N; K_k = (R + B' S B)^-1 B' S A;
// S_k = Q + A' S (A - B K)): du_k = -K_k dx_k. Q, Q_N symmetric positive semidefinite and
// R positive definite (checked; InputError names the matrix).
struct Gains {
  std::vector<Eigen::MatrixXd> K;  // per step: inputs x tangent
  std::vector<Eigen::MatrixXd> S;  // cost-to-go, S_0 .. S_N
};
Gains tvlqr(const Linearization& linearization, const Eigen::MatrixXd& Q,
            const Eigen::MatrixXd& R, const Eigen::MatrixXd& Q_N);

// The discrete algebraic Riccati equation S = Q + A' S A - A' S B (R + B' S B)^-1 B' S A of
// an equilibrium's (A, B), by the structure-preserving doubling algorithm (quadratic
// convergence), and its gain K = (R + B' S B)^-1 B' S A. Throws SolverError when it does
// not converge (an unstabilisable pair) in max_iterations.
struct Dare {
  Eigen::MatrixXd S, K;
  int iterations = 0;
};
Dare dare(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& Q,
          const Eigen::MatrixXd& R, int max_iterations = 100);

// u = u_k - K_k (x (-) x_k) with k the step of the nominal that t falls in; after the
// nominal's last step, u_{N-1} - K_final (x (-) x_N), K_final the last gain unless one is
// given (an equilibrium's DARE gain, say). Allocates nothing per call.
class Tracking final : public sim::Controller {
 public:
  Tracking(sim::StateChart chart, Nominal nominal, std::vector<Eigen::MatrixXd> K,
           Eigen::MatrixXd K_final = {});
  void control(double t_k, std::span<const double> x_k, std::span<double> u_k) override;
  const Nominal& nominal() const { return nominal_; }

 private:
  sim::StateChart chart_;
  Nominal nominal_;
  std::vector<Eigen::MatrixXd> K_;
  Eigen::MatrixXd K_final_;
  Eigen::VectorXd dx_, x_ref_;
};

}  // namespace marsden::control
