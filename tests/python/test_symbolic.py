"""marsden.symbolic (docs/own-system.md): vehicles written as CasADi expressions, compiled
and loaded into the C++ core. The helicopter written symbolically against the hand-written
model; a quadrotor in wind (an example system) against finite differences, its convergence
order, its energy, and DMOC through a window; the compile cache; errors before stepping.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it).
Compiled models go to a fresh cache folder per test session.
"""

import json
import re

import numpy as np
import pytest

casadi = pytest.importorskip("casadi")
import marsden  # noqa: E402
from marsden import symbolic as sym  # noqa: E402
from residual_checks import assert_residual_jacobians_match_central_differences  # noqa: E402

ca = casadi


# --- the models (marsden.symbolic's zoo) -----------------------------------------------------

@pytest.fixture(scope="session")
def heli():
    return sym.helicopter()


@pytest.fixture(scope="session")
def quad_in_wind():
    return sym.quadrotor(wind=(2.0, -1.0, 0.5), linear_damping=0.3, quadratic_damping=0.05,
                     angular_damping=0.002, name="quadrotor_wind")


@pytest.fixture(scope="session")
def quad():
    return sym.quadrotor()


def rotation(w):
    """exp(w^) by Rodrigues' formula."""
    w = np.asarray(w, dtype=float)
    a = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if a == 0.0:
        return np.eye(3)
    return np.eye(3) + np.sin(a) / a * K + (1 - np.cos(a)) / a**2 * K @ K


HELI_STATE = {"position": [0.5, -1.0, 5.0], "orientation": {"rpy": [0.1, -0.2, 0.3]},
              "angular_velocity": [0.3, -0.2, 0.5], "linear_velocity": [1.0, 0.5, -0.2]}


def heli_controls(t):
    return [49.05 + 3.0 * np.sin(2.0 * t), 0.4 * np.cos(1.5 * t)]


def heli_shape(t):
    return [0.1 * np.sin(t), -0.08 * np.cos(0.7 * t)]


# --- the helicopter against the hand-written model -----------------------------------------

def test_symbolic_helicopter_flies_the_hand_written_trajectory(heli):
    kwargs = dict(initial_state=HELI_STATE, controls=heli_controls, shape=heli_shape)
    hand = marsden.vehicles.system("helicopter", **kwargs)
    mine = heli.system(**kwargs)
    a = marsden.simulate(hand, dt=0.01, steps=300)
    b = marsden.simulate(mine, dt=0.01, steps=300)
    assert a.ok and b.ok and a.columns == b.columns
    for name in ("position", "quaternion", "angular_velocity", "linear_velocity", "energy"):
        np.testing.assert_allclose(b[name], a[name], rtol=0, atol=1e-12, err_msg=name)
    assert np.abs(a["position"] - a["position"][0]).max() > 1.0  # it did fly somewhere


def test_symbolic_helicopter_has_the_hand_written_residual_jacobians(heli):
    kwargs = dict(initial_state=HELI_STATE, controls=heli_controls, shape=heli_shape)
    for integrator in ({"map": "cay", "tangent": "tln"}, {"map": "exp", "tangent": "exact"}):
        hand = marsden.vehicles.system("helicopter", integrator=integrator, **kwargs)
        mine = heli.system(integrator=integrator, **kwargs)
        dt = 0.02
        for k in range(3):
            for s in (hand, mine):
                assert s.step(k * dt, dt)
        t_k = 3 * dt
        z, delta, u = hand.residual_point(t_k, dt)
        z = z + 1e-3 * np.sin(np.arange(z.size) + 1.0)
        delta = 1e-3 * np.cos(np.arange(delta.size) + 2.0)
        a = hand.residual(t_k, dt, z, delta, u)
        b = mine.residual(t_k, dt, z, delta, u)
        np.testing.assert_allclose(b["r"], a["r"], rtol=0, atol=1e-10)
        for key in ("J_r_z", "J_r_state", "J_r_u"):
            assert a[key].shape == b[key].shape and a[key].size > 0
            np.testing.assert_allclose(b[key], a[key], rtol=0, atol=1e-10, err_msg=key)


