"""The walking dashboard: predict a gait, change speed, effort and muscle strength, re-predict — for any walker.

One dashboard (``widgets/walking.ipynb``) serves both planar walkers moco_lab has; what differs between them is a
small :class:`Walker` description: how to build the model and pose its prediction, the forward coordinate, the muscle
groups and where their muscles sit, the warm starts shipped for it, its speed range, and its own figures and numbers.
Everything else is written once here and registered as one demo problem per walker by :mod:`moco_lab.ui.demos`:

* :func:`build_walk` poses the walker's prediction for the dashboard's settings: the average ``speed`` (checked
  against the walker's range), the strength of each muscle group (``strength_<group>``, % of its maximum isometric
  force, both legs, in (0, 300]); its guess is the last successful solution of that walker (``warm_start="yes"``)
  or the prediction shipped with moco_lab for the mesh closest to the chosen one, its forward motion stretched to
  the requested speed (:func:`~moco_lab.analysis.walking.stretch_to_speed`). When only strengths or goals changed
  since that solution (the same speed, mesh, scheme, dynamics mode and optimizer; for a walker with a
  ``warm_speed_change``, also a nearby speed on a fine enough mesh), the solve continues it with the
  exact Hessian from its optimizer multipliers too (``SolverSettings.optim_warm_start``, ``Solution.duals``);
  otherwise the walker's ``newton_radius`` chooses the Hessian. A shipped walk with its multipliers shipped beside
  it (:func:`shipped_duals`) is continued the same way by the first solve, on its own mesh and at its own speed.
* :func:`solve_walk` solves it; a continuation that stops is solved again with the limited-memory Hessian.
* :func:`walk_figures`: the walker's animation and its comparison with data, the previous solution dashed.
* :func:`walk_numbers`: the effort, the walker's own numbers (stance, double support, step, peak force) and the
  peak activations of the right leg's calf muscles.

The two walkers (:data:`WALKERS`):

* ``"gait2d_walking"`` (:data:`GAIT2D`): van den Bogert's gait2d (lessons 09–10) walks one periodic cycle with
  Winter's stride time, :func:`~moco_lab.examples.gait2d.gait2d_prediction_study`; a goal ``angles`` tracking
  Winter's joint angles has weight 0 (off) until the learner gives it one. Warm starts made by
  ``benchmarks/gait2d_warm_starts.py``.
* ``"walking_2d"`` (:data:`WALKING_2D`): Moco's 2-D walker (``2D_gait.osim``, lessons 07 and 11) walks half a
  symmetric cycle, :func:`~moco_lab.examples.walking_2d.walking_2d_prediction` (effort per distance walked). Warm
  starts made by ``benchmarks/walking_2d_warm_starts.py``.

A third walker is one more :class:`Walker` and one line in :data:`WALKERS`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..analysis.gait2d import gait_phases
from ..analysis.gait2d import ground_reaction_forces as gait2d_forces
from ..analysis.walking import average_speed, closest_shipped, stretch_to_speed
from ..analysis.walking_2d import walking_2d_summary
from ..examples.gait2d import gait2d_prediction_study, winter_gait
from ..examples.walking_2d import walking_2d_model, walking_2d_prediction
from ..modeling.gait2d import gait2d
from ..modeling.model import Model
from ..results.duals import Duals, read_duals
from ..results.trajectory import Solution, Trajectory
from ..tools.study import Study
from ..util.config import mesh
from ..util.data import GAIT2D_PREDICTED_WALK, WALKING_2D_PREDICTED
from ..viz.gait2d import animate_gait2d, plot_against_winter
from ..viz.walking_2d import animate_walking_2d, plot_walking_2d
from .warm_start import WarmStart, wants_warm_start

__all__ = ["Walker", "GAIT2D", "WALKING_2D", "WALKERS", "build_walk", "walk_figures", "walk_numbers",
           "walk_plotted", "keep_for_warm_start", "forget_warm_starts", "shipped_walk", "shipped_duals",
           "shipped_duals_path", "solve_walk", "strengths"]

#: Most a muscle group can be strengthened to, in % of the model's maximum isometric force.
MAX_STRENGTH = 300.0


@dataclass(frozen=True)
class Walker:
    """What the walking dashboard needs to know about one walking model.

    Attributes
    ----------
    key : str
        The demo problem's name (``"gait2d_walking"``).
    title, description : str
        The dashboard's title and its description (HTML).
    model : callable ``() -> Model``
        A fresh model (each solve edits its own copy's muscle strengths).
    pose : callable ``(model, guess, speed, num_mesh_intervals) -> Study``
        The prediction on ``model`` at the average ``speed`` (m/s) from ``guess``.
    forward : str
        The name of the coordinate that moves the walker forward (its speed is stretched in the guess).
    muscle : str
        The path of a muscle, with ``{group}`` and ``{side}`` (``"r"``, ``"l"``) to fill in.
    groups : dict of str -> str
        Each muscle group of a leg and its short label (the dashboard's strength fields), in the model's order.
    calf : tuple of str
        The groups whose right-leg peak activation the numbers line reports.
    shipped : mapping of int -> Path
        The shipped warm starts by number of mesh intervals (``.sto``; the optimizer's multipliers at a walk, where
        shipped, beside it as ``.duals.npz``: :func:`shipped_duals`).
    speed, speeds : float, (float, float)
        The default average speed and the range a learner may choose (m/s).
    speed_tip : str
        The speed field's tooltip.
    figures : callable ``(model, solution, previous, speed) -> {name: plotly Figure}``
        The walker's own figures (an animation named ``"motion"`` and a comparison with data).
    numbers : callable ``(model, solution) -> {label: text}``
        The walker's own entries of the numbers line.
    settings_defaults : dict
        The transcription and optimizer settings the dashboard starts with.
    mesh_full, mesh_fast : int
        The mesh a learner starts with and the one the test suite uses (``MOCO_LAB_FAST``).
    newton_radius : float, m/s
        Solve with exact second derivatives (Newton's method, IPOPT + MUMPS) when the speed asked for is within this
        of the guess' own speed, else with the limited-memory Hessian; 0: limited-memory — unless the solve
        continues the kept solution's problem at the same speed and on the same mesh (only strengths or goals
        changed): then always Newton's method, from the kept solution's multipliers too
        (``SolverSettings.optim_warm_start``), which re-converges in tens of iterations on both walkers.
    warm_speed_change : float, m/s
        Continue the kept solution from its multipliers (as above) also when the speed changed, by at most this;
        0: at the kept solution's own speed only. A continuation that stops unconverged is solved again from the
        motion alone with the limited-memory Hessian (:func:`solve_walk`).
    warm_speed_mesh : int
        ... but only on meshes of at least this many intervals (measured on Moco's 2-D walker: on 15, two of five
        changes of speed cycled to the iteration limit and one ended at twice the limited-memory run's effort; on
        25 and 50 all five converged, in 2-6 times fewer iterations).
    """

    key: str
    title: str
    description: str
    model: Callable[[], Model]
    pose: Callable[[Model, Trajectory, float, int], Study]
    forward: str
    muscle: str
    groups: dict[str, str]
    calf: tuple[str, ...]
    shipped: Mapping[int, Path]
    speed: float
    speeds: tuple[float, float]
    speed_tip: str
    figures: Callable[..., dict]
    numbers: Callable[[Model, Solution], dict]
    settings_defaults: dict = field(default_factory=dict)
    mesh_full: int = 50
    mesh_fast: int = 25
    newton_radius: float = 0.0
    warm_speed_change: float = 0.0
    warm_speed_mesh: int = 25

    def muscle_path(self, group: str, side: str = "r") -> str:
        """The path of ``group``'s muscle on ``side``."""
        return self.muscle.format(group=group, side=side)

    @functools.cached_property
    def drawing_model(self) -> Model:
        """The walker as built, for drawings and numbers (strength does not change them); made once."""
        return self.model()


_WARM_STARTS: dict[str, WarmStart] = {}  # walker key -> its latest successful solution


def _warm_start(walker: Walker) -> WarmStart:
    return _WARM_STARTS.setdefault(walker.key, WarmStart())


def keep_for_warm_start(walker: Walker, solution: Solution, settings: dict | None = None) -> None:
    """After a solve (the demo's ``after_solve`` hook): a successful solution becomes the walker's next guess."""
    _warm_start(walker).keep(solution, settings)


def forget_warm_starts() -> None:
    """Forget every walker's kept solution (the next solve starts from the shipped warm start)."""
    for kept in _WARM_STARTS.values():
        kept.clear()


def shipped_walk(walker: Walker, num_mesh_intervals: int) -> Trajectory:
    """The prediction shipped for ``walker`` whose mesh is closest to ``num_mesh_intervals`` (a copy, safe to change).

    The files and their provenance: ``predicted_walk.md`` beside them in ``moco_lab/data/gait2d/`` and
    ``moco_lab/data/walking_2d/``.
    """
    return closest_shipped(walker.shipped, num_mesh_intervals)


def shipped_duals_path(walker: Walker, num_mesh_intervals: int) -> Path | None:
    """Where the multipliers of the walk shipped for exactly ``num_mesh_intervals`` would be (``None``: no walk is
    shipped for that mesh): ``predicted_walk_N{n}.duals.npz`` beside ``predicted_walk_N{n}.sto``."""
    sto = walker.shipped.get(num_mesh_intervals)
    return None if sto is None else Path(sto).with_suffix(".duals.npz")


def shipped_duals(walker: Walker, num_mesh_intervals: int) -> tuple[Duals | None, dict | None]:
    """The optimizer multipliers shipped with the walk for exactly ``num_mesh_intervals`` and the dashboard settings
    that walk was solved with (``metadata["settings"]``), or ``(None, None)`` if none are shipped for that mesh.

    With them the dashboard's first solve continues the shipped walk as it continues a kept solution (Newton's
    method from the walk and its multipliers; :func:`build_walk`). Made by the walker's warm-start script.
    """
    path = shipped_duals_path(walker, num_mesh_intervals)
    if path is None or not path.exists():
        return None, None
    duals, settings = _read_shipped_duals(path)
    return duals, None if settings is None else dict(settings)   # a copy; the Duals' arrays are read-only


@functools.lru_cache(maxsize=None)
def _read_shipped_duals(path: Path) -> tuple[Duals, dict | None]:
    """A shipped file of multipliers and the settings it was made with, read once (as the shipped walks are)."""
    duals, metadata = read_duals(path)
    return duals, metadata.get("settings")


def strengths(walker: Walker, settings: dict) -> dict[str, float]:
    """Each muscle group's strength in % (``settings["strength_<group>"]``, default 100).

    Raises ``ValueError`` naming the group for a strength outside (0, 300] % or one that is not a number, and for a
    ``strength_<name>`` setting that names no group of the walker.
    """
    unknown = [k for k in settings if k.startswith("strength_") and k[len("strength_"):] not in walker.groups]
    if unknown:
        raise ValueError(f"{walker.title}: no muscle group {unknown[0][len('strength_'):]!r}; "
                         f"its groups: {list(walker.groups)}")
    out = {}
    for group in walker.groups:
        raw = settings.get(f"strength_{group}", 100.0)
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"strength of {group} must be a number in % of normal, got {raw!r}") from None
        if not 0.0 < value <= MAX_STRENGTH:
            raise ValueError(f"strength of {group} must be within (0, {MAX_STRENGTH:g}] % of normal, got {value:g}")
        out[group] = value
    return out


def build_walk(walker: Walker, settings: dict) -> Study:
    """The dashboard's problem for ``settings`` (module docstring): a :class:`~moco_lab.tools.study.Study`.

    Raises ``ValueError`` naming the setting for a speed outside the walker's range or a bad strength
    (:func:`strengths`).
    """
    raw = settings.get("speed", walker.speed)
    try:
        speed = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"walking speed must be a number in m/s, got {raw!r}") from None
    low, high = walker.speeds
    if not low <= speed <= high:
        raise ValueError(f"walking speed must be within [{low:g}, {high:g}] m/s, got {speed:g}")
    percent = strengths(walker, settings)
    n = int(settings.get("mesh_intervals", mesh(walker.mesh_full, walker.mesh_fast)))
    model = walker.model()
    for group, value in percent.items():
        if value != 100.0:
            for side in ("r", "l"):
                element = model.force_element(walker.muscle_path(group, side))
                model.set_property(f"{element.path}/max_isometric_force",
                                   element.properties()["max_isometric_force"] * value / 100)
    kept = _warm_start(walker)
    last = kept.latest(settings)
    if last is not None:
        guess, duals, before = last.as_trajectory(), last.duals, kept.kept_settings()
    else:   # the shipped walk, and its multipliers if they are shipped for this very mesh
        guess = shipped_walk(walker, n)
        duals, before = shipped_duals(walker, n) if wants_warm_start(settings) else (None, None)
    forward = model.coordinate(walker.forward).value_path
    from_speed = average_speed(guess, forward)
    guess = stretch_to_speed(guess, forward, speed)
    study = walker.pose(model, guess, speed, n)
    if duals is not None and _continues(walker, before, settings, speed, n):
        study.solver.set_hessian_approximation("exact")   # Newton's method from the whole of the last iterate
        study.solver.optim_warm_start = True
        study.solver.guess_duals = duals
    elif walker.newton_radius > 0 and abs(speed - from_speed) <= walker.newton_radius:
        study.solver.set_hessian_approximation("exact")
    study.name = walker.key
    return study


