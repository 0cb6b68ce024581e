"""marsden.symbolic on SE(2) (docs/own-system.md, "Planar vehicles"): holonomic vehicles
written as CasADi expressions of the se2 symbols, compiled and loaded as
HolonomicModel<SE2>. The generated derivatives and residual Jacobians against central
differences; the hovercraft against the closed form of a thrust against linear drag; a
free planar body's energy and spatial momentum, and its motion against the hand-written
SE(3) rigid body's in the plane; the order under a time-varying input; a scene file naming
the library; a DMOC solve re-simulated; the errors.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it).
"""

import json

import numpy as np
import pytest

casadi = pytest.importorskip("casadi")
import marsden  # noqa: E402
from marsden import symbolic as sym  # noqa: E402
from residual_checks import assert_residual_jacobians_match_central_differences  # noqa: E402

ca = casadi
se2 = sym.se2


def rot(theta):
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


@pytest.fixture(scope="module")
def tethered():
    # Every argument used, so that each derivative has something to check: thrusters that
    # swivel (F(gamma)), a tether spring and a heading spring (a potential of theta and p),
    # drag, a crosswind that turns in time and a torque from the heading.
    gamma = sym.shape(1)
    c, s = ca.cos(gamma[0]), ca.sin(gamma[0])
    F = ca.vertcat(ca.horzcat(-0.2 * c, 0.2 * c + 0.1 * s), ca.horzcat(c, c), ca.horzcat(-s, s))
    wind = ca.vertcat(ca.cos(se2.t), 0.5 * ca.sin(2 * se2.t))
    v_air = se2.v - se2.R.T @ wind
    f_ext = ca.vertcat(-0.05 * se2.omega - 0.02 * ca.sin(se2.theta) * se2.x,
                       -0.4 * v_air - 0.1 * ca.sqrt(ca.dot(v_air, v_air) + 1e-4) * v_air)
    V = 0.5 * 3.0 * (se2.x**2 + se2.y**2) + 0.7 * (1 - ca.cos(se2.theta))
    return sym.PlanarVehicle("tethered_craft", inertia=[[0.06, 0.0, 0.01], [0.0, 2.0, 0.0],
                                                        [0.01, 0.0, 2.0]],
                             control_matrix=F, shape=gamma, external_wrench=f_ext, potential=V)


@pytest.fixture(scope="module")
def spring_craft():
    # Conservative and velocity-independent: a tether spring, time-varying thrusts.
    return sym.PlanarVehicle("spring_craft", mass=2.0, J=0.05,
                             control_matrix=[[-0.15, 0.15], [1, 1], [0, 0]],
                             potential=0.5 * 4.0 * (se2.x**2 + se2.y**2)
                             + 0.3 * (1 - ca.cos(se2.theta)))


@pytest.fixture(scope="module")
def free_body():
    # A general SPD inertia: the centre of mass off the pose's origin couples spin and drift.
    return sym.PlanarVehicle("free_planar", inertia=[[0.08, -0.03, 0.05], [-0.03, 1.5, 0.0],
                                                     [0.05, 0.0, 1.5]])


