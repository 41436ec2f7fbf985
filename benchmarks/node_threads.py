"""Evaluating the nodes on one thread against all cores (``moco_lab.symbolic.threads``), side by side in one run.

The exact-Hessian solves of issue 30's three timed cases (the squat at tolerance 1e-3, Moco's 2-D walking tracking
and its prediction from the limited-memory tracking solution) with ``MOCO_LAB_THREADS=1`` and with the default (the
cores this process may use, or ``MOCO_LAB_THREADS`` if the benchmark itself runs with it set), alternated
``--rounds`` times in fresh processes on one warm kernel cache (the cases and the measurement are
:mod:`benchmarks.hessian`'s). Both must take the same iterations to the same objective, to the last digit printed (a
split evaluation computes the same bits). Reported per case: the median wall time of the whole solve and of IPOPT's
evaluations (objective, constraints, Jacobian), Hessian and KKT parts, and the ratio of the medians.

A second table times how the nodes are split, on the squat's two largest functions (the dynamics' values and
Jacobian, ~117,000 statements per node, and the exact Hessian of the weighted dynamics, ~380,000) at 51, 101 and 201
nodes, in this process: one piece; blocks of nearly equal size, one per thread (moco_lab's split since 2026-12-01);
blocks of whole 32-node batches of the interpreter (its split until then). Best of nine rounds of ten evaluations,
milliseconds per evaluation; every split must give the one piece's numbers bit for bit (a difference fails the run).

Writes ``benchmarks/node_threads.md``.

Usage::

    .venv/bin/python -m benchmarks.node_threads              # 3 rounds, ~6 min on 2 cores
    .venv/bin/python -m benchmarks.node_threads --rounds 1 --cases squat_1e-3
"""
from __future__ import annotations

import argparse
import math
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
    split_rows = measure_splits(folder / "split-cache")
    _write(Path(args.output), cases, results, cores, args.rounds, started, split_rows)
    print(f"wrote {args.output}")
    return 0


def _best_ms(fn, rounds: int = 9, repeat: int = 10) -> float:
    import time

    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t) / repeat)
    return 1e3 * best


def measure_splits(cache: Path) -> list[dict]:
    """The squat's two largest functions evaluated in one piece and split over the threads two ways (module
    docstring), on the kernel cache ``cache``."""
    import numpy as np

    os.environ["MOCO_LAB_CACHE"] = str(cache)
    os.environ["MOCO_LAB_OPTIMIZE_KERNELS"] = "0"
    from moco_lab.engine.kernel import kernel_for
    from moco_lab.examples.squat import squat_to_stand_study
    from moco_lab.symbolic import interpreter, threads

    kernel = kernel_for(squat_to_stand_study(assisted=False, tol=1e-3).problem.model)
    functions = {"dynamics values and Jacobian": kernel.block("dynamics_jacobian").function,
                 "exact Hessian of the dynamics": kernel.hessian_block("dynamics").function}
    k = threads.threads()
    run_blocks = threads.run_blocks   # what evaluate_split runs, given the blocks

    rng = np.random.default_rng(0)
    rows = []
    for label, fn in functions.items():
        for n in (51, 101, 201):
            X = rng.uniform(0.1, 0.9, (n, fn.num_inputs))
            P = np.zeros(fn.num_shared)
            one = fn._impl(X, P)
            equal = threads.equal_blocks(n, k)
            full = math.ceil(n / interpreter.LANES)   # the former blocks: whole batches, as few per thread as can be
            per = math.ceil(full / k) * interpreter.LANES
            batches = [min(per, n - a) for a in range(0, n, per)]
            variants = {"one piece": lambda: fn._impl(X, P),
                        f"equal blocks {'+'.join(map(str, equal))} (today)":
                            lambda: run_blocks(fn._impl, X, P, fn.num_outputs, equal),
                        f"whole 32-node batches {'+'.join(map(str, batches))} (until 2026-12-01)":
                            lambda: run_blocks(fn._impl, X, P, fn.num_outputs, batches)}
            for name, call in variants.items():
                if not np.array_equal(call(), one, equal_nan=True):
                    raise AssertionError(f"{label} at {n} nodes: {name} computes other numbers than one piece")
                ms = _best_ms(call)
                print(f"{label:32s} {n:4d} nodes {name:48s} {ms:7.2f} ms", flush=True)
                rows.append({"function": label, "nodes": n, "variant": name, "ms": ms})
    return rows


def _median(rows: list[dict], key: str, minus: str | None = None) -> float:
    values = [r[key] - (r[minus] if minus else 0.0) for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def _write(path: Path, cases, results, cores: int, rounds: int, started, split_rows=()) -> None:
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
    if split_rows:
        lines += ["", "## How the nodes are split", "",
                  f"The squat's two largest functions on {cores} threads (module docstring of "
                  "`benchmarks/node_threads.py`); milliseconds per evaluation, best of nine rounds of ten; every "
                  "split gave the one piece's numbers bit for bit.", "",
                  "| function | nodes | evaluation | ms |", "|---|---:|---|---:|"]
        lines += [f"| {r['function']} | {r['nodes']} | {r['variant']} | {r['ms']:.2f} |" for r in split_rows]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
