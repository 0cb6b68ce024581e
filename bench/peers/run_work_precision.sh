#!/usr/bin/env bash
# The work-precision race (bench/peers/work_precision.cpp, docs/peers.md):
#   bash bench/peers/run_work_precision.sh [rounds]
# Sets up bench/peers/.venv and builds the harness as run.sh does, runs it (default 3
# rounds; about 10 minutes on 2 cores), keeps every point in
# bench/peers/build/work_precision.csv and draws the diagram into
# bench/peers/build/work_precision.png (plot_work_precision.py).
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
cmake --build "$here/build" --target work_precision -j2 >> "$log" 2>&1 || { tail -50 "$log"; exit 1; }
csv="$here/build/work_precision.csv"
"$here/build/work_precision" "${1:-3}" "$csv"
"$venv/bin/python" "$here/plot_work_precision.py" "$csv" "$here/build/work_precision.png"
