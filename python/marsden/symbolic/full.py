"""Mechanical systems in full coordinates q in R^n for the GNI and RATTLE integrators
(nonholonomic paper §4): L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q), nonholonomic constraints
mu(q) qdot = 0, holonomic constraints h(q) = 0 (entering as their differentials
dh/dq qdot = 0, appended to mu), control forces B(q) u, a generalized force Q(q, qdot) and
prescribed coordinates. The C side is include/marsden/nonholonomic/generated.hpp."""

from __future__ import annotations

import ctypes
import json
import math
import re

import numpy as np
import casadi as ca

from .._core import InputError, System
from ..signals import as_signal
from ._codegen import CompiledObject, _as_sx, _check_shape, _compile, _function, scene_system

NH_ABI_VERSION = 1  # kGeneratedNhAbiVersion of include/marsden/nonholonomic/generated.hpp
NH_MAX_DOF = 8      # kNhMaxDof of include/marsden/nonholonomic/model.hpp
NH_MAX_BODIES = 16  # kNhMaxBodies of include/marsden/nonholonomic/generated.hpp


def _symbols(value, what: str) -> ca.SX:
    if not isinstance(value, ca.SX) or value.size2() != 1 or not value.is_valid_input() \
            or not 2 <= value.numel() <= NH_MAX_DOF:
        raise InputError(f"{what}: expected a column of 2..{NH_MAX_DOF} distinct CasADi symbols "
                         "(ca.SX.sym(name, n) or ca.vertcat of ca.SX.sym scalars)")
    return value


_STATIC_CALL = """
static int call_{f}(const casadi_real** args, casadi_real** results) {{
  const casadi_real* arg[{sz_arg}];
  casadi_real* res[{sz_res}];
  casadi_int iw[{sz_iw}];
  casadi_real w[{sz_w}];
  int k;
  for (k = 0; k < {n_in}; ++k) arg[k] = args[k];
  for (k = 0; k < {n_out}; ++k) res[k] = results[k];
  return {f}(arg, res, iw, w, 0);
}}
"""


def _static_call(f: ca.Function) -> str:
    """A reentrant caller of the generated function f, its work arrays on the stack."""
    return _STATIC_CALL.format(f=f.name(), sz_arg=max(f.sz_arg(), 1), sz_res=max(f.sz_res(), 1),
                               sz_iw=max(f.sz_iw(), 1), sz_w=max(f.sz_w(), 1), n_in=f.n_in(),
                               n_out=f.n_out())


# The shapes a Body can have: its name in the viewer and the semi-axes from the sizes given.
_SHAPES = {"box": (3, lambda a, b, c: [a / 2, b / 2, c / 2]),
           "cylinder": (2, lambda r, w: [r, r, w / 2]),
           "sphere": (1, lambda r: [r, r, r])}


class Body:
    """A rigid body to draw, its pose a function of the coordinates q: ``position`` (a
    3-vector expression, m) and ``rotation`` (3 x 3, body to world), or ``pose`` a planar
    pose (theta, x, y) on the ground (position (x, y, 0), rotation Rz(theta)). ``shape``:
    ("box", length_x, length_y, length_z), ("cylinder", radius, width) along the body's z,
    or ("sphere", radius); centred at the body frame's origin. Given to NonholonomicSystem
    (``bodies=[...]``), which checks the expressions and compiles their poses."""

    def __init__(self, name: str, *, position=None, rotation=None, pose=None, shape):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_ .-]{0,63}", name):
            raise InputError(f"Body name: expected letters, digits, '_', ' ', '.' or '-', "
                             f"got {name!r}")
        self.name = name
        where = f"body {name!r}"
        if pose is not None:
            if position is not None or rotation is not None:
                raise InputError(f"{where}: give either pose or position and rotation")
            pose = _as_sx(pose, f"{where}: pose")
            if pose.size2() != 1:
                pose = pose.T
            _check_shape(pose, 3, 1, f"{where}: pose (theta, x, y)")
            c, s = ca.cos(pose[0]), ca.sin(pose[0])
            position = ca.vertcat(pose[1], pose[2], 0)
            rotation = ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))
        if position is None or rotation is None:
            raise InputError(f"{where}: needs position and rotation, or pose")
        position = _as_sx(position, f"{where}: position")
        if position.size2() != 1:
            position = position.T
        _check_shape(position, 3, 1, f"{where}: position")
        rotation = _as_sx(rotation, f"{where}: rotation")
        _check_shape(rotation, 3, 3, f"{where}: rotation")
        self.position, self.rotation = position, rotation
        if not (isinstance(shape, (tuple, list)) and shape and shape[0] in _SHAPES):
            raise InputError(f"{where}: shape: expected (kind, sizes...) with kind one of "
                             f"{sorted(_SHAPES)}, got {shape!r}")
        count, semi_axes = _SHAPES[shape[0]]
        sizes = list(shape[1:])
        if len(sizes) != count or not all(isinstance(x, (int, float, np.floating)) and
                                          not isinstance(x, bool) and math.isfinite(x) and x > 0
                                          for x in sizes):
            raise InputError(f"{where}: shape {shape[0]!r}: expected {count} positive sizes, "
                             f"got {sizes!r}")
        self.shape = "ellipsoid" if shape[0] == "sphere" else shape[0]
        self.semi_axes = [float(x) for x in semi_axes(*sizes)]


