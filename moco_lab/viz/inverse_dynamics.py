"""Figures of inverse dynamics (:mod:`moco_lab.tools.inverse_dynamics`): generalized forces over time against a
reference, the root's residual force in percent of body weight against AddBiomechanics' lines, and residual
wrenches side by side (before and after fitting segment masses, :mod:`moco_lab.tools.root_residual`)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from ..tools.inverse_dynamics import IDResult
from ..tools.root_residual import RootResidual

__all__ = ["plot_generalized_forces", "plot_residual_percent", "plot_root_residuals"]

_LINES = ((5, "solid"), (2, "dash"), (1, "dot"))


def plot_generalized_forces(result: IDResult, coordinates: Sequence[str], *,
                            reference: tuple[ArrayLike, Mapping[str, ArrayLike]] | None = None,
                            reference_label: str = "reference", label: str = "moco_lab", title: str | None = None,
                            columns: int = 3, height: int | None = None) -> go.Figure:
    """One panel per coordinate: the generalized force of ``result`` (N·m or N, per its units) against time, and,
    if given, a reference ``(time (n,), {coordinate: (n,)})`` (e.g. an OpenSim ``.sto`` read by coordinate name).

    Raises ``KeyError`` naming a coordinate the result does not have."""
    missing = [c for c in coordinates if c not in result.forces]
    if missing:
        from ..util.names import did_you_mean

        raise KeyError(did_you_mean(missing[0], list(result.forces), "coordinate"))
    rows = -(-len(coordinates) // columns)
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=list(coordinates), vertical_spacing=0.12)
    for k, name in enumerate(coordinates):
        r, c = k // columns + 1, k % columns + 1
        fig.add_trace(go.Scatter(x=result.time, y=result.forces[name], name=label, line=dict(color="#1f77b4"),
                                 showlegend=k == 0, legendgroup="a"), row=r, col=c)
        if reference is not None and name in reference[1]:
            fig.add_trace(go.Scatter(x=np.asarray(reference[0], float), y=np.asarray(reference[1][name], float),
                                     name=reference_label, line=dict(color="#ff7f0e", dash="dash"),
                                     showlegend=k == 0, legendgroup="b"), row=r, col=c)
        unit = result.units[name]
        fig.update_yaxes(title_text=f"{'moment' if unit == 'N·m' else 'force'} ({unit})", row=r, col=c)
        if k + columns >= len(coordinates):  # the bottom panel of each column
            fig.update_xaxes(title_text="time (s)", row=r, col=c)
    fig.update_layout(title=title or "Inverse dynamics: generalized forces", height=height or 260 * rows + 80)
    return fig


def plot_residual_percent(result: IDResult, body_weight: float, *, root: Sequence[str] = ("pelvis_tx", "pelvis_ty",
                                                                                         "pelvis_tz"),
                          window: tuple[float, float] | None = None, title: str | None = None,
                          height: int = 380) -> go.Figure:
    """The magnitude of the root's residual force (the generalized forces of its three translations) in percent of
    ``body_weight`` (N) against time, with AddBiomechanics' 5 %, 2 % and 1 % lines; ``window`` (s) shades where
    the feet are on force plates and scales the axis to those frames (outside them the residual is the unsupported
    body weight, about 100 %, and leaves the plot)."""
    F = np.linalg.norm(np.column_stack([result.forces[n] for n in root]), axis=1)
    fig = go.Figure(go.Scatter(x=result.time, y=100 * F / float(body_weight), name="|residual force|",
                               line=dict(color="#1f77b4")))
    for level, dash in _LINES:
        fig.add_hline(y=level, line=dict(color="#888", dash=dash), annotation_text=f"{level} %",
                      annotation_position="right")
    if window is not None:
        fig.add_vrect(x0=window[0], x1=window[1], fillcolor="#2ca02c", opacity=0.08, line_width=0,
                      annotation_text="on the force plates", annotation_position="top left")
        inside = (result.time >= window[0]) & (result.time <= window[1])
        top = max(6.0, 1.3 * float(np.max(100 * F[inside] / float(body_weight)))) if inside.any() else None
        if top is not None:  # scaled to the plates' frames; off them the curve (the body weight) leaves the plot
            fig.update_yaxes(range=[0.0, top])
    fig.update_layout(title=title or "Residual force at the root", height=height,
                      xaxis_title="time (s)", yaxis_title="residual force (% body weight)")
    return fig


def plot_root_residuals(residuals: Mapping[str, RootResidual], *, title: str | None = None,
                        height: int = 560) -> go.Figure:
    """Residual wrenches by label (e.g. ``{"model's masses": fit.before, "fitted masses": fit.after}``) against
    time: the force in % of body weight (top) and the moment in % of body weight times the centre-of-mass height
    (bottom), each with the 5 %, 2 % and 1 % lines; the legend gives each label's RMS force / moment."""
    if not residuals:
        raise ValueError("plot_root_residuals: give at least one residual (label -> RootResidual)")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=["residual force", "residual moment"])
    colors = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
    for k, (label, res) in enumerate(residuals.items()):
        if not isinstance(res, RootResidual):
            raise TypeError(f"plot_root_residuals: {label!r} must be a RootResidual, got {type(res).__name__}")
        s = res.summary()
        name = f"{label} (RMS {s['force_rms']:.1f} % / {s['moment_rms']:.1f} %)"
        for row, y in enumerate((res.force_percent(), res.moment_percent()), start=1):
            fig.add_trace(go.Scatter(x=res.time, y=y, name=name, legendgroup=label, showlegend=row == 1,
                                     line=dict(color=colors[k % len(colors)])), row=row, col=1)
    for row in (1, 2):
        for level, dash in _LINES:
            fig.add_hline(y=level, line=dict(color="#888", dash=dash), annotation_text=f"{level} %",
                          annotation_position="right", row=row, col=1)
    fig.update_yaxes(title_text="force (% body weight)", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="moment (% BW × COM height)", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="time (s)", row=2, col=1)
    fig.update_layout(title=title or "Residual wrench at the root", height=height,
                      legend=dict(orientation="h", y=-0.15, x=0))
    return fig
