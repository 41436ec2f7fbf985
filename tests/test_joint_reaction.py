"""Moco's JointReactionGoal and the joint reaction it minimizes (the 3-D models issue's knee load): closed forms on
a pendulum, the refusals. Agreement with OpenSim's ``Joint::calcReactionOn{Parent,Child}ExpressedInGround``:
tests/test_osim_opensim.py (2D_gait.osim: muscles on geometry paths, contact) and tests/test_osim3d.py (the 3-D
model's walker knee, chains, patella coupler)."""
import numpy as np
import pytest

import moco_lab as ml

M, L0, I_ZZ, G = 2.0, 0.3, 0.1, 9.81  # mass, centre of mass from the pivot, inertia about the COM (z), gravity


def pendulum():
    b = ml.ModelBuilder("pendulum", gravity=(0, -G, 0))
    b.add_body("arm", M, com=(L0, 0, 0), inertia=(0.05, 0.08, I_ZZ))
    b.add_pin_joint("pin", "ground", "arm", axis=(0, 0, 1), coordinate="theta", parent_offset=(0, 1, 0),
                    range=(-3, 3))
    model = b.build()
    model.add_force_element(ml.CoordinateActuator("/forceset/tau", "theta", 10.0))
    return model


def test_pendulum_reaction_goal_values_are_the_closed_form():
    """θ(t) = 0.5 sin 2t prescribed: the pivot's load on the arm is F = m a_com − m g (ground), its moment about the
    pivot the joint torque I_O θ̈ + m g L cos θ; on the parent, −F and −τ. Each goal is (1/(m g)) ∫ Σ w r² dt.
    Hermite–Simpson quadrature on 0.02 s intervals of a quintic spline through 201 samples: measured 2e-10 and
    6e-10 relative to the closed forms, asserted 1e-8 (a wrong frame, sign or weight changes them by > 1e-2)."""
    t = np.linspace(0, 1, 201)
    inverse = ml.Inverse(pendulum(), (t, {"/jointset/pin/theta/value": 0.5 * np.sin(2 * t)}), mesh_interval=0.02,
                         spline_boundary="not-a-knot", convergence_tolerance=1e-8, constraint_tolerance=1e-10)
    inverse.add_goal(ml.JointReactionGoal("fy", 1.0, joint_path="/jointset/pin", loads_frame="child",
                                          expressed_in_frame_path="/ground", reaction_measures=["force-y"]))
    inverse.add_goal(ml.JointReactionGoal("mix", 1.0, joint_path="pin", reaction_measures=["moment-z", "force-x"],
                                          reaction_weights={"moment-z": 2.0, "force-x": 0.5}))
    inverse.add_goal(ml.JointReactionGoal("child_frame", 1.0, joint_path="pin", loads_frame="child",
                                          reaction_measures=["force-x"]))
    result = inverse.solve()
    assert result.success
    tt = np.linspace(0, 1, 200001)
    th, thd, thdd = 0.5 * np.sin(2 * tt), np.cos(2 * tt), -2 * np.sin(2 * tt)
    acx = -L0 * (thdd * np.sin(th) + thd ** 2 * np.cos(th))
    acy = L0 * (thdd * np.cos(th) - thd ** 2 * np.sin(th))
    Fx, Fy = M * acx, M * acy + M * G
    tau = (I_ZZ + M * L0 ** 2) * thdd + M * G * L0 * np.cos(th)
    F_arm_x = np.cos(th) * Fx + np.sin(th) * Fy  # the force along the arm: in the child's (rotated) frame
    mg = M * G
    expected = {"fy": np.trapezoid(Fy ** 2, tt) / mg, "mix": np.trapezoid(2 * tau ** 2 + 0.5 * Fx ** 2, tt) / mg,
                "child_frame": np.trapezoid(F_arm_x ** 2, tt) / mg}
    for name, value in expected.items():
        assert result.solution.goal_values[name] == pytest.approx(value, rel=1e-8), name


def test_explicit_dynamics_and_bad_input_are_refused_by_name():
    study = ml.Study()
    p = study.problem
    p.set_model(pendulum())
    p.set_time_bounds(0, 1)
    p.add_goal(ml.JointReactionGoal("load", 1.0, joint_path="/jointset/pin"))
    study.solver.multibody_dynamics_mode = "explicit"
    study.solver.num_mesh_intervals = 4
    with pytest.raises(ValueError, match="needs the accelerations.*multibody_dynamics_mode='implicit'"):
        study.transcribe()
    study.solver.multibody_dynamics_mode = "implicit"
    assert study.transcribe() is not None
    p.goals[0].joint_path = "/jointset/pn"
    with pytest.raises(KeyError, match="pin"):
        study.transcribe()
    p.goals[0].joint_path, p.goals[0].expressed_in_frame_path = "pin", "/bodyset/armm"
    with pytest.raises(KeyError, match="/bodyset/arm"):
        study.transcribe()
    with pytest.raises(ValueError, match="reaction measure 'force-w' not recognized"):
        ml.JointReactionGoal(joint_path="pin", reaction_measures=["force-w"])
    with pytest.raises(TypeError, match="list of measures"):
        ml.JointReactionGoal(joint_path="pin", reaction_measures="force-x")
    with pytest.raises(ValueError, match="loads_frame must be 'parent' or 'child'"):
        ml.JointReactionGoal(joint_path="pin", loads_frame="tibia")
    with pytest.raises(ValueError, match="joint_path is empty"):
        ml.JointReactionGoal()


