#!/usr/bin/env bash
# The work-precision race (bench/peers/work_precision.cpp, docs/peers.md):
#   bash bench/peers/run_work_precision.sh [rounds]
# Sets up bench/peers/.venv and builds the harness as run.sh does, runs it (default 3
# rounds; about 9 minutes on 2 cores), keeps every point in
# bench/peers/build/work_precision.csv and draws the diagram into
# bench/peers/build/work_precision.png (plot_work_precision.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/build_harness.sh"
build_harness work_precision
csv="$here/build/work_precision.csv"
"$here/build/work_precision" "${1:-3}" "$csv"
"$here/.venv/bin/python" "$here/plot_work_precision.py" "$csv" "$here/build/work_precision.png"