#: The settings that shape a walker's program besides its numbers: a kept solution's multipliers fit the next
#: solve only if these, the speed and the mesh are unchanged (strengths and goal weights may change).
_SAME_FOR_WARM_START = ("scheme", "mode", "optimizer")


def _continues(walker: Walker, before: dict | None, settings: dict, speed: float, n: int) -> bool:
    """Whether a solve with ``settings`` (at ``speed``, on ``n`` mesh intervals) continues the kept solution's
    problem (solved with the settings ``before``): the same mesh, scheme, dynamics mode and optimizer, the speed
    the same or, on a mesh of at least ``warm_speed_mesh`` intervals, within the walker's ``warm_speed_change`` of
    the kept one; only strengths, goals or that speed changed, so that Newton's method can start from the kept
    solution's multipliers as well as its motion (``SolverSettings.optim_warm_start``). A change of speed moves the
    whole motion: measured, a warm start from multipliers then paid on Moco's 2-D walker at N = 25 and 50 (2-6
    times fewer iterations than the limited-memory Hessian) but failed at N = 15 and gained nothing on gait2d
    (docs/verification.md, "Warm starts")."""
    if before is None:
        return False
    defaults = {**walker.settings_defaults, "optimizer": "ipopt"}
    if any(before.get(k, defaults.get(k)) != settings.get(k, defaults.get(k)) for k in _SAME_FOR_WARM_START):
        return False
    try:
        kept_speed = float(before.get("speed", walker.speed))
        kept_n = int(before.get("mesh_intervals", mesh(walker.mesh_full, walker.mesh_fast)))
    except (TypeError, ValueError):
        return False
    if kept_n != n:
        return False
    # 1e-9 m/s: speeds typed as decimals (1.2 -> 1.6 differs by 0.4000000000000001)
    change = abs(kept_speed - speed)
    return change <= 1e-9 or (change <= walker.warm_speed_change + 1e-9 and n >= walker.warm_speed_mesh)


