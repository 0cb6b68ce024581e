"""Your own vehicle from its physics: inertia, control matrix and wrenches written as
CasADi expressions; Marsden derives the derivatives the integrator and DMOC need, generates
C code, compiles it with the system C compiler into a shared object (cached by a hash of
the code) and loads it into the C++ core, which calls its plain C entry points
(include/marsden/vehicle/generated.hpp; CasADi is not linked). docs/own-system.md is the
tutorial.

Nonholonomic vehicles on SE(2) for the RDP integrator: ``RdpVehicle`` and the symbols of
``marsden.symbolic.rdp`` (its docstring; C side include/marsden/vehicle/generated_rdp.hpp).

Holonomic vehicles on SE(3) (vehicles paper §3.1, §4), with the Lagrangian
l(xi) = 1/2 xi^T I xi - V(g) and the forced Euler-Poincare equations (vehicles eq. (8))
I xi_dot = ad_xi^T I xi + F(gamma) u + f_ext(t, g, xi). The expressions use the symbols of
this module: ``t`` (s), ``R`` (3 x 3, body to world), ``p`` (3, world position, m),
``omega`` and ``v`` (3 each, body angular and linear velocity), and shape variables
gamma made with ``shape(n)``. Wrenches are body-frame (torque, force).

    import casadi as ca
    from marsden import symbolic as sym
    quad = sym.HolonomicVehicle("quadrotor", mass=1.0, J=[0.01, 0.01, 0.02],
                                control_matrix=F,            # 6 x 4, numbers
                                potential=1.0 * 9.81 * sym.p[2],
                                external_wrench=ca.vertcat(-0.01 * sym.omega, -0.1 * sym.v))
    system = quad.system(initial_state={"position": [0, 0, 1]}, controls=[2.4525] * 4)

Holonomic vehicles on SE(2): ``PlanarVehicle`` with the symbols of ``se2`` (theta, x, y,
omega, v1, v2), wrenches (torque, f1, f2); ``hovercraft()`` is an example.

Systems in full coordinates for GNI and RATTLE (nonholonomic paper §4):
``NonholonomicSystem(name, q=..., qdot=..., lagrangian=L, constraints=mu)`` (full.py), with
``bodies=[Body(name, position=..., rotation=..., shape=...)]`` to draw in the viewer.

Tree elements: ``TreePotential(name, coordinates=[...], potential=V)``,
``TreeForce(name, coordinates=[...], velocities=[...], force=Q)`` and
``TreeConstraint(name, coordinates=[...], constraint=h)`` (tree.py), a potential, a
generalized force or a holonomic constraint on some of a tree system's coordinates, added
with ``marsden.tree``.

Scene and problem files name the compiled object (``scene_system()``, ``scene_element()``)
or the Python file that builds it, ``{"module": path}``, which the reader runs with
``python -m marsden.symbolic.module`` (module.py).
"""

from __future__ import annotations

try:
    import casadi  # noqa: F401  (the families below import it)
except ImportError as e:  # casadi is in requirements.txt, not a dependency of the package
    raise ImportError("marsden.symbolic needs CasADi: pip install \"marsden[symbolic]\" "
                      "(or casadi)") from e

from ._codegen import MAX_INPUTS, cache_dir, compiler, hat
from .full import NH_ABI_VERSION, NH_MAX_BODIES, NH_MAX_DOF, Body, NonholonomicSystem
from .holonomic import (ABI_VERSION, HolonomicVehicle, PlanarVehicle, R, helicopter, hovercraft,
                        omega, p, quadrotor, se2, shape, t, underwater_vehicle, v)
from . import rdp
from .rdp import RdpVehicle
from .tree import TREE_ABI_VERSION, TREE_MAX_COORDS, TreeConstraint, TreeForce, TreePotential

__all__ = ["ABI_VERSION", "MAX_INPUTS", "NH_ABI_VERSION", "NH_MAX_BODIES", "NH_MAX_DOF", "Body",
           "HolonomicVehicle",
           "NonholonomicSystem", "PlanarVehicle", "R", "cache_dir", "compiler",
           "hat", "helicopter", "hovercraft", "omega", "p", "quadrotor", "se2", "shape", "t",
           "underwater_vehicle", "v", "rdp", "RdpVehicle", "TREE_ABI_VERSION",
           "TREE_MAX_COORDS", "TreeConstraint", "TreeForce", "TreePotential"]
