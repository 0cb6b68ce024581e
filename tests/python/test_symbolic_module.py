"""Scene and problem files that name a Python module instead of a compiled library
(docs/own-system.md, "In scene and problem files"): the C++ reader runs
`python -m marsden.symbolic.module` and reads the "system" (or tree element) it prints.
Such files run code, so each run here is allowed (--allow-code, allow_code=True); without
the allowance the command and the package refuse them, naming the file, the field and the
way to allow (docs/reliability.md, "Trust model").

The command is taken from $MARSDEN_BIN (ctest sets it); the package from $PYTHONPATH (the
build tree's python/ folder). The readers' errors found before Python runs are tested in
tests/io/test_scene.cpp.
"""

import hashlib
import json
import os
import pathlib
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

casadi = pytest.importorskip("casadi")
import marsden  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("MARSDEN_BIN")
QUAD_MODULE = ROOT / "examples" / "systems" / "quadrotor.py"
needs_cli = pytest.mark.skipif(BIN is None, reason="MARSDEN_BIN not set (no marsden command)")


def marsden_cli(*args, env=None):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env)


def vehicle_of(module: pathlib.Path):
    """The module's vehicle, built here (not by the reader)."""
    namespace: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    return namespace["quad"]


@needs_cli
def test_cli_runs_a_scene_naming_a_module_as_the_scene_naming_its_library(tmp_path):
    """The example scene runs through the module (the Python the build was configured with,
    $MARSDEN_PYTHON unset) and writes, bit for bit, what the same scene naming the library
    writes, and what the package's simulate gives for the vehicle built here; the
    quadrotor drifts with the wind (2, -1, 0) m/s."""
    env = {k: v for k, v in os.environ.items() if k != "MARSDEN_PYTHON"}
    scene = ROOT / "examples" / "scenes" / "own_quadrotor.json"
    r = marsden_cli("simulate", scene, "--out", tmp_path / "module", "--allow-code", env=env)
    assert r.returncode == 0, r.stderr
    by_library = json.loads(scene.read_text())
    quad = vehicle_of(QUAD_MODULE)
    by_library["system"] = quad.scene_system()
    (tmp_path / "library.json").write_text(json.dumps(by_library))
    r = marsden_cli("simulate", tmp_path / "library.json", "--out", tmp_path / "library",
                    "--allow-code")
    assert r.returncode == 0, r.stderr
    for f in ("trajectory.csv", "trajectory.npz"):
        assert (tmp_path / "module" / f).read_bytes() == (tmp_path / "library" / f).read_bytes()
    with np.load(tmp_path / "module" / "trajectory.npz") as z:
        position = z["position"]
    c = by_library["controls"]
    run = marsden.simulate(
        quad.system(initial_state=by_library["initial_state"],
                    controls=marsden.Signal.sinusoid(c["offset"], c["amplitude"],
                                                     c["frequency_hz"])),
        dt=by_library["dt"], steps=round(by_library["duration"] / by_library["dt"]))
    assert np.abs(run["position"] - position).max() <= 1e-12
    x, y, _ = position[-1]
    assert x > 0.5 and y < -0.25, (x, y)


@needs_cli
def test_cli_runs_an_rdp_vehicle_named_by_its_module(tmp_path):
    """The differential-drive robot's example scene ("generated_rdp" through the module)
    drives the curve that the package's simulate of the robot built here drives, and turns
    left (the right wheel pushed harder)."""
    scene = ROOT / "examples" / "scenes" / "own_differential_drive.json"
    r = marsden_cli("simulate", scene, "--out", tmp_path / "out", "--allow-code")
    assert r.returncode == 0, r.stderr
    namespace: dict = {}
    module = ROOT / "examples" / "systems" / "differential_drive.py"
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    spec = json.loads(scene.read_text())
    run = marsden.simulate(namespace["robot"].system(initial_state=spec["initial_state"],
                                                     controls=spec["controls"]["value"]),
                           dt=spec["dt"], steps=round(spec["duration"] / spec["dt"]))
    with np.load(tmp_path / "out" / "trajectory.npz") as z:
        pose = z["pose"]
    assert np.abs(run["pose"] - pose).max() <= 1e-12
    theta, _, y = pose[-1]
    assert theta > 0.1 and y > 0.01, pose[-1]