#: Most iterations a continuation from multipliers may take before :func:`solve_walk` gives up on it (measured
#: continuations took 3-143; one that cycles is caught within seconds on the test suite's mesh).
WARM_ITERATION_CAP = 300


def solve_walk(walker: Walker, study: Study, progress: Callable | None = None) -> Solution:
    """Solve the dashboard's ``study`` (from :func:`build_walk`); a continuation from a kept solution's multipliers
    (``study.solver.optim_warm_start``) gets at most :data:`WARM_ITERATION_CAP` iterations, and if it stops
    unconverged the problem is solved again from the same motion alone with the limited-memory Hessian — the
    dependable path, measured (Moco's 2-D walker at 1.3 m/s on 15 mesh intervals: every exact start cycled to the
    iteration limit, the limited-memory Hessian converged in 191 iterations). The returned solution's ``message``
    then says so; its ``nit`` and ``solve_time`` are the second solve's."""
    s = study.solver
    if not s.optim_warm_start:
        return study.solve(progress=progress)
    limit = s.optim_max_iterations
    s.optim_max_iterations = WARM_ITERATION_CAP if limit is None else min(limit, WARM_ITERATION_CAP)
    first = study.solve(progress=progress)
    s.optim_max_iterations = limit
    if first.success:
        return first
    s.optim_warm_start, s.guess_duals = False, None
    s.set_hessian_approximation("limited-memory")
    second = study.solve(progress=progress)
    second.message = (f"{second.message}; solved again from the motion alone with the limited-memory Hessian "
                      f"after the continuation from the last solution's multipliers stopped ({first.status}, "
                      f"{first.nit} iterations, {first.solve_time:.1f} s)")
    return second


