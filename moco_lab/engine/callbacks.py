"""Exact-Jacobian numpy functions as Drake ``MathematicalProgram`` constraint and cost callables."""
from __future__ import annotations

import numpy as np
from pydrake.autodiffutils import ExtractGradient, ExtractValue, InitializeAutoDiff

__all__ = ["drake_callable"]


def _chain(J: np.ndarray, dz: np.ndarray) -> np.ndarray:
    """``J @ dz``; Drake's solvers seed ``dz`` with the identity, so skip the product then."""
    m = J.shape[1]
    if dz.shape == (m, m) and np.count_nonzero(dz) == m and np.all(np.diagonal(dz) == 1.0):
        return J
    return J @ dz


def drake_callable(fun, scalar: bool):
    """Wrap ``fun(z, jac) -> (value, Jacobian)`` as a Drake constraint (or, if ``scalar``, cost) callable.

    Drake calls it with floats (value only) or with ``AutoDiffXd`` (value and
    derivatives); the exact Jacobian from ``fun`` becomes the derivatives.
    """

    def wrapped(z):
        if z.dtype == object:
            zv = ExtractValue(z).reshape(-1)
            dz = ExtractGradient(z)
            val, J = fun(zv, True)
            out = InitializeAutoDiff(np.atleast_1d(val), _chain(np.atleast_2d(J), dz))
            return out[0, 0] if scalar else out.reshape(-1)
        return fun(np.asarray(z, float), False)[0]

    return wrapped
