// DMOC for nonholonomic vehicles (vehicles §6, Fig. 10 right): the RDP integrator's residual
// (marsden/vehicle/rdp.hpp, eqs. (16)-(17)) imposed at every step of one sparse NLP, for any
// RdpModel<SE2> (car, snakeboard, sleigh).
//
// Decision vector, interleaved per step so that the Jacobian is banded:
//   [c_k (3), r_k (n_r), x_k = (u_k, w_k) (n_r + n_b), q_k (n_r), dt_k (free final time only)]
//   for k = 0..N-1, then [c_N (3), r_N (n_r)],
// with c = (theta, x, y) the pose coordinates of PoseChart<SE2> and q_k the controls of step
// k: q_k[i] is the force f_k+alpha on shape dof i, or its prescribed velocity u_prescribed where
// the model prescribes that velocity (the car's steering rate).
// Constraints of step k (all equalities):
//   reconstruction  c_k+1 - compose(c_k, dt xi_k)  (3)       eq. (16), line 1
//   shape update    r_k+1 - r_k - dt u_k           (n_r)     eq. (16), line 2
//   dynamics        RDP residual of step k         (n)       eqs. (16)-(17)
// with xi_k = E(r_k+alpha) w_k - A(r_k+alpha) u_k. Step 0 takes the continuous momenta of the
// initial state as its left momenta (fixed data), as rdp_initial_state does, so the
// transcription and the simulator are the same discrete system. With a free final time, N - 1
// rows dt_k - dt_k-1 = 0 keep the step uniform (one dt per step keeps the Jacobian banded). Then
// one clearance row per obstacle and knot (PathTerms).
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "marsden/control/ocp.hpp"
#include "marsden/control/path.hpp"
#include "marsden/vehicle/rdp.hpp"

namespace marsden::control {

struct Interval {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
};

// Everything that defines an RDP optimal-control problem. Vector fields indexed by shape dof
// (names, bounds, weights) are either empty (defaults) or of size n_r.
struct RdpOcpSpec {
  std::shared_ptr<const vehicle::RdpModel<SE2>> model;
  vehicle::RdpOptions integrator;
  double dt = 0.1;  // step [s]
  int steps = 50;   // N

  // Initial state, fixed: pose, shape r_0, shape velocity u_0 and locked velocity w_0 (n_b),
  // so that Omega_0 = E(r_0) w_0.
  SE2 g0;
  vehicle::ShapeVec r0, u0;
  vehicle::RdpVec w0;
  std::vector<std::string> shape_names;  // empty: "r0", "r1", ...

  // Final conditions. final_coords = (theta, x, y) at t_N, where final_coords_fixed says so;
  // final_shape likewise (empty mask: every entry fixed).
  std::optional<Vec3> final_coords;
  std::array<bool, 3> final_coords_fixed = {true, true, true};
  std::optional<vehicle::ShapeVec> final_shape;
  std::vector<bool> final_shape_fixed;
  // The last segment [t_N-1, t_N] moves with shape velocity final_shape_velocity, or not at
  // all (u_N-1 = 0, w_N-1 = 0) with final_at_rest.
  std::optional<vehicle::ShapeVec> final_shape_velocity;
  bool final_at_rest = false;

  // Bounds, at every step (controls) or at knots 1..N (shape, position).
  std::vector<Interval> control_bounds;  // per shape dof: force, or prescribed velocity
  std::vector<Interval> shape_bounds;
  Interval x_bounds, y_bounds;

  // Cost: dt sum_k sum_i (control_weights_i q_k,i^2) over steps 0..N-1
  //     + dt sum_k sum_i (shape_weights_i r_k,i^2) over knots 1..N, plus the path terms.
  std::vector<double> control_weights;
  std::vector<double> shape_weights;
  PathSpec path;

  // Free final time: the step is a decision variable in [dt_min, dt_max] (s), dt its initial
  // guess, and the cost adds time_weight * T with T = N dt. Takes no hazard cost (its weight
  // would depend on dt too).
  bool free_final_time = false;
  double dt_min = 0.0, dt_max = std::numeric_limits<double>::infinity();
  double time_weight = 0.0;

