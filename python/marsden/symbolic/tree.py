"""Tree elements from expressions (docs/own-system.md, "Tree elements"): a potential
V(q_c), a generalized force Q(q_c, qdot_c) or a holonomic constraint h(q_c) = 0 over a few
coordinates of a tree system (marsden.tree), written as a CasADi expression. Marsden
derives dV/dq_c and d2V/dq_c2 (dQ/dq_c and dQ/dqdot_c; Dh and the weighted Hessian
sum_i w_i d2h_i/dq_c2), generates C code, compiles it into a cached shared object and
loads it into the tree model as an element that enters the Lagrangian as a coordinate
spring does (the forces as a coordinate damper does, the constraints as the built-in ones
do), for the midpoint and Galerkin variational integrators, RK4 and tree DMOC alike. The C
side is include/marsden/tree/generated.hpp.

    import casadi as ca
    from marsden import symbolic as sym, tree
    q1, q2 = ca.SX.sym("q1"), ca.SX.sym("q2")            # named as the model's coordinates
    torsion = sym.TreePotential("torsion", coordinates=[q1, q2],
                                potential=3.0 * (1 - ca.cos(q1 - q2)))
    model = tree.with_potentials(tree.n_link_pendulum(2), torsion)
"""

from __future__ import annotations

import ctypes
import json
import re

import numpy as np
import casadi as ca

from .._core import InputError
from ._codegen import CompiledObject, _as_sx, _check_shape, _compile, _function
from .full import _static_call

TREE_ABI_VERSION = 1      # kGeneratedTreeAbiVersion of include/marsden/tree/generated.hpp
TREE_MAX_COORDS = 16      # kGeneratedElementMaxCoords of include/marsden/tree/model.hpp


def _coordinates(coordinates) -> tuple[list, list]:
    """(symbols, references): each reference the model coordinate's name (str) or index
    (int) that the symbol stands for."""
    if isinstance(coordinates, dict):
        items = list(coordinates.items())
    elif isinstance(coordinates, ca.SX):
        items = [(None, s) for s in ca.vertsplit(coordinates)]
    else:
        try:
            items = [(None, s) for s in coordinates]
        except TypeError:
            items = []
    if not 1 <= len(items) <= TREE_MAX_COORDS:
        raise InputError(f"coordinates: expected 1..{TREE_MAX_COORDS} CasADi symbols (a list, "
                         "named as the model's coordinates, or a dict {coordinate name or "
                         f"index: symbol}}), got {len(items)}")
    symbols, refs = [], []
    for key, s in items:
        if not isinstance(s, ca.SX) or s.numel() != 1 or not s.is_symbolic():
            raise InputError(f"coordinates: {s!r} (for {key!r}) is not a scalar CasADi symbol "
                             "(ca.SX.sym(name))")
        if key is None:
            key = s.name()
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if key < 0:
                raise InputError(f"coordinates: index {key} is negative")
            refs.append(int(key))
        elif isinstance(key, str) and key and "\0" not in key:
            refs.append(key)
        else:
            raise InputError(f"coordinates: {key!r} is neither a coordinate name nor an index")
        symbols.append(s)
    if len(set(refs)) != len(refs):
        raise InputError(f"coordinates: a coordinate appears twice in {refs!r}")
    for a in range(len(symbols)):
        for b in range(a):
            if ca.is_equal(symbols[a], symbols[b]):
                raise InputError(f"coordinates: symbol {symbols[a].name()} stands for two "
                                 f"coordinates ({refs[b]!r} and {refs[a]!r})")
    return symbols, refs


def _element_wrapper(kind: str, f: ca.Function, coordinates: list) -> str:
    """The ABI's version, size and coordinate entry points of a tree element of this kind."""
    n = len(coordinates)
    names = ", ".join(json.dumps(r) if isinstance(r, str) else "0" for r in coordinates)
    indices = ", ".join(str(r) if isinstance(r, int) else "-1" for r in coordinates)
    return f"""
/* Marsden tree ABI {TREE_ABI_VERSION} (include/marsden/tree/generated.hpp). */
{_static_call(f)}
CASADI_SYMBOL_EXPORT int marsden_tree_abi_version(void) {{ return {TREE_ABI_VERSION}; }}
CASADI_SYMBOL_EXPORT int marsden_tree_{kind}_size(void) {{ return {n}; }}
CASADI_SYMBOL_EXPORT const char* marsden_tree_{kind}_coordinate(int i) {{
  static const char* names[{n}] = {{{names}}};
  return i >= 0 && i < {n} ? names[i] : 0;
}}
CASADI_SYMBOL_EXPORT int marsden_tree_{kind}_coordinate_index(int i) {{
  static const int indices[{n}] = {{{indices}}};
  return i >= 0 && i < {n} ? indices[i] : -1;
}}
"""


