// Baseline for the comparisons of the paper's Fig. 4 (a, b): the continuous equations of
// motion in maximal coordinates with the constraints imposed at the acceleration level
// only (index reduction, G a = -gamma), integrated by Heun's explicit method (RK2). It
// drifts off the constraints by construction; it is a reference, not an engine (it
// allocates). Forces: gravity and body forces/torques; springs and inputs are ignored.
#pragma once

#include <vector>

#include "marsden/maximal/model.hpp"

namespace marsden::maximal {

// World accelerations and body-frame angular accelerations at a continuous state (v the
// world velocity, omega the body angular velocity at that instant).
void constrained_accelerations(const Model& model, const std::vector<BodyState>& state,
                               std::vector<Vec3>& a, std::vector<Vec3>& omega_dot);

// One step of Heun's method on (x, q, v, omega); quaternions are renormalised.
void heun_step(const Model& model, std::vector<BodyState>& state, double dt);

}  // namespace marsden::maximal
