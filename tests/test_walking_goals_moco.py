"""Moco's contact-impulse tracking, step-length and step-time asymmetry against OpenSim Moco 4.6: both tools evaluate the goals on
the same trajectory, Moco's own solution of example2DWalking's tracking problem (benchmarks/walking_goals_moco.py
stores Moco's values: it starts Moco there with no iteration allowed); and both tools *solve* that tracking problem
with an impulse goal per foot and one goal of each asymmetry kind added (test_solved_with_the_goals_as_moco).

Tolerance. The same problem on the same 50 Hermite–Simpson intervals, the same trajectory: the integrands are the
contact forces the two tools compute alike (to round-off: tests/test_walking_2d.py) minus the same reference splined
alike, summed by the same quadrature: measured 1.5e-12 and 2e-14 relative for the impulses, 0 to 5e-15 for the
step asymmetries (the contact-tracking goal 2e-15; with ``normalize_tracking_error``, on a copy of the data with a
lateral force because both tools refuse to divide by a zero column, 2.7e-15). IPOPT's
initialization moves Moco's iterate off the bounds it sits on (the excitations at their minimum: the effort differs by
1.7 %), not the coordinates and speeds the contact forces depend on. Asserted 1e-9 relative; a wrong axis, sign,
quadrature, scaling by m g or reference moves a value by far more (the two goals' values differ 180-fold).
"""
import json
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.util.data import opensim_file

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
STORED = json.loads((REFERENCE / "walking_goals_moco.json").read_text())


def _add_goals(study: ml.Study, settings: dict) -> None:
    """The impulse, step-length and step-time goals of ``settings`` (the reference's), as moco_lab's classes."""
    for name, spec in settings["goals"].items():
        study.problem.add_goal(ml.ContactImpulseTrackingGoal(
            name, spec["weight"], external_loads=opensim_file("referenceGRF.xml"), impulse_axis=spec["impulse_axis"],
            groups=[ml.ContactGroup(list(elements), force) for elements, force in spec["groups"]]))
    for name, spec in settings["step_length"].items():
        study.problem.add_goal(ml.StepLengthAsymmetryGoal(name, **spec))
    for name, spec in settings["step_time"].items():
        study.problem.add_goal(ml.StepTimeAsymmetryGoal(name, **spec))


def test_goal_values_equal_mocos_on_its_tracking_solution(tmp_path):
    from benchmarks.walking_goals_moco import lateral_grf_files

    study = ml.examples.walking_2d_tracking()
    for name, spec in STORED["settings"]["normalized"].items():
        loads = lateral_grf_files(tmp_path)
        assert loads.name == spec["external_loads"]
        study.problem.add_goal(ml.ContactTrackingGoal(
            name, spec["weight"], external_loads=loads, normalize_tracking_error=True, projection=spec["projection"],
            projection_vector=spec["projection_vector"],
            groups=[ml.ContactGroup(list(elements), force) for elements, force in spec["groups"]]))
    _add_goals(study, STORED["settings"])
    evaluation = study.evaluate(ml.read_trajectory(REFERENCE / STORED["settings"]["trajectory"].split("/")[-1]))
    for name in [*STORED["settings"]["goals"], *STORED["settings"]["step_length"], *STORED["settings"]["step_time"],
                 *STORED["settings"]["normalized"]]:
        assert evaluation.goal_values[name] == pytest.approx(STORED["goals"][name], rel=1e-9), name
    assert evaluation.goal_values["contact"] == pytest.approx(STORED["goals"]["contact"], rel=1e-9)


@pytest.mark.parametrize("key", ["solve", "solve_1e-06"])
def test_solved_with_the_goals_as_moco(key):
    """Moco's tracking problem with both impulse goals, a step-length and a step-time asymmetry goal
    (``STORED[key]``), solved by both tools from Moco's tracking solution, at the example's IPOPT tolerance 1e-4 and
    at 1e-6 (moco_lab with its default limited-memory Hessian, as Moco).

    First Moco's solution scored by moco_lab's problem: every goal as Moco reports it (measured 3e-12 relative;
    asserted 1e-9 as above), feasible (5e-8; Moco's constraint tolerance 1e-4). Then the solves, measured on the
    default, Haswell, SkylakeX and Zen OpenBLAS kernels: at 1e-4 (40 iterations; Moco 96) objectives 6.5e-7 relative
    apart, joint angles at most 0.027 deg RMS apart, activations 1e-4 RMS, on the same grid (final time fixed); at
    1e-6 (63 iterations; Moco 162) 2e-7. The goals moved the solution off the tracking optimum by up to 2.0 deg (left
    hip) and 0.037 in activation RMS. Asserted: objective 1e-4 relative (converged stops of this problem at
    tolerances 1e-4 to 1e-6 lie within 2.5e-5 of one another, measured with both Hessians), angles 0.2 deg and
    activations 4e-3 RMS (ten times below what the goals change, so a goal with the wrong sign, axis or scale is
    caught)."""
    reference = STORED[key]
    tol = reference["settings"]["optim_convergence_tolerance"]
    assert reference["success"] and tol == reference["settings"]["optim_constraint_tolerance"]
    study = ml.examples.walking_2d_tracking(tol=tol)
    _add_goals(study, reference["settings"])
    moco = ml.read_trajectory(REFERENCE / reference["settings"]["solution"].split("/")[-1])
    evaluation = study.evaluate(moco)
    for name, value in reference["goals"].items():
        assert evaluation.goal_values[name] == pytest.approx(value, rel=1e-9), name
    assert evaluation.constraint_violation < 1e-6, evaluation.worst_constraint
    study.solver.guess = ml.read_trajectory(REFERENCE / reference["settings"]["guess"].split("/")[-1])
    ours = study.solve()
    assert ours.success, ours.message
    print(f"{key}: objective {ours.objective:.10g} (Moco {reference['objective']:.10g}), {ours.nit} iterations "
          f"(Moco {reference['iterations']})")
    assert ours.objective == pytest.approx(reference["objective"], rel=1e-4)
    np.testing.assert_allclose(ours.time, moco.time, atol=1e-12)
    for path, values in moco.states.items():
        rms = np.sqrt(np.mean((ours.states[path] - values) ** 2))
        if path.endswith("/value") and "pelvis_t" not in path:
            assert np.degrees(rms) < 0.2, path
        elif path.endswith("/activation"):
            assert rms < 4e-3, path


