"""Read OpenSim model files (``.osim``, OpenSim 4.x XML) onto a Drake ``MultibodyPlant``.

``read_osim(path)`` returns a :class:`~moco_lab.modeling.model.Model` whose names are
OpenSim's paths (``/jointset/hip_r/hip_flexion_r/value``, ``/hamstrings_r/activation``
for a muscle in the model's ``<components>``, ``/forceset/<name>`` for one in its
``<ForceSet>``), so that a problem posed on the file uses the same names as Moco.

What it reads (everything else is refused with an error that names the element and
where it is, or skipped with a warning listing each one when ``skip_unsupported=True``):

* ``Ground``, ``Body`` (mass, centre of mass, the six inertia values about it);
  ``PhysicalOffsetFrame`` (translation; orientation as a body-fixed X–Y–Z sequence),
  nested offsets included;
* joints: ``WeldJoint``, ``PinJoint`` (rotation about the joint frames' z axis),
  ``SliderJoint`` (translation along x), ``PlanarJoint`` (rotation about z, translation
  in x and y: Drake's ``PlanarJoint``, whose coordinates are ordered (x, y, θ)), and
  ``CustomJoint`` of one coordinate: a pin or slider when that is what it is, otherwise
  its exact spatial transform (rotations and translations that are functions of the
  coordinate, e.g. the knee's spline translations; :mod:`moco_lab.modeling.joints`); ``CustomJoint`` of
  several coordinates that is a planar joint, or whose moving axes are each one coordinate with slope ±1 (a chain
  of prismatic then revolute joints through massless frame bodies: the full-body models' pelvis, hips, back);
  ``Coordinate`` ranges (Moco's default bounds) and ``clamped`` flags (``Coordinate.clamped``: inverse
  kinematics keeps them in range);
* forces: ``DeGrooteFregly2016Muscle`` on a ``GeometryPath`` of ``PathPoint``,
  ``ConditionalPathPoint`` and ``MovingPathPoint`` (functions ``Constant``,
  ``LinearFunction``, ``PolynomialFunction``, ``SimmSpline``, ``MultiplierFunction``:
  :mod:`moco_lab.modeling.functions`),
  ``CoordinateActuator``, ``SmoothSphereHalfSpaceForce`` between a ``ContactSphere`` and a
  ``ContactHalfSpace`` — in ``<ForceSet>`` or in the model's ``<components>``;
* ``CoordinateCouplerConstraint`` with a linear function of one independent coordinate.

* ``weld=[joint, ...]``: joints replaced by welds (Moco's ``ModOpReplaceJointsWithWelds``);
  a locked coordinate of a one-coordinate joint: the joint welded at the coordinate's default
  value (``unlock=[coordinate, ...]`` reads it as free);
* wrapping: ``PathWrap`` over a ``WrapCylinder`` (quadrant, range of path points;
  :mod:`moco_lab.modeling.wrapping`: the shortest path over the cylinder).

Function-based paths come from their own file (:func:`moco_lab.modeling.operators.replace_paths_with_function_based_paths`).
* markers (``MarkerSet``): :attr:`Model.markers`, each on the body its frame is fixed to.

Not yet: other ``CustomJoint``s of several coordinates, nonlinear couplers,
wrapping over ellipsoids, spheres and tori. Millard muscles are read only for conversion (``replace_millard=True``).
"""
from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Container, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from pydrake.math import RigidTransform, RotationMatrix

from ..util.data import OPENSIM_DIR, file_sha256, opensim_file
from .constraints import CoordinateCouplerConstraint
from .contact import SmoothSphereHalfSpaceForce
from .forces import ExpressionBasedCoordinateForce
from .functions import Constant, LinearFunction, MultiplierFunction, OpenSimFunction, PolynomialFunction, SimmSpline
from .joints import CustomTransform, body_fixed_xyz_rotation
from .lepton import LeptonError
from .model import Model, ModelBuilder
from .muscle import DeGrooteFregly2016Muscle
from .path import ConditionalPathPoint, GeometryPath, MovingPathPoint, PathPoint
from .wrapping import WRAP_METHODS, PathWrap, WrapCylinder

__all__ = ["read_osim", "read_osim_string", "model_from_file", "degroote_from_millard", "OsimFormatError",
           "body_fixed_xyz_rotation", "MILLARD_DEFAULTS"]

#: Elements of a model file that carry no mechanics (drawing, grouping, bookkeeping): never refused.
_IGNORED = {"Appearance", "attached_geometry", "FrameGeometry", "VisibleObject", "GeometrySet", "defaults",
            "credits", "publications", "length_units", "force_units", "ProbeSet", "ControllerSet",
            "WrapObjectSet", "groups"}

#: DeGrooteFregly2016Muscle properties read from a file (OpenSim name -> moco_lab name).
_DGF_PROPERTIES = {
    "max_isometric_force": "max_isometric_force", "optimal_fiber_length": "optimal_fiber_length",
    "tendon_slack_length": "tendon_slack_length", "pennation_angle_at_optimal": "pennation_angle_at_optimal",
    "max_contraction_velocity": "max_contraction_velocity", "activation_time_constant": "activation_time_constant",
    "deactivation_time_constant": "deactivation_time_constant", "default_activation": "default_activation",
    "default_normalized_tendon_force": "default_normalized_tendon_force",
    "active_force_width_scale": "active_force_width_scale", "fiber_damping": "fiber_damping",
    "passive_fiber_strain_at_one_norm_force": "passive_fiber_strain_at_one_norm_force",
    "tendon_strain_at_one_norm_force": "tendon_strain_at_one_norm_force", "min_control": "min_control",
    "max_control": "max_control",
}
_DGF_FLAGS = ("ignore_passive_fiber_force", "ignore_tendon_compliance", "ignore_activation_dynamics")

_CONTACT_PROPERTIES = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction",
                       "transition_velocity", "hertz_smoothing", "hunt_crossley_smoothing")


#: OpenSim 4.6's class defaults of a Millard2012EquilibriumMuscle for the properties a conversion reads
#: (``min_control``: the constructor sets it to the default minimum activation, 0.01, whatever the file's
#: ``minimum_activation``; measured on subject_walk_scaled.osim, whose muscles omit it: 0.01 in OpenSim).
MILLARD_DEFAULTS = {
    "default_activation": 0.05, "activation_time_constant": 0.01, "deactivation_time_constant": 0.04,
    "fiber_damping": 0.1, "max_contraction_velocity": 10.0, "pennation_angle_at_optimal": 0.0,
    "min_control": 0.01, "max_control": 1.0, "max_isometric_force": 1000.0, "optimal_fiber_length": 0.1,
    "tendon_slack_length": 0.2, "FiberForceLengthCurve/strain_at_one_norm_force": 0.7,
    "TendonForceLengthCurve/strain_at_one_norm_force": 0.049,
}


