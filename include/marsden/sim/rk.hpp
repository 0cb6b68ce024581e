// The explicit Runge-Kutta steps every family's baselines and references use, generic
// over the state: y' = f(t, y) with f returning the tangent dy (an Eigen vector), and
// retract(y, dy) moving y along dy (y + dy on a vector space; a chart step followed by
// normalisation on a group). Stage times are t + c_i dt, so time-dependent inputs sampled
// inside f are taken where the method needs them (sim/inputs.hpp).
#pragma once

#include <type_traits>

namespace marsden::sim {

enum class RungeKutta {
  Midpoint2,  // explicit midpoint, order 2: k2 at t + dt/2
  Heun2,      // Heun (explicit trapezoid), order 2: k2 at t + dt
  Classic4    // classical RK4, order 4
};

// y + dy, for states on a vector space.
struct VectorRetract {
  template <class Y, class DY>
  Y operator()(const Y& y, const DY& dy) const {
    return Y(y + dy);
  }
};

template <class Y, class F, class Retract = VectorRetract>
Y rk_step(RungeKutta method, double t, double dt, const Y& y, F&& f, Retract&& retract = {}) {
  using DY = std::decay_t<decltype(f(t, y))>;
  const DY k1 = f(t, y);
  switch (method) {
    case RungeKutta::Midpoint2: {
      const DY k2 = f(t + 0.5 * dt, retract(y, DY(0.5 * dt * k1)));
      return retract(y, DY(dt * k2));
    }
    case RungeKutta::Heun2: {
      const DY k2 = f(t + dt, retract(y, DY(dt * k1)));
      return retract(y, DY(0.5 * dt * (k1 + k2)));
    }
    case RungeKutta::Classic4:
      break;
  }
  const DY k2 = f(t + 0.5 * dt, retract(y, DY(0.5 * dt * k1)));
  const DY k3 = f(t + 0.5 * dt, retract(y, DY(0.5 * dt * k2)));
  const DY k4 = f(t + dt, retract(y, DY(dt * k3)));
  return retract(y, DY((dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)));
}

}  // namespace marsden::sim
