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
# Scenes naming a Python module need the package, which this test does not have on its
# path: tests/python/test_symbolic_module.py runs them.
MODULE_SCENES = {"own_quadrotor", "own_differential_drive"}
SCENES = sorted(p for p in (ROOT / "examples" / "scenes").glob("*.json")
                if p.stem not in MODULE_SCENES)
EXPECTED_SCENES = {"rigid_body", "helicopter_hover", "helicopter_turn", "boat_thrust",
                   "boat_wind_current", "car_parallel_park", "snakeboard_gait", "sleigh"}
# Planar nonholonomic vehicles: their outputs have a pose (theta, x, y) instead of SE(3).
NONHOLONOMIC_SCENES = {"car_parallel_park": 2, "snakeboard_gait": 2, "sleigh": 0}  # n shape

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
    # Reproducible: a second run writes byte-identical trajectories.
    assert marsden("simulate", scene, "--out", tmp_path / "again").returncode == 0
    for f in ("trajectory.csv", "trajectory.npz"):
        assert (out / f).read_bytes() == (tmp_path / "again" / f).read_bytes(), f

    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok", summary["message"]
    assert summary["steps_done"] == summary["steps_requested"] > 0
    assert summary["failures"] >= 0

    with np.load(out / "trajectory.npz") as z:
        arrays = {k: z[k] for k in z.files}
    n = arrays["t"].shape[0]
    assert n == summary["rows_written"] >= 2
    if scene.stem in NONHOLONOMIC_SCENES:
        check_nonholonomic_outputs(out, summary, arrays, NONHOLONOMIC_SCENES[scene.stem])
        return
    if summary["system"] == "tree":
        check_tree_outputs(out, summary, arrays)
        return
    if summary["system"] == "maximal":
        check_maximal_outputs(out, summary, arrays)
        return
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


def check_nonholonomic_outputs(out, summary, arrays, nr):
    n = arrays["t"].shape[0]
    nu = 0 if nr == 0 else 2
    expected_shapes = {"t": (n,), "pose": (n, 3), "shape": (n, nr), "shape_velocity": (n, nr),
                       "body_velocity": (n, 3), "energy": (n,), "constraint_violation": (n,),
                       "controls": (n, nu)}
    assert set(arrays) == set(expected_shapes)
    for name, shape in expected_shapes.items():
        assert arrays[name].shape == shape, name
        assert arrays[name].dtype == np.float64, name
        assert np.all(np.isfinite(arrays[name])), name
    assert np.all(np.diff(arrays["t"]) > 0)
    assert arrays["t"][-1] == pytest.approx(summary["duration"], rel=1e-9)
    assert summary["constraint_violation"]["max"] >= arrays["constraint_violation"].max()
    assert summary["final_pose"]["x"] == arrays["pose"][-1, 1]

    csv = np.genfromtxt(out / "trajectory.csv", delimiter=",", names=True)
    assert csv.shape == (n,)
    assert np.array_equal(csv["t"], arrays["t"])
    assert np.array_equal(np.stack([csv["theta"], csv["x"], csv["y"]], axis=1), arrays["pose"])
    assert np.array_equal(np.stack([csv["omega"], csv["v1"], csv["v2"]], axis=1),
                          arrays["body_velocity"])
    assert np.array_equal(csv["energy"], arrays["energy"])
    assert np.array_equal(csv["constraint_violation"], arrays["constraint_violation"])
    for i in range(nu):
        assert np.array_equal(csv[f"u{i}"], arrays["controls"][:, i])


CONTACT_COLUMNS = ("contact_force", "penetration", "active_contacts", "complementarity",
                   "contact_iterations")


def check_maximal_outputs(out, summary, arrays):
    n = arrays["t"].shape[0]
    nb = len(summary["bodies"])
    contact = "contact" in summary
    expected_shapes = {"t": (n,), "position": (n, nb, 3), "quaternion": (n, nb, 4),
                       "energy": (n,), "constraint_violation": (n,),
                       "controls": (n, len(summary["inputs"]))}
    if contact:
        expected_shapes.update({name: (n,) for name in CONTACT_COLUMNS})
        if summary["contact"]["restitution"]:
            expected_shapes["impacts"] = (n,)
    velocity = [c for v in summary.get("velocity_constraints", []) for c in v["columns"]]
    if velocity:
        expected_shapes["velocity_force"] = (n, len(velocity))
    drives = [f"{j}_drive" for j in summary["kinematic_joints"]]
    if drives:
        expected_shapes["drive_force"] = (n, len(drives))
    assert set(arrays) == set(expected_shapes)
    for name, shape in expected_shapes.items():
        assert arrays[name].shape == shape, name
        assert arrays[name].dtype == np.float64, name
        assert np.all(np.isfinite(arrays[name])), name
    assert np.all(np.diff(arrays["t"]) > 0)
    assert arrays["t"][-1] == pytest.approx(summary["duration"], rel=1e-9)
    assert np.allclose(np.linalg.norm(arrays["quaternion"], axis=2), 1.0, atol=1e-9)
    assert summary["constraint_violation"]["max"] >= arrays["constraint_violation"].max()
    assert summary["constraint_violation"]["max"] <= 1e-8

    # Per body: BODY_x, _y, _z, _qw, _qx, _qy, _qz, in the order of summary["bodies"].
    header = (out / "trajectory.csv").read_text().split("\n", 1)[0].split(",")
    assert header[1:1 + 7 * nb] == [f"{b}_{c}" for b in summary["bodies"]
                                    for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    columns = list(CONTACT_COLUMNS) if contact else []
    if contact and summary["contact"]["restitution"]:
        columns.append("impacts")
    columns += velocity + drives
    extra = len(columns)
    if columns:
        assert header[-extra:] == columns
    # The joint inputs' columns u0, u1, ... follow constraint_violation.
    nu = len(summary["inputs"])
    assert header[3 + 7 * nb:3 + 7 * nb + nu] == [f"u{i}" for i in range(nu)]
    csv = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1, ndmin=2)
    assert csv.shape == (n, 1 + 7 * nb + 2 + nu + extra)
    assert np.array_equal(csv[:, 0], arrays["t"])
    per_body = csv[:, 1:1 + 7 * nb].reshape(n, nb, 7)
    assert np.array_equal(per_body[:, :, :3], arrays["position"])
    assert np.array_equal(per_body[:, :, 3:], arrays["quaternion"])
    assert np.array_equal(csv[:, 1 + 7 * nb], arrays["energy"])
    assert np.array_equal(csv[:, 2 + 7 * nb], arrays["constraint_violation"])
    assert np.array_equal(csv[:, 3 + 7 * nb:3 + 7 * nb + nu], arrays["controls"])
    for k, name in enumerate(columns):
        value = (arrays["velocity_force"][:, velocity.index(name)] if name in velocity
                 else arrays["drive_force"][:, drives.index(name)] if name in drives
                 else arrays[name])
        assert np.array_equal(csv[:, 3 + 7 * nb + nu + k], value)


