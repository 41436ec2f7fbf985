"""Reference tables given in any of the forms tools accept (a trajectory, an ``.sto`` file, arrays)."""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from scipy.interpolate import BSpline

from ..util.checks import finite_number, whole_number
from . import sto
from .trajectory import Trajectory, read_trajectory

__all__ = ["reference_columns", "ReferenceLike", "filter_lowpass", "interpolating_spline"]

#: A reference table in any form tools accept: a :class:`Trajectory` (its states), a path to an ``.sto``
#: table, or ``(time, {column: values})``.
ReferenceLike = Union[Trajectory, str, os.PathLike, tuple[ArrayLike, Mapping[str, ArrayLike]]]


def reference_columns(reference: Any, what: str = "reference") -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    """``(time, {name: values}, description)`` of a reference table.

    Parameters
    ----------
    reference : Trajectory, str / path-like, or (time, {name: values})
        A trajectory or solution (its states), a path to an ``.sto`` table (a
        Moco trajectory file contributes its states only, like
        ``MocoTrajectory::exportToStatesTable``), or arrays.
    what : str
        The argument's name, used in error messages (e.g. ``"states_reference"``).

    Returns
    -------
    time : ndarray (n,)
    columns : dict of str -> ndarray (n,)
    description : str
        Where the table came from, for error messages.

    Raises
    ------
    ValueError
        A table in degrees (``inDegrees=yes``): moco_lab needs radians.
    TypeError
        Any other kind of object.
    """
    if isinstance(reference, Trajectory):
        # A Solution that failed is sealed: reading .states raises a clear error.
        return reference.time, dict(reference.states), "trajectory"
    if isinstance(reference, (str, os.PathLike)):
        path = os.fspath(reference)
        time, columns, metadata = sto.read_table(path)
        if str(metadata.get("inDegrees", "no")).strip().lower() in ("yes", "true", "1"):
            raise ValueError(f"{what} {path!r} is in degrees (inDegrees=yes); moco_lab needs radians "
                             "(convert the rotational coordinates and write inDegrees=no).")
        if sto.is_trajectory_header(metadata):
            traj = read_trajectory(path)
            return traj.time, dict(traj.states), f"file {path!r}"
        return time, columns, f"file {path!r}"
    if isinstance(reference, tuple) and len(reference) == 2:
        time, columns = reference
        if not isinstance(columns, dict):
            raise TypeError(f"A (time, columns) {what} needs a dict {{name: values}} as columns")
        return np.asarray(time, float), {str(k): np.asarray(v, float) for k, v in columns.items()}, "table"
    raise TypeError(f"{what} must be a Trajectory, a path to an .sto table, or (time, {{name: values}}); "
                    f"got {type(reference).__name__}")


def _uniform_step(time: np.ndarray) -> float | None:
    """The sampling interval if ``time`` is uniform to OpenSim's tolerance (``isUniform``: 4 ulps of the largest
    time), else None."""
    tol = 4 * np.finfo(float).eps * max(abs(time[0]), abs(time[-1]))
    step = (time[-1] - time[0]) / (time.size - 1)
    return float(step) if np.all(np.abs(np.diff(time) - step) <= max(tol, np.finfo(float).eps)) else None


def _lowpass_iir(dt: float, cutoff: float, signal: np.ndarray) -> np.ndarray:
    """OpenSim's ``Signal::LowpassIIR``: a third-order Butterworth filter run forwards, then backwards, each pass
    started from the first three raw samples. ``signal`` (N, k), columns filtered independently."""
    fs = 1.0 / dt
    if cutoff >= 0.5 * fs:
        cutoff = 0.49 * fs  # as OpenSim (it warns)
    wa = np.tan(2 * np.pi * cutoff * dt / 2.0)
    wa2, wa3 = wa * wa, wa * wa * wa
    denom = (wa + 1) * (wa2 + wa + 1.0)
    a = np.array([wa3, 3 * wa3, 3 * wa3, wa3]) / denom
    b = np.array([1.0, (3 * wa3 + 2 * wa2 - 2 * wa - 3) / denom, (3 * wa3 - 2 * wa2 - 2 * wa + 3) / denom,
                  (wa - 1) * (wa2 - wa + 1) / denom])

    def one_pass(x):
        y = x.copy()
        for i in range(3, x.shape[0]):
            y[i] = (a[0] * x[i] + a[1] * x[i - 1] + a[2] * x[i - 2] + a[3] * x[i - 3]
                    - b[1] * y[i - 1] - b[2] * y[i - 2] - b[3] * y[i - 3])
        return y

    return one_pass(one_pass(signal)[::-1])[::-1]


