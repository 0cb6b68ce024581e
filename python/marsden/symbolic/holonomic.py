"""Holonomic vehicles on SE(3) and SE(2) (vehicles paper §3.1, §4): l(xi) = 1/2 xi^T I xi -
V(g) and the forced Euler-Poincare equations (vehicles eq. (8)); the C side is
include/marsden/vehicle/generated.hpp. The SE(3) symbols are this module's ``t``, ``R``,
``p``, ``omega``, ``v``; the SE(2) ones are ``se2.theta``, ``se2.x``, ``se2.y`` (``se2.p``),
``se2.omega``, ``se2.v1``, ``se2.v2`` (``se2.v``), ``se2.R`` the 2 x 2 rotation of theta."""

from __future__ import annotations

import ctypes
import json
import re
from types import SimpleNamespace

import numpy as np
import casadi as ca

from .._core import InputError, Problem, System, parse_problem
from ..signals import as_signal
from ._codegen import (MAX_INPUTS, CompiledObject, _as_sx, _check_shape, _compile, _function, _wrapper_call,
                       hat, scene_system)

ABI_VERSION = 1  # kGeneratedAbiVersion of include/marsden/vehicle/generated.hpp

t = ca.SX.sym("t")
R = ca.SX.sym("R", 3, 3)
p = ca.SX.sym("p", 3)
omega = ca.SX.sym("omega", 3)
v = ca.SX.sym("v", 3)

# SE(2): heading theta (rad), world position p = (x, y) (m), body velocity (omega, v1, v2).
_theta, _p2, _omega2, _v2 = (ca.SX.sym("theta"), ca.SX.sym("p", 2), ca.SX.sym("omega"),
                             ca.SX.sym("v", 2))
se2 = SimpleNamespace(
    t=t, theta=_theta, p=_p2, x=_p2[0], y=_p2[1], omega=_omega2, v=_v2, v1=_v2[0], v2=_v2[1],
    R=ca.vertcat(ca.horzcat(ca.cos(_theta), -ca.sin(_theta)),
                 ca.horzcat(ca.sin(_theta), ca.cos(_theta))))


def shape(n: int) -> ca.SX:
    """A column of n shape (actuator) variables gamma for a control matrix F(gamma)."""
    if not isinstance(n, int) or not 1 <= n <= MAX_INPUTS:
        raise InputError(f"shape: expected a number of variables in 1..{MAX_INPUTS}, got {n!r}")
    return ca.SX.sym("gamma", n)


def _right_derivative(expr: ca.SX) -> ca.SX:
    """d/d delta of expr(R, p) at g exp(delta), delta = (d_theta, d_x) = 0: the right
    perturbation of the pose that the C++ Jacobians J_f_g use (R -> R (I + d_theta^),
    p -> p + R d_x to first order)."""
    delta = ca.SX.sym("delta", 6)
    moved = ca.substitute(ca.substitute(expr, R, R @ (ca.SX.eye(3) + hat(delta[:3]))),
                          p, p + R @ delta[3:])
    return ca.substitute(ca.jacobian(moved, delta), delta, ca.SX.zeros(6))


def _right_derivative_se2(expr: ca.SX) -> ca.SX:
    """The same on SE(2), delta = (d_theta, d_1, d_2): theta -> theta + d_theta,
    p -> p + R(theta) (d_1, d_2) to first order."""
    delta = ca.SX.sym("delta", 3)
    moved = ca.substitute(ca.substitute(expr, _theta, _theta + delta[0]),
                          _p2, _p2 + se2.R @ delta[1:])
    return ca.substitute(ca.jacobian(moved, delta), delta, ca.SX.zeros(3))


