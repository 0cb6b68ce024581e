"""Symbolic models (marsden.symbolic, docs/own-system.md) against hand-written ones, in one
process (thread CPU time, interleaved rounds; median and range of the rounds):

  step       the helicopter of marsden.symbolic (generated, compiled, loaded) against the
             built-in C++ helicopter: VI steps looped in C++ (_core._time_steps) under the
             same time-varying controls and rotor tilts, per step; goal within 1.5x;
  car        the car of marsden.symbolic.rdp (RdpVehicle) against the built-in RDP car: RDP
             steps (Newton) under the same torque and steering rate, per step; goal within
             1.5x;
  compile    building the symbolic helicopter and the symbolic car into an empty cache
             (CasADi derivatives, code generation, the C compiler) and again from the cache
             (wall time).

Usage: PYTHONPATH=build/release/python .venv/bin/python bench/symbolic_bench.py [--rounds N]
"""

import argparse
import os
import tempfile
import time

import marsden
from marsden import _core, symbolic
from marsden.symbolic import rdp
from python_bench import summary  # bench/, beside this script

STATE = {"position": [0.0, 0.0, 10.0], "angular_velocity": [0.1, -0.2, 0.3],
         "linear_velocity": [1.0, 0.0, 0.0]}
CONTROLS = marsden.Signal.sinusoid([49.05, 0.0], [2.0, 0.3], [0.5, 0.3], [0.0, 0.0])
SHAPE = marsden.Signal.sinusoid([0.0, 0.0], [0.05, 0.05], [0.2, 0.3], [0.0, 1.0])
CAR_STATE = {"psi_dot": 1.5, "sigma": 0.1}
CAR_CONTROLS = marsden.Signal.sinusoid([0.0, 0.0], [0.4, 0.5], [0.2, 0.13], [0.0, 1.57])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args()

    first, cached = {"helicopter": [], "car": []}, {"helicopter": [], "car": []}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["MARSDEN_CACHE"] = cache
        for r in range(args.rounds):
            for name, make in (("helicopter", symbolic.helicopter), ("car", rdp.car)):
                for entry in os.scandir(cache):
                    os.remove(entry.path)
                start = time.perf_counter()
                model = make()
                first[name].append(time.perf_counter() - start)
                assert model.compiled
                start = time.perf_counter()
                again = make()
                cached[name].append(time.perf_counter() - start)
                assert not again.compiled
        generated, generated_car = symbolic.helicopter(), rdp.car()

        dt = 0.01
        hand_s, gen_s = [], []
        for r in range(args.rounds):
            hand = marsden.vehicles.system("helicopter", initial_state=STATE,
                                           controls=CONTROLS, shape=SHAPE)
            mine = generated.system(initial_state=STATE, controls=CONTROLS, shape=SHAPE)
            hand_s.append(_core._time_steps(hand, 0.0, dt, args.steps) / args.steps)
            gen_s.append(_core._time_steps(mine, 0.0, dt, args.steps) / args.steps)
        car_hand_s, car_gen_s = [], []
        car_gen_state = {"shape": [0.0, 0.1], "shape_velocity": [1.5, 0.0]}
        for r in range(args.rounds):
            hand = marsden.vehicles.system("car", initial_state=CAR_STATE, controls=CAR_CONTROLS)
            mine = generated_car.system(initial_state=car_gen_state, controls=CAR_CONTROLS)
            car_hand_s.append(_core._time_steps(hand, 0.0, dt, args.steps) / args.steps)
            car_gen_s.append(_core._time_steps(mine, 0.0, dt, args.steps) / args.steps)
    ratios = [g / h for g, h in zip(gen_s, hand_s)]
    car_ratios = [g / h for g, h in zip(car_gen_s, car_hand_s)]
    print(f"symbolic helicopter, {args.rounds} rounds of {args.steps} VI steps:")
    print(f"  hand-written step  {summary(hand_s, 1e6, ' us')}")
    print(f"  generated step     {summary(gen_s, 1e6, ' us')}")
    print(f"  ratio              {summary(ratios)} (goal <= 1.5)")
    print(f"  compile, first     {summary(first['helicopter'], 1.0, ' s')}")
    print(f"  compile, cached    {summary(cached['helicopter'], 1e3, ' ms')}")
    print(f"symbolic car (RdpVehicle), {args.rounds} rounds of {args.steps} RDP steps:")
    print(f"  hand-written step  {summary(car_hand_s, 1e6, ' us')}")
    print(f"  generated step     {summary(car_gen_s, 1e6, ' us')}")
    print(f"  ratio              {summary(car_ratios)} (goal <= 1.5)")
    print(f"  compile, first     {summary(first['car'], 1.0, ' s')}")
    print(f"  compile, cached    {summary(cached['car'], 1e3, ' ms')}")


if __name__ == "__main__":
    main()
