"""marsden.symbolic.RdpVehicle (docs/own-system.md): nonholonomic vehicles on SE(2) for the
RDP integrator written as CasADi expressions, compiled and loaded into the C++ core. The
car, the snakeboard and the sleigh written symbolically against the hand-written models;
the roller racer (an example system) against finite differences, its energy, its
convergence order, its nonholonomic momentum (why it cannot park from rest) and DMOC (a
lane change, reverse parking); its joint damper and spring as shape forces (derivatives,
the spring as a force against the spring in l, energy balance, order); the
differential-drive robot against finite differences, closed-form straight runs and spins,
its energy and order; errors before stepping.

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
from marsden.symbolic import rdp  # noqa: E402
from residual_checks import assert_residual_jacobians_match_central_differences  # noqa: E402

ca = casadi


@pytest.fixture(scope="module")
def car():
    return rdp.car()


@pytest.fixture(scope="module")
def board():
    return rdp.snakeboard()


@pytest.fixture(scope="module")
def board_gait():
    return rdp.snakeboard(prescribe_shape=True, name="snakeboard_gait")


@pytest.fixture(scope="module")
def sleigh():
    return rdp.sleigh()


@pytest.fixture(scope="module")
def racer():
    return rdp.roller_racer()


# --- the car, the snakeboard and the sleigh against the hand-written models ----------------

def car_controls(t):
    return [0.4 * np.sin(1.3 * t), 0.5 * np.cos(0.8 * t)]  # torque f_psi, steering rate


def board_controls(t):
    return [0.3 * np.sin(2.0 * t), 0.2 * np.cos(1.5 * t)]


def snakeboard_w0(model, shape, shape_velocity, v1):
    """The locked velocity the built-in snakeboard's start computes from v1."""
    A, _ = model.connection(shape)
    E, _ = model.symmetry_basis(shape)
    return [(v1 + (A @ np.asarray(shape_velocity))[1]) / E[1, 0]]


def pairs(car, board, board_gait, sleigh):
    """(hand-written system kwargs, generated model, its initial state, controls)."""
    board_state = {"theta": 0.2, "x": 0.1, "y": -0.3, "psi": 0.1, "phi": 0.3}
    return [
        (dict(type="car", initial_state={"theta": 0.1, "x": 0.5, "y": -0.2, "psi": 0.2,
                                          "sigma": 0.1, "psi_dot": 1.5}),
         car, {"theta": 0.1, "x": 0.5, "y": -0.2, "shape": [0.2, 0.1],
               "shape_velocity": [1.5, 0.0]}, car_controls),
        (dict(type="snakeboard", initial_state={**board_state, "psi_dot": 0.5, "phi_dot": -0.2,
                                                "v1": 0.7}),
         board, {"theta": 0.2, "x": 0.1, "y": -0.3, "shape": [0.1, 0.3],
                 "shape_velocity": [0.5, -0.2],
                 "locked_velocity": snakeboard_w0(board, [0.1, 0.3], [0.5, -0.2], 0.7)},
         board_controls),
        (dict(type="snakeboard", actuation="velocity", initial_state={**board_state, "v1": 0.7}),
         board_gait, {"theta": 0.2, "x": 0.1, "y": -0.3, "shape": [0.1, 0.3],
                      "locked_velocity": snakeboard_w0(board_gait, [0.1, 0.3],
                                                       board_controls(0.0), 0.7)},
         board_controls),
        (dict(type="sleigh", initial_state={"theta": 0.3, "x": 0.0, "y": 1.0, "omega": 1.2,
                                             "v1": 0.8}),
         sleigh, {"theta": 0.3, "x": 0.0, "y": 1.0, "locked_velocity": [1.2, 0.8]},
         None),
    ]


INTEGRATORS = ({"method": "rdp"}, {"method": "rdp", "map": "exp", "tangent": "exact",
                                   "alpha": 0.3})


def test_symbolic_car_snakeboard_sleigh_follow_the_hand_written_trajectories(
        car, board, board_gait, sleigh):
    for hand_kwargs, model, state, controls in pairs(car, board, board_gait, sleigh):
        for integrator in INTEGRATORS:
            kwargs = dict(hand_kwargs)
            hand = marsden.vehicles.system(kwargs.pop("type"), integrator=integrator,
                                           controls=controls, **kwargs)
            mine = model.system(integrator=integrator, initial_state=state, controls=controls)
            a = marsden.simulate(hand, dt=0.01, steps=300)
            b = marsden.simulate(mine, dt=0.01, steps=300)
            assert a.ok and b.ok
            for name in ("pose", "shape", "shape_velocity", "body_velocity", "energy",
                         "constraint_violation"):
                np.testing.assert_allclose(b[name], a[name], rtol=0, atol=1e-12,
                                           err_msg=f"{model.name} {integrator} {name}")
            assert np.abs(a["pose"][-1] - a["pose"][0]).max() > 0.3  # it moved


