"""Model outputs along a trajectory (Moco's ``MocoStudy::analyze``): contact forces, muscle forces, COM, ...

Every force element names its outputs (``<element path>/<name>``, e.g.
``/forceset/heel_r/normal_force``, ``/forceset/soleus_r/tendon_force``) and
the model adds ``/com_position`` and ``/com_velocity``. :func:`analyze`
evaluates them with the model's compiled dynamics — the same equations the
optimizer used — at every time of a trajectory (a solution, a guess, a
simulation)::

    table = ml.analyze(model, solution, [".*normal_force", "/com_position"])
    table["/forceset/heel_r/normal_force"]      # (n,) N
    table["/com_position_y"]                    # vector outputs: one column per component
    ml.viz.plot_outputs(table)                  # one subplot per output, axes with units
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..engine.kernel import Kernel, kernel_for
from ..modeling.units import unit_of
from ..util.names import did_you_mean

if TYPE_CHECKING:
    from ..modeling.model import Model
    from ..results.trajectory import Trajectory

__all__ = ["OutputTable", "output_names", "analyze", "joint_reactions"]

_AXES = "xyz"


@dataclass
class OutputTable:
    """Outputs of a model along a trajectory.

    Attributes
    ----------
    time : ndarray (n,)
    columns : dict of str -> ndarray (n,)
        One column per scalar output; a vector output ``name`` gives columns
        ``name_x``, ``name_y``, ``name_z``.
    units : dict of str -> str
        Unit of each column (``""``: dimensionless; absent: unknown).
    outputs : list of str
        The output names evaluated, in order.
    """

    time: np.ndarray
    columns: dict[str, np.ndarray]
    units: dict[str, str] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise KeyError(did_you_mean(name, list(self.columns), "output column"))
        return self.columns[name]

    def __contains__(self, name: str) -> bool:
        return name in self.columns

    @property
    def names(self) -> list[str]:
        """Column names, in order."""
        return list(self.columns)

    def __repr__(self) -> str:
        return f"OutputTable({len(self.columns)} columns at {self.time.size} times)"


def output_names(model: Model, parameters: Sequence[str] = ()) -> list[str]:
    """Names of every output ``model`` offers (force elements' outputs, ``/com_position``, ``/com_velocity``)."""
    return kernel_for(model, tuple(parameters)).output_names()


def _select(available: list[str], patterns) -> list[str]:
    """Outputs matching ``patterns``: exact names or regular expressions (Moco's ``analyze`` uses regexes)."""
    if patterns is None:
        return list(available)
    if isinstance(patterns, str):
        patterns = [patterns]
    chosen: list[str] = []
    for pattern in patterns:
        if pattern in available:
            hits = [pattern]
        else:
            try:
                rx = re.compile(pattern)
            except re.error as err:
                raise ValueError(f"output pattern {pattern!r} is not a valid regular expression: {err}") from None
            hits = [n for n in available if rx.fullmatch(n)]
        if not hits:
            raise KeyError(f"no model output matches {pattern!r}. " + did_you_mean(pattern, available, "output"))
        chosen += [h for h in hits if h not in chosen]
    return chosen


def _matrix(group: Mapping[str, np.ndarray], names: list[str], n: int, what: str) -> np.ndarray | None:
    if not names:
        return None
    missing = [nm for nm in names if nm not in group]
    if missing:
        raise KeyError(f"the trajectory has no {what} {missing[:3]}{' ...' if len(missing) > 3 else ''}; "
                       f"the model needs all of {names[:3]}{' ...' if len(names) > 3 else ''}")
    return np.column_stack([np.asarray(group[nm], float) for nm in names]).reshape(n, len(names))


def analyze(model: Model, trajectory: Trajectory, outputs: Sequence[str] | str | None = None,
            parameters: Mapping[str, float] | None = None) -> OutputTable:
    """Evaluate model outputs at every time of ``trajectory``.

    Parameters
    ----------
    model : Model
    trajectory : Trajectory or Solution
        Needs the model's states (coordinates, speeds, muscle states) and, for
        outputs that depend on them, its controls (zero if the model has none).
        Accelerations (implicit-mode solutions' ``…/accel``) and Lagrange
        multipliers are used when an output needs them; otherwise they are
        not required.
    outputs : str or list of str, optional
        Output names or regular expressions matched against whole names
        (``".*normal_force"``, ``"/forceset/soleus_r/.*"``). Default: all.
    parameters : dict of str -> float, optional
        Property values to use instead of the model's (default: the
        trajectory's optimized parameters, if any).

    Returns
    -------
    OutputTable

    Raises
    ------
    KeyError
        A name or pattern matches no output (with suggestions), or the
        trajectory lacks a state or control the model needs.
    """
    params = _parameters(model, trajectory, parameters)
    kernel = kernel_for(model, tuple(params))
    return _evaluate(model, kernel, trajectory, _select(kernel.output_names(), outputs), params)


def _parameters(model: Model, trajectory: Trajectory, parameters: Mapping[str, float] | None) -> dict:
    """The property values to evaluate with: ``parameters``, else the trajectory's optimized ones."""
    params = dict(trajectory.parameters) if parameters is None else dict(parameters)
    props = model.properties()
    unknown = [k for k in params if k not in props]
    if unknown and parameters is not None:
        raise KeyError(did_you_mean(unknown[0], list(props), "model property"))
    return {k: float(v) for k, v in params.items() if k in props}


def _evaluate(model: Model, kernel, trajectory: Trajectory, names: list[str], params: dict) -> OutputTable:
    """The outputs ``names`` of ``kernel`` along ``trajectory`` (see :func:`analyze`)."""
    t = np.asarray(trajectory.time, float)
    n = t.size
    states, controls = trajectory.states, trajectory.controls
    coords = model.coordinates
    Q = _matrix(states, [c.value_path for c in coords], n, "states")
    U = _matrix(states, [c.speed_path for c in coords], n, "states")
    if Q is None:
        Q = U = np.zeros((n, 0))
    Z = _matrix(states, model.auxiliary_state_names(), n, "states")
    X = _matrix(controls, model.control_names(), n, "controls")
    derivs = trajectory.derivatives
    W = None
    if model.implicit_derivative_names() and all(nm in derivs for nm in model.implicit_derivative_names()):
        W = _matrix(derivs, model.implicit_derivative_names(), n, "derivatives")
    mult_names = model.multiplier_names()
    L = None
    if mult_names and all(nm in trajectory.multipliers for nm in mult_names):
        L = _matrix(trajectory.multipliers, mult_names, n, "multipliers")
    P = np.array([params[k] for k in params], float)
    E = kernel.inputs_at(t)  # time-dependent inputs (applied external loads), at the trajectory's times

    used = kernel.output_dependence(names)

    def needs(block: str) -> bool:
        return block in used

    A = None
    if needs("a"):
        if all(c.accel_path in derivs for c in coords):
            A = _matrix(derivs, [c.accel_path for c in coords], n, "derivatives")
        else:
            A = kernel.evaluate(Q, U, X if X is not None else np.zeros((n, 0)), P, Z=Z, W=W, L=L, E=E)["A"]
    for block, value, what in (("lam", L, "Lagrange multipliers"), ("w", W, "implicit derivatives")):
        if value is None and needs(block):
            raise KeyError(f"the outputs {names} depend on {what}, which the trajectory does not have")
    values = kernel.outputs(names, Q, U, X=X, P=P, Z=Z, A=A, W=W, L=L, E=E)
    columns: dict[str, np.ndarray] = {}
    units: dict[str, str] = {}
    for name in names:
        v = np.asarray(values[name], float).reshape(n, -1)
        unit = unit_of(model, name)
        if v.shape[1] == 1:
            cols = [name]
        else:
            cols = [f"{name}_{_AXES[k]}" if v.shape[1] <= 3 else f"{name}_{k}" for k in range(v.shape[1])]
        for k, col in enumerate(cols):
            columns[col] = v[:, k].copy()
            if unit is not None:
                units[col] = unit
    return OutputTable(t.copy(), columns, units, names)


_REACTION_COLUMNS = ("moment_x", "moment_y", "moment_z", "force_x", "force_y", "force_z")


def joint_reactions(model: Model, trajectory: Trajectory, joints: Sequence[str] | str, loads_frame: str = "parent",
                    expressed_in: str | None = None, *, kernel: Kernel | None = None) -> OutputTable:
    """The reaction loads of ``joints`` along ``trajectory`` (what Moco's ``JointReactionGoal`` measures; OpenSim's
    ``Joint::calcReactionOn{Parent,Child}ExpressedInGround``, re-expressed).

    Parameters
    ----------
    joints : str or list of str
        Joint names or paths (``"walker_knee_r"``, ``"/jointset/walker_knee_r"``).
    loads_frame : {"parent", "child"}
        The load on the parent (at the joint frame on it) or on the child (at the joint frame on it).
    expressed_in : str, optional
        Default the joint frame of ``loads_frame``; ``"/ground"`` or a body (name or ``/bodyset/<body>``).
    kernel : Kernel, optional
        The model's equations already derived, to reuse: a transcription's ``kernel`` (e.g. of the study or
        :class:`~moco_lab.tools.inverse.Inverse` that solved ``trajectory``; a model with many wrapped paths takes
        seconds to derive). Default: derived now. It must be ``model``'s, with the trajectory's parameters.

    Returns
    -------
    OutputTable
        Columns ``<joint path>/reaction_on_<loads_frame>[_in_<frame>]_moment_x`` … ``_force_z`` (N·m, N). The
        accelerations are the trajectory's (``…/accel``: implicit solutions, inverse solutions), else those of the
        model's forward dynamics at its states and controls.
    """
    joints = [joints] if isinstance(joints, str) else list(joints)
    params = _parameters(model, trajectory, None)
    if kernel is None:
        kernel = kernel_for(model, tuple(params))
    elif kernel.model is not model or list(kernel.parameters) != list(params):
        raise ValueError("joint_reactions: the kernel is not this model's with the trajectory's parameters "
                         f"({list(params)}; the kernel's: {list(kernel.parameters)})")
    names = [kernel.system.add_joint_reaction_output(j, loads_frame, expressed_in) for j in joints]
    table = _evaluate(model, kernel, trajectory, names, params)
    columns, units = {}, {}
    for name in names:
        for k, label in enumerate(_REACTION_COLUMNS):
            col = f"{name}_{label}"
            columns[col] = table.columns[f"{name}_{k}"]
            units[col] = "N·m" if label.startswith("moment") else "N"
    return OutputTable(table.time, columns, units, names)