class NonholonomicSystem(CompiledObject):
    """A mechanical system in full coordinates from expressions (module docstring). Validates
    and compiles at construction (InputError naming the symbol or argument and its shape):

    - ``q``, ``qdot``: columns of n symbols (2 <= n <= 8), the coordinates and their rates;
    - ``lagrangian`` L(q, qdot): quadratic in qdot with no linear term, so that
      M(q) = d2L/dqdot2 and V(q) = -L(q, 0) give L = 1/2 qdot^T M qdot - V exactly;
    - ``constraints`` mu(q) (m x n): the nonholonomic constraints mu(q) qdot = 0;
    - ``holonomic`` h(q) (k, or None): holonomic constraints, imposed as dh/dq qdot = 0
      (rows appended to mu), so h itself drifts at the integrator's error level;
    - ``control_directions`` B(q) (n x c, or None): the control force is B(q) u;
    - ``force`` Q(q, qdot) (n, or None): a generalized force of q and qdot (N or N m per
      coordinate, like dL/dq; e.g. drag -c M(q) qdot) in
      d/dt dL/dqdot - dL/dq = Q + B u + mu^T lambda; GNI and RATTLE take it at the step's
      midpoint, dt/2 Q(q_m, (q_k+1 - q_k)/dt) on each side (include/marsden/nonholonomic/
      integrators.hpp). It must be finite at the probe point with qdot_i = 0.1 + 0.05 i;
    - ``prescribed``: coordinates (indices or the symbols of q) whose trajectory is an input;
      in a scene each takes its rate as a control after u;
    - ``probe``: the point q where M must be positive definite and mu of full row rank
      (default q_i = 0.3 + 0.17 i);
    - ``coordinate_names``: column names (default the names of the symbols of q);
    - ``bodies``: ``Body`` objects to draw in the viewer, their poses expressions of q
      (at most 16; none: the viewer draws a board at (theta, x, y) where the coordinates
      have these names, else only the ground).

    ``library`` is the compiled shared object, ``compiled`` whether this construction ran
    the compiler and ``compile_seconds`` how long it took."""

    def __init__(self, name: str, *, q, qdot, lagrangian, constraints, holonomic=None,
                 control_directions=None, force=None, prescribed=(), probe=None,
                 coordinate_names=None, bodies=()):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", name):
            raise InputError(f"name: expected a letter then letters, digits or _, got {name!r}")
        self.name = name
        q = _symbols(q, "q")
        qdot = _symbols(qdot, "qdot")
        n = q.numel()
        _check_shape(qdot, n, 1, "qdot")
        if ca.depends_on(ca.vertcat(*ca.vertsplit(qdot)), q):
            raise InputError("qdot: must be symbols distinct from those of q")
        self.q, self.qdot, self.dof = q, qdot, n
        names = [str(e) for e in ca.vertsplit(q)] if coordinate_names is None \
            else list(coordinate_names)
        if len(names) != n or not all(isinstance(s, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s)
                                      for s in names):
            raise InputError(f"coordinate_names: expected {n} identifiers, got {names!r}")
        self.coordinate_names = names

        L = _as_sx(lagrangian, "lagrangian")
        _check_shape(L, 1, 1, "lagrangian")
        _function("lagrangian", [q, qdot], [L], "lagrangian", "q, qdot")
        M = ca.hessian(L, qdot)[0]
        if ca.depends_on(M, qdot):
            raise InputError("lagrangian: is not quadratic in qdot (d2L/dqdot2 depends on qdot); "
                             "the interface is L = 1/2 qdot^T M(q) qdot - V(q)")
        V = -ca.substitute(L, qdot, ca.SX.zeros(n))
        linear = ca.substitute(ca.jacobian(L, qdot), qdot, ca.SX.zeros(n))

        mu = _as_sx(constraints, "constraints")
        _check_shape(mu, mu.size1(), n, "constraints")
        _function("constraints", [q], [mu], "constraints", "q")
        if holonomic is not None:
            h = _as_sx(holonomic, "holonomic")
            if h.size2() != 1:
                h = h.T
            _check_shape(h, h.size1(), 1, "holonomic")
            _function("holonomic", [q], [h], "holonomic", "q")
            mu = ca.vertcat(mu, ca.jacobian(h, q))
            self.holonomic_function = ca.Function("h", [q], [h])
        else:
            self.holonomic_function = None
        m = mu.size1()
        if not 1 <= m < n:
            raise InputError(f"constraints: expected 1..{n - 1} rows in all (holonomic rows "
                             f"included) for n = {n} coordinates, got {m}")
        if control_directions is None:
            B = ca.SX(n, 0)
        else:
            B = _as_sx(control_directions, "control_directions")
            _check_shape(B, n, None, "control_directions")
            if not 1 <= B.size2() <= NH_MAX_DOF:
                raise InputError(f"control_directions: expected 1..{NH_MAX_DOF} columns, got "
                                 f"{B.size2()}")
            _function("control_directions", [q], [B], "control_directions", "q")
        self.num_constraints, self.num_controls = m, B.size2()
        if force is not None:
            Q = _as_sx(force, "force")
            if Q.size2() != 1:
                Q = Q.T
            _check_shape(Q, n, 1, "force")
            _function("force", [q, qdot], [Q], "force", "q, qdot")
        self.has_force = force is not None

        flags = [False] * n
        symbols = ca.vertsplit(q)
        for p in prescribed:
            if isinstance(p, (int, np.integer)) and not isinstance(p, bool) and 0 <= p < n:
                flags[int(p)] = True
                continue
            hit = [i for i, s in enumerate(symbols) if isinstance(p, ca.SX) and p.is_symbolic()
                   and ca.is_equal(p, s)]
            if not hit:
                raise InputError(f"prescribed: {p!r} is neither an index in 0..{n - 1} nor a "
                                 "symbol of q")
            flags[hit[0]] = True
        self.prescribed = [i for i in range(n) if flags[i]]

        dM = [ca.reshape(ca.jacobian(ca.vec(M), q[i]), n, n) for i in range(n)]
        functions = [ca.Function("mx_nh_mass", [q], [ca.densify(M)])]
        functions += [ca.Function(f"mx_nh_dM_{i}", [q], [ca.densify(dM[i])]) for i in range(n)]
        ddM = {}
        for i in range(n):
            for j in range(i, n):
                ddM[i, j] = ca.reshape(ca.jacobian(ca.vec(dM[i]), q[j]), n, n)
                functions.append(ca.Function(f"mx_nh_ddM_{i}_{j}", [q], [ca.densify(ddM[i, j])]))
        grad_V = ca.gradient(V, q)
        functions.append(ca.Function("mx_nh_potential", [q], [ca.densify(e) for e in
                                                               (V, grad_V, ca.jacobian(grad_V, q))]))
        functions.append(ca.Function("mx_nh_mu", [q], [ca.densify(mu)]))
        functions += [ca.Function(f"mx_nh_dmu_{i}", [q],
                                  [ca.densify(ca.reshape(ca.jacobian(ca.vec(mu), q[i]), m, n))])
                      for i in range(n)]
        functions.append(ca.Function("mx_nh_B", [q], [ca.densify(B)]))
        if self.has_force:
            functions.append(ca.Function("mx_nh_force", [q, qdot], [ca.densify(e) for e in (
                Q, ca.jacobian(Q, q), ca.jacobian(Q, qdot))]))
        self.bodies = list(bodies)
        if len(self.bodies) > NH_MAX_BODIES or not all(isinstance(b, Body) for b in self.bodies):
            raise InputError(f"bodies: expected at most {NH_MAX_BODIES} marsden.symbolic.Body "
                             "objects")
        if len({b.name for b in self.bodies}) != len(self.bodies):
            raise InputError("bodies: two bodies have the same name")
        for k, b in enumerate(self.bodies):
            _function("body", [q], [b.position, b.rotation], f"body {b.name!r}", "q")
            functions.append(ca.Function(f"mx_nh_body_{k}", [q], [ca.densify(b.position),
                                                                  ca.densify(b.rotation)]))
        self._functions = {f.name(): f for f in functions}

        self.probe = np.array([0.3 + 0.17 * i for i in range(n)]) if probe is None \
            else np.asarray(probe, dtype=float).reshape(-1)
        if self.probe.shape != (n,) or not np.all(np.isfinite(self.probe)):
            raise InputError(f"probe: expected {n} finite numbers")
        self._check_at_probe(ca.Function("linear", [q], [linear]))

        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        for f in functions:
            codegen.add(f)
        source = codegen.dump()
        source += self._wrapper(functions)
        self.source = source
        self.library, self.compiled, self.compile_seconds = _compile(source, name)

    def _check_at_probe(self, linear: ca.Function) -> None:
        """Errors before stepping at the probe point, naming the symbol and its shape."""
        n, m, q0 = self.dof, self.num_constraints, self.probe
        f = self._functions
        at = f"at the probe point q = {np.array2string(q0, precision=3)}"
        for name, symbol in [("mx_nh_mass", "M = d2L/dqdot2"), ("mx_nh_potential", "V = -L(q, 0)"),
                             ("mx_nh_mu", "constraints"), ("mx_nh_B", "control_directions")]:
            for value in f[name].call([q0]):
                if not np.all(np.isfinite(np.array(value, dtype=float))):
                    raise InputError(f"{symbol}: is not finite {at}")
        if self.has_force:
            qdot0 = np.array([0.1 + 0.05 * i for i in range(n)])
            for value in f["mx_nh_force"].call([q0, qdot0]):
                if not np.all(np.isfinite(np.array(value, dtype=float))):
                    raise InputError(f"force: Q ({n} x 1) or its derivatives are not finite {at}"
                                     f" and qdot = {np.array2string(qdot0, precision=3)}")
        M = np.array(f["mx_nh_mass"](q0), dtype=float)
        lin = np.array(linear(q0), dtype=float)
        if np.abs(lin).max(initial=0.0) > 1e-12 * max(1.0, np.abs(M).max()):
            raise InputError(f"lagrangian: has a term linear in qdot (dL/dqdot at qdot = 0 is "
                             f"{np.array2string(lin.ravel(), precision=3)} {at}); the interface "
                             "is L = 1/2 qdot^T M(q) qdot - V(q)")
        eig = np.linalg.eigvalsh(M)
        if eig.min() <= 1e-12 * max(1.0, np.abs(eig).max()):
            raise InputError(f"lagrangian: its mass matrix M = d2L/dqdot2 ({n} x {n}) is singular "
                             f"or not positive definite {at} (smallest eigenvalue {eig.min():.3g})")
        mu = np.array(f["mx_nh_mu"](q0), dtype=float)
        rank = np.linalg.matrix_rank(mu, tol=1e-10 * max(1.0, np.abs(mu).max()))
        if rank < m:
            raise InputError(f"constraints: the {m} x {n} constraint matrix (holonomic rows dh/dq "
                             f"included) has dependent rows {at} (rank {rank} < {m})")
        for k, b in enumerate(self.bodies):
            x, R = (np.array(v, dtype=float) for v in f[f"mx_nh_body_{k}"](q0))
            if not (np.all(np.isfinite(x)) and np.all(np.isfinite(R))):
                raise InputError(f"body {b.name!r}: position or rotation is not finite {at}")
            error = np.abs(R.T @ R - np.eye(3)).max()
            if error > 1e-9 or np.linalg.det(R) < 0:
                raise InputError(f"body {b.name!r}: rotation (3 x 3) is not a rotation {at} "
                                 f"(|R^T R - I| = {error:.3g}, det {np.linalg.det(R):.3g})")

    def _wrapper(self, functions: list) -> str:
        n, f = self.dof, self._functions
        out = [f"\n/* Marsden nonholonomic ABI {NH_ABI_VERSION} "
               "(include/marsden/nonholonomic/generated.hpp). */\n"]
        out += [_static_call(fn) for fn in functions]
        prescribed = " || ".join(f"i == {i}" for i in self.prescribed) or "0"
        names = ", ".join(json.dumps(s) for s in self.coordinate_names)
        out.append(f"""
CASADI_SYMBOL_EXPORT int marsden_nh_abi_version(void) {{ return {NH_ABI_VERSION}; }}
CASADI_SYMBOL_EXPORT int marsden_nh_dof(void) {{ return {n}; }}
CASADI_SYMBOL_EXPORT int marsden_nh_num_constraints(void) {{ return {self.num_constraints}; }}
CASADI_SYMBOL_EXPORT int marsden_nh_num_controls(void) {{ return {self.num_controls}; }}
CASADI_SYMBOL_EXPORT int marsden_nh_prescribed(int i) {{ return {prescribed}; }}
CASADI_SYMBOL_EXPORT const char* marsden_nh_coordinate_name(int i) {{
  static const char* names[{n}] = {{{names}}};
  return i >= 0 && i < {n} ? names[i] : 0;
}}
CASADI_SYMBOL_EXPORT int marsden_nh_mass(const double* q, double* M) {{
  const casadi_real* a[1] = {{q}}; casadi_real* r[1] = {{M}};
  return call_mx_nh_mass(a, r);
}}
CASADI_SYMBOL_EXPORT int marsden_nh_mass_derivative(int i, const double* q, double* dM) {{
  const casadi_real* a[1] = {{q}}; casadi_real* r[1] = {{dM}};
  switch (i) {{
""")
        out += [f"    case {i}: return call_mx_nh_dM_{i}(a, r);\n" for i in range(n)]
        out.append("""    default: return 1;
  }
}
CASADI_SYMBOL_EXPORT int marsden_nh_mass_second_derivative(int i, int j, const double* q,
                                                            double* ddM) {
  const casadi_real* a[1] = {q}; casadi_real* r[1] = {ddM};
  if (i > j) { int k = i; i = j; j = k; }  /* symmetric in (i, j) */
""")
        out += [f"  if (i == {i} && j == {j}) return call_mx_nh_ddM_{i}_{j}(a, r);\n"
                for i in range(n) for j in range(i, n)]
        out.append("""  return 1;
}
CASADI_SYMBOL_EXPORT int marsden_nh_potential(const double* q, double* V, double* grad_V,
                                               double* hess_V) {
  const casadi_real* a[1] = {q}; casadi_real* r[3] = {V, grad_V, hess_V};
  return call_mx_nh_potential(a, r);
}
CASADI_SYMBOL_EXPORT int marsden_nh_constraint(const double* q, double* mu) {
  const casadi_real* a[1] = {q}; casadi_real* r[1] = {mu};
  return call_mx_nh_mu(a, r);
}
CASADI_SYMBOL_EXPORT int marsden_nh_constraint_derivative(int i, const double* q, double* dmu) {
  const casadi_real* a[1] = {q}; casadi_real* r[1] = {dmu};
  switch (i) {
""")
        out += [f"    case {i}: return call_mx_nh_dmu_{i}(a, r);\n" for i in range(n)]
        out.append("""    default: return 1;
  }
}
CASADI_SYMBOL_EXPORT int marsden_nh_control_directions(const double* q, double* B) {
  const casadi_real* a[1] = {q}; casadi_real* r[1] = {B};
  return call_mx_nh_B(a, r);
}
""")
        if self.has_force:
            out.append("""CASADI_SYMBOL_EXPORT int marsden_nh_force(
    const double* q, const double* qdot, double* Q, double* dQ_dq, double* dQ_dqdot) {
  const casadi_real* a[2] = {q, qdot}; casadi_real* r[3] = {Q, dQ_dq, dQ_dqdot};
  return call_mx_nh_force(a, r);
}
""")
        out.append(self._body_entries())
        return "".join(out)

    def _body_entries(self) -> str:
        """The optional body entries of the ABI: count, names, shapes, semi-axes, poses."""
        bodies = self.bodies
        count = max(len(bodies), 1)  # C has no empty arrays
        names = ", ".join(json.dumps(b.name) for b in bodies) or "0"
        shapes = ", ".join(json.dumps(b.shape) for b in bodies) or "0"
        axes = ", ".join(f"{{{', '.join(repr(x) for x in b.semi_axes)}}}" for b in bodies) or \
            "{0, 0, 0}"
        out = [f"""
CASADI_SYMBOL_EXPORT int marsden_nh_num_bodies(void) {{ return {len(bodies)}; }}
CASADI_SYMBOL_EXPORT const char* marsden_nh_body_name(int b) {{
  static const char* names[{count}] = {{{names}}};
  return b >= 0 && b < {len(bodies)} ? names[b] : 0;
}}
CASADI_SYMBOL_EXPORT const char* marsden_nh_body_shape(int b) {{
  static const char* shapes[{count}] = {{{shapes}}};
  return b >= 0 && b < {len(bodies)} ? shapes[b] : 0;
}}
CASADI_SYMBOL_EXPORT int marsden_nh_body_semi_axes(int b, double* semi_axes) {{
  static const double axes[{count}][3] = {{{axes}}};
  int k;
  if (b < 0 || b >= {len(bodies)}) return 1;
  for (k = 0; k < 3; ++k) semi_axes[k] = axes[b][k];
  return 0;
}}
CASADI_SYMBOL_EXPORT int marsden_nh_body_pose(int b, const double* q, double* x, double* R) {{
  const casadi_real* a[1] = {{q}}; casadi_real* r[2] = {{x, R}};
  switch (b) {{
"""]
        out += [f"    case {k}: return call_mx_nh_body_{k}(a, r);\n" for k in range(len(bodies))]
        out.append("""    default: return 1;
  }
}
""")
        return "".join(out)

    def scene_system(self) -> dict:
        """The "system" object of a scene file for this system."""
        return {"type": "generated_nonholonomic", "library": str(self.library)}

    def system(self, *, q0, qdot0, integrator: dict | None = None, controls=None) -> System:
        """The simulated system (docs/scene.md's "generated_nonholonomic"): initial state
        (q0, qdot0), ``integrator`` {"method": "gni" | "rattle" | "rk4", ...}, ``controls``
        u (c entries) then the rates of the prescribed coordinates, a signal or anything
        as_signal takes."""
        initial_state = {"q": [float(x) for x in np.ravel(q0)],
                         "qdot": [float(x) for x in np.ravel(qdot0)]}
        return scene_system(self.scene_system(), self.name, integrator, initial_state,
                            controls=as_signal(controls))

    # The compiled entry points called directly (ctypes), for checks and debugging.
    def _entry(self, name: str):
        return getattr(self._loaded(), f"marsden_nh_{name}")

    @staticmethod
    def _ptr(a: np.ndarray):
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    def _q(self, q) -> np.ndarray:
        return np.ascontiguousarray(q, dtype=float).reshape(self.dof)

    def _call(self, name: str, *args, shape) -> np.ndarray:
        out = np.zeros(shape, order="F")
        status = self._entry(name)(*args, self._ptr(out))
        if status != 0:
            raise InputError(f"{name}: returned status {status}")
        return out

    def mass(self, q) -> np.ndarray:
        """M(q) (n x n) from the compiled code."""
        n = self.dof
        return self._call("mass", self._ptr(self._q(q)), shape=(n, n))

    def mass_derivative(self, q, i: int) -> np.ndarray:
        """dM/dq_i (n x n) from the compiled code."""
        n = self.dof
        return self._call("mass_derivative", ctypes.c_int(i), self._ptr(self._q(q)), shape=(n, n))

    def mass_second_derivative(self, q, i: int, j: int) -> np.ndarray:
        """d2M/dq_i dq_j (n x n) from the compiled code."""
        n = self.dof
        return self._call("mass_second_derivative", ctypes.c_int(i), ctypes.c_int(j),
                          self._ptr(self._q(q)), shape=(n, n))

    def potential(self, q) -> tuple[float, np.ndarray, np.ndarray]:
        """(V, grad V (n), Hessian of V (n x n)) from the compiled code."""
        n = self.dof
        V, g, H = np.zeros(1), np.zeros(n), np.zeros((n, n), order="F")
        self._entry("potential")(*(self._ptr(a) for a in (self._q(q), V, g, H)))
        return float(V[0]), g, H

    def constraint(self, q) -> np.ndarray:
        """mu(q) (m x n), holonomic rows included, from the compiled code."""
        return self._call("constraint", self._ptr(self._q(q)),
                          shape=(self.num_constraints, self.dof))

    def constraint_derivative(self, q, i: int) -> np.ndarray:
        """dmu/dq_i (m x n) from the compiled code."""
        return self._call("constraint_derivative", ctypes.c_int(i), self._ptr(self._q(q)),
                          shape=(self.num_constraints, self.dof))

    def control_directions(self, q) -> np.ndarray:
        """B(q) (n x c) from the compiled code."""
        return self._call("control_directions", self._ptr(self._q(q)),
                          shape=(self.dof, self.num_controls))

    def force(self, q, qdot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Q (n), dQ/dq (n x n), dQ/dqdot (n x n)) at (q, qdot) from the compiled code."""
        if not self.has_force:
            raise InputError(f"{self.name}: has no force (NonholonomicSystem(..., force=...))")
        n = self.dof
        Q, dQ_dq, dQ_dqdot = np.zeros(n), np.zeros((n, n), order="F"), np.zeros((n, n), order="F")
        status = self._entry("force")(*(self._ptr(a) for a in (self._q(q), self._q(qdot), Q,
                                                                 dQ_dq, dQ_dqdot)))
        if status != 0:
            raise InputError(f"force: returned status {status}")
        return Q, dQ_dq, dQ_dqdot

    def body_pose(self, q, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Body b's position (3) and rotation (3 x 3) at q from the compiled code."""
        x, R = np.zeros(3), np.zeros((3, 3), order="F")
        status = self._entry("body_pose")(ctypes.c_int(b), self._ptr(self._q(q)), self._ptr(x),
                                          self._ptr(R))
        if status != 0:
            raise InputError(f"body_pose: returned status {status} for body {b}")
        return x, R

    def holonomic(self, q) -> np.ndarray:
        """h(q) (k), evaluated by CasADi (empty without holonomic constraints)."""
        if self.holonomic_function is None:
            return np.zeros(0)
        return np.array(self.holonomic_function(self._q(q)), dtype=float).ravel()


