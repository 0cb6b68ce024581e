"""Marsden: structure-preserving simulation and optimal control of mechanical systems.

The compiled core (``marsden._core``) is the C++ library; this package adds the pieces that
are plain Python. Units are SI throughout; shapes are given in each docstring.

    import marsden
    scene = marsden.load_scene("examples/scenes/helicopter_turn.json")
    system = marsden.make_system(scene)
    run = marsden.simulate(system, dt=scene.dt, steps=scene.steps)
    run["position"]          # (rows, 3) numpy array
    run.summary["energy"]    # drift figures of the run

Scene and problem files may name a Python module that builds a ``marsden.symbolic`` object
(docs/own-system.md); the reader runs it with $MARSDEN_PYTHON, which importing this package
sets to this interpreter when it is unset, so that files read from Python use it too.
"""

import os as _os
import sys as _sys

_os.environ.setdefault("MARSDEN_PYTHON", _sys.executable)

from ._core import (
    Controller,
    Feedback,
    HeldInput,
    InputError,
    Problem,
    Scene,
    Signal,
    SolverError,
    StepStatus,
    System,
    __version__,
    load_problem,
    load_scene,
    parse_problem,
    parse_scene,
    run_problem,
    run_scene,
)
from . import control, lie, maximal, tree, vehicles
from .batch import Batch, initial_state_names, rollout
from .experiments import list_experiments, run_experiment
from .linearize import solve_step, step_derivatives
from .signals import as_signal
from ._core import make_system as _make_system


def make_system(scene: Scene, controls=None, shape=None) -> System:
    """The scene's system at its initial state. ``controls`` (and, for the SE(3) vehicles,
    ``shape``) replace the scene's signals: a Signal, a callable f(t), a constant vector or
    (times, values) (see as_signal); their sizes must match the system (InputError)."""
    return _make_system(scene, as_signal(controls), as_signal(shape))


def load_mjcf(path, engine: str = "tree"):
    """An MJCF file (docs/mjcf.md) as a tree model (marsden.tree.model_from_mjcf) or, with
    engine="maximal", a mechanism (marsden.maximal.mechanism_from_mjcf)."""
    if engine == "tree":
        return tree.model_from_mjcf(path)
    if engine == "maximal":
        return maximal.mechanism_from_mjcf(path)
    raise InputError(f"load_mjcf: engine must be 'tree' or 'maximal', got {engine!r}")
from .trajectory import Trajectory, simulate
from .experiment_report import ReportError, write_report as report
from .viewer import ViewError, view

__all__ = [
    "Batch",
    "Controller",
    "Feedback",
    "HeldInput",
    "InputError",
    "as_signal",
    "control",
    "Problem",
    "ReportError",
    "Scene",
    "Signal",
    "SolverError",
    "StepStatus",
    "System",
    "Trajectory",
    "ViewError",
    "__version__",
    "lie",
    "initial_state_names",
    "list_experiments",
    "load_mjcf",
    "load_problem",
    "load_scene",
    "make_system",
    "maximal",
    "parse_problem",
    "parse_scene",
    "report",
    "run_experiment",
    "run_problem",
    "rollout",
    "run_scene",
    "simulate",
    "solve_step",
    "step_derivatives",
    "tree",
    "vehicles",
    "view",
]
