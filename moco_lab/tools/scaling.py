"""Scale a model to a subject, register its markers and compute inverse kinematics, as one least-squares problem.

AddBiomechanics (Werling et al. 2023) finds the body scales, the marker offsets (where each marker really sits on
its segment) and the poses of every frame together, because each depends on the others: a longer thigh moves
every marker below the knee, a misplaced knee marker pulls the knee angle. The maximum-a-posteriori (MAP) problem
solved here, with marker noise of standard deviation σ and Gaussian priors::

    min_{s, δ, q_1..T}  Σ_t Σ_m |p_m(q_t; s, δ_m) − y_tm|² / σ²  +  Σ_k (s_k − s̄_k)² / σ_s²  +  Σ_m |δ_m|² / σ_m²

* ``s``: one scale per segment group, applied by rebuilding the model (``build(scales)``, e.g. gait2d's
  ``segment_scales``); the scales' derivatives are finite differences of whole rebuilt models;
* ``δ_m``: each marker's offset from where ``place(model)`` puts it on the scaled model (in its body's frame, x
  and y: planar data), with a tighter prior for anatomical markers (over bony landmarks) than for tracking
  markers;
* ``q_t``: the coordinates of every frame, with the exact Jacobians of Drake's plant
  (``CalcJacobianTranslationalVelocity``).

It is a sparse nonlinear least-squares problem (SciPy's trust-region reflective ``least_squares``), started from
per-frame inverse kinematics on the unscaled model with the markers where ``place`` puts them
(:func:`~moco_lab.tools.marker_ik.inverse_kinematics`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy import sparse
from scipy.optimize import least_squares

from ..modeling.model import Model
from ..util.checks import finite_number, whole_number
from ..util.names import did_you_mean
from .marker_ik import IKResult, Marker, ik_result, inverse_kinematics, marker_frames, marker_trajectories

__all__ = ["ScaleResult", "scale_and_track"]


@dataclass
class ScaleResult:
    """The result of :func:`scale_and_track`.

    Attributes
    ----------
    scales : dict of str -> float
        The fitted scale of each segment group.
    model : Model
        The model rebuilt with them.
    markers : list of Marker
        The registered markers on ``model`` (placed, then moved by their offsets).
    offsets : dict of str -> (2,) array, m
        Each marker's offset from where ``place`` put it on the scaled model (body frame).
    ik : IKResult
        Poses of every frame and the marker errors of the fitted model.
    initial : IKResult
        The per-frame inverse kinematics on the unscaled model the fit started from.
    success : bool
    message : str
        SciPy's.
    nfev : int
        Residual evaluations.
    """

    scales: dict
    model: Model
    markers: list
    offsets: dict
    ik: IKResult
    initial: IKResult
    success: bool
    message: str
    nfev: int


class _Problem:
    """Residuals and Jacobians of the MAP problem; caches the last point's kinematics."""

    def __init__(self, build, place, segments, names, Y, noise, prior, scale_sd, offset_sd, nq):
        self.build, self.place, self.segments, self.names, self.nq = build, place, list(segments), list(names), nq
        self.Y, self.noise, self.prior, self.scale_sd, self.offset_sd = Y, noise, prior, scale_sd, offset_sd
        self.K, self.M, self.T = len(self.segments), len(self.names), Y.shape[0]
        self.valid = np.all(np.isfinite(Y), axis=2)  # (T, M)
        self._key = None

    def split(self, x):
        K, M = self.K, self.M
        s = x[:K]
        d = x[K:K + 2 * M].reshape(M, 2)
        model = self.build(dict(zip(self.segments, s)))
        q = x[K + 2 * M:].reshape(self.T, self.nq)
        return s, d, q, model

    def markers(self, model, d) -> list[Marker]:
        placed = {m.name: m for m in self.place(model)}
        missing = [n for n in self.names if n not in placed]
        if missing:
            raise KeyError(f"scale_and_track: place(model) has no marker {missing[0]!r}")
        return [Marker(n, placed[n].body, (placed[n].location[0] + d[k, 0], placed[n].location[1] + d[k, 1],
                                           placed[n].location[2])) for k, n in enumerate(self.names)]

    def evaluate(self, x):
        key = x.tobytes()
        if key == self._key:
            return self._value
        s, d, q, model = self.split(x)
        markers = self.markers(model, d)
        P = marker_trajectories(model, markers, q)[:, :, :2]
        self._key, self._value = key, (s, d, q, model, markers, P)
        return self._value

    def residuals(self, x):
        s, d, q, model, markers, P = self.evaluate(x)
        r = np.where(self.valid[..., None], (P - self.Y) / self.noise, 0.0).reshape(-1)
        return np.concatenate([r, (s - self.prior) / self.scale_sd, (d / self.offset_sd[:, None]).reshape(-1)])

    def jacobian(self, x):
        from pydrake.multibody.tree import JacobianWrtVariable

        s, d, q, model, markers, P = self.evaluate(x)
        K, M, T, nq = self.K, self.M, self.T, self.nq
        n_marker_rows = T * M * 2
        rows, cols, vals = [], [], []
        # scales: finite differences of rebuilt models (the markers' offsets kept)
        for k in range(K):
            h = 1e-6 * max(1.0, abs(s[k]))
            s2 = s.copy()
            s2[k] += h
            model2 = self.build(dict(zip(self.segments, s2)))
            P2 = marker_trajectories(model2, self.markers(model2, d), q)[:, :, :2]
            col = ((P2 - P) / (h * self.noise) * self.valid[..., None]).reshape(-1)
            nz = np.nonzero(col)[0]
            rows.append(nz)
            cols.append(np.full(nz.size, k))
            vals.append(col[nz])
        plant = model.plant
        frames = marker_frames(model, markers)
        world = plant.world_frame()
        ctx = plant.CreateDefaultContext()
        for t in range(T):
            plant.SetPositions(ctx, q[t])
            for m_i, (m, f) in enumerate(zip(markers, frames)):
                if not self.valid[t, m_i]:
                    continue
                r0 = (t * M + m_i) * 2
                J = plant.CalcJacobianTranslationalVelocity(ctx, JacobianWrtVariable.kQDot, f,
                                                            np.reshape(m.location, (3, 1)), world, world)[:2]
                R = plant.CalcRelativeTransform(ctx, world, f).rotation().matrix()[:2, :2]
                for a in range(2):
                    rows.append(np.full(nq + 2, r0 + a))
                    cols.append(np.r_[K + 2 * m_i, K + 2 * m_i + 1, K + 2 * M + t * nq + np.arange(nq)])
                    vals.append(np.r_[R[a], J[a]] / self.noise)
        # priors
        rows.append(n_marker_rows + np.arange(K))
        cols.append(np.arange(K))
        vals.append(np.full(K, 1.0 / self.scale_sd))
        rows.append(n_marker_rows + K + np.arange(2 * M))
        cols.append(K + np.arange(2 * M))
        vals.append(np.repeat(1.0 / self.offset_sd, 2))
        n_rows = n_marker_rows + K + 2 * M
        return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                 shape=(n_rows, x.size))