def _inertia(inertia, mass, J, n: int = 6) -> np.ndarray:
    """The locked inertia, n x n: (J, m I3) on SE(3) (n = 6), (J, m, m) on SE(2) (n = 3)."""
    n_J = 3 if n == 6 else 1
    if inertia is not None:
        if mass is not None or J is not None:
            raise InputError(f"inertia: give either inertia ({n} x {n}) or mass and J, not both")
        I_sx = _as_sx(inertia, "inertia")
        if not I_sx.is_constant():
            raise InputError("inertia: must be numbers, not expressions of symbols")
        I = np.array(ca.DM(I_sx), dtype=float)
        if I.shape != (n, n):
            raise InputError(f"inertia: expected shape {n} x {n}, got {I.shape[0]} x {I.shape[1]}")
        what = "inertia"
    else:
        if mass is None or J is None:
            raise InputError(f"inertia: give inertia ({n} x {n}), or mass (kg) and J (kg m^2)")
        mass = float(mass)
        if not np.isfinite(mass) or mass <= 0.0:
            raise InputError(f"mass: must be a finite number > 0 (kg), got {mass}")
        J = np.asarray(J, dtype=float)
        if n == 6 and J.shape == (3,):
            J = np.diag(J)
        J = J.reshape((1, 1)) if n == 3 and J.size == 1 else J
        if J.shape != (n_J, n_J):
            want = "3 principal moments or shape 3 x 3" if n == 6 else "one number"
            raise InputError(f"J: expected {want}, got shape {J.shape}")
        I = np.zeros((n, n))
        I[:n_J, :n_J] = J
        I[n_J:, n_J:] = mass * np.eye(n - n_J)
        what = "J"
    if not np.all(np.isfinite(I)):
        raise InputError(f"{what}: contains NaN or infinite entries")
    if not np.allclose(I, I.T, rtol=0.0, atol=1e-12 * np.abs(I).max()):
        raise InputError(f"{what}: is not symmetric")
    if np.linalg.eigvalsh(I).min() <= 1e-14 * np.abs(I).max():
        raise InputError(f"{what}: is singular or not positive definite (smallest eigenvalue "
                         f"{np.linalg.eigvalsh(I).min():.3g})")
    return I


_WRAPPER = """
/* Marsden ABI {abi} (include/marsden/vehicle/generated.hpp): fixed signatures over the
   CasADi functions above, their work arrays on the stack so that calls are reentrant. */
CASADI_SYMBOL_EXPORT int marsden_abi_version(void) {{ return {abi}; }}
CASADI_SYMBOL_EXPORT int marsden_group(void) {{ return {group}; }}
CASADI_SYMBOL_EXPORT int marsden_num_controls(void) {{ return {nu}; }}
CASADI_SYMBOL_EXPORT int marsden_num_shape(void) {{ return {ns}; }}
CASADI_SYMBOL_EXPORT int marsden_depends_on_time(void) {{ return {time}; }}
CASADI_SYMBOL_EXPORT void marsden_inertia(double* I) {{
  static const double value[{nn}] = {{{inertia}}};
  int i;
  for (i = 0; i < {nn}; ++i) I[i] = value[i];
}}
"""


_SE3 = SimpleNamespace(
    n=6, id=3, pose=[R, p], velocity=[omega, v], right=_right_derivative,
    names="t, R, p, omega, v", pose_names="R, p", probe=(np.eye(3), np.zeros(3)),
    rest=(np.zeros(3), np.zeros(3)), sizes=(9, 3, 3, 3))
_SE2 = SimpleNamespace(
    n=3, id=2, pose=[_theta, _p2], velocity=[_omega2, _v2], right=_right_derivative_se2,
    names="t, theta, x, y (p), omega, v1, v2 (v)", pose_names="theta, x, y (p)",
    probe=(0.0, np.zeros(2)), rest=(0.0, np.zeros(2)), sizes=(1, 2, 1, 2))


