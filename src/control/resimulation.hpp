// Internal: the guard of every transcription's re-simulation (Ocp::resimulation_error).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "marsden/error.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::control::detail {

// The re-simulated state after step `step` (ending at time t) must be finite. Otherwise a
// SolverError names the entry that became non-finite (names[i], the states table's column),
// the step and time, and the entry's last finite value (previous, the state at t_previous),
// instead of a re-simulation error of inf (or a NaN that std::max would hide).
inline void check_resimulated(const Eigen::Ref<const Eigen::VectorXd>& state,
                              const Eigen::Ref<const Eigen::VectorXd>& previous,
                              const std::vector<std::string>& names, int step, double t,
                              double t_previous) {
  if (state.allFinite()) return;
  Eigen::Index i = 0;
  while (std::isfinite(state[i])) ++i;
  const std::string name = static_cast<std::size_t>(i) < names.size()
                               ? names[static_cast<std::size_t>(i)]
                               : "state[" + std::to_string(i) + "]";
  throw SolverError("re-simulation: " + name + " became " + number_text(state[i]) +
                    " at step " + std::to_string(step) + " (t = " + number_text(t) +
                    " s); its last finite value was " + number_text(previous[i]) +
                    " at t = " + number_text(t_previous) +
                    " s. The solution's controls or step lengths drive the simulator out of "
                    "range: bound them (bounds.controls, final_time) or take more steps");
}

// The largest difference (max norm) between the re-simulated state after step `step`
// (ending at time t) and the solution's state at that knot. A difference that is not
// finite (a solution holding 1e308 against a finite simulation) is a SolverError naming the
// entry and both values, instead of a re-simulation error of inf.
inline double resimulation_difference(const Eigen::Ref<const Eigen::VectorXd>& simulated,
                                      const Eigen::Ref<const Eigen::VectorXd>& solution,
                                      const std::vector<std::string>& names, int step, double t) {
  double largest = 0.0;
  for (Eigen::Index i = 0; i < simulated.size(); ++i) {
    const double d = std::abs(simulated[i] - solution[i]);
    if (!std::isfinite(d)) {
      const std::string name = static_cast<std::size_t>(i) < names.size()
                                   ? names[static_cast<std::size_t>(i)]
                                   : "state[" + std::to_string(i) + "]";
      throw SolverError("re-simulation: after step " + std::to_string(step) + " (t = " +
                        number_text(t) + " s) " + name + " is " +
                        number_text(simulated[i]) + " in the re-simulation and " +
                        number_text(solution[i]) + " in the solution; their difference " +
                        "is not finite. The solution is no trajectory of the system: start "
                        "from a guess nearer one (initial_guess, --warm-start)");
    }
    largest = std::max(largest, d);
  }
  return largest;
}

}  // namespace marsden::control::detail
