"""Figure of the closed-loop experiment (docs/control.md).

Usage: python3 closed_loop.py OUT_DIR  (reads OUT_DIR/tracking.csv, writes
OUT_DIR/closed_loop.png): per scenario, the largest configuration error against the nominal
swing-up over time, open loop (dashed) against TV-LQR (solid), one colour per perturbation.
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

SCENARIOS = ["cart-pole swing-up", "acrobot swing-up"]
ENTRIES = {(0, 1): "pole", (0, 0): "cart", (1, 0): "shoulder"}


def main(out_dir):
    out = Path(out_dir)
    data = np.genfromtxt(out / "tracking.csv", delimiter=",", names=True)
    scenarios = sorted({int(s) for s in np.atleast_1d(data["scenario"])})
    fig, axes = plt.subplots(1, len(scenarios), figsize=(6 * len(scenarios), 4), squeeze=False)
    for ax, scenario in zip(axes[0], scenarios):
        rows = data[data["scenario"] == scenario]
        cases = sorted({(int(r["tangent_entry"]), float(r["offset"])) for r in rows})
        for i, (entry, offset) in enumerate(cases):
            run = rows[(rows["tangent_entry"] == entry) & (rows["offset"] == offset)]
            colour = f"C{i % 10}"
            name = f"{ENTRIES.get((scenario, entry), entry)} {offset:+g}"
            ax.semilogy(run["t"], np.maximum(run["open_loop_error"], 1e-12), "--", color=colour)
            ax.semilogy(run["t"], np.maximum(run["closed_loop_error"], 1e-12), color=colour,
                        label=name)
        ax.set_title(f"{SCENARIOS[scenario]}: open loop (dashed), TV-LQR (solid)")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("largest configuration error (rad or m)")
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "closed_loop.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
