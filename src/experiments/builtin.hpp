// Registration functions of the built-in experiments, one per experiment file.
#pragma once

#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"

namespace marsden::experiments {

void register_rigid_body_accuracy();
void register_car_accuracy();
void register_nonholonomic_comparison();
void register_tree_scaling();
void register_tree_energy();
void register_maximal_experiments();
void register_dmoc_vehicles();
void register_robot_zoo();

}  // namespace marsden::experiments
