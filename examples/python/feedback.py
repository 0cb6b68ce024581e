"""Closes the loop: a linear state feedback holds the cart-pole upright from 0.3 rad off.

The controller pi(t, x) sees the state System.state (cart, pole, qd_cart, qd_pole: m, rad,
m/s, rad/s) at the start of every step; the step holds its value (a zero-order hold) and
the force is saturated at 20 N. The gains place the poles of the linearisation at the
upright at -2, -2.5, -3 and -3.5 1/s. Twin of examples/consumer/feedback.cpp.

    python examples/python/feedback.py [examples/scenes/cart_pole.json]
"""

import math
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

import marsden

GAINS = {"cart": 2.6758, "qd_cart": 4.0647, "pole": -36.466, "qd_pole": -7.5324}


def controller(t: float, x: npt.NDArray[np.float64]) -> float:
    cart, pole, qd_cart, qd_pole = x
    return float(GAINS["cart"] * cart + GAINS["qd_cart"] * qd_cart
                 + GAINS["pole"] * (pole - math.pi) + GAINS["qd_pole"] * qd_pole)


def main(scene_path: Path) -> int:
    scene = marsden.load_scene(scene_path)
    feedback = marsden.Feedback(controller, inputs=1, lower=[-20.0], upper=[20.0])
    system = marsden.make_system(scene, controls=feedback)
    print("state:", ", ".join(system.state_names), "=", system.state)
    run = marsden.simulate(system, scene.dt, scene.steps, feedback=feedback)
    for t in (0.0, 1.0, 2.0, 4.0, scene.duration):
        k = round(t / scene.dt)
        print(f"t = {t:4.1f} s  pole - pi = {run['pole'][k] - math.pi:+.2e} rad  "
              f"cart = {run['cart'][k]:+.3f} m  force = {run['u0'][k]:+7.3f} N")
    error = abs(run["pole"][-1] - math.pi)
    print(f"final |pole - pi| = {error:.1e} rad (the open loop falls over)")
    return 0 if run.ok and error < 1e-3 else 1


if __name__ == "__main__":
    scene = Path(__file__).resolve().parents[1] / "scenes" / "cart_pole.json"
    sys.exit(main(Path(next((a for a in sys.argv[1:] if a.endswith(".json")), scene))))
