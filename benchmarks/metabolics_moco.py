"""OpenSim Moco 4.6 minimizing metabolic energy (``Bhargava2004SmoothedMuscleMetabolics`` through a
``MocoOutputGoal``) on the suspended mass, as the reference ``tests/test_metabolics.py`` compares with (the
stored-reference pattern).

The Moco paper's suspended-mass prediction (:func:`benchmarks.moco_reference.solve_suspended_mass_prediction`: move
the mass from (−0.14, −0.20) to (0.14, −0.15) m, at rest at both ends, t_f in [0.4, 0.8] s, final-time weight 0.01)
with the effort replaced by the metabolic energy ``∫ Ė dt`` (:data:`METABOLICS`: OpenSim's component, smoothed,
its defaults otherwise, on the three muscles), 30 Hermite–Simpson intervals, explicit dynamics, tolerances 1e-8.

Writes ``benchmarks/reference/metabolics_moco.json``: Moco's status, objective, goal values, iterations, states and
controls, with the environment and the settings.

Usage::

    .venv/bin/python -m benchmarks.metabolics_moco     # under a minute
"""
from __future__ import annotations

import json

from benchmarks import moco_reference as mr
from benchmarks.compare_moco import environment, stored_reference
from benchmarks.goals_moco import _goal_values

METABOLICS = {"weight": 0.1, "time_weight": 0.01, "num_mesh_intervals": 30, "tol": 1e-8,
              "component": {"use_smoothing": True}, "muscles": ["left", "middle", "right"]}


def solve() -> dict:
    osim = mr.osim
    spec = METABOLICS
    model = mr.build_suspended_mass_model()
    met = osim.Bhargava2004SmoothedMuscleMetabolics()
    met.setName("metabolics")
    for key, value in spec["component"].items():
        getattr(met, f"set_{key}")(value)
    for name in spec["muscles"]:
        met.addMuscle(name, osim.Muscle.safeDownCast(model.getForceSet().get(name)))
    model.addComponent(met)
    model.finalizeConnections()
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(model)
    problem.setTimeBounds(osim.MocoInitialBounds(0.0), osim.MocoFinalBounds(0.4, 0.8))
    problem.setStateInfo("/jointset/tx/tx/value", [-0.2, 0.2], -0.14, 0.14)
    problem.setStateInfo("/jointset/ty/ty/value", [-0.4, 0.0], -0.20, -0.15)
    problem.setStateInfo("/jointset/tx/tx/speed", [-15, 15], 0, 0)
    problem.setStateInfo("/jointset/ty/ty/speed", [-15, 15], 0, 0)
    for name in spec["muscles"]:
        problem.setStateInfo(f"/forceset/{name}/activation", [0, 1], 0)
        problem.setControlInfo(f"/forceset/{name}", [0, 1])
    goal = osim.MocoOutputGoal("energy", spec["weight"])
    goal.setOutputPath("/metabolics|total_metabolic_rate")
    problem.addGoal(goal)
    problem.addGoal(osim.MocoFinalTimeGoal("time", spec["time_weight"]))
    mr._configure_solver(study, "hermite-simpson", "explicit", spec["num_mesh_intervals"], spec["tol"])
    return mr._solve_study(study)


def main() -> None:
    path, _ = stored_reference("metabolics_moco")
    r = solve()
    print(f"{r['status']}: objective {r['objective']:.10g}, {r['nit']} iterations, goals {_goal_values(r)}")
    path.write_text(json.dumps({"environment": environment(), "settings": METABOLICS, "result": {
        "success": bool(r["success"]), "status": r["status"], "objective": r["objective"], "goals": _goal_values(r),
        "nit": r["nit"], "solve_time": r["solve_time"], "time": r["time"].tolist(),
        "states": {k: v.tolist() for k, v in r["states"].items()},
        "controls": {k: v.tolist() for k, v in r["controls"].items()}}}, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
