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

__all__ = ["WrapCylinder", "PathWrap", "wrap_segment", "wrapped_path_length", "wrapped_path_polyline", "WRAP_METHODS",
           "holds_tangent_points"]

#: How a path meets a cylinder: the shortest path over it, or OpenSim 4.6's tangent-point construction.
WRAP_METHODS = ("shortest", "opensim")

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
    method : str
        Where the path leaves and meets the cylinder: ``"shortest"`` (default) the shortest path over it (the
        tangent lines and helix unroll into one straight line); ``"opensim"`` OpenSim 4.6's construction
        (``WrapCylinder::wrapLine``: tangent points in each point's cross-section, slid along the axis to a plane
        through the two points and an apex on the cylinder; see :func:`wrap_segment`).
    """

    name: str
    body: str
    radius: float
    length: float
    translation: tuple = (0.0, 0.0, 0.0)
    rotation: tuple = (0.0, 0.0, 0.0)
    quadrant: str = "all"
    method: str = "shortest"
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
        if self.method not in WRAP_METHODS:
            raise ValueError(f"WrapCylinder {self.name!r}: method {self.method!r} is not one of {WRAP_METHODS}")
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
                "quadrant": self.quadrant, **({"method": self.method} if self.method != "shortest" else {})}


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


def wrap_segment(A: Sequence, B: Sequence, cylinder: WrapCylinder, xp: Any = np, method: str | None = None) -> dict:
    """The shortest path from ``A`` to ``B`` over the cylinder, and whether OpenSim's rules let it wrap.

    Parameters
    ----------
    A, B : sequence of 3
        The segment's points in the cylinder frame (numbers or expressions).
    method : str, optional
        Override the cylinder's ``method`` (:data:`WRAP_METHODS`).

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
    opensim = (method or cylinder.method) == "opensim"
    if not opensim:  # the shortest path's angles (OpenSim's construction picks its tangent points otherwise)
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
        wraps = mandatory = xp.minimum(outside, hits)
        if not opensim:
            ccw = th_cw - th_ccw  # > 0: counter-clockwise is shorter
    else:  # OpenSim: with a point on the active side, wrap if the segment passes through the cylinder
        # (mandatory) or crosses the plane on the inactive side; with both points on the inactive side, wrap
        k, s = side
        a_k, b_k, n_k = (ax, bx, nx) if k == 0 else (ay, by, ny)
        one_active = xp.maximum(s * a_k, s * b_k)
        crossing = xp.minimum(-a_k * b_k, -s * n_k)  # opposite sides, crossing on the inactive side
        mandatory = xp.minimum(outside, xp.minimum(one_active, hits))
        wraps = xp.minimum(outside, xp.maximum(xp.maximum(-one_active, hits), crossing))
        if not opensim:  # go around over the active side: the arc's middle must be there
            mid = al + ga + 0.5 * th_ccw
            ccw = s * (xp.cos(mid) if k == 0 else xp.sin(mid))
    dz = bz - az
    straight = xp.sqrt(dx * dx + dy * dy + dz * dz)
    if opensim:
        out = _opensim_tangent_points(xp, A, B, R, side, la, lb, ra2, rb2)
        z1, z2 = out["T1"][2], out["T2"][2]
    else:
        theta = where_positive(xp, ccw, th_ccw, th_cw)
        phi1 = where_positive(xp, ccw, al + ga, al - ga)
        phi2 = where_positive(xp, ccw, be - gb, be + gb)
        horizontal = la + R * theta + lb
        z1 = az + dz * la / horizontal
        z2 = az + dz * (la + R * theta) / horizontal
        arc, rise = R * theta, z2 - z1
        out = {"length": xp.sqrt(horizontal * horizontal + dz * dz), "theta": theta, "phi1": phi1,
               "sense": where_positive(xp, ccw, 1.0, -1.0), "helix": xp.sqrt(arc * arc + rise * rise),
               "T1": [R * xp.cos(phi1), R * xp.sin(phi1), z1], "T2": [R * xp.cos(phi2), R * xp.sin(phi2), z2]}
    on_cylinder = xp.maximum(half - xp.abs(z1), half - xp.abs(z2))  # > 0: a tangent point within the ends
    wraps, mandatory = xp.minimum(wraps, on_cylinder), xp.minimum(mandatory, on_cylinder)
    return {"wraps": wraps, "mandatory": mandatory, "straight": straight, **out}


