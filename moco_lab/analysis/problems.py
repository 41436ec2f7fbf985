"""Quantities of the built-in problems: the parabola bead's constraint errors and forces, the suspended mass's activations.

Used by lesson 04, lesson 03 and the dashboards; pure numpy on trajectories.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..results.trajectory import Solution

__all__ = ["PARABOLA_LAMBDA", "PARABOLA_GAMMA", "parabola_constraint_errors", "parabola_forces",
           "SUSPENDED_MASS_ACTIVATIONS", "suspended_mass_activation_rms"]

_TX, _TY = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
_VX, _VY = "/jointset/tx/tx/speed", "/jointset/ty/ty/speed"
_FX, _FY = "/forceset/force_x", "/forceset/force_y"
#: Multiplier and (Hermite–Simpson) velocity-correction columns of the parabola's constraint.
PARABOLA_LAMBDA, PARABOLA_GAMMA = "/constraintset/curve/lambda_0", "/constraintset/curve/gamma_0"
#: Activation states of the suspended mass's three muscles.
SUSPENDED_MASS_ACTIVATIONS = tuple(f"/forceset/{m}/activation" for m in ("left", "middle", "right"))


def parabola_constraint_errors(solution: Solution, scheme: str) -> dict:
    """Errors of the constraint ``φ = y − x²`` at the mesh points and between them.

    At mesh points: ``φ`` and ``φ̇ = ẏ − 2xẋ``. Between mesh points, at the
    interval midpoints: for ``"hermite-simpson"`` ``φ`` of the midpoint
    variables (the solution's odd grid points); for ``"trapezoidal"`` ``φ`` of
    the piecewise-linear interpolant, ``(y_a + y_b)/2 − ((x_a + x_b)/2)²``,
    which is ``(x_b − x_a)²/4`` where ``φ`` vanishes at both ends.

    Returns
    -------
    dict
        ``"mesh_time"``, ``"phi_mesh"``, ``"phid_mesh"`` (shape ``(N+1,)``),
        ``"mid_time"``, ``"phi_mid"`` (shape ``(N,)``).
    """
    if scheme not in ("trapezoidal", "hermite-simpson"):
        raise ValueError(f"scheme must be 'trapezoidal' or 'hermite-simpson', got {scheme!r}")
    t = np.asarray(solution.time, float)
    st = solution.states
    x, y, vx, vy = (np.asarray(st[k], float) for k in (_TX, _TY, _VX, _VY))
    if scheme == "hermite-simpson":
        if t.size % 2 != 1:
            raise ValueError(f"a Hermite–Simpson solution has 2N + 1 grid points, got {t.size}")
        mesh_idx, mid_idx = np.arange(0, t.size, 2), np.arange(1, t.size, 2)
        mid_time, phi_mid = t[mid_idx], y[mid_idx] - x[mid_idx] ** 2
    else:
        mesh_idx = np.arange(t.size)
        xm, ym = 0.5 * (x[1:] + x[:-1]), 0.5 * (y[1:] + y[:-1])
        mid_time, phi_mid = 0.5 * (t[1:] + t[:-1]), ym - xm ** 2
    xi, yi, vxi, vyi = x[mesh_idx], y[mesh_idx], vx[mesh_idx], vy[mesh_idx]
    return {"mesh_time": t[mesh_idx], "phi_mesh": yi - xi ** 2, "phid_mesh": vyi - 2 * xi * vxi,
            "mid_time": mid_time, "phi_mid": phi_mid}


def parabola_forces(solution: Solution) -> dict:
    """Forces on the bead (N) at every grid point: ``{"constraint": (f_x, f_y), "actuators": (f_x, f_y)}``.

    The constraint force is ``−Gᵀλ = (2xλ, −λ)`` with ``G = (−2x, 1)``
    (moco_lab's ``M u̇ + C − g − τ + Gᵀλ = 0``), perpendicular to the curve.
    ``"actuators"`` is present only if the solution has the controls (optimal force 1 N).
    """
    x = np.asarray(solution.states[_TX], float)
    lam = np.asarray(solution.multipliers[PARABOLA_LAMBDA], float)
    forces = {"constraint": (2 * x * lam, -lam)}
    controls = solution.controls
    if _FX in controls and _FY in controls:
        forces["actuators"] = (np.asarray(controls[_FX], float), np.asarray(controls[_FY], float))
    return forces


def suspended_mass_activation_rms(solution: Solution, prediction: Solution) -> float:
    """Activations of ``solution`` vs. ``prediction``, RMS as % of the prediction's peak activation.

    Moco's ``compareContinuousVariablesRMSPattern(..., "/forceset.*activation$")``
    (``sqrt(∫ Σ err² dt / (T · ncols))``) on the common time range
    (:meth:`~moco_lab.results.trajectory.Trajectory.rms_difference` with
    ``per_column=True``), divided by the peak predicted activation. The Moco
    paper (N = 100 prediction, N = 138 tracking) reports 0.21–0.33 % for
    effort exponent 2 and 10.7–11.1 % for exponent 4.
    """
    peak = max(float(np.max(prediction.states[k])) for k in SUSPENDED_MASS_ACTIVATIONS)
    return 100.0 * solution.rms_difference(prediction, list(SUSPENDED_MASS_ACTIVATIONS), per_column=True) / peak