def _check_arguments(build, place, data, segments, noise, scale_prior, scale_sd, offset_sd):
    """Every argument of :func:`scale_and_track` that can be checked before a model is built; returns the
    segments, the marker names, the data as a (T, M, 2) array, the scales' prior means and the offsets' prior
    standard deviations."""
    who = "scale_and_track"
    for label, f in (("build", build), ("place", place)):
        if not callable(f):
            raise TypeError(f"{who}: {label} must be a function, got {type(f).__name__}")
    if isinstance(segments, str):
        raise TypeError(f"{who}: segments must be a list of segment names, got the string {segments!r}")
    segments = list(segments)
    if not segments:
        raise ValueError(f"{who}: give at least one segment to scale")
    twice = sorted({k for k in segments if segments.count(k) > 1})
    if twice:
        raise ValueError(f"{who}: segments lists {twice} more than once")
    if not isinstance(data, Mapping):
        raise TypeError(f"{who}: data must be a dict of marker name -> (T, 2) array, got {type(data).__name__}")
    if not data:
        raise ValueError(f"{who}: data holds no marker")
    names = list(data)
    columns = []
    for n in names:
        y = np.asarray(data[n], float)
        if y.ndim != 2 or y.shape[1] != 2 or y.shape[0] < 1:
            raise ValueError(f"{who}: the data of marker {n!r} must be a (T, 2) array (planar, m), got shape "
                             f"{y.shape}")
        if np.isinf(y).any():
            raise ValueError(f"{who}: the data of marker {n!r} has infinite values (NaN marks a missing frame)")
        if columns and y.shape[0] != columns[0].shape[0]:
            raise ValueError(f"{who}: the data of marker {n!r} has {y.shape[0]} frames, that of {names[0]!r} "
                             f"{len(columns[0])}")
        columns.append(y)
    Y = np.stack(columns, axis=1)
    finite_number(noise, f"{who}: noise", 0, False)
    finite_number(scale_sd, f"{who}: scale_sd", 0, False)
    if scale_prior is not None and not isinstance(scale_prior, Mapping):
        raise TypeError(f"{who}: scale_prior must be a dict of segment -> scale, got {type(scale_prior).__name__}")
    for k, v in (scale_prior or {}).items():
        if k not in segments:
            raise KeyError(f"{who}: scale_prior: {did_you_mean(k, segments, 'segment among those fitted')}")
        finite_number(v, f"{who}: scale_prior[{k!r}]", 0, False)
    prior = np.array([float((scale_prior or {}).get(k, 1.0)) for k in segments])
    if isinstance(offset_sd, Mapping):
        for k, v in offset_sd.items():
            if k not in data:
                raise KeyError(f"{who}: offset_sd: {did_you_mean(k, names, 'marker in the data')}")
            finite_number(v, f"{who}: offset_sd[{k!r}]", 0, False)
        sd = np.array([float(offset_sd.get(n, 0.01)) for n in names])
    else:
        sd = np.full(len(names), finite_number(offset_sd, f"{who}: offset_sd", 0, False))
    return segments, names, Y, prior, sd


