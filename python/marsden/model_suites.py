"""The model suites (docs/mjcf.md): every MJCF file of Gymnasium's and dm_control's suites
loaded in the tree and the maximal engine and checked against MuJoCo, an independent
implementation.

    python -m marsden.model_suites OUT_DIR [--quick] [--models gymnasium/hopper,...]

writes OUT_DIR/model_suites.csv (one row per file), OUT_DIR/model_suites.json (the rows,
the claims and notes) and OUT_DIR/model_suites.md (the table to read).
``marsden experiment run model-suites`` runs it. Needs the PyPI package ``mujoco`` and the
suites' XML files (``scripts/install-deps.sh --robots --suites``).

Per file (each *.xml directly in the two suite folders; what they include lives in
subfolders):

- what MuJoCo makes of it: loads, or its error; from qpos0 at rest with zero controls, its
  own 5 s run at the file's timestep and integrator, which says whether the model needs
  contact (MuJoCo reports a contact at some step) and reaches a joint limit, and its step
  time;
- loads in each engine (``marsden.load_mjcf``), or the InputError that names the reason;
- the tree model's mass matrix and bias forces against MuJoCo's ``mj_fullM`` and
  ``qfrc_bias - qfrc_spring`` at random states (through the change of velocities for a
  free root), the worst relative difference;
- contact-free models: the tree's midpoint VI at two steps against MuJoCo's RK4 at 1e-4 s
  with MuJoCo's contacts and limits disabled (``disableflags``: the comparison is of the
  unconstrained equations, which is what the tree engine integrates), from a perturbed
  state with zero controls: the largest coordinate error at every 0.05 s and the observed
  order;
- 5 s from qpos0 with zero controls and random joint rates (within 0.5 rad/s or m/s: a
  model at rest at an equilibrium would say nothing about its energy) at the file's
  timestep, in the tree engine (without contact and limits, which it has not: issue 38)
  and in the maximal engine where it loads (with the file's joint limits, and with contact
  against the world's planes where the model needs contact): completes or not, energy
  drift, wall time per step.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from marsden._study import write_csv, write_json, write_text

SUITES = ("gymnasium", "dm_control")
# The quick run: contact-free models with and without a limited joint, one that needs
# contact and loads in the maximal engine, one that needs it and does not load there, a
# file both engines refuse.
QUICK = ("dm_control/pendulum", "dm_control/acrobot", "gymnasium/inverted_double_pendulum",
         "gymnasium/point", "gymnasium/hopper", "gymnasium/swimmer")
AGREEMENT_TOLERANCE = 1e-9
REFERENCE_DT = 1e-4           # MuJoCo's RK4, the reference trajectory
TRAJECTORY_DTS = (1e-3, 5e-4)  # the tree's midpoint VI against it
SAMPLE_EVERY = 0.05           # s, where the trajectories are compared
CONTACT_RUN = 5.0             # s, MuJoCo's own run that decides what the model needs


def suites_dir() -> Path:
    """$MARSDEN_MODEL_SUITES_DIR, else share/marsden-model-suites of this interpreter's
    environment (where scripts/install_model_suites.py puts them)."""
    given = os.environ.get("MARSDEN_MODEL_SUITES_DIR")
    return Path(given) if given else Path(sys.prefix) / "share" / "marsden-model-suites"


def suite_files() -> list[Path]:
    """Every *.xml directly in the suites' folders, in order; missing suites are an error."""
    root = suites_dir()
    files = []
    for suite in SUITES:
        folder = root / suite
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is missing: scripts/install-deps.sh --suites "
                                    "(scripts/install_model_suites.py) installs the suites")
        files += sorted(folder.glob("*.xml"))
    return files


def model_name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


FIELDS = ("model", "mujoco", "coordinates", "free_root", "actuators", "timestep",
          "mujoco_integrator", "damped", "largest_armature", "needs_contact",
          "mujoco_max_contacts", "reaches_limit", "tree", "maximal",
          "M_error", "bias_error", "agrees",
          "trajectory_error_coarse", "trajectory_error_fine", "order",
          "tree_run", "tree_left_out", "tree_energy_drift", "tree_energy_change",
          "tree_energy_rise", "tree_step_us", "maximal_run", "maximal_with",
          "maximal_energy_drift", "maximal_energy_change", "maximal_energy_rise",
          "maximal_step_us", "mujoco_step_us",
          "tree_over_mujoco", "maximal_over_mujoco")


