"""Goals: composable, named, weighted terms of the objective (Moco's ``MocoGoal``).

Each goal has a ``name`` (unique in a problem) and a ``weight``; the study's
objective is ``sum(weight * value)`` over enabled goals. Integral goals are
evaluated with the transcription's quadrature (trapezoidal or Simpson) over
all grid points, vectorized in numpy with exact derivatives.

============================  ==================================================
goal                          value
============================  ==================================================
:class:`ControlGoal`          ``∫ Σ_j w_j |x_j|^exponent dt`` (Moco ``MocoControlGoal``)
:class:`FinalTimeGoal`        ``t_f`` (``MocoFinalTimeGoal``)
:class:`StateTrackingGoal`    ``∫ Σ_i w_i (y_i - r_i(t))² dt`` (``MocoStateTrackingGoal``)
:class:`PeriodicityGoal`      endpoint constraint ``y_f = ±y_0`` or a penalty
:class:`UserGoal`             your own Python integrand and/or endpoint function
============================  ==================================================
"""
from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np

from ..results.trajectory import Trajectory
from ..util.names import NamedValues, did_you_mean

__all__ = ["Goal", "ControlGoal", "FinalTimeGoal", "StateTrackingGoal", "PeriodicityGoal", "UserGoal",
           "NamedValues", "goal_from_dict"]


class Goal:
    """Base class. ``kind`` is ``"integral"``, ``"endpoint"`` or ``"constraint"``."""

    kind = "integral"
    default_name = "goal"

    def __init__(self, name: str | None = None, weight: float = 1.0, enabled: bool = True):
        self.name = name or self.default_name
        self.weight = float(weight)
        if not math.isfinite(self.weight):
            raise ValueError(f"Goal {self.name!r}: weight must be finite, got {weight}")
        self.enabled = bool(enabled)

    # hooks used by the transcription -----------------------------------
    def prepare(self, problem) -> None:
        """Check names against the problem; called before every solve."""

    def integrand(self, T, Y, X, P):
        """Vectorized integrand.

        Parameters
        ----------
        T : ndarray (n,)
        Y : ndarray (n, ny), X : ndarray (n, nx), P : ndarray (np,)

        Returns
        -------
        s : ndarray (n,)
        ds_dY : (n, ny), ds_dX : (n, nx), ds_dP : (n, np), ds_dT : (n,)
        """
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"type": type(self).__name__, "name": self.name, "weight": self.weight, "enabled": self.enabled}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} weight={self.weight:g}>"


class ControlGoal(Goal):
    """Minimize ``∫ Σ_j w_j |x_j|^exponent dt`` over the controls (Moco ``MocoControlGoal``).

    Parameters
    ----------
    exponent : float
        ``>= 2`` (default 2), as in Moco.
    control_weights : dict, optional
        Per-control weights ``w_j`` (default 1); set with :meth:`set_weight_for_control`.
    """

    default_name = "effort"

    def __init__(self, name: str | None = None, weight: float = 1.0, exponent: float = 2.0,
                 control_weights: dict[str, float] | None = None, enabled: bool = True):
        super().__init__(name, weight, enabled)
        self.exponent = float(exponent)
        if self.exponent < 2:
            raise ValueError(f"ControlGoal {self.name!r}: exponent must be >= 2 (got {exponent}), as in Moco.")
        self.control_weights = dict(control_weights or {})

    def set_weight_for_control(self, control: str, weight: float) -> None:
        self.control_weights[control] = float(weight)

    def prepare(self, problem) -> None:
        names = problem.control_names()
        for c in self.control_weights:
            if c not in names:
                raise KeyError(f"ControlGoal {self.name!r}: " + did_you_mean(c, names, "control"))
        self._w = np.array([self.control_weights.get(c, 1.0) for c in names])

    def integrand(self, T, Y, X, P):
        n = X.shape[0]
        p = self.exponent
        w = self._w
        if p == 2:
            s = X ** 2 @ w
            dX = 2 * X * w
        else:
            ax = np.abs(X)
            s = ax ** p @ w
            dX = p * ax ** (p - 1) * np.sign(X) * w
        return s, np.zeros((n, Y.shape[1])), dX, np.zeros((n, P.shape[0])), np.zeros(n)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "exponent": self.exponent, "control_weights": self.control_weights}


