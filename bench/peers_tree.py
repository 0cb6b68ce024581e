"""Side-by-side: one step of an N-link pendulum (1 m links, 1 kg point masses, dt = 0.01)
with Marsden's midpoint VI (bench_tree, C++) and with Pinocchio's articulated-body
algorithm (ABA, O(N)) under classical RK4, measured in this script, with the ratios.

Pinocchio comes from PyPI (pin==3.3.1) into a private virtual environment
(BUILD_DIR/peers-venv), created on first use; the rest of the project does not need it.
Pinocchio is driven from Python here, so its figures include the interpreter's cost of
four ABA calls and the RK4 arithmetic per step, as a Python user of it would pay.

Usage: python3 bench/peers_tree.py [BUILD_DIR]
"""
import json
import subprocess
import sys

from peers_env import venv_python

PIN = "pin==3.3.1"
SIZES = (20, 50, 100)


# Runs inside the venv: prints {N: microseconds per RK4 step}.
PINOCCHIO_TIMING = r"""
import json, sys, time
import numpy as np
import pinocchio as pin

def chain(n):
    model = pin.Model()
    parent = 0
    for i in range(n):
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, -1.0 if i else 0.0]))
        parent = model.addJoint(parent, pin.JointModelRX(), placement, f"j{i}")
        inertia = pin.Inertia(1.0, np.array([0.0, 0.0, -1.0]), np.zeros((3, 3)))
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    return model

out = {}
for n in json.loads(sys.argv[1]):
    model = chain(n)
    data = model.createData()
    tau = np.zeros(n)
    dt = 0.01
    def f(q, v):
        return pin.aba(model, data, q, v, tau)
    best = float("inf")
    for _ in range(5):
        q = np.zeros(n); q[0] = 0.3
        v = np.zeros(n)
        steps = 2000
        t0 = time.perf_counter()
        for _ in range(steps):
            a1 = f(q, v)
            a2 = f(q + 0.5 * dt * v, v + 0.5 * dt * a1)
            a3 = f(q + 0.5 * dt * (v + 0.5 * dt * a1), v + 0.5 * dt * a2)
            a4 = f(q + dt * (v + 0.5 * dt * a2), v + dt * a3)
            q = q + dt * v + dt * dt / 6.0 * (a1 + a2 + a3)
            v = v + dt / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
        best = min(best, (time.perf_counter() - t0) / steps * 1e6)
    out[n] = best
print(json.dumps(out))
"""


def main() -> None:
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    flt = "tree_step/spatial/(" + "|".join(str(n) for n in SIZES) + ")$"
    out = subprocess.run([f"{build}/bench/bench_tree", "--benchmark_format=json",
                          f"--benchmark_filter={flt}", "--benchmark_repetitions=3",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    ours = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            ours[int(b["run_name"].split("/")[-1])] = b["cpu_time"] / 1e3
    theirs = json.loads(subprocess.run(
        [venv_python(build, [PIN]), "-c", PINOCCHIO_TIMING, json.dumps(list(SIZES))],
        check=True, capture_output=True, text=True).stdout)
    print("one step, N-link pendulum, dt = 0.01 s (microseconds)")
    print(f"  {'N':>4}{'Marsden VI':>12}{'Pinocchio ABA+RK4':>20}{'VI / ABA':>10}")
    for n in SIZES:
        mine, peer = ours[n], theirs[str(n)]
        print(f"  {n:>4}{mine:>12.1f}{peer:>20.1f}{mine / peer:>10.2f}")


if __name__ == "__main__":
    main()
