"""The optimizer run: IPOPT (default) or SNOPT on a Drake ``MathematicalProgram``, with progress and statuses."""
from __future__ import annotations

import dataclasses
import logging
import os
import re
import tempfile
import time as _time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
from pydrake.solvers import CommonSolverOption, IpoptSolver, SnoptSolver, SolverOptions

if TYPE_CHECKING:
    from pydrake.solvers import MathematicalProgram

    from ..engine.settings import SolverSettings
    from ..results.duals import Duals

__all__ = ["IPOPT_STATUS", "IPOPT_SUCCESS", "IPOPT_EXIT_MESSAGES", "IPOPT_STATUS_EXPLANATIONS", "IPOPT_DEFAULTS",
           "WARNING_STATUSES", "status_level",
           "LARGE_PROBLEM_VARIABLES", "ipopt_defaults", "Progress", "OptimizerRun", "run_optimizer", "max_constraint_violation",
           "mumps_algorithm_options"]

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

#: IPOPT's final "EXIT:" line -> status name. Read when IPOPT stops before reporting a status to Drake
#: (Drake's code 17, "unassigned": e.g. too few degrees of freedom, inconsistent bounds), so every outcome
#: has IPOPT's own name (the names of IPOPT 3.14's ``ApplicationReturnStatus``).
IPOPT_EXIT_MESSAGES = {
    "Optimal Solution Found": "Solve_Succeeded",
    "Solved To Acceptable Level": "Solved_To_Acceptable_Level",
    "Converged to a point of local infeasibility": "Infeasible_Problem_Detected",
    "Search Direction is becoming Too Small": "Search_Direction_Becomes_Too_Small",
    "Iterates diverging": "Diverging_Iterates",
    "Stopping optimization at current point as requested by user": "User_Requested_Stop",
    "Feasible point for square problem found": "Feasible_Point_Found",
    "Maximum Number of Iterations Exceeded": "Maximum_Iterations_Exceeded",
    "Restoration Failed": "Restoration_Failed",
    "Error in step computation": "Error_In_Step_Computation",
    "Maximum CPU time exceeded": "Maximum_CpuTime_Exceeded",
    "Maximum wallclock time exceeded": "Maximum_WallTime_Exceeded",
    "Problem has too few degrees of freedom": "Not_Enough_Degrees_Of_Freedom",
    "Problem has inconsistent variable bounds or constraint sides": "Invalid_Problem_Definition",
    "Invalid option encountered": "Invalid_Option",
    "Invalid number in NLP function or derivative detected": "Invalid_Number_Detected",
    "Some uncaught Ipopt exception encountered": "Unrecoverable_Exception",
    "Unknown Exception caught in Ipopt": "NonIpopt_Exception_Thrown",
    "Not enough memory": "Insufficient_Memory",
    "INTERNAL ERROR": "Internal_Error",
}

#: Statuses that are neither a clean convergence nor a failure: the iterate may be close to a solution.
WARNING_STATUSES = ("Solved_To_Acceptable_Level", "Maximum_Iterations_Exceeded", "Maximum_CpuTime_Exceeded",
                    "Maximum_WallTime_Exceeded", "User_Requested_Stop")


def status_level(status: str, success: bool) -> str:
    """``"converged"``, ``"warning"`` (acceptable level, iteration or time limit) or ``"failed"``.

    Dashboards colour a solve's status by it (green, amber, red).
    """
    if status in WARNING_STATUSES:
        return "warning"
    return "converged" if success else "failed"


#: What each unsuccessful IPOPT status means, in one line (shown in solution messages and dashboards).
IPOPT_STATUS_EXPLANATIONS = {
    "Solved_To_Acceptable_Level": "converged only to IPOPT's looser 'acceptable' tolerances (acceptable_tol), "
                                  "not to tol: usable, but check it",
    "Maximum_Iterations_Exceeded": "stopped at the iteration limit before converging: the last iterate is not "
                                   "a solution (allow more iterations, or start from a better guess)",
    "Degenerate_Time_Grid": "the final time collapsed onto the initial time",
    "Infeasible_Problem_Detected": "the constraints (bounds, dynamics, goals as constraints) cannot all hold",
    "Not_Enough_Degrees_Of_Freedom": "more equality constraints than variables: the problem is over-constrained "
                                     "(e.g. fixed values that the dynamics also determine)",
    "Invalid_Number_Detected": "a constraint or cost evaluated to NaN or infinity (check bounds and guesses)",
    "Invalid_Problem_Definition": "inconsistent bounds or constraint sides",
    "Restoration_Failed": "IPOPT could not find a way back to feasibility",
    "Search_Direction_Becomes_Too_Small": "steps became too small to make progress",
    "Diverging_Iterates": "the iterates grew without bound: the problem may be unbounded",
    "Error_In_Step_Computation": "the linear system of a step could not be solved",
}
#: IPOPT statuses counted as success (Moco also accepts the acceptable level).
IPOPT_SUCCESS = (0, 5)

