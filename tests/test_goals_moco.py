"""Moco's ``MocoJointReactionGoal``, ``MocoControlTrackingGoal``, ``MocoControlBoundConstraint``,
``MocoStateBoundConstraint``, ``MocoTranslationTrackingGoal``, ``MocoExpressionBasedParameterGoal``,
``MocoMarkerFinalGoal``, the output goals and the output and frame-distance path constraints against OpenSim Moco 4.6
on small problems (the double pendulum's swing-up, Hermite–Simpson, N = 30, tolerances 1e-8): Moco's solutions stored
with their provenance by ``benchmarks/goals_moco.py`` (``benchmarks/reference/goals_moco.json``)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from moco_compare import assert_same_objective, assert_same_trajectories

import moco_lab as ml
from moco_lab.modeling import functions
from moco_lab.modeling.markers import Marker

STORED = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "reference" / "goals_moco.json")
                    .read_text())
SETTINGS = STORED["settings"]


def _study(mode: str, effort_weight: float) -> ml.Study:
    study = ml.examples.double_pendulum_study("hermite-simpson", mode, SETTINGS["num_mesh_intervals"],
                                              tol=SETTINGS["optim_convergence_tolerance"])
    study.problem.get_goal("effort").weight = effort_weight
    return study


def _function(spec: list | None) -> functions.OpenSimFunction | None:
    """The stored ``[type, numbers...]`` as moco_lab's OpenSim function."""
    if spec is None:
        return None
    kind, *numbers = spec
    if kind == "PolynomialFunction":
        return functions.PolynomialFunction(numbers)
    return getattr(functions, kind)(*numbers)


def _solve(name: str) -> tuple[dict, ml.Solution, ml.Study]:
    s = SETTINGS[name]
    study = _study(s["mode"], s["effort_weight"])
    if name == "joint_reaction":
        study.problem.add_goal(ml.JointReactionGoal("reaction", s["weight"], joint_path=s["joint_path"],
                                                    loads_frame=s["loads_frame"],
                                                    reaction_measures=s["reaction_measures"]))
    elif name == "marker_final":
        study.problem.model.markers[s["marker"]] = Marker(s["marker"], s["body"], tuple(s["location"]))
        study.problem.set_state_info("/jointset/j1/q1/value", (-10, 10), 0, None)
        study.problem.add_goal(ml.MarkerFinalGoal("marker_final", s["weight"], point_name=f"/markerset/{s['marker']}",
                                                  reference_location=s["reference_location"]))
    elif name in ("parameter_expression", "body_mass"):
        for variable, (component, prop) in s["parameters"].items():
            study.problem.add_parameter(variable, f"{component}/{prop}", tuple(s["bounds"]))
        study.problem.add_goal(ml.ExpressionBasedParameterGoal("expression", s["weight"], s["expression"],
                                                               parameters={v: v for v in s["parameters"]}))
    elif name == "translation_tracking":
        reference = (np.array(s["reference_time"]), {k: np.array(v) for k, v in s["reference"].items()})
        study.problem.add_goal(ml.TranslationTrackingGoal("translation", s["weight"], frame_paths=s["frame_paths"],
                                                          states_reference=reference,
                                                          translation_weights=s["translation_weights"]))
    elif name == "angular_velocity_tracking":
        reference = (np.array(s["reference_time"]), {k: np.array(v) for k, v in s["reference"].items()})
        study.problem.add_goal(ml.AngularVelocityTrackingGoal("angular_velocity", s["weight"],
                                                              frame_paths=s["frame_paths"], states_reference=reference,
                                                              angular_velocity_weights=s["angular_velocity_weights"]))
    elif name == "orientation_tracking":
        reference = (np.array(s["reference_time"]), {k: np.array(v) for k, v in s["reference"].items()})
        study.problem.add_goal(ml.OrientationTrackingGoal("orientation", s["weight"], frame_paths=s["frame_paths"],
                                                          states_reference=reference,
                                                          rotation_weights=s["rotation_weights"]))
    elif name.startswith("acceleration_tracking"):
        reference = (np.array(s["reference_time"]), {k: np.array(v) for k, v in s["reference"].items()})
        study.problem.add_goal(ml.AccelerationTrackingGoal(
            name, s["weight"], frame_paths=s["frame_paths"], acceleration_reference=reference,
            acceleration_weights=s["acceleration_weights"], gravity_offset=s["gravity_offset"],
            express_accelerations_in_tracking_frames=s["express_accelerations_in_tracking_frames"]))
    elif name == "generalized_force_tracking":
        reference = (np.array(s["reference_time"]), {k: np.array(v) for k, v in s["reference"].items()})
        study.problem.add_goal(ml.GeneralizedForceTrackingGoal(
            "generalized_forces", s["weight"], reference=reference, force_paths=s["force_paths"],
            generalized_force_weights=s["generalized_force_weights"],
            normalize_tracking_error=s["normalize_tracking_error"]))
    elif name == "control_tracking":
        reference = (np.array(s["reference_time"]), {k: np.array(v) for k, v in s["reference"].items()})
        study.problem.add_goal(ml.ControlTrackingGoal("tracking", s["tracking_weight"], reference=reference))
    elif s.get("type", "").endswith("Goal"):
        for path in ("/jointset/j0/q0/speed", "/jointset/j1/q1/speed"):  # free where an endpoint goal reads them
            study.problem.set_state_info(path, (-50, 50), None if "initial" in s.get("free", ()) else 0,
                                         None if "final" in s.get("free", ()) else 0)
        options = {k: s[k] for k in ("output_path", "second_output_path", "operation", "exponent", "output_index",
                                     "extremum_type", "smoothing_factor") if k in s}
        if "goal_mode" in s:
            options["mode"] = s["goal_mode"]
        if "tracking_function" in s:
            options["tracking_function"] = _function(s["tracking_function"])
        study.problem.add_goal(getattr(ml, s["type"])(name, s["weight"], **options))
    elif s.get("type") == "FrameDistanceConstraint":
        study.problem.add_path_constraint(ml.FrameDistanceConstraint(name, s["pairs"], projection=s["projection"],
                                                                     projection_vector=s["projection_vector"]))
    elif s.get("type") == "OutputConstraint":
        study.problem.add_path_constraint(ml.OutputConstraint(name, s["output_path"], exponent=s["exponent"],
                                                              output_index=s["output_index"], bounds=s["bounds"]))
    elif s.get("type") == "OutputBoundConstraint":
        study.problem.add_path_constraint(ml.OutputBoundConstraint(
            name, s["output_path"], exponent=s["exponent"], output_index=s["output_index"],
            lower_bound=_function(s["lower"]), upper_bound=_function(s["upper"]),
            equality_with_lower=s["equality_with_lower"]))
    else:
        kind = ml.ControlBoundConstraint if s["kind"] == "control" else ml.StateBoundConstraint
        study.problem.add_path_constraint(kind(name, s["paths"], lower_bound=_function(s["lower"]),
                                               upper_bound=_function(s["upper"]),
                                               equality_with_lower=s["equality_with_lower"]))
    moco = STORED["results"][name]
    moco = {**moco, "time": np.array(moco["time"])}
    return moco, study.solve(), study


