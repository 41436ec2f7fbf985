"""Residual forces and moments of a planar motion, and how to reduce them: smoothing, segment masses, or both
together with the kinematics (AddBiomechanics' dynamics pass, by Gauss–Newton or on Drake and IPOPT).

Inverse dynamics of a motion with the measured ground reaction force applied leaves, at the model's root, the
force and moment that nothing in the lab supplied: the *residuals*. For a planar model whose bodies i have mass
m_i, moment of inertia I_i about their centre of mass, centre of mass p_i and angle θ_i, the whole-body Newton–Euler
equations at frame k, with accelerations by central second differences over frames Δt apart (the differences the
mass fit of :mod:`moco_lab.tools.mass_fit` implies), give the residual wrench about the whole-body COM c::

    F_res = Σ_i m_i a_i − M g − F,        a_i = (p_i[k+1] − 2 p_i[k] + p_i[k−1]) / Δt²
    M_res = Σ_i [(p_i − c) × m_i a_i + I_i α_i] − (r − c) × F,   α_i likewise from θ_i

with F the measured ground reaction force acting at the centre of pressure r (gravity has no moment about the
COM). These are the root's generalized forces of inverse dynamics, independent of which body is the root; they are
defined on frames 1 … T−2 and where force data exist. Gait labs judge them, as AddBiomechanics' scripts apply Hicks
et al. (2015): RMS |F_res| over the peak |F| (lines at 5 % and, AddBiomechanics' own result, 2 %), and RMS |M_res|
over peak |F| times the mean COM height (line at 1 %) (:func:`residual_percent`).

Three ways to reduce them, the three of the residual-reduction lesson:

* :func:`lowpass`: filter the joint angles (zero-lag Butterworth), which removes the noise that second differences
  amplify but also rounds off the real accelerations of heel strike;
* :func:`fit_segment_masses`: with the kinematics fixed, both residuals are *linear* in the segment masses (each
  group's mass and moment of inertia scale together), so the masses that minimize them are one linear least-squares
  problem;
* :func:`reduce_residuals`: the segment masses and every frame's coordinates as the unknowns of one maximum-a-
  posteriori problem: marker errors over their noise, residuals over their allowed size, masses near the model's,
  with the exact sparse Jacobian of its terms (Drake's kinematic Jacobians, chain rule through the differences),
  solved by damped Gauss–Newton or, as AddBiomechanics does, by IPOPT on a Drake ``MathematicalProgram``.

Arrays: ``Q`` is (T, nq) in ``model.coordinates`` order; ``forces`` and ``cop`` (T, 2), x forward, y up, NaN rows
where the force plates have no data (those frames carry no residual). Bodies move in the x–y plane, rotating about
z (checked).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ..engine.settings import SolverSettings
from ..modeling.model import Model, require_model
from ..solve.optimizer import Progress, run_optimizer
from ..util.checks import finite_number, whole_number
from ..util.names import did_you_mean
from .marker_ik import Marker, ik_result, marker_frames, marker_list

__all__ = ["residual_wrenches", "residual_percent", "lowpass", "segment_groups", "group_masses", "fit_segment_masses",
           "MassFitResult", "ResidualReduction", "reduce_residuals"]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z component of a × b for (..., 2) arrays."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


class _Kinematics:
    """Bodies' centres of mass, angles and chosen marker points over frames, with their Jacobians wrt q."""

    def __init__(self, model: Model, markers: Sequence[Marker] = (), who: str = "residual reduction"):
        require_model(model, who).require_drake_kinematics(who)
        self.model, self.plant = model, model.plant
        plant = self.plant
        self.bodies = [plant.GetBodyByName(b) for b in model.body_paths]
        if not self.bodies:
            raise ValueError("residual reduction: the model has no bodies")
        self.names = [b.name() for b in self.bodies]
        self.markers = list(markers)
        frames = marker_frames(model, self.markers)
        self.marker_body = [self.names.index(f.body().name()) for f in frames]
        self.nq = plant.num_positions()
        if plant.num_velocities() != self.nq:
            raise ValueError("residual reduction needs v = q̇ (no quaternion floating joints); the model has "
                             f"{self.nq} positions and {plant.num_velocities()} velocities")
        self.mass = np.array([b.default_mass() for b in self.bodies])
        # moments of inertia about z through each body's COM
        self.inertia = np.array([b.default_spatial_inertia().Shift(b.default_com()).CalcRotationalInertia()
                                 .CopyToFullMatrix3()[2, 2] for b in self.bodies])
        # points per body: its COM first, then its markers
        self.points = []
        for k, b in enumerate(self.bodies):
            pts = [np.asarray(b.default_com(), float)]
            pts += [np.asarray(m.location, float) for m, j in zip(self.markers, self.marker_body) if j == k]
            self.points.append(np.array(pts).T)  # (3, n)
        self.context = plant.CreateDefaultContext()

    def __call__(self, Q: np.ndarray, jacobians: bool = True):
        """COM positions (T, nb, 2), angles (T, nb), markers (T, M, 2), and if asked their Jacobians
        (T, nb, 2, nq), (T, nb, nq), (T, M, 2, nq)."""
        from pydrake.multibody.tree import JacobianWrtVariable

        plant, ctx, world = self.plant, self.context, self.plant.world_frame()
        T, nb, M, nq = Q.shape[0], len(self.bodies), len(self.markers), self.nq
        P, TH, PM = np.empty((T, nb, 2)), np.empty((T, nb)), np.empty((T, M, 2))
        if jacobians:
            JP, JT, JM = np.empty((T, nb, 2, nq)), np.empty((T, nb, nq)), np.empty((T, M, 2, nq))
        marker_rows = [[i for i, j in enumerate(self.marker_body) if j == k] for k in range(nb)]
        for t in range(T):
            plant.SetPositions(ctx, Q[t])
            for k, body in enumerate(self.bodies):
                f = body.body_frame()
                X = plant.CalcRelativeTransform(ctx, world, f)
                R = X.rotation().matrix()
                if t == 0 and (abs(R[2, 2] - 1) > 1e-9 or abs(X.translation()[2]) > 1e-9):
                    raise ValueError(f"residual reduction is planar: body {self.names[k]!r} leaves the x-y plane")
                pts = X.multiply(self.points[k])  # (3, n)
                TH[t, k] = np.arctan2(R[1, 0], R[0, 0])
                P[t, k] = pts[:2, 0]
                PM[t, marker_rows[k]] = pts[:2, 1:].T
                if jacobians:
                    J = plant.CalcJacobianTranslationalVelocity(ctx, JacobianWrtVariable.kQDot, f, self.points[k],
                                                                world, world).reshape(-1, 3, nq)
                    JP[t, k] = J[0, :2]
                    JM[t, marker_rows[k]] = J[1:, :2]
                    JT[t, k] = plant.CalcJacobianAngularVelocity(ctx, JacobianWrtVariable.kQDot, f, world,
                                                                 world)[2]
        TH = np.unwrap(TH, axis=0)
        if jacobians:
            return P, TH, PM, JP, JT, JM
        return P, TH, PM