class FinalTimeGoal(Goal):
    """Minimize the final time ``t_f`` (Moco ``MocoFinalTimeGoal``)."""

    kind = "endpoint"
    default_name = "final_time"


class StateTrackingGoal(Goal):
    """Track a reference: ``∫ Σ_i w_i (y_i(t) - r_i(t))² dt`` (Moco ``MocoStateTrackingGoal``).

    Parameters
    ----------
    reference : Trajectory or (time, {state name: values})
        Reference table; columns must be state names (unless
        ``allow_unused_references``). Interpolated linearly in time; outside
        its time range the end values are held.
    weights : dict, optional
        Per-state weights (default 1); a state given weight 0 is not tracked.
    pattern : str, optional
        Regular expression: track only reference columns that match it fully.
    """

    default_name = "state_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, reference=None,
                 weights: dict[str, float] | None = None, pattern: str | None = None,
                 allow_unused_references: bool = False, enabled: bool = True):
        super().__init__(name, weight, enabled)
        self.weights = dict(weights or {})
        self.pattern = pattern
        self.allow_unused_references = allow_unused_references
        self.reference = None
        if reference is not None:
            self.set_reference(reference)

    def set_reference(self, reference) -> None:
        if isinstance(reference, Trajectory):
            time, columns = reference.time, dict(reference.states)
        else:
            time, columns = reference
        time = np.asarray(time, float)
        if time.ndim != 1 or time.size < 2 or np.any(np.diff(time) <= 0):
            raise ValueError(f"StateTrackingGoal {self.name!r}: reference time must be increasing with >= 2 samples")
        cols = {k: np.asarray(v, float) for k, v in columns.items()}
        for k, v in cols.items():
            if v.shape != time.shape:
                raise ValueError(f"StateTrackingGoal {self.name!r}: column {k!r} has {v.size} values, time has {time.size}")
        self.reference = (time, cols)

    def set_weight(self, state: str, weight: float) -> None:
        self.weights[state] = float(weight)

    def prepare(self, problem) -> None:
        if self.reference is None:
            raise ValueError(f"StateTrackingGoal {self.name!r}: no reference; call set_reference().")
        names = problem.state_names()
        time, cols = self.reference
        for k in self.weights:
            if k not in names:
                raise KeyError(f"StateTrackingGoal {self.name!r} weight: " + did_you_mean(k, names, "state"))
        self._tracked = []
        for k in cols:
            if self.pattern and not re.fullmatch(self.pattern, k):
                continue
            if k not in names:
                if self.allow_unused_references:
                    continue
                raise KeyError(f"StateTrackingGoal {self.name!r} reference column: " + did_you_mean(k, names, "state")
                               + " (set allow_unused_references=True to ignore it)")
            w = self.weights.get(k, 1.0)
            if w != 0:
                self._tracked.append((names.index(k), w, cols[k]))
        if not self._tracked:
            raise ValueError(f"StateTrackingGoal {self.name!r}: no reference column matches a state to track")
        self._time = time

    def _ref(self, T):
        t = self._time
        vals, slopes = [], []
        for _, _, col in self._tracked:
            vals.append(np.interp(T, t, col))
            seg = np.clip(np.searchsorted(t, T, side="right") - 1, 0, t.size - 2)
            slope = (col[seg + 1] - col[seg]) / (t[seg + 1] - t[seg])
            slope = np.where((T < t[0]) | (T > t[-1]), 0.0, slope)
            slopes.append(slope)
        return vals, slopes

    def integrand(self, T, Y, X, P):
        n = Y.shape[0]
        s = np.zeros(n)
        dY = np.zeros_like(Y)
        dT = np.zeros(n)
        vals, slopes = self._ref(T)
        for (i, w, _), r, dr in zip(self._tracked, vals, slopes):
            e = Y[:, i] - r
            s += w * e * e
            dY[:, i] += 2 * w * e
            dT += -2 * w * e * dr
        return s, dY, np.zeros((n, X.shape[1])), np.zeros((n, P.shape[0])), dT

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "weights": self.weights, "pattern": self.pattern,
             "allow_unused_references": self.allow_unused_references}
        if self.reference is not None:
            time, cols = self.reference
            d["reference"] = {"time": time.tolist(), "columns": {k: v.tolist() for k, v in cols.items()}}
        return d


