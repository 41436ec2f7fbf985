"""The force elements moco_lab ships, on the protocol of :mod:`moco_lab.modeling.force_element`.

:class:`CoordinateActuator`, :class:`SpringGeneralizedForce`, :class:`ExpressionCoordinateForce` (your
function of ``q`` and ``u``), :class:`PointToPointSpringDamper` and :class:`PathMuscle` (a muscle model on a
:class:`~moco_lab.modeling.path.GeometryPath`). Contact: :mod:`moco_lab.modeling.contact`; gait2d's passive joint
moments: :mod:`moco_lab.modeling.passive`; measured loads: :mod:`moco_lab.modeling.external_loads`. How to write
an element of your own: :mod:`moco_lab.modeling.force_element`. The protocol's names are importable from here
too.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..util.describe import describe
from ..util.names import NamedValues
from .force_element import GENERALIZED_FORCE, ForceContext, ForceContribution, ForceElement
from .path import GeometryPath

__all__ = ["GENERALIZED_FORCE", "ForceContext", "ForceContribution", "ForceElement", "CoordinateActuator",
           "ExpressionBasedCoordinateForce",
           "SpringGeneralizedForce",
           "ExpressionCoordinateForce", "PointToPointSpringDamper", "PathMuscle"]


# ------------------------------------------------------------------------------- coordinate forces
@dataclass(repr=False)
class CoordinateActuator(ForceElement):
    """OpenSim's ``CoordinateActuator``: generalized force ``optimal_force * control``.

    Its control is the problem variable named :attr:`path`.
    """

    path: str
    coordinate: str
    optimal_force: float = 1.0
    min_control: float = -np.inf
    max_control: float = np.inf

    def control_names(self) -> list[str]:
        return [self.path]

    def default_control_bounds(self, name: str) -> tuple[float, float]:
        return (self.min_control, self.max_control)

    def properties(self) -> dict[str, float]:
        return {"optimal_force": self.optimal_force}

    def coordinate_names(self) -> list[str]:
        return [self.coordinate]

    def output_units(self) -> dict[str, str]:
        return {"actuation": GENERALIZED_FORCE}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        out = ForceContribution()
        actuation = ctx.value(self, "optimal_force") * ctx.control(self.path)
        out.add_generalized(ctx.coordinate_index(self.coordinate), actuation)
        out.outputs["actuation"] = actuation  # OpenSim's Actuator output "actuation"
        return out


@dataclass(repr=False)
class SpringGeneralizedForce(ForceElement):
    """OpenSim's ``SpringGeneralizedForce`` on one coordinate.

    Generalized force ``-stiffness * (q - rest_length) - viscosity * u``.
    """

    path: str
    coordinate: str
    stiffness: float = 0.0
    rest_length: float = 0.0
    viscosity: float = 0.0

    def properties(self) -> dict[str, float]:
        return {"stiffness": self.stiffness, "viscosity": self.viscosity, "rest_length": self.rest_length}

    def coordinate_names(self) -> list[str]:
        return [self.coordinate]

    def output_units(self) -> dict[str, str]:
        return {"generalized_force": GENERALIZED_FORCE}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        i = ctx.coordinate_index(self.coordinate)
        out = ForceContribution()
        tau = -ctx.value(self, "stiffness") * (ctx.q[i] - ctx.value(self, "rest_length")) \
            - ctx.value(self, "viscosity") * ctx.u[i]
        out.add_generalized(i, tau)
        out.outputs["generalized_force"] = tau
        return out


@dataclass(repr=False)
class ExpressionCoordinateForce(ForceElement):
    """A generalized force on one coordinate given by your function of ``q`` and ``u``.

    Parameters
    ----------
    path : str
        ``/forceset/<name>``.
    coordinate : str
        The coordinate the force acts on (name or path).
    function : callable
        ``function(q, u, p) -> generalized force`` (N·m for a rotation, N for
        a translation). ``q`` and ``u`` are
        :class:`~moco_lab.util.names.NamedValues` of all coordinates
        (``q["knee_angle"]``, by short name or path, or by index), ``p`` a dict
        of :attr:`constants` (each optimizable as ``<path>/<name>``). Use
        arithmetic, numpy's functions (``np.exp``) and
        ``moco_lab.symbolic.where`` for switches: the function is derived
        exactly, not evaluated numerically.
    constants : dict of str -> float
        Named numbers the function reads from ``p``.

    Examples
    --------
    A nonlinear torsional spring on the knee, stiffer in flexion::

        ExpressionCoordinateForce("/forceset/knee_limit", "knee_angle",
                                  lambda q, u, p: -p["k"] * np.exp(-10 * (q["knee_angle"] + 2.0)),
                                  constants={"k": 5.0})
    """

    path: str
    coordinate: str
    function: Callable
    constants: dict = field(default_factory=dict)

    def __post_init__(self):
        if not callable(self.function):
            raise TypeError(f"{self.path}: function must be callable")
        self.constants = {str(k): float(v) for k, v in self.constants.items()}

    def properties(self) -> dict[str, float]:
        return dict(self.constants)

    def set_property(self, name: str, value: float) -> None:
        if name not in self.constants:
            super().set_property(name, value)
        self.constants[name] = float(value)

    def coordinate_names(self) -> list[str]:
        return [self.coordinate]

    def output_units(self) -> dict[str, str]:
        return {"generalized_force": GENERALIZED_FORCE}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        names = ctx.coordinate_names()
        q, u = NamedValues(names, ctx.q), NamedValues(names, ctx.u)
        p = {k: ctx.value(self, k) for k in self.constants}
        tau = self.function(q, u, p)
        out = ForceContribution()
        out.add_generalized(ctx.coordinate_index(self.coordinate), tau)
        out.outputs["generalized_force"] = tau
        return out


@dataclass(repr=False)
class ExpressionBasedCoordinateForce(ForceElement):
    """OpenSim's ``ExpressionBasedCoordinateForce``: a generalized force on one coordinate given by a formula in
    ``q`` (its value) and ``qdot`` (its speed), in OpenSim's expression language (:mod:`moco_lab.modeling.lepton`),
    e.g. ``-2.44*exp(5.05*(q-1.81))+1.51*exp(-11.88*(q+0.50))-1.0*qdot`` (a joint's passive limits and damping).

    Parameters
    ----------
    path : str
        OpenSim's path (``/forceset/<name>``, or ``/<name>`` for a component of the model).
    coordinate : str
        The coordinate (name or path).
    expression : str
        The force (N·m for a rotation, N for a translation) as text.

    Outputs: ``generalized_force``.
    """

    path: str
    coordinate: str
    expression: str

    def __post_init__(self):
        from .lepton import parse

        self._formula = parse(self.expression, ("q", "qdot"), self.path)

    def coordinate_names(self) -> list[str]:
        return [self.coordinate]

    def output_units(self) -> dict[str, str]:
        return {"generalized_force": GENERALIZED_FORCE}

    def description(self) -> dict:
        return {"type": type(self).__name__, "path": self.path, "coordinate": self.coordinate,
                "expression": self.expression}

    def force(self, q: Any, qdot: Any, xp: Any = np) -> Any:
        """The generalized force at coordinate value ``q`` and speed ``qdot`` (numbers, arrays or expressions)."""
        return self._formula({"q": q, "qdot": qdot}, xp)

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        i = ctx.coordinate_index(self.coordinate)
        tau = self.force(ctx.q[i], ctx.u[i], ctx.xp)
        out = ForceContribution()
        out.add_generalized(i, tau)
        out.outputs["generalized_force"] = tau
        return out


# ------------------------------------------------------------------------------- point forces
@dataclass(repr=False)
class PointToPointSpringDamper(ForceElement):
    """A linear spring–damper between two points fixed on two bodies.

    Tension ``T = stiffness (l − rest_length) + damping l̇`` (N), with ``l``
    the distance between the points and ``l̇`` its rate; the points are pulled
    towards each other when ``T > 0`` (equal and opposite forces along the line
    joining them), as Simbody's ``TwoPointLinearSpring`` plus
    ``TwoPointLinearDamper``.

    Parameters
    ----------
    path : str
    body1, body2 : str
        Body names (``"ground"`` for the world).
    point1, point2 : (3,) array
        Locations in the body frames (m).
    stiffness : float
        N/m.
    rest_length : float
        m.
    damping : float
        N·s/m.
    """

    path: str
    body1: str
    point1: tuple
    body2: str
    point2: tuple
    stiffness: float = 0.0
    rest_length: float = 0.0
    damping: float = 0.0

    def __post_init__(self):
        self.point1 = tuple(float(v) for v in self.point1)
        self.point2 = tuple(float(v) for v in self.point2)

    def properties(self) -> dict[str, float]:
        return {"stiffness": self.stiffness, "rest_length": self.rest_length, "damping": self.damping}

    def body_names(self) -> list[str]:
        return [self.body1, self.body2]

    def output_units(self) -> dict[str, str]:
        return {"length": "m", "lengthening_speed": "m/s", "tension": "N"}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        p1, p2 = ctx.point_position(self.body1, self.point1), ctx.point_position(self.body2, self.point2)
        v1, v2 = ctx.point_velocity(self.body1, self.point1), ctx.point_velocity(self.body2, self.point2)
        d = [b - a for a, b in zip(p1, p2)]
        length = ctx.xp.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        e = [c / length for c in d]
        rate = sum(ei * (b - a) for ei, a, b in zip(e, v1, v2))
        tension = ctx.value(self, "stiffness") * (length - ctx.value(self, "rest_length")) \
            + ctx.value(self, "damping") * rate
        out = ForceContribution()
        out.point_forces.append((self.body1, p1, [tension * c for c in e]))
        out.point_forces.append((self.body2, p2, [-tension * c for c in e]))
        out.outputs.update(length=length, lengthening_speed=rate, tension=tension)
        return out


# ------------------------------------------------------------------------------- muscles
#: Muscle properties that may be optimized as parameters (they enter the equations continuously).
MUSCLE_PARAMETERS = ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length")


@dataclass(repr=False)
class PathMuscle(ForceElement):
    """A muscle model (e.g. :class:`~moco_lab.modeling.muscle.DeGrooteFregly2016Muscle`) on a geometry path.

    Its control (excitation) is named :attr:`path` (``/forceset/<name>``);
    its states are ``<path>/activation`` and, with a compliant tendon,
    ``<path>/normalized_tendon_force``. The tendon force ``T`` acts along the
    path: generalized forces ``−(∂l/∂q)ᵀ T`` (the moment arms are
    ``−∂l/∂q``), path lengthening speed ``(∂l/∂q) u``.
    """

    muscle: object
    geometry: GeometryPath
    owner: str = "/forceset"

    @property
    def name(self) -> str:
        return self.muscle.name

    @property
    def path(self) -> str:
        """``<owner>/<muscle name>`` (``/forceset/<name>`` unless the model put it elsewhere): the
        muscle's control (excitation) and the prefix of its states."""
        return f"{self.owner}/{self.muscle.name}"

    def state_names(self) -> list[str]:
        return [f"{self.path}/{s}" for s in self.muscle.state_variable_names]

    def control_names(self) -> list[str]:
        return [self.path]

    def implicit_derivative_names(self) -> list[str]:
        """Extra variables of implicit tendon dynamics (Moco's ``implicitderiv_normalized_tendon_force``)."""
        return [f"{self.path}/{s}" for s in self.muscle.implicit_derivative_names]

    def default_state_bounds(self, name: str) -> tuple[float, float]:
        if name.endswith("/activation"):
            return (0.0, 1.0)
        return (0.0, 5.0)  # normalized tendon force (Moco's default)

    def default_control_bounds(self, name: str) -> tuple[float, float]:
        return (self.muscle.min_control, self.muscle.max_control)

    def implicit_derivative_bounds(self, name: str) -> tuple[float, float]:
        from .muscle import IMPLICIT_DERIVATIVE_BOUNDS

        return IMPLICIT_DERIVATIVE_BOUNDS

    def default_state_value(self, name: str) -> float:
        if name.endswith("/activation"):
            return float(self.muscle.default_activation)
        return float(self.muscle.default_normalized_tendon_force)

    def properties(self) -> dict[str, float]:
        return {k: float(getattr(self.muscle, k)) for k in MUSCLE_PARAMETERS}

    def set_property(self, name: str, value: float) -> None:
        if name not in MUSCLE_PARAMETERS:
            super().set_property(name, value)
        setattr(self.muscle, name, float(value))

    def description(self) -> dict:
        return {"type": "PathMuscle", "muscle": {"type": type(self.muscle).__name__,
                                                 **describe(self.muscle)},
                "geometry": self.geometry.description()}

    def body_names(self) -> list[str]:
        return [p.body for p in self.geometry.points]

    def output_units(self) -> dict[str, str]:
        return {"tendon_force": "N", "length": "m", "lengthening_speed": "m/s", "activation": "",
                "excitation": "", "equilibrium_residual": "", "linearized_equilibrium_residual_derivative": "N/s"}

    def fiber_state(self, ctx: ForceContext) -> tuple[Any, Any]:
        """``(excitation, MuscleInfo)``: the muscle's excitation and everything its model computes at the context's
        state (fiber length, velocity, forces; OpenSim's muscle outputs), for elements that read the muscle
        (metabolics). The same expressions as the muscle's own, so the engine shares them."""
        mus = self._muscle_for(ctx)
        length, dl = self.geometry.length_and_gradient(ctx)
        speed = sum(d * ui for d, ui in zip(dl, ctx.u))
        e = ctx.control(self.path)
        a = e if mus.ignore_activation_dynamics else ctx.state(f"{self.path}/activation")
        ntf = w = None
        if not mus.ignore_tendon_compliance:
            ntf = ctx.state(f"{self.path}/normalized_tendon_force")
            if not mus.is_tendon_dynamics_explicit:
                w = ctx.implicit_derivative(f"{self.path}/implicitderiv_normalized_tendon_force")
        return e, mus.calc_muscle_info(a, length, speed, ntf, w, xp=ctx.xp)

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        mus = self._muscle_for(ctx)
        length, dl = self.geometry.length_and_gradient(ctx)
        speed = sum(d * ui for d, ui in zip(dl, ctx.u))
        e = ctx.control(self.path)
        out = ForceContribution()
        a = e
        if not mus.ignore_activation_dynamics:
            a = ctx.state(f"{self.path}/activation")
            out.state_derivatives[f"{self.path}/activation"] = mus.calc_activation_derivative(a, e, xp=ctx.xp)
        ntf = None
        if not mus.ignore_tendon_compliance:
            ntf = ctx.state(f"{self.path}/normalized_tendon_force")
            if mus.is_tendon_dynamics_explicit:
                out.state_derivatives[f"{self.path}/normalized_tendon_force"] = \
                    mus.calc_normalized_tendon_force_derivative(a, length, speed, ntf, xp=ctx.xp)
            else:
                w = ctx.implicit_derivative(f"{self.path}/implicitderiv_normalized_tendon_force")
                out.state_derivatives[f"{self.path}/normalized_tendon_force"] = w
                out.residuals[f"{self.path}/implicitderiv_normalized_tendon_force"] = \
                    mus.calc_implicit_residual(a, length, speed, ntf, w, xp=ctx.xp)
        tension = mus.calc_tendon_force(a, length, speed, ntf, xp=ctx.xp)
        for i, d in enumerate(dl):
            if not (isinstance(d, float) and d == 0.0):
                out.add_generalized(i, -d * tension)
        out.outputs.update(tendon_force=tension, length=length, lengthening_speed=speed, activation=a,
                           excitation=e)
        if ntf is not None and hasattr(mus, "calc_implicit_residual"):
            # fiber-tendon force equilibrium with the tendon force held (ḟ_T = 0): OpenSim's
            # DeGrooteFregly2016Muscle::calcEquilibriumResidual(l, v, a, f̃_T, 0), what Moco's
            # MocoInitialForceEquilibriumDGFGoal holds at zero at the start
            out.outputs["equilibrium_residual"] = mus.calc_implicit_residual(a, length, speed, ntf, 0.0, xp=ctx.xp)
            # the linearized equilibrium's time derivative (N/s; MocoInitialVelocityEquilibriumDGFGoal's), the
            # tendon-force rate the muscle's own mode gives
            out.outputs["linearized_equilibrium_residual_derivative"] = \
                mus.calc_linearized_equilibrium_residual_derivative(
                    a, length, speed, ntf, None if mus.is_tendon_dynamics_explicit else
                    out.state_derivatives[f"{self.path}/normalized_tendon_force"], xp=ctx.xp)
        return out

    def _muscle_for(self, ctx: ForceContext):
        """The muscle, with optimized properties replaced by their parameter variables."""
        values = {k: ctx.value(self, k) for k in MUSCLE_PARAMETERS}
        if all(isinstance(v, float) and v == getattr(self.muscle, k) for k, v in values.items()):
            return self.muscle
        clone = dataclasses.replace(self.muscle)
        for k, v in values.items():
            object.__setattr__(clone, k, v)  # an expression: bypasses the numeric validation on purpose
        return clone
