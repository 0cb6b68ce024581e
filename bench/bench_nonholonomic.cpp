// One step of every nonholonomic integrator (vehicles §5, nonholonomic paper §4-§6) against
// RK2 and RK4 on the same model. bench/report.py prints the ratios to RK4.
#include <benchmark/benchmark.h>

#include <cmath>

#include "marsden/solve/rk.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/nonholonomic/model.hpp"
#include "marsden/vehicle/rdp.hpp"
#include "marsden/vehicle/rdp_models.hpp"

namespace marsden {
namespace {

using nonholonomic::ChaplyginSleigh;
using nonholonomic::gni_step;
using nonholonomic::nh_rk2_step;
using nonholonomic::nh_rk4_step;
using nonholonomic::NhMat;
using nonholonomic::NhVec;
using nonholonomic::rattle_step;
using nonholonomic::Snakeboard;

using vehicle::car_continuous_rhs;
using vehicle::car_explicit_initial;
using vehicle::car_explicit_step;
using vehicle::CarContinuousState;
using vehicle::CarExplicitState;
using vehicle::CarModel;
using vehicle::rdp_advance;
using vehicle::rdp_initial_state;
using vehicle::RdpOptions;
using vehicle::RdpVec;
using vehicle::ShapeVec;
using vehicle::sleigh_continuous_rhs;
using vehicle::SleighContinuousState;
using vehicle::SleighModel;
using vehicle::SleighParams;
using vehicle::SnakeboardModel;
using vehicle::SnakeboardParams;

constexpr double kDt = 0.01;
constexpr int kRestart = 4096;  // steps before restarting, so every run stays in one regime

// Car (vehicles §5.2.1): torque 0.1 N m on the wheel, steering rate alternating in sign.
double steer_rate(long k) { return (k / 512) % 2 == 0 ? 0.2 : -0.2; }

void BM_CarRdpExplicit(benchmark::State& state) {
  const CarParams p;
  long k = 0;
  CarExplicitState s = car_explicit_initial(p, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0);
  for (auto _ : state) {
    car_explicit_step(p, kDt, 0.5, 0.1, steer_rate(k), s);
    benchmark::DoNotOptimize(s);
    if (++k % kRestart == 0) s = car_explicit_initial(p, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0);
  }
}

void BM_CarRdpGeneral(benchmark::State& state) {
  const CarModel model{CarParams{}};
  RdpOptions opt;
  opt.map = DiffMap::Exp;
  ShapeVec r0 = ShapeVec::Zero(2), u0(2), f(2), u_prescribed(2);
  u0 << 2.0, 0.0;
  f << 0.1, 0.0;
  long k = 0;
  auto s = rdp_initial_state<SE2>(model, r0, SE2::identity(), u0, RdpVec(0));
  long iterations = 0;
  for (auto _ : state) {
    u_prescribed << 0.0, steer_rate(k);
    iterations += rdp_advance<SE2>(model, opt, kDt, f, u_prescribed, s).iterations;
    if (++k % kRestart == 0) s = rdp_initial_state<SE2>(model, r0, SE2::identity(), u0, RdpVec(0));
  }
  state.counters["newton_iterations"] = double(iterations) / double(k);
}

template <bool kRk4>
void BM_CarContinuous(benchmark::State& state) {
  const CarParams p;
  CarContinuousState y;
  y << 0, 0, 0, 0, 0, 2.0;
  long k = 0;
  double t = 0.0;
  for (auto _ : state) {
    const double us = steer_rate(k);
    auto f = [&](double, const CarContinuousState& s) { return car_continuous_rhs(p, s, 0.1, us); };
    y = rk_step(kRk4 ? RungeKutta::Classic4 : RungeKutta::Midpoint2, t, kDt, y, f);
    benchmark::DoNotOptimize(y);
    t += kDt;
    if (++k % kRestart == 0) y << 0, 0, 0, 0, 0, 2.0;
  }
}

// Snakeboard (vehicles §5.2.2) driven by a prescribed rotor-and-steering gait.
void BM_SnakeboardRdp(benchmark::State& state) {
  const SnakeboardModel model(SnakeboardParams{}, true);
  RdpOptions opt;
  ShapeVec r0 = ShapeVec::Zero(2), u0 = ShapeVec::Zero(2), f = ShapeVec::Zero(2), u_prescribed(2);
  const RdpVec w0 = RdpVec::Constant(1, 0.5);
  long k = 0;
  auto s = rdp_initial_state<SE2>(model, r0, SE2::identity(), u0, w0);
  long iterations = 0;
  for (auto _ : state) {
    const double t = kDt * double(k % kRestart);
    u_prescribed << std::cos(2.0 * t), 0.5 * std::cos(2.0 * t + 1.0);
    iterations += rdp_advance<SE2>(model, opt, kDt, f, u_prescribed, s).iterations;
    if (++k % kRestart == 0) s = rdp_initial_state<SE2>(model, r0, SE2::identity(), u0, w0);
  }
  state.counters["newton_iterations"] = double(iterations) / double(k);
}

// Chaplygin sleigh: RDP, and GNI, RATTLE and RK4 in full coordinates (theta, x, y).
void BM_SleighRdp(benchmark::State& state) {
  const SleighModel model{SleighParams{}};
  RdpOptions opt;
  RdpVec w0(2);
  w0 << 1.0, 0.5;
  const ShapeVec none(0);
  long k = 0;
  auto s = rdp_initial_state<SE2>(model, none, SE2::identity(), none, w0);
  long iterations = 0;
  for (auto _ : state) {
    iterations += rdp_advance<SE2>(model, opt, kDt, none, none, s).iterations;
    if (++k % kRestart == 0) s = rdp_initial_state<SE2>(model, none, SE2::identity(), none, w0);
  }
  state.counters["newton_iterations"] = double(iterations) / double(k);
}

struct SleighFull {
  ChaplyginSleigh model{0.1, 1.0, 0.5};
  NhVec q0 = NhVec::Zero(3), qdot0 = NhVec(3), u = NhVec(0);
  SleighFull() { qdot0 << 1.0, 0.5, -0.5; }  // v2 + a omega = 0 at theta = 0
};

void BM_SleighGni(benchmark::State& state) {
  SleighFull s;
  NhMat M;
  s.model.mass(s.q0, M);
  NhVec q = s.q0, p = M * s.qdot0, q1(3), p1(3);
  long k = 0, iterations = 0;
  for (auto _ : state) {
    q1 = q + kDt * s.qdot0;
    iterations += gni_step(s.model, kDt, q, p, s.u, q1, p1).iterations;
    q = q1;
    p = p1;
    if (++k % kRestart == 0) {
      q = s.q0;
      p = M * s.qdot0;
    }
  }
  state.counters["newton_iterations"] = double(iterations) / double(k);
}

void BM_SleighRattle(benchmark::State& state) {
  SleighFull s;
  NhMat M;
  s.model.mass(s.q0, M);
  NhVec q = s.q0, p = M * s.qdot0, q1(3), p1(3);
  long k = 0, iterations = 0;
  for (auto _ : state) {
    q1 = q + kDt * s.qdot0;
    iterations += rattle_step(s.model, kDt, q, p, s.u, q1, p1).iterations;
    q = q1;
    p = p1;
    if (++k % kRestart == 0) {
      q = s.q0;
      p = M * s.qdot0;
    }
  }
  state.counters["newton_iterations"] = double(iterations) / double(k);
}

template <bool kRk4>
void BM_SleighContinuous(benchmark::State& state) {
  const SleighParams p;
  SleighContinuousState y;
  y << 0, 0, 0, 1.0, 0.5;
  long k = 0;
  double t = 0.0;
  auto f = [&](double, const SleighContinuousState& s) { return sleigh_continuous_rhs(p, s); };
  for (auto _ : state) {
    y = rk_step(kRk4 ? RungeKutta::Classic4 : RungeKutta::Midpoint2, t, kDt, y, f);
    benchmark::DoNotOptimize(y);
    t += kDt;
    if (++k % kRestart == 0) y << 0, 0, 0, 1.0, 0.5;
  }
}

void BM_SleighRk4FullCoordinates(benchmark::State& state) {
  SleighFull s;
  NhVec q = s.q0, qd = s.qdot0;
  long k = 0;
  for (auto _ : state) {
    nh_rk4_step(s.model, kDt, s.u, q, qd);
    benchmark::DoNotOptimize(q);
    if (++k % kRestart == 0) {
      q = s.q0;
      qd = s.qdot0;
    }
  }
}

// The snakeboard's continuous equations in full coordinates, driven by rotor and steering
// torques, for the RK baselines of the same model.
template <bool kRk4>
void BM_SnakeboardContinuous(benchmark::State& state) {
  const Snakeboard model(0.2, 0.05, 1.0, 0.5);
  NhVec q0 = NhVec::Zero(5), qd0 = NhVec::Zero(5), u(2);
  u << 0.1, -0.05;
  NhVec q = q0, qd = qd0;
  long k = 0;
  for (auto _ : state) {
    (kRk4 ? nh_rk4_step : nh_rk2_step)(model, kDt, u, q, qd);
    benchmark::DoNotOptimize(q);
    if (++k % kRestart == 0) {
      q = q0;
      qd = qd0;
    }
  }
}

BENCHMARK(BM_SnakeboardContinuous<false>)->Name("step/snakeboard/rk2_full_coordinates");
BENCHMARK(BM_SnakeboardContinuous<true>)->Name("step/snakeboard/rk4_full_coordinates");
BENCHMARK(BM_CarRdpExplicit)->Name("step/car/rdp_explicit");
BENCHMARK(BM_CarRdpGeneral)->Name("step/car/rdp_newton");
BENCHMARK(BM_CarContinuous<false>)->Name("step/car/rk2");
BENCHMARK(BM_CarContinuous<true>)->Name("step/car/rk4");
BENCHMARK(BM_SnakeboardRdp)->Name("step/snakeboard/rdp");
BENCHMARK(BM_SleighRdp)->Name("step/sleigh/rdp");
BENCHMARK(BM_SleighGni)->Name("step/sleigh/gni");
BENCHMARK(BM_SleighRattle)->Name("step/sleigh/rattle");
BENCHMARK(BM_SleighContinuous<false>)->Name("step/sleigh/rk2");
BENCHMARK(BM_SleighContinuous<true>)->Name("step/sleigh/rk4");
BENCHMARK(BM_SleighRk4FullCoordinates)->Name("step/sleigh/rk4_full_coordinates");

}  // namespace
}  // namespace marsden

BENCHMARK_MAIN();