def test_symbolic_car_snakeboard_sleigh_have_the_hand_written_residual_jacobians(
        car, board, board_gait, sleigh):
    for hand_kwargs, model, state, controls in pairs(car, board, board_gait, sleigh):
        for integrator in INTEGRATORS:
            kwargs = dict(hand_kwargs)
            hand = marsden.vehicles.system(kwargs.pop("type"), integrator=integrator,
                                           controls=controls, **kwargs)
            mine = model.system(integrator=integrator, initial_state=state, controls=controls)
            dt = 0.02
            for k in range(3):
                assert hand.step(k * dt, dt) and mine.step(k * dt, dt)
            t_k = 3 * dt
            z, delta, u = hand.residual_point(t_k, dt)
            z = z + 1e-3 * np.sin(np.arange(z.size) + 1.0)
            delta = 1e-3 * np.cos(np.arange(delta.size) + 2.0)
            a = hand.residual(t_k, dt, z, delta, u)
            b = mine.residual(t_k, dt, z, delta, u)
            np.testing.assert_allclose(b["r"], a["r"], rtol=0, atol=1e-10)
            for key in ("J_r_z", "J_r_state", "J_r_u"):
                assert a[key].shape == b[key].shape, (model.name, key)
                np.testing.assert_allclose(b[key], a[key], rtol=0, atol=1e-10,
                                           err_msg=f"{model.name} {key}")


# --- every generated derivative against central differences -------------------------------

def check_generated_derivatives(model, rng):
    nr, nb, h = model.num_shape, model.num_symmetry, 1e-6
    for _ in range(3):
        r, u, xi = rng.normal(size=nr), rng.normal(size=nr), rng.normal(size=3)
        z = np.concatenate([r, u, xi])
        split = lambda z: (z[:nr], z[nr:2 * nr], z[2 * nr:])  # noqa: E731
        l, g, H = model.lagrangian(r, u, xi)
        np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-14)
        for c in range(z.size):
            e = np.eye(z.size)[c] * h
            lp, gp, _ = model.lagrangian(*split(z + e))
            lm, gm, _ = model.lagrangian(*split(z - e))
            assert abs((lp - lm) / (2 * h) - g[c]) <= 1e-7 * (1 + abs(g[c])), (model.name, c)
            np.testing.assert_allclose(H[:, c], (gp - gm) / (2 * h), rtol=0, atol=1e-7,
                                       err_msg=f"{model.name} Hessian column {c}")
        A, dA = model.connection(r)
        E, dE = model.symmetry_basis(r)
        assert A.shape == (3, nr) and E.shape == (3, nb)
        for j in range(nr):
            e = np.eye(nr)[j] * h
            np.testing.assert_allclose(
                dA[j], (model.connection(r + e)[0] - model.connection(r - e)[0]) / (2 * h),
                rtol=0, atol=1e-7, err_msg=f"{model.name} dA/dr_{j}")
            np.testing.assert_allclose(
                dE[j], (model.symmetry_basis(r + e)[0] - model.symmetry_basis(r - e)[0]) / (2 * h),
                rtol=0, atol=1e-7, err_msg=f"{model.name} dE/dr_{j}")


def test_generated_derivatives_match_central_differences(racer, board, car):
    rng = np.random.default_rng(11)
    for model in (racer, board, car):
        check_generated_derivatives(model, rng)
    assert (racer.num_shape, racer.num_symmetry) == (1, 1)


RACER_STATE = {"theta": 0.2, "x": 0.0, "y": 0.0, "shape": [0.4], "shape_velocity": [0.8],
               "locked_velocity": [1.0]}


def racer_controls(t):
    return [0.3 * np.sin(2.0 * t)]  # joint torque, N m


def assert_step_jacobians_after_three_steps(vehicle, initial_state, controls):
    """With each integrator: three steps of 0.02 s, then the residual's Jacobians at the
    fourth against central differences."""
    for integrator in INTEGRATORS:
        system = vehicle.system(integrator=integrator, initial_state=initial_state,
                                controls=controls)
        dt = 0.02
        for k in range(3):
            assert system.step(k * dt, dt)
        assert_residual_jacobians_match_central_differences(system, 3 * dt, dt, nonempty=True)


def test_roller_racer_residual_jacobians_match_central_differences(racer):
    assert_step_jacobians_after_three_steps(racer, RACER_STATE, racer_controls)


# --- the roller racer's dynamics ------------------------------------------------------------

def test_roller_racer_keeps_its_constraints_and_energy_without_input(racer):
    """Unforced, the energy is conserved by the continuous system; RDP keeps it within
    O(dt^2) without drift, and the wheels' constraints hold to round-off."""
    errors = []
    for dt in (0.02, 0.01):
        run = marsden.simulate(racer.system(initial_state=RACER_STATE), dt=dt,
                               steps=int(round(20.0 / dt)))
        assert run.ok
        assert np.abs(run["constraint_violation"]).max() < 1e-12
        E = np.asarray(run["energy"]).reshape(-1)
        errors.append(np.abs(E - E[0]).max() / E[0])
        half = E.size // 2
        # no drift: the second half's spread no larger than the first's (plus a margin)
        assert np.ptp(E[half:]) <= 1.5 * np.ptp(E[:half]) + 1e-12
        assert np.abs(run["pose"][-1, 1:] - run["pose"][0, 1:]).max() > 0.5  # it moved
    assert errors[0] < 1e-2
    assert 3.0 < errors[0] / errors[1] < 5.0  # O(dt^2)


