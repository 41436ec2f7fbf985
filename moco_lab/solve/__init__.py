"""Solving: guesses, the optimizer run and the named solution (the settings are the engine's:
:class:`moco_lab.engine.settings.SolverSettings`)."""
from .guess import guess_from_bounds, guess_from_trajectory
from .optimizer import IPOPT_STATUS, OptimizerRun, Progress, max_constraint_violation, run_optimizer
from .solution import package_solution, solve_transcription, trajectory_from_solution

__all__ = ["guess_from_bounds", "guess_from_trajectory", "IPOPT_STATUS", "OptimizerRun", "Progress",
           "max_constraint_violation", "run_optimizer", "package_solution", "solve_transcription",
           "trajectory_from_solution"]
