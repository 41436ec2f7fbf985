"""OpenSim Moco 4.6's ``example2DWalkingMetabolics``: tracking half a gait cycle while minimizing the metabolic cost of
transport, stored as the reference ``tests/test_walking_2d_metabolics.py`` compares with.

Line for line the problem of ``Bindings/Python/examples/Moco/example2DWalking/example2DWalkingMetabolics.py``
(opensim-core 4.6; Antoine Falisse's C++ example): ``2D_gait.osim`` with a ``Bhargava2004SmoothedMuscleMetabolics``
component ``metabolic_cost`` (smoothed, all 18 muscles, default parameters); MocoTrack of ``referenceCoordinates.sto``
through ``TabOpLowPassFilter(6)``, states tracking weight 30, unused references allowed, speeds tracked against the
positions' derivatives, the tracked states as the guess, t in [0, 0.470089] s; the symmetry goal of the 2-D
walking example; control effort weight 0.1; ``MocoOutputGoal("met", 0.1)`` on ``total_metabolic_rate`` divided by
the displacement and by the model's mass (the cost of transport, J/kg/m, times 0.1); the example's bounds; 50
Hermite-Simpson mesh intervals, tolerances 1e-4, at most 10000 iterations.

Writes ``benchmarks/reference/walking_2d_metabolics_moco.json`` (status, objective, each goal's value, iterations,
times, the environment) and the solution ``benchmarks/reference/walking_2d_metabolics_moco.sto``.

Usage::

    .venv/bin/python -m benchmarks.walking_2d_metabolics_moco
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks.compare_moco import environment, stored_reference
from benchmarks.walking_2d_moco import FINAL_TIME, _bounds, _data_folder, _result, _solver, symmetric_track

MUSCLES = [f"{m}_{side}" for m in ("hamstrings", "bifemsh", "glut_max", "iliopsoas", "rect_fem", "vasti", "gastroc",
                                   "soleus", "tib_ant") for side in ("r", "l")]
SETTINGS = {"states_global_tracking_weight": 30, "control_effort_weight": 0.1, "metabolics_weight": 0.1,
            "divide_by_displacement": True, "divide_by_mass": True, "num_mesh_intervals": 50, "tol": 1e-4,
            "max_iterations": 10000, "lowpass_cutoff_frequency": 6, "final_time": FINAL_TIME}  # the filter: 6 Hz


def solve(sto: Path) -> dict:
    """Moco's example2DWalkingMetabolics; writes the solution to ``sto``."""
    import opensim as osim

    osim.Logger.setLevelString("error")
    with _data_folder():
        t = time.perf_counter()
        model = osim.Model("2D_gait.osim")
        metabolics = osim.Bhargava2004SmoothedMuscleMetabolics()
        metabolics.setName("metabolic_cost")
        metabolics.set_use_smoothing(True)
        for name in MUSCLES:
            metabolics.addMuscle(name, osim.Muscle.safeDownCast(model.getComponent(name)))
        model.addComponent(metabolics)
        model.finalizeConnections()
        study, problem = symmetric_track(osim, "gaitTrackingMetCost", osim.ModelProcessor(model),
                                         SETTINGS["states_global_tracking_weight"], SETTINGS["control_effort_weight"])
        met = osim.MocoOutputGoal("met", SETTINGS["metabolics_weight"])
        met.setOutputPath("/metabolic_cost|total_metabolic_rate")
        met.setDivideByDisplacement(True)
        met.setDivideByMass(True)
        problem.addGoal(met)
        _bounds(problem)
        solver = _solver(study, SETTINGS["tol"], SETTINGS["num_mesh_intervals"], SETTINGS["max_iterations"])
        solver.resetProblem(problem)
        solution = study.solve()
        wall = time.perf_counter() - t
    return _result(solution, wall, sto)


def main() -> None:
    path, _ = stored_reference("walking_2d_metabolics_moco")
    sto = path.with_suffix(".sto")
    result = solve(sto)
    print(json.dumps(result, indent=1), flush=True)
    path.write_text(json.dumps({"environment": environment(), "settings": SETTINGS, "muscles": MUSCLES,
                                "result": result, "solution": sto.name}, indent=1) + "\n")
    print(f"wrote {path} and {sto}")


if __name__ == "__main__":
    main()
