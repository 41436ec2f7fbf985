"""The optimal control problem (Moco's ``MocoProblem``; the Moco paper, Eq. 1).

Set the model, time bounds, state and control bounds *by name* (with separate
initial and final bounds), goals, path constraints and parameters::

    problem.set_model(ml.models.sliding_mass())
    problem.set_time_bounds(0, (0, 5))
    problem.set_state_info("/slider/position/value", (-5, 5), 0, 1)
    problem.set_control_info("/actuator", (-50, 50))
    problem.add_goal(ml.FinalTimeGoal())

Defaults (as Moco): coordinate values take the coordinate's range, speeds
``[-50, 50]``, controls the actuator's control limits.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from pydrake.multibody.plant import MultibodyPlant

from ..modeling.model import Model
from ..util.bounds import Bounds
from ..util.names import did_you_mean
from .bound_constraints import BoundConstraint
from .goals import Goal, goal_from_dict
from .output_constraints import OutputPathConstraint

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..util.bounds import BoundsLike



@dataclass
class VariableInfo:
    """Bounds of one state or control: over the whole motion, initial, final."""

    name: str
    bounds: Bounds | None = None
    initial: Bounds | None = None
    final: Bounds | None = None

    def to_dict(self) -> dict:
        """Bounds as plain data, for study files."""
        return {k: (getattr(self, k).as_list() if getattr(self, k) is not None else None)
                for k in ("bounds", "initial", "final")}


@dataclass
class Parameter:
    """A time-invariant parameter bound to a model property (Moco ``MocoParameter``).

    Parameters
    ----------
    name : str
        Name of the parameter in trajectories (e.g. ``"mass"``).
    property : str
        Model property path, e.g. ``"/body/mass"`` or ``"/forceset/spring/stiffness"``
        (see :meth:`Model.properties`).
    bounds : (lower, upper)
        Stored as :class:`~moco_lab.util.bounds.Bounds`; assigning a pair later (``parameter.bounds = (0, 300)``)
        is checked and converted the same way.
    """

    name: str
    property: str
    bounds: tuple[float, float]

    def __setattr__(self, key: str, value: Any) -> None:
        if key == "bounds":
            value = Bounds.parse(value, f"parameter {self.name!r} bounds")
            if value is None:
                raise ValueError(f"Parameter {self.name!r} needs bounds")
        super().__setattr__(key, value)


@dataclass
class PathConstraint:
    """``lower <= func(t, states, controls, parameters) <= upper`` at every mesh point.

    ``func`` returns a sequence of length ``len(lower)``; its arguments are
    :class:`~moco_lab.util.names.NamedValues` (floats or Drake ``AutoDiffXd``).
    """

    name: str
    func: Callable
    lower: list[float]
    upper: list[float]

    def __post_init__(self):
        self.lower = np.atleast_1d(np.asarray(self.lower, float))
        self.upper = np.atleast_1d(np.asarray(self.upper, float))
        if self.lower.shape != self.upper.shape:
            raise ValueError(f"Path constraint {self.name!r}: lower and upper differ in length")
        if np.any(self.lower > self.upper):
            raise ValueError(f"Path constraint {self.name!r}: lower > upper")


class _NamesOnlyContext:
    """A goal context that knows the problem's names but computes nothing (for :meth:`Problem.validate`)."""

    def __init__(self, problem: "Problem"):
        model = problem.model
        self.model = model
        self.state_names = problem.state_names()
        self.control_names = problem.control_names()
        self.algebraic_names = model.accel_names() + model.implicit_derivative_names() + model.multiplier_names()
        self.parameter_names = [p.name for p in problem.parameters]
        self.total_mass = 1.0
        self.gravity = 9.80665

    def output(self, name: str) -> str:
        return name

    def output_size(self, name: str) -> int | None:
        return None

    def point_output(self, name: str, body: str, location: ArrayLike) -> tuple[str, str]:
        if body not in ("ground", "world", *self.model.body_paths, *self.model.body_paths.values()):
            raise KeyError(did_you_mean(body, ["ground", *self.model.body_paths], "body"))
        return f"{name}/position", f"{name}/velocity"

    def angular_velocity_output(self, name: str, body: str) -> str:
        self.point_output(name, body, (0.0, 0.0, 0.0))
        return f"{name}/angular_velocity"

    def rotation_output(self, name: str, body: str) -> str:
        self.point_output(name, body, (0.0, 0.0, 0.0))
        return f"{name}/rotation"

    def acceleration_output(self, name: str, body: str, gravity_offset: bool, expressed_in_body: bool) -> str:
        self.point_output(name, body, (0.0, 0.0, 0.0))
        return f"{name}/linear_acceleration"

    def generalized_force_output(self, name: str, force_paths: list[str]) -> str:
        return f"{name}/generalized_forces"

    def output_values(self, name: str, states: dict) -> np.ndarray:
        n = len(next(iter(states.values()))) if states else 0
        if name.endswith("/rotation"):
            return np.tile(np.eye(3).reshape(1, 9), (n, 1))
        return np.zeros((n, 3))

    def joint_reaction_output(self, joint: str, loads_frame: str, expressed_in: str | None) -> str:
        model = self.model
        known = model.joint_paths()
        key = joint if joint.startswith("/") else f"/jointset/{joint}"
        if key not in known:
            raise KeyError(did_you_mean(joint, sorted(known), "joint"))
        frames = ("/ground", "ground", *model.body_paths, *model.body_paths.values())
        if expressed_in and expressed_in not in frames:
            raise KeyError("expressed_in_frame_path: " + did_you_mean(expressed_in, ["/ground", *model.body_paths.values()],
                                                                      "frame"))
        return f"{key}/reaction_on_{loads_frame}"


