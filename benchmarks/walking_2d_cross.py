"""Moco's 2-D walking prediction: moco_lab's solutions put into OpenSim Moco's problem.

``benchmarks/walking_2d.py`` puts Moco's solutions into moco_lab's problems (``Study.evaluate``: Moco's point scores
Moco's objective there and meets the constraints to 1e-5). This script goes the other way for the prediction, where
the two tools stop at different points of a flat valley at the example's tolerance 1e-4: moco_lab's prediction
(the factory's settings, from moco_lab's tracking) and the same continued to tolerance 1e-6 are each given to Moco
as the guess of its own prediction (the C++ example's settings, :func:`benchmarks.walking_2d_moco.predict`; the
guess copied into Moco's variable order by name), once with no iteration (Moco's objective at the guess after
IPOPT's initialization has moved it inside the bounds, so not exactly the guess) and once solved to Moco's
tolerance 1e-4. Where Moco ends, and how many iterations it needs, tells whether moco_lab's points are points of
Moco's valley.

Writes ``benchmarks/walking_2d_cross.md``. Usage (about 15 minutes here)::

    PYTHONPATH=. .venv/bin/python -m benchmarks.walking_2d_cross
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import moco_lab as ml

HERE = Path(__file__).resolve().parent


def main() -> None:
    from benchmarks import walking_2d_moco as moco
    from benchmarks.compare_moco import environment  # imports OpenSim, the optional extra

    stored = json.loads((HERE / "reference" / "walking_2d_moco.json").read_text())["results"]["prediction"]
    tmp = Path(tempfile.mkdtemp(prefix="walking_2d_cross_"))
    print("moco_lab: tracking, prediction, prediction continued to 1e-6 ...", flush=True)
    tracked = ml.examples.walking_2d_tracking().solve()
    predicted = ml.examples.walking_2d_prediction(tracked).solve()
    refined = ml.examples.walking_2d_prediction(predicted, tol=1e-6).solve()
    rows = []
    for label, ours in (("prediction (tolerance 1e-4)", predicted), ("continued to tolerance 1e-6", refined)):
        path = tmp / f"{len(rows)}.sto"
        ours.write_sto(path)
        moco_runs = {}
        for iterations in (0, 1000):
            print(f"Moco from moco_lab's {label}, at most {iterations} iterations ...", flush=True)
            moco_runs[iterations] = moco.predict(path, tmp / f"moco_{len(rows)}_{iterations}.sto",
                                                 max_iterations=iterations)
        rows.append((label, ours, moco_runs))
    env = environment()
    lines = ["# Moco's 2-D walking prediction: moco_lab's solutions in OpenSim Moco's problem", "",
             f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; x86_64, {os.cpu_count()} cores; moco_lab "
             f"{env['moco_lab']}, Drake {env['drake']}, OpenSim {env['opensim']}. Produced by "
             "`benchmarks/walking_2d_cross.py` (what it does: its docstring). Moco's own prediction from its own "
             f"tracking (the stored reference): objective {stored['objective']:.6f}, final time "
             f"{stored['final_time']:.4f} s, {stored['iterations']} iterations.", "",
             "| moco_lab's point | its objective (moco_lab) | final time (s) | Moco at it, no iteration | "
             "Moco solved from it: objective, final time, iterations, status |", "|---|---|---|---|---|"]
    for label, ours, runs in rows:
        m0, m = runs[0], runs[1000]
        lines.append(f"| {label} | {ours.objective:.6f} | {ours.final_time:.4f} | {m0['objective']:.6f} | "
                     f"{m['objective']:.6f}, {m['final_time']:.4f} s, {m['iterations']}, {m['status']} |")
    (HERE / "walking_2d_cross.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"{time.perf_counter() - start:.0f} s")
