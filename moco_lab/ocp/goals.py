"""Goals: composable, named, weighted terms of the objective, or endpoint constraints (Moco's ``MocoGoal``).

A goal is a *stateless description* (name, weight, mode, its own settings).
When a problem is transcribed, each enabled goal is *bound* to it
(:meth:`Goal.bind`): the :class:`BoundGoal` holds what the transcription needs
— column indices, weights per variable, interpolated references — so one goal
object can serve several problems, and a new goal type needs no change in the
transcription.

Like Moco's goals, a goal may have an **integrand** ``s(t, y, x, a, p,
outputs)`` integrated over the motion (``I = ∫ s dt``) and an **endpoint
function** of the initial and final nodes, ``t0``, ``tf`` and ``I``. Its value
is the endpoint function (default: ``I``), optionally divided by the
centre-of-mass displacement, the duration or the total mass
(``divide_by_displacement`` / ``divide_by_duration`` / ``divide_by_mass``). In
``mode="cost"`` the objective gains ``weight × value``; in
``mode="endpoint_constraint"`` the value must lie within ``bounds``.

==============================  =========================================================================
goal                            value
==============================  =========================================================================
:class:`ControlGoal`            ``∫ Σ_j w_j |x_j|^p dt`` (``MocoControlGoal``; per-control and pattern weights)
:class:`FinalTimeGoal`          ``t_f`` (``MocoFinalTimeGoal``)
:class:`StateTrackingGoal`      ``∫ Σ_i w_i (y_i − r_i(t))² dt`` (``MocoStateTrackingGoal``)
:class:`SumSquaredStateGoal`    ``∫ Σ_i w_i y_i² dt`` over states matching a pattern (``MocoSumSquaredStateGoal``)
:class:`PeriodicityGoal`        ``y_f = ±y_0`` (constraint) or a penalty (``MocoPeriodicityGoal``)
:class:`InitialActivationGoal`  ``a(t0) = e(t0)`` for every muscle (``MocoInitialActivationGoal``)
:class:`AverageSpeedGoal`       ``v − ‖r_com(tf) − r_com(t0)‖ / (tf − t0)`` (``MocoAverageSpeedGoal``)
:class:`ContactTrackingGoal`    ``∫ Σ_groups ‖P(F_model − F_ref(t))‖² dt / (m g)`` (``MocoContactTrackingGoal``)
:class:`MarkerTrackingGoal`     ``∫ Σ_m w_m ‖p_m(q) − r_m(t)‖² dt`` (``MocoMarkerTrackingGoal``)
:class:`JointReactionGoal`      ``∫ Σ_i w_i r_i² dt / (m g)``, a joint's reaction load (``MocoJointReactionGoal``)
:class:`UserGoal`               your own Python integrand and/or endpoint function
==============================  =========================================================================
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..results.tables import interpolating_spline, reference_columns
from ..symbolic.batched import matmul
from ..symbolic.jet import jet_sqrt
from ..util.bounds import Bounds
from ..util.checks import finite_number
from ..util.names import NamedValues, did_you_mean

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..results.tables import ReferenceLike
    from ..util.bounds import BoundsLike

__all__ = ["Goal", "BoundGoal", "NodeData", "EndpointData", "GoalContext", "ControlGoal", "FinalTimeGoal",
           "StateTrackingGoal", "ControlTrackingGoal", "SumSquaredStateGoal", "PeriodicityGoal", "InitialActivationGoal",
           "AverageSpeedGoal",
           "ContactTrackingGoal", "ContactImpulseTrackingGoal", "ContactGroup", "MarkerTrackingGoal", "JointReactionGoal",
           "UserGoal", "goal_from_dict",
           "GOAL_TYPES",
           "explain_autodiff_error"]

GOAL_MODES = ("cost", "endpoint_constraint")


# ---------------------------------------------------------------------------------------- data a bound goal sees
@dataclass
class NodeData:
    """Values at ``n`` grid points, as a bound goal's integrand or endpoint function sees them.

    Attributes
    ----------
    t : ndarray (n,)
    Y : ndarray (n, ny)
        States, columns :attr:`GoalContext.state_names`.
    X : ndarray (n, nx)
        Controls, columns :attr:`GoalContext.control_names`.
    A : ndarray (n, na)
        Algebraic variables (implicit accelerations, implicit derivatives,
        multipliers, ...), columns :attr:`GoalContext.algebraic_names`.
    P : ndarray (np,)
        Parameters.
    outputs : dict of str -> ndarray (n, k)
        The model outputs the goal asked for (:attr:`BoundGoal.outputs`).
    """

    t: np.ndarray
    Y: np.ndarray
    X: np.ndarray
    A: np.ndarray
    P: np.ndarray
    outputs: dict = field(default_factory=dict)

    def row(self, k: int) -> "NodeData":
        """Grid point ``k`` as a one-row NodeData."""
        return NodeData(self.t[k:k + 1], self.Y[k:k + 1], self.X[k:k + 1], self.A[k:k + 1], self.P,
                        {n: v[k:k + 1] for n, v in self.outputs.items()})


@dataclass
class EndpointData:
    """What an endpoint function sees: times, parameters, the integral and the first and last grid points."""

    t0: float
    tf: float
    P: np.ndarray
    integral: float
    first: NodeData
    last: NodeData


class GoalContext:
    """What a goal is bound to (implemented by the transcription).

    Attributes
    ----------
    model : moco_lab.modeling.Model
    state_names, control_names, algebraic_names, parameter_names : list of str
        Columns of :class:`NodeData` ``Y``, ``X``, ``A`` and ``P``.
    total_mass : float
        kg.
    gravity : float
        Magnitude of gravity (m/s²).
    """

    model: Any
    state_names: list
    control_names: list
    algebraic_names: list
    parameter_names: list
    total_mass: float
    gravity: float

    def output(self, name: str) -> str:
        """Ask for a model output at the grid points (``KeyError`` with suggestions if there is none)."""
        raise NotImplementedError

    def output_size(self, name: str) -> int | None:
        """The number of components of output ``name`` (None where the context does not know it)."""
        raise NotImplementedError

    def point_output(self, name: str, body: str, location: ArrayLike) -> tuple[str, str]:
        """Ask for the position and velocity of a point fixed on a body; returns the two output names."""
        raise NotImplementedError

    def angular_velocity_output(self, name: str, body: str) -> str:
        """Ask for a body's angular velocity in ground (ground axes); returns the output's name."""
        raise NotImplementedError

    def rotation_output(self, name: str, body: str) -> str:
        """Ask for a body's orientation in ground (``R_GB`` by rows, 9 numbers); returns the output's name."""
        raise NotImplementedError

    def generalized_force_output(self, name: str, force_paths: list[str]) -> str:
        """Ask for the generalized forces the accelerations need beyond gravity and the force elements
        ``force_paths`` (see :meth:`moco_lab.engine.system.SymbolicSystem.add_generalized_force_output`); a
        ``ValueError`` if the transcription has no accelerations to compute them from."""
        raise NotImplementedError

    def acceleration_output(self, name: str, body: str, gravity_offset: bool, expressed_in_body: bool) -> str:
        """Ask for the acceleration of a body's origin (see
        :meth:`moco_lab.engine.system.SymbolicSystem.add_acceleration_output`); a ``ValueError`` if the
        transcription has no accelerations to compute it from."""
        raise NotImplementedError

    def output_values(self, name: str, states: dict) -> np.ndarray:
        """The values ``(n, k)`` of output ``name`` (one that depends on the coordinates and speeds only, e.g. a
        point's position) along a states table ``{state: (n,)}`` (speeds missing: 0); contexts that compute nothing
        return zeros."""
        raise NotImplementedError

    def joint_reaction_output(self, joint: str, loads_frame: str, expressed_in: str | None) -> str:
        """Ask for a joint's reaction load ``[moment (3), force (3)]`` (see
        :meth:`moco_lab.engine.system.SymbolicSystem.add_joint_reaction_output`); a ``ValueError`` if the
        transcription has no accelerations to compute it from."""
        raise NotImplementedError


@dataclass
class BoundGoal:
    """A goal bound to one problem: everything the transcription needs, nothing it must know about goal types.

    Attributes
    ----------
    name : str
    weight : float
        Objective weight (cost mode).
    mode : {"cost", "endpoint_constraint"}
    size : int
        Number of values (endpoint constraint rows).
    lower, upper : ndarray (size,)
        Bounds of the values in constraint mode.
    outputs : tuple of str
        Model outputs needed by the integrand and the endpoint function.
    integrand : callable ``(NodeData, jac) -> (s, d)``, optional
        ``s`` (n,); with ``jac``, ``d`` holds derivatives ``"Y"`` (n, ny), ``"X"``,
        ``"A"``, ``"P"`` (n, np), ``"t"`` (n,), ``"outputs"`` {name: (n, k)} (missing = 0).
    endpoint : callable ``(EndpointData, jac) -> (g, d)``, optional
        ``g`` (size,); with ``jac``, ``d`` holds ``"t0"``, ``"tf"``, ``"integral"``
        (size,), ``"P"`` (size, np), and ``"first"`` / ``"last"``: dicts like an
        integrand's (with a leading ``size`` dimension). Default: ``g = [I]``.
    native : callable ``(NativeTerms) -> None``, optional
        Adds Drake costs or constraints directly (linear goals: final time,
        periodicity, initial activation); then the goal has no integrand/endpoint.
    value : callable ``(solution arrays) -> float``, optional
        The goal's weighted value at a solution, for native goals.
    hessian : callable ``(NodeData) -> list of (a, b, values)``, optional
        The integrand's second derivatives, for the optimizer's exact Hessian: ``values`` (n,) is
        ``∂²s / ∂a ∂b`` for the variables ``a`` and ``b``, each named ``("Y", j)``, ``("X", j)``, ``("A", j)``,
        ``("P", j)``, ``("t", 0)`` or ``("out", name, k)`` (component ``k`` of an output); each unordered pair
        once, pairs not listed are zero. None: the goal offers no second derivatives.
    endpoint_generic : callable ``(EndpointData) -> list``, optional
        The endpoint function written for any numbers (floats or :class:`~moco_lab.symbolic.jet.Jet`): the
        same values as ``endpoint``, from which the exact Hessian takes its second derivatives. Needed with an
        ``endpoint`` for ``optim_hessian_approximation="exact"``.
    columns : dict, optional
        What the integrand reads: ``{"Y": indices or None, "X": ..., "A": ...}``
        (None: the whole group; a missing group: none of it), besides its
        ``outputs``. Default None: everything. The transcription binds plain
        integral costs only to these variables.
    divide_by_displacement, divide_by_duration, divide_by_mass : bool
    total_mass : float
    """

    name: str
    weight: float = 1.0
    mode: str = "cost"
    size: int = 1
    lower: np.ndarray = field(default_factory=lambda: np.zeros(1))
    upper: np.ndarray = field(default_factory=lambda: np.zeros(1))
    outputs: tuple = ()
    integrand: Callable | None = None
    endpoint: Callable | None = None
    native: Callable | None = None
    value: Callable | None = None
    hessian: Callable | None = None
    endpoint_generic: Callable | None = None
    columns: dict | None = None
    divide_by_displacement: bool = False
    divide_by_duration: bool = False
    divide_by_mass: bool = False
    total_mass: float = 1.0

    @property
    def plain_integral_cost(self) -> bool:
        """A cost that is just ``weight × ∫ s dt`` (added chunk by chunk, no extra variables)."""
        return (self.mode == "cost" and self.integrand is not None and self.endpoint is None
                and not (self.divide_by_displacement or self.divide_by_duration or self.divide_by_mass))


class Goal:
    """Base class of goals (see the module docstring).

    Parameters
    ----------
    name : str, optional
        Unique in a problem (default: the class's default name).
    weight : float
        Objective weight in cost mode.
    enabled : bool
    mode : {"cost", "endpoint_constraint"}, optional
        Default: the goal type's default mode.
    bounds : (lower, upper) or number, optional
        Endpoint-constraint bounds (default 0: the value must vanish).
    divide_by_displacement, divide_by_duration, divide_by_mass : bool
        Divide the value by the centre-of-mass displacement ``‖r_com(tf) −
        r_com(t0)‖``, the duration ``tf − t0`` or the total mass (Moco's options
        of the same names).
    """

    default_name = "goal"
    default_mode = "cost"
    supports_endpoint_constraint = True

    def __init__(self, name: str | None = None, weight: float = 1.0, enabled: bool = True, mode: str | None = None,
                 bounds: BoundsLike = None, divide_by_displacement: bool = False, divide_by_duration: bool = False,
                 divide_by_mass: bool = False):
        self.name = name or self.default_name
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"A goal name must be a non-empty string, got {name!r}")
        self.weight = weight
        self.enabled = bool(enabled)
        self.mode = mode or self.default_mode
        if self.mode not in GOAL_MODES:
            raise ValueError(f"Goal {self.name!r}: mode must be one of {list(GOAL_MODES)}, got {mode!r}")
        if self.mode == "endpoint_constraint" and not self.supports_endpoint_constraint:
            raise ValueError(f"{type(self).__name__} {self.name!r} cannot be an endpoint constraint")
        self.bounds = self._parse_bounds(bounds)
        self.divide_by_displacement = bool(divide_by_displacement)
        self.divide_by_duration = bool(divide_by_duration)
        self.divide_by_mass = bool(divide_by_mass)

    def _parse_bounds(self, bounds):
        if bounds is None:
            return (0.0, 0.0)
        if np.isscalar(bounds):
            b = float(bounds)
            return (b, b)
        lo, hi = (float(v) for v in bounds)
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise ValueError(f"Goal {self.name!r}: bounds must be (lower, upper) with lower <= upper, got {bounds}")
        return (lo, hi)

    def goal_parameters(self) -> list[tuple[str, tuple[float, float]]]:
        """The goal's own parameters, ``[(name, (lower, upper))]`` (Moco's scale factors; default none): the problem
        optimizes each as a parameter of that name (:meth:`moco_lab.ocp.problem.Problem.validate`)."""
        return []

    @property
    def kind(self) -> str:
        """``"constraint"`` in endpoint-constraint mode, else ``"cost"`` (used by the dashboards)."""
        return "constraint" if self.mode == "endpoint_constraint" else "cost"

    # -- binding
    def bind(self, ctx: GoalContext) -> BoundGoal:
        """Check the goal against a problem and return what the transcription needs."""
        raise NotImplementedError

    def _bound(self, ctx: GoalContext, **kwargs) -> BoundGoal:
        """A BoundGoal carrying this goal's name, weight, mode, bounds and division options."""
        size = kwargs.pop("size", 1)
        outputs = tuple(kwargs.pop("outputs", ()))
        if self.divide_by_displacement:
            outputs += (ctx.output("/com_position"),)
        return BoundGoal(self.name, self.weight if self.mode == "cost" else 1.0, self.mode, size,
                         np.full(size, self.bounds[0]), np.full(size, self.bounds[1]), tuple(dict.fromkeys(outputs)),
                         divide_by_displacement=self.divide_by_displacement,
                         divide_by_duration=self.divide_by_duration, divide_by_mass=self.divide_by_mass,
                         total_mass=ctx.total_mass, **kwargs)

    @property
    def weight(self) -> float:
        """The goal's weight in the objective (finite; checked whenever it is set, e.g. by a sweep)."""
        return self._weight

    @weight.setter
    def weight(self, value: float) -> None:
        """Set the weight (a ``ValueError`` for NaN or infinity, a ``TypeError`` for what is not a number)."""
        self._weight = finite_number(value, f"Goal {self.name!r}: weight")

    # -- files
    def to_dict(self) -> dict:
        """The goal as plain data (type, name, weight, mode, options), for study files."""
        d = {"type": type(self).__name__, "name": self.name, "weight": self.weight, "enabled": self.enabled,
             "mode": self.mode}
        if self.mode == "endpoint_constraint":
            d["bounds"] = list(self.bounds)
        for key in ("divide_by_displacement", "divide_by_duration", "divide_by_mass"):
            if getattr(self, key):
                d[key] = True
        return d

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} weight={self.weight:g}>"