# --- every generated derivative against central differences ---------------------------------

def check_generated_derivatives(model, rng, conservative):
    h = 1e-6
    for _ in range(3):
        gamma = 0.3 * rng.normal(size=model.num_shape)
        u = rng.normal(size=model.num_controls)
        f, J_u, J_g = model.control_wrench(gamma, u)
        for c in range(model.num_controls):
            e = np.eye(model.num_controls)[c] * h
            fd = (model.control_wrench(gamma, u + e)[0] - model.control_wrench(gamma, u - e)[0])
            np.testing.assert_allclose(J_u[:, c], fd / (2 * h), rtol=0, atol=1e-7)
        for c in range(model.num_shape):
            e = np.eye(model.num_shape)[c] * h
            fd = (model.control_wrench(gamma + e, u)[0] - model.control_wrench(gamma - e, u)[0])
            np.testing.assert_allclose(J_g[:, c], fd / (2 * h), rtol=0, atol=1e-7)

        t = rng.uniform(0, 2)
        Rm, p = rotation(rng.normal(size=3)), rng.normal(size=3)
        w, v = rng.normal(size=3), 3.0 * rng.normal(size=3)
        f, J_f_g, J_f_xi = model.external_wrench(t, Rm, p, w, v)
        scale = 1.0 + np.abs(f).max()
        for c in range(6):
            d = np.eye(6)[c] * h
            # g exp(d): R exp(d_theta^), p + R d_x (a right perturbation).
            plus = model.external_wrench(t, Rm @ rotation(d[:3]), p + Rm @ d[3:], w, v)[0]
            minus = model.external_wrench(t, Rm @ rotation(-d[:3]), p - Rm @ d[3:], w, v)[0]
            np.testing.assert_allclose(J_f_g[:, c], (plus - minus) / (2 * h), rtol=0,
                                       atol=1e-7 * scale, err_msg=f"J_f_g column {c}")
            xi = np.concatenate([w, v])
            plus = model.external_wrench(t, Rm, p, *np.split(xi + d, 2))[0]
            minus = model.external_wrench(t, Rm, p, *np.split(xi - d, 2))[0]
            np.testing.assert_allclose(J_f_xi[:, c], (plus - minus) / (2 * h), rtol=0,
                                       atol=1e-7 * scale, err_msg=f"J_f_xi column {c}")
        if conservative:  # then f_ext at rest is the potential's force, -dV(g exp(d))/dd
            f_rest = model.external_wrench(t, Rm, p, np.zeros(3), np.zeros(3))[0]
            for c in range(6):
                d = np.eye(6)[c] * h
                dV = (model.potential_energy(Rm @ rotation(d[:3]), p + Rm @ d[3:]) -
                      model.potential_energy(Rm @ rotation(-d[:3]), p - Rm @ d[3:]))
                assert abs(dV / (2 * h) + f_rest[c]) <= 1e-6 * scale, c


@pytest.fixture(scope="session")
def submarine():
    return sym.underwater_vehicle()


@pytest.fixture(scope="session")
def ideal_submarine():
    return sym.underwater_vehicle(linear_drag=[0] * 6, quadratic_drag=[0] * 6,
                                  name="underwater_vehicle_ideal")


def test_generated_derivatives_match_central_differences(heli, quad_in_wind, quad, submarine,
                                                         ideal_submarine):
    rng = np.random.default_rng(7)
    for model, conservative in ((heli, True), (quad_in_wind, False), (quad, True),
                                (submarine, False), (ideal_submarine, True)):
        check_generated_derivatives(model, rng, conservative)
    assert quad_in_wind.num_controls == 4 and quad_in_wind.num_shape == 0
    assert heli.num_controls == 2 and heli.num_shape == 2