def test_axis_is_required_and_the_goal_round_trips():
    """Moco's impulse_axis must be set (its default −1 is refused); a goal saved to a study file reads back."""
    reference = ([0.0, 1.0], {"fx": [0.0, 0.0], "fy": [700.0, 700.0], "fz": [0.0, 0.0]})
    groups = [ml.ContactGroup(["contactHeel_r"], ("fx", "fy", "fz"))]
    for axis in (-1, 3, True, "y"):
        with pytest.raises(ValueError, match="impulse_axis must be 0, 1 or 2"):
            ml.ContactImpulseTrackingGoal("impulse", reference=reference, groups=groups, impulse_axis=axis)
    with pytest.raises(ValueError, match="cannot be an endpoint constraint"):
        ml.ContactImpulseTrackingGoal("impulse", reference=reference, groups=groups, impulse_axis=1,
                                      mode="endpoint_constraint")
    saved = ml.ContactImpulseTrackingGoal("impulse", 2.0, reference=reference, groups=groups, impulse_axis=1).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.ContactImpulseTrackingGoal and again.to_dict() == saved


def test_step_length_asymmetry_names_bad_input():
    """Moco's refusals, by name: the default stride length −1, a target outside [-1, 1], a direction it does not
    know, a missing frame; the saved form reads back."""
    feet = {"left_foot_frame": "/bodyset/calcn_l", "right_foot_frame": "/bodyset/calcn_r"}
    for options, match in [({}, "stride_length must be > 0"), ({"stride_length": 1, "target_asymmetry": 1.5},
                                                               "target_asymmetry must be in \\[-1, 1\\]"),
                           ({"stride_length": 1, "walking_direction": "forward"}, "walking_direction must be one of"),
                           ({"stride_length": 1, "asymmetry_smoothing": 0}, "asymmetry_smoothing must be > 0")]:
        with pytest.raises(ValueError, match=match):
            ml.StepLengthAsymmetryGoal("steps", **feet, **options)
    with pytest.raises(ValueError, match="left_foot_frame must name a frame"):
        ml.StepLengthAsymmetryGoal("steps", right_foot_frame="/bodyset/calcn_r", stride_length=1)
    saved = ml.StepLengthAsymmetryGoal("steps", 2.0, **feet, stride_length=1.1, target_asymmetry=-0.1).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.StepLengthAsymmetryGoal and again.to_dict() == saved


def test_step_time_asymmetry_names_bad_input():
    """A group without its foot-position element, an element in both feet's groups, a non-positive threshold; the
    saved form reads back."""
    left, right = (["contactHeel_l", "contactFront_l"], "contactHeel_l"), (["contactHeel_r"], "contactHeel_r")
    with pytest.raises(ValueError, match="'foot_position_contact_force_path' to match one of its"):
        ml.StepTimeAsymmetryGoal("t", left_contact_group=(["contactHeel_l"], "contactFront_l"), right_contact_group=right)
    with pytest.raises(ValueError, match="'contactHeel_l' is in both feet's groups"):
        ml.StepTimeAsymmetryGoal("t", left_contact_group=left, right_contact_group=(["contactHeel_l"], "contactHeel_l"))
    with pytest.raises(ValueError, match="contact_force_threshold must be > 0"):
        ml.StepTimeAsymmetryGoal("t", left_contact_group=left, right_contact_group=right, contact_force_threshold=0)
    saved = ml.StepTimeAsymmetryGoal("t", 2.0, left_contact_group=left, right_contact_group=right).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.StepTimeAsymmetryGoal and again.to_dict() == saved
