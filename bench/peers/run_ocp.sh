#!/usr/bin/env bash
# Marsden's optimal control against Crocoddyl's on the cart-pole swing-up (bench/peers/ocp.py,
# docs/peers.md), in one process:
#   bash bench/peers/run_ocp.sh [BUILD_DIR] [--rounds N]
# BUILD_DIR is a Marsden build whose python/ holds the built package (default: build/release
# of this tree), or that python/ folder itself. Creates or updates bench/peers/.venv from
# requirements.txt here (the same environment as run.sh; Crocoddyl is never installed
# anywhere else) and runs ocp.py with the package on PYTHONPATH. Builds nothing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build/release"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build="$1"
  shift
fi
pkg="$build/python"
[ -f "$pkg/marsden/__init__.py" ] || pkg="$build"
if [ ! -f "$pkg/marsden/__init__.py" ] || ! compgen -G "$pkg/marsden/_core*.so" > /dev/null; then
  echo "run_ocp.sh: no built marsden package (marsden/__init__.py and _core*.so) in $build/python or $build" >&2
  echo "  give the build directory: bash bench/peers/run_ocp.sh /path/to/build/release" >&2
  exit 1
fi
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
# The compiled module must match the environment's Python (e.g. cpython-311).
if ! PYTHONPATH="$pkg" "$venv/bin/python" -c "import marsden._core" 2> /dev/null; then
  echo "run_ocp.sh: $pkg/marsden does not import with $("$venv/bin/python" --version) of $venv" >&2
  PYTHONPATH="$pkg" "$venv/bin/python" -c "import marsden._core" >&2 || true
  exit 1
fi
PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}" exec "$venv/bin/python" "$here/ocp.py" "$@"
