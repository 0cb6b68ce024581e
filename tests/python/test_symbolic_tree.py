"""marsden.symbolic.TreePotential and TreeForce (docs/own-system.md, "Tree elements"): a
potential or a generalized force on some of a tree system's coordinates written as a CasADi
expression, compiled and loaded into the tree model. The quadratic potential and the linear
force against the built-in coordinate spring and damper (same trajectories, same step
Jacobians); a nonlinear potential (a torsion spring and a Morse spring) and a nonlinear drag
against finite differences, the energy (bounded O(dt^2) error; falling under the drag) and
observed order 2; the scene and problem routes (DMOC); the errors before stepping.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it).
Compiled models go to a fresh cache folder per test session.
"""

import json

import numpy as np
import pytest

casadi = pytest.importorskip("casadi")
import marsden  # noqa: E402
from marsden import symbolic as sym  # noqa: E402
from marsden import tree  # noqa: E402

ca = casadi
K, REST = 4.0, 0.3                 # N m/rad, rad: the coordinate spring on theta2
TORSION, MORSE_D, MORSE_A = 3.0, 2.0, 1.5


def double_pendulum(damping=0.0):
    """Two links of 1 m with point masses of 1 kg, about x, hanging along -z."""
    b = tree.Builder()
    b.frame("link1", "world", "rx", "theta1")
    b.frame("mass1", "link1", "tz", value=-1.0, mass=1.0)
    b.frame("link2", "mass1", "rx", "theta2")
    b.frame("mass2", "link2", "tz", value=-1.0, mass=1.2)
    if damping:
        b.damper("theta2", damping)
    return b


@pytest.fixture(scope="module")
def quadratic():
    """k/2 (theta2 - rest)^2, the coordinate spring, with theta2 given by index."""
    s = ca.SX.sym("s")
    return sym.TreePotential("spring_theta2", coordinates={1: s},
                             potential=0.5 * K * (s - REST) ** 2)


@pytest.fixture(scope="module")
def nonlinear():
    """A torsion spring k (1 - cos(theta1 - theta2)) between the links and a Morse spring
    D (1 - exp(-a theta1))^2 at the shoulder, the coordinates by name."""
    t1, t2 = ca.SX.sym("theta1"), ca.SX.sym("theta2")
    V = TORSION * (1 - ca.cos(t1 - t2)) + MORSE_D * (1 - ca.exp(-MORSE_A * t1)) ** 2
    return sym.TreePotential("torsion_morse", coordinates=[t1, t2], potential=V)


Q0 = {"theta1": 0.9, "theta2": -0.4}
QD0 = {"theta1": 0.5, "theta2": 1.0}


def run(model, dt, steps, method="midpoint", q0=Q0, qd0=QD0):
    out = marsden.simulate(tree.system(model, q0, qd0, method=method, tolerance=1e-12),
                           dt=dt, steps=steps)
    assert out.ok, out.summary
    return out


def columns(out, names):
    return np.column_stack([out[n] for n in names])


# --- the quadratic potential is the coordinate spring -------------------------------------------

@pytest.mark.parametrize("method", ["midpoint", "galerkin", "rk4"])
def test_quadratic_potential_gives_the_coordinate_spring_trajectory(quadratic, method):
    built_in = double_pendulum(damping=0.3)
    built_in.spring("theta2", K, REST)
    generated = double_pendulum(damping=0.3)
    generated.potential(quadratic)
    a = run(built_in.build(), 0.01, 400, method)
    b = run(generated.build(), 0.01, 400, method)
    names = ["theta1", "theta2", "qd_theta1", "qd_theta2", "energy"]
    assert np.abs(columns(a, names) - columns(b, names)).max() <= 1e-12


