"""Scale an OpenSim model file body by body, as OpenSim's ``Model::scale`` (the ScaleTool's model scaler) does.

Each body ``b`` gets three scale factors ``s_b = (s_x, s_y, s_z)`` along its own axes. Like OpenSim 4.6, every
quantity takes the factors of the body its frame is fixed to (the *base body* of the frame it is expressed in):

* bodies: the centre of mass ``c ⊙ s``; the mass times ``s_x s_y s_z`` (unless the mass distribution is
  preserved); the inertia — exactly ``I s²`` (times the mass factor) when the three factors are equal, otherwise
  OpenSim's cylinder rule (the smallest principal value is the cylinder's axis, its radius and length are recovered
  from the two diagonal values, scaled and the inertia recomputed; products scaled by the two factors they involve);
* offset frames (the joints' frames): translation ``⊙ s`` of the frame's parent's base body;
* ``CustomJoint`` translations that are functions (not a coordinate's own ``LinearFunction(1, 0)``): multiplied by
  ``|axis| · s`` of the joint's parent base body (wrapped in a ``MultiplierFunction``, or its scale updated);
* markers, path points (fixed, conditional, moving — a moving point's functions multiplied per axis), wrap
  objects' translations ``⊙ s``; a ``WrapCylinder``'s radius by the mean of the lengths its x and y axes take and
  its length by its z axis's;
* a ``CoordinateCouplerConstraint`` whose dependent coordinate is a translation: its ``scale_factor`` by the
  (uniform) factor of that joint's parent base body;
* attached display geometry's ``scale_factors``;
* then, with ``final_mass``, every body's mass and inertia by one factor so that the total is ``final_mass``.

Muscles keep their fibre and tendon lengths here: OpenSim scales them afterwards by the change of each path's
length in the default pose, which needs the path's length — :func:`moco_lab.tools.body_scaling.scale_model` does
that step (:func:`post_scale_muscles` writes it) and reads the result.
"""
from __future__ import annotations

import copy
import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from ..util.names import did_you_mean
from .joints import body_fixed_xyz_rotation
from .osim import frame_path

__all__ = ["ScaleFactors", "scale_factors", "scale_osim_document", "post_scale_muscles", "place_markers",
           "model_element", "muscle_elements", "total_mass"]

#: Body name -> the three factors (x, y, z) along its axes.
ScaleFactors = dict

# SimTK's default tolerance for "numerically equal" (Eps^(7/8)), relative to max(|a|, |b|, 1)
_SIGNIFICANT = np.finfo(float).eps ** 0.875
#: The muscle types whose fibre and tendon lengths OpenSim rescales with their path length.
MUSCLES = ("Millard2012EquilibriumMuscle", "DeGrooteFregly2016Muscle", "Thelen2003Muscle",
           "Millard2012AccelerationMuscle", "RigidTendonMuscle")


def _numbers(el: ET.Element | None) -> np.ndarray:
    return np.array([float(v) for v in (el.text or "").split()]) if el is not None else np.zeros(0)


def _write(el: ET.Element, values) -> None:
    el.text = " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _multiply(el: ET.Element, tag: str, s: np.ndarray) -> None:
    """``el``'s ``<tag>`` numbers times ``s`` elementwise, if it has one."""
    child = el.find(tag)
    if child is not None:
        _write(child, _numbers(child) * s)


def model_element(root: ET.Element) -> ET.Element:
    """The ``<Model>`` of a document (its root, or the root's child)."""
    model = root if root.tag == "Model" else root.find("Model")
    if model is None:
        raise ValueError(f"not an OpenSim model document (root <{root.tag}>, no <Model>)")
    return model


def _set_objects(model: ET.Element, set_tag: str) -> list[ET.Element]:
    return [el for s in model.findall(set_tag) for objects in s.findall("objects") for el in objects]


def muscle_elements(root: ET.Element) -> list[ET.Element]:
    """The muscles (``ForceSet`` and ``<components>``) whose lengths OpenSim rescales."""
    model = model_element(root)
    return [el for el in _set_objects(model, "ForceSet") + list(model.findall("components/*")) if el.tag in MUSCLES]


