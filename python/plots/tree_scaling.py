"""Figure of the tree-scaling experiment (tree paper, Fig. 3).

Usage: python3 tree_scaling.py OUT_DIR  (reads OUT_DIR/scaling.csv, writes
OUT_DIR/tree_scaling.png): time per simulation against the number of links N, log-log,
for the midpoint VI with each evaluation of the Lagrangian and for RK4.
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# The "method" codes of scaling.csv.
METHODS = {0: ("VI, spatial recursions", "o-"),
           1: ("VI, paper recursion, cached", "s-"),
           2: ("VI, paper equations, no caching", "^:"),
           3: ("RK4, continuous dynamics", "x--")}


def main(out_dir: Path) -> None:
    data = np.genfromtxt(out_dir / "scaling.csv", delimiter=",", names=True, ndmin=1)
    fig, ax = plt.subplots(figsize=(7, 5))
    for code, (label, style) in METHODS.items():
        rows = data[data["method"] == code]
        if rows.size:
            ax.loglog(rows["N"], rows["seconds_per_simulation"], style, ms=4, label=label)
    spatial = data[data["method"] == 0]
    ref = spatial[spatial["N"] == 10]
    if ref.size:  # an N^2 guide through the spatial VI's time at N = 10
        n = np.array([10.0, spatial["N"].max()])
        ax.loglog(n, ref["seconds_per_simulation"][0] * (n / 10.0) ** 2, color="gray",
                  lw=1, label="N^2 guide")
    ax.axhline(20.0, color="gray", ls=":", lw=1, label="paper Fig. 3: 19 links < 20 s")
    ax.set_xlabel("number of links N")
    ax.set_ylabel("time per simulation [s]")
    steps = round(data["seconds_per_simulation"][0] / (1e-6 * data["us_per_step"][0]))
    ax.set_title(f"N-link pendulum, {steps} steps at dt = 0.01 (midpoint VI, alpha = 1/2)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "tree_scaling.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
