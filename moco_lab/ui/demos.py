"""Demo problems: the registry the dashboard panels (:mod:`moco_lab.ui.solve_panel`, :mod:`moco_lab.ui.convergence_panel`) offer.

:data:`DEMO_PROBLEMS` maps a name to a :class:`DemoProblem`, whose
``build(settings)`` poses a :class:`~moco_lab.tools.study.Study` (the built-in ones
start from :mod:`moco_lab.examples`) and whose ``reference(settings)`` gives the
known solution, where there is one (closed forms from :mod:`moco_lab.analysis`).
A *settings* dict holds the generic solver settings and goal weights
(:func:`default_settings`, applied by :func:`apply_settings`) plus the
problem's own :class:`Option` values::

    from moco_lab.ui import demos
    settings = demos.default_settings("sliding_mass")      # {"scheme": ..., "mass": 2.0, "goals": {...}}
    settings["mass"] = 8.0
    demo = demos.get_demo_problem("sliding_mass")
    study = demos.apply_settings(demo.build(settings), settings)
    demo.reference(settings).final_time                      # 0.8

Register your own with :func:`register_demo_problem`. A problem can also add
figures (``extra_figures``, e.g. the suspended mass's x–y path), entries of
the numbers line (``extra_numbers``), weight sliders (``weight_sliders``) and
options that re-pose it (``Option(..., rebuild=True, presets=...)``, e.g. the
suspended mass's ``task``: ``"predict"`` or ``"track"`` the prediction, see
:func:`suspended_mass_tracking_study`).

The ``parabola`` problem (a bead held on ``y = x²`` by a kinematic constraint,
:func:`parabola_study`) adds the curve with the constraint-force arrows and the
constraint errors between mesh points (:func:`parabola_constraint_errors`).
"""
from __future__ import annotations

import functools
import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..analysis import problems as problem_analysis
from ..analysis import verification as analysis
from ..analysis.problems import PARABOLA_LAMBDA, parabola_constraint_errors, suspended_mass_activation_rms
from ..engine.settings import HESSIAN_APPROXIMATIONS
from ..examples import squat as squat_examples
from ..examples import verification as examples
from ..examples.verification import PARABOLA_MOTIONS, parabola_study, suspended_mass_tracking_study
from ..modeling.squat import squat_to_stand
from ..ocp.goals import ControlGoal
from ..results.trajectory import Trajectory
from ..tools.study import Study
from ..tools.sweep import apply_change
from ..util.config import mesh
from ..viz.pose import animate
from ..viz.problems import (
    parabola_constraint_figure,
    parabola_path_figure,
    squat_activation_figure,
    suspended_mass_path_figure,
)
from . import walking
from .warm_start import WarmStart

if TYPE_CHECKING:
    from ..results.trajectory import Solution

__all__ = [
    "Option", "Reference", "DemoProblem", "DEMO_PROBLEMS", "register_demo_problem", "get_demo_problem",
    "base_settings", "default_settings", "goal_settings", "apply_settings",
    "linear_reference", "sliding_mass_reference", "suspended_mass_prediction", "suspended_mass_tracking",
]


