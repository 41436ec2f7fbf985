"""Prescribed kinematics: OpenSim Moco's ``MocoInverse`` on Drake.

The motion is data. Coordinates ``q(t)`` come from a table, are splined
(interpolating quintic splines, as Moco's ``PositionMotion``), and speeds
``u = q̇`` and accelerations ``u̇ = q̈`` are the spline's derivatives. The only
optimization variables are the auxiliary (muscle) states ``z``, the controls
``x`` (muscle excitations, actuator and reserve controls), the normalized
tendon-force derivatives ``w`` of muscles with implicit tendon dynamics, and —
on a model with kinematic constraints — the Lagrange multipliers ``λ``.
The equations of motion hold as path constraints with zero residual (the Moco paper,
Eq. 3; Moco's developer guide, "Prescribed kinematics")::

    M(q) u̇ + C(q, u) − g(q) − τ_applied(q, u, z, x) + G(q)ᵀ λ = 0    at every grid point

and the muscle states obey their dynamics by collocation (trapezoidal or
Hermite–Simpson defects on ``z`` only). Because ``q, u, u̇`` are data, no
kinematic-constraint equations are needed and the multipliers are free.

As in ``MocoInverse::initializeInternal`` (OpenSim Moco 4.6):

* time fixed to the kinematics' range (or ``initial_time`` / ``final_time``);
  ``ceil((tf − t0) / mesh_interval)`` mesh intervals (``mesh_interval`` 0.02 s);
* goal ``"excitation_effort"``: ``∫ Σ x² dt`` over all controls (exponent ``effort_exponent``, 2), with weight
  ``reserves_weight`` on reserve actuators (controls matching ``/reserve_``);
* ``"initial_activation"``: each muscle's initial activation equals its
  initial excitation (an endpoint constraint, Moco's
  ``MocoInitialActivationGoal``), so activation is not "free" at the start;
* optional ``"activation_effort"``: ``∫ Σ a² dt`` (``minimize_sum_squared_activations``);
* ``"implicit_auxiliary_derivatives"``: ``0.01 ∫ Σ w² dt`` when a muscle has
  implicit tendon dynamics (Moco's ``minimize_implicit_auxiliary_derivatives``);
* midpoint controls are free variables (``interpolate_control_midpoints``
  false); IPOPT tolerances ``1e-3`` (``convergence_tolerance``,
  ``constraint_tolerance``); guess from bounds.

Splines: Moco's kinematics are GCV splines of degree 5 with zero smoothing — an
interpolating natural quintic, :func:`scipy.interpolate.make_interp_spline`'s spline, which
:func:`moco_lab.results.tables.interpolating_spline` computes here the same way on every processor (cubic when
fewer than 6 rows); ``spline_boundary="not-a-knot"``
is the alternative. Natural end conditions force ``q‴ = q⁗ = 0`` at the ends,
which bends the accelerations of data that do not end that way (e.g. ``sin t``)
over the first and last few samples.
"""
from __future__ import annotations

import copy
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..engine.collocation import Grid, check_scheme, mesh_intervals_for
from ..engine.settings import SolverSettings
from ..engine.transcription import PrescribedKinematics, Transcription
from ..modeling.constraints import constraint_values
from ..modeling.forces import CoordinateActuator
from ..modeling.model import Model, require_model
from ..ocp.goals import ControlGoal, Goal, InitialActivationGoal, SumSquaredStateGoal
from ..ocp.problem import Problem
from ..results.tables import interpolating_spline, reference_columns
from ..results.trajectory import Solution
from ..solve.guess import guess_from_bounds, set_guess
from ..solve.optimizer import Progress, run_optimizer
from ..solve.solution import package_solution, trajectory_from_solution
from ..util.checks import finite_number, whole_number
from ..util.names import StrictAttributes, did_you_mean

if TYPE_CHECKING:
    from ..results.tables import ReferenceLike

__all__ = ["Inverse", "InverseSolution", "add_reserves", "add_residuals", "reserve_path"]

