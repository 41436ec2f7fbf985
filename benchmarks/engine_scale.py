"""The engine at musculoskeletal scale: derivation cost, evaluation cost, IPOPT iterations.

One script produces the tables of ``benchmarks/engine_scale.md``:

1. **Cold build** of the compiled dynamics (derive the equations, differentiate,
   compile, with an empty disk cache) for planar chains of n = 2 ... 12 links
   (:func:`moco_lab.models.n_link_pendulum`) and for the gait2d-shaped model of
   :mod:`benchmarks.gait_scale` torque-driven, with 16 muscles, and with 16
   muscles and 4 contact spheres. Also the **warm** build in the same process
   (memory cache cleared, disk cache kept) and in a **second process** (a fresh
   Python that imports moco_lab and asks for the same kernel; its import time
   is reported separately).
2. **Evaluation per node**: the compiled dynamics and their Jacobian at the
   101 grid points of a Hermite–Simpson mesh with N = 50, per node; both the
   compiled function alone and :meth:`Kernel.evaluate` (Python wrapper, dense
   Jacobian blocks, forward-dynamics solve).
3. **IPOPT at gait scale**: the stand-to-crouch minimum-effort problem of
   :func:`benchmarks.gait_scale.crouch_study`, Hermite–Simpson, N = 50, both
   dynamics modes, for the torque-driven model (about 2,700 variables) and the
   full model; iterations, total, and where an iteration's time goes (IPOPT's
   own timing statistics: factorization, back-solves, function evaluations,
   the rest).
4. **Linear in N**: time per IPOPT iteration for N = 25, 50, 100 (first 30
   iterations of the torque-driven crouch, explicit mode).

The disk cache lives in a temporary directory for the whole run, so nothing
here touches the user's cache. Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/engine_scale.py              # everything (~15 min)
    PYTHONPATH=. .venv/bin/python benchmarks/engine_scale.py --skip-ipopt # builds and evaluation only
    PYTHONPATH=. .venv/bin/python benchmarks/engine_scale.py --max-iter 300 --no-save
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[1]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

_CACHE = tempfile.mkdtemp(prefix="moco_lab_engine_scale_")
os.environ["MOCO_LAB_CACHE"] = _CACHE

import numpy as np  # noqa: E402

import moco_lab as ml  # noqa: E402
from benchmarks import gait_scale  # noqa: E402
from moco_lab.engine.kernel import build_statistics, clear_kernel_cache, kernel_for  # noqa: E402
from moco_lab.symbolic import codegen  # noqa: E402

DEFAULT_OUTPUT = _REPO_ROOT / "benchmarks" / "engine_scale.md"

GAIT_VARIANTS = {
    "gait2d-shaped, torque-driven": dict(muscles=False, contact=False),
    "+ 16 muscles": dict(muscles=True, contact=False),
    "+ 16 muscles + 4 contact spheres": dict(muscles=True, contact=True),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ builds
def _nnz(kernel) -> int:
    return len(kernel.block("dynamics_jacobian").rows)


def cold_build(model_factory) -> dict:
    """Build the kernel of a fresh model with empty memory and disk caches; then warm in-process."""
    clear_kernel_cache(disk=True)
    build_statistics.clear()
    model = model_factory()
    t0 = time.perf_counter()
    kernel = kernel_for(model).compile_all()
    cold = time.perf_counter() - t0
    codegen.wait_for_optimized_builds()  # the background rebuild it started: not beside the warm measurement
    stats = dict(build_statistics)
    clear_kernel_cache()
    model = model_factory()
    t0 = time.perf_counter()
    kernel_for(model).compile_all()
    warm = time.perf_counter() - t0
    return {"cold": cold, "warm": warm, "derive": stats.get("derive", 0.0),
            "differentiate": stats.get("differentiate", 0.0), "compile": stats.get("compile", 0.0),
            "nq": model.nq, "nx": kernel.nx, "nz": kernel.nz, "nnz": _nnz(kernel)}


_SECOND_PROCESS = """
import time, sys
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import moco_lab
from benchmarks import gait_scale
from moco_lab.engine.kernel import kernel_for, build_statistics
t1 = time.perf_counter()
model = gait_scale.gait_model(**{kwargs!r})
kernel_for(model).compile_all()
t2 = time.perf_counter()
print("RESULT", t1 - t0, t2 - t1, "differentiate" in build_statistics)
"""


def second_process(kwargs: dict) -> tuple[float, float, bool]:
    """(import time, kernel time, differentiated?) of a fresh Python process using the disk cache."""
    code = _SECOND_PROCESS.format(root=str(_REPO_ROOT), kwargs=kwargs)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "MOCO_LAB_CACHE": _CACHE}).stdout
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT")][-1].split()
    return float(line[1]), float(line[2]), line[3] == "True"


def chain_rows(max_links: int) -> list[dict]:
    rows = []
    for n in range(2, max_links + 1):
        r = cold_build(lambda: ml.models.n_link_pendulum(n))
        r["model"] = f"chain, n = {n}"
        rows.append(r)
        log(f"chain n={n}: cold {r['cold']:.3f} s, nnz {r['nnz']}")
    return rows


def gait_rows() -> list[dict]:
    rows = []
    for label, kwargs in GAIT_VARIANTS.items():
        r = cold_build(lambda: gait_scale.gait_model(**kwargs))
        # the disk cache now holds this variant: a fresh process loads it
        r["import"], r["second"], r["second_differentiated"] = second_process(kwargs)
        r["model"] = label
        rows.append(r)
        log(f"{label}: cold {r['cold']:.3f} s, warm {r['warm']:.4f} s, second process {r['second']:.3f} s")
    return rows


# ------------------------------------------------------------- evaluation
def _time(fn, min_time: float = 0.5) -> float:
    """Median seconds per call of ``fn`` over batches lasting ``min_time`` in total."""
    fn()
    samples, total = [], 0.0
    while total < min_time or len(samples) < 5:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        samples.append(dt)
        total += dt
    return statistics.median(samples)


def evaluation_rows(n_nodes: int = 101) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for label, kwargs in GAIT_VARIANTS.items():
        model = gait_scale.gait_model(**kwargs)
        kernel = kernel_for(model).compile_all()
        pose = gait_scale.standing_pose(model)
        q0 = np.array([pose.get(c.name, 0.0) for c in model.coordinates])
        Q = q0 + 0.05 * rng.standard_normal((n_nodes, model.nq))
        U = 0.5 * rng.standard_normal((n_nodes, model.nq))
        A = rng.standard_normal((n_nodes, model.nq))
        X = rng.uniform(0.05, 0.5, (n_nodes, kernel.nx))
        Z = rng.uniform(0.05, 0.5, (n_nodes, kernel.nz))
        P = np.zeros(0)
        blk = kernel.block("dynamics_jacobian")
        inputs = kernel._inputs(Q, U, A, Z, None, X)
        row = {"model": label, "nodes": n_nodes}
        row["compiled"] = _time(lambda: blk(inputs, P)) / n_nodes
        row["implicit"] = _time(lambda: kernel.evaluate(Q, U, X, P, Z=Z, A=A, jac=True)) / n_nodes
        row["explicit"] = _time(lambda: kernel.evaluate(Q, U, X, P, Z=Z, jac=True)) / n_nodes
        rows.append(row)
        log(f"{label}: {row['compiled'] * 1e6:.1f} µs/node compiled, {row['implicit'] * 1e6:.1f} µs/node evaluate")
    return rows


# ------------------------------------------------------------------ IPOPT
@contextlib.contextmanager
def captured_stdout():
    """Capture what C code (IPOPT) writes to file descriptor 1; yields a list filled with the text."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 1)
        out: list[str] = []
        try:
            yield out
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode(errors="replace"))


