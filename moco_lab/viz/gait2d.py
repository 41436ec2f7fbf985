"""Figures of the gait2d model (the reference manual's stick figure, strength curves and contact-force test).

* :func:`gait2d_stick` — the stick figure of one state: trunk to the shoulder, each leg (right red, left
  blue) with its foot drawn as ankle–heel–toe, the ground, and the contact forces as arrows;
* :func:`animate_gait2d` — the same over a trajectory, with a time slider and a play button;
* :func:`plot_strength_curves` — the manual's isometric or isokinetic figures (Figures 5–6) from
  :func:`moco_lab.analysis.gait2d.strength_curves`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..engine.kernel import kernel_for
from ..modeling.model import Model
from ..results.trajectory import Trajectory
from .pose import animation_controls, sample_coordinates

__all__ = ["gait2d_points", "gait2d_stick", "animate_gait2d", "plot_strength_curves", "plot_against_winter"]

_SIDE_COLOR = {"r": "#d62728", "l": "#1f77b4"}
_FORCE_SCALE = 1.0 / 1500.0  # m of arrow per N (a 750 N body weight is a 0.5 m arrow)


def _q_vector(model: Model, state: Mapping[str, float] | Sequence[float]) -> np.ndarray:
    if isinstance(state, Mapping):
        q = np.zeros(model.nq)
        for i, c in enumerate(model.coordinates):
            for key in (c.name, c.value_path):
                if key in state:
                    q[i] = float(state[key])
        return q
    q = np.asarray(state, float)
    if q.shape != (model.nq,):
        raise ValueError(f"gait2d figure: expected {model.nq} coordinates, got shape {q.shape}")
    return q


def gait2d_points(model: Model, state: Mapping[str, float] | Sequence[float]) -> dict[str, np.ndarray]:
    """World (x, y) of the stick figure's points: ``shoulder``, ``hip``, and per side ``knee_r``, ``ankle_r``,
    ``heel_r``, ``toe_r`` (and ``_l``). ``state``: coordinates by name or path, or the 9 values in order."""
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, _q_vector(model, state))
    world = plant.world_frame()

    def at(body: str, x: float, y: float) -> np.ndarray:
        frame = plant.GetBodyByName(body).body_frame()
        return plant.CalcPointsPositions(ctx, frame, np.array([[x], [y], [0.0]]), world)[:2, 0]

    trunk_length = _trunk_length(model)
    pts = {"hip": at("trunk", 0.0, 0.0), "shoulder": at("trunk", 0.0, trunk_length)}
    for side in ("r", "l"):
        heel = model.force_element(f"/forceset/contact_heel_{side}").location
        toe = model.force_element(f"/forceset/contact_toe_{side}").location
        pts[f"knee_{side}"] = at(f"shank_{side}", 0.0, 0.0)
        pts[f"ankle_{side}"] = at(f"foot_{side}", 0.0, 0.0)
        pts[f"heel_{side}"] = at(f"foot_{side}", heel[0], heel[1])
        pts[f"toe_{side}"] = at(f"foot_{side}", toe[0], toe[1])
    return pts


def _trunk_length(model: Model) -> float:
    """Hip to shoulder (drawing only), as the model was built (height and segment scales)."""
    from ..modeling.gait2d import gait2d_segment_lengths

    return gait2d_segment_lengths(model)["trunk"]


def _contact_forces(model: Model, Q: np.ndarray, U: np.ndarray) -> np.ndarray:
    """(n, 4, 2): heel r, toe r, heel l, toe l forces (N)."""
    names = [f"/forceset/contact_{pt}_{side}/force" for side in ("r", "l") for pt in ("heel", "toe")]
    out = kernel_for(model).outputs(names, Q, U)
    return np.stack([np.asarray(out[n])[:, :2] for n in names], axis=1)


def _traces(p: dict, forces: np.ndarray | None) -> list[go.Scatter]:
    traces = [go.Scatter(x=[p["hip"][0], p["shoulder"][0]], y=[p["hip"][1], p["shoulder"][1]], mode="lines",
                         line=dict(color="#444", width=8), name="trunk", hoverinfo="skip")]
    for side, label in (("r", "right leg"), ("l", "left leg")):
        chain = [p["hip"], p[f"knee_{side}"], p[f"ankle_{side}"], p[f"heel_{side}"], p[f"toe_{side}"], p[f"ankle_{side}"]]
        traces.append(go.Scatter(x=[c[0] for c in chain], y=[c[1] for c in chain], mode="lines+markers",
                                 line=dict(color=_SIDE_COLOR[side], width=5), marker=dict(size=5), name=label,
                                 hoverinfo="skip"))
    ax, ay = [], []
    if forces is not None:
        for k, (side, pt) in enumerate((s, q) for s in ("r", "l") for q in ("heel", "toe")):
            base = p[f"{pt}_{side}"]
            tip = base + forces[k] * _FORCE_SCALE
            ax += [base[0], tip[0], None]
            ay += [base[1], tip[1], None]
    traces.append(go.Scatter(x=ax, y=ay, mode="lines", line=dict(color="#2ca02c", width=3),
                             name=f"contact force ({1 / _FORCE_SCALE:.0f} N per m)", hoverinfo="skip"))
    return traces


def _layout(fig: go.Figure, xr, yr, title: str, height: int) -> None:
    fig.add_shape(type="line", x0=xr[0] - 10, x1=xr[1] + 10, y0=0, y1=0, line=dict(color="#8c6d31", width=2))
    fig.update_layout(title=title, height=height, xaxis_title="x (m)", yaxis_title="y (m)",
                      xaxis=dict(range=list(xr)), yaxis=dict(range=list(yr), scaleanchor="x", scaleratio=1),
                      legend=dict(x=1.02, y=1, xanchor="left"), margin=dict(l=60, r=20, t=60, b=100),
                      plot_bgcolor="white")


def _extent(points: list[dict]) -> tuple[tuple[float, float], tuple[float, float]]:
    allp = np.array([v for p in points for v in p.values()])
    xlo, xhi = allp[:, 0].min() - 0.3, allp[:, 0].max() + 0.3
    ylo, yhi = min(allp[:, 1].min(), 0.0) - 0.1, allp[:, 1].max() + 0.1
    widen = 0.8 * (yhi - ylo) - (xhi - xlo)
    if widen > 0:
        xlo, xhi = xlo - widen / 2, xhi + widen / 2
    return (float(xlo), float(xhi)), (float(ylo), float(yhi))


def gait2d_stick(model: Model, state: Mapping[str, float] | Sequence[float], *,
                 speeds: Mapping[str, float] | Sequence[float] | None = None, forces: bool = True,
                 title: str | None = None, height: int = 600) -> go.Figure:
    """The stick figure of one state (the manual's "stick" test), with the contact forces as arrows."""
    q = _q_vector(model, state)
    u = np.zeros(model.nq) if speeds is None else _q_vector(model, speeds)
    pts = gait2d_points(model, q)
    F = _contact_forces(model, q[None], u[None])[0] if forces else None
    fig = go.Figure(_traces(pts, F))
    xr, yr = _extent([pts])
    _layout(fig, xr, yr, title or "gait2d", height)
    return fig


def animate_gait2d(model: Model, trajectory: Trajectory, *, frames: int = 60, forces: bool = True,
                   title: str | None = None, height: int = 600) -> go.Figure:
    """A plotly animation of a gait2d ``trajectory`` (needs every coordinate's value; speeds for the forces)."""
    times, Q = sample_coordinates(model, trajectory, frames)
    speeds = [c.speed_path for c in model.coordinates]
    U = sample_coordinates(model, trajectory, frames, speeds)[1] if all(n in trajectory.states for n in speeds) \
        else np.zeros_like(Q)
    points = [gait2d_points(model, q) for q in Q]
    F = _contact_forces(model, Q, U) if forces else [None] * len(times)
    fig = go.Figure(_traces(points[0], F[0]),
                    frames=[go.Frame(data=_traces(p, f), name=f"{s:.3f}") for p, f, s in zip(points, F, times)])
    fig.update_layout(**animation_controls(times))
    t = np.asarray(trajectory.time, float)
    xr, yr = _extent(points)
    _layout(fig, xr, yr, title or f"gait2d: {t[0]:g}–{t[-1]:g} s", height)
    return fig


def plot_strength_curves(curves: Mapping[str, Mapping], *, isokinetic: bool = False, title: str | None = None,
                         height: int = 950) -> go.Figure:
    """The manual's Figure 5 (isometric) or 6 (isokinetic): for each joint, the total moment with the positive or
    the negative muscles active, the passive moment, and active = total − passive.

    ``curves``: joint name -> the result of :func:`moco_lab.analysis.gait2d.strength_curves`.
    """
    joints = list(curves)
    fig = make_subplots(rows=len(joints), cols=3, shared_xaxes=False, vertical_spacing=0.13, horizontal_spacing=0.09,
                        subplot_titles=[f"{j}: {what}" for j in joints for what in
                                        ("total moment", "passive moment", "active = total − passive")])
    xlabel = "angular velocity (deg/s)" if isokinetic else "angle (deg)"
    for r, j in enumerate(joints, start=1):
        c = curves[j]
        x = c["x"]
        for name, color in (("positive", "#d62728"), ("negative", "#1f77b4")):
            fig.add_scatter(x=x, y=c[name], mode="lines", line=dict(color=color), row=r, col=1,
                            name=f"{name} muscles active", legendgroup=name, showlegend=r == 1)
            fig.add_scatter(x=x, y=np.asarray(c[name]) - np.asarray(c["passive"]), mode="lines",
                            line=dict(color=color, dash="dash"), row=r, col=3, legendgroup=name, showlegend=False)
        fig.add_scatter(x=x, y=c["passive"], mode="lines", line=dict(color="#555"), row=r, col=2,
                        name="no muscle active", showlegend=r == 1)
        for col in (1, 2, 3):
            fig.update_xaxes(title_text=xlabel, row=r, col=col)
            fig.update_yaxes(title_text="moment (N·m)", row=r, col=col)
    fig.update_layout(height=height, title=title or ("Isokinetic strength" if isokinetic else "Isometric strength"),
                      plot_bgcolor="white")
    return fig


def plot_against_winter(model: Model, solutions: Mapping[str, Trajectory], *, title: str | None = None,
                        height: int = 800, faded: Trajectory | None = None) -> go.Figure:
    """Joint angles (degrees) and ground reaction forces (body weights) of gait cycles against Winter's normal gait
    (mean ± one standard deviation, grey band), right leg in the top rows, left below.

    ``solutions``: label -> a gait cycle of ``model`` (e.g. ``{"tracking": sol, "prediction": pred}``).
    ``faded``: another cycle drawn first as a grey dashed line labelled ``"previous"`` (e.g. the last solution
    in a dashboard).
    """
    from ..analysis.gait2d import ground_reaction_forces
    from ..examples.gait2d import winter_gait

    g = winter_gait()
    weight = model.body_weight()
    panels = [("hip_flexion", "hip flexion"), ("knee_angle", "knee angle"), ("ankle_angle", "ankle angle"),
              ("grf_x", "horizontal GRF"), ("grf_y", "vertical GRF")]
    fig = make_subplots(rows=2, cols=5, horizontal_spacing=0.07, vertical_spacing=0.16,
                        subplot_titles=[f"{label}, {side}" for side in ("right", "left") for _, label in panels])
    palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"]
    drawn = ([("previous", faded, dict(color="#999999", width=1.5, dash="dash"))] if faded is not None else []) + [
        (label, sol, dict(color=palette[k % len(palette)], width=2)) for k, (label, sol) in enumerate(solutions.items())]
    forces = {label: ground_reaction_forces(model, sol) for label, sol, _ in drawn}
    for r, side in enumerate(("r", "l"), start=1):
        for c, (key, _label) in enumerate(panels, start=1):
            column = f"{key}_{side}"
            scale = 1.0 if key.startswith("grf") else 180 / np.pi
            mean, sd = g.mean[column] * scale, np.sqrt(g.var[column]) * scale
            fig.add_scatter(x=np.r_[g.time, g.time[::-1]], y=np.r_[mean + sd, (mean - sd)[::-1]], fill="toself",
                            fillcolor="rgba(0,0,0,0.12)", line=dict(width=0), hoverinfo="skip",
                            name="Winter ± 1 SD", showlegend=(r, c) == (1, 1), row=r, col=c)
            fig.add_scatter(x=g.time, y=mean, line=dict(color="black", width=1.5), name="Winter mean",
                            showlegend=(r, c) == (1, 1), row=r, col=c)
            for label, sol, line in drawn:
                if key.startswith("grf"):
                    y = forces[label][side][:, 0 if key == "grf_x" else 1] / weight
                else:
                    path = next(co.value_path for co in model.coordinates if co.name == column)
                    y = np.degrees(sol.states[path])
                fig.add_scatter(x=sol.time, y=y, line=line, name=label, legendgroup=label,
                                showlegend=(r, c) == (1, 1), row=r, col=c)
            fig.update_xaxes(title_text="time (s)", row=r, col=c)
            fig.update_yaxes(title_text="force (BW)" if key.startswith("grf") else "angle (deg)", row=r, col=c)
    fig.update_layout(height=height, title=title or "Gait cycle against Winter's normal gait", plot_bgcolor="white",
                      legend=dict(orientation="h", y=-0.12))
    return fig
