"""MUMPS' fill-reducing ordering for IPOPT's KKT systems: IPOPT's default (``mumps_pivot_order=7``, MUMPS' automatic
choice) against ``4`` (moco_lab's with the exact Hessian since 2026-11-29), side by side in one run. ``4`` asks for
PORD's nested dissection, which the casadi wheel's MUMPS does not have: it falls back to its automatic choice made
without the compressed ordering that its column permutation otherwise leads to (METIS on the 2-D walker, AMF on the
squat; ``moco_lab.solve.optimizer.MUMPS_PIVOT_ORDER_EXACT``). The rows labelled PORD are that fallback.

The cases of :mod:`benchmarks.hessian` (the same builders), each solved with both ``optim_hessian_approximation``
values and both orderings, IPOPT + MUMPS, in one process after a one-iteration warm-up per case (the kernel cache
holds every compiled function: warm times). Predictions start from the limited-memory tracking solution of this run
(with the automatic ordering). Columns: iterations, wall seconds of the solve, IPOPT's ``print_timing_statistics``
wall seconds of the primal-dual (KKT) system and of the Hessian, the objective and the status. The machine is shared:
compare rows of one run.

Measured why: with the exact Hessian on the 2-D walker's tracking the KKT system took 209 ms per iteration with the
automatic ordering and 66 ms with PORD (the factorization's fill); the limited-memory runs and the small problems
barely move. Writes ``benchmarks/mumps_ordering.md``.

Usage::

    .venv/bin/python -m benchmarks.mumps_ordering                     # every case, ~20 min on 2 cores
    .venv/bin/python -m benchmarks.mumps_ordering --cases walking_2d_tracking,walking_2d_prediction
"""
from __future__ import annotations

import argparse
import os
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.hessian import APPROXIMATIONS, CASES, _timing, solve_case

HERE = Path(__file__).resolve().parent
ORDERS = {7: "automatic (IPOPT's default)", 4: "PORD (moco_lab's with the exact Hessian)"}


def solve(case: str, approximation: str, order: int, guess=None, max_iterations: int | None = None) -> dict:
    """One solve of ``case`` with MUMPS ordering ``order``; returns its numbers and its solution."""
    solution, wall, text = solve_case(case, approximation, guess, max_iterations, {"mumps_pivot_order": order})
    timing = _timing(text)
    return {"case": case, "approximation": approximation, "order": order, "nit": solution.nit, "wall": wall,
            "kkt": timing["kkt"], "hessian": timing["hessian"], "objective": float(solution.objective),
            "success": bool(solution.success), "status": str(solution.status), "solution": solution}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--output", default=str(HERE / "mumps_ordering.md"))
    args = parser.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in list(cases):   # a prediction needs its tracking solution
        dep = CASES[c][1]
        if dep and dep not in cases:
            cases.insert(cases.index(c), dep)
    started = datetime.now(timezone.utc)
    rows, solutions = [], {}
    for case in cases:
        dep = CASES[case][1]
        guess = solutions.get(dep) if dep else None
        if dep and guess is None:
            print(f"{case}: skipped, {dep} has no limited-memory solution to start from", flush=True)
            continue
        for approximation in APPROXIMATIONS:   # warm-up: compile what the case needs
            solve(case, approximation, 7, guess, max_iterations=1)
        for approximation in APPROXIMATIONS:
            for order in ORDERS:
                r = solve(case, approximation, order, guess)
                print(f"{case:22s} {approximation:15s} order {order}: {r['nit']:5d} it {r['wall']:7.1f} s "
                      f"KKT {r['kkt'] or 0:6.2f} s  objective {r['objective']:.8g}  {r['status']}", flush=True)
                if approximation == "limited-memory" and order == 7 and r["success"]:
                    solutions[case] = r["solution"]
                rows.append(r)
    _write(Path(args.output), rows, started)
    print(f"wrote {args.output}")
    return 0


def _write(path: Path, rows: list, started: datetime) -> None:
    from importlib.metadata import version

    import numpy

    import moco_lab

    lines = ["# MUMPS' ordering of IPOPT's KKT systems: automatic against PORD", "",
             f"Written by `python -m benchmarks.mumps_ordering` on {started:%Y-%m-%d %H:%M} UTC; moco_lab "
             f"{moco_lab.__version__}, Drake {version('drake')}, numpy {numpy.__version__}, {os.cpu_count()} CPUs, "
             f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(auto)')}. One process, warm kernels, IPOPT + "
             "MUMPS; `mumps_pivot_order` 7 is IPOPT's default (MUMPS chooses), 4 is PORD's nested dissection. "
             "KKT and Hessian: IPOPT's timing statistics (wall s). Compare rows of one run.", "",
             "| case | Hessian | ordering | iterations | wall s | KKT s | KKT ms/it | Hessian s | objective | status |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        nit = max(int(r["nit"]), 1)
        kkt = r["kkt"] if r["kkt"] is not None else float("nan")
        lines.append(f"| {r['case']} | {r['approximation']} | {r['order']} ({ORDERS[r['order']].split(' (')[0]}) | "
                     f"{r['nit']} | {r['wall']:.1f} | {kkt:.2f} | {1000 * kkt / nit:.0f} | "
                     f"{r['hessian'] or 0:.2f} | {r['objective']:.8g} | {r['status']} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
