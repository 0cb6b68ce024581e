"""The Python package (marsden._core and python/marsden): every binding exercised against
properties that could fail: group identities and finite differences, the scene driver
against the command's files, conservation, residual Jacobians against central differences,
and errors that name what is wrong.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it, or
an installed copy).
"""

import json
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import marsden
from residual_checks import assert_residual_jacobians_match_central_differences

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "examples" / "scenes"


def test_version_is_the_projects():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert f"project(marsden VERSION {marsden.__version__}" in cmake


def test_the_package_is_typed():
    # py.typed and the stubs of the compiled core, beside the module wherever it was
    # imported from (the build tree, or the package pip installed).
    package = pathlib.Path(marsden.__file__).parent
    assert (package / "py.typed").exists()
    stubs = {name: package / "_core" / f"{name}.pyi"
             for name in ("__init__", "lie", "tree", "maximal", "control")}
    for stub in stubs.values():
        assert stub.exists(), stub
    assert "def tvlqr(" in stubs["control"].read_text()
    assert "class System" in stubs["__init__"].read_text()


# --- Lie groups ---------------------------------------------------------------------------

GROUPS = [(marsden.lie.SO3, 3), (marsden.lie.SE2, 3), (marsden.lie.SE3, 6)]


@pytest.mark.parametrize("group,dim", GROUPS, ids=["SO3", "SE2", "SE3"])
def test_exp_log_and_cay_invert_each_other(group, dim):
    rng = np.random.default_rng(1)
    for _ in range(5):
        xi = 0.5 * rng.normal(size=dim)  # rotation angle below pi, where log inverts exp
        np.testing.assert_allclose(group.log(group.exp(xi)), xi, atol=1e-12)
        np.testing.assert_allclose(group.cay_inv(group.cay(xi)), xi, atol=1e-12)
        np.testing.assert_allclose(group.dexp_inv(xi) @ group.dexp(xi), np.eye(dim), atol=1e-12)


@pytest.mark.parametrize("group,dim", GROUPS, ids=["SO3", "SE2", "SE3"])
def test_dexp_and_dcay_are_right_trivialised_tangents(group, dim):
    # tau(xi + e d) tau(xi)^-1 = exp(e dtau(xi) d) to first order.
    rng = np.random.default_rng(2)
    xi, d = rng.normal(size=dim), rng.normal(size=dim)
    e = 1e-6
    for tau, dtau in ((group.exp, group.dexp), (group.cay, group.dcay)):
        plus = group.log(tau(xi + e * d) @ np.linalg.inv(tau(xi)))
        minus = group.log(tau(xi - e * d) @ np.linalg.inv(tau(xi)))
        np.testing.assert_allclose((plus - minus) / (2 * e), dtau(xi) @ d, atol=1e-8)


def test_group_arguments_are_checked():
    np.testing.assert_array_equal(marsden.lie.SO3.exp([0.0, 0.0, 0.0]), np.eye(3))
    with pytest.raises(TypeError):
        marsden.lie.SE3.exp(np.zeros(5))
    with pytest.raises(marsden.InputError, match="g: not a rotation"):
        marsden.lie.SO3.log(np.diag([1.0, 1.0, 2.0]))
    bottom = np.eye(4)
    bottom[3, 0] = 1.0
    with pytest.raises(ValueError, match="last row"):
        marsden.lie.SE3.log(bottom)


# --- scenes, systems, the driver ----------------------------------------------------------

def test_simulate_matches_the_command_line_files(tmp_path):
    # The same scene through marsden.simulate and through run_scene (the command's path):
    # the same driver, so the rows agree to the last digit the CSV keeps.
    scene = marsden.load_scene(SCENES / "helicopter_turn.json")
    run = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps,
                           output_every=scene.output_every)
    assert run.ok and len(run) == scene.steps // scene.output_every + 1
    summary = marsden.run_scene(scene, tmp_path)
    assert summary["ok"]
    csv = np.loadtxt(tmp_path / "trajectory.csv", delimiter=",", skiprows=1)
    header = (tmp_path / "trajectory.csv").read_text().splitlines()[0].split(",")
    assert header == run.columns
    np.testing.assert_allclose(run.values, csv, rtol=1e-15, atol=0)
    assert run["position"].shape == (len(run), 3)
    np.testing.assert_array_equal(run["position"][:, 0], run["x"])
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["steps_done"] == run.summary["steps_done"]


def test_free_rigid_body_keeps_its_spatial_momentum():
    scene = marsden.parse_scene(json.dumps({
        "system": {"type": "rigid_body", "inertia": {"J": [1.0, 2.0, 3.0], "mass": 1.0}},
        "initial_state": {"angular_velocity": [0.3, 2.0, 0.1]},
        "integrator": {"method": "vi"}, "dt": 0.05, "duration": 20.0}))
    system = marsden.make_system(scene)
    mu0 = system.momentum()
    run = marsden.simulate(system, dt=scene.dt, steps=scene.steps)
    assert run.ok
    assert run.summary["momentum"]["relative_drift"] < 1e-10
    np.testing.assert_allclose(system.momentum(), mu0, rtol=1e-10, atol=1e-12)
    # Energy of the variational integrator: bounded, not drifting.
    assert run.summary["energy"]["relative_drift"] < 1e-2


def test_step_checkpoint_and_rollback():
    system = marsden.make_system(marsden.load_scene(SCENES / "maximal_chain.json"))
    system.checkpoint()
    before = system.row(0.0)
    status = system.step(0.0, 0.01)
    assert status and status.converged and status.iterations > 0
    assert not np.array_equal(system.row(0.01)[1:], before[1:])
    system.rollback()
    np.testing.assert_array_equal(system.row(0.0), before)
    assert "StepStatus(converged=True" in repr(status)


