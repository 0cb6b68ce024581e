"""Holonomic vehicles on SE(3) (vehicles paper §3.1, §4): l(xi) = 1/2 xi^T I xi - V(g) and
the forced Euler-Poincare equations (vehicles eq. (8)); the C side is
include/marsden/vehicle/generated.hpp."""

from __future__ import annotations

import ctypes
import json
import re

import numpy as np
import casadi as ca

from .._core import InputError, Problem, System, parse_problem
from ..signals import as_signal
from ._codegen import (MAX_INPUTS, _as_sx, _check_shape, _compile, _function, _wrapper_call,
                       hat, scene_system)

ABI_VERSION = 1  # kGeneratedAbiVersion of include/marsden/vehicle/generated.hpp

t = ca.SX.sym("t")
R = ca.SX.sym("R", 3, 3)
p = ca.SX.sym("p", 3)
omega = ca.SX.sym("omega", 3)
v = ca.SX.sym("v", 3)


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


def _inertia(inertia, mass, J) -> np.ndarray:
    if inertia is not None:
        if mass is not None or J is not None:
            raise InputError("inertia: give either inertia (6 x 6) or mass and J, not both")
        I_sx = _as_sx(inertia, "inertia")
        if not I_sx.is_constant():
            raise InputError("inertia: must be numbers, not expressions of symbols")
        I = np.array(ca.DM(I_sx), dtype=float)
        if I.shape != (6, 6):
            raise InputError(f"inertia: expected shape 6 x 6, got {I.shape[0]} x {I.shape[1]}")
        what = "inertia"
    else:
        if mass is None or J is None:
            raise InputError("inertia: give inertia (6 x 6), or mass (kg) and J (kg m^2)")
        mass = float(mass)
        if not np.isfinite(mass) or mass <= 0.0:
            raise InputError(f"mass: must be a finite number > 0 (kg), got {mass}")
        J = np.asarray(J, dtype=float)
        if J.shape == (3,):
            J = np.diag(J)
        if J.shape != (3, 3):
            raise InputError(f"J: expected 3 principal moments or shape 3 x 3, got shape {J.shape}")
        I = np.zeros((6, 6))
        I[:3, :3] = J
        I[3:, 3:] = mass * np.eye(3)
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
CASADI_SYMBOL_EXPORT int marsden_num_controls(void) {{ return {nu}; }}
CASADI_SYMBOL_EXPORT int marsden_num_shape(void) {{ return {ns}; }}
CASADI_SYMBOL_EXPORT int marsden_depends_on_time(void) {{ return {time}; }}
CASADI_SYMBOL_EXPORT void marsden_inertia(double* I) {{
  static const double value[36] = {{{inertia}}};
  int i;
  for (i = 0; i < 36; ++i) I[i] = value[i];
}}
"""


class HolonomicVehicle:
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

    def __init__(self, name: str, *, inertia=None, mass=None, J=None, control_matrix=None,
                 shape: ca.SX | None = None, external_wrench=None, potential=None):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", name):
            raise InputError(f"name: expected a letter then letters, digits or _, got {name!r}")
        self.name = name
        self.inertia = _inertia(inertia, mass, J)

        gamma = ca.SX.sym("gamma", 0) if shape is None else shape
        if not isinstance(gamma, ca.SX) or not gamma.is_valid_input() or gamma.size2() != 1 \
                or gamma.numel() > MAX_INPUTS:
            raise InputError(f"shape: expected a column of at most {MAX_INPUTS} symbols "
                             "from symbolic.shape(n)")
        if control_matrix is None:
            F = ca.SX(6, 0)
        else:
            F = _as_sx(control_matrix, "control_matrix")
            _check_shape(F, 6, None, "control_matrix")
            if not 1 <= F.size2() <= MAX_INPUTS:
                raise InputError(f"control_matrix: expected 1..{MAX_INPUTS} columns (controls), "
                                 f"got {F.size2()}")
        if shape is not None and not ca.depends_on(F, gamma):
            raise InputError("shape: control_matrix does not depend on it; leave shape out")
        self.num_controls, self.num_shape = F.size2(), gamma.numel()
        u = ca.SX.sym("u", self.num_controls)

        f_ext = ca.SX.zeros(6) if external_wrench is None else _as_sx(external_wrench,
                                                                      "external_wrench")
        if f_ext.shape == (1, 6):
            f_ext = f_ext.T
        _check_shape(f_ext, 6, 1, "external_wrench")
        V = ca.SX(0) if potential is None else _as_sx(potential, "potential")
        _check_shape(V, 1, 1, "potential")
        _function("potential", [R, p], [V], "potential", "R, p")
        _function("external_wrench", [t, R, p, omega, v], [f_ext], "external_wrench",
                  "t, R, p, omega, v")
        f_c = F @ u
        _function("control_matrix", [gamma], [F], "control_matrix", "the shape symbol")

        # f_ext plus the potential's force: -dV/d delta at g exp(delta) (vehicles eq. (8)).
        f_total = f_ext - _right_derivative(V).T
        xi = ca.vertcat(omega, v)
        functions = {
            "control_wrench": ca.Function(
                "mx_control_wrench", [gamma, u],
                [ca.densify(e) for e in (f_c, F, ca.jacobian(f_c, gamma))]),
            "external_wrench": ca.Function(
                "mx_external_wrench", [t, R, p, omega, v],
                [ca.densify(e) for e in (f_total, _right_derivative(f_total),
                                         ca.jacobian(f_total, xi))]),
            "potential_energy": ca.Function("mx_potential_energy", [R, p], [ca.densify(V)]),
        }
        self.depends_on_time = bool(ca.depends_on(f_ext, t))
        self._check_finite(functions)

        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        for f in functions.values():
            codegen.add(f)
        source = codegen.dump()
        source += _WRAPPER.format(
            abi=ABI_VERSION, nu=self.num_controls, ns=self.num_shape,
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
        self._lib = None

    def _check_finite(self, functions: dict) -> None:
        """Non-finite numbers (a NaN constant, 1/0, sqrt's slope at 0) found at the identity
        pose at rest, naming the expression and the output."""
        I3, zero = np.eye(3), np.zeros(3)
        probes = [
            ("control_matrix", ("F(gamma) u", "F(gamma)", "d(F u)/d gamma"),
             functions["control_wrench"](np.zeros(self.num_shape), np.ones(self.num_controls))),
            ("external_wrench or potential",
             ("f_ext - dV", "its derivative in g", "its derivative in (omega, v)"),
             functions["external_wrench"](0.0, I3, zero, zero, zero)),
            ("potential", ("V",), [functions["potential_energy"](I3, zero)]),
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
        is this vehicle."""
        return parse_problem(json.dumps({**problem, "system": self.scene_system()}),
                             f"symbolic.{self.name}")

    # The compiled entry points called directly (ctypes), for checks and debugging.
    def _entry(self, name: str):
        if self._lib is None:
            self._lib = ctypes.CDLL(str(self.library))
        return getattr(self._lib, f"marsden_{name}")

    @staticmethod
    def _ptr(a: np.ndarray):
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    def control_wrench(self, gamma, u):
        """(f (6), J_f_u (6 x nu), J_f_gamma (6 x ns)) from the compiled code."""
        gamma = np.ascontiguousarray(gamma, dtype=float).reshape(self.num_shape)
        u = np.ascontiguousarray(u, dtype=float).reshape(self.num_controls)
        f, J_u, J_g = np.zeros(6), np.zeros((6, self.num_controls), order="F"), \
            np.zeros((6, self.num_shape), order="F")
        self._entry("control_wrench")(*(self._ptr(a) for a in (gamma, u, f, J_u, J_g)))
        return f, J_u, J_g

    def external_wrench(self, t_, R_, p_, omega_, v_):
        """(f (6), J_f_g (6 x 6, right perturbation), J_f_xi (6 x 6)) from the compiled code,
        the potential's force included."""
        args = [np.ascontiguousarray(np.reshape(t_, 1), dtype=float),
                np.asfortranarray(R_, dtype=float)] + \
            [np.ascontiguousarray(a, dtype=float).reshape(3) for a in (p_, omega_, v_)]
        f, J_g, J_xi = np.zeros(6), np.zeros((6, 6), order="F"), np.zeros((6, 6), order="F")
        self._entry("external_wrench")(*(self._ptr(a) for a in (*args, f, J_g, J_xi)))
        return f, J_g, J_xi

    def potential_energy(self, R_, p_) -> float:
        """V(R, p) from the compiled code (J)."""
        V = np.zeros(1)
        self._entry("potential_energy")(self._ptr(np.asfortranarray(R_, dtype=float)),
                                        self._ptr(np.ascontiguousarray(p_, dtype=float)),
                                        self._ptr(V))
        return float(V[0])


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
