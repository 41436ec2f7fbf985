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

**With scaling** (``scales=``, AddBiomechanics' scaling and registration as one problem): groups of bodies also take
three factors ``s_g`` along their axes, scaled as OpenSim's ScaleTool scales a model (joint frames, custom joints'
translations, markers; :mod:`moco_lab.modeling.osim_scale`), with the prior ``½ Σ_g |s_g − 1|² / scale_sd²``. The
scaled markers are exact functions of the poses and factors of the unscaled model's compiled kinematics
(:class:`~moco_lab.tools.scaled_markers.ScaledMarkerKinematics`): nothing is rebuilt while fitting;
:func:`~moco_lab.tools.body_scaling.scale_model` builds the scaled model at the end.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..modeling.model import Model, require_model
from ..solve.optimizer import Progress
from ..util.checks import finite_number
from .gauss_newton import constrained_least_squares, frame_rows
from .marker_ik import Marker, clamped_bounds, marker_arrays, marker_list
from .root_residual import factor_bounds
from .scaled_markers import ScaledMarkerKinematics, scale_groups

__all__ = ["MarkerRegistration", "register_markers"]


@dataclass
class MarkerRegistration:
    """:func:`register_markers`' answer.

    Attributes
    ----------
    markers : list of Marker
        The markers at their registered locations, in the order given: the model's location (scaled with its body
        when scaling) plus the fitted offset (weight-0 markers: no offset).
    offsets : dict of str -> (3,) array, m
        Each fitted marker's offset from its (scaled) model location, in its body's frame.
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
    group_scales : dict of str -> (3,) array
        With ``scales``: each group's fitted factors (x, y, z).
    scales : dict of str -> (3,) array
        The same per body (what :func:`~moco_lab.tools.body_scaling.scale_model` takes).
    groups : dict of str -> list of str
        The groups' bodies.
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
    group_scales: dict = field(default_factory=dict)
    scales: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)


def register_markers(model: Model, markers: Sequence[Marker], data: Mapping[str, np.ndarray], Q: np.ndarray, *,
                     weights: Mapping[str, float] | None = None, noise: float = 0.01,
                     offset_sd: float | Mapping[str, float] = 0.01,
                     scales: Mapping[str, Sequence[str]] | Sequence[str] | None = None, scale_sd: float = 0.1,
                     uniform_scales: bool = False, scale_bounds: tuple[float, float] = (0.5, 2.0),
                     max_iterations: int = 50,
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
    scales : dict of str -> list of str, or list of str, optional
        Scale the model too: groups of bodies that share three factors along their axes (a dict group -> bodies; a
        list of bodies: one group each; :func:`~moco_lab.tools.scaled_markers.scale_groups`). None (default): no
        scaling. ``ml.tools.scaled_markers.scale_groups(model, None)`` gives every body, pairs of sides together.
    scale_sd : float
        The prior width of a factor around 1 (default 0.1: ±10 %).
    uniform_scales : bool
        One factor per group instead of three.
    scale_bounds : (float, float)
        The factors' range (default 0.5–2).
    max_iterations : int
    progress : callable, optional
        Called with a :class:`~moco_lab.solve.optimizer.Progress` at the start (iteration 0) and after every
        iteration.

    Returns
    -------
    MarkerRegistration
        With scales, ``scale_model(model.source_file, result.scales, markers=result.markers)`` builds the scaled
        model (:func:`~moco_lab.tools.body_scaling.scale_model`).

    Raises
    ------
    KeyError
        Data or an ``offset_sd`` for an unknown marker.
    ValueError
        ``Q`` of the wrong shape, non-positive widths.
    """
    who = "register_markers"
    require_model(model, who)
    problem = _RegistrationProblem(model, markers, data, Q, weights, noise, offset_sd, who, scales, scale_sd,
                                   uniform_scales, scale_bounds)
    answer = constrained_least_squares(problem, max_iterations=max_iterations, progress=progress, who=who)
    return problem.result(answer.x, answer.extra, answer.success, answer.iterations, answer.objective)


