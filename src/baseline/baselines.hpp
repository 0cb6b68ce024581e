// Baseline integrators on the continuous equations (7)-(8) of vehicles §4.1, behind the
// VehicleStepper interface. Private to the library; reached through make_stepper.
#pragma once

#include <memory>

#include "marsden/vehicle/stepper.hpp"

namespace marsden::baseline {

// Evaluates gamma(t) and u(t); a missing signal gives zeros of the model's size.
template <class G>
void eval_inputs(const HolonomicModel<G>& model, const Signal* gamma, const Signal* u, double t,
                 StepInputs& in) {
  if (gamma) {
    gamma->eval(t, in.gamma);
  } else {
    in.gamma.setZero(model.num_shape());
  }
  if (u) {
    u->eval(t, in.u);
  } else {
    in.u.setZero(model.num_controls());
  }
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

}  // namespace marsden::baseline