def test_a_body_level_constraint_is_refused():
    """A constraint that acts on bodies (the bead on the parabola) would have to be part of the reaction: refused
    by name rather than left out silently."""
    study = ml.examples.parabola_study("move")
    study.problem.add_goal(ml.JointReactionGoal("load", 1.0, joint_path=study.problem.model.coordinates[0].joint_path))
    study.solver.multibody_dynamics_mode = "implicit"
    with pytest.raises(NotImplementedError, match="PointOnCurveConstraint"):
        study.transcribe()


def test_goal_round_trips_through_a_study_file(tmp_path):
    goal = ml.JointReactionGoal("knee", 2.0, joint_path="/jointset/walker_knee_r", loads_frame="child",
                                expressed_in_frame_path="/bodyset/tibia_r", reaction_measures=["force-y"],
                                reaction_weights={"force-y": 3.0})
    again = ml.ocp.goals.goal_from_dict(goal.to_dict())
    assert again.to_dict() == goal.to_dict() and isinstance(again, ml.JointReactionGoal)


def test_joint_reactions_along_a_solution():
    """``ml.analysis.joint_reactions`` on the pendulum's inverse solution (its prescribed accelerations): the
    closed-form force on the arm and the joint torque at its times (the spline's end effect aside: 1e-6)."""
    t = np.linspace(0, 1, 201)
    model = pendulum()
    sol = ml.Inverse(model, (t, {"/jointset/pin/theta/value": 0.5 * np.sin(2 * t)}), mesh_interval=0.02,
                     spline_boundary="not-a-knot").solve().solution
    table = ml.analysis.joint_reactions(model, sol, "pin", "child", "/ground")
    s = np.asarray(sol.time)
    th, thd, thdd = 0.5 * np.sin(2 * s), np.cos(2 * s), -2 * np.sin(2 * s)
    Fy = M * L0 * (thdd * np.cos(th) - thd ** 2 * np.sin(th)) + M * G
    tau = (I_ZZ + M * L0 ** 2) * thdd + M * G * L0 * np.cos(th)
    prefix = "/jointset/pin/reaction_on_child_in_/ground"
    assert np.allclose(table[f"{prefix}_force_y"], Fy, atol=1e-6)
    assert np.allclose(table[f"{prefix}_moment_z"], tau, atol=1e-6)
    assert table.units[f"{prefix}_moment_z"] == "N·m" and table.units[f"{prefix}_force_x"] == "N"


def test_joint_reactions_reuse_the_solving_transcriptions_equations():
    """An Inverse solved on the program its ``transcribe()`` returned, and ``joint_reactions`` given that
    program's ``kernel`` (the model's equations, not derived again): the same solution and the same table, bit for
    bit, as solving and analysing from scratch; a kernel or a program of another model is refused by name."""
    t = np.linspace(0, 1, 201)
    model = pendulum()
    inverse = ml.Inverse(model, (t, {"/jointset/pin/theta/value": 0.5 * np.sin(2 * t)}), mesh_interval=0.02,
                         spline_boundary="not-a-knot")
    fresh = inverse.solve().solution
    tr = inverse.transcribe()
    reused = inverse.solve(transcription=tr).solution
    assert reused.nit == fresh.nit and np.array_equal(reused.controls["/forceset/tau"], fresh.controls["/forceset/tau"])
    a = ml.analysis.joint_reactions(model, fresh, "pin", "child", "/ground")
    b = ml.analysis.joint_reactions(model, reused, "pin", "child", "/ground", kernel=tr.kernel)
    assert set(a.columns) == set(b.columns) and all(np.array_equal(a[k], b[k]) for k in a.columns)
    other = pendulum()
    with pytest.raises(ValueError, match="joint_reactions: the kernel is not this model's"):
        ml.analysis.joint_reactions(other, reused, "pin", kernel=tr.kernel)
    other_inverse = ml.Inverse(other, (t, {"/jointset/pin/theta/value": 0.5 * np.sin(2 * t)}), mesh_interval=0.02)
    with pytest.raises(ValueError, match="Inverse.solve: the transcription is not of this Inverse's model"):
        other_inverse.solve(transcription=tr)
