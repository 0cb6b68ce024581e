"""Tree systems (tree paper): models built frame by frame, as in trep, or taken from the
built-in zoo and URDF files, and their systems.

    from marsden import tree
    b = tree.Builder()
    b.frame("link1", "world", "rx", "theta1")                  # driven by coordinate theta1
    b.frame("mass1", "link1", "tz", value=-1.0, mass=1.0)      # fixed offset, point mass
    b.frame("link2", "mass1", "rx", "theta2")
    b.frame("mass2", "link2", "tz", value=-1.0, mass=1.0)
    b.damper("theta2", 0.1)
    b.force_input("theta2")
    model = b.build()
    system = tree.system(model, q0={"theta1": 0.5}, controls=marsden.Signal.constant([0.2]))

Potentials, forces and constraints of your own, written as CasADi expressions and
compiled, come from ``marsden.symbolic.TreePotential``, ``TreeForce`` and
``TreeConstraint`` (``Builder.potential``, ``Builder.force``, ``Builder.constraint``,
``with_potentials``, ``with_forces``, ``with_constraints``).

Units: m, rad, kg, kg m^2, N, N m; the world's z axis points up (gravity (0, 0, -9.81) by
default).
"""

from __future__ import annotations

import os

import numpy as np
from numpy.typing import ArrayLike

from ._core import tree as _tree
from ._core import Signal, System
from .signals import as_signal
from ._pickle import recorded

__all__ = ["Builder", "Model", "continuous_dynamics", "four_bar", "four_bar_state",
           "lagrangian_terms", "marionette", "marionette_configuration", "model_from_mjcf",
           "model_from_urdf",
           "n_link_pendulum", "system", "with_constraints", "with_forces", "with_potentials"]

Model = _tree.Model
four_bar_state = _tree.four_bar_state
marionette_configuration = _tree.marionette_configuration


@recorded
def n_link_pendulum(n: int, length: float = 1.0, mass: float = 1.0,
                    damping: float = 0.0) -> Model:
    """The planar chain of the tree paper's Fig. 3: coordinates q1..qn (rad), point masses
    (kg) at the links' ends (m), hanging along -z."""
    return _tree.n_link_pendulum(n, length, mass, damping)


@recorded
def four_bar() -> Model:
    """The crank-rocker four-bar linkage (coordinates crank, coupler, rocker)."""
    return _tree.four_bar()


@recorded
def marionette() -> Model:
    """The marionette of the tree paper §VIII (15 prescribed string coordinates)."""
    return _tree.marionette()


def model_from_urdf(path, gravity=(0.0, 0.0, -9.81), floating_base: bool = False,
                    weld_massless_joints: bool = False) -> Model:
    """A URDF file as a tree model (docs/urdf.md): one coordinate per moving joint, named as
    the joint; with floating_base six more for the root (ROOT_x, _y, _z, _yaw, _pitch,
    _roll: world position and Z-Y-X Euler angles). A joint that moves no mass is an error,
    or with weld_massless_joints a fixed joint (no coordinate)."""
    return _model_from_urdf(os.path.abspath(path), tuple(float(g) for g in gravity),
                            bool(floating_base), bool(weld_massless_joints))


@recorded
def _model_from_urdf(path: str, gravity: tuple, floating_base: bool,
                     weld_massless_joints: bool) -> Model:
    return _tree.model_from_urdf(path, np.asarray(gravity, dtype=float), floating_base,
                                 weld_massless_joints)
def model_from_mjcf(path, weld_massless_joints: bool = False) -> Model:
    """An MJCF file as a tree model (docs/mjcf.md), gravity from its <option>: one
    coordinate per hinge or slide joint, named as the joint, zero at the file's pose
    (MuJoCo's qpos0); a <freejoint> root adds six (ROOT_x, _y, _z, _yaw, _pitch, _roll)
    from the root's pose in the file. Armature and joint springs are the model's."""
    return _model_from_mjcf(os.path.abspath(path), bool(weld_massless_joints))


@recorded
def _model_from_mjcf(path: str, weld_massless_joints: bool) -> Model:
    return _tree.model_from_mjcf(path, weld_massless_joints)


lagrangian_terms = _tree.lagrangian_terms
continuous_dynamics = _tree.continuous_dynamics

_PRIMITIVES = ("tx", "ty", "tz", "rx", "ry", "rz")


