"""Figure of the rigid-body-accuracy experiment (vehicles paper, Fig. 4).

Usage: python3 rigid_body_accuracy.py OUT_DIR  (reads OUT_DIR/sweep.json, writes
OUT_DIR/rigid_body_accuracy.png). Step counts where a method blew up in some runs are
drawn with an open marker and a dashed segment, as in the paper.
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
    runs = sweep["runs"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    panels = [("rotation_error", "rotation error [rad]"),
              ("position_error", "position error [m]"),
              ("time_s", "compute time per run [s]")]
    for method in sweep["methods"]:
        for ax, (key, label) in zip(axes, panels):
            values = [float("nan") if v is None else v for v in method[key]]
            line, = ax.loglog(steps, values, label=method["label"])
            bad = [i for i, b in enumerate(method["blowups"]) if b > 0]
            for i in bad:
                if values[i] == values[i]:
                    ax.loglog(steps[i], values[i], "o", mfc="none", color=line.get_color())
            ax.set_xlabel("number of steps")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Free rigid body, {runs} random runs (open markers: some runs blew up)")
    fig.tight_layout()
    fig.savefig(out_dir / "rigid_body_accuracy.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
