#!/usr/bin/env bash
# Marsden against Pinocchio and MuJoCo in one process (bench/peers/peers.cpp):
#   bash bench/peers/run.sh [rounds]
# creates bench/peers/.venv with the pinned wheels (requirements.txt here) on first use,
# builds the harness in bench/peers/build (Release, marsden_core from this tree) and runs
# it. Needs the Debian packages of scripts/install-deps.sh (CMake, g++, Eigen, ...).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/build_harness.sh"
build_harness peers
"$here/build/peers" "$@"
