"""What lesson 16 measures on Moco's 3-D walking inverse (:mod:`moco_lab.examples.walking_3d`).

* :data:`EMG_GROUPS`: the trial's ten electromyography envelopes (right leg) and the model's muscles each records;
* :func:`group_activation` and :func:`emg_comparison`: a group's mean activation next to its envelope — the
  correlation over the trial and the times of the peaks, the numbers EMG comparisons report;
* :func:`residual_loads`: the pelvis residuals' forces and moments, and their size against body weight.

EMG envelopes have no unit that compares with an activation (each is normalized to its own peak over the
recording; the example scales three of them to peak levels from Perry and Burnfield 2010), so what is compared
here is timing and shape (correlation, peak times), not amplitude.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..examples.walking_3d import (
    WALKING_3D_KNEE_LOAD,
    KneeLoadResult,
    walking_3d_emg,
    walking_3d_inverse,
    walking_3d_model,
)
from ..modeling.model import Model
from ..modeling.operators import scale_max_isometric_force
from ..results.trajectory import Trajectory
from ..solve.optimizer import Progress
from ..tools.analyze import joint_reactions
from ..tools.inverse import InverseSolution
from ..util.names import did_you_mean

if TYPE_CHECKING:
    from ..engine.kernel import Kernel

__all__ = ["EMG_GROUPS", "EmgComparison", "group_activation", "emg_comparison", "ResidualLoads", "residual_loads",
           "STRENGTH_GROUPS", "Walking3dSettings", "Walking3dRun", "run_walking_3d", "mean_activations", "trial_motion",
           "knee_reactions", "solve_knee_load"]

#: Each EMG envelope of ``electromyography.sto`` (the right leg) and the model's muscles under its electrodes.
EMG_GROUPS: dict[str, tuple[str, ...]] = {
    "soleus": ("soleus_r",),
    "gastrocnemius": ("gasmed_r", "gaslat_r"),
    "tibialis_anterior": ("tibant_r",),
    "medial_hamstrings": ("semimem_r", "semiten_r"),
    "biceps_femoris": ("bflh_r",),
    "vastus_lateralis": ("vaslat_r",),
    "vastus_medius": ("vasmed_r",),
    "rectus_femoris": ("recfem_r",),
    "gluteus_maximus": ("glmax1_r", "glmax2_r", "glmax3_r"),
    "gluteus_medius": ("glmed1_r", "glmed2_r", "glmed3_r"),
}


def group_activation(solution: Trajectory, group: str, time: ArrayLike | None = None) -> np.ndarray:
    """The mean activation of the muscles of EMG group ``group`` (:data:`EMG_GROUPS`), at ``time`` (linear
    interpolation; default the solution's own times): shape ``(len(time),)``."""
    if group not in EMG_GROUPS:
        raise KeyError(did_you_mean(group, list(EMG_GROUPS), "EMG group"))
    t = np.asarray(solution.time, float)
    at = t if time is None else np.asarray(time, float)
    columns = [f"/forceset/{m}/activation" for m in EMG_GROUPS[group]]
    missing = [c for c in columns if c not in solution.states]
    if missing:
        raise KeyError(f"group {group!r}: the solution has no state {missing[0]!r} (a solution of the 3-D walking "
                       "model with its muscles is needed)")
    return np.mean([np.interp(at, t, np.asarray(solution.states[c], float)) for c in columns], axis=0)


@dataclass
class EmgComparison:
    """One EMG group against the model's activations (times in s, activations and envelopes dimensionless).

    Attributes
    ----------
    group : str
    muscles : tuple of str
        The model's muscles averaged (:data:`EMG_GROUPS`).
    correlation : float
        Pearson's r between the mean activation and the envelope at the envelope's samples within the solution's
        time range.
    activation_peak_time, emg_peak_time : float
        When each is largest within that range.
    peak_activation, peak_emg : float
        Their largest values there.
    """

    group: str
    muscles: tuple
    correlation: float
    activation_peak_time: float
    emg_peak_time: float
    peak_activation: float
    peak_emg: float


def emg_comparison(solution: Trajectory, emg: tuple[ArrayLike, Mapping[str, ArrayLike]] | None = None,
                   groups: Sequence[str] | None = None) -> dict[str, EmgComparison]:
    """Each EMG group's envelope against the group's mean activation in ``solution``.

    Parameters
    ----------
    solution : Solution or Trajectory
        A solution of the 3-D walking inverse (muscle activations ``/forceset/<muscle>/activation``).
    emg : (time (n,), {group: envelope (n,)}), optional
        Default :func:`~moco_lab.examples.walking_3d.walking_3d_emg` (the trial's envelopes, scaled as the example
        scales them; scaling changes neither correlations nor peak times).
    groups : sequence of str, optional
        Default every group of :data:`EMG_GROUPS` the envelopes hold.
    """
    t_emg, envelopes = emg if emg is not None else walking_3d_emg()
    t_emg = np.asarray(t_emg, float)
    names = list(groups) if groups is not None else [g for g in EMG_GROUPS if g in envelopes]
    t = np.asarray(solution.time, float)
    inside = (t_emg >= t[0]) & (t_emg <= t[-1])
    if inside.sum() < 3:
        raise ValueError(f"the EMG samples ({t_emg[0]:.3g}–{t_emg[-1]:.3g} s) hardly overlap the solution's time "
                         f"range ({t[0]:.3g}–{t[-1]:.3g} s)")
    ts = t_emg[inside]
    out = {}
    for g in names:
        if g not in envelopes:
            raise KeyError(did_you_mean(g, list(envelopes), "EMG envelope"))
        e = np.asarray(envelopes[g], float)[inside]
        a = group_activation(solution, g, ts)
        out[g] = EmgComparison(g, EMG_GROUPS[g], float(np.corrcoef(a, e)[0, 1]), float(ts[np.argmax(a)]),
                               float(ts[np.argmax(e)]), float(a.max()), float(e.max()))
    return out


@dataclass
class ResidualLoads:
    """The pelvis residual actuators along a solution.

    Attributes
    ----------
    time : ndarray (n,)
    forces : dict of str -> ndarray (n,)
        Each residual's generalized force, optimal force × control (N for a translation, N·m for a rotation), by
        coordinate name.
    units : dict of str -> str
        ``"N"`` or ``"N·m"`` by coordinate name.
    body_weight : float
        The model's weight (N).
    peak_force : float
        Largest |residual force| (N).
    peak_force_percent : float
        The same as a percentage of body weight.
    peak_moment : float
        Largest |residual moment| (N·m).
    """

    time: np.ndarray
    forces: dict
    units: dict
    body_weight: float
    peak_force: float
    peak_force_percent: float
    peak_moment: float


def residual_loads(model: Model, solution: Trajectory, prefix: str = "/forceset/residual_") -> ResidualLoads:
    """The residual actuators' generalized forces along ``solution`` (actuators whose path starts with ``prefix``,
    as :func:`moco_lab.tools.inverse.add_residuals` names them)."""
    residuals = [a for a in model.actuators if a.path.startswith(prefix)]
    if not residuals:
        raise ValueError(f"model {model.name!r} has no actuator whose path starts with {prefix!r} (add them with "
                         "ml.add_residuals)")
    missing = [a.path for a in residuals if a.path not in solution.controls]
    if missing:
        raise KeyError(f"the solution has no control {missing[0]!r}: is it a solution of this model?")
    forces = {a.coordinate: a.optimal_force * np.asarray(solution.controls[a.path], float) for a in residuals}
    units = {a.coordinate: "N·m" if model.coordinate_motion(a.coordinate) == "rotational" else "N" for a in residuals}
    weight = model.body_weight()
    peak_f = max((np.abs(f).max() for c, f in forces.items() if units[c] == "N"), default=0.0)
    peak_m = max((np.abs(f).max() for c, f in forces.items() if units[c] == "N·m"), default=0.0)
    return ResidualLoads(np.asarray(solution.time, float), forces, units, weight, float(peak_f),
                         float(100 * peak_f / weight), float(peak_m))


#: Muscle groups (both legs) whose strength the 3-D walking dashboard can change, by the muscles of the model.
STRENGTH_GROUPS: dict[str, tuple[str, ...]] = {
    "calves (soleus, gastrocnemius)": ("soleus", "gasmed", "gaslat"),
    "dorsiflexors (tibialis anterior, EDL, EHL)": ("tibant", "edl", "ehl"),
    "quadriceps": ("recfem", "vasint", "vaslat", "vasmed"),
    "hamstrings": ("bflh", "bfsh", "semimem", "semiten"),
    "hip abductors (gluteus medius, minimus)": ("glmed1", "glmed2", "glmed3", "glmin1", "glmin2", "glmin3"),
    "hip extensors (gluteus maximus)": ("glmax1", "glmax2", "glmax3"),
}


def mean_activations(solution: Trajectory, model: Model) -> dict[str, float]:
    """Each muscle's activation averaged over the solution's time span (trapezoidal rule), by the muscle's name
    (``"soleus_r"``); the model gives the muscles."""
    t = np.asarray(solution.time, float)
    if t.size < 2 or t[-1] <= t[0]:
        raise ValueError(f"mean_activations: the solution needs at least two times spanning an interval, got {t.size}")
    return {m.path.split("/")[-1]: float(np.trapezoid(np.asarray(solution.states[f"{m.path}/activation"]), t)
                                         / (t[-1] - t[0])) for m in model.muscles}


def trial_motion(model: Model, frames: int) -> Trajectory:
    """The trial's prescribed motion (``coordinates.sto`` over exampleMocoInverse's time span, coupled coordinates
    following their constraints) at ``frames`` equally spaced times, as the coordinates' ``value`` states — for
    drawing and animating it."""
    inverse = walking_3d_inverse(model, mesh_interval=0.05)
    t = np.linspace(inverse.initial_time, inverse.final_time, int(frames))
    Q = inverse.kinematics_on(t)[0]
    return Trajectory(t, {c.value_path: Q[:, k] for k, c in enumerate(model.coordinates)})


@dataclass
class Walking3dSettings:
    """One solve of the 3-D walking inverse with a learner's changes (the dashboard's controls).

    Attributes
    ----------
    effort_exponent : float
        Exponent of the excitation effort (Moco's example: 2).
    emg_weight : float
        Weight of the EMG-tracking goal (0: none; Moco's ``solveMocoInverseWithEMG``: 50).
    group : str or None
        A key of :data:`STRENGTH_GROUPS` whose muscles (both legs) get ``strength`` times their maximum isometric
        force.
    strength : float
        That factor (1: the model as it is).
    mesh_interval : float
        Seconds (Moco's example: 0.02).
    hessian : str
        IPOPT's Hessian: ``"limited-memory"`` (Moco's, the example's) or ``"exact"`` (moco_lab's second derivatives:
        far fewer iterations — with EMG tracking 18 instead of 241 — that stop elsewhere on the same flat valley at the
        example's tolerance; docs/verification.md).
    """

    effort_exponent: float = 2.0
    emg_weight: float = 0.0
    group: str | None = None
    strength: float = 1.0
    mesh_interval: float = 0.02
    hessian: str = "limited-memory"


@dataclass
class Walking3dRun:
    """What :func:`run_walking_3d` found: the inverse's result, the solution's comparison with the EMG, the pelvis
    residuals, each muscle's mean activation (by name) and the wall time (s)."""

    settings: Walking3dSettings
    result: InverseSolution
    emg: dict
    residuals: ResidualLoads
    mean_activation: dict
    seconds: float


def run_walking_3d(settings: Walking3dSettings | None = None,
                   progress: Callable[[Progress], None] | None = None) -> Walking3dRun:
    """Pose Moco's exampleMocoInverse with ``settings``' changes, solve it (IPOPT + MUMPS, ``progress`` called with
    each iteration) and measure the solution. Raises ``RuntimeError`` naming the status if IPOPT fails."""
    s = settings or Walking3dSettings()
    if s.group is not None and s.group not in STRENGTH_GROUPS:
        raise KeyError(did_you_mean(s.group, list(STRENGTH_GROUPS), "muscle group"))
    if s.emg_weight < 0:
        raise ValueError(f"emg_weight must be >= 0 (0: no EMG tracking), got {s.emg_weight}")
    if s.hessian not in ("limited-memory", "exact"):
        raise ValueError(f"hessian must be 'limited-memory' or 'exact', got {s.hessian!r}")
    start = time.perf_counter()
    model = walking_3d_model()
    if s.group is not None and s.strength != 1.0:
        names = [f"{m}_{side}" for m in STRENGTH_GROUPS[s.group] for side in "rl"]
        scale_max_isometric_force(model, s.strength, names)
    inverse = walking_3d_inverse(model, emg=s.emg_weight > 0, mesh_interval=s.mesh_interval,
                                 effort_exponent=s.effort_exponent)
    if s.emg_weight > 0:
        inverse.goals[0].weight = float(s.emg_weight)
    inverse.settings.optim_hessian_approximation = s.hessian
    result = _solved(inverse, progress)
    sol = result.solution
    return Walking3dRun(s, result, emg_comparison(sol), residual_loads(model, sol), mean_activations(sol, model),
                        time.perf_counter() - start)


def _solved(inverse, progress: Callable[[Progress], None] | None, transcription=None) -> InverseSolution:
    """``inverse.solve(progress, transcription)``; ``RuntimeError`` naming IPOPT's status if it found no solution."""
    result = inverse.solve(progress=progress, transcription=transcription)
    if not result.success:
        s = result.solution
        raise RuntimeError(f"IPOPT stopped without a solution: {s.status} ({s.message}) after {s.nit} iterations")
    return result


def knee_reactions(model: Model, solution: Trajectory, kernel: Kernel | None = None) -> dict[str, np.ndarray]:
    """Each walker knee's reaction on the femur along ``solution``, in ground axes: ``{joint path: (n, 3)}`` (N) —
    what OpenSim's ``Joint::calcReactionOnParentExpressedInGround`` gives (checked against it in
    ``tests/test_walking_3d_knee_load.py``). ``kernel``: the model's equations already derived (the solving
    transcription's), else derived again."""
    joints = list(WALKING_3D_KNEE_LOAD["joints"])
    table = joint_reactions(model, solution, joints, "parent", "/ground", kernel=kernel)
    return {j: np.column_stack([np.asarray(table.columns[f"{j}/reaction_on_parent_in_/ground_force_{a}"], float)
                                for a in "xyz"]) for j in joints}


def solve_knee_load(weight: float = WALKING_3D_KNEE_LOAD["weight"], *, mesh_interval: float = 0.02,
                    progress: Callable[[Progress], None] | None = None) -> KneeLoadResult:
    """The Moco paper's knee-load study with a learner's weight: exampleMocoInverse on the model's geometry paths
    (``walking_3d_model(function_based_paths=False)``) with the knee-load goals of ``weight`` on each walker knee
    (0: minimum effort alone; the paper's 0.005), solved (``progress`` called with each IPOPT iteration) and
    measured as the stored study is (:func:`~moco_lab.examples.walking_3d_knee_load_results`).

    Each call derives the wrapped paths' equations and the knee reactions once, for the solve, and measures the
    reactions with them (not derived a second time): at Moco's mesh (0.02 s) 32 s on a slower 2-core machine (AMD
    EPYC, 2026-11-30), 50 s when the reactions derived their own.

    Returns
    -------
    KneeLoadResult
        ``provenance`` holds ``status``, ``iterations``, ``objective``, ``excitation_effort``, ``weight``,
        ``mesh_interval`` and ``seconds`` (wall time). Raises ``RuntimeError`` naming the status if IPOPT fails.
    """
    weight = float(weight)
    if not weight >= 0.0:
        raise ValueError(f"solve_knee_load: weight must be >= 0 (0: minimum effort alone; the paper's "
                         f"{WALKING_3D_KNEE_LOAD['weight']}), got {weight}")
    start = time.perf_counter()
    model = walking_3d_model(function_based_paths=False)
    inverse = walking_3d_inverse(model, knee_load=weight > 0, mesh_interval=mesh_interval)
    for goal in inverse.goals:
        goal.weight = weight  # the knee-load goals (the only goals added to the example's)
    transcription = inverse.transcribe()
    sol = _solved(inverse, progress, transcription).solution
    activations = {name[:-len("/activation")]: np.asarray(v, float) for name, v in sol.states.items()
                   if name.endswith("/activation")}
    forces = knee_reactions(model, sol, transcription.kernel)   # its equations, not derived a second time
    provenance = {"status": sol.status, "iterations": sol.nit, "objective": sol.objective,
                  "excitation_effort": sol.goal_values["excitation_effort"], "weight": weight,
                  "mesh_interval": mesh_interval, "seconds": time.perf_counter() - start}
    return KneeLoadResult(np.asarray(sol.time, float), activations, forces, float(model.body_weight()), provenance)