def _opensim_tangent_points(xp: Any, A: Sequence, B: Sequence, R: float, side: tuple | None, la: Any, lb: Any,
                            ra2: Any, rb2: Any) -> dict:
    """OpenSim 4.6's ``WrapCylinder::wrapLine`` and ``_make_spiral_path`` for one wrap, step by step, in the
    cylinder frame (axis z): each point's two tangent points in its own cross-section; a pair of them chosen (the
    closest in angle; with a quadrant, by which lie on the active side, and whether the wrap goes the far way
    round); an apex on the cylinder, on the side of the point dividing the segment in the ratio of the points'
    distances from the axis; each tangent point slid along the axis to the plane through A, B and the apex
    (unless that takes it further from the other point's cross-section than its own is); the helix between the
    two tangent points (the long way round when the tangent points' radii and the straight pieces point in
    opposite directions). OpenSim's ``DSIGN`` is ``+1`` at zero; here ties on a sign go either way (measure zero).
    """
    ax, ay, az = A
    bx, by, bz = B
    R2 = R * R
    ra, rb = xp.sqrt(ra2), xp.sqrt(rb2)

    def candidates(x, y, r, ell):
        # pp = (R²/r) v, plus or minus (R ℓ / r) (ẑ × v), v the unit radial direction (x, y)/r
        vx, vy = x / r, y / r
        d, h = R2 / r, R * ell / r
        return (d * vx - h * vy, d * vy + h * vx), (d * vx + h * vy, d * vy - h * vx)

    r1a, r1b = candidates(ax, ay, ra, la)
    r2a, r2b = candidates(bx, by, rb, lb)

    def dot(u, v):
        return u[0] * v[0] + u[1] * v[1]

    def pick(c, u, v):  # u where c > 0, else v (pairs of coordinates)
        return (where_positive(xp, c, u[0], v[0]), where_positive(xp, c, u[1], v[1]))

    far = long_wrap = None
    if side is None:  # the pair whose radial directions are closest (OpenSim's order of strict comparisons)
        d1, d2, d3, d4 = dot(r1a, r2a), dot(r1a, r2b), dot(r1b, r2a), dot(r1b, r2b)
        first = xp.minimum(xp.minimum(d1 - d2, d1 - d3), d1 - d4)
        second = xp.minimum(d2 - d3, d2 - d4)
        r1 = pick(first, r1a, pick(second, r1a, r1b))
        r2 = pick(first, r2a, pick(second, r2b, pick(d3 - d4, r2a, r2b)))
    else:  # always the pair (a, b) or (b, a); which, and whether the far side, by the candidates' sides
        k, s = side
        on = [s * c[k] for c in (r1a, r1b, r2a)]  # > 0: on the active side
        a_gt_b = dot(r1b, r2a) - dot(r1a, r2b)  # > 0: OpenSim's alpha > beta (angle between r1a, r2b larger)
        def ind(c):  # 1 where c > 0, else 0
            return where_positive(xp, c, 1.0, 0.0)

        a1, b1, a2 = ind(on[0]), ind(on[1]), ind(on[2])
        b2 = ind(s * r2b[k])
        none = (1 - a1) * (1 - b1)
        # (a, b) when: r1a, r1b both active and r2a not; r1a only; neither and r2a not but r2b; none active and
        # alpha > beta
        ab = a1 * b1 * (1 - a2) + a1 * (1 - b1) + none * (1 - a2) * (b2 + (1 - b2) * ind(a_gt_b))
        r1 = pick(ab - 0.5, r1a, r1b)
        r2 = pick(ab - 0.5, r2b, r2a)
        all_off = none * (1 - a2) * (1 - b2)
        g = ind(a_gt_b)
        far = all_off + (1 - all_off) * (ab * g + (1 - ab) * (1 - g))
        # the long way round: the tangent points' radii and the straight pieces point in opposite directions
        sum_r = (r1[0] + r2[0], r1[1] + r2[1])
        sum_m = (r1[0] - ax + r2[0] - bx, r1[1] - ay + r2[1] - by)
        long_wrap = -dot(sum_r, sum_m)
    # the apex: on the axis at the height of the point dividing AB as the points' distances from the axis do
    t = ra / (ra + rb)
    mx, my, mz = ax + t * (bx - ax), ay + t * (by - ay), az + t * (bz - az)
    l1 = _unit(xp, (ax, ay, az - mz))
    l2 = _unit(xp, (bx, by, bz - mz))
    n = _unit(xp, _cross(l1, l2))
    # ẑ × n, normalized (its z is 0): the apex candidates axispt ± R·vert
    vert = _unit(xp, (-n[1], n[0], 0.0))
    near = (mx + R * vert[0]) ** 2 + (my + R * vert[1]) ** 2 - (mx - R * vert[0]) ** 2 - (my - R * vert[1]) ** 2
    # near > 0: apex1 = axispt + R vert is the nearer one; OpenSim takes the nearer unless it wraps the far side
    sign = where_positive(xp, near, 1.0, -1.0)
    if far is not None:
        sign = where_positive(xp, far - 0.5, -sign, sign)
    px, py, pz = sign * R * vert[0], sign * R * vert[1], mz
    # the plane through A, B and the apex; slide each tangent point along the axis to it
    u = _unit(xp, (ax - px, ay - py, az - pz))
    v = _unit(xp, (bx - px, by - py, bz - pz))
    normal = _unit(xp, _cross(u, v))
    d = -(ax * normal[0] + ay * normal[1] + az * normal[2])
    # IntersectLineSegPlane over r ± 10 ẑ: no intersection when |20 n_z| < 1e-5 (parallel) or |z - z_r| > 10 m
    nz = normal[2]
    nz_safe = where_positive(xp, xp.abs(nz) - 1e-30, nz, 1e-30)

    def slide(r, z_own, z_other):
        z = -(d + normal[0] * r[0] + normal[1] * r[1]) / nz_safe
        ok = xp.minimum(xp.minimum(20.0 * xp.abs(nz) - 1e-5, 10.0 + 20.0 * 1e-5 - xp.abs(z - z_own)),
                        xp.abs(z_own - z_other) - xp.abs(z - z_other))
        return where_positive(xp, ok, z, z_own)

    z1, z2 = slide(r1, az, bz), slide(r2, bz, az)
    # _make_spiral_path: the angle from r1 to r2 about +z, the long way round if so decided
    theta = xp.arctan2(r1[0] * r2[1] - r1[1] * r2[0], dot(r1, r2))
    sense = 1.0
    if long_wrap is not None:
        theta = where_positive(xp, long_wrap, 2.0 * math.pi - theta, theta)
        sense = where_positive(xp, long_wrap, -1.0, 1.0)
    arc, rise = R * theta, z2 - z1
    helix = xp.sqrt(arc * arc + rise * rise)
    T1, T2 = [r1[0], r1[1], z1], [r2[0], r2[1], z2]
    length = _norm(xp, A, T1) + helix + _norm(xp, T2, B)
    # for drawing: the helix starts at r1's angle and turns by sense·theta
    return {"length": length, "theta": sense * theta, "phi1": xp.arctan2(r1[1], r1[0]), "sense": 1.0,
            "helix": helix, "T1": T1, "T2": T2}


