// The step contract every family speaks (docs/architecture.md). A System is one family's
// model, workspace (Data), state and inputs behind one interface, so that one driver
// (sim/simulate.hpp), the command line, bindings and sweeps can run any of them:
//
//   step(t_k, dt)        advance from t_k by dt; inputs are sampled where the
//                        integrator's quadrature needs them (the family's adapter knows)
//   checkpoint/rollback  keep and restore the state at the start of a step, so that a
//                        failed step can be retried in substeps; a family whose discrete
//                        state depends on the step length (a velocity of the last
//                        interval) carries its momentum exactly across the change
//   energy, momentum, constraint_violation, row   what the driver records
//   residual             the discrete residual the step solves, with its Jacobian blocks
//                        (implicit methods): what optimal control and linearisation use
//   get_state/set_state  the state a step advances, as a vector with named entries, and
//                        its tangent chart (state_difference, state_integrate), as MuJoCo's
//                        mj_getState/mj_setState and Crocoddyl's StateAbstract
//
// A virtual interface rather than a concept: the driver, the file writers and the Python
// bindings are compiled once, not once per family, and a virtual call per step is noise
// next to a step (docs/architecture.md).
#pragma once

#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace marsden::sim {

// What one step (or one attempt at it) did.
struct StepStatus {
  bool converged = true;  // false: the step failed and the state is that of its start
  int iterations = 0;     // Newton iterations (0 for explicit methods)
  double residual = 0.0;  // the solver's final residual norm (its own scaling)
  // Why the step failed, when not a plain Newton non-convergence (which residual and
  // iterations describe): e.g. "the state became NaN or infinite". Empty otherwise.
  std::string reason;
  // The same as a short machine-readable word ("not_converged", "non_finite",
  // "angular_rate_limit", ...), empty to let the driver choose "not_converged" or "error".
  const char* code = "";
};

// An .npz array gathered from the output row: rows x shape, its entries taken from the
// row's columns in row-major order.
struct ArrayLayout {
  std::string name;
  std::vector<std::size_t> shape;  // per row: {} (a scalar per row), {3}, {bodies, 4} ...
  std::vector<int> columns;        // product(shape) column indices into the row
};

// The output row: CSV columns (time first) and how the .npz groups them.
struct Layout {
  std::vector<std::string> columns;
  std::vector<ArrayLayout> arrays;

  // Appends columns named prefix + each suffix and an array of them (shape {n}, or {} for
  // a single unnamed suffix) and returns the first column's index.
  int add(const std::string& array, const std::vector<std::string>& names,
          std::vector<std::size_t> shape);
};

// prefix0, prefix1, ..., prefix(n-1): column names of an input vector.
std::vector<std::string> numbered(const std::string& prefix, int n);

// A point of the discrete residual of the step from the current state at t_k,
// R(z; x_k (+) delta, u) = 0: z the step's unknowns, delta a tangent perturbation of the
// state at t_k in the family's chart (a right perturbation g exp(delta) on a Lie group, an
// increment on a vector), u the step's inputs as the family samples them.
struct ResidualPoint {
  Eigen::VectorXd z, delta, u;
};

// R and its Jacobians d R / d z, d R / d delta (at delta = 0) and d R / d u; a block a
// family does not provide has no columns.
struct ResidualBlocks {
  Eigen::VectorXd r;
  Eigen::MatrixXd J_r_z, J_r_state, J_r_u;
};

// The tangent chart of a state layout (System::state_difference): size entries, unit
// quaternions (w, x, y, z) starting at the entries listed, in increasing order. A value, so
// that a controller can keep the chart of the system it drives.
struct StateChart {
  int size = 0;
  std::vector<int> quaternions;
  int tangent_size() const { return size - int(quaternions.size()); }
  // dx = y (-) x and y = x (+) dx as System::state_difference and state_integrate. Throw
  // InputError on sizes; do not allocate.
  void difference(std::span<const double> x, std::span<const double> y,
                  std::span<double> dx) const;
  void integrate(std::span<const double> x, std::span<const double> dx,
                 std::span<double> y) const;
};

class System {
 public:
  virtual ~System() = default;

