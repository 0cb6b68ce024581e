// Checks shared by the families' set_state (sim/system.hpp): sizes, finiteness and unit
// quaternions, each failure an InputError naming the family and the entry.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "marsden/lie/types.hpp"

namespace marsden::sim {

// Throws unless x has names.size() entries, all finite.
void check_state(std::string_view family, const std::vector<std::string>& names,
                 std::span<const double> x);

// The quaternion at x[at..at+3] (w, x, y, z), normalised unless its norm is already 1 to
// round-off (so that a state read back sets the same bits); throws when it is zero.
Vec4 state_quaternion(std::string_view family, const std::vector<std::string>& names,
                      std::span<const double> x, int at);

// The state last set, reported by get_state until a step moves it: for families whose
// carried variables are not the state's (a momentum for a velocity, a rotation matrix for
// a quaternion), so that a state read back and set again reads back to the same bits.
class LastSetState {
 public:
  void set(std::span<const double> x) {
    x_.assign(x.begin(), x.end());
    fresh_ = true;
  }
  void moved() { fresh_ = false; }
  // Copies the state last set into x and returns true while no step has moved it.
  bool get(std::span<double> x) const {
    if (!fresh_) return false;
    std::copy(x_.begin(), x_.end(), x.begin());
    return true;
  }
  // For checkpoint and rollback.
  bool fresh() const { return fresh_; }
  void restore(bool fresh) { fresh_ = fresh && !x_.empty(); }

 private:
  std::vector<double> x_;
  bool fresh_ = false;
};

}  // namespace marsden::sim
