"""Bone outlines for drawing planar models: polylines fixed in bodies.

A sketch is ``[(body, [(x, y, z), ...]), ...]``: each polyline is fixed in a
body frame (``"ground"`` for the world) and drawn in the model's pose. The
moment-arm models of :mod:`moco_lab.modeling.coupled` have hand-drawn
outlines (chosen by the factory that built the model); any other model gets a
stick figure from its joint tree (:func:`stick_figure`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..modeling.model import Model

__all__ = ["sketch", "stick_figure"]


def stick_figure(model: Model) -> list[tuple[str, list[tuple[float, float, float]]]]:
    """One polyline per body, from its inboard joint centre to each outboard joint centre.

    A body with no outboard joint is drawn from its joint centre to its centre
    of mass (or not at all if they coincide).
    """
    plant = model.plant
    lines: dict[str, list] = {}
    for ji in plant.GetJointIndices():
        joint = plant.get_joint(ji)
        parent = joint.frame_on_parent()
        pbody = parent.body().name()
        pname = "ground" if parent.body().index() == plant.world_body().index() else pbody
        p_loc = tuple(float(v) for v in parent.GetFixedPoseInBodyFrame().translation())
        c_loc = tuple(float(v) for v in joint.frame_on_child().GetFixedPoseInBodyFrame().translation())
        lines.setdefault(joint.child_body().name(), [c_loc])
        lines.setdefault(pname, [] if pname == "ground" else [p_loc])
        lines[pname].append(p_loc)
    out = []
    for body, pts in lines.items():
        if body != "ground" and len(pts) == 1:
            com = tuple(float(v) for v in plant.GetBodyByName(body).default_com())
            if np.linalg.norm(np.subtract(com, pts[0])) > 1e-9:
                pts = pts + [com]
        if len(pts) >= 2:
            out.append((body, pts))
    return out


def _single_pin(kwargs):
    return [("ground", [(0, 0.30, 0), (0, 0, 0)]), ("forearm", [(0, 0, 0), (0, -0.27, 0)])]


def _patella_knee(kwargs):
    return [("ground", [(-0.07, -0.05, 0), (0, 0, 0), (0.035, -0.005, 0)]),
            ("femur", [(0, 0, 0), (0, -0.40, 0)]),
            ("tibia", [(0, 0, 0), (0, -0.43, 0)]),
            ("patella", [(0.052, 0.022, 0.0), (0.050, -0.018, 0.0)])]


def _composite_joint(kwargs):
    n = len(kwargs.get("shares", (0.40, 0.35, 0.25)))
    segment = kwargs.get("segment", 0.08)
    out = [("ground", [(-0.06, 0, 0), (0.07, 0, 0)])]
    out += [(f"seg{k}", [(0, 0, 0), (0, segment, 0)]) for k in range(1, n + 1)]
    out += [(f"seg{n}", [(-0.045, 0.05, 0), (0.06, 0.05, 0)])]
    return out


_HAND_DRAWN = {"single_pin": _single_pin, "patella_knee": _patella_knee, "composite_joint": _composite_joint}


def sketch(model: Model) -> list[tuple[str, list[tuple[float, float, float]]]]:
    """Bone polylines of ``model``: hand-drawn for the moment-arm models, else :func:`stick_figure`."""
    spec = getattr(model, "spec", None) or {}
    draw = _HAND_DRAWN.get(spec.get("factory"))
    return draw(spec.get("kwargs", {})) if draw is not None else stick_figure(model)
