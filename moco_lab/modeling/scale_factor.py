"""Moco's ``MocoScaleFactor``: a model component that holds one number a goal multiplies its reference by.

A goal's scale factor (e.g. :meth:`moco_lab.ocp.goals.ContactTrackingGoal.add_scale_factor`) is optimized as a
parameter, as in Moco: the problem gives the model a :class:`ScaleFactor` at ``/<name>`` and a parameter ``<name>``
on its property ``scale_factor`` (:meth:`moco_lab.ocp.problem.Problem.validate` does both, once). The component
applies no force and has no states; the dynamics do not depend on it, only the goal that reads it.
"""
from __future__ import annotations

import dataclasses

from .force_element import ForceContext, ForceContribution, ForceElement

__all__ = ["ScaleFactor"]


@dataclasses.dataclass
class ScaleFactor(ForceElement):
    """One optimizable number owned by a goal (Moco's ``MocoScaleFactor``; property ``scale_factor``, default 1)."""

    path: str = "/scale_factor"
    scale_factor: float = 1.0

    def properties(self) -> dict[str, float]:
        return {"scale_factor": float(self.scale_factor)}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        return ForceContribution()