# --- systems written this way (tests, docs/own-system.md) -----------------------------------

def chaplygin_sleigh(inertia: float = 0.1, mass: float = 1.0, a: float = 0.5,
                     name: str = "sleigh_full", drag: float | None = None) -> NonholonomicSystem:
    """The Chaplygin sleigh in q = (theta, x, y), (x, y) the centre of mass, skate at a on the
    body x axis (the built-in "sleigh"): -sin(theta) xdot + cos(theta) ydot + a thetadot = 0.
    With ``drag`` c (1/s), viscous drag Q = -c M qdot (force -c m v on the centre of mass,
    torque -c J omega): as mu qdot = 0, the energy is E0 exp(-2 c t)."""
    q, qd = ca.SX.sym("q", 3), ca.SX.sym("qdot", 3)
    th = q[0]
    L = 0.5 * (inertia * qd[0] ** 2 + mass * (qd[1] ** 2 + qd[2] ** 2))
    mu = ca.horzcat(a, -ca.sin(th), ca.cos(th))
    force = None if drag is None else -drag * ca.vertcat(inertia * qd[0], mass * qd[1],
                                                         mass * qd[2])
    return NonholonomicSystem(name, q=q, qdot=qd, lagrangian=L, constraints=mu, force=force,
                              coordinate_names=["theta", "x", "y"])


