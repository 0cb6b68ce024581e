"""Closed loop from Python (marsden.control, docs/control.md): the DARE against SciPy's
independent solver, exact step derivatives against differences through the bindings, and
TV-LQR following the cart-pole swing-up that the open loop misses."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

import marsden

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "examples" / "problems" / "cart_pole_swing_up.json"


def cart_pole_system():
    """The swing-up problem's system as a scene, with inputs held step by step."""
    spec = json.loads(PROBLEM.read_text())
    scene = marsden.parse_scene(json.dumps(
        {"duration": spec["dt"] * spec["steps"],
         **{key: spec[key] for key in ("system", "integrator", "dt", "initial_state")}}))
    held = marsden.HeldInput(1)
    return scene, marsden.make_system(scene, controls=held), held


def test_dare_equals_scipy_at_the_upright():
    _, system, held = cart_pole_system()
    upright = np.array([0.0, math.pi, 0.0, 0.0])
    rest = marsden.control.rollout(system, held, 0.0, 0.05, upright, np.zeros((1, 1)))
    lin = marsden.control.linearize(system, rest)
    assert lin["exact"]
    A, B = lin["A"][0], lin["B"][0]
    Q, R = np.diag([1.0, 10.0, 0.1, 0.1]), np.array([[0.05]])
    ours = marsden.control.dare(A, B, Q, R)
    reference = scipy.linalg.solve_discrete_are(A, B, Q, R)
    assert np.abs(ours["S"] - reference).max() <= 1e-8 * np.abs(reference).max()
    K = np.linalg.solve(R + B.T @ reference @ B, B.T @ reference @ A)
    assert np.abs(ours["K"] - K).max() <= 1e-8 * np.abs(K).max()


def test_exact_derivatives_equal_differences_through_the_bindings():
    _, system, held = cart_pole_system()
    u = np.sin(np.arange(6.0))[:, None] * 5.0
    nominal = marsden.control.rollout(system, held, 0.0, 0.05, [0.1, 1.0, 0.3, -0.5], u)
    assert nominal.x.shape == (7, 4) and nominal.steps == 6
    exact = marsden.control.linearize(system, nominal, derivatives="exact")
    fd = marsden.control.linearize(system, nominal, held, derivatives="differences")
    assert exact["A"].shape == (6, 4, 4) and exact["B"].shape == (6, 4, 1)
    scale = np.abs(exact["A"]).max()
    assert np.abs(exact["A"] - fd["A"]).max() <= 1e-6 * scale
    assert np.abs(exact["B"] - fd["B"]).max() <= 1e-6 * np.abs(exact["B"]).max()
    with pytest.raises(ValueError, match="held input"):
        marsden.control.linearize(system, nominal, derivatives="differences")
    with pytest.raises(ValueError, match="derivatives"):
        marsden.control.linearize(system, nominal, derivatives="symbolic")


@pytest.fixture(scope="module")
def swing_up():
    problem = marsden.load_problem(PROBLEM)
    solution = problem.solve()
    assert solution["ok"], solution["message"]
    scene, system, held = cart_pole_system()
    nominal = marsden.control.nominal_from_solution(system, held, solution)
    lin = marsden.control.linearize(system, nominal)
    Q = np.diag([10.0, 10.0, 1.0, 1.0])
    gains = marsden.control.tvlqr(lin["A"], lin["B"], Q, np.array([[0.1]]), 100.0 * Q)
    return scene, nominal, gains


def closed_loop(scene, nominal, gains, pole_offset, track=True):
    tracking = marsden.control.Tracking(marsden.make_system(scene), nominal, gains["K"])
    controller = tracking if track else (lambda t, x: nominal.u[min(int(round(t / nominal.dt)),
                                                                    nominal.steps - 1)])
    feedback = marsden.Feedback(controller, inputs=1, lower=[-15.0], upper=[15.0])
    system = marsden.make_system(scene, controls=feedback)
    x0 = nominal.x[0].copy()
    x0[1] += pole_offset
    system.set_state(x0)
    run = marsden.simulate(system, nominal.dt, nominal.steps, feedback=feedback)
    assert run.ok
    return np.column_stack([run["cart"], run["pole"], run["qd_cart"], run["qd_pole"]])