def scale_and_track(build: Callable[[dict], Model], place: Callable[[Model], Sequence[Marker]],
                    data: Mapping[str, np.ndarray], segments: Sequence[str], *, noise: float = 0.005,
                    scale_prior: Mapping[str, float] | None = None, scale_sd: float = 0.05,
                    offset_sd: Mapping[str, float] | float = 0.01, max_nfev: int = 200,
                    tolerance: float = 1e-8) -> ScaleResult:
    """Scales, marker offsets and poses of every frame from marker data, by one MAP least-squares fit (module
    docstring).

    Parameters
    ----------
    build : callable ``{segment: scale} -> Model``
        Builds the model with the given segment scales (e.g. ``lambda s: ml.models.gait2d(68, 1.75,
        muscles=False, segment_scales=s)``); Drake kinematics (no custom joints).
    place : callable ``Model -> list of Marker``
        Where the markers go on a model (e.g. :func:`moco_lab.examples.synthetic.gait2d_markers`): the generic
        placement, which the offsets correct.
    data : dict of str -> (T, 2) array, m
        Measured marker positions (x forward, y up); NaN where a marker is missing.
    segments : sequence of str
        The scales to fit (keys ``build`` accepts).
    noise : float, m
        Marker noise standard deviation σ (per axis).
    scale_prior, scale_sd : dict, float
        Prior mean of each scale (default 1: the model's proportions) and its standard deviation.
    offset_sd : dict of str -> float, or float
        Prior standard deviation of each marker's offset (m, per axis): a few millimetres for anatomical markers,
        a centimetre or more for tracking markers.
    max_nfev, tolerance
        SciPy ``least_squares``'s evaluation limit and ``ftol``/``xtol``/``gtol``.

    Returns
    -------
    ScaleResult
    """
    segments, names, Y, prior, sd = _check_arguments(build, place, data, segments, noise, scale_prior, scale_sd,
                                                     offset_sd)
    max_nfev = whole_number(max_nfev, "scale_and_track: max_nfev")
    tolerance = finite_number(tolerance, "scale_and_track: tolerance", 0, False)
    generic = build(dict(zip(segments, prior)))
    if not isinstance(generic, Model):
        raise TypeError(f"scale_and_track: build(scales) must return a moco_lab Model, got {type(generic).__name__}")
    placed_list = list(place(generic))
    if not all(isinstance(m, Marker) for m in placed_list):
        raise TypeError("scale_and_track: place(model) must return a list of Marker, got "
                        f"{sorted({type(m).__name__ for m in placed_list})}")
    placed = {m.name: m for m in placed_list}
    unknown = [n for n in names if n not in placed]
    if unknown:
        raise KeyError(f"scale_and_track: data for marker {unknown[0]!r}, which place(model) does not put on the "
                       f"model; it places {sorted(placed)}")
    initial = inverse_kinematics(generic, [placed[n] for n in names], data)
    problem = _Problem(build, place, segments, names, Y, noise, prior, scale_sd, sd, generic.plant.num_positions())
    x0 = np.concatenate([prior, np.zeros(2 * len(names)), initial.q.reshape(-1)])
    fit = least_squares(problem.residuals, x0, jac=problem.jacobian, method="trf", x_scale="jac",
                        ftol=tolerance, xtol=tolerance, gtol=tolerance, max_nfev=max_nfev, tr_solver="lsmr")
    s, d, q, model = problem.split(fit.x)
    markers = problem.markers(model, d)
    P = marker_trajectories(model, markers, q)[:, :, :2]
    ik = ik_result(model, q, np.where(problem.valid, np.linalg.norm(P - Y, axis=2), np.nan), names, fit.success)
    return ScaleResult(dict(zip(segments, map(float, s))), model, markers,
                       {n: d[k].copy() for k, n in enumerate(names)}, ik, initial, bool(fit.success),
                       str(fit.message), int(fit.nfev))