def test_generated_derivatives_match_central_differences(tethered):
    rng = np.random.default_rng(11)
    h = 1e-6
    for _ in range(4):
        gamma, u = 0.5 * rng.normal(size=1), rng.normal(size=2)
        f, J_u, J_gamma = tethered.control_wrench(gamma, u)
        for c in range(2):
            e = np.eye(2)[c] * h
            fd = tethered.control_wrench(gamma, u + e)[0] - tethered.control_wrench(gamma, u - e)[0]
            np.testing.assert_allclose(J_u[:, c], fd / (2 * h), rtol=0, atol=1e-7)
        fd = (tethered.control_wrench(gamma + h, u)[0] - tethered.control_wrench(gamma - h, u)[0])
        np.testing.assert_allclose(J_gamma[:, 0], fd / (2 * h), rtol=0, atol=1e-7)

        t, theta, p = rng.uniform(0, 3), rng.uniform(-3, 3), rng.normal(size=2)
        w, v = rng.normal(), 2.0 * rng.normal(size=2)
        f, J_f_g, J_f_xi = tethered.external_wrench(t, theta, p, w, v)
        scale = 1.0 + np.abs(f).max()
        for c in range(3):
            d = np.eye(3)[c] * h
            # g exp(d) to first order: theta + d_theta, p + R(theta) (d_1, d_2).
            plus = tethered.external_wrench(t, theta + d[0], p + rot(theta) @ d[1:], w, v)[0]
            minus = tethered.external_wrench(t, theta - d[0], p - rot(theta) @ d[1:], w, v)[0]
            np.testing.assert_allclose(J_f_g[:, c], (plus - minus) / (2 * h), rtol=0,
                                       atol=1e-7 * scale, err_msg=f"J_f_g column {c}")
            xi = np.concatenate([[w], v])
            plus = tethered.external_wrench(t, theta, p, (xi + d)[0], (xi + d)[1:])[0]
            minus = tethered.external_wrench(t, theta, p, (xi - d)[0], (xi - d)[1:])[0]
            np.testing.assert_allclose(J_f_xi[:, c], (plus - minus) / (2 * h), rtol=0,
                                       atol=1e-7 * scale, err_msg=f"J_f_xi column {c}")
    # Without the non-conservative part the wrench at rest is -dV(g exp(d))/dd.
    spring = sym.PlanarVehicle("tethered_potential_only", mass=2.0, J=0.06,
                               potential=0.5 * 3.0 * (se2.x**2 + se2.y**2)
                               + 0.7 * (1 - ca.cos(se2.theta)) + se2.x * ca.sin(se2.theta))
    for _ in range(3):
        theta, p = rng.uniform(-3, 3), rng.normal(size=2)
        f_rest = spring.external_wrench(0.0, theta, p, 0.0, np.zeros(2))[0]
        for c in range(3):
            d = np.eye(3)[c] * h
            dV = (spring.potential_energy(theta + d[0], p + rot(theta) @ d[1:]) -
                  spring.potential_energy(theta - d[0], p - rot(theta) @ d[1:]))
            assert abs(dV / (2 * h) + f_rest[c]) <= 1e-6, c
    assert abs(spring.potential_energy(0.4, [1.0, -2.0]) -
               (0.5 * 3.0 * 5.0 + 0.7 * (1 - np.cos(0.4)) + np.sin(0.4))) < 1e-14


def test_residual_jacobians_match_central_differences(tethered):
    for integrator in ({"map": "cay", "tangent": "tln"}, {"map": "exp", "tangent": "exact"}):
        system = tethered.system(
            integrator=integrator,
            initial_state={"theta": 2.5, "position": [0.3, -0.2], "angular_velocity": 0.7,
                           "linear_velocity": [0.4, -0.1]},
            controls=lambda t: [1.0 + 0.3 * np.sin(2 * t), 0.8], shape=lambda t: [0.2 * t])
        dt = 0.02
        for k in range(3):
            assert system.step(k * dt, dt)
        assert_residual_jacobians_match_central_differences(system, 3 * dt, dt, nonempty=True)


def hovercraft_run(craft, dt, T, theta0):
    thrust = 0.6  # N per thruster
    system = craft.system(initial_state={"theta": theta0}, controls=[thrust, thrust])
    run = marsden.simulate(system, dt=dt, steps=int(round(T / dt)))
    assert run.ok
    return run, 2 * thrust


