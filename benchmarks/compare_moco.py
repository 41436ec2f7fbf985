"""Side-by-side solve times and results: moco_lab versus the real OpenSim Moco.

For every problem x transcription scheme x dynamics mode x mesh size, the same
problem is solved alternately with moco_lab and with Moco (moco_lab, Moco,
moco_lab, Moco, ...; ``--repeats`` times each), and a Markdown table of the
medians is printed and written to ``benchmarks/results.md`` together with
the date, the machine and the package versions.

What is timed (wall clock, :func:`time.perf_counter`):

moco_lab
    The whole ``study.solve()`` call of a study freshly built by
    :data:`moco_lab.examples.VERIFICATION_STUDIES` (fresh model too): transcription,
    derivation, differentiation and compilation of the dynamics and their
    Jacobians, the IPOPT solve and packaging of the solution. The compiled
    dynamics are cleared from memory and from the disk cache (a temporary
    ``MOCO_LAB_CACHE`` for this run) before each repeat, so every repeat pays
    the full compilation, as Moco builds its CasADi functions on every solve.
    Building the model and study (``ml.models.*()``, bounds,
    goals; about a millisecond) is not part of ``solve()``; its largest
    median is given below the table. The optimizer's share of ``solve()``
    (``Solution.solve_time``) is shown as "IPOPT".
Moco
    The whole ``study.solve()`` call of a ``MocoStudy`` freshly built by
    :mod:`benchmarks.moco_reference` (fresh ``osim.Model`` too): model
    initialization, building the CasADi functions, the IPOPT solve
    (finite-difference Jacobians, Moco's default) and the solution.

The process CPU time (all threads) is reported next to each wall time: Moco
evaluates its CasADi functions on all cores by default (``parallel``), so on
a busy machine its wall time and CPU time can differ noticeably.

One untimed warm-up solve of each tool comes first, so that one-time costs of
the process (shared-library loading, lazy imports) are not charged to the
first case. Both use IPOPT with its default tolerances (``tol`` 1e-8,
``constr_viol_tol`` 1e-4) and the guess from bounds.

Usage::

    # from the repository root
    PYTHONPATH=. .venv/bin/python benchmarks/compare_moco.py               # N = 50 and 100, 3 repeats
    PYTHONPATH=. .venv/bin/python benchmarks/compare_moco.py --N 50 --repeats 5 \
        --problems double_pendulum --schemes hermite-simpson --no-save
"""
from __future__ import annotations

import argparse
import datetime as _dt
import glob
import json
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[1]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

import tempfile  # noqa: E402

import numpy as np  # noqa: E402

import moco_lab as ml  # noqa: E402
from benchmarks import moco_reference as mr  # noqa: E402
from moco_lab.engine.collocation import CLASSICAL_SCHEMES as SCHEMES  # noqa: E402
from moco_lab.engine.collocation import DYNAMICS_MODES as MODES  # noqa: E402
from moco_lab.engine.collocation import SCHEMES as ALL_SCHEMES  # noqa: E402
from moco_lab.engine.kernel import clear_kernel_cache  # noqa: E402
from moco_lab.symbolic import codegen  # noqa: E402

#: Problem name -> (Moco solver from benchmarks.moco_reference, its keyword arguments);
#: the moco_lab side is moco_lab.examples.VERIFICATION_STUDIES[name]. Also used by tests/test_against_moco.py.
MOCO_SOLVERS = {
    "linear[kirk]": (mr.solve_linear, {"variant": "kirk"}),
    "linear[moco_test]": (mr.solve_linear, {"variant": "moco_test"}),
    "sliding_mass": (mr.solve_sliding_mass, {}),
    "double_pendulum": (mr.solve_double_pendulum, {}),
}

DEFAULT_OUTPUT = _REPO_ROOT / "benchmarks" / "results.md"


# ------------------------------------------------------------------- solving
def _private_cache() -> None:
    """Compile into a temporary ``MOCO_LAB_CACHE`` of this run, never the user's (the cold timings empty it). Set
    when the benchmark runs, not when a test imports this module for its constants: a redirect at import would send
    every compile of that test process (and of the notebooks it starts) to a throwaway folder."""
    current = os.environ.get("MOCO_LAB_CACHE")
    if current is None or current != os.environ.get("MOCO_LAB_COMPARE_PRIVATE_CACHE"):
        os.environ["MOCO_LAB_CACHE"] = tempfile.mkdtemp(prefix="moco_lab_compare_")
        os.environ["MOCO_LAB_COMPARE_PRIVATE_CACHE"] = os.environ["MOCO_LAB_CACHE"]


