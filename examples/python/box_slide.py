"""A box slides on the ground with Coulomb friction and stops where the closed form says.

Hard contact in maximal coordinates (docs/contact.md): the 0.5 m box of
examples/urdf/box.urdf, its collision box against the ground with mu = 0.25, starts resting
on a face at v = (4, 0.8, 0) m/s. Friction decelerates it at mu g along its heading, so it
stops after |v|^2 / (2 mu g) = 3.392457 m on the heading atan(0.8 / 4); the step's error is
first order in dt. Twin of examples/consumer/box_slide.cpp.

    python examples/python/box_slide.py
"""

import math
from pathlib import Path

import marsden

ROOT = Path(__file__).resolve().parents[2]
MU, V0, G = 0.25, (4.0, 0.8, 0.0), 9.81


def main() -> int:
    box = marsden.maximal.mechanism_from_urdf(ROOT / "examples" / "urdf" / "box.urdf",
                                              floating_base=True)
    system = marsden.maximal.system(
        box, shapes=[{"body": "box", "type": "box", "half_extents": (0.25, 0.25, 0.25),
                      "friction": MU}],
        surfaces=[{"normal": (0, 0, 1), "point": (0, 0, 0)}])
    x = system.state
    names = system.state_names
    x[names.index("box_z")] = 0.25  # resting on a face
    for axis, v in zip("xyz", V0):
        x[names.index(f"box_v{axis}")] = v
    system.set_state(x.tolist())
    run = marsden.simulate(system, dt=0.01, steps=200)
    if not run.ok:
        print(run.summary["message"])
        return 1
    dx, dy = run["box_x"][-1], run["box_y"][-1]
    exact = (V0[0] ** 2 + V0[1] ** 2) / (2 * MU * G)
    distance, heading = math.hypot(dx, dy), math.atan2(dy, dx)
    print(f"stopped after {distance:.6f} m (closed form {exact:.6f} m, "
          f"{abs(distance - exact) / exact:.2%} off at dt = 0.01 s); heading "
          f"{math.degrees(heading):.9f} deg (closed form "
          f"{math.degrees(math.atan2(V0[1], V0[0])):.9f})")
    return 0 if abs(distance - exact) < 0.01 * exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
