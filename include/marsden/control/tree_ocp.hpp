// DMOC for trees of frames: the midpoint variational integrator's discrete residual
// (tree/midpoint.hpp, tree paper eqs. (21), (22)) imposed at every step as equality
// constraints, with the inputs u_k held over each step. The same residual drives
// simulation, so re-simulating the optimal controls reproduces the optimal trajectory.
//
// Decision vector, step-major so that the constraint Jacobian is banded:
//   [q_k (n), p_k (n), u_k (nu), lambda_k (m), dt_k (free final time only)] for k = 0..N-1,
//   then [q_N (n), p_N (n)]
// with n coordinates (all dynamic), nu inputs, m constraint rows. Constraints, per step:
// r_a (n + m rows), then r_b (n rows); with a free final time, then N - 1 rows
// dt_k - dt_k-1 = 0 that keep the step uniform. Cost: sum_k dt_k (u_k^T diag(w) u_k + w_T).
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "marsden/control/ocp.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/midpoint.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::control {

// Sizes: n = model->num_coords(), nu = model->num_inputs(). SI units (s, m, rad, N, N m).
struct TreeOcpSpec {
  std::shared_ptr<const tree::Model> model;  // no prescribed coordinates
  double dt = 0.05;                          // s, > 0
  int steps = 40;                            // N >= 1
  VecX q0, qd0;                              // initial state (n each); q0 meets h(q0) = 0
  VecX q_final;                              // n: target of the coordinates fixed at the end
  std::vector<bool> q_final_fixed;           // n: true where q_N = q_final; empty: all fixed
  bool final_at_rest = true;                 // p_N = 0
  VecX u_lower, u_upper;                     // nu each, may be -inf / +inf
  VecX q_lower, q_upper;                     // n each for knots 1..N, or empty: unbounded
  VecX effort_weights;                       // nu, >= 0
  VecX u_guess;                              // nu, or empty: zero
  tree::MidpointOptions integrator;
  // Free final time: the step is a decision variable in [dt_min, dt_max] (s), dt its initial
  // guess, and the cost adds time_weight * T with T = N dt.
  bool free_final_time = false;
  double dt_min = 0.0, dt_max = std::numeric_limits<double>::infinity();
  double time_weight = 0.0;
};

class TreeOcp final : public Ocp {
 public:
  // Validates the spec: throws InputError naming the field.
  explicit TreeOcp(TreeOcpSpec spec);

  const TreeOcpSpec& spec() const { return spec_; }

  int num_variables() const override;
  int num_constraints() const override;
  void bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const override;
  // q linear from q0 to q_final (q0 for free coordinates), p the Legendre transform of
  // that constant velocity, u = u_guess, lambda = 0; the fixed ends as the bounds say.
  void initial_guess(VecX& x) const override;
  double cost(const VecX& x, VecX* grad) override;
  void constraints(const VecX& x, VecX& g) override;
  void jacobian(const VecX& x, BlockSink& sink) override;
  std::string constraint_name(int i) const override;
  std::string variable_name(int j) const override;
  // Stage k = [q_k, p_k, u_k, lambda_k] (the last: [q_N, p_N]); step k's residual couples
  // stages k and k+1.
  int stage_size() const override { return stride_; }

  int num_steps() const override { return spec_.steps; }
  double time_step() const override { return spec_.dt; }
  // States: t, q_<coordinate>..., p_<coordinate>... (N + 1 rows); controls: t, u_0...
  void tables(const VecX& x, Table& states, Table& controls) const override;
  SceneInputs scene_inputs() const override { return {nu_, 0}; }
  double resimulation_error(const VecX& x) const override;
  double min_clearance(const VecX& x) const override;

  // Offsets in x of knot k's q and p (k = 0..N), and of step k's u and lambda (k < N).
  int q_offset(int k) const { return k * stride_; }
  int p_offset(int k) const { return k * stride_ + n_; }
  int u_offset(int k) const { return k * stride_ + 2 * n_; }
  int lambda_offset(int k) const { return k * stride_ + 2 * n_ + nu_; }
  int dt_offset(int k) const { return k * stride_ + 2 * n_ + nu_ + m_; }  // free final time

 private:
  // Throws InputError unless x has num_variables() entries.
  void check_size(const VecX& x) const;
  double dt_at(const VecX& x, int k) const;
  // Residual blocks of every step at x, recomputed only when x changes.
  void evaluate(const VecX& x);

  TreeOcpSpec spec_;
  int n_, nu_, m_, stride_;
  tree::TreeState x0_;  // the fixed initial state (p_0 by the Legendre transform)
  tree::Data data_;
  std::vector<tree::MidpointResidualBlocks> blocks_;
  VecX x_evaluated_;
  tree::TreeState x_k_;
};

// The acrobot: two links in the world y-z plane hanging along -z, each turning about x,
// with a torque at the elbow only. Coordinates "shoulder" (link 1 from the downward
// vertical, rad) and "elbow" (link 2 relative to link 1, rad); input 0 is the elbow torque
// (N m). Frames "link1", "link2".
struct AcrobotParams {
  double mass1 = 1.0, mass2 = 1.0;      // kg
  double length1 = 1.0, length2 = 1.0;  // m
  // false: point masses at the links' ends; true: uniform rods (centre of mass half way,
  // inertia m l^2 / 12 about it across the rod).
  bool rods = false;
  double gravity = 9.81;  // m/s^2, along -z
};
tree::Model acrobot(const AcrobotParams& p = {});

// Swing-up of acrobot(p): from hanging at rest (q = 0) to upright at rest
// (shoulder = pi, elbow = 0) in `steps` steps of dt, with |tau| <= torque_limit (N m) and
// effort cost sum_k dt tau_k^2.
TreeOcpSpec acrobot_swing_up(const AcrobotParams& p, double dt, int steps,
                             double torque_limit);

}  // namespace marsden::control
