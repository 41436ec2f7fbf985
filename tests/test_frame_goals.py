"""Moco's translation tracking (``moco_lab.ocp.frame_goals``): the two kinds of reference give the same goal, and bad
input is named. Agreement with OpenSim Moco 4.6 is in tests/test_goals_moco.py, second derivatives in
tests/test_transcription_hessians.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import moco_lab as ml


def _states(n: int = 21) -> tuple[np.ndarray, dict]:
    t = np.linspace(0.0, 1.0, n)
    return t, {"/jointset/j0/q0/value": math.pi / 2 * (3 * t ** 2 - 2 * t ** 3),
               "/jointset/j1/q1/value": 0.6 * np.sin(math.pi * t)}


def _study() -> ml.Study:
    return ml.examples.double_pendulum_study("hermite-simpson", "explicit", 10, tol=1e-8)


def test_states_and_translation_references_agree():
    """A states reference is the translation table of the frames placed at its coordinates: the same goal, so the
    same solution. The positions are computed here from the double pendulum's geometry (two 1 m links; each body's
    origin at its link's end), not by moco_lab's kinematics; tolerance 1e-8 (the solves' tolerance)."""
    t, states = _states()
    q0, q1 = states["/jointset/j0/q0/value"], states["/jointset/j1/q1/value"]
    b0 = np.column_stack([np.cos(q0), np.sin(q0), 0 * t])
    b1 = b0 + np.column_stack([np.cos(q0 + q1), np.sin(q0 + q1), 0 * t])
    solutions = []
    for goal in (ml.TranslationTrackingGoal("frames", 500.0, frame_paths=["/bodyset/b0", "/bodyset/b1"],
                                            states_reference=(t, states)),
                 ml.TranslationTrackingGoal("frames", 500.0, translation_reference=(t, {"/bodyset/b0": b0,
                                                                                        "/bodyset/b1": b1}))):
        study = _study()
        study.problem.add_goal(goal)
        solutions.append(study.solve())
    a, b = solutions
    assert a.success and b.success
    assert a.objective == pytest.approx(b.objective, rel=1e-8)
    assert a.goal_values["frames"] > 1e-3 * a.objective  # the goal matters
    np.testing.assert_allclose(a.states["/jointset/j1/q1/value"], b.states["/jointset/j1/q1/value"], atol=1e-7)


def test_bad_input_is_named():
    t, states = _states()
    with pytest.raises(ValueError, match="give one reference"):
        ml.TranslationTrackingGoal("g", frame_paths=["/bodyset/b1"])
    with pytest.raises(ValueError, match="expected paths in frame_paths with a states reference"):
        ml.TranslationTrackingGoal("g", states_reference=(t, states))
    for goal, error, match in [
        (ml.TranslationTrackingGoal("g", frame_paths=["/bodyset/b2"], states_reference=(t, states)), KeyError,
         "could not find frame '/bodyset/b2'"),
        (ml.TranslationTrackingGoal("g", frame_paths=["/bodyset/b1"], translation_weights={"/bodyset/b0": 2.0},
                                    states_reference=(t, states)), KeyError, "translation_weights"),
        (ml.TranslationTrackingGoal("g", frame_paths=["/bodyset/b1"],
                                    states_reference=(t, {"/jointset/j0/q0/value": t})), KeyError,
         "no column for the coordinate '/jointset/j1/q1/value'"),
        (ml.TranslationTrackingGoal("g", frame_paths=["/bodyset/b0"],
                                    translation_reference=(t, {"/bodyset/b1": np.zeros((t.size, 3))})), KeyError,
         "/bodyset/b0/position_x"),
    ]:
        study = _study()
        study.problem.add_goal(goal)
        with pytest.raises(error, match=match):
            study.transcribe()


def test_saved_and_read_back():
    t, states = _states(5)
    goal = ml.TranslationTrackingGoal("g", 3.0, frame_paths=["/bodyset/b1"], states_reference=(t, states),
                                      translation_weights={"/bodyset/b1": 2.0})
    again = ml.ocp.goal_from_dict(goal.to_dict())
    assert type(again) is ml.TranslationTrackingGoal and again.to_dict() == goal.to_dict()


def test_marker_final_bad_input_is_named():
    from moco_lab.modeling.markers import Marker

    with pytest.raises(ValueError, match="no point_name provided"):
        ml.MarkerFinalGoal("m")
    with pytest.raises(ValueError, match="reference_location must be 3 finite numbers"):
        ml.MarkerFinalGoal("m", point_name="tip", reference_location=(0.0, 1.0))
    with pytest.raises(ValueError, match="cannot be an endpoint constraint"):
        ml.MarkerFinalGoal("m", point_name="tip", mode="endpoint_constraint")
    study = _study()
    study.problem.model.markers["tip"] = Marker("tip", "b1", (0.3, 0.2, 0.0))
    study.problem.add_goal(ml.MarkerFinalGoal("m", point_name="/markerset/tpi"))
    with pytest.raises(KeyError, match="/markerset/tip"):
        study.transcribe()
    goal = ml.MarkerFinalGoal("m", 2.0, point_name="tip", reference_location=(1.0, 2.0, 0.0))
    again = ml.ocp.goal_from_dict(goal.to_dict())
    assert type(again) is ml.MarkerFinalGoal and again.to_dict() == goal.to_dict()
