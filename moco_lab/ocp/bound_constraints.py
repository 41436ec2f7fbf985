"""Bounds on controls and states that vary with time: Moco's ``MocoControlBoundConstraint`` and
``MocoStateBoundConstraint``.

Each is a path constraint, enforced at the mesh points as Moco enforces path constraints: for every listed
control (or state) ``v`` and mesh time ``t``,

* ``lower_bound(t) <= v(t)`` when a lower bound is given, ``v(t) <= upper_bound(t)`` when an upper bound is;
* ``v(t) = lower_bound(t)`` with ``equality_with_lower=True`` (then no upper bound may be given).

Bounds are OpenSim functions of time (:mod:`moco_lab.modeling.functions`: ``Constant``, ``LinearFunction``,
``PolynomialFunction``, ``SimmSpline``, ...) or numbers (a ``Constant``). As in Moco, an empty list of paths
constrains nothing. Used with ``problem.add_path_constraint(constraint)``::

    bound = ControlBoundConstraint("force_limit", ["/actuator"], upper_bound=LinearFunction(-10.0, 20.0))
    problem.add_path_constraint(bound)

On a fixed time grid (initial and final times fixed) the rows are linear in the variables, so they have no
second derivatives to supply and both Hessian approximations take them. A bound that varies with time on a free
time grid would depend on the final time; moco_lab refuses that combination by name (constant bounds are fine).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..modeling.functions import Constant, OpenSimFunction
from ..util.names import did_you_mean

__all__ = ["ControlBoundConstraint", "StateBoundConstraint", "BoundConstraint", "as_time_function"]


def as_time_function(value: Any, who: str) -> OpenSimFunction | None:
    """``value`` as an OpenSim function of time (a number: a ``Constant``; None stays None)."""
    if value is None or isinstance(value, OpenSimFunction):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Constant(float(value))
    raise TypeError(f"{who} must be an OpenSim function of time (moco_lab.modeling.functions: Constant, "
                    f"LinearFunction, PolynomialFunction, SimmSpline, ...), a number or None, got "
                    f"{type(value).__name__}")


@dataclass
class BoundConstraint:
    """Shared by :class:`ControlBoundConstraint` and :class:`StateBoundConstraint` (module docstring)."""

    name: str
    paths: list[str] = field(default_factory=list)
    lower_bound: OpenSimFunction | float | None = None
    upper_bound: OpenSimFunction | float | None = None
    equality_with_lower: bool = False
    #: "control" or "state" (set by the subclasses)
    kind = "variable"

    def __post_init__(self):
        who = f"{type(self).__name__} {self.name!r}"
        if isinstance(self.paths, str):
            self.paths = [self.paths]
        self.paths = list(self.paths)
        if not all(isinstance(p, str) for p in self.paths):
            raise TypeError(f"{who}: {self.kind}_paths must be a list of {self.kind} path names")
        self.lower_bound = as_time_function(self.lower_bound, f"{who}: lower_bound")
        self.upper_bound = as_time_function(self.upper_bound, f"{who}: upper_bound")
        if not isinstance(self.equality_with_lower, bool):
            raise TypeError(f"{who}: equality_with_lower must be True or False, got {self.equality_with_lower!r}")
        # Moco's own checks, with its wording
        if self.equality_with_lower and self.upper_bound is not None:
            raise ValueError(f"{who}: if equality_with_lower==true, upper bound function must not be set.")
        if self.equality_with_lower and self.lower_bound is None:
            raise ValueError(f"{who}: if equality_with_lower==true, lower bound function must be set.")

    def add_path(self, path: str) -> None:
        """Constrain one more control or state (Moco's ``addControlPath`` / ``addStatePath``)."""
        self.paths.append(path)

    def time_varying(self) -> bool:
        """True if a bound is not a constant."""
        return any(f is not None and not f.is_constant() for f in (self.lower_bound, self.upper_bound))

    def check_names(self, known: list[str]) -> list[int]:
        """Indices of the constrained paths among ``known`` (KeyError naming an unknown one)."""
        out = []
        for p in self.paths:
            if p not in known:
                raise KeyError(f"{type(self).__name__} {self.name!r}: " + did_you_mean(p, known, self.kind))
            out.append(known.index(p))
        if len(set(out)) != len(out):
            raise ValueError(f"{type(self).__name__} {self.name!r}: a {self.kind} is listed twice: {self.paths}")
        return out

    def bounds_at(self, t: float) -> tuple[float, float]:
        """``(lower, upper)`` of every listed path at time ``t`` (``±inf`` where no bound is given)."""
        lo = float(self.lower_bound(t)) if self.lower_bound is not None else -float("inf")
        if self.equality_with_lower:
            return lo, lo
        hi = float(self.upper_bound(t)) if self.upper_bound is not None else float("inf")
        return lo, hi


@dataclass
class ControlBoundConstraint(BoundConstraint):
    """Time-varying bounds on controls (Moco's ``MocoControlBoundConstraint``; module docstring).

    Parameters
    ----------
    name : str
    paths : list of str
        Control names (``problem.control_names()``), Moco's ``control_paths``.
    lower_bound, upper_bound : OpenSim function of time, number or None
    equality_with_lower : bool
        Hold each control equal to ``lower_bound(t)``.
    """

    kind = "control"


@dataclass
class StateBoundConstraint(BoundConstraint):
    """Time-varying bounds on states (Moco's ``MocoStateBoundConstraint``; module docstring).

    Parameters
    ----------
    name : str
    paths : list of str
        State names (``problem.state_names()``), Moco's ``state_paths``.
    lower_bound, upper_bound : OpenSim function of time, number or None
    equality_with_lower : bool
        Hold each state equal to ``lower_bound(t)``.
    """

    kind = "state"
