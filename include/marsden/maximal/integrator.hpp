// The variational integrator of the maximal-coordinates paper (§3, §4). One step solves
// f(s) = 0 for s = (v_kp1, omega_kp1 of every body; lambda and damper force mu of every
// joint; the multiplier of every velocity constraint row, docs/maximal.md), the stacked
// discrete equations of motion (26), (33) and the joint constraints imposed on the next
// configuration (x_kp1 + dt v, q_kp1 from eq. (32)), by Newton's method with a
// backtracking line search. Each Newton system is solved by the sparse block LDU of
// Algorithms 3 and 4 in O(n) on a tree; loop-closing joints are eliminated by a Schur
// complement on their few rows (rank-revealing, so redundant loop constraints such as a
// planar four-bar closed by a full revolute are handled; see docs/maximal.md).
//
// Forces: gravity, body forces/torques and joint springs are evaluated at the current
// configuration (the discrete Lagrangian L_d = dt (T(v_k) - V(x_k))). A joint damper is
// implicit: its force mu = -c ds(x_k) . (v, omega)_kp1 is one more unknown of the step, a
// row of its joint's node, so the step stays stable when the damping time constant is
// shorter than dt, and the Newton system keeps its tree structure.
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "marsden/maximal/model.hpp"
#include "marsden/solve/newton.hpp"

namespace marsden::maximal {

enum class LinearSolver { SparseLDU, DenseLU };

struct StepOptions {
  double dt = 0.01;
  // Converged when every residual row, scaled to a velocity (translational rows by
  // dt / m, rotational rows by dt / J_max, constraint rows g / dt), is <= tolerance.
  // The factors of the first iterate are kept while each iteration cuts the residual at
  // least fourfold (reuse_jacobian): on a chain, one factorisation and three solves per
  // step instead of two of each (20% fewer instructions at 50 links). Consecutive steps
  // start from an extrapolation of the last solutions, corrected by one iteration with
  // the last step's factors (the predictor, counted in NewtonStatus::iterations): on
  // chains up to 200 links, two solves and one factorisation per step.
  NewtonOptions newton{1e-10, 50, true, true};
  LinearSolver solver = LinearSolver::SparseLDU;
  // Relative threshold below which pivots of the loop Schur complement count as zero
  // (redundant loop constraints).
  double loop_rank_tolerance = 1e-10;
  // Contact (Model::contact_points; docs/contact.md): the step is converged when, besides
  // the tolerance above on every residual row and on each contact's gap-rate and slip rows
  // (m/s), every complementarity product (impulse / (m / dt) times gap rate or slip speed)
  // is <= complementarity_tolerance ((m/s)^2): a body resting on its contacts then hovers
  // dt * complementarity_tolerance / (|g| dt / points) above them, and one held by
  // friction creeps at about complementarity_tolerance / (|g| dt / points) m/s.
  double complementarity_tolerance = 1e-12;
  // Where a contact slides, the cone's Jordan product's second part (zero on the central
  // path) is z0 y0 times the angle between the friction and the slip's opposite: that angle
  // is to be within friction_angle_tolerance (rad), beyond which the part counts against
  // the tolerance above.
  double friction_angle_tolerance = 1e-10;
  // Compliance eps of the contacts (dimensionless): a contact point sinks dt eps gamma, its
  // impulse gamma over the body's m / dt, so the surface acts as a spring of stiffness
  // m / (eps dt^2) (1e10 N/m for 1 kg at dt = 0.01 s). It makes unique the load sharing
  // that rigid bodies leave indeterminate (the four corners of a box face); 0 is rigid, and
  // then the step may fail to converge on such contacts (docs/contact.md).
  double contact_compliance = 1e-6;
  // Fraction of the way to the boundary of the positive orthant and cones that an
  // interior-point iteration may go, at least; it tends to 1 as the mean complementarity
  // product falls (1 - mean, in (m/s)^2).
  double fraction_to_boundary = 0.99;
  // Relaxation kappa ((m/s)^2) of the contacts' complementarity, for derivatives through
  // contact (docs/contact.md, Derivatives through contact): above 0, every candidate
  // contact is in the step's solve and the step stops on the central path, each product
  // gamma sigma and z o y equal to kappa (to complementarity_tolerance), where the step is a
  // smooth function of the state and inputs; 0 (the default) is hard contact.
  double contact_relaxation = 0.0;
};

enum class StepFailure {
  None,
  NotConverged,     // Newton stopped on max_iterations above tolerance
  AngularRateLimit, // |omega| dt >= 2: eq. (32) has no unit quaternion; use a smaller dt
  NonFinite,        // non-finite state, force or input (or a contact solve that left the
                    // interior: the unknowns of docs/contact.md)
  Singular,         // the Newton matrix is singular: a degenerate body (Model::degenerate_rows)
                    // that its joints do not determine
  ConstraintUndefined,  // a velocity constraint has no rows at the state: a rolling wheel
                        // lying flat on its ground
};

const char* describe(StepFailure failure);

struct StepStatus {
  NewtonStatus newton;  // with contacts: the interior point's iterations and residual
  StepFailure failure = StepFailure::None;
  int active_contacts = 0;       // candidate contacts in the step's solve
  double complementarity = 0.0;  // the largest complementarity residual ((m/s)^2)
  int impacts = 0;               // impacts with restitution timed inside the step
  bool ok() const { return failure == StepFailure::None; }
};

struct Workspace;

// A candidate contact after the last step (Model::contact_points, same order): the force
// the surface exerts on the body over the step (N, world: its impulse / dt), normal and
// tangential parts, and the gap phi at the new pose (m); zero force where the contact was
// not in the step's solve (its point was farther than it could travel in one step). A
// step split by impacts (docs/contact.md, Impacts) reports the force of its last interval,
// and each pair's impact: its impulse along the normal (N s) and time (s).
struct ContactState {
  Vec3 force = Vec3::Zero();
  double normal_force = 0.0;
  Vec3 friction_force = Vec3::Zero();
  double phi = 0.0;
  bool active = false;
  double impulse = 0.0;       // 0: no impact in the step
  double impact_time = 0.0;   // when impulse > 0
};

// Mutable simulation data: state (pose at t_k and velocity of the interval ending at
// t_k), inputs, and the preallocated solver workspace (no allocation inside step()).
class Data {
 public:
  explicit Data(const Model& model);
  Data(const Model& model, std::vector<BodyState> state);
  Data(const Data& other);
  Data& operator=(const Data& other);
  Data(Data&&) noexcept;
  Data& operator=(Data&&) noexcept;
  ~Data();