def relative(a, b) -> float:
    """max |a - b| / max |b| (0 when both vanish)."""
    scale = float(np.abs(b).max()) if np.size(b) else 0.0
    diff = float(np.abs(a - b).max()) if np.size(b) else 0.0
    return diff / scale if scale > 0 else diff


def joint_names(mj) -> list[str]:
    import mujoco
    return [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)]


def random_numbers(model: str, use: str) -> np.random.Generator:
    """The random states of one model for one use ("states", "trajectory", "run"): the same
    whichever files run with it and whether the run is quick."""
    return np.random.default_rng([39, zlib.crc32(model.encode()), zlib.crc32(use.encode())])


def study(path: Path, quick: bool) -> dict:
    """One file: what MuJoCo makes of it, loads, agreement, trajectory, runs, timings."""
    import marsden
    import mujoco

    row = dict.fromkeys(FIELDS, "")
    row["model"] = model_name(path)
    for engine in ("tree", "maximal"):
        try:
            marsden.load_mjcf(path, engine=engine)
            row[engine] = "loads"
        except marsden.InputError as e:
            row[engine] = f"refused: {e}"
    try:
        mj = mujoco.MjModel.from_xml_path(str(path))
    except Exception as e:  # MuJoCo's own message (here: mesh files the suites' XML lacks)
        row["mujoco"] = f"cannot load: {str(e).strip()}"
        return row
    row["mujoco"] = "loads"
    free = [j for j in range(mj.njnt) if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    row.update(coordinates=int(mj.nv), free_root=bool(free), actuators=int(mj.nu),
               timestep=float(mj.opt.timestep),
               mujoco_integrator=mujoco.mjtIntegrator(mj.opt.integrator).name,
               damped=bool(np.any(mj.dof_damping > 0)),
               largest_armature=float(mj.dof_armature.max()) if mj.nv else 0.0)
    _mujoco_run(row, mj)
    if row["tree"] != "loads":
        return row
    model = marsden.tree.model_from_mjcf(path)
    if mj.nv:
        _agreement(row, model, mj, random_numbers(row["model"], "states"), 3 if quick else 20)
    if mj.nv and not row["needs_contact"] and not free:
        _trajectory(row, model, path, random_numbers(row["model"], "trajectory"),
                    0.2 if quick else 0.5)
    duration = 1.0 if quick else 5.0
    names = joint_names(mj)[1:] if free else joint_names(mj)
    rng = random_numbers(row["model"], "run")
    rates = dict(zip(names, rng.uniform(-0.5, 0.5, len(names)).tolist()))
    _tree_run(row, model, rates, duration)
    if row["maximal"] == "loads":
        _maximal_run(row, path, mj, rates, duration)
    _mujoco_step_time(row, mj, rates, duration)
    for engine in ("tree", "maximal"):
        if isinstance(row[f"{engine}_step_us"], float) and row["mujoco_step_us"]:
            row[f"{engine}_over_mujoco"] = row[f"{engine}_step_us"] / row["mujoco_step_us"]
    return row


def _mujoco_run(row, mj):
    """MuJoCo's own run from qpos0 at rest with zero controls at the file's timestep and
    integrator: whether it reports contacts or an active joint limit."""
    import mujoco
    data = mujoco.MjData(mj)
    contacts, limit = 0, False
    joint_limit = mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
    for _ in range(max(1, round(CONTACT_RUN / mj.opt.timestep))):
        mujoco.mj_step(mj, data)
        contacts = max(contacts, int(data.ncon))
        limit = limit or bool(np.any(data.efc_type[:data.nefc] == joint_limit))
    row.update(mujoco_max_contacts=contacts, needs_contact=contacts > 0, reaches_limit=limit)


def _mujoco_step_time(row, mj, rates, duration):
    """MuJoCo's wall time per step over the run ours make (qpos0, the same joint rates,
    zero controls, the file's timestep and integrator), best of three; mj_step is called
    from Python, so a call's overhead (about a microsecond) is included."""
    import mujoco
    data = mujoco.MjData(mj)
    names = joint_names(mj)
    steps = max(1, round(duration / mj.opt.timestep))
    best = math.inf
    for _ in range(3):
        mujoco.mj_resetData(mj, data)
        for j, name in enumerate(names):
            if name in rates:
                data.qvel[mj.jnt_dofadr[j]] = rates[name]
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(mj, data)
        best = min(best, (time.perf_counter() - t0) / steps)
    row["mujoco_step_us"] = 1e6 * best


def _rotation(axis, angle):
    c, s = math.cos(angle), math.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i] = R[j, j] = c
    R[i, j], R[j, i] = -s, s
    return R


