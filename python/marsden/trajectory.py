"""The result of a simulation as numpy arrays, and ``simulate``, which produces it."""

from __future__ import annotations

import numpy as np

from . import _core


class Trajectory:
    """A simulated run: the system's output rows at the recorded times.

    ``columns`` names the columns (``"t"`` first, in s), ``values`` is the
    ``(rows, columns)`` array, and ``trajectory[name]`` gives a column by name or one of
    the system's grouped arrays (for example ``"position"``, ``(rows, 3)``, or
    ``"quaternion"``, ``(rows, bodies, 4)``), as written to ``trajectory.npz``.
    ``summary`` is the driver's report: ``ok``, ``message``, Newton iterations,
    subdivisions, energy and momentum drift, wall time.
    """

    def __init__(self, columns, values, arrays, summary):
        self.columns = list(columns)
        self.values = values
        self.summary = summary
        self._arrays = {name: (tuple(shape), list(cols)) for name, shape, cols in arrays}

    @property
    def t(self) -> np.ndarray:
        """Times of the rows, s (rows,)."""
        return self.values[:, 0]

    @property
    def ok(self) -> bool:
        """Whether every requested step was done."""
        return bool(self.summary["ok"])

    @property
    def arrays(self) -> list[str]:
        """Names of the grouped arrays."""
        return list(self._arrays)

    def __len__(self) -> int:
        return self.values.shape[0]

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self._arrays:
            shape, cols = self._arrays[name]
            return self.values[:, cols].reshape((len(self),) + shape)
        if name in self.columns:
            return self.values[:, self.columns.index(name)]
        raise KeyError(f"no column or array named {name!r}; columns: {self.columns}")

    def __repr__(self) -> str:
        return (f"Trajectory({len(self)} rows x {len(self.columns)} columns, "
                f"ok={self.ok}, arrays={self.arrays})")


def simulate(system: _core.System, dt: float, steps: int, *, t0: float = 0.0,
             output_every: int = 1, on_failure: str = "stop",
             max_subdivisions: int = 6, progress=None,
             progress_interval: float = 1.0, feedback: _core.Feedback | None = None) -> Trajectory:
    """Runs ``system`` for ``steps`` steps of ``dt`` (s) from ``t0`` (s) with the C++ driver.

    ``on_failure`` is ``"stop"`` (a step that does not converge ends the run) or
    ``"subdivide"`` (it is retried as 2^k substeps, k <= ``max_subdivisions``). Every
    ``output_every``-th state is recorded, with the first and the last. A failed run is
    not an exception: ``Trajectory.ok`` is False and ``summary["message"]`` says why,
    with the rows up to the last good state. Bad options raise ``InputError``.

    ``progress``, if given, is called about every ``progress_interval`` seconds of wall
    time, and at the end, as ``progress(steps_done, steps, t, wall_seconds)`` (for example
    to update a tqdm bar). Ctrl-C ends the run at the next step: the rows computed are
    returned, with ``summary["status"] == "interrupted"``.

    ``feedback``, a ``marsden.Feedback`` given to the system as its controls
    (``make_system(scene, controls=feedback)``), closes the loop: its controller is called
    at ``t0`` and after every step with the state (``System.state``), and each step holds
    the value of its start. An exception the controller raises ends the run and propagates.
    """
    columns, values, arrays, summary = _core._simulate(
        system, float(t0), float(dt), int(steps), int(output_every), str(on_failure),
        int(max_subdivisions), progress, float(progress_interval), feedback)
    return Trajectory(columns, values, arrays, summary)