class Builder:
    """Builds a tree model frame by frame; each call checks its arguments and raises
    ``InputError`` naming the frame, coordinate or value. Frames are added parent first;
    the parent ``"world"`` is the fixed world frame."""

    def __init__(self, gravity: ArrayLike = (0.0, 0.0, -9.81)) -> None:
        self._b = _tree.ModelBuilder()
        self._b.set_gravity(np.asarray(gravity, dtype=float))
        # The calls made, which the model's pickle repeats (_replay_builder).
        self._gravity = tuple(float(g) for g in gravity)
        self._calls = []

    def __getattribute__(self, name):
        attribute = object.__getattribute__(self, name)
        if name.startswith("_") or name == "build" or not callable(attribute):
            return attribute

        def call(*args, **kwargs):
            result = attribute(*args, **kwargs)
            object.__getattribute__(self, "_calls").append((name, args, kwargs))
            return result

        return call

    def _frame(self, name: str) -> int:
        return -1 if name == "world" else self._b.frame_index(name)

    def _coord(self, name: str) -> int:
        return self._b.coord_index(name)

    def frame(self, name: str, parent: str = "world", type: str = "const",
              coordinate: str | None = None, *, value: float = 0.0, prescribed: bool = False,
              translation=(0.0, 0.0, 0.0), rotation=None, mass: float | None = None,
              com=(0.0, 0.0, 0.0), inertia=None) -> str:
        """Adds a frame under ``parent``.

        ``type`` is a primitive ``"tx" "ty" "tz"`` (translation along the parent's axis,
        m) or ``"rx" "ry" "rz"`` (rotation about it, rad), driven by a new ``coordinate``
        (prescribed: its motion is an input, trep's kinematic coordinate) or fixed at
        ``value`` when no coordinate is given; or ``"const"``, a constant transform
        (``translation`` (3,), ``rotation`` a 3x3 rotation matrix). ``mass`` (kg) puts a
        rigid body on the frame: centre of mass ``com`` (3,) in the frame, ``inertia``
        (3x3, or the 3 principal moments; default zero: a point mass) about it.
        Returns the frame's name.
        """
        p = self._frame(parent)
        if type == "const":
            if coordinate is not None:
                raise ValueError(f"frame {name!r}: a const frame has no coordinate")
            g = np.eye(4)
            g[:3, 3] = np.asarray(translation, dtype=float)
            if rotation is not None:
                g[:3, :3] = np.asarray(rotation, dtype=float)
            index = self._b.add_const_frame(name, p, g)
        elif type in _PRIMITIVES:
            if coordinate is None:
                index = self._b.add_fixed_frame(name, p, type, float(value))
            else:
                index = self._b.add_joint_frame(name, p, type, coordinate, bool(prescribed))
        else:
            raise ValueError(f"frame {name!r}: type must be one of {_PRIMITIVES + ('const',)}, "
                             f"got {type!r}")
        if mass is not None:
            J = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
            if J.shape == (3,):
                J = np.diag(J)
            self._b.add_mass(index, float(mass), np.asarray(com, dtype=float), J)
        return name

    def spring(self, coordinate: str, stiffness: float, rest: float = 0.0) -> None:
        """A linear spring on a coordinate (N/m or N m/rad; rest in m or rad)."""
        self._b.add_coordinate_spring(self._coord(coordinate), stiffness, rest)

    def frame_spring(self, frame_a: str, frame_b: str, stiffness: float,
                     rest_length: float = 0.0) -> None:
        """A spring between two frames' origins (N/m, m)."""
        self._b.add_frame_spring(self._frame(frame_a), self._frame(frame_b), stiffness,
                                 rest_length)

    def potential(self, potential) -> None:
        """A potential compiled by ``marsden.symbolic.TreePotential`` (or the path of its
        library), over the coordinates it names; they must exist by now."""
        self._b.add_generated_potential(str(getattr(potential, "library", potential)))

    def force(self, force) -> None:
        """A generalized force compiled by ``marsden.symbolic.TreeForce`` (or the path of its
        library), over the coordinates it names; they must exist by now."""
        self._b.add_generated_force(str(getattr(force, "library", force)))

    def constraint(self, constraint) -> None:
        """A holonomic constraint compiled by ``marsden.symbolic.TreeConstraint`` (or the
        path of its library), over the coordinates it names; they must exist by now."""
        self._b.add_generated_constraint(str(getattr(constraint, "library", constraint)))

    def damper(self, coordinate: str, damping: float) -> None:
        """A viscous damper on a coordinate (N s/m or N m s/rad)."""
        self._b.add_coordinate_damper(self._coord(coordinate), damping)

    def frame_damper(self, frame_a: str, frame_b: str, damping: float) -> None:
        """A damper between two frames' origins (N s/m)."""
        self._b.add_frame_damper(self._frame(frame_a), self._frame(frame_b), damping)

    def force_input(self, coordinate: str) -> int:
        """A generalised force on a coordinate (N or N m) as one entry of the controls;
        returns its index in the controls vector."""
        return self._b.add_coordinate_force_input(self._coord(coordinate))

    def wrench_input(self, frame: str, body_axes: bool = True) -> int:
        """A wrench (torque, force) at a frame's origin, in its axes or the world's: six
        entries of the controls; returns the first one's index."""
        return self._b.add_wrench_input(self._frame(frame), body_axes)

    def limits(self, coordinate: str, lower: float, upper: float) -> None:
        """Records joint limits (not enforced by the dynamics)."""
        self._b.set_limits(self._coord(coordinate), lower, upper)

    def distance_constraint(self, name: str, frame_a: str, frame_b: str,
                            distance: float) -> None:
        """|p_a - p_b| = distance (m) between two frames' origins."""
        self._b.add_distance_constraint(name, self._frame(frame_a), self._frame(frame_b),
                                        distance)

    def point_on_plane_constraint(self, name: str, frame: str, plane_frame: str,
                                  normal) -> None:
        """Frame's origin on the plane through plane_frame's origin with normal (3,) in
        plane_frame's axes."""
        self._b.add_point_on_plane_constraint(name, self._frame(frame), self._frame(plane_frame),
                                              np.asarray(normal, dtype=float))

    def point_to_point_constraint(self, name: str, frame_a: str, frame_b: str) -> None:
        """Two frames' origins coincide (3 rows)."""
        self._b.add_point_to_point_constraint(name, self._frame(frame_a), self._frame(frame_b))

    def build(self) -> Model:
        """Validates the model and returns it; the builder is left empty."""
        model = self._b.build()
        model._recipe = ("marsden.tree._replay_builder", (self._gravity, self._calls), {})
        self._calls = []
        return model


