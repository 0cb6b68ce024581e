// Internal to the vehicle family: the holonomic vehicles' methods (the variational
// integrator and the baselines) behind one stepping interface, with the inputs sampled
// through VehicleInputs. Not installed: vehicles are run through the step contract,
// sim::make_vehicle_system (sim/vehicle.hpp), which drives a VehicleStepper; the family's
// tests, benchmark and the rigid-body experiment use it directly.
#pragma once

#include <memory>

#include "marsden/vehicle/holonomic.hpp"
#include "marsden/vehicle/method.hpp"

namespace marsden::vehicle {

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

}  // namespace marsden::vehicle
