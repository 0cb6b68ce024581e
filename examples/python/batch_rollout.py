"""Spins 16 rigid bodies about their middle axis, each a little faster, as one batch over
two C++ threads (marsden.rollout), and prints how far each tips over: the middle axis is
unstable, so every body flips over (the tennis-racket effect), while the variational
integrator keeps its energy. Twin of examples/consumer/batch_rollout.cpp.
Usage: python examples/python/batch_rollout.py [OUT_DIR]  (writes batch_rollout.png if
matplotlib is installed)."""

import pathlib
import sys

import numpy as np

import marsden

ROOT = pathlib.Path(__file__).resolve().parents[2]
scene = marsden.load_scene(ROOT / "examples" / "scenes" / "rigid_body.json")
print(marsden.initial_state_names(scene))  # x, y, z, qw, qx, qy, qz, wx, wy, wz, vx, vy, vz
spins = 1.0 + 0.1 * np.arange(16)
states = np.tile([0, 0, 0, 1, 0, 0, 0, 0.01, 0.0, 0.01, 0, 0, 0], (16, 1))
states[:, 8] = spins  # about the middle axis (y), rad/s, with a small wobble
batch = marsden.rollout(scene, states, threads=2)  # the GIL is released while it runs
q = batch["quaternion"]  # (runs, rows, 4): qw, qx, qy, qz
# The angle between the body's y axis and the world's: cos = R(q)_yy = 1 - 2 (qx^2 + qz^2).
tilt = np.degrees(np.arccos(np.clip(1 - 2 * (q[:, :, 1] ** 2 + q[:, :, 3] ** 2), -1, 1)))
for spin, angle, summary in zip(spins, tilt.max(axis=1), batch.summaries):
    print(f"spin {spin:.1f} rad/s: middle axis tipped by up to {angle:5.1f} deg, relative "
          f"energy drift {summary['energy']['relative_drift']:.1e}")

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
t = batch["t"][0]
for spin, angle in zip(spins[::3], tilt[::3]):
    plt.plot(t, angle, label=f"{spin:.1f} rad/s")
plt.xlabel("t (s)")
plt.ylabel("middle axis tilt (deg)")
plt.legend()
out.mkdir(parents=True, exist_ok=True)
plt.savefig(out / "batch_rollout.png", dpi=100)
