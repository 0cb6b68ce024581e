// Registration functions of the built-in experiments, one per experiment file.
#pragma once

#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"

namespace marsden::experiments {

void register_rigid_body_accuracy();

}  // namespace marsden::experiments
