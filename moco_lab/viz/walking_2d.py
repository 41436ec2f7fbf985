"""Figures of Moco's 2-D walking (:mod:`moco_lab.examples.walking_2d`): a half gait cycle against the example's data,
and the full cycle animated."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.walking_2d import (
    ground_reaction_forces,
    reference_coordinates,
    reference_ground_reaction_forces,
)
from ..modeling.model import Model
from ..results.periodic import create_periodic_trajectory
from ..results.trajectory import Trajectory
from .pose import animate

__all__ = ["plot_walking_2d", "animate_walking_2d"]

_PANELS = (("hip_flexion_r", "right hip flexion"), ("knee_angle_r", "right knee angle"),
           ("ankle_angle_r", "right ankle angle"), ("hip_flexion_l", "left hip flexion"),
           ("knee_angle_l", "left knee angle"), ("ankle_angle_l", "left ankle angle"),
           ("pelvis_tilt", "pelvis tilt"), ("grf_x", "fore-aft GRF (solid right, dotted left)"),
           ("grf_y", "vertical GRF (solid right, dotted left)"))


def plot_walking_2d(model: Model, solutions: Mapping[str, Trajectory], *, reference: bool = True,
                    faded: Trajectory | None = None, title: str | None = None, height: int = 820) -> go.Figure:
    """Joint angles (degrees) and ground reaction forces (body weights) of half gait cycles, with the example's data.

    Parameters
    ----------
    model : Model
        The walker (``ml.examples.walking_2d_model()`` or an edited copy).
    solutions : dict of str -> Trajectory
        Label -> a half cycle (tracking or prediction solution). Each is drawn over its own time.
    reference : bool
        Draw the tracked data: the coordinates as the tracking sees them (filtered) and the measured forces, in grey
        (over the data's 0–0.47 s; a prediction's duration may differ).
    faded : Trajectory, optional
        Another half cycle drawn first, grey and dashed, labelled ``"previous"`` (a dashboard's last solution).
    """
    weight = model.body_weight()
    fig = make_subplots(rows=3, cols=3, horizontal_spacing=0.08, vertical_spacing=0.11,
                        subplot_titles=[label for _, label in _PANELS])
    palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"]
    drawn = ([("previous", faded, dict(color="#999999", width=1.5, dash="dash"))] if faded is not None else []) + [
        (label, sol, dict(color=palette[k % len(palette)], width=2)) for k, (label, sol) in enumerate(solutions.items())]
    forces = {label: ground_reaction_forces(model, sol) for label, sol, _ in drawn}
    ref_t, ref_q = reference_coordinates() if reference else (None, None)
    grf_t, grf = reference_ground_reaction_forces() if reference else (None, None)
    grey = dict(color="rgba(0,0,0,0.35)", width=5)
    for k, (key, _label) in enumerate(_PANELS):
        r, c = divmod(k, 3)
        r, c = r + 1, c + 1
        first = k == 0
        if key.startswith("grf"):
            axis = 0 if key == "grf_x" else 1
            for side, dash in (("r", None), ("l", "dot")):
                if reference:
                    fig.add_scatter(x=grf_t, y=grf[side][:, axis] / weight, line=dict(grey, dash=dash),
                                    name="data (Moco's example)", legendgroup="data", showlegend=False, row=r, col=c)
                for label, sol, line in drawn:
                    fig.add_scatter(x=sol.time, y=forces[label][side][:, axis] / weight, line=dict(line, dash=dash),
                                    name=label, legendgroup=label, showlegend=False, row=r, col=c)
            fig.update_yaxes(title_text="force (BW)", row=r, col=c)
        else:
            path = model.coordinate(key).value_path
            if reference:
                fig.add_scatter(x=ref_t, y=np.degrees(ref_q[path]), line=grey, name="data (Moco's example)",
                                legendgroup="data", showlegend=first, row=r, col=c)
            for label, sol, line in drawn:
                fig.add_scatter(x=sol.time, y=np.degrees(sol.states[path]), line=line, name=label, legendgroup=label,
                                showlegend=first, row=r, col=c)
            fig.update_yaxes(title_text="angle (deg)", row=r, col=c)
        fig.update_xaxes(title_text="time (s)", row=r, col=c)
    fig.update_layout(height=height, title=title or "Half a gait cycle against the example's data",
                      plot_bgcolor="white", legend=dict(orientation="h", y=-0.08))
    return fig


def animate_walking_2d(model: Model, half_cycle: Trajectory, *, frames: int = 60, title: str | None = None,
                       height: int = 520) -> go.Figure:
    """The full gait cycle of a symmetric half cycle (:func:`~moco_lab.results.periodic.create_periodic_trajectory`)
    as a stick-figure animation with a time slider and a play button."""
    full = create_periodic_trajectory(half_cycle)
    return animate(model, full, frames=frames, height=height,
                   title=title or f"A full gait cycle, {full.final_time - full.initial_time:.2f} s (press play)")
