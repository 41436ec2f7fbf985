"""Checks of scalar arguments shared by every layer: a whole number, a finite number within a bound.

Each returns the value as a plain Python ``int``/``float`` or raises an exception whose message names the
argument: ``TypeError`` when the value is not a number at all (``"0.01"``, ``True``, ``None``), ``ValueError``
when it is one but out of range (``nan``, ``inf``, ``0`` where a positive value is needed). Never a silent
rounding or conversion of text.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

__all__ = ["finite_number", "flag", "one_of", "whole_number"]


def whole_number(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an ``int`` >= ``minimum`` (a mesh size, an iteration limit).

    ``TypeError`` naming ``name`` for a non-integer (``2.5``, ``"10"``, ``True``), ``ValueError`` for one below
    ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def finite_number(value: Any, name: str, minimum: float | None = None, inclusive: bool = True,
                  what: str | None = None) -> float:
    """``value`` as a finite ``float``, at least ``minimum`` (``inclusive``) or above it (not ``inclusive``).

    Parameters
    ----------
    value
        Any real number (Python or numpy, not ``bool``).
    name
        How the message names the argument, e.g. ``"lowpass: dt"``.
    minimum, inclusive
        The lower bound, if any: ``minimum=0, inclusive=False`` asks for a positive number.
    what
        What the message says the value must be (``"a positive time step in seconds"``); by default
        ``"a finite number"`` followed by the bound.

    Raises
    ------
    TypeError
        ``value`` is not a real number.
    ValueError
        It is NaN, infinite or out of the bound.
    """
    if what is None:
        what = "a finite number" + ("" if minimum is None else f" {'>=' if inclusive else '>'} {minimum:g}")
    message = f"{name} must be {what}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(message)
    x = float(value)
    if not math.isfinite(x) or (minimum is not None and (x < minimum if inclusive else x <= minimum)):
        raise ValueError(message)
    return x


def one_of(value: Any, name: str, options: Sequence[str]) -> str:
    """``value`` if it is one of ``options`` (names such as a scheme or a linear solver); a ``ValueError`` naming
    ``name`` and listing the options otherwise."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    return value


def flag(value: Any, name: str) -> bool:
    """``value`` if it is a ``bool`` (``True``/``False``, numpy's too); a ``TypeError`` naming ``name`` for
    anything else (``"yes"``, ``1``): text would always count as true."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)
