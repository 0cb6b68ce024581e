"""Sweeps and Monte Carlo studies on Dask: a base scene, parameter axes, the metrics to
keep, one row per run in a Parquet and a CSV table (docs/sweeps.md).

    table = marsden.sweep("examples/sweeps/rigid_body_monte_carlo.json", "out/mc")

A sweep file (or dict) holds:

    "scene"       the base scene, inline (a dict) or a path relative to the sweep file
    "scene_file"  where the scene's relative paths (a generated system's "library", a
                  tree's model) start: set to the scene file's path when "scene" is one,
                  else the sweep file's (default: the working folder for a dict)
    "parameters"  {path: axis}: a path names a field of the scene ("dt",
                  "integrator.method", "initial_state.angular_velocity.1") or, as
                  "state.NAME", an entry of the system's state (System.state_names: "state.v1",
                  "state.link0_wy"), set by System.set_state for every family; an axis is a
                  list of values, {"linspace" | "logspace" | "geomspace": [a, b, n]}
                  (a grid), or a random draw {"uniform": [a, b]}, {"normal": [mu, sigma]},
                  {"integers": [a, b]} (b excluded), {"choice": [v, ...]}
    "draws"       random draws per point of the grid (1 by default; needs a random axis
                  for more than 1)
    "seed"        the random draws' seed: the same seed gives the same runs and table
    "metrics"     what each row keeps (METRICS); "reference": overrides of the scene
                  (e.g. {"dt": 1e-4}) whose run gives final_pose_error
    "plots"       [{"x", "y", "by", "log", "file"}]: PNGs of a metric against a parameter
                  per value of another, drawn when the table is complete (sweep_plot.py)
The runs are the product of the grid axes, times the draws. Each run is keyed by a hash
of its parameters; a rerun into the same folder skips the keys already in its table.

A scene that names a Python module or a compiled library runs that code in every run: the
sweep is refused, naming the file and the field, unless allow_code=True (`marsden sweep
--allow-code`) or the sweep file (and the scene file it names) lie in folders of
$MARSDEN_TRUSTED_FOLDERS (docs/reliability.md, "Trust model"). A scheduler given by address
is reached with Dask's TLS when it is configured; a plaintext connection to one that is not
on this machine is warned about (scheduler_connection).

A sweep file may instead name one of the papers' accuracy studies (STUDIES):

    "study"       "rigid-body-accuracy" or "car-accuracy"
    "quick"       the experiment's quick size (false by default: the full study)
Its runs are the study's rows (run, method, step level), each computed by the same C++
function as the experiment's, keyed by a hash of (study, quick, run, method, level); once
every row is in the table, the study's claims (the experiment's claims function) are
written to claims.json in the output folder.
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import itertools
import json
import logging
import math
import os
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from . import _core, sweep_plot

# A parameter path naming an entry of the system's state rather than a field of the scene.
STATE_PREFIX = "state."

# What a row can keep, each from the run's summary (or its reference run).
METRICS = {
    "energy_drift": "max |E - E0| / |E0| over the run",
    "energy_drift_abs": "max |E - E0|, J",
    "momentum_drift": "max ||mu - mu0|| / ||mu0|| (systems with a conserved momentum)",
    "constraint_violation": "largest constraint violation (systems with constraints)",
    "final_pose_error": "distance of the final state from the reference run's (\"reference\")",
    "newton_mean": "mean Newton iterations per step attempt",
    "steps_done": "steps done (fewer than asked when the run failed)",
    "solve_time": "wall time of the run, s (differs from run to run)",
}
DEFAULT_METRICS = ["energy_drift", "constraint_violation", "newton_mean", "steps_done"]
GRIDS = ("linspace", "logspace", "geomspace")
STUDIES = tuple(_core._study_names())
DRAWS = ("uniform", "normal", "integers", "choice")


def _fail(where: str, message: str):
    raise _core.InputError(f"{where}: {message}")


def load_spec(spec, where: str = "<sweep>") -> dict:
    """A sweep file (path) or dict, checked: unknown keys, axes and metrics, and parameter
    paths that the base scene does not have are errors naming the field."""
    return _load_spec(spec, where)[0]


def _load_spec(spec, where: str = "<sweep>") -> tuple[dict, dict]:
    """load_spec's spec, and the files it was read from: {"sweep": path, "scene": path},
    each when there is one."""
    base_dir, sweep_file, files = Path("."), None, {}
    if isinstance(spec, (str, os.PathLike)):
        where = str(spec)
        sweep_file = Path(spec)
        base_dir = sweep_file.parent
        files["sweep"] = sweep_file
        try:
            spec = json.loads(Path(spec).read_text())
        except OSError as e:
            _fail(where, f"cannot read: {e.strerror}")
        except json.JSONDecodeError as e:
            _fail(where, f"not JSON: line {e.lineno}, column {e.colno}: {e.msg}")
    if not isinstance(spec, dict):
        _fail(where, "expected a JSON object")
    spec = copy.deepcopy(spec)
    if "study" in spec:
        return _load_study(spec, where), files
    known = {"description", "scene", "scene_file", "parameters", "draws", "seed", "metrics",
             "reference", "plots"}
    for key in spec:
        if key not in known:
            _fail(where, f"unknown field {key!r} (expected one of {sorted(known)})")
    scene = spec.get("scene")
    if sweep_file is not None and "scene_file" not in spec:
        spec["scene_file"] = str(sweep_file.resolve())
    if isinstance(scene, str):
        path = base_dir / scene
        spec["scene_file"] = str(path.resolve())
        files["scene"] = path
        try:
            scene = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            _fail(f"{where}: field 'scene'", f"cannot read {path}: {e}")
    if not isinstance(scene, dict):
        _fail(where, "field 'scene': expected a scene (object) or a scene file's path")
    if not isinstance(spec.get("scene_file", ""), str):
        _fail(where, "field 'scene_file': expected a path")
    spec["scene"] = scene
    params = spec.setdefault("parameters", {})
    if not isinstance(params, dict):
        _fail(where, "field 'parameters': expected an object {path: axis}")
    for path, axis in params.items():
        field = f"{where}: field 'parameters.{path}'"
        if not path.startswith(STATE_PREFIX):
            _lookup(scene, path, field)
        if isinstance(axis, list):
            if not axis:
                _fail(field, "an empty list of values")
            continue
        if not (isinstance(axis, dict) and len(axis) == 1):
            _fail(field, f"expected a list of values or one of {GRIDS + DRAWS}")
        kind, args = next(iter(axis.items()))
        if kind not in GRIDS + DRAWS:
            _fail(field, f"unknown axis {kind!r} (expected a list or one of {GRIDS + DRAWS})")
        if kind == "choice":
            if not (isinstance(args, list) and args):
                _fail(field, "choice: expected a non-empty list")
            continue
        want = 3 if kind in GRIDS else 2
        if not (isinstance(args, list) and len(args) == want and
                all(isinstance(a, (int, float)) and math.isfinite(a) for a in args)):
            _fail(field, f"{kind}: expected {want} finite numbers")
    draws = spec.setdefault("draws", 1)
    if not (isinstance(draws, int) and draws >= 1):
        _fail(where, "field 'draws': expected an integer >= 1")
    if draws > 1 and not any(_is_draw(a) for a in params.values()):
        _fail(where, "field 'draws': more than one draw needs a random axis")
    seed = spec.setdefault("seed", 0)
    if not (isinstance(seed, int) and seed >= 0):
        _fail(where, "field 'seed': expected an integer >= 0")
    metrics = spec.setdefault("metrics", list(DEFAULT_METRICS))
    for m in metrics if isinstance(metrics, list) else [None]:
        if m not in METRICS:
            _fail(where, f"field 'metrics': unknown metric {m!r} (expected some of {list(METRICS)})")
    if "final_pose_error" in metrics and "reference" not in spec:
        _fail(where, "metric final_pose_error needs a field 'reference' (scene overrides)")
    for path in spec.get("reference", {}):
        _lookup(scene, path, f"{where}: field 'reference.{path}'")
    spec["plots"] = sweep_plot.check_plots(spec.get("plots", []), params, metrics, where)
    return spec, files


def _load_study(spec: dict, where: str) -> dict:
    known = {"description", "study", "quick"}
    for key in spec:
        if key not in known:
            _fail(where, f"unknown field {key!r} in a study's sweep (expected one of {sorted(known)})")
    if spec["study"] not in STUDIES:
        _fail(where, f"field 'study': unknown study {spec['study']!r} (expected one of {list(STUDIES)})")
    quick = spec.setdefault("quick", False)
    if not isinstance(quick, bool):
        _fail(where, "field 'quick': expected true or false")
    return spec


def named_code(scene: dict) -> list[tuple[str, str, str]]:
    """Where a scene names code, as the C++ readers find it: (field, "module" or "library",
    the path as written) for the "system" object and a tree's "potentials", "forces" and
    "generated_constraints" elements."""
    system = scene.get("system")
    if not isinstance(system, dict):
        return []
    places = [("system", system)]
    for key in ("potentials", "forces", "generated_constraints"):
        elements = system.get(key)
        if isinstance(elements, list):
            places += [(f"system.{key}[{i}]", e) for i, e in enumerate(elements)
                       if isinstance(e, dict)]
    return [(f"{field}.{kind}", kind, str(obj[kind]))
            for field, obj in places for kind in ("module", "library") if kind in obj]


def _check_code(spec: dict, files: dict, where: str, allow_code: bool) -> bool:
    """Whether the sweep's runs may run the code its scene names: allow_code, or every file
    it was read from (_load_spec) in a trusted folder ($MARSDEN_TRUSTED_FOLDERS is read only
    when the scene names code). A scene naming code that may not run is an InputError
    naming the file, the field and how to allow it."""
    code = named_code(spec["scene"])
    if allow_code or not code:
        return allow_code
    if not (files and all(_core._in_trusted_folder(str(f)) for f in files.values())):
        field, kind, written = code[0]
        place = (f"{files['scene']}: field '{field}'" if "scene" in files
                 else f"{where}: field 'scene.{field}'")
        what = "a Python module" if kind == "module" else "a compiled library"
        trusted = (", or add the folder of the sweep file (and of its scene file) to "
                   "$MARSDEN_TRUSTED_FOLDERS") if files else ""
        _fail(place, f"names {what} ('{written}'), code that every run of the sweep would "
                     "run; Marsden runs such code only where its user allows it. If you trust "
                     "this sweep, pass allow_code=True to marsden.sweep.sweep (`marsden sweep "
                     f"--allow-code`){trusted} (docs/reliability.md, \"Trust model\")")
    return True


class PlaintextSchedulerWarning(UserWarning):
    """A sweep reaches a scheduler on another machine without TLS."""


# Schemes of Dask's comms that encrypt.
TLS_SCHEMES = ("tls", "wss")


def scheduler_connection(address: str, security=None):
    """How a sweep reaches the Dask scheduler at ``address``: (address, security,
    warning). security is Dask's Security, from its configuration (distributed.comm.tls.*,
    DASK_DISTRIBUTED__COMM__TLS__...) unless given. With TLS configured (a CA file and a
    client certificate) a tcp:// address becomes tls://, so the connection is encrypted and
    both ends show certificates; a tls:// address without it is an InputError. A plaintext
    connection to a scheduler not on this machine (not a loopback address; names other than
    localhost are not looked up) comes with a warning naming the address. Connects to
    nothing."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.security import Security

    security = Security() if security is None else security
    scheme, location = parse_address(address)
    tls = bool(security.tls_ca_file and security.tls_client_cert)
    if scheme in TLS_SCHEMES:
        if not tls:
            _fail(f"--address {address}",
                  "a TLS address needs Dask's TLS configured: distributed.comm.tls.ca-file and "
                  "distributed.comm.tls.client.cert (and .key) in Dask's configuration "
                  "(docs/sweeps.md)")
        return address, security, None
    if tls and scheme == "tcp":
        return f"tls://{location}", security, None
    host = parse_host_port(location, 0)[0]
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return address, security, None
    return address, security, (
        f"the Dask scheduler at {address} is reached in plaintext: whoever can reach it or "
        "sits on the way can read the runs and their results, and run code on its workers and "
        "in this process; configure Dask's TLS (distributed.comm.tls.ca-file and "
        "distributed.comm.tls.client.cert; docs/reliability.md, \"Trust model\")")


