"""Figure of the maximal-vs-minimal experiment (maximal-coordinates paper, Figs. 5, 6, 8).

Usage: python3 maximal_vs_minimal.py OUT_DIR  (reads comparison.csv from OUT_DIR, writes
OUT_DIR/maximal_vs_minimal.png).
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METHODS = ["maximal VI", "minimal RK4", "minimal midpoint VI", "minimal third-order VI",
           "minimal fourth-order VI"]
MECHANISMS = ["revolute chain", "ball chain", "revolute loop", "ball loop", "four-bar chain"]
COLORS = ["C0", "C3", "C1", "C2", "C4"]


def plot_runs(ax, rows, x, label):
    """Time per run against x; a failed run as a cross at its time per completed step x 1000."""
    order = np.argsort(rows[x])
    rows = rows[order]
    ok = rows["failed"] == 0
    line, = ax.plot(rows[x][ok], rows["seconds"][ok], "o-", label=label)
    failed = ~ok
    if failed.any():
        ax.plot(rows[x][failed], rows["us_per_step"][failed] * 1e-3, "x", ms=9,
                color=line.get_color())


def main(out_dir: Path) -> None:
    c = np.atleast_1d(np.genfromtxt(out_dir / "comparison.csv", delimiter=",", names=True))
    fig, ax = plt.subplots(1, 5, figsize=(24, 4.4))
    for i, (mechanisms, title) in enumerate([((0, 1), "(Fig. 5a) pendulums"),
                                             ((2, 3), "(Fig. 5b) closed loops")]):
        for mech in mechanisms:
            for method in (0, 1):
                sel = (c["figure"] == 5) & (c["mechanism"] == mech) & (c["method"] == method)
                if sel.any():
                    plot_runs(ax[i], c[sel], "size", f"{MECHANISMS[mech]}, {METHODS[method]}")
        ax[i].set(xlabel="links", ylabel="seconds per run (best)", title=title,
                  xscale="log", yscale="log")
    for dt, style in ((0.01, "-"), (0.0025, "--")):
        for method in (0, 1, 2):
            sel = (c["figure"] == 6) & (c["method"] == method) & np.isclose(c["dt"], dt)
            if not sel.any():
                continue
            rows = c[sel]
            completed = rows["steps"] / (rows["steps"].max() if rows["failed"].min() == 0
                                         else np.round(rows["steps"].max()))
            ax[2].plot(rows["size"], completed, "o" + style, color=COLORS[method],
                       label=f"{METHODS[method]}, dt = {dt * 1e3:g} ms")
    ax[2].set(xlabel="four-bar segments", ylabel="fraction of the run completed",
              title="(Fig. 6) four-bar chains", ylim=(-0.05, 1.05))
    for j, tol in enumerate((1e-6, 1e-10)):
        for method in (0, 2, 3, 4):
            sel = (c["figure"] == 8) & (c["method"] == method) & np.isclose(c["tolerance"], tol)
            if sel.any():
                plot_runs(ax[3 + j], c[sel], "size", METHODS[method])
        ax[3 + j].set(xlabel="links", ylabel="seconds per run (best)",
                      title=f"(Fig. 8) tolerance {tol:g}", xscale="log", yscale="log")
    for a in ax:
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle("maximal vs minimal coordinates, 10 s at dt = 10 ms (x: run stopped by a "
                 "failure, plotted at 1000 x its time per completed step)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out_dir / "maximal_vs_minimal.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
