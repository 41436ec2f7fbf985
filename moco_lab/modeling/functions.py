"""OpenSim's one-argument functions, exact: ``Constant``, ``LinearFunction``, ``PolynomialFunction``, ``SimmSpline``,
``MultiplierFunction``.

Each is a callable ``f(x, xp=np)``: ``x`` a number, an array or an expression
of the engine's graph (``xp`` its math namespace, which provides ``where``),
so a model read from a file evaluates them numerically and derives them
exactly. ``description()`` returns what determines the function (for the
compiled-model cache and for telling edited models apart).

``SimmSpline`` is the natural cubic spline OpenSim uses for joint and path-point
functions: the Forsythe–Malcolm–Moler construction (end conditions from third
divided differences at both ends when there are at least 4 knots; a straight
line through 2 knots), evaluated as ``y_k + dx (b_k + dx (c_k + dx d_k))`` on the
knot interval that holds ``x``, and continued outside the knots as the straight
line with the end point's slope (OpenSim extrapolates linearly, it does not clamp).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Constant", "LinearFunction", "PolynomialFunction", "SimmSpline", "MultiplierFunction", "OpenSimFunction",
           "MultivariatePolynomialFunction"]

_TINY = 1e-20  # OpenSim guards knot spacings with a tiny number


class OpenSimFunction:
    """Base class: a function of one variable."""

    def __call__(self, x: Any, xp: Any = np) -> Any:  # pragma: no cover - interface
        """``f(x)`` for a number, an array or an expression (``xp``: the math namespace)."""
        raise NotImplementedError

    def description(self) -> dict:  # pragma: no cover - interface
        """What determines the function (type and numbers), as plain data."""
        raise NotImplementedError

    def derivative(self, x: Any, xp: Any = np) -> Any:  # pragma: no cover - interface
        """``f'(x)`` for a number, an array or an expression."""
        raise NotImplementedError

    def second_derivative(self, x: Any, xp: Any = np) -> Any:  # pragma: no cover - interface
        """``f''(x)`` for a number, an array or an expression."""
        raise NotImplementedError

    def is_constant(self) -> bool:
        """Whether ``f`` does not depend on ``x``."""
        return False


@dataclass
class Constant(OpenSimFunction):
    """``f(x) = value``."""

    value: float

    def __call__(self, x: Any, xp: Any = np) -> Any:
        return float(self.value) + 0.0 * x if isinstance(x, np.ndarray) else float(self.value)

    def description(self) -> dict:
        """What determines the function (type and numbers), as plain data."""
        return {"type": "Constant", "value": float(self.value)}

    def derivative(self, x: Any, xp: Any = np) -> Any:
        """``f'(x) = 0``."""
        return 0.0 * x if isinstance(x, np.ndarray) else 0.0

    def second_derivative(self, x: Any, xp: Any = np) -> Any:
        """``f''(x) = 0``."""
        return self.derivative(x, xp)

    def is_constant(self) -> bool:
        """Always true."""
        return True


@dataclass
class LinearFunction(OpenSimFunction):
    """``f(x) = slope x + intercept``."""

    slope: float = 1.0
    intercept: float = 0.0

    def __call__(self, x: Any, xp: Any = np) -> Any:
        if self.slope == 1.0 and self.intercept == 0.0:
            return x
        return self.slope * x + self.intercept

    def description(self) -> dict:
        """What determines the function (type and numbers), as plain data."""
        return {"type": "LinearFunction", "slope": float(self.slope), "intercept": float(self.intercept)}

    def derivative(self, x: Any, xp: Any = np) -> Any:
        """``f'(x) = slope``."""
        return float(self.slope) + 0.0 * x if isinstance(x, np.ndarray) else float(self.slope)

    def second_derivative(self, x: Any, xp: Any = np) -> Any:
        """``f''(x) = 0``."""
        return 0.0 * x if isinstance(x, np.ndarray) else 0.0

    def is_constant(self) -> bool:
        """True when the slope is zero."""
        return self.slope == 0.0