QUAD_STATE = {"position": [0.0, 0.0, 2.0], "orientation": {"rpy": [0.2, -0.1, 0.4]},
              "angular_velocity": [1.0, -0.5, 2.0], "linear_velocity": [0.5, 0.2, 0.1]}
HOVER = 1.2 * 9.81 / 4


def quad_controls(t):
    return [HOVER + 0.3 * np.sin(3 * t), HOVER + 0.2 * np.sin(2 * t), HOVER - 0.1 * np.sin(t),
            HOVER + 0.1 * np.sin(4 * t)]


def test_quadrotor_residual_jacobians_match_central_differences(quad_in_wind):
    system = quad_in_wind.system(initial_state=QUAD_STATE, controls=quad_controls)
    dt = 0.02
    for k in range(3):
        assert system.step(k * dt, dt)
    t_k = 3 * dt
    assert_residual_jacobians_match_central_differences(system, t_k, dt, nonempty=True)


# --- the quadrotor's dynamics -------------------------------------------------------------

def final_pose(model, dt, T):
    # Level, with hover thrust at t_0 and no air velocity: the net wrench at t_0 vanishes,
    # so the scheme's start (p_0^+ = I xi_0, docs/own-system.md) is second-order consistent.
    # The configuration only: the velocity a run reports is I^-1 p_k^+ (first order under
    # forces).
    state = {"position": [0.0, 0.0, 2.0], "angular_velocity": [1.0, -0.5, 2.0]}
    system = model.system(initial_state=state, controls=quad_controls)
    run = marsden.simulate(system, dt=dt, steps=int(round(T / dt)))
    assert run.ok
    return np.concatenate([run["position"][-1], run["quaternion"][-1]])


def observed_orders(model):
    T = 1.0
    reference = final_pose(model, 1e-4, T)
    errors = [np.abs(final_pose(model, dt, T) - reference).max() for dt in (0.04, 0.02, 0.01)]
    return np.log2(np.array(errors[:-1]) / np.array(errors[1:])), errors


def test_quadrotor_converges_with_order_two(quad):
    orders, errors = observed_orders(quad)
    assert np.all((orders > 1.8) & (orders < 2.3)), (errors, orders)


def test_velocity_dependent_drag_makes_the_scheme_first_order():
    # Vehicles eq. (10) takes f_ext at (g_k, xi_k-1), the velocity of the previous interval:
    # a one-sided quadrature of a velocity-dependent force, so the drag costs an order.
    draggy = sym.quadrotor(linear_damping=0.3, quadratic_damping=0.05, angular_damping=0.002,
                           name="quadrotor_drag")
    orders, errors = observed_orders(draggy)
    assert np.all((orders > 0.8) & (orders < 1.2)), (errors, orders)


def energy_error(run):
    assert run.ok
    return np.abs(run["energy"] - run["energy"][0])