  std::vector<BodyState> state;
  std::vector<Vec3> body_force;    // world frame, at the centre of mass
  std::vector<Vec3> body_torque;   // world frame
  std::vector<double> joint_input; // generalised force on a 1-dof joint's coordinate
  std::vector<ContactState> contact;  // per Model::contact_points, after the last step
  // Per joint limit (Topology::limit_joint, limit_side): the generalised force it exerted on
  // its joint's coordinate over the last step (N m or N; its impulse / dt), positive pushing
  // the coordinate up.
  std::vector<double> limit_force;
  // Per velocity constraint row (Topology::velocity_constraint, velocity_row): the force it
  // exerted on its body in the last step (N), at the step's start as the step's other forces
  // act: the row's multiplier, along the row's
  // direction (velocity.hpp: a skate's blocked direction; a wheel's rolling direction, then
  // the ground's other direction; a ball's two ground directions), A^T mu on the body.
  std::vector<double> velocity_force;
  // Per joint, used for the prescribed ones (Joint::prescribed): the coordinate the next step
  // imposes at its end t_k+1 (rad or m; an angle is matched modulo 2 pi). The constructors
  // set it to the coordinate at the given state, so a prescribed joint holds until set.
  std::vector<double> joint_target;
  // Per joint, for the prescribed ones: the generalised force that drove the coordinate
  // along its path over the last step (N m or N; the row's multiplier), acting at t_k as
  // joint_input does; 0 for the others.
  std::vector<double> drive_force;
  double time = 0.0;
  long steps = 0;
  // Length of the interval that ended at the current state (0: none yet, then the next
  // step's dt is used). The rotational momentum carried into a step is the previous
  // interval's, so changing dt (or a subdivided step) keeps the momentum balance exact.
  double last_dt = 0.0;

  Workspace& workspace() { return *workspace_; }
  const Workspace& workspace() const { return *workspace_; }

