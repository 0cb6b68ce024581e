// Inputs that feed back: a controller u = pi(t, x) of the state (sim/system.hpp), called by
// the driver (sim::simulate) once per step with the state at its start t_k and held over
// the step (a zero-order hold: every quadrature point of the step sees u_k). A substep of
// a subdivided step calls it at the substep's start. Limits saturate each input.
// docs/architecture.md, "Feedback".
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "marsden/sim/signal.hpp"

namespace marsden::sim {

class System;

class Controller {
 public:
  virtual ~Controller() = default;
  // Writes u_k = pi(t_k, x_k); x_k in the system's state layout (System::state_names),
  // u_k sized as the system's inputs. May throw; simulate() then ends, keeping its rows.
  virtual void control(double t_k, std::span<const double> x_k, std::span<double> u_k) = 0;
};

// Closes the loop between a controller and one system: give signal() to the system as its
// controls, and the Feedback to simulate() in RunOptions::feedback.
class Feedback {
 public:
  // inputs: the system's number of inputs. lower/upper: per input, or empty for none
  // (-inf/+inf entries allowed). Throws InputError for sizes that do not match, lower >
  // upper, NaN limits or inputs < 1.
  Feedback(std::shared_ptr<Controller> controller, int inputs, std::vector<double> lower = {},
           std::vector<double> upper = {});

  // The held input u_k, a zero-order-hold signal (its value does not depend on t).
  std::shared_ptr<const Signal> signal() const;

  // u_k = clamp(pi(t_k, x_k)) for the system's current state, held from now on. Throws
  // InputError naming the input and t when the controller returns NaN or infinity. Does not
  // allocate after the first call.
  void update(double t_k, const System& system);
  // The held value and its copy kept for a retried step (the driver's checkpoint).
  void save();
  void restore();
  std::span<const double> value() const;

 private:
  std::shared_ptr<Controller> controller_;
  std::shared_ptr<HeldInput> held_;
  std::vector<double> lower_, upper_, x_, u_, saved_;
};

}  // namespace marsden::sim
