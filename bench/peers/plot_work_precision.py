"""The work-precision diagram from work_precision's CSV: one panel per chain and error,
CPU time per simulated second against the error, one line per integrator (Marsden's
solid, the peers' dashed).

    python plot_work_precision.py work_precision.csv work_precision.png
"""

import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(source, target):
    points = defaultdict(lambda: defaultdict(list))
    marsden = {}
    with open(source, newline="") as f:
        for row in csv.DictReader(f):
            points[row["system"]][row["integrator"]].append(row)
            marsden[row["integrator"]] = row["marsden"] == "1"
    systems = list(points)
    # One colour per integrator across the panels.
    colours = {name: f"C{i % 10}" for i, name in enumerate(marsden)}
    fig, axes = plt.subplots(2, len(systems), figsize=(4.2 * len(systems), 7.5), squeeze=False)
    for col, system in enumerate(systems):
        for row, (key, label) in enumerate(
            [("trajectory_error_rad", "error at 1 s (rad)"), ("energy_error_J", "energy error over 100 s (J)")]
        ):
            ax = axes[row][col]
            drawn = False
            for name, rows in points[system].items():
                pairs = [(float(r[key]), float(r["cpu_seconds_per_simulated_second"])) for r in rows]
                pairs = [(e, t) for e, t in pairs if 0.0 < e < float("inf")]
                if not pairs:
                    continue
                errors, times = zip(*pairs)
                style = "o-" if marsden[name] else "s--"
                ax.loglog(errors, times, style, ms=3, color=colours[name], label=name)
                drawn = True
            ax.set_xlabel(label)
            if not drawn:
                ax.text(0.5, 0.5, "no points", ha="center", transform=ax.transAxes)
                continue
            ax.invert_xaxis()
            ax.grid(True, which="major", alpha=0.3)
            if col == 0:
                ax.set_ylabel("CPU s per simulated s")
            if row == 0:
                ax.set_title(system)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(target, dpi=110)
    print(f"wrote {target}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_work_precision.py WORK_PRECISION_CSV OUTPUT_PNG")
    main(sys.argv[1], sys.argv[2])
