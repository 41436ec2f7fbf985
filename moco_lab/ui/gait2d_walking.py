"""The gait2d walking dashboard's problem: predict a gait cycle, change speed, effort and muscle strength, re-predict.

The hooks of the ``"gait2d_walking"`` demo problem (registered in :mod:`moco_lab.ui.demos`):

* :func:`build_gait2d_walking` poses :func:`~moco_lab.examples.gait2d.gait2d_prediction_study` for the
  dashboard's settings: the walking ``speed`` (the stride time stays Winter's 1.1396 s), the goals ``effort``
  (weight and exponent from the goal widgets) and ``angles`` (tracking Winter's joint angles; weight 0, i.e.
  off, by default), and the strength of each muscle group (``strength_<muscle>``, % of its maximum isometric
  force, both legs). Its guess is the last successful solution (``warm_start="yes"``) or the predicted cycle
  shipped with moco_lab for the mesh (made by ``benchmarks/gait2d_warm_starts.py``), with the hip's forward
  position stretched to the requested speed.
* :func:`gait2d_walking_figures`: the walk animated (with the ground reaction forces) and the joint angles and
  ground reaction forces against Winter's normal gait (± 1 SD), the previous solution dashed.
* :func:`gait2d_walking_numbers`: effort, stance, double-support and flight fractions, peak vertical force, peak
  activations of the right calf muscles.
"""
from __future__ import annotations

import functools

import numpy as np

from ..analysis.gait2d import gait_phases, ground_reaction_forces
from ..analysis.walking import closest_shipped, stretch_to_speed
from ..examples.gait2d import gait2d_prediction_study, winter_gait
from ..modeling.gait2d import GAIT2D_MUSCLES, gait2d
from ..results.trajectory import Solution, Trajectory
from ..tools.study import Study
from ..util.config import mesh
from ..util.data import GAIT2D_PREDICTED_WALK
from ..viz.gait2d import animate_gait2d, plot_against_winter
from .warm_start import WarmStart

__all__ = ["MUSCLE_GROUPS", "build_gait2d_walking", "gait2d_walking_figures", "gait2d_walking_numbers",
           "gait2d_walking_plotted", "keep_for_warm_start", "shipped_walk"]

#: The eight muscle groups of each leg (gait2d's muscles without the side suffix).
MUSCLE_GROUPS = tuple(m[:-2] for m in GAIT2D_MUSCLES if m.endswith("_r"))
#: Short labels of the groups (the dashboard's strength fields).
SHORT_NAMES = {"iliopsoas": "iliopsoas", "glutei": "glutei", "hamstrings": "hamstrings", "rectus_femoris": "rect. fem.",
               "vasti": "vasti", "gastrocnemius": "gastroc.", "soleus": "soleus", "tibialis_anterior": "tib. ant."}
_LAST = WarmStart()  # the latest successful solution: the next solve's warm start


def shipped_walk(num_mesh_intervals: int) -> Trajectory:
    """The shipped predicted cycle (minimum effort at Winter's speed) whose mesh is closest to ``num_mesh_intervals``.

    A copy, safe to change. The files and their provenance: ``moco_lab/data/gait2d/predicted_walk.md``.
    """
    return closest_shipped(GAIT2D_PREDICTED_WALK, num_mesh_intervals)


def _strengths(settings: dict) -> dict[str, float]:
    out = {}
    for group in MUSCLE_GROUPS:
        value = float(settings.get(f"strength_{group}", 100.0))
        if not (0.0 < value <= 300.0):
            raise ValueError(f"strength of {group} must be within (0, 300] % of normal, got {value}")
        out[group] = value
    return out


def build_gait2d_walking(settings: dict) -> Study:
    """The dashboard's problem for ``settings`` (module docstring): a :class:`~moco_lab.tools.study.Study`.

    Raises ``ValueError`` naming the setting for a speed outside [0.3, 2.5] m/s or a strength outside (0, 300] %.
    """
    speed = float(settings.get("speed", winter_gait().speed))
    if not 0.3 <= speed <= 2.5:
        raise ValueError(f"walking speed must be within [0.3, 2.5] m/s, got {speed}")
    strengths = _strengths(settings)
    n = int(settings.get("mesh_intervals", mesh(50, 25)))
    study = gait2d_prediction_study(n, speed=speed, tracking_weight=1.0)
    study.name = "gait2d_walking"
    study.problem.get_goal("angles").weight = 0.0  # off unless the learner gives it a weight
    model = study.problem.model
    for group, percent in strengths.items():
        for side in ("r", "l"):
            element = model.force_element(f"/forceset/{group}_{side}")
            model.set_property(f"{element.path}/max_isometric_force", element.max_isometric_force * percent / 100)
    last = _LAST.latest(settings)
    guess = last.as_trajectory() if last is not None else shipped_walk(n)
    study.solver.guess = stretch_to_speed(guess, model.coordinate("hip_x").value_path, speed)
    return study


@functools.lru_cache(maxsize=1)
def _drawing_model():
    """The model the walk is drawn on (strength does not change the drawing)."""
    return gait2d()


#: After a solve (the demo's ``after_solve`` hook): a successful solution becomes the next solve's guess.
keep_for_warm_start = _LAST.keep


def gait2d_walking_plotted(solution: Solution) -> list[str]:
    """The panel's states-and-controls figure shows the right leg's eight activations."""
    return [f"/forceset/{g}_r/activation" for g in MUSCLE_GROUPS]


def gait2d_walking_figures(solution: Solution, previous: Solution | None, settings: dict) -> dict:
    """``"motion"`` (the animation) and ``"winter"`` (angles and GRFs against Winter, the previous dashed)."""
    model = _drawing_model()
    label = "solution" if solution.success else f"last iterate ({solution.status})"
    return {"motion": animate_gait2d(model, solution, frames=mesh(40, 12), height=420,
                                     title=f"The predicted cycle at {float(settings.get('speed', 1.325)):g} m/s "
                                           "(press play)"),
            "winter": plot_against_winter(model, {label: solution}, faded=previous, height=620,
                                          title="Joint angles and ground reaction forces against Winter (± 1 SD)")}


def gait2d_walking_numbers(solution: Solution, settings: dict) -> dict:
    """Effort, stance of each foot, double support, flight (neither foot on the ground: running), peak vertical GRF
    and the right calf's peak activations. A foot is on the ground where its vertical force exceeds 5 % of the body
    weight."""
    model = _drawing_model()
    weight = model.body_weight()
    grf = ground_reaction_forces(model, solution)
    ph = gait_phases(model, solution)
    numbers = {"effort": f"{solution.goal_values.get('effort', float('nan')):.3f}",
               "stance r / l": f"{100 * ph.stance_r:.0f} / {100 * ph.stance_l:.0f} %",
               "double support": f"{100 * ph.double_support:.0f} %",
               "flight": f"{100 * ph.flight:.0f} %",
               "peak vertical GRF": f"{max(grf[s][:, 1].max() for s in 'rl') / weight:.2f} BW"}
    for m in ("soleus", "gastrocnemius"):
        numbers[f"peak {m}_r"] = f"{float(np.max(solution.states[f'/forceset/{m}_r/activation'])):.2f}"
    return numbers