@needs_cli
def test_cli_solves_a_problem_naming_a_module_and_resimulates_it(tmp_path):
    """DMOC through the window of examples/problems/own_quadrotor_window.json; the
    re-simulation scene names the compiled library (absolute), so it runs without Python."""
    out = tmp_path / "out"
    r = marsden_cli("optimize", ROOT / "examples" / "problems" / "own_quadrotor_window.json",
                    "--out", out, "--allow-code")
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] is True, summary["message"]
    assert summary["resimulation_error"] < 1e-6 and summary["min_clearance"] > -1e-6
    system = json.loads((out / "resimulate.json").read_text())["system"]
    assert system["type"] == "generated" and pathlib.Path(system["library"]).is_absolute()
    r = marsden_cli("simulate", out / "resimulate.json", "--out", tmp_path / "flight",
                    "--allow-code", env={**os.environ, "MARSDEN_PYTHON": str(tmp_path / "no-python")})
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "flight" / "trajectory.npz") as z:
        assert np.abs(z["position"][-1] - [10, 1, 2.5]).max() < 1e-6


SPRING_AND_DAMPER = """
import casadi as ca
from marsden import symbolic as sym
q1, q2, qd1 = ca.SX.sym("q1"), ca.SX.sym("q2"), ca.SX.sym("qd1")
spring = sym.TreePotential("module_spring", coordinates=[q1], potential=2.0 * q1 ** 2)
damper = sym.TreeForce("module_damper", coordinates=[q1], velocities=[qd1], force=-0.3 * qd1)
coupling = sym.TreeConstraint("module_coupling", coordinates=[q1, q2],
                              constraint=q2 - 0.5 * q1 + 0.85)
"""


def test_tree_elements_named_by_module_pick_their_kind(tmp_path):
    """One module with a potential, a force and a constraint: "potentials",
    "forces" and "generated_constraints" each take theirs; the run equals the scene naming
    the three libraries, keeps the constraint, and differs from the bare tree."""
    (tmp_path / "elements.py").write_text(SPRING_AND_DAMPER)
    namespace: dict = {}
    exec(SPRING_AND_DAMPER, namespace)

    def run(system_extra):
        scene = {"system": {"type": "tree", "model": "double_pendulum", **system_extra},
                 "initial_state": {"q": {"q1": 0.9, "q2": -0.4}}, "dt": 0.01, "duration": 0.5}
        path = tmp_path / "scene.json"
        path.write_text(json.dumps(scene))
        s = marsden.load_scene(str(path), allow_code=True)
        return marsden.simulate(marsden.make_system(s), dt=s.dt, steps=s.steps)

    by_module = run({"potentials": [{"module": "elements.py"}],
                     "forces": [{"module": "elements.py"}],
                     "generated_constraints": [{"module": "elements.py"}]})
    by_library = run({"potentials": [namespace["spring"].scene_element()],
                      "forces": [namespace["damper"].scene_element()],
                      "generated_constraints": [namespace["coupling"].scene_element()]})
    bare = run({})
    assert np.array_equal(by_module["q1"], by_library["q1"])
    assert np.array_equal(by_module["energy"], by_library["energy"])
    assert np.abs(by_module["q2"] - 0.5 * by_module["q1"] + 0.85).max() < 1e-10
    assert np.abs(by_module["q1"] - bare["q1"]).max() > 1e-2


TWO_VEHICLES = """
from marsden import symbolic as sym
quad = sym.quadrotor()
heli = sym.helicopter()
same_quad = quad
"""


def module_error(tmp_path, source: str, system_extra: dict | None = None) -> str:
    (tmp_path / "m.py").write_text(source)
    scene = {"system": {"module": "m.py", **(system_extra or {})}, "dt": 0.01, "duration": 0.1}
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene))
    with pytest.raises(marsden.InputError) as e:
        marsden.load_scene(str(path), allow_code=True)
    message = str(e.value)
    assert message.startswith(f"{path}: field 'system.") and "Python module 'm.py'" in message
    return message


