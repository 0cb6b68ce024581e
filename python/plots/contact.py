"""Figure of the contact experiment (docs/contact.md).

Usage: python3 contact.py OUT_DIR  (reads OUT_DIR/contact.csv, writes OUT_DIR/contact.png):
the sliding box's speed against time, falling at mu g until it stops, and the tossed box's
height against time at each step size, down to 0.25 m where it rests on a face.
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
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    titles = ["sliding box (mu = 0.25): speed", "tossed box (mu = 0.1): height of its centre"]
    labels = ["|v| (m/s)", "z (m)"]
    for case, ax in enumerate(axes):
        rows = data[data["case"] == case]
        for i, dt in enumerate(sorted({float(d) for d in rows["dt"]})):
            run = rows[rows["dt"] == dt]
            ax.plot(run["t"], run["value"], color=f"C{i}", label=f"dt = {dt:g} s")
        ax.set_title(titles[case])
        ax.set_xlabel("t (s)")
        ax.set_ylabel(labels[case])
        ax.legend(fontsize=8)
    axes[1].axhline(0.25, color="0.5", lw=0.8, ls=":")
    fig.tight_layout()
    fig.savefig(out / "contact.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
