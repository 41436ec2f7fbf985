"""Known answers and error measures for the verification problems.

Closed forms
    Problem (a), the linear minimum-effort problem of :func:`moco_lab.examples.linear_study`
    (Kirk 2004, Example 5.1-1; the Moco paper's Eq. 2): :func:`linear_exact_states`,
    :func:`linear_exact_control`, :data:`LINEAR_J_STAR`. Problem (b), the minimum-time
    sliding mass of :func:`moco_lab.examples.sliding_mass_study`:
    :func:`sliding_mass_tf_star`, :func:`sliding_mass_exact_states`,
    :func:`sliding_mass_exact_control`.
Error measures
    :func:`state_error` (the Moco paper's ``sqrt(∫ Σ err² dt / T)``),
    :func:`control_error` (RMS over the grid points), :func:`solution_errors`
    (all of them against a known solution) and :func:`observed_orders` (orders of
    accuracy from a mesh-refinement study).

A closed form is a function ``t -> {name: values}`` over the problem's state or
control names, so it can be compared with a :class:`~moco_lab.results.trajectory.Trajectory`
name by name::

    import moco_lab as ml
    sol = ml.examples.linear_study("kirk", "hermite-simpson", "explicit", 50).solve()
    ml.analysis.state_error(sol, ml.analysis.linear_exact_states)   # about 5e-8
    sol.objective - ml.analysis.LINEAR_J_STAR["kirk"]

``tests/test_analysis.py`` checks these closed forms against an independent
derivation (``tests/analytic.py``).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..results.trajectory import Solution, Trajectory

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "LINEAR_C2", "LINEAR_C3", "LINEAR_EFFORT_INTEGRAL", "LINEAR_J_STAR",
    "linear_exact_states", "linear_exact_control",
    "sliding_mass_tf_star", "sliding_mass_exact_states", "sliding_mass_exact_control",
    "METRIC_LABELS", "state_error", "control_error", "solution_errors", "observed_orders",
]

# ----------------------------------------------------- (a) linear problem
_T = 2.0  # fixed final time; from rest to q = 5, u = 2
_LQ, _LU = "/jointset/j/coord/value", "/jointset/j/coord/speed"
_LX = "/forceset/coordinateactuator"


def _linear_constants() -> tuple[float, float]:
    """Kirk's constants ``(c2, c3)``: the rows of ``A`` are ``q(2)`` and ``u(2)`` as functions of them."""
    e, em = math.exp(_T), math.exp(-_T)
    A = np.array([[-_T - em / 2 + e / 2, 1 - em / 2 - e / 2],
                  [-1 + em / 2 + e / 2, em / 2 - e / 2]])
    c2, c3 = np.linalg.solve(A, [5.0, 2.0])
    return float(c2), float(c3)


#: Kirk's constants of the linear problem's optimum (−7.2917920742, −6.1048273597).
LINEAR_C2, LINEAR_C3 = _linear_constants()


def _effort_integral(a: float, b: float, sign: float) -> float:
    """``∫₀ᵀ (a + b e^{sign t})² dt`` in closed form."""
    return (a * a * _T + 2 * a * b * (math.exp(sign * _T) - 1) / sign
            + b * b * (math.exp(2 * sign * _T) - 1) / (2 * sign))


#: ``∫₀² x*(t)² dt`` of the optimal control, per variant (33.5014467936 for ``"kirk"``,
#: 25.5014467936 for ``"moco_test"``); an effort goal of weight ``w`` has ``J* = w`` times this.
LINEAR_EFFORT_INTEGRAL = {
    "kirk": _effort_integral(-LINEAR_C2, LINEAR_C2 - LINEAR_C3, 1.0),
    "moco_test": _effort_integral(LINEAR_C2, -(LINEAR_C2 + LINEAR_C3), -1.0),
}
#: Optimal objective of :func:`moco_lab.examples.linear_study` (goal weight 0.5), per variant:
#: 16.7507233968 for ``"kirk"``, 12.7507233968 for ``"moco_test"``.
LINEAR_J_STAR = {variant: 0.5 * value for variant, value in LINEAR_EFFORT_INTEGRAL.items()}