def _name(name) -> str:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", name):
        raise InputError(f"name: expected a letter then letters, digits or _, got {name!r}")
    return name


def _probe(probe, default, what: str) -> np.ndarray:
    value = np.asarray(default if probe is None else probe, dtype=float).reshape(-1)
    if value.shape != (len(default),) or not np.all(np.isfinite(value)):
        raise InputError(f"{what}: expected {len(default)} finite numbers")
    return value


def _call(lib, entry: str, name: str, arrays) -> None:
    status = getattr(lib, entry)(*[a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
                                   for a in arrays])
    if status != 0:
        raise InputError(f"{name}: {entry} returned status {status}")


class TreePotential(CompiledObject):
    """A potential V(q_c) of some of a tree's coordinates (module docstring). Validates and
    compiles at construction (InputError naming the argument, the symbol and the shape):

    - ``coordinates``: the symbols V uses, one per coordinate: a list of scalar symbols
      named as the model's coordinates (``ca.SX.sym("theta1")``), or a dict
      {coordinate name or index: symbol};
    - ``potential`` V (1 x 1, J) of those symbols only;
    - ``probe``: the point q_c where V, its gradient and Hessian must be finite (default
      0.3 + 0.17 i).

    Which model coordinates the names or indices denote is resolved when the potential is
    added to a model (``tree.Builder.potential``, ``tree.with_potentials``, a scene's
    ``"potentials"``); a name the model lacks is an error naming it and the model's
    coordinates. ``library`` is the compiled object, ``compiled`` whether this
    construction ran the compiler."""

    def __init__(self, name: str, *, coordinates, potential, probe=None):
        self.name = _name(name)
        symbols, self.coordinates = _coordinates(coordinates)
        n = self.size = len(symbols)
        q_c = ca.vertcat(*symbols)
        V = _as_sx(potential, "potential")
        _check_shape(V, 1, 1, "potential")
        names = ", ".join(s.name() for s in symbols)
        _function("potential", [q_c], [V], "potential", names)
        grad_V = ca.gradient(V, q_c)
        f = ca.Function("mx_tree_potential", [q_c],
                        [ca.densify(e) for e in (V, grad_V, ca.jacobian(grad_V, q_c))])
        self._function = f
        self.probe = _probe(probe, [0.3 + 0.17 * i for i in range(n)], "probe")
        at = f"at the probe point ({names}) = {np.array2string(self.probe, precision=3)}"
        for what, value in zip(("V", f"dV/dq_c ({n})", f"d2V/dq_c2 ({n} x {n})"),
                               f.call([self.probe])):
            if not np.all(np.isfinite(np.array(value, dtype=float))):
                raise InputError(f"potential: {what} is not finite {at}")

        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        codegen.add(f)
        self.source = codegen.dump() + self._wrapper()
        self.library, self.compiled, self.compile_seconds = _compile(self.source, name)

    def _wrapper(self) -> str:
        return _element_wrapper("potential", self._function, self.coordinates) + """
CASADI_SYMBOL_EXPORT int marsden_tree_potential(const double* q_c, double* V, double* grad_V,
                                                double* hess_V) {
  const casadi_real* a[1] = {q_c}; casadi_real* r[3] = {V, grad_V, hess_V};
  return call_mx_tree_potential(a, r);
}
"""

    def scene_element(self) -> dict:
        """The entry of a tree scene's ``"system": {"potentials": [...]}`` for this
        potential."""
        return {"library": str(self.library)}

    def potential(self, q_c) -> tuple[float, np.ndarray, np.ndarray]:
        """(V, dV/dq_c (n_c), d2V/dq_c2 (n_c x n_c)) from the compiled code."""
        n = self.size
        q = np.ascontiguousarray(q_c, dtype=float).reshape(n)
        V, g, H = np.zeros(1), np.zeros(n), np.zeros((n, n), order="F")
        _call(self._loaded(), "marsden_tree_potential", self.name, (q, V, g, H))
        return float(V[0]), g, H