def run_moco_lab(problem: str, scheme: str, mode: str, N: int) -> dict:
    """Build a fresh moco_lab study, solve it, and time both steps."""
    _private_cache()
    clear_kernel_cache(disk=True)  # every repeat derives and compiles the dynamics from scratch
    start = time.perf_counter()
    study = ml.examples.VERIFICATION_STUDIES[problem](scheme=scheme, mode=mode, num_mesh_intervals=N)
    build = time.perf_counter() - start
    cpu_start, start = time.process_time(), time.perf_counter()
    solution = study.solve()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    codegen.wait_for_optimized_builds()  # the background rebuild it started: not beside the next measurement
    return {"wall": wall, "cpu": cpu, "build": build, "optimizer": solution.solve_time, "success": solution.success,
            "objective": solution.objective, "nit": solution.nit, "status": solution.status}


def run_moco(problem: str, scheme: str, mode: str, N: int) -> dict:
    """Solve with OpenSim Moco (fresh model and study; ``study.solve()`` timed)."""
    solve, kwargs = MOCO_SOLVERS[problem]
    cpu_start = time.process_time()
    res = solve(scheme=scheme, mode=mode, N=N, **kwargs)
    cpu = time.process_time() - cpu_start
    return {"wall": res["solve_time"], "cpu": cpu, "success": res["success"], "objective": res["objective"],
            "nit": res["nit"], "status": res["status"]}


def benchmark_case(problem: str, scheme: str, mode: str, N: int, repeats: int) -> dict:
    """Alternate moco_lab and Moco solves ``repeats`` times; return the medians."""
    lab_runs, moco_runs = [], []
    for _ in range(repeats):
        lab_runs.append(run_moco_lab(problem, scheme, mode, N))
        moco_runs.append(run_moco(problem, scheme, mode, N))
    med = statistics.median
    lab_last, moco_last = lab_runs[-1], moco_runs[-1]
    row = {
        "problem": problem, "scheme": scheme, "mode": mode, "N": N, "repeats": repeats,
        "lab_wall": med(r["wall"] for r in lab_runs),
        "lab_build": med(r["build"] for r in lab_runs),
        "lab_optimizer": med(r["optimizer"] for r in lab_runs),
        "lab_cpu": med(r["cpu"] for r in lab_runs),
        "moco_wall": med(r["wall"] for r in moco_runs),
        "moco_cpu": med(r["cpu"] for r in moco_runs),
        "lab_success": all(r["success"] for r in lab_runs),
        "moco_success": all(r["success"] for r in moco_runs),
        "lab_objective": lab_last["objective"], "moco_objective": moco_last["objective"],
        "lab_nit": lab_last["nit"], "moco_nit": moco_last["nit"],
        # Deterministic solvers: every repeat must give the same objective.
        "lab_spread": np.ptp([r["objective"] for r in lab_runs]),
        "moco_spread": np.ptp([r["objective"] for r in moco_runs]),
    }
    row["ratio"] = row["moco_wall"] / row["lab_wall"]
    row["rel_diff"] = abs(row["lab_objective"] - row["moco_objective"]) / abs(row["moco_objective"])
    return row


def warm_up() -> None:
    """One small untimed solve of each tool (library loading, lazy imports)."""
    ml.examples.linear_study("kirk", "hermite-simpson", "implicit", 5).solve()
    mr.solve_linear(variant="kirk", scheme="hermite-simpson", mode="implicit", N=5)


# ------------------------------------------------------------------ reporting
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _bundled_library_version(pattern: str) -> str:
    """Version of a shared library shipped inside the opensim wheel, from its file name."""
    opensim_dir = Path(mr.osim.__file__).parent
    versions = []
    for path in glob.glob(str(opensim_dir / pattern)):
        m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", path)
        if m:
            versions.append(m.group(1))
    return max(versions, key=lambda v: (v.count("."), v)) if versions else "?"


