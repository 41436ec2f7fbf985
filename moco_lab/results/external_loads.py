"""OpenSim external loads: the ``.xml`` that says which columns of a force-plate file (``.mot``/``.sto``) act on which
body, and the net ground reaction in the sagittal plane that residual reduction (lesson 14) needs.

An ``ExternalLoads`` file lists ``ExternalForce`` elements, each with the body it is applied to, the frames its force and
point are expressed in, and the column prefixes of its force (``<prefix>x``, ``y``, ``z``), point of application
(the centre of pressure) and torque (the free moment) in the data file. :func:`read_external_loads` reads it;
:func:`external_force_data` picks each force's columns out of a table (:func:`moco_lab.results.sto.read_table`);
:func:`planar_ground_reaction` sums the plates into the one force and centre of pressure on the floor that a planar
model's residuals use (:mod:`moco_lab.tools.residual_reduction`). Pure data: no pydrake.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from ..util.checks import finite_number
from ..util.names import did_you_mean
from .sto import read_table

__all__ = ["ExternalForceSpec", "ExternalLoads", "read_external_loads", "external_force_data", "net_ground_force",
           "planar_ground_reaction"]

_AXES = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class ExternalForceSpec:
    """One ``ExternalForce`` of an external-loads file, as written there (OpenSim's property names); the force element
    that applies it to a model is :class:`moco_lab.modeling.external_loads.ExternalForce`."""

    name: str
    applied_to_body: str
    force_expressed_in_body: str
    point_expressed_in_body: str
    force_identifier: str
    point_identifier: str
    torque_identifier: str


@dataclass
class ExternalLoads:
    """An external-loads file: its forces and the data file it names (resolved next to the ``.xml``; None if it
    names none)."""

    name: str
    forces: list
    datafile: Path | None


def read_external_loads(path: str | Path) -> ExternalLoads:
    """Read an OpenSim ``ExternalLoads`` ``.xml`` (3.x or 4.x). Disabled forces are left out."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        line, column = e.position
        raise ValueError(f"{path}: not a readable XML file (line {line}, column {column}); is it truncated, or "
                         "not an external-loads .xml?") from None
    el = root if root.tag == "ExternalLoads" else root.find("ExternalLoads")
    if el is None:
        raise ValueError(f"{path.name}: no <ExternalLoads> element")
    forces = []
    for f in el.findall("objects/ExternalForce"):
        if (f.findtext("isDisabled") or "false").strip().lower() == "true" or \
                (f.findtext("appliesForce") or "true").strip().lower() == "false":
            continue

        def text(tag: str, default: str = "", f: ET.Element = f) -> str:
            return (f.findtext(tag) or default).strip()

        body = text("applied_to_body") or text("socket_frame").split("/")[-1]
        if not body or not text("force_identifier"):
            raise ValueError(f"{path.name}: ExternalForce {f.get('name')!r} names no body or no force columns")
        forces.append(ExternalForceSpec(f.get("name"), body, text("force_expressed_in_body", "ground"),
                                    text("point_expressed_in_body", "ground"), text("force_identifier"),
                                    text("point_identifier"), text("torque_identifier")))
    datafile = (el.findtext("datafile") or "").strip()
    return ExternalLoads(el.get("name", path.stem), forces, (path.parent / datafile) if datafile else None)


def external_force_data(loads: ExternalLoads, columns: Mapping[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """Each force's data: ``{name: {"force": (T, 3), "point": (T, 3) or None, "torque": (T, 3) or None}}`` (N, m,
    N·m), from the table's columns (``<identifier>x``, ``y``, ``z``). ``KeyError`` names a missing column."""
    out = {}
    for f in loads.forces:
        entry = {}
        for key, prefix in (("force", f.force_identifier), ("point", f.point_identifier),
                            ("torque", f.torque_identifier)):
            if not prefix:
                entry[key] = None
                continue
            names = [f"{prefix}{a}" for a in "xyz"]
            missing = [n for n in names if n not in columns]
            if missing:
                raise KeyError(f"external force {f.name!r}: the data have no column {missing[0]!r}; "
                               + did_you_mean(missing[0], list(columns), "column"))
            entry[key] = np.column_stack([np.asarray(columns[n], float) for n in names])
        out[f.name] = entry
    return out


def _plate_data(loads: ExternalLoads | str | Path, data: str | Path | None, who: str,
                in_ground) -> tuple[ExternalLoads, np.ndarray, dict[str, dict[str, np.ndarray]]]:
    """The loads (read if a path), their data's times and each force's columns (:func:`external_force_data`), after
    the checks both sums of the plates need: a data file, at least one force, every force in ground (``in_ground``:
    a test of an :class:`ExternalForceSpec`), each failure a ``ValueError`` naming ``who``'s reason."""
    if not isinstance(loads, ExternalLoads):
        loads = read_external_loads(loads)
    source = Path(data) if data is not None else loads.datafile
    if source is None:
        raise ValueError(f"external loads {loads.name!r} name no data file; pass data=")
    not_ground = [f.name for f in loads.forces if not in_ground(f)]
    if not_ground:
        raise ValueError(f"external force {not_ground[0]!r} is not expressed in ground; {who} sums "
                         "ground reaction forces expressed in the lab frame")
    if not loads.forces:
        raise ValueError(f"external loads {loads.name!r} have no (enabled) force")
    time, columns, _ = read_table(source)
    return loads, time, external_force_data(loads, columns)


def net_ground_force(loads: ExternalLoads | str | Path, data: str | Path | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The sum of all the loads' forces, in the lab (ground) frame: what the force plates push the body with.

    Returns ``(time (T,), force (T, 3) N)`` at the data's samples. ``ValueError`` for a force not expressed in
    ground (its sum would need the body's pose) or loads without forces or data file.
    """
    _, time, parts = _plate_data(loads, data, "net_ground_force", lambda f: f.force_expressed_in_body == "ground")
    return time, sum(entry["force"] for entry in parts.values())


def planar_ground_reaction(loads: ExternalLoads | str | Path, data: str | Path | None = None, *,
                           forward: str = "x", up: str = "y", floor: float | None = None,
                           min_vertical: float = 20.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The net ground reaction of all plates in the sagittal plane: one force and its centre of pressure.

    The forces (expressed in ground) are summed; their moment about the origin, each force at its point plus its
    free torque, projected on the axis normal to the plane (``forward`` × ``up``), is carried by the net force
    acting at the point on the floor ``up = floor`` where it has that moment (the net centre of pressure).

    Parameters
    ----------
    loads : ExternalLoads, or the path of its ``.xml``
    data : path, optional
        The force-plate file (default: the one the ``.xml`` names).
    forward, up : {"x", "y", "z"}
        The lab axes of the model's x (forward) and y (up).
    floor : float, m, optional
        Height of the floor along ``up`` (default: the median height of the points where force is applied).
    min_vertical : float, N
        Frames whose net vertical force is below this have no centre of pressure: NaN rows (no contact, or a foot
        off the plates), which residual reduction leaves out.

    Returns
    -------
    time : (T,) array, s
    forces : (T, 2) array, N
        Net force (forward, up); NaN where the vertical force is below ``min_vertical``.
    cop : (T, 2) array, m
        Net centre of pressure (forward, floor height); NaN likewise.
    """
    if forward not in _AXES or up not in _AXES or forward == up:
        raise ValueError(f"planar_ground_reaction: forward and up must be two different axes of x, y, z; got "
                         f"{forward!r}, {up!r}")
    if floor is not None:
        finite_number(floor, "planar_ground_reaction: floor", what="a finite height in m (or None)")
    finite_number(min_vertical, "planar_ground_reaction: min_vertical", 0, True, "a force >= 0 N")
    loads, time, parts = _plate_data(loads, data, "planar_ground_reaction", lambda f: "ground" in (
        f.force_expressed_in_body, f.point_expressed_in_body))
    i, j = _AXES[forward], _AXES[up]
    k = 3 - i - j
    sign = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0  # forward × up = sign · axis k
    total = np.zeros((time.size, 3))
    moment = np.zeros(time.size)  # about the origin, along forward × up
    heights = []
    for name, entry in parts.items():
        F = entry["force"]
        total += F
        if entry["point"] is not None:
            p = entry["point"]
            moment += p[:, i] * F[:, j] - p[:, j] * F[:, i]  # (p × F) along e_forward × e_up
            heights.append(p[np.abs(F[:, j]) > min_vertical, j])
        elif np.any(F != 0):
            raise ValueError(f"external force {name!r} has no point of application columns")
        if entry["torque"] is not None:
            moment += sign * entry["torque"][:, k]
    if floor is None:
        pts = np.concatenate(heights) if heights else np.zeros(0)
        floor = float(np.median(pts)) if pts.size else 0.0
    forces = np.column_stack([total[:, i], total[:, j]])
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (moment + floor * forces[:, 0]) / forces[:, 1]  # moment of F at (x, floor): x F_up − floor F_fwd
    cop = np.column_stack([x, np.full(time.size, floor)])
    off = ~(forces[:, 1] >= min_vertical)
    forces[off] = np.nan
    cop[off] = np.nan
    return time, forces, cop
