"""Figures of the motion-capture lessons and dashboard: residuals against the gait-lab thresholds, residuals over
time, marker errors, and a fitted gait2d model drawn over the true subject.

* :func:`plot_residual_bars` — RMS residual force (% of peak GRF, lines at 5 % and 2 %) and moment (% of peak GRF
  × COM height, line at 1 %) of several reconstructions side by side;
* :func:`plot_residuals_over_time` — residual force and moment of each reconstruction against time;
* :func:`plot_marker_errors` — each marker's RMS distance from its measurement;
* :func:`plot_fit_over_truth` — the fitted model's stick figure over the true subject's at one frame, with the
  measured markers.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..modeling.model import Model
from .gait2d import gait2d_points

__all__ = ["RESIDUAL_LINES", "plot_residual_bars", "plot_residuals_over_time", "plot_marker_errors",
           "plot_fit_over_truth"]

#: The thresholds drawn: (panel, level %, label).
RESIDUAL_LINES = (("force", 5.0, "5 % (Hicks)"), ("force", 2.0, "2 % (AddBiomechanics)"),
                  ("moment", 1.0, "1 % (Hicks)"))
_COLORS = ("#7f7f7f", "#ff7f0e", "#9467bd", "#2ca02c", "#1f77b4", "#d62728")
#: The same reconstruction in the same colour in every figure (lesson 14, the dashboard); others cycle.
_LABEL_COLORS = {"raw IK": "#7f7f7f", "smoothed": "#ff7f0e", "masses alone": "#9467bd",
                 "masses + kinematics": "#2ca02c"}


def _color(label: str, i: int) -> str:
    for key, color in _LABEL_COLORS.items():
        if label.startswith(key):
            return color
    return _COLORS[i % len(_COLORS)]


def plot_residual_bars(percents: Mapping[str, tuple[float, float]], *, title: str | None = None,
                       height: int = 380) -> go.Figure:
    """Bars of ``{label: (force %, moment %)}`` (from :func:`moco_lab.tools.residual_reduction.residual_percent`)
    with the threshold lines; a logarithmic axis when the values span more than two decades."""
    labels = list(percents)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("RMS residual force / peak GRF",
                                                        "RMS residual moment / (peak GRF × COM height)"),
                        horizontal_spacing=0.12)
    colors = [_color(lab, i) for i, lab in enumerate(labels)]
    log = {}
    for col, k in ((1, 0), (2, 1)):
        vals = [float(percents[lab][k]) for lab in labels]
        fig.add_bar(x=labels, y=vals, marker_color=colors, text=[f"{v:.2f} %" for v in vals],
                    textposition="outside", showlegend=False, row=1, col=col)
        positive = [v for v in vals if v > 0]
        log[col] = bool(positive) and max(positive) / min(positive) > 100
        if log[col]:
            fig.update_yaxes(type="log", row=1, col=col)
    for panel, level, text in RESIDUAL_LINES:
        col = 1 if panel == "force" else 2
        fig.add_hline(y=level, line_dash="dash", line_color="gray", row=1, col=col)
        # annotations sit in axis coordinates, which a log axis takes as log10 of the value
        axis = "" if col == 1 else "2"
        fig.add_annotation(x=1, xref=f"x{axis} domain", y=float(np.log10(level)) if log[col] else level,
                           yref=f"y{axis}", text=text, showarrow=False, xanchor="right", yanchor="bottom",
                           font=dict(size=11, color="#555"))
    fig.update_yaxes(title_text="residual force (% of peak GRF)", row=1, col=1)
    fig.update_yaxes(title_text="residual moment (%)", row=1, col=2)
    fig.update_layout(title=title or "Residuals against the gait-lab thresholds", height=height,
                      margin=dict(l=60, r=20, t=80, b=60), uniformtext_minsize=9, uniformtext_mode="hide")
    return fig


def plot_residuals_over_time(time: Sequence[float], residuals: Mapping[str, np.ndarray], *,
                             body_weight: float | None = None, title: str | None = None,
                             height: int = 420) -> go.Figure:
    """Residual force magnitude and moment of each reconstruction (``{label: (T, 3) array}``) against time; in
    body weights (force) if ``body_weight`` (N) is given."""
    t = np.asarray(time, float)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("residual force |F_res|", "residual moment M_res"),
                        horizontal_spacing=0.12)
    scale = 1.0 / body_weight if body_weight else 1.0
    for i, (label, R) in enumerate(residuals.items()):
        R = np.asarray(R, float)
        color = _color(label, i)
        fig.add_scatter(x=t, y=np.linalg.norm(R[:, :2], axis=1) * scale, name=label, legendgroup=label,
                        line=dict(color=color), row=1, col=1)
        fig.add_scatter(x=t, y=R[:, 2], name=label, legendgroup=label, showlegend=False, line=dict(color=color),
                        row=1, col=2)
    fig.update_xaxes(title_text="time (s)")
    fig.update_yaxes(title_text="force (body weights)" if body_weight else "force (N)", row=1, col=1)
    fig.update_yaxes(title_text="moment about the COM (N·m)", row=1, col=2)
    fig.update_layout(title=title or "Residuals over the trial", height=height)
    return fig


def plot_marker_errors(errors: Mapping[str, np.ndarray], names: Sequence[str], *, title: str | None = None,
                       height: int = 360) -> go.Figure:
    """Each marker's RMS error (mm) for each reconstruction (``{label: (T, M) array of distances in m}``, markers
    in ``names`` order), with the 1 cm RMS and 2 cm lines of OpenSim's best-practice guide."""
    fig = go.Figure()
    for i, (label, E) in enumerate(errors.items()):
        E = np.asarray(E, float)
        rms = np.sqrt(np.nanmean(E ** 2, axis=0)) * 1000
        fig.add_bar(x=list(names), y=rms, name=label, marker_color=_color(label, i + 4))
    fig.add_hline(y=10, line_dash="dash", line_color="gray", annotation_text="1 cm (RMS guide)")
    fig.update_layout(title=title or "Marker errors", barmode="group", height=height, xaxis_title="marker",
                      yaxis_title="RMS marker error (mm)", xaxis_tickangle=-45)
    return fig


