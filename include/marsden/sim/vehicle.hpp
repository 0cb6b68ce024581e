// The holonomic vehicles on SE(3) (rigid body, helicopter, boat) as a sim::System: any
// method of vehicle/stepper.hpp, controls u(t) and rotor or actuator angles gamma(t).
#pragma once

#include <memory>

#include "marsden/sim/system.hpp"
#include "marsden/vehicle/controls.hpp"
#include "marsden/vehicle/stepper.hpp"

namespace marsden::sim {

struct VehicleSetup {
  std::shared_ptr<const HolonomicModel<SE3>> model;
  Method method = Method::VI;
  HolonomicOptions<SE3> options;           // map, tangent and Newton options
  VehicleState<SE3> initial_state;         // pose and body velocity at t_0
  std::shared_ptr<const Signal> controls;  // null when the model has none
  std::shared_ptr<const Signal> shape;     // null when the model has none
  bool conserves_momentum = false;         // free body: report the spatial momentum
};

// Columns t, x, y, z, qw, qx, qy, qz, wx, wy, wz, vx, vy, vz, energy, u0.., gamma0..;
// arrays position, quaternion, angular_velocity, linear_velocity, energy, controls, shape.
// Throws InputError when a signal's size does not match the model.
std::unique_ptr<System> make_vehicle_system(const VehicleSetup& setup);

}  // namespace marsden::sim