def total_mass(root: ET.Element) -> float:
    """The sum of the bodies' masses (kg)."""
    return float(sum(float(b.findtext("mass", "0")) for b in _set_objects(model_element(root), "BodySet")))


def scale_factors(scales: Mapping, bodies: list[str], who: str = "scale") -> ScaleFactors:
    """Checked scale factors: ``{body: (3,) array}`` from a number (uniform) or three numbers per body.

    Raises ``KeyError`` (with the nearest name) for a body the model lacks, ``ValueError`` for the ground or for a
    factor that is not a finite positive number.
    """
    if not isinstance(scales, Mapping):
        raise TypeError(f"{who}: scales must be a dict body name -> factor (or three factors x, y, z), got "
                        f"{type(scales).__name__}")
    out = {}
    for name, value in scales.items():
        if name in ("ground", "/ground"):
            raise ValueError(f"{who}: the ground cannot be scaled (scale the bodies fixed to it instead)")
        body = str(name).removeprefix("/bodyset/")
        if body not in bodies:
            raise KeyError(f"{who}: " + did_you_mean(body, bodies, "body"))
        v = np.array(value, dtype=float).reshape(-1) if not isinstance(value, str) else np.array([np.nan])
        if v.size == 1:
            v = np.repeat(v, 3)
        if v.size != 3 or not np.all(np.isfinite(v)) or np.any(v <= 0.0):
            raise ValueError(f"{who}: the scale of {body!r} must be one positive number or three (x, y, z), got "
                             f"{value!r}")
        out[body] = v
    return out


class _Frames:
    """Every physical frame of a model document by path, with the body it is fixed to (its base frame)."""

    def __init__(self, model: ET.Element):
        self.base = {"/ground": "ground"}
        owners = [(b, f"/bodyset/{b.get('name')}") for b in _set_objects(model, "BodySet")]
        for b, path in owners:
            self.base[path] = b.get("name")
        owners += [(g, "/ground") for g in model.findall("Ground")]
        owners += [(j, f"/jointset/{j.get('name')}") for j in _set_objects(model, "JointSet")]
        self.offsets: list[tuple[ET.Element, str]] = []  # (offset frame, its parent's path)
        pending = [(el, f"{path}/{el.get('name')}") for owner, path in owners for tag in ("frames", "components")
                   for parent in owner.findall(tag) for el in parent if el.tag == "PhysicalOffsetFrame"]
        for _ in range(len(pending) + 1):
            left = []
            for el, path in pending:
                parent = self.find(el.findtext("socket_parent", ""), path)
                if parent is None:
                    left.append((el, path))
                    continue
                self.base[path] = self.base[parent]
                self.offsets.append((el, parent))
            pending = left
            if not pending:
                break
        if pending:
            raise ValueError(f"offset frames {[p for _, p in pending]} name parents that are not in the model")

    def find(self, ref: str, context: str) -> str | None:
        """The path of the frame ``ref`` names from component ``context`` (None if unknown)."""
        return frame_path(ref, context, self.base)

    def body(self, ref: str, context: str) -> str:
        path = self.find(ref, context)
        if path is None:
            raise ValueError(f"the frame {ref!r} (used by {context}) is not in the model")
        return self.base[path]