#: Controls whose path matches this are reserves (Moco: ``.*/reserve_.*``).
RESERVE_PATTERN = r".*/reserve_.*"


def reserve_path(coordinate_path: str) -> str:
    """Name of the reserve actuator of a coordinate, as Moco's ``ModOpAddReserves`` names it.

    ``/jointset/slider/position`` -> ``/forceset/reserve_jointset_slider_position``.
    """
    return "/forceset/reserve_" + coordinate_path.strip("/").replace("/", "_")


def _dependent_coordinates(model: Model) -> set[str]:
    """Coordinates a coupler constraint makes dependent (OpenSim: ``Coordinate::isConstrained``)."""
    return {getattr(c, "dependent", None) for c in getattr(model, "constraints", [])} - {None}


def _with_actuators(model: Model, actuators: list[CoordinateActuator]) -> Model:
    clash = {a.path for a in actuators} & {a.path for a in model.actuators}
    if clash:
        raise ValueError(f"The model already has actuators named {sorted(clash)}")
    return Model(model.plant, model.coordinates, [*model.actuators, *actuators], model.forces,
                 dict(model.body_paths), name=model.name, spec=None, muscles=model.muscles,
                 constraints=[copy.copy(c) for c in getattr(model, "constraints", [])],  # rebound to the copy
                 elements=model.elements, custom_joints=model.custom_joints,
                 frame_bodies=model.frame_bodies, markers=list(model.markers.values()))


def add_reserves(model: Model, optimal_force: float, coordinates: list[str] | None = None,
                 bounds: tuple[float, float] = (-np.inf, np.inf), *, skip_coordinates_with_actuators: bool = False,
                 skip_residual_coordinates: bool = False) -> Model:
    """A copy of ``model`` with a reserve :class:`CoordinateActuator` on each coordinate (Moco's ``ModOpAddReserves``).

    Parameters
    ----------
    model : Model
        Left unchanged; the copy shares its ``MultibodyPlant``.
    optimal_force : float
        Reserve generalized force per unit control (N or N·m). Small values
        make reserves expensive under an effort goal.
    coordinates : list of str, optional
        Coordinate names (``model.coordinates[k].name``) or paths; default every coordinate a coupler constraint does
        not make dependent (as Moco).
    bounds : (float, float)
        Control bounds of the reserves (Moco: unbounded).
    skip_coordinates_with_actuators : bool
        Leave out coordinates a ``CoordinateActuator`` already drives (Moco's ``skip_coordinates_with_actuators``,
        true by default in Moco's ``ModOpAddReserves``: pass True to build Moco's model).
    skip_residual_coordinates : bool
        Leave out the coordinates of joints on the ground (Moco's ``skip_residual_coordinates``, default false).
    """
    if not optimal_force > 0:
        raise ValueError(f"Reserve optimal_force must be positive, got {optimal_force}")
    by_name = {c.name: c for c in model.coordinates}
    by_name.update({c.path: c for c in model.coordinates})
    dependent = _dependent_coordinates(model)
    chosen = [c for c in model.coordinates if c.name not in dependent] if coordinates is None else []
    for name in coordinates or []:
        if name not in by_name:
            raise KeyError("Reserve: " + did_you_mean(name, list(by_name), "coordinate"))
        chosen.append(by_name[name])
    if skip_coordinates_with_actuators:
        driven = {a.coordinate for a in model.actuators}
        chosen = [c for c in chosen if c.name not in driven and c.path not in driven]
    if skip_residual_coordinates:
        chosen = [c for c in chosen if model.joint_centre(c.name)[0] != "ground"]
    return _with_actuators(model, [CoordinateActuator(reserve_path(c.path), c.name, float(optimal_force),
                                                      float(bounds[0]), float(bounds[1])) for c in chosen])


