"""The DeGrooteFregly2016Muscle, as OpenSim 4.6 / Moco implement it.

Every equation and constant is OpenSim 4.6's
(``OpenSim/Actuators/DeGrooteFregly2016Muscle.{h,cpp}``), which implements De
Groote, Kinney, Rao & Fregly (2016), Ann Biomed Eng 44(10),
doi:10.1007/s10439-016-1591-9 (cited below as "De Groote et al. 2016"; see
REFERENCES.md). The equations are written out in each function's docstring.

Symbolic *and* numeric
----------------------
Every curve and every dynamics function takes a math namespace ``xp``
(``numpy`` by default; the engine's expression graph, :mod:`moco_lab.symbolic`;
``math``, ``pydrake.symbolic`` and SymPy work too) and uses only arithmetic and
``xp``'s elementary functions (``exp``, ``log``, ``sqrt``, ``tanh``, ``sinh``,
``cosh``, ``sin``, ``cos``, ``asin``/``arcsin``, mapped to one set of names by
:func:`_ns`). Nothing branches on *values*, so

* ``xp=numpy``: the functions evaluate vectorized, with numpy broadcasting over
  arrays of any shape (e.g. all collocation nodes at once);
* the engine's namespace (the force context's ``ctx.xp``, see
  :mod:`moco_lab.modeling.force_element`): the same functions build the
  expression graph that the engine differentiates exactly, once or twice, and
  compiles;
* ``xp=sympy`` (optional: ``pip install sympy``; moco_lab does not need it):
  SymPy expressions, to read a curve or differentiate it by hand; the test
  suite uses them to check the numpy curves and their derivatives.

Branches exist only on *properties* (``ignore_tendon_compliance``,
``ignore_passive_fiber_force``, ``pennation_angle_at_optimal == 0``,
``tendon_compliance_dynamics_mode``), i.e. they change the structure of the
model, never the smoothness of an expression.

Where this differs from OpenSim (all documented in the functions concerned)
--------------------------------------------------------------------------
* OpenSim's DGF curves contain **no clamping** (the header even keeps a TODO to
  "prohibit fiber length from going below 0.2"): the nominal domains
  ``l̃_M ∈ [0.2, 1.8]`` and ``ṽ_M ∈ [−1, 1]`` are not enforced, and OpenSim only
  *logs* a message when the tendon buckles (``l_T < l_slack``) or ``ṽ_M < −1``.
  The formulas here are the same smooth ones, with no clamping either; keeping
  the fiber inside its domain is the job of the optimal control problem.
* Fiber length: OpenSim computes ``l_M = sqrt(l_M,AT² + w²)``. With
  ``pennation_angle_at_optimal = 0`` (``w = 0``) that is ``|l_M,AT|``, which is
  not differentiable at 0 and which SymPy turns into ``Abs``. For ``w = 0`` this
  module uses ``l_M = l_M,AT`` and ``cos α = 1`` instead: identical to OpenSim
  whenever ``l_M,AT > 0`` (every physically meaningful state), smooth
  everywhere. For ``w > 0`` the formulas are OpenSim's.
* OpenSim's inverse force–velocity curve uses ``sinh``; so does this module
  (``xp.sinh``), so numeric results agree to round-off.
* Explicit tendon dynamics (De Groote et al. 2016) divide by ``a·f_L`` and are
  singular at ``a → 0`` exactly as in OpenSim; use the implicit form in
  optimal control problems whose activations may reach 0.

A caveat in OpenSim itself (De Groote et al. 2016, confirmed with the ``opensim`` 4.6
Python package): ``computeStateVariableDerivatives`` keeps
``activation_time_constant``, ``deactivation_time_constant`` and
``activation_dynamics_smoothing`` in function-local ``static const`` variables,
so in one process **all** DGF muscles use the values of the first DGF muscle
whose state derivatives were evaluated. :meth:`DeGrooteFregly2016Muscle.calc_activation_derivative`
uses each muscle's own properties (what the properties say).

Notes for SymPy users
---------------------
* Zero coefficients (``fiber_damping = 0``, ``b43 = 0``) are dropped rather than
  multiplied in: SymPy's ``0.0 * expr`` asks whether ``expr`` is finite, which
  on the explicit tendon expression took minutes (see :func:`_mul`).
* SymPy prints a 53-bit ``Float`` with 15 significant digits
  (``0.8150671134243542`` -> ``0.815067113424354``), so code generated with
  ``lambdify``/``NumPyPrinter`` carries constants perturbed by ~1e-16 relative
  (~1e-12 relative where terms cancel, e.g. ``f_L'(1)``). A printer whose
  ``_print_Float`` returns ``repr(float(expr))`` reproduces the numpy values to
  round-off (tests/test_muscle.py does this).

Quick use
---------
>>> import numpy as np, sympy                          # sympy: optional, for symbolic inspection
>>> from moco_lab.modeling.muscle import DeGrooteFregly2016Muscle
>>> m = DeGrooteFregly2016Muscle("left", max_isometric_force=10,
...         optimal_fiber_length=0.2, tendon_slack_length=0.1,
...         ignore_tendon_compliance=True)
>>> round(float(m.calc_active_force_length_multiplier(1.0)), 12)
1.0
>>> round(float(m.rigid_tendon_force(1.0, 0.3, 0.0)), 9)   # l_MT = l_opt + l_slack, static
10.182288238
>>> a, l, v = sympy.symbols("a l v")
>>> F = m.rigid_tendon_force(a, l, v, xp=sympy)       # SymPy expression (N)
>>> dF_dl = sympy.diff(F, l)                           # exact derivative
"""
from __future__ import annotations

import dataclasses
import importlib
import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = [
    "DeGrooteFregly2016Muscle",
    "MuscleInfo",
    "FiberKinematics",
    # curve constants
    "ACTIVE_FORCE_LENGTH_B",
    "FORCE_VELOCITY_D",
    "PASSIVE_KPE",
    "TENDON_C",
    "MIN_NORM_FIBER_LENGTH",
    "MAX_NORM_FIBER_LENGTH",
    "MIN_NORM_TENDON_FORCE",
    "MAX_NORM_TENDON_FORCE",
    "IMPLICIT_DERIVATIVE_BOUNDS",
    # pure curve functions
    "active_force_length_multiplier",
    "active_force_length_multiplier_derivative",
    "force_velocity_multiplier",
    "force_velocity_multiplier_derivative",
    "force_velocity_inverse",
    "force_velocity_inverse_derivative",
    "passive_force_multiplier",
    "passive_force_multiplier_derivative",
    "passive_force_multiplier_integral",
    "tendon_stiffness_parameter",
    "tendon_force_multiplier",
    "tendon_force_multiplier_derivative",
    "tendon_force_multiplier_integral",
    "tendon_force_length_inverse",
    "tendon_force_length_inverse_derivative",
    "activation_derivative",
]

ArrayOrExpr = Any  #: float, numpy array, or SymPy expression

# ----------------------------------------------------------------------------
# Constants (De Groote et al. 2016, §3)
# ----------------------------------------------------------------------------

#: Active force-length curve parameters ``(b1i, b2i, b3i, b4i)`` for i = 1, 2, 3
#: (De Groote et al. 2016; b11 adjusted by OpenSim so that f_L(1) = 1).
ACTIVE_FORCE_LENGTH_B = (
    (0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465),
    (0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188),
    (0.1, 1.0, 0.353553390593274, 0.0),
)
#: Force-velocity curve parameters ``(d1, d2, d3, d4)`` (De Groote et al. 2016; d1, d4
#: re-solved by OpenSim so that f_V(-1) = 0 and f_V(0) = 1).
FORCE_VELOCITY_D = (-0.3211346127989808, -8.149, -0.374, 0.8825327733249912)
#: Passive fiber force-length exponential shape factor kPE (De Groote et al. 2016).
PASSIVE_KPE = 4.0
#: Tendon force-length parameters ``(c1, c2, c3)`` (OpenSim's, not the paper's).
TENDON_C = (0.2, 1.0, 0.2)
#: Nominal domain of normalized fiber length; f_PE is zero at the lower end.
MIN_NORM_FIBER_LENGTH = 0.2
MAX_NORM_FIBER_LENGTH = 1.8
#: Bounds of the ``normalized_tendon_force`` state (Moco's default state bounds).
MIN_NORM_TENDON_FORCE = 0.0
MAX_NORM_TENDON_FORCE = 5.0
#: Moco's default bounds of ``implicitderiv_normalized_tendon_force``
#: (``MocoDirectCollocationSolver.implicit_auxiliary_derivative_bounds``).
IMPLICIT_DERIVATIVE_BOUNDS = (-1000.0, 1000.0)