def snakeboard(rotor_inertia: float = 0.2, wheel_inertia: float = 0.05, mass: float = 1.0,
               l: float = 0.5, name: str = "snakeboard_full") -> NonholonomicSystem:
    """The snakeboard in q = (psi, phi, theta, x, y) (vehicles §5.2.2, the built-in
    "snakeboard"): L = 1/2 (I psi_dot^2 + 2 I psi_dot theta_dot + m l^2 theta_dot^2
    + 2 J phi_dot^2 + m |v|^2), the two wheel pairs roll without slipping; torques on psi, phi."""
    q, qd = ca.SX.sym("q", 5), ca.SX.sym("qdot", 5)
    I, J, m = rotor_inertia, wheel_inertia, mass
    phi, th = q[1], q[2]
    L = 0.5 * (I * qd[0] ** 2 + 2 * I * qd[0] * qd[2] + m * l ** 2 * qd[2] ** 2
               + 2 * J * qd[1] ** 2 + m * (qd[3] ** 2 + qd[4] ** 2))
    mu = ca.vertcat(ca.horzcat(0, 0, -l * ca.cos(phi), -ca.sin(th + phi), ca.cos(th + phi)),
                    ca.horzcat(0, 0, l * ca.cos(phi), -ca.sin(th - phi), ca.cos(th - phi)))
    B = np.zeros((5, 2))
    B[0, 0] = B[1, 1] = 1.0
    return NonholonomicSystem(name, q=q, qdot=qd, lagrangian=L, constraints=mu,
                              control_directions=B,
                              coordinate_names=["psi", "phi", "theta", "x", "y"])


