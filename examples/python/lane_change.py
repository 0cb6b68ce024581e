"""A tractor with five trailers changes lane.

Its front axle's hinge "steering" is a prescribed joint (docs/maximal.md, Prescribed
joints): ``kinematic`` turns it through one period of 0.08 sin(2 pi t / 6) rad while the
train rolls at 2 m/s, then holds it straight. Each step imposes the angle at its end, and
the column steering_drive is the torque that turned the axle. Prints the tractor's sideways
shift, the largest steering torque and, 14 s after the stroke, how far each trailer is from
the line of the tractor's rear axle. Twin of examples/consumer/lane_change.cpp.

    python examples/python/lane_change.py
"""

import math

import numpy as np

import marsden

TRAILERS, DT, STROKE = 5, 0.01, 6.0


def steering(t: float) -> float:
    """The steering angle's path (rad): one sine period, then straight."""
    return 0.08 * math.sin(2 * math.pi * t / STROKE) if t < STROKE else 0.0


def main() -> int:
    train = marsden.maximal.trailer_train(TRAILERS)
    system = marsden.maximal.system(train, qd={"plane": [2.0, 0.0, 0.0]}, dt=DT,
                                    kinematic={"steering": steering})
    run = marsden.simulate(system, dt=DT, steps=2000)
    if not run.ok:
        print(run.summary["message"])
        return 1

    def pose(body: str) -> tuple[np.ndarray, float]:
        heading = 2 * math.atan2(float(run[f"{body}_qz"][-1]), float(run[f"{body}_qw"][-1]))
        return np.array([run[f"{body}_x"][-1], run[f"{body}_y"][-1]]), heading

    centre, heading = pose("tractor")
    along, side = np.array([math.cos(heading), math.sin(heading)]), np.array(
        [-math.sin(heading), math.cos(heading)])
    rear = centre - 0.2 * along
    shift = float(run["tractor_y"][-1])
    torque = float(np.abs(run["steering_drive"]).max())
    print(f"tractor moved {shift:.4f} m sideways; largest steering torque {torque:.3e} N m")
    worst = 0.0
    for i in range(1, TRAILERS + 1):
        c, h = pose(f"trailer{i}")
        off = float((c - 0.2 * np.array([math.cos(h), math.sin(h)]) - rear) @ side)
        print(f"trailer {i}: axle {off:.2e} m off the tractor's line")
        worst = max(worst, abs(off))
    return 0 if shift > 3.0 and worst < 1e-6 else 1


if __name__ == "__main__":
    raise SystemExit(main())
