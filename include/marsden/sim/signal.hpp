// Inputs of time: signals s(t) in R^n, any n (controls, actuator angles, the
// displacements of prescribed coordinates). A signal writes its value into the caller's
// buffer, sized once, so that sampling it inside a step allocates nothing whatever n is.
// Each adapter samples its signals where its integrator's quadrature needs them
// (sim/inputs.hpp; docs/scene.md, "Signals").
#pragma once

#include <algorithm>
#include <limits>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <Eigen/Core>

namespace marsden::sim {

// A signal s(t) in R^n.
class Signal {
 public:
  virtual ~Signal() = default;
  virtual int size() const = 0;
  // Writes s(t) into out; out.size() == size().
  virtual void eval(double t, std::span<double> out) const = 0;
  // True for a piecewise-constant input that a step holds at its start value s(t_k)
  // (e.g. DMOC's controls); false (the default) to sample s where the integrator's
  // quadrature needs it (sim::StepSignal).
  virtual bool zero_order_hold() const { return false; }
};

// s(t) into v, resized to s.size(). A VectorXd already of that size, or a fixed-capacity
// vector large enough (checked by its owner), is filled without allocation.
template <class Derived>
void eval_into(const Signal& s, double t, Eigen::PlainObjectBase<Derived>& v) {
  v.resize(s.size());
  s.eval(t, std::span<double>(v.data(), static_cast<std::size_t>(v.size())));
}

// The same signal, marked as a zero-order hold.
class HeldSignal final : public Signal {
 public:
  explicit HeldSignal(std::shared_ptr<const Signal> inner) : inner_(std::move(inner)) {}
  int size() const override { return inner_->size(); }
  void eval(double t, std::span<double> out) const override { inner_->eval(t, out); }
  bool zero_order_hold() const override { return true; }

 private:
  std::shared_ptr<const Signal> inner_;
};

// An input held at a value its owner sets: the same at every t until the next set(), a
// zero-order hold. The controls of a system whose inputs are chosen step by step (a
// feedback loop, a linearisation, a rollout of given inputs).
class HeldInput final : public Signal {
 public:
  explicit HeldInput(int n) : u_(Eigen::VectorXd::Zero(n)) {}
  int size() const override { return static_cast<int>(u_.size()); }
  void eval(double, std::span<double> out) const override {
    std::copy(u_.data(), u_.data() + u_.size(), out.begin());
  }
  bool zero_order_hold() const override { return true; }
  // Throws InputError when u does not have size() entries. Does not allocate.
  void set(std::span<const double> u);
  const Eigen::VectorXd& value() const { return u_; }

 private:
  Eigen::VectorXd u_;
};

// s(t) = value (of size 0 for a system without inputs).
class ConstantSignal final : public Signal {
 public:
  explicit ConstantSignal(Eigen::VectorXd value);
  int size() const override { return static_cast<int>(value_.size()); }
  void eval(double t, std::span<double> out) const override;

 private:
  Eigen::VectorXd value_;
};

// Piecewise-linear interpolation of a table, held constant outside [t_0, t_last].
class TableSignal final : public Signal {
 public:
  // times strictly increasing; values[i] has the same size for all i. Throws InputError
  // naming the entry otherwise.
  TableSignal(std::vector<double> times, const std::vector<Eigen::VectorXd>& values);
  int size() const override { return static_cast<int>(values_.rows()); }
  void eval(double t, std::span<double> out) const override;

 private:
  std::vector<double> times_;
  Eigen::MatrixXd values_;  // (n x times), column i the value at times_[i]
};

// offset + amplitude * sin(2 pi frequency t + phase), componentwise (frequency in Hz,
// phase in rad), for t <= until, then held at its value at `until` (a steering stroke: one
// period, then straight). Throws InputError for sizes that differ or an `until` that is NaN.
class SinusoidSignal final : public Signal {
 public:
  SinusoidSignal(Eigen::VectorXd offset, Eigen::VectorXd amplitude,
                 Eigen::VectorXd frequency_hz, Eigen::VectorXd phase,
                 double until = std::numeric_limits<double>::infinity());
  int size() const override { return static_cast<int>(offset_.size()); }
  void eval(double t, std::span<double> out) const override;

 private:
  Eigen::VectorXd offset_, amplitude_, frequency_hz_, phase_;
  double until_;
};

}  // namespace marsden::sim
