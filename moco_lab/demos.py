"""Demo problems: the registry the dashboard panels (:mod:`moco_lab.widgets`) offer.

:data:`DEMO_PROBLEMS` maps a name to a :class:`DemoProblem`, whose
``build(settings)`` poses a :class:`~moco_lab.study.Study` (the built-in ones
start from :mod:`moco_lab.examples`) and whose ``reference(settings)`` gives the
known solution, where there is one (closed forms from :mod:`moco_lab.analysis`).
A *settings* dict holds the generic solver settings and goal weights
(:func:`default_settings`, applied by :func:`apply_settings`) plus the
problem's own :class:`Option` values::

    from moco_lab import demos
    settings = demos.default_settings("sliding_mass")      # {"scheme": ..., "mass": 2.0, "goals": {...}}
    settings["mass"] = 8.0
    demo = demos.get_demo_problem("sliding_mass")
    study = demos.apply_settings(demo.build(settings), settings)
    demo.reference(settings).final_time                      # 0.8

Register your own with :func:`register_demo_problem`.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import analysis, examples
from .config import mesh
from .goals import ControlGoal
from .study import Study
from .trajectory import Trajectory

__all__ = [
    "Option", "Reference", "DemoProblem", "DEMO_PROBLEMS", "register_demo_problem", "get_demo_problem",
    "base_settings", "default_settings", "goal_settings", "apply_settings",
    "linear_reference", "sliding_mass_reference",
]


@dataclass(frozen=True)
class Option:
    """A problem-specific setting shown as a widget (e.g. the sliding mass's ``t_f`` upper bound).

    ``choices`` gives a dropdown; otherwise a number field (``int`` or
    ``float`` after ``default``'s type).
    """

    key: str
    label: str
    default: Any
    choices: tuple | None = None
    tooltip: str = ""


@dataclass
class Reference:
    """A known (analytic) solution for given settings.

    Attributes
    ----------
    label : str
        Legend entry, e.g. ``"analytic"``.
    states, controls : callable ``t -> {name: values}`` or None
        Closed-form time series.
    objective, final_time : float or None
        ``J*`` (with the goal weights applied) and ``t_f*``.
    initial_time : float
        ``t_0``.
    """

    label: str = "analytic"
    states: Callable[[np.ndarray], dict] | None = None
    controls: Callable[[np.ndarray], dict] | None = None
    objective: float | None = None
    final_time: float | None = None
    initial_time: float = 0.0

    def trajectory(self, num: int = 401) -> Trajectory | None:
        """The closed form sampled on ``num`` points (for plotting), or None without series."""
        if self.states is None and self.controls is None or self.final_time is None:
            return None
        t = np.linspace(self.initial_time, self.final_time, num)
        return Trajectory(t, self.states(t) if self.states else {}, self.controls(t) if self.controls else {})


@dataclass
class DemoProblem:
    """A problem the panels can offer.

    Attributes
    ----------
    key : str
        Registry name (``"linear"``).
    title : str
        Shown in the problem selector and the panel header.
    description : str
        One or two sentences of HTML shown under the title.
    build : callable ``settings -> Study``
        Poses the problem; may read the problem-specific ``options`` from
        ``settings``. The panels then apply the generic settings
        (:func:`apply_settings`).
    options : tuple of Option
        Problem-specific settings.
    reference : callable ``settings -> Reference | None``, optional
        The analytic solution for these settings (None where none is known).
    metrics : tuple of str
        Keys of :data:`moco_lab.analysis.METRIC_LABELS` used by the convergence study.
    mesh_full, mesh_fast : int
        Initial mesh intervals normally and under ``MOCO_LAB_FAST=1``.
    """

    key: str
    title: str
    description: str
    build: Callable[[dict], Study]
    options: tuple = ()
    reference: Callable[[dict], Reference | None] | None = None
    metrics: tuple = ()
    mesh_full: int = 50
    mesh_fast: int = 10

    @property
    def initial_mesh(self) -> int:
        return mesh(self.mesh_full, self.mesh_fast)


#: name -> DemoProblem; extend with :func:`register_demo_problem`.
DEMO_PROBLEMS: dict[str, DemoProblem] = {}


def register_demo_problem(problem: DemoProblem) -> DemoProblem:
    """Add (or replace) a problem in :data:`DEMO_PROBLEMS`; returns it."""
    DEMO_PROBLEMS[problem.key] = problem
    return problem


def get_demo_problem(problem) -> DemoProblem:
    """A :class:`DemoProblem` from a registry name, a DemoProblem, or a ``settings -> Study`` callable."""
    if isinstance(problem, DemoProblem):
        return problem
    if isinstance(problem, str):
        if problem not in DEMO_PROBLEMS:
            raise KeyError(f"Unknown demo problem {problem!r}; known: {sorted(DEMO_PROBLEMS)}")
        return DEMO_PROBLEMS[problem]
    if callable(problem):
        name = getattr(problem, "__name__", "problem")
        doc = (getattr(problem, "__doc__", None) or "").strip().split("\n")[0]
        return DemoProblem(key=name, title=name.replace("_", " "), description=html.escape(doc), build=problem)
    raise TypeError(f"Expected a demo problem name, a DemoProblem or a callable settings -> Study, got {problem!r}")


# ---------------------------------------------------- (a) linear problem
def _build_linear(settings: dict) -> Study:
    return examples.linear_study(settings.get("variant", "kirk"))


def linear_reference(settings: dict) -> Reference | None:
    """Closed form of problem (a), valid for an effort goal with exponent 2 and positive weight."""
    variant = settings.get("variant", "kirk")
    effort = settings.get("goals", {}).get("effort", {})
    weight, exponent = effort.get("weight", 0.5), effort.get("exponent", 2.0)
    if exponent != 2 or not weight > 0:
        return None
    return Reference(
        "analytic", states=analysis.linear_exact_states,
        controls=lambda t: {"/forceset/coordinateactuator": analysis.linear_exact_control(t, variant)},
        objective=weight * analysis.LINEAR_EFFORT_INTEGRAL[variant], final_time=2.0,
    )


# ------------------------------------------------- (b) sliding mass
def _build_sliding_mass(settings: dict) -> Study:
    study = examples.sliding_mass_study(float(settings.get("mass", 2.0)))
    study.problem.set_time_bounds(0, (0, float(settings.get("tf_max", 5.0))))
    study.problem.add_goal(ControlGoal("effort", 0.0))  # off by default; a weight smooths the control
    return study


def sliding_mass_reference(settings: dict) -> Reference | None:
    """Bang-bang solution ``t_f* = 2 sqrt(m d / F)``; valid for a pure minimum-time goal that can reach it."""
    goals = settings.get("goals", {})
    w_time = goals.get("time", {}).get("weight", 1.0)
    w_effort = goals.get("effort", {}).get("weight", 0.0)
    m = float(settings.get("mass", 2.0))
    tf = analysis.sliding_mass_tf_star(m)
    if not w_time > 0 or w_effort != 0 or float(settings.get("tf_max", 5.0)) < tf:
        return None
    return Reference("analytic (bang-bang)", states=lambda t: analysis.sliding_mass_exact_states(t, m),
                     controls=lambda t: {"/actuator": analysis.sliding_mass_exact_control(t, m)},
                     objective=w_time * tf, final_time=tf)


# ------------------------------------------------- double pendulum
def _build_double_pendulum(settings: dict) -> Study:
    study = examples.double_pendulum_study()
    study.problem.set_time_bounds(0, float(settings.get("duration", 1.0)))
    return study


# ------------------------------------------------- (c) suspended mass
def _build_suspended_mass(settings: dict) -> Study:
    # scheme, mode and mesh are applied afterwards by apply_settings
    return examples.suspended_mass_prediction_study(settings.get("scheme", "hermite-simpson"),
                                                    settings.get("mode", "explicit"),
                                                    int(settings.get("mesh_intervals", 30)))


register_demo_problem(DemoProblem(
    key="linear",
    title="Linear minimum effort (Kirk 2004)",
    description=("A unit mass with viscous damping, pushed by a force <i>x</i>: u̇ = −u + x "
                 "(variant <i>moco_test</i>: u̇ = u + x). Move from rest to q = 5, u = 2 in exactly 2 s "
                 "minimizing J = 0.5 ∫ x² dt. The closed-form optimum is drawn for comparison "
                 "(J* = 16.7507 for kirk)."),
    build=_build_linear,
    options=(Option("variant", "variant", "kirk", ("kirk", "moco_test"),
                    "kirk: u̇ = −u + x (Kirk, Moco paper); moco_test: u̇ = u + x (testMocoAnalytic.cpp)"),),
    reference=linear_reference,
    metrics=("states", "controls", "objective"),
    mesh_full=50, mesh_fast=10,
))
register_demo_problem(DemoProblem(
    key="sliding_mass",
    title="Sliding mass, minimum time",
    description=("A 2 kg mass on a frictionless line, force |F| ≤ 50 N: move 1 m from rest to rest as fast as "
                 "possible. The optimum is bang-bang with t_f* = 2√(m d / F) = 0.4 s. Give the effort goal a "
                 "weight to smooth the control; set t_f max below t_f* to make the problem infeasible."),
    build=_build_sliding_mass,
    options=(Option("mass", "mass (kg)", 2.0, tooltip="mass of the sliding body"),
             Option("tf_max", "t_f max (s)", 5.0, tooltip="upper bound on the final time: t_f in [0, t_f max]")),
    reference=sliding_mass_reference,
    metrics=("final_time",),
    mesh_full=50, mesh_fast=10,
))
register_demo_problem(DemoProblem(
    key="double_pendulum",
    title="Double pendulum, minimum effort",
    description=("Two links under gravity driven by two torques: swing the first joint from 0 to 90° and "
                 "come to rest in a fixed time, minimizing ∫ (τ₀² + τ₁²) dt. No closed form is known."),
    build=_build_double_pendulum,
    options=(Option("duration", "duration (s)", 1.0, tooltip="fixed final time"),),
    mesh_full=30, mesh_fast=8,
))
register_demo_problem(DemoProblem(
    key="suspended_mass",
    title="Point mass on three muscles (Moco paper, Figure 4)",
    description=("A point mass hangs from three muscles (left, middle, right) and moves from (−0.14, −0.20) "
                 "to (0.14, −0.15) m, at rest at both ends, with t_f in [0.4, 0.8] s, minimizing "
                 "∫ Σ e² dt + 0.01 t_f. Three muscles drive two coordinates: the effort goal decides how the "
                 "work is shared (muscle redundancy). Raise the effort exponent to 4 to spread the "
                 "activations; raise the final-time weight to move faster."),
    build=_build_suspended_mass,
    mesh_full=30, mesh_fast=10,
))


# =============================================================== settings
def goal_settings(study: Study) -> dict:
    """``{goal name: {"weight": w[, "exponent": p]}}`` of the goals of ``study`` that have a weight."""
    goals = {}
    for g in study.problem.goals:
        if g.kind == "constraint" and getattr(g, "mode", "") != "cost":
            continue
        entry = {"weight": g.weight}
        if isinstance(g, ControlGoal):
            entry["exponent"] = g.exponent
        goals[g.name] = entry
    return goals


def base_settings(problem) -> dict:
    """The generic settings of ``problem`` with their defaults, without calling its builder.

    Parameters
    ----------
    problem : str, DemoProblem or callable
        Anything :func:`get_demo_problem` accepts.

    Returns
    -------
    dict
        ``scheme``, ``mode``, ``mesh_intervals`` (the problem's initial mesh),
        ``optimizer``, ``max_iterations``, ``tolerance`` (None = optimizer
        default), an empty ``goals`` dict and one key per problem :class:`Option`.
    """
    problem = get_demo_problem(problem)
    settings = {"scheme": "hermite-simpson", "mode": "explicit", "mesh_intervals": problem.initial_mesh,
                "optimizer": "ipopt", "max_iterations": 3000, "tolerance": None, "goals": {}}
    settings.update({o.key: o.default for o in problem.options})
    return settings


def default_settings(problem) -> dict:
    """:func:`base_settings` plus the problem's goals (the builder is called once to list them).

    ``goals`` is ``{goal name: {"weight": w[, "exponent": p]}}``.
    """
    settings = base_settings(problem)
    settings["goals"] = goal_settings(get_demo_problem(problem).build(settings))
    return settings


def apply_settings(study: Study, settings: dict) -> Study:
    """Apply the generic settings (solver and goal weights/exponents) to ``study``; returns it.

    Raises a ``ValueError``/``KeyError`` with a readable message for a bad setting.
    """
    s = study.solver
    s.transcription_scheme = settings.get("scheme", s.transcription_scheme)
    s.multibody_dynamics_mode = settings.get("mode", s.multibody_dynamics_mode)
    if "mesh_intervals" in settings:
        n = settings["mesh_intervals"]
        if isinstance(n, float) and n.is_integer():
            n = int(n)
        s.num_mesh_intervals = n
    s.optim_solver = settings.get("optimizer", s.optim_solver)
    if settings.get("max_iterations") is not None:
        s.optim_max_iterations = int(settings["max_iterations"])
    tol = settings.get("tolerance")
    if tol is not None:
        s.optim_convergence_tolerance = float(tol)
        s.optim_constraint_tolerance = float(tol)
    for name, values in settings.get("goals", {}).items():
        goal = study.problem.get_goal(name)
        if "weight" in values:
            w = float(values["weight"])
            if not math.isfinite(w):
                raise ValueError(f"Goal {name!r}: weight must be a finite number, got {values['weight']}")
            goal.weight = w
        if "exponent" in values and isinstance(goal, ControlGoal):
            p = float(values["exponent"])
            if not (p >= 2) or not math.isfinite(p):
                raise ValueError(f"ControlGoal {name!r}: exponent must be >= 2 (got {values['exponent']}), as in Moco.")
            goal.exponent = p
    s.validate()
    return study