@dataclass(frozen=True)
class Option:
    """A problem-specific setting shown as a widget (e.g. the sliding mass's ``t_f`` upper bound).

    ``choices`` gives a dropdown; otherwise a number field (``int`` or
    ``float`` after ``default``'s type).

    Attributes
    ----------
    key, label : str
        Settings key and widget label.
    default : Any
        Initial value.
    choices : tuple, optional
        Allowed values (a dropdown).
    tooltip : str
        Widget tooltip.
    rebuild : bool, default False
        The option changes which goals the problem has (e.g. predict vs.
        track): when it changes, the panel re-poses the problem, lists its
        goals again (new goal widgets, with the builder's defaults) and solves.
    presets : dict, optional
        ``{option value: {setting: value}}``: generic settings the panel
        selects when the option takes that value, e.g.
        ``{"track": {"mode": "implicit"}}``. The user may change them again.
    """

    key: str
    label: str
    default: Any
    choices: tuple | None = None
    tooltip: str = ""
    rebuild: bool = False
    presets: dict | None = None


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
    extra_figures : callable ``(solution, previous, settings) -> {name: plotly Figure}``, optional
        Figures the problem adds to :class:`~moco_lab.ui.solve_panel.SolvePanel`
        besides ``"trajectories"``, ``"cost"`` and ``"history"`` (which
        ``name`` must not be); each is shown in its own output area.
        ``solution`` is the panel's (unsealed) last solution, also when it
        failed (``solution.success``), ``previous`` the previous successful
        one or None, ``settings`` the settings of the solve.
    extra_numbers : callable ``(solution, settings) -> {label: text}``, optional
        Extra entries of the panel's numbers line for a *successful* solve
        (plain text, escaped by the panel).
    weight_sliders : dict of str -> (float, float), optional
        ``{goal name: (min, max)}``: show that goal's weight as a logarithmic
        slider over ``[min, max]`` instead of a number field.
    settings_defaults : dict, optional
        Generic settings the problem starts with instead of the panel's defaults
        (e.g. ``{"mode": "implicit", "tolerance": 1e-3}``).
    plotted : callable ``solution -> list of str``, optional
        The variables of the panel's states-and-controls figure (default: every
        state and control; a model with dozens of them shows a selection).
    plotted_title : str
        That figure's title when ``plotted`` selects (e.g. ``"Activations, right leg"``).
    after_solve : callable ``(solution, settings) -> None``, optional
        Called after every completed solve, before the figures are drawn, with
        the panel's solution (unsealed if it failed: check
        ``solution.success``) and the settings of the solve; e.g. keep the last
        successful solution as the next solve's warm start.
    solve : callable ``(study, progress) -> Solution``, optional
        How the panel solves the built study (default ``study.solve(progress=progress)``); e.g. a second solve
        with other settings when the first stops.
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
    extra_figures: Callable[..., dict] | None = None
    extra_numbers: Callable[..., dict] | None = None
    weight_sliders: dict = field(default_factory=dict)
    settings_defaults: dict = field(default_factory=dict)
    plotted: Callable[..., list] | None = None
    plotted_title: str = "Selected states and controls"
    after_solve: Callable[..., None] | None = None
    solve: Callable[..., Solution] | None = None

    @property
    def initial_mesh(self) -> int:
        """The mesh the dashboard starts with (small under ``MOCO_LAB_FAST``)."""
        return mesh(self.mesh_full, self.mesh_fast)


#: name -> DemoProblem; extend with :func:`register_demo_problem`.
DEMO_PROBLEMS: dict[str, DemoProblem] = {}


def register_demo_problem(problem: DemoProblem) -> DemoProblem:
    """Add (or replace) a problem in :data:`DEMO_PROBLEMS`; returns it."""
    DEMO_PROBLEMS[problem.key] = problem
    return problem


def get_demo_problem(problem: str | DemoProblem) -> DemoProblem:
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
_TX, _TY = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
_ACTIVATIONS = problem_analysis.SUSPENDED_MASS_ACTIVATIONS
_TASKS = ("predict", "track")
_PREDICTIONS: dict[tuple, Any] = {}  # prediction settings -> Solution (the last few)
_PREDICTIONS_KEPT = 8


def _choice(settings: dict, key: str, allowed: tuple) -> str:
    """The setting ``key`` (default: the first allowed value), refused with the allowed ones if not among them."""
    value = settings.get(key, allowed[0])
    if value not in allowed:
        raise ValueError(f"{key} must be one of {list(allowed)}, got {value!r}")
    return value


def _task(settings: dict) -> str:
    return _choice(settings, "task", _TASKS)


