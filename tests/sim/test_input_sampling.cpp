// Inputs are sampled where each integrator's quadrature needs them (sim/inputs.hpp): the
// observed order of convergence with a smooth input signal is the method's own (2 for RDP
// and the midpoint VI, 4 for RK4), measured against a tiny-step run of the same method;
// a zero-order hold costs an order, as it must for a signal that is not piecewise constant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>

#include "marsden/run/run.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::sim {
namespace {

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "scenes" / (name + ".json");
}

// The named columns of the final state of `scene` run with step dt.
std::vector<double> final_values(const io::Scene& scene, double dt,
                                 const std::vector<std::string>& names) {
  auto system = run::make_system(scene);
  RunOptions o;
  o.dt = dt;
  o.steps = static_cast<int>(std::lround(scene.duration / dt));
  o.output_every = o.steps;
  MemoryRecorder rec;
  const RunSummary s = simulate(*system, o, rec);
  EXPECT_TRUE(s.ok) << s.message;
  const std::size_t cols = rec.layout.columns.size();
  std::vector<double> out;
  for (const std::string& n : names) {
    const auto it = std::find(rec.layout.columns.begin(), rec.layout.columns.end(), n);
    EXPECT_NE(it, rec.layout.columns.end()) << n;
    out.push_back(rec.values[(rec.rows - 1) * cols + std::size_t(it - rec.layout.columns.begin())]);
  }
  return out;
}

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// Observed orders log2(e(dt) / e(dt/2)) and log2(e(dt/2) / e(dt/4)) against the reference step.
std::pair<double, double> observed_orders(const io::Scene& scene, double dt, double dt_ref,
                                          const std::vector<std::string>& names) {
  const auto ref = final_values(scene, dt_ref, names);
  const double e1 = distance(final_values(scene, dt, names), ref);
  const double e2 = distance(final_values(scene, dt / 2, names), ref);
  const double e3 = distance(final_values(scene, dt / 4, names), ref);
  std::printf("%s: errors %.3g %.3g %.3g, observed orders %.2f %.2f\n", scene.file.c_str(), e1, e2,
              e3, std::log2(e1 / e2), std::log2(e2 / e3));
  return {std::log2(e1 / e2), std::log2(e2 / e3)};
}

TEST(InputSampling, SnakeboardGaitWithPrescribedShapeVelocitiesIsSecondOrder) {
  // The shipped gait: shape rates prescribed by a sinusoid, RDP with alpha = 1/2.
  const io::Scene scene = io::load_scene(example("snakeboard_gait"));
  const auto [p1, p2] = observed_orders(scene, 0.02, 1e-4, {"theta", "x", "y"});
  EXPECT_GT(p1, 1.8);
  EXPECT_GT(p2, 1.8);
  EXPECT_LT(p2, 2.3);
}

TEST(InputSampling, AZeroOrderHoldOfASmoothSignalIsFirstOrder) {
  std::string text;
  {
    std::ifstream in(example("snakeboard_gait"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string key = "\"type\": \"sinusoid\"";
  text.replace(text.find(key), key.size(), key + ", \"hold\": \"zero_order\"");
  const io::Scene scene = io::parse_scene(text, "held gait");
  const auto [p1, p2] = observed_orders(scene, 0.02, 1e-4, {"theta", "x", "y"});
  EXPECT_GT(p2, 0.8);
  EXPECT_LT(p2, 1.3);
}

// A cart-pole with a smooth force on the cart.
std::string cart_pole(const std::string& method) {
  return R"({
  "system": {"type": "tree", "gravity": [0, 0, -9.81],
    "frames": [
      {"name": "cart", "type": "ty", "coordinate": "y", "mass": {"mass": 2.0}},
      {"name": "pole", "parent": "cart", "type": "rx", "coordinate": "theta"},
      {"name": "tip", "parent": "pole", "type": "tz", "value": 0.5,
       "mass": {"mass": 0.5, "com": [0, 0, 0], "inertia": [0.01, 0.01, 0.001]}}],
    "inputs": [{"type": "force", "coordinate": "y"}]},
  "integrator": {"method": ")" +
         method + R"("},
  "dt": 0.01, "duration": 2.0,
  "initial_state": {"q": {"theta": 0.3}},
  "controls": {"type": "sinusoid", "offset": [0.5], "amplitude": [3.0], "frequency_hz": [1.3]}
})";
}

TEST(InputSampling, TreeRk4WithASmoothForceIsFourthOrder) {
  const io::Scene scene = io::parse_scene(cart_pole("rk4"), "cart-pole rk4");
  const auto [p1, p2] = observed_orders(scene, 0.04, 1e-4, {"y", "theta", "qd_y", "qd_theta"});
  EXPECT_GT(p1, 3.7);
  EXPECT_GT(p2, 3.7);
}

TEST(InputSampling, TreeMidpointWithASmoothForceIsSecondOrder) {
  const io::Scene scene = io::parse_scene(cart_pole("midpoint"), "cart-pole midpoint");
  const auto [p1, p2] = observed_orders(scene, 0.02, 1e-4, {"y", "theta", "qd_y", "qd_theta"});
  EXPECT_GT(p1, 1.8);
  EXPECT_GT(p2, 1.8);
  EXPECT_LT(p2, 2.3);
}

TEST(InputSampling, CarRk4WithSmoothTorqueAndSteeringIsFourthOrder) {
  const io::Scene scene = io::parse_scene(R"({
  "system": {"type": "car"},
  "integrator": {"method": "rk4"},
  "dt": 0.01, "duration": 3.0,
  "initial_state": {"psi_dot": 2.0},
  "controls": {"type": "sinusoid", "offset": [0.2, 0.0], "amplitude": [0.5, 0.4],
               "frequency_hz": [0.7, 0.5]}
})",
                                          "car rk4");
  const auto [p1, p2] = observed_orders(scene, 0.04, 1e-4, {"theta", "x", "y", "psi_dot"});
  EXPECT_GT(p1, 3.7);
  EXPECT_GT(p2, 3.7);
}

}  // namespace
}  // namespace marsden::sim
