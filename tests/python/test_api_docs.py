"""The Python API documents itself: every public name of marsden and of its submodules
(functions, classes, and the classes' public methods and properties) has a docstring, the
public classes say what they are in their repr, and the examples pass mypy --strict against
the package's stubs and annotations.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it, or
an installed copy).
"""

import importlib
import inspect
import os
import pathlib
import site
import subprocess
import sys

import numpy as np

import marsden

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "examples" / "scenes"
PROBLEMS = ROOT / "examples" / "problems"

# Beside marsden's __all__: the submodules a user imports by name, and the compiled core,
# whose stubs are what editors and mypy show.
MODULES = ["marsden", "marsden.symbolic", "marsden._core"]


def _is_compiled(module):
    return module.__name__.startswith("marsden._core")


def _module_names(module):
    """The module's public names: the compiled core's are those without an underscore; a
    Python module declares its own in __all__ (checked complete below)."""
    if _is_compiled(module):
        return [name for name in dir(module) if not name.startswith("_")]
    return list(module.__all__)


def _doc(value):
    """The docstring written for value, or "" (nanobind prefixes a function's docstring with
    its signature, which documents nothing: each overload's own docstring is read instead,
    and every overload must have one)."""
    if isinstance(value, property):
        signature = getattr(value.fget, "__nb_signature__", None)
        if signature is not None:
            return " ".join(doc or "" for _, doc, _ in signature).strip()
        return (value.__doc__ or "").strip()
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    signature = getattr(value, "__nb_signature__", None)
    if signature is not None:
        docs = [(doc or "").strip() for _, doc, _ in signature]
        return "\n".join(docs) if all(docs) else ""
    return (value.__doc__ or "").strip()