_TIMERS = {
    "total": "OverallAlgorithm",
    "factorization": "LinearSystemFactorization",
    "backsolve": "LinearSystemBackSolve",
    "evaluations": "Function Evaluations",
    "hessian_update": "UpdateHessian",
}


def ipopt_timing(text: str) -> dict:
    """Wall seconds of IPOPT's timing statistics (``print_timing_statistics yes``)."""
    out = {}
    for key, label in _TIMERS.items():
        m = re.search(re.escape(label) + r"\.*:\s*[0-9.]+ \(sys:\s*[0-9.]+ wall:\s*([0-9.]+)\)", text)
        if m:
            out[key] = float(m.group(1))
    return out


def ipopt_run(kwargs: dict, mode: str, N: int, max_iter: int, tol: float | None, accel_weight: float = 0.0) -> dict:
    model = gait_scale.gait_model(**kwargs)
    study = gait_scale.crouch_study(model, mode=mode, num_mesh_intervals=N)
    if accel_weight:  # Moco's minimize_implicit_multibody_accelerations
        study.solver.minimize_implicit_multibody_accelerations = True
        study.solver.implicit_multibody_accelerations_weight = accel_weight
    study.solver.optim_max_iterations = max_iter
    if tol is not None:
        study.solver.optim_convergence_tolerance = tol
    study.solver.verbose = 6  # IPOPT's iteration log and timing statistics to stdout
    kernel_for(model).compile_all()  # builds are measured above; here the solve
    t0 = time.perf_counter()
    with captured_stdout() as out:
        sol = study.solve()
    wall = time.perf_counter() - t0
    text = out[0]
    m = re.search(r"Total number of variables\.*:\s*(\d+)", text)
    timing = ipopt_timing(text)
    nit = max(int(sol.nit), 1)
    row = {"variables": int(m.group(1)) if m else None, "nit": int(sol.nit), "status": sol.status, "wall": wall,
           "objective": float(sol.objective), "per_iter": timing.get("total", wall) / nit}
    for key in ("factorization", "backsolve", "evaluations", "hessian_update"):
        row[key] = timing.get(key, float("nan")) / nit
    row["other"] = row["per_iter"] - row["factorization"] - row["backsolve"] - row["evaluations"]
    return row


