"""Batch rollouts and sweeps: a batch equals single runs bit for bit; a LocalCluster sweep
equals the same runs done one by one; reruns skip what is in the table; the same seed gives
the same table; a real scheduler and two workers on 127.0.0.1 finish every run exactly once
when one worker is killed mid-sweep."""

import copy
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import marsden
from marsden import sweep as sw

RIGID = {"system": {"type": "rigid_body", "inertia": {"J": [1.0, 2.0, 3.0], "mass": 1.0}},
         "integrator": {"method": "vi", "tolerance": 1e-12}, "dt": 0.01, "duration": 0.3,
         "initial_state": {"angular_velocity": [0.01, 2.0, 0.01], "linear_velocity": [0.1, 0, 0]}}
CHAIN = {"system": {"type": "tree", "model": "n_link_pendulum",
                    "parameters": {"n": 5, "length": 0.1, "mass": 0.1}},
         "integrator": {"method": "midpoint", "tolerance": 1e-10}, "dt": 0.005, "duration": 0.2}


def _spec(runs_per_method=20, duration=0.3):
    scene = copy.deepcopy(RIGID)
    scene["duration"] = duration
    return {"scene": scene,
            "parameters": {"integrator.method": ["vi", "rk4"],
                           "initial_state.angular_velocity.1": {"uniform": [0.5, 3.0]}},
            "draws": runs_per_method, "seed": 5,
            "metrics": ["energy_drift", "momentum_drift", "final_pose_error", "steps_done"],
            "reference": {"integrator.method": "rk4", "dt": 0.001}}