def test_quadrotor_without_input_keeps_its_energy_and_drag_only_takes_it():
    state = dict(QUAD_STATE, angular_velocity=[3.0, -2.0, 5.0])
    # Tumbling in zero gravity (a free body): energy to round-off.
    weightless = sym.quadrotor(gravity=0.0, name="quadrotor_weightless")
    run = marsden.simulate(weightless.system(initial_state=state, controls=[0] * 4),
                           dt=0.01, steps=2000)
    assert energy_error(run).max() < 1e-12 * run["energy"][0]
    # On a tether (a spring from (0, 0, 1) to a body point) under gravity: the potential's
    # forces, derived by Marsden, keep the energy error bounded, without drift over 20 s.
    F = np.zeros((6, 4))
    F[5] = 1.0
    stretch = sym.p - ca.DM([0, 0, 1]) + sym.R @ ca.DM([0.1, 0.05, 0.2])
    tethered = sym.HolonomicVehicle(
        "tethered", mass=1.2, J=[0.012, 0.014, 0.022], control_matrix=F,
        potential=1.2 * 9.81 * sym.p[2] + 10.0 * ca.dot(stretch, stretch))
    run = marsden.simulate(tethered.system(initial_state=state, controls=[0] * 4),
                           dt=0.01, steps=2000)
    error = energy_error(run)
    assert error.max() < 0.06 * run["energy"][0]
    assert error[1000:].max() < 1.2 * error[:1000].max()
    assert np.ptp(run["position"][:, 2]) > 1.0  # it does bounce
    # With drag in still air the energy only goes down.
    damped = sym.quadrotor(gravity=0.0, linear_damping=0.3, quadratic_damping=0.05,
                           angular_damping=0.002, name="quadrotor_drag_weightless")
    run = marsden.simulate(damped.system(initial_state=state, controls=[0] * 4),
                           dt=0.01, steps=500)
    assert run.ok
    assert np.all(np.diff(run["energy"]) < 0)
    assert run["energy"][-1] < 0.5 * run["energy"][0]


def test_underwater_vehicle_rights_itself_in_place(submarine, ideal_submarine):
    # Neutrally buoyant, buoyancy 5 cm above the centre of mass, released at rest with
    # 0.5 rad of roll and 0.3 rad of pitch: no net force, so (added mass or not) the centre
    # of mass stays where it is, while the buoyancy's torque swings the hull upright.
    state = {"position": [0.0, 0.0, -5.0], "orientation": {"rpy": [0.5, 0.3, 0.0]}}
    ideal = marsden.simulate(ideal_submarine.system(initial_state=state, controls=[0] * 3),
                             dt=0.05, steps=2000)
    assert ideal.ok
    np.testing.assert_allclose(ideal["position"], [[0.0, 0.0, -5.0]] * 2001, rtol=0,
                               atol=1e-9)
    # In ideal fluid it swings for ever: energy error bounded and without drift, never
    # more tilted than at the release.
    error = energy_error(ideal)
    assert error[1000:].max() < 1.2 * error[:1000].max()
    tilt = np.hypot(ideal["quaternion"][:, 1], ideal["quaternion"][:, 2])
    assert tilt.max() <= tilt[0] + 2e-3 and tilt.min() < 0.05
    # With drag it settles upright.
    damped = marsden.simulate(submarine.system(initial_state=state, controls=[0] * 3),
                              dt=0.05, steps=400)
    assert damped.ok
    np.testing.assert_allclose(damped["position"][-1], [0.0, 0.0, -5.0], rtol=0, atol=1e-9)
    assert np.hypot(*damped["quaternion"][-1, 1:3]) < 1e-3
    assert damped["energy"][-1] < damped["energy"][0] - 2.0