def check_tree_outputs(out, summary, arrays):
    n = arrays["t"].shape[0]
    names = summary["dynamic_coordinates"] + summary["kinematic_coordinates"]
    nc, nd = len(names), len(summary["dynamic_coordinates"])
    expected_shapes = {"t": (n,), "q": (n, nc), "qd": (n, nc), "p": (n, nd), "energy": (n,),
                       "constraint_residual": (n,)}
    for name, shape in expected_shapes.items():
        assert arrays[name].shape == shape, name
        assert arrays[name].dtype == np.float64, name
    for name, a in arrays.items():
        assert np.all(np.isfinite(a)), name
    assert np.all(np.diff(arrays["t"]) > 0)
    assert arrays["t"][-1] == pytest.approx(summary["duration"], rel=1e-9)
    assert summary["constraint_residual"]["max"] >= arrays["constraint_residual"].max()
    assert summary["constraint_residual"]["max"] <= 1e-8

    csv = np.genfromtxt(out / "trajectory.csv", delimiter=",", names=True)
    assert csv.shape == (n,)
    assert np.array_equal(csv["t"], arrays["t"])
    # Columns come in the model's coordinate order, not necessarily dynamic first.
    header = (out / "trajectory.csv").read_text().split("\n", 1)[0].split(",")
    assert sorted(header[1:1 + nc]) == sorted(names)
    for j, name in enumerate(header[1:1 + nc]):
        assert np.array_equal(csv[name], arrays["q"][:, j]), name
        assert np.array_equal(csv["qd_" + name], arrays["qd"][:, j]), name
    assert np.array_equal(csv["energy"], arrays["energy"])


def test_double_pendulum_tree_scene_conserves_energy(tmp_path):
    out = tmp_path / "out"
    r = marsden("simulate", ROOT / "examples" / "scenes" / "double_pendulum.json", "--out", out)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    assert summary["model"] == "double_pendulum"
    assert summary["dynamic_coordinates"] == ["q1", "q2"]
    assert summary["newton_iterations"]["max"] <= 5
    # The midpoint VI: bounded energy error, no drift, at dt = 0.01 over 10 s.
    assert summary["energy"]["relative_drift"] < 1e-3
    with np.load(out / "trajectory.npz") as z:
        assert z["q"][0, 0] == 1.5 and z["q"][0, 1] == -0.5
        assert z["qd"][0, 1] == 1.0


