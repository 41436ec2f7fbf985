"""Measured loads applied to a model: OpenSim's ``ExternalForce`` and Moco's ``ModOpAddExternalLoads``.

An :class:`ExternalForce` pushes on one body with a force, a point of application and a torque that are *data*:
columns of a force-plate table (``.mot``/``.sto``), functions of time. The element hands them to the engine as
time-dependent inputs (:meth:`~moco_lab.modeling.forces.ForceElement.input_names`), so the compiled equations take
them at each node as known numbers; a collocation problem with external loads therefore needs its time grid fixed
before the solve (both ends of the time interval fixed, as in every tracking problem).

Between samples the data are interpolated as OpenSim 4.6 does (``ExternalForce::extendConnectToModel``): a
natural cubic interpolating spline through every sample (``GCVSpline`` of degree 3 with zero error variance) when
there are four samples or more, piecewise linear with two or three, constant with one; outside the samples the
spline's end cubics continue.

:func:`external_forces` reads an OpenSim external-loads ``.xml`` (and the data file it names) into one element
per force, at OpenSim's paths ``/componentset/externalloads/<force name>``;
:func:`moco_lab.modeling.operators.add_external_loads` adds them to a model, as Moco's ``ModOpAddExternalLoads``
does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..results.external_loads import external_force_data, read_external_loads
from ..results.sto import read_table
from .force_element import ForceContext, ForceContribution, ForceElement

__all__ = ["ExternalForce", "external_forces", "EXTERNAL_LOADS_PATH"]

#: Where ``ModOpAddExternalLoads`` puts the forces of an external-loads file in an OpenSim 4.6 model.
EXTERNAL_LOADS_PATH = "/componentset/externalloads"
_AXES = "xyz"


def _interpolant(time: np.ndarray, values: np.ndarray):
    """OpenSim's interpolant of one data column (see the module docstring): a callable of time."""
    from scipy.interpolate import CubicSpline

    if time.size == 1:
        c = float(values[0])
        return lambda t: np.full(np.shape(t), c)
    if time.size < 4:
        return lambda t: np.interp(t, time, values)
    return CubicSpline(time, values, bc_type="natural", extrapolate=True)


