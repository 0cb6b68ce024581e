"""Mechanisms in maximal coordinates (maximal-coordinates paper): every body with six
degrees of freedom, joints as constraints, the linear-time variational integrator.

    from marsden import maximal
    chain = maximal.pendulum_chain(20)                   # joints joint0 .. joint19
    system = maximal.system(chain, inputs=["joint0"], controls=Signal.constant([0.5]),
                            dampers={"joint3": 0.1}, qd={"joint0": 1.0}, dt=0.002)

Units: m, kg, rad, N m; the world's z axis points up.
"""

from __future__ import annotations

from ._core import Signal, System
from ._core import maximal as _maximal
from .signals import as_signal

Mechanism = _maximal.Mechanism
pendulum_chain = _maximal.pendulum_chain
closed_chain = _maximal.closed_chain
four_bar_chain = _maximal.four_bar_chain
minitaur_leg = _maximal.minitaur_leg
mechanism_from_urdf = _maximal.mechanism_from_urdf
joint_coordinates = _maximal.joint_coordinates


def _coordinates(values: dict | None) -> dict:
    out = {}
    for name, v in (values or {}).items():
        out[name] = [float(x) for x in v] if hasattr(v, "__len__") else [float(v)]
    return out


def system(mechanism: Mechanism, *, inputs=(), controls: Signal | None = None,
           springs: dict | None = None, dampers: dict | None = None, q: dict | None = None,
           qd: dict | None = None, dt: float = 0.01, solver: str = "sparse",
           tolerance: float = 1e-10) -> System:
    """The system of a mechanism.

    ``inputs``: names of revolute or prismatic joints whose generalised force (N m or N) is
    a component of ``controls``, in order. ``springs``: {joint: stiffness} or {joint:
    (stiffness, rest)} (N m/rad or N/m; rad or m); ``dampers``: {joint: damping}.
    ``q``, ``qd``: initial joint coordinates and rates {joint: value, or a list for joints
    with several}, over the mechanism's own; the rates become the discrete velocities of an
    interval of ``dt`` (s), so give the step you will simulate with; loops are projected
    onto their constraints. ``solver``: "sparse" (the linear-time block LDU) or "dense".
    """
    sp = {}
    for name, value in (springs or {}).items():
        stiffness, rest = (value, 0.0) if not hasattr(value, "__len__") else value
        sp[name] = (float(stiffness), float(rest))
    return _maximal.make_system(mechanism, list(inputs), as_signal(controls), sp,
                                {k: float(v) for k, v in (dampers or {}).items()},
                                _coordinates(q), _coordinates(qd), float(dt), solver,
                                float(tolerance))
