"""Closed-form answers of the verification problems, derived independently of moco_lab.

Linear problem (the Moco paper, Eq. 2; Kirk 2004, Example 5.1-1): the state
``z = (q, u)`` obeys ``z' = F z + B x`` with ``F = [[0, 1], [0, -c]]`` (``c = 1``
for the paper's ``udot = -u + x``; ``c = -1`` for Moco's test variant) and
``B = (0, 1)``. Minimizing ``1/2 ∫ x² dt`` between fixed end states is the
minimum-energy control problem, whose solution is

    x(t) = Bᵀ exp(Fᵀ (T - t)) W⁻¹ (z_T - exp(F T) z_0),
    W = ∫_0^T exp(F s) B Bᵀ exp(Fᵀ s) ds                (controllability Gramian).

``W`` and the states come from Van Loan's block matrix exponentials (exact up to
rounding), so nothing here depends on the library under test.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import expm

T = 2.0
Z0 = np.array([0.0, 0.0])
ZT = np.array([5.0, 2.0])


def _system(c: float):
    F = np.array([[0.0, 1.0], [0.0, -c]])
    B = np.array([[0.0], [1.0]])
    return F, B


def _gramian(F, B, t):
    """∫_0^t exp(F s) B Bᵀ exp(Fᵀ s) ds via Van Loan's method."""
    n = F.shape[0]
    Mv = np.zeros((2 * n, 2 * n))
    Mv[:n, :n] = -F
    Mv[:n, n:] = B @ B.T
    Mv[n:, n:] = F.T
    E = expm(Mv * t)
    Phi = E[n:, n:].T  # exp(F t)
    return Phi @ E[:n, n:]


def linear_solution(t, variant: str = "kirk"):
    """Optimal states ``(q, u)`` and control ``x`` at times ``t`` (arrays)."""
    c = {"kirk": 1.0, "moco_test": -1.0}[variant]
    F, B = _system(c)
    W = _gramian(F, B, T)
    lam = np.linalg.solve(W, ZT - expm(F * T) @ Z0)
    t = np.atleast_1d(np.asarray(t, float))
    x = np.array([(B.T @ expm(F.T * (T - ti)) @ lam)[0] for ti in t])
    # z(t) = exp(F t) z0 + ∫_0^t exp(F (t - s)) B Bᵀ exp(Fᵀ (T - s)) ds λ
    #      = exp(F t) z0 + W(t) exp(Fᵀ (T - t)) λ
    z = np.array([expm(F * ti) @ Z0 + _gramian(F, B, ti) @ expm(F.T * (T - ti)) @ lam for ti in t])
    return z[:, 0], z[:, 1], x


def linear_objective(variant: str = "kirk") -> float:
    """J* = 1/2 ∫ x² dt = 1/2 λᵀ W λ."""
    c = {"kirk": 1.0, "moco_test": -1.0}[variant]
    F, B = _system(c)
    W = _gramian(F, B, T)
    lam = np.linalg.solve(W, ZT - expm(F * T) @ Z0)
    return 0.5 * float(lam @ W @ lam)


def sliding_mass_min_time(mass: float = 2.0, distance: float = 1.0, force: float = 50.0) -> float:
    """Bang-bang minimum time from rest to rest: accelerate half way, brake half way."""
    return 2.0 * np.sqrt(mass * distance / force)