class HolonomicVehicle(CompiledObject):
    """A holonomic vehicle on SE(3) from expressions (module docstring). Validates and
    compiles at construction (InputError naming the symbol or argument):

    - ``inertia`` (6 x 6, (angular, linear) blocks) or ``mass`` (kg) and ``J`` (3 principal
      moments or 3 x 3 about the centre of mass, kg m^2): numbers, symmetric positive definite;
    - ``control_matrix`` F(gamma) (6 x nu, nu <= 8), an expression of the ``shape`` symbol
      (from shape(n)) or numbers; the control wrench is F(gamma) u;
    - ``external_wrench`` f_ext(t, R, p, omega, v) (6), non-conservative forces;
    - ``potential`` V(R, p) (J): its force -dV is added to f_ext and V to the energy.

    ``library`` is the compiled shared object, ``compiled`` whether this construction ran
    the compiler (False: taken from the cache) and ``compile_seconds`` how long it took."""

    _group = _SE3

    def __init__(self, name: str, *, inertia=None, mass=None, J=None, control_matrix=None,
                 shape: ca.SX | None = None, external_wrench=None, potential=None):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", name):
            raise InputError(f"name: expected a letter then letters, digits or _, got {name!r}")
        self.name = name
        G = self._group
        n = G.n
        self.inertia = _inertia(inertia, mass, J, n)

        gamma = ca.SX.sym("gamma", 0) if shape is None else shape
        if not isinstance(gamma, ca.SX) or not gamma.is_valid_input() or gamma.size2() != 1 \
                or gamma.numel() > MAX_INPUTS:
            raise InputError(f"shape: expected a column of at most {MAX_INPUTS} symbols "
                             "from symbolic.shape(n)")
        if control_matrix is None:
            F = ca.SX(n, 0)
        else:
            F = _as_sx(control_matrix, "control_matrix")
            _check_shape(F, n, None, "control_matrix")
            if not 1 <= F.size2() <= MAX_INPUTS:
                raise InputError(f"control_matrix: expected 1..{MAX_INPUTS} columns (controls), "
                                 f"got {F.size2()}")
        if shape is not None and not ca.depends_on(F, gamma):
            raise InputError("shape: control_matrix does not depend on it; leave shape out")
        self.num_controls, self.num_shape = F.size2(), gamma.numel()
        u = ca.SX.sym("u", self.num_controls)

        f_ext = ca.SX.zeros(n) if external_wrench is None else _as_sx(external_wrench,
                                                                      "external_wrench")
        if f_ext.shape == (1, n):
            f_ext = f_ext.T
        _check_shape(f_ext, n, 1, "external_wrench")
        V = ca.SX(0) if potential is None else _as_sx(potential, "potential")
        _check_shape(V, 1, 1, "potential")
        _function("potential", G.pose, [V], "potential", G.pose_names)
        _function("external_wrench", [t, *G.pose, *G.velocity], [f_ext], "external_wrench",
                  G.names)
        f_c = F @ u
        _function("control_matrix", [gamma], [F], "control_matrix", "the shape symbol")

        # f_ext plus the potential's force: -dV/d delta at g exp(delta) (vehicles eq. (8)).
        f_total = f_ext - G.right(V).T
        xi = ca.vertcat(*G.velocity)
        functions = {
            "control_wrench": ca.Function(
                "mx_control_wrench", [gamma, u],
                [ca.densify(e) for e in (f_c, F, ca.jacobian(f_c, gamma))]),
            "external_wrench": ca.Function(
                "mx_external_wrench", [t, *G.pose, *G.velocity],
                [ca.densify(e) for e in (f_total, G.right(f_total), ca.jacobian(f_total, xi))]),
            "potential_energy": ca.Function("mx_potential_energy", G.pose, [ca.densify(V)]),
        }
        self.depends_on_time = bool(ca.depends_on(f_ext, t))
        self._check_finite(functions)

        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        for f in functions.values():
            codegen.add(f)
        source = codegen.dump()
        source += _WRAPPER.format(
            abi=ABI_VERSION, group=G.id, nn=n * n, nu=self.num_controls, ns=self.num_shape,
            time=int(self.depends_on_time),
            inertia=", ".join(repr(float(x)) for x in self.inertia.flatten(order="F")))
        source += _wrapper_call(functions["control_wrench"], "control_wrench", ["gamma", "u"],
                                ["f", "J_f_u", "J_f_gamma"])
        source += _wrapper_call(functions["external_wrench"], "external_wrench",
                                ["t", "R", "p", "omega", "v"], ["f", "J_f_g", "J_f_xi"])
        source += _wrapper_call(functions["potential_energy"], "potential_energy", ["R", "p"],
                                ["V"])
        self.source = source
        self.library, self.compiled, self.compile_seconds = _compile(source, name)

    def _check_finite(self, functions: dict) -> None:
        """Non-finite numbers (a NaN constant, 1/0, sqrt's slope at 0) found at the identity
        pose at rest, naming the expression and the output."""
        G = self._group
        probes = [
            ("control_matrix", ("F(gamma) u", "F(gamma)", "d(F u)/d gamma"),
             functions["control_wrench"](np.zeros(self.num_shape), np.ones(self.num_controls))),
            ("external_wrench or potential",
             ("f_ext - dV", "its derivative in g", "its derivative in (omega, v)"),
             functions["external_wrench"](0.0, *G.probe, *G.rest)),
            ("potential", ("V",), [functions["potential_energy"](*G.probe)]),
        ]
        for what, outputs, values in probes:
            for output, value in zip(outputs, values):
                if not np.all(np.isfinite(np.array(value, dtype=float))):
                    raise InputError(f"{what}: {output} is not finite at the identity pose at "
                                     "rest (t = 0, gamma = 0, u = 1)")

    def scene_system(self) -> dict:
        """The "system" object of a scene or problem file for this vehicle."""
        return {"type": "generated", "library": str(self.library)}

    def system(self, *, integrator: dict | None = None, initial_state: dict | None = None,
               controls=None, shape=None) -> System:
        """The simulated system, as marsden.vehicles.system gives for the built-in vehicles
        (the same ``integrator`` and ``initial_state`` objects, docs/scene.md; ``controls``
        and ``shape`` signals or anything as_signal takes)."""
        return scene_system(self.scene_system(), self.name, integrator, initial_state,
                            controls=as_signal(controls), shape=as_signal(shape))

    def problem(self, problem: dict) -> Problem:
        """An optimal-control problem (a problem file's object, docs/dmoc.md) whose system
        is this vehicle. Its library is this program's own code: no allowance needed."""
        return parse_problem(json.dumps({**problem, "system": self.scene_system()}),
                             f"symbolic.{self.name}", allow_code=True)

    # The compiled entry points called directly (ctypes), for checks and debugging.
    def _entry(self, name: str):
        return getattr(self._loaded(), f"marsden_{name}")

    @staticmethod
    def _ptr(a: np.ndarray):
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    def control_wrench(self, gamma, u):
        """(f (6), J_f_u (6 x nu), J_f_gamma (6 x ns)) from the compiled code."""
        gamma = np.ascontiguousarray(gamma, dtype=float).reshape(self.num_shape)
        u = np.ascontiguousarray(u, dtype=float).reshape(self.num_controls)
        n = self._group.n
        f, J_u, J_g = np.zeros(n), np.zeros((n, self.num_controls), order="F"), \
            np.zeros((n, self.num_shape), order="F")
        self._entry("control_wrench")(*(self._ptr(a) for a in (gamma, u, f, J_u, J_g)))
        return f, J_u, J_g

    @staticmethod
    def _flat(a, size: int) -> np.ndarray:
        """a as the ABI passes it: column-major, `size` numbers."""
        return np.ascontiguousarray(np.reshape(np.asarray(a, dtype=float), -1, order="F")
                                    .reshape(size))

    def external_wrench(self, t_, R_, p_, omega_, v_):
        """(f (n), J_f_g (n x n, right perturbation), J_f_xi (n x n)) from the compiled code,
        the potential's force included. On SE(2) R_ is the heading theta."""
        G = self._group
        args = [self._flat(t_, 1)] + [self._flat(a, k) for a, k in zip((R_, p_, omega_, v_),
                                                                       G.sizes)]
        n = G.n
        f, J_g, J_xi = np.zeros(n), np.zeros((n, n), order="F"), np.zeros((n, n), order="F")
        self._entry("external_wrench")(*(self._ptr(a) for a in (*args, f, J_g, J_xi)))
        return f, J_g, J_xi

    def potential_energy(self, R_, p_) -> float:
        """V(R, p) from the compiled code (J); on SE(2) R_ is the heading theta."""
        G = self._group
        V = np.zeros(1)
        self._entry("potential_energy")(self._ptr(self._flat(R_, G.sizes[0])),
                                        self._ptr(self._flat(p_, G.sizes[1])), self._ptr(V))
        return float(V[0])


