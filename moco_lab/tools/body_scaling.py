"""A model scaled to a subject body by body, as OpenSim's ScaleTool scales it (``Model::scale``).

:func:`scale_model` takes an ``.osim`` file and per-body scale factors (one number, or three along the body's own
x, y, z axes) and returns the scaled model, read, with the scaled file's document (``ScaledModel.write`` saves it
for OpenSim)::

    scaled = ml.tools.body_scaling.scale_model("subject_walk_scaled.osim", {"femur_r": 1.05, "tibia_r": (1, 1.1, 1)},
                                               replace_millard=True)
    scaled.model                  # a moco_lab Model
    scaled.write("subject.osim")  # the same model for OpenSim

What scales and how is :mod:`moco_lab.modeling.osim_scale` (joint frames, centres of mass, inertias, masses, custom
joints' translation functions, markers, path points, wrap cylinders, couplers of translations); the last step is
the muscles': like OpenSim, each muscle's optimal fibre length and tendon slack length are multiplied by the ratio
of its path's length in the default pose after scaling to before (paths that are functions of the coordinates keep
their length, so their muscles are unchanged). The lengths here are the exact geometry-path lengths (wrapping
included) evaluated numerically by the engine's kinematics (:func:`path_lengths`).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..engine.multibody import SymbolicMultibody
from ..modeling.markers import Marker
from ..modeling.model import Model
from ..modeling.osim import read_osim_string
from ..modeling.osim_scale import (
    model_element,
    muscle_elements,
    place_markers,
    post_scale_muscles,
    scale_factors,
    scale_osim_document,
)
from ..util.data import opensim_file

__all__ = ["ScaledModel", "scale_model", "path_lengths", "default_coordinates"]


@dataclass
class ScaledModel:
    """The result of :func:`scale_model`.

    Attributes
    ----------
    model : Model
        The scaled model, read.
    document : xml.etree.ElementTree.Element
        The scaled ``.osim`` document.
    scales : dict of str -> (3,) array
        The factors applied, per body (bodies not listed kept their size).
    length_ratios : dict of str -> float
        Per muscle on a geometry path: its path's length in the default pose after scaling over before (its optimal
        fibre length and tendon slack length were multiplied by it).
    """

    model: Model
    document: ET.Element
    scales: dict
    length_ratios: dict

    def write(self, path: str | Path) -> Path:
        """Save the scaled model as an ``.osim`` file (OpenSim reads it); returns the path."""
        path = Path(path)
        ET.ElementTree(self.document).write(path, encoding="UTF-8", xml_declaration=True)
        return path


class _NumericPathContext:
    """What a path's ``length_expr`` reads, with numbers: the coordinates of one pose and the points' positions."""

    xp = np

    def __init__(self, model: Model, q: np.ndarray):
        self.model = model
        self.q = [float(v) for v in q]
        self.tree = model.tree()
        self.mb = SymbolicMultibody(self.tree, self.q, [0.0] * len(self.q))
        self.names = {path: name for name, path in model.body_paths.items()}

    def coordinate_index(self, name: str) -> int:
        return self.model.coordinate(name.removesuffix("/value")).q_index

    def point_position(self, body: str, location) -> list:
        name = self.names.get(body, body)
        return [float(v) for v in self.mb.point_position(self.tree.body_index(name), [float(v) for v in location])]


def path_lengths(model: Model, coordinates: Mapping[str, float] | None = None) -> dict[str, float]:
    """Every muscle's path length (m) at a pose, by name.

    Parameters
    ----------
    model : Model
    coordinates : dict of str -> float, optional
        Coordinate values by name (rad or m); others 0.

    Returns
    -------
    dict of str -> float
        Muscle name -> length: geometry paths with their conditional and moving points and wrapping, function-based
        paths by their function — the same length the compiled model computes.
    """
    q = np.zeros(model.plant.num_positions())
    for name, value in (coordinates or {}).items():
        q[model.coordinate(name).q_index] = float(value)
    ctx = _NumericPathContext(model, q)
    return {m.name: float(m.geometry.length_expr(ctx)) for m in model.muscles}


def default_coordinates(document: ET.Element) -> dict[str, float]:
    """The default pose of a model document: each coordinate's ``default_value``, then every linear coupler's
    dependent coordinate set from its independent one (OpenSim assembles the default pose so)."""
    model = model_element(document)
    values = {c.get("name"): float(c.findtext("default_value", "0") or 0.0) for c in model.iter("Coordinate")}
    for coupler in model.iter("CoordinateCouplerConstraint"):
        dependent = (coupler.findtext("dependent_coordinate_name") or "").strip()
        independent = (coupler.findtext("independent_coordinate_names") or "").split()
        function = coupler.find("coupled_coordinates_function")
        linear = function.find("LinearFunction") if function is not None else None
        if dependent not in values or len(independent) != 1 or linear is None:
            continue
        a, b = (float(v) for v in linear.findtext("coefficients", "1 0").split())
        scale = float(coupler.findtext("scale_factor", "1") or 1.0)
        values[dependent] = scale * (a * values[independent[0]] + b)
    return values


def scale_model(source: str | Path | Model, scales: Mapping[str, Any], *, preserve_mass_distribution: bool = False,
                final_mass: float | None = None, markers: Sequence[Marker] | None = None,
                replace_millard: bool | None = None, skip_unsupported: bool | None = None,
                weld: Sequence[str] | None = None, unlock: Sequence[str] | None = None) -> ScaledModel:
    """Scale an ``.osim`` model body by body as OpenSim's ``Model::scale`` does, and read it.

    Parameters
    ----------
    source : str, Path or Model
        The model file (a file the project ships is found by name), or a model read from one by
        :func:`~moco_lab.modeling.osim.read_osim` (its file, read with the same options).
    scales : dict of str -> float or (3,) floats
        Per body name: one factor, or three along the body's x, y, z axes (positive). Bodies not named keep their
        size.
    preserve_mass_distribution : bool
        True: masses kept (inertias still follow the geometry); False (default): each scaled body's mass times
        ``s_x s_y s_z``.
    final_mass : float, optional
        Every body's mass and inertia then multiplied by one factor so that the total is this (kg).
    markers : sequence of Marker, optional
        Markers to place on the scaled model (body and location in its frame), e.g. ``register_markers``' answer;
        the file's other markers are scaled with their bodies.
    replace_millard, skip_unsupported : bool, optional
        As for :func:`moco_lab.modeling.osim.read_osim` (default False, or the options ``source`` was read with).
    weld, unlock : sequence of str, optional
        As for :func:`moco_lab.modeling.osim.read_osim` (default none, or ``source``'s).

    Returns
    -------
    ScaledModel
    """
    options = {"replace_millard": False, "skip_unsupported": False, "weld": (), "unlock": ()}
    if isinstance(source, Model):
        spec = source.spec or {}
        if spec.get("factory") != "read_osim":
            raise ValueError("scale_model: the model was not read from an .osim file by ml.read_osim (scale its file)")
        options.update({k: v for k, v in spec["kwargs"].items() if k in options})
        source = spec["kwargs"]["path"]
    given = {"replace_millard": replace_millard, "skip_unsupported": skip_unsupported, "weld": weld, "unlock": unlock}
    options.update({k: v for k, v in given.items() if v is not None})
    path = Path(source)
    if not path.exists():
        path = opensim_file(str(source))
    original = ET.parse(path).getroot()
    scaled = scale_osim_document(original, scales, preserve_mass_distribution=preserve_mass_distribution,
                                 final_mass=final_mass)
    name = f"{path.stem}_scaled{path.suffix}"
    ratios: dict[str, float] = {}
    if muscle_elements(original):
        def read(doc):
            return read_osim_string(ET.tostring(doc, encoding="unicode"), name, **options)

        def lengths(doc):
            model = read(doc)
            names = {c.name for c in model.coordinates}  # welded or locked ones are not coordinates of the model
            return path_lengths(model, {k: v for k, v in default_coordinates(doc).items() if k in names})

        before, after = lengths(original), lengths(scaled)
        geometric = {el.get("name") for el in muscle_elements(original) if el.find("GeometryPath") is not None}
        ratios = {m: after[m] / before[m] for m in before if m in geometric and before[m] > 0.0}
        post_scale_muscles(scaled, ratios)
    if markers is not None:
        place_markers(scaled, {m.name: (m.body, m.location) for m in markers})
    model = read_osim_string(ET.tostring(scaled, encoding="unicode"), name, **options)
    bodies = [b.get("name") for b in model_element(original).iter("Body")]
    return ScaledModel(model, scaled, scale_factors(scales, bodies), ratios)