def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _unit(xp, u):
    """OpenSim's ``WrapMath::NormalizeOrZero``: ``u/|u|``, or zero where ``|u|`` is below machine epsilon."""
    m = xp.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    big = m - 2.220446049250313e-16
    safe = where_positive(xp, big, m, 1.0)
    return tuple(where_positive(xp, big, c / safe, 0.0) for c in u)


def _norm(xp, a, b):
    d = [b[i] - a[i] for i in range(3)]
    return xp.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])


def wrapped_path_length(points: Sequence[Sequence], wraps: Sequence[PathWrap], frames: dict, xp: Any = np,
                        passes: int = 2, hold: Any = None) -> Any:
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
    hold : callable, optional
        ``hold(values) -> values`` applied to what OpenSim's construction (``method="opensim"``) computes on a
        cylinder — its tangent points in the cylinder frame and the helix length — so that a caller can
        differentiate the length with them held fixed on the cylinder's body: the derivative OpenSim's forces
        and lengthening speed follow (:meth:`~moco_lab.modeling.path.GeometryPath.length_and_gradient`). Not
        applied to the shortest path, whose derivative is the same either way (its length is stationary in its
        tangent points).
    """
    return _apply(*_start(points, wraps, passes), frames, len(points), xp, single=len(wraps) == 1, hold=hold)


def holds_tangent_points(wraps: Sequence[PathWrap]) -> bool:
    """True if a path with these wraps takes OpenSim's construction (one wrap, ``method="opensim"``), whose
    length's derivative differs from the derivative OpenSim's forces follow (see ``hold`` in
    :func:`wrapped_path_length`)."""
    return len(wraps) == 1 and wraps[0].cylinder.method == "opensim"


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
    _apply(*_start([np.asarray(p, float) for p in points], wraps, passes), frames, len(points), np, trace,
           single=len(wraps) == 1)
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


def _apply(segments, arcs, schedule, frames, npoints, xp, trace: _Trace | None = None, single: bool = True,
           hold: Any = None):
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
    # OpenSim on a path with several wraps slides each wrap's tangent points until the straight pieces are
    # tangent to within 0.1° (WrapCylinder::_adjust_tangent_point): towards the shortest path over the cylinder
    method = None if single else "shortest"
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
        wrap = wrap_segment(_to_frame(frame, seg.A, xp), _to_frame(frame, seg.B, xp), w.cylinder, xp, method)
        T1c, T2c, helix = wrap["T1"], wrap["T2"], wrap["helix"]
        if hold is not None and (method or w.cylinder.method) == "opensim":
            *T1c, helix = hold([*T1c, helix])
            T2c = hold(T2c)
        T1, T2 = _to_world(frame, T1c), _to_world(frame, T2c)
        new = segments[:k] + [_Segment(seg.A, T1, seg.index, seg.tag_a, name),
                              _Segment(T2, seg.B, seg.index, name, seg.tag_b)] + segments[k + 1:]
        options.append((wrap, new, {**arcs, name: helix}))

    def branch(option):
        if option is None:  # no segment wraps
            return _apply(segments, arcs, rest, frames, npoints, xp, trace, single, hold)
        if trace is not None:
            trace.geometry[name] = option[0]
        return _apply(option[1], option[2], rest, frames, npoints, xp, trace, single, hold)

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
