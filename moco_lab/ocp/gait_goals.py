"""Moco's gait goals: ``MocoStepLengthAsymmetryGoal``.

**Step-length asymmetry.** With ``d = s (p_R − p_L)·e_w`` the right foot frame's lead over the left along the walking
direction (``s e_w``: ``walking_direction``, e.g. ``"positive-x"``), ``L`` the stride length and ``α`` the target
asymmetry, the feet are compared with the thresholds ``L_R = ½ (1 + α) L`` and ``L_L = ½ (1 − α) L`` through
Moco's smoothed conditionals, ``½ − ½ tanh(k (L_R − d)) + ½ − ½ tanh(k (L_L + d))`` with ``k = 100 ×
asymmetry_smoothing``, integrated over the motion; the goal is 100 times the integral. Moco's formula, term for term
(including its name for what it counts); first and second derivatives are exact.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext, NodeData

__all__ = ["StepLengthAsymmetryGoal"]

_DIRECTIONS = {"positive-x": (0, 1.0), "positive-y": (1, 1.0), "positive-z": (2, 1.0), "negative-x": (0, -1.0),
               "negative-y": (1, -1.0), "negative-z": (2, -1.0)}


class StepLengthAsymmetryGoal(Goal):
    """Moco's ``MocoStepLengthAsymmetryGoal`` (module docstring); a cost.

    Parameters
    ----------
    left_foot_frame, right_foot_frame : str
        The feet's frames (body paths, e.g. ``/bodyset/calcn_l``); their origins are compared.
    walking_direction : str
        ``"positive-x"`` (default), ``"negative-x"``, ... ``"negative-z"``.
    asymmetry_smoothing : float
        ``> 0``; the conditionals' sharpness is 100 times it (default 5).
    target_asymmetry : float
        In [-1, 1] (default 0: symmetric).
    stride_length : float
        ``> 0`` (m); Moco's default −1 is refused, as Moco refuses it.
    """

    default_name = "step_length_asymmetry"
    supports_endpoint_constraint = False

    def __init__(self, name: str | None = None, weight: float = 1.0, left_foot_frame: str = "",
                 right_foot_frame: str = "", walking_direction: str = "positive-x", asymmetry_smoothing: float = 5.0,
                 target_asymmetry: float = 0.0, stride_length: float = -1.0, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"StepLengthAsymmetryGoal {self.name!r}"
        for key, frame in (("left_foot_frame", left_foot_frame), ("right_foot_frame", right_foot_frame)):
            if not isinstance(frame, str) or not frame:
                raise ValueError(f"{owner}: {key} must name a frame (a body path such as '/bodyset/calcn_r')")
        if walking_direction not in _DIRECTIONS:
            raise ValueError(f"{owner}: walking_direction must be one of {list(_DIRECTIONS)}, got "
                             f"{walking_direction!r}")
        if not np.isfinite(asymmetry_smoothing) or asymmetry_smoothing <= 0:
            raise ValueError(f"{owner}: asymmetry_smoothing must be > 0, got {asymmetry_smoothing!r}")
        if not np.isfinite(target_asymmetry) or not -1.0 <= target_asymmetry <= 1.0:
            raise ValueError(f"{owner}: target_asymmetry must be in [-1, 1], got {target_asymmetry!r}")
        if not np.isfinite(stride_length) or stride_length <= 0:
            raise ValueError(f"{owner}: stride_length must be > 0 (m), got {stride_length!r}")
        self.left_foot_frame, self.right_foot_frame = left_foot_frame, right_foot_frame
        self.walking_direction = walking_direction
        self.asymmetry_smoothing = float(asymmetry_smoothing)
        self.target_asymmetry = float(target_asymmetry)
        self.stride_length = float(stride_length)

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"StepLengthAsymmetryGoal {self.name!r}"
        outputs = []
        for frame in (self.right_foot_frame, self.left_foot_frame):
            try:
                outputs.append(ctx.point_output(f"{self.name}{frame}", frame, (0.0, 0.0, 0.0))[0])
            except KeyError as err:
                raise KeyError(f"{owner}: could not find frame {frame!r} ({err.args[0]})") from None
        right, left = outputs
        index, sign = _DIRECTIONS[self.walking_direction]
        k = 100.0 * self.asymmetry_smoothing
        threshold_r = 0.5 * (1 + self.target_asymmetry) * self.stride_length
        threshold_l = 0.5 * (1 - self.target_asymmetry) * self.stride_length

        def terms(d: NodeData):
            lead = sign * (d.outputs[right][:, index] - d.outputs[left][:, index])
            x1, x2 = k * (threshold_r - lead), k * (threshold_l + lead)
            return np.tanh(x1), np.tanh(x2)

        def integrand(d: NodeData, jac: bool):
            t1, t2 = terms(d)
            s = (0.5 - 0.5 * t1) + (0.5 - 0.5 * t2)
            if not jac:
                return s, {}
            ds = 0.5 * k * (1 - t1 * t1) - 0.5 * k * (1 - t2 * t2)  # ∂s/∂lead
            g_r = np.zeros_like(np.asarray(d.outputs[right], float))
            g_r[:, index] = sign * ds
            return s, {"outputs": {right: g_r, left: -g_r}}

        def hessian(d: NodeData):
            t1, t2 = terms(d)
            h = k * k * ((1 - t1 * t1) * t1 + (1 - t2 * t2) * t2)  # ∂²s/∂lead²
            return [(("out", right, index), ("out", right, index), h), (("out", left, index), ("out", left, index), h),
                    (("out", right, index), ("out", left, index), -h)]

        def endpoint(E: EndpointData, jac: bool):
            value = np.array([100.0 * E.integral])
            return (value, {"integral": np.array([100.0])}) if jac else (value, {})

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=(right, left), endpoint=endpoint,
                           endpoint_generic=lambda E: [100.0 * E.integral], columns={})

    def to_dict(self) -> dict:
        return {**super().to_dict(), "left_foot_frame": self.left_foot_frame, "right_foot_frame": self.right_foot_frame,
                "walking_direction": self.walking_direction, "asymmetry_smoothing": self.asymmetry_smoothing,
                "target_asymmetry": self.target_asymmetry, "stride_length": self.stride_length}


GOAL_TYPES["StepLengthAsymmetryGoal"] = StepLengthAsymmetryGoal
