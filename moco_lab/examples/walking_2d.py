"""Moco's 2-D walking (``example2DWalking``): track half a gait cycle, then predict walking from minimum effort.

The model is ``2D_gait.osim`` (Falisse et al. 2019; shipped): a planar walker of 62 kg, 10 coordinates (a planar
pelvis, hips, knees, ankles, lumbar), 18 rigid-tendon ``DeGrooteFregly2016Muscle`` s, a lumbar
``CoordinateActuator`` and two ``SmoothSphereHalfSpaceForce`` contacts under each foot. The problems are posed as
the C++ example of OpenSim Moco 4.6 poses them (``OpenSim/Examples/Moco/example2DWalking/example2DWalking.cpp``):

**Tracking** (:func:`walking_2d_tracking`): ``MocoTrack`` of ``referenceCoordinates.sto`` (half a gait cycle,
simulated data) low-pass filtered at 6 Hz, states tracking weight 1, the speeds tracked against the positions'
spline slopes, the tracked states as the guess, t in [0, 0.470089] s; the control effort weight raised to 10;
contact tracking (weight 1) of ``referenceGRF.xml``: each foot's two spheres against the measured force of that
foot, projected on the x–y plane and divided by body weight; the symmetry goal; the example's bounds; 50
Hermite–Simpson mesh intervals, explicit dynamics, tolerances 1e-4, at most 1000 iterations. Solved with IPOPT
+ MUMPS (Moco's linear solver) and IPOPT's ``limited_memory_aug_solver="extended"`` (not Moco's: IPOPT's default
step with the limited-memory Hessian costs extra back-solves at every iteration; ``benchmarks/walking_2d.md``
has both).

**Prediction** (:func:`walking_2d_prediction`): the same model, symmetry goal and bounds; an average speed of
1.2 m/s as an endpoint constraint (the centre of mass' displacement over the duration); effort ``10 ∫ Σ|u|³ dt``
divided by that displacement; tf in [0.4, 0.6] s; the same solver settings; the guess is the tracking solution.

**Symmetry** (:func:`walking_2d_symmetry`): the model walks half a gait cycle, so at the end the right leg is where
the left one was at the start and vice versa: every ``_r`` coordinate's value and speed at tf equal its ``_l``
twin's at t0 (and the other way round), likewise the muscles' activations; pelvis tilt, pelvis height and lumbar
angle (values and speeds), the forward speed and the lumbar actuator's control are periodic; only the forward
position is free. All are linear endpoint equality constraints.

**Conditional path points.** Eight of the model's paths have a ``ConditionalPathPoint`` (iliopsoas: hip flexion
in [−90°, 45°]; rectus femoris and vasti: knee angle below −84° and −81°; gastrocnemius: knee angle in
[−45°, 10°]). moco_lab treats them as OpenSim does: a point is part of the path while its coordinate is within its
range widened by 1e-5 rad, so the path length jumps where the coordinate crosses an end (0.39 mm for the
gastrocnemius at −45°, 0.10 mm for the iliopsoas at 45°) and its derivatives are those of the branch the grid point
is on; nothing is smoothed. Both tools' solutions cross a switch inside the feasible region — the left knee passes
−45° twice in the tracking and the prediction (the left gastrocnemius' point), the left hip passes 45° twice in the
prediction (the left iliopsoas') — at the same places, so both optimizers see the same nonsmooth problem; the jumps
are under 0.5 % of these muscles' optimal fibre lengths, and the two tools' solutions agree as closely as their
stopping tolerance allows (``benchmarks/walking_2d.md``). A grid point landing exactly on a switch would be where
they could differ (Moco's finite differences straddle the jump; moco_lab's derivatives are one branch's).

:func:`walking_2d_study` is the one factory for both.
"""
from __future__ import annotations

import math
import re
from typing import Any

from ..modeling.metabolics import Bhargava2004SmoothedMuscleMetabolics
from ..modeling.model import Model, require_model
from ..modeling.osim import read_osim
from ..ocp.goals import AverageSpeedGoal, ContactGroup, ContactTrackingGoal, ControlGoal, PeriodicityGoal
from ..ocp.output_goals import OutputGoal
from ..results.trajectory import Trajectory
from ..tools.study import Study
from ..tools.track import Track
from ..util.checks import finite_number, flag, one_of, whole_number
from ..util.data import opensim_file
from ._reference import rounded_times_resampled

