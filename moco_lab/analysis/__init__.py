"""Analysis (``ml.analysis``): closed forms and error measures of the verification problems, moment arms,
constraint checks, model outputs along trajectories, quantities of the built-in problems."""
from ..tools.analyze import OutputTable, analyze, joint_reactions, output_names
from . import moment_arms, problems
from .constraints import constraint_violations
from .verification import *  # noqa: F403 - the closed forms and error measures are ml.analysis.*
from .verification import __all__ as _verification_all

__all__ = ["moment_arms", "problems", "constraint_violations", "analyze", "joint_reactions", "output_names",  # noqa: PLE0604
           "OutputTable", *_verification_all]
