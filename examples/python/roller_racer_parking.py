"""Parallel parking the roller racer (marsden.symbolic.rdp.roller_racer, docs/own-system.md).
From rest it cannot park: its nonholonomic momentum p grows as soon as the joint moves
(p_dot = C(phi) u p + D(phi) u^2, D > 0) and rest needs p = 0. Rolling backward (p < 0)
it can stop: DMOC parks it 0.5 m to the side at the same heading. Prints the figures.
Usage: python examples/python/roller_racer_parking.py [OUT_DIR]."""

import sys

import numpy as np

import marsden
from marsden.symbolic import rdp

racer = rdp.roller_racer()

# From rest, a joint swing: the momentum is positive all along.
dt = 0.01
run = marsden.simulate(racer.system(initial_state={}, controls=lambda t: [np.sin(3 * t)]),
                       dt=dt, steps=300)
p = [racer.momentum([run["r0"][k] + 0.5 * dt * run["r0_dot"][k + 1]], [run["r0_dot"][k + 1]],
                    [run["omega"][k + 1], run["v1"][k + 1], run["v2"][k + 1]])[0]
     for k in range(300)]
print(f"from rest, swinging the joint for 3 s: momentum p from {min(p):.2e} to {max(p):.2e}, "
      "never back to 0")

spec = {"dt": 0.1, "steps": 60,
        "initial_state": {"shape": [0.0], "locked_velocity": [-5.0]},  # v1 = -0.5 m/s
        "final_state": {"theta": 0.0, "y": 0.5, "shape": [0.0], "at_rest": True},
        "bounds": {"controls": {"lower": [-5.0], "upper": [5.0]},
                   "shape": {"lower": [-1.2], "upper": [1.2]}},
        "cost": {"control_weights": [1.0]}}
park = racer.problem(spec).solve()
theta, x, y, phi = park["states"]["values"][-1, 1:]
torque = park["controls"]["values"][:, 1]
print(f"reverse parking: {park['status']} in {park['iterations']} Ipopt iterations, "
      f"constraint violation {park['constraint_violation']:.1e}, cost {park['cost']:.4f}, "
      f"re-simulation error {park['resimulation_error']:.1e}, |torque| <= "
      f"{np.abs(torque).max():.3f} N m; at rest at theta = {theta:.1e}, x = {x:.4f}, "
      f"y = {y:.4f}")

from_rest = racer.problem({**spec, "initial_state": {}}).solve()
print(f"the same goal from rest: {from_rest['status']} after {from_rest['iterations']} "
      f"iterations ({from_rest['message']})")
if len(sys.argv) > 1:
    marsden.run_problem(racer.problem(spec), f"{sys.argv[1]}/roller_racer_parking")
