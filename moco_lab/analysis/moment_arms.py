"""Muscle moment arms by OpenSim's generalized-force method, and the methods it replaces.

Sherman, Seth & Delp (2013) define a muscle's moment arm about an
angle θ as ``r = τ_θ / s``: the effective torque about θ per unit tension.
With workless constraints this equals ``−dl/dθ`` (OpenSim's sign: positive
when shortening the path increases θ). Four ways to compute it
(:data:`METHODS`):

``"generalized_force"`` (OpenSim's ``MomentArmSolver``, Eq. 19)
    Coupling vector ``C_θ`` = the speeds produced by ``θ̇ = 1`` with the
    velocity constraints satisfied (:func:`~moco_lab.constraints.coupling_vector`);
    apply a unit tension along the path, map the body forces to generalized
    forces ``f = Jᵀ F`` and take ``r = C_θᵀ f``. No path derivative needed.
``"perturbation"`` (tendon excursion, Eq. 3)
    Central difference of the path length, θ ± 1e-4, the other coordinates
    re-assembled so the constraints hold: ``r = −Δl/Δθ``.
``"path_velocity"`` (Eq. 11)
    Set ``u = C_θ`` (θ̇ = 1) and compute the lengthening speed ``l̇`` from the
    path points' velocities: ``r = −l̇``.
``"partial_velocity"`` (Eq. 15)
    ``r = −P N C_θ`` with ``P = ∂l/∂q`` (here by AutoDiffXd) and ``N = I``.

``"no_coupling"`` is the *wrong* answer on purpose: ``r = f_θ``, i.e. θ
treated as independent (``C = e_θ``). It misses ``Σ_{k≠θ} c_k f_k``.

:func:`effective_torque` is Eq. 20-22 (``τ_θ = Σ_k c_k τ_k``) and
:func:`dynamic_consistency` checks ``r s = τ_θ`` against the constrained
equations of motion, as OpenSim's ``testMomentArms.cpp`` does.
:func:`moment_arm_curves` sweeps θ for many muscles at once (fast enough for a
slider). Drawing lives in :mod:`moco_lab.viz.moment_arms` and the dashboard in
:mod:`moco_lab.ui.moment_arms`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..modeling.constraints import (
    CoordinateCouplerConstraint,
    body_point_positions,
    constraint_jacobian,
    coupling_vector,
    project_positions,
)
from ..modeling.forces import PathMuscle
from ..modeling.path import GeometryPath
from ..results.trajectory import Trajectory
from ..tools.analyze import analyze
from ..util.names import did_you_mean

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.systems.framework import Context

    from ..modeling.model import Model

__all__ = [
    "METHODS", "METHOD_LABELS", "moment_arm", "moment_arm_curves", "assemble", "path_length",
    "path_generalized_forces", "lengthening_speed", "length_gradient", "effective_torque",
    "coupled_joint_weights", "dynamic_consistency", "constant_moment_arm_cost", "model_context", "muscle_path",
    "world_position", "compiled_moment_arms",
]

METHODS = ("generalized_force", "perturbation", "path_velocity", "partial_velocity", "no_coupling")
METHOD_LABELS = {
    "generalized_force": "generalized force  Cᵀf",
    "perturbation": "perturbation  −Δl/Δθ",
    "path_velocity": "path velocity  −l̇(θ̇=1)",
    "partial_velocity": "partial velocity  −(∂l/∂q)C",
    "no_coupling": "no coupling vector  f_θ",
}
#: OpenSim's testMomentArms.cpp: finite-difference step (rad, or m for a slider) and tolerance (m).
PERTURBATION_STEP = 1e-4
OPENSIM_TOLERANCE = 1e-3


# ------------------------------------------------------------------------- helpers
def muscle_path(model: Model, path_or_muscle: str | PathMuscle) -> tuple[str, GeometryPath]:
    """(name, GeometryPath) from a GeometryPath, a PathMuscle or a muscle name/path."""
    if isinstance(path_or_muscle, GeometryPath):
        return "path", path_or_muscle
    if isinstance(path_or_muscle, PathMuscle):
        return path_or_muscle.name, path_or_muscle.geometry
    if isinstance(path_or_muscle, str):
        for m in model.muscles:
            if path_or_muscle in (m.name, m.path):
                return m.name, m.geometry
        raise KeyError(did_you_mean(path_or_muscle, [m.name for m in model.muscles], "muscle"))
    raise TypeError(f"Expected a GeometryPath, a PathMuscle or a muscle name; got {type(path_or_muscle).__name__}")


def _q(model, state_or_q) -> np.ndarray:
    """Positions (nq,) from a q vector, a state vector ``[q, u, ...]``, a Drake context or a dict of values."""
    if hasattr(state_or_q, "get_continuous_state_vector") or type(state_or_q).__name__.startswith("Context"):
        return np.asarray(model.plant.GetPositions(state_or_q), dtype=float).copy()
    if isinstance(state_or_q, dict):
        q = np.zeros(model.nq)
        for c in model.coordinates:
            for key in (c.value_path, c.path, c.name):
                if key in state_or_q:
                    q[c.q_index] = float(state_or_q[key])
        return q
    a = np.asarray(state_or_q, dtype=float).ravel()
    if a.shape[0] < model.nq:
        raise ValueError(f"Expected q (nq = {model.nq}) or a state [q, u, ...]; got {a.shape[0]} values")
    return a[:model.nq].copy()


def model_context(model: Model, q: ArrayLike) -> tuple[MultibodyPlant, Context]:
    """The model's Drake context (one per model, reused) set to positions ``q`` and zero velocities."""
    model.require_drake_kinematics("This Drake-numeric moment-arm function")
    cache = model.derived("moment_arms")
    if "context" not in cache:
        cache["context"] = model.plant.CreateDefaultContext()
    ctx = cache["context"]
    model.plant.SetPositions(ctx, q)
    model.plant.SetVelocities(ctx, np.zeros(model.plant.num_velocities()))
    return ctx