def _check(names: Sequence[str], name: str, owner: str, what: str) -> int:
    if name not in names:
        raise KeyError(f"{owner}: " + did_you_mean(name, list(names), what))
    return list(names).index(name)


# ----------------------------------------------------------------------------------------- control effort
class ControlGoal(Goal):
    """Minimize ``∫ Σ_j w_j |x_j|^exponent dt`` over the controls (Moco's ``MocoControlGoal``).

    Parameters
    ----------
    exponent : float
        ``>= 2`` (default 2), as in Moco.
    control_weights : dict, optional
        Per-control weights ``w_j`` (default 1); a weight of 0 leaves the control out.
    control_weights_pattern : dict, optional
        ``{regular expression: weight}``: weights for every control whose name
        matches (explicit ``control_weights`` win), as Moco's
        ``setWeightForControlPattern``.
    divide_by_displacement : bool
        Divide by the centre-of-mass displacement (Moco's effort per distance
        travelled, e.g. in predictive walking).
    """

    default_name = "effort"

    def __init__(self, name: str | None = None, weight: float = 1.0, exponent: float = 2.0,
                 control_weights: dict[str, float] | None = None, enabled: bool = True,
                 control_weights_pattern: dict[str, float] | None = None, **options: Any):
        super().__init__(name, weight, enabled, **options)
        self.exponent = exponent
        self.control_weights = {str(k): float(v) for k, v in (control_weights or {}).items()}
        self.control_weights_pattern = {str(k): float(v) for k, v in (control_weights_pattern or {}).items()}
        for pattern in self.control_weights_pattern:
            re.compile(pattern)

    @property
    def exponent(self) -> float:
        """The exponent of ``|u|`` (>= 2, finite, as in Moco; checked whenever it is set)."""
        return self._exponent

    @exponent.setter
    def exponent(self, value: float) -> None:
        """Set the exponent (a ``ValueError`` below 2 or not finite, a ``TypeError`` for what is not a number)."""
        self._exponent = finite_number(value, f"ControlGoal {self.name!r}: exponent", minimum=2,
                                       what="a finite number >= 2 (as in Moco)")

    def set_weight_for_control(self, control: str, weight: float) -> None:
        """Weight of one control (0 leaves it out), as Moco's ``setWeightForControl``."""
        self.control_weights[control] = float(weight)

    def set_weight_for_control_pattern(self, pattern: str, weight: float) -> None:
        """Weight of every control matching a regular expression (Moco's ``setWeightForControlPattern``)."""
        re.compile(pattern)
        self.control_weights_pattern[pattern] = float(weight)

    def weights_for(self, names: Sequence[str]) -> np.ndarray:
        """The weight of each control in ``names`` (patterns first, explicit weights win)."""
        for c in self.control_weights:
            _check(names, c, f"ControlGoal {self.name!r}", "control")
        w = np.ones(len(names))
        for pattern, value in self.control_weights_pattern.items():
            for j, n in enumerate(names):
                if re.fullmatch(pattern, n):
                    w[j] = value
        for c, value in self.control_weights.items():
            w[list(names).index(c)] = value
        return w

    def bind(self, ctx: GoalContext) -> BoundGoal:
        w = self.weights_for(ctx.control_names)
        p = self.exponent

        def integrand(d: NodeData, jac: bool):
            X = d.X
            if p == 2:
                s = matmul(X ** 2, w)
                dX = 2 * X * w if jac else None
            else:
                ax = np.abs(X)
                s = matmul(ax ** p, w)
                dX = p * ax ** (p - 1) * np.sign(X) * w if jac else None
            return s, {"X": dX}

        used = np.flatnonzero(w)

        def hessian(d: NodeData):
            X = d.X[:, used]
            second = np.broadcast_to(2.0, X.shape) if p == 2 else p * (p - 1) * np.abs(X) ** (p - 2)
            return [(("X", j), ("X", j), second[:, k] * w[j]) for k, j in enumerate(used)]

        return self._bound(ctx, integrand=integrand, hessian=hessian, columns={"X": None})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "exponent": self.exponent, "control_weights": self.control_weights}
        if self.control_weights_pattern:
            d["control_weights_pattern"] = self.control_weights_pattern
        return d


