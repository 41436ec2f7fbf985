"""Exact second derivatives against IPOPT's limited-memory (L-BFGS) Hessian, side by side in one run.

Every case is solved twice from the same guess, once with each ``SolverSettings.optim_hessian_approximation``,
both with IPOPT + MUMPS and the study factories' other settings unchanged. Cases (the issue's list):

* ``squat`` / ``squat_assisted`` at tolerances 1e-3 (the Moco paper's) and 1e-5
  (:func:`moco_lab.examples.squat.squat_to_stand_study`);
* ``walking_2d_tracking`` and ``walking_2d_prediction`` (Moco's 2-D walking, N = 50, tolerance 1e-4), the
  prediction started from the limited-memory tracking solution (:mod:`moco_lab.examples.walking_2d`);
* ``gait2d_tracking`` (Winter's gait, N = 25, tolerance 1e-3) and ``gait2d_prediction``: minimum effort started
  *straight* from that tracking solution, no intermediate 1 % tracking step (:mod:`moco_lab.examples.gait2d`);
* ``gait10dof_track`` (Moco's testMocoTrack, :func:`moco_lab.examples.gait10dof.gait10dof_track`);
* ``suspended_mass`` (prediction, 100 intervals) and ``double_pendulum`` (swing-up, 50 intervals), the
  verification problems.

Each solve runs in its own process (``--child``), so its peak memory (``ru_maxrss``) is its own. All solves
share one kernel cache that a warm-up pass fills first (one-iteration solves of every case with both
approximations; with ``MOCO_LAB_OPTIMIZE_KERNELS=1`` it also waits for the background compilation of the equations
that their first builds start, ``moco_lab.symbolic.codegen``; by default the equations run on the interpreter): the
times are *warm* ones, what a learner's later solves cost. *Cold* rows for the squat and the 2-D walking tracking
solve with an empty cache (deriving the equations, and with ``exact`` their second derivatives, is part of the
time).

Each warm and cold solve is repeated ``--rounds`` times (default 3), the two approximations alternated, each in a
fresh process: the machine is shared and its speed drifts by ±15 % between minutes, so a row reports the round of
median wall time (its split, memory and objective) and the range over the rounds; the rounds must take the same
iterations (they compute the same bits; a difference is reported in the row).

Columns: IPOPT iterations; wall time of the whole ``solve()``; IPOPT's own timing statistics
(``print_timing_statistics``) split into the evaluations of the objective, constraints and their gradients,
the evaluation of the Hessian of the Lagrangian, and the primal-dual (KKT) system (assembly, MUMPS'
factorization and back-solves); the rest (Python around the callbacks, the iterate bookkeeping) is the
difference; ms per iteration; the non-zeros IPOPT reports for the Jacobian and the Hessian; peak resident
memory of the process; the objective and IPOPT's status.

Writes ``benchmarks/hessian.md``.

Usage::

    .venv/bin/python -m benchmarks.hessian                   # every case, 3 rounds, ~30 min on 2 cores
    .venv/bin/python -m benchmarks.hessian --cases squat_1e-3,double_pendulum --rounds 1
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
APPROXIMATIONS = ("limited-memory", "exact")


# ------------------------------------------------------------------ the cases (built in the child process)
def _squat(assisted: bool, tol: float):
    from moco_lab.examples.squat import squat_to_stand_study
    return squat_to_stand_study(assisted=assisted, tol=tol)


def _walking_tracking():
    from moco_lab.examples.walking_2d import walking_2d_tracking
    return walking_2d_tracking()


def _walking_prediction(guess):
    from moco_lab.examples.walking_2d import walking_2d_prediction
    return walking_2d_prediction(guess=guess)


def _gait2d_tracking():
    from moco_lab.examples.gait2d import gait2d_tracking_study
    return gait2d_tracking_study(25)


def _gait2d_prediction(guess):
    from moco_lab.examples.gait2d import gait2d_prediction_study
    return gait2d_prediction_study(25, guess=guess)


def _gait10dof():
    from moco_lab.examples.gait10dof import gait10dof_track
    return gait10dof_track().initialize()


def _suspended_mass():
    from moco_lab.examples.verification import suspended_mass_prediction_study
    return suspended_mass_prediction_study()


def _double_pendulum():
    from moco_lab.examples.verification import double_pendulum_study
    return double_pendulum_study()


#: name -> (builder, the case whose limited-memory solution is the guess, or None)
CASES = {
    "squat_1e-3": (lambda: _squat(False, 1e-3), None),
    "squat_1e-5": (lambda: _squat(False, 1e-5), None),
    "squat_assisted_1e-3": (lambda: _squat(True, 1e-3), None),
    "squat_assisted_1e-5": (lambda: _squat(True, 1e-5), None),
    "walking_2d_tracking": (_walking_tracking, None),
    "walking_2d_prediction": (_walking_prediction, "walking_2d_tracking"),
    "gait2d_tracking": (_gait2d_tracking, None),
    "gait2d_prediction": (_gait2d_prediction, "gait2d_tracking"),
    "gait10dof_track": (_gait10dof, None),
    "suspended_mass": (_suspended_mass, None),
    "double_pendulum": (_double_pendulum, None),
}
#: cases also solved cold (empty kernel cache)
COLD = ("squat_1e-3", "walking_2d_tracking")


def _timing(text: str) -> dict:
    """Wall seconds of IPOPT's timing statistics and its problem sizes, from its output file."""
    out = {}
    for key, label in (("overall", "OverallAlgorithm"), ("evaluations", "Function Evaluations"),
                       ("hessian", "Lagrangian Hessian"), ("kkt", "PDSystemSolverTotal")):
        m = re.search(re.escape(label) + r"\.*:\s*\S+\s+\(sys:\s*\S+\s+wall:\s*(\S+)\)", text)
        out[key] = float(m.group(1)) if m else None
    for key, label in (("jac_nnz", "Number of nonzeros in equality constraint Jacobian"),
                       ("hess_nnz", "Number of nonzeros in Lagrangian Hessian"),
                       ("num_vars", "Total number of variables")):
        m = re.search(re.escape(label) + r"\.*:\s*(\d+)", text)
        out[key] = int(m.group(1)) if m else None
    return out