@dataclass(repr=False)
class ExternalForce(ForceElement):
    """A measured force (and torque) applied to a body: OpenSim's ``ExternalForce``.

    Parameters
    ----------
    path : str
        The element's path, e.g. ``/componentset/externalloads/right``.
    body : str
        Body the force acts on (OpenSim's ``applied_to_body``: a body name or path).
    time : array (T,), s
        Sample times, strictly increasing.
    force : array (T, 3), N
        Force vector, in the frame ``force_expressed_in`` (``"ground"`` or a body).
    point : array (T, 3), m, optional
        Point of application in the frame ``point_expressed_in``; ``None``: the body's origin. A point in ground
        (a centre of pressure) is applied to the material point of ``body`` that is there at that instant.
    torque : array (T, 3), N·m, optional
        Torque (e.g. a force plate's free moment), in ``force_expressed_in``.
    force_expressed_in, point_expressed_in : str
        ``"ground"`` or a body.

    Inputs (time-dependent, see :meth:`input_names`): ``<path>/force_x``, ``_y``, ``_z``, then ``point_*`` and
    ``torque_*`` when given. Outputs: ``force`` (N, world frame), ``point`` (m, world frame), ``torque`` (N·m,
    world frame).
    """

    path: str
    body: str
    time: np.ndarray
    force: np.ndarray
    point: np.ndarray | None = None
    torque: np.ndarray | None = None
    force_expressed_in: str = "ground"
    point_expressed_in: str = "ground"
    _splines: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        self.time = np.asarray(self.time, float).reshape(-1)
        if self.time.size == 0 or not np.all(np.isfinite(self.time)) or np.any(np.diff(self.time) <= 0):
            raise ValueError(f"{self.path}: time must be non-empty, finite and strictly increasing")
        for name in ("force", "point", "torque"):
            value = getattr(self, name)
            if value is None:
                continue
            value = np.asarray(value, float)
            if value.shape != (self.time.size, 3):
                raise ValueError(f"{self.path}: {name} must have shape ({self.time.size}, 3) (one row per sample "
                                 f"time, x y z), got {value.shape}")
            if not np.all(np.isfinite(value)):
                row = int(np.argwhere(~np.isfinite(value))[0, 0])
                raise ValueError(f"{self.path}: {name} is not finite at t = {self.time[row]:g} s (row {row}); "
                                 "fill or trim gaps in the data before applying it")
            setattr(self, name, value)

    def _parts(self) -> list[tuple[str, np.ndarray]]:
        return [(n, v) for n, v in (("force", self.force), ("point", self.point), ("torque", self.torque))
                if v is not None]

    def input_names(self) -> list[str]:
        return [f"{self.path}/{name}_{a}" for name, _ in self._parts() for a in _AXES]

    def input_values(self, time: np.ndarray) -> dict[str, np.ndarray]:
        t = np.asarray(time, float)
        out = {}
        for name, data in self._parts():
            for k, a in enumerate(_AXES):
                key = f"{self.path}/{name}_{a}"
                if key not in self._splines:
                    self._splines[key] = _interpolant(self.time, data[:, k])
                out[key] = np.asarray(self._splines[key](t), float)
        return out

    def body_names(self) -> list[str]:
        return list(dict.fromkeys(b for b in (self.body, self.force_expressed_in, self.point_expressed_in)
                                  if b not in ("ground", "world")))

    def description(self) -> dict:
        # the data are inputs of the equations, not part of them: a digest is enough to tell elements apart
        out = {"type": type(self).__name__, "path": self.path, "body": self.body,
               "force_expressed_in": self.force_expressed_in, "point_expressed_in": self.point_expressed_in}
        for name, data in [("time", self.time), *self._parts()]:
            out[name] = {"shape": list(data.shape), "sum": float(np.sum(data)), "sum_sq": float(np.sum(data ** 2))}
        return out

    def output_units(self) -> dict[str, str]:
        return {"force": "N", "point": "m", "torque": "N·m"}

    @staticmethod
    def _to_world(ctx: ForceContext, frame: str, vector: list) -> list:
        if frame in ("ground", "world"):
            return vector
        origin = ctx.point_position(frame, (0.0, 0.0, 0.0))
        axes = [[a - o for a, o in zip(ctx.point_position(frame, e), origin)]
                for e in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))]
        return [sum(axes[k][i] * vector[k] for k in range(3)) for i in range(3)]

    def contribute(self, ctx: ForceContext) -> ForceContribution:
        out = ForceContribution()

        def data(name: str) -> list:
            return [ctx.input(f"{self.path}/{name}_{a}") for a in _AXES]

        force = self._to_world(ctx, self.force_expressed_in, data("force"))
        if self.point is None:
            point = ctx.point_position(self.body, (0.0, 0.0, 0.0))
        elif self.point_expressed_in in ("ground", "world"):
            point = data("point")
        else:
            point = ctx.point_position(self.point_expressed_in, data("point"))
        out.point_forces.append((self.body, point, force))
        out.outputs["force"] = force
        out.outputs["point"] = point
        if self.torque is not None:
            torque = self._to_world(ctx, self.force_expressed_in, data("torque"))
            out.body_moments.append((self.body, torque))
            out.outputs["torque"] = torque
        return out


def external_forces(loads: str | Path, data: str | Path | None = None) -> list[ExternalForce]:
    """The forces of an OpenSim external-loads file as :class:`ExternalForce` elements (at OpenSim's paths
    ``/componentset/externalloads/<force name>``); :func:`moco_lab.modeling.operators.add_external_loads` adds them
    to a model (Moco's ``ModOpAddExternalLoads``).

    Parameters
    ----------
    loads : path
        The ``ExternalLoads`` ``.xml`` (OpenSim 3.x or 4.x); disabled forces are left out.
    data : path, optional
        The force-plate table; default: the ``datafile`` the ``.xml`` names, next to it.

    Raises
    ------
    ValueError
        The file names no data file and none is given, or a force's data are not finite.
    KeyError
        A force's columns are missing from the data (the message lists close names).
    """
    spec = read_external_loads(loads)
    source = Path(data) if data is not None else spec.datafile
    if source is None:
        raise ValueError(f"external loads {str(loads)!r} name no data file; pass data=")
    time, columns, _ = read_table(source)
    per_force = external_force_data(spec, columns)
    return [ExternalForce(f"{EXTERNAL_LOADS_PATH}/{f.name}", f.applied_to_body, time, per_force[f.name]["force"],
                          per_force[f.name]["point"], per_force[f.name]["torque"],
                          force_expressed_in=f.force_expressed_in_body, point_expressed_in=f.point_expressed_in_body)
            for f in spec.forces]