class FinalTimeGoal(Goal):
    """Minimize the final time ``t_f`` (Moco's ``MocoFinalTimeGoal``); bound the time with ``set_time_bounds``."""

    default_name = "final_time"
    supports_endpoint_constraint = False

    def bind(self, ctx: GoalContext) -> BoundGoal:
        w = self.weight

        def native(terms):
            terms.prog.AddLinearCost(np.array([w]), 0.0, np.array([terms.tf]))

        return self._bound(ctx, native=native, value=lambda sol: w * float(sol["tf"]))


# ----------------------------------------------------------------------------------------- states
def read_reference(reference: ReferenceLike, owner: str) -> tuple[np.ndarray, dict] | None:
    """A tracking goal's reference as ``(time (n,), {column: (n,)})``, checked (increasing time, no NaN), with
    errors naming ``owner``; None stays None."""
    if reference is None:
        return None
    time, cols, _ = reference_columns(reference, f"{owner} reference")
    time = np.asarray(time, float)
    if time.ndim != 1 or time.size < 2 or np.any(np.diff(time) <= 0):
        raise ValueError(f"{owner}: reference time must be increasing with >= 2 samples")
    cols = {k: np.asarray(v, float) for k, v in cols.items()}
    if not np.all(np.isfinite(time)):
        raise ValueError(f"{owner}: the reference's time column has NaN or infinite values")
    for k, v in cols.items():
        if v.shape != time.shape:
            raise ValueError(f"{owner}: reference column {k!r} has {v.size} values, time has {time.size}")
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise ValueError(f"{owner}: reference column {k!r} has {bad.size} NaN or infinite values (the first at "
                             f"t = {time[bad[0]]:g} s); fill or drop them first (e.g. Trajectory.resample, "
                             "or a shorter time range)")
    return time, cols


#: How tracking goals interpolate their reference tables in time.
INTERPOLATIONS = ("spline", "linear")


def _check_interpolation(interpolation: str, owner: str) -> str:
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{owner}: interpolation must be one of {list(INTERPOLATIONS)}, got {interpolation!r}")
    return interpolation


class TableSplines:
    """A reference table's columns as functions of time. ``"spline"``: as Moco's tracking goals make them
    (``GCVSplineSet``: natural quintic interpolating splines, lower odd degree for tables of fewer than six rows,
    :func:`~moco_lab.results.tables.interpolating_spline`); ``"linear"``: straight lines between the samples. Outside
    the table's time range the end values are held (slope 0).

    ``splines(T)`` -> ``(values (n, k), slopes (n, k))`` at times ``T`` (n,), columns of ``table`` (rows, k).
    """

    def __init__(self, time: np.ndarray, table: np.ndarray, kind: str = "spline"):
        self.t0, self.t1 = float(time[0]), float(time[-1])
        self.kind = kind
        self._memo: dict = {}   # times (bytes) -> (values, slopes), see MEMO_SIZE
        if kind == "linear":
            self.time, self.table = np.asarray(time, float), np.asarray(table, float).reshape(len(time), -1)
        else:
            self.spline = interpolating_spline(time, table)
            self.slope = self.spline.derivative()

    #: Times at which values were asked, remembered (per object) up to this many: the optimizer asks again and
    #: again at the same grid times (every chunk of a fixed-time problem, at every iteration).
    MEMO_SIZE = 256

    def __call__(self, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        T = np.asarray(T, float)
        memo = self._memo
        key = T.tobytes()
        hit = memo.get(key)
        if hit is not None:
            return hit
        inside = (T >= self.t0) & (T <= self.t1)
        if self.kind == "linear":
            t, y = self.time, self.table
            values = np.column_stack([np.interp(T, t, y[:, j]) for j in range(y.shape[1])])
            seg = np.clip(np.searchsorted(t, T, side="right") - 1, 0, t.size - 2)
            slopes = (y[seg + 1] - y[seg]) / (t[seg + 1] - t[seg])[:, None] * inside[:, None]
        else:
            Tc = np.clip(T, self.t0, self.t1)
            values = np.atleast_2d(self.spline(Tc).reshape(T.size, -1))
            slopes = self.slope(Tc).reshape(T.size, -1) * inside[:, None]
        values.flags.writeable = slopes.flags.writeable = False  # shared by every caller at these times
        if len(memo) >= self.MEMO_SIZE:
            memo.clear()
        memo[key] = (values, slopes)
        return values, slopes

    def curvature(self, T: np.ndarray) -> np.ndarray:
        """Second derivatives (n, k) at times ``T``: 0 for straight lines and outside the table."""
        T = np.asarray(T, float)
        if self.kind == "linear" or self.spline.k < 2:  # straight lines: no curvature
            return np.zeros((T.size, np.atleast_2d(self.spline(np.array([self.t0]))).shape[-1] if self.kind != "linear"
                             else self.table.shape[1]))
        inside = (T >= self.t0) & (T <= self.t1)
        curve = self.__dict__.get("_curve")
        if curve is None:
            curve = self._curve = self.spline.derivative(2)
        return curve(np.clip(T, self.t0, self.t1)).reshape(T.size, -1) * inside[:, None]


def _tracking_terms(kind: str, idx: np.ndarray, w: np.ndarray, splines: TableSplines):
    """Integrand and Hessian of ``Σ_k w_k (v_k(t) − r_k(t))²`` over the columns ``idx`` (each at most once) of the
    node block ``kind`` (``"Y"`` states or ``"X"`` controls), ``r`` the reference splines; ``t`` enters through
    the references (a free initial or final time)."""

    def integrand(d: NodeData, jac: bool):
        R, S = splines(d.t)
        block = getattr(d, kind)
        e = block[:, idx] - R
        value = matmul(e * e, w)
        if not jac:
            return value, {}
        dV = np.zeros_like(block)
        dV[:, idx] = 2 * e * w
        return value, {kind: dV, "t": -2 * matmul(e * S, w)}

    def hessian(d: NodeData):
        R, S = splines(d.t)
        e = getattr(d, kind)[:, idx] - R
        C = splines.curvature(d.t)
        out = [((kind, j), (kind, j), np.full(d.t.size, 2 * wk)) for j, wk in zip(idx, w)]
        out += [((kind, j), ("t", 0), -2 * wk * S[:, k]) for k, (j, wk) in enumerate(zip(idx, w))]
        out.append((("t", 0), ("t", 0), 2 * matmul(S * S - e * C, w)))
        return out

    return integrand, hessian


class StateTrackingGoal(Goal):
    """Track a reference: ``∫ Σ_i w_i (y_i(t) − r_i(t))² dt`` (Moco's ``MocoStateTrackingGoal``).

    Parameters
    ----------
    reference : Trajectory, .sto path, or (time, {state name: values})
        Reference table; columns must be state names (unless
        ``allow_unused_references``). Interpolated in time by natural quintic
        splines through the samples, as Moco's ``GCVSplineSet``; outside
        its time range the end values are held.
    weights : dict, optional
        Per-state weights (default 1); a state given weight 0 is not tracked.
    interpolation : {"spline", "linear"}, optional
        ``"spline"`` (default): the quintic splines above, as Moco; ``"linear"``:
        straight lines between the samples (as gait2d's tracking of Winter's
        table, posed before Moco's splines were adopted).
    pattern : str, optional
        Regular expression: track only reference columns that match it fully.
    """

    default_name = "state_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, reference: ReferenceLike = None,
                 weights: dict[str, float] | None = None, pattern: str | None = None,
                 allow_unused_references: bool = False, enabled: bool = True, interpolation: str = "spline",
                 **options: Any):
        super().__init__(name, weight, enabled, **options)
        self.interpolation = _check_interpolation(interpolation, f"StateTrackingGoal {self.name!r}")
        self.weights = {str(k): float(v) for k, v in (weights or {}).items()}
        self.pattern = pattern
        self.allow_unused_references = allow_unused_references
        self.reference = None
        if reference is not None:
            self.set_reference(reference)

    def set_reference(self, reference: ReferenceLike) -> None:
        """Set the reference (a trajectory, an ``.sto`` path or ``(time, {column: values})``)."""
        self.reference = read_reference(reference, f"StateTrackingGoal {self.name!r}")

    def set_weight(self, state: str, weight: float) -> None:
        """Weight of one tracked state (0 leaves it out)."""
        self.weights[state] = float(weight)

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"StateTrackingGoal {self.name!r}"
        if self.reference is None:
            raise ValueError(f"{owner}: no reference; call set_reference().")
        names = ctx.state_names
        for k in self.weights:
            _check(names, k, f"{owner} weight", "state")
        time, cols = self.reference
        tracked = []
        for k, col in cols.items():
            if self.pattern and not re.fullmatch(self.pattern, k):
                continue
            if k not in names:
                if self.allow_unused_references:
                    continue
                raise KeyError(f"{owner} reference column: " + did_you_mean(k, names, "state")
                               + " (set allow_unused_references=True to ignore it)")
            w = self.weights.get(k, 1.0)
            if w != 0:
                tracked.append((names.index(k), w, col))
        if not tracked:
            raise ValueError(f"{owner}: no reference column matches a state to track")
        idx = np.array([i for i, _, _ in tracked])
        w = np.array([wt for _, wt, _ in tracked])
        splines = TableSplines(time, np.column_stack([c for _, _, c in tracked]), self.interpolation)
        integrand, hessian = _tracking_terms("Y", idx, w, splines)
        return self._bound(ctx, integrand=integrand, hessian=hessian, columns={"Y": idx})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "weights": self.weights, "pattern": self.pattern,
             "allow_unused_references": self.allow_unused_references, "interpolation": self.interpolation}
        if self.reference is not None:
            time, cols = self.reference
            d["reference"] = {"time": time.tolist(), "columns": {k: v.tolist() for k, v in cols.items()}}
        return d


