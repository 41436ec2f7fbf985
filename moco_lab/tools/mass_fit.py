"""Total mass and a residual-free centre-of-mass trajectory from ground reaction forces, by linear least squares.

AddBiomechanics' first dynamics step (Werling et al. 2023, PLOS ONE; the "zero linear residuals on the COM
trajectory" fit): with the body's total mass m, gravity g and the measured ground reaction force F_t (the sum
over force plates) at frames t = 0 … T−1, Δt apart, the centre of mass moves by semi-implicit Euler steps

    v_{t+1} = v_t + (F_t / m + g) Δt,        c_{t+1} = c_t + v_{t+1} Δt,

so each position is *linear* in the unknowns c₀, v₀ and μ = 1/m:

    c_t = c₀ + t Δt v₀ + μ S_t + G_t,    S_t = Δt² Σ_{k<t} Σ_{j≤k} F_j,    G_t = Δt² Σ_{k<t} Σ_{j≤k} g.

Fitting these to the COM positions the kinematics give (``com``) is one linear least-squares problem
(:func:`fit_mass`); its solution is the mass and the COM trajectory that the forces explain exactly (zero
residual force). :func:`linear_residual_forces` gives the residual force a *given* mass leaves
(m a_COM − F − m g with the COM acceleration by finite differences), the number a gait lab checks against
thresholds (:func:`residual_force_percent`: RMS residual force over peak |GRF|, in %).

Arrays are (T, d) with d = 2 (planar: x forward, y up), 3 (y up), or 1 (the vertical axis alone); times are frames
of constant step ``dt``. Gravity defaults to 9.81 m/s² along −y (−9.81 for d = 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..modeling.model import Model, require_model
from ..util.checks import finite_number

__all__ = ["MassFit", "com_linear_map", "integrate_com", "fit_mass", "linear_residual_forces",
           "residual_force_percent", "com_positions"]

GRAVITY_2D = (0.0, -9.81)


def _check(com: ArrayLike | None, forces: ArrayLike, dt: float, gravity: ArrayLike | None, who: str):
    F = np.asarray(forces, float)
    if F.ndim != 2 or F.shape[1] not in (1, 2, 3) or F.shape[0] < 3:
        raise ValueError(f"{who}: forces must have shape (T, d), d = 1, 2 or 3, with T >= 3 frames, got {F.shape}")
    if not np.all(np.isfinite(F)):
        raise ValueError(f"{who}: forces contain NaN or infinite values (fill or cut the frames without force data "
                         "first)")
    finite_number(dt, f"{who}: dt", 0, False, "a positive time step in seconds")
    d = F.shape[1]
    if gravity is None:
        gravity = {1: (-9.81,), 2: GRAVITY_2D, 3: (0.0, -9.81, 0.0)}[d]
    g = _vector(gravity, d, f"{who}: gravity", "like the forces")
    if com is None:
        return None, F, g
    c = np.asarray(com, float)
    if c.shape != F.shape:
        raise ValueError(f"{who}: com has shape {c.shape} but forces {F.shape}: one position and one force per frame")
    if not np.all(np.isfinite(c)):
        raise ValueError(f"{who}: com contains NaN or infinite values")
    return c, F, g


def _vector(value: ArrayLike, d: int, name: str, why: str = "") -> np.ndarray:
    """``value`` as d finite numbers; ``ValueError`` naming ``name`` otherwise."""
    try:
        v = np.asarray(value, float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be {d} numbers, got {value!r}") from None
    if v.shape != (d,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be {d} finite numbers{' ' + why if why else ''}, got {value!r}")
    return v


def _double_sums(F: np.ndarray, dt: float) -> np.ndarray:
    """S_t = Δt² Σ_{k<t} Σ_{j≤k} F_j for t = 0 … T−1 (row t uses the forces of frames before t)."""
    velocity_sums = np.cumsum(F, axis=0) * dt  # Σ_{j≤k} F_j Δt
    S = np.zeros_like(F)
    S[1:] = np.cumsum(velocity_sums[:-1], axis=0) * dt
    return S


def com_linear_map(forces: ArrayLike, dt: float, gravity: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The affine map from the unknowns to the COM trajectory: ``c = A @ [c₀, v₀, μ] + b``.

    Parameters
    ----------
    forces : (T, d) array, N
        Total ground reaction force at each frame.
    dt : float, s
        Frame interval.
    gravity : (d,) array, optional
        Default (0, −9.81) in 2-D, (0, −9.81, 0) in 3-D.

    Returns
    -------
    A : (T·d, 2d + 1) array
        Rows frame by frame, axis by axis (x₀, y₀, x₁, …); columns c₀ (d), v₀ (d), μ = 1/m.
    b : (T·d,) array
        The gravity term G_t, flattened the same way.
    """
    _, F, g = _check(None, forces, dt, gravity, "com_linear_map")
    T, d = F.shape
    t = np.arange(T) * dt
    A = np.zeros((T, d, 2 * d + 1))
    A[:, :, :d] = np.eye(d)
    A[:, :, d:2 * d] = t[:, None, None] * np.eye(d)
    A[:, :, 2 * d] = _double_sums(F, dt)
    G = _double_sums(np.broadcast_to(g, F.shape), dt)
    return A.reshape(T * d, 2 * d + 1), G.reshape(T * d)


