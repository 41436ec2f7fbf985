"""The optimal control problem: model, bounds, goals, path constraints, parameters (Moco's ``MocoProblem``)."""
from .goals import ControlGoal, FinalTimeGoal, Goal, PeriodicityGoal, StateTrackingGoal, UserGoal, goal_from_dict
from .problem import Parameter, PathConstraint, Problem, VariableInfo

__all__ = ["ControlGoal", "FinalTimeGoal", "Goal", "PeriodicityGoal", "StateTrackingGoal", "UserGoal",
           "goal_from_dict", "Parameter", "PathConstraint", "Problem", "VariableInfo"]