def _is_draw(axis) -> bool:
    return isinstance(axis, dict) and next(iter(axis)) in DRAWS


def _lookup(tree, path: str, field: str):
    node = tree
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            _fail(field, f"the base scene has no {path!r} (no {part!r} there)")
    return node


def _substitute(scene: dict, values: dict) -> dict:
    scene = copy.deepcopy(scene)
    for path, value in values.items():
        if path.startswith(STATE_PREFIX):
            continue
        *parents, last = path.split(".")
        node = scene
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return scene


def _plain(x):
    return x.item() if isinstance(x, np.generic) else x


def runs(spec) -> list[dict]:
    """The sweep's runs in order: each {"index", "key", "parameters"}. The same spec (and
    seed) gives the same list."""
    spec = load_spec(spec)
    if "study" in spec:
        out = []
        for run, method, level in _core._study_rows(spec["study"], spec["quick"]):
            values = {"study": spec["study"], "quick": spec["quick"], "run": run,
                      "method": method, "level": level}
            out.append({"index": len(out), "key": _key(values), "parameters": values})
        return out
    params = spec["parameters"]
    grid_axes, draw_axes = {}, {}
    for path, axis in params.items():
        if isinstance(axis, list):
            grid_axes[path] = axis
        elif next(iter(axis)) in GRIDS:
            kind, (a, b, n) = next(iter(axis.items()))
            grid_axes[path] = [float(v) for v in getattr(np, kind)(a, b, int(n))]
        else:
            draw_axes[path] = axis
    rng = np.random.default_rng(spec["seed"])
    out = []
    for point in itertools.product(*grid_axes.values()):
        for _ in range(spec["draws"]):
            values = dict(zip(grid_axes, point))
            for path, axis in draw_axes.items():
                kind, args = next(iter(axis.items()))
                if kind == "choice":
                    values[path] = args[int(rng.integers(len(args)))]
                else:
                    values[path] = _plain(getattr(rng, kind)(*args))
            values = {path: values[path] for path in params}
            out.append({"index": len(out), "key": _key(values), "parameters": values})
    return out


