// The methods that run a holonomic vehicle (the variational integrator and the baselines)
// and the state every method reports: what sim::HolonomicSetup (sim/vehicle.hpp) names. The
// stepping behind them is the family's own (src/vehicle/stepper.hpp); vehicles run through
// the step contract, sim::make_vehicle_system.
#pragma once

#include <string>

namespace marsden::vehicle {

// Pose and body velocity at time t, as every method reports it.
template <class G>
struct VehicleState {
  double t = 0.0;
  G g = G::identity();
  typename G::Tangent xi = G::Tangent::Zero();
};

enum class Method {
  VI,           // discrete Euler-Poincare, vehicles eqs. (9)-(10)
  RK2,          // Heun on eqs. (7)-(8)
  RK2Implicit,  // implicit midpoint on eq. (8), explicit reconstruction of eq. (7)
  RK4,          // classical RK4, quaternion (SE(3)) normalised after every stage
  LieNewmark    // explicit Lie-Newmark (Krysl and Endres) on the whole group
};

Method parse_method(const std::string& name);  // throws InputError
std::string method_name(Method m);

}  // namespace marsden::vehicle