@dataclass
class PolynomialFunction(OpenSimFunction):
    """OpenSim's ``PolynomialFunction``: ``f(x) = c₀ xⁿ⁻¹ + c₁ xⁿ⁻² + … + cₙ₋₁``.

    ``coefficients`` are ordered from the highest power to the constant term, as in the file (Simbody's
    ``Function::Polynomial``); evaluated by Horner's rule, and so are both derivatives.
    """

    coefficients: tuple

    def __post_init__(self):
        self.coefficients = tuple(float(c) for c in np.asarray(self.coefficients, float).reshape(-1))
        if not self.coefficients:
            raise ValueError("PolynomialFunction: at least one coefficient is needed")
        if not all(np.isfinite(self.coefficients)):
            raise ValueError(f"PolynomialFunction: the coefficients must be finite, got {list(self.coefficients)}")

    @staticmethod
    def _horner(coefficients: list, x: Any) -> Any:
        if not coefficients:
            return 0.0 * x if isinstance(x, np.ndarray) else 0.0
        value = coefficients[0] + 0.0 * x if isinstance(x, np.ndarray) else coefficients[0]
        for c in coefficients[1:]:
            value = value * x + c
        return value

    def _derived(self, order: int) -> list:
        """Coefficients (highest power first) of the ``order``-th derivative."""
        c = list(self.coefficients)
        for _ in range(order):
            n = len(c) - 1
            c = [c[k] * (n - k) for k in range(n)]
        return c

    def __call__(self, x: Any, xp: Any = np) -> Any:
        return self._horner(list(self.coefficients), x)

    def derivative(self, x: Any, xp: Any = np) -> Any:
        """``f'(x)``."""
        return self._horner(self._derived(1), x)

    def second_derivative(self, x: Any, xp: Any = np) -> Any:
        """``f''(x)``."""
        return self._horner(self._derived(2), x)

    def is_constant(self) -> bool:
        """True when every coefficient but the constant term is zero."""
        return all(c == 0.0 for c in self.coefficients[:-1])

    def description(self) -> dict:
        """What determines the function (type and numbers), as plain data."""
        return {"type": "PolynomialFunction", "coefficients": list(self.coefficients)}


@dataclass
class MultiplierFunction(OpenSimFunction):
    """``f(x) = scale · inner(x)``."""

    function: OpenSimFunction
    scale: float = 1.0

    def __call__(self, x: Any, xp: Any = np) -> Any:
        return self.scale * self.function(x, xp)

    def description(self) -> dict:
        """What determines the function (type and numbers), as plain data."""
        return {"type": "MultiplierFunction", "scale": float(self.scale), "function": self.function.description()}

    def derivative(self, x: Any, xp: Any = np) -> Any:
        """``scale · inner'(x)``."""
        return self.scale * self.function.derivative(x, xp)

    def second_derivative(self, x: Any, xp: Any = np) -> Any:
        """``scale · inner''(x)``."""
        return self.scale * self.function.second_derivative(x, xp)

    def is_constant(self) -> bool:
        """True when the scale is zero or the inner function is constant."""
        return self.scale == 0.0 or self.function.is_constant()


