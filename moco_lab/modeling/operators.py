"""Model edits Moco users make with ``ModelProcessor`` operators, as functions on a :class:`Model`.

Each function edits the model in place, returns it (so calls chain), and records itself in
``model.spec["operators"]`` when the model has a recipe (a factory or a model file), so that a study
file saved afterwards rebuilds the same model (:func:`apply_operators`).

==========================================  =====================================================
Moco (``ModelProcessor`` operator)          moco_lab
==========================================  =====================================================
``ModOpScaleMaxIsometricForce(f)``          :func:`scale_max_isometric_force`
``ModOpIgnorePassiveFiberForcesDGF()``      :func:`ignore_passive_fiber_forces`
``ModOpScaleActiveFiberForceCurveWidthDGF`` :func:`scale_active_fiber_force_curve_width`
``ModOpIgnoreTendonCompliance()``           :func:`set_tendon_compliance` ``(model, "rigid")``
``ModOpTendonComplianceDynamicsModeDGF(m)`` :func:`set_tendon_compliance` ``(model, m)`` (``"explicit"``/``"implicit"``)
``ModOpRemoveMuscles()``                    :func:`remove_muscles`
``ModOpReplaceMusclesWithDeGrooteFregly``   ``read_osim(..., replace_millard=True)``
``ModOpAddReserves(f)``                     :func:`moco_lab.tools.inverse.add_reserves` (returns a copy)
``ModOpAddResiduals(r, t, b)``              :func:`moco_lab.tools.inverse.add_residuals` (returns a copy)
``ModOpAddExternalLoads(xml)``              :func:`add_external_loads` (:mod:`moco_lab.modeling.external_loads`)
``ModOpReplacePathsWithFunctionBasedPaths`` :func:`replace_paths_with_function_based_paths`
==========================================  =====================================================
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..results.external_loads import read_external_loads
from ..util.checks import finite_number
from ..util.data import file_sha256, opensim_file
from ..util.names import did_you_mean
from .external_loads import external_forces
from .forces import PathMuscle
from .functions import MultivariatePolynomialFunction
from .model import Model, require_model
from .path import FunctionBasedPath

__all__ = ["scale_max_isometric_force", "ignore_passive_fiber_forces", "scale_active_fiber_force_curve_width",
           "set_tendon_compliance", "remove_muscles",
           "add_external_loads", "replace_paths_with_function_based_paths", "read_function_based_paths",
           "apply_operators", "OPERATORS"]


def _record(model: Model, name: str, **kwargs) -> None:
    if model.spec is not None:
        model.spec = dict(model.spec)
        model.spec["operators"] = [*model.spec.get("operators", []), [name, kwargs]]


def _muscles(model: Model, muscles: Sequence[str] | None, who: str) -> list[PathMuscle]:
    chosen = list(model.muscles)
    if isinstance(muscles, (str, bytes)):
        raise TypeError(f"{who}: muscles must be a list of muscle names or paths, got the string {muscles!r} (one "
                        f"muscle: [{muscles!r}])")
    if muscles is not None:
        known = {m.path: m for m in chosen} | {m.name: m for m in chosen}
        missing = [n for n in muscles if n not in known]
        if missing:
            raise KeyError(f"{who}: " + did_you_mean(missing[0], sorted(m.path for m in chosen), "muscle"))
        chosen = [known[n] for n in muscles]
    return chosen


def scale_max_isometric_force(model: Model, factor: float, muscles: Sequence[str] | None = None) -> Model:
    """Multiply the maximum isometric force of every muscle, or of ``muscles`` (names or paths), by ``factor``
    (> 0): a weaker or stronger subject, or one weak muscle group."""
    require_model(model, "scale_max_isometric_force")
    factor = finite_number(factor, "scale_max_isometric_force: factor", 0, False)
    for m in _muscles(model, muscles, "scale_max_isometric_force"):
        m.muscle.max_isometric_force = m.muscle.max_isometric_force * float(factor)
    _record(model, "scale_max_isometric_force", factor=float(factor), muscles=None if muscles is None else list(muscles))
    return model


def ignore_passive_fiber_forces(model: Model) -> Model:
    """Switch off every DeGrooteFregly2016 muscle's passive fiber force (``ignore_passive_fiber_force``)."""
    require_model(model, "ignore_passive_fiber_forces")
    for m in model.muscles:
        m.muscle.ignore_passive_fiber_force = True
    _record(model, "ignore_passive_fiber_forces")
    return model


def scale_active_fiber_force_curve_width(model: Model, scale_factor: float) -> Model:
    """Set every DeGrooteFregly2016 muscle's ``active_force_width_scale`` to ``scale_factor`` (≥ 1; Moco's
    ``ModOpScaleActiveFiberForceCurveWidthDGF``, which sets the property rather than multiplying it)."""
    require_model(model, "scale_active_fiber_force_curve_width")
    scale_factor = finite_number(scale_factor, "scale_active_fiber_force_curve_width: scale_factor", 1.0)
    for m in model.muscles:
        m.muscle.active_force_width_scale = float(scale_factor)
    _record(model, "scale_active_fiber_force_curve_width", scale_factor=float(scale_factor))
    return model


