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
import math
import os
import re
import sys
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent
# At most this many frames go into a page (the run is decimated evenly past it), so that
# a 10-s run at 100 frames per second of 20 bodies stays under 3 MB.
MAX_FRAMES = 1001
# Default shapes of the planar vehicles (m): box of the chassis or board.
_PLANAR_BODY = {"car": [1.0, 0.5, 0.25], "snakeboard": [0.8, 0.25, 0.06],
                "sleigh": [0.6, 0.3, 0.1], "generated": [0.6, 0.3, 0.1]}


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


# --- URDF meshes: triangles (n, 3, 3) as base64 float32, 48 bytes of page per triangle.

def _read_stl(data: bytes, path: Path) -> np.ndarray:
    if len(data) >= 84:
        n = int.from_bytes(data[80:84], "little")
        if len(data) == 84 + 50 * n:  # binary: its size is exact (ASCII files may say "solid" too)
            record = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attribute", "<u2")])
            return np.frombuffer(data, dtype=record, count=n, offset=84)["v"].astype(float)
    text = data.decode("ascii", "replace")
    if not text.lstrip().startswith("solid"):
        raise ViewError(f"{path}: neither a binary STL (its size does not match its triangle count) "
                        "nor an ASCII STL (no 'solid')")
    v = np.array(re.findall(r"\bvertex\s+(\S+)\s+(\S+)\s+(\S+)", text), dtype=float)
    if v.shape[0] % 3:
        raise ViewError(f"{path}: {v.shape[0]} vertices, not whole triangles")
    return v.reshape(-1, 3, 3)


def _read_obj(text: str, path: Path) -> np.ndarray:
    """Vertices and faces (polygons fanned into triangles; 1-based or negative indices,
    texture and normal indices ignored)."""
    vertices, faces = [], []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if words[0] == "v":
            if len(words) < 4:
                raise ViewError(f"{path}: line {number}: a vertex needs 3 coordinates")
            vertices.append([float(x) for x in words[1:4]])
        elif words[0] == "f":
            face = []
            for w in words[1:]:
                i = int(w.split("/")[0])
                k = i - 1 if i > 0 else len(vertices) + i
                if i == 0 or not 0 <= k < len(vertices):
                    raise ViewError(f"{path}: line {number}: vertex {i} does not exist "
                                    f"({len(vertices)} so far)")
                face.append(k)
            faces += [(face[0], face[j], face[j + 1]) for j in range(1, len(face) - 1)]
    if not faces:
        return np.zeros((0, 3, 3))
    return np.asarray(vertices, float)[np.asarray(faces)]


def read_mesh(path) -> np.ndarray:
    """The triangles (n, 3, 3) of an STL (binary or ASCII) or OBJ file; ViewError naming the
    file when it cannot be read."""
    path = Path(path)
    try:
        data = path.read_bytes()
        triangles = (_read_obj(data.decode("utf-8", "replace"), path) if path.suffix.lower() == ".obj"
                     else _read_stl(data, path))
    except OSError as e:
        raise ViewError(f"{path}: cannot be read ({e.strerror})") from None
    except ValueError as e:
        if isinstance(e, ViewError):
            raise
        raise ViewError(f"{path}: malformed mesh ({e})") from None
    if not np.all(np.isfinite(triangles)):
        raise ViewError(f"{path}: a vertex is not finite")
    return triangles


def _mesh_geometry(g: dict, warnings: list) -> dict | None:
    """A model.json mesh entry with its triangles inlined, or None (and a warning) when
    the file cannot be drawn."""
    try:
        triangles = read_mesh(g["file"])
    except ViewError as e:
        warnings.append(f"mesh not drawn: {e}")
        return None
    scale = np.abs(np.asarray(g.get("scale", [1, 1, 1]), float))
    out = {k: v for k, v in g.items() if k != "file"}
    if len(triangles):
        lo, hi = triangles.reshape(-1, 3).min(axis=0), triangles.reshape(-1, 3).max(axis=0)
        out["semi_axes"] = list(0.5 * (hi - lo) * scale)
    out["triangles"] = _b64(triangles.reshape(-1))
    return out


# --- Parts that turn with the recorded shape: wheels, steering, rotors.

