"""Marker registration on any model the engine derives (OpenSim's 3-D CustomJoint models included): where on its body
each marker really sits, fitted together with every frame's pose — AddBiomechanics' marker step (seed paper: each
marker's offset from where the model places it, with a Gaussian prior, optimized jointly with the poses).

A marker placed on the skin lands a few millimetres to centimetres from where the model's marker set puts it.
Inverse kinematics then bends the joints to make up for it in every frame. Registration lets each marker move on
its body by an offset ``δ_m`` (body frame) and solves, over all frames at once, ::

    min_{q_0..q_{T−1}, δ}  ½ Σ_t Σ_m w_m |p_m(q_t) + R_{b(m)}(q_t) δ_m − y_tm|² / noise²  +  ½ Σ_m |δ_m|² / offset_sd²

with the model's couplers held at every frame and clamped coordinates in range (the same damped Gauss–Newton as
:func:`~moco_lab.tools.root_residual.reduce_root_residual`, :mod:`moco_lab.tools.gauss_newton`). An offset is
determined by the data only as far as the poses cannot absorb it: the prior decides the rest, so that one trial
moves markers only where many frames agree. Markers of weight 0 are neither used nor moved.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..modeling.model import Model, require_model
from ..solve.optimizer import Progress
from ..util.checks import finite_number
from .gauss_newton import constrained_least_squares, frame_rows
from .marker_ik import Marker, MarkerKinematics, clamped_bounds, marker_arrays, marker_list

__all__ = ["MarkerRegistration", "register_markers"]


@dataclass
class MarkerRegistration:
    """:func:`register_markers`' answer.

    Attributes
    ----------
    markers : list of Marker
        The markers at their registered locations (weight-0 markers unchanged), in the order given.
    offsets : dict of str -> (3,) array, m
        Each fitted marker's offset from its model location, in its body's frame.
    q : (T, nq) array
        Every frame's pose with the registered markers.
    coordinates : dict of str -> (T,) array
    names : list of str
    errors : (T, M) array, m
        Distance of each registered marker from its measurement (NaN where missing).
    rmse, max_error : float, m
        Over the markers with a weight > 0.
    success : bool
    iterations : int
    objective : float
    """

    markers: list
    offsets: dict
    q: np.ndarray
    coordinates: dict
    names: list
    errors: np.ndarray
    rmse: float
    max_error: float
    success: bool
    iterations: int
    objective: float


def register_markers(model: Model, markers: Sequence[Marker], data: Mapping[str, np.ndarray], Q: np.ndarray, *,
                     weights: Mapping[str, float] | None = None, noise: float = 0.01,
                     offset_sd: float | Mapping[str, float] = 0.01, max_iterations: int = 50,
                     progress: Callable[[Progress], None] | None = None) -> MarkerRegistration:
    """Fit every weighted marker's offset on its body together with every frame's pose (module docstring).

    Parameters
    ----------
    model : Model
    markers : sequence of Marker
        The model's markers, each with data.
    data : dict of str -> (T, 3) array, m
        Measured positions (NaN: missing, left out).
    Q : (T, nq) array
        Starting poses (inverse kinematics with the model's markers).
    weights : dict of str -> float, optional
        Marker weights (the IK task file's); default 1.
    noise : float, m
        The measurement noise of a marker of weight 1.
    offset_sd : float or dict of str -> float, m
        The prior width of each offset (per marker by name; others 1 cm): anatomical landmarks are placed to a few
        millimetres, cluster markers anywhere on a segment.
    max_iterations : int
    progress : callable, optional

    Returns
    -------
    MarkerRegistration

    Raises
    ------
    KeyError
        Data or an ``offset_sd`` for an unknown marker.
    ValueError
        ``Q`` of the wrong shape, non-positive widths.
    """
    who = "register_markers"
    require_model(model, who)
    problem = _RegistrationProblem(model, markers, data, Q, weights, noise, offset_sd, who)
    answer = constrained_least_squares(problem, max_iterations=max_iterations, progress=progress, who=who)
    return problem.result(answer.x, answer.extra, answer.success, answer.iterations, answer.objective)


class _RegistrationProblem:
    """``x = [q_0 … q_{T−1}, δ_1 … δ_K]`` (K fitted markers): the normalized marker errors and the offsets' prior
    with their sparse Jacobian, the couplers, the bounds."""

    def __init__(self, model, markers, data, Q, weights, noise, offset_sd, who):
        self.model = model
        markers = marker_list(markers, who)
        Y, w = marker_arrays(markers, data, weights, who)
        T, nq = Y.shape[0], len(model.coordinates)
        Q0 = np.asarray(Q, float)
        if Q0.shape != (T, nq) or not np.all(np.isfinite(Q0)):
            raise ValueError(f"{who}: Q must be (T, {nq}) finite coordinates, T = {T} frames of marker data; got "
                             f"{Q0.shape}")
        finite_number(noise, f"{who}: noise", 0, False, "a positive length in m")
        names = [m.name for m in markers]
        if isinstance(offset_sd, Mapping):
            unknown = sorted(set(offset_sd) - set(names))
            if unknown:
                from ..util.names import did_you_mean

                raise KeyError(f"{who}: offset_sd for an unknown marker: " + did_you_mean(unknown[0], names, "marker"))
            sd = {n: float(offset_sd.get(n, 0.01)) for n in names}
        else:
            sd = {n: float(offset_sd) for n in names}
        for n, v in sd.items():
            finite_number(v, f"{who}: offset_sd of {n!r}", 0, False, "a positive length in m")
        self.fitted = [k for k in range(len(markers)) if w[k] > 0]
        # the markers and couplers by the model's kinematics (inverse kinematics' compiled block), and the frames of
        # the markers' bodies: their origins and unit axes as points, R e_k = p(e_k) − p(0)
        self.kinematics = MarkerKinematics(model, markers)
        system = self.kinematics.kernel.system
        self.bodies = sorted({markers[k].body for k in self.fitted})
        self.frames = [system.add_point_output(f"/bodyset/{b}/axis_{a}", b, v)[0] for b in self.bodies
                       for a, v in (("o", (0, 0, 0)), ("x", (1, 0, 0)), ("y", (0, 1, 0)), ("z", (0, 0, 1)))]
        self.markers, self.Y, self.w, self.T, self.nq = markers, Y, w, T, nq
        self.K = len(self.fitted)
        self.n_x = T * nq + 3 * self.K
        self.x0 = np.r_[Q0.reshape(-1), np.zeros(3 * self.K)]
        lower_q, upper_q = clamped_bounds(model)
        self.lower = np.r_[np.tile(lower_q, T), np.full(3 * self.K, -np.inf)]
        self.upper = np.r_[np.tile(upper_q, T), np.full(3 * self.K, np.inf)]
        self.c = np.sqrt(w) / noise
        self.prior = np.array([1.0 / sd[names[k]] for k in self.fitted])
        self.body_of = np.array([self.bodies.index(markers[k].body) for k in self.fitted])
        seen = np.isfinite(Y).all(axis=2)
        seen[:, [k for k in range(len(markers)) if w[k] <= 0]] = False
        st, sk = np.nonzero(seen[:, self.fitted])  # frames and fitted-marker indices of the terms
        self.st, self.sk = st, sk
        self.Yz = np.nan_to_num(Y)

    def evaluate(self, x: np.ndarray):
        """``(r, J, φ, G, marker positions (T, M, 3))`` at ``x``."""
        from scipy import sparse

        T, nq, K, n_x = self.T, self.nq, self.K, self.n_x
        Qx, delta = x[:T * nq].reshape(T, nq), x[T * nq:].reshape(K, 3)
        P, JP, phi, dphi = self.kinematics(Qx)  # at the model's marker locations
        fr = self.kinematics.kernel.outputs(self.frames, Qx, np.zeros_like(Qx), jac=True)
        nb = len(self.bodies)
        F = np.stack([fr[n] for n in self.frames], axis=1).reshape(T, nb, 4, 3)  # origin, e_x, e_y, e_z points
        JF = np.stack([fr["J"][n]["dq"] for n in self.frames], axis=1).reshape(T, nb, 4, 3, nq)
        R = np.transpose(F[:, :, 1:] - F[:, :, :1], (0, 1, 3, 2))  # (T, nb, 3, 3): columns R e_k
        dR = JF[:, :, 1:] - JF[:, :, :1]  # (T, nb, 3 (k), 3 (xyz), nq)
        fitted = np.array(self.fitted, int)
        st, sk = self.st, self.sk
        b = self.body_of[sk]
        d = delta[sk]  # (N, 3)
        moved = P[st, fitted[sk]] + np.einsum("nij,nj->ni", R[st, b], d)
        c = self.c[fitted[sk]][:, None]
        r_m = (c * (moved - self.Yz[st, fitted[sk]])).reshape(-1)
        Jq = c[:, :, None] * (JP[st, fitted[sk]] + np.einsum("nkiq,nk->niq", dR[st, b], d))  # (N, 3, nq)
        Jd = c[:, :, None] * R[st, b]  # (N, 3, 3)
        N = st.size
        rows_d = np.repeat(np.arange(3 * N), 3).reshape(N, 3, 3)
        cols_d = np.broadcast_to((T * nq + 3 * sk)[:, None, None] + np.arange(3), (N, 3, 3))
        J_m = frame_rows(Jq, st, nq, n_x) + sparse.csr_matrix((Jd.reshape(-1), (rows_d.reshape(-1),
                                                                                cols_d.reshape(-1))), shape=(3 * N, n_x))
        prior = np.repeat(self.prior, 3)
        J_p = sparse.csr_matrix((prior, (np.arange(3 * K), T * nq + np.arange(3 * K))), shape=(3 * K, n_x))
        r = np.r_[r_m, prior * delta.reshape(-1)]
        G = frame_rows(dphi, np.arange(T), nq, n_x)
        placed = P.copy()
        placed[:, fitted] = P[:, fitted] + np.einsum("tmij,mj->tmi", R[:, self.body_of], delta)
        return r, sparse.vstack([J_m, J_p]).tocsr(), phi.reshape(-1), G, placed

    def result(self, x, placed, success, iterations, objective) -> MarkerRegistration:
        T, nq, K = self.T, self.nq, self.K
        Qx, delta = x[:T * nq].reshape(T, nq).copy(), x[T * nq:].reshape(K, 3)
        registered = list(self.markers)
        offsets = {}
        for j, k in enumerate(self.fitted):
            m = self.markers[k]
            registered[k] = Marker(m.name, m.body, tuple(np.asarray(m.location) + delta[j]))
            offsets[m.name] = delta[j].copy()
        errors = np.where(np.isfinite(self.Y).all(axis=2), np.linalg.norm(placed - self.Yz, axis=2), np.nan)
        used = errors[:, self.w > 0]
        finite = used[np.isfinite(used)]
        return MarkerRegistration(registered, offsets, Qx, {c.name: Qx[:, c.q_index].copy()
                                                            for c in self.model.coordinates},
                                  [m.name for m in self.markers], errors, float(np.sqrt(np.mean(finite ** 2))),
                                  float(finite.max()), success, iterations, objective)
