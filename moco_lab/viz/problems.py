"""Figures of the built-in problems: the suspended mass's x–y path, the parabola bead's forces and constraint errors,
the squat-to-stand's activations."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from plotly.subplots import make_subplots

from ..analysis.problems import PARABOLA_LAMBDA, parabola_constraint_errors, parabola_forces
from .plotting import plot_path, plot_path_forces

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from ..results.trajectory import Solution

__all__ = ["SUSPENDED_MASS_ORIGINS", "suspended_mass_path_figure", "parabola_path_figure",
           "parabola_constraint_figure", "SQUAT_KEY_MUSCLES", "squat_activation_figure"]

_TX, _TY = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
#: Ground points of the suspended mass's muscles, ``{muscle: (x, y)}`` in m (:func:`moco_lab.models.suspended_mass`).
SUSPENDED_MASS_ORIGINS = {"left": (-0.2, 0.0), "middle": (0.0, 0.0), "right": (0.2, 0.0)}


def suspended_mass_path_figure(solution: Solution, previous: Solution | None = None,
                               prediction: Solution | None = None, task: str = "predict") -> go.Figure:
    """The x–y path of the suspended mass: muscle origins, lines to the mass at start, middle and end.

    Parameters
    ----------
    solution : Trajectory
        The motion (unsealed if it is a failed Solution: then labelled ``last iterate``).
    previous : Trajectory, optional
        Drawn faded (grey, dashed).
    prediction : Trajectory, optional
        The tracked prediction, drawn dotted.
    task : str
        ``"predict"`` or ``"track"``, for the title.

    Returns
    -------
    plotly.graph_objects.Figure
        Made by :func:`moco_lab.viz.plotting.plot_path`.
    """
    ok = getattr(solution, "success", True)
    label = "solution" if ok else f"last iterate ({solution.status})"
    refs, ref_labels = [], []
    if prediction is not None:
        refs, ref_labels = [prediction], ["prediction (tracked)"]
    fig = plot_path(solution, _TX, _TY, labels=[label], anchors=SUSPENDED_MASS_ORIGINS,
                    faded=previous, references=refs, reference_labels=ref_labels,
                    title=f"Path of the mass ({task})")
    if not ok:
        fig.data[-len(SUSPENDED_MASS_ORIGINS) - 1].line.color = "#c0392b"
    fig.update_xaxes(range=[-0.24, 0.24])
    fig.update_yaxes(range=[-0.3, 0.04])
    fig.update_layout(height=430, legend=dict(orientation="v", x=1.02, xanchor="left", y=1, font=dict(size=11)))
    return fig


def parabola_path_figure(solution: Solution, previous: Solution | None = None, motion: str = "move") -> go.Figure:
    """The parabola, the bead's path and the arrows of the constraint force ``−Gᵀλ`` (and of the actuators).

    Made by :func:`moco_lab.viz.plotting.plot_path_forces`; trace names ``"y = x²"``,
    ``"previous"`` (with ``previous``), ``"path"`` (``"last iterate"`` for a
    failed solve), ``"constraint force −Gᵀλ"`` and ``"actuator force"`` (drawn
    magnified, e.g. ``"actuator force ×5"``, when it is much smaller than the
    constraint force, so that it stays visible).
    """
    ok = getattr(solution, "success", True)
    forces = parabola_forces(solution)
    named = {"constraint force −Gᵀλ": forces["constraint"]}
    if "actuators" in forces:
        # The actuators' forces are much smaller than the curve's and tangent to it: magnify them (labelled).
        big = float(np.max(np.hypot(*forces["constraint"])))
        small = float(np.max(np.hypot(*forces["actuators"])))
        factor = max([1] + [k for k in (2, 5, 10, 20) if small > 0 and k * small <= big])
        fx, fy = forces["actuators"]
        named["actuator force" + (f" ×{factor}" if factor > 1 else "")] = (factor * fx, factor * fy)
    n = len(solution.time)
    xs = np.linspace(-1.25, 1.25, 201)
    fig = plot_path_forces(solution, _TX, _TY, named, curve=(xs, xs ** 2), curve_label="y = x²",
                           every=max(1, n // 40), label="path" if ok else f"last iterate ({solution.status})",
                           faded=previous, title=f"Bead on y = x² ({motion}): forces on the bead")
    if not ok:
        fig.data[-len(named) - 1].line.color = "#c0392b"
    fig.update_xaxes(range=[-1.6, 1.6], constrain="domain")
    fig.update_yaxes(range=[-0.3, 1.7])
    fig.update_layout(height=460, legend=dict(orientation="h", y=-0.15, font=dict(size=11)))
    return fig


def parabola_constraint_figure(solution: Solution, previous: Solution | None = None,
                               scheme: str = "hermite-simpson") -> go.Figure:
    """λ(t), and |φ| at the mesh points and at the interval midpoints (log scale)."""
    err = parabola_constraint_errors(solution, scheme)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "multiplier λ (N)", "constraint error |φ| = |y − x²| (m)"))
    if previous is not None and PARABOLA_LAMBDA in previous.multipliers:
        fig.add_scatter(x=previous.time, y=previous.multipliers[PARABOLA_LAMBDA], name="previous λ",
                        line=dict(color="rgba(150, 150, 150, 0.7)", dash="dash"), row=1, col=1)
    fig.add_scatter(x=solution.time, y=solution.multipliers[PARABOLA_LAMBDA], name="λ", mode="lines+markers",
                    marker=dict(size=4), line=dict(color="#1f77b4"), row=1, col=1)
    floor = 1e-17  # |φ| = 0 would vanish on a log axis
    mid_label = ("midpoint variables" if scheme == "hermite-simpson" else "linear interpolant at midpoints")
    fig.add_scatter(x=err["mesh_time"], y=np.maximum(np.abs(err["phi_mesh"]), floor), name="|φ| at mesh points",
                    mode="markers", marker=dict(size=5, color="#2ca02c"), row=1, col=2)
    fig.add_scatter(x=err["mid_time"], y=np.maximum(np.abs(err["phi_mid"]), floor), name=f"|φ|, {mid_label}",
                    mode="lines+markers", marker=dict(size=5, color="#d62728"), line=dict(color="#d62728"),
                    row=1, col=2)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=2)
    fig.update_xaxes(title_text="t (s)")
    fig.update_layout(height=360, title=f"Kinematic constraint ({scheme})", plot_bgcolor="white",
                      legend=dict(orientation="h", y=-0.2))
    return fig


#: The squat-to-stand muscles the activation figure shows (the main actors of the rise, then the idle soleus).
SQUAT_KEY_MUSCLES = ("vas_int_r", "glut_max2_r", "semimem_r", "tib_ant_r", "rect_fem_r", "soleus_r")
_SQUAT_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")


def squat_activation_figure(solution: Solution, previous: Solution | None = None) -> go.Figure:
    """Activations of the squat-to-stand's key muscles against the fraction of the motion.

    ``previous`` (another solution, e.g. without the knee spring) is drawn dotted and faded in the same colours,
    so that what the latest change did to each muscle reads at a glance.
    """
    import plotly.graph_objects as go

    def series(sol, name):
        t = np.asarray(sol.time, float)
        return (t - t[0]) / (t[-1] - t[0]), np.asarray(sol.states[f"/forceset/{name}/activation"], float)

    fig = go.Figure()
    for name, color in zip(SQUAT_KEY_MUSCLES, _SQUAT_COLORS):
        if previous is not None:
            x, y = series(previous, name)
            fig.add_scatter(x=x, y=y, name=f"{name} (previous)", line=dict(color=color, dash="dot"), opacity=0.45,
                            legendgroup=name, showlegend=False)
        x, y = series(solution, name)
        fig.add_scatter(x=x, y=y, name=name, line=dict(color=color), legendgroup=name)
    fig.update_layout(title="Activations (solid; previous solution dotted)", height=380,
                      xaxis_title="fraction of the motion (–)", yaxis_title="activation (–)",
                      yaxis_range=[0, 1.05], margin=dict(l=60, r=20, t=50, b=50))
    return fig