def _check_forces(forces: ArrayLike, cop: ArrayLike, T: int, who: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    F, r = np.asarray(forces, float), np.asarray(cop, float)
    if F.shape != (T, 2) or r.shape != (T, 2):
        raise ValueError(f"{who}: forces and cop must be (T, 2) arrays with T = {T} frames (one per row of Q); got "
                         f"{F.shape} and {r.shape}")
    if np.isinf(F).any() or np.isinf(r).any():
        raise ValueError(f"{who}: forces or cop have infinite values (NaN marks a frame without force data)")
    has = np.all(np.isfinite(F), axis=1) & np.all(np.isfinite(r), axis=1)
    has[[0, -1]] = False  # second differences need a frame on each side
    if has.sum() < 1:
        raise ValueError(f"{who}: no frame has force data (forces and cop are NaN everywhere but the first and last "
                         "frame)")
    return F, r, has


def _check_groups(names: Sequence[str], groups: Mapping[str, Sequence[str]] | None, who: str) -> dict[str, list]:
    """``groups`` checked against the model's body ``names`` (default: each body its own group)."""
    if groups is None:
        return {n: [n] for n in names}
    if not isinstance(groups, Mapping):
        raise TypeError(f"{who}: groups must be a dict of group name -> list of body names, got "
                        f"{type(groups).__name__}")
    out = {}
    for g, bodies in groups.items():
        if isinstance(bodies, str) or not isinstance(bodies, Iterable):
            raise TypeError(f"{who}: groups[{g!r}] must be a list of body names, got {bodies!r}")
        out[g] = list(bodies)
        for b in out[g]:
            if b not in names:
                raise KeyError(f"{who}: groups[{g!r}]: " + did_you_mean(b, list(names), "body"))
    seen: dict[str, str] = {}
    for g, bodies in out.items():
        for b in bodies:
            if b in seen:
                raise ValueError(f"{who}: body {b!r} is in two mass groups, {seen[b]!r} and {g!r}")
            seen[b] = g
    return out


def _check_scales(groups: Mapping[str, Sequence[str]], scales: Mapping[str, float] | None, who: str,
                  name: str = "mass_scales") -> dict[str, float]:
    """``scales`` (group -> factor) checked: known groups, finite positive factors."""
    if scales is None:
        return {}
    if not isinstance(scales, Mapping):
        raise TypeError(f"{who}: {name} must be a dict of group -> factor, got {type(scales).__name__}")
    for g in scales:
        if g not in groups:
            raise KeyError(f"{who}: {name}: " + did_you_mean(g, list(groups), "mass group"))
    return {g: finite_number(v, f"{who}: {name}[{g!r}]", 0, False) for g, v in scales.items()}


def _scale_per_body(names: Sequence[str], groups: Mapping[str, Sequence[str]] | None,
                    scales: Mapping[str, float] | None, who: str) -> np.ndarray:
    groups = _check_groups(names, groups, who)
    s = np.ones(len(names))
    for g, v in _check_scales(groups, scales, who).items():
        for b in groups[g]:
            s[names.index(b)] = v
    return s


def _second_differences(P, TH, dt):
    """Bodies' COM accelerations (K, nb, 2) and angular accelerations (K, nb) at frames 1 … T−2."""
    return (P[2:] - 2 * P[1:-1] + P[:-2]) / dt ** 2, (TH[2:] - 2 * TH[1:-1] + TH[:-2]) / dt ** 2


def _wrenches(P, TH, m, inertia, F, r, dt, g):
    """Residual force (K, 2) and moment (K,) at frames 1 … T−2, with the pieces their derivatives need."""
    A, alpha = _second_differences(P, TH, dt)
    Pk = P[1:-1]
    M = m.sum()
    S = np.einsum("i,kij->kj", m, A) - F[1:-1]  # Σ m a − F
    c = np.einsum("i,kij->kj", m, Pk) / M
    U = np.einsum("i,ki->k", m, _cross(Pk, A)) + alpha @ inertia - _cross(r[1:-1], F[1:-1])
    force = S - M * g
    moment = U - _cross(c, S)
    return force, moment, dict(A=A, alpha=alpha, S=S, c=c, Pk=Pk, M=M)


def _check_motion(nq: int, Q: ArrayLike, dt: float, who: str) -> np.ndarray:
    """``Q`` as a finite ``(T, nq)`` array with T >= 3 frames and ``dt`` a positive step, else a ValueError."""
    Q = np.asarray(Q, float)
    if Q.ndim != 2 or Q.shape[1] != nq or Q.shape[0] < 3:
        raise ValueError(f"{who}: Q must be (T, {nq}) (one column per coordinate) with T >= 3 frames, got {Q.shape}")
    if not np.all(np.isfinite(Q)):
        raise ValueError(f"{who}: Q has NaN or infinite values (frame {int(np.argwhere(~np.isfinite(Q))[0, 0])})")
    finite_number(dt, f"{who}: dt", 0, False, "a positive time step in seconds")
    return Q


def residual_wrenches(model: Model, Q: ArrayLike, dt: float, forces: ArrayLike, cop: ArrayLike, *,
                      mass_scales: Mapping[str, float] | None = None,
                      groups: Mapping[str, Sequence[str]] | None = None) -> np.ndarray:
    """Residual force and moment about the COM at every frame (module docstring).

    Parameters
    ----------
    model : Model
        A planar model with Drake kinematics (its bodies' masses and inertias are used).
    Q : (T, nq) array
        Coordinates at each frame (``model.coordinates`` order; rad, m).
    dt : float, s
        Frame interval.
    forces, cop : (T, 2) arrays
        Measured ground reaction force (N) and the centre of pressure where it acts (m); NaN rows: no data.
    mass_scales : dict of str -> float, optional
        A factor on the mass and moment of inertia of each group of bodies (``groups``; default each body its own
        group, named by the body).
    groups : dict of str -> list of body names, optional

    Returns
    -------
    (T, 3) array
        Columns F_res,x, F_res,y (N), M_res (N·m); NaN in the first and last frame and where force data are missing.
    """
    kin = _Kinematics(model, who="residual_wrenches")
    Q = _check_motion(kin.nq, Q, dt, "residual_wrenches")
    F, r, has = _check_forces(forces, cop, Q.shape[0], "residual_wrenches")
    s = _scale_per_body(kin.names, groups, mass_scales, "residual_wrenches")
    P, TH, _ = kin(Q, jacobians=False)
    g = np.asarray(model.plant.gravity_field().gravity_vector(), float)[:2]
    force, moment, _ = _wrenches(P, TH, kin.mass * s, kin.inertia * s, np.nan_to_num(F), np.nan_to_num(r), dt, g)
    out = np.full((Q.shape[0], 3), np.nan)
    out[1:-1, :2], out[1:-1, 2] = force, moment
    out[~has] = np.nan
    return out


def residual_percent(residuals: ArrayLike, forces: ArrayLike, com_height: float) -> tuple[float, float]:
    """Residuals as gait labs judge them (Hicks et al. 2015, as AddBiomechanics' scripts apply it).

    Parameters
    ----------
    residuals : (T, 3) array
        From :func:`residual_wrenches` (NaN rows ignored).
    forces : (T, 2) array, N
        The measured ground reaction forces (their peak magnitude is the reference).
    com_height : float, m
        The mean height of the COM over the trial.

    Returns
    -------
    force_percent, moment_percent : float
        100 · RMS |F_res| / peak |F| (lines at 5 % and 2 %) and 100 · RMS |M_res| / (peak |F| · com_height) (line
        at 1 %).
    """
    R, F = np.asarray(residuals, float), np.asarray(forces, float)
    if R.ndim != 2 or R.shape[1] != 3 or F.ndim != 2 or F.shape != (R.shape[0], 2):
        raise ValueError(f"residual_percent: residuals must be (T, 3) (from residual_wrenches) and forces (T, 2) "
                         f"with the same T, got {R.shape} and {F.shape}")
    finite_number(com_height, "residual_percent: com_height", 0, False, "a positive height in m")
    ok = np.all(np.isfinite(R), axis=1)
    if not ok.any():
        raise ValueError("residual_percent: no frame has finite residuals")
    peak = float(np.nanmax(np.linalg.norm(F, axis=1))) if np.isfinite(F).any() else math.nan
    if not peak > 0:
        raise ValueError(f"residual_percent: the ground reaction forces must not all be zero or NaN (peak {peak})")
    rms_f = np.sqrt(np.mean(np.sum(R[ok, :2] ** 2, axis=1)))
    rms_m = np.sqrt(np.mean(R[ok, 2] ** 2))
    return float(100 * rms_f / peak), float(100 * rms_m / (peak * com_height))


def lowpass(Q: ArrayLike, dt: float, cutoff: float = 6.0, order: int = 4) -> np.ndarray:
    """Zero-lag Butterworth low-pass filter of each column (``scipy.signal.filtfilt``; the effective order doubles,
    the cutoff is where the forward–backward gain is 1/2). 6 Hz is a common choice for walking kinematics."""
    from scipy.signal import butter, filtfilt

    Q = np.asarray(Q, float)
    finite_number(dt, "lowpass: dt", 0, False, "a positive time step in seconds")
    if Q.ndim not in (1, 2) or Q.shape[0] < 2 or not np.all(np.isfinite(Q)):
        raise ValueError(f"lowpass: Q must be (T,) or (T, k) finite values with T >= 2 frames, got shape {Q.shape}"
                         + ("" if Q.size == 0 or np.all(np.isfinite(Q)) else " with NaN or infinite values"))
    order = whole_number(order, "lowpass: order")
    cutoff = finite_number(cutoff, "lowpass: cutoff", 0, False, "a frequency in Hz > 0")
    nyquist = 0.5 / dt
    if not (0 < cutoff < nyquist):
        raise ValueError(f"lowpass: cutoff must be between 0 and the Nyquist frequency {nyquist:g} Hz, got {cutoff}")
    b, a = butter(order, cutoff / nyquist)
    return filtfilt(b, a, Q, axis=0, padtype="odd", padlen=min(3 * max(len(a), len(b)), Q.shape[0] - 1))


def segment_groups(model: Model, names: Sequence[str] = ("trunk", "thigh", "shank", "foot")) -> dict[str, list]:
    """Bodies grouped by name prefix (``thigh`` → ``thigh_r``, ``thigh_l``): the two sides of a leg share one
    mass scale, as a scaled model's segments do."""
    if isinstance(names, str):
        raise TypeError(f"segment_groups: names must be a list of segment names, got the string {names!r} (one "
                        f"segment: [{names!r}])")
    bodies = [b.name() for b in _bodies(require_model(model, "segment_groups"))]
    out = {n: [b for b in bodies if b == n or b.startswith(n + "_")] for n in names}
    empty = [n for n, v in out.items() if not v]
    if empty:
        raise KeyError(f"segment_groups: no body named {empty[0]!r} or {empty[0]}_*; bodies are {bodies}")
    return out


@dataclass
class MassFitResult:
    """:func:`fit_segment_masses`'s answer.

    Attributes
    ----------
    scales : dict of str -> float
        The factor on each group's mass and moment of inertia.
    masses : dict of str -> float, kg
        Each group's fitted total mass.
    total_mass : float, kg
    residuals : (T, 3) array
        The residual wrenches with the fitted masses.
    """

    scales: dict
    masses: dict
    total_mass: float
    residuals: np.ndarray


def group_masses(model: Model, groups: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Each group's total mass (kg) in ``model`` (e.g. the groups of :func:`segment_groups`)."""
    bodies = {b.name(): b for b in _bodies(require_model(model, "group_masses"))}
    if groups is None:
        raise TypeError("group_masses: groups must be a dict of group name -> list of body names, got None")
    groups = _check_groups(list(bodies), groups, "group_masses")
    return {k: float(sum(bodies[b].default_mass() for b in v)) for k, v in groups.items()}


def _bodies(model: Model) -> list:
    """The model's Drake bodies, in ``model.body_paths`` order."""
    return [model.plant.GetBodyByName(b) for b in model.body_paths]


def _fitted_masses(kin, G, groups, sigma) -> tuple[dict, dict, float]:
    """The group scales ``sigma`` by name, each group's mass, and the total with the bodies in no group."""
    scales = dict(zip(groups, map(float, sigma)))
    masses = {k: float(sigma[j] * kin.mass[G[:, j] > 0].sum()) for j, k in enumerate(groups)}
    return scales, masses, float(sum(masses.values()) + kin.mass[G.sum(axis=1) == 0].sum())


def _group_matrix(names, groups) -> np.ndarray:
    """Body-by-group indicator matrix of groups already checked by :func:`_check_groups`."""
    G = np.zeros((len(names), len(groups)))
    for j, bodies in enumerate(groups.values()):
        for b in bodies:
            G[names.index(b), j] = 1.0
    return G


def fit_segment_masses(model: Model, Q: ArrayLike, dt: float, forces: ArrayLike, cop: ArrayLike, *,
                       groups: Mapping[str, Sequence[str]] | None = None, moment_arm: float = 1.0) -> MassFitResult:
    """The segment masses that minimize the residuals of a fixed motion, by linear least squares.

    With the kinematics fixed, F_res and M_res are affine in the group scales σ_g (body i's mass m_i σ_g and
    moment of inertia I_i σ_g) once the moment is taken about a fixed point per frame; that point is the COM of
    the *model's* masses (the residual moment about the fitted COM differs from it by (c' − c) × F_res, which
    vanishes as the fit succeeds). Rows: each frame's two force components and its moment divided by
    ``moment_arm`` (m; e.g. the mean COM height, which weighs force and moment as the Hicks ratios do). Bodies in
    no group keep their mass. Nothing keeps the masses near the model's: with kinematic errors, a group can take
    an implausible mass (a ``ValueError`` if one comes out non-positive).

    Returns
    -------
    MassFitResult
    """
    kin = _Kinematics(model, who="fit_segment_masses")
    Q = _check_motion(kin.nq, Q, dt, "fit_segment_masses")
    F, r, has = _check_forces(forces, cop, Q.shape[0], "fit_segment_masses")
    moment_arm = finite_number(moment_arm, "fit_segment_masses: moment_arm", 0, False, "a positive length in m")
    groups = _check_groups(kin.names, groups, "fit_segment_masses")
    G = _group_matrix(kin.names, groups)
    P, TH, _ = kin(Q, jacobians=False)
    g = np.asarray(model.plant.gravity_field().gravity_vector(), float)[:2]
    F0, r0 = np.nan_to_num(F), np.nan_to_num(r)
    A, alpha = _second_differences(P, TH, dt)
    Pk = P[1:-1]
    c = np.einsum("i,kij->kj", kin.mass, Pk) / kin.mass.sum()  # fixed reference point for the moment
    # per body i, the contribution of a unit scale: force m_i (a_i − g), moment m_i (p_i − c) × (a_i − g) + I_i α_i
    ag = A - g
    f_body = kin.mass[None, :, None] * ag  # (K, nb, 2)
    m_body = kin.mass * _cross(Pk - c[:, None], ag) + kin.inertia * alpha  # (K, nb)
    ungrouped = 1.0 - G.sum(axis=1)
    ext_f = -F0[1:-1] + np.einsum("i,kij->kj", ungrouped, f_body)
    ext_m = -_cross(r0[1:-1] - c, F0[1:-1]) + m_body @ ungrouped
    rows = has[1:-1]
    Af = np.einsum("kij,ig->kjg", f_body, G)[rows].reshape(-1, G.shape[1])
    Am = (m_body @ G)[rows] / moment_arm
    A_ls = np.vstack([Af, Am])
    b_ls = -np.concatenate([ext_f[rows].reshape(-1), ext_m[rows] / moment_arm])
    sigma, *_ = np.linalg.lstsq(A_ls, b_ls, rcond=None)
    scales, masses, total = _fitted_masses(kin, G, groups, sigma)
    if any(v <= 0 for v in scales.values()):
        bad = min(scales, key=scales.get)
        raise ValueError(f"fit_segment_masses: group {bad!r} came out with a non-positive mass (scale "
                         f"{scales[bad]:.3g}); the data do not determine it: merge groups or use reduce_residuals, "
                         "whose prior keeps masses near the model's")
    R = residual_wrenches(model, Q, dt, forces, cop, mass_scales=scales, groups=groups)
    return MassFitResult(scales, masses, total, R)


@dataclass
class ResidualReduction:
    """:func:`reduce_residuals`'s answer.

    Attributes
    ----------
    q : (T, nq) array
        The adjusted coordinates (``model.coordinates`` order).
    coordinates : dict of str -> (T,) array
    scales, masses : dict of str -> float
        Each group's mass factor and fitted mass (kg).
    total_mass : float, kg
    residuals : (T, 3) array
        Residual force (N) and moment (N·m) with the adjusted motion and masses.
    marker_errors : (T, M) array, m
        Distance of each model marker from its measurement (NaN where missing).
    marker_rmse, marker_max : float, m
    success : bool
        The solver's verdict.
    status : str
        IPOPT's status (``"Solve_Succeeded"``, ...), or ``"Gauss-Newton converged"`` / ``"Gauss-Newton did not
        converge in N iterations"``.
    iterations : int
    objective : float
        The MAP objective (sum of squared normalized terms) at the answer.
    """

    q: np.ndarray
    coordinates: dict
    scales: dict
    masses: dict
    total_mass: float
    residuals: np.ndarray
    marker_errors: np.ndarray
    marker_rmse: float
    marker_max: float
    success: bool
    status: str
    iterations: int
    objective: float


class _MapProblem:
    """Residual vector r(x) and its sparse Jacobian for x = [q_0 … q_{T−1}, σ_1 … σ_G]."""

    def __init__(self, kin, Y, valid, F, r, has, dt, g, G, noise, force_sd, moment_sd, mass_sd, acc_sd=None,
                 smooth=None):
        self.kin, self.Y, self.valid, self.F, self.r, self.has = kin, Y, valid, F, r, has
        # acceleration prior on the interior frames flagged in `smooth` (default all), sd acc_sd
        self.acc_sd = acc_sd
        self.smooth = np.ones(Y.shape[0] - 2, bool) if smooth is None else np.asarray(smooth, bool)
        self.dt, self.g, self.G = dt, g, G
        self.noise, self.force_sd, self.moment_sd, self.mass_sd = noise, force_sd, moment_sd, mass_sd
        self.T, self.nq, self.ng = Y.shape[0], kin.nq, G.shape[1]
        self.ungrouped = 1.0 - G.sum(axis=1)

    def split(self, x):
        return x[:self.T * self.nq].reshape(self.T, self.nq), x[self.T * self.nq:]

    def residuals(self, x, jac: bool):
        kin, T, nq, ng, dt = self.kin, self.T, self.nq, self.ng, self.dt
        Q, sigma = self.split(x)
        out = kin(Q, jacobians=jac)
        P, TH, PM = out[:3]
        s_body = self.G @ sigma + self.ungrouped
        m, inertia = kin.mass * s_body, kin.inertia * s_body
        force, moment, aux = _wrenches(P, TH, m, inertia, self.F, self.r, dt, self.g)
        rows = self.has[1:-1]
        r_marker = np.where(self.valid[..., None], (PM - self.Y) / self.noise, 0.0).reshape(-1)
        parts = [r_marker, (force[rows] / self.force_sd).reshape(-1), moment[rows] / self.moment_sd]
        if self.acc_sd:
            qdd = (Q[2:] - 2 * Q[1:-1] + Q[:-2]) / dt ** 2
            parts.append((qdd[self.smooth] / self.acc_sd).reshape(-1))
        r = np.concatenate(parts + [(sigma - 1.0) / self.mass_sd])
        if not jac:
            return r, None
        JP, JT, JM = out[3:]
        M_ = len(kin.markers)
        # marker rows: d/dq_t
        Jm = np.where(self.valid[..., None, None], JM / self.noise, 0.0)  # (T, M, 2, nq)
        rr = np.arange(T * M_ * 2).reshape(T, M_ * 2)
        rows_m = np.repeat(rr[:, :, None], nq, axis=2)
        cols_m = np.broadcast_to((np.arange(T)[:, None, None] * nq + np.arange(nq)[None, None, :]),
                                 (T, M_ * 2, nq))
        vals_m = Jm.reshape(T, M_ * 2, nq)
        # dynamics rows at frame k (1 … T−2) with neighbours j = k−1, k, k+1, weights w_j / dt²
        K = T - 2
        A, S, c, Pk, Mtot = aux["A"], aux["S"], aux["c"], aux["Pk"], aux["M"]
        w = np.array([1.0, -2.0, 1.0]) / dt ** 2
        dF = np.zeros((K, 2, 3, nq))  # force rows wrt q_{k-1+j}
        dM = np.zeros((K, 3, nq))
        for j in range(3):
            Jj = JP[j:j + K]  # (K, nb, 2, nq) at frame k−1+j
            dA = w[j] * Jj  # derivative of a_i wrt q_{k−1+j}
            dS = np.einsum("i,kidq->kdq", m, dA)
            dF[:, :, j] = dS
            dU = np.einsum("i,kiq->kq", m, Pk[:, :, 0, None] * dA[:, :, 1] - Pk[:, :, 1, None] * dA[:, :, 0])
            dU += w[j] * np.einsum("i,kiq->kq", inertia, JT[j:j + K])
            dcS = c[:, 0, None] * dS[:, 1] - c[:, 1, None] * dS[:, 0]
            if j == 1:  # p_i[k] and c move with q_k
                Jk = JP[1:-1]
                dU += np.einsum("i,kiq->kq", m, Jk[:, :, 0] * A[:, :, 1, None] - Jk[:, :, 1] * A[:, :, 0, None])
                dc = np.einsum("i,kidq->kdq", m, Jk) / Mtot
                dcS += dc[:, 0] * S[:, 1, None] - dc[:, 1] * S[:, 0, None]
            dM[:, j] = dU - dcS
        # wrt the group scales
        dm_body = kin.mass[:, None] * self.G  # (nb, ng)
        dI_body = kin.inertia[:, None] * self.G
        dS_s = np.einsum("kid,ig->kdg", A, dm_body)
        dF_s = dS_s - self.g[None, :, None] * dm_body.sum(axis=0)[None, None, :]
        dMass = dm_body.sum(axis=0)
        dc_s = (np.einsum("kid,ig->kdg", Pk, dm_body) - c[:, :, None] * dMass[None, None, :]) / Mtot
        dU_s = np.einsum("ki,ig->kg", _cross(Pk, A), dm_body) + np.einsum("ki,ig->kg", aux["alpha"], dI_body)
        dM_s = dU_s - (dc_s[:, 0] * S[:, 1, None] - dc_s[:, 1] * S[:, 0, None]) \
            - (c[:, 0, None] * dS_s[:, 1] - c[:, 1, None] * dS_s[:, 0])
        n_marker = T * M_ * 2
        ks = np.nonzero(rows)[0]
        nk = ks.size
        row_f = n_marker + np.arange(nk * 2).reshape(nk, 2)
        row_mo = n_marker + 2 * nk + np.arange(nk)
        qcols = ((ks[:, None] + np.arange(3)[None, :])[:, :, None] * nq + np.arange(nq)[None, None, :])  # (nk, 3, nq)
        rows_l, cols_l, vals_l = [rows_m.reshape(-1)], [cols_m.reshape(-1)], [vals_m.reshape(-1)]
        for d in range(2):
            rows_l.append(np.broadcast_to(row_f[:, d, None, None], (nk, 3, nq)).reshape(-1))
            cols_l.append(qcols.reshape(-1))
            vals_l.append((dF[ks, d] / self.force_sd).reshape(-1))
            rows_l.append(np.repeat(row_f[:, d], ng))
            cols_l.append(np.tile(T * nq + np.arange(ng), nk))
            vals_l.append((dF_s[ks, d] / self.force_sd).reshape(-1))
        rows_l.append(np.broadcast_to(row_mo[:, None, None], (nk, 3, nq)).reshape(-1))
        cols_l.append(qcols.reshape(-1))
        vals_l.append((dM[ks] / self.moment_sd).reshape(-1))
        rows_l.append(np.repeat(row_mo, ng))
        cols_l.append(np.tile(T * nq + np.arange(ng), nk))
        vals_l.append((dM_s[ks] / self.moment_sd).reshape(-1))
        n_rows = n_marker + 3 * nk
        if self.acc_sd:
            ka = np.nonzero(self.smooth)[0]
            row_a = n_rows + np.arange(ka.size * nq).reshape(ka.size, nq)
            for j, wj in enumerate((1.0, -2.0, 1.0)):
                rows_l.append(row_a.reshape(-1))
                cols_l.append(((ka[:, None] + j) * nq + np.arange(nq)[None, :]).reshape(-1))
                vals_l.append(np.full(ka.size * nq, wj / (dt ** 2 * self.acc_sd)))
            n_rows += ka.size * nq
        rows_l.append(n_rows + np.arange(ng))
        cols_l.append(T * nq + np.arange(ng))
        vals_l.append(np.full(ng, 1.0 / self.mass_sd))
        J = sparse.csr_matrix((np.concatenate(vals_l), (np.concatenate(rows_l), np.concatenate(cols_l))),
                              shape=(n_rows + ng, x.size))
        return r, J


def reduce_residuals(model: Model, markers: Sequence[Marker], data: Mapping[str, ArrayLike], Q: ArrayLike,
                     dt: float, forces: ArrayLike, cop: ArrayLike, *,
                     groups: Mapping[str, Sequence[str]] | None = None, noise: float = 0.005,
                     force_sd: float = 5.0, moment_sd: float = 2.0, mass_sd: float = 0.2,
                     acceleration_sd: float | None = 100.0, mass_scales: Mapping[str, float] | None = None,
                     method: str = "gauss-newton", settings: SolverSettings | None = None,
                     progress: Callable[[Progress], None] | None = None) -> ResidualReduction:
    """Adjust segment masses and every frame's coordinates together so that markers and forces agree (module
    docstring): the maximum-a-posteriori problem ::

        min_{q_0..q_{T−1}, σ}  Σ_t Σ_m |p_m(q_t) − y_tm|² / noise²  +  Σ_k |F_res,k|² / force_sd²
                               + Σ_k M_res,k² / moment_sd²  +  Σ_k |q̈_k|² / acceleration_sd²
                               + Σ_g (σ_g − 1)² / mass_sd²

    from ``Q`` and the model's masses (times ``mass_scales`` if given, e.g. from :func:`fit_segment_masses`; the
    prior stays at the model's), by one of two methods on the same exact, sparse Jacobian of the normalized terms:

    * ``"gauss-newton"`` (default): damped Gauss–Newton (Levenberg–Marquardt,
      :func:`~moco_lab.tools.gauss_newton.constrained_least_squares`), which takes JᵀJ as the Hessian of a sum of
      squares and solves each step's sparse normal equations directly: a handful of iterations, well under a second
      for a stride at 100 Hz;
    * ``"ipopt"``: AddBiomechanics' way, IPOPT on a Drake ``MathematicalProgram``, each term lifted into a variable
      ``e_i = r_i(q, σ)`` with the cost Σ e_i² (the stiff second differences then sit in constraint Jacobians that
      IPOPT linearizes exactly): about ten iterations, but one Python callback per frame and a limited-memory
      Hessian make it 10–25× slower. The same minimum to the solvers' tolerances (tested).

    Parameters
    ----------
    model : Model
        The subject's (scaled) planar model.
    markers : sequence of Marker
        Its registered markers (e.g. :func:`~moco_lab.tools.scaling.scale_and_track`'s); each needs data.
    data : dict of str -> (T, 2) array, m
        Measured marker positions (NaN: missing).
    Q : (T, nq) array
        Starting coordinates, e.g. inverse kinematics, filtered.
    dt : float, s
    forces, cop : (T, 2) arrays
        Measured ground reaction force (N) and centre of pressure (m); NaN rows: no force data (no residual terms).
    groups : dict of str -> list of body names, optional
        Bodies whose masses scale together (default: each body alone; :func:`segment_groups` pairs the legs).
    noise, force_sd, moment_sd, mass_sd : float
        Marker noise (m), the residual force (N) and moment (N·m) the fit tolerates, and the prior width of each
        mass factor (relative).
    acceleration_sd : float or None
        The smoothing term: a zero-mean prior on every coordinate's acceleration (second difference; rad/s² for
        angles, m/s² for translations) with this standard deviation; smaller is smoother. None: no smoothing term
        (the joints not held by the residuals then follow the markers' noise as inverse kinematics does). The
        default 100 rad/s² is about the peak of walking's joint accelerations.
    method : {"gauss-newton", "ipopt"}
        The solver (above).
    settings : SolverSettings, optional
        ``"ipopt"``: default IPOPT, tolerance 1e-6, at most 500 iterations. ``"gauss-newton"``: only
        ``optim_max_iterations`` applies (default 50); it stops when a step changes the objective by less than 1e-10
        relative.
    progress : callable, optional
        Called with :class:`~moco_lab.solve.optimizer.Progress` every iteration, its ``objective`` the sum of squares
        of the normalized terms (as :attr:`ResidualReduction.objective`).

    Returns
    -------
    ResidualReduction
    """
    markers = marker_list(markers, "reduce_residuals")
    kin = _Kinematics(model, markers, "reduce_residuals")
    Q = _check_motion(kin.nq, Q, dt, "reduce_residuals")
    if method not in _METHODS:
        raise ValueError("reduce_residuals: " + did_you_mean(str(method), _METHODS, "method"))
    if settings is not None and not isinstance(settings, SolverSettings):
        raise TypeError(f"reduce_residuals: settings must be a SolverSettings or None, got {type(settings).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"reduce_residuals: progress must be a function of a Progress, got {type(progress).__name__}")
    if not isinstance(data, Mapping):
        raise TypeError(f"reduce_residuals: data must be a dict of marker name -> (T, 2) array, got "
                        f"{type(data).__name__}")
    T = Q.shape[0]
    for label, value in (("noise", noise), ("force_sd", force_sd), ("moment_sd", moment_sd), ("mass_sd", mass_sd),
                         ("acceleration_sd", 1.0 if acceleration_sd is None else acceleration_sd)):
        finite_number(value, f"reduce_residuals: {label}", 0, False)
    missing = [m.name for m in markers if m.name not in data]
    if missing:
        raise KeyError(f"reduce_residuals: no data for marker {missing[0]!r}")
    columns = []
    for m in markers:
        y = np.asarray(data[m.name], float)
        if y.ndim != 2 or y.shape[0] != T or y.shape[1] not in (2, 3):
            raise ValueError(f"reduce_residuals: the data of marker {m.name!r} must be (T, 2) or (T, 3) with T = {T} "
                             f"frames (one per row of Q), got shape {y.shape}")
        columns.append(y[:, :2])
    Y = np.stack(columns, axis=1)
    F, r, has = _check_forces(forces, cop, T, "reduce_residuals")
    groups = _check_groups(kin.names, groups, "reduce_residuals")
    mass_scales = _check_scales(groups, mass_scales, "reduce_residuals")
    G = _group_matrix(kin.names, groups)
    g = np.asarray(model.plant.gravity_field().gravity_vector(), float)[:2]
    valid = np.all(np.isfinite(Y), axis=2)
    Y0, F0, r0 = np.nan_to_num(Y), np.nan_to_num(F), np.nan_to_num(r)
    problem = _MapProblem(kin, Y0, valid, F0, r0, has, dt, g, G, noise, force_sd, moment_sd, mass_sd,
                          acceleration_sd)
    sigma0 = np.array([float((mass_scales or {}).get(k, 1.0)) for k in groups])
    x0 = np.concatenate([Q.reshape(-1), sigma0])
    if method == "gauss-newton":
        xs, success, status, iterations = _gauss_newton(problem, x0, settings, progress)
    else:
        xs, success, status, iterations = _ipopt(problem, x0, settings, progress)
    res, _ = problem.residuals(xs, False)
    Qs, sigma = problem.split(xs)
    scales, masses, total = _fitted_masses(kin, G, groups, sigma)
    R = residual_wrenches(model, Qs, dt, forces, cop, mass_scales=scales, groups=groups)
    _, _, PM = kin(Qs, jacobians=False)
    ik = ik_result(model, Qs, np.where(valid, np.linalg.norm(PM - np.nan_to_num(Y), axis=2), np.nan),
                   [m.name for m in markers], success)
    return ResidualReduction(Qs, ik.coordinates, scales, masses, total, R, ik.errors, ik.rmse, ik.max_error,
                             success, status, iterations, float(res @ res))


_METHODS = ("gauss-newton", "ipopt")
#: (bounds of the mass factors: masses stay positive and finite)
_SIGMA_BOUNDS = (0.05, 20.0)


def _gauss_newton(problem: _MapProblem, x0: np.ndarray, settings: SolverSettings | None,
                  progress: Callable[[Progress], None] | None) -> tuple[np.ndarray, bool, str, int]:
    """:func:`reduce_residuals` by damped Gauss–Newton on the whole trial's sparse Jacobian."""
    from .gauss_newton import constrained_least_squares

    n, nqT = x0.size, problem.T * problem.nq
    empty = sparse.csr_matrix((0, n))

    def evaluate(x: np.ndarray) -> tuple:
        r, J = problem.residuals(x, True)
        return r, J, np.zeros(0), empty, None

    terms = SimpleNamespace(x0=x0, evaluate=evaluate,
                            lower=np.r_[np.full(nqT, -np.inf), np.full(n - nqT, _SIGMA_BOUNDS[0])],
                            upper=np.r_[np.full(nqT, np.inf), np.full(n - nqT, _SIGMA_BOUNDS[1])])
    report = None
    if progress is not None:  # the solver's objective is ½|r|²; report |r|², as IPOPT's and the result's

        def report(p: Progress) -> None:
            progress(Progress(p.iteration, 2.0 * p.objective, p.constraint_violation, p.elapsed))
    iterations = (settings.optim_max_iterations if settings is not None else None) or 50
    answer = constrained_least_squares(terms, max_iterations=iterations, progress=report, who="reduce_residuals")
    status = ("Gauss-Newton converged" if answer.success
              else f"Gauss-Newton did not converge in {answer.iterations} iterations")
    return answer.x, answer.success, status, answer.iterations


def _ipopt(problem: _MapProblem, x0: np.ndarray, settings: SolverSettings | None,
           progress: Callable[[Progress], None] | None) -> tuple[np.ndarray, bool, str, int]:
    """:func:`reduce_residuals` by IPOPT on a Drake ``MathematicalProgram``, each term lifted into a variable."""
    from pydrake.solvers import MathematicalProgram

    from ..engine.callbacks import drake_callable

    kin, Y0, F0, r0, dt, g, G = problem.kin, problem.Y, problem.F, problem.r, problem.dt, problem.g, problem.G
    valid, has = problem.valid, problem.has
    T, nq, ng, M = problem.T, problem.nq, problem.ng, len(kin.markers)
    acceleration_sd = problem.acc_sd
    Q = x0[:T * nq].reshape(T, nq)
    sigma0 = x0[T * nq:]

    # Lifted least squares: each normalized term r_i(q, σ) gets a variable e_i with the constraint e_i = r_i and
    # the cost Σ e_i² + Σ ((σ_g − 1)/mass_sd)². IPOPT (in Drake, a limited-memory Hessian) then sees the problem's
    # stiffness (second differences over Δt²) only in constraint Jacobians, which are exact, and a cost whose
    # Hessian is a multiple of the identity, which its quasi-Newton update learns at once: ~10–20 iterations
    # instead of thousands with the same terms summed in one cost.
    def window(t: int) -> tuple[_MapProblem, slice, int]:
        """The problem restricted to frame t's terms: its markers and (interior frames) its residual wrench."""
        lo, hi = max(t - 1, 0), min(t + 2, T)
        mask = np.zeros((hi - lo, M), bool)
        mask[t - lo] = valid[t]
        hw = np.zeros(hi - lo, bool)
        interior = 0 < t < T - 1
        if interior:
            hw[1] = has[t]
        smooth = np.array([interior]) if hi - lo == 3 else np.zeros(max(hi - lo - 2, 0), bool)
        sub = _MapProblem(kin, Y0[lo:hi], mask, F0[lo:hi], r0[lo:hi], hw, dt, g, G, problem.noise,
                          problem.force_sd, problem.moment_sd, problem.mass_sd, acceleration_sd, smooth)
        return sub, slice(lo, hi), t - lo

    def frame_rows(sub, local, n_frames):
        markers_rows = np.arange(local * 2 * M, (local + 1) * 2 * M)
        n_extra = 3 * int(sub.has.sum()) + (nq * int(sub.smooth.sum()) if acceleration_sd else 0)
        extra = np.arange(n_frames * 2 * M, n_frames * 2 * M + n_extra)
        return np.concatenate([markers_rows, extra])

    prog = MathematicalProgram()
    xq = prog.NewContinuousVariables(T * nq + ng, "x")
    sig_vars = xq[T * nq:]
    e_all, e0_all = [], []
    for t in range(T):
        sub, sl, local = window(t)
        n_frames = sl.stop - sl.start
        rows = frame_rows(sub, local, n_frames)
        xw = np.concatenate([Q[sl].reshape(-1), sigma0])
        rw, _ = sub.residuals(xw, False)
        e = prog.NewContinuousVariables(rows.size, f"e{t}")
        vars_t = np.concatenate([xq[sl.start * nq:sl.stop * nq], sig_vars, e])

        def con(z, jac, sub=sub, rows=rows, nw=xw.size, ne=rows.size):
            r_, J_ = sub.residuals(z[:nw], jac)
            val = r_[rows] - z[nw:]
            if not jac:
                return val, None
            return val, np.hstack([J_[rows].toarray(), -np.eye(ne)])

        prog.AddConstraint(drake_callable(con, scalar=False), np.zeros(rows.size), np.zeros(rows.size), vars_t,
                           description=f"terms of frame {t}")
        prog.AddQuadraticCost(2.0 * np.eye(e.size), np.zeros(e.size), e, is_convex=True)
        e_all.append(e)
        e0_all.append(rw[rows])
    e_all = np.concatenate(e_all)
    w_mass = 1.0 / problem.mass_sd ** 2
    prog.AddQuadraticCost(2.0 * w_mass * np.eye(ng), -2.0 * w_mass * np.ones(ng), w_mass * ng, sig_vars,
                          is_convex=True)  # Σ ((σ_g − 1)/mass_sd)², its constant included
    prog.AddBoundingBoxConstraint(*_SIGMA_BOUNDS, sig_vars)  # masses stay positive
    prog.SetInitialGuess(xq, x0)
    prog.SetInitialGuess(e_all, np.concatenate(e0_all))
    settings = settings or SolverSettings(optim_convergence_tolerance=1e-6, optim_max_iterations=500)
    run = run_optimizer(prog, settings, progress)
    return run.x[:T * nq + ng], run.success, run.status, run.nit