def suspended_mass_prediction(settings: dict) -> Solution:
    """The prediction the ``"track"`` task tracks: solved once per settings, then cached.

    The prediction study (:func:`moco_lab.examples.suspended_mass_prediction_study`,
    with its default goals: ``∫ Σ e² dt + 0.01 t_f``) in **explicit** mode (as
    the paper; in implicit mode IPOPT can end in another local optimum, with
    ``t_f = 0.8`` s), on the scheme, mesh and optimizer settings of
    ``settings``; the goals and task in ``settings`` are ignored.

    Parameters
    ----------
    settings : dict
        Uses ``scheme``, ``mesh_intervals``, ``optimizer``,
        ``max_iterations`` and ``tolerance``.

    Returns
    -------
    Solution
        A successful solution (the same object for the same settings).

    Raises
    ------
    RuntimeError
        The prediction did not converge (there is then nothing to track).
    """
    generic = {k: settings[k] for k in ("scheme", "mesh_intervals", "optimizer", "max_iterations", "tolerance")
               if k in settings}
    generic["mode"] = "explicit"
    key = tuple(sorted((k, repr(v)) for k, v in generic.items()))
    if key not in _PREDICTIONS:
        study = apply_settings(examples.suspended_mass_prediction_study(), generic)
        solution = study.solve()
        if not solution.success:
            raise RuntimeError(f"the prediction to track did not converge ({solution.status}: {solution.message}); "
                               "there is no motion to track. Try more iterations or another mesh.")
        while len(_PREDICTIONS) >= _PREDICTIONS_KEPT:
            _PREDICTIONS.pop(next(iter(_PREDICTIONS)))
        _PREDICTIONS[key] = solution
    return _PREDICTIONS[key]


def suspended_mass_tracking(settings: dict, prediction: Solution | None = None) -> Study:
    """The ``"track"`` task: :func:`moco_lab.examples.suspended_mass_tracking_study` of the settings' prediction.

    Uses ``settings["tracking_weight"]`` (default 10), ``mesh_intervals``,
    ``scheme`` and ``mode``; ``prediction`` defaults to
    :func:`suspended_mass_prediction` of ``settings``.
    """
    if prediction is None:
        prediction = suspended_mass_prediction(settings)
    return suspended_mass_tracking_study(prediction, float(settings.get("tracking_weight", 10.0)),
                                         int(settings.get("mesh_intervals", 30)),
                                         settings.get("scheme", "hermite-simpson"), settings.get("mode", "explicit"))


def _build_suspended_mass(settings: dict) -> Study:
    # scheme, mode and mesh are applied afterwards by apply_settings
    if _task(settings) == "track":
        return suspended_mass_tracking(settings)
    return examples.suspended_mass_prediction_study(settings.get("scheme", "hermite-simpson"),
                                                    settings.get("mode", "explicit"),
                                                    int(settings.get("mesh_intervals", 30)))


def _suspended_mass_numbers(solution, settings: dict) -> dict:
    peaks = " / ".join(f"{float(np.max(solution.states[k])):.2f}" for k in _ACTIVATIONS)
    numbers = {"peak activation L / M / R": peaks}
    if _task(settings) == "track":
        prediction = suspended_mass_prediction(settings)
        numbers["activations vs prediction"] = (f"RMS {suspended_mass_activation_rms(solution, prediction):.3g}% "
                                                "of peak")
        numbers["positions vs prediction"] = (
            f"RMS {1000 * solution.rms_difference(prediction, [_TX, _TY], per_column=True):.3g} mm")
    return numbers


def _suspended_mass_figures(solution, previous, settings: dict) -> dict:
    task = _task(settings)
    prediction = suspended_mass_prediction(settings) if task == "track" else None
    return {"path": suspended_mass_path_figure(solution, previous, prediction, task)}


# ------------------------------------------------- squat to stand (the Moco paper, Figure 6)
_SPRINGS = ("none", "fixed", "optimize")
_SQUAT_LAST = WarmStart()  # the latest successful squat solution (a warm start for the next solve)


def _spring(settings: dict) -> str:
    return _choice(settings, "spring", _SPRINGS)