def assemble(model: Model, state_or_q: ArrayLike, coordinate: str | None = None) -> np.ndarray:
    """Positions satisfying the constraints, keeping ``coordinate`` (θ) at its value.

    Returns
    -------
    ndarray, shape (nq,)
    """
    q = _q(model, state_or_q)
    if not getattr(model, "constraints", None):
        return q
    return project_positions(model, q, fixed=(coordinate,) if coordinate else ())


# --------------------------------------------------------------- path quantities
def path_length(model: Model, q: ArrayLike, path_or_muscle: str | PathMuscle) -> float:
    """Path length ``l(q)`` (m)."""
    _, path = muscle_path(model, path_or_muscle)
    return path.length(model.plant, model_context(model, _q(model, q)))


def path_generalized_forces(model: Model, q: ArrayLike, path_or_muscle: str | PathMuscle, tension: float = 1.0) -> np.ndarray:
    """Generalized forces ``f = Jᵀ F`` of a tension along the path (Sherman, Seth & Delp 2013, Eq. 16-17).

    Returns
    -------
    ndarray, shape (nv,)
    """
    _, path = muscle_path(model, path_or_muscle)
    return path.generalized_forces(model.plant, model_context(model, _q(model, q)), tension)


def lengthening_speed(model: Model, q: ArrayLike, u: ArrayLike, path_or_muscle: str | PathMuscle) -> float:
    """``l̇`` from the velocities of the path points (no Jacobian transpose involved).

    ``l̇ = Σ_k ê_k · (v_{k+1} − v_k)`` with ``ê_k`` the unit vector of segment
    k and ``v`` the points' ground-frame velocities from Drake's body spatial
    velocities.
    """
    _, path = muscle_path(model, path_or_muscle)
    plant = model.plant
    ctx = model_context(model, _q(model, q))
    plant.SetVelocities(ctx, np.asarray(u, dtype=float))
    P, V = [], []
    for p in path.points:
        loc = np.asarray(p.location, dtype=float)
        if p.body in ("ground", "world"):
            P.append(loc)
            V.append(np.zeros(3))
            continue
        body = plant.GetBodyByName(p.body)
        X = plant.EvalBodyPoseInWorld(ctx, body)
        Vb = plant.EvalBodySpatialVelocityInWorld(ctx, body)
        r = X.rotation().matrix() @ loc
        P.append(X.translation() + r)
        V.append(Vb.translational() + np.cross(Vb.rotational(), r))
    ldot = 0.0
    for k in range(len(P) - 1):
        d = P[k + 1] - P[k]
        ldot += float(d @ (V[k + 1] - V[k]) / np.linalg.norm(d))
    return ldot


