"""Joints Drake does not have: OpenSim's ``CustomJoint`` whose rotations and translations are functions of one coordinate.

A :class:`CustomTransform` is the spatial transform of such a joint: up to
three rotations, applied in order about axes fixed in the rotating frame
(body-fixed, ``R_FM = R(a₁, f₁(q)) R(a₂, f₂(q)) R(a₃, f₃(q))``), then a
translation ``p_FM = Σ tₖ gₖ(q)`` along axes of the parent's joint frame F —
OpenSim's ``SpatialTransform`` on Simbody's function-based mobilizer. The
functions are :mod:`moco_lab.modeling.functions` (``SimmSpline`` with OpenSim's
linear extrapolation, ``LinearFunction``, ``Constant``, ``MultiplierFunction``).

Representation. Drake has no joint whose translations are spline functions of
a rotation (the knee of OpenSim's lower-limb models), so the plant holds a
``RevoluteJoint`` as the *carrier* of the coordinate (its name, its position and
velocity index, rotating about the first rotation axis by ``q``), and the
:class:`~moco_lab.modeling.model.Model` keeps the exact transform. moco_lab's
engine derives the equations of motion from the exact transform
(:class:`~moco_lab.engine.multibody.SymbolicMultibody`), and the model's numeric
tools (poses, drawings) evaluate it too; Drake's own numeric functions on the
plant (``CalcMassMatrix``, ``EvalBodyPoseInWorld``) see only the carrier, so
moco_lab refuses them for such models instead of answering with the carrier's
kinematics.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydrake.math import RotationMatrix

from .functions import OpenSimFunction

__all__ = ["CustomTransform", "rotation_about", "body_fixed_xyz_rotation"]


def _unit(axis, what: str) -> np.ndarray:
    a = np.asarray(axis, float).reshape(3)
    n = float(np.linalg.norm(a))
    if n == 0.0:
        raise ValueError(f"{what}: the axis is zero")
    return a / n


def rotation_about(axis: Sequence[float], c: Any, s: Any) -> list:
    """Rodrigues' rotation (3×3 nested list) about the unit ``axis`` (numbers) by the angle whose cosine is ``c`` and
    sine ``s`` (numbers or expressions)."""
    x, y, z = (float(v) for v in axis)
    C = 1.0 - c
    return [[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C]]


def body_fixed_xyz_rotation(angles: Sequence[float]) -> RotationMatrix:
    """OpenSim's orientation of a frame or wrap object: a body-fixed X–Y–Z sequence, ``R = Rx(a) Ry(b) Rz(c)``."""
    a, b, c = (float(v) for v in angles)
    return RotationMatrix.MakeXRotation(a) @ RotationMatrix.MakeYRotation(b) @ RotationMatrix.MakeZRotation(c)