def test_quadrotor_flies_through_a_window_by_dmoc(quad):
    # A window in the plane x = 5: four bars (capsules) frame an opening 1.4 m wide
    # around (5, 0, 2); the quadrotor goes from hover at (0, -1, 1.5) to hover at (10, 1, 2.5).
    bars = [([5, -1, 1], [5, 1, 1]), ([5, -1, 3], [5, 1, 3]), ([5, -1, 1], [5, -1, 3]),
            ([5, 1, 1], [5, 1, 3])]
    problem = quad.problem({
        "name": "quadrotor_window",
        "dt": 0.1,
        "steps": 40,
        "initial_state": {"position": [0, -1, 1.5]},
        "final_state": {"position": [10, 1, 2.5], "at_rest": True},
        "bounds": {"controls": {"lower": [0] * 4, "upper": [8] * 4},
                   "position": {"lower": [-2, -1.5, 0.5], "upper": [12, 1.5, 3.5]}},
        "cost": {"control_weights": [1] * 4, "control_reference": [HOVER] * 4},
        "obstacles": [{"type": "capsule", "name": f"bar {i}", "a": a, "b": b, "radius": 0.3,
                       "margin": 0.1} for i, (a, b) in enumerate(bars)],
        "initial_guess": {"waypoints": [[5, 0, 2]], "controls": [HOVER] * 4},
    })
    solution = problem.solve()
    assert solution["ok"], solution["message"]
    assert solution["resimulation_error"] < 1e-6
    assert solution["min_clearance"] > -1e-6
    states = solution["states"]
    x, y, z = (states["values"][:, states["columns"].index(c)] for c in "xyz")
    assert x[-1] == pytest.approx(10.0, abs=1e-6)
    # Through the opening, not round the frame: where it crosses x = 5, inside the bars'
    # inner edges (1 - radius - margin = 0.6 from the centre).
    k = int(np.argmax(x >= 5.0))
    s = (5.0 - x[k - 1]) / (x[k] - x[k - 1])
    y_5, z_5 = y[k - 1] + s * (y[k] - y[k - 1]), z[k - 1] + s * (z[k] - z[k - 1])
    assert abs(y_5) < 0.6 and abs(z_5 - 2.0) < 0.6, (y_5, z_5)


# --- the compile cache ----------------------------------------------------------------------

def test_same_expressions_load_from_the_cache_and_changed_ones_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("MARSDEN_CACHE", str(tmp_path))
    first = sym.quadrotor(name="cached")
    assert first.compiled and first.compile_seconds > 0 and first.library.parent == tmp_path
    again = sym.quadrotor(name="cached")
    assert not again.compiled and again.library == first.library
    changed = sym.quadrotor(arm=0.3, name="cached")
    assert changed.compiled and changed.library != first.library
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [first.library.name, changed.library.name])  # no temporary files left


# --- errors before stepping -------------------------------------------------------------------

def test_bad_models_are_refused_naming_the_symbol():
    F = np.zeros((6, 1))
    F[5] = 1
    ok = dict(mass=1.0, J=[1, 1, 1], control_matrix=F)
    cases = [
        (dict(inertia=np.diag([1, 1, 1, 1, 1, 0.0])), "inertia: is singular"),
        (dict(inertia=np.eye(6) + np.triu(np.ones((6, 6)), 1)), "inertia: is not symmetric"),
        (dict(inertia=np.eye(3)), "inertia: expected shape 6 x 6, got 3 x 3"),
        (dict(inertia=np.full((6, 6), np.nan)), "inertia: contains NaN"),
        (dict(inertia=sym.p[0] * np.eye(6)), "inertia: must be numbers"),
        (dict(mass=-1.0, J=[1, 1, 1]), "mass: must be a finite number > 0"),
        (dict(mass=1.0, J=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), "J: is not symmetric"),
        (dict(ok, control_matrix=np.zeros((5, 2))), "control_matrix: expected shape 6 x n, "
                                                    "got 5 x 2"),
        (dict(ok, control_matrix=np.zeros((6, 9))), "control_matrix: expected 1..8 columns"),
        (dict(ok, external_wrench=sym.omega), "external_wrench: expected shape 6 x 1, got 3 x 1"),
        (dict(ok, external_wrench=ca.vertcat(sym.omega, ca.SX.sym("wind", 3))),
         "external_wrench: uses symbols other than t, R, p, omega, v: wind"),
        (dict(ok, potential=sym.omega[0]), "potential: uses symbols other than R, p: omega"),
        (dict(ok, potential=sym.p), "potential: expected shape 1 x 1, got 3 x 1"),
        (dict(ok, potential=1.0 / (sym.p[2] - sym.p[2])), "potential: V is not finite"),
        (dict(ok, control_matrix=F * float("nan")), "control_matrix: F(gamma) u is not finite"),
        (dict(ok, external_wrench=ca.vertcat(0, 0, 0, 0, 0, ca.sqrt(sym.p[2]))),
         "external_wrench or potential: its derivative in g is not finite"),
        (dict(ok, shape=ca.SX.sym("gamma", 2)), "shape: control_matrix does not depend on it"),
    ]
    for kwargs, message in cases:
        with pytest.raises(marsden.InputError, match=re.escape(message)):
            sym.HolonomicVehicle("bad", **kwargs)
    with pytest.raises(marsden.InputError, match="name"):
        sym.HolonomicVehicle("no spaces", **ok)