def test_module_errors_name_the_file_the_field_and_the_module(tmp_path):
    raising = module_error(tmp_path, "raise ValueError('no wind today')")
    assert "exited with status 1" in raising and "ValueError: no wind today" in raising
    assert "no symbolic object" not in raising
    none = module_error(tmp_path, "x = 1\n")
    assert "defines no HolonomicVehicle or RdpVehicle or NonholonomicSystem" in none
    several = module_error(tmp_path, TWO_VEHICLES)
    assert "defines 2 objects of this kind (quad = same_quad, heli)" in several
    assert "choose one with \"object\"" in several
    unknown = module_error(tmp_path, TWO_VEHICLES, {"object": "plane"})
    assert "defines no attribute 'plane'" in unknown
    wrong = module_error(tmp_path, "import math\n", {"object": "math"})
    assert "'math' is a module, not a HolonomicVehicle" in wrong
    # The named one of several is taken.
    (tmp_path / "scene.json").write_text(json.dumps(
        {"system": {"module": "m.py", "object": "heli"}, "dt": 0.01, "duration": 0.1}))
    (tmp_path / "m.py").write_text(TWO_VEHICLES)
    assert marsden.load_scene(str(tmp_path / "scene.json"),
                              allow_code=True).system_type == "generated"


@needs_cli
def test_a_python_without_the_package_is_named(tmp_path):
    (tmp_path / "m.py").write_text("")
    scene = {"system": {"module": "m.py"}, "dt": 0.01, "duration": 0.1}
    (tmp_path / "scene.json").write_text(json.dumps(scene))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(MARSDEN_PYTHON=sys.executable, PYTHONNOUSERSITE="1")
    if subprocess.run([sys.executable, "-c", "import marsden"], env=env,
                      capture_output=True).returncode == 0:
        pytest.skip("this Python imports marsden without PYTHONPATH (installed)")
    r = marsden_cli("simulate", tmp_path / "scene.json", "--out", tmp_path / "out",
                    "--allow-code", env=env)
    assert r.returncode == 2
    assert f"{tmp_path / 'scene.json'}: field 'system.module': Python module 'm.py' failed" \
        in r.stderr
    assert "this Python cannot import marsden: set PYTHONPATH" in r.stderr
    assert "No module named 'marsden'" in r.stderr


def test_a_module_that_does_not_return_is_stopped_at_its_time_limit(tmp_path, monkeypatch):
    """A module that never returns cannot hold the reader: past $MARSDEN_MODULE_TIMEOUT it
    is killed and the error says so, with what the module had written."""
    monkeypatch.setenv("MARSDEN_MODULE_TIMEOUT", "1")
    start = time.monotonic()
    message = module_error(tmp_path, "import sys, time\nprint('thinking', file=sys.stderr, "
                                     "flush=True)\ntime.sleep(600)\n")
    assert time.monotonic() - start < 60
    assert "did not finish within 1 s ($MARSDEN_MODULE_TIMEOUT) and was stopped" in message
    assert "thinking" in message
    monkeypatch.setenv("MARSDEN_MODULE_TIMEOUT", "soon")
    with pytest.raises(marsden.InputError, match="MARSDEN_MODULE_TIMEOUT: expected a positive"):
        marsden.load_scene(str(tmp_path / "scene.json"), allow_code=True)


# ------------------------------------------------------------------ the allowance
ALLOW = ("If you trust this file, {how}, or add its folder to $MARSDEN_TRUSTED_FOLDERS "
         "(docs/reliability.md, \"Trust model\")")


def refusal(file, field: str, written: str) -> str:
    return f"{file}: field '{field}': names a Python module ('{written}'), code that reading the file"


@needs_cli
def test_cli_refuses_files_naming_a_module_without_allow_code(tmp_path):
    """simulate, optimize and sweep name the file, the field and --allow-code; nothing runs
    (the Python named does not exist: a command that ran it would say so), nothing is
    written."""
    env = {**os.environ, "MARSDEN_PYTHON": str(tmp_path / "no-python")}
    env.pop("MARSDEN_TRUSTED_FOLDERS", None)
    scene = ROOT / "examples" / "scenes" / "own_quadrotor.json"
    problem = ROOT / "examples" / "problems" / "own_quadrotor_window.json"
    (tmp_path / "sweep.json").write_text(json.dumps({"scene": str(scene),
                                                     "parameters": {"dt": [0.01]}}))
    how = ALLOW.format(how="add --allow-code to the command")
    for args, file in ((("simulate", scene), scene), (("optimize", problem), problem)):
        r = marsden_cli(*args, "--out", tmp_path / args[0], env=env)
        assert r.returncode == 2, r.stderr
        assert refusal(file, "system.module", "../systems/quadrotor.py") in r.stderr
        assert how in r.stderr and "cannot run Python" not in r.stderr
        assert not (tmp_path / args[0]).exists()
    r = marsden_cli("sweep", tmp_path / "sweep.json", "--out", tmp_path / "sweep")
    assert r.returncode == 2, r.stderr
    assert f"{scene}: field 'system.module': names a Python module" in r.stderr
    assert "--allow-code" in r.stderr and "results.parquet" not in r.stderr


