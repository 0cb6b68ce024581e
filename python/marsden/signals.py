"""Input signals from whatever a user has: a marsden.Signal, a Python callable of t, a
constant vector, or a (times, values) pair for a table."""

from __future__ import annotations

import numpy as np

from ._core import Feedback, Signal


def as_signal(value, hold: str = "sampled") -> Signal | None:
    """``None`` stays None; a Signal is returned as it is, a Feedback as its held input; a callable f(t) becomes
    ``Signal.function`` (its size from f(0)); a vector of numbers a constant; a pair
    ``(times, values)`` with values a 2-D (N, n) array a table with the given ``hold``."""
    if value is None or isinstance(value, Signal):
        return value
    if isinstance(value, Feedback):
        return value.signal()
    if callable(value):
        size = np.atleast_1d(np.asarray(value(0.0), dtype=float)).size
        return Signal.function(lambda t: np.atleast_1d(np.asarray(value(t), dtype=float)),
                               size, hold)
    if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[1]) == 2:
        times, values = value
        values = np.asarray(values, dtype=float)
        return Signal.table(np.asarray(times, dtype=float),
                            values.reshape(len(values), -1), hold)
    array = np.asarray(value, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"signal: expected a Signal, a callable, a vector or (times, values), "
                         f"got an array of shape {array.shape}")
    return Signal.constant(array)
