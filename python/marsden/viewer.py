"""The offline 3-D player: one self-contained HTML page per run (docs/viewer.md).

A run written by ``marsden simulate`` (or ``optimize``) holds ``trajectory.npz`` and
``model.json`` (and a tree's ``frames.npz``): every pose the page draws comes from there.
The page inlines three.js, read at run time from the installed ``meshcat`` package (its
bundled viewer exports ``MeshCat.THREE``), and our player (``viewer_page.html``,
``viewer_player.js``), so it plays from ``file://`` with no network.

This module needs numpy and meshcat only, not the compiled extension, so that the
``marsden`` command can run its ``main``.
"""
from __future__ import annotations

import base64
import html
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent
# At most this many frames go into a page (the run is decimated evenly past it), so that
# a 10-s run at 100 frames per second of 20 bodies stays under 3 MB.
MAX_FRAMES = 1001
# Default shapes of the planar vehicles (m): box of the chassis or board.
_PLANAR_BODY = {"car": [1.0, 0.5, 0.25], "snakeboard": [0.8, 0.25, 0.06],
                "sleigh": [0.6, 0.3, 0.1]}


class ViewError(ValueError):
    """A run folder or trajectory the player cannot show; the message names what and where."""


def three_js() -> str:
    """The three.js bundle of the installed meshcat package (its viewer exports THREE)."""
    spec = importlib.util.find_spec("meshcat")
    if spec is None or not spec.submodule_search_locations:
        raise ViewError("the 3-D player needs the meshcat package for three.js; "
                        "install it with: python -m pip install -r requirements.txt")
    bundle = Path(list(spec.submodule_search_locations)[0]) / "viewer" / "dist" / "main.min.js"
    if not bundle.is_file():
        raise ViewError(f"{bundle}: missing; the meshcat package does not ship its viewer")
    return bundle.read_text(encoding="utf-8")


def _b64(a) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def _load_npz(path: Path) -> dict:
    if not path.is_file():
        raise ViewError(f"{path}: missing")
    try:
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise ViewError(f"{path}: not a readable .npz archive ({e})") from None


def _array(arrays: dict, name: str, where: Path) -> np.ndarray:
    if name not in arrays:
        raise ViewError(f"{where}: no array {name!r} (has {sorted(arrays)})")
    return np.asarray(arrays[name], dtype=float)


