"""Marsden's optimal control against Crocoddyl's on the cart-pole swing-up, in one process.

    bash bench/peers/run_ocp.sh [build_dir] [--rounds N]    (docs/peers.md)

The problem is examples/problems/cart_pole_swing_up.json: a 1 kg cart on a track along y
carrying a pole 0.5 m to a 0.3 kg point mass, pole angle from the downward vertical, 50
steps of 0.05 s, |force| <= 15 N, cost sum_k dt u_k^2, from hanging at rest to upright at
rest with the cart at 0. The model's numbers are read from the file.

Marsden solves it on its midpoint variational integrator (exact step derivatives): DMOC
(Ipopt, the file's default guess) and iLQR (marsden.control.ilqr), the final state either
as a hard constraint (augmented Lagrangian, the problem DMOC solves) or as the terminal
cost Crocoddyl uses. Crocoddyl (which has no hard terminal constraint) solves the same
model, built here as a Pinocchio model, with a terminal cost (W/2)|x_N - x_goal|^2 and
its own integrator (RK4 of the continuous dynamics, ZOH controls; one Euler run).
Underactuation two ways: a fully actuated model whose pole torque is held at 0 by its
bounds (C++ only; needs the Box solvers), or Crocoddyl's documented Python-derived
actuation model with one input (a Python call per node and pass).

The optima differ slightly, as the discretisations do: every solver's cost is reported on
its own discretisation, and its controls are re-simulated on Marsden's step and on a fine
step (dt/20, close to the continuous dynamics) to give honest final-state errors.

Timing: thread CPU time (time.thread_time) of the solve call alone (model building and
data allocation excluded), the solvers interleaved within each round, their order turned
every round; ratios Marsden / Crocoddyl are taken within a round and reported as median
(min-max) over the rounds. Wall time is printed beside it as a check.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import time
from pathlib import Path

# Crocoddyl's wheel links libgomp and runs part of each solve on a second OpenMP thread
# (problem.nthreads cannot be set in this build), whose spin-wait on this 2-core machine
# made its times erratic (130-700 ms for one solve) whenever other work ran. One thread,
# as Marsden's solvers use; libgomp reads this when it is loaded, so before the import.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

import numpy as np

import crocoddyl
import pinocchio as pin

import marsden
from measure import cpu_model, spread

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "examples" / "problems" / "cart_pole_swing_up.json"

# Terminal weight of the soft final state (Crocoddyl's and the like-for-like iLQR): the
# final-state error goes as lambda / W (lambda ~ 24 here), so 1e8 leaves ~2e-7 and moves
# the cost by ~1e-8 relative from the hard-constrained optimum. Marsden's hard constraint
# tolerance is 1e-8.
W_TERMINAL = 1e8
# Stopping tests. Marsden's iLQR stops when a step decreases the cost by at most
# 1e-9 * max(1, J); Crocoddyl stops when the expected decrease of a full step is below
# th_stop (absolute): 1e-9 * 50 makes that the same relative test for the optima here
# (J = 41-64). Ipopt: tol 1e-8, constr_viol_tol 1e-8 (Marsden's defaults).
ILQR_TOLERANCE = 1e-9
CROC_TH_STOP = 1e-9 * 50.0
MAX_ITERATIONS = 2000
# Iterations (and time) to reach a cost within this of the solver's own final cost: a
# measure that does not depend on the stopping tests.
TARGET = 1e-6
# The fine re-simulation, close to the continuous dynamics: Crocoddyl's RK4 at dt/20
# (it agrees with RK4 at dt/100 to ~1e-8 here), checked against Marsden's VI at dt/100.
FINE, FINE_CHECK = 20, 100


def cart_pole_spec():
    spec = json.loads(PROBLEM.read_text())
    frames = {f["name"]: f for f in spec["system"]["frames"]}
    cart, pole, bob = frames["cart"], frames["pole"], frames["bob"]
    # The model this script builds; fail loudly if the file stops being it.
    assert (cart["type"], pole["type"], bob["type"]) == ("ty", "rx", "tz"), frames
    assert pole["parent"] == "cart" and bob["parent"] == "pole" and "mass" not in pole
    assert spec["system"]["inputs"] == [{"type": "force", "coordinate": "cart"}]
    assert spec["final_state"]["at_rest"] and spec["cost"]["control_weights"] == [1]
    return dict(
        spec=spec,
        m_cart=cart["mass"]["mass"], m_bob=bob["mass"]["mass"], z_bob=bob["value"],
        gravity=np.array(spec["system"]["gravity"], float),
        dt=spec["dt"], steps=spec["steps"],
        u_lower=spec["bounds"]["controls"]["lower"][0],
        u_upper=spec["bounds"]["controls"]["upper"][0],
        x0=np.array([spec["initial_state"]["q"]["cart"], spec["initial_state"]["q"]["pole"], 0, 0], float),
        goal=np.array([spec["final_state"]["q"]["cart"], spec["final_state"]["q"]["pole"], 0, 0], float),
        cart_bound=spec["bounds"]["q"]["upper"]["cart"],
    )


P = cart_pole_spec()
DT, N, X0, GOAL = P["dt"], P["steps"], P["x0"], P["goal"]


# ---------------------------------------------------------------- Marsden
def marsden_system(tolerance=None):
    spec = P["spec"]
    integrator = dict(spec["integrator"], **({} if tolerance is None else {"tolerance": tolerance}))
    scene = marsden.parse_scene(json.dumps(
        {"duration": DT * N, "integrator": integrator,
         **{key: spec[key] for key in ("system", "dt", "initial_state")}}))
    held = marsden.HeldInput(1)
    return marsden.make_system(scene, controls=held), held


SYSTEM, HELD = marsden_system()
# For the fine check only: at dt/100 the file's Newton tolerance (1e-13) is below round-off.
FINE_SYSTEM, FINE_HELD = marsden_system(tolerance=1e-11)


def marsden_rollout(u, substeps=1):
    """Controls u (N,) held over each step, on Marsden's midpoint VI at dt / substeps."""
    u = np.repeat(np.asarray(u, float).reshape(-1, 1), substeps, axis=0)
    system, held = (SYSTEM, HELD) if substeps == 1 else (FINE_SYSTEM, FINE_HELD)
    return marsden.control.rollout(system, held, 0.0, DT / substeps, X0, u).x


