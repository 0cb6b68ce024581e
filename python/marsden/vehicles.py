"""Vehicles and nonholonomic systems from Python: the SE(3) vehicles (rigid_body,
helicopter, boat) and the planar nonholonomic ones (car, snakeboard, sleigh), with the
parameters, integrators and initial states of docs/scene.md given as keyword arguments
and validated as a scene file would be (errors name the field).

    from marsden import vehicles, Signal
    heli = vehicles.system("helicopter", initial_state={"position": [0, 0, 5]},
                           controls=Signal.constant([49.05, 0.0]),
                           shape=Signal.constant([0.0, 0.0]))
    board = vehicles.system("snakeboard", actuation="velocity",
                            integrator={"method": "rdp"}, controls=my_callable_signal)
"""

from __future__ import annotations

import json

from ._core import Signal, System, make_system, parse_scene
from .signals import as_signal

__all__ = ["TYPES", "system"]

TYPES = ("rigid_body", "helicopter", "boat", "car", "snakeboard", "sleigh")


def system(type: str, *, integrator: dict | None = None, initial_state: dict | None = None,
           controls: Signal | None = None, shape: Signal | None = None,
           **parameters) -> System:
    """The system of a vehicle ``type`` with its ``parameters`` (the keys of the scene's
    "system" object for that type, SI units: e.g. ``mass``, ``inertia``, ``half_length``),
    the ``integrator`` object (``method``, ``alpha``, ``map``, ``tolerance``, ...), the
    ``initial_state`` object, and input signals (``controls``; ``shape`` for the
    helicopter's rotor tilts). Raises InputError naming the field for anything the scene
    reader would refuse."""
    if type not in TYPES:
        raise ValueError(f"type: expected one of {TYPES}, got {type!r}")
    scene = {"system": {"type": type, **parameters}, "dt": 0.01, "duration": 0.01}
    if integrator is not None:
        scene["integrator"] = integrator
    if initial_state is not None:
        scene["initial_state"] = initial_state
    text = json.dumps(scene)
    return make_system(parse_scene(text, f"vehicles.system({type!r})"),
                       controls=as_signal(controls), shape=as_signal(shape))