def test_a_failed_run_is_a_report_not_an_exception():
    # A 6-link loop at a step too large for eq. (32): the run stops with its reason.
    scene = marsden.parse_scene(json.dumps({
        "system": {"type": "maximal", "mechanism": "closed_chain", "parameters": {"n": 6}},
        "initial_state": {"qd": {"joint0": 40.0}}, "dt": 0.2, "duration": 2.0}))
    run = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps)
    assert not run.ok
    assert run.summary["failed_step"]["reason"] in {"angular_rate_limit", "not_converged"}
    assert np.isfinite(run.values).all()


# --- residuals ----------------------------------------------------------------------------

RESIDUAL_SCENES = ["maximal_chain.json", "rigid_body.json", "double_pendulum.json",
                   "car_parallel_park.json"]


def system_after_three_steps(name):
    """The scene's system stepped three times: (system, dt)."""
    scene = marsden.load_scene(SCENES / name)
    system = marsden.make_system(scene)
    dt = scene.dt
    for k in range(3):
        assert system.step(k * dt, dt)
    return system, dt


@pytest.mark.parametrize("name", RESIDUAL_SCENES)
def test_residual_jacobians_match_central_differences(name):
    system, dt = system_after_three_steps(name)
    assert system.has_residual
    t_k = 3 * dt
    assert_residual_jacobians_match_central_differences(system, t_k, dt)


def test_residual_arguments_are_checked():
    system = marsden.make_system(marsden.load_scene(SCENES / "maximal_chain.json"))
    z, delta, u = system.residual_point(0.0, 0.01)
    with pytest.raises(marsden.InputError, match="z: expected"):
        system.residual(0.0, 0.01, z[:-1], delta, u)
    with pytest.raises(TypeError):
        system.residual(0.0, 0.01, "z", delta, u)


# --- errors -------------------------------------------------------------------------------

def test_input_errors_name_the_field_and_are_value_errors():
    assert issubclass(marsden.InputError, ValueError)
    assert issubclass(marsden.SolverError, RuntimeError)
    body = {"type": "rigid_body", "inertia": {"J": [1.0, 2.0, 3.0], "mass": 1.0}}
    with pytest.raises(marsden.InputError, match="field 'dt'"):
        marsden.parse_scene(json.dumps({"system": body, "dt": -1, "duration": 1}))
    with pytest.raises(marsden.InputError, match="field 'system.inertia'"):
        marsden.parse_scene('{"system": {"type": "rigid_body"}, "dt": 0.1, "duration": 1}')
    with pytest.raises(marsden.InputError, match="mine.json"):
        marsden.parse_scene("{", "mine.json")
    system = marsden.make_system(marsden.load_scene(SCENES / "rigid_body.json"))
    with pytest.raises(marsden.InputError, match="on_failure"):
        marsden.simulate(system, dt=0.01, steps=10, on_failure="retry")
    with pytest.raises(marsden.InputError):
        marsden.simulate(system, dt=float("nan"), steps=10)


# --- the tutorial -------------------------------------------------------------------------

def test_every_code_block_of_docs_python_md_runs(monkeypatch, capsys):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert len(blocks) >= 4
    monkeypatch.chdir(ROOT)
    namespace = {}
    try:
        for block in blocks:
            exec(compile(block, "docs/python.md", "exec"), namespace)
    finally:
        # The tutorial's signal holds a lambda whose globals are this namespace, a cycle
        # through C++ that the garbage collector cannot see: break it.
        namespace.clear()
    assert "field 'system.inertia'" in capsys.readouterr().out


# --- tree systems -------------------------------------------------------------------------

def chain_built_in_python(n, length=1.0, mass=1.0):
    b = marsden.tree.Builder()
    parent = "world"
    for i in range(1, n + 1):
        b.frame(f"link{i}", parent, "rx", f"q{i}")
        parent = b.frame(f"mass{i}", f"link{i}", "tz", value=-length, mass=mass)
    return b.build()


def test_a_chain_built_frame_by_frame_runs_as_the_built_in_model():
    mine, builtin = chain_built_in_python(3), marsden.tree.n_link_pendulum(3)
    assert mine.coordinates == builtin.coordinates == ["q1", "q2", "q3"]
    runs = []
    for model in (mine, builtin):
        system = marsden.tree.system(model, q0={"q1": 0.6, "q3": -0.4}, qd0=[0.0, 1.0, 0.0])
        runs.append(marsden.simulate(system, dt=0.01, steps=200))
    assert runs[0].ok and runs[1].ok
    np.testing.assert_allclose(runs[0]["q"], runs[1]["q"], rtol=0, atol=1e-12)
    # A conservative chain: the midpoint VI's energy error stays small and bounded.
    assert runs[0].summary["energy"]["relative_drift"] < 1e-3


def test_the_galerkin_integrator_runs_from_python_at_order_six():
    model = marsden.tree.n_link_pendulum(3)
    start = dict(q0={"q1": 0.6, "q3": -0.4}, qd0=[0.0, 1.0, 0.0])
    galerkin = marsden.simulate(
        marsden.tree.system(model, **start, method="galerkin", stages=3, quadrature="gauss",
                            tolerance=1e-12), dt=0.01, steps=200)
    midpoint = marsden.simulate(marsden.tree.system(model, **start), dt=0.01, steps=200)
    assert galerkin.ok and galerkin.summary["newton_iterations"]["min"] >= 1
    # Order 6 against order 2 at the same step: the energy error is orders of magnitude
    # smaller (the velocities are recovered from the discrete momenta in both).
    assert galerkin.summary["energy"]["relative_drift"] < 1e-7
    assert midpoint.summary["energy"]["relative_drift"] > 100 * galerkin.summary["energy"]["relative_drift"]
    with pytest.raises(marsden.InputError, match="stages"):
        marsden.tree.system(model, method="galerkin", stages=0)
    with pytest.raises(marsden.InputError, match="quadrature"):
        marsden.tree.system(model, method="galerkin", quadrature="simpson")


