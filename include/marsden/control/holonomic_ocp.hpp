// DMOC for holonomic vehicles on SE(2) or SE(3) (vehicles §6 with eqs. (9)-(10)): the
// helicopter and the boat of vehicles §4.3, or any HolonomicModel.
//
// Decision vector, interleaved per step so the Jacobian is banded:
//   [c_k, xi_k, u_k, gamma_k (, dt_k)] for k = 0..N-1, then c_N,
// with c_k the pose coordinates of control/pose_chart.hpp, xi_k the body velocity over
// [t_k, t_k+1], u_k the controls and gamma_k the actuator angles held over the step, and
// with a free final time the step dt_k itself.
// Constraints per step k (rows in this order):
//   c_k+1 - coords(g_k tau(dt_k xi_k)) = 0                       (eq. (9))
//   holonomic_residual(dt_k, g_k, xi_k-1, xi_k, u_k, gamma_k) = 0  (eq. (10))
// where xi_-1 comes from the initial velocity (initial_xi_km1, a function of dt_0 when the
// time is free); then, with a free final time, dt_k - dt_k-1 = 0 for k = 1..N-1 (one step
// length, so that the discrete system is the simulator's; per-stage copies keep the
// Hessian banded); then one row per obstacle and knot (control/path.hpp), then the final
// heading row if asked for.
// The initial pose is fixed by equal bounds; the final position (any of its components),
// orientation and last body velocity by equal bounds, the heading by its row.
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "marsden/control/ocp.hpp"
#include "marsden/control/path.hpp"
#include "marsden/control/pose_chart.hpp"
#include "marsden/vehicle/holonomic.hpp"

namespace marsden::control {

template <class G>
struct HolonomicOcpSpec {
  using Tangent = typename G::Tangent;
  std::shared_ptr<const vehicle::HolonomicModel<G>> model;
  vehicle::HolonomicOptions<G> integrator;  // map, tangent map; Newton for the initial xi_-1 and
                                            // for re-simulation
  double dt = 0.0;                 // s
  int steps = 0;                   // N
  G g0;                            // initial pose
  Tangent xi0 = Tangent::Zero();   // initial body velocity (continuous)

  // Final conditions. Position components with final_position_fixed[i] are fixed (SE(2)
  // uses x, y). final_orientation fixes the whole attitude (the quaternion sign is taken
  // nearest the initial one: the shorter way round); final_heading (SE(3) only, rad) asks
  // the body x axis to point along (cos psi, sin psi, .) in the horizontal plane, leaving
  // roll and pitch free. final_velocity fixes xi_N-1, the last segment's body velocity.
  Vec3 final_position = Vec3::Zero();
  std::array<bool, 3> final_position_fixed{false, false, false};
  std::optional<G> final_orientation;
  std::optional<double> final_heading;
  std::optional<Tangent> final_velocity;

  // Bounds (+-inf where absent). Position bounds hold at knots 1..N.
  vehicle::InputVec u_lower, u_upper, gamma_lower, gamma_upper;
  Vec3 position_lower = Vec3::Constant(-std::numeric_limits<double>::infinity());
  Vec3 position_upper = Vec3::Constant(std::numeric_limits<double>::infinity());
  Tangent xi_lower = Tangent::Constant(-std::numeric_limits<double>::infinity());
  Tangent xi_upper = Tangent::Constant(std::numeric_limits<double>::infinity());

  // Cost: sum_k dt (sum_i w_u,i (u_k,i - u_ref,i)^2 + sum_i w_g,i gamma_k,i^2) plus path terms.
  // u_ref (e.g. the hover thrust) defaults to zero.
  vehicle::InputVec u_weights, u_reference, gamma_weights;
  PathSpec path;

  // Free final time: the step is a decision variable in [dt_min, dt_max] (s), dt its initial
  // guess, and the cost adds time_weight * T with T = N dt. Needs a model whose wrench does
  // not depend on t, and no hazard cost (its weight would depend on dt too).
  bool free_final_time = false;
  double dt_min = 0.0, dt_max = std::numeric_limits<double>::infinity();
  double time_weight = 0.0;

  // Initial guess: poses along the polyline start -> waypoints -> final position (the
  // final orientation, or the heading, reached by constant-rate rotation), body velocities
  // consistent with those poses, controls u_guess and gamma_guess. With simulate_guess the
  // guess is instead the simulated motion under u_guess, gamma_guess.
  std::vector<Vec3> waypoints;
  vehicle::InputVec u_guess, gamma_guess;
  bool simulate_guess = false;
};

template <class G>
class HolonomicOcp final : public Ocp {
 public:
  using Tangent = typename G::Tangent;
  using Chart = PoseChart<G>;
  static constexpr int kNc = Chart::kCoords;
  static constexpr int kNt = G::kDim;

  // Validates the spec (InputError naming the field) and builds the layout.
  explicit HolonomicOcp(HolonomicOcpSpec<G> spec);

  int num_variables() const override { return num_vars_; }
  int num_constraints() const override { return num_cons_; }
  void bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const override;
  void initial_guess(VecX& x) const override;
  double cost(const VecX& x, VecX* grad) override;
  void constraints(const VecX& x, VecX& g) override;
  void jacobian(const VecX& x, BlockSink& sink) override;
  std::string constraint_name(int i) const override;
  std::string variable_name(int j) const override;
  int stage_size() const override { return block_; }

  int num_steps() const override { return spec_.steps; }
  double time_step() const override { return spec_.dt; }
  void tables(const VecX& x, Table& states, Table& controls) const override;
  SceneInputs scene_inputs() const override { return {nu_, ns_}; }
  double resimulation_error(const VecX& x) const override;
  double min_clearance(const VecX& x) const override;

  const HolonomicOcpSpec<G>& spec() const { return spec_; }
  // Offsets of knot k's coordinates and of step k's velocity, controls, actuator angles.
  int coords_index(int k) const { return k * block_; }
  int xi_index(int k) const { return k * block_ + kNc; }
  int u_index(int k) const { return k * block_ + kNc + kNt; }
  int gamma_index(int k) const { return k * block_ + kNc + kNt + nu_; }
  int dt_index(int k) const { return k * block_ + kNc + kNt + nu_ + ns_; }  // free time only
  // The step of step k: dt_k with a free final time, else dt.
  double dt_at(const VecX& x, int k) const;

 private:
  typename Chart::Coords coords_at(const VecX& x, int k) const;
  Tangent xi_at(const VecX& x, int k) const;  // k = -1 gives xi_-1 (from dt_0)
  vehicle::StepInputs inputs_at(const VecX& x, int k) const;
  // Heading residual n_psi . R(q) e_x and its gradient in q (SE(3) only).
  double heading_residual(const VecX& x, Eigen::Matrix<double, 1, 4>* grad) const;

  HolonomicOcpSpec<G> spec_;
  int nu_ = 0, ns_ = 0, block_ = 0;
  int num_vars_ = 0, num_cons_ = 0;
  int step_rows_ = 0, equal_row0_ = 0, path_row0_ = 0, heading_row_ = -1;
  Tangent xi_m1_;
  typename Chart::Coords c0_, c_final_;
  PathTerms path_;
  vehicle::HolonomicResidual<G> res_;
};

extern template class HolonomicOcp<SE2>;
extern template class HolonomicOcp<SE3>;

}  // namespace marsden::control
