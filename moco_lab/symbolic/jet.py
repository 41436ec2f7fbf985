"""Second-order forward differentiation of small numeric functions: a value with its gradient and Hessian.

A :class:`Jet` carries a value and its exact first and second derivatives with respect to seed variables,
stored sparsely (only the variables it depends on), and propagates them through ``+ − × /``, powers and
square roots. The optimizer's exact Hessian uses it for the few functions written in plain Python arithmetic
rather than derived as an expression graph: the endpoint functions of goals (average speed, division by the
duration or by the centre of mass' displacement), which read a handful of the many numbers they are given.

>>> x, y = Jet.variables([2.0, 3.0])
>>> f = x * y + x ** 2
>>> f.value, f.gradient(2).tolist(), f.hessian(2).tolist()
(10.0, [7.0, 2.0], [[2.0, 1.0], [1.0, 0.0]])
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["Jet", "jet_sqrt", "jet_abs_power", "jet_math"]


class Jet:
    """A scalar with its exact gradient (``{i: ∂/∂v_i}``) and Hessian (``{(i, j): ∂²/∂v_i∂v_j}``, ``i <= j``)."""

    __slots__ = ("value", "grad", "hess")
    __array_priority__ = 1000

    def __init__(self, value: float, grad: dict | None = None, hess: dict | None = None):
        self.value = float(value)
        self.grad = grad if grad is not None else {}
        self.hess = hess if hess is not None else {}

    @staticmethod
    def variables(values: Sequence[float]) -> list["Jet"]:
        """One seed variable per value."""
        return [Jet(v, {k: 1.0}) for k, v in enumerate(values)]

    # -- conversions
    def gradient(self, m: int) -> np.ndarray:
        """The gradient as a dense vector over ``m`` seed variables."""
        out = np.zeros(m)
        for i, v in self.grad.items():
            out[i] += v
        return out

    def hessian(self, m: int) -> np.ndarray:
        """The Hessian as a dense symmetric ``(m, m)`` matrix."""
        out = np.zeros((m, m))
        for (i, j), v in self.hess.items():
            out[i, j] += v
            if i != j:
                out[j, i] += v
        return out

    # -- arithmetic
    @staticmethod
    def _lift(o: Any) -> "Jet":
        return o if isinstance(o, Jet) else Jet(float(o))

    @staticmethod
    def _combine(a: dict, b: dict, fa: float, fb: float) -> dict:
        out = {k: fa * v for k, v in a.items()} if fa != 1.0 else dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0.0) + fb * v
        return out

    def __add__(self, o):
        o = self._lift(o)
        return Jet(self.value + o.value, self._combine(self.grad, o.grad, 1.0, 1.0),
                   self._combine(self.hess, o.hess, 1.0, 1.0))

    __radd__ = __add__

    def __sub__(self, o):
        o = self._lift(o)
        return Jet(self.value - o.value, self._combine(self.grad, o.grad, 1.0, -1.0),
                   self._combine(self.hess, o.hess, 1.0, -1.0))

    def __rsub__(self, o):
        return self._lift(o) - self

    def __neg__(self):
        return Jet(-self.value, {k: -v for k, v in self.grad.items()}, {k: -v for k, v in self.hess.items()})

    def __mul__(self, o):
        if not isinstance(o, Jet):
            c = float(o)
            return Jet(self.value * c, {k: c * v for k, v in self.grad.items()},
                       {k: c * v for k, v in self.hess.items()})
        hess = self._combine(self.hess, o.hess, o.value, self.value)
        for i, a in self.grad.items():  # the symmetric product a ⊗ b + b ⊗ a
            for j, b in o.grad.items():
                key = (i, j) if i <= j else (j, i)
                hess[key] = hess.get(key, 0.0) + (2.0 if i == j else 1.0) * a * b
        return Jet(self.value * o.value, self._combine(self.grad, o.grad, o.value, self.value), hess)

    __rmul__ = __mul__

    def _apply(self, f: float, d1: float, d2: float) -> "Jet":
        """``φ(self)`` given ``φ``, ``φ'`` and ``φ''`` at ``self.value``."""
        hess = {k: d1 * v for k, v in self.hess.items()}
        items = sorted(self.grad.items())
        for a, (i, gi) in enumerate(items):
            for j, gj in items[a:]:
                hess[(i, j)] = hess.get((i, j), 0.0) + d2 * gi * gj
        return Jet(f, {k: d1 * v for k, v in self.grad.items()}, hess)

    def reciprocal(self) -> "Jet":
        """``1 / self``."""
        v = self.value
        return self._apply(1.0 / v, -1.0 / v ** 2, 2.0 / v ** 3)

    def __truediv__(self, o):
        if not isinstance(o, Jet):
            return self * (1.0 / float(o))
        return self * o.reciprocal()

    def __rtruediv__(self, o):
        return self.reciprocal() * float(o)

    def __pow__(self, c):
        c = float(c)
        v = self.value
        return self._apply(v ** c, c * v ** (c - 1), c * (c - 1) * v ** (c - 2) if c != 1 else 0.0)

    def __rpow__(self, c):
        """``c ** self`` for a number ``c > 0``."""
        c = float(c)
        f = c ** self.value
        log_c = float(np.log(c))
        return self._apply(f, f * log_c, f * log_c * log_c)

    def __abs__(self):
        v = self.value
        return self._apply(abs(v), float(np.sign(v)), 0.0)

    def sqrt(self) -> "Jet":
        """``√self``."""
        r = float(np.sqrt(self.value))
        return self._apply(r, 0.5 / r, -0.25 / r ** 3)

    def __repr__(self) -> str:
        return f"Jet({self.value!r}, {len(self.grad)} variables)"


