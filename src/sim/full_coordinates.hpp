// The GNI and RATTLE steps and residuals on a state (q, p) in full coordinates, as both
// systems that run them use them: the built-in sleigh and snakeboard (nonholonomic.cpp) and
// the generated models (generated_nonholonomic.cpp). Internal header.
#pragma once

#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/sim/nonholonomic.hpp"
#include "marsden/sim/system.hpp"

namespace marsden::sim::detail {

// Where the step from t_k takes the controls: GNI applies them as an impulse at the node
// t_k; RATTLE's two half-kicks dt/2 B u share u at the midpoint, so that its impulse over
// the step is second order under varying controls (at t_k it was first order).
double full_control_time(NonholonomicMethod method, double t_k, double dt);

// The state of a run in full coordinates between steps: q, the momentum p (GNI: p+), and
// the last step's dt (GNI's impulse dt B u_k covers [t_k - dt_prev/2, t_k + dt/2]: weighted
// for the first step, dt_prev = 0, and after a change of step size).
struct FullCoordinateState {
  nonholonomic::NhVec q, p;
  double dt_prev = 0.0;
};

// One GNI or RATTLE step with controls u (at full_control_time) and, where the model
// prescribes coordinates, their values at t_k+1; q_kp1 holds the guess on entry. On
// convergence the state advances.
NewtonStatus full_coordinate_step(const nonholonomic::NonholonomicModel& model,
                                  NonholonomicMethod method, const NewtonOptions& newton, double dt,
                                  const nonholonomic::NhVec& u,
                                  const nonholonomic::NhVec* q_prescribed_kp1,
                                  nonholonomic::NhVec q_kp1, FullCoordinateState& state);

// The step's residual at z (GNI: q_k+1; RATTLE: (q_k+1, lambda_k)), with its Jacobian in z.
// InputError naming `who` when z has the wrong size or a state perturbation is given.
void full_coordinate_residual(const nonholonomic::NonholonomicModel& model,
                              NonholonomicMethod method, const FullCoordinateState& state,
                              double dt, const nonholonomic::NhVec& u,
                              const nonholonomic::NhVec* q_prescribed_kp1, const ResidualPoint& at,
                              ResidualBlocks& out, bool jacobians, const char* who);

}  // namespace marsden::sim::detail