@pytest.mark.parametrize("base", [RIGID, CHAIN])
def test_batch_equals_single_runs_bit_for_bit(base):
    scene = marsden.parse_scene(json.dumps(base))
    names = marsden.initial_state_names(scene)
    rng = np.random.default_rng(3)
    states = rng.uniform(-1, 1, (8, len(names)))
    if base is CHAIN:
        states[:, len(names) // 2:] = 0.0
    else:
        states[:, 3:7] /= np.linalg.norm(states[:, 3:7], axis=1, keepdims=True)
    batch = marsden.rollout(scene, states, threads=2)
    assert batch.values.shape[0] == 8 and batch.ok.all()
    for i in range(8):
        one = marsden.parse_scene(json.dumps(_with_state(base, names, states[i])))
        alone = marsden.simulate(marsden.make_system(one), dt=one.dt, steps=one.steps)
        assert alone.values.tobytes() == batch.values[i].tobytes(), f"run {i}"


def _with_state(base, names, state):
    """The scene dict with the state written as scene fields (independent of rollout)."""
    scene = copy.deepcopy(base)
    if base is RIGID:
        scene["initial_state"] = {"position": list(state[0:3]),
                                  "orientation": {"quaternion": list(state[3:7])},
                                  "angular_velocity": list(state[7:10]),
                                  "linear_velocity": list(state[10:13])}
    else:
        n = len(names) // 2
        scene["initial_state"] = {"q": dict(zip(names[:n], state[:n])),
                                  "qd": dict(zip(names[:n], state[n:]))}
    return scene


def test_rollout_controls_and_bad_input():
    scene = marsden.parse_scene(json.dumps(RIGID))
    with pytest.raises(marsden.InputError, match=r"initial_states: expected shape"):
        marsden.rollout(scene, np.zeros(13))
    states = np.tile([0, 0, 0, 1, 0, 0, 0, 0.1, 1, 0, 0, 0, 0], (3, 1)).astype(float)
    states[1, 8] = np.nan
    with pytest.raises(marsden.InputError, match=r"run 1: initial_states\[1\]: vehicle state: entry 8 \(wy\)"):
        marsden.rollout(scene, states)
    with pytest.raises(marsden.InputError, match=r"initial_states: expected 2 x 13 values, got 24"):
        marsden.rollout(scene, np.zeros((2, 12)))
    with pytest.raises(marsden.InputError, match=r"controls: expected shape"):
        marsden.rollout(scene, np.zeros((4, 13)), controls=np.zeros(4))


def test_local_cluster_sweep_equals_runs_one_by_one(tmp_path):
    spec = _spec()
    table = sw.sweep(spec, tmp_path / "a", workers=2, progress=False).to_pylist()
    runs = sw.runs(spec)
    assert len(runs) == 40 == len(table)
    for row, run in zip(table, runs):
        assert row["key"] == run["key"] and row["status"] == "ok"
        scene = copy.deepcopy(spec["scene"])
        scene["integrator"]["method"] = run["parameters"]["integrator.method"]
        scene["initial_state"]["angular_velocity"][1] = run["parameters"][
            "initial_state.angular_velocity.1"]
        s = marsden.parse_scene(json.dumps(scene))
        alone = marsden.simulate(marsden.make_system(s), dt=s.dt, steps=s.steps)
        ref_scene = copy.deepcopy(scene)
        ref_scene["integrator"]["method"], ref_scene["dt"] = "rk4", 0.001
        r = marsden.parse_scene(json.dumps(ref_scene))
        ref = marsden.simulate(marsden.make_system(r), dt=r.dt, steps=r.steps)
        final = lambda t: np.concatenate([t["position"][-1], t["quaternion"][-1]])
        assert row["energy_drift"] == alone.summary["energy"]["relative_drift"]
        assert row["momentum_drift"] == alone.summary["momentum"]["relative_drift"]
        assert row["final_pose_error"] == np.linalg.norm(final(alone) - final(ref))


def test_failed_runs_resume_and_seed(tmp_path):
    spec = _spec(runs_per_method=3, duration=0.05)
    spec["parameters"]["dt"] = [0.01, -1.0]
    spec["metrics"] = ["energy_drift"]
    del spec["reference"]
    out = tmp_path / "s"
    first = sw.sweep(spec, out, workers=1, progress=False).to_pylist()
    assert len(first) == 12
    errors = [r for r in first if r["p:dt"] == -1.0]
    assert errors and all(r["status"] == "error" and "dt" in r["error"] for r in errors)
    assert all(r["status"] == "ok" for r in first if r["p:dt"] == 0.01)
    # Interrupted sweep: keep 5 rows; the rerun does only the other 7 and gives the same table.
    table = pq.read_table(out / "results.parquet")
    pq.write_table(table.slice(0, 5), out / "results.parquet")
    again = sw.sweep(spec, out, workers=1, progress=False).to_pylist()
    assert _plain(again) == _plain(first)
    assert (out / "results.csv").read_text().count("\n") == 13
    # Same seed, fresh folder: the same table; another seed: other draws.
    fresh = sw.sweep(spec, tmp_path / "t", workers=1, progress=False).to_pylist()
    assert _plain(fresh) == _plain(first)
    other = dict(spec, seed=6)
    assert [r["key"] for r in sw.runs(other)] != [r["key"] for r in sw.runs(spec)]


@pytest.mark.parametrize("bad, message", [
    ({"parameters": {"integrator.nope": [1]}}, r"parameters.integrator.nope'.*no 'nope'"),
    ({"parameters": {"dt": {"uniform": [0.1]}}}, r"uniform: expected 2 finite numbers"),
    ({"parameters": {"dt": {"sobol": [1, 2]}}}, r"unknown axis 'sobol'"),
    ({"metrics": ["speed"]}, r"unknown metric 'speed'"),
    ({"draws": 3}, r"needs a random axis"),
    ({"colour": 1}, r"unknown field 'colour'"),
    ({"plots": [{"x": "dt", "y": "speed"}]}, r"plots\[0\]'.y: 'speed' is no column"),
    ({"plots": [{"x": "dt", "y": "energy_drift", "log": "z"}]}, r"plots\[0\]'.log"),
])
def test_bad_sweep_names_field(bad, message):
    spec = dict({"scene": RIGID, "parameters": {"dt": [0.01]}}, **bad)
    with pytest.raises(marsden.InputError, match=message):
        sw.load_spec(spec)


def _plain(rows):
    """Rows with NaN as None, so that tables compare by value."""
    return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
            for r in rows]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rows_now(out):
    # The sweep replaces results.parquet while it runs, and pyarrow opens a file more than
    # once to read it: one read of its bytes is a snapshot of one version.
    return pq.read_table(pa.BufferReader((out / "results.parquet").read_bytes())).num_rows


