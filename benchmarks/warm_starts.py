"""Warm starts: re-predicting a walk after a small change, from the previous solution's motion or from all of it.

The walking dashboard (``moco_lab.ui.walking``) re-solves each walker from its last solution after the learner
changes a muscle's strength, a goal or the speed. This benchmark solves each such change from the dashboard's first
solution (the walker's prediction at normal strength and its default speed, solved from the shipped walk as the
dashboard does) in five ways, side by side in one run:

* ``limited-memory``: IPOPT's L-BFGS Hessian from the solution's motion (the guess alone);
* ``exact``: the exact Hessian from the motion;
* ``exact, push 1e-6``: the exact Hessian from the motion, IPOPT's ``bound_push`` and ``bound_frac`` 1e-6 instead
  of 0.01 (the variables at their bounds stay there; the multipliers are IPOPT's estimates);
* ``exact, multipliers, pushes 1e-3``: ``SolverSettings.optim_warm_start`` (the motion and the solution's
  multipliers, IPOPT's ``warm_start_init_point``) with IPOPT's own warm-start pushes (1e-3);
* ``exact, multipliers``: ``optim_warm_start`` as moco_lab sets it (``WARM_START_OPTIONS``: pushes 1e-6).

Cases: Moco's 2-D walker on the test suite's mesh (N = 15; Hermite–Simpson, explicit, tolerance 1e-4) with ten
changes of one muscle group's strength and three of speed; gait2d (N = 25; trapezoidal, implicit, tolerance 1e-3)
with three changes of strength and three of speed, whose limited-memory and push columns are left out for the
speed rows (minutes each). Iteration limit 1,500. Two worker processes (``--child``), each solving the first solution
itself (the same bits: the program and MUMPS round alike on every kernel here, docs/verification.md).

Writes ``benchmarks/warm_starts.md`` (iterations, objective and wall time of each solve, with the run's
provenance). Usage::

    .venv/bin/python -m benchmarks.warm_starts               # ~15 min on 2 cores
    .venv/bin/python -m benchmarks.warm_starts --walkers walking_2d
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The five ways to start (column label -> Hessian, optim_warm_start, extra IPOPT options).
STARTS = {
    "limited-memory": ("limited-memory", False, {}),
    "exact": ("exact", False, {}),
    "exact, push 1e-6": ("exact", False, {"bound_push": 1e-6, "bound_frac": 1e-6}),
    "exact, multipliers, pushes 1e-3": ("exact", True, {
        "warm_start_bound_push": 1e-3, "warm_start_bound_frac": 1e-3, "warm_start_slack_bound_push": 1e-3,
        "warm_start_slack_bound_frac": 1e-3, "warm_start_mult_bound_push": 1e-3}),
    "exact, multipliers": ("exact", True, {}),
}
#: Each walker's mesh and changes (dashboard settings); changes of speed are marked for the cheaper columns.
WALKERS = {
    "walking_2d": (15, [{"strength_soleus": 50.0}, {"strength_soleus": 30.0}, {"strength_soleus": 70.0},
                        {"strength_soleus": 150.0}, {"strength_gastroc": 50.0}, {"strength_vasti": 60.0},
                        {"strength_glut_max": 50.0}, {"strength_hamstrings": 40.0}, {"strength_tib_ant": 30.0},
                        {"strength_iliopsoas": 200.0}, {"speed": 1.3}, {"speed": 1.0}, {"speed": 1.5}]),
    "gait2d_walking": (25, [{"strength_soleus": 70.0, "strength_gastrocnemius": 70.0}, {"strength_glutei": 50.0},
                            {"strength_vasti": 50.0}, {"speed": 1.45}, {"speed": 1.6}, {"speed": 1.0}]),
}
SPEED_STARTS = {"gait2d_walking": ("exact", "exact, multipliers")}   # the others take minutes per speed row
MAX_ITERATIONS = 1500


def _child(walker_key: str, starts: list[str]) -> None:
    """Solve the walker's first solution, then every change with each of ``starts``; one JSON line per solve."""
    from moco_lab.ui import demos
    from moco_lab.ui import walking as wk

    walker = wk.WALKERS[walker_key]
    n, changes = WALKERS[walker_key]
    base = {**demos.default_settings(walker_key), "mesh_intervals": n}
    wk.forget_warm_starts()
    t = time.perf_counter()
    first = demos.apply_settings(wk.build_walk(walker, base), base).solve()
    print(json.dumps({"walker": walker_key, "change": "first", "start": "from the shipped walk", "nit": first.nit,
                      "objective": first.objective, "success": first.success,
                      "seconds": time.perf_counter() - t}), flush=True)
    wk.keep_for_warm_start(walker, first, base)
    for change in changes:
        for label in starts:
            if "speed" in change and label not in SPEED_STARTS.get(walker_key, STARTS):
                continue
            hessian, warm, extra = STARTS[label]
            settings = {**base, **change}
            study = demos.apply_settings(wk.build_walk(walker, settings), settings)
            s = study.solver
            s.set_hessian_approximation(hessian)
            s.optim_warm_start, s.guess_duals = warm, (first.duals if warm else None)
            s.optim_solver_options = {**s.optim_solver_options, **extra}
            s.optim_max_iterations = MAX_ITERATIONS
            t = time.perf_counter()
            sol = study.solve()
            print(json.dumps({"walker": walker_key, "change": json.dumps(change), "start": label, "nit": sol.nit,
                              "objective": sol.objective, "success": sol.success,
                              "seconds": time.perf_counter() - t,
                              "warm": "warm start: the guess's multipliers" in sol.message}), flush=True)


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"Python {platform.python_version()}"]
    for package in ("numpy", "drake", "casadi"):
        try:
            parts.append(f"{package} {version(package)}")
        except PackageNotFoundError:  # pragma: no cover
            parts.append(f"{package} ?")
    return ", ".join(parts)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE.parent, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover
        return "?"