def test_builder_errors_name_what_is_wrong():
    b = marsden.tree.Builder()
    with pytest.raises(marsden.InputError, match="nowhere"):
        b.frame("a", "nowhere", "rx", "q")
    with pytest.raises(ValueError, match="type must be one of"):
        b.frame("a", "world", "spin", "q")
    b.frame("a", "world", "rx", "q", mass=1.0, com=[0, 0, -1])
    model = b.build()
    with pytest.raises(ValueError, match="no coordinate named 'x'"):
        marsden.tree.system(model, q0={"x": 1.0})
    with pytest.raises(ValueError, match="expected 1 values"):
        marsden.tree.system(model, q0=[1.0, 2.0])


def test_urdf_models_load_in_python():
    model = marsden.tree.model_from_urdf(ROOT / "examples" / "urdf" / "double_pendulum.urdf")
    assert len(model.coordinates) == 2
    run = marsden.simulate(marsden.tree.system(model, q0=[0.3, 0.0]), dt=0.005, steps=100)
    assert run.ok


# --- signals ------------------------------------------------------------------------------

def hinge(damping=0.0, input_kind="force"):
    """A 0.3 kg point on a 0.5 m link about x, driven by a torque on its coordinate (one
    control) or by a wrench on the link (six: torque, force in the link's axes)."""
    b = marsden.tree.Builder()
    b.frame("link", "world", "rx", "theta")
    b.frame("tip", "link", "tz", value=-0.5, mass=0.3)
    if damping:
        b.damper("theta", damping)
    if input_kind == "force":
        b.force_input("theta")
    else:
        b.wrench_input("link", body_axes=True)
    return b



def test_a_python_callable_drives_the_system_as_the_same_built_in_signal():
    # A torque on a damped hinge: the callable and the sinusoid are the same function of
    # time, sampled by the integrator at the same points, so the runs agree to round-off.
    model = hinge(damping=0.05).build()
    sine = marsden.Signal.sinusoid([0.1], [0.4], [1.5])
    calls = []

    def torque(t):
        calls.append(t)
        return [0.1 + 0.4 * np.sin(2 * np.pi * 1.5 * t)]

    runs = [marsden.simulate(marsden.tree.system(model, controls=s), dt=0.01, steps=150)
            for s in (sine, marsden.Signal.function(torque, 1))]
    np.testing.assert_allclose(runs[0]["q"], runs[1]["q"], rtol=0, atol=1e-13)
    # The midpoint VI samples at t_k + dt/2: the callable saw those times.
    assert any(abs(t - 0.005) < 1e-12 for t in calls)
    np.testing.assert_allclose(sine(0.25), torque(0.25))


def test_signals_check_their_arguments_and_results():
    with pytest.raises(marsden.InputError, match="at least one component"):
        marsden.Signal.constant(np.zeros(0))
    with pytest.raises(marsden.InputError, match="at least one component"):
        marsden.Signal.function(lambda t: [], 0)
    with pytest.raises(marsden.InputError, match="hold"):
        marsden.Signal.table([0.0, 1.0], [[0.0], [1.0]], hold="first")
    held = marsden.Signal.table([0.0, 1.0], [[0.0], [1.0]], hold="zero_order")
    assert held.zero_order_hold and held(0.5)[0] == 0.5  # the hold is the step's business
    model = marsden.tree.n_link_pendulum(1)
    driven = hinge().build()
    bad = marsden.Signal.function(lambda t: [float("nan")], 1)
    run_bad = marsden.tree.system(driven, controls=bad)
    with pytest.raises(marsden.InputError, match="callable returned"):
        marsden.simulate(run_bad, dt=0.01, steps=5)
    raising = marsden.Signal.function(lambda t: 1 / 0, 1)
    with pytest.raises(ZeroDivisionError):
        marsden.simulate(marsden.tree.system(driven, controls=raising), dt=0.01, steps=5)
    assert model.num_inputs == 0


def bent_chain(n=12, length=0.1, mass=0.2):
    """A planar chain hanging from the world with a torque on every joint, the start q*
    (q1 = 0.3, the others 0.02) and the torques that hold it still there: tau_i = dV/dq_i
    = m g l sum_{k >= i} (n - k + 1) sin(phi_k), phi_k = q_1 + ... + q_k."""
    b = marsden.tree.Builder()
    parent = "world"
    for i in range(1, n + 1):
        b.frame(f"joint{i}", parent, "rx", f"q{i}")
        parent = b.frame(f"link{i}", f"joint{i}", "tz", value=-length, mass=mass)
        b.force_input(f"q{i}")
    q = np.full(n, 0.02)
    q[0] = 0.3
    sines = np.sin(np.cumsum(q)) * np.arange(n, 0, -1)
    tau = mass * 9.81 * length * np.cumsum(sines[::-1])[::-1]
    return b.build(), q, tau


