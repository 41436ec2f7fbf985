"""Make the predictions the 2-D walking dashboard starts from (shipped in ``moco_lab/data/walking_2d``).

Predicting Moco's 2-D walking takes two solves (track the example's data, then predict from the tracking solution:
several minutes here), too long to wait for when a dashboard opens. This script runs that chain once for each mesh
the dashboard opens with (15 intervals under ``MOCO_LAB_FAST=1``, 50 for a learner) and writes the prediction as
``moco_lab/data/walking_2d/predicted_walk_N{n}.sto`` (a Moco trajectory file whose header records how it was made:
date, versions, settings, status, objective), plus the provenance table ``predicted_walk.md``. The dashboard uses it
only as a *guess*: every answer it shows comes from a solve of the problem the learner posed.

Each chain ends with the dashboard's own first solve (its default settings at that mesh, the limited-memory
Hessian from the prediction's motion), continued with the exact Hessian from its own multipliers to tolerance 1e-6:
that solution replaces the prediction and its multipliers are written beside it (``predicted_walk_N{n}.duals.npz``),
so that the dashboard's first solve continues it by Newton's method (``moco_lab.ui.walking.build_walk``) and every
later continuation starts from an accurate optimum. (Measured on 2026-11-30 at N = 50: the limited-memory first
solve stops at 0.13482 at the dashboard's tolerance 1e-4, where the optimum is 0.134485; continued from there at
1e-4, Newton's method took a long step into another valley, 0.14242: docs/verification.md, "Warm starts".) With
``--refine`` only that last step runs, from the predictions already shipped, and its rows are appended to the
provenance table; ``tests/test_walking_dashboard.py`` says when the transcription has changed and the multipliers
must be made again.

Run from the repository root (``--refine``: about a minute)::

    .venv/bin/python -m benchmarks.walking_2d_warm_starts [--refine] [output folder, default moco_lab/data/walking_2d]
"""
from __future__ import annotations

from pathlib import Path

import moco_lab as ml
from benchmarks.shipped_multipliers import command_line, ship_with_multipliers
from moco_lab.results.trajectory import Trajectory
from moco_lab.util.data import WALKING_2D_DIR, WALKING_2D_PREDICTED

OUT = WALKING_2D_DIR  # another folder (the command line's): to compare before replacing
POLISH_TOLERANCE = 1e-6


def ship(n: int, env: str, source: Path) -> list[str]:
    """The dashboard's first solve at ``n`` mesh intervals from the prediction in ``source``, continued to
    :data:`POLISH_TOLERANCE` and shipped with its multipliers; the provenance table's rows."""
    from moco_lab.ui.walking import WALKING_2D

    problem = (f"ml.examples.walking_2d_prediction(guess, num_mesh_intervals={n}) as the walking dashboard poses its "
               "first solve (Moco's example2DWalking prediction: 1.2 m/s, effort exponent 3 per distance, weight 10, "
               "Hermite-Simpson, explicit, tolerance 1e-4; solved to 1e-6)")
    rows = ship_with_multipliers(WALKING_2D, n, source, OUT, env=env,
                                 generated_by="benchmarks/walking_2d_warm_starts.py", problem=problem,
                                 polish_tolerance=POLISH_TOLERANCE)
    return [f"| {n} | {label} | {sol.status} | {sol.nit} | {sol.objective:.6f} | {sol.final_time:.4f} |"
            for label, sol in rows]


def main() -> None:
    global OUT
    args, env = command_line(__doc__.split("\n")[0], WALKING_2D_DIR)
    OUT = args.out
    if args.refine:
        rows = [row for n in sorted(WALKING_2D_PREDICTED) for row in ship(n, env, WALKING_2D_PREDICTED[n])]
        text = (WALKING_2D_DIR / "predicted_walk.md").read_text(encoding="utf-8").rstrip("\n")
        text += ("\n\nRefined by `benchmarks/walking_2d_warm_starts.py --refine` on " + env + ": each prediction "
                 "above re-solved as the dashboard's first solve, continued to tolerance 1e-6 with the exact Hessian, "
                 "replaced by that solution and shipped with its multipliers (`predicted_walk_N*.duals.npz`).\n\n"
                 "| N | solve | status | iterations | objective | final time (s) |\n|--:|---|---|--:|--:|--:|\n"
                 + "\n".join(rows) + "\n")
        (OUT / "predicted_walk.md").write_text(text, encoding="utf-8")
        print(text)
        return
    rows = []
    for n in sorted(WALKING_2D_PREDICTED):
        tracked = ml.examples.walking_2d_tracking(num_mesh_intervals=n).solve()
        print(f"N = {n}, tracking: {tracked.summary()}", flush=True)
        predicted = ml.examples.walking_2d_prediction(tracked, num_mesh_intervals=n).solve()
        print(f"N = {n}, prediction: {predicted.summary()}", flush=True)
        for label, sol in (("tracking", tracked), ("prediction from the tracking", predicted)):
            if not sol.success:
                raise RuntimeError(f"N = {n}, {label} failed: {sol.status} {sol.message}")
            rows.append(f"| {n} | {label} | {sol.status} | {sol.nit} | {sol.objective:.6f} | {sol.final_time:.4f} |")
        out = Trajectory(predicted.time, predicted.states, predicted.controls)
        out.metadata = {"generated_by": "benchmarks/walking_2d_warm_starts.py", "environment": env,
                        "problem": f"ml.examples.walking_2d_prediction(tracking solution, num_mesh_intervals={n}) "
                                   "(Moco's example2DWalking prediction: 1.2 m/s, effort exponent 3 per distance)",
                        "status": predicted.status, "objective": predicted.objective, "num_iterations": predicted.nit}
        out.write_sto(OUT / f"predicted_walk_N{n}.sto")
        rows += ship(n, env, OUT / f"predicted_walk_N{n}.sto")
    (OUT / "predicted_walk.md").write_text(
        "# 2-D walking predictions shipped with moco_lab: how they were made\n\n"
        f"Written by `benchmarks/walking_2d_warm_starts.py` on {env}. For each mesh, Moco's 2-D walking example as "
        "moco_lab poses it: the tracking problem (`ml.examples.walking_2d_tracking`), then the prediction "
        "(`walking_2d_prediction`) from its solution, then the dashboard's first solve from it, continued to "
        "tolerance 1e-6 with the exact Hessian, is written to `predicted_walk_N{n}.sto` (a Moco trajectory file; its "
        "header repeats this provenance) with its multipliers beside it (`predicted_walk_N{n}.duals.npz`). The 2-D "
        "walking dashboard starts its first solve from the files for its mesh.\n\n"
        "| N | solve | status | iterations | objective | final time (s) |\n|--:|---|---|--:|--:|--:|\n"
        + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