def _rotation_y(a):
    return [math.cos(a / 2), 0.0, math.sin(a / 2), 0.0]


def _rotation_x(a):
    return [math.cos(a / 2), math.sin(a / 2), 0.0, 0.0]


def _shape(kind, semi_axes, offset=(0, 0, 0), rotation=(1, 0, 0, 0), color=None):
    g = {"shape": kind, "semi_axes": list(semi_axes), "offset": list(offset),
         "rotation": list(rotation), "visual": True}
    if color is not None:
        g["color"] = color
    return g


def _wheel(radius, width):
    """A wheel with its axle along y and a spoke, so that its rolling shows."""
    return [_shape("cylinder", [radius, radius, width / 2], rotation=_rotation_x(math.pi / 2), color=0x333333),
            _shape("box", [0.9 * radius, 0.55 * width, 0.12 * radius], color=0xdddddd)]


def _planar_parts(vehicle: dict, arrays: dict, where: Path):
    """Body geometry, parts and their angle series of a car, snakeboard or sleigh on the
    ground (z up, x forward in the body)."""
    kind = vehicle["type"]
    angles, parts = [], []

    def angle(values):
        angles.append(np.asarray(values, float).reshape(-1))
        return len(angles) - 1

    if kind == "car":
        # Pose at the rear axle; shape (psi, sigma): rear wheel angle, sigma = tan(steering).
        rho, l = float(vehicle["wheel_radius"]), float(vehicle["axle_distance"])
        shape = _array(arrays, vehicle["shape"], where)
        psi, steer = shape[:, 0], np.arctan(shape[:, 1])
        # The front wheels roll faster, by 1/cos(steering): their contact points move at
        # the rear axle's speed over cos(steering).
        mid = 0.5 * (steer[1:] + steer[:-1])
        psi_front = psi[0] + np.concatenate([[0.0], np.cumsum(np.diff(psi) / np.cos(mid))])
        track, width = 0.7 * l, 0.35 * rho
        body = [_shape("box", [0.7 * l, 0.3 * l, 0.12 * l], offset=[0.5 * l, 0, rho + 0.1 * l])]
        spin_rear, spin_front, turn = angle(psi), angle(psi_front), angle(steer)
        for side in (1, -1):
            parts.append({"body": 0, "offset": [0, side * track / 2, rho], "geometry": _wheel(rho, width),
                          "turns": [{"axis": [0, 1, 0], "angle": spin_rear}]})
            parts.append({"body": 0, "offset": [l, side * track / 2, rho], "geometry": _wheel(rho, width),
                          "turns": [{"axis": [0, 0, 1], "angle": turn}, {"axis": [0, 1, 0], "angle": spin_front}]})
    elif kind == "snakeboard":
        # Pose at the centre; shape (psi, phi): rotor angle, steering of the front wheel-set
        # (the back one turns by -phi, vehicles §5.2.2).
        l = float(vehicle["half_length"])
        shape = _array(arrays, vehicle["shape"], where)
        r = 0.08 * l
        body = [_shape("box", [1.15 * l, 0.25 * l, 0.03 * l], offset=[0, 0, 2.2 * r])]
        front, back, rotor = angle(shape[:, 1]), angle(-shape[:, 1]), angle(shape[:, 0])
        for x, turn in ((l, front), (-l, back)):
            axle = [_shape("box", [0.04 * l, 0.3 * l, 0.02 * l], offset=[0, 0, r], color=0x555555)]
            for side in (1, -1):
                axle.append(_shape("cylinder", [r, r, 0.04 * l], offset=[0, side * 0.3 * l, r],
                                   rotation=_rotation_x(math.pi / 2), color=0x333333))
            parts.append({"body": 0, "offset": [x, 0, 0], "geometry": axle,
                          "turns": [{"axis": [0, 0, 1], "angle": turn}]})
        parts.append({"body": 0, "offset": [0, 0, 2.2 * r + 0.03 * l], "turns": [{"axis": [0, 0, 1], "angle": rotor}],
                      "geometry": [_shape("cylinder", [0.35 * l, 0.35 * l, 0.02 * l], offset=[0, 0, 0.03 * l],
                                          rotation=_rotation_x(math.pi / 2), color=0x8d6ab8),
                                   _shape("box", [0.35 * l, 0.04 * l, 0.03 * l], offset=[0, 0, 0.06 * l],
                                          color=0xef8636)]})
    elif kind == "sleigh":
        # Pose at the centre of mass; the knife edge (skate) at a along the body's x.
        a = float(vehicle["skate_offset"])
        h = 0.15 * abs(a)
        body = [_shape("box", [1.5 * abs(a), 0.4 * abs(a), 0.08 * abs(a)], offset=[0, 0, h + 0.08 * abs(a)]),
                _shape("box", [0.3 * abs(a), 0.01 * abs(a), h / 2], offset=[a, 0, h / 2], color=0x222222)]
    elif kind == "generated":
        # A model from marsden.symbolic.RdpVehicle: its parts are unknown, a board at the pose.
        size = _PLANAR_BODY["generated"]
        body = [_shape("box", [x / 2 for x in size], offset=[0, 0, size[2] / 2])]
    else:
        raise ViewError(f"unknown planar vehicle {kind!r}")
    return body, parts, angles


