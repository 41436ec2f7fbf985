"""Prescribed kinematics: OpenSim Moco's ``MocoInverse`` on Drake.

The motion is data. Coordinates ``q(t)`` come from a table, are splined
(interpolating quintic splines, as Moco's ``PositionMotion``), and speeds
``u = q̇`` and accelerations ``u̇ = q̈`` are the spline's derivatives. The only
optimization variables are the auxiliary (muscle) states ``z``, the controls
``x`` (muscle excitations, actuator and reserve controls), the normalized
tendon-force derivatives ``w`` of muscles with implicit tendon dynamics, and —
on a model with kinematic constraints — the Lagrange multipliers ``λ``.
The equations of motion hold as path constraints with zero residual (seed 000,
Eq. 3; seed 001, "Prescribed kinematics")::

    M(q) u̇ + C(q, u) − g(q) − τ_applied(q, u, z, x) + G(q)ᵀ λ = 0    at every grid point

and the muscle states obey their dynamics by collocation (trapezoidal or
Hermite–Simpson defects on ``z`` only). Because ``q, u, u̇`` are data, no
kinematic-constraint equations are needed and the multipliers are free.

As in ``MocoInverse::initializeInternal`` (OpenSim Moco 4.6):

* time fixed to the kinematics' range (or ``initial_time`` / ``final_time``);
  ``ceil((tf − t0) / mesh_interval)`` mesh intervals (``mesh_interval`` 0.02 s);
* goal ``"excitation_effort"``: ``∫ Σ x² dt`` over all controls, with weight
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
interpolating natural quintic, which :func:`scipy.interpolate.make_interp_spline`
computes here (cubic when fewer than 6 rows); ``spline_boundary="not-a-knot"``
is the alternative. Natural end conditions force ``q‴ = q⁗ = 0`` at the ends,
which bends the accelerations of data that do not end that way (e.g. ``sin t``)
over the first and last few samples.
"""
from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from pydrake.solvers import MathematicalProgram
from scipy.interpolate import make_interp_spline

from ..engine.callbacks import drake_callable
from ..engine.collocation import SCHEMES, Grid, collocation_defects, quadrature_weights
from ..engine.kernel import kernel_for
from ..modeling.constraints import constraint_jacobian, constraint_values
from ..modeling.forces import CoordinateActuator
from ..modeling.model import Model
from ..modeling.muscle import IMPLICIT_DERIVATIVE_BOUNDS
from ..results.tables import reference_columns
from ..results.trajectory import Solution, Trajectory
from ..solve.optimizer import Progress, run_optimizer
from ..solve.settings import SolverSettings
from ..solve.solution import package_solution
from ..util.names import did_you_mean

__all__ = ["Inverse", "InverseSolution", "add_reserves", "reserve_path"]

#: Controls whose path matches this are reserves (Moco: ``.*/reserve_.*``).
RESERVE_PATTERN = r".*/reserve_.*"


def reserve_path(coordinate_path: str) -> str:
    """Name of the reserve actuator of a coordinate, as Moco's ``ModOpAddReserves`` names it.

    ``/jointset/slider/position`` -> ``/forceset/reserve_jointset_slider_position``.
    """
    return "/forceset/reserve_" + coordinate_path.strip("/").replace("/", "_")