def test_roller_racer_converges_with_order_two(racer):
    def final(dt):
        run = marsden.simulate(racer.system(initial_state=RACER_STATE, controls=racer_controls),
                               dt=dt, steps=int(round(2.0 / dt)))
        assert run.ok
        return np.concatenate([run["pose"][-1], run["shape"][-1]])

    reference = final(2.5e-4)
    errors = [np.abs(final(dt) - reference).max() for dt in (0.04, 0.02, 0.01)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8), orders


def test_roller_racer_changes_lane_by_dmoc(racer, tmp_path):
    """DMOC: rolling straight ahead at 0.5 m/s, a sideways displacement of 0.5 m at the same
    heading and joint angle within 6 s, the joint torque bounded; the optimum re-simulated
    by RDP from the scene run_problem writes."""
    assert_changes_lane_by_dmoc(racer, tmp_path)


def assert_changes_lane_by_dmoc(racer, tmp_path):
    problem = racer.problem({
        "dt": 0.1, "steps": 60,
        "initial_state": {"shape": [0.0], "locked_velocity": [5.0]},
        "final_state": {"theta": 0.0, "y": 0.5, "shape": [0.0]},
        "bounds": {"controls": {"lower": [-5.0], "upper": [5.0]},
                   "shape": {"lower": [-1.2], "upper": [1.2]}},
        "cost": {"control_weights": [1.0]}})
    out = tmp_path / "lane"
    summary = marsden.run_problem(problem, out)
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-6
    marsden.run_scene(marsden.load_scene(out / "resimulate.json", allow_code=True), out / "again")
    run = json.loads((out / "again" / "summary.json").read_text())
    assert run["status"] == "ok" and run["system"] == "generated_rdp"
    pose = run["final_pose"]
    assert abs(pose["theta"]) < 1e-6 and abs(pose["y"] - 0.5) < 1e-6, pose
    assert pose["x"] > 1.0  # it rolled on while it moved over


def test_roller_racer_ends_at_a_final_shape_velocity_by_dmoc(racer, tmp_path):
    """A problem file's final_state.shape_velocity: rolling at 0.5 m/s, the joint ends
    turning at 0.4 rad/s; the re-simulation by RDP from the scene run_problem writes ends
    with that shape velocity (its last segment's, and (r_N - r_N-1) / dt)."""
    spec = {"dt": 0.1, "steps": 30,
            "initial_state": {"shape": [0.0], "locked_velocity": [5.0]},
            "final_state": {"shape_velocity": [0.4]},
            "bounds": {"controls": {"lower": [-5.0], "upper": [5.0]}},
            "cost": {"control_weights": [1.0]}}
    out = tmp_path / "turning"
    summary = marsden.run_problem(racer.problem(spec), out)
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-6
    marsden.run_scene(marsden.load_scene(out / "resimulate.json", allow_code=True), out / "again")
    run = np.load(out / "again" / "trajectory.npz")
    assert abs(run["shape_velocity"][-1, 0] - 0.4) < 1e-6
    assert abs((run["shape"][-1, 0] - run["shape"][-2, 0]) / 0.1 - 0.4) < 1e-6
    assert abs(run["shape_velocity"][0, 0] - 0.4) > 0.1  # it did change
    for final, message in [({"shape_velocity": [0.4, 0.1]}, "expected an array of 1 numbers"),
                           ({"shape_velocity": [0.4], "at_rest": True},
                            'give "at_rest" or a shape velocity, not both')]:
        with pytest.raises(marsden.InputError, match=re.escape(message)):
            racer.problem({**spec, "final_state": final})