HARD = dict(R=[[1.0]], x_goal=GOAL, terminal=[0, 1, 2, 3])
SOFT = dict(R=[[1.0]], x_goal=GOAL, Q_N=0.5 * W_TERMINAL * np.eye(4))


def ilqr(u_guess, form, penalty=None, max_iterations=MAX_ITERATIONS):
    extra = {} if penalty is None else {"penalty": penalty}
    return marsden.control.ilqr(SYSTEM, HELD, X0, np.asarray(u_guess, float).reshape(-1, 1), DT,
                                u_lower=[P["u_lower"]], u_upper=[P["u_upper"]],
                                tolerance=ILQR_TOLERANCE, max_iterations=max_iterations,
                                **extra, **form)


# ---------------------------------------------------------------- Crocoddyl
def pinocchio_model():
    """Prismatic joint along y (the cart), revolute about x (the pole), point masses."""
    model = pin.Model()
    model.gravity.linear = P["gravity"]
    cart = model.addJoint(0, pin.JointModelPY(), pin.SE3.Identity(), "cart")
    model.appendBodyToJoint(cart, pin.Inertia(P["m_cart"], np.zeros(3), np.zeros((3, 3))),
                            pin.SE3.Identity())
    pole = model.addJoint(cart, pin.JointModelRX(), pin.SE3.Identity(), "pole")
    model.appendBodyToJoint(pole, pin.Inertia(P["m_bob"], np.array([0.0, 0.0, P["z_bob"]]),
                                              np.zeros((3, 3))), pin.SE3.Identity())
    return model


STATE = crocoddyl.StateMultibody(pinocchio_model())


class CartForce(crocoddyl.ActuationModelAbstract):
    """One input, the force on the cart; the pole is not actuated (Crocoddyl's documented
    way to write an actuation model in Python; it is called per node from C++)."""

    def __init__(self, state):
        crocoddyl.ActuationModelAbstract.__init__(self, state, 1)

    def calc(self, data, x, u):
        data.tau[0] = u[0]
        data.tau[1] = 0.0

    def calcDiff(self, data, x, u):
        data.dtau_du[0] = 1.0  # eigenpy hands this 2 x 1 matrix over as a (2,) array
        data.dtau_du[1] = 0.0


