"""Same answers on every CPU: the solves that the lessons, dashboards and tests rely on, under several OpenBLAS kernels.

A learner's laptop has another CPU than ours: OpenBLAS picks other kernels there (``OPENBLAS_CORETYPE``), numpy's
products and solves round differently in the last bits, and IPOPT's iterates take another path. A solve that
converges, or lands on the same optimum, only with our kernels is a bug. This script runs the lessons and
dashboards (through the test suite's nbval, fast mode) and the solve-heavy tests once per kernel, with
``MOCO_LAB_SOLVE_LOG`` set so that every optimizer run appends its status, iteration count and objective
(:func:`moco_lab.solve.optimizer.run_optimizer`), and writes ``benchmarks/robustness.md``: per kernel the
test results, per solve the status, iterations and objective under each kernel and the objectives' spread.
``--learner`` also executes every lesson in learner mode (full meshes) under each kernel. Under each kernel the
studies a learner can solve with either of IPOPT's linear solvers (the squat, Moco's 2-D walking, gait2d) are
also solved with both, SPRAL (Drake's IPOPT) and MUMPS (the ``casadi`` wheel's), at their learner settings: the
table's rows "linear solvers: ..." (``--no-linear-solvers`` skips them).

Kernels the CPU cannot run (SkylakeX needs AVX-512, Haswell AVX2) are skipped, and the table says so.

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.robustness                              # 4 kernels, fast mode (~1 h on 2 cores)
    .venv/bin/python -m benchmarks.robustness --learner                    # and the lessons in learner mode
    .venv/bin/python -m benchmarks.robustness --learner lessons/11_walking_2d.ipynb  # that lesson in learner mode too
    .venv/bin/python -m benchmarks.robustness --kernels Haswell Sandybridge --targets lessons/10_predicting_gait.ipynb
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Kernels and the CPU flag each needs (OpenBLAS's x86-64 kernels; "Zen" runs Haswell's kernels).
KERNELS = {"Haswell": "avx2", "SkylakeX": "avx512f", "Zen": "avx2", "Sandybridge": "avx", "Nehalem": "sse4_2",
           "Prescott": "sse3"}
DEFAULT_KERNELS = ("Haswell", "SkylakeX", "Sandybridge", "Nehalem")
#: The tests whose point is a solve (agreement with Moco, closed forms, the walkers), besides lessons/ and widgets/.
SOLVE_TESTS = ("tests/test_gait10dof_track.py", "tests/test_squat.py", "tests/test_squat_moco.py",
               "tests/test_walking_2d.py", "tests/test_gait2d_walking.py", "tests/test_suspended_mass_moco.py",
               "tests/test_inverse_moco.py", "tests/test_kinematic_constraints_moco.py", "tests/test_against_moco.py",
               "tests/test_verification.py", "tests/test_walking_dashboard.py", "tests/test_walking_3d_inverse.py",
               "tests/test_goals_moco.py", "tests/test_pseudospectral.py", "tests/test_hanging_muscle_moco.py",
               "tests/test_walking_goals_moco.py", "tests/test_metabolics.py")
DEFAULT_TARGETS = ("lessons", "widgets") + SOLVE_TESTS


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _pythonpath() -> str:
    """This repository first on the path of every process the run starts, notebook kernels included: a kernel
    starts in the notebook's folder and would otherwise import whatever moco_lab the environment has installed
    (another checkout's, in an environment shared between clones), and the table would describe that code."""
    return os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def check_targets(targets: list[str]) -> None:
    """Every target exists (pytest would otherwise run nothing and the table would say nothing)."""
    missing = [t for t in targets if not (ROOT / t.split("::")[0]).exists()]
    if missing:
        raise SystemExit(f"robustness: no such test file or folder: {', '.join(missing)}")


def run_kernel(kernel: str, targets: list[str], log: Path, workers: str) -> dict:
    """The fast-mode pytest run of ``targets`` under ``kernel``; returns its outcome."""
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "MOCO_LAB_FAST": "1", "MOCO_LAB_SOLVE_LOG": str(log),
           "PYTHONPATH": _pythonpath()}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers, "--dist", "loadfile",
           "-rf", *targets]
    print(f"[{kernel}] {' '.join(cmd[2:])}", flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    tail = proc.stdout.strip().splitlines()
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in tail if line.startswith("FAILED ")]
    summary = tail[-1] if tail else proc.stderr.strip()[-300:]
    print(f"[{kernel}] {summary}", flush=True)
    return {"returncode": proc.returncode, "summary": summary.strip("= "), "failed": failed}


def learner_lessons(chosen: list[str] | None) -> list[Path]:
    """The lessons ``--learner`` executes: those given, or every lesson (not the solutions) when none are."""
    if chosen:
        paths = [ROOT / name for name in chosen]
        missing = [str(p.relative_to(ROOT)) for p in paths if not p.exists()]
        if missing:
            raise SystemExit(f"robustness: no such lesson: {', '.join(missing)}")
        return paths
    return sorted((ROOT / "lessons").glob("*.ipynb"))


