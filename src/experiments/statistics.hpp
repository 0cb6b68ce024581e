// Small statistics shared by the experiments. Private to the library.
#pragma once

#include <vector>

namespace marsden::experiments {

// Least-squares slope of log(err) against log(dt): the observed order of convergence.
double fitted_order(const std::vector<double>& dt, const std::vector<double>& err);

double geometric_mean(const std::vector<double>& v);

}  // namespace marsden::experiments
