"""Figure of the contact experiment (docs/contact.md).

Usage: python3 contact.py OUT_DIR  (reads OUT_DIR/contact.csv, writes OUT_DIR/contact.png):
the sliding box's speed against time, falling at mu g until it stops, the tossed box's
height against time at each step size, down to 0.25 m where it rests on a face, and the
bouncing ball's gap with restitution 1 and 0.5.
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(out_dir):
    out = Path(out_dir)
    data = np.genfromtxt(out / "contact.csv", delimiter=",", names=True)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4))
    titles = ["sliding box (mu = 0.25): speed", "tossed box (mu = 0.1): height of its centre"]
    labels = ["|v| (m/s)", "z (m)"]
    for case, ax in enumerate(axes[:2]):
        rows = data[data["case"] == case]
        for i, dt in enumerate(sorted({float(d) for d in rows["dt"]})):
            run = rows[rows["dt"] == dt]
            ax.plot(run["t"], run["value"], color=f"C{i}", label=f"dt = {dt:g} s")
        ax.set_title(titles[case])
        ax.set_xlabel("t (s)")
        ax.set_ylabel(labels[case])
        ax.legend(fontsize=8)
    axes[1].axhline(0.25, color="0.5", lw=0.8, ls=":")
    for i, e in enumerate((1.0, 0.5)):
        run = data[data["case"] == 2.0 + e]
        axes[2].plot(run["t"], run["value"], color=f"C{i}", label=f"restitution {e:g}")
    axes[2].set_title("bouncing ball (dt = 0.01 s): gap")
    axes[2].set_xlabel("t (s)")
    axes[2].set_ylabel("gap (m)")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "contact.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
