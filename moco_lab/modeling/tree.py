"""The kinematic tree of a ``MultibodyPlant``, read as plain data: bodies, joints, gravity.

:func:`read_tree` is how the engine (:mod:`moco_lab.engine.multibody`) learns the
mechanics from the plant, and how :meth:`Model.description` tells models apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pydrake.multibody.plant import MultibodyPlant

__all__ = ["BodyInfo", "JointInfo", "Tree", "read_tree", "SUPPORTED_JOINTS"]

#: Drake joint type names moco_lab's engine derives.
SUPPORTED_JOINTS = ("revolute", "prismatic", "planar", "weld")


@dataclass
class BodyInfo:
    """A rigid body read from the plant.

    Attributes
    ----------
    name : str
    index : int
        Drake body index.
    mass : float
    com : ndarray (3,)
        Centre of mass in the body frame (m).
    inertia_com : ndarray (3, 3)
        Rotational inertia about the centre of mass, body frame (kg m²).
    """

    name: str
    index: int
    mass: float
    com: np.ndarray
    inertia_com: np.ndarray


@dataclass
class JointInfo:
    """A joint read from the plant (parent body P, child body C, joint frames F on P and M on C).

    Attributes
    ----------
    name, type : str
    parent, child : int
        Drake body indices (the world is 0).
    R_PF, p_PF : ndarray (3, 3), (3,)
        Pose of the joint frame F in the parent body frame.
    R_CM, p_CM : ndarray (3, 3), (3,)
        Pose of the joint frame M in the child body frame.
    axis : ndarray (3,)
        Rotation or translation axis (in F) of revolute and prismatic joints.
    q_start, num_q : int
        First position index and number of positions (= velocities).
    damping : ndarray (num_q,)
        Joint damping coefficients.
    transform : CustomTransform or None
        The exact transform of a ``"custom"`` joint (an OpenSim ``CustomJoint``
        carried in the plant by a revolute joint; :mod:`moco_lab.modeling.joints`).
    """

    name: str
    type: str
    parent: int
    child: int
    R_PF: np.ndarray
    p_PF: np.ndarray
    R_CM: np.ndarray
    p_CM: np.ndarray
    axis: np.ndarray
    q_start: int
    num_q: int
    damping: np.ndarray
    transform: Any = None


@dataclass
class Tree:
    """A plant's kinematic tree: joints in order from the root, bodies by index, gravity."""

    joints: list[JointInfo]
    bodies: dict[int, BodyInfo]
    gravity: np.ndarray
    world: int
    nq: int

    def body_index(self, name: str) -> int:
        """Drake index of the body named ``name`` (``"ground"`` or ``"world"``: the world)."""
        if name in ("ground", "world"):
            return self.world
        for i, b in self.bodies.items():
            if b.name == name:
                return i
        raise KeyError(name)


def read_tree(plant: MultibodyPlant, custom: dict | None = None) -> Tree:
    """Read the kinematic tree of a finalized ``MultibodyPlant``.

    ``custom`` maps joint names to the :class:`~moco_lab.modeling.joints.CustomTransform`
    of joints the plant holds as carriers (:attr:`Model.custom_joints`); those
    joints are read as type ``"custom"`` with their exact transform.

    Raises
    ------
    NotImplementedError
        A joint type other than :data:`SUPPORTED_JOINTS`, or a force element
        other than gravity, naming it.
    """
    from pydrake.multibody.tree import BodyIndex

    world = int(plant.world_body().index())
    for k in range(plant.num_force_elements()):
        fe = plant.get_force_element(_force_element_index(k))
        kind = type(fe).__name__
        if not kind.startswith("UniformGravityFieldElement"):
            raise NotImplementedError(
                f"moco_lab cannot derive the Drake force element {kind!r} (index {k}); model it as a moco_lab "
                "force element instead (moco_lab.modeling.forces)")
    bodies = {}
    for i in range(plant.num_bodies()):
        body = plant.get_body(BodyIndex(i))
        if int(body.index()) == world:
            continue
        M = body.default_spatial_inertia()
        m = float(M.get_mass())
        c = np.array(M.get_com(), dtype=float)
        I_o = np.array(M.CalcRotationalInertia().CopyToFullMatrix3(), dtype=float)
        # |c|² written out: BLAS's dot product rounds differently on another CPU, and these constants enter the
        # structural hash that keys compiled kernels (a new key on every machine: a needless recompile)
        cc = float(c[0] * c[0] + c[1] * c[1] + c[2] * c[2])
        I_c = I_o - m * (cc * np.eye(3) - np.outer(c, c))
        bodies[int(body.index())] = BodyInfo(body.name(), int(body.index()), m, c, I_c)
    joints = {}
    for ji in plant.GetJointIndices():
        j = plant.get_joint(ji)
        kind = j.type_name()
        if kind not in SUPPORTED_JOINTS:
            raise NotImplementedError(f"Joint {j.name()!r} is a Drake {kind!r} joint; moco_lab derives "
                                      f"{', '.join(SUPPORTED_JOINTS)} joints")
        X_PF = j.frame_on_parent().GetFixedPoseInBodyFrame()
        X_CM = j.frame_on_child().GetFixedPoseInBodyFrame()
        if kind == "revolute":
            axis = np.array(j.revolute_axis(), float)
        elif kind == "prismatic":
            axis = np.array(j.translation_axis(), float)
        else:
            axis = np.zeros(3)
        if kind == "weld":  # fold the weld's fixed X_FM into the parent-side frame: X_PF' = X_PF X_FM
            X_PF = X_PF.multiply(j.X_FM())
        damping = np.array(j.default_damping_vector(), float) if j.num_velocities() else np.zeros(0)
        if j.num_positions() != j.num_velocities():
            raise NotImplementedError(f"Joint {j.name()!r} has nq != nv")
        joints[int(j.child_body().index())] = JointInfo(
            j.name(), kind, int(j.parent_body().index()), int(j.child_body().index()),
            X_PF.rotation().matrix().copy(), X_PF.translation().copy(),
            X_CM.rotation().matrix().copy(), X_CM.translation().copy(), axis,
            int(j.position_start()), int(j.num_positions()), damping)
        if custom and j.name() in custom:
            if kind != "revolute":
                raise NotImplementedError(f"Joint {j.name()!r}: a custom transform needs a revolute carrier, "
                                          f"the plant has a {kind!r} joint")
            info = joints[int(j.child_body().index())]
            info.type, info.transform, info.axis = "custom", custom[j.name()], np.zeros(3)
    missing = [b.name for i, b in bodies.items() if i not in joints]
    if missing:
        raise NotImplementedError(f"Bodies without a joint to their parent (Drake gives them a quaternion floating "
                                  f"joint, which moco_lab does not support): {missing}")
    # order joints from the root outward
    ordered, placed = [], {world}
    pending = dict(joints)
    while pending:
        ready = [c for c, j in pending.items() if j.parent in placed]
        if not ready:
            raise NotImplementedError("the joints do not form a tree rooted at the world")
        for c in sorted(ready):
            ordered.append(pending.pop(c))
            placed.add(c)
    gravity = np.array(plant.gravity_field().gravity_vector(), float)
    return Tree(ordered, bodies, gravity, world, plant.num_positions())


def _force_element_index(k: int):
    from pydrake.multibody.tree import ForceElementIndex

    return ForceElementIndex(k)
