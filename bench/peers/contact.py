"""Marsden's hard contact against MuJoCo's soft contact, in one process.

    bash bench/peers/run_contact.sh [build_dir] [--rounds N]    (docs/peers.md)

Part 1, closed forms (docs/contact.md, "What the tests check"), each a single free body
against one plane, g = 9.81 m/s^2:

- slide: a box (edge 0.2 m, 1 kg) on the ground from v = (4, 0.8, 0) m/s, mu = 0.25, 2 s:
  stops after |v|^2 / (2 mu g) = 3.392457 m on its heading atan(0.2) = 11.309932 deg;
- incline 30: the box face-down on a 30 degree incline, mu = 0.15, from rest, 1 s: slides
  at g (sin 30 - mu cos 30) = 3.630644 m/s^2 (measured as v(1 s) / 1 s);
- incline 20: the box on a 20 degree incline, mu = 0.5 (> tan 20), 10 s: stays (drift 0);
- sphere: a solid sphere (radius 0.1 m, 1 kg) on a 15 degree incline, mu = 1, from rest,
  1 s: rolls at (5/7) g sin 15 = 1.813582 m/s^2 (v(1 s) / 1 s).

Marsden: each case is a scene file written to a temporary folder (a maximal URDF system
with a floating base, the URDF's <collision> box or sphere, one "contact" surface) and run
by the built package (load_scene, make_system, simulate: its C++ driver) at dt from 0.1 to
0.001 s, default tolerances. MuJoCo: an MJCF written here (a free body, a plane, both geoms
given mu with condim 3: sliding friction only, which is MuJoCo's default condim, so its
default torsional and rolling coefficients do nothing), at its defaults (Euler, pyramidal
cone, soft contact, dt = 0.002 s) and also at dt = 0.01 s and with the elliptic cone,
stepped by mujoco.rollout (its C++ loop).

Part 2, Unitree A1 standing (examples/scenes/a1_standing.json): the URDF of
example-robot-data dropped 5 mm onto the ground (mu = 0.8) in the stance held by joint
springs and dampers (80 N m/rad, 2 N m s/rad; hips 0, thighs 0.8, calves -1.5 rad), 5 s.
Both engines read the same URDF file, and the springs, dampers, friction, stance and
clearance are read from the scene file. MuJoCo gets the URDF through its own reader
(visuals stripped: it cannot read their .dae meshes; the fixed joint from "base" to
"trunk" made floating), then the springs as joint stiffness / springref / damping, joint
limits removed (Marsden does not model them) and only the boxes and spheres colliding, with
the floor only (Marsden's contact set: no cylinders, no contact between bodies).

Timing: thread CPU time (time.thread_time) of the stepping call alone (models, data and
systems built beforehand); one untimed warm-up round, then N rounds with every run
interleaved, the order turned every round; a run shorter than MIN_SAMPLE is repeated within
its round and averaged. Ratios Marsden / MuJoCo are taken within a round and reported as
median (min-max) over the rounds.
"""

import argparse
import dataclasses
import datetime
import itertools
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

import mujoco
from mujoco import rollout as mj_rollout

import marsden
from measure import cpu_model, spread

ROOT = Path(__file__).resolve().parents[2]
A1_SCENE = ROOT / "examples" / "scenes" / "a1_standing.json"
A1_URDF = "a1_description/urdf/a1.urdf"
G = 9.81
MIN_SAMPLE = 0.1  # s of CPU time per timed sample; shorter runs are repeated in the round
MARSDEN_DTS = (0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)
# MuJoCo's cone and dt: its defaults (the goal's peer) and variants.
MUJOCO_DEFAULTS = ("pyramidal", 0.002)
MUJOCO_VARIANTS = (MUJOCO_DEFAULTS, ("pyramidal", 0.01), ("elliptic", 0.002), ("elliptic", 0.01))
A1_MARSDEN_DTS = (0.02, 0.01, 0.005)  # 0.01: the scene's
A1_MUJOCO_VARIANTS = (MUJOCO_DEFAULTS, ("pyramidal", 0.01), ("elliptic", 0.002))
A1_TAIL = 2.0  # steadiness: max - min of the base height over the last A1_TAIL s
CPU = {"process": 0.0, "thread": 0.0}


