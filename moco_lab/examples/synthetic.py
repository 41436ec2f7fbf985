"""A synthetic walking subject whose every number is known: the data of the motion-capture lessons.

:func:`synthetic_walk` makes a gait lab's data of a subject who is not the generic model: van den Bogert's gait2d
model (:func:`moco_lab.models.gait2d`) scaled to the subject's mass and height walks the gait cycle with which
moco_lab's gait2d tracks Winter's normal gait (the tracking solution shipped in ``moco_lab/data/gait2d``: joint
angles within 1–3° and ground reaction forces within 0.05 body weights of Winter's means), resampled at the lab's
frame rate with periodic cubic splines and repeated for several strides; a taller subject's hip moves
proportionally further and higher. From that motion it computes the whole
body's centre of mass frame by frame and the ground reaction force that makes the motion *residual-free*: the
force for which the COM's semi-implicit Euler steps (:mod:`moco_lab.tools.mass_fit`) are exact. Measurement noise
(COM position, force) is added on request, every random draw from one seeded generator.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from ..modeling.gait2d import gait2d, gait2d_segment_lengths
from ..modeling.model import Model
from ..results.trajectory import read_trajectory
from ..tools.marker_ik import Marker, marker_trajectories
from ..util.data import GAIT2D_TRACKED_WALK

__all__ = ["SyntheticWalk", "synthetic_walk", "GAIT2D_MARKER_SET", "gait2d_markers", "MarkerTrial",
           "synthetic_markers"]


@dataclass
class SyntheticWalk:
    """A synthetic subject's walking data (see :func:`synthetic_walk`).

    Attributes
    ----------
    time : (T,) array, s
        Frame times, ``dt`` apart, from 0.
    dt : float, s
        Frame interval (1 / frame rate).
    coordinates : dict of str -> (T,) array
        The model's coordinates by name (rad; ``hip_x``, ``hip_y`` in m).
    com : (T, 2) array, m
        The centre of mass (x forward, y up), with the requested noise.
    forces : (T, 2) array, N
        The total ground reaction force, with the requested noise.
    cop : (T, 2) array, m
        The centre of pressure, the point on the floor (y = 0) where ``forces`` act with no couple: the net
        ground reaction as one force plate spanning both feet reports it, with the requested noise on x.
    true_com, true_forces, true_cop : (T, 2) arrays
        The same without noise (residual-free).
    mass, height : float
        The subject's true mass (kg) and height (m).
    model : Model
        The subject's gait2d model.
    """

    time: np.ndarray
    dt: float
    coordinates: dict
    com: np.ndarray
    forces: np.ndarray
    true_com: np.ndarray
    true_forces: np.ndarray
    cop: np.ndarray
    true_cop: np.ndarray
    mass: float
    height: float
    model: Model

    @property
    def q(self) -> np.ndarray:
        """The true coordinates (T, nq), in ``model.coordinates`` order (the model's q order)."""
        return np.column_stack([self.coordinates[c.name] for c in self.model.coordinates])


def _walk_splines() -> tuple[dict, float, float]:
    """Periodic splines of the shipped cycle's coordinates (hip_x without its advance), the cycle's duration and
    the hip's advance per cycle."""
    cycle = read_trajectory(GAIT2D_TRACKED_WALK)
    t = cycle.time - cycle.time[0]
    duration = float(t[-1])
    splines, advance = {}, 0.0
    for path, values in cycle.states.items():
        if not path.endswith("/value") or not path.startswith("/jointset/"):
            continue
        name = path.split("/")[-2]
        v = np.asarray(values, float).copy()
        if name == "hip_x":
            advance = float(v[-1] - v[0])
            v = v - v[0] - advance * t / duration
        v[-1] = v[0]  # periodic to round-off already; make it exact for the spline
        splines[name] = CubicSpline(t, v, bc_type="periodic")
    return splines, duration, advance


def synthetic_walk(mass: float = 68.0, height: float = 1.75, *, segment_scales: dict | None = None,
                   segment_mass_scales: dict | None = None, rate: float = 100.0, strides: int = 2,
                   com_noise: float = 0.0, force_noise: float = 0.0, cop_noise: float = 0.0,
                   seed: int = 0) -> SyntheticWalk:
    """Walking data of a known subject: COM positions and residual-free ground reaction forces (module docstring).

    Parameters
    ----------
    mass, height : float
        The subject (kg, m); the generic gait2d model is 75 kg and 1.80 m.
    segment_scales : dict, optional
        The subject's proportions (:func:`~moco_lab.modeling.gait2d.gait2d`'s ``segment_scales``: trunk, thigh,
        shank, foot); the hip's path scales with the leg (thigh + shank) length.
    segment_mass_scales : dict, optional
        How the subject's mass is distributed unlike the model's (``gait2d``'s ``segment_mass_scales``; the total
        stays ``mass``).
    rate : float, Hz
        Frame rate (a gait lab's force plates record faster; 100 Hz is a common capture rate).
    strides : int
        Gait cycles (1.14 s each).
    com_noise, force_noise, cop_noise : float
        Standard deviations of independent Gaussian noise on each COM coordinate (m), each force component (N)
        and the centre of pressure's x (m) at each frame.
    seed : int
        Seed of the one random generator (:func:`numpy.random.default_rng`).

    Returns
    -------
    SyntheticWalk
    """
    if not (mass > 0 and height > 0 and rate > 0 and strides >= 1):
        raise ValueError(f"synthetic_walk: mass, height and rate must be positive and strides >= 1; got mass {mass}, "
                         f"height {height}, rate {rate}, strides {strides}")
    if min(com_noise, force_noise, cop_noise) < 0:
        raise ValueError(f"synthetic_walk: noise levels must be >= 0, got {com_noise} m, {force_noise} N and "
                         f"{cop_noise} m")
    model = gait2d(mass, height, muscles=False, segment_scales=segment_scales,
                   segment_mass_scales=segment_mass_scales)
    splines, duration, advance = _walk_splines()
    generic, subject = gait2d_segment_lengths(gait2d(muscles=False)), gait2d_segment_lengths(model)
    # the cycle was solved for the generic model: a longer leg takes proportionally longer steps, hip higher
    scale = (subject["thigh"] + subject["shank"]) / (generic["thigh"] + generic["shank"])
    dt = 1.0 / rate
    n = int(round(strides * duration * rate))
    time = np.arange(n + 2) * dt - dt  # one frame before and after: the forces use central differences
    coords, rates, accels = {}, {}, {}
    tau = np.mod(time, duration)
    for name, spline in splines.items():
        v, vd, vdd = spline(tau), spline(tau, 1), spline(tau, 2)
        if name == "hip_x":
            v, vd, vdd = scale * (v + advance * time / duration), scale * (vd + advance / duration), scale * vdd
        elif name == "hip_y":
            v, vd, vdd = scale * v, scale * vd, scale * vdd
        coords[name], rates[name], accels[name] = v, vd, vdd
    model.require_drake_kinematics("synthetic_walk")
    plant = model.plant
    context = plant.CreateDefaultContext()
    order = [c.name for c in model.coordinates]  # model.coordinates are in q order (v = q̇ for gait2d's joints)
    Q, V, A = (np.column_stack([d[c] for c in order]) for d in (coords, rates, accels))
    com = np.empty((time.size, 2))
    couple = np.empty(time.size)  # the moment about the COM that the ground must supply
    root = [order.index(c) for c in ("hip_x", "hip_y", "trunk_angle")]
    trunk = plant.GetBodyByName("trunk")
    from pydrake.multibody.tree import MultibodyForces
    for i, q in enumerate(Q):
        plant.SetPositions(context, q)
        plant.SetVelocities(context, V[i])
        com[i] = plant.CalcCenterOfMassPositionInWorld(context)[:2]
        # inverse dynamics with the motion's exact (spline) accelerations: the root's generalized forces are the
        # external wrench the motion needs, a force at the trunk's origin (the hip) and a couple about it
        applied = MultibodyForces(plant)
        plant.CalcForceElementsContribution(context, applied)  # gravity
        tau = plant.CalcInverseDynamics(context, A[i], applied)[root]
        hip = trunk.EvalPoseInWorld(context).translation()[:2]
        couple[i] = tau[2] + (hip[0] - com[i, 0]) * tau[1] - (hip[1] - com[i, 1]) * tau[0]
    g = np.asarray(model.plant.gravity_field().gravity_vector(), float)[:2]
    accel = (com[2:] - 2 * com[1:-1] + com[:-2]) / dt ** 2
    forces = mass * (accel - g)
    true_com = com[1:-1]
    # centre of pressure on the floor y = 0: the moment of F at (x, 0) about the COM, (x − c_x) F_y + c_y F_x,
    # equals the couple the motion needs
    cop = np.column_stack([true_com[:, 0] + (couple[1:-1] - true_com[:, 1] * forces[:, 0]) / forces[:, 1],
                           np.zeros(len(forces))])
    rng = np.random.default_rng(seed)
    noisy_com = true_com + rng.normal(0.0, com_noise, true_com.shape) if com_noise > 0 else true_com.copy()
    noisy_forces = forces + rng.normal(0.0, force_noise, forces.shape) if force_noise > 0 else forces.copy()
    noisy_cop = cop.copy()
    if cop_noise > 0:
        noisy_cop[:, 0] += rng.normal(0.0, cop_noise, len(cop))
    return SyntheticWalk(time[1:-1], dt, {k: v[1:-1] for k, v in coords.items()}, noisy_com, noisy_forces,
                         true_com, forces, noisy_cop, cop, float(mass), float(height), model)


#: A planar marker set for gait2d: name -> (body, location, kind). Locations on the trunk, thigh and shank are in
#: segment lengths from the segment's proximal joint (x forward, y along the segment, up); ``"heel"`` and
#: ``"toe"`` are the foot's contact points. Anatomical markers sit over bony landmarks (placed within millimetres);
#: tracking markers anywhere on the segment (placed less carefully).
GAIT2D_MARKER_SET = {
    "shoulder": ("trunk", (0.0, 1.0), "anatomical"),
    "chest": ("trunk", (0.2, 0.6), "tracking"),
    **{k: v for side in ("r", "l") for k, v in {
        f"trochanter_{side}": (f"thigh_{side}", (0.0, -0.1), "anatomical"),
        f"thigh_{side}": (f"thigh_{side}", (0.15, -0.5), "tracking"),
        f"knee_{side}": (f"thigh_{side}", (0.0, -1.0), "anatomical"),
        f"shank_{side}": (f"shank_{side}", (0.12, -0.5), "tracking"),
        f"ankle_{side}": (f"shank_{side}", (0.0, -1.0), "anatomical"),
        f"heel_{side}": (f"foot_{side}", "heel", "anatomical"),
        f"toe_{side}": (f"foot_{side}", "toe", "anatomical"),
    }.items()},
}


def gait2d_markers(model: Model) -> list[Marker]:
    """The markers of :data:`GAIT2D_MARKER_SET` placed on a gait2d model (its own segment lengths and contact
    points): where a lab would put them on this model."""
    lengths = gait2d_segment_lengths(model)
    out = []
    for name, (body, where, _kind) in GAIT2D_MARKER_SET.items():
        if isinstance(where, str):
            location = model.force_element(f"/forceset/contact_{where}_{body[-1]}").location
        else:
            length = lengths[body.split("_")[0]]
            location = (where[0] * length, where[1] * length, 0.0)
        out.append(Marker(name, body, location))
    return out


@dataclass
class MarkerTrial:
    """Synthetic marker data of a :class:`SyntheticWalk` (see :func:`synthetic_markers`).

    Attributes
    ----------
    time : (T,) array, s
    data : dict of str -> (T, 2) array, m
        Measured marker positions (x forward, y up) with noise.
    true_markers : list of Marker
        Where the markers really are on the subject's model (including the placement errors).
    generic_markers : list of Marker
        The same markers placed on the generic (75 kg, 1.80 m) model, where a lab would start.
    walk : SyntheticWalk
        The motion (its ``coordinates`` are the true joint angles).
    """

    time: np.ndarray
    data: dict
    true_markers: list
    generic_markers: list
    walk: SyntheticWalk


def synthetic_markers(walk: SyntheticWalk, *, anatomical_error: float = 0.005, tracking_error: float = 0.015,
                      noise: float = 0.005, seed: int = 0) -> MarkerTrial:
    """Marker trajectories of the synthetic subject: each marker of :data:`GAIT2D_MARKER_SET` placed on the
    subject's model with a random placement error (standard deviation ``anatomical_error`` or ``tracking_error``
    per axis, m, fixed for the trial), moved with the walk, plus independent measurement ``noise`` (m, per axis
    and frame). One seeded generator draws everything."""
    if min(anatomical_error, tracking_error, noise) < 0:
        raise ValueError(f"synthetic_markers: errors and noise must be >= 0, got {anatomical_error}, "
                         f"{tracking_error}, {noise}")
    rng = np.random.default_rng(seed)
    true = []
    for m in gait2d_markers(walk.model):
        sd = anatomical_error if GAIT2D_MARKER_SET[m.name][2] == "anatomical" else tracking_error
        dx, dy = rng.normal(0.0, sd, 2) if sd > 0 else (0.0, 0.0)
        true.append(Marker(m.name, m.body, (m.location[0] + dx, m.location[1] + dy, 0.0)))
    P = marker_trajectories(walk.model, true, walk.q)[:, :, :2]  # (T, M, 2)
    if noise > 0:
        P = P + rng.normal(0.0, noise, P.shape)
    data = {m.name: P[:, k] for k, m in enumerate(true)}
    return MarkerTrial(walk.time.copy(), data, true, gait2d_markers(gait2d(muscles=False)), walk)
