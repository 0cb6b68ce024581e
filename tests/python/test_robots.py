"""Real robots from the installed example-robot-data package against Pinocchio (issue 24):
a fixed arm, an arm with stiff joint damping, a floating quadruped and an arm with <mimic>
joints. Each check is a property that could fail: agreement with an independent
implementation, the order of convergence towards its tiny-step solution, a run that
completes."""

import tempfile

import numpy as np
import pytest

from marsden import robot_zoo


def robot(stem):
    [path] = [p for p in robot_zoo.urdf_files() if p.stem == stem]
    with tempfile.TemporaryDirectory() as scratch:
        return robot_zoo.study(path, True, np.random.default_rng(24), scratch)


def test_the_package_holds_the_69_files():
    assert len(robot_zoo.urdf_files()) == 69


@pytest.mark.parametrize("stem", ["ur5_robot", "xarm7", "solo12", "panda"])
def test_dynamics_equal_pinocchio(stem):
    row = robot(stem)
    assert row["tree"] == "loads"
    for key in ("M_error", "nle_error", "gravity_error", "qdd_error"):
        assert row[key] <= 1e-9, (key, row[key])


@pytest.mark.parametrize("stem", ["ur5_robot", "xarm7", "panda"])
def test_both_engines_converge_to_pinocchio_at_their_order(stem):
    row = robot(stem)
    assert 1.8 <= row["tree_order"] <= 2.2, row["tree_order"]
    assert row["tree_trajectory_error"] < 1e-5
    assert 0.8 <= row["maximal_order"] <= 1.2, row["maximal_order"]


def test_stiff_damping_runs_in_maximal_coordinates():
    # xArm7: 10 N m s/rad on links of about 0.003 kg m^2, a time constant below dt.
    row = robot("xarm7")
    assert row["maximal_run"] == "ok"
    assert isinstance(row["maximal_energy_drift"], float)


def test_floating_quadruped_has_a_free_base_in_both_engines():
    row = robot("solo12")
    assert row["base"] == "floating" and row["coordinates"] == 18
    assert row["maximal"] == "loads" and row["maximal_run"] == "ok"
    assert row["tree_energy_drift"] < 1e-6


def test_mimic_joints_are_constraints_in_both_engines():
    # Panda's second finger mimics the first: a coupling constraint in both engines, against
    # Pinocchio's constrained (KKT) accelerations.
    row = robot("panda")
    assert row["tree"] == "loads" and row["maximal"] == "loads"
    assert row["maximal_run"] == "ok"


@pytest.mark.parametrize("stem", ["human", "icub_reduced"])
def test_massless_and_point_mass_links_run_in_maximal_coordinates(stem):
    # Human: massless links between the revolute joints of hips, shoulders and wrists;
    # iCub: point-mass links. Degenerate maximal bodies, solved exactly: the run completes
    # and converges to Pinocchio's solution at first order.
    row = robot(stem)
    assert row["maximal"] == "loads" and row["maximal_run"] == "ok"
    assert 0.8 <= row["maximal_order"] <= 1.2, row["maximal_order"]
    assert row["M_error"] <= 1e-9


def test_joints_that_move_no_mass_are_welded_and_the_rest_equals_pinocchio():
    # Romeo's hands and fingers carry no mass; welded in Marsden and locked in Pinocchio,
    # the remaining dynamics agree.
    row = robot("romeo")
    welded = row["welded_joints"].split()
    assert {"LHand", "RHand", "LFinger12"} <= set(welded)
    assert row["tree"] == "loads" and row["maximal"] == "loads"
    for key in ("M_error", "nle_error", "gravity_error", "qdd_backward_error"):
        assert row[key] <= 1e-9, (key, row[key])


def test_unphysical_link_inside_a_physical_body_loads():
    # Tiago's antenna links have indefinite inertias; welded to the base they form a
    # physical body, which is what both engines and Pinocchio simulate.
    row = robot("tiago_no_hand")
    assert row["tree"] == "loads" and row["maximal"] == "loads"
    for key in ("M_error", "nle_error", "gravity_error", "qdd_error"):
        assert row[key] <= 1e-9, (key, row[key])
