"""MJCF files (docs/mjcf.md) against MuJoCo, the independent reference: for the models of
Gymnasium's and dm_control's suites that have hinge and slide joints only, and the
examples in examples/mjcf, the tree model's mass matrix (armature included) and bias forces
equal MuJoCo's mj_fullM and qfrc_bias at random states. The suites' XML files are
installed by scripts/install-deps.sh --robots (scripts/install_model_suites.py)."""

import pathlib
import pickle
import sys

import mujoco
import numpy as np
import pytest

import marsden

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITES = pathlib.Path(sys.prefix) / "share" / "marsden-model-suites"
# Every suite file with only hinge and slide joints that the reader accepts (docs/mjcf.md
# names the reasons for the others).
HINGE_SLIDE = {
    "gymnasium": ["half_cheetah", "hopper", "inverted_double_pendulum", "inverted_pendulum",
                  "point", "pusher", "pusher_v5", "reacher", "walker2d", "walker2d_v5"],
    "dm_control": ["acrobot", "cartpole", "cheetah", "hopper", "pendulum", "reacher",
                   "walker"],
}


def suite_file(suite, stem):
    path = SUITES / suite / f"{stem}.xml"
    assert path.exists(), (f"{path} is missing: scripts/install-deps.sh --robots installs the "
                           "suites' MJCF files")
    return path


FILES = [ROOT / "examples" / "mjcf" / "double_pendulum.xml",
         ROOT / "examples" / "mjcf" / "cart_arm.xml",
         ROOT / "examples" / "mjcf" / "motor_arm.xml"]
CASES = [(None, f) for f in FILES] + [(s, n) for s, names in HINGE_SLIDE.items() for n in names]


def both_models(suite, name):
    """MuJoCo's model and data and Marsden's tree model of one file, and where each of
    MuJoCo's joints is among Marsden's coordinates. Coordinates are named as MuJoCo's joints
    and equal their qpos (ref included), with the same positive sense; only the order may
    differ."""
    path = suite_file(suite, name) if suite else name
    mj = mujoco.MjModel.from_xml_path(str(path))
    model = marsden.tree.model_from_mjcf(path)
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)]
    return mj, mujoco.MjData(mj), model, [model.coordinates.index(n) for n in names]


def random_state(mj, rng):
    return mj.qpos0 + rng.uniform(-1.0, 1.0, mj.nq), rng.uniform(-2.0, 2.0, mj.nv)


def relative(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("suite,name", CASES,
                         ids=[f"{s}/{n}" if s else pathlib.Path(n).stem for s, n in CASES])
def test_mass_matrix_and_bias_equal_mujoco(suite, name):
    mj, data, model, order = both_models(suite, name)
    assert mj.nq == mj.nv == len(model.coordinates)
    rng = np.random.default_rng(39)
    for _ in range(3):
        qpos, qvel = random_state(mj, rng)
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(mj, data)
        M_mujoco = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, M_mujoco, data.qM)
        q, qd = np.zeros(mj.nq), np.zeros(mj.nv)
        q[order], qd[order] = qpos, qvel
        terms = marsden.tree.lagrangian_terms(model, q, qd)
        M = terms["M"][np.ix_(order, order)]
        # M qdd = L_q - L_qv^T qd (+ forces): the bias is L_qv^T qd - L_q, whose L_q holds
        # the joint springs, which MuJoCo keeps apart in qfrc_spring.
        bias = (terms["L_qv"].T @ qd - terms["L_q"])[order]
        assert relative(M, M_mujoco) <= 1e-9
        assert relative(bias, data.qfrc_bias - data.qfrc_spring) <= 1e-9


@pytest.mark.parametrize("suite,name", CASES,
                         ids=[f"{s}/{n}" if s else pathlib.Path(n).stem for s, n in CASES])
def test_motor_forces_equal_mujoco(suite, name):
    """The tree model's inputs are the file's motors in MuJoCo's ctrl order: their
    generalized force, M (qdd(u) - qdd(0)), equals MuJoCo's qfrc_actuator at random states
    and controls, half of them outside ctrlrange (clamped)."""
    mj, data, model, order = both_models(suite, name)
    assert model.num_inputs == mj.nu
    if mj.nu == 0:
        return
    rng = np.random.default_rng(139)
    for _ in range(3):
        qpos, qvel = random_state(mj, rng)
        span = np.where(mj.actuator_ctrllimited,
                        mj.actuator_ctrlrange[:, 1] - mj.actuator_ctrlrange[:, 0], 2.0)
        ctrl = rng.uniform(-1.0, 1.0, mj.nu) * span
        data.qpos[:], data.qvel[:], data.ctrl[:] = qpos, qvel, ctrl
        mujoco.mj_forward(mj, data)
        q, qd = np.zeros(mj.nq), np.zeros(mj.nv)
        q[order], qd[order] = qpos, qvel
        M = marsden.tree.lagrangian_terms(model, q, qd)["M"]
        qdd_u, _ = marsden.tree.continuous_dynamics(model, q, qd, ctrl)
        qdd_0, _ = marsden.tree.continuous_dynamics(model, q, qd, np.zeros(mj.nu))
        force = (M @ (qdd_u - qdd_0))[order]
        scale = max(1.0, np.abs(data.qfrc_actuator).max())
        assert np.abs(force - data.qfrc_actuator).max() <= 1e-9 * scale