def walk_plotted(walker: Walker, solution: Solution) -> list[str]:
    """The panel's states-and-controls figure shows the right leg's activations."""
    return [f"{walker.muscle_path(group)}/activation" for group in walker.groups]


def walk_figures(walker: Walker, solution: Solution, previous: Solution | None, settings: dict) -> dict:
    """The walker's figures: ``"motion"`` (the walk animated) and its comparison with data, the previous dashed."""
    return walker.figures(walker.drawing_model, solution, previous, float(settings.get("speed", walker.speed)))


def walk_numbers(walker: Walker, solution: Solution, settings: dict) -> dict:
    """The effort, the walker's own numbers and the right calf muscles' peak activations."""
    numbers = {"effort": f"{solution.goal_values.get('effort', float('nan')):.3f}"}
    numbers.update(walker.numbers(walker.drawing_model, solution))
    for group in walker.calf:
        peak = float(np.max(solution.states[f"{walker.muscle_path(group)}/activation"]))
        numbers[f"peak {group}_r"] = f"{peak:.2f}"
    return numbers


# ----------------------------------------------------------------------------------------------- gait2d
def _gait2d_pose(model: Model, guess: Trajectory, speed: float, n: int) -> Study:
    # the limited-memory Hessian unless the guess is within the walker's Newton radius (build_walk)
    study = gait2d_prediction_study(n, model=model, guess=guess, speed=speed, tracking_weight=1.0,
                                    hessian="limited-memory")
    study.problem.get_goal("angles").weight = 0.0  # off unless the learner gives it a weight
    return study


