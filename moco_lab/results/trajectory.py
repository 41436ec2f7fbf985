"""Trajectories and solutions (Moco's ``MocoTrajectory`` / ``MocoSolution``).

A :class:`Trajectory` holds a time grid and named time series:

* ``states``       path -> array (n,), e.g. ``/slider/position/value``
* ``controls``     path -> array (n,), e.g. ``/actuator``
* ``multipliers``  name -> array (n,) (kinematic-constraint Lagrange multipliers)
* ``derivatives``  name -> array (n,) (generalized accelerations, implicit mode)
* ``parameters``   name -> float (time-invariant)

Every series has the same length as ``time`` (for Hermite–Simpson: mesh points
and interval midpoints, ``2N + 1`` values). A :class:`Solution` adds the solver
outcome with SciPy ``OptimizeResult`` names (``success``, ``status``,
``message``, ``fun``, ``nit``). Both read and write OpenSim's tab-delimited
``.sto`` format (:mod:`moco_lab.results.sto`) and can be the initial guess of a study.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ..util.names import NameTable, did_you_mean
from . import sto
from .duals import Duals

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Trajectory", "Solution", "Quantity", "read_trajectory"]

_GROUPS = ("states", "controls", "multipliers", "derivatives")


@dataclass(frozen=True)
class Quantity:
    """What a trajectory column measures, for labels: ``label`` (e.g. ``"knee_angle_r"``), ``quantity``
    (``"angle"``, ``"angular velocity"``, ``"activation"``, ``"excitation"``, ...) and ``unit`` (``"rad"``,
    ``""`` for dimensionless, None if unknown)."""

    label: str
    quantity: str
    unit: str | None = None

    def axis_title(self) -> str:
        """``"angle (rad)"``; just the quantity when dimensionless or unknown."""
        return f"{self.quantity} ({self.unit})" if self.unit else self.quantity

    def title(self) -> str:
        """``"knee_angle_r angle"``-style title; the label alone when it already says the quantity."""
        words = self.quantity.split()
        return self.label if words and words[-1] in self.label else f"{self.label} {self.quantity}"


class Trajectory:
    """Time series of states, controls, multipliers, derivatives and parameters.

    Parameters
    ----------
    time : array_like, shape (n,)
        Strictly increasing times.
    states, controls, multipliers, derivatives : dict of str -> array_like (n,)
    parameters : dict of str -> float
    quantities : dict of str -> Quantity, optional
        What each column measures (labels and units for plots). Solutions,
        simulations and analyses fill it from the model.
    check_time : bool, default True
        Require strictly increasing times. ``False`` is for the record of a
        degenerate solve (final time at or before the initial time), which is
        kept as an unsuccessful :class:`Solution` rather than lost.
    """

    def __init__(self, time: ArrayLike, states: Mapping[str, ArrayLike] | None = None, controls: Mapping[str,
                 ArrayLike] | None = None, multipliers: Mapping[str, ArrayLike] | None = None,
                 derivatives: Mapping[str, ArrayLike] | None = None, parameters: Mapping[str, float] | None = None,
                 check_time: bool = True, quantities: Mapping[str, Quantity] | None = None):
        self.time = np.asarray(time, dtype=float).copy()
        if self.time.ndim != 1:
            raise ValueError("time must be one-dimensional")
        if check_time and self.time.size > 1 and np.any(np.diff(self.time) <= 0):
            k = int(np.flatnonzero(np.diff(self.time) <= 0)[0])
            raise ValueError(f"time must be strictly increasing: time[{k}] = {self.time[k]:g} is followed by "
                             f"time[{k + 1}] = {self.time[k + 1]:g}")
        n = self.time.size
        for group, data in zip(_GROUPS, (states, controls, multipliers, derivatives)):
            table = NameTable(what=group[:-1])
            for name, values in (data or {}).items():
                arr = np.asarray(values, dtype=float).copy()
                if arr.shape != (n,):
                    raise ValueError(f"{group} {name!r} has shape {arr.shape}; expected ({n},) like time")
                table[name] = arr
            setattr(self, f"_{group}", table)
        self._parameters = NameTable({k: float(v) for k, v in (parameters or {}).items()}, what="parameter")
        self.quantities = dict(quantities or {})

    # ---------------------------------------------------------------- access
    @property
    def states(self) -> dict[str, np.ndarray]:
        """States by name, each an array over time (copies are not made: do not modify)."""
        return self._states

    @property
    def controls(self) -> dict[str, np.ndarray]:
        """Controls by name, each an array over time."""
        return self._controls

    @property
    def multipliers(self) -> dict[str, np.ndarray]:
        """Lagrange multipliers (and velocity corrections) by name."""
        return self._multipliers

    @property
    def derivatives(self) -> dict[str, np.ndarray]:
        """Implicit-mode accelerations and implicit derivative variables by name."""
        return self._derivatives

    @property
    def parameters(self) -> dict[str, float]:
        """Optimized parameters by property path."""
        return self._parameters

    @property
    def num_times(self) -> int:
        """Number of time points."""
        return self.time.size

    @property
    def initial_time(self) -> float:
        """First time (s)."""
        self._require_times()
        return float(self.time[0])

    @property
    def final_time(self) -> float:
        """Last time (s)."""
        self._require_times()
        return float(self.time[-1])

    def _require_times(self) -> None:
        if self.time.size == 0:
            raise ValueError("this trajectory has no time points (an empty table: nothing to interpolate, score or "
                             "start from)")

    def state_names(self) -> list[str]:
        """Names of the states, in order."""
        return list(self.states)

    def control_names(self) -> list[str]:
        """Names of the controls, in order."""
        return list(self.controls)

    def get(self, name: str) -> np.ndarray:
        """The series ``name`` from any group (states, controls, multipliers, derivatives)."""
        for group in _GROUPS:
            table = getattr(self, group)
            if name in table:
                return table[name]
        every = [k for g in _GROUPS for k in getattr(self, g)]
        raise KeyError(did_you_mean(name, every, "trajectory column"))

    def __getitem__(self, name: str) -> np.ndarray:
        return self.get(name)

    def matrix(self, group: str, names: list[str] | None = None) -> np.ndarray:
        """Columns of ``group`` stacked as an array of shape ``(n, len(names))``."""
        table = getattr(self, group)
        names = list(table) if names is None else names
        if not names:
            return np.zeros((self.num_times, 0))
        return np.column_stack([table[k] if k in table else self.get(k) for k in names])

    # ------------------------------------------------------------ operations
    def interpolate(self, time: ArrayLike) -> "Trajectory":
        """Linear interpolation of every series onto ``time`` (held constant outside)."""
        time = np.asarray(time, dtype=float)
        groups = {
            g: {k: np.interp(time, self.time, v) for k, v in getattr(self, g).items()} for g in _GROUPS
        }
        return Trajectory(time, **groups, parameters=dict(self.parameters), quantities=self.quantities)

    def copy(self) -> "Trajectory":
        """A deep copy."""
        return Trajectory(self.time, self.states, self.controls, self.multipliers, self.derivatives, self.parameters,
                          quantities=self.quantities)

    def is_numerically_equal(self, other: "Trajectory", rtol: float = 1e-12, atol: float = 0.0) -> bool:
        """Same time grid, the same columns and values (within tolerances)."""
        if self.time.shape != other.time.shape or not np.allclose(self.time, other.time, rtol=rtol, atol=atol):
            return False
        for g in _GROUPS:
            a, b = getattr(self, g), getattr(other, g)
            if list(a) != list(b):
                return False
            if any(not np.allclose(a[k], b[k], rtol=rtol, atol=atol) for k in a):
                return False
        if list(self.parameters) != list(other.parameters):
            return False
        return all(np.isclose(self.parameters[k], other.parameters[k], rtol=rtol, atol=atol) for k in self.parameters)

    def rms_difference(self, other: "Trajectory", names: list[str] | None = None, per_column: bool = False) -> float:
        """Root-mean-square difference over the *common* time range.

        Both trajectories are linearly interpolated onto this trajectory's
        times inside ``[max(t0), min(tf)]``; the RMS is
        ``sqrt(trapz(sum_k (a_k - b_k)^2) / T)``. Unlike Moco's
        ``compareContinuousVariablesRMS``, nothing outside the common range is
        compared to zero (see ``VERIFICATION.md``, remark 1).
        With ``per_column=True`` the sum is divided by the number of columns,
        as Moco's ``compareContinuousVariablesRMS`` does.
        """
        names = names or [k for k in self.states if k in other.states]
        lo = max(self.time[0], other.time[0])
        hi = min(self.time[-1], other.time[-1])
        if hi <= lo:
            raise ValueError("The trajectories do not overlap in time")
        t = self.time[(self.time >= lo) & (self.time <= hi)]
        t = np.unique(np.concatenate([[lo], t, [hi]]))
        total = np.zeros_like(t)
        for k in names:
            total += (np.interp(t, self.time, self.get(k)) - np.interp(t, other.time, other.get(k))) ** 2
        if per_column:
            total /= len(names)
        return float(np.sqrt(np.trapezoid(total, t) / (hi - lo)))

    # ------------------------------------------------------------------ files
    def write_sto(self, path: str | os.PathLike) -> None:
        """Write OpenSim's tab-delimited ``.sto`` (readable by ``osim.MocoTrajectory``)."""
        sto.write_trajectory(self, path)

    @classmethod
    def read_sto(cls, path: str | os.PathLike) -> "Trajectory":
        """Read a trajectory written by :meth:`write_sto` or by OpenSim Moco (see :func:`read_trajectory`)."""
        return read_trajectory(path)

    def __repr__(self) -> str:
        return (
            f"<Trajectory t=[{self.initial_time:g}, {self.final_time:g}], {self.num_times} times, "
            f"{len(self.states)} states, {len(self.controls)} controls, {len(self.multipliers)} multipliers, "
            f"{len(self.parameters)} parameters>"
        )


