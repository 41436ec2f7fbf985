"""Make the predicted gait cycles the gait2d walking dashboard starts from (shipped in ``moco_lab/data/gait2d``).

Predicting a gait cycle from scratch takes three solves (track Winter's gait, predict with 1 % tracking, predict
with effort alone: two to three minutes here), too long to wait for in a dashboard. This script runs that chain
once for each mesh the dashboard opens with (25 intervals under ``MOCO_LAB_FAST=1``, 50 for a learner) and writes
the effort-only prediction as ``moco_lab/data/gait2d/predicted_walk_N{n}.sto`` and the N = 50 tracking solution
as ``tracked_walk_N50.sto`` (Moco trajectory files whose headers record how they were made: date, versions,
settings, status, objective), plus the provenance table
``moco_lab/data/gait2d/predicted_walk.md``. The dashboard uses it only as a *guess*: every answer it shows comes
from a solve of the problem the learner posed.

Run from the repository root (about 6 minutes)::

    .venv/bin/python benchmarks/gait2d_warm_starts.py [output folder, default moco_lab/data/gait2d]
"""
from __future__ import annotations

import datetime
import os
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

import moco_lab as ml
from moco_lab.examples.gait2d import gait2d_prediction_study, gait2d_tracking_study
from moco_lab.results.trajectory import Trajectory
from moco_lab.util.data import GAIT2D_DIR

MESHES = (25, 50)
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else GAIT2D_DIR  # another folder: to compare before replacing
CHAIN = (("track Winter's gait", None), ("effort + 1 % tracking", 0.01), ("effort alone", 0.0))


def write(sol, n: int, stem: str, env: str, problem: str, chain: str) -> None:
    """Write ``sol`` as ``moco_lab/data/gait2d/{stem}_N{n}.sto`` with its provenance in the header."""
    out = Trajectory(sol.time, sol.states, sol.controls, sol.multipliers, sol.derivatives, sol.parameters)
    out.metadata = {"generated_by": "benchmarks/gait2d_warm_starts.py", "environment": env, "problem": problem,
                    "chain": chain, "status": sol.status, "objective": sol.objective, "num_iterations": sol.nit,
                    **{f"objective_{k}": v for k, v in sol.goal_values.items()}}
    out.write_sto(OUT / f"{stem}_N{n}.sto")


def main() -> None:
    date = datetime.date.today().isoformat()
    env = (f"{date}, {os.cpu_count()} CPUs, Python {platform.python_version()}, moco_lab {ml.__version__}, "
           f"drake {version('drake')}, numpy {np.__version__}")
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
    text = ["# gait2d gait cycles shipped with moco_lab: how they were made", "",
            f"Written by `benchmarks/gait2d_warm_starts.py` on {env}. Each `predicted_walk_N*.sto` is the last "
            "solve of a chain of three, each warm-started from the one before (the first from Winter's angles); "
            "the gait2d walking dashboard starts its first solve from the file for its mesh. `tracked_walk_N50.sto` is "
            "the first solve of the N = 50 chain (tracking Winter's angles and ground reaction forces): the motion of the "
            "synthetic subject of the motion-capture lessons (`moco_lab.examples.synthetic`).", "",
            "| N | solve | status | iterations | objective |", "|--:|---|---|--:|--:|", *rows]
    (OUT / "predicted_walk.md").write_text("\n".join(text) + "\n", encoding="utf-8")
    print("\n".join(text))


if __name__ == "__main__":
    main()