def timed(call):
    """call()'s thread CPU time (s) and result; the process CPU time is summed beside it to
    check that no engine works on other threads, which thread CPU time would miss."""
    cpu, process = time.thread_time(), time.process_time()
    result = call()
    cpu = time.thread_time() - cpu
    CPU["process"] += time.process_time() - process
    CPU["thread"] += cpu
    return cpu, result


# ----------------------------------------------------------------------------- closed forms

@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    text: str
    shape: str  # "box" (edge 0.2 m) or "sphere" (radius 0.1 m), 1 kg
    mu: float
    incline_deg: float
    v0: tuple
    duration: float
    exact: float
    quantity: str
    errors: tuple  # names of the errors, in the order measure() returns them

    half = 0.1  # half the box's edge, and the sphere's radius (m)

    @property
    def normal(self):
        a = math.radians(self.incline_deg)
        return np.array([-math.sin(a), 0.0, math.cos(a)])

    @property
    def down(self):  # down the slope; the incline rises along +x
        a = math.radians(self.incline_deg)
        return np.array([-math.cos(a), 0.0, -math.sin(a)])

    @property
    def x0(self):  # the centre, half an edge (a radius) above the plane along its normal
        return self.half * self.normal

    def measure(self, x, v):
        """The measured quantity and its errors against the closed form, from the final
        position x (m) and velocity v (m/s) of the centre."""
        d = np.asarray(x) - self.x0
        if self.name == "slide":
            distance = math.hypot(d[0], d[1])
            heading = math.degrees(math.atan2(d[1], d[0]))
            exact_heading = math.degrees(math.atan2(self.v0[1], self.v0[0]))
            return distance, (abs(distance - self.exact), abs(heading - exact_heading))
        if self.name == "incline 20":
            drift = float(np.linalg.norm(d))
            return drift, (drift,)
        acceleration = float(np.asarray(v) @ self.down) / self.duration
        return acceleration, (abs(acceleration - self.exact),)


def closed_form_cases():
    v = (4.0, 0.8, 0.0)
    slide = (v[0] ** 2 + v[1] ** 2) / (2 * 0.25 * G)
    a30 = G * (math.sin(math.radians(30)) - 0.15 * math.cos(math.radians(30)))
    a15 = 5.0 / 7.0 * G * math.sin(math.radians(15))
    # The figures of issue 37 and tests/maximal/test_contact.cpp.
    assert abs(slide - 3.392457) < 1e-6 and abs(a30 - 3.630644) < 1e-6
    assert abs(a15 - 1.813582) < 1e-6 and abs(math.degrees(math.atan(0.2)) - 11.309932) < 1e-6
    return [
        Case("slide", "box (0.2 m, 1 kg) sliding on the ground from (4, 0.8, 0) m/s, mu 0.25, 2 s; "
             "closed form: distance 3.392457 m, heading 11.309932 deg", "box", 0.25, 0.0, v,
             2.0, slide, "distance (m)", ("distance", "heading (deg)")),
        Case("incline 30", "box on a 30 deg incline, mu 0.15, from rest, 1 s; closed form: "
             "3.630644 m/s^2 down the slope", "box", 0.15, 30.0, (0.0, 0.0, 0.0), 1.0, a30,
             "v(1 s) / 1 s (m/s^2)", ("acceleration",)),
        Case("incline 20", "box on a 20 deg incline, mu 0.5, from rest, 10 s; closed form: "
             "stays (tan 20 deg = 0.364 < mu)", "box", 0.5, 20.0, (0.0, 0.0, 0.0), 10.0, 0.0,
             "drift (m)", ("drift",)),
        Case("sphere", "solid sphere (r 0.1 m, 1 kg) on a 15 deg incline, mu 1, from rest, 1 s; "
             "closed form: rolls at 1.813582 m/s^2", "sphere", 1.0, 15.0, (0.0, 0.0, 0.0), 1.0,
             a15, "v(1 s) / 1 s (m/s^2)", ("acceleration",)),
    ]