def car(mass: float = 1.0, wheel_inertia: float = 0.1, body_inertia: float = 0.2,
        wheel_radius: float = 0.3, axle_distance: float = 1.0, steering_inertia: float = 1.0,
        name: str = "car_full") -> NonholonomicSystem:
    """The car of Kelly and Murray in q = (psi, sigma, theta, x, y) (vehicles §5.2.1; NhCar of
    nonholonomic/model.hpp): rear wheel angle psi, sigma = tan(steering) prescribed (its rate
    is the second input), a torque on psi (the first)."""
    q, qd = ca.SX.sym("q", 5), ca.SX.sym("qdot", 5)
    rho, l = wheel_radius, axle_distance
    sigma, th = q[1], q[2]
    L = 0.5 * (wheel_inertia * qd[0] ** 2 + steering_inertia * qd[1] ** 2
               + body_inertia * qd[2] ** 2 + mass * (qd[3] ** 2 + qd[4] ** 2))
    mu = ca.vertcat(ca.horzcat(-rho, 0, 0, ca.cos(th), ca.sin(th)),
                    ca.horzcat(0, 0, 0, -ca.sin(th), ca.cos(th)),
                    ca.horzcat(-(rho / l) * sigma, 0, 1, 0, 0))
    return NonholonomicSystem(name, q=q, qdot=qd, lagrangian=L, constraints=mu,
                              control_directions=[[1], [0], [0], [0], [0]], prescribed=[sigma],
                              coordinate_names=["psi", "sigma", "theta", "x", "y"])


