"""marsden.symbolic.TreeConstraint (docs/own-system.md, "Constraint elements"): a holonomic
constraint h(q_c) = 0 on some of a tree system's coordinates written as a CasADi expression,
compiled and loaded into the tree model. A double pendulum whose tip keeps a fixed distance
from a point, written in coordinates as |p_tip(q) - p0|^2 - d^2, against the built-in
Distance constraint between frames (the same trajectory to the Newton tolerance; the
multipliers differ by the factor 2 |p_tip - p0|); its derivatives and the step Jacobians
against central differences; the constraint kept to round-off, the energy bounded and the
order 2; the scene route, one DMOC solve, and the errors before stepping.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it).
"""

import json

import numpy as np
import pytest

casadi = pytest.importorskip("casadi")
import marsden  # noqa: E402
from marsden import symbolic as sym  # noqa: E402
from marsden import tree  # noqa: E402

ca = casadi
P0 = np.array([1.0, -1.0])          # the anchor (y, z), m
Q0 = np.array([0.9, -0.4])          # theta1, theta2 (rad)


def tip(t1, t2, sin=np.sin, cos=np.cos):
    """(y, z) of the second mass: links of 1 m about x, hanging along -z."""
    return (sin(t1) + sin(t1 + t2), -cos(t1) - cos(t1 + t2))


D = float(np.hypot(*(np.array(tip(*Q0)) - P0)))


def tip_rate_free_direction(q):
    """A velocity tangent to the constraint at q: orthogonal to grad |p_tip - p0|^2."""
    t1, t2 = q
    y, z = np.array(tip(t1, t2)) - P0
    J = np.array([[np.cos(t1) + np.cos(t1 + t2), np.cos(t1 + t2)],
                  [np.sin(t1) + np.sin(t1 + t2), np.sin(t1 + t2)]])
    g = J.T @ np.array([y, z])
    return np.array([-g[1], g[0]]) / np.linalg.norm(g)


QD0 = 2.5 * tip_rate_free_direction(Q0)


def double_pendulum(anchor=False):
    b = tree.Builder()
    b.frame("link1", "world", "rx", "theta1")
    b.frame("mass1", "link1", "tz", value=-1.0, mass=1.0)
    b.frame("link2", "mass1", "rx", "theta2")
    b.frame("mass2", "link2", "tz", value=-1.0, mass=1.2)
    if anchor:
        b.frame("anchor_y", "world", "ty", value=P0[0])
        b.frame("anchor", "anchor_y", "tz", value=P0[1])
        b.distance_constraint("tether", "mass2", "anchor", D)
    return b


@pytest.fixture(scope="module")
def tether():
    t1, t2 = ca.SX.sym("theta1"), ca.SX.sym("theta2")
    y, z = tip(t1, t2, ca.sin, ca.cos)
    h = (y - P0[0]) ** 2 + (z - P0[1]) ** 2 - D ** 2
    return sym.TreeConstraint("tether", coordinates=[t1, t2], constraint=h)


@pytest.fixture(scope="module")
def models(tether):
    built_in = double_pendulum(anchor=True).build()
    b = double_pendulum()
    b.constraint(tether)
    return built_in, b.build()


def run(model, dt, steps, method="midpoint", q0=Q0, qd0=QD0):
    out = marsden.simulate(tree.system(model, q0, qd0, method=method, tolerance=1e-12),
                           dt=dt, steps=steps)
    assert out.ok, out.summary
    return out


def columns(out, names):
    return np.column_stack([out[n] for n in names])


def test_derivatives_match_central_differences(tether):
    rng = np.random.default_rng(7)
    step = 1e-6
    for q in rng.uniform(-2.0, 2.0, size=(5, 2)):
        w = rng.uniform(-1.0, 1.0, size=1)
        h, Dh, H = tether.constraint(q, w)
        y, z = np.array(tip(*q)) - P0
        assert h[0] == pytest.approx(y * y + z * z - D * D, abs=1e-13)
        for i in range(2):
            e = np.zeros(2)
            e[i] = step
            hp, Dp, _ = tether.constraint(q + e)
            hm, Dm, _ = tether.constraint(q - e)
            assert Dh[0, i] == pytest.approx((hp[0] - hm[0]) / (2 * step), abs=1e-7)
            np.testing.assert_allclose(H[:, i], w[0] * (Dp[0] - Dm[0]) / (2 * step), atol=1e-7)
        np.testing.assert_allclose(H, H.T, atol=1e-14)


