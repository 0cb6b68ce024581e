"""Figure of the nonholonomic-comparison experiment (nonholonomic paper, §6).

Usage: python3 nonholonomic_comparison.py OUT_DIR  (reads OUT_DIR/comparison.json, writes
OUT_DIR/nonholonomic_comparison.png). One row per system: pose error against the step
size (log-log), relative energy error and constraint violation over the long run, and
theta_dot over the long run (GNI's period-2 mode on the sleigh).
"""
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def clean(values, floor=None):
    out = []
    for v in values:
        v = float("nan") if v is None else float(v)
        if floor is not None and v == v:
            v = max(v, floor)
        out.append(v)
    return out


def main(out_dir: Path) -> None:
    data = json.loads((out_dir / "comparison.json").read_text())
    systems = data["systems"]
    fig, axes = plt.subplots(len(systems), 4, figsize=(20, 4.2 * len(systems)), squeeze=False)
    for row, system in zip(axes, systems):
        name = system["system"]
        for m in system["methods"]:
            label = m["label"]
            row[0].loglog(system["h"], clean(m["pose_error"], 1e-16), "o-", ms=3,
                          label=f"{label} (order {m['order']:.2f})"
                          if m["order"] is not None else label)
            row[1].semilogy(m["t"], clean(m["relative_energy_error"], 1e-17), lw=0.8,
                            label=label)
            row[2].semilogy(m["t"], clean(m["constraint_violation"], 1e-17), lw=0.8,
                            label=label)
            row[3].plot(m["t"], clean(m["theta_dot"]), lw=0.6, label=label)
        row[0].set_xlabel("step size h [s]")
        row[0].set_ylabel("pose error at T = 10 s")
        row[0].set_title(f"{name}: error vs step (ref. RK4)")
        row[1].set_xlabel("t [s]")
        row[1].set_ylabel("|E - E0| / E0")
        row[1].set_title(f"{name}: energy, h = {system['long_run_h']}")
        row[2].set_xlabel("t [s]")
        row[2].set_ylabel("|mu(q) v|")
        row[2].set_title(f"{name}: constraint violation")
        row[3].set_xlabel("t [s]")
        row[3].set_ylabel("theta_dot [rad/s]")
        row[3].set_title(f"{name}: theta_dot (decimated samples)")
        for ax in row:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "nonholonomic_comparison.png", dpi=110)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
