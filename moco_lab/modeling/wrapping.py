"""Muscle paths that wrap over cylinders (OpenSim's ``WrapCylinder`` and ``PathWrap``).

A :class:`WrapCylinder` is fixed in a body: its frame's origin is at ``translation``,
its orientation a body-fixed X–Y–Z rotation sequence, its axis the frame's z axis,
``length`` long and centred on the origin. A :class:`PathWrap` lets a path wrap over
one cylinder, on the segments between path points ``start`` … ``end`` (1-based, as
OpenSim counts; ``-1``: the whole path).

What moco_lab computes: the shortest path over the cylinder — straight from a
point to a tangent point, a helix on the surface, straight to the next point. In
the cylinder frame the three pieces unroll into one straight line, so with ``l₁``,
``l₂`` the tangent lengths in the cross-section, ``θ`` the wrap angle and ``Δz`` the
axial distance of the two path points, the wrapped segment is

    L = √((l₁ + R θ + l₂)² + Δz²),

a closed form, smooth in the coordinates while the wrap holds (the engine
differentiates it exactly). When it wraps follows OpenSim's ``WrapCylinder``:

* never while either point is inside the cylinder's radius;
* quadrant ``all``: when the straight segment passes closer than R to the axis,
  at a point strictly between its ends, and goes around the shorter way;
* quadrant ``±x``/``±y`` (only that side of the cylinder is active): with a point
  on the active side, when the segment passes through the cylinder, or when its
  points are on opposite sides of the plane ``x = 0`` (``y = 0``) and it crosses
  that plane on the inactive side; with both points on the inactive side, always
  — going around over the active side;
* not when both tangent points lie beyond the cylinder's ends;
* of a path's segments, the first the wrap must take (passing through the
  cylinder), else the one a quadrant forces around whose length grows least;
* several wraps on one path are applied in order, then re-applied each to the
  path the others left (a fixed number of passes, two by default).

How this differs from OpenSim: OpenSim's "hybrid" cylinder method finds the tangent
points by a heuristic (a plane through the path points and an apex) and, for paths
with several wraps, slides them until the straight pieces are tangent to within
0.1°; with a single wrap it skips that adjustment, so its length is slightly longer
than the geodesic when the path runs obliquely to the axis. For paths with several
wraps it also iterates the wraps until the length changes by less than 0.5 mm.
The differences on the squat-to-stand model are measured in
``tests/test_osim_opensim.py`` and reported in ``docs/models.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .joints import body_fixed_xyz_rotation
from .xp import where_positive

__all__ = ["WrapCylinder", "PathWrap", "wrap_segment", "wrapped_path_length", "wrapped_path_polyline"]

_QUADRANTS = {"all": None, "x": (0, 1.0), "+x": (0, 1.0), "-x": (0, -1.0), "y": (1, 1.0), "+y": (1, 1.0),
              "-y": (1, -1.0)}


@dataclass
class WrapCylinder:
    """A cylinder fixed in ``body`` that muscle paths wrap over.

    Attributes
    ----------
    name, body : str
    radius, length : float
        Metres; the cylinder spans ``z ∈ [−length/2, length/2]`` of its frame.
    translation : tuple (3,)
        Origin of the cylinder frame in the body frame (m).
    rotation : tuple (3,)
        OpenSim's ``xyz_body_rotation``: body-fixed X–Y–Z angles (rad) of the cylinder frame.
    quadrant : str
        ``"all"``, or the active side ``"x"``, ``"-x"``, ``"y"``, ``"-y"``.
    """

    name: str
    body: str
    radius: float
    length: float
    translation: tuple = (0.0, 0.0, 0.0)
    rotation: tuple = (0.0, 0.0, 0.0)
    quadrant: str = "all"
    R_BC: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if not self.radius > 0 or not self.length > 0:
            raise ValueError(f"WrapCylinder {self.name!r}: radius and length must be positive, got "
                             f"{self.radius}, {self.length}")
        q = self.quadrant.strip().lower()
        if q not in _QUADRANTS:
            raise ValueError(f"WrapCylinder {self.name!r}: quadrant {self.quadrant!r} is not supported "
                             f"(one of {sorted(_QUADRANTS)})")
        self.quadrant = q
        self.translation = tuple(float(v) for v in self.translation)
        self.rotation = tuple(float(v) for v in self.rotation)
        self.R_BC = body_fixed_xyz_rotation(self.rotation).matrix()

    def frame_points(self) -> list:
        """Body-frame locations of the cylinder origin and of the tips of its three unit axes."""
        o = np.asarray(self.translation)
        return [o] + [o + self.R_BC[:, i] for i in range(3)]

    def description(self) -> dict:
        """What determines the cylinder, as plain data."""
        return {"type": "WrapCylinder", "name": self.name, "body": self.body, "radius": float(self.radius),
                "length": float(self.length), "translation": list(self.translation), "rotation": list(self.rotation),
                "quadrant": self.quadrant}


@dataclass
class PathWrap:
    """A path's permission to wrap over ``cylinder`` between its points ``start`` … ``end`` (1-based; −1: all)."""

    cylinder: WrapCylinder
    start: int = -1
    end: int = -1

    def description(self) -> dict:
        """What determines the wrap, as plain data."""
        return {"cylinder": self.cylinder.description(), "range": [int(self.start), int(self.end)]}