  // Initial guess: along the polyline g0 -> waypoints -> final position (straight ahead
  // without one), heading along it, at the constant guess_speed [m/s], or with 0 at the
  // rest-to-rest speed profile that covers it in N dt; shape velocities fitted to that body
  // velocity in least squares (least norm), and the forces that then zero each free shape row
  // of the residual.
  std::vector<Vec2> waypoints;
  double guess_speed = 0.0;
};

class RdpOcp final : public Ocp {
 public:
  // Throws InputError naming the field of spec that is invalid.
  explicit RdpOcp(RdpOcpSpec spec);

  int num_variables() const override;
  int num_constraints() const override;
  void bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const override;
  void initial_guess(VecX& x) const override;
  double cost(const VecX& x, VecX* grad) override;
  void constraints(const VecX& x, VecX& g) override;
  void jacobian(const VecX& x, BlockSink& sink) override;
  std::string constraint_name(int i) const override;
  std::string variable_name(int j) const override;
  // Stage k = step k's block (the last stage is [c_N, r_N]): the reconstruction of step k
  // couples stages k and k+1, its dynamics stages k-1 and k.
  int stage_size() const override { return block_; }

  int num_steps() const override { return spec_.steps; }
  double time_step() const override { return spec_.dt; }
  // states: t, theta, x, y, shape (N + 1 rows); controls: t, the controls ("f_<dof>" or
  // "u_<dof>_in"), the segment unknowns ("u_<dof>", "w<j>") (N rows).
  void tables(const VecX& x, Table& states, Table& controls) const override;
  SceneInputs scene_inputs() const override { return {nr_, 0}; }
  double resimulation_error(const VecX& x) const override;
  double min_clearance(const VecX& x) const override;

  const RdpOcpSpec& spec() const { return spec_; }
  // Where step k's blocks start (k = N: the final knot's c_N, r_N).
  int coords_index(int k) const { return k * block_; }
  int shape_index(int k) const { return k * block_ + 3; }
  int unknowns_index(int k) const { return k * block_ + 3 + nr_; }
  int controls_index(int k) const { return k * block_ + 3 + nr_ + n_; }
  int dt_index(int k) const { return k * block_ + 3 + nr_ + n_ + nr_; }  // free final time

 private:
  double dt_at(const VecX& x, int k) const;
  vehicle::ShapeVec shape_at(const VecX& x, int k) const;
  vehicle::RdpVec unknowns_at(const VecX& x, int k) const;
  // Step k's controls split into forces f (zero on prescribed dofs) and prescribed
  // velocities u_prescribed (zero on free dofs), as the residual takes them.
  void controls_at(const VecX& x, int k, vehicle::ShapeVec& f,
                   vehicle::ShapeVec& u_prescribed) const;
  void check_size(const VecX& x, const char* what) const;
  std::string control_name(int i) const;
  std::string unknown_name(int i) const;

  RdpOcpSpec spec_;
  const vehicle::RdpModel<SE2>* model_;
  int nr_, nb_, n_;  // shape, symmetry, unknowns per step
  int block_;        // variables per step
  int rows_;         // constraints per step
  int path_row0_;    // first clearance row, after the rows that keep dt uniform
  vehicle::RdpLeftMomentum<SE2> left0_;
  PathTerms path_;
};

using SegmentJacobian = Eigen::Matrix<double, 3, Eigen::Dynamic, 0, 3, vehicle::kRdpMaxUnknowns>;

// xi_k = E(r_k+alpha) w_k - A(r_k+alpha) u_k (rdp_segment_velocity) and its exact
// derivatives, with r_k+alpha = r_k + alpha dt u_k:
//   d xi / d r_j = dE_j w - dA_j u,   d xi / d u_j = -A_j + alpha dt (dE_j w - dA_j u),
//   d xi / d w = E.
// J_xi_r is (3 x n_r), J_xi_x is (3 x (n_r + n_b)).
Vec3 rdp_segment_velocity_jacobians(const vehicle::RdpModel<SE2>& model,
                                    const vehicle::RdpOptions& opt, double dt,
                                    const vehicle::ShapeVec& r_k, const vehicle::RdpVec& x_k,
                                    SegmentJacobian& J_xi_r, SegmentJacobian& J_xi_x);

// The car of Fig. 10 (right): from rest at the origin heading along x, through a straight
// tunnel (|y| <= 2 m) past three pillars, to rest 15 m ahead, with the least steering (rate
// and angle) and a little torque; |sigma| <= tan 35 deg, |u_sigma| <= 1 /s, |f_psi| <= 2 N m.
// The time horizon is 10 s, split into `steps` steps.
RdpOcpSpec car_tunnel_problem(int steps);

}  // namespace marsden::control
