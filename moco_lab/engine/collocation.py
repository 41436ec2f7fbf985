"""Collocation on a normalized time grid: grids, quadrature weights and the defects of each scheme.

Schemes (the Moco paper, appendix): **trapezoidal** (Eq. 7) and **separated
Hermite–Simpson** (Eq. 12) with interval midpoints as grid points.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SCHEMES", "DYNAMICS_MODES", "Grid", "quadrature_weights", "collocation_defects", "mesh_intervals_for"]

SCHEMES = ("trapezoidal", "hermite-simpson")
DYNAMICS_MODES = ("explicit", "implicit")


def quadrature_weights(scheme: str, dtau: np.ndarray) -> np.ndarray:
    """Weights of the grid points spanned by mesh intervals of lengths ``dtau`` (normalized time).

    Trapezoidal rule (``len(dtau) + 1`` points) or Simpson's rule over mesh
    points and midpoints (``2 len(dtau) + 1`` points): ``∫ f dτ ≈ w · f``.
    """
    if scheme == "trapezoidal":
        w = np.zeros(dtau.size + 1)
        w[:-1] += dtau / 2
        w[1:] += dtau / 2
    else:
        w = np.zeros(2 * dtau.size + 1)
        w[0:-1:2] += dtau / 6
        w[2::2] += dtau / 6
        w[1::2] += 4 * dtau / 6
    return w


def collocation_defects(scheme: str, Y: np.ndarray, F: np.ndarray, h: np.ndarray, Yend: np.ndarray | None = None,
                        dF: np.ndarray | None = None, E: np.ndarray | None = None,
                        Eend: np.ndarray | None = None) -> np.ndarray:
    """Defects of consecutive mesh intervals (Eq. 7 trapezoidal; Eq. 10–12 Hermite–Simpson).

    Parameters
    ----------
    Y, F : (nloc, ny)
        Collocated variables and their derivatives at the intervals' nodes (Hermite–Simpson:
        mesh points and midpoints interleaved).
    h : (L,)
        Interval durations.
    Yend : (nloc, ny), optional
        What each interval integrates *to* at its end node (default ``Y``; Bordalba's projected states).
    dF : (nloc, ny, nb), optional
        Derivatives of ``F`` w.r.t. each node's variable block; with ``E`` (ny, nb), the derivative
        of ``Y`` w.r.t. the block, and ``Eend`` (default ``E``) that of ``Yend``.

    Returns
    -------
    out : (L * per * ny,)
        Defects, interval by interval (``per`` = 1 trapezoidal, 2 Hermite–Simpson: Hermite, then Simpson).
    Jnodes : (L * per * ny, nloc * nb) or None
        Their Jacobian w.r.t. the node blocks (when ``dF`` is given).
    """
    L = h.size
    Yend = Y if Yend is None else Yend
    h = h[:, None]
    if scheme == "trapezoidal":
        a, b = np.arange(L), np.arange(L) + 1
        out = (Yend[b] - Y[a] - h / 2 * (F[a] + F[b])).reshape(-1)
    else:
        a, m, b = 2 * np.arange(L), 2 * np.arange(L) + 1, 2 * np.arange(L) + 2
        herm = Y[m] - 0.5 * (Y[a] + Yend[b]) - h / 8 * (F[a] - F[b])
        simp = Yend[b] - Y[a] - h / 6 * (F[a] + 4 * F[m] + F[b])
        out = np.stack([herm, simp], axis=1).reshape(-1)
    if dF is None:
        return out, None
    nloc, ny, nb = dF.shape
    Eend = E if Eend is None else Eend
    Jnodes = np.zeros((out.size, nloc * nb))
    per = 1 if scheme == "trapezoidal" else 2
    Jn = Jnodes.reshape(L, per, ny, nloc, nb)  # view
    h3 = h[:, :, None]
    l = np.arange(L)
    if scheme == "trapezoidal":
        Jn[l, 0, :, a, :] = -E - h3 / 2 * dF[a]
        Jn[l, 0, :, b, :] = Eend - h3 / 2 * dF[b]
    else:
        Jn[l, 0, :, m, :] = E
        Jn[l, 0, :, a, :] = -0.5 * E - h3 / 8 * dF[a]
        Jn[l, 0, :, b, :] = -0.5 * Eend + h3 / 8 * dF[b]
        Jn[l, 1, :, a, :] = -E - h3 / 6 * dF[a]
        Jn[l, 1, :, m, :] = -4 * h3 / 6 * dF[m]
        Jn[l, 1, :, b, :] = Eend - h3 / 6 * dF[b]
    return out, Jnodes


@dataclass
class Grid:
    """Normalized time grid of a transcription."""

    scheme: str
    num_mesh_intervals: int

    def __post_init__(self):
        N = self.num_mesh_intervals
        self.mesh = np.linspace(0.0, 1.0, N + 1)
        if self.scheme == "trapezoidal":
            self.tau = self.mesh.copy()
            self.is_mesh = np.ones(N + 1, bool)
        else:
            self.tau = np.linspace(0.0, 1.0, 2 * N + 1)
            self.tau[::2] = self.mesh
            self.is_mesh = np.zeros(2 * N + 1, bool)
            self.is_mesh[::2] = True
        self.quadrature = quadrature_weights(self.scheme, np.diff(self.mesh))
        self.stride = 1 if self.scheme == "trapezoidal" else 2

    @property
    def num_points(self) -> int:
        """Number of grid points (``N + 1`` trapezoidal, ``2N + 1`` Hermite–Simpson)."""
        return self.tau.size


def mesh_intervals_for(duration: float, mesh_interval: float) -> int:
    """The number of uniform mesh intervals for a largest ``mesh_interval`` over ``duration`` (both in s).

    Moco's rule (``MocoTool::updateTimeInfo``, shared by ``MocoTrack`` and ``MocoInverse``): a plain
    ``ceil(duration / mesh_interval)``, never a larger interval than asked for, at least one.
    """
    return max(1, int(math.ceil(duration / mesh_interval)))
