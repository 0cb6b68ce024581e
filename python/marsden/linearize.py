"""Linearisation of one step through its discrete residual R(z; x_k (+) delta, u) = 0
(docs/architecture.md), for LQR, sensitivities or an optimiser of one's own."""

from __future__ import annotations

import numpy as np

from ._core import SolverError, System


def solve_step(system: System, t_k: float, dt: float, *, tolerance: float = 1e-12,
               max_iterations: int = 50):
    """The unknowns z of the step from t_k (s) of length dt (s) and the step's inputs u,
    solved by Newton's method on the system's residual from its own guess. Raises
    SolverError when it does not converge; the exception carries ``t`` (the step's start),
    ``iterations`` and ``residual`` (the final max-norm)."""
    z, delta, u = system.residual_point(t_k, dt)
    for iteration in range(max_iterations + 1):
        blocks = system.residual(t_k, dt, z, delta, u)
        r = blocks["r"]
        residual = float(np.abs(r).max()) if r.size else 0.0
        if residual <= tolerance * (1.0 + np.abs(blocks["J_r_z"]).max()):
            return z, u
        if iteration < max_iterations:
            z = z - np.linalg.solve(blocks["J_r_z"], r)
    error = SolverError(f"solve_step: Newton did not converge at t = {t_k} s in "
                        f"{max_iterations} iterations (residual {residual:.3e})")
    error.t, error.iterations, error.residual = t_k, max_iterations, residual
    raise error


def step_derivatives(system: System, t_k: float, dt: float) -> dict:
    """Derivatives of the step's solution z with respect to the state at t_k (in the
    family's chart: dz_dstate, (len(z), len(delta))) and to the step's inputs (dz_du), by the
    implicit-function theorem on the converged residual: dz = -J_r_z^-1 (J_r_state ddelta +
    J_r_u du). Also returns z and u. Families that provide no state or input blocks (GNI,
    RATTLE) give arrays with no columns there."""
    if not system.has_residual:
        raise ValueError("step_derivatives: this method has no discrete residual "
                         "(an explicit method)")
    z, u = solve_step(system, t_k, dt)
    _, delta, _ = system.residual_point(t_k, dt)
    blocks = system.residual(t_k, dt, z, delta, u)
    J = blocks["J_r_z"]
    return {"z": z, "u": u,
            "dz_dstate": -np.linalg.solve(J, blocks["J_r_state"]) if blocks["J_r_state"].size
            else np.zeros((z.size, 0)),
            "dz_du": -np.linalg.solve(J, blocks["J_r_u"]) if blocks["J_r_u"].size
            else np.zeros((z.size, 0))}
