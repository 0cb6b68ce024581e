"""Runs the step benchmarks and prints, per model, the time of one step of every
integrator and its ratio to RK4 measured in the same run.

Usage: python3 bench/report.py [BUILD_DIR] [extra benchmark flags...]
(BUILD_DIR defaults to build/release; it runs bench/bench_vehicle and
bench/bench_nonholonomic there.)
"""
import json
import subprocess
import sys
from collections import defaultdict


def main() -> None:
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    rows = defaultdict(dict)
    for binary in ("bench_vehicle", "bench_nonholonomic"):
        out = subprocess.run([f"{build}/bench/{binary}", "--benchmark_format=json",
                              "--benchmark_repetitions=3",
                              "--benchmark_report_aggregates_only=true", *sys.argv[2:]],
                             check=True, capture_output=True, text=True).stdout
        for b in json.loads(out)["benchmarks"]:
            if b.get("aggregate_name") != "median" or not b["run_name"].startswith("step/"):
                continue
            _, model, method = b["run_name"].split("/")
            rows[model][method] = (b["cpu_time"], b.get("newton_iterations", 0.0))
    for model, methods in rows.items():
        rk4 = methods["rk4"][0] if "rk4" in methods else float("nan")
        print(f"\n{model}: one step, h = 0.01 s (median of 3, CPU ns)")
        print(f"  {'method':<14}{'ns/step':>10}{'vs RK4':>9}{'Newton it.':>12}")
        for name, (ns, iters) in methods.items():
            print(f"  {name:<14}{ns:>10.0f}{ns / rk4:>9.2f}{iters:>12.2f}")


if __name__ == "__main__":
    main()
