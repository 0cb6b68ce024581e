"""What every family of marsden.symbolic shares: checking expressions, CasADi functions,
fixed-signature C entry points over them, and compiling into a cached shared object."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import casadi as ca

from .._core import InputError, System, make_system, parse_scene

MAX_INPUTS = 8   # kMaxInputs of include/marsden/vehicle/controls.hpp


class CompiledObject:
    """A symbolic object whose compiled code (``self.library``) its checks call directly:
    loaded by ctypes on the first such call, then kept."""

    _lib = None

    def _loaded(self) -> ctypes.CDLL:
        if self._lib is None:
            self._lib = ctypes.CDLL(str(self.library))
        return self._lib


def hat(w) -> ca.SX:
    """The 3 x 3 matrix of w x (.)."""
    w = ca.SX(w)
    return ca.vertcat(ca.horzcat(0, -w[2], w[1]), ca.horzcat(w[2], 0, -w[0]),
                      ca.horzcat(-w[1], w[0], 0))


def cache_dir() -> Path:
    """Where compiled models are kept: $MARSDEN_CACHE, else ~/.cache/marsden/symbolic."""
    env = os.environ.get("MARSDEN_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "marsden" / "symbolic"


def private_cache_dir() -> Path:
    """cache_dir(), created if needed and private to this user (mode 0700, tightened when
    looser): whoever can write there can put code in place of a model. InputError when it
    cannot be created or belongs to another user."""
    directory = cache_dir()
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
        st = directory.stat()
        if st.st_uid != os.getuid():
            raise InputError(f"cache directory {directory}: belongs to another user (uid "
                             f"{st.st_uid}); set MARSDEN_CACHE to a folder of yours")
        if stat.S_IMODE(st.st_mode) != 0o700:
            directory.chmod(0o700)
    except OSError as e:
        raise InputError(f"cache directory {directory}: cannot be created ({e}); set "
                         "MARSDEN_CACHE to a writable folder") from None
    return directory


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def check_cached(library: Path) -> Path:
    """A cached object, named NAME-KEY-SHA256.so, whose content matches the SHA-256 in its
    name (as the C++ loader checks, src/support/shared_object.cpp); InputError otherwise."""
    if _sha256(library) != library.stem.rsplit("-", 1)[-1]:
        raise InputError(f"generated model '{library}': its content does not match the hash in "
                         "its name (it changed after marsden.symbolic compiled it), so it is "
                         f"not loaded; clear the cache (rm -r {library.parent}) and build the "
                         "model again with marsden.symbolic")
    return library


def _as_sx(value, what: str) -> ca.SX:
    try:
        if isinstance(value, (list, tuple)):
            if value and isinstance(value[0], (list, tuple)):
                return ca.vertcat(*[ca.horzcat(*[ca.SX(x) for x in row]) for row in value])
            return ca.vertcat(*[ca.SX(x) for x in value])
        if isinstance(value, np.ndarray):  # numbers, or an object array of expressions
            if value.dtype != object:
                value = np.asarray(value, dtype=float)
            return ca.SX(value.reshape(-1, 1) if value.ndim == 1 else value)
        return ca.SX(value)
    except (TypeError, ValueError, NotImplementedError, RuntimeError) as e:
        raise InputError(f"{what}: expected a CasADi expression or numbers ({e})") from None


def _check_shape(expr: ca.SX, rows: int, cols: int | None, what: str) -> None:
    if expr.size1() != rows or (cols is not None and expr.size2() != cols):
        want = f"{rows} x {cols}" if cols is not None else f"{rows} x n"
        raise InputError(f"{what}: expected shape {want}, got {expr.size1()} x {expr.size2()}")


def _function(name: str, inputs: list, outputs: list, what: str, allowed: str) -> ca.Function:
    """A CasADi function of the given inputs; an expression using another symbol is an
    error naming it."""
    f = ca.Function(name, inputs, [ca.densify(o) for o in outputs], {"allow_free": True})
    if f.has_free():
        free = ", ".join(sorted({str(s) for s in f.free_sx()}))
        raise InputError(f"{what}: uses symbols other than {allowed}: {free}")
    return f


_CALL = """
CASADI_SYMBOL_EXPORT int marsden_{name}({params}) {{
  const casadi_real* arg[{sz_arg}];
  casadi_real* res[{sz_res}];
  casadi_int iw[{sz_iw}];
  casadi_real w[{sz_w}];
{assign}
  return mx_{name}(arg, res, iw, w, 0);
}}
"""


def _wrapper_call(f: ca.Function, name: str, ins: list[str], outs: list[str]) -> str:
    params = ", ".join([f"const double* {a}" for a in ins] + [f"double* {r}" for r in outs])
    assign = "\n".join([f"  arg[{k}] = {a};" for k, a in enumerate(ins)] +
                       [f"  res[{k}] = {r};" for k, r in enumerate(outs)])
    return _CALL.format(name=name, params=params, assign=assign, sz_arg=max(f.sz_arg(), 1),
                        sz_res=max(f.sz_res(), 1), sz_iw=max(f.sz_iw(), 1),
                        sz_w=max(f.sz_w(), 1))


def compiler() -> list[str]:
    """The C compiler command: $CC, else cc. InputError when there is none."""
    command = shlex.split(os.environ.get("CC", "cc"))
    if not command or shutil.which(command[0]) is None:
        raise InputError(f"no C compiler: '{command[0] if command else ''}' (from $CC, else cc) "
                         "is not on PATH; install gcc (apt-get install gcc) or set CC")
    return command


def _compile(source: str, name: str) -> tuple[Path, bool, float]:
    """The shared object built from source, from the cache when it is there: (path,
    whether it was compiled now, compile seconds). Its name is NAME-KEY-SHA256.so: KEY
    hashes the source and the compile command (what finds it again), SHA256 its content
    (what a cached object must still match to be loaded)."""
    command = compiler()
    flags = ["-O2", "-fPIC", "-shared"]
    key = hashlib.sha256("\0".join([source, *command, *flags]).encode()).hexdigest()[:24]
    directory = private_cache_dir()
    prefix = f"{name}-{key}-"
    for cached in sorted(directory.iterdir()):
        if cached.name.startswith(prefix) and cached.suffix == ".so":
            return check_cached(cached), False, 0.0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=directory, prefix=f".{name}-") as tmp:
        c_file = Path(tmp) / f"{name}.c"
        c_file.write_text(source)
        built = Path(tmp) / f"{name}.so"
        done = subprocess.run([*command, *flags, "-o", str(built), str(c_file), "-lm"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise InputError(f"{name}: the C compiler failed ({' '.join(command)}):\n"
                             f"{done.stderr[-2000:]}")
        # Complete under a temporary name, then renamed: a reader sees all of it or nothing.
        library = directory / f"{prefix}{_sha256(built)}.so"
        os.replace(built, library)
    return library, True, time.perf_counter() - start


def scene_system(system: dict, name: str, integrator: dict | None, initial_state: dict | None,
                 **signals) -> System:
    """The simulated system of a scene with this "system" object, integrator and initial
    state (docs/scene.md); signals (controls, shape) are passed to make_system. The system
    is this program's own code (compiled here): its library loads without an allowance."""
    scene = {"system": system, "dt": 0.01, "duration": 0.01}
    if integrator is not None:
        scene["integrator"] = integrator
    if initial_state is not None:
        scene["initial_state"] = initial_state
    return make_system(parse_scene(json.dumps(scene), f"symbolic.{name}", allow_code=True),
                       **signals)
