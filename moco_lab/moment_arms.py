"""Muscle moment arms by OpenSim's generalized-force method, and the methods it replaces.

Seed 003 (Sherman, Seth & Delp 2013) defines a muscle's moment arm about an
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
slider), and :class:`MomentArmPanel` is the dashboard of
``widgets/moment_arms.ipynb``.
"""
from __future__ import annotations

import json
from typing import Sequence

import numpy as np

from .constraints import (_body_point_positions, constraint_jacobian, coupling_vector,
                          project_positions)
from .path import GeometryPath

__all__ = [
    "METHODS", "METHOD_LABELS", "moment_arm", "moment_arm_curves", "assemble", "path_length",
    "path_generalized_forces", "lengthening_speed", "length_gradient", "effective_torque",
    "coupled_joint_weights", "dynamic_consistency", "constant_moment_arm_cost", "draw_configuration",
    "plot_moment_arm_curves", "plot_generalized_forces", "MomentArmPanel",
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
def _path(model, path_or_muscle) -> tuple[str, GeometryPath]:
    """(name, GeometryPath) from a GeometryPath, a PathMuscle or a muscle name/path."""
    from .model import PathMuscle, did_you_mean

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


def _context(model, q):
    ctx = model.__dict__.get("_moment_arm_context")
    if ctx is None:
        ctx = model.plant.CreateDefaultContext()
        model.__dict__["_moment_arm_context"] = ctx
    model.plant.SetPositions(ctx, q)
    model.plant.SetVelocities(ctx, np.zeros(model.plant.num_velocities()))
    return ctx


def assemble(model, state_or_q, coordinate: str | None = None) -> np.ndarray:
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
def path_length(model, q, path_or_muscle) -> float:
    """Path length ``l(q)`` (m)."""
    _, path = _path(model, path_or_muscle)
    return path.length(model.plant, _context(model, _q(model, q)))


def path_generalized_forces(model, q, path_or_muscle, tension: float = 1.0) -> np.ndarray:
    """Generalized forces ``f = Jᵀ F`` of a tension along the path (seed 003, Eq. 16-17).

    Returns
    -------
    ndarray, shape (nv,)
    """
    _, path = _path(model, path_or_muscle)
    return path.generalized_forces(model.plant, _context(model, _q(model, q)), tension)


def lengthening_speed(model, q, u, path_or_muscle) -> float:
    """``l̇`` from the velocities of the path points (no Jacobian transpose involved).

    ``l̇ = Σ_k ê_k · (v_{k+1} − v_k)`` with ``ê_k`` the unit vector of segment
    k and ``v`` the points' ground-frame velocities from Drake's body spatial
    velocities.
    """
    _, path = _path(model, path_or_muscle)
    plant = model.plant
    ctx = _context(model, _q(model, q))
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


def length_gradient(model, q, path_or_muscle) -> np.ndarray:
    """Partial-velocity row ``P = ∂l/∂q`` by forward AutoDiff, shape ``(nq,)``."""
    from pydrake.autodiffutils import InitializeAutoDiff

    _, path = _path(model, path_or_muscle)
    q_ad = InitializeAutoDiff(_q(model, q)).ravel()
    pts = _body_point_positions(model, q_ad, [(p.body, p.location) for p in path.points])
    length = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        d = b - a
        length = length + np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    g = np.asarray(length.derivatives(), dtype=float) if hasattr(length, "derivatives") else np.zeros(0)
    return g if g.size else np.zeros(model.nq)


# ------------------------------------------------------------------- moment arms
def moment_arm(model, state_or_q, path_or_muscle, coordinate: str, method: str = "generalized_force",
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
        from .model import did_you_mean

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


def moment_arm_curves(model, muscles: Sequence | None, coordinate: str, values, method: str = "generalized_force",
                      q0=None, step: float = PERTURBATION_STEP) -> dict[str, np.ndarray]:
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
        from .model import did_you_mean

        raise ValueError(did_you_mean(method, METHODS, "method"))
    coord = model.coordinate(coordinate)
    muscles = list(model.muscles) if muscles is None else list(muscles)
    named = [_path(model, m) for m in muscles]
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
            ctx = _context(model, qp)
            lp = [p.length(model.plant, ctx) for _, p in named]
            ctx = _context(model, qm)
            for n, (_, p), l1 in zip(names, named, lp):
                out[n][i] = -(l1 - p.length(model.plant, ctx)) / dq
            continue
        if method == "no_coupling":
            ctx = _context(model, q)
            for n, (_, p) in zip(names, named):
                out[n][i] = p.generalized_forces(model.plant, ctx, 1.0)[coord.v_index]
            continue
        C = coupling_vector(model, q, coord.path)
        for n, (_, p) in zip(names, named):
            if method == "generalized_force":
                out[n][i] = C @ p.generalized_forces(model.plant, _context(model, q), 1.0)
            elif method == "path_velocity":
                out[n][i] = -lengthening_speed(model, q, C, p)
            else:
                out[n][i] = -length_gradient(model, q, p) @ C
    return out


# -------------------------------------------------------- effective torque (Eq. 20-22)
def coupled_joint_weights(model, q, coordinate: str, step: float = PERTURBATION_STEP) -> np.ndarray:
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


def effective_torque(model, q, generalized_forces, coordinate: str, weights=None) -> float:
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
    ctx = _context(model, q)
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


def dynamic_consistency(model, q, path_or_muscle, coordinate: str, tension: float = 10.0,
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
    _, path = _path(model, path_or_muscle)
    q = assemble(model, q, coord.path)
    r = moment_arm(model, q, path, coord.path, method=method, assemble_first=False)
    tau = _drake_generalized_forces(model, q, path, tension)
    weights = coupled_joint_weights(model, q, coord.path)
    plant = model.plant
    M = plant.CalcMassMatrix(_context(model, q))
    G = constraint_jacobian(model, q)
    m = G.shape[0]
    K = np.block([[M, -G.T], [G, np.zeros((m, m))]])
    sol = np.linalg.solve(K, np.concatenate([tau, np.zeros(m)]))
    udot, lam = sol[:model.nq], sol[model.nq:]
    C = coupling_vector(model, q, coord.path)
    return {"r": r, "r_times_s": r * tension, "tau_effective": float(weights @ tau),
            "tau_inverse_dynamics": float(C @ (M @ udot)), "multipliers": lam, "udot": udot,
            "joint_torques": tau, "weights": weights}


def constant_moment_arm_cost(model, muscle, coordinate: str, d: float, values, q0=None) -> dict:
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


# ------------------------------------------------------------------------ drawing
def _world(model, q, body, loc) -> np.ndarray:
    ctx = _context(model, q)
    if body in ("ground", "world"):
        return np.asarray(loc, float)
    X = model.plant.EvalBodyPoseInWorld(ctx, model.plant.GetBodyByName(body))
    return X.translation() + X.rotation().matrix() @ np.asarray(loc, float)


def draw_configuration(model, q, muscle, coordinate: str, fig=None, show_lines: bool = True,
                       zoom: float | None = None):
    """Plotly figure of the planar model at ``q``: bones, the muscle path, and the textbook picture.

    For every path segment that joins two different bodies the dashed line of
    action is drawn, with the perpendicular from θ's joint centre to it (the
    "distance to the line of action"). ``zoom``: half-width (m) of the view
    around θ's joint centre (default: everything).
    """
    import plotly.graph_objects as go

    fig = go.Figure() if fig is None else fig
    coord = model.coordinate(coordinate)
    for body, pts in getattr(model, "sketch", []):
        P = np.array([_world(model, q, body, p) for p in pts])
        fig.add_scatter(x=P[:, 0], y=P[:, 1], mode="lines+markers", line=dict(color="#7f7f7f", width=7),
                        marker=dict(size=5, color="#7f7f7f"), name=body, showlegend=False, hoverinfo="name")
    name, path = _path(model, muscle)
    P = np.array([_world(model, q, p.body, p.location) for p in path.points])
    fig.add_scatter(x=P[:, 0], y=P[:, 1], mode="lines+markers", line=dict(color="#d62728", width=4),
                    marker=dict(size=8), name=f"{name} path")
    centres = getattr(model, "joint_centres", {})
    if coord.name in centres:
        c = _world(model, q, *centres[coord.name])
        fig.add_scatter(x=[c[0]], y=[c[1]], mode="markers", marker=dict(size=13, symbol="circle-open",
                        color="black", line=dict(width=3)), name=f"{coord.name} centre")
        if show_lines:
            shown = False
            for k in range(len(path.points) - 1):
                if path.points[k].body == path.points[k + 1].body:
                    continue
                a, b = P[k], P[k + 1]
                e = (b - a) / np.linalg.norm(b - a)
                ends = np.array([a - 0.6 * e * np.linalg.norm(b - a), b + 0.6 * e * np.linalg.norm(b - a)])
                foot = a + e * ((c - a) @ e)
                fig.add_scatter(x=ends[:, 0], y=ends[:, 1], mode="lines", line=dict(color="#ff9896", dash="dash"),
                                name="line of action", showlegend=not shown)
                fig.add_scatter(x=[c[0], foot[0]], y=[c[1], foot[1]], mode="lines",
                                line=dict(color="#2ca02c", width=3), name="distance to joint centre",
                                showlegend=not shown)
                shown = True
    fig.update_layout(xaxis=dict(title="x (m)", scaleanchor="y", scaleratio=1), yaxis=dict(title="y (m)"),
                      height=480, margin=dict(l=50, r=20, t=50, b=40))
    if zoom and coord.name in centres:
        c = _world(model, q, *centres[coord.name])
        fig.update_layout(xaxis_range=[c[0] - zoom, c[0] + zoom], yaxis_range=[c[1] - zoom, c[1] + zoom],
                          legend=dict(orientation="h", y=-0.15))
    return fig


def plot_moment_arm_curves(values, curves: dict, title: str = "", theta=None, constant: dict | None = None,
                           degrees: bool = True):
    """Plotly figure of moment-arm curves ``{label: (n,) array}`` (in cm) against θ.

    ``constant``: ``{label: d}`` drawn as horizontal lines (gait2d's constant arms).
    """
    import plotly.graph_objects as go

    x = np.degrees(values) if degrees else np.asarray(values)
    fig = go.Figure()
    dashes = ["solid", "dash", "dot", "dashdot", "longdash"]
    for k, (label, r) in enumerate(curves.items()):
        fig.add_scatter(x=x, y=100 * np.asarray(r), mode="lines", name=label,
                        line=dict(width=6 - min(k, 3), dash=dashes[k % len(dashes)]))
    for label, d in (constant or {}).items():
        fig.add_scatter(x=[x[0], x[-1]], y=[100 * d, 100 * d], mode="lines", name=label,
                        line=dict(color="gray", dash="dot"))
    if theta is not None:
        fig.add_vline(x=float(np.degrees(theta) if degrees else theta), line=dict(color="black", width=1))
    fig.update_layout(title=title, xaxis_title="θ (deg)" if degrees else "θ", yaxis_title="moment arm (cm)",
                      height=380, margin=dict(l=50, r=20, t=50, b=40))
    return fig


def plot_generalized_forces(model, q, muscle, coordinate: str, title: str = ""):
    """Bar chart of ``f = Jᵀ F`` (unit tension), ``C_θ`` and ``c_k f_k`` per coordinate."""
    import plotly.graph_objects as go

    coord = model.coordinate(coordinate)
    q = assemble(model, q, coord.path)
    f = path_generalized_forces(model, q, muscle, 1.0)
    C = coupling_vector(model, q, coord.path)
    names = [c.name for c in model.coordinates]
    fig = go.Figure()
    fig.add_bar(x=names, y=100 * f, name="f_k (N·cm per N)")
    fig.add_bar(x=names, y=100 * C * f, name="c_k f_k (cm)")
    fig.add_scatter(x=names, y=C, mode="markers+text", text=[f"c={c:.2f}" for c in C], textposition="top center",
                    name="coupling c_k", yaxis="y2", marker=dict(size=10, symbol="diamond", color="black"))
    top = max(1.0, float(np.max(C))) * 1.25
    fig.update_layout(title=title or f"generalized forces of a unit tension; Cᵀf = {100 * C @ f:.2f} cm",
                      barmode="group", yaxis=dict(title="cm"),
                      yaxis2=dict(title="c_k", overlaying="y", side="right", showgrid=False,
                                  range=[min(0.0, float(np.min(C))) - 0.1 * top, top], tickformat=".2f"),
                      height=360, margin=dict(l=50, r=50, t=50, b=40), legend=dict(orientation="h", y=-0.2))
    return fig


# ---------------------------------------------------------------------- dashboard
import ipywidgets as _W  # noqa: E402 - the dashboard below is an ipywidgets.VBox


class MomentArmPanel(_W.VBox):
    """Dashboard: drag θ, see the path, the line of action, ``f = JᵀF`` and the curves by each method.

    An ``ipywidgets.VBox``: display it in a notebook, or let Voila render the
    notebook's last expression ``MomentArmPanel()``. Curves (generalized force,
    perturbation, path velocity, and without the coupling vector) are
    computed when the model or muscle changes; the slider only redraws the
    configuration, the generalized forces and the marker on the curves.

    Parameters
    ----------
    model : str, optional
        Label of :attr:`MODELS` to start with (default: the patella knee).
    num_points : int, optional
        Angles per curve (default 61, 25 under ``MOCO_LAB_FAST=1``).
    """

    MODELS = {
        "Textbook: one pin, two-point path": ("single_pin", "elbow_flexion"),
        "Knee with a coupled patella": ("patella_knee", "knee_angle"),
        "Spine: flexion split over 3 joints": ("composite_joint", "flex1"),
    }

    ZOOM = {"single_pin": 0.32, "patella_knee": 0.2, "composite_joint": 0.25}  # half-width of the view (m)

    def __init__(self, model: str | None = None, num_points: int | None = None):
        import ipywidgets as W

        from . import coupled_models
        from .config import fast_mode

        self._factories = {"single_pin": coupled_models.single_pin, "patella_knee": coupled_models.patella_knee,
                           "composite_joint": coupled_models.composite_joint}
        self.num_points = num_points or (25 if fast_mode() else 61)
        labels = list(self.MODELS)
        self.model_select = W.Dropdown(options=labels, value=model or labels[1], description="model",
                                       layout=W.Layout(width="420px"))
        self.muscle_select = W.Dropdown(options=[], description="muscle")
        self.slider = W.FloatSlider(value=0.0, min=-1, max=1, step=0.01, description="θ (deg)",
                                    continuous_update=True, layout=W.Layout(width="520px"))
        self.numbers = W.HTML()
        self.numbers.add_class("ml-numbers")
        self.out_config, self.out_forces, self.out_curves = W.Output(), W.Output(), W.Output()
        self.header = W.HTML("<h2>Muscle moment arms: OpenSim's generalized-force method</h2>")
        self.header.add_class("ml-header")
        super().__init__([self.header, W.HBox([self.model_select, self.muscle_select]), self.slider,
                          self.numbers, W.HBox([self.out_config, self.out_curves]), self.out_forces])
        self._busy = False
        self.model_select.observe(self._on_model, names="value")
        self.muscle_select.observe(self._on_muscle, names="value")
        self.slider.observe(self._on_theta, names="value")
        self._on_model()

    @property
    def widget(self):
        """The panel itself (an ``ipywidgets.VBox``)."""
        return self

    def __repr__(self) -> str:  # stable text/plain for nbval (no model ids, no numbers)
        return f"MomentArmPanel(model={self.model_select.value!r})"

    # -- helpers
    @staticmethod
    def _show(out, fig) -> None:
        bundle = json.loads(fig.to_json())
        out.outputs = ({"output_type": "display_data", "data": {"application/vnd.plotly.v1+json": bundle},
                        "metadata": {}},)

    def _error(self, err: BaseException) -> None:
        import html

        self.numbers.value = f"<pre class='ml-error'>⚠ {html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>"

    def _on_model(self, change=None) -> None:
        factory, coordinate = self.MODELS[self.model_select.value]
        self._factory = factory
        self.model = self._factories[factory]()
        self.coordinate = self.model.coordinate(coordinate)
        lo, hi = self.coordinate.range
        if factory == "composite_joint":
            lo, hi = -0.6, 0.6
        self.values = np.linspace(lo, hi, self.num_points)
        self._busy = True
        try:
            new_min, new_max = round(float(np.degrees(lo)), 1), round(float(np.degrees(hi)), 1)
            value = 0.0 if lo <= 0 <= hi else round(float(np.degrees(lo + hi) / 2), 1)
            # Widen, move the value, then narrow: the value never leaves the range, so neither the kernel nor
            # the browser clamps it (a browser-side clamp would come back later and overwrite the value).
            with self.slider.hold_sync():
                self.slider.min, self.slider.max = min(self.slider.min, new_min), max(self.slider.max, new_max)
                self.slider.value = value
                self.slider.min, self.slider.max = new_min, new_max
            self.muscle_select.options = [m.name for m in self.model.muscles]
            self.muscle_select.value = self.model.muscles[0].name
        finally:
            self._busy = False
        self._on_muscle()

    def _on_muscle(self, change=None) -> None:
        if self._busy or not self.muscle_select.value:
            return
        try:
            muscle = self.muscle_select.value
            self.curves = {METHOD_LABELS[m]: moment_arm_curves(self.model, [muscle], self.coordinate.path,
                                                               self.values, method=m)[muscle]
                           for m in ("generalized_force", "perturbation", "path_velocity", "no_coupling")}
            self._on_theta()
        except Exception as err:  # noqa: BLE001 - shown in the panel
            self._error(err)

    def _on_theta(self, change=None) -> None:
        if self._busy:
            return
        try:
            theta = float(np.radians(self.slider.value))
            muscle = self.muscle_select.value
            q = np.zeros(self.model.nq)
            q[self.coordinate.q_index] = theta
            q = assemble(self.model, q, self.coordinate.path)
            r = {m: moment_arm(self.model, q, muscle, self.coordinate.path, method=m, assemble_first=False)
                 for m in ("generalized_force", "perturbation", "path_velocity", "no_coupling")}
            fig = draw_configuration(self.model, q, muscle, self.coordinate.path, zoom=self.ZOOM[self._factory])
            fig.update_layout(title=f"{self.model_select.value}: {self.coordinate.name} = {self.slider.value:.1f}°",
                              width=560)
            self._show(self.out_config, fig)
            bars = plot_generalized_forces(self.model, q, muscle, self.coordinate.path)
            bars.update_layout(height=340, width=1180, legend=dict(orientation="v", y=1, x=1.08))
            self._show(self.out_forces, bars)
            curves = plot_moment_arm_curves(self.values, self.curves, theta=theta,
                                            title=f"moment arm of {muscle} about {self.coordinate.name}")
            curves.update_layout(legend=dict(orientation="h", y=-0.2), height=480, width=620)
            self._show(self.out_curves, curves)
            rows = "".join(f"<tr><td>{METHOD_LABELS[m]}</td><td style='text-align:right'>{100 * v:.3f} cm</td></tr>"
                           for m, v in r.items())
            self.numbers.value = (f"<b>{muscle}</b> at {self.coordinate.name} = {self.slider.value:.1f}°, "
                                  f"path length {100 * path_length(self.model, q, muscle):.2f} cm"
                                  f"<table class='ml-table'>{rows}</table>")
        except Exception as err:  # noqa: BLE001 - shown in the panel
            self._error(err)
