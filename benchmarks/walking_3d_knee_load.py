"""The Moco paper's knee load: exampleMocoInverse on the muscles' geometry paths, without and with the knee-load
goals, solved by moco_lab, and the knee reactions of both solutions computed by OpenSim 4.6 itself.

Why geometry paths: on the example's function-based paths the muscles act through generalized forces only, so the
knee's reaction does not see them and the goals change nothing (Moco 4.6 measures the same; the reference notes).
Here the model keeps its GeometryPaths, wrapping over their cylinders by OpenSim's own construction
(``walking_3d_model(function_based_paths=False)``: lengths, moment arms and the forces on the bones equal OpenSim's,
tests/test_osim_opensim.py and tests/test_osim3d.py). Moco 4.6 itself does not converge on the knee-load problem
on this model (stopped by hand after 171 iterations and ~23 minutes, dual infeasibility oscillating at 1e-2), so
moco_lab's solutions are checked by (1) IPOPT's own optimality status, (2) OpenSim's joint-reaction computation
(``Joint::calcReactionOnParentExpressedInGround`` through ``analyzeSpatialVec``) on moco_lab's states and controls,
(3) the knee reaction's drop in body weights between the two solutions.

Problems (``ml.examples.walking_3d_inverse``): the example's settings (t in [0.48, 1.61], mesh interval 0.02 s,
tolerances 1e-3) on the geometry-path model; ``knee_load=True`` adds the paper's two ``JointReactionGoal``s (walker
knees, weight 0.005, force-x and force-y on the parent frame). Both start from moco_lab's default guess.

Writes ``benchmarks/reference/walking_3d_knee_load.json`` (provenance, IPOPT's results, wall times, the peak
reactions in body weights by moco_lab and by OpenSim) and the solutions ``walking_3d_knee_load_{basic,knee}.sto``;
``tests/test_walking_3d_knee_load.py`` checks them with OpenSim in CI.

Usage::

    .venv/bin/python -m benchmarks.walking_3d_knee_load          # both solves (cold compile first), ~15 min
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("MOCO_LAB_CACHE", tempfile.mkdtemp(prefix="moco_lab_knee_load_"))

import moco_lab as ml
from moco_lab.examples.walking_3d import WALKING_3D_KNEE_LOAD, walking_3d_model
from moco_lab.util.data import opensim_file

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
KNEES = WALKING_3D_KNEE_LOAD["joints"]


def opensim_model():
    """exampleMocoInverse's model operators without ``ModOpReplacePathsWithFunctionBasedPaths``: the file's
    GeometryPaths (OpenSim's model for the knee reactions)."""
    import opensim as osim

    osim.Logger.setLevelString("error")
    processor = osim.ModelProcessor(str(opensim_file("subject_walk_scaled.osim")))
    processor.append(osim.ModOpAddExternalLoads(str(opensim_file("grf_walk.xml"))))
    processor.append(osim.ModOpReplaceJointsWithWelds(["mtp_r", "mtp_l"]))
    processor.append(osim.ModOpAddResiduals(250.0, 50.0, 1.0))
    processor.append(osim.ModOpIgnoreTendonCompliance())
    processor.append(osim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    processor.append(osim.ModOpIgnorePassiveFiberForcesDGF())
    processor.append(osim.ModOpScaleActiveFiberForceCurveWidthDGF(1.5))
    processor.append(osim.ModOpAddReserves(1.0))
    return processor.process()


def opensim_knee_reactions(sto: Path) -> tuple[np.ndarray, dict, float]:
    """OpenSim's reactions of both walker knees on their parents, in ground (N), along the stored solution: time,
    ``{joint: (n, 3)}`` and the model's weight (N)."""
    import opensim as osim

    model = opensim_model()
    state = model.initSystem()
    trajectory = osim.MocoTrajectory(str(sto))
    outputs = osim.StdVectorString([rf"{j}\|reaction_on_parent" for j in KNEES])
    table = osim.analyzeSpatialVec(model, trajectory.exportToStatesTable(), trajectory.exportToControlsTable(),
                                   outputs)
    flat = table.flatten(osim.StdVectorString(["_mx", "_my", "_mz", "_fx", "_fy", "_fz"]))
    labels = list(flat.getColumnLabels())
    values = flat.getMatrix().to_numpy()
    forces = {j: values[:, [labels.index(f"{j}|reaction_on_parent_f{a}") for a in "xyz"]] for j in KNEES}
    weight = model.getTotalMass(state) * -model.getGravity()[1]
    return np.array(flat.getIndependentColumn()), forces, weight


def solve(knee_load: bool, model) -> dict:
    t = time.perf_counter()
    result = ml.examples.walking_3d_inverse(model, knee_load=knee_load).solve()
    wall = time.perf_counter() - t
    s = result.solution
    return {"solution": s, "summary": {"success": bool(s.success), "status": s.status, "objective": s.objective,
                                       "iterations": s.nit, "solver_duration": s.solve_time, "wall": wall,
                                       "goals": dict(s.goal_values)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    from benchmarks.compare_moco import environment  # imports OpenSim, the optional extra

    t = time.perf_counter()
    model = walking_3d_model(function_based_paths=False)
    results = {"read_model_wall": time.perf_counter() - t}
    for key, knee_load in (("basic", False), ("knee", True)):
        print(f"[{key}] moco_lab ...", flush=True)
        run = solve(knee_load, model)
        sto = REFERENCE / f"walking_3d_knee_load_{key}.sto"
        run["solution"].write(str(sto))
        ours = ml.analysis.joint_reactions(model, ml.read_trajectory(str(sto)), list(KNEES), "parent", "/ground")
        time_o, theirs, weight = opensim_knee_reactions(sto)
        summary = run["summary"]
        summary["peak_bw"] = {}
        for j in KNEES:
            prefix = f"{j}/reaction_on_parent_in_/ground_force"
            f_ours = np.column_stack([ours.columns[f"{prefix}_{a}"] for a in "xyz"])
            summary["peak_bw"][j] = {"moco_lab": float(np.linalg.norm(f_ours, axis=1).max() / weight),
                                     "opensim": float(np.linalg.norm(theirs[j], axis=1).max() / weight),
                                     "max_difference_N": float(np.abs(f_ours - theirs[j]).max())}
        results[key] = summary
        print(json.dumps(summary, indent=1, default=float), flush=True)
    (REFERENCE / "walking_3d_knee_load.json").write_text(json.dumps({
        "description": "exampleMocoInverse on geometry paths (OpenSim's wrapping), without and with the Moco "
                       "paper's knee-load goals, solved by moco_lab; knee reactions by moco_lab and by OpenSim on "
                       "moco_lab's solutions (benchmarks/walking_3d_knee_load.py)",
        "environment": environment(), "results": results}, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
