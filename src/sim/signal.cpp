#include "marsden/sim/signal.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "marsden/error.hpp"

namespace marsden::sim {

void HeldInput::set(std::span<const double> u) {
  if (u.size() != std::size_t(u_.size()))
    throw InputError("held input: expected " + std::to_string(u_.size()) +
                     " values (one per input), got " + std::to_string(u.size()));
  std::copy(u.begin(), u.end(), u_.data());
}

ConstantSignal::ConstantSignal(Eigen::VectorXd value) : value_(std::move(value)) {}

void ConstantSignal::eval(double, std::span<double> out) const {
  std::copy(value_.data(), value_.data() + value_.size(), out.begin());
}

TableSignal::TableSignal(std::vector<double> times, const std::vector<Eigen::VectorXd>& values)
    : times_(std::move(times)) {
  if (times_.empty() || times_.size() != values.size())
    throw InputError("table signal: 'times' and 'values' must be non-empty and of equal length");
  values_.resize(values[0].size(), static_cast<Eigen::Index>(values.size()));
  for (std::size_t i = 0; i < times_.size(); ++i) {
    if (i > 0 && !(times_[i] > times_[i - 1]))
      throw InputError("table signal: 'times' must be strictly increasing (entry " +
                       std::to_string(i) + ")");
    if (values[i].size() != values_.rows())
      throw InputError("table signal: 'values' entry " + std::to_string(i) +
                       " has a different size from entry 0");
    values_.col(static_cast<Eigen::Index>(i)) = values[i];
  }
}

void TableSignal::eval(double t, std::span<double> out) const {
  Eigen::Map<Eigen::VectorXd> v(out.data(), values_.rows());
  if (t <= times_.front()) {
    v = values_.col(0);
    return;
  }
  if (t >= times_.back()) {
    v = values_.col(values_.cols() - 1);
    return;
  }
  const auto it = std::upper_bound(times_.begin(), times_.end(), t);
  const std::size_t i = static_cast<std::size_t>(it - times_.begin());
  const double s = (t - times_[i - 1]) / (times_[i] - times_[i - 1]);
  const auto c = static_cast<Eigen::Index>(i);
  v = (1.0 - s) * values_.col(c - 1) + s * values_.col(c);
}

SinusoidSignal::SinusoidSignal(Eigen::VectorXd offset, Eigen::VectorXd amplitude,
                               Eigen::VectorXd frequency_hz, Eigen::VectorXd phase,
                               double until)
    : offset_(std::move(offset)),
      amplitude_(std::move(amplitude)),
      frequency_hz_(std::move(frequency_hz)),
      phase_(std::move(phase)),
      until_(until) {
  const auto n = offset_.size();
  if (amplitude_.size() != n || frequency_hz_.size() != n || phase_.size() != n)
    throw InputError("sinusoid signal: offset, amplitude, frequency_hz and phase differ in size");
  if (std::isnan(until_)) throw InputError("sinusoid signal: until is NaN");
}

void SinusoidSignal::eval(double t, std::span<double> out) const {
  t = std::min(t, until_);
  for (Eigen::Index i = 0; i < offset_.size(); ++i)
    out[std::size_t(i)] = offset_[i] + amplitude_[i] * std::sin(2.0 * std::numbers::pi *
                                                                 frequency_hz_[i] * t + phase_[i]);
}

}  // namespace marsden::sim