def test_hovercraft_against_the_closed_form_of_thrust_against_drag():
    # From rest along its axis: m v' = F - c v, v(t) = (F/c)(1 - exp(-c t / m)), and the
    # distance s(t) = (F/c)(t - (m/c)(1 - exp(-c t / m))) along the heading. The drag
    # enters eq. (10) at the previous interval's velocity (one-sided), and the run starts
    # under a net force: first order (docs/own-system.md), so the errors must halve with dt.
    m, c, T, theta0 = 2.0, 0.8, 3.0, 0.7
    craft = sym.hovercraft(mass=m, J=0.05, drag=c, angular_drag=0.01, name="hovercraft_drag")
    errors = []
    for dt in (0.02, 0.01, 0.005):
        run, F = hovercraft_run(craft, dt, T, theta0)
        t = run["t"]
        v_exact = F / c * (1 - np.exp(-c * t / m))
        s_exact = F / c * (t - m / c * (1 - np.exp(-c * t / m)))
        pose, xi = run["pose"], run["body_velocity"]
        # Equal thrusts: no torque, no side force; the heading and the line are kept.
        assert np.abs(pose[:, 0] - theta0).max() < 1e-14
        assert np.abs(xi[:, [0, 2]]).max() < 1e-14
        along = pose[:, 1:] @ np.array([np.cos(theta0), np.sin(theta0)])
        across = pose[:, 1:] @ np.array([-np.sin(theta0), np.cos(theta0)])
        assert np.abs(across).max() < 1e-13
        errors.append(max(np.abs(xi[:, 1] - v_exact).max(), np.abs(along - s_exact).max()))
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    # The start's velocity offset dt F / (2 m), carried over T, bounds the error.
    assert errors[-1] < 0.005 * F / (2 * m) * T * 2, errors
    assert np.all((ratios > 1.8) & (ratios < 2.2)), (errors, ratios)


def test_free_planar_body_keeps_energy_and_spatial_momentum(free_body):
    system = free_body.system(initial_state={"theta": 0.3, "position": [1.0, -0.5],
                                             "angular_velocity": 2.5,
                                             "linear_velocity": [0.8, -0.3]})
    run = marsden.simulate(system, dt=0.01, steps=2000)
    assert run.ok
    energy = run["energy"]
    assert np.abs(energy - energy[0]).max() <= 1e-12 * energy[0]
    I = free_body.inertia
    mu = []
    for (theta, x, y), xi in zip(run["pose"], run["body_velocity"]):
        # Ad_g on (omega, v): (omega, R v + omega (y, -x)); the spatial momentum is
        # Ad_{g^-1}^T I xi = (Ad_g^-T) I xi.
        Ad = np.zeros((3, 3))
        Ad[0, 0] = 1.0
        Ad[1:, 0] = [y, -x]
        Ad[1:, 1:] = rot(theta)
        mu.append(np.linalg.solve(Ad.T, I @ xi))
    mu = np.array(mu)
    assert np.abs(mu - mu[0]).max() <= 1e-11 * np.abs(mu[0]).max(), np.abs(mu - mu[0]).max()
    assert run["pose"][-1, 0] > 40.0  # spun several turns: the heading column is unwrapped


def test_free_planar_body_moves_as_the_built_in_rigid_body_in_the_plane(free_body):
    # The hand-written SE(3) rigid body (scene type "rigid_body"), its inertia the planar one
    # on (omega_z, v_x, v_y) and no coupling out of the plane, started in the plane, stays in
    # it (the reflection z -> -z is a symmetry) and moves as the SE(2) body: the matrix
    # Cayley map and the exponential of se(2) are those of se(3) restricted to the plane.
    I6 = np.diag([0.1, 0.12, 0.0, 0.0, 0.0, 1.5])
    I6[np.ix_([2, 3, 4], [2, 3, 4])] = free_body.inertia
    theta0, p0, w0, v0 = 0.3, [1.0, -0.5], 2.5, [0.8, -0.3]
    for integrator in ({"map": "cay", "tangent": "tln"}, {"map": "exp", "tangent": "exact"}):
        scene = {"system": {"type": "rigid_body", "inertia": {"matrix": I6.tolist()}},
                 "dt": 0.01, "duration": 0.01, "integrator": integrator,
                 "initial_state": {"position": [*p0, 0.0], "orientation": {"rpy": [0, 0, theta0]},
                                   "angular_velocity": [0, 0, w0],
                                   "linear_velocity": [*v0, 0.0]}}
        spatial = marsden.simulate(marsden.make_system(marsden.parse_scene(json.dumps(scene),
                                                                           "rigid_body")),
                                   dt=0.01, steps=2000)
        planar = marsden.simulate(free_body.system(
            integrator=integrator, initial_state={"theta": theta0, "position": p0,
                                                  "angular_velocity": w0, "linear_velocity": v0}),
            dt=0.01, steps=2000)
        assert spatial.ok and planar.ok
        q = spatial["quaternion"]
        theta = np.unwrap(2 * np.arctan2(q[:, 3], q[:, 0]))
        assert np.abs(spatial["position"][:, 2]).max() == 0.0
        assert np.abs(theta - planar["pose"][:, 0]).max() < 1e-11
        assert np.abs(spatial["position"][:, :2] - planar["pose"][:, 1:]).max() < 1e-11
        assert np.abs(spatial["angular_velocity"][:, 2] - planar["body_velocity"][:, 0]).max() \
            < 1e-12
        assert np.abs(spatial["linear_velocity"][:, :2] - planar["body_velocity"][:, 1:]).max() \
            < 1e-12
        assert np.abs(spatial["energy"] - planar["energy"]).max() < 1e-13