#: moco_lab's IPOPT options (override any through ``SolverSettings.optim_solver_options``). Drake's IPOPT
#: factorizes with SPRAL; its default scaling made small collocation problems several times slower with the
#: same iterates.
IPOPT_DEFAULTS = {"spral_scaling": "none"}

#: From this many decision variables on, IPOPT also gets ``spral_nemin`` 1. SPRAL's default node
#: amalgamation (``spral_nemin`` 32) merges the small, sparse fronts of a collocation KKT system into dense
#: ones: at gait scale (9 coordinates, 16 muscles, 4 contacts, N = 50, about 10,000 variables) ``spral_nemin``
#: 1 factorizes 3x faster (``benchmarks/engine_scale.py``). Below this size the factorization is not where
#: the time goes, and the default's pivot order keeps the iterates of the verification problems unchanged
#: (with ``spral_nemin`` 1 the trapezoidal bead-on-a-parabola stalls at IPOPT's acceptable level).
LARGE_PROBLEM_VARIABLES = 2000


#: MUMPS' fill-reducing ordering (``mumps_pivot_order``) with exact Hessians: 4 asks for PORD, which the casadi wheel's
#: MUMPS does not have: it says "PORD not available. Ordering set to default" and makes its automatic choice (METIS
#: for the 2-D walker's KKT systems, AMF for the squat's). With MUMPS' column permutation on (IPOPT's default) that
#: fallback differs from asking for the automatic choice (7), which then orders a compressed graph by AMF: the 2-D
#: walking tracking's factorizations 209 against 66 ms per iteration (benchmarks/mumps_ordering.md, where "PORD" is
#: this fallback; 625 against 332 million operations per factorization by MUMPS' estimate, 2026-11-30). Without the
#: column permutation (:data:`MUMPS_PERMUTING_SCALING_EXACT`) 4 and 7 give the same ordering (checked on the squat
#: and the 2-D walking tracking, 2026-11-30); 4 stays so that a column permutation set through
#: ``optim_solver_options`` keeps the sparser ordering. The limited-memory systems keep IPOPT's default.
MUMPS_PIVOT_ORDER_EXACT = 4

#: MUMPS' workspace with exact Hessians (``mumps_mem_percent``: per cent above its own estimate; IPOPT's default
#: 1000). MUMPS allocates it at every factorization, and exact-Hessian iterations factorize often (the inertia
#: correction); at 1000 % the block is too large for the heap to reuse and each factorization pays the system for
#: fresh zeroed pages. At 100 % it is reused (IPOPT doubles it if a factorization needs more). Measured with the
#: exact Hessian (same iterations and objectives): the 2-D walking tracking 7.3 -> 6.6 s, the squat 3.6 -> 3.2 s,
#: the 3-D inverse 1.58 -> 1.48 s in IPOPT. The limited-memory solves keep IPOPT's default: the 3-D inverse's
#: back-solves were three times slower with it.
MUMPS_MEM_PERCENT_EXACT = 100

#: IPOPT's barrier-parameter update with exact Hessians: the adaptive one (``mu_strategy``), which IPOPT already
#: uses by default with its limited-memory Hessian, so that the two approximations differ in the Hessian only.
#: IPOPT's default with exact second derivatives, the monotone update, stopped at loose tolerances on the high side
#: of the flat valleys these problems have (benchmarks/hessian.md: the 2-D walking tracking 1.5459 against the
#: limited-memory 1.5304, its prediction 0.1465 against 0.1350, the double pendulum 2469.5 against 2462.6); the
#: adaptive update stops where the limited-memory runs do, or lower.
MU_STRATEGY_EXACT = "adaptive"

