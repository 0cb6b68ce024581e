"""What the studies behind the robot-zoo and model-suites experiments share: their tables
written as CSV and JSON, each file published whole (written beside it, then renamed), and
JSON without inf or nan."""

import csv
import json
import math
import os
from pathlib import Path


def finite(value):
    """JSON has no inf or nan: such numbers become the strings "inf", "-inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_csv(path: Path, fields, rows) -> None:
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def write_json(path: Path, value) -> None:
    write_text(path, json.dumps(finite(value), indent=1, allow_nan=False))
