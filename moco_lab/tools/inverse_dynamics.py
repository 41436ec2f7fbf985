"""Inverse dynamics of a measured motion: the generalized forces that reproduce it, as OpenSim's
``InverseDynamicsTool`` computes them.

Given the coordinates over time (from inverse kinematics), each coordinate is optionally low-pass filtered
(OpenSim's padded, zero-lag third-order Butterworth, :func:`moco_lab.results.tables.filter_lowpass`), fitted with a
natural quintic interpolating spline (OpenSim's ``GCVSplineSet`` of degree 5 with zero error variance; fitted, as
OpenSim's tool does, to the filtered table with its padding, so that the motion's first and last samples are not
spline ends) whose first and second derivatives give the speeds and accelerations, and at every sample time

    τ = M(q) q̈ + c(q, q̇) − g(q) − f_applied(q, q̇, t)

is evaluated by the engine (the model's compiled equations): ``f_applied`` holds the model's external loads
(``add_external_loads``), springs and other force elements, but not its muscles or actuators (OpenSim's default
``forces_to_exclude = Muscles``; actuators without controls apply nothing). Kinematic constraints are ignored, as
OpenSim's tool ignores them: a coupled coordinate (the patella's ``knee_angle_*_beta``) gets its own generalized
force. The root's six entries are the residual forces and moments the data leave unexplained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..modeling.model import Model, require_model
from ..modeling.units import coordinate_motion
from ..results.tables import filter_lowpass, interpolating_spline

__all__ = ["IDResult", "inverse_dynamics"]


@dataclass
class IDResult:
    """Generalized forces over a motion.

    Attributes
    ----------
    time : (n,) array, s
    forces : dict of str -> (n,) array
        By coordinate name, in ``model.coordinates`` order: N·m for rotations, N for translations.
    units : dict of str -> str
        ``"N·m"`` or ``"N"`` per coordinate.
    q, u, a : (n, nq) arrays
        The (filtered) coordinates and the spline's speeds and accelerations the forces balance.
    """

    time: np.ndarray
    forces: dict
    units: dict
    q: np.ndarray
    u: np.ndarray
    a: np.ndarray


def inverse_dynamics(model: Model, time: ArrayLike, Q: ArrayLike, *, lowpass_cutoff: float | None = None
                     ) -> IDResult:
    """Inverse dynamics of the motion ``Q`` (module docstring).

    Parameters
    ----------
    model : Model
        With its external loads applied (:func:`~moco_lab.modeling.operators.add_external_loads`), if any.
    time : (n,) array, s
        Increasing sample times (at least 6 for the quintic spline).
    Q : (n, nq) array
        Coordinates in ``model.coordinates`` order (rad, m), e.g. ``IKResult.q``.
    lowpass_cutoff : float, optional
        Cut-off frequency (Hz) of the low-pass filter applied to the coordinates first (OpenSim's
        ``lowpass_cutoff_frequency_for_coordinates``; gait labs use about 6 Hz). Default: no filter.

    Returns
    -------
    IDResult
        At the sample times (the filter's resampled times if the samples were not uniform).

    Raises
    ------
    ValueError
        ``Q`` of the wrong shape or with NaN, times that do not increase, fewer than 6 samples.
    """
    require_model(model, "inverse_dynamics")
    t = np.asarray(time, float).reshape(-1)
    Q = np.asarray(Q, float)
    nq = len(model.coordinates)
    if Q.ndim != 2 or Q.shape != (t.size, nq):
        raise ValueError(f"inverse_dynamics: Q must be (len(time), {nq}) = ({t.size}, {nq}): one column per "
                         f"coordinate of the model, got shape {Q.shape}")
    if not np.all(np.isfinite(Q)) or not np.all(np.isfinite(t)):
        raise ValueError("inverse_dynamics: time and Q must be finite (fill or cut the gaps first)")
    if t.size < 6 or np.any(np.diff(t) <= 0):
        raise ValueError(f"inverse_dynamics: needs at least 6 strictly increasing times, got {t.size}"
                         + ("" if np.all(np.diff(t) > 0) else " (not increasing)"))
    fit_t, fit_Q = t, Q
    if lowpass_cutoff is not None:  # as OpenSim's tool: the spline fits the padded, filtered table
        padded, columns = filter_lowpass(t, {str(k): Q[:, k] for k in range(nq)}, lowpass_cutoff, keep_padding=True)
        n = (padded.size + 1) // 2  # rows of the (possibly resampled) table: n + 2 (n // 2) padded rows
        t = padded[n // 2:n // 2 + n]
        fit_t, fit_Q = padded, np.column_stack([columns[str(k)] for k in range(nq)])
    spline = interpolating_spline(fit_t, fit_Q)
    Q, U, A = spline(t), spline.derivative(1)(t), spline.derivative(2)(t)
    kernel = _kernel(model)
    tau, _ = kernel.residual(Q, U, A, None, None, E=kernel.inputs_at(t))
    units = {c.name: ("N·m" if coordinate_motion(model, c) == "rotational" else "N") for c in model.coordinates}
    forces = {c.name: tau[:, c.q_index].copy() for c in model.coordinates}
    return IDResult(t, forces, units, Q, U, A)


def _kernel(model: Model):
    """The compiled equations of the model without muscles, actuators or constraints (what inverse dynamics
    balances: inertia, gravity, external loads, springs and the other force elements)."""
    from ..engine.kernel import kernel_for

    return kernel_for(model.skeleton(elements=True, constraints=False))
