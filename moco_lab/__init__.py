"""moco_lab: musculoskeletal optimal control by direct collocation, on Drake.

A teaching and exploration kit that reproduces what OpenSim Moco does with
pydrake: models are ``MultibodyPlant`` s, problems are transcribed into a
``MathematicalProgram`` and solved with IPOPT (default) or SNOPT.

>>> import moco_lab as ml
>>> study = ml.Study()
>>> problem = study.problem
>>> problem.set_model(ml.models.sliding_mass(mass=2.0))
>>> problem.set_time_bounds(0, (0, 5))

The package is layered (see ``ARCHITECTURE.md``): :mod:`.util`,
:mod:`.results`, :mod:`.modeling`, :mod:`.ocp`, :mod:`.engine`, :mod:`.solve`,
:mod:`.tools`, :mod:`.examples`, :mod:`.analysis`, :mod:`.viz`, :mod:`.ui`.
This module re-exports the public API.
"""
import os as _os

# Drake's IPOPT/SPRAL runs its dense kernels on an OpenBLAS built into
# libdrake, which starts one thread per core when Drake is first imported. On
# collocation problems of this size the threads only contend: with one thread
# the double pendulum (Hermite-Simpson, N=50) solved 6x faster on 2 cores.
# Set before pydrake loads; export OPENBLAS_NUM_THREADS yourself to override.
if "OPENBLAS_NUM_THREADS" not in _os.environ and "GOTO_NUM_THREADS" not in _os.environ:
    _os.environ["OPENBLAS_NUM_THREADS"] = "1"

from . import analysis, examples
from .engine.settings import SolverSettings
from .modeling import constraints, muscle, operators
from .modeling import coupled as coupled_models
from .modeling import library as models
from .modeling.constraints import (
    CoordinateCouplerConstraint,
    FixedDistanceConstraint,
    HolonomicConstraint,
    KinematicConstraint,
    PointOnCurveConstraint,
)
from .modeling.contact import Gait2dContactPoint, SmoothSphereHalfSpaceForce
from .modeling.forces import (
    CoordinateActuator,
    ExpressionCoordinateForce,
    ForceElement,
    PathMuscle,
    PointToPointSpringDamper,
    SpringGeneralizedForce,
)
from .modeling.metabolics import Bhargava2004SmoothedMuscleMetabolics, MetabolicsMuscleParameters
from .modeling.model import Coordinate, Model, ModelBuilder
from .modeling.osim import OsimFormatError, read_osim
from .modeling.passive import PassiveJointMoment
from .ocp.bound_constraints import ControlBoundConstraint, StateBoundConstraint
from .ocp.force_goals import GeneralizedForceTrackingGoal
from .ocp.frame_goals import (
    AccelerationTrackingGoal,
    AngularVelocityTrackingGoal,
    MarkerFinalGoal,
    OrientationTrackingGoal,
    TranslationTrackingGoal,
)
from .ocp.gait_goals import StepLengthAsymmetryGoal, StepTimeAsymmetryGoal, StepTimeAsymmetryGroup
from .ocp.goals import (
    AverageSpeedGoal,
    ContactGroup,
    ContactImpulseTrackingGoal,
    ContactTrackingGoal,
    ControlGoal,
    ControlTrackingGoal,
    FinalTimeGoal,
    InitialActivationGoal,
    JointReactionGoal,
    MarkerTrackingGoal,
    PeriodicityGoal,
    StateTrackingGoal,
    SumSquaredStateGoal,
    UserGoal,
)
from .ocp.muscle_goals import InitialForceEquilibriumDGFGoal, InitialVelocityEquilibriumDGFGoal
from .ocp.output_constraints import FrameDistanceConstraint, FrameDistancePair, OutputBoundConstraint, OutputConstraint
from .ocp.output_goals import (
    FinalOutputGoal,
    InitialOutputGoal,
    OutputExtremumGoal,
    OutputGoal,
    OutputPeriodicityGoal,
    OutputTrackingGoal,
)
from .ocp.parameter_goals import ExpressionBasedParameterGoal
from .ocp.problem import Parameter, PathConstraint, Problem
from .results.periodic import create_periodic_trajectory
from .results.trajectory import Solution, Trajectory, read_trajectory
from .solve.optimizer import Progress
from .tools.analyze import analyze
from .tools.inverse import Inverse, add_reserves, add_residuals
from .tools.simulate import simulate, simulate_solution
from .tools.study import Study
from .tools.sweep import SweepResult, grid, load_sweep, local_workers, sweep
from .tools.track import Track
from .util import config
from .util.bounds import Bounds
from .util.names import NamedValues
from .util.version import __version__  # noqa: F401  (ml.__version__)
from .viz.plotting import plot_outputs, plot_trajectories

__all__ = [
    "analysis", "config", "examples", "models", "muscle", "constraints", "operators", "coupled_models", "Bounds", "ControlGoal",
    "FinalTimeGoal", "NamedValues", "PeriodicityGoal", "StateTrackingGoal", "ControlTrackingGoal", "UserGoal", "Coordinate",
    "CoordinateActuator", "Model", "ModelBuilder", "SpringGeneralizedForce", "KinematicConstraint",
    "HolonomicConstraint", "CoordinateCouplerConstraint", "PointOnCurveConstraint", "FixedDistanceConstraint",
    "Parameter", "PathConstraint", "ControlBoundConstraint", "StateBoundConstraint", "OutputGoal", "OutputTrackingGoal",
    "OutputExtremumGoal", "InitialOutputGoal", "FinalOutputGoal", "OutputPeriodicityGoal", "OutputConstraint",
    "OutputBoundConstraint", "FrameDistanceConstraint", "FrameDistancePair", "TranslationTrackingGoal",
    "AngularVelocityTrackingGoal", "AccelerationTrackingGoal", "OrientationTrackingGoal", "ExpressionBasedParameterGoal",
    "MarkerFinalGoal", "GeneralizedForceTrackingGoal", "InitialForceEquilibriumDGFGoal", "InitialVelocityEquilibriumDGFGoal",
    "Problem", "Progress", "SolverSettings", "Study", "Solution", "Trajectory",
    "simulate", "simulate_solution", "analyze", "Inverse", "add_reserves", "add_residuals", "Track", "plot_trajectories",
    "plot_outputs",
    "AverageSpeedGoal", "ContactGroup",
    "ContactTrackingGoal", "ContactImpulseTrackingGoal", "StepLengthAsymmetryGoal", "StepTimeAsymmetryGoal",
    "StepTimeAsymmetryGroup",
    "InitialActivationGoal", "JointReactionGoal", "MarkerTrackingGoal", "SumSquaredStateGoal", "Gait2dContactPoint",
    "SmoothSphereHalfSpaceForce", "ExpressionCoordinateForce", "ForceElement", "PathMuscle",
    "Bhargava2004SmoothedMuscleMetabolics", "MetabolicsMuscleParameters",
    "PointToPointSpringDamper", "PassiveJointMoment", "read_osim", "OsimFormatError", "sweep", "grid", "SweepResult",
    "load_sweep", "local_workers", "create_periodic_trajectory", "read_trajectory",
]
