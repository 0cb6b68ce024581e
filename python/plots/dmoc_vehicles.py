"""Figures of the dmoc-vehicles experiment (vehicles paper §6, Figs. 10-12).

Usage: python3 dmoc_vehicles.py OUT_DIR  (reads OUT_DIR/<scenario>/problem.json and
trajectory.npz for each scenario directory present, writes OUT_DIR/dmoc_vehicles.png):
the optimal paths among their obstacles (top views, and a side view of the landing), and the
swing-ups' coordinates and torques against time.
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Circle, Rectangle  # noqa: E402

PANELS = [
    ("helicopter_canyon", "helicopter through the canyon (top view; it climbs over the boulder)"),
    ("helicopter_canyon_dash", "canyon against the clock (free final time)"),
    ("helicopter_landing", "helicopter landing (side view)"),
    ("boat_docking", "boat docking (top view)"),
    ("car_tunnel", "car through the tunnel (top view)"),
    ("car_tunnel_dash", "tunnel against the clock (free final time)"),
    ("acrobot_swing_up", "acrobot swing-up"),
    ("cart_pole_swing_up", "cart-pole swing-up"),
]


def draw_obstacles(ax, problem, axes=(0, 1)):
    """Obstacles projected on the plane of the two given coordinates."""
    for ob in problem.get("obstacles", []):
        kind, margin = ob["type"], ob.get("margin", 0.0)
        if kind in ("sphere", "cylinder"):
            c = [ob["center"][i] for i in axes]
            if kind == "cylinder" and axes != (0, 1):
                continue
            ax.add_patch(Circle(c, ob["radius"], color="0.5", alpha=0.6))
            ax.add_patch(Circle(c, ob["radius"] + margin, fill=False, ls="--", color="0.5"))
        elif kind == "box":
            c = [ob["center"][i] for i in axes]
            h = [ob["half_size"][i] for i in axes]
            ax.add_patch(Rectangle((c[0] - h[0], c[1] - h[1]), 2 * h[0], 2 * h[1],
                                   color="0.5", alpha=0.6))
        elif kind == "capsule":
            a = [ob["a"][i] for i in axes]
            b = [ob["b"][i] for i in axes]
            ax.plot([a[0], b[0]], [a[1], b[1]], color="0.5", lw=4)


def draw_bounds(ax, problem, axes=(0, 1)):
    """Position bounds (walls, floor, ceiling) as dotted lines."""
    pos = problem.get("bounds", {}).get("position")
    if not pos:
        return
    for key in ("lower", "upper"):
        values = pos.get(key, [None] * 3)
        for i, v in zip(axes, (ax.axvline, ax.axhline)):
            if i < len(values) and values[i] is not None:
                v(values[i], color="k", ls=":", lw=1)


def path_panel(ax, problem, z, title, axes=(0, 1)):
    names = ("x", "y", "z")
    u, v = names[axes[0]], names[axes[1]]
    draw_obstacles(ax, problem, axes)
    draw_bounds(ax, problem, axes)
    ax.plot(z[u], z[v], "-", color="C0", lw=1.5, label="optimal path")
    ax.plot(z[u][0], z[v][0], "o", color="C2", label="start")
    ax.plot(z[u][-1], z[v][-1], "s", color="C3", label="end")
    ax.set_xlabel(f"{u} [m]")
    ax.set_ylabel(f"{v} [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")


def swing_panel(ax, z, title):
    coords = [k for k in z.files if k.startswith("q_")]
    for k in coords:
        ax.plot(z["t"], z[k], label=k[2:] + " [rad or m]")
    ax.set_xlabel("t [s]")
    ax.set_title(title, fontsize=10)
    tw = ax.twinx()
    tw.step(z["control_t"], z["control_u_0"], where="post", color="C3", lw=0.8,
            label="input [N m or N]")
    tw.set_ylabel("input")
    ax.legend(fontsize=7, loc="upper left")
    tw.legend(fontsize=7, loc="lower right")


def main(out_dir: Path) -> None:
    present = [(n, t) for n, t in PANELS if (out_dir / n / "trajectory.npz").exists()]
    if not present:
        return
    cols = 3
    rows = (len(present) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.5 * rows), squeeze=False)
    for ax, (name, title) in zip(axes.flat, present):
        problem = json.loads((out_dir / name / "problem.json").read_text())
        summary = json.loads((out_dir / name / "summary.json").read_text())
        with np.load(out_dir / name / "trajectory.npz") as z:
            label = f"{title}\n{summary['status']}, {summary['iterations']} iterations"
            if "final_time" in summary:
                label += f", T = {summary['final_time']:.2f} s"
            if name.endswith("swing_up"):
                swing_panel(ax, z, label)
            elif name == "helicopter_landing":
                path_panel(ax, problem, z, label, axes=(0, 2))
            else:
                path_panel(ax, problem, z, label)
    for ax in list(axes.flat)[len(present):]:
        ax.axis("off")
    fig.suptitle("DMOC: optimal motions of the discrete systems (vehicles §6)")
    fig.tight_layout()
    fig.savefig(out_dir / "dmoc_vehicles.png", dpi=110)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
