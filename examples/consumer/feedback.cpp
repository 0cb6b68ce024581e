// Closes the loop: a linear state feedback holds the cart-pole upright from 0.3 rad off.
// The controller sees the state (cart, pole, qd_cart, qd_pole: m, rad, m/s, rad/s) at the
// start of every step and the step holds its value; the force saturates at 20 N. The gains
// place the poles of the linearisation at the upright at -2, -2.5, -3, -3.5 1/s. Twin of
// examples/python/feedback.py. Exits 1 unless the pole ends within 1e-3 rad of upright.
// Usage: feedback SCENE (examples/scenes/cart_pole.json)
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <span>
#include <stdexcept>
#include <vector>

#include <marsden/io/scene.hpp>
#include <marsden/run/batch.hpp>
#include <marsden/run/run.hpp>
#include <marsden/sim/feedback.hpp>
#include <marsden/sim/simulate.hpp>

namespace {

class CartPoleController final : public marsden::sim::Controller {
 public:
  void control(double, std::span<const double> x, std::span<double> u) override {
    const double cart = x[0], pole = x[1], qd_cart = x[2], qd_pole = x[3];
    u[0] = 2.6758 * cart + 4.0647 * qd_cart - 36.466 * (pole - std::numbers::pi) -
           7.5324 * qd_pole;
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace marsden;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENE (examples/scenes/cart_pole.json)\n", argv[0]);
    return 2;
  }
  try {
    io::Scene scene = io::load_scene(argv[1]);
    sim::Feedback feedback(std::make_shared<CartPoleController>(), 1, {-20.0}, {20.0});
    run::set_controls(scene, feedback.signal());
    const auto system = run::make_system(scene);
    sim::RunOptions options;
    options.dt = scene.dt;
    options.steps = scene.steps;
    options.feedback = &feedback;
    sim::MemoryRecorder rows;
    const sim::RunSummary summary = sim::simulate(*system, options, rows);
    std::vector<double> x(std::size_t(system->state_size()));
    system->get_state(x);
    const double error = std::abs(x[1] - std::numbers::pi);
    std::printf("t = %g s: |pole - pi| = %.1e rad, cart = %+.3f m, force = %+.3f N\n",
                summary.final_time, error, x[0], feedback.value()[0]);
    return summary.ok && error < 1e-3 ? 0 : 1;
  } catch (const std::runtime_error& e) {  // InputError, SolverError
    std::fprintf(stderr, "feedback: %s\n", e.what());
    return 1;
  }
}
