"""Marker trajectories in the ``.trc`` format (Motion Analysis; what OpenSim reads and writes for markers).

A ``.trc`` file is tab-separated text: a ``PathFileType`` line, a line of header keys (``DataRate``,
``CameraRate``, ``NumFrames``, ``NumMarkers``, ``Units``, ...) and their values, a line ``Frame#  Time  name1
(blank) (blank)  name2 ...`` with each marker's name over its three columns, a line of ``X1 Y1 Z1 X2 ...``, then one
row per frame: the frame number, the time and x, y, z of every marker (an empty cell: the marker was not seen).

:func:`read_trc` returns the markers in metres (``mm``, ``cm`` and ``m`` files), missing samples as NaN;
:func:`write_trc` writes them (OpenSim's ``TRCFileAdapter`` reads the result); :func:`planar_markers` projects
3-D lab data onto a sagittal plane for planar models (choose which lab axis points forward and which up).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["MarkerTable", "read_trc", "write_trc", "planar_markers", "fill_gaps"]

_TO_METRES = {"mm": 1e-3, "cm": 1e-2, "m": 1.0}


@dataclass
class MarkerTable:
    """Marker trajectories.

    Attributes
    ----------
    time : (T,) array, s
    markers : dict of str -> (T, 3) array, m
        Positions in the file's (lab) axes, converted to metres; NaN where a marker is missing.
    rate : float, Hz
        The file's ``DataRate``.
    units : str
        The file's units (the data are in metres whatever they were).
    metadata : dict of str -> str
        Every header key and value as written.
    """

    time: np.ndarray
    markers: dict
    rate: float
    units: str
    metadata: dict = field(default_factory=dict)


def _cells(line: str) -> list[str]:
    return line.rstrip("\r\n").split("\t")


def read_trc(path: str | os.PathLike) -> MarkerTable:
    """Read a ``.trc`` file (module docstring).

    Raises
    ------
    ValueError
        Not a ``.trc`` file, units other than mm, cm or m, rows of the wrong length, or a header whose counts do
        not match the data — each naming the file and line.
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    if len(lines) < 5 or not lines[0].startswith("PathFileType"):
        raise ValueError(f"{path}: not a .trc file (line 1 should start with 'PathFileType')")
    keys, values = _cells(lines[1]), _cells(lines[2])
    filled = [v for v in values if v.strip()]
    if len(values) != len(keys) and len(filled) == len([k for k in keys if k.strip()]):
        values = filled  # values padded with extra tabs (as some motion-capture exports write them)
    metadata = {k.strip(): v.strip() for k, v in zip(keys, values) if k.strip()}
    units = metadata.get("Units", "")
    if units not in _TO_METRES:
        raise ValueError(f"{path}, line 3: units {units!r} are not mm, cm or m")
    names_row = _cells(lines[3])
    if names_row[:2] != ["Frame#", "Time"]:
        raise ValueError(f"{path}, line 4: expected 'Frame#<tab>Time<tab>marker names', got {lines[3][:40]!r}")
    names = [n.strip() for n in names_row[2::3] if n.strip()]
    expected = int(float(metadata.get("NumMarkers", len(names))))
    if len(names) != expected:
        raise ValueError(f"{path}: line 4 names {len(names)} markers, the header says NumMarkers = {expected}")
    rows, numbers = [], []
    for number, line in enumerate(lines[5:], start=6):
        if not line.strip():
            continue
        numbers.append(number)
        cells = _cells(line)
        cells = cells + [""] * max(0, 2 + 3 * len(names) - len(cells))
        if len(cells) < 2 + 3 * len(names):
            raise ValueError(f"{path}, line {number}: {len(cells)} cells, expected {2 + 3 * len(names)}")
        try:
            rows.append([float(c) if c.strip() else np.nan for c in cells[1:2 + 3 * len(names)]])
        except ValueError as err:
            raise ValueError(f"{path}, line {number}: {err}") from None
    data = np.array(rows, float).reshape(len(rows), 1 + 3 * len(names))
    if not rows:
        raise ValueError(f"{path}: no frames after the header")
    time = data[:, 0]
    bad = np.flatnonzero(~np.isfinite(time))
    if bad.size:
        raise ValueError(f"{path}, line {numbers[bad[0]]}: the time is missing or not finite")
    back = np.flatnonzero(np.diff(time) <= 0)
    if back.size:
        k = back[0] + 1
        raise ValueError(f"{path}, line {numbers[k]}: time {time[k]:g} s does not increase (the frame before, line "
                         f"{numbers[k - 1]}, is at {time[k - 1]:g} s)")
    scale = _TO_METRES[units]
    markers = {n: data[:, 1 + 3 * k:4 + 3 * k] * scale for k, n in enumerate(names)}
    rate = float(metadata.get("DataRate", "nan"))
    return MarkerTable(data[:, 0].copy(), markers, rate, units, metadata)


