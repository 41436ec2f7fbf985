"""Musculotendon paths: straight segments through points fixed on bodies.

A :class:`GeometryPath` runs from an origin to an insertion through via points,
each fixed in a body frame (``"ground"`` for the world). It gives

* the path length ``l(q)`` and lengthening speed ``l̇ = (∂l/∂q) u``;
* the generalized forces of a tension ``T`` along the path, computed as
  OpenSim does, from the body forces ``T s`` at the path points mapped through
  Drake's frame Jacobians: ``f = Σ_k J_kᵀ F_k`` (Sherman, Seth & Delp 2013; with ``nq == nv``
  and ``q̇ = u`` this equals ``-(∂l/∂q)ᵀ T``);
* the moment arm about a coordinate, ``r = -∂l/∂θ`` (OpenSim's sign).

The engine derives the length as an expression of the coordinates
(:meth:`GeometryPath.length_expr`) and differentiates it exactly.

A :class:`FunctionBasedPath` (OpenSim's, what Moco's ``ModOpReplacePathsWithFunctionBasedPaths`` puts in place of
a geometry path) has no points: its length is a function of coordinates (a ``MultivariatePolynomialFunction``
fitted to the geometry), its moment arms ``−∂l/∂q``, its lengthening speed ``Σ (∂l/∂q_j) q̇_j``, and a tension acts
as the generalized forces ``r T`` only — no force on the bones at points (so a joint reaction does not see it).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from pydrake.multibody.tree import JacobianWrtVariable

from ..util.names import did_you_mean
from .functions import MultivariatePolynomialFunction
from .wrapping import holds_tangent_points, wrapped_path_length

if TYPE_CHECKING:
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.systems.framework import Context

    from .force_element import ForceContext


@dataclass
class PathPoint:
    """A point fixed in a body: ``body`` is a Drake body name or ``"ground"``; ``location`` in that body's frame (m)."""

    body: str
    location: tuple[float, float, float]


#: OpenSim counts a conditional point as active this far outside its range (``ConditionalPathPoint::isActive``).
CONDITIONAL_RANGE_SLACK = 1e-5


@dataclass
class ConditionalPathPoint(PathPoint):
    """A point fixed in a body that is part of the path only while ``coordinate`` is within ``range``.

    OpenSim's ``ConditionalPathPoint``: active when ``range[0] − 1e-5 ≤ q ≤ range[1] + 1e-5``. The path
    length jumps where a point switches (in OpenSim too).
    """

    coordinate: str = ""
    range: tuple[float, float] = (-np.inf, np.inf)

    def inside(self, q: Any, xp: Any = np) -> Any:
        """Positive where the point is active (the distance into its range), negative where it is not."""
        lo, hi = self.range[0] - CONDITIONAL_RANGE_SLACK, self.range[1] + CONDITIONAL_RANGE_SLACK
        return xp.minimum(q - lo, hi - q)


@dataclass
class MovingPathPoint(PathPoint):
    """A point whose location in its body is a function of coordinates (OpenSim's ``MovingPathPoint``).

    ``functions``: three :mod:`moco_lab.modeling.functions` callables, the x, y and z of the location;
    ``coordinates``: the coordinate (short name) each one reads. ``location`` holds the default pose's
    value and is not used for the path.
    """

    functions: tuple = ()
    coordinates: tuple = ()

    def location_at(self, values: Sequence, xp: Any = np) -> list:
        """The location (3 entries) for the values of :attr:`coordinates`."""
        return [f(v, xp) for f, v in zip(self.functions, values)]


