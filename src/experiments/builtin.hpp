// Registration functions of the built-in experiments, one per experiment file.
#pragma once

#include <filesystem>
#include <string>

#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"
#include "marsden/run/python.hpp"

namespace marsden::experiments {

void register_rigid_body_accuracy();
void register_car_accuracy();
void register_nonholonomic_comparison();
void register_nonholonomic_maximal();
void register_tree_scaling();
void register_tree_energy();
void register_maximal_experiments();
void register_dmoc_vehicles();
void register_robot_zoo();
void register_closed_loop();
void register_contact();
void register_model_suites();

// The build's copy of the Python package, for run::PythonOptions::package_dir when an
// experiment runs the package's modules (python -m marsden.X), so that they work before
// `pip install .`; empty where the library was built without one.
std::filesystem::path python_package_dir();
// Why a Python run did not succeed, in words: "cannot start PYTHON: ...", "exit status N",
// "ended by signal N".
std::string run_failure(const run::PythonRun& r);

}  // namespace marsden::experiments