@dataclass
class CustomTransform:
    """The transform ``X_FM(q)`` of a one-coordinate ``CustomJoint``.

    Parameters
    ----------
    rotations : list of (axis (3,), function)
        At most three; applied in order, each about its axis in the frame rotated
        by the ones before (body-fixed sequence). Angles in rad.
    translations : list of (axis (3,), function)
        At most three; ``p_FM = Σ axis · function(q)`` in the parent's joint frame F (m).
    velocity_products : {"simbody", "exact"}
        How the angular acceleration's velocity-product term is formed when the coordinate drives several
        rotations. ``"exact"``: the time derivative of ``ω = Σ wᵢ fᵢ'(q) u`` (``wᵢ`` the i-th axis in F, turned by
        the rotations before it), ``ω̇ = Σ wᵢ (fᵢ' u̇ + fᵢ'' u²) + Σᵢ (Σ_{j<i} wⱼ fⱼ' u) × wᵢ fᵢ' u``.
        ``"simbody"`` (what OpenSim 4.6 computes, Simbody's ``MobilizedBody::FunctionBased`` ``buildHdot`` for one
        mobility): the second and third axes turn with the *whole* angular velocity ω, so the term gains
        ``(w₃ f₃' u) × w₂ f₂' u`` — non-zero only when the second and third rotations both move (the walker knee of
        the full-body models: 2.5e-4 of its generalized forces at 1 rad/s). Both are the same when at most two
        rotations move.
    """

    rotations: list = field(default_factory=list)
    translations: list = field(default_factory=list)
    velocity_products: str = "exact"

    def __post_init__(self):
        if self.velocity_products not in ("simbody", "exact"):
            raise ValueError(f"velocity_products must be 'simbody' or 'exact', got {self.velocity_products!r}")
        if len(self.rotations) > 3 or len(self.translations) > 3:
            raise ValueError("a CustomTransform has at most three rotations and three translations")
        for kind in ("rotations", "translations"):
            axes = []
            for k, (axis, fn) in enumerate(getattr(self, kind)):
                if not isinstance(fn, OpenSimFunction):
                    raise TypeError(f"{kind}[{k}]: expected a moco_lab.modeling.functions function, got "
                                    f"{type(fn).__name__}")
                axes.append((_unit(axis, f"{kind}[{k}]"), fn))
            setattr(self, kind, axes)

    # ------------------------------------------------------------ numbers
    def carrier_axis(self) -> np.ndarray:
        """Axis of the plant's carrier ``RevoluteJoint``: the first rotation axis that moves, else x."""
        for axis, fn in self.rotations:
            if not fn.is_constant():
                return axis
        return np.array([1.0, 0.0, 0.0])

    def pose(self, q: float) -> tuple[np.ndarray, np.ndarray]:
        """``R_FM`` (3, 3) and ``p_FM`` (3,) at the coordinate value ``q``."""
        R = np.eye(3)
        for axis, fn in self.rotations:
            angle = float(fn(float(q)))
            S = rotation_about(axis, np.cos(angle), np.sin(angle))  # written out, not BLAS: the same bits everywhere
            R = np.array([[sum(R[i][k] * S[k][j] for k in range(3)) for j in range(3)] for i in range(3)])
        p = np.zeros(3)
        for axis, fn in self.translations:
            p = p + axis * float(fn(float(q)))
        return R, p

    # ------------------------------------------------------------ equations
    def kinematics(self, q: Any, u: Any, a: Any | None, xp: Any = np) -> tuple:
        """Rotation, translation, and their rates as expressions (or numbers), all in F.

        Returns
        -------
        R_FM : 3×3 nested list
        p_FM, w_FM, v_FM, dw_FM, dv_FM : lists of 3
            Angular velocity and origin velocity of M in F, and their time
            derivatives (zero lists when ``a`` is None).
        H_w, H_v : lists of 3
            Partial angular and linear velocities (``w_FM = H_w u``, ``v_FM = H_v u``),
            used to project forces onto the coordinate.
        """
        zero = [0.0, 0.0, 0.0]
        R = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        moving = []  # (index, axis in F, f', f'') of the rotations that move
        for k, (axis, fn) in enumerate(self.rotations):
            theta = fn(q, xp)
            a_F = [R[i][0] * axis[0] + R[i][1] * axis[1] + R[i][2] * axis[2] for i in range(3)]
            if not fn.is_constant():
                moving.append((k, a_F, fn.derivative(q, xp), fn.second_derivative(q, xp)))
            if isinstance(theta, float) and theta == 0.0:
                continue
            Rk = rotation_about(axis, xp.cos(theta), xp.sin(theta))
            R = [[R[i][0] * Rk[0][j] + R[i][1] * Rk[1][j] + R[i][2] * Rk[2][j] for j in range(3)] for i in range(3)]
        H_w = [sum(a_F[i] * d1 for _, a_F, d1, _ in moving) for i in range(3)] if moving else list(zero)
        omega = [h * u for h in H_w]
        bias_w, before = list(zero), list(zero)  # before: Σ over the moving axes so far of w_j f_j'
        for k, a_F, d1, d2 in moving:
            if self.velocity_products == "exact":  # a_F turns with the rotations before it
                turn = [b * u for b in before]
            else:  # Simbody: the axes after the first turn with the whole ω
                turn = omega if k > 0 else list(zero)
            cross = [turn[1] * a_F[2] - turn[2] * a_F[1], turn[2] * a_F[0] - turn[0] * a_F[2],
                     turn[0] * a_F[1] - turn[1] * a_F[0]]
            bias_w = [bias_w[i] + cross[i] * d1 * u + a_F[i] * d2 * u * u for i in range(3)]
            before = [before[i] + a_F[i] * d1 for i in range(3)]
        p, H_v, bias_v = list(zero), list(zero), list(zero)
        for axis, fn in self.translations:
            value = fn(q, xp)
            p = [p[i] + float(axis[i]) * value for i in range(3)]
            if not fn.is_constant():
                d1, d2 = fn.derivative(q, xp), fn.second_derivative(q, xp)
                H_v = [H_v[i] + float(axis[i]) * d1 for i in range(3)]
                bias_v = [bias_v[i] + float(axis[i]) * d2 * u * u for i in range(3)]
        w = [h * u for h in H_w]
        v = [h * u for h in H_v]
        if a is None:
            dw, dv = list(zero), list(zero)
        else:
            dw = [H_w[i] * a + bias_w[i] for i in range(3)]
            dv = [H_v[i] * a + bias_v[i] for i in range(3)]
        return R, p, w, v, dw, dv, H_w, H_v

    def description(self) -> dict:
        """What determines the transform (axes and functions), as plain data."""
        return {"rotations": [[axis.tolist(), fn.description()] for axis, fn in self.rotations],
                "translations": [[axis.tolist(), fn.description()] for axis, fn in self.translations],
                "velocity_products": self.velocity_products}