class Problem:
    """An optimal control problem posed by name on a :class:`~moco_lab.modeling.model.Model`."""

    def __init__(self):
        self.model: Model | None = None
        self.time_initial: Bounds | None = None
        self.time_final: Bounds | None = None
        self._state_infos: dict[str, VariableInfo] = {}
        self._control_infos: dict[str, VariableInfo] = {}
        self._state_patterns: list[tuple[str, VariableInfo]] = []
        self._control_patterns: list[tuple[str, VariableInfo]] = []
        self.goals: list[Goal] = []
        self.path_constraints: list[PathConstraint] = []
        #: :class:`~moco_lab.ocp.bound_constraints.ControlBoundConstraint` and ``StateBoundConstraint`` objects
        self.bound_constraints: list[BoundConstraint] = []
        #: :class:`~moco_lab.ocp.output_constraints.OutputConstraint`, ``OutputBoundConstraint`` and
        #: ``FrameDistanceConstraint`` objects
        self.output_constraints: list[OutputPathConstraint] = []
        self.parameters: list[Parameter] = []

    # ------------------------------------------------------------------ model
    def set_model(self, model: Model) -> None:
        """Set the model (a :class:`Model`, or a finalized ``MultibodyPlant``)."""
        if isinstance(model, MultibodyPlant):
            model = Model.from_plant(model)
        if not isinstance(model, Model):
            raise TypeError(f"set_model expects a moco_lab Model or a MultibodyPlant, got {type(model).__name__}")
        self.model = model
        for name in self._state_infos:
            self._check_name(name, self.state_names(), "state")
        for name in self._control_infos:
            self._check_name(name, self.control_names(), "control")

    def _require_model(self) -> Model:
        if self.model is None:
            raise RuntimeError("No model: call problem.set_model(...) first.")
        return self.model

    def state_names(self) -> list[str]:
        """State names: coordinate values, then speeds (see :meth:`Model.state_names`)."""
        return self._require_model().state_names()

    def control_names(self) -> list[str]:
        """Control names (see :meth:`Model.control_names`)."""
        return self._require_model().control_names()

    @staticmethod
    def _check_name(name, names, what):
        if name not in names:
            raise KeyError(did_you_mean(name, names, what))

    # ----------------------------------------------------------------- bounds
    def set_time_bounds(self, initial: BoundsLike, final: BoundsLike) -> None:
        """Bounds on the initial and final time: a number (fixed) or ``(lower, upper)``."""
        ti = Bounds.parse(initial, "initial time")
        tf = Bounds.parse(final, "final time")
        if ti is None or tf is None:
            raise ValueError("set_time_bounds needs both initial and final time bounds")
        if tf.upper < ti.lower:
            raise ValueError(f"Final time bounds {tf.as_list()} lie before initial time bounds {ti.as_list()}")
        if tf.upper <= ti.lower or (ti.is_fixed and tf.is_fixed and tf.lower <= ti.lower):
            raise ValueError(f"Final time must be able to exceed the initial time (initial {ti.as_list()}, final {tf.as_list()})")
        self.time_initial, self.time_final = ti, tf

    def _info(self, name, bounds, initial, final, what) -> VariableInfo:
        b = Bounds.parse(bounds, f"{what} {name!r} bounds")
        i = Bounds.parse(initial, f"{what} {name!r} initial bounds")
        f = Bounds.parse(final, f"{what} {name!r} final bounds")
        for label, e in (("initial", i), ("final", f)):
            if b is not None and e is not None and not b.contains(e):
                raise ValueError(
                    f"{what} {name!r}: {label} bounds {e.as_list()} are outside its bounds {b.as_list()}"
                )
        return VariableInfo(name, b, i, f)

    def set_state_info(self, name: str, bounds: BoundsLike = None, initial: BoundsLike = None, final: BoundsLike = None) -> None:
        """Bounds of a state by name: ``bounds`` over the motion, ``initial``/``final`` at the ends.

        Each is ``None`` (default), a number (fixed value) or ``(lower, upper)``.
        """
        if self.model is not None:
            self._check_name(name, self.state_names(), "state")
        self._state_infos[name] = self._info(name, bounds, initial, final, "state")

    def set_control_info(self, name: str, bounds: BoundsLike = None, initial: BoundsLike = None,
                         final: BoundsLike = None) -> None:
        """Bounds of a control by name (see :meth:`set_state_info`)."""
        if self.model is not None:
            self._check_name(name, self.control_names(), "control")
        self._control_infos[name] = self._info(name, bounds, initial, final, "control")

    def set_state_info_pattern(self, pattern: str, bounds: BoundsLike = None, initial: BoundsLike = None,
                               final: BoundsLike = None) -> None:
        """Bounds for every state whose name fully matches the regular expression ``pattern``.

        Explicit :meth:`set_state_info` calls take precedence.
        """
        re.compile(pattern)
        if self.model is not None and not any(re.fullmatch(pattern, n) for n in self.state_names()):
            raise KeyError(f"State pattern {pattern!r} matches no state; states are {self.state_names()}")
        self._state_patterns.append((pattern, self._info(pattern, bounds, initial, final, "state pattern")))

    def set_control_info_pattern(self, pattern: str, bounds: BoundsLike = None, initial: BoundsLike = None,
                                 final: BoundsLike = None) -> None:
        """Bounds for every control whose name fully matches ``pattern``."""
        re.compile(pattern)
        if self.model is not None and not any(re.fullmatch(pattern, n) for n in self.control_names()):
            raise KeyError(f"Control pattern {pattern!r} matches no control; controls are {self.control_names()}")
        self._control_patterns.append((pattern, self._info(pattern, bounds, initial, final, "control pattern")))

    def state_info(self, name: str) -> VariableInfo:
        """The effective bounds of a state (explicit info, else pattern, else default)."""
        return self.state_infos([name])[0]

    def control_info(self, name: str) -> VariableInfo:
        """Effective bounds of control ``name`` (explicit settings, else patterns, else the model's defaults)."""
        return self.control_infos([name])[0]

    def state_infos(self, names: Sequence[str] | None = None) -> list[VariableInfo]:
        """:meth:`state_info` of each of ``names`` (default: every state, in order), the names checked at once."""
        known = self.state_names()
        names = known if names is None else self._checked(names, known, "state")
        return [self._effective(n, self._state_infos, self._state_patterns, self._default_state_bounds(n))
                for n in names]

    def control_infos(self, names: Sequence[str] | None = None) -> list[VariableInfo]:
        """:meth:`control_info` of each of ``names`` (default: every control, in order), the names checked at once."""
        known = self.control_names()
        names = known if names is None else self._checked(names, known, "control")
        model = self._require_model()
        return [self._effective(n, self._control_infos, self._control_patterns,
                                Bounds(*model.default_control_bounds(n))) for n in names]

    @classmethod
    def _checked(cls, names: Sequence[str], known: list[str], what: str) -> list[str]:
        names, known_set = list(names), set(known)
        for n in names:
            if n not in known_set:
                cls._check_name(n, known, what)
        return names

    def _default_state_bounds(self, name: str) -> Bounds:
        return Bounds(*self._require_model().default_state_bounds(name))

    @staticmethod
    def _effective(name, infos, patterns, default: Bounds) -> VariableInfo:
        info = VariableInfo(name, default)
        for pattern, pinfo in patterns:
            if re.fullmatch(pattern, name):
                info = VariableInfo(name, pinfo.bounds or default, pinfo.initial, pinfo.final)
        if name in infos:
            e = infos[name]
            info = VariableInfo(name, e.bounds or default, e.initial, e.final)
        for label in ("initial", "final"):
            ib = getattr(info, label)
            if ib is not None and not info.bounds.contains(ib):
                raise ValueError(f"{name!r}: {label} bounds {ib.as_list()} are outside its bounds {info.bounds.as_list()}")
        return info

    # ------------------------------------------------------- goals & friends
    def add_goal(self, goal: Goal) -> Goal:
        """Add a goal; its name must be unique in this problem. Returns the goal."""
        if not isinstance(goal, Goal):
            raise TypeError(f"add_goal expects a moco_lab goal, got {type(goal).__name__}")
        if any(g.name == goal.name for g in self.goals):
            raise ValueError(f"A goal named {goal.name!r} already exists; give each goal a unique name.")
        self.goals.append(goal)
        return goal

    def get_goal(self, name: str) -> Goal:
        """The goal named ``name`` (KeyError with suggestions)."""
        for g in self.goals:
            if g.name == name:
                return g
        raise KeyError(did_you_mean(name, [g.name for g in self.goals], "goal"))

    def remove_goal(self, name: str) -> None:
        """Remove the goal named ``name``."""
        self.goals.remove(self.get_goal(name))

    def add_path_constraint(self, name: str | BoundConstraint | OutputPathConstraint, func: Callable | None = None,
                            lower: ArrayLike | None = None, upper: ArrayLike | None = None
                            ) -> PathConstraint | BoundConstraint | OutputPathConstraint:
        """Add ``lower <= func(t, states, controls, parameters) <= upper`` at mesh points, or one of Moco's path
        constraints passed alone, as Moco's ``addPathConstraint``:
        :class:`~moco_lab.ocp.bound_constraints.ControlBoundConstraint`, ``StateBoundConstraint``,
        :class:`~moco_lab.ocp.output_constraints.OutputConstraint`, ``OutputBoundConstraint``,
        ``FrameDistanceConstraint``."""
        if isinstance(name, (BoundConstraint, OutputPathConstraint)):
            if func is not None or lower is not None or upper is not None:
                raise TypeError(f"add_path_constraint: a {type(name).__name__} is passed alone")
            if any(c.name == name.name for c in (*self.path_constraints, *self.bound_constraints,
                                                 *self.output_constraints)):
                raise ValueError(f"A path constraint named {name.name!r} already exists")
            (self.bound_constraints if isinstance(name, BoundConstraint) else self.output_constraints).append(name)
            return name
        if func is None or lower is None or upper is None:
            raise TypeError("add_path_constraint(name, func, lower, upper): func, lower and upper are needed (or pass "
                            "a ControlBoundConstraint or StateBoundConstraint alone)")
        pc = PathConstraint(name, func, lower, upper)
        self.path_constraints.append(pc)
        return pc

    def add_parameter(self, name: str, property: str, bounds: BoundsLike) -> Parameter:
        """Optimize a model property (e.g. ``"/body/mass"``) as a time-invariant parameter."""
        if any(p.name == name for p in self.parameters):
            raise ValueError(f"A parameter named {name!r} already exists")
        if self.model is not None:
            self.model.property(property)
        if any(p.property == property for p in self.parameters):
            raise ValueError(f"Property {property!r} is already a parameter")
        p = Parameter(name, property, bounds)
        self.parameters.append(p)
        return p

    def _add_goal_parameters(self, model: Any) -> None:
        """The enabled goals' own parameters as model components and problem parameters (idempotent)."""
        from ..modeling.scale_factor import ScaleFactor

        paths = {e.path for e in model.force_elements}
        for goal in self.goals:
            for name, bounds in (goal.goal_parameters() if goal.enabled else ()):
                path = f"/{name}"
                if path not in paths:
                    model.add_force_element(ScaleFactor(path))
                    paths.add(path)
                prop = f"{path}/scale_factor"
                existing = [p for p in self.parameters if p.name == name]
                if not existing:
                    self.add_parameter(name, prop, bounds)
                elif existing[0].property != prop:
                    raise ValueError(f"Goal {goal.name!r}: its scale factor {name!r} has the name of the parameter "
                                     f"on {existing[0].property!r}; give it another name")
                else:
                    existing[0].bounds = bounds

    # ------------------------------------------------------------- validation
    def validate(self) -> None:
        """Check the whole problem; raise a clear error naming what is wrong.

        Goals' own parameters (Moco's scale factors, :meth:`Goal.goal_parameters`) become problem parameters here,
        once: a :class:`~moco_lab.modeling.scale_factor.ScaleFactor` component ``/<name>`` in the model and a
        parameter ``<name>`` on its ``scale_factor``, as Moco adds its ``MocoScaleFactor`` s when it initializes.
        """
        model = self._require_model()
        self._add_goal_parameters(model)
        if self.time_initial is None or self.time_final is None:
            raise RuntimeError("No time bounds: call problem.set_time_bounds(initial, final) first.")
        for name in self._state_infos:
            self._check_name(name, self.state_names(), "state")
        for name in self._control_infos:
            self._check_name(name, self.control_names(), "control")
        self.state_infos()
        self.control_infos()
        for p in self.parameters:
            model.property(p.property)
        ctx = _NamesOnlyContext(self)
        for g in self.goals:
            if g.enabled:
                g.bind(ctx)  # checks the names the goal uses; the transcription binds again
        names = [g.name for g in self.goals]
        if len(set(names)) != len(names):
            raise ValueError(f"Goal names must be unique: {names}")
        fixed_times = self.time_initial.lower == self.time_initial.upper and self.time_final.lower == self.time_final.upper
        for c in (*self.bound_constraints, *self.output_constraints):
            if isinstance(c, BoundConstraint):
                c.check_names(self.control_names() if c.kind == "control" else self.state_names())
            if c.time_varying() and not fixed_times:
                raise ValueError(f"{type(c).__name__} {c.name!r}: its bounds vary with time and this problem's initial "
                                 "or final time is free, so the bounds would move with the final time; moco_lab "
                                 "takes time-varying bounds on a fixed time grid (set_time_bounds with single "
                                 "values) or constant bounds on a free one")

    def to_dict(self) -> dict:
        """A JSON-ready description (used by :meth:`Study.save`)."""
        if self.path_constraints:
            raise TypeError("Path constraints hold Python functions; this problem cannot be saved to a file.")
        if self.bound_constraints or self.output_constraints:
            raise TypeError("Study files do not hold Moco's path constraints (ControlBoundConstraint, "
                            "StateBoundConstraint, OutputConstraint, OutputBoundConstraint, FrameDistanceConstraint) "
                            "yet; save the code that adds them.")
        owned = {name for g in self.goals for name, _ in g.goal_parameters()}
        return {
            "time_bounds": [self.time_initial.as_list() if self.time_initial else None,
                            self.time_final.as_list() if self.time_final else None],
            "state_infos": {k: v.to_dict() for k, v in self._state_infos.items()},
            "control_infos": {k: v.to_dict() for k, v in self._control_infos.items()},
            "state_info_patterns": [[p, v.to_dict()] for p, v in self._state_patterns],
            "control_info_patterns": [[p, v.to_dict()] for p, v in self._control_patterns],
            "goals": [g.to_dict() for g in self.goals],
            # goals' own parameters (scale factors) are the goals' to recreate, with their model components
            "parameters": [{"name": p.name, "property": p.property, "bounds": p.bounds.as_list()}
                           for p in self.parameters if p.name not in owned],
        }

    @classmethod
    def from_dict(cls, d: dict, model: Model) -> "Problem":
        """Rebuild a problem written by :meth:`to_dict`, on ``model``."""
        def b(x):
            return None if x is None else Bounds.from_list(x)

        p = cls()
        p.set_model(model)
        ti, tf = d["time_bounds"]
        if ti is not None:
            p.set_time_bounds(b(ti), b(tf))
        for k, v in d.get("state_infos", {}).items():
            p.set_state_info(k, b(v["bounds"]), b(v["initial"]), b(v["final"]))
        for k, v in d.get("control_infos", {}).items():
            p.set_control_info(k, b(v["bounds"]), b(v["initial"]), b(v["final"]))
        for pat, v in d.get("state_info_patterns", []):
            p.set_state_info_pattern(pat, b(v["bounds"]), b(v["initial"]), b(v["final"]))
        for pat, v in d.get("control_info_patterns", []):
            p.set_control_info_pattern(pat, b(v["bounds"]), b(v["initial"]), b(v["final"]))
        for g in d.get("goals", []):
            p.add_goal(goal_from_dict(g))
        for par in d.get("parameters", []):
            p.add_parameter(par["name"], par["property"], b(par["bounds"]))
        return p

    def __repr__(self) -> str:
        m = self.model.name if self.model else None
        return f"<Problem model={m!r} goals={[g.name for g in self.goals]} parameters={[p.name for p in self.parameters]}>"