def solve_case(case: str, approximation: str, guess=None, max_iterations: int | None = None,
               options: dict | None = None, study=None):
    """One solve of ``case`` with ``approximation`` on IPOPT + MUMPS (the factory's other settings, IPOPT's timing
    statistics on, extra IPOPT ``options``): ``(solution, wall seconds, IPOPT's output text)``. ``study``: solve
    this study instead of the case's (``case`` is then only a name)."""
    if study is None:
        build, _ = CASES[case]
        study = build(guess) if guess is not None else build()
    s = study.solver
    s.set_hessian_approximation(approximation)
    s.optim_solver, s.optim_linear_solver = "ipopt", "mumps"   # both approximations on the same linear solver
    s.optim_limited_memory_start = 0   # exact from the first iteration: the two approximations alone
    if max_iterations is not None:
        s.optim_max_iterations = max_iterations
    log = tempfile.NamedTemporaryFile(prefix="moco_lab_hessian_", suffix=".txt", delete=False)
    log.close()
    s.optim_solver_options = {**s.optim_solver_options, "output_file": log.name, "file_print_level": 5,
                              "print_timing_statistics": "yes", **(options or {})}
    t = time.perf_counter()
    solution = study.solve()
    wall = time.perf_counter() - t
    text = Path(log.name).read_text(errors="replace")
    os.unlink(log.name)
    return solution, wall, text


def child(case: str, approximation: str, out: str, guess_file: str | None, max_iterations: int | None) -> None:
    """Solve one case with one approximation; write the measurements as JSON to ``out``."""
    import resource

    import moco_lab as ml

    guess = ml.Trajectory.read_sto(guess_file) if guess_file else None
    solution, wall, text = solve_case(case, approximation, guess, max_iterations)
    status = re.search(r"EXIT:\s*(.*)", text)
    result = {"case": case, "approximation": approximation, "nit": solution.nit, "wall": wall,
              "success": bool(solution.success), "objective": float(solution.objective),
              "status": status.group(1).strip() if status else str(solution.status),
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, **_timing(text)}
    if approximation == "limited-memory" and max_iterations is None and solution.success:
        path = Path(out).with_suffix(".sto")
        solution.write_sto(path)
        result["solution"] = str(path)
    Path(out).write_text(json.dumps(result))
    # the optimized rebuilds its compiles started (moco_lab.symbolic.codegen): done before the next measurement, so
    # that warm rows use them and no row shares the cores with a compiler
    from moco_lab.symbolic import codegen

    codegen.wait_for_optimized_builds()