def test_quadratic_potential_gives_the_coordinate_spring_step_jacobian(quadratic):
    built_in = double_pendulum(damping=0.3)
    built_in.spring("theta2", K, REST)
    generated = tree.with_potentials(double_pendulum(damping=0.3).build(), quadratic)
    systems = [tree.system(m, Q0, QD0) for m in (built_in.build(), generated)]
    for s in systems:
        s.step(0.0, 0.01)
    z, delta, u = systems[0].residual_point(0.01, 0.01)
    z = z + np.array([0.003, -0.002])   # off the solution: the potential's terms all count
    blocks = [s.residual(0.01, 0.01, z, delta, u) for s in systems]
    for key in ("r", "J_r_z", "J_r_state"):
        assert np.abs(blocks[0][key] - blocks[1][key]).max() <= 1e-10, key


# --- a nonlinear potential --------------------------------------------------------------------

def test_generated_gradient_and_hessian_match_central_differences(nonlinear):
    rng = np.random.default_rng(3)
    h = 1e-6
    for q in rng.uniform(-2.0, 2.0, size=(5, 2)):
        V, g, H = nonlinear.potential(q)
        t1, t2 = q
        exact = TORSION * (1 - np.cos(t1 - t2)) + MORSE_D * (1 - np.exp(-MORSE_A * t1)) ** 2
        assert V == pytest.approx(exact, abs=1e-13)
        for i in range(2):
            e = np.zeros(2)
            e[i] = h
            Vp, gp, _ = nonlinear.potential(q + e)
            Vm, gm, _ = nonlinear.potential(q - e)
            assert g[i] == pytest.approx((Vp - Vm) / (2 * h), abs=1e-7 * (1 + abs(g[i])))
            np.testing.assert_allclose(H[:, i], (gp - gm) / (2 * h), atol=1e-7 * (1 + np.abs(H).max()))
        np.testing.assert_allclose(H, H.T, atol=1e-14)


def test_the_tree_lagrangian_takes_the_potential(nonlinear):
    plain = double_pendulum().build()
    with_v = tree.with_potentials(plain, nonlinear)
    q, qd = np.array([0.7, -1.1]), np.array([0.2, 0.4])
    a, b = tree.lagrangian_terms(plain, q, qd), tree.lagrangian_terms(with_v, q, qd)
    V, g, _ = nonlinear.potential(q)
    assert b["potential"] - a["potential"] == pytest.approx(V, abs=1e-12)
    np.testing.assert_allclose(b["L_q"] - a["L_q"], -g, atol=1e-12)
    np.testing.assert_allclose(b["M"], a["M"], atol=0)


def assert_step_jacobians_match_central_differences(model, state_too):
    """J_r_z (and J_r_state) of the step from t = 0.02 s at a point off the solution
    against central differences of the residual, step h = 1e-6."""
    s = tree.system(model, Q0, QD0)
    s.step(0.0, 0.02)
    z, delta, u = s.residual_point(0.02, 0.02)
    z = z + np.array([0.01, -0.02])
    blocks = s.residual(0.02, 0.02, z, delta, u)
    h = 1e-6
    for j in range(z.size):
        e = np.zeros(z.size)
        e[j] = h
        fd = (s.residual(0.02, 0.02, z + e, delta, u)["r"]
              - s.residual(0.02, 0.02, z - e, delta, u)["r"]) / (2 * h)
        np.testing.assert_allclose(blocks["J_r_z"][:, j], fd, atol=1e-8)
    for j in range(delta.size if state_too else 0):
        e = np.zeros(delta.size)
        e[j] = h
        fd = (s.residual(0.02, 0.02, z, delta + e, u)["r"]
              - s.residual(0.02, 0.02, z, delta - e, u)["r"]) / (2 * h)
        np.testing.assert_allclose(blocks["J_r_state"][:, j], fd, atol=1e-7)


def test_step_jacobian_matches_central_differences(nonlinear):
    model = tree.with_potentials(double_pendulum().build(), nonlinear)
    assert_step_jacobians_match_central_differences(model, state_too=False)


def energy_error(model, dt, duration):
    # A swing of moderate amplitude: the chaotic swing of Q0 wanders between regions of
    # different speed, and with them the size of the (bounded) energy oscillation.
    out = run(model, dt, int(round(duration / dt)), q0={"theta1": 0.5, "theta2": -0.3},
              qd0={"theta1": 0.3, "theta2": 0.5})
    e = np.asarray(out["energy"])
    return np.abs(e - e[0]), e[0]


