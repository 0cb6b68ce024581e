#include "experiments/statistics.hpp"

#include <cmath>

namespace marsden::experiments {

double fitted_order(const std::vector<double>& dt, const std::vector<double>& err) {
  const double n = static_cast<double>(dt.size());
  double mx = 0.0, my = 0.0;
  for (std::size_t i = 0; i < dt.size(); ++i) {
    mx += std::log(dt[i]);
    my += std::log(err[i]);
  }
  mx /= n;
  my /= n;
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t i = 0; i < dt.size(); ++i) {
    sxy += (std::log(dt[i]) - mx) * (std::log(err[i]) - my);
    sxx += (std::log(dt[i]) - mx) * (std::log(dt[i]) - mx);
  }
  return sxy / sxx;
}

double geometric_mean(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

}  // namespace marsden::experiments