def test_every_suite_file_loads_or_names_its_reason():
    files = sorted(SUITES.glob("*/*.xml"))
    assert len(files) >= 33, f"{SUITES}: scripts/install-deps.sh --suites installs the suites"
    loaded = []
    for path in files:
        try:
            marsden.tree.model_from_mjcf(path)
            loaded.append(path.stem)
        except marsden.InputError as error:
            # The file and the line of the element it refuses.
            assert str(path) in str(error) and "(line " in str(error), str(error)
    for names in HINGE_SLIDE.values():
        assert set(names) <= set(loaded)


def rotation(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i] = R[j, j] = c
    R[i, j], R[j, i] = -s, s
    return R


@pytest.mark.parametrize("suite,name", [("gymnasium", "ant"), ("dm_control", "humanoid"),
                                        ("dm_control", "humanoid_CMU")])
def test_free_root_equals_mujoco_through_the_change_of_velocities(suite, name):
    """The floating base's coordinates (x, y, z, yaw, pitch, roll after the root's pose in
    the file, B) are not MuJoCo's free joint (world position and quaternion; world linear
    and body angular velocity): with v_mujoco = J(q) qd, M = J^T M_mujoco J and
    bias = J^T (bias_mujoco + M_mujoco Jdot qd)."""
    path = suite_file(suite, name)
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    model = marsden.load_mjcf(path)
    assert len(model.coordinates) == mj.nv
    root = model.coordinates[0][:-2]
    assert model.coordinates[:6] == [f"{root}_{s}" for s in ("x", "y", "z", "yaw", "pitch", "roll")]
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(1, mj.njnt)]
    order = [model.coordinates.index(n) for n in names]  # MuJoCo's dofs 6.. (hinges)
    R_B = np.zeros(9)
    mujoco.mju_quat2Mat(R_B, mj.qpos0[3:7])
    R_B, p_B = R_B.reshape(3, 3), mj.qpos0[:3]
    rng = np.random.default_rng(39)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, mj.nv)
        qd = rng.uniform(-2.0, 2.0, mj.nv)
        yaw, pitch, roll = q[3:6]
        R = R_B @ rotation(2, yaw) @ rotation(1, pitch) @ rotation(0, roll)
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, R.flatten())
        data.qpos[:3], data.qpos[3:7] = p_B + R_B @ q[:3], quat
        data.qpos[7:] = mj.qpos0[7:] + q[order]
        # Body angular velocity of Rz(yaw) Ry(pitch) Rx(roll): E (yaw', pitch', roll').
        sp, cp, sr, cr = np.sin(pitch), np.cos(pitch), np.sin(roll), np.cos(roll)
        E = np.array([[-sp, 0, 1], [sr * cp, cr, 0], [cr * cp, -sr, 0]])
        dp, dr = qd[4], qd[5]
        E_dot = np.array([[-cp * dp, 0, 0],
                          [cr * cp * dr - sr * sp * dp, -sr * dr, 0],
                          [-sr * cp * dr - cr * sp * dp, -cr * dr, 0]])
        J = np.zeros((mj.nv, mj.nv))
        J[:3, :3], J[3:6, 3:6] = R_B, E
        J[6 + np.arange(len(order)), order] = 1.0
        J_dot_qd = np.zeros(mj.nv)
        J_dot_qd[3:6] = E_dot @ qd[3:6]
        data.qvel[:] = J @ qd
        mujoco.mj_forward(mj, data)
        M_mujoco = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, M_mujoco, data.qM)
        terms = marsden.tree.lagrangian_terms(model, q, qd)
        bias = terms["L_qv"].T @ qd - terms["L_q"]
        assert relative(terms["M"], J.T @ M_mujoco @ J) <= 1e-9
        expected = J.T @ (data.qfrc_bias - data.qfrc_spring + M_mujoco @ J_dot_qd)
        assert relative(bias, expected) <= 1e-9


def test_the_maximal_engine_refuses_armature_by_name():
    with pytest.raises(marsden.InputError, match="armature"):
        marsden.load_mjcf(suite_file("gymnasium", "ant"), engine="maximal")


def test_a_maximal_mechanism_from_mjcf_takes_its_motors_as_inputs():
    # motor_arm.xml: the shoulder motor has gear 10 and ctrlrange [-1, 1], the elbow's gear 2.
    # Its controls (2, 0.5) must act as the joint forces (10 * 1, 2 * 0.5) do on the bare
    # joints: the same trajectory to the bit, and the u columns the controls as given.
    path = ROOT / "examples" / "mjcf" / "motor_arm.xml"
    arm = marsden.maximal.mechanism_from_mjcf(path)
    assert arm.motors == [("shoulder", 10.0, -1.0, 1.0), ("elbow", 2.0, -np.inf, np.inf)]
    system = pickle.loads(pickle.dumps(marsden.maximal.system(arm, controls=[2.0, 0.5])))
    motors = marsden.simulate(system, dt=0.002, steps=200)
    bare = marsden.maximal.mechanism_from_mjcf(path)
    bare.motors = []
    forces = marsden.simulate(marsden.maximal.system(bare, inputs=["shoulder", "elbow"],
                                                     controls=[10.0, 1.0]), dt=0.002, steps=200)
    assert motors.ok and forces.ok
    moving = [c for c in motors.columns if c.endswith(("_x", "_z", "_qw"))]
    for c in moving:
        assert np.array_equal(motors[c], forces[c]), c
    assert np.ptp(motors["lower_x"]) > 0.01
    np.testing.assert_array_equal(motors["u0"], 2.0)
    with pytest.raises(marsden.InputError, match="<motor>s are the inputs"):
        marsden.maximal.system(arm, inputs=["shoulder"], controls=[1.0])
