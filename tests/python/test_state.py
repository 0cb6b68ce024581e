"""The state in the contract from Python (System.state, set_state, state_names, the tangent
chart) for every example scene's family, batch rollouts of maximal and nonholonomic scenes
from states, and feedback controllers as callables (docs/architecture.md, State and
Feedback)."""

import math
import pathlib

import numpy as np
import pytest

import marsden

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "examples" / "scenes"
# Scenes naming code of their own (a module or a compiled library) are left out here.
STATE_SCENES = sorted(p.name for p in SCENES.glob("*.json") if not p.name.startswith("own_"))


@pytest.mark.parametrize("name", STATE_SCENES)
def test_state_round_trips_and_restarts_every_family(name):
    scene = marsden.load_scene(SCENES / name)
    system = marsden.make_system(scene)
    assert len(system.state_names) == system.state_size == system.state.size
    assert system.tangent_size == system.state_size - len(system.state_quaternions)
    for k in range(3):
        assert system.step(k * scene.dt, scene.dt).converged
    x = system.state
    system.set_state(x)
    assert system.state.tobytes() == x.tobytes()
    # A step from the state set, and again after setting it once more: the same bits.
    assert system.step(3 * scene.dt, scene.dt).converged
    first = system.state
    system.set_state(x)
    assert system.step(3 * scene.dt, scene.dt).converged
    assert system.state.tobytes() == first.tobytes()
    # The tangent chart: integrate and difference invert each other.
    dx = 0.01 * np.sin(np.arange(system.tangent_size) + 1.0)
    y = system.state_integrate(x, dx)
    np.testing.assert_allclose(system.state_difference(x, y), dx, atol=1e-12)


def test_bad_states_name_the_entry():
    system = marsden.make_system(marsden.load_scene(SCENES / "maximal_chain.json"))
    x = system.state
    bad = x.copy()
    bad[5] = math.nan
    with pytest.raises(marsden.InputError, match=rf"entry 5 \({system.state_names[5]}\)"):
        system.set_state(bad)
    with pytest.raises(marsden.InputError, match="expected"):
        system.set_state(x[:-1])
    off = x.copy()
    off[0] += 0.1  # the first body leaves its joint
    with pytest.raises(marsden.InputError, match="violate joint"):
        system.set_state(off)
    np.testing.assert_array_equal(system.state, x)


def test_maximal_and_nonholonomic_rollouts_take_states_and_equal_single_runs():
    for name, runs in (("maximal_chain.json", 4), ("sleigh.json", 4), ("snakeboard_gait.json", 3)):
        scene = marsden.load_scene(SCENES / name)
        system = marsden.make_system(scene)
        assert marsden.initial_state_names(scene) == system.state_names
        # Consistent states: those the scene's own run passes through, 7 steps apart.
        states = []
        for _ in range(runs):
            states.append(system.state)
            for _ in range(7):
                assert system.step(0.0, scene.dt).converged
        states = np.array(states)
        batch = marsden.rollout(scene, initial_states=states, threads=2)
        for i in range(runs):
            single = marsden.make_system(scene)
            single.set_state(states[i])
            alone = marsden.simulate(single, scene.dt, scene.steps,
                                     output_every=scene.output_every)
            assert alone.ok
            np.testing.assert_array_equal(batch.values[i], alone.values)


def _cart_pole_feedback(t, x):
    cart, pole, qd_cart, qd_pole = x
    return 2.6758 * cart + 4.0647 * qd_cart - 36.466 * (pole - math.pi) - 7.5324 * qd_pole


def test_a_python_controller_holds_the_cart_pole_upright():
    scene = marsden.load_scene(SCENES / "cart_pole.json")
    calls = []

    def pi(t, x):
        calls.append(t)
        return _cart_pole_feedback(t, x)

    feedback = marsden.Feedback(pi, inputs=1, lower=[-20.0], upper=[20.0])
    run = marsden.simulate(marsden.make_system(scene, controls=feedback), scene.dt,
                           scene.steps, feedback=feedback)
    assert run.ok
    assert abs(run["pole"][-1] - math.pi) < 1e-3
    assert len(calls) == scene.steps + 1
    assert max(abs(run["u0"])) <= 20.0
    # The input of each row is the controller's at that row's state.
    for k in (0, 10, 100):
        x = [run["cart"][k], run["pole"][k], run["qd_cart"][k], run["qd_pole"][k]]
        assert run["u0"][k] == pytest.approx(np.clip(_cart_pole_feedback(0, x), -20, 20),
                                             abs=1e-12)
    # Open loop, it falls.
    free = marsden.simulate(marsden.make_system(scene), scene.dt, scene.steps)
    assert max(abs(free["pole"] - math.pi)) > 1.0


def test_controller_errors_propagate_and_name_the_problem():
    scene = marsden.load_scene(SCENES / "cart_pole.json")

    def raises(t, x):
        if t > 0.05:
            raise RuntimeError("controller failed on purpose")
        return 0.0

    feedback = marsden.Feedback(raises, inputs=1)
    system = marsden.make_system(scene, controls=feedback)
    with pytest.raises(RuntimeError, match="on purpose"):
        marsden.simulate(system, scene.dt, scene.steps, feedback=feedback)
    wrong = marsden.Feedback(lambda t, x: [1.0, 2.0], inputs=1)
    with pytest.raises(marsden.InputError, match="must return 1 numbers"):
        marsden.simulate(marsden.make_system(scene, controls=wrong), scene.dt, 3, feedback=wrong)
    with pytest.raises(marsden.InputError, match="lower <= upper"):
        marsden.Feedback(_cart_pole_feedback, inputs=1, lower=[1.0], upper=[0.0])
