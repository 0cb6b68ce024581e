#!/usr/bin/env bash
# Marsden against Pinocchio and MuJoCo in one process (bench/peers/peers.cpp):
#   bash bench/peers/run.sh [rounds]
# creates bench/peers/.venv with the pinned wheels (requirements.txt here) on first use,
# builds the harness in bench/peers/build (Release, marsden_core from this tree) and runs
# it. Needs the Debian packages of scripts/install-deps.sh (CMake, g++, Eigen, ...).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$here/build"
log="$here/build/peers-build.log"
cmake -S "$here" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPEERS_SITE="$site" \
  > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build "$here/build" --target peers -j2 >> "$log" 2>&1 || { tail -50 "$log"; exit 1; }
"$here/build/peers" "$@"
