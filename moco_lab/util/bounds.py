"""Bounds on variables, as Moco's ``MocoBounds`` / ``MocoInitialBounds``."""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real


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
    def parse(cls, value, what: str = "bounds") -> "Bounds | None":
        """``None`` -> None; a number ``v`` -> ``[v, v]``; a pair ``(lo, hi)`` -> ``[lo, hi]``."""
        if value is None:
            return None
        if isinstance(value, Bounds):
            return value
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{what}: expected a number or a (lower, upper) pair, got {value!r}")
        if isinstance(value, Real):
            return cls(float(value), float(value))
        try:
            seq = list(value)
        except TypeError:
            raise TypeError(f"{what}: expected a number or a (lower, upper) pair, got {value!r}") from None
        if len(seq) == 0:
            return None
        if len(seq) == 1:
            return cls(float(seq[0]), float(seq[0]))
        if len(seq) != 2:
            raise ValueError(f"{what}: expected (lower, upper), got {value!r}")
        lo, hi = (float(s) for s in seq)
        if lo > hi:
            raise ValueError(f"{what}: inverted bounds, lower {lo} > upper {hi}")
        return cls(lo, hi)

    @property
    def is_fixed(self) -> bool:
        return self.lower == self.upper

    @property
    def is_finite(self) -> bool:
        return math.isfinite(self.lower) and math.isfinite(self.upper)

    def contains(self, other: "Bounds") -> bool:
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

    def as_list(self):
        return [_num(self.lower), _num(self.upper)]

    @classmethod
    def from_list(cls, seq) -> "Bounds":
        return cls(_unnum(seq[0]), _unnum(seq[1]))


def _num(v: float):
    """JSON-friendly number (JSON has no infinity)."""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _unnum(v) -> float:
    return float(v)