def run_learner(kernel: str, log: Path, lessons: list[Path]) -> dict:
    """``lessons`` executed in learner mode under ``kernel`` (errors, not text, are what counts here)."""
    import nbformat
    from nbclient import NotebookClient

    env_before = dict(os.environ)
    os.environ.update({"OPENBLAS_CORETYPE": kernel, "MOCO_LAB_FAST": "0", "MOCO_LAB_SOLVE_LOG": str(log),
                       "PYTHONPATH": _pythonpath()})
    errors = {}
    try:
        for path in lessons:
            print(f"[{kernel}] learner mode: {path.name}", flush=True)
            os.environ["MOCO_LAB_SOLVE_LABEL"] = f"lessons/{path.name}"
            nb = nbformat.read(path, as_version=4)
            try:
                NotebookClient(nb, timeout=7200, kernel_name="python3",
                               resources={"metadata": {"path": str(path.parent)}}).execute()
            except Exception as err:  # a failed cell: recorded, the next lesson runs
                errors[path.name] = str(err).strip().splitlines()[-1][:200]
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    return errors


def _linear_solver_cases() -> tuple[list[tuple[str, object]], dict]:
    """The studies a learner can solve with either linear solver, each as (name, build(linear_solver) -> Study),
    in the order they run; a prediction that starts from a tracking solution takes that of the same linear
    solver, solved just before it."""
    import moco_lab as ml

    solutions: dict[str, object] = {}

    def walking_tracking(ls):
        return ml.examples.walking_2d_tracking(linear_solver=ls)

    def walking_prediction(ls):
        return ml.examples.walking_2d_prediction(solutions[f"2-D walking tracking/{ls}"], linear_solver=ls)

    def gait2d_tracking(ls):
        study = ml.examples.gait2d_tracking_study(hessian="exact" if ls == "mumps" else "limited-memory")
        study.solver.optim_linear_solver = ls
        return study

    cases = [("squat unassisted (tol 1e-3)", lambda ls: ml.examples.squat_to_stand_study(False, linear_solver=ls)),
             ("squat assisted (tol 1e-3)", lambda ls: ml.examples.squat_to_stand_study(True, linear_solver=ls)),
             ("2-D walking tracking", walking_tracking), ("2-D walking prediction", walking_prediction),
             ("gait2d tracking (MUMPS: exact Hessian)", gait2d_tracking)]
    return cases, solutions


def solve_linear_solver_cases() -> None:
    """Worker (``--linear-solver-cases``): every case with both linear solvers, in this process's kernel; the
    optimizer's log (``MOCO_LAB_SOLVE_LOG``) records each run under the label "linear solvers: <case>"."""
    cases, solutions = _linear_solver_cases()
    for name, build in cases:
        for ls in ("spral", "mumps"):
            os.environ["MOCO_LAB_SOLVE_LABEL"] = f"linear solvers: {name}"
            print(f"  {name}, {ls}", flush=True)
            try:
                solutions[f"{name}/{ls}"] = build(ls).solve()
            except Exception as err:  # recorded by its absence in the log and printed; the next case runs
                print(f"  {name}, {ls}: {type(err).__name__}: {err}", flush=True)


def run_linear_solvers(kernel: str, log: Path) -> None:
    """:func:`solve_linear_solver_cases` in a new process under ``kernel`` (OpenBLAS reads it at start)."""
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "MOCO_LAB_FAST": "0", "MOCO_LAB_SOLVE_LOG": str(log),
           "PYTHONPATH": _pythonpath()}
    print(f"[{kernel}] both linear solvers", flush=True)
    subprocess.run([sys.executable, "-m", "benchmarks.robustness", "--linear-solver-cases"], cwd=ROOT, env=env,
                   check=False)


def site_of(record: dict) -> str:
    """Where a solve came from: the test (or the notebook a kernel ran), without the cell."""
    test = record.get("test") or ""
    if ".ipynb" in test:
        return test.split("::")[0]
    return test or record.get("label") or "(unlabelled)"


def collect(log: Path) -> dict[str, list[dict]]:
    """Records grouped by site, in the order they ran, except a sweep's tasks: those run on workers and finish
    in an order that varies from run to run, so they follow the site's other solves, ordered by what each task
    changes (the same under every kernel; a task's hash is not when its study's guess is an earlier, rounded
    solution), so that a row compares the same task across kernels."""
    out: dict[str, list[dict]] = defaultdict(list)
    if log.exists():
        for line in log.read_text().splitlines():
            record = json.loads(line)
            out[site_of(record)].append(record)
    for records in out.values():
        # stable: the others keep their order, first; logs written before the change was logged sort by hash
        records.sort(key=lambda r: (bool(r.get("task")), r.get("change") or "", r.get("task") or ""))
    return out


def _learner_words(lessons: list[Path]) -> str:
    if len(lessons) == len(list((ROOT / "lessons").glob("*.ipynb"))):
        return "; and every lesson in learner mode"
    return "; and in learner mode " + ", ".join(p.name for p in lessons)