def _cell(r: dict | None) -> str:
    if r is None:
        return "—"
    if not r["success"]:
        return f"{r['nit']:,}, stopped ({r['objective']:.6f})"
    return f"{r['nit']:,} ({r['objective']:.6f}), {r['seconds']:.1f} s"


def _report(rows: list[dict], started: str, seconds: float) -> str:
    lines = ["# Warm starts: re-predicting a walk from the previous solution's motion, or from all of it", "",
             f"Written by `benchmarks/warm_starts.py` (its docstring says what each column does) on {started}, "
             f"commit {_commit()}, {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
             f"{_versions()}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(default)')}; "
             f"{seconds / 60:.1f} minutes. Each cell: IPOPT iterations (objective), wall time of the solve; "
             f"\"stopped\": the {MAX_ITERATIONS:,}-iteration limit. Wall times are of a shared 2-core machine "
             "running two solves at once: compare iterations.", ""]
    for walker_key in dict.fromkeys(r["walker"] for r in rows):
        mine = [r for r in rows if r["walker"] == walker_key]
        first = next(r for r in mine if r["change"] == "first")
        n = WALKERS[walker_key][0]
        lines += [f"## {walker_key}, N = {n}", "",
                  f"The first solution (from the shipped walk, as the dashboard solves it): {first['nit']} iterations, "
                  f"objective {first['objective']:.6f}, {first['seconds']:.1f} s.", "",
                  "| change | " + " | ".join(STARTS) + " |", "|---|" + "---|" * len(STARTS)]
        for change in dict.fromkeys(r["change"] for r in mine if r["change"] != "first"):
            cells = [_cell(next((r for r in mine if r["change"] == change and r["start"] == s), None))
                     for s in STARTS]
            lines.append(f"| {', '.join(f'{k} {v:g}' for k, v in json.loads(change).items())} | "
                         + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--walkers", default=",".join(WALKERS))
    parser.add_argument("--child", nargs=2, metavar=("WALKER", "STARTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1].split("|"))
        return
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.perf_counter()
    names = list(STARTS)
    walkers = args.walkers.split(",")
    unknown = [w for w in walkers if w not in WALKERS]
    if unknown:
        parser.error(f"unknown walker {unknown[0]!r}; choose from {list(WALKERS)}")
    jobs = [(w, names[:2]) for w in walkers] + [(w, names[2:]) for w in walkers]

    def run(job):
        walker_key, starts = job
        out = subprocess.run([sys.executable, "-m", "benchmarks.warm_starts", "--child", walker_key, "|".join(starts)],
                             cwd=HERE.parent, capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"{walker_key} {starts}: the child failed:\n{out.stderr[-3000:]}")
        found = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        for r in found:
            print(f"{r['walker']:15s} {r['change']:45s} {r['start']:32s} {r['nit']:5d} {r['objective']:.6f}",
                  flush=True)
        return found

    with ThreadPoolExecutor(max_workers=2) as pool:     # two solves at a time, one per core
        results = list(pool.map(run, jobs))
    rows = [r for found in results for r in found]
    first = {}
    for r in rows:   # each child solved the first solution; keep one row of it per walker
        if r["change"] == "first":
            if r["walker"] in first and first[r["walker"]]["objective"] != r["objective"]:
                print(f"note: {r['walker']}'s first solution differs between the workers", file=sys.stderr)
            first.setdefault(r["walker"], r)
    rows = [r for r in rows if r["change"] != "first"] + list(first.values())
    (HERE / "warm_starts.md").write_text(_report(rows, started, time.perf_counter() - t0) + "\n")
    print("wrote", HERE / "warm_starts.md")


if __name__ == "__main__":
    main()