#: MUMPS' column permutation and scaling with exact Hessians (``mumps_permuting_scaling``, its ICNTL(6); IPOPT's
#: default 7, MUMPS' automatic choice): none. With PORD's ordering it gave sparser factors of the exact-Hessian KKT
#: systems here — the 3-D inverse's linear algebra 0.75 -> 0.62 s (same 14 iterations, objective to 1e-15), the
#: 2-D walking tracking 4.5 -> 4.3 s (same 43 iterations), the squat unchanged (same 57 iterations); measured for
#: every case in benchmarks/hessian.md. Kept after every case was solved both ways on another computer's three BLAS
#: kernels (docs/verification.md, "MUMPS' column permutation"): without it gait2d's exact runs reach their low minima
#: (tracking 1.2595, prediction 0.2466, below the limited-memory runs') on every kernel, with it 29.97 and 0.354; the
#: permutation's gains elsewhere are a third of the squat's factorization time and a few iterations.
MUMPS_PERMUTING_SCALING_EXACT = 0

#: IPOPT's bound on the constraint violation its filter accepts, with exact Hessians (``theta_max_fact``: the bound
#: is this times the violation at the start, at least 1; IPOPT's default 1e4). Newton's steps from a warm start can
#: be long: with IPOPT's default the 2-D walking prediction from the tracking solution wandered for a hundred
#: iterations through points whose largest constraint violation reached 70 (0.17 at its start) before it
#: converged. With 100 it stays nearer the constraints: 70-92 iterations instead of 78-142 (two starts, three BLAS
#: kernels, the same optimum); every other benchmark case, the 3-D inverses included, took the same iterations to the
#: same objectives (the bound never bit). 10 was tighter than these problems allow (gait2d's prediction 414 -> 627
#: iterations).
THETA_MAX_FACT_EXACT = 100.0


def ipopt_defaults(num_variables: int) -> dict:
    """moco_lab's IPOPT options for a program with ``num_variables`` decision variables."""
    extra = dict(IPOPT_DEFAULTS)
    if num_variables >= LARGE_PROBLEM_VARIABLES:
        extra["spral_nemin"] = 1
    return extra


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


def max_constraint_violation(prog: MathematicalProgram, x: np.ndarray) -> float:
    """Largest violation of any constraint (including bounds) at ``x``; NaN if any constraint is NaN there."""
    if np.any(np.isnan(x)):
        return float("nan")
    worst = 0.0
    for b in prog.GetAllConstraints():
        val = np.atleast_1d(prog.EvalBinding(b, x))
        if np.any(np.isnan(val)):
            return float("nan")
        lo, hi = b.evaluator().lower_bound(), b.evaluator().upper_bound()
        with np.errstate(invalid="ignore"):  # inf - inf at unbounded sides
            gaps = np.concatenate([lo - val, val - hi])
        gaps = gaps[~np.isnan(gaps)]
        worst = max(worst, float(np.max(gaps, initial=0.0)))
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
    #: IPOPT's final optimality measures, unscaled (its own problem units): ``"dual_infeasibility"``,
    #: ``"constraint_violation"``, ``"complementarity"``, ``"nlp_error"``; empty if IPOPT did not report them.
    optimality: dict = field(default_factory=dict)
    #: Why a solve that the optimizer called successful was not (set by the caller), for the message.
    note: str = ""
    #: IPOPT's multipliers at the end (IPOPT + MUMPS only), for a later warm start.
    duals: Duals | None = None
    #: With ``settings.optim_warm_start``: how the run started (for the message), e.g. ``"warm start: the guess's
    #: multipliers"``; empty without that setting.
    warm_start: str = ""