  virtual const Layout& layout() const = 0;
  // Keeps the current state as the start of a step; rollback() returns to it.
  virtual void checkpoint() = 0;
  virtual void rollback() = 0;
  // Advances the state from time t_k by dt > 0. On failure (converged == false) the state
  // may be anywhere: the driver rolls back.
  virtual StepStatus step(double t_k, double dt) = 0;

  // Total energy of the current state, J (kinetic plus potential, as the family defines).
  virtual double energy() const = 0;
  // A momentum the dynamics conserve, where a symmetry gives one (size 0 otherwise).
  virtual int momentum_size() const { return 0; }
  virtual void momentum(std::span<double> out) const { (void)out; }
  // Largest constraint violation at the current state (families with constraints).
  virtual bool has_constraint() const { return false; }
  virtual double constraint_violation() const { return 0.0; }
  // The output row of the current state at time t (layout().columns.size() values).
  virtual void row(double t, std::span<double> out) const = 0;

  // The state (docs/architecture.md, "State"): the configuration and velocities a step
  // advances, as state_size() numbers named by state_names() (units there). Unit
  // quaternions (w, x, y, z) start at the entries state_quaternions() lists; every other
  // entry is a coordinate of a vector space. get_state writes the current state.
  // set_state makes x the current state and restarts the integrator from it as a scene's
  // initial state would: what a step keeps of the past (a velocity or momentum of the last
  // interval, a Newton warm start) is derived anew from x, so the steps that follow depend
  // on x alone, as from a fresh system. It throws InputError naming the entry for a wrong
  // size, a value that is not finite, a zero quaternion or a configuration off the
  // family's holonomic constraints; a nonzero quaternion is normalised. Both allocate
  // nothing the step needs; set_state may allocate.
  virtual int state_size() const = 0;
  virtual std::vector<std::string> state_names() const = 0;
  virtual std::span<const int> state_quaternions() const { return {}; }
  virtual void get_state(std::span<double> x) const = 0;
  virtual void set_state(std::span<const double> x) = 0;
  // The tangent chart of the state: state_size() less one per quaternion. dx = y (-) x is
  // y - x on vector entries and, for a quaternion, the rotation vector
  // log(q_x^-1 q_y) of the shorter way round (|dphi| <= pi; a right perturbation, as the
  // residual's delta); state_integrate is its inverse, y = x (+) dx, with q_y = q_x exp(dphi).
  // Neither allocates.
  int tangent_size() const { return state_size() - int(state_quaternions().size()); }
  StateChart state_chart() const;
  void state_difference(std::span<const double> x, std::span<const double> y,
                        std::span<double> dx) const;
  void state_integrate(std::span<const double> x, std::span<const double> dx,
                       std::span<double> y) const;

  // The step map x_kp1 = F(x_k, u_k) linearised at the current state, in the state chart:
  // A = dF/dx (tangent_size square), B = dF/du (tangent_size x inputs), for the step from
  // t_k of length dt with the inputs held at u_k over the step (a zero-order hold, as under
  // Feedback), and x_k (+) dx set by set_state. Exact (the implicit-function theorem on the
  // converged step, chained with the maps between the state and what the step carries)
  // where has_step_derivatives(); otherwise the call throws std::logic_error and
  // control::linearize differences the step map. Does not change the state; allocates.
  // Throws SolverError when the step does not converge.
  virtual bool has_step_derivatives() const { return false; }
  virtual void step_derivatives(double t_k, double dt, std::span<const double> u_k,
                                Eigen::MatrixXd& A, Eigen::MatrixXd& B) const;

  // Implicit steps (the variational integrators) expose their residual; explicit methods
  // do not, and the two calls below then throw std::logic_error. Both allocate.
  virtual bool has_residual() const { return false; }
  // The step from t_k of length dt as the family starts it: its Newton guess for z,
  // delta = 0 and the sampled inputs.
  virtual ResidualPoint residual_point(double t_k, double dt) const;
  // R at the point; with jacobians, also the blocks (at delta = 0 only: the Jacobians of R
  // are taken at the current state).
  virtual void residual(double t_k, double dt, const ResidualPoint& at, ResidualBlocks& out,
                        bool jacobians) const;
};

}  // namespace marsden::sim
