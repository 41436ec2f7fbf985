"""Moco's 2-D walking (``example2DWalking``): moco_lab and OpenSim Moco 4.6, same files, same settings, one run.

Both tools solve the tracking problem and then the prediction of :mod:`moco_lab.examples.walking_2d` — on Moco's
side the C++ example line for line (:mod:`benchmarks.walking_2d_moco`): ``2D_gait.osim``, the states reference
``referenceCoordinates.sto`` through ``TabOpLowPassFilter(6)``, contact tracking of ``referenceGRF.xml``, the
symmetry goal, 50 Hermite–Simpson intervals, explicit dynamics, tolerances 1e-4, at most 1000 iterations; the
prediction (1.2 m/s, effort ∫|u|³ per distance, tf in [0.4, 0.6]) from each tool's own tracking solution.

What is timed (wall clock): the whole ``solve()`` of a freshly built study. moco_lab *cold*: the compiled-dynamics
cache emptied (memory and disk, a temporary ``MOCO_LAB_CACHE``), so it derives and compiles the equations; *warm*:
the same solve again with the cache filled. Moco builds its CasADi functions on every solve. moco_lab solves with
IPOPT + MUMPS and IPOPT's extended L-BFGS step (the factories' defaults); one more warm tracking solve with Drake's
own IPOPT (SPRAL) shows what the linear solver is worth, and warm solves of both problems with IPOPT's default
L-BFGS step (Sherman-Morrison) what that option is worth.

Each tool's solutions are also put into the other tool's problem: Moco's into moco_lab's as they are (``Study.evaluate``:
goal values and constraint violations with no optimizer), moco_lab's into Moco's as the guess of a Moco solve (Moco's
Python interface cannot evaluate goals at a trajectory), which tells whether a difference in the objective is two
stopping points of one problem, two local optima, or two different problems.

Writes ``benchmarks/walking_2d.md`` (the tables) and ``benchmarks/reference/walking_2d_moco.json`` plus Moco's
solutions (``walking_2d_moco_tracking.sto``, ``walking_2d_moco_prediction.sto``): the stored reference the tests
compare with, with its provenance (versions, settings, date).

Usage::

    .venv/bin/python -m benchmarks.walking_2d               # hours: Moco's prediction dominates (1.5 h here)
    .venv/bin/python -m benchmarks.walking_2d --stored-moco-prediction   # Moco's tracking re-run, its prediction
                                                            # taken from the stored reference (~40 min)
    .venv/bin/python -m benchmarks.walking_2d --skip-moco   # moco_lab only, against the stored Moco reference
    ... --no-cross-solve                                    # without Moco's solves from moco_lab's solutions
    .venv/bin/python -m benchmarks.walking_2d_moco          # Moco only: (re)make the stored reference

With ``--stored-moco-prediction`` or ``--skip-moco`` the stored reference is not rewritten and the table says which
Moco rows were measured in this run and which are stored (with the date and load of the run that stored them).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ["MOCO_LAB_CACHE"] = tempfile.mkdtemp(prefix="moco_lab_walking_2d_")  # never the user's cache

import moco_lab as ml
from moco_lab.engine.kernel import clear_kernel_cache
from moco_lab.results.trajectory import read_trajectory
from moco_lab.symbolic import codegen

HERE = Path(__file__).resolve().parent
SHERMAN_MORRISON = {"limited_memory_aug_solver": "sherman-morrison"}  # IPOPT's default, which the factories change
REFERENCE = HERE / "reference"
SETTINGS = {"num_mesh_intervals": 50, "transcription_scheme": "hermite-simpson", "multibody_dynamics_mode": "explicit",
            "optim_convergence_tolerance": 1e-4, "optim_constraint_tolerance": 1e-4, "optim_max_iterations": 1000,
            "tracking": {"final_time": 0.470089, "states_tracking_weight": 1, "control_effort_weight": 10,
                         "contact_tracking_weight": 1, "lowpass_cutoff_frequency": 6},
            "prediction": {"speed": 1.2, "effort_weight": 10, "effort_exponent": 3, "divide_by_displacement": True,
                           "final_time_bounds": [0.4, 0.6], "guess": "the same tool's tracking solution"}}


def summary(solution, wall: float) -> dict:
    solution.unseal()
    return {"success": solution.success, "status": solution.status, "objective": solution.objective,
            "iterations": solution.nit, "solver_duration": solution.solve_time, "wall": wall,
            "final_time": solution.final_time, "goals": dict(solution.goal_values)}


def moco_lab_solve(kind: str, cold: bool, guess=None, linear_solver: str = "mumps",
                   options: dict | None = None) -> tuple[dict, object]:
    """Build and solve the factory's study (``options``: IPOPT options over the factory's); the summary, the solution."""
    if cold:
        clear_kernel_cache(disk=True)
    t = time.perf_counter()
    study = ml.examples.walking_2d_study(kind, linear_solver=linear_solver) if kind == "tracking" else \
        ml.examples.walking_2d_study(kind, guess=guess, linear_solver=linear_solver)
    study.solver.optim_solver_options.update(options or {})
    solution = study.solve()
    wall = time.perf_counter() - t
    codegen.wait_for_optimized_builds()  # the background rebuild a cold solve starts: not beside the next one
    return summary(solution, wall), solution


def evaluate_in_moco_lab(kind: str, trajectory) -> dict:
    """moco_lab's goal values at ``trajectory`` and its largest constraint violation there (``Study.evaluate``: the
    trajectory as it is, no optimizer)."""
    e = ml.examples.walking_2d_study(kind).evaluate(trajectory)
    return {"objective": e.objective, "goals": dict(e.goal_values), "constraint_violation": e.constraint_violation,
            "worst_constraint": e.worst_constraint}


REFERENCE_FILE = REFERENCE / "walking_2d_moco.json"
REFERENCE_STO = {k: REFERENCE / f"walking_2d_moco_{k}.sto" for k in ("tracking", "prediction")}


def store_reference(results: dict, conditions: str) -> None:
    """Write Moco's results (``{"tracking": ..., "prediction": ...}``, as :mod:`benchmarks.walking_2d_moco` returns
    them; their solutions already in ``REFERENCE_STO``) to ``REFERENCE_FILE`` with their provenance."""
    from benchmarks.compare_moco import environment  # imports OpenSim, the optional extra

    REFERENCE.mkdir(exist_ok=True)
    REFERENCE_FILE.write_text(json.dumps({
        "what": "OpenSim Moco 4.6 on its example2DWalking (the C++ example's settings; "
                "benchmarks/walking_2d.py, benchmarks/walking_2d_moco.py)",
        "environment": environment(), "conditions": conditions, "settings": SETTINGS,
        "results": results}, indent=1, default=float) + "\n")


def main() -> None:
    from benchmarks import walking_2d_moco as moco

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-moco", action="store_true", help="reuse the stored Moco reference")
    parser.add_argument("--stored-moco-prediction", action="store_true",
                        help="re-run Moco's tracking, reuse its stored prediction")
    parser.add_argument("--no-cross-solve", action="store_true",
                        help="skip Moco's solves started from moco_lab's solutions (untimed; ~10-25 min here)")
    args = parser.parse_args()
    stored = json.loads(REFERENCE_FILE.read_text()) if REFERENCE_FILE.exists() else {}
    sto = dict(REFERENCE_STO)
    rows: dict = {"tracking": {}, "prediction": {}}
    ours: dict = {}

    print("[tracking] moco_lab cold ...", flush=True)
    rows["tracking"]["moco_lab_cold"], _ = moco_lab_solve("tracking", cold=True)
    print("[tracking] moco_lab warm ...", flush=True)
    rows["tracking"]["moco_lab_warm"], ours["tracking"] = moco_lab_solve("tracking", cold=False)
    print("[tracking] moco_lab warm, Drake's IPOPT (SPRAL) ...", flush=True)
    rows["tracking"]["moco_lab_spral_warm"], _ = moco_lab_solve("tracking", cold=False, linear_solver="spral")
    print("[tracking] moco_lab warm, IPOPT's default L-BFGS step (Sherman-Morrison) ...", flush=True)
    rows["tracking"]["moco_lab_sherman_morrison_warm"], _ = moco_lab_solve("tracking", cold=False,
                                                                           options=SHERMAN_MORRISON)
    print("[prediction] moco_lab cold ...", flush=True)
    rows["prediction"]["moco_lab_cold"], _ = moco_lab_solve("prediction", cold=True, guess=ours["tracking"])
    print("[prediction] moco_lab warm ...", flush=True)
    rows["prediction"]["moco_lab_warm"], ours["prediction"] = moco_lab_solve("prediction", cold=False,
                                                                             guess=ours["tracking"])
    print("[prediction] moco_lab warm, IPOPT's default L-BFGS step (Sherman-Morrison) ...", flush=True)
    rows["prediction"]["moco_lab_sherman_morrison_warm"], _ = moco_lab_solve(
        "prediction", cold=False, guess=ours["tracking"], options=SHERMAN_MORRISON)
    measured = {"tracking": not args.skip_moco, "prediction": not (args.skip_moco or args.stored_moco_prediction)}
    tmp_moco = Path(tempfile.mkdtemp(prefix="moco_walking_2d_"))
    for kind in rows:
        if not measured[kind]:
            rows[kind]["moco"] = stored["results"][kind]
            continue
        print(f"[{kind}] Moco ...", flush=True)
        if not all(measured.values()):  # a partial run never overwrites the stored reference's solutions
            sto[kind] = tmp_moco / f"{kind}.sto"
        rows[kind]["moco"] = moco.track(sto[kind]) if kind == "tracking" else \
            moco.predict(sto["tracking"], sto[kind])
    print(json.dumps(rows, indent=1, default=float), flush=True)

    # each tool's solution in the other tool's problem: Moco's, as it is, in moco_lab's (Study.evaluate); moco_lab's
    # in Moco's as far as Moco allows (its Python interface has no goal evaluation, and IPOPT even with no iteration
    # moves the point inside the bounds): Moco's solve started from moco_lab's solution, and where it ends
    cross: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("tracking", "prediction"):
            ours_sto = Path(tmp) / f"ours_{kind}.sto"
            ours[kind].write_sto(ours_sto)
            cross[kind] = {"moco_in_moco_lab": evaluate_in_moco_lab(kind, read_trajectory(sto[kind]))}
            if not measured[kind] or args.no_cross_solve:
                cross[kind]["moco_from_moco_lab"] = None
                continue
            print(f"[{kind}] Moco from moco_lab's solution ...", flush=True)
            if kind == "tracking":
                theirs = moco.track(Path(tmp) / "from_ours.sto", guess=ours_sto)
            else:
                theirs = moco.predict(ours_sto, Path(tmp) / "from_ours.sto")
            cross[kind]["moco_from_moco_lab"] = theirs
    print(json.dumps(cross, indent=1, default=float), flush=True)

    from benchmarks.compare_moco import environment

    env = environment()
    if all(measured.values()):
        store_reference({kind: rows[kind]["moco"] for kind in rows},
                        f"measured by benchmarks/walking_2d.py, load average at the end {os.getloadavg()}")
    write_table(rows, cross, env, measured, stored)


def write_table(rows: dict, cross: dict, env: dict, measured: dict, stored: dict) -> None:
    flags = [k for k, m in measured.items() if not m]
    note = "." if not flags else (
        f": Moco's {' and '.join(flags)} row{'s are' if len(flags) > 1 else ' is'} the stored reference, not this "
        f"run (stored {stored['environment']['date']}; {stored.get('conditions', '')}), so "
        f"{'their' if len(flags) > 1 else 'its'} ratio compares runs at different times.")
    lines = ["# Moco's 2-D walking (example2DWalking): moco_lab and OpenSim Moco 4.6", "",
             f"{env['date']}; {env['machine']}; moco_lab {env['moco_lab']}, Drake {env['drake']}, "
             f"OpenSim {env['opensim']}; load average at the end {os.getloadavg()[0]:.2f}. Produced by "
             f"`benchmarks/walking_2d.py` (settings in its docstring)" + note, "",
             "| problem | tool | objective | goals | final time (s) | iterations | solve (s) | per iteration (ms) "
             "| Moco ÷ moco_lab |",
             "|---|---|---|---|---|---|---|---|---|"]
    for kind, r in rows.items():
        moco_wall = r["moco"]["wall"]
        for tool in ("moco_lab_cold", "moco_lab_warm", "moco_lab_spral_warm", "moco_lab_sherman_morrison_warm",
                     "moco"):
            if tool not in r:
                continue
            x = r[tool]
            goals = ", ".join(f"{k} {v:.5f}" for k, v in x["goals"].items() if v != 0)
            ratio = f"{moco_wall / x['wall']:.1f}×" if tool != "moco" else ""
            lines.append(f"| {kind} | {tool.replace('_', ' ')} | {x['objective']:.6f} | {goals} | "
                         f"{x['final_time']:.4f} | {x['iterations']} | {x['wall']:.1f} | "
                         f"{1000 * x['wall'] / max(1, x['iterations']):.0f} | {ratio} |")
    lines += ["", "moco_lab solves with IPOPT + MUMPS (`optim_linear_solver=\"mumps\"`, the study factories' default, as "
              "Moco) and IPOPT's `limited_memory_aug_solver=\"extended\"` (the factories set it: the L-BFGS "
              "Hessian's factors go into the one factorized KKT system instead of IPOPT's default Sherman-Morrison "
              "update, which costs extra back-solves at every step). In the same run: *moco lab spral warm*, the "
              "tracking with Drake's own IPOPT (SPRAL on a reference BLAS; `linear_solver=\"spral\"`); *moco lab "
              "sherman morrison warm*, IPOPT's default step (`limited_memory_aug_solver=\"sherman-morrison\"`). "
              "At tolerance 1e-4 the prediction stops somewhere on a flat valley of effort per distance, and where "
              "depends on the iterates' path (tests/test_walking_2d.py: objectives -4e-4 to +1.4e-2 relative to "
              "Moco's, 324-462 iterations over IPOPT option sets); continued to 1e-6 both tools' valley has one "
              "bottom (lesson 11, docs/verification.md)."]
    lines += ["", "Each tool's solution in the other tool's problem: Moco's judged by moco_lab's problem as it is "
              "(`Study.evaluate`, no optimizer); Moco's solve started from moco_lab's solution (its Python interface "
              "cannot evaluate goals at a given trajectory):", "",
              "| problem | Moco's solution in moco_lab's problem | max constraint violation | Moco from moco_lab's "
              "solution: objective, iterations |", "|---|---|---|---|"]
    for kind, c in cross.items():
        m, f = c["moco_in_moco_lab"], c["moco_from_moco_lab"]
        moco_from = "not run in this run" if f is None else (
            f"{f['objective']:.7f}, {f['iterations']} (moco_lab's: {rows[kind]['moco_lab_warm']['objective']:.7f})")
        lines.append(f"| {kind} | {m['objective']:.7f} (Moco's own: {rows[kind]['moco']['objective']:.7f}) | "
                     f"{m['constraint_violation']:.1e} ({m['worst_constraint']}) | {moco_from} |")
    (HERE / "walking_2d.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
