"""Solve a transcription and package the named :class:`~moco_lab.results.Solution`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..engine.settings import SolverSettings
from ..engine.transcription import Transcription
from ..modeling.units import quantities_for
from ..results.trajectory import Solution, Trajectory
from .guess import guess_from_bounds, guess_from_trajectory, set_guess
from .optimizer import IPOPT_STATUS_EXPLANATIONS, OptimizerRun, Progress, run_optimizer

__all__ = ["solve_transcription", "package_solution", "trajectory_from_solution", "Evaluation", "evaluate_trajectory"]


def solve_transcription(tr: Transcription, progress: Callable[[Progress], None] | None = None) -> Solution:
    """Solve a transcribed problem under the settings it was transcribed with (``tr.settings``: guess, optimizer,
    tolerances) and package the :class:`Solution`."""
    settings = tr.settings
    g = guess_from_trajectory(tr, settings.guess) if settings.guess is not None else guess_from_bounds(tr)
    set_guess(tr, g)
    duals = settings.guess_duals
    if duals is None and isinstance(settings.guess, Solution):
        duals = settings.guess.duals
    run = run_optimizer(tr.prog, settings, progress, exact=tr.exact_callbacks, duals=duals)
    sol = tr.unpack(run.x)
    goal_values = tr.goal_values(sol)
    # a collapsed time grid (or NaN times) is never a solution: a duration within round-off of zero (1e-12 of the
    # times' scale, a picosecond for motions near t = 0) is one, e.g. t_f = 2e-34 s on a swing-up that shrank to nothing
    if not sol["tf"] - sol["t0"] > 1e-12 * max(1.0, abs(sol["t0"]), abs(sol["tf"])):
        reported = run.status
        run.success = False
        run.status = "Degenerate_Time_Grid" if np.isfinite(sol["tf"]) and np.isfinite(sol["t0"]) else run.status
        if run.status == "Degenerate_Time_Grid":
            run.note = (f"the final time {sol['tf']:.6g} s is not after the initial time {sol['t0']:.6g} s: the "
                        f"time grid collapsed (the optimizer reported {reported}); raise the lower bound of the "
                        "final time (set_time_bounds) or give a guess with a longer motion")
    return package_solution(run, settings, trajectory_from_solution(tr, sol), goal_values)


@dataclass
class Evaluation:
    """A trajectory evaluated in a problem (:func:`evaluate_trajectory`, ``Study.evaluate``).

    Attributes
    ----------
    objective : float
        The sum of the weighted goal values.
    goal_values : dict of str -> float
        Each goal's weighted value (0 for goals enforced as constraints).
    constraint_violation : float
        The largest violation of any constraint or bound of the program (defects, goals enforced as constraints,
        path constraints, variable bounds).
    worst_constraint : str
        The description of the constraint violated most ("bounds" for a variable bound).
    """

    objective: float
    goal_values: dict
    constraint_violation: float
    worst_constraint: str


def evaluate_trajectory(tr: Transcription, trajectory: Trajectory) -> Evaluation:
    """The objective, goal values and constraint violations of ``trajectory`` in ``tr``'s problem, without solving.

    The trajectory is put on the program's grid as a guess is (interpolated in normalized time; exact when it is a
    solution on the same grid), and every binding is evaluated there — what a solver's iterate would be judged by,
    with no optimizer moving it (IPOPT, even with no iteration, first pushes the point inside its bounds).
    """
    data = trajectory._data() if isinstance(trajectory, Solution) else trajectory
    missing = [n for n in tr.state_names if n not in data.states] + \
        [n for n in tr.control_names if n not in data.controls]
    if missing:   # a guess fills such gaps from the bounds; a score must not
        have = list(data.states) + list(data.controls)
        raise ValueError(f"evaluate: the trajectory has no values for {len(missing)} of the problem's "
                         f"{len(tr.state_names) + len(tr.control_names)} states and controls ({missing[:4]}"
                         f"{' ...' if len(missing) > 4 else ''}); it has {have[:4]}{' ...' if len(have) > 4 else ''}. "
                         "Is it a trajectory of another problem or model?")
    g = guess_from_trajectory(tr, trajectory)
    set_guess(tr, g)
    x = tr.prog.GetInitialGuess(tr.prog.decision_variables())
    values = tr.goal_values(tr.unpack(x))
    worst, name = 0.0, ""
    for b in tr.prog.GetAllConstraints():
        val = np.atleast_1d(tr.prog.EvalBinding(b, x))
        lo, hi = b.evaluator().lower_bound(), b.evaluator().upper_bound()
        with np.errstate(invalid="ignore"):  # inf - inf at unbounded sides
            gaps = np.nan_to_num(np.concatenate([lo - val, val - hi]), nan=np.inf, neginf=0.0)
        gap = float(np.max(gaps, initial=0.0))
        if gap > worst:
            worst = gap
            name = "bounds" if b in tr.prog.bounding_box_constraints() else (b.evaluator().get_description()
                                                                              or type(b.evaluator()).__name__)
    return Evaluation(float(sum(values.values())), values, worst, name)


def package_solution(run: OptimizerRun, settings: SolverSettings, traj: Trajectory,
                     goal_values: dict[str, float]) -> Solution:
    """A :class:`Solution` from an optimizer run, its named trajectory and goal values."""
    objective = run.cost if np.isfinite(run.cost) else sum(goal_values.values())
    message = (f"{settings.optim_solver}: {run.status} after {run.nit} iterations; objective {objective:.10g}; "
               f"max constraint violation {run.constraint_violation:.2e}")
    if run.optimality.get("dual_infeasibility") is not None:
        message += f"; unscaled dual infeasibility {run.optimality['dual_infeasibility']:.2e}"
    if run.warm_start:
        message += f"; {run.warm_start}"
    explanation = run.note or IPOPT_STATUS_EXPLANATIONS.get(run.status)
    if explanation and run.status != "Solve_Succeeded":
        message += f". {run.status}: {explanation}"
    return Solution(traj, success=run.success, status=run.status, message=message, objective=objective,
                    goal_values=goal_values, nit=run.nit, solve_time=run.solve_time, solver=settings.optim_solver,
                    constraint_violation=run.constraint_violation, optimality=run.optimality, duals=run.duals)


def trajectory_from_solution(tr: Transcription, sol: dict) -> Trajectory:
    """Name the arrays of an unpacked solution vector."""
    lay = tr.layout
    t = sol["t0"] + tr.grid.tau * (sol["tf"] - sol["t0"])
    states = {}
    if tr.prescribed is not None:  # the prescribed kinematics are part of the motion
        for k, c in enumerate(tr.model.coordinates):
            states[c.value_path] = tr.Qp[:, k]
            states[c.speed_path] = tr.Up[:, k]
    states.update({n: sol["Y"][:, k] for k, n in enumerate(tr.state_names)})
    controls = {n: sol["X"][:, k] for k, n in enumerate(tr.control_names)}
    A = sol["A"]
    col = lambda group: A[:, lay.in_algebraic(group)]  # noqa: E731
    derivs = {}
    if tr.prescribed is not None:
        derivs.update({c.accel_path: tr.Ap[:, k] for k, c in enumerate(tr.model.coordinates)})
    derivs.update(dict(zip(tr.accel_names, col(lay.acc).T)))
    derivs.update(dict(zip(tr.implicit_names, col(lay.w).T)))
    # multipliers λ, then (Hermite–Simpson) the velocity corrections γ̃ (zero at mesh points),
    # then (Bordalba) the projection slacks μ (zero where no interval ends)
    mult = dict(zip(tr.multiplier_names, col(lay.lam).T))
    mult.update(zip(tr.slack_names, col(lay.gam).T))
    mult.update(zip(tr.projection_names, col(lay.mu).T))
    params = {n: float(v) for n, v in zip(tr.param_names, sol["P"])}
    names = [*states, *controls, *mult, *derivs]
    return Trajectory(t, states, controls, mult, derivs, params, check_time=bool(sol["tf"] > sol["t0"]),
                      quantities=quantities_for(tr.model, names))
