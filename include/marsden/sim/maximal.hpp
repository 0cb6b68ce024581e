// Mechanisms in maximal coordinates (maximal/) as a sim::System: maximal::step, one step
// length at a time. A step retried in substeps by the driver keeps the momentum balance
// exact: the rotational momentum a step carries in is the previous interval's
// (maximal::Data::last_dt).
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "marsden/maximal/integrator.hpp"
#include "marsden/sim/system.hpp"
#include "marsden/sim/signal.hpp"

namespace marsden::sim {

struct MaximalSetup {
  std::shared_ptr<const maximal::Model> model;
  std::vector<maximal::BodyState> state0;  // consistent with the joints at t = 0
  maximal::StepOptions step;               // Newton options and solver; dt is the driver's
  // Actuated one-degree-of-freedom joints (indices into model->joints()): component i of
  // `controls` is the generalised force on joint input_joints[i]'s coordinate (N m for a
  // revolute joint, N for a prismatic one), applied at the node t_k like gravity.
  std::vector<int> input_joints;
  std::shared_ptr<const Signal> controls;  // input_joints.size() components, or null
  // Motors (MJCF <motor>), one per input joint, or none: input i's force is then
  // gear * u_i, u_i clamped to [lower, upper] (MuJoCo's ctrlrange); without, u_i itself.
  struct Motor {
    double gear = 1.0;  // N m or N per unit of control
    double lower = -std::numeric_limits<double>::infinity();
    double upper = std::numeric_limits<double>::infinity();
  };
  std::vector<Motor> motors;
  // {prescribed joint's name (Joint::prescribed): its displacement from its coordinate at
  // state0 as a 1-component signal of time (rad or m)}; the prescribed joints not named are
  // held. Each step from t_k imposes the path's value at t_k+1.
  std::map<std::string, std::shared_ptr<const Signal>> prescribed;
};

// Columns t, per body NAME_x, _y, _z, _qw, _qx, _qy, _qz, then energy,
// constraint_violation and u0.. (one per actuated joint), and with contacts contact_force
// (the sum of the normal forces over the last step, N), penetration (the deepest contact's
// depth, m, 0 when none), active_contacts, complementarity ((m/s)^2) and
// contact_iterations (the last step's), and with velocity constraints their forces
// (velocity_force_columns, N), and per prescribed joint NAME_drive, the force that drove it
// (maximal::Data::drive_force, N m or N); arrays position (bodies x 3), quaternion (bodies x 4),
// energy, constraint_violation, controls, the contact columns, velocity_force and drive_force. A failed
// step reports code "not_converged", "angular_rate_limit", "non_finite", "singular" or
// "constraint_undefined". Throws InputError when the
// state does not match the mechanism, an input joint is not a one-degree-of-freedom joint
// or the controls' size does not match.
std::unique_ptr<System> make_maximal_system(const MaximalSetup& setup);

// The output columns of the velocity constraints' forces, one per row in
// Topology::velocity_constraint order: NAME_force, or NAME_force0 and NAME_force1 for the
// two rows of a wheel or a ball (NAME: velocity<index> for an unnamed constraint).
std::vector<std::string> velocity_force_columns(const maximal::Model& model);

}  // namespace marsden::sim