_FUNCTION_TAGS = ("Constant", "LinearFunction", "SimmSpline", "MultiplierFunction", "PiecewiseLinearFunction",
                  "GCVSpline", "PolynomialFunction", "NaturalCubicSpline", "StepFunction", "Sine")


class OsimFormatError(ValueError):
    """A model file holds something moco_lab cannot represent faithfully (names the element and where it is)."""


def _vec(el: ET.Element | None, tag: str, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    text = el.findtext(tag) if el is not None else None
    return np.array([float(v) for v in text.split()]) if text and text.strip() else np.array(default, float)


def _num(el: ET.Element, tag: str, default: float | None = None) -> float | None:
    text = el.findtext(tag)
    return float(text) if text is not None and text.strip() else default


def _flag(el: ET.Element, tag: str, default: bool = False) -> bool:
    text = el.findtext(tag)
    return default if text is None else text.strip().lower() in ("true", "1")


def _normalize(path: str) -> str:
    """An absolute component path with ``.`` and ``..`` resolved."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
        else:
            out.append(part)
    return "/" + "/".join(out)


def frame_path(ref: str, context: str, known: Container[str]) -> str | None:
    """The path among ``known`` that a socket's frame reference names: absolute, or relative to the component
    ``context`` (``/jointset/hip_r``), or a body's name; None if none."""
    ref = ref.strip()
    for c in [ref] if ref.startswith("/") else [f"{context}/{ref}", f"/{ref}", f"/bodyset/{ref}"]:
        c = _normalize(c)
        if c in known:
            return c
    return None


def _last(path: str) -> str:
    return path.rstrip("/").split("/")[-1]


@dataclass
class _Frame:
    body: str  # "ground" or a body name
    X: RigidTransform  # the frame's pose in that body


class _Reader:
    def __init__(self, path: Path, skip_unsupported: bool, replace_millard: bool = False, text: str | None = None,
                 weld: Sequence[str] = (), unlock: Sequence[str] = (), side_files: Sequence[Path] = (),
                 wrap_method: str = "shortest"):
        self.file = path
        self.wrap_method = wrap_method
        self.skip = skip_unsupported
        self.replace_millard = replace_millard
        self.weld, self.unlock = set(weld), set(unlock)
        self.clamped: set[str] = set()  # coordinates whose range OpenSim's inverse kinematics keeps them in
        self.along_rotated_axes: list[str] = []  # lengths given along a rotated offset frame's axes (not the body's)
        self.removed: dict[str, str] = {}  # coordinate -> why it is not a coordinate of the model (welded, locked)
        self.skipped: list[str] = []
        try:
            root = ET.fromstring(text) if text is not None else ET.parse(path).getroot()
        except ET.ParseError as e:
            line, column = e.position
            raise OsimFormatError(f"{path}: not a readable XML file (line {line}, column {column}: "
                                  f"{str(e).split(':')[0]}); is it truncated, or not an .osim file?") from None
        if root.tag == "OpenSimDocument":
            model = root.find("Model")
        elif root.tag == "Model":
            model = root
        else:
            raise OsimFormatError(f"{path}: not an OpenSim model file (its root element is <{root.tag}>, a model "
                                  "file's is <OpenSimDocument> holding a <Model>)")
        if model is None:
            raise OsimFormatError(f"{path.name}: no <Model> element")
        version = int(root.get("Version", "40000")) if root.tag == "OpenSimDocument" else 40000
        if version < 30000:
            raise OsimFormatError(f"{path.name} is in the OpenSim {version // 10000}.x format (Version {version}); "
                                  "moco_lab reads OpenSim 3.x and 4.x files (open and save it once in OpenSim 4 "
                                  "to convert it)")
        if version < 40000:
            model = upgrade_v3(model, path.name)
        self.model_el = model
        for side in side_files:
            self.add_side_file(Path(side))
        # <defaults>: per element type, the values its objects in this document take for what they omit
        self.defaults = {el.tag: el for d in model.findall("defaults") for el in d}
        self.name = model.get("name", path.stem)
        gravity = _vec(model, "gravity", (0.0, -9.80665, 0.0))
        self.builder = ModelBuilder(self.name, gravity=gravity)
        self.frames: dict[str, _Frame] = {"/ground": _Frame("ground", RigidTransform())}
        self.coordinates: dict[str, str] = {}  # short name -> joint path
        self.geometry: dict[str, ET.Element] = {}
        self.wrap_objects: dict[str, object] = {}  # name -> WrapCylinder, or the type name of another wrap object

    def add_side_file(self, side: Path) -> None:
        """Merge a side file's set into the model as Moco's examples add them: a ``ContactGeometrySet``'s geometry
        to the model's contact geometry (``/contactgeometryset/<name>``), a ``ForceSet``'s forces as components of
        the model (``/<name>``, ``Model::addComponent``)."""
        try:
            root = ET.parse(side).getroot()
        except (OSError, ET.ParseError) as e:
            raise OsimFormatError(f"{side}: not a readable OpenSim side file ({e})") from None
        sets = list(root) if root.tag == "OpenSimDocument" else [root]
        for s in sets:
            objects = list(s.find("objects") if s.find("objects") is not None else [])
            if s.tag == "ContactGeometrySet":
                target = self.model_el.find("ContactGeometrySet")
                if target is None:
                    target = ET.SubElement(self.model_el, "ContactGeometrySet", name="contactgeometryset")
                holder = target.find("objects")
                if holder is None:
                    holder = ET.SubElement(target, "objects")
            elif s.tag == "ForceSet":
                holder = self.model_el.find("components")
                if holder is None:
                    holder = ET.SubElement(self.model_el, "components")
            else:
                raise OsimFormatError(f"{side.name}: a side file holding a <{s.tag}> is not supported (a ForceSet or "
                                      "a ContactGeometrySet is)")
            taken = {el.get("name") for el in holder}
            for el in objects:
                if el.get("name") in taken:
                    raise OsimFormatError(f"{side.name}: {el.tag} {el.get('name')!r} is already in "
                                          f"{self.file.name}")
                holder.append(el)

    # ------------------------------------------------------------ problems
    def unsupported(self, what: str, where: str) -> None:
        message = f"{self.file.name}: {what} at {where} is not supported by moco_lab's reader"
        if not self.skip:
            raise OsimFormatError(message + " (read_osim(..., skip_unsupported=True) skips it with a warning)")
        self.skipped.append(f"{what} at {where}")

    # ------------------------------------------------------------ frames
    def frame(self, ref: str, context: str) -> _Frame:
        """A frame by socket path: absolute, or relative to the component ``context`` (``/jointset/hip_r``)."""
        path = frame_path(ref, context, self.frames)
        if path is not None:
            return self.frames[path]
        raise OsimFormatError(f"{self.file.name}: frame {ref!r} (used by {context}) is not in the model; known "
                              f"frames: {sorted(self.frames)[:12]}")

    def offset_frames(self, owner: ET.Element, owner_path: str) -> None:
        """Register the PhysicalOffsetFrames an element owns (in ``<frames>`` or ``<components>``)."""
        pending = [el for tag in ("frames", "components") for parent in owner.findall(tag) for el in parent
                   if el.tag == "PhysicalOffsetFrame"]
        for _ in range(len(pending) + 1):  # offsets of offsets: resolve in dependency order
            left = []
            for el in pending:
                try:  # a socket path is relative to the component that owns the socket: the offset frame
                    parent = self.frame(el.findtext("socket_parent", ""), f"{owner_path}/{el.get('name')}")
                except OsimFormatError:
                    left.append(el)
                    continue
                R = body_fixed_xyz_rotation(_vec(el, "orientation"))
                X = parent.X @ RigidTransform(R, _vec(el, "translation"))
                self.frames[f"{owner_path}/{el.get('name')}"] = _Frame(parent.body, X)
                if not parent.X.rotation().IsExactlyIdentity():  # its translation is along a rotated frame's axes
                    self.along_rotated_axes.append(f"the offset frame {owner_path}/{el.get('name')}")
            if not left:
                return
            pending = left
        names = [el.get("name") for el in pending]
        raise OsimFormatError(f"{self.file.name}: offset frames {names} of {owner_path} name unknown parents")

    # ------------------------------------------------------------ bodies and joints
    def bodies(self) -> None:
        for el in self.sets("BodySet", "Body"):
            name = el.get("name")
            inertia = _vec(el, "inertia", (0, 0, 0, 0, 0, 0))
            if inertia.size == 3:
                inertia = np.concatenate([inertia, np.zeros(3)])
            try:
                self.builder.add_body(name, float(_num(el, "mass", 0.0)), _vec(el, "mass_center"), inertia,
                                      path=f"/bodyset/{name}")
            except (ValueError, RuntimeError) as e:   # a bad value, or an inertia Drake finds not physical
                raise OsimFormatError(f"{self.file.name}: /bodyset/{name}: {e}") from None
            self.frames[f"/bodyset/{name}"] = _Frame(name, RigidTransform())
            self.offset_frames(el, f"/bodyset/{name}")
            self.read_wrap_objects(el, name)
        for el in self.model_el.findall("Ground"):
            self.offset_frames(el, "/ground")

    def read_wrap_objects(self, body_el: ET.Element, body: str) -> None:
        """A body's wrap objects: WrapCylinders are read; others are remembered by type, refused if a path uses them."""
        for el in body_el.findall("WrapObjectSet/objects/*"):
            name = el.get("name")
            if el.tag != "WrapCylinder" or not _flag(el, "active", True):
                self.wrap_objects[name] = el.tag if el.tag != "WrapCylinder" else "an inactive WrapCylinder"
                continue
            self.wrap_objects[name] = WrapCylinder(
                name, body, float(_num(el, "radius", 1.0)), float(_num(el, "length", 1.0)), tuple(_vec(el, "translation")),
                tuple(_vec(el, "xyz_body_rotation")), (el.findtext("quadrant") or "all").strip(), self.wrap_method)

    def sets(self, set_tag: str, kind: str | None = None) -> list[ET.Element]:
        out = []
        for s in self.model_el.findall(set_tag):
            for objects in s.findall("objects"):
                out += [el for el in objects if kind is None or el.tag == kind]
        return out

    def joints(self) -> None:
        names = {el.get("name") for el in self.sets("JointSet")}
        unknown = sorted(self.weld - names)
        if unknown:
            raise OsimFormatError(f"{self.file.name}: weld names joints that are not in the model: {unknown}; "
                                  f"joints: {sorted(names)}")
        all_coords = {c.get("name") for el in self.sets("JointSet") for c in el.findall("coordinates/Coordinate")}
        unknown = sorted(self.unlock - all_coords)
        if unknown:
            raise OsimFormatError(f"{self.file.name}: unlock names coordinates that are not in the model: {unknown}")
        for el in self.sets("JointSet"):
            jpath = f"/jointset/{el.get('name')}"
            self.offset_frames(el, jpath)
            parent = self.frame(el.findtext("socket_parent_frame", ""), jpath)
            child = self.frame(el.findtext("socket_child_frame", ""), jpath)
            coords = el.findall("coordinates/Coordinate")
            self.clamped.update(c.get("name") for c in coords if _flag(c, "clamped"))
            locked = [c for c in coords if _flag(c, "locked") and c.get("name") not in self.unlock]
            kind = el.tag
            args = dict(name=el.get("name"), parent=parent.body, child=child.body, parent_offset=parent.X,
                        child_offset=child.X)
            if el.get("name") in self.weld:  # Moco's ModOpReplaceJointsWithWelds: the joint frames coincide
                self.builder.add_weld_joint(**args)
                self.removed.update({c.get("name"): f"welded joint {jpath}" for c in coords})
                continue
            if locked:  # held at its default value: a weld at that pose (single-coordinate joints)
                X = self.joint_pose(el, coords, jpath) if len(coords) == 1 else None
                if X is None:
                    self.unsupported(f"the locked coordinate {locked[0].get('name')!r} (read_osim(..., unlock=[...]) "
                                     "unlocks it; single-coordinate joints are welded at the locked value)", jpath)
                    continue
                self.builder.add_weld_joint(**{**args, "parent_offset": parent.X @ X})
                self.removed[coords[0].get("name")] = f"locked coordinate of {jpath} (read_osim(..., unlock=[...]))"
                continue
            if kind == "WeldJoint":
                self.builder.add_weld_joint(**args)
            elif kind in ("PinJoint", "SliderJoint"):
                (c,) = self.only(coords, 1, jpath)
                add = self.builder.add_pin_joint if kind == "PinJoint" else self.builder.add_slider_joint
                add(**args, axis=(0, 0, 1) if kind == "PinJoint" else (1, 0, 0), coordinate=c.get("name"),
                    path=jpath, range=self.range(c))
            elif kind == "PlanarJoint":
                rz, tx, ty = self.only(coords, 3, jpath)
                self.builder.add_planar_joint(**args, coordinates=(tx.get("name"), ty.get("name"), rz.get("name")),
                                              path=jpath, ranges=[self.range(tx), self.range(ty), self.range(rz)])
            elif kind == "CustomJoint" and len(coords) > 1:
                if not (self.planar_custom_joint(el, coords, args, jpath)
                        or self.chain_custom_joint(el, coords, args, jpath)):
                    continue
            elif kind == "CustomJoint":
                self.custom_joint(el, coords, args, jpath)
            else:
                self.unsupported(f"the joint type {kind} ({el.get('name')!r})", jpath)
                continue
            for c in coords:
                self.coordinates[c.get("name")] = jpath

    def joint_pose(self, el: ET.Element, coords: list, jpath: str) -> RigidTransform | None:
        """``X_FM`` of a one-coordinate joint at its coordinate's default value (None: a kind not handled)."""
        q0 = float(_num(coords[0], "default_value", 0.0))
        if el.tag == "PinJoint":
            return RigidTransform(RotationMatrix.MakeZRotation(q0), np.zeros(3))
        if el.tag == "SliderJoint":
            return RigidTransform(np.array([q0, 0.0, 0.0]))
        if el.tag == "CustomJoint":
            transform = self.custom_transform(el, coords, jpath)
            if transform is None:
                return None
            R, p = transform.pose(q0)
            return RigidTransform(RotationMatrix(R), p)
        return None

    def only(self, coords, n, where):
        if len(coords) != n:
            raise OsimFormatError(f"{self.file.name}: {where} has {len(coords)} coordinates, expected {n}")
        return coords

    def range(self, c: ET.Element) -> tuple[float, float]:
        """A coordinate's ``<range>`` (unbounded if absent); two numbers, lower ≤ upper."""
        r = _vec(c, "range", (-math.inf, math.inf))
        if r.size != 2 or not (r[0] <= r[1]):
            raise OsimFormatError(f"{self.file.name}: the coordinate {c.get('name')!r} has the range "
                                  f"{c.findtext('range', '').strip()!r}: it needs two numbers, lower <= upper")
        return float(r[0]), float(r[1])

    def custom_joint(self, el, coords, args, jpath) -> None:
        """A CustomJoint of one coordinate: a pin or slider when it is one, else an exact :class:`CustomTransform`."""
        transform = self.custom_transform(el, coords, jpath)
        if transform is None:
            return
        kw = dict(coordinate=coords[0].get("name"), path=jpath, range=self.range(coords[0]))
        axes = [("rotation", a, f) for a, f in transform.rotations] + \
            [("translation", a, f) for a, f in transform.translations]
        moving = [(n, a, f) for n, a, f in axes if not (isinstance(f, Constant) and f.value == 0.0)]
        if (len(moving) == 1 and isinstance(moving[0][2], LinearFunction) and moving[0][2].slope == 1.0
                and moving[0][2].intercept == 0.0):
            name, axis, _ = moving[0]
            add = self.builder.add_pin_joint if name == "rotation" else self.builder.add_slider_joint
            add(**args, axis=axis, **kw)
            return
        self.builder.add_custom_joint(**args, transform=transform, **kw)

    def planar_custom_joint(self, el, coords, args, jpath) -> bool:
        """A CustomJoint of three coordinates that is a planar joint: a rotation about z equal to one coordinate,
        translations along x and y equal to the two others, the other axes constant (a constant translation along
        z moves the parent frame). Any other several-coordinate CustomJoint: False."""
        funcs = {}
        for axis_el in el.findall("SpatialTransform/TransformAxis"):
            names = (axis_el.findtext("coordinates") or "").split()
            funcs[axis_el.get("name")] = (_vec(axis_el, "axis"), self.axis_function(axis_el, f"{jpath}/"
                                                                                       f"{axis_el.get('name')}"),
                                          names)

        def identity(key, axis):
            a, f, names = funcs.get(key, (None, None, []))
            ok = (a is not None and np.allclose(a, axis, atol=0) and isinstance(f, LinearFunction)
                  and f.slope == 1.0 and f.intercept == 0.0 and len(names) == 1)
            return names[0] if ok else None

        def constant(key, zero=True):
            a, f, names = funcs.get(key, (None, Constant(0.0), []))
            if names or not f.is_constant():
                return None
            value = float(f(0.0))
            return value if (value == 0.0 or not zero) else None

        rz, tx, ty = identity("rotation1", (0, 0, 1)), identity("translation1", (1, 0, 0)), \
            identity("translation2", (0, 1, 0))
        z = constant("translation3", zero=False)
        t3 = funcs.get("translation3", (np.array([0.0, 0.0, 1.0]), None, []))[0]
        if (None in (rz, tx, ty, z) or constant("rotation2") is None or constant("rotation3") is None
                or not np.allclose(t3, (0, 0, 1), atol=0)
                or sorted((rz, tx, ty)) != sorted(c.get("name") for c in coords)):
            return False
        by_name = {c.get("name"): c for c in coords}
        args = {**args, "parent_offset": args["parent_offset"] @ RigidTransform(np.array([0.0, 0.0, z]))}
        self.builder.add_planar_joint(**args, coordinates=(tx, ty, rz), path=jpath,
                                      ranges=[self.range(by_name[tx]), self.range(by_name[ty]),
                                              self.range(by_name[rz])])
        return True

    def chain_custom_joint(self, el, coords, args, jpath) -> bool:
        """A CustomJoint of several coordinates in which each moving axis is one of its coordinates, with slope ±1
        (``LinearFunction(±1, 0)``): the hips, back, shoulders and 6-coordinate pelvis of OpenSim's full-body
        models. Read exactly as a chain of prismatic joints (translations, along axes of the parent's joint frame)
        then revolute joints (rotations, body-fixed sequence) through massless frame bodies, so that Drake's own
        kinematics of the plant are the model's. Constant translations move the parent's joint frame; constant
        rotations must be zero. Anything else is reported (False)."""
        by_name = {c.get("name"): c for c in coords}
        translations, rotations, used = [], [], []
        shift = np.zeros(3)
        problem = None
        for axis_el in el.findall("SpatialTransform/TransformAxis"):
            kind = "rotation" if axis_el.get("name", "").startswith("rotation") else "translation"
            where = f"{jpath}/{axis_el.get('name')}"
            f = self.axis_function(axis_el, where)
            names = (axis_el.findtext("coordinates") or "").split()
            axis = _vec(axis_el, "axis")
            if not names or f.is_constant():
                value = float(f(0.0))
                if kind == "translation":
                    shift = shift + axis * value
                elif value != 0.0:
                    problem = f"{where} is a constant rotation of {value} rad"
                continue
            if len(names) != 1 or names[0] not in by_name:
                problem = f"{where} is a function of {names}, not of one of the joint's coordinates"
            elif not (isinstance(f, LinearFunction) and abs(f.slope) == 1.0 and f.intercept == 0.0):
                problem = f"{where} is not the coordinate {names[0]!r} itself (its function: {f.description()})"
            elif names[0] in used:
                problem = f"the coordinate {names[0]!r} drives several axes ({where} among them)"
            elif np.linalg.norm(axis) == 0.0:
                problem = f"{where} has a zero axis"
            else:
                used.append(names[0])
                step = (kind, axis / np.linalg.norm(axis) * f.slope, names[0], self.range(by_name[names[0]]))
                (translations if kind == "translation" else rotations).append(step)
        if problem is None and sorted(used) != sorted(by_name):
            problem = f"the coordinates {sorted(set(by_name) - set(used))} drive no axis"
        if problem is not None:
            self.unsupported(f"a CustomJoint with {len(coords)} coordinates that is neither a planar joint nor one "
                             f"axis per coordinate ({problem}); moco_lab reads one-coordinate CustomJoints, the "
                             "planar pattern and joints whose moving axes are each one coordinate (slope ±1)", jpath)
            return False
        args = {**args, "parent_offset": args["parent_offset"] @ RigidTransform(shift)}
        self.builder.add_joint_chain(**args, steps=translations + rotations, path=jpath)
        return True

    def custom_transform(self, el, coords, jpath) -> CustomTransform | None:
        """The spatial transform of a one-coordinate CustomJoint (None, after reporting it, if not supported)."""
        axes = []
        for axis_el in el.findall("SpatialTransform/TransformAxis"):
            where = f"{jpath}/{axis_el.get('name')}"
            f = self.axis_function(axis_el, where)
            names = (axis_el.findtext("coordinates") or "").split()
            if len(names) > 1:
                self.unsupported(f"a TransformAxis that is a function of several coordinates {names}", where)
                return None
            if names and (len(coords) != 1 or names[0] != coords[0].get("name")):
                self.unsupported(f"a TransformAxis of coordinate {names[0]!r} that is not the joint's own", where)
                return None
            if not names and not f.is_constant():
                raise OsimFormatError(f"{self.file.name}: {where} has a non-constant function but no coordinate")
            axes.append((axis_el.get("name"), _vec(axis_el, "axis"), f))
        if len(coords) != 1:
            self.unsupported(f"a CustomJoint with {len(coords)} coordinates (moco_lab reads one-coordinate "
                             "CustomJoints)", jpath)
            return None
        return CustomTransform(rotations=[(a, f) for n, a, f in axes if n.startswith("rotation")],
                               translations=[(a, f) for n, a, f in axes if n.startswith("translation")],
                               velocity_products="simbody")  # what OpenSim computes for the file

    # ------------------------------------------------------------ functions
    def axis_function(self, axis_el: ET.Element, where: str) -> OpenSimFunction:
        """A TransformAxis's function: a child naming its type (``<LinearFunction name="function">``) or one
        inside ``<function>`` (older files); none: zero."""
        for child in axis_el:
            if child.tag in _FUNCTION_TAGS:
                return self.function_element(child, where)
            if child.tag == "function":
                return self.function(child, where)
        return Constant(0.0)

    def function(self, holder: ET.Element | None, where: str) -> OpenSimFunction:
        """The function inside a property element (``<function>``, ``<x_location>``, ...); none: zero."""
        el = None if holder is None else next(iter(holder), None)
        return Constant(0.0) if el is None else self.function_element(el, where)

    def function_element(self, el: ET.Element, where: str) -> OpenSimFunction:
        """A function element (``<SimmSpline>``, ...) read into :mod:`moco_lab.modeling.functions`."""
        if el.tag == "Constant":
            return Constant(float(_num(el, "value", 0.0)))
        if el.tag == "LinearFunction":
            coeffs = _vec(el, "coefficients", (1.0, 0.0))
            return LinearFunction(float(coeffs[0]), float(coeffs[1]))
        if el.tag == "SimmSpline":
            try:
                return SimmSpline(_vec(el, "x", ()), _vec(el, "y", ()))
            except ValueError as e:
                raise OsimFormatError(f"{self.file.name}: the SimmSpline at {where}: {e}") from None
        if el.tag == "PolynomialFunction":
            try:
                return PolynomialFunction(_vec(el, "coefficients", ()))
            except ValueError as e:
                raise OsimFormatError(f"{self.file.name}: the PolynomialFunction at {where}: {e}") from None
        if el.tag == "MultiplierFunction":
            return MultiplierFunction(self.function(el.find("function"), where), float(_num(el, "scale", 1.0)))
        raise OsimFormatError(f"{self.file.name}: the function type {el.tag} at {where} is not supported "
                              "(Constant, LinearFunction, PolynomialFunction, SimmSpline, MultiplierFunction are)")

    # ------------------------------------------------------------ forces
    def forces(self) -> None:
        for el in self.model_el.findall("ContactGeometrySet/objects/*") + [
                c for c in self.model_el.findall("components/*") if c.tag.startswith("Contact")]:
            self.geometry[f"/contactgeometryset/{el.get('name')}"] = el
            self.geometry[f"/{el.get('name')}"] = el
        owners = [("/forceset", el) for el in self.sets("ForceSet")]
        owners += [("", el) for el in self.model_el.findall("components/*")]
        for owner, el in owners:
            where = f"{owner}/{el.get('name')}"
            if el.tag in _IGNORED or el.tag.startswith("Contact"):
                continue
            if _flag(el, "appliesForce", True) is False or _flag(el, "isDisabled", False):
                continue
            if el.tag == "DeGrooteFregly2016Muscle" or (el.tag == "Millard2012EquilibriumMuscle" and self.replace_millard):
                self.muscle(el, owner, where)
            elif el.tag == "Millard2012EquilibriumMuscle":
                self.unsupported(f"the Millard2012EquilibriumMuscle {el.get('name')!r} (read_osim(..., "
                                 "replace_millard=True) replaces it by a DeGrooteFregly2016Muscle, as Moco's "
                                 "ModOpReplaceMusclesWithDeGrooteFregly2016 does)", where)
            elif el.tag == "CoordinateActuator":
                coordinate = self.force_coordinate(el, where)
                if coordinate is None:
                    continue
                self.builder.add_coordinate_actuator(where, coordinate, float(_num(el, "optimal_force", 1.0)),
                                                     float(_num(el, "min_control", -math.inf)),
                                                     float(_num(el, "max_control", math.inf)))
            elif el.tag == "SmoothSphereHalfSpaceForce":
                self.contact(el, where)
            elif el.tag == "ExpressionBasedCoordinateForce":
                coordinate = self.force_coordinate(el, where)
                if coordinate is None:
                    continue
                try:
                    self.builder.add_force_element(ExpressionBasedCoordinateForce(
                        where, coordinate, (el.findtext("expression") or "").strip()))
                except LeptonError as e:
                    raise OsimFormatError(f"{self.file.name}: {e}") from None
            else:
                self.unsupported(f"the force {el.tag} ({el.get('name')!r})", where)

    def force_coordinate(self, el: ET.Element, where: str) -> str | None:
        """The coordinate a one-coordinate force acts on; None (refused or skipped) if the model read lacks it."""
        coordinate = _last(el.findtext("coordinate") or el.findtext("socket_coordinate") or "")
        if coordinate in self.removed:
            self.unsupported(f"the {el.tag} {el.get('name')!r} on {coordinate!r}, which is not a coordinate of the "
                             f"model read ({self.removed[coordinate]})", where)
            return None
        return coordinate

    def muscle(self, el: ET.Element, owner: str, where: str) -> None:
        if el.tag == "Millard2012EquilibriumMuscle":
            muscle = degroote_from_millard(el, self.defaults.get(el.tag))
        else:
            values = {ours: float(v) for theirs, ours in _DGF_PROPERTIES.items() if (v := _num(el, theirs)) is not None}
            flags = {f: _flag(el, f) for f in _DGF_FLAGS if el.find(f) is not None}
            if el.find("tendon_compliance_dynamics_mode") is not None:
                values_mode = (el.findtext("tendon_compliance_dynamics_mode") or "explicit").strip()
                flags["tendon_compliance_dynamics_mode"] = values_mode
            muscle = DeGrooteFregly2016Muscle(el.get("name"), **values, **flags)
        geometry = el.find("GeometryPath")
        if geometry is None:
            raise OsimFormatError(f"{self.file.name}: muscle {where} has no GeometryPath")
        points = [self.path_point(p, f"{where}/path") for p in geometry.findall("PathPointSet/objects/*")]
        wraps = []
        for el_wrap in geometry.findall("PathWrapSet/objects/PathWrap"):
            here = f"{where}/path/{el_wrap.get('name')}"
            name = (el_wrap.findtext("wrap_object") or "").strip()
            obj = self.wrap_objects.get(name)
            if not isinstance(obj, WrapCylinder):
                kind = obj if isinstance(obj, str) else "an unknown wrap object"
                self.unsupported(f"wrapping over {name!r} ({kind}; moco_lab wraps over WrapCylinders)", here)
                continue
            r = _vec(el_wrap, "range", (-1, -1))
            wraps.append(PathWrap(obj, int(r[0]), int(r[1])))
        if any(isinstance(p, ConditionalPathPoint) for p in points) and wraps:
            self.unsupported("a path with both conditional points and wrapping", f"{where}/path")
            wraps = []
        self.builder.add_muscle(muscle, GeometryPath([p for p in points if p is not None], wraps), owner=owner)

    def path_point(self, el: ET.Element, where: str) -> PathPoint | None:
        frame = self.frame(el.findtext("socket_parent_frame") or el.findtext("body") or "", where)
        location = frame.X.multiply(_vec(el, "location"))  # into the body's own frame
        here = f"{where}/{el.get('name')}"
        if el.tag == "PathPoint":
            return PathPoint(frame.body, tuple(location))
        if el.tag == "ConditionalPathPoint":
            coordinate = _last(el.findtext("socket_coordinate") or el.findtext("coordinate") or "")
            r = _vec(el, "range")
            return ConditionalPathPoint(frame.body, tuple(location), coordinate, (float(r[0]), float(r[1])))
        if el.tag == "MovingPathPoint":
            if not frame.X.IsExactlyIdentity():
                self.unsupported("a MovingPathPoint on an offset frame", here)
                return None
            functions, coordinates = [], []
            for axis in ("x", "y", "z"):
                functions.append(self.function(el.find(f"{axis}_location"), f"{here}/{axis}_location"))
                coordinates.append(_last(el.findtext(f"socket_{axis}_coordinate") or
                                         el.findtext(f"{axis}_coordinate") or ""))
            return MovingPathPoint(frame.body, tuple(location), tuple(functions), tuple(coordinates))
        self.unsupported(f"the path point type {el.tag}", here)
        return None

    def contact(self, el: ET.Element, where: str) -> None:
        sphere = self.geometry.get((el.findtext("socket_sphere") or "").strip())
        plane = self.geometry.get((el.findtext("socket_half_space") or "").strip())
        if sphere is None or plane is None or sphere.tag != "ContactSphere" or plane.tag != "ContactHalfSpace":
            raise OsimFormatError(f"{self.file.name}: {where} needs a ContactSphere and a ContactHalfSpace "
                                  f"(got {el.findtext('socket_sphere')!r}, {el.findtext('socket_half_space')!r})")
        s_frame = self.frame(sphere.findtext("socket_frame", ""), where)
        p_frame = self.frame(plane.findtext("socket_frame", ""), where)
        centre = s_frame.X.multiply(_vec(sphere, "location"))
        X_plane = p_frame.X @ RigidTransform(body_fixed_xyz_rotation(_vec(plane, "orientation")),
                                             _vec(plane, "location"))
        values = {k: float(v) for k in _CONTACT_PROPERTIES if (v := _num(el, k)) is not None}
        smoothing = _num(el, "constant_contact_force", _num(el, "derivative_smoothing"))
        if smoothing is not None:
            values["constant_contact_force"] = float(smoothing)
        self.builder.add_force_element(SmoothSphereHalfSpaceForce(
            where, s_frame.body, tuple(centre), float(_num(sphere, "radius")), p_frame.body,
            tuple(X_plane.translation()), tuple(X_plane.rotation().matrix()[:, 0]), **values))

    def other_sets(self) -> None:
        for el in self.sets("ConstraintSet"):
            where = f"/constraintset/{el.get('name')}"
            if not _flag(el, "isEnforced", True) or _flag(el, "isDisabled", False):
                continue
            if el.tag != "CoordinateCouplerConstraint":
                self.unsupported(f"the constraint {el.tag} ({el.get('name')!r})", where)
                continue
            independent = (el.findtext("independent_coordinate_names") or "").split()
            dependent = (el.findtext("dependent_coordinate_name") or "").strip()
            f = self.function(el.find("coupled_coordinates_function"), where)
            scale = float(_num(el, "scale_factor", 1.0))
            if len(independent) != 1 or not isinstance(f, (LinearFunction, Constant)):
                self.unsupported("a CoordinateCouplerConstraint that is not linear in one independent coordinate",
                                 where)
                continue
            gone = [c for c in [*independent, dependent] if c in self.removed]
            if gone:
                raise OsimFormatError(f"{self.file.name}: {where} couples {gone[0]!r}, which is not a coordinate "
                                      f"of the model read ({self.removed[gone[0]]})")
            slope, intercept = (f.slope, f.intercept) if isinstance(f, LinearFunction) else (0.0, f.value)
            # OpenSim: q_dep = scale · f(q_indep)
            self.builder.add_constraint(CoordinateCouplerConstraint(el.get("name"), dependent, independent[0],
                                                                   ratio=scale * slope, offset=scale * intercept))

    def markers(self) -> None:
        """The ``MarkerSet``: each marker's location carried into the frame of the body it is fixed to."""
        for el in self.sets("MarkerSet"):
            where = f"/markerset/{el.get('name')}"
            if el.tag != "Marker":
                self.unsupported(f"the marker type {el.tag} ({el.get('name')!r})", where)
                continue
            ref = el.findtext("socket_parent_frame") or el.findtext("body") or ""  # 4.x, or 3.x's body name
            frame = self.frame(ref, where)
            if frame.body == "ground":
                self.unsupported(f"the marker {el.get('name')!r} fixed on the ground", where)
                continue
            if not frame.X.rotation().IsExactlyIdentity():
                self.along_rotated_axes.append(f"the marker {el.get('name')}")
            self.builder.add_marker(el.get("name"), frame.body, frame.X @ _vec(el, "location"))

    def read(self) -> Model:
        self.bodies()
        self.joints()
        self.other_sets()
        self.forces()
        self.markers()
        if self.skipped:
            warnings.warn(f"{self.file.name}: skipped what moco_lab cannot represent: " + "; ".join(self.skipped),
                          stacklevel=3)
        model = self.builder.build()
        model.coordinates = [replace(c, clamped=True) if c.name in self.clamped else c
                             for c in model.coordinates]
        model.source_file = str(self.file)
        #: what the file places along a rotated offset frame's axes (OpenSim scales such lengths along those axes)
        model.along_rotated_axes = list(self.along_rotated_axes)
        return model


def _child(parent: ET.Element, tag: str, text: str | None = None, **attrib: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrib)
    if text is not None:
        el.text = text
    return el


def _joint_of(body: ET.Element) -> ET.Element | None:
    """The joint element a 3.x body owns (``<Joint><CustomJoint ...>``), None for the ground."""
    holder = body.find("Joint")
    return None if holder is None or len(holder) == 0 else holder[0]


def upgrade_v3(model: ET.Element, file_name: str = "model.osim") -> ET.Element:
    """An OpenSim 3.x ``<Model>`` rewritten in the 4.x layout the reader reads (as OpenSim 4 upgrades a file).

    3.x nests each body's joint in the body (``<Joint><CustomJoint>`` with ``parent_body``,
    ``location_in_parent``, ``orientation_in_parent`` in the parent and ``location``, ``orientation`` in the
    child; its coordinates in a ``<CoordinateSet>``), names ground as a body, and gives inertias as six
    ``inertia_xx`` ... ``inertia_yz`` elements. 4.x has a ``<JointSet>`` whose joints connect two
    ``PhysicalOffsetFrame`` elements (translation and body-fixed X-Y-Z orientation, the same conventions), a
    ``<Ground>``, and ``<inertia>`` as ``xx yy zz xy xz yz``. Forces, constraints and wrap objects keep their
    3.x form, which the reader also accepts (path points on ``<body>``, conditional points on ``<coordinate>``),
    except that a Millard muscle's ``min_control`` is raised to its minimum activation (default 0.01) as OpenSim
    4.6 reads it. A reversed joint (``<reverse>true``) is refused. OpenSim's own upgrade writes joint locations
    and inertias with 6 significant digits; this one keeps the file's digits (``tests/test_osim_opensim.py``
    measures the difference).
    """
    out = ET.Element("Model", {"name": model.get("name", "model")})
    for tag in ("gravity", "credits", "publications", "length_units", "force_units"):
        if model.find(tag) is not None:
            out.append(model.find(tag))
    _child(out, "Ground", name="ground")
    bodies = _child(_child(out, "BodySet", name="bodyset"), "objects")
    joints = _child(_child(out, "JointSet", name="jointset"), "objects")
    ground_names = set()
    for body in model.findall("BodySet/objects/Body"):
        name = body.get("name")
        joint_el = _joint_of(body)
        if joint_el is None:  # the ground (3.x names it as a body; it has no joint)
            ground_names.add(name)
            continue
        b = _child(bodies, "Body", name=name)
        _child(b, "mass", (body.findtext("mass") or "0").strip())
        _child(b, "mass_center", (body.findtext("mass_center") or "0 0 0").strip())
        _child(b, "inertia", " ".join((body.findtext(f"inertia_{k}") or "0").strip()
                                      for k in ("xx", "yy", "zz", "xy", "xz", "yz")))
        if body.find("WrapObjectSet") is not None:
            b.append(body.find("WrapObjectSet"))
    for body in model.findall("BodySet/objects/Body"):
        joint_el = _joint_of(body)
        if joint_el is None:
            continue
        child, jname = body.get("name"), joint_el.get("name")
        if _flag(joint_el, "reverse"):
            raise OsimFormatError(f"{file_name}: the 3.x joint {jname!r} of body {child!r} is reversed "
                                  "(<reverse>true); moco_lab reads parent-to-child joints")
        parent = (joint_el.findtext("parent_body") or "").strip()
        j = _child(joints, joint_el.tag, name=jname)
        _child(j, "socket_parent_frame", f"{parent}_offset")
        _child(j, "socket_child_frame", f"{child}_offset")
        coords = _child(j, "coordinates")
        for c in joint_el.findall("CoordinateSet/objects/Coordinate"):
            coords.append(c)
        if joint_el.find("SpatialTransform") is not None:
            j.append(joint_el.find("SpatialTransform"))
        frames = _child(j, "frames")
        for fname, owner, loc, ori in ((f"{parent}_offset", parent, "location_in_parent", "orientation_in_parent"),
                                       (f"{child}_offset", child, "location", "orientation")):
            f = _child(frames, "PhysicalOffsetFrame", name=fname)
            _child(f, "socket_parent", "/ground" if owner in ground_names else f"/bodyset/{owner}")
            _child(f, "translation", (joint_el.findtext(loc) or "0 0 0").strip())
            _child(f, "orientation", (joint_el.findtext(ori) or "0 0 0").strip())
    for tag in ("ConstraintSet", "ForceSet", "ContactGeometrySet", "MarkerSet", "defaults"):
        for el in model.findall(tag):
            out.append(el)
    # A 3.x Millard muscle has no minimum_activation; OpenSim 4.6 gives it the default 0.01 and reads its
    # min_control as at least that (measured on walk_gait1018_subject01.osim: 0 in the file, 0.01 in OpenSim).
    for el in out.findall("ForceSet/objects/Millard2012EquilibriumMuscle"):
        minimum = float(_num(el, "minimum_activation", 0.01))
        if el.find("min_control") is None:
            _child(el, "min_control", repr(minimum))
        elif float(_num(el, "min_control", 0.0)) < minimum:
            el.find("min_control").text = repr(minimum)
    return out


def degroote_from_millard(el: ET.Element, default: ET.Element | None = None) -> DeGrooteFregly2016Muscle:
    """A DeGrooteFregly2016Muscle from a Millard2012EquilibriumMuscle element, by Moco's rules.

    As OpenSim's ``DeGrooteFregly2016Muscle::replaceMuscles``: default activation, activation and
    deactivation time constants, fiber damping, the passive fiber strain at one norm force (from the
    ``FiberForceLengthCurve``), the tendon strain at one norm force (``TendonForceLengthCurve``), maximum
    isometric force, optimal fiber length, tendon slack length, pennation at optimal fiber length, maximum
    contraction velocity, ``ignore_tendon_compliance``, ``ignore_activation_dynamics`` and the control
    bounds are copied; everything else takes the DeGrooteFregly2016Muscle's defaults. A property the element
    omits takes the document's ``<defaults>`` value for the type (``default``), else OpenSim's class default
    (:data:`MILLARD_DEFAULTS`).
    """
    def value(path: str) -> float:
        for source in (el, default):
            if source is not None and (text := source.findtext(path)) is not None and text.strip():
                return float(text)
        return MILLARD_DEFAULTS[path]

    def flag(tag: str) -> bool:
        for source in (el, default):
            if source is not None and source.find(tag) is not None:
                return _flag(source, tag)
        return False

    copied = ("default_activation", "activation_time_constant", "deactivation_time_constant", "fiber_damping",
              "max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
              "max_contraction_velocity", "min_control", "max_control")
    return DeGrooteFregly2016Muscle(
        el.get("name"), **{k: value(k) for k in copied},
        passive_fiber_strain_at_one_norm_force=value("FiberForceLengthCurve/strain_at_one_norm_force"),
        tendon_strain_at_one_norm_force=value("TendonForceLengthCurve/strain_at_one_norm_force"),
        ignore_tendon_compliance=flag("ignore_tendon_compliance"),
        ignore_activation_dynamics=flag("ignore_activation_dynamics"))


def read_osim(path: str | Path, *, skip_unsupported: bool = False, replace_millard: bool = False,
              weld: Sequence[str] = (), unlock: Sequence[str] = (), side_files: Sequence[str | Path] = (),
              wrap_method: str = "shortest") -> Model:
    """Read an OpenSim model file (``.osim``, 4.x, or 3.x upgraded as read: :func:`upgrade_v3`) into a moco_lab
    :class:`Model` on a ``MultibodyPlant``.

    Parameters
    ----------
    path : str or Path
        The ``.osim`` file. Files the project ships are found by name too (see
        :func:`moco_lab.util.data.opensim_file`).
    skip_unsupported : bool
        False (default): anything the reader cannot represent faithfully raises
        :class:`OsimFormatError` naming the element and where it is. True: such elements
        are left out, with one warning that lists them all.
    replace_millard : bool
        Replace every ``Millard2012EquilibriumMuscle`` by a ``DeGrooteFregly2016Muscle`` the way
        Moco's ``ModOpReplaceMusclesWithDeGrooteFregly2016`` does (:func:`degroote_from_millard`).
    weld : sequence of str
        Joints (by name) to replace by welds whose joint frames coincide — Moco's
        ``ModOpReplaceJointsWithWelds``; their coordinates are gone from the model.
    unlock : sequence of str
        Coordinates (by name) to read as free although the file locks them. A locked coordinate of a
        one-coordinate joint is otherwise held at its default value: the joint becomes a weld in that pose.
    side_files : sequence of str or Path
        OpenSim files of sets to add, as Moco's example3DWalking adds them (files the project ships are found by
        name): a ``ContactGeometrySet``'s geometry to the model's, a ``ForceSet``'s forces as components of the model
        (paths ``/<name>``), e.g. ``subject_walk_scaled_ContactGeometrySet.xml``,
        ``..._ContactForceSet.xml`` and ``..._ExpressionBasedCoordinateForceSet.xml``.
    wrap_method : str
        How muscle paths wrap over the file's ``WrapCylinder``s: ``"shortest"`` (default) the shortest path over
        each cylinder, smooth while the wrap holds; ``"opensim"`` OpenSim 4.6's own tangent-point construction, so
        that lengths and moment arms are OpenSim's (see :class:`~moco_lab.modeling.wrapping.WrapCylinder`).

    Returns
    -------
    Model
        States and controls named by OpenSim's paths (``model.state_names()``).

    Examples
    --------
    >>> model = ml.read_osim("2D_gait.osim")           # doctest: +SKIP
    >>> model.coordinate("knee_angle_r").path           # doctest: +SKIP
    '/jointset/knee_r/knee_angle_r'
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"read_osim: path must be a file path (or the name of a shipped model), got "
                        f"{type(path).__name__}")
    for label, names in (("weld", weld), ("unlock", unlock)):
        if isinstance(names, (str, bytes)):
            raise TypeError(f"read_osim: {label} must be a list of {'joint' if label == 'weld' else 'coordinate'} "
                            f"names, got the string {names!r} (one name: [{names!r}])")
    if isinstance(side_files, (str, bytes, os.PathLike)):
        raise TypeError(f"read_osim: side_files must be a list of files, got {side_files!r} (one file: [{side_files!r}])")
    p = _locate(path)
    sides = [_locate(f) for f in side_files]
    if wrap_method not in WRAP_METHODS:
        raise ValueError(f"read_osim: wrap_method {wrap_method!r} is not one of {WRAP_METHODS}")
    model = _Reader(p, skip_unsupported, replace_millard, weld=weld, unlock=unlock, side_files=sides,
                    wrap_method=wrap_method).read()
    # the recipe a study file records: the file as named (a shipped file by its name), and its content's hash
    shipped = p.parent == OPENSIM_DIR
    model.spec = {"factory": "read_osim", "kwargs": {
        "path": p.name if shipped else str(p), "skip_unsupported": bool(skip_unsupported),
        "replace_millard": bool(replace_millard), "sha256": file_sha256(p)}}
    if weld or unlock:
        model.spec["kwargs"].update(weld=sorted(weld), unlock=sorted(unlock))
    if wrap_method != "shortest":
        model.spec["kwargs"]["wrap_method"] = wrap_method
    if sides:
        model.spec["kwargs"]["side_files"] = [f.name if f.parent == OPENSIM_DIR else str(f) for f in sides]
    return model


def read_osim_string(text: str, name: str = "model.osim", *, skip_unsupported: bool = False,
                     replace_millard: bool = False, weld: Sequence[str] = (), unlock: Sequence[str] = ()) -> Model:
    """Read a model from the text of an ``.osim`` file (``name`` is used in messages); see :func:`read_osim`.

    The model has no recipe (``model.spec`` is None): a factory that builds models this way sets its own.
    """
    return _Reader(Path(name), skip_unsupported, replace_millard, text=text, weld=weld, unlock=unlock).read()


def model_from_file(path: str, skip_unsupported: bool = False, sha256: str | None = None,
                    replace_millard: bool = False, weld: Sequence[str] = (), unlock: Sequence[str] = (),
                    side_files: Sequence[str] = (), wrap_method: str = "shortest") -> Model:
    """Read a model file again for a study file's recipe; ``ValueError`` if its content changed since.

    Parameters
    ----------
    path : str
        The file (a shipped file by its name).
    skip_unsupported, replace_millard : bool
        As for :func:`read_osim`.
    weld, unlock, side_files : sequence of str
        As for :func:`read_osim`.
    wrap_method : str
        As for :func:`read_osim`.
    sha256 : str, optional
        The SHA-256 of the file when the study was saved.
    """
    p = _locate(path)
    if sha256 is not None and file_sha256(p) != sha256:
        raise ValueError(f"The model file {str(p)!r} changed since it was read for this study (its SHA-256 "
                         "differs from the one recorded then): the study would not be the same problem. Restore "
                         "the file, or read it again (ml.read_osim) and pose the study on it.")
    return read_osim(p, skip_unsupported=skip_unsupported, replace_millard=replace_millard, weld=weld, unlock=unlock,
                     side_files=side_files, wrap_method=wrap_method)


def _locate(path: str | Path) -> Path:
    p = Path(path)
    return p if p.exists() else opensim_file(str(path))