@needs_cli
def test_a_trusted_folder_allows_its_files_and_only_those(tmp_path):
    env = {**os.environ, "MARSDEN_TRUSTED_FOLDERS": str(ROOT / "examples" / "scenes")}
    scene = ROOT / "examples" / "scenes" / "own_differential_drive.json"
    r = marsden_cli("simulate", scene, "--out", tmp_path / "trusted", env=env)
    assert r.returncode == 0, r.stderr
    r = marsden_cli("optimize", ROOT / "examples" / "problems" / "own_quadrotor_window.json",
                    "--out", tmp_path / "problem", env=env)
    assert r.returncode == 2 and "names a Python module" in r.stderr, r.stderr


def test_python_refuses_files_and_texts_naming_code_without_allow_code(tmp_path, monkeypatch):
    """load_scene, parse_scene, load_problem and parse_problem: the file (or label), the
    field, and allow_code=True; nothing runs."""
    monkeypatch.delenv("MARSDEN_TRUSTED_FOLDERS", raising=False)
    monkeypatch.setenv("MARSDEN_PYTHON", str(tmp_path / "no-python"))
    scene = ROOT / "examples" / "scenes" / "own_quadrotor.json"
    problem = ROOT / "examples" / "problems" / "own_quadrotor_window.json"
    how = ALLOW.format(how="pass allow_code=True")
    for read, file in ((marsden.load_scene, scene), (marsden.load_problem, problem)):
        with pytest.raises(marsden.InputError) as e:
            read(file)
        assert str(e.value).startswith(refusal(file, "system.module", "../systems/quadrotor.py"))
        assert how in str(e.value)
    system = {"type": "tree", "model": "double_pendulum", "forces": [{"library": "damper.so"}]}
    for parse, timing in ((marsden.parse_scene, {"duration": 0.1}),
                          (marsden.parse_problem, {"steps": 10})):
        with pytest.raises(marsden.InputError) as e:
            parse(json.dumps({"system": system, "dt": 0.01, **timing}), "mine.json")
        assert str(e.value).startswith("mine.json: field 'system.forces[0].library': names a "
                                       "compiled library ('damper.so'), code that reading the "
                                       "text would load and run")
        assert "If you trust this text, pass allow_code=True (docs/reliability.md" in str(e.value)


def test_the_cache_is_private_and_a_tampered_object_in_it_is_refused(tmp_path, monkeypatch):
    """The compiled-model cache is made private (mode 0700, and again when loosened) and an
    object in it loads only when its content matches the SHA-256 in its name:
    marsden.symbolic refuses it rather than use it, and so does the reader of a scene
    naming it."""
    from marsden import symbolic as sym

    cache = tmp_path / "new" / "cache"
    monkeypatch.setenv("MARSDEN_CACHE", str(cache))
    quad = sym.quadrotor(name="tampered")
    assert quad.compiled and quad.library.parent == cache
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert quad.library.stem.rsplit("-", 1)[1] == \
        hashlib.sha256(quad.library.read_bytes()).hexdigest()
    cache.chmod(0o755)
    again = sym.quadrotor(name="tampered")
    assert not again.compiled and again.library == quad.library
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    scene = json.dumps({"system": quad.scene_system(), "dt": 0.01, "duration": 0.01})
    assert marsden.parse_scene(scene, allow_code=True).system_type == "generated"
    with open(quad.library, "ab") as f:
        f.write(b"\0")
    clear = f"clear the cache (rm -r {cache}) and build the model again with marsden.symbolic"
    with pytest.raises(marsden.InputError) as built:
        sym.quadrotor(name="tampered")
    with pytest.raises(marsden.InputError) as read:
        marsden.parse_scene(scene, allow_code=True)
    for e in (built, read):
        assert (f"generated model '{quad.library}': its content does not match the hash in its "
                "name") in str(e.value) and clear in str(e.value)
    assert str(read.value).startswith("<string>: field 'system.library': ")
