"""Moco's ``MocoInitialForceEquilibriumDGFGoal``: start compliant tendons in force equilibrium.

A DeGrooteFregly2016 muscle whose tendon is compliant and integrated explicitly carries its normalized tendon force
``f̃_T`` as a state, free at the start unless something fixes it. Moco's goal sets, for every such muscle, the fiber
and tendon forces equal at the initial time with the tendon force held (``ḟ_T = 0``): OpenSim's
``DeGrooteFregly2016Muscle::calcEquilibriumResidual(l_MT, v_MT, a, f̃_T, 0)``,
``f̃_T − [a f_L f_V + f_PE + β ṽ_M] cos α`` with the fiber velocity that a tendon of constant length leaves,
an endpoint constraint ``= 0`` by default or the residuals squared as a cost. Muscles with implicit tendon dynamics
or rigid tendons are not included, as in Moco.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext

__all__ = ["InitialForceEquilibriumDGFGoal"]


def _explicit_compliant_muscles(model: Any) -> list[str]:
    """Paths of the model's DeGrooteFregly2016 muscles with compliant tendons integrated explicitly."""
    from ..modeling.muscle import DeGrooteFregly2016Muscle

    out = []
    for element in model.force_elements:
        muscle = getattr(element, "muscle", None)
        if (isinstance(muscle, DeGrooteFregly2016Muscle) and not muscle.ignore_tendon_compliance
                and muscle.is_tendon_dynamics_explicit):
            out.append(element.path)
    return out


class InitialForceEquilibriumDGFGoal(Goal):
    """Fiber-tendon force equilibrium at the start for every DeGrooteFregly2016 muscle with an explicit compliant
    tendon (Moco's ``MocoInitialForceEquilibriumDGFGoal``; module docstring). One value per muscle: an endpoint
    constraint (the default, ``bounds`` 0) or, with ``mode="cost"``, the sum of the residuals squared. A model
    without such muscles is refused by name (Moco's goal would do nothing).

    Parameters
    ----------
    mode : {"endpoint_constraint", "cost"}
    bounds : float or (lower, upper), optional
        Of each residual, in endpoint-constraint mode (default 0).
    """

    default_name = "initial_force_equilibrium"
    default_mode = "endpoint_constraint"

    def __init__(self, name: str | None = None, weight: float = 1.0, enabled: bool = True, mode: str | None = None,
                 bounds: Any = None):
        super().__init__(name, weight, enabled, mode=mode, bounds=bounds)

    def bind(self, ctx: GoalContext) -> BoundGoal:
        names = [ctx.output(f"{path}/equilibrium_residual") for path in _explicit_compliant_muscles(ctx.model)]
        if not names:
            raise ValueError(f"InitialForceEquilibriumDGFGoal {self.name!r}: the model has no DeGrooteFregly2016 "
                             "muscle with a compliant tendon integrated explicitly (tendon_compliance_dynamics_mode="
                             "'explicit', ignore_tendon_compliance=False)")
        cost = self.mode == "cost"
        m = len(names) if not cost else 1

        def endpoint(E: EndpointData, jac: bool):
            r = np.array([float(np.asarray(E.first.outputs[n], float).reshape(-1)[0]) for n in names])
            value = np.array([float(r @ r)]) if cost else r
            if not jac:
                return value, {}
            d = {}
            for i, n in enumerate(names):
                g = np.zeros((m, 1, 1))
                g[0 if cost else i, 0, 0] = 2 * r[i] if cost else 1.0
                d[n] = g
            return value, {"first": {"outputs": d}}

        def endpoint_generic(E: EndpointData):
            r = [E.first.outputs[n][0][0] for n in names]
            if cost:
                total = 0.0
                for v in r:
                    total = total + v * v
                return [total]
            return r

        return self._bound(ctx, size=m, outputs=tuple(names), endpoint=endpoint, endpoint_generic=endpoint_generic)


GOAL_TYPES["InitialForceEquilibriumDGFGoal"] = InitialForceEquilibriumDGFGoal