class _RegistrationProblem:
    """``x = [q_0 … q_{T−1}, δ_1 … δ_K]`` (K fitted markers): the normalized marker errors and the offsets' prior
    with their sparse Jacobian, the couplers, the bounds."""

    def __init__(self, model, markers, data, Q, weights, noise, offset_sd, who, scales=None, scale_sd=0.1,
                 uniform_scales=False, scale_bounds=(0.5, 2.0)):
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
        # the scaled markers, their bodies' frames and the couplers by the model's compiled kinematics
        self.groups = {} if scales is None else scale_groups(model, scales, who)
        finite_number(scale_sd, f"{who}: scale_sd", 0, False, "a positive number (the prior width of a factor)")
        lo, hi = factor_bounds(scale_bounds, who, "the model's size")
        self.kinematics = ScaledMarkerKinematics(model, markers, self.groups)
        self.markers, self.Y, self.w, self.T, self.nq = markers, Y, w, T, nq
        self.K = len(self.fitted)
        self.uniform, self.scale_sd = bool(uniform_scales), float(scale_sd)
        self.n_s = len(self.groups) * (1 if self.uniform else 3)
        self.s_start = T * nq + 3 * self.K
        self.n_x = self.s_start + self.n_s
        self.x0 = np.r_[Q0.reshape(-1), np.zeros(3 * self.K + self.n_s)]
        lower_q, upper_q = clamped_bounds(model)
        self.lower = np.r_[np.tile(lower_q, T), np.full(3 * self.K, -np.inf), np.full(self.n_s, lo - 1.0)]
        self.upper = np.r_[np.tile(upper_q, T), np.full(3 * self.K, np.inf), np.full(self.n_s, hi - 1.0)]
        self.c = np.sqrt(w) / noise
        self.prior = np.array([1.0 / sd[names[k]] for k in self.fitted])
        seen = np.isfinite(Y).all(axis=2)
        seen[:, [k for k in range(len(markers)) if w[k] <= 0]] = False
        st, sk = np.nonzero(seen[:, self.fitted])  # frames and fitted-marker indices of the terms
        self.st, self.sk = st, sk
        self.Yz = np.nan_to_num(Y)

    def evaluate(self, x: np.ndarray):
        """``(r, J, φ, G, marker positions (T, M, 3))`` at ``x``."""
        from scipy import sparse

        T, nq, n_x = self.T, self.nq, self.n_x
        Qx, delta, sigma = self.split(x)
        P, JP, JS, R, dR, phi, dphi = self.kinematics(Qx, sigma)  # scaled markers at the model's locations
        fitted = np.array(self.fitted, int)
        st, sk = self.st, self.sk
        mk = fitted[sk]
        d = delta[sk]  # (N, 3)
        moved = P[st, mk] + np.einsum("nij,nj->ni", R[st, mk], d)
        c = self.c[mk][:, None]
        r_m = (c * (moved - self.Yz[st, mk])).reshape(-1)
        Jq = c[:, :, None] * (JP[st, mk] + np.einsum("nkiq,nk->niq", dR[st, mk], d))  # (N, 3, nq)
        Jd = c[:, :, None] * R[st, mk]  # (N, 3, 3)
        N = st.size
        rows_d = np.repeat(np.arange(3 * N), 3).reshape(N, 3, 3)
        cols_d = np.broadcast_to((T * nq + 3 * sk)[:, None, None] + np.arange(3), (N, 3, 3))
        J_m = frame_rows(Jq, st, nq, n_x) + sparse.csr_matrix((Jd.reshape(-1), (rows_d.reshape(-1),
                                                                                cols_d.reshape(-1))), shape=(3 * N, n_x))
        if self.n_s:
            Js = c[:, :, None, None] * JS[st, mk]  # (N, 3, G, 3)
            Js = Js.sum(axis=3) if self.uniform else Js.reshape(N, 3, -1)
            data = Js.reshape(-1)
            keep = data != 0.0
            rows_s = np.repeat(np.arange(3 * N), self.n_s)[keep]
            cols_s = np.tile(self.s_start + np.arange(self.n_s), 3 * N)[keep]
            J_m = J_m + sparse.csr_matrix((data[keep], (rows_s, cols_s)), shape=(3 * N, n_x))
        prior = np.r_[np.repeat(self.prior, 3), np.full(self.n_s, 1.0 / self.scale_sd)]
        J_p = sparse.csr_matrix((prior, (np.arange(prior.size), T * nq + np.arange(prior.size))),
                                shape=(prior.size, n_x))
        r = np.r_[r_m, prior * x[T * nq:]]
        G = frame_rows(dphi, np.arange(T), nq, n_x)
        placed = P.copy()
        placed[:, fitted] = P[:, fitted] + np.einsum("tmij,mj->tmi", R[:, fitted], delta)
        return r, sparse.vstack([J_m, J_p]).tocsr(), phi.reshape(-1), G, placed

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The poses (T, nq), the offsets (K, 3) and the groups' factors minus one (G, 3) in ``x``."""
        T, nq, K = self.T, self.nq, self.K
        s = x[self.s_start:]
        sigma = np.repeat(s[:, None], 3, axis=1) if self.uniform else s.reshape(-1, 3)
        return x[:T * nq].reshape(T, nq), x[T * nq:T * nq + 3 * K].reshape(K, 3), sigma

    def result(self, x, placed, success, iterations, objective) -> MarkerRegistration:
        Qx, delta, sigma = self.split(x)
        Qx = Qx.copy()
        scales = {b: 1.0 + sigma[g] for g, members in enumerate(self.groups.values()) for b in members}
        registered = list(self.markers)
        offsets = {}
        fitted = {k: j for j, k in enumerate(self.fitted)}  # marker index -> its row of delta
        for k, m in enumerate(self.markers):
            location = np.asarray(m.location, float) * scales.get(m.body, 1.0)
            if k in fitted:
                location = location + delta[fitted[k]]
                offsets[m.name] = delta[fitted[k]].copy()
            registered[k] = Marker(m.name, m.body, tuple(float(v) for v in location))
        errors = np.where(np.isfinite(self.Y).all(axis=2), np.linalg.norm(placed - self.Yz, axis=2), np.nan)
        used = errors[:, self.w > 0]
        finite = used[np.isfinite(used)]
        return MarkerRegistration(registered, offsets, Qx, {c.name: Qx[:, c.q_index].copy()
                                                            for c in self.model.coordinates},
                                  [m.name for m in self.markers], errors, float(np.sqrt(np.mean(finite ** 2))),
                                  float(finite.max()), success, iterations, objective,
                                  {g: 1.0 + sigma[i] for i, g in enumerate(self.groups)}, scales,
                                  {g: list(v) for g, v in self.groups.items()})