def _replay_builder(gravity, calls) -> Model:
    """The model a Builder made with these calls (a built model's recipe)."""
    builder = Builder(gravity)
    for name, args, kwargs in calls:
        getattr(builder, name)(*args, **kwargs)
    return builder.build()


@recorded
def with_potentials(model: Model, *potentials) -> Model:
    """A copy of ``model`` (built-in, URDF or built) with potentials compiled by
    ``marsden.symbolic.TreePotential`` (or their libraries' paths) added."""
    return _tree.with_generated_potentials(
        model, [str(getattr(p, "library", p)) for p in potentials])


@recorded
def with_forces(model: Model, *forces) -> Model:
    """A copy of ``model`` with generalized forces compiled by ``marsden.symbolic.TreeForce``
    (or their libraries' paths) added."""
    return _tree.with_generated_forces(model, [str(getattr(f, "library", f)) for f in forces])


@recorded
def with_constraints(model: Model, *constraints) -> Model:
    """A copy of ``model`` with holonomic constraints compiled by
    ``marsden.symbolic.TreeConstraint`` (or their libraries' paths) added."""
    return _tree.with_generated_constraints(
        model, [str(getattr(c, "library", c)) for c in constraints])


def _vector(model: Model, values, name: str) -> np.ndarray:
    n = len(model.coordinates)
    if values is None:
        return np.zeros(n)
    if isinstance(values, dict):
        out = np.zeros(n)
        for key, v in values.items():
            if key not in model.coordinates:
                raise ValueError(f"{name}: no coordinate named {key!r}; the model has "
                                 f"{model.coordinates}")
            out[model.coordinates.index(key)] = float(v)
        return out
    out = np.asarray(values, dtype=float)
    if out.shape != (n,):
        raise ValueError(f"{name}: expected {n} values (one per coordinate), got shape "
                         f"{out.shape}")
    return out


def system(model: Model, q0=None, qd0=None, *, method: str = "midpoint",
           controls: Signal | None = None, prescribed: dict | None = None,
           alpha: float = 0.5, tolerance: float = 1e-10, stages: int = 2,
           quadrature: str = "lobatto") -> System:
    """The system of a tree model at (q0, qd0): each a dict {coordinate: value} (others
    zero) or an array in ``model.coordinates`` order (rad or m; rad/s or m/s).

    ``method`` is ``"midpoint"`` (the variational integrator, quadrature point ``alpha``,
    Newton ``tolerance``), ``"galerkin"`` (the variational integrator of order
    2 ``stages`` with ``quadrature`` ``"lobatto"`` or ``"gauss"``, 2 ``stages`` - 1 with
    ``"radau"``, Newton ``tolerance``; no
    prescribed coordinates) or ``"rk4"``. ``controls`` has one component per input;
    ``prescribed`` maps a prescribed coordinate's name to a 1-component signal of its
    displacement from q0 (others are held at q0). Signals may be Signals, callables f(t),
    constant vectors or (times, values) (marsden.as_signal).
    """
    signals = []
    for name in model.prescribed:
        signals.append((prescribed or {}).get(name))
    unknown = set(prescribed or {}) - set(model.prescribed)
    if unknown:
        raise ValueError(f"prescribed: {sorted(unknown)} are not prescribed coordinates; "
                         f"the model's are {model.prescribed}")
    if any(s is None for s in signals):
        signals = [s if s is not None else Signal.constant([0.0]) for s in signals]
    signals = [as_signal(s) for s in signals]
    return _tree.make_system(model, _vector(model, q0, "q0"), _vector(model, qd0, "qd0"),
                             method, as_signal(controls), signals, alpha, tolerance, stages,
                             quadrature)
