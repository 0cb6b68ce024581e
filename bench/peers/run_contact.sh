#!/usr/bin/env bash
# Marsden's hard contact against MuJoCo's soft contact: the closed-form cases of
# docs/contact.md and Unitree's A1 standing (bench/peers/contact.py, docs/peers.md), in one
# process:
#   bash bench/peers/run_contact.sh [BUILD_DIR] [--rounds N]
# BUILD_DIR is a Marsden build whose python/ holds the built package (default: build/release
# of this tree), or that python/ folder itself. Creates or updates bench/peers/.venv from
# requirements.txt here (MuJoCo, and example-robot-data for A1's URDF) and runs contact.py
# with the package on PYTHONPATH (python_peer.sh). Builds nothing.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/python_peer.sh" run_contact.sh contact.py "$@"