def test_more_than_eight_inputs_all_drive_the_system():
    # Twelve torques hold a twelve-link chain bent, from a table, from a Python callable and
    # from a controller; with the twelfth left out it falls away.
    model, q, tau = bent_chain()
    assert model.num_inputs == 12
    table = marsden.Signal.table([0.0, 10.0], [tau, tau])
    assert table.size == 12
    np.testing.assert_allclose(table(0.3), tau, rtol=1e-15)
    for controls in (table, marsden.Signal.function(lambda t: tau, 12), lambda t: tau):
        run = marsden.simulate(marsden.tree.system(model, q0=q, controls=controls), dt=0.01,
                               steps=50)
        assert np.abs(run["q"] - q).max() < 1e-9
        np.testing.assert_allclose(run["controls"][-1], tau, rtol=1e-15)
    feedback = marsden.Feedback(lambda t, x: tau, 12)
    held = marsden.simulate(marsden.tree.system(model, q0=q, controls=feedback), dt=0.01,
                            steps=50, feedback=feedback)
    assert np.abs(held["q"] - q).max() < 1e-9
    missing = np.append(tau[:-1], 0.0)
    falls = marsden.simulate(marsden.tree.system(model, q0=q, controls=lambda t: missing),
                             dt=0.01, steps=20)
    assert np.abs(falls["q"] - q).max() > 1e-5


# --- optimal control ----------------------------------------------------------------------

def test_a_problem_built_as_a_dict_solves_and_is_reproduced(tmp_path):
    problem_dict = json.loads((ROOT / "examples" / "problems" / "cart_pole_swing_up.json")
                              .read_text())
    problem = marsden.parse_problem(json.dumps(problem_dict), "cart_pole")
    assert problem.system_type == "tree" and problem.steps == problem_dict["steps"]
    solution = problem.solve()
    assert solution["ok"], solution["message"]
    assert solution["resimulation_error"] < 1e-6
    states = solution["states"]
    pole = states["values"][:, states["columns"].index("q_pole")]
    assert abs(pole[-1] - np.pi) < 1e-8
    # A warm start from the solution converges in fewer iterations.
    again = problem.solve(warm_start=solution["x"])
    assert again["ok"] and again["iterations"] < solution["iterations"]
    # The command's files, and the scene that re-simulates the optimum.
    summary = marsden.run_problem(problem, tmp_path)
    assert summary["ok"]
    scene = marsden.load_scene(tmp_path / "resimulate.json")
    run = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps)
    np.testing.assert_allclose(run["pole"], pole, atol=1e-6)


def test_problem_errors_name_the_field():
    with pytest.raises(marsden.InputError, match="field 'steps'"):
        marsden.parse_problem(json.dumps({"system": {"type": "helicopter"}, "dt": 0.1,
                                          "steps": 0}), "bad")


# --- experiments --------------------------------------------------------------------------

def test_experiments_are_listed_and_run(tmp_path):
    names = [name for name, _ in marsden.list_experiments()]
    assert "tree-energy" in names and "rigid-body-accuracy" in names
    results = marsden.run_experiment("tree-energy", tmp_path, quick=True)
    assert results["experiment"] == "tree-energy" and results["quick"] is True
    assert all("holds" in claim for claim in results["claims"])
    with pytest.raises(marsden.InputError, match="unknown experiment"):
        marsden.run_experiment("no-such-experiment", tmp_path)


