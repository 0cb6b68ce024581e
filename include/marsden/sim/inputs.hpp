// Inputs as a step samples them. A continuous signal is evaluated where the integrator's
// quadrature needs it: at t_k + alpha dt for a variational step whose forces act at its
// quadrature point (RDP, the tree midpoint VI), at the node t_k for one whose forces are
// nodal impulses (the holonomic VI, GNI, RATTLE), at the stage times of a Runge-Kutta
// step. A signal marked zero-order hold (Signal::zero_order_hold) gives its value at the
// step start t_k wherever it is asked, so piecewise-constant controls (DMOC's) are
// reproduced exactly. docs/scene.md, "Signals".
#pragma once

#include <memory>

#include "marsden/sim/signal.hpp"

namespace marsden::sim {

class StepSignal final : public Signal {
 public:
  explicit StepSignal(std::shared_ptr<const Signal> inner)
      : inner_(std::move(inner)), hold_(inner_ && inner_->zero_order_hold()) {}
  // The start of the step about to be taken.
  void begin_step(double t_k) { t_k_ = t_k; }
  int size() const override { return inner_->size(); }
  void eval(double t, std::span<double> out) const override {
    inner_->eval(hold_ ? t_k_ : t, out);
  }
  bool zero_order_hold() const override { return hold_; }
  // The signal itself, s(t) at any t (for output rows).
  const Signal& inner() const { return *inner_; }

 private:
  std::shared_ptr<const Signal> inner_;
  bool hold_;
  double t_k_ = 0.0;
};

}  // namespace marsden::sim