def urdf_text(shape):
    """A 1 kg body with its <collision>: a box of edge 0.2 m (inertia m a^2 / 6) or a solid
    sphere of radius 0.1 m (inertia 0.4 m r^2)."""
    if shape == "box":
        inertia, geometry = 0.2 ** 2 / 6.0, '<box size="0.2 0.2 0.2"/>'
    else:
        inertia, geometry = 0.4 * 0.1 ** 2, '<sphere radius="0.1"/>'
    i = repr(inertia)
    return f"""<?xml version="1.0"?>
<robot name="{shape}">
  <link name="{shape}">
    <inertial><mass value="1.0"/><inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial>
    <collision><geometry>{geometry}</geometry></collision>
  </link>
</robot>
"""


def marsden_case_scene(case, dt, folder):
    """Writes the case as a scene file (and its URDF) into folder; returns the scene's path."""
    urdf = folder / f"{case.shape}.urdf"
    if not urdf.exists():
        urdf.write_text(urdf_text(case.shape))
    base = {"position": [float(c) for c in case.x0], "linear_velocity": list(case.v0)}
    if case.shape == "box":  # face-down on the plane
        base["orientation"] = {"rpy": [0.0, -math.radians(case.incline_deg), 0.0]}
    scene = {
        "description": f"bench/peers/contact.py: {case.text}",
        "system": {
            "type": "maximal", "urdf": str(urdf), "base": "floating",
            "contact": {"surfaces": [{"name": "plane", "normal": [float(c) for c in case.normal],
                                      "point": [0, 0, 0], "friction": case.mu}],
                        "urdf_collisions": {}},
        },
        "initial_state": {"base": base},
        "dt": dt,
        "duration": case.duration,
    }
    path = folder / f"{case.name.replace(' ', '_')}_dt{dt:g}.json"
    path.write_text(json.dumps(scene, indent=1))
    return path


def mujoco_case_xml(case, dt, cone):
    friction = f"{case.mu!r} 0.005 0.0001"  # torsional, rolling: MuJoCo's defaults, unused at condim 3
    if case.shape == "box":
        geom = f'type="box" size="{case.half} {case.half} {case.half}"'
    else:
        geom = f'type="sphere" size="{case.half}"'
    return f"""<mujoco model="{case.name}">
  <option timestep="{dt!r}" cone="{cone}"/>
  <worldbody>
    <geom name="plane" type="plane" size="0 0 1" euler="0 {-case.incline_deg!r} 0" friction="{friction}" condim="3"/>
    <body name="body"><freejoint/><geom {geom} mass="1" friction="{friction}" condim="3"/></body>
  </worldbody>
</mujoco>"""


# ----------------------------------------------------------------------------- runners
# A runner is built once per round (untimed); calling it runs the whole simulation from the
# initial state and returns its thread CPU time; result() reads what the last call left.

class MarsdenRun:
    def __init__(self, scene_path, dt, duration, every_step=False):
        self.scene = marsden.load_scene(scene_path)
        self.dt, self.steps = dt, int(round(duration / dt))
        self.output_every = 1 if every_step else self.steps
        self.system = self.trajectory = None

    def __call__(self):
        self.system = marsden.make_system(self.scene)  # a few microseconds, untimed
        cpu, self.trajectory = timed(lambda: marsden.simulate(self.system, self.dt, self.steps,
                                                              output_every=self.output_every))
        return cpu

    def iterations(self):
        return self.trajectory.summary["newton_iterations"]["mean"]


