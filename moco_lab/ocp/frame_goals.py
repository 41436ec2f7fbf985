"""Goals on frames and points of the model: Moco's ``MocoTranslationTrackingGoal``,
``MocoAngularVelocityTrackingGoal``, ``MocoAccelerationTrackingGoal``, ``MocoOrientationTrackingGoal`` and
``MocoMarkerFinalGoal``.

:class:`TranslationTrackingGoal` tracks the origins of frames (bodies by their OpenSim path, e.g.
``/bodyset/calcn_r``) in ground: ``∫ Σ_f w_f ‖p_f(q) − r_f(t)‖² dt``. The reference positions ``r_f`` come from a
translation table or, as Moco does with a ``states_reference``, from a states table: the model's frames are placed at
each row's coordinates and their positions become the table. Either table is splined as Moco's ``GCVSplineSet``
splines it (natural quintic interpolating splines). :class:`AngularVelocityTrackingGoal` does the same with the
frames' angular velocities in ground (from the coordinates and speeds of a states table),
:class:`AccelerationTrackingGoal` with the accelerations of their origins (an accelerometer's reading), and
:class:`OrientationTrackingGoal` with the angle between each frame's orientation and the reference's, squared.
:class:`MarkerFinalGoal` brings a marker to a place at the end:
``‖p(t_f) − r‖²``. First and second derivatives are exact.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..symbolic.batched import matmul
from ..util.names import did_you_mean
from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext, NodeData, TableSplines, read_reference

__all__ = ["TranslationTrackingGoal", "AngularVelocityTrackingGoal", "AccelerationTrackingGoal", "OrientationTrackingGoal",
           "MarkerFinalGoal",
           "rotation_to_quaternion"]

_AXES = ("x", "y", "z")


def _vector_columns(reference: Any, quantity: str) -> Any:
    """A ``(time, {frame: (n, 3)})`` reference as Moco's flattened columns ``<frame>/<quantity>_x, _y, _z``; other
    forms pass unchanged."""
    if isinstance(reference, tuple) and len(reference) == 2 and isinstance(reference[1], dict):
        time, cols = reference
        flat = {}
        for name, values in cols.items():
            v = np.asarray(values, float)
            if v.ndim == 2 and v.shape[1] == 3:
                flat.update({f"{name}/{quantity}_{c}": v[:, j] for j, c in enumerate(_AXES)})
            else:
                flat[name] = v
        return time, flat
    return reference


class _FrameVectorTrackingGoal(Goal):
    """``∫ Σ_f w_f ‖v_f(q, u) − r_f(t)‖² dt`` of a vector of frames in ground (their origins' positions, their angular
    velocities): the shared body of Moco's frame-tracking goals. Subclasses name the quantity (``quantity``: the
    reference's column suffix, Moco's), the constructor's keywords and the output they track."""

    quantity = ""
    states_allowed = True
    reference_key = ""
    weights_key = ""
    moco_name = ""

    def __init__(self, name: str | None, weight: float, frame_paths: Sequence[str], reference: Any,
                 states_reference: Any, weights: dict[str, float] | None, enabled: bool, options: dict):
        super().__init__(name, weight, enabled, **options)
        owner = self._owner()
        if not self.states_allowed:
            if reference is None:
                raise ValueError(f"{owner}: give the {self.reference_key}")
        elif (reference is None) == (states_reference is None):
            raise ValueError(f"{owner}: give one reference, {self.reference_key} or states_reference")
        self.frame_paths = [str(f) for f in ([frame_paths] if isinstance(frame_paths, str) else frame_paths)]
        self.reference = None if reference is None else read_reference(_vector_columns(reference, self.quantity), owner)
        self.states_reference = None if states_reference is None else read_reference(states_reference, owner)
        if self.states_reference is not None and not self.frame_paths:
            raise ValueError(f"{owner}: expected paths in frame_paths with a states reference, but none were found.")
        self.weights = {str(k): float(v) for k, v in (weights or {}).items()}
        for k, w in self.weights.items():
            if not np.isfinite(w):
                raise ValueError(f"{owner}: the weight of frame {k!r} must be finite, got {w}")

    def _owner(self) -> str:
        return f"{type(self).__name__} {self.name!r}"

    def _frames(self) -> list[str]:
        if self.frame_paths or self.reference is None:
            return list(self.frame_paths)
        suffix = f"/{self.quantity}_"
        return list(dict.fromkeys(c.rsplit(suffix, 1)[0] for c in self.reference[1] if suffix in c))

    def _output(self, ctx: GoalContext, frame: str) -> str:
        raise NotImplementedError

    def _check_states(self, ctx: GoalContext, states: dict) -> None:
        """What the quantity needs of a states reference besides the coordinates (checked by the context)."""

    def _options(self) -> dict:
        """The subclass's own properties, for :meth:`to_dict`."""
        return {}

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = self._owner()
        frames = self._frames()
        if len(set(frames)) != len(frames):
            raise ValueError(f"{owner}: a frame is listed twice: {frames}")
        for k in self.weights:
            if k not in frames:
                raise KeyError(f"{owner}: {self.weights_key}: " + did_you_mean(k, frames, "tracked frame"))
        outputs = []
        for frame in frames:
            try:
                outputs.append(self._output(ctx, frame))
            except KeyError as err:
                raise KeyError(f"{owner}: could not find frame {frame!r} ({err.args[0]})") from None
        if self.reference is not None:
            time, cols = self.reference
            table = []
            for frame in frames:
                names = [f"{frame}/{self.quantity}_{c}" for c in _AXES]
                missing = [n for n in names if n not in cols]
                if missing:
                    raise KeyError(f"{owner}: expected frame_paths to match the {self.reference_key}'s columns; "
                                   + did_you_mean(missing[0], list(cols), "reference column"))
                table.append(np.column_stack([cols[n] for n in names]))
        else:
            time, states = self.states_reference
            self._check_states(ctx, states)
            table = [ctx.output_values(name, states) for name in outputs]
        tracked = [(out, TableSplines(time, ref), self.weights.get(frame, 1.0))
                   for out, ref, frame in zip(outputs, table, frames)]

        def integrand(d: NodeData, jac: bool):
            n = d.t.size
            s, douts, dt = np.zeros(n), {}, np.zeros(n)
            for out, splines, w in tracked:
                ref, slope = splines(d.t)
                e = d.outputs[out] - ref
                s += w * np.sum(e * e, axis=1)
                if jac:
                    douts[out] = 2 * w * e
                    dt -= 2 * w * np.sum(e * slope, axis=1)
            return s, ({"outputs": douts, "t": dt} if jac else {})

        def hessian(d: NodeData):
            terms, n = [], d.t.size
            for out, splines, w in tracked:
                ref, slope = splines(d.t)
                e = d.outputs[out] - ref
                for a in range(3):
                    terms.append((("out", out, a), ("out", out, a), np.full(n, 2 * w)))
                    terms.append((("out", out, a), ("t", 0), -2 * w * slope[:, a]))
                terms.append((("t", 0), ("t", 0), 2 * w * np.sum(slope * slope - e * splines.curvature(d.t), axis=1)))
            return terms

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=tuple(outputs), columns={})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "frame_paths": self.frame_paths, self.weights_key: self.weights, **self._options()}
        for key, ref in ((self.reference_key, self.reference), ("states_reference", self.states_reference)):
            if ref is not None:
                d[key] = {"time": ref[0].tolist(), "columns": {k: v.tolist() for k, v in ref[1].items()}}
        return d


