// Time-dependent inputs of a vehicle: controls u(t) and actuator (shape) angles gamma(t).
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

namespace marsden {

inline constexpr int kMaxInputs = 8;
// Fixed-capacity vector: sized at run time, stored inline, so steps never allocate.
using InputVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxInputs, 1>;

// A signal s(t) in R^n.
class Signal {
 public:
  virtual ~Signal() = default;
  virtual int size() const = 0;
  virtual void eval(double t, InputVec& out) const = 0;
  // True for a piecewise-constant input that a step holds at its start value s(t_k)
  // (e.g. DMOC's controls); false (the default) to sample s where the integrator's
  // quadrature needs it (sim::StepSignal).
  virtual bool zero_order_hold() const { return false; }
};

// The same signal, marked as a zero-order hold.
class HeldSignal final : public Signal {
 public:
  explicit HeldSignal(std::shared_ptr<const Signal> inner) : inner_(std::move(inner)) {}
  int size() const override { return inner_->size(); }
  void eval(double t, InputVec& out) const override { inner_->eval(t, out); }
  bool zero_order_hold() const override { return true; }

 private:
  std::shared_ptr<const Signal> inner_;
};

class ConstantSignal final : public Signal {
 public:
  explicit ConstantSignal(InputVec value) : value_(std::move(value)) {}
  int size() const override { return static_cast<int>(value_.size()); }
  void eval(double, InputVec& out) const override { out = value_; }

 private:
  InputVec value_;
};

// Piecewise-linear interpolation of a table, held constant outside [t_0, t_last].
class TableSignal final : public Signal {
 public:
  // times strictly increasing; values[i] has the same size for all i.
  TableSignal(std::vector<double> times, std::vector<InputVec> values);
  int size() const override { return static_cast<int>(values_.front().size()); }
  void eval(double t, InputVec& out) const override;

 private:
  std::vector<double> times_;
  std::vector<InputVec> values_;
};

// offset + amplitude * sin(2 pi frequency t + phase), componentwise (frequency in Hz,
// phase in rad).
class SinusoidSignal final : public Signal {
 public:
  SinusoidSignal(InputVec offset, InputVec amplitude, InputVec frequency_hz, InputVec phase);
  int size() const override { return static_cast<int>(offset_.size()); }
  void eval(double t, InputVec& out) const override;

 private:
  InputVec offset_, amplitude_, frequency_hz_, phase_;
};

}  // namespace marsden
