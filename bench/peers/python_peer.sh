#!/usr/bin/env bash
# The Python peer harnesses' common runner (run_ocp.sh, run_contact.sh):
#   bash bench/peers/python_peer.sh CALLER SCRIPT.py [BUILD_DIR] [ARGS...]
# BUILD_DIR is a Marsden build whose python/ holds the built package (default: build/release
# of this tree), or that python/ folder itself. Creates or updates bench/peers/.venv from
# requirements.txt here (the same environment as run.sh; the peers are never installed
# anywhere else), checks that the package imports with that environment's Python and runs
# SCRIPT.py (in bench/peers) with it on PYTHONPATH, passing ARGS. Builds nothing. CALLER
# names the script in messages.
set -euo pipefail
caller="$1"
script="$2"
shift 2
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
  echo "$caller: no built marsden package (marsden/__init__.py and _core*.so) in $build/python or $build" >&2
  echo "  give the build directory: bash bench/peers/$caller /path/to/build/release" >&2
  exit 1
fi
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
# The compiled module must match the environment's Python (e.g. cpython-311).
if ! PYTHONPATH="$pkg" "$venv/bin/python" -c "import marsden._core" 2> /dev/null; then
  echo "$caller: $pkg/marsden does not import with $("$venv/bin/python" --version) of $venv" >&2
  PYTHONPATH="$pkg" "$venv/bin/python" -c "import marsden._core" >&2 || true
  exit 1
fi
PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}" exec "$venv/bin/python" "$here/$script" "$@"
