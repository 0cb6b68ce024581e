// The holonomic vehicles' methods behind one stepping interface (the variational integrator
// and the baselines), with the inputs sampled through VehicleInputs. This is the family's
// own layer: vehicles are run through the step contract, sim::make_vehicle_system
// (sim/vehicle.hpp), which drives a VehicleStepper.
#pragma once

#include <memory>
#include <string>

#include "marsden/vehicle/holonomic.hpp"

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

// The inputs of a vehicle as a step samples them. sample(t, in) writes the actuator angles
// gamma(t) and the controls u(t) into in.gamma and in.u, which the stepper has sized to the
// model's num_shape() and num_controls(); it is called where the method's quadrature needs
// the inputs (at the node t_k for the VI, at the stage times of the baselines). The
// simulation layer implements it over its signals (sim::make_vehicle_system).
class VehicleInputs {
 public:
  virtual ~VehicleInputs() = default;
  virtual void sample(double t, StepInputs& in) const = 0;
};

// Inputs constant in time: zero by default (a model without inputs, or one left unforced),
// or the given gamma and u, which must have the model's sizes (InputError otherwise, naming
// them).
class ConstantInputs final : public VehicleInputs {
 public:
  ConstantInputs() = default;
  ConstantInputs(const InputVec& gamma, const InputVec& u);
  void sample(double t, StepInputs& in) const override;

 private:
  bool zero_ = true;
  StepInputs value_;
};

// One method's stepping on a holonomic vehicle: the variational integrator or a baseline,
// with its histories. The family's layer under the step contract: scenes, the command line
// and Python run vehicles through sim::make_vehicle_system, which drives one of these.
template <class G>
class VehicleStepper {
 public:
  virtual ~VehicleStepper() = default;
  // Sets the state at t_0 and the step dt (> 0).
  virtual void reset(const VehicleState<G>& s0, double dt) = 0;
  // Advances by dt with the given inputs. Explicit methods report converged with 0
  // iterations; a non-finite state is reported as not converged and leaves the state
  // unchanged.
  virtual NewtonStatus step(const VehicleInputs& inputs) = 0;
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

// The VI options are used when method == VI; newton options also by RK2Implicit. Throws
// InputError when the model takes more than kMaxInputs controls or shape inputs.
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

}  // namespace marsden::vehicle