def _key(values: dict) -> str:
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _final_state(run):
    """The final pose-like part of a run: position and quaternion, q, or a planar pose
    (theta, x, y)."""
    for names in (("position", "quaternion"), ("q",), ("pose",)):
        if all(n in run.arrays for n in names):
            return np.concatenate([run[n][-1].ravel() for n in names])
    return run.values[-1, 1:]


def _system(scene, values: dict):
    """The scene's system, its initial state's entries named by "state.NAME" paths replaced
    through System.set_state (every family; InputError for an unknown name)."""
    system = _core.make_system(scene)
    entries = {p[len(STATE_PREFIX):]: v for p, v in values.items() if p.startswith(STATE_PREFIX)}
    if entries:
        names = system.state_names
        x = system.state
        for name, value in entries.items():
            if name not in names:
                raise _core.InputError(f"parameter 'state.{name}': the system's state has no "
                                       f"entry {name!r} (it has {names})")
            x[names.index(name)] = value
        system.set_state(x)
    return system


def run_one(spec: dict, run: dict, allow_code: bool = False) -> dict:
    """One run of the sweep as a row: its parameters, status ("ok", "failed": the run
    stopped early, "error": it could not run), error and metrics. Never raises for a bad
    run; runs on Dask workers. allow_code lets the scene's code run (parse_scene)."""
    from .trajectory import simulate  # on a worker: the package's own module

    row = {"index": run["index"], "key": run["key"]}
    row.update({f"p:{k}": v for k, v in run["parameters"].items()})
    row.update({"status": "error", "error": ""})
    if "study" in spec:
        p = run["parameters"]
        try:
            row.update(_core._study_row(p["study"], p["quick"], p["run"], p["method"], p["level"]))
            row["status"] = "ok"
        except Exception as e:  # a row with its error, never the end of the sweep
            row["error"] = f"{type(e).__name__}: {e}"
        return row
    row.update({m: math.nan for m in spec["metrics"]})
    try:
        scene_dict = _substitute(spec["scene"], run["parameters"])
        # Named by its file, so that its relative paths are found beside it.
        label = spec.get("scene_file", f"run {run['index']}")
        scene = _core.parse_scene(json.dumps(scene_dict), label, allow_code=allow_code)
        start = time.perf_counter()
        result = simulate(_system(scene, run["parameters"]), scene.dt, scene.steps,
                          output_every=scene.output_every,
                          on_failure=scene.on_failure, max_subdivisions=scene.max_subdivisions)
        elapsed = time.perf_counter() - start
        s = result.summary
        values = {
            "energy_drift": s["energy"]["relative_drift"],
            "energy_drift_abs": s["energy"]["max_abs_drift"],
            "momentum_drift": s.get("momentum", {}).get("relative_drift", math.nan),
            "constraint_violation": s.get("constraint_violation_max", math.nan),
            "newton_mean": s["newton_iterations"]["mean"],
            "steps_done": float(s["steps_done"]),
            "solve_time": elapsed,
        }
        if "final_pose_error" in spec["metrics"]:
            ref_dict = _substitute(scene_dict, spec["reference"])
            ref_scene = _core.parse_scene(json.dumps(ref_dict), label, allow_code=allow_code)
            ref = simulate(_system(ref_scene, run["parameters"]), ref_scene.dt, ref_scene.steps,
                           output_every=ref_scene.steps)
            values["final_pose_error"] = (
                float(np.linalg.norm(_final_state(result) - _final_state(ref)))
                if result.ok and ref.ok else math.nan)
        for m in spec["metrics"]:
            row[m] = float(values[m])
        row["status"] = "ok" if result.ok else "failed"
        row["error"] = "" if result.ok else s["message"]
    except Exception as e:  # a row with its error, never the end of the sweep
        row["error"] = f"{type(e).__name__}: {e}"
    return row


