"""Goals on the problem's parameters: Moco's ``MocoExpressionBasedParameterGoal``.

:class:`ExpressionBasedParameterGoal` minimizes (or, with ``mode="endpoint_constraint"``, bounds) an arithmetic
expression of the optimized parameters, written in OpenSim's expression language (Lepton's, read by
:mod:`moco_lab.modeling.lepton`: ``square(p+q-100)``, ``sqrt(k)*m``, ...), each variable bound to one of the
problem's parameters (:meth:`Problem.add_parameter`). Its first and second derivatives are exact.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..modeling.lepton import parse
from ..symbolic.jet import Jet, jet_math
from ..util.names import did_you_mean
from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext

__all__ = ["ExpressionBasedParameterGoal"]


class ExpressionBasedParameterGoal(Goal):
    """An expression of the parameters as a cost or an endpoint constraint (Moco's
    ``MocoExpressionBasedParameterGoal``; module docstring).

    Parameters
    ----------
    expression : str
        In OpenSim's expression language, e.g. ``"square(p+q-100)"``.
    parameters : dict of str -> str, optional
        Variable of the expression -> the name of a problem parameter (Moco's ``addParameter(parameter,
        variable)``). Parameters bound to variables the expression does not use are ignored, as in Moco.
    """

    default_name = "parameter_expression"

    def __init__(self, name: str | None = None, weight: float = 1.0, expression: str = "",
                 parameters: dict[str, str] | None = None, enabled: bool = True, **options: Any):
        super().__init__(name, weight, enabled, **options)
        owner = f"ExpressionBasedParameterGoal {self.name!r}"
        if not isinstance(expression, str) or not expression.strip():
            raise ValueError(f"{owner}: the expression has not been set.")
        self._parsed = parse(expression, where=f"{owner}: expression")  # a LeptonError (ValueError) names what
        self.expression = expression
        self.parameters: dict[str, str] = {}
        for variable, parameter in (parameters or {}).items():
            self.add_parameter(parameter, variable)

    def add_parameter(self, parameter: Any, variable: str) -> None:
        """Bind ``variable`` to a problem parameter (a :class:`~moco_lab.ocp.problem.Parameter` or its name)."""
        self.parameters[str(variable)] = str(getattr(parameter, "name", parameter))

    def bind(self, ctx: GoalContext) -> BoundGoal:
        owner = f"ExpressionBasedParameterGoal {self.name!r}"
        undefined = sorted(self._parsed.variables - set(self.parameters))
        if undefined:
            raise KeyError(f"{owner}: parameter variable {undefined[0]!r} is not defined. Use add_parameter() to "
                           "explicitly define this variable, or remove it from the expression.")
        names = list(ctx.parameter_names)
        used = sorted(self._parsed.variables)
        columns = {}
        for variable in used:
            parameter = self.parameters[variable]
            if parameter not in names:
                raise KeyError(f"{owner}: variable {variable!r}: " + did_you_mean(parameter, names, "parameter"))
            columns[variable] = names.index(parameter)
        expression = self._parsed

        def generic(E: EndpointData):
            return expression({v: E.P[j] for v, j in columns.items()}, xp=jet_math)

        def endpoint(E: EndpointData, jac: bool):
            if not jac:
                return np.array([float(generic(E))]), {}
            P = np.asarray(E.P, float)
            seeds = Jet.variables(list(P))
            g = expression({v: seeds[j] for v, j in columns.items()}, xp=jet_math)
            if not isinstance(g, Jet):
                return np.array([float(g)]), {"P": np.zeros((1, P.size))}
            return np.array([g.value]), {"P": g.gradient(P.size)[None, :]}

        return self._bound(ctx, endpoint=endpoint, endpoint_generic=lambda E: [generic(E)])

    def to_dict(self) -> dict:
        return {**super().to_dict(), "expression": self.expression, "parameters": dict(self.parameters)}


GOAL_TYPES.update({"ExpressionBasedParameterGoal": ExpressionBasedParameterGoal})