def roller_racer_momentum_equation(m1=1.0, I1=0.1, m2=0.8, I2=0.08, d1=0.5, d2=0.4):
    """The roller racer's nonholonomic momentum p = <dl/dxi, e_1> and its rate, CasADi
    functions of (phi, u, w) on the constraints xi = e_1 w - A u, written here from the
    Lagrange-d'Alembert equations on SE(2), independently of RDP: the body momentum
    mu = dl/dxi obeys mu_dot = ad*_xi mu + a constraint force that annihilates e_1, so
    p_dot = <ad*_xi mu, e_1> + <mu, de_1/dphi> u, with ad*_xi mu = (v2 mu_1 - v1 mu_2,
    omega mu_2, -omega mu_1) for xi = (omega, v1, v2)."""
    phi, u, w = ca.SX.sym("phi"), ca.SX.sym("u"), ca.SX.sym("w")
    z = ca.SX.sym("xi", 3)
    w2 = z[0] + u
    V2 = ca.vertcat(z[1] + d2 * w2 * ca.sin(phi), z[2] + d1 * z[0] - d2 * w2 * ca.cos(phi))
    lag = 0.5 * (m1 * (z[1] ** 2 + z[2] ** 2) + I1 * z[0] ** 2 + m2 * ca.dot(V2, V2)
                 + I2 * w2 ** 2)
    n = ca.vertcat(d1 * ca.cos(phi) - d2, -ca.sin(phi), 0)
    e1 = ca.vertcat(ca.sin(phi), d1 * ca.cos(phi) - d2, 0)
    xi_c = e1 * w + d2 * n / ca.dot(n, n) * u
    mu = ca.substitute(ca.gradient(lag, z), z, xi_c)
    ad_star = ca.vertcat(xi_c[2] * mu[1] - xi_c[1] * mu[2], xi_c[0] * mu[2], -xi_c[0] * mu[1])
    p_dot = ca.dot(ad_star, e1) + ca.dot(mu, ca.jacobian(e1, phi)) * u
    return (ca.Function("p", [phi, u, w], [ca.dot(mu, e1)]),
            ca.Function("p_dot", [phi, u, w], [p_dot]))


def test_roller_racer_momentum_from_rest_stays_positive(racer):
    """p_dot = C(phi) u p + D(phi) u^2 with D > 0 for |phi| < pi, so from rest (p = 0)
    p(t) = exp(F(phi(t))) int_0^t exp(-F) D u^2 ds (F' = C) is positive as soon as the joint
    has moved, and rest (where p = 0) is never reached again: parallel parking from rest is
    infeasible (docs/own-system.md). Checked: the momentum equation against central
    differences of the momentum of an RDP run (O(dt^2)), D > 0, and p > 0 along the run."""
    p_of, p_dot_of = roller_racer_momentum_equation()
    for phi in np.linspace(-3.1, 3.1, 63):
        w_zero = -float(p_of(phi, 1.0, 0.0)) / float(p_of(phi, 0.0, 1.0))  # p = 0 at u = 1
        assert float(p_dot_of(phi, 1.0, w_zero)) > 0.0, phi  # D(phi)

    dt, steps = 0.002, 1500
    run = marsden.simulate(racer.system(initial_state={},
                                        controls=lambda t: [np.sin(3 * t) + 0.5 * np.cos(7 * t)]),
                           dt=dt, steps=steps)
    assert run.ok
    p, p_dot = np.zeros(steps), np.zeros(steps)
    for k in range(steps):  # segment k, at its midpoint shape r_k+1/2
        u_k = run["r0_dot"][k + 1]
        r_mid = run["r0"][k] + 0.5 * dt * u_k
        xi_k = np.array([run["omega"][k + 1], run["v1"][k + 1], run["v2"][k + 1]])
        p[k] = racer.momentum([r_mid], [u_k], xi_k)[0]
        A, _ = racer.connection([r_mid])
        E, _ = racer.symmetry_basis([r_mid])
        w_k = np.linalg.lstsq(E, xi_k + A[:, 0] * u_k, rcond=None)[0][0]
        p_dot[k] = float(p_dot_of(r_mid, u_k, w_k))
    np.testing.assert_allclose((p[2:] - p[:-2]) / (2 * dt), p_dot[1:-1], rtol=0,
                               atol=5e-5 * np.abs(p_dot).max())
    assert np.all(p > 0), p[:5]
    assert np.abs(run["pose"][-1]).max() > 0.05  # it moved


def test_roller_racer_reverse_parks_by_dmoc(racer, tmp_path):
    """DMOC: rolling backward at 0.5 m/s (p < 0), the racer stops 0.5 m to the side at the
    same heading and joint angle within 6 s, the joint torque bounded; the optimum
    re-simulated by RDP from the scene run_problem writes ends there at rest. From rest the
    same goal is out of reach (the test above), and Ipopt reports local infeasibility."""
    spec = {"dt": 0.1, "steps": 60,
            "initial_state": {"shape": [0.0], "locked_velocity": [-5.0]},
            "final_state": {"theta": 0.0, "y": 0.5, "shape": [0.0], "at_rest": True},
            "bounds": {"controls": {"lower": [-5.0], "upper": [5.0]},
                       "shape": {"lower": [-1.2], "upper": [1.2]}},
            "cost": {"control_weights": [1.0]}}
    out = tmp_path / "park"
    summary = marsden.run_problem(racer.problem(spec), out)
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-6
    marsden.run_scene(marsden.load_scene(out / "resimulate.json", allow_code=True), out / "again")
    run = json.loads((out / "again" / "summary.json").read_text())
    assert run["status"] == "ok" and run["system"] == "generated_rdp"
    pose = run["final_pose"]
    assert abs(pose["theta"]) < 1e-6 and abs(pose["y"] - 0.5) < 1e-6, pose
    rows = np.genfromtxt(out / "again" / "trajectory.csv", delimiter=",", names=True)
    assert rows["v1"][0] == pytest.approx(-0.5)  # it started rolling backward
    for name in ("r0", "r0_dot", "omega", "v1", "v2"):
        assert abs(rows[name][-1]) < 1e-6, (name, rows[name][-1])  # and ends at rest

    from_rest = racer.problem({**spec, "initial_state": {}}).solve()
    assert not from_rest["ok"] and from_rest["status"] == "infeasible", from_rest["status"]


