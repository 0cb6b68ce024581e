"""The "module" fields of scene and problem files (docs/own-system.md, "In scene and problem
files"): the C++ reader runs

    python -m marsden.symbolic.module FILE --kind system|potential|force|constraint [--object NAME]

which imports the Python file FILE (its code runs, compiling its symbolic objects as they
are built, from the cache when they are there), takes the symbolic object of that kind it
defines (the attribute NAME, else the only one) and prints, as one JSON object on stdout,
what a file would write in the module's place: the "system" object (``scene_system()``)
or the tree element {"library": path} (``scene_element()``). Anything the module prints
goes to stderr. An error is one line on stderr and exit status 2; the module's own
exception is its traceback and exit status 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path

from . import (HolonomicVehicle, NonholonomicSystem, RdpVehicle, TreeConstraint, TreeForce,
               TreePotential)

# What each kind of field accepts (PlanarVehicle is a HolonomicVehicle).
KINDS = {"system": (HolonomicVehicle, RdpVehicle, NonholonomicSystem),
         "potential": (TreePotential,),
         "force": (TreeForce,),
         "constraint": (TreeConstraint,)}


class ModuleError(Exception):
    """A module that defines no usable object, or several without a name to choose."""


def _describe(kind: str) -> str:
    return " or ".join(c.__name__ for c in KINDS[kind])


def load_module(path: Path):
    """Imports the file as a script would run: its folder first on sys.path, so that it
    can import its neighbours."""
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"marsden_module_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ModuleError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def find_object(module, kind: str, name: str | None):
    """The module's attribute `name`, else its only object of this kind (one object bound
    to several names counts once)."""
    wanted = KINDS[kind]
    if name is not None:
        if not hasattr(module, name):
            raise ModuleError(f"the module defines no attribute '{name}' (\"object\")")
        value = getattr(module, name)
        if not isinstance(value, wanted):
            raise ModuleError(f"'{name}' is a {type(value).__name__}, not a {_describe(kind)}")
        return value
    found: dict[int, list[str]] = {}
    objects = {}
    for attr, value in vars(module).items():
        if isinstance(value, wanted):
            found.setdefault(id(value), []).append(attr)
            objects[id(value)] = value
    if len(found) == 1:
        return next(iter(objects.values()))
    if not found:
        raise ModuleError(f"the module defines no {_describe(kind)}")
    names = ", ".join(" = ".join(attrs) for attrs in found.values())
    raise ModuleError(f"the module defines {len(found)} objects of this kind ({names}); "
                      "choose one with \"object\"")


def resolve(path: Path, kind: str, name: str | None) -> dict:
    """The JSON object a file would write in place of {"module": path, ...}."""
    obj = find_object(load_module(path), kind, name)
    out = obj.scene_system() if kind == "system" else obj.scene_element()
    # The compiled object is found from anywhere the file's readers run.
    out["library"] = str(Path(out["library"]).resolve())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m marsden.symbolic.module",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--kind", choices=sorted(KINDS), default="system")
    parser.add_argument("--object", dest="name")
    args = parser.parse_args(argv)
    # stdout carries the answer only: whatever the module writes, from Python or from C,
    # goes to stderr until the answer is printed.
    sys.stdout.flush()
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        result = resolve(args.file.resolve(), args.kind, args.name)
    except ModuleError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the module's own error: its traceback, from the module's frame
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != str(args.file.resolve()):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        return 1
    finally:
        sys.stdout.flush()
        os.dup2(answer_fd, 1)
        os.close(answer_fd)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
