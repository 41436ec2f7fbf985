"""Solver settings (Moco's ``MocoCasADiSolver`` settings, in snake_case).

Settings mirror Moco's names: ``transcription_scheme``,
``multibody_dynamics_mode``, ``num_mesh_intervals``, ``optim_solver``,
``optim_convergence_tolerance``, ``optim_constraint_tolerance``,
``optim_max_iterations``. Tolerances left at ``None`` use the optimizer's
defaults, as Moco does (IPOPT: ``tol`` 1e-8, ``constr_viol_tol`` 1e-4).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import numpy as np

from ..results.duals import Duals
from ..results.trajectory import Trajectory
from ..util.checks import finite_number, flag, whole_number
from ..util.names import StrictAttributes
from .collocation import DYNAMICS_MODES, check_scheme

__all__ = ["SolverSettings", "HESSIAN_APPROXIMATIONS"]

#: Values of ``SolverSettings.optim_hessian_approximation``.
HESSIAN_APPROXIMATIONS = ("limited-memory", "exact")


@dataclass
class SolverSettings(StrictAttributes):
    """How to transcribe and solve (Moco's solver settings).

    Attributes
    ----------
    transcription_scheme : str
        ``"hermite-simpson"`` (default), ``"trapezoidal"``, or Moco 4.6's pseudospectral
        ``"legendre-gauss-k"`` and ``"legendre-gauss-radau-k"``, k = 1…9 (:mod:`moco_lab.engine.collocation`;
        with kinematic constraints only with ``kinematic_constraint_method="Bordalba2023"``, as Moco).
    multibody_dynamics_mode : {"explicit", "implicit"}
    num_mesh_intervals : int
        Uniform mesh intervals ``N`` (Moco's default 100).
    interpolate_control_mesh_interior_points : bool
        Moco's setting of the same name (default True): the controls at the grid points inside a mesh interval
        (Hermite–Simpson's midpoints, the pseudospectral schemes' roots) are the linear interpolation of the
        interval's end values. This keeps the controls from oscillating between mesh and interior points, but
        limits the pseudospectral schemes' order of accuracy to that of piecewise-linear controls (lesson 01).
        False: they are free variables (as MocoInverse sets it); with ``legendre-gauss-k`` the controls at the
        mesh points then enter only path constraints and endpoint terms, so they may be anything there.
    optim_solver : {"ipopt", "snopt"}
    optim_linear_solver : {"spral", "mumps"}
        IPOPT's linear solver for its KKT systems (Moco's setting of the same name; Moco's default is
        MUMPS). ``"spral"`` (default): Drake's own IPOPT, whose SPRAL runs on a reference BLAS.
        ``"mumps"``: the same IPOPT algorithm and options from the IPOPT 3.14 build that the ``casadi``
        wheel ships (MUMPS, METIS, OpenBLAS; casadi is one of moco_lab's dependencies),
        driven through its C interface on the same Drake program
        (:mod:`moco_lab.solve.ipopt_mumps`): at musculoskeletal scale a solve is several times faster,
        because the factorization is most of it. Options named ``spral_*`` are ignored with MUMPS and
        ``mumps_*`` with SPRAL. With the exact Hessian IPOPT asks MUMPS for
        ``mumps_pivot_order=4`` (PORD, absent from the casadi wheel's MUMPS, which falls back to METIS or AMF:
        :data:`moco_lab.solve.optimizer.MUMPS_PIVOT_ORDER_EXACT` says why).
    optim_hessian_approximation : {"limited-memory", "exact"}
        How IPOPT gets the Hessian of its Lagrangian (Moco's setting of the same name). ``"limited-memory"``
        (default, as Moco): a quasi-Newton (L-BFGS) approximation from the gradients. ``"exact"``: moco_lab's
        exact second derivatives (the model's equations differentiated twice as an expression graph, the goals'
        own second derivatives; :mod:`moco_lab.engine.hessian`), with their sparsity declared once: far fewer
        iterations, each building and factorizing a denser system. Needs ``optim_linear_solver="mumps"`` (Drake's
        own IPOPT takes no Hessian) and goals and constraints that have second derivatives (user goals written
        as Python functions and path constraints do not: a clear error names them).
    optim_limited_memory_start : int
        With ``optim_hessian_approximation="exact"`` (a moco_lab setting, not Moco's): first this many iterations
        of Drake's IPOPT (SPRAL) with the limited-memory Hessian, then IPOPT + MUMPS with the exact one from
        where they stopped (0, the default: exact from the start). From a rough guess the first iterations find
        the neighbourhood of a solution cheaply (e.g. a gait from measured angles); Newton's iterations then
        converge in few steps instead of creeping along flat valleys, where limited-memory solves stop wherever
        the computer's rounding takes them. If the limited-memory iterations already converge, that is the
        solution. The iteration limit ``optim_max_iterations`` counts both stages.
    optim_warm_start : bool
        Start from the guess's multipliers too (a moco_lab setting, not Moco's; default False): the guess is a
        solution of this problem or a nearby one (another muscle strength, speed, weight or bound) on the same mesh.
        An interior-point method's iterate is the variables *and* their multipliers; from the variables alone IPOPT
        estimates new multipliers and moves every variable 1 % of its range inside its bounds, which throws away
        much of a converged solution (the walkers' activations and excitations sit at their bounds). With True,
        IPOPT + MUMPS starts from ``guess_duals`` (or, if that is None, the guess's own ``Solution.duals``) with
        :data:`moco_lab.solve.ipopt_mumps.WARM_START_OPTIONS` (``optim_solver_options`` overrides each). Moco's
        2-D walker at N = 15 re-predicted with a weak soleus from its solution at normal strength, exact
        Hessian: 32 iterations instead of 1,293 (docs/verification.md, "Warm starts"). Multipliers fit only a
        program of the same structure (same mesh, model, goals enforced as constraints and bounds that are finite);
        otherwise, and with Drake's IPOPT or SNOPT, the solve starts as without this setting and the solution's
        ``message`` says why.
    guess_duals : Duals or None
        The multipliers ``optim_warm_start`` starts from (a solution's ``duals``; for a guess that is not itself
        that solution, e.g. a solution stretched to another speed). In memory only: not saved with a study.
    optim_convergence_tolerance, optim_constraint_tolerance : float or None
        ``None``: optimizer defaults (IPOPT ``tol`` 1e-8, ``constr_viol_tol`` 1e-4).
    optim_max_iterations : int or None
    implicit_acceleration_bounds : float
        Implicit mode: accelerations are bounded by ``±`` this (Moco: 1000).
    guess : Trajectory or None
        Initial guess; ``None`` means Moco's guess from bounds. Any earlier
        trajectory or solution works: it is interpolated onto the new grid.
    guess_values : dict of str -> float
        Constants that replace the guess from bounds for the states and controls whose names
        match a pattern (a regular expression matched against the whole name), at every node —
        what Moco users do with ``guess.setState(name, createVectorLinspace(N, v, v))``. Unlike
        ``guess`` it is plain data, so it is saved with the study and travels to sweep workers.
        A ``guess`` trajectory, when given, then overrides the names it holds.
    chunk_size : int or None
        Mesh intervals per dynamics binding (performance knob; results do not
        depend on it beyond round-off). ``None`` (default): chosen from the
        size of a node (see :meth:`Transcription.chunk_intervals`).
    verbose : int
        0 silent; 1 prints a line per iteration; 5 IPOPT's own output
        (6 adds IPOPT's timing statistics).
    kinematic_constraint_method : {"Posa2016", "Bordalba2023"}
        How kinematic constraints are enforced (Moco 4.6's names). ``"Posa2016"``: trapezoidal
        enforces φ at mesh points (Eq. 7); Hermite–Simpson φ, φ̇, φ̈ at mesh points with the
        midpoint velocity correction (Eq. 12–14). ``"Bordalba2023"`` (both schemes): each interval
        integrates to a state x̃ that is projected onto the constraint manifold, x = x̃ + F_x(x)ᵀμ
        with F = [φ; φ̇]; φ and φ̇ hold at mesh points, φ̈ at every grid point.
    projection_slack_bounds : (float, float)
        Bordalba: bounds of the projection slacks μ (Moco's ``projection_slack_variable_bounds``, ±0.001).
    minimize_state_projection_distance, state_projection_distance_weight : bool, float
        Bordalba: add ``weight * Σ_i ‖x̃_i − x_i‖²`` to the objective (Moco's defaults: True, 1e-6).
    multiplier_bounds : (float, float)
        Bounds of the kinematic-constraint Lagrange multipliers (Moco's ``multiplier_bounds``, [-1000, 1000]).
    velocity_correction_bounds : (float, float)
        Hermite–Simpson with kinematic constraints: bounds of the midpoint velocity
        corrections γ̃ (Moco's ``velocity_correction_bounds``, [-0.1, 0.1]).
    minimize_lagrange_multipliers : bool
        Add ``lagrange_multiplier_weight * ∫ ‖λ‖² dt`` to the objective (Moco's option of the same
        name; the paper's ``w_λ``, recommended with the trapezoidal scheme, Eq. 7).
    lagrange_multiplier_weight : float
    minimize_implicit_multibody_accelerations, implicit_multibody_accelerations_weight : bool, float
        Implicit mode: add ``weight * ∫ ‖u̇‖² dt`` (Moco's options of the same names; the squat-to-stand
        problem of the Moco paper uses weight 0.001).
    minimize_implicit_auxiliary_derivatives, implicit_auxiliary_derivatives_weight : bool, float
        Add ``weight * ∫ ‖w‖² dt`` over the implicit derivative variables (e.g. tendon force rates of
        muscles with implicit tendon dynamics).
    optim_solver_options : dict
        Extra options passed unchanged to the optimizer (IPOPT or SNOPT
        option names), e.g. ``{"mu_strategy": "adaptive"}``. By default
        moco_lab sets IPOPT's ``spral_scaling`` to ``"none"``: Drake's IPOPT
        uses the SPRAL linear solver, whose default scaling made small
        collocation problems several times slower here, with the same
        iterates. Override it here if you need scaling.
    """

    transcription_scheme: str = "hermite-simpson"
    multibody_dynamics_mode: str = "explicit"
    num_mesh_intervals: int = 100
    interpolate_control_mesh_interior_points: bool = True
    optim_solver: str = "ipopt"
    optim_linear_solver: str = "spral"
    optim_hessian_approximation: str = "limited-memory"
    optim_limited_memory_start: int = 0
    optim_warm_start: bool = False
    guess_duals: Duals | None = None
    optim_convergence_tolerance: float | None = None
    optim_constraint_tolerance: float | None = None
    optim_max_iterations: int | None = None
    implicit_acceleration_bounds: float = 1000.0
    guess: Trajectory | None = None
    guess_values: dict = field(default_factory=dict)
    chunk_size: int | None = None
    verbose: int = 0
    kinematic_constraint_method: str = "Posa2016"
    projection_slack_bounds: tuple = (-0.001, 0.001)
    minimize_state_projection_distance: bool = True
    state_projection_distance_weight: float = 1e-6
    multiplier_bounds: tuple = (-1000.0, 1000.0)
    velocity_correction_bounds: tuple = (-0.1, 0.1)
    minimize_lagrange_multipliers: bool = False
    lagrange_multiplier_weight: float = 1.0
    minimize_implicit_multibody_accelerations: bool = False
    implicit_multibody_accelerations_weight: float = 1.0
    minimize_implicit_auxiliary_derivatives: bool = False
    implicit_auxiliary_derivatives_weight: float = 1.0
    optim_solver_options: dict = field(default_factory=dict)

    def __post_init__(self):
        self._seal_attributes()

    def validate(self) -> None:
        """Raise a clear error for unknown or inconsistent settings."""
        scheme = self.transcription_scheme
        check_scheme(scheme)
        if self.multibody_dynamics_mode not in DYNAMICS_MODES:
            raise ValueError(f"Unknown multibody_dynamics_mode {self.multibody_dynamics_mode!r}; choose one of "
                             f"{list(DYNAMICS_MODES)}.")
        if self.optim_solver not in ("ipopt", "snopt"):
            raise ValueError(f"Unknown optim_solver {self.optim_solver!r}; choose 'ipopt' or 'snopt'.")
        if self.optim_linear_solver not in ("spral", "mumps"):
            raise ValueError(f"Unknown optim_linear_solver {self.optim_linear_solver!r}; choose 'spral' (Drake's "
                             "IPOPT) or 'mumps' (IPOPT with MUMPS from the casadi wheel).")
        if self.optim_hessian_approximation not in HESSIAN_APPROXIMATIONS:
            raise ValueError(f"Unknown optim_hessian_approximation {self.optim_hessian_approximation!r}; choose "
                             "'limited-memory' or 'exact'.")
        if self.optim_hessian_approximation == "exact" and (self.optim_solver != "ipopt"
                                                            or self.optim_linear_solver != "mumps"):
            raise ValueError("optim_hessian_approximation='exact' needs IPOPT with optim_linear_solver='mumps' "
                             f"(got optim_solver={self.optim_solver!r}, optim_linear_solver="
                             f"{self.optim_linear_solver!r}): Drake's own IPOPT and SNOPT take no Hessian.")
        whole_number(self.optim_limited_memory_start, "optim_limited_memory_start", 0)
        flag(self.optim_warm_start, "optim_warm_start")
        if (isinstance(self.num_mesh_intervals, bool) or not isinstance(self.num_mesh_intervals, (int, np.integer))
                or self.num_mesh_intervals < 1):
            raise ValueError(f"num_mesh_intervals must be a positive integer, got {self.num_mesh_intervals!r}")
        for name in ("optim_convergence_tolerance", "optim_constraint_tolerance"):
            v = getattr(self, name)
            if v is not None:
                finite_number(v, name, 0, False, "a finite number > 0 (or None for the optimizer's default)")
        if self.optim_max_iterations is not None:
            whole_number(self.optim_max_iterations, "optim_max_iterations", 0)
        if self.guess is not None and not isinstance(self.guess, Trajectory):
            raise TypeError("guess must be a Trajectory/Solution or None")
        if self.guess_duals is not None and not isinstance(self.guess_duals, Duals):
            raise TypeError(f"guess_duals must be a Duals (a solution's .duals) or None, got "
                            f"{type(self.guess_duals).__name__}")
        for pattern, value in dict(self.guess_values).items():
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"guess_values: {pattern!r} is not a regular expression ({err})") from None
            finite_number(value, f"guess_values[{pattern!r}]")
        finite_number(self.implicit_acceleration_bounds, "implicit_acceleration_bounds", 0, False)
        if self.kinematic_constraint_method not in ("Posa2016", "Bordalba2023"):
            raise ValueError(f"Unknown kinematic_constraint_method {self.kinematic_constraint_method!r}; "
                             "choose 'Posa2016' or 'Bordalba2023'.")
        for name in ("multiplier_bounds", "velocity_correction_bounds", "projection_slack_bounds"):
            lo, hi = getattr(self, name)
            if not lo <= 0 <= hi or lo == hi:
                raise ValueError(f"{name} must be (lower, upper) with lower <= 0 <= upper and lower < upper, "
                                 f"got {(lo, hi)}")
        for name in ("lagrange_multiplier_weight", "implicit_multibody_accelerations_weight",
                     "implicit_auxiliary_derivatives_weight"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    def set_hessian_approximation(self, approximation: str) -> None:
        """Set ``optim_hessian_approximation``; ``"exact"`` also selects IPOPT with MUMPS (``optim_linear_solver``),
        the one optimizer here that takes a Hessian."""
        if approximation not in HESSIAN_APPROXIMATIONS:
            raise ValueError(f"optim_hessian_approximation must be one of {list(HESSIAN_APPROXIMATIONS)}, got "
                             f"{approximation!r}")
        self.optim_hessian_approximation = approximation
        if approximation == "exact":
            self.optim_solver, self.optim_linear_solver = "ipopt", "mumps"

    def to_dict(self) -> dict:
        """The settings as plain data, for study files."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("guess", "guess_duals")}
        for key in ("multiplier_bounds", "velocity_correction_bounds", "projection_slack_bounds"):
            d[key] = [float(v) for v in d[key]]  # JSON has lists, not tuples
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SolverSettings":
        """Settings written by :meth:`to_dict`."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"Unknown solver settings {sorted(unknown)}")
        d = dict(d)
        for key in ("multiplier_bounds", "velocity_correction_bounds", "projection_slack_bounds"):
            if key in d:
                d[key] = tuple(float(v) for v in d[key])
        return cls(**d)
