"""The optimal control problem: model, bounds, goals, path constraints, parameters (Moco's ``MocoProblem``)."""
from .bound_constraints import ControlBoundConstraint, StateBoundConstraint
from .goals import ControlGoal, FinalTimeGoal, Goal, PeriodicityGoal, StateTrackingGoal, UserGoal, goal_from_dict
from .problem import Parameter, PathConstraint, Problem, VariableInfo

__all__ = ["ControlBoundConstraint", "StateBoundConstraint", "ControlGoal", "FinalTimeGoal", "Goal", "PeriodicityGoal",
           "StateTrackingGoal", "UserGoal", "goal_from_dict", "Parameter", "PathConstraint", "Problem", "VariableInfo"]
