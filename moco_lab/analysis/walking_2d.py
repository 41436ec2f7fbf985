"""What lesson 11 and the 2-D walking dashboard measure on Moco's 2-D walking (:mod:`moco_lab.examples.walking_2d`).

* :func:`ground_reaction_forces`: each foot's ground reaction force (its two contact spheres summed), from the
  compiled model — the forces the contact-tracking goal compares with the data;
* :func:`reference_ground_reaction_forces` and :func:`reference_coordinates`: the example's data (the ground reaction
  forces as the goal interpolates them; the coordinates low-pass filtered as the tracking sees them);
* :func:`walking_2d_summary`: duration, step length, speed, stance and double support, peak force — the numbers a
  gait study reports;
* :func:`cost_of_transport`: the metabolic energy per kilogram and metre of any half cycle, as the goal ``met`` of
  :func:`~moco_lab.examples.walking_2d.walking_2d_metabolics` integrates it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..examples.walking_2d import (
    WALKING_2D_CONTACTS,
    WALKING_2D_METABOLICS,
    walking_2d_add_metabolics,
    walking_2d_track,
)
from ..modeling.model import Model
from ..ocp.output_goals import OutputGoal
from ..results.sto import read_table
from ..results.tables import interpolating_spline
from ..results.trajectory import Trajectory
from ..tools.analyze import analyze
from ..tools.study import Study
from ..util.data import opensim_file

__all__ = ["ground_reaction_forces", "reference_ground_reaction_forces", "reference_coordinates",
           "Walking2dSummary", "walking_2d_summary", "cost_of_transport"]

_SIDES = {"r": "Right_GRF", "l": "Left_GRF"}


def ground_reaction_forces(model: Model, trajectory: Trajectory) -> dict[str, np.ndarray]:
    """Each foot's ground reaction force along ``trajectory``: ``{"r": (n, 2), "l": (n, 2)}`` (forward and vertical,
    N, in the walking plane; as gait2d's), the sum of its heel and front spheres' forces on the foot (the forces the
    ``contact`` goal tracks)."""
    paths = {side: WALKING_2D_CONTACTS[name] for side, name in _SIDES.items()}
    table = analyze(model, trajectory, [f"{p}/force" for ps in paths.values() for p in ps])
    return {side: sum(np.column_stack([table[f"{p}/force_{a}"] for a in "xy"]) for p in ps)
            for side, ps in paths.items()}


def reference_ground_reaction_forces(time: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The example's measured ground reaction forces (``referenceGRF.sto``): ``(time, {"r": (n, 2), "l": (n, 2)})``
    (forward and vertical, N).

    At the file's own times, or at ``time`` through the natural quintic splines the contact-tracking goal uses.
    """
    t, cols, _ = read_table(opensim_file("referenceGRF.sto"))
    out = {s: np.column_stack([cols[f"ground_force_{s}_v{a}"] for a in "xy"]) for s in _SIDES}
    if time is None:
        return t, out
    time = np.asarray(time, float)
    return time, {s: interpolating_spline(t, v)(np.clip(time, t[0], t[-1])) for s, v in out.items()}


def reference_coordinates() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The tracked reference (``referenceCoordinates.sto`` low-pass filtered at 6 Hz, speeds from the positions'
    splines), as the tracking problem sees it: ``(time, {state path: values})``."""
    track = walking_2d_track()
    return track.reference_time.copy(), {k: v.copy() for k, v in track.reference.items()}


@dataclass
class Walking2dSummary:
    """A half gait cycle of the 2-D walker in numbers (:func:`walking_2d_summary`).

    Attributes
    ----------
    duration : float, s
        Of the half cycle (one step).
    step_length : float, m
        Forward displacement of the pelvis over the half cycle.
    speed : float, m/s
        Average forward speed of the centre of mass.
    stance_r, double_support : float
        Fractions of the half cycle with the right foot on the ground, with both feet (a foot is on the ground
        where its vertical force exceeds 5 % of body weight).
    peak_vertical_grf : float, body weights
    """

    duration: float
    step_length: float
    speed: float
    stance_r: float
    double_support: float
    peak_vertical_grf: float


def walking_2d_summary(model: Model, trajectory: Trajectory, threshold: float = 0.05) -> Walking2dSummary:
    """Duration, step, speed, stance, double support and peak vertical force of a half cycle."""
    t = np.asarray(trajectory.time, float)
    grf = ground_reaction_forces(model, trajectory)
    weight = model.body_weight()
    on = {s: grf[s][:, 1] > threshold * weight for s in "rl"}
    com = analyze(model, trajectory, "/com_position")
    x = trajectory.states[model.coordinate("pelvis_tx").value_path]
    return Walking2dSummary(
        duration=float(t[-1] - t[0]), step_length=float(x[-1] - x[0]),
        speed=float((com["/com_position_x"][-1] - com["/com_position_x"][0]) / (t[-1] - t[0])),
        stance_r=float(on["r"].mean()), double_support=float((on["r"] & on["l"]).mean()),
        peak_vertical_grf=float(max(grf[s][:, 1].max() for s in "rl") / weight))


def cost_of_transport(model: Model, trajectory: Trajectory) -> float:
    """The metabolic cost of transport of a half cycle in J/(kg·m): ``∫ Ė dt / (m d)``.

    ``Ė`` is the total rate of the model's ``Bhargava2004SmoothedMuscleMetabolics`` at
    :data:`~moco_lab.examples.walking_2d.WALKING_2D_METABOLICS` (added to ``model`` by
    :func:`~moco_lab.examples.walking_2d.walking_2d_add_metabolics` if it has none), ``m`` the model's mass and ``d``
    the centre of mass' forward displacement: the goal ``met`` of
    :func:`~moco_lab.examples.walking_2d.walking_2d_metabolics` with weight 1, evaluated (not solved) on
    ``trajectory`` over its own time range on a Hermite–Simpson grid of ``(n − 1) / 2`` intervals for ``n`` times —
    the solver's own integral for a Hermite–Simpson solution — so that a solution minimizing effort and one
    minimizing metabolic energy are measured alike.
    """
    t = np.asarray(trajectory.time, float)
    n = t.size
    if n < 3 or n % 2 == 0:
        raise ValueError(f"cost_of_transport: the trajectory has {n} times; it needs a Hermite–Simpson grid "
                         "(2N + 1 times: mesh points and midpoints), as the walking studies' solutions have")
    study = Study("cost_of_transport")
    study.problem.set_model(walking_2d_add_metabolics(model))
    study.problem.set_time_bounds(float(t[0]), float(t[-1]))
    study.problem.add_goal(OutputGoal("met", 1.0, output_path=f"{WALKING_2D_METABOLICS}/total_metabolic_rate",
                                      divide_by_displacement=True, divide_by_mass=True))
    study.solver.transcription_scheme = "hermite-simpson"
    study.solver.num_mesh_intervals = (n - 1) // 2
    return float(study.evaluate(trajectory).goal_values["met"])
