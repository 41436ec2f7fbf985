"""The 2-D walking dashboard's problem: Moco's 2-D walking prediction, re-predicted as speed, effort and strength change.

The hooks of the ``"walking_2d"`` demo problem (registered in :mod:`moco_lab.ui.demos`):

* :func:`build_walking_2d` poses :func:`~moco_lab.examples.walking_2d.walking_2d_prediction` for the dashboard's
  settings: the average ``speed``, the goal ``effort`` (weight and exponent from the goal widgets; divided by the
  distance walked, as in Moco's example), and the strength of one muscle group (``muscle``, ``strength`` in % of its
  maximum isometric force, both legs). Its guess is the last successful solution (``warm_start="yes"``) or the
  prediction shipped with moco_lab for the mesh (made by ``benchmarks/walking_2d_warm_starts.py``), its forward
  motion stretched to the requested speed.
* :func:`walking_2d_figures`: the full gait cycle animated, and joint angles and ground reaction forces over the half
  cycle against the example's tracking data, the previous solution dashed.
* :func:`walking_2d_numbers`: duration of a step, step length, stance and double support, peak vertical force, the
  weakened muscle's peak activation.
"""
from __future__ import annotations

import functools

import numpy as np

from ..analysis.walking import closest_shipped, stretch_to_speed
from ..analysis.walking_2d import walking_2d_summary
from ..examples.walking_2d import walking_2d_model, walking_2d_prediction
from ..results.trajectory import Solution, Trajectory
from ..tools.study import Study
from ..util.config import mesh
from ..util.data import WALKING_2D_PREDICTED
from ..viz.walking_2d import animate_walking_2d, plot_walking_2d
from .warm_start import WarmStart

__all__ = ["MUSCLE_GROUPS", "build_walking_2d", "walking_2d_figures", "walking_2d_numbers", "walking_2d_plotted",
           "keep_for_warm_start", "shipped_prediction"]

#: The nine muscle groups of each leg of ``2D_gait.osim`` (the muscles' names without the side suffix).
MUSCLE_GROUPS = ("hamstrings", "bifemsh", "glut_max", "iliopsoas", "rect_fem", "vasti", "gastroc", "soleus", "tib_ant")
_LAST = WarmStart()  # the latest successful solution: the next solve's warm start


def shipped_prediction(num_mesh_intervals: int) -> Trajectory:
    """The shipped minimum-effort prediction at 1.2 m/s whose mesh is closest to ``num_mesh_intervals`` (a copy).

    The files and their provenance: ``moco_lab/data/walking_2d/predicted_walk.md``.
    """
    return closest_shipped(WALKING_2D_PREDICTED, num_mesh_intervals)


@functools.lru_cache(maxsize=1)
def _model():
    """The walker as read from the file (drawing, numbers); each solve edits its own copy."""
    return walking_2d_model()


def build_walking_2d(settings: dict) -> Study:
    """The dashboard's problem for ``settings`` (module docstring): a :class:`~moco_lab.tools.study.Study`.

    Raises ``ValueError`` naming the setting for a speed outside [0.5, 2] m/s, an unknown muscle group, or a strength
    outside (0, 300] %.
    """
    speed = float(settings.get("speed", 1.2))
    if not 0.5 <= speed <= 2.0:
        raise ValueError(f"walking speed must be within [0.5, 2] m/s, got {speed}")
    group = settings.get("muscle", "soleus")
    if group not in MUSCLE_GROUPS:
        raise ValueError(f"muscle must be one of {list(MUSCLE_GROUPS)}, got {group!r}")
    strength = float(settings.get("strength", 100.0))
    if not 0.0 < strength <= 300.0:
        raise ValueError(f"strength of {group} must be within (0, 300] % of normal, got {strength}")
    n = int(settings.get("mesh_intervals", mesh(50, 15)))
    model = walking_2d_model()
    for side in ("r", "l"):
        element = model.force_element(f"/{group}_{side}")
        model.set_property(f"{element.path}/max_isometric_force",
                           element.properties()["max_isometric_force"] * strength / 100)
    last = _LAST.latest(settings)
    guess = last.as_trajectory() if last is not None else shipped_prediction(n)
    guess = stretch_to_speed(guess, model.coordinate("pelvis_tx").value_path, speed)
    study = walking_2d_prediction(guess, model, speed=speed, num_mesh_intervals=n)
    study.name = "walking_2d"
    return study


#: After a solve (the demo's ``after_solve`` hook): a successful solution becomes the next solve's guess.
keep_for_warm_start = _LAST.keep


def walking_2d_plotted(solution: Solution) -> list[str]:
    """The panel's states-and-controls figure shows the right leg's nine activations."""
    return [f"/{g}_r/activation" for g in MUSCLE_GROUPS]


def walking_2d_figures(solution: Solution, previous: Solution | None, settings: dict) -> dict:
    """``"motion"`` (the full cycle animated) and ``"data"`` (angles and forces against the example's data, the
    previous solution dashed)."""
    model = _model()
    label = "prediction" if solution.success else f"last iterate ({solution.status})"
    return {"motion": animate_walking_2d(model, solution, frames=mesh(40, 12), height=460,
                                         title=f"A full gait cycle at {float(settings.get('speed', 1.2)):g} m/s "
                                               "(press play)"),
            "data": plot_walking_2d(model, {label: solution}, faded=previous, height=760,
                                    title="Half a gait cycle against the tracking data of Moco's example")}


def walking_2d_numbers(solution: Solution, settings: dict) -> dict:
    """Step duration and length, stance and double support of the half cycle, peak vertical ground reaction force, and
    the peak activation of the chosen muscle group (right leg)."""
    s = walking_2d_summary(_model(), solution)
    group = settings.get("muscle", "soleus")
    return {"step": f"{s.duration:.3f} s, {s.step_length:.2f} m",
            "double support": f"{100 * s.double_support:.0f} %",
            "peak vertical GRF": f"{s.peak_vertical_grf:.2f} BW",
            f"peak {group}_r activation": f"{float(np.max(solution.states[f'/{group}_r/activation'])):.2f}"}
