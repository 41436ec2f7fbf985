"""What the planar walkers (gait2d and Moco's 2-D walker) share, beyond each one's own module.

Each walker keeps its own analysis (:mod:`moco_lab.analysis.gait2d`, :mod:`moco_lab.analysis.walking_2d`: their
contact models differ), with the same shapes: ``ground_reaction_forces(model, trajectory)`` gives
``{"r": (n, 2), "l": (n, 2)}`` (forward and vertical, N) for both, and a model's weight is
:meth:`Model.body_weight <moco_lab.modeling.model.Model.body_weight>`. Shared here:

* :func:`average_speed` and :func:`stretch_to_speed`: a gait cycle's average forward speed, and its forward motion
  rescaled to another one (a first guess for walking faster or slower);
* :func:`closest_shipped`: of the warm starts moco_lab ships for several meshes, the one closest to a mesh.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Mapping

import numpy as np

from ..results.trajectory import Trajectory, read_trajectory

__all__ = ["average_speed", "stretch_to_speed", "closest_shipped"]


def average_speed(trajectory: Trajectory, hip_x: str) -> float:
    """How fast ``trajectory`` advances on average (m/s): the forward position ``hip_x`` (a state path) at the end
    minus at the start, over the duration."""
    x = np.asarray(trajectory.states[hip_x], float)
    return float((x[-1] - x[0]) / (trajectory.final_time - trajectory.initial_time))


def stretch_to_speed(guess: Trajectory, hip_x: str, speed: float) -> Trajectory:
    """``guess`` with the forward position ``hip_x`` (a state path; and its speed) rescaled so that it advances at
    ``speed`` (m/s) on average.

    The joint angles stay: a first guess for walking faster or slower with the same stride time. A guess that does
    not advance is returned unchanged (a copy).
    """
    out = guess.copy()
    x = np.asarray(out.states[hip_x], float)
    current = average_speed(out, hip_x)
    if current <= 0:
        return out
    factor = speed / current
    states = dict(out.states)
    states[hip_x] = x[0] + (x - x[0]) * factor
    speed_path = hip_x.rsplit("/", 1)[0] + "/speed"
    if speed_path in states:
        states[speed_path] = np.asarray(states[speed_path], float) * factor
    return Trajectory(out.time, states, out.controls, out.multipliers, out.derivatives, out.parameters)


@functools.lru_cache(maxsize=8)
def _read(path: Path) -> Trajectory:
    return read_trajectory(path)


def closest_shipped(files: Mapping[int, Path], num_mesh_intervals: int) -> Trajectory:
    """The shipped trajectory (``files``: mesh intervals -> ``.sto``) whose mesh is closest to
    ``num_mesh_intervals`` (the smaller on a tie); a copy, safe to change, of a file read once."""
    n = min(files, key=lambda k: (abs(k - num_mesh_intervals), k))
    return _read(Path(files[n])).copy()
