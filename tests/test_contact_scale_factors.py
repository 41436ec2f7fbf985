"""Moco's scale factors on ``ContactTrackingGoal``'s reference (``add_scale_factor``, Moco's ``addScaleFactor``).

A factor is a parameter of the problem (and a ``ScaleFactor`` component of the model) whose value multiplies one
component of one group's reference force. Checked here against what that means, computed another way: the goal with
a factor at value s scores a trajectory exactly as the goal without factors whose reference component was multiplied
by s. Its exact first and second derivatives are checked against finite differences with the other bindings in
``test_transcription_jacobians.py`` / ``test_transcription_hessians.py`` (``test_contact_scale_factors``).

No Moco number: OpenSim Moco 4.6 crashed (a segmentation fault inside ``MocoStudy::solve``) when the 2-D walker's
tracking problem got a ``MocoContactTrackingGoal`` with two ``addScaleFactor`` s, started at its own tracking solution
with no iteration allowed (tried 2026-11-28 with fixed and with free bounds), where the same goal without factors
and the other contact goals evaluate (``test_walking_goals_moco.py``).
"""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.ocp.goals import goal_from_dict
from moco_lab.results.sto import read_table
from moco_lab.util.data import opensim_file


@pytest.fixture(scope="module")
def tracked():
    """Moco's own 2-D walking tracking solution (stored reference) and the example's data."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
    return ml.read_trajectory(folder / "walking_2d_moco_tracking.sto")


def _goal(name, factors=(), reference=None):
    kw = dict(reference=reference) if reference is not None else dict(external_loads=opensim_file("referenceGRF.xml"))
    groups = [ml.ContactGroup(["contactHeel_r", "contactFront_r"], "Right_GRF" if reference is None else
                              ("ground_force_r_vx", "ground_force_r_vy", "ground_force_r_vz")),
              ml.ContactGroup(["contactHeel_l", "contactFront_l"], "Left_GRF" if reference is None else
                              ("ground_force_l_vx", "ground_force_l_vy", "ground_force_l_vz"))]
    goal = ml.ContactTrackingGoal(name, 0.3, groups=groups, projection="plane", projection_vector=(0, 0, 1), **kw)
    for factor in factors:
        goal.add_scale_factor(*factor)
    return goal


def test_a_factor_scales_the_reference(tracked):
    """Factors 0.9 on the right foot's vertical force and 1.2 on the left foot's fore-aft one (bounds fixed, so the
    evaluation takes those values): the same value as the goal tracking the data multiplied by hand, to 1e-12
    relative (the same splines of scaled numbers: measured 3e-16)."""
    study = ml.examples.walking_2d_tracking()
    study.problem.add_goal(_goal("scaled", [("sr", "Right_GRF", 1, (0.9, 0.9)), ("sl", "Left_GRF", 0, (1.2, 1.2))]))
    time, cols, _ = read_table(opensim_file("referenceGRF.sto"))
    cols = {k: np.asarray(v, float).copy() for k, v in cols.items()}
    cols["ground_force_r_vy"] *= 0.9
    cols["ground_force_l_vx"] *= 1.2
    study.problem.add_goal(_goal("by_hand", reference=(np.asarray(time), cols)))
    values = study.evaluate(tracked).goal_values
    assert [p.name for p in study.problem.parameters] == ["sr", "sl"]
    assert {e.path for e in study.problem.model.force_elements} >= {"/sr", "/sl"}
    assert values["scaled"] == pytest.approx(values["by_hand"], rel=1e-12)
    assert abs(values["scaled"] / values["contact"] - 1) > 0.05   # and the factors do change the value


def test_bad_scale_factors_are_named():
    goal = _goal("g")
    with pytest.raises(KeyError, match="no contact group tracks the external force 'Right'"):
        goal.add_scale_factor("s", "Right", 1, (0.5, 1.5))
    with pytest.raises(ValueError, match="index must be 0, 1 or 2"):
        goal.add_scale_factor("s", "Right_GRF", 3, (0.5, 1.5))
    with pytest.raises(ValueError, match="needs finite bounds"):
        goal.add_scale_factor("s", "Right_GRF", 1, (0.5, np.inf))
    goal.add_scale_factor("s", "Right_GRF", 1, (0.5, 1.5))
    with pytest.raises(ValueError, match="already exists"):
        goal.add_scale_factor("s", "Left_GRF", 1, (0.5, 1.5))
    with pytest.raises(ValueError, match="already has a scale factor"):
        goal.add_scale_factor("t", "Right_GRF", 1, (0.5, 1.5))
    impulse = ml.ContactImpulseTrackingGoal("i", 1.0, external_loads=opensim_file("referenceGRF.xml"), impulse_axis=1,
                                            groups=[ml.ContactGroup(["contactHeel_r"], "Right_GRF")])
    with pytest.raises(NotImplementedError, match="not offered for the impulse goal"):
        impulse.add_scale_factor("s", "Right_GRF", 1, (0.5, 1.5))
    # a study file keeps the factors (by group position)
    again = goal_from_dict(goal.to_dict())
    assert again.goal_parameters() == [("s", (0.5, 1.5))]


def test_a_study_with_scale_factors_saves_and_loads(tmp_path):
    """The factors travel with their goal; the problem recreates their parameters and components when checked."""
    study = ml.examples.walking_2d_tracking(num_mesh_intervals=5, grf_weight=0)
    study.solver.guess = None
    study.problem.add_goal(_goal("scaled", [("sr", "Right_GRF", 1, (0.8, 1.0))]))
    study.problem.validate()
    assert [p.name for p in study.problem.parameters] == ["sr"]
    path = tmp_path / "study.json"
    study.save(path)
    again = ml.Study.load(path)
    assert again.problem.parameters == [] and again.problem.get_goal("scaled").goal_parameters() == [("sr", (0.8, 1.0))]
    again.problem.validate()
    assert [(p.name, p.property) for p in again.problem.parameters] == [("sr", "/sr/scale_factor")]
