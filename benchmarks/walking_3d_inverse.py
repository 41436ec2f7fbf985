"""Moco's exampleMocoInverse (muscle activity of 3-D walking): moco_lab and OpenSim Moco 4.6, same files, same
settings, one run.

Both tools solve :mod:`moco_lab.examples.walking_3d`'s problem — Moco's example line for line on Moco's side
(``exampleMocoInverse.py``: the model operators, ``coordinates.sto``, t in [0.48, 1.61], mesh interval 0.02 s) — at
the example's tolerances 1e-3 and again at 1e-6 (the optimum both should share). moco_lab: IPOPT with the
limited-memory Hessian (as Moco), *cold* (the equations' cache emptied: derived again) and *warm* (the cache
filled), and warm with the exact
Hessian (``optim_hessian_approximation="exact"``: second derivatives from the compiled equations). Moco: its CasADi solver with
the example's settings (forward finite differences, 2 threads on this machine).

What is timed (wall clock): Moco's whole ``solve()`` of a freshly built study (which reads and processes the model
and the kinematics), and moco_lab's ``ml.examples.walking_3d_inverse(...)`` (reading the same files, applying the
same operators) followed by its ``solve()``. Writes
``benchmarks/walking_3d_inverse.md`` (the table) and ``benchmarks/reference/walking_3d_inverse_moco.json`` plus Moco's
solutions (``walking_3d_inverse_moco_tol<tol>.sto``): the stored reference ``tests/test_walking_3d_inverse.py``
compares with, with its provenance (versions, settings, date).

Usage::

    .venv/bin/python -m benchmarks.walking_3d_inverse              # Moco at 1e-6 dominates
    .venv/bin/python -m benchmarks.walking_3d_inverse --skip-moco  # reuse the stored Moco reference
    .venv/bin/python -m benchmarks.walking_3d_inverse --problems emg_tight  # EMG tracking at 1e-6 (Moco ~6 min)
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import moco_lab as ml
from moco_lab.engine.kernel import clear_kernel_cache
from moco_lab.examples.walking_3d import WALKING_3D_EMG, WALKING_3D_INVERSE_SETTINGS
from moco_lab.symbolic import codegen
from moco_lab.util.data import opensim_file

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
TOLERANCES = (1e-3, 1e-6)


def moco_processor(function_based_paths: bool = True, osim_file: Path | None = None):
    """exampleMocoInverse's ``ModelProcessor``; ``function_based_paths=False`` leaves out
    ``ModOpReplacePathsWithFunctionBasedPaths`` (the file's GeometryPaths); ``osim_file``: another model file
    (default the subject's)."""
    import opensim as osim

    osim.Logger.setLevelString("error")
    processor = osim.ModelProcessor(str(osim_file or opensim_file("subject_walk_scaled.osim")))
    processor.append(osim.ModOpAddExternalLoads(str(opensim_file("grf_walk.xml"))))
    processor.append(osim.ModOpReplaceJointsWithWelds(["mtp_r", "mtp_l"]))
    processor.append(osim.ModOpAddResiduals(250.0, 50.0, 1.0))
    processor.append(osim.ModOpIgnoreTendonCompliance())
    processor.append(osim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    processor.append(osim.ModOpIgnorePassiveFiberForcesDGF())
    processor.append(osim.ModOpScaleActiveFiberForceCurveWidthDGF(1.5))
    if function_based_paths:
        processor.append(osim.ModOpReplacePathsWithFunctionBasedPaths(
            str(opensim_file("subject_walk_scaled_FunctionBasedPathSet.xml"))))
    processor.append(osim.ModOpAddReserves(1.0))
    return processor


def moco_solve(tol: float, sto: Path, emg: bool = False, function_based_paths: bool = True,
               osim_file: Path | None = None) -> dict:
    """exampleMocoInverse's ``solveMocoInverse`` (``emg``: ``solveMocoInverseWithEMG``) with convergence and
    constraint tolerances ``tol``; ``function_based_paths=False``: on the file's GeometryPaths; ``osim_file``:
    another model file."""
    import opensim as osim

    inverse = osim.MocoInverse()
    inverse.setModel(moco_processor(function_based_paths, osim_file))
    inverse.setKinematics(osim.TableProcessor(str(opensim_file("coordinates.sto"))))
    inverse.set_initial_time(0.48)
    inverse.set_final_time(1.61)
    inverse.set_mesh_interval(0.02)
    inverse.set_kinematics_allow_extra_columns(True)
    inverse.set_convergence_tolerance(tol)
    inverse.set_constraint_tolerance(tol)
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            t = time.perf_counter()
            if emg:  # the example's solveMocoInverseWithEMG, line for line
                study = inverse.initialize()
                problem = study.updProblem()
                tracking = osim.MocoControlTrackingGoal("emg_tracking")
                tracking.setWeight(WALKING_3D_EMG["weight"])
                reference = osim.TimeSeriesTable(str(opensim_file("electromyography.sto")))
                for label, factor in WALKING_3D_EMG["scale"].items():
                    column = reference.updDependentColumn(label)
                    for row in range(reference.getNumRows()):
                        column[row] = factor * column[row]
                tracking.setReference(osim.TableProcessor(reference))
                for control, label in WALKING_3D_EMG["labels"].items():
                    tracking.setReferenceLabel(control, label)
                problem.addGoal(tracking)
                solution = study.solve()
                wall = time.perf_counter() - t
            else:
                result = inverse.solve()  # kept: getMocoSolution() returns a reference into it
                wall = time.perf_counter() - t
                solution = result.getMocoSolution()
        finally:
            os.chdir(cwd)
    solution.unseal()
    solution.write(str(sto))
    return {"success": bool(solution.success()), "status": solution.getStatus(), "objective": solution.getObjective(),
            "iterations": solution.getNumIterations(), "solver_duration": solution.getSolverDuration(), "wall": wall,
            "goals": {name: solution.getObjectiveTerm(name) for name in solution.getObjectiveTermNames()}}


def moco_lab_solve(tol: float, cold: bool, emg: bool = False, hessian: str = "limited-memory") -> dict:
    if cold:
        clear_kernel_cache(disk=True)
    t = time.perf_counter()   # from the files, as Moco's solve() processes its model and tables
    inverse = ml.examples.walking_3d_inverse(emg=emg, convergence_tolerance=tol, constraint_tolerance=tol)
    inverse.settings.optim_hessian_approximation = hessian
    result = inverse.solve()
    wall = time.perf_counter() - t
    if cold:  # a background build it may have started (MOCO_LAB_OPTIMIZE_KERNELS=1): not beside the warm runs
        codegen.wait_for_optimized_builds()
    s = result.solution
    return {"success": bool(s.success), "status": s.status, "objective": s.objective, "iterations": s.nit,
            "solver_duration": s.solve_time, "wall": wall, "goals": dict(s.goal_values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-moco", action="store_true", help="reuse the stored Moco reference")
    parser.add_argument("--problems", default="basic,emg",
                        help="which to run: basic (tolerances 1e-3 and 1e-6), emg (1e-3), emg_tight (1e-6); "
                             "default basic,emg")
    args = parser.parse_args()
    # never the user's cache (the cold runs empty it); read when kernels are built, so setting it here suffices
    os.environ["MOCO_LAB_CACHE"] = tempfile.mkdtemp(prefix="moco_lab_walking_3d_")
    from benchmarks.compare_moco import environment, stored_reference  # imports OpenSim, the optional extra

    ref_file, stored = stored_reference("walking_3d_inverse_moco")
    problems = set(args.problems.split(","))
    runs = [(f"tol{tol:g}", tol, False) for tol in TOLERANCES] if "basic" in problems else []
    runs += [("emg_tol0.001", 1e-3, True)] if "emg" in problems else []
    runs += [("emg_tol1e-06", 1e-6, True)] if "emg_tight" in problems else []
    rows = {}
    for key, tol, emg in runs:
        rows[key] = {}
        for run in ("cold", "warm"):
            print(f"[{key}] moco_lab {run} ...", flush=True)
            rows[key][f"moco_lab {run}"] = moco_lab_solve(tol, cold=run == "cold", emg=emg)
        print(f"[{key}] moco_lab, exact Hessian ...", flush=True)
        moco_lab_solve(tol, cold=False, emg=emg, hessian="exact")  # compiles its second derivatives
        rows[key]["moco_lab warm, exact Hessian"] = moco_lab_solve(tol, cold=False, emg=emg, hessian="exact")
        if args.skip_moco:   # the stored run's row, with its date (the table says which rows are not this run's)
            moco = {**stored["results"][key],
                    "run": stored.get("environments", {}).get(key, stored["environment"]).get("date")}
        else:
            print(f"[{key}] Moco ...", flush=True)
            moco = moco_solve(tol, REFERENCE / f"walking_3d_inverse_moco_{key}.sto", emg=emg)
        rows[key]["moco"] = moco
        print(json.dumps(rows[key], indent=1, default=float), flush=True)
    env = environment()
    if not args.skip_moco:
        results = {**stored.get("results", {}), **{k: v["moco"] for k, v in rows.items()}}
        runs_env = {**stored.get("environments", {}), **{k: env for k in rows}}
        ref_file.write_text(json.dumps({
            "what": "OpenSim Moco 4.6 on its exampleMocoInverse, with and without EMG (benchmarks/walking_3d_inverse.py)",
            "environment": env, "environments": runs_env,
            "settings": {**WALKING_3D_INVERSE_SETTINGS, "tolerances": list(TOLERANCES), "emg": WALKING_3D_EMG,
                         "solver": "MocoCasADiSolver (MocoInverse's defaults)"},
            "results": results}, indent=1, default=float))
    table = HERE / "walking_3d_inverse.json"  # every run's rows, so that a partial run keeps the others
    all_rows = {**(json.loads(table.read_text()) if table.exists() else {}), **rows}
    table.write_text(json.dumps(all_rows, indent=1, default=float))
    write_table(all_rows, env)


def write_table(rows: dict, env: dict) -> None:
    lines = ["# Muscle activity of 3-D walking (Moco's exampleMocoInverse): moco_lab and OpenSim Moco 4.6", "",
             f"{env['date']}; {env['machine']}; moco_lab {env['moco_lab']}, Drake {env['drake']}, "
             f"OpenSim {env['opensim']}. Produced by `benchmarks/walking_3d_inverse.py` (settings in its docstring; "
             "each problem's rows from the latest run that included it, all rows in `walking_3d_inverse.json`).",
             ""]
    stored_runs = {key: r["moco"]["run"] for key, r in rows.items() if r.get("moco", {}).get("run")}
    if stored_runs:
        lines += ["Moco's rows of " + ", ".join(f"`{k}` ({d})" for k, d in stored_runs.items()) + " are its stored runs "
                  "(`--skip-moco`: Moco not re-run), on this machine; moco_lab's rows are the latest run's.", ""]
    lines += ["| tolerances | tool | status | objective | iterations | solve (s) | Moco ÷ moco_lab |",
              "|---|---|---|---|---|---|---|"]
    for key, r in rows.items():
        moco_wall = r["moco"]["wall"]
        for tool, x in r.items():
            ratio = f"{moco_wall / x['wall']:.1f}×" if tool != "moco" else ""
            label = key[3:] if key.startswith("tol") else f"{key.split('_tol')[1]}, with EMG tracking"
            lines.append(f"| {label} | {tool} | {x['status']} | {x['objective']:.6f} | {x['iterations']} | "
                         f"{x['wall']:.1f} | {ratio} |")
    tight, loose = rows.get("tol1e-06"), rows.get("tol0.001")
    if tight and loose:
        a, b = tight["moco_lab warm"]["objective"], tight["moco"]["objective"]
        lines += ["", f"At tolerances 1e-6 the objectives differ by {abs(a - b) / b:.1e} (relative). At the example's "
                  "1e-3 each limited-memory run stops above that optimum, by "
                  f"{(loose['moco']['objective'] - b) / b:.1%} (Moco) and "
                  f"{(loose['moco_lab warm']['objective'] - b) / b:.1%} (moco_lab)."]
    emg = rows.get("emg_tol0.001")
    if emg:
        a, b = emg["moco_lab warm"], emg["moco"]
        lines += ["", f"With EMG tracking (weight 50): objectives {a['objective']:.6f} and {b['objective']:.6f} "
                  f"({abs(a['objective'] - b['objective']) / b['objective']:.1e} relative); effort "
                  f"{a['goals']['excitation_effort']:.6f} / {b['goals']['excitation_effort']:.6f}, tracking "
                  f"{a['goals']['emg_tracking']:.6f} / {b['goals']['emg_tracking']:.6f} (moco_lab / Moco)."]
    tight = rows.get("emg_tol1e-06")
    if tight:
        a, b = tight["moco_lab warm"]["objective"], tight["moco"]["objective"]
        c = tight.get("moco_lab warm, exact Hessian", {}).get("objective")
        lines += ["", f"With EMG tracking at tolerances 1e-6: objectives {a:.6f} (moco_lab) and {b:.6f} (Moco), "
                  f"{abs(a - b) / b:.1e} relative" + (f"; with the exact Hessian {c:.6f}, {abs(c - b) / b:.1e}" if c else "")
                  + "."]
    exact = {k: r["moco_lab warm, exact Hessian"] for k, r in rows.items() if "moco_lab warm, exact Hessian" in r}
    if exact:
        lines += ["", "*exact Hessian*: `optim_hessian_approximation=\"exact\"` (not the example's setting: Moco's "
                  "finite-difference Hessian is far too slow to use), the same problem otherwise. IPOPT takes far fewer "
                  "iterations (" + ", ".join(f"{k}: {r['moco_lab warm']['iterations']} → {exact[k]['iterations']}"
                                              for k, r in rows.items() if k in exact) + "); at tolerance 1e-3 it "
                  "stops elsewhere on the same flat valley (objectives a few per cent apart, as Moco's and "
                  "moco_lab's limited-memory stops are)."]
    (HERE / "walking_3d_inverse.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