@dataclass
class SimmSpline(OpenSimFunction):
    """OpenSim's ``SimmSpline`` through the knots ``(x, y)`` (``x`` increasing, at least 2 knots).

    Attributes
    ----------
    x, y : tuple of float (n,)
    b, c, d : ndarray (n,)
        The cubic's coefficients on each knot interval (computed).
    """

    x: tuple
    y: tuple
    b: np.ndarray = field(init=False, repr=False)
    c: np.ndarray = field(init=False, repr=False)
    d: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self.x = tuple(float(v) for v in self.x)
        self.y = tuple(float(v) for v in self.y)
        if len(self.x) != len(self.y):
            raise ValueError(f"SimmSpline: {len(self.x)} x values but {len(self.y)} y values")
        if len(self.x) < 2:
            raise ValueError("SimmSpline: at least 2 knots are needed")
        if np.any(np.diff(self.x) <= 0):
            raise ValueError(f"SimmSpline: the x values must increase, got {self.x}")
        self.b, self.c, self.d = _fmm_coefficients(np.array(self.x), np.array(self.y))

    def __call__(self, x: Any, xp: Any = np) -> Any:
        return self._piecewise(x, xp, 0)

    def derivative(self, x: Any, xp: Any = np) -> Any:
        """``f'(x)``: the cubic's slope inside the knots, the end slopes outside."""
        return self._piecewise(x, xp, 1)

    def second_derivative(self, x: Any, xp: Any = np) -> Any:
        """``f''(x)``: the cubic's curvature inside the knots, zero outside (the continuation is a line)."""
        return self._piecewise(x, xp, 2)

    def _pieces(self, k: Any, dx: Any, order: int) -> Any:
        """The cubic of knot interval ``k`` (an index, or an array of them) and its derivatives at ``dx`` from it."""
        b, c, d = self.b[k], self.c[k], self.d[k]
        if order == 0:
            return np.asarray(self.y)[k] + dx * (b + dx * (c + dx * d))
        if order == 1:
            return b + dx * (2.0 * c + 3.0 * dx * d)
        return 2.0 * c + 6.0 * dx * d

    def _line(self, end: int, x: Any, order: int) -> Any:
        k = 0 if end == 0 else len(self.x) - 1
        if order == 0:
            return self.y[k] + (x - self.x[k]) * self.b[k]
        if order == 1:
            return float(self.b[k]) + 0.0 * x
        return 0.0 * x

    def _piecewise(self, x: Any, xp: Any, order: int) -> Any:
        X = self.x
        n = len(X)
        if isinstance(x, (int, float, np.floating, np.integer)) or (isinstance(x, np.ndarray) and xp is np):
            xa = np.asarray(x, float)
            k = np.clip(np.searchsorted(np.array(X), xa, side="left") - 1, 0, n - 2)
            y = self._pieces(k, xa - np.array(X)[k], order)
            y = np.where(xa < X[0], self._line(0, xa, order), y)
            y = np.where(xa > X[-1], self._line(1, xa, order), y)
            return float(y) if np.ndim(y) == 0 else y
        # an expression: one cubic per interval, chosen with where() (whose condition decides by its sign);
        # the end points' lines outside the knots
        result = self._line(1, x, order)
        for k in range(n - 2, -1, -1):
            result = xp.where(X[k + 1] - x, self._pieces(k, x - X[k], order), result)  # x < X[k+1]
        return xp.where(X[0] - x, self._line(0, x, order), result)  # x < X[0]

    def description(self) -> dict:
        """What determines the function (type and numbers), as plain data."""
        return {"type": "SimmSpline", "x": list(self.x), "y": list(self.y)}


def _fmm_coefficients(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coefficients ``b, c, d`` of the Forsythe–Malcolm–Moler natural cubic spline (OpenSim's SimmSpline)."""
    n = x.size
    b, c, d = np.zeros(n), np.zeros(n), np.zeros(n)
    if n == 2:
        slope = (y[1] - y[0]) / max(_TINY, x[1] - x[0])
        b[:] = slope
        return b, c, d
    # tridiagonal system: b diagonal, d off-diagonal, c right-hand side
    d[0] = max(_TINY, x[1] - x[0])
    c[1] = (y[1] - y[0]) / d[0]
    for i in range(1, n - 1):
        d[i] = max(_TINY, x[i + 1] - x[i])
        b[i] = 2.0 * (d[i - 1] + d[i])
        c[i + 1] = (y[i + 1] - y[i]) / d[i]
        c[i] = c[i + 1] - c[i]
    # end conditions: third derivatives from divided differences (n > 3), else zero
    b[0], b[-1] = -d[0], -d[n - 2]
    c[0] = c[-1] = 0.0
    if n > 3:
        c0 = c[2] / max(_TINY, x[3] - x[1]) - c[1] / max(_TINY, x[2] - x[0])
        cn = c[n - 2] / max(_TINY, x[n - 1] - x[n - 3]) - c[n - 3] / max(_TINY, x[n - 2] - x[n - 4])
        c[0] = c0 * d[0] ** 2 / max(_TINY, x[3] - x[0])
        c[-1] = -cn * d[n - 2] ** 2 / max(_TINY, x[n - 1] - x[n - 4])
    for i in range(1, n):  # forward elimination
        t = d[i - 1] / b[i - 1]
        b[i] -= t * d[i - 1]
        c[i] -= t * c[i - 1]
    c[-1] /= b[-1]  # back substitution
    for i in range(n - 2, -1, -1):
        c[i] = (c[i] - d[i] * c[i + 1]) / b[i]
    b[-1] = (y[-1] - y[-2]) / d[n - 2] + d[n - 2] * (c[n - 2] + 2.0 * c[-1])
    for i in range(n - 1):
        b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i])
        d[i] = (c[i + 1] - c[i]) / d[i]
        c[i] *= 3.0
    c[-1] *= 3.0
    d[-1] = d[n - 2]
    return b, c, d


