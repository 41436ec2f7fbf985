"""Models: a pydrake ``MultibodyPlant`` with Moco-style names.

A :class:`Model` wraps a finalized, continuous-time (``time_step = 0``)
``MultibodyPlant`` and adds what OpenSim models have and Drake plants lack:

* **path names** for coordinates, e.g. ``/jointset/j0/q0`` whose state
  variables are ``/jointset/j0/q0/value`` and ``/jointset/j0/q0/speed``;
* **force elements that read controls or coordinates**: coordinate actuators
  (generalized force = ``optimal_force * control``) and OpenSim's
  ``SpringGeneralizedForce`` (``-stiffness (q - rest_length) - viscosity u``);
* **properties** that can become optimization parameters
  (``/bodyset/b/mass``, ``/forceset/spring/viscosity``, ...).

State vector ordering (used everywhere in moco_lab): ``y = [q, u]`` with the
coordinates in Drake's position order, values first, then speeds.  Controls are
ordered as :attr:`Model.actuators`.

Build models with :class:`ModelBuilder` (or the factories in
:mod:`moco_lab.models`), or wrap your own plant with :meth:`Model.from_plant`.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from pydrake.math import RigidTransform
from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import (
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    RigidBody,
    RotationalInertia,
    SpatialInertia,
    WeldJoint,
)

from ..util.names import did_you_mean
from .constraints import KinematicConstraint
from .forces import CoordinateActuator, ForceElement, PathMuscle, SpringGeneralizedForce
from .markers import Marker
from .path import GeometryPath
from .tree import Tree, read_tree

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from .joints import CustomTransform
    from .muscle import DeGrooteFregly2016Muscle

GRAVITY = 9.80665  #: OpenSim's standard gravity (m/s^2)


@dataclass
class Coordinate:
    """A generalized coordinate of the model (one Drake position and velocity).

    Attributes
    ----------
    name : str
        Coordinate name, e.g. ``"q0"``.
    joint_path : str
        Path of the joint holding it, e.g. ``"/jointset/j0"``.
    q_index, v_index : int
        Index in Drake's position and velocity vectors.
    range : tuple of float
        ``(lower, upper)`` used as default bounds of the ``value`` state.
    clamped : bool
        OpenSim's ``clamped``: the range also bounds the coordinate in inverse kinematics (OpenSim's assembler
        restricts a clamped coordinate to its range; :func:`moco_lab.tools.marker_ik.inverse_kinematics` does too).
    """

    name: str
    joint_path: str
    q_index: int
    v_index: int
    range: tuple[float, float] = (-np.inf, np.inf)
    clamped: bool = False

    @property
    def path(self) -> str:
        """``<joint path>/<name>``, e.g. ``/jointset/knee/knee_angle``."""
        return f"{self.joint_path}/{self.name}"

    @property
    def value_path(self) -> str:
        """State name of the coordinate's value."""
        return f"{self.path}/value"

    @property
    def speed_path(self) -> str:
        """State name of the coordinate's speed."""
        return f"{self.path}/speed"

    @property
    def accel_path(self) -> str:
        """Name of the coordinate's acceleration (implicit-mode derivative)."""
        return f"{self.path}/accel"


@dataclass
class Property:
    """A model property that a problem may turn into an optimization parameter.

    Attributes
    ----------
    path : str
        ``<body path>/mass``, ``<body path>/mass_scale`` or ``<force element path>/<property>``.
    kind : str
        ``"body_mass"`` (inertia kept), ``"body_scale"`` (mass and inertia scaled) or ``"force"`` (a force
        element's property).
    target : str
        Drake body name, or force element path.
    attribute : str
        ``"mass"``, ``"mass_scale"`` or the element's property name.
    default : float
        The current value.
    """

    path: str
    kind: str
    target: str
    attribute: str
    default: float


