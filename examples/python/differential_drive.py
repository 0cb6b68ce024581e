"""A differential-drive robot written symbolically (marsden.symbolic.rdp.differential_drive,
docs/own-system.md): from rest, the right wheel pushed harder than the left, so it drives
a left-hand curve; then the torques stop and it coasts. Prints the final pose and the
energy error of the coasting part. Usage: python examples/python/differential_drive.py
[OUT_DIR]."""

import sys

import numpy as np

import marsden
from marsden.symbolic import rdp

robot = rdp.differential_drive(d=0.05)  # centre of mass 5 cm ahead of the axle


def torques(t: float) -> list[float]:
    """Wheel torques (left, right), N m: a curve for 2 s, then none."""
    return [0.010, 0.014] if t < 2.0 else [0.0, 0.0]


dt, steps = 0.01, 400
run = marsden.simulate(robot.system(initial_state={"theta": 0.0, "x": 0.0, "y": 0.0},
                                    controls=torques), dt=dt, steps=steps)
theta, x, y = run["pose"][-1]
energy = np.asarray(run["energy"]).reshape(-1)
coast = energy[int(round(2.0 / dt)) + 1:]
print(f"after {steps * dt:.1f} s: theta = {theta:.4f} rad, x = {x:.4f} m, y = {y:.4f} m; "
      f"coasting energy {coast[0]:.4e} J, relative error {np.ptp(coast) / coast[0]:.1e}; "
      f"max constraint violation {np.abs(run['constraint_violation']).max():.1e}")
if len(sys.argv) > 1:
    np.savetxt(f"{sys.argv[1]}/differential_drive_pose.csv", run["pose"], delimiter=",",
               header="theta,x,y", comments="")