@pytest.mark.parametrize("method", ["midpoint", "galerkin"])
def test_same_trajectory_as_the_built_in_distance(models, method):
    a = run(models[0], 0.01, 300, method)
    b = run(models[1], 0.01, 300, method)
    names = ["theta1", "theta2", "qd_theta1", "qd_theta2", "energy"]
    assert np.abs(columns(a, names) - columns(b, names)).max() <= 1e-9
    # The tip moves: the constraint acts on a real swing.
    assert np.ptp(np.asarray(b["theta1"])) > 0.1
    assert max(np.abs(np.asarray(b["constraint_residual"]))) <= 1e-12


def test_same_accelerations_as_the_built_in_distance(models):
    """RK4's continuous dynamics on the constraint: the same qdd, multipliers scaled by
    d|r|/d|r|^2 = 1 / (2 |r|) = 1 / (2 d)."""
    qdd_a, lam_a = tree.continuous_dynamics(models[0], Q0, QD0)
    qdd_b, lam_b = tree.continuous_dynamics(models[1], Q0, QD0)
    np.testing.assert_allclose(qdd_a, qdd_b, atol=1e-12)
    assert lam_b[0] == pytest.approx(lam_a[0] / (2 * D), rel=1e-12)


def test_energy_bounded_and_order_two(models):
    model = models[1]
    err = []
    for dt in (0.02, 0.01):
        e = np.asarray(run(model, dt, int(round(10.0 / dt)))["energy"])
        err.append(np.abs(e - e[0]))
    half = err[1].size // 2
    assert err[1][half:].max() <= 1.1 * err[1][:half].max()   # no drift
    ratio = err[0].max() / err[1].max()
    assert 3.5 <= ratio <= 4.5, ratio
    duration = 1.0
    ref = run(model, 1e-3, 1000)
    q_ref = columns(ref, ["theta1", "theta2"])[::40]
    errors = []
    for dt in (0.04, 0.02, 0.01):
        out = run(model, dt, int(round(duration / dt)))
        stride = int(round(0.04 / dt))
        errors.append(np.abs(columns(out, ["theta1", "theta2"])[::stride] - q_ref).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8) and np.all(orders < 2.2), (errors, orders)


def test_step_jacobians_match_central_differences(models):
    """J_r_z (z = (q_kp1, lambda)) and J_r_state of the midpoint step from t = 0.02 s at a
    point off the solution, whose lambda weights the constraint's Hessian."""
    s = tree.system(models[1], Q0, QD0)
    s.step(0.0, 0.02)
    z, delta, u = s.residual_point(0.02, 0.02)
    z = z + np.array([0.01, -0.02, 0.3])
    blocks = s.residual(0.02, 0.02, z, delta, u)
    step = 1e-6
    for x, key in ((z, "J_r_z"), (delta, "J_r_state")):
        for j in range(x.size):
            e = np.zeros(x.size)
            e[j] = step
            args = [(z + e, delta), (z - e, delta)] if key == "J_r_z" else \
                   [(z, delta + e), (z, delta - e)]
            fd = (s.residual(0.02, 0.02, *args[0], u)["r"]
                  - s.residual(0.02, 0.02, *args[1], u)["r"]) / (2 * step)
            np.testing.assert_allclose(blocks[key][:, j], fd, atol=1e-7)


def test_scene_field_and_initial_state_off_the_constraint(tether, tmp_path):
    frames = [{"name": "link1", "type": "rx", "coordinate": "theta1"},
              {"name": "mass1", "parent": "link1", "type": "tz", "value": -1.0,
               "mass": {"mass": 1.0}},
              {"name": "link2", "parent": "mass1", "type": "rx", "coordinate": "theta2"},
              {"name": "mass2", "parent": "link2", "type": "tz", "value": -1.0,
               "mass": {"mass": 1.2}}]
    scene = {"system": {"type": "tree", "frames": frames,
                        "generated_constraints": [tether.scene_element()]},
             "initial_state": {"q": {"theta1": Q0[0], "theta2": Q0[1]},
                               "qd": {"theta1": QD0[0], "theta2": QD0[1]}},
             "integrator": {"tolerance": 1e-12}, "dt": 0.01, "duration": 1.0}
    from_scene = marsden.simulate(marsden.make_system(marsden.parse_scene(json.dumps(scene),
                                                                          allow_code=True)),
                                  dt=0.01, steps=100)
    direct = run(tree.with_constraints(double_pendulum().build(), tether), 0.01, 100)
    names = ["theta1", "theta2", "energy"]
    assert np.abs(columns(from_scene, names) - columns(direct, names)).max() <= 1e-12
    scene["initial_state"]["q"]["theta2"] = 0.0
    with pytest.raises(marsden.InputError,
                       match=r"the constraint 'tether' does not hold at the initial"):
        marsden.parse_scene(json.dumps(scene), allow_code=True)
    # In Python, off the constraint, the first step fails as the built-in constraint's does.
    for model in (tree.with_constraints(double_pendulum().build(), tether),
                  double_pendulum(anchor=True).build()):
        off = marsden.simulate(tree.system(model, [Q0[0], 0.0]), dt=0.01, steps=3)
        assert not off.ok and off.summary["failed_step"]["step"] == 0