def _agreement(row, model, mj, rng, states):
    """M and bias at random states (q within 1 of qpos0, rates within 2), the worst relative
    difference of each. Hinge and slide coordinates equal MuJoCo's qpos and qvel (names
    alike, order may differ). A free root's six coordinates (x, y, z after the file's pose
    B, then yaw, pitch, roll) are not MuJoCo's (world position and quaternion; world linear
    and body angular velocity): with v_mujoco = J qd, M = J^T M_mujoco J and
    bias = J^T (bias_mujoco + M_mujoco Jdot qd)."""
    import mujoco
    from marsden import tree
    data = mujoco.MjData(mj)
    coords = list(model.coordinates)
    free = bool(row["free_root"])
    names = joint_names(mj)[1:] if free else joint_names(mj)
    order = [coords.index(n) for n in names]
    first = 6 if free else 0  # MuJoCo's dofs of the hinges and slides start here
    if free:
        R_B = np.zeros(9)
        mujoco.mju_quat2Mat(R_B, mj.qpos0[3:7])
        R_B, p_B = R_B.reshape(3, 3), mj.qpos0[:3]
    worst_M = worst_bias = 0.0
    for _ in range(states):
        q, qd = np.zeros(mj.nv), np.zeros(mj.nv)
        J, Jdot_qd = np.zeros((mj.nv, mj.nv)), np.zeros(mj.nv)
        J[first + np.arange(len(order)), order] = 1.0
        hinges = rng.uniform(-1.0, 1.0, len(order))
        q[order] = mj.qpos0[mj.nq - len(order):] + hinges
        qd[order] = rng.uniform(-2.0, 2.0, len(order))
        data.qpos[mj.nq - len(order):] = q[order]
        if free:
            q[:6], qd[:6] = rng.uniform(-1.0, 1.0, 6), rng.uniform(-2.0, 2.0, 6)
            yaw, pitch, roll = q[3:6]
            R = R_B @ _rotation(2, yaw) @ _rotation(1, pitch) @ _rotation(0, roll)
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, R.flatten())
            data.qpos[:3], data.qpos[3:7] = p_B + R_B @ q[:3], quat
            # Body angular velocity of Rz(yaw) Ry(pitch) Rx(roll): E (yaw', pitch', roll').
            sp, cp, sr, cr = math.sin(pitch), math.cos(pitch), math.sin(roll), math.cos(roll)
            dp, dr = qd[4], qd[5]
            J[:3, :3] = R_B
            J[3:6, 3:6] = [[-sp, 0, 1], [sr * cp, cr, 0], [cr * cp, -sr, 0]]
            E_dot = np.array([[-cp * dp, 0, 0],
                              [cr * cp * dr - sr * sp * dp, -sr * dr, 0],
                              [-sr * cp * dr - cr * sp * dp, -cr * dr, 0]])
            Jdot_qd[3:6] = E_dot @ qd[3:6]
        data.qvel[:] = J @ qd
        mujoco.mj_forward(mj, data)
        M_mujoco = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, M_mujoco, data.qM)
        terms = tree.lagrangian_terms(model, q, qd)
        # M qdd = L_q - L_qv^T qd (+ forces): the bias is L_qv^T qd - L_q, whose L_q holds
        # the joint springs, which MuJoCo keeps apart in qfrc_spring.
        bias = terms["L_qv"].T @ qd - terms["L_q"]
        expected = J.T @ (data.qfrc_bias - data.qfrc_spring + M_mujoco @ Jdot_qd)
        worst_M = max(worst_M, relative(terms["M"], J.T @ M_mujoco @ J))
        worst_bias = max(worst_bias, relative(bias, expected))
    row.update(M_error=worst_M, bias_error=worst_bias,
               agrees=max(worst_M, worst_bias) <= AGREEMENT_TOLERANCE)


