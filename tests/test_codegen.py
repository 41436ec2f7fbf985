"""How the compiled equations run (moco_lab.symbolic.codegen, moco_lab.symbolic.interpreter): the interpreter at
once, the optimized library (-O1) when a background process has compiled it.

What must hold: the interpreter and every compiled build compute exactly the same numbers (a solve that switches
between two iterations must not notice) for every operation, any number of nodes (the interpreter runs 16 at a
time) and any shared inputs; the optimized library is picked up by a function already in use and by later
processes; a tape kept on disk serves a later process; the background build starts only when asked, once per
library, and cleans up after itself.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from moco_lab.symbolic import Graph, codegen, compile_function, derivatives
from moco_lab.symbolic import expr as sx

pytestmark = pytest.mark.skipif(codegen.c_compiler() is None, reason="no C compiler")


def _every_operation(n_chain: int = 60):
    """Outputs using every operation the code generator emits (and their derivatives), plus a long chain of
    products and sums, the pattern a compiler could fuse into multiply-adds."""
    g = Graph()
    x, y, p = g.var("x"), g.var("y"), g.var("p")
    terms = [(x * y - x / (y + 3.0)) * p - y, x ** 2.5 + y ** 3 + x ** -1.5 + 1.0 / (x * x) + x ** 2.0,
             np.sin(x) * np.cos(y) + np.tan(0.3 * x), np.exp(0.5 * x) + np.log(x * x + y * y) + np.sqrt(x * x + p),
             np.tanh(x - y) + np.sinh(0.5 * x) * np.cosh(0.2 * y),
             np.arcsin(0.3 * np.tanh(x)) + np.arccos(0.2 * np.tanh(y)) + np.arctan(x * y),
             np.arctan2(y - 0.5, x - 0.4) + np.abs(x - y), sx.where(x - y, x * x * p, -y), sx.sign(x - 0.1 * y)]
    chain = x
    for k in range(n_chain):
        chain = chain * (0.97 + 0.001 * k) + y * p - 0.5 * chain * x
    outputs = terms + [chain]
    (d,) = derivatives([sum(terms[1:], terms[0]) + chain], [x, y, p])
    outputs += [d.get(k, 0.0) for k in range(3)]
    return outputs, [x, y], [p]


def _inputs():
    rng = np.random.default_rng(7)
    # values of every size and sign, so that the math functions see their whole range (NaN where undefined)
    return rng.normal(0.0, 1.0, (400, 2)) * rng.choice([1e-3, 0.5, 1.0, 4.0, 30.0], (400, 1)), np.array([0.7])


def test_the_optimized_rebuild_computes_the_same_numbers_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "0")
    outputs, xs, ps = _every_operation()
    fn = compile_function(outputs, xs, ps, name="every_op", backend="c", key="k_every_op")
    X, P = _inputs()
    first = fn(X, P)
    assert not fn._impl.optimized() and np.isnan(first).any() and np.isfinite(first).sum() > first.size // 2
    plain = codegen.cache_dir() / "every_op-k_every_op.so"
    units = fn.source.split(codegen._UNIT_SEPARATOR)
    proc = codegen.start_optimized_build(codegen.c_compiler(), units, plain, wait=True)
    assert proc.returncode == 0
    better = codegen.optimized_path(plain)
    assert better.exists() and better.name == f"every_op-k_every_op.{codegen.OPTIMIZED_TAG}.so"
    assert not list(tmp_path.rglob("moco_lab_opt_*"))      # its build folder is gone
    time.sleep(1.05)                                        # a function in use looks for it once a second
    again = fn(X, P)
    assert fn._impl.optimized()
    assert np.array_equal(first, again, equal_nan=True)
    # a later process (here: a load from the disk cache) takes the optimized build straight away
    loaded = codegen.load_function("every_op", "k_every_op", 2, 1, len(outputs), "c")
    assert loaded._impl.optimized() and np.array_equal(loaded(X, P), first, equal_nan=True)


def test_a_first_build_starts_the_optimized_one_in_the_background(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    g = Graph()
    x, p = g.var("x"), g.var("p")
    outputs = [np.sin(x) * p + x * x, np.exp(-x * p)]
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "0")
    compile_function(outputs, [x], [p], name="bg_off", backend="c", key="k_off")
    assert codegen.wait_for_optimized_builds(60) == 0
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "1")
    fn = compile_function(outputs, [x], [p], name="bg_on", backend="c", key="k_on")
    X, P = np.linspace(-2, 2, 9)[:, None], np.array([1.3])
    first = fn(X, P)
    codegen.wait_for_optimized_builds(120)
    assert codegen.optimized_path(codegen.cache_dir() / "bg_on-k_on.so").exists()
    assert not codegen.optimized_path(codegen.cache_dir() / "bg_off-k_off.so").exists()
    time.sleep(1.05)
    assert np.array_equal(fn(X, P), first) and fn._impl.optimized()
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "sometimes")
    with pytest.raises(ValueError, match="MOCO_LAB_OPTIMIZE_KERNELS must be 1 or 0, got 'sometimes'"):
        codegen.optimize_in_background()


def test_the_interpreter_computes_the_compiled_numbers_bit_for_bit(tmp_path, monkeypatch):
    """Every operation, at 0, 1, LANES - 1, LANES + 1 and 403 nodes (partial and whole blocks of the interpreter's
    lanes), against the plain (-O0) and optimized (-O1) libraries compiled from the same statements; its operation
    codes are the expression graph's."""
    import re

    from moco_lab.symbolic import interpreter

    names = re.search(r"enum \{([^}]*)\}", interpreter.INTERPRETER_SOURCE).group(1)
    codes = [c.split("=")[0].strip() for c in names.replace("\n", " ").split(",")]
    assert codes[:-1] == [op.upper() for op in sx.OPS[2:]] and "ADD = 2" in names
    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "0")
    outputs, xs, ps = _every_operation()
    fn = compile_function(outputs, xs, ps, name="every_op", backend="c", key="k_tape")
    assert fn._impl.runs() == "interpreter"
    X, P = _inputs()
    X = np.concatenate([X, X[:3] * 1.7])   # 403 nodes
    units = fn.source.split(codegen._UNIT_SEPARATOR)
    plain = tmp_path / "every_op.so"
    assert codegen.start_background_build(codegen.c_compiler(), units, plain, wait=True).returncode == 0
    libraries = [codegen.load_library(plain, "every_op", len(outputs))]       # the optimized build: -O1
    assert libraries[0].runs() == "optimized"
    plain.unlink()
    codegen.optimized_path(plain).rename(tmp_path / "optimized.so")
    assert codegen.start_background_build(codegen.c_compiler(), units, plain, optimize=False, wait=True).returncode == 0
    libraries.append(codegen.load_library(plain, "every_op", len(outputs)))    # the plain build: -O0
    assert libraries[1].runs() == "plain"
    for n in (0, 1, interpreter.LANES - 1, interpreter.LANES + 1, 403):
        Y = fn(X[:n], P)
        assert Y.shape == (n, len(outputs))
        for lib in libraries:
            assert np.array_equal(Y, lib(X[:n], P), equal_nan=True), n
    assert np.isnan(Y).any() and np.isfinite(Y).sum() > Y.size // 2
    # another value of the shared input: the interpreter's shared statements run again
    assert np.array_equal(fn(X, -P), libraries[1](X, -P), equal_nan=True)
    # a later process finds the tape on disk (no library built: background builds are off)
    again = codegen.load_function("every_op", "k_tape", 2, 1, len(outputs), "c")
    assert again._impl.runs() == "interpreter" and np.array_equal(again(X, P), fn(X, P), equal_nan=True)