class ControlTrackingGoal(Goal):
    """Track controls: ``∫ Σ_i w_i (x_i(t) − r_i(t))² dt`` (Moco's ``MocoControlTrackingGoal``, e.g. electromyography).

    Parameters
    ----------
    reference : Trajectory, .sto path, or (time, {column: values})
        Reference table, interpolated by natural quintic splines through the samples (Moco's ``GCVSplineSet``);
        outside its time range the end values are held.
    control_weights : dict, optional
        Per-control weights (default 1); weight 0 leaves a control out.
    reference_labels : dict, optional
        ``{control: column}``: track each listed control against that column (one column may serve several
        controls). Without labels, every column named like a control is tracked, and a column that names no
        control is an error unless ``allow_unused_references``.
    allow_unused_references : bool
        Ignore columns that name no control (only without ``reference_labels``, as Moco).

    Examples
    --------
    Moco's exampleMocoInverse with EMG: the gastrocnemius envelope tracked by both heads::

        goal = ml.ControlTrackingGoal("emg_tracking", 50, reference=emg,
                                      reference_labels={"/forceset/gasmed_r": "gastrocnemius",
                                                        "/forceset/gaslat_r": "gastrocnemius"})
    """

    default_name = "control_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, reference: ReferenceLike = None,
                 control_weights: dict[str, float] | None = None, reference_labels: dict[str, str] | None = None,
                 allow_unused_references: bool = False, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        self.control_weights = {str(k): float(v) for k, v in (control_weights or {}).items()}
        self.reference_labels = {str(k): str(v) for k, v in (reference_labels or {}).items()}
        self.allow_unused_references = bool(allow_unused_references)
        self.reference = None
        if reference is not None:
            self.set_reference(reference)

    def set_reference(self, reference: ReferenceLike) -> None:
        """Set the reference (a trajectory, an ``.sto`` path or ``(time, {column: values})``)."""
        self.reference = read_reference(reference, f"ControlTrackingGoal {self.name!r}")

    def set_reference_label(self, control: str, label: str) -> None:
        """Track ``control`` against the reference column ``label`` (Moco's ``setReferenceLabel``)."""
        self.reference_labels[str(control)] = str(label)

    def set_weight_for_control(self, control: str, weight: float) -> None:
        """Weight of one tracked control (0 leaves it out)."""
        self.control_weights[str(control)] = float(weight)

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"ControlTrackingGoal {self.name!r}"
        if self.reference is None:
            raise ValueError(f"{owner}: no reference; call set_reference().")
        names = ctx.control_names
        for k in self.control_weights:
            _check(names, k, f"{owner} weight", "control")
        time, cols = self.reference
        if self.reference_labels:
            pairs = []
            for control, label in self.reference_labels.items():
                _check(names, control, f"{owner} reference label", "control")
                if label not in cols:
                    raise KeyError(f"{owner}: the reference has no column {label!r} (for {control}); "
                                   + did_you_mean(label, list(cols), "column"))
                pairs.append((control, label))
        else:
            pairs = []
            for label in cols:
                if label in names:
                    pairs.append((label, label))
                elif not self.allow_unused_references:
                    raise KeyError(f"{owner} reference column: " + did_you_mean(label, names, "control")
                                   + " (set allow_unused_references=True to ignore it)")
        tracked = [(names.index(c), self.control_weights.get(c, 1.0), cols[label]) for c, label in pairs]
        tracked = [t for t in tracked if t[1] != 0]
        if not tracked:
            raise ValueError(f"{owner}: no control to track")
        idx = np.array([i for i, _, _ in tracked])
        w = np.array([wt for _, wt, _ in tracked])
        splines = TableSplines(time, np.column_stack([c for _, _, c in tracked]))
        integrand, hessian = _tracking_terms("X", idx, w, splines)
        return self._bound(ctx, integrand=integrand, hessian=hessian, columns={"X": idx})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "control_weights": self.control_weights, "reference_labels": self.reference_labels,
             "allow_unused_references": self.allow_unused_references}
        if self.reference is not None:
            time, cols = self.reference
            d["reference"] = {"time": time.tolist(), "columns": {k: v.tolist() for k, v in cols.items()}}
        return d


class SumSquaredStateGoal(Goal):
    """Minimize ``∫ Σ_i w_i y_i² dt`` over the states matching ``pattern`` (Moco's ``MocoSumSquaredStateGoal``).

    Parameters
    ----------
    pattern : str
        Regular expression on state names (default: every state), e.g.
        ``".*/activation"`` for the sum of squared activations.
    weights : dict, optional
        Per-state weights (default 1).
    """

    default_name = "sum_squared_state"

    def __init__(self, name: str | None = None, weight: float = 1.0, pattern: str = ".*",
                 weights: dict[str, float] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        re.compile(pattern)
        self.pattern = pattern
        self.weights = {str(k): float(v) for k, v in (weights or {}).items()}

    def bind(self, ctx: GoalContext) -> BoundGoal:
        names = ctx.state_names
        for k in self.weights:
            _check(names, k, f"SumSquaredStateGoal {self.name!r}", "state")
        idx = [i for i, n in enumerate(names) if re.fullmatch(self.pattern, n)]
        if not idx:
            raise ValueError(f"SumSquaredStateGoal {self.name!r}: pattern {self.pattern!r} matches no state")
        w = np.array([self.weights.get(names[i], 1.0) for i in idx])

        def integrand(d: NodeData, jac: bool):
            Y = d.Y[:, idx]
            s = matmul(Y ** 2, w)
            if not jac:
                return s, {}
            dY = np.zeros_like(d.Y)
            dY[:, idx] = 2 * Y * w
            return s, {"Y": dY}

        def hessian(d: NodeData):
            return [(("Y", j), ("Y", j), np.full(d.t.size, 2 * wk)) for j, wk in zip(idx, w)]

        return self._bound(ctx, integrand=integrand, hessian=hessian, columns={"Y": np.array(idx)})

    def to_dict(self) -> dict:
        return {**super().to_dict(), "pattern": self.pattern, "weights": self.weights}


# ----------------------------------------------------------------------------------------- endpoint relations
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

    default_name = "periodicity"
    default_mode = "endpoint_constraint"
    supports_endpoint_constraint = True

    def __init__(self, name: str | None = None, weight: float = 1.0, pairs: Sequence = (), mode: str = "endpoint_constraint",
                 enabled: bool = True):
        if mode not in GOAL_MODES:
            raise ValueError(f"PeriodicityGoal mode must be 'endpoint_constraint' or 'cost', got {mode!r}")
        super().__init__(name, weight, enabled, mode=mode)
        self.pairs = []
        for p in pairs:
            self.add_pair(*p)

    def add_pair(self, initial: str, final: str | None = None, negate: bool = False) -> None:
        """Require ``final(t_f) = ±initial(t_0)`` (``negate=True``: the minus sign, for symmetric gait)."""
        self.pairs.append((initial, final or initial, bool(negate)))

    def bind(self, ctx: GoalContext) -> BoundGoal:
        if not self.pairs:
            raise ValueError(f"PeriodicityGoal {self.name!r} has no pairs; use add_pair().")
        names = ctx.state_names + ctx.control_names
        for a, b, _ in self.pairs:
            for k in (a, b):
                _check(names, k, f"PeriodicityGoal {self.name!r}", "state or control")
        pairs, w, mode, name = list(self.pairs), self.weight, self.mode, self.name

        def native(terms):
            for a, b, neg in pairs:
                s = -1.0 if neg else 1.0
                v = [terms.endpoint_variable(b, -1), terms.endpoint_variable(a, 0)]
                if mode == "endpoint_constraint":
                    terms.prog.AddLinearEqualityConstraint(np.array([[1.0, -s]]), [0.0], v).evaluator() \
                        .set_description(f"{name} {b}(tf) = {'-' if neg else ''}{a}(t0)")
                else:
                    Qm = 2 * w * np.array([[1.0, -s], [-s, 1.0]])
                    terms.prog.AddQuadraticCost(Qm, np.zeros(2), v, is_convex=True)

        def value(sol):
            if mode == "endpoint_constraint":
                return 0.0
            tot = 0.0
            for a, b, neg in pairs:
                s = -1.0 if neg else 1.0
                tot += (sol["endpoint"](b, -1) - s * sol["endpoint"](a, 0)) ** 2
            return w * tot

        return self._bound(ctx, native=native, value=value)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "pairs": [list(p) for p in self.pairs]}