def add_reserves(model: Model, optimal_force: float, coordinates: list[str] | None = None,
                 bounds: tuple[float, float] = (-np.inf, np.inf)) -> Model:
    """A copy of ``model`` with a reserve :class:`CoordinateActuator` on each coordinate (Moco's ``ModOpAddReserves``).

    Parameters
    ----------
    model : Model
        Left unchanged; the copy shares its ``MultibodyPlant``.
    optimal_force : float
        Reserve generalized force per unit control (N or N·m). Small values
        make reserves expensive under an effort goal.
    coordinates : list of str, optional
        Coordinate names (``model.coordinates[k].name``) or paths; default all.
    bounds : (float, float)
        Control bounds of the reserves (Moco: unbounded).
    """
    if not optimal_force > 0:
        raise ValueError(f"Reserve optimal_force must be positive, got {optimal_force}")
    by_name = {c.name: c for c in model.coordinates}
    by_name.update({c.path: c for c in model.coordinates})
    chosen = model.coordinates if coordinates is None else []
    for name in coordinates or []:
        if name not in by_name:
            raise KeyError("Reserve: " + did_you_mean(name, list(by_name), "coordinate"))
        chosen.append(by_name[name])
    reserves = [CoordinateActuator(reserve_path(c.path), c.name, float(optimal_force), float(bounds[0]),
                                   float(bounds[1])) for c in chosen]
    clash = {r.path for r in reserves} & {a.path for a in model.actuators}
    if clash:
        raise ValueError(f"The model already has actuators named {sorted(clash)}")
    return Model(model.plant, model.coordinates, [*model.actuators, *reserves], model.forces,
                 dict(model.body_paths), name=model.name, spec=None, muscles=model.muscles,
                 constraints=[copy.copy(c) for c in getattr(model, "constraints", [])])  # rebound to the copy


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
    missing = [n for n in needed if n not in columns]
    if missing:
        raise KeyError(f"Kinematics lack coordinate(s) {missing}; columns are {sorted(columns)}. "
                       + did_you_mean(missing[0], list(columns), "column"))
    states = set(model.state_names())  # other states of the model (speeds, activations) are ignored, as in Moco
    extra = sorted(n for n in columns if n not in states)
    if extra and not allow_extra_columns:
        raise ValueError(f"Kinematics have columns that are not states of the model: {extra} "
                         "(pass kinematics_allow_extra_columns=True to ignore them)")
    k = 5 if time.size >= 6 else 3
    if boundary == "not-a-knot":
        bc = None
    else:  # natural: the 3rd and 4th derivatives vanish at the ends (Moco's GCV spline, zero smoothing)
        bc = ([(3, 0.0), (4, 0.0)], [(3, 0.0), (4, 0.0)]) if k == 5 else "natural"
    return [make_interp_spline(time, np.asarray(columns[n], float), k=k, bc_type=bc) for n in needed]


