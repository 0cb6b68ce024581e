// Inputs that feed back (sim/feedback.hpp): the driver calls the controller once per step
// with the state at its start and holds its value over the step; limits saturate; a
// controller's NaN ends the run with its rows kept; the cart-pole is stabilised upright by
// a linear state feedback, and falls without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/run/batch.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/feedback.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::sim {
namespace {

constexpr double kPi = std::numbers::pi;

// The cart-pole of examples/problems/cart_pole_swing_up.json: pole angle from the downward
// vertical, upright at pi; 0.3 rad from upright at rest.
io::Scene cart_pole(const std::string& method = "midpoint") {
  return io::parse_scene(R"({"system": {"type": "tree", "gravity": [0, 0, -9.81],
    "frames": [
      {"name": "cart", "type": "ty", "coordinate": "cart", "mass": {"mass": 1.0}},
      {"name": "pole", "parent": "cart", "type": "rx", "coordinate": "pole"},
      {"name": "bob", "parent": "pole", "type": "tz", "value": -0.5, "mass": {"mass": 0.3}}],
    "inputs": [{"type": "force", "coordinate": "cart"}]},
    "integrator": {"method": ")" + method + R"("}, "dt": 0.01, "duration": 6,
    "initial_state": {"q": {"pole": 2.8415926535897931}}})",
                         "cart_pole");
}

// u = k_y y + k_v y' - k_p (pole - pi) - k_d pole': the closed loop of the linearisation at
// the upright has its poles at -2, -2.5, -3, -3.5 (1/s).
class CartPoleFeedback final : public Controller {
 public:
  void control(double t, std::span<const double> x, std::span<double> u) override {
    times.push_back(t);
    const double y = x[0], pole = x[1], y_dot = x[2], pole_dot = x[3];
    u[0] = 2.6758 * y + 4.0647 * y_dot - 36.466 * (pole - kPi) - 7.5324 * pole_dot;
  }
  std::vector<double> times;
};

struct ClosedLoop {
  RunSummary summary;
  MemoryRecorder rows;
};

// The scene's run in closed loop; rows go to `rows` (kept when simulate throws).
ClosedLoop run_with(io::Scene scene, std::shared_ptr<Controller> c, std::vector<double> lower = {},
                    std::vector<double> upper = {}, MemoryRecorder* rows = nullptr) {
  Feedback feedback(std::move(c), 1, std::move(lower), std::move(upper));
  run::set_controls(scene, feedback.signal());
  auto system = run::make_system(scene);
  RunOptions o;
  o.dt = scene.dt;
  o.steps = scene.steps;
  o.feedback = &feedback;
  ClosedLoop r;
  r.summary = simulate(*system, o, rows ? *rows : r.rows);
  return r;
}

double column(const MemoryRecorder& rec, std::size_t row, const std::string& name) {
  const auto& cols = rec.layout.columns;
  const auto c = std::size_t(std::find(cols.begin(), cols.end(), name) - cols.begin());
  return rec.values[row * cols.size() + c];
}

TEST(Feedback, StateFeedbackHoldsTheCartPoleUpright) {
  for (const char* method : {"midpoint", "rk4"}) {
    auto controller = std::make_shared<CartPoleFeedback>();
    const ClosedLoop r = run_with(cart_pole(method), controller);
    ASSERT_TRUE(r.summary.ok) << r.summary.message;
    const std::size_t last = r.rows.rows - 1;
    EXPECT_LT(std::abs(column(r.rows, last, "pole") - kPi), 1e-3) << method;
    EXPECT_LT(std::abs(column(r.rows, last, "qd_pole")), 1e-2) << method;
    EXPECT_LT(std::abs(column(r.rows, last, "cart")), 1e-2) << method;
    // Called once per step, at t_k (and once at the end for the last row's input).
    ASSERT_EQ(controller->times.size(), std::size_t(r.summary.steps_done) + 1);
    for (std::size_t k = 0; k < controller->times.size(); ++k)
      EXPECT_DOUBLE_EQ(controller->times[k], 0.01 * double(k));
  }
  // Without the controller it falls over.
  io::Scene open = cart_pole();
  auto system = run::make_system(open);
  RunOptions o;
  o.dt = open.dt;
  o.steps = open.steps;
  MemoryRecorder rows;
  ASSERT_TRUE(simulate(*system, o, rows).ok);
  double worst = 0.0;
  for (std::size_t k = 0; k < rows.rows; ++k)
    worst = std::max(worst, std::abs(column(rows, k, "pole") - kPi));
  EXPECT_GT(worst, 1.0);
}

