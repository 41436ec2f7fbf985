"""Drawings of moment arms: the model in its pose with a muscle's line of action, curves, generalized forces."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..analysis.moment_arms import assemble, muscle_path, path_generalized_forces, world_position
from ..modeling.constraints import coupling_vector
from .sketches import sketch

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from numpy.typing import ArrayLike

    from ..modeling.forces import PathMuscle
    from ..modeling.model import Model

__all__ = ["draw_configuration", "plot_moment_arm_curves", "plot_generalized_forces"]


def draw_configuration(model: Model, q: ArrayLike, muscle: str | PathMuscle, coordinate: str,
                       fig: go.Figure | None = None, show_lines: bool = True,
                       zoom: float | None = None) -> go.Figure:
    """Plotly figure of the planar model at ``q``: bones, the muscle path, and the textbook picture.

    For every path segment that joins two different bodies the dashed line of
    action is drawn, with the perpendicular from θ's joint centre to it (the
    "distance to the line of action"). ``zoom``: half-width (m) of the view
    around θ's joint centre (default: everything).
    """
    import plotly.graph_objects as go

    fig = go.Figure() if fig is None else fig
    coord = model.coordinate(coordinate)
    for body, pts in sketch(model):
        P = np.array([world_position(model, q, body, p) for p in pts])
        fig.add_scatter(x=P[:, 0], y=P[:, 1], mode="lines+markers", line=dict(color="#7f7f7f", width=7),
                        marker=dict(size=5, color="#7f7f7f"), name=body, showlegend=False, hoverinfo="name")
    name, path = muscle_path(model, muscle)
    P = np.array([world_position(model, q, p.body, p.location) for p in path.points])
    fig.add_scatter(x=P[:, 0], y=P[:, 1], mode="lines+markers", line=dict(color="#d62728", width=4),
                    marker=dict(size=8), name=f"{name} path")
    c = world_position(model, q, *model.joint_centre(coord.path))
    fig.add_scatter(x=[c[0]], y=[c[1]], mode="markers", marker=dict(size=13, symbol="circle-open",
                    color="black", line=dict(width=3)), name=f"{coord.name} centre")
    if show_lines:
        shown = False
        for k in range(len(path.points) - 1):
            if path.points[k].body == path.points[k + 1].body:
                continue
            a, b = P[k], P[k + 1]
            e = (b - a) / np.linalg.norm(b - a)
            ends = np.array([a - 0.6 * e * np.linalg.norm(b - a), b + 0.6 * e * np.linalg.norm(b - a)])
            foot = a + e * ((c - a) @ e)
            fig.add_scatter(x=ends[:, 0], y=ends[:, 1], mode="lines", line=dict(color="#ff9896", dash="dash"),
                            name="line of action", showlegend=not shown)
            fig.add_scatter(x=[c[0], foot[0]], y=[c[1], foot[1]], mode="lines",
                            line=dict(color="#2ca02c", width=3), name="distance to joint centre",
                            showlegend=not shown)
            shown = True
    fig.update_layout(xaxis=dict(title="x (m)", scaleanchor="y", scaleratio=1), yaxis=dict(title="y (m)"),
                      height=480, margin=dict(l=50, r=20, t=50, b=40))
    if zoom:
        fig.update_layout(xaxis_range=[c[0] - zoom, c[0] + zoom], yaxis_range=[c[1] - zoom, c[1] + zoom],
                          legend=dict(orientation="h", y=-0.15))
    return fig


def plot_moment_arm_curves(values: ArrayLike, curves: dict, title: str = "", theta: float | None = None,
                           constant: dict | None = None,
                           degrees: bool = True) -> go.Figure:
    """Plotly figure of moment-arm curves ``{label: (n,) array}`` (in cm) against θ.

    ``constant``: ``{label: d}`` drawn as horizontal lines (gait2d's constant arms).
    """
    import plotly.graph_objects as go

    x = np.degrees(values) if degrees else np.asarray(values)
    fig = go.Figure()
    dashes = ["solid", "dash", "dot", "dashdot", "longdash"]
    for k, (label, r) in enumerate(curves.items()):
        fig.add_scatter(x=x, y=100 * np.asarray(r), mode="lines", name=label,
                        line=dict(width=6 - min(k, 3), dash=dashes[k % len(dashes)]))
    for label, d in (constant or {}).items():
        fig.add_scatter(x=[x[0], x[-1]], y=[100 * d, 100 * d], mode="lines", name=label,
                        line=dict(color="gray", dash="dot"))
    if theta is not None:
        fig.add_vline(x=float(np.degrees(theta) if degrees else theta), line=dict(color="black", width=1))
    fig.update_layout(title=title, xaxis_title="θ (deg)" if degrees else "θ", yaxis_title="moment arm (cm)",
                      height=380, margin=dict(l=50, r=20, t=50, b=40))
    return fig


def plot_generalized_forces(model: Model, q: ArrayLike, muscle: str | PathMuscle, coordinate: str, title: str = "") -> go.Figure:
    """Bar chart of ``f = Jᵀ F`` (unit tension), ``C_θ`` and ``c_k f_k`` per coordinate."""
    import plotly.graph_objects as go

    coord = model.coordinate(coordinate)
    q = assemble(model, q, coord.path)
    f = path_generalized_forces(model, q, muscle, 1.0)
    C = coupling_vector(model, q, coord.path)
    names = [c.name for c in model.coordinates]
    fig = go.Figure()
    fig.add_bar(x=names, y=100 * f, name="f_k: generalized force per newton of tension")
    fig.add_bar(x=names, y=100 * C * f, name="c_k f_k: its share of the moment arm")
    fig.add_scatter(x=names, y=C, mode="markers+text", text=[f"c={c:.2f}" for c in C], textposition="top center",
                    name="coupling c_k", yaxis="y2", marker=dict(size=10, symbol="diamond", color="black"))
    top = max(1.0, float(np.max(C))) * 1.25
    fig.update_layout(title=title or f"generalized forces of a unit tension; Cᵀf = {100 * C @ f:.2f} cm",
                      barmode="group", yaxis=dict(title="per unit tension (cm)"),
                      yaxis2=dict(title="coupling factor", overlaying="y", side="right", showgrid=False,
                                  range=[min(0.0, float(np.min(C))) - 0.1 * top, top], dtick=0.25,
                                  tickformat=".2f"),
                      height=360, margin=dict(l=50, r=50, t=50, b=40), legend=dict(orientation="h", y=-0.2))
    return fig