def _planar_pose(pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(theta, x, y) rows to positions on the ground and quaternions about z."""
    theta = pose[:, 0]
    position = np.stack([pose[:, 1], pose[:, 2], np.zeros_like(theta)], axis=1)
    quaternion = np.stack([np.cos(theta / 2), 0 * theta, 0 * theta, np.sin(theta / 2)], axis=1)
    return position, quaternion


def _chart(arrays: dict) -> list[dict]:
    """The strip chart's series: energy, constraint violation and each control."""
    series = []
    for name in ("energy", "constraint_violation", "constraint_residual"):
        if name in arrays:
            series.append({"name": name.replace("_", " "), "values": np.asarray(arrays[name], float).reshape(-1)})
    if "controls" in arrays:
        u = np.asarray(arrays["controls"], float)
        u = u.reshape(u.shape[0], int(np.prod(u.shape[1:])))
        for i in range(u.shape[1]):
            series.append({"name": f"u{i}", "values": u[:, i]})
    return series


def scene_data(run_dir) -> dict:
    """What the page plays, from a run folder: times, bodies with their poses, links and
    the strip chart's series. Raises ViewError naming the file and the problem."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ViewError(f"{run_dir}: no such run folder")
    model_path = run_dir / "model.json"
    if not model_path.is_file():
        raise ViewError(f"{model_path}: missing; the player needs the model description that "
                        "`marsden simulate` writes beside trajectory.npz (run it again with this "
                        "version)")
    try:
        desc = json.loads(model_path.read_text(encoding="utf-8"))
        model = desc["model"]
        system = desc["system"]
    except (ValueError, KeyError, TypeError) as e:
        raise ViewError(f"{model_path}: malformed model description ({e!r})") from None
    traj_path = run_dir / desc.get("trajectory", "trajectory.npz")
    arrays = _load_npz(traj_path)
    t = _array(arrays, "t", traj_path).reshape(-1)
    rows = t.shape[0]
    if rows == 0:
        raise ViewError(f"{traj_path}: no rows")
    frames = None
    if "frames_file" in desc:
        fpath = run_dir / desc["frames_file"]
        f = _load_npz(fpath)
        frames = (_array(f, "position", fpath), _array(f, "quaternion", fpath))
        if frames[0].shape[0] != rows:
            raise ViewError(f"{fpath}: {frames[0].shape[0]} rows, {traj_path} has {rows}")

    bodies, poses = [], []
    try:
        for b in model["bodies"]:
            src = b["pose"]
            if "planar" in src:
                p, q = _planar_pose(_array(arrays, src["planar"], traj_path))
                geometry = [{"shape": "box", "semi_axes": [s / 2 for s in _PLANAR_BODY.get(system, [1, .5, .25])],
                             "rotation": [1, 0, 0, 0], "offset": [0, 0, _PLANAR_BODY.get(system, [0, 0, .25])[2] / 2]}]
            elif "frame" in src:
                k = int(src["frame"])
                p, q = frames[0][:, k, :], frames[1][:, k, :]
                geometry = b["geometry"]
            else:
                p = _array(arrays, src["position"], traj_path)
                q = _array(arrays, src["quaternion"], traj_path)
                if "index" in src:
                    p, q = p[:, int(src["index"]), :], q[:, int(src["index"]), :]
                geometry = b["geometry"]
            bodies.append({"name": b["name"], "geometry": geometry})
            poses.append(np.concatenate([p, q], axis=1))
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise ViewError(f"{model_path}: malformed body description ({e!r})") from None

    data = {"system": system, "title": f"{system}: {run_dir.resolve().name}", "t": t,
            "bodies": bodies, "poses": np.stack(poses, axis=1) if poses else np.zeros((rows, 0, 7)),
            "ground": bool(model.get("ground", False)), "chart": _chart(arrays)}
    if frames is not None:
        data["points"] = frames[0]
        data["links"] = [[a, b] for a, b in model.get("links", [])] + \
                        [[a, b] for a, b in model.get("strings", [])]
    if "joints" in model:
        data["joints"] = model["joints"]
    if "environment" in desc:
        data["environment"] = desc["environment"]
    return data


def trajectory_data(trajectory, system: str = "") -> dict:
    """What the page plays from an in-memory ``marsden.Trajectory``: vehicles (position and
    quaternion), planar vehicles (pose) and maximal mechanisms, drawn as boxes."""
    names = trajectory.arrays
    t = np.asarray(trajectory.t, float)
    if "position" in names and "quaternion" in names:
        p, q = np.asarray(trajectory["position"], float), np.asarray(trajectory["quaternion"], float)
        if p.ndim == 2:
            p, q = p[:, None, :], q[:, None, :]
        poses = np.concatenate([p, q], axis=2)
        ground = False
    elif "pose" in names:
        p, q = _planar_pose(np.asarray(trajectory["pose"], float))
        poses = np.concatenate([p, q], axis=1)[:, None, :]
        ground = True
    else:
        raise ViewError("this trajectory has no poses (arrays position and quaternion, or pose); "
                        f"it has {names}. A tree system's frames are written by a run: "
                        "simulate its scene into a folder and call marsden.view(folder)")
    box = {"shape": "box", "semi_axes": [0.15, 0.1, 0.05], "rotation": [1, 0, 0, 0], "offset": [0, 0, 0]}
    arrays = {n: trajectory[n] for n in names}
    return {"system": system or "trajectory", "title": system or "trajectory", "t": t,
            "bodies": [{"name": f"body {i}", "geometry": [box]} for i in range(poses.shape[1])],
            "poses": poses, "ground": ground, "chart": _chart(arrays)}


def page(data: dict) -> str:
    """The self-contained HTML page playing ``data`` (scene_data or trajectory_data)."""
    t = np.asarray(data["t"], float)
    stride = max(1, -(-len(t) // MAX_FRAMES))
    keep = np.arange(0, len(t), stride)
    if keep[-1] != len(t) - 1:
        keep = np.append(keep, len(t) - 1)
    payload = {
        "title": data["title"], "system": data["system"], "frames": int(len(keep)),
        "t": _b64(t[keep]), "bodies": data["bodies"], "poses": _b64(data["poses"][keep]),
        "ground": data["ground"],
        "chart": [{"name": s["name"], "values": _b64(np.asarray(s["values"])[keep])}
                  for s in data["chart"]],
    }
    if "points" in data:
        payload["points"] = _b64(data["points"][keep])
        payload["npoints"] = int(data["points"].shape[1])
        payload["links"] = data["links"]
    if "joints" in data:
        payload["joints"] = data["joints"]
    if "environment" in data:
        payload["environment"] = data["environment"]
    template = (_HERE / "viewer_page.html").read_text(encoding="utf-8")
    player = (_HERE / "viewer_player.js").read_text(encoding="utf-8")
    # "</" never appears inside the inlined scripts' text as a tag end.
    data_js = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
    return (template.replace("@TITLE@", html.escape(data["title"]))
            .replace("@THREE@", script_safe(three_js()))
            .replace("@DATA@", data_js)
            .replace("@PLAYER@", player))


def script_safe(script: str) -> str:
    """A script's text made safe inside <script>: no '</script' can end it early."""
    return script.replace("</script", "<\\/script")


def write_page(text: str, out) -> Path:
    """Writes the page to OUT (through OUT.part, renamed when complete)."""
    out = Path(out)
    if out.parent and not out.parent.is_dir():
        raise ViewError(f"{out.parent}: no such folder for the page")
    part = out.with_name("." + out.name + ".part")
    part.write_text(text, encoding="utf-8")
    os.replace(part, out)
    return out


def view_run(run_dir, out=None) -> Path:
    """Writes RUN_DIR/view.html (or OUT) playing the run; returns its path."""
    out = Path(out) if out is not None else Path(run_dir) / "view.html"
    return write_page(page(scene_data(run_dir)), out)


class Page:
    """A written player page: ``path`` (or None) and its ``html``; shown inline in Jupyter."""

    def __init__(self, html_text: str, path):
        self.html = html_text
        self.path = path

    def _repr_html_(self) -> str:
        return ('<iframe style="width:100%;height:760px;border:0" srcdoc="'
                + html.escape(self.html, quote=True) + '"></iframe>')

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "not written"
        return f"Page({where}, {len(self.html) / 1e6:.2f} MB)"


def view(run, out=None) -> Page:
    """The player of a run folder (``marsden simulate --out DIR``; writes DIR/view.html or
    OUT) or of an in-memory ``marsden.Trajectory`` (written only to OUT). In Jupyter the
    returned page plays inline."""
    if isinstance(run, (str, os.PathLike)):
        text = page(scene_data(run))
        out = Path(out) if out is not None else Path(run) / "view.html"
    elif hasattr(run, "arrays") and hasattr(run, "t"):
        text = page(trajectory_data(run))
    else:
        raise ViewError(f"marsden.view needs a run folder or a Trajectory, not {type(run).__name__}")
    return Page(text, write_page(text, out) if out is not None else None)


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="marsden view",
                                     description="Write one self-contained HTML page playing a run")
    parser.add_argument("run_dir")
    parser.add_argument("--out", default=None, help="the page (default RUN_DIR/view.html)")
    args = parser.parse_args(argv)
    try:
        path = view_run(args.run_dir, args.out)
    except ViewError as e:
        print(f"marsden: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