def croc_problem(actuation="full", integrator="rk4", dt=DT, steps=N, W=W_TERMINAL, x0=X0):
    """'full': ActuationModelFull (cart force, pole torque) with the pole torque bounded to
    [0, 0]; 'under': CartForce. Running cost 2 * 0.5 |u|^2 integrated over dt = dt u^2;
    terminal cost W * 0.5 |x_N (-) x_goal|^2 (the pole joint is a plain angle, so (-) is -)."""
    act = crocoddyl.ActuationModelFull(STATE) if actuation == "full" else CartForce(STATE)
    nu = act.nu
    lower = np.array([P["u_lower"], 0.0][:nu])
    upper = np.array([P["u_upper"], 0.0][:nu])
    running = crocoddyl.CostModelSum(STATE, nu)
    running.addCost("effort", crocoddyl.CostModelResidual(
        STATE, crocoddyl.ResidualModelControl(STATE, nu)), 2.0)
    terminal = crocoddyl.CostModelSum(STATE, nu)
    terminal.addCost("goal", crocoddyl.CostModelResidual(
        STATE, crocoddyl.ResidualModelState(STATE, GOAL, nu)), W)

    def action(costs, h):
        dam = crocoddyl.DifferentialActionModelFreeFwdDynamics(STATE, act, costs)
        if integrator == "rk4":
            model = crocoddyl.IntegratedActionModelRK(dam, crocoddyl.RKType.four, h)
        else:
            model = crocoddyl.IntegratedActionModelEuler(dam, h)
        model.u_lb, model.u_ub = lower, upper  # used by the Box solvers only
        return model

    return crocoddyl.ShootingProblem(x0, [action(running, dt)] * steps, action(terminal, 0.0))


def croc_controls(u, actuation):
    u = np.asarray(u, float).reshape(-1)
    return [np.array([v, 0.0]) if actuation == "full" else np.array([v]) for v in u]


class CostLog(crocoddyl.CallbackAbstract):
    def __init__(self):
        crocoddyl.CallbackAbstract.__init__(self)
        self.costs, self.gaps = [], []

    def __call__(self, solver):
        self.costs.append(solver.cost)
        self.gaps.append(solver.ffeas)  # FDDP's open gaps (0 once feasible)


def croc_solver(kind, actuation, integrator, warm, max_iterations=MAX_ITERATIONS, log=False):
    """Builds the problem and solver (untimed) and returns the call to time and the solver."""
    problem = croc_problem(actuation, integrator)
    solver = getattr(crocoddyl, "Solver" + kind)(problem)
    solver.th_stop = CROC_TH_STOP
    if log:
        solver.setCallbacks([CostLog()])
    if warm is None:  # rest: zero force, the states of the hanging pole
        xs, us = [X0.copy() for _ in range(N + 1)], croc_controls(np.zeros(N), actuation)
    else:  # DMOC's states and controls; FDDP/DDP close the small gaps of its discretisation
        xs, us = [x.copy() for x in warm.x], croc_controls(warm.u[:, 0], actuation)
    return (lambda: solver.solve(xs, us, max_iterations, False)), solver


# ---------------------------------------------------------------- the solvers
class Run:
    """One solve: converged, iterations, controls u (N,), own final state, own objective."""

    def __init__(self, converged, iterations, u, x_final, objective):
        self.converged, self.iterations = bool(converged), int(iterations)
        self.u, self.x_final, self.objective = np.asarray(u, float).reshape(-1), x_final, objective


DMOC = None  # DMOC's optimum as a Nominal, the warm start; set in main()


CPU = {"process": 0.0, "thread": 0.0}


def timed(call):
    """call() and its thread CPU time and wall time (s); the process CPU time is summed to
    check that no solver works on other threads, which thread CPU time would miss."""
    wall, cpu, process = time.perf_counter(), time.thread_time(), time.process_time()
    result = call()
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    CPU["process"] += time.process_time() - process
    CPU["thread"] += cpu
    return result, cpu, wall


def solve_dmoc(max_iterations=None):
    problem = marsden.load_problem(PROBLEM)
    s, cpu, wall = timed(problem.solve)
    nominal = marsden.control.nominal_from_solution(SYSTEM, HELD, s, x0=X0)
    return cpu, wall, Run(s["ok"], s["iterations"], nominal.u, nominal.x[-1], s["cost"])


