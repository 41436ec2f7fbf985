"""The optimal control problem: model, bounds, goals, path constraints, parameters (Moco's ``MocoProblem``)."""
from .bound_constraints import ControlBoundConstraint, StateBoundConstraint
from .force_goals import GeneralizedForceTrackingGoal
from .frame_goals import (
    AccelerationTrackingGoal,
    AngularVelocityTrackingGoal,
    MarkerFinalGoal,
    OrientationTrackingGoal,
    TranslationTrackingGoal,
)
from .gait_goals import StepLengthAsymmetryGoal, StepTimeAsymmetryGoal, StepTimeAsymmetryGroup
from .goals import ControlGoal, FinalTimeGoal, Goal, PeriodicityGoal, StateTrackingGoal, UserGoal, goal_from_dict
from .muscle_goals import InitialForceEquilibriumDGFGoal, InitialVelocityEquilibriumDGFGoal
from .output_constraints import FrameDistanceConstraint, FrameDistancePair, OutputBoundConstraint, OutputConstraint
from .output_goals import (
    FinalOutputGoal,
    InitialOutputGoal,
    OutputExtremumGoal,
    OutputGoal,
    OutputPeriodicityGoal,
    OutputTrackingGoal,
)
from .parameter_goals import ExpressionBasedParameterGoal
from .problem import Parameter, PathConstraint, Problem, VariableInfo

__all__ = ["ControlBoundConstraint", "StateBoundConstraint", "OutputGoal", "OutputTrackingGoal", "OutputExtremumGoal",
           "InitialOutputGoal", "FinalOutputGoal", "OutputPeriodicityGoal", "OutputConstraint", "OutputBoundConstraint",
           "FrameDistanceConstraint", "FrameDistancePair", "TranslationTrackingGoal", "AngularVelocityTrackingGoal",
           "AccelerationTrackingGoal", "OrientationTrackingGoal", "GeneralizedForceTrackingGoal",
           "InitialForceEquilibriumDGFGoal", "InitialVelocityEquilibriumDGFGoal", "StepLengthAsymmetryGoal",
           "StepTimeAsymmetryGoal", "StepTimeAsymmetryGroup",
           "ExpressionBasedParameterGoal", "MarkerFinalGoal",
           "ControlGoal", "FinalTimeGoal", "Goal", "PeriodicityGoal",
           "StateTrackingGoal", "UserGoal", "goal_from_dict", "Parameter", "PathConstraint", "Problem", "VariableInfo"]
