"""marsden.symbolic.NonholonomicSystem (docs/own-system.md): systems in full coordinates
written as a Lagrangian and constraints, compiled and loaded into the C++ GNI and RATTLE.
The sleigh and the snakeboard written symbolically against the hand-written models (the
same trajectories and residual Jacobians), the car against the hand-written car's
continuous equations; the vertical rolling disk against finite differences, its energy and
its exact solution (order 2); a ball on a turntable (its centre circles at 2/7 of the
table's rate); a holonomic constraint's drift; errors before stepping; the bodies the
viewer draws (their compiled poses against CasADi and the rolling contact).

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
from marsden.symbolic import full  # noqa: E402

ca = casadi


@pytest.fixture(scope="module")
def sleigh():
    return full.chaplygin_sleigh(inertia=0.3, mass=2.0, a=0.4)


@pytest.fixture(scope="module")
def board():
    return full.snakeboard()


@pytest.fixture(scope="module")
def disk():
    return full.rolling_disk()


def scene_system(scene: dict):
    return marsden.make_system(marsden.parse_scene(json.dumps(scene)))


def run(system, dt, steps):
    out = marsden.simulate(system, dt=dt, steps=steps)
    assert out.ok, out.summary
    return out


# --- the hand-written models ------------------------------------------------------------------

def sleigh_pair(sleigh, method):
    theta, omega, v1, a = 0.3, 1.0, 0.8, 0.4
    hand = scene_system({"system": {"type": "sleigh", "mass": 2.0, "inertia": 0.3,
                                    "skate_offset": a},
                         "integrator": {"method": method}, "dt": 0.01, "duration": 0.01,
                         "initial_state": {"theta": theta, "x": 1.0, "y": -2.0, "omega": omega,
                                           "v1": v1}})
    v2 = -a * omega
    c, s = np.cos(theta), np.sin(theta)
    mine = sleigh.system(q0=[theta, 1.0, -2.0], qdot0=[omega, c * v1 - s * v2, s * v1 + c * v2],
                         integrator={"method": method})
    return hand, mine


BOARD_SCENE = {"system": {"type": "snakeboard"}, "dt": 0.01, "duration": 0.01,
               "initial_state": {"theta": 0.2, "x": 0.5, "y": 0.1, "psi": 0.1, "phi": 0.3,
                                 "psi_dot": 0.5, "phi_dot": -0.2, "v1": 0.7}}


def board_torques(t):
    return [0.3 * np.sin(2.0 * t), 0.2 * np.cos(t)]


def board_pair(board, method):
    scene = marsden.parse_scene(json.dumps({**BOARD_SCENE, "integrator": {"method": method}}))
    # The built-in start (its body velocity from the RDP data) in full coordinates.
    first = run(marsden.make_system(scene, controls=marsden.signals.as_signal(board_torques)),
                0.01, 1)
    theta, x, y = first["pose"][0]
    w, v1, v2 = first["body_velocity"][0]
    c, s = np.cos(theta), np.sin(theta)
    q0 = [*first["shape"][0], theta, x, y]
    qdot0 = [*first["shape_velocity"][0], w, c * v1 - s * v2, s * v1 + c * v2]
    hand = marsden.make_system(scene, controls=marsden.signals.as_signal(board_torques))
    mine = board.system(q0=q0, qdot0=qdot0, integrator={"method": method},
                        controls=board_torques)
    return hand, mine


@pytest.mark.parametrize("method", ["gni", "rattle"])
def test_symbolic_sleigh_and_snakeboard_step_the_hand_written_trajectories(sleigh, board, method):
    a, b = (run(s, 0.02, 500) for s in sleigh_pair(sleigh, method))
    np.testing.assert_allclose(b["q"], a["pose"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b["energy"], a["energy"], rtol=0, atol=1e-12)
    assert np.ptp(a["pose"][:, 1]) > 1.0  # it did slide somewhere
    a, b = (run(s, 0.02, 300) for s in board_pair(board, method))
    np.testing.assert_allclose(b["q"][:, 2:], a["pose"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b["q"][:, :2], a["shape"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b["energy"], a["energy"], rtol=0, atol=1e-12)
    assert np.ptp(a["pose"][:, 1]) > 0.5


@pytest.mark.parametrize("method", ["gni", "rattle"])
def test_symbolic_sleigh_and_snakeboard_have_the_hand_written_residual_jacobians(
        sleigh, board, method):
    for hand, mine in (sleigh_pair(sleigh, method), board_pair(board, method)):
        dt = 0.02
        for k in range(3):
            for s in (hand, mine):
                assert s.step(k * dt, dt)
        t_k = 3 * dt
        z, delta, u = hand.residual_point(t_k, dt)
        z = z + 1e-3 * np.sin(np.arange(z.size) + 1.0)
        a = hand.residual(t_k, dt, z, delta, u)
        b = mine.residual(t_k, dt, z, delta, u)
        np.testing.assert_allclose(b["r"], a["r"], rtol=0, atol=1e-10)
        assert a["J_r_z"].size > 0
        np.testing.assert_allclose(b["J_r_z"], a["J_r_z"], rtol=0, atol=1e-10)


def test_symbolic_car_follows_the_hand_written_continuous_car_and_ignores_its_steering_inertia():
    # The built-in car has no GNI or RATTLE in scenes: both schemes converge, as dt -> 0, to
    # its continuous equations (RK4 at a tiny step). The steering is prescribed (its rate is
    # the second input) and the arbitrary steering inertia cannot affect the motion. The
    # torque varies: GNI takes it at the node t_k, RATTLE at the step's midpoint (at t_k
    # RATTLE was first order under a varying torque).
    inputs = lambda t: [0.2 + 0.1 * np.sin(1.3 * t), 0.3 * np.cos(0.8 * t)]  # noqa: E731
    rho, l, psi_dot = 0.3, 1.0, 2.0
    hand = marsden.make_system(marsden.parse_scene(json.dumps({
        "system": {"type": "car"}, "integrator": {"method": "rk4"}, "dt": 0.01, "duration": 0.01,
        "initial_state": {"theta": 0.1, "psi_dot": psi_dot, "sigma": 0.2}})),
        controls=marsden.signals.as_signal(inputs))
    reference = run(hand, 0.0005, 6000)  # T = 3
    qdot0 = [psi_dot, inputs(0.0)[1], rho / l * 0.2 * psi_dot, rho * psi_dot * np.cos(0.1),
             rho * psi_dot * np.sin(0.1)]
    q0 = [0.0, 0.2, 0.1, 0.0, 0.0]
    runs = {}
    for J_s in (1.0, 7.0):
        model = full.car(steering_inertia=J_s, name=f"car_full_{int(J_s)}")
        for method in ("gni", "rattle"):
            for dt in (0.02, 0.01):
                runs[J_s, method, dt] = run(model.system(q0=q0, qdot0=qdot0, controls=inputs,
                                                         integrator={"method": method}),
                                            dt, int(round(3.0 / dt)))
    for method in ("gni", "rattle"):
        np.testing.assert_allclose(runs[7.0, method, 0.01]["q"], runs[1.0, method, 0.01]["q"],
                                   rtol=0, atol=1e-12)
        errors = []
        for dt in (0.02, 0.01):
            mine = runs[1.0, method, dt]
            errors.append(np.abs(mine["q"][-1, 2:] - reference["pose"][-1]).max())
            np.testing.assert_allclose(mine["q"][-1, :2], reference["shape"][-1], rtol=0,
                                       atol=1e-3)
        assert errors[1] < 1e-3 and 3.0 < errors[0] / errors[1] < 5.0, (method, errors)
    assert np.hypot(*reference["pose"][-1, 1:]) > 1.0  # it did drive somewhere


# --- the vertical rolling disk ----------------------------------------------------------------

def central_difference(f, q, i, h=1e-6):
    e = np.zeros_like(q)
    e[i] = h
    return (f(q + e) - f(q - e)) / (2 * h)


def check_derivatives(model, q):
    n = model.dof
    scale = lambda a: 1e-7 * (1.0 + np.abs(a).max())  # noqa: E731
    for i in range(n):
        fd = central_difference(model.mass, q, i)
        assert np.abs(model.mass_derivative(q, i) - fd).max() < scale(fd), ("dM", i)
        fd = central_difference(model.constraint, q, i)
        assert np.abs(model.constraint_derivative(q, i) - fd).max() < scale(fd), ("dmu", i)
        for j in range(n):
            fd = central_difference(lambda x: model.mass_derivative(x, i), q, j)
            ddM = model.mass_second_derivative(q, i, j)
            assert np.abs(ddM - fd).max() < scale(fd), ("ddM", i, j)
            np.testing.assert_array_equal(ddM, model.mass_second_derivative(q, j, i))
    V, g, H = model.potential(q)
    fd = np.array([central_difference(lambda x: np.array(model.potential(x)[0]), q, i)
                   for i in range(n)])
    assert np.abs(g - fd).max() < scale(fd), "grad V"
    fd = np.array([central_difference(lambda x: model.potential(x)[1], q, i) for i in range(n)]).T
    assert np.abs(H - fd).max() < scale(fd), "hess V"
    M = model.mass(q)
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-15)


def test_generated_derivatives_match_finite_differences(disk):
    check_derivatives(disk, np.array([0.3, -0.2, 1.1, 0.7]))
    # A system with every term nonzero: M(q), V(q) and mu(q) all depend on q.
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    M = ca.vertcat(ca.horzcat(2 + ca.cos(q[1]), 0.3 * ca.sin(q[2]), 0),
                   ca.horzcat(0.3 * ca.sin(q[2]), 1.5, 0.1 * q[0]),
                   ca.horzcat(0, 0.1 * q[0], 1 + q[1] ** 2))
    V = ca.sin(q[0]) * q[2] + q[1] ** 2 * ca.cos(q[2])
    busy = sym.NonholonomicSystem("busy", q=q, qdot=qd, lagrangian=0.5 * qd.T @ M @ qd - V,
                                  constraints=ca.horzcat(1, q[0], ca.sin(q[2])),
                                  control_directions=ca.vertcat(ca.cos(q[0]), 0, 1))
    check_derivatives(busy, np.array([0.4, 0.5, -0.3]))
    np.testing.assert_allclose(busy.control_directions(np.array([0.4, 0.5, -0.3])).ravel(),
                               [np.cos(0.4), 0.0, 1.0], rtol=0, atol=1e-15)
    check_derivatives(full.ball_on_turntable(), np.array([0.3, 0.2, 0.4, 0.5, -0.3, 0.1]))


def disk_exact(t, q0, rate_theta, rate_phi, R=0.5):
    """The rolling disk's solution: theta and phi turn uniformly, the contact point runs on
    a circle of radius R rate_theta / rate_phi."""
    x0, y0, th0, ph0 = q0
    phi = ph0 + rate_phi * t
    k = R * rate_theta / rate_phi
    return np.stack([x0 + k * (np.sin(phi) - np.sin(ph0)), y0 - k * (np.cos(phi) - np.cos(ph0)),
                     th0 + rate_theta * t, phi], axis=1)


DISK_Q0 = [0.2, -0.1, 0.0, 0.4]


def disk_qdot0(rate_theta=3.0, rate_phi=1.3, R=0.5):
    return [R * np.cos(0.4) * rate_theta, R * np.sin(0.4) * rate_theta, rate_theta, rate_phi]


@pytest.mark.parametrize("method", ["gni", "rattle"])
def test_rolling_disk_is_second_order_and_conserves_energy(disk, method):
    errors, energy_errors = [], []
    for dt in (0.04, 0.02, 0.01):
        out = run(disk.system(q0=DISK_Q0, qdot0=disk_qdot0(), integrator={"method": method}),
                  dt, int(round(4.0 / dt)))
        exact = disk_exact(out["t"], DISK_Q0, 3.0, 1.3)
        errors.append(np.abs(out["q"] - exact).max())
        energy_errors.append(np.abs(out["energy"] - out["energy"][0]).max() / out["energy"][0])
        assert out["constraint_violation"].max() < 1e-12 or method == "gni"
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) < 0.1), (errors, orders)
    # Against a tiny-step run too (the exact solution above is the independent check).
    tiny = run(disk.system(q0=DISK_Q0, qdot0=disk_qdot0(), integrator={"method": method}),
               0.001, 4000)
    np.testing.assert_allclose(tiny["q"][-1], disk_exact(np.array([4.0]), DISK_Q0, 3.0, 1.3)[0],
                               rtol=0, atol=errors[-1] / 50)
    # Constant M and V = 0: GNI's step is an M-orthogonal reflection of the velocity, so it
    # conserves the energy exactly; RATTLE's projection loses none here either.
    assert max(energy_errors) < 1e-13, energy_errors


def test_rolling_disk_long_run_energy(disk):
    for method in ("gni", "rattle"):
        out = run(disk.system(q0=DISK_Q0, qdot0=disk_qdot0(), integrator={"method": method}),
                  0.05, 20000)  # T = 1000, about 200 turns
        # No drift beyond roundoff and Newton's tolerance (1e-12) over 20000 steps (measured
        # 2e-12 for GNI, 3e-11 for RATTLE).
        assert np.abs(out["energy"] - out["energy"][0]).max() < 1e-10 * out["energy"][0]


# --- a ball on a turntable --------------------------------------------------------------------

def test_ball_on_a_turntable_circles_at_two_sevenths_of_the_table_rate():
    ball = full.ball_on_turntable()
    r, Omega, x0, yd0 = 0.1, 2.0, 0.5, 0.3
    # Identity orientation: (a_z, a_y, a_x)_dot = (omega_z, omega_y, omega_x), from the rolling
    # conditions with xdot = 0, ydot = yd0, y = 0.
    qdot0 = [0.0, yd0, 0.0, 0.0, (Omega * x0 - yd0) / r, Omega]
    for method in ("gni", "rattle"):
        out = run(ball.system(q0=[x0, 0, 0, 0, 0, 0], qdot0=qdot0, integrator={"method": method}),
                  0.01, 1100)
        assert np.abs(out["q"][:, 3]).max() < 0.5  # far from the Euler angles' singularity  # one circle of the centre: 2 pi / (2/7 Omega) = 11 s
        # The centre's velocity at the nodes by central differences of the positions, which
        # also filters GNI's flipping constraint-normal mode (M^-1 p+ is not the velocity).
        dt = 0.01
        v = (out["q"][2:, :2] - out["q"][:-2, :2]) / (2 * dt)
        t, p = out["t"][1:-1], out["q"][1:-1, :2]
        heading = np.unwrap(np.arctan2(v[:, 1], v[:, 0]))
        rate = np.polyfit(t, heading, 1)[0]
        assert abs(rate / (2.0 / 7.0 * Omega) - 1.0) < 1e-3, (method, rate)
        speed = np.hypot(v[:, 0], v[:, 1])
        assert np.ptp(speed) < 1e-4 * speed[0], method
        # The centre of the circle stays put: p + v_perp / rate.
        centre = p + np.stack([-v[:, 1], v[:, 0]], axis=1) / rate
        assert np.abs(centre - centre[0]).max() < 1e-3, method
        assert np.ptp(out["q"][:, 0]) > 0.2  # it did go round
        assert abs(out["qdot"][-1, 5] / Omega - 1.0) < 1e-4  # the heavy table keeps its rate
        drift = np.abs(out["energy"] - out["energy"][0]).max() / out["energy"][0]
        assert drift < 1e-6, (method, drift)


# --- bodies to draw ---------------------------------------------------------------------------

def contact_velocity(system, b, q, qdot, contact, h=1e-6):
    """The velocity of body b's material point at the world point `contact` (at q), by
    central differences of its pose along qdot: x_dot + R_dot R^T (contact - x)."""
    (xp, Rp), (xm, Rm) = system.body_pose(q + h * qdot, b), system.body_pose(q - h * qdot, b)
    x, R = system.body_pose(q, b)
    return (xp - xm) / (2 * h) + (Rp - Rm) / (2 * h) @ R.T @ (contact - x)


def test_body_poses_are_the_expressions_and_roll_on_their_contact(disk):
    rng = np.random.default_rng(7)
    ball = full.ball_on_turntable()
    R_disk = 0.5
    for system in (disk, ball):
        for _ in range(5):
            q = rng.uniform(-1.2, 1.2, system.dof)
            for b, body in enumerate(system.bodies):
                x, R = system.body_pose(q, b)
                # The compiled code against the expressions evaluated by CasADi.
                f = ca.Function("pose", [system.q], [body.position, body.rotation])
                x_ca, R_ca = (np.array(v, dtype=float) for v in f(q))
                np.testing.assert_allclose(x, x_ca.ravel(), rtol=0, atol=1e-15)
                np.testing.assert_allclose(R, R_ca, rtol=0, atol=1e-15)
                assert np.abs(R.T @ R - np.eye(3)).max() < 1e-14
                assert abs(np.linalg.det(R) - 1) < 1e-14
            # A velocity allowed by the constraints (their null space).
            mu = system.constraint(q)
            qdot = np.linalg.svd(mu)[2][mu.shape[0]:].T @ rng.normal(size=system.dof - mu.shape[0])
            if system is disk:
                x, R = disk.body_pose(q, 0)
                axle = R[:, 2]  # the cylinder's axis
                np.testing.assert_allclose(axle, [-np.sin(q[3]), np.cos(q[3]), 0], atol=1e-15)
                # The rim's lowest point is the contact (x, y, 0) ...
                down = np.array([0, 0, -1.0]) - axle * -axle[2]
                contact = x + R_disk * down / np.linalg.norm(down)
                np.testing.assert_allclose(contact, [q[0], q[1], 0.0], rtol=0, atol=1e-15)
                # ... and the disk's material point there is at rest: it rolls.
                v = contact_velocity(disk, 0, q, qdot, contact)
                assert np.abs(v).max() < 1e-8 * np.abs(qdot).max(), v
            else:
                x, R = ball.body_pose(q, 0)
                contact = x - [0, 0, 0.1]
                assert abs(contact[2]) < 1e-15  # the ball stands on the table's top
                # The ball's material point at the contact moves with the table's.
                v_table = qdot[5] * np.cross([0, 0, 1.0], contact)
                np.testing.assert_allclose(contact_velocity(ball, 0, q, qdot, contact), v_table,
                                           rtol=0, atol=1e-8 * np.abs(qdot).max())
                np.testing.assert_allclose(contact_velocity(ball, 1, q, qdot, contact), v_table,
                                           rtol=0, atol=1e-8 * np.abs(qdot).max())


def test_bad_bodies_are_clear_errors_naming_the_body():
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    ok = dict(q=q, qdot=qd, lagrangian=0.5 * ca.dot(qd, qd), constraints=ca.horzcat(1, 0, 0))
    I3 = np.eye(3)
    cases = [
        (lambda: sym.Body("b", position=[0, 0, 0], rotation=2 * I3, shape=("sphere", 1.0)),
         "body 'b': rotation (3 x 3) is not a rotation"),
        (lambda: sym.Body("b", position=[0, 0, qd[0]], rotation=I3, shape=("sphere", 1.0)),
         "body 'b': uses symbols other than q"),
        (lambda: sym.Body("b", position=[0, 0], rotation=I3, shape=("sphere", 1.0)),
         "body 'b': position: expected shape 3 x 1, got 2 x 1"),
        (lambda: sym.Body("b", pose=[q[0], q[1], q[2]], rotation=I3, shape=("sphere", 1.0)),
         "body 'b': give either pose or position and rotation"),
        (lambda: sym.Body("b", position=[0, 0, 0], rotation=I3, shape=("cone", 1.0)),
         "body 'b': shape: expected (kind, sizes...)"),
        (lambda: sym.Body("b", position=[0, 0, 0], rotation=I3, shape=("cylinder", 1.0, -2)),
         "body 'b': shape 'cylinder': expected 2 positive sizes"),
    ]
    for make, message in cases:
        with pytest.raises(marsden.InputError, match=re.escape(message)):
            sym.NonholonomicSystem("bad_body", **ok, bodies=[make()])
    planar = sym.Body("board", pose=[q[0], q[1], q[2]], shape=("box", 0.6, 0.3, 0.1))
    with pytest.raises(marsden.InputError, match="two bodies have the same name"):
        sym.NonholonomicSystem("bad_body", **ok, bodies=[planar, planar])


# --- holonomic constraints --------------------------------------------------------------------

def test_a_holonomic_constraint_enters_as_its_differential_and_drifts_little():
    # A sleigh whose centre of mass is held on a circle of radius 1 (h = x^2 + y^2 - 1),
    # its skate at a = 0.4 ahead of the centre.
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    th, x, y = q[0], q[1], q[2]
    held = sym.NonholonomicSystem(
        "sleigh_on_circle", q=q, qdot=qd,
        lagrangian=0.5 * (0.3 * qd[0] ** 2 + qd[1] ** 2 + qd[2] ** 2),
        constraints=ca.horzcat(0.4, -ca.sin(th), ca.cos(th)), holonomic=x ** 2 + y ** 2 - 1,
        coordinate_names=["theta", "x", "y"])
    assert held.num_constraints == 2
    np.testing.assert_allclose(held.constraint(np.array([0.1, 0.6, 0.8]))[1], [0.0, 1.2, 1.6])
    drift = {}
    for dt in (0.02, 0.01):
        for method in ("gni", "rattle"):
            out = run(held.system(q0=[np.pi / 2, 1, 0], qdot0=[0, 0, 1],
                                  integrator={"method": method}), dt, int(round(10 / dt)))
            h = np.array([held.holonomic(qk)[0] for qk in out["q"]])
            drift[method, dt] = np.abs(h).max()
            assert np.ptp(out["q"][:, 0]) > 0.5  # it did turn
    # RATTLE imposes dh/dq at the midpoint on q_k+1 - q_k: for a quadratic h that is exactly
    # h(q_k+1) - h(q_k), so h is kept to roundoff. GNI imposes it on averaged momenta only.
    assert drift["rattle", 0.02] < 1e-12 and drift["rattle", 0.01] < 1e-12, drift
    assert drift["gni", 0.01] < 1e-2, drift
    print("holonomic drift max |h|:", drift)


# --- forces Q(q, qdot) ------------------------------------------------------------------------

def disk_with(name, potential=None, force=None):
    """The rolling disk of full.rolling_disk (m = 1, R = 0.5), with a potential V(q) in its
    Lagrangian and/or a force Q(q, qdot), both given as functions of the symbols."""
    q, qd = ca.SX.sym("q", 4), ca.SX.sym("qdot", 4)
    R, phi = 0.5, q[3]
    L = 0.5 * (qd[0] ** 2 + qd[1] ** 2 + 0.5 * R ** 2 * qd[2] ** 2 + 0.25 * R ** 2 * qd[3] ** 2)
    mu = ca.vertcat(ca.horzcat(1, 0, -R * ca.cos(phi), 0), ca.horzcat(0, 1, -R * ca.sin(phi), 0))
    return sym.NonholonomicSystem(name, q=q, qdot=qd,
                                  lagrangian=L - (0 if potential is None else potential(q)),
                                  constraints=mu, force=None if force is None else force(q, qd),
                                  coordinate_names=["x", "y", "theta", "phi"])


def busy_force(q, qd):
    return -(1 + 0.5 * ca.sin(q[3])) * (1 + 0.1 * ca.dot(qd, qd)) * qd \
        + ca.vertcat(0, 0, 0.2 * ca.cos(q[0]), 0)


def test_the_generated_force_is_its_expression_and_its_derivatives_match_finite_differences(disk):
    busy = disk_with("disk_busy_force", force=busy_force)
    assert busy.has_force and not disk.has_force
    with pytest.raises(marsden.InputError, match="has no force"):
        disk.force(np.zeros(4), np.zeros(4))
    q, qd = np.array([0.3, -0.2, 1.1, 0.7]), np.array([0.5, -0.4, 0.9, 1.3])
    Q, dQ_dq, dQ_dqdot = busy.force(q, qd)
    expected = -(1 + 0.5 * np.sin(q[3])) * (1 + 0.1 * qd @ qd) * qd + [0, 0, 0.2 * np.cos(q[0]), 0]
    np.testing.assert_allclose(Q, expected, rtol=0, atol=1e-15)
    for i in range(4):
        fd = central_difference(lambda x: busy.force(x, qd)[0], q, i)
        np.testing.assert_allclose(dQ_dq[:, i], fd, rtol=0, atol=1e-8)
        fd = central_difference(lambda x: busy.force(q, x)[0], qd, i)
        np.testing.assert_allclose(dQ_dqdot[:, i], fd, rtol=0, atol=1e-8)


def test_a_zero_force_steps_the_unforced_trajectory_bit_for_bit(sleigh):
    zero = full.chaplygin_sleigh(inertia=0.3, mass=2.0, a=0.4, drag=0.0, name="sleigh_zero_drag")
    assert zero.has_force
    for method in ("gni", "rattle"):
        a, b = (run(s.system(q0=[0.3, 1.0, -2.0], qdot0=[1.0, 0.8, -0.1],
                             integrator={"method": method}), 0.05, 40) for s in (sleigh, zero))
        np.testing.assert_array_equal(a["q"], b["q"])
        np.testing.assert_array_equal(a["energy"], b["energy"])


def test_a_conservative_force_is_the_scheme_of_its_potential():
    # V(q_m) enters the midpoint discrete Lagrangian as -dt/2 grad V(q_m) in D1 and D2, and a
    # force as dt/2 Q(q_m, v): with Q = -grad V both write the same equations, so the
    # trajectories agree to Newton's tolerance rather than only converge to one limit.
    def V(q):
        return 1.5 * (q[0] ** 2 + q[1] ** 2) + 0.8 * (1 - ca.cos(q[3]))

    spring = disk_with("disk_spring_potential", potential=V)
    q = ca.SX.sym("q", 4)
    grad_V = ca.Function("grad_V", [q], [ca.gradient(V(q), q)])
    pushed = disk_with("disk_spring_force", force=lambda q, qd: -grad_V(q))
    for method in ("gni", "rattle", "rk4"):
        a, b = (run(s.system(q0=DISK_Q0, qdot0=disk_qdot0(), integrator={"method": method}),
                    0.02, 100) for s in (spring, pushed))
        np.testing.assert_allclose(a["q"], b["q"], rtol=0, atol=1e-12)
        assert np.ptp(a["q"][:, 3]) > 0.5  # the spring turned it


def test_the_sleigh_with_drag_loses_energy_monotonically_at_order_two():
    c, T = 0.5, 4.0
    dragged = full.chaplygin_sleigh(inertia=0.3, mass=2.0, a=0.4, drag=c, name="sleigh_drag")
    q0, qdot0 = [0.3, 1.0, -2.0], [1.0, 0.8 * np.cos(0.3) + 0.4 * np.sin(0.3),
                                   0.8 * np.sin(0.3) - 0.4 * np.cos(0.3)]
    tiny = run(dragged.system(q0=q0, qdot0=qdot0, integrator={"method": "rk4"}), 0.001, 4000)
    E0 = tiny["energy"][0]
    # mu qdot = 0, so the drag -c M qdot takes the energy at the rate 2 c E.
    np.testing.assert_allclose(tiny["energy"], E0 * np.exp(-2 * c * tiny["t"]), rtol=1e-11)
    for method in ("gni", "rattle"):
        q_errors, energy_errors = [], []
        for dt in (0.04, 0.02):
            out = run(dragged.system(q0=q0, qdot0=qdot0, integrator={"method": method}), dt,
                      int(round(T / dt)))
            assert np.all(np.diff(out["energy"]) < 0), method
            if method == "rattle":
                assert out["constraint_violation"].max() < 1e-13
            q_errors.append(np.abs(out["q"][-1] - tiny["q"][-1]).max())
            energy_errors.append(abs(out["energy"][-1] - tiny["energy"][-1]))
        for errors in (q_errors, energy_errors):
            assert abs(np.log2(errors[0] / errors[1]) - 2.0) < 0.2, (method, errors)
        print(f"sleigh with drag, {method}: q errors {q_errors}, energy errors {energy_errors}")


# --- errors before stepping -------------------------------------------------------------------

def test_bad_systems_are_clear_errors_naming_the_symbol():
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    T = 0.5 * ca.dot(qd, qd)
    mu = ca.horzcat(1, 0, ca.sin(q[0]))
    ok = dict(q=q, qdot=qd, lagrangian=T, constraints=mu)
    cases = [
        ({"lagrangian": 0.5 * qd[0] ** 2}, "M = d2L/dqdot2 (3 x 3) is singular"),
        ({"lagrangian": T + qd[0] ** 4}, "lagrangian: is not quadratic in qdot"),
        ({"lagrangian": T + q[1] * qd[0]}, "lagrangian: has a term linear in qdot"),
        ({"lagrangian": ca.vertcat(T, T)}, "lagrangian: expected shape 1 x 1, got 2 x 1"),
        ({"constraints": ca.vertcat(mu, 2 * mu)}, "has dependent rows"),
        ({"constraints": ca.horzcat(1, 0)}, "constraints: expected shape 1 x 3, got 1 x 2"),
        ({"constraints": ca.SX(0, 3)}, "constraints: expected 1..2 rows"),
        ({"constraints": ca.horzcat(1, 0, qd[0])}, "constraints: uses symbols other than q"),
        ({"constraints": ca.horzcat(1, 0, 0), "holonomic": 2 * q[0]}, "has dependent rows"),
        ({"control_directions": ca.horzcat(1, 0)}, "control_directions: expected shape 3 x n"),
        ({"constraints": ca.horzcat(1, 0, ca.log(q[0] - 1))}, "constraints: is not finite"),
        ({"q": ca.SX.sym("q", 9), "qdot": ca.SX.sym("qdot", 9)}, "q: expected a column of 2..8"),
        ({"q": 2 * q}, "q: expected a column of 2..8 distinct CasADi symbols"),
        ({"qdot": ca.SX.sym("qdot", 2)}, "qdot: expected shape 3 x 1, got 2 x 1"),
        ({"prescribed": [5]}, "prescribed: 5 is neither an index in 0..2 nor a symbol of q"),
        ({"force": ca.vertcat(qd[0], qd[1])}, "force: expected shape 3 x 1, got 2 x 1"),
        ({"force": ca.vertcat(0, 0, ca.SX.sym("c"))}, "force: uses symbols other than q, qdot"),
        ({"force": ca.vertcat(0, 0, 1 / (qd[0] - 0.1))},
         "force: Q (3 x 1) or its derivatives are not finite at the probe point"),
    ]
    for kwargs, message in cases:
        with pytest.raises(marsden.InputError, match=re.escape(message)):
            sym.NonholonomicSystem("bad", **{**ok, **kwargs})


def test_scene_checks_sizes_and_the_initial_state_before_stepping(tmp_path):
    # mu has full rank at the probe point but not at q = 0: the scene's initial state fails.
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    model = sym.NonholonomicSystem("rank_at_zero", q=q, qdot=qd, lagrangian=0.5 * ca.dot(qd, qd),
                                   constraints=ca.vertcat(ca.horzcat(1, 0, 0),
                                                          ca.horzcat(0, ca.sin(q[0]), 0)))
    scene = {"system": model.scene_system(), "dt": 0.01, "duration": 0.1,
             "initial_state": {"q": [0.0, 0.0, 0.0]}}
    with pytest.raises(marsden.InputError, match=re.escape("constraint mu (2 x 3) has dependent "
                                                           "rows (rank 1 < 2)")):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    scene["initial_state"] = {"q": [0.0, 0.0]}
    with pytest.raises(marsden.InputError, match="initial_state.q"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    scene["initial_state"] = {"q": [0.5, 0.0, 0.0]}
    scene["controls"] = {"type": "constant", "value": [1.0]}
    with pytest.raises(marsden.InputError, match="controls"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    del scene["controls"]
    scene["integrator"] = {"method": "rdp"}
    with pytest.raises(marsden.InputError, match="gni"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    scene["system"]["library"] = str(tmp_path / "gone.so")
    with pytest.raises(marsden.InputError, match="system.library.*gone.so': no such file"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    # A library of the other family is not a nonholonomic model.
    scene["system"]["library"] = str(sym.quadrotor().library)
    with pytest.raises(marsden.InputError, match="no entry point 'marsden_nh_abi_version'"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)


def test_a_scene_file_names_the_generated_system(disk, tmp_path):
    scene = {"system": {"type": "generated_nonholonomic", "library": disk.library.name},
             "integrator": {"method": "rattle"}, "dt": 0.01, "duration": 1.0,
             "initial_state": {"q": DISK_Q0, "qdot": disk_qdot0()}}
    # A relative library path is found beside the scene file.
    (tmp_path / disk.library.name).write_bytes(disk.library.read_bytes())
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    assert marsden.run_scene(marsden.load_scene(path, allow_code=True), tmp_path / "out")["ok"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["system"] == "generated_nonholonomic"
    final = summary["final_q"]
    expected = disk_exact(np.array([1.0]), DISK_Q0, 3.0, 1.3)[0]
    np.testing.assert_allclose([final[k] for k in ("x", "y", "theta", "phi")], expected,
                               rtol=0, atol=1e-3)
    header = (tmp_path / "out" / "trajectory.csv").read_text().splitlines()[0]
    assert header.startswith("t,x,y,theta,phi,x_dot,y_dot,theta_dot,phi_dot,energy")
    # What the viewer plays: the disk at its frame, whose poses are the compiled body pose at
    # every row's q (quaternions w first, up to sign).
    model = json.loads((tmp_path / "out" / "model.json").read_text())
    assert model["frames_file"] == "frames.npz"
    [body] = model["model"]["bodies"]
    assert body["pose"] == {"frame": 0} and body["geometry"][0]["shape"] == "cylinder"
    np.testing.assert_allclose(body["geometry"][0]["semi_axes"], [0.5, 0.5, 0.05])
    frames, q = np.load(tmp_path / "out" / "frames.npz"), np.load(tmp_path / "out" / "trajectory.npz")["q"]
    assert frames["position"].shape == (len(q), 1, 3)
    for k in range(0, len(q), 10):
        x, R = disk.body_pose(q[k], 0)
        np.testing.assert_allclose(frames["position"][k, 0], x, rtol=0, atol=1e-14)
        w, v = frames["quaternion"][k, 0, 0], frames["quaternion"][k, 0, 1:]
        R_frame = (w * w - v @ v) * np.eye(3) + 2 * np.outer(v, v) + 2 * w * np.array(
            [[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
        np.testing.assert_allclose(R_frame, R, rtol=0, atol=1e-14)


def test_a_sweep_runs_over_the_initial_states_of_generated_systems(disk, tmp_path):
    # The sweep's own run (sweep.run_one, as a Dask worker calls it) of a scene file whose
    # library is named relative to it, over the disk's initial heading rate and over the
    # hovercraft's (SE(2)) initial heading: every row is the run of the scene alone.
    from marsden import sweep as sw
    craft = sym.hovercraft(drag=0.5)
    scenes = {
        "disk": ({"system": {"type": "generated_nonholonomic", "library": disk.library.name},
                  "integrator": {"method": "rattle"}, "dt": 0.01, "duration": 0.2,
                  "initial_state": {"q": DISK_Q0, "qdot": disk_qdot0()}},
                 "initial_state.qdot.3", disk.library),
        "craft": ({"system": {"type": "generated", "library": craft.library.name}, "dt": 0.01,
                   "duration": 0.2, "initial_state": {"theta": 0.0},
                   "controls": {"type": "constant", "value": [1.0, 0.6]}},
                  "initial_state.theta", craft.library)}
    for name, (scene, axis, library) in scenes.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / library.name).write_bytes(library.read_bytes())
        (folder / "scene.json").write_text(json.dumps(scene))
        (folder / "sweep.json").write_text(json.dumps({
            "scene": "scene.json", "parameters": {axis: [0.5, 1.3]},
            "metrics": ["energy_drift_abs", "constraint_violation", "final_pose_error"],
            "reference": {"dt": 0.005}}))
        spec = sw.load_spec(folder / "sweep.json")
        for r in sw.runs(spec):
            row = sw.run_one(spec, r, allow_code=True)
            assert row["status"] == "ok", row["error"]
            alone = json.loads(json.dumps(scene))
            if name == "disk":
                alone["initial_state"]["qdot"][3] = r["parameters"][axis]
            else:
                alone["initial_state"]["theta"] = r["parameters"][axis]
            (folder / "alone.json").write_text(json.dumps(alone))
            s = marsden.load_scene(folder / "alone.json", allow_code=True)
            out = marsden.simulate(marsden.make_system(s), dt=s.dt, steps=s.steps)
            assert row["energy_drift_abs"] == out.summary["energy"]["max_abs_drift"]
            # Against the half step: the distance of the final q, or of the planar pose.
            ref = marsden.simulate(marsden.make_system(s), dt=0.005, steps=2 * s.steps)
            final = "q" if name == "disk" else "pose"
            assert row["final_pose_error"] == np.linalg.norm(out[final][-1] - ref[final][-1])
            assert 0 < row["final_pose_error"] < 1e-2


def test_the_viewer_draws_a_board_or_says_there_is_nothing_to_draw(sleigh, tmp_path):
    # No bodies: the sleigh's coordinates (theta, x, y) place a board; coordinates without
    # these names give a warning that says how to give bodies.
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    bare = sym.NonholonomicSystem("bare_sleigh", q=q, qdot=qd, lagrangian=0.5 * ca.dot(qd, qd),
                                  constraints=ca.horzcat(0.4, -ca.sin(q[0]), ca.cos(q[0])))
    for system, name in ((sleigh, "board"), (bare, "none")):
        scene = {"system": system.scene_system(), "dt": 0.01, "duration": 0.1,
                 "initial_state": {"q": [0.3, 1.0, -2.0], "qdot": [1.0, 0.0, 0.4]}}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(scene))
        assert marsden.run_scene(marsden.load_scene(path, allow_code=True), tmp_path / name)["ok"]
        model = json.loads((tmp_path / name / "model.json").read_text())
        if name == "board":
            [body] = model["model"]["bodies"]
            frames = np.load(tmp_path / name / "frames.npz")
            q_run = np.load(tmp_path / name / "trajectory.npz")["q"]
            np.testing.assert_allclose(frames["position"][:, 0, :2], q_run[:, 1:], atol=1e-14)
            np.testing.assert_allclose(2 * np.arctan2(frames["quaternion"][:, 0, 3],
                                                      frames["quaternion"][:, 0, 0]),
                                       q_run[:, 0], atol=1e-14)
        else:
            assert model["model"]["bodies"] == [] and "frames_file" not in model
            assert "has no bodies to draw" in model["warnings"][0]
            assert not (tmp_path / name / "frames.npz").exists()