class InitialActivationGoal(Goal):
    """Each muscle's initial activation equals its initial excitation (Moco's ``MocoInitialActivationGoal``).

    An endpoint constraint ``a(t0) = e(t0)`` for every muscle with activation
    dynamics, so that activation does not start "for free".
    """

    default_name = "initial_activation"
    default_mode = "endpoint_constraint"
    supports_endpoint_constraint = True

    def __init__(self, name: str | None = None, enabled: bool = True):
        super().__init__(name, 1.0, enabled, mode="endpoint_constraint")

    def bind(self, ctx: GoalContext) -> BoundGoal:
        pairs = []
        for m in ctx.model.muscles:
            a = f"{m.path}/activation"
            if a in ctx.state_names and m.path in ctx.control_names:
                pairs.append((a, m.path))
        if not pairs:
            raise ValueError(f"InitialActivationGoal {self.name!r}: the model has no muscle with activation dynamics")

        def native(terms):
            for a, e in pairs:
                terms.prog.AddLinearEqualityConstraint(
                    np.array([[1.0, -1.0]]), [0.0], [terms.endpoint_variable(a, 0), terms.endpoint_variable(e, 0)]
                ).evaluator().set_description(f"initial_activation {e}")

        return self._bound(ctx, native=native, value=lambda sol: 0.0)


def _com_displacement(E: EndpointData, jac: bool):
    """``d = r_com(tf) − r_com(t0)``, ``‖d‖`` and the derivative of ‖d‖ w.r.t. the two positions."""
    r0 = E.first.outputs["/com_position"][0]
    r1 = E.last.outputs["/com_position"][0]
    d = r1 - r0
    norm = float(np.sqrt(matmul(d, d)))
    return d, norm, (d / norm if norm > 0 else np.zeros(3))


class AverageSpeedGoal(Goal):
    """Achieve an average speed: ``v_desired − ‖r_com(tf) − r_com(t0)‖ / (tf − t0)`` (Moco's ``MocoAverageSpeedGoal``).

    By default an endpoint constraint (the value must be 0); as a cost the
    value is squared.

    Parameters
    ----------
    desired_average_speed : float
        m/s.
    """

    default_name = "average_speed"
    default_mode = "endpoint_constraint"
    supports_endpoint_constraint = True

    def __init__(self, name: str | None = None, desired_average_speed: float = 0.0, weight: float = 1.0,
                 enabled: bool = True, mode: str | None = None, bounds: BoundsLike = None):
        super().__init__(name, weight, enabled, mode=mode, bounds=bounds)
        self.desired_average_speed = float(desired_average_speed)
        if not math.isfinite(self.desired_average_speed):
            raise ValueError(f"AverageSpeedGoal {self.name!r}: desired_average_speed must be finite")

    def bind(self, ctx: GoalContext) -> BoundGoal:
        v, cost = self.desired_average_speed, self.mode == "cost"
        com = ctx.output("/com_position")

        def endpoint(E: EndpointData, jac: bool):
            d, norm, unit = _com_displacement(E, jac)
            T = E.tf - E.t0
            g = v - norm / T
            val = g * g if cost else g
            if not jac:
                return np.array([val]), {}
            f = 2 * g if cost else 1.0
            dd = {"t0": np.array([f * (-norm / T ** 2)]), "tf": np.array([f * (norm / T ** 2)]),
                  "first": {"outputs": {com: (f * unit / T)[None, None, :]}},
                  "last": {"outputs": {com: (-f * unit / T)[None, None, :]}}}
            return np.array([val]), dd

        def endpoint_generic(E: EndpointData):
            r0, r1 = E.first.outputs[com][0], E.last.outputs[com][0]
            g = v - jet_sqrt(sum((r1[i] - r0[i]) * (r1[i] - r0[i]) for i in range(3))) / (E.tf - E.t0)
            return [g * g if cost else g]

        return self._bound(ctx, outputs=(com,), endpoint=endpoint, endpoint_generic=endpoint_generic)

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.pop("divide_by_displacement", None)
        return {**d, "desired_average_speed": self.desired_average_speed}


# ----------------------------------------------------------------------------------------- contact and markers
@dataclass
class ContactGroup:
    """Contact force elements whose summed force tracks one measured force.

    Attributes
    ----------
    forces : list of str
        Paths of contact force elements (each with a ``force`` output, e.g.
        ``SmoothSphereHalfSpaceForce``), e.g. ``["/forceset/contactHeel_r", "/forceset/contactFront_r"]``.
    columns : (str, str, str), or str
        Reference columns of the measured force's x, y, z components (N),
        e.g. ``("ground_force_r_vx", "ground_force_r_vy", "ground_force_r_vz")``;
        or the name of an ``ExternalForce`` of the goal's ``external_loads``
        file (e.g. ``"Right_GRF"``), whose force columns are then used.
    """

    forces: list
    columns: tuple


def element_path(name: str, paths: Sequence[str]) -> str:
    """A force element's full path from a path or, as Moco accepts, a name relative to the model
    (``"contactHeel_r"`` for ``/contactHeel_r`` or ``/forceset/contactHeel_r``)."""
    if name.startswith("/") or name in paths:
        return name
    matches = [p for p in paths if p.endswith("/" + name)]
    return matches[0] if len(matches) == 1 else name


