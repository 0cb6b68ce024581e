// The inputs of a holonomic or RDP vehicle: controls u and actuator (shape) angles gamma,
// each at most kMaxInputs long, a bound of the vehicle models (the built-in ones take at
// most two of each; a generated model with more is refused where it is loaded, a C++ model
// where a stepper is made for it). Signals of time, of any size, are sim/signal.hpp's.
#pragma once

#include <Eigen/Core>

namespace marsden::vehicle {

inline constexpr int kMaxInputs = 8;
// Fixed-capacity vector: sized at run time, stored inline, so steps never allocate.
using InputVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxInputs, 1>;

}  // namespace marsden::vehicle
