"""Moco's ``MocoInitialForceEquilibriumDGFGoal`` and ``MocoInitialVelocityEquilibriumDGFGoal``: start compliant
tendons in equilibrium.

A DeGrooteFregly2016 muscle whose tendon is compliant and integrated explicitly carries its normalized tendon force
``f̃_T`` as a state, free at the start unless something fixes it. Moco's goal sets, for every such muscle, the fiber
and tendon forces equal at the initial time with the tendon force held (``ḟ_T = 0``): OpenSim's
``DeGrooteFregly2016Muscle::calcEquilibriumResidual(l_MT, v_MT, a, f̃_T, 0)``,
``f̃_T − [a f_L f_V + f_PE + β ṽ_M] cos α`` with the fiber velocity that a tendon of constant length leaves,
an endpoint constraint ``= 0`` by default or the residuals squared as a cost. Muscles with implicit tendon dynamics
or rigid tendons are not included, as in Moco.

``MocoInitialVelocityEquilibriumDGFGoal`` (every compliant tendon, either mode) holds instead the time derivative of
the linearized equilibrium at zero, OpenSim's ``calcLinearizedEquilibriumResidualDerivative`` (Millard et al. 2013,
eq. A6): ``k_M,AT v_M,AT − k_T (v_MT − v_M,AT)``, the lengthening shared between fiber and tendon by their
stiffnesses; with implicit tendons Moco adds it (as a cost, weight 0.001) to the problems it builds.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..symbolic.batched import matmul
from .goals import GOAL_TYPES, BoundGoal, EndpointData, Goal, GoalContext

__all__ = ["InitialForceEquilibriumDGFGoal", "InitialVelocityEquilibriumDGFGoal"]


def _compliant_muscles(model: Any, explicit_only: bool) -> list[str]:
    """Paths of the model's DeGrooteFregly2016 muscles with compliant tendons (integrated explicitly only, with
    ``explicit_only``)."""
    from ..modeling.muscle import DeGrooteFregly2016Muscle

    out = []
    for element in model.force_elements:
        muscle = getattr(element, "muscle", None)
        if (isinstance(muscle, DeGrooteFregly2016Muscle) and not muscle.ignore_tendon_compliance
                and (muscle.is_tendon_dynamics_explicit or not explicit_only)):
            out.append(element.path)
    return out


class _InitialMuscleResidualGoal(Goal):
    """One output of every selected muscle at the start: an endpoint constraint (each within ``bounds``) or the sum
    of their squares as a cost."""

    default_mode = "endpoint_constraint"
    output = ""
    explicit_only = False
    refusal = ""

    def __init__(self, name: str | None = None, weight: float = 1.0, enabled: bool = True, mode: str | None = None,
                 bounds: Any = None):
        super().__init__(name, weight, enabled, mode=mode, bounds=bounds)

    def bind(self, ctx: GoalContext) -> BoundGoal:
        names = [ctx.output(f"{path}/{self.output}") for path in _compliant_muscles(ctx.model, self.explicit_only)]
        if not names:
            raise ValueError(f"{type(self).__name__} {self.name!r}: the model has no DeGrooteFregly2016 muscle with "
                             f"{self.refusal}")
        cost = self.mode == "cost"
        m = len(names) if not cost else 1

        def endpoint(E: EndpointData, jac: bool):
            r = np.array([float(np.asarray(E.first.outputs[n], float).reshape(-1)[0]) for n in names])
            value = np.array([float(matmul(r, r))]) if cost else r
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


class InitialForceEquilibriumDGFGoal(_InitialMuscleResidualGoal):
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
    output = "equilibrium_residual"
    explicit_only = True
    refusal = ("a compliant tendon integrated explicitly (tendon_compliance_dynamics_mode='explicit', "
               "ignore_tendon_compliance=False)")


class InitialVelocityEquilibriumDGFGoal(_InitialMuscleResidualGoal):
    """The linearized fiber-tendon equilibrium's time derivative zero at the start for every DeGrooteFregly2016
    muscle with a compliant tendon, either mode (Moco's ``MocoInitialVelocityEquilibriumDGFGoal``; module
    docstring): N/s, one value per muscle; an endpoint constraint (the default, ``bounds`` 0) or, with
    ``mode="cost"``, the sum of squares (Moco adds it as a cost of weight 0.001 for implicit tendons). A model
    without compliant tendons is refused by name.

    Parameters
    ----------
    mode : {"endpoint_constraint", "cost"}
    bounds : float or (lower, upper), optional
        Of each residual (N/s), in endpoint-constraint mode (default 0).
    """

    default_name = "initial_velocity_equilibrium"
    output = "linearized_equilibrium_residual_derivative"
    refusal = "a compliant tendon (ignore_tendon_compliance=False)"


GOAL_TYPES["InitialForceEquilibriumDGFGoal"] = InitialForceEquilibriumDGFGoal
GOAL_TYPES["InitialVelocityEquilibriumDGFGoal"] = InitialVelocityEquilibriumDGFGoal