@dataclass
class GeometryPath:
    """Straight-line path through :class:`PathPoint` s (origin first, insertion last).

    The points may include :class:`ConditionalPathPoint` s and :class:`MovingPathPoint` s (paths read
    from OpenSim files); the compiled model handles them exactly. The numeric methods below, which
    evaluate the path with Drake's kinematics directly, need fixed points.
    """

    points: list[PathPoint] = field(default_factory=list)
    #: Cylinders the path wraps over (:class:`~moco_lab.modeling.wrapping.PathWrap`), applied in order.
    wraps: list = field(default_factory=list)

    def __post_init__(self):
        self.points = [p if isinstance(p, PathPoint) else PathPoint(p[0], tuple(float(v) for v in p[1]))
                       for p in self.points]
        if len(self.points) < 2:
            raise ValueError("A path needs at least an origin and an insertion point")

    @property
    def fixed_points_only(self) -> bool:
        """True if every point is a plain :class:`PathPoint` (fixed in its body, always active) and nothing wraps."""
        return all(type(p) is PathPoint for p in self.points) and not self.wraps

    def _require_fixed(self, what: str) -> None:
        if not self.fixed_points_only:
            raise NotImplementedError(
                f"GeometryPath.{what} evaluates fixed path points with Drake's kinematics; this path has "
                "conditional or moving points or wraps: use the compiled model instead (ml.analyze with the muscle's "
                "'length' and 'lengthening_speed' outputs)")

    def _frame(self, plant, body: str):
        if body in ("ground", "world"):
            return plant.world_frame()
        if not plant.HasBodyNamed(body):
            names = [plant.get_body(bi).name() for bi in plant.GetBodyIndices(plant.world_body().model_instance())]
            raise KeyError("Path point: " + did_you_mean(body, ["ground", *names], "body"))
        return plant.GetBodyByName(body).body_frame()

    def check(self, plant: MultibodyPlant) -> None:
        """Raise a clear error if a path point names an unknown body."""
        for p in self.points:
            self._frame(plant, p.body)

    # ------------------------------------------------------------ numeric
    def point_positions(self, plant: MultibodyPlant, context: Context) -> np.ndarray:
        """World positions of the path points, shape ``(npoints, 3)``."""
        self._require_fixed("point_positions")
        world = plant.world_frame()
        return np.array([
            plant.CalcPointsPositions(context, self._frame(plant, p.body), np.asarray(p.location, float).reshape(3, 1),
                                      world)[:, 0]
            for p in self.points
        ])

    def length(self, plant: MultibodyPlant, context: Context) -> float:
        """Path length (m) at the plant's configuration in ``context``."""
        P = self.point_positions(plant, context)
        return float(np.sum(np.linalg.norm(np.diff(P, axis=0), axis=1)))

    def generalized_forces(self, plant: MultibodyPlant, context: Context, tension: float = 1.0) -> np.ndarray:
        """Generalized forces (nv,) of a tension pulling the path's ends together.

        At each segment end the path applies ``T s`` (``s`` the unit vector
        towards the neighbouring point); the forces are mapped with Drake's
        translational Jacobians: ``f = Σ_k J_kᵀ F_k``.
        """
        self._require_fixed("generalized_forces")
        P = self.point_positions(plant, context)
        world = plant.world_frame()
        f = np.zeros(plant.num_velocities())
        for k in range(len(self.points) - 1):
            d = P[k + 1] - P[k]
            s = d / np.linalg.norm(d)
            for idx, F in ((k, tension * s), (k + 1, -tension * s)):
                p = self.points[idx]
                J = plant.CalcJacobianTranslationalVelocity(
                    context, JacobianWrtVariable.kV, self._frame(plant, p.body),
                    np.asarray(p.location, float).reshape(3, 1), world, world)
                f += J.T @ F
        return f

    def lengthening_speed(self, plant: MultibodyPlant, context: Context) -> float:
        """``l̇ = -f(T=1) · u`` (the power of a unit tension)."""
        return float(-self.generalized_forces(plant, context, 1.0) @ plant.GetVelocities(context))

    def description(self) -> dict:
        """The path's points (what determines its length), for telling edited models apart."""
        points = []
        for p in self.points:
            row = [p.body, list(p.location)]
            if isinstance(p, ConditionalPathPoint):
                row += ["conditional", p.coordinate, list(p.range)]
            elif isinstance(p, MovingPathPoint):
                row += ["moving", list(p.coordinates), [f.description() for f in p.functions]]
            points.append(row)
        out = {"type": type(self).__name__, "points": points}
        if self.wraps:
            out["wraps"] = [w.description() for w in self.wraps]
        return out

    def length_and_gradient(self, ctx: ForceContext) -> tuple[Any, list]:
        """``(l, ∂l/∂q)``, the derivative the path's forces and lengthening speed follow: the length's own,
        except on a path that wraps by OpenSim's construction (``WrapCylinder(method="opensim")``), where OpenSim
        applies the tension along the straight pieces with the tangent points fixed on the cylinder's body — the
        derivative with those points held (it differs from the length's: OpenSim's tangent points are not where
        the length is stationary)."""
        if self.wraps and holds_tangent_points(self.wraps):
            return ctx.gradient_holding(lambda hold: self.length_expr(ctx, hold))
        length = self.length_expr(ctx)
        return length, ctx.gradient(length)

    def length_expr(self, ctx: ForceContext, hold: Any = None) -> Any:
        """Path length as an expression, from the point positions a force context gives (see
        :class:`moco_lab.modeling.forces.ForceContext`); ``hold`` as in
        :func:`~moco_lab.modeling.wrapping.wrapped_path_length`.

        A path that wraps over cylinders takes the shortest way over them
        (:func:`~moco_lab.modeling.wrapping.wrapped_path_length`). With conditional points the length
        is chosen, by the coordinates, among the paths through each
        combination of active points (nested selects; ``2^m`` paths for ``m`` conditional points).
        """
        xp = ctx.xp

        def q(name):
            return ctx.q[ctx.coordinate_index(name)]

        pts = []
        for p in self.points:
            loc = p.location_at([q(c) for c in p.coordinates], xp) if isinstance(p, MovingPathPoint) else p.location
            pts.append(ctx.point_position(p.body, loc))
        conditional = [k for k, p in enumerate(self.points) if isinstance(p, ConditionalPathPoint)]
        if self.wraps:
            if conditional:
                raise NotImplementedError("A path with both conditional points and wrapping is not supported")
            frames = {}
            for w in self.wraps:
                c = w.cylinder
                o, *tips = [ctx.point_position(c.body, loc) for loc in c.frame_points()]
                frames[c.name] = (o, [[t[i] - o[i] for i in range(3)] for t in tips])
            return wrapped_path_length(pts, self.wraps, frames, xp, hold=hold)

        def length(active: set) -> Any:
            used = [pts[k] for k in range(len(pts)) if k not in conditional or k in active]
            total = 0.0
            for a, b in zip(used[:-1], used[1:]):
                d = [bi - ai for ai, bi in zip(a, b)]
                total = total + xp.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            return total

        def choose(i: int, active: set) -> Any:
            if i == len(conditional):
                return length(active)
            k = conditional[i]
            point = self.points[k]
            return xp.where(point.inside(q(point.coordinate), xp), choose(i + 1, active | {k}), choose(i + 1, active))

        if len(conditional) > 4:
            raise NotImplementedError(f"A path with {len(conditional)} conditional points (at most 4 are supported)")
        return choose(0, set())