class PeriodicityGoal(Goal):
    """Relate final to initial values: ``v_final = v_initial`` (or ``= -v_initial``).

    As Moco's ``MocoPeriodicityGoal``: by default an endpoint *constraint*
    (``mode="endpoint_constraint"``, exact, contributes 0 to the objective);
    with ``mode="cost"`` it adds ``weight * Σ (v_f ∓ v_0)²``.

    Parameters
    ----------
    pairs : list of (initial name, final name) or (initial, final, negate)
        State or control names; ``negate=True`` imposes ``v_f = -v_0``
        (a symmetry condition, e.g. for half a gait cycle).
    """

    kind = "constraint"
    default_name = "periodicity"

    def __init__(self, name: str | None = None, weight: float = 1.0, pairs=(), mode: str = "endpoint_constraint",
                 enabled: bool = True):
        super().__init__(name, weight, enabled)
        if mode not in ("endpoint_constraint", "cost"):
            raise ValueError(f"PeriodicityGoal mode must be 'endpoint_constraint' or 'cost', got {mode!r}")
        self.mode = mode
        self.pairs = []
        for p in pairs:
            self.add_pair(*p)

    def add_pair(self, initial: str, final: str | None = None, negate: bool = False) -> None:
        self.pairs.append((initial, final or initial, bool(negate)))

    def prepare(self, problem) -> None:
        if not self.pairs:
            raise ValueError(f"PeriodicityGoal {self.name!r} has no pairs; use add_pair().")
        names = problem.state_names() + problem.control_names()
        for a, b, _ in self.pairs:
            for k in (a, b):
                if k not in names:
                    raise KeyError(f"PeriodicityGoal {self.name!r}: " + did_you_mean(k, names, "state or control"))

    def to_dict(self) -> dict:
        return {**super().to_dict(), "pairs": [list(p) for p in self.pairs], "mode": self.mode}


class UserGoal(Goal):
    """A goal written in Python.

    Parameters
    ----------
    integrand : callable, optional
        ``integrand(t, states, controls, parameters) -> scalar``, integrated
        over time. ``states`` etc. are :class:`NamedValues`.
    endpoint : callable, optional
        ``endpoint(t0, tf, initial_states, final_states, initial_controls,
        final_controls, parameters) -> scalar``.

    The functions are called with floats or with Drake ``AutoDiffXd`` values
    (exact derivatives); use arithmetic and numpy functions such as ``np.sin``,
    not ``math.sin``. Each is one Python call per grid point, so prefer the
    built-in goals for speed. A study with a ``UserGoal`` cannot be saved to a file.
    """

    default_name = "user"

    def __init__(self, name: str | None = None, weight: float = 1.0, integrand: Callable | None = None,
                 endpoint: Callable | None = None, enabled: bool = True):
        super().__init__(name, weight, enabled)
        if integrand is None and endpoint is None:
            raise ValueError(f"UserGoal {self.name!r}: give an integrand and/or an endpoint function")
        self.integrand_fn = integrand
        self.endpoint_fn = endpoint
        self.kind = "user"

    def to_dict(self) -> dict:
        raise TypeError(f"UserGoal {self.name!r} holds Python functions and cannot be saved to a study file.")


_GOAL_TYPES = {c.__name__: c for c in (ControlGoal, FinalTimeGoal, StateTrackingGoal, PeriodicityGoal)}


def goal_from_dict(d: dict) -> Goal:
    """Rebuild a goal from :meth:`Goal.to_dict` output."""
    d = dict(d)
    kind = d.pop("type")
    if kind not in _GOAL_TYPES:
        raise ValueError(f"Unknown goal type {kind!r}; known: {sorted(_GOAL_TYPES)}")
    if kind == "StateTrackingGoal" and "reference" in d:
        ref = d.pop("reference")
        d["reference"] = (np.asarray(ref["time"]), {k: np.asarray(v) for k, v in ref["columns"].items()})
    if kind == "PeriodicityGoal":
        d["pairs"] = [tuple(p) for p in d.get("pairs", [])]
    return _GOAL_TYPES[kind](**d)