def test_reference_has_its_provenance():
    env = STORED["environment"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert all(r["success"] for r in STORED["results"].values())
    assert SETTINGS["num_mesh_intervals"] == 30 and SETTINGS["optim_convergence_tolerance"] == 1e-8


@pytest.mark.parametrize("name", ["joint_reaction", "control_tracking", "translation_tracking",
                                  "angular_velocity_tracking", "orientation_tracking", "acceleration_tracking",
                                  "acceleration_tracking_imu", "generalized_force_tracking", "parameter_expression",
                                  "body_mass", "marker_final", "control_bound", "state_bound",
                                  "control_equality", "output_com_height", "output_com_speed", "output_composite",
                                  "output_tracking", "output_extremum", "output_final", "output_initial",
                                  "output_periodic", "output_periodic_norm", "output_constraint",
                                  "output_bound_constraint", "frame_distance", "frame_distance_vector"])
def test_same_optimum_as_moco(name):
    """Same problem, same transcription, both solved to 1e-8: the objectives agree to 1e-8 relative (the solvers'
    tolerance; measured 0 to 1.3e-15: the same optima), each goal's value to Moco's printed 6 digits (its console
    breakdown is the only record of them), the states and controls to 1e-6 of their range at every grid point
    (measured 1e-9 to 2e-8; 1.1e-7 for translation tracking, whose reference positions each tool computes and
    splines itself; 6.5e-8 with the body masses as parameters, whose derivatives Moco takes by finite differences).
    The frame, acceleration and generalized-force tracking terms are 4–10 % of their objectives, the mass
    expression 25 % (had the inertia followed the mass, the effort would differ by far more). A reaction or a
    tracking term computed otherwise than Moco does would move the objective by far more (the reaction term is
    6e-4 of it, the tracking terms 99 % and 16 %); so would a bound enforced at other times or points than Moco's
    mesh points (the bounds raise the effort by 1.4 %, 2.7 % and 0.4 %), and an endpoint output goal reading another
    end or another combination (the endpoint goals' terms are 0.4–74 % of their objectives; with both ends free the
    swing-up needs no effort at all, the periodicity constraint makes it 68.2), or an output or frame-distance
    constraint enforced elsewhere (each binds: effort +0.6 to +1.4 %)."""
    moco, lab, study = _solve(name)
    assert_same_objective(moco, lab, 1e-8)
    for goal, value in moco["goals"].items():
        assert lab.goal_values[goal] == pytest.approx(value, rel=1e-5), goal  # Moco prints 6 digits
    constraints = {g.name for g in study.problem.goals if g.mode == "endpoint_constraint"}  # Moco lists costs only
    assert set(moco["goals"]) == set(lab.goal_values) - constraints
    np.testing.assert_allclose(np.asarray(lab.time), moco["time"], atol=1e-12)
    for parameter, value in moco["parameters"].items():  # optimized parameters: to 1e-6 relative, as trajectories
        assert lab.parameters[parameter] == pytest.approx(value, rel=1e-6), parameter
    assert_same_trajectories([("states", {k: np.array(v) for k, v in moco["states"].items()}, lab.states),
                              ("controls", {k: np.array(v) for k, v in moco["controls"].items()}, lab.controls)],
                             1e-6)