# --- errors, before any stepping ------------------------------------------------------------

def test_errors_name_the_symbol_and_shape():
    r, u = rdp.shape(2)
    good = 0.5 * (u[0] ** 2 + u[1] ** 2 + rdp.omega ** 2 + rdp.v1 ** 2 + rdp.v2 ** 2)
    cases = [
        (dict(lagrangian=0.5 * (u[0] ** 2 + rdp.omega ** 2 + rdp.v1 ** 2 + rdp.v2 ** 2)),
         r"lagrangian: its kinetic metric .* singular .* along u\[1\]"),
        (dict(lagrangian=good - rdp.v2 ** 2), r"indefinite .* along v2"),
        (dict(lagrangian=ca.vertcat(good, good)), r"lagrangian: expected shape 1 x 1, got 2 x 1"),
        (dict(lagrangian=good, connection=ca.SX.zeros(3, 3)),
         r"connection: expected shape 3 x 2, got 3 x 3"),
        (dict(lagrangian=good, connection=ca.horzcat(u, u, u).T),
         r"connection: uses symbols other than r: u_0, u_1"),
        (dict(lagrangian=good, symmetry_basis=ca.horzcat(ca.vertcat(1, r[0], 0),
                                                         ca.vertcat(2, 2 * r[0], 0))),
         r"symmetry_basis: its 2 columns \(3 x 2\) are dependent"),
        (dict(lagrangian=good + 1 / (r[0] - 0.3)), r"lagrangian: l is not finite"),
        (dict(lagrangian=good, prescribed=[2]), r"prescribed: indices must lie in 0..1"),
        (dict(lagrangian=good, shape_force=[u[0]]),
         r"shape_force: expected shape 2 x 1, got 1 x 1"),
        (dict(lagrangian=good, shape_force=[-u[0], ca.SX.sym("c")]),
         r"shape_force: uses symbols other than r, u, xi: c"),
        (dict(lagrangian=good, shape_force=[1 / (r[0] - 0.3), 0]),
         r"shape_force: f_r is not finite at the probe point"),
    ]
    for kwargs, pattern in cases:
        with pytest.raises(marsden.InputError, match=pattern):
            sym.RdpVehicle("bad", shape=(r, u), **kwargs)
    with pytest.raises(marsden.InputError, match=r"shape: expected a number .* 1..4"):
        rdp.shape(5)
    with pytest.raises(marsden.InputError, match=r"shape_force: the vehicle has no shape"):
        sym.RdpVehicle("bad", lagrangian=ca.sumsqr(rdp.xi), shape_force=[0.0])
    with pytest.raises(marsden.InputError, match=r"roller_racer: damping .* must not be negative"):
        rdp.roller_racer(damping=-1.0)
    big = ca.SX.sym("r", 5), ca.SX.sym("u", 5)
    with pytest.raises(marsden.InputError, match=r"shape: n_r = 5, RDP takes at most 4"):
        sym.RdpVehicle("bad", shape=big, lagrangian=ca.sumsqr(big[1]) + ca.sumsqr(rdp.xi))


def test_scene_errors_name_the_field(racer, car, tmp_path):
    def scene(**fields):
        return json.dumps({"system": racer.scene_system(), "dt": 0.01, "duration": 0.1, **fields})

    with pytest.raises(marsden.InputError, match=r"initial_state.shape.*expected 1 numbers|1 number"):
        marsden.parse_scene(scene(initial_state={"shape": [0.1, 0.2]}), "s.json", allow_code=True)
    with pytest.raises(marsden.InputError, match=r"not available for this system"):
        marsden.parse_scene(scene(integrator={"method": "gni"}), "s.json", allow_code=True)
    car_scene = json.dumps({"system": car.scene_system(), "dt": 0.01, "duration": 0.1,
                            "initial_state": {"shape_velocity": [1.0, 0.5]}})
    with pytest.raises(marsden.InputError, match=r"entry 1 is a prescribed velocity"):
        marsden.parse_scene(car_scene, "s.json", allow_code=True)
    # The holonomic loader refuses the RDP object, and the RDP loader a holonomic one.
    wrong = json.dumps({"system": {"type": "generated", "library": str(racer.library)},
                        "dt": 0.01, "duration": 0.1})
    with pytest.raises(marsden.InputError, match=r"no entry point 'marsden_abi_version'"):
        marsden.parse_scene(wrong, "s.json", allow_code=True)
    heli = sym.helicopter()
    wrong = json.dumps({"system": {"type": "generated_rdp", "library": str(heli.library)},
                        "dt": 0.01, "duration": 0.1})
    with pytest.raises(marsden.InputError, match=r"no entry point 'marsden_rdp_abi_version'"):
        marsden.parse_scene(wrong, "s.json", allow_code=True)


