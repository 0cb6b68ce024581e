"""Figure of the maximal-performance experiment (maximal-coordinates paper, Figs. 5, 6, 8).

Usage: python3 maximal_performance.py OUT_DIR  (reads pendulums.csv,
pendulum_tolerances.csv and four_bars.csv, writes OUT_DIR/maximal_performance.png).
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out_dir: Path) -> None:
    p = np.atleast_1d(np.genfromtxt(out_dir / "pendulums.csv", delimiter=",", names=True))
    t = np.atleast_1d(np.genfromtxt(out_dir / "pendulum_tolerances.csv", delimiter=",",
                                    names=True))
    f = np.atleast_1d(np.genfromtxt(out_dir / "four_bars.csv", delimiter=",", names=True))
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    for spherical in (0, 1):
        for loop in (0, 1):
            sel = (p["spherical"] == spherical) & (p["loop"] == loop)
            label = ("spherical" if spherical else "revolute") + (", loop" if loop else "")
            ax[0].plot(p["links"][sel], p["us_per_step"][sel], "o-" if loop else "o--",
                       label=label)
            failed = sel & (p["failures"] > 0)
            ax[0].plot(p["links"][failed], p["us_per_step"][failed], "kx", ms=9)
    ax[0].set(xlabel="links", ylabel="us per completed step",
              title="n-link pendulums (x: run stopped by a failed step)")
    for tol in np.unique(t["tolerance"]):
        sel = t["tolerance"] == tol
        ax[1].plot(t["links"][sel], t["us_per_step"][sel], "o-", label=f"tol {tol:g}")
    ax[1].set(xlabel="links", ylabel="us per step", title="open revolute pendulums, tolerances")
    for tol in np.unique(f["tolerance"]):
        sel = f["tolerance"] == tol
        ax[2].plot(f["segments"][sel], f["us_per_step"][sel], "o-", label=f"tol {tol:g}")
        failed = sel & (f["failures"] > 0)
        ax[2].plot(f["segments"][failed], f["us_per_step"][failed], "kx", ms=9)
    ax[2].set(xlabel="four-bar segments", ylabel="us per completed step",
              title="four-bar chains (x: run stopped by a failed step)")
    for a in ax:
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "maximal_performance.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
