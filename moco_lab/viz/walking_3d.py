"""Figures of lesson 16 and the 3-D walking dashboard: activations against the EMG envelopes, the pelvis residuals.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from ..analysis.walking_3d import EMG_GROUPS, group_activation, residual_loads
from ..examples.walking_3d import KneeLoadResult, walking_3d_emg
from ..modeling.model import Model
from ..results.trajectory import Trajectory

__all__ = ["plot_activations_vs_emg", "plot_residuals", "plot_knee_load"]

_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def plot_activations_vs_emg(solutions: Mapping[str, Trajectory],
                            emg: tuple[ArrayLike, Mapping[str, ArrayLike]] | None = None,
                            groups: Sequence[str] | None = None, *, height: int = 560) -> go.Figure:
    """Each EMG group's envelope (grey, filled) with the group's mean activation in each solution (a line per
    solution, labelled by its key), over the solutions' time range; one panel per group, two rows.

    Parameters
    ----------
    solutions : {label: Solution}
        Solutions of the 3-D walking inverse.
    emg : (time (n,), {group: envelope (n,)}), optional
        Default the trial's envelopes, scaled as the example scales them.
    groups : sequence of str, optional
        Default every group of :data:`~moco_lab.analysis.walking_3d.EMG_GROUPS`.
    """
    if not solutions:
        raise ValueError("plot_activations_vs_emg: give at least one solution ({label: solution})")
    t_emg, envelopes = emg if emg is not None else walking_3d_emg()
    t_emg = np.asarray(t_emg, float)
    names = list(groups) if groups is not None else [g for g in EMG_GROUPS if g in envelopes]
    first = next(iter(solutions.values()))
    t0, t1 = float(first.time[0]), float(first.time[-1])
    inside = (t_emg >= t0) & (t_emg <= t1)
    cols = (len(names) + 1) // 2
    fig = make_subplots(rows=2, cols=cols, shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.02,
                        vertical_spacing=0.12, subplot_titles=[g.replace("_", " ") for g in names])
    for k, g in enumerate(names):
        row, col = k // cols + 1, k % cols + 1
        fig.add_trace(go.Scatter(x=t_emg[inside], y=np.asarray(envelopes[g], float)[inside], fill="tozeroy",
                                 mode="lines", line=dict(color="rgba(120,120,120,0.6)", width=1),
                                 fillcolor="rgba(160,160,160,0.35)", name="EMG envelope", legendgroup="emg",
                                 showlegend=k == 0), row=row, col=col)
        for i, (label, sol) in enumerate(solutions.items()):
            t = np.asarray(sol.time, float)
            fig.add_trace(go.Scatter(x=t, y=group_activation(sol, g), mode="lines", name=label, legendgroup=label,
                                     line=dict(color=_COLOURS[i % len(_COLOURS)], width=2), showlegend=k == 0),
                          row=row, col=col)
    for col in range(1, cols + 1):
        fig.update_xaxes(title_text="time (s)", row=2, col=col)
    fig.update_yaxes(title_text="activation, EMG (–)", row=1, col=1)
    fig.update_yaxes(title_text="activation, EMG (–)", row=2, col=1)
    fig.update_yaxes(range=[0, 1.05])
    fig.update_layout(height=height, title="Right-leg muscle activity: the model's activations and the EMG envelopes",
                      legend=dict(orientation="h", y=-0.18), margin=dict(l=60, r=20, t=80, b=80))
    return fig


def plot_residuals(model: Model, solution: Trajectory, *, height: int = 380) -> go.Figure:
    """The pelvis residual forces (N, left) and moments (N·m, right) along ``solution``, with the force axis also
    read as a percentage of body weight in the title."""
    r = residual_loads(model, solution)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("residual forces", "residual moments"),
                        horizontal_spacing=0.12)
    for i, (c, f) in enumerate(r.forces.items()):
        col = 1 if r.units[c] == "N" else 2
        fig.add_trace(go.Scatter(x=r.time, y=f, mode="lines", name=c, line=dict(color=_COLOURS[i % len(_COLOURS)])),
                      row=1, col=col)
    fig.update_xaxes(title_text="time (s)")
    fig.update_yaxes(title_text="force (N)", row=1, col=1)
    fig.update_yaxes(title_text="moment (N·m)", row=1, col=2)
    fig.update_layout(height=height, title=f"Pelvis residuals: largest force {r.peak_force:.0f} N "
                                           f"({r.peak_force_percent:.1f} % of body weight), largest moment "
                                           f"{r.peak_moment:.0f} N·m", margin=dict(l=60, r=20, t=80, b=50))
    return fig


def plot_knee_load(results: Mapping[str, KneeLoadResult], *, height: int = 380) -> go.Figure:
    """The magnitude of each walker knee's reaction on the femur (body weights) over the trial, one line per
    solution (dashed: the left knee), from :func:`~moco_lab.examples.walking_3d_knee_load_results`."""
    fig = go.Figure()
    for i, (label, r) in enumerate(results.items()):
        for joint, dash in (("/jointset/walker_knee_r", "solid"), ("/jointset/walker_knee_l", "dash")):
            bw = np.linalg.norm(r.knee_force[joint], axis=1) / r.body_weight
            fig.add_trace(go.Scatter(x=r.time, y=bw, mode="lines", name=f"{label}, {joint[-1]} knee",
                                     line=dict(color=_COLOURS[i % len(_COLOURS)], dash=dash)))
    fig.update_layout(height=height, title="Knee reaction force on the femur", xaxis_title="time (s)",
                      yaxis_title="force (body weights)", margin=dict(l=60, r=20, t=60, b=50))
    return fig
