#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ in the sanitizer build (clang, ASan + UBSan; the
# sanitizer tests share its libraries) and runs each for SECONDS (default 15): the JSON
# layer, scenes, problems, URDF and MJCF files, seeded from examples/. A crash, sanitizer report,
# leak, hang (10 s), a single allocation of 2 GiB or more, or a resident size over 4 GiB
# fails the run and leaves its input in build/sanitize/fuzz-artifacts/ (the resident limit
# is the larger: the sanitizer's allocator keeps what legitimate inputs such as a 100 000-link
# model took); docs/reliability.md says how to turn it into a regression test. Longer local runs: bash scripts/fuzz.sh 600.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-15}"
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$(nproc)" --target fuzz_json fuzz_scene fuzz_problem fuzz_urdf fuzz_mjcf
work=build/sanitize/fuzz-run
artifacts=build/sanitize/fuzz-artifacts
mkdir -p "$artifacts"
status=0
for target in json scene problem urdf mjcf; do
  corpus="$work/corpus_$target"
  rm -rf "$corpus" && mkdir -p "$corpus"
  case "$target" in
    urdf) cp examples/urdf/*.urdf tests/io/regressions/urdf-* "$corpus"/ ;;
    mjcf) cp examples/mjcf/*.xml "$corpus"/ ;;
    problem) cp examples/problems/*.json "$corpus"/ ;;
    scene) cp examples/scenes/*.json tests/io/regressions/scene-* "$corpus"/ ;;
    json) cp examples/scenes/*.json examples/problems/*.json "$corpus"/ ;;
  esac
  log="$work/$target.log"
  if ./build/sanitize/fuzz/fuzz_"$target" "$corpus" -max_total_time="$seconds" -max_len=8192 \
       -timeout=10 -malloc_limit_mb=2048 -rss_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="$artifacts/$target-" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz_$target: $runs executions in ${seconds} s, nothing found"
  else
    echo "fuzz_$target: FOUND a failure; see $log and $artifacts/"
    tail -n 30 "$log"
    status=1
  fi
done
exit "$status"
