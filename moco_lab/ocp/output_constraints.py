"""Path constraints on model outputs: Moco's ``MocoOutputConstraint``, ``MocoOutputBoundConstraint`` and
``MocoFrameDistanceConstraint``.

Each holds at the mesh points, as Moco's path constraints do, one row per mesh point and value:

* :class:`OutputConstraint`: ``lower <= P(v(t)) <= upper`` with constant bounds (Moco's ``MocoConstraintInfo``
  bounds; default 0: the value must vanish);
* :class:`OutputBoundConstraint`: ``lower_bound(t) <= P(v(t)) <= upper_bound(t)``, the bounds OpenSim functions of
  time (either may be left out; ``equality_with_lower=True`` holds ``P(v) = lower_bound(t)``);
* :class:`FrameDistanceConstraint`: for each pair of frames, ``min² <= |Π (p₂ − p₁)|² <= max²``, ``p`` the frames'
  origins in ground and ``Π`` the identity, or the projection onto a vector or a plane (``projection``).

``v`` and ``P`` are the output goals' (:mod:`moco_lab.ocp.output_goals`: a scalar output, a vector's norm or one
component, two outputs combined by ``operation``, ``P`` the ``exponent`` rule). The rows are nonlinear; their first
and second derivatives are exact (both Hessian approximations take them). Used with
``problem.add_path_constraint(constraint)``::

    problem.add_path_constraint(OutputConstraint("height", output_path="|com_position", output_index=1,
                                                 bounds=(0.5, 2.0)))

Bounds that vary with time need a fixed time grid (as :mod:`moco_lab.ocp.bound_constraints`).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..modeling.functions import OpenSimFunction
from ..symbolic.batched import matmul
from ..util.checks import finite_number
from .bound_constraints import as_time_function
from .goals import BoundGoal, GoalContext, NodeData
from .output_goals import OutputGoal

__all__ = ["OutputConstraint", "OutputBoundConstraint", "FrameDistanceConstraint", "FrameDistancePair",
           "OutputPathConstraint", "PathRows"]


@dataclass
class PathRows:
    """An output path constraint bound to a problem: what the transcription needs.

    Attributes
    ----------
    name : str
    rows : list of BoundGoal
        Each row's value at grid points (its ``integrand``), exact derivatives and second derivatives
        (``hessian``), and the outputs it reads.
    bounds : callable ``t -> (lower (m,), upper (m,))``
        The rows' bounds at time ``t`` (``m = len(rows)``).
    """

    name: str
    rows: list
    bounds: Callable[[float], tuple[np.ndarray, np.ndarray]]


class OutputPathConstraint:
    """Base of the output path constraints (module docstring)."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise ValueError(f"A path constraint name must be a non-empty string, got {name!r}")
        self.name = name

    def time_varying(self) -> bool:
        """True if a bound is a function of time that is not a constant."""
        return False

    def bind(self, ctx: GoalContext) -> PathRows:
        """Check the constraint against a problem and return its rows."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class _OutputConstraintRow(OutputGoal):
    owner_type = "OutputConstraint"


class _OutputBoundConstraintRow(OutputGoal):
    owner_type = "OutputBoundConstraint"


class OutputConstraint(OutputPathConstraint):
    """``lower <= P(v(t)) <= upper`` at the mesh points (Moco's ``MocoOutputConstraint``; module docstring).

    Parameters
    ----------
    name : str
    output_path, second_output_path, operation, exponent, output_index
        As :class:`~moco_lab.ocp.output_goals.OutputGoal`.
    bounds : (lower, upper) or number, optional
        Default 0 (Moco's default constraint bounds).
    """

    _row_type = _OutputConstraintRow

    def __init__(self, name: str, output_path: str = "", second_output_path: str = "", operation: str = "",
                 exponent: int = 1, output_index: int = -1, bounds: Any = None):
        super().__init__(name)
        self._row = self._row_type(name, 1.0, output_path=output_path, second_output_path=second_output_path,
                                   operation=operation, exponent=exponent, output_index=output_index)
        row = self._row
        self.output_path, self.second_output_path, self.operation = row.output_path, row.second_output_path, row.operation
        self.exponent, self.output_index = row.exponent, row.output_index
        who = f"OutputConstraint {name!r}"
        if bounds is None:
            lo = hi = 0.0
        elif np.isscalar(bounds):
            lo = hi = finite_number(bounds, f"{who}: bounds")
        else:
            lo, hi = (float(b) for b in bounds)
            if math.isnan(lo) or math.isnan(hi) or lo > hi:
                raise ValueError(f"{who}: bounds must be (lower, upper) with lower <= upper, got {bounds}")
        self.bounds = (lo, hi)

    def bind(self, ctx: GoalContext) -> PathRows:
        lo, hi = self.bounds
        return PathRows(self.name, [self._row.bind(ctx)], lambda t: (np.array([lo]), np.array([hi])))


class OutputBoundConstraint(OutputConstraint):
    """``lower_bound(t) <= P(v(t)) <= upper_bound(t)`` at the mesh points (Moco's ``MocoOutputBoundConstraint``;
    module docstring).

    Parameters
    ----------
    name : str
    output_path, second_output_path, operation, exponent, output_index
        As :class:`~moco_lab.ocp.output_goals.OutputGoal`.
    lower_bound, upper_bound : OpenSim function of time, number or None
    equality_with_lower : bool
        Hold ``P(v(t)) = lower_bound(t)``.
    """

    _row_type = _OutputBoundConstraintRow

    def __init__(self, name: str, output_path: str = "", second_output_path: str = "", operation: str = "",
                 exponent: int = 1, output_index: int = -1, lower_bound: OpenSimFunction | float | None = None,
                 upper_bound: OpenSimFunction | float | None = None, equality_with_lower: bool = False):
        super().__init__(name, output_path, second_output_path, operation, exponent, output_index)
        who = f"OutputBoundConstraint {name!r}"
        self.lower_bound = as_time_function(lower_bound, f"{who}: lower_bound")
        self.upper_bound = as_time_function(upper_bound, f"{who}: upper_bound")
        if not isinstance(equality_with_lower, bool):
            raise TypeError(f"{who}: equality_with_lower must be True or False, got {equality_with_lower!r}")
        self.equality_with_lower = equality_with_lower
        if equality_with_lower and self.upper_bound is not None:
            raise ValueError(f"{who}: if equality_with_lower==true, upper bound function must not be set.")
        if equality_with_lower and self.lower_bound is None:
            raise ValueError(f"{who}: if equality_with_lower==true, lower bound function must be set.")
        self.bounds = None

    def time_varying(self) -> bool:
        return any(f is not None and not f.is_constant() for f in (self.lower_bound, self.upper_bound))

    def bind(self, ctx: GoalContext) -> PathRows:
        row = self._row.bind(ctx)
        if self.lower_bound is None and self.upper_bound is None:
            warnings.warn(f"In OutputBoundConstraint {self.name!r}, output path(s) are specified but no bounds are "
                          "provided: it constrains nothing.", stacklevel=2)
            return PathRows(self.name, [], lambda t: (np.zeros(0), np.zeros(0)))
        low, up, equal = self.lower_bound, self.upper_bound, self.equality_with_lower

        def bounds(t: float):
            lo = float(low(t)) if low is not None else -np.inf
            hi = lo if equal else (float(up(t)) if up is not None else np.inf)
            return np.array([lo]), np.array([hi])

        return PathRows(self.name, [row], bounds)


@dataclass
class FrameDistancePair:
    """Two frames and the range of their origins' distance (Moco's ``MocoFrameDistanceConstraintPair``): frame paths
    as OpenSim writes them (``/bodyset/calcn_r``, ``/ground``), distances in m."""

    frame1_path: str
    frame2_path: str
    minimum_distance: float = 0.0
    maximum_distance: float = math.inf


class FrameDistanceConstraint(OutputPathConstraint):
    """``min² <= |Π (p₂ − p₁)|² <= max²`` for each pair of frames (Moco's ``MocoFrameDistanceConstraint``; module
    docstring), e.g. the feet must not pass through each other.

    Parameters
    ----------
    name : str
    frame_pairs : list of FrameDistancePair or of (frame1_path, frame2_path, minimum_distance, maximum_distance)
    projection : {"none", "vector", "plane"}
        Measure the distance along ``projection_vector`` or in the plane normal to it.
    projection_vector : (3,), optional
        Needed with a projection (normalized).
    """

    def __init__(self, name: str, frame_pairs: Sequence = (), projection: str = "none",
                 projection_vector: Sequence[float] | None = None):
        super().__init__(name)
        self.frame_pairs: list[FrameDistancePair] = []
        for pair in frame_pairs:
            self.add_frame_pair(*(pair if not isinstance(pair, FrameDistancePair) else
                                  (pair.frame1_path, pair.frame2_path, pair.minimum_distance, pair.maximum_distance)))
        who = f"FrameDistanceConstraint {name!r}"
        if projection not in ("none", "vector", "plane"):
            raise ValueError(f"{who}: expected 'projection' to be 'none', 'vector', or 'plane', but got {projection!r}.")
        self.projection = projection
        self.projection_vector = None
        if projection != "none":
            if projection_vector is None:
                raise ValueError(f"{who}: must provide a value for 'projection_vector'.")
            n = np.asarray(projection_vector, float).reshape(-1)
            if n.shape != (3,) or not np.all(np.isfinite(n)) or not np.linalg.norm(n) > 0:
                raise ValueError(f"{who}: projection_vector must be 3 finite numbers, not all zero, got "
                                 f"{projection_vector!r}")
            self.projection_vector = n / np.sqrt(matmul(n, n))

    def add_frame_pair(self, frame1_path: str, frame2_path: str, minimum_distance: float = 0.0,
                       maximum_distance: float = math.inf) -> None:
        """Add a pair (Moco's ``addFramePair``); Moco's checks of the distances, with its wording."""
        lo, hi = float(minimum_distance), float(maximum_distance)
        if not lo >= 0:
            raise ValueError(f"Expected the minimum distance for this frame pair to non-negative, but it is {lo}.")
        if not hi >= 0:
            raise ValueError(f"Expected the maximum distance for this frame pair to non-negative, but it is {hi}.")
        if lo > hi:
            raise ValueError("Expected the minimum distance for this frame pair to be less than or equal to the "
                             f"maximum distance, but they are {lo} and {hi}, respectively.")
        self.frame_pairs.append(FrameDistancePair(str(frame1_path), str(frame2_path), lo, hi))

    def _projection(self) -> np.ndarray:
        if self.projection == "none":
            return np.eye(3)
        n = self.projection_vector
        return np.outer(n, n) if self.projection == "vector" else np.eye(3) - np.outer(n, n)

    def bind(self, ctx: GoalContext) -> PathRows:
        M = self._projection()  # symmetric and idempotent: |M d|² = dᵀ M d
        rows, lows, highs = [], [], []
        for j, pair in enumerate(self.frame_pairs):
            names = []
            for frame in (pair.frame1_path, pair.frame2_path):
                body = "ground" if frame in ("/ground", "ground") else frame
                try:
                    names.append(ctx.point_output(f"{self.name}/{j}/{frame}", body, (0.0, 0.0, 0.0))[0])
                except KeyError as err:
                    raise KeyError(f"FrameDistanceConstraint {self.name!r}: could not find frame {frame!r} "
                                   f"({err.args[0]})") from None
            rows.append(_distance_row(self.name, ctx, names[0], names[1], M))
            lows.append(pair.minimum_distance ** 2)
            highs.append(pair.maximum_distance ** 2)
        lo, hi = np.array(lows), np.array(highs)
        return PathRows(self.name, rows, lambda t: (lo, hi))


def _distance_row(name: str, ctx: GoalContext, first: str, second: str, M: np.ndarray) -> BoundGoal:
    """``dᵀ M d``, ``d = p₂ − p₁`` (both outputs (n, 3)), with its exact derivatives."""

    def value(d: NodeData, jac: bool):
        r = np.asarray(d.outputs[second], float) - np.asarray(d.outputs[first], float)
        Mr = matmul(r, M)
        s = np.sum(r * Mr, axis=1)
        if not jac:
            return s, {}
        return s, {"outputs": {second: 2 * Mr, first: -2 * Mr}}

    def hessian(d: NodeData):
        n = len(d.t)
        out = []
        for i in range(3):
            for j in range(3):
                if j >= i:
                    out.append((("out", first, i), ("out", first, j), np.full(n, 2 * M[i, j])))
                    out.append((("out", second, i), ("out", second, j), np.full(n, 2 * M[i, j])))
                out.append((("out", first, i), ("out", second, j), np.full(n, -2 * M[i, j])))
        return [term for term in out if np.any(term[2])]

    return BoundGoal(f"{name} distance", outputs=(first, second), integrand=value, hessian=hessian, columns={})
