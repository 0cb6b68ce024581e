"""Mechanisms in maximal coordinates (maximal-coordinates paper): every body with six
degrees of freedom, joints as constraints, the linear-time variational integrator.

    from marsden import maximal
    chain = maximal.pendulum_chain(20)                   # joints joint0 .. joint19
    system = maximal.system(chain, inputs=["joint0"], controls=Signal.constant([0.5]),
                            dampers={"joint3": 0.1}, qd={"joint0": 1.0}, dt=0.002)

Units: m, kg, rad, N m; the world's z axis points up.
"""

from __future__ import annotations

import os

import numpy as np

from ._core import Signal, System
from ._core import maximal as _maximal
from .signals import as_signal
from ._pickle import recorded

__all__ = ["Mechanism", "car", "chaplygin_sleigh", "closed_chain", "four_bar_chain",
           "joint_coordinates", "mechanism_from_mjcf", "mechanism_from_urdf", "minitaur_leg",
           "pendulum_chain", "rolling_disk", "snakeboard", "system", "trailer_train"]

Mechanism = _maximal.Mechanism
joint_coordinates = _maximal.joint_coordinates


@recorded
def pendulum_chain(n: int, joint: str = "revolute", link_length: float = 1.0,
                   link_mass: float = 1.0, initial_angle: float = 0.5) -> Mechanism:
    """n links (m, kg) hanging from the world, joints joint0..; the first at initial_angle
    (rad)."""
    return _maximal.pendulum_chain(n, joint, link_length, link_mass, initial_angle)


@recorded
def closed_chain(n: int, joint: str = "revolute") -> Mechanism:
    """n links closing a regular (n + 1)-gon with the world."""
    return _maximal.closed_chain(n, joint)


@recorded
def four_bar_chain(k: int, tilt: float = 0.3, gravity=(0.0, 0.0, -9.81)) -> Mechanism:
    """k stacked parallelogram four-bar segments (redundant loop constraints)."""
    return _maximal.four_bar_chain(k, tilt, np.asarray(gravity, dtype=float))


@recorded
def minitaur_leg(hip_half_angle: float = 0.5) -> Mechanism:
    """The five-bar leg of the paper's Minitaur example."""
    return _maximal.minitaur_leg(hip_half_angle)


@recorded
def chaplygin_sleigh(mass: float = 1.0, inertia: float = 0.1,
                     skate_offset: float = 0.5) -> Mechanism:
    """The Chaplygin sleigh (kg, kg m^2, m): a body on the ground through the planar joint
    "plane" (coordinates x, y, heading), with a skate at skate_offset along its body x axis
    that cannot slide along body y, a velocity constraint (docs/maximal.md)."""
    return _maximal.chaplygin_sleigh(mass, inertia, skate_offset)


@recorded
def rolling_disk(mass: float = 1.0, radius: float = 0.5) -> Mechanism:
    """The vertical rolling disk (kg, m): a uniform disk on a massless fork (planar joint
    "plane", hinge "axle") rolling without slip on z = 0 (docs/maximal.md)."""
    return _maximal.rolling_disk(mass, radius)


@recorded
def trailer_train(trailers: int, steering: float = 0.0) -> Mechanism:
    """A tractor pulling ``trailers`` trailers (bodies 1 m long, 1 kg), each on a vertical
    hinge "hitch<i>" behind the body ahead and on an axle that cannot slide sideways; the
    tractor on the planar joint "plane", its front axle (the body "steered_axle") on the
    prescribed hinge "steering" at ``steering`` (rad; held, or moved by ``system``'s
    ``kinematic``). A step costs O(trailers) (docs/maximal.md)."""
    return _maximal.trailer_train(trailers, steering)