def write_report(path: Path, kernels: list[str], skipped: list[str], outcomes: dict, solves: dict,
                 learner: dict, args) -> None:
    import moco_lab

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    lines = ["# The same answers on every CPU: solves under several OpenBLAS kernels", "",
             f"Generated by `benchmarks/robustness.py` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
             f"UTC at commit {commit}: {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), Python "
             f"{platform.python_version()}, moco_lab {moco_lab.__version__}; targets: {' '.join(args.targets)} "
             f"(fast mode){_learner_words(learner_lessons(args.learner)) if args.learner is not None else ''}"
             f"{'' if args.no_linear_solvers else '; and the linear-solver cases with SPRAL and MUMPS'}.", ""]
    if skipped:
        lines += [f"Kernels this CPU cannot run, skipped: {', '.join(skipped)}.", ""]
    lines += ["## Test results per kernel", "", "| kernel | result | failed |", "|---|---|---|"]
    for k in kernels:
        o = outcomes[k]
        lines.append(f"| {k} | {o['summary']} | {', '.join(o['failed']) or '—'} |")
    if args.learner is not None:
        lines += ["", "Learner mode (the lessons executed): "
                  + "; ".join(f"{k}: {', '.join(f'{n} ({e})' for n, e in learner[k].items()) or 'no errors'}"
                              for k in kernels)]
    lines += ["", "## Every solve, per kernel", "",
              "Each row is one optimizer run of a test or notebook (in the order it ran there): status (✔ success), "
              "iterations and objective under each kernel, and the largest relative difference of the objectives "
              "across kernels.", "",
              "| where | # | settings | " + " | ".join(kernels) + " | spread |",
              "|---|--:|---|" + "---|" * len(kernels) + "--:|"]
    sites = sorted({s for k in kernels for s in solves[k]})
    worst = 0.0
    failures = 0
    for site in sites:
        count = max(len(solves[k].get(site, [])) for k in kernels)
        for i in range(count):
            cells, objectives, settings = [], [], ""
            for k in kernels:
                runs = solves[k].get(site, [])
                if i >= len(runs):
                    cells.append("—")
                    continue
                r = runs[i]
                settings = (f"N={r['N']} {r['scheme']}, {r['linear_solver']}, {r['hessian']}"
                            + (f", tol {r['tol']:g}" if r.get("tol") else ""))
                mark = "✔" if r["success"] else f"✘ {r['status']}"
                failures += not r["success"]
                cells.append(f"{mark} {r['nit']} it, {r['objective']:.8g}")
                objectives.append(r["objective"])
            spread = ""
            if len(objectives) > 1:
                ref = max(abs(v) for v in objectives) or 1.0
                rel = (max(objectives) - min(objectives)) / ref
                worst = max(worst, rel)
                spread = f"{rel:.1e}"
            lines.append(f"| {site} | {i + 1} | {settings} | " + " | ".join(cells) + f" | {spread} |")
    lines[lines.index("## Every solve, per kernel") + 2:lines.index("## Every solve, per kernel") + 2] = [
        f"{sum(len(v) for k in kernels for v in solves[k].values())} solves, {failures} unsuccessful; largest "
        f"relative spread of an objective across kernels {worst:.1e}.", ""]
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:40]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", nargs="+", default=list(DEFAULT_KERNELS), choices=sorted(KERNELS))
    parser.add_argument("--targets", nargs="+", default=list(DEFAULT_TARGETS))
    parser.add_argument("--learner", nargs="*", default=None, metavar="LESSON",
                        help="also execute lessons in learner mode: those given (paths), or every lesson")
    parser.add_argument("--workers", default="2", help="pytest-xdist workers (default 2)")
    parser.add_argument("--no-linear-solvers", action="store_true",
                        help="skip the studies solved with both linear solvers")
    parser.add_argument("--linear-solver-cases", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "robustness.md"))
    args = parser.parse_args()
    if args.linear_solver_cases:
        solve_linear_solver_cases()
        return
    check_targets(args.targets)
    flags = cpu_flags()
    kernels = [k for k in args.kernels if not flags or KERNELS[k] in flags]
    skipped = [k for k in args.kernels if k not in kernels]
    outcomes, solves, learner = {}, {}, {}
    lessons = learner_lessons(args.learner) if args.learner is not None else []
    with tempfile.TemporaryDirectory(prefix="moco_lab_robustness_") as tmp:
        for k in kernels:
            log = Path(tmp) / f"{k}.jsonl"
            outcomes[k] = run_kernel(k, args.targets, log, args.workers)
            if args.learner is not None:
                learner[k] = run_learner(k, Path(tmp) / f"{k}_learner.jsonl", lessons)
            if not args.no_linear_solvers:
                run_linear_solvers(k, log)
            solves[k] = collect(log)
            if args.learner is not None:
                for site, runs in collect(Path(tmp) / f"{k}_learner.jsonl").items():
                    solves[k][f"learner: {site}"] = runs
    write_report(Path(args.output), kernels, skipped, outcomes, solves, learner, args)


if __name__ == "__main__":
    main()