def _chart(arrays: dict) -> list[dict]:
    """The strip chart's series: energy, constraint violation, the contact columns (normal
    force, penetration, complementarity, impacts) where the run has them, and each control."""
    series = []
    for name in ("energy", "constraint_violation", "constraint_residual", "contact_force",
                 "penetration", "complementarity", "impacts"):
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

    bodies, poses, parts, angles, arrows = [], [], [], [], []
    warnings = [str(w) for w in desc.get("warnings", [])]
    try:
        for b in model["bodies"]:
            src = b["pose"]
            if "planar" in src:
                p, q = _planar_pose(_array(arrays, src["planar"], traj_path))
                if "vehicle" in model:
                    geometry, parts, angles = _planar_parts(model["vehicle"], arrays, traj_path)
                else:
                    geometry = [{"shape": "box", "semi_axes": [s / 2 for s in _PLANAR_BODY.get(system, [1, .5, .25])],
                                 "rotation": [1, 0, 0, 0], "offset": [0, 0, _PLANAR_BODY.get(system, [0, 0, .25])[2] / 2]}]
            elif "fixed" in src:
                fixed = np.asarray(src["fixed"], float).reshape(7)
                p, q = np.tile(fixed[:3], (rows, 1)), np.tile(fixed[3:], (rows, 1))
                geometry = b["geometry"]
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
            geometry = [g if g.get("shape") != "mesh" else _mesh_geometry(g, warnings) for g in geometry]
            bodies.append({"name": b["name"], "geometry": [g for g in geometry if g is not None]})
            poses.append(np.concatenate([p, q], axis=1))
        if "rotor" in model:
            parts, angles = _rotor_parts(model["rotor"], bodies[0], arrays, traj_path)
        if "boat" in model:
            arrows = _boat_arrows(model["boat"])
    except ViewError:
        raise
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise ViewError(f"{model_path}: malformed body description ({e!r})") from None

    poses = _hold_finite_poses(np.stack(poses, axis=1) if poses else np.zeros((rows, 0, 7)),
                               [b["name"] for b in bodies], t, warnings)
    data = {"system": system, "title": f"{system}: {run_dir.resolve().name}", "t": t,
            "bodies": bodies, "poses": poses,
            "ground": bool(model.get("ground", False)), "chart": _chart(arrays),
            "parts": parts, "angles": np.stack(angles, axis=1) if angles else np.zeros((rows, 0)),
            "arrows": arrows, "warnings": warnings}
    if frames is not None:
        data["points"] = frames[0]
        data["links"] = [[a, b] for a, b in model.get("links", [])] + \
                        [[a, b] for a, b in model.get("strings", [])]
    if "joints" in model:
        data["joints"] = model["joints"]
    if "environment" in desc:
        data["environment"] = desc["environment"]
    return data