def test_real_cluster_with_a_worker_killed(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(marsden.__file__).parent.parent)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    procs = []
    try:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", str(port), "--no-dashboard", "--idle-timeout", "120"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for name in ("w1", "w2"):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--host",
                 "127.0.0.1", "--nthreads", "1", "--no-dashboard", "--name", name,
                 "--death-timeout", "60"],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from dask.distributed import Client
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=30)
        # Runs of about 0.2 s each, so that the kill falls inside the sweep.
        spec = _spec(runs_per_method=12, duration=20.0)
        spec["scene"]["dt"] = 1e-4
        spec["scene"]["output"] = {"every": 1000}
        spec["metrics"] = ["energy_drift"]
        del spec["reference"]
        out = tmp_path / "c"
        result = {}
        thread = threading.Thread(target=lambda: result.update(table=sw.sweep(
            spec, out, address=address, progress=False, save_every=0.1)))
        thread.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (out / "results.parquet").exists() and _rows_now(out) >= 4:
                break
            time.sleep(0.05)
        done_at_kill = _rows_now(out)
        procs[1].send_signal(signal.SIGKILL)  # worker w1 dies mid-sweep
        assert done_at_kill < 24
        thread.join(timeout=120)
        assert not thread.is_alive()
        rows = result["table"].to_pylist()
        keys = [r["key"] for r in rows]
        assert sorted(keys) == sorted(r["key"] for r in sw.runs(spec))
        assert len(set(keys)) == len(keys) == 24
        assert all(r["status"] == "ok" for r in rows)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


def test_plots_draw_the_tables_means_and_ranges(tmp_path):
    # A grid axis (dt) with random draws at each point: the plot's series are the mean, min
    # and max of the table's rows at each dt, per method; the PNG is a drawn image.
    from matplotlib.image import imread
    spec = _spec(runs_per_method=3, duration=0.05)
    spec["parameters"]["dt"] = [0.005, 0.01]
    spec["metrics"] = ["energy_drift"]
    del spec["reference"]
    spec["plots"] = [{"x": "dt", "y": "energy_drift", "by": "integrator.method", "log": "y"}]
    out = tmp_path / "p"
    rows = sw.sweep(spec, out, workers=1, progress=False).to_pylist()
    drawn = marsden.sweep_plot.plot(out, "p:dt", "energy_drift", "p:integrator.method")
    for method, s in drawn["series"].items():
        assert s["x"] == [0.005, 0.01]
        for x, mean, low, high in zip(s["x"], s["y"], s["low"], s["high"]):
            values = [r["energy_drift"] for r in rows
                      if r["p:integrator.method"] == method and r["p:dt"] == x]
            assert len(values) == 3
            assert mean == pytest.approx(np.mean(values), rel=1e-12)
            assert (low, high) == (min(values), max(values))
    image = imread(out / "energy_drift_vs_p_dt.png")
    assert image.shape[0] > 100 and image[..., :3].std() > 0.01
    assert not list(out.glob(".*"))


# Claims whose measured value holds compute times.
TIMED_CLAIMS = {"vi-faster-than-rk4-per-step", "vi-cheaper-than-rk4-at-equal-error",
                "rdp-half-the-time-of-rk2", "general-path-equals-explicit-update"}


def _measures(row: dict) -> dict:
    return {c: v for c, v in row.items()
            if c not in ("index", "key", "status", "error", "run", "method", "level")
            and not c.startswith("p:")}


def _bits(measures: dict, skip=("time_s",)) -> dict:
    """The measures as their exact bits (NaN and null alike), compute times left out."""
    return {c: float("nan" if v is None else v).hex() for c, v in measures.items() if c not in skip}


