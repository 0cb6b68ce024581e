"""What the peer benchmarks print beside their figures: the machine's CPU and a spread."""

import platform
import statistics
from pathlib import Path


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def spread(values, fmt):
    """The median and the range of values, each formatted by fmt: "m (lo-hi)"."""
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"
