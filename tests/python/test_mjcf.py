"""MJCF files (docs/mjcf.md) against MuJoCo, the independent reference: for the models of
Gymnasium's and dm_control's suites that have hinge and slide joints only, and the
examples in examples/mjcf, the tree model's mass matrix (armature included) and bias forces
equal MuJoCo's mj_fullM and qfrc_bias at random states. The suites' XML files are
installed by scripts/install-deps.sh --robots (scripts/install_model_suites.py)."""

import pathlib
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
         ROOT / "examples" / "mjcf" / "cart_arm.xml"]
CASES = [(None, f) for f in FILES] + [(s, n) for s, names in HINGE_SLIDE.items() for n in names]


def relative(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("suite,name", CASES,
                         ids=[f"{s}/{n}" if s else pathlib.Path(n).stem for s, n in CASES])
def test_mass_matrix_and_bias_equal_mujoco(suite, name):
    path = suite_file(suite, name) if suite else name
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    model = marsden.tree.model_from_mjcf(path)
    assert mj.nq == mj.nv == len(model.coordinates)
    # Coordinates are named as MuJoCo's joints and equal their qpos (ref included), with
    # the same positive sense; only the order may differ.
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)]
    order = [model.coordinates.index(n) for n in names]
    rng = np.random.default_rng(39)
    for _ in range(3):
        qpos = mj.qpos0 + rng.uniform(-1.0, 1.0, mj.nq)
        qvel = rng.uniform(-2.0, 2.0, mj.nv)
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


def test_every_suite_file_loads_or_names_its_reason():
    files = sorted(SUITES.glob("*/*.xml"))
    assert len(files) >= 33, f"{SUITES}: scripts/install-deps.sh --robots installs the suites"
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


def test_free_root_gets_six_floating_coordinates():
    path = suite_file("gymnasium", "ant")
    mj = mujoco.MjModel.from_xml_path(str(path))
    model = marsden.load_mjcf(path)
    assert len(model.coordinates) == mj.nv
    assert model.coordinates[:6] == [f"torso_{s}" for s in ("x", "y", "z", "yaw", "pitch", "roll")]
    with pytest.raises(marsden.InputError, match="armature"):
        marsden.load_mjcf(path, engine="maximal")