class TranslationTrackingGoal(_FrameVectorTrackingGoal):
    """Track frames' positions: ``∫ Σ_f w_f ‖p_f(q) − r_f(t)‖² dt`` (Moco's ``MocoTranslationTrackingGoal``; module
    docstring).

    Parameters
    ----------
    frame_paths : list of str
        The frames tracked (body paths, ``/ground`` excluded). With a translation reference and no ``frame_paths``,
        every frame of the table is tracked.
    translation_reference : (time, {frame: (n, 3) positions}) or (time, {column: values}) or .sto path, optional
        Positions in ground (m); columns as Moco flattens them: ``<frame>/position_x``, ``_y``, ``_z``.
    states_reference : (time, {state: values}) or .sto path, optional
        Coordinates (``/jointset/j/q/value``; other columns are ignored), from which the frames' positions are
        computed. Give one of the two references.
    translation_weights : dict, optional
        Per-frame weights (default 1).
    """

    default_name = "translation_tracking"
    quantity, reference_key, weights_key = "position", "translation_reference", "translation_weights"

    def __init__(self, name: str | None = None, weight: float = 1.0, frame_paths: Sequence[str] = (),
                 translation_reference: Any = None, states_reference: Any = None,
                 translation_weights: dict[str, float] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, frame_paths, translation_reference, states_reference, translation_weights,
                         enabled, options)

    @property
    def translation_reference(self) -> tuple | None:
        """The translation reference ``(time, {column: values})`` (None with a states reference)."""
        return self.reference

    @property
    def translation_weights(self) -> dict[str, float]:
        """Per-frame weights."""
        return self.weights

    def _output(self, ctx: GoalContext, frame: str) -> str:
        return ctx.point_output(f"{self.name}{frame}", frame, (0.0, 0.0, 0.0))[0]