__all__ = ["WALKING_2D_BOUNDS", "WALKING_2D_FINAL_TIME", "WALKING_2D_CONTACTS", "walking_2d_model",
           "walking_2d_symmetry", "walking_2d_bounds", "walking_2d_track", "walking_2d_tracking",
           "walking_2d_prediction", "walking_2d_metabolics", "walking_2d_add_metabolics", "WALKING_2D_METABOLICS",
           "walking_2d_study"]

_DEG = math.pi / 180
#: The example's bounds of the coordinate values (rad, or m), by coordinate name.
WALKING_2D_BOUNDS = {"pelvis_tilt": (-20 * _DEG, -10 * _DEG), "pelvis_tx": (0.0, 1.0), "pelvis_ty": (0.75, 1.25),
                     "hip_flexion_l": (-10 * _DEG, 60 * _DEG), "hip_flexion_r": (-10 * _DEG, 60 * _DEG),
                     "knee_angle_l": (-50 * _DEG, 0.0), "knee_angle_r": (-50 * _DEG, 0.0),
                     "ankle_angle_l": (-15 * _DEG, 25 * _DEG), "ankle_angle_r": (-15 * _DEG, 25 * _DEG),
                     "lumbar": (0.0, 20 * _DEG)}
#: The tracking problem's final time (the example's ``set_final_time``; the reference ends at 0.47008941 s).
WALKING_2D_FINAL_TIME = 0.470089
#: Each foot's contact spheres and the external force (in ``referenceGRF.xml``) they track.
WALKING_2D_CONTACTS = {"Right_GRF": ("/contactHeel_r", "/contactFront_r"),
                       "Left_GRF": ("/contactHeel_l", "/contactFront_l")}


def walking_2d_model() -> Model:
    """``2D_gait.osim``, read as it is (``ml.read_osim("2D_gait.osim")``)."""
    return read_osim(opensim_file("2D_gait.osim"))


def _mirror(name: str, side: str) -> str:
    other = "l" if side == "r" else "r"
    return re.sub(f"_{side}", f"_{other}", name)


def walking_2d_symmetry(model: Model, name: str = "symmetry") -> PeriodicityGoal:
    """The example's symmetry goal for half a gait cycle (see the module docstring), as endpoint constraints.

    Pairs, in the example's order: for each coordinate, ``_r`` ↔ ``_l`` (value and speed) or, for the others except
    ``pelvis_tx``, periodic value and speed; then the pelvis' forward speed; the lumbar actuator's control; each
    muscle's activation ``_r`` ↔ ``_l``.
    """
    goal = PeriodicityGoal(name)
    for c in model.coordinates:
        for state in (c.value_path, c.speed_path):
            if c.name.endswith(("_r", "_l")):
                goal.add_pair(state, _mirror(state, c.name[-1]))
            elif not c.name.endswith("_tx"):
                goal.add_pair(state, state)
    goal.add_pair(model.coordinate("pelvis_tx").speed_path)
    actuators = [a for a in model.control_names() if a.endswith("lumbarAct")]
    for a in actuators:
        goal.add_pair(a)
    for m in model.muscles:
        state = f"{m.path}/activation"
        if m.path.endswith(("_r", "_l")) and state in model.state_names():
            goal.add_pair(state, _mirror(state, m.path[-1]))
    return goal


def walking_2d_bounds(study: Study) -> Study:
    """Set the example's bounds of the coordinate values (:data:`WALKING_2D_BOUNDS`) on ``study``; returns it."""
    model = study.problem.model
    for name, bounds in WALKING_2D_BOUNDS.items():
        study.problem.set_state_info(model.coordinate(name).value_path, bounds)
    return study


def _check_solver_arguments(who: str, model: Model | None, tol: float, linear_solver: str) -> None:
    """The arguments both walking factories share, checked before any model is built."""
    if model is not None:
        require_model(model, who)
    finite_number(tol, f"{who}: tol", 0, False)
    one_of(linear_solver, f"{who}: linear_solver", ("mumps", "spral"))