def _exponents(dimension: int, order: int) -> list[tuple[int, ...]]:
    """The monomials of OpenSim's ``MultivariatePolynomialFunction`` in its coefficient order: exponent tuples with
    sum ≤ ``order``, the first variable's exponent varying slowest and the last's fastest (index 0 the constant,
    1 the last variable, 2 its square, ...)."""
    out: list[tuple[int, ...]] = []

    def walk(current: tuple, total: int) -> None:
        if len(current) == dimension:
            out.append(current)
            return
        for k in range(order - total + 1):
            walk(current + (k,), total + k)

    walk((), 0)
    return out


@dataclass
class MultivariatePolynomialFunction:
    """OpenSim's ``MultivariatePolynomialFunction``: ``f(x₁, …, x_d) = Σ cᵢ Π_j x_j^{e_ij}`` over all monomials of
    total degree ≤ ``order``, coefficients in OpenSim's order (:func:`_exponents`; ``C(d + order, order)`` of them).

    Called with a sequence of ``dimension`` numbers, arrays or expressions; the engine differentiates the result.
    Only the non-zero coefficients' monomials are formed, from shared powers of each variable.
    """

    coefficients: tuple
    dimension: int
    order: int
    exponents: list = field(init=False, repr=False)

    def __post_init__(self):
        self.coefficients = tuple(float(c) for c in np.asarray(self.coefficients, float).reshape(-1))
        self.dimension, self.order = int(self.dimension), int(self.order)
        if self.dimension < 1 or self.order < 0:
            raise ValueError(f"MultivariatePolynomialFunction: dimension must be >= 1 and order >= 0, got "
                             f"{self.dimension} and {self.order}")
        self.exponents = _exponents(self.dimension, self.order)
        if len(self.coefficients) != len(self.exponents):
            raise ValueError(f"MultivariatePolynomialFunction: dimension {self.dimension} and order {self.order} "
                             f"need {len(self.exponents)} coefficients, got {len(self.coefficients)}")
        if not all(np.isfinite(self.coefficients)):
            raise ValueError("MultivariatePolynomialFunction: the coefficients must be finite")

    def __call__(self, x: Any, xp: Any = np) -> Any:
        if len(x) != self.dimension:
            raise ValueError(f"MultivariatePolynomialFunction of dimension {self.dimension} called with {len(x)} "
                             "arguments")
        powers = []
        for j in range(self.dimension):
            row = [1.0, x[j]]
            for _ in range(2, self.order + 1):
                row.append(row[-1] * x[j])
            powers.append(row)
        total = 0.0
        for c, e in zip(self.coefficients, self.exponents):
            if c == 0.0:
                continue
            term = c
            for j, k in enumerate(e):
                if k:
                    term = term * powers[j][k]
            total = total + term
        return total

    def description(self) -> dict:
        """What determines the function (type and numbers), as plain data."""
        return {"type": "MultivariatePolynomialFunction", "dimension": self.dimension, "order": self.order,
                "coefficients": list(self.coefficients)}
