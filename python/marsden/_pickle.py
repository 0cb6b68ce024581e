"""What pickle and copy.deepcopy call to rebuild the compiled objects (Scene, Problem,
System): plain functions, which pickle names by reference (docs/python.md, "Copies and
pickles")."""

from . import _core


def parse_scene(text: str, file: str) -> _core.Scene:
    return _core.parse_scene(text, file)


def parse_problem(text: str, file: str) -> _core.Problem:
    return _core.parse_problem(text, file)


def signal(factory: str, args: tuple) -> _core.Signal:
    """Signal.<factory>(*args) (pickle's copy of a signal)."""
    return getattr(_core.Signal, factory)(*args)


def held_input(size: int, value: list) -> _core.HeldInput:
    """A HeldInput of the given size holding value (pickle's copy of one)."""
    made = _core.HeldInput(size)
    made.set(value)
    return made


def rebuild(function: str, args: tuple, kwargs: dict):
    """function(*args, **kwargs), the function named by its dotted path in the marsden
    package (a Model's or Mechanism's recipe)."""
    import importlib

    module, _, name = function.rpartition(".")
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


def recorded(function):
    """Wraps a function returning a Model or Mechanism so that what it returns remembers the
    call (its recipe), which pickle and copy then repeat."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        made = function(*args, **kwargs)
        made._recipe = (f"{wrapper.__module__}.{wrapper.__name__}", args, kwargs)
        return made

    return wrapper


def restore_system(factory: str, args: tuple, calls: list) -> _core.System:
    """The system _core.<factory>(*args) makes, with the recorded calls replayed on it."""
    return _core._restore_system(factory, args, calls)