def _gait2d_figures(model: Model, solution: Solution, previous: Solution | None, speed: float) -> dict:
    label = "solution" if solution.success else f"last iterate ({solution.status})"
    return {"motion": animate_gait2d(model, solution, frames=mesh(40, 12), height=420,
                                     title=f"The predicted cycle at {speed:g} m/s (press play)"),
            "winter": plot_against_winter(model, {label: solution}, faded=previous, height=620,
                                          title="Joint angles and ground reaction forces against Winter (± 1 SD)")}


def _gait2d_numbers(model: Model, solution: Solution) -> dict:
    """Stance of each foot, double support, flight (neither foot on the ground: running) and the peak vertical force;
    a foot is on the ground where its vertical force exceeds 5 % of the body weight."""
    grf = gait2d_forces(model, solution)
    ph = gait_phases(model, solution)
    return {"stance r / l": f"{100 * ph.stance_r:.0f} / {100 * ph.stance_l:.0f} %",
            "double support": f"{100 * ph.double_support:.0f} %",
            "flight": f"{100 * ph.flight:.0f} %",
            "peak vertical GRF": f"{max(grf[s][:, 1].max() for s in 'rl') / model.body_weight():.2f} BW"}


GAIT2D = Walker(
    key="gait2d_walking",
    title="Predicting walking with gait2d",
    description=("van den Bogert's gait2d model (9 degrees of freedom, 16 muscles, heel and toe contact) walks one "
                 "periodic gait cycle with Winter's stride time (1.1396 s) at the <b>speed</b> you set, minimizing "
                 "muscle effort ∫ Σ u<sup>p</sup> dt (set the exponent p under Goals); <b>angles</b> tracks Winter's "
                 "joint angles (weight 0 = pure prediction; try 0.01). Weaken or strengthen a <b>muscle group</b> "
                 "(both legs, % of normal) and press Solve: each solve starts from the previous solution (warm "
                 "start), the first from a prediction shipped with moco_lab. Angles and ground reaction forces are "
                 "drawn against Winter's normal gait (± 1 SD), the previous solution dashed. At the last walk's speed a new "
                 "strength or goal continues that walk (its multipliers too) with exact second derivatives in "
                 "seconds; near it (within 0.15 m/s) exact second derivatives start from its motion; a bigger jump "
                 "(e.g. 1.6 m/s at once) uses the limited-memory Hessian and takes a minute or more."),
    model=gait2d, pose=_gait2d_pose, forward="hip_x", muscle="/forceset/{group}_{side}",
    groups={"iliopsoas": "iliopsoas", "glutei": "glutei", "hamstrings": "hamstrings", "rectus_femoris": "rect. fem.",
            "vasti": "vasti", "gastrocnemius": "gastroc.", "soleus": "soleus", "tibialis_anterior": "tib. ant."},
    calf=("soleus", "gastrocnemius"), shipped=GAIT2D_PREDICTED_WALK,
    speed=winter_gait().speed, speeds=(0.3, 2.5),
    speed_tip=("average forward speed over the cycle; Winter's: 1.325 m/s; the stride time stays 1.1396 s, so the "
               "steps get longer"),
    figures=_gait2d_figures, numbers=_gait2d_numbers,
    settings_defaults={"mode": "implicit", "scheme": "trapezoidal", "tolerance": 1e-3},
    mesh_full=50, mesh_fast=25, newton_radius=0.15,
)


