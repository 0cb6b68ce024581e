// Checks of the weights of LQ problems (control/lqr.cpp, control/ilqr.cpp): an InputError
// naming the caller and the matrix for a wrong size, a non-finite entry, asymmetry or a
// matrix that is not positive (semi)definite.
#pragma once

#include <string>

#include <Eigen/Core>

namespace marsden::control {

void check_weight(const Eigen::MatrixXd& M, Eigen::Index n, const std::string& where,
                  const char* name, bool definite);

}  // namespace marsden::control