@pytest.mark.parametrize("study", ["rigid-body-accuracy", "car-accuracy"])
def test_study_sweep_gives_the_experiments_claims(tmp_path, study):
    # Two paths through the same C++ row function: the sweep computes the rows on two Dask
    # worker processes (their own reference runs), the experiment loops over them in this
    # process; both then go through the same claims function. The rows must agree bit for
    # bit but for the compute times, which differ from run to run; so the claims are
    # compared with the sweep's rows given the experiment's times.
    spec = {"study": study, "quick": True}
    table = sw.sweep(spec, tmp_path / "sweep", workers=2, progress=False).to_pylist()
    keys = marsden._core._study_rows(study, True)
    assert [(r["p:run"], r["p:method"], r["p:level"]) for r in table] == keys
    assert all(r["status"] == "ok" for r in table)
    claims = json.loads((tmp_path / "sweep" / "claims.json").read_text())
    assert claims == sw.study_claims(spec, table)

    # Rows computed here in shuffled order (this process's first reference runs) equal the
    # sweep's bit for bit.
    order = list(range(len(keys)))
    np.random.default_rng(1).shuffle(order)
    for i in order:
        alone = marsden._core._study_row(study, True, *keys[i])
        assert _bits(alone) == _bits(_measures(table[i])), f"row {keys[i]}"

    results = marsden.experiments.run_experiment(study, tmp_path / "experiment", quick=True)
    rows = json.loads((tmp_path / "experiment" / "rows.json").read_text())
    assert [(r["run"], r["method"], r["level"]) for r in rows] == keys
    for row, swept in zip(rows, table):
        assert _bits(_measures(row)) == _bits(_measures(swept)), f"row {row}"
    timed = [dict(r, time_s=e["time_s"]) for r, e in zip(table, rows)]
    same = sw.study_claims(spec, timed)
    assert same["claims"] == results["claims"]
    assert same["all_claims_hold"] == results["all_claims_hold"]
    # Claims that do not depend on the times are the same straight from the sweep.
    assert [c["id"] for c in claims["claims"]] == [c["id"] for c in results["claims"]]
    for swept, measured in zip(claims["claims"], results["claims"]):
        if swept["id"] not in TIMED_CLAIMS:
            assert swept == measured


def test_study_sweep_bad_input(tmp_path):
    with pytest.raises(marsden._core.InputError, match="unknown study 'rigid'"):
        sw.runs({"study": "rigid"})
    with pytest.raises(marsden._core.InputError, match="field 'quick'"):
        sw.runs({"study": "car-accuracy", "quick": "yes"})
    with pytest.raises(marsden._core.InputError, match="unknown field 'seed'"):
        sw.runs({"study": "car-accuracy", "seed": 1})
    with pytest.raises(marsden._core.InputError, match=r"run index 5 outside \[0, 5\)"):
        marsden._core._study_row("car-accuracy", True, 5, 0, 0)
    with pytest.raises(marsden._core.InputError, match=r"level index -1 outside"):
        marsden._core._study_row("rigid-body-accuracy", False, 0, 0, -1)
    with pytest.raises(marsden._core.InputError, match=r"row \(run 0, method 0, level 1\) missing"):
        marsden._core._study_claims("car-accuracy", True, [(0, 0, 0, {})])


