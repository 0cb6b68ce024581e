// Input signals s(t) in R^n (any n >= 1) from Python: constants, tables (linear
// interpolation or a zero-order hold), sinusoids and Python callables. Each integrator
// samples a signal where its quadrature needs it (docs/scene.md, Signals).
#include <algorithm>
#include <cmath>
#include <limits>
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

// A signal made by one of Signal's factories, with the factory's name and arguments, so
// that pickle and copy make it again (docs/python.md, "Copies and pickles"). The arguments
// are Python objects: released with the GIL held, as the driver may drop a signal in a
// thread of its own.
class Remembered final : public sim::Signal {
 public:
  Remembered(std::shared_ptr<sim::Signal> inner, std::string factory, nb::tuple args)
      : inner_(std::move(inner)), factory_(std::move(factory)), args_(std::move(args)) {}
  ~Remembered() override {
    nb::gil_scoped_acquire acquire;
    args_.reset();
  }
  int size() const override { return inner_->size(); }
  void eval(double t, std::span<double> out) const override { inner_->eval(t, out); }
  bool zero_order_hold() const override { return inner_->zero_order_hold(); }
  const std::string& factory() const { return factory_; }
  nb::tuple reduce() const {
    return nb::make_tuple(nb::module_::import_("marsden._pickle").attr("signal"),
                          nb::make_tuple(factory_, args_));
  }

 private:
  std::shared_ptr<sim::Signal> inner_;
  std::string factory_;
  nb::tuple args_;
};

std::shared_ptr<sim::Signal> remembered(std::shared_ptr<sim::Signal> inner, const char* factory,
                                        nb::tuple args) {
  return std::make_shared<Remembered>(std::move(inner), factory, std::move(args));
}

// What a signal is: its kind (the factory that made it) and size; a constant's value.
std::string signal_repr(const sim::Signal& s) {
  const std::string components = count_text(s.size(), "component");
  if (const auto* held = dynamic_cast<const sim::HeldInput*>(&s)) {
    const Eigen::VectorXd& u = held->value();
    return "HeldInput(" + count_text(u.size(), "input") + ", value " +
           list_text({u.data(), std::size_t(u.size())}) + ")";
  }
  const auto* made = dynamic_cast<const Remembered*>(&s);
  if (made != nullptr && made->factory() == "constant") {
    Eigen::VectorXd value;
    sim::eval_into(s, 0.0, value);
    return "Signal.constant(" + list_text({value.data(), std::size_t(value.size())}) + ")";
  }
  return "Signal(" + (made != nullptr ? made->factory() + ", " : std::string()) + components +
         (s.zero_order_hold() ? ", held at each step's start" : "") + ")";
}

// pickle's recipe of a signal: the factory and arguments that made it, or for a HeldInput
// its size and value. Others (the driver's own) refuse with a TypeError.
nb::tuple reduce_signal(const sim::Signal& s) {
  if (const auto* made = dynamic_cast<const Remembered*>(&s)) return made->reduce();
  if (const auto* held = dynamic_cast<const sim::HeldInput*>(&s)) {
    const Eigen::VectorXd& u = held->value();
    return nb::make_tuple(nb::module_::import_("marsden._pickle").attr("held_input"),
                          nb::make_tuple(held->size(), Values(u.data(), u.data() + u.size())));
  }
  throw nb::type_error("this signal was not made by a marsden.Signal factory and cannot be "
                       "pickled");
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
      .def("__reduce__", &reduce_signal,
           "Pickle and copy: the Signal factory and the arguments that made it (a function "
           "signal pickles only if its callable does); a HeldInput as its size and value.")
      .def_static(
          "constant",
          [](const Values& value) -> std::shared_ptr<sim::Signal> {
            return remembered(std::make_shared<sim::ConstantSignal>(input_vec(value, "value")),
                              "constant", nb::make_tuple(value));
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
            return remembered(held(std::make_shared<sim::TableSignal>(times, rows), hold), "table",
                              nb::make_tuple(times, values, hold));
          },
          nb::arg("times"), nb::arg("values"), nb::arg("hold") = "sampled",
          "Piecewise-linear in time (s, strictly increasing; values (N, n)), held outside; "
          "hold=\"zero_order\" gives each step its value at the step's start.")
      .def_static(
          "sinusoid",
          [](const Values& offset, const Values& amplitude, const Values& frequency_hz,
             const std::optional<Values>& phase, double until) -> std::shared_ptr<sim::Signal> {
            const Eigen::VectorXd o = input_vec(offset, "offset");
            if (amplitude.size() != offset.size() || frequency_hz.size() != offset.size() ||
                (phase && phase->size() != offset.size()))
              throw InputError("amplitude, frequency_hz, phase: as many entries as offset");
            return remembered(
                std::make_shared<sim::SinusoidSignal>(
                    o, input_vec(amplitude, "amplitude"), input_vec(frequency_hz, "frequency_hz"),
                    phase ? input_vec(*phase, "phase") : Eigen::VectorXd::Zero(o.size()).eval(),
                    until),
                "sinusoid", nb::make_tuple(offset, amplitude, frequency_hz, phase, until));
          },
          nb::arg("offset"), nb::arg("amplitude"), nb::arg("frequency_hz"),
          nb::arg("phase").none() = nb::none(),
          nb::arg("until") = std::numeric_limits<double>::infinity(),
          "offset + amplitude sin(2 pi frequency_hz t + phase), componentwise, up to time "
          "until (s), then held at its value there.")
      .def_static(
          "function",
          [](nb::callable f, int size, const std::string& hold) -> std::shared_ptr<sim::Signal> {
            if (size < 1)
              throw InputError("size: a signal has at least one component, got " +
                               std::to_string(size));
            nb::tuple args = nb::make_tuple(f, size, hold);
            return remembered(held(std::make_shared<CallableSignal>(std::move(f), size), hold),
                              "function", std::move(args));
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
          [](sim::HeldInput& h, const Values& u) { h.set(u); },
          nb::arg("u"), "Holds u (size,) from now on; InputError when u has another size.")
      .def_prop_ro("value", &sim::HeldInput::value, "The value held (size,).");
}

}  // namespace marsden::python
