"""Stick figures of a model in the x–y (sagittal) plane: one pose, or an animation of a trajectory.

Bones grey, joint centres black, muscle paths red (their active points only), contact spheres as circles,
the floor as a line at y = 0 when the model has contact, the whole-body centre of mass as a cross.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..analysis.pose import Pose, pose
from ..modeling.model import Model
from ..results.trajectory import Trajectory

__all__ = ["plot_pose", "animate", "sample_coordinates", "sampled_poses", "animation_controls"]

_MUSCLE = "rgba(200, 40, 40, 0.75)"


def _traces(p: Pose, show_muscles: bool = True) -> list[go.Scatter]:
    """The traces of one pose (always the same number and order, so that animation frames line up)."""
    bx, by = [], []
    for _body, a, b in p.bones:
        bx += [a[0], b[0], None]
        by += [a[1], b[1], None]
    traces = [go.Scatter(x=bx, y=by, mode="lines", line=dict(color="#555", width=6), name="bones",
                         hoverinfo="skip")]
    jx = [c[0] for c in p.joints.values()]
    jy = [c[1] for c in p.joints.values()]
    traces.append(go.Scatter(x=jx, y=jy, mode="markers", marker=dict(color="black", size=7), name="joints",
                             text=list(p.joints), hovertemplate="%{text}<extra></extra>"))
    mx, my, names = [], [], []
    if show_muscles:
        for path, pts in p.muscles.items():
            mx += list(pts[:, 0]) + [None]
            my += list(pts[:, 1]) + [None]
            names += [path] * len(pts) + [""]
    traces.append(go.Scatter(x=mx, y=my, mode="lines", line=dict(color=_MUSCLE, width=2), name="muscles",
                             text=names, hovertemplate="%{text}<extra></extra>"))
    sx, sy = [], []
    for centre, r in p.spheres.values():
        a = np.linspace(0, 2 * np.pi, 25)
        sx += list(centre[0] + r * np.cos(a)) + [None]
        sy += list(centre[1] + r * np.sin(a)) + [None]
    traces.append(go.Scatter(x=sx, y=sy, mode="lines", line=dict(color="#1f77b4", width=2), name="contact spheres",
                             hoverinfo="skip"))
    traces.append(go.Scatter(x=[p.com[0]], y=[p.com[1]], mode="markers", name="centre of mass",
                             marker=dict(symbol="x", size=10, color="#2ca02c")))
    return traces


def _frame_layout(fig: go.Figure, xr, yr, floor: bool, title: str, height: int) -> None:
    if floor:
        fig.add_shape(type="line", x0=xr[0] - 10, x1=xr[1] + 10, y0=0, y1=0, line=dict(color="#8c6d31", width=2))
    plot_h = height - 160
    width = int(min(1000, max(600, plot_h * (xr[1] - xr[0]) / (yr[1] - yr[0]) + 260)))
    fig.update_layout(title=title, height=height, width=width, xaxis_title="x (m)", yaxis_title="y (m)",
                      xaxis=dict(range=list(xr)), yaxis=dict(range=list(yr), scaleanchor="x", scaleratio=1),
                      legend=dict(x=1.02, y=1, xanchor="left"), margin=dict(l=60, r=20, t=60, b=100))


def _extent(poses: list[Pose], pad: float = 0.15) -> tuple[tuple[float, float], tuple[float, float]]:
    pts = [np.array([a for _, a, _ in p.bones] + [b for _, _, b in p.bones] + [c for c, _ in p.spheres.values()])
           for p in poses]
    allp = np.vstack(pts)
    lo, hi = allp.min(axis=0) - pad, allp.max(axis=0) + pad
    ylo, yhi = float(min(lo[1], -0.05)), float(hi[1])
    xlo, xhi = float(lo[0]), float(hi[0])
    widen = 0.8 * (yhi - ylo) - (xhi - xlo)  # at least 0.8 times as wide as tall: room to move
    if widen > 0:
        xlo, xhi = xlo - widen / 2, xhi + widen / 2
    return (xlo, xhi), (ylo, yhi)


def plot_pose(model: Model, values: dict[str, float] | ArrayLike | None = None, *, title: str | None = None,
              show_muscles: bool = True, height: int = 600) -> go.Figure:
    """A stick figure of ``model`` at the coordinate ``values`` (dict by name, or in ``model.coordinates`` order).

    Returns
    -------
    plotly.graph_objects.Figure
        x–y plane, equal axes in metres.
    """
    p = pose(model, values)
    fig = go.Figure(_traces(p, show_muscles))
    xr, yr = _extent([p])
    _frame_layout(fig, xr, yr, bool(p.spheres), title or f"{model.name}", height)
    return fig


def sample_coordinates(model: Model, trajectory: Trajectory, frames: int,
                       paths: list[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``frames`` times evenly spaced over the trajectory and the columns ``paths`` (default: every coordinate's
    value) interpolated linearly at them: ``(times (frames,), values (frames, len(paths)))``."""
    names = paths or [c.value_path for c in model.coordinates]
    missing = [n for n in names if n not in trajectory.states]
    if missing:
        raise KeyError(f"the trajectory has no column for {missing[:3]}{'...' if len(missing) > 3 else ''}")
    t = np.asarray(trajectory.time, float)
    times = np.linspace(t[0], t[-1], max(2, int(frames)))
    return times, np.column_stack([np.interp(times, t, np.asarray(trajectory.states[n], float)) for n in names])