class PlanarVehicle(HolonomicVehicle):
    """A holonomic vehicle on SE(2) from expressions of the ``se2`` symbols, as
    HolonomicVehicle on SE(3) (the same checks, cache and scene object; the object says it is
    planar, so a scene's {"type": "generated"} runs it on SE(2)):

    - ``inertia`` (3 x 3, ordered (omega, v1, v2)) or ``mass`` (kg) and ``J`` (the moment
      about the vertical axis through the centre of mass, kg m^2): diag(J, m, m);
    - ``control_matrix`` F(gamma) (3 x nu), body-frame (torque, f1, f2) per control;
    - ``external_wrench`` f_ext(t, theta, x, y, omega, v1, v2) (3), body-frame
      (torque, f1, f2) about the centre of mass;
    - ``potential`` V(theta, x, y) (J).

    Expressions must be 2 pi periodic in theta: the compiled code receives the heading in
    (-pi, pi]."""

    _group = _SE2


# --- a zoo of vehicles written this way (tests, benchmarks, docs/own-system.md) -------------

def helicopter(mass: float = 5.0, J=(0.2, 0.3, 0.3), d_t: float = 0.2, d_r: float = 0.8,
               gravity: float = 9.81, name: str = "helicopter") -> HolonomicVehicle:
    """The helicopter of vehicles §4.3.1 (the built-in "helicopter"'s defaults): controls
    (collective lift, tail-rotor force) [N], shape (rotor pitch, roll tilt) [rad]. The lift
    acts along (sin gp cos gr, -sin gr, cos gp cos gr) at the hub (0, 0, d_t), the tail rotor
    along -y at (-d_r, 0, 0); gravity comes from the potential m g z."""
    gamma = shape(2)
    sp, cp = ca.sin(gamma[0]), ca.cos(gamma[0])
    sr, cr = ca.sin(gamma[1]), ca.cos(gamma[1])
    F = [[d_t * sr, 0], [d_t * sp * cr, 0], [0, d_r], [sp * cr, 0], [-sr, -1], [cp * cr, 0]]
    return HolonomicVehicle(name, mass=mass, J=J, control_matrix=F, shape=gamma,
                            potential=mass * gravity * p[2])