def run_optimizer(prog: MathematicalProgram, settings: SolverSettings, progress: Callable[[Progress],
                  None] | None = None, exact: dict | None = None, duals: Duals | None = None) -> OptimizerRun:
    """Solve ``prog`` (initial guess already set) with the optimizer and options of ``settings``.

    Reports each IPOPT iteration (or SNOPT objective evaluation) to
    ``progress`` while the solve runs, and reads the exact iteration count
    from the optimizer's own output. ``exact`` (``id(evaluator) -> (fun, evaluator)``,
    e.g. ``Transcription.exact_callbacks``) lets IPOPT with MUMPS call moco_lab's
    exact Jacobians directly (``settings.optim_linear_solver == "mumps"``). ``duals``: with
    ``settings.optim_warm_start``, IPOPT + MUMPS starts from these multipliers if they fit the program
    (:data:`moco_lab.solve.ipopt_mumps.WARM_START_OPTIONS`); ``OptimizerRun.warm_start`` says what happened.

    With the environment variable ``MOCO_LAB_SOLVE_LOG`` naming a file, every run appends one JSON line to it
    (status, iterations, objective, program size, the settings that shape the solve, and within a sweep the
    task's hash and its change as text — the change is the same on every machine, while the order tasks finish
    in is not, and neither is the hash of a task whose guess is an earlier solution): what
    ``benchmarks/robustness.py`` collects from the lessons, dashboards and tests under several BLAS kernels.
    """
    staged = (settings.optim_hessian_approximation == "exact" and 0 < settings.optim_limited_memory_start
              < (3000 if settings.optim_max_iterations is None else settings.optim_max_iterations))
    mumps = settings.optim_solver == "ipopt" and settings.optim_linear_solver == "mumps"
    if staged:
        run = _run_staged(prog, settings, progress, exact)
    elif mumps:
        run = _run_ipopt_mumps(prog, settings, progress, exact, duals=duals if settings.optim_warm_start else None)
    else:
        run = _run_drake(prog, settings, progress)
    if settings.optim_warm_start and not run.warm_start:
        run.warm_start = ("optim_warm_start ignored: " + (
            "the first stage (optim_limited_memory_start) is Drake's IPOPT" if staged else
            "there is no guess (solver.guess) to start from" if mumps and settings.guess is None
            and settings.guess_duals is None else
            "the guess has no IPOPT + MUMPS multipliers (Solution.duals)" if mumps else
            "only IPOPT + MUMPS (optim_linear_solver='mumps') starts from multipliers"))
    log = os.environ.get("MOCO_LAB_SOLVE_LOG")
    if log:
        _log_run(log, prog, settings, run)
    return run


def _log_run(path: str, prog: MathematicalProgram, settings: SolverSettings, run: OptimizerRun) -> None:
    """Append one JSON line describing ``run`` to ``path`` (see :func:`run_optimizer`)."""
    import json

    record = {"test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
              "label": os.environ.get("MOCO_LAB_SOLVE_LABEL", ""), "task": os.environ.get("MOCO_LAB_SOLVE_TASK", ""),
              "change": os.environ.get("MOCO_LAB_SOLVE_CHANGE", ""), "pid": os.getpid(),
              "cwd": os.path.basename(os.getcwd()), "status": run.status, "success": bool(run.success),
              "nit": int(run.nit), "objective": float(run.cost), "num_vars": int(prog.num_vars()),
              "solver": settings.optim_solver, "linear_solver": settings.optim_linear_solver,
              "hessian": settings.optim_hessian_approximation, "N": int(settings.num_mesh_intervals),
              "scheme": settings.transcription_scheme, "tol": settings.optim_convergence_tolerance,
              "kernel": os.environ.get("OPENBLAS_CORETYPE", ""), "warm_start": run.warm_start}
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def _run_drake(prog: MathematicalProgram, settings: SolverSettings, progress) -> OptimizerRun:
    """:func:`run_optimizer` with Drake's IPOPT (SPRAL) or SNOPT."""
    options = SolverOptions()
    solver = IpoptSolver() if settings.optim_solver == "ipopt" else SnoptSolver()
    sid = solver.solver_id()
    # the optimizer's own statistics (exact iteration count, live progress) go to a scratch file
    stats_file = tempfile.NamedTemporaryFile(prefix=f"moco_lab_{settings.optim_solver}_", suffix=".txt",
                                             delete=False)
    stats_file.close()
    for name, value in _setting_options(settings).items():
        options.SetOption(sid, name, value)
    if settings.optim_solver == "ipopt":
        options.SetOption(sid, "print_level", 5 if settings.verbose >= 5 else 0)
        options.SetOption(sid, "output_file", stats_file.name)
        options.SetOption(sid, "file_print_level", 3)
        if settings.verbose >= 6:
            options.SetOption(sid, "print_timing_statistics", "yes")
        extra = {**ipopt_defaults(prog.num_vars()), **_options_for(settings.optim_solver_options, "spral")}
    else:
        options.SetOption(CommonSolverOption.kPrintFileName, stats_file.name)
        # IPOPT's linear-solver options (a factory's, e.g. the squat's MUMPS scaling) mean nothing to SNOPT
        extra = _options_for(settings.optim_solver_options, None)
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
    optimality = {}
    if settings.optim_solver == "ipopt":
        code = int(details.status)
        status = IPOPT_STATUS.get(code)
        exit_line = re.search(r"^EXIT: (.*)$", stats, re.M)
        if status is None:  # IPOPT stopped before reporting a status to Drake: its EXIT line says why
            text = exit_line.group(1) if exit_line else ""
            status = next((name for key, name in IPOPT_EXIT_MESSAGES.items() if text.startswith(key)),
                          f"IPOPT_Return_Code_{code}" + (f" ({text})" if text else ""))
        success = code in IPOPT_SUCCESS
        # an IPOPT that aborts before its first iteration (too few degrees of freedom) made 0 iterations
        nit, optimality = _read_ipopt_statistics(stats)
        nit = 0 if nit is None else nit
    else:
        code = int(details.info)
        status = f"SNOPT_INFO_{code}"
        success = bool(result.is_success())
        found = re.search(r"No\. of major iterations\s+(\d+)", stats)
        nit = int(found.group(1)) if found else -1
    x = result.get_x_val()
    return OptimizerRun(x=x, success=success, status=status, nit=nit, solve_time=solve_time,
                        cost=float(result.get_optimal_cost()), constraint_violation=max_constraint_violation(prog, x),
                        optimality=optimality)


