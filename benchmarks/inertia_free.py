"""IPOPT's inertia correction against the inertia-free curvature test, with the exact Hessian, side by side in one run.

With the exact Hessian, IPOPT factorizes the primal-dual (KKT) matrix once per iteration and, when its inertia is
wrong (the Hessian has directions of negative curvature in the constraints' null space), again with a larger
regularization of the Hessian block until it is right. Chiang and Zavala's inertia-free test (IPOPT's
``neg_curv_test_tol``; Chiang & Zavala, "An inertia-free filter line-search algorithm for large-scale nonlinear
programming", Computational Optimization and Applications 64, 2016) keeps a step from a
matrix of the wrong inertia if the step is a direction of sufficiently positive curvature, saving the extra
factorizations, which are most of an exact-Hessian iteration's cost here. Is it worth making a default?

Every case is solved with the exact Hessian twice from the same guess, IPOPT's default (inertia correction) and
``neg_curv_test_tol`` = 1e-12 (IPOPT's documentation recommends 1e-12 to 1e-11), the study factory's settings
otherwise (:mod:`benchmarks.hessian`'s cases), plus the squat on six meshes. Columns: iterations, factorizations
(MUMPS numerical factorizations in IPOPT's output), wall seconds, objective. Predictions start from the
limited-memory tracking solution of the same run.

Writes ``benchmarks/inertia_free.md``.

Usage::

    .venv/bin/python -m benchmarks.inertia_free             # ~12 min on 2 cores
"""
from __future__ import annotations

import argparse
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOL = 1e-12
CASES = ("squat_1e-3", "squat_1e-5", "squat_assisted_1e-3", "squat_assisted_1e-5", "walking_2d_tracking",
         "walking_2d_prediction", "gait2d_tracking", "gait2d_prediction", "gait10dof_track", "suspended_mass",
         "double_pendulum")
#: the squat (tolerance 1e-3) on other meshes than the paper's 50 intervals
SQUAT_MESHES = (10, 20, 30, 40, 75, 100)


def _squat_mesh(n: int):
    from moco_lab.examples.squat import squat_to_stand_study
    return squat_to_stand_study(num_mesh_intervals=n)


def _solve(case: str, study, guess, curvature: bool) -> dict:
    from benchmarks.hessian import solve_case

    options = {"file_print_level": 7, **({"neg_curv_test_tol": TOL} if curvature else {})}
    solution, wall, text = solve_case(case, "exact", guess, options=options, study=study)
    return {"nit": solution.nit, "factorizations": text.count("Calling MUMPS-2 for numerical factorization"),
            "wall": wall, "objective": float(solution.objective), "success": bool(solution.success)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(HERE / "inertia_free.md"))
    args = parser.parse_args(argv)
    import tempfile

    import moco_lab as ml
    from benchmarks.hessian import solve_case

    started = datetime.now(timezone.utc)
    folder = Path(tempfile.mkdtemp(prefix="moco_lab_inertia_free_"))
    guesses = {}
    for tracking in ("walking_2d_tracking", "gait2d_tracking"):
        solution, _, _ = solve_case(tracking, "limited-memory")
        path = folder / f"{tracking}.sto"
        solution.write_sto(path)
        guesses[tracking.replace("tracking", "prediction")] = ml.Trajectory.read_sto(path)
    rows = []
    work = [(c, None) for c in CASES] + [(f"squat_1e-3, N = {n}", n) for n in SQUAT_MESHES]
    for label, n in work:
        pair = [_solve(label, None if n is None else _squat_mesh(n), guesses.get(label), curvature)
                for curvature in (False, True)]
        for r, name in zip(pair, ("inertia correction", f"curvature test {TOL:g}")):
            print(f"{label:28s} {name:24s} {r['nit']:4d} it {r['factorizations']:5d} fact {r['wall']:7.2f} s "
                  f"{r['objective']:.8g}", flush=True)
        rows.append((label, pair))
    _write(Path(args.output), rows, started)
    print(f"wrote {args.output}")
    return 0


def _write(path: Path, rows, started) -> None:
    from importlib.metadata import version

    import moco_lab

    lines = [
        "# IPOPT's inertia correction against the inertia-free curvature test (exact Hessian)",
        "",
        f"Written by `python -m benchmarks.inertia_free` on {started:%Y-%m-%d %H:%M} UTC; moco_lab "
        f"{moco_lab.__version__}, Drake {version('drake')}, Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs. IPOPT + MUMPS, exact Hessian, the study factories' settings; each pair from the "
        f"same guess in one process; *curvature test*: `neg_curv_test_tol` = {TOL:g}. Factorizations: MUMPS' "
        "numerical factorizations (one per iteration plus one per increase of the regularization). Wall seconds on "
        "a shared machine: compare the two columns of one row.",
        "",
        "| case | iterations | | factorizations | | wall s | | objective | |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        "| | correction | test | correction | test | correction | test | correction | test |",
    ]
    for label, (a, b) in rows:
        mark = lambda r: "" if r["success"] else " (failed)"   # noqa: E731
        lines.append(f"| {label} | {a['nit']} | {b['nit']} | {a['factorizations']} | {b['factorizations']} | "
                     f"{a['wall']:.2f} | {b['wall']:.2f} | {a['objective']:.8g}{mark(a)} | "
                     f"{b['objective']:.8g}{mark(b)} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
