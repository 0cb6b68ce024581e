"""End-to-end tests of the `marsden` command on the example scenes.

The binary is taken from $MARSDEN_BIN (default: build/release/apps/marsden under the
repository root). Run with `python3 -m pytest tests/python`.
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("MARSDEN_BIN", ROOT / "build" / "release" / "apps" / "marsden"))
SCENES = sorted((ROOT / "examples" / "scenes").glob("*.json"))
EXPECTED_SCENES = {"rigid_body", "helicopter_hover", "helicopter_turn", "boat_thrust",
                   "boat_wind_current"}

pytestmark = pytest.mark.skipif(not BIN.exists(), reason=f"marsden binary not built: {BIN}")


def marsden(*args):
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_all_example_scenes_are_present():
    assert EXPECTED_SCENES <= {p.stem for p in SCENES}


@pytest.mark.parametrize("scene", SCENES, ids=[p.stem for p in SCENES])
def test_example_scene_simulates(scene, tmp_path):
    out = tmp_path / "out"
    r = marsden("simulate", scene, "--out", out)
    assert r.returncode == 0, r.stderr

    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok", summary["message"]
    assert summary["steps_done"] == summary["steps_requested"] > 0
    assert summary["failures"] >= 0

    with np.load(out / "trajectory.npz") as z:
        arrays = {k: z[k] for k in z.files}
    n = arrays["t"].shape[0]
    assert n == summary["rows_written"] >= 2
    expected_shapes = {"t": (n,), "position": (n, 3), "quaternion": (n, 4),
                       "angular_velocity": (n, 3), "linear_velocity": (n, 3), "energy": (n,)}
    for name, shape in expected_shapes.items():
        assert arrays[name].shape == shape, name
        assert arrays[name].dtype == np.float64, name
    assert arrays["controls"].shape[0] == n and arrays["shape"].shape[0] == n
    for name, a in arrays.items():
        assert np.all(np.isfinite(a)), name
    assert np.all(np.diff(arrays["t"]) > 0)
    assert np.allclose(np.linalg.norm(arrays["quaternion"], axis=1), 1.0, atol=1e-9)
    assert arrays["t"][-1] == pytest.approx(summary["duration"], rel=1e-9)

    # The CSV holds the same rows, column by column.
    csv = np.genfromtxt(out / "trajectory.csv", delimiter=",", names=True)
    assert csv.shape == (n,)
    assert np.array_equal(csv["t"], arrays["t"])
    assert np.array_equal(np.stack([csv["x"], csv["y"], csv["z"]], axis=1), arrays["position"])
    assert np.array_equal(csv["energy"], arrays["energy"])
    nu = arrays["controls"].shape[1]
    for i in range(nu):
        assert np.array_equal(csv[f"u{i}"], arrays["controls"][:, i])


def test_helicopter_hover_stays_put(tmp_path):
    r = marsden("simulate", ROOT / "examples" / "scenes" / "helicopter_hover.json", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "trajectory.npz") as z:
        drift = np.abs(z["position"] - z["position"][0]).max()
        assert drift < 1e-9
        assert np.abs(z["linear_velocity"]).max() < 1e-9


def test_free_rigid_body_conserves_energy_and_momentum(tmp_path):
    r = marsden("simulate", ROOT / "examples" / "scenes" / "rigid_body.json", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["energy"]["relative_drift"] < 1e-6
    assert summary["spatial_momentum"]["relative_drift"] < 1e-5


def test_bad_scene_exits_2_naming_the_field(tmp_path):
    scene = tmp_path / "bad_scene.json"
    scene.write_text(json.dumps({
        "system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
        "integrator": {"method": "vi", "tolerance": -1e-9},
        "dt": 0.01, "duration": 1.0}))
    r = marsden("simulate", scene, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert r.stderr.startswith("marsden: error: ")
    assert "bad_scene.json" in r.stderr
    assert "field 'integrator.tolerance'" in r.stderr
    assert "must be > 0" in r.stderr
    assert not (tmp_path / "out").exists()


def test_missing_scene_and_bad_usage_exit_2(tmp_path):
    r = marsden("simulate", tmp_path / "nope.json", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "nope.json: no such file" in r.stderr
    assert marsden("simulate").returncode == 2
    assert marsden("no-such-command").returncode == 2


def test_solver_failure_exits_3_and_keeps_outputs(tmp_path):
    scene = tmp_path / "stiff.json"
    scene.write_text(json.dumps({
        "system": {"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}},
        "integrator": {"method": "rk2_implicit", "tolerance": 1e-300, "max_iterations": 2},
        "dt": 0.01, "duration": 1.0,
        "initial_state": {"angular_velocity": [0.1, 2.0, 0.1]}}))
    out = tmp_path / "out"
    r = marsden("simulate", scene, "--out", out)
    assert r.returncode == 3
    assert "step 0" in r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert "step 0" in summary["message"]
    with np.load(out / "trajectory.npz") as z:
        assert z["t"].shape == (1,)


def test_version_and_experiment_list():
    r = marsden("--version")
    assert r.returncode == 0 and r.stdout.startswith("marsden ")
    assert marsden("experiment", "list").returncode == 0
    r = marsden("experiment", "run", "no-such-experiment", "--out", "/nonexistent/x")
    assert r.returncode == 2
    assert "unknown experiment 'no-such-experiment'" in r.stderr


def test_rigid_body_accuracy_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "rba"
    r = marsden("experiment", "run", "rigid-body-accuracy", "--quick", "--out", out)
    assert r.returncode == 0, r.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["experiment"] == "rigid-body-accuracy" and results["quick"] is True
    claims = {c["id"]: c for c in results["claims"]}
    assert len(claims) >= 6
    for c in claims.values():
        assert {"id", "statement", "source", "measured", "expected", "holds"} <= c.keys()
        assert isinstance(c["holds"], bool)
    # The VI is second order on the free rigid body; this property is also a unit test.
    assert claims["vi-order-between-2-and-4"]["holds"]
    sweep = json.loads((out / "sweep.json").read_text())
    assert len(sweep["methods"]) == 6
    for m in sweep["methods"]:
        assert len(m["position_error"]) == len(sweep["steps"])
    assert (out / "rigid_body_accuracy.png").stat().st_size > 0