def _stick(p: dict, color: str, name: str, dash: str | None = None) -> list[go.Scatter]:
    out = []
    for k, side in enumerate(("r", "l")):
        chain = [p["shoulder"], p["hip"], p[f"knee_{side}"], p[f"ankle_{side}"], p[f"heel_{side}"],
                 p[f"toe_{side}"], p[f"ankle_{side}"]]
        out.append(go.Scatter(x=[c[0] for c in chain], y=[c[1] for c in chain], mode="lines+markers",
                              line=dict(color=color, width=7 if dash is None else 2, dash=dash),
                              marker=dict(size=5), name=name, legendgroup=name, showlegend=k == 0,
                              hoverinfo="skip"))
    return out


def plot_fit_over_truth(true_model: Model, true_q: Sequence[float], fitted_model: Model, fitted_q: Sequence[float],
                        *, markers: Mapping[str, Sequence[float]] | None = None, title: str | None = None,
                        height: int = 480) -> go.Figure:
    """The fitted gait2d model (its own segment lengths, pose ``fitted_q``) drawn over the true subject (dashed)
    at one frame, with the measured markers (``{name: (x, y)}``) if given."""
    truth = gait2d_points(true_model, np.asarray(true_q, float))
    fitted = gait2d_points(fitted_model, np.asarray(fitted_q, float))
    # the fitted model wide and light, the truth thin and dark on top: where they differ, both show
    fig = go.Figure(_stick(fitted, "#f4a582", "fitted model") + _stick(truth, "black", "true subject", dash="dash"))
    if markers:
        xy = np.array([np.asarray(v, float)[:2] for v in markers.values()])
        fig.add_scatter(x=xy[:, 0], y=xy[:, 1], mode="markers", marker=dict(symbol="x", size=8, color="#1f77b4"),
                        name="measured markers", text=list(markers), hoverinfo="text")
    allp = np.array(list(truth.values()) + list(fitted.values()))
    xc = allp[:, 0].mean()
    fig.add_shape(type="line", x0=xc - 2, x1=xc + 2, y0=0, y1=0, line=dict(color="#8c6d31", width=2))
    fig.update_layout(title=title or "Fitted model over the true subject", height=height, xaxis_title="x (m)",
                      yaxis_title="y (m)", xaxis=dict(range=[xc - 0.8, xc + 0.8]),
                      yaxis=dict(range=[-0.1, allp[:, 1].max() + 0.15], scaleanchor="x", scaleratio=1),
                      plot_bgcolor="white", legend=dict(x=1.02, y=1, xanchor="left"))
    return fig
