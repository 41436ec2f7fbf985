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

* time bounds fixed to the reference's ``[t0, tf]``, or to ``initial_time`` /
  ``final_time`` when given (within the reference);
* ``N = ceil((tf - t0) / mesh_interval)`` mesh intervals (never a larger
  interval than requested);
* goal ``"state_tracking"``: a :class:`~moco_lab.ocp.goals.StateTrackingGoal`
  with weight ``states_global_tracking_weight``;
* goal ``"control_effort"``: a :class:`~moco_lab.ocp.goals.ControlGoal` with
  weight ``control_effort_weight`` (default 0.001);
* the model's default bounds (coordinate ranges, speeds ``[-50, 50]``,
  activations ``[0, 1]``, actuator control limits); no initial or final
  values are imposed;
* IPOPT tolerances ``1e-2`` (``optim_convergence_tolerance`` and
  ``optim_constraint_tolerance``), as ``MocoTrack`` sets them; pass
  ``optim_tolerance=None`` (or edit ``study.solver``) for IPOPT's defaults;
* the guess from bounds, or the tracked states on it (``apply_tracked_states_to_guess``).

The reference is processed as Moco's ``TableProcessor`` and ``MocoTrack`` do:
a table in degrees (``inDegrees=yes``) has its rotational coordinates' values
and speeds converted to radians; ``lowpass_cutoff_frequency`` filters it as
``TabOpLowPassFilter`` (:func:`moco_lab.results.tables.filter_lowpass`); with
``track_reference_position_derivatives`` a coordinate whose value is in the
table but whose speed is not gets the slope of the value's natural quintic
spline as its speed reference (OpenSim's ``GCVSplineSet``,
:func:`moco_lab.results.tables.interpolating_spline`).
The tracking goal interpolates the reference between samples by the same
quintic splines.
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from ..engine.collocation import DYNAMICS_MODES, check_scheme, mesh_intervals_for
from ..engine.settings import HESSIAN_APPROXIMATIONS
from ..modeling.model import Model
from ..modeling.units import coordinate_motion
from ..ocp.goals import ControlGoal, StateTrackingGoal
from ..results import sto
from ..results.tables import filter_lowpass, interpolating_spline, reference_columns
from ..results.trajectory import Trajectory
from ..util.checks import finite_number
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
        The model to track with (a :class:`~moco_lab.modeling.model.Model`, e.g. from
        :mod:`moco_lab.models`). Every study built by :meth:`initialize` uses
        this same object.
    states_reference : Trajectory, str or path-like, or (time, dict)
        Reference states. A :class:`~moco_lab.results.trajectory.Trajectory` or
        :class:`~moco_lab.results.trajectory.Solution` contributes its states (as
        Moco's ``exportToStatesTable``). A path is read as an OpenSim ``.sto``
        table (:func:`moco_lab.results.sto.read_table`); if the file is a Moco
        trajectory (its header has Moco's ``num_states``, ... counts), only its
        states are used. A file in degrees (``inDegrees=yes``) is converted to
        radians for the model's rotational coordinates (values and speeds).
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
    track_reference_position_derivatives : bool, default False
        Track each coordinate's speed against the slope of its value in the
        reference when the reference has the value but not the speed (Moco's
        property of the same name).
    lowpass_cutoff_frequency : float, Hz, optional
        Low-pass filter the reference first, as Moco's
        ``TableProcessor(...) | TabOpLowPassFilter(cutoff)``.
    initial_time, final_time : float, s, optional
        Track only this part of the reference (Moco's ``set_initial_time`` /
        ``set_final_time``); default: all of it.
    apply_tracked_states_to_guess : bool, default False
        Start from the reference: the guess holds the tracked states (after
        filtering and derived speeds) at as many evenly spaced times in
        ``[initial_time, final_time]`` as the reference has rows, interpolated
        linearly (Moco's property of the same name); other variables keep the
        guess from bounds.
    scheme : {"hermite-simpson", "trapezoidal"}
    mode : {"explicit", "implicit"}
        Moco's ``MocoTrack`` always uses explicit mode.
    optim_tolerance : float or None, default 1e-2
        Convergence and constraint tolerance of the optimizer, as ``MocoTrack``
        sets them; ``None`` keeps IPOPT's defaults (``tol`` 1e-8,
        ``constr_viol_tol`` 1e-4).
    optim_hessian_approximation : {"limited-memory", "exact"}
        ``"limited-memory"`` (default, as ``MocoTrack``): IPOPT's quasi-Newton Hessian. ``"exact"``: moco_lab's
        exact second derivatives, with IPOPT + MUMPS (``SolverSettings.optim_hessian_approximation``).

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
                 optim_tolerance: float | None = 1e-2, track_reference_position_derivatives: bool = False,
                 lowpass_cutoff_frequency: float | None = None, initial_time: float | None = None,
                 final_time: float | None = None, apply_tracked_states_to_guess: bool = False,
                 optim_hessian_approximation: str = "limited-memory"):
        from pydrake.multibody.plant import MultibodyPlant

        if isinstance(model, MultibodyPlant):
            model = Model.from_plant(model)
        if not isinstance(model, Model):
            raise TypeError(f"Track expects a moco_lab Model, got {type(model).__name__}")
        self.model = model
        time, columns, self._source = _states_table(states_reference, model)
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
        if lowpass_cutoff_frequency is not None:
            time, columns = filter_lowpass(time, columns, float(lowpass_cutoff_frequency))
        self.lowpass_cutoff_frequency = lowpass_cutoff_frequency
        self.track_reference_position_derivatives = bool(track_reference_position_derivatives)
        if self.track_reference_position_derivatives:
            for c in model.coordinates:
                if c.value_path in columns and c.speed_path not in columns:
                    columns[c.speed_path] = interpolating_spline(time, columns[c.value_path]).derivative()(time)
        self.reference_time = time
        self.reference = columns
        for label, value, inside in (("initial_time", initial_time, lambda v: v >= time[0]),
                                     ("final_time", final_time, lambda v: v <= time[-1])):
            if value is not None and not inside(finite_number(value, f"Track: {label}", what="a time in s")):
                raise ValueError(f"{label} {value!r} is outside the states reference ({self._source}), which "
                                 f"covers [{time[0]:g}, {time[-1]:g}] s")
        t0 = float(time[0]) if initial_time is None else float(initial_time)
        tf = float(time[-1]) if final_time is None else float(final_time)
        if not tf > t0:
            raise ValueError(f"final_time {tf:g} must be after initial_time {t0:g}")
        self._time_range = (t0, tf)
        self.states_global_tracking_weight = finite_number(states_global_tracking_weight,
                                                           "Track: states_global_tracking_weight", 0)
        if states_weights is not None and not isinstance(states_weights, Mapping):
            raise TypeError(f"Track: states_weights must be a dict of state path -> weight, got "
                            f"{type(states_weights).__name__}")
        self.states_weights = {k: finite_number(v, f"Track: states_weights[{k!r}]", 0)
                               for k, v in (states_weights or {}).items()}
        if state_pattern is not None:
            try:
                re.compile(state_pattern)
            except (re.error, TypeError) as err:
                raise ValueError(f"Track: state_pattern {state_pattern!r} is not a regular expression ({err})") \
                    from None
        self.state_pattern = state_pattern
        self.control_effort_weight = finite_number(control_effort_weight, "Track: control_effort_weight", 0)
        self.control_effort_exponent = finite_number(control_effort_exponent, "Track: control_effort_exponent", 2,
                                                     what="a finite number >= 2 (as in Moco)")
        try:
            interval = float(mesh_interval)
        except (TypeError, ValueError):
            raise ValueError(f"mesh_interval must be a positive number of seconds, got {mesh_interval!r}") from None
        if not (interval > 0) or not math.isfinite(interval):
            raise ValueError(f"mesh_interval must be positive and finite (Moco: 'Expected mesh_interval to be "
                             f"positive'), got {mesh_interval!r}")
        self.mesh_interval = interval
        self.allow_unused_references = bool(allow_unused_references)
        check_scheme(scheme, "Track: scheme")
        if mode not in DYNAMICS_MODES:
            raise ValueError(f"Track: mode must be one of {list(DYNAMICS_MODES)}, got {mode!r}")
        self.scheme = scheme
        self.mode = mode
        if optim_tolerance is not None:
            optim_tolerance = finite_number(optim_tolerance, "Track: optim_tolerance", 0, False,
                                            "a finite number > 0 (or None for IPOPT's default)")
        self.optim_tolerance = optim_tolerance
        if optim_hessian_approximation not in HESSIAN_APPROXIMATIONS:
            raise ValueError(f"optim_hessian_approximation must be one of {list(HESSIAN_APPROXIMATIONS)}, got "
                             f"{optim_hessian_approximation!r}")
        self.optim_hessian_approximation = optim_hessian_approximation
        self.apply_tracked_states_to_guess = bool(apply_tracked_states_to_guess)
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
        """The study's fixed initial time (``initial_time``, or the reference's first time)."""
        return self._time_range[0]

    @property
    def final_time(self) -> float:
        """The study's fixed final time (``final_time``, or the reference's last time)."""
        return self._time_range[1]

    @property
    def num_mesh_intervals(self) -> int:
        """``ceil((tf - t0) / mesh_interval)``, as ``MocoTool::updateTimeInfo`` (:func:`mesh_intervals_for`)."""
        return mesh_intervals_for(self.final_time - self.initial_time, self.mesh_interval)

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
        s.set_hessian_approximation(self.optim_hessian_approximation)
        if self.apply_tracked_states_to_guess:
            s.guess = self.tracked_states_guess()
        s.validate()
        p.validate()
        return study

    def tracked_states_guess(self) -> Trajectory:
        """The tracked states as a guess (``apply_tracked_states_to_guess``): the reference's states at
        ``len(reference_time)`` evenly spaced times over the study's time range, interpolated linearly."""
        names = set(self.model.state_names())
        t = np.linspace(self.initial_time, self.final_time, self.reference_time.size)
        return Trajectory(t, states={k: np.interp(t, self.reference_time, v) for k, v in self.reference.items()
                                     if k in names})

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


def _states_table(reference: ReferenceLike, model: Model) -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    """``(time, columns, source)`` of a states reference; a file in degrees converted to radians as OpenSim's
    ``TableProcessor::processAndConvertToRadians`` does (values and speeds of rotational coordinates)."""
    import os

    if isinstance(reference, (str, os.PathLike)):
        time, columns, metadata = sto.read_table(reference)
        if str(metadata.get("inDegrees", "no")).strip().lower() in ("yes", "true", "1"):
            rotational = {p for c in model.coordinates if coordinate_motion(model, c) == "rotational"
                          for p in (c.value_path, c.speed_path)}
            columns = {k: np.radians(v) if k in rotational else v for k, v in columns.items()}
            return time, columns, f"file {os.fspath(reference)!r} (in degrees, converted)"
    return reference_columns(reference, "states_reference")