def test_energy_error_is_bounded_and_second_order(nonlinear):
    model = tree.with_potentials(double_pendulum().build(), nonlinear)
    err_02, e0 = energy_error(model, 0.02, 20.0)
    err_01, _ = energy_error(model, 0.01, 20.0)
    half = err_01.size // 2
    # Bounded, no drift: the second half's largest error is not above the first half's.
    assert err_01[half:].max() <= 1.1 * err_01[:half].max()
    assert err_01.max() <= 1e-3 * abs(e0)
    ratio = err_02.max() / err_01.max()
    assert 3.5 <= ratio <= 4.5, ratio


def test_observed_order_two(nonlinear):
    model = tree.with_potentials(double_pendulum().build(), nonlinear)
    duration = 2.0
    ref = run(model, 1e-3, 2000)
    end = np.array([ref["theta1"][-1], ref["theta2"][-1]])
    errors = []
    for dt in (0.04, 0.02, 0.01):
        out = run(model, dt, int(round(duration / dt)))
        errors.append(np.abs(np.array([out["theta1"][-1], out["theta2"][-1]]) - end).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8) and np.all(orders < 2.2), (errors, orders)


# --- the scene route -------------------------------------------------------------------------

def test_scene_names_the_library_relative_to_the_file(tmp_path):
    """The built-in double pendulum of a scene (coordinates q1, q2) with the nonlinear
    potential by index, its library copied beside the scene and named relative to it."""
    t1, t2 = ca.SX.sym("t1"), ca.SX.sym("t2")
    V = TORSION * (1 - ca.cos(t1 - t2)) + MORSE_D * (1 - ca.exp(-MORSE_A * t1)) ** 2
    indexed = sym.TreePotential("torsion_morse_indexed", coordinates={0: t1, 1: t2}, potential=V)
    library = tmp_path / "lib" / indexed.library.name
    library.parent.mkdir()
    library.write_bytes(indexed.library.read_bytes())
    scene = {"system": {"type": "tree", "model": "double_pendulum",
                        "potentials": [{"library": f"lib/{library.name}"}]},
             "initial_state": {"q": {"q1": 0.9, "q2": -0.4}},
             "integrator": {"tolerance": 1e-12},
             "dt": 0.01, "duration": 1.0}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    from_file = marsden.simulate(marsden.make_system(marsden.load_scene(str(path),
                                                                        allow_code=True)),
                                 dt=0.01, steps=100)
    model = tree.with_potentials(tree.n_link_pendulum(2), indexed)
    direct = marsden.simulate(tree.system(model, [0.9, -0.4], tolerance=1e-12), dt=0.01,
                              steps=100)
    assert from_file.ok and direct.ok
    names = ["q1", "q2", "energy"]
    assert np.abs(columns(from_file, names) - columns(direct, names)).max() <= 1e-12
    # The potential acts: without it the pendulum swings elsewhere.
    bare = marsden.simulate(tree.system(tree.n_link_pendulum(2), [0.9, -0.4]), dt=0.01,
                            steps=100)
    assert np.abs(columns(bare, names[:2]) - columns(direct, names[:2])).max() > 1e-2


# --- errors before stepping ----------------------------------------------------------------

