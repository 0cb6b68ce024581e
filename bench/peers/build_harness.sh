# Sourced by run.sh and run_work_precision.sh: build_harness TARGET creates or updates the
# private environment bench/peers/.venv from requirements.txt, configures this folder's
# CMakeLists.txt in bench/peers/build (Release, PEERS_SITE: the environment's
# site-packages) and builds TARGET there, the log in build/peers-build.log.
build_harness() {
  local here venv site log
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
    > "$log" 2>&1 || { cat "$log"; return 1; }
  cmake --build "$here/build" --target "$1" -j2 >> "$log" 2>&1 || { tail -50 "$log"; return 1; }
}
