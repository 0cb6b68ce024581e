// One step of every holonomic-vehicle integrator on every model (vehicles §3-4).
// bench/report.py runs this and prints time ratios against RK4 on the same model.
#include <benchmark/benchmark.h>

#include <memory>

#include "marsden/vehicle/models.hpp"
#include "vehicle/stepper.hpp"

namespace marsden::vehicle {
namespace {

struct Scenario {
  std::shared_ptr<const HolonomicModel<SE3>> model;
  VehicleState<SE3> s0;
  ConstantInputs inputs;  // zero unless the model is driven
};

Scenario make_scenario(int which) {
  Scenario s;
  s.s0.xi << 0.3, -0.8, 0.5, 1.0, 0.2, -0.1;
  if (which == 0) {
    Mat6 I = rigid_body_inertia(Vec3(1.0, 2.0, 3.0), 2.0);
    I(0, 1) = I(1, 0) = 0.1;
    s.model = std::make_shared<FreeBody<SE3>>(I);
  } else if (which == 1) {
    HelicopterParams p;
    s.model = std::make_shared<Helicopter>(p);
    InputVec u(2), gamma(2);
    u << p.mass * p.gravity, 0.5;
    gamma << 0.05, -0.02;
    s.inputs = ConstantInputs(gamma, u);
  } else {
    BoatParams p;
    auto boat = std::make_shared<Boat>(p);
    s.s0.g.x.z() = boat->equilibrium_height();
    s.s0.xi << 0.0, 0.0, 0.1, 1.0, 0.0, 0.0;
    InputVec u(2);
    u << 40.0, 30.0;
    s.inputs = ConstantInputs(InputVec(0), u);
    s.model = boat;
  }
  return s;
}

const char* kModel[] = {"rigid_body", "helicopter", "boat"};

void BM_Step(benchmark::State& state, int model, Method method, DiffMap map, TangentMap tangent) {
  Scenario sc = make_scenario(model);
  HolonomicOptions<SE3> opt;
  opt.map = map;
  opt.tangent = tangent;
  auto stepper = make_stepper<SE3>(method, sc.model, opt);
  const double dt = 0.01;
  stepper->reset(sc.s0, dt);
  long iterations = 0, steps = 0;
  for (auto _ : state) {
    const NewtonStatus st = stepper->step(sc.inputs);
    iterations += st.iterations;
    ++steps;
    if (!st.converged) {
      state.SkipWithError("step failed");
      break;
    }
    // Restart now and then so the state stays in the same regime.
    if (steps % 4096 == 0) {
      state.PauseTiming();
      stepper->reset(sc.s0, dt);
      state.ResumeTiming();
    }
  }
  state.counters["newton_iterations"] =
      benchmark::Counter(static_cast<double>(iterations) / static_cast<double>(steps));
}

// The residual-level step without the stepper interface: the cost the 1 us goal is about.
void BM_HolonomicStepDirect(benchmark::State& state) {
  Scenario sc = make_scenario(0);
  HolonomicOptions<SE3> opt;
  const double dt = 0.01;
  Vec6 xi_km1 = initial_xi_km1(*sc.model, opt, dt, sc.s0.xi), xi_k;
  SE3 g = sc.s0.g, g_next;
  StepInputs in;
  for (auto _ : state) {
    xi_k = xi_km1;
    holonomic_step(*sc.model, opt, dt, 0.0, g, xi_km1, in, xi_k, g_next);
    xi_km1 = xi_k;
    g = g_next;
    benchmark::DoNotOptimize(g_next);
  }
}
BENCHMARK(BM_HolonomicStepDirect);

void register_all() {
  struct M {
    const char* name;
    Method method;
    DiffMap map;
    TangentMap tangent;
  };
  const M methods[] = {{"vi_cay_tln", Method::VI, DiffMap::Cay, TangentMap::TLN},
                       {"vi_cay_exact", Method::VI, DiffMap::Cay, TangentMap::Exact},
                       {"vi_exp_tln", Method::VI, DiffMap::Exp, TangentMap::TLN},
                       {"vi_exp_exact", Method::VI, DiffMap::Exp, TangentMap::Exact},
                       {"rk2", Method::RK2, DiffMap::Cay, TangentMap::TLN},
                       {"rk2_implicit", Method::RK2Implicit, DiffMap::Cay, TangentMap::TLN},
                       {"rk4", Method::RK4, DiffMap::Cay, TangentMap::TLN},
                       {"lie_newmark", Method::LieNewmark, DiffMap::Cay, TangentMap::TLN}};
  for (int model = 0; model < 3; ++model)
    for (const M& m : methods)
      benchmark::RegisterBenchmark(
          (std::string("step/") + kModel[model] + "/" + m.name).c_str(),
          [model, m](benchmark::State& st) { BM_Step(st, model, m.method, m.map, m.tangent); });
}

}  // namespace
}  // namespace marsden::vehicle

int main(int argc, char** argv) {
  marsden::vehicle::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
