"""The transcription's endpoint goals: a goal of the initial and final states, controls, times and parameters.

:class:`Endpoint` is the Drake binding (cost or constraint) of one such goal, with its exact gradient;
:func:`goal_value` evaluates a bound goal's endpoint function with its derivatives, which the
:class:`~moco_lab.engine.transcription.Transcription` (``tr``) that creates the endpoint also uses.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ocp.goals import BoundGoal, EndpointData
from ..symbolic.batched import matmul

__all__ = ["Endpoint", "goal_value", "scale_derivatives"]


def goal_value(b: BoundGoal, E: EndpointData, jac: bool) -> tuple[np.ndarray, dict]:
    """A bound goal's value vector ``g`` (its endpoint function or ``[I]``, then the divisions) and derivatives."""
    if b.endpoint is not None:
        g, d = b.endpoint(E, jac)
        g = np.atleast_1d(np.asarray(g, float))
    else:
        g, d = np.array([E.integral]), ({"integral": np.array([1.0])} if jac else {})
    m = g.size
    if not (b.divide_by_displacement or b.divide_by_duration or b.divide_by_mass):
        return g, d
    d = {k: v for k, v in d.items()}
    if b.divide_by_mass:
        g = g / b.total_mass
        if jac:
            d = scale_derivatives(d, 1.0 / b.total_mass)
    if b.divide_by_duration:
        T = E.tf - E.t0
        if jac:
            d = scale_derivatives(d, 1.0 / T)
            d["t0"] = d.get("t0", np.zeros(m)) + g / T ** 2
            d["tf"] = d.get("tf", np.zeros(m)) - g / T ** 2
        g = g / T
    if b.divide_by_displacement:
        r0 = E.first.outputs["/com_position"][0]
        r1 = E.last.outputs["/com_position"][0]
        dv = r1 - r0
        D = float(np.sqrt(matmul(dv, dv)))
        if jac:
            d = scale_derivatives(d, 1.0 / D)
            unit = dv / D if D > 0 else np.zeros(3)
            for side, sign in (("first", -1.0), ("last", 1.0)):
                block = dict(d.get(side, {}))
                outs = dict(block.get("outputs", {}))
                extra = -(g / D ** 2)[:, None, None] * (sign * unit)[None, None, :]
                outs["/com_position"] = outs.get("/com_position", 0.0) + extra
                block["outputs"] = outs
                d[side] = block
        g = g / D
    return g, d


def scale_derivatives(d: dict, f: float) -> dict:
    """The derivative dictionary ``d`` (nested dictionaries, arrays, None) times ``f``."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out[k] = scale_derivatives(v, f)
        elif v is None:
            out[k] = None
        else:
            out[k] = np.asarray(v) * f
    return out


class Endpoint:
    """The binding of one goal's endpoint value: variables t0, tf, P, the first and last node blocks, its ``I``."""

    def __init__(self, tr: Any, b: BoundGoal):
        self.tr, self.b = tr, b
        ng = tr.grid.num_points
        self.idx = np.array([0, ng - 1])
        blocks = [np.concatenate([tr.Y[k], tr.X[k], tr.A[k]]) for k in self.idx]
        extra = [tr.I[b.name]] if b.name in tr.I else []
        self.vars = np.concatenate([[tr.t0, tr.tf], tr.P, *blocks, extra])
        self.off = 2 + tr.npar

    def _evaluate(self, z, jac):
        tr, b, o, nb = self.tr, self.b, self.off, self.tr.nb
        t0, tf, P = z[0], z[1], z[2:o]
        B = z[o:o + 2 * nb].reshape(2, nb)
        integral = z[o + 2 * nb] if b.name in tr.I else 0.0
        t = t0 + tr.grid.tau[self.idx] * (tf - t0)
        data, douts = tr.node_data(self.idx, B, P, t, jac)
        E = EndpointData(t0, tf, P, integral, data.row(0), data.row(1))
        g, d = goal_value(b, E, jac)
        if not jac:
            return g, None
        m = g.size
        J = np.zeros((m, self.vars.size))
        J[:, 0] += np.broadcast_to(d.get("t0", 0.0), (m,))
        J[:, 1] += np.broadcast_to(d.get("tf", 0.0), (m,))
        if d.get("P") is not None:
            J[:, 2:o] += np.asarray(d["P"]).reshape(m, tr.npar)
        for k, side in enumerate(("first", "last")):
            sd = d.get(side) or {}
            sub = {name: (Jb[k:k + 1], Jp[k:k + 1]) for name, (Jb, Jp) in douts.items()}
            tau = tr.grid.tau[self.idx[k]]
            for r in range(m):
                dr = {}
                for key, v in sd.items():
                    if v is None:
                        continue
                    if key == "outputs":
                        dr["outputs"] = {nm: np.asarray(a)[r] for nm, a in v.items()}
                    else:
                        dr[key] = np.asarray(v)[r]
                dB, dP, dt = tr.chain_goal_derivative(dr, sub, 1)
                J[r, o + k * nb:o + (k + 1) * nb] += dB[0]
                J[r, 2:o] += dP[0]
                J[r, 0] += dt[0] * (1 - tau)
                J[r, 1] += dt[0] * tau
        if b.name in tr.I:
            J[:, -1] = np.broadcast_to(d.get("integral", 0.0), (m,))
        return g, J

    def cost(self, z: np.ndarray, jac: bool) -> tuple[float, Any]:
        """The goal's weighted value as a cost and, if ``jac``, its gradient."""
        g, J = self._evaluate(z, jac)
        w = self.b.weight
        return w * float(np.sum(g)), (w * np.sum(J, axis=0) if jac else None)

    def constraint(self, z: np.ndarray, jac: bool) -> tuple[np.ndarray, Any]:
        """The goal's value vector as constraint rows and, if ``jac``, their Jacobian."""
        return self._evaluate(z, jac)
