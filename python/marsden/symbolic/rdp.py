"""Nonholonomic vehicles on SE(2) for the RDP integrator (vehicles paper §3.2, §5): the
reduced Lagrangian l(r, u, xi), the connection A(r) and the basis E(r) = [e_1 .. e_nb] of
the symmetry directions s_r left free by the constraints; the C side is
include/marsden/vehicle/generated_rdp.hpp.

The constraints are xi + A(r) u in span E(r), xi = (omega, v1, v2) the body velocity
(rad/s, m/s), r the shape (n_r <= 4) and u its velocity. Marsden derives dl/d(r, u, xi),
its Hessian, dA/dr_j and dE/dr_j.

    from marsden import symbolic as sym
    from marsden.symbolic import rdp
    r, u = rdp.shape(2)
    car = sym.RdpVehicle("car", shape=(r, u),
                         lagrangian=0.5 * (I * u[0]**2 + K * rdp.omega**2
                                           + m * (rdp.v1**2 + rdp.v2**2)),
                         connection=[[-rho / l * r[1], 0], [-rho, 0], [0, 0]],
                         prescribed=[1])
"""

from __future__ import annotations

import ctypes
import json
import re

import numpy as np
import casadi as ca
from numpy.typing import ArrayLike, NDArray

from .._core import InputError, Problem, System, parse_problem
from ..signals import as_signal
from ._codegen import (CompiledObject, _as_sx, _check_shape, _compile, _function, _wrapper_call,
                       scene_system)

__all__ = ["ABI_VERSION", "MAX_SHAPE", "RdpVehicle", "car", "differential_drive", "omega",
           "roller_racer", "shape", "sleigh", "snakeboard", "v1", "v2", "xi"]

ABI_VERSION = 1  # kGeneratedRdpAbiVersion of include/marsden/vehicle/generated_rdp.hpp
MAX_SHAPE = 4    # kRdpMaxShape of include/marsden/vehicle/rdp.hpp

xi = ca.SX.sym("xi", 3)
omega, v1, v2 = xi[0], xi[1], xi[2]

# Where the expressions are checked before compiling (generic values, so that a metric
# singular only at r = 0 is not refused, and one singular here is).
PROBE_R = (0.3, -0.2, 0.1, 0.4)
PROBE_U = (0.2, -0.1, 0.3, 0.1)
PROBE_XI = (0.1, 0.5, -0.2)


def shape(n: int) -> tuple[ca.SX, ca.SX]:
    """The shape r and its velocity u, columns of n symbols (1 <= n <= 4)."""
    if not isinstance(n, int) or not 1 <= n <= MAX_SHAPE:
        raise InputError(f"shape: expected a number of shape variables in 1..{MAX_SHAPE} "
                         f"(n_r), got {n!r}")
    return ca.SX.sym("r", n), ca.SX.sym("u", n)


def _shape_symbols(value) -> tuple[ca.SX, ca.SX]:
    if value is None:
        return ca.SX.sym("r", 0), ca.SX.sym("u", 0)
    try:
        r, u = value
    except (TypeError, ValueError):
        raise InputError("shape: expected the pair (r, u) from rdp.shape(n)") from None
    for what, s in (("r", r), ("u", u)):
        if not isinstance(s, ca.SX) or not s.is_valid_input() or s.size2() != 1:
            raise InputError(f"shape: {what} must be a column of symbols from rdp.shape(n)")
    if r.numel() != u.numel():
        raise InputError(f"shape: r has {r.numel()} entries, u {u.numel()}; they must match")
    if r.numel() > MAX_SHAPE:
        raise InputError(f"shape: n_r = {r.numel()}, RDP takes at most {MAX_SHAPE} shape "
                         "variables")
    return r, u


def _metric_names(free: list[int]) -> list[str]:
    return [f"u[{i}]" for i in free] + ["omega", "v1", "v2"]


_WRAPPER = """
/* Marsden RDP ABI {abi} (include/marsden/vehicle/generated_rdp.hpp): fixed signatures over
   the CasADi functions above, their work arrays on the stack so that calls are reentrant. */
CASADI_SYMBOL_EXPORT int marsden_rdp_abi_version(void) {{ return {abi}; }}
CASADI_SYMBOL_EXPORT int marsden_rdp_num_shape(void) {{ return {nr}; }}
CASADI_SYMBOL_EXPORT int marsden_rdp_num_symmetry(void) {{ return {nb}; }}
CASADI_SYMBOL_EXPORT int marsden_rdp_prescribed(void) {{ return {mask}; }}
"""