def set_tendon_compliance(model: Model, mode: str, muscles: Sequence[str] | None = None) -> Model:
    """Tendons ``"rigid"`` (``ignore_tendon_compliance``), or the compliance dynamics ``"explicit"`` / ``"implicit"``.

    ``"explicit"`` and ``"implicit"`` set ``tendon_compliance_dynamics_mode`` and leave each muscle's
    ``ignore_tendon_compliance`` as it is (Moco's ``ModOpTendonComplianceDynamicsModeDGF``); ``muscles``
    (paths or names) limits the change, as a study may make only some tendons compliant.
    """
    require_model(model, "set_tendon_compliance")
    if mode not in ("rigid", "explicit", "implicit"):
        raise ValueError(f"set_tendon_compliance: mode must be 'rigid', 'explicit' or 'implicit', got {mode!r}")
    for m in _muscles(model, muscles, "set_tendon_compliance"):
        if mode == "rigid":
            m.muscle.ignore_tendon_compliance = True
        else:
            m.muscle.tendon_compliance_dynamics_mode = mode
    _record(model, "set_tendon_compliance", mode=mode, muscles=None if muscles is None else list(muscles))
    return model


def add_external_loads(model: Model, loads: str | Path, data: str | Path | None = None,
                       sha256: dict[str, str] | None = None) -> Model:
    """Apply the forces of an OpenSim external-loads file (Moco's ``ModOpAddExternalLoads``).

    Parameters
    ----------
    model : Model
        Edited in place (one :class:`~moco_lab.modeling.external_loads.ExternalForce` per enabled force of the
        file, at ``/componentset/externalloads/<name>``) and returned.
    loads : path
        The ``ExternalLoads`` ``.xml`` (OpenSim 3.x or 4.x).
    data : path, optional
        The force-plate table; default: the ``datafile`` the ``.xml`` names, next to it.
    sha256 : dict, optional
        ``{"loads": ..., "data": ...}``: the files' SHA-256 when a study was saved (a study file records them);
        a ``ValueError`` if either file changed since.

    Raises
    ------
    ValueError, KeyError
        See :func:`~moco_lab.modeling.external_loads.external_forces`; ``KeyError`` also for a body the model
        does not have. On any error the model is left as it was (no force of the file added).
    """
    require_model(model, "add_external_loads")
    for label, f in (("loads", loads), ("data", data)):
        if not (f is None and label == "data") and not isinstance(f, (str, os.PathLike)):
            raise TypeError(f"add_external_loads: {label} must be a path to a file, got {type(f).__name__}")
    files = {"loads": Path(loads), "data": Path(data) if data is not None else read_external_loads(loads).datafile}
    hashes = {k: file_sha256(p) for k, p in files.items() if p is not None and p.is_file()}
    changed = [str(files[k]) for k, h in (sha256 or {}).items() if hashes.get(k) != h]
    if changed:
        raise ValueError(f"add_external_loads: {changed} changed since they were read for this study (SHA-256 "
                         "differs): the study would not be the same problem. Restore the files, or apply the loads "
                         "again and pose the study on them.")
    elements = list(external_forces(loads, data))   # the files are read whole before the model changes
    before = list(model.elements)
    try:
        for element in elements:
            model.add_force_element(element)
    except Exception:
        model.elements[:] = before   # all or nothing: a failing force leaves the model as it was
        raise
    _record(model, "add_external_loads", loads=str(Path(loads).resolve()),
            data=None if data is None else str(Path(data).resolve()), sha256=hashes)
    return model


def remove_muscles(model: Model) -> Model:
    """Remove every muscle (their states and controls go with them)."""
    require_model(model, "remove_muscles")
    model.muscles.clear()
    _record(model, "remove_muscles")
    return model


def _located(path: str | Path) -> Path:
    """A file, or one shipped with moco_lab by that name (``"subject_walk_scaled_FunctionBasedPathSet.xml"``)."""
    path = Path(path)
    if path.is_file():
        return path
    if path.name != str(path):
        raise FileNotFoundError(f"no file {str(path)!r}")
    return opensim_file(path.name)  # FileNotFoundError with the shipped files' names


