"""What pickle and copy.deepcopy call to rebuild the compiled objects (Scene, Problem,
System): plain functions, which pickle names by reference (docs/python.md, "Copies and
pickles")."""

from . import _core


def parse_scene(text: str, file: str) -> _core.Scene:
    return _core.parse_scene(text, file)


def parse_problem(text: str, file: str) -> _core.Problem:
    return _core.parse_problem(text, file)


def restore_system(factory: str, args: tuple, calls: list) -> _core.System:
    """The system _core.<factory>(*args) makes, with the recorded calls replayed on it."""
    return _core._restore_system(factory, args, calls)
