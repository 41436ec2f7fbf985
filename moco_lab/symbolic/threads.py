"""Evaluating a compiled function's nodes on several cores: the nodes split into contiguous blocks, one per thread.

Every node of a :class:`~moco_lab.symbolic.codegen.CompiledFunction` is computed by the same statements from its own
row of inputs, so the rows of the result do not depend on which thread computed them or on how the nodes were
split: a split evaluation is the same to the last bit as an evaluation in one piece (``tests/test_codegen.py``
checks it). The C backends (the interpreter and the compiled libraries) run outside Python's global interpreter
lock (``ctypes`` releases it), so the blocks run in parallel; the blocks are as equal as the nodes allow (the
interpreter's time grows with the nodes it runs, whether they fill its batches of
:data:`~moco_lab.symbolic.interpreter.LANES` or not).

Measured (``benchmarks/node_threads.md``, 2 cores): in the squat's exact-Hessian solve the Hessian (380,000 statements
at each of 101 nodes) took 1.07 instead of 1.77 s, the constraints and their Jacobian 0.65 instead of 0.94 s.

Threads: ``$MOCO_LAB_THREADS`` if set (1 turns splitting off), else the cores this process may run on (at most
:data:`MAX_THREADS`). :func:`set_threads` changes it for the process (a sweep's worker processes, one per core, use
one thread each). A process forked from one that has used the threads makes its own (the parent's threads do not
exist in it).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

__all__ = ["MAX_THREADS", "MIN_WORK", "threads", "set_threads", "equal_blocks", "run_blocks", "evaluate_split"]

#: Most threads used by default (more cores than this are left to other work).
MAX_THREADS = 8
#: Statements × nodes below which a call is not split (a thread's hand-over costs tens of microseconds, as much as
#: about 10⁵ statements).
MIN_WORK = 200_000

_STATE: dict = {"threads": None, "pool": None, "size": 0}
_LOCK = threading.Lock()


def _forget_pool() -> None:
    """In a forked child: the parent's pool threads do not exist there, so a new pool is made when needed."""
    global _LOCK
    _STATE["pool"], _STATE["size"] = None, 0
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _default() -> int:
    value = os.environ.get("MOCO_LAB_THREADS", "").strip()
    if value:
        try:
            k = int(value)
        except ValueError:
            k = 0
        if k < 1:
            raise ValueError(f"MOCO_LAB_THREADS must be a whole number ≥ 1, got {value!r}")
        return k
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def threads() -> int:
    """Threads a compiled function's evaluation is split over (module docstring)."""
    if _STATE["threads"] is None:
        _STATE["threads"] = _default()
    return _STATE["threads"]


def set_threads(k: int | None) -> None:
    """Split evaluations over ``k`` threads from now on (``None``: back to the default of the module docstring)."""
    if k is not None and (int(k) != k or k < 1):
        raise ValueError(f"threads must be a whole number ≥ 1, got {k!r}")
    _STATE["threads"] = None if k is None else int(k)


def _pool(k: int) -> ThreadPoolExecutor:
    with _LOCK:
        if _STATE["pool"] is None or _STATE["size"] < k:
            if _STATE["pool"] is not None:
                _STATE["pool"].shutdown(wait=False)
            _STATE["pool"] = ThreadPoolExecutor(max_workers=k, thread_name_prefix="moco_lab_nodes")
            _STATE["size"] = k
        return _STATE["pool"]


def equal_blocks(n: int, k: int) -> list[int]:
    """``n`` nodes in ``k`` contiguous blocks of nearly equal size (at most one node apart, the larger ones first)."""
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def run_blocks(impl: Callable[[np.ndarray, np.ndarray], np.ndarray], X: np.ndarray, P: np.ndarray, ny: int,
               sizes: list[int]) -> np.ndarray:
    """``impl(X, P)`` computed block by block, the rows of ``X`` cut into contiguous blocks of ``sizes`` nodes: the
    first in this thread, the others on the pool's threads at the same time."""
    edges = np.cumsum([0] + list(sizes)).tolist()
    bounds = list(zip(edges[:-1], edges[1:]))
    pool = _pool(max(1, len(bounds) - 1))
    futures = [pool.submit(impl, X[a:b], P) for a, b in bounds[1:]]
    Y = np.empty((X.shape[0], ny))
    a, b = bounds[0]
    Y[a:b] = impl(X[a:b], P)
    for (a, b), f in zip(bounds[1:], futures):
        Y[a:b] = f.result()
    return Y


def evaluate_split(impl: Callable[[np.ndarray, np.ndarray], np.ndarray], X: np.ndarray, P: np.ndarray, ny: int,
                   statements: int) -> np.ndarray:
    """``impl(X, P)`` (rows of ``X`` are nodes; ``ny`` outputs per node), split over :func:`threads` threads into
    :func:`equal_blocks` when the work (``statements`` per node × nodes) is worth it.

    Equal blocks, not whole batches of the interpreter's lanes: its time is about proportional to the nodes it runs,
    batches full or not (the squat's exact Hessian at 201 nodes on 2 cores: 10.6 ms split 101 + 100 against 12.1 ms
    split 128 + 73, four full batches on one thread; ``benchmarks/node_threads.md``)."""
    n = X.shape[0]
    k = min(threads(), n)
    if k < 2 or statements * n < MIN_WORK:
        return impl(X, P)
    return run_blocks(impl, X, P, ny, equal_blocks(n, k))