def _hold_finite_poses(poses: np.ndarray, names: list, t: np.ndarray, warnings: list) -> np.ndarray:
    """Poses (rows, bodies, 7) where a body's pose is not finite at some rows (a user's body
    expression singular there) hold its nearest earlier finite pose (the first finite one
    before any), or the origin where it has none; each such body is named in a warning."""
    bad = ~np.isfinite(poses).all(axis=2)
    if not bad.any():
        return poses
    poses = poses.copy()
    for b in np.flatnonzero(bad.any(axis=0)):
        good = np.flatnonzero(~bad[:, b])
        if good.size == 0:
            poses[:, b] = [0, 0, 0, 1, 0, 0, 0]
        else:
            # Index of the last finite row at or before each row (the first one before any).
            last = np.maximum.accumulate(np.where(bad[:, b], -1, np.arange(len(t))))
            poses[:, b] = poses[np.where(last < 0, good[0], last), b]
        first = int(np.flatnonzero(bad[:, b])[0])
        warnings.append(f"body {names[b]!r}: its pose is not finite at {int(bad[:, b].sum())} of "
                        f"{len(t)} rows (first at t = {t[first]:.6g} s); the nearest earlier "
                        "finite pose is shown there")
    return poses


def _rotor_parts(rotor: dict, body: dict, arrays: dict, where: Path):
    """The helicopter's main rotor disc at its hub, tilted by the recorded shape (pitch
    gamma_p, roll gamma_r: the thrust along Ry(gamma_p) Rx(gamma_r) e_z, vehicles §4.3.1),
    and its tail boom and tail rotor."""
    size = max([max(g["semi_axes"]) for g in body["geometry"]] + [0.1])
    r = 2.5 * size
    tilt = _array(arrays, rotor["tilt"], where)
    hub, arm = rotor["hub"], float(rotor["tail_arm"])
    disc = {"body": 0, "offset": hub, "turns": [{"axis": [0, 1, 0], "angle": 0}, {"axis": [1, 0, 0], "angle": 1}],
            "geometry": [dict(_shape("cylinder", [r, r, 0.01 * r], color=0x555555), opacity=0.4),
                         _shape("box", [r, 0.04 * r, 0.02 * r], offset=[0, 0, 0.02 * r], color=0x222222)]}
    boom = {"body": 0, "offset": [0, 0, 0], "turns": [],
            "geometry": [_shape("box", [arm / 2, 0.02 * r, 0.02 * r], offset=[-arm / 2, 0, 0]),
                         _shape("cylinder", [0.15 * r, 0.15 * r, 0.01 * r], offset=[-arm, 0.03 * r, 0],
                                rotation=_rotation_x(math.pi / 2), color=0x555555)]}
    return [disc, boom], [tilt[:, 0], tilt[:, 1]]


def _boat_arrows(boat: dict) -> list[dict]:
    """The wind (N) and the current (m/s) as world arrows beside the boat (the wind above
    it, the current on the water a hull length off), 1 m of arrow per 10 N and per
    0.25 m/s, labelled with their magnitudes."""
    arrows = []
    wind, current = np.asarray(boat["wind_force"], float), np.asarray(boat["current"], float)
    height = float(boat["hull_size"][2])
    if np.linalg.norm(wind) > 0:
        arrows.append({"label": f"wind {np.linalg.norm(wind):.3g} N", "vector": list(wind / np.linalg.norm(wind)),
                       "length": float(np.linalg.norm(wind)) / 10.0, "color": 0x2ca02c,
                       "at": [0, 0, 2.0 * height]})
    if np.linalg.norm(current) > 0:
        arrows.append({"label": f"current {np.linalg.norm(current):.3g} m/s",
                       "vector": list(current / np.linalg.norm(current)),
                       "length": float(np.linalg.norm(current)) / 0.25, "color": 0x1f4e9c,
                       "at": [-float(boat["hull_size"][0]), -float(boat["hull_size"][0]), 0.02],
                       "water": True})
    return arrows


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
    if data.get("parts"):
        payload["parts"] = data["parts"]
        payload["nangles"] = int(data["angles"].shape[1])
        payload["angles"] = _b64(data["angles"][keep])
    for key in ("arrows", "warnings"):
        if data.get(key):
            payload[key] = data[key]
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
        data = scene_data(args.run_dir)
        path = write_page(page(data), args.out if args.out is not None else Path(args.run_dir) / "view.html")
    except ViewError as e:
        print(f"marsden: error: {e}", file=sys.stderr)
        return 2
    for w in data["warnings"]:
        print(f"marsden: warning: {w}", file=sys.stderr)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