def ipopt_rows(max_iter: int, tol: float | None) -> list[dict]:
    rows = []
    for label in ("gait2d-shaped, torque-driven", "+ 16 muscles + 4 contact spheres"):
        for mode, weight in (("explicit", 0.0), ("implicit", 0.0), ("implicit", 1e-3)):
            r = ipopt_run(GAIT_VARIANTS[label], mode, 50, max_iter, tol, weight)
            r.update(model=label, mode=mode if not weight else f"implicit + {weight:g} ∫ u̇² dt")
            rows.append(r)
            log(f"{label} {mode}: {r['nit']} iterations, {r['status']}, {r['wall']:.1f} s, "
                f"{r['per_iter'] * 1e3:.1f} ms/iteration")
    return rows


def scaling_rows(iterations: int = 30) -> list[dict]:
    rows = []
    for N in (25, 50, 100):
        r = ipopt_run(GAIT_VARIANTS["gait2d-shaped, torque-driven"], "explicit", N, iterations, None)
        r["N"] = N
        rows.append(r)
        log(f"N={N}: {r['per_iter'] * 1e3:.1f} ms/iteration")
    return rows


# --------------------------------------------------------------- reporting
def _ms(x: float) -> str:
    return "–" if x != x else f"{x * 1e3:.1f}"


