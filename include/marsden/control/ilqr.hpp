// iLQR over the step contract (docs/control.md): the inputs of N steps optimised on the
// step map's linearisation in the state chart (control/lqr.hpp), with box-constrained
// inputs (a projected-Newton box QP per step, as Tassa, Mansard and Todorov, ICRA 2014),
// Levenberg-Marquardt regularisation, a backtracking line search on the closed-loop
// forward pass, and terminal equality constraints by an augmented Lagrangian (the problem
// DMOC solves with Ipopt, here without a transcription). And MPC: the same solve repeated
// from the measured state, warm-started from the shifted last solution, as a controller.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "marsden/control/lqr.hpp"

namespace marsden::control {

// The cost
//   J = sum_k dt (dx_k' Q dx_k + du_k' R du_k) + dx_N' Q_N dx_N,
//   dx_k = x_k (-) x_ref_k, du_k = u_k - u_ref_k,
// over u_0..u_{N-1} in [u_lower, u_upper], subject to x_0 = x0 and, where `terminal` lists
// tangent entries, (x_N (-) x_goal)_i = 0 for each i listed. References: x_ref (N+1 rows)
// or empty (x_goal at every step), u_ref (N rows) or empty (zero). The cost DMOC
// minimises with effort weights w is Q = 0, R = diag(w), Q_N = 0 and its final state as
// terminal constraints.
struct IlqrProblem {
  double t0 = 0.0, dt = 0.0;
  int steps = 0;
  Eigen::VectorXd x0, x_goal;     // state layout
  Eigen::MatrixXd x_ref, u_ref;   // optional per-step references
  Eigen::MatrixXd Q, R, Q_N;      // tangent x tangent, inputs x inputs, tangent x tangent
  std::vector<int> terminal;      // tangent entries of x_N (-) x_goal held at zero
  Eigen::VectorXd u_lower, u_upper;  // per input; empty for none; +-inf allowed
};

struct IlqrOptions {
  int max_iterations = 1000;       // iLQR iterations, all augmented-Lagrangian rounds together
  double tolerance = 1e-9;         // on the relative cost decrease of an accepted iteration
  double constraint_tolerance = 1e-8;  // on max |terminal constraint|
  double penalty = 10.0;           // the augmented Lagrangian's first penalty
  double regularization = 1e-8;    // the smallest Levenberg-Marquardt term on Q_uu
  Derivatives derivatives = Derivatives::Auto;
};

struct IlqrResult {
  Nominal nominal;                   // the optimised run
  std::vector<Eigen::MatrixXd> K;    // feedback gains, du_k = -K_k dx_k (0 on clamped inputs)
  double cost = 0.0;                 // J without the constraint terms
  double constraint_violation = 0.0; // max |terminal constraint|
  int iterations = 0, rounds = 0;    // iLQR iterations; augmented-Lagrangian rounds
  bool converged = false;
  std::string message;
  double solve_time_s = 0.0;
};

// Solves from the guess u_guess (steps x inputs, clamped to the bounds), on `system`, whose
// controls must be `input`. Throws InputError naming the field for sizes, non-finite values,
// weights that are not positive (semi)definite or bounds with lower > upper; a step that
// fails in the forward pass shortens the line search, and one that fails from the guess
// is a SolverError naming it. The result says whether it converged; it is the best point
// reached either way.
IlqrResult ilqr(sim::System& system, sim::HeldInput& input, const IlqrProblem& problem,
                const Eigen::MatrixXd& u_guess, const IlqrOptions& options = {});

// Receding-horizon control: at t_k, iLQR over the next `horizon` steps of the reference
// (x_ref, u_ref of a Nominal, held at its last state and input past its end) from the
// measured state, warm-started from the last solution shifted by one step, tracking with
// Q, R and Q_N; applies its first input. The plan runs on `planner`, a system of its own
// whose controls are `input`, never on the controlled system. Records each solve's wall
// time.
struct MpcOptions {
  int horizon = 20;
  Eigen::MatrixXd Q, R, Q_N;
  Eigen::VectorXd u_lower, u_upper;
  IlqrOptions ilqr{.max_iterations = 20, .tolerance = 1e-6};
};

class Mpc final : public sim::Controller {
 public:
  Mpc(std::shared_ptr<sim::System> planner, std::shared_ptr<sim::HeldInput> input,
      Nominal reference, MpcOptions options);
  void control(double t_k, std::span<const double> x_k, std::span<double> u_k) override;
  // Wall time of each solve so far (s), and its iterations.
  const std::vector<double>& solve_times() const { return solve_times_; }
  const std::vector<int>& solve_iterations() const { return solve_iterations_; }

 private:
  std::shared_ptr<sim::System> planner_;
  std::shared_ptr<sim::HeldInput> input_;
  Nominal reference_;
  MpcOptions options_;
  Eigen::MatrixXd warm_;  // the last plan's inputs
  std::vector<double> solve_times_;
  std::vector<int> solve_iterations_;
};

}  // namespace marsden::control
