"""The Moco paper's squat-to-stand model, made from the opensim-core model file by the paper's documented edits.

The Moco paper (Dembia et al. 2020, Figure 6) predicts a one-leg squat-to-stand with
a 4-degree-of-freedom, 9-muscle model (``squat_to_stand_4dof9musc.osim``, in the
paper's code repository, which carries no licence and is not shipped). That model is
opensim-core's ``squatToStand_3dof9musc.osim`` (Apache-2.0, shipped in
``moco_lab/data/opensim/``) with these differences, which :func:`squat_to_stand_osim`
applies to the file's text:

* coordinate names ``hip_extension_r`` (for ``hip_flexion_r``: the same joint and sign),
  ``knee_extension_r`` (for ``knee_angle_r``), ``knee_extension_r_beta`` (its patella twin)
  and ``ankle_plantarflexion_r`` (for ``ankle_angle_r``);
* the ``back`` WeldJoint becomes a joint with the coordinate ``lumbar_extension``
  (rotation about the offset frames' z axis, range ±1.57079633 rad, clamped; the paper's
  file writes it as a CustomJoint with one linear rotation, which is a pin), driven by a
  ``CoordinateActuator`` ``lumbar_extension`` (optimal force 100 N·m, control in [−1, 1]);

One difference of the paper's file is not applied: its toes have the principal inertias
(0.0001, 0.0002, 0.001) kg·m², which no rigid body has (they violate the triangle
inequality; Drake refuses them, OpenSim does not check); the file's (0.0001, 0.0011,
0.001) are kept. The toes are welded to the foot, which is welded to the ground, so the
motion cannot tell. (Checked element by element against the paper's file: bodies,
joints, the 9 muscles.)

:func:`squat_to_stand` reads the edited text and applies the Moco ``ModelProcessor``
chain of the paper's script: Millard muscles replaced by DeGrooteFregly2016 muscles,
max isometric forces doubled ("missing a leg"), passive fiber forces ignored, tendon
compliance dynamics implicit (compliant where the file says so: hamstrings, rectus
femoris, vasti, gastrocnemius, soleus, tibialis anterior).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..util.data import opensim_file
from . import operators as ops
from .forces import SpringGeneralizedForce
from .model import Model
from .osim import read_osim_string

__all__ = ["squat_to_stand_osim", "squat_to_stand", "SQUAT_FILE", "RENAMED"]

#: The opensim-core file the model is made from.
SQUAT_FILE = "squatToStand_3dof9musc.osim"
#: The paper's coordinate names for the file's.
RENAMED = {"knee_angle_r_beta": "knee_extension_r_beta", "knee_angle_r": "knee_extension_r",
           "ankle_angle_r": "ankle_plantarflexion_r", "hip_flexion_r": "hip_extension_r"}


def squat_to_stand_osim(lumbar: bool = True) -> str:
    """The text of the paper's model file (``lumbar=False``: the back stays welded, 3 degrees of freedom)."""
    text = opensim_file(SQUAT_FILE).read_text()
    for old, new in RENAMED.items():  # longest first: knee_angle_r_beta before knee_angle_r
        text = re.sub(rf"\b{old}\b", new, text)
    root = ET.fromstring(text)
    model = root.find("Model")
    if lumbar:
        joints = model.find("JointSet/objects")
        back = next(j for j in joints if j.get("name") == "back")
        pin = ET.Element("PinJoint", name="back")
        for tag in ("socket_parent_frame", "socket_child_frame"):
            ET.SubElement(pin, tag).text = back.findtext(tag)
        coordinates = ET.SubElement(pin, "coordinates")
        c = ET.SubElement(coordinates, "Coordinate", name="lumbar_extension")
        for tag, value in (("default_value", "0"), ("default_speed_value", "0"),
                           ("range", "-1.57079633 1.57079633"), ("clamped", "true"),
                           ("locked", "false")):
            ET.SubElement(c, tag).text = value
        frames = back.find("frames")
        for frame in frames:
            frame.find("orientation").text = "0 0 0"
        pin.append(frames)
        joints[list(joints).index(back)] = pin
        forces = model.find("ForceSet/objects")
        actuator = ET.Element("CoordinateActuator", name="lumbar_extension")
        for tag, value in (("min_control", "-1"), ("max_control", "1"), ("coordinate", "lumbar_extension"),
                           ("optimal_force", "100")):
            ET.SubElement(actuator, tag).text = value
        forces.insert(0, actuator)
    return ET.tostring(root, encoding="unicode")


def squat_to_stand(lumbar: bool = True, knee_spring: float | None = None) -> Model:
    """The Moco paper's squat-to-stand model (4 degrees of freedom with ``lumbar=True``), muscles as the paper uses them.

    ``knee_spring``: add the paper's assistive device, a ``SpringGeneralizedForce``
    ``/forceset/spring`` on the knee with this stiffness (N·m/rad; rest length 0, no
    viscosity: a torque ``−k q`` that vanishes at full extension). Its ``stiffness`` is the
    property an assisted study optimizes (``/forceset/spring/stiffness``).

    Returns
    -------
    Model
        Coordinates ``/jointset/hip_r/hip_extension_r``, ``/jointset/knee_r/knee_extension_r``,
        ``/jointset/ankle_r/ankle_plantarflexion_r``, ``/jointset/back/lumbar_extension`` and the
        patella's ``knee_extension_r_beta`` (coupled to the knee by the file's constraint); 9
        DeGrooteFregly2016 muscles under ``/forceset/``, 6 with implicit tendon compliance.
    """
    model = read_osim_string(squat_to_stand_osim(lumbar), "squat_to_stand_4dof9musc.osim", replace_millard=True)
    model.name = "squat_to_stand"
    ops.scale_max_isometric_force(model, 2.0)
    ops.ignore_passive_fiber_forces(model)
    ops.set_tendon_compliance(model, "implicit")
    if knee_spring is not None:
        model.add_force_element(SpringGeneralizedForce("/forceset/spring", "knee_extension_r", float(knee_spring)))
    model.spec = {"factory": "squat_to_stand", "kwargs": {"lumbar": bool(lumbar), "knee_spring": knee_spring}}
    return model