def _version(module_name: str) -> str:
    try:
        from importlib.metadata import version

        return version(module_name)
    except Exception:  # pragma: no cover
        return "?"


def environment() -> dict:
    """Date, machine and package versions, for the results header."""
    return {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "moco_lab": ml.__version__,
        "drake": _version("drake"),
        "opensim": mr.osim.__version__,
        "casadi": _bundled_library_version("libcasadi.so.*"),
        "moco_ipopt": _bundled_library_version("libipopt.so.*"),
        "moco_lab_ipopt_mumps": f"casadi {_version('casadi')} wheel's IPOPT (optim_linear_solver='mumps')",
        "numpy": np.__version__,
        "cc": codegen.c_compiler() or "none (numpy backend)",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }


def stored_reference(name: str) -> tuple[Path, dict]:
    """The stored Moco reference ``benchmarks/reference/<name>.json``: its path (the folder made if missing) and its
    contents (``{}`` before the first run)."""
    folder = Path(__file__).resolve().parent / "reference"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    return path, (json.loads(path.read_text()) if path.exists() else {})


def _loadavg() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def _fmt_nit(x) -> str:
    return "?" if x is None else str(x)


def markdown_table(rows: list[dict]) -> str:
    """The results as one Markdown table (medians of the repeats)."""
    head = ("| problem | scheme | mode | N | moco_lab solve() [s] | (CPU [s]) | (IPOPT [s]) "
            "| Moco solve() [s] | (CPU [s]) | Moco / moco_lab | J moco_lab | J Moco | rel. diff. "
            "| iterations moco_lab / Moco |")
    sep = "|" + "|".join(["---"] * 3 + ["--:"] * 11) + "|"
    lines = [head, sep]
    for r in rows:
        flag = "" if (r["lab_success"] and r["moco_success"]) else " **(failed)**"
        lines.append(
            f"| {r['problem']}{flag} | {r['scheme']} | {r['mode']} | {r['N']} "
            f"| {r['lab_wall']:.3f} | {r['lab_cpu']:.3f} | {r['lab_optimizer']:.3f} "
            f"| {r['moco_wall']:.3f} | {r['moco_cpu']:.3f} "
            f"| {r['ratio']:.1f} | {r['lab_objective']:.10g} | {r['moco_objective']:.10g} | {r['rel_diff']:.1e} "
            f"| {_fmt_nit(r['lab_nit'])} / {_fmt_nit(r['moco_nit'])} |")
    return "\n".join(lines)


def summary_lines(rows: list[dict]) -> list[str]:
    """Per-N geometric mean of the speed ratio and total times."""
    out = []
    for N in sorted({r["N"] for r in rows}):
        sub = [r for r in rows if r["N"] == N]
        gmean = float(np.exp(np.mean(np.log([r["ratio"] for r in sub]))))
        gmean_cpu = float(np.exp(np.mean(np.log([r["moco_cpu"] / r["lab_cpu"] for r in sub]))))
        out.append(
            f"- N = {N}: geometric mean of Moco / moco_lab = {gmean:.1f} "
            f"(range {min(r['ratio'] for r in sub):.1f} .. {max(r['ratio'] for r in sub):.1f}; "
            f"of the CPU times: {gmean_cpu:.1f}); "
            f"summed medians: moco_lab {sum(r['lab_wall'] for r in sub):.2f} s, "
            f"Moco {sum(r['moco_wall'] for r in sub):.2f} s; "
            f"largest relative objective difference {max(r['rel_diff'] for r in sub):.1e}.")
    failed = [r for r in rows if not (r["lab_success"] and r["moco_success"])]
    if failed:
        out.append("- FAILED cases: " + ", ".join(f"{r['problem']} {r['scheme']} {r['mode']} N={r['N']}"
                                                  for r in failed))
    spread = max(max(r["lab_spread"], r["moco_spread"]) for r in rows)
    out.append(f"- Largest spread of an objective over the repeats of one case: {spread:.1e}.")
    out.append(f"- Building a moco_lab model and study (not timed above) took at most "
               f"{max(r['lab_build'] for r in rows) * 1e3:.1f} ms (median).")
    return out


