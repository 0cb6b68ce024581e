"""The private virtual environment (BUILD_DIR/peers-venv) in which the peer benchmarks
install their PyPI peers, so that the project itself never depends on them."""
import os
import subprocess
import sys


def venv_python(build: str, packages: list) -> str:
    """Creates the environment on first use, installs the pinned packages if missing and
    returns its interpreter."""
    venv = os.path.join(build, "peers-venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *packages], check=True)
    return python