class MujocoRun:
    def __init__(self, xml, duration, set_initial, sensors=0):
        self.model = mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(self.model)
        set_initial(self.model, self.data)
        self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.state0 = np.empty((1, mujoco.mj_stateSize(self.model, self.spec)))
        mujoco.mj_getState(self.model, self.data, self.state0[0], self.spec)
        self.dt = self.model.opt.timestep
        self.steps = int(round(duration / self.dt))
        self.states = np.empty((1, self.steps, self.state0.shape[1]))
        self.sensors = np.empty((1, self.steps, sensors))
        self.warmstart = np.zeros((1, self.model.nv))

    def __call__(self):
        def go():
            mj_rollout.rollout([self.model], [self.data], self.state0, nstep=self.steps,
                               initial_warmstart=self.warmstart, state=self.states,
                               sensordata=self.sensors, skip_checks=True)
        return timed(go)[0]

    def qpos(self, k=-1):
        return self.states[0, k, 1:1 + self.model.nq]

    def qvel(self, k=-1):
        nq = self.model.nq
        return self.states[0, k, 1 + nq:1 + nq + self.model.nv]

    def iterations(self):
        """Mean solver iterations per step, from a separate, untimed stepping in Python."""
        data = mujoco.MjData(self.model)
        mujoco.mj_setState(self.model, data, self.state0[0], self.spec)
        total = 0
        for _ in range(self.steps):
            mujoco.mj_step(self.model, data)
            total += int(data.solver_niter[0])
        assert np.allclose(data.qpos, self.qpos(), atol=1e-9), "rollout and mj_step differ"
        return total / self.steps

    def depth(self):
        """The deepest contact's penetration at the final state (m, 0 when none)."""
        data = mujoco.MjData(self.model)
        mujoco.mj_setState(self.model, data, self.states[0, -1], self.spec)
        mujoco.mj_forward(self.model, data)
        return max([0.0] + [-float(c.dist) for c in data.contact[:data.ncon]])


@dataclasses.dataclass
class Job:
    part: str  # a case's name or "A1"
    engine: str  # "Marsden" or "MuJoCo"
    cone: str  # MuJoCo's cone, "" for Marsden
    dt: float
    build: object  # () -> runner
    runner: object = None
    reps: int = 1
    times: list = dataclasses.field(default_factory=list)  # CPU s per run, one per round
    result: dict = dataclasses.field(default_factory=dict)

    @property
    def key(self):
        return (self.part, self.engine, self.cone, self.dt)


def closed_form_jobs(cases, folder):
    jobs = []
    for case in cases:
        for dt in MARSDEN_DTS:
            path = marsden_case_scene(case, dt, folder)
            jobs.append(Job(case.name, "Marsden", "", dt,
                            lambda path=path, dt=dt, case=case: MarsdenRun(path, dt, case.duration)))
        for cone, dt in MUJOCO_VARIANTS:
            xml = mujoco_case_xml(case, dt, cone)

            def initial(model, data, case=case):
                a = math.radians(case.incline_deg)
                data.qpos[0:3] = case.x0
                if case.shape == "box":  # rotated by -a about y, as the plane
                    data.qpos[3:7] = [math.cos(-a / 2), 0.0, math.sin(-a / 2), 0.0]
                data.qvel[0:3] = case.v0
            jobs.append(Job(case.name, "MuJoCo", cone, dt,
                            lambda xml=xml, case=case, initial=initial:
                            MujocoRun(xml, case.duration, initial)))
    return jobs


def closed_form_result(case, job):
    runner = job.runner
    if job.engine == "Marsden":
        if not runner.trajectory.ok:
            return {"ok": False, "note": runner.trajectory.summary["message"]}
        x = np.asarray(runner.system.state)
        value, errors = case.measure(x[0:3], x[7:10])
    else:
        value, errors = case.measure(runner.qpos()[0:3], runner.qvel()[0:3])
    return {"ok": all(math.isfinite(e) for e in errors), "value": value, "errors": errors,
            "iterations": runner.iterations()}