class Solution(Trajectory):
    """A study's solution: a :class:`Trajectory` plus the solver's outcome.

    Attributes
    ----------
    success : bool
        The optimizer reported convergence to the requested tolerances.
    status : str
        The optimizer's status (IPOPT's ``Solve_Succeeded``, ... / SNOPT info).
    message : str
        Human-readable summary.
    objective, fun : float
        Weighted sum of goals (``fun`` is SciPy's name).
    goal_values : dict of str -> float
        Each goal's weighted contribution (``objective == sum(goal_values)``).
    nit : int
        Solver iterations.
    solve_time : float
        Wall time of the optimizer, in seconds.
    constraint_violation : float
        Largest violation of any constraint or bound at the solution (NaN if
        the solution holds NaN).
    optimality : dict of str -> float
        IPOPT's final optimality measures in the problem's own units
        (unscaled): ``dual_infeasibility``, ``constraint_violation``,
        ``complementarity``, ``nlp_error``. IPOPT's ``tol`` applies to the
        *scaled* measures, so a small unscaled dual infeasibility is the
        better check that a solve did not stop short.
    duals : Duals or None
        IPOPT's constraint and bound multipliers at the end (IPOPT + MUMPS
        only; None for Drake's IPOPT and SNOPT): the rest of a warm start
        (``SolverSettings.optim_warm_start``). In memory only.

    Like Moco, a failed solution is *sealed*: reading its data raises until
    you call :meth:`unseal`, so a wrong answer is never used silently.
    """

    def __init__(self, trajectory: Trajectory, *, success: bool, status: str, message: str,
                 objective: float, goal_values: dict[str, float], nit: int, solve_time: float,
                 solver: str = "ipopt", constraint_violation: float = float("nan"),
                 optimality: dict[str, float] | None = None, duals: Duals | None = None):
        super().__init__(trajectory.time, trajectory.states, trajectory.controls, trajectory.multipliers,
                         trajectory.derivatives, trajectory.parameters, check_time=success,
                         quantities=trajectory.quantities)
        self.success = bool(success)
        self.status = status
        self.message = message
        self.objective = float(objective)
        self.goal_values = dict(goal_values)
        self.nit = int(nit)
        self.solve_time = float(solve_time)
        self.solver = solver
        self.constraint_violation = float(constraint_violation)
        self.optimality = dict(optimality or {})
        if duals is not None and not isinstance(duals, Duals):
            raise TypeError(f"Solution: duals must be a Duals or None, got {type(duals).__name__}")
        self.duals = duals
        self._sealed = not self.success

    @property
    def fun(self) -> float:
        """The objective (SciPy's ``OptimizeResult.fun``)."""
        return self.objective

    def is_sealed(self) -> bool:
        """True for a failed solution whose data cannot be read until :meth:`unseal`."""
        return self._sealed

    def unseal(self) -> "Solution":
        """Allow reading a failed solution's data (returns ``self``)."""
        self._sealed = False
        return self

    def _check(self):
        if self._sealed:
            raise RuntimeError(
                f"This solution failed ({self.status}: {self.message}) and is sealed; "
                "call solution.unseal() to read it anyway."
            )

    @property
    def states(self) -> dict[str, np.ndarray]:
        """States by name (RuntimeError while sealed)."""
        self._check()
        return self._states

    @property
    def controls(self) -> dict[str, np.ndarray]:
        """Controls by name (RuntimeError while sealed)."""
        self._check()
        return self._controls

    @property
    def multipliers(self) -> dict[str, np.ndarray]:
        """Multipliers by name (RuntimeError while sealed)."""
        self._check()
        return self._multipliers

    @property
    def derivatives(self) -> dict[str, np.ndarray]:
        """Derivatives by name (RuntimeError while sealed)."""
        self._check()
        return self._derivatives

    @property
    def parameters(self) -> dict[str, float]:
        """Parameters by path (RuntimeError while sealed)."""
        self._check()
        return self._parameters

    def as_trajectory(self) -> Trajectory:
        """A plain (unsealed) :class:`Trajectory` copy of the data."""
        self._check()
        return self._data()

    def _data(self) -> Trajectory:
        """The data as a :class:`Trajectory`, sealed or not (internal: e.g. a failed solve as a guess)."""
        return Trajectory(self.time, self._states, self._controls, self._multipliers, self._derivatives,
                          self._parameters, check_time=False, quantities=self.quantities)

    def summary(self) -> str:
        """One line: success, status, objective, final time, iterations and solve time."""
        return (
            f"{'success' if self.success else 'FAILED'} ({self.status}) objective={self.objective:.10g} "
            f"t_f={self.final_time:.6g} nit={self.nit} solve_time={self.solve_time:.3f} s"
        )

    def __repr__(self) -> str:
        return f"<Solution {self.summary()}>"


def read_trajectory(path: str | os.PathLike) -> Trajectory:
    """Read a trajectory written by :meth:`Trajectory.write_sto` or by OpenSim Moco.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Trajectory
        With extra attributes ``metadata`` (every header key/value, typed as
        in :func:`~moco_lab.results.sto.read_table`, e.g. ``metadata["success"]
        is True``), ``input_controls`` and ``slacks`` (dicts of Moco's
        input-control and slack columns, usually empty). Parameters are read
        from the first row, as Moco does.

    Raises
    ------
    moco_lab.results.sto.StoFormatError
        A malformed file, a header without Moco's ``num_*`` counts, counts that
        disagree with the columns, or times that are not strictly increasing.
    """
    time, groups, metadata = sto.read_trajectory_columns(path)
    try:
        traj = Trajectory(time, states=groups["states"], controls=groups["controls"],
                          multipliers=groups["multipliers"], derivatives=groups["derivatives"],
                          parameters=groups["parameters"])
    except ValueError as exc:
        raise sto.StoFormatError(path, None, str(exc)) from None
    traj.metadata = metadata
    traj.input_controls = groups["input_controls"]
    traj.slacks = groups["slacks"]
    return traj
