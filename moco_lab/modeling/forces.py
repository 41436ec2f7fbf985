"""Force elements: one protocol for everything that pushes on a model.

A force element is a named component (path ``/forceset/<name>``) that may own

* **states** (e.g. a muscle's activation), **controls** (an actuator's
  control, a muscle's excitation) and **implicit derivatives** (algebraic
  variables with a residual, e.g. Moco's implicit tendon dynamics);
* **properties** (numbers a problem may optimize as parameters, e.g. a
  spring's stiffness: ``<path>/<property>``);

and that computes, from coordinates ``q``, speeds ``u``, its own variables and
the positions and velocities of points fixed on bodies, a
:class:`ForceContribution`: generalized forces on coordinates, forces at points
of bodies, moments on bodies, the time derivatives of its states, the
residuals of its implicit derivatives, and named outputs (for goals and
plots).

The computation is written once, in :meth:`ForceElement.contribute`, against
a :class:`ForceContext` that the engine provides. At derivation time the
context hands out *expressions* (:mod:`moco_lab.symbolic`), so the element's
arithmetic builds the graph that the engine differentiates exactly and
compiles; write it with arithmetic, ``ctx.xp`` functions (``ctx.xp.sqrt``,
``ctx.xp.tanh``, ``ctx.xp.where``) and numpy's elementary functions, not
``math`` and not ``if`` on values.

Elements shipped here: :class:`CoordinateActuator`,
:class:`SpringGeneralizedForce`, :class:`ExpressionCoordinateForce` (your
function of ``q`` and ``u``), :class:`PointToPointSpringDamper` and
:class:`PathMuscle` (a muscle model on a :class:`~moco_lab.modeling.path.GeometryPath`).
Contact: :mod:`moco_lab.modeling.contact`; gait2d's passive joint moments:
:mod:`moco_lab.modeling.passive`.

Writing a new element
---------------------
Subclass :class:`ForceElement`, give it a ``path``, list its variables
(:meth:`~ForceElement.state_names`, :meth:`~ForceElement.control_names`) and
properties (:meth:`~ForceElement.properties`), name the coordinates and
bodies it uses (:meth:`~ForceElement.coordinate_names`,
:meth:`~ForceElement.body_names`, checked when it is added to a model), and
implement :meth:`~ForceElement.contribute`. Nothing else in moco_lab needs to
change: the engine, ``simulate``, ``Inverse`` and the plots pick it up.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..util.describe import describe
from ..util.names import NamedValues
from .path import GeometryPath

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["GENERALIZED_FORCE", "ForceContext", "ForceContribution", "ForceElement", "CoordinateActuator",
           "SpringGeneralizedForce",
           "ExpressionCoordinateForce", "PointToPointSpringDamper", "PathMuscle"]


#: Unit placeholder of a generalized force: N·m on a rotational coordinate, N on a translational one.
GENERALIZED_FORCE = "generalized force"


class ForceContext:
    """What a force element sees while its forces are derived (implemented by the engine).

    Attributes
    ----------
    xp : module
        Math namespace for the element's arithmetic (``exp``, ``log``,
        ``sqrt``, ``tanh``, ``sin``, ``where``, ``maximum``, ...).
    q, u : list
        Coordinates and speeds, in the model's coordinate order.
    """

    xp: Any
    q: list
    u: list

    def coordinate_index(self, name: str) -> int:
        """Index in ``q`` of a coordinate given by name or path."""
        raise NotImplementedError

    def coordinate_names(self) -> list[str]:
        """Short names of the coordinates, in ``q`` order."""
        raise NotImplementedError

    def state(self, name: str) -> Any:
        """One of the element's states, by full path (``<path>/activation``)."""
        raise NotImplementedError

    def control(self, name: str) -> Any:
        """One of the element's controls, by full path."""
        raise NotImplementedError

    def implicit_derivative(self, name: str) -> Any:
        """One of the element's implicit derivative variables, by full path."""
        raise NotImplementedError

    def input(self, name: str) -> Any:
        """One of the element's time-dependent inputs (data such as a measured force), by full path."""
        raise NotImplementedError

    def value(self, element: "ForceElement", prop: str) -> Any:
        """A property's value: a number, or the parameter variable if the problem optimizes it."""
        raise NotImplementedError

    def point_position(self, body: str, location: ArrayLike) -> list:
        """World position (3 entries) of a point fixed on ``body`` (``"ground"`` for the world)."""
        raise NotImplementedError

    def point_velocity(self, body: str, location: ArrayLike) -> list:
        """World velocity (3 entries) of a point fixed on ``body``."""
        raise NotImplementedError

    def body_point_velocity(self, body: str, point: Sequence) -> list:
        """World velocity of the material point of ``body`` that is at world position ``point`` (3 entries)."""
        raise NotImplementedError

    def gradient(self, expr: Any) -> list:
        """``∂expr/∂q``: one entry per coordinate (exact)."""
        raise NotImplementedError