def markdown(chains, gaits, evals, ipopt, scaling, env) -> str:
    lines = [f"# Engine at musculoskeletal scale ({env['date']})", "",
             f"Machine: {env['machine']}; Python {env['python']}, Drake {env['drake']}, moco_lab {ml.__version__}, "
             f"C compiler `{env['cc']}`. Produced by `benchmarks/engine_scale.py`.", ""]
    lines += ["## 1. Building the compiled dynamics", "",
              "Cold: empty memory and disk caches (derive the equations, differentiate them, compile to C). "
              "Warm: the same model rebuilt in the same process with the memory cache cleared (loads from disk). "
              "Second process: a fresh Python asking for the same kernel (the time after `import moco_lab`; "
              "the import itself is the last column). nnz: structural non-zeros of the dynamics Jacobian per node.",
              "", "| model | nq | controls/aux. states | nnz | cold (s) | derive | differentiate | compile "
              "| warm (s) | second process (s) | import (s) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in chains + gaits:
        second = f"{r['second']:.3f}" + ("" if not r.get("second_differentiated") else " (re-derived!)") \
            if "second" in r else "–"
        imp = f"{r['import']:.2f}" if "import" in r else "–"
        lines.append(f"| {r['model']} | {r['nq']} | {r['nx']}/{r['nz']} | {r['nnz']} | {r['cold']:.3f} "
                     f"| {r['derive']:.3f} | {r['differentiate']:.3f} | {r['compile']:.3f} | {r['warm']:.4f} "
                     f"| {second} | {imp} |")
    if len(chains) >= 3:
        n = np.arange(2, 2 + len(chains))
        cold = np.array([r["cold"] for r in chains])
        nnz = np.array([r["nnz"] for r in chains])
        slope_t = np.polyfit(np.log(n[-4:]), np.log(cold[-4:]), 1)[0]
        slope_nnz = np.polyfit(np.log(n[-4:]), np.log(nnz[-4:]), 1)[0]
        lines += ["", f"Growth over the last four chains: cold build ∝ n^{slope_t:.2f}, Jacobian non-zeros "
                  f"∝ n^{slope_nnz:.2f} (the mass matrix and its derivatives are dense in a chain: n² entries)."]
    lines += ["", "## 2. Dynamics and Jacobian per node", "",
              f"At {evals[0]['nodes'] if evals else 101} nodes per call (the grid of Hermite–Simpson, N = 50); "
              "µs per node. Compiled: the C function (values and sparse Jacobian entries). evaluate(): "
              "`Kernel.evaluate(..., jac=True)` with dense Jacobian blocks, implicit (residual) and explicit "
              "(forward dynamics, with the mass-matrix solves). Anchor: the gait2d MEX evaluates all 50 residuals "
              "and Jacobians in 32 µs, 0.64 µs per node (gait2d manual §4).", "",
              "| model | compiled (µs/node) | evaluate() implicit | evaluate() explicit |", "|---|---|---|---|"]
    for r in evals:
        lines.append(f"| {r['model']} | {r['compiled'] * 1e6:.1f} | {r['implicit'] * 1e6:.1f} "
                     f"| {r['explicit'] * 1e6:.1f} |")
    if ipopt:
        lines += ["", f"## 3. IPOPT on the stand-to-crouch problem (Hermite–Simpson, N = 50, tol {env['tol']:g})", "",
                  "Per iteration (ms), from IPOPT's `print_timing_statistics`: factorization and back-solves of "
                  "the KKT system (SPRAL), function evaluations (moco_lab's constraint and cost callbacks "
                  "through Drake, including Drake's conversion of each callback's Jacobian into a dense AutoDiff "
                  "matrix), L-BFGS update, and the rest of IPOPT. The last mode adds Moco's "
                  "`minimize_implicit_multibody_accelerations` with weight 1e-3.", "",
                  "| model | mode | variables | iterations | status | total (s) | ms/iteration | factorization "
                  "| back-solves | evaluations | L-BFGS | other |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in ipopt:
            lines.append(f"| {r['model']} | {r['mode']} | {r['variables']} | {r['nit']} | {r['status']} "
                         f"| {r['wall']:.1f} | {_ms(r['per_iter'])} | {_ms(r['factorization'])} "
                         f"| {_ms(r['backsolve'])} | {_ms(r['evaluations'])} | {_ms(r['hessian_update'])} "
                         f"| {_ms(r['other'])} |")
    if scaling:
        lines += ["", "## 4. Time per iteration against N (torque-driven, explicit, first iterations)", "",
                  "| N | variables | ms/iteration | per mesh interval (ms) |", "|---|---|---|---|"]
        for r in scaling:
            lines.append(f"| {r['N']} | {r['variables']} | {_ms(r['per_iter'])} | {r['per_iter'] / r['N'] * 1e3:.2f} |")
    return "\n".join(lines) + "\n"


def environment() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    try:
        drake = version("drake")
    except PackageNotFoundError:  # pragma: no cover
        drake = "?"
    return {"date": _dt.date.today().isoformat(),
            "machine": f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
                       f"load average {os.getloadavg()[0]:.1f}",
            "python": platform.python_version(), "drake": drake,
            "cc": codegen.c_compiler() or "none (numpy backend)"}


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-links", type=int, default=12)
    ap.add_argument("--max-iter", type=int, default=3000, help="IPOPT iteration limit of the crouch solves")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="IPOPT tol of the crouch solves (default 1e-4, as Moco's 2-D walking example)")
    ap.add_argument("--skip-ipopt", action="store_true")
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    env = environment()
    env["tol"] = args.tol
    chains = chain_rows(args.max_links)
    gaits = gait_rows()
    evals = evaluation_rows()
    ipopt = [] if args.skip_ipopt else ipopt_rows(args.max_iter, args.tol)
    scaling = [] if args.skip_ipopt else scaling_rows()
    text = markdown(chains, gaits, evals, ipopt, scaling, env)
    print(text)
    if not args.no_save:
        args.output.write_text(text)
        log(f"written to {args.output}")
    return text


if __name__ == "__main__":
    main()