def test_one_background_build_per_library(tmp_path, monkeypatch):
    """While a library's build runs (its marker file names a live process), another compilation of the same
    statements starts none; the marker goes when the build is done."""
    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "1")
    g = Graph()
    x, p = g.var("x"), g.var("p")
    outputs = [np.cos(x) * p + x ** 3.0]
    codegen.wait_for_optimized_builds(60)
    fn = compile_function(outputs, [x], [p], name="once", backend="c", key="k_once")
    path = codegen.cache_dir() / "once-k_once.so"
    started = list(codegen._STARTED)
    assert len(started) == 1 and codegen._build_running(path)
    compile_function(outputs, [x], [p], name="once", backend="c", key="k_once")
    assert codegen._STARTED == started                      # no second build
    codegen.wait_for_optimized_builds(120)
    assert not codegen._build_running(path) and codegen.optimized_path(path).exists()
    assert not list(tmp_path.rglob("*.building")) and not list(tmp_path.rglob("moco_lab_opt_*"))
    X = np.linspace(-1, 1, 5)[:, None]
    first = fn(X, np.array([0.4]))
    time.sleep(1.05)
    assert np.array_equal(fn(X, np.array([0.4])), first) and fn._impl.optimized()


def test_evaluations_split_over_threads_are_the_same_bits(tmp_path, monkeypatch):
    """moco_lab.symbolic.threads: a function's nodes split into blocks over threads give the numbers of one
    evaluation in one piece, bit for bit, at every number of nodes; the blocks are as equal as the nodes allow (at
    most one node apart, whatever the interpreter's batches) and run on several threads; small work is not split;
    a function loaded from the disk cache knows its size (so that warm solves split too); MOCO_LAB_THREADS is read
    and checked."""
    import threading

    from moco_lab.symbolic import interpreter, threads

    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "0")
    outputs, xs, ps = _every_operation()
    fn = compile_function(outputs, xs, ps, name="every_op", backend="c", key="k_threads")
    X, P = _inputs()
    X = np.concatenate([X, X[:3] * 1.7])   # 403 nodes
    calls = []
    impl = fn._impl

    def spy(Xs, Ps):
        calls.append((Xs.shape[0], threading.current_thread().name))
        time.sleep(0.02)   # long enough that the blocks overlap
        return impl(Xs, Ps)

    fn._impl = spy
    try:
        threads.set_threads(1)
        whole = {n: fn(X[:n], P) for n in (0, 1, interpreter.LANES + 1, 403)}
        assert [c[0] for c in calls] == [0, 1, interpreter.LANES + 1, 403]
        monkeypatch.setattr(threads, "MIN_WORK", 0)
        threads.set_threads(3)
        for n, Y in whole.items():
            calls.clear()
            assert np.array_equal(fn(X[:n], P), Y, equal_nan=True), n
            sizes = [c[0] for c in calls]
            assert sum(sizes) == n
            if n == 403:   # over 3 threads: 135, 134 and 134 nodes
                assert sorted(sizes) == [134, 134, 135]
                assert len({c[1] for c in calls}) == 3
            elif n == interpreter.LANES + 1:   # 33 nodes: 11 each, not a full batch of 32 and a single node
                assert sizes == [11, 11, 11]
            elif n == 1:
                assert sizes == [1]
        monkeypatch.setattr(threads, "MIN_WORK", 10 ** 12)   # not worth splitting: one piece
        calls.clear()
        assert np.array_equal(fn(X, P), whole[403], equal_nan=True) and [c[0] for c in calls] == [403]
    finally:
        fn._impl = impl
        threads.set_threads(None)
    loaded = codegen.load_function("every_op", "k_threads", 2, 1, len(outputs), "c")
    # the tape's instructions: the statements and a copy of each output
    assert loaded.num_operations == fn.num_operations + len(outputs) and fn.num_operations > 1000
    monkeypatch.setenv("MOCO_LAB_THREADS", "2")
    assert threads.threads() == 2
    threads.set_threads(None)
    monkeypatch.setenv("MOCO_LAB_THREADS", "many")
    with pytest.raises(ValueError, match="MOCO_LAB_THREADS must be a whole number ≥ 1, got 'many'"):
        threads.threads()
    monkeypatch.delenv("MOCO_LAB_THREADS")
    with pytest.raises(ValueError, match="threads must be a whole number ≥ 1, got 0"):
        threads.set_threads(0)
    assert threads.threads() >= 1


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_a_forked_process_evaluates_split_calls_too(tmp_path, monkeypatch):
    """A process forked after the thread pool exists (multiprocessing's default start on Linux) does not have the
    pool's threads: its split evaluations get a pool of their own instead of waiting forever."""
    import multiprocessing

    from moco_lab.symbolic import threads

    monkeypatch.setenv("MOCO_LAB_CACHE", str(tmp_path))
    monkeypatch.setenv("MOCO_LAB_OPTIMIZE_KERNELS", "0")
    outputs, xs, ps = _every_operation()
    fn = compile_function(outputs, xs, ps, name="every_op", backend="c", key="k_fork")
    X, P = _inputs()
    monkeypatch.setattr(threads, "MIN_WORK", 0)
    threads.set_threads(2)
    try:
        here = fn(X, P)   # the pool now exists in this process
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        child = ctx.Process(target=lambda: queue.put(fn(X, P)))   # forked: nothing is pickled but the result
        child.start()
        there = queue.get(timeout=60)
        child.join(10)
    finally:
        threads.set_threads(None)
    assert np.array_equal(here, there, equal_nan=True)
