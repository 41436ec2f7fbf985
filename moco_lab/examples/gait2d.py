"""Walking with gait2d: track Winter's normal gait.

:func:`winter_gait` reads Winter's normal gait (mean and variance of the hip, knee and ankle angles of both
legs and of both feet's ground reaction forces over one cycle; 1.325 m/s, stride 1.1396 s), shipped with
moco_lab. :func:`gait2d_tracking_study` poses one full, periodic gait cycle of ``ml.models.gait2d()`` that
tracks it, as van den Bogert / Ackermann-style studies do:

* the cycle lasts Winter's stride time and the hip moves forward by speed × stride time;
* every state except the hip's forward position is periodic (an endpoint constraint);
* goals: the six joint angles (weights 1/variance, the variance averaged over the cycle, so an error of one
  standard deviation costs 1 per second and angle), both feet's ground reaction forces (the same with their
  variances, in body weights), and a small muscle effort ∫ Σ u² dt;
* implicit multibody dynamics, trapezoidal transcription; the fiber velocities (gait2d's implicit derivatives)
  carry a small penalty (``implicit_auxiliary_derivatives_weight``) and IPOPT's adaptive barrier update is used:
  without them the solves measured here stalled (oscillating constraint violation, 1000 iterations); with them
  they converge (``benchmarks/gait2d_walking.md``);
* solved in two stages (``SolverSettings.optim_limited_memory_start``): 150 iterations with the limited-memory
  Hessian from Winter's angles, then Newton's iterations with the exact Hessian. With the limited-memory Hessian
  alone the solve crept along flat valleys for 1,200–2,300 iterations and stopped where the computer's rounding
  took it (objectives 1.730–1.748 over BLAS kernels at N = 25); staged it takes about 280 iterations (N = 25, 20 s)
  or 200 (N = 50, 33 s) and ends at the same point on every kernel tried. From the default guess, IPOPT + MUMPS
  with the limited-memory Hessian (and hence a first stage on it) converged at N = 50 to a worse local minimum
  (objective 6.30 against 2.40): the first stage runs on Drake's IPOPT.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from ..engine.collocation import check_scheme
from ..modeling.gait2d import GAIT2D_MUSCLES, gait2d
from ..modeling.model import Model, require_model
from ..ocp.goals import ContactGroup, ContactTrackingGoal, ControlGoal, PeriodicityGoal, StateTrackingGoal
from ..results.trajectory import Trajectory
from ..tools.study import Study
from ..util.checks import finite_number, one_of, whole_number
from ..util.data import WINTER_GAIT

__all__ = ["WinterGait", "winter_gait", "gait2d_tracking_study", "gait2d_prediction_study", "gait2d_walking_guess",
           "WINTER_JOINTS"]

#: Winter's joint angles by gait2d coordinate name.
WINTER_JOINTS = tuple(f"{j}_{s}" for s in ("r", "l") for j in ("hip_flexion", "knee_angle", "ankle_angle"))


@dataclass
class WinterGait:
    """Winter's normal gait over one cycle (right heel strike at t = 0 and at t = ``duration``).

    Attributes
    ----------
    time : (51,) s
        The 50 samples and the cycle's end (a copy of the first sample).
    mean, var : dict of str -> (51,)
        By column: the six coordinates of :data:`WINTER_JOINTS` (rad, rad²) and ``grf_x_r``, ``grf_y_r``,
        ``grf_x_l``, ``grf_y_l`` (body weights, BW²).
    speed, duration : float
        1.325 m/s, 1.1396 s.
    """

    time: np.ndarray
    mean: dict
    var: dict
    speed: float
    duration: float


def winter_gait() -> WinterGait:
    """Read the shipped table (``moco_lab/data/gait2d/winter_normal_gait.csv``; sources in its NOTICE)."""
    lines = [line for line in WINTER_GAIT.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    rows = list(csv.reader(lines))
    head = [h.split("[")[0] for h in rows[0]]
    data = np.array(rows[1:], float)
    col = {h: i for i, h in enumerate(head)}
    duration, speed = 1.1396, 1.325  # the table's header: dur = 1.1396 s, speed = 1.325 m/s
    time = np.append(data[:, col["pct_gait_cycle"]] / 100 * duration, duration)

    def closed(name: str) -> np.ndarray:
        v = data[:, col[name]]
        return np.append(v, v[0])

    mean, var = {}, {}
    for j in WINTER_JOINTS:
        mean[j], var[j] = closed(f"{j}_mean"), closed(f"{j}_var")
    for s in ("r", "l"):
        for a in ("x", "y"):
            mean[f"grf_{a}_{s}"], var[f"grf_{a}_{s}"] = closed(f"GRF_{a}_{s}_mean"), closed(f"GRF_{a}_{s}_var")
    return WinterGait(time, mean, var, speed, duration)


def gait2d_walking_guess(model: Model, num_points: int, gait: WinterGait | None = None) -> Trajectory:
    """A guess for a gait cycle: Winter's joint angles (and their rates), the hip moving at Winter's speed at
    0.94 m, the trunk upright, activations and excitations 0.1, each fiber at the length that leaves its tendon
    just slack, fiber velocities zero."""
    gait = gait or winter_gait()
    t = np.linspace(0.0, gait.duration, num_points)
    states = {}
    for c in model.coordinates:
        if c.name in WINTER_JOINTS:
            q = np.interp(t, gait.time, gait.mean[c.name])
            states[c.value_path], states[c.speed_path] = q, np.gradient(q, t)
        elif c.name == "hip_x":
            states[c.value_path], states[c.speed_path] = gait.speed * t, np.full_like(t, gait.speed)
        elif c.name == "hip_y":
            states[c.value_path], states[c.speed_path] = np.full_like(t, 0.94), np.zeros_like(t)
        else:
            states[c.value_path], states[c.speed_path] = np.zeros_like(t), np.zeros_like(t)
    angles = {c.name: states[c.value_path] for c in model.coordinates}
    controls = {}
    for m in GAIT2D_MUSCLES:
        el = model.force_element(f"/forceset/{m}")
        lm = el.musculotendon_length(angles)
        states[f"/forceset/{m}/activation"] = np.full_like(t, 0.1)
        states[f"/forceset/{m}/normalized_fiber_length"] = (lm - el.see_slack) / el.optimal_fiber_length
        controls[f"/forceset/{m}"] = np.full_like(t, 0.1)
    return Trajectory(t, states=states, controls=controls)


def gait2d_tracking_study(num_mesh_intervals: int = 25, *, model: Model | None = None, effort_weight: float = 0.1,
                          angle_weight: float = 1.0, grf_weight: float = 1.0, scheme: str = "trapezoidal",
                          tol: float = 1e-3, max_iterations: int = 3000, hessian: str = "exact",
                          limited_memory_start: int = 150) -> Study:
    """Track Winter's normal gait with gait2d over one full, periodic gait cycle (module docstring).

    Parameters
    ----------
    num_mesh_intervals : int
        Mesh intervals over the cycle (1.1396 s).
    model : Model, optional
        Default ``ml.models.gait2d()`` (75 kg, 1.80 m).
    effort_weight, angle_weight, grf_weight : float
        Weights of ∫ Σ u² dt and of the two tracking goals (which are already divided by Winter's variances).
    scheme, tol, max_iterations
        Transcription scheme, IPOPT's convergence and constraint tolerances, iteration limit.
    hessian : {"exact", "limited-memory"}
        ``SolverSettings.optim_hessian_approximation``. ``"exact"`` (default) selects IPOPT with MUMPS.
    limited_memory_start : int
        With ``hessian="exact"``: the first IPOPT iterations with the limited-memory Hessian
        (``SolverSettings.optim_limited_memory_start``): from Winter's angles they find the walk's neighbourhood,
        Newton's iterations then converge in about 130 more (module docstring).

    Returns
    -------
    Study
        Goals ``angles`` (:class:`StateTrackingGoal`), ``grf`` (:class:`ContactTrackingGoal`), ``effort`` and
        ``periodic``; the guess of :func:`gait2d_walking_guess`.
    """
    who = "gait2d_tracking_study"
    for label, w in (("effort_weight", effort_weight), ("angle_weight", angle_weight), ("grf_weight", grf_weight)):
        finite_number(w, f"{who}: {label}", 0)
    check_scheme(scheme, f"{who}: scheme")
    tol = finite_number(tol, f"{who}: tol", 0, False)
    if model is not None:
        require_model(model, who)
    num_mesh_intervals = whole_number(num_mesh_intervals, "gait2d_tracking_study: num_mesh_intervals")
    max_iterations = whole_number(max_iterations, "gait2d_tracking_study: max_iterations", 0)
    one_of(hessian, f"{who}: hessian", ("exact", "limited-memory"))
    limited_memory_start = whole_number(limited_memory_start, f"{who}: limited_memory_start", 0)
    model = model or gait2d()
    gait = winter_gait()
    study = Study("gait2d_tracking")
    p = study.problem
    p.set_model(model)
    p.set_time_bounds(0.0, gait.duration)
    p.set_state_info(model.coordinate("hip_x").value_path, (-0.5, 2.5), 0.0, gait.speed * gait.duration)
    p.set_state_info(model.coordinate("hip_y").value_path, (0.8, 1.1))
    p.set_state_info(model.coordinate("trunk_angle").value_path, (-0.5, 0.5))
    for s in ("r", "l"):
        p.set_state_info(model.coordinate(f"hip_flexion_{s}").value_path, (-1.0, 1.0))
        p.set_state_info(model.coordinate(f"knee_angle_{s}").value_path, (-1.5, 0.1))
        p.set_state_info(model.coordinate(f"ankle_angle_{s}").value_path, (-0.8, 0.6))
    p.set_state_info_pattern(r".*/speed", (-10.0, 10.0))
    reference = {model.coordinate(j).value_path: gait.mean[j] for j in WINTER_JOINTS}
    weights = {model.coordinate(j).value_path: 1.0 / float(np.mean(gait.var[j][:-1])) for j in WINTER_JOINTS}
    # Winter's table (every 2 % of the cycle) interpolated linearly, as this problem was posed and measured
    p.add_goal(StateTrackingGoal("angles", angle_weight, reference=(gait.time, reference), weights=weights,
                                 interpolation="linear"))
    weight_n = model.body_weight()
    forces = {}
    for s in ("r", "l"):
        forces[f"grf_x_{s}"] = gait.mean[f"grf_x_{s}"] * weight_n
        forces[f"grf_y_{s}"] = gait.mean[f"grf_y_{s}"] * weight_n
        forces[f"grf_z_{s}"] = np.zeros_like(gait.time)
    grf_var = float(np.mean([np.mean(gait.var[f"grf_{a}_{s}"][:-1]) for a in ("x", "y") for s in ("r", "l")]))
    # ContactTrackingGoal integrates |ΔF|²/(m g) with F in N: divide by m g · var (BW²) for |ΔF in BW|²/var
    groups = [ContactGroup([f"/forceset/contact_heel_{s}", f"/forceset/contact_toe_{s}"],
                           (f"grf_x_{s}", f"grf_y_{s}", f"grf_z_{s}")) for s in ("r", "l")]
    p.add_goal(ContactTrackingGoal("grf", grf_weight / (weight_n * grf_var), reference=(gait.time, forces),
                                   groups=groups, interpolation="linear"))
    p.add_goal(ControlGoal("effort", effort_weight))
    periodic = PeriodicityGoal("periodic")
    for name in model.state_names():
        if name != model.coordinate("hip_x").value_path:
            periodic.add_pair(name)
    p.add_goal(periodic)
    s = study.solver
    s.num_mesh_intervals = num_mesh_intervals
    s.transcription_scheme = scheme
    s.multibody_dynamics_mode = "implicit"
    s.minimize_implicit_auxiliary_derivatives = True
    s.implicit_auxiliary_derivatives_weight = 1e-3
    s.optim_convergence_tolerance = tol
    s.optim_constraint_tolerance = tol
    s.optim_max_iterations = max_iterations
    s.optim_solver_options = {**s.optim_solver_options, "mu_strategy": "adaptive"}
    s.set_hessian_approximation(hessian)
    s.optim_limited_memory_start = limited_memory_start
    points = 2 * num_mesh_intervals + 1 if scheme == "hermite-simpson" else num_mesh_intervals + 1
    s.guess = gait2d_walking_guess(model, points, gait)
    return study


def gait2d_prediction_study(num_mesh_intervals: int = 25, *, guess: Trajectory | None = None,
                            model: Model | None = None, effort_weight: float = 1.0, effort_exponent: float = 2.0,
                            tracking_weight: float = 0.0, speed: float | None = None,
                            duration: float | None = None, tol: float = 1e-3, max_iterations: int = 3000,
                            hessian: str = "exact") -> Study:
    """Predict a gait cycle of gait2d: minimum muscle effort ``∫ Σ u^p dt``, plus optionally a small tracking term.

    The same cycle as :func:`gait2d_tracking_study` (periodic states, the hip advancing by ``speed × duration``,
    Winter's by default, fixed duration) with the goals ``effort`` (weight ``effort_weight``, exponent
    ``effort_exponent``) and, when ``tracking_weight > 0``, ``angles`` (Winter's joint angles weighted by their
    variances, as in the tracking study, times ``tracking_weight``). Start it from a tracking solution
    (``guess=``); from the default guess it is much harder.

    ``hessian`` is ``SolverSettings.optim_hessian_approximation``: ``"exact"`` (default; IPOPT with MUMPS, Newton's
    iterations from the first) or ``"limited-memory"`` (IPOPT with SPRAL). Measured from the limited-memory
    tracking solution at N = 25 (``benchmarks/hessian.md``, docs/verification.md): the exact Hessian converges
    straight to effort alone in 414 iterations to 0.24658 on the Haswell, SkylakeX, Zen and Sandybridge BLAS
    kernels of two computers, the limited-memory one in about 2,700 to 0.2506, eight times slower.
    """
    study = gait2d_tracking_study(num_mesh_intervals, model=model, tol=tol, max_iterations=max_iterations)
    study.name = "gait2d_prediction"
    p = study.problem
    gait = winter_gait()
    speed = gait.speed if speed is None else float(speed)
    duration = gait.duration if duration is None else float(duration)
    if not (speed > 0 and duration > 0):
        raise ValueError(f"gait2d_prediction_study: speed and duration must be positive, got {speed}, {duration}")
    model = p.model
    p.set_time_bounds(0.0, duration)
    p.set_state_info(model.coordinate("hip_x").value_path, (-0.5, 2.5 * speed * duration + 0.5), 0.0,
                     speed * duration)
    p.remove_goal("grf")
    effort = p.get_goal("effort")
    effort.weight, effort.exponent = float(effort_weight), float(effort_exponent)
    if tracking_weight > 0:
        p.get_goal("angles").weight = float(tracking_weight)
    else:
        p.remove_goal("angles")
    if guess is not None:
        study.solver.guess = guess
    study.solver.optim_solver, study.solver.optim_linear_solver = "ipopt", "spral"
    study.solver.set_hessian_approximation(hessian)
    study.solver.optim_limited_memory_start = 0  # started from a walk, Newton's iterations from the first
    return study