def test_with_no_perturbation_the_closed_loop_is_the_nominal(swing_up):
    scene, nominal, gains = swing_up
    states = closed_loop(scene, nominal, gains, 0.0)
    assert np.abs(states - nominal.x).max() <= 1e-9
    assert abs(nominal.x[-1, 1] - math.pi) <= 1e-6  # the nominal is the swing-up


@pytest.mark.parametrize("offset", [0.05, -0.05, 0.1, 0.2])
def test_tvlqr_holds_the_swing_up_where_the_open_loop_falls(swing_up, offset):
    scene, nominal, gains = swing_up
    open_loop = closed_loop(scene, nominal, gains, offset, track=False)
    tracked = closed_loop(scene, nominal, gains, offset)
    open_error = abs(open_loop[-1, 1] - math.pi)
    tracked_error = abs(tracked[-1, 1] - math.pi)
    assert open_error > 0.5, open_error
    assert tracked_error <= 0.01 * open_error and tracked_error < 0.02, (tracked_error, open_error)


def test_ilqr_keeps_the_dmoc_optimum_and_finds_a_cheaper_swing_up_from_rest():
    problem = marsden.load_problem(PROBLEM)
    solution = problem.solve()
    _, system, held = cart_pole_system()
    nominal = marsden.control.nominal_from_solution(system, held, solution)
    goal = [0.0, math.pi, 0.0, 0.0]
    args = dict(R=[[1.0]], x_goal=goal, terminal=[0, 1, 2, 3], u_lower=[-15.0], u_upper=[15.0])
    warm = marsden.control.ilqr(system, held, nominal.x[0], nominal.u, nominal.dt,
                                penalty=1e4, **args)
    assert warm["converged"], warm["message"]
    assert abs(warm["cost"] - solution["cost"]) <= 1e-6 * solution["cost"]
    cold = marsden.control.ilqr(system, held, nominal.x[0], np.zeros((50, 1)), nominal.dt, **args)
    assert cold["converged"], cold["message"]
    run = cold["nominal"]
    assert cold["constraint_violation"] <= 1e-8
    assert np.abs(run.u).max() <= 15.0
    assert np.abs(run.x[:, 0]).max() <= 1.5  # the problem's cart bounds hold too
    assert cold["cost"] < 0.7 * solution["cost"]  # another local optimum, docs/control.md
    assert cold["K"].shape == (50, 1, 4)


def test_mpc_reaches_the_top_from_where_tvlqr_falls_short(swing_up):
    scene, nominal, gains = swing_up
    Q = np.diag([10.0, 10.0, 1.0, 1.0])
    held = marsden.HeldInput(1)
    mpc = marsden.control.Mpc(marsden.make_system(scene, controls=held), held, nominal,
                              horizon=20, Q=Q, R=[[0.1]], Q_N=100.0 * Q, u_lower=[-15.0],
                              u_upper=[15.0])
    feedback = marsden.Feedback(mpc, inputs=1, lower=[-15.0], upper=[15.0])
    system = marsden.make_system(scene, controls=feedback)
    x0 = nominal.x[0] + [0.0, 1.0, 0.0, 0.0]
    system.set_state(x0)
    run = marsden.simulate(system, nominal.dt, nominal.steps, feedback=feedback)
    tracked = closed_loop(scene, nominal, gains, 1.0)
    assert abs(tracked[-1, 1] - math.pi) > 0.02  # TV-LQR alone, 1 rad off
    assert abs(run["pole"][-1] - math.pi) < 0.02
    assert len(mpc.solve_times) == nominal.steps + 1 and min(mpc.solve_times) > 0.0
