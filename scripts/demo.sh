#!/usr/bin/env bash
# Installs what is missing, builds Marsden (release) and runs the headline demo: Unitree's A1
# standing on the ground with hard contact, the rigid-body accuracy experiment of the
# vehicles paper (Fig. 4) and a helicopter flight.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --robots  # A1's URDF comes from example-robot-data
source .venv/bin/activate  # the experiment's plot runs the Python of .venv
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target marsden_cli _core marsden_python_files  # only what the demo runs (the player is Python)
out=out/demo
mkdir -p "$out"
./build/release/apps/marsden simulate examples/scenes/a1_standing.json --out "$out/a1" --force --view
./build/release/apps/marsden experiment run rigid-body-accuracy --out "$out/rigid-body-accuracy"
./build/release/apps/marsden simulate examples/scenes/helicopter_turn.json --out "$out/helicopter" --force --view
echo "demo: results in $out (results.json, sweep.json, rigid_body_accuracy.png, trajectory.csv/.npz);
  open $out/a1/view.html in a browser to watch A1 land and stand, and
  $out/helicopter/view.html to watch the helicopter fly"
