"""Bounds on variables, as Moco's ``MocoBounds`` / ``MocoInitialBounds``."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, Union

__all__ = ["Bounds", "BoundsLike"]


@dataclass(frozen=True)
class Bounds:
    """Closed interval ``[lower, upper]``; infinite ends mean unbounded."""

    lower: float = -math.inf
    upper: float = math.inf

    def __post_init__(self):
        for v in (self.lower, self.upper):
            if isinstance(v, float) and math.isnan(v):
                raise ValueError("Bounds cannot be NaN")
        if self.lower > self.upper:
            raise ValueError(f"Inverted bounds: lower {self.lower} > upper {self.upper}")

    @classmethod
    def parse(cls, value: Any, what: str = "bounds") -> "Bounds | None":
        """``None`` -> None; a number ``v`` -> ``[v, v]``; a pair ``(lo, hi)`` -> ``[lo, hi]``."""
        if value is None:
            return None
        if isinstance(value, Bounds):
            return value
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{what}: expected a number or a (lower, upper) pair, got {value!r}")
        if isinstance(value, Real):
            return cls._checked(float(value), float(value), what, value)
        try:
            seq = list(value)
        except TypeError:
            raise TypeError(f"{what}: expected a number or a (lower, upper) pair, got {value!r}") from None
        if len(seq) == 0:
            return None
        if len(seq) == 1:
            return cls.parse(seq[0], what)
        if len(seq) != 2:
            raise ValueError(f"{what}: expected (lower, upper), got {value!r}")
        try:
            lo, hi = (float(s) for s in seq)
        except (TypeError, ValueError):
            raise TypeError(f"{what}: bounds must be numbers, got {value!r}") from None
        return cls._checked(lo, hi, what, value)

    @classmethod
    def _checked(cls, lo: float, hi: float, what: str, value: Any) -> "Bounds":
        if math.isnan(lo) or math.isnan(hi):
            raise ValueError(f"{what}: NaN is not a bound (got {value!r})")
        if lo > hi:
            raise ValueError(f"{what}: inverted bounds, lower {lo} > upper {hi}")
        if lo == hi and math.isinf(lo):
            raise ValueError(f"{what}: a value cannot be fixed at {lo} (got {value!r}); fix it at a finite "
                             "number, or give a range such as (-inf, inf) to leave it free")
        if lo == math.inf or hi == -math.inf:
            raise ValueError(f"{what}: ({lo}, {hi}) leaves no finite value (got {value!r})")
        return cls(lo, hi)

    @property
    def is_fixed(self) -> bool:
        """True if ``lower == upper``."""
        return self.lower == self.upper

    @property
    def is_finite(self) -> bool:
        """True if both ends are finite."""
        return math.isfinite(self.lower) and math.isfinite(self.upper)

    def contains(self, other: "Bounds") -> bool:
        """True if ``other`` lies inside these bounds."""
        return self.lower <= other.lower and other.upper <= self.upper

    def midpoint_guess(self) -> float:
        """Moco's guess from bounds: midpoint if finite, the finite side, else 0."""
        lo, hi = self.lower, self.upper
        if math.isfinite(lo) and math.isfinite(hi):
            return 0.5 * (lo + hi)
        if math.isfinite(lo):
            return lo
        if math.isfinite(hi):
            return hi
        return 0.0

    def as_list(self) -> list[float]:
        """``[lower, upper]`` with infinities as strings (JSON-safe)."""
        return [_num(self.lower), _num(self.upper)]

    @classmethod
    def from_list(cls, seq: Sequence[float]) -> "Bounds":
        """Bounds from :meth:`as_list`'s output."""
        return cls(_unnum(seq[0]), _unnum(seq[1]))


def _num(v: float):
    """JSON-friendly number (JSON has no infinity)."""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _unnum(v) -> float:
    return float(v)


#: What ``set_state_info`` and friends accept as bounds: None (unset), a number ``v`` (fixed: ``[v, v]``),
#: a pair ``(lower, upper)`` or a :class:`Bounds`.
BoundsLike = Union[None, float, Sequence[float], Bounds]