def _solver(study: Study, num_mesh_intervals: int, tol: float, max_iterations: int, linear_solver: str) -> None:
    s = study.solver
    s.optim_linear_solver = linear_solver
    s.transcription_scheme = "hermite-simpson"
    s.multibody_dynamics_mode = "explicit"
    s.num_mesh_intervals = whole_number(num_mesh_intervals, "walking_2d: num_mesh_intervals")
    s.optim_convergence_tolerance = float(tol)
    s.optim_constraint_tolerance = float(tol)
    s.optim_max_iterations = whole_number(max_iterations, "walking_2d: max_iterations", 0)
    # IPOPT's L-BFGS Hessian enters the step's linear system through the Sherman-Morrison-Woodbury formula by
    # default: two extra back-solves per stored pair at every factorization. "extended" factorizes the KKT
    # system augmented by the L-BFGS factors instead (one factorization, one solve): measured with MUMPS in one
    # benchmark run, the prediction from the tracking solution 36 s / 348 iterations instead of 62 s / 462
    # (benchmarks/walking_2d.md)
    s.optim_solver_options["limited_memory_aug_solver"] = "extended"


def walking_2d_track(model: Model | None = None, *, tracking_weight: float = 1.0,
                     effort_weight: float = 10.0) -> Track:
    """The example's ``MocoTrack`` before the extra goals (a :class:`~moco_lab.tools.track.Track`): the filtered
    reference, derived speeds, the tracked states as the guess, t in [0, :data:`WALKING_2D_FINAL_TIME`]."""
    with rounded_times_resampled():
        return Track(model or walking_2d_model(), opensim_file("referenceCoordinates.sto"),
                     states_global_tracking_weight=tracking_weight, control_effort_weight=effort_weight,
                     allow_unused_references=True, track_reference_position_derivatives=True,
                     apply_tracked_states_to_guess=True, lowpass_cutoff_frequency=6.0, initial_time=0.0,
                     final_time=WALKING_2D_FINAL_TIME)


def _symmetric_tracking(who: str, model: Model | None, tol: float, linear_solver: str, weights: dict) -> Study:
    """The example's MocoTrack as a study named ``who`` with the symmetry goal, after checking the arguments (the
    weights by name: finite and >= 0; ``tracking_weight`` and ``effort_weight`` set the track's)."""
    _check_solver_arguments(who, model, tol, linear_solver)
    for label, w in weights.items():
        finite_number(w, f"{who}: {label}", 0)
    track = walking_2d_track(model, tracking_weight=weights["tracking_weight"], effort_weight=weights["effort_weight"])
    study = track.initialize()
    study.name = who
    study.problem.add_goal(walking_2d_symmetry(track.model))
    return study


def walking_2d_tracking(model: Model | None = None, *, num_mesh_intervals: int = 50, tol: float = 1e-4,
                        tracking_weight: float = 1.0, effort_weight: float = 10.0, grf_weight: float = 1.0,
                        max_iterations: int = 1000, linear_solver: str = "mumps") -> Study:
    """Moco's 2-D walking tracking problem (module docstring) as a :class:`~moco_lab.tools.study.Study`.

    Parameters
    ----------
    model : Model, optional
        Default :func:`walking_2d_model`; any edited copy (e.g. a weaker muscle) works.
    num_mesh_intervals : int
        Hermite–Simpson mesh intervals (the C++ example: 50).
    tol : float
        IPOPT's convergence and constraint tolerances (the example: 1e-4).
    tracking_weight, effort_weight, grf_weight : float
        Weights of the goals ``state_tracking``, ``control_effort`` and ``contact`` (the example: 1, 10, 1; a
        ``grf_weight`` of 0 leaves the contact tracking out, as in the example).
    max_iterations : int
    linear_solver : {"mumps", "spral"}
        IPOPT's linear solver (``SolverSettings.optim_linear_solver``): ``"mumps"``, as Moco (IPOPT from the
        ``casadi`` wheel: about 6x faster here), or ``"spral"`` (Drake's own IPOPT).

    Returns
    -------
    Study
        Goals ``state_tracking``, ``control_effort``, ``symmetry`` (constraints) and ``contact``; the guess holds
        the tracked states.
    """
    study = _symmetric_tracking("walking_2d_tracking", model, tol, linear_solver,
                                {"tracking_weight": tracking_weight, "effort_weight": effort_weight,
                                 "grf_weight": grf_weight})
    problem = study.problem
    if grf_weight != 0:
        problem.add_goal(ContactTrackingGoal(
            "contact", grf_weight, external_loads=opensim_file("referenceGRF.xml"),
            groups=[ContactGroup(list(paths), force) for force, paths in WALKING_2D_CONTACTS.items()],
            projection="plane", projection_vector=(0, 0, 1)))
    walking_2d_bounds(study)
    _solver(study, num_mesh_intervals, tol, max_iterations, linear_solver)
    return study


