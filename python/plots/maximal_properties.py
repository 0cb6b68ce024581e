"""Figure of the maximal-properties experiment (maximal-coordinates paper, Fig. 4).

Usage: python3 maximal_properties.py OUT_DIR  (reads energy.csv, drift.csv,
sparse_dense.csv and newton.csv from OUT_DIR, writes OUT_DIR/maximal_properties.png).
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path: Path) -> np.ndarray:
    return np.atleast_1d(np.genfromtxt(path, delimiter=",", names=True))


def main(out_dir: Path) -> None:
    fig, ax = plt.subplots(1, 4, figsize=(18, 4.2))
    e = load(out_dir / "energy.csv")
    ax[0].semilogy(e["t"] / 60, e["vi_energy_error"] + 1e-18, label="variational integrator")
    ax[0].semilogy(e["t"] / 60, e["rk2_energy_error"] + 1e-18, label="RK2 (acceleration level)")
    ax[0].set(xlabel="time [min]", ylabel="relative energy error", title="(a) double pendulum")
    d = load(out_dir / "drift.csv")
    ax[1].semilogy(d["t"], d["vi_violation"] + 1e-18, label="position level (VI)")
    ax[1].semilogy(d["t"], d["acceleration_level_violation"] + 1e-18, label="acceleration level")
    ax[1].set(xlabel="time [s]", ylabel="max |g| [m]", title="(b) three-link loop drift")
    s = load(out_dir / "sparse_dense.csv")
    ax[2].loglog(s["links"], s["sparse_s"], "o-", label="sparse LDU")
    ax[2].loglog(s["links"], s["dense_s"], "s-", label="dense LU")
    ax[2].set(xlabel="links", ylabel="seconds per Newton system", title="(c) sparse vs dense")
    n = load(out_dir / "newton.csv")
    starts = ["warm, 10 ms", "zero, 10 ms", "zero, 50 ms"]
    for links, color in zip(np.unique(n["links"]), ["C0", "C1", "C2"]):
        for start, style in zip(range(3), ["o-", "s--", "^:"]):
            sel = (n["links"] == links) & (n["start"] == start)
            above = sel & (n["error_inf"] > 100 * n["error_floor"])
            ax[3].semilogy(n["iteration"][above], n["error_inf"][above], style, color=color,
                           label=f"{int(links)} links, {starts[start]}")
    ax[3].set(xlabel="Newton iteration", ylabel="||s_i - s*||_inf above the roundoff floor",
              title="(d) Newton convergence")
    for a in ax:
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "maximal_properties.png", dpi=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
