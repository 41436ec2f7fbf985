"""Solver settings and the solve itself (Moco's ``MocoCasADiSolver``, on Drake).

Settings mirror Moco's names (snake_case): ``transcription_scheme``,
``multibody_dynamics_mode``, ``num_mesh_intervals``, ``optim_solver``,
``optim_convergence_tolerance``, ``optim_constraint_tolerance``,
``optim_max_iterations``. Tolerances left at ``None`` use the optimizer's
defaults, as Moco does (IPOPT: ``tol`` 1e-8, ``constr_viol_tol`` 1e-4).
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import tempfile
import time as _time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from pydrake.solvers import CommonSolverOption, IpoptSolver, SnoptSolver, SolverOptions

from .trajectory import Solution, Trajectory
from .transcription import MODES, SCHEMES, Transcription

#: IPOPT 3.14's ``SolverReturn`` codes (as Drake reports them) -> Moco's status names.
IPOPT_STATUS = {
    0: "Solve_Succeeded",
    1: "Maximum_Iterations_Exceeded",
    2: "Maximum_CpuTime_Exceeded",
    3: "Maximum_WallTime_Exceeded",
    4: "Search_Direction_Becomes_Too_Small",
    5: "Solved_To_Acceptable_Level",
    6: "Infeasible_Problem_Detected",
    7: "User_Requested_Stop",
    8: "Feasible_Point_Found",
    9: "Diverging_Iterates",
    10: "Restoration_Failed",
    11: "Error_In_Step_Computation",
    12: "Invalid_Number_Detected",
    13: "Not_Enough_Degrees_Of_Freedom",
    14: "Invalid_Option",
    15: "Insufficient_Memory",
    16: "Internal_Error",
}
#: IPOPT statuses counted as success (Moco also accepts the acceptable level).
IPOPT_SUCCESS = (0, 5)


#: Solver-settings attributes -> each optimizer's option names.
_OPTION_NAMES = {
    "ipopt": {"optim_convergence_tolerance": "tol", "optim_constraint_tolerance": "constr_viol_tol",
              "optim_max_iterations": "max_iter"},
    "snopt": {"optim_convergence_tolerance": "Major optimality tolerance",
              "optim_constraint_tolerance": "Major feasibility tolerance",
              "optim_max_iterations": "Major iterations limit"},
}


@dataclass
class Progress:
    """Reported to a progress callback while the optimizer runs.

    With IPOPT: once per IPOPT iteration (``iteration`` 0, 1, 2, ...), with
    IPOPT's objective and primal infeasibility ``inf_pr`` as
    ``constraint_violation``. With SNOPT: once per objective evaluation, with
    the largest constraint violation at that point.
    """

    iteration: int
    objective: float
    constraint_violation: float
    elapsed: float


@dataclass
class SolverSettings:
    """How to transcribe and solve (Moco's solver settings).

    Attributes
    ----------
    transcription_scheme : {"hermite-simpson", "trapezoidal"}
    multibody_dynamics_mode : {"explicit", "implicit"}
    num_mesh_intervals : int
        Uniform mesh intervals ``N`` (Moco's default 100).
    optim_solver : {"ipopt", "snopt"}
    optim_convergence_tolerance, optim_constraint_tolerance : float or None
        ``None``: optimizer defaults (IPOPT ``tol`` 1e-8, ``constr_viol_tol`` 1e-4).
    optim_max_iterations : int or None
    implicit_acceleration_bounds : float
        Implicit mode: accelerations are bounded by ``±`` this (Moco: 1000).
    guess : Trajectory or None
        Initial guess; ``None`` means Moco's guess from bounds. Any earlier
        trajectory or solution works: it is interpolated onto the new grid.
    chunk_size : int
        Mesh intervals per dynamics binding (performance knob; results do not depend on it).
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
    optim_solver: str = "ipopt"
    optim_convergence_tolerance: float | None = None
    optim_constraint_tolerance: float | None = None
    optim_max_iterations: int | None = None
    implicit_acceleration_bounds: float = 1000.0
    guess: Trajectory | None = None
    chunk_size: int = 10
    verbose: int = 0
    kinematic_constraint_method: str = "Posa2016"
    projection_slack_bounds: tuple = (-0.001, 0.001)
    minimize_state_projection_distance: bool = True
    state_projection_distance_weight: float = 1e-6
    multiplier_bounds: tuple = (-1000.0, 1000.0)
    velocity_correction_bounds: tuple = (-0.1, 0.1)
    minimize_lagrange_multipliers: bool = False
    lagrange_multiplier_weight: float = 1.0
    optim_solver_options: dict = field(default_factory=dict)

    def validate(self) -> None:
        """Raise a clear error for unknown or inconsistent settings."""
        scheme = self.transcription_scheme
        if scheme not in SCHEMES:
            raise ValueError(f"Unknown transcription_scheme {scheme!r}; choose one of {list(SCHEMES)}.")
        if self.multibody_dynamics_mode not in MODES:
            raise ValueError(f"Unknown multibody_dynamics_mode {self.multibody_dynamics_mode!r}; choose one of {list(MODES)}.")
        if self.optim_solver not in ("ipopt", "snopt"):
            raise ValueError(f"Unknown optim_solver {self.optim_solver!r}; choose 'ipopt' or 'snopt'.")
        if not isinstance(self.num_mesh_intervals, (int, np.integer)) or self.num_mesh_intervals < 1:
            raise ValueError(f"num_mesh_intervals must be a positive integer, got {self.num_mesh_intervals!r}")
        for name in ("optim_convergence_tolerance", "optim_constraint_tolerance"):
            v = getattr(self, name)
            if v is not None and not (v > 0):
                raise ValueError(f"{name} must be > 0 (or None for the optimizer's default), got {v}")
        if self.optim_max_iterations is not None and self.optim_max_iterations < 0:
            raise ValueError("optim_max_iterations must be >= 0")
        if self.guess is not None and not isinstance(self.guess, Trajectory):
            raise TypeError("guess must be a Trajectory/Solution or None")
        if self.implicit_acceleration_bounds <= 0:
            raise ValueError("implicit_acceleration_bounds must be > 0")
        if self.kinematic_constraint_method not in ("Posa2016", "Bordalba2023"):
            raise ValueError(f"Unknown kinematic_constraint_method {self.kinematic_constraint_method!r}; "
                             "choose 'Posa2016' or 'Bordalba2023'.")
        for name in ("multiplier_bounds", "velocity_correction_bounds", "projection_slack_bounds"):
            lo, hi = getattr(self, name)
            if not lo <= 0 <= hi or lo == hi:
                raise ValueError(f"{name} must be (lower, upper) with lower <= 0 <= upper and lower < upper, "
                                 f"got {(lo, hi)}")
        if self.lagrange_multiplier_weight < 0:
            raise ValueError(f"lagrange_multiplier_weight must be >= 0, got {self.lagrange_multiplier_weight}")

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "guess"}
        for key in ("multiplier_bounds", "velocity_correction_bounds", "projection_slack_bounds"):
            d[key] = [float(v) for v in d[key]]  # JSON has lists, not tuples
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SolverSettings":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"Unknown solver settings {sorted(unknown)}")
        d = dict(d)
        for key in ("multiplier_bounds", "velocity_correction_bounds", "projection_slack_bounds"):
            if key in d:
                d[key] = tuple(float(v) for v in d[key])
        return cls(**d)


# ------------------------------------------------------------------ guesses
def guess_from_bounds(tr: Transcription) -> dict:
    """Moco's default guess: midpoint of each variable's bounds (fixed values at fixed ends)."""
    p, ng = tr.problem, tr.grid.num_points
    g = {"t0": p.time_initial.midpoint_guess(), "tf": p.time_final.midpoint_guess()}
    for key, infos in (("Y", tr.state_infos), ("X", tr.control_infos)):
        M = np.zeros((ng, len(infos)))
        for k, info in enumerate(infos):
            M[:, k] = info.bounds.midpoint_guess()
            if info.initial is not None:
                M[0, k] = info.initial.midpoint_guess()
            if info.final is not None:
                M[-1, k] = info.final.midpoint_guess()
        g[key] = M
    g["A"] = np.zeros(tr.A.shape)
    g["P"] = np.array([par.bounds.midpoint_guess() for par in p.parameters])
    if g["tf"] <= g["t0"]:
        g["tf"] = g["t0"] + max(1e-3, p.time_final.upper - g["t0"]) if math.isfinite(p.time_final.upper) else g["t0"] + 1
    return g


def guess_from_trajectory(tr: Transcription, traj: Trajectory) -> dict:
    """Interpolate ``traj`` (any grid) onto the transcription's grid; fill gaps from bounds."""
    g = guess_from_bounds(tr)
    if isinstance(traj, Solution):
        traj = traj._data()  # a failed solve is still a usable guess; the caller's solution stays sealed
    p = tr.problem
    g["t0"] = float(np.clip(traj.initial_time, p.time_initial.lower, p.time_initial.upper))
    g["tf"] = float(np.clip(traj.final_time, p.time_final.lower, p.time_final.upper))
    t = traj.initial_time + tr.grid.tau * (traj.final_time - traj.initial_time)
    for key, names, table in (("Y", tr.state_names, traj.states), ("X", tr.control_names, traj.controls)):
        for k, name in enumerate(names):
            if name in table:
                g[key][:, k] = np.interp(t, traj.time, table[name])
    for k, name in enumerate(tr.derivative_names):
        if name in traj.derivatives:
            g["A"][:, k] = np.interp(t, traj.time, traj.derivatives[name])
    if tr.nacc:
        for c in tr.model.coordinates:
            if c.accel_path in traj.derivatives:
                continue
            if c.speed_path in traj.states and traj.num_times > 2:
                g["A"][:, c.q_index] = np.interp(t, traj.time, np.gradient(traj.states[c.speed_path], traj.time))
    for k, name in enumerate(tr.multiplier_names + tr.slack_names):
        if name in traj.multipliers:
            g["A"][:, tr.nres + k] = np.interp(t, traj.time, traj.multipliers[name])
    for k, par in enumerate(p.parameters):
        if par.name in traj.parameters:
            g["P"][k] = traj.parameters[par.name]
    return g


def _set_guess(tr: Transcription, g: dict) -> None:
    prog = tr.prog
    if tr.bordalba:  # projected end states start at the states themselves
        A = np.asarray(g["A"], float).copy()
        pn = tr.projection_nodes
        A[pn, tr.a_xt:tr.a_xt + tr.nxt] = np.asarray(g["Y"], float)[pn, :tr.nxt]
        g = dict(g, A=A)
    prog.SetInitialGuess(tr.t0, g["t0"])
    prog.SetInitialGuess(tr.tf, g["tf"])
    for key in ("Y", "X", "A"):
        V = getattr(tr, key)
        if V.size:
            prog.SetInitialGuess(V.reshape(-1), np.asarray(g[key], float).reshape(-1))
    if tr.npar:
        prog.SetInitialGuess(tr.P, g["P"])


# -------------------------------------------------------------------- solve
def max_constraint_violation(prog, x: np.ndarray) -> float:
    """Largest violation of any constraint (including bounds) at ``x``."""
    worst = 0.0
    for b in prog.GetAllConstraints():
        val = np.atleast_1d(prog.EvalBinding(b, x))
        lo, hi = b.evaluator().lower_bound(), b.evaluator().upper_bound()
        with np.errstate(invalid="ignore"):
            v = np.max(np.concatenate([lo - val, val - hi, [0.0]]))
        worst = max(worst, float(v))
    return worst


@dataclass
class OptimizerRun:
    """Outcome of one optimizer run on a ``MathematicalProgram`` (before naming the variables)."""

    x: np.ndarray
    success: bool
    status: str
    nit: int
    solve_time: float
    cost: float
    constraint_violation: float


def run_optimizer(prog, settings: SolverSettings, progress: Callable[[Progress], None] | None = None) -> OptimizerRun:
    """Solve ``prog`` (initial guess already set) with the optimizer and options of ``settings``.

    Reports each IPOPT iteration (or SNOPT objective evaluation) to
    ``progress`` while the solve runs, and reads the exact iteration count
    from the optimizer's own output.
    """
    options = SolverOptions()
    solver = IpoptSolver() if settings.optim_solver == "ipopt" else SnoptSolver()
    sid = solver.solver_id()
    # the optimizer's own statistics (exact iteration count, live progress) go to a scratch file
    stats_file = tempfile.NamedTemporaryFile(prefix=f"moco_lab_{settings.optim_solver}_", suffix=".txt",
                                             delete=False)
    stats_file.close()
    names = _OPTION_NAMES[settings.optim_solver]
    for attr, convert in (("optim_convergence_tolerance", float), ("optim_constraint_tolerance", float),
                          ("optim_max_iterations", int)):
        value = getattr(settings, attr)
        if value is not None:
            options.SetOption(sid, names[attr], convert(value))
    if settings.optim_solver == "ipopt":
        options.SetOption(sid, "print_level", 5 if settings.verbose >= 5 else 0)
        options.SetOption(sid, "output_file", stats_file.name)
        options.SetOption(sid, "file_print_level", 3)
        if settings.verbose >= 6:
            options.SetOption(sid, "print_timing_statistics", "yes")
        extra = {"spral_scaling": "none", **settings.optim_solver_options}
    else:
        options.SetOption(CommonSolverOption.kPrintFileName, stats_file.name)
        extra = dict(settings.optim_solver_options)
    for key, value in extra.items():
        try:
            options.SetOption(sid, key, value)
        except Exception as err:  # pragma: no cover - depends on Drake's option checks
            raise ValueError(f"Invalid {settings.optim_solver} option {key}={value!r}: {err}") from err
    if not solver.available() or not solver.enabled():
        raise RuntimeError(f"Optimizer {settings.optim_solver!r} is not available in this Drake build.")

    want_report = progress is not None or settings.verbose in range(1, 5)
    if want_report and settings.optim_solver == "ipopt":
        options.SetOption(sid, "file_print_level", 5)  # one line per iteration, read live
    reporter = _ProgressReporter(prog, stats_file.name, settings, progress)
    binding = prog.AddVisualizationCallback(reporter, prog.decision_variables()) if want_report else None
    try:
        reporter.start = _time.perf_counter()
        result = solver.Solve(prog, None, options)
        solve_time = _time.perf_counter() - reporter.start
        if want_report:
            reporter.finish(result.get_x_val())
    finally:
        if binding is not None:
            prog.RemoveVisualizationCallback(binding)

    details = result.get_solver_details()
    stats = _read_and_remove(stats_file.name)
    if settings.optim_solver == "ipopt":
        code = int(details.status)
        status = IPOPT_STATUS.get(code, f"IPOPT status {code}")
        success = code in IPOPT_SUCCESS
        found = re.search(r"Number of Iterations\.*:\s*(\d+)", stats)
    else:
        code = int(details.info)
        status = f"SNOPT_INFO_{code}"
        success = bool(result.is_success())
        found = re.search(r"No\. of major iterations\s+(\d+)", stats)
    x = result.get_x_val()
    return OptimizerRun(x=x, success=success, status=status, nit=int(found.group(1)) if found else -1,
                        solve_time=solve_time, cost=float(result.get_optimal_cost()),
                        constraint_violation=max_constraint_violation(prog, x))


def solve_transcription(tr: Transcription, settings: SolverSettings,
                        progress: Callable[[Progress], None] | None = None) -> Solution:
    """Solve a transcribed problem and package the :class:`Solution`."""
    g = guess_from_trajectory(tr, settings.guess) if settings.guess is not None else guess_from_bounds(tr)
    _set_guess(tr, g)
    run = run_optimizer(tr.prog, settings, progress)
    sol = tr.unpack(run.x)
    goal_values = tr.goal_values(sol)
    return package_solution(run, settings, trajectory_from_solution(tr, sol), goal_values)


def package_solution(run: OptimizerRun, settings: SolverSettings, traj: Trajectory,
                     goal_values: dict[str, float]) -> Solution:
    """A :class:`Solution` from an optimizer run, its named trajectory and goal values."""
    objective = run.cost if np.isfinite(run.cost) else sum(goal_values.values())
    message = (f"{settings.optim_solver}: {run.status} after {run.nit} iterations; objective {objective:.10g}; "
               f"max constraint violation {run.constraint_violation:.2e}")
    return Solution(traj, success=run.success, status=run.status, message=message, objective=objective,
                    goal_values=goal_values, nit=run.nit, solve_time=run.solve_time, solver=settings.optim_solver,
                    constraint_violation=run.constraint_violation)


_IPOPT_ITERATION = re.compile(r"^\s*(\d+)r?\s+([-+0-9.eE]+)\s+([-+0-9.eE]+)\s+([-+0-9.eE]+)\s", re.M)


class _ProgressReporter:
    """Reports optimizer progress while the solve runs.

    Drake calls this object at every objective evaluation. With IPOPT, the
    iteration lines IPOPT writes to its output file are read as they appear, so
    each report is one IPOPT iteration with IPOPT's own objective and primal
    infeasibility (``inf_pr``). With SNOPT, each objective evaluation is
    reported, with the objective and constraint violation computed here.
    """

    def __init__(self, prog, path, settings, progress):
        self.prog, self.path, self.settings, self.progress = prog, path, settings, progress
        self.offset = 0
        self.partial = ""
        self.count = 0
        self.start = _time.perf_counter()

    def __call__(self, x):
        if self.settings.optim_solver == "ipopt":
            self._read_ipopt()
        else:
            obj = float(sum(np.sum(self.prog.EvalBinding(c, x)) for c in self.prog.GetAllCosts()))
            self._emit(Progress(self.count, obj, max_constraint_violation(self.prog, x), self._elapsed()))

    def finish(self, x):
        if self.settings.optim_solver == "ipopt":
            self._read_ipopt()

    def _elapsed(self):
        return _time.perf_counter() - self.start

    def _read_ipopt(self):
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.offset)
                chunk = f.read()
                self.offset = f.tell()
        except OSError:
            return
        text = self.partial + chunk
        lines = text.split("\n")
        self.partial = lines.pop()  # an unfinished last line waits for the next read
        for line in lines:
            m = _IPOPT_ITERATION.match(line)
            if m and int(m.group(1)) == self.count:
                self._emit(Progress(self.count, float(m.group(2)), float(m.group(3)), self._elapsed()))

    def _emit(self, info: "Progress"):
        self.count += 1
        if self.settings.verbose in range(1, 5):
            print(f"iter {info.iteration:4d}  objective {info.objective:.8e}  "
                  f"constraint violation {info.constraint_violation:.2e}  ({info.elapsed:.2f} s)")
        if self.progress is not None:
            self.progress(info)


def _read_and_remove(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def trajectory_from_solution(tr: Transcription, sol: dict) -> Trajectory:
    """Name the arrays of an unpacked solution vector."""
    t = sol["t0"] + tr.grid.tau * (sol["tf"] - sol["t0"])
    states = {n: sol["Y"][:, k] for k, n in enumerate(tr.state_names)}
    controls = {n: sol["X"][:, k] for k, n in enumerate(tr.control_names)}
    derivs = {name: sol["A"][:, k] for k, name in enumerate(tr.derivative_names)}
    # multipliers λ, then (Hermite–Simpson) the velocity corrections γ̃ (zero at mesh points)
    mult = {name: sol["A"][:, tr.nres + k] for k, name in enumerate(tr.multiplier_names + tr.slack_names)}
    # Bordalba: the projection slacks μ (zero where no interval ends)
    mult.update({name: sol["A"][:, tr.a_mu + k] for k, name in enumerate(tr.projection_names)})
    params = {n: float(v) for n, v in zip(tr.param_names, sol["P"])}
    return Trajectory(t, states, controls, mult, derivs, params)