def add_residuals(model: Model, rotational_optimal_force: float, translational_optimal_force: float,
                  bound: float | None = None, *, skip_coordinates_with_actuators: bool = True) -> Model:
    """A copy of ``model`` with residual actuators (Moco's ``ModOpAddResiduals``): a :class:`CoordinateActuator`
    named ``/forceset/residual_<coordinate path>`` on each coordinate of a joint on the ground (the pelvis of a
    walking model), of optimal force ``rotational_optimal_force`` (N·m) or ``translational_optimal_force`` (N) by the
    coordinate's motion, controls within ``±bound`` (None: unbounded). As Moco, dependent coordinates and (by
    default) coordinates an actuator already drives get none.
    """
    rot = finite_number(rotational_optimal_force, "add_residuals: rotational_optimal_force", 0, False)
    trans = finite_number(translational_optimal_force, "add_residuals: translational_optimal_force", 0, False)
    lo, hi = (-np.inf, np.inf) if bound is None else (-finite_number(bound, "add_residuals: bound", 0),
                                                        finite_number(bound, "add_residuals: bound", 0))
    driven = {a.coordinate for a in model.actuators} if skip_coordinates_with_actuators else set()
    dependent = _dependent_coordinates(model)
    chosen = [c for c in model.coordinates if model.joint_centre(c.name)[0] == "ground" and c.name not in dependent
              and c.name not in driven and c.path not in driven]
    if not chosen:
        raise ValueError(f"add_residuals: model {model.name!r} has no free coordinate of a joint on the ground")
    return _with_actuators(model, [
        CoordinateActuator("/forceset/residual_" + c.path.strip("/").replace("/", "_"), c.name,
                           rot if model.coordinate_motion(c.name) == "rotational" else trans, lo, hi)
        for c in chosen])


@dataclass
class ReserveUse:
    """How much one reserve actuator contributed (see :meth:`InverseSolution.reserve_report`)."""

    reserve: str
    coordinate: str
    rms: float  # RMS of the reserve's generalized force (N or N·m)
    peak: float  # largest |generalized force|
    share: float  # rms / RMS of the net generalized force the coordinate needs


@dataclass
class InverseSolution:
    """Result of :meth:`Inverse.solve` (Moco's ``MocoInverseSolution``).

    Attributes
    ----------
    solution : Solution
        States (the prescribed ``q`` and ``u`` inserted, as Moco does, plus
        the muscle states), controls, multipliers; ``derivatives`` hold the
        prescribed accelerations (``.../accel``) and tendon-force derivatives.
    net_generalized_forces : dict of str -> ndarray (ng,)
        Per coordinate name: the generalized force the motion needs from
        actuators, muscles and constraints, ``M u̇ + C − g − τ_passive``.
    reserve_forces : dict of str -> ndarray (ng,)
        Per reserve path: ``optimal_force * control``.
    """

    solution: Solution
    net_generalized_forces: dict[str, np.ndarray] = field(default_factory=dict)
    reserve_forces: dict[str, np.ndarray] = field(default_factory=dict)
    reserve_coordinates: dict[str, str] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        """Whether the optimizer succeeded."""
        return self.solution.success

    def reserve_report(self) -> list[ReserveUse]:
        """RMS, peak and share of each reserve's generalized force (share = RMS(reserve) / RMS(net need))."""
        rows = []
        for path, f in self.reserve_forces.items():
            coord = self.reserve_coordinates[path]
            net = self.net_generalized_forces[coord]
            rms = float(np.sqrt(np.mean(f ** 2)))
            rms_net = float(np.sqrt(np.mean(net ** 2)))
            rows.append(ReserveUse(path, coord, rms, float(np.max(np.abs(f))),
                                   rms / rms_net if rms_net > 0 else (0.0 if rms == 0 else math.inf)))
        return rows

    def reserve_summary(self) -> str:
        """The reserve report as text, one line per reserve."""
        if not self.reserve_forces:
            return "no reserve actuators"
        return "\n".join(f"{r.reserve}: RMS {r.rms:.4g}, peak {r.peak:.4g}, {100 * r.share:.2f}% of the net "
                         f"generalized force of {r.coordinate}" for r in self.reserve_report())


