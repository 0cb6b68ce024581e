#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test: the release build's C++ and
# Python tests (the command's and the package's), and the sanitizer (ASan + UBSan) build
# of the core tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The experiments' plots and the tests run the Python of .venv.
source .venv/bin/activate
jobs="$(nproc)"

cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$jobs"
ctest --preset sanitize -j "$jobs"