class TreeForce(CompiledObject):
    """A generalized force Q(q_c, qdot_c) on some of a tree's coordinates (a nonlinear
    damper, drag, a follower torque). Validates and compiles at construction (InputError
    naming the argument, the symbol and the shape):

    - ``coordinates``: the coordinates' symbols, as for ``TreePotential``;
    - ``velocities``: one scalar symbol per coordinate, in the same order, its rate;
    - ``force`` Q (n_c x 1; N or N m), the generalized force on those coordinates, of
      those symbols only;
    - ``probe`` (q_c) and ``velocity_probe`` (qdot_c): where Q and its derivatives must be
      finite (defaults 0.3 + 0.17 i and 0.2 - 0.11 i).

    Marsden derives dQ/dq_c and dQ/dqdot_c; the element adds Q, Q_q and Q_v where the
    coordinate dampers' go. The controls stay the model's inputs."""

    def __init__(self, name: str, *, coordinates, velocities, force, probe=None,
                 velocity_probe=None):
        self.name = _name(name)
        symbols, self.coordinates = _coordinates(coordinates)
        n = self.size = len(symbols)
        try:
            rates = list(ca.vertsplit(velocities) if isinstance(velocities, ca.SX) else velocities)
        except TypeError:
            rates = []
        if len(rates) != n or not all(isinstance(r, ca.SX) and r.numel() == 1 and r.is_symbolic()
                                      for r in rates):
            raise InputError(f"velocities: expected {n} scalar CasADi symbols, one per "
                             "coordinate in the same order")
        every = symbols + rates
        for a in range(len(every)):
            for b in range(a):
                if ca.is_equal(every[a], every[b]):
                    raise InputError(f"velocities: symbol {every[a].name()} is used twice "
                                     "among the coordinates and velocities")
        q_c, qd_c = ca.vertcat(*symbols), ca.vertcat(*rates)
        Q = _as_sx(force, "force")
        if Q.size1() == 1 and Q.size2() == n and n > 1:
            Q = Q.T
        _check_shape(Q, n, 1, "force")
        names = ", ".join(s.name() for s in every)
        _function("force", [q_c, qd_c], [Q], "force", names)
        f = ca.Function("mx_tree_force", [q_c, qd_c],
                        [ca.densify(e) for e in (Q, ca.jacobian(Q, q_c), ca.jacobian(Q, qd_c))])
        self._function = f
        self.probe = _probe(probe, [0.3 + 0.17 * i for i in range(n)], "probe")
        self.velocity_probe = _probe(velocity_probe, [0.2 - 0.11 * i for i in range(n)],
                                     "velocity_probe")
        at = (f"at the probe point ({names}) = "
              f"{np.array2string(np.concatenate([self.probe, self.velocity_probe]), precision=3)}")
        for what, value in zip((f"Q ({n} x 1)", f"dQ/dq_c ({n} x {n})", f"dQ/dqdot_c ({n} x {n})"),
                               f.call([self.probe, self.velocity_probe])):
            if not np.all(np.isfinite(np.array(value, dtype=float))):
                raise InputError(f"force: {what} is not finite {at}")
        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        codegen.add(f)
        self.source = codegen.dump() + _element_wrapper("force", f, self.coordinates) + """
CASADI_SYMBOL_EXPORT int marsden_tree_force(const double* q_c, const double* qd_c, double* Q,
                                            double* Q_q, double* Q_v) {
  const casadi_real* a[2] = {q_c, qd_c}; casadi_real* r[3] = {Q, Q_q, Q_v};
  return call_mx_tree_force(a, r);
}
"""
        self.library, self.compiled, self.compile_seconds = _compile(self.source, name)

    def scene_element(self) -> dict:
        """The entry of a tree scene's ``"system": {"forces": [...]}`` for this force."""
        return {"library": str(self.library)}

    def force(self, q_c, qd_c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Q (n_c), dQ/dq_c, dQ/dqdot_c (n_c x n_c each)) from the compiled code."""
        n = self.size
        q = np.ascontiguousarray(q_c, dtype=float).reshape(n)
        qd = np.ascontiguousarray(qd_c, dtype=float).reshape(n)
        Q, Q_q, Q_v = np.zeros(n), np.zeros((n, n), order="F"), np.zeros((n, n), order="F")
        _call(self._loaded(), "marsden_tree_force", self.name, (q, qd, Q, Q_q, Q_v))
        return Q, Q_q, Q_v


class TreeConstraint(CompiledObject):
    """A holonomic constraint h(q_c) = 0 of m rows on some of a tree's coordinates (a closed
    loop written in coordinates, a point kept on a curve, a coupling). Validates and
    compiles at construction (InputError naming the argument, the symbol and the shape):

    - ``coordinates``: the coordinates' symbols, as for ``TreePotential``;
    - ``constraint`` h (m x 1, 1 <= m <= n_c; a scalar for one row), of those symbols only;
    - ``probe``: the point q_c where h, Dh and the Hessians must be finite (default
      0.3 + 0.17 i).

    Marsden derives Dh (m x n_c) and sum_i w_i d2h_i/dq_c2 for weights w (the multipliers
    in the midpoint step's Jacobian). The constraint enters the model as the built-in ones
    do (``tree.Builder.constraint``, ``tree.with_constraints``, a scene's
    ``"generated_constraints"``), named ``name`` in messages and in the constraint residual.
    Runs and tree DMOC refuse, before any step, an initial configuration where its rows are
    dependent (Dh over its dynamic coordinates of rank below m), naming it and the rank."""

    def __init__(self, name: str, *, coordinates, constraint, probe=None):
        self.name = _name(name)
        symbols, self.coordinates = _coordinates(coordinates)
        n = self.size = len(symbols)
        q_c = ca.vertcat(*symbols)
        h = _as_sx(constraint, "constraint")
        if h.size1() == 1 and h.size2() > 1:
            h = h.T
        if h.size2() != 1 or not 1 <= h.size1() <= n:
            raise InputError(f"constraint: expected a column of 1..{n} rows (at most one per "
                             f"coordinate), got shape {h.size1()} x {h.size2()}")
        m = self.rows = h.size1()
        names = ", ".join(s.name() for s in symbols)
        _function("constraint", [q_c], [h], "constraint", names)
        w = ca.SX.sym("w", m)
        h_qq_w = ca.hessian(ca.dot(w, h), q_c)[0]
        f = ca.Function("mx_tree_constraint", [q_c, w],
                        [ca.densify(e) for e in (h, ca.jacobian(h, q_c), h_qq_w)])
        self._function = f
        self.probe = _probe(probe, [0.3 + 0.17 * i for i in range(n)], "probe")
        at = f"at the probe point ({names}) = {np.array2string(self.probe, precision=3)}"
        # Unit weights: a non-finite row Hessian shows in their sum.
        for what, value in zip((f"h ({m} x 1)", f"Dh ({m} x {n})",
                                f"sum_i d2h_i/dq_c2 ({n} x {n})"),
                               f.call([self.probe, np.ones(m)])):
            if not np.all(np.isfinite(np.array(value, dtype=float))):
                raise InputError(f"constraint: {what} is not finite {at}")
        codegen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
        codegen.add(f)
        self.source = codegen.dump() + _element_wrapper("constraint", f, self.coordinates) + f"""
CASADI_SYMBOL_EXPORT int marsden_tree_constraint_rows(void) {{ return {m}; }}
CASADI_SYMBOL_EXPORT const char* marsden_tree_constraint_name(void) {{ return "{name}"; }}
CASADI_SYMBOL_EXPORT int marsden_tree_constraint(const double* q_c, const double* w, double* h,
                                                 double* Dh, double* h_qq_w) {{
  const casadi_real* a[2] = {{q_c, w}}; casadi_real* r[3] = {{h, Dh, h_qq_w}};
  return call_mx_tree_constraint(a, r);
}}
"""
        self.library, self.compiled, self.compile_seconds = _compile(self.source, name)

    def scene_element(self) -> dict:
        """The entry of a tree scene's ``"system": {"generated_constraints": [...]}`` for
        this constraint."""
        return {"library": str(self.library)}

    def constraint(self, q_c, w=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(h (m), Dh (m x n_c), sum_i w_i d2h_i/dq_c2 (n_c x n_c), w default zeros) from the
        compiled code."""
        n, m = self.size, self.rows
        q = np.ascontiguousarray(q_c, dtype=float).reshape(n)
        weights = np.ascontiguousarray(np.zeros(m) if w is None else w, dtype=float).reshape(m)
        h, Dh, H = np.zeros(m), np.zeros((m, n), order="F"), np.zeros((n, n), order="F")
        _call(self._loaded(), "marsden_tree_constraint", self.name, (q, weights, h, Dh, H))
        return h, Dh, H
