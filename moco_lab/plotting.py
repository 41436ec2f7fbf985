"""Plotly figures of trajectories (Moco's ``moco_plot_trajectory.py``, interactively).

:func:`plot_trajectories` draws one subplot per variable (states and controls
by default) and overlays any number of trajectories, e.g. a solution and its
initial guess, or the solutions of two transcriptions::

    fig = plot_trajectories([solution, guess], labels=["solution", "guess"])
    fig.show()
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from .trajectory import Solution, Trajectory

__all__ = ["plot_trajectories", "short_names"]

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


def plot_trajectories(trajectories, names: Sequence[str] | str | None = None,
                      labels: Sequence[str] | None = None, title: str | None = None, columns: int = 2,
                      faded=None) -> go.Figure:
    """One figure of the states and controls of one or several trajectories.

    Parameters
    ----------
    trajectories : Trajectory or sequence of Trajectory
        Drawn in order, each in its own color (Plotly's default palette); a
        :class:`~moco_lab.trajectory.Solution` must be unsealed.
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

    Returns
    -------
    plotly.graph_objects.Figure
        One subplot per variable (titled with :func:`short_names`, y axis
        labelled with the variable's kind, x axis ``time (s)``), one line
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

    # Resolve every variable once: its group (from the first trajectory having it).
    groups = []
    for name in names:
        found = next((hit for hit in (_lookup(t, name) for t in everyone) if hit is not None), None)
        if found is None:
            raise KeyError(_unknown_name_message(name, everyone))
        groups.append(found[0])

    ncols = min(columns, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=short_names(names, groups),
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
            fig.add_trace(
                go.Scatter(x=traj.time, y=hit[1], mode="lines", name=label, line=line,
                           legendgroup=group_id, showlegend=not shown,
                           hovertemplate=f"{name}<br>t=%{{x:.4g}} s<br>%{{y:.6g}}<extra>{label}</extra>"),
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
        fig.update_yaxes(title_text=_GROUPS[group], row=row, col=col)
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
