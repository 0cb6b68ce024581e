#!/usr/bin/env bash
# Installs what Marsden needs and is missing: Debian packages and pinned PyPI packages.
# Safe to run again: it only installs what is not there yet. --robots adds the robot zoo's
# PyPI packages (requirements-robots.txt), --suites the MJCF model suites' files.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(cmake g++ make ninja-build ccache libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev
      chromium chromium-driver
      libbenchmark-dev zlib1g-dev libtinyxml2-dev coinor-libipopt-dev clang libclang-rt-14-dev
      python3 python3-venv python3-dev)
# python3 may come from elsewhere (pyenv, with venv and headers built in); then Debian's
# python3, python3-venv and python3-dev are not needed.
have_python=0
command -v python3 >/dev/null 2>&1 && python3 -c "import venv, ensurepip, sysconfig" >/dev/null 2>&1 &&
  [ -f "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ] &&
  have_python=1
missing=()
for p in "${debs[@]}"; do
  if [ "$have_python" = 1 ] && [[ "$p" == python3* ]]; then continue; fi
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python goes into .venv (Debian's system Python is externally managed, PEP 668); the
# scripts and the release preset use it.
if [ ! -x .venv/bin/python ]; then
  echo "install-deps: python3 -m venv .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python - <<'PY' >/dev/null 2>&1
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
  echo "install-deps: pip install -r requirements.txt (into .venv)"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
fi
# --robots: Pinocchio and example-robot-data for the robot zoo and its tests, MuJoCo for the
# MJCF tests (about 160 MB). --suites: the MJCF files of Gymnasium's and dm_control's suites
# (their XML only, about 1 MB unpacked from a 57 MB download, into
# .venv/share/marsden-model-suites), for the tests; the demo needs none of them.
if [[ " $* " == *" --robots "* ]] &&
   ! .venv/bin/python -c 'import pinocchio, mujoco, importlib.metadata as m; m.distribution("example-robot-data")' >/dev/null 2>&1; then
  echo "install-deps: pip install -r requirements-robots.txt (into .venv)"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-robots.txt
fi
if [[ " $* " == *" --suites "* ]]; then
  .venv/bin/python scripts/install_model_suites.py
fi
