"""A double pendulum built frame by frame in Python, as in trep, simulated by the midpoint
variational integrator and by RK4 over 60 s: the VI's energy error stays bounded, RK4's
grows. Usage: python examples/python/pendulum.py [OUT_DIR]  (writes pendulum.png if
matplotlib is installed)."""

import pathlib
import sys

import numpy as np

import marsden
from marsden import tree

b = tree.Builder()                                        # gravity (0, 0, -9.81) m/s^2
b.frame("upper", "world", "rx", "theta1")                 # hinge about x, angle theta1 (rad)
b.frame("elbow", "upper", "tz", value=-1.0, mass=1.0)     # 1 m down, 1 kg point mass
b.frame("lower", "elbow", "rx", "theta2")
b.frame("tip", "lower", "tz", value=-1.0, mass=1.0)
model = b.build()

q0 = {"theta1": 1.2, "theta2": -0.6}
runs = {}
for method in ("midpoint", "rk4"):
    system = tree.system(model, q0=q0, method=method)
    runs[method] = marsden.simulate(system, dt=0.05, steps=1200)
    drift = runs[method].summary["energy"]["max_abs_drift"]
    print(f"{method:8s}: energy drift over 60 s {drift:.2e} J")

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(6, 3.5))
for method, run in runs.items():
    energy = run["energy"]
    ax.plot(run.t, energy - energy[0], label=method)
ax.set_xlabel("t [s]")
ax.set_ylabel("E - E0 [J]")
ax.legend()
fig.tight_layout()
fig.savefig(out / "pendulum.png", dpi=120)
print("wrote", out / "pendulum.png")