class ContactTrackingGoal(Goal):
    """Track measured contact forces: ``(1/(m g)) ∫ Σ_groups ‖P(F_model − F_ref(t))‖² dt`` (``MocoContactTrackingGoal``).

    ``F_model`` is the summed force of a group's contact elements on the
    model (world frame), ``F_ref`` the measured force (interpolated in time by
    natural quintic splines, as Moco's ``GCVSplineSet``, or linearly with
    ``interpolation="linear"``), ``m g`` the model's
    weight, ``P`` an optional projection: ``"plane"`` removes the component
    along ``projection_vector`` (e.g. ``(0, 0, 1)`` for a sagittal-plane
    model), ``"vector"`` keeps only it.

    Parameters
    ----------
    reference : (time, {column: values}) or .sto path
        The measured forces (N), columns as named in the groups.
    groups : list of ContactGroup
        A group's ``columns`` are three reference columns, or, with
        ``external_loads``, the name of one of the file's ``ExternalForce`` s
        (Moco's ``addContactGroup(paths, external_force_name)``).
    projection : {"none", "plane", "vector"}
    projection_vector : (3,)
    external_loads : path, optional
        An OpenSim external-loads ``.xml`` (Moco's ``setExternalLoadsFile``):
        the reference is the data file it names, and a group given the name
        of one of its forces tracks that force's ``<force_identifier>x, y, z``
        columns. Forces must be expressed in ground.
    normalize_tracking_error : bool
        Divide each group's error, direction by direction, by the largest magnitude of its reference column over
        the whole table (Moco's property of the same name, default False), before the projection; a column whose
        peak is below 1e-12 N is refused by name, as Moco refuses it.
    scale_factors : list of dict, optional
        ``{"name", "group", "index", "bounds"}``: what :meth:`add_scale_factor` records (``group``: the group's
        position), for study files.
    """

    default_name = "contact_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, reference: ReferenceLike = None,
                 groups: Sequence[ContactGroup] = (), projection: str = "none", projection_vector: ArrayLike | None = None,
                 enabled: bool = True, external_loads: str | os.PathLike | None = None, interpolation: str = "spline",
                 normalize_tracking_error: bool = False, scale_factors: Sequence[dict] = (), **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"ContactTrackingGoal {self.name!r}"
        if not isinstance(normalize_tracking_error, (bool, np.bool_)):
            raise TypeError(f"{owner}: normalize_tracking_error must be True or False, got {normalize_tracking_error!r}")
        self.normalize_tracking_error = bool(normalize_tracking_error)
        self.interpolation = _check_interpolation(interpolation, owner)
        forces = {}
        if external_loads is not None:
            from ..results.external_loads import read_external_loads

            loads = read_external_loads(external_loads)
            if reference is None:
                if loads.datafile is None:
                    raise ValueError(f"{owner}: the external loads {os.fspath(external_loads)!r} name no data file; "
                                     "pass reference=")
                reference = loads.datafile
            forces = {f.name: f for f in loads.forces}
        self.reference = None if reference is None else read_reference(reference, owner)
        self.groups = []
        self._force_names: list[str | None] = []   # each group's external force, when it was given by name
        for g in groups:
            g = g if isinstance(g, ContactGroup) else ContactGroup(list(g[0]), g[1])
            named = g.columns if isinstance(g.columns, str) else None
            if isinstance(g.columns, str):
                if g.columns not in forces:
                    raise KeyError(f"{owner}: " + (did_you_mean(g.columns, list(forces), "external force")
                                                   if forces else f"group {g.columns!r} names an external force, "
                                                   "but no external_loads file was given"))
                spec = forces[g.columns]
                if spec.force_expressed_in_body not in ("ground", "world"):
                    raise ValueError(f"{owner}: external force {spec.name!r} is expressed in "
                                     f"{spec.force_expressed_in_body!r}; only forces in ground can be tracked")
                g = ContactGroup(list(g.forces), tuple(f"{spec.force_identifier}{a}" for a in "xyz"))
            self.groups.append(ContactGroup(list(g.forces), tuple(g.columns)))
            self._force_names.append(named)
        if projection not in ("none", "plane", "vector"):
            raise ValueError(f"ContactTrackingGoal {self.name!r}: projection must be 'none', 'plane' or 'vector', "
                             f"got {projection!r}")
        self.projection = projection
        self.projection_vector = None if projection_vector is None else tuple(float(v) for v in projection_vector)
        if projection != "none":
            if self.projection_vector is None or not np.linalg.norm(self.projection_vector) > 0:
                raise ValueError(f"ContactTrackingGoal {self.name!r}: projection {projection!r} needs a non-zero "
                                 "projection_vector")
        self.scale_factors: list[dict] = []
        for sf in scale_factors:
            self._add_scale_factor(sf["name"], int(sf["group"]), sf["index"], sf["bounds"])

    def add_scale_factor(self, name: str, external_force_name: str, index: int, bounds: BoundsLike) -> None:
        """Scale the reference force's component ``index`` (0, 1, 2: x, y, z of ground) of the group tracking
        ``external_force_name`` by a factor optimized within ``bounds`` (Moco's ``addScaleFactor``): the problem gets
        a parameter ``name`` (and its model a ``ScaleFactor`` component ``/name``), whose value multiplies the
        reference before the error is formed (after the normalization factors are taken from the data)."""
        owner = f"ContactTrackingGoal {self.name!r}"
        named = [f for f in self._force_names if f is not None]
        if external_force_name not in named:
            raise KeyError(f"{owner}: no contact group tracks the external force {external_force_name!r}"
                           + (f" (groups track {named})" if named else " (its groups were given by reference columns)"))
        self._add_scale_factor(name, self._force_names.index(external_force_name), index, bounds)

    def _add_scale_factor(self, name: str, group: int, index: Any, bounds: BoundsLike) -> None:
        owner = f"ContactTrackingGoal {self.name!r}"
        if isinstance(index, bool) or index not in (0, 1, 2):
            raise ValueError(f"{owner}: a scale factor's index must be 0, 1 or 2 (x, y, z), got {index!r}")
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"{owner}: a scale factor needs a name without '/', got {name!r}")
        if any(sf["name"] == name for sf in self.scale_factors):
            raise ValueError(f"{owner}: a scale factor named {name!r} already exists")
        if any(sf["group"] == group and sf["index"] == index for sf in self.scale_factors):
            raise ValueError(f"{owner}: component {index} of group {group} already has a scale factor")
        b = Bounds.parse(bounds, f"{owner}: scale factor {name!r} bounds")
        if b is None or not (np.isfinite(b.lower) and np.isfinite(b.upper)):
            raise ValueError(f"{owner}: scale factor {name!r} needs finite bounds, got {bounds!r}")
        self.scale_factors.append({"name": name, "group": int(group), "index": int(index),
                                   "bounds": (float(b.lower), float(b.upper))})

    def goal_parameters(self) -> list[tuple[str, tuple[float, float]]]:
        return [(sf["name"], sf["bounds"]) for sf in self.scale_factors]

    def tracked_groups(self, ctx: GoalContext) -> list[tuple[list[str], TableSplines]]:
        """Per contact group, its elements' force outputs and the splines of its reference's x, y, z columns."""
        owner = f"{type(self).__name__} {self.name!r}"
        if self.reference is None:
            raise ValueError(f"{owner}: no reference forces")
        if not self.groups:
            raise ValueError(f"{owner}: no contact groups")
        time, cols = self.reference
        groups = []
        elements = [e.path for e in ctx.model.force_elements]
        for g in self.groups:
            names = [ctx.output(f"{element_path(path, elements)}/force") for path in g.forces]
            missing = [c for c in g.columns if c not in cols]
            if missing:
                raise KeyError(f"{owner}: " + did_you_mean(missing[0], list(cols), "reference column"))
            groups.append((names, TableSplines(time, np.column_stack([cols[c] for c in g.columns]),
                                                self.interpolation)))
        return groups

    def _peaks(self, group: ContactGroup) -> np.ndarray:
        """The largest magnitude of each of a group's three reference columns over the whole table (Moco's
        normalization factors)."""
        peaks = np.array([float(np.max(np.abs(self.reference[1][c]))) for c in group.columns])
        for axis, c, p in zip("xyz", group.columns, peaks):
            if not p >= 1e-12:
                raise ValueError(f"ContactTrackingGoal {self.name!r}: normalize_tracking_error is enabled, but the "
                                 f"peak magnitude of the reference column {c!r} ({axis}) is {p:g} N, too close to "
                                 "zero to divide by")
        return peaks

    def bind(self, ctx: GoalContext) -> BoundGoal:
        groups = self.tracked_groups(ctx)
        if self.projection == "none":
            Pm = np.eye(3)
        else:
            n = np.asarray(self.projection_vector, float)
            n = n / np.sqrt(matmul(n, n))
            Pm = np.outer(n, n) if self.projection == "vector" else np.eye(3) - np.outer(n, n)
        scale = 1.0 / (ctx.total_mass * ctx.gravity) if ctx.gravity > 0 else 1.0 / ctx.total_mass
        outputs = tuple(n for names, _ in groups for n in names)
        # each group's error map: the projection after the optional normalization, e = Pg (F − σ F_ref)
        maps = [matmul(Pm, np.diag(1.0 / self._peaks(g))) if self.normalize_tracking_error else Pm for g in self.groups]
        # each group's scale factors: {component: index of the parameter in the problem's parameters}
        factors: list[dict[int, int]] = [{} for _ in self.groups]
        for sf in self.scale_factors:
            factors[sf["group"]][sf["index"]] = _check(ctx.parameter_names, sf["name"], f"ContactTrackingGoal "
                                                       f"{self.name!r}: scale factor", "parameter")
        npar = len(ctx.parameter_names)

        def scaled(splines, g, d: NodeData, curvature: bool = False):
            """The reference, its slope (and curvature) with group ``g``'s scale factors σ applied, then the unscaled
            reference and slope."""
            ref0, slope0 = splines(d.t)
            sigma = np.ones(3)
            for j, k in factors[g].items():
                sigma[j] = float(np.asarray(d.P, float).reshape(-1)[k])
            curve = splines.curvature(d.t) * sigma if curvature else None
            return ref0 * sigma, slope0 * sigma, curve, ref0, slope0

        def integrand(d: NodeData, jac: bool):
            s = np.zeros(d.t.size)
            douts, dt = {}, np.zeros(d.t.size)
            dP = np.zeros((d.t.size, npar))
            for g, ((names, splines), Pg) in enumerate(zip(groups, maps)):
                F = sum(d.outputs[n][:, :3] for n in names)
                ref, slope, _, ref0, _ = scaled(splines, g, d)
                e = matmul(F - ref, Pg.T)
                s += scale * np.sum(e * e, axis=1)
                if jac:
                    de = matmul(2 * scale * e, Pg)
                    for n in names:
                        douts[n] = douts.get(n, 0.0) + de
                    dt -= np.sum(de * slope, axis=1)
                    for j, k in factors[g].items():
                        dP[:, k] -= de[:, j] * ref0[:, j]
            if not jac:
                return s, {}
            return s, ({"outputs": douts, "t": dt, "P": dP} if any(factors) else {"outputs": douts, "t": dt})

        def hessian(d: NodeData):
            out = []
            n = d.t.size
            for g, ((names, splines), Pg) in enumerate(zip(groups, maps)):
                Qm = matmul(Pg.T, Pg)
                F = sum(d.outputs[nm][:, :3] for nm in names)
                ref, slope, curve, ref0, slope0 = scaled(splines, g, d, curvature=True)
                comps = [(nm, i) for nm in names for i in range(3)]
                for a, (na, i) in enumerate(comps):
                    for nb_, j in comps[a:]:
                        if Qm[i, j] != 0:
                            out.append((("out", na, i), ("out", nb_, j), np.full(n, 2 * scale * Qm[i, j])))
                    out.append((("out", na, i), ("t", 0), matmul(-2 * scale * slope, Qm[:, i])))
                    for j, k in factors[g].items():  # ∂²s/∂F_i∂σ_j = −2c Q_ij ref0_j
                        if Qm[i, j] != 0:
                            out.append((("out", na, i), ("P", k), -2 * scale * Qm[i, j] * ref0[:, j]))
                err = F - ref
                tt = np.einsum("ni,ij,nj->n", slope, Qm, slope) - np.einsum("ni,ij,nj->n", err, Qm, curve)
                out.append((("t", 0), ("t", 0), 2 * scale * tt))
                eQ, sQ = matmul(err, Qm), matmul(slope, Qm)
                items = sorted(factors[g].items())
                for a, (j, k) in enumerate(items):
                    # ∂²s/∂σ_j∂t = 2c (ref0_j (slope Q)_j − ((F − ref) Q)_j slope0_j)
                    out.append((("P", k), ("t", 0), 2 * scale * (ref0[:, j] * sQ[:, j] - eQ[:, j] * slope0[:, j])))
                    for j2, k2 in items[a:]:  # ∂²s/∂σ_j∂σ_l = 2c Q_jl ref0_j ref0_l
                        if Qm[j, j2] != 0:
                            out.append((("P", k), ("P", k2), 2 * scale * Qm[j, j2] * ref0[:, j] * ref0[:, j2]))
            return out

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=outputs, columns={})

    def to_dict(self) -> dict:
        d = super().to_dict()
        if self.reference is not None:
            time, cols = self.reference
            d["reference"] = {"time": time.tolist(), "columns": {k: v.tolist() for k, v in cols.items()}}
        d["groups"] = [{"forces": list(g.forces), "columns": list(g.columns)} for g in self.groups]
        d["projection"] = self.projection
        d["interpolation"] = self.interpolation
        if self.normalize_tracking_error:
            d["normalize_tracking_error"] = True
        if self.scale_factors:
            d["scale_factors"] = [dict(sf, bounds=list(sf["bounds"])) for sf in self.scale_factors]
        if self.projection_vector is not None:
            d["projection_vector"] = list(self.projection_vector)
        return d


