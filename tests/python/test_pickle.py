"""Copies and pickles (docs/python.md): a System pickled, or deep-copied, continues bit for
bit as the original, also in another process (multiprocessing, as joblib and Dask users
ship systems); Scenes and Problems copy as their text; what cannot be replayed says why."""

import copy
import multiprocessing
import pathlib
import pickle

import numpy as np
import pytest

import marsden

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "examples" / "scenes"
# One scene per family and method kind: SE(3) VI, RDP with prescribed shape rates, RATTLE,
# the tree's midpoint VI with kinematic coordinates, maximal coordinates, tree RK4.
CASES = ["helicopter_turn.json", "snakeboard_gait.json", "sleigh.json", "marionette.json",
         "maximal_chain.json", "double_pendulum.json"]


def _used_system(name):
    """A system with a past: a run, single steps, a checkpoint and a rollback."""
    scene = marsden.load_scene(SCENES / name)
    system = marsden.make_system(scene)
    marsden.simulate(system, scene.dt, 30)
    system.checkpoint()
    system.step(30 * scene.dt, scene.dt)
    system.rollback()
    for k in range(30, 33):
        system.step(k * scene.dt, scene.dt)
    return scene, system


def _continue(blob, dt, t0):
    system = pickle.loads(blob)
    return marsden.simulate(system, dt, 40, t0=t0).values


@pytest.mark.parametrize("name", CASES)
def test_a_pickled_system_continues_bit_for_bit_in_another_process(name):
    scene, system = _used_system(name)
    blob = pickle.dumps(system)
    t0 = 33 * scene.dt
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        theirs = pool.apply(_continue, (blob, scene.dt, t0))
    twin = copy.deepcopy(system)
    mine = marsden.simulate(system, scene.dt, 40, t0=t0).values
    assert theirs.tobytes() == mine.tobytes()
    assert marsden.simulate(twin, scene.dt, 40, t0=t0).values.tobytes() == mine.tobytes()


def test_set_state_starts_the_record_anew_and_stays_exact():
    scene, system = _used_system("maximal_chain.json")
    assert len(system.__reduce__()[1][2]) == 7  # run, checkpoint, step, rollback, 3 steps
    system.set_state(system.state)
    assert [c[0] for c in system.__reduce__()[1][2]] == ["set_state"]
    copy_ = pickle.loads(pickle.dumps(system))
    np.testing.assert_array_equal(copy_.state, system.state)
    a = marsden.simulate(system, scene.dt, 20, t0=1.0).values
    b = marsden.simulate(copy_, scene.dt, 20, t0=1.0).values
    assert a.tobytes() == b.tobytes()


def test_scenes_and_problems_copy_as_their_text():
    scene = marsden.load_scene(SCENES / "double_pendulum.json")
    for twin in (pickle.loads(pickle.dumps(scene)), copy.deepcopy(scene)):
        assert (twin.file, twin.dt, twin.steps, twin.system_type) == (
            scene.file, scene.dt, scene.steps, scene.system_type)
        a = marsden.simulate(marsden.make_system(scene), scene.dt, 50).values
        b = marsden.simulate(marsden.make_system(twin), twin.dt, 50).values
        assert a.tobytes() == b.tobytes()
    problem = marsden.load_problem(ROOT / "examples" / "problems" / "cart_pole_swing_up.json")
    twin = pickle.loads(pickle.dumps(problem))
    assert (twin.name, twin.num_variables, twin.num_constraints) == (
        problem.name, problem.num_variables, problem.num_constraints)


def test_what_cannot_be_replayed_is_named():
    scene = marsden.load_scene(SCENES / "cart_pole.json")
    feedback = marsden.Feedback(lambda t, x: [0.0], inputs=1)
    system = marsden.make_system(scene, controls=feedback)
    marsden.simulate(system, scene.dt, 5, feedback=feedback)
    with pytest.raises(TypeError, match="closed loop"):
        pickle.dumps(system)
    # A system made with a signal of Python code pickles only if the code does.
    driven = marsden.make_system(scene, controls=lambda t: [0.1 * t])
    with pytest.raises((TypeError, pickle.PicklingError, AttributeError)):
        pickle.dumps(driven)


