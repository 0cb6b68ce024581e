// Follows an optimal swing-up with time-varying LQR: DMOC finds the cart-pole's swing-up,
// its controls re-run from a pole 0.05, 0.1 and 0.2 rad off miss the top (the open loop);
// the Riccati gains along the exact step linearisation bring the pole up (the closed loop,
// force saturated at 15 N as in the problem). Twin of examples/python/track_swing_up.py.
// Exits 1 unless every closed loop ends within 0.02 rad of upright.
// Usage: track_swing_up PROBLEM (examples/problems/cart_pole_swing_up.json)
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

#include <marsden/control/lqr.hpp>
#include <marsden/io/problem.hpp>
#include <marsden/io/scene.hpp>
#include <marsden/run/batch.hpp>
#include <marsden/run/run.hpp>
#include <marsden/sim/simulate.hpp>

int main(int argc, char** argv) {
  using namespace marsden;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PROBLEM (examples/problems/cart_pole_swing_up.json)\n",
                 argv[0]);
    return 2;
  }
  try {
    io::Problem problem = io::load_problem(argv[1]);
    const run::OptimizeSummary solved =
        run::solve_problem(problem, problem.solver, problem.warm_start);
    if (!solved.ok) throw std::runtime_error("DMOC: " + solved.message);
    control::Table states, controls;
    problem.ocp->tables(solved.solution.x, states, controls);
    const Eigen::MatrixXd u = controls.rows.rightCols(controls.rows.cols() - 1);  // less t
    const double dt = problem.ocp->time_step();
    const int N = int(u.rows());

    // The problem's scene, its inputs held step by step; x0 its initial state.
    io::Scene scene = io::parse_scene(
        io::resimulation_scene(problem, dt, u, Eigen::MatrixXd(N, 0)), "swing-up");
    auto held = std::make_shared<sim::HeldInput>(int(u.cols()));
    run::set_controls(scene, held);
    const auto system = run::make_system(scene);
    Eigen::VectorXd x0(system->state_size());
    system->get_state({x0.data(), std::size_t(x0.size())});

    const control::Nominal nominal = control::rollout(*system, *held, 0.0, dt, x0, u);
    const control::Linearization lin = control::linearize(*system, nullptr, nominal);
    const Eigen::MatrixXd Q = Eigen::Vector4d(10.0, 10.0, 1.0, 1.0).asDiagonal();
    const control::Gains gains = control::tvlqr(lin, Q, Eigen::MatrixXd::Constant(1, 1, 0.1), 100.0 * Q);
    auto tracking = std::make_shared<control::Tracking>(system->state_chart(), nominal, gains.K);
    std::printf("DMOC: cost %.6g in %d iterations; exact step derivatives: %s\n",
                solved.solution.cost, solved.solution.iterations, lin.exact ? "yes" : "no");

    bool ok = true;
    for (double offset : {0.05, 0.1, 0.2}) {
      Eigen::VectorXd x_off = x0;
      x_off[1] += offset;  // the pole (rad)
      const double open = control::rollout(*system, *held, 0.0, dt, x_off, u).x(N, 1);

      sim::Feedback feedback(tracking, 1, {-15.0}, {15.0});
      io::Scene closed_scene = scene;
      run::set_controls(closed_scene, feedback.signal());
      const auto closed = run::make_system(closed_scene);
      closed->set_state({x_off.data(), std::size_t(x_off.size())});
      sim::RunOptions options;
      options.dt = dt;
      options.steps = N;
      options.feedback = &feedback;
      sim::MemoryRecorder rows;
      const bool ran = sim::simulate(*closed, options, rows).ok;
      std::vector<double> x(x0.size());
      closed->get_state(x);
      const double error = std::abs(x[1] - std::numbers::pi);
      std::printf("pole %+.2f rad off: open loop ends at %.3f rad, TV-LQR at pi %+.1e rad\n",
                  offset, open, x[1] - std::numbers::pi);
      ok = ok && ran && error < 0.02;
    }
    return ok ? 0 : 1;
  } catch (const std::runtime_error& e) {  // InputError, SolverError
    std::fprintf(stderr, "track_swing_up: %s\n", e.what());
    return 1;
  }
}