def linear_exact_states(t: ArrayLike) -> dict[str, np.ndarray]:
    """Optimal states of the linear problem (the same for both variants).

    Parameters
    ----------
    t : array_like
        Times in ``[0, 2]``.

    Returns
    -------
    dict of str to ndarray
        ``/jointset/j/coord/value`` and ``/jointset/j/coord/speed``::

            q(t) = c2 (−t − e^−t/2 + e^t/2) + c3 (1 − e^−t/2 − e^t/2),   u = q̇
    """
    t = np.asarray(t, float)
    em, ep = np.exp(-t), np.exp(t)
    q = LINEAR_C2 * (-t - em / 2 + ep / 2) + LINEAR_C3 * (1 - em / 2 - ep / 2)
    u = LINEAR_C2 * (-1 + em / 2 + ep / 2) + LINEAR_C3 * (em / 2 - ep / 2)
    return {_LQ: q, _LU: u}


def linear_exact_control(t: ArrayLike, variant: str = "kirk") -> np.ndarray:
    """Optimal control of the linear problem.

    Parameters
    ----------
    t : array_like
        Times in ``[0, 2]``.
    variant : {"kirk", "moco_test"}
        ``"kirk"`` (``u̇ = −u + x``): ``x = −c2 + (c2 − c3) e^t``;
        ``"moco_test"`` (``u̇ = u + x``): ``x = c2 − (c2 + c3) e^−t``.

    Returns
    -------
    ndarray
        The force ``x`` (``/forceset/coordinateactuator``) at ``t``.
    """
    t = np.asarray(t, float)
    if variant == "kirk":
        return -LINEAR_C2 + (LINEAR_C2 - LINEAR_C3) * np.exp(t)
    if variant == "moco_test":
        return LINEAR_C2 - (LINEAR_C2 + LINEAR_C3) * np.exp(-t)
    raise ValueError(f"Unknown variant {variant!r}; choose 'kirk' or 'moco_test'.")


# ------------------------------------------------------ (b) sliding mass
_SQ, _SU, _SX = "/slider/position/value", "/slider/position/speed", "/actuator"


def sliding_mass_tf_star(mass: float = 2.0, distance: float = 1.0, max_force: float = 50.0) -> float:
    """Minimum time to move a mass ``distance`` from rest to rest with ``|F| <= max_force``.

    Parameters
    ----------
    mass, distance, max_force : float
        In kg, m and N (defaults: problem (b)).

    Returns
    -------
    float
        ``t_f* = 2 sqrt(mass distance / max_force)`` (0.4 s for the defaults).
    """
    return 2.0 * math.sqrt(mass * distance / max_force)


def sliding_mass_exact_states(t: ArrayLike, mass: float = 2.0, distance: float = 1.0,
                              max_force: float = 50.0) -> dict[str, np.ndarray]:
    """Bang-bang optimal states: accelerate at ``F/m`` up to ``t_f*/2``, then brake.

    Parameters
    ----------
    t : array_like
        Times in ``[0, t_f*]``.
    mass, distance, max_force : float
        As in :func:`sliding_mass_tf_star`.

    Returns
    -------
    dict of str to ndarray
        ``/slider/position/value`` and ``/slider/position/speed``.
    """
    t = np.asarray(t, float)
    tf = sliding_mass_tf_star(mass, distance, max_force)
    a = max_force / mass
    first = t <= tf / 2
    q = np.where(first, 0.5 * a * t ** 2, distance - 0.5 * a * (tf - t) ** 2)
    u = np.where(first, a * t, a * (tf - t))
    return {_SQ: q, _SU: u}


def sliding_mass_exact_control(t: ArrayLike, mass: float = 2.0, distance: float = 1.0,
                               max_force: float = 50.0) -> np.ndarray:
    """Bang-bang optimal force (``/actuator``): ``+max_force`` up to ``t_f*/2``, then ``-max_force``.

    Parameters
    ----------
    t, mass, distance, max_force
        As in :func:`sliding_mass_exact_states`.

    Returns
    -------
    ndarray
    """
    tf = sliding_mass_tf_star(mass, distance, max_force)
    return np.where(np.asarray(t, float) <= tf / 2, max_force, -max_force)


# --------------------------------------------------------- error measures
#: Error measures of :func:`solution_errors` (key -> label shown in plots and tables).
METRIC_LABELS = {
    "states": "states RMS error",
    "controls": "control RMS error",
    "objective": "|J − J*|",
    "final_time": "|t_f − t_f*|",
}


def _squared_error(group: Mapping[str, np.ndarray], exact: Callable[[np.ndarray], dict], t: np.ndarray) -> np.ndarray:
    """``Σ_k (y_k(t) − y_k*(t))²`` over the names ``exact`` returns, at the times ``t``."""
    return sum((np.asarray(group[name], float) - ref) ** 2 for name, ref in exact(t).items())


