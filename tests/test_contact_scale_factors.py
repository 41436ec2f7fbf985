"""Moco's scale factors on ``ContactTrackingGoal``'s reference (``add_scale_factor``, Moco's ``addScaleFactor``).

A factor is a parameter of the problem (and a ``ScaleFactor`` component of the model) whose value multiplies one
component of one group's reference force. Checked here against what that means, computed another way: the goal with
a factor at value s scores a trajectory exactly as the goal without factors whose reference component was multiplied
by s. Its exact first and second derivatives are checked against finite differences with the other bindings in
``test_transcription_jacobians.py`` / ``test_transcription_hessians.py`` (``test_contact_scale_factors``).

No Moco number for the factor itself, because Moco 4.6 does not apply it: on a ball rolling on the floor
(``benchmarks/contact_scale_factor_moco.py``), Moco's contact term is the same to the last digit with the factor
fixed at 0.5, 1 or 2 and without it, and a free factor keeps its initial value through 20 iterations (its gradient
is zero); on the 2-D walker's tracking problem with two ``addScaleFactor`` s Moco crashed (a segmentation fault inside
``MocoStudy::solve``, tried 2026-11-28). What Moco does give: the same goal without a factor on the ball, equal to
moco_lab's (test_ball_without_factor_equals_moco), and the factor 1 scoring as no factor.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.ocp.goals import goal_from_dict
from moco_lab.results.sto import read_table
from moco_lab.util.data import opensim_file


@pytest.fixture(scope="module")
def tracked():
    """Moco's own 2-D walking tracking solution (stored reference) and the example's data."""
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


def _ball_study(stored: dict, factor: float | None) -> ml.Study:
    """The ball problem of ``benchmarks/contact_scale_factor_moco.py`` (its settings ``stored``), the factor's bounds
    fixed at ``factor`` (None: no factor)."""
    folder, settings = Path(__file__).resolve().parents[1] / "benchmarks" / "reference", stored["settings"]
    study = ml.Study("ball")
    problem = study.problem
    problem.set_model(ml.read_osim(folder / settings["model"].split("/")[-1]))
    problem.set_time_bounds(*settings["time"])
    problem.set_state_info("/jointset/ground_ball/tx/value", [-0.5, 1.0], *settings["tx"])
    problem.set_state_info("/jointset/ground_ball/ty/value", settings["ty_bounds"])
    problem.set_state_info("/jointset/ground_ball/rz/value", [-20.0, 20.0], 0.0)
    for coordinate in ("tx", "ty", "rz"):
        problem.set_state_info(f"/jointset/ground_ball/{coordinate}/speed", [-10.0, 10.0], 0.0, 0.0)
    problem.add_goal(ml.ControlGoal("effort", settings["effort_weight"]))
    goal = ml.ContactTrackingGoal("contact", settings["contact_weight"],
                                  external_loads=folder / settings["external_loads"].split("/")[-1],
                                  groups=[ml.ContactGroup(["contact"], settings["external_force"])],
                                  projection=settings["projection"], projection_vector=settings["projection_vector"])
    if factor is not None:
        goal.add_scale_factor("vertical_scale", settings["external_force"], settings["factor_index"], (factor, factor))
    problem.add_goal(goal)
    study.solver.num_mesh_intervals = settings["num_mesh_intervals"]
    return study


def test_ball_without_factor_equals_moco():
    """The ball (a new model for the contact goal: a sphere on a planar joint, friction, the data through an
    ``ExternalLoads`` file) scored at the point Moco evaluated: moco_lab's contact term equals Moco's (measured 1e-16
    relative; asserted 1e-9 as the walker's), with no factor and with the factor 1; at 0.5 and 2 it changes (by
    +4.9 % and -9.4 %: the reference moves against a contact force of some 400 N), where Moco's stays put — the
    stored evidence that Moco 4.6 does not apply the factor."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
    stored = json.loads((folder / "contact_scale_factor_moco.json").read_text())
    assert stored["environment"]["opensim"].startswith("4.6")
    moco = {run["factor"]: run["goals"]["contact"] for run in stored["runs"]}
    assert set(moco) == {None, 0.5, 1.0, 2.0} and len(set(moco.values())) == 1
    assert stored["free"]["parameters"]["vertical_scale"] == pytest.approx(1.25, abs=1e-6)
    point = ml.read_trajectory(folder / stored["settings"]["trajectory"].split("/")[-1])
    values = {}
    for factor in (None, 0.5, 1.0, 2.0):
        at = ml.Trajectory(point.time, states=point.states, controls=point.controls,
                           parameters={} if factor is None else {"vertical_scale": factor})
        values[factor] = _ball_study(stored, factor).evaluate(at).goal_values["contact"]
    assert values[None] == pytest.approx(moco[None], rel=1e-9)
    assert values[1.0] == pytest.approx(moco[1.0], rel=1e-9)
    assert values[0.5] > 1.04 * moco[0.5] and values[2.0] < 0.92 * moco[2.0]