 private:
  std::unique_ptr<Workspace> workspace_;
};

// Advances data by one step of options.dt. On failure the state is left unchanged and the
// status says why; nothing returned is NaN. A failed step is retried in substeps by
// sim::simulate (sim/maximal.hpp), with the momentum carried exactly across the change of
// step (Data::last_dt).
StepStatus step(const Model& model, Data& data, const StepOptions& options);

// Continuous energy at the current state: kinetic (velocities of the last interval),
// gravity and joint springs.
double energy(const Model& model, const std::vector<BodyState>& state);
Vec3 linear_momentum(const Model& model, const std::vector<BodyState>& state);
// About the world origin, world frame: the integrator's discrete momentum map (from the
// Legendre transform of the discrete Lagrangian, with dt the length of the interval that
// ended at the state: Data::last_dt), which it conserves exactly when no
// external torque acts; it differs from sum x x m v + R J omega by O(dt).
Vec3 angular_momentum(const Model& model, const std::vector<BodyState>& state, double dt);
// How far the deepest contact of the last step is through its surface beyond what the step
// allows (m; <= 0 when none is): dt times the tolerance on its gap-rate row plus its
// compliance's sink, eps dt^2 F / m (StepOptions::contact_compliance, F its normal force,
// m its body's mass scale). -inf without contacts.
double excess_penetration(const Model& model, const Data& data, const StepOptions& options);
// Largest |g| over all joints at the given state.
double max_constraint_violation(const Model& model, const std::vector<BodyState>& state);

// The discrete residual of one step and its Jacobian blocks (docs/architecture.md: the
// residual that simulation, optimal control and linearisation share), dense, at the
// unknowns s (system_size(model): v and omega of every body, then per joint its lambda and
// its damper's force, and the velocity constraints' multipliers at
// Topology::velocity_index) and the state of data (poses and velocities at t_k, last_dt, body
// forces, joint inputs):
//   r          (n)              f(s) of eqs. (26), (33), g(x_kp1) / dt, the damper rows
//                               s_dot + mu / c and the velocity rows, unscaled
//   J_r_s      (n x n)          the Newton Jacobian
//   J_r_state  (n x 12 bodies)  w.r.t. each body's (dx, dphi, dv, domega) at t_k, in the
//                               chart of retract_state
//   J_r_u      (n x joints)     w.r.t. each joint's input (zero for joints without one dof)
// Throws SolverError when some |omega| >= 2 / dt (eq. (32) has no solution), InputError for
// a model with contacts or limits (relaxed_residual_blocks below has the contacts' rows).
// Allocates.
struct ResidualBlocks {
  Eigen::VectorXd r;
  Eigen::MatrixXd J_r_s, J_r_state, J_r_u;
};
int system_size(const Model& model);
void residual_blocks(const Model& model, const Data& data, double dt, const Eigen::VectorXd& s,
                     ResidualBlocks& out);
// Contact at relaxation kappa ((m/s)^2; docs/contact.md, Derivatives through contact): the
// blocks above with every candidate contact's unknowns z and rows appended, for a model
// with contacts but no joint limits or restitution (InputError otherwise). z, per candidate
// (Model::contact_points order), in m/s: gamma, sigma, then with friction (mu > 0) b (2),
// psi, eta (2); rows: e1, c1, then with friction e2 (2), c2 (3) (contact_rows.hpp), with
// compliance eps in e1. The body rows take the impulses -(m / dt) (N gamma + D b); J_r_s is
// w.r.t. (s, z). Allocates.
int contact_unknowns_size(const Model& model);
void relaxed_residual_blocks(const Model& model, const Data& data, double dt, double kappa,
                             double compliance, const Eigen::VectorXd& s,
                             const Eigen::VectorXd& z, ResidualBlocks& out);
// The residual alone (no Jacobians).
Eigen::VectorXd residual(const Model& model, const Data& data, double dt,
                         const Eigen::VectorXd& s);
// The state moved by delta (12 per body): x + dx, q exp(dphi), v + dv, omega + domega.
std::vector<BodyState> retract_state(const std::vector<BodyState>& state,
                                     const Eigen::VectorXd& delta);
// Phi of eq. (32)'s rotation update q_kp1 = q_k f(omega): a change domega of the step's
// angular velocity turns q_kp1 by dphi = dt Phi domega (a right perturbation). Requires
// |omega| < 2 / dt.
Mat3 rotation_update_map(const Vec3& omega, double dt);

// Access to one Newton system for tests and benchmarks (these allocate).
namespace inspect {
// The solution of F(s) x = rhs by the sparse block LDU (with loop Schur complement).
Eigen::VectorXd sparse_solve(const Model& model, Data& data, const StepOptions& options,
                             const Eigen::VectorXd& s, const Eigen::VectorXd& rhs);
// The last velocities and multipliers: the next step's starting point unless it
// extrapolates from the last solutions (after solved steps at one dt).
Eigen::VectorXd warm_start(const Model& model, const Data& data);
// The contact unknowns z of the last step (relaxed_residual_blocks' layout), when every
// candidate was in its solve (StepOptions::contact_relaxation > 0); InputError otherwise.
Eigen::VectorXd contact_unknowns(const Model& model, const Data& data);
// One Newton iteration's linear algebra only (assemble, factor, solve), for timing.
void newton_system_solve(const Model& model, Data& data, const StepOptions& options);
}  // namespace inspect

}  // namespace marsden::maximal
