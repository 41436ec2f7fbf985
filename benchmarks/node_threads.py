"""Evaluating the nodes on one thread against all cores (``moco_lab.symbolic.threads``), side by side in one run.

The exact-Hessian solves of issue 30's three timed cases (the squat at tolerance 1e-3, Moco's 2-D walking tracking
and its prediction from the limited-memory tracking solution) with ``MOCO_LAB_THREADS=1`` and with the default (the
cores this process may use, or ``MOCO_LAB_THREADS`` if the benchmark itself runs with it set), alternated
``--rounds`` times in fresh processes on one warm kernel cache (the cases and the measurement are
:mod:`benchmarks.hessian`'s). Both must take the same iterations to the same objective, to the last digit printed (a
split evaluation computes the same bits). Reported per case: the median wall time of the whole solve and of IPOPT's
evaluations (objective, constraints, Jacobian), Hessian and KKT parts, and the ratio of the medians.

Writes ``benchmarks/node_threads.md``.

Usage::

    .venv/bin/python -m benchmarks.node_threads              # 3 rounds, ~6 min on 2 cores
    .venv/bin/python -m benchmarks.node_threads --rounds 1 --cases squat_1e-3
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.hessian import CASES, _run_child

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = ("squat_1e-3", "walking_2d_tracking", "walking_2d_prediction")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", default=str(HERE / "node_threads.md"))
    args = parser.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown or args.rounds < 1:
        parser.error(f"unknown cases {unknown}; known: {list(CASES)}" if unknown else "--rounds must be ≥ 1")
    from moco_lab.symbolic import threads

    cores = threads.threads()
    folder = Path(tempfile.mkdtemp(prefix="moco_lab_threads_bench_"))
    cache = folder / "cache"
    started = datetime.now(timezone.utc)
    guesses: dict[str, str] = {}
    results: dict[tuple[str, str], list[dict]] = {}
    for case in cases:
        dep = CASES[case][1]
        guess = None
        if dep:
            if dep not in guesses:   # the limited-memory tracking solution the prediction starts from
                r = _run_child(dep, "limited-memory", folder, cache, None)
                guesses[dep] = r["solution"]
            guess = guesses[dep]
        _run_child(case, "exact", folder, cache, guess, max_iterations=1, tag="-warmup")
        for k in range(args.rounds):
            for label, value in (("1", 1), (f"{cores} (default)", cores)):
                r = _run_child(case, "exact", folder, cache, guess, tag=f"-t{value}-{k}",
                               env={"MOCO_LAB_THREADS": str(value)})
                results.setdefault((case, label), []).append(r)
                print(f"{case:24s} threads {label:12s} {r['nit']:4d} it {r['wall']:7.2f} s  objective "
                      f"{r['objective']:.10g}", flush=True)
    _write(Path(args.output), cases, results, cores, args.rounds, started)
    print(f"wrote {args.output}")
    return 0


def _median(rows: list[dict], key: str, minus: str | None = None) -> float:
    values = [r[key] - (r[minus] if minus else 0.0) for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def _write(path: Path, cases, results, cores: int, rounds: int, started) -> None:
    from importlib.metadata import version

    import moco_lab

    lines = [
        "# Evaluating the nodes on one thread against all cores",
        "",
        f"Written by `python -m benchmarks.node_threads` on {started:%Y-%m-%d %H:%M} UTC; moco_lab "
        f"{moco_lab.__version__}, Drake {version('drake')}, Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, default threads {cores}, OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(auto)')}. Exact Hessian, IPOPT + MUMPS, the study factories' "
        f"settings; {rounds} rounds, the two thread counts alternated in fresh processes on one warm kernel cache. "
        "Medians of wall seconds: the whole solve, and IPOPT's timing statistics (evaluations = objective, "
        "constraints and Jacobian; Hessian; KKT = the primal-dual systems, which no thread count changes). A shared "
        "machine: compare rows of one run.",
        "",
        "| case | threads | iterations | objective | wall s | evaluations s | Hessian s | KKT s | wall ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case in cases:
        one = None
        for (c, label), rows in results.items():
            if c != case:
                continue
            wall = _median(rows, "wall")
            one = wall if one is None else one
            its = sorted({r["nit"] for r in rows})
            objectives = sorted({f"{r['objective']:.10g}" for r in rows})
            lines.append(f"| {case} | {label} | {', '.join(map(str, its))} | {', '.join(objectives)} | {wall:.2f} | "
                         f"{_median(rows, 'evaluations', 'hessian'):.2f} | {_median(rows, 'hessian'):.2f} | "
                         f"{_median(rows, 'kkt'):.2f} | {one / wall:.2f} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
