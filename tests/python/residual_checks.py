"""Checks shared by the Python test files (imported from beside them: pytest puts a test
file's folder on sys.path)."""
import numpy as np


def assert_residual_jacobians_match_central_differences(system, t_k, dt, nonempty=False):
    """The residual's Jacobian blocks in the unknowns, the previous state and the inputs at
    the system's own point (the unknowns moved off the solution) against central
    differences; with nonempty, every block must have columns."""
    z, delta, u = system.residual_point(t_k, dt)
    z = z + 1e-3 * np.sin(np.arange(z.size) + 1.0)
    blocks = system.residual(t_k, dt, z, delta, u)
    h = 1e-6
    for arg, key in ((0, "J_r_z"), (1, "J_r_state"), (2, "J_r_u")):
        J = blocks[key]
        assert not nonempty or J.shape[1] > 0, key
        for c in range(J.shape[1]):
            args = [z.copy(), delta.copy(), u.copy()]
            args[arg][c] += h
            plus = system.residual(t_k, dt, *args, jacobians=False)["r"]
            args[arg][c] -= 2 * h
            minus = system.residual(t_k, dt, *args, jacobians=False)["r"]
            fd = (plus - minus) / (2 * h)
            assert np.abs(fd - J[:, c]).max() <= 1e-6 * (1.0 + np.abs(fd).max()), (key, c)
