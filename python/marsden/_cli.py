"""The console script `marsden` of the wheel: runs the command compiled into the package
(marsden/bin/marsden) with this interpreter as the Python it starts for view, report and
sweep ($MARSDEN_PYTHON)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    command = Path(__file__).resolve().parent / "bin" / "marsden"
    if not command.is_file():
        sys.exit(f"marsden: the command is not part of this installation ({command} is "
                 "missing); build it with CMake (docs/usage.md) or install the wheel")
    os.environ.setdefault("MARSDEN_PYTHON", sys.executable)
    os.execv(str(command), [str(command), *sys.argv[1:]])


if __name__ == "__main__":
    main()
