"""Moco's ``example2DWalkingMetabolics`` (:func:`moco_lab.examples.walking_2d_metabolics`) against OpenSim Moco 4.6.

``benchmarks/walking_2d_metabolics_moco.py`` solved the example with Moco 4.6 and stored its solution with the
provenance (``benchmarks/reference/walking_2d_metabolics_moco.{json,sto}``). Here Moco's solution is *scored* by
moco_lab's problem without solving: the same problem (tracking with its filtered splines, effort, the symmetry
constraints, the metabolic cost of transport through OpenSim's smoothed Bhargava model, divided by the centre of
mass' displacement and the model's mass) must give Moco's objective and each of its goal values. Solving is lesson
11's part (§6; in learner mode its solution at tolerance 1e-6 has Moco's objective to 7e-5, measured).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import moco_lab as ml
from moco_lab.analysis.walking_2d import cost_of_transport

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
STORED = json.loads((REFERENCE / "walking_2d_metabolics_moco.json").read_text())


@pytest.fixture(scope="module")
def moco_solution() -> ml.Trajectory:
    return ml.read_trajectory(REFERENCE / STORED["solution"])


def test_reference_has_its_provenance():
    env, settings, result = STORED["environment"], STORED["settings"], STORED["result"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert settings["states_global_tracking_weight"] == 30 and settings["metabolics_weight"] == 0.1
    assert settings["num_mesh_intervals"] == 50 and settings["tol"] == 1e-4
    assert result["success"] and set(result["goals"]) == {"state_tracking", "control_effort", "met"}
    assert len(STORED["muscles"]) == 18


def test_mocos_solution_scores_the_same(moco_solution):
    """Each goal's value at Moco's solution equal to Moco's own report: measured to 5e-14 relative (the same
    integrals of the same functions on the same grid); 1e-9 bounds round-off in splines and compiled code, while a
    different metabolic rate, mass or displacement would show at 1e-3 or more. The largest constraint violation
    (4.7e-8, a dynamics defect) is inside Moco's tolerance 1e-4: Moco's point is feasible in moco_lab's program."""
    study = ml.examples.walking_2d_metabolics()
    assert study.solver.num_mesh_intervals == 50 and study.solver.optim_convergence_tolerance == 1e-4
    evaluation = study.evaluate(moco_solution)
    moco = STORED["result"]
    assert evaluation.objective == pytest.approx(moco["objective"], rel=1e-9)
    for goal, value in moco["goals"].items():
        assert evaluation.goal_values[goal] == pytest.approx(value, rel=1e-9), goal
    assert evaluation.constraint_violation < 1e-6, evaluation.worst_constraint


def test_cost_of_transport(moco_solution):
    """The cost of transport of Moco's solution: ten times its ``met`` term (weight 0.1), about 3.96 J/(kg·m); the
    same model without the metabolics component gets it added."""
    model = ml.examples.walking_2d_model()
    cot = cost_of_transport(model, moco_solution)
    assert cot == pytest.approx(10 * STORED["result"]["goals"]["met"], rel=1e-9)
    assert ml.examples.WALKING_2D_METABOLICS in {e.path for e in model.force_elements}
    with pytest.raises(ValueError, match="Hermite–Simpson grid"):
        cost_of_transport(model, ml.Trajectory(moco_solution.time[:4], states={}, controls={}))


def test_effort_only_variant_has_no_metabolic_goal():
    study = ml.examples.walking_2d_metabolics(metabolics_weight=0)
    names = [g.name for g in study.problem.goals]
    assert "met" not in names and {"state_tracking", "control_effort", "symmetry"} <= set(names)
    assert ml.examples.WALKING_2D_METABOLICS in {e.path for e in study.problem.model.force_elements}
    with pytest.raises(ValueError, match="metabolics_weight"):
        ml.examples.walking_2d_metabolics(metabolics_weight=-1)