def read_function_based_paths(path: str | Path) -> dict[str, FunctionBasedPath]:
    """The paths of an OpenSim ``Set<FunctionBasedPath>`` file (what ``PolynomialPathFitter`` writes), by the path of
    the force each belongs to (the entry's name, e.g. ``/forceset/soleus_r``).

    Read: ``coordinate_paths`` and a ``length_function`` that is a ``MultivariatePolynomialFunction``. Moment-arm and
    lengthening-speed functions, which OpenSim would use instead of the length's derivatives, are refused by name
    (moco_lab derives both from the length).
    """
    import xml.etree.ElementTree as ET

    path = _located(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ValueError(f"{path.name}: not a readable XML file ({e})") from None
    out: dict[str, FunctionBasedPath] = {}
    for el in root.iter("FunctionBasedPath"):
        name = el.get("name", "")
        where = f"{path.name}: the FunctionBasedPath {name!r}"
        for tag in ("moment_arm_functions", "lengthening_speed_function"):
            holder = el.find(tag)
            if holder is not None and len(holder):
                raise ValueError(f"{where} has {tag}: not supported (moco_lab derives moment arms and speeds from "
                                 "the length function)")
        fn = el.find("length_function/MultivariatePolynomialFunction")
        if fn is None:
            kinds = [c.tag for c in (el.find("length_function") or [])]
            raise ValueError(f"{where}: the length function must be a MultivariatePolynomialFunction, found {kinds}")
        try:
            length = MultivariatePolynomialFunction(
                [float(v) for v in (fn.findtext("coefficients") or "").split()],
                int(fn.findtext("dimension") or 0), int(fn.findtext("order") or 0))
            out[name] = FunctionBasedPath((el.findtext("coordinate_paths") or "").split(), length)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    if not out:
        raise ValueError(f"{path.name}: no FunctionBasedPath in the file")
    return out


def replace_paths_with_function_based_paths(model: Model, paths: str | Path, sha256: str | None = None) -> Model:
    """Replace muscles' geometry paths with the function-based paths of a file (Moco's
    ``ModOpReplacePathsWithFunctionBasedPaths``): each entry of the file names the force whose path it replaces.

    ``sha256``: the file's SHA-256 when a study was saved (a study file records it); a ``ValueError`` if the file
    changed since.

    Raises
    ------
    KeyError
        An entry names a muscle the model does not have, or a coordinate it does not have (e.g. one welded by
        ``read_osim(..., weld=[...])``); the model is left unchanged.
    """
    require_model(model, "replace_paths_with_function_based_paths")
    if not isinstance(paths, (str, os.PathLike)):
        raise TypeError(f"replace_paths_with_function_based_paths: paths must be a path to a file, got "
                        f"{type(paths).__name__}")
    paths = _located(paths)
    if sha256 is not None and file_sha256(paths) != sha256:
        raise ValueError(f"replace_paths_with_function_based_paths: {paths} changed since it was read for this study "
                         "(SHA-256 differs): the study would not be the same problem")
    table = read_function_based_paths(paths)
    by_path = {m.path: m for m in model.muscles}
    for name, fbp in table.items():  # everything checked before anything changes
        if name not in by_path:
            raise KeyError(f"replace_paths_with_function_based_paths: {paths.name} has a path for {name!r}; "
                           + did_you_mean(name, sorted(by_path), "muscle"))
        for c in fbp.coordinates:
            try:
                model.coordinate(c)
            except KeyError as e:
                raise KeyError(f"replace_paths_with_function_based_paths: the path of {name} depends on {c!r}, "
                               f"which is not a coordinate of the model ({e.args[0]})") from None
    for name, fbp in table.items():
        by_path[name].geometry = fbp
    _record(model, "replace_paths_with_function_based_paths", paths=str(paths.resolve()), sha256=file_sha256(paths))
    return model


#: Operators by the name a study file records.
OPERATORS = {"scale_max_isometric_force": scale_max_isometric_force,
             "scale_active_fiber_force_curve_width": scale_active_fiber_force_curve_width,
             "ignore_passive_fiber_forces": ignore_passive_fiber_forces,
             "set_tendon_compliance": set_tendon_compliance, "remove_muscles": remove_muscles,
             "add_external_loads": add_external_loads,
             "replace_paths_with_function_based_paths": replace_paths_with_function_based_paths}


def apply_operators(model: Model, operators: Sequence) -> Model:
    """Apply recorded operators (``[[name, kwargs], ...]`` from ``model.spec["operators"]``) in order."""
    if isinstance(operators, (str, bytes)) or not isinstance(operators, Sequence):
        raise TypeError(f"apply_operators: operators must be a list of [name, kwargs] pairs, got "
                        f"{type(operators).__name__}")
    for i, item in enumerate(operators):
        if isinstance(item, str) or len(item) != 2 or not isinstance(item[1], dict):
            raise ValueError(f"apply_operators: operators[{i}] is {item!r}, not a pair [name, {{argument: value}}]")
    for name, kwargs in operators:
        if name not in OPERATORS:
            raise ValueError(f"unknown model operator {name!r}; known: {sorted(OPERATORS)}")
        OPERATORS[name](model, **kwargs)
    return model