def marsden_entry(form, start, penalty=None):
    def run(max_iterations=MAX_ITERATIONS):
        guess = np.zeros(N) if start == "rest" else DMOC.u[:, 0]
        r, cpu, wall = timed(lambda: ilqr(guess, form, penalty, max_iterations))
        nominal = r["nominal"]
        return cpu, wall, Run(r["converged"], r["iterations"], nominal.u, nominal.x[-1], r["cost"])
    return run


def croc_entry(kind, actuation, integrator, start):
    def run(max_iterations=MAX_ITERATIONS):
        call, solver = croc_solver(kind, actuation, integrator, None if start == "rest" else DMOC,
                                   max_iterations)
        ok, cpu, wall = timed(call)
        # solver.iter is the index of the last iteration, unless the iterations ran out.
        iterations = min(solver.iter + 1, max_iterations)
        us = np.array(solver.us)
        # The pole torque of the fully actuated model stays at its bounds [0, 0] exactly.
        assert actuation != "full" or not np.any(us[:, 1]), "pole torque left 0"
        u = us[:, 0]
        return cpu, wall, Run(ok, iterations, u, np.array(solver.xs[-1]), solver.cost)
    run.croc = (kind, actuation, integrator, start)  # for the per-iteration log
    return run


# name, description, run, can it be cut at k iterations (cost monotone, no multipliers)
SOLVERS = [
    ("M dmoc", "DMOC, Ipopt, file's guess, hard final state", solve_dmoc, False),
    ("M ilqr-hard rest", "iLQR, hard final state (AL), from rest",
     marsden_entry(HARD, "rest"), False),
    ("M ilqr-hard dmoc", "iLQR, hard final state, from DMOC (penalty 1e4)",
     marsden_entry(HARD, "dmoc", penalty=1e4), False),
    ("M ilqr-soft rest", "iLQR, terminal cost W, from rest",
     marsden_entry(SOFT, "rest"), True),
    ("M ilqr-soft dmoc", "iLQR, terminal cost W, from DMOC",
     marsden_entry(SOFT, "dmoc"), True),
    ("C boxddp full rest", "BoxDDP, RK4, full act. + pole bounds [0,0], from rest",
     croc_entry("BoxDDP", "full", "rk4", "rest"), True),
    ("C boxddp full dmoc", "BoxDDP, RK4, full act. + pole bounds, from DMOC x and u",
     croc_entry("BoxDDP", "full", "rk4", "dmoc"), True),
    ("C boxfddp full rest", "BoxFDDP, RK4, full act. + pole bounds, from rest",
     croc_entry("BoxFDDP", "full", "rk4", "rest"), False),
    ("C boxfddp under rest", "BoxFDDP, RK4, Python actuation (1 input), from rest",
     croc_entry("BoxFDDP", "under", "rk4", "rest"), True),
    ("C boxfddp under dmoc", "BoxFDDP, RK4, Python actuation, from DMOC x and u",
     croc_entry("BoxFDDP", "under", "rk4", "dmoc"), True),
    ("C fddp under rest", "FDDP (no bounds), RK4, Python actuation, from rest",
     croc_entry("FDDP", "under", "rk4", "rest"), True),
    ("C boxddp full euler", "BoxDDP, Euler, full act. + pole bounds, from rest",
     croc_entry("BoxDDP", "full", "euler", "rest"), True),
]

# Marsden / Crocoddyl pairs whose time ratio is reported, and why each pair.
PAIRS = [
    ("M ilqr-soft rest", "C boxddp full rest", "same formulation, compiled code on both sides"),
    ("M ilqr-soft rest", "C boxfddp under rest", "same formulation; Crocoddyl's Python actuation"),
    ("M ilqr-soft rest", "C fddp under rest", "same formulation; no bounds, none active"),
    ("M ilqr-hard rest", "C boxddp full rest", "Marsden's hard final state against the soft one"),
    ("M ilqr-hard dmoc", "C boxfddp under dmoc", "both from DMOC, each to the optimum near it"),
    ("M ilqr-soft dmoc", "C boxfddp under dmoc", "not like for like: DMOC is Marsden's own optimum"),
]


