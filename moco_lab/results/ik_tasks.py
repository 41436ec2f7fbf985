"""OpenSim's inverse-kinematics task files (``IKTaskSet``, e.g. ``ik_tasks_walk.xml``).

A task set lists, per marker (``IKMarkerTask``) and per coordinate (``IKCoordinateTask``), whether inverse
kinematics uses it (``apply``, default true) and its weight (``weight``, default 0): the solve minimizes
``Σ w_m |p_m(q) − y_m|² + Σ w_c (q_c − v_c)²``. A coordinate task's target ``v_c`` is the coordinate's default
value (``value_type`` ``default_value``, the default), a number (``manual_value``, ``value``) or a column of a
coordinate file (``from_file``).

:func:`read_ik_tasks` returns the tasks that apply (:class:`IKTasks`); what
:func:`moco_lab.tools.marker_ik.inverse_kinematics` takes as ``weights`` and ``coordinate_tasks``.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

__all__ = ["IKTasks", "CoordinateTask", "read_ik_tasks"]


@dataclass
class CoordinateTask:
    """An ``IKCoordinateTask`` that applies.

    Attributes
    ----------
    weight : float
    value_type : {"default_value", "manual_value", "from_file"}
    value : float
        The target of ``manual_value`` (rad or m; OpenSim writes it in the coordinate's units).
    """

    weight: float
    value_type: str = "default_value"
    value: float = 0.0


@dataclass
class IKTasks:
    """The tasks of an ``IKTaskSet`` that apply (``apply`` true).

    Attributes
    ----------
    markers : dict of str -> float
        Marker name -> weight, in the file's order.
    coordinates : dict of str -> CoordinateTask
        Coordinate name -> task.
    ignored : list of str
        Names of the tasks whose ``apply`` is false.
    """

    markers: dict = field(default_factory=dict)
    coordinates: dict = field(default_factory=dict)
    ignored: list = field(default_factory=list)


def _number(el: ET.Element, tag: str, default: float, where: str) -> float:
    text = el.findtext(tag)
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: <{tag}> must be a number, got {text.strip()!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{where}: <{tag}> must be finite, got {text.strip()!r}")
    return value


def read_ik_tasks(path: str | os.PathLike) -> IKTasks:
    """The tasks of an OpenSim ``IKTaskSet`` file (module docstring).

    Raises
    ------
    ValueError
        The file holds no ``IKTaskSet``, a task has no name, a negative or non-numeric weight, an unknown
        ``value_type``, or a name twice; a task of another kind than ``IKMarkerTask`` / ``IKCoordinateTask``.
    """
    name = os.fspath(path)
    root = ET.parse(name).getroot()
    taskset = root if root.tag == "IKTaskSet" else root.find(".//IKTaskSet")
    if taskset is None:
        raise ValueError(f"{name}: no <IKTaskSet> in the file (an OpenSim inverse-kinematics task file holds one)")
    objects = taskset.find("objects")
    tasks = IKTasks()
    seen: set[tuple[str, str]] = set()
    for el in [] if objects is None else list(objects):
        task = el.get("name")
        where = f"{name}: {el.tag} {task!r}"
        if el.tag not in ("IKMarkerTask", "IKCoordinateTask"):
            raise ValueError(f"{name}: the task {task!r} is an {el.tag}; an IKTaskSet holds IKMarkerTask and "
                             "IKCoordinateTask")
        if not task:
            raise ValueError(f"{name}: an {el.tag} without a name")
        if (el.tag, task) in seen:
            raise ValueError(f"{where} is listed twice")
        seen.add((el.tag, task))
        apply = (el.findtext("apply") or "true").strip().lower() in ("true", "1")
        weight = _number(el, "weight", 0.0, where)
        if weight < 0:
            raise ValueError(f"{where}: the weight must be >= 0, got {weight}")
        if not apply:
            tasks.ignored.append(task)
        elif el.tag == "IKMarkerTask":
            tasks.markers[task] = weight
        else:
            kind = (el.findtext("value_type") or "default_value").strip()
            if kind not in ("default_value", "manual_value", "from_file"):
                raise ValueError(f"{where}: value_type must be default_value, manual_value or from_file, got "
                                 f"{kind!r}")
            tasks.coordinates[task] = CoordinateTask(weight, kind, _number(el, "value", 0.0, where))
    return tasks
