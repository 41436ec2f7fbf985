"""The force-element protocol: one interface for everything that pushes on a model.

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

Writing a new element
---------------------
Subclass :class:`ForceElement`, give it a ``path``, list its variables
(:meth:`~ForceElement.state_names`, :meth:`~ForceElement.control_names`) and
properties (:meth:`~ForceElement.properties`), name the coordinates and
bodies it uses (:meth:`~ForceElement.coordinate_names`,
:meth:`~ForceElement.body_names`, checked when it is added to a model), and
implement :meth:`~ForceElement.contribute`. Nothing else in moco_lab needs to
change: the engine, ``simulate``, ``Inverse`` and the plots pick it up.

The elements moco_lab ships are in :mod:`moco_lab.modeling.forces` (actuators, springs, muscles on
paths), :mod:`moco_lab.modeling.contact`, :mod:`moco_lab.modeling.passive` and
:mod:`moco_lab.modeling.external_loads`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..util.describe import describe

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["GENERALIZED_FORCE", "ForceContext", "ForceContribution", "ForceElement"]


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

    def element(self, path: str) -> "ForceElement":
        """Another force element of the model, by path (for elements that read others, e.g. metabolics)."""
        raise NotImplementedError

    def total_mass(self) -> Any:
        """The model's total mass (kg; an expression when a body's mass is a parameter)."""
        raise NotImplementedError

    def gradient(self, expr: Any) -> list:
        """``∂expr/∂q``: one entry per coordinate (exact)."""
        raise NotImplementedError

    def gradient_holding(self, build: Callable[[Callable[[list], list]], Any]) -> tuple[Any, list]:
        """``(value, ∂value/∂q)`` of ``build(hold)`` where what ``build`` passes through ``hold(values)`` is held
        fixed when differentiating (its dependence on ``q`` is left out of the gradient, not of the value).
        OpenSim's wrapping construction needs it: its forces and lengthening speed treat the tangent points as
        fixed on the cylinder's body."""
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
