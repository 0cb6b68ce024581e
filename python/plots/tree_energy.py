"""Figure of the tree-energy experiment (tree paper §VII).

Usage: python3 tree_energy.py OUT_DIR  (reads OUT_DIR/energy.csv and constraint.csv,
writes OUT_DIR/tree_energy.png): per system, the max |relative energy error| per time
window of the midpoint VI and of RK4; for the four-bar, the max constraint residual |h|.
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# The "system" codes of energy.csv.
SYSTEMS = {0: "double pendulum", 1: "5-link chain", 2: "four-bar"}
FLOOR = 1e-17  # log axes: an exact zero is drawn here


def main(out_dir: Path) -> None:
    energy = np.genfromtxt(out_dir / "energy.csv", delimiter=",", names=True, ndmin=1)
    constraint = np.genfromtxt(out_dir / "constraint.csv", delimiter=",", names=True, ndmin=1)
    fig, axes = plt.subplots(1, len(SYSTEMS) + 1, figsize=(18, 4.5))
    for ax, (code, name) in zip(axes, SYSTEMS.items()):
        rows = energy[energy["system"] == code]
        ax.semilogy(rows["t"], np.maximum(rows["vi_energy_error"], FLOOR), label="midpoint VI")
        ax.semilogy(rows["t"], np.maximum(rows["rk4_energy_error"], FLOOR), label="RK4")
        ax.set_title(f"{name}: energy")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("max |E - E0| / |E0| per window")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax = axes[-1]
    ax.semilogy(constraint["t"], np.maximum(constraint["vi_residual"], FLOOR), label="midpoint VI")
    ax.semilogy(constraint["t"], np.maximum(constraint["rk4_residual"], FLOOR), label="RK4")
    ax.set_title("four-bar: constraint residual")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("max |h(q)| per window [m]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("Midpoint VI vs RK4 at dt = 0.01")
    fig.tight_layout()
    fig.savefig(out_dir / "tree_energy.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
