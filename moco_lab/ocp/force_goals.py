"""Moco's ``MocoGeneralizedForceTrackingGoal``: track the generalized forces a motion needs.

``∫ Σ_i w_i (s_i (τ_i(q, u, u̇) − r_i(t)))² dt`` over the coordinates ``i`` the reference names (OpenSim's inverse
dynamics labels: ``<coordinate>_moment`` for a rotational coordinate, ``<coordinate>_force`` for a translational
one and for a coordinate that both rotates and translates its joint, OpenSim's *coupled*), where ``τ`` is what the
accelerations need beyond gravity and the listed force elements (``force_paths``, regular expressions matched
against the elements' paths): ``M u̇ + c(q, u) − g(q) − Σ_listed τ_e``, the kinematic constraints ignored, as
Simbody's ``calcResidualForceIgnoringConstraints`` computes it for Moco. With no ``force_paths`` it is inverse
dynamics itself; listing the muscles leaves what other actuators must supply. ``s_i`` is 1, or with
``normalize_tracking_error`` one over the reference's peak magnitude. The accelerations must be variables:
implicit multibody dynamics, or an ``Inverse`` (Moco also computes them in explicit mode).
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from ..symbolic.batched import matmul
from ..util.names import did_you_mean
from .goals import GOAL_TYPES, BoundGoal, Goal, GoalContext, NodeData, TableSplines, read_reference

__all__ = ["GeneralizedForceTrackingGoal"]


class GeneralizedForceTrackingGoal(Goal):
    """Track generalized forces (Moco's ``MocoGeneralizedForceTrackingGoal``; module docstring).

    Parameters
    ----------
    reference : (time, {label: values}) or .sto path
        Generalized forces by OpenSim's inverse-dynamics labels (``knee_angle_r_moment``, ``pelvis_tx_force``),
        N·m or N.
    force_paths : list of str
        Regular expressions of the force elements whose generalized forces count as supplied (matched against
        the whole path, ``/forceset/.*``); each element at most once.
    generalized_force_weights : dict, optional
        Weights by label (non-negative; default 1; 0 drops the label).
    generalized_force_weights_pattern : dict, optional
        Weights by regular expression over the labels (explicit weights take precedence).
    allow_unused_references : bool
        Ignore reference columns that name no (tracked) coordinate instead of refusing them.
    normalize_tracking_error : bool
        Divide each error by the reference's peak magnitude.
    ignore_constrained_coordinates : bool
        Leave out the coordinates a coupler constraint drives (default True, as Moco).
    """

    default_name = "generalized_force_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, reference: Any = None,
                 force_paths: Sequence[str] = (), generalized_force_weights: dict[str, float] | None = None,
                 generalized_force_weights_pattern: dict[str, float] | None = None,
                 allow_unused_references: bool = False, normalize_tracking_error: bool = False,
                 ignore_constrained_coordinates: bool = True, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = self._owner()
        if reference is None:
            raise ValueError(f"{owner}: give the reference (generalized forces by OpenSim's labels)")
        self.reference = read_reference(reference, owner)
        self.force_paths = [str(p) for p in ([force_paths] if isinstance(force_paths, str) else force_paths)]
        for p in self.force_paths:
            try:
                re.compile(p)
            except re.error as err:
                raise ValueError(f"{owner}: force_paths: {p!r} is not a regular expression ({err})") from None
        self.generalized_force_weights = self._weights(generalized_force_weights, "generalized_force_weights")
        self.generalized_force_weights_pattern = self._weights(generalized_force_weights_pattern,
                                                               "generalized_force_weights_pattern")
        for key, value in (("allow_unused_references", allow_unused_references),
                           ("normalize_tracking_error", normalize_tracking_error),
                           ("ignore_constrained_coordinates", ignore_constrained_coordinates)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{owner}: {key} must be True or False, got {value!r}")
        self.allow_unused_references = bool(allow_unused_references)
        self.normalize_tracking_error = bool(normalize_tracking_error)
        self.ignore_constrained_coordinates = bool(ignore_constrained_coordinates)

    def _owner(self) -> str:
        return f"GeneralizedForceTrackingGoal {self.name!r}"

    def _weights(self, weights: dict | None, key: str) -> dict[str, float]:
        out = {str(k): float(v) for k, v in (weights or {}).items()}
        for k, w in out.items():
            if not np.isfinite(w) or w < 0:
                raise ValueError(f"{self._owner()}: {key}[{k!r}] must be a finite number >= 0, got {w}")
        return out

    def labels(self, model: Any) -> dict[str, int]:
        """OpenSim's label of each coordinate's generalized force -> its index in ``q`` (constrained coordinates
        left out with ``ignore_constrained_coordinates``)."""
        constrained = {getattr(c, "dependent", None) for c in (model.constraints or [])}
        joints = {j.q_start: j for j in model.tree().joints}
        out = {}
        for c in model.coordinates:
            if self.ignore_constrained_coordinates and (c.name in constrained or c.path in constrained
                                                        or c.value_path in constrained):
                continue
            kind = model.coordinate_motion(c)
            j = joints.get(c.q_index)
            if j is not None and j.type == "custom" and kind == "rotational" and any(
                    not f.is_constant() for _, f in j.transform.translations):
                kind = "coupled"  # OpenSim's Coupled motion type: rotates and translates its joint
            out[f"{c.name}_{'moment' if kind == 'rotational' else 'force'}"] = c.q_index
        return out

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = self._owner()
        model = ctx.model
        labels = self.labels(model)
        for k in self.generalized_force_weights:
            if k not in labels:
                raise KeyError(f"{owner}: weight provided with name {k!r} but this is not a recognized generalized "
                               "force or it is associated with a constrained coordinate and set to be ignored; "
                               + did_you_mean(k, list(labels), "generalized force"))
        paths = [e.path for e in model.force_elements]
        listed: list[str] = []
        for pattern in self.force_paths:
            for path in paths:
                if re.fullmatch(pattern, path):
                    if path in listed:
                        raise ValueError(f"{owner}: expected unique force paths, but force at path {path!r} was "
                                         "specified multiple times (possibly due to specifying the full path and a "
                                         "regex pattern)")
                    listed.append(path)
        time, cols = self.reference
        tracked, names = [], []
        for label in cols:
            if label not in labels:
                if self.allow_unused_references:
                    continue
                raise KeyError(f"{owner}: reference provided with name {label!r} but this is not a recognized "
                               "generalized force or it is associated with a constrained coordinate and set to be "
                               "ignored (allow_unused_references=True ignores it); "
                               + did_you_mean(label, list(labels), "generalized force"))
            w = self.generalized_force_weights.get(label)
            if w is None:
                w = 1.0
                for pattern, pw in self.generalized_force_weights_pattern.items():
                    if re.fullmatch(pattern, label):
                        w = pw
            if w <= 1e-15:
                continue
            scale = 1.0
            if self.normalize_tracking_error:
                peak = float(np.max(np.abs(cols[label])))
                if peak < 1e-15:
                    raise ValueError(f"{owner}: normalize_tracking_error is enabled, but the peak magnitude of the "
                                     f"generalized force {label!r} is close to zero")
                scale = 1.0 / peak
            tracked.append((labels[label], w * scale * scale))
            names.append(label)
        if not tracked:
            raise ValueError(f"{owner}: no generalized force to track (the reference's columns: {list(cols)})")
        out = ctx.generalized_force_output(self.name, listed)
        index = np.array([i for i, _ in tracked])
        w = np.array([wk for _, wk in tracked])
        splines = TableSplines(time, np.column_stack([cols[n] for n in names]))

        def integrand(d: NodeData, jac: bool):
            R, S = splines(d.t)
            e = d.outputs[out][:, index] - R
            value = matmul(e * e, w)
            if not jac:
                return value, {}
            dout = np.zeros_like(d.outputs[out])
            dout[:, index] = 2 * e * w
            return value, {"outputs": {out: dout}, "t": -2 * matmul(e * S, w)}

        def hessian(d: NodeData):
            R, S = splines(d.t)
            e = d.outputs[out][:, index] - R
            C = splines.curvature(d.t)
            n = d.t.size
            terms = [(("out", out, int(i)), ("out", out, int(i)), np.full(n, 2 * wk)) for i, wk in zip(index, w)]
            terms += [(("out", out, int(i)), ("t", 0), -2 * wk * S[:, k]) for k, (i, wk) in enumerate(zip(index, w))]
            terms.append((("t", 0), ("t", 0), 2 * matmul(S * S - e * C, w)))
            return terms

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=(out,), columns={})

    def to_dict(self) -> dict:
        return {**super().to_dict(), "force_paths": self.force_paths,
                "generalized_force_weights": self.generalized_force_weights,
                "generalized_force_weights_pattern": self.generalized_force_weights_pattern,
                "allow_unused_references": self.allow_unused_references,
                "normalize_tracking_error": self.normalize_tracking_error,
                "ignore_constrained_coordinates": self.ignore_constrained_coordinates,
                "reference": {"time": self.reference[0].tolist(),
                              "columns": {k: v.tolist() for k, v in self.reference[1].items()}}}


GOAL_TYPES["GeneralizedForceTrackingGoal"] = GeneralizedForceTrackingGoal