# ----------------------------------------------------------------------------- A1

def robots_dir():
    """example-robot-data's robots folder: $MARSDEN_ROBOTS_DIR, else the one installed in this
    Python environment (bench/peers/.venv has it, pulled in by crocoddyl)."""
    if os.environ.get("MARSDEN_ROBOTS_DIR"):
        return Path(os.environ["MARSDEN_ROBOTS_DIR"])
    for site in map(Path, sys.path):
        robots = site / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if (robots / A1_URDF).exists():
            return robots
    raise SystemExit("contact.py: no example-robot-data robots folder (set MARSDEN_ROBOTS_DIR)")


def a1_setup(folder):
    """The A1 scene with its URDF named by absolute path (the file MuJoCo reads too), and the
    stance, springs, dampers, friction and clearance from it."""
    scene = json.loads(A1_SCENE.read_text())
    urdf = robots_dir() / A1_URDF
    system = scene["system"]
    assert system["urdf"] == "example-robot-data:" + A1_URDF, system["urdf"]
    system["urdf"] = str(urdf)
    spec = {
        "urdf": urdf,
        "springs": {s["joint"]: (s["stiffness"], s.get("rest", 0.0)) for s in system["springs"]},
        "dampers": {d["joint"]: d["damping"] for d in system["dampers"]},
        "friction": system["contact"]["surfaces"][0]["friction"],
        "q": scene["initial_state"]["q"],
        "clearance": scene["initial_state"]["clearance"],
        "duration": scene["duration"],
    }
    assert system["contact"]["surfaces"][0]["normal"] == [0, 0, 1]
    paths = {}
    for dt in A1_MARSDEN_DTS:
        scene["dt"] = dt
        paths[dt] = folder / f"a1_dt{dt:g}.json"
        paths[dt].write_text(json.dumps(scene, indent=1))
    return spec, paths


def a1_mjcf(spec, folder, dt, cone):
    text = spec["urdf"].read_text()
    text = re.sub(r"<visual>.*?</visual>", "", text, flags=re.S)  # .dae meshes MuJoCo cannot read
    counter = itertools.count()  # named, or MuJoCo warns of every unnamed one
    text = re.sub(r"<collision>", lambda _: f'<collision name="collision{next(counter)}">', text)
    text, n = re.subn(r'(<joint name="floating_base" type=)"fixed"', r'\1"floating"', text)
    assert n == 1, "the A1 URDF's base joint is not where it was"
    saved = folder / "a1_from_urdf.xml"
    mujoco.mj_saveLastXML(str(saved), mujoco.MjModel.from_xml_string(text))
    root = ET.parse(saved).getroot()
    root.insert(0, ET.Element("option", timestep=repr(dt), cone=cone))
    friction = f"{spec['friction']!r} 0.005 0.0001"
    for joint in root.iter("joint"):
        name = joint.get("name")
        if joint.get("type") == "free":
            continue
        joint.attrib.pop("range", None)
        joint.set("limited", "false")
        stiffness, rest = spec["springs"][name]
        joint.set("stiffness", repr(stiffness))
        joint.set("springref", repr(rest))
        joint.set("damping", repr(spec["dampers"][name]))
    colliding = 0
    for geom in root.iter("geom"):
        if geom.get("type") == "cylinder":  # Marsden leaves these out
            geom.set("contype", "0")
            geom.set("conaffinity", "0")
        else:  # against the floor only
            geom.set("contype", "1")
            geom.set("conaffinity", "0")
            geom.set("friction", friction)
            geom.set("condim", "3")
            colliding += 1
    ET.SubElement(root.find("worldbody"), "geom", name="floor", type="plane", size="0 0 1",
                  friction=friction, condim="3", contype="1", conaffinity="1")
    sensor = ET.SubElement(root, "sensor")  # the trunk's centre of mass (objtype body: inertial frame)
    ET.SubElement(sensor, "framepos", name="trunk_com", objtype="body", objname="trunk")
    return ET.tostring(root, encoding="unicode"), colliding