def jet_sqrt(x: Any) -> Any:
    """``√x`` for a :class:`Jet` or a number."""
    return x.sqrt() if isinstance(x, Jet) else float(np.sqrt(x))


def jet_abs_power(x: Any, p: float) -> Any:
    """``|x|^p`` (``p >= 2``) for a :class:`Jet` or a number."""
    if not isinstance(x, Jet):
        return abs(float(x)) ** p
    a = abs(x.value)
    return x._apply(a ** p, p * a ** (p - 1) * float(np.sign(x.value)), p * (p - 1) * a ** (p - 2))


class _JetMath:
    """numpy's elementary functions for :class:`Jet` numbers (and plain numbers): exact first and second
    derivatives, so that formulas written for ``xp`` (e.g. :mod:`moco_lab.modeling.lepton`'s expressions) take Jets."""

    @staticmethod
    def _unary(x: Any, f, d1, d2) -> Any:
        if not isinstance(x, Jet):
            return float(f(float(x)))
        v = x.value
        return x._apply(float(f(v)), float(d1(v)), float(d2(v)))

    def sqrt(self, x):
        return jet_sqrt(x)

    def exp(self, x):
        return self._unary(x, np.exp, np.exp, np.exp)

    def log(self, x):
        return self._unary(x, np.log, lambda v: 1 / v, lambda v: -1 / v ** 2)

    def sin(self, x):
        return self._unary(x, np.sin, np.cos, lambda v: -np.sin(v))

    def cos(self, x):
        return self._unary(x, np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v))

    def tan(self, x):
        return self._unary(x, np.tan, lambda v: 1 / np.cos(v) ** 2, lambda v: 2 * np.tan(v) / np.cos(v) ** 2)

    def arcsin(self, x):
        return self._unary(x, np.arcsin, lambda v: (1 - v * v) ** -0.5, lambda v: v * (1 - v * v) ** -1.5)

    def arccos(self, x):
        return self._unary(x, np.arccos, lambda v: -(1 - v * v) ** -0.5, lambda v: -v * (1 - v * v) ** -1.5)

    def arctan(self, x):
        return self._unary(x, np.arctan, lambda v: 1 / (1 + v * v), lambda v: -2 * v / (1 + v * v) ** 2)

    def sinh(self, x):
        return self._unary(x, np.sinh, np.cosh, np.sinh)

    def cosh(self, x):
        return self._unary(x, np.cosh, np.sinh, np.cosh)

    def tanh(self, x):
        return self._unary(x, np.tanh, lambda v: 1 - np.tanh(v) ** 2,
                           lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2))

    @staticmethod
    def _value(x: Any) -> float:
        return x.value if isinstance(x, Jet) else float(x)

    def minimum(self, a, b):
        return a if self._value(a) <= self._value(b) else b

    def maximum(self, a, b):
        return a if self._value(a) >= self._value(b) else b


#: :class:`_JetMath`'s one instance, to pass as ``xp``
jet_math = _JetMath()

