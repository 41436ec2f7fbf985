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

from dataclasses import dataclass
from typing import Iterable

import numpy as np
from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import (
    PrismaticJoint,
    RevoluteJoint,
    RigidBody,
    SpatialInertia,
    RotationalInertia,
)
from pydrake.math import RigidTransform

from ..util.names import did_you_mean
from .constraints import KinematicConstraint
from .forces import CoordinateActuator, SpringGeneralizedForce
from .path import GeometryPath

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
    """

    name: str
    joint_path: str
    q_index: int
    v_index: int
    range: tuple[float, float] = (-np.inf, np.inf)

    @property
    def path(self) -> str:
        return f"{self.joint_path}/{self.name}"

    @property
    def value_path(self) -> str:
        return f"{self.path}/value"

    @property
    def speed_path(self) -> str:
        return f"{self.path}/speed"

    @property
    def accel_path(self) -> str:
        return f"{self.path}/accel"


@dataclass
class PathMuscle:
    """A muscle model (e.g. :class:`~moco_lab.muscle.DeGrooteFregly2016Muscle`) on a geometry path.

    Its control (excitation) is named :attr:`path` (``/forceset/<name>``);
    its states are ``<path>/activation`` and, with a compliant tendon,
    ``<path>/normalized_tendon_force``.
    """

    muscle: object
    geometry: object  # moco_lab.path.GeometryPath

    @property
    def name(self) -> str:
        return self.muscle.name

    @property
    def path(self) -> str:
        return f"/forceset/{self.muscle.name}"

    def state_names(self) -> list[str]:
        return [f"{self.path}/{s}" for s in self.muscle.state_variable_names]

    def implicit_derivative_names(self) -> list[str]:
        """Extra variables of implicit tendon dynamics (Moco's ``implicitderiv_normalized_tendon_force``)."""
        return [f"{self.path}/{s}" for s in self.muscle.implicit_derivative_names]


@dataclass
class Property:
    """A model property that a problem may turn into an optimization parameter."""

    path: str
    kind: str  # "body_mass" or "force"
    target: str  # body name (Drake) or force-element path
    attribute: str  # "mass", "stiffness", "viscosity", "rest_length", "optimal_force"
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
                "(quaternion floating joints are not supported: use RpyFloatingJoint or planar joints)."
            )
        self.plant = plant
        self.name = name
        self.spec = spec
        self.coordinates = sorted(coordinates, key=lambda c: c.q_index)
        if [c.q_index for c in self.coordinates] != list(range(plant.num_positions())):
            raise ValueError("coordinates must name every Drake position exactly once")
        self.actuators = list(actuators or [])
        self.forces = list(forces or [])
        self.muscles = list(muscles or [])
        for m in self.muscles:
            m.geometry.check(plant)
        coord_names = [c.name for c in self.coordinates]
        for element in [*self.actuators, *self.forces]:
            if element.coordinate not in coord_names:
                raise ValueError(
                    f"{element.path}: " + did_you_mean(element.coordinate, coord_names, "coordinate")
                )
        paths = [e.path for e in [*self.actuators, *self.forces, *self.muscles]]
        dup = {p for p in paths if paths.count(p) > 1}
        if dup:
            raise ValueError(f"Duplicate force element paths: {sorted(dup)}")
        self.body_paths = {}
        for i in range(plant.num_bodies()):
            body = plant.get_body(_body_index(i))
            if body.name() == "world" or body.index() == plant.world_body().index():
                continue
            default = f"/bodyset/{body.name()}"
            self.body_paths[body.name()] = (body_paths or {}).get(body.name(), default)
        #: Kinematic constraints (:mod:`moco_lab.constraints`), OpenSim's ``ConstraintSet``.
        self.constraints = []
        for constraint in constraints or []:
            self.add_constraint(constraint)

    # ------------------------------------------------------------------ names
    @property
    def nq(self) -> int:
        return self.plant.num_positions()

    @property
    def num_states(self) -> int:
        return 2 * self.nq + len(self.auxiliary_state_names())

    @property
    def num_controls(self) -> int:
        return len(self.actuators) + len(self.muscles)

    def implicit_derivative_names(self) -> list[str]:
        """Algebraic variables of muscles with implicit tendon dynamics (one per such muscle)."""
        return [n for m in self.muscles for n in m.implicit_derivative_names()]

    def auxiliary_state_names(self) -> list[str]:
        """Muscle states (activation, normalized tendon force), after the speeds."""
        return [n for m in self.muscles for n in m.state_names()]

    def state_names(self) -> list[str]:
        """State paths: ``[values..., speeds..., muscle states...]`` (Drake coordinate order)."""
        return ([c.value_path for c in self.coordinates] + [c.speed_path for c in self.coordinates]
                + self.auxiliary_state_names())

    def control_names(self) -> list[str]:
        """Control paths: coordinate actuators (:attr:`actuators`), then muscle excitations."""
        return [a.path for a in self.actuators] + [m.path for m in self.muscles]

    def default_control_bounds(self, name: str) -> tuple[float, float]:
        """Control limits of the actuator or muscle named ``name``."""
        for a in self.actuators:
            if a.path == name:
                return (a.min_control, a.max_control)
        for m in self.muscles:
            if m.path == name:
                return (m.muscle.min_control, m.muscle.max_control)
        raise KeyError(did_you_mean(name, self.control_names(), "control"))

    def default_state_bounds(self, name: str) -> tuple[float, float]:
        """Moco's defaults: coordinate range, speeds [-50, 50], activation [0, 1], tendon force [0, 5]."""
        for c in self.coordinates:
            if name == c.value_path:
                return c.range
            if name == c.speed_path:
                return (-50.0, 50.0)
        if name.endswith("/activation"):
            return (0.0, 1.0)
        if name.endswith("/normalized_tendon_force"):
            return (0.0, 5.0)
        if name in self.state_names():
            return (-np.inf, np.inf)
        raise KeyError(did_you_mean(name, self.state_names(), "state"))

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
        is the origin of the joint's frame on the parent (m).
        """
        c = self.coordinate(coordinate)
        for ji in self.plant.GetJointIndices():
            joint = self.plant.get_joint(ji)
            if joint.num_positions() and joint.position_start() <= c.q_index < joint.position_start() + joint.num_positions():
                frame = joint.frame_on_parent()
                body = frame.body()
                name = "ground" if body.index() == self.plant.world_body().index() else body.name()
                return name, tuple(float(v) for v in frame.GetFixedPoseInBodyFrame().translation())
        raise KeyError(f"No joint holds coordinate {c.path}")  # pragma: no cover - every coordinate has a joint

    def force_element(self, path: str):
        for e in [*self.actuators, *self.forces]:
            if e.path == path:
                return e
        raise KeyError(did_you_mean(path, [e.path for e in [*self.actuators, *self.forces]], "force element"))

    # ------------------------------------------------------------ constraints
    def add_constraint(self, constraint):
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
        for key in ("_constraint_bias_sym",):  # cached symbolic derivatives of the old constraint set
            self.__dict__.pop(key, None)
        return constraint

    def multiplier_names(self) -> list[str]:
        """Lagrange multiplier paths ``/constraintset/<name>/lambda_<i>``, in :attr:`constraints` order."""
        return [n for c in self.constraints for n in c.multiplier_names()]

    # ------------------------------------------------------------- properties
    def properties(self) -> dict[str, Property]:
        """Properties that can be optimized as time-invariant parameters, by path."""
        props: dict[str, Property] = {}
        for bname, bpath in self.body_paths.items():
            body = self.plant.GetBodyByName(bname)
            props[f"{bpath}/mass"] = Property(
                f"{bpath}/mass", "body_mass", bname, "mass", float(body.default_mass())
            )
        for f in self.forces:
            for attr in ("stiffness", "viscosity", "rest_length"):
                props[f"{f.path}/{attr}"] = Property(f"{f.path}/{attr}", "force", f.path, attr, getattr(f, attr))
        for a in self.actuators:
            props[f"{a.path}/optimal_force"] = Property(
                f"{a.path}/optimal_force", "force", a.path, "optimal_force", a.optimal_force
            )
        return props

    def property_signature(self) -> tuple:
        """Current values of every property (changes when a force element is edited)."""
        return tuple((k, p.default) for k, p in sorted(self.properties().items()))

    def property(self, path: str) -> Property:
        props = self.properties()
        if path not in props:
            raise KeyError(did_you_mean(path, props, "model property"))
        return props[path]

    # -------------------------------------------------------- generalized force
    def applied_generalized_forces(self, q, u, x, values: dict[str, object] | None = None):
        """Generalized forces of moco_lab's force elements (actuators, springs).

        Works elementwise on floats, numpy arrays (vectorized over nodes when
        ``q`` has shape ``(n, nq)``), sympy symbols or Drake AutoDiffXd.

        Parameters
        ----------
        q, u : sequence, length nq (or arrays ``(n, nq)``)
        x : sequence, length num_controls (or ``(n, nu)``)
        values : dict, optional
            Property path -> value overriding the model's defaults (parameters).

        Returns
        -------
        list of length nq
            Generalized force on each coordinate.
        """
        values = values or {}
        index = {c.name: c.q_index for c in self.coordinates}
        tau = [0.0] * self.nq

        def val(element, attr):
            return values.get(f"{element.path}/{attr}", getattr(element, attr))

        for k, a in enumerate(self.actuators):
            i = index[a.coordinate]
            tau[i] = tau[i] + val(a, "optimal_force") * _col(x, k)
        for f in self.forces:
            i = index[f.coordinate]
            tau[i] = tau[i] - val(f, "stiffness") * (_col(q, i) - val(f, "rest_length")) - val(f, "viscosity") * _col(u, i)
        return tau

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
        return (
            f"<moco_lab.Model {self.name!r}: {self.nq} coordinates, {len(self.actuators)} actuators, "
            f"{len(self.muscles)} muscles, {len(self.forces)} other forces>"
        )


def _col(a, k):
    """Column k of a 2-D array (nodes x items) or item k of a 1-D sequence."""
    if isinstance(a, np.ndarray) and a.ndim == 2:
        return a[:, k]
    return a[k]


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

    def __init__(self, name: str = "model", gravity=(0.0, -GRAVITY, 0.0)):
        self.name = name
        self.plant = MultibodyPlant(0.0)
        self.plant.mutable_gravity_field().set_gravity_vector(np.asarray(gravity, dtype=float))
        self._coords: list[tuple[str, str, object, tuple[float, float]]] = []
        self._actuators: list[CoordinateActuator] = []
        self._forces: list[SpringGeneralizedForce] = []
        self._muscles: list[PathMuscle] = []
        self._body_paths: dict[str, str] = {}
        self._constraints: list = []
        self.spec = None

    def _frame(self, body: str):
        if body == "ground":
            return self.plant.world_frame()
        return self.plant.GetBodyByName(body).body_frame()

    def add_body(self, name: str, mass: float, com=(0.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0), path: str | None = None) -> RigidBody:
        """Add a rigid body (mass in kg, COM in the body frame, central principal moments)."""
        if mass < 0:
            raise ValueError(f"Body {name!r}: mass must be >= 0, got {mass}")
        if mass == 0:
            if any(inertia):
                raise ValueError(f"Body {name!r}: a massless body cannot have rotational inertia")
            M = SpatialInertia.Zero()
        else:
            M = SpatialInertia.MakeFromCentralInertia(
                float(mass), np.asarray(com, float), RotationalInertia(*[float(v) for v in inertia])
            )
        body = self.plant.AddRigidBody(name, M)
        self._body_paths[name] = path or f"/bodyset/{name}"
        return body

    def _add_joint(self, cls, name, parent, child, axis, coordinate, path, parent_offset, child_offset, rng):
        X_P = RigidTransform(np.asarray(parent_offset, float))
        X_C = RigidTransform(np.asarray(child_offset, float))
        parent_frame = self._frame(parent)
        child_frame = self._frame(child)
        if np.any(X_P.translation()):
            parent_frame = self.plant.AddFrame(_fixed_frame(f"{name}_parent", parent_frame, X_P))
        if np.any(X_C.translation()):
            child_frame = self.plant.AddFrame(_fixed_frame(f"{name}_child", child_frame, X_C))
        joint = self.plant.AddJoint(cls(name, parent_frame, child_frame, np.asarray(axis, float)))
        self._coords.append((coordinate or name, path or f"/jointset/{name}", joint, rng))
        return joint

    def add_slider_joint(self, name, parent, child, axis=(1, 0, 0), coordinate=None, path=None,
                         parent_offset=(0, 0, 0), child_offset=(0, 0, 0), range=(-np.inf, np.inf)):
        """Add a prismatic (OpenSim ``SliderJoint``) joint translating along ``axis``."""
        return self._add_joint(PrismaticJoint, name, parent, child, axis, coordinate, path, parent_offset, child_offset, range)

    def add_pin_joint(self, name, parent, child, axis=(0, 0, 1), coordinate=None, path=None,
                      parent_offset=(0, 0, 0), child_offset=(0, 0, 0), range=(-np.inf, np.inf)):
        """Add a revolute (OpenSim ``PinJoint``) joint rotating about ``axis``.

        ``parent_offset`` / ``child_offset`` are the joint frame origins in the
        parent and child body frames.
        """
        return self._add_joint(RevoluteJoint, name, parent, child, axis, coordinate, path, parent_offset, child_offset, range)

    def add_coordinate_actuator(self, path, coordinate, optimal_force=1.0, min_control=-np.inf, max_control=np.inf):
        self._actuators.append(CoordinateActuator(path, coordinate, optimal_force, min_control, max_control))

    def add_spring_generalized_force(self, path, coordinate, stiffness=0.0, rest_length=0.0, viscosity=0.0):
        self._forces.append(SpringGeneralizedForce(path, coordinate, stiffness, rest_length, viscosity))

    def add_muscle(self, muscle, points) -> PathMuscle:
        """Add a muscle (e.g. ``DeGrooteFregly2016Muscle(name="left", ...)``) on a path.

        ``points``: ``[(body name or "ground", (x, y, z)), ...]`` from origin to
        insertion, each fixed in its body frame.
        """
        pm = PathMuscle(muscle, GeometryPath(list(points)))
        self._muscles.append(pm)
        return pm

    def add_constraint(self, constraint):
        """Add a kinematic constraint (:mod:`moco_lab.constraints`) to the model being built.

        The coordinates it names must already have been added (``KeyError``
        with suggestions otherwise); bodies are checked as well.
        """
        if not isinstance(constraint, KinematicConstraint):
            raise TypeError(f"Expected a moco_lab.constraints.KinematicConstraint, got {type(constraint).__name__}")
        if any(c.name == constraint.name for c in self._constraints):
            raise ValueError(f"Duplicate constraint name {constraint.name!r}")
        coords = [(cname, f"{jpath}/{cname}") for cname, jpath, _joint, _rng in self._coords]
        constraint.validate_names(coords, list(self._body_paths))
        self._constraints.append(constraint)
        return constraint

    def build(self) -> Model:
        self.plant.Finalize()
        coords = [
            Coordinate(cname, jpath, joint.position_start(), joint.velocity_start(), tuple(float(r) for r in rng))
            for cname, jpath, joint, rng in self._coords
        ]
        return Model(self.plant, coords, self._actuators, self._forces, self._body_paths, self.name, self.spec,
                     muscles=self._muscles, constraints=self._constraints)


def _fixed_frame(name, parent_frame, X):
    from pydrake.multibody.tree import FixedOffsetFrame

    return FixedOffsetFrame(name, parent_frame, X)