def _setting_options(settings: SolverSettings) -> dict:
    """The tolerances and iteration limit of ``settings`` under the optimizer's own option names (unset ones left out)."""
    names = _OPTION_NAMES[settings.optim_solver]
    out = {}
    for attr, convert in (("optim_convergence_tolerance", float), ("optim_constraint_tolerance", float),
                          ("optim_max_iterations", int)):
        value = getattr(settings, attr)
        if value is not None:
            out[names[attr]] = convert(value)
    return out


def _options_for(options: dict, linear_solver: str | None) -> dict:
    """``options`` without those of the other linear solver (``spral_*`` with MUMPS, ``mumps_*`` with SPRAL), or
    without either's (``linear_solver`` None: an optimizer that is not IPOPT)."""
    other = ("mumps_", "spral_") if linear_solver is None else "mumps_" if linear_solver == "spral" else "spral_"
    return {k: v for k, v in options.items() if not k.startswith(other)}


def _read_ipopt_statistics(stats: str) -> tuple[int | None, dict]:
    """IPOPT's iteration count and final optimality measures from its output file (None, {} if absent)."""
    found = re.search(r"Number of Iterations\.*:\s*(\d+)", stats)
    optimality = {}
    for key, label in (("dual_infeasibility", "Dual infeasibility"), ("constraint_violation",
                       "Constraint violation"), ("complementarity", "Complementarity"),
                       ("nlp_error", "Overall NLP error")):
        m = re.search(re.escape(label) + r"\.*:\s*\S+\s+(\S+)", stats)
        if m:
            optimality[key] = float(m.group(1))
    return (int(found.group(1)) if found else None), optimality


def mumps_algorithm_options(settings: SolverSettings) -> dict:
    """The IPOPT options that shape a solve with IPOPT + MUMPS under ``settings`` (tolerances, iteration limit, the
    Hessian approximation, the exact Hessian's MUMPS ordering and workspace, its barrier update and filter bound,
    ``optim_solver_options``); output options aside."""
    options = _setting_options(settings)
    options["hessian_approximation"] = settings.optim_hessian_approximation
    if settings.optim_hessian_approximation == "exact":
        options["mumps_pivot_order"] = MUMPS_PIVOT_ORDER_EXACT
        options["mumps_mem_percent"] = MUMPS_MEM_PERCENT_EXACT
        options["mu_strategy"] = MU_STRATEGY_EXACT
        options["mumps_permuting_scaling"] = MUMPS_PERMUTING_SCALING_EXACT
        options["theta_max_fact"] = THETA_MAX_FACT_EXACT
    options.update(_options_for(settings.optim_solver_options, "mumps"))
    return options


