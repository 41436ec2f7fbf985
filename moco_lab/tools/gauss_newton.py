"""Sparse constrained least squares by damped Gauss–Newton (Levenberg–Marquardt): the solver of the motion-capture
fits that adjust every frame of a trial at once (:func:`~moco_lab.tools.root_residual.reduce_root_residual`,
:func:`~moco_lab.tools.marker_registration.register_markers`).

The problem ``min ½|r(x)|²`` subject to ``φ(x) = 0`` and ``lower ≤ x ≤ upper`` is given as an object with ``x0``,
``lower``, ``upper`` (arrays of length n) and ``evaluate(x) -> (r, J, φ, G, extra)``: the residuals, their sparse
Jacobian, the constraints and theirs (SciPy sparse matrices with n columns), and anything the caller wants back at
the answer. Each step solves the sparse KKT system ``[[JᵀJ + μ D, Gᵀ], [G, 0]] [Δx, ν] = [−Jᵀr, −φ]`` (``D`` the
diagonal of ``JᵀJ``: Marquardt's scaling) over the variables not held at a bound (held: at the bound with the
gradient pushing out), by SuperLU; the step is projected onto the bounds and kept if it lowers ``½|r|² + ρ|φ|₁``,
else ``μ`` grows tenfold. Converged: the constraints met to 1e-10 and a kept step that changes the merit by less than
1e-10 relative (or moves nothing), or a rejected step whose predicted decrease is at round-off.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..solve.optimizer import Progress
from ..util.checks import whole_number

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["LeastSquaresResult", "constrained_least_squares", "frame_rows"]


def frame_rows(blocks: np.ndarray, frames: np.ndarray, nq: int, n_x: int) -> "sparse.csr_matrix":
    """Rows of a whole-trial Jacobian from per-frame blocks: ``blocks`` (N, k, nq) are the derivatives of N groups
    of k rows, each with respect to the nq coordinates of its frame ``frames[i]`` (columns ``frames[i]·nq …``);
    returns the sparse (N·k, n_x) matrix of their non-zeros (CSR)."""
    from scipy import sparse

    N, k, _ = blocks.shape
    rows = np.repeat(np.arange(N * k), nq).reshape(N, k, nq)
    cols = np.broadcast_to((np.asarray(frames) * nq)[:, None, None] + np.arange(nq), (N, k, nq))
    keep = blocks != 0.0
    return sparse.csr_matrix((blocks[keep], (rows[keep], cols[keep])), shape=(N * k, n_x))


@dataclass
class LeastSquaresResult:
    """The answer ``x``, ``extra`` from its evaluation, ``success``, ``iterations``, ``objective`` (½|r|²) and the
    largest constraint violation."""

    x: np.ndarray
    extra: Any
    success: bool
    iterations: int
    objective: float
    constraint_violation: float


def constrained_least_squares(problem: Any, *, max_iterations: int = 50,
                              progress: Callable[[Progress], None] | None = None,
                              who: str = "constrained_least_squares") -> LeastSquaresResult:
    """Solve ``problem`` (module docstring); ``progress`` gets a :class:`~moco_lab.solve.optimizer.Progress` at the
    start (iteration 0, as IPOPT's first line) and after every iteration."""
    from scipy import sparse
    from scipy.sparse.linalg import splu

    if progress is not None and not callable(progress):
        raise TypeError(f"{who}: progress must be a function of a Progress, got {type(progress).__name__}")
    iterations = whole_number(max_iterations, f"{who}: max_iterations", 1)
    lower, upper = problem.lower, problem.upper
    n = lower.size
    x = np.clip(problem.x0, lower, upper)
    r, J, phi, G, extra = problem.evaluate(x)
    mu, success, it, start = 1e-8, False, 0, time.perf_counter()
    if progress is not None:
        progress(Progress(0, float(0.5 * r @ r), float(np.max(np.abs(phi), initial=0.0)), 0.0))
    for it in range(1, iterations + 1):
        g = J.T @ r
        H = (J.T @ J).tocsc()
        held = ((x <= lower) & (g > 0)) | ((x >= upper) & (g < 0))
        free = np.flatnonzero(~held)
        diag = H.diagonal()
        Hf = H[free][:, free] + sparse.diags(mu * np.maximum(diag[free], 1e-12 * diag.max()))
        Gf = G[:, free]
        kkt = sparse.bmat([[Hf, Gf.T], [Gf, None]], format="csc") if Gf.shape[0] else Hf.tocsc()
        try:
            sol = splu(kkt, permc_spec="COLAMD").solve(np.r_[-g[free], -phi])
        except RuntimeError:  # singular: more damping
            mu *= 10.0
            continue
        step = np.zeros(n)
        step[free] = sol[:free.size]
        rho = 10.0 * (1.0 + float(np.max(np.abs(sol[free.size:]), initial=0.0)))
        merit = 0.5 * r @ r + rho * np.abs(phi).sum()
        trial = np.clip(x + step, lower, upper)
        r1, J1, phi1, G1, extra1 = problem.evaluate(trial)
        merit1 = 0.5 * r1 @ r1 + rho * np.abs(phi1).sum()
        if merit1 <= merit:
            moved = float(np.max(np.abs(trial - x)))
            x, r, J, phi, G, extra = trial, r1, J1, phi1, G1, extra1
            mu = max(mu / 10.0, 1e-12)
            done = merit - merit1 <= 1e-10 * merit or moved <= 1e-10
        else:
            mu *= 10.0
            done = -(g @ step + 0.5 * step @ (H @ step)) <= 1e-13 * merit  # the decrease the model promises
        violation = float(np.max(np.abs(phi), initial=0.0))
        if progress is not None:
            progress(Progress(it, float(0.5 * r @ r), violation, time.perf_counter() - start))
        if done and violation <= 1e-10:
            success = True
            break
        if mu > 1e12:
            break
    return LeastSquaresResult(x, extra, success, it, float(0.5 * r @ r), float(np.max(np.abs(phi), initial=0.0)))