def test_errors_name_the_symbol_and_shape(nonlinear):
    t1, t2 = ca.SX.sym("theta1"), ca.SX.sym("theta2")
    with pytest.raises(marsden.InputError, match=r"potential: expected shape 1 x 1, got 2 x 1"):
        sym.TreePotential("bad", coordinates=[t1, t2], potential=ca.vertcat(t1, t2))
    with pytest.raises(marsden.InputError,
                       match=r"potential: V is not finite at the probe point \(theta1\)"):
        sym.TreePotential("bad", coordinates=[t1], potential=ca.sqrt(t1 - 1.0))
    with pytest.raises(marsden.InputError,
                       match=r"potential: uses symbols other than theta1: theta2"):
        sym.TreePotential("bad", coordinates=[t1], potential=t1 * t2)
    with pytest.raises(marsden.InputError, match=r"coordinates: symbol theta1 stands for "
                                                 r"two coordinates"):
        sym.TreePotential("bad", coordinates={"theta1": t1, 1: t1}, potential=t1)
    twice = sym.TreePotential("twice", coordinates={"theta1": t1, 0: t2}, potential=t1 * t2)
    with pytest.raises(marsden.InputError, match=r"coordinate \"theta1\" appears twice"):
        tree.with_potentials(double_pendulum().build(), twice)
    elbow = ca.SX.sym("elbow")
    wrong = sym.TreePotential("elbow", coordinates=[elbow], potential=elbow ** 2)
    with pytest.raises(marsden.InputError,
                       match=r"elbow-.*\.so': its coordinate 0: tree model: no coordinate named "
                             r"\"elbow\" \(coordinates: theta1, theta2\)"):
        tree.with_potentials(double_pendulum().build(), wrong)
    far = sym.TreePotential("far", coordinates={5: t1}, potential=t1 ** 2)
    with pytest.raises(marsden.InputError,
                       match=r"its coordinate 0 is index 5, but the model has coordinates 0..1"):
        tree.with_potentials(double_pendulum().build(), far)
    b = double_pendulum()
    with pytest.raises(marsden.InputError, match=r"generated model '.*missing.so': no such file"):
        b.potential("/nonexistent/missing.so")


def test_scene_errors_name_the_field(tmp_path):
    scene = {"system": {"type": "tree", "model": "double_pendulum",
                        "potentials": [{"library": "nowhere.so"}]},
             "dt": 0.01, "duration": 0.1}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    with pytest.raises(marsden.InputError, match=r"potentials.*library.*no such file"):
        marsden.load_scene(str(path), allow_code=True)


def test_dmoc_takes_the_potential_from_a_problem_file(tmp_path):
    """A pendulum with a torque input and a Morse spring at its hinge, moved from hanging to
    1.2 rad at rest by DMOC; the optimum re-simulates with the potential, whose library the
    problem names relative to itself (and the re-simulation scene absolutely)."""
    th = ca.SX.sym("theta")
    morse = sym.TreePotential("morse_hinge", coordinates=[th],
                              potential=MORSE_D * (1 - ca.exp(-MORSE_A * th)) ** 2)
    (tmp_path / morse.library.name).write_bytes(morse.library.read_bytes())
    problem = {
        "system": {"type": "tree", "frames": [
            {"name": "arm", "type": "rx", "coordinate": "theta"},
            {"name": "bob", "parent": "arm", "type": "tz", "value": -0.5,
             "mass": {"mass": 0.4}}],
            "inputs": [{"type": "force", "coordinate": "theta"}],
            "potentials": [{"library": morse.library.name}]},
        "integrator": {"method": "midpoint", "tolerance": 1e-13},
        "dt": 0.05, "steps": 30,
        "initial_state": {"q": {"theta": 0}},
        "final_state": {"q": {"theta": 1.2}, "at_rest": True},
        "bounds": {"controls": {"lower": [-10], "upper": [10]}},
        "cost": {"control_weights": [1]}}
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(problem))
    summary = marsden.run_problem(marsden.load_problem(path, allow_code=True), tmp_path / "out")
    assert summary["ok"], summary["message"]
    assert summary["resimulation_error"] < 1e-6
    scene = marsden.load_scene(tmp_path / "out" / "resimulate.json", allow_code=True)
    run = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps)
    assert abs(run["theta"][-1] - 1.2) < 1e-6
    # The scene names the library absolutely, and without the potential the optimal
    # torques would take the arm elsewhere.
    fields = json.loads((tmp_path / "out" / "resimulate.json").read_text())
    assert fields["system"]["potentials"] == [{"library": str(tmp_path / morse.library.name)}]
    del fields["system"]["potentials"]
    bare = marsden.parse_scene(json.dumps(fields))
    without = marsden.simulate(marsden.make_system(bare), dt=bare.dt, steps=bare.steps)
    assert abs(without["theta"][-1] - 1.2) > 1e-2