# ------------------------------------------------------------------------------------------ Moco's 2-D walker
def _walking_2d_pose(model: Model, guess: Trajectory, speed: float, n: int) -> Study:
    return walking_2d_prediction(guess, model, speed=speed, num_mesh_intervals=n)


def _walking_2d_figures(model: Model, solution: Solution, previous: Solution | None, speed: float) -> dict:
    label = "prediction" if solution.success else f"last iterate ({solution.status})"
    return {"motion": animate_walking_2d(model, solution, frames=mesh(40, 12), height=460,
                                         title=f"A full gait cycle at {speed:g} m/s (press play)"),
            "data": plot_walking_2d(model, {label: solution}, faded=previous, height=760,
                                    title="Half a gait cycle against the tracking data of Moco's example")}


def _walking_2d_numbers(model: Model, solution: Solution) -> dict:
    """Duration and length of the step, double support of the half cycle and the peak vertical force."""
    s = walking_2d_summary(model, solution)
    return {"step": f"{s.duration:.3f} s, {s.step_length:.2f} m",
            "double support": f"{100 * s.double_support:.0f} %",
            "peak vertical GRF": f"{s.peak_vertical_grf:.2f} BW"}


WALKING_2D = Walker(
    key="walking_2d",
    title="Predicting walking with Moco's 2-D walker",
    description=("The planar walker of Moco's 2-D walking example (<code>2D_gait.osim</code>: 10 degrees of freedom, "
                 "18 DeGrooteFregly2016 muscles, two contact spheres per foot) walks half a gait cycle that repeats "
                 "with the legs swapped, at the average <b>speed</b> you set, minimizing muscle effort "
                 "∫ Σ |u|<sup>p</sup> dt per distance walked (weight and exponent p under Goals; Moco's example: 10 "
                 "and 3). Weaken or strengthen a <b>muscle group</b> (both legs, % of normal) and press Solve: each "
                 "solve starts from the previous solution (warm start), the first from a prediction shipped with "
                 "moco_lab; on the same mesh, at the same speed or (25 mesh intervals or more) one within 0.4 m/s "
                 "of the last, it continues that walk, "
                 "multipliers and all, with exact second derivatives (seconds; should that stop, it solves again "
                 "with the limited-memory Hessian), otherwise with the limited-memory Hessian. The full cycle is "
                 "animated; angles and ground reaction forces are drawn against the example's tracking data, the "
                 "previous solution dashed."),
    model=walking_2d_model, pose=_walking_2d_pose, forward="pelvis_tx", muscle="/{group}_{side}",
    groups={"hamstrings": "hamstrings", "bifemsh": "biceps fem. sh.", "glut_max": "glut. max.",
            "iliopsoas": "iliopsoas", "rect_fem": "rect. fem.", "vasti": "vasti", "gastroc": "gastroc.",
            "soleus": "soleus", "tib_ant": "tib. ant."},
    calf=("soleus", "gastroc"), shipped=WALKING_2D_PREDICTED,
    speed=1.2, speeds=(0.5, 2.0),
    speed_tip="average forward speed of the centre of mass (0.5 to 2); Moco's example: 1.2 m/s",
    figures=_walking_2d_figures, numbers=_walking_2d_numbers,
    settings_defaults={"mode": "explicit", "scheme": "hermite-simpson", "tolerance": 1e-4},
    mesh_full=50, mesh_fast=15, warm_speed_change=0.4,
)

#: The walkers of the walking dashboard, by demo-problem name.
WALKERS: dict[str, Walker] = {w.key: w for w in (GAIT2D, WALKING_2D)}
