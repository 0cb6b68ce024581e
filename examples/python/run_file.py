"""The Python twin of `marsden simulate` and `marsden optimize` for every scene and problem
file in examples/: runs one file and writes what the command writes. Usage:
python examples/python/run_file.py FILE.json OUT_DIR [--allow-code]
(--allow-code: the file may run the Python module or library it names, as with the
command; the own_*.json files need it, docs/reliability.md "Trust model")"""

import json
import pathlib
import sys

import marsden

path, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
allow_code = "--allow-code" in sys.argv[3:]
spec = json.loads(path.read_text())
if "steps" in spec and "final_state" in spec:          # a problem file (docs/dmoc.md)
    problem = marsden.load_problem(path, allow_code=allow_code)
    summary = marsden.run_problem(problem, out)
    print(f"{problem.name}: {summary['message']}; cost {summary['cost']:.6g}, "
          f"re-simulation error {summary['resimulation_error']:.2e}")
else:                                                   # a scene file (docs/scene.md)
    scene = marsden.load_scene(path, allow_code=allow_code)
    summary = marsden.run_scene(scene, out)
    print(f"{scene.system_type}: {summary['steps_done']} of {summary['steps_requested']} "
          f"steps, energy drift {summary['energy']['max_abs_drift']:.3e} J")
sys.exit(0 if summary["ok"] else 3)