# --- the roller racer with a damper and a spring at its joint (shape forces) -----------------

JOINT = dict(damping=0.3, stiffness=2.0, rest_angle=0.1)


@pytest.fixture(scope="module")
def racer_joint():
    return rdp.roller_racer(**JOINT, name="roller_racer_joint")


@pytest.fixture(scope="module")
def racer_springs():
    """The same spring as a shape force -dV/dr and as a potential in l - V."""
    spring = dict(stiffness=2.0, rest_angle=0.1)
    return (rdp.roller_racer(**spring, name="roller_racer_spring_force"),
            rdp.roller_racer(**spring, joint_potential=True, name="roller_racer_spring_potential"))


def joint_potential(run, dt):
    """V = k/2 (r - r0)^2 where a run's energy is evaluated: at the last segment's
    quadrature point r_k + alpha dt u_k = r_k+1 - (1 - alpha) dt u_k (alpha = 1/2), r_0 at
    the start."""
    r = np.asarray(run["shape"]).reshape(-1).copy()
    r[1:] -= 0.5 * dt * np.asarray(run["shape_velocity"]).reshape(-1)[1:]
    return 0.5 * JOINT["stiffness"] * (r - JOINT["rest_angle"]) ** 2


def test_shape_force_derivatives_and_residual_jacobians(racer_joint, racer):
    """The generated f_r and df_r/d(r, u, xi) against the expression and central
    differences; the residual's Jacobians with the force; an object without the optional
    entry (the plain racer) reports none."""
    assert "marsden_rdp_shape_force" not in racer.source and not racer.has_shape_force
    f, J = racer.shape_force([0.3], [0.2], [0.1, 0.5, -0.2])
    assert f.shape == (1,) and J.shape == (1, 5) and not f.any() and not J.any()
    rng, h = np.random.default_rng(5), 1e-6
    for _ in range(3):
        z = rng.normal(size=5)
        split = lambda z: (z[:1], z[1:2], z[2:])  # noqa: E731
        f, J = racer_joint.shape_force(*split(z))
        c, k, r0 = JOINT["damping"], JOINT["stiffness"], JOINT["rest_angle"]
        assert abs(f[0] - (-c * z[1] - k * (z[0] - r0))) <= 1e-14
        for col in range(5):
            e = np.eye(5)[col] * h
            fd = (racer_joint.shape_force(*split(z + e))[0]
                  - racer_joint.shape_force(*split(z - e))[0]) / (2 * h)
            np.testing.assert_allclose(J[:, col], fd, rtol=0, atol=1e-8)
    assert_step_jacobians_after_three_steps(racer_joint, RACER_STATE, racer_controls)


def test_spring_as_shape_force_equals_spring_as_potential(racer_springs):
    """Both enter RDP's shape equation at r_k+alpha with the same weights: the same
    trajectory to the Newton tolerance; the reported energies differ by V(r) exactly as
    l does."""
    as_force, as_potential = racer_springs
    runs = [marsden.simulate(v.system(initial_state=RACER_STATE, controls=racer_controls),
                             dt=0.02, steps=200) for v in racer_springs]
    assert all(run.ok for run in runs)
    for column in ("pose", "shape", "shape_velocity", "body_velocity"):
        np.testing.assert_allclose(runs[0][column], runs[1][column], rtol=0, atol=1e-10,
                                   err_msg=column)
    E_force = np.asarray(runs[0]["energy"]).reshape(-1)
    E_potential = np.asarray(runs[1]["energy"]).reshape(-1)
    np.testing.assert_allclose(E_force + joint_potential(runs[0], 0.02), E_potential,
                               rtol=0, atol=1e-10)
    assert np.ptp(runs[0]["shape"]) > 0.2  # the spring swung the joint


def test_joint_damper_dissipates_and_spring_keeps_energy(racer_joint, racer_springs):
    """Unforced: with the damper, E + V falls by the dissipated work int c u^2 dt (the
    balance holds to O(dt^2)); with the spring alone, E + V stays within O(dt^2) of its
    start without drift."""
    balance, spread = [], []
    for dt in (0.02, 0.01):
        steps = int(round(10.0 / dt))
        run = marsden.simulate(racer_joint.system(initial_state=RACER_STATE), dt=dt, steps=steps)
        assert run.ok
        total = np.asarray(run["energy"]).reshape(-1) + joint_potential(run, dt)
        u = np.asarray(run["shape_velocity"]).reshape(-1)
        # row k > 0 holds segment k-1's velocities and energy, at its midpoint (k - 1/2) dt:
        # the dissipated work up to there by the trapezoidal rule over those times
        t = np.concatenate([[0.0], (np.arange(1, u.size) - 0.5) * dt])
        power = JOINT["damping"] * u ** 2
        dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(t))])
        # the damper takes a third of the energy (the rolling motion it cannot reach stays)
        assert dissipated[-1] > 0.3 * total[0]
        balance.append(np.abs(total + dissipated - total[0]).max() / total[0])

        run = marsden.simulate(racer_springs[0].system(initial_state=RACER_STATE), dt=dt,
                               steps=steps)
        assert run.ok
        total = np.asarray(run["energy"]).reshape(-1) + joint_potential(run, dt)
        half = total.size // 2
        assert np.ptp(total[half:]) <= 1.5 * np.ptp(total[:half]) + 1e-12
        spread.append(np.abs(total - total[0]).max() / total[0])
    assert balance[0] < 1e-2 and spread[0] < 1e-2, (balance, spread)
    assert 3.0 < balance[0] / balance[1] < 5.0, balance  # O(dt^2)
    assert 3.0 < spread[0] / spread[1] < 5.0, spread


