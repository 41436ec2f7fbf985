"""Units and quantities of a model's variables and outputs, for axis labels and tables.

SI throughout, as OpenSim: coordinates in rad (rotational) or m
(translational), speeds in rad/s or m/s, generalized forces in N·m or N.
Activations, excitations, normalized tendon forces and actuator controls are
dimensionless (``""``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..results.trajectory import Quantity
from .forces import GENERALIZED_FORCE

if TYPE_CHECKING:
    from .model import Coordinate, Model

__all__ = ["coordinate_motion", "unit_of", "quantity_of", "quantities_for"]


def coordinate_motion(model: Model, coordinate: str | Coordinate) -> str:
    """``"rotational"`` or ``"translational"``: the kind of a coordinate (name, path or Coordinate);
    :meth:`Model.coordinate_motion <moco_lab.modeling.model.Model.coordinate_motion>`, as a function."""
    return model.coordinate_motion(coordinate)


_ROT = {"value": "rad", "speed": "rad/s", "accel": "rad/s²", "force": "N·m"}
_TRANS = {"value": "m", "speed": "m/s", "accel": "m/s²", "force": "N"}


def _coordinate_unit(model, coordinate, what: str) -> str:
    table = _ROT if coordinate_motion(model, coordinate) == "rotational" else _TRANS
    return table[what]


def unit_of(model: Model, name: str) -> str | None:
    """The unit of a state, control, acceleration or output of ``model`` by path; None if not known.

    Examples: ``/jointset/knee/knee_angle/value`` -> ``"rad"``,
    ``/forceset/soleus_r/activation`` -> ``""``, ``/forceset/heel_r/normal_force``
    -> ``"N"``, ``/com_velocity`` -> ``"m/s"``, ``/tau_knee`` (a coordinate
    actuator's control) -> ``""``.
    """
    return _unit_of(model, name, _Names(model))


class _Names:
    """A model's coordinate paths and its force elements' variable names, listed once (for many lookups)."""

    def __init__(self, model: Model):
        self.coordinates = [(c, (("value", c.value_path), ("speed", c.speed_path), ("accel", c.accel_path)))
                            for c in model.coordinates]
        self.elements = [(element, set(element.control_names()), set(element.state_names()),
                          set(element.implicit_derivative_names()), element.path.rstrip("/") + "/")
                         for element in model.force_elements]


def _unit_of(model: Model, name: str, names: _Names) -> str | None:
    for c, paths in names.coordinates:
        for what, path in paths:
            if name == path or name.startswith(path + "_"):  # also ".../value_x" column names
                return _coordinate_unit(model, c, what)
    if name.startswith("/com_position"):
        return "m"
    if name.startswith("/com_velocity"):
        return "m/s"
    for element, controls, states, implicit, prefix in names.elements:
        if name in controls or name in states:
            return ""
        if name in implicit:
            return "1/s"
        if name.startswith(prefix):
            rest = name[len(prefix):]
            units = element.output_units()
            base = rest if rest in units else rest.rsplit("_", 1)[0]  # vector columns "force_x"
            if base in units:
                unit = units[base]
                if unit == GENERALIZED_FORCE:
                    coords = element.coordinate_names()
                    return _coordinate_unit(model, coords[0], "force") if len(coords) == 1 else "N or N·m"
                return unit
    if name.endswith("/position") or name.endswith(("/position_x", "/position_y", "/position_z")):
        return "m"
    if name.endswith("/velocity") or name.endswith(("/velocity_x", "/velocity_y", "/velocity_z")):
        return "m/s"
    return None


_COORDINATE_QUANTITIES = {
    "rotational": {"value": "angle", "speed": "angular velocity", "accel": "angular acceleration"},
    "translational": {"value": "position", "speed": "velocity", "accel": "acceleration"},
}


def quantity_of(model: Model, name: str) -> Quantity:
    """What the state, control, derivative, multiplier or output ``name`` of ``model`` measures.

    Examples: ``/jointset/knee/knee_angle/value`` -> ``Quantity("knee_angle", "angle", "rad")``;
    ``/forceset/soleus_r`` (a muscle's control) -> ``Quantity("soleus_r", "excitation", "")``;
    ``/forceset/soleus_r/activation`` -> ``Quantity("soleus_r", "activation", "")``; a coordinate
    actuator's control -> ``Quantity("tau_knee", "control", "")`` (its force is optimal force × control).
    Unknown names get the last path segment and quantity ``"value"``.
    """
    return _quantity_of(model, name, _Names(model))


def _quantity_of(model: Model, name: str, names: _Names) -> Quantity:
    unit = _unit_of(model, name, names)
    for c, paths in names.coordinates:
        for what, path in paths:
            if name == path:
                return Quantity(c.name, _COORDINATE_QUANTITIES[coordinate_motion(model, c)][what], unit)
    for element, controls, states, implicit, prefix in names.elements:
        short = element.name
        if name in controls:
            if bool(element.state_names()) or hasattr(element, "muscle"):
                return Quantity(short, "excitation", "")
            force = getattr(element, "optimal_force", None)
            coords = element.coordinate_names()
            if force is not None and len(coords) == 1:  # the actuator's force is optimal force × control
                return Quantity(short, "control", f"× {force:g} {_coordinate_unit(model, coords[0], 'force')}")
            return Quantity(short, "control", "")
        if name in states:
            return Quantity(short, name.rsplit("/", 1)[-1].replace("_", " "), "")
        if name in implicit:
            return Quantity(short, "tendon force rate" if "tendon" in name else "implicit derivative", unit)
        if name.startswith(prefix):
            return Quantity(short, name[len(prefix):].replace("_", " "), unit)
    if "/constraintset/" in name:
        cname, var = name.split("/constraintset/", 1)[1].split("/", 1)
        kind = {"lambda": "multiplier", "gamma": "velocity correction", "mu": "projection slack"}
        return Quantity(cname, next((v for k, v in kind.items() if var.startswith(k)), var) + f" {var.split('_')[-1]}",
                        None)
    last = [p for p in name.split("/") if p]
    return Quantity(last[-1] if last else name, "value", unit)


def quantities_for(model: Model, names: list[str]) -> dict[str, Quantity]:
    """:func:`quantity_of` for each of ``names`` (the model's names listed once for all of them)."""
    index = _Names(model)
    return {n: _quantity_of(model, n, index) for n in names}