@dataclass
class ForceContribution:
    """What one force element adds to the model's equations.

    Attributes
    ----------
    generalized : dict of int -> expression
        Generalized forces on coordinates (by index in ``q``); positive along the coordinate.
    point_forces : list of (body, world position, world force)
        Forces applied at points of bodies (``body`` a name); the engine maps
        them to generalized forces (``Jᵀ F``).
    body_moments : list of (body, world moment)
    state_derivatives : dict of str -> expression
        Time derivative of each of the element's states (by full path).
    residuals : dict of str -> expression
        For each implicit derivative variable (by full path), a residual the
        engine keeps at zero.
    outputs : dict of str -> expression or list
        Named quantities goals and plots may use (e.g. ``"force"``: the
        contact force vector), by name relative to the element's path.
    """

    generalized: dict = field(default_factory=dict)
    point_forces: list = field(default_factory=list)
    body_moments: list = field(default_factory=list)
    state_derivatives: dict = field(default_factory=dict)
    residuals: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)

    def add_generalized(self, index: int, value: Any) -> None:
        """Add ``value`` to the generalized force on coordinate ``index``."""
        self.generalized[index] = self.generalized.get(index, 0.0) + value


class ForceElement:
    """Base class of force elements (see the module docstring)."""

    path: str

    @property
    def name(self) -> str:
        """Last part of the path."""
        return self.path.rstrip("/").split("/")[-1]

    # -- variables
    def state_names(self) -> list[str]:
        """Full paths of the element's states (default: none)."""
        return []

    def control_names(self) -> list[str]:
        """Full paths of the element's controls (default: none)."""
        return []

    def implicit_derivative_names(self) -> list[str]:
        """Full paths of the element's implicit derivative variables (default: none)."""
        return []

    def input_names(self) -> list[str]:
        """Full paths of the element's time-dependent inputs: data known in advance as functions of time, such as
        a measured ground reaction force (default: none). Their values come from :meth:`input_values`."""
        return []

    def input_values(self, time: np.ndarray) -> dict[str, np.ndarray]:
        """Values of the inputs at ``time`` (shape ``(n,)``): ``{input path: (n,) array}``."""
        return {}

    def default_state_bounds(self, name: str) -> tuple[float, float]:
        """Bounds of state ``name`` when the problem sets none (default unbounded)."""
        return (-np.inf, np.inf)

    def default_control_bounds(self, name: str) -> tuple[float, float]:
        """Bounds of control ``name`` when the problem sets none (default unbounded)."""
        return (-np.inf, np.inf)

    def implicit_derivative_bounds(self, name: str) -> tuple[float, float]:
        """Bounds of implicit derivative variable ``name`` (default unbounded)."""
        return (-np.inf, np.inf)

    def default_state_value(self, name: str) -> float:
        """The state's value in the model's default state (used by simulations started from defaults)."""
        return 0.0

    # -- properties
    def properties(self) -> dict[str, float]:
        """Properties a problem may optimize, ``{name: current value}`` (default: none)."""
        return {}

    def set_property(self, name: str, value: float) -> None:
        """Change a property (``KeyError`` with suggestions for an unknown name)."""
        props = self.properties()
        if name not in props:
            from ..util.names import did_you_mean

            raise KeyError(f"{self.path}: " + did_you_mean(name, props, "property"))
        setattr(self, name, float(value))

    def description(self) -> dict:
        """Everything that determines the element's equations (used to tell edited models apart)."""
        out = {"type": type(self).__name__}
        if dataclasses.is_dataclass(self):
            for f in dataclasses.fields(self):
                out[f.name] = describe(getattr(self, f.name))
        return out

    def output_units(self) -> dict[str, str]:
        """Units of the element's outputs, ``{output name: unit}`` (``""``: dimensionless).

        :data:`GENERALIZED_FORCE` stands for N·m or N, by the kind of the
        element's coordinate. Outputs not listed are labelled without a unit.
        """
        return {}

    # -- names it refers to (checked when added to a model)
    def coordinate_names(self) -> list[str]:
        """Coordinates the element acts on or reads (checked when it is added to a model)."""
        return []

    def body_names(self) -> list[str]:
        """Bodies the element's points are fixed on (checked when it is added to a model)."""
        return []

    # -- the physics
    def contribute(self, ctx: ForceContext) -> ForceContribution:
        """The element's forces, state derivatives, residuals and outputs, written against ``ctx``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


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
                "excitation": ""}

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        mus = self._muscle_for(ctx)
        length = self.geometry.length_expr(ctx)
        dl = ctx.gradient(length)
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
