// The explicit Runge-Kutta steps every family's baselines and references use, generic
// over the state: y' = f(t, y) with f returning the tangent dy (an Eigen vector), and
// retract(y, dy) moving y along dy (y + dy on a vector space; a chart step followed by
// normalisation on a group). Stage times are t + c_i dt, so time-dependent inputs sampled
// inside f are taken where the method needs them (sim/inputs.hpp).
#pragma once

#include <type_traits>

#include <Eigen/Core>

namespace marsden {

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

// The stages of rk_step_in_place, sized once.
template <class Vec>
struct RkWorkspace {
  explicit RkWorkspace(Eigen::Index n) : k1(n), k2(n), k3(n), k4(n), y_stage(n) {}
  Vec k1, k2, k3, k4, y_stage;
};

// The same steps for a state on a vector space, in place and without allocation for a
// run-time size: f(t, y, dy) writes dy.
template <class Vec, class F>
void rk_step_in_place(RungeKutta method, double t, double dt, Vec& y, F&& f,
                      RkWorkspace<Vec>& ws) {
  auto& [k1, k2, k3, k4, y_stage] = ws;
  f(t, y, k1);
  switch (method) {
    case RungeKutta::Midpoint2:
      y_stage = y + 0.5 * dt * k1;
      f(t + 0.5 * dt, y_stage, k2);
      y += dt * k2;
      return;
    case RungeKutta::Heun2:
      y_stage = y + dt * k1;
      f(t + dt, y_stage, k2);
      y += 0.5 * dt * (k1 + k2);
      return;
    case RungeKutta::Classic4:
      break;
  }
  y_stage = y + 0.5 * dt * k1;
  f(t + 0.5 * dt, y_stage, k2);
  y_stage = y + 0.5 * dt * k2;
  f(t + 0.5 * dt, y_stage, k3);
  y_stage = y + dt * k3;
  f(t + dt, y_stage, k4);
  y += (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
}

}  // namespace marsden
