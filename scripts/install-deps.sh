#!/usr/bin/env bash
# Installs what Marsden needs and is missing: Debian packages and pinned PyPI packages.
# Safe to run again: it only installs what is not there yet.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(cmake g++ make ninja-build libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
      libbenchmark-dev zlib1g-dev libtinyxml2-dev coinor-libipopt-dev python3 python3-pip)
missing=()
for p in "${debs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# python3/pip may come from elsewhere (pyenv); only ask apt for them if absent.
if command -v python3 >/dev/null 2>&1; then
  missing=("${missing[@]/python3}")
  missing=("${missing[@]/python3-pip}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 - <<'PY' >/dev/null 2>&1
import importlib.metadata as m, pathlib, sys
for line in pathlib.Path("requirements.txt").read_text().splitlines():
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, version = line.split("==")
    if m.version(name) != version:
        sys.exit(1)
PY
then
  echo "install-deps: pip install -r requirements.txt"
  python3 -m pip install -q --disable-pip-version-check -r requirements.txt
fi