def _load_warning(env: dict, *loads: str) -> list[str]:
    """A caution when the machine was busier than its CPU count during the run."""
    try:
        busiest = max(float(load.split(" / ")[0]) for load in loads)
    except ValueError:
        return []
    if not env["nproc"] or busiest <= env["nproc"]:
        return []
    return ["",
            f"**Caution:** the 1-minute load average ({busiest:.1f}) exceeded the CPU count ({env['nproc']}):",
            "other processes competed for the CPUs, so wall times are inflated and noisy (compare the",
            "CPU columns, which are steadier). Objectives and iteration counts are unaffected."]


def results_markdown(rows: list[dict], env: dict, args, load_before: str, load_after: str,
                     elapsed: float) -> str:
    """The full ``results.md`` document."""
    lines = [
        "# moco_lab versus OpenSim Moco: solve times and objectives",
        "",
        f"Generated by `benchmarks/compare_moco.py` on {env['date']} "
        f"(`--N {' '.join(map(str, args.N))} --repeats {args.repeats}`; whole run {elapsed:.0f} s).",
        "",
        f"- Machine: {env['nproc']} CPUs ({env['cpu']}); load average (1/5/15 min) "
        f"{load_before} at the start, {load_after} at the end.",
        f"- Python {env['python']}; moco_lab {env['moco_lab']}, drake {env['drake']} "
        f"(IPOPT vendored by Drake, linear solver SPRAL); numpy {env['numpy']}, C compiler {env['cc']}.",
        f"- OpenSim {env['opensim']} (Moco, `MocoCasADiSolver`; CasADi {env['casadi']}, "
        f"IPOPT {env['moco_ipopt']} as shipped in the opensim wheel).",
        "",
        "Times are medians over the repeats, alternating moco_lab and Moco; each repeat builds a fresh",
        "model and study. *moco_lab solve()* is the wall time of the whole `study.solve()` call",
        "(transcription, symbolic derivation and compilation of the dynamics, IPOPT, solution);",
        "*IPOPT* is the optimizer's share of it (`Solution.solve_time`). *Moco solve()* is the wall",
        "time of `MocoStudy.solve()` (model initialization, CasADi function construction, IPOPT",
        "with finite-difference Jacobians, solution). *CPU* is the process CPU time (all threads;",
        "for Moco it also covers building the `osim.Model`, a few ms): Moco evaluates its functions",
        "on all cores by default, moco_lab's Python code on one (IPOPT's linear solver may use more).",
        "The ratio is of the wall times. Objectives",
        "and iteration counts are from the last repeat. See `benchmarks/README.md`.",
        *_load_warning(env, load_before, load_after),
        "",
        markdown_table(rows),
        "",
        *summary_lines(rows),
        "",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--N", type=int, nargs="+", default=[50, 100], help="mesh intervals (default: 50 100)")
    p.add_argument("--repeats", type=int, default=3, help="solves per tool and case (default: 3)")
    p.add_argument("--problems", nargs="+", choices=list(MOCO_SOLVERS), default=list(MOCO_SOLVERS))
    p.add_argument("--schemes", nargs="+", choices=ALL_SCHEMES, default=list(SCHEMES))
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                   help=f"Markdown file to write (default: {DEFAULT_OUTPUT.relative_to(_REPO_ROOT)})")
    p.add_argument("--no-save", action="store_true", help="print the table only")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv=None) -> list[dict]:
    _private_cache()
    args = parse_args(argv)
    env = environment()
    load_before = _loadavg()
    start = time.perf_counter()
    warm_up()
    rows = []
    for N in args.N:
        for problem in args.problems:
            for scheme in args.schemes:
                for mode in args.modes:
                    row = benchmark_case(problem, scheme, mode, N, args.repeats)
                    rows.append(row)
                    print(f"[{time.perf_counter() - start:7.1f} s] {problem} {scheme} {mode} N={N}: "
                          f"moco_lab {row['lab_wall']:.3f} s, Moco {row['moco_wall']:.3f} s, "
                          f"ratio {row['ratio']:.1f}, rel. diff. J {row['rel_diff']:.1e}",
                          file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    print(markdown_table(rows))
    print()
    print("\n".join(summary_lines(rows)))
    if not args.no_save:
        text = results_markdown(rows, env, args, load_before, _loadavg(), elapsed)
        args.output.write_text(text)
        print(f"\nWritten to {args.output}", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main()