def _built_cart_pole():
    from marsden import tree

    b = tree.Builder()
    b.frame("cart", type="ty", coordinate="y", mass=1.0)
    b.frame("pole", "cart", type="rx", coordinate="theta")
    b.frame("bob", "pole", type="tz", value=-0.5, mass=0.3)
    b.damper("theta", 0.05)
    b.force_input("y")
    return b.build()


def test_models_and_mechanisms_copy_as_the_calls_that_made_them():
    from marsden import maximal, tree

    urdf = ROOT / "examples" / "urdf" / "double_pendulum.urdf"
    for made in (_built_cart_pole(), tree.n_link_pendulum(3, length=0.5), tree.four_bar(),
                 tree.model_from_urdf(urdf), tree.with_potentials(tree.n_link_pendulum(2))):
        twin = pickle.loads(pickle.dumps(made))
        assert (twin.coordinates, twin.frames, twin.num_inputs, twin.num_constraint_rows) == (
            made.coordinates, made.frames, made.num_inputs, made.num_constraint_rows)
    for made in (maximal.pendulum_chain(3, joint="spherical"), maximal.closed_chain(3),
                 maximal.four_bar_chain(2), maximal.minitaur_leg(),
                 maximal.mechanism_from_urdf(urdf)):
        twin = copy.deepcopy(made)
        assert (twin.bodies, twin.joints) == (made.bodies, made.joints)
    # A model the user made by hand from the low-level builder names what it lacks.
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(marsden._core.tree.ModelBuilder().build())


def test_systems_of_python_models_continue_bit_for_bit_in_another_process():
    from marsden import maximal, tree

    systems = [tree.system(_built_cart_pole(), {"theta": 0.4}, method="midpoint"),
               maximal.system(maximal.pendulum_chain(4), dampers={"joint2": 0.05},
                              qd={"joint0": 1.0}, dt=0.01)]
    for system in systems:
        marsden.simulate(system, 0.01, 25)
        blob = pickle.dumps(system)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            theirs = pool.apply(_continue, (blob, 0.01, 0.25))
        assert theirs.tobytes() == marsden.simulate(system, 0.01, 40, t0=0.25).values.tobytes()


def _ramp(t):
    return [0.5 * t, 1.0 - t]


def test_signals_copy_as_the_factories_that_made_them():
    times = [0.0, 0.5, 1.0]
    held = marsden.HeldInput(2)
    held.set([0.25, -1.0])
    signals = [marsden.Signal.constant([1.0, -2.0]),
               marsden.Signal.table(times, [[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]),
               marsden.Signal.table(times, [[0.0], [2.0], [1.0]], hold="zero_order"),
               marsden.Signal.sinusoid([0.1], [2.0], [0.5], [0.3]),
               marsden.Signal.function(_ramp, 2), held]
    for signal in signals:
        for twin in (pickle.loads(pickle.dumps(signal)), copy.deepcopy(signal)):
            assert type(twin) is type(signal) and repr(twin) == repr(signal)
            assert twin.size == signal.size and twin.zero_order_hold == signal.zero_order_hold
            for t in (0.0, 0.3, 0.75, 2.0):
                assert np.array_equal(twin(t), signal(t)), (signal, t)
    with pytest.raises((TypeError, pickle.PicklingError, AttributeError)):
        pickle.dumps(marsden.Signal.function(lambda t: [t], 1))
    # A system driven by a signal that pickles pickles too, and continues bit for bit.
    scene = marsden.load_scene(SCENES / "cart_pole.json")
    driven = marsden.make_system(scene, controls=marsden.Signal.sinusoid([0.0], [3.0], [0.5]))
    marsden.simulate(driven, scene.dt, 20)
    twin = pickle.loads(pickle.dumps(driven))
    a = marsden.simulate(driven, scene.dt, 30, t0=20 * scene.dt)
    b = marsden.simulate(twin, scene.dt, 30, t0=20 * scene.dt)
    assert np.array_equal(a.values, b.values)