def spring_final_pose(craft, dt, T):
    # The thrusts, the tether force and the heading spring vanish at t_0 (at the identity
    # pose): the start is second-order consistent (docs/own-system.md).
    system = craft.system(initial_state={"theta": 0.0, "angular_velocity": 0.5,
                                         "linear_velocity": [0.3, 0.1]},
                          controls=lambda t: [0.5 * np.sin(3 * t), 0.3 * np.sin(2 * t)])
    run = marsden.simulate(system, dt=dt, steps=int(round(T / dt)))
    assert run.ok
    return run["pose"][-1]


def test_converges_with_order_two_under_a_time_varying_input(spring_craft):
    T = 2.0
    reference = spring_final_pose(spring_craft, 1e-4, T)
    errors = [np.abs(spring_final_pose(spring_craft, dt, T) - reference).max()
              for dt in (0.04, 0.02, 0.01)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((orders > 1.8) & (orders < 2.3)), (errors, orders)


def test_a_scene_file_names_the_planar_library(spring_craft, tmp_path):
    scene = {"system": spring_craft.scene_system(), "dt": 0.01, "duration": 0.5,
             "initial_state": {"theta": 0.4, "position": [1.0, 0.5], "angular_velocity": 0.3,
                               "linear_velocity": [0.2, 0.0]},
             "controls": {"type": "constant", "value": [0.2, 0.1]}}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    out = tmp_path / "out"
    summary = marsden.run_scene(marsden.load_scene(path, allow_code=True), out)
    assert summary["ok"]
    header = (out / "trajectory.csv").read_text().splitlines()[0].split(",")
    assert header[:8] == ["t", "theta", "x", "y", "omega", "v1", "v2", "energy"], header
    # The same scene from Python: the same rows to the bit.
    run = marsden.simulate(spring_craft.system(initial_state=scene["initial_state"],
                                               controls=[0.2, 0.1]), dt=0.01, steps=50)
    rows = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(rows[-1, 1:4], run["pose"][-1])
    model = json.loads((out / "model.json").read_text())["model"]
    assert model["bodies"][0]["pose"] == {"planar": "pose"}


def test_rollout_takes_planar_initial_states(spring_craft):
    scene = marsden.parse_scene(json.dumps({
        "system": spring_craft.scene_system(), "dt": 0.01, "duration": 0.3,
        "controls": {"type": "constant", "value": [0.2, 0.1]}}), "planar.json", allow_code=True)
    assert marsden.initial_state_names(scene) == ["theta", "x", "y", "omega", "v1", "v2"]
    states = np.array([[0.4, 1.0, 0.5, 0.3, 0.2, 0.0], [-2.0, 0.0, -1.0, -1.0, 0.0, 0.5]])
    batch = marsden.rollout(scene, states, threads=2)
    assert batch.ok.all()
    for k, (theta, x, y, w, v1, v2) in enumerate(states):
        run = marsden.simulate(spring_craft.system(
            initial_state={"theta": theta, "position": [x, y], "angular_velocity": w,
                           "linear_velocity": [v1, v2]}, controls=[0.2, 0.1]),
            dt=0.01, steps=30)
        np.testing.assert_array_equal(batch["pose"][k], run["pose"])
        np.testing.assert_array_equal(batch["body_velocity"][k], run["body_velocity"])


def test_hovercraft_parks_round_a_post_by_dmoc(tmp_path):
    # From rest at the origin, heading 0, to rest at (3, 2) facing +y, round a post of
    # radius 0.4 m at (1.5, 1) on the straight line; reversible thrusters within +-1.5 N.
    craft = sym.hovercraft(drag=0.8, angular_drag=0.01, name="hovercraft_dmoc")
    problem = craft.problem({
        "name": "hovercraft_post", "dt": 0.1, "steps": 60,
        "initial_state": {"theta": 0.0},
        "final_state": {"position": [3, 2], "theta": np.pi / 2, "at_rest": True},
        "bounds": {"controls": {"lower": [-1.5, -1.5], "upper": [1.5, 1.5]}},
        "cost": {"control_weights": [1, 1]},
        "obstacles": [{"type": "sphere", "name": "post", "center": [1.5, 1.0], "radius": 0.4,
                       "margin": 0.1}],
        "initial_guess": {"waypoints": [[2.5, 0.3]]}})
    summary = marsden.run_problem(problem, tmp_path)
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-6
    assert summary["min_clearance"] > -1e-6
    # The scene run_problem writes re-simulates the optimum (the problem's planar initial
    # state taken as the scene's) and ends at the goal.
    scene = marsden.load_scene(tmp_path / "resimulate.json", allow_code=True)
    run = marsden.simulate(marsden.make_system(scene), dt=0.1, steps=60)
    assert run.ok
    np.testing.assert_allclose(run["pose"][-1], [np.pi / 2, 3.0, 2.0], atol=1e-6)
    np.testing.assert_allclose(run["body_velocity"][-1], 0.0, atol=1e-6)
    centre = np.array([1.5, 1.0])
    assert np.linalg.norm(run["pose"][:, 1:] - centre, axis=1).min() > 0.4


def test_planar_errors_name_the_symbol_and_shape(spring_craft, tmp_path):
    with pytest.raises(marsden.InputError, match=r"inertia: expected shape 3 x 3, got 6 x 6"):
        sym.PlanarVehicle("bad", inertia=np.eye(6))
    with pytest.raises(marsden.InputError, match=r"J: expected one number"):
        sym.PlanarVehicle("bad", mass=1.0, J=[0.1, 0.2, 0.3])
    with pytest.raises(marsden.InputError, match=r"control_matrix: expected shape 3 x n, got 6 x 2"):
        sym.PlanarVehicle("bad", mass=1.0, J=0.1, control_matrix=np.zeros((6, 2)))
    with pytest.raises(marsden.InputError, match=r"external_wrench: expected shape 3 x 1"):
        sym.PlanarVehicle("bad", mass=1.0, J=0.1, external_wrench=ca.vertcat(se2.v, se2.v))
    with pytest.raises(marsden.InputError, match=r"external_wrench: uses symbols other than"):
        sym.PlanarVehicle("bad", mass=1.0, J=0.1, external_wrench=ca.vertcat(0, sym.v[:2]))
    with pytest.raises(marsden.InputError, match=r"potential: uses symbols other than"):
        sym.PlanarVehicle("bad", mass=1.0, J=0.1, potential=sym.p[2])
    with pytest.raises(marsden.InputError, match=r"J: is singular"):
        sym.PlanarVehicle("bad", mass=1.0, J=0.0)
    # A planar problem file in the SE(3) vehicles' words is refused naming the field.
    with pytest.raises(marsden.InputError, match=r"final_state.position.*2"):
        marsden.parse_problem(json.dumps({
            "system": spring_craft.scene_system(), "dt": 0.1, "steps": 10,
            "initial_state": {}, "final_state": {"position": [1, 0, 0]}}), "planar.json",
            allow_code=True)
    with pytest.raises(marsden.InputError, match=r"heading"):
        marsden.parse_problem(json.dumps({
            "system": spring_craft.scene_system(), "dt": 0.1, "steps": 10,
            "initial_state": {}, "final_state": {"heading": 1.0}}), "planar.json",
            allow_code=True)
