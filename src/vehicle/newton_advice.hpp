// Internal: what a failed Newton solve of a vehicle's step should advise.
#pragma once

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <Eigen/Eigenvalues>

namespace marsden::detail {

// Beyond this condition number of the inertia (the kinetic metric in the step's unknowns),
// Newton's linear systems keep fewer than half of a double's digits.
inline constexpr double kIllConditionedInertia = 1e8;

// Advice for a step whose Newton solve failed with this residual, from the inertia in the
// step's unknowns (symmetric): a residual that is not finite means values overflowed; a
// near-singular inertia is named with its condition number, since a smaller step would not
// cure it; else a smaller dt (or subdivision).
inline std::string newton_advice(double residual, const Eigen::MatrixXd& inertia) {
  if (!std::isfinite(residual))
    return "the residual is not finite: the state or the inputs overflowed (bound the "
           "controls, check the initial state)";
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (inertia + inertia.transpose()),
                                                            Eigen::EigenvaluesOnly);
  const Eigen::VectorXd abs = eig.eigenvalues().cwiseAbs();
  const double largest = abs.maxCoeff(), smallest = abs.minCoeff();
  if (eig.info() == Eigen::Success && largest > 0.0 &&
      !(smallest * kIllConditionedInertia >= largest)) {
    std::ostringstream msg;
    msg << "the inertia is near-singular (eigenvalues from " << smallest << " to " << largest
        << ", condition number " << (smallest > 0.0 ? largest / smallest : std::numeric_limits<double>::infinity())
        << "): give every direction a mass or inertia well above round-off of the largest; "
           "a smaller dt will not cure it";
    return msg.str();
  }
  return "reduce dt (or let integrator.on_failure \"subdivide\" the step)";
}

}  // namespace marsden::detail
