"""Test fixture for run_plot_script: writes OUT_DIR/fixture.png from OUT_DIR/data.txt."""

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out = pathlib.Path(sys.argv[1])
values = [float(x) for x in (out / "data.txt").read_text().split()]
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot(values)
fig.savefig(out / "fixture.png", dpi=50)