def _build_squat(settings: dict) -> Study:
    spring = _spring(settings)
    study = squat_examples.squat_to_stand_study(assisted=spring != "none")
    if spring == "fixed":  # the stiffness held as a parameter: every stiffness shares one compiled model
        k = float(settings.get("stiffness", 50.0))
        if not 0.0 <= k <= 100.0:
            raise ValueError(f"stiffness must be within [0, 100] N·m/rad, got {k}")
        apply_change(study, {"parameter.stiffness": k})
    last = _SQUAT_LAST.latest(settings)
    if last is not None:
        study.solver.guess = last
    return study


@functools.lru_cache(maxsize=1)
def _squat_drawing_model():
    """The squat model the motion is drawn on: read from its file once, not for every solve."""
    return squat_to_stand()


def _squat_figures(solution, previous, settings: dict) -> dict:
    return {"motion": animate(_squat_drawing_model(), solution, frames=mesh(30, 8), title="The rise (press play)",
                              height=420),
            "activations": squat_activation_figure(solution, previous)}


def _squat_numbers(solution, settings: dict) -> dict:
    numbers = {"final time": f"{solution.final_time:.3f} s",
               "effort": f"{solution.goal_values.get('effort', float('nan')):.3f}"}
    if "stiffness" in solution.parameters:
        numbers["knee spring"] = f"{solution.parameters['stiffness']:.1f} N·m/rad"
    for name in ("vas_int_r", "glut_max2_r"):
        numbers[f"peak {name}"] = f"{float(np.max(solution.states[f'/forceset/{name}/activation'])):.2f}"
    return numbers


# ------------------------------------------------- bead on a parabola (kinematic constraint)
_MOTIONS = PARABOLA_MOTIONS


def _motion(settings: dict) -> str:
    return _choice(settings, "motion", _MOTIONS)


def _build_parabola(settings: dict) -> Study:
    return parabola_study(_motion(settings), float(settings.get("w_lambda", 0.0) or 0.0))


def _parabola_figures(solution, previous, settings: dict) -> dict:
    return {"path": parabola_path_figure(solution, previous, _motion(settings)),
            "constraint": parabola_constraint_figure(solution, previous, settings.get("scheme", "hermite-simpson"))}


def _parabola_numbers(solution, settings: dict) -> dict:
    err = parabola_constraint_errors(solution, settings.get("scheme", "hermite-simpson"))
    lam = np.asarray(solution.multipliers[PARABOLA_LAMBDA], float)
    return {"max |φ| at mesh points": f"{np.max(np.abs(err['phi_mesh'])):.2g}",
            "max |φ̇| at mesh points": f"{np.max(np.abs(err['phid_mesh'])):.2g}",
            "max midpoint drift |φ|": f"{np.max(np.abs(err['phi_mid'])):.2g}",
            "max |λ|": f"{np.max(np.abs(lam)):.3g} N"}


register_demo_problem(DemoProblem(
    key="linear",
    title="Linear minimum effort (Kirk 2004)",
    description=("A unit mass with viscous damping, pushed by a force <i>x</i>: u̇ = −u + x "
                 "(variant <i>moco_test</i>: u̇ = u + x). Move from rest to q = 5, u = 2 in exactly 2 s "
                 "minimizing J = 0.5 ∫ x² dt. Its optimum is known in closed form (J* = 16.7507 for kirk): "
                 "errors are measured against it."),
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
                 "to (0.14, −0.15) m, at rest at both ends, with t_f in [0.4, 0.8] s. Three muscles drive two "
                 "coordinates: the effort goal decides how the work is shared (muscle redundancy). "
                 "<b>predict</b>: minimize ∫ Σ e<sup>p</sup> dt + 0.01 t_f; raise the effort exponent p to 4 "
                 "to spread the activations, raise the final-time weight to move faster. "
                 "<b>track</b>: forget the excitations and track the predicted positions and speeds "
                 "(solved once), minimizing w<sub>track</sub> ∫ ‖q − q<sub>pred</sub>‖² dt + 0.001 ∫ Σ "
                 "e<sup>p</sup> dt: with p = 2 the prediction's activations come back, with p = 4 they do not "
                 "(Moco: 0.2–0.3 % vs. about 11 % of the peak)."),
    build=_build_suspended_mass,
    options=(Option("task", "task", "predict", _TASKS,
                    "predict: optimal motion from effort and time; track: follow the predicted motion "
                    "(MocoTrack), in implicit mode with the exact Hessian (the same optimum in ~20 iterations "
                    "instead of hundreds)",
                    rebuild=True, presets={"predict": {"mode": "explicit", "hessian": None},
                                   "track": {"mode": "implicit", "hessian": "exact"}}),),
    mesh_full=30, mesh_fast=10,
    extra_figures=_suspended_mass_figures,
    extra_numbers=_suspended_mass_numbers,
    weight_sliders={"state_tracking": (0.1, 100.0)},
))