def fine_reference_check():
    """Same model? Marsden's VI and Crocoddyl's RK4, both at 1 ms, from a moving state under
    a varying force for 1 s, must agree to their O(h^2) difference."""
    h, steps = 1e-3, 1000
    x_start = np.array([0.1, 0.5, 0.3, -1.0])
    u = 5.0 * np.sin(np.linspace(0.0, 6.0, steps))
    ours = marsden.control.rollout(SYSTEM, HELD, 0.0, h, x_start, u.reshape(-1, 1)).x[-1]
    problem = croc_problem("full", "rk4", dt=h, steps=steps, x0=x_start)
    theirs = np.array(problem.rollout(croc_controls(u, "full"))[-1])
    return np.abs(ours - theirs).max()


def croc_resimulate(u, substeps):
    """Controls u (N,) on Crocoddyl's RK4 at dt / substeps (zero-order hold)."""
    problem = croc_problem("full", "rk4", dt=DT / substeps, steps=N * substeps)
    return np.array(problem.rollout(croc_controls(np.repeat(u, substeps), "full"))[-1])


def error(x):
    return float(np.abs(np.asarray(x) - GOAL).max())


def iterations_to_target(entry, final_cost):
    """The first iteration whose cost is within TARGET (relative) of the run's final cost (and
    FDDP's gaps closed): from Crocoddyl's per-iteration log, or by bisection on Marsden's
    max_iterations (the soft-terminal iLQR's cost never increases)."""
    if hasattr(entry, "croc"):
        kind, actuation, integrator, start = entry.croc
        call, solver = croc_solver(kind, actuation, integrator, None if start == "rest" else DMOC,
                                   log=True)
        call()
        log = solver.getCallbacks()[0]
        costs, gaps = np.array(log.costs), np.array(log.gaps)
        return int(np.argmax((np.abs(costs - final_cost) <= TARGET * abs(final_cost)) & (gaps <= 1e-9))) + 1
    lo, hi = 1, entry()[2].iterations
    while lo < hi:
        mid = (lo + hi) // 2
        if abs(entry(mid)[2].objective - final_cost) <= TARGET * abs(final_cost):
            hi = mid
        else:
            lo = mid + 1
    return lo


def ms(v):
    return f"{1e3 * v:.1f}"


