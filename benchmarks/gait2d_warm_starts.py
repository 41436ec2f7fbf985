"""Make the predicted gait cycles the gait2d walking dashboard starts from (shipped in ``moco_lab/data/gait2d``).

Predicting a gait cycle from scratch takes three solves (track Winter's gait, predict with 1 % tracking, predict
with effort alone: two to three minutes here), too long to wait for in a dashboard. This script runs that chain
once for each mesh the dashboard opens with (25 intervals under ``MOCO_LAB_FAST=1``, 50 for a learner) and writes
the effort-only prediction as ``moco_lab/data/gait2d/predicted_walk_N{n}.sto`` (a Moco trajectory file whose
header records how it was made: date, versions, settings, status, objective), plus the provenance table
``moco_lab/data/gait2d/predicted_walk.md``. The dashboard uses it only as a *guess*: every answer it shows comes
from a solve of the problem the learner posed.

Run from the repository root (about 6 minutes)::

    .venv/bin/python benchmarks/gait2d_warm_starts.py
"""
from __future__ import annotations

import datetime
import os
import platform
import time
from importlib.metadata import version

import numpy as np

import moco_lab as ml
from moco_lab.examples.gait2d import gait2d_prediction_study, gait2d_tracking_study
from moco_lab.results.trajectory import Trajectory
from moco_lab.util.data import GAIT2D_DIR

MESHES = (25, 50)
CHAIN = (("track Winter's gait", None), ("effort + 1 % tracking", 0.01), ("effort alone", 0.0))


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
            start = time.perf_counter()
            sol = study.solve()
            wall = time.perf_counter() - start
            print(f"N = {n}, {label}: {sol.summary()}", flush=True)
            if not sol.success:
                raise RuntimeError(f"N = {n}, {label} failed: {sol.status} {sol.message}")
            rows.append(f"| {n} | {label} | {sol.status} | {sol.nit} | {wall:.0f} | {sol.objective:.5f} |")
            guess = sol
        out = Trajectory(sol.time, sol.states, sol.controls, sol.multipliers, sol.derivatives, sol.parameters)
        out.metadata = {
            "generated_by": "benchmarks/gait2d_warm_starts.py", "environment": env,
            "problem": f"gait2d_prediction_study({n}): effort alone (weight 1, exponent 2), Winter's speed "
                       "1.325 m/s and stride 1.1396 s, periodic, implicit, trapezoidal, tolerance 1e-3",
            "chain": "gait2d_tracking_study -> prediction with tracking weight 0.01 -> prediction (each warm-started)",
            "status": sol.status, "objective": sol.objective, "num_iterations": sol.nit,
            **{f"objective_{k}": v for k, v in sol.goal_values.items()},
        }
        out.write_sto(GAIT2D_DIR / f"predicted_walk_N{n}.sto")
    text = ["# Predicted gait cycles shipped as warm starts", "",
            f"Written by `benchmarks/gait2d_warm_starts.py` on {env}. Each `predicted_walk_N*.sto` is the last "
            "solve of a chain of three, each warm-started from the one before (the first from Winter's angles); "
            "the gait2d walking dashboard starts its first solve from the file for its mesh.", "",
            "| N | solve | status | iterations | wall time (s) | objective |", "|--:|---|---|--:|--:|--:|", *rows]
    (GAIT2D_DIR / "predicted_walk.md").write_text("\n".join(text) + "\n", encoding="utf-8")
    print("\n".join(text))


if __name__ == "__main__":
    main()