@dataclass
class FunctionBasedPath:
    """OpenSim's ``FunctionBasedPath``: the length as a function of coordinates.

    Parameters
    ----------
    coordinates : list of str
        The function's arguments in order: coordinate paths (``/jointset/hip_r/hip_flexion_r``) or names.
    length_function : MultivariatePolynomialFunction
        ``l(q_1, …, q_d)`` (m), ``d = len(coordinates)``.
    """

    coordinates: list
    length_function: MultivariatePolynomialFunction
    #: A function-based path has no points and wraps over nothing (drawings skip it).
    points: list = field(default_factory=list, init=False)
    wraps: list = field(default_factory=list, init=False)

    def __post_init__(self):
        if isinstance(self.coordinates, str):
            self.coordinates = self.coordinates.split()
        self.coordinates = [str(c) for c in self.coordinates]
        if not isinstance(self.length_function, MultivariatePolynomialFunction):
            raise TypeError(f"FunctionBasedPath: length_function must be a MultivariatePolynomialFunction, got "
                            f"{type(self.length_function).__name__}")
        if len(self.coordinates) != self.length_function.dimension:
            raise ValueError(f"FunctionBasedPath: {len(self.coordinates)} coordinates for a length function of "
                             f"dimension {self.length_function.dimension}")

    @property
    def fixed_points_only(self) -> bool:
        """False: there are no points (Drake-numeric path tools do not apply)."""
        return False

    def check(self, plant: MultibodyPlant) -> None:
        """Nothing to check against the plant (coordinates are checked when the engine derives the length)."""

    def length_expr(self, ctx: ForceContext) -> Any:
        """``l(q)`` as an expression of the coordinates a force context gives."""
        return self.length_function([ctx.q[ctx.coordinate_index(c)] for c in self.coordinates], ctx.xp)

    def length_and_gradient(self, ctx: ForceContext) -> tuple[Any, list]:
        """``(l, ∂l/∂q)``."""
        length = self.length_expr(ctx)
        return length, ctx.gradient(length)

    def description(self) -> dict:
        """The coordinates and the length function, for telling edited models apart."""
        return {"type": "FunctionBasedPath", "coordinates": list(self.coordinates),
                "length_function": self.length_function.description()}
