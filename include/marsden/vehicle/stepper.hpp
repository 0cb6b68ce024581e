// One stepping interface for the variational integrator and the baselines, so that any
// experiment or scene can swap methods.
#pragma once

#include <memory>
#include <string>

#include "marsden/vehicle/holonomic.hpp"

namespace marsden {

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

template <class G>
class VehicleStepper {
 public:
  virtual ~VehicleStepper() = default;
  // Sets the state at t_0 and the step dt (> 0).
  virtual void reset(const VehicleState<G>& s0, double dt) = 0;
  // Advances by dt. gamma and u may be null for a model without shape or controls.
  // Explicit methods report converged with 0 iterations; a non-finite state is reported as
  // not converged and leaves the state unchanged.
  virtual NewtonStatus step(const Signal* gamma, const Signal* u) = 0;
  // Sets the time of the current state (where the next step samples its inputs), so that a
  // driver's t_0 + k dt is the time, not a running sum of steps.
  virtual void set_time(double t) = 0;
  virtual VehicleState<G> state() const = 0;
  // Keep the whole internal state (histories included) and return to it: a step retried
  // with the same dt after restore() repeats the kept one to the bit.
  virtual void save() = 0;
  virtual void restore() = 0;
  // The variational integrator's velocity of the last interval, xi_k-1 (vehicles eq. (10)),
  // for its residual; null for the other methods and before the first reset().
  virtual const typename G::Tangent* velocity_km1() const { return nullptr; }
  double dt() const { return dt_; }

 protected:
  double dt_ = 0.0;
};

// The VI options are used when method == VI; newton options also by RK2Implicit.
template <class G>
std::unique_ptr<VehicleStepper<G>> make_stepper(Method method,
                                                std::shared_ptr<const HolonomicModel<G>> model,
                                                const HolonomicOptions<G>& options);

// Continuous forced Euler-Poincare equations, vehicles eq. (8):
// I xi_dot = ad_xi^T I xi + F(gamma) u + f_ext(t, g, xi).
template <class G>
typename G::Tangent euler_poincare_rhs(const HolonomicModel<G>& model, double t, const G& g,
                                       const typename G::Tangent& xi, const InputVec& gamma,
                                       const InputVec& u);

// Kinetic plus potential energy.
template <class G>
double vehicle_energy(const HolonomicModel<G>& model, const G& g, const typename G::Tangent& xi);

}  // namespace marsden
