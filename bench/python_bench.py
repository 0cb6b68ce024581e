"""The Python package's cost over the C++ library, measured in one process (thread CPU
time, interleaved rounds; median and range of the rounds):

  step overhead   marsden.System.step called from Python on the rigid body (VI) minus the
                  same steps looped in C++ (_core._time_steps), per call;
  simulate        marsden.simulate of the 19-link chain (examples/scenes/pendulum_chain.json,
                  tree midpoint VI) over the C++ driver on the same system
                  (_core._time_simulate): the ratio, goal within 5 %.

Usage: PYTHONPATH=build/release/python .venv/bin/python bench/python_bench.py [--rounds N]
"""

import argparse
import json
import pathlib
import statistics
import time

import marsden
from marsden import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]


def rigid_body():
    return marsden.make_system(marsden.parse_scene(json.dumps({
        "system": {"type": "rigid_body", "inertia": {"J": [1.0, 2.0, 3.0], "mass": 1.0}},
        "initial_state": {"angular_velocity": [0.3, 2.0, 0.1]},
        "integrator": {"method": "vi"}, "dt": 0.01, "duration": 1.0})))


def step_overhead(n):
    dt = 0.01
    system = rigid_body()
    start = time.thread_time()
    for k in range(n):
        system.step(k * dt, dt)
    python = time.thread_time() - start
    cpp = _core._time_steps(rigid_body(), 0.0, dt, n)
    return (python - cpp) / n, cpp / n


def simulate_ratio(scene):
    system = marsden.make_system(scene)
    start = time.thread_time()
    marsden.simulate(system, dt=scene.dt, steps=scene.steps)
    python = time.thread_time() - start
    cpp = _core._time_simulate(marsden.make_system(scene), scene.dt, scene.steps)
    return python / cpp, cpp


def summary(values, scale=1.0, unit=""):
    v = sorted(x * scale for x in values)
    return f"{statistics.median(v):.3g}{unit} (range {v[0]:.3g} to {v[-1]:.3g})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200000)
    args = parser.parse_args()
    chain = marsden.load_scene(ROOT / "examples" / "scenes" / "pendulum_chain.json")
    overhead, per_step, ratio, chain_cpp = [], [], [], []
    for _ in range(args.rounds):
        o, s = step_overhead(args.steps)
        overhead.append(o)
        per_step.append(s)
        r, c = simulate_ratio(chain)
        ratio.append(r)
        chain_cpp.append(c)
    print(f"marsden {marsden.__version__}, {args.rounds} rounds, thread CPU time")
    print(f"rigid body VI step in C++:            {summary(per_step, 1e6, ' us')}")
    print(f"step() overhead from Python, per call: {summary(overhead, 1e6, ' us')} (goal <= 1.5 us)")
    print(f"19-link chain, {chain.steps} steps in C++:  {summary(chain_cpp, 1e3, ' ms')}")
    print(f"simulate() from Python / C++ driver:   {summary(ratio)} (goal <= 1.05)")


if __name__ == "__main__":
    main()