def test_dmoc_with_the_constraint_resimulates(tmp_path):
    """Two links whose elbow follows the shoulder, theta2 = 0.5 sin(theta1), a torque at the
    shoulder: DMOC swings it from hanging to theta1 = 0.8 at rest; the optimum
    re-simulates with the constraint."""
    t1, t2 = ca.SX.sym("theta1"), ca.SX.sym("theta2")
    elbow = sym.TreeConstraint("elbow_follows", coordinates=[t1, t2],
                               constraint=t2 - 0.5 * ca.sin(t1))
    problem = {
        "system": {"type": "tree", "frames": [
            {"name": "link1", "type": "rx", "coordinate": "theta1"},
            {"name": "mass1", "parent": "link1", "type": "tz", "value": -0.5,
             "mass": {"mass": 0.5}},
            {"name": "link2", "parent": "mass1", "type": "rx", "coordinate": "theta2"},
            {"name": "mass2", "parent": "link2", "type": "tz", "value": -0.5,
             "mass": {"mass": 0.3}}],
            "inputs": [{"type": "force", "coordinate": "theta1"}],
            "generated_constraints": [elbow.scene_element()]},
        "integrator": {"method": "midpoint", "tolerance": 1e-13},
        "dt": 0.05, "steps": 20,
        "initial_state": {"q": {"theta1": 0, "theta2": 0}},
        "final_state": {"q": {"theta1": 0.8, "theta2": 0.5 * np.sin(0.8)}, "at_rest": True},
        "bounds": {"controls": {"lower": [-20], "upper": [20]}},
        "cost": {"control_weights": [1]}}
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(problem))
    summary = marsden.run_problem(marsden.load_problem(path, allow_code=True), tmp_path / "out")
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-9
    scene = marsden.load_scene(tmp_path / "out" / "resimulate.json", allow_code=True)
    out = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps)
    assert abs(out["theta1"][-1] - 0.8) < 1e-6
    assert max(np.abs(np.asarray(out["constraint_residual"]))) <= 1e-12


def test_errors_name_the_element_shape_and_rank(tether):
    t1, t2 = ca.SX.sym("theta1"), ca.SX.sym("theta2")
    with pytest.raises(marsden.InputError,
                       match=r"constraint: expected a column of 1..2 rows .*got shape 2 x 2"):
        sym.TreeConstraint("bad", coordinates=[t1, t2], constraint=ca.SX.eye(2) * t1)
    with pytest.raises(marsden.InputError,
                       match=r"constraint: expected a column of 1..1 rows .*got shape 2 x 1"):
        sym.TreeConstraint("bad", coordinates=[t1], constraint=ca.vertcat(t1, t1 ** 2))
    many = [ca.SX.sym(f"c{i}") for i in range(17)]
    with pytest.raises(marsden.InputError, match=r"coordinates: expected 1..16"):
        sym.TreeConstraint("bad", coordinates=many, constraint=many[0])
    with pytest.raises(marsden.InputError, match=r"constraint: uses symbols other than theta1"):
        sym.TreeConstraint("bad", coordinates=[t1], constraint=t1 - t2)
    with pytest.raises(marsden.InputError,
                       match=r"constraint: h \(1 x 1\) is not finite at the probe point"):
        sym.TreeConstraint("bad", coordinates=[t1], constraint=ca.sqrt(t1 - 1.0))
    elbow = ca.SX.sym("elbow")
    wrong = sym.TreeConstraint("elbow", coordinates=[elbow], constraint=elbow)
    with pytest.raises(marsden.InputError,
                       match=r"its coordinate 0: tree model: no coordinate named \"elbow\""):
        tree.with_constraints(double_pendulum().build(), wrong)
    # Dependent rows at the initial configuration: theta1^2 = 0 has Dh = 0 at theta1 = 0.
    flat = sym.TreeConstraint("flat", coordinates=[t1], constraint=t1 ** 2)
    model = tree.with_constraints(double_pendulum().build(), flat)
    with pytest.raises(marsden.InputError,
                       match=r"tree constraint 'flat' .*its row is degenerate at the initial "
                             r"configuration .*has rank 0 of 1"):
        tree.system(model, [0.0, 0.3])
    with pytest.raises(marsden.InputError, match=r"a tree constraint, not a potential"):
        tree.with_potentials(double_pendulum().build(), tether)