def _angle_0_2pi(xp: Any, a: Any) -> Any:
    wrapped = xp.arctan2(xp.sin(a), xp.cos(a))  # (−π, π]
    return where_positive(xp, -wrapped, wrapped + 2.0 * math.pi, wrapped)


def wrap_segment(A: Sequence, B: Sequence, cylinder: WrapCylinder, xp: Any = np) -> dict:
    """The shortest path from ``A`` to ``B`` over the cylinder, and whether OpenSim's rules let it wrap.

    Parameters
    ----------
    A, B : sequence of 3
        The segment's points in the cylinder frame (numbers or expressions).

    Returns
    -------
    dict
        ``wraps`` (> 0 when the segment wraps), ``mandatory`` (> 0 when it must: it passes
        through the cylinder), ``length`` (the wrapped length: tangent
        line, helix, tangent line), ``helix`` (the part on the surface), ``T1``, ``T2``
        (tangent points, cylinder frame), ``straight`` (|AB|).
    """
    R, half = float(cylinder.radius), 0.5 * float(cylinder.length)
    R2 = R * R
    ax, ay, az = A
    bx, by, bz = B
    ra2, rb2 = ax * ax + ay * ay, bx * bx + by * by
    outside = xp.minimum(ra2 - R2, rb2 - R2)  # > 0: both points outside the radius
    la = xp.sqrt(xp.maximum(ra2 - R2, 1e-18))
    lb = xp.sqrt(xp.maximum(rb2 - R2, 1e-18))
    ga, gb = xp.arctan2(la, R), xp.arctan2(lb, R)  # half-angles of the tangent cones (acos(R/r))
    al, be = xp.arctan2(ay, ax), xp.arctan2(by, bx)
    th_ccw = _angle_0_2pi(xp, (be - gb) - (al + ga))  # going around counter-clockwise about +z
    th_cw = _angle_0_2pi(xp, (al - ga) - (be + gb))
    # where the straight segment passes the axis (OpenSim: the nearest points of the segment's line and the axis)
    dx, dy = bx - ax, by - ay
    t = -(ax * dx + ay * dy) / xp.maximum(dx * dx + dy * dy, 1e-30)
    nx, ny = ax + t * dx, ay + t * dy
    hits = xp.minimum(xp.minimum(R2 - (nx * nx + ny * ny), t), 1.0 - t)  # > 0: passes through, between the ends
    side = _QUADRANTS[cylinder.quadrant]
    if side is None:
        ccw = th_cw - th_ccw  # > 0: counter-clockwise is shorter
        wraps = mandatory = xp.minimum(outside, hits)
    else:  # OpenSim: with a point on the active side, wrap if the segment passes through the cylinder
        # (mandatory) or crosses the plane on the inactive side; with both points on the inactive side, wrap
        k, s = side
        a_k, b_k, n_k = (ax, bx, nx) if k == 0 else (ay, by, ny)
        one_active = xp.maximum(s * a_k, s * b_k)
        crossing = xp.minimum(-a_k * b_k, -s * n_k)  # opposite sides, crossing on the inactive side
        mandatory = xp.minimum(outside, xp.minimum(one_active, hits))
        wraps = xp.minimum(outside, xp.maximum(xp.maximum(-one_active, hits), crossing))
        # go around over the active side: the arc's middle must be there
        mid = al + ga + 0.5 * th_ccw
        ccw = s * (xp.cos(mid) if k == 0 else xp.sin(mid))
    theta = where_positive(xp, ccw, th_ccw, th_cw)
    phi1 = where_positive(xp, ccw, al + ga, al - ga)
    phi2 = where_positive(xp, ccw, be - gb, be + gb)
    horizontal = la + R * theta + lb
    dz = bz - az
    length = xp.sqrt(horizontal * horizontal + dz * dz)
    z1 = az + dz * la / horizontal
    z2 = az + dz * (la + R * theta) / horizontal
    on_cylinder = xp.maximum(half - xp.abs(z1), half - xp.abs(z2))  # > 0: a tangent point within the ends
    wraps, mandatory = xp.minimum(wraps, on_cylinder), xp.minimum(mandatory, on_cylinder)
    straight = xp.sqrt(dx * dx + dy * dy + dz * dz)
    arc, rise = R * theta, z2 - z1
    return {"wraps": wraps, "mandatory": mandatory, "length": length, "straight": straight, "theta": theta,
            "phi1": phi1, "sense": where_positive(xp, ccw, 1.0, -1.0),
            "helix": xp.sqrt(arc * arc + rise * rise),
            "T1": [R * xp.cos(phi1), R * xp.sin(phi1), z1], "T2": [R * xp.cos(phi2), R * xp.sin(phi2), z2]}


