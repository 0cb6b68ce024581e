#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test: the release build's C++ and
# Python tests (the command's and the package's), the package as a self-contained wheel
# (tested in a fresh virtual environment, then installed into .venv and tested there),
# the sanitizer (ASan + UBSan, clang) build of the core tests, and a short run of the fuzz
# targets, which that build compiles too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --robots --suites
# The experiments' plots and the tests run the Python of .venv.
source .venv/bin/activate
jobs="$(nproc)"
# A compiler cache: the package's build (pip install . below) compiles the sources of the
# release build with the same flags, so it costs cache lookups, not a third compile.
# ccache keys on the compiler's name too: both builds name the same one.
export CMAKE_CXX_COMPILER_LAUNCHER=ccache CXX=g++
export CXXFLAGS="-Wall -Wextra -Wpedantic"  # the release preset's flags, for the pip build

cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

# The package as a user gets it: a self-contained wheel, tested in a fresh virtual
# environment, then installed into .venv and imported from there.
bash scripts/test_wheel.sh
ccache --show-stats | grep -iE "hits|misses" || true
(cd /tmp && python -c "import marsden; print('installed marsden', marsden.__version__)")
python -m pytest -q -p no:cacheprovider tests/python/test_package.py tests/python/test_state.py \
  tests/python/test_pickle.py tests/python/test_control.py tests/python/test_api_docs.py \
  tests/python/test_robots.py tests/python/test_mjcf.py \
  tests/python/test_sweep.py

cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$jobs"
ctest --preset sanitize -j "$jobs"

# The input readers under libFuzzer (clang, ASan + UBSan), 15 s each (docs/reliability.md).
bash scripts/fuzz.sh 15