def _trajectory(row, model, path, rng, horizon):
    """From qpos0 + U(-0.2, 0.2) with rates U(-0.5, 0.5) and zero controls, the tree's
    midpoint VI at each of TRAJECTORY_DTS against MuJoCo's RK4 at REFERENCE_DT, both
    without contacts and joint limits: the largest |q - q_ref| (rad or m) at every
    SAMPLE_EVERY seconds, and the observed order log(e_coarse / e_fine) / log(dt_coarse /
    dt_fine)."""
    import marsden
    import mujoco
    mj = mujoco.MjModel.from_xml_path(str(path))
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mj.opt.timestep = REFERENCE_DT
    mj.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT |
                            mujoco.mjtDisableBit.mjDSBL_LIMIT)
    data = mujoco.MjData(mj)
    names = joint_names(mj)
    q0 = mj.qpos0 + rng.uniform(-0.2, 0.2, mj.nq)
    qd0 = rng.uniform(-0.5, 0.5, mj.nv)
    data.qpos[:], data.qvel[:] = q0, qd0
    samples = round(horizon / SAMPLE_EVERY)
    per_sample = round(SAMPLE_EVERY / REFERENCE_DT)
    reference = []
    for _ in range(samples):
        for _ in range(per_sample):
            mujoco.mj_step(mj, data)
        reference.append(data.qpos.copy())
    reference = np.array(reference)
    errors = []
    for dt in TRAJECTORY_DTS:
        every = round(SAMPLE_EVERY / dt)
        system = marsden.tree.system(model, dict(zip(names, q0)), dict(zip(names, qd0)))
        run = marsden.simulate(system, dt=dt, steps=samples * every, output_every=every)
        if not run.ok:
            errors.append(math.nan)
            continue
        ours = np.array([run[n][1:] for n in names]).T
        errors.append(float(np.abs(ours - reference).max()))
    row.update(trajectory_error_coarse=errors[0], trajectory_error_fine=errors[1],
               order=math.log(errors[0] / errors[1]) / math.log(TRAJECTORY_DTS[0] /
                                                                TRAJECTORY_DTS[1]))


def _run(row, engine, make, dt, duration):
    """Runs a fresh system from make() for `duration`: completes or not; energy drift
    max |E - E0| relative to the largest |E| of the run (E0 alone may be near zero), the
    signed change E_end - E0 and the largest rise max_k (E_k - min_{j<=k} E_j) on the same
    scale (a damped model's energy only falls: rise 0); the driver's wall time per step,
    best of three runs."""
    import marsden
    steps = max(1, round(duration / dt))
    best = math.inf
    for _ in range(3):
        run = marsden.simulate(make(), dt=dt, steps=steps, output_every=1)
        best = min(best, run.summary["wall_time_s"] / max(1, run.summary["steps_done"]))
        if not run.ok:
            break
    row[f"{engine}_run"] = "ok" if run.ok else f"failed: {run.summary['message']}"
    e = run["energy"]
    scale = max(float(np.abs(e).max()), 1e-300)
    row[f"{engine}_energy_drift"] = float(np.abs(e - e[0]).max()) / scale
    row[f"{engine}_energy_change"] = float(e[-1] - e[0]) / scale
    row[f"{engine}_energy_rise"] = float((e - np.minimum.accumulate(e)).max()) / scale
    row[f"{engine}_step_us"] = 1e6 * best


