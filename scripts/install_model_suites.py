"""The MJCF files of Gymnasium's and dm_control's model suites (docs/mjcf.md), pinned: only
the XML files (with dm_control's included common/ files) of the two wheels, fetched by
pip download --no-deps and unpacked into <prefix>/share/marsden-model-suites of the running
interpreter (the project's .venv). Does nothing when they are there already.

    .venv/bin/python scripts/install_model_suites.py
"""

import pathlib
import subprocess
import sys
import tempfile
import zipfile

WHEELS = {
    # name: (pip requirement, folder inside the wheel, kept under this name)
    "gymnasium": ("gymnasium==1.4.0", "gymnasium/envs/mujoco/assets/"),
    "dm_control": ("dm-control==1.0.50", "dm_control/suite/"),
}
TARGET = pathlib.Path(sys.prefix) / "share" / "marsden-model-suites"


def unpack(wheel: pathlib.Path, inside: str, folder: pathlib.Path) -> int:
    count = 0
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            rest = name[len(inside):] if name.startswith(inside) else ""
            # The suites' XML and what they include (common/ of dm_control); not their Python.
            if not rest or not (rest.endswith(".xml") or rest.startswith("common/")):
                continue
            out = folder / rest
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
            count += 1
    return count


def main() -> int:
    for name, (requirement, inside) in WHEELS.items():
        folder = TARGET / name
        stamp = folder / ".installed"
        if stamp.exists() and stamp.read_text().strip() == requirement:
            continue
        with tempfile.TemporaryDirectory() as scratch:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                 "--no-deps", "--dest", scratch, requirement], capture_output=True, text=True)
            wheels = list(pathlib.Path(scratch).glob("*.whl"))
            if done.returncode != 0 or len(wheels) != 1:
                print(f"install_model_suites: could not download {requirement} (offline?): "
                      f"{done.stderr.strip()[-400:]}", file=sys.stderr)
                return 1
            count = unpack(wheels[0], inside, folder)
        stamp.write_text(requirement + "\n")
        print(f"install_model_suites: {count} files of {requirement} in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
