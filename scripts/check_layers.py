#!/usr/bin/env python3
"""The layering rule of docs/architecture.md, checked: each folder of the library includes
only its own headers and those of the folders below it, and no family includes another.
Reads every #include "marsden/..." (and the private "FOLDER/..." headers of src/) in
include/marsden/ and src/; prints each include that breaks a rule and exits 1 if any does.
And io/ parses only: no code of it starts a process or loads a library (run/ does, after
the user's allowance, run/code.hpp); each call that would is printed the same way. And one
launcher: no file of the library, the command (apps/) or the bindings (python/src/) but
src/run/python.cpp starts a process.

    python3 scripts/check_layers.py [--list]    (--list: the folders and their layers)
"""

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Layer of each folder, bottom first. Folders on one layer may not include each other
# unless listed in SAME_LAYER_ALLOWED (the families never).
LAYERS = [
    {"error.hpp"},                                       # the typed errors
    {"lie", "solve", "support"},                         # math and plumbing, no mechanics
    {"geometry"},                                        # collision shapes and distances
    {"urdf", "description"},                             # what a system is, family-neutral
    {"vehicle", "baseline", "nonholonomic", "tree", "maximal"},  # the families
    {"bridge"},                                          # one family built from another
    {"sim"},                                             # the contract, driver, inputs
    {"control"},                                         # optimal control over sim
    {"io", "record"},                                    # files in (parse only), files out
    {"run"},                                             # running them
    {"experiments"},                                     # users of everything below
]
# A family's own helpers that live beside it.
SAME_LAYER_ALLOWED = {("baseline", "vehicle"), ("vehicle", "baseline")}

# Calls that run code, which the folders that parse only may not make.
PARSE_ONLY = {"io"}
RUNS_CODE = re.compile(r"\b(posix_spawnp?|fork|vfork|exec[lv]p?e?|popen|system|dlopen|"
                       r"open_shared_object|generated_vehicle_group|"
                       r"add_generated_(?:potential|force|constraint))\s*\(|::load\s*\(")
# Comments, raw strings, strings and characters, read left to right: what is in none of
# them is code.
NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|R\"([^(\s]*)\(.*?\)\1\"|\"(?:[^\"\\\n]|\\.)*\"|"
                      r"'(?:[^'\\\n]|\\.)*'", re.S)


def code_of(text: str) -> str:
    return NOT_CODE.sub(" ", text)


# The one launcher (run/python.hpp), and the folders whose files may not start a process
# any other way. A call of a member named so (scene.system(...)) is none of these.
LAUNCHER = "src/run/python.cpp"
SPAWN_CHECKED = ("include/marsden", "src", "apps", "python/src")
SPAWNS = re.compile(r"(?<![.>\w])(posix_spawnp?|fork|vfork|exec[lv]p?e?|popen|system)\s*\(")

LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path: Path, root: Path = ROOT) -> str | None:
    """The library folder a file of include/marsden/ or src/ belongs to."""
    rel = path.relative_to(root)
    parts = rel.parts
    if parts[0] == "include":
        parts = parts[2:]  # include/marsden/...
    elif parts[0] == "src":
        parts = parts[1:]
    else:
        return None
    if len(parts) == 1:  # a header at the top: error.hpp, urdf.hpp
        return "error.hpp" if parts[0] == "error.hpp" else Path(parts[0]).stem
    return parts[0]


def included_folder(name: str) -> str | None:
    parts = name.split("/")
    if parts[0] == "marsden":
        parts = parts[1:]
    if len(parts) == 1:
        return "error.hpp" if parts[0] == "error.hpp" else Path(parts[0]).stem
    return parts[0] if parts[0] in LAYER else None


def sources(root: Path, folders) -> list[Path]:
    return sorted(p for d in folders for p in (root / d).rglob("*")
                  if p.suffix in (".hpp", ".cpp", ".h"))