def test_maximal_and_nonholonomic_monte_carlo_sweeps(tmp_path):
    """The example sweeps over a maximal chain (release angle, a scene field) and the
    sleigh (spin and speed, entries of its state set by System.set_state), smaller: each
    row equals the same run done by hand."""
    root = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
    for name in ("maximal_chain_monte_carlo.json", "sleigh_monte_carlo.json"):
        spec = sw.load_spec(root / name)
        spec["draws"] = 2
        spec["scene"]["duration"] = 0.2
        table = sw.sweep(spec, tmp_path / name, workers=2, progress=False).to_pylist()
        runs = sw.runs(spec)
        assert len(table) == len(runs) > 0
        for row, run in zip(table, runs):
            assert row["status"] == "ok", row["error"]
            p = run["parameters"]
            scene_dict = copy.deepcopy(spec["scene"])
            for path, value in p.items():
                if path == "system.parameters.initial_angle":
                    scene_dict["system"]["parameters"]["initial_angle"] = value
                elif path == "integrator.method":
                    scene_dict["integrator"]["method"] = value
            scene = marsden.parse_scene(json.dumps(scene_dict))
            system = marsden.make_system(scene)
            if "state.omega" in p:
                x = system.state
                x[system.state_names.index("omega")] = p["state.omega"]
                x[system.state_names.index("v1")] = p["state.v1"]
                system.set_state(x)
                assert system.state[system.state_names.index("omega")] == p["state.omega"]
            alone = marsden.simulate(system, scene.dt, scene.steps)
            assert row["energy_drift"] == alone.summary["energy"]["relative_drift"]
            assert row["constraint_violation"] == alone.summary["constraint_violation_max"]
    # An unknown state entry is a row's error naming it, not the end of the sweep.
    scene = sw.load_spec(root / "sleigh_monte_carlo.json")["scene"]
    scene["duration"] = 0.05
    bad = {"scene": scene, "parameters": {"state.spin": [1.0]}, "metrics": ["energy_drift"]}
    row = sw.sweep(bad, tmp_path / "bad", workers=1, progress=False).to_pylist()[0]
    assert row["status"] == "error" and "no entry 'spin'" in row["error"]


# ------------------------------------------------------------------ trust (reliability.md)
LIBRARY_SCENE = {"system": {"type": "generated", "library": "m.so"}, "dt": 0.01, "duration": 0.1}


def test_a_sweep_whose_scene_names_code_is_refused_without_the_allowance(tmp_path, monkeypatch):
    """Refused before any cluster starts, naming the file that names the code, the field and
    how to allow it; each run refuses it too without allow_code (a parameter may name a
    library: the reader is the guard), and runs it with allow_code (the library here is
    text: loading it fails, naming the field)."""
    monkeypatch.delenv("MARSDEN_TRUSTED_FOLDERS", raising=False)
    (tmp_path / "m.so").write_text("not a shared object")
    (tmp_path / "scene.json").write_text(json.dumps(LIBRARY_SCENE))
    (tmp_path / "by_file.json").write_text(json.dumps(
        {"scene": "scene.json", "parameters": {"dt": [0.01]}}))
    (tmp_path / "inline.json").write_text(json.dumps(
        {"scene": {**LIBRARY_SCENE, "system": {"module": "m.py"}}, "parameters": {"dt": [0.01]}}))
    start = time.monotonic()
    with pytest.raises(marsden.InputError) as by_file:
        sw.sweep(tmp_path / "by_file.json", tmp_path / "out", workers=1, progress=False)
    with pytest.raises(marsden.InputError) as inline:
        sw.sweep(tmp_path / "inline.json", tmp_path / "out", workers=1, progress=False)
    assert time.monotonic() - start < 5  # no cluster was started
    assert str(by_file.value).startswith(
        f"{tmp_path / 'scene.json'}: field 'system.library': names a compiled library ('m.so')")
    assert str(inline.value).startswith(
        f"{tmp_path / 'inline.json'}: field 'scene.system.module': names a Python module ('m.py')")
    for e in (by_file, inline):
        assert ("pass allow_code=True to marsden.sweep.sweep (`marsden sweep --allow-code`), or add "
                "the folder of the sweep file (and of its scene file) to "
                "$MARSDEN_TRUSTED_FOLDERS") in str(e.value)
    assert not (tmp_path / "out" / "results.parquet").exists()
    spec = sw.load_spec(tmp_path / "by_file.json")
    run = sw.runs(spec)[0]
    refused = sw.run_one(spec, run)
    assert refused["status"] == "error" and "names a compiled library ('m.so')" in refused["error"]
    allowed = sw.run_one(spec, run, allow_code=True)
    assert allowed["status"] == "error" and "field 'system.library'" in allowed["error"]
    assert "cannot be loaded" in allowed["error"]