# ----------------------------------------------------------------------------
# Math namespace adapter
# ----------------------------------------------------------------------------

_NS_CACHE: dict[int, SimpleNamespace] = {}


def _ns(xp=np) -> SimpleNamespace:
    """Uniform elementary functions for a math namespace.

    Parameters
    ----------
    xp : module or str, default numpy
        ``numpy``, ``sympy``, ``math``, ``pydrake.symbolic`` (anything with
        ``exp, log, sqrt, tanh, sinh, cosh, sin, cos`` and ``asin`` or
        ``arcsin``), or the module's import name as a string.

    Returns
    -------
    types.SimpleNamespace
        Attributes ``exp, log, sqrt, tanh, sinh, cosh, sin, cos, asin`` and
        ``module`` (the module itself).
    """
    if xp is None:
        xp = np
    if isinstance(xp, str):
        xp = importlib.import_module(xp)
    key = id(xp)
    ns = _NS_CACHE.get(key)
    if ns is None:
        def get(*names):
            for n in names:
                f = getattr(xp, n, None)
                if f is not None:
                    return f
            raise TypeError(f"math namespace {getattr(xp, '__name__', xp)!r} has no {names[0]!r}")

        ns = SimpleNamespace(
            module=xp,
            exp=get("exp"), log=get("log"), sqrt=get("sqrt"), tanh=get("tanh"),
            sinh=get("sinh"), cosh=get("cosh"), sin=get("sin"), cos=get("cos"),
            asin=get("asin", "arcsin"),
        )
        _NS_CACHE[key] = ns
    return ns


def _zeros_like(x):
    """``0.0`` with the shape of ``x`` (numpy), exact ``0`` for SymPy.

    SymPy's ``expr * 0`` is avoided: deciding whether ``expr`` is finite runs
    the assumption system on the whole expression, which can take minutes.
    """
    if isinstance(x, (np.ndarray, np.generic)):
        return np.zeros(np.shape(x))
    if isinstance(x, (int, float)):
        return 0.0
    if type(x).__module__.startswith("sympy"):
        import sympy

        return sympy.S.Zero
    return x * 0


def _mul(c: float, x):
    """``c * x`` for a constant ``c``, with ``c == 0`` giving :func:`_zeros_like` (see there)."""
    return _zeros_like(x) if c == 0 else c * x


def _ones_like(x):
    """``1.0`` with the shape of ``x`` (numpy), exact ``1`` for SymPy."""
    z = _zeros_like(x)
    if type(z).__module__.startswith("sympy"):
        import sympy

        return sympy.S.One
    return z + 1.0


# ----------------------------------------------------------------------------
# Curves (pure functions; De Groote et al. 2016)
# ----------------------------------------------------------------------------

def active_force_length_multiplier(norm_fiber_length: ArrayOrExpr, width_scale: float = 1.0, xp: Any = np) -> ArrayOrExpr:
    """Active force-length multiplier ``f_L(l̃_M)`` (De Groote et al. 2016).

    ``f_L = Σ_i b1i exp(-½ (x - b2i)² / (b3i + b4i x)²)`` with
    ``x = (l̃_M - 1)/s + 1``; ``f_L(1) = 1``.

    Parameters
    ----------
    norm_fiber_length : float, ndarray (any shape) or sympy.Expr
        Normalized fiber length ``l̃_M = l_M / l_opt`` (dimensionless).
    width_scale : float, default 1
        ``active_force_width_scale`` ``s`` (≥ 1); widens the curve about 1.
    xp : module, default numpy
        Math namespace (``numpy`` or ``sympy``).

    Returns
    -------
    same type/shape as ``norm_fiber_length``
        Multiplier (dimensionless, in (0, 1]).
    """
    f = _ns(xp)
    x = (norm_fiber_length - 1.0) / width_scale + 1.0
    total = 0
    for b1, b2, b3, b4 in ACTIVE_FORCE_LENGTH_B:
        total = total + b1 * f.exp(-0.5 * (x - b2) ** 2 / (b3 + _mul(b4, x)) ** 2)
    return total


def active_force_length_multiplier_derivative(norm_fiber_length: ArrayOrExpr, width_scale: float = 1.0,
                                              xp: Any = np) -> ArrayOrExpr:
    """Derivative ``d f_L / d l̃_M`` (analytic; De Groote et al. 2016).

    Each term's derivative is ``b1 exp(...) (b2 - x)(b3 + b2 b4) / (b3 + b4 x)³``;
    the sum is multiplied by ``1/s`` (chain rule through the width scaling).

    Parameters
    ----------
    norm_fiber_length : float, ndarray or sympy.Expr
        Normalized fiber length ``l̃_M`` (dimensionless).
    width_scale : float, default 1
        ``active_force_width_scale``.
    xp : module, default numpy

    Returns
    -------
    same type/shape as input
        Slope (per unit normalized length).
    """
    f = _ns(xp)
    x = (norm_fiber_length - 1.0) / width_scale + 1.0
    total = 0
    for b1, b2, b3, b4 in ACTIVE_FORCE_LENGTH_B:
        total = total + (b1 * f.exp(-0.5 * (x - b2) ** 2 / (b3 + _mul(b4, x)) ** 2)
                         * (b2 - x) * (b3 + b2 * b4) / (b3 + _mul(b4, x)) ** 3)
    return total / width_scale


