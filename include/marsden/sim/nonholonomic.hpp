// The nonholonomic vehicles on SE(2) (the car, vehicles §5.2.1; the snakeboard, §5.2.2;
// the Chaplygin sleigh) as a sim::System, with the RDP integrator (vehicle/rdp.hpp), the
// car's explicit RDP update, GNI and RATTLE in full coordinates (nonholonomic/) and RK4 on
// the continuous equations. Planar pose (theta, x, y).
#pragma once

#include <memory>
#include <string>

#include "marsden/sim/system.hpp"
#include "marsden/solve/newton.hpp"
#include "marsden/vehicle/car_params.hpp"
#include "marsden/vehicle/controls.hpp"
#include "marsden/vehicle/rdp.hpp"
#include "marsden/vehicle/rdp_models.hpp"

namespace marsden::sim {

enum class NonholonomicVehicle { Car, Snakeboard, Sleigh };

enum class NonholonomicMethod {
  Rdp,          // reduced d'Alembert-Pontryagin on SE(2) (vehicle/rdp.hpp), any vehicle
  RdpExplicit,  // the car's explicit RDP update (tau = exp)
  Gni,          // geometric nonholonomic integrator in full coordinates (sleigh, snakeboard)
  Rattle,       // nonholonomic RATTLE in full coordinates (sleigh, snakeboard)
  Rk4           // classical RK4 on the continuous equations
};
std::string method_name(NonholonomicMethod m);  // "rdp", "rdp_explicit", "gni", ...

struct NonholonomicSetup {
  NonholonomicVehicle vehicle = NonholonomicVehicle::Car;
  NonholonomicMethod method = NonholonomicMethod::Rdp;
  double alpha = 0.5;  // RDP quadrature point
  DiffMap map = DiffMap::Cay;
  TangentMap tangent = TangentMap::TLN;
  NewtonOptions newton;
  CarParams car;
  SnakeboardParams snakeboard;
  SleighParams sleigh;
  bool prescribe_shape = false;  // snakeboard: controls are shape rates, not torques
  // Initial state: pose, shape r_0 (car: psi, sigma; snakeboard: psi, phi), shape
  // velocities (those not prescribed by the controls) and, for the sleigh and the
  // snakeboard, the body velocity components they take as data.
  double theta = 0.0, x = 0.0, y = 0.0;  // rad, m, m
  ShapeVec shape = ShapeVec::Zero(0);
  ShapeVec shape_velocity = ShapeVec::Zero(0);
  double omega = 0.0;  // sleigh: rad/s
  double v1 = 0.0;     // sleigh, snakeboard: body forward velocity, m/s
  // Car: rear-wheel torque f_psi [N m], steering rate u_sigma [1/s]; snakeboard: rotor and
  // steering torques [N m] or, with prescribe_shape, their rates [rad/s]; sleigh: none.
  std::shared_ptr<const Signal> controls;
};

int num_shape(NonholonomicVehicle v);     // 2, 2, 0
int num_controls(NonholonomicVehicle v);  // 2, 2, 0

// Columns t, theta, x, y, the shape and its rates (car: psi, sigma; snakeboard: psi, phi),
// omega, v1, v2 (body velocity), energy, constraint_violation, u0..; arrays pose, shape,
// shape_velocity, body_velocity, energy, constraint_violation, controls. Throws InputError
// for a method the vehicle does not have or sizes that do not match, SolverError when the
// initial state cannot be set up.
std::unique_ptr<System> make_nonholonomic_system(const NonholonomicSetup& setup);

}  // namespace marsden::sim
