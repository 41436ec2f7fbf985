"""The whole-trial fits' solver, ``moco_lab.tools.gauss_newton.constrained_least_squares``, on small linear problems
with answers from elsewhere: the equality-constrained least-squares KKT system solved densely, and SciPy's
``lsq_linear`` for bounds."""
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import lsq_linear

from moco_lab.tools.gauss_newton import constrained_least_squares


def _linear(A, b, C=None, d=None, lower=None, upper=None, x0=None):
    n = A.shape[1]
    C = np.zeros((0, n)) if C is None else C
    d = np.zeros(0) if d is None else d

    def evaluate(x):
        return A @ x - b, sparse.csr_matrix(A), C @ x - d, sparse.csr_matrix(C), "extra"

    return SimpleNamespace(x0=np.zeros(n) if x0 is None else x0, evaluate=evaluate,
                           lower=np.full(n, -np.inf) if lower is None else lower,
                           upper=np.full(n, np.inf) if upper is None else upper)


def test_equality_constrained_least_squares_and_its_progress():
    """min ½|Ax − b|² subject to Cx = d: the KKT system's answer to 1e-10 (measured 2e-16 after 2 iterations: the
    damped first step lands next to it, the second on it; 1e-10 leaves room for another BLAS's rounding). Progress
    starts at iteration 0 with ½|A x0 − b|² and the start's constraint violation, then one report per iteration, the
    last one the result's objective."""
    rng = np.random.default_rng(3)
    A, b = rng.normal(size=(12, 5)), rng.normal(size=12)
    C, d = rng.normal(size=(2, 5)), rng.normal(size=2)
    kkt = np.block([[A.T @ A, C.T], [C, np.zeros((2, 2))]])
    exact = np.linalg.solve(kkt, np.r_[A.T @ b, d])[:5]
    x0 = rng.normal(size=5)
    seen = []
    answer = constrained_least_squares(_linear(A, b, C, d, x0=x0), progress=seen.append)
    assert answer.success and answer.extra == "extra"
    assert np.abs(answer.x - exact).max() < 1e-10 and answer.constraint_violation < 1e-10
    assert [p.iteration for p in seen] == list(range(answer.iterations + 1))
    r0 = A @ x0 - b
    assert seen[0].objective == pytest.approx(0.5 * r0 @ r0, rel=1e-15)
    assert seen[0].constraint_violation == pytest.approx(np.abs(C @ x0 - d).max(), rel=1e-15)
    assert seen[-1].objective == answer.objective and seen[-1].constraint_violation < 1e-10


def test_bounds_against_scipy():
    """Bounds that hold three of six variables at their limits: SciPy's ``lsq_linear`` (its tolerance 1e-12) finds
    the same answer to 1e-10 (measured 3e-16; a wrong set of held variables would be off by about 0.1)."""
    rng = np.random.default_rng(4)
    A, b = rng.normal(size=(15, 6)), 3.0 * rng.normal(size=15)
    lower, upper = np.full(6, -0.5), np.full(6, 0.5)
    reference = lsq_linear(A, b, bounds=(lower, upper), tol=1e-12)
    answer = constrained_least_squares(_linear(A, b, lower=lower, upper=upper))
    assert answer.success
    held = (np.isclose(reference.x, lower) | np.isclose(reference.x, upper)).sum()
    assert held >= 1   # the bounds matter
    assert np.abs(answer.x - reference.x).max() < 1e-10
    assert answer.objective == pytest.approx(reference.cost, rel=1e-9)
