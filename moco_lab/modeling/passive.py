"""Passive joint moments: gait2d's range-of-motion limits (gait2d reference manual §2.5, Appendix A)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .force_element import GENERALIZED_FORCE, ForceContext, ForceContribution, ForceElement

if TYPE_CHECKING:
    from .muscle import ArrayOrExpr

__all__ = ["PassiveJointMoment", "soft_plus"]


def soft_plus(x: ArrayOrExpr, x0: float | ArrayOrExpr, xp: Any) -> ArrayOrExpr:
    """gait2d's smooth ``max(x, 0)``: ``f⁺(x; x0) = ½ (x + √(x² + x0²))`` (manual, Appendix A, Eq. 19)."""
    return 0.5 * (x + xp.sqrt(x * x + x0 * x0))


@dataclass(repr=False)
class PassiveJointMoment(ForceElement):
    """A joint's passive range-of-motion moment (gait2d manual Eq. 1).

    ``M = −k [f⁺(φ − φ_max; φ0) − f⁺(φ_min − φ; φ0)] − B φ̇`` on the coordinate
    ``φ``: a stiff linear spring outside ``[φ_min, φ_max]``, smoothed over about
    ``φ0``, plus a little damping.

    Parameters
    ----------
    path : str
    coordinate : str
    min_angle, max_angle : float
        Range of motion (rad).
    stiffness : float
        ``k`` (N·m/rad); manual: 5000.
    transition : float
        ``φ0`` (rad); manual: 2° = 0.0349 rad.
    damping : float
        ``B`` (N·m·s/rad); manual: 0.1.
    """

    path: str
    coordinate: str
    min_angle: float
    max_angle: float
    stiffness: float = 5000.0
    transition: float = math.radians(2.0)
    damping: float = 0.1

    _PROPERTIES = ("min_angle", "max_angle", "stiffness", "transition", "damping")

    def __post_init__(self):
        for name in self._PROPERTIES:
            setattr(self, name, float(getattr(self, name)))
        if not self.min_angle < self.max_angle:
            raise ValueError(f"{self.path}: min_angle {self.min_angle} must be below max_angle {self.max_angle}")
        if not self.transition > 0:
            raise ValueError(f"{self.path}: transition must be > 0, got {self.transition}")

    def properties(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self._PROPERTIES}

    def coordinate_names(self) -> list[str]:
        return [self.coordinate]

    def output_units(self) -> dict[str, str]:
        return {"moment": GENERALIZED_FORCE}

    def moment(self, phi: ArrayOrExpr, rate: ArrayOrExpr, xp: Any = np, p: dict | None = None) -> ArrayOrExpr:
        """Eq. 1 at angle ``phi`` (rad) and angular velocity ``rate`` (rad/s): numbers, arrays or expressions.

        ``p`` overrides properties by name (the engine passes parameters being optimized).
        """
        p = self.properties() | (p or {})
        upper = soft_plus(phi - p["max_angle"], p["transition"], xp)
        lower = soft_plus(p["min_angle"] - phi, p["transition"], xp)
        return -p["stiffness"] * (upper - lower) - p["damping"] * rate

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        i = ctx.coordinate_index(self.coordinate)
        moment = self.moment(ctx.q[i], ctx.u[i], ctx.xp, {k: ctx.value(self, k) for k in self._PROPERTIES})
        out = ForceContribution()
        out.add_generalized(i, moment)
        out.outputs["moment"] = moment
        return out