def _tree_run(row, model, rates, duration):
    """The tree engine from qpos0 with the joint rates given, zero controls, at the file's
    timestep. It has no contact and does not enforce limits yet (issue 38): what a model
    needs of them is left out and named."""
    import marsden
    _run(row, "tree", lambda: marsden.tree.system(model, qd0=rates), row["timestep"], duration)
    left_out = [what for what, needed in (("contact", row["needs_contact"]),
                                          ("limits", row["reaches_limit"])) if needed]
    row["tree_left_out"] = " ".join(left_out)


def _maximal_run(row, path, mj, rates, duration):
    """The maximal engine from qpos0 with the joint rates given, zero controls, at the file's
    timestep, through a scene (docs/scene.md): the file's joint limits where it has any, and
    contact where the model needs it, the world's planes as half-spaces with the file's
    geoms (spheres, capsules, boxes: urdf_collisions) on them."""
    import marsden
    import mujoco
    system = {"type": "maximal", "mjcf": str(path.resolve())}
    with_ = []
    if np.any(mj.jnt_limited):
        system["urdf_limits"] = True
        with_.append("limits")
    if row["needs_contact"]:
        data = mujoco.MjData(mj)
        mujoco.mj_forward(mj, data)
        surfaces = [{"name": mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g) or f"plane{g}",
                     "normal": data.geom_xmat[g].reshape(3, 3)[:, 2].tolist(),
                     "point": data.geom_xpos[g].tolist(),
                     "friction": float(mj.geom_friction[g, 0])}
                    for g in range(mj.ngeom)
                    if mj.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE and mj.geom_bodyid[g] == 0]
        if not surfaces:
            row["maximal_run"] = "not run: needs contact between bodies (not built)"
            return
        system["contact"] = {"surfaces": surfaces, "urdf_collisions": {}}
        with_.append("contact")
    dt = row["timestep"]
    scene = marsden.parse_scene(json.dumps({"system": system, "dt": dt, "duration": duration,
                                            "initial_state": {"qd": rates}}), str(path))
    row["maximal_with"] = " ".join(with_)
    _run(row, "maximal", lambda: marsden.make_system(scene), dt, duration)


def counts(rows: list[dict]) -> dict:
    """How many files load, agree and run, for the experiment's parameters."""
    tree = [r for r in rows if r["tree"] == "loads"]
    orders = [r["order"] for r in rows if isinstance(r["order"], float)]
    return {
        "files": len(rows),
        "mujoco_loads": sum(r["mujoco"] == "loads" for r in rows),
        "contact_free": sum(r["mujoco"] == "loads" and not r["needs_contact"] for r in rows),
        "tree_loads": len(tree),
        "maximal_loads": sum(r["maximal"] == "loads" for r in rows),
        "compared_with_mujoco": sum(r["agrees"] != "" for r in tree),
        "agree_with_mujoco": sum(r["agrees"] is True for r in tree),
        "trajectories_compared": len(orders),
        "order_min": min(orders, default=math.nan),
        "order_max": max(orders, default=math.nan),
        "tree_runs_ok": sum(r["tree_run"] == "ok" for r in rows),
        "maximal_runs_ok": sum(r["maximal_run"] == "ok" for r in rows),
    }


