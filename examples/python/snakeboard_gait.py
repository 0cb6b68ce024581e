"""The snakeboard drive gait (vehicles §5.2.2) from the scene file, with a plot of the
path the board takes as it builds up speed from rest. Usage:
python examples/python/snakeboard_gait.py [OUT_DIR]  (writes snakeboard_gait.png if
matplotlib is installed)."""

import pathlib
import sys

import numpy as np

import marsden

root = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")

scene = marsden.load_scene(root / "examples" / "scenes" / "snakeboard_gait.json")
system = marsden.make_system(scene)
run = marsden.simulate(system, dt=scene.dt, steps=scene.steps, output_every=5)
speed = np.hypot(run["v1"], run["v2"])
print(f"{len(run)} rows; after {run.t[-1]:.1f} s the board is at "
      f"({run['x'][-1]:.2f}, {run['y'][-1]:.2f}) m, speed {speed[-1]:.2f} m/s; "
      f"max constraint violation {run.summary['constraint_violation_max']:.1e}")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, (ax_path, ax_speed) = plt.subplots(1, 2, figsize=(9, 3.5))
ax_path.plot(run["x"], run["y"])
ax_path.set_aspect("equal")
ax_path.set_xlabel("x [m]")
ax_path.set_ylabel("y [m]")
ax_speed.plot(run.t, speed)
ax_speed.set_xlabel("t [s]")
ax_speed.set_ylabel("speed [m/s]")
fig.tight_layout()
fig.savefig(out / "snakeboard_gait.png", dpi=120)
print("wrote", out / "snakeboard_gait.png")
