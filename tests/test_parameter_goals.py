"""Moco's expression of parameters (``moco_lab.ocp.parameter_goals``): its value at a solution, and bad input named.
Agreement with OpenSim Moco 4.6 is in tests/test_goals_moco.py, second derivatives in
tests/test_transcription_hessians.py."""
from __future__ import annotations

import math

import pytest

import moco_lab as ml
from moco_lab.modeling.lepton import LeptonError


def _study() -> ml.Study:
    study = ml.examples.double_pendulum_study("hermite-simpson", "explicit", 8, tol=1e-8)
    study.problem.add_parameter("f0", "/tau0/optimal_force", (0.5, 4.0))
    study.problem.add_parameter("f1", "/tau1/optimal_force", (0.5, 4.0))
    return study


def test_value_and_endpoint_constraint():
    """As a cost, the goal's reported value is its expression at the optimized parameters (evaluated here with
    Python's math); as an endpoint constraint the expression is held at its bound (it binds: effort alone takes both
    forces to their upper bound 4, where f0·f1 = 16)."""
    study = _study()
    study.problem.add_goal(ml.ExpressionBasedParameterGoal("cost", 100.0, "square(p - 1.5) + exp(-q)",
                                                           parameters={"p": "f0", "q": "f1"}))
    sol = study.solve()
    f0, f1 = sol.parameters["f0"], sol.parameters["f1"]
    assert sol.goal_values["cost"] == pytest.approx(100.0 * ((f0 - 1.5) ** 2 + math.exp(-f1)), rel=1e-12)
    study = _study()
    goal = ml.ExpressionBasedParameterGoal("product", expression="f0*f1", mode="endpoint_constraint", bounds=(0, 6.0))
    goal.add_parameter("f0", "f0")
    goal.add_parameter(study.problem.parameters[1], "f1")  # a Parameter, as Moco's addParameter(parameter, variable)
    study.problem.add_goal(goal)
    sol = study.solve()
    assert sol.success and sol.parameters["f0"] * sol.parameters["f1"] == pytest.approx(6.0, abs=1e-7)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="the expression has not been set"):
        ml.ExpressionBasedParameterGoal("g")
    with pytest.raises(LeptonError, match="expression"):
        ml.ExpressionBasedParameterGoal("g", expression="f0 +* 2")
    study = _study()
    study.problem.add_goal(ml.ExpressionBasedParameterGoal("g", expression="square(f0 - z)",
                                                           parameters={"f0": "f0"}))
    with pytest.raises(KeyError, match="parameter variable 'z' is not defined"):
        study.transcribe()
    study = _study()
    study.problem.add_goal(ml.ExpressionBasedParameterGoal("g", expression="square(p)", parameters={"p": "stiffness"}))
    with pytest.raises(KeyError, match="stiffness"):
        study.transcribe()


def test_saved_and_read_back():
    goal = ml.ExpressionBasedParameterGoal("g", 2.0, "square(p - 1)", parameters={"p": "f0"})
    again = ml.ocp.goal_from_dict(goal.to_dict())
    assert type(again) is ml.ExpressionBasedParameterGoal and again.to_dict() == goal.to_dict()
