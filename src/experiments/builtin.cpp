#include "experiments/builtin.hpp"

namespace marsden::experiments {

// Every experiment shipped with the library is registered here, explicitly; the registry
// calls this once on first use, so no experiment depends on static initialisation order.
void register_builtin_experiments() {
  register_rigid_body_accuracy();
  register_car_accuracy();
  register_nonholonomic_comparison();
  register_tree_scaling();
  register_tree_energy();
  register_maximal_experiments();
  register_dmoc_vehicles();
  register_robot_zoo();
  register_closed_loop();
  register_contact();
  register_model_suites();
  register_nonholonomic_maximal();
}

}  // namespace marsden::experiments
