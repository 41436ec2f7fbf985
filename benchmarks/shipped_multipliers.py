"""Ship a walking dashboard's warm start with the optimizer's multipliers at it (used by
``benchmarks/gait2d_warm_starts.py`` and ``benchmarks/walking_2d_warm_starts.py``).

The dashboard's first solve of a walker continues the shipped walk from its multipliers when they are shipped beside
it for that mesh (``predicted_walk_N{n}.duals.npz``, :func:`moco_lab.ui.walking.shipped_duals`). They must belong to
the very program the dashboard poses, so they are made by that program: the dashboard's first solve at its default
settings, from the walk's motion alone; optionally continued with the exact Hessian from its own multipliers to a
tighter tolerance (a limited-memory solution stopped at a loose tolerance can sit where Newton's method, started from
it, takes a long step into another valley: docs/verification.md, "Warm starts"). The result replaces the walk, its
multipliers are written beside it, and a last solve checks that the dashboard continues from them.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
from importlib.metadata import version
from pathlib import Path

import numpy as np

import moco_lab as ml
from moco_lab.results.trajectory import Solution, Trajectory, read_trajectory
from moco_lab.ui import demos
from moco_lab.ui import walking as wk

__all__ = ["command_line", "ship_with_multipliers"]


def command_line(description: str, default_out: Path) -> tuple[argparse.Namespace, str]:
    """A warm-start script's command line, ``[--refine] [output folder]`` (``args.refine``, ``args.out``, created),
    and the line of versions its provenance records."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--refine", action="store_true",
                        help="only re-solve the shipped walks and ship them with their multipliers")
    parser.add_argument("out", nargs="?", type=Path, default=default_out)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = (f"{datetime.date.today().isoformat()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
           f"moco_lab {ml.__version__}, drake {version('drake')}, numpy {np.__version__}")
    return args, env


def ship_with_multipliers(walker: wk.Walker, n: int, source: Path, out: Path, *, env: str, generated_by: str,
                          problem: str, polish_tolerance: float | None = None) -> list[tuple[str, Solution]]:
    """Re-solve ``walker``'s dashboard problem on ``n`` mesh intervals from the walk in ``source`` and ship the
    solution as ``out/predicted_walk_N{n}.sto`` with its multipliers beside it (``.duals.npz``).

    ``problem`` and ``env`` go into both files' metadata; the walk's chain of solves is that of ``source`` plus
    this one. Returns ``[(label, solution), ...]`` for the provenance table: the solve from the motion, the polish
    (if ``polish_tolerance``) and the check (the dashboard's first solve from the new files). Raises
    ``RuntimeError`` if a solve fails or the check does not continue from the multipliers.
    """
    settings = {**demos.default_settings(walker.key), "mesh_intervals": n}
    wk.forget_warm_starts()
    alone = {**settings, "warm_start": "no"}   # from the motion alone (no multipliers shipped beside it are read)
    study = demos.apply_settings(wk.build_walk(dataclasses.replace(walker, shipped={n: source}), alone), alone)
    assert not study.solver.optim_warm_start
    sol = study.solve()
    rows = [(f"the dashboard's first solve from {source.name} (motion alone, "
             f"{study.solver.optim_hessian_approximation} Hessian)", sol)]
    if polish_tolerance is not None and sol.success and sol.duals is not None:
        study.solver.set_hessian_approximation("exact")
        study.solver.guess, study.solver.guess_duals, study.solver.optim_warm_start = sol, sol.duals, True
        study.solver.optim_convergence_tolerance = polish_tolerance
        sol = study.solve()
        rows.append((f"continued from it and its multipliers, exact Hessian, tolerance {polish_tolerance:g}", sol))
    for label, s in rows:
        print(f"{walker.key}, N = {n}, {label}: {s.summary()}", flush=True)
        if not s.success or s.duals is None:
            raise RuntimeError(f"{walker.key}, N = {n}, {label}: failed or kept no multipliers: {s.message}")
    before = read_trajectory(source).metadata
    chain = (f"{before.get('chain', before.get('problem', '?'))} (on {before.get('environment', '?').split(',')[0]}, "
             f"objective {before.get('objective', '?')}) -> " + " -> ".join(label for label, _ in rows))
    walk = Trajectory(sol.time, sol.states, sol.controls, sol.multipliers, sol.derivatives, sol.parameters)
    walk.metadata = {"generated_by": generated_by, "environment": env, "problem": problem, "chain": chain,
                     "status": sol.status, "objective": sol.objective, "num_iterations": sol.nit,
                     **{f"objective_{k}": v for k, v in sol.goal_values.items()}}
    sto = out / f"predicted_walk_N{n}.sto"
    walk.write_sto(sto)
    sol.duals.write(sto.with_suffix(".duals.npz"), {
        "settings": settings, "generated_by": generated_by, "environment": env, "problem": problem,
        "objective": sol.objective, "num_iterations": sol.nit, "status": sol.status})
    wk.forget_warm_starts()
    check = demos.apply_settings(wk.build_walk(dataclasses.replace(walker, shipped={n: sto}), settings), settings)
    again = check.solve()
    wk.forget_warm_starts()
    print(f"{walker.key}, N = {n}, the dashboard's first solve from the new walk and multipliers: {again.summary()}",
          flush=True)
    if "warm start: the guess's multipliers" not in again.message or not again.success:
        raise RuntimeError(f"{walker.key}, N = {n}: the dashboard did not continue the shipped walk: {again.message}")
    return rows + [("the dashboard's first solve from the new walk and its multipliers (the check)", again)]
