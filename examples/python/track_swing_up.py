"""Follows an optimal swing-up with time-varying LQR (docs/control.md).

DMOC finds the cart-pole's swing-up; its controls re-run from a pole 0.05, 0.1 or 0.2 rad
off miss the top (the open loop). The Riccati gains along the exact step linearisation
bring the pole up (the closed loop, force saturated at 15 N as in the problem). Twin of
examples/consumer/track_swing_up.cpp.

    python examples/python/track_swing_up.py [examples/problems/cart_pole_swing_up.json]
"""

import json
import math
import sys
from pathlib import Path

import numpy as np

import marsden


def main(path: Path) -> int:
    solution = marsden.load_problem(path).solve()
    spec = json.loads(Path(path).read_text())  # the problem's system as a scene
    scene = marsden.parse_scene(json.dumps(
        {"duration": spec["dt"] * spec["steps"],
         **{key: spec[key] for key in ("system", "integrator", "dt", "initial_state")}}))
    held = marsden.HeldInput(1)
    system = marsden.make_system(scene, controls=held)
    nominal = marsden.control.nominal_from_solution(system, held, solution)
    lin = marsden.control.linearize(system, nominal)  # exact: the tree midpoint VI
    Q = np.diag([10.0, 10.0, 1.0, 1.0])  # cart (m), pole (rad), their rates
    gains = marsden.control.tvlqr(lin["A"], lin["B"], Q, [[0.1]], 100.0 * Q)
    tracking = marsden.control.Tracking(system, nominal, gains["K"])
    print(f"DMOC: cost {solution['cost']:.6g}; exact step derivatives: {lin['exact']}")
    ok = solution["ok"]
    for offset in (0.05, 0.1, 0.2):
        x0 = nominal.x[0] + [0.0, offset, 0.0, 0.0]
        open_loop = marsden.control.rollout(system, held, 0.0, nominal.dt, x0, nominal.u)
        feedback = marsden.Feedback(tracking, inputs=1, lower=[-15.0], upper=[15.0])
        closed = marsden.make_system(scene, controls=feedback)
        closed.set_state(x0)
        run = marsden.simulate(closed, nominal.dt, nominal.steps, feedback=feedback)
        error = run["pole"][-1] - math.pi
        print(f"pole {offset:+.2f} rad off: open loop ends at {open_loop.x[-1, 1]:.3f} rad, "
              f"TV-LQR at pi {error:+.1e} rad")
        ok = ok and run.ok and abs(error) < 0.02
    return 0 if ok else 1


if __name__ == "__main__":
    problem = Path(__file__).resolve().parents[1] / "problems" / "cart_pole_swing_up.json"
    sys.exit(main(Path(next((a for a in sys.argv[1:] if a.endswith(".json")), problem))))
