// Registration functions of the built-in experiments, one per experiment file.
#pragma once

#include <string>

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
void register_closed_loop();
void register_contact();

// s as one word of a POSIX shell command, in single quotes.
std::string shell_quote(const std::string& s);
// The shell words that start the Python of the package's modules (python -m marsden.X):
// python3, with the build's copy of the package first on PYTHONPATH when there is one, so
// that experiments work before `pip install .`.
std::string python_command();

}  // namespace marsden::experiments