// Each row shows the input its state gives, and a step holds the value of its start: the
// row at t_k+1 has u(t_k+1, x_k+1), and the state at t_k+1 is that of a step under the
// constant input u(t_k, x_k).
TEST(Feedback, ZeroOrderHoldAndRowsShowTheInputOfTheirState) {
  auto controller = std::make_shared<CartPoleFeedback>();
  io::Scene scene = cart_pole();
  scene.steps = 20;
  const ClosedLoop r = run_with(scene, controller);
  ASSERT_TRUE(r.summary.ok);
  for (std::size_t k = 0; k < r.rows.rows; ++k) {
    const double expected =
        2.6758 * column(r.rows, k, "cart") + 4.0647 * column(r.rows, k, "qd_cart") -
        36.466 * (column(r.rows, k, "pole") - kPi) - 7.5324 * column(r.rows, k, "qd_pole");
    EXPECT_DOUBLE_EQ(column(r.rows, k, "u0"), expected) << k;
  }
  // The first step again, under the constant input of its start.
  io::Scene constant = cart_pole();
  run::set_controls(constant, std::make_shared<ConstantSignal>(
                                  Eigen::VectorXd::Constant(1, column(r.rows, 0, "u0"))));
  auto system = run::make_system(constant);
  ASSERT_TRUE(system->step(0.0, 0.01).converged);
  std::vector<double> x1(4);
  system->get_state(x1);
  EXPECT_EQ(x1[0], column(r.rows, 1, "cart"));
  EXPECT_EQ(x1[1], column(r.rows, 1, "pole"));
  EXPECT_EQ(x1[3], column(r.rows, 1, "qd_pole"));
}

TEST(Feedback, LimitsSaturateTheInput) {
  const ClosedLoop r = run_with(cart_pole(), std::make_shared<CartPoleFeedback>(), {-4.0}, {4.0});
  double largest = 0.0;
  for (std::size_t k = 0; k < r.rows.rows; ++k)
    largest = std::max(largest, std::abs(column(r.rows, k, "u0")));
  EXPECT_EQ(largest, 4.0);  // saturated at the start (36.5 x 0.3 rad is 11 N)
  EXPECT_THROW(Feedback(std::make_shared<CartPoleFeedback>(), 1, {1.0}, {-1.0}), InputError);
  EXPECT_THROW(Feedback(std::make_shared<CartPoleFeedback>(), 1, {1.0, 2.0}, {3.0, 4.0}),
               InputError);
  EXPECT_THROW(Feedback(nullptr, 1), InputError);
}

class NanAfter final : public Controller {
 public:
  void control(double t, std::span<const double>, std::span<double> u) override {
    u[0] = t < 0.05 ? 1.0 : std::nan("");
  }
};

TEST(Feedback, ANonFiniteInputEndsTheRunNamingItAndKeepsTheRows) {
  MemoryRecorder rows;
  try {
    run_with(cart_pole(), std::make_shared<NanAfter>(), {}, {}, &rows);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("u0 = nan at t = 0.05 s"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rows.rows, 5u);  // t = 0 .. 0.04
  EXPECT_FALSE(rows.finished_ok);
}

}  // namespace
}  // namespace marsden::sim