def sampled_poses(model: Model, trajectory: Trajectory, frames: int) -> tuple[np.ndarray, list[Pose]]:
    """``frames`` times evenly spaced over the trajectory and the model's :class:`Pose` at each (the coordinates
    interpolated linearly): what an animation draws."""
    times, Q = sample_coordinates(model, trajectory, frames)
    return times, [pose(model, q) for q in Q]


def animation_controls(times: np.ndarray) -> dict:
    """Layout entries of an animation whose frames are named by time (``f"{t:.3f}"``): play/pause buttons and a
    time slider."""
    step_ms = 1000 * (times[1] - times[0]) if len(times) > 1 else 100
    return dict(
        updatemenus=[dict(type="buttons", showactive=False, direction="left", x=0, y=-0.12, xanchor="right",
                          yanchor="top", pad=dict(t=40, r=10), buttons=[
            dict(label="▶ play", method="animate",
                 args=[None, dict(frame=dict(duration=max(20, step_ms), redraw=True), fromcurrent=True,
                                  transition=dict(duration=0))]),
            dict(label="❚❚ pause", method="animate",
                 args=[[None], dict(frame=dict(duration=0, redraw=False), mode="immediate")])])],
        sliders=[dict(active=0, currentvalue=dict(prefix="time (s): "), x=0, len=1.0, y=-0.12, yanchor="top",
                      pad=dict(t=40), steps=[
            dict(label=f"{s:.2f}", method="animate",
                 args=[[f"{s:.3f}"], dict(mode="immediate", frame=dict(duration=0, redraw=True))]) for s in times])])


def animate(model: Model, trajectory: Trajectory, *, frames: int = 60, title: str | None = None,
            show_muscles: bool = True, height: int = 600) -> go.Figure:
    """A plotly animation of ``trajectory`` on ``model`` (stick figure, time slider and play button).

    Parameters
    ----------
    model : Model
    trajectory : Trajectory or Solution
        Needs every coordinate's ``…/value`` column.
    frames : int
        Number of frames, evenly spaced in time (the coordinates interpolated linearly).
    """
    times, poses = sampled_poses(model, trajectory, frames)
    xr, yr = _extent(poses)
    fig = go.Figure(_traces(poses[0], show_muscles),
                    frames=[go.Frame(data=_traces(p, show_muscles), name=f"{s:.3f}") for p, s in zip(poses, times)])
    fig.update_layout(**animation_controls(times))
    t = np.asarray(trajectory.time, float)
    _frame_layout(fig, xr, yr, bool(poses[0].spheres), title or f"{model.name}: {t[0]:g}–{t[-1]:g} s", height)
    return fig