def _members(cls):
    """The public methods and properties of a class, its own or inherited from a marsden
    class (not those of object, Exception and the like)."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        owner = next((base for base in cls.__mro__ if name in vars(base)), None)
        if owner is None or not owner.__module__.startswith("marsden"):
            continue
        value = vars(owner)[name]
        if isinstance(value, (property, staticmethod, classmethod)) or callable(value):
            yield name, value


def _documentable(value):
    # Constants (the version, ABI numbers, CasADi symbols) carry no docstring of their own.
    return inspect.ismodule(value) or inspect.isclass(value) or callable(value)


def public_api():
    """(qualified name, object) for every public name that should carry a docstring: the
    public names of the modules above and of the marsden modules among them, recursively,
    and the public members of every class among them. marsden.symbolic is left out where
    CasADi is missing."""
    pending, modules = list(MODULES), []
    while pending:
        name = pending.pop(0)
        try:
            module = importlib.import_module(name)
        except ImportError:
            if name != "marsden.symbolic":
                raise
            continue
        if module in modules:
            continue
        modules.append(module)
        for public in _module_names(module):
            value = getattr(module, public)
            if inspect.ismodule(value) and value.__name__.startswith("marsden"):
                pending.append(value.__name__)
    seen = set()
    for module in modules:
        yield module.__name__, module
        for name in _module_names(module):
            value = getattr(module, name)
            if not _documentable(value) or inspect.ismodule(value) or id(value) in seen:
                continue
            seen.add(id(value))
            qualified = f"{module.__name__}.{name}"
            yield qualified, value
            if inspect.isclass(value):
                for member, attribute in _members(value):
                    yield f"{qualified}.{member}", attribute


def test_every_public_name_has_a_docstring():
    names = list(public_api())
    assert len(names) > 100
    missing = [name for name, value in names if not _doc(value)]
    assert not missing, f"{len(missing)} public names without a docstring:\n" + "\n".join(missing)


def test_python_modules_declare_all_they_define():
    # A function or class a Python module defines without an underscore is public: in
    # __all__, so that the walk above sees it.
    for name, module in public_api():
        if not inspect.ismodule(module) or _is_compiled(module):
            continue
        assert hasattr(module, "__all__"), name
        defined = {key for key, value in vars(module).items()
                   if not key.startswith("_")
                   and (inspect.isclass(value) or inspect.isfunction(value))
                   and value.__module__ == module.__name__}
        assert not defined - set(module.__all__), (name, defined - set(module.__all__))


# --- repr ---------------------------------------------------------------------------------

def test_scenes_and_systems_say_their_family_sizes_and_file():
    scene = marsden.load_scene(SCENES / "helicopter_turn.json")
    assert repr(scene) == (f"Scene(helicopter, {scene.steps} steps of 0.01 s, "
                           f"from {str(SCENES / 'helicopter_turn.json')!r})")
    system = marsden.make_system(scene)
    assert repr(system).startswith("System(helicopter, 13 states (12 in the tangent chart), "
                                   "2 controls, from ")
    assert "helicopter_turn.json" in repr(system)
    tree_scene = marsden.load_scene(SCENES / "cart_pole.json")
    assert repr(tree_scene).startswith("Scene(tree: frames, ")
    assert "1 control, from " in repr(marsden.make_system(tree_scene))


def test_models_and_mechanisms_say_their_sizes_and_origin():
    assert repr(marsden.tree.n_link_pendulum(3)) == (
        "Model(6 frames, 3 coordinates (0 prescribed), 0 inputs, 0 constraint rows, "
        "from marsden.tree.n_link_pendulum)")
    urdf = ROOT / "examples" / "urdf" / "double_pendulum.urdf"
    assert repr(marsden.tree.model_from_urdf(urdf)).endswith(f"from {str(urdf)!r})")
    b = marsden.tree.Builder()
    b.frame("link", "world", "rx", "theta")
    b.frame("bob", "link", "tz", value=-1.0, mass=1.0)
    b.force_input("theta")
    model = b.build()
    assert repr(model) == ("Model(2 frames, 1 coordinate (0 prescribed), 1 input, "
                           "0 constraint rows, from marsden.tree.Builder)")
    assert repr(marsden.tree.system(model)).startswith("System(tree midpoint, 2 states")
    chain = marsden.maximal.pendulum_chain(4)
    assert repr(chain) == "Mechanism(4 bodies, 4 joints, from marsden.maximal.pendulum_chain)"
    assert repr(marsden.maximal.mechanism_from_urdf(urdf)).endswith(f"from {str(urdf)!r})")
    assert repr(marsden.maximal.system(chain, inputs=["joint0"], controls=[0.0])).startswith(
        "System(maximal, 52 states (48 in the tangent chart), 1 control")


def test_problems_say_their_family_sizes_and_file():
    path = PROBLEMS / "cart_pole_swing_up.json"
    problem = marsden.load_problem(path)
    assert repr(problem) == (
        f"Problem('cart_pole_swing_up', tree, {problem.steps} steps, "
        f"{problem.num_variables} variables, {problem.num_constraints} constraints, "
        f"from {str(path)!r})")


def test_signals_and_feedback_say_their_kind_and_size():
    assert repr(marsden.Signal.constant([49.05, 0.0])) == "Signal.constant([49.05, 0])"
    assert repr(marsden.Signal.table([0.0, 1.0], [[1.0], [2.0]])) == "Signal(table, 1 component)"
    assert repr(marsden.Signal.table([0.0, 1.0], [[1.0], [2.0]], hold="zero_order")) == (
        "Signal(table, 1 component, held at each step's start)")
    assert repr(marsden.Signal.sinusoid([0.0, 1.0], [1.0, 1.0], [2.0, 2.0])) == (
        "Signal(sinusoid, 2 components)")
    assert repr(marsden.as_signal(lambda t: [t, 0.0])) == "Signal(function, 2 components)"
    held = marsden.HeldInput(2)
    held.set(np.array([1.5, -2.0]))
    assert repr(held) == "HeldInput(2 inputs, value [1.5, -2])"
    feedback = marsden.Feedback(lambda t, x: 0.0, inputs=1, lower=[-1.0], upper=[1.0])
    assert repr(feedback) == "Feedback(1 input, value [0])"


def test_tracking_says_what_it_follows():
    scene = marsden.load_scene(SCENES / "cart_pole.json")
    held = marsden.HeldInput(1)
    system = marsden.make_system(scene, controls=held)
    nominal = marsden.control.rollout(system, held, 0.0, scene.dt, system.state, np.zeros((3, 1)))
    tracking = marsden.control.Tracking(system, nominal, np.zeros((3, 1, 4)))
    assert repr(tracking) == f"Tracking({nominal!r})"


# --- types --------------------------------------------------------------------------------

def test_examples_pass_mypy_strict(tmp_path):
    # The package imported here, as mypy sees it: from the build tree through MYPYPATH; an
    # installed one mypy finds by its py.typed (and refuses site-packages in MYPYPATH).
    # pyproject.toml's [tool.mypy] sections say what is not checked, and why.
    package_root = pathlib.Path(marsden.__file__).resolve().parents[1]
    installed = {pathlib.Path(p).resolve()
                 for p in [*site.getsitepackages(), site.getusersitepackages()]}
    env = dict(os.environ)
    if package_root not in installed:
        env["MYPYPATH"] = str(package_root)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "pyproject.toml",
         "--cache-dir", str(tmp_path), "examples/python"],
        cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues found in" in result.stdout