def _norm(xp, a, b):
    d = [b[i] - a[i] for i in range(3)]
    return xp.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])


def wrapped_path_length(points: Sequence[Sequence], wraps: Sequence[PathWrap], frames: dict, xp: Any = np,
                        passes: int = 2) -> Any:
    """Length of a path through ``points`` (world positions, origin to insertion) with its wraps applied.

    Parameters
    ----------
    points : list of (3,)
        World positions of the path points (numbers or expressions).
    wraps : list of PathWrap
    frames : dict
        Cylinder name -> ``(origin, [e_x, e_y, e_z])``: the cylinder frame in world coordinates.
    passes : int
        With several wraps, how many times each is re-applied to the path the others left (OpenSim
        iterates until the length changes by less than 0.5 mm); a single wrap needs one.
    """
    return _apply(*_start(points, wraps, passes), frames, len(points), xp)


@dataclass
class _Segment:
    A: Any
    B: Any
    index: int  # the path point the segment starts from, in the original path
    tag_a: str | None  # the wrap whose tangent point A is (None: a path point)
    tag_b: str | None


def _start(points: Sequence, wraps: Sequence[PathWrap], passes: int) -> tuple:
    """The straight segments between the path points, no arcs yet, and the order the wraps are applied in."""
    segments = [_Segment(points[i], points[i + 1], i, None, None) for i in range(len(points) - 1)]
    return segments, {}, list(wraps) * (passes if len(wraps) > 1 else 1)


@dataclass
class _Trace:
    """What a numeric evaluation chose: each wrap's last geometry (by cylinder name) and the final path."""

    geometry: dict = field(default_factory=dict)
    final: tuple | None = None  # (segments, arcs)


def _to_frame(frame, p, xp):
    o, axes = frame
    d = [p[i] - o[i] for i in range(3)]
    return [d[0] * e[0] + d[1] * e[1] + d[2] * e[2] for e in axes]


def _to_world(frame, p):
    o, axes = frame
    return [o[i] + p[0] * axes[0][i] + p[1] * axes[1][i] + p[2] * axes[2][i] for i in range(3)]


def _unwrap(segments: list, name: str) -> list:
    """The segments without the wrap ``name``'s tangent points (its two segments joined again)."""
    for k in range(len(segments) - 1):
        a, b = segments[k], segments[k + 1]
        if a.tag_b == name and b.tag_a == name:
            return segments[:k] + [_Segment(a.A, b.B, a.index, a.tag_a, b.tag_b)] + segments[k + 2:]
    return segments