def test_trusted_folders_allow_a_sweeps_code_when_every_file_lies_in_one(tmp_path, monkeypatch):
    trusted, other = tmp_path / "trusted", tmp_path / "trusted-not"
    for folder in (trusted, other):
        folder.mkdir()
        (folder / "scene.json").write_text(json.dumps(LIBRARY_SCENE))
    (trusted / "sweep.json").write_text(json.dumps({"scene": "scene.json"}))
    (trusted / "elsewhere.json").write_text(json.dumps({"scene": "../trusted-not/scene.json"}))
    (other / "sweep.json").write_text(json.dumps({"scene": "../trusted/scene.json"}))
    monkeypatch.setenv("MARSDEN_TRUSTED_FOLDERS", str(trusted))

    def allowed(path):
        spec, files = sw._load_spec(path)
        try:
            return sw._check_code(spec, files, str(path), False)
        except marsden.InputError:
            return False

    assert allowed(trusted / "sweep.json")
    assert not allowed(trusted / "elsewhere.json")  # its scene lies outside
    assert not allowed(other / "sweep.json")  # the sweep lies outside
    with pytest.raises(marsden.InputError, match="field 'scene.system.library'"):
        sw._check_code({"scene": LIBRARY_SCENE}, {}, "<sweep>", False)  # a dict has no folder


def test_a_plaintext_scheduler_on_another_machine_is_warned_about_by_address():
    """The decision alone, connecting to nothing: TLS when Dask's is configured, a warning
    naming a non-loopback address reached in plaintext, none for this machine."""
    from distributed.security import Security

    plain = Security(require_encryption=False)
    for address in ("tcp://10.1.2.3:8786", "192.168.0.7:8786", "tcp://scheduler.example:8786",
                    "ws://[2001:db8::1]:8786"):
        kept, security, warning = sw.scheduler_connection(address, plain)
        assert kept == address and security is plain
        assert warning is not None and f"the Dask scheduler at {address} is reached in " \
                                         "plaintext" in warning and "Trust model" in warning
    for address in ("tcp://127.0.0.1:8786", "127.0.0.2:8786", "tcp://localhost:8786",
                    "tcp://[::1]:8786"):
        assert sw.scheduler_connection(address, plain) == (address, plain, None)
    tls = Security(tls_ca_file="ca.pem", tls_client_cert="client.pem", tls_client_key="key.pem")
    assert sw.scheduler_connection("tcp://10.1.2.3:8786", tls) == ("tls://10.1.2.3:8786", tls, None)
    assert sw.scheduler_connection("tls://10.1.2.3:8786", tls) == ("tls://10.1.2.3:8786", tls, None)
    with pytest.raises(marsden.InputError, match="a TLS address needs Dask's TLS configured"):
        sw.scheduler_connection("tls://10.1.2.3:8786", plain)


def test_sweep_warns_before_it_connects_and_hands_the_security_to_the_client(tmp_path,
                                                                            monkeypatch):
    """The sweep's own path to a scheduler, with a client that connects to nothing."""
    import warnings

    import dask.distributed

    calls = []

    class NoClient:
        def __init__(self, address, **kwargs):
            calls.append((address, kwargs))
            raise ConnectionRefusedError(address)

    monkeypatch.setattr(dask.distributed, "Client", NoClient)
    with pytest.warns(sw.PlaintextSchedulerWarning, match="tcp://10.1.2.3:8786 is reached"), \
            pytest.raises(ConnectionRefusedError):
        sw.sweep(_spec(1), tmp_path / "far", address="tcp://10.1.2.3:8786", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConnectionRefusedError):
            sw.sweep(_spec(1), tmp_path / "near", address="tcp://127.0.0.1:8786", progress=False)
    assert [address for address, _ in calls] == ["tcp://10.1.2.3:8786", "tcp://127.0.0.1:8786"]
    assert all(kwargs["security"] is not None for _, kwargs in calls)
