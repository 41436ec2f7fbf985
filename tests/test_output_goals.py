"""Moco's output goals (``moco_lab.ocp.output_goals``): output names as Moco writes them, and bad input named.
Agreement with OpenSim Moco 4.6 is in tests/test_goals_moco.py, second derivatives in
tests/test_transcription_hessians.py."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.functions import Constant
from moco_lab.ocp.output_goals import moco_output_name


def test_moco_output_paths():
    assert moco_output_name("/tau0|actuation") == "/tau0/actuation"
    assert moco_output_name("|com_position") == "/com_position"
    assert moco_output_name("/forceset/soleus_r|tendon_force") == "/forceset/soleus_r/tendon_force"
    assert moco_output_name("/com_velocity") == "/com_velocity"


def _solve_with(goal: ml.OutputGoal) -> None:
    study = ml.examples.double_pendulum_study("hermite-simpson", "explicit", 5)
    study.problem.add_goal(goal)
    study.transcribe()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="no output_path provided"):
        ml.OutputGoal("g")
    with pytest.raises(ValueError, match="exponent must be an integer of 1 or greater"):
        ml.OutputGoal("g", output_path="|com_position", exponent=0)
    with pytest.raises(ValueError, match="a second output path was provided, but no operation"):
        ml.OutputGoal("g", output_path="|com_position", second_output_path="|com_velocity")
    with pytest.raises(ValueError, match="an operation was provided but a second output path was not"):
        ml.OutputGoal("g", output_path="|com_position", operation="addition")
    with pytest.raises(ValueError, match="invalid operation 'plus'"):
        ml.OutputGoal("g", output_path="|com_position", second_output_path="|com_velocity", operation="plus")
    with pytest.raises(ValueError, match="the extremum type must be either 'minimum' or 'maximum'"):
        ml.OutputExtremumGoal("g", output_path="/tau0|actuation", extremum_type="max")
    with pytest.raises(ValueError, match=r"smoothing factor must be in the range \[0.2, 1.0\]"):
        ml.OutputExtremumGoal("g", output_path="/tau0|actuation", smoothing_factor=0.1)
    with pytest.raises(TypeError, match="tracking_function must be an OpenSim function of time"):
        ml.OutputTrackingGoal("g", output_path="/tau0|actuation", tracking_function=lambda t: t)
    # checked against the model when the problem is transcribed
    with pytest.raises(KeyError, match=r"/tau0/actuaton.*/tau0/actuation"):
        _solve_with(ml.OutputGoal("g", output_path="/tau0|actuaton"))
    with pytest.raises(ValueError, match="an output index was provided, but the output '/tau0/actuation' is a scalar"):
        _solve_with(ml.OutputGoal("g", output_path="/tau0|actuation", output_index=0))
    with pytest.raises(ValueError, match="has 3 components, but output index 3 was provided"):
        _solve_with(ml.OutputGoal("g", output_path="|com_position", output_index=3))
    with pytest.raises(ValueError, match="do not match"):
        _solve_with(ml.OutputGoal("g", output_path="|com_position", second_output_path="/tau0|actuation",
                                  operation="addition"))
    with pytest.raises(ValueError, match="cannot take the norm of a vector output"):
        _solve_with(ml.OutputExtremumGoal("g", output_path="|com_position"))
    with pytest.raises(TypeError, match="study files do not hold tracking functions"):
        ml.OutputTrackingGoal("g", output_path="/tau0|actuation", tracking_function=Constant(1.0)).to_dict()


def test_saved_and_read_back():
    goal = ml.OutputExtremumGoal("peak", 3.0, output_path="|com_velocity", output_index=0, exponent=2,
                                 extremum_type="maximum", smoothing_factor=0.5)
    again = ml.ocp.goal_from_dict(goal.to_dict())
    assert type(again) is ml.OutputExtremumGoal and again.to_dict() == goal.to_dict()


def test_endpoint_output_goals_at_a_solution():
    """The endpoint output goals' values at a solution equal the model's outputs there, evaluated afresh by
    ``ml.analyze`` (the goals' own code not involved): the final COM speed squared times the weight, and the
    horizontal COM velocity's change held within its endpoint-constraint bounds (active: its optimum without the
    constraint changes by more). Tolerances: the solve's constraint tolerance 1e-8."""
    study = ml.examples.double_pendulum_study("hermite-simpson", "explicit", 10, tol=1e-8)
    p = study.problem
    for path in ("/jointset/j0/q0/speed", "/jointset/j1/q1/speed"):
        p.set_state_info(path, (-50, 50), None, None)
    p.add_goal(ml.FinalOutputGoal("final", 10.0, output_path="|com_velocity", exponent=2))
    p.add_goal(ml.OutputPeriodicityGoal("periodic", output_path="|com_velocity", output_index=0,
                                        mode="endpoint_constraint", bounds=(-0.5, 0.5)))
    sol = study.solve()
    assert sol.success
    table = ml.analyze(p.model, sol, "/com_velocity")
    v = np.column_stack([table[f"/com_velocity_{c}"] for c in "xyz"])
    assert sol.goal_values["final"] == pytest.approx(10.0 * float(v[-1] @ v[-1]), rel=1e-10)
    change = v[-1, 0] - v[0, 0]
    assert -0.5 - 1e-8 <= change <= 0.5 + 1e-8 and abs(abs(change) - 0.5) < 1e-6  # the bound binds
    assert sol.goal_values["periodic"] == 0.0  # a constraint adds nothing to the objective


def test_endpoint_goals_saved_and_read_back():
    for goal in (ml.InitialOutputGoal("i", 2.0, output_path="|com_position", output_index=1, exponent=3),
                 ml.OutputPeriodicityGoal("p", output_path="|com_velocity", mode="endpoint_constraint",
                                          bounds=(-1.0, 2.0))):
        again = ml.ocp.goal_from_dict(goal.to_dict())
        assert type(again) is type(goal) and again.to_dict() == goal.to_dict()
    with pytest.raises(ValueError, match=r"bounds must be \(lower, upper\)"):
        ml.FinalOutputGoal("f", output_path="|com_position", mode="endpoint_constraint", bounds=(1.0, 0.0))
