"""Moco's generalized-force tracking (``moco_lab.ocp.force_goals``): the closed form on a pendulum, OpenSim's labels,
bad input named. Agreement with OpenSim Moco 4.6 is in tests/test_goals_moco.py, exact first and second derivatives
in tests/test_transcription_hessians.py."""
import numpy as np
import pytest
from test_joint_reaction import I_ZZ, L0, G, M, pendulum

import moco_lab as ml


def test_goal_value_is_the_pendulums_inverse_dynamics():
    """θ(t) = 0.5 sin 2t prescribed; with no force elements listed the tracked generalized force is the joint torque
    the motion needs, τ = I_O θ̈ + m g L cos θ, so against a reference r(t) = 0.3 t the goal is ∫ (τ − r)² dt
    (Hermite–Simpson quadrature on 0.02 s intervals of a quintic spline through 201 samples: measured 4e-10
    relative, asserted 1e-8; a missing gravity or inertia term changes it by far more). With the pendulum's actuator
    listed its torque counts as supplied, and in the Inverse it supplies all of τ (the dynamics hold), so nothing is
    left: the goal is ∫ r² dt = 0.03 (to 1e-9)."""
    t = np.linspace(0, 1, 201)
    motion = (t, {"/jointset/pin/theta/value": 0.5 * np.sin(2 * t)})
    reference = (t, {"theta_moment": 0.3 * t})
    inverse = ml.Inverse(pendulum(), motion, mesh_interval=0.02, spline_boundary="not-a-knot",
                         convergence_tolerance=1e-8, constraint_tolerance=1e-10)
    inverse.add_goal(ml.GeneralizedForceTrackingGoal("tau", 1.0, reference=reference))
    result = inverse.solve()
    assert result.success
    tt = np.linspace(0, 1, 200001)
    th, thdd = 0.5 * np.sin(2 * tt), -2 * np.sin(2 * tt)
    tau = (I_ZZ + M * L0 ** 2) * thdd + M * G * L0 * np.cos(th)
    assert result.solution.goal_values["tau"] == pytest.approx(np.trapezoid((tau - 0.3 * tt) ** 2, tt), rel=1e-8)

    inverse = ml.Inverse(pendulum(), motion, mesh_interval=0.02, spline_boundary="not-a-knot",
                         convergence_tolerance=1e-8, constraint_tolerance=1e-10)
    inverse.add_goal(ml.GeneralizedForceTrackingGoal("tau", 1.0, reference=reference, force_paths=["/forceset/tau"]))
    result = inverse.solve()
    assert result.success and result.solution.goal_values["tau"] == pytest.approx(0.03, rel=1e-9)


def test_labels_follow_opensim_and_bad_input_is_named():
    """OpenSim's inverse-dynamics labels: ``_moment`` for rotational coordinates, ``_force`` for translational ones;
    an unknown label, weight or force path is refused by name; explicit dynamics (no accelerations) too."""
    from test_transcription_jacobians import leg_model

    model = leg_model(contact=False)
    goal = ml.GeneralizedForceTrackingGoal("g", reference=(np.array([0.0, 1.0]), {"rz_moment": np.zeros(2)}))
    assert goal.labels(model) == {"px_force": 0, "py_force": 1, "rz_moment": 2, "knee_angle_moment": 3}
    t = np.linspace(0.0, 1.0, 5)

    def study(**options):
        s = ml.examples.double_pendulum_study("hermite-simpson", "implicit", 5)
        s.problem.add_goal(ml.GeneralizedForceTrackingGoal("g", reference=(t, options.pop("columns", {
            "q0_moment": t})), **options))
        return s

    for options, error, match in [
        ({"columns": {"q0_torque": t}}, KeyError, "'q0_torque' but this is not a recognized generalized force"),
        ({"generalized_force_weights": {"q2_moment": 1.0}}, KeyError, "weight provided with name 'q2_moment'"),
        ({"force_paths": ["/tau0", "/tau.*"]}, ValueError, "force at path '/tau0' was specified multiple times"),
        ({"force_paths": ["/nothere"]}, ValueError, None),
    ]:
        if match is None:  # a pattern that matches nothing lists nothing (Moco does the same)
            study(**options).transcribe()
            continue
        with pytest.raises(error, match=match):
            study(**options).transcribe()
    assert study(columns={"q0_torque": t, "q0_moment": t}, allow_unused_references=True).transcribe()
    explicit = ml.examples.double_pendulum_study("hermite-simpson", "explicit", 5)
    explicit.problem.add_goal(ml.GeneralizedForceTrackingGoal("g", reference=(t, {"q0_moment": t})))
    with pytest.raises(ValueError, match="need the accelerations.*multibody_dynamics_mode='implicit'"):
        explicit.transcribe()
    with pytest.raises(ValueError, match="give the reference"):
        ml.GeneralizedForceTrackingGoal("g")
    with pytest.raises(ValueError, match="generalized_force_weights\\['a'\\] must be a finite number >= 0"):
        ml.GeneralizedForceTrackingGoal("g", reference=(t, {"q0_moment": t}), generalized_force_weights={"a": -1})
    with pytest.raises(ValueError, match="not a regular expression"):
        ml.GeneralizedForceTrackingGoal("g", reference=(t, {"q0_moment": t}), force_paths=["(unclosed"])
    saved = ml.GeneralizedForceTrackingGoal("g", 2.0, reference=(t, {"q0_moment": t}), force_paths=["/tau1"],
                                            normalize_tracking_error=True).to_dict()
    again = ml.ocp.goal_from_dict(saved)
    assert type(again) is ml.GeneralizedForceTrackingGoal and again.to_dict() == saved
