"""Lie groups SO(3), SE(2) and SE(3) (docs/conventions.md): elements are matrices (3x3
rotations, 3x3 and 4x4 homogeneous matrices), algebra vectors follow the library's
ordering (SE(3): (omega, v) in the body frame), and dexp, dcay are right-trivialised:
tau(xi + e d) tau(xi)^-1 = exp(e dtau(xi) d) to first order. Arguments may be numpy arrays
or sequences; a wrong shape is a TypeError, a matrix that is not a group element an
InputError (a ValueError).

    from marsden.lie import SE3
    g = SE3.exp([0.1, 0.0, 0.2, 1.0, 0.0, 0.0])
"""

import numpy as np

from ._core import lie as _lie

_FUNCTIONS = ("exp", "log", "cay", "cay_inv", "hat", "ad", "dexp", "dexp_inv", "dcay",
              "dcay_inv")


def _group(core):
    namespace = {"__doc__": core.__doc__, "dim": core.dim}
    for name in _FUNCTIONS:
        function = getattr(core, name)

        def call(x, _function=function):
            return _function(np.asarray(x, dtype=float))

        call.__name__ = name
        # The docstring without nanobind's signature line, which names the core's argument
        # types (numpy arrays of fixed shape), not the sequences this wrapper accepts.
        call.__doc__ = function.__nb_signature__[0][1]
        namespace[name] = staticmethod(call)
    return type(core.__name__, (), namespace)


SO3 = _group(_lie.SO3)
SE2 = _group(_lie.SE2)
SE3 = _group(_lie.SE3)

__all__ = ["SE2", "SE3", "SO3"]