class AngularVelocityTrackingGoal(_FrameVectorTrackingGoal):
    """Track frames' angular velocities in ground: ``∫ Σ_f w_f ‖ω_f(q, u) − r_f(t)‖² dt`` (Moco's
    ``MocoAngularVelocityTrackingGoal``; the gyroscopes of IMU-style tracking, expressed in ground).

    Parameters
    ----------
    frame_paths : list of str
        The frames tracked (body paths). With an angular-velocity reference and no ``frame_paths``, every frame of
        the table is tracked. (Moco 4.6 inverts this test and tracks every column of the table when ``frame_paths``
        is given, none when it is empty; moco_lab does what Moco's documentation says.)
    angular_velocity_reference : (time, {frame: (n, 3)}) or (time, {column: values}) or .sto path, optional
        Angular velocities in ground (rad/s); columns as Moco flattens them: ``<frame>/angular_velocity_x``, ...
    states_reference : (time, {state: values}) or .sto path, optional
        Coordinates and speeds (``/jointset/j/q/value``, ``.../speed``), from which the frames' angular velocities
        are computed, as Moco computes them. Every coordinate's speed must be in it. Give one of the two references.
    angular_velocity_weights : dict, optional
        Per-frame weights (default 1).
    """

    default_name = "angular_velocity_tracking"
    quantity, reference_key, weights_key = "angular_velocity", "angular_velocity_reference", "angular_velocity_weights"

    def __init__(self, name: str | None = None, weight: float = 1.0, frame_paths: Sequence[str] = (),
                 angular_velocity_reference: Any = None, states_reference: Any = None,
                 angular_velocity_weights: dict[str, float] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, frame_paths, angular_velocity_reference, states_reference,
                         angular_velocity_weights, enabled, options)

    @property
    def angular_velocity_reference(self) -> tuple | None:
        """The angular-velocity reference ``(time, {column: values})`` (None with a states reference)."""
        return self.reference

    @property
    def angular_velocity_weights(self) -> dict[str, float]:
        """Per-frame weights."""
        return self.weights

    def _output(self, ctx: GoalContext, frame: str) -> str:
        return ctx.angular_velocity_output(f"{self.name}{frame}", frame)

    def _check_states(self, ctx: GoalContext, states: dict) -> None:
        speeds = [n for n in ctx.state_names if n.endswith("/speed") and n not in states]
        if speeds:
            raise KeyError(f"{self._owner()}: the states reference has no column for the speed {speeds[0]!r}"
                           + (f" (and {len(speeds) - 1} more)" if len(speeds) > 1 else "")
                           + ": the angular velocities are computed from the speeds")