@recorded
def car(mass: float = 1.0, wheel_inertia: float = 0.1, body_inertia: float = 0.2,
        wheel_radius: float = 0.3, axle_distance: float = 1.0, steering: float = 0.0,
        steering_inertia: float = 0.0) -> Mechanism:
    """The car of Kelly and Murray (kg, kg m^2, kg m^2, m, m, rad, kg m^2), as the
    full-coordinate car: the chassis (all the mass, yaw inertia body_inertia about the rear
    axle) on the planar joint "plane" (x, y, heading); the massless rear wheel on the hinge
    "axle", rolling without slip (its input is the drive torque, N m); the front wheel set
    axle_distance ahead, turned by steering (|steering| < pi/2) on the joint "steering" with a
    skate. The steering is a hinge about z: with steering_inertia 0 prescribed (held, or
    moved by ``system``'s ``kinematic``); above 0 (below body_inertia) free, its input a
    steering torque (N m)."""
    return _maximal.car(mass, wheel_inertia, body_inertia, wheel_radius, axle_distance,
                        steering, steering_inertia)


@recorded
def snakeboard(mass: float = 1.0, half_length: float = 0.5, rotor_inertia: float = 0.1,
               wheel_inertia: float = 0.05) -> Mechanism:
    """The snakeboard (kg, m, kg m^2, kg m^2), as the full-coordinate snakeboard: the board
    (all the mass) on the planar joint "plane"; the rotor on the hinge "rotor" at the centre;
    wheel sets with skates at -half_length (hinge "steering", angle phi) and +half_length
    (hinge "steering_front", coupled to -phi). The inputs of "rotor" and "steering" are the
    rotor and steering torques (N m). Needs mass half_length^2 > rotor_inertia + 2
    wheel_inertia: m l^2 is the whole yaw inertia."""
    return _maximal.snakeboard(mass, half_length, rotor_inertia, wheel_inertia)


def mechanism_from_urdf(path, gravity=(0.0, 0.0, -9.81), floating_base: bool = False,
                        weld_massless_joints: bool = False) -> Mechanism:
    """A URDF file in maximal coordinates (docs/urdf.md), at its zero configuration: one body
    per group of links welded by fixed joints; the root's group fixed to the world or, with
    floating_base, free. A joint that moves no mass is an error, or with
    weld_massless_joints a fixed joint."""
    return _mechanism_from_urdf(os.path.abspath(path), tuple(float(g) for g in gravity),
                                bool(floating_base), bool(weld_massless_joints))


@recorded
def _mechanism_from_urdf(path: str, gravity: tuple, floating_base: bool,
                         weld_massless_joints: bool) -> Mechanism:
    return _maximal.mechanism_from_urdf(path, np.asarray(gravity, dtype=float), floating_base,
                                        weld_massless_joints)


def mechanism_from_mjcf(path, weld_massless_joints: bool = False) -> Mechanism:
    """An MJCF file in maximal coordinates (docs/mjcf.md), gravity from its <option>, at the
    file's pose with the root at the world origin; a <freejoint> root is a free body. Its
    <motor>s are the attribute ``motors``, (joint, gear, lower, upper) in file order, which
    ``system`` takes as the inputs. Armature and joint stiffness are an error (no maximal
    form yet)."""
    return _mechanism_from_mjcf(os.path.abspath(path), bool(weld_massless_joints))


@recorded
def _mechanism_from_mjcf(path: str, weld_massless_joints: bool) -> Mechanism:
    return _maximal.mechanism_from_mjcf(path, weld_massless_joints)


def _coordinates(values: dict | None) -> dict:
    out = {}
    for name, v in (values or {}).items():
        out[name] = [float(x) for x in v] if hasattr(v, "__len__") else [float(v)]
    return out