SPLINE_BOUNDARIES = ("natural", "not-a-knot")


def _spline_kinematics(model: Model, time: np.ndarray, columns: dict[str, np.ndarray],
                       allow_extra_columns: bool, boundary: str = "natural"):
    """Interpolating splines of each coordinate's value column, in coordinate order."""
    time = np.asarray(time, float)
    if time.ndim != 1 or time.size < 4:
        raise ValueError(f"Kinematics need at least 4 time rows to spline; got {time.size}")
    if np.any(np.diff(time) <= 0):
        raise ValueError("Kinematics time column must be strictly increasing")
    needed = [c.value_path for c in model.coordinates]
    columns = dict(columns)
    # As Moco (StatesTrajectory::createFromStatesTable with assembly), a coordinate a coupler constraint makes
    # dependent follows the constraint: its column, if any, is replaced by the coupler function of the others.
    for con in getattr(model, "constraints", []):
        if not hasattr(con, "dependent") or any(model.coordinate(i).value_path not in columns
                                                 for i in con.independent):
            continue
        value = np.asarray(con.f(*[np.asarray(columns[model.coordinate(i).value_path], float)
                                   for i in con.independent]), float) * np.ones(time.size)
        path = model.coordinate(con.dependent).value_path
        if path in columns:
            off = float(np.max(np.abs(np.asarray(columns[path], float) - value)))
            if off > 1e-9:
                warnings.warn(f"Kinematics: the column {path} differs from what the coupler constraint {con.name!r} "
                              f"makes it by up to {off:.3g}; as Moco assembles the kinematics, the constraint's value "
                              "is used", stacklevel=3)
        columns[path] = value
    missing = [n for n in needed if n not in columns]
    if missing:
        raise KeyError(f"Kinematics lack coordinate(s) {missing}; columns are {sorted(columns)}. "
                       + did_you_mean(missing[0], list(columns), "column"))
    states = set(model.state_names())  # other states of the model (speeds, activations) are ignored, as in Moco
    extra = sorted(n for n in columns if n not in states)
    if extra and not allow_extra_columns:
        raise ValueError(f"Kinematics have columns that are not states of the model: {extra} "
                         "(pass kinematics_allow_extra_columns=True to ignore them)")
    # quintic (cubic below 6 rows); natural: the 3rd and 4th derivatives vanish at the ends (Moco's GCV spline, zero
    # smoothing); the same bits on every processor (interpolating_spline solves make_interp_spline's system itself)
    ends = "not-a-knot" if boundary == "not-a-knot" else "natural"
    return [interpolating_spline(time, np.asarray(columns[n], float), 5, ends) for n in needed]


