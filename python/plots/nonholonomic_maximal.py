"""Figure of the nonholonomic-maximal experiment (docs/maximal.md, Nonholonomic constraints).

Usage: python3 nonholonomic_maximal.py OUT_DIR  (reads OUT_DIR/nonholonomic_maximal.json,
writes OUT_DIR/nonholonomic_maximal.png): the maximal vehicles' pose error against the step
(the sleigh, disk, car and snakeboard against reduced models, the snakeboard gait against RDP,
the lane change against a fine step) with a slope-2 guide, the sleigh's relative energy error
and turning rate over the long run, the lane change's path (tractor and last trailer) with the
steering angle, and the trailer train's time per step against the number of trailers with a
slope-1 guide.
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(out_dir):
    out = Path(out_dir)
    data = json.loads((out / "nonholonomic_maximal.json").read_text())
    fig, axes = plt.subplots(1, 4, figsize=(22, 4))
    ax = axes[0]
    runs = data["systems"] + [dict(data["gait"], system="snakeboard gait"),
                              dict(data["lane_change"], system="lane change")]
    for i, s in enumerate(runs):
        h, e = np.array(s["h"]), np.array(s["pose_error"])
        ax.loglog(h, e, "o-", color=f"C{i}", label=f"{s['system']} (order {s['order']:.2f})")
    h = np.array(data["systems"][0]["h"])
    ax.loglog(h, data["systems"][0]["pose_error"][-1] * (h / h[-1]) ** 2, "k:", lw=0.8,
              label="slope 2")
    ax.set_xlabel("step h (s)")
    ax.set_ylabel("pose error at T (10 s; lane change 20 s)")
    ax.set_title("maximal vehicles: convergence")
    ax.legend(fontsize=8)
    run = data["long_run"]
    ax = axes[1]
    ax.semilogy(run["t"], np.maximum(run["relative_energy_error"], 1e-17), color="C0",
                label="|E - E0| / E0")
    ax.semilogy(run["t"], np.maximum(np.abs(run["theta_dot"]), 1e-17), color="C1",
                label="|theta_dot| (rad/s)")
    ax.set_xlabel("t (s)")
    ax.set_title(f"sleigh, h = {run['h']:g} s")
    ax.legend(fontsize=8)
    lane = data["lane_change"]
    ax = axes[2]
    ax.plot(lane["x_tractor"], lane["y_tractor"], color="C0", label="tractor")
    ax.plot(lane["x_last_trailer"], lane["y_last_trailer"], color="C1", label="last trailer")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    steer = ax.twinx()
    steer.plot(lane["x_tractor"], lane["steering"], "k:", lw=0.8)
    steer.set_ylabel("steering (rad, dotted)")
    ax.set_title(f"lane change, h = {lane['series_h']:g} s")
    ax.legend(fontsize=8, loc="lower right")
    tr = data["trailers"]
    n, t = np.array(tr["n"]), 1e6 * np.array(tr["seconds_per_step"])
    ax = axes[3]
    ax.loglog(n, t, "o-", color="C2", label="maximal VI with skates")
    ax.loglog(n, t[0] * n / n[0], "k:", lw=0.8, label="slope 1")
    ax.set_xlabel("trailers")
    ax.set_ylabel("CPU time per step (us)")
    ax.set_title("tractor with trailers")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "nonholonomic_maximal.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