def integrate_com(initial_position: ArrayLike, initial_velocity: ArrayLike, mass: float, forces: ArrayLike, dt: float,
                  gravity: ArrayLike | None = None) -> np.ndarray:
    """The COM trajectory (T, d) the forces produce, step by step (semi-implicit Euler; the brute-force check of
    :func:`com_linear_map`)."""
    _, F, g = _check(None, forces, dt, gravity, "integrate_com")
    finite_number(mass, "integrate_com: mass", 0, False, "a positive number of kg")
    c = np.zeros_like(F)
    c[0] = _vector(initial_position, F.shape[1], "integrate_com: initial_position", "like the forces")
    v = _vector(initial_velocity, F.shape[1], "integrate_com: initial_velocity", "like the forces").copy()
    for t in range(F.shape[0] - 1):
        v = v + (F[t] / mass + g) * dt
        c[t + 1] = c[t] + v * dt
    return c


@dataclass
class MassFit:
    """The result of :func:`fit_mass`.

    Attributes
    ----------
    mass : float, kg
        1/μ.
    initial_position, initial_velocity : (d,) arrays, m and m/s
        c₀ and v₀ of the residual-free trajectory.
    com : (T, d) array, m
        The residual-free COM trajectory (the forces explain it exactly).
    position_rms, position_max : float, m
        RMS and largest distance between ``com`` and the measured COM positions.
    """

    mass: float
    initial_position: np.ndarray
    initial_velocity: np.ndarray
    com: np.ndarray
    position_rms: float
    position_max: float


def fit_mass(com: ArrayLike, forces: ArrayLike, dt: float, gravity: ArrayLike | None = None) -> MassFit:
    """Total mass and residual-free COM trajectory from COM positions and ground reaction forces (module docstring).

    Parameters
    ----------
    com : (T, d) array, m
        COM positions from the kinematics (e.g. inverse kinematics with a scaled model).
    forces : (T, d) array, N
        Total ground reaction force at the same frames.
    dt : float, s
        Frame interval.
    gravity : (d,) array, optional
        Default (0, −9.81) in 2-D, (0, −9.81, 0) in 3-D.

    Raises
    ------
    ValueError
        Bad shapes or values, or a fit whose inverse mass is not positive (the forces do not hold the body up:
        wrong units, a missing force plate, or the wrong sign of gravity).
    """
    c, F, g = _check(com, forces, dt, gravity, "fit_mass")
    A, b = com_linear_map(F, dt, g)
    scale = np.linalg.norm(A, axis=0)  # columns of very different size (m, m/s, m/kg): equilibrate
    x, *_ = np.linalg.lstsq(A / scale, c.reshape(-1) - b, rcond=None)
    x = x / scale
    d = F.shape[1]
    mu = x[2 * d]
    if not mu > 0:
        raise ValueError(f"fit_mass: the fitted inverse mass is {mu:.3g} 1/kg (not positive): the forces do not "
                         "support the body's weight; check their units and sign, the force plates and gravity")
    fitted = (A @ x + b).reshape(F.shape)
    err = np.linalg.norm(fitted - c, axis=1)
    return MassFit(float(1.0 / mu), x[:d], x[d:2 * d], fitted, float(np.sqrt(np.mean(err ** 2))), float(err.max()))


