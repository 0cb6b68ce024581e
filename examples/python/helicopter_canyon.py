"""The helicopter canyon of the vehicles paper (Fig. 12) solved from Python: DMOC with
Ipopt, then the optimum re-simulated by the scene that marsden.run_problem writes.
Usage: python examples/python/helicopter_canyon.py [OUT_DIR]"""

import pathlib
import sys

import numpy as np

import marsden

root = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "out/helicopter_canyon")

problem = marsden.load_problem(root / "examples" / "problems" / "helicopter_canyon.json")
print(f"{problem.name}: {problem.num_variables} variables, {problem.num_constraints} "
      f"constraints, {problem.steps} steps")
solution = problem.solve()
print(f"{solution['status']}: cost {solution['cost']:.4f} in {solution['iterations']} "
      f"iterations, {solution['solve_time_s']:.2f} s; re-simulation error "
      f"{solution['resimulation_error']:.1e}")

states = solution["states"]
xyz = states["values"][:, [states["columns"].index(c) for c in ("x", "y", "z")]]
print("final position [m]:", np.round(xyz[-1], 6))

# The same run as `marsden optimize`: its files, and a scene that re-simulates the optimum.
summary = marsden.run_problem(problem, out)
scene = marsden.load_scene(out / "resimulate.json")
run = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps)
print("re-simulated final position [m]:", np.round(run["position"][-1], 6),
      f"(difference {np.abs(run['position'][-1] - xyz[-1]).max():.1e} m)")