# --- generated forces ----------------------------------------------------------------------

C_DAMP, C1, C3, C_REL = 0.3, 0.2, 0.05, 0.4


@pytest.fixture(scope="module")
def linear_damper():
    """Q = -c qdot on theta2: the coordinate damper."""
    q, qd = ca.SX.sym("q"), ca.SX.sym("qd")
    return sym.TreeForce("damper_theta2", coordinates={"theta2": q}, velocities=[qd],
                         force=-C_DAMP * qd)


@pytest.fixture(scope="module")
def nonlinear_force():
    """A shoulder damper stiffer away from hanging, with a cubic term, and a damper on the
    links' relative rate: Q . qdot <= 0."""
    t1, t2 = ca.SX.sym("theta1"), ca.SX.sym("theta2")
    w1, w2 = ca.SX.sym("w1"), ca.SX.sym("w2")
    rel = C_REL * (w2 - w1)
    Q = ca.vertcat(-C1 * (1 + ca.sin(t1) ** 2) * w1 - C3 * w1 ** 3 + rel, -rel)
    return sym.TreeForce("shoulder_elbow_drag", coordinates=[t1, t2], velocities=[w1, w2],
                         force=Q)


@pytest.mark.parametrize("method", ["midpoint", "galerkin", "rk4"])
def test_linear_force_gives_the_coordinate_damper_trajectory(linear_damper, quadratic, method):
    built_in = double_pendulum(damping=C_DAMP)
    built_in.spring("theta2", K, REST)
    generated = double_pendulum()
    generated.potential(quadratic)
    generated.force(linear_damper)
    a = run(built_in.build(), 0.01, 400, method)
    b = run(generated.build(), 0.01, 400, method)
    names = ["theta1", "theta2", "qd_theta1", "qd_theta2", "energy"]
    assert np.abs(columns(a, names) - columns(b, names)).max() <= 1e-12


def test_linear_force_gives_the_coordinate_damper_step_jacobian(linear_damper):
    built_in = double_pendulum(damping=C_DAMP).build()
    generated = tree.with_forces(double_pendulum().build(), linear_damper)
    systems = [tree.system(m, Q0, QD0) for m in (built_in, generated)]
    for s in systems:
        s.step(0.0, 0.01)
    z, delta, u = systems[0].residual_point(0.01, 0.01)
    z = z + np.array([0.003, -0.002])
    blocks = [s.residual(0.01, 0.01, z, delta, u) for s in systems]
    for key in ("r", "J_r_z", "J_r_state"):
        assert np.abs(blocks[0][key] - blocks[1][key]).max() <= 1e-10, key


def test_generated_force_derivatives_match_central_differences(nonlinear_force):
    rng = np.random.default_rng(5)
    h = 1e-6
    for q, qd in zip(rng.uniform(-2, 2, size=(4, 2)), rng.uniform(-3, 3, size=(4, 2))):
        Q, Q_q, Q_v = nonlinear_force.force(q, qd)
        rel = C_REL * (qd[1] - qd[0])
        exact = [-C1 * (1 + np.sin(q[0]) ** 2) * qd[0] - C3 * qd[0] ** 3 + rel, -rel]
        np.testing.assert_allclose(Q, exact, atol=1e-13)
        assert Q @ qd <= 0.0
        for i in range(2):
            e = np.zeros(2)
            e[i] = h
            fd_q = (nonlinear_force.force(q + e, qd)[0] - nonlinear_force.force(q - e, qd)[0]) / (2 * h)
            fd_v = (nonlinear_force.force(q, qd + e)[0] - nonlinear_force.force(q, qd - e)[0]) / (2 * h)
            np.testing.assert_allclose(Q_q[:, i], fd_q, atol=1e-7)
            np.testing.assert_allclose(Q_v[:, i], fd_v, atol=1e-7)