def test_missing_compiler_and_missing_library_are_clear_errors(monkeypatch, tmp_path):
    # The libraries below lie outside the cache, which checks its objects' names.
    monkeypatch.setenv("MARSDEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(marsden.InputError, match="no C compiler: '/nonexistent/cc'"):
        sym.quadrotor(name="nocc")
    scene = {"system": {"type": "generated", "library": str(tmp_path / "gone.so")},
             "dt": 0.01, "duration": 0.1}
    with pytest.raises(marsden.InputError, match="system.library.*gone.so': no such file"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    (tmp_path / "junk.so").write_text("not a shared object")
    scene["system"]["library"] = str(tmp_path / "junk.so")
    with pytest.raises(marsden.InputError, match="cannot be loaded"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)


def test_a_scene_file_names_the_generated_library(heli, tmp_path):
    scene = {"system": heli.scene_system(), "dt": 0.01, "duration": 0.5,
             "initial_state": HELI_STATE, "controls": {"type": "constant", "value": [49.05, 0.0]},
             "shape": {"type": "constant", "value": [0.05, 0.0]}}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    summary = marsden.run_scene(marsden.load_scene(path, allow_code=True), tmp_path / "out")
    assert summary["ok"] and (tmp_path / "out" / "trajectory.csv").is_file()


def test_threads_share_one_generated_model(quad_in_wind):
    # Batch rollouts run one loaded model on two threads: each run bit for bit alone.
    scene = marsden.parse_scene(json.dumps({
        "system": quad_in_wind.scene_system(), "dt": 0.01, "duration": 0.5,
        "controls": {"type": "constant", "value": [HOVER] * 4}}), allow_code=True)
    states = np.zeros((4, 13))
    states[:, 2] = 2.0
    states[:, 3] = 1.0
    states[:, 7:10] = np.arange(12.0).reshape(4, 3) / 4
    batch = marsden.rollout(scene, states, threads=2)
    assert batch.ok.all()
    for k in range(4):
        w = states[k, 7:10].tolist()
        alone = marsden.simulate(
            quad_in_wind.system(initial_state={"position": [0, 0, 2], "angular_velocity": w},
                                controls=[HOVER] * 4), dt=0.01, steps=50)
        np.testing.assert_array_equal(batch["position"][k], alone["position"])
        np.testing.assert_array_equal(batch["quaternion"][k], alone["quaternion"])


def test_a_wrench_that_turns_nan_stops_the_run_at_that_step():
    # sqrt(z + 1) is real above z = -1 only; falling through it must end the run there,
    # not continue from a residual whose NaN the solver's norm overlooked.
    F = np.zeros((6, 1))
    F[5] = 1.0
    model = sym.HolonomicVehicle("nan_below", mass=1.0, J=[1, 1, 1], control_matrix=F,
                                 potential=9.81 * sym.p[2],
                                 external_wrench=ca.vertcat(0, 0, 0, 0, 0,
                                                            ca.sqrt(sym.p[2] + 1)))
    run = marsden.simulate(model.system(initial_state={"position": [0, 0, 0.5]},
                                        controls=[0]), dt=0.01, steps=200)
    assert not run.ok and run.summary["status"] == "failed"
    assert np.all(np.isfinite(run.values))
    assert run["position"][-1, 2] > -1.0 - 0.1 and run["position"][-1, 2] < -1.0
    assert run.summary["failed_step"]["step"] < 200