class Model:
    """A continuous ``MultibodyPlant`` plus Moco-style names and force elements.

    Parameters
    ----------
    plant : MultibodyPlant
        Finalized, continuous (``time_step == 0``) plant. Passed through
        unchanged and available as :attr:`plant`.
    coordinates : list of Coordinate
        One per Drake velocity, in Drake order. Use :meth:`from_plant` to name
        them automatically.
    actuators : list of CoordinateActuator, optional
    forces : list of SpringGeneralizedForce, optional
    body_paths : dict, optional
        Drake body name -> OpenSim-style path (default ``/bodyset/<name>``).
    name : str
    spec : dict, optional
        ``{"factory": name, "kwargs": {...}}`` when built by a factory of
        :mod:`moco_lab.models`; used to save and reload studies.
    muscles, constraints, elements : list, optional
        Path muscles, kinematic constraints, other force elements.
    custom_joints : dict, optional
        Joint name -> exact transform of one-coordinate custom joints the plant holds as carriers.
    frame_bodies : sequence of str, optional
        Massless plant bodies that only connect the joints of a multi-coordinate joint
        (:meth:`ModelBuilder.add_joint_chain`); left out of :attr:`body_paths`.
    markers : sequence of Marker, optional
        Points fixed on bodies (OpenSim's ``MarkerSet``), by name in :attr:`markers`.
    """

    def __init__(
                 self,
                 plant: MultibodyPlant,
                 coordinates: list[Coordinate],
                 actuators: list[CoordinateActuator] | None = None,
                 forces: list[SpringGeneralizedForce] | None = None,
                 body_paths: dict[str, str] | None = None,
                 name: str = "model",
                 spec: dict | None = None,
                 muscles: list[PathMuscle] | None = None,
                 constraints: list | None = None,
                 elements: list[ForceElement] | None = None,
                 custom_joints: dict | None = None,
                 frame_bodies: Sequence[str] = (),
                 markers: Sequence[Marker] = (),
                 ):
        if not plant.is_finalized():
            raise ValueError("The MultibodyPlant must be finalized (call plant.Finalize()).")
        if plant.time_step() != 0:
            raise ValueError(
                f"moco_lab needs a continuous MultibodyPlant (time_step=0); got time_step={plant.time_step()}."
            )
        if plant.num_positions() != plant.num_velocities():
            raise ValueError(
                "moco_lab supports plants whose positions and velocities correspond one to one "
                f"(nq == nv); this plant has nq={plant.num_positions()}, nv={plant.num_velocities()} "
                "(quaternion floating joints are not supported: use planar joints or chains of pin joints)."
            )
        self.plant = plant
        self.name = name
        self.spec = spec
        #: Joint name -> exact :class:`~moco_lab.modeling.joints.CustomTransform` of joints the plant
        #: holds as revolute carriers (OpenSim ``CustomJoint``s with function-valued axes).
        self.custom_joints: dict = dict(custom_joints or {})
        for jname in self.custom_joints:
            if not plant.HasJointNamed(jname):
                raise ValueError(f"custom joint {jname!r} is not a joint of the plant")
        self.coordinates = sorted(coordinates, key=lambda c: c.q_index)
        if [c.q_index for c in self.coordinates] != list(range(plant.num_positions())):
            raise ValueError("coordinates must name every Drake position exactly once")
        #: Massless bodies between the one-coordinate joints of a multi-coordinate joint
        #: (:meth:`ModelBuilder.add_joint_chain`): frames of the mechanism, not bodies of the model.
        self.frame_bodies: list[str] = list(frame_bodies)
        for bname in self.frame_bodies:
            if not plant.HasBodyNamed(bname) or plant.GetBodyByName(bname).default_mass() != 0.0:
                raise ValueError(f"frame body {bname!r} is not a massless body of the plant")
        self.body_paths = {}
        for i in range(plant.num_bodies()):
            body = plant.get_body(_body_index(i))
            if body.index() == plant.world_body().index() or body.name() in ("world", *self.frame_bodies):
                continue
            default = f"/bodyset/{body.name()}"
            self.body_paths[body.name()] = (body_paths or {}).get(body.name(), default)
        #: Coordinate actuators (controls first, in this order).
        self.actuators: list[CoordinateActuator] = []
        #: Springs on coordinates (``SpringGeneralizedForce``).
        self.forces: list[SpringGeneralizedForce] = []
        #: Muscles on paths (their excitations follow the actuators' controls).
        self.muscles: list[PathMuscle] = []
        #: Every other force element (contact, passive moments, ...), in the order added.
        self.elements: list[ForceElement] = []
        for element in [*(actuators or []), *(forces or []), *(muscles or []), *(elements or [])]:
            self.add_force_element(element)
        #: Kinematic constraints (:mod:`moco_lab.modeling.constraints`), OpenSim's ``ConstraintSet``.
        self.constraints = []
        self._derived: dict[str, dict] = {}  # see derived()
        for constraint in constraints or []:
            self.add_constraint(constraint)
        #: Markers (OpenSim's ``MarkerSet``) by name, in the file's order.
        self.markers: dict[str, Marker] = {}
        for marker in markers:
            if not isinstance(marker, Marker):
                raise TypeError(f"markers must be Marker objects, got {type(marker).__name__}")
            if marker.name in self.markers:
                raise ValueError(f"two markers are named {marker.name!r}")
            if marker.body not in self.body_paths:
                raise ValueError(f"marker {marker.name!r}: " + did_you_mean(marker.body, list(self.body_paths), "body"))
            self.markers[marker.name] = marker

    # ---------------------------------------------------------- force elements
    @property
    def force_elements(self) -> list[ForceElement]:
        """All force elements: actuators, springs, muscles, then the others (variable order)."""
        return [*self.actuators, *self.forces, *self.muscles, *self.elements]

    def add_force_element(self, element: ForceElement) -> ForceElement:
        """Add a force element (any :class:`~moco_lab.modeling.forces.ForceElement`); returns it.

        The coordinates and bodies it names are checked (``KeyError`` with
        suggestions); its path must be new. Works after a solve too: compiled
        dynamics are keyed on the model's equations, so the next solve uses
        the new element.
        """
        if not isinstance(element, ForceElement):
            raise TypeError(f"Expected a moco_lab force element, got {type(element).__name__}")
        coord_names = [c.name for c in self.coordinates] + [c.path for c in self.coordinates]
        for c in element.coordinate_names():
            if c not in coord_names:
                raise ValueError(f"{element.path}: " + did_you_mean(c, [k.name for k in self.coordinates],
                                                                     "coordinate"))
        bodies = ["ground", "world", *self.body_paths, *self.body_paths.values()]
        for b in element.body_names():
            if b not in bodies:
                raise KeyError(f"{element.path}: " + did_you_mean(b, ["ground", *self.body_paths], "body"))
        if isinstance(element, PathMuscle):
            element.geometry.check(self.plant)
        if any(e.path == element.path for e in self.force_elements):
            raise ValueError(f"Duplicate force element paths: ['{element.path}']")
        if isinstance(element, CoordinateActuator):
            self.actuators.append(element)
        elif isinstance(element, SpringGeneralizedForce):
            self.forces.append(element)
        elif isinstance(element, PathMuscle):
            self.muscles.append(element)
        else:
            self.elements.append(element)
        return element

    # ------------------------------------------------------------------ names
    @property
    def nq(self) -> int:
        """Number of generalized coordinates."""
        return self.plant.num_positions()

    @property
    def num_states(self) -> int:
        """Number of states: values, speeds and force elements' states."""
        return 2 * self.nq + len(self.auxiliary_state_names())

    @property
    def num_controls(self) -> int:
        """Number of controls."""
        return len(self.control_names())

    def implicit_derivative_names(self) -> list[str]:
        """Algebraic variables with residuals (e.g. implicit tendon dynamics), in force-element order."""
        return [n for e in self.force_elements for n in e.implicit_derivative_names()]

    def input_names(self) -> list[str]:
        """Time-dependent inputs of the force elements (e.g. the columns of applied external loads), in order."""
        return [n for e in self.force_elements for n in e.input_names()]

    def input_values(self, time: ArrayLike) -> np.ndarray:
        """The force elements' inputs at ``time``: array ``(n, len(input_names()))``, columns in
        :meth:`input_names` order."""
        t = np.atleast_1d(np.asarray(time, float))
        out = np.zeros((t.size, 0))
        blocks = []
        for e in self.force_elements:
            names = e.input_names()
            if names:
                values = e.input_values(t)
                blocks.append(np.column_stack([np.asarray(values[n], float).reshape(t.size) for n in names]))
        return np.hstack(blocks) if blocks else out

    def auxiliary_state_names(self) -> list[str]:
        """Force elements' states (muscle activation, normalized tendon force, ...), after the speeds."""
        return [n for e in self.force_elements for n in e.state_names()]

    def state_names(self) -> list[str]:
        """State paths: ``[values..., speeds..., muscle states...]`` (Drake coordinate order)."""
        return ([c.value_path for c in self.coordinates] + [c.speed_path for c in self.coordinates]
                + self.auxiliary_state_names())

    def control_names(self) -> list[str]:
        """Control paths: coordinate actuators (:attr:`actuators`), muscle excitations, other elements' controls."""
        return [n for e in self.force_elements for n in e.control_names()]

    def _owner(self, name: str, kind: str) -> ForceElement | None:
        for e in self.force_elements:
            if name in getattr(e, kind)():
                return e
        return None

    def default_control_bounds(self, name: str) -> tuple[float, float]:
        """Control limits of the actuator, muscle or element control named ``name``."""
        owner = self._owner(name, "control_names")
        if owner is None:
            raise KeyError(did_you_mean(name, self.control_names(), "control"))
        return tuple(owner.default_control_bounds(name))

    def default_state_value(self, name: str) -> float:
        """The value a state starts from when nothing else is given: 0 for coordinates and speeds, the element's
        default for its own states (e.g. a gait2d muscle's fiber length with a slack tendon)."""
        if any(name in (c.value_path, c.speed_path) for c in self.coordinates):
            return 0.0
        owner = self._owner(name, "state_names")
        if owner is None:
            raise KeyError(did_you_mean(name, self.state_names(), "state"))
        return float(owner.default_state_value(name))

    def default_state_bounds(self, name: str) -> tuple[float, float]:
        """Moco's defaults: coordinate range, speeds [-50, 50]; element states from their element
        (activation [0, 1], normalized tendon force [0, 5])."""
        for c in self.coordinates:
            if name == c.value_path:
                return c.range
            if name == c.speed_path:
                return (-50.0, 50.0)
        owner = self._owner(name, "state_names")
        if owner is None:
            raise KeyError(did_you_mean(name, self.state_names(), "state"))
        return tuple(owner.default_state_bounds(name))

    def implicit_derivative_bounds(self, name: str) -> tuple[float, float]:
        """Bounds of an implicit derivative variable (Moco's ``implicit_auxiliary_derivative_bounds``)."""
        owner = self._owner(name, "implicit_derivative_names")
        if owner is None:
            raise KeyError(did_you_mean(name, self.implicit_derivative_names(), "implicit derivative"))
        return tuple(owner.implicit_derivative_bounds(name))

    def accel_names(self) -> list[str]:
        """Names of the generalized accelerations (implicit dynamics mode)."""
        return [c.accel_path for c in self.coordinates]

    def coordinate(self, name: str) -> Coordinate:
        """Look up a coordinate by name or path."""
        for c in self.coordinates:
            if name in (c.name, c.path):
                return c
        raise KeyError(did_you_mean(name, [c.path for c in self.coordinates], "coordinate"))

    def joint_centre(self, coordinate: str) -> tuple[str, tuple[float, float, float]]:
        """Where the joint of ``coordinate`` sits: ``(parent body, location in its frame)``.

        The parent body is ``"ground"`` for a joint on the world; the location
        is the origin of the joint's frame on the parent (m). For a joint of several coordinates held as a chain
        (:meth:`ModelBuilder.add_joint_chain`), the chain's first joint: the OpenSim joint's parent frame.
        """
        joint = self._drake_joint(self.coordinate(coordinate))
        while joint.frame_on_parent().body().name() in self.frame_bodies:  # up the chain to its first joint
            inboard = joint.frame_on_parent().body()
            joint = next(self.plant.get_joint(ji) for ji in self.plant.GetJointIndices()
                         if self.plant.get_joint(ji).child_body().index() == inboard.index())
        frame = joint.frame_on_parent()
        body = frame.body()
        name = "ground" if body.index() == self.plant.world_body().index() else body.name()
        return name, tuple(float(v) for v in frame.GetFixedPoseInBodyFrame().translation())

    def coordinate_motion(self, coordinate: str | Coordinate) -> str:
        """``"rotational"`` or ``"translational"``: how the coordinate (name, path or Coordinate) moves its joint
        (OpenSim's motion type), read from the kinematic tree: a revolute joint's coordinate and a planar joint's
        angle rotate, and so does a custom joint's coordinate when a rotation of the joint depends on it (the knee:
        a rotation with translations that follow it; the patella); a prismatic joint's coordinate and a planar
        joint's x and y translate."""
        c = coordinate if isinstance(coordinate, Coordinate) else self.coordinate(coordinate)
        kinds = self.derived("coordinate_motion")
        if not kinds:
            for j in self.tree().joints:
                rotates = j.type == "custom" and any(not f.is_constant() for _, f in j.transform.rotations)
                for k in range(j.num_q):
                    kinds[j.q_start + k] = ("rotational" if j.type == "revolute" or (j.type == "planar" and k == 2)
                                            or rotates else "translational")
        return kinds[c.q_index]

    def _drake_joint(self, c: Coordinate):
        for ji in self.plant.GetJointIndices():
            joint = self.plant.get_joint(ji)
            if joint.num_positions() and joint.position_start() <= c.q_index < joint.position_start() + joint.num_positions():
                return joint
        raise KeyError(f"No joint holds coordinate {c.path}")  # pragma: no cover - every coordinate has a joint

    def force_element(self, path: str) -> ForceElement:
        """The force element with this path (or name)."""
        for e in self.force_elements:
            if path in (e.path, e.name):
                return e
        raise KeyError(did_you_mean(path, [e.path for e in self.force_elements], "force element"))

    # ------------------------------------------------------------ constraints
    def add_constraint(self, constraint: KinematicConstraint) -> KinematicConstraint:
        """Add a kinematic constraint (:class:`~moco_lab.constraints.KinematicConstraint`).

        Its coordinate and body names are checked (``KeyError`` with
        suggestions) and resolved against this model.
        """
        if not isinstance(constraint, KinematicConstraint):
            raise TypeError(f"Expected a moco_lab.constraints.KinematicConstraint, got {type(constraint).__name__}")
        if any(c.name == constraint.name for c in self.constraints):
            raise ValueError(f"Duplicate constraint name {constraint.name!r}")
        constraint.bind(self)
        self.constraints.append(constraint)
        self._derived.clear()  # e.g. the symbolic derivatives of the old constraint set
        return constraint

    def derived(self, name: str) -> dict:
        """A dictionary kept with this model for what other modules derive from it and reuse (``name`` tells
        them apart): plants of other scalar types, Drake contexts, symbolic derivatives. Emptied whenever the
        model changes (:meth:`add_constraint`), so nothing derived from an older model is used."""
        return self._derived.setdefault(name, {})

    def multiplier_names(self) -> list[str]:
        """Lagrange multiplier paths ``/constraintset/<name>/lambda_<i>``, in :attr:`constraints` order."""
        return [n for c in self.constraints for n in c.multiplier_names()]

    # ------------------------------------------------------------- properties
    def properties(self) -> dict[str, Property]:
        """Properties that can be optimized as time-invariant parameters, by path.

        Body masses (``<body path>/mass``, OpenSim's property: the rotational inertia about the centre of mass
        is kept, as OpenSim's ``Body::setMass`` and Moco's mass parameters keep it), for each body with mass
        ``<body path>/mass_scale`` (moco_lab's own, default 1: a factor of the body's mass and rotational
        inertia together, the centre of mass where it is — the same body made denser, as Drake's ``SetMass``
        scales it and as residual reduction adjusts segments) and every force element's
        properties (``<element path>/<property>``, e.g.
        ``/forceset/spring/stiffness``, ``/forceset/vasti/max_isometric_force``).
        """
        props: dict[str, Property] = {}
        for bname, bpath in self.body_paths.items():
            body = self.plant.GetBodyByName(bname)
            mass = float(body.default_mass())
            props[f"{bpath}/mass"] = Property(f"{bpath}/mass", "body_mass", bname, "mass", mass)
            if mass > 0:
                props[f"{bpath}/mass_scale"] = Property(f"{bpath}/mass_scale", "body_scale", bname, "mass_scale", 1.0)
        for e in self.force_elements:
            for attr, value in e.properties().items():
                props[f"{e.path}/{attr}"] = Property(f"{e.path}/{attr}", "force", e.path, attr, float(value))
        return props

    def property(self, path: str) -> Property:
        """One optimizable property by path (KeyError with suggestions)."""
        props = self.properties()
        if path not in props:
            raise KeyError(did_you_mean(path, props, "model property"))
        return props[path]

    def set_property(self, path: str, value: float) -> None:
        """Change a property by path (a body's mass or a force element's property)."""
        prop = self.property(path)
        if prop.kind in ("body_mass", "body_scale"):
            raise ValueError(f"{path}: a body's mass is part of the MultibodyPlant, which is finalized; build the "
                             "model with the new mass, or optimize it as a parameter (problem.add_parameter)")
        self.force_element(prop.target).set_property(prop.attribute, float(value))

    # ------------------------------------------------------------ mechanics
    def tree(self) -> Tree:
        """The kinematic tree the engine derives: the plant's, with the exact transforms of custom joints."""
        return read_tree(self.plant, self.custom_joints)

    def skeleton(self, *, elements: bool = False, constraints: bool = True) -> "Model":
        """The same plant, coordinates, bodies and markers without muscles and actuators: what kinematics, inverse
        dynamics and the centre of mass need, whose equations derive in a fraction of the time the muscles' paths
        take. ``elements`` keeps the springs and the other force elements (external loads, contact, ...);
        ``constraints`` keeps the kinematic constraints (copies, bound to the new model)."""
        return Model(self.plant, self.coordinates, [], list(self.forces) if elements else [], dict(self.body_paths),
                     name=self.name, spec=None, elements=list(self.elements) if elements else None,
                     constraints=[copy.copy(c) for c in self.constraints] if constraints else None,
                     custom_joints=self.custom_joints, frame_bodies=self.frame_bodies,
                     markers=list(self.markers.values()))

    def joint_paths(self) -> dict[str, list[str]]:
        """OpenSim joint path (``/jointset/<name>``) -> the names of the plant joints that make it: one, or the
        chain of a multi-coordinate joint (:meth:`ModelBuilder.add_joint_chain`), in the plant's order."""
        plant = self.plant
        by_q = {c.q_index: c.joint_path for c in self.coordinates}
        out: dict[str, list[str]] = {}
        for index in plant.GetJointIndices():
            joint = plant.get_joint(index)
            path = by_q[joint.position_start()] if joint.num_positions() else f"/jointset/{joint.name()}"
            out.setdefault(path, []).append(joint.name())
        return out

    def body_weight(self) -> float:
        """The model's weight m g (N): its bodies' total mass times the magnitude of the plant's gravity."""
        tree = self.tree()
        return float(sum(b.mass for b in tree.bodies.values()) * np.linalg.norm(tree.gravity))

    def require_drake_kinematics(self, what: str) -> None:
        """Raise if the plant's own kinematics differ from the model's (custom joints), naming ``what`` needs them."""
        if self.custom_joints:
            raise NotImplementedError(
                f"{what} uses Drake's kinematics of the plant, but the joints {sorted(self.custom_joints)} of model "
                f"{self.name!r} are OpenSim CustomJoints whose translations/rotations are functions of their "
                "coordinate; the plant holds only a revolute carrier for each. Use the engine-based tools "
                "(moco_lab.analysis.pose, compiled_moment_arms, the collocation solvers) for this model.")

    # ------------------------------------------------------------ description
    def description(self) -> dict:
        """Everything that determines the model's equations, as plain data (JSON-ready).

        The plant's bodies (mass, centre of mass, inertia), joints (type, frames, axes, damping),
        gravity, the coordinates' names and ranges, every force element's description and the
        constraints. Two models with equal descriptions have equal equations; :meth:`Study.save`
        uses it to tell whether a model was edited after its factory built it.
        """
        try:
            tree = self.tree()
            bodies = {b.name: [b.mass, b.com.tolist(), b.inertia_com.tolist()] for b in tree.bodies.values()}
            joints = [[j.name, j.type, j.parent, j.child, j.R_PF.tolist(), j.p_PF.tolist(), j.R_CM.tolist(),
                       j.p_CM.tolist(), j.axis.tolist(), j.damping.tolist()]
                      + ([j.transform.description()] if j.transform is not None else []) for j in tree.joints]
            gravity = tree.gravity.tolist()
        except NotImplementedError as err:  # a plant the engine cannot derive: describe what can be read
            bodies, joints, gravity = {}, [str(err)], []
        return {
            "bodies": bodies, "joints": joints, "gravity": gravity,
            "coordinates": [[c.name, c.joint_path, c.q_index, list(c.range)] for c in self.coordinates],
            "force_elements": [e.description() for e in self.force_elements],
            "constraints": [c.description() for c in self.constraints],
            "body_paths": dict(self.body_paths),
        }

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_plant(cls, plant: MultibodyPlant, name: str = "model", actuators_from_plant: bool = True) -> "Model":
        """Wrap a user's own finalized continuous ``MultibodyPlant``.

        Coordinates are named from Drake joints: a one-dof joint ``J`` gives
        coordinate ``/jointset/J/J``; a multi-dof joint gives
        ``/jointset/J/J_<suffix>`` using Drake's position suffixes. Each Drake
        ``JointActuator`` ``A`` on a one-dof joint becomes a coordinate actuator
        ``/forceset/A`` (optimal force 1, control bounds from its effort limit).
        Joint position limits become coordinate ranges.
        """
        coords = []
        for ji in plant.GetJointIndices():
            joint = plant.get_joint(ji)
            if joint.num_positions() == 0:
                continue
            lower = joint.position_lower_limits()
            upper = joint.position_upper_limits()
            for k in range(joint.num_positions()):
                cname = joint.name() if joint.num_positions() == 1 else f"{joint.name()}_{joint.position_suffix(k)}"
                coords.append(
                    Coordinate(
                        cname,
                        f"/jointset/{joint.name()}",
                        joint.position_start() + k,
                        joint.velocity_start() + k,
                        (float(lower[k]), float(upper[k])),
                    )
                )
        actuators = []
        if actuators_from_plant:
            for ai in plant.GetJointActuatorIndices():
                act = plant.get_joint_actuator(ai)
                joint = act.joint()
                if joint.num_velocities() != 1:
                    raise ValueError(f"Actuator {act.name()!r} acts on a multi-dof joint; not supported.")
                cname = joint.name()
                limit = act.effort_limit()
                actuators.append(CoordinateActuator(f"/forceset/{act.name()}", cname, 1.0, -limit, limit))
        return cls(plant, coords, actuators, [], name=name)

    def __repr__(self) -> str:
        def count(n: int, what: str) -> str:
            return f"{n} {what}" + ("" if n == 1 else "s")

        return (
            f"<moco_lab.Model {self.name!r}: {count(self.nq, 'coordinate')}, {count(len(self.actuators), 'actuator')}, "
            f"{count(len(self.muscles), 'muscle')}, {count(len(self.forces) + len(self.elements), 'other force element')}, "
            f"{count(len(self.constraints), 'constraint')}>"
        )


