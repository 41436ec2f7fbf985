"""Make the predicted gait cycles the gait2d walking dashboard starts from (shipped in ``moco_lab/data/gait2d``).

Predicting a gait cycle from scratch takes three solves (track Winter's gait, predict with 1 % tracking, predict
with effort alone: two to three minutes here), too long to wait for in a dashboard. This script runs that chain
once for each mesh the dashboard opens with (25 intervals under ``MOCO_LAB_FAST=1``, 50 for a learner) and writes
the effort-only prediction as ``moco_lab/data/gait2d/predicted_walk_N{n}.sto`` and the N = 50 tracking solution
as ``tracked_walk_N50.sto`` (Moco trajectory files whose headers record how they were made: date, versions,
settings, status, objective), plus the provenance table
``moco_lab/data/gait2d/predicted_walk.md``. The dashboard uses it only as a *guess*: every answer it shows comes
from a solve of the problem the learner posed.

Each chain ends with the dashboard's own first solve (its default settings at that mesh, from the chain's walk):
its solution replaces the walk, and the optimizer's multipliers at it are written beside it as
``predicted_walk_N{n}.duals.npz`` (``Duals.write``, with the dashboard settings they were solved with), so that the
dashboard's first solve continues the shipped walk from its multipliers (Newton's method, a few iterations) instead
of restarting the interior-point method from the motion alone (``moco_lab.ui.walking.build_walk``). The
multipliers fit one program structure only: when the transcription changes, the test suite says so
(tests/test_walking_dashboard.py) and this script, with ``--refine``, makes them again from the shipped walks.

The dashboard's first solve on 50 intervals is continued with the exact Hessian to tolerance 1e-6
(:data:`POLISH_TOLERANCE`) before it is shipped. With ``--refine`` only that last step runs, from the walks already
shipped (minutes: the polish of the N = 50 walk took 916 iterations; the tracking solution ``tracked_walk_N50.sto``
is left alone), and its rows are appended to the provenance table. Measured on 2026-11-30:
today's chain from Winter's angles ends at a higher effort than the walks of 2026-11-25 it would replace (0.30 and
0.35 at N = 25 and 50, against 0.213 and 0.257 from the shipped walks), so the shipped walks were refined instead.

Run from the repository root (about 10 minutes; ``--refine``: about 5)::

    .venv/bin/python -m benchmarks.gait2d_warm_starts [--refine] [output folder, default moco_lab/data/gait2d]
"""
from __future__ import annotations

from pathlib import Path

from benchmarks.shipped_multipliers import command_line, ship_with_multipliers
from moco_lab.examples.gait2d import gait2d_prediction_study, gait2d_tracking_study
from moco_lab.results.trajectory import Trajectory
from moco_lab.util.data import GAIT2D_DIR

MESHES = (25, 50)
OUT = GAIT2D_DIR  # another folder (the command line's): to compare before replacing
CHAIN = (("track Winter's gait", None), ("effort + 1 % tracking", 0.01), ("effort alone", 0.0))
#: The shipped walk of each mesh is the dashboard's first solve continued to this tolerance (at its own 1e-3, gait2d
#: stops in a flat valley 7 % above the optimum: docs/verification.md, "Warm starts"); None: not continued. Not on
#: 25 intervals: there the continued walk (0.16374 against 0.20541) has a node with both feet in the air, the coarse
#: mesh trading impact for effort, and the test suite's walk must be a walk.
POLISH_TOLERANCE = {25: None, 50: 1e-6}


def write(sol, n: int, stem: str, env: str, problem: str, chain: str) -> None:
    """Write ``sol`` as ``moco_lab/data/gait2d/{stem}_N{n}.sto`` with its provenance in the header."""
    out = Trajectory(sol.time, sol.states, sol.controls, sol.multipliers, sol.derivatives, sol.parameters)
    out.metadata = {"generated_by": "benchmarks/gait2d_warm_starts.py", "environment": env, "problem": problem,
                    "chain": chain, "status": sol.status, "objective": sol.objective, "num_iterations": sol.nit,
                    **{f"objective_{k}": v for k, v in sol.goal_values.items()}}
    out.write_sto(OUT / f"{stem}_N{n}.sto")


