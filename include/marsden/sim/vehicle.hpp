// The holonomic vehicles as a sim::System: on SE(3) (rigid body, helicopter, boat, generated)
// and on SE(2) (generated planar vehicles); any method of vehicle/method.hpp, controls
// u(t) and rotor or actuator angles gamma(t).
#pragma once

#include <memory>

#include "marsden/sim/system.hpp"
#include "marsden/sim/signal.hpp"
#include "marsden/vehicle/holonomic.hpp"
#include "marsden/vehicle/method.hpp"

namespace marsden::sim {

template <class G>
struct HolonomicSetup {
  std::shared_ptr<const vehicle::HolonomicModel<G>> model;
  vehicle::Method method = vehicle::Method::VI;
  vehicle::HolonomicOptions<G> options;    // map, tangent and Newton options
  vehicle::VehicleState<G> initial_state;  // pose and body velocity at t_0
  std::shared_ptr<const Signal> controls;  // null when the model has none
  std::shared_ptr<const Signal> shape;     // null when the model has none
  bool conserves_momentum = false;         // free body: report the spatial momentum
};

using VehicleSetup = HolonomicSetup<SE3>;
using PlanarVehicleSetup = HolonomicSetup<SE2>;

// SE(3): columns t, x, y, z, qw, qx, qy, qz, wx, wy, wz, vx, vy, vz, energy, u0.., gamma0..;
// arrays position, quaternion, angular_velocity, linear_velocity, energy, controls, shape.
// SE(2): columns t, theta, x, y, omega, v1, v2, energy, u0.., gamma0.. (theta the heading,
// unwrapped along the run; (x, y) the world position; omega, (v1, v2) the body velocity);
// arrays pose (theta, x, y), body_velocity (omega, v1, v2), energy, controls, shape, as the
// nonholonomic vehicles on SE(2) name them.
// Throws InputError when a signal's size does not match the model.
std::unique_ptr<System> make_vehicle_system(const VehicleSetup& setup);
std::unique_ptr<System> make_vehicle_system(const PlanarVehicleSetup& setup);

}  // namespace marsden::sim