def length_gradient(model: Model, q: ArrayLike, path_or_muscle: str | PathMuscle) -> np.ndarray:
    """Partial-velocity row ``P = ∂l/∂q`` by forward AutoDiff, shape ``(nq,)``."""
    from pydrake.autodiffutils import InitializeAutoDiff

    _, path = muscle_path(model, path_or_muscle)
    q_ad = InitializeAutoDiff(_q(model, q)).ravel()
    pts = body_point_positions(model, q_ad, [(p.body, p.location) for p in path.points])
    length = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        d = b - a
        length = length + np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    g = np.asarray(length.derivatives(), dtype=float) if hasattr(length, "derivatives") else np.zeros(0)
    return g if g.size else np.zeros(model.nq)


# ------------------------------------------------------------------- moment arms
def moment_arm(model: Model, state_or_q: ArrayLike, path_or_muscle: str | PathMuscle, coordinate: str,
               method: str = "generalized_force",
               assemble_first: bool = True, step: float = PERTURBATION_STEP) -> float:
    """Moment arm ``r`` (m) of a path about a coordinate θ, OpenSim's sign (``−dl/dθ``).

    Parameters
    ----------
    model : Model
    state_or_q : array (nq,) or (2 nq + ...,), Drake Context, or dict
        Configuration: positions ``q``, a state vector ``[q, u, ...]``, a
        context of ``model.plant`` or ``{coordinate path or name: value}``.
    path_or_muscle : GeometryPath, PathMuscle or str
        The path, or a muscle of the model (name or ``/forceset/<name>``).
    coordinate : str
        θ: coordinate name or path (e.g. ``"/jointset/knee/knee_angle"``).
    method : str
        One of :data:`METHODS`; default OpenSim's ``"generalized_force"``.
    assemble_first : bool
        Re-satisfy the position constraints first, keeping θ (default True).
    step : float
        Half step of the perturbation method (OpenSim's test: 1e-4).

    Returns
    -------
    float
    """
    if method not in METHODS:
        raise ValueError(did_you_mean(method, METHODS, "method"))
    coord = model.coordinate(coordinate)
    q = assemble(model, state_or_q, coord.path) if assemble_first else _q(model, state_or_q)
    if method == "perturbation":
        qp, qm = q.copy(), q.copy()
        qp[coord.q_index] += step
        qm[coord.q_index] -= step
        qp, qm = assemble(model, qp, coord.path), assemble(model, qm, coord.path)
        return -(path_length(model, qp, path_or_muscle) - path_length(model, qm, path_or_muscle)) / (
            qp[coord.q_index] - qm[coord.q_index])
    if method == "no_coupling":
        return float(path_generalized_forces(model, q, path_or_muscle, 1.0)[coord.v_index])
    C = coupling_vector(model, q, coord.path)
    if method == "generalized_force":
        return float(C @ path_generalized_forces(model, q, path_or_muscle, 1.0))
    if method == "path_velocity":
        return -lengthening_speed(model, q, C, path_or_muscle)
    return -float(length_gradient(model, q, path_or_muscle) @ C)  # partial velocity, N = I