def a1_initial(spec):
    def initial(model, data):
        for j in range(model.njnt):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
            if name in spec["q"]:
                data.qpos[model.jnt_qposadr[j]] = spec["q"][name]
        mujoco.mj_kinematics(model, data)
        lowest = math.inf  # over the colliding geoms' points, as Marsden's clearance
        for g in range(model.ngeom):
            if model.geom_bodyid[g] == 0 or model.geom_contype[g] == 0:
                continue
            if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE:
                lowest = min(lowest, data.geom_xpos[g][2] - model.geom_size[g][0])
            elif model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
                R = data.geom_xmat[g].reshape(3, 3)
                for signs in itertools.product((-1.0, 1.0), repeat=3):
                    vertex = data.geom_xpos[g] + R @ (np.array(signs) * model.geom_size[g][:3])
                    lowest = min(lowest, vertex[2])
        data.qpos[2] += spec["clearance"] - lowest
    return initial


def a1_jobs(folder):
    spec, paths = a1_setup(folder)
    jobs = []
    for dt in A1_MARSDEN_DTS:
        jobs.append(Job("A1", "Marsden", "", dt,
                        lambda dt=dt: MarsdenRun(paths[dt], dt, spec["duration"], every_step=True)))
    for cone, dt in A1_MUJOCO_VARIANTS:
        xml, _ = a1_mjcf(spec, folder, dt, cone)
        jobs.append(Job("A1", "MuJoCo", cone, dt,
                        lambda xml=xml: MujocoRun(xml, spec["duration"], a1_initial(spec), sensors=3)))
    return spec, jobs


LEGS = ("FR", "FL", "RR", "RL")


def width(y):
    """The stance's width (m): the mean lateral distance between the left and right calves'
    centres of mass (each with its foot), front and rear."""
    return 0.5 * ((y["FL"] - y["FR"]) + (y["RL"] - y["RR"]))


def a1_result(job, duration):
    runner = job.runner
    if job.engine == "Marsden":
        tr = runner.trajectory
        if not tr.ok:
            return {"ok": False, "note": tr.summary["message"]}
        columns = list(tr.columns)
        t = np.asarray(tr.t)
        z = tr.values[:, columns.index("base_z")]
        xy = tr.values[:, [columns.index("base_x"), columns.index("base_y")]]
        depth = float(tr.values[-1, columns.index("penetration")])
        z0 = float(z[0])
        feet_y = [{leg: tr.values[row, columns.index(f"{leg}_calf_y")] for leg in LEGS}
                  for row in (0, -1)]
    else:
        t = runner.dt * np.arange(1, runner.steps + 1)
        com = runner.sensors[0]
        z, xy = com[:, 2], com[:, 0:2]
        model, data = runner.model, mujoco.MjData(runner.model)
        feet_y = []
        for state in (runner.state0[0], runner.states[0, -1]):
            mujoco.mj_setState(model, data, state, runner.spec)
            mujoco.mj_forward(model, data)
            feet_y.append({leg: data.xipos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY,
                                                                 f"{leg}_calf")][1] for leg in LEGS})
            if len(feet_y) == 1:
                z0 = float(data.xipos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "trunk")][2])
        depth = runner.depth()
    tail = t >= duration - A1_TAIL - 1e-9
    return {"ok": bool(np.all(np.isfinite(z))) and z[-1] > 0.5 * z0, "z0": z0, "z_end": float(z[-1]),
            "steadiness": float(z[tail].max() - z[tail].min()),
            "xy_drift": float(np.linalg.norm(xy[-1] - xy[0])), "depth": depth,
            "splay": width(feet_y[1]) - width(feet_y[0]),
            "iterations": runner.iterations()}


# ----------------------------------------------------------------------------- report

