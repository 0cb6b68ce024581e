"""Figure of the car-accuracy experiment (vehicles paper, Fig. 5).

Usage: python3 car_accuracy.py OUT_DIR  (reads OUT_DIR/sweep.json, writes
OUT_DIR/car_accuracy.png): heading error, position error and compute time per run
against the number of steps, log-log, for the RDP integrator and RK2/RK4.
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out_dir: Path) -> None:
    sweep = json.loads((out_dir / "sweep.json").read_text())
    steps = sweep["steps"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    panels = [("heading_error", "heading error [rad]"),
              ("position_error", "position error [m]"),
              ("time_s", "compute time per run [s]")]
    for method in sweep["methods"]:
        for ax, (key, label) in zip(axes, panels):
            values = [float("nan") if v is None else v for v in method[key]]
            ax.loglog(steps, values, "o-", ms=3, label=method["label"])
            ax.set_xlabel("number of steps")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
    ref = sweep.get("reference_self_error")
    if ref:
        for ax in axes[:2]:
            ax.axhline(ref, color="gray", ls=":", lw=1, label="reference self-consistency")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Car, {sweep['runs']} random runs of {sweep['duration_s']:g} s "
                 "(mean over runs)")
    fig.tight_layout()
    fig.savefig(out_dir / "car_accuracy.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