def wrapped_path_polyline(points: Sequence[Sequence], wraps: Sequence[PathWrap], frames: dict, passes: int = 2,
                          spacing: float = 0.002) -> np.ndarray:
    """World points (k, 3) along the wrapped path, for drawing: path and tangent points, helices sampled every
    ``spacing`` metres (numbers only)."""
    trace = _Trace()
    _apply(*_start([np.asarray(p, float) for p in points], wraps, passes), frames, len(points), np, trace)
    geometry, (final, arcs) = trace.geometry, trace.final
    out = [np.asarray(final[0].A, float)]
    for seg in final:
        name = seg.tag_a
        if name is not None and name in arcs and out:  # a helix from the previous tangent point to this one
            g, frame = geometry[name], frames[name]
            R = float(next(w.cylinder.radius for w in wraps if w.cylinder.name == name))
            T1c = np.asarray(g["T1"], float)
            T2c = np.asarray(g["T2"], float)
            n = max(2, int(float(g["helix"]) / spacing))
            for t in np.linspace(0.0, 1.0, n)[1:-1]:
                phi = float(g["phi1"]) + float(g["sense"]) * t * float(g["theta"])
                p = [R * math.cos(phi), R * math.sin(phi), T1c[2] + t * (T2c[2] - T1c[2])]
                out.append(np.asarray(_to_world(frame, p), float))
        out.append(np.asarray(seg.A, float))
        out.append(np.asarray(seg.B, float))
    keep = [out[0]] + [p for a, p in zip(out[:-1], out[1:]) if np.linalg.norm(p - a) > 1e-12]
    return np.array(keep)


def _apply(segments, arcs, schedule, frames, npoints, xp, trace: _Trace | None = None):
    if not schedule:
        if trace is not None:
            trace.final = (segments, dict(arcs))
        total = 0.0
        for helix in arcs.values():
            total = total + helix
        for seg in segments:
            total = total + _norm(xp, seg.A, seg.B)
        return total
    w, rest = schedule[0], schedule[1:]
    name = w.cylinder.name
    segments = _unwrap(segments, name)
    arcs = {k: v for k, v in arcs.items() if k != name}
    frame = frames[name]
    first = 0 if w.start < 1 else w.start - 1
    last = npoints - 1 if w.end < 1 else w.end - 1
    eligible = [k for k, seg in enumerate(segments) if first <= seg.index and seg.index + 1 <= last]
    # OpenSim's choice among the segments: the first one the wrap must take (the straight segment passes
    # through the cylinder); else, of those a quadrant forces around, the one whose length grows least
    options = []
    for k in eligible:
        seg = segments[k]
        wrap = wrap_segment(_to_frame(frame, seg.A, xp), _to_frame(frame, seg.B, xp), w.cylinder, xp)
        T1, T2 = _to_world(frame, wrap["T1"]), _to_world(frame, wrap["T2"])
        new = segments[:k] + [_Segment(seg.A, T1, seg.index, seg.tag_a, name),
                              _Segment(T2, seg.B, seg.index, name, seg.tag_b)] + segments[k + 1:]
        options.append((wrap, new, {**arcs, name: wrap["helix"]}))

    def branch(option):
        if option is None:  # no segment wraps
            return _apply(segments, arcs, rest, frames, npoints, xp, trace)
        if trace is not None:
            trace.geometry[name] = option[0]
        return _apply(option[1], option[2], rest, frames, npoints, xp, trace)

    if xp is np and all(np.ndim(o[0]["wraps"]) == 0 for o in options):  # numbers: take the one branch
        chosen, best_change = None, math.inf
        for option in options:
            change = float(option[0]["length"] - option[0]["straight"])
            if float(option[0]["wraps"]) > 0 and change < best_change:
                chosen, best_change = option, change
        for option in options:
            if float(option[0]["mandatory"]) > 0:
                chosen = option
                break
        return branch(chosen)
    best, best_change = branch(None), 1e9  # expressions: every branch, chosen by selects
    values = []
    for option in options:
        wrap = option[0]
        change = wrap["length"] - wrap["straight"]
        better = xp.minimum(wrap["wraps"], best_change - change)
        values.append(branch(option))
        best, best_change = where_positive(xp, better, values[-1], best), where_positive(xp, better, change, best_change)
    for option, value in reversed(list(zip(options, values))):
        best = where_positive(xp, option[0]["mandatory"], value, best)
    return best
