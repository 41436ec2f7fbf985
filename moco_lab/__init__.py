"""moco_lab: musculoskeletal optimal control by direct collocation, on Drake.

A teaching and exploration kit that reproduces what OpenSim Moco does with
pydrake: models are ``MultibodyPlant`` s, problems are transcribed into a
``MathematicalProgram`` and solved with IPOPT (default) or SNOPT.

>>> import moco_lab as ml
>>> study = ml.Study()
>>> problem = study.problem
>>> problem.set_model(ml.models.sliding_mass(mass=2.0))
>>> problem.set_time_bounds(0, (0, 5))
"""
import os as _os

# Drake's IPOPT/SPRAL runs its dense kernels on an OpenBLAS built into
# libdrake, which starts one thread per core when Drake is first imported. On
# collocation problems of this size the threads only contend: with one thread
# the double pendulum (Hermite-Simpson, N=50) solved 6x faster on 2 cores.
# Set before pydrake loads; export OPENBLAS_NUM_THREADS yourself to override.
if "OPENBLAS_NUM_THREADS" not in _os.environ and "GOTO_NUM_THREADS" not in _os.environ:
    _os.environ["OPENBLAS_NUM_THREADS"] = "1"

from . import analysis, config, examples, models  # noqa: E402
from . import constraints, coupled_models  # noqa: E402  (moco_lab.moment_arms is imported on demand: it loads ipywidgets)
from .bounds import Bounds
from .constraints import (CoordinateCouplerConstraint, FixedDistanceConstraint, HolonomicConstraint,
                          KinematicConstraint, PointOnCurveConstraint)
from .goals import ControlGoal, FinalTimeGoal, NamedValues, PeriodicityGoal, StateTrackingGoal, UserGoal
from .model import Coordinate, CoordinateActuator, Model, ModelBuilder, SpringGeneralizedForce
from .plotting import plot_trajectories
from .problem import Parameter, PathConstraint, Problem
from .solver import Progress, SolverSettings
from .simulate import simulate, simulate_solution
from .study import Study
from .trajectory import Solution, Trajectory

__version__ = "0.1.0"

__all__ = [
    "analysis", "config", "examples", "models", "constraints", "coupled_models", "Bounds", "ControlGoal", "FinalTimeGoal", "NamedValues", "PeriodicityGoal", "StateTrackingGoal",
    "UserGoal", "Coordinate", "CoordinateActuator", "Model", "ModelBuilder", "SpringGeneralizedForce",
    "KinematicConstraint", "HolonomicConstraint", "CoordinateCouplerConstraint", "PointOnCurveConstraint",
    "FixedDistanceConstraint",
    "Parameter", "PathConstraint", "Problem", "Progress", "SolverSettings", "Study", "Solution", "Trajectory", "simulate", "simulate_solution", "plot_trajectories",
]