def filter_lowpass(time: ArrayLike, columns: Mapping[str, ArrayLike], cutoff_frequency: float, *,
                   keep_padding: bool = False) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Low-pass filter every column of a table as Moco's ``TabOpLowPassFilter(cutoff)`` does.

    OpenSim 4.6's recipe (``TableUtilities::filterLowpass`` with padding, then trimmed back to the original time
    range): each column is padded at both ends with half its length of reflected, negated samples (which keeps
    the end values and slopes), filtered by a third-order Butterworth IIR filter forwards and backwards (zero
    phase lag; the effective order is six), and cut back to the original rows.

    Parameters
    ----------
    time : (n,) array, s
        Sample times. A table that is not uniformly sampled to OpenSim's tolerance (4 ulps; times written with a
        few decimals, such as steps of 1/60 s, are not) is first resampled as OpenSim does: from the first time
        in steps of the smallest interval while not past the last time, values from the natural quintic spline
        (:func:`interpolating_spline`). The returned times are then those, not yours (a ``UserWarning`` says
        so).
    columns : dict of str -> (n,) array
    cutoff_frequency : float, Hz
        Positive; at or above half the sampling frequency it is lowered to 0.49 of it, as OpenSim does.
    keep_padding : bool
        Return the padded rows too (their times continue the step beyond both ends): OpenSim's
        ``InverseDynamicsTool`` fits its splines to the padded, filtered table, so that the ends of the motion
        are not spline ends.

    Returns
    -------
    time : (m,) array
        The same times, or the resampled ones.
    columns : dict of str -> (m,) array
        Filtered, in the same order.

    Raises
    ------
    ValueError
        A non-positive cutoff, fewer than 4 rows, or times that do not increase.
    """
    t = np.asarray(time, float).reshape(-1)
    finite_number(cutoff_frequency, "filter_lowpass: the cutoff frequency", 0, False, "positive (Hz)")
    if t.size < 4:
        raise ValueError(f"filter_lowpass: needs at least 4 rows, got {t.size}")
    if np.any(np.diff(t) <= 0):
        raise ValueError("filter_lowpass: times must increase strictly")
    names = list(columns)
    data = np.column_stack([np.asarray(columns[k], float).reshape(-1) for k in names]) if names else \
        np.zeros((t.size, 0))
    if data.shape[0] != t.size:
        raise ValueError(f"filter_lowpass: columns have {data.shape[0]} rows, time has {t.size}")
    dt = _uniform_step(t)
    if dt is None:  # OpenSim's resampleWithInterval(table, smallest interval): times by repeated addition
        import warnings

        dt = float(np.diff(t).min())
        times, tk = [], float(t[0])
        while tk <= t[-1]:
            times.append(tk)
            tk += dt
        warnings.warn(f"filter_lowpass: the table is not uniformly sampled; resampled with interval {dt!r} s "
                      f"({len(times)} rows from {t[0]:g} to {times[-1]!r} s), as OpenSim does", UserWarning,
                      stacklevel=2)
        new = np.array(times)
        data = np.column_stack([interpolating_spline(t, data[:, j])(new) for j in range(data.shape[1])]) \
            if names else np.zeros((new.size, 0))
        t = new
    pad = t.size // 2
    if pad:  # OpenSim's Signal::Pad: reflect about the end samples, keeping value and slope
        head = 2.0 * data[0] - data[pad:0:-1]
        tail = 2.0 * data[-1] - data[-2:-2 - pad:-1]
        data = np.vstack([head, data, tail])
    out = _lowpass_iir(dt, float(cutoff_frequency), data)
    if keep_padding:
        t = np.r_[t[0] - dt * np.arange(pad, 0, -1), t, t[-1] + dt * np.arange(1, pad + 1)]
    else:
        out = out[pad:pad + t.size]
    return t.copy(), {k: out[:, j].copy() for j, k in enumerate(names)}


def interpolating_spline(time: ArrayLike, values: ArrayLike, degree: int = 5, ends: str = "natural") -> BSpline:
    """The natural interpolating spline of odd ``degree`` through the samples: OpenSim's ``GCVSpline`` /
    ``GCVSplineSet`` with zero error variance (Moco's default way of turning a reference table into functions of
    time; degree 5 unless the table has fewer than 6 rows, then ``rows − 1`` rounded down to odd).

    ``values`` is ``(n,)`` or ``(n, k)`` (k columns splined at once). ``ends="not-a-knot"`` instead of the natural
    end conditions: :func:`scipy.interpolate.make_interp_spline`'s default. Returns a
    :class:`scipy.interpolate.BSpline` (call it for values, ``.derivative()`` for slopes): the spline
    ``make_interp_spline`` builds (the same knots and conditions; its coefficients equal to rounding), its
    collocation system solved by :func:`moco_lab.symbolic.batched.solve_banded` instead of LAPACK, so that the
    coefficients are the same bits on every processor (OpenBLAS' AVX-512 kernels round LAPACK's banded solve
    differently, and a tracking solve's path follows its reference's last bits).
    """
    t = np.asarray(time, float).reshape(-1)
    y = np.asarray(values, float)
    if y.ndim == 0 or y.shape[0] != t.size:
        raise ValueError(f"interpolating_spline: {y.shape[0] if y.ndim else 0} rows of values for {t.size} times")
    if whole_number(degree, "interpolating_spline: degree") % 2 == 0:
        raise ValueError(f"interpolating_spline: degree must be odd (1, 3, 5, ...), got {degree}")
    if ends not in ("natural", "not-a-knot"):
        raise ValueError(f"interpolating_spline: ends must be 'natural' or 'not-a-knot', got {ends!r}")
    if not (np.all(np.isfinite(t)) and np.all(np.diff(t) > 0)):
        raise ValueError("interpolating_spline: times must be finite and increase strictly")
    if not np.all(np.isfinite(y)):
        raise ValueError("interpolating_spline: values contain NaN or infinite values")
    degree = min(int(degree), t.size - 1)
    if degree % 2 == 0:
        degree -= 1
    if degree < 1:
        raise ValueError("interpolating_spline: needs at least 2 samples")
    return _interpolating_bspline(t, y, degree, ends == "natural")


def _interpolating_bspline(x: np.ndarray, y: np.ndarray, k: int, natural: bool) -> BSpline:
    """:func:`scipy.interpolate.make_interp_spline`'s spline of odd degree ``k`` (natural: derivatives m .. 2m − 2
    zero at both ends, m = (k + 1) / 2; else not-a-knot), its banded system solved the same way everywhere."""
    from scipy.interpolate import BSpline as _BSpline

    from ..symbolic.batched import solve_banded

    m = (k + 1) // 2
    if natural and k > 1:   # make_interp_spline's knots with end derivatives given: the samples, ends k+1 times
        knots = np.r_[(x[0],) * k, x, (x[-1],) * k]
        orders = list(range(m, 2 * m - 1))
    else:                   # not-a-knot (and degree 1): interior samples near the ends are not knots
        inner = x[m:-m] if m else x[1:-1]
        knots = np.r_[(x[0],) * (k + 1), inner, (x[-1],) * (k + 1)]
        orders = []
    nc = knots.size - k - 1
    design = _BSpline.design_matrix(x, knots, k).tocsr()   # k + 1 basis values per sample (de Boor's recurrence)
    first, rows = [], []

    def end_rows(at: float, start: int) -> None:   # derivative conditions: the k + 1 basis functions alive there
        unit = np.zeros((nc, k + 1))
        unit[start + np.arange(k + 1), np.arange(k + 1)] = 1.0
        for nu in orders:
            first.append(start)
            rows.append(_BSpline(knots, unit, k).derivative(nu)(at))

    end_rows(x[0], 0)
    for i in range(x.size):
        lo, hi = design.indptr[i], design.indptr[i + 1]
        cols = design.indices[lo:hi]
        row = np.zeros(k + 1)
        row[cols - cols.min()] = design.data[lo:hi]
        first.append(int(cols.min()))
        rows.append(row)
    end_rows(x[-1], nc - k - 1)
    rhs = np.concatenate([np.zeros((len(orders),) + y.shape[1:]), y, np.zeros((len(orders),) + y.shape[1:])])
    flat = rhs.reshape(nc, -1)
    coef = solve_banded(np.array(first), np.array(rows), flat).reshape(rhs.shape)
    return _BSpline.construct_fast(knots, coef, k)
