"""Collocation on a normalized time grid: each scheme's nodes, quadrature weights and defects.

Schemes (the Moco paper, appendix, and Moco 4.6's pseudospectral transcriptions):

* **trapezoidal** (Eq. 7): one defect row per state and interval, grid = mesh points.
* **separated Hermite–Simpson** (Eq. 12): interval midpoints are grid points; a Hermite and a Simpson row.
* **legendre-gauss-k** (k = 1…9; Moco's ``CasOC::LegendreGauss``, the Gauss pseudospectral method of Benson
  2005 and Huntington 2007): the k roots of the Legendre polynomial inside each interval are grid points; the
  state is the degree-k polynomial through the interval's start and those points, whose derivative equals the
  dynamics at the k roots (k rows) and whose value at the interval's end is the next mesh point's state (one
  more row). The integral uses the Gauss weights (exact for polynomials of degree 2k − 1).
* **legendre-gauss-radau-k** (k = 1…9; ``CasOC::LegendreGaussRadau``): the k Radau roots of (0, 1], the last
  one the interval's end; k rows, the Radau weights (exact to degree 2k − 2). k = 1 is backward Euler.

Every scheme is one :class:`Scheme`: its nodes on the unit interval and two small matrices, so that an
interval's defects are ``D_y · Y + h D_f · F`` over its nodes (rows: defect rows per state; ``Y``, ``F``: the
states and their derivatives at the interval's nodes; ``h``: its duration). The transcription, its Jacobians and
its exact Hessians read only these matrices.

Moco's differences kept here: controls at the points inside an interval are the linear interpolation of the
interval's end values (Moco's ``interpolate_control_mesh_interior_points``, as Bordalba et al. 2023), path
constraints hold at mesh points. One difference **not** kept: Moco 4.6 takes its quadrature weights from
``casadi::collocation_coeff``, which integrates the interpolating polynomial through the interval's start and its
roots and drops the start's weight; that weight is 0 for every scheme but ``legendre-gauss-radau-1``, where it is
one half, so Moco's integrals on that scheme are half the integral (the rectangle rule would weigh the end point
by the whole interval). moco_lab weighs it by the whole interval; the optimal trajectories of a problem whose
objective is one integral are the same, the objectives differ by a factor 2 (``tests/test_pseudospectral.py``).
"""
from __future__ import annotations

import difflib
import functools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SCHEMES", "CLASSICAL_SCHEMES", "PSEUDOSPECTRAL_SCHEMES", "DYNAMICS_MODES", "Scheme", "scheme_for", "check_scheme",
           "Grid", "quadrature_weights", "collocation_defects", "mesh_intervals_for", "lagrange_basis"]

#: The schemes of the Moco paper.
CLASSICAL_SCHEMES = ("trapezoidal", "hermite-simpson")
#: Moco 4.6's pseudospectral schemes: ``legendre-gauss-k`` and ``legendre-gauss-radau-k``, k = 1…9.
PSEUDOSPECTRAL_SCHEMES = tuple(f"legendre-gauss-{k}" for k in range(1, 10)) + tuple(
    f"legendre-gauss-radau-{k}" for k in range(1, 10))
#: Every value of ``SolverSettings.transcription_scheme``.
SCHEMES = CLASSICAL_SCHEMES + PSEUDOSPECTRAL_SCHEMES
DYNAMICS_MODES = ("explicit", "implicit")


def check_scheme(value: object, name: str = "transcription_scheme") -> str:
    """``value`` if it names a scheme of :data:`SCHEMES`; else a ``ValueError`` naming ``name``, the families and the
    closest names."""
    if isinstance(value, str) and value in SCHEMES:
        return value
    close = difflib.get_close_matches(str(value), SCHEMES, n=2, cutoff=0.6)
    raise ValueError(f"{name} must be one of ['trapezoidal', 'hermite-simpson'] or a pseudospectral "
                     f"'legendre-gauss-k' / 'legendre-gauss-radau-k' with k = 1...9, got {value!r}"
                     + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""))


