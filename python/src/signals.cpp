// Input signals s(t) in R^n (any n >= 1) from Python: constants, tables (linear
// interpolation or a zero-order hold), sinusoids and Python callables. Each integrator
// samples a signal where its quadrature needs it (docs/scene.md, Signals).
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "marsden/error.hpp"
#include "marsden/sim/signal.hpp"
#include "module.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

// Vectors cross as sequences (lists, tuples, numpy arrays).
using Values = std::vector<double>;

Eigen::VectorXd input_vec(const Values& v, const char* name) {
  if (v.empty())
    throw InputError(std::string(name) + ": a signal has at least one component, got 0");
  const Eigen::VectorXd out = Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size()));
  if (!out.allFinite()) throw InputError(std::string(name) + ": NaN or infinite entries");
  return out;
}

std::shared_ptr<sim::Signal> held(std::shared_ptr<sim::Signal> s, const std::string& hold) {
  if (hold == "sampled") return s;
  if (hold == "zero_order") return std::make_shared<sim::HeldSignal>(std::move(s));
  throw InputError("hold: expected \"sampled\" or \"zero_order\", got \"" + hold + "\"");
}

// A Python callable f(t) -> n numbers, evaluated with the GIL held (the driver releases it
// while it runs). A result of the wrong size or with NaN is an InputError naming t; an
// exception raised by f propagates to the caller of simulate.
class CallableSignal final : public sim::Signal {
 public:
  CallableSignal(nb::callable f, int size) : f_(std::move(f)), size_(size) {}
  ~CallableSignal() override {
    nb::gil_scoped_acquire acquire;
    f_.reset();
  }
  int size() const override { return size_; }
  void eval(double t, std::span<double> out) const override {
    nb::gil_scoped_acquire acquire;
    Values v;
    if (!nb::try_cast(f_(t), v) || v.size() != static_cast<std::size_t>(size_) ||
        !Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size())).allFinite())
      throw InputError("signal: the callable returned something other than " +
                       std::to_string(size_) + " finite numbers at t = " + std::to_string(t));
    std::copy(v.begin(), v.end(), out.begin());
  }

 private:
  nb::object f_;
  int size_;
};

// What a signal is: its kind (its class) and size; a constant's value.
std::string signal_repr(const sim::Signal& s) {
  const std::string components = count_text(s.size(), "component");
  if (const auto* held = dynamic_cast<const sim::HeldInput*>(&s)) {
    const Eigen::VectorXd& u = held->value();
    return "HeldInput(" + count_text(u.size(), "input") + ", value " +
           list_text({u.data(), std::size_t(u.size())}) + ")";
  }
  if (dynamic_cast<const sim::ConstantSignal*>(&s) != nullptr) {
    Eigen::VectorXd value;
    sim::eval_into(s, 0.0, value);
    return "Signal.constant(" + list_text({value.data(), std::size_t(value.size())}) + ")";
  }
  std::string kind;
  if (dynamic_cast<const sim::TableSignal*>(&s) != nullptr) kind = "table, ";
  if (dynamic_cast<const sim::SinusoidSignal*>(&s) != nullptr) kind = "sinusoid, ";
  if (dynamic_cast<const CallableSignal*>(&s) != nullptr) kind = "function, ";
  return "Signal(" + kind + components +
         (s.zero_order_hold() ? ", held at each step's start" : "") + ")";
}

}  // namespace

void bind_signals(nb::module_ m) {
  nb::class_<sim::Signal>(m, "Signal",
                          "An input signal s(t) in R^n, n >= 1 (controls, shape inputs, "
                          "prescribed coordinates' displacements).")
      .def_prop_ro("size", &sim::Signal::size, "Components n of s(t).")
      .def_prop_ro("zero_order_hold", &sim::Signal::zero_order_hold,
                   "True when a step holds s at its value at the step's start (hold="
                   "\"zero_order\", HeldInput); False when the integrator samples s where "
                   "its quadrature needs it.")
      .def(
          "__call__",
          [](const sim::Signal& s, double t) -> Eigen::VectorXd {
            Eigen::VectorXd out;
            sim::eval_into(s, t, out);
            return out;
          },
          nb::arg("t"), "s(t) (n,).")
      .def("__repr__", &signal_repr)
      .def_static(
          "constant",
          [](const Values& value) -> std::shared_ptr<sim::Signal> {
            return std::make_shared<sim::ConstantSignal>(input_vec(value, "value"));
          },
          nb::arg("value"), "s(t) = value.")
      .def_static(
          "table",
          [](const Values& times, const std::vector<Values>& values,
             const std::string& hold) -> std::shared_ptr<sim::Signal> {
            if (values.size() != times.size())
              throw InputError("values: one row per time (" + std::to_string(times.size()) +
                               "), got " + std::to_string(values.size()));
            std::vector<Eigen::VectorXd> rows;
            for (const Values& row : values) rows.push_back(input_vec(row, "values"));
            return held(std::make_shared<sim::TableSignal>(times, rows), hold);
          },
          nb::arg("times"), nb::arg("values"), nb::arg("hold") = "sampled",
          "Piecewise-linear in time (s, strictly increasing; values (N, n)), held outside; "
          "hold=\"zero_order\" gives each step its value at the step's start.")
      .def_static(
          "sinusoid",
          [](const Values& offset, const Values& amplitude, const Values& frequency_hz,
             const std::optional<Values>& phase) -> std::shared_ptr<sim::Signal> {
            const Eigen::VectorXd o = input_vec(offset, "offset");
            if (amplitude.size() != offset.size() || frequency_hz.size() != offset.size() ||
                (phase && phase->size() != offset.size()))
              throw InputError("amplitude, frequency_hz, phase: as many entries as offset");
            return std::make_shared<sim::SinusoidSignal>(
                o, input_vec(amplitude, "amplitude"), input_vec(frequency_hz, "frequency_hz"),
                phase ? input_vec(*phase, "phase") : Eigen::VectorXd::Zero(o.size()).eval());
          },
          nb::arg("offset"), nb::arg("amplitude"), nb::arg("frequency_hz"),
          nb::arg("phase").none() = nb::none(),
          "offset + amplitude sin(2 pi frequency_hz t + phase), componentwise.")
      .def_static(
          "function",
          [](nb::callable f, int size, const std::string& hold) -> std::shared_ptr<sim::Signal> {
            if (size < 1)
              throw InputError("size: a signal has at least one component, got " +
                               std::to_string(size));
            return held(std::make_shared<CallableSignal>(std::move(f), size), hold);
          },
          nb::arg("f"), nb::arg("size"), nb::arg("hold") = "sampled",
          "A Python callable f(t) -> size numbers (called from the integrator, so at each "
          "quadrature point or stage time).");
  nb::class_<sim::HeldInput, sim::Signal>(
      m, "HeldInput",
      "Inputs held at a value set step by step (a zero-order hold): give it a system as its "
      "controls, then set() before each step (marsden.control.rollout does).")
      .def(nb::init<int>(), nb::arg("size"), "size inputs, held at zero until set().")
      .def(
          "set",
          [](sim::HeldInput& h, const Eigen::VectorXd& u) {
            h.set({u.data(), std::size_t(u.size())});
          },
          nb::arg("u"), "Holds u (size,) from now on; InputError when u has another size.")
      .def_prop_ro("value", &sim::HeldInput::value, "The value held (size,).");
}

}  // namespace marsden::python
