"""Where a model's parts are at a pose: joint centres, bones, muscle paths and contact spheres, in world coordinates.

Numeric geometry for drawing and checking: the engine's kinematic recursion
(:class:`~moco_lab.engine.multibody.SymbolicMultibody`) evaluated on numbers, so that
OpenSim ``CustomJoint``s (spline translations of the knee) are drawn where they are. Muscle paths follow OpenSim: a conditional
path point is drawn only while its coordinate is within its range, a moving point where
its functions put it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..engine.multibody import SymbolicMultibody
from ..modeling.model import Model
from ..modeling.path import ConditionalPathPoint, MovingPathPoint
from ..modeling.wrapping import wrapped_path_polyline

__all__ = ["Pose", "pose", "coordinate_vector"]


@dataclass
class Pose:
    """A model's geometry at one configuration (all positions in world coordinates, metres).

    Attributes
    ----------
    joints : dict of str -> ndarray (3,)
        Joint centres (the joint frame on the child body), by joint name.
    bones : list of (str, ndarray (3,), ndarray (3,))
        ``(body, start, end)``: a body drawn as a segment from its own joint centre to each of its child
        joints' centres (a body without children: to its centre of mass, or to its contact spheres).
    muscles : dict of str -> ndarray (k, 3)
        Each muscle's active path points, origin to insertion, by muscle path.
    spheres : dict of str -> (ndarray (3,), float)
        Contact spheres: centre and radius, by force element path.
    com : ndarray (3,)
        Whole-body centre of mass.
    markers : dict of str -> ndarray (3,)
        The model's markers (:attr:`Model.markers`), by name.
    """

    joints: dict = field(default_factory=dict)
    bones: list = field(default_factory=list)
    muscles: dict = field(default_factory=dict)
    spheres: dict = field(default_factory=dict)
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    markers: dict = field(default_factory=dict)


def coordinate_vector(model: Model, values: dict[str, float] | ArrayLike | None = None) -> np.ndarray:
    """The plant's position vector from coordinate values by name (others 0), or a vector in coordinate order."""
    q = np.zeros(model.plant.num_positions())
    if values is None:
        return q
    if isinstance(values, dict):
        for name, v in values.items():
            q[model.coordinate(name).q_index] = float(v)
        return q
    values = np.asarray(values, float)
    if values.shape != (len(model.coordinates),):
        raise ValueError(f"expected {len(model.coordinates)} coordinate values (in model.coordinates order), "
                         f"got shape {values.shape}")
    for c, v in zip(model.coordinates, values):
        q[c.q_index] = v
    return q


def pose(model: Model, values: dict[str, float] | ArrayLike | None = None) -> Pose:
    """The model's geometry at the coordinate ``values`` (a dict by coordinate name, or in
    ``model.coordinates`` order; missing coordinates are 0)."""
    q = coordinate_vector(model, values)
    by_name = {c.name: q[c.q_index] for c in model.coordinates}
    tree = model.tree()
    mb = SymbolicMultibody(tree, [float(v) for v in q], [0.0] * len(q))

    def point(body: str, location) -> np.ndarray:
        loc = np.asarray(location, float)
        if body in ("ground", "world"):
            return loc
        return np.asarray(mb.point_position(tree.body_index(body), [float(v) for v in loc]), float)

    out = Pose()
    sphere_bodies: dict[str, list[np.ndarray]] = {}  # body -> its contact spheres' centres
    children: dict[str, list[str]] = {}
    own_joint: dict[str, np.ndarray] = {}
    names = {tree.world: "world", **{i: b.name for i, b in tree.bodies.items()}}
    for j in tree.joints:
        centre = np.asarray(mb.joint_origin[j.child], float)
        out.joints[j.name] = centre
        child, parent = names[j.child], names[j.parent]
        own_joint[child] = centre
        children.setdefault(parent, []).append(child)
    for e in model.force_elements:
        kind = type(e).__name__
        if kind == "PathMuscle":
            if not e.geometry.points:  # a function-based path: a length, nothing to draw
                continue
            pts = []
            for p in e.geometry.points:
                if isinstance(p, ConditionalPathPoint) and not p.inside(by_name[p.coordinate]) > 0:
                    continue
                loc = p.location_at([by_name[c] for c in p.coordinates]) if isinstance(p, MovingPathPoint) \
                    else p.location
                pts.append(point(p.body, loc))
            if e.geometry.wraps:  # around the cylinders, helices sampled
                frames = {}
                for w in e.geometry.wraps:
                    o, *tips = [point(w.cylinder.body, x) for x in w.cylinder.frame_points()]
                    frames[w.cylinder.name] = (o, [t - o for t in tips])
                pts = list(wrapped_path_polyline(pts, e.geometry.wraps, frames))
            out.muscles[e.path] = np.array(pts)
        elif kind == "SmoothSphereHalfSpaceForce":
            out.spheres[e.path] = (point(e.sphere_body, e.sphere_location), float(e.radius))
            sphere_bodies.setdefault(e.sphere_body, []).append(out.spheres[e.path][0])
    for body, start in own_joint.items():
        ends = [own_joint[c] for c in children.get(body, [])]
        if not ends:
            ends = sphere_bodies.get(body) or [point(body, tree.bodies[tree.body_index(body)].com)]
        out.bones += [(body, start, end) for end in ends]
    out.com = np.asarray(mb.center_of_mass()[0], float)
    out.markers = {m.name: point(m.body, m.location) for m in model.markers.values()}
    return out