class ContactImpulseTrackingGoal(ContactTrackingGoal):
    """Track the contact impulse along one axis: ``(1/(m g)) (∫ Σ_groups (F_model,a − F_ref,a(t)) dt)²`` (Moco's
    ``MocoContactImpulseTrackingGoal``): the groups' summed contact forces and the measured ones, their difference
    integrated over the motion along axis ``a`` of ground, then squared. The groups and the reference as
    :class:`ContactTrackingGoal`'s (reference columns, or an ``external_loads`` file's forces, expressed in ground);
    Moco's scale factors on the reference are not offered here (``add_scale_factor`` says so). A cost only, as in
    Moco.

    Parameters
    ----------
    impulse_axis : {0, 1, 2}
        The ground axis of the tracked impulse (x, y, z; Moco's ``impulse_axis``, which must be set).
    """

    default_name = "contact_impulse_tracking"
    supports_endpoint_constraint = False

    def __init__(self, name: str | None = None, weight: float = 1.0, reference: ReferenceLike = None,
                 groups: Sequence[ContactGroup] = (), impulse_axis: int = -1, enabled: bool = True,
                 external_loads: str | os.PathLike | None = None, interpolation: str = "spline", **options: Any):
        super().__init__(name, weight, reference, groups, enabled=enabled, external_loads=external_loads,
                         interpolation=interpolation, **options)
        if isinstance(impulse_axis, bool) or impulse_axis not in (0, 1, 2):
            raise ValueError(f"ContactImpulseTrackingGoal {self.name!r}: impulse_axis must be 0, 1 or 2 (x, y, z "
                             f"of ground), got {impulse_axis!r}")
        self.impulse_axis = int(impulse_axis)

    def add_scale_factor(self, name: str, external_force_name: str, index: int = 0, bounds: BoundsLike = None) -> None:
        """Not offered for the impulse goal (Moco's ``MocoContactImpulseTrackingGoal::addScaleFactor``): a
        ``NotImplementedError``, so that no scale factor is silently ignored."""
        raise NotImplementedError(f"ContactImpulseTrackingGoal {self.name!r}: scale factors are not offered for "
                                  "the impulse goal (ContactTrackingGoal has them)")

    def bind(self, ctx: GoalContext) -> BoundGoal:
        groups = self.tracked_groups(ctx)
        axis = self.impulse_axis
        scale = 1.0 / (ctx.total_mass * ctx.gravity) if ctx.gravity > 0 else 1.0 / ctx.total_mass
        outputs = tuple(n for names, _ in groups for n in names)

        def integrand(d: NodeData, jac: bool):
            s = np.zeros(d.t.size)
            dt = np.zeros(d.t.size)
            for names, splines in groups:
                ref, slope = splines(d.t)
                s += sum(d.outputs[n][:, axis] for n in names) - ref[:, axis]
                dt -= slope[:, axis]
            if not jac:
                return s, {}
            douts = {}
            for n in outputs:
                g = np.zeros_like(np.asarray(d.outputs[n], float))
                g[:, axis] = 1.0
                douts[n] = douts.get(n, 0.0) + g
            return s, {"outputs": douts, "t": dt}

        def hessian(d: NodeData):
            return [(("t", 0), ("t", 0), -sum(splines.curvature(d.t)[:, axis] for _, splines in groups))]

        def endpoint(E: EndpointData, jac: bool):
            value = np.array([scale * E.integral * E.integral])
            return (value, {"integral": np.array([2 * scale * E.integral])}) if jac else (value, {})

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=outputs, endpoint=endpoint,
                           endpoint_generic=lambda E: [scale * E.integral * E.integral], columns={})

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.pop("projection", None)
        d.pop("projection_vector", None)
        return {**d, "impulse_axis": self.impulse_axis}


class MarkerTrackingGoal(Goal):
    """Track marker positions: ``∫ Σ_m w_m ‖p_m(q) − r_m(t)‖² dt`` (Moco's ``MocoMarkerTrackingGoal``).

    Parameters
    ----------
    markers : dict of str -> (body, (x, y, z))
        Marker name -> the body it is fixed on and its location in that body's frame (m).
    reference : (time, {column: values}) or .sto path
        Measured positions (m), one column per marker coordinate named
        ``<marker>_x``, ``<marker>_y``, ``<marker>_z`` (a missing ``_z`` column
        means a planar marker: the z error is not tracked).
    weights : dict, optional
        Per-marker weights (default 1).
    """

    default_name = "marker_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, markers: dict | None = None, reference: ReferenceLike = None,
                 weights: dict[str, float] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        self.markers = {str(k): (str(b), tuple(float(v) for v in loc)) for k, (b, loc) in (markers or {}).items()}
        self.reference = None if reference is None else read_reference(reference, f"MarkerTrackingGoal {self.name!r}")
        self.weights = {str(k): float(v) for k, v in (weights or {}).items()}

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"MarkerTrackingGoal {self.name!r}"
        if self.reference is None or not self.markers:
            raise ValueError(f"{owner}: needs markers and a reference")
        for k in self.weights:
            _check(list(self.markers), k, owner, "marker")
        time, cols = self.reference
        tracked = []
        for name, (body, loc) in self.markers.items():
            axes = [j for j, c in enumerate("xyz") if f"{name}_{c}" in cols]
            if not axes:
                raise KeyError(f"{owner}: no reference columns for marker {name!r} "
                               f"(expected {name}_x, {name}_y[, {name}_z]); "
                               + did_you_mean(f"{name}_x", list(cols), "reference column"))
            pos, _ = ctx.point_output(f"/markerset/{name}", body, loc)
            table = np.column_stack([cols[f"{name}_{'xyz'[j]}"] for j in axes])
            tracked.append((pos, axes, TableSplines(time, table), self.weights.get(name, 1.0)))
        outputs = tuple(t[0] for t in tracked)

        def integrand(d: NodeData, jac: bool):
            s = np.zeros(d.t.size)
            douts, dt = {}, np.zeros(d.t.size)
            for pos, axes, splines, w in tracked:
                ref, slope = splines(d.t)
                e = d.outputs[pos][:, axes] - ref
                s += w * np.sum(e * e, axis=1)
                if jac:
                    g = np.zeros((d.t.size, 3))
                    g[:, axes] = 2 * w * e
                    douts[pos] = g
                    dt -= 2 * w * np.sum(e * slope, axis=1)
            return s, ({"outputs": douts, "t": dt} if jac else {})

        def hessian(d: NodeData):
            out = []
            n = d.t.size
            for pos, axes, splines, w in tracked:
                ref, slope = splines(d.t)
                curve = splines.curvature(d.t)
                e = d.outputs[pos][:, axes] - ref
                for k, a in enumerate(axes):
                    out.append((("out", pos, a), ("out", pos, a), np.full(n, 2 * w)))
                    out.append((("out", pos, a), ("t", 0), -2 * w * slope[:, k]))
                out.append((("t", 0), ("t", 0), 2 * w * np.sum(slope * slope - e * curve, axis=1)))
            return out

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=outputs, columns={})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "markers": {k: [b, list(loc)] for k, (b, loc) in self.markers.items()},
             "weights": self.weights}
        if self.reference is not None:
            time, cols = self.reference
            d["reference"] = {"time": time.tolist(), "columns": {k: v.tolist() for k, v in cols.items()}}
        return d


# ----------------------------------------------------------------------------------------- user goals
_MATH_HINT = ("moco_lab calls your function with Drake AutoDiffXd numbers to take exact derivatives, and "
              "Python's math module only accepts floats: use numpy's functions (np.sin, np.exp, np.sqrt, ...) "
              "and arithmetic instead of math.sin, math.exp, ...")


def explain_autodiff_error(err: Exception, owner: str) -> Exception:
    """A clearer error for user functions that used ``math`` on Drake's AutoDiffXd values (else ``err``)."""
    text = str(err)
    if "AutoDiffXd" in text or "must be real number" in text:
        return TypeError(f"{owner}: {text}. {_MATH_HINT}")
    return err


REACTION_MEASURES = ("moment-x", "moment-y", "moment-z", "force-x", "force-y", "force-z")