class RdpVehicle(CompiledObject):
    """A nonholonomic vehicle on SE(2) from expressions (module docstring). Validates and
    compiles at construction (InputError naming the symbol or argument):

    - ``shape`` = (r, u) from rdp.shape(n_r), or None for a vehicle without shape (n_r = 0);
    - ``lagrangian`` l(r, u, xi), a scalar expression of r, u and rdp.xi (or rdp.omega,
      rdp.v1, rdp.v2); its kinetic metric d2l/d(u, xi)^2, without the prescribed velocities'
      rows, must be positive definite at the probe point;
    - ``connection`` A(r), 3 x n_r (None: zero);
    - ``symmetry_basis`` E(r), 3 x n_b with independent columns (None: n_b = 0, every body
      velocity fixed by the shape's);
    - ``prescribed``: the shape dofs whose velocity is an input (a kinematic actuator, the
      car's steering rate); the other dofs take forces.
    - ``shape_force`` f_r(r, u, xi), n_r expressions (None: no shape force): a force (N or
      N m per shape coordinate) added to the controls of the free shape dofs, e.g. a
      joint's damper and spring -c u - k (r - r0); the generated object exports it with
      its derivatives (the optional ABI entry marsden_rdp_shape_force).

    ``library`` is the compiled shared object, ``compiled`` whether this construction ran
    the compiler and ``compile_seconds`` how long it took."""

    def __init__(self, name: str, *, lagrangian, shape=None, connection=None,
                 symmetry_basis=None, prescribed=(), shape_force=None):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", name):
            raise InputError(f"name: expected a letter then letters, digits or _, got {name!r}")
        self.name = name
        r, u = _shape_symbols(shape)
        nr = r.numel()
        self.num_shape = nr

        l_sx = _as_sx(lagrangian, "lagrangian")
        _check_shape(l_sx, 1, 1, "lagrangian")
        _function("lagrangian", [r, u, xi], [l_sx], "lagrangian", "r, u, xi")
        A = ca.SX(3, nr) if connection is None else _as_sx(connection, "connection")
        if nr == 1 and A.shape == (1, 3):
            A = A.T
        _check_shape(A, 3, nr, "connection")
        _function("connection", [r], [A], "connection", "r")
        E = ca.SX(3, 0) if symmetry_basis is None else _as_sx(symmetry_basis, "symmetry_basis")
        if E.shape == (1, 3):
            E = E.T
        _check_shape(E, 3, None, "symmetry_basis")
        if E.size2() > 3:
            raise InputError(f"symmetry_basis: expected at most 3 columns, got {E.size2()}")
        _function("symmetry_basis", [r], [E], "symmetry_basis", "r")
        self.num_symmetry = E.size2()

        try:
            prescribed = sorted({int(i) for i in prescribed})
        except (TypeError, ValueError):
            raise InputError("prescribed: expected shape indices (integers)") from None
        if prescribed and (prescribed[0] < 0 or prescribed[-1] >= nr):
            raise InputError(f"prescribed: indices must lie in 0..{nr - 1}, got {prescribed}")
        self.prescribed = prescribed

        z = ca.vertcat(r, u, xi)
        H, g = ca.hessian(l_sx, z)
        self.has_shape_force = shape_force is not None
        if self.has_shape_force:
            if nr == 0:
                raise InputError("shape_force: the vehicle has no shape (shape=None), so no "
                                 "shape force")
            f_sx = _as_sx(shape_force, "shape_force")
            if f_sx.shape == (1, nr):
                f_sx = f_sx.T
            _check_shape(f_sx, nr, 1, "shape_force")
            _function("shape_force", [r, u, xi], [f_sx], "shape_force", "r, u, xi")
        functions = {
            "rdp_lagrangian": ca.Function("mx_rdp_lagrangian", [r, u, xi],
                                          [ca.densify(e) for e in (l_sx, g, H)]),
            "rdp_connection": ca.Function("mx_rdp_connection", [r],
                                          [ca.densify(A), ca.densify(ca.jacobian(ca.vec(A), r))]),
            "rdp_symmetry_basis": ca.Function(
                "mx_rdp_symmetry_basis", [r],
                [ca.densify(E), ca.densify(ca.jacobian(ca.vec(E), r))]),
        }
        if self.has_shape_force:
            functions["rdp_shape_force"] = ca.Function(
                "mx_rdp_shape_force", [r, u, xi],
                [ca.densify(f_sx), ca.densify(ca.jacobian(f_sx, z))])
        self._check_at_probe(functions)

        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        for f in functions.values():
            codegen.add(f)
        source = codegen.dump()
        source += _WRAPPER.format(abi=ABI_VERSION, nr=nr, nb=self.num_symmetry,
                                  mask=sum(1 << i for i in prescribed))
        source += _wrapper_call(functions["rdp_lagrangian"], "rdp_lagrangian", ["r", "u", "xi"],
                                ["l", "grad", "hess"])
        source += _wrapper_call(functions["rdp_connection"], "rdp_connection", ["r"],
                                ["A", "dA"])
        source += _wrapper_call(functions["rdp_symmetry_basis"], "rdp_symmetry_basis", ["r"],
                                ["E", "dE"])
        if self.has_shape_force:
            source += _wrapper_call(functions["rdp_shape_force"], "rdp_shape_force",
                                    ["r", "u", "xi"], ["f", "J"])
        self.source = source
        self.library, self.compiled, self.compile_seconds = _compile(source, name)

    def _check_at_probe(self, functions: dict) -> None:
        """Non-finite values, an indefinite or singular kinetic metric and dependent
        symmetry directions at the probe point, each named."""
        nr, nb = self.num_shape, self.num_symmetry
        r0, u0, xi0 = PROBE_R[:nr], PROBE_U[:nr], PROBE_XI
        where = f"at the probe point r = {list(r0)}, u = {list(u0)}, xi = {list(xi0)}"
        outputs = [("lagrangian", ("l", "dl/d(r, u, xi)", "its Hessian"),
                    functions["rdp_lagrangian"](r0, u0, xi0)),
                   ("connection", ("A", "dA/dr"), functions["rdp_connection"](r0)),
                   ("symmetry_basis", ("E", "dE/dr"), functions["rdp_symmetry_basis"](r0))]
        if "rdp_shape_force" in functions:
            outputs.append(("shape_force", ("f_r", "df_r/d(r, u, xi)"),
                            functions["rdp_shape_force"](r0, u0, xi0)))
        for what, names, values in outputs:
            for output, value in zip(names, values):
                if not np.all(np.isfinite(np.array(value, dtype=float))):
                    raise InputError(f"{what}: {output} is not finite {where}")
        H = np.array(outputs[0][2][2], dtype=float)
        free = [i for i in range(nr) if i not in self.prescribed]
        rows = [nr + i for i in free] + [2 * nr, 2 * nr + 1, 2 * nr + 2]
        M = H[np.ix_(rows, rows)]
        scale = max(np.abs(M).max(), 1e-300)
        if not np.allclose(M, M.T, rtol=0.0, atol=1e-12 * scale):
            raise InputError(f"lagrangian: its kinetic metric d2l/d(u, xi)^2 is not symmetric "
                             f"{where}")
        eig, vec = np.linalg.eigh(M)
        if eig[0] <= 1e-12 * scale:
            names = _metric_names(free)
            symbol = names[int(np.argmax(np.abs(vec[:, 0])))]
            raise InputError(
                f"lagrangian: its kinetic metric d2l/d(u, xi)^2 over ({', '.join(names)}) is "
                f"{'singular' if abs(eig[0]) <= 1e-12 * scale else 'indefinite'} {where} "
                f"(smallest eigenvalue {eig[0]:.3g}, mostly along {symbol}); a velocity that "
                "carries no kinetic energy must be prescribed")
        if nb:
            E = np.array(outputs[2][2][0], dtype=float)
            s = np.linalg.svd(E, compute_uv=False)
            if s[-1] <= 1e-10 * max(s[0], 1e-300):
                raise InputError(f"symmetry_basis: its {nb} columns (3 x {nb}) are dependent "
                                 f"{where} (singular values {np.round(s, 6).tolist()})")

    def scene_system(self) -> dict:
        """The "system" object of a scene or problem file for this vehicle."""
        return {"type": "generated_rdp", "library": str(self.library)}

    def system(self, *, integrator: dict | None = None, initial_state: dict | None = None,
               controls=None) -> System:
        """The simulated system (docs/scene.md, "generated_rdp"): ``initial_state`` with
        theta, x, y, shape (n_r), shape_velocity (n_r, 0 where prescribed) and
        locked_velocity (n_b); ``controls`` one per shape dof: its force, or its velocity
        where prescribed (anything as_signal takes)."""
        return scene_system(self.scene_system(), self.name, integrator, initial_state,
                            controls=as_signal(controls))

    def problem(self, problem: dict) -> Problem:
        """An optimal-control problem (a problem file's object, docs/dmoc.md) whose system
        is this vehicle. Its library is this program's own code: no allowance needed."""
        return parse_problem(json.dumps({**problem, "system": self.scene_system()}),
                             f"symbolic.{self.name}", allow_code=True)

    # The compiled entry points called directly (ctypes), for checks and debugging.
    def _call(self, entry: str, inputs: list, shapes: list):
        ins = [np.ascontiguousarray(a, dtype=float).reshape(-1) for a in inputs]
        outs = [np.zeros(s, order="F") for s in shapes]
        status = getattr(self._loaded(), f"marsden_{entry}")(
            *(a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for a in (*ins, *outs)))
        if status != 0:
            raise RuntimeError(f"marsden_{entry} returned {status}")
        return outs

    def lagrangian(self, r: ArrayLike, u: ArrayLike,
                   xi_: ArrayLike) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """(l, grad (2 n_r + 3), Hessian) at (r, u, xi) from the compiled code."""
        n = 2 * self.num_shape + 3
        l, g, H = self._call("rdp_lagrangian", [r, u, xi_], [1, n, (n, n)])
        return float(l[0]), g, H

    def connection(self, r: ArrayLike) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
        """(A (3 x n_r), [dA/dr_j]) from the compiled code."""
        nr = self.num_shape
        A, dA = self._call("rdp_connection", [r], [(3, nr), (3 * nr, max(nr, 1))])
        return A, [dA[:, j].reshape(3, nr, order="F") for j in range(nr)]

    def symmetry_basis(self,
                       r: ArrayLike) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
        """(E (3 x n_b), [dE/dr_j]) from the compiled code."""
        nr, nb = self.num_shape, self.num_symmetry
        E, dE = self._call("rdp_symmetry_basis", [r], [(3, nb), (3 * nb, max(nr, 1))])
        return E, [dE[:, j].reshape(3, nb, order="F") for j in range(nr)]

    def shape_force(self, r: ArrayLike, u: ArrayLike,
                    xi_: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(f_r (n_r), df_r/d(r, u, xi) (n_r x (2 n_r + 3))) at (r, u, xi) from the
        compiled code; zeros when the vehicle has no shape force."""
        nr = self.num_shape
        if not self.has_shape_force:
            return np.zeros(nr), np.zeros((nr, 2 * nr + 3))
        f, J = self._call("rdp_shape_force", [r, u, xi_], [nr, (nr, 2 * nr + 3)])
        return f, J

    def momentum(self, r: ArrayLike, u: ArrayLike, xi_: ArrayLike) -> NDArray[np.float64]:
        """The nonholonomic momentum p_b = <dl/dxi, e_b(r)> (n_b), at (r, u, xi), of the
        symmetry directions the constraints leave free (vehicles §3.2): the momentum
        equation drives it by the shape velocity alone (docs/own-system.md)."""
        _, g, _ = self.lagrangian(r, u, xi_)
        E, _ = self.symmetry_basis(r)
        return E.T @ g[2 * self.num_shape:]


# --- vehicles written this way (tests, benchmarks, docs/own-system.md) -----------------------

def car(m: float = 1.0, I: float = 0.1, K: float = 0.2, rho: float = 0.3, l: float = 1.0,
        name: str = "car_rdp") -> RdpVehicle:
    """The car of vehicles §5.2.1 (the built-in "car"'s physics, CarParams): shape (psi,
    sigma) = (rear wheel angle, tan of the steering angle), connection eq. (18), no
    steering inertia, so sigma's velocity is prescribed (the steering rate)."""
    r, u = shape(2)
    return RdpVehicle(name, shape=(r, u),
                      lagrangian=0.5 * (I * u[0] ** 2 + K * omega ** 2 + m * (v1 ** 2 + v2 ** 2)),
                      connection=[[-(rho / l) * r[1], 0], [-rho, 0], [0, 0]], prescribed=[1])


def snakeboard(m: float = 1.0, l: float = 0.5, I: float = 0.2, J: float = 0.05,
               prescribe_shape: bool = False, name: str = "snakeboard_rdp") -> RdpVehicle:
    """The snakeboard of vehicles §5.2.2 with the connection of docs/papers.md (the
    built-in "snakeboard"): shape (psi, phi) = (rotor angle, steering angle)."""
    r, u = shape(2)
    phi = r[1]
    lag = 0.5 * (I * u[0] ** 2 + 2 * I * u[0] * omega + m * l ** 2 * omega ** 2
                 + 2 * J * u[1] ** 2 + m * (v1 ** 2 + v2 ** 2))
    A = [[I / (m * l ** 2) * ca.sin(phi) ** 2, 0], [-I / (2 * m * l) * ca.sin(2 * phi), 0], [0, 0]]
    E = [ca.sin(2 * phi), -2 * l * ca.cos(phi) ** 2, 0]
    return RdpVehicle(name, shape=(r, u), lagrangian=lag, connection=A, symmetry_basis=E,
                      prescribed=[0, 1] if prescribe_shape else [])


def sleigh(m: float = 1.0, J: float = 0.1, a: float = 0.5, name: str = "sleigh_rdp") -> RdpVehicle:
    """The Chaplygin sleigh (the built-in "sleigh"): no shape, xi at the centre of mass,
    the skate at a on the body x axis (v2 + a omega = 0)."""
    return RdpVehicle(name, lagrangian=0.5 * (J * omega ** 2 + m * (v1 ** 2 + v2 ** 2)),
                      symmetry_basis=[[1, 0], [0, 1], [-a, 0]])


def roller_racer(m1: float = 1.0, I1: float = 0.1, m2: float = 0.8, I2: float = 0.08,
                 d1: float = 0.5, d2: float = 0.4, damping: float = 0.0, stiffness: float = 0.0,
                 rest_angle: float = 0.0, joint_potential: bool = False,
                 name: str = "roller_racer") -> RdpVehicle:
    """The roller racer (after Krishnaprasad and Tsakiris): two bodies joined by a revolute
    joint, each on a wheel pair that cannot slip sideways; the rider drives the joint.

    Derived here (docs/own-system.md): the pose g = (theta, x, y) is body 1's axle centre,
    also its centre of mass (m1, I1); the joint lies d1 ahead of it on body 1's x axis;
    body 2 (m2, I2) is turned by the shape r = phi (joint angle) and has its axle centre
    and centre of mass d2 behind the joint. In body 1's frame body 2's centre moves with
        V2 = (v1 + d2 (omega + u) sin phi, v2 + d1 omega - d2 (omega + u) cos phi),
    so l = 1/2 (m1 |v|^2 + I1 omega^2 + m2 |V2|^2 + I2 (omega + u)^2). The wheels ask
    v2 = 0 and V2 . (-sin phi, cos phi) = 0, i.e. (d1 cos phi - d2) omega - sin phi v1 =
    d2 u: s_r is spanned by e1 = (sin phi, d1 cos phi - d2, 0), and -A u is the solution
    along the constraint normal n = (d1 cos phi - d2, -sin phi, 0):
    A = -d2 n / |n|^2 (|n| > 0 when d1 != d2).

    The joint may carry a damper (damping c, N m s/rad) and a spring (stiffness k, N m/rad,
    rest angle r0): the shape force f_r = -c u - k (phi - r0), added to the rider's torque.
    With joint_potential the spring is instead written into the Lagrangian as l - V,
    V = k/2 (phi - r0)^2 (the damper stays a force): the same dynamics, used as the
    independent formulation in the tests."""
    if not all(x > 0 for x in (m1, I1, m2, I2, d1, d2)) or d1 == d2:
        raise InputError("roller_racer: m1, I1, m2, I2, d1, d2 must be positive, d1 != d2")
    for key, value in (("damping", damping), ("stiffness", stiffness),
                       ("rest_angle", rest_angle)):
        if not isinstance(value, (int, float)) or not np.isfinite(value):
            raise InputError(f"roller_racer: {key} must be a finite number, got {value!r}")
    if damping < 0 or stiffness < 0:
        raise InputError(f"roller_racer: damping ({damping!r}) and stiffness ({stiffness!r}) "
                         "must not be negative")
    r, u = shape(1)
    phi, w2 = r[0], omega + u[0]
    V2 = ca.vertcat(v1 + d2 * w2 * ca.sin(phi), v2 + d1 * omega - d2 * w2 * ca.cos(phi))
    lag = 0.5 * (m1 * (v1 ** 2 + v2 ** 2) + I1 * omega ** 2 + m2 * ca.dot(V2, V2) + I2 * w2 ** 2)
    n = ca.vertcat(d1 * ca.cos(phi) - d2, -ca.sin(phi), 0)
    spring = stiffness * (phi - rest_angle)
    if joint_potential:
        lag -= 0.5 * spring * (phi - rest_angle)
        force = -damping * u[0]
    else:
        force = -damping * u[0] - spring
    return RdpVehicle(name, shape=(r, u), lagrangian=lag, connection=-d2 * n / ca.dot(n, n),
                      symmetry_basis=ca.vertcat(ca.sin(phi), d1 * ca.cos(phi) - d2, 0),
                      shape_force=force if damping or (stiffness and not joint_potential)
                      else None)


def differential_drive(m: float = 2.0, I: float = 0.05, I_w: float = 0.002, rho: float = 0.05,
                       b: float = 0.15, d: float = 0.0,
                       name: str = "differential_drive") -> RdpVehicle:
    """A two-wheeled differential-drive robot: a chassis (mass m, wheels' mass included, and
    inertia I about the vertical axis through the axle's midpoint) whose centre of mass lies
    d ahead of that midpoint, two wheels of radius rho at +-b on the axle (left at +b),
    each with spin inertia I_w; the inputs are the two wheel torques.

    Derived here (docs/own-system.md): the pose g = (theta, x, y) is the axle midpoint, the
    shape r = (phi_L, phi_R) the wheel angles. The centre of mass moves with (v1, v2 + d
    omega) in the body frame, so l = 1/2 (m (v1^2 + v2^2) + 2 m d omega v2 + I omega^2
    + I_w (u_L^2 + u_R^2)). Wheel j's centre moves with (v1 -+ b omega, v2); no side slip
    and rolling ask v2 = 0, v1 - b omega = rho u_L, v1 + b omega = rho u_R, which fix xi
    = -A u with A = -[[-rho/2b, rho/2b], [rho/2, rho/2], [0, 0]] and leave no symmetry
    direction (n_b = 0). The metric is positive definite when I > m d^2."""
    values = {"m": m, "I": I, "I_w": I_w, "rho": rho, "b": b, "d": d}
    for key, value in values.items():
        if not isinstance(value, (int, float)) or not np.isfinite(value):
            raise InputError(f"differential_drive: {key} must be a finite number, got {value!r}")
    for key in ("m", "I", "I_w", "rho", "b"):
        if values[key] <= 0:
            raise InputError(f"differential_drive: {key} must be positive, got {values[key]!r}")
    if I <= m * d ** 2:
        raise InputError(f"differential_drive: I = {I!r} must exceed m d^2 = {m * d ** 2!r} "
                         "(I is taken about the axle's midpoint)")
    r, u = shape(2)
    lag = 0.5 * (m * (v1 ** 2 + v2 ** 2) + 2 * m * d * omega * v2 + I * omega ** 2
                 + I_w * (u[0] ** 2 + u[1] ** 2))
    A = [[rho / (2 * b), -rho / (2 * b)], [-rho / 2, -rho / 2], [0, 0]]
    return RdpVehicle(name, shape=(r, u), lagrangian=lag, connection=A)