def test_roller_racer_with_joint_forces_changes_lane_by_dmoc(racer_joint, tmp_path):
    """DMOC's constraints carry the shape force as the simulation does: the lane change
    of the plain racer, against the joint's spring and damper, re-simulated by RDP."""
    assert_changes_lane_by_dmoc(racer_joint, tmp_path)


def test_roller_racer_with_joint_forces_converges_with_order_two(racer_joint):
    def final(dt):
        run = marsden.simulate(racer_joint.system(initial_state=RACER_STATE,
                                                  controls=racer_controls),
                               dt=dt, steps=int(round(2.0 / dt)))
        assert run.ok
        return np.concatenate([run["pose"][-1], run["shape"][-1]])

    reference = final(5e-4)
    errors = [np.abs(final(dt) - reference).max() for dt in (0.04, 0.02, 0.01)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8), orders


# --- the differential-drive robot -----------------------------------------------------------

DRIVE = dict(m=2.0, I=0.05, I_w=0.002, rho=0.05, b=0.15)


@pytest.fixture(scope="module")
def drive():
    """Centre of mass on the axle (d = 0): straight runs and spins have closed forms."""
    return rdp.differential_drive(**DRIVE, d=0.0, name="diff_drive_centred")


@pytest.fixture(scope="module")
def drive_offset():
    """Centre of mass 5 cm ahead of the axle: translation and turning couple."""
    return rdp.differential_drive(**DRIVE, d=0.05, name="diff_drive_offset")


DRIVE_STATE = {"theta": 0.3, "x": 0.1, "y": -0.2, "shape": [0.2, -0.1],
               "shape_velocity": [4.0, 9.0]}


def drive_controls(t):
    return [0.02 * np.sin(1.5 * t), 0.03 * np.cos(2.0 * t)]  # wheel torques (L, R), N m


def test_differential_drive_derivatives_and_residual_jacobians(drive_offset):
    check_generated_derivatives(drive_offset, np.random.default_rng(12))
    assert (drive_offset.num_shape, drive_offset.num_symmetry) == (2, 0)
    assert_step_jacobians_after_three_steps(drive_offset, DRIVE_STATE, drive_controls)


def test_differential_drive_straight_and_spin_follow_the_closed_forms(drive):
    """d = 0, constant torques from rest. The reduced Lagrangian l(u, -A u) = 1/2 u^T M u
    has a constant M and the curvature term vanishes, so M u_dot = tau: equal torques tau
    drive straight with a = 2 tau / (rho (m + 2 I_w / rho^2)), opposite ones (-tau, tau)
    spin in place with alpha = 2 tau b / (rho (I + 2 I_w b^2 / rho^2)). For uniformly
    accelerated shape motion RDP with alpha = 1/2 is exact: its velocity on step k is the
    true one at the step's midpoint, so the wheel angles, x along a straight line, and
    theta where the pose update is theta + dt omega (map exp) are exact at the nodes; the
    Cayley map turns by 2 atan(dt omega / 2), an O(dt^2) error. (alpha != 1/2 weighs the
    forces unevenly, an O(dt) error: only alpha = 1/2 is tested here.)"""
    m, I, I_w, rho, b = (DRIVE[k] for k in ("m", "I", "I_w", "rho", "b"))
    tau, T, theta0 = 0.01, 2.0, 0.4
    a = 2 * tau / (rho * (m + 2 * I_w / rho ** 2))
    alpha = 2 * tau * b / (rho * (I + 2 * I_w * b ** 2 / rho ** 2))
    start = {"theta": theta0, "x": 0.5, "y": -0.3}
    for integrator in ({"method": "rdp"}, {"method": "rdp", "map": "exp", "tangent": "exact"}):
        dt = 0.01
        t = np.arange(int(round(T / dt)) + 1) * dt
        run = marsden.simulate(drive.system(integrator=integrator, initial_state=start,
                                            controls=lambda t: [tau, tau]),
                               dt=dt, steps=t.size - 1)
        assert run.ok
        s = 0.5 * a * t ** 2
        exact = np.column_stack([np.full_like(t, theta0), 0.5 + s * np.cos(theta0),
                                 -0.3 + s * np.sin(theta0)])
        np.testing.assert_allclose(run["pose"], exact, rtol=0, atol=1e-12)
        np.testing.assert_allclose(run["shape"], np.column_stack([s, s]) / rho, rtol=0,
                                   atol=1e-11)
        midpoint_rate = a * (t[1:] - 0.5 * dt) / rho  # the velocity a row reports: its step's
        np.testing.assert_allclose(run["shape_velocity"][1:], np.column_stack(
            [midpoint_rate, midpoint_rate]), rtol=0, atol=1e-11)
        assert s[-1] > 0.2  # it drove

        spins = []
        for dt in (0.02, 0.01):
            t = np.arange(int(round(T / dt)) + 1) * dt
            run = marsden.simulate(drive.system(integrator=integrator, initial_state=start,
                                                controls=lambda t: [-tau, tau]),
                                   dt=dt, steps=t.size - 1)
            assert run.ok
            np.testing.assert_allclose(run["pose"][:, 1:], [[0.5, -0.3]] * t.size, rtol=0,
                                       atol=1e-13)
            phi = 0.5 * alpha * t ** 2 * b / rho
            np.testing.assert_allclose(run["shape"], np.column_stack([-phi, phi]), rtol=0,
                                       atol=1e-11)
            spins.append(np.abs(run["pose"][:, 0] - theta0 - 0.5 * alpha * t ** 2).max())
        if integrator.get("map") == "exp":
            assert max(spins) < 1e-12, spins
        else:
            assert 1e-6 < spins[0] < 1e-2 and 3.5 < spins[0] / spins[1] < 4.5, spins
        assert 0.5 * alpha * T ** 2 > 1.0  # it turned


