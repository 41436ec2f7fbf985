"""3-D stick figures of a model (plotly, rotatable): one pose, or an animation of a trajectory.

OpenSim's axes: x forward, y up, z to the subject's right. Bones grey, joint centres black, markers blue (hover
for their names), muscle paths red where the model has path points (a function-based path is a length only and is
not drawn), the whole-body centre of mass green, the floor (y = 0) a pale plane. The camera looks from the
subject's right and front, y up; drag to rotate.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..analysis.pose import Pose, pose
from ..modeling.model import Model
from ..results.trajectory import Trajectory
from .pose import animation_controls, sampled_poses

__all__ = ["plot_pose_3d", "plot_marker_fit_3d", "animate_3d"]

_MUSCLE = "rgba(200, 40, 40, 0.75)"


def _lines(segments) -> tuple[list, list, list]:
    x, y, z = [], [], []
    for a, b in segments:
        x += [a[0], b[0], None]
        y += [a[1], b[1], None]
        z += [a[2], b[2], None]
    return x, y, z


def _traces(p: Pose, show_markers: bool, show_muscles: bool) -> list:
    """The traces of one pose (always the same number and order, so that animation frames line up)."""
    bx, by, bz = _lines((a, b) for _, a, b in p.bones)
    traces = [go.Scatter3d(x=bx, y=by, z=bz, mode="lines", line=dict(color="#555", width=7), name="bones",
                           hoverinfo="skip")]
    J = np.array(list(p.joints.values())) if p.joints else np.zeros((0, 3))
    traces.append(go.Scatter3d(x=J[:, 0], y=J[:, 1], z=J[:, 2], mode="markers", marker=dict(color="black", size=3),
                               name="joints", text=list(p.joints), hovertemplate="%{text}<extra></extra>"))
    M = np.array(list(p.markers.values())) if (show_markers and p.markers) else np.zeros((0, 3))
    traces.append(go.Scatter3d(x=M[:, 0], y=M[:, 1], z=M[:, 2], mode="markers", name="markers",
                               marker=dict(color="#1f77b4", size=3), text=list(p.markers) if show_markers else [],
                               hovertemplate="%{text}<extra></extra>"))
    mx, my, mz = [], [], []
    if show_muscles:
        for pts in p.muscles.values():
            mx += list(pts[:, 0]) + [None]
            my += list(pts[:, 1]) + [None]
            mz += list(pts[:, 2]) + [None]
    traces.append(go.Scatter3d(x=mx, y=my, z=mz, mode="lines", line=dict(color=_MUSCLE, width=3), name="muscles",
                               hoverinfo="skip"))
    traces.append(go.Scatter3d(x=[p.com[0]], y=[p.com[1]], z=[p.com[2]], mode="markers", name="centre of mass",
                               marker=dict(symbol="x", size=5, color="#2ca02c")))
    return traces


def _extent(poses: list[Pose], pad: float = 0.2) -> np.ndarray:
    """(3, 2) ranges that hold every bone end and marker of ``poses``, the floor included."""
    pts = np.vstack([np.array([a for _, a, _ in p.bones] + [b for _, _, b in p.bones] + list(p.markers.values()))
                     for p in poses])
    lo, hi = pts.min(axis=0) - pad, pts.max(axis=0) + pad
    lo[1] = min(lo[1], -0.02)
    return np.column_stack([lo, hi])


def _floor(r: np.ndarray) -> go.Mesh3d:
    x0, x1 = r[0]
    z0, z1 = r[2]
    return go.Mesh3d(x=[x0, x1, x1, x0], y=[0, 0, 0, 0], z=[z0, z0, z1, z1], i=[0, 0], j=[1, 2], k=[2, 3],
                     color="#c8b88a", opacity=0.35, name="floor (y = 0)", hoverinfo="skip", showlegend=True)


def _layout(fig: go.Figure, r: np.ndarray, title: str, height: int) -> None:
    span = r[:, 1] - r[:, 0]
    ratio = span / span.max()
    fig.update_layout(
        title=title, height=height, margin=dict(l=0, r=0, t=50, b=90), legend=dict(x=0.85, y=0.95),
        scene=dict(xaxis=dict(title="x, forward (m)", range=list(r[0])),
                   yaxis=dict(title="y, up (m)", range=list(r[1])),
                   zaxis=dict(title="z, right (m)", range=list(r[2])),
                   aspectmode="manual", aspectratio=dict(x=ratio[0], y=ratio[1], z=ratio[2]),
                   camera=dict(up=dict(x=0, y=1, z=0), eye=dict(x=0.5, y=0.35, z=1.5))))


def plot_pose_3d(model: Model, values: dict[str, float] | ArrayLike | None = None, *, title: str | None = None,
                 show_markers: bool = True, show_muscles: bool = True, height: int = 650) -> go.Figure:
    """A rotatable 3-D stick figure of ``model`` at the coordinate ``values`` (dict by name, or in
    ``model.coordinates`` order; missing coordinates 0).

    Returns
    -------
    plotly.graph_objects.Figure
        A 3-D scene, equal scales on the three axes, in metres.
    """
    p = pose(model, values)
    r = _extent([p])
    fig = go.Figure([*_traces(p, show_markers, show_muscles), _floor(r)])
    _layout(fig, r, title or model.name, height)
    return fig


def plot_marker_fit_3d(model: Model, values: dict[str, float] | ArrayLike, measured: Mapping[str, ArrayLike], *,
                       title: str | None = None, height: int = 650) -> go.Figure:
    """The model at ``values`` with its markers (blue), the measured markers ``{name: (3,) m}`` (red crosses) and a
    line from each model marker to its measurement (the inverse-kinematics error, hover: the distance in mm).
    Measured markers the model lacks are drawn without a line; NaN ones are left out."""
    fig = plot_pose_3d(model, values, title=title, height=height)
    p = pose(model, values)
    seen = {n: np.asarray(y, float) for n, y in measured.items() if np.all(np.isfinite(np.asarray(y, float)))}
    Y = np.array(list(seen.values())) if seen else np.zeros((0, 3))
    fig.add_trace(go.Scatter3d(x=Y[:, 0], y=Y[:, 1], z=Y[:, 2], mode="markers", name="measured markers",
                               marker=dict(color="#d62728", size=4, symbol="x"), text=list(seen),
                               hovertemplate="%{text} (measured)<extra></extra>"))
    pairs = [(p.markers[n], y, n) for n, y in seen.items() if n in p.markers]
    lx, ly, lz = _lines((a, b) for a, b, _ in pairs)
    text = [f"{n}: {1000 * np.linalg.norm(a - b):.1f} mm" for a, b, n in pairs for _ in range(3)]
    fig.add_trace(go.Scatter3d(x=lx, y=ly, z=lz, mode="lines", name="error (model → measured)",
                               line=dict(color="#d62728", width=3), text=text,
                               hovertemplate="%{text}<extra></extra>"))
    return fig


def animate_3d(model: Model, trajectory: Trajectory, *, frames: int = 40, title: str | None = None,
               show_markers: bool = True, show_muscles: bool = True, height: int = 650) -> go.Figure:
    """A plotly animation of ``trajectory`` on ``model`` in 3-D (rotatable while it plays; time slider, play).

    Parameters
    ----------
    model : Model
    trajectory : Trajectory or Solution
        Needs every coordinate's ``…/value`` column.
    frames : int
        Number of frames, evenly spaced in time (the coordinates interpolated linearly).
    """
    times, poses = sampled_poses(model, trajectory, frames)
    r = _extent(poses)
    fig = go.Figure([*_traces(poses[0], show_markers, show_muscles), _floor(r)],
                    frames=[go.Frame(data=_traces(p, show_markers, show_muscles), name=f"{s:.3f}",
                                     traces=list(range(5))) for p, s in zip(poses, times)])
    fig.update_layout(**animation_controls(times))
    _layout(fig, r, title or f"{model.name}: {times[0]:.2f}–{times[-1]:.2f} s", height)
    return fig