def _run_ipopt_mumps(prog: MathematicalProgram, settings: SolverSettings, progress, exact,
                     after: OptimizerRun | None = None, duals: Duals | None = None) -> OptimizerRun:
    """:func:`run_optimizer` with IPOPT + MUMPS (:mod:`moco_lab.solve.ipopt_mumps`); ``after``: an earlier stage
    this one continues (its iterations and time come first in the reports, its last point is this one's first);
    ``duals``: multipliers to start from (a warm start)."""
    from .ipopt_mumps import solve_with_mumps

    stats_file = tempfile.NamedTemporaryFile(prefix="moco_lab_ipopt_mumps_", suffix=".txt", delete=False)
    stats_file.close()
    options = {"sb": "yes", "print_level": 5 if settings.verbose >= 5 else 0, "output_file": stats_file.name,
               "file_print_level": 3}
    if settings.verbose >= 6:
        options["print_timing_statistics"] = "yes"
    options.update(mumps_algorithm_options(settings))
    x0 = np.nan_to_num(np.asarray(prog.GetInitialGuess(prog.decision_variables()), float), nan=0.0)
    start = _time.perf_counter()

    done, spent = (after.nit, after.solve_time) if after is not None else (0, 0.0)

    def iteration(k, objective, inf_pr):
        if k > 0 or after is None:  # a continued run's iteration 0 is the last one reported already
            _report(Progress(done + k, objective, inf_pr, spent + _time.perf_counter() - start), settings, progress)

    try:
        result = solve_with_mumps(prog, x0, options, exact, iteration, duals=duals)
    finally:
        stats = _read_and_remove(stats_file.name)
    solve_time = _time.perf_counter() - start
    nit, optimality = _read_ipopt_statistics(stats)
    warm = {None: "", True: "warm start: the guess's multipliers",
            False: "optim_warm_start ignored: the guess's multipliers belong to a program of another structure "
                   "(another mesh, model or set of constraints)"}[result.warm_started]
    return OptimizerRun(x=result.x, success=result.success, status=result.status,
                        nit=result.nit if nit is None else nit, solve_time=solve_time, cost=result.cost,
                        constraint_violation=result.constraint_violation, optimality=optimality,
                        duals=result.duals, warm_start=warm)


def _run_staged(prog: MathematicalProgram, settings: SolverSettings, progress, exact) -> OptimizerRun:
    """``settings.optim_limited_memory_start`` iterations of Drake's IPOPT with the limited-memory Hessian, then
    IPOPT + MUMPS with the exact Hessian from where they stopped (:func:`run_optimizer`)."""
    first = dataclasses.replace(settings, optim_linear_solver="spral", optim_hessian_approximation="limited-memory",
                                optim_max_iterations=settings.optim_limited_memory_start, guess=None)
    drake_log = logging.getLogger("drake")
    level = drake_log.level
    drake_log.setLevel(logging.ERROR)  # stopping at its iteration limit is this stage's plan, not a warning
    try:
        run = _run_drake(prog, first, progress)
    finally:
        drake_log.setLevel(level)
    if run.success or run.status != "Maximum_Iterations_Exceeded":
        return run   # converged already (that is the solution), or failed: reported as it is
    limit = 3000 if settings.optim_max_iterations is None else settings.optim_max_iterations
    second = dataclasses.replace(settings, optim_max_iterations=limit - run.nit, guess=None)
    prog.SetInitialGuess(prog.decision_variables(), run.x)
    rest = _run_ipopt_mumps(prog, second, progress, exact, after=run)
    rest.nit += run.nit
    rest.solve_time += run.solve_time
    return rest


_IPOPT_ITERATION = re.compile(r"^\s*(\d+)r?\s+([-+0-9.eE]+)\s+([-+0-9.eE]+)\s+([-+0-9.eE]+)\s", re.M)


class _ProgressReporter:
    """Reports optimizer progress while the solve runs.

    Drake calls this object at every objective evaluation. With IPOPT, the
    iteration lines IPOPT writes to its output file are read as they appear, so
    each report is one IPOPT iteration with IPOPT's own objective and primal
    infeasibility (``inf_pr``). With SNOPT, each objective evaluation is
    reported, with the objective and constraint violation computed here.
    """

    def __init__(self, prog: MathematicalProgram, path: str | os.PathLike, settings: SolverSettings, progress):
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
        _report(info, self.settings, self.progress)


def _report(info: Progress, settings: SolverSettings, progress) -> None:
    """Print ``info`` (verbose 1-4) and pass it to the ``progress`` callback, if any."""
    if settings.verbose in range(1, 5):
        print(f"iter {info.iteration:4d}  objective {info.objective:.8e}  "
              f"constraint violation {info.constraint_violation:.2e}  ({info.elapsed:.2f} s)")
    if progress is not None:
        progress(info)


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


