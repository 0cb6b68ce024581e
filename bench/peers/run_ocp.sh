#!/usr/bin/env bash
# Marsden's optimal control against Crocoddyl's on the cart-pole swing-up (bench/peers/ocp.py,
# docs/peers.md), in one process:
#   bash bench/peers/run_ocp.sh [BUILD_DIR] [--rounds N]
# BUILD_DIR is a Marsden build whose python/ holds the built package (default: build/release
# of this tree), or that python/ folder itself. Creates or updates bench/peers/.venv from
# requirements.txt here (the same environment as run.sh; Crocoddyl is never installed
# anywhere else) and runs ocp.py with the package on PYTHONPATH (python_peer.sh). Builds
# nothing.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/python_peer.sh" run_ocp.sh ocp.py "$@"