def moment_arm_curves(model: Model, muscles: Sequence | None, coordinate: str, values: ArrayLike,
                      method: str = "generalized_force",
                      q0: ArrayLike | None = None, step: float = PERTURBATION_STEP) -> dict[str, np.ndarray]:
    """Moment arms of many muscles over a sweep of θ (one assembly per θ, shared by all muscles).

    Parameters
    ----------
    model : Model
    muscles : sequence of (str, PathMuscle or GeometryPath), or None for all of ``model.muscles``
    coordinate : str
        θ.
    values : array, shape (n,)
        θ values.
    method : str
        One of :data:`METHODS`.
    q0 : array (nq,), optional
        Values of the other coordinates (default zeros); dependent ones are
        re-assembled at every θ, starting from the previous solution.

    Returns
    -------
    dict
        muscle name -> ndarray, shape (n,).
    """
    if method not in METHODS:
        raise ValueError(did_you_mean(method, METHODS, "method"))
    coord = model.coordinate(coordinate)
    muscles = list(model.muscles) if muscles is None else list(muscles)
    named = [muscle_path(model, m) for m in muscles]
    names = [n if n != "path" else f"path{k}" for k, (n, _) in enumerate(named)]
    values = np.asarray(values, dtype=float).ravel()
    out = {n: np.empty(len(values)) for n in names}
    q = np.zeros(model.nq) if q0 is None else _q(model, q0)
    for i, theta in enumerate(values):
        q[coord.q_index] = theta
        q = assemble(model, q, coord.path)
        if method == "perturbation":
            qp, qm = q.copy(), q.copy()
            qp[coord.q_index] += step
            qm[coord.q_index] -= step
            qp, qm = assemble(model, qp, coord.path), assemble(model, qm, coord.path)
            dq = qp[coord.q_index] - qm[coord.q_index]
            ctx = model_context(model, qp)
            lp = [p.length(model.plant, ctx) for _, p in named]
            ctx = model_context(model, qm)
            for n, (_, p), l1 in zip(names, named, lp):
                out[n][i] = -(l1 - p.length(model.plant, ctx)) / dq
            continue
        if method == "no_coupling":
            ctx = model_context(model, q)
            for n, (_, p) in zip(names, named):
                out[n][i] = p.generalized_forces(model.plant, ctx, 1.0)[coord.v_index]
            continue
        C = coupling_vector(model, q, coord.path)
        for n, (_, p) in zip(names, named):
            if method == "generalized_force":
                out[n][i] = C @ p.generalized_forces(model.plant, model_context(model, q), 1.0)
            elif method == "path_velocity":
                out[n][i] = -lengthening_speed(model, q, C, p)
            else:
                out[n][i] = -length_gradient(model, q, p) @ C
    return out


# -------------------------------------------------------- effective torque (Eq. 20-22)
def coupled_joint_weights(model: Model, q: ArrayLike, coordinate: str, step: float = PERTURBATION_STEP) -> np.ndarray:
    """``dq_k/dθ`` along the constraint manifold from *positions* (central difference of assembled q).

    An independent route to the coupling vector (which comes from a velocity
    projection), shape ``(nq,)``.
    """
    coord = model.coordinate(coordinate)
    q = assemble(model, q, coord.path)
    qp, qm = q.copy(), q.copy()
    qp[coord.q_index] += step
    qm[coord.q_index] -= step
    qp, qm = assemble(model, qp, coord.path), assemble(model, qm, coord.path)
    return (qp - qm) / (2 * step)


def effective_torque(model: Model, q: ArrayLike, generalized_forces: ArrayLike, coordinate: str,
                     weights: ArrayLike | None = None) -> float:
    """Effective torque about θ of the coupled joints' torques: ``τ_θ = Σ_k c_k τ_k = C_θᵀ f`` (Eq. 20-22).

    Parameters
    ----------
    generalized_forces : array, shape (nv,)
        ``τ_k``, e.g. from :func:`path_generalized_forces` or Drake's
        ``CalcGeneralizedForces``.
    weights : array (nv,), optional
        ``c_k = dθ_k/dθ``; default the coupling vector.
    """
    c = coupling_vector(model, assemble(model, q, coordinate), coordinate) if weights is None else weights
    return float(np.asarray(c, dtype=float) @ np.asarray(generalized_forces, dtype=float))