def walking_2d_prediction(guess: Trajectory | None = None, model: Model | None = None, *, speed: float = 1.2,
                          effort_weight: float = 10.0, effort_exponent: float = 3,
                          divide_by_displacement: bool = True, time_bounds: tuple = (0.4, 0.6),
                          num_mesh_intervals: int = 50, tol: float = 1e-4, max_iterations: int = 1000,
                          linear_solver: str = "mumps") -> Study:
    """Moco's 2-D walking prediction (module docstring) as a :class:`~moco_lab.tools.study.Study`.

    Parameters
    ----------
    guess : Trajectory, optional
        The example's guess is the tracking solution (:func:`walking_2d_tracking`); None: the guess from bounds.
    model : Model, optional
        Default :func:`walking_2d_model`.
    speed : float, m/s
        Average speed (goal ``speed``, an endpoint constraint on the centre of mass' displacement).
    effort_weight, effort_exponent : float
        Goal ``effort``: ``effort_weight ∫ Σ |u|^exponent dt`` (the example: 10 and 3).
    divide_by_displacement : bool
        Divide the effort by the centre of mass' displacement (the example: yes; effort per distance).
    time_bounds : (float, float), s
        Bounds of the final time (t0 = 0).
    num_mesh_intervals, tol, max_iterations, linear_solver
        As in :func:`walking_2d_tracking`.

    Returns
    -------
    Study
        Goals ``symmetry``, ``speed`` (constraints) and ``effort``.
    """
    who = "walking_2d_prediction"
    speed = finite_number(speed, f"{who}: speed", 0, False, "a positive number of m/s")
    _check_solver_arguments(who, model, tol, linear_solver)
    finite_number(effort_weight, f"{who}: effort_weight", 0)
    finite_number(effort_exponent, f"{who}: effort_exponent", 2, what="a finite number >= 2 (as in Moco)")
    flag(divide_by_displacement, f"{who}: divide_by_displacement")
    try:
        low, high = (finite_number(v, f"{who}: time_bounds", 0, False) for v in time_bounds)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{who}: time_bounds must be two final times (low, high) in s, 0 < low <= high, got "
                        f"{time_bounds!r}") from None
    if low > high:
        raise ValueError(f"{who}: time_bounds must be (low, high) with low <= high, got {time_bounds!r}")
    if guess is not None and not isinstance(guess, Trajectory):
        raise TypeError(f"walking_2d_prediction: guess must be a Trajectory or Solution (e.g. "
                        f"ml.read_trajectory(path) for a file), got {type(guess).__name__}")
    model = model or walking_2d_model()
    study = Study("walking_2d_prediction")
    problem = study.problem
    problem.set_model(model)
    problem.add_goal(walking_2d_symmetry(model))
    problem.add_goal(AverageSpeedGoal("speed", desired_average_speed=speed))
    problem.add_goal(ControlGoal("effort", effort_weight, exponent=effort_exponent,
                                 divide_by_displacement=divide_by_displacement))
    problem.set_time_bounds(0.0, tuple(time_bounds))
    walking_2d_bounds(study)
    _solver(study, num_mesh_intervals, tol, max_iterations, linear_solver)
    study.solver.guess = guess
    return study


#: Path of the metabolics component :func:`walking_2d_metabolics` adds (the example's ``metabolic_cost``).
WALKING_2D_METABOLICS = "/metabolic_cost"


