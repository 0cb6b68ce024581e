"""Batch rollouts: many runs of one scene's model over a pool of C++ threads."""

from __future__ import annotations

import numpy as np

from . import _core
from .signals import as_signal


class Batch:
    """The runs of a rollout: ``values`` is ``(runs, rows, columns)`` (a run that stopped
    early has NaN in the rows after its last), ``batch[name]`` a column or grouped array
    with the run first (``"position"``: ``(runs, rows, 3)``), ``summaries`` the driver's
    report of each run (as ``Trajectory.summary``)."""

    def __init__(self, columns, values, arrays, summaries):
        self.columns = list(columns)
        self.values = values
        self.summaries = list(summaries)
        self._arrays = {name: (tuple(shape), list(cols)) for name, shape, cols in arrays}

    @property
    def ok(self) -> np.ndarray:
        """Whether each run did every step, (runs,) bool."""
        return np.array([s["ok"] for s in self.summaries], dtype=bool)

    def __len__(self) -> int:
        return self.values.shape[0]

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self._arrays:
            shape, cols = self._arrays[name]
            return self.values[:, :, cols].reshape(self.values.shape[:2] + shape)
        if name in self.columns:
            return self.values[:, :, self.columns.index(name)]
        raise KeyError(f"no column or array named {name!r}; columns: {self.columns}")

    def __repr__(self) -> str:
        return (f"Batch({len(self)} runs x {self.values.shape[1]} rows x "
                f"{len(self.columns)} columns, ok={int(self.ok.sum())}/{len(self)})")


def initial_state_names(scene: _core.Scene) -> list[str]:
    """The entries of a row of ``rollout``'s ``initial_states`` for this scene: the SE(3)
    vehicles x, y, z, qw, qx, qy, qz, wx, wy, wz, vx, vy, vz; the SE(2) ones theta, x, y,
    omega, v1, v2; tree systems q then qd_."""
    return _core._initial_state_names(scene)


def _controls(controls, runs: int, dt: float):
    if controls is None:
        return []
    if isinstance(controls, (list, tuple)):
        if len(controls) != runs:
            raise _core.InputError(f"controls: expected one signal per run ({runs}), "
                                   f"got {len(controls)}")
        return [as_signal(c) for c in controls]
    u = np.asarray(controls, dtype=float)
    if u.ndim not in (2, 3) or u.shape[0] != runs:
        raise _core.InputError(f"controls: expected shape (runs={runs}, inputs) or "
                               f"(runs={runs}, knots, inputs), got {u.shape}")
    if not np.all(np.isfinite(u)):
        run, *where = np.argwhere(~np.isfinite(u))[0]
        raise _core.InputError(f"controls: run {run}, entry {tuple(where)} is not finite")
    if u.ndim == 2:
        return [_core.Signal.constant(row) for row in u]
    times = dt * np.arange(u.shape[1])
    return [_core.Signal.table(times, list(table)) for table in u]


def rollout(scene, initial_states=None, controls=None, *, runs: int | None = None,
            threads: int = 0) -> Batch:
    """Runs many trajectories of one model over ``threads`` C++ threads (0: one per core),
    with the GIL released; each run is bit for bit ``simulate`` of the same system alone.

    ``scene`` is one Scene (every run) or a list of Scenes, one per run (parameters that
    differ, e.g. from ``parse_scene`` on substituted JSON; they must share one layout).
    ``initial_states`` is ``(runs, n)`` float64 in ``initial_state_names(scene)`` order;
    ``controls`` is ``(runs, inputs)`` (held constant), ``(runs, knots, inputs)`` (a table
    through t = k dt, k = 0..knots-1, piecewise linear) or a list of signals, one per run.
    Each run lasts the scene's duration with its dt, output and failure policy. Bad shapes
    or values raise ``InputError`` naming the run and entry.
    """
    scenes = list(scene) if isinstance(scene, (list, tuple)) else [scene]
    if not scenes:
        raise _core.InputError("rollout: no scene")
    states = None
    if initial_states is not None:
        states = np.ascontiguousarray(initial_states, dtype=np.float64)
        if states.ndim != 2:
            raise _core.InputError(f"initial_states: expected shape (runs, "
                                   f"{len(initial_state_names(scenes[0]))}), got {states.shape}")
    n = runs
    for name, count in (("initial_states", None if states is None else states.shape[0]),
                        ("controls", None if controls is None else len(controls)),
                        ("scene", len(scenes) if len(scenes) > 1 else None)):
        if count is None:
            continue
        if n is None:
            n = count
        elif n != count:
            raise _core.InputError(f"{name}: {count} runs, but {n} given elsewhere")
    if n is None:
        n = 1
    signals = _controls(controls, n, scenes[0].dt)
    columns, values, arrays, summaries = _core._rollout(scenes, int(n), states, signals,
                                                        int(threads))
    return Batch(columns, values, arrays, summaries)