# ------------------------------------------------------------------ the parent
def _run_child(case, approximation, folder: Path, cache: Path, guess: str | None, max_iterations=None,
               tag: str = "", env: dict | None = None) -> dict:
    """Solve one case in a process of its own (``--child``) on the kernel cache ``cache``, with ``env``'s variables
    added to this process's; its measurements (a row of failure if it failed)."""
    out = folder / f"{case}-{approximation}{tag}.json"
    cmd = [sys.executable, "-m", "benchmarks.hessian", "--child", case, approximation, str(out)]
    if guess:
        cmd += ["--guess", guess]
    if max_iterations is not None:
        cmd += ["--max-iterations", str(max_iterations)]
    proc = subprocess.run(cmd, cwd=HERE.parent, env={**os.environ, "MOCO_LAB_CACHE": str(cache), **(env or {})},
                          capture_output=True, text=True)
    if proc.returncode != 0:   # reported in the table, the other cases go on
        print(f"{case} ({approximation}) failed:\n{proc.stderr[-3000:]}", flush=True)
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"case": case, "approximation": approximation, "nit": 0, "wall": float("nan"),
                "objective": float("nan"), "peak_rss_mb": float("nan"), "status": f"run failed: {last[:120]}"}
    return json.loads(out.read_text())


def _fmt(v, spec):
    return "–" if v is None else format(v, spec)