def test_an_experiment_reports_its_parts_and_stops_on_ctrl_c(tmp_path):
    # In a child Python: the progress callback names the parts; a SIGINT (Ctrl-C) once the
    # first data file is out stops the experiment, which returns with status "interrupted"
    # and lists only complete files.
    import signal
    import time
    out = tmp_path / "mp"
    code = (
        "import json, sys, marsden\n"
        "parts = []\n"
        "r = marsden.run_experiment('maximal-properties', sys.argv[1], quick=True,\n"
        "                           progress=lambda e, p, t: parts.append(p))\n"
        "print(json.dumps({'status': r['status'], 'parts': parts,\n"
        "                  'files': [f['path'] for f in r['data_files']]}))\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and not (out / "energy.csv").exists():
        time.sleep(0.01)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["status"] == "interrupted"
    assert report["parts"] and report["parts"][0] == "energy"
    for name in report["files"]:
        assert (out / name).stat().st_size > 0
    assert not list(out.glob(".*"))


# --- examples -----------------------------------------------------------------------------

EXAMPLES = sorted((ROOT / "examples" / "python").glob("*.py"))


# Each example's arguments: an output folder, and for run_file one scene and one problem.
EXAMPLE_RUNS = [(p, []) for p in EXAMPLES if p.stem != "run_file"] + [
    (ROOT / "examples" / "python" / "run_file.py", [str(SCENES / "snakeboard_gait.json")]),
    (ROOT / "examples" / "python" / "run_file.py",
     [str(ROOT / "examples" / "problems" / "cart_pole_swing_up.json")])]


@pytest.mark.parametrize("example,args", EXAMPLE_RUNS,
                         ids=[p.stem + "".join("-" + pathlib.Path(x).stem for x in a)
                              for p, a in EXAMPLE_RUNS])
def test_python_examples_run(example, args, tmp_path):
    assert len(example.read_text().splitlines()) <= 60
    out = tmp_path / "out"
    out.mkdir()
    r = subprocess.run([sys.executable, str(example), *args, str(out)], capture_output=True,
                       text=True, timeout=600,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr
    if example.stem == "run_file":
        assert (out / "summary.json").exists()


# --- signals from Python on scene systems, and linearisation ------------------------------

def test_a_scene_system_takes_python_signals():
    # The snakeboard gait's sinusoidal shape rates, given once by the scene and once by a
    # Python callable of the same function: the same run to round-off.
    scene = marsden.load_scene(SCENES / "snakeboard_gait.json")
    w = 2 * np.pi * 0.5

    def rates(t):
        return [1.5 * np.sin(w * t + np.pi / 2), 0.6 * np.sin(w * t + np.pi / 2)]

    runs = [marsden.simulate(marsden.make_system(scene, controls=c), dt=scene.dt, steps=300)
            for c in (None, marsden.Signal.function(rates, 2))]
    np.testing.assert_allclose(runs[0].values, runs[1].values, rtol=0, atol=1e-12)
    with pytest.raises(marsden.InputError):
        marsden.make_system(scene, controls=marsden.Signal.constant([1.0]))
    with pytest.raises(marsden.InputError, match="shape"):
        marsden.make_system(scene, shape=marsden.Signal.constant([1.0]))


@pytest.mark.parametrize("name", ["maximal_chain.json", "double_pendulum.json"])
def test_step_derivatives_match_differences_of_solved_steps(name):
    # dz/d(delta) of the implicit-function theorem against central differences of the step
    # solved again from a perturbed state (the state perturbed through the residual's
    # chart, so both sides see the same map).
    system, dt = system_after_three_steps(name)
    t_k = 3 * dt
    d = marsden.step_derivatives(system, t_k, dt)
    z, u = d["z"], d["u"]
    _, delta0, _ = system.residual_point(t_k, dt)
    np.testing.assert_allclose(system.residual(t_k, dt, z, delta0, u)["r"], 0.0, atol=1e-9)
    h = 1e-6
    for c in range(0, delta0.size, max(1, delta0.size // 6)):
        zs = []
        for sign in (1.0, -1.0):
            delta = delta0.copy()
            delta[c] += sign * h
            zz = z.copy()
            for _ in range(20):
                b = system.residual(t_k, dt, zz, delta, u)
                zz = zz - np.linalg.solve(b["J_r_z"], b["r"])
            zs.append(zz)
        fd = (zs[0] - zs[1]) / (2 * h)
        assert np.abs(fd - d["dz_dstate"][:, c]).max() <= 1e-5 * (1.0 + np.abs(fd).max()), c


def test_vehicles_from_python_run_as_their_scenes():
    # The helicopter of examples/scenes/helicopter_hover.json built from keyword arguments,
    # with its constant inputs as Python signals: the same run.
    scene_text = (SCENES / "helicopter_hover.json").read_text()
    scene = marsden.parse_scene(scene_text)
    spec = json.loads(scene_text)
    system = marsden.vehicles.system(
        "helicopter", **{k: v for k, v in spec["system"].items() if k != "type"},
        integrator=spec.get("integrator"), initial_state=spec.get("initial_state"),
        controls=marsden.Signal.function(lambda t: spec["controls"]["value"], 2),
        shape=marsden.Signal.constant(spec.get("shape", {"value": [0.0, 0.0]})["value"]))
    a = marsden.simulate(system, dt=scene.dt, steps=200)
    b = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=200)
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-12)
    with pytest.raises(marsden.InputError, match="system.half_length"):
        marsden.vehicles.system("snakeboard", half_length=-1.0)
    with pytest.raises(ValueError, match="type: expected one of"):
        marsden.vehicles.system("bicycle")


# --- maximal coordinates ------------------------------------------------------------------

def test_a_mechanism_from_python_runs_as_its_scene():
    # The generic suite's driven chain (springs, dampers, two inputs) built in Python.
    text = json.dumps({
        "system": {"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3},
                   "inputs": ["joint0", "joint2"],
                   "springs": [{"joint": "joint1", "stiffness": 2.0}],
                   "dampers": [{"joint": "joint2", "damping": 0.1}]},
        "controls": {"type": "constant", "value": [0.5, -0.2]},
        "initial_state": {"qd": {"joint1": 0.7}}, "dt": 0.01, "duration": 1.0})
    scene = marsden.parse_scene(text)
    mine = marsden.maximal.system(marsden.maximal.pendulum_chain(3), inputs=["joint0", "joint2"],
                                  controls=marsden.Signal.constant([0.5, -0.2]),
                                  springs={"joint1": 2.0}, dampers={"joint2": 0.1},
                                  qd={"joint1": 0.7}, dt=0.01)
    a = marsden.simulate(mine, dt=0.01, steps=100)
    b = marsden.simulate(marsden.make_system(scene), dt=0.01, steps=100)
    assert a.ok and b.ok
    np.testing.assert_array_equal(a.values, b.values)
    assert [j for j, _ in marsden.maximal.pendulum_chain(3).joints] == ["joint0", "joint1",
                                                                         "joint2"]


def test_a_maximal_sleigh_from_python_follows_the_reduced_sleigh():
    # The Chaplygin sleigh assembled from a body with a skate (docs/maximal.md, Nonholonomic
    # constraints) against examples/scenes/sleigh.json, RATTLE on the reduced model in full
    # coordinates, from the same start: two second-order methods, 5e-5 apart after 2 s at
    # dt = 0.01 (tests/maximal/test_nonholonomic_maximal.cpp measures the order).
    sleigh = marsden.maximal.chaplygin_sleigh(mass=1.0, inertia=0.1, skate_offset=0.5)
    assert sleigh.velocity_constraints == [("skate", "skate")]
    mine = marsden.maximal.system(sleigh, qd={"plane": [0.5, -1.0, 2.0]}, dt=0.01)
    a = marsden.simulate(mine, dt=0.01, steps=200)
    b = marsden.simulate(marsden.make_system(marsden.load_scene(ROOT / "examples" / "scenes" /
                                                                "sleigh.json")),
                         dt=0.01, steps=200)
    assert a.ok and b.ok
    qw, qz = (a.values[:, a.columns.index(c)] for c in ("sleigh_qw", "sleigh_qz"))
    theta = np.unwrap(2 * np.arctan2(qz, qw))
    x, y = (a.values[:, a.columns.index(c)] for c in ("sleigh_x", "sleigh_y"))
    pose = np.column_stack([theta, x, y])
    np.testing.assert_allclose(pose, b.values[:, [b.columns.index(c) for c in ("theta", "x", "y")]],
                               rtol=0, atol=2e-4)
    # A second, parallel skate behind the centre leaves the sleigh only sliding along its
    # axis: after the first step's impulse it coasts straight at constant speed.
    two = marsden.maximal.system(sleigh, qd={"plane": [0.5, -1.0, 2.0]}, dt=0.01,
                                 velocity_constraints=[{"name": "rear", "body": "sleigh",
                                                        "type": "skate",
                                                        "point": (-0.5, 0.0, 0.0)}])
    run = marsden.simulate(pickle.loads(pickle.dumps(two)), dt=0.01, steps=100)
    x, y, qz = (run.values[1:, run.columns.index(c)] for c in ("sleigh_x", "sleigh_y", "sleigh_qz"))
    assert np.ptp(y) < 1e-12 and np.ptp(qz) < 1e-12
    np.testing.assert_allclose(np.diff(x), x[1] - x[0], rtol=0, atol=1e-12)
    with pytest.raises(marsden.InputError, match=r"velocity_constraints\[0\].body: no body named"):
        marsden.maximal.system(sleigh, velocity_constraints=[{"body": "cart"}])
    with pytest.raises(marsden.InputError, match=r"velocity_constraints\[0\].type: expected"):
        marsden.maximal.system(sleigh, velocity_constraints=[{"body": "sleigh", "type": "ski"}])
    train = marsden.simulate(marsden.maximal.system(marsden.maximal.trailer_train(5, 0.3),
                                                    qd={"plane": [1.0, 0.0, 0.0]}),
                             dt=0.01, steps=100)
    assert train.ok and train.values[-1, train.columns.index("trailer5_x")] > -5.0
    # The skate's force (N) is a column: the reduced model's multiplier J m v1 omega /
    # (J + m a^2). A row's force is its last step's, which acts at the step's start, the
    # row before (and the first step's is half of it: docs/maximal.md).
    lam = 0.1 * 1.0 * b["v1"] * b["omega"] / (0.1 + 1.0 * 0.25)
    np.testing.assert_allclose(a["skate_force"][2:], lam[1:-1], rtol=0,
                               atol=1e-3 * np.abs(lam).max())
    disk = pickle.loads(pickle.dumps(marsden.maximal.rolling_disk(mass=2.0, radius=0.3)))
    assert disk.velocity_constraints == [("rolling", "rolling_wheel")]
    with pytest.raises(marsden.InputError, match="rolling_disk: mass and radius"):
        marsden.maximal.rolling_disk(radius=0.0)
    car = pickle.loads(pickle.dumps(marsden.maximal.car(steering=0.3, steering_inertia=0.05)))
    assert car.velocity_constraints == [("rear", "rolling_wheel"), ("front", "skate")]
    with pytest.raises(marsden.InputError, match="car: steering must be"):
        marsden.maximal.car(steering=2.0)
    board = pickle.loads(pickle.dumps(marsden.maximal.snakeboard(mass=2.0)))
    assert board.velocity_constraints == [("back", "skate"), ("front", "skate")]
    with pytest.raises(marsden.InputError, match="snakeboard: needs mass"):
        marsden.maximal.snakeboard(rotor_inertia=0.2)


def test_maximal_kinematic_joints_follow_their_paths():
    # A rod hanging from a hinge (its centre of mass 0.5 m below the pivot at angle 0, turned
    # about +y) with the hinge's angle prescribed: 0.5 rad (the chain's initial angle) plus
    # the signal, at every row; the drive's torque is a column.
    rod = marsden.maximal.pendulum_chain(1)
    swing = marsden.Signal.sinusoid([0.0], [0.2], [2.0])
    system = marsden.maximal.system(rod, kinematic={"joint0": swing})
    run = marsden.simulate(pickle.loads(pickle.dumps(system)), dt=0.01, steps=100)
    assert run.ok
    t, x, z = (run.values[:, run.columns.index(c)] for c in ("t", "link0_x", "link0_z"))
    np.testing.assert_allclose(np.arctan2(-x, -z), 0.5 + 0.2 * np.sin(4 * np.pi * t),
                               rtol=0, atol=1e-9)
    assert np.abs(run.values[1:, run.columns.index("joint0_drive")]).max() > 1.0
    # The trailer train's steering is prescribed already: a callable steers it through a
    # lane change, after which the tractor runs straight.
    train = marsden.maximal.system(marsden.maximal.trailer_train(2), qd={"plane": [2.0, 0.0, 0.0]},
                                   kinematic={"steering": lambda t: 0.08 * np.sin(2 * np.pi * t / 6)
                                              if t < 6 else 0.0})
    lane = marsden.simulate(train, dt=0.01, steps=1000)
    y = lane.values[:, lane.columns.index("tractor_y")]
    assert lane.ok and 2.0 < y[-1] and abs(y[-1] - y[-100]) < 0.05
    with pytest.raises(marsden.InputError, match="kinematic: joint 'joint0' is not a revolute"):
        marsden.maximal.system(marsden.maximal.pendulum_chain(1, joint="spherical"),
                               kinematic={"joint0": swing})
    with pytest.raises(marsden.InputError, match="input joint 'joint0' is prescribed"):
        marsden.maximal.system(rod, inputs=["joint0"], controls=[1.0], kinematic={"joint0": swing})
    with pytest.raises(marsden.InputError, match="no damper and no limits"):
        marsden.maximal.system(rod, dampers={"joint0": 1.0}, kinematic={"joint0": swing})


def test_maximal_arguments_are_checked():
    chain = marsden.maximal.pendulum_chain(2, joint="spherical")
    with pytest.raises(marsden.InputError, match="not a revolute or prismatic"):
        marsden.maximal.system(chain, dampers={"joint0": 0.1})
    with pytest.raises(marsden.InputError, match="has 3 coordinates"):
        marsden.maximal.system(chain, qd={"joint1": [1.0, 2.0]})
    with pytest.raises(marsden.InputError, match="no joint named 'elbow'"):
        marsden.maximal.system(chain, q={"elbow": 0.1})
    urdf = marsden.maximal.mechanism_from_urdf(ROOT / "examples" / "urdf" / "double_pendulum.urdf")
    assert len(urdf.bodies) == 2


def test_maximal_contact_and_limits_from_python():
    # The builder's contact (docs/contact.md): a chain's last link, a capsule, swings onto a
    # floor and rests on it; its first joint stopped by a limit. Closed forms: at rest the
    # floor and the hinge carry the weight between them, and the limited coordinate never
    # passes its bound.
    chain = marsden.maximal.pendulum_chain(2, initial_angle=1.2)
    system = marsden.maximal.system(
        chain, limits={"joint1": (-0.3, None)},
        shapes=[{"body": "link1", "type": "capsule", "radius": 0.05, "half_length": 0.45,
                 "friction": 0.5}],
        surfaces=[{"normal": (0, 0, 1), "point": (0, 0, -1.6)}])
    copy = pickle.loads(pickle.dumps(system))
    run = marsden.simulate(system, dt=0.01, steps=400)
    assert run.ok
    names = run.columns
    assert {"contact_force", "penetration", "active_contacts"} <= set(names)
    z = run.values[:, names.index("link1_z")]
    assert z.min() > -1.6  # the capsule's centre stays above the floor
    assert run.values[-1, names.index("contact_force")] > 0.0
    # A pickled copy (made before the run) replays the same bits.
    np.testing.assert_array_equal(marsden.simulate(copy, dt=0.01, steps=400).values, run.values)
    with pytest.raises(marsden.InputError, match="no body named 'hand'"):
        marsden.maximal.system(chain, shapes=[{"body": "hand", "radius": 0.1}],
                               surfaces=[{}])
    with pytest.raises(marsden.InputError, match="at least one of surfaces"):
        marsden.maximal.system(chain, shapes=[{"body": "link0", "radius": 0.1}])
    with pytest.raises(marsden.InputError, match="lower <= upper"):
        marsden.maximal.system(chain, limits={"joint0": (1.0, 0.0)})
    with pytest.raises(marsden.InputError, match="needs a body without joints"):
        marsden.maximal.system(chain, shapes=[{"body": "link1", "radius": 0.1}],
                               surfaces=[{"restitution": 0.5}])
    with pytest.raises(marsden.InputError, match=r"restitution must be in \[0, 1\]"):
        marsden.maximal.system(chain, shapes=[{"body": "link1", "radius": 0.1,
                                               "restitution": 2.0}], surfaces=[{}])


# --- every binding: the remaining builder elements, models and group functions ------------

def test_hat_and_ad_are_the_algebra():
    rng = np.random.default_rng(5)
    for group, dim in GROUPS:
        x, y = rng.normal(size=dim), rng.normal(size=dim)
        X, Y = group.hat(x), group.hat(y)
        np.testing.assert_allclose(group.hat(group.ad(x) @ y), X @ Y - Y @ X, atol=1e-12)


def oscillator(element):
    # A 1 kg mass on a slide along z without gravity, held by a spring of 4 N/m, as a
    # coordinate spring or a spring between frames: the period is 2 pi sqrt(m / k) = pi s.
    b = marsden.tree.Builder(gravity=(0.0, 0.0, 0.0))
    b.frame("anchor", "world", "const", translation=(0.0, 0.0, 0.0))
    b.frame("slider", "world", "tz", "z", mass=1.0)
    element(b)
    return b.build()


@pytest.mark.parametrize("element", [
    lambda b: b.spring("z", 4.0, rest=0.0),
    lambda b: b.frame_spring("anchor", "slider", 4.0, rest_length=0.0),
], ids=["spring", "frame_spring"])
def test_springs_oscillate_with_their_period(element):
    model = oscillator(element)
    run = marsden.simulate(marsden.tree.system(model, q0={"z": 0.3}), dt=0.001, steps=7000)
    z = run["z"]
    ups = [k for k in range(1, len(z)) if z[k - 1] < 0.0 <= z[k]]
    assert len(ups) >= 2
    assert abs((ups[1] - ups[0]) * 0.001 - np.pi) < 2e-3


@pytest.mark.parametrize("element", [
    lambda b: (b.spring("z", 4.0), b.damper("z", 0.3)),
    lambda b: (b.spring("z", 4.0), b.frame_damper("anchor", "slider", 0.3)),
], ids=["damper", "frame_damper"])
def test_dampers_take_energy_out(element):
    model = oscillator(element)
    run = marsden.simulate(marsden.tree.system(model, q0={"z": 0.3}), dt=0.001, steps=3000)
    energy = run["energy"]
    assert energy[-1] < 0.5 * energy[0]
    assert np.all(np.diff(energy) < 1e-9)  # non-increasing, to round-off


def test_a_body_wrench_input_acts_as_the_coordinate_torque():
    def limited(input_kind):
        b = hinge(input_kind=input_kind)
        b.limits("theta", -3.0, 3.0)
        return b.build()
    torque = marsden.Signal.constant([0.2])
    wrench = marsden.Signal.constant([0.2, 0, 0, 0, 0, 0])
    a = marsden.simulate(marsden.tree.system(limited("force"), controls=torque), dt=0.01, steps=100)
    b = marsden.simulate(marsden.tree.system(limited("wrench"), controls=wrench), dt=0.01,
                         steps=100)
    np.testing.assert_allclose(a["q"], b["q"], atol=1e-12)


def test_constraints_hold_along_the_run():
    # A point mass on a plane (z = 0) under gravity, a point at a fixed distance from the
    # world origin (a spherical pendulum in coordinates x, y, z), and one pinned to a frame.
    b = marsden.tree.Builder()
    b.frame("ground", "world", "const")
    b.frame("sx", "world", "tx", "x")
    b.frame("sy", "sx", "ty", "y")
    b.frame("point", "sy", "tz", "z", mass=1.0)
    b.point_on_plane_constraint("floor", "point", "ground", [0.0, 0.0, 1.0])
    floor = b.build()
    run = marsden.simulate(marsden.tree.system(floor, qd0={"x": 1.0, "y": 0.5}), dt=0.01,
                           steps=100)
    assert run.ok and np.abs(run["z"]).max() < 1e-9
    np.testing.assert_allclose(run["x"][-1], 1.0, rtol=1e-9)

    b = marsden.tree.Builder()
    b.frame("sx", "world", "tx", "x")
    b.frame("sy", "sx", "ty", "y")
    b.frame("point", "sy", "tz", "z", mass=1.0)
    b.frame("origin", "world", "const")
    b.distance_constraint("rod", "point", "origin", 1.0)
    rod = b.build()
    run = marsden.simulate(marsden.tree.system(rod, q0={"y": 0.6, "z": -0.8}), dt=0.01,
                           steps=200)
    radius = np.sqrt(run["x"] ** 2 + run["y"] ** 2 + run["z"] ** 2)
    assert run.ok and np.abs(radius - 1.0).max() < 1e-8

    b = marsden.tree.Builder()
    b.frame("pin", "world", "const", translation=(0.0, 0.2, -0.1))
    b.frame("sx", "world", "tx", "x")
    b.frame("sy", "sx", "ty", "y")
    b.frame("point", "sy", "tz", "z", mass=1.0)
    b.point_to_point_constraint("pinned", "point", "pin")
    pinned = b.build()
    run = marsden.simulate(marsden.tree.system(pinned, q0={"y": 0.2, "z": -0.1}), dt=0.01,
                           steps=50)
    assert run.ok and np.abs(run["z"] + 0.1).max() < 1e-9


def test_built_in_tree_models_run():
    q, qd = marsden.tree.four_bar_state(0.3, 1.0)
    four_bar = marsden.simulate(marsden.tree.system(marsden.tree.four_bar(), q0=q, qd0=qd),
                                dt=0.01, steps=50)
    assert four_bar.ok and four_bar.summary["constraint_violation_max"] < 1e-8
    marionette = marsden.tree.marionette()
    assert len(marionette.prescribed) == 15
    q0 = marsden.tree.marionette_configuration(marionette, np.zeros(len(marionette.coordinates)))
    run = marsden.simulate(marsden.tree.system(marionette, q0=q0), dt=0.01, steps=20)
    assert run.ok


@pytest.mark.parametrize("mechanism", [
    lambda: marsden.maximal.closed_chain(5, joint="spherical"),
    lambda: marsden.maximal.four_bar_chain(2),
    lambda: marsden.maximal.minitaur_leg(),
], ids=["closed_chain", "four_bar_chain", "minitaur_leg"])
def test_maximal_builders_keep_their_loops_closed(mechanism):
    run = marsden.simulate(marsden.maximal.system(mechanism(), dt=0.005), dt=0.005, steps=100)
    assert run.ok and run.summary["constraint_violation_max"] < 1e-8


def test_solver_errors_carry_time_iterations_and_residual():
    system = marsden.make_system(marsden.load_scene(SCENES / "maximal_chain.json"))
    with pytest.raises(marsden.SolverError) as info:
        marsden.solve_step(system, 0.0, 0.002, max_iterations=0)
    assert isinstance(info.value, RuntimeError)
    assert info.value.t == 0.0 and info.value.iterations == 0 and info.value.residual > 0.0


def test_signals_may_be_callables_vectors_or_tables():
    model = hinge().build()
    runs = [marsden.simulate(marsden.tree.system(model, controls=c), dt=0.01, steps=50)
            for c in (marsden.Signal.constant([0.2]), [0.2], lambda t: 0.2,
                      ([0.0, 1.0], [[0.2], [0.2]]))]
    for run in runs[1:]:
        np.testing.assert_array_equal(run["q"], runs[0]["q"])
    assert marsden.as_signal((0.2, 0.3)).size == 2  # a tuple of numbers is a constant
    with pytest.raises(ValueError, match="shape"):
        marsden.tree.system(model, controls=np.zeros((2, 2)))


def test_the_python_bench_runs(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "python_bench.py"), "--rounds", "1",
                        "--steps", "1000"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "step() overhead" in r.stdout and "simulate() from Python" in r.stdout


def test_objects_describe_themselves():
    scene = marsden.load_scene(SCENES / "pendulum_chain.json")
    assert scene.file.endswith("pendulum_chain.json") and scene.system_type == "tree"
    assert scene.duration == pytest.approx(scene.dt * scene.steps)
    model = marsden.tree.n_link_pendulum(2)
    assert model.frames[:2] == ["link1", "mass1"] and model.num_constraint_rows == 0
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])
    signal = marsden.Signal.sinusoid([0.0, 1.0], [1.0, 0.0], [1.0, 1.0])
    assert signal.size == 2 and not signal.zero_order_hold
    problem = marsden.load_problem(ROOT / "examples" / "problems" / "car_tunnel.json")
    assert problem.name == "car_tunnel" and problem.num_variables > problem.steps > 0