def claims(rows: list[dict], duration: float) -> list[dict]:
    source = "issue 39"
    span = f"{duration:g} s"
    seen = [r for r in rows if r["mujoco"] == "loads"]
    free_of_contact = [r for r in seen if not r["needs_contact"]]
    tree = [r for r in rows if r["tree"] == "loads"]
    named = [r for r in rows if r["tree"] == "loads" or
             (r["tree"].startswith("refused: ") and "(line " in r["tree"])]
    compared = [r for r in tree if r["agrees"] != ""]
    agree = [r for r in compared if r["agrees"]]
    worst = max((max(r["M_error"], r["bias_error"]) for r in compared), default=0.0)
    loads_free = [r for r in free_of_contact if r["tree"] == "loads"]
    refused_free = [r["model"] for r in free_of_contact if r["tree"] != "loads"]
    ordered = [r for r in tree if r["order"] != ""]
    in_order = [r for r in ordered if abs(r["order"] - 2.0) <= 0.2]
    orders = [r["order"] for r in ordered]
    order_range = f"{min(orders):.3f} to {max(orders):.3f}" if orders else "none"
    tree_ok = [r for r in tree if r["tree_run"] == "ok"]
    as_needed = [r for r in tree_ok if not r["tree_left_out"]]
    maximal = [r for r in rows if r["maximal"] == "loads"]
    maximal_ok = [r for r in maximal if r["maximal_run"] == "ok"]
    both = [r for r in tree if r in as_needed and r in maximal_ok]
    return [
        {"id": "files-load-or-name-why",
         "statement": "every file loads in the tree engine or is refused with an InputError "
                      "naming the file, the element and its line",
         "source": source,
         "measured": f"{len(named)} of {len(rows)} ({len(tree)} load in the tree engine, "
                     f"{len(maximal)} in the maximal engine)",
         "expected": "all", "holds": len(named) == len(rows)},
        {"id": "contact-free-models-load",
         "statement": "every contact-free model (MuJoCo loads it and reports no contact in "
                      "its own 5 s run from qpos0) loads in the tree engine",
         "source": source,
         "measured": f"{len(loads_free)} of {len(free_of_contact)}" +
                     (f"; refused: {', '.join(refused_free)}" if refused_free else ""),
         "expected": "all", "holds": len(loads_free) == len(free_of_contact)},
        {"id": "loaded-models-agree",
         "statement": "every model with coordinates that loads in the tree engine, "
                      "contact-free or not, has MuJoCo's mass matrix (mj_fullM) and bias "
                      "forces (qfrc_bias - qfrc_spring) to 1e-9 relative at random states",
         "source": source,
         "measured": f"{len(agree)} of {len(compared)}, worst {worst:.2g}",
         "expected": "all <= 1e-9", "holds": len(compared) > 0 and len(agree) == len(compared)},
        {"id": "contact-free-second-order",
         "statement": "the tree's midpoint VI converges to MuJoCo's RK4 at dt = 1e-4 s "
                      "(contacts and limits disabled) at observed order 2 +- 0.2 between "
                      "dt = 1e-3 and 5e-4 s on every contact-free model that loads",
         "source": source,
         "measured": f"{len(in_order)} of {len(ordered)}, orders {order_range}",
         "expected": "all within 1.8..2.2",
         "holds": len(ordered) > 0 and len(in_order) == len(ordered)},
        {"id": "tree-runs",
         "statement": f"every model that loads in the tree engine runs {span} from qpos0 "
                      "(random joint rates, zero controls) at its file's timestep without a failed step (contact and limits, which "
                      "the tree engine has not, left out where the model needs them)",
         "source": source, "measured": f"{len(tree_ok)} of {len(tree)}",
         "expected": "all", "holds": len(tree_ok) == len(tree)},
        {"id": "maximal-runs",
         "statement": f"every model that loads in the maximal engine runs {span} from "
                      "qpos0 (random joint rates, zero controls) at its file's timestep with its joint limits and, where it needs "
                      "contact, contact with the world's planes",
         "source": source, "measured": f"{len(maximal_ok)} of {len(maximal)}",
         "expected": "all", "holds": len(maximal_ok) == len(maximal)},
        {"id": "needing-only-contact-limits-actuators-run-in-both",
         "statement": "every model that needs only contact, limits and motors (the reader "
                      "refuses the rest: these are the files that load in the tree engine) "
                      f"runs {span} in both engines with all it needs",
         "source": source,
         "measured": f"{len(both)} of {len(tree)} (tree engine with all it needs: "
                     f"{len(as_needed)}; maximal engine: {len(maximal_ok)})",
         "expected": "all", "holds": len(tree) > 0 and len(both) == len(tree)},
    ]