def test_bad_tree_scene_exits_2_naming_the_field(tmp_path):
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps({"system": {"type": "tree", "model": "double_pendulum"},
                                 "dt": 0.01, "duration": 1.0,
                                 "initial_state": {"q": {"q9": 1.0}}}))
    r = marsden("simulate", scene, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "field 'initial_state.q.q9'" in r.stderr


def test_sleigh_keeps_its_constraint_and_energy(tmp_path):
    r = marsden("simulate", ROOT / "examples" / "scenes" / "sleigh.json", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "ok"
    assert summary["constraint_violation"]["max"] < 1e-12
    assert summary["energy"]["relative_drift"] < 1e-4
    with np.load(tmp_path / "trajectory.npz") as z:
        omega, v1, v2 = z["body_velocity"].T
        assert np.abs(omega[-1]) < 1e-2 * np.abs(omega[0])  # it settles on a straight line
        assert np.abs(v2 + 0.5 * omega).max() < 1e-12       # skate offset a = 0.5


def test_snakeboard_gait_moves_the_board(tmp_path):
    r = marsden("simulate", ROOT / "examples" / "scenes" / "snakeboard_gait.json", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "ok"
    assert summary["constraint_violation"]["max"] < 1e-12
    with np.load(tmp_path / "trajectory.npz") as z:
        pose, shape = z["pose"], z["shape"]
        assert np.hypot(pose[-1, 1] - pose[0, 1], pose[-1, 2] - pose[0, 2]) > 2.0
        # The gait is periodic: after whole periods the shape is back where it started.
        assert np.abs(shape[-1] - shape[0]).max() < 1e-9


def test_car_parallel_park_ends_beside_the_start(tmp_path):
    r = marsden("simulate", ROOT / "examples" / "scenes" / "car_parallel_park.json", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    pose = summary["final_pose"]
    assert abs(pose["theta"]) < 0.05 and pose["x"] < -2.0 and 0.5 < pose["y"] < 2.0


def test_bad_nonholonomic_method_exits_2(tmp_path):
    scene = tmp_path / "bad_car.json"
    scene.write_text(json.dumps({"system": {"type": "car"}, "integrator": {"method": "rattle"},
                                 "dt": 0.01, "duration": 1.0}))
    r = marsden("simulate", scene, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "field 'integrator.method'" in r.stderr and "not available" in r.stderr
    assert not (tmp_path / "out").exists()


def test_nonholonomic_solver_failure_exits_3(tmp_path):
    scene = tmp_path / "stiff.json"
    scene.write_text(json.dumps({
        "system": {"type": "snakeboard"},
        "integrator": {"method": "rattle", "tolerance": 1e-300, "max_iterations": 1},
        "dt": 0.01, "duration": 1.0, "initial_state": {"v1": 1.0, "phi": 0.3}}))
    out = tmp_path / "out"
    r = marsden("simulate", scene, "--out", out)
    assert r.returncode == 3
    assert "step 0" in r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed"
    with np.load(out / "trajectory.npz") as z:
        assert z["t"].shape == (1,)


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


def run_quick_experiment(name, out):
    """Runs experiment NAME with --quick into OUT and checks results.json's frame; returns
    it and its claims by id."""
    r = marsden("experiment", "run", name, "--quick", "--out", out)
    assert r.returncode == 0, r.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["experiment"] == name and results["quick"] is True
    for c in results["claims"]:
        assert {"id", "statement", "source", "measured", "expected", "holds"} <= c.keys()
        assert isinstance(c["holds"], bool)
    return results, {c["id"]: c for c in results["claims"]}


def test_rigid_body_accuracy_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "rba"
    _, claims = run_quick_experiment("rigid-body-accuracy", out)
    assert len(claims) >= 6
    # The VI is second order on the free rigid body; this property is also a unit test.
    assert claims["vi-order-between-2-and-4"]["holds"]
    sweep = json.loads((out / "sweep.json").read_text())
    assert len(sweep["methods"]) == 6
    for m in sweep["methods"]:
        assert len(m["position_error"]) == len(sweep["steps"])
    assert (out / "rigid_body_accuracy.png").stat().st_size > 0


def test_car_accuracy_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "car"
    results, claims = run_quick_experiment("car-accuracy", out)
    assert {"rdp-as-accurate-as-rk2", "rdp-half-the-time-of-rk2", "rdp-second-order"} <= claims.keys()
    # Second order of the RDP integrator on the car is also a unit test (test_rdp).
    assert claims["rdp-second-order"]["holds"]
    assert results["parameters"]["reference_self_error"] < 1e-9
    sweep = json.loads((out / "sweep.json").read_text())
    assert len(sweep["methods"]) == 5
    for m in sweep["methods"]:
        for key in ("heading_error", "position_error", "time_s"):
            assert len(m[key]) == len(sweep["steps"])
    assert {f["path"] for f in results["data_files"]} >= {"sweep.json", "car_accuracy.png"}
    assert (out / "car_accuracy.png").stat().st_size > 0


def test_nonholonomic_comparison_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "nh"
    results, claims = run_quick_experiment("nonholonomic-comparison", out)
    assert {"gni-preserves-sleigh-energy", "rattle-second-order",
            "rdp-constraints-to-roundoff", "gni-sleigh-does-not-settle"} <= claims.keys()
    # Properties that are also unit tests (tests/nonholonomic, tests/vehicle/test_rdp).
    for key in ("gni-preserves-sleigh-energy", "rattle-second-order",
                "rdp-constraints-to-roundoff", "rattle-constraints-to-roundoff"):
        assert claims[key]["holds"], key
    data = json.loads((out / "comparison.json").read_text())
    assert [s["system"] for s in data["systems"]] == ["sleigh", "snakeboard"]
    for s in data["systems"]:
        assert [m["label"] for m in s["methods"]] == ["GNI", "RATTLE", "RDP", "RK4"]
        for m in s["methods"]:
            assert len(m["pose_error"]) == len(s["h"])
            assert m["long_run_completed"] is True
    assert {f["path"] for f in results["data_files"]} >= {
        "comparison.json", "nonholonomic_comparison.png"}
    assert (out / "nonholonomic_comparison.png").stat().st_size > 0


def test_nonholonomic_maximal_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "nhm"
    results, claims = run_quick_experiment("nonholonomic-maximal", out)
    assert {"maximal-sleigh-second-order", "maximal-disk-second-order",
            "maximal-car-second-order", "maximal-snakeboard-second-order",
            "maximal-sleigh-constraint-to-roundoff", "maximal-sleigh-energy-bounded",
            "maximal-sleigh-settles", "trailers-linear-time", "lane-change-second-order",
            "lane-change-trailers-fall-in-line", "maximal-snakeboard-gait-second-order",
            "maximal-snakeboard-gait-momentum"} == claims.keys()
    # Properties that are also unit tests (tests/maximal/test_nonholonomic_maximal.cpp,
    # test_maximal_vehicles.cpp), and the prescribed gait's and lane change's, which only
    # this experiment measures; the timing claim is the benchmark's, not checked here.
    for key in ("maximal-sleigh-second-order", "maximal-disk-second-order",
                "maximal-car-second-order", "maximal-snakeboard-second-order",
                "maximal-sleigh-constraint-to-roundoff", "lane-change-second-order",
                "lane-change-trailers-fall-in-line", "maximal-snakeboard-gait-second-order",
                "maximal-snakeboard-gait-momentum"):
        assert claims[key]["holds"], key
    data = json.loads((out / "nonholonomic_maximal.json").read_text())
    assert [s["system"] for s in data["systems"]] == ["sleigh", "rolling_disk", "car",
                                                      "snakeboard"]
    assert data["long_run"]["completed"] is True
    assert len(data["trailers"]["n"]) == len(data["trailers"]["seconds_per_step"]) == 3
    assert len(data["gait"]["momentum_gap"]) == len(data["gait"]["h"]) == 4
    assert len(data["lane_change"]["t"]) == len(data["lane_change"]["steering_drive"]) > 100
    assert {f["path"] for f in results["data_files"]} >= {
        "nonholonomic_maximal.json", "nonholonomic_maximal.png"}
    assert (out / "nonholonomic_maximal.png").stat().st_size > 0


def test_dmoc_vehicles_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "dmoc"
    _, claims = run_quick_experiment("dmoc-vehicles", out)
    assert {"each-scenario-converges", "resimulation-reproduces-optimum",
            "solutions-respect-constraints", "obstacles-cleared"} <= claims.keys()
    # The quick set (canyon, car, swing-ups) is also solved by unit tests.
    for c in claims.values():
        assert c["holds"], c
    scenarios = json.loads((out / "scenarios.json").read_text())["scenarios"]
    assert [s["name"] for s in scenarios] == [
        "helicopter_canyon", "car_tunnel", "acrobot_swing_up", "cart_pole_swing_up"]
    for s in scenarios:
        assert s["resimulation_error"] < 1e-6 and s["bound_violation"] <= 1e-9
        with np.load(out / s["name"] / "trajectory.npz") as z:
            assert np.all(np.isfinite(z["decision_vector"]))
    assert (out / "dmoc_vehicles.png").stat().st_size > 0


@pytest.mark.parametrize("problem,derivatives", [("cart_pole_swing_up", "exact"),
                                                 ("car_tunnel", "central differences")])
def test_optimize_track_follows_the_optimum_from_perturbed_starts(tmp_path, problem, derivatives):
    out = tmp_path / problem
    r = marsden("optimize", str(ROOT / "examples" / "problems" / f"{problem}.json"), "--out",
                str(out), "--track", "0.05")
    assert r.returncode == 0, r.stderr
    assert "tracking (TV-LQR" in r.stdout
    tracking = json.loads((out / "tracking.json").read_text())
    assert tracking["derivatives"] == derivatives
    cases = tracking["cases"]
    assert len(cases) >= 4 and {c["offset"] for c in cases} == {0.05, -0.05}
    for c in cases:  # TV-LQR ends closer to the optimum's end than the open loop does
        assert c["closed_loop_error"] < 0.2 * c["open_loop_error"], c
    rows = np.genfromtxt(out / "tracking.csv", delimiter=",", names=True)
    assert np.all(np.isfinite(rows["closed_loop_error"]))
    assert marsden("optimize", str(ROOT / "examples" / "problems" / f"{problem}.json"), "--out",
                   str(tmp_path / "bad"), "--track", "-1").returncode != 0


def test_contact_quick_holds_its_claims(tmp_path):
    # Closed forms of hard contact (docs/contact.md); A1 runs when example-robot-data is
    # installed in the environment the command sees ($VIRTUAL_ENV), as in the test runs.
    out = tmp_path / "contact"
    results, claims = run_quick_experiment("contact", out)
    expected = {"sliding-box-stops", "incline-holds", "incline-slides", "sphere-rolls",
                "tossed-box-rests", "elastic-ball-bounces", "elastic-ball-keeps-its-energy",
                "half-elastic-ball-rests", "no-penetration", "energy-never-rises"}
    assert expected <= claims.keys() <= expected | {"a1-stands"}
    for c in claims.values():
        assert c["holds"], c
    rows = np.genfromtxt(out / "contact.csv", delimiter=",", names=True)
    toss = rows[rows["case"] == 1]
    assert sorted(set(toss["dt"])) == [0.01, 0.1]
    assert (out / "contact.png").stat().st_size > 0


def test_model_suites_quick_compares_suite_files_with_mujoco(tmp_path):
    # MuJoCo and the suites' XML files in the environment of the Python the command starts
    # (scripts/install-deps.sh --robots --suites), as in the test runs. The quick set: two
    # damped pendulums, a double pendulum with a limited cart, a model that needs contact in
    # both engines' runs, one the maximal engine refuses (armature), one refused by both.
    out = tmp_path / "suites"
    results, claims = run_quick_experiment("model-suites", out)
    assert claims.keys() == {"files-load-or-name-why", "contact-free-models-load",
                             "loaded-models-agree", "contact-free-second-order", "tree-runs",
                             "maximal-runs", "needing-only-contact-limits-actuators-run-in-both"}
    for key in ("files-load-or-name-why", "loaded-models-agree", "contact-free-second-order",
                "tree-runs"):
        assert claims[key]["holds"], claims[key]
    table = json.loads((out / "model_suites.json").read_text())
    rows = {r["model"]: r for r in table["models"]}
    assert rows.keys() == {"dm_control/pendulum", "dm_control/acrobot", "gymnasium/hopper",
                           "gymnasium/inverted_double_pendulum", "gymnasium/point",
                           "gymnasium/swimmer"}
    assert "fluid forces" in rows["gymnasium/swimmer"]["tree"]
    assert "armature" in rows["gymnasium/hopper"]["maximal"]
    hopper = rows["gymnasium/hopper"]
    assert hopper["needs_contact"] and hopper["tree_left_out"] == "contact limits"
    for name in ("dm_control/pendulum", "dm_control/acrobot",
                 "gymnasium/inverted_double_pendulum"):
        r = rows[name]
        assert max(r["M_error"], r["bias_error"]) <= 1e-9
        assert abs(r["order"] - 2.0) <= 0.2 and r["trajectory_error_fine"] < 1e-5, r
        assert r["tree_run"] == r["maximal_run"] == "ok"
        assert r["tree_step_us"] > 0 and r["mujoco_step_us"] > 0
    assert results["parameters"]["files"] == 6 and results["parameters"]["tree_loads"] == 5
    assert "| gymnasium/swimmer |" in (out / "model_suites.md").read_text()
    assert {f["path"] for f in results["data_files"]} == {
        "model_suites.csv", "model_suites.json", "model_suites.md", "model_suites.log"}


def test_closed_loop_quick_holds_its_claims_on_the_cart_pole(tmp_path):
    # The quick run follows the cart-pole swing-up only; the acrobot's findings (TV-LQR
    # alone falls short with its torque saturated) are in docs/control.md.
    out = tmp_path / "closed"
    results, claims = run_quick_experiment("closed-loop", out)
    assert claims.keys() == {"closed-loop-is-nominal-unperturbed",
                             "terminal-deviation-second-order", "tvlqr-follows-saturated",
                             "mpc-where-tvlqr-falls-short"}
    for c in claims.values():
        assert c["holds"], c
    assert results["parameters"]["scenarios"] == ["cart_pole_swing_up"]
    rows = np.genfromtxt(out / "tracking.csv", delimiter=",", names=True)
    assert len(rows) == 8 * 51 and np.all(rows["closed_loop_error"] < 0.21)
    assert (out / "closed_loop.png").stat().st_size > 0


def test_maximal_performance_quick_writes_claims_data_and_figure(tmp_path):
    out = tmp_path / "mp"
    results, claims = run_quick_experiment("maximal-performance", out)
    assert {"pendulums-no-failure", "pendulums-linear-time", "pendulums-tolerances",
            "four-bars-robust"} <= claims.keys()
    # The quick set (pendulums of at most 20 links, at most 3 four-bar segments, 200 steps)
    # completes; the timing claim is left to the full run.
    for key in ("pendulums-no-failure", "pendulums-tolerances", "four-bars-robust"):
        assert claims[key]["holds"], claims[key]
    steps = results["parameters"]["steps"]
    for name, rows in (("pendulums.csv", 4 * 4 - 2), ("pendulum_tolerances.csv", 3 * 4),
                       ("four_bars.csv", 3 * 3)):
        table = np.atleast_1d(np.genfromtxt(out / name, delimiter=",", names=True))
        assert len(table) == rows
        assert np.all(table["steps"] == steps) and np.all(table["failures"] == 0)
        assert np.all(np.isfinite(table["us_per_step"])) and np.all(table["us_per_step"] > 0)
    pendulums = np.atleast_1d(np.genfromtxt(out / "pendulums.csv", delimiter=",", names=True))
    assert np.all(pendulums["max_violation"] < 1e-9)
    # No failed run: the failure table holds its header only.
    assert (out / "failed_steps.csv").read_text().splitlines()[0].startswith("four_bar,size")
    assert len((out / "failed_steps.csv").read_text().splitlines()) == 1
    assert (out / "maximal_performance.png").stat().st_size > 0


def test_maximal_vs_minimal_quick_runs_both_engines_on_one_description(tmp_path):
    out = tmp_path / "mvm"
    _, claims = run_quick_experiment("maximal-vs-minimal", out)
    assert {"explicit-faster-revolute-few-dof", "maximal-faster-ball",
            "maximal-ball-faster-than-revolute", "explicit-minimal-fails-four-bar-chains",
            "maximal-four-bar-chains", "minimal-vi-fails-tight-tolerances"} <= claims.keys()
    # Not timings: the explicit runs of the four-bar chains drift apart (acceleration-level
    # constraints), the maximal VI's pass the singular configurations.
    for key in ("explicit-minimal-fails-four-bar-chains", "maximal-four-bar-chains"):
        assert claims[key]["holds"], claims[key]
    c = np.atleast_1d(np.genfromtxt(out / "comparison.csv", delimiter=",", names=True))
    # Fig. 5: 5 chain and 3 loop sizes, revolute and ball, 2 methods; Fig. 6: 3 segment
    # counts, 2 steps, 3 methods; Fig. 8: 3 tolerances, 4 sizes, 4 methods.
    assert len(c) == 2 * (5 + 3) * 2 + 3 * 2 * 3 + 3 * 4 * 4
    # The maximal VI's constraint rows are g / dt, converged to the tolerance.
    vi = c[(c["method"] == 0) & (c["failed"] == 0)]
    assert np.all(vi["max_violation"] <= 2 * vi["tolerance"] * vi["dt"])
    completed = c[c["failed"] == 0]
    assert np.all(completed["seconds"] > 0) and np.all(np.isfinite(completed["seconds"]))
    assert (out / "maximal_vs_minimal.png").stat().st_size > 0


def test_optimize_writes_the_solution_and_exit_codes_say_what_failed(tmp_path):
    out = tmp_path / "car"
    r = marsden("optimize", ROOT / "examples" / "problems" / "car_tunnel.json", "--out", out)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] is True and summary["status"] == "solved"
    assert summary["resimulation_error"] < 1e-6 and summary["min_clearance"] >= -1e-8
    for f in ("trajectory.csv", "controls.csv", "trajectory.npz", "ipopt.log",
              "decision_vector.txt"):
        assert (out / f).stat().st_size > 0, f
    # A warm start from the solution is accepted and solves again.
    r = marsden("optimize", ROOT / "examples" / "problems" / "car_tunnel.json", "--out",
                tmp_path / "warm", "--warm-start", out / "decision_vector.txt")
    assert r.returncode == 0, r.stderr
    # Reproducible: solving again from scratch writes byte-identical results.
    r = marsden("optimize", ROOT / "examples" / "problems" / "car_tunnel.json", "--out",
                tmp_path / "again")
    assert r.returncode == 0, r.stderr
    for f in ("trajectory.csv", "controls.csv", "trajectory.npz", "decision_vector.txt"):
        assert (out / f).read_bytes() == (tmp_path / "again" / f).read_bytes(), f

    problem = json.loads((ROOT / "examples" / "problems" / "car_tunnel.json").read_text())
    problem["bounds"]["controls"]["lower"] = [3, -1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(problem))
    r = marsden("optimize", bad, "--out", tmp_path / "bad")
    assert r.returncode == 2
    assert "bad.json" in r.stderr and "bounds.controls" in r.stderr

    # A wall across the tunnel: no motion reaches the goal.
    problem = json.loads((ROOT / "examples" / "problems" / "car_tunnel.json").read_text())
    problem["obstacles"].append({"type": "half_space", "name": "wall", "point": [9, 0],
                                 "normal": [-1, 0]})
    problem["steps"], problem["dt"] = 40, 0.25
    blocked = tmp_path / "blocked.json"
    blocked.write_text(json.dumps(problem))
    r = marsden("optimize", blocked, "--out", tmp_path / "blocked")
    assert r.returncode == 3
    summary = json.loads((tmp_path / "blocked" / "summary.json").read_text())
    assert summary["ok"] is False


# --- interrupts and reused output folders (issue 23) -----------------------------------

LONG_RUN = {"system": {"type": "rigid_body", "inertia": {"J": [1.0, 2.0, 3.0], "mass": 1.0}},
            "initial_state": {"angular_velocity": [0.3, 1.0, 0.2]},
            "dt": 1e-4, "duration": 1e4, "output": {"every": 100}}


def run_until_stopped(args, ready, signal_name, timeout=60):
    """Runs the command until ready() (polled for up to `timeout` s), then sends the signal;
    the command must still be running then. Returns its standard error once it has ended
    with the exit code of an interrupted run, 130."""
    import signal
    import time
    proc = subprocess.Popen([str(BIN), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and not ready():
        time.sleep(0.01)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(getattr(signal, signal_name))
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    return stderr


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_run_with_complete_readable_outputs(tmp_path, signal_name):
    import time
    scene = tmp_path / "long.json"
    scene.write_text(json.dumps(LONG_RUN))
    out = tmp_path / "out"
    start = time.time()
    stderr = run_until_stopped(["simulate", scene, "--out", out],
                               lambda: time.time() > start + 1.0, signal_name)
    assert "interrupted after step" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert 0 < summary["steps_done"] < summary["steps_requested"]
    rows = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1, ndmin=2)
    with np.load(out / "trajectory.npz") as z:
        t = z["t"]
    assert rows.shape[0] == t.shape[0] == summary["rows_written"]
    assert np.isfinite(rows).all()
    assert t[-1] == pytest.approx(summary["final_time"])
    assert not list(out.glob("*.part")) and not list(out.glob(".*"))


def test_a_reused_output_folder_is_refused_without_force(tmp_path):
    out = tmp_path / "out"
    scene = ROOT / "examples" / "scenes" / "rigid_body.json"
    assert marsden("simulate", scene, "--out", out).returncode == 0
    r = marsden("simulate", scene, "--out", out)
    assert r.returncode == 2 and "--force" in r.stderr, r.stderr
    r = marsden("simulate", scene, "--out", out, "--force")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["status"] == "ok"


def test_progress_is_reported_on_request(tmp_path):
    scene = tmp_path / "run.json"
    scene.write_text(json.dumps(dict(LONG_RUN, duration=3.0, dt=1e-5)))
    r = marsden("simulate", scene, "--out", tmp_path / "out", "--progress")
    assert r.returncode == 0, r.stderr
    assert "steps/s" in r.stderr and "of 300000" in r.stderr


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def run_sampling_memory(scene, out):
    """Runs the command, sampling its resident memory every 0.1 s: (summary, samples)."""
    import time
    proc = subprocess.Popen([str(BIN), "simulate", str(scene), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    while proc.poll() is None:
        try:
            samples.append(rss_kib(proc.pid))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.1)
    _, stderr = proc.communicate()
    assert proc.returncode == 0, stderr
    return json.loads((out / "summary.json").read_text()), [s for s in samples if s > 0]


# 10^7 rigid-body steps and 10^6 steps of the 19-link chain, output every 1000 steps: the
# resident memory measured in the second half of each run stays within 4 MiB of the first
# quarter's (rows stream to disk); the energy error stays within twice its early
# oscillation plus what the Newton tolerance allows per step (the round-off of 10^7 solves
# shows: 2e-10 J early, 2e-9 J late on the rigid body); the rigid body's spatial momentum
# drifts by less than ten times the Newton tolerance per step, and by far less with a
# tighter tolerance (so the drift is the solver's, not the method's).
def test_long_runs_keep_memory_flat_and_invariants_bounded(tmp_path):
    # The exact tangent map: with C_TLN the spatial momentum is not a discrete invariant on
    # SE(3) (docs/results.md, findings), and its drift would measure the method, not the solver.
    body = dict(json.loads((ROOT / "examples" / "scenes" / "rigid_body.json").read_text()),
                dt=0.01, duration=1e5, output={"every": 1000})
    body["integrator"] = dict(body["integrator"], tangent="exact")
    chain = dict(json.loads((ROOT / "examples" / "scenes" / "pendulum_chain.json").read_text()),
                 duration=2000.0, output={"every": 1000})
    for name, scene_dict, steps in (("body", body, 10**7), ("chain", chain, 10**6)):
        scene = tmp_path / f"{name}.json"
        scene.write_text(json.dumps(scene_dict))
        summary, samples = run_sampling_memory(scene, tmp_path / name)
        assert summary["steps_done"] == steps
        assert len(samples) >= 8, samples
        quarter, half = samples[: len(samples) // 4], samples[len(samples) // 2:]
        assert max(half) - max(quarter) < 4096, (name, max(quarter), max(half))
        with np.load(tmp_path / name / "trajectory.npz") as z:
            energy = z["energy"]
        error = np.abs(energy - energy[0])
        tenth = len(error) // 10
        tolerance = summary["integrator"]["tolerance"]
        allowed = 2.0 * error[:tenth].max() + tolerance * steps * abs(energy[0])
        assert error.max() <= allowed, (name, error.max(), allowed)
        if name == "body":
            # Each step leaves a residual up to the tolerance, which the inertia (up to 3
            # kg m^2) maps onto the momentum: 3.1e-12 per step measured; 10x allowed.
            assert summary["spatial_momentum"]["relative_drift"] < 10 * tolerance * steps
        print(f"{name}: {steps} steps, resident memory {max(quarter) / 1024:.1f} MiB after a "
              f"quarter, {max(half) / 1024:.1f} MiB at most after half, energy error "
              f"{error.max():.3g} J")
    tight = dict(body, integrator=dict(body["integrator"], tolerance=1e-14))
    (tmp_path / "tight.json").write_text(json.dumps(tight))
    assert marsden("simulate", tmp_path / "tight.json", "--out", tmp_path / "tight").returncode == 0
    drift = json.loads((tmp_path / "tight" / "summary.json").read_text())["spatial_momentum"]
    loose = json.loads((tmp_path / "body" / "summary.json").read_text())["spatial_momentum"]
    assert drift["relative_drift"] < 0.1 * loose["relative_drift"]


def test_a_signal_ends_an_optimisation_with_its_last_iterate_written(tmp_path):
    problem = json.loads((ROOT / "examples" / "problems" / "helicopter_canyon.json").read_text())
    problem.update(steps=1500, dt=problem["dt"] * 100 / 1500)  # slow enough to interrupt
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(problem))
    out = tmp_path / "out"
    log = out / "ipopt.log"
    # A few iterations into the solve.
    stderr = run_until_stopped(
        ["optimize", path, "--out", out, "--progress"],
        lambda: log.exists() and log.read_text(errors="replace").count("\n") > 40, "SIGINT")
    assert "interrupted at Ipopt iteration" in stderr and "Ipopt iteration" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["ok"] is False
    with np.load(out / "trajectory.npz") as z:
        assert np.isfinite(z["decision_vector"]).all()


def test_an_interrupted_experiment_keeps_complete_files_and_says_so(tmp_path):
    out = tmp_path / "mp"
    # Stopped once its first file is out.
    stderr = run_until_stopped(["experiment", "run", "maximal-properties", "--quick",
                                "--progress", "--out", out], (out / "energy.csv").exists,
                               "SIGTERM")
    assert "experiment maximal-properties: energy" in stderr and "interrupted in part" in stderr
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "interrupted" and results["message"] in stderr
    listed = {f["path"] for f in results["data_files"]}
    assert "energy.csv" in listed
    assert listed == {p.name for p in out.iterdir()} - {"results.json"}
    check_outputs_complete(out)


def check_outputs_complete(out):
    """Every file under OUT is whole: no temporary or hidden file, CSV rows of one width
    that parse as numbers, loadable npz archives, valid JSON. Returns the summary's status
    (summary.json or results.json), or None when the folder holds neither."""
    status = None
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out)
        assert not any(part.startswith(".") for part in rel.parts), rel
        assert not path.name.endswith(".part"), rel
        if path.suffix == ".csv":
            lines = path.read_text().splitlines()
            assert lines and path.read_text().endswith("\n"), rel
            width = len(lines[0].split(","))
            for line in lines[1:]:
                fields = line.split(",")
                assert len(fields) == width, (rel, line)
                [float(f) for f in fields]
        elif path.suffix == ".npz":
            with np.load(path) as z:
                for name in z.files:
                    assert np.isfinite(z[name]).all(), (rel, name)
        elif path.suffix == ".json":
            doc = json.loads(path.read_text())
            if path.name in ("summary.json", "results.json") and path.parent == out:
                status = doc["status"]
    return status


# Each command stopped at random moments (seeded; SIGINT and SIGTERM in turn): every file
# left is complete and readable, and the summary says whether the run finished. A signal
# can only beat the command to its handlers before it has written anything.
def test_commands_interrupted_at_random_moments_leave_complete_outputs(tmp_path):
    import random
    import signal
    import time
    rng = random.Random(23)
    scene = tmp_path / "long.json"
    scene.write_text(json.dumps(LONG_RUN))
    problem = json.loads((ROOT / "examples" / "problems" / "helicopter_canyon.json").read_text())
    problem.update(steps=300, dt=problem["dt"] * 100 / 300)  # seconds to solve
    (tmp_path / "slow.json").write_text(json.dumps(problem))
    commands = {
        "simulate": (["simulate", scene], 1.0, {"interrupted"}, {"ok"}),
        "optimize": (["optimize", tmp_path / "slow.json"], 1.5, {"interrupted"}, {"solved"}),
        "experiment": (["experiment", "run", "maximal-properties", "--quick"], 1.2,
                       {"interrupted"}, {"ok"}),
    }
    runs = 0
    interrupted = {name: 0 for name in commands}
    for name, (args, longest, stopped, finished) in commands.items():
        for k in range(3):
            out = tmp_path / f"{name}{k}"
            sig = (signal.SIGINT, signal.SIGTERM)[(runs := runs + 1) % 2]
            proc = subprocess.Popen([str(BIN), *map(str, args), "--out", str(out)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0.02, longest))
            proc.send_signal(sig)
            _, stderr = proc.communicate(timeout=120)
            if proc.returncode == -sig:  # killed before main() installed the handlers
                assert not out.exists() or not any(out.iterdir()), stderr
                continue
            assert proc.returncode in (0, 130), (name, proc.returncode, stderr)
            status = check_outputs_complete(out)
            assert status in (stopped if proc.returncode == 130 else finished), (name, status)
            interrupted[name] += proc.returncode == 130
    # Each command was caught in the middle at least once (else this tested nothing).
    assert all(n > 0 for n in interrupted.values()), interrupted


def test_out_of_memory_is_reported_as_such(tmp_path):
    import resource
    # The dense work space of a 3000-link chain (about 0.9 GB) fits the 4 GiB budget but not
    # a process limited to 600 MB of address space.
    scene = tmp_path / "big.json"
    scene.write_text(json.dumps({"system": {"type": "tree", "model": "n_link_pendulum",
                                            "parameters": {"n": 3000}},
                                 "dt": 0.01, "duration": 0.01}))
    limit = 600 * 2**20
    r = subprocess.run([str(BIN), "simulate", str(scene), "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert r.returncode == 4, r.stderr
    assert f"out of memory while reading {scene}" in r.stderr
    assert "internal" not in r.stderr and "limits" in r.stderr


def test_scene_limits_refuse_a_small_run_naming_the_field(tmp_path):
    scene = tmp_path / "small.json"
    scene.write_text(json.dumps(dict(LONG_RUN, duration=1.0, dt=0.01, output={"every": 1},
                                     limits={"output_rows": 50})))
    r = marsden("simulate", scene, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "field 'output'" in r.stderr and "would write 102 rows" in r.stderr
    assert "limits.output_rows" in r.stderr
    scene.write_text(json.dumps(dict(LONG_RUN, duration=1.0, dt=0.01, output={"every": 1},
                                     limits={"output_rows": 102})))
    assert marsden("simulate", scene, "--out", tmp_path / "ok").returncode == 0


def test_sweep_command_runs_a_study_and_names_bad_fields(tmp_path):
    # `marsden sweep` is python -m marsden.sweep: a LocalCluster of one worker runs 4 runs
    # into the table; a sweep naming a field the scene does not have stops with exit 2.
    import csv
    spec = {"scene": str(ROOT / "examples" / "scenes" / "rigid_body.json"),
            "parameters": {"integrator.method": ["vi", "rk4"], "dt": [0.01, 0.02]},
            "metrics": ["energy_drift", "steps_done"]}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(spec))
    r = marsden("sweep", path, "--out", tmp_path / "out", "--workers", "1")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "out" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and all(row["status"] == "ok" for row in rows)
    assert {(row["p:integrator.method"], float(row["p:dt"])) for row in rows} == {
        ("vi", 0.01), ("vi", 0.02), ("rk4", 0.01), ("rk4", 0.02)}
    spec["parameters"] = {"integrator.nope": [1, 2]}
    path.write_text(json.dumps(spec))
    r = marsden("sweep", path, "--out", tmp_path / "bad")
    assert r.returncode == 2 and "integrator.nope" in r.stderr, r.stderr
