"""Goals on a model output, integrated over the motion: Moco's ``MocoOutputGoal``, ``MocoOutputTrackingGoal`` and
``MocoOutputExtremumGoal`` (Moco 4.6's ``MocoOutputBase`` semantics).

The value ``v`` at each grid point is read from a model output (``problem`` outputs: ``/tau0/actuation``,
``/com_position``, ``/forceset/soleus_r/tendon_force``, ...; Moco's ``/tau0|actuation`` and ``|com_position`` are
accepted and translated):

* a scalar output: ``v`` is its value (``output_index`` must be -1);
* a vector output (3 components, or 6 as Simbody's spatial vectors: rotation then translation): ``v`` is its
  norm with ``output_index=-1`` (the default), else component ``output_index``;
* with ``second_output_path`` and ``operation`` (``"addition"``, ``"subtraction"``, ``"multiplication"``,
  ``"division"``), the two outputs are combined element by element first (then indexed or normed as above;
  multiplication and division of 6-component outputs need an index, as in Moco).

The integrand is ``v`` raised to ``exponent`` (an integer >= 1): ``v`` itself for 1 (it may be negative), ``v²``
for 2, ``|v|^p`` above. ``OutputTrackingGoal`` raises ``v - f(t)`` instead, ``f`` an OpenSim function of time;
``OutputExtremumGoal`` integrates ``β ((1/s) ln(1 + exp(s β v)))^p``, a smooth minimum (``β = -1``) or maximum
(``β = 1``) of ``v`` and 0 with smoothing factor ``s`` in [0.2, 1]. Each goal's first and second derivatives are
exact (the output's own derivatives come from the engine).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..modeling.functions import OpenSimFunction
from ..symbolic.jet import Jet, jet_abs_power, jet_sqrt
from ..util.checks import finite_number
from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext, NodeData

__all__ = ["OutputGoal", "OutputTrackingGoal", "OutputExtremumGoal", "InitialOutputGoal", "FinalOutputGoal",
           "OutputPeriodicityGoal", "OUTPUT_OPERATIONS", "moco_output_name"]

#: Moco's operations combining two outputs.
OUTPUT_OPERATIONS = ("addition", "subtraction", "multiplication", "division")


def moco_output_name(path: str) -> str:
    """moco_lab's name of an output given as Moco writes it: ``/tau0|actuation`` -> ``/tau0/actuation``,
    ``|com_position`` (the model's own) -> ``/com_position``; moco_lab's names pass unchanged."""
    component, bar, output = path.partition("|")
    if not bar:
        return path
    return f"{component.rstrip('/')}/{output}" if component not in ("", "/") else f"/{output}"


class _OutputValue:
    """``v`` at the grid points from one or two outputs (module docstring), with its exact derivatives."""

    def __init__(self, first: str, second: str | None, operation: str, index: int, size: int):
        self.first, self.second, self.operation, self.index, self.size = first, second, operation, index, size

    def names(self) -> tuple:
        return (self.first,) if self.second is None else (self.first, self.second)

    def _combined(self, d: NodeData):
        """``w`` (n, k) and its derivatives: ``∂w/∂first``, ``∂w/∂second`` (element by element), the cross and the
        second-second second derivatives (None where zero)."""
        r1 = np.asarray(d.outputs[self.first], float)
        n, k = r1.shape
        if self.second is None:
            return r1, np.ones((n, k)), None, None, None
        r2 = np.asarray(d.outputs[self.second], float)
        op = self.operation
        if op == "addition":
            return r1 + r2, np.ones((n, k)), np.ones((n, k)), None, None
        if op == "subtraction":
            return r1 - r2, np.ones((n, k)), -np.ones((n, k)), None, None
        if op == "multiplication":
            return r1 * r2, r2, r1, np.ones((n, k)), None
        return r1 / r2, 1.0 / r2, -r1 / r2 ** 2, -1.0 / r2 ** 2, 2.0 * r1 / r2 ** 3

    def _reduced(self, w: np.ndarray):
        """``v`` from ``w``: one component or the norm; ``∂v/∂w`` (n, k) and, for the norm, ``∂²v/∂w²``."""
        n, k = w.shape
        if k == 1 or self.index >= 0:
            c = 0 if k == 1 else self.index
            gw = np.zeros((n, k))
            gw[:, c] = 1.0
            return w[:, c], gw, None
        v = np.sqrt(np.sum(w * w, axis=1))
        safe = np.where(v > 0, v, 1.0)
        gw = w / safe[:, None]
        return v, gw, (np.eye(k)[None, :, :] - gw[:, :, None] * gw[:, None, :]) / safe[:, None, None]  # (I − ŵŵᵀ)/|w|

    def __call__(self, d: NodeData) -> tuple[np.ndarray, dict]:
        """``v`` (n,) and ``∂v/∂output`` {name: (n, k)}."""
        w, dw1, dw2, _, _ = self._combined(d)
        v, gw, _ = self._reduced(w)
        grad = {self.first: gw * dw1}
        if self.second is not None:
            grad[self.second] = gw * dw2
        return v, grad

    def second_derivatives(self, d: NodeData) -> list:
        """The second derivatives of ``v`` in the output components, as ``(name_a, i, name_b, j, values (n,))``
        (each unordered pair once, zeros left out)."""
        w, dw1, dw2, cross, second2 = self._combined(d)
        _, gw, Hw = self._reduced(w)
        k = w.shape[1]
        terms = []
        sources = [(self.first, dw1)] + ([(self.second, dw2)] if self.second is not None else [])
        if Hw is not None:
            for a, (na, da) in enumerate(sources):
                for b, (nb, db) in enumerate(sources):
                    if b < a:
                        continue
                    for i in range(k):
                        for j in range(k):
                            if a == b and j < i:
                                continue
                            terms.append((na, i, nb, j, Hw[:, i, j] * da[:, i] * db[:, j]))
        # the operation's own second derivatives, times ∂v/∂w
        for i in range(k):
            if cross is not None:
                terms.append((self.first, i, self.second, i, gw[:, i] * cross[:, i]))
            if second2 is not None:
                terms.append((self.second, i, self.second, i, gw[:, i] * second2[:, i]))
        return terms

    def generic(self, outputs: dict, squared_norm: bool = False):
        """``v`` at one grid point for any numbers (floats or :class:`~moco_lab.symbolic.jet.Jet`):
        ``outputs[name]`` the output's components; ``squared_norm``: ``|w|²`` instead of the norm."""
        r1 = list(outputs[self.first])
        if self.second is None:
            w = r1
        else:
            r2 = list(outputs[self.second])
            op = self.operation
            w = [a + b if op == "addition" else a - b if op == "subtraction" else a * b if op == "multiplication"
                 else a / b for a, b in zip(r1, r2)]
        if len(w) == 1 or self.index >= 0:
            return w[0 if len(w) == 1 else self.index]
        total = sum(c * c for c in w)
        if squared_norm:
            return total
        if float(total.value if isinstance(total, Jet) else total) == 0.0:
            return Jet(0.0) if isinstance(total, Jet) else 0.0  # the norm's kink: zero slope, as the integrands take it
        return jet_sqrt(total)


def _power(z: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``P(z)``, ``P'(z)``, ``P''(z)`` of Moco's exponent rule."""
    if p == 1:
        return z, np.ones_like(z), np.zeros_like(z)
    if p == 2:
        return z * z, 2 * z, np.full_like(z, 2.0)
    a = np.abs(z)
    return a ** p, p * a ** (p - 1) * np.sign(z), p * (p - 1) * a ** (p - 2)


class _OutputGoalBase(Goal):
    """What :class:`OutputGoal`, :class:`OutputTrackingGoal` and :class:`OutputExtremumGoal` share (Moco's
    ``MocoOutputBase``)."""

    #: the class named in error messages (the output path constraints, which use these goals for their rows)
    owner_type: str | None = None

    def __init__(self, name: str | None = None, weight: float = 1.0, output_path: str = "",
                 second_output_path: str = "", operation: str = "", exponent: int = 1, output_index: int = -1,
                 enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"{self.owner_type or type(self).__name__} {self.name!r}"
        if not isinstance(output_path, str) or not output_path:
            raise ValueError(f"{owner}: no output_path provided.")
        if isinstance(exponent, bool) or not isinstance(exponent, (int, np.integer)) or exponent < 1:
            raise ValueError(f"{owner}: exponent must be an integer of 1 or greater, got {exponent!r}")
        if isinstance(output_index, bool) or not isinstance(output_index, (int, np.integer)) or output_index < -1:
            raise ValueError(f"{owner}: invalid output index {output_index!r} (-1 for the norm, or a component)")
        if second_output_path and not operation:
            raise ValueError(f"{owner}: a second output path was provided, but no operation; choose one of "
                             f"{list(OUTPUT_OPERATIONS)}")
        if operation and not second_output_path:
            raise ValueError(f"{owner}: an operation was provided but a second output path was not provided.")
        if operation and operation not in OUTPUT_OPERATIONS:
            raise ValueError(f"{owner}: invalid operation {operation!r}, must be one of {list(OUTPUT_OPERATIONS)}")
        self.output_path, self.second_output_path, self.operation = output_path, str(second_output_path), str(operation)
        self.exponent, self.output_index = int(exponent), int(output_index)

    def _value(self, ctx: GoalContext) -> _OutputValue:
        owner = f"{self.owner_type or type(self).__name__} {self.name!r}"
        first = ctx.output(moco_output_name(self.output_path))
        second = ctx.output(moco_output_name(self.second_output_path)) if self.second_output_path else None
        size = ctx.output_size(first)
        if size is not None:
            if second is not None and ctx.output_size(second) != size:
                raise ValueError(f"{owner}: the outputs {first!r} ({size} components) and {second!r} "
                                 f"({ctx.output_size(second)}) do not match")
            if size == 1 and self.output_index != -1:
                raise ValueError(f"{owner}: an output index was provided, but the output {first!r} is a scalar.")
            if size > 1 and self.output_index >= size:
                raise ValueError(f"{owner}: the output {first!r} has {size} components, but output index "
                                 f"{self.output_index} was provided.")
            if size == 6 and self.output_index == -1 and self.operation in ("multiplication", "division"):
                raise ValueError(f"{owner}: multiplication and division are not supported with 6-component "
                                 "(spatial vector) outputs without an index.")
        return _OutputValue(first, second, self.operation, self.output_index, size or 0)

    def _integrand(self, ctx: GoalContext, shape, value: _OutputValue | None = None):
        """A BoundGoal integrating ``shape(v, t) -> (f, ∂f/∂v, ∂²f/∂v², ∂f/∂t, ∂²f/∂v∂t, ∂²f/∂t²)``."""
        value = value or self._value(ctx)

        def integrand(d: NodeData, jac: bool):
            v, gv = value(d)
            f, fv, _, ft, _, _ = shape(v, d.t)
            if not jac:
                return f, {}
            return f, {"outputs": {name: fv[:, None] * g for name, g in gv.items()}, "t": ft}

        def hessian(d: NodeData):
            v, gv = value(d)
            terms = value.second_derivatives(d)
            _, fv, fvv, _, fvt, ftt = shape(v, d.t)
            out = []
            comps = [(name, i) for name in value.names() for i in range(gv[name].shape[1])]
            for a, (na, i) in enumerate(comps):
                for nb, j in comps[a:]:
                    out.append((("out", na, i), ("out", nb, j), fvv * gv[na][:, i] * gv[nb][:, j]))
            for na, i, nb, j, val in terms:
                out.append((("out", na, i), ("out", nb, j), fv * val))
            if fvt is not None:
                for na, i in comps:
                    out.append((("out", na, i), ("t", 0), fvt * gv[na][:, i]))
                out.append((("t", 0), ("t", 0), ftt))
            return out

        return self._bound(ctx, integrand=integrand, hessian=hessian, outputs=value.names(), columns={})

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update(output_path=self.output_path, second_output_path=self.second_output_path, operation=self.operation,
                 exponent=self.exponent, output_index=self.output_index)
        return d


class OutputGoal(_OutputGoalBase):
    """Minimize ``∫ P(v) dt`` of a model output (Moco's ``MocoOutputGoal``; module docstring).

    Parameters
    ----------
    output_path : str
        The output (``/tau0/actuation``, or as Moco writes it, ``/tau0|actuation``).
    second_output_path, operation : str
        An optional second output and how to combine the two.
    exponent : int
        ``P``: 1 (default), 2, or ``|v|^p`` above.
    output_index : int
        -1 (default): a vector output's norm; else its component.
    """

    default_name = "output"

    def bind(self, ctx: GoalContext) -> BoundGoal:
        p = self.exponent

        def shape(v, t):
            f, fv, fvv = _power(v, p)
            return f, fv, fvv, None, None, None

        return self._integrand(ctx, shape)


class OutputTrackingGoal(_OutputGoalBase):
    """Minimize ``∫ P(v - f(t)) dt``: an output tracking a function of time (Moco's ``MocoOutputTrackingGoal``).

    Parameters
    ----------
    tracking_function : OpenSim function of time (``moco_lab.modeling.functions``)
    Others as :class:`OutputGoal`.
    """

    default_name = "output_tracking"

    def __init__(self, name: str | None = None, weight: float = 1.0, tracking_function: OpenSimFunction | None = None,
                 **options: Any):
        super().__init__(name, weight, **options)
        if not isinstance(tracking_function, OpenSimFunction):
            raise TypeError(f"OutputTrackingGoal {self.name!r}: tracking_function must be an OpenSim function of time "
                            f"(moco_lab.modeling.functions), got {type(tracking_function).__name__}")
        self.tracking_function = tracking_function

    def bind(self, ctx: GoalContext) -> BoundGoal:
        p, g = self.exponent, self.tracking_function

        def shape(v, t):
            e = v - g(np.asarray(t, float))
            f, fe, fee = _power(e, p)
            gt, gtt = g.derivative(np.asarray(t, float)), g.second_derivative(np.asarray(t, float))
            return f, fe, fee, -fe * gt, -fee * gt, fee * gt * gt - fe * gtt

        return self._integrand(ctx, shape)

    def to_dict(self) -> dict:
        raise TypeError(f"OutputTrackingGoal {self.name!r}: study files do not hold tracking functions yet; save the "
                        "code that adds the goal.")


class OutputExtremumGoal(_OutputGoalBase):
    """Minimize ``∫ β ((1/s) ln(1 + exp(s β v)))^p dt``: a smooth minimum or maximum of an output and 0 (Moco's
    ``MocoOutputExtremumGoal``; scalar outputs or one component of a vector output).

    Parameters
    ----------
    extremum_type : {"minimum", "maximum"}
    smoothing_factor : float
        ``s`` in [0.2, 1] (default 1).
    Others as :class:`OutputGoal`.
    """

    default_name = "output_extremum"

    def __init__(self, name: str | None = None, weight: float = 1.0, extremum_type: str = "minimum",
                 smoothing_factor: float = 1.0, **options: Any):
        super().__init__(name, weight, **options)
        owner = f"OutputExtremumGoal {self.name!r}"
        if extremum_type not in ("minimum", "maximum"):
            raise ValueError(f"{owner}: the extremum type must be either 'minimum' or 'maximum', got {extremum_type!r}")
        s = finite_number(smoothing_factor, f"{owner}: smoothing_factor")
        if not 0.2 <= s <= 1.0:
            raise ValueError(f"{owner}: the smoothing factor must be in the range [0.2, 1.0], got {s}")
        self.extremum_type, self.smoothing_factor = extremum_type, s

    def bind(self, ctx: GoalContext) -> BoundGoal:
        value = self._value(ctx)
        if value.size > 1 and self.output_index == -1:
            raise ValueError(f"OutputExtremumGoal {self.name!r}: cannot take the norm of a vector output; give "
                             "output_index, or use OutputGoal")
        p, s = self.exponent, self.smoothing_factor
        beta = -1.0 if self.extremum_type == "minimum" else 1.0

        def shape(v, t):
            x = s * beta * v
            soft = np.logaddexp(0.0, x) / s                   # (1/s) ln(1 + e^x)
            sig = 0.5 * (1.0 + np.tanh(0.5 * x))               # d soft / d(beta v) = logistic(x)
            dsoft = beta * sig
            ddsoft = s * sig * (1.0 - sig)                     # beta² = 1
            f, fu, fuu = _power(soft, p)
            return beta * f, beta * fu * dsoft, beta * (fuu * dsoft ** 2 + fu * ddsoft), None, None, None

        return self._integrand(ctx, shape, value)

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update(extremum_type=self.extremum_type, smoothing_factor=self.smoothing_factor)
        return d


class _EndpointOutputGoal(_OutputGoalBase):
    """A goal on the output's value at the ends of the motion (Moco's ``MocoInitialOutputGoal``,
    ``MocoFinalOutputGoal``, ``MocoOutputPeriodicityGoal``): a cost (default) or, with
    ``mode="endpoint_constraint"``, a value held within ``bounds`` (default 0)."""

    #: the ends read, and their signs: the value is ``P(Σ sign · v(end))``
    ends: tuple = ()

    def bind(self, ctx: GoalContext) -> BoundGoal:
        value = self._value(ctx)
        p, ends = self.exponent, self.ends
        # a vector's norm squared without the square root (smooth where the vector vanishes), as Moco's |w|·|w|
        squared = p == 2 and len(ends) == 1 and value.size != 1 and self.output_index == -1

        def generic(E: EndpointData):
            total = 0.0
            for end, sign in ends:
                row = getattr(E, end).outputs
                v = value.generic({name: row[name][0] for name in value.names()}, squared_norm=squared)
                total = total + sign * v
            if squared or p == 1:
                return total
            return total * total if p == 2 else jet_abs_power(total, p)

        def endpoint(E: EndpointData, jac: bool):
            if not jac:
                return np.array([float(generic(E))]), {}
            # exact first derivatives: the generic value on Jets seeded at the output components of the ends read
            seeded, keys = {}, []
            for end, _ in ends:
                row = getattr(E, end).outputs
                outputs = {name: np.asarray(row[name], float)[0] for name in value.names()}
                keys += [(end, name, i) for name in outputs for i in range(outputs[name].size)]
                seeded[end] = outputs
            seeds = Jet.variables([seeded[end][name][i] for end, name, i in keys])
            jets = {end: {name: [None] * seeded[end][name].size for name in seeded[end]} for end in seeded}
            for (end, name, i), jet in zip(keys, seeds):
                jets[end][name][i] = jet
            ones = {end: NodeData(None, None, None, None, None, {n: [c] for n, c in jets[end].items()})
                    for end in jets}
            g = generic(EndpointData(E.t0, E.tf, E.P, E.integral, ones.get("first", E.first), ones.get("last", E.last)))
            grad = g.gradient(len(seeds)) if isinstance(g, Jet) else np.zeros(len(seeds))
            d = {end: {"outputs": {name: np.zeros((1, 1, seeded[end][name].size)) for name in seeded[end]}}
                 for end in seeded}
            for (end, name, i), gi in zip(keys, grad):
                d[end]["outputs"][name][0, 0, i] = gi
            return np.array([float(g.value if isinstance(g, Jet) else g)]), d

        return self._bound(ctx, outputs=value.names(), endpoint=endpoint,
                           endpoint_generic=lambda E: [generic(E)])


class InitialOutputGoal(_EndpointOutputGoal):
    """``P(v(t0))``: an output's value at the start (Moco's ``MocoInitialOutputGoal``), as a cost or held within
    ``bounds`` with ``mode="endpoint_constraint"``. Parameters as :class:`OutputGoal`, plus ``mode`` and
    ``bounds``."""

    default_name = "initial_output"
    ends = (("first", 1.0),)


class FinalOutputGoal(_EndpointOutputGoal):
    """``P(v(tf))``: an output's value at the end (Moco's ``MocoFinalOutputGoal``); as :class:`InitialOutputGoal`."""

    default_name = "final_output"
    ends = (("last", 1.0),)


class OutputPeriodicityGoal(_EndpointOutputGoal):
    """``P(v(tf) − v(t0))``: the change of an output over the motion (Moco's ``MocoOutputPeriodicityGoal``; the
    exponent applies to the difference, each end's value a norm where ``output_index`` is -1); as
    :class:`InitialOutputGoal`."""

    default_name = "output_periodicity"
    ends = (("last", 1.0), ("first", -1.0))


GOAL_TYPES.update({c.__name__: c for c in (OutputGoal, OutputExtremumGoal, InitialOutputGoal, FinalOutputGoal,
                                           OutputPeriodicityGoal)})
