"""The residual wrench at a model's root over a measured motion, and the segment masses that reduce it — on any
model the engine derives, OpenSim's 3-D CustomJoint models included (lesson 17; lesson 14's planar tools, which
read Drake's kinematics, are in :mod:`moco_lab.tools.residual_reduction`).

Inverse dynamics with the measured ground reaction forces applied (:func:`~moco_lab.tools.inverse_dynamics.
inverse_dynamics`) leaves generalized forces on the root's coordinates (the pelvis's six) that nothing in the lab
supplied. As a load, they are the **residual wrench**: the reaction the root joint would have to transmit from the
ground to the whole body,

    F_res = Σ_i m_i a_i − M g − F_ext,        M_res = Σ_i [ḣ_i + (p_i − o) × m_i (a_i − g)] − M_ext,o,

about the origin ``o`` of the root joint's frame on its child body (the pelvis), in ground axes — the engine's
joint reaction of that joint (``SymbolicSystem.add_joint_reaction_output``, checked against OpenSim's
``Joint::calcReactionOnChildExpressedInGround`` elsewhere) on the model without muscles or actuators
(:func:`root_residual`). Its force equals the translational root coordinates' generalized forces when those
translate along ground axes (the pelvis's do).

**Segment masses.** A segment's mass is adjusted as the same segment made denser: its rotational inertia scales
with its mass and its centre of mass stays where it is (the model property ``<body>/mass_scale``, as Drake's
``SetMass`` scales a body; OpenSim's ``mass`` property, ``Body::setMass`` and Moco's mass parameters keep the
inertia instead). With the motion fixed, the wrench is then *linear* in the body masses (a body's inertial load
``m_i (a_i − g)`` and ``ḣ_i`` both scale), and each body's share is computed exactly from the engine's equations
with the factors as parameters. Bodies are grouped (by default the two sides of a
segment share one factor: ``femur_r`` and ``femur_l`` → ``femur``), and the group factors σ are the maximum-a-
posteriori estimate of

    Σ_frames |F_res(σ)|² / (s_F W)² + |M_res(σ)|² / (s_F W h)² + Σ_groups (σ_g − 1)² / s_m²

(W the model's weight, h its mean centre-of-mass height, ``s_F = residual_sd``, ``s_m = mass_sd``), one linear
least-squares problem with bounds on σ (positive masses), optionally with the total mass held
(:func:`fit_segment_masses_to_residual`). The prior matters: the residual also holds the kinematics' errors, which
the masses alone cannot explain and will otherwise absorb (small segments then take implausible, even negative,
masses).

**Masses and kinematics together** (:func:`reduce_root_residual`, AddBiomechanics' dynamics pass): every frame's
coordinates become unknowns too, the residual of each frame computed from central differences of them, traded
against the markers' errors and the priors in one sparse least-squares problem
(:mod:`moco_lab.tools.gauss_newton`).

Arrays follow :class:`~moco_lab.tools.inverse_dynamics.IDResult`: rows are its sample times.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..modeling.model import Model, require_model
from ..solve.optimizer import Progress
from ..util.checks import finite_number
from ..util.names import did_you_mean
from .gauss_newton import constrained_least_squares, frame_rows
from .inverse_dynamics import IDResult
from .marker_ik import Marker, MarkerKinematics, clamped_bounds, marker_arrays, marker_list

__all__ = ["RootResidual", "root_joint", "root_residual", "side_groups", "factor_bounds", "MassFactors", "SegmentMassFit",
           "fit_segment_masses_to_residual", "KinematicsMassFit", "reduce_root_residual"]


@dataclass
class RootResidual:
    """The residual wrench over a motion.

    Attributes
    ----------
    time : (n,) array, s
    moment : (n, 3) array, N·m
        About the root joint's frame origin on its child body, ground axes.
    force : (n, 3) array, N
        Ground axes (OpenSim's: x forward, y up, z right).
    body_weight : float, N
        The weight of the masses the wrench was computed with.
    com_height : float, m
        The mean height of the whole-body centre of mass over these frames (the moment's reference length, as
        gait labs judge residual moments, Hicks et al. 2015).
    joint : str
        The root joint's path.
    """

    time: np.ndarray
    moment: np.ndarray
    force: np.ndarray
    body_weight: float
    com_height: float
    joint: str

    def force_percent(self) -> np.ndarray:
        """|F_res| in % of the body weight at each frame (gait labs' lines: 5 %, 2 %, 1 %)."""
        return 100.0 * np.linalg.norm(self.force, axis=1) / self.body_weight

    def moment_percent(self) -> np.ndarray:
        """|M_res| in % of the body weight times the centre-of-mass height at each frame."""
        return 100.0 * np.linalg.norm(self.moment, axis=1) / (self.body_weight * self.com_height)

    def summary(self) -> dict[str, float]:
        """RMS and largest of :meth:`force_percent` and :meth:`moment_percent` (keys ``force_rms``,
        ``force_max``, ``moment_rms``, ``moment_max``)."""
        f, m = self.force_percent(), self.moment_percent()
        return {"force_rms": float(np.sqrt(np.mean(f ** 2))), "force_max": float(f.max()),
                "moment_rms": float(np.sqrt(np.mean(m ** 2))), "moment_max": float(m.max())}


def root_joint(model: Model) -> str:
    """Path of the one joint that connects the model's bodies to the ground and has coordinates (the pelvis's
    ``/jointset/ground_pelvis``); a ``ValueError`` names them if there are several or none."""
    plant = require_model(model, "root_joint").plant
    world = plant.world_body().index()
    by_q = {c.q_index: c.joint_path for c in model.coordinates}
    roots = sorted({by_q[j.position_start()] for j in (plant.get_joint(i) for i in plant.GetJointIndices())
                    if j.parent_body().index() == world and j.num_positions() and j.position_start() in by_q})
    if len(roots) != 1:
        raise ValueError(f"root residual: the model must hang from the ground by one joint with coordinates (a "
                         f"floating base such as OpenSim's ground_pelvis); it has {roots or 'none'}")
    return roots[0]


def _window(result: IDResult, window: tuple[float, float] | None) -> np.ndarray:
    if not isinstance(result, IDResult):
        raise TypeError(f"root residual: dynamics must be an IDResult (from inverse_dynamics), got "
                        f"{type(result).__name__}")
    return _rows_in(result.time, window)


def _rows_in(time: np.ndarray, window: tuple[float, float] | None) -> np.ndarray:
    """The frames of ``time`` within ``window`` (all if None); at least 2."""
    if window is None:
        return np.ones(time.size, bool)
    lo, hi = (finite_number(v, "root residual: window", what="a time in s") for v in window)
    inside = (time >= lo) & (time <= hi)
    if inside.sum() < 2:
        raise ValueError(f"root residual: the window ({lo:g}, {hi:g}) s holds {int(inside.sum())} of the motion's "
                         f"frames ({time[0]:g} to {time[-1]:g} s); it needs at least 2")
    return inside


class _Evaluator:
    """The residual wrench of a model without muscles or actuators, with every body's mass a parameter."""

    def __init__(self, model: Model):
        from ..engine.kernel import kernel_for

        self.model = model
        self.joint = root_joint(model)
        skeleton = model.skeleton(elements=True, constraints=False)
        props = skeleton.properties()
        mass_paths = [p for p, v in props.items() if v.kind == "body_mass"]
        self.bodies = [props[p].target for p in mass_paths]
        self.mass = np.array([props[p].default for p in mass_paths])
        # the parameters: a body's mass and rotational inertia scaled together (``<body>/mass_scale``, a factor
        # of the model's values), a massless body's mass in kg (it has no inertia to scale)
        self.paths = [p + "_scale" if m > 0 else p for p, m in zip(mass_paths, self.mass)]
        self.unit = np.where(self.mass > 0, self.mass, 1.0)  # kg per unit of each parameter
        self.kernel = kernel_for(skeleton, tuple(self.paths))
        self.output = self.kernel.system.add_joint_reaction_output(self.joint, "child", "ground")
        self.gravity = float(np.linalg.norm(skeleton.tree().gravity))

    def masses(self, masses: Mapping[str, float] | None, who: str) -> np.ndarray:
        """The model's body masses with ``masses`` (by body name, kg) in place of some."""
        out = self.mass.copy()
        for name, value in (masses or {}).items():
            if name not in self.bodies:
                raise KeyError(f"{who}: masses: " + did_you_mean(name, self.bodies, "body"))
            out[self.bodies.index(name)] = finite_number(value, f"{who}: the mass of {name!r}", 0, False,
                                                         "a positive mass in kg")
        return out

    def parameters(self, masses: np.ndarray) -> np.ndarray:
        """The kernel's parameter row (1, nb) for body ``masses`` (kg)."""
        return (np.asarray(masses, float) / self.unit)[None, :]

    def wrench(self, motion: tuple, masses: np.ndarray) -> tuple[np.ndarray, float]:
        """(n, 6): moment, force over ``motion = (time, q, u, a)`` (n rows each) with body ``masses``; and the mean
        COM height (m)."""
        t, Q, U, A = motion
        out = self.kernel.outputs([self.output, "/com_position"], Q, U, P=self.parameters(masses), A=A,
                                  E=self.kernel.inputs_at(t))
        return out[self.output], float(np.mean(out["/com_position"][:, 1]))

    def residual(self, motion: tuple, masses: np.ndarray) -> RootResidual:
        w, height = self.wrench(motion, masses)
        return RootResidual(np.array(motion[0], float), w[:, :3].copy(), w[:, 3:].copy(),
                            float(masses.sum() * self.gravity), height, self.joint)

    def shares(self, motion: tuple) -> tuple[RootResidual, np.ndarray]:
        """The residual at the model's masses and each body's share of its wrench (nb, n, 6): the wrench is linear
        in the masses, so a body's share is the change when its mass doubles (exact to round-off)."""
        base = self.residual(motion, self.mass)
        wrench = np.hstack([base.moment, base.force])
        shares = []
        for i in range(self.mass.size):
            m = self.mass.copy()
            m[i] *= 2.0
            shares.append(self.wrench(motion, m)[0] - wrench)
        return base, np.array(shares)


def _motion(result: IDResult, rows: np.ndarray) -> tuple:
    """``(time, q, u, a)`` of ``result`` at ``rows``."""
    return result.time[rows], result.q[rows], result.u[rows], result.a[rows]


def root_residual(model: Model, dynamics: IDResult, *, window: tuple[float, float] | None = None,
                  masses: Mapping[str, float] | None = None) -> RootResidual:
    """The residual wrench (module docstring) of the motion ``dynamics`` was computed for.

    Parameters
    ----------
    model : Model
        The model the inverse dynamics used, its external loads applied.
    dynamics : IDResult
        From :func:`~moco_lab.tools.inverse_dynamics.inverse_dynamics` (its filtered ``q`` and the spline's ``u``,
        ``a`` are used).
    window : (start, end), s, optional
        Only the frames in it (e.g. where force plates measure every foot on the ground).
    masses : dict of str -> float, kg, optional
        Body masses by name that replace the model's (inertias scaled with them), e.g. ``SegmentMassFit.body_masses``.
    """
    require_model(model, "root_residual")
    rows = _window(dynamics, window)
    ev = _Evaluator(model)
    return ev.residual(_motion(dynamics, rows), ev.masses(masses, "root_residual"))


def side_groups(model: Model) -> dict[str, list[str]]:
    """The model's bodies grouped by name with the side suffix ``_r`` / ``_l`` removed (``femur`` → ``femur_r``,
    ``femur_l``; ``pelvis`` → ``pelvis``), in body order: the groups a scaled model's segments form."""
    groups: dict[str, list[str]] = {}
    for b in require_model(model, "side_groups").body_paths:
        stem = b[:-2] if b.endswith(("_r", "_l")) else b
        groups.setdefault(stem, []).append(b)
    return groups


@dataclass
class MassFactors:
    """The fitted segment masses (both fits' answers hold them).

    Attributes
    ----------
    groups : dict of str -> list of str
        The bodies of each group.
    scales : dict of str -> float
        The factor on each group's masses and inertias.
    masses : dict of str -> float, kg
        Each group's fitted mass.
    body_masses : dict of str -> float, kg
        Every body's fitted mass (bodies in no group keep theirs).
    total_mass : float, kg
    at_bounds : list of str
        The groups whose factor sits on a bound of ``scale_bounds``.
    """

    groups: dict
    scales: dict
    masses: dict
    body_masses: dict
    total_mass: float
    at_bounds: list


@dataclass
class SegmentMassFit(MassFactors):
    """:func:`fit_segment_masses_to_residual`'s answer: the :class:`MassFactors` and

    Attributes
    ----------
    before, after : RootResidual
        The residual wrench with the model's masses and with the fitted ones.
    """

    before: RootResidual
    after: RootResidual


def factor_bounds(scale_bounds: tuple[float, float], who: str, meaning: str = "the model's masses") -> tuple[float, float]:
    """Checked ``(lower, upper)`` bounds of fitted factors: positive, finite, with 1 (``meaning``) inside."""
    try:
        values = tuple(scale_bounds)
    except TypeError:
        values = ()
    if len(values) != 2:
        raise ValueError(f"{who}: scale_bounds must be (lower, upper) factors, got {scale_bounds!r}")
    lower, upper = (finite_number(v, f"{who}: scale_bounds", 0, False, "positive factors") for v in values)
    if not lower < 1.0 < upper:
        raise ValueError(f"{who}: scale_bounds must hold 1 ({meaning}) inside: lower < 1 < upper, got "
                         f"{values}")
    return lower, upper


def _group_matrix(model: Model, ev: _Evaluator, groups: Mapping[str, Sequence[str]] | None,
                  who: str) -> tuple[dict[str, list[str]], np.ndarray]:
    """The groups checked (default :func:`side_groups`) and the body-by-group indicator matrix (nb, ng)."""
    groups = {str(k): list(v) if not isinstance(v, str) else v
              for k, v in (side_groups(model) if groups is None else groups).items()}
    seen: dict[str, str] = {}
    for g, bodies in groups.items():
        if isinstance(bodies, str) or not bodies:
            raise ValueError(f"{who}: group {g!r} must be a non-empty list of body names, got {bodies!r}")
        for b in bodies:
            if b not in ev.bodies:
                raise KeyError(f"{who}: group {g!r}: " + did_you_mean(b, ev.bodies, "body"))
            if b in seen:
                raise ValueError(f"{who}: body {b!r} is in groups {seen[b]!r} and {g!r}")
            seen[b] = g
    G = np.array([[1.0 if ev.bodies[i] in groups[g] else 0.0 for g in groups] for i in range(len(ev.bodies))])
    return groups, G


def fit_segment_masses_to_residual(model: Model, dynamics: IDResult, *, window: tuple[float, float] | None = None,
                                   groups: Mapping[str, Sequence[str]] | None = None, mass_sd: float = 0.1,
                                   residual_sd: float = 0.01, total_mass: float | None = None,
                                   scale_bounds: tuple[float, float] = (0.5, 2.0)) -> SegmentMassFit:
    """The segment masses that best explain the measured forces of a fixed motion (module docstring).

    Parameters
    ----------
    model : Model
        The model the inverse dynamics used, its external loads applied.
    dynamics : IDResult
        The motion (its filtered coordinates, speeds and accelerations).
    window : (start, end), s, optional
        The frames to fit (where the force plates see every foot that touches the ground: elsewhere the residual
        is the weight the plates miss, which no mass can explain).
    groups : dict of str -> list of body names, optional
        Bodies whose masses share one factor. Default :func:`side_groups` (every body in a group).
    mass_sd : float
        Prior standard deviation of each factor about 1 (0.1: a segment's mass known to about 10 %).
    residual_sd : float
        Allowed residual per frame and axis, as a fraction of the body weight (moments: of the body weight times
        the centre-of-mass height).
    total_mass : float, optional
        Hold the total mass (kg) at this value (e.g. the mass the force plates weigh,
        :func:`~moco_lab.tools.mass_fit.fit_mass`); default: free.
    scale_bounds : (lower, upper)
        Bounds on every factor (default: from half to twice the model's mass — positive with a margin, and wide
        enough that a factor on a bound says the data pull it there; ``SegmentMassFit.at_bounds`` lists them).

    Returns
    -------
    SegmentMassFit

    Raises
    ------
    KeyError
        A group names a body the model does not have.
    ValueError
        A body in two groups, non-positive standard deviations or total mass, bounds not 0 < lower < 1 < upper, a
        total mass the bounds cannot reach.
    """
    require_model(model, "fit_segment_masses_to_residual")
    who = "fit_segment_masses_to_residual"
    rows = _window(dynamics, window)
    finite_number(mass_sd, f"{who}: mass_sd", 0, False, "a positive fraction (0.1: 10 %)")
    finite_number(residual_sd, f"{who}: residual_sd", 0, False, "a positive fraction of the body weight")
    lower, upper = factor_bounds(scale_bounds, who)
    ev = _Evaluator(model)
    groups, G = _group_matrix(model, ev, groups, who)
    before, shares = ev.shares(_motion(dynamics, rows))
    base = np.hstack([before.moment, before.force])
    # rows of the least-squares problem in the factors σ: the wrench at σ is base + Σ_g (σ_g − 1) C_g
    W, h = before.body_weight, before.com_height
    scale = np.array([1.0 / (residual_sd * W * h)] * 3 + [1.0 / (residual_sd * W)] * 3)
    C = np.einsum("int,ig->ntg", shares, G) * scale[None, :, None]  # (n, 6, ng)
    ng = G.shape[1]
    A = np.vstack([C.reshape(-1, ng), np.eye(ng) / mass_sd])
    b = np.concatenate([-(base * scale).reshape(-1) + C.reshape(-1, ng).sum(axis=1), np.ones(ng) / mass_sd])
    group_mass = ev.mass @ G
    if total_mass is not None:
        total_mass = finite_number(total_mass, f"{who}: total_mass", 0, False, "a positive mass in kg")
    sigma = _bounded_least_squares(A, b, lower, upper, group_mass, None if total_mass is None else
                                   total_mass - (ev.mass.sum() - group_mass.sum()), who)
    factors = _mass_factors(ev, groups, G, sigma, (lower, upper))
    after = ev.residual(_motion(dynamics, rows), np.array(list(factors["body_masses"].values())))
    return SegmentMassFit(**factors, before=before, after=after)


def _mass_factors(ev: _Evaluator, groups: dict, G: np.ndarray, sigma: np.ndarray, bounds: tuple[float, float]) -> dict:
    """The :class:`MassFactors` fields of the factors ``sigma`` of ``groups`` (indicator matrix ``G``)."""
    masses = ev.mass * (G @ sigma + (1.0 - G.sum(axis=1)))
    names = list(groups)
    lower, upper = bounds
    return dict(groups=groups, scales=dict(zip(names, map(float, sigma))),
                masses=dict(zip(names, map(float, (ev.mass @ G) * sigma))),
                body_masses=dict(zip(ev.bodies, map(float, masses))), total_mass=float(masses.sum()),
                at_bounds=[n for n, v in zip(names, sigma) if min(v - lower, upper - v) <= 1e-9 * upper])


def _bounded_least_squares(A: np.ndarray, b: np.ndarray, lower: float, upper: float, a: np.ndarray,
                           total: float | None, who: str) -> np.ndarray:
    """``argmin |A x − b|²`` over ``lower ≤ x ≤ upper`` (bounded-variable least squares, exact), and with
    ``aᵀx = total`` if ``total`` is given: the constraint's multiplier ν found by bisection, ``aᵀx(ν)`` being
    non-increasing in ν for the strictly convex problem ``|A x − b|² + 2ν aᵀx`` (as least squares through the
    Cholesky factor of ``AᵀA``)."""
    from scipy.optimize import lsq_linear

    def solve(rhs_shift: np.ndarray | None) -> np.ndarray:
        if rhs_shift is None:
            return lsq_linear(A, b, bounds=(lower, upper), method="bvls", tol=1e-14).x
        return lsq_linear(L.T, rhs_shift, bounds=(lower, upper), method="bvls", tol=1e-14).x

    if total is None:
        return solve(None)
    if not a.sum() * lower <= total <= a.sum() * upper:
        raise ValueError(f"{who}: total_mass cannot be reached with every factor in ({lower:g}, {upper:g})")
    H = A.T @ A
    L = np.linalg.cholesky(H)  # H = L Lᵀ: |A x − b|² + 2ν aᵀx = |Lᵀ x − L⁻¹(Aᵀb − ν a)|² + const
    Atb = A.T @ b

    def at(nu: float) -> np.ndarray:
        return solve(np.linalg.solve(L, Atb - nu * a))

    lo, hi = -1.0, 1.0
    while a @ at(lo) < total:
        lo *= 4.0
    while a @ at(hi) > total:
        hi *= 4.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        x = at(mid)
        if abs(a @ x - total) <= 1e-12 * total or hi - lo <= 1e-15 * max(1.0, abs(mid)):
            return x
        lo, hi = (mid, hi) if a @ x > total else (lo, mid)
    return x


@dataclass
class KinematicsMassFit(MassFactors):
    """:func:`reduce_root_residual`'s answer: the :class:`MassFactors` and

    Attributes
    ----------
    time : (T,) array, s
    q : (T, nq) array
        The adjusted coordinates, ``model.coordinates`` order.
    coordinates : dict of str -> (T,) array
    after : RootResidual
        The residual wrench of the adjusted motion with the fitted masses at the window's frames, the speeds and
        accelerations by central differences (the dynamics the fit made consistent, as AddBiomechanics reports
        them; inverse dynamics by a quintic spline of ``q`` agrees away from the window's ends, where the motion
        passes from fitted to free).
    names : list of str
        The markers, in the order of ``marker_errors``' columns.
    marker_errors : (T, M) array, m
        Distance of each model marker from its measurement (NaN where missing).
    marker_rmse, marker_max : float, m
        Over the markers with a weight > 0.
    success : bool
        Converged (the step or the predicted decrease at round-off, the constraints met).
    iterations : int
    objective : float
        ½ Σ of the squared normalized terms at the answer.
    """

    time: np.ndarray
    q: np.ndarray
    coordinates: dict
    after: RootResidual
    names: list
    marker_errors: np.ndarray
    marker_rmse: float
    marker_max: float
    success: bool
    iterations: int
    objective: float


def reduce_root_residual(model: Model, markers: Sequence[Marker], data: Mapping[str, np.ndarray], time: np.ndarray,
                         Q: np.ndarray, *, weights: Mapping[str, float] | None = None,
                         window: tuple[float, float] | None = None,
                         groups: Mapping[str, Sequence[str]] | None = None, noise: float = 0.01,
                         residual_sd: float = 0.01, mass_sd: float = 0.1, acceleration_sd: float = 100.0,
                         scale_bounds: tuple[float, float] = (0.5, 2.0), max_iterations: int = 50,
                         progress: Callable[[Progress], None] | None = None) -> KinematicsMassFit:
    """Adjust every frame's coordinates and the segment masses together so that markers and force plates agree —
    AddBiomechanics' dynamics pass, on any model the engine derives (3-D included). The maximum-a-posteriori
    problem ::

        min_{q_0..q_{T−1}, σ}  ½ Σ_t Σ_m w_m |p_m(q_t) − y_tm|² / noise²
                               + ½ Σ_{t in window} |F_res,t|² / (s W)² + |M_res,t|² / (s W h)²
                               + ½ Σ_t |q̈_t|² / acceleration_sd² + ½ Σ_g (σ_g − 1)² / mass_sd²

    subject to the model's coordinate couplers at every frame and every clamped coordinate in its range, with the
    residual wrench (module docstring) of frame t computed from central differences of the coordinates
    (q̇ = (q_{t+1} − q_{t−1}) / 2Δt, q̈ = (q_{t+1} − 2 q_t + q_{t−1}) / Δt²) and the masses σ; W the model's weight
    and h its mean centre-of-mass height over the window at the start. Solved by damped Gauss–Newton
    (Levenberg–Marquardt) on the exact sparse Jacobian (the engine's compiled marker positions, residual wrench
    and constraints, differentiated in the coordinates, speeds, accelerations and masses; the chain rule through
    the differences), each step one sparse KKT system with the couplers linearized; bounds held by an active set.

    Parameters
    ----------
    model : Model
        With its markers and its external loads applied (the model inverse dynamics used).
    markers : sequence of Marker
        The markers to fit, each with data.
    data : dict of str -> (T, 3) array, m
        Measured positions (NaN: missing, left out).
    time : (T,) array, s
        Equally spaced frame times.
    Q : (T, nq) array
        The starting coordinates (e.g. inverse kinematics, low-pass filtered: ``IDResult.q``).
    weights : dict of str -> float, optional
        Marker weights (the IK task file's, ``read_ik_tasks(file).markers``); default 1.
    window : (start, end), s, optional
        The frames whose residual counts (where the force plates see every foot on the ground); default all.
    groups, mass_sd, scale_bounds
        As :func:`fit_segment_masses_to_residual`'s.
    noise : float, m
        Marker noise: a marker of weight 1 off by ``noise`` costs as much as a residual of ``residual_sd``.
    residual_sd : float
        The residual the fit tolerates per frame and axis, as a fraction of the body weight.
    acceleration_sd : float
        A zero-mean prior on every coordinate's second difference (rad/s² or m/s²): it smooths the frames outside
        the window; 100 is about the peak of walking's joint accelerations.
    max_iterations : int
    progress : callable, optional
        Called with a :class:`~moco_lab.solve.optimizer.Progress` at the start (iteration 0) and after every
        iteration.

    Returns
    -------
    KinematicsMassFit
    """
    who = "reduce_root_residual"
    require_model(model, who)
    problem = _KinematicsMassProblem(model, markers, data, time, Q, weights, window, groups, noise, residual_sd,
                                     mass_sd, acceleration_sd, scale_bounds, who)
    answer = constrained_least_squares(problem, max_iterations=max_iterations, progress=progress, who=who)
    return problem.result(answer.x, answer.extra, answer.success, answer.iterations, answer.objective)


class _KinematicsMassProblem:
    """:func:`reduce_root_residual`'s least-squares problem in ``x = [q_0 … q_{T−1}, σ]``: the normalized terms
    ``r(x)`` with their sparse Jacobian, the couplers ``φ(x)`` with theirs, the bounds."""

    def __init__(self, model, markers, data, time, Q, weights, window, groups, noise, residual_sd, mass_sd,
                 acceleration_sd, scale_bounds, who):
        from scipy import sparse

        self.model = model
        markers = marker_list(markers, who)
        Y, w = marker_arrays(markers, data, weights, who)
        t = np.asarray(time, float).reshape(-1)
        T, nq = Y.shape[0], len(model.coordinates)
        Q0 = np.asarray(Q, float)
        if Q0.shape != (T, nq) or t.size != T or not np.all(np.isfinite(Q0)):
            raise ValueError(f"{who}: Q must be (T, {nq}) finite coordinates and time (T,), T = {T} frames of marker "
                             f"data; got Q {Q0.shape}, time {t.shape}")
        dt = float(np.mean(np.diff(t))) if T > 1 else 0.0
        if T < 3 or dt <= 0 or not np.allclose(np.diff(t), dt, rtol=1e-6, atol=1e-9):
            raise ValueError(f"{who}: time must be at least 3 equally spaced increasing frames (resample first)")
        for label, value in (("noise", noise), ("residual_sd", residual_sd), ("mass_sd", mass_sd),
                             ("acceleration_sd", acceleration_sd)):
            finite_number(value, f"{who}: {label}", 0, False)
        self.s_lo, self.s_hi = factor_bounds(scale_bounds, who)
        ev = self.ev = _Evaluator(model)
        self.groups, self.Gm = _group_matrix(model, ev, groups, who)
        ng = self.Gm.shape[1]
        self.ungrouped = 1.0 - self.Gm.sum(axis=1)
        self.inside = _rows_in(t, window) & _interior(T)
        self.rows_w = np.flatnonzero(self.inside)
        if self.rows_w.size == 0:
            raise ValueError(f"{who}: no frame between the first and the last lies in the window {window}")
        self.kinematics = MarkerKinematics(model, markers)  # the compiled block inverse kinematics uses
        kernel = ev.kernel
        self.markers, self.T, self.nq, self.ng, self.dt, self.t = markers, T, nq, ng, dt, t
        self.E_w = kernel.inputs_at(t[self.rows_w])
        lower_q, upper_q = clamped_bounds(model)
        self.lower = np.r_[np.tile(lower_q, T), np.full(ng, self.s_lo)]
        self.upper = np.r_[np.tile(upper_q, T), np.full(ng, self.s_hi)]
        self.Y, self.w = Y, w
        seen = np.isfinite(Y).all(axis=2) & (w > 0)[None, :]
        self.st, self.sm = np.nonzero(seen)
        self.c_m = np.sqrt(w) / noise
        self.Yz = np.nan_to_num(Y)
        self.n_x = n_x = T * nq + ng
        self.x0 = np.r_[Q0.reshape(-1), np.ones(ng)]
        # the acceleration prior: constant rows
        k_rows = np.arange((T - 2) * nq)
        frame, coord = np.divmod(k_rows, nq)
        d_vals = np.tile(np.array([1.0, -2.0, 1.0]) / (dt ** 2 * acceleration_sd), k_rows.size)
        d_cols = (np.stack([frame, frame + 1, frame + 2], axis=1) * nq + coord[:, None]).reshape(-1)
        self.D = sparse.csr_matrix((d_vals, (np.repeat(k_rows, 3), d_cols)), shape=(k_rows.size, n_x))
        W0 = float(ev.mass.sum() * ev.gravity)
        start = ev.residual(self.motion(Q0), ev.mass)
        self.scale6 = np.array([1.0 / (residual_sd * W0 * start.com_height)] * 3 + [1.0 / (residual_sd * W0)] * 3)
        self.prior = 1.0 / mass_sd
        self.dsig = (ev.mass / ev.unit)[:, None] * self.Gm  # ∂P/∂σ (nb, ng), P the kernel's parameters

    def masses(self, sigma: np.ndarray) -> np.ndarray:
        return self.ev.mass * (self.Gm @ sigma + self.ungrouped)

    def motion(self, Q: np.ndarray) -> tuple:
        """``(time, q, q̇, q̈)`` at the window's frames, the derivatives by central differences."""
        k, dt = self.rows_w, self.dt
        return (self.t[k], Q[k], (Q[k + 1] - Q[k - 1]) / (2 * dt), (Q[k + 1] - 2 * Q[k] + Q[k - 1]) / dt ** 2)

    def evaluate(self, x: np.ndarray):
        """``(r, J, φ, G, marker positions (T, M, 3))`` at ``x``; ``J``, ``G`` sparse (CSR)."""
        from scipy import sparse

        T, nq, ng, n_x, dt = self.T, self.nq, self.ng, self.n_x, self.dt
        kernel, ev = self.ev.kernel, self.ev
        Qx, sigma = x[:T * nq].reshape(T, nq), x[T * nq:]
        m = self.ev.parameters(self.masses(sigma))
        P, JP, phi, dphi = self.kinematics(Qx)  # (T, M, 3), (T, M, 3, nq), (T, nl), (T, nl, nq)
        st, sm = self.st, self.sm
        r = [(self.c_m[sm, None] * (P[st, sm] - self.Yz[st, sm])).reshape(-1), self.D @ x]
        blocks = [frame_rows(self.c_m[sm, None, None] * JP[st, sm], st, nq, n_x), self.D]
        # the residual wrench at the window's frames: q̇, q̈ by central differences, chained to q_{k−1}, q_k, q_{k+1}
        k = self.rows_w
        nw = k.size
        _, Qk, U, A = self.motion(Qx)
        # the outputs root_residual and fit_segment_masses_to_residual read: one compiled block for all three
        o = kernel.outputs([ev.output, "/com_position"], Qk, U, A=A, P=m, E=self.E_w, jac=True)
        J = o["J"][ev.output]
        s6 = self.scale6[None, :, None]
        r.append((o[ev.output] * self.scale6).reshape(-1))
        rows6 = np.repeat(np.arange(6 * nw), nq)
        vv, ri, ci = [], [], []
        for shift, d in ((-1, -J["du"] / (2 * dt) + J["da"] / dt ** 2), (0, J["dq"] - 2 * J["da"] / dt ** 2),
                         (1, J["du"] / (2 * dt) + J["da"] / dt ** 2)):
            vv.append((d * s6).reshape(-1))
            ri.append(rows6)
            ci.append(np.broadcast_to(((k + shift) * nq)[:, None, None] + np.arange(nq), (nw, 6, nq)).reshape(-1))
        vv.append((np.einsum("nkb,bg->nkg", J["dp"], self.dsig) * s6).reshape(-1))
        ri.append(np.repeat(np.arange(6 * nw), ng))
        ci.append(np.tile(T * nq + np.arange(ng), 6 * nw))
        blocks.append(sparse.csr_matrix((np.concatenate(vv), (np.concatenate(ri), np.concatenate(ci))),
                                        shape=(6 * nw, n_x)))
        r.append((sigma - 1.0) * self.prior)
        blocks.append(sparse.csr_matrix((np.full(ng, self.prior), (np.arange(ng), T * nq + np.arange(ng))),
                                        shape=(ng, n_x)))
        return np.concatenate(r), sparse.vstack(blocks).tocsr(), phi.reshape(-1), frame_rows(dphi, np.arange(T), nq,
                                                                                            n_x), P

    def result(self, x: np.ndarray, P: np.ndarray, success: bool, iterations: int,
               objective: float) -> KinematicsMassFit:
        T, nq = self.T, self.nq
        Qx, sigma = x[:T * nq].reshape(T, nq).copy(), x[T * nq:]
        factors = _mass_factors(self.ev, self.groups, self.Gm, sigma, (self.s_lo, self.s_hi))
        after = self.ev.residual(self.motion(Qx), self.masses(sigma))
        errors = np.where(np.isfinite(self.Y).all(axis=2), np.linalg.norm(P - self.Yz, axis=2), np.nan)
        used = errors[:, self.w > 0]
        finite = used[np.isfinite(used)]
        return KinematicsMassFit(**factors, time=self.t.copy(), q=Qx,
                                 coordinates={c.name: Qx[:, c.q_index].copy() for c in self.model.coordinates},
                                 after=after, names=[m.name for m in self.markers], marker_errors=errors,
                                 marker_rmse=float(np.sqrt(np.mean(finite ** 2))), marker_max=float(finite.max()),
                                 success=success, iterations=iterations, objective=objective)


def _interior(T: int) -> np.ndarray:
    inner = np.zeros(T, bool)
    inner[1:-1] = True
    return inner