class JointReactionGoal(Goal):
    """Minimize a joint's reaction load: ``(1/(m g)) ∫ Σ_i w_i r_i² dt`` (Moco's ``MocoJointReactionGoal``).

    ``r`` is the load the joint transmits — constraint forces and its own generalized forces together, as
    Simbody's mobilizer reaction (OpenSim's ``Joint::calcReactionOnParentExpressedInGround`` /
    ``...OnChild...``) — ``[moment x, y, z, force x, y, z]`` about the origin of the joint frame on the loads frame's
    side, expressed in ``expressed_in_frame_path``; ``m g`` the model's weight. Muscles on geometry paths load the
    joint through their forces on the bones; on function-based paths they act through generalized forces only
    and do not press the joint's surfaces together (as in OpenSim 4.6). Needs the accelerations: implicit
    multibody dynamics or prescribed kinematics (:class:`~moco_lab.tools.inverse.Inverse`).

    Parameters
    ----------
    joint_path : str
        ``/jointset/<joint>`` (or the joint's name).
    loads_frame : {"parent", "child"}
        The body whose load is measured: the child's load on the parent at the joint frame on the parent
        (Moco's default), or the parent's load on the child at the joint frame on the child.
    expressed_in_frame_path : str
        ``""`` (default): the joint frame of ``loads_frame``; ``"/ground"``; or a body, ``/bodyset/<body>``.
    reaction_measures : sequence of str
        Of ``"moment-x"``, ``"moment-y"``, ``"moment-z"``, ``"force-x"``, ``"force-y"``, ``"force-z"``; empty: all.
    reaction_weights : dict of str -> float
        Weight of each measure (default 1).
    """

    default_name = "joint_reaction"

    def __init__(self, name: str | None = None, weight: float = 1.0, joint_path: str = "", loads_frame: str = "parent",
                 expressed_in_frame_path: str = "", reaction_measures: Sequence[str] = (),
                 reaction_weights: dict | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"JointReactionGoal {self.name!r}"
        if not isinstance(joint_path, str) or not joint_path:
            raise ValueError(f"{owner}: joint_path is empty; give the joint, e.g. '/jointset/walker_knee_r'")
        if loads_frame not in ("parent", "child"):
            raise ValueError(f"{owner}: loads_frame must be 'parent' or 'child', got {loads_frame!r}")
        if isinstance(reaction_measures, str):
            raise TypeError(f"{owner}: reaction_measures must be a list of measures, got the string "
                            f"{reaction_measures!r} (one measure: [{reaction_measures!r}])")
        for m in list(reaction_measures) + list(reaction_weights or {}):
            if m not in REACTION_MEASURES:
                raise ValueError(f"{owner}: reaction measure {m!r} not recognized; "
                                 + did_you_mean(m, REACTION_MEASURES, "measure"))
        self.joint_path = joint_path
        self.loads_frame = loads_frame
        self.expressed_in_frame_path = str(expressed_in_frame_path or "")
        self.reaction_measures = list(reaction_measures)
        self.reaction_weights = {k: finite_number(v, f"{owner}: weight of {k!r}")
                                 for k, v in (reaction_weights or {}).items()}

    def bind(self, ctx: GoalContext) -> BoundGoal:
        frame = self.expressed_in_frame_path
        name = ctx.joint_reaction_output(self.joint_path, self.loads_frame, frame or None)
        measures = self.reaction_measures or list(REACTION_MEASURES)
        index = np.array([REACTION_MEASURES.index(m) for m in measures])
        w = np.array([self.reaction_weights.get(m, 1.0) for m in measures])
        scale = 1.0 / (ctx.total_mass * ctx.gravity) if ctx.gravity > 0 else 1.0 / ctx.total_mass
        coef = np.zeros(6)
        np.add.at(coef, index, scale * w)  # a measure listed twice counts twice

        def integrand(d: NodeData, jac: bool):
            r = d.outputs[name]
            s = matmul(r * r, coef)
            return s, ({"outputs": {name: 2 * r * coef}} if jac else {})

        def hessian(d: NodeData):
            n = d.t.size
            return [(("out", name, i), ("out", name, i), np.full(n, 2 * coef[i])) for i in range(6) if coef[i]]

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=(name,), columns={})

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update(joint_path=self.joint_path, loads_frame=self.loads_frame,
                 expressed_in_frame_path=self.expressed_in_frame_path, reaction_measures=list(self.reaction_measures),
                 reaction_weights=dict(self.reaction_weights))
        return d


class UserGoal(Goal):
    """A goal written in Python.

    Parameters
    ----------
    integrand : callable, optional
        ``integrand(t, states, controls, parameters) -> scalar``, integrated
        over time. ``states`` etc. are :class:`~moco_lab.util.names.NamedValues`.
    endpoint : callable, optional
        ``endpoint(t0, tf, initial_states, final_states, initial_controls,
        final_controls, parameters) -> scalar``.

    The functions are called with floats or with Drake ``AutoDiffXd`` values
    (exact derivatives); use arithmetic and numpy functions such as ``np.sin``,
    not ``math.sin``. Each is one Python call per grid point, so prefer the
    built-in goals for speed. A study with a ``UserGoal`` cannot be saved to a file.
    """

    default_name = "user"
    supports_endpoint_constraint = False

    def __init__(self, name: str | None = None, weight: float = 1.0, integrand: Callable | None = None,
                 endpoint: Callable | None = None, enabled: bool = True):
        super().__init__(name, weight, enabled)
        if integrand is None and endpoint is None:
            raise ValueError(f"UserGoal {self.name!r}: give an integrand and/or an endpoint function")
        self.integrand_fn = integrand
        self.endpoint_fn = endpoint

    def bind(self, ctx: GoalContext) -> BoundGoal:
        sn, cn, pn = list(ctx.state_names), list(ctx.control_names), list(ctx.parameter_names)
        ny, nx = len(sn), len(cn)
        w, owner = self.weight, f"UserGoal {self.name!r}"
        integrand_fn, endpoint_fn = self.integrand_fn, self.endpoint_fn

        def named(y, x, p):
            return NamedValues(sn, y), NamedValues(cn, x), NamedValues(pn, p)

        def call(fn, *args):
            try:
                return fn(*args)
            except TypeError as err:
                raise explain_autodiff_error(err, owner) from err

        def native(terms):
            if integrand_fn is not None:
                for k, (tau, c) in enumerate(zip(terms.tau, terms.quadrature)):
                    vars_k = np.concatenate([[terms.t0, terms.tf], terms.Y[k], terms.X[k], terms.P])

                    def cost(z, tau=tau, c=c):
                        t0, tf = z[0], z[1]
                        y, x, p = z[2:2 + ny], z[2 + ny:2 + ny + nx], z[2 + ny + nx:]
                        t = t0 + tau * (tf - t0)
                        return w * c * (tf - t0) * call(integrand_fn, t, *named(y, x, p))

                    terms.prog.AddCost(cost, vars_k)
            if endpoint_fn is not None:
                vars_e = np.concatenate([[terms.t0, terms.tf], terms.Y[0], terms.Y[-1], terms.X[0], terms.X[-1],
                                         terms.P])

                def ecost(z):
                    t0, tf = z[0], z[1]
                    o = 2
                    y0, yf = z[o:o + ny], z[o + ny:o + 2 * ny]
                    o += 2 * ny
                    x0, xf = z[o:o + nx], z[o + nx:o + 2 * nx]
                    p = z[o + 2 * nx:]
                    s0, c0, pp = named(y0, x0, p)
                    sf, cf, _ = named(yf, xf, p)
                    return w * call(endpoint_fn, t0, tf, s0, sf, c0, cf, pp)

                terms.prog.AddCost(ecost, vars_e)

        def value(sol):
            v = 0.0
            T, q = sol["time"], sol["quadrature"]
            Y, X, P = sol["Y"], sol["X"], sol["P"]
            if integrand_fn is not None:
                for k in range(T.size):
                    v += q[k] * float(call(integrand_fn, T[k], *named(Y[k], X[k], P)))
            if endpoint_fn is not None:
                s0, c0, pp = named(Y[0], X[0], P)
                sf, cf, _ = named(Y[-1], X[-1], P)
                v += float(call(endpoint_fn, sol["t0"], sol["tf"], s0, sf, c0, cf, pp))
            return w * v

        return self._bound(ctx, native=native, value=value)

    def to_dict(self) -> dict:
        raise TypeError(f"UserGoal {self.name!r} holds Python functions and cannot be saved to a study file.")


#: Goal types that can be read from a study file, by class name.
GOAL_TYPES = {c.__name__: c for c in (ControlGoal, FinalTimeGoal, StateTrackingGoal, ControlTrackingGoal,
                                      SumSquaredStateGoal,
                                      PeriodicityGoal, InitialActivationGoal, AverageSpeedGoal, ContactTrackingGoal,
                                      ContactImpulseTrackingGoal, MarkerTrackingGoal, JointReactionGoal)}


def goal_from_dict(d: dict) -> Goal:
    """Rebuild a goal from :meth:`Goal.to_dict` output."""
    d = dict(d)
    kind = d.pop("type")
    if kind not in GOAL_TYPES:
        raise ValueError(f"Unknown goal type {kind!r}; known: {sorted(GOAL_TYPES)}")
    for key in ("reference", "translation_reference", "angular_velocity_reference", "rotation_reference",
                "acceleration_reference", "states_reference"):
        if key in d and isinstance(d[key], dict):
            ref = d.pop(key)
            d[key] = (np.asarray(ref["time"]), {k: np.asarray(v) for k, v in ref["columns"].items()})
    if kind == "PeriodicityGoal":
        d["pairs"] = [tuple(p) for p in d.get("pairs", [])]
        d.pop("bounds", None)
    if kind == "InitialActivationGoal":
        for key in ("weight", "mode", "bounds"):
            d.pop(key, None)
    if kind in ("ContactTrackingGoal", "ContactImpulseTrackingGoal"):
        d["groups"] = [ContactGroup(list(g["forces"]), tuple(g["columns"])) for g in d.get("groups", [])]
    if kind == "MarkerTrackingGoal":
        d["markers"] = {k: (b, tuple(loc)) for k, (b, loc) in d.get("markers", {}).items()}
    return GOAL_TYPES[kind](**d)
