#include "marsden/vehicle/controls.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "marsden/error.hpp"

namespace marsden {

TableSignal::TableSignal(std::vector<double> times, std::vector<InputVec> values)
    : times_(std::move(times)), values_(std::move(values)) {
  if (times_.empty() || times_.size() != values_.size())
    throw InputError("table signal: 'times' and 'values' must be non-empty and of equal length");
  for (std::size_t i = 1; i < times_.size(); ++i) {
    if (!(times_[i] > times_[i - 1]))
      throw InputError("table signal: 'times' must be strictly increasing (entry " +
                       std::to_string(i) + ")");
    if (values_[i].size() != values_[0].size())
      throw InputError("table signal: 'values' entry " + std::to_string(i) +
                       " has a different size from entry 0");
  }
}

void TableSignal::eval(double t, InputVec& out) const {
  if (t <= times_.front()) {
    out = values_.front();
    return;
  }
  if (t >= times_.back()) {
    out = values_.back();
    return;
  }
  const auto it = std::upper_bound(times_.begin(), times_.end(), t);
  const std::size_t i = static_cast<std::size_t>(it - times_.begin());
  const double s = (t - times_[i - 1]) / (times_[i] - times_[i - 1]);
  out = (1.0 - s) * values_[i - 1] + s * values_[i];
}

SinusoidSignal::SinusoidSignal(InputVec offset, InputVec amplitude, InputVec frequency_hz,
                               InputVec phase)
    : offset_(std::move(offset)),
      amplitude_(std::move(amplitude)),
      frequency_hz_(std::move(frequency_hz)),
      phase_(std::move(phase)) {
  const auto n = offset_.size();
  if (amplitude_.size() != n || frequency_hz_.size() != n || phase_.size() != n)
    throw InputError("sinusoid signal: offset, amplitude, frequency_hz and phase differ in size");
}

void SinusoidSignal::eval(double t, InputVec& out) const {
  out.resize(offset_.size());
  for (Eigen::Index i = 0; i < offset_.size(); ++i)
    out[i] = offset_[i] +
             amplitude_[i] * std::sin(2.0 * std::numbers::pi * frequency_hz_[i] * t + phase_[i]);
}

}  // namespace marsden
