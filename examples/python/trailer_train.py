"""A tractor pulls ten trailers round a circle and each settles on its closed-form
off-tracking radius.

Nonholonomic constraints in maximal coordinates (docs/maximal.md): every body rides on an
axle that cannot slide sideways, each trailer hangs on a hinge from the body ahead, and the
tractor's front axle is steered at 0.2 rad, so its rear axle runs on a circle of radius
R0 = 0.5 / tan(0.2) m; trailer i's axle settles on sqrt(R0^2 - 0.4 i) (its hitch 0.3 m
behind the axle ahead, 0.7 m ahead of its own). Twin of examples/consumer/trailer_train.cpp.

    python examples/python/trailer_train.py
"""

import math

import numpy as np

import marsden

TRAILERS, STEERING, DT = 10, 0.2, 0.01


def axle(run: marsden.Trajectory, body: str) -> tuple[np.ndarray, float]:
    """The body's axle, 0.2 m behind its centre, in the plane, and its heading (rad), at the
    run's last row."""
    heading = 2 * math.atan2(float(run[f"{body}_qz"][-1]), float(run[f"{body}_qw"][-1]))
    return np.array([run[f"{body}_x"][-1] - 0.2 * math.cos(heading),
                     run[f"{body}_y"][-1] - 0.2 * math.sin(heading)]), heading


def main() -> int:
    r0 = 0.5 / math.tan(STEERING)
    train = marsden.maximal.trailer_train(TRAILERS, STEERING)
    # Rolling at 1 m/s onto the circle: the tractor's planar joint's rates (x, y, heading).
    system = marsden.maximal.system(train, qd={"plane": [1.0, 0.0, 1.0 / r0]}, dt=DT)
    run = marsden.simulate(system, dt=DT, steps=4000)
    if not run.ok:
        print(run.summary["message"])
        return 1
    rear, heading = axle(run, "tractor")
    centre = rear + r0 * np.array([-math.sin(heading), math.cos(heading)])
    worst = 0.0
    for i in range(1, TRAILERS + 1):
        radius = float(np.linalg.norm(axle(run, f"trailer{i}")[0] - centre))
        exact = math.sqrt(r0 * r0 - 0.4 * i)
        print(f"trailer {i:2d}: axle on radius {radius:.6f} m (closed form {exact:.6f})")
        worst = max(worst, abs(radius - exact))
    return 0 if worst < 1e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