def force_velocity_multiplier(norm_fiber_velocity: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
    """Force-velocity multiplier ``f_V(ṽ_M)`` (De Groote et al. 2016).

    ``f_V = d1 ln((d2 ṽ + d3) + sqrt((d2 ṽ + d3)² + 1)) + d4`` (= d1 asinh(d2 ṽ + d3) + d4),
    written exactly as OpenSim does. ``f_V(-1) = 0``, ``f_V(0) = 1``,
    ``f_V(1) ≈ 1.794``. Nominal domain [-1, 1] (not enforced, the curve is
    smooth beyond it).

    Parameters
    ----------
    norm_fiber_velocity : float, ndarray or sympy.Expr
        ``ṽ_M = v_M / (v_max l_opt)``, positive when lengthening (dimensionless).
    xp : module, default numpy

    Returns
    -------
    same type/shape as input
        Multiplier (dimensionless).
    """
    f = _ns(xp)
    d1, d2, d3, d4 = FORCE_VELOCITY_D
    t = d2 * norm_fiber_velocity + d3
    return d1 * f.log(t + f.sqrt(t ** 2 + 1.0)) + d4


def force_velocity_multiplier_derivative(norm_fiber_velocity: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
    """Derivative ``d f_V / d ṽ_M = d1 d2 / sqrt((d2 ṽ + d3)² + 1)`` (analytic).

    Parameters
    ----------
    norm_fiber_velocity : float, ndarray or sympy.Expr
        ``ṽ_M`` (dimensionless).
    xp : module, default numpy
    """
    f = _ns(xp)
    d1, d2, d3, _ = FORCE_VELOCITY_D
    t = d2 * norm_fiber_velocity + d3
    return d1 * d2 / f.sqrt(t ** 2 + 1.0)


def force_velocity_inverse(force_velocity_mult: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
    """Inverse force-velocity curve ``ṽ_M = f_V⁻¹(f_V)`` (De Groote et al. 2016).

    ``ṽ = (sinh((f_V - d4)/d1) - d3)/d2`` (the paper's supplement omits ``- d3``).

    Parameters
    ----------
    force_velocity_mult : float, ndarray or sympy.Expr
        Force-velocity multiplier (dimensionless; 0 ↔ ṽ = -1, 1 ↔ ṽ = 0).
    xp : module, default numpy

    Returns
    -------
    same type/shape as input
        Normalized fiber velocity ``ṽ_M``.
    """
    f = _ns(xp)
    d1, d2, d3, d4 = FORCE_VELOCITY_D
    return (f.sinh((force_velocity_mult - d4) / d1) - d3) / d2


def force_velocity_inverse_derivative(force_velocity_mult: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
    """Derivative ``d ṽ_M / d f_V = cosh((f_V - d4)/d1) / (d1 d2)`` (analytic).

    Parameters
    ----------
    force_velocity_mult : float, ndarray or sympy.Expr
    xp : module, default numpy
    """
    f = _ns(xp)
    d1, d2, _, d4 = FORCE_VELOCITY_D
    return f.cosh((force_velocity_mult - d4) / d1) / (d1 * d2)


def _passive_constants(strain: float) -> tuple[float, float]:
    offset = math.exp(PASSIVE_KPE * (MIN_NORM_FIBER_LENGTH - 1.0) / strain)
    denom = math.exp(PASSIVE_KPE) - offset
    return offset, denom


def passive_force_multiplier(norm_fiber_length: ArrayOrExpr, strain: float = 0.6, xp: Any = np) -> ArrayOrExpr:
    """Passive fiber force-length multiplier ``f_PE(l̃_M)`` (De Groote et al. 2016).

    ``f_PE = (exp(kPE (l̃ - 1)/e0) - exp(kPE (0.2 - 1)/e0)) / (exp(kPE) - exp(kPE (0.2 - 1)/e0))``,
    kPE = 4: zero at ``l̃ = 0.2`` (negative below), ``f_PE(1) = 0.0182288``
    (defaults), 1 at ``l̃ = 1 + e0``.

    Parameters
    ----------
    norm_fiber_length : float, ndarray or sympy.Expr
        ``l̃_M`` (dimensionless).
    strain : float, default 0.6
        ``passive_fiber_strain_at_one_norm_force`` ``e0`` (> 0).
    xp : module, default numpy
    """
    f = _ns(xp)
    offset, denom = _passive_constants(strain)
    return (f.exp(PASSIVE_KPE * (norm_fiber_length - 1.0) / strain) - offset) / denom


def passive_force_multiplier_derivative(norm_fiber_length: ArrayOrExpr, strain: float = 0.6, xp: Any = np) -> ArrayOrExpr:
    """Derivative ``d f_PE / d l̃_M`` (analytic).

    Parameters
    ----------
    norm_fiber_length : float, ndarray or sympy.Expr
    strain : float, default 0.6
        ``passive_fiber_strain_at_one_norm_force``.
    xp : module, default numpy
    """
    f = _ns(xp)
    _, denom = _passive_constants(strain)
    return PASSIVE_KPE * f.exp(PASSIVE_KPE * (norm_fiber_length - 1.0) / strain) / (strain * denom)


def passive_force_multiplier_integral(norm_fiber_length: ArrayOrExpr, strain: float = 0.6, xp: Any = np) -> ArrayOrExpr:
    """``∫_{0.2}^{l̃_M} f_PE(x) dx`` (normalized fiber potential energy).

    The fiber's elastic potential energy is ``F_max l_opt`` times this.

    Parameters
    ----------
    norm_fiber_length : float, ndarray or sympy.Expr
    strain : float, default 0.6
    xp : module, default numpy
    """
    f = _ns(xp)
    offset, denom = _passive_constants(strain)
    return ((strain / PASSIVE_KPE) * (f.exp(PASSIVE_KPE * (norm_fiber_length - 1.0) / strain) - offset)
            - offset * (norm_fiber_length - MIN_NORM_FIBER_LENGTH)) / denom


def tendon_stiffness_parameter(strain: float = 0.049) -> float:
    """``kT = ln((1 + c3)/c1) / (1 + ε_T - c2)`` (De Groote et al. 2016).

    Parameters
    ----------
    strain : float, default 0.049
        ``tendon_strain_at_one_norm_force`` ε_T (> 0).

    Returns
    -------
    float
        kT (36.5665 for ε_T = 0.049; 17.9176 for 0.10).
    """
    c1, c2, c3 = TENDON_C
    return math.log((1.0 + c3) / c1) / (1.0 + strain - c2)


def tendon_force_multiplier(norm_tendon_length: ArrayOrExpr, strain: float = 0.049, xp: Any = np) -> ArrayOrExpr:
    """Tendon force-length multiplier ``f_T(l̃_T) = c1 exp(kT (l̃_T - c2)) - c3``.

    OpenSim's constants c1 = 0.2, c2 = 1, c3 = 0.2, so ``f_T(1) = 0`` and
    ``f_T(1 + ε_T) = 1`` (De Groote et al. 2016). Negative for ``l̃_T < 1``.

    Parameters
    ----------
    norm_tendon_length : float, ndarray or sympy.Expr
        ``l̃_T = l_T / l_slack`` (dimensionless).
    strain : float, default 0.049
        ``tendon_strain_at_one_norm_force``.
    xp : module, default numpy
    """
    f = _ns(xp)
    c1, c2, c3 = TENDON_C
    kT = tendon_stiffness_parameter(strain)
    return c1 * f.exp(kT * (norm_tendon_length - c2)) - c3


def tendon_force_multiplier_derivative(norm_tendon_length: ArrayOrExpr, strain: float = 0.049,
                                       xp: Any = np) -> ArrayOrExpr:
    """Derivative ``f_T'(l̃_T) = c1 kT exp(kT (l̃_T - c2))`` (analytic).

    Parameters
    ----------
    norm_tendon_length : float, ndarray or sympy.Expr
    strain : float, default 0.049
    xp : module, default numpy
    """
    f = _ns(xp)
    c1, c2, _ = TENDON_C
    kT = tendon_stiffness_parameter(strain)
    return c1 * kT * f.exp(kT * (norm_tendon_length - c2))


def tendon_force_multiplier_integral(norm_tendon_length: ArrayOrExpr, strain: float = 0.049,
                                     xp: Any = np) -> ArrayOrExpr:
    """``∫_{l̃_T,min}^{l̃_T} f_T(x) dx`` with ``l̃_T,min = f_T⁻¹(0) = 1``.

    The tendon's potential energy is ``F_max l_slack`` times this.

    Parameters
    ----------
    norm_tendon_length : float, ndarray or sympy.Expr
    strain : float, default 0.049
    xp : module, default numpy
    """
    f = _ns(xp)
    c1, c2, c3 = TENDON_C
    kT = tendon_stiffness_parameter(strain)
    lmin = math.log((MIN_NORM_TENDON_FORCE + c3) / c1) / kT + c2
    return (c1 / kT) * (f.exp(kT * (norm_tendon_length - c2)) - math.exp(kT * (lmin - c2))) \
        - c3 * (norm_tendon_length - lmin)


def tendon_force_length_inverse(norm_tendon_force: ArrayOrExpr, strain: float = 0.049, xp: Any = np) -> ArrayOrExpr:
    """Inverse tendon curve ``l̃_T = ln((f̃_T + c3)/c1)/kT + c2`` (De Groote et al. 2016).

    Parameters
    ----------
    norm_tendon_force : float, ndarray or sympy.Expr
        ``f̃_T = F_T / F_max`` (dimensionless, > -c3).
    strain : float, default 0.049
    xp : module, default numpy

    Returns
    -------
    same type/shape as input
        Normalized tendon length ``l̃_T``.
    """
    f = _ns(xp)
    c1, c2, c3 = TENDON_C
    kT = tendon_stiffness_parameter(strain)
    return f.log((1.0 / c1) * (norm_tendon_force + c3)) / kT + c2


def tendon_force_length_inverse_derivative(norm_tendon_force_derivative: ArrayOrExpr,
                                           norm_tendon_length: ArrayOrExpr, strain: float = 0.049,
                                           xp: Any = np) -> ArrayOrExpr:
    """Normalized tendon velocity from the tendon force rate: ``ṽ_T = ḟ_T / f_T'(l̃_T)``.

    OpenSim's ``calcTendonForceLengthInverseCurveDerivative``.

    Parameters
    ----------
    norm_tendon_force_derivative : float, ndarray or sympy.Expr
        ``df̃_T/dt`` (1/s).
    norm_tendon_length : float, ndarray or sympy.Expr
        ``l̃_T``.
    strain : float, default 0.049
    xp : module, default numpy

    Returns
    -------
    same type/shape as the inputs
        ``ṽ_T = v_T / l_slack`` (1/s).
    """
    return norm_tendon_force_derivative / tendon_force_multiplier_derivative(norm_tendon_length, strain, xp)


def activation_derivative(activation: ArrayOrExpr, excitation: ArrayOrExpr, activation_time_constant: float = 0.015,
                          deactivation_time_constant: float = 0.060, smoothing: float = 0.1,
                          xp: Any = np) -> ArrayOrExpr:
    """De Groote et al. (2016) first-order activation dynamics (De Groote et al. 2016).

    ``f = ½ tanh(b (e - a))``, ``z = 0.5 + 1.5 a``,
    ``da/dt = [(f + ½)/(τ_a z) + (½ - f) z/τ_d] (e - a)``,
    evaluated in the same order of operations as OpenSim.

    Parameters
    ----------
    activation : float, ndarray or sympy.Expr
        ``a`` (dimensionless, nominally [0, 1]).
    excitation : float, ndarray or sympy.Expr
        ``e`` (the control, dimensionless, nominally [0, 1]); broadcast with ``a``.
    activation_time_constant : float, default 0.015
        ``τ_a`` (s).
    deactivation_time_constant : float, default 0.060
        ``τ_d`` (s).
    smoothing : float, default 0.1
        ``activation_dynamics_smoothing`` ``b`` (OpenSim's default 0.1 makes
        activation and deactivation nearly equally fast; 10 is recommended).
    xp : module, default numpy

    Returns
    -------
    same type/shape as the broadcast inputs
        ``da/dt`` (1/s).
    """
    f = _ns(xp)
    z = 0.5 + 1.5 * activation
    temp_act = 1.0 / (activation_time_constant * z)
    temp_deact = z / deactivation_time_constant
    ff = 0.5 * f.tanh(smoothing * (excitation - activation))
    return (temp_act * (ff + 0.5) + temp_deact * (-ff + 0.5)) * (excitation - activation)


# ----------------------------------------------------------------------------
# Results of the musculotendon calculations
# ----------------------------------------------------------------------------

@dataclass
class FiberKinematics:
    """Fiber kinematics of a rigid-tendon muscle (all same type/shape as the inputs).

    Attributes
    ----------
    fiber_length : m
    fiber_velocity : m/s (positive lengthening)
    normalized_fiber_length : l_M / l_opt
    normalized_fiber_velocity : v_M / (v_max l_opt)
    cos_pennation_angle : dimensionless
    """

    fiber_length: ArrayOrExpr
    fiber_velocity: ArrayOrExpr
    normalized_fiber_length: ArrayOrExpr
    normalized_fiber_velocity: ArrayOrExpr
    cos_pennation_angle: ArrayOrExpr


@dataclass
class MuscleInfo:
    """Everything :meth:`DeGrooteFregly2016Muscle.calc_muscle_info` computes.

    Names follow OpenSim's ``MuscleLengthInfo``/``FiberVelocityInfo``/
    ``MuscleDynamicsInfo``. Every entry has the type/shape of the broadcast
    inputs (numpy) or is a SymPy expression. Lengths in m, velocities in m/s
    (positive = lengthening), forces in N, ``normalized_*`` dimensionless.

    ``normalized_tendon_force_derivative`` (1/s) is the explicit-mode state
    derivative, the given implicit variable (implicit mode) or 0 (rigid).
    ``implicit_residual`` (dimensionless) is ``f̃_T - F_M cos α / F_max``:
    computed in implicit mode, ``None`` otherwise (it is identically 0 for a
    rigid tendon and, without fiber damping, in explicit mode).
    """

    mode: str  #: "rigid", "explicit" or "implicit"
    # length level
    tendon_length: ArrayOrExpr
    normalized_tendon_length: ArrayOrExpr
    fiber_length_along_tendon: ArrayOrExpr
    fiber_length: ArrayOrExpr
    normalized_fiber_length: ArrayOrExpr
    cos_pennation_angle: ArrayOrExpr
    sin_pennation_angle: ArrayOrExpr
    pennation_angle: ArrayOrExpr
    active_force_length_multiplier: ArrayOrExpr
    passive_force_multiplier: ArrayOrExpr
    # velocity level
    force_velocity_multiplier: ArrayOrExpr
    normalized_fiber_velocity: ArrayOrExpr
    fiber_velocity: ArrayOrExpr
    fiber_velocity_along_tendon: ArrayOrExpr
    tendon_velocity: ArrayOrExpr
    normalized_tendon_velocity: ArrayOrExpr
    pennation_angular_velocity: ArrayOrExpr
    # dynamics level
    activation: ArrayOrExpr
    active_fiber_force: ArrayOrExpr
    passive_fiber_elastic_force: ArrayOrExpr
    passive_fiber_damping_force: ArrayOrExpr
    fiber_force: ArrayOrExpr
    fiber_force_along_tendon: ArrayOrExpr
    tendon_force: ArrayOrExpr
    normalized_tendon_force: ArrayOrExpr
    normalized_tendon_force_derivative: ArrayOrExpr
    implicit_residual: ArrayOrExpr | None = None


# ----------------------------------------------------------------------------
# The muscle
# ----------------------------------------------------------------------------

_FLOAT_FIELDS = (
    "max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
    "max_contraction_velocity", "activation_time_constant", "deactivation_time_constant",
    "activation_dynamics_smoothing", "default_activation", "default_normalized_tendon_force",
    "active_force_width_scale", "fiber_damping", "passive_fiber_strain_at_one_norm_force",
    "tendon_strain_at_one_norm_force", "min_control", "max_control",
)
_BOOL_FIELDS = ("ignore_passive_fiber_force", "ignore_tendon_compliance", "ignore_activation_dynamics")
_TENDON_MODES = ("explicit", "implicit")


@dataclass(eq=True)
class DeGrooteFregly2016Muscle:
    """OpenSim's ``DeGrooteFregly2016Muscle``: properties plus its equations.

    Properties carry OpenSim's names and defaults (De Groote et al. 2016). Values are
    validated on construction and on every later assignment (``ValueError``
    naming the muscle and the property). Paths/geometry are not part of this
    class: the musculotendon length ``l_MT`` and lengthening speed ``v_MT`` are
    inputs to its methods.

    Parameters
    ----------
    name : str, default "muscle"
        Component name (OpenSim's ``name``), e.g. ``"left"``.
    max_isometric_force : float, default 1000
        ``F_max`` (N), > 0.
    optimal_fiber_length : float, default 0.1
        ``l_opt`` (m), > 0.
    tendon_slack_length : float, default 0.2
        ``l_slack`` (m), > 0 (≥ 0 allowed with a rigid tendon).
    pennation_angle_at_optimal : float, default 0
        ``α_opt`` (rad), in [0, π/2).
    max_contraction_velocity : float, default 10
        ``v_max`` in **optimal fiber lengths per second**, > 0.
    activation_time_constant : float, default 0.015
        ``τ_a`` (s), > 0.
    deactivation_time_constant : float, default 0.060
        ``τ_d`` (s), > 0.
    activation_dynamics_smoothing : float, default 0.1
        ``b`` in ``f = ½ tanh(b (e - a))``, > 0 (OpenSim recommends 10).
    default_activation : float, default 0.5
        Activation in the default state, > 0.
    default_normalized_tendon_force : float, default 0.5
        ``f̃_T`` in the default state, in [0, 5].
    active_force_width_scale : float, default 1
        Widens the active force-length curve, ≥ 1.
    fiber_damping : float, default 0
        ``β``: damping force ``F_max β ṽ_M`` along the fiber, ≥ 0.
    ignore_passive_fiber_force : bool, default False
        Makes ``f_PE ≡ 0``.
    passive_fiber_strain_at_one_norm_force : float, default 0.6
        ``e0`` (> 0): ``f_PE(1 + e0) = 1``.
    tendon_strain_at_one_norm_force : float, default 0.049
        ``ε_T`` (> 0): ``f_T(1 + ε_T) = 1``.
    tendon_compliance_dynamics_mode : {"explicit", "implicit"}, default "explicit"
        How the ``normalized_tendon_force`` state's dynamics are expressed
        (De Groote et al. 2016); irrelevant with a rigid tendon.
    ignore_tendon_compliance : bool, default False
        Rigid tendon (no ``normalized_tendon_force`` state).
    ignore_activation_dynamics : bool, default False
        ``a ≡ e`` (no ``activation`` state).
    min_control, max_control : float, default 0, 1
        Excitation bounds (Moco's default control bounds).
    """

    name: str = "muscle"
    max_isometric_force: float = 1000.0
    optimal_fiber_length: float = 0.1
    tendon_slack_length: float = 0.2
    pennation_angle_at_optimal: float = 0.0
    max_contraction_velocity: float = 10.0
    activation_time_constant: float = 0.015
    deactivation_time_constant: float = 0.060
    activation_dynamics_smoothing: float = 0.1
    default_activation: float = 0.5
    default_normalized_tendon_force: float = 0.5
    active_force_width_scale: float = 1.0
    fiber_damping: float = 0.0
    ignore_passive_fiber_force: bool = False
    passive_fiber_strain_at_one_norm_force: float = 0.6
    tendon_strain_at_one_norm_force: float = 0.049
    tendon_compliance_dynamics_mode: str = "explicit"
    ignore_tendon_compliance: bool = False
    ignore_activation_dynamics: bool = False
    min_control: float = 0.0
    max_control: float = 1.0

    # -- validation ------------------------------------------------------------

    def __post_init__(self):
        for key in _FLOAT_FIELDS + _BOOL_FIELDS + ("name", "tendon_compliance_dynamics_mode"):
            object.__setattr__(self, key, self._coerce(key, getattr(self, key)))
        self.validate()
        object.__setattr__(self, "_initialized", True)

    def __setattr__(self, key, value):
        if not getattr(self, "_initialized", False) or key not in _FIELD_NAMES:
            object.__setattr__(self, key, value)
            return
        value = self._coerce(key, value)
        old = getattr(self, key)
        object.__setattr__(self, key, value)
        try:
            self.validate()
        except ValueError:
            object.__setattr__(self, key, old)
            raise

    def _err(self, msg: str) -> ValueError:
        return ValueError(f"DeGrooteFregly2016Muscle {getattr(self, 'name', '?')!r}: {msg}")

    def _coerce(self, key: str, value):
        if key == "name":
            if not isinstance(value, str) or not value:
                raise self._err(f"name must be a non-empty string, got {value!r}")
            return value
        if key == "tendon_compliance_dynamics_mode":
            if value not in _TENDON_MODES:
                raise self._err(f"tendon_compliance_dynamics_mode must be 'explicit' or 'implicit', got {value!r}")
            return str(value)
        if key in _BOOL_FIELDS:
            if not isinstance(value, (bool, np.bool_)):
                raise self._err(f"{key} must be a bool, got {value!r}")
            return bool(value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise self._err(f"{key} must be a real number, got {value!r}")
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and key not in ("min_control", "max_control")):
            raise self._err(f"{key} must be finite, got {value!r}")
        return value

    def validate(self) -> None:
        """Check all property values (as OpenSim's ``extendFinalizeFromProperties``).

        Raises
        ------
        ValueError
            Naming the muscle, the property, the rule and the offending value.
        """
        def need(cond, key, rule):
            if not cond:
                raise self._err(f"{key} must be {rule}, got {getattr(self, key)!r}")

        for key in ("max_isometric_force", "optimal_fiber_length", "max_contraction_velocity",
                    "activation_time_constant", "deactivation_time_constant", "activation_dynamics_smoothing",
                    "default_activation", "passive_fiber_strain_at_one_norm_force",
                    "tendon_strain_at_one_norm_force"):
            need(getattr(self, key) > 0, key, "> 0")
        if self.ignore_tendon_compliance:
            need(self.tendon_slack_length >= 0, "tendon_slack_length", ">= 0")
        else:
            need(self.tendon_slack_length > 0, "tendon_slack_length", "> 0 (compliant tendon)")
        need(0 <= self.pennation_angle_at_optimal < math.pi / 2, "pennation_angle_at_optimal",
             "in [0, pi/2) rad")
        need(MIN_NORM_TENDON_FORCE <= self.default_normalized_tendon_force <= MAX_NORM_TENDON_FORCE,
             "default_normalized_tendon_force", "in [0, 5]")
        need(self.active_force_width_scale >= 1, "active_force_width_scale", ">= 1")
        need(self.fiber_damping >= 0, "fiber_damping", ">= 0")
        if not self.min_control <= self.max_control:
            raise self._err(f"min_control ({self.min_control}) must be <= max_control ({self.max_control})")

    def replace(self, **changes: Any) -> "DeGrooteFregly2016Muscle":
        """A validated copy with some properties changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    # -- derived constants -----------------------------------------------------

    @property
    def fiber_width(self) -> float:
        """Fiber width (height) ``w = l_opt sin α_opt`` (m), constant (De Groote et al. 2016)."""
        if self.pennation_angle_at_optimal == 0:
            return 0.0  # exactly, also when optimal_fiber_length is a symbolic parameter
        return self.optimal_fiber_length * math.sin(self.pennation_angle_at_optimal)

    @property
    def max_contraction_velocity_in_meters_per_second(self) -> float:
        """``v_max l_opt`` (m/s)."""
        return self.max_contraction_velocity * self.optimal_fiber_length

    @property
    def tendon_stiffness_parameter(self) -> float:
        """kT of the tendon curve (dimensionless), from ``tendon_strain_at_one_norm_force``."""
        return tendon_stiffness_parameter(self.tendon_strain_at_one_norm_force)

    @property
    def is_tendon_dynamics_explicit(self) -> bool:
        """True if the (compliant) tendon uses the explicit form."""
        return self.tendon_compliance_dynamics_mode == "explicit"

    @property
    def state_variable_names(self) -> list[str]:
        """OpenSim's continuous state names of this muscle (relative to its path).

        ``"activation"`` unless ``ignore_activation_dynamics``;
        ``"normalized_tendon_force"`` unless ``ignore_tendon_compliance``.
        """
        names = []
        if not self.ignore_activation_dynamics:
            names.append("activation")
        if not self.ignore_tendon_compliance:
            names.append("normalized_tendon_force")
        return names

    @property
    def implicit_derivative_names(self) -> list[str]:
        """Moco's extra variables: ``["implicitderiv_normalized_tendon_force"]`` in implicit mode."""
        if not self.ignore_tendon_compliance and not self.is_tendon_dynamics_explicit:
            return ["implicitderiv_normalized_tendon_force"]
        return []

    @property
    def implicit_residual_names(self) -> list[str]:
        """Moco's path constraints: ``["implicitresidual_normalized_tendon_force"]`` in implicit mode."""
        return [n.replace("implicitderiv_", "implicitresidual_") for n in self.implicit_derivative_names]

    # -- curves ----------------------------------------------------------------

    def calc_active_force_length_multiplier(self, norm_fiber_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_L(l̃_M)`` with this muscle's width scale; see :func:`active_force_length_multiplier`."""
        return active_force_length_multiplier(norm_fiber_length, self.active_force_width_scale, xp)

    def calc_active_force_length_multiplier_derivative(self, norm_fiber_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_L'(l̃_M)``; see :func:`active_force_length_multiplier_derivative`."""
        return active_force_length_multiplier_derivative(norm_fiber_length, self.active_force_width_scale, xp)

    def calc_force_velocity_multiplier(self, norm_fiber_velocity: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_V(ṽ_M)``; see :func:`force_velocity_multiplier`."""
        return force_velocity_multiplier(norm_fiber_velocity, xp)

    def calc_force_velocity_multiplier_derivative(self, norm_fiber_velocity: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_V'(ṽ_M)``; see :func:`force_velocity_multiplier_derivative`."""
        return force_velocity_multiplier_derivative(norm_fiber_velocity, xp)

    def calc_force_velocity_inverse_curve(self, force_velocity_mult: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``ṽ_M = f_V⁻¹(f_V)``; see :func:`force_velocity_inverse`."""
        return force_velocity_inverse(force_velocity_mult, xp)

    def calc_force_velocity_inverse_curve_derivative(self, force_velocity_mult: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``d f_V⁻¹ / d f_V``; see :func:`force_velocity_inverse_derivative`."""
        return force_velocity_inverse_derivative(force_velocity_mult, xp)

    def calc_passive_force_multiplier(self, norm_fiber_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_PE(l̃_M)`` (``0`` if ``ignore_passive_fiber_force``); see :func:`passive_force_multiplier`."""
        if self.ignore_passive_fiber_force:
            return _zeros_like(norm_fiber_length)
        return passive_force_multiplier(norm_fiber_length, self.passive_fiber_strain_at_one_norm_force, xp)

    def calc_passive_force_multiplier_derivative(self, norm_fiber_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_PE'(l̃_M)``; see :func:`passive_force_multiplier_derivative`."""
        if self.ignore_passive_fiber_force:
            return _zeros_like(norm_fiber_length)
        return passive_force_multiplier_derivative(norm_fiber_length, self.passive_fiber_strain_at_one_norm_force, xp)

    def calc_passive_force_multiplier_integral(self, norm_fiber_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``∫_{0.2}^{l̃_M} f_PE``; see :func:`passive_force_multiplier_integral`."""
        if self.ignore_passive_fiber_force:
            return _zeros_like(norm_fiber_length)
        return passive_force_multiplier_integral(norm_fiber_length, self.passive_fiber_strain_at_one_norm_force, xp)

    def calc_tendon_force_multiplier(self, norm_tendon_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_T(l̃_T)``; see :func:`tendon_force_multiplier`."""
        return tendon_force_multiplier(norm_tendon_length, self.tendon_strain_at_one_norm_force, xp)

    def calc_tendon_force_multiplier_derivative(self, norm_tendon_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``f_T'(l̃_T)``; see :func:`tendon_force_multiplier_derivative`."""
        return tendon_force_multiplier_derivative(norm_tendon_length, self.tendon_strain_at_one_norm_force, xp)

    def calc_tendon_force_multiplier_integral(self, norm_tendon_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``∫_1^{l̃_T} f_T``; see :func:`tendon_force_multiplier_integral`."""
        return tendon_force_multiplier_integral(norm_tendon_length, self.tendon_strain_at_one_norm_force, xp)

    def calc_tendon_force_length_inverse_curve(self, norm_tendon_force: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``l̃_T = f_T⁻¹(f̃_T)``; see :func:`tendon_force_length_inverse`."""
        return tendon_force_length_inverse(norm_tendon_force, self.tendon_strain_at_one_norm_force, xp)

    def calc_tendon_force_length_inverse_curve_derivative(self, norm_tendon_force_derivative: ArrayOrExpr,
                                                          norm_tendon_length: ArrayOrExpr,
                                                          xp: Any = np) -> ArrayOrExpr:
        """``ṽ_T = ḟ_T / f_T'(l̃_T)``; see :func:`tendon_force_length_inverse_derivative`."""
        return tendon_force_length_inverse_derivative(norm_tendon_force_derivative, norm_tendon_length,
                                                      self.tendon_strain_at_one_norm_force, xp)

    # -- stiffnesses -----------------------------------------------------------

    def calc_fiber_stiffness(self, activation: ArrayOrExpr, norm_fiber_length: ArrayOrExpr,
                             force_velocity_mult: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """Fiber stiffness along the fiber ``dF_M/dl_M`` (N/m), OpenSim's ``calcFiberStiffness``.

        ``F_max (a f_L'(l̃_M) f_V + f_PE'(l̃_M)) / l_opt`` (the damping term does
        not depend on length).

        Parameters
        ----------
        activation, norm_fiber_length, force_velocity_mult : float, ndarray or sympy.Expr
            ``a``, ``l̃_M`` and ``f_V`` (all dimensionless; broadcast).
        xp : module, default numpy
        """
        return self.max_isometric_force / self.optimal_fiber_length * (
            activation * self.calc_active_force_length_multiplier_derivative(norm_fiber_length, xp)
            * force_velocity_mult + self.calc_passive_force_multiplier_derivative(norm_fiber_length, xp))

    def calc_tendon_stiffness(self, norm_tendon_length: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """Tendon stiffness ``k_T = (F_max / l_slack) f_T'(l̃_T)`` (N/m); ``inf`` if rigid.

        Parameters
        ----------
        norm_tendon_length : float, ndarray or sympy.Expr
        xp : module, default numpy
        """
        if self.ignore_tendon_compliance:
            return math.inf
        return self.max_isometric_force / self.tendon_slack_length * \
            self.calc_tendon_force_multiplier_derivative(norm_tendon_length, xp)

    # -- activation dynamics -----------------------------------------------------

    def calc_activation_derivative(self, activation: ArrayOrExpr, excitation: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """``da/dt`` with this muscle's τ_a, τ_d and smoothing (De Groote et al. 2016).

        See :func:`activation_derivative`. Meaningful only when
        ``ignore_activation_dynamics`` is False (otherwise the muscle has no
        activation state and ``a = e``). Note OpenSim 4.6's static-local caveat
        (module docstring): OpenSim may use another muscle's constants.

        Parameters
        ----------
        activation : float, ndarray or sympy.Expr
            ``a`` (dimensionless).
        excitation : float, ndarray or sympy.Expr
            ``e`` (dimensionless); broadcast with ``a``.
        xp : module, default numpy

        Returns
        -------
        ``da/dt`` (1/s), broadcast shape.
        """
        return activation_derivative(activation, excitation, self.activation_time_constant,
                                     self.deactivation_time_constant, self.activation_dynamics_smoothing, xp)

    # -- musculotendon geometry and force (De Groote et al. 2016) ----------------------

    def _length_level(self, mt_length, norm_tendon_length, xp):
        f = _ns(xp)
        tendon_length = self.tendon_slack_length * norm_tendon_length
        l_at = mt_length - tendon_length
        w = self.fiber_width
        if w == 0.0:
            # OpenSim: sqrt(l_at**2 + 0) = |l_at|; identical for l_at > 0, and smooth.
            fiber_length = l_at
            cos_a = _ones_like(l_at)
            sin_a = _zeros_like(l_at)
            alpha = _zeros_like(l_at)
        else:
            fiber_length = f.sqrt(l_at ** 2 + w ** 2)
            cos_a = l_at / fiber_length
            sin_a = w / fiber_length
            alpha = f.asin(sin_a)
        lm_norm = fiber_length / self.optimal_fiber_length
        return dict(
            tendon_length=tendon_length, normalized_tendon_length=norm_tendon_length,
            fiber_length_along_tendon=l_at, fiber_length=fiber_length, normalized_fiber_length=lm_norm,
            cos_pennation_angle=cos_a, sin_pennation_angle=sin_a, pennation_angle=alpha,
            active_force_length_multiplier=self.calc_active_force_length_multiplier(lm_norm, xp),
            passive_force_multiplier=self.calc_passive_force_multiplier(lm_norm, xp),
        )

    def calc_muscle_info(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr, mt_velocity: ArrayOrExpr,
                         norm_tendon_force: ArrayOrExpr = None,
                         norm_tendon_force_derivative: ArrayOrExpr = None, mode: str | None = None, xp: Any = np) -> MuscleInfo:
        """All length-, velocity- and dynamics-level quantities (De Groote et al. 2016).

        Mirrors OpenSim's ``calcMuscleLengthInfoHelper``,
        ``calcFiberVelocityInfoHelper`` and ``calcMuscleDynamicsInfoHelper``:

        * length: ``l̃_T = 1`` (rigid) or ``f_T⁻¹(f̃_T)``; ``l_T = l_slack l̃_T``;
          ``l_M,AT = l_MT - l_T``; ``l_M = sqrt(l_M,AT² + w²)`` (``= l_M,AT`` if
          ``w = 0``); ``cos α = l_M,AT/l_M``, ``sin α = w/l_M``.
        * velocity, rigid: ``v_T = 0``, ``v_M = v_MT cos α``.
          explicit: ``f_V = (f̃_T/cos α - f_PE)/(a f_L)``, ``ṽ_M = f_V⁻¹(f_V)``,
          ``v_T = v_MT - v_M/cos α``, ``ḟ_T = (v_T/l_slack) f_T'(l̃_T)``.
          implicit: ``ṽ_T = ḟ_T/f_T'(l̃_T)``, ``v_M = (v_MT - l_slack ṽ_T) cos α``,
          ``f_V = f_V(ṽ_M)``.
        * dynamics: ``F_M = F_max (a f_L f_V + f_PE + β ṽ_M)``; tendon force
          ``F_M cos α`` (rigid) or ``F_max f̃_T`` (compliant); implicit residual
          ``f̃_T - F_M cos α / F_max``.

        Parameters
        ----------
        activation : float, ndarray or sympy.Expr
            ``a`` (dimensionless). With ``ignore_activation_dynamics`` pass the
            excitation.
        mt_length : float, ndarray or sympy.Expr
            Musculotendon (path) length ``l_MT`` (m).
        mt_velocity : float, ndarray or sympy.Expr
            Musculotendon lengthening speed ``v_MT`` (m/s).
        norm_tendon_force : float, ndarray or sympy.Expr, optional
            State ``f̃_T`` (dimensionless); required for a compliant tendon,
            ignored for a rigid one.
        norm_tendon_force_derivative : float, ndarray or sympy.Expr, optional
            ``ḟ_T`` (1/s), Moco's ``implicitderiv_normalized_tendon_force``;
            required in implicit mode.
        mode : {"explicit", "implicit"}, optional
            Overrides ``tendon_compliance_dynamics_mode`` (compliant tendon only).
        xp : module, default numpy

        Returns
        -------
        MuscleInfo
            Entries broadcast over the inputs (numpy) or SymPy expressions.
        """
        a = activation
        if self.ignore_tendon_compliance:
            mode = "rigid"
            lt_norm = _ones_like(mt_length)
        else:
            mode = mode or self.tendon_compliance_dynamics_mode
            if mode not in _TENDON_MODES:
                raise ValueError(f"mode must be 'explicit' or 'implicit', got {mode!r}")
            if norm_tendon_force is None:
                raise ValueError(f"muscle {self.name!r} has a compliant tendon: norm_tendon_force is required")
            if mode == "implicit" and norm_tendon_force_derivative is None:
                raise ValueError(f"muscle {self.name!r}: implicit mode needs norm_tendon_force_derivative")
            lt_norm = self.calc_tendon_force_length_inverse_curve(norm_tendon_force, xp)
        L = self._length_level(mt_length, lt_norm, xp)
        cos_a = L["cos_pennation_angle"]
        fl, fpe = L["active_force_length_multiplier"], L["passive_force_multiplier"]
        vmax = self.max_contraction_velocity_in_meters_per_second
        l_slack = self.tendon_slack_length

        # -- velocity level
        ftn_dot = None
        if mode == "explicit":
            fv = (norm_tendon_force / cos_a - fpe) / (a * fl)
            vm_norm = self.calc_force_velocity_inverse_curve(fv, xp)
            vm = vm_norm * vmax
            vm_at = vm / cos_a
            vt = mt_velocity - vm_at
            vt_norm = vt / l_slack
            ftn_dot = vt_norm * self.calc_tendon_force_multiplier_derivative(lt_norm, xp)
        else:
            if mode == "rigid":
                vt_norm = _zeros_like(mt_velocity)
                ftn_dot = _zeros_like(mt_velocity)
            else:
                vt_norm = self.calc_tendon_force_length_inverse_curve_derivative(norm_tendon_force_derivative,
                                                                                 lt_norm, xp)
                ftn_dot = norm_tendon_force_derivative
            vt = l_slack * vt_norm
            vm_at = mt_velocity - vt
            vm = vm_at * cos_a
            vm_norm = vm / vmax
            fv = self.calc_force_velocity_multiplier(vm_norm, xp)
        if self.fiber_width == 0.0:
            alpha_dot = _zeros_like(vm)
        else:
            alpha_dot = -vm / L["fiber_length"] * (self.fiber_width / L["fiber_length_along_tendon"])

        # -- dynamics level
        fmax = self.max_isometric_force
        f_act = fmax * (a * fl * fv)
        f_pe = fmax * fpe
        f_damp = _mul(fmax * self.fiber_damping, vm_norm)
        fiber_force = f_act + f_pe + f_damp
        fiber_force_at = fiber_force * cos_a
        if mode == "rigid":
            tendon_force = fiber_force_at
            ftn = fiber_force_at / fmax
        else:
            ftn = norm_tendon_force
            tendon_force = fmax * norm_tendon_force
        residual = None
        if mode == "implicit":
            residual = norm_tendon_force - (a * fl * fv + fpe + _mul(self.fiber_damping, vm_norm)) * cos_a

        return MuscleInfo(
            mode=mode, **L,
            force_velocity_multiplier=fv, normalized_fiber_velocity=vm_norm, fiber_velocity=vm,
            fiber_velocity_along_tendon=vm_at, tendon_velocity=vt, normalized_tendon_velocity=vt_norm,
            pennation_angular_velocity=alpha_dot, activation=a, active_fiber_force=f_act,
            passive_fiber_elastic_force=f_pe, passive_fiber_damping_force=f_damp, fiber_force=fiber_force,
            fiber_force_along_tendon=fiber_force_at, tendon_force=tendon_force, normalized_tendon_force=ftn,
            normalized_tendon_force_derivative=ftn_dot, implicit_residual=residual,
        )

    # -- rigid tendon ----------------------------------------------------------

    def _require_rigid(self, what):
        if not self.ignore_tendon_compliance:
            raise ValueError(f"{what} needs ignore_tendon_compliance=True; muscle {self.name!r} has a compliant "
                             f"tendon (use calc_muscle_info / calc_normalized_tendon_force_derivative / "
                             f"calc_implicit_residual)")

    def rigid_tendon_fiber_kinematics(self, mt_length: ArrayOrExpr, mt_velocity: ArrayOrExpr, xp: Any = np) -> FiberKinematics:
        """Fiber length/velocity of a rigid-tendon muscle (De Groote et al. 2016).

        ``l_M,AT = l_MT - l_slack``, ``l_M = sqrt(l_M,AT² + w²)`` (constant fiber
        height ``w = l_opt sin α_opt``; ``l_M = l_M,AT`` if ``w = 0``),
        ``cos α = l_M,AT / l_M``, ``v_M = v_MT cos α``.

        Parameters
        ----------
        mt_length : float, ndarray or sympy.Expr
            ``l_MT`` (m).
        mt_velocity : float, ndarray or sympy.Expr
            ``v_MT`` (m/s, positive lengthening).
        xp : module, default numpy

        Returns
        -------
        FiberKinematics
        """
        self._require_rigid("rigid_tendon_fiber_kinematics")
        L = self._length_level(mt_length, _ones_like(mt_length), xp)
        vm = mt_velocity * L["cos_pennation_angle"]
        return FiberKinematics(L["fiber_length"], vm, L["normalized_fiber_length"],
                               vm / self.max_contraction_velocity_in_meters_per_second, L["cos_pennation_angle"])

    def rigid_tendon_force(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr, mt_velocity: ArrayOrExpr,
                           xp: Any = np) -> ArrayOrExpr:
        """Tendon force of a rigid-tendon muscle (N) (De Groote et al. 2016).

        ``F_T = F_max (a f_L(l̃_M) f_V(ṽ_M) + f_PE(l̃_M) + β ṽ_M) cos α``, with the
        fiber kinematics of :meth:`rigid_tendon_fiber_kinematics`. This is the
        force the muscle applies along its path (OpenSim's ``getTendonForce``).

        Parameters
        ----------
        activation : float, ndarray or sympy.Expr
            ``a`` (dimensionless; the excitation if ``ignore_activation_dynamics``).
        mt_length : float, ndarray or sympy.Expr
            ``l_MT`` (m).
        mt_velocity : float, ndarray or sympy.Expr
            ``v_MT`` (m/s).
        xp : module, default numpy

        Returns
        -------
        Tendon tension (N), broadcast shape of the inputs.
        """
        self._require_rigid("rigid_tendon_force")
        k = self.rigid_tendon_fiber_kinematics(mt_length, mt_velocity, xp)
        return self.max_isometric_force * (
            activation * self.calc_active_force_length_multiplier(k.normalized_fiber_length, xp)
            * self.calc_force_velocity_multiplier(k.normalized_fiber_velocity, xp)
            + self.calc_passive_force_multiplier(k.normalized_fiber_length, xp)
            + _mul(self.fiber_damping, k.normalized_fiber_velocity)) * k.cos_pennation_angle

    # -- compliant tendon ------------------------------------------------------

    def _require_compliant(self, what):
        if self.ignore_tendon_compliance:
            raise ValueError(f"{what} needs a compliant tendon; muscle {self.name!r} has "
                             f"ignore_tendon_compliance=True")

    def compliant_tendon_force(self, norm_tendon_force: ArrayOrExpr) -> ArrayOrExpr:
        """Tendon force ``F_max f̃_T`` (N) of a compliant-tendon muscle."""
        self._require_compliant("compliant_tendon_force")
        return self.max_isometric_force * norm_tendon_force

    def calc_tendon_force(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr, mt_velocity: ArrayOrExpr,
                          norm_tendon_force: ArrayOrExpr = None, xp: Any = np) -> ArrayOrExpr:
        """Tendon force (N): :meth:`rigid_tendon_force` or ``F_max f̃_T``.

        Parameters
        ----------
        activation, mt_length, mt_velocity : float, ndarray or sympy.Expr
            ``a``, ``l_MT`` (m), ``v_MT`` (m/s); only used with a rigid tendon.
        norm_tendon_force : float, ndarray or sympy.Expr, optional
            ``f̃_T``; required with a compliant tendon.
        xp : module, default numpy
        """
        if self.ignore_tendon_compliance:
            return self.rigid_tendon_force(activation, mt_length, mt_velocity, xp)
        if norm_tendon_force is None:
            raise ValueError(f"muscle {self.name!r} has a compliant tendon: norm_tendon_force is required")
        return self.max_isometric_force * norm_tendon_force

    def calc_normalized_tendon_force_derivative(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr,
                                                mt_velocity: ArrayOrExpr, norm_tendon_force: ArrayOrExpr,
                                                xp: Any = np) -> ArrayOrExpr:
        """Explicit tendon dynamics ``df̃_T/dt`` (1/s) (De Groote et al. 2016, "Explicit").

        ``l̃_T = f_T⁻¹(f̃_T)`` gives ``l_M``, ``α``; the fiber force is taken equal
        to the tendon force: ``f_V = (f̃_T / cos α - f_PE(l̃_M)) / (a f_L(l̃_M))``,
        ``ṽ_M = f_V⁻¹(f_V)``, ``v_M = ṽ_M v_max l_opt``,
        ``v_T = v_MT - v_M / cos α``, ``df̃_T/dt = (v_T / l_slack) f_T'(l̃_T)``.
        As in OpenSim the inversion omits fiber damping and is singular where
        ``a f_L → 0`` (usable for time stepping; prefer the implicit form in
        optimal control).

        Parameters
        ----------
        activation : float, ndarray or sympy.Expr
            ``a`` (dimensionless, > 0).
        mt_length : float, ndarray or sympy.Expr
            ``l_MT`` (m).
        mt_velocity : float, ndarray or sympy.Expr
            ``v_MT`` (m/s).
        norm_tendon_force : float, ndarray or sympy.Expr
            State ``f̃_T`` (dimensionless).
        xp : module, default numpy

        Returns
        -------
        ``df̃_T/dt`` (1/s), broadcast shape.
        """
        self._require_compliant("calc_normalized_tendon_force_derivative")
        info = self.calc_muscle_info(activation, mt_length, mt_velocity, norm_tendon_force, mode="explicit", xp=xp)
        return info.normalized_tendon_force_derivative

    def calc_implicit_residual(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr, mt_velocity: ArrayOrExpr,
                               norm_tendon_force: ArrayOrExpr,
                               norm_tendon_force_derivative: ArrayOrExpr, xp: Any = np) -> ArrayOrExpr:
        """Moco's implicit tendon-compliance residual (De Groote et al. 2016, "Implicit").

        With ``ḟ_T`` (Moco's ``implicitderiv_normalized_tendon_force``, an
        extra algebraic variable): ``ṽ_T = ḟ_T / f_T'(l̃_T)``,
        ``v_M,AT = v_MT - l_slack ṽ_T``, ``v_M = v_M,AT cos α``,
        ``residual = f̃_T - [a f_L f_V(ṽ_M) + f_PE + β ṽ_M] cos α``
        (normalized, as OpenSim 4.6's output
        ``implicitresidual_normalized_tendon_force``); Moco enforces
        ``residual = 0`` as a path constraint and ``df̃_T/dt = ḟ_T``.

        Parameters
        ----------
        activation : float, ndarray or sympy.Expr
            ``a`` (dimensionless).
        mt_length : float, ndarray or sympy.Expr
            ``l_MT`` (m).
        mt_velocity : float, ndarray or sympy.Expr
            ``v_MT`` (m/s).
        norm_tendon_force : float, ndarray or sympy.Expr
            State ``f̃_T`` (dimensionless).
        norm_tendon_force_derivative : float, ndarray or sympy.Expr
            ``ḟ_T`` (1/s); Moco's default bounds [-1000, 1000].
        xp : module, default numpy

        Returns
        -------
        Residual (dimensionless), broadcast shape.
        """
        self._require_compliant("calc_implicit_residual")
        info = self.calc_muscle_info(activation, mt_length, mt_velocity, norm_tendon_force,
                                     norm_tendon_force_derivative, mode="implicit", xp=xp)
        return info.implicit_residual

    def calc_linearized_equilibrium_residual_derivative(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr,
                                                        mt_velocity: ArrayOrExpr, norm_tendon_force: ArrayOrExpr,
                                                        norm_tendon_force_derivative: ArrayOrExpr = None,
                                                        xp: Any = np) -> ArrayOrExpr:
        """The time derivative of the linearized fiber-tendon equilibrium (Millard et al. 2013, eq. A6), OpenSim's
        ``calcLinearizedEquilibriumResidualDerivative`` (N/s): ``k_M,AT v_M,AT − k_T (v_MT − v_M,AT)``, the velocity
        shared between fiber and tendon by their stiffnesses when it is zero; what Moco's
        ``MocoInitialVelocityEquilibriumDGFGoal`` holds at zero at the start.

        ``v_M,AT`` comes from the muscle's own tendon mode (explicit: its force-velocity inversion; implicit: from
        ``norm_tendon_force_derivative``, Moco's ``implicitderiv_normalized_tendon_force``); ``k_M,AT`` is the fiber's
        stiffness along the tendon, ``(∂F_M,AT/∂l_M) / (∂l_M,AT/∂l_M)``, ``k_T`` the tendon's
        (:meth:`calc_tendon_stiffness`).
        """
        self._require_compliant("calc_linearized_equilibrium_residual_derivative")
        info = self.calc_muscle_info(activation, mt_length, mt_velocity, norm_tendon_force,
                                     norm_tendon_force_derivative, xp=xp)
        k_m = self.calc_fiber_stiffness(activation, info.normalized_fiber_length, info.force_velocity_multiplier,
                                        xp=xp)
        cos_a, sin_a, lm = info.cos_pennation_angle, info.sin_pennation_angle, info.fiber_length
        if self.fiber_width == 0.0:
            k_m_at = k_m  # no pennation: ∂α/∂l_M = 0
        else:
            w = self.fiber_width
            dalpha = (-w / (lm * lm)) / xp.sqrt(1.0 - (w / lm) * (w / lm))
            dforce_at = k_m * cos_a - info.fiber_force * sin_a * dalpha
            k_m_at = dforce_at / (cos_a - lm * sin_a * dalpha)
        k_t = self.calc_tendon_stiffness(info.normalized_tendon_length, xp=xp)
        v_at = info.fiber_velocity_along_tendon
        return k_m_at * v_at - k_t * (mt_velocity - v_at)

    def calc_equilibrium_normalized_tendon_force(self, activation: ArrayOrExpr, mt_length: ArrayOrExpr,
                                                 mt_velocity: ArrayOrExpr = 0.0,
                                                 norm_tendon_force_derivative: ArrayOrExpr = 0.0, tol: float = 1e-14,
                                                 max_iterations: int = 200) -> ArrayOrExpr:
        """Solve muscle-tendon equilibrium for ``f̃_T`` (numpy only, vectorized).

        As OpenSim's ``computeInitialFiberEquilibrium`` (De Groote et al. 2016): the
        implicit residual with ``ḟ_T`` (default 0) is driven to zero by bisection
        on ``[0, 5]``. OpenSim stops at an interval of 1e-10; this bisects to
        ``tol`` (default 1e-14, i.e. to round-off).

        Parameters
        ----------
        activation, mt_length, mt_velocity : float or ndarray
            ``a``, ``l_MT`` (m), ``v_MT`` (m/s), broadcast together.
        norm_tendon_force_derivative : float or ndarray, default 0
            ``ḟ_T`` (1/s) used in the residual.
        tol : float, default 1e-14
            Final bracket width.
        max_iterations : int, default 200

        Returns
        -------
        ndarray (broadcast shape; 0-d for scalar inputs)
            Equilibrium ``f̃_T``.

        Raises
        ------
        ValueError
            If the residual has the same sign at 0 and 5 for some input
            (OpenSim: "Function has same sign at bounds of 0.0 and 5.0").
        """
        self._require_compliant("calc_equilibrium_normalized_tendon_force")
        a, l, v, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in
                                           (activation, mt_length, mt_velocity, norm_tendon_force_derivative)))

        def res(ftn):
            return self.calc_implicit_residual(a, l, v, ftn, d)

        lo = np.full(a.shape, MIN_NORM_TENDON_FORCE)
        hi = np.full(a.shape, MAX_NORM_TENDON_FORCE)
        with np.errstate(invalid="ignore"):
            r_lo, r_hi = res(lo), res(hi)
        bad = ~(np.sign(r_lo) * np.sign(r_hi) <= 0)
        if np.any(bad):
            raise ValueError(f"muscle {self.name!r}: equilibrium residual has the same sign (or is not finite) at "
                             f"normalized tendon forces 0.0 and 5.0 for {int(np.sum(bad))} input(s); "
                             f"first at l_MT = {l[bad].flat[0]!r}")
        for _ in range(max_iterations):
            mid = 0.5 * (lo + hi)
            r_mid = res(mid)
            same = np.sign(r_mid) == np.sign(r_lo)
            lo = np.where(same, mid, lo)
            r_lo = np.where(same, r_mid, r_lo)
            hi = np.where(same, hi, mid)
            if np.all(hi - lo <= tol):
                break
        return 0.5 * (lo + hi)

    # -- OpenSim interop ---------------------------------------------------------

    @classmethod
    def from_opensim(cls, muscle: Any) -> "DeGrooteFregly2016Muscle":
        """Copy the properties of an ``opensim.DeGrooteFregly2016Muscle`` (path not copied).

        An unnamed OpenSim muscle (name ``""``) gets the default name ``"muscle"``.
        """
        kwargs = {key: getattr(muscle, f"get_{key}")() for key in _FLOAT_FIELDS + _BOOL_FIELDS}
        kwargs["tendon_compliance_dynamics_mode"] = muscle.get_tendon_compliance_dynamics_mode()
        return cls(name=muscle.getName() or "muscle", **kwargs)

    def to_opensim(self) -> Any:
        """A new ``opensim.DeGrooteFregly2016Muscle`` with these properties (no path points).

        Requires the ``opensim`` package. Add path points (e.g.
        ``addNewPathPoint``) before adding it to a model.
        """
        import opensim as osim

        m = osim.DeGrooteFregly2016Muscle()
        m.setName(self.name)
        for key in _FLOAT_FIELDS + _BOOL_FIELDS + ("tendon_compliance_dynamics_mode",):
            getattr(m, f"set_{key}")(getattr(self, key))
        return m


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(DeGrooteFregly2016Muscle))
