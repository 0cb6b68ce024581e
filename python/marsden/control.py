"""Closed loop over the step contract (docs/control.md): follow a nominal run with
time-varying LQR.

    u_in = marsden.HeldInput(1)
    system = marsden.make_system(scene, controls=u_in)
    nominal = marsden.control.rollout(system, u_in, 0.0, dt, x0, u)      # x (N+1, n), u (N, m)
    lin = marsden.control.linearize(system, nominal)                     # A, B per step
    gains = marsden.control.tvlqr(lin["A"], lin["B"], Q, R, Q_N)         # K (N, m, tangent)
    tracking = marsden.control.Tracking(system, nominal, gains["K"])
    feedback = marsden.Feedback(tracking, inputs=1, lower=[-15], upper=[15])

Errors are taken in the state chart (System.state_difference: a rotation vector for a
quaternion), so Q is tangent x tangent.
"""

from __future__ import annotations

import numpy as np

from ._core import control as _core
from ._core.control import Nominal, Tracking, linearize

__all__ = ["Mpc", "Nominal", "Tracking", "dare", "ilqr", "linearize", "nominal_from_solution",
           "rollout", "tvlqr"]


def _matrix(value, name: str) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim == 1:
        array = array.reshape(len(array), -1)
    if array.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array, got shape {array.shape}")
    return np.ascontiguousarray(array)


def rollout(system, input, t0: float, dt: float, x0, u) -> Nominal:
    """Runs system from x0 (set_state) under u (N, inputs; a vector for one input), each
    row held over its step through ``input``, the HeldInput the system was made with.
    Returns the Nominal (x (N+1, state_size), u); raises SolverError naming a step that
    does not converge. Leaves the system at x_N."""
    return _core.rollout(system, input, float(t0), float(dt),
                         np.asarray(x0, dtype=float).ravel(), _matrix(u, "u"))


def tvlqr(A, B, Q, R, Q_N) -> dict:
    """Time-varying LQR by the discrete Riccati recursion along A (N, tangent, tangent) and
    B (N, tangent, inputs): K (N, inputs, tangent) with du_k = -K_k dx_k, and the
    cost-to-go S (N+1, tangent, tangent). Q, Q_N positive semidefinite, R positive
    definite (ValueError otherwise)."""
    return _core.tvlqr(list(np.asarray(A, dtype=float)), list(np.asarray(B, dtype=float)),
                       _matrix(Q, "Q"), _matrix(R, "R"), _matrix(Q_N, "Q_N"))


def dare(A, B, Q, R) -> dict:
    """The discrete algebraic Riccati equation of an equilibrium's (A, B): S, the gain
    K = (R + B'SB)^-1 B'SA and the doubling iterations. SolverError when (A, B) is not
    stabilisable."""
    return _core.dare(_matrix(A, "A"), _matrix(B, "B"), _matrix(Q, "Q"), _matrix(R, "R"))


def ilqr(system, input, x0, u_guess, dt: float, *, R, Q=None, Q_N=None, x_goal=None,
         x_ref=None, u_ref=None, terminal=(), u_lower=None, u_upper=None, t0: float = 0.0,
         **options) -> dict:
    """iLQR on the system's step map (docs/control.md): minimises
    sum_k dt (dx_k' Q dx_k + du_k' R du_k) + dx_N' Q_N dx_N, dx = x (-) x_ref_k (x_goal
    when x_ref is None), du = u - u_ref_k (zero when None), over the inputs from u_guess
    (N, inputs), within [u_lower, u_upper], with the tangent entries ``terminal`` of
    x_N (-) x_goal held at zero by an augmented Lagrangian. ``input`` is the HeldInput the
    system was made with. Options: max_iterations, tolerance, constraint_tolerance,
    penalty (the first; large when starting at an optimum), regularization, derivatives.
    Returns a dict: nominal, K (N, inputs, tangent), cost, constraint_violation,
    iterations, rounds, converged, message, solve_time_s."""
    def optional(value, name):
        return None if value is None else _matrix(value, name)

    def vector(value):
        return None if value is None else np.asarray(value, dtype=float).ravel()

    return _core.ilqr(system, input, np.asarray(x0, dtype=float).ravel(),
                      _matrix(u_guess, "u_guess"), float(dt), t0=float(t0),
                      x_goal=vector(x_goal), x_ref=optional(x_ref, "x_ref"),
                      u_ref=optional(u_ref, "u_ref"), Q=optional(Q, "Q"), R=_matrix(R, "R"),
                      Q_N=optional(Q_N, "Q_N"), terminal=[int(i) for i in terminal],
                      u_lower=vector(u_lower), u_upper=vector(u_upper), **options)


def Mpc(planner, input, reference: Nominal, *, horizon: int, Q, R, Q_N, u_lower=None,
        u_upper=None, max_iterations: int = 20, tolerance: float = 1e-6) -> _core.Mpc:
    """Receding-horizon control (docs/control.md): at every step, iLQR over the next
    ``horizon`` steps tracking ``reference`` (a Nominal, held at its end) with weights Q,
    R, Q_N from the measured state, warm-started from its last plan shifted by one step;
    the first input is applied. It plans on ``planner``, a system of its own made with
    controls=input. Give it to marsden.Feedback; ``solve_times`` (s) and
    ``solve_iterations`` record each solve."""
    def vector(value):
        return None if value is None else np.asarray(value, dtype=float).ravel()

    return _core.Mpc(planner, input, reference, int(horizon), _matrix(Q, "Q"), _matrix(R, "R"),
                     _matrix(Q_N, "Q_N"), vector(u_lower), vector(u_upper), int(max_iterations),
                     float(tolerance))


def nominal_from_solution(system, input, solution: dict, x0=None, t0: float = 0.0) -> Nominal:
    """The Nominal of a DMOC solution (Problem.solve()'s dict): its controls re-run on
    ``system`` from x0 (default: the system's current state, which for a system just made
    from the problem's scene is the problem's initial state), so that the states are in the
    system's layout and satisfy its step to the solver's tolerance. ``input`` is the
    HeldInput the system was made with; the system must step as the problem's does (same
    model, integrator and dt)."""
    columns = list(solution["controls"]["columns"])
    values = np.asarray(solution["controls"]["values"])
    u = values[:, [i for i, c in enumerate(columns) if c != "t"]]
    times = values[:, columns.index("t")]
    steps = np.diff(times)
    if len(steps) == 0 or np.ptp(steps) > 1e-12 * max(1.0, abs(times[-1])):
        raise ValueError("nominal_from_solution: the solution needs two or more steps of one "
                         "length (a free final time gives one length; so does a fixed dt)")
    x0 = system.state if x0 is None else np.asarray(x0, dtype=float)
    return rollout(system, input, t0, float(steps[0]), x0, u)
