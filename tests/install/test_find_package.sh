#!/usr/bin/env bash
# Installs the built library into a temporary prefix, then configures, builds and runs
# examples/consumer against it with find_package(marsden).
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/examples/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
"$work/build/spin_rigid_body"
"$work/build/batch_rollout" "$source_dir/examples/scenes/rigid_body.json"
"$work/build/feedback" "$source_dir/examples/scenes/cart_pole.json"
"$work/build/track_swing_up" "$source_dir/examples/problems/cart_pole_swing_up.json"
"$work/build/box_slide"
"$work/build/trailer_train"
"$work/build/lane_change"
