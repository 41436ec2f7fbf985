"""Plotly figures of trajectories (Moco's ``moco_plot_trajectory.py``, interactively).

:func:`plot_trajectories` draws one subplot per variable (states and controls
by default) and overlays any number of trajectories, e.g. a solution and its
initial guess, or the solutions of two transcriptions::

    fig = plot_trajectories([solution, guess], labels=["solution", "guess"])
    fig.show()

:func:`plot_path` draws the path of a point in a plane (one coordinate
against another), e.g. the suspended mass between its muscle origins.
:func:`plot_path_forces` draws such a path with force arrows along it, e.g.
the constraint force ``−Gᵀλ`` that holds a bead on a parabola.
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ..results.trajectory import Solution, Trajectory

if TYPE_CHECKING:
    from ..tools.analyze import OutputTable

__all__ = ["plot_trajectories", "plot_outputs", "plot_path", "plot_path_forces", "short_names"]

#: Groups a variable can belong to, in lookup order, with the y-axis label used for each.
_GROUPS = {"states": "state", "controls": "control", "multipliers": "multiplier", "derivatives": "derivative"}
_PALETTE = qualitative.Plotly
_FADED_COLOR = "rgba(150, 150, 150, 0.7)"


def short_names(names: Sequence[str], groups: Sequence[str] | None = None) -> list[str]:
    """Short, unique, readable names for variable paths.

    A state or derivative path keeps its last two segments
    (``/jointset/slider/position/value`` -> ``position/value``), any other
    variable its last segment (``/forceset/actuator`` -> ``actuator``). Names
    that would collide get more leading segments until they are unique.

    Parameters
    ----------
    names : sequence of str
        Variable names (OpenSim paths or plain names).
    groups : sequence of str, optional
        Group of each name (``"states"``, ``"controls"``, ...); without it every
        path with several segments keeps its last two.

    Returns
    -------
    list of str
    """
    parts = [[p for p in name.split("/") if p] or [name] for name in names]
    keep = []
    for i, segments in enumerate(parts):
        two = groups is None or groups[i] in ("states", "derivatives")
        keep.append(min(len(segments), 2 if two else 1))
    while True:
        short = ["/".join(segments[-k:]) for segments, k in zip(parts, keep)]
        clashes = {s for s in short if short.count(s) > 1}
        grown = False
        for i, s in enumerate(short):
            if s in clashes and keep[i] < len(parts[i]):
                keep[i] += 1
                grown = True
        if not clashes or not grown:
            # Distinct full names can only still clash when they differ in
            # slashes alone (e.g. "a/b" vs "/a/b"); fall back to the full names.
            return [names[i] if s in clashes else s for i, s in enumerate(short)]


def _as_list(trajectories) -> list[Trajectory]:
    if trajectories is None:
        return []
    if isinstance(trajectories, Trajectory):
        return [trajectories]
    result = list(trajectories)
    for item in result:
        if not isinstance(item, Trajectory):
            raise TypeError(f"expected Trajectory objects, got {type(item).__name__}")
    return result


def _lookup(traj: Trajectory, name: str) -> tuple[str, np.ndarray] | None:
    """(group, values) of ``name`` in ``traj`` via the public properties, or None."""
    for group in _GROUPS:
        table = getattr(traj, group)  # Raises the Solution's own error if sealed.
        if name in table:
            return group, table[name]
    return None


def _default_names(trajectories: list[Trajectory]) -> list[str]:
    """States then controls, in order of first appearance across ``trajectories``."""
    names: list[str] = []
    for group in ("states", "controls"):
        for traj in trajectories:
            for name in getattr(traj, group):
                if name not in names:
                    names.append(name)
    return names


def _unknown_name_message(name: str, trajectories: list[Trajectory]) -> str:
    every: list[str] = []
    for traj in trajectories:
        for group in _GROUPS:
            every += [k for k in getattr(traj, group) if k not in every]
    close = difflib.get_close_matches(name, every, n=3, cutoff=0.3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    listing = ", ".join(map(repr, every)) if len(every) <= 20 else f"{len(every)} names"
    return (f"No trajectory has a state, control, multiplier or derivative named {name!r}.{hint} "
            f"Available: {listing}.")


def plot_trajectories(trajectories: Trajectory | Sequence[Trajectory], names: Sequence[str] | str | None = None,
                      labels: Sequence[str] | None = None, title: str | None = None, columns: int = 2,
                      faded: Trajectory | Sequence[Trajectory] | None = None, degrees: bool = False) -> go.Figure:
    """One figure of the states and controls of one or several trajectories.

    Parameters
    ----------
    trajectories : Trajectory or sequence of Trajectory
        Drawn in order, each in its own color (Plotly's default palette); a
        :class:`~moco_lab.results.trajectory.Solution` must be unsealed.
    names : str or sequence of str, optional
        Variables to plot: any state, control, multiplier or derivative name.
        Default: every state, then every control.
    labels : sequence of str, optional
        Legend entry of each trajectory (default ``"trajectory 1"``, ... or
        ``"solution"`` for a single Solution / ``"trajectory"``).
    title : str, optional
        Figure title.
    columns : int, default 2
        Subplots per row.
    faded : Trajectory or sequence of Trajectory, optional
        Extra trajectories drawn first as light grey dashed lines (e.g. the
        previous solution), sharing one legend entry ``"previous"``.
    degrees : bool, default False
        Show angles in degrees and angular velocities in deg/s (the data stay in radians).

    Returns
    -------
    plotly.graph_objects.Figure
        One subplot per variable, titled with what it is ("q0 angle", "soleus_r
        activation") and its y axis with the quantity and unit ("angle (rad)",
        "excitation") when the trajectory knows them (solutions, simulations:
        :attr:`Trajectory.quantities`), else with :func:`short_names` and the
        variable's group; activations and excitations on [0, 1]; x axis
        ``time (s)``; one line
        trace per trajectory and variable it contains; each trajectory has a
        single legend entry and a legend group that toggles all its lines.

    Raises
    ------
    KeyError
        A name in ``names`` is in none of the trajectories (the message lists
        close matches).
    ValueError
        ``labels`` does not match the trajectories, ``columns < 1``, or
        nothing to plot.
    RuntimeError
        A trajectory is a sealed (failed) Solution; call ``unseal()`` first.
    """
    trajs = _as_list(trajectories)
    previous = _as_list(faded)
    if not trajs and not previous:
        raise ValueError("no trajectories to plot")
    if int(columns) != columns or columns < 1:
        raise ValueError(f"columns must be a positive integer, got {columns!r}")
    columns = int(columns)
    if labels is None:
        if len(trajs) == 1:
            labels = ["solution" if isinstance(trajs[0], Solution) else "trajectory"]
        else:
            labels = [f"trajectory {i + 1}" for i in range(len(trajs))]
    else:
        labels = [labels] if isinstance(labels, str) else list(labels)
        if len(labels) != len(trajs):
            raise ValueError(f"got {len(labels)} labels for {len(trajs)} trajectories")

    everyone = trajs + previous
    if names is None:
        names = _default_names(everyone)
    else:
        names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise ValueError("nothing to plot: the trajectories have no states or controls (pass names=...)")

    # Resolve every variable once: its group and quantity (from the first trajectory having it).
    groups, quantities = [], []
    for name in names:
        found = next((hit for hit in (_lookup(t, name) for t in everyone) if hit is not None), None)
        if found is None:
            raise KeyError(_unknown_name_message(name, everyone))
        groups.append(found[0])
        quantities.append(next((t.quantities[name] for t in everyone if name in t.quantities), None))
    scales = [_display(q, degrees)[1] for q in quantities]
    fallback = short_names(names, groups)
    titles = [q.title() if q is not None else fallback[k] for k, q in enumerate(quantities)]

    ncols = min(columns, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=titles,
                        horizontal_spacing=0.08 if ncols > 1 else 0.02,
                        vertical_spacing=min(0.12, 0.3 / nrows) if nrows > 1 else 0.1)

    def cell(k: int) -> tuple[int, int]:
        return k // ncols + 1, k % ncols + 1

    def add(traj: Trajectory, label: str, group_id: str, line: dict) -> None:
        shown = False
        for k, name in enumerate(names):
            hit = _lookup(traj, name)
            if hit is None:
                continue
            row, col = cell(k)
            unit = _display(quantities[k], degrees)[0]
            fig.add_trace(
                go.Scatter(x=traj.time, y=np.asarray(hit[1]) * scales[k], mode="lines", name=label, line=line,
                           legendgroup=group_id, showlegend=not shown,
                           hovertemplate=f"{name}<br>t=%{{x:.4g}} s<br>%{{y:.6g}} {unit}<extra>{label}</extra>"),
                row=row, col=col,
            )
            shown = True

    for traj in previous:
        add(traj, "previous", "faded", dict(color=_FADED_COLOR, dash="dash", width=1.5))
    # One legend entry for all faded trajectories together.
    for j, trace in enumerate(fig.data):
        trace.showlegend = j == 0
    for i, (traj, label) in enumerate(zip(trajs, labels)):
        add(traj, label, f"trajectory{i}", dict(color=_PALETTE[i % len(_PALETTE)], width=2))

    for k, group in enumerate(groups):
        row, col = cell(k)
        q = quantities[k]
        if q is None:
            fig.update_yaxes(title_text=_GROUPS[group], row=row, col=col)
        else:
            unit = _display(q, degrees)[0]
            fig.update_yaxes(title_text=f"{q.quantity} ({unit})" if unit else q.quantity, row=row, col=col)
            if q.quantity in _UNIT_INTERVAL:
                fig.update_yaxes(range=[-0.02, 1.02], row=row, col=col)
        # Label the time axis of the lowest subplot in each column.
        if k + ncols >= len(names):
            fig.update_xaxes(title_text="time (s)", row=row, col=col)
    fig.update_layout(
        title=title,
        height=max(320, 260 * nrows),
        legend=dict(groupclick="togglegroup"),
        margin=dict(l=60, r=20, t=80 if title else 50, b=50),
        hovermode="closest",
    )
    return fig


def plot_outputs(tables: OutputTable | Sequence[OutputTable], names: Sequence[str] | str | None = None,
                 labels: Sequence[str] | None = None,
                 title: str | None = None, columns: int = 2) -> go.Figure:
    """Model outputs against time (an :class:`~moco_lab.tools.analyze.OutputTable` from ``analyze``).

    Parameters
    ----------
    tables : OutputTable or sequence of OutputTable
        E.g. the outputs of a solution and of its time-stepping simulation.
    names : str or sequence of str, optional
        Columns to plot (default: every column of the first table).
    labels : sequence of str, optional
        Legend entry of each table.
    title : str, optional
    columns : int, default 2
        Subplots per row.

    Returns
    -------
    plotly.graph_objects.Figure
        One subplot per column, the y axis labelled with the column's unit,
        the x axis ``time (s)``.
    """
    tables = [tables] if hasattr(tables, "columns") else list(tables)
    if not tables:
        raise ValueError("no output tables to plot")
    if int(columns) != columns or columns < 1:
        raise ValueError(f"columns must be a positive integer, got {columns!r}")
    names = list(tables[0].names) if names is None else ([names] if isinstance(names, str) else list(names))
    if not names:
        raise ValueError("nothing to plot: the table has no columns")
    for name in names:
        tables[0][name]  # KeyError with suggestions
    if labels is None:
        labels = ["outputs"] if len(tables) == 1 else [f"trajectory {i + 1}" for i in range(len(tables))]
    labels = [labels] if isinstance(labels, str) else list(labels)
    if len(labels) != len(tables):
        raise ValueError(f"got {len(labels)} labels for {len(tables)} tables")
    ncols = min(int(columns), len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=short_names(names),
                        horizontal_spacing=0.1 if ncols > 1 else 0.02,
                        vertical_spacing=min(0.12, 0.3 / nrows) if nrows > 1 else 0.1)
    for i, (table, label) in enumerate(zip(tables, labels)):
        shown = False
        for k, name in enumerate(names):
            if name not in table:
                continue
            row, col = k // ncols + 1, k % ncols + 1
            unit = table.units.get(name, "")
            fig.add_trace(go.Scatter(x=table.time, y=table[name], mode="lines", name=label,
                                     line=dict(color=_PALETTE[i % len(_PALETTE)], width=2),
                                     legendgroup=f"table{i}", showlegend=not shown,
                                     hovertemplate=f"{name}<br>t=%{{x:.4g}} s<br>%{{y:.6g}} {unit}<extra>{label}</extra>"),
                          row=row, col=col)
            shown = True
    for k, name in enumerate(names):
        row, col = k // ncols + 1, k % ncols + 1
        unit = tables[0].units.get(name)
        fig.update_yaxes(title_text=f"({unit})" if unit else ("(–)" if unit == "" else ""), row=row, col=col)
        if k + ncols >= len(names):
            fig.update_xaxes(title_text="time (s)", row=row, col=col)
    fig.update_layout(title=title, height=max(320, 260 * nrows), legend=dict(groupclick="togglegroup"),
                      margin=dict(l=60, r=20, t=80 if title else 50, b=50), hovermode="closest")
    return fig


#: Quantities that live on [0, 1] (plotted on that range).
_UNIT_INTERVAL = ("activation", "excitation")


def _display(quantity, degrees: bool) -> tuple[str, float]:
    """(unit shown, factor from stored values) of a column: radians become degrees on request."""
    if quantity is None:
        return "", 1.0
    unit = quantity.unit or ""
    if degrees and unit.startswith("rad"):
        return "deg" + unit[3:], 180.0 / math.pi
    return unit, 1.0


_ANCHOR_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")


def _path_values(traj: Trajectory, name: str) -> np.ndarray:
    hit = _lookup(traj, name)
    if hit is None:
        raise KeyError(_unknown_name_message(name, [traj]))
    return np.asarray(hit[1], float)


def plot_path(trajectories: Trajectory | Sequence[Trajectory], x: str, y: str, *, labels: Sequence[str] | None = None,
              anchors: dict | None = None, snapshots: Sequence[float] = (0.0, 0.5, 1.0),
              faded: Trajectory | Sequence[Trajectory] | None = None, references: Any = None,
              reference_labels: Sequence[str] | None = None,
              title: str | None = None, xlabel: str = "x (m)", ylabel: str = "y (m)") -> go.Figure:
    """The path of a point in a plane: variable ``y`` against variable ``x``, with equal axis scales.

    Parameters
    ----------
    trajectories : Trajectory or sequence of Trajectory
        Paths drawn in colour (lines with the grid points as markers); a
        :class:`~moco_lab.results.trajectory.Solution` must be unsealed.
    x, y : str
        Names of the two variables (states, controls, ...), e.g.
        ``"/jointset/tx/tx/value"`` and ``"/jointset/ty/ty/value"``.
    labels : sequence of str, optional
        Legend entry of each trajectory (default ``"solution"`` for one,
        ``"trajectory 1"``, ... for several).
    anchors : dict of str -> (float, float), optional
        Fixed points, e.g. muscle origins ``{"left": (-0.2, 0.0), ...}``: drawn
        as grey squares, and joined by straight lines to the point of the
        *first* trajectory at each snapshot time.
    snapshots : sequence of float, default (0, 0.5, 1)
        Fractions of the first trajectory's duration at which its point is
        marked (start, middle, end) and, with ``anchors``, joined to them.
        The point at a fraction is interpolated linearly in time.
    faded : Trajectory or sequence of Trajectory, optional
        Drawn first as light grey dashed paths (e.g. the previous solution),
        sharing one legend entry ``"previous"``.
    references : Trajectory or sequence of Trajectory, optional
        Drawn as dark dotted paths (e.g. a tracked reference motion).
    reference_labels : sequence of str, optional
        Legend entries of ``references`` (default ``"reference"``, ...).
    title, xlabel, ylabel : str, optional
        Figure title and axis titles.

    Returns
    -------
    plotly.graph_objects.Figure
        Trace names: the labels (paths), ``"previous"``, the reference labels,
        ``"<anchor> origin"`` per anchor, ``"t = <time> s"`` per snapshot (the
        point and, with anchors, its lines). The y axis is anchored to the x
        axis (``scaleanchor``), so distances look right.

    Raises
    ------
    KeyError
        ``x`` or ``y`` is not a variable of a trajectory (with close matches).
    ValueError
        No trajectories, or ``labels`` / ``reference_labels`` of the wrong length.
    RuntimeError
        A trajectory is a sealed (failed) Solution; call ``unseal()`` first.
    """
    trajs, previous, refs = _as_list(trajectories), _as_list(faded), _as_list(references)
    if not trajs:
        raise ValueError("plot_path needs at least one trajectory")
    if labels is None:
        labels = ["solution"] if len(trajs) == 1 else [f"trajectory {i + 1}" for i in range(len(trajs))]
    labels = [labels] if isinstance(labels, str) else list(labels)
    if len(labels) != len(trajs):
        raise ValueError(f"got {len(labels)} labels for {len(trajs)} trajectories")
    if reference_labels is None:
        reference_labels = ["reference"] if len(refs) == 1 else [f"reference {i + 1}" for i in range(len(refs))]
    reference_labels = [reference_labels] if isinstance(reference_labels, str) else list(reference_labels)
    if len(reference_labels) != len(refs):
        raise ValueError(f"got {len(reference_labels)} reference labels for {len(refs)} references")

    fig = go.Figure()
    hover = "x=%{x:.4f}<br>y=%{y:.4f}<extra>%{fullData.name}</extra>"
    for j, traj in enumerate(previous):
        fig.add_trace(go.Scatter(x=_path_values(traj, x), y=_path_values(traj, y), mode="lines", name="previous",
                                 legendgroup="faded", showlegend=j == 0, hovertemplate=hover,
                                 line=dict(color=_FADED_COLOR, dash="dash", width=2)))
    for traj, label in zip(refs, reference_labels):
        fig.add_trace(go.Scatter(x=_path_values(traj, x), y=_path_values(traj, y), mode="lines", name=label,
                                 hovertemplate=hover, line=dict(color="#222222", dash="dot", width=2)))

    first = trajs[0]
    px, py = _path_values(first, x), _path_values(first, y)
    anchors = dict(anchors or {})
    t0, t1 = float(first.time[0]), float(first.time[-1])
    for k, frac in enumerate(snapshots):
        t = t0 + float(frac) * (t1 - t0)
        sx, sy = float(np.interp(t, first.time, px)), float(np.interp(t, first.time, py))
        shade = f"rgba(60, 60, 60, {0.35 + 0.5 * k / max(1, len(snapshots) - 1):.2f})"
        xs, ys = [], []
        for ax, ay in anchors.values():
            xs += [float(ax), sx, None]
            ys += [float(ay), sy, None]
        name = f"t = {t:.3g} s"
        if anchors:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=name, legendgroup=f"snapshot{k}",
                                     showlegend=False, hoverinfo="skip", line=dict(color=shade, width=1.5)))
        fig.add_trace(go.Scatter(x=[sx], y=[sy], mode="markers", name=name, legendgroup=f"snapshot{k}",
                                 hovertemplate=hover, marker=dict(size=13, color=shade, line=dict(color="white", width=1))))
    for i, (traj, label) in enumerate(zip(trajs, labels)):
        fig.add_trace(go.Scatter(x=_path_values(traj, x), y=_path_values(traj, y), mode="lines+markers",
                                 name=label, hovertemplate=hover, marker=dict(size=4),
                                 line=dict(color=_PALETTE[i % len(_PALETTE)], width=2.5)))
    for i, (name, (ax, ay)) in enumerate(anchors.items()):
        fig.add_trace(go.Scatter(x=[float(ax)], y=[float(ay)], mode="markers+text", name=f"{name} origin",
                                 text=[name], textposition="top center", showlegend=False, hovertemplate=hover,
                                 marker=dict(size=12, symbol="square", color=_ANCHOR_COLORS[i % len(_ANCHOR_COLORS)])))
    fig.update_xaxes(title_text=xlabel, gridcolor="#e5e5e5", zerolinecolor="#bbb")
    fig.update_yaxes(title_text=ylabel, gridcolor="#e5e5e5", zerolinecolor="#bbb", scaleanchor="x", scaleratio=1)
    fig.update_layout(title=title, plot_bgcolor="white", hovermode="closest",
                      margin=dict(l=60, r=20, t=60 if title else 30, b=50))
    return fig


_FORCE_COLORS = ("#d62728", "#138a13", "#9467bd", "#ff7f0e")


def _arrow_segments(px, py, fx, fy, scale: float, head: float) -> tuple[list, list]:
    """x and y lists (segments separated by None) of arrows from (px, py) along scale·(fx, fy), with heads."""
    xs, ys = [], []
    for x0, y0, ax, ay in zip(px, py, fx, fy):
        dx, dy = scale * float(ax), scale * float(ay)
        length = math.hypot(dx, dy)
        if not length > 0:
            continue
        x1, y1 = float(x0) + dx, float(y0) + dy
        xs += [float(x0), x1, None]
        ys += [float(y0), y1, None]
        h = min(head, 0.4 * length)
        ux, uy = dx / length, dy / length
        for sign in (1.0, -1.0):  # two barbs at ±25°
            c, s = math.cos(math.radians(25)), sign * math.sin(math.radians(25))
            bx, by = c * ux - s * uy, s * ux + c * uy
            xs += [x1, x1 - h * bx, None]
            ys += [y1, y1 - h * by, None]
    return xs, ys


def plot_path_forces(trajectory: Trajectory, x: str, y: str, forces: dict, *, curve: Any = None, curve_label: str = "curve",
                     scale: float | None = None, every: int = 1, label: str = "path",
                     faded: Trajectory | Sequence[Trajectory] | None = None,
                     title: str | None = None, xlabel: str = "x (m)", ylabel: str = "y (m)") -> go.Figure:
    """The path of a point in a plane with force arrows drawn along it (equal axis scales).

    E.g. a bead on the parabola ``y = x²``: the curve, the path of the bead and,
    at each grid point, the constraint force ``−Gᵀλ`` (perpendicular to the
    curve) and the actuator force.

    Parameters
    ----------
    trajectory : Trajectory
        The motion (a Solution must be unsealed).
    x, y : str
        Names of the two coordinates, e.g. ``"/jointset/tx/tx/value"``, ``"/jointset/ty/ty/value"``.
    forces : dict of str -> (array, array)
        ``{legend label: (f_x, f_y)}``, each array of shape ``(n,)`` (one value per
        time point of ``trajectory``), in N. One trace of arrows per entry.
    curve : (array, array), optional
        Points ``(x, y)`` of a curve drawn underneath (grey), e.g. the constraint's.
    curve_label : str
        Legend entry of ``curve``.
    scale : float, optional
        Metres of arrow per newton. Default: the longest arrow is 30% of the
        larger extent of the path.
    every : int, default 1
        Draw the arrows at every ``every``-th time point (the path keeps all points).
    label : str
        Legend entry of the path.
    faded : Trajectory, optional
        Drawn first as a light grey dashed path (legend ``"previous"``).
    title, xlabel, ylabel : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: ``curve_label`` (if ``curve``), ``"previous"`` (if ``faded``), ``label``
        (lines and markers), then one ``mode="lines"`` trace per force, named after
        its key, whose segments (separated by None) are the arrow shafts and heads.
        The scale is written in ``fig.layout.meta["arrow_scale"]`` (m per N) and in an
        annotation.

    Raises
    ------
    KeyError
        ``x`` or ``y`` is not a variable of ``trajectory``.
    ValueError
        A force array does not have one value per time point, or ``every < 1``.
    """
    if int(every) < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    px, py = _path_values(trajectory, x), _path_values(trajectory, y)
    n = px.size
    arrays = {}
    for name, (fx, fy) in forces.items():
        fx, fy = np.asarray(fx, float).ravel(), np.asarray(fy, float).ravel()
        if fx.size != n or fy.size != n:
            raise ValueError(f"force {name!r}: expected {n} values (one per time point), got {fx.size} and {fy.size}")
        arrays[name] = (fx, fy)
    extent = max(float(np.ptp(px)), float(np.ptp(py)), 1e-9)
    if scale is None:
        biggest = max([float(np.max(np.hypot(fx, fy))) for fx, fy in arrays.values()] + [0.0])
        scale = 0.3 * extent / biggest if biggest > 0 else 1.0
    head = 0.03 * extent

    fig = go.Figure()
    hover = "x=%{x:.4f}<br>y=%{y:.4f}<extra>%{fullData.name}</extra>"
    if curve is not None:
        cx, cy = (np.asarray(v, float) for v in curve)
        fig.add_trace(go.Scatter(x=cx, y=cy, mode="lines", name=curve_label, hoverinfo="skip",
                                 line=dict(color="#bbbbbb", width=6)))
    if faded is not None:
        fig.add_trace(go.Scatter(x=_path_values(faded, x), y=_path_values(faded, y), mode="lines", name="previous",
                                 hovertemplate=hover, line=dict(color=_FADED_COLOR, dash="dash", width=2)))
    fig.add_trace(go.Scatter(x=px, y=py, mode="lines+markers", name=label, hovertemplate=hover,
                             marker=dict(size=4), line=dict(color=_PALETTE[0], width=2.5)))
    idx = np.arange(0, n, int(every))
    for k, (name, (fx, fy)) in enumerate(arrays.items()):
        xs, ys = _arrow_segments(px[idx], py[idx], fx[idx], fy[idx], scale, head)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip",
                                 line=dict(color=_FORCE_COLORS[k % len(_FORCE_COLORS)], width=2)))
    fig.update_xaxes(title_text=xlabel, gridcolor="#e5e5e5", zerolinecolor="#bbb")
    fig.update_yaxes(title_text=ylabel, gridcolor="#e5e5e5", zerolinecolor="#bbb", scaleanchor="x", scaleratio=1)
    newtons = 10 ** math.floor(math.log10(0.25 * extent / scale)) if scale > 0 else 1.0
    fig.add_annotation(text=f"arrows: {newtons:g} N = {newtons * scale:.3g} m", xref="paper", yref="paper",
                       x=0.0, y=1.0, xanchor="left", yanchor="bottom", showarrow=False, font=dict(size=11))
    fig.update_layout(title=title, plot_bgcolor="white", hovermode="closest", meta={"arrow_scale": float(scale)},
                      margin=dict(l=60, r=20, t=70 if title else 40, b=50))
    return fig