def test_differential_drive_keeps_energy_and_constraints_and_converges(drive_offset):
    """Unforced (d = 0.05, so the motion is not trivial), energy within O(dt^2) without
    drift; xi = -A(r) u to round-off, checked against A itself; order 2 against a tiny step
    under time-varying torques."""
    A, _ = drive_offset.connection([0.0, 0.0])
    errors = []
    for dt in (0.02, 0.01):
        run = marsden.simulate(drive_offset.system(initial_state=DRIVE_STATE), dt=dt,
                               steps=int(round(10.0 / dt)))
        assert run.ok
        assert np.abs(run["constraint_violation"]).max() < 1e-12
        np.testing.assert_allclose(run["body_velocity"], -run["shape_velocity"] @ A.T,
                                   rtol=0, atol=1e-12)
        E = np.asarray(run["energy"]).reshape(-1)
        errors.append(np.abs(E - E[0]).max() / E[0])
        half = E.size // 2
        assert np.ptp(E[half:]) <= 1.5 * np.ptp(E[:half]) + 1e-12
        assert abs(run["pose"][-1, 0] - run["pose"][0, 0]) > 1.0  # it turned
    assert errors[0] < 1e-2
    assert 3.0 < errors[0] / errors[1] < 5.0, errors

    def final(dt):
        run = marsden.simulate(drive_offset.system(initial_state=DRIVE_STATE,
                                                   controls=drive_controls),
                               dt=dt, steps=int(round(2.0 / dt)))
        assert run.ok
        return np.concatenate([run["pose"][-1], run["shape"][-1]])

    reference = final(2.5e-4)
    errors = [np.abs(final(dt) - reference).max() for dt in (0.04, 0.02, 0.01)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8), orders


def test_differential_drive_refuses_bad_parameters():
    for kwargs, pattern in [(dict(rho=0.0), r"rho must be positive, got 0.0"),
                            (dict(b=float("nan")), r"b must be a finite number"),
                            (dict(m=2.0, I=0.01, d=0.1), r"I = 0.01 must exceed m d\^2")]:
        with pytest.raises(marsden.InputError, match=pattern):
            rdp.differential_drive(**kwargs)


def test_differential_drive_turns_to_a_goal_pose_by_dmoc(drive_offset, tmp_path):
    """DMOC: from rest at the origin to (0.5, 0.5) m facing +y, at rest, in 4 s with the
    wheel torques bounded; the optimum re-simulated by RDP from the scene run_problem
    writes ends on the goal."""
    problem = drive_offset.problem({
        "dt": 0.1, "steps": 40, "initial_state": {},
        "final_state": {"theta": np.pi / 2, "x": 0.5, "y": 0.5, "at_rest": True},
        "bounds": {"controls": {"lower": [-0.05, -0.05], "upper": [0.05, 0.05]}},
        "cost": {"control_weights": [1.0, 1.0]}})
    out = tmp_path / "goal"
    summary = marsden.run_problem(problem, out)
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-6
    marsden.run_scene(marsden.load_scene(out / "resimulate.json", allow_code=True), out / "again")
    run = json.loads((out / "again" / "summary.json").read_text())
    assert run["status"] == "ok" and run["system"] == "generated_rdp"
    pose = run["final_pose"]
    assert abs(pose["theta"] - np.pi / 2) < 1e-6, pose
    assert abs(pose["x"] - 0.5) < 1e-6 and abs(pose["y"] - 0.5) < 1e-6, pose