def lagrange_basis(nodes: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values and derivatives of the Lagrange polynomials of ``nodes`` (n,) at the points ``at`` (m,).

    Barycentric formulas (Berrut and Trefethen 2004), accurate to round-off for the node sets used here.

    Returns
    -------
    values, derivatives : (n, m)
        ``values[j, i] = ℓ_j(at_i)``, ``derivatives[j, i] = ℓ_j'(at_i)``.
    """
    x = np.asarray(nodes, float)
    n = x.size
    w = np.array([1.0 / np.prod([x[j] - x[m] for m in range(n) if m != j]) for j in range(n)])
    at = np.atleast_1d(np.asarray(at, float))
    values = np.zeros((n, at.size))
    derivs = np.zeros((n, at.size))
    for i, t in enumerate(at):
        hit = np.flatnonzero(np.abs(t - x) < 1e-14)
        if hit.size:  # at a node: ℓ_j(x_k) = δ_jk; ℓ_j'(x_k) by the differentiation matrix
            k = int(hit[0])
            values[k, i] = 1.0
            for j in range(n):
                if j != k:
                    derivs[j, i] = w[j] / w[k] / (x[k] - x[j])
            derivs[k, i] = -np.sum(derivs[:, i])
        else:
            c = w / (t - x)
            ell = np.prod(t - x)  # ℓ(t) = Π (t − x_m)
            values[:, i] = ell * c
            # ℓ_j(t) = ℓ(t) w_j / (t − x_j): derivative by the product rule
            dell = ell * np.sum(1.0 / (t - x))
            derivs[:, i] = dell * c - ell * c / (t - x)
    return values, derivs


def _legendre_roots(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k Legendre–Gauss points on (0, 1) and their weights."""
    x, w = np.polynomial.legendre.leggauss(k)
    return (x + 1) / 2, w / 2


def _radau_roots(k: int) -> np.ndarray:
    """The k Legendre–Gauss–Radau points on (0, 1], the last one 1: the roots of P_{k−1} − P_k, mapped."""
    if k == 1:
        return np.array([1.0])
    c = np.zeros(k + 1)
    c[k - 1], c[k] = 1.0, -1.0
    x = np.sort(np.real(np.polynomial.legendre.legroots(c)))
    # polish each root by Newton's method on the Legendre series (the companion matrix's roots carry ~1e-15)
    dc = np.polynomial.legendre.legder(c)
    for _ in range(3):
        x = x - np.polynomial.legendre.legval(x, c) / np.polynomial.legendre.legval(x, dc)
    x[-1] = 1.0
    return (x + 1) / 2


@dataclass(frozen=True)
class Scheme:
    """One collocation scheme on the unit interval.

    Attributes
    ----------
    name : str
    nodes : (s + 1,)
        The interval's grid points in normalized time, 0 and 1 included (``s``: grid points per interval).
    defect_y, defect_f : (r, s + 1)
        An interval's ``r`` defect rows per state: ``defect_y @ Y + h * defect_f @ F`` over its nodes.
    weights : (s + 1,)
        Quadrature weights on the unit interval, ``∫₀¹ f ≈ weights · f(nodes)``.
    """

    name: str
    nodes: np.ndarray
    defect_y: np.ndarray
    defect_f: np.ndarray
    weights: np.ndarray

    @property
    def stride(self) -> int:
        """Grid points per interval (the shared end point counted once)."""
        return self.nodes.size - 1

    @property
    def rows(self) -> int:
        """Defect rows per state and interval."""
        return self.defect_y.shape[0]

    @property
    def interior(self) -> np.ndarray:
        """Local indices of the nodes strictly inside the interval."""
        return np.arange(1, self.stride)


def _pseudospectral(name: str, roots: np.ndarray, gauss: bool) -> Scheme:
    k = roots.size
    support = np.concatenate([[0.0], roots])  # the interpolating polynomial's nodes: the start and the roots
    nodes = np.concatenate([support, [1.0]]) if gauss else support
    s = nodes.size - 1
    _, D = lagrange_basis(support, roots)  # D[j, d] = ℓ_j'(τ_d), j over the support
    rows = k + 1 if gauss else k
    Ay = np.zeros((rows, s + 1))
    Af = np.zeros((rows, s + 1))
    Ay[:k, :k + 1] = D.T  # Σ_j ℓ_j'(τ_d) y_j − h f(τ_d) = 0
    Af[np.arange(k), 1 + np.arange(k)] = -1.0
    if gauss:  # the interval's end state: the polynomial's value at 1
        C, _ = lagrange_basis(support, np.array([1.0]))
        Ay[k, :k + 1] = -C[:, 0]
        Ay[k, k + 1] = 1.0
    # quadrature: ∫₀¹ of the polynomial through the roots alone (the Gauss and Radau weights)
    xg, wg = _legendre_roots(k + 1)
    V, _ = lagrange_basis(roots, xg)
    w = np.zeros(s + 1)
    w[1:k + 1] = V @ wg
    return Scheme(name, nodes, Ay, Af, w)


@functools.lru_cache(maxsize=None)
def scheme_for(name: str) -> Scheme:
    """The :class:`Scheme` named ``name`` (one of :data:`SCHEMES`)."""
    if name == "trapezoidal":
        return Scheme(name, np.array([0.0, 1.0]), np.array([[-1.0, 1.0]]), np.array([[-0.5, -0.5]]),
                      np.array([0.5, 0.5]))
    if name == "hermite-simpson":
        return Scheme(name, np.array([0.0, 0.5, 1.0]),
                      np.array([[-0.5, 1.0, -0.5], [-1.0, 0.0, 1.0]]),
                      np.array([[-1 / 8, 0.0, 1 / 8], [-1 / 6, -4 / 6, -1 / 6]]),
                      np.array([1 / 6, 4 / 6, 1 / 6]))
    if name in PSEUDOSPECTRAL_SCHEMES:
        k = int(name.rsplit("-", 1)[1])
        if "radau" in name:
            return _pseudospectral(name, _radau_roots(k), gauss=False)
        return _pseudospectral(name, _legendre_roots(k)[0], gauss=True)
    raise ValueError(f"Unknown transcription scheme {name!r}; choose one of {list(SCHEMES)}.")


def quadrature_weights(scheme: str, dtau: np.ndarray) -> np.ndarray:
    """Weights of the grid points spanned by mesh intervals of lengths ``dtau`` (normalized time).

    ``∫ f dτ ≈ w · f`` over ``stride · len(dtau) + 1`` points (trapezoidal rule, Simpson's rule over mesh points
    and midpoints, or the Gauss / Radau weights of each interval's roots).
    """
    sch = scheme_for(scheme)
    s = sch.stride
    w = np.zeros(s * dtau.size + 1)
    L = dtau.size
    for j in range(s):
        w[j:s * L:s] += sch.weights[j] * dtau
    w[s::s] += sch.weights[s] * dtau
    return w


def collocation_defects(scheme: str, Y: np.ndarray, F: np.ndarray, h: np.ndarray, Yend: np.ndarray | None = None,
                        dF: np.ndarray | None = None, E: np.ndarray | None = None,
                        Eend: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Defects of consecutive mesh intervals: ``defect_y · Y + h defect_f · F`` over each interval's nodes.

    Trapezoidal (Eq. 7), Hermite–Simpson (Eq. 10–12: the Hermite row, then the Simpson row), Legendre–Gauss
    (k collocation rows, then the end-state row) or Legendre–Gauss–Radau (k collocation rows); see :class:`Scheme`.

    Parameters
    ----------
    Y, F : (nloc, ny)
        Collocated variables and their derivatives at the intervals' grid points (``nloc = stride L + 1``).
    h : (L,)
        Interval durations.
    Yend : (nloc, ny), optional
        What each interval integrates *to* at its last node (default ``Y``; Bordalba's projected states).
    dF : (nloc, ny, nb), optional
        Derivatives of ``F`` w.r.t. each node's variable block; with ``E`` (ny, nb), the derivative
        of ``Y`` w.r.t. the block, and ``Eend`` (default ``E``) that of ``Yend``.

    Returns
    -------
    out : (L * rows * ny,)
        Defects, interval by interval, row by row (``rows``: :attr:`Scheme.rows`).
    Jnodes : (L * rows * ny, nloc * nb) or None
        Their Jacobian w.r.t. the node blocks (when ``dF`` is given).
    """
    sch = scheme_for(scheme)
    s, Ay, Af = sch.stride, sch.defect_y, sch.defect_f
    L = h.size
    Yend = Y if Yend is None else Yend
    idx = s * np.arange(L)[:, None] + np.arange(s + 1)[None, :]  # (L, s + 1): each interval's nodes
    Yl = Y[idx]
    Yl[:, s] = Yend[idx[:, s]]
    out = (np.einsum("rj,ljy->lry", Ay, Yl) + h[:, None, None] * np.einsum("rj,ljy->lry", Af, F[idx])).reshape(-1)
    if dF is None:
        return out, None
    nloc, ny, nb = dF.shape
    Eend = E if Eend is None else Eend
    Jnodes = np.zeros((out.size, nloc * nb))
    Jn = Jnodes.reshape(L, sch.rows, ny, nloc, nb)  # view
    l = np.arange(L)
    for j in range(s + 1):
        Ej = Eend if j == s else E
        term = Ay[None, :, j, None, None] * Ej[None, None] \
            + h[:, None, None, None] * Af[None, :, j, None, None] * dF[idx[:, j]][:, None]
        Jn[l, :, :, idx[:, j], :] = term
    return out, Jnodes


@dataclass
class Grid:
    """Normalized time grid of a transcription: ``N`` uniform mesh intervals, each with its scheme's nodes.

    Attributes
    ----------
    mesh : (N + 1,)
    tau : (stride N + 1,)
        Every grid point's normalized time.
    is_mesh : (stride N + 1,) bool
    quadrature : (stride N + 1,)
        ``∫₀¹ f dτ ≈ quadrature · f(tau)``.
    stride : int
        Grid points per interval (1 trapezoidal, 2 Hermite–Simpson, k + 1 Legendre–Gauss, k Radau).
    """

    scheme: str
    num_mesh_intervals: int

    def __post_init__(self):
        N = self.num_mesh_intervals
        sch = scheme_for(self.scheme)
        s = self.stride = sch.stride
        self.mesh = np.linspace(0.0, 1.0, N + 1)
        dtau = np.diff(self.mesh)
        self.tau = np.empty(s * N + 1)
        for j in range(s):
            self.tau[j:s * N:s] = self.mesh[:-1] + sch.nodes[j] * dtau
        self.tau[s::s] = self.mesh[1:]
        self.is_mesh = np.zeros(s * N + 1, bool)
        self.is_mesh[::s] = True
        self.quadrature = quadrature_weights(self.scheme, dtau)

    @property
    def num_points(self) -> int:
        """Number of grid points (``N + 1`` trapezoidal, ``2N + 1`` Hermite–Simpson, ``(k + 1) N + 1``
        Legendre–Gauss, ``k N + 1`` Legendre–Gauss–Radau)."""
        return self.tau.size


def mesh_intervals_for(duration: float, mesh_interval: float) -> int:
    """The number of uniform mesh intervals for a largest ``mesh_interval`` over ``duration`` (both in s).

    Moco's rule (``MocoTool::updateTimeInfo``, shared by ``MocoTrack`` and ``MocoInverse``): a plain
    ``ceil(duration / mesh_interval)``, never a larger interval than asked for, at least one.
    """
    return max(1, int(math.ceil(duration / mesh_interval)))