def rolling_disk(mass: float = 1.0, radius: float = 0.5, name: str = "rolling_disk"
                 ) -> NonholonomicSystem:
    """The vertical rolling disk (nonholonomic paper §4) in q = (x, y, theta, phi): contact
    point (x, y), rolling angle theta, heading phi; a uniform disk, I = m R^2 / 2 about its
    axle, J = m R^2 / 4 about the vertical. It rolls without slipping:
    xdot = R cos(phi) thetadot, ydot = R sin(phi) thetadot. Drawn as a cylinder of width
    R / 5 centred at (x, y, R), its axis (the body z) along the axle: rotation
    Rz(phi) Ry(theta) Rx(-pi/2) (Rx(-pi/2) turns the body z to the heading frame's y, the
    axle, about which the disk turns by theta)."""
    q, qd = ca.SX.sym("q", 4), ca.SX.sym("qdot", 4)
    R, theta, phi = radius, q[2], q[3]
    I, J = 0.5 * mass * R ** 2, 0.25 * mass * R ** 2
    L = 0.5 * (mass * (qd[0] ** 2 + qd[1] ** 2) + I * qd[2] ** 2 + J * qd[3] ** 2)
    mu = ca.vertcat(ca.horzcat(1, 0, -R * ca.cos(phi), 0), ca.horzcat(0, 1, -R * ca.sin(phi), 0))
    rotation = _rotation_z(phi) @ _rotation_y(theta) @ _rotation_x(-math.pi / 2)
    disk = Body("disk", position=ca.vertcat(q[0], q[1], R), rotation=rotation,
                shape=("cylinder", R, 0.2 * R))
    return NonholonomicSystem(name, q=q, qdot=qd, lagrangian=L, constraints=mu,
                              coordinate_names=["x", "y", "theta", "phi"], bodies=[disk])


