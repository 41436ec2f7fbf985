"""Exact-Jacobian numpy functions as Drake ``MathematicalProgram`` constraint and cost callables.

Drake's solvers evaluate a Python constraint with ``AutoDiffXd`` inputs whose
derivatives are the identity (each input variable seeds its own direction) and
read the output's derivatives as the Jacobian. Converting those arrays is the
main per-call cost of a Python binding (it grows with the square of the number
of variables), so the wrapper reads the values directly, checks the identity
seeding on three sampled inputs (first, middle, last) and then returns the
exact Jacobian as the derivatives; any other seeding (for example a user's own
``EvalBinding`` with ``AutoDiffXd``) gets the full chain rule ``J · dz``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from pydrake.autodiffutils import ExtractGradient, InitializeAutoDiff

__all__ = ["drake_callable", "ExactCallbacks", "variable_indices"]


def _identity_seeded(z: np.ndarray) -> bool:
    """True if ``z`` (AutoDiffXd, shape (n,)) has derivatives equal to the identity on sampled entries."""
    n = z.shape[0]
    for k in sorted({0, n // 2, n - 1}):
        d = z[k].derivatives()
        if d.shape != (n,) or d[k] != 1.0 or np.count_nonzero(d) != 1:
            return False
    return True


def drake_callable(fun: Callable, scalar: bool) -> Callable:
    """Wrap ``fun(z, jac) -> (value, Jacobian)`` as a Drake constraint (or, if ``scalar``, cost) callable.

    Drake calls it with floats (value only) or with ``AutoDiffXd`` (value and
    derivatives); the exact Jacobian from ``fun`` becomes the derivatives.
    """

    def wrapped(z):
        if z.dtype == object:
            z = z.reshape(-1)
            zv = np.fromiter((e.value() for e in z), float, z.shape[0])
            val, J = fun(zv, True)
            J = np.atleast_2d(J)
            if not _identity_seeded(z):
                J = J @ ExtractGradient(z)
            out = InitializeAutoDiff(np.atleast_1d(val), J)
            return out[0, 0] if scalar else out.reshape(-1)
        return fun(np.asarray(z, float), False)[0]

    return wrapped


class ExactCallbacks(dict):
    """``id(evaluator) -> (fun, evaluator, hessian)`` for a transcription's Python bindings (see
    ``Transcription.exact_callbacks``), plus ``grouped``: objects whose Hessian replaces the sum of several
    bindings' Hessians in one evaluation. Each has ``evaluators`` (the replaced evaluators' ``id``), ``rows`` and
    ``cols`` (program variable indices, ``rows >= cols``, within the replaced bindings' declared entries) and
    ``values(x, sigma, multipliers)`` (their entries at the program's variables ``x``, the cost factor ``sigma``
    and ``multipliers``: ``id(evaluator) -> λ`` of each replaced constraint binding's rows); and
    ``grouped_jacobians``: objects whose ``values(x)`` are several constraint bindings' declared Jacobian entries
    and ``constraints(x)`` their rows (``num_rows``) at once, with ``evaluators`` (the bindings' evaluators' ``id``,
    in order) and ``entries`` (each binding's ``(rows, cols)``, in its own variables, in the order ``values``
    returns them); and ``indices``: ``id(evaluator)
    -> the binding's variables' indices`` where the transcription knows them (so that the optimizer need not look
    hundreds of thousands of variables up), kept with the evaluator as ``(evaluator, indices)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.grouped: list = []
        self.grouped_jacobians: list = []
        self.indices: dict[int, tuple[Any, np.ndarray]] = {}


def variable_indices(prog: Any, groups: list) -> list[np.ndarray]:
    """``prog.FindDecisionVariableIndices`` of each array of variables in ``groups``, found in one call (each call
    costs ~0.1 ms beyond its variables: hundreds of bindings or grid points add up)."""
    sizes = [np.size(v) for v in groups]
    flat = [np.asarray(v, dtype=object).reshape(-1) for v in groups if np.size(v)]
    if not flat:
        return [np.zeros(0, int) for _ in groups]
    found = np.asarray(prog.FindDecisionVariableIndices(np.concatenate(flat)), dtype=int)
    return np.split(found, np.cumsum(sizes)[:-1])