class AccelerationTrackingGoal(_FrameVectorTrackingGoal):
    """Track the accelerations of frames' origins: ``∫ Σ_f w_f ‖a_f(q, u, u̇) − r_f(t)‖² dt`` (Moco's
    ``MocoAccelerationTrackingGoal``; the accelerometers of IMU-style tracking).

    The frames' accelerations are in ground, less gravity with ``gravity_offset`` (what an accelerometer senses:
    ``a − g``), then in each frame's own axes with ``express_accelerations_in_tracking_frames`` (an accelerometer
    fixed on the body). They need the accelerations as variables: implicit multibody dynamics, or an ``Inverse``
    (Moco also computes them in explicit mode; moco_lab refuses explicit mode by name, as for joint reactions).

    Parameters
    ----------
    frame_paths : list of str
        The frames tracked (body paths). With no ``frame_paths`` every frame of the table is tracked. (Moco 4.6
        inverts this test and tracks every column of the table when ``frame_paths`` is given, none when it is
        empty; moco_lab does what Moco's documentation says.)
    acceleration_reference : (time, {frame: (n, 3)}) or (time, {column: values}) or .sto path
        Accelerations (m/s²); columns as Moco flattens them: ``<frame>/acceleration_x``, ``_y``, ``_z``.
    acceleration_weights : dict, optional
        Per-frame weights (default 1).
    gravity_offset : bool
        Subtract gravity from the model's accelerations (in ground, before re-expressing them). Default False.
    express_accelerations_in_tracking_frames : bool
        Compare in each frame's own axes. Default False (ground's).
    """

    default_name = "acceleration_tracking"
    states_allowed = False
    quantity, reference_key, weights_key = "acceleration", "acceleration_reference", "acceleration_weights"

    def __init__(self, name: str | None = None, weight: float = 1.0, frame_paths: Sequence[str] = (),
                 acceleration_reference: Any = None, acceleration_weights: dict[str, float] | None = None,
                 gravity_offset: bool = False, express_accelerations_in_tracking_frames: bool = False,
                 enabled: bool = True, **options: Any):
        super().__init__(name, weight, frame_paths, acceleration_reference, None, acceleration_weights, enabled,
                         options)
        for key, value in (("gravity_offset", gravity_offset),
                           ("express_accelerations_in_tracking_frames", express_accelerations_in_tracking_frames)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{self._owner()}: {key} must be True or False, got {value!r}")
        self.gravity_offset = bool(gravity_offset)
        self.express_accelerations_in_tracking_frames = bool(express_accelerations_in_tracking_frames)

    @property
    def acceleration_reference(self) -> tuple | None:
        """The acceleration reference ``(time, {column: values})``."""
        return self.reference

    @property
    def acceleration_weights(self) -> dict[str, float]:
        """Per-frame weights."""
        return self.weights

    def _output(self, ctx: GoalContext, frame: str) -> str:
        return ctx.acceleration_output(f"{self.name}{frame}", frame, self.gravity_offset,
                                       self.express_accelerations_in_tracking_frames)

    def _options(self) -> dict:
        return {"gravity_offset": self.gravity_offset,
                "express_accelerations_in_tracking_frames": self.express_accelerations_in_tracking_frames}


def _bilinear_rotation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``B(a, b)`` (n, 9), the symmetric bilinear form with ``B(e, e)`` the rotation matrix (by rows) of a unit
    quaternion ``e = (w, x, y, z)`` (n, 4): derivatives of ``R(e(t))`` are sums of such terms."""
    w1, x1, y1, z1 = a.T
    w2, x2, y2, z2 = b.T
    xy, xz, yz = x1 * y2 + y1 * x2, x1 * z2 + z1 * x2, y1 * z2 + z1 * y2
    wx, wy, wz = w1 * x2 + x1 * w2, w1 * y2 + y1 * w2, w1 * z2 + z1 * w2
    ww, xx, yy, zz = w1 * w2, x1 * x2, y1 * y2, z1 * z2
    return np.column_stack([ww + xx - yy - zz, xy - wz, xz + wy,
                            xy + wz, ww - xx + yy - zz, yz - wx,
                            xz - wy, yz + wx, ww - xx - yy + zz])


def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternions ``(w, x, y, z)`` (n, 4) of rotation matrices (n, 3, 3), with ``w >= 0`` (Simbody's
    ``Rotation::convertRotationToQuaternion`` returns the same representative); Shepperd's method, stable for every
    rotation."""
    R = np.asarray(R, float).reshape(-1, 3, 3)
    out = np.zeros((R.shape[0], 4))
    for k, M in enumerate(R):
        tr = np.trace(M)
        i = int(np.argmax([tr, M[0, 0], M[1, 1], M[2, 2]]))
        if i == 0:
            r = np.sqrt(1.0 + tr)
            q = [0.5 * r, (M[2, 1] - M[1, 2]) / (2 * r), (M[0, 2] - M[2, 0]) / (2 * r), (M[1, 0] - M[0, 1]) / (2 * r)]
        else:
            a, b, c = (i - 1, i % 3, (i + 1) % 3)
            r = np.sqrt(1.0 + M[a, a] - M[b, b] - M[c, c])
            v = np.zeros(3)
            v[a], v[b], v[c] = 0.5 * r, (M[a, b] + M[b, a]) / (2 * r), (M[a, c] + M[c, a]) / (2 * r)
            q = [(M[c, b] - M[b, c]) / (2 * r), *v]
        q = np.asarray(q, float)
        q = q / np.sqrt(matmul(q, q))
        out[k] = q if q[0] >= 0 else -q
    return out


#: acos(1 − s)² = Σ c_k s^k near s = 0 (the rotation angle squared where it is small: its closed form's
#: derivatives are 0/0 there).
_ANGLE_SERIES = (0.0, 2.0, 1 / 3, 4 / 45, 1 / 35, 16 / 1575, 8 / 2079)


def _angle_squared(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``f(c) = acos(c)²`` (the square of the angle whose cosine is ``c``) and its first two derivatives; a series in
    ``1 − c`` below 0.01, where the closed forms lose digits (and beyond 1, where round-off can put ``c``: the
    series continues smoothly)."""
    c = np.asarray(c, float)
    s = 1.0 - c
    near = s < 1e-2
    f, d1, d2 = np.empty_like(c), np.empty_like(c), np.empty_like(c)
    sn = s[near]
    f[near] = sum(k * sn ** i for i, k in enumerate(_ANGLE_SERIES))
    d1[near] = -sum(i * k * sn ** (i - 1) for i, k in enumerate(_ANGLE_SERIES) if i >= 1)
    d2[near] = sum(i * (i - 1) * k * sn ** (i - 2) for i, k in enumerate(_ANGLE_SERIES) if i >= 2)
    cf = np.clip(c[~near], -1.0 + 1e-15, 1.0)
    g, one = np.arccos(cf), 1.0 - cf * cf
    f[~near] = g * g
    d1[~near] = -2.0 * g / np.sqrt(one)
    d2[~near] = 2.0 / one - 2.0 * g * cf / one ** 1.5
    return f, d1, d2


class _QuaternionSplines:
    """A frame's reference orientation along time: its quaternion's components splined (as Moco's GCVSplineSet
    splines them) and normalized, as the rotation matrix ``D(t)`` (n, 9) and its first two time derivatives."""

    def __init__(self, time: np.ndarray, quaternions: np.ndarray):
        self.splines = TableSplines(time, quaternions)

    def __call__(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p, dp = self.splines(t)
        ddp = self.splines.curvature(t)
        r = np.linalg.norm(p, axis=1)[:, None]
        n = p / r
        dr = np.sum(p * dp, axis=1)[:, None] / r
        ddr = (np.sum(dp * dp + p * ddp, axis=1)[:, None] - dr * dr) / r
        dn = (dp - n * dr) / r
        ddn = (ddp - 2 * dn * dr - n * ddr) / r
        D = _bilinear_rotation(n, n)
        dD = 2 * _bilinear_rotation(dn, n)
        ddD = 2 * _bilinear_rotation(ddn, n) + 2 * _bilinear_rotation(dn, dn)
        return D, dD, ddD


class OrientationTrackingGoal(Goal):
    """Track frames' orientations in ground: ``∫ Σ_f w_f θ_f(q, t)² dt``, ``θ_f`` the angle of the rotation from the
    frame's orientation to the reference's (Moco's ``MocoOrientationTrackingGoal``: the angle of
    ``R_GM⁻¹ R_GD``; the orientations of IMU-style tracking).

    The reference orientations become unit quaternions (``w >= 0``), whose four components are splined as Moco's
    GCVSplineSet splines them and normalized at each time, as Moco does. First and second derivatives are exact
    (the angle squared is smooth where the angle is zero: a series there).

    Parameters
    ----------
    frame_paths : list of str
        The frames tracked (body paths). With a rotation reference and no ``frame_paths``, every frame of the table
        is tracked. (Moco 4.6 inverts this test and tracks every column of the table when ``frame_paths`` is
        given; moco_lab does what Moco's documentation says.)
    rotation_reference : (time, {frame: (n, 3, 3) rotation matrices or (n, 4) quaternions (w, x, y, z)}), optional
        Orientations in ground; also Moco's flattened quaternion columns ``<frame>/quaternion_e0`` … ``_e3``.
    states_reference : (time, {state: values}) or .sto path, optional
        Coordinates (every coordinate's ``/value``), from which the frames' orientations are computed, as Moco
        computes them. Give one of the two references.
    rotation_weights : dict, optional
        Per-frame weights (default 1).
    """

    default_name = "orientation_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, frame_paths: Sequence[str] = (),
                 rotation_reference: Any = None, states_reference: Any = None,
                 rotation_weights: dict[str, float] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"OrientationTrackingGoal {self.name!r}"
        if (rotation_reference is None) == (states_reference is None):
            raise ValueError(f"{owner}: give one reference, rotation_reference or states_reference")
        self.frame_paths = [str(f) for f in ([frame_paths] if isinstance(frame_paths, str) else frame_paths)]
        self.rotation_reference = None if rotation_reference is None else read_reference(
            self._quaternion_columns(rotation_reference, owner), owner)
        self.states_reference = None if states_reference is None else read_reference(states_reference, owner)
        if self.states_reference is not None and not self.frame_paths:
            raise ValueError(f"{owner}: expected paths in frame_paths with a states reference, but none were found.")
        self.rotation_weights = {str(k): float(v) for k, v in (rotation_weights or {}).items()}
        for k, w in self.rotation_weights.items():
            if not np.isfinite(w):
                raise ValueError(f"{owner}: the weight of frame {k!r} must be finite, got {w}")

    @staticmethod
    def _quaternion_columns(reference: Any, owner: str) -> Any:
        """``{frame: (n, 3, 3) or (n, 4)}`` as the flattened columns ``<frame>/quaternion_e0`` … ``_e3``."""
        if not (isinstance(reference, tuple) and len(reference) == 2 and isinstance(reference[1], dict)):
            return reference
        time, cols = reference
        flat = {}
        for name, values in cols.items():
            v = np.asarray(values, float)
            if v.ndim == 3 and v.shape[1:] == (3, 3):
                v = rotation_to_quaternion(v)
            elif v.ndim == 2 and v.shape[1] == 4:
                norm = np.linalg.norm(v, axis=1)
                if not np.all(norm > 0):
                    raise ValueError(f"{owner}: rotation_reference {name!r}: a quaternion of zero length")
            elif v.ndim != 1:
                raise ValueError(f"{owner}: rotation_reference {name!r} must be (n, 3, 3) rotation matrices or "
                                 f"(n, 4) quaternions (w, x, y, z), got shape {v.shape}")
            if v.ndim == 1:
                flat[name] = v
            else:
                flat.update({f"{name}/quaternion_e{k}": v[:, k] for k in range(4)})
        return time, flat

    def _frames(self) -> list[str]:
        if self.frame_paths or self.rotation_reference is None:
            return list(self.frame_paths)
        return list(dict.fromkeys(c.rsplit("/quaternion_e", 1)[0] for c in self.rotation_reference[1]
                                  if "/quaternion_e" in c))

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"OrientationTrackingGoal {self.name!r}"
        frames = self._frames()
        if len(set(frames)) != len(frames):
            raise ValueError(f"{owner}: a frame is listed twice: {frames}")
        for k in self.rotation_weights:
            if k not in frames:
                raise KeyError(f"{owner}: rotation_weights: " + did_you_mean(k, frames, "tracked frame"))
        outputs = []
        for frame in frames:
            try:
                outputs.append(ctx.rotation_output(f"{self.name}{frame}", frame))
            except KeyError as err:
                raise KeyError(f"{owner}: could not find frame {frame!r} ({err.args[0]})") from None
        if self.rotation_reference is not None:
            time, cols = self.rotation_reference
            table = []
            for frame in frames:
                names = [f"{frame}/quaternion_e{k}" for k in range(4)]
                missing = [n for n in names if n not in cols]
                if missing:
                    raise KeyError(f"{owner}: expected frame_paths to match the rotation_reference's columns; "
                                   + did_you_mean(missing[0], list(cols), "reference column"))
                table.append(np.column_stack([cols[n] for n in names]))
        else:
            time, states = self.states_reference
            table = [rotation_to_quaternion(ctx.output_values(name, states)) for name in outputs]
        tracked = [(out, _QuaternionSplines(time, ref), self.rotation_weights.get(frame, 1.0))
                   for out, ref, frame in zip(outputs, table, frames)]

        def terms(d: NodeData, out: str, splines: _QuaternionSplines):
            M = d.outputs[out]
            D, dD, ddD = splines(d.t)
            c = 0.5 * (np.sum(M * D, axis=1) - 1.0)
            f, f1, f2 = _angle_squared(c)
            return M, D, dD, ddD, f, f1, f2

        def integrand(d: NodeData, jac: bool):
            n = d.t.size
            s, douts, dt = np.zeros(n), {}, np.zeros(n)
            for out, splines, w in tracked:
                M, D, dD, _, f, f1, _ = terms(d, out, splines)
                s += w * f
                if jac:
                    douts[out] = (0.5 * w * f1)[:, None] * D
                    dt += 0.5 * w * f1 * np.sum(M * dD, axis=1)
            return s, ({"outputs": douts, "t": dt} if jac else {})

        def hessian(d: NodeData):
            result = []
            for out, splines, w in tracked:
                M, D, dD, ddD, _, f1, f2 = terms(d, out, splines)
                ct = 0.5 * np.sum(M * dD, axis=1)  # ∂c/∂t
                for a in range(9):
                    for b in range(a, 9):
                        result.append((("out", out, a), ("out", out, b), 0.25 * w * f2 * D[:, a] * D[:, b]))
                    result.append((("out", out, a), ("t", 0), w * (0.5 * f2 * ct * D[:, a] + 0.5 * f1 * dD[:, a])))
                result.append((("t", 0), ("t", 0), w * (f2 * ct * ct + 0.5 * f1 * np.sum(M * ddD, axis=1))))
            return result

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=tuple(outputs), columns={})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "frame_paths": self.frame_paths, "rotation_weights": self.rotation_weights}
        for key in ("rotation_reference", "states_reference"):
            ref = getattr(self, key)
            if ref is not None:
                d[key] = {"time": ref[0].tolist(), "columns": {k: v.tolist() for k, v in ref[1].items()}}
        return d


class MarkerFinalGoal(Goal):
    """``‖p(t_f) − r‖²``: a marker's distance from a place in ground at the end, squared (Moco's
    ``MocoMarkerFinalGoal``; a cost).

    Parameters
    ----------
    point_name : str
        The marker: its path as OpenSim writes it (``/markerset/toe``) or its name.
    reference_location : (3,)
        The place in ground (m); default the origin.
    """

    default_name = "marker_final"
    supports_endpoint_constraint = False

    def __init__(self, name: str | None = None, weight: float = 1.0, point_name: str = "",
                 reference_location: Sequence[float] = (0.0, 0.0, 0.0), enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"MarkerFinalGoal {self.name!r}"
        if not isinstance(point_name, str) or not point_name:
            raise ValueError(f"{owner}: no point_name provided (a marker's path, e.g. '/markerset/toe')")
        ref = np.asarray(reference_location, float).reshape(-1)
        if ref.shape != (3,) or not np.all(np.isfinite(ref)):
            raise ValueError(f"{owner}: reference_location must be 3 finite numbers (m), got {reference_location!r}")
        self.point_name, self.reference_location = point_name, ref

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"MarkerFinalGoal {self.name!r}"
        markers = getattr(ctx.model, "markers", {})
        name = self.point_name.rsplit("/", 1)[-1] if self.point_name.startswith("/markerset/") else self.point_name
        if name not in markers:
            raise KeyError(f"{owner}: " + did_you_mean(self.point_name, [f"/markerset/{m}" for m in markers],
                                                       "marker"))
        marker = markers[name]
        pos, _ = ctx.point_output(f"/markerset/{name}", marker.body, marker.location)
        ref = self.reference_location

        def endpoint(E: EndpointData, jac: bool):
            e = np.asarray(E.last.outputs[pos], float)[0] - ref
            value = np.array([float(matmul(e, e))])
            return (value, {"last": {"outputs": {pos: (2 * e)[None, None, :]}}}) if jac else (value, {})

        def endpoint_generic(E: EndpointData):
            p = E.last.outputs[pos][0]
            return [sum((p[i] - ref[i]) * (p[i] - ref[i]) for i in range(3))]

        return self._bound(ctx, outputs=(pos,), endpoint=endpoint, endpoint_generic=endpoint_generic)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "point_name": self.point_name,
                "reference_location": self.reference_location.tolist()}


GOAL_TYPES.update({"TranslationTrackingGoal": TranslationTrackingGoal,
                   "AngularVelocityTrackingGoal": AngularVelocityTrackingGoal,
                   "AccelerationTrackingGoal": AccelerationTrackingGoal, "OrientationTrackingGoal": OrientationTrackingGoal,
                   "MarkerFinalGoal": MarkerFinalGoal})