def spawns(root: Path = ROOT):
    """Each call that starts a process outside the launcher (io/'s are reported as io/'s)."""
    out = []
    for path in sources(root, SPAWN_CHECKED):
        rel = path.relative_to(root)
        if rel.as_posix() == LAUNCHER or folder_of(path, root) in PARSE_ONLY:
            continue
        for call in SPAWNS.finditer(code_of(path.read_text())):
            out.append(f"{rel}: calls {call.group(0).strip()} (processes start in "
                       f"{LAUNCHER} only, run/python.hpp)")
    return out


def violations(root: Path = ROOT):
    out = spawns(root)
    for path in sources(root, ("include/marsden", "src")):
        src = folder_of(path, root)
        if src not in LAYER:
            out.append(f"{path.relative_to(root)}: folder {src!r} has no layer in "
                       f"scripts/check_layers.py")
            continue
        text = path.read_text()
        if src in PARSE_ONLY:
            for call in RUNS_CODE.finditer(code_of(text)):
                out.append(f"{path.relative_to(root)}: calls {call.group(0).strip()} ({src}/ "
                           f"parses only: code runs in run/)")
        for name in INCLUDE.findall(text):
            dst = included_folder(name)
            if dst is None or dst == src or (src, dst) in SAME_LAYER_ALLOWED:
                continue
            if dst not in LAYER:
                continue
            if LAYER[dst] >= LAYER[src]:
                why = "the same layer" if LAYER[dst] == LAYER[src] else "a layer above"
                out.append(f"{path.relative_to(root)}: includes {name} ({dst}, {why} "
                           f"{src})")
    return out


def self_test():
    """The check finds a family including another and a family including sim, and passes
    an include of a lower layer; it finds io/ loading a library or starting a process, and
    passes a comment that names them; it finds a process started outside the launcher, in
    the library, the command or the bindings, and passes the launcher's and a member named
    system: it can fail."""
    spawn = "posix_spawnp(&pid, argv[0], nullptr, nullptr, argv, environ);"
    cases = {("src/tree/a.cpp", '#include "marsden/maximal/joints.hpp"'): 1,
             ("src/tree/a.cpp", '#include "marsden/sim/rk.hpp"'): 1,
             ("src/tree/a.cpp", '#include "marsden/lie/so3.hpp"'): 0,
             ("src/tree/a.cpp", '#include "tree/private.hpp"'): 0,
             ("src/geometry/a.cpp", '#include "marsden/lie/se3.hpp"'): 0,
             ("src/lie/a.cpp", '#include "marsden/geometry/shapes.hpp"'): 1,
             ("src/geometry/a.cpp", '#include "marsden/maximal/model.hpp"'): 1,
             ("src/io/a.cpp", "auto m = GeneratedVehicle::load(path);"): 1,
             ("src/io/a.cpp", spawn): 1,
             ("src/io/a.cpp", "void* h = dlopen (p, RTLD_NOW);"): 1,
             ("src/io/a.cpp", "// run/ calls dlopen(path) and GeneratedVehicle::load(path)"): 0,
             ("src/run/a.cpp", "auto m = GeneratedVehicle::load(path);"): 0,
             ("src/run/python.cpp", spawn): 0,
             ("src/run/code.cpp", spawn): 1,
             ("src/experiments/a.cpp", 'std::system("python3 plot.py");'): 1,
             ("src/experiments/a.cpp", "auto s = scene.system(x) + make_system(y);"): 0,
             ("src/experiments/a.cpp", 'f("per system (a, b)", R"x(popen(c))x", \'"\');'): 0,
             ("apps/marsden.cpp", "execvp(argv[0], argv);"): 1,
             ("python/src/sim.cpp", "FILE* f = popen(command, \"r\");"): 1}
    for (file, line), expected in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / file
            f.parent.mkdir(parents=True)
            f.write_text(line + "\n")
            found = violations(Path(tmp))
            if len(found) != expected:
                print(f"check_layers self-test: {line!r} in {file} gave {found}")
                return False
    return True


def main(argv):
    if "--list" in argv:
        for i, names in enumerate(LAYERS):
            print(i, " ".join(sorted(names)))
        return 0
    if not self_test():
        return 2
    found = violations()
    for v in found:
        print(v)
    print(f"check_layers: {len(found)} include(s) or call(s) break the layering rule")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