def state_error(trajectory: Trajectory, exact_states: Callable[[np.ndarray], dict]) -> float:
    """The Moco paper's state error of ``trajectory`` (mocopaper ``analytic.py``).

    Parameters
    ----------
    trajectory : Trajectory
        A solution (or any trajectory) on its own time grid.
    exact_states : callable ``t -> {name: values}``
        The exact states; the error sums over the names it returns.

    Returns
    -------
    float
        ``sqrt(1/T ∫ Σ_k (y_k(t) − y_k*(t))² dt)``, the integral taken with the
        trapezoidal rule over the trajectory's grid, ``T = t_f − t_0``.
    """
    t = np.asarray(trajectory.time, float)
    return float(np.sqrt(np.trapezoid(_squared_error(trajectory.states, exact_states, t), t) / (t[-1] - t[0])))


def control_error(trajectory: Trajectory, exact_controls: Callable[[np.ndarray], dict]) -> float:
    """Root-mean-square control error ``sqrt(1/n Σ_j Σ_k (x_k(t_j) − x_k*(t_j))²)`` over the ``n`` grid points.

    Parameters
    ----------
    trajectory, exact_controls
        As ``trajectory`` and ``exact_states`` of :func:`state_error`, for the controls.

    Returns
    -------
    float
    """
    t = np.asarray(trajectory.time, float)
    return float(np.sqrt(np.mean(_squared_error(trajectory.controls, exact_controls, t))))


def solution_errors(reference: str | Callable, solution: Trajectory, metrics: Iterable[str] | None = None) -> dict[str, float]:
    """Errors of ``solution`` against a known solution.

    Parameters
    ----------
    reference : object or None
        The known solution, with attributes ``states`` and ``controls``
        (callables ``t -> {name: values}`` or None) and ``objective`` and
        ``final_time`` (floats or None), e.g. a :class:`moco_lab.ui.demos.Reference`.
        None gives no errors.
    solution : Trajectory or Solution
        The numerical solution (``objective`` needs a :class:`Solution`).
    metrics : iterable of str, optional
        Keys of :data:`METRIC_LABELS` to compute (default: all).

    Returns
    -------
    dict of str to float
        ``states``: :func:`state_error`; ``controls``: :func:`control_error`;
        ``objective``: ``|J − J*|``; ``final_time``: ``|t_f − t_f*|``.
        Metrics the reference cannot provide are left out.
    """
    if reference is None:
        return {}
    metrics = tuple(metrics) if metrics is not None else tuple(METRIC_LABELS)
    out = {}
    if "states" in metrics and reference.states is not None:
        out["states"] = state_error(solution, reference.states)
    if "controls" in metrics and reference.controls is not None:
        out["controls"] = control_error(solution, reference.controls)
    if "objective" in metrics and reference.objective is not None and isinstance(solution, Solution):
        out["objective"] = abs(solution.objective - reference.objective)
    if "final_time" in metrics and reference.final_time is not None:
        out["final_time"] = abs(solution.final_time - reference.final_time)
    return out


def observed_orders(N: Sequence[float], errors: Sequence[float]) -> tuple[list[float], float]:
    """Observed orders of accuracy of a mesh-refinement study (error ≈ C N^−p).

    Parameters
    ----------
    N : sequence of float
        Mesh sizes, increasing.
    errors : sequence of float
        The error at each mesh size.

    Returns
    -------
    pairs : list of float
        ``log(e_i / e_{i+1}) / log(N_{i+1} / N_i)`` between consecutive meshes
        (``log2(e_i / e_{i+1})`` when N doubles); ``nan`` where an error is
        non-positive or not finite.
    fit : float
        Minus the least-squares slope of ``log e`` against ``log N`` over the
        usable errors (``nan`` with fewer than two).
    """
    N = np.asarray(N, float)
    e = np.asarray(errors, float)
    ok = np.isfinite(e) & (e > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pair = np.log(e[:-1] / e[1:]) / np.log(N[1:] / N[:-1])
    pair = [float(p) if usable and np.isfinite(p) else float("nan") for p, usable in zip(pair, ok[:-1] & ok[1:])]
    fit = float(-np.polyfit(np.log(N[ok]), np.log(e[ok]), 1)[0]) if ok.sum() >= 2 else float("nan")
    return pair, fit