def _drake_generalized_forces(model, q, path: GeometryPath, tension: float) -> np.ndarray:
    """Generalized forces of the path via Drake's MultibodyForces + ``CalcGeneralizedForces``."""
    from pydrake.multibody.math import SpatialForce
    from pydrake.multibody.tree import MultibodyForces

    plant = model.plant
    ctx = model_context(model, q)
    P = path.point_positions(plant, ctx)
    forces = MultibodyForces(plant)
    for k, p in enumerate(path.points):
        F = np.zeros(3)
        if k + 1 < len(P):
            F += tension * (P[k + 1] - P[k]) / np.linalg.norm(P[k + 1] - P[k])
        if k > 0:
            F -= tension * (P[k] - P[k - 1]) / np.linalg.norm(P[k] - P[k - 1])
        if p.body in ("ground", "world"):
            continue
        body = plant.GetBodyByName(p.body)
        R_WB = plant.EvalBodyPoseInWorld(ctx, body).rotation().matrix()
        body.AddInForce(ctx, R_WB @ np.asarray(p.location, float), SpatialForce(np.zeros(3), F),
                        plant.world_frame(), forces)  # p_BoP and F both expressed in world
    return np.asarray(plant.CalcGeneralizedForces(ctx, forces), dtype=float)


def dynamic_consistency(model: Model, q: ArrayLike, path_or_muscle: str | PathMuscle, coordinate: str, tension: float = 10.0,
                        method: str = "perturbation") -> dict:
    """Check ``r s = τ_θ`` as OpenSim's testMomentArms does (no gravity, ``u = 0``).

    With tension ``s`` the path's body forces are mapped by Drake
    (``CalcGeneralizedForces``) to joint torques ``τ``; the constrained
    equations of motion ``M u̇ = τ + Gᵀλ``, ``G u̇ = 0`` are solved for ``u̇``
    and λ, and the inverse-dynamics torque ``M u̇`` is projected on the
    coupled joints. Constraint forces do no work along ``C`` (``G C = 0``),
    so all three numbers below must agree.

    Returns
    -------
    dict
        ``r`` (by ``method``), ``r_times_s``, ``tau_effective`` (Eq. 22 with
        weights from positions, :func:`coupled_joint_weights`),
        ``tau_inverse_dynamics`` (``Cᵀ M u̇``), ``multipliers`` (λ), ``udot``.
    """
    coord = model.coordinate(coordinate)
    _, path = muscle_path(model, path_or_muscle)
    q = assemble(model, q, coord.path)
    r = moment_arm(model, q, path, coord.path, method=method, assemble_first=False)
    tau = _drake_generalized_forces(model, q, path, tension)
    weights = coupled_joint_weights(model, q, coord.path)
    plant = model.plant
    M = plant.CalcMassMatrix(model_context(model, q))
    G = constraint_jacobian(model, q)
    m = G.shape[0]
    K = np.block([[M, -G.T], [G, np.zeros((m, m))]])
    sol = np.linalg.solve(K, np.concatenate([tau, np.zeros(m)]))
    udot, lam = sol[:model.nq], sol[model.nq:]
    C = coupling_vector(model, q, coord.path)
    return {"r": r, "r_times_s": r * tension, "tau_effective": float(weights @ tau),
            "tau_inverse_dynamics": float(C @ (M @ udot)), "multipliers": lam, "udot": udot,
            "joint_torques": tau, "weights": weights}


def constant_moment_arm_cost(model: Model, muscle: str | PathMuscle, coordinate: str, d: float, values: ArrayLike,
                             q0: ArrayLike | None = None) -> dict:
    """What a constant moment arm ``d`` (gait2d's assumption, ``l = L0 − d θ``) costs over a range.

    The constant-arm length is matched to the path at ``θ = 0`` (or at the
    first value if 0 is outside the range).

    Returns
    -------
    dict
        ``theta`` (n,), ``r`` (n,) path moment arm, ``length`` (n,) path
        length, ``length_constant`` (n,) ``l(θ0) − d (θ − θ0)``,
        ``length_error`` (n,) ``length_constant − length`` (m).
    """
    coord = model.coordinate(coordinate)
    values = np.asarray(values, dtype=float)
    r = moment_arm_curves(model, [muscle], coord.path, values, q0=q0)
    r = next(iter(r.values()))
    q = np.zeros(model.nq) if q0 is None else _q(model, q0)
    lengths = np.empty(len(values))
    for i, theta in enumerate(values):
        q[coord.q_index] = theta
        q = assemble(model, q, coord.path)
        lengths[i] = path_length(model, q, muscle)
    i0 = int(np.argmin(np.abs(values)))
    lin = lengths[i0] - d * (values - values[i0])
    return {"theta": values, "r": r, "length": lengths, "length_constant": lin, "length_error": lin - lengths}