def write_trc(path: str | os.PathLike, time: ArrayLike, markers: Mapping[str, ArrayLike], units: str = "mm") -> None:
    """Write marker trajectories (metres; (T, 3) arrays, or (T, 2) for planar data with z = 0) as ``.trc`` in
    ``units`` (NaN: an empty cell, the marker unseen). The frame rate is taken from the time step."""
    if units not in _TO_METRES:
        raise ValueError(f"write_trc: units must be mm, cm or m, got {units!r}")
    t = np.asarray(time, float)
    if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("write_trc: time must be increasing, with at least two frames")
    names = list(markers)
    blocks = []
    for n in names:
        m = np.asarray(markers[n], float)
        if m.shape == (t.size, 2):  # planar: z = 0, or missing where the sample is
            m = np.c_[m, np.where(np.isnan(m).any(axis=1), np.nan, 0.0)]
        if m.shape != (t.size, 3):
            raise ValueError(f"write_trc: marker {n!r} has shape {m.shape}; expected ({t.size}, 3) or ({t.size}, 2)")
        if "\t" in n or not n.strip():
            raise ValueError(f"write_trc: marker name {n!r} must be non-empty and without tabs")
        blocks.append(m / _TO_METRES[units])
    rate = 1.0 / float(np.mean(np.diff(t)))
    rate_text = f"{rate:.10g}"
    out = [f"PathFileType\t4\t(X/Y/Z)\t{os.path.basename(os.fspath(path))}",
           "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames",
           f"{rate_text}\t{rate_text}\t{t.size}\t{len(names)}\t{units}\t{rate_text}\t1\t{t.size}",
           "Frame#\tTime\t" + "\t".join(f"{n}\t\t" for n in names),
           "\t\t" + "\t".join(f"X{k}\tY{k}\tZ{k}" for k in range(1, len(names) + 1)), ""]
    data = np.concatenate(blocks, axis=1) if blocks else np.zeros((t.size, 0))
    for i in range(t.size):
        cells = ["" if not np.isfinite(v) else repr(float(v)) for v in data[i]]
        out.append("\t".join([str(i + 1), repr(float(t[i])), *cells]))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(out) + "\n")


def planar_markers(markers: Mapping[str, ArrayLike], forward: str = "x", up: str = "y") -> dict[str, np.ndarray]:
    """Project 3-D lab markers onto the sagittal plane of a planar model: ``{name: (T, 2)}`` of (forward, up).

    ``forward`` and ``up`` name lab axes, optionally signed: ``"x"``, ``"-z"``, ... (e.g. ``forward="x", up="z"``
    for a lab whose z axis points up).
    """
    def axis(spec: str) -> tuple[int, float]:
        sign = -1.0 if spec.startswith("-") else 1.0
        letter = spec.lstrip("+-").lower()
        if letter not in ("x", "y", "z"):
            raise ValueError(f"planar_markers: axis {spec!r} is not x, y or z (optionally signed)")
        return "xyz".index(letter), sign

    (i, si), (j, sj) = axis(forward), axis(up)
    if i == j:
        raise ValueError(f"planar_markers: forward {forward!r} and up {up!r} are the same axis")
    out = {}
    for name, values in markers.items():
        m = np.asarray(values, float)
        if m.ndim != 2 or m.shape[1] != 3:
            raise ValueError(f"planar_markers: marker {name!r} has shape {m.shape}; expected (T, 3)")
        out[name] = np.c_[si * m[:, i], sj * m[:, j]]
    return out


def fill_gaps(time: ArrayLike, markers: Mapping[str, ArrayLike], max_gap: float = 0.2) -> dict[str, np.ndarray]:
    """Markers with their short gaps filled: each run of missing (NaN) samples whose two bounding seen samples lie
    at most ``max_gap`` seconds apart is filled from a natural cubic spline through all the marker's seen samples
    (``scipy.interpolate.CubicSpline``, each axis). Longer gaps and gaps at the start or end of the trial stay NaN
    (a curve across them would be a guess): inverse kinematics then leaves the marker out there.

    Parameters
    ----------
    time : (T,) array, s
    markers : dict of str -> (T, 3) array, m
    max_gap : float, s
        The longest span filled, from the last sample seen before the gap to the first seen after it (default 0.2 s:
        up to 19 missing frames at 100 Hz).

    Returns
    -------
    dict of str -> (T, 3) array
        New arrays; a marker seen in fewer than 4 samples is returned unchanged.
    """
    from scipy.interpolate import CubicSpline

    t = np.asarray(time, float).reshape(-1)
    if t.size < 2 or not np.all(np.diff(t) > 0):
        raise ValueError("fill_gaps: time must have at least 2 strictly increasing samples")
    if not (np.isfinite(max_gap) and max_gap >= 0):
        raise ValueError(f"fill_gaps: max_gap must be a finite number of seconds >= 0, got {max_gap!r}")
    out = {}
    for name, values in markers.items():
        y = np.array(values, float)
        if y.ndim != 2 or y.shape[0] != t.size:
            raise ValueError(f"fill_gaps: {name!r} has shape {y.shape}, expected ({t.size}, k)")
        seen = np.all(np.isfinite(y), axis=1)
        if seen.sum() >= 4 and not seen.all():
            spline = CubicSpline(t[seen], y[seen], bc_type="natural")
            k = 0
            while k < t.size:
                if seen[k]:
                    k += 1
                    continue
                end = k
                while end < t.size and not seen[end]:
                    end += 1
                inner = k > 0 and end < t.size  # seen on both sides
                if inner and t[end] - t[k - 1] <= max_gap + 1e-12 * max(1.0, abs(t[end])):
                    y[k:end] = spline(t[k:end])
                k = end
        out[name] = y
    return out
