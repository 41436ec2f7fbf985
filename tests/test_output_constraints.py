"""Moco's output and frame-distance path constraints (``moco_lab.ocp.output_constraints``): rows at the mesh points
only, held at a solution (checked with outputs evaluated afresh), and bad input named. Agreement with OpenSim Moco
4.6 is in tests/test_goals_moco.py, second derivatives in tests/test_transcription_hessians.py."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.functions import LinearFunction


def _study(n: int = 10) -> ml.Study:
    return ml.examples.double_pendulum_study("hermite-simpson", "explicit", n, tol=1e-8)


def test_rows_at_mesh_points_and_held_at_the_solution():
    """One row per mesh point and pair (none at Hermite–Simpson's midpoints, as Moco); at the solution the outer
    mass's distance from the pivot is at least 1.3 m at every mesh point (it binds: 1.14 m without it) and the COM's
    speed squared at most 16 − 10 t, both evaluated by ``ml.analyze`` and the model's forward kinematics, not by the
    constraints' code; tolerance: the solve's constraint tolerance 1e-8."""
    study = _study()
    p = study.problem
    p.add_path_constraint(ml.FrameDistanceConstraint("reach", [("/ground", "/bodyset/b1", 1.3, 10.0)]))
    p.add_path_constraint(ml.OutputBoundConstraint("speed", output_path="|com_velocity", exponent=2,
                                                   upper_bound=LinearFunction(-10.0, 16.0)))
    tr = study.transcribe()
    assert sum(c.npath for c in tr.chunks) == 2 * (study.solver.num_mesh_intervals + 1)
    sol = study.solve()
    assert sol.success
    t = np.asarray(sol.time)
    mesh = np.arange(0, t.size, 2)  # Hermite–Simpson: mesh points and midpoints alternate
    table = ml.analyze(p.model, sol, "/com_velocity")
    v2 = sum(np.asarray(table[f"/com_velocity_{c}"]) ** 2 for c in "xyz")
    assert np.all(v2[mesh] <= 16.0 - 10.0 * t[mesh] + 1e-8)
    q0, q1 = (np.asarray(sol.states[f"/jointset/j{i}/q{i}/value"]) for i in (0, 1))
    plant = p.model.plant
    context = plant.CreateDefaultContext()
    b1 = plant.GetBodyByName("b1")
    distance = []
    for k in mesh:
        plant.SetPositions(context, [q0[k], q1[k]])
        distance.append(np.linalg.norm(plant.EvalBodyPoseInWorld(context, b1).translation()))
    assert min(distance) >= 1.3 - 1e-8 and min(distance) < 1.3 + 1e-6  # held, and binding


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="no output_path provided"):
        ml.OutputConstraint("c")
    with pytest.raises(ValueError, match=r"bounds must be \(lower, upper\)"):
        ml.OutputConstraint("c", "|com_position", bounds=(1.0, 0.0))
    with pytest.raises(ValueError, match="if equality_with_lower==true, upper bound function must not be set"):
        ml.OutputBoundConstraint("c", "|com_position", lower_bound=0.0, upper_bound=1.0, equality_with_lower=True)
    with pytest.raises(ValueError, match="if equality_with_lower==true, lower bound function must be set"):
        ml.OutputBoundConstraint("c", "|com_position", equality_with_lower=True)
    with pytest.raises(TypeError, match="lower_bound must be an OpenSim function of time"):
        ml.OutputBoundConstraint("c", "|com_position", lower_bound=lambda t: t)
    with pytest.raises(ValueError, match="expected 'projection' to be 'none', 'vector', or 'plane'"):
        ml.FrameDistanceConstraint("f", projection="line")
    with pytest.raises(ValueError, match="must provide a value for 'projection_vector'"):
        ml.FrameDistanceConstraint("f", projection="vector")
    with pytest.raises(ValueError, match="minimum distance for this frame pair to non-negative"):
        ml.FrameDistanceConstraint("f", [("/ground", "/bodyset/b1", -1.0, 2.0)])
    with pytest.raises(ValueError, match="less than or equal to the maximum distance"):
        ml.FrameDistanceConstraint("f", [("/ground", "/bodyset/b1", 2.0, 1.0)])
    # checked against the model when the problem is transcribed
    study = _study(3)
    study.problem.add_path_constraint(ml.FrameDistanceConstraint("f", [("/ground", "/bodyset/b2", 1.0, 2.0)]))
    with pytest.raises(KeyError, match=r"FrameDistanceConstraint 'f': could not find frame '/bodyset/b2'"):
        study.transcribe()
    study = _study(3)
    study.problem.add_path_constraint(ml.OutputConstraint("o", "|com_positon"))
    with pytest.raises(KeyError, match="/com_position"):
        study.transcribe()
    study = _study(3)
    study.problem.add_path_constraint(ml.OutputConstraint("o", "|com_position", output_index=3))
    with pytest.raises(ValueError, match="OutputConstraint 'o': the output '/com_position' has 3 components"):
        study.transcribe()
    study = _study(3)
    study.problem.set_time_bounds(0, (0.5, 2.0))
    study.problem.add_path_constraint(ml.OutputBoundConstraint("o", "|com_position", output_index=1,
                                                               lower_bound=LinearFunction(1.0, 0.0)))
    with pytest.raises(ValueError, match="OutputBoundConstraint 'o': its bounds vary with time"):
        study.transcribe()
    with pytest.raises(ValueError, match="A path constraint named 'o' already exists"):
        study.problem.add_path_constraint(ml.OutputConstraint("o", "|com_position"))
    with pytest.raises(TypeError, match="do not hold Moco's path constraints"):
        study.problem.to_dict()
    study = _study(3)
    study.problem.add_path_constraint(ml.OutputBoundConstraint("none", "|com_position", output_index=1))
    with pytest.warns(UserWarning, match="no bounds are provided: it constrains nothing"):
        tr = study.transcribe()
    assert sum(c.npath for c in tr.chunks) == 0
