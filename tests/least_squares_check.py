"""Derivative checks shared by the tests of the whole-trial least-squares fits (``moco_lab.tools.gauss_newton``'s
problems: ``evaluate(x) -> (r, J, φ, G, extra)``)."""
from __future__ import annotations

import numpy as np


def jacobian_errors(problem, x: np.ndarray, rng: np.random.Generator, directions: int = 3,
                    h: float = 1e-6) -> tuple[float, float]:
    """The largest relative errors of ``J v`` and ``G v`` against central differences of ``r`` and ``φ`` along
    ``directions`` random directions ``v`` at ``x`` (step ``h``: truncation O(h²), round-off O(ε/h))."""
    _, J, _, G, _ = problem.evaluate(x)
    worst_r = worst_phi = 0.0
    for _ in range(directions):
        v = rng.standard_normal(x.size)
        rp, _, pp, _, _ = problem.evaluate(x + h * v)
        rm, _, pm, _, _ = problem.evaluate(x - h * v)
        fd_r, fd_phi = (rp - rm) / (2 * h), (pp - pm) / (2 * h)
        worst_r = max(worst_r, float(np.linalg.norm(J @ v - fd_r) / np.linalg.norm(fd_r)))
        if fd_phi.size:
            worst_phi = max(worst_phi, float(np.linalg.norm(G @ v - fd_phi) / max(np.linalg.norm(fd_phi), 1e-12)))
    return worst_r, worst_phi
