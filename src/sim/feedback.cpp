#include "marsden/sim/feedback.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "marsden/error.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/sim/system.hpp"

namespace marsden::sim {

Feedback::Feedback(std::shared_ptr<Controller> controller, int inputs, std::vector<double> lower,
                   std::vector<double> upper)
    : controller_(std::move(controller)), lower_(std::move(lower)), upper_(std::move(upper)) {
  if (!controller_) throw InputError("feedback: no controller");
  if (inputs < 1)
    throw InputError("feedback: the system takes " + std::to_string(inputs) +
                     " inputs; a controller drives at least one");
  const auto n = std::size_t(inputs);
  const double inf = std::numeric_limits<double>::infinity();
  if (lower_.empty()) lower_.assign(n, -inf);
  if (upper_.empty()) upper_.assign(n, inf);
  if (lower_.size() != n || upper_.size() != n)
    throw InputError("feedback: limits need one lower and one upper value per input (" +
                     std::to_string(n) + "), got " + std::to_string(lower_.size()) + " and " +
                     std::to_string(upper_.size()));
  for (std::size_t i = 0; i < n; ++i)
    if (std::isnan(lower_[i]) || std::isnan(upper_[i]) || lower_[i] > upper_[i])
      throw InputError("feedback: the limits of input u" + std::to_string(i) + " are [" +
                       number_text(lower_[i]) + ", " + number_text(upper_[i]) +
                       "]; they must be numbers with lower <= upper");
  held_ = std::make_shared<HeldInput>(inputs);
  u_.assign(n, 0.0);
  saved_ = u_;
}

void Feedback::update(double t_k, const System& system) {
  x_.resize(std::size_t(system.state_size()));
  system.get_state(x_);
  std::fill(u_.begin(), u_.end(), 0.0);
  controller_->control(t_k, x_, u_);
  for (std::size_t i = 0; i < u_.size(); ++i) {
    if (!std::isfinite(u_[i]))
      throw InputError("feedback: the controller returned u" + std::to_string(i) + " = " +
                       number_text(u_[i]) + " at t = " + time_text(t_k));
    u_[i] = std::clamp(u_[i], lower_[i], upper_[i]);
  }
  held_->set(u_);
}

std::shared_ptr<const Signal> Feedback::signal() const { return held_; }

void Feedback::save() { saved_ = u_; }

void Feedback::restore() {
  u_ = saved_;
  held_->set(u_);
}

std::span<const double> Feedback::value() const { return u_; }

}  // namespace marsden::sim
