"""The Python API documents itself: every public name of marsden and of its submodules
(functions, classes, and the classes' public methods and properties) has a docstring.

Imports the package from $PYTHONPATH (the build tree's python/ folder, as ctest sets it, or
an installed copy).
"""

import importlib
import inspect

import marsden

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
        defined = [key for key, value in vars(module).items()
                   if not key.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                   and value.__module__ == module.__name__]
        assert not set(defined) - set(module.__all__), (name, set(defined) - set(module.__all__))
