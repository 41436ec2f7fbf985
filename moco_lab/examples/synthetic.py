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

from ..modeling.gait2d import gait2d
from ..modeling.model import Model
from ..results.trajectory import read_trajectory
from ..util.data import GAIT2D_TRACKED_WALK

__all__ = ["SyntheticWalk", "synthetic_walk"]


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
    true_com, true_forces : (T, 2) arrays
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
    mass: float
    height: float
    model: Model


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


def synthetic_walk(mass: float = 68.0, height: float = 1.75, *, rate: float = 100.0, strides: int = 2,
                   com_noise: float = 0.0, force_noise: float = 0.0, seed: int = 0) -> SyntheticWalk:
    """Walking data of a known subject: COM positions and residual-free ground reaction forces (module docstring).

    Parameters
    ----------
    mass, height : float
        The subject (kg, m); the generic gait2d model is 75 kg and 1.80 m.
    rate : float, Hz
        Frame rate (a gait lab's force plates record faster; 100 Hz is a common capture rate).
    strides : int
        Gait cycles (1.14 s each).
    com_noise, force_noise : float
        Standard deviations of independent Gaussian noise on each COM coordinate (m) and each force component (N)
        at each frame.
    seed : int
        Seed of the one random generator (:func:`numpy.random.default_rng`).

    Returns
    -------
    SyntheticWalk
    """
    if not (mass > 0 and height > 0 and rate > 0 and strides >= 1):
        raise ValueError(f"synthetic_walk: mass, height and rate must be positive and strides >= 1; got mass {mass}, "
                         f"height {height}, rate {rate}, strides {strides}")
    if com_noise < 0 or force_noise < 0:
        raise ValueError(f"synthetic_walk: noise levels must be >= 0, got {com_noise} m and {force_noise} N")
    model = gait2d(mass, height, muscles=False)
    splines, duration, advance = _walk_splines()
    scale = height / 1.80  # the cycle was predicted for the 1.80 m model: a taller subject takes longer steps
    dt = 1.0 / rate
    n = int(round(strides * duration * rate))
    time = np.arange(n + 2) * dt - dt  # one frame before and after: the forces use central differences
    coords = {}
    for name, spline in splines.items():
        v = spline(np.mod(time, duration))
        if name == "hip_x":
            v = scale * (v + advance * time / duration)
        elif name == "hip_y":
            v = scale * v
        coords[name] = v
    model.require_drake_kinematics("synthetic_walk")
    plant = model.plant
    context = plant.CreateDefaultContext()
    Q = np.column_stack([coords[c.name] for c in model.coordinates])  # model.coordinates are in q order
    com = np.empty((time.size, 2))
    for i, q in enumerate(Q):
        plant.SetPositions(context, q)
        com[i] = plant.CalcCenterOfMassPositionInWorld(context)[:2]
    g = np.asarray(model.plant.gravity_field().gravity_vector(), float)[:2]
    accel = (com[2:] - 2 * com[1:-1] + com[:-2]) / dt ** 2
    forces = mass * (accel - g)
    true_com = com[1:-1]
    rng = np.random.default_rng(seed)
    noisy_com = true_com + rng.normal(0.0, com_noise, true_com.shape) if com_noise > 0 else true_com.copy()
    noisy_forces = forces + rng.normal(0.0, force_noise, forces.shape) if force_noise > 0 else forces.copy()
    return SyntheticWalk(time[1:-1], dt, {k: v[1:-1] for k, v in coords.items()}, noisy_com, noisy_forces,
                         true_com, forces, float(mass), float(height), model)