def ratios(a, b):
    """Per-round ratios of two jobs' times (the same rounds)."""
    return [x / y for x, y in zip(a.times, b.times)]


def r2(v):
    return f"{v:.2f}"


def ms(v):
    return f"{1e3 * v:.3g}"


def us(v):
    return f"{1e6 * v:.3g}"


def e(v):
    return f"{v:.1e}" if math.isfinite(v) else "failed"


def label(job):
    if job.engine == "Marsden":
        return "Marsden"
    default = (job.cone, job.dt) == MUJOCO_DEFAULTS
    return f"MuJoCo {job.cone}{' (defaults)' if default else ''}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    start = time.perf_counter()
    print("# Contact: Marsden against MuJoCo")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {cpu_model()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; Python "
          f"{platform.python_version()}, marsden {marsden.__version__} "
          f"({Path(marsden.__file__).parent}), mujoco {mujoco.__version__}, numpy {np.__version__}")
    cases = closed_form_cases()
    with tempfile.TemporaryDirectory(prefix="marsden-contact-peer-") as tmp:
        folder = Path(tmp)
        jobs = closed_form_jobs(cases, folder)
        a1_spec, a1 = a1_jobs(folder)
        jobs += a1
        # Warm-up round, untimed: first-use costs, the results (deterministic: every timed
        # run repeats them) and how many repetitions make a sample of MIN_SAMPLE.
        for job in jobs:
            job.runner = job.build()
            cpu = job.runner()
            job.reps = max(1, math.ceil(MIN_SAMPLE / max(cpu, 1e-6)))
            case = next((c for c in cases if c.name == job.part), None)
            job.result = (closed_form_result(case, job) if case else
                          a1_result(job, a1_spec["duration"]))
        for r in range(args.rounds):
            shift = (r * len(jobs)) // args.rounds
            for job in jobs[shift:] + jobs[:shift]:
                job.runner = job.build()
                job.times.append(sum(job.runner() for _ in range(job.reps)) / job.reps)
            # The last state is that of the warm-up (deterministic), checked on one value.
            for job in jobs:
                if job.part != "A1" and job.result.get("ok"):
                    case = next(c for c in cases if c.name == job.part)
                    again = closed_form_result(case, job)
                    assert again["value"] == job.result["value"], job.key

    by_key = {job.key: job for job in jobs}
    print(f"# {args.rounds} rounds; CPU = thread CPU time of the stepping call, median (min-max) "
          f"over the rounds; samples of at least {MIN_SAMPLE * 1e3:g} ms (short runs repeated)")

    # ---- part 1
    summary = []
    for case in cases:
        print(f"\n## {case.name}: {case.text}")
        header = " | ".join(f"{n} error" for n in case.errors)
        print(f"| engine | dt (s) | steps | CPU ms per simulated s | µs per step | iter. per step "
              f"| {case.quantity} | {header} |")
        print("|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(case.errors))
        for job in (j for j in jobs if j.part == case.name):
            res, steps = job.result, job.runner.steps
            per_s = [t / case.duration for t in job.times]
            per_step = [t / steps for t in job.times]
            if not res.get("ok"):
                print(f"| {label(job)} | {job.dt:g} | {steps} | {spread(per_s, ms)} | "
                      f"{spread(per_step, us)} | | failed: {res.get('note', '')} |"
                      + " |" * len(case.errors))
                continue
            errors = " | ".join(e(x) for x in res["errors"])
            print(f"| {label(job)} | {job.dt:g} | {steps} | {spread(per_s, ms)} | "
                  f"{spread(per_step, us)} | {res['iterations']:.1f} | {res['value']:.6f} | {errors} |")
        # The goal: less CPU time than MuJoCo at equal or smaller error.
        for cone, dt in MUJOCO_VARIANTS:
            peer = by_key[(case.name, "MuJoCo", cone, dt)]
            if not peer.result.get("ok"):
                continue
            ok = [by_key[(case.name, "Marsden", "", d)] for d in MARSDEN_DTS]
            ok = [j for j in ok if j.result.get("ok") and
                  all(a <= b for a, b in zip(j.result["errors"], peer.result["errors"]))]
            match = ok[0] if ok else None  # the coarsest step that is as accurate
            summary.append((case, peer, match))

    print("\n## Goal: less CPU time than MuJoCo at equal or smaller error "
          "(Marsden / MuJoCo, CPU time per simulated second)")
    print("| case | MuJoCo | its errors | Marsden dt 0.01 s: errors, time ratio | "
          "Marsden dt 0.001 s: errors, time ratio | coarsest Marsden dt with every error <= "
          "MuJoCo's: dt, time ratio | goal met |")
    print("|---|---|---|---|---|---|---|")
    for case, peer, match in summary:
        cells = []
        for d in (0.01, 0.001):
            j = by_key[(case.name, "Marsden", "", d)]
            cells.append(f"{', '.join(e(x) for x in j.result.get('errors', (math.inf,)))}; "
                         f"{spread(ratios(j, peer), r2)}")
        if match:
            rr = ratios(match, peer)
            cells.append(f"{match.dt:g} s; {spread(rr, r2)}")
            met = "yes" if max(rr) < 1 else ("no" if min(rr) >= 1 else "mixed")
        else:
            cells.append("none")
            met = "no (never as accurate)"
        print(f"| {case.name} | {peer.cone}, dt {peer.dt:g} | "
              f"{', '.join(e(x) for x in peer.result['errors'])} | {' | '.join(cells)} | {met} |")

    # ---- part 2
    print(f"\n## A1 standing: {A1_SCENE.relative_to(ROOT)} (URDF {a1_spec['urdf'].resolve()}), "
          f"dropped {a1_spec['clearance'] * 1e3:g} mm, {a1_spec['duration']:g} s, "
          f"steadiness = max - min of the base's centre-of-mass height over the last {A1_TAIL:g} s")
    print("| engine | dt (s) | steps | CPU ms per simulated s | µs per step | iter. per step "
          "| base z at 0 / end (m) | steadiness (m) | base xy drift (m) | stance widened by (m) "
          "| deepest contact at end (m) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for job in a1:
        res, steps = job.result, job.runner.steps
        per_s = [t / a1_spec["duration"] for t in job.times]
        per_step = [t / steps for t in job.times]
        if "z0" not in res:
            print(f"| {label(job)} | {job.dt:g} | {steps} | {spread(per_s, ms)} | "
                  f"{spread(per_step, us)} | | failed: {res.get('note', '')} | | | | |")
            continue
        fell = "" if res["ok"] else " (fell)"
        print(f"| {label(job)} | {job.dt:g} | {steps} | {spread(per_s, ms)} | {spread(per_step, us)} "
              f"| {res['iterations']:.1f} | {res['z0']:.6f} / {res['z_end']:.6f}{fell} | "
              f"{res['steadiness']:.1e} | {res['xy_drift']:.1e} | {res['splay']:.1e} | {res['depth']:.1e} |")
    print("\n| Marsden / MuJoCo | per step | per simulated second |")
    print("|---|---:|---:|")
    for mj in (j for j in a1 if j.engine == "MuJoCo"):
        for m in (j for j in a1 if j.engine == "Marsden"):
            per_run = ratios(m, mj)
            per_step = [x * m.dt / mj.dt for x in per_run]
            print(f"| Marsden dt {m.dt:g} / {label(mj)} dt {mj.dt:g} | {spread(per_step, r2)} "
                  f"| {spread(per_run, r2)} |")

    print(f"\n(process CPU / thread CPU over every timed call: {CPU['process'] / CPU['thread']:.3f}; "
          f"1 means neither engine used other threads. Whole script: "
          f"{time.perf_counter() - start:.0f} s wall.)")


if __name__ == "__main__":
    main()
