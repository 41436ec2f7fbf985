"""Goals on frames and points of the model: Moco's ``MocoTranslationTrackingGoal`` and ``MocoMarkerFinalGoal``.

:class:`TranslationTrackingGoal` tracks the origins of frames (bodies by their OpenSim path, e.g.
``/bodyset/calcn_r``) in ground: ``∫ Σ_f w_f ‖p_f(q) − r_f(t)‖² dt``. The reference positions ``r_f`` come from a
translation table or, as Moco does with a ``states_reference``, from a states table: the model's frames are placed at
each row's coordinates and their positions become the table. Either table is splined as Moco's ``GCVSplineSet``
splines it (natural quintic interpolating splines). :class:`MarkerFinalGoal` brings a marker to a place at the end:
``‖p(t_f) − r‖²``. First and second derivatives are exact.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..util.names import did_you_mean
from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext, NodeData, TableSplines, read_reference

__all__ = ["TranslationTrackingGoal", "MarkerFinalGoal"]

_AXES = ("x", "y", "z")


def _translation_columns(reference: Any) -> Any:
    """A ``(time, {frame: (n, 3)})`` reference as Moco's flattened columns ``<frame>/position_x, _y, _z``; other
    forms pass unchanged."""
    if isinstance(reference, tuple) and len(reference) == 2 and isinstance(reference[1], dict):
        time, cols = reference
        flat = {}
        for name, values in cols.items():
            v = np.asarray(values, float)
            if v.ndim == 2 and v.shape[1] == 3:
                flat.update({f"{name}/position_{c}": v[:, j] for j, c in enumerate(_AXES)})
            else:
                flat[name] = v
        return time, flat
    return reference


class TranslationTrackingGoal(Goal):
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

    def __init__(self, name: str | None = None, weight: float = 1.0, frame_paths: Sequence[str] = (),
                 translation_reference: Any = None, states_reference: Any = None,
                 translation_weights: dict[str, float] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"TranslationTrackingGoal {self.name!r}"
        if (translation_reference is None) == (states_reference is None):
            raise ValueError(f"{owner}: give one reference, translation_reference or states_reference")
        self.frame_paths = [str(f) for f in ([frame_paths] if isinstance(frame_paths, str) else frame_paths)]
        self.translation_reference = (None if translation_reference is None else
                                      read_reference(_translation_columns(translation_reference), owner))
        self.states_reference = None if states_reference is None else read_reference(states_reference, owner)
        if self.states_reference is not None and not self.frame_paths:
            raise ValueError(f"{owner}: expected paths in frame_paths with a states reference, but none were found.")
        self.translation_weights = {str(k): float(v) for k, v in (translation_weights or {}).items()}
        for k, w in self.translation_weights.items():
            if not np.isfinite(w):
                raise ValueError(f"{owner}: the weight of frame {k!r} must be finite, got {w}")

    def _frames(self, owner: str) -> list[str]:
        if self.frame_paths or self.translation_reference is None:
            return list(self.frame_paths)
        cols = self.translation_reference[1]
        return list(dict.fromkeys(c.rsplit("/position_", 1)[0] for c in cols if "/position_" in c))

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"TranslationTrackingGoal {self.name!r}"
        frames = self._frames(owner)
        if len(set(frames)) != len(frames):
            raise ValueError(f"{owner}: a frame is listed twice: {frames}")
        for k in self.translation_weights:
            if k not in frames:
                raise KeyError(f"{owner}: translation_weights: " + did_you_mean(k, frames, "tracked frame"))
        outputs = []
        for frame in frames:
            try:
                outputs.append(ctx.point_output(f"{self.name}{frame}", frame, (0.0, 0.0, 0.0))[0])
            except KeyError as err:
                raise KeyError(f"{owner}: could not find frame {frame!r} ({err.args[0]})") from None
        if self.translation_reference is not None:
            time, cols = self.translation_reference
            table = []
            for frame in frames:
                names = [f"{frame}/position_{c}" for c in _AXES]
                missing = [n for n in names if n not in cols]
                if missing:
                    raise KeyError(f"{owner}: expected frame_paths to match the translation reference's columns; "
                                   + did_you_mean(missing[0], list(cols), "reference column"))
                table.append(np.column_stack([cols[n] for n in names]))
        else:
            time, states = self.states_reference
            table = [ctx.output_values(name, states) for name in outputs]
        tracked = [(pos, TableSplines(time, ref), self.translation_weights.get(frame, 1.0))
                   for pos, ref, frame in zip(outputs, table, frames)]

        def integrand(d: NodeData, jac: bool):
            n = d.t.size
            s, douts, dt = np.zeros(n), {}, np.zeros(n)
            for pos, splines, w in tracked:
                ref, slope = splines(d.t)
                e = d.outputs[pos] - ref
                s += w * np.sum(e * e, axis=1)
                if jac:
                    douts[pos] = 2 * w * e
                    dt -= 2 * w * np.sum(e * slope, axis=1)
            return s, ({"outputs": douts, "t": dt} if jac else {})

        def hessian(d: NodeData):
            out, n = [], d.t.size
            for pos, splines, w in tracked:
                ref, slope = splines(d.t)
                e = d.outputs[pos] - ref
                for a in range(3):
                    out.append((("out", pos, a), ("out", pos, a), np.full(n, 2 * w)))
                    out.append((("out", pos, a), ("t", 0), -2 * w * slope[:, a]))
                out.append((("t", 0), ("t", 0), 2 * w * np.sum(slope * slope - e * splines.curvature(d.t), axis=1)))
            return out

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=tuple(outputs), columns={})

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "frame_paths": self.frame_paths, "translation_weights": self.translation_weights}
        for key in ("translation_reference", "states_reference"):
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
            value = np.array([float(e @ e)])
            return (value, {"last": {"outputs": {pos: (2 * e)[None, None, :]}}}) if jac else (value, {})

        def endpoint_generic(E: EndpointData):
            p = E.last.outputs[pos][0]
            return [sum((p[i] - ref[i]) * (p[i] - ref[i]) for i in range(3))]

        return self._bound(ctx, outputs=(pos,), endpoint=endpoint, endpoint_generic=endpoint_generic)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "point_name": self.point_name,
                "reference_location": self.reference_location.tolist()}


GOAL_TYPES.update({"TranslationTrackingGoal": TranslationTrackingGoal, "MarkerFinalGoal": MarkerFinalGoal})