def ship(n: int, env: str, source: Path) -> list[str]:
    """The dashboard's first solve at ``n`` mesh intervals from the walk in ``source``, shipped with its multipliers
    (:func:`benchmarks.shipped_multipliers.ship_with_multipliers`); the provenance table's rows."""
    from moco_lab.ui.walking import GAIT2D

    problem = (f"gait2d_prediction_study({n}) as the gait2d walking dashboard poses its first solve (default "
               "settings: effort alone, weight 1, exponent 2, Winter's speed 1.325 m/s and stride 1.1396 s, periodic, "
               "implicit, trapezoidal, tolerance 1e-3, exact Hessian, IPOPT + MUMPS"
               + (f"; solved to {POLISH_TOLERANCE[n]:g})" if POLISH_TOLERANCE[n] else ")"))
    rows = ship_with_multipliers(GAIT2D, n, source, OUT, env=env, generated_by="benchmarks/gait2d_warm_starts.py",
                                 problem=problem, polish_tolerance=POLISH_TOLERANCE[n])
    return [f"| {n} | {label} | {sol.status} | {sol.nit} | {sol.objective:.5f} |" for label, sol in rows]


def main() -> None:
    global OUT
    args, env = command_line(__doc__.split("\n")[0], GAIT2D_DIR)
    OUT = args.out
    if args.refine:
        rows = [row for n in MESHES for row in ship(n, env, GAIT2D_DIR / f"predicted_walk_N{n}.sto")]
        md = GAIT2D_DIR / "predicted_walk.md"
        text = md.read_text(encoding="utf-8").rstrip("\n").split("\n")
        text += ["", f"Refined by `benchmarks/gait2d_warm_starts.py --refine` on {env}: each walk above re-solved as "
                 "the dashboard's first solve (N = 50: continued to tolerance 1e-6 with the exact Hessian), replaced by "
                 "that solution and shipped with its multipliers (`predicted_walk_N*.duals.npz`).", "",
                 "| N | solve | status | iterations | objective |", "|--:|---|---|--:|--:|", *rows]
        (OUT / "predicted_walk.md").write_text("\n".join(text) + "\n", encoding="utf-8")
        print("\n".join(text))
        return
    rows = []
    for n in MESHES:
        guess = None
        for label, weight in CHAIN:
            study = gait2d_tracking_study(n) if weight is None else gait2d_prediction_study(
                n, guess=guess, tracking_weight=weight)
            sol = study.solve()
            print(f"N = {n}, {label}: {sol.summary()}", flush=True)
            if not sol.success:
                raise RuntimeError(f"N = {n}, {label} failed: {sol.status} {sol.message}")
            rows.append(f"| {n} | {label} | {sol.status} | {sol.nit} | {sol.objective:.5f} |")
            if weight is None and n == 50:  # the synthetic subject's motion
                write(sol, n, "tracked_walk", env, f"gait2d_tracking_study({n}): Winter's joint angles and ground "
                      "reaction forces (weighted by their variances) plus 0.1 effort, periodic, implicit, "
                      "trapezoidal, tolerance 1e-3", "from Winter's angles (gait2d_walking_guess)")
            guess = sol
        write(sol, n, "predicted_walk", env, f"gait2d_prediction_study({n}): effort alone (weight 1, exponent 2), "
              "Winter's speed 1.325 m/s and stride 1.1396 s, periodic, implicit, trapezoidal, tolerance 1e-3",
              "gait2d_tracking_study -> prediction with tracking weight 0.01 -> prediction (each warm-started)")
        rows += ship(n, env, OUT / f"predicted_walk_N{n}.sto")
    text = ["# gait2d gait cycles shipped with moco_lab: how they were made", "",
            f"Written by `benchmarks/gait2d_warm_starts.py` on {env}. Each `predicted_walk_N*.sto` is the last "
            "solve of a chain of three, each warm-started from the one before (the first from Winter's angles); "
            "the last two rows of each mesh are the dashboard's first solve, which replaced the walk and whose multipliers "
            "are shipped beside it (`predicted_walk_N*.duals.npz`); the gait2d walking dashboard starts its first "
            "solve from the file for its mesh. `tracked_walk_N50.sto` is "
            "the first solve of the N = 50 chain (tracking Winter's angles and ground reaction forces): the motion of the "
            "synthetic subject of the motion-capture lessons (`moco_lab.examples.synthetic`).", "",
            "| N | solve | status | iterations | objective |", "|--:|---|---|--:|--:|", *rows]
    (OUT / "predicted_walk.md").write_text("\n".join(text) + "\n", encoding="utf-8")
    print("\n".join(text))


if __name__ == "__main__":
    main()