def world_position(model: Model, q: ArrayLike, body: str, location: ArrayLike) -> np.ndarray:
    """World position (3,) of a point fixed on ``body`` (``"ground"`` for the world) at ``q``."""
    if body in ("ground", "world"):
        return np.asarray(location, float)
    X = model.plant.EvalBodyPoseInWorld(model_context(model, q), model.plant.GetBodyByName(body))
    return X.translation() + X.rotation().matrix() @ np.asarray(location, float)


def compiled_moment_arms(model: Model, coordinate: str, values: ArrayLike, muscles: Sequence[str] | None = None,
                         pose: dict[str, float] | None = None) -> dict[str, np.ndarray]:
    """Moment arms about ``coordinate`` from the compiled model: any path (conditional and moving points too).

    ``r = −∂l/∂θ``, evaluated exactly as the lengthening speed at unit speed of ``coordinate`` (the other
    speeds zero), at the coordinate ``values`` with the others at ``pose`` (by name; default 0). Coordinates a
    linear ``CoordinateCouplerConstraint`` ties to ``coordinate`` (a patella following the knee) move with it,
    as OpenSim's moment-arm solver moves them; this is OpenSim's moment arm.

    Parameters
    ----------
    model : Model
    coordinate : str
        Coordinate name.
    values : array_like (n,)
        The coordinate's values (rad or m).
    muscles : list of str, optional
        Muscle paths (default: every muscle).
    pose : dict of str -> float, optional
        The other coordinates' values.

    Returns
    -------
    dict of str -> ndarray (n,)
        Moment arm (m) by muscle path.
    """
    followers = {}  # dependent coordinate -> (ratio, offset) of a linear coupler driven by ``coordinate``
    for cons in model.constraints:
        linear = isinstance(cons, CoordinateCouplerConstraint) and cons.function is None and len(cons.independent) == 1
        if not linear:
            raise NotImplementedError(f"compiled_moment_arms moves coupled coordinates along linear "
                                      f"CoordinateCouplerConstraints only; {cons.name!r} is not one: use "
                                      "moment_arm(..., method='generalized_force')")
        if cons.independent[0] == coordinate:
            followers[cons.dependent] = (cons.ratio[0], cons.offset)
        elif cons.dependent == coordinate:
            raise ValueError(f"{coordinate!r} is the dependent coordinate of {cons.name!r}; ask about "
                             f"{cons.independent[0]!r}, which drives it")
    target = model.coordinate(coordinate)
    paths = muscles if muscles is not None else [e.path for e in model.force_elements if isinstance(e, PathMuscle)]
    values = np.asarray(values, float)
    n = values.size
    states = {}
    for c in model.coordinates:
        states[c.value_path] = values if c is target else np.full(n, float((pose or {}).get(c.name, 0.0)))
        states[c.speed_path] = np.full(n, 1.0 if c is target else 0.0)
        if c.name in followers:  # the coupled coordinate moves with the one asked about (as OpenSim's moment arms)
            ratio, offset = followers[c.name]
            states[c.value_path] = ratio * values + offset
            states[c.speed_path] = np.full(n, ratio)
    for name in model.auxiliary_state_names():
        states[name] = np.full(n, 0.5)
    controls = {name: np.zeros(n) for name in model.control_names()}
    table = analyze(model, Trajectory(np.arange(n, dtype=float), states, controls),
                    [f"{p}/lengthening_speed" for p in paths])
    return {p: -table[f"{p}/lengthening_speed"] for p in paths}