def system(mechanism: Mechanism, *, inputs=(), controls: Signal | None = None,
           springs: dict | None = None, dampers: dict | None = None, q: dict | None = None,
           qd: dict | None = None, dt: float = 0.01, solver: str = "sparse",
           tolerance: float = 1e-10, limits: dict | None = None, shapes=(),
           surfaces=(), velocity_constraints=(), kinematic: dict | None = None) -> System:
    """The system of a mechanism.

    ``inputs``: names of revolute or prismatic joints whose generalised force (N m or N) is
    a component of ``controls``, in order. A mechanism from ``mechanism_from_mjcf`` with
    <motor>s takes them as its inputs instead (leave ``inputs`` out): control i gives its
    joint the force gear * u_i, u_i clamped to the motor's ctrlrange, as a scene does. ``springs``: {joint: stiffness} or {joint:
    (stiffness, rest)} (N m/rad or N/m; rad or m); ``dampers``: {joint: damping}.
    ``q``, ``qd``: initial joint coordinates and rates {joint: value, or a list for joints
    with several}, over the mechanism's own; the rates become the discrete velocities of an
    interval of ``dt`` (s), so give the step you will simulate with; loops are projected
    onto their constraints. ``solver``: "sparse" (the linear-time block LDU) or "dense".

    Contact and limits (docs/contact.md): ``limits``: {joint: (lower, upper)} on revolute or
    prismatic joints (rad or m; None for no bound on a side). ``shapes``: collision shapes,
    each a dict {"body": name, "type": "sphere" | "capsule" | "box", "radius",
    "half_length" (capsule), "half_extents" (box, 3 numbers), "position" (in the body,
    default the centre of mass), "friction", "restitution"}; ``surfaces``: half-spaces of the
    environment, each {"normal" (default up), "point" (on the plane, default the origin),
    "friction", "restitution"}; a pair's friction and restitution (in [0, 1], 0: plastic) are
    the larger of its two. Restitution above 0 times each impact inside the step and needs a
    body without joints.

    Nonholonomic constraints (docs/maximal.md): ``velocity_constraints``, added to the
    mechanism's own, each a dict {"name", "body": name, "type": "skate" | "rolling_wheel" |
    "rolling_ball", "point" (body frame, m), "axis" (body frame: a skate's blocked direction,
    a wheel's axle), "radius" (m, wheel and ball), "ground_normal" (world, default up)}.

    Prescribed joints (docs/maximal.md): ``kinematic``: {joint: signal}, each a revolute or
    prismatic joint whose coordinate follows its initial value plus the 1-component signal
    (rad or m; as ``controls``, a Signal, a constant or (times, values)); each step imposes
    the path's value at its end, and the output column NAME_drive is the force that drove
    it (N m or N). The built-in car's and trailer train's "steering" are prescribed already
    and held without one.
    """
    sp = {}
    for name, value in (springs or {}).items():
        stiffness, rest = (value, 0.0) if not hasattr(value, "__len__") else value
        sp[name] = (float(stiffness), float(rest))
    bounds = {name: (-np.inf if lo is None else float(lo), np.inf if hi is None else float(hi))
              for name, (lo, hi) in (limits or {}).items()}
    return _maximal.make_system(mechanism, list(inputs), as_signal(controls), sp,
                                {k: float(v) for k, v in (dampers or {}).items()},
                                _coordinates(q), _coordinates(qd), float(dt), solver,
                                float(tolerance), bounds, [_shape(s) for s in shapes],
                                [_surface(s) for s in surfaces],
                                [_velocity_constraint(c) for c in velocity_constraints],
                                {str(k): as_signal(v) for k, v in (kinematic or {}).items()},
                                list(getattr(mechanism, "motors", [])))


def _shape(shape: dict) -> tuple:
    kind = shape.get("type", "sphere")
    sizes = {"sphere": lambda: [shape["radius"]],
             "capsule": lambda: [shape["radius"], shape["half_length"]],
             "box": lambda: list(shape["half_extents"])}.get(kind, lambda: [])()
    return (str(shape["body"]), str(kind), [float(x) for x in sizes],
            [float(x) for x in shape.get("position", (0.0, 0.0, 0.0))],
            float(shape.get("friction", 0.0)), float(shape.get("restitution", 0.0)))


def _surface(surface: dict) -> tuple:
    return ([float(x) for x in surface.get("normal", (0.0, 0.0, 1.0))],
            [float(x) for x in surface.get("point", (0.0, 0.0, 0.0))],
            float(surface.get("friction", 0.0)), float(surface.get("restitution", 0.0)))


def _velocity_constraint(c: dict) -> tuple:
    return (str(c.get("name", "")), str(c["body"]), str(c.get("type", "skate")),
            [float(x) for x in c.get("point", (0.0, 0.0, 0.0))],
            [float(x) for x in c.get("axis", (0.0, 1.0, 0.0))], float(c.get("radius", 0.0)),
            [float(x) for x in c.get("ground_normal", (0.0, 0.0, 1.0))])