def _median_round(runs: list[dict]) -> dict:
    """The round of median wall time (the lower middle one of an even number) among the rounds that finished, with
    their wall times and every round's iterations attached."""
    finished = [x for x in runs if x["wall"] == x["wall"]] or runs   # a failed round has no time (NaN)
    ordered = sorted(finished, key=lambda r: r["wall"])
    r = dict(ordered[(len(ordered) - 1) // 2])
    r["walls"] = [x["wall"] for x in finished]
    r["iterations"] = sorted({int(x["nit"]) for x in runs})
    return r


def _row(r: dict, label: str) -> str:
    nit = max(int(r["nit"]), 1)
    walls = r.get("walls", [r["wall"]])
    wall = f"{r['wall']:.2f}" + (f" ({min(walls):.2f}–{max(walls):.2f})" if len(walls) > 1 else "")
    its = ", ".join(map(str, r.get("iterations", [r["nit"]])))
    parts = [r.get("evaluations"), r.get("hessian"), r.get("kkt")]
    evals = None if parts[0] is None else parts[0] - (parts[1] or 0.0)
    rest = None
    if None not in (r.get("overall"), parts[0], parts[2]):
        rest = r["overall"] - parts[0] - parts[2]
    return (f"| {label} | {r['approximation']} | {its} | {wall} | {_fmt(evals, '.2f')} | "
            f"{_fmt(r.get('hessian'), '.2f')} | {_fmt(r.get('kkt'), '.2f')} | {_fmt(rest, '.2f')} | "
            f"{1000 * r['wall'] / nit:.0f} | {_fmt(r.get('jac_nnz'), 'd')} | {_fmt(r.get('hess_nnz'), 'd')} | "
            f"{r['peak_rss_mb']:.0f} | {r['objective']:.6g} | {r['status']} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--child", nargs=3, metavar=("CASE", "APPROXIMATION", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--guess", help=argparse.SUPPRESS)
    parser.add_argument("--max-iterations", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold (empty cache) rows")
    parser.add_argument("--rounds", type=int, default=3, help="solves per case and approximation (alternated)")
    parser.add_argument("--output", default=str(HERE / "hessian.md"))
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child, args.guess, args.max_iterations)
        return 0
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown or args.rounds < 1:
        parser.error(f"unknown cases {unknown}; known: {list(CASES)}" if unknown else "--rounds must be ≥ 1")
    for c in list(cases):   # a prediction needs its tracking solution
        dep = CASES[c][1]
        if dep and dep not in cases:
            cases.insert(cases.index(c), dep)
    folder = Path(tempfile.mkdtemp(prefix="moco_lab_hessian_bench_"))
    cache = folder / "cache"
    started = datetime.now(timezone.utc)
    rows, cold_rows = [], []
    solutions: dict[str, str] = {}
    for case in cases:
        dep = CASES[case][1]
        if dep and dep not in solutions:
            print(f"{case}: skipped, {dep} has no limited-memory solution to start from", flush=True)
            continue
        guess = solutions.get(dep) if dep else None
        for approximation in APPROXIMATIONS:   # warm-up: compile everything this case needs
            print(f"[warm-up] {case} {approximation}", flush=True)
            _run_child(case, approximation, folder, cache, guess, max_iterations=1, tag="-warmup")
        warm = _alternated(case, guess, folder, args.rounds, lambda a, k: cache, "")
        rows += warm
        solution = next((r["solution"] for r in warm if "solution" in r), None)
        if solution:
            solutions[case] = solution
        if case in COLD and not args.no_cold:   # every solve on an empty cache of its own
            cold_rows += _alternated(case, guess, folder, args.rounds,
                                     lambda a, k: folder / f"cold-{case}-{a}-{k}", "cold")
    _write(Path(args.output), rows, cold_rows, started, args.rounds)
    print(f"wrote {args.output}")
    return 0


def _alternated(case: str, guess: str | None, folder: Path, rounds: int, cache_for, label: str) -> list[dict]:
    """``rounds`` solves of ``case`` with each approximation, alternated, each in its own process on the kernel cache
    ``cache_for(approximation, round)``: per approximation the round of median wall time (:func:`_median_round`)."""
    runs: dict[str, list[dict]] = {a: [] for a in APPROXIMATIONS}
    for k in range(rounds):
        for approximation in APPROXIMATIONS:
            r = _run_child(case, approximation, folder, cache_for(approximation, k), guess,
                           tag=f"-{label}{k}" if label else f"-{k}")
            print(f"{case:24s} {approximation:15s} {label:4s} {r['nit']:5d} it {r['wall']:8.2f} s  objective "
                  f"{r['objective']:.8g}  {r['status']}", flush=True)
            runs[approximation].append(r)
    return [_median_round(runs[a]) for a in APPROXIMATIONS]


def _write(path: Path, rows, cold_rows, started, rounds: int = 1) -> None:
    from importlib.metadata import version

    import numpy

    import moco_lab

    header = ("| case | Hessian | iterations | wall s | evaluations s | Hessian s | KKT s | rest s | ms/it | "
              "Jacobian nnz | Hessian nnz | peak MB | objective | IPOPT status |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    lines = [
        "# Exact second derivatives against the limited-memory Hessian",
        "",
        f"Written by `python -m benchmarks.hessian` on {started:%Y-%m-%d %H:%M} UTC; moco_lab {moco_lab.__version__}, "
        f"Drake {version('drake')}, numpy {numpy.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(auto)')}.",
        "IPOPT + MUMPS for both approximations; every other setting is the study factory's. Warm: the kernel cache",
        "holds every function of the equations (a warm-up pass solved each case for one iteration first; with",
        "MOCO_LAB_OPTIMIZE_KERNELS=1 it also waited for their background compilation). Times are wall",
        f"seconds on a shared machine: compare rows of one run, not runs. {rounds} round(s) per row, the two",
        "approximations alternated in fresh processes: the round of median wall time, the range over the rounds in",
        "brackets (iterations: every round's). The split is IPOPT's",
        "`print_timing_statistics`: evaluations = objective, constraints and their first derivatives; Hessian =",
        "the exact Hessian of the Lagrangian (the L-BFGS update is inside *rest*); KKT = the primal-dual system",
        "(assembly, MUMPS factorization, back-solves); rest = IPOPT's other work and Python around the callbacks.",
        "Predictions start from the limited-memory tracking solution of the same run.",
        "",
        "## Warm solves",
        "",
        header,
    ]
    lines += [_row(r, r["case"]) for r in rows]
    if cold_rows:
        lines += ["", "## Cold solves (empty kernel cache: derive, differentiate, solve)", "", header]
        lines += [_row(r, r["case"] + " (cold)") for r in cold_rows]
        warm = {(r["case"], r["approximation"]): r["wall"] for r in rows}
        ratios = [f"{r['case']} {r['approximation']} {r['wall'] / warm[(r['case'], r['approximation'])]:.2f}×"
                  for r in cold_rows if (r["case"], r["approximation"]) in warm]
        lines += ["", "Cold against warm (medians): " + ", ".join(ratios) + "."]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