def main():
    global DMOC
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    print(f"# Optimal control against Crocoddyl: {PROBLEM.relative_to(ROOT)}")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {cpu_model()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}, "
          f"marsden {marsden.__version__} ({Path(marsden.__file__).parent}), crocoddyl {crocoddyl.__version__}, "
          f"pinocchio {pin.__version__}, numpy {np.__version__}; OMP_THREAD_LIMIT={os.environ['OMP_THREAD_LIMIT']}")
    print(f"# N = {N} steps of dt = {DT} s, |u| <= {P['u_upper']} N, cost sum dt u^2; "
          f"Crocoddyl's final state: terminal cost W/2 |x_N - x_goal|^2, W = {W_TERMINAL:g}")
    print(f"# stopping: iLQR relative decrease <= {ILQR_TOLERANCE:g} (and |final-state error| <= 1e-8 "
          f"when hard); Crocoddyl th_stop = {CROC_TH_STOP:g} (expected decrease, absolute; "
          f"1e-9 of J = 50); Ipopt tol 1e-8, constr_viol_tol 1e-8")
    print(f"# same model: Marsden's VI and Crocoddyl's RK4 at h = 1 ms over 1 s differ by "
          f"{fine_reference_check():.1e} (max over the state)")

    # DMOC's optimum, the warm start (untimed; the same every time).
    problem = marsden.load_problem(PROBLEM)
    solution = problem.solve()
    assert solution["ok"], solution["message"]
    DMOC = marsden.control.nominal_from_solution(SYSTEM, HELD, solution, x0=X0)

    for _name, _desc, entry, _cut in SOLVERS:  # warm-up, untimed (first-use costs)
        entry()
    times = {name: [] for name, *_ in SOLVERS}
    walls = {name: [] for name, *_ in SOLVERS}
    runs = {}
    for r in range(args.rounds):
        order = SOLVERS[r % len(SOLVERS):] + SOLVERS[:r % len(SOLVERS)]
        for name, _desc, entry, _cut in order:
            cpu, wall, run = entry()
            times[name].append(cpu)
            walls[name].append(wall)
            if name in runs:  # deterministic: every round must repeat the first
                assert runs[name].iterations == run.iterations, name
            runs[name] = run

    print(f"\n## Per solver ({args.rounds} rounds; time = thread CPU of the solve call, median (min-max) ms; "
          f"wall: the same call's wall time)")
    print("| solver | conv. | iter. | time ms | ms/iter. | wall ms | effort sum dt u^2 | objective (own) "
          "| final err (own) | on Marsden's step | on RK4 | fine | max abs cart | max abs u |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    check = 0.0
    for name, desc, _entry, _cut in SOLVERS:
        run = runs[name]
        effort = DT * float(np.sum(run.u ** 2))
        on_marsden = marsden_rollout(run.u)
        fine = croc_resimulate(run.u, FINE)
        check = max(check, float(np.abs(marsden_rollout(run.u, FINE_CHECK)[-1] - fine).max()))
        print(f"| {name}: {desc} | {'yes' if run.converged else 'NO'} | {run.iterations} "
              f"| {spread(times[name], ms)} | {1e3 * statistics.median(times[name]) / run.iterations:.2f} "
              f"| {ms(statistics.median(walls[name]))} "
              f"| {effort:.6f} | {run.objective:.6f} | {error(run.x_final):.1e} "
              f"| {error(on_marsden[-1]):.1e} | {error(croc_resimulate(run.u, 1)):.1e} "
              f"| {error(fine):.1e} | {np.abs(on_marsden[:, 0]).max():.2f} | {np.abs(run.u).max():.2f} |")
    print(f"(final err: max over the state of |x_N - x_goal|, on the solver's own discretisation, "
          f"its controls re-run on Marsden's midpoint VI at dt, on Crocoddyl's RK4 at dt, and on "
          f"the fine reference, RK4 at dt/{FINE}; Marsden's VI at dt/{FINE_CHECK} agrees with it to "
          f"{check:.0e}. max abs cart on Marsden's step; the file bounds it by {P['cart_bound']} m, "
          f"which neither iLQR nor Crocoddyl enforces.)")
    print(f"(process CPU / thread CPU over every timed call: {CPU['process'] / CPU['thread']:.3f}; "
          f"1 means no solver used other threads)")

    # Cross-starts (untimed): the same local optimum on each side's discretisation?
    croc_u = runs["C boxddp full rest"].u
    cross_m = ilqr(croc_u, HARD, penalty=1e4)
    call, solver = croc_solver("BoxDDP", "full", "rk4", None)
    marsden_u = runs["M ilqr-hard rest"].u
    solver.solve([X0.copy() for _ in range(N + 1)], croc_controls(marsden_u, "full"), MAX_ITERATIONS, False)
    print(f"\ncross-starts: Marsden's hard iLQR from Crocoddyl's controls (rest) -> "
          f"{cross_m['cost']:.6f} ({cross_m['iterations']} iter.); Crocoddyl's BoxDDP from Marsden's "
          f"iLQR controls -> {solver.cost:.6f} ({solver.iter + 1} iter.); "
          f"max |u_M - u_C| between the two optima from rest: "
          f"{np.abs(runs['M ilqr-hard rest'].u - croc_u).max():.3f} N")

    print(f"\n## To within {TARGET:g} of each run's own final objective (stopping tests aside; "
          f"median (min-max) ms over {args.rounds} rounds)")
    print("| solver | iter. | time ms |")
    print("|---|---:|---:|")
    cut = [(name, entry) for name, _d, entry, c in SOLVERS if c and runs[name].converged]
    target_iters = {name: iterations_to_target(entry, runs[name].objective)
                    for name, entry in cut}
    target_times = {name: [] for name, _ in cut}
    for r in range(args.rounds):
        order = cut[r % len(cut):] + cut[:r % len(cut)]
        for name, entry in order:
            target_times[name].append(entry(target_iters[name])[0])
    for name, _ in cut:
        print(f"| {name} | {target_iters[name]} | {spread(target_times[name], ms)} |")

    print(f"\n## Marsden / Crocoddyl, thread CPU time ratio within each round, median (min-max)")
    print("| Marsden | Crocoddyl | converged | to 1e-6 of final | note |")
    print("|---|---|---:|---:|---|")
    for m, c, why in PAIRS:
        conv = [a / b for a, b in zip(times[m], times[c])]
        if m in target_times and c in target_times:
            tgt = spread([a / b for a, b in zip(target_times[m], target_times[c])], lambda v: f"{v:.2f}")
        else:
            tgt = "-"
        print(f"| {m} | {c} | {spread(conv, lambda v: f'{v:.2f}')} | {tgt} | {why} |")


if __name__ == "__main__":
    main()