def _inertia(el: ET.Element, s: np.ndarray, scale_mass: bool, unscaled_mass: float, mass: float) -> None:
    """OpenSim's ``Body::scaleInertialProperties`` on the ``<inertia>`` element (moments then products)."""
    v = _numbers(el)
    if v.size == 3:
        v = np.concatenate([v, np.zeros(3)])
    I = np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])
    factor = abs(s[0] * s[1] * s[2])

    def equal(a, b):
        return abs(a - b) <= max(abs(a), abs(b), 1.0) * _SIGNIFICANT

    if mass <= np.finfo(float).eps:
        I = I * 0.0
    elif equal(s[0], s[1]) and equal(s[1], s[2]):
        if scale_mass:
            I = I * factor
        I = I * (s[0] * s[0])
    else:  # a cylinder about one end: axis along the smallest diagonal value
        d = I.diagonal()
        if d[0] <= d[1]:
            axis = 0 if d[0] <= d[2] else 2
        else:
            axis = 1 if d[1] <= d[2] else 2
        term = 2.0 * d[axis] / unscaled_mass
        radius = math.sqrt(term) if term >= 0.0 else 0.0
        other = 1 if axis == 0 else 0
        term = 12.0 * (d[other] - 0.25 * unscaled_mass * radius * radius) / unscaled_mass
        length = math.sqrt(term) if term >= 0.0 else 0.0
        length *= s[axis]
        a, b = [k for k in range(3) if k != axis]
        rad_sqr = radius * s[a] * radius * s[b]
        side = mass * ((length * length / 12.0) + 0.25 * rad_sqr)
        for k in range(3):
            I[k, k] = 0.5 * mass * rad_sqr if k == axis else side
        for i, j in ((0, 1), (0, 2), (1, 2)):
            I[i, j] *= s[i] * s[j] * (factor if scale_mass else 1.0)
            I[j, i] = I[i, j]
    _write(el, [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def _multiply_function(holder: ET.Element, function: ET.Element, factor: float) -> None:
    """Multiply a function element (a child of ``holder``) by ``factor``: a ``MultiplierFunction``'s scale is
    updated, any other function is wrapped in one (OpenSim's rule for scaled transform axes and moving points)."""
    if function.tag == "MultiplierFunction":
        scale = function.find("scale")
        if scale is None:
            scale = ET.SubElement(function, "scale")
            scale.text = "1"
        _write(scale, float(scale.text) * factor)
        return
    index = list(holder).index(function)
    wrapper = ET.Element("MultiplierFunction", {k: v for k, v in function.attrib.items() if k == "name"})
    inner = ET.SubElement(wrapper, "function")
    inner.append(function)
    _write(ET.SubElement(wrapper, "scale"), factor)
    holder.remove(function)
    holder.insert(index, wrapper)


def _function_of(holder: ET.Element) -> ET.Element | None:
    return next((c for c in holder if c.tag not in ("coordinates", "axis")), None)


def _scale_geometry(frame_el: ET.Element, s: np.ndarray) -> None:
    for geometry in frame_el.findall("attached_geometry/*"):
        factors = geometry.find("scale_factors")
        if factors is not None:
            _write(factors, _numbers(factors) * s)


def _coordinate_is_translation(model: ET.Element, name: str) -> tuple[ET.Element, bool] | None:
    """The joint of coordinate ``name`` and whether the coordinate moves it along a translation."""
    for joint in _set_objects(model, "JointSet"):
        coords = [c.get("name") for c in joint.findall("coordinates/Coordinate")]
        if name not in coords:
            continue
        if joint.tag == "CustomJoint":
            kinds = {axis.get("name", "")[:-1] for axis in joint.iter("TransformAxis")
                     if name in (axis.findtext("coordinates") or "").split()}
            return joint, kinds == {"translation"}
        if joint.tag == "SliderJoint":
            return joint, True
        if joint.tag == "PlanarJoint":
            return joint, coords.index(name) > 0
        if joint.tag in ("FreeJoint",):
            return joint, coords.index(name) >= 3
        return joint, False
    return None


def scale_osim_document(root: ET.Element, scales: Mapping, *, preserve_mass_distribution: bool = False,
                        final_mass: float | None = None) -> ET.Element:
    """A scaled copy of a model document (an ``.osim`` file's root element), as OpenSim's ``Model::scale`` makes it,
    but for the muscles' fibre and tendon lengths (:func:`post_scale_muscles`).

    Parameters
    ----------
    root : Element
        ``<OpenSimDocument>`` (or ``<Model>``); not modified.
    scales : dict of str -> float or (3,) floats
        Per body name: one factor (uniform) or three along the body's x, y, z axes. Bodies not named keep their
        size (as a ScaleSet without an entry for them).
    preserve_mass_distribution : bool
        OpenSim's ``preserveMassDist``: True keeps the masses (the inertias still scale with the geometry);
        False (default, ``Model::scale``'s own default) multiplies each scaled body's mass by ``s_x s_y s_z``.
    final_mass : float, optional
        Then every body's mass and inertia times one factor so that the masses sum to this (kg).

    Returns
    -------
    Element
        The scaled document.
    """
    root = copy.deepcopy(root)
    model = model_element(root)
    bodies = [b.get("name") for b in _set_objects(model, "BodySet")]
    S = scale_factors(scales, bodies)
    if final_mass is not None and not (isinstance(final_mass, (int, float)) and math.isfinite(final_mass)
                                       and final_mass > 0):
        raise ValueError(f"scale: final_mass must be a positive number of kg, got {final_mass!r}")
    frames = _Frames(model)

    def factors(ref: str, context: str) -> np.ndarray | None:
        return S.get(frames.body(ref, context))

    refused = [el.tag for tag in ("ConstantCurvatureJoint", "EllipsoidJoint", "ScapulothoracicJoint")
               for el in model.iter(tag)]
    refused += [el.tag for tag in ("WrapSphere", "WrapEllipsoid", "WrapTorus") for el in model.iter(tag)]
    refused += [el.tag for tag in ("Ligament", "Blankevoort1991Ligament", "PathSpring", "ExpressionBasedPathForce",
                                   "Scholz2015GeometryPath") for el in model.iter(tag)]
    if refused:
        raise NotImplementedError(f"scale: the model holds {sorted(set(refused))}, which moco_lab does not scale "
                                  "as OpenSim does")
    # offset frames and their display geometry
    scaled = [(el, "translation", S.get(frames.base[parent])) for el, parent in frames.offsets]
    # bodies: centre of mass, display geometry (the inertial properties below)
    scaled += [(b, "mass_center", S.get(b.get("name"))) for b in _set_objects(model, "BodySet")]
    for el, tag, s in scaled:
        if s is not None:
            _multiply(el, tag, s)
            _scale_geometry(el, s)
    # custom joints' translation functions
    for joint in _set_objects(model, "JointSet"):
        if joint.tag != "CustomJoint":
            continue
        s = factors(joint.findtext("socket_parent_frame", ""), f"/jointset/{joint.get('name')}")
        if s is None:
            continue
        for axis in joint.iter("TransformAxis"):
            if not axis.get("name", "").startswith("translation"):
                continue
            function = _function_of(axis)
            if function is None:
                continue
            if function.tag == "LinearFunction" and list(_numbers(function.find("coefficients"))) == [1.0, 0.0]:
                continue  # the coordinate itself: a degree of freedom, not a length
            _multiply_function(axis, function, float(np.abs(_numbers(axis.find("axis"))) @ s))
    # markers, path points, wrap objects
    for marker in _set_objects(model, "MarkerSet"):
        s = factors(marker.findtext("socket_parent_frame") or "", f"/markerset/{marker.get('name')}")
        if s is not None:
            _multiply(marker, "location", s)
    for kind in ("PathPoint", "ConditionalPathPoint", "MovingPathPoint"):
        for point in model.iter(kind):
            s = factors(point.findtext("socket_parent_frame") or "", f"/path point {point.get('name')}")
            if s is None:
                continue
            _multiply(point, "location", s)
            if kind == "MovingPathPoint":
                for k, axis in enumerate("xyz"):
                    holder = point.find(f"{axis}_location")
                    if holder is not None and (point.findtext(f"socket_{axis}_coordinate") or "").strip():
                        function = _function_of(holder)
                        if function is not None:
                            _multiply_function(holder, function, float(s[k]))
    for b in _set_objects(model, "BodySet"):
        s = S.get(b.get("name"))
        if s is None:
            continue
        for wrap in b.findall("WrapObjectSet/objects/*"):
            _multiply(wrap, "translation", s)
            if wrap.tag == "WrapCylinder":
                angles = wrap.find("xyz_body_rotation")
                R = body_fixed_xyz_rotation(_numbers(angles) if angles is not None else np.zeros(3)).matrix()
                lengths = [float(np.linalg.norm(R[:, k] * s)) for k in range(3)]
                for tag, default, factor in (("radius", 1.0, (lengths[0] + lengths[1]) * 0.5),
                                             ("length", 1.0, lengths[2])):
                    el = wrap.find(tag)
                    if el is None:
                        el = ET.SubElement(wrap, tag)
                        el.text = repr(default)
                    _write(el, float(el.text) * factor)
    # couplers whose dependent coordinate is a translation
    for constraint in _set_objects(model, "ConstraintSet"):
        if constraint.tag != "CoordinateCouplerConstraint":
            continue
        dependent = (constraint.findtext("dependent_coordinate_name") or "").strip()
        found = _coordinate_is_translation(model, dependent)
        if found is None or not found[1]:
            continue
        joint = found[0]
        s = factors(joint.findtext("socket_parent_frame", ""), f"/jointset/{joint.get('name')}")
        if s is None:
            continue
        if not (s[0] == s[1] == s[2]):
            raise NotImplementedError(f"scale: the coupler {constraint.get('name')!r} drives a translation of a "
                                      "non-uniformly scaled body (OpenSim refuses this too)")
        el = constraint.find("scale_factor")
        if el is None:
            el = ET.SubElement(constraint, "scale_factor")
            el.text = "1"
        _write(el, float(el.text) * s[0])
    # inertial properties
    for b in _set_objects(model, "BodySet"):
        s = S.get(b.get("name"))
        if s is None:
            continue
        mass_el = b.find("mass")
        unscaled = float(mass_el.text) if mass_el is not None else 0.0
        mass = unscaled if preserve_mass_distribution else unscaled * abs(s[0] * s[1] * s[2])
        if mass_el is not None:
            _write(mass_el, mass)
        inertia = b.find("inertia")
        if inertia is not None:
            _inertia(inertia, s, not preserve_mass_distribution, unscaled, mass)
    if final_mass is not None:
        current = total_mass(root)
        if current > 0.0:
            factor = final_mass / current
            for b in _set_objects(model, "BodySet"):
                for tag in ("mass", "inertia"):
                    el = b.find(tag)
                    if el is not None:
                        _write(el, _numbers(el) * factor if tag == "inertia" else float(el.text) * factor)
    return root


def place_markers(root: ET.Element, locations: Mapping[str, tuple[str, ArrayLike]]) -> None:
    """Move markers, in place: ``{name: (body, location in the body's frame)}``; each marker is re-attached to its
    body's own frame (``/bodyset/<body>``)."""
    model = model_element(root)
    by_name = {el.get("name"): el for el in _set_objects(model, "MarkerSet")}
    bodies = [b.get("name") for b in _set_objects(model, "BodySet")]
    for name, (body, location) in locations.items():
        if name not in by_name:
            raise KeyError("place_markers: " + did_you_mean(name, list(by_name), "marker"))
        if body not in bodies:
            raise KeyError(f"place_markers: marker {name!r}: " + did_you_mean(body, bodies, "body"))
        el = by_name[name]
        frame = el.find("socket_parent_frame")
        if frame is None:
            frame = ET.SubElement(el, "socket_parent_frame")
        frame.text = f"/bodyset/{body}"
        loc = el.find("location")
        if loc is None:
            loc = ET.SubElement(el, "location")
        _write(loc, np.asarray(location, float).reshape(3))


def post_scale_muscles(root: ET.Element, ratios: Mapping[str, float]) -> None:
    """OpenSim's muscles' ``postScale``: each named muscle's ``optimal_fiber_length`` and ``tendon_slack_length``
    times ``ratio`` (its path's length in the default pose after scaling over before), in place."""
    by_name = {el.get("name"): el for el in muscle_elements(root)}
    for name, ratio in ratios.items():
        if name not in by_name:
            raise KeyError("post_scale_muscles: " + did_you_mean(name, list(by_name), "muscle"))
        for tag in ("optimal_fiber_length", "tendon_slack_length"):
            el = by_name[name].find(tag)
            if el is not None:
                _write(el, float(el.text) * float(ratio))
