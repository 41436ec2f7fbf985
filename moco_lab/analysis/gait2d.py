"""The gait2d reference manual's model tests that need no optimizer: strength curves and contact forces.

* :func:`joint_moments`: the moments the muscles (in steady state) and the passive range-of-motion
  elements produce at given joint angles and angular velocities, with chosen muscles fully active;
* :func:`strength_curves`: the manual's isometric test (moment against angle with the muscles that make a
  positive moment active, then those that make a negative one, then none; §4, Figure 5) and its isokinetic
  test (moment against angular velocity, §4, Figure 6);
* :func:`heel_force_curves`: the manual's ground-reaction-force test (vertical force against hip height at
  five vertical speeds, friction against slip speed at three heights);
* :func:`freefall_residuals`: the manual's freefall test (the dynamics residuals of a model at rest in the air
  with gravity's acceleration, the columns of the manual's printed table by name, and each contact point's force).

Steady state (as the manual's tests define it): with constant moment arms and constant angular velocities,
the muscle–tendon length changes at ``L̇_m = −Σ_j d_j ω_j``; a steady tendon force means a constant tendon
length, so the contractile element moves at ``V_CE = L̇_m / L_CEopt``, and its length is the root of the
force balance (Eq. 3) at that velocity.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..modeling.contact import Gait2dContactPoint
from ..modeling.gait2d import Gait2dMuscle
from ..modeling.model import Model
from ..modeling.passive import PassiveJointMoment
from ..results.trajectory import Trajectory
from ..util.checks import finite_number

__all__ = ["steady_fiber_length", "joint_moments", "strength_curves", "heel_force_curves", "derivative_check",
           "FreefallResiduals", "freefall_residuals",
           "ground_reaction_forces", "GaitPhases", "gait_phases", "JOINTS"]

#: The manual's joints and the coordinate names of the right leg (add ``_l`` for the left).
JOINTS = {"hip": "hip_flexion", "knee": "knee_angle", "ankle": "ankle_angle"}


def steady_fiber_length(muscle: Gait2dMuscle, activation: float, lm: float, vce: float = 0.0) -> float:
    """The normalized fiber length at which Eq. 3 balances, for muscle–tendon length ``lm`` (m) and fiber velocity
    ``vce`` (L_CEopt/s). Found by bracketing between a fiber so short that the tendon is stretched far beyond
    its strength (three times u_max) and one so long that the parallel element outpulls the slack tendon.

    The Gaussian force–length curve (Eq. 4) never reaches zero, so when the muscle–tendon unit is shorter than
    its slack tendon the balance lies at a *negative* fiber length, where an active muscle still pulls (about a
    third of F_max for the hamstrings with the hip extended and the knee flexed). That is what the model's
    equations say; optimizations keep fiber lengths positive with bounds (default 0.2–2 L_CEopt).
    """
    def residual(lce: float) -> float:
        return float(muscle.forces(activation, lce, vce, lm, np)["residual"])

    lo = (lm - muscle.see_slack * (1.0 + 3.0 * muscle.umax)) / muscle.optimal_fiber_length  # tendon force ≥ 9 F_max
    hi = lm / muscle.optimal_fiber_length + muscle.pee_slack + 1.0
    if not (residual(lo) > 0 > residual(hi)):
        raise ValueError(f"{muscle.path}: no equilibrium fiber length between {lo} and {hi:.3f} L_CEopt "
                         f"(muscle–tendon length {lm:.4f} m, activation {activation}, V_CE {vce})")
    return brentq(residual, lo, hi, xtol=1e-14, rtol=1e-14)


def joint_moments(model: Model, angles: Mapping[str, float], velocities: Mapping[str, float] | None = None,
                  active: Sequence[str] = (), passive_elements: bool = True,
                  activation: float = 1.0) -> dict[str, float]:
    """Joint moments (N·m) of the gait2d muscles in steady state plus the passive range-of-motion moments.

    Parameters
    ----------
    model : Model
        A gait2d model (:func:`moco_lab.models.gait2d`).
    angles, velocities : dict of coordinate name -> rad, rad/s
        Joint angles and angular velocities; coordinates not given are 0.
    active : sequence of str
        Paths of the active muscles, at ``activation`` (the others at zero).
    passive_elements : bool
        Include the ``PassiveJointMoment`` elements (Eq. 1).
    activation : float
        The active muscles' activation, in [0, 1] (default 1: full activation, as the manual's strength tests).

    Returns
    -------
    dict of coordinate name -> moment
        For every coordinate a muscle or passive element acts on.
    """
    velocities = velocities or {}
    level = finite_number(activation, "joint_moments: activation")
    if not 0.0 <= level <= 1.0:
        raise ValueError(f"joint_moments: activation must be within [0, 1], got {activation!r}")
    out: dict[str, float] = {}
    active = set(active)
    muscles = [e for e in model.force_elements if isinstance(e, Gait2dMuscle)]
    unknown = active - {m.path for m in muscles}
    if unknown:
        raise KeyError(f"joint_moments: no gait2d muscles {sorted(unknown)} in the model")
    for m in muscles:
        lm = m.musculotendon_length({c: angles.get(c, 0.0) for c in m.moment_arms})
        lm_rate = -sum(d * velocities.get(c, 0.0) for c, d in m.moment_arms.items())
        vce = lm_rate / m.optimal_fiber_length
        a = level if m.path in active else 0.0
        lce = steady_fiber_length(m, a, lm, vce)
        force = m.max_isometric_force * float(m.forces(a, lce, vce, lm, np)["tendon"])
        for c, d in m.moment_arms.items():
            out[c] = out.get(c, 0.0) + d * force
    if passive_elements:
        for e in model.force_elements:
            if isinstance(e, PassiveJointMoment):
                moment = e.moment(angles.get(e.coordinate, 0.0), velocities.get(e.coordinate, 0.0))
                out[e.coordinate] = out.get(e.coordinate, 0.0) + float(moment)
    return out


def _acting(model: Model, coordinate: str, sign: int) -> list[str]:
    return [e.path for e in model.force_elements
            if isinstance(e, Gait2dMuscle) and sign * e.moment_arms.get(coordinate, 0.0) > 0]


def strength_curves(model: Model, joint: str, *, angles_deg: Sequence[float] | None = None,
                    velocities_deg: Sequence[float] | None = None, posture_deg: Mapping[str, float] | None = None,
                    side: str = "r") -> dict:
    """The manual's isometric (``angles_deg``) or isokinetic (``velocities_deg``) strength test at one joint.

    For each angle (or angular velocity) the joint moment with the muscles that make a positive moment fully
    active, with those that make a negative moment fully active, and with none (the passive moment: passive
    muscle forces and Eq. 1). ``posture_deg``: the other joints' angles (coordinate name -> degrees; the
    isokinetic test of the manual flexes the knees 5°).

    Returns
    -------
    dict
        ``"x"`` (the angles or velocities, degrees or degrees/s), ``"positive"``, ``"negative"``, ``"passive"``
        (N·m, arrays), ``"coordinate"``, ``"positive_muscles"``, ``"negative_muscles"``.
    """
    if joint not in JOINTS:
        raise ValueError(f"strength_curves: joint must be one of {list(JOINTS)}, got {joint!r}")
    if (angles_deg is None) == (velocities_deg is None):
        raise ValueError("strength_curves: give angles_deg (isometric) or velocities_deg (isokinetic), not both")
    coordinate = f"{JOINTS[joint]}_{side}"
    posture = {c: math.radians(v) for c, v in (posture_deg or {}).items()}
    groups = {"positive": _acting(model, coordinate, +1), "negative": _acting(model, coordinate, -1), "passive": []}
    xs = np.asarray(angles_deg if angles_deg is not None else velocities_deg, float)
    result = {k: np.empty(xs.size) for k in groups}
    for i, x in enumerate(xs):
        angles, velocities = dict(posture), {}
        if angles_deg is not None:
            angles[coordinate] = math.radians(x)
        else:
            velocities[coordinate] = math.radians(x)
        for name, muscles in groups.items():
            result[name][i] = joint_moments(model, angles, velocities, muscles)[coordinate]
    return {"x": xs, **result, "coordinate": coordinate, "positive_muscles": groups["positive"],
            "negative_muscles": groups["negative"]}


def heel_force_curves(model: Model, hip_heights: Sequence[float], vertical_speeds: Sequence[float] = (),
                      horizontal_speeds: Sequence[float] = (), foot_tilt: float = 0.3, side: str = "r") -> dict:
    """The manual's GRF test: upright, both feet tilted by ``foot_tilt`` (rad, toes up) so that only the heels touch.

    Returns ``{"vertical": (len(hip_heights), len(vertical_speeds)), "horizontal": (len(horizontal_speeds),
    len(hip_heights))}``: the vertical force of the heel at each hip height and vertical speed, and the friction
    force at each horizontal speed and height (N), computed by the heel's :class:`Gait2dContactPoint` from the
    model's kinematics.
    """
    from ..engine.kernel import kernel_for

    heel = model.force_element(f"/forceset/contact_heel_{side}")
    if not isinstance(heel, Gait2dContactPoint):
        raise TypeError(f"heel_force_curves: {heel.path} is not a gait2d contact point")
    kernel = kernel_for(model)
    names = [c.name for c in model.coordinates]
    i_y, i_x = names.index("hip_y"), names.index("hip_x")
    base = np.zeros(model.nq)
    base[names.index(f"ankle_angle_{side}")] = foot_tilt
    base[names.index(f"ankle_angle_{'l' if side == 'r' else 'r'}")] = foot_tilt
    out = f"{heel.path}/force"

    def forces(heights, speeds, axis):
        Q = np.repeat(base[None], len(heights) * len(speeds), 0)
        U = np.zeros_like(Q)
        for k, (h, v) in enumerate((h, v) for h in heights for v in speeds):
            Q[k, i_y] = h
            U[k, axis] = v
        F = kernel.outputs([out], Q, U)[out]
        return F.reshape(len(heights), len(speeds), 3)

    result = {}
    if len(vertical_speeds):
        result["vertical"] = forces(hip_heights, vertical_speeds, i_y)[:, :, 1]
    if len(horizontal_speeds):
        result["horizontal"] = forces(hip_heights, horizontal_speeds, i_x)[:, :, 0].T
    return result


def derivative_check(model: Model, seed: int = 0, h: float = 1e-6) -> dict[str, dict]:
    """The manual's derivatives test: the compiled Jacobians against central finite differences at a random state.

    Blocks as the manual names them, with moco_lab's variables: ``df/dx`` (q, q̇ and the muscle states),
    ``df/dxdot`` (q̈ and the fiber velocities, which play ẋ's part), ``df/du`` (excitations); f stacks the
    multibody residuals, the muscle state derivatives and the contraction residuals.

    Returns
    -------
    dict
        Block name -> ``{"max_difference", "row", "col", "analytic", "numeric"}`` at the element with the largest
        difference (0-based row and column, as numpy reports them).
    """
    from ..engine.kernel import kernel_for

    k = kernel_for(model)
    rng = np.random.default_rng(seed)
    v = {"dq": rng.uniform(0, 1, k.nq), "du": rng.uniform(0, 1, k.nq), "dz": rng.uniform(0.5, 1, k.nz),
         "dw": 0.1 * rng.normal(size=k.nw), "dx": rng.uniform(0, 1, k.nx), "da": 0.1 * rng.normal(size=k.nq)}
    v["dq"][1] += 0.5  # the hip well above the ground: the contact model is smooth but very steep near y = 0

    def f(a: dict) -> np.ndarray:
        r = k.evaluate(a["dq"][None], a["du"][None], a["dx"][None], None, Z=a["dz"][None], A=a["da"][None],
                       W=a["dw"][None])
        return np.concatenate([r["R"][0], r["Zd"][0], r["Rw"][0]])

    res = k.evaluate(v["dq"][None], v["du"][None], v["dx"][None], None, Z=v["dz"][None], A=v["da"][None],
                     W=v["dw"][None], jac=True)

    def exact(key: str) -> np.ndarray:
        if key == "da":
            return np.vstack([res["J"]["da"][0], np.zeros((k.nz + k.nw, k.nq))])
        return np.vstack([res["J"][key][0], res["JZ"][key][0], res["JW"][key][0]])

    blocks = {"df/dx": ("dq", "du", "dz"), "df/dxdot": ("da", "dw"), "df/du": ("dx",)}
    out = {}
    for name, keys in blocks.items():
        analytic, numeric = [], []
        for key in keys:
            analytic.append(exact(key))
            cols = []
            for j in range(v[key].size):
                plus, minus = dict(v), dict(v)
                plus[key], minus[key] = v[key].copy(), v[key].copy()
                plus[key][j] += h
                minus[key][j] -= h
                cols.append((f(plus) - f(minus)) / (2 * h))
            numeric.append(np.column_stack(cols))
        A, N = np.hstack(analytic), np.hstack(numeric)
        diff = np.abs(A - N)
        i, j = np.unravel_index(np.argmax(diff), diff.shape)
        out[name] = {"max_difference": float(diff[i, j]), "row": int(i), "col": int(j), "analytic": float(A[i, j]),
                     "numeric": float(N[i, j])}
    return out


@dataclass(frozen=True)
class FreefallResiduals:
    """The residuals of the manual's freefall test, named as the columns of its printed table (§4).

    Attributes
    ----------
    multibody : ndarray, shape (9,)
        The equations of motion in coordinate order, with the sign of the manual's Autolev code (moco_lab's own
        residual ``M q̈ + c − τ`` negated).
    contraction : ndarray, shape (16,)
        Each muscle's force balance (Eq. 3), in muscle order (N / F_max).
    activation : ndarray, shape (16,)
        ``ȧ − (u − a)(c₁u + c₂)`` with the state derivative ``ȧ = 0`` the test sets, in muscle order.
    contact : dict of str -> ndarray, shape (2,)
        Each contact point's force (forward, vertical; N), keys ``"heel_r"``, ``"toe_r"``, ``"heel_l"``, ``"toe_l"``.
    feet : dict of str -> ndarray, shape (2,)
        Each foot's force, heel plus toe: ``"r"``, ``"l"``.
    """

    multibody: np.ndarray
    contraction: np.ndarray
    activation: np.ndarray
    contact: dict
    feet: dict


def freefall_residuals(model: Model, pose: Mapping[str, float], fiber_length: float = 1.4,
                       vertical_acceleration: float = -9.81) -> FreefallResiduals:
    """The manual's freefall test: the residuals of gait2d at rest in ``pose``, falling freely.

    Every coordinate not in ``pose`` (name -> value, rad or m) is 0, every speed 0, every muscle inactive
    (``u = a = 0``) with its normalized contractile-element length ``fiber_length`` (1.4: long enough that the
    tendons are slack), every acceleration 0 but the hip's vertical one, ``vertical_acceleration`` (m/s²), and
    every other state derivative 0. A model that falls freely has residuals near zero; not exactly, because the
    smooth contact model pushes a little even in the air and slack muscles and joints make small passive forces.
    """
    from ..engine.kernel import kernel_for

    k = kernel_for(model)
    names = [c.name for c in model.coordinates]
    unknown = sorted(set(pose) - set(names))
    if unknown:
        raise KeyError(f"freefall_residuals: pose names no coordinate {unknown[0]!r}; the coordinates are {names}")
    q = np.array([float(pose.get(n, 0.0)) for n in names])
    aux = model.auxiliary_state_names()
    z = np.array([fiber_length if s.endswith("/normalized_fiber_length") else 0.0 for s in aux])
    acc = np.zeros(k.nq)
    acc[names.index("hip_y")] = vertical_acceleration
    zero_u = np.zeros((1, k.nq))
    r = k.evaluate(q[None], zero_u, np.zeros((1, k.nx)), None, Z=z[None], A=acc[None], W=np.zeros((1, k.nw)))
    activation = np.array([0.0 - r["Zd"][0][i] for i, s in enumerate(aux) if s.endswith("/activation")])
    points = [f"{p}_{s}" for s in "rl" for p in ("heel", "toe")]
    forces = k.outputs([f"/forceset/contact_{p}/force" for p in points], q[None], zero_u)
    contact = {p: np.asarray(forces[f"/forceset/contact_{p}/force"][0][:2], float) for p in points}
    return FreefallResiduals(multibody=0.0 - np.asarray(r["R"][0], float), contraction=np.asarray(r["Rw"][0], float),
                             activation=activation, contact=contact,
                             feet={s: contact[f"heel_{s}"] + contact[f"toe_{s}"] for s in "rl"})


def ground_reaction_forces(model: Model, trajectory: Trajectory) -> dict[str, np.ndarray]:
    """Each foot's ground reaction force along a trajectory: ``{"r": (n, 2), "l": (n, 2)}`` (x, y in N), the sum of
    its heel and toe contact forces (needs every coordinate's value and speed)."""
    from ..engine.kernel import kernel_for

    k = kernel_for(model)
    Q = np.column_stack([trajectory.states[c.value_path] for c in model.coordinates])
    U = np.column_stack([trajectory.states[c.speed_path] for c in model.coordinates])
    out = {}
    for side in ("r", "l"):
        names = [f"/forceset/contact_heel_{side}/force", f"/forceset/contact_toe_{side}/force"]
        F = k.outputs(names, Q, U)
        out[side] = np.asarray(F[names[0]])[:, :2] + np.asarray(F[names[1]])[:, :2]
    return out


@dataclass
class GaitPhases:
    """Which foot is on the ground along a gait cycle (see :func:`gait_phases`).

    Attributes
    ----------
    on : dict of str -> (n,) bool array
        ``"r"``, ``"l"``: the foot's vertical force exceeds the threshold at each node (the cycle's last node, a
        repeat of the first, left out).
    stance_r, stance_l, double_support, flight : float
        Fractions of the cycle: each foot on the ground, both, neither (a flight phase: running).
    """

    on: dict
    stance_r: float
    stance_l: float
    double_support: float
    flight: float


def gait_phases(model: Model, trajectory: Trajectory, threshold: float = 0.05) -> GaitPhases:
    """Stance, double support and flight of a periodic gait2d cycle: a foot is on the ground where its vertical
    force (:func:`ground_reaction_forces`) exceeds ``threshold`` body weights."""

    grf = ground_reaction_forces(model, trajectory)
    limit = threshold * model.body_weight()
    on = {s: grf[s][:-1, 1] > limit for s in "rl"}
    return GaitPhases(on, float(on["r"].mean()), float(on["l"].mean()), float((on["r"] & on["l"]).mean()),
                      float((~on["r"] & ~on["l"]).mean()))