register_demo_problem(DemoProblem(
    key="parabola",
    title="Bead on a parabola (kinematic constraint)",
    description=("A 1 kg bead in the vertical plane is held on the curve y = x² by a kinematic constraint "
                 "φ = y − x² = 0; the curve pushes on it with the force −Gᵀλ, G = (−2x, 1), perpendicular to "
                 "the curve (red arrows). <b>move</b>: two forces f<sub>x</sub>, f<sub>y</sub> carry it from rest "
                 "at x = −1 to rest at x = 0.5 in 1 s, minimizing ∫ (f<sub>x</sub>² + f<sub>y</sub>²) dt. "
                 "<b>release</b>: no forces, no goal; the bead slides down from x = −1 (Moco's "
                 "exampleKinematicConstraints). Compare the schemes: trapezoidal enforces φ = 0 only at the mesh "
                 "points (and drifts between them), Hermite–Simpson also φ̇ = φ̈ = 0 and corrects the midpoints. "
                 "w<sub>λ</sub> &gt; 0 adds w<sub>λ</sub> ∫ λ² dt: it smooths the trapezoidal λ of <b>release</b>, "
                 "and in <b>move</b> it makes the forces take over part of the curve's load."),
    build=_build_parabola,
    options=(Option("motion", "motion", "move", _MOTIONS,
                    "move: actuated, minimum effort between two points; release: the unactuated bead slides down "
                    "(no goals)", rebuild=True),
             Option("w_lambda", "w_λ (λ penalty)", 0.0,
                    tooltip="lagrange_multiplier_weight; 0 switches minimize_lagrange_multipliers off")),
    mesh_full=40, mesh_fast=10,
    extra_figures=_parabola_figures,
    extra_numbers=_parabola_numbers,
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


def base_settings(problem: str | DemoProblem) -> dict:
    """The generic settings of ``problem`` with their defaults, without calling its builder.

    Parameters
    ----------
    problem : str, DemoProblem or callable
        Anything :func:`get_demo_problem` accepts.

    Returns
    -------
    dict
        ``scheme``, ``mode``, ``mesh_intervals`` (the problem's initial mesh),
        ``optimizer``, ``hessian`` (``"limited-memory"``, ``"exact"`` or None: the problem's own choice),
        ``max_iterations``, ``tolerance`` (None = optimizer default), an empty ``goals`` dict and one key per
        problem :class:`Option`.
    """
    problem = get_demo_problem(problem)
    settings = {"scheme": "hermite-simpson", "mode": "explicit", "mesh_intervals": problem.initial_mesh,
                "optimizer": "ipopt", "hessian": None, "max_iterations": 3000, "tolerance": None, "goals": {}}
    settings.update(problem.settings_defaults)
    settings.update({o.key: o.default for o in problem.options})
    return settings


def default_settings(problem: str | DemoProblem) -> dict:
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
    hessian = settings.get("hessian")  # None: the problem's own choice
    if hessian is not None:
        if hessian not in HESSIAN_APPROXIMATIONS:
            raise ValueError(f"hessian must be one of {list(HESSIAN_APPROXIMATIONS)} or None, got {hessian!r}")
        s.optim_hessian_approximation = hessian
        if hessian == "exact" and s.optim_solver == "ipopt":
            s.optim_linear_solver = "mumps"  # the IPOPT that takes a Hessian (SNOPT: validate() says so below)
    if settings.get("max_iterations") is not None:
        s.optim_max_iterations = int(settings["max_iterations"])
    tol = settings.get("tolerance")
    if tol is not None:
        s.optim_convergence_tolerance = float(tol)
        s.optim_constraint_tolerance = float(tol)
    for name, values in settings.get("goals", {}).items():
        goal = study.problem.get_goal(name)
        if "weight" in values:  # the goal's setters check (finite; an exponent >= 2, as in Moco)
            goal.weight = values["weight"]
        if "exponent" in values and isinstance(goal, ControlGoal):
            goal.exponent = values["exponent"]
    s.validate()
    return study

register_demo_problem(DemoProblem(
    key="squat_to_stand",
    title="Squat to stand with a knee spring (Moco paper, Figure 6)",
    description=("A one-leg model with 9 muscles (foot welded to the ground) rises from a deep squat to standing, "
                 "at rest at both ends, minimizing effort ∫ Σ e² dt plus the final time. <b>spring</b>: "
                 "<i>none</i>; <i>fixed</i>: a knee spring of the stiffness you set (torque −k q); "
                 "<i>optimize</i>: the optimizer chooses k in [0, 100] N·m/rad together with the motion (the "
                 "paper: 88 / 90). The spring takes load off the vasti and the gluteus maximus; the previous "
                 "solution stays in the activation plot (dotted). Each solve starts from the previous solution "
                 "(warm start) unless you switch that off; the paper's mesh is 50 intervals (about 10 s)."),
    build=_build_squat,
    options=(Option("spring", "spring", "none", _SPRINGS,
                    "none: no device; fixed: a knee spring of the stiffness below; optimize: its stiffness is a "
                    "parameter of the problem (press Solve; the previous solution stays, dotted)"),
             Option("stiffness", "k (N·m/rad)", 50.0,
                    tooltip="the fixed spring's stiffness, 0 to 100 N·m/rad (used with spring = fixed)"),
             Option("warm_start", "warm start", "yes", ("yes", "no"),
                    "yes: start from the last solution (faster after a small change); no: the paper's guess")),
    mesh_full=50, mesh_fast=8,
    extra_figures=_squat_figures,
    extra_numbers=_squat_numbers,
    after_solve=_SQUAT_LAST.keep,
    weight_sliders={"effort": (0.01, 100.0), "time": (0.01, 100.0)},
    settings_defaults={"mode": "implicit", "tolerance": 1e-3},
))


def _walking_demo(walker: walking.Walker) -> DemoProblem:
    """The demo problem of one walker of the walking dashboard (:mod:`moco_lab.ui.walking`)."""
    low, high = walker.speeds
    return DemoProblem(
        key=walker.key, title=walker.title, description=walker.description,
        build=functools.partial(walking.build_walk, walker),
        options=(Option("speed", "speed (m/s)", walker.speed, tooltip=walker.speed_tip),
                 *(Option(f"strength_{g}", f"{label} (%)", 100.0,
                          tooltip=f"maximum isometric force of {g}, both legs, in % of the model's (0 to "
                                  f"{walking.MAX_STRENGTH:g})")
                   for g, label in walker.groups.items()),
                 Option("warm_start", "warm start", "yes", ("yes", "no"),
                        f"yes: start from the last solution; no: from the minimum-effort prediction shipped for "
                        f"{walker.speed:g} m/s (speeds {low:g} to {high:g} m/s)")),
        mesh_full=walker.mesh_full, mesh_fast=walker.mesh_fast,
        extra_figures=functools.partial(walking.walk_figures, walker),
        extra_numbers=functools.partial(walking.walk_numbers, walker),
        settings_defaults=dict(walker.settings_defaults),
        plotted=functools.partial(walking.walk_plotted, walker),
        after_solve=functools.partial(walking.keep_for_warm_start, walker),
        solve=functools.partial(walking.solve_walk, walker),
        plotted_title="Activations of the right leg's muscles",
    )


for _walker in walking.WALKERS.values():
    register_demo_problem(_walking_demo(_walker))
