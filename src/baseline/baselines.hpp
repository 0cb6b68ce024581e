// Baseline integrators on the continuous equations (7)-(8) of vehicles §4.1, behind the
// VehicleStepper interface. Private to the vehicle family; reached through make_stepper.
#pragma once

#include <memory>

#include "vehicle/stepper.hpp"

namespace marsden::vehicle::baseline {

// The inputs at t, sized to the model's: gamma(t) and u(t).
template <class G>
void sample_inputs(const HolonomicModel<G>& model, const VehicleInputs& inputs, double t,
                   StepInputs& in) {
  in.gamma.resize(model.num_shape());
  in.u.resize(model.num_controls());
  inputs.sample(t, in);
}

// Heun (order 2) or classical RK4; on SE(3) the pose is (unit quaternion, position) and the
// quaternion is normalised after every stage, as in vehicles §3.3.
template <class G>
std::unique_ptr<VehicleStepper<G>> make_explicit_rk(std::shared_ptr<const HolonomicModel<G>> model,
                                                    int order);

// Implicit midpoint on the dynamics (8) solved by Newton, then Heun on the
// reconstruction (7) with the old and new velocities.
template <class G>
std::unique_ptr<VehicleStepper<G>> make_implicit_midpoint(
    std::shared_ptr<const HolonomicModel<G>> model, const NewtonOptions& newton);

// Explicit Lie-Newmark (Krysl and Endres 2005) extended from SO(3) to the whole group:
//   xi_k+1/2 = xi_k + dt/2 a(g_k, xi_k),   g_k+1 = g_k exp(dt xi_k+1/2),
//   xi_k+1 = xi_k+1/2 + dt/2 a(g_k+1, xi_k+1/2 + dt/2 a_k).
template <class G>
std::unique_ptr<VehicleStepper<G>> make_lie_newmark(std::shared_ptr<const HolonomicModel<G>> model);

}  // namespace marsden::vehicle::baseline