def _read_table(path: Path):
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist() if path.exists() else []


def _write_table(rows: list[dict], out: Path):
    """results.parquet and results.csv, each written beside and renamed when complete."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rows = sorted(rows, key=lambda r: r["index"])
    columns = []
    for r in rows:
        columns += [c for c in r if c not in columns]
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
    for name, write in (("results.parquet", pq.write_table), ("results.csv", pacsv.write_csv)):
        tmp = out / f".{name}.partial"
        write(table, tmp)
        os.replace(tmp, out / name)
    return table


_ROW_FIELDS = ("index", "key", "status", "error")


def study_claims(spec, rows: list[dict]) -> dict:
    """The claims of a study sweep from its table's rows (all of them, status "ok"), by the
    experiment's claims function: {"study", "quick", "all_claims_hold", "claims": [{id,
    statement, source, measured, expected, holds}], "notes", "parameters"}."""
    spec = load_spec(spec)
    if "study" not in spec:
        _fail("study_claims", "the sweep names no study")
    not_ok = [r["index"] for r in rows if r["status"] != "ok"]
    if not_ok:
        _fail("study_claims", f"{len(not_ok)} rows not ok (first: index {not_ok[0]})")
    table = [(r["p:run"], r["p:method"], r["p:level"],
              {c: v for c, v in r.items() if c not in _ROW_FIELDS and not c.startswith("p:")})
             for r in rows]
    result = _core._study_claims(spec["study"], spec["quick"], table)
    claims = result["claims"]
    return {"study": spec["study"], "quick": spec["quick"],
            "all_claims_hold": all(c["holds"] for c in claims), "claims": claims,
            "notes": result["notes"],
            "parameters": {k: json.loads(v) for k, v in result["parameters"].items()}}


class _Bar:
    """A progress line on standard error: done / total, errors, elapsed time."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.start, self.last = total, enabled, time.monotonic(), 0.0

    def update(self, done: int, errors: int, force: bool = False):
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < 0.5):
            return
        self.last = now
        width = 30
        filled = width * done // max(self.total, 1)
        sys.stderr.write(f"\rsweep [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total}"
                         f" runs, {errors} not ok, {now - self.start:.1f} s")
        if force:
            sys.stderr.write("\n")
        sys.stderr.flush()


