"""Moco's gait goals: ``MocoStepLengthAsymmetryGoal`` and ``MocoStepTimeAsymmetryGoal``.

**Step-length asymmetry.** With ``d = s (p_R − p_L)·e_w`` the right foot frame's lead over the left along the walking
direction (``s e_w``: ``walking_direction``, e.g. ``"positive-x"``), ``L`` the stride length and ``α`` the target
asymmetry, the feet are compared with the thresholds ``L_R = ½ (1 + α) L`` and ``L_L = ½ (1 − α) L`` through
Moco's smoothed conditionals, ``½ − ½ tanh(k (L_R − d)) + ½ − ½ tanh(k (L_L + d))`` with ``k = 100 ×
asymmetry_smoothing``, integrated over the motion; the goal is 100 times the integral. Moco's formula, term for term
(including its name for what it counts); first and second derivatives are exact.

**Step-time asymmetry.** Each foot is a group of contact elements; its vertical force (``contact_force_direction``)
``F`` is detected as contact by ``c = ½ + ½ tanh(κ (F − F_thr))`` (``κ = contact_detection_smoothing``; Moco
counts the right foot negatively, ``c_R = −½ − ½ tanh(...)``), the foot ahead is ``f = tanh(100 (x_R − x_L))`` from
the positions of the bodies the groups' ``foot_position_contact_force_path`` spheres are on, and the integrand is
``tanh(κ_a (c_L + c_R + 2 c_L c_R f))`` (``κ_a = asymmetry_smoothing``); the asymmetry is its mean over the motion
and the goal ``100 (asymmetry − target)²``. Moco's formula, term for term.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..util.names import did_you_mean
from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext, NodeData, element_path

__all__ = ["StepLengthAsymmetryGoal", "StepTimeAsymmetryGoal", "StepTimeAsymmetryGroup"]

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


@dataclass
class StepTimeAsymmetryGroup:
    """One foot's contact elements for :class:`StepTimeAsymmetryGoal` (Moco's ``MocoStepTimeAsymmetryGoalGroup``).

    Attributes
    ----------
    contact_force_paths : list of str
        Contact elements (``SmoothSphereHalfSpaceForce`` paths or names).
    foot_position_contact_force_path : str
        One of them: the body its sphere is on gives the foot's position.
    """

    contact_force_paths: list
    foot_position_contact_force_path: str


def _group(value: Any, key: str, owner: str) -> StepTimeAsymmetryGroup:
    if isinstance(value, StepTimeAsymmetryGroup):
        group = value
    elif isinstance(value, dict):
        group = StepTimeAsymmetryGroup(list(value.get("contact_force_paths", ())),
                                       str(value.get("foot_position_contact_force_path", "")))
    elif isinstance(value, (tuple, list)) and len(value) == 2 and not isinstance(value[0], str):
        group = StepTimeAsymmetryGroup(list(value[0]), str(value[1]))
    else:
        raise TypeError(f"{owner}: {key} must be a StepTimeAsymmetryGroup or (contact_force_paths, "
                        f"foot_position_contact_force_path), got {value!r}")
    if not group.contact_force_paths:
        raise ValueError(f"{owner}: expected 'contact_force_paths' to be provided for the {key}, but none were found")
    if group.foot_position_contact_force_path not in group.contact_force_paths:
        raise ValueError(f"{owner}: expected the {key}'s 'foot_position_contact_force_path' to match one of its "
                         f"'contact_force_paths', but {group.foot_position_contact_force_path!r} was not found")
    return StepTimeAsymmetryGroup(list(group.contact_force_paths), group.foot_position_contact_force_path)


class StepTimeAsymmetryGoal(Goal):
    """Moco's ``MocoStepTimeAsymmetryGoal`` (module docstring); a cost.

    Parameters
    ----------
    left_contact_group, right_contact_group : StepTimeAsymmetryGroup or (paths, foot position path)
        Each foot's contact elements and the one whose body gives the foot's position.
    target_asymmetry : float
        In [-1, 1] (default 0).
    contact_force_threshold : float
        N, ``> 0`` (default 25).
    contact_force_direction, walking_direction : str
        ``"positive-y"`` and ``"positive-x"`` by default; ``"negative-z"`` etc.
    contact_detection_smoothing, asymmetry_smoothing : float
        ``> 0`` (defaults 0.25 and 10).
    """

    default_name = "step_time_asymmetry"
    supports_endpoint_constraint = False

    def __init__(self, name: str | None = None, weight: float = 1.0, left_contact_group: Any = None,
                 right_contact_group: Any = None, target_asymmetry: float = 0.0, contact_force_threshold: float = 25.0,
                 contact_force_direction: str = "positive-y", walking_direction: str = "positive-x",
                 contact_detection_smoothing: float = 0.25, asymmetry_smoothing: float = 10.0, enabled: bool = True,
                 **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"StepTimeAsymmetryGoal {self.name!r}"
        self.left_contact_group = _group(left_contact_group, "left contact group", owner)
        self.right_contact_group = _group(right_contact_group, "right contact group", owner)
        shared = set(self.left_contact_group.contact_force_paths) & set(self.right_contact_group.contact_force_paths)
        if shared:
            raise ValueError(f"{owner}: the contact element {sorted(shared)[0]!r} is in both feet's groups")
        for key, direction in (("contact_force_direction", contact_force_direction),
                               ("walking_direction", walking_direction)):
            if direction not in _DIRECTIONS:
                raise ValueError(f"{owner}: {key} must be one of {list(_DIRECTIONS)}, got {direction!r}")
        for key, value in (("contact_force_threshold", contact_force_threshold),
                           ("contact_detection_smoothing", contact_detection_smoothing),
                           ("asymmetry_smoothing", asymmetry_smoothing)):
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"{owner}: {key} must be > 0, got {value!r}")
        if not np.isfinite(target_asymmetry) or not -1.0 <= target_asymmetry <= 1.0:
            raise ValueError(f"{owner}: target_asymmetry must be in [-1, 1], got {target_asymmetry!r}")
        self.target_asymmetry = float(target_asymmetry)
        self.contact_force_threshold = float(contact_force_threshold)
        self.contact_force_direction, self.walking_direction = contact_force_direction, walking_direction
        self.contact_detection_smoothing = float(contact_detection_smoothing)
        self.asymmetry_smoothing = float(asymmetry_smoothing)

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"StepTimeAsymmetryGoal {self.name!r}"
        model = ctx.model
        elements = {e.path: e for e in model.force_elements}
        sides = []
        for key, group in (("left", self.left_contact_group), ("right", self.right_contact_group)):
            forces = []
            foot = None
            for path in group.contact_force_paths:
                full = element_path(path, list(elements))
                element = elements.get(full)
                if element is None or not hasattr(element, "sphere_body"):
                    raise KeyError(f"{owner}: {key} contact group: " + did_you_mean(
                        path, [p for p, e in elements.items() if hasattr(e, "sphere_body")],
                        "SmoothSphereHalfSpaceForce"))
                forces.append(ctx.output(f"{full}/force"))
                if path == group.foot_position_contact_force_path:
                    foot = ctx.point_output(f"{self.name}/{key}_foot", element.sphere_body, (0.0, 0.0, 0.0))[0]
            sides.append((forces, foot))
        (left_forces, left_foot), (right_forces, right_foot) = sides
        fi, fs = _DIRECTIONS[self.contact_force_direction]
        wi, ws = _DIRECTIONS[self.walking_direction]
        kc, ka, threshold = self.contact_detection_smoothing, self.asymmetry_smoothing, self.contact_force_threshold

        def parts(d: NodeData):
            """z and its first and second derivatives with respect to (F_L, F_R, D), D the right foot's lead."""
            FL = fs * sum(d.outputs[n][:, fi] for n in left_forces)
            FR = fs * sum(d.outputs[n][:, fi] for n in right_forces)
            D = ws * (d.outputs[right_foot][:, wi] - d.outputs[left_foot][:, wi])
            tl, tr, td = np.tanh(kc * (FL - threshold)), np.tanh(kc * (FR - threshold)), np.tanh(100.0 * D)
            cl, cr, f = 0.5 + 0.5 * tl, -(0.5 + 0.5 * tr), td
            cl1, cr1, f1 = 0.5 * kc * (1 - tl * tl), -0.5 * kc * (1 - tr * tr), 100.0 * (1 - td * td)
            cl2, cr2, f2 = -kc * kc * (1 - tl * tl) * tl, kc * kc * (1 - tr * tr) * tr, -2e4 * (1 - td * td) * td
            z = cl + cr + 2 * cl * cr * f
            grad = [cl1 * (1 + 2 * cr * f), cr1 * (1 + 2 * cl * f), 2 * cl * cr * f1]
            hess = {(0, 0): cl2 * (1 + 2 * cr * f), (1, 1): cr2 * (1 + 2 * cl * f), (2, 2): 2 * cl * cr * f2,
                    (0, 1): 2 * cl1 * cr1 * f, (0, 2): 2 * cl1 * cr * f1, (1, 2): 2 * cl * cr1 * f1}
            return z, grad, hess

        # each variable (F_L, F_R, D) as the output components it is made of, with their coefficients
        variables = [[(n, fi, fs) for n in left_forces], [(n, fi, fs) for n in right_forces],
                     [(right_foot, wi, ws), (left_foot, wi, -ws)]]
        outputs = tuple(dict.fromkeys([*left_forces, *right_forces, left_foot, right_foot]))

        def integrand(d: NodeData, jac: bool):
            z, grad, _ = parts(d)
            t = np.tanh(ka * z)
            if not jac:
                return t, {}
            sz = ka * (1 - t * t)
            douts = {n: np.zeros_like(np.asarray(d.outputs[n], float)) for n in outputs}
            for v, comps in enumerate(variables):
                for n, i, c in comps:
                    douts[n][:, i] += c * sz * grad[v]
            return t, {"outputs": douts}

        def hessian(d: NodeData):
            z, grad, hz = parts(d)
            t = np.tanh(ka * z)
            sz, szz = ka * (1 - t * t), -2 * ka * ka * (1 - t * t) * t

            def h_s(a: int, b: int) -> np.ndarray:
                """∂²s/∂v_a∂v_b for the variables (F_L, F_R, D)."""
                return szz * grad[a] * grad[b] + sz * hz[(min(a, b), max(a, b))]

            comps = [(n, i, v, c) for v, members in enumerate(variables) for n, i, c in members]
            return [(("out", n1, i1), ("out", n2, i2), h_s(v1, v2) * c1 * c2)
                    for p_, (n1, i1, v1, c1) in enumerate(comps) for (n2, i2, v2, c2) in comps[p_:]]

        target = self.target_asymmetry

        def endpoint(E: EndpointData, jac: bool):
            T = E.tf - E.t0
            e = E.integral / T - target
            value = np.array([100.0 * e * e])
            if not jac:
                return value, {}
            g = 200.0 * e
            return value, {"integral": np.array([g / T]), "t0": np.array([g * E.integral / T ** 2]),
                           "tf": np.array([-g * E.integral / T ** 2])}

        def endpoint_generic(E: EndpointData):
            e = E.integral / (E.tf - E.t0) - target
            return [100.0 * e * e]

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=outputs, endpoint=endpoint,
                           endpoint_generic=endpoint_generic, columns={})

    def to_dict(self) -> dict:
        return {**super().to_dict(),
                "left_contact_group": [list(self.left_contact_group.contact_force_paths),
                                       self.left_contact_group.foot_position_contact_force_path],
                "right_contact_group": [list(self.right_contact_group.contact_force_paths),
                                        self.right_contact_group.foot_position_contact_force_path],
                "target_asymmetry": self.target_asymmetry, "contact_force_threshold": self.contact_force_threshold,
                "contact_force_direction": self.contact_force_direction, "walking_direction": self.walking_direction,
                "contact_detection_smoothing": self.contact_detection_smoothing,
                "asymmetry_smoothing": self.asymmetry_smoothing}


GOAL_TYPES["StepLengthAsymmetryGoal"] = StepLengthAsymmetryGoal
GOAL_TYPES["StepTimeAsymmetryGoal"] = StepTimeAsymmetryGoal