def quadrotor(mass: float = 1.2, J=(0.012, 0.014, 0.022), arm: float = 0.25,
              drag: float = 0.016, gravity: float = 9.81, wind=(0.0, 0.0, 0.0),
              linear_damping: float = 0.0, quadratic_damping: float = 0.0,
              angular_damping: float = 0.0, name: str = "quadrotor") -> HolonomicVehicle:
    """Four rotors in a + at distance ``arm`` [m] on the body x and y axes; controls: the
    rotors' thrusts u_i [N] along body z. Rotor i spins with sign (+, -, +, -), its drag
    giving the yaw torque +-``drag`` u_i [N m per N]. Air drag against the body velocity
    relative to a world ``wind`` [m/s]: force -(linear + quadratic |v_air|) v_air, torque
    -angular omega; gravity from the potential m g z."""
    F = np.zeros((6, 4))
    for i, (x, y) in enumerate([(arm, 0.0), (0.0, arm), (-arm, 0.0), (0.0, -arm)]):
        F[:, i] = [y, -x, drag * (-1) ** i, 0.0, 0.0, 1.0]  # (r_i x e_z + spin torque, e_z)
    v_air = v - R.T @ ca.DM(wind)
    speed = ca.sqrt(ca.dot(v_air, v_air) + 1e-6)  # smooth at zero airspeed
    f_ext = ca.vertcat(-angular_damping * omega,
                       -linear_damping * v_air - quadratic_damping * speed * v_air)
    return HolonomicVehicle(name, mass=mass, J=J, control_matrix=F, external_wrench=f_ext,
                            potential=mass * gravity * p[2])