def test_step_jacobian_with_the_force_matches_central_differences(nonlinear_force, nonlinear):
    model = tree.with_forces(tree.with_potentials(double_pendulum().build(), nonlinear),
                             nonlinear_force)
    assert_step_jacobians_match_central_differences(model, state_too=True)


def test_with_the_force_energy_falls_and_the_order_is_two(nonlinear_force, nonlinear):
    model = tree.with_forces(tree.with_potentials(double_pendulum().build(), nonlinear),
                             nonlinear_force)
    duration = 2.0
    ref = run(model, 1e-3, 2000)
    e = np.asarray(ref["energy"])
    assert e[-1] < e[0] - 0.1 * abs(e[0] - e.min()) and np.all(np.diff(e) <= 1e-9)
    # The largest error over the common times (every 0.04 s): a single end point can sit
    # where the error curves of two step sizes cross.
    q_ref = columns(ref, ["theta1", "theta2"])[::40]
    errors = []
    for dt in (0.04, 0.02, 0.01):
        out = run(model, dt, int(round(duration / dt)))
        stride = int(round(0.04 / dt))
        errors.append(np.abs(columns(out, ["theta1", "theta2"])[::stride] - q_ref).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8) and np.all(orders < 2.2), (errors, orders)


def test_scene_forces_field(nonlinear_force, tmp_path):
    t1, t2, w1, w2 = (ca.SX.sym(n) for n in ("a", "b", "wa", "wb"))
    indexed = sym.TreeForce("relative_drag", coordinates={0: t1, 1: t2}, velocities=[w1, w2],
                            force=ca.vertcat(C_REL * (w2 - w1), -C_REL * (w2 - w1)))
    scene = {"system": {"type": "tree", "model": "double_pendulum",
                        "forces": [indexed.scene_element()]},
             "initial_state": {"q": {"q1": 0.9, "q2": -0.4}},
             "integrator": {"tolerance": 1e-12}, "dt": 0.01, "duration": 1.0}
    from_scene = marsden.simulate(marsden.make_system(marsden.parse_scene(json.dumps(scene),
                                                                          allow_code=True)),
                                  dt=0.01, steps=100)
    model = tree.with_forces(tree.n_link_pendulum(2), indexed)
    direct = marsden.simulate(tree.system(model, [0.9, -0.4], tolerance=1e-12), dt=0.01,
                              steps=100)
    assert from_scene.ok and direct.ok
    names = ["q1", "q2", "energy"]
    assert np.abs(columns(from_scene, names) - columns(direct, names)).max() <= 1e-12
    e = np.asarray(direct["energy"])
    assert e[-1] < e[0] - 1e-3


def test_force_errors_name_the_symbol_and_shape():
    t1, t2, w1, w2 = (ca.SX.sym(n) for n in ("theta1", "theta2", "w1", "w2"))
    with pytest.raises(marsden.InputError, match=r"force: expected shape 2 x 1, got 3 x 1"):
        sym.TreeForce("bad", coordinates=[t1, t2], velocities=[w1, w2],
                      force=ca.vertcat(w1, w2, w1))
    with pytest.raises(marsden.InputError, match=r"velocities: expected 2 scalar CasADi symbols"):
        sym.TreeForce("bad", coordinates=[t1, t2], velocities=[w1], force=ca.vertcat(w1, w1))
    with pytest.raises(marsden.InputError, match=r"velocities: symbol theta1 is used twice"):
        sym.TreeForce("bad", coordinates=[t1], velocities=[t1], force=-t1)
    with pytest.raises(marsden.InputError,
                       match=r"force: dQ/dqdot_c \(1 x 1\) is not finite at the probe point "
                             r"\(theta1, w1\)"):
        # Finite at the velocity probe w1 = 0.2, its derivative is not.
        sym.TreeForce("bad", coordinates=[t1], velocities=[w1], force=-ca.sqrt(w1 - 0.2))
    with pytest.raises(marsden.InputError, match=r"force: uses symbols other than theta1, w1: "
                                                 r"theta2"):
        sym.TreeForce("bad", coordinates=[t1], velocities=[w1], force=-t2 * w1)
