"""Plots of a sweep's table (docs/sweeps.md): a metric against a parameter, one series per
value of another column (a method, say), written as PNG files beside the table.

    from marsden.sweep_plot import plot
    plot("out/mc", x="p:initial_state.angular_velocity.1", y="energy_drift",
         by="p:integrator.method", log="y")

A sweep file's "plots" field lists such plots ({"x", "y", "by", "log", "file"}); the sweep
draws them when its table is complete.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from . import _core

PLOT_KEYS = ("x", "y", "by", "log", "file")


def check_plots(plots, parameters: dict, metrics: list, where: str) -> list[dict]:
    """The "plots" field, checked: each names columns the table will have (a parameter, as
    "p:PATH" or PATH, or a metric); returns the plots with parameter names as columns."""
    if not isinstance(plots, list):
        raise _core.InputError(f"{where}: field 'plots': expected a list of objects")
    columns = {f"p:{p}" for p in parameters} | set(metrics)
    out = []
    for i, spec in enumerate(plots):
        field = f"{where}: field 'plots[{i}]'"
        if not isinstance(spec, dict):
            raise _core.InputError(f"{field}: expected an object with x and y")
        for key in spec:
            if key not in PLOT_KEYS:
                raise _core.InputError(f"{field}: unknown field {key!r} (expected {PLOT_KEYS})")
        spec = dict(spec)
        for key in ("x", "y", "by"):
            if key not in spec:
                if key == "by":
                    continue
                raise _core.InputError(f"{field}: missing field {key!r}")
            name = spec[key]
            if isinstance(name, str) and f"p:{name}" in columns:
                name = spec[key] = f"p:{name}"
            if name not in columns:
                raise _core.InputError(f"{field}.{key}: {name!r} is no column of the table "
                                       f"(expected one of {sorted(columns)})")
        if spec.get("log", "") not in ("", "x", "y", "xy"):
            raise _core.InputError(f"{field}.log: expected \"\", \"x\", \"y\" or \"xy\"")
        out.append(spec)
    return out


def _rows(table_or_dir):
    if isinstance(table_or_dir, (str, os.PathLike)):
        import pyarrow.parquet as pq

        path = Path(table_or_dir) / "results.parquet"
        if not path.exists():
            raise _core.InputError(f"{path}: no sweep table here")
        return pq.read_table(path).to_pylist()
    if hasattr(table_or_dir, "to_pylist"):
        return table_or_dir.to_pylist()
    return list(table_or_dir)


def series(rows, x: str, y: str, by: str | None = None) -> dict:
    """The data a plot draws: {group: (xs, ys)} from the rows whose status is ok and whose
    x and y are finite numbers. Where x takes few values (a grid: fewer than half the rows
    of the group), ys are the mean of the runs at each x and the group also has "low" and
    "high" (their min and max); else the runs are drawn as points."""
    groups: dict = {}
    for r in rows:
        if r.get("status") != "ok":
            continue
        xv, yv = r.get(x), r.get(y)
        if not (isinstance(xv, (int, float)) and isinstance(yv, (int, float))
                and math.isfinite(xv) and math.isfinite(yv)):
            continue
        groups.setdefault(r.get(by) if by else "", []).append((float(xv), float(yv)))
    out = {}
    for group, points in sorted(groups.items(), key=lambda kv: str(kv[0])):
        xs = sorted({p[0] for p in points})
        if len(xs) * 2 <= len(points):
            at = {v: [p[1] for p in points if p[0] == v] for v in xs}
            out[group] = {"x": xs, "y": [sum(at[v]) / len(at[v]) for v in xs],
                          "low": [min(at[v]) for v in xs], "high": [max(at[v]) for v in xs]}
        else:
            points.sort()
            out[group] = {"x": [p[0] for p in points], "y": [p[1] for p in points]}
    return out


def plot(table_or_dir, x: str, y: str, by: str | None = None, log: str = "",
         file: str | None = None, out: str | os.PathLike | None = None) -> dict:
    """Draws y against x per value of ``by`` into a PNG (``file``, default "Y_vs_X.png",
    in ``out`` or the sweep folder given as the table), written beside and renamed when
    complete. Returns the series drawn (see series) with the path under "file"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _rows(table_or_dir)
    data = series(rows, x, y, by)
    if not data:
        raise _core.InputError(f"plot {y} against {x}: no run with status ok and finite values")
    folder = Path(out) if out is not None else (
        Path(table_or_dir) if isinstance(table_or_dir, (str, os.PathLike)) else Path("."))
    name = file or f"{y}_vs_{x}".replace(":", "_").replace("/", "_").replace(".", "_") + ".png"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for group, s in data.items():
        label = f"{by.removeprefix('p:')} = {group}" if by else None
        if "low" in s:
            line, = ax.plot(s["x"], s["y"], marker="o", label=label)
            ax.fill_between(s["x"], s["low"], s["high"], color=line.get_color(), alpha=0.2)
        else:
            ax.plot(s["x"], s["y"], ".", label=label)
    ax.set_xlabel(x.removeprefix("p:"))
    ax.set_ylabel(y)
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")
    if by:
        ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.partial.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, folder / name)
    return {"file": str(folder / name), "series": data}


def plot_all(spec: dict, out) -> list[str]:
    """The plots a sweep file asks for, from the table in ``out``; returns their paths."""
    return [plot(out, p["x"], p["y"], p.get("by"), p.get("log", ""), p.get("file"))["file"]
            for p in spec.get("plots", [])]
