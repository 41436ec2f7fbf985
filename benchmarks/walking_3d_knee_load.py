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
knees, weight 0.005, force-x and force-y on the parent frame). Both start from moco_lab's default guess. The basic
problem is also solved at tolerances 1e-6 (``basic_1e-06``), and with ``--moco`` by Moco 4.6 at 1e-3 and 1e-6 on
the same GeometryPath model (the optimum both tools should share; Moco's basic problem converges here).

Writes ``benchmarks/reference/walking_3d_knee_load.json`` (provenance, IPOPT's results, wall times, the peak
reactions in body weights by moco_lab and by OpenSim) and the solutions ``walking_3d_knee_load_{basic,knee}.sto``;
``tests/test_walking_3d_knee_load.py`` checks them with OpenSim in CI. For lesson 16 it writes what the lesson
shows of both solutions — the muscles' activations and moco_lab's knee reactions — to
``moco_lab/data/walking_3d/knee_load_{basic,knee}.sto`` (provenance in their headers and ``knee_load.md``;
``--write-data`` rewrites them from the stored solutions without solving).

Usage::

    .venv/bin/python -m benchmarks.walking_3d_knee_load                        # basic, knee (cold first)
    .venv/bin/python -m benchmarks.walking_3d_knee_load --runs basic_1e-06 --moco  # the shared optimum
    .venv/bin/python -m benchmarks.walking_3d_knee_load --runs "" --single-wrap    # no double wraps, both tools

Why ``--single-wrap``: on the full model the two tools' optima differ by 0.72 %, and Moco's optimum put into
moco_lab's dynamics leaves residuals only at the joints the four double-wrapped gastrocnemii cross. OpenSim computes
a path over two cylinders by an iteration (each wrap's tangent points slid until tangent to within a threshold,
the wraps alternated until the length changes by less than 0.5 mm), a length that jumps where the iteration's
counts change; moco_lab takes the shortest path over each (docs/models.md). Without the gastrocnemii's shank wraps
every path wraps once at most, where both compute OpenSim's construction, and the optima agree as on the
function-based paths (``tests/test_walking_3d_inverse.py::test_geometry_paths_wrapping_once_reach_mocos_optimum``).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

import moco_lab as ml
from benchmarks.walking_3d_inverse import moco_processor, moco_solve
from moco_lab.analysis.walking_3d import knee_reactions
from moco_lab.examples.walking_3d import WALKING_3D_KNEE_LOAD, walking_3d_model
from moco_lab.util.data import opensim_file

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
KNEES = WALKING_3D_KNEE_LOAD["joints"]


def opensim_model():
    """exampleMocoInverse's model operators without ``ModOpReplacePathsWithFunctionBasedPaths``: the file's
    GeometryPaths (OpenSim's model for the knee reactions)."""
    return moco_processor(function_based_paths=False).process()


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


def solve(knee_load: bool, model: ml.Model, tol: float = 1e-3) -> dict:
    t = time.perf_counter()
    result = ml.examples.walking_3d_inverse(model, knee_load=knee_load, convergence_tolerance=tol,
                                            constraint_tolerance=tol).solve()
    wall = time.perf_counter() - t
    s = result.solution
    return {"solution": s, "summary": {"success": bool(s.success), "status": s.status, "objective": s.objective,
                                       "iterations": s.nit, "solver_duration": s.solve_time, "wall": wall,
                                       "goals": dict(s.goal_values)}}


RUNS = {"basic": (False, 1e-3), "knee": (True, 1e-3), "basic_1e-06": (False, 1e-6)}
DATA = Path(ml.__file__).resolve().parent / "data" / "walking_3d"
#: The wraps left out of the gastrocnemii for the single-wrap check (``--single-wrap``): each keeps its wrap over the
#: femoral condyles and loses the one over the shank, so that no path of the model wraps twice.
SHANK_WRAPS = ("GasMed_at_shank_r", "GasLat_at_shank_r", "GasMed_at_shank_l", "GasLat_at_shank_l")


def single_wrap_file(folder: Path) -> Path:
    """A copy of ``subject_walk_scaled.osim`` in ``folder`` without the gastrocnemii's wraps over the shank
    (:data:`SHANK_WRAPS`): every path then wraps over one cylinder at most, where moco_lab computes OpenSim's
    construction exactly (docs/models.md). Both tools read this same file for the single-wrap check."""
    import xml.etree.ElementTree as ET

    tree = ET.parse(opensim_file("subject_walk_scaled.osim"))
    removed = []
    for wrap_set in tree.getroot().iter("PathWrapSet"):
        for objects in wrap_set.iter("objects"):
            for wrap in list(objects.findall("PathWrap")):
                if wrap.findtext("wrap_object", "").strip() in SHANK_WRAPS:
                    objects.remove(wrap)
                    removed.append(wrap.findtext("wrap_object").strip())
    if sorted(removed) != sorted(SHANK_WRAPS):
        raise RuntimeError(f"expected to remove {SHANK_WRAPS}, removed {removed}")
    out = Path(folder) / "subject_walk_scaled_single_wrap.osim"
    tree.write(out, encoding="UTF-8", xml_declaration=True)
    return out


def reaction_table(model: ml.Model, sto: Path) -> tuple:
    """moco_lab's reactions of both knees on the femur, in ground (N), along a stored solution: the
    trajectory and ``{joint: (n, 3)}``."""
    trajectory = ml.read_trajectory(str(sto))
    return trajectory, knee_reactions(model, trajectory)


def write_lesson_data(model: ml.Model, results: dict, env: dict) -> None:
    """Lesson 16's data: each solution's activations and knee reactions (N) with its provenance."""
    from moco_lab.results.sto import write_table

    DATA.mkdir(exist_ok=True)
    rows = []
    for key in ("basic", "knee"):
        trajectory, forces = reaction_table(model, REFERENCE / f"walking_3d_knee_load_{key}.sto")
        columns = {name: trajectory.states[name] for name in trajectory.states if name.endswith("/activation")}
        for j in KNEES:
            columns |= {f"{j}/reaction_on_parent_in_ground_force_{a}": forces[j][:, i] for i, a in enumerate("xyz")}
        r = results[key]
        write_table(DATA / f"knee_load_{key}.sto", trajectory.time, columns, {
            "header": f"exampleMocoInverse on geometry paths, {'with' if key == 'knee' else 'without'} the knee-load "
                      "goals: activations and knee reactions on the femur in ground (N)",
            "made_by": "benchmarks/walking_3d_knee_load.py", "date": env["date"], "moco_lab": env["moco_lab"],
            "status": r["status"], "iterations": r["iterations"], "objective": r["objective"],
            "excitation_effort": r["goals"]["excitation_effort"],
            "body_weight": float(model.body_weight())})
        rows.append(f"| {key} | {r['status']} | {r['iterations']} | {r['objective']:.6f} | "
                    + " | ".join(f"{r['peak_bw'][j]['moco_lab']:.2f}" for j in KNEES) + " |")
    (DATA / "knee_load.md").write_text(
        "# exampleMocoInverse's knee load, shipped with moco_lab: how it was made\n\n"
        f"Written by `benchmarks/walking_3d_knee_load.py` ({env['date']}, {env['machine']}, moco_lab "
        f"{env['moco_lab']}). Moco's exampleMocoInverse (`ml.examples.walking_3d_inverse`, its settings: mesh "
        "interval 0.02 s, tolerances 1e-3) on the model's geometry paths with OpenSim's wrapping "
        "(`walking_3d_model(function_based_paths=False)`), without (`basic`) and with (`knee`) the Moco paper's "
        "knee-load goals, each solved from moco_lab's default guess. Each file holds the solution's 80 activations "
        "and moco_lab's reaction of both walker knees on the femur, in ground (N); lesson 16 reads them "
        "(`ml.examples.walking_3d_knee_load_results`). The full solutions and OpenSim's reactions on them are in "
        "`benchmarks/reference/walking_3d_knee_load*`.\n\n"
        "| solve | status | iterations | objective | peak right knee (BW) | peak left knee (BW) |\n"
        "|---|---|--:|--:|--:|--:|\n" + "\n".join(rows) + "\n")


def write_table(stored: dict) -> None:
    """``benchmarks/walking_3d_knee_load.md``: every stored run, moco_lab's and Moco's, one row each."""
    rows = []
    for tool, runs in (("moco_lab", stored.get("results", {})), ("Moco 4.6", stored.get("moco", {}))):
        for key, r in runs.items():
            peaks = r.get("peak_bw", {})
            peak = " / ".join(f"{peaks[j]['opensim']:.2f}" for j in KNEES) if peaks else ""
            rows.append(f"| {key} | {tool} | {r['status']} | {r['iterations']} | {r['objective']:.6f} | "
                        f"{r['solver_duration']:.1f} | {r['wall']:.1f} | {peak} |")
    env = next(iter(stored.get("environments", {}).values()), {})
    (HERE / "walking_3d_knee_load.md").write_text(
        "# The Moco paper's knee load on exampleMocoInverse's geometry paths: moco_lab, and Moco 4.6's basic "
        "problem\n\n"
        f"{env.get('date', '')}; {env.get('machine', '')}; moco_lab {env.get('moco_lab', '')}, OpenSim "
        f"{env.get('opensim', '')}. Produced by `benchmarks/walking_3d_knee_load.py` (settings in its docstring; "
        "all numbers in `reference/walking_3d_knee_load.json`). `basic`, `knee`: the example's tolerances 1e-3, "
        "without and with the paper's knee-load goals; `basic_1e-06`, `moco_tol*`: the minimum-effort problem at "
        "other tolerances; `single_wrap_1e-06`: the minimum-effort problem at 1e-6 on the model without the "
        "gastrocnemii's wraps over the shank, so that no path wraps twice (`--single-wrap`; both tools read the same "
        "edited file): the objectives agree to 3.1e-5 there, against 0.72 % with the double wraps. Solve: IPOPT's "
        "(moco_lab) or Moco's solver time; wall: the whole call, the first "
        "moco_lab run of a kind including deriving and compiling its equations in a fresh cache. Peak knee force: "
        "OpenSim's reaction of each walker knee on the femur along the solution (right / left, body weights).\n\n"
        "| run | tool | status | iterations | objective | solve (s) | wall (s) | peak knee force (BW) |\n"
        "|---|---|---|--:|--:|--:|--:|--:|\n" + "\n".join(rows) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default="basic,knee", help=f"moco_lab's solves, of {sorted(RUNS)}")
    parser.add_argument("--moco", action="store_true", help="Moco 4.6's basic problem at 1e-3 and 1e-6 too")
    parser.add_argument("--write-data", action="store_true", help="only rewrite lesson 16's data files")
    parser.add_argument("--single-wrap", action="store_true",
                        help="the basic problem at 1e-6 without the gastrocnemii's shank wraps, by both tools")
    parser.add_argument("--table", action="store_true", help="only rewrite walking_3d_knee_load.md from the json")
    args = parser.parse_args()
    # a fresh kernel cache (the first solve's time is a cold one), unless one is given; read when kernels are built
    os.environ.setdefault("MOCO_LAB_CACHE", tempfile.mkdtemp(prefix="moco_lab_knee_load_"))
    from benchmarks.compare_moco import environment  # imports OpenSim, the optional extra

    out = REFERENCE / "walking_3d_knee_load.json"
    stored = json.loads(out.read_text()) if out.exists() else {}
    if args.table:
        write_table(stored)
        return
    results, moco = stored.get("results", {}), stored.get("moco", {})
    environments = stored.get("environments", {})
    t = time.perf_counter()
    model = walking_3d_model(function_based_paths=False)
    print(f"model read in {time.perf_counter() - t:.1f} s", flush=True)
    if args.write_data:
        write_lesson_data(model, results, environments.get("knee") or stored.get("environment"))
        return
    for key in args.runs.split(",") if args.runs else []:
        knee_load, tol = RUNS[key]
        print(f"[{key}] moco_lab ...", flush=True)
        run = solve(knee_load, model, tol)
        print(json.dumps(run["summary"], indent=1, default=float), flush=True)
        sto = REFERENCE / f"walking_3d_knee_load_{key}.sto"
        run["solution"].write_sto(str(sto))
        _, ours = reaction_table(model, sto)
        time_o, theirs, weight = opensim_knee_reactions(sto)
        summary = run["summary"]
        summary["peak_bw"] = {}
        for j in KNEES:
            f_ours = ours[j]
            summary["peak_bw"][j] = {"moco_lab": float(np.linalg.norm(f_ours, axis=1).max() / weight),
                                     "opensim": float(np.linalg.norm(theirs[j], axis=1).max() / weight),
                                     "max_difference_N": float(np.abs(f_ours - theirs[j]).max())}
        results[key] = summary
        environments[key] = environment()
        print(json.dumps(summary, indent=1, default=float), flush=True)
    if args.single_wrap:
        with tempfile.TemporaryDirectory() as tmp:
            single = single_wrap_file(Path(tmp))
            key = "single_wrap_1e-06"
            print(f"[{key}] moco_lab ...", flush=True)
            run = solve(False, walking_3d_model(function_based_paths=False, osim=single), 1e-6)
            run["solution"].write_sto(str(REFERENCE / f"walking_3d_knee_load_{key}.sto"))
            results[key], environments[key] = run["summary"], environment()
            print(json.dumps(run["summary"], indent=1, default=float), flush=True)
            print(f"[{key}] Moco ...", flush=True)
            moco[key] = moco_solve(1e-6, REFERENCE / f"walking_3d_knee_load_moco_{key}.sto",
                                   function_based_paths=False, osim_file=single)
            print(json.dumps(moco[key], indent=1, default=float), flush=True)
    if args.moco:
        for tol in (1e-3, 1e-6):
            key = f"moco_tol{tol:g}"
            print(f"[{key}] Moco ...", flush=True)
            moco[key] = moco_solve(tol, REFERENCE / f"walking_3d_knee_load_{key}.sto", function_based_paths=False)
            environments[key] = environment()
            print(json.dumps(moco[key], indent=1, default=float), flush=True)
    out.write_text(json.dumps({
        "description": "exampleMocoInverse on geometry paths (OpenSim's wrapping), without and with the Moco "
                       "paper's knee-load goals, solved by moco_lab; knee reactions by moco_lab and by OpenSim on "
                       "moco_lab's solutions; Moco 4.6's basic problem on the same model "
                       "(benchmarks/walking_3d_knee_load.py)",
        "environments": environments, "results": results, "moco": moco}, indent=1, default=float) + "\n")
    write_table(json.loads(out.read_text()))
    if {"basic", "knee"} & set(args.runs.split(",")):
        write_lesson_data(model, results, environments["knee"] if "knee" in environments else environment())


if __name__ == "__main__":
    main()
