"""Your own vehicle from its physics (docs/own-system.md): a quadrotor in wind written as
CasADi expressions, compiled and loaded by marsden.symbolic, simulated, flown through a
window by DMOC, re-simulated and viewed.
Usage: python examples/python/own_quadrotor.py [OUT_DIR]"""

import pathlib
import sys

import casadi as ca
import numpy as np

import marsden
from marsden import symbolic as sym

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "out/own_quadrotor")

m, arm, drag = 1.2, 0.25, 0.016                   # kg, m, N m per N of thrust
F = np.zeros((6, 4))                              # rotor i: thrust u_i along body z at r_i
for i, (x, y) in enumerate([(arm, 0), (0, arm), (-arm, 0), (0, -arm)]):
    F[:, i] = [y, -x, drag * (-1) ** i, 0, 0, 1]  # torque r_i x e_z + spin drag; force e_z
v_air = sym.v - sym.R.T @ ca.DM([2.0, -1.0, 0.0])  # body velocity relative to a 2 m/s wind
quad = sym.HolonomicVehicle(
    "quadrotor", mass=m, J=[0.012, 0.014, 0.022], control_matrix=F,
    potential=m * 9.81 * sym.p[2],                # gravity, J
    external_wrench=ca.vertcat(-0.002 * sym.omega, -0.3 * v_air))  # (torque, force)
print(f"compiled {quad.library.name}" if quad.compiled else "from the cache")

hover = [m * 9.81 / 4] * 4
system = quad.system(initial_state={"position": [0, 0, 2]},  # thrusts +-0.05 N at 0.5 Hz
                     controls=marsden.Signal.sinusoid(hover, [0.05] * 4, [0.5] * 4))
run = marsden.simulate(system, dt=0.01, steps=300)
print("drifted in the wind to", np.round(run["position"][-1], 3))

bars = [([5, -1, 1], [5, 1, 1]), ([5, -1, 3], [5, 1, 3]), ([5, -1, 1], [5, -1, 3]),
        ([5, 1, 1], [5, 1, 3])]                   # a window in the plane x = 5
problem = quad.problem({
    "dt": 0.1, "steps": 40,
    "initial_state": {"position": [0, -1, 1.5]},
    "final_state": {"position": [10, 1, 2.5], "at_rest": True},
    "bounds": {"controls": {"lower": [0] * 4, "upper": [8] * 4},
               "position": {"lower": [-2, -1.5, 0.5], "upper": [12, 1.5, 3.5]}},
    "cost": {"control_weights": [1] * 4, "control_reference": hover},
    "obstacles": [{"type": "capsule", "a": a, "b": b, "radius": 0.3, "margin": 0.1}
                  for a, b in bars],
    "initial_guess": {"waypoints": [[5, 0, 2]], "controls": hover}})
summary = marsden.run_problem(problem, out)       # solves; writes trajectory, resimulate.json
print(f"{summary['message']}: cost {summary['cost']:.3f}, re-simulation error "
      f"{summary['resimulation_error']:.1e}, clearance {summary['min_clearance']:.3f} m")
# The re-simulation names the quadrotor's library: this program's own code, allowed.
flight = marsden.run_scene(marsden.load_scene(out / "resimulate.json", allow_code=True),
                           out / "flight")
print("re-simulated:", flight["status"], "player:", marsden.view(out / "flight").path)
