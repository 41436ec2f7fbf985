"""The interpreter of compiled statements against itself as it was and against the compiled C code, in one run.

moco_lab runs a model's generated statements on a small interpreter (:mod:`moco_lab.symbolic.interpreter`) instead
of compiling them per model. Measured here on the squat-to-stand model's two largest functions (the Moco paper's
model, :func:`moco_lab.examples.squat.squat_to_stand_study`), at the 101 collocation points of its Hermite–Simpson
mesh: the dynamics' values and Jacobian (~117,000 statements per point) and the exact Hessian of the weighted
dynamics (~380,000):

* the interpreter as built today (:data:`~moco_lab.symbolic.interpreter.LANES` points per instruction, compiled with
  :data:`~moco_lab.symbolic.interpreter.INTERPRETER_FLAGS`);
* the interpreter as it was built until 2026-11-30 (16 points per instruction, ``-O2``): the same C source
  otherwise;
* the generated C code compiled at ``-O0`` and with :data:`~moco_lab.symbolic.codegen.OPTIMIZED_FLAGS` (``-O1``;
  the Hessian's compilation takes minutes).

Every variant must return the same numbers to the last bit (checked; a difference fails the run). Times: the best of
five rounds of ten evaluations, wall milliseconds per evaluation, on a shared machine (compare the rows of one run).

Writes ``benchmarks/interpreter.md``.

Usage::

    .venv/bin/python -m benchmarks.interpreter          # ~5 minutes on 2 cores (most of it compiling)
"""
from __future__ import annotations

import argparse
import platform
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: The interpreter's build until 2026-11-30.
PREVIOUS_LANES, PREVIOUS_FLAGS = 16, ("-O2", "-ffp-contract=off", "-fno-builtin")


def _best_ms(fn, X, P, rounds: int = 5, repeat: int = 10) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(repeat):
            fn(X, P)
        best = min(best, (time.perf_counter() - t) / repeat)
    return 1e3 * best


def _previous_interpreter(tape, folder: Path):
    """``impl(X, P) -> Y`` of the interpreter as it was built until 2026-11-30 (16 lanes, -O2)."""
    from moco_lab.symbolic import codegen, interpreter

    run = interpreter.interpreter_library(codegen.c_compiler(), folder, lanes=PREVIOUS_LANES, flags=PREVIOUS_FLAGS)
    return interpreter.tape_function(tape, run, lanes=PREVIOUS_LANES)


def measure(folder: Path) -> list[dict]:
    """Build the squat's kernels in ``folder`` (an empty kernel cache) and time every variant of both."""
    import os

    os.environ["MOCO_LAB_CACHE"] = str(folder)
    os.environ["MOCO_LAB_OPTIMIZE_KERNELS"] = "0"
    from moco_lab.engine.kernel import kernel_for
    from moco_lab.examples.squat import squat_to_stand_study
    from moco_lab.symbolic import codegen, interpreter

    study = squat_to_stand_study(assisted=False, tol=1e-3)
    kernel = kernel_for(study.problem.model)
    functions = {"dynamics values and Jacobian": kernel.block("dynamics_jacobian").function,
                 "exact Hessian of the dynamics": kernel.hessian_block("dynamics").function}
    rng = np.random.default_rng(0)
    rows = []
    for label, fn in functions.items():
        print(f"{label}: {fn.num_operations} statements per point", flush=True)
        X = rng.uniform(0.1, 0.9, (101, fn.num_inputs))
        P = np.zeros(fn.num_shared)
        tape_path = next(codegen.cache_dir().glob(f"{fn.name}-*.tape.npz"))
        tape = interpreter.Tape.load(tape_path)
        today = interpreter.tape_function(tape, interpreter.interpreter_library(codegen.c_compiler(), folder))
        variants = {f"interpreter, {interpreter.LANES} points per instruction, "
                    f"{' '.join(interpreter.INTERPRETER_FLAGS)} (today)": today,
                    f"interpreter, {PREVIOUS_LANES} points per instruction, {' '.join(PREVIOUS_FLAGS)} (until "
                    "2026-11-30)": _previous_interpreter(tape, folder)}
        units = fn.source.split(codegen._UNIT_SEPARATOR)
        plain = tape_path.with_name(tape_path.name.replace(".tape.npz", ".so"))
        t = time.perf_counter()
        assert codegen.start_background_build(codegen.c_compiler(), units, plain, wait=True).returncode == 0
        print(f"  compiled at -O0 and {' '.join(codegen.OPTIMIZED_FLAGS)} in {time.perf_counter() - t:.0f} s",
              flush=True)
        optimized = codegen.load_library(plain, fn.name, fn.num_outputs)
        assert optimized.runs() == "optimized"
        variants[f"compiled, {' '.join(codegen.OPTIMIZED_FLAGS)}"] = optimized
        moved = plain.with_name(f"{fn.name}.optimized.so")
        codegen.optimized_path(plain).rename(moved)
        plain_lib = codegen.load_library(plain, fn.name, fn.num_outputs)
        assert plain_lib.runs() == "plain"
        variants["compiled, -O0"] = plain_lib
        reference = today(X, P)
        for name, impl in variants.items():
            same = np.array_equal(impl(X, P), reference, equal_nan=True)
            if not same:
                raise AssertionError(f"{label}: {name} computes other numbers than the interpreter")
            ms = _best_ms(impl, X, P)
            print(f"  {name:70s} {ms:7.1f} ms", flush=True)
            rows.append({"function": label, "statements": fn.num_operations, "variant": name, "ms": ms})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(HERE / "interpreter.md"))
    args = parser.parse_args(argv)
    started = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory(prefix="moco_lab_interpreter_bench_") as tmp:
        rows = measure(Path(tmp))
    _write(Path(args.output), rows, started)
    print(f"wrote {args.output}")
    return 0


def _write(path: Path, rows: list[dict], started) -> None:
    import os

    import moco_lab
    from moco_lab.symbolic import codegen

    lines = [
        "# The statements' interpreter against its previous build and the compiled code",
        "",
        f"Written by `python -m benchmarks.interpreter` on {started:%Y-%m-%d %H:%M} UTC; moco_lab "
        f"{moco_lab.__version__}, numpy {np.__version__}, Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, C compiler `{codegen.c_compiler()}`. The squat-to-stand model's functions at "
        "101 points (its Hermite–Simpson mesh); every variant returned the same numbers to the last bit. Best of "
        "five rounds of ten evaluations, wall ms per evaluation; compare rows of one run.",
        "",
        "| function | statements per point | variant | ms per evaluation |",
        "|---|---:|---|---:|",
    ]
    lines += [f"| {r['function']} | {r['statements']:,} | {r['variant']} | {r['ms']:.1f} |" for r in rows]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