def _cell(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        small_or_large = value and (abs(value) < 1e-2 or abs(value) >= 1e4)
        return f"{value:.2g}" if small_or_large else f"{value:.3g}"
    return str(value)


def summary(rows: list[dict], result: dict) -> str:
    """The table to read: per file what loads, agrees and runs; then the claims."""
    span = f"{result['duration']:g} s"
    out = [f"# model-suites (MuJoCo {result['mujoco']})", "",
           f"| model | MuJoCo | tree | maximal | needs | M, bias error | order | tree {span} | "
           f"maximal {span} | µs/step tree, maximal, MuJoCo |", "|" + "---|" * 10]
    for r in rows:
        def status(text):
            return text if text in ("loads", "ok", "") else text.split(":")[0] + " (see csv)"
        needs = " ".join(w for w, k in (("contact", "needs_contact"), ("limits", "reaches_limit"))
                         if r[k] is True) or ("nothing" if r["mujoco"] == "loads" else "")
        errors = "" if r["M_error"] == "" else f"{_cell(r['M_error'])}, {_cell(r['bias_error'])}"
        tree_run = status(r["tree_run"]) + (f" (without {r['tree_left_out']})"
                                            if r["tree_left_out"] else "")
        maximal_run = status(r["maximal_run"]) + (f" (with {r['maximal_with']})"
                                                  if r["maximal_with"] else "")
        times = ", ".join(_cell(r[k]) if r[k] != "" else "-"
                          for k in ("tree_step_us", "maximal_step_us", "mujoco_step_us"))
        out.append(f"| {r['model']} | {status(r['mujoco'])} | {status(r['tree'])} | "
                   f"{status(r['maximal'])} | {needs} | {errors} | {_cell(r['order'])} | "
                   f"{tree_run} | {maximal_run} | {times} |")
    out += ["", "Refused and why:", ""]
    for r in rows:
        for key in ("tree", "maximal"):
            if r[key].startswith("refused"):
                why = r[key][len("refused: "):].replace(result["suites"] + os.sep, "")
                out.append(f"- {r['model']} ({key}): {why}")
        if r["mujoco"].startswith("cannot"):
            out.append(f"- {r['model']} (MuJoCo): {r['mujoco']}")
    out += ["", "Claims:", ""]
    for c in result["claims"]:
        out.append(f"- {'holds' if c['holds'] else 'DOES NOT HOLD'}: {c['id']}: "
                   f"{c['measured']} (expected {c['expected']})")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    import mujoco
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--models", default="", help="comma-separated SUITE/STEM")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = suite_files()
    wanted = set(args.models.split(",")) if args.models else set(QUICK) if args.quick else None
    if wanted:
        files = [f for f in files if model_name(f) in wanted]
    duration = 1.0 if args.quick else 5.0
    rows = []
    for i, path in enumerate(files):
        t0 = time.time()
        try:
            rows.append(study(path, args.quick))
        except Exception as e:  # one file's failure is its row, not the end of the study
            rows.append(dict.fromkeys(FIELDS, "") | {
                "model": model_name(path), "tree": f"study failed: {e!r}",
                "maximal": f"study failed: {e!r}"})
        r = rows[-1]
        print(f"[{i + 1}/{len(files)}] {r['model']}: MuJoCo {r['mujoco'].split(':')[0]}, "
              f"tree {r['tree'].split(':')[0]}, maximal {r['maximal'].split(':')[0]}, "
              f"runs {r['tree_run'].split(':')[0] or '-'} / {r['maximal_run'].split(':')[0] or '-'}"
              f" ({time.time() - t0:.1f} s)", file=sys.stderr, flush=True)
    write_csv(out / "model_suites.csv", FIELDS, rows)
    result = {"models": rows, "counts": counts(rows), "claims": claims(rows, duration),
              "mujoco": mujoco.__version__,
              "suites": str(suites_dir()), "quick": args.quick,
              "duration": duration,
              "notes": ["MuJoCo's step time is mj_step called from Python, a call's overhead "
                        "(about 1 µs) included; Marsden's is the C++ driver's wall time per "
                        f"step; both over the same {duration:g} s run at the file's timestep, "
                        "best of three.",
                        "The trajectories are compared with MuJoCo's contacts and joint limits "
                        "disabled (opt.disableflags), the equations the tree engine integrates."]}
    write_json(out / "model_suites.json", result)
    write_text(out / "model_suites.md", summary(rows, result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
