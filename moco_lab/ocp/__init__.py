"""The optimal control problem: model, bounds, goals, path constraints, parameters (Moco's ``MocoProblem``)."""
from .bound_constraints import ControlBoundConstraint, StateBoundConstraint
from .goals import ControlGoal, FinalTimeGoal, Goal, PeriodicityGoal, StateTrackingGoal, UserGoal, goal_from_dict
from .output_goals import OutputExtremumGoal, OutputGoal, OutputTrackingGoal
from .problem import Parameter, PathConstraint, Problem, VariableInfo

__all__ = ["ControlBoundConstraint", "StateBoundConstraint", "OutputGoal", "OutputTrackingGoal", "OutputExtremumGoal",
           "ControlGoal", "FinalTimeGoal", "Goal", "PeriodicityGoal",
           "StateTrackingGoal", "UserGoal", "goal_from_dict", "Parameter", "PathConstraint", "Problem", "VariableInfo"]