def require_model(value: object, who: str) -> Model:
    """``value`` if it is a :class:`Model`; a ``TypeError`` naming ``who`` (the function) otherwise, before any
    attribute of it is used (a path or an OpenSim model given instead)."""
    if not isinstance(value, Model):
        hint = " (read a file with ml.read_osim(path))" if isinstance(value, str) else ""
        raise TypeError(f"{who}: model must be a moco_lab Model, got {type(value).__name__}{hint}")
    return value


def _body_index(i: int):
    from pydrake.multibody.tree import BodyIndex

    return BodyIndex(i)


class ModelBuilder:
    """A small model-building layer over ``MultibodyPlant`` with OpenSim names.

    Examples
    --------
    >>> b = ModelBuilder("slider", gravity=(0, 0, 0))
    >>> b.add_body("body", mass=2.0)
    >>> b.add_slider_joint("slider", "ground", "body", axis=(1, 0, 0), coordinate="position", path="/slider")
    >>> b.add_coordinate_actuator("/actuator", "position")
    >>> model = b.build()
    >>> model.state_names()
    ['/slider/position/value', '/slider/position/speed']
    """

    def __init__(self, name: str = "model", gravity: ArrayLike = (0.0, -GRAVITY, 0.0)):
        self.name = name
        self.plant = MultibodyPlant(0.0)
        self.plant.mutable_gravity_field().set_gravity_vector(np.asarray(gravity, dtype=float))
        self._coords: list[tuple[str, str, object, tuple[float, float]]] = []
        self._actuators: list[CoordinateActuator] = []
        self._forces: list[SpringGeneralizedForce] = []
        self._muscles: list[PathMuscle] = []
        self._elements: list[ForceElement] = []
        self._body_paths: dict[str, str] = {}
        self._constraints: list = []
        self._custom: dict = {}
        self._frame_bodies: list[str] = []
        self._markers: list[Marker] = []
        self.spec = None

    def _frame(self, body: str):
        if body == "ground":
            return self.plant.world_frame()
        return self.plant.GetBodyByName(body).body_frame()

    def add_body(self, name: str, mass: float, com: ArrayLike = (0.0, 0.0, 0.0), inertia: ArrayLike = (0.0, 0.0, 0.0),
                 path: str | None = None) -> RigidBody:
        """Add a rigid body: mass (kg), centre of mass in the body frame (m), and its inertia about the
        centre of mass in body axes (kg·m²): the principal moments ``(Ixx, Iyy, Izz)`` or all six values
        ``(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)`` (OpenSim's order)."""
        mass = float(mass)
        if not (mass >= 0 and math.isfinite(mass)):
            raise ValueError(f"Body {name!r}: mass must be a finite number >= 0 (kg), got {mass}")
        com = np.asarray(com, float)
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise ValueError(f"Body {name!r}: the centre of mass needs 3 finite values (m), got {com.tolist()}")
        if not all(math.isfinite(float(v)) for v in inertia):
            raise ValueError(f"Body {name!r}: the inertia must be finite (kg m^2), got {list(inertia)}")
        if mass == 0:
            if any(inertia):
                raise ValueError(f"Body {name!r}: a massless body cannot have rotational inertia")
            M = SpatialInertia.Zero()
        else:
            values = [float(v) for v in inertia]
            if len(values) not in (3, 6):
                raise ValueError(f"Body {name!r}: inertia needs 3 or 6 values, got {len(values)}")
            M = SpatialInertia.MakeFromCentralInertia(float(mass), np.asarray(com, float), RotationalInertia(*values))
        body = self.plant.AddRigidBody(name, M)
        self._body_paths[name] = path or f"/bodyset/{name}"
        return body

    def _joint_frames(self, name, parent, child, parent_offset, child_offset):
        X_P = parent_offset if isinstance(parent_offset, RigidTransform) else RigidTransform(
            np.asarray(parent_offset, float))
        X_C = child_offset if isinstance(child_offset, RigidTransform) else RigidTransform(
            np.asarray(child_offset, float))
        parent_frame = self._frame(parent)
        child_frame = self._frame(child)
        if not X_P.IsExactlyIdentity():
            parent_frame = self.plant.AddFrame(_fixed_frame(f"{name}_parent", parent_frame, X_P))
        if not X_C.IsExactlyIdentity():
            child_frame = self.plant.AddFrame(_fixed_frame(f"{name}_child", child_frame, X_C))
        return parent_frame, child_frame

    def _add_joint(self, cls, name, parent, child, axis, coordinate, path, parent_offset, child_offset, rng):
        parent_frame, child_frame = self._joint_frames(name, parent, child, parent_offset, child_offset)
        joint = self.plant.AddJoint(cls(name, parent_frame, child_frame, np.asarray(axis, float)))
        self._coords.append((coordinate or name, path or f"/jointset/{name}", joint, rng, 0))
        return joint

    def add_planar_joint(self, name: str, parent: str, child: str, coordinates: Sequence[str] = ("tx", "ty", "rz"),
                         path: str | None = None,
                         parent_offset: ArrayLike = (0, 0, 0), child_offset: ArrayLike = (0, 0, 0),
                         ranges: Sequence[tuple[float, float]] | None = None) -> PlanarJoint:
        """Add a planar joint (Drake ``PlanarJoint``): translations x, y and a rotation about z of the joint frames.

        ``coordinates`` names the three coordinates in Drake's order ``(x, y, θ)``;
        ``ranges`` gives their ranges (default unbounded). The child frame is
        translated by ``(x, y, 0)`` in the parent frame, then rotated by θ about z.
        """
        parent_frame, child_frame = self._joint_frames(name, parent, child, parent_offset, child_offset)
        joint = self.plant.AddJoint(PlanarJoint(name, parent_frame, child_frame, np.zeros(3)))
        ranges = ranges or [(-np.inf, np.inf)] * 3
        if len(coordinates) != 3 or len(ranges) != 3:
            raise ValueError(f"Planar joint {name!r} needs three coordinate names and three ranges")
        for k, (cname, rng) in enumerate(zip(coordinates, ranges)):
            self._coords.append((cname, path or f"/jointset/{name}", joint, rng, k))
        return joint

    def add_slider_joint(self, name: str, parent: str, child: str, axis: ArrayLike = (1, 0, 0), coordinate: str = None,
                         path: str | None = None,
                         parent_offset: ArrayLike = (0, 0, 0), child_offset: ArrayLike = (0, 0, 0), range: tuple[float,
                                                     float] = (-np.inf, np.inf)) -> PrismaticJoint:
        """Add a prismatic (OpenSim ``SliderJoint``) joint translating along ``axis``."""
        return self._add_joint(PrismaticJoint, name, parent, child, axis, coordinate, path, parent_offset, child_offset, range)

    def add_pin_joint(self, name: str, parent: str, child: str, axis: ArrayLike = (0, 0, 1), coordinate: str = None,
                      path: str | None = None,
                      parent_offset: ArrayLike = (0, 0, 0), child_offset: ArrayLike = (0, 0, 0), range: tuple[float,
                                                  float] = (-np.inf, np.inf)) -> RevoluteJoint:
        """Add a revolute (OpenSim ``PinJoint``) joint rotating about ``axis``.

        ``parent_offset`` / ``child_offset`` are the joint frame origins in the
        parent and child body frames.
        """
        return self._add_joint(RevoluteJoint, name, parent, child, axis, coordinate, path, parent_offset, child_offset, range)

    def add_custom_joint(self, name: str, parent: str, child: str, transform: CustomTransform,
                         coordinate: str | None = None, path: str | None = None,
                         parent_offset: ArrayLike | RigidTransform = (0, 0, 0),
                         child_offset: ArrayLike | RigidTransform = (0, 0, 0),
                         range: tuple[float, float] = (-np.inf, np.inf)) -> RevoluteJoint:
        """Add an OpenSim ``CustomJoint`` of one coordinate: rotations and translations that are functions of it.

        ``transform`` (:class:`~moco_lab.modeling.joints.CustomTransform`) gives the joint frame M's
        pose in F as functions of the coordinate. The plant holds a ``RevoluteJoint`` carrying the
        coordinate (about the transform's first moving rotation axis); the model keeps the exact
        transform, which the engine derives (see :mod:`moco_lab.modeling.joints`).
        """
        from .joints import CustomTransform

        if not isinstance(transform, CustomTransform):
            raise TypeError(f"Custom joint {name!r}: expected a CustomTransform, got {type(transform).__name__}")
        joint = self._add_joint(RevoluteJoint, name, parent, child, transform.carrier_axis(), coordinate, path,
                                parent_offset, child_offset, range)
        self._custom[name] = transform
        return joint

    def add_joint_chain(self, name: str, parent: str, child: str, steps: Sequence[tuple[str, ArrayLike, str, tuple]],
                        path: str | None = None, parent_offset: ArrayLike | RigidTransform = (0, 0, 0),
                        child_offset: ArrayLike | RigidTransform = (0, 0, 0)) -> list:
        """Add a joint of several coordinates as a chain of one-coordinate joints through massless frame bodies.

        ``steps`` lists ``(kind, axis, coordinate, range)`` from the parent's joint frame to the child's, ``kind``
        ``"translation"`` (a prismatic joint along ``axis``) or ``"rotation"`` (a revolute joint about ``axis``);
        each axis is fixed in the frame the steps before it have moved. This is exactly an OpenSim ``CustomJoint``
        whose axes are each one coordinate (slope ±1): Simbody's function-based mobilizer translates along axes of
        the parent's frame, then rotates in the body-fixed sequence, so the translations come first. The
        intermediate bodies, ``<name>_frame_<k>``, have no mass; they are the model's :attr:`Model.frame_bodies`,
        not in :attr:`Model.body_paths`. All coordinates belong to the joint path ``path``.
        """
        if not steps:
            raise ValueError(f"Joint chain {name!r} needs at least one step")
        parent_frame, child_frame = self._joint_frames(name, parent, child, parent_offset, child_offset)
        joints = []
        for k, (kind, axis, coordinate, rng) in enumerate(steps):
            if kind not in ("translation", "rotation"):
                raise ValueError(f"Joint chain {name!r}: step {k} is {kind!r}; expected 'translation' or 'rotation'")
            if k == len(steps) - 1:
                frame = child_frame
            else:
                body = self.plant.AddRigidBody(f"{name}_frame_{k + 1}", SpatialInertia.Zero())
                self._frame_bodies.append(body.name())
                frame = body.body_frame()
            cls = PrismaticJoint if kind == "translation" else RevoluteJoint
            joint = self.plant.AddJoint(cls(f"{name}_{coordinate}", parent_frame, frame, np.asarray(axis, float)))
            self._coords.append((coordinate, path or f"/jointset/{name}", joint, rng, 0))
            joints.append(joint)
            parent_frame = frame
        return joints

    def add_weld_joint(self, name: str, parent: str, child: str, parent_offset: ArrayLike = (0, 0, 0),
                       child_offset: ArrayLike = (0, 0, 0)) -> WeldJoint:
        """Add a weld (OpenSim ``WeldJoint``): the child's joint frame coincides with the parent's."""
        parent_frame, child_frame = self._joint_frames(name, parent, child, parent_offset, child_offset)
        return self.plant.AddJoint(WeldJoint(name, parent_frame, child_frame, RigidTransform()))

    def add_coordinate_actuator(self, path: str | None, coordinate: str, optimal_force: float = 1.0,
                                min_control: float = -np.inf, max_control: float = np.inf) -> CoordinateActuator:
        """Add an OpenSim ``CoordinateActuator`` (generalized force ``optimal_force × control``)."""
        actuator = CoordinateActuator(path, coordinate, optimal_force, min_control, max_control)
        self._actuators.append(actuator)
        return actuator

    def add_spring_generalized_force(self, path: str | None, coordinate: str, stiffness: float = 0.0,
                                     rest_length: float = 0.0, viscosity: float = 0.0) -> SpringGeneralizedForce:
        """Add an OpenSim ``SpringGeneralizedForce``: ``−stiffness (q − rest_length) − viscosity u``."""
        spring = SpringGeneralizedForce(path, coordinate, stiffness, rest_length, viscosity)
        self._forces.append(spring)
        return spring

    def add_muscle(self, muscle: DeGrooteFregly2016Muscle, points: Sequence[tuple[str, ArrayLike]] | GeometryPath,
                   owner: str = "/forceset") -> PathMuscle:
        """Add a muscle (e.g. ``DeGrooteFregly2016Muscle(name="left", ...)``) on a path.

        ``points``: ``[(body name or "ground", (x, y, z)), ...]`` from origin to
        insertion, each fixed in its body frame, or a :class:`GeometryPath`.
        ``owner``: where the muscle lives in the model's component tree; its path is
        ``<owner>/<name>`` (OpenSim files also put muscles in the model's components: ``owner=""``).
        """
        geometry = points if isinstance(points, GeometryPath) else GeometryPath(list(points))
        pm = PathMuscle(muscle, geometry, owner)
        self._muscles.append(pm)
        return pm

    def add_force_element(self, element: ForceElement) -> ForceElement:
        """Add any force element (contact, passive moments, springs between points, ...); checked at :meth:`build`."""
        if not isinstance(element, ForceElement):
            raise TypeError(f"Expected a moco_lab force element, got {type(element).__name__}")
        self._elements.append(element)
        return element

    def add_constraint(self, constraint: KinematicConstraint) -> KinematicConstraint:
        """Add a kinematic constraint (:mod:`moco_lab.constraints`) to the model being built.

        The coordinates it names must already have been added (``KeyError``
        with suggestions otherwise); bodies are checked as well.
        """
        if not isinstance(constraint, KinematicConstraint):
            raise TypeError(f"Expected a moco_lab.constraints.KinematicConstraint, got {type(constraint).__name__}")
        if any(c.name == constraint.name for c in self._constraints):
            raise ValueError(f"Duplicate constraint name {constraint.name!r}")
        coords = [(cname, f"{jpath}/{cname}") for cname, jpath, _joint, _rng, _k in self._coords]
        constraint.validate_names(coords, list(self._body_paths))
        self._constraints.append(constraint)
        return constraint

    def add_marker(self, name: str, body: str, location: ArrayLike) -> Marker:
        """A marker ``name`` fixed on ``body`` at ``location`` (x, y, z) in the body frame (m)."""
        marker = Marker(name, body, tuple(np.ravel(location)))
        self._markers.append(marker)
        return marker

    def build(self) -> Model:
        """Finalize the plant and return the :class:`Model` (names, force elements and constraints checked)."""
        self.plant.Finalize()
        coords = [
            Coordinate(cname, jpath, joint.position_start() + k, joint.velocity_start() + k,
                       tuple(float(r) for r in rng))
            for cname, jpath, joint, rng, k in self._coords
        ]
        return Model(self.plant, coords, self._actuators, self._forces, self._body_paths, self.name, self.spec,
                     muscles=self._muscles, constraints=self._constraints, elements=self._elements,
                     custom_joints=self._custom, frame_bodies=self._frame_bodies, markers=self._markers)


def _fixed_frame(name, parent_frame, X):
    from pydrake.multibody.tree import FixedOffsetFrame

    return FixedOffsetFrame(name, parent_frame, X)