def underwater_vehicle(mass: float = 30.0, J=(0.6, 1.8, 1.8),
                       added_mass=(6.0, 24.0, 24.0, 0.1, 0.9, 0.9), volume: float = 0.03,
                       water_density: float = 1000.0, buoyancy_center=(0.0, 0.0, 0.05),
                       linear_drag=(5.0, 20.0, 20.0, 0.5, 2.0, 2.0),
                       quadratic_drag=(10.0, 40.0, 40.0, 0.2, 1.0, 1.0),
                       thrusters=((-0.5, 0.2, 0.0), (-0.5, -0.2, 0.0)),
                       gravity: float = 9.81, name: str = "underwater_vehicle") -> HolonomicVehicle:
    """A torpedo-like underwater vehicle in still water (Kirchhoff's equations are the
    Euler-Poincare equations on SE(3)): locked inertia diag(J, m I3) plus the added mass
    ``added_mass`` (translational x, y, z [kg], then rotational [kg m^2]); gravity at the
    centre of mass and buoyancy rho g ``volume`` at ``buoyancy_center`` [m, body frame]
    from the potential m g z - rho g V (p + R r_b)_z, which rights the hull when r_b lies
    above the centre of mass; drag per body axis -(linear + quadratic |.|) of (v, omega),
    ordered (x, y, z, roll, pitch, yaw). Controls: one thruster along body x at each point
    of ``thrusters`` [N], and one vertical (body z) thruster at the centre [N]."""
    I = np.zeros((6, 6))
    I[:3, :3] = np.diag(J) + np.diag(added_mass[3:])
    I[3:, 3:] = mass * np.eye(3) + np.diag(added_mass[:3])
    F = np.zeros((6, len(thrusters) + 1))
    for i, c in enumerate(thrusters):
        F[:, i] = [0.0, c[2], -c[1], 1.0, 0.0, 0.0]  # (c x e_x, e_x)
    F[5, -1] = 1.0
    buoyancy = water_density * gravity * volume
    V = mass * gravity * p[2] - buoyancy * (p + R @ ca.DM(buoyancy_center))[2]
    lin, quad = np.asarray(linear_drag, float), np.asarray(quadratic_drag, float)
    rate = ca.vertcat(v, omega)
    drag = -(ca.DM(lin) * rate + ca.DM(quad) * ca.sqrt(rate * rate + 1e-6) * rate)
    return HolonomicVehicle(name, inertia=I, control_matrix=F, potential=V,
                            external_wrench=ca.vertcat(drag[3:], drag[:3]))


def hovercraft(mass: float = 2.0, J: float = 0.05, thruster_offset: float = 0.15,
               thruster_angle: float = 0.0, drag: float = 0.0, angular_drag: float = 0.0,
               name: str = "hovercraft") -> PlanarVehicle:
    """A planar hovercraft (SE(2)) with two thrusters at (0, +-``thruster_offset``) [m] in
    the body frame, each pushing along body x turned by +-``thruster_angle`` [rad] towards
    the centre line; controls: the left and right thrusts [N]. Linear drag against the body
    velocity: force -``drag`` (v1, v2) [N s/m], torque -``angular_drag`` omega [N m s]; no
    potential. With equal thrusts F each and no angle the craft accelerates along its axis
    as m v1' = 2 F - c v1."""
    F = np.zeros((3, 2))
    for i, side in enumerate((1.0, -1.0)):   # left at +offset, right at -offset
        d = np.array([np.cos(thruster_angle), -side * np.sin(thruster_angle)])
        r = np.array([0.0, side * thruster_offset])
        F[:, i] = [r[0] * d[1] - r[1] * d[0], d[0], d[1]]   # (r x d, d)
    f_ext = ca.vertcat(-angular_drag * se2.omega, -drag * se2.v)
    return PlanarVehicle(name, mass=mass, J=J, control_matrix=F, external_wrench=f_ext)
