"""The Python twin of examples/consumer/main.cpp: spins a free rigid body with the
variational integrator through the simulation driver and prints how well its spatial
momentum is kept. Usage: python examples/python/consumer.py"""

import sys

import marsden

body = marsden.vehicles.system(
    "rigid_body", inertia={"J": [1.0, 2.0, 3.0], "mass": 1.0},
    # C = dcay^-1: discrete Noether holds exactly; tolerance: what remains is round-off.
    integrator={"method": "vi", "tangent": "exact", "tolerance": 1e-14},
    initial_state={"angular_velocity": [0.1, 2.0, 0.1],  # near the unstable middle axis
                   "linear_velocity": [1.0, 0.0, 0.0]})
run = marsden.simulate(body, dt=0.01, steps=10000, output_every=1000)
if not run.ok:
    sys.exit(run.summary["message"])
drift = run.summary["momentum"]["relative_drift"]
print(f"t = {run.t[-1]:.1f} s, {len(run)} rows, "
      f"max |spatial momentum change| / |momentum| = {drift:.2e}")
sys.exit(0 if drift < 1e-9 else 1)