class Inverse:
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

    def __init__(self, model: Model, kinematics, *, initial_time: float | None = None,
                 final_time: float | None = None, mesh_interval: float = 0.02,
                 reserves_optimal_force: float | None = None, reserves_weight: float = 1.0,
                 minimize_sum_squared_activations: bool = False, kinematics_allow_extra_columns: bool = False,
                 convergence_tolerance: float = 1e-3, constraint_tolerance: float = 1e-3,
                 max_iterations: int | None = None, transcription_scheme: str = "hermite-simpson",
                 implicit_auxiliary_derivatives_weight: float = 0.01, optim_solver: str = "ipopt",
                 initial_activation_from_excitation: bool = True, spline_boundary: str = "natural"):
        if not isinstance(model, Model):
            raise TypeError(f"model must be a moco_lab Model, got {type(model).__name__}")
        if transcription_scheme not in SCHEMES:
            raise ValueError(f"Unknown transcription scheme {transcription_scheme!r}; choose from {SCHEMES}")
        if spline_boundary not in SPLINE_BOUNDARIES:
            raise ValueError(f"Unknown spline_boundary {spline_boundary!r}; choose from {SPLINE_BOUNDARIES}")
        if not mesh_interval > 0:
            raise ValueError(f"mesh_interval must be positive, got {mesh_interval}")
        if reserves_weight < 0:
            raise ValueError(f"reserves_weight must be >= 0, got {reserves_weight}")
        self.model = add_reserves(model, reserves_optimal_force) if reserves_optimal_force else model
        time, columns, self._source = reference_columns(kinematics, "kinematics")
        self.splines = _spline_kinematics(self.model, time, columns, kinematics_allow_extra_columns,
                                          spline_boundary)
        t0 = float(time[0]) if initial_time is None else float(initial_time)
        tf = float(time[-1]) if final_time is None else float(final_time)
        eps = 1e-12 * max(1.0, abs(time[-1]))
        if not (time[0] - eps <= t0 < tf <= time[-1] + eps):
            raise ValueError(f"Time range [{t0}, {tf}] must be increasing and inside the kinematics' "
                             f"range [{time[0]}, {time[-1]}]")
        self.initial_time, self.final_time = t0, tf
        self.mesh_interval = float(mesh_interval)
        self.num_mesh_intervals = max(1, math.ceil((tf - t0) / self.mesh_interval - 1e-9))
        self.reserves_weight = float(reserves_weight)
        self.minimize_sum_squared_activations = bool(minimize_sum_squared_activations)
        self.implicit_auxiliary_derivatives_weight = float(implicit_auxiliary_derivatives_weight)
        self.transcription_scheme = transcription_scheme
        self.initial_activation_from_excitation = bool(initial_activation_from_excitation)
        self.settings = SolverSettings(transcription_scheme=transcription_scheme, multibody_dynamics_mode="implicit",
                                       num_mesh_intervals=self.num_mesh_intervals, optim_solver=optim_solver,
                                       optim_convergence_tolerance=convergence_tolerance,
                                       optim_constraint_tolerance=constraint_tolerance,
                                       optim_max_iterations=max_iterations)
        self.settings.validate()

    def kinematics_on(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Prescribed ``q, u, u̇`` at times ``t``, each of shape ``(len(t), nq)``."""
        t = np.asarray(t, float)
        Q = np.stack([s(t) for s in self.splines], axis=1)
        U = np.stack([s.derivative(1)(t) for s in self.splines], axis=1)
        A = np.stack([s.derivative(2)(t) for s in self.splines], axis=1)
        return Q, U, A

    def transcribe(self) -> "InverseProgram":
        """The nonlinear program (to inspect before solving)."""
        return InverseProgram(self)

    def solve(self, progress: Callable[[Progress], None] | None = None) -> InverseSolution:
        """Solve; a failed solve returns a sealed solution (as Moco)."""
        prog = self.transcribe()
        prog.set_guess()
        run = run_optimizer(prog.prog, self.settings, progress)
        return prog.package(run)


class InverseProgram:
    """The ``MathematicalProgram`` of an :class:`Inverse` problem.

    Variables (all visible on :attr:`prog`): ``Z`` (ng, nz) muscle states
    (``model.auxiliary_state_names()``), ``X`` (ng, nx) controls
    (``model.control_names()``), ``W`` (ng, nw) implicit tendon-force
    derivatives, ``L`` (ng, nl) Lagrange multipliers
    (``model.multiplier_names()``); ``ng`` grid points as in
    :class:`~moco_lab.transcription.Grid`.
    """

    def __init__(self, inverse: Inverse, chunk_size: int = 10):
        self.inverse = inv = inverse
        self.model = model = inv.model
        self.grid = grid = Grid(inv.transcription_scheme, inv.num_mesh_intervals)
        self.t0, self.tf = inv.initial_time, inv.final_time
        self.time = self.t0 + grid.tau * (self.tf - self.t0)
        self.Q, self.U, self.Acc = inv.kinematics_on(self.time)
        self.kernel = kernel_for(model)
        self.state_names = model.auxiliary_state_names()
        self.control_names = model.control_names()
        self.derivative_names = model.implicit_derivative_names()
        constraints = list(getattr(model, "constraints", []))
        self.multiplier_names = model.multiplier_names() if constraints else []
        self.nz, self.nx = len(self.state_names), len(self.control_names)
        self.nw, self.nl = len(self.derivative_names), len(self.multiplier_names)
        self.nb = self.nz + self.nx + self.nw + self.nl
        ng, nq = grid.num_points, model.nq
        # constraint Jacobians at the prescribed positions: constant data, so G^T λ is linear in λ
        self.G = np.zeros((ng, self.nl, nq))
        if self.nl:
            phi = np.array([constraint_values(model, q) for q in self.Q])
            worst = float(np.max(np.abs(phi)))
            if worst > 1e-6:
                raise ValueError(f"The kinematics violate the model's kinematic constraints by up to {worst:.3g} "
                                 "(assemble them first, e.g. moco_lab.constraints.project_positions)")
            self.G = np.stack([constraint_jacobian(model, q) for q in self.Q])
        prog = self.prog = MathematicalProgram()
        new = lambda n, name: (prog.NewContinuousVariables(ng, n, name) if n else np.empty((ng, 0), dtype=object))
        self.Z, self.X, self.W, self.L = new(self.nz, "z"), new(self.nx, "x"), new(self.nw, "w"), new(self.nl, "lambda")
        self._bounds()
        self._initial_activation()
        # integrand weights: controls (reserves weighted), activations, implicit derivatives
        self.wx = np.array([inv.reserves_weight if re.fullmatch(RESERVE_PATTERN, n) else 1.0
                            for n in self.control_names])
        self.wz = np.array([1.0 if inv.minimize_sum_squared_activations and n.endswith("/activation") else 0.0
                            for n in self.state_names])
        self.ww = np.full(self.nw, inv.implicit_auxiliary_derivatives_weight)
        self.chunks = []
        N = grid.num_mesh_intervals
        for i0 in range(0, N, chunk_size):
            ch = _InverseChunk(self, i0, min(N, i0 + chunk_size))
            self.chunks.append(ch)
            b = prog.AddConstraint(drake_callable(ch.constraint, scalar=False), ch.lower, ch.upper, ch.vars,
                                   description=f"inverse dynamics [{i0}, {ch.i1})")
            b.evaluator().SetGradientSparsityPattern(ch.sparsity)
            prog.AddCost(drake_callable(ch.cost, scalar=True), ch.vars)

    def _bounds(self):
        m, ng = self.model, self.grid.num_points
        self.state_bounds = np.array([m.default_state_bounds(n) for n in self.state_names]).reshape(-1, 2)
        self.control_bounds = np.array([m.default_control_bounds(n) for n in self.control_names]).reshape(-1, 2)
        for V, B in ((self.Z, self.state_bounds), (self.X, self.control_bounds),
                     (self.W, np.array([IMPLICIT_DERIVATIVE_BOUNDS] * self.nw).reshape(-1, 2))):
            if V.size:
                self.prog.AddBoundingBoxConstraint(np.tile(B[:, 0], ng), np.tile(B[:, 1], ng), V.reshape(-1))

    def _initial_activation(self):
        """Moco's ``MocoInitialActivationGoal``: a(t0) = e(t0) for muscles with activation dynamics."""
        if not self.inverse.initial_activation_from_excitation:
            return
        for j, pm in enumerate(self.model.muscles):
            name = f"{pm.path}/activation"
            if name in self.state_names:
                a = self.Z[0, self.state_names.index(name)]
                e = self.X[0, self.control_names.index(pm.path)]
                self.prog.AddLinearEqualityConstraint(np.array([[1.0, -1.0]]), [0.0], [a, e]) \
                    .evaluator().set_description(f"initial_activation {pm.path}")

    def set_guess(self):
        """Moco's default guess: the middle of each variable's bounds (0 when unbounded)."""

        def mid(B):
            lo, hi = B[:, 0], B[:, 1]
            both = np.isfinite(lo) & np.isfinite(hi)
            g = np.where(both, (np.where(both, lo, 0.0) + np.where(both, hi, 0.0)) / 2, 0.0)
            g = np.where(np.isfinite(lo) & ~np.isfinite(hi), lo, g)
            return np.where(~np.isfinite(lo) & np.isfinite(hi), hi, g)

        ng = self.grid.num_points
        for V, B in ((self.Z, self.state_bounds), (self.X, self.control_bounds)):
            if V.size:
                self.prog.SetInitialGuess(V, np.tile(mid(B), (ng, 1)))
        for V in (self.W, self.L):
            if V.size:
                self.prog.SetInitialGuess(V, np.zeros(V.shape))

    # ------------------------------------------------------------ evaluation
    def node_values(self, idx, Z, X, W, Lam, jac: bool):
        """Muscle-state derivatives ``Zd`` (n, nz) and path residuals ``[R + Gᵀλ, Rw]`` (n, nq + nw)
        at the grid points ``idx`` (n,).

        With ``jac``, also ``dZd`` (n, nz, nb) and ``dR`` (n, nq + nw, nb) w.r.t. the node block
        ``[z, x, w, λ]``.
        """
        res = self.kernel.evaluate(self.Q[idx], self.U[idx], X, np.zeros(0), Z=Z, A=self.Acc[idx], jac=jac, W=W)
        G = self.G[idx]
        R = np.hstack([res["R"] + np.einsum("nlq,nl->nq", G, Lam), res["Rw"]])
        if not jac:
            return res["Zd"], R, None, None
        nz, nx, nw = self.nz, self.nx, self.nw

        def block(J):
            B = np.zeros((Z.shape[0], J["dz"].shape[1], self.nb))
            B[:, :, :nz] = J["dz"]
            B[:, :, nz:nz + nx] = J["dx"]
            B[:, :, nz + nx:nz + nx + nw] = J["dw"]
            return B

        dR = np.concatenate([block(res["J"]), block(res["JW"])], axis=1)
        dR[:, :self.model.nq, nz + nx + nw:] = np.transpose(G, (0, 2, 1))
        return res["Zd"], R, block(res["JZ"]), dR

    def package(self, run) -> InverseSolution:
        """Name the solution vector and evaluate the report."""
        val = lambda V: run.x[self.prog.FindDecisionVariableIndices(V.reshape(-1))].reshape(V.shape) \
            if V.size else np.zeros(V.shape)
        Z, X, W, Lam = val(self.Z), val(self.X), val(self.W), val(self.L)
        model = self.model
        states = {}
        for k, c in enumerate(model.coordinates):
            states[c.value_path] = self.Q[:, k]
            states[c.speed_path] = self.U[:, k]
        states.update({n: Z[:, k] for k, n in enumerate(self.state_names)})
        controls = {n: X[:, k] for k, n in enumerate(self.control_names)}
        derivs = {c.accel_path: self.Acc[:, k] for k, c in enumerate(model.coordinates)}
        derivs.update({n: W[:, k] for k, n in enumerate(self.derivative_names)})
        mult = {n: Lam[:, k] for k, n in enumerate(self.multiplier_names)}
        traj = Trajectory(self.time, states, controls, mult, derivs, {})
        goal_values = self.goal_values(Z, X, W)
        solution = package_solution(run, self.inverse.settings, traj, goal_values)
        # the generalized force the motion needs from actuators, muscles and constraints:
        # ID(q, u, u̇) minus the passive force elements (springs, dampers) = τ_actuators + τ_muscles − Gᵀλ
        P = np.zeros(0)
        R = self.kernel.evaluate(self.Q, self.U, X, P, Z=Z, A=self.Acc, W=W)["R"]  # ID − τ_applied
        tau_applied = self.kernel.applied(self.Q, self.U, Z, X, P)[0]
        need = R + tau_applied - self.kernel.passive_forces(self.Q, self.U, Z, X, P)
        net = {c.name: need[:, k] for k, c in enumerate(model.coordinates)}
        reserves, coords = {}, {}
        for a in model.actuators:
            if re.fullmatch(RESERVE_PATTERN, a.path):
                reserves[a.path] = a.optimal_force * controls[a.path]
                coords[a.path] = a.coordinate
        return InverseSolution(solution, net, reserves, coords)

    def goal_values(self, Z, X, W) -> dict[str, float]:
        q = self.grid.quadrature * (self.tf - self.t0)
        values = {"excitation_effort": float(q @ (X ** 2 @ self.wx))}
        if self.inverse.minimize_sum_squared_activations:
            values["activation_effort"] = float(q @ (Z ** 2 @ self.wz))
        if self.nw:
            values["implicit_auxiliary_derivatives"] = float(q @ (W ** 2 @ self.ww))
        return values


class _InverseChunk:
    """Muscle-state defects and path residuals of mesh intervals ``[i0, i1)`` in one binding."""

    def __init__(self, ip: InverseProgram, i0: int, i1: int):
        self.ip = ip
        self.i0, self.i1 = i0, i1
        s = ip.grid.stride
        self.g = np.arange(s * i0, s * i1 + 1)
        self.nloc, self.L = self.g.size, i1 - i0
        self.vars = np.concatenate([np.concatenate([ip.Z[k], ip.X[k], ip.W[k], ip.L[k]]) for k in self.g])
        self.nvar = self.vars.size
        dtau = np.diff(ip.grid.mesh)[i0:i1]
        self.h = (ip.tf - ip.t0) * dtau
        self.quad = quadrature_weights(ip.grid.scheme, dtau) * (ip.tf - ip.t0)
        last = i1 == ip.grid.num_mesh_intervals
        self.owned = np.arange(self.nloc if last else self.nloc - 1)
        self.per = 1 if ip.grid.scheme == "trapezoidal" else 2
        self.ndef = self.L * ip.nz * self.per
        self.nres = ip.model.nq + ip.nw
        self.nout = self.ndef + self.owned.size * self.nres
        self.lower = np.zeros(self.nout)
        self.upper = np.zeros(self.nout)
        nb = ip.nb
        pairs = []
        for l in range(self.L):
            nodes = [l, l + 1] if self.per == 1 else [2 * l, 2 * l + 1, 2 * l + 2]
            cols = [c for k in nodes for c in range(k * nb, (k + 1) * nb)]
            for r in range(l * ip.nz * self.per, (l + 1) * ip.nz * self.per):
                pairs.extend((r, c) for c in cols)
        for j, k in enumerate(self.owned):
            for r in range(self.ndef + j * self.nres, self.ndef + (j + 1) * self.nres):
                pairs.extend((r, c) for c in range(k * nb, (k + 1) * nb))
        self.sparsity = pairs

    def _split(self, z):
        ip = self.ip
        B = z.reshape(self.nloc, ip.nb)
        o = np.cumsum([0, ip.nz, ip.nx, ip.nw, ip.nl])
        return B[:, o[0]:o[1]], B[:, o[1]:o[2]], B[:, o[2]:o[3]], B[:, o[3]:o[4]]

    def constraint(self, z, jac):
        ip = self.ip
        Z, X, W, Lam = self._split(z)
        Zd, R, dZd, dR = ip.node_values(self.g, Z, X, W, Lam, jac)
        nz, nb = ip.nz, ip.nb
        out = np.empty(self.nout)
        out[self.ndef:] = R[self.owned].reshape(-1)
        scheme = ip.grid.scheme
        if not jac:
            out[:self.ndef] = collocation_defects(scheme, Z, Zd, self.h)[0]
            return out, None
        J = np.zeros((self.nout, self.nvar))
        E = np.zeros((nz, nb))
        E[:, :nz] = np.eye(nz)
        out[:self.ndef], J[:self.ndef] = collocation_defects(scheme, Z, Zd, self.h, dF=dZd, E=E)
        for j, k in enumerate(self.owned):
            J[self.ndef + j * self.nres:self.ndef + (j + 1) * self.nres, k * nb:(k + 1) * nb] = dR[k]
        return out, J

    def cost(self, z, jac):
        ip = self.ip
        Z, X, W, _ = self._split(z)
        q = self.quad
        total = float(q @ (X ** 2 @ ip.wx + Z ** 2 @ ip.wz + W ** 2 @ ip.ww))
        if not jac:
            return total, None
        grad = np.zeros((self.nloc, ip.nb))
        grad[:, :ip.nz] = 2 * q[:, None] * Z * ip.wz
        grad[:, ip.nz:ip.nz + ip.nx] = 2 * q[:, None] * X * ip.wx
        grad[:, ip.nz + ip.nx:ip.nz + ip.nx + ip.nw] = 2 * q[:, None] * W * ip.ww
        return total, grad.reshape(-1)
