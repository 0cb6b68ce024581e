"""Fixtures shared by the Python tests."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def fresh_symbolic_cache(tmp_path_factory):
    """marsden.symbolic compiles into a fresh cache folder per test session, so that the
    tests see the compiler run (and the cache fill) whatever an earlier session left, and
    leave nothing in the user's cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MARSDEN_CACHE", str(tmp_path_factory.mktemp("symbolic-cache")))
    yield
    mp.undo()