class Inverse(StrictAttributes):
    """Solve for muscle and actuator controls that produce a given motion (OpenSim Moco's ``MocoInverse``).

    Parameters
    ----------
    model : Model
        The model (with muscles, actuators, and optionally kinematic
        constraints). Use :func:`add_reserves` or ``reserves_optimal_force``
        to add reserve actuators.
    kinematics : Trajectory, str or path-like, or (time, dict)
        Coordinate values over time, columns named like the model's state
        values (``/jointset/<joint>/<coordinate>/value``), in radians / metres:
        a :class:`Trajectory` (e.g. a solution), an OpenSim ``.sto`` table, or
        ``(time, {name: values})``. Speed columns are ignored (derived from
        the spline, as Moco does).
    initial_time, final_time : float, optional
        Time range to solve (default: the kinematics' range; must lie inside it).
    mesh_interval : float, default 0.02
        Requested mesh-interval duration (s).
    reserves_optimal_force : float, optional
        Add a reserve actuator with this optimal force to every coordinate.
    reserves_weight : float, default 1.0
        Weight of reserve controls in ``"excitation_effort"``.
    minimize_sum_squared_activations : bool, default False
    effort_exponent : float, default 2
        Exponent of the ``"excitation_effort"`` goal, ``∫ Σ w |e|^p dt`` (Moco's ``MocoInverse`` always poses
        p = 2; a Moco user changes it on the goal of ``initialize()``'s problem). Larger exponents penalize peaks
        more and spread activity over more muscles (Moco's ``MocoControlGoal``: p ≥ 2).
    kinematics_allow_extra_columns : bool, default False
    convergence_tolerance, constraint_tolerance : float, default 1e-3
    max_iterations : int, optional
    transcription_scheme : {"hermite-simpson", "trapezoidal"}
    implicit_auxiliary_derivatives_weight : float, default 0.01
    optim_solver : {"ipopt", "snopt"}
    spline_boundary : {"natural", "not-a-knot"}
        End conditions of the quintic splines: ``"natural"`` (3rd and 4th
        derivatives zero at the ends, as Moco's GCV splines) or
        ``"not-a-knot"`` (reproduces any polynomial of degree <= 5 exactly;
        better accelerations near the ends of smooth data).
    initial_activation_from_excitation : bool, default True
        Moco's ``"initial_activation"`` endpoint constraint ``a(t0) = e(t0)``.
        Switch it off when the motion starts from a known activation state
        the constraint contradicts (e.g. a prediction that began at ``a = 0``
        with ``e > 0``): then ``a(t0)`` is free within its bounds.

    Examples
    --------
    >>> inverse = Inverse(model, "motion.sto", reserves_optimal_force=10.0)   # doctest: +SKIP
    >>> result = inverse.solve()                                               # doctest: +SKIP
    >>> print(result.reserve_summary())                                       # doctest: +SKIP
    """

    def __init__(self, model: Model, kinematics: ReferenceLike, *, initial_time: float | None = None,
                 final_time: float | None = None, mesh_interval: float = 0.02,
                 reserves_optimal_force: float | None = None, reserves_weight: float = 1.0,
                 minimize_sum_squared_activations: bool = False, effort_exponent: float = 2.0,
                 kinematics_allow_extra_columns: bool = False,
                 convergence_tolerance: float = 1e-3, constraint_tolerance: float = 1e-3,
                 max_iterations: int | None = None, transcription_scheme: str = "hermite-simpson",
                 implicit_auxiliary_derivatives_weight: float = 0.01, optim_solver: str = "ipopt",
                 initial_activation_from_excitation: bool = True, spline_boundary: str = "natural"):
        who = "Inverse"
        require_model(model, who)
        check_scheme(transcription_scheme)
        if spline_boundary not in SPLINE_BOUNDARIES:
            raise ValueError(f"Unknown spline_boundary {spline_boundary!r}; choose from {SPLINE_BOUNDARIES}")
        mesh_interval = finite_number(mesh_interval, f"{who}: mesh_interval", 0, False,
                                      "a positive number of seconds")
        reserves_weight = finite_number(reserves_weight, f"{who}: reserves_weight", 0)
        if reserves_optimal_force is not None:
            reserves_optimal_force = finite_number(reserves_optimal_force, f"{who}: reserves_optimal_force", 0,
                                                   True, "a force >= 0 (N or N·m; 0 or None: no reserves)")
        implicit_auxiliary_derivatives_weight = finite_number(
            implicit_auxiliary_derivatives_weight, f"{who}: implicit_auxiliary_derivatives_weight", 0)
        if max_iterations is not None:
            max_iterations = whole_number(max_iterations, f"{who}: max_iterations", 0)
        for label, tol in (("convergence_tolerance", convergence_tolerance),
                           ("constraint_tolerance", constraint_tolerance)):
            finite_number(tol, f"{who}: {label}", 0, False)
        for label, value in (("initial_time", initial_time), ("final_time", final_time)):
            if value is not None:
                finite_number(value, f"{who}: {label}", what="a time in s (or None: the kinematics' own)")
        self.model = add_reserves(model, reserves_optimal_force) if reserves_optimal_force else model
        time, columns, self._source = reference_columns(kinematics, "kinematics")
        self.splines = _spline_kinematics(self.model, time, columns, kinematics_allow_extra_columns,
                                          spline_boundary)
        t0 = float(time[0]) if initial_time is None else float(initial_time)
        tf = float(time[-1]) if final_time is None else float(final_time)
        eps = 1e-12 * max(1.0, abs(time[-1]))
        if not (time[0] - eps <= t0 < tf <= time[-1] + eps):
            culprit = ("initial_time" if not time[0] - eps <= t0 <= time[-1] + eps else
                       "final_time" if not time[0] - eps <= tf <= time[-1] + eps else "initial_time and final_time")
            raise ValueError(f"{who}: {culprit}: the time range [{t0}, {tf}] must be increasing and inside the "
                             f"kinematics' range [{time[0]}, {time[-1]}]")
        self.initial_time, self.final_time = t0, tf
        self.mesh_interval = float(mesh_interval)
        self.reserves_weight = float(reserves_weight)
        self.minimize_sum_squared_activations = bool(minimize_sum_squared_activations)
        self.effort_exponent = finite_number(effort_exponent, f"{who}: effort_exponent", 2, True,
                                             "a number >= 2 (as Moco's MocoControlGoal)")
        self.implicit_auxiliary_derivatives_weight = float(implicit_auxiliary_derivatives_weight)
        self.transcription_scheme = transcription_scheme
        self.initial_activation_from_excitation = bool(initial_activation_from_excitation)
        self.settings = SolverSettings(transcription_scheme=transcription_scheme, multibody_dynamics_mode="implicit",
                                       num_mesh_intervals=mesh_intervals_for(tf - t0, self.mesh_interval),
                                       optim_solver=optim_solver,
                                       optim_convergence_tolerance=convergence_tolerance,
                                       optim_constraint_tolerance=constraint_tolerance,
                                       optim_max_iterations=max_iterations,
                                       minimize_implicit_auxiliary_derivatives=bool(self.model.implicit_derivative_names()),
                                       implicit_auxiliary_derivatives_weight=self.implicit_auxiliary_derivatives_weight)
        self.settings.validate()
        #: Goals added with :meth:`add_goal`, after Moco's own.
        self.goals: list[Goal] = []
        self._seal_attributes()

    @property
    def num_mesh_intervals(self) -> int:
        """``ceil((tf - t0) / mesh_interval)`` as Moco's ``MocoInverse`` (:func:`mesh_intervals_for`), kept in
        :attr:`settings` (edit it there)."""
        return self.settings.num_mesh_intervals

    def kinematics_on(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Prescribed ``q, u, u̇`` at times ``t``, each of shape ``(len(t), nq)``."""
        t = np.asarray(t, float)
        Q = np.stack([s(t) for s in self.splines], axis=1)
        U = np.stack([s.derivative(1)(t) for s in self.splines], axis=1)
        A = np.stack([s.derivative(2)(t) for s in self.splines], axis=1)
        return Q, U, A

    def problem(self) -> Problem:
        """The optimal control problem this inverse solves (time fixed, Moco's goals)."""
        model = self.model
        p = Problem()
        p.set_model(model)
        p.set_time_bounds(self.initial_time, self.final_time)
        p.add_goal(ControlGoal("excitation_effort", 1.0, exponent=self.effort_exponent,
                               control_weights_pattern={RESERVE_PATTERN: self.reserves_weight}))
        has_activation = any(n.endswith("/activation") for n in model.auxiliary_state_names())
        if self.initial_activation_from_excitation and has_activation:
            p.add_goal(InitialActivationGoal("initial_activation"))
        if self.minimize_sum_squared_activations and has_activation:
            p.add_goal(SumSquaredStateGoal("activation_effort", 1.0, pattern=r".*/activation"))
        for goal in self.goals:
            p.add_goal(goal)
        return p

    def add_goal(self, goal: Goal) -> Goal:
        """Add a goal to the problem the inverse solves, beside Moco's (as a Moco user adds one to
        ``MocoInverse.initialize()``'s problem), e.g. a :class:`~moco_lab.ocp.goals.ControlTrackingGoal` of
        electromyography. Its name must differ from the built-in goals'."""
        if not isinstance(goal, Goal):
            raise TypeError(f"Inverse.add_goal: expected a moco_lab goal, got {type(goal).__name__}")
        taken = [g.name for g in self.problem().goals]
        if goal.name in taken:
            raise ValueError(f"Inverse.add_goal: a goal named {goal.name!r} is already in the problem ({taken})")
        self.goals.append(goal)
        return goal

    def transcribe(self) -> Transcription:
        """The nonlinear program (to inspect before solving): a :class:`~moco_lab.engine.transcription.Transcription`
        with the kinematics prescribed; its variables are the force elements' states, the controls, the
        implicit derivatives and the multipliers (plus ``t0``, ``tf``, fixed by their bounds)."""
        model = self.model
        if model.constraints:
            grid = Grid(self.transcription_scheme, self.num_mesh_intervals)
            t = self.initial_time + grid.tau * (self.final_time - self.initial_time)
            Q = self.kinematics_on(t)[0]
            phi = np.array([constraint_values(model, q) for q in Q])
            worst = float(np.max(np.abs(phi)))
            if worst > 1e-6:
                raise ValueError(f"The kinematics violate the model's kinematic constraints by up to {worst:.3g} "
                                 "(assemble them first, e.g. moco_lab.modeling.constraints.project_positions)")
        return Transcription(self.problem(), self.settings,
                             PrescribedKinematics(self.initial_time, self.final_time, self.kinematics_on))

    def solve(self, progress: Callable[[Progress], None] | None = None,
              transcription: Transcription | None = None) -> InverseSolution:
        """Solve; a failed solve returns a sealed solution (as Moco).

        ``transcription``: the program :meth:`transcribe` returned, to solve that one (e.g. after inspecting it, or
        to reuse its ``kernel``, the model's derived equations, in :func:`~moco_lab.tools.analyze.joint_reactions`);
        default: transcribed now."""
        if transcription is not None and transcription.problem.model is not self.model:
            raise ValueError("Inverse.solve: the transcription is not of this Inverse's model (use its transcribe())")
        tr = self.transcribe() if transcription is None else transcription
        set_guess(tr, guess_from_bounds(tr))
        run = run_optimizer(tr.prog, self.settings, progress, exact=tr.exact_callbacks)
        sol = tr.unpack(run.x)
        solution = package_solution(run, self.settings, trajectory_from_solution(tr, sol), tr.goal_values(sol))
        # the generalized force the motion needs from actuators, muscles and constraints:
        # ID(q, u, u̇) minus the passive force elements (springs, dampers, contact) = τ_actuators + τ_muscles − Gᵀλ
        model, lay = self.model, tr.layout
        Z, X, W = sol["Y"][:, lay.z], sol["X"], sol["A"][:, lay.in_algebraic(lay.w)]
        P = np.zeros(0)
        E = tr.Ein
        R = tr.kernel.evaluate(tr.Qp, tr.Up, X, P, Z=Z, A=tr.Ap, W=W, E=E)["R"]  # ID − τ_applied
        tau_applied = tr.kernel.applied(tr.Qp, tr.Up, Z, X, P, E=E)[0]
        need = R + tau_applied - tr.kernel.passive_forces(tr.Qp, tr.Up, Z, X, P, E=E)
        net = {c.name: need[:, k] for k, c in enumerate(model.coordinates)}
        controls = solution._controls
        reserves, coords = {}, {}
        for act in model.actuators:
            if re.fullmatch(RESERVE_PATTERN, act.path):
                reserves[act.path] = act.optimal_force * controls[act.path]
                coords[act.path] = act.coordinate
        return InverseSolution(solution, net, reserves, coords)