def _rotation_x(a) -> ca.SX:
    c, s = ca.cos(a), ca.sin(a)
    return ca.vertcat(ca.horzcat(1, 0, 0), ca.horzcat(0, c, -s), ca.horzcat(0, s, c))


def _rotation_y(a) -> ca.SX:
    c, s = ca.cos(a), ca.sin(a)
    return ca.vertcat(ca.horzcat(c, 0, s), ca.horzcat(0, 1, 0), ca.horzcat(-s, 0, c))


def _rotation_z(a) -> ca.SX:
    c, s = ca.cos(a), ca.sin(a)
    return ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))


def ball_on_turntable(mass: float = 1.0, radius: float = 0.1, table_inertia: float = 1.0e3,
                      table_radius: float = 1.0, name: str = "ball_turntable"
                      ) -> NonholonomicSystem:
    """A uniform ball (I = 2/5 m r^2) rolling without slipping on a free turntable of inertia
    ``table_inertia`` about its axle, in q = (x, y, a_z, a_y, a_x, alpha): the ball's centre
    (x, y), its orientation R = Rz(a_z) Ry(a_y) Rx(a_x) (singular at a_y = +-pi/2) and the
    table's angle alpha. The contact point moves with the table:
    xdot - r omega_y + alpha_dot y = 0,  ydot + r omega_x - alpha_dot x = 0,  omega the
    spatial angular velocity. For a table much heavier than the ball (its rate Omega
    then nearly constant) the centre moves on a circle at the rate 2/7 Omega
    (I / (I + m r^2) Omega). Drawn as the ball at (x, y, r) and the table, a disk of radius
    ``table_radius`` whose top is the ground, turned by alpha."""
    q, qd = ca.SX.sym("q", 6), ca.SX.sym("qdot", 6)
    az, ay = q[2], q[3]
    Rz, Ry = _rotation_z(az), _rotation_y(ay)
    ez, ey, ex = ca.DM([0, 0, 1]), ca.DM([0, 1, 0]), ca.DM([1, 0, 0])
    # omega = W(q) (a_z, a_y, a_x)_dot: the columns are the spatial rotation axes.
    W = ca.horzcat(ez, Rz @ ey, Rz @ Ry @ ex)
    omega = W @ qd[2:5]
    I = 0.4 * mass * radius ** 2
    L = 0.5 * (mass * (qd[0] ** 2 + qd[1] ** 2) + I * ca.dot(omega, omega)
               + table_inertia * qd[5] ** 2)
    r = radius
    # The rolling conditions are linear in qdot: mu is their Jacobian in qdot.
    rows = ca.vertcat(qd[0] - r * omega[1] + qd[5] * q[1], qd[1] + r * omega[0] - qd[5] * q[0])
    mu = ca.jacobian(rows, qd)
    thickness = 0.02 * table_radius
    bodies = [Body("ball", position=ca.vertcat(q[0], q[1], r), rotation=Rz @ Ry @ _rotation_x(q[4]),
                   shape=("sphere", r)),
              Body("table", position=[0, 0, -thickness / 2], rotation=_rotation_z(q[5]),
                   shape=("cylinder", table_radius, thickness))]
    return NonholonomicSystem(name, q=q, qdot=qd, lagrangian=L, constraints=mu,
                              coordinate_names=["x", "y", "a_z", "a_y", "a_x", "alpha"],
                              bodies=bodies)
