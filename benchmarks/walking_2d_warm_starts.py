"""Make the predictions the 2-D walking dashboard starts from (shipped in ``moco_lab/data/walking_2d``).

Predicting Moco's 2-D walking takes two solves (track the example's data, then predict from the tracking solution:
several minutes here), too long to wait for when a dashboard opens. This script runs that chain once for each mesh
the dashboard opens with (15 intervals under ``MOCO_LAB_FAST=1``, 50 for a learner) and writes the prediction as
``moco_lab/data/walking_2d/predicted_walk_N{n}.sto`` (a Moco trajectory file whose header records how it was made:
date, versions, settings, status, objective), plus the provenance table ``predicted_walk.md``. The dashboard uses it
only as a *guess*: every answer it shows comes from a solve of the problem the learner posed.

Run from the repository root::

    .venv/bin/python benchmarks/walking_2d_warm_starts.py [output folder, default moco_lab/data/walking_2d]
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
from moco_lab.results.trajectory import Trajectory
from moco_lab.util.data import WALKING_2D_DIR, WALKING_2D_PREDICTED

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else WALKING_2D_DIR  # another folder: to compare before replacing


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    env = (f"{date}, {os.cpu_count()} CPUs, Python {platform.python_version()}, moco_lab {ml.__version__}, "
           f"drake {version('drake')}, numpy {np.__version__}")
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
    (OUT / "predicted_walk.md").write_text(
        "# 2-D walking predictions shipped with moco_lab: how they were made\n\n"
        f"Written by `benchmarks/walking_2d_warm_starts.py` on {env}. For each mesh, Moco's 2-D walking example as "
        "moco_lab poses it: the tracking problem (`ml.examples.walking_2d_tracking`), then the prediction "
        "(`walking_2d_prediction`) from its solution; the prediction is written to `predicted_walk_N{n}.sto` (a "
        "Moco trajectory file; its header repeats this provenance). The 2-D walking dashboard starts its first "
        "solve from the file for its mesh.\n\n"
        "| N | solve | status | iterations | objective | final time (s) |\n|--:|---|---|--:|--:|--:|\n"
        + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
