"""Runs bench_tree and prints, per chain length N, the time of one midpoint step for each
way of evaluating the Lagrangian and for RK4 on the continuous dynamics (same run, same
dt), their ratios, the fitted growth exponent of the spatial step over N >= 10, and the
19-link 10 s simulation against the goal (20 ms) and trep's figure from the issue (1.3 s);
then one Galerkin step (s = 1, 2, 3) against the midpoint step, and the error at 2 s
against the CPU time of the run for the midpoint and Galerkin (s = 2, 3) VIs.

Usage: python3 bench/report_tree.py [BUILD_DIR] [extra benchmark flags...]
"""
import json
import math
import subprocess
import sys
from collections import defaultdict


def fit_exponent(points):
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    out = subprocess.run([f"{build}/bench/bench_tree", "--benchmark_format=json",
                          "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true",
                          *sys.argv[2:]], check=True, capture_output=True, text=True).stdout
    steps = defaultdict(dict)
    extra = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        if name.startswith("tree_step/"):
            _, method, n = name.split("/")
            steps[int(n)][method] = b["cpu_time"] / 1e3  # the unit is ns
        else:
            extra[name] = b
    methods = ["spatial", "paper_cached", "paper_uncached", "rk4"]
    print("one step of an N-link pendulum, dt = 0.01 s (median of 3, CPU us)")
    print(f"  {'N':>4}" + "".join(f"{m:>16}" for m in methods) + f"{'spatial/RK4':>13}")
    for n in sorted(steps):
        row = steps[n]
        cells = "".join(f"{row[m]:>16.2f}" if m in row else f"{'-':>16}" for m in methods)
        ratio = row["spatial"] / row["rk4"] if "rk4" in row and "spatial" in row else float("nan")
        print(f"  {n:>4}{cells}{ratio:>13.2f}")
    for m in methods:
        pts = [(n, steps[n][m]) for n in steps if n >= 10 and m in steps[n]]
        if len(pts) >= 2:
            print(f"  fitted exponent of {m} over N >= 10: {fit_exponent(pts):.2f}")
    sim = extra.get("tree_sim10s/spatial/19")
    if sim:
        ms = sim["cpu_time"]  # the unit is ms
        print(f"\n19-link pendulum, 10 s at dt = 0.01: {ms:.1f} ms "
              f"(goal < 20 ms; trep about 1300 ms here, ratio {1300 / ms:.0f}x)")
    mar = extra.get("tree_marionette/spatial")
    if mar:
        print(f"marionette (51 coordinates, 5 strings): {mar['cpu_time'] / 1e3:.1f} us per step")
    galerkin = defaultdict(dict)
    accuracy = defaultdict(list)
    for name, b in extra.items():
        if name.startswith("tree_galerkin_step/"):
            _, _, n, stages = name.split("/")
            galerkin[int(n)][int(stages)] = b["cpu_time"] / 1e3
        elif name.startswith("tree_accuracy/"):
            _, method, n_steps = name.split("/")
            accuracy[method].append((int(n_steps), b["dt"], b["error"], b["cpu_time"]))
    if galerkin:
        print("\none Galerkin step (Lobatto), N-link pendulum, dt = 0.01 s (CPU us; ratio to "
              "the midpoint step)")
        print(f"  {'N':>4}" + "".join(f"{'s=' + str(s):>16}" for s in (1, 2, 3)))
        for n in sorted(galerkin):
            mid = steps.get(n, {}).get("spatial")
            cells = ""
            for s in (1, 2, 3):
                t = galerkin[n].get(s)
                ratio = f" ({t / mid:.1f}x)" if t and mid else ""
                cells += f"{(f'{t:.2f}' + ratio) if t else '-':>16}"
            print(f"  {n:>4}{cells}")
    if accuracy:
        print("\n5-link pendulum from 1 rad, error max |q(2 s) - q_ref| against the CPU time of "
              "the run")
        for method in sorted(accuracy):
            for n_steps, dt, error, ms in sorted(accuracy[method]):
                print(f"  {method:>12}  dt = {dt:<8.4g} error {error:9.2e}  {ms:8.3f} ms")


if __name__ == "__main__":
    main()