def walking_2d_add_metabolics(model: Model) -> Model:
    """``model`` with OpenSim's ``Bhargava2004SmoothedMuscleMetabolics`` at :data:`WALKING_2D_METABOLICS` (smoothed,
    every muscle, default parameters: the example's component), added unless it is there; returns the model."""
    require_model(model, "walking_2d_add_metabolics")
    if WALKING_2D_METABOLICS not in {e.path for e in model.force_elements}:
        metabolics = Bhargava2004SmoothedMuscleMetabolics(WALKING_2D_METABOLICS, use_smoothing=True)
        for muscle in model.muscles:
            metabolics.add_muscle(muscle.path)
        model.add_force_element(metabolics)
    return model


def walking_2d_metabolics(model: Model | None = None, *, metabolics_weight: float = 0.1,
                          tracking_weight: float = 30.0, effort_weight: float = 0.1, num_mesh_intervals: int = 50,
                          tol: float = 1e-4, max_iterations: int = 10000, linear_solver: str = "mumps") -> Study:
    """Moco's ``example2DWalkingMetabolics`` (Falisse et al. 2019): track half a gait cycle while minimizing the
    metabolic cost of transport.

    The model gets OpenSim's ``Bhargava2004SmoothedMuscleMetabolics`` as :data:`WALKING_2D_METABOLICS` (smoothed,
    the 18 muscles, default parameters; added unless the model has it). The problem is the example's: ``MocoTrack``
    of the filtered reference with states tracking weight 30 (the speeds against the positions' slopes, the
    tracked states as the guess, t in [0, :data:`WALKING_2D_FINAL_TIME`]), the symmetry goal, control effort weight
    0.1, and goal ``met``: ``0.1 ∫ Ė dt`` divided by the centre of mass' displacement and by the model's mass —
    0.1 times the cost of transport in J/(kg·m); no contact tracking; the example's bounds; 50 Hermite–Simpson
    intervals, tolerances 1e-4, at most 10000 iterations.

    Parameters
    ----------
    model : Model, optional
        Default :func:`walking_2d_model`; the component is added to the model given.
    metabolics_weight : float
        Weight of ``met`` (the example: 0.1). 0 leaves the goal out: the same tracking problem with effort alone,
        whose metabolic rate can still be read from the component's outputs — the side-by-side of lesson 11.
    tracking_weight, effort_weight : float
        Weights of ``state_tracking`` and ``control_effort`` (the example: 30 and 0.1).
    num_mesh_intervals, tol, max_iterations, linear_solver
        As in :func:`walking_2d_tracking`.

    Returns
    -------
    Study
        Goals ``state_tracking``, ``control_effort``, ``symmetry`` (constraints) and ``met``.
    """
    if model is not None:
        require_model(model, "walking_2d_metabolics")
    study = _symmetric_tracking("walking_2d_metabolics", walking_2d_add_metabolics(model or walking_2d_model()), tol,
                                linear_solver, {"metabolics_weight": metabolics_weight,
                                                "tracking_weight": tracking_weight, "effort_weight": effort_weight})
    problem = study.problem
    if metabolics_weight != 0:
        problem.add_goal(OutputGoal("met", metabolics_weight,
                                    output_path=f"{WALKING_2D_METABOLICS}/total_metabolic_rate",
                                    divide_by_displacement=True, divide_by_mass=True))
    walking_2d_bounds(study)
    _solver(study, num_mesh_intervals, tol, max_iterations, linear_solver)
    return study


def walking_2d_study(kind: str = "tracking", **options: Any) -> Study:
    """Moco's 2-D walking: ``kind="tracking"`` (:func:`walking_2d_tracking`), ``"prediction"``
    (:func:`walking_2d_prediction`) or ``"metabolics"`` (:func:`walking_2d_metabolics`); ``options`` go to that
    function."""
    makers = {"tracking": walking_2d_tracking, "prediction": walking_2d_prediction,
              "metabolics": walking_2d_metabolics}
    if kind not in makers:
        raise ValueError(f"walking_2d_study: kind must be 'tracking', 'prediction' or 'metabolics', got {kind!r}")
    return makers[kind](**options)
