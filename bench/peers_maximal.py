"""Side-by-side: one step of an n-link hinge chain (1 m links, 1 kg, dt = 0.01) with
Marsden's maximal-coordinates VI (bench_maximal, C++, tolerance 1e-10) and with MuJoCo's
RK4 and Pinocchio's articulated-body algorithm (ABA, O(n)) under RK4, both run by this
script; every figure is the min of repeated runs, and the ratios are printed.

The peers come from PyPI (mujoco==3.2.7, pin==3.3.1; MuJoCo 2.2.2, the version the issue
quotes, has no wheel for this Python) into a private virtual environment
(BUILD_DIR/peers-venv), created on first use. MuJoCo's step is one C call
(mj_step with the RK4 integrator); Pinocchio's RK4 is driven from Python, so its figures
include the interpreter's cost. Marsden's links are thin cylinders, the peers' point
masses at the link ends: the same topology and mass, not the same inertia.

Usage: python3 bench/peers_maximal.py [BUILD_DIR]
"""
import json
import subprocess
import sys
import tempfile

from peers_env import venv_python

PEERS = ["mujoco==3.2.7", "pin==3.3.1"]
SIZES = (50, 100, 200)


# Runs inside the venv: prints {"mujoco": {n: us}, "pinocchio": {n: us}}.
PEER_TIMING = r"""
import json, sys, time
import numpy as np
import mujoco
import pinocchio as pin

def mujoco_chain(n):
    body = ""
    for i in range(n):
        body += (f'<body pos="0 0 {0 if i == 0 else -1}"><joint type="hinge" axis="0 1 0"/>'
                 f'<geom type="sphere" size="0.05" pos="0 0 -1" mass="1"/>')
    body += "</body>" * n
    xml = (f'<mujoco><option timestep="0.01" integrator="RK4" gravity="0 0 -9.81"/>'
           f'<worldbody>{body}</worldbody></mujoco>')
    return mujoco.MjModel.from_xml_string(xml)

def pin_chain(n):
    model = pin.Model()
    parent = 0
    for i in range(n):
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, -1.0 if i else 0.0]))
        parent = model.addJoint(parent, pin.JointModelRY(), placement, f"j{i}")
        model.appendBodyToJoint(parent, pin.Inertia(1.0, np.array([0.0, 0.0, -1.0]),
                                                     np.zeros((3, 3))), pin.SE3.Identity())
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    return model

def best_of(fn, steps, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(steps)
        best = min(best, (time.perf_counter() - t0) / steps * 1e6)
    return best

out = {"mujoco": {}, "pinocchio": {}}
for n in json.loads(sys.argv[1]):
    m = mujoco_chain(n)
    d = mujoco.MjData(m)
    d.qpos[0] = 0.5
    def run_mujoco(steps):
        for _ in range(steps):
            mujoco.mj_step(m, d)
    out["mujoco"][n] = best_of(run_mujoco, 200)

    model = pin_chain(n)
    data = model.createData()
    tau = np.zeros(n)
    dt = 0.01
    def run_pin(steps):
        q = np.zeros(n); q[0] = 0.5
        v = np.zeros(n)
        for _ in range(steps):
            a1 = pin.aba(model, data, q, v, tau)
            a2 = pin.aba(model, data, q + 0.5 * dt * v, v + 0.5 * dt * a1, tau)
            a3 = pin.aba(model, data, q + 0.5 * dt * (v + 0.5 * dt * a1), v + 0.5 * dt * a2, tau)
            a4 = pin.aba(model, data, q + dt * (v + 0.5 * dt * a2), v + dt * a3, tau)
            q = q + dt * v + dt * dt / 6.0 * (a1 + a2 + a3)
            v = v + dt / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
    out["pinocchio"][n] = best_of(run_pin, 200)
print(json.dumps(out))
"""


def main() -> None:
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    flt = "BM_Step<RevoluteChain>/(" + "|".join(str(n) for n in SIZES) + ")$"
    # bench_maximal prints its own O(n) check after the results: read them from a file.
    with tempfile.NamedTemporaryFile(suffix=".json") as results:
        subprocess.run([f"{build}/bench/bench_maximal", f"--benchmark_out={results.name}",
                        "--benchmark_out_format=json", f"--benchmark_filter={flt}",
                        "--benchmark_repetitions=5"],
                       check=True, capture_output=True, text=True)
        out = json.load(open(results.name))
    # The min over repetitions, as for the peers: the least disturbed by other load.
    ours = {}
    for b in out["benchmarks"]:
        if b.get("run_type") == "iteration":
            n = int(b["run_name"].split("/")[-1])
            ours[n] = min(ours.get(n, float("inf")), b["cpu_time"])  # the unit is us
    peers = json.loads(subprocess.run(
        [venv_python(build, PEERS), "-c", PEER_TIMING, json.dumps(list(SIZES))],
        check=True, capture_output=True, text=True).stdout)
    print("one step, n-link hinge chain, dt = 0.01 s (microseconds)")
    print(f"  {'n':>4}{'Marsden VI':>12}{'MuJoCo RK4':>12}{'ABA+RK4':>10}"
          f"{'VI/MuJoCo':>11}{'VI/ABA':>8}")
    for n in SIZES:
        mine, mj, aba = ours[n], peers["mujoco"][str(n)], peers["pinocchio"][str(n)]
        print(f"  {n:>4}{mine:>12.1f}{mj:>12.1f}{aba:>10.1f}{mine / mj:>11.2f}{mine / aba:>8.2f}")


if __name__ == "__main__":
    main()
