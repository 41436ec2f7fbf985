"""Moco's translation, angular-velocity and orientation tracking (``moco_lab.ocp.frame_goals``): the two kinds of reference give
the same goal, and bad input is named. Agreement with OpenSim Moco 4.6 is in tests/test_goals_moco.py, second derivatives in
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


def _assert_same_solution(first, second) -> None:
    """Each goal added to the swing-up and solved: the same objective (1e-8: the solves' tolerance), a goal that
    matters (its value above 1e-3 of the objective) and the same elbow trajectory (1e-7 rad)."""
    a, b = (_solve_with(goal) for goal in (first, second))
    assert a.success and b.success
    assert a.objective == pytest.approx(b.objective, rel=1e-8)
    assert a.goal_values[first.name] > 1e-3 * a.objective
    np.testing.assert_allclose(a.states["/jointset/j1/q1/value"], b.states["/jointset/j1/q1/value"], atol=1e-7)


def _solve_with(goal) -> ml.Solution:
    study = _study()
    study.problem.add_goal(goal)
    return study.solve()


def test_states_and_translation_references_agree():
    """A states reference is the translation table of the frames placed at its coordinates: the same goal, so the
    same solution. The positions are computed here from the double pendulum's geometry (two 1 m links; each body's
    origin at its link's end), not by moco_lab's kinematics; tolerance 1e-8 (the solves' tolerance)."""
    t, states = _states()
    q0, q1 = states["/jointset/j0/q0/value"], states["/jointset/j1/q1/value"]
    b0 = np.column_stack([np.cos(q0), np.sin(q0), 0 * t])
    b1 = b0 + np.column_stack([np.cos(q0 + q1), np.sin(q0 + q1), 0 * t])
    _assert_same_solution(
        ml.TranslationTrackingGoal("frames", 500.0, frame_paths=["/bodyset/b0", "/bodyset/b1"],
                                   states_reference=(t, states)),
        ml.TranslationTrackingGoal("frames", 500.0, translation_reference=(t, {"/bodyset/b0": b0, "/bodyset/b1": b1})))


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


def test_angular_velocity_references_agree_and_bad_input_is_named():
    """A states reference (coordinates and speeds) is the table of the frames' angular velocities at its rows: the
    inner body's q̇0 about z, the outer one's q̇0 + q̇1 (computed here from the planar geometry, not by moco_lab's
    kinematics): the same goal, so the same solution (tolerance 1e-8: the solves' tolerance). A states reference
    without the speeds is refused by name (Moco needs them too)."""
    t, states = _states()
    u0, u1 = np.gradient(states["/jointset/j0/q0/value"], t), np.gradient(states["/jointset/j1/q1/value"], t)
    states = {**states, "/jointset/j0/q0/speed": u0, "/jointset/j1/q1/speed": u1}
    zero = 0 * t
    _assert_same_solution(
        ml.AngularVelocityTrackingGoal("spin", 20.0, frame_paths=["/bodyset/b0", "/bodyset/b1"],
                                       states_reference=(t, states), angular_velocity_weights={"/bodyset/b0": 3.0}),
        ml.AngularVelocityTrackingGoal("spin", 20.0, angular_velocity_reference=(t, {
            "/bodyset/b0": np.column_stack([zero, zero, u0]), "/bodyset/b1": np.column_stack([zero, zero, u0 + u1])}),
            angular_velocity_weights={"/bodyset/b0": 3.0}))
    study = _study()
    study.problem.add_goal(ml.AngularVelocityTrackingGoal("g", frame_paths=["/bodyset/b1"],
                                                          states_reference=_states()))
    with pytest.raises(KeyError, match="no column for the speed '/jointset/j0/q0/speed' \\(and 1 more\\)"):
        study.transcribe()
    saved = ml.AngularVelocityTrackingGoal("g", 2.0, frame_paths=["/bodyset/b1"], states_reference=(t, states),
                                           angular_velocity_weights={"/bodyset/b1": 2.0}).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.AngularVelocityTrackingGoal and again.to_dict() == saved


def test_acceleration_tracking_needs_the_accelerations_and_names_bad_input():
    """Explicit dynamics have no accelerations as variables: refused by name (as joint reactions are); no reference,
    a flag that is not a bool, and the saved form round-trips."""
    t = np.linspace(0.0, 1.0, 5)
    reference = (t, {"/bodyset/b1": np.zeros((t.size, 3))})
    study = _study()
    study.problem.add_goal(ml.AccelerationTrackingGoal("acc", acceleration_reference=reference))
    with pytest.raises(ValueError, match="needs the accelerations.*multibody_dynamics_mode='implicit'"):
        study.transcribe()
    with pytest.raises(ValueError, match="give the acceleration_reference"):
        ml.AccelerationTrackingGoal("acc", frame_paths=["/bodyset/b1"])
    with pytest.raises(TypeError, match="gravity_offset must be True or False"):
        ml.AccelerationTrackingGoal("acc", acceleration_reference=reference, gravity_offset="yes")
    saved = ml.AccelerationTrackingGoal("acc", 2.0, acceleration_reference=reference, gravity_offset=True).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.AccelerationTrackingGoal and again.to_dict() == saved and again.gravity_offset


def _about_z(angle: np.ndarray) -> np.ndarray:
    R = np.zeros((angle.size, 3, 3))
    R[:, 0, 0] = R[:, 1, 1] = np.cos(angle)
    R[:, 1, 0], R[:, 0, 1], R[:, 2, 2] = np.sin(angle), -np.sin(angle), 1.0
    return R


def test_orientation_references_agree_and_bad_input_is_named():
    """A states reference is the table of the frames' orientations at its rows: the inner body turned by q0 about z,
    the outer one by q0 + q1 (from the planar geometry, not moco_lab's kinematics), given as rotation matrices or as
    quaternions (w, x, y, z): the same goal, so the same solution (tolerance 1e-8: the solves' tolerance)."""
    t, states = _states()
    q0, q1 = states["/jointset/j0/q0/value"], states["/jointset/j1/q1/value"]
    quaternion = np.column_stack([np.cos((q0 + q1) / 2), 0 * t, 0 * t, np.sin((q0 + q1) / 2)])
    _assert_same_solution(
        ml.OrientationTrackingGoal("attitude", 30.0, frame_paths=["/bodyset/b0", "/bodyset/b1"],
                                   states_reference=(t, states), rotation_weights={"/bodyset/b1": 2.0}),
        ml.OrientationTrackingGoal("attitude", 30.0, rotation_reference=(t, {"/bodyset/b0": _about_z(q0),
                                                                             "/bodyset/b1": quaternion}),
                                   rotation_weights={"/bodyset/b1": 2.0}))
    with pytest.raises(ValueError, match="must be \\(n, 3, 3\\) rotation matrices or \\(n, 4\\) quaternions"):
        ml.OrientationTrackingGoal("g", rotation_reference=(t, {"/bodyset/b0": np.zeros((t.size, 3))}))
    study = _study()
    study.problem.add_goal(ml.OrientationTrackingGoal("g", frame_paths=["/bodyset/b0"],
                                                      rotation_reference=(t, {"/bodyset/b1": quaternion})))
    with pytest.raises(KeyError, match="/bodyset/b0/quaternion_e0"):
        study.transcribe()
    saved = ml.OrientationTrackingGoal("g", 2.0, rotation_reference=(t, {"/bodyset/b1": quaternion})).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.OrientationTrackingGoal and again.to_dict() == saved


def test_rotation_angle_squared_is_smooth_where_the_angle_vanishes():
    """The goal's acos(c)² switches to a series in 1 − c below 0.01: both sides of the switch equal the closed forms
    (to 1e-13, 1e-11 for f'' whose closed form cancels there), and the
    two derivatives equal central differences (step 1e-6: error ~1e-10) on both sides and at c = 1, where the closed
    form's derivatives are 0/0 (the limits: f' = −2, f'' = 2/3)."""
    from moco_lab.ocp.frame_goals import _angle_squared, rotation_to_quaternion

    c = np.array([0.99 - 1e-12, 0.99 + 1e-12])  # the closed form's side, the series' side
    f, f1, f2 = _angle_squared(c)
    g, one = np.arccos(c), 1 - c * c  # the closed forms, accurate to ~1e-14 here
    np.testing.assert_allclose(f, g ** 2, rtol=1e-13)
    np.testing.assert_allclose(f1, -2 * g / np.sqrt(one), rtol=1e-13)
    np.testing.assert_allclose(f2, 2 / one - 2 * g * c / one ** 1.5, rtol=1e-11)
    points = np.array([-0.9, 0.3, 0.95, 0.991, 0.999, 1.0 - 1e-7, 1.0])
    f, f1, f2 = _angle_squared(points)
    np.testing.assert_allclose(f, np.arccos(points) ** 2, rtol=1e-12, atol=1e-15)
    h = 1e-6
    fp, f1p, _ = _angle_squared(points + h)
    fm, f1m, _ = _angle_squared(points - h)
    np.testing.assert_allclose(f1, (fp - fm) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(f2, (f1p - f1m) / (2 * h), rtol=1e-6)
    assert f1[-1] == pytest.approx(-2.0) and f2[-1] == pytest.approx(2 / 3)
    # quaternions from rotation matrices: Shepperd's branches, w >= 0 (Simbody's representative)
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    R = np.stack([np.column_stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)]),
                  np.column_stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)]),
                  np.column_stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])], axis=1)
    np.testing.assert_allclose(rotation_to_quaternion(R), q * np.sign(q[:, :1]), atol=1e-12)


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
