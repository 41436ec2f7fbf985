"""Tools that build whole studies for common tasks (Moco's ``MocoTool`` s).

:class:`Track` is Moco's ``MocoTrack``: track a table of reference states with
a model, trading tracking error against a little control effort::

    import moco_lab as ml
    from moco_lab.tools import Track

    track = Track(ml.models.sliding_mass(), "reference_states.sto", mesh_interval=0.01)
    study = track.initialize()          # a Study you may edit before solving
    study.problem.set_state_info("/slider/position/value", (-5, 5), 0)
    solution = study.solve()            # or: solution = track.solve()

As in ``MocoTrack::initialize`` (OpenSim Moco 4.6) the study has

* time bounds fixed to the reference's ``[t0, tf]``;
* ``N = ceil((tf - t0) / mesh_interval)`` mesh intervals (never a larger
  interval than requested);
* goal ``"state_tracking"``: a :class:`~moco_lab.goals.StateTrackingGoal`
  with weight ``states_global_tracking_weight``;
* goal ``"control_effort"``: a :class:`~moco_lab.goals.ControlGoal` with
  weight ``control_effort_weight`` (default 0.001);
* the model's default bounds (coordinate ranges, speeds ``[-50, 50]``,
  activations ``[0, 1]``, actuator control limits); no initial or final
  values are imposed;
* IPOPT tolerances ``1e-2`` (``optim_convergence_tolerance`` and
  ``optim_constraint_tolerance``), as ``MocoTrack`` sets them; pass
  ``optim_tolerance=None`` (or edit ``study.solver``) for IPOPT's defaults;
* the guess from bounds.

Differences from Moco: the reference is interpolated linearly (Moco fits GCV
splines), missing speeds are not derived from positions
(Moco's ``track_reference_position_derivatives``, off by default), and tables
in degrees are rejected rather than converted.
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..modeling.model import Model
from ..ocp.goals import ControlGoal, StateTrackingGoal
from ..results.tables import reference_columns
from ..util.names import StrictAttributes, did_you_mean
from .study import Study

if TYPE_CHECKING:
    from ..results.tables import ReferenceLike
    from ..results.trajectory import Solution
    from ..solve.optimizer import Progress

__all__ = ["Track"]


class Track(StrictAttributes):
    """Track reference states with a model (OpenSim Moco's ``MocoTrack``).

    Parameters
    ----------
    model : Model
        The model to track with (a :class:`~moco_lab.model.Model`, e.g. from
        :mod:`moco_lab.models`). Every study built by :meth:`initialize` uses
        this same object.
    states_reference : Trajectory, str or path-like, or (time, dict)
        Reference states. A :class:`~moco_lab.trajectory.Trajectory` or
        :class:`~moco_lab.trajectory.Solution` contributes its states (as
        Moco's ``exportToStatesTable``). A path is read as an OpenSim ``.sto``
        table (:func:`moco_lab.sto.read_table`); if the file is a Moco
        trajectory (its header has Moco's ``num_states``, ... counts), only its
        states are used.
        ``(time, {state name: values})`` is used as is.
    states_global_tracking_weight : float, default 1.0
        Weight of the ``"state_tracking"`` goal.
    states_weights : dict of str -> float, optional
        Per-state weights (default 1); weight 0 leaves a state untracked.
    state_pattern : str, optional
        Regular expression: only reference columns that match it fully are
        tracked (e.g. ``r".*(value|speed)$"``). Not a ``MocoTrack`` property;
        Moco users set it on the goal after ``initialize``.
    control_effort_weight : float, default 0.001
        Weight of the ``"control_effort"`` goal (``∫ Σ x_j^exponent dt``);
        0 disables it.
    control_effort_exponent : float, default 2
        Exponent of the control effort (``>= 2``).
    mesh_interval : float, default 0.020
        Largest mesh interval, in seconds: ``N = ceil((tf - t0) / mesh_interval)``.
    allow_unused_references : bool, default False
        Ignore reference columns that are not states of the model (otherwise
        they raise ``KeyError``).
    scheme : {"hermite-simpson", "trapezoidal"}
    mode : {"explicit", "implicit"}
        Moco's ``MocoTrack`` always uses explicit mode.
    optim_tolerance : float or None, default 1e-2
        Convergence and constraint tolerance of the optimizer, as ``MocoTrack``
        sets them; ``None`` keeps IPOPT's defaults (``tol`` 1e-8,
        ``constr_viol_tol`` 1e-4).

    Raises
    ------
    ValueError
        A reference with fewer than 2 samples or times that do not increase,
        a column whose length differs from time, a non-positive or
        non-finite ``mesh_interval``, a negative ``control_effort_weight``.
    KeyError
        A reference column (or ``states_weights`` key) that is not a state of
        the model, unless ``allow_unused_references``.

    Examples
    --------
    >>> import moco_lab as ml
    >>> reference = ml.examples.sliding_mass_study(num_mesh_intervals=20).solve()  # doctest: +SKIP
    >>> track = Track(ml.models.sliding_mass(), reference, mesh_interval=0.01)     # doctest: +SKIP
    >>> solution = track.solve()                                                   # doctest: +SKIP
    """

    def __init__(self, model: Model, states_reference: ReferenceLike, *, states_global_tracking_weight: float = 1.0,
                 states_weights: dict[str, float] | None = None, state_pattern: str | None = None,
                 control_effort_weight: float = 0.001, control_effort_exponent: float = 2,
                 mesh_interval: float = 0.020, allow_unused_references: bool = False,
                 scheme: str = "hermite-simpson", mode: str = "explicit",
                 optim_tolerance: float | None = 1e-2):
        from pydrake.multibody.plant import MultibodyPlant

        if isinstance(model, MultibodyPlant):
            model = Model.from_plant(model)
        if not isinstance(model, Model):
            raise TypeError(f"Track expects a moco_lab Model, got {type(model).__name__}")
        self.model = model
        time, columns, self._source = reference_columns(states_reference, "states_reference")
        time = np.asarray(time, float)
        if time.ndim != 1 or time.size < 2:
            raise ValueError(f"States reference ({self._source}) needs at least 2 time samples; "
                             f"it has {time.size}.")
        if not np.all(np.isfinite(time)) or np.any(np.diff(time) <= 0):
            raise ValueError(f"States reference ({self._source}): time must be finite and strictly increasing.")
        if not columns:
            raise ValueError(f"States reference ({self._source}) has no columns besides time.")
        for name, values in columns.items():
            if values.shape != time.shape:
                raise ValueError(f"States reference ({self._source}): column {name!r} has {values.size} values, "
                                 f"time has {time.size}.")
        self.reference_time = time
        self.reference = columns
        self.states_global_tracking_weight = float(states_global_tracking_weight)
        self.states_weights = dict(states_weights or {})
        if state_pattern is not None:
            re.compile(state_pattern)
        self.state_pattern = state_pattern
        self.control_effort_weight = float(control_effort_weight)
        if self.control_effort_weight < 0 or not math.isfinite(self.control_effort_weight):
            raise ValueError(f"control_effort_weight must be finite and >= 0, got {control_effort_weight}")
        self.control_effort_exponent = float(control_effort_exponent)
        if self.control_effort_exponent < 2:
            raise ValueError(f"control_effort_exponent must be >= 2 (as in Moco), got {control_effort_exponent}")
        try:
            interval = float(mesh_interval)
        except (TypeError, ValueError):
            raise ValueError(f"mesh_interval must be a positive number of seconds, got {mesh_interval!r}") from None
        if not (interval > 0) or not math.isfinite(interval):
            raise ValueError(f"mesh_interval must be positive and finite (Moco: 'Expected mesh_interval to be "
                             f"positive'), got {mesh_interval!r}")
        self.mesh_interval = interval
        self.allow_unused_references = bool(allow_unused_references)
        self.scheme = scheme
        self.mode = mode
        self.optim_tolerance = optim_tolerance
        self._check_names()
        self._seal_attributes()

    # ------------------------------------------------------------- checks
    def _check_names(self) -> None:
        names = self.model.state_names()
        if not self.allow_unused_references:
            unknown = [k for k in self.reference if k not in names]
            if unknown:
                raise KeyError(f"States reference ({self._source}) column {unknown[0]!r} is not a state of the "
                               f"model: " + did_you_mean(unknown[0], names, "state")
                               + f" ({len(unknown)} unknown column(s): {unknown}; "
                               "set allow_unused_references=True to ignore them)")
        for k in self.states_weights:
            if k not in names:
                raise KeyError("states_weights: " + did_you_mean(k, names, "state"))
        tracked = [k for k in self.reference if k in names
                   and (self.state_pattern is None or re.fullmatch(self.state_pattern, k))]
        if not tracked:
            raise ValueError(f"No column of the states reference ({self._source}) is a state of the model"
                             + (f" matching pattern {self.state_pattern!r}" if self.state_pattern else "")
                             + f"; columns: {list(self.reference)}; states: {names}")

    # ---------------------------------------------------------- properties
    @property
    def initial_time(self) -> float:
        """First time of the reference (the study's fixed initial time)."""
        return float(self.reference_time[0])

    @property
    def final_time(self) -> float:
        """Last time of the reference (the study's fixed final time)."""
        return float(self.reference_time[-1])

    @property
    def num_mesh_intervals(self) -> int:
        """``ceil((tf - t0) / mesh_interval)``, as ``MocoTool::updateTimeInfo``."""
        return int(math.ceil((self.final_time - self.initial_time) / self.mesh_interval))

    # ---------------------------------------------------------------- study
    def initialize(self) -> Study:
        """Build the tracking study without solving it.

        Returns
        -------
        Study
            Named ``"track"``, with the model, fixed time bounds, goals
            ``"state_tracking"`` and (if its weight is positive)
            ``"control_effort"``, and solver settings (scheme, mode,
            ``num_mesh_intervals``, tolerances). Edit it freely before
            ``study.solve()`` (e.g. bounds, goal exponents, tolerances).
        """
        study = Study("track")
        p = study.problem
        p.set_model(self.model)
        p.set_time_bounds(self.initial_time, self.final_time)
        p.add_goal(StateTrackingGoal(
            "state_tracking", self.states_global_tracking_weight,
            reference=(self.reference_time.copy(), {k: v.copy() for k, v in self.reference.items()}),
            weights=dict(self.states_weights), pattern=self.state_pattern,
            allow_unused_references=self.allow_unused_references))
        if self.control_effort_weight > 0:
            p.add_goal(ControlGoal("control_effort", self.control_effort_weight,
                                   exponent=self.control_effort_exponent))
        s = study.solver
        s.transcription_scheme = self.scheme
        s.multibody_dynamics_mode = self.mode
        s.num_mesh_intervals = self.num_mesh_intervals
        if self.optim_tolerance is not None:
            s.optim_convergence_tolerance = float(self.optim_tolerance)
            s.optim_constraint_tolerance = float(self.optim_tolerance)
        s.validate()
        p.validate()
        return study

    def solve(self, progress: Callable[[Progress], None] | None = None) -> Solution:
        """``self.initialize().solve(progress)``: build the study and solve it.

        Returns
        -------
        Solution
        """
        return self.initialize().solve(progress)

    def __repr__(self) -> str:
        return (f"<Track {self._source}: {len(self.reference)} columns, t=[{self.initial_time:g}, "
                f"{self.final_time:g}], mesh_interval={self.mesh_interval:g} (N={self.num_mesh_intervals}), "
                f"tracking weight {self.states_global_tracking_weight:g}, effort weight "
                f"{self.control_effort_weight:g} (exponent {self.control_effort_exponent:g})>")
