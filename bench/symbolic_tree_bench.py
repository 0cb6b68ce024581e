"""Generated tree elements (marsden.symbolic.TreePotential, TreeForce; docs/own-system.md,
"Tree elements") against the built-in ones, in one process (thread CPU time, interleaved
rounds; median and range of the rounds):

  step       a double pendulum with a coordinate spring k/2 (q2 - rest)^2 and a damper
             -c q2dot, built in, against the same spring and damper generated, compiled and
             loaded: midpoint VI steps looped in C++ (_core._time_steps), per step; and the
             same model on a 30-link chain (the articulated-body Newton path);
  compile    building the potential and the force into an empty cache (CasADi derivatives,
             code generation, the C compiler) and again from the cache (wall time).

Usage: PYTHONPATH=build/release/python .venv/bin/python bench/symbolic_tree_bench.py [--rounds N]
"""

import argparse
import os
import tempfile
import time

import casadi as ca

from marsden import _core, symbolic, tree
from python_bench import summary  # bench/, beside this script

K, REST, C = 4.0, 0.3, 0.3


def elements():
    s, w = ca.SX.sym("s"), ca.SX.sym("w")
    spring = symbolic.TreePotential("bench_spring", coordinates={1: s},
                                    potential=0.5 * K * (s - REST) ** 2)
    damper = symbolic.TreeForce("bench_damper", coordinates={1: s}, velocities=[w],
                                force=-C * w)
    return spring, damper


def models(n, spring, damper):
    """(built-in elements, generated elements) on the n-link pendulum."""
    chain = tree.n_link_pendulum(n)
    generated = tree.with_forces(tree.with_potentials(chain, spring), damper)
    # The built-in pair on the same chain, spelled out frame by frame (Python continues a
    # built model only with generated elements).
    names = chain.coordinates
    b = tree.Builder()
    parent = "world"
    for i in range(n):
        b.frame(f"link{i}", parent, "rx", names[i])
        b.frame(f"mass{i}", f"link{i}", "tz", value=-1.0, mass=1.0)
        parent = f"mass{i}"
    b.spring(names[1], K, REST)
    b.damper(names[1], C)
    return b.build(), generated


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args()

    first, cached = [], []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["MARSDEN_CACHE"] = cache
        for r in range(args.rounds):
            for entry in os.scandir(cache):
                os.remove(entry.path)
            start = time.perf_counter()
            made = elements()
            first.append(time.perf_counter() - start)
            assert all(e.compiled for e in made)
            start = time.perf_counter()
            again = elements()
            cached.append(time.perf_counter() - start)
            assert not any(e.compiled for e in again)
        spring, damper = elements()
        dt = 0.01
        for n in (2, 30):
            hand_model, generated_model = models(n, spring, damper)
            q0 = {hand_model.coordinates[0]: 0.9, hand_model.coordinates[1]: -0.4}
            hand_s, gen_s = [], []
            for r in range(args.rounds):
                hand = tree.system(hand_model, q0)
                mine = tree.system(generated_model, q0)
                hand_s.append(_core._time_steps(hand, 0.0, dt, args.steps) / args.steps)
                gen_s.append(_core._time_steps(mine, 0.0, dt, args.steps) / args.steps)
            ratios = [g / h for g, h in zip(gen_s, hand_s)]
            print(f"{n}-link chain with a spring and a damper on q2, {args.rounds} rounds of "
                  f"{args.steps} midpoint steps:")
            print(f"  built-in elements   {summary(hand_s, 1e6, ' us')}")
            print(f"  generated elements  {summary(gen_s, 1e6, ' us')}")
            print(f"  ratio               {summary(ratios)}")
    print(f"building the potential and the force, first   {summary(first, 1.0, ' s')}")
    print(f"building them again, from the cache           {summary(cached, 1e3, ' ms')}")


if __name__ == "__main__":
    main()