def linear_residual_forces(com: ArrayLike, forces: ArrayLike, mass: float, dt: float,
                           gravity: ArrayLike | None = None) -> np.ndarray:
    """Residual force m a_COM − F − m g (N) at frames 1 … T−2, the COM acceleration by the central second
    difference (c_{t+1} − 2 c_t + c_{t−1})/Δt², which the semi-implicit Euler steps of :func:`fit_mass` make
    exact (with the force of frame t).

    Returns an array of shape (T − 2, d): the force that would have to act besides the measured ground reaction
    forces and gravity for the motion to be dynamically consistent.
    """
    c, F, g = _check(com, forces, dt, gravity, "linear_residual_forces")
    finite_number(mass, "linear_residual_forces: mass", 0, False, "a positive number of kg")
    accel = (c[2:] - 2 * c[1:-1] + c[:-2]) / dt ** 2
    return mass * accel - F[1:-1] - mass * g


def residual_force_percent(residuals: ArrayLike, forces: ArrayLike) -> float:
    """RMS magnitude of the residual forces over the peak magnitude of the ground reaction force, in %.

    Hicks et al. (2015) and the AddBiomechanics paper's scripts draw the line at 5 %; AddBiomechanics reports
    below 2 % on its data sets.
    """
    R, F = np.asarray(residuals, float), np.asarray(forces, float)
    if R.ndim != 2 or F.ndim != 2 or R.shape[1] != F.shape[1] or R.shape[0] > F.shape[0] or R.size == 0:
        raise ValueError(f"residual_force_percent: residuals (K, d) and forces (T, d) must have the same d and "
                         f"K <= T (K = T − 2 from linear_residual_forces), got {R.shape} and {F.shape}")
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(F))):
        raise ValueError("residual_force_percent: residuals or forces contain NaN or infinite values")
    peak = float(np.max(np.linalg.norm(F, axis=1)))
    if not peak > 0:
        raise ValueError("residual_force_percent: the ground reaction forces are all zero")
    return 100.0 * float(np.sqrt(np.mean(np.sum(R ** 2, axis=1)))) / peak


def com_positions(model: Model, Q: ArrayLike) -> np.ndarray:
    """The whole body's centre of mass (T, 3) in the world frame, m, at each pose of ``Q`` (T, nq), in
    ``model.coordinates`` order — by the engine's kinematics (any model: OpenSim custom joints included), the
    ``com`` input of :func:`fit_mass` in 3-D."""
    from ..engine.kernel import kernel_for

    require_model(model, "com_positions")
    Q = np.atleast_2d(np.asarray(Q, float))
    nq = len(model.coordinates)
    if Q.ndim != 2 or Q.shape[1] != nq or not np.all(np.isfinite(Q)):
        raise ValueError(f"com_positions: Q must be (T, {nq}) finite coordinates (model.coordinates order), got "
                         f"shape {Q.shape}")
    kernel = kernel_for(model.skeleton(constraints=False))
    return kernel.outputs(["/com_position"], Q, np.zeros_like(Q))["/com_position"]