def sweep(spec, out, *, address: str | None = None, workers: int | None = None,
          progress: bool | None = None, save_every: float = 5.0, allow_code: bool = False):
    """Runs a sweep (a sweep file's path or a dict, see the module's doc) into the folder
    ``out``: results.parquet and results.csv, one row per run (index, key, the parameters
    as "p:PATH", status, error, metrics), rewritten every ``save_every`` seconds and at the
    end, each under its final name only when complete. Runs already in out's table (by
    key) are skipped. ``address`` ("tcp://HOST:PORT") uses a running Dask cluster; without
    it a LocalCluster on 127.0.0.1 with ``workers`` processes (default: one per core) runs
    the sweep; a scheduler by address is reached as scheduler_connection says (TLS when
    configured, a PlaintextSchedulerWarning for a plaintext one on another machine). A
    scene that names code runs it only with allow_code=True or from trusted folders (the
    module's doc). A study's sweep (see the module's doc) also writes claims.json once every
    row is in the table and ok. Returns the table (pyarrow.Table)."""
    from dask.distributed import Client, LocalCluster, as_completed

    where = str(spec) if isinstance(spec, (str, os.PathLike)) else "<sweep>"
    spec, files = _load_spec(spec)
    allowed = "study" not in spec and _check_code(spec, files, where, allow_code)
    security = None
    if address is not None:
        address, security, warning = scheduler_connection(address)
        if warning:
            warnings.warn(warning, PlaintextSchedulerWarning, stacklevel=2)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(json.dumps(spec, indent=2))
    (out / "claims.json").unlink(missing_ok=True)  # written again when every row is ok
    todo_all = runs(spec)
    done_rows = {r["key"]: r for r in _read_table(out / "results.parquet")}
    todo = [r for r in todo_all if r["key"] not in done_rows]
    rows = list(done_rows.values())
    bar = _Bar(len(todo_all), sys.stderr.isatty() if progress is None else progress)
    cluster = None
    if address is None:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, host="127.0.0.1", dashboard_address=None)
    try:
        with Client(address or cluster, timeout="30s", security=security) as client:
            # The key of a task is the run's: the scheduler runs each once, resubmitting
            # it elsewhere when a worker dies.
            futures = [client.submit(run_one, spec, r, allowed, key=f"marsden-run-{r['key']}",
                                     pure=False, retries=2)
                       for r in todo]
            last_save = time.monotonic()
            not_ok = sum(r["status"] != "ok" for r in rows)
            for future in as_completed(futures):
                row = future.result()
                rows.append(row)
                not_ok += row["status"] != "ok"
                future.release()
                bar.update(len(rows), not_ok)
                if time.monotonic() - last_save > save_every:
                    _write_table(rows, out)
                    last_save = time.monotonic()
    except KeyboardInterrupt:
        # Ctrl-C reaches the cluster's processes too; their shutdown logs (lost tasks,
        # closed comms) say nothing the user needs.
        logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
        raise
    finally:
        table = _write_table(rows, out)
        if cluster is not None:
            cluster.close()
    bar.update(len(rows), sum(r["status"] != "ok" for r in rows), force=True)
    sweep_plot.plot_all(spec, out)
    if "study" in spec and len(rows) == len(todo_all) and all(r["status"] == "ok" for r in rows):
        claims = study_claims(spec, rows)
        tmp = out / ".claims.json.partial"
        tmp.write_text(json.dumps(claims, indent=2))
        os.replace(tmp, out / "claims.json")
    return table


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="marsden sweep", description=__doc__.splitlines()[0])
    parser.add_argument("sweep", help="the sweep file (JSON)")
    parser.add_argument("--out", required=True, help="folder of results.parquet and results.csv")
    parser.add_argument("--address", help="a running Dask scheduler, tcp://HOST:PORT")
    parser.add_argument("--workers", type=int, help="LocalCluster worker processes (default: cores)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--allow-code", action="store_true",
                        help="run the code (Python module, compiled library) the scene names")
    args = parser.parse_args(argv)

    def show_warning(message, category, filename, lineno, file=None, line=None):
        print(f"marsden sweep: warning: {message}", file=sys.stderr)

    warnings.showwarning = show_warning

    def stop(signum, frame):
        raise KeyboardInterrupt

    # SIGTERM as Ctrl-C: the table of the runs done is written before the command ends.
    signal.signal(signal.SIGTERM, stop)
    try:
        table = sweep(args.sweep, args.out, address=args.address, workers=args.workers,
                      progress=args.progress, allow_code=args.allow_code)
    except _core.InputError as e:
        print(f"marsden sweep: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        done = len(_read_table(Path(args.out) / "results.parquet"))
        print(f"marsden sweep: interrupted with {done} runs in {args.out}/results.parquet; "
              "run the same command again to resume", file=sys.stderr)
        return 130
    statuses = table.column("status").to_pylist()
    print(f"{len(statuses)} runs: {statuses.count('ok')} ok, {statuses.count('failed')} failed, "
          f"{statuses.count('error')} errors; {args.out}/results.parquet, results.csv")
    claims_file = Path(args.out) / "claims.json"
    if "study" in load_spec(args.sweep):
        if not claims_file.exists():
            print("no claims: some rows are not ok (see the table's error column)")
            return 1
        claims = json.loads(claims_file.read_text())
        for c in claims["claims"]:
            print(f"{'holds' if c['holds'] else 'FAILS'}  {c['id']}: {c['measured']}")
        print(f"claims: {claims_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
