"""OpenSim Moco 4.6's ``example2DWalking`` (the C++ example's settings), as the reference of issue 17.

Line for line the problems of ``OpenSim/Examples/Moco/example2DWalking/example2DWalking.cpp`` (opensim-core 4.6):

* ``track(...)``: MocoTrack on ``2D_gait.osim`` with ``referenceCoordinates.sto`` through ``TabOpLowPassFilter(6)``,
  states tracking weight 1, unused references allowed, speeds tracked against the positions' derivatives, the
  tracked states applied to the guess, t in [0, 0.470089]; the symmetry goal (endpoint constraints), control effort
  weight 10, contact tracking of ``referenceGRF.xml`` (weight 1, projected on the x-y plane); the example's bounds;
  50 mesh intervals, tolerances 1e-4, at most 1000 iterations.
* ``predict(guess)``: a MocoStudy on the same model with the same symmetry goal, average speed 1.2 m/s
  (endpoint constraint), effort weight 10 with exponent 3 divided by displacement, tf in [0.4, 0.6], the same
  bounds and solver settings, the tracking solution as the guess.

Each function runs in a temporary folder (MocoTrack writes files to the working folder) and returns a plain dict;
the solution is written to the ``.sto`` path given. Used by :mod:`benchmarks.walking_2d`; run as a module it remakes
the stored reference on its own.
"""
from __future__ import annotations

import math
import os
import re
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from moco_lab.util.data import opensim_file

FINAL_TIME = 0.470089  # the example's set_final_time


def _bounds(problem) -> None:
    """The example's state bounds."""
    pi = math.pi
    for path, lo, hi in (("/jointset/groundPelvis/pelvis_tilt/value", -20 * pi / 180, -10 * pi / 180),
                         ("/jointset/groundPelvis/pelvis_tx/value", 0, 1),
                         ("/jointset/groundPelvis/pelvis_ty/value", 0.75, 1.25),
                         ("/jointset/hip_l/hip_flexion_l/value", -10 * pi / 180, 60 * pi / 180),
                         ("/jointset/hip_r/hip_flexion_r/value", -10 * pi / 180, 60 * pi / 180),
                         ("/jointset/knee_l/knee_angle_l/value", -50 * pi / 180, 0),
                         ("/jointset/knee_r/knee_angle_r/value", -50 * pi / 180, 0),
                         ("/jointset/ankle_l/ankle_angle_l/value", -15 * pi / 180, 25 * pi / 180),
                         ("/jointset/ankle_r/ankle_angle_r/value", -15 * pi / 180, 25 * pi / 180),
                         ("/jointset/lumbar/lumbar/value", 0, 20 * pi / 180)):
        problem.setStateInfo(path, [lo, hi])


def add_symmetry_goal(osim, problem, model) -> None:
    """The C++ example's symmetry goal (coordinates by their state names, then muscle activations)."""
    goal = osim.MocoPeriodicityGoal("symmetryGoal")
    problem.addGoal(goal)
    for coord in model.getComponentsList():
        c = osim.Coordinate.safeDownCast(coord)
        if c is None:
            continue
        names = [c.getStateVariableNames().get(0), c.getStateVariableNames().get(1)]
        name = c.getName()
        for n in names:
            if name.endswith("_r"):
                goal.addStatePair(osim.MocoPeriodicityGoalPair(n, re.sub("_r", "_l", n)))
            elif name.endswith("_l"):
                goal.addStatePair(osim.MocoPeriodicityGoalPair(n, re.sub("_l", "_r", n)))
            elif not name.endswith("_tx"):
                goal.addStatePair(osim.MocoPeriodicityGoalPair(n, n))
    goal.addStatePair(osim.MocoPeriodicityGoalPair("/jointset/groundPelvis/pelvis_tx/speed"))
    goal.addControlPair(osim.MocoPeriodicityGoalPair("/lumbarAct"))
    # every Muscle component, as getComponentList<Muscle>() (the model's muscles are in <components>, so
    # model.getMuscles(), which lists the ForceSet's, has none)
    for component in model.getComponentsList():
        m = osim.Muscle.safeDownCast(component)
        if m is None:
            continue
        a = m.getStateVariableNames().get(0)
        if m.getName().endswith("_r"):
            goal.addStatePair(osim.MocoPeriodicityGoalPair(a, re.sub("_r", "_l", a)))
        elif m.getName().endswith("_l"):
            goal.addStatePair(osim.MocoPeriodicityGoalPair(a, re.sub("_l", "_r", a)))


def symmetric_track(osim, name: str, processor, tracking_weight: float, effort_weight: float):
    """The examples' MocoTrack (in the data folder): ``referenceCoordinates.sto`` through ``TabOpLowPassFilter(6)``,
    states weight ``tracking_weight``, unused references allowed, speeds tracked against the positions' derivatives,
    the tracked states as the guess, t in [0, FINAL_TIME]; initialized, with the symmetry goal and the control effort
    weight ``effort_weight``. Returns ``(study, problem)``."""
    tracker = osim.MocoTrack()
    tracker.setName(name)
    tracker.setModel(processor)
    table = osim.TableProcessor("referenceCoordinates.sto")
    table.append(osim.TabOpLowPassFilter(6))
    tracker.setStatesReference(table)
    tracker.set_states_global_tracking_weight(tracking_weight)
    tracker.set_allow_unused_references(True)
    tracker.set_track_reference_position_derivatives(True)
    tracker.set_apply_tracked_states_to_guess(True)
    tracker.set_initial_time(0.0)
    tracker.set_final_time(FINAL_TIME)
    study = tracker.initialize()
    problem = study.updProblem()
    model = processor.process()
    model.initSystem()
    add_symmetry_goal(osim, problem, model)
    effort = osim.MocoControlGoal.safeDownCast(problem.updGoal("control_effort"))
    effort.setWeight(effort_weight)
    return study, problem


def _solver(study, tol: float, num_mesh_intervals: int, max_iterations: int = 1000):
    import opensim as osim

    solver = osim.MocoCasADiSolver.safeDownCast(study.updSolver())
    solver.set_num_mesh_intervals(num_mesh_intervals)
    solver.set_verbosity(0)
    solver.set_optim_solver("ipopt")
    solver.set_optim_convergence_tolerance(tol)
    solver.set_optim_constraint_tolerance(tol)
    solver.set_optim_max_iterations(max_iterations)
    return solver


def _result(solution, wall: float, sto: Path) -> dict:
    solution.unseal()
    solution.write(str(sto))
    return {"success": bool(solution.success()), "status": solution.getStatus(), "objective": solution.getObjective(),
            "iterations": solution.getNumIterations(), "solver_duration": solution.getSolverDuration(), "wall": wall,
            "final_time": solution.getFinalTime(),
            "goals": {name: solution.getObjectiveTerm(name) for name in solution.getObjectiveTermNames()}}


def _guess(solver, path: Path):
    """The trajectory in ``path`` as a guess in the problem's own variable order.

    Moco's CasADi solver copies a guess's state and control matrices into its iterate column by column
    (``convertToCasOCIterate``), without matching names; a file whose columns are in another order (moco_lab
    writes the model's coordinates in its own order: pelvis_tx before pelvis_tilt) would start Moco from a
    scrambled point. So the values are copied by name into ``solver.createGuess()``."""
    import opensim as osim

    theirs = osim.MocoTrajectory(str(path))
    guess = solver.createGuess()
    names = {"states": (guess.getStateNames(), theirs.getStateNames()),
             "controls": (guess.getControlNames(), theirs.getControlNames())}
    for kind, (wanted, given) in names.items():
        missing = set(wanted) - set(given)
        if missing:
            raise ValueError(f"{path}: the guess lacks the {kind} {sorted(missing)}")
    guess.setNumTimes(theirs.getNumTimes())
    guess.setTime(osim.Vector([float(t) for t in theirs.getTimeMat().ravel()]))
    for name in guess.getStateNames():
        guess.setState(name, [float(v) for v in theirs.getStateMat(name).ravel()])
    for name in guess.getControlNames():
        guess.setControl(name, [float(v) for v in theirs.getControlMat(name).ravel()])
    return guess


@contextmanager
def _data_folder():
    """A temporary working folder holding the example's files (MocoTrack writes to the working folder; the contact
    tracking goal reads ``referenceGRF.xml``, and the ``.xml`` its data file, relative to it when the solve starts)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("2D_gait.osim", "referenceCoordinates.sto", "referenceGRF.xml", "referenceGRF.sto"):
            (Path(tmp) / name).write_bytes(opensim_file(name).read_bytes())
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(cwd)


def track(sto: Path, tol: float = 1e-4, num_mesh_intervals: int = 50, guess: Path | None = None,
          max_iterations: int = 1000, extra_goals=None) -> dict:
    """Moco's 2-D walking tracking problem (see the module docstring); writes the solution to ``sto``.

    ``guess`` replaces the example's guess; with ``max_iterations=0``: Moco's problem at the guess, moved inside the
    bounds by IPOPT's initialization. ``extra_goals(osim, problem)`` adds goals after the example's (in the data
    folder: files such as ``referenceGRF.xml`` are at hand).
    """
    import opensim as osim

    osim.Logger.setLevelString("error")
    with _data_folder():
        t = time.perf_counter()
        study, problem = symmetric_track(osim, "gaitTracking", osim.ModelProcessor("2D_gait.osim"), 1, 10)
        contact = osim.MocoContactTrackingGoal("contact", 1)
        contact.setExternalLoadsFile("referenceGRF.xml")
        right, left = osim.StdVectorString(), osim.StdVectorString()
        for n in ("contactHeel_r", "contactFront_r"):
            right.append(n)
        for n in ("contactHeel_l", "contactFront_l"):
            left.append(n)
        contact.addContactGroup(right, "Right_GRF")
        contact.addContactGroup(left, "Left_GRF")
        contact.setProjection("plane")
        contact.setProjectionVector(osim.Vec3(0, 0, 1))
        problem.addGoal(contact)
        if extra_goals is not None:
            extra_goals(osim, problem)
        _bounds(problem)
        solver = _solver(study, tol, num_mesh_intervals, max_iterations)
        if guess is not None:
            solver.resetProblem(problem)  # the goals added above, before the guess is checked against the problem
            solver.setGuess(_guess(solver, guess))
        solution = study.solve()
        wall = time.perf_counter() - t
    return _result(solution, wall, sto)


def prediction_study(tol: float = 1e-4, num_mesh_intervals: int = 50, speed: float = 1.2, exponent: int = 3,
                     max_iterations: int = 1000):
    """Moco's 2-D walking prediction problem (the module docstring): ``(study, solver)``; call inside
    :func:`_data_folder` (the model file is read from the working folder)."""
    import opensim as osim

    study = osim.MocoStudy()
    study.setName("gaitPrediction")
    problem = study.updProblem()
    processor = osim.ModelProcessor("2D_gait.osim")
    problem.setModelProcessor(processor)
    model = processor.process()
    model.initSystem()
    add_symmetry_goal(osim, problem, model)
    speed_goal = osim.MocoAverageSpeedGoal("speed")
    problem.addGoal(speed_goal)
    speed_goal.set_desired_average_speed(speed)
    effort = osim.MocoControlGoal("effort", 10)
    problem.addGoal(effort)
    effort.setExponent(exponent)
    effort.setDivideByDisplacement(True)
    problem.setTimeBounds(0, [0.4, 0.6])
    _bounds(problem)
    study.initCasADiSolver()
    solver = _solver(study, tol, num_mesh_intervals, max_iterations)
    solver.resetProblem(problem)  # the goals added above, before a guess is built from the problem
    return study, solver


def predict(guess_sto: Path, sto: Path, tol: float = 1e-4, num_mesh_intervals: int = 50, speed: float = 1.2,
            exponent: int = 3, max_iterations: int = 1000) -> dict:
    """Moco's 2-D walking prediction from the guess in ``guess_sto``; writes the solution to ``sto``
    (``max_iterations=0``: Moco's problem at the guess, moved inside the bounds by IPOPT's initialization)."""
    import opensim as osim

    osim.Logger.setLevelString("error")
    with _data_folder():
        t = time.perf_counter()
        study, solver = prediction_study(tol, num_mesh_intervals, speed, exponent, max_iterations)
        solver.setGuess(_guess(solver, guess_sto))
        solution = study.solve()
        wall = time.perf_counter() - t
    return _result(solution, wall, sto)


if __name__ == "__main__":  # python -m benchmarks.walking_2d_moco: (re)make the stored reference (1.5 h here)
    import json

    from benchmarks.walking_2d import REFERENCE_STO, store_reference

    results = {"tracking": track(REFERENCE_STO["tracking"])}
    print(json.dumps(results["tracking"], indent=1), flush=True)
    results["prediction"] = predict(REFERENCE_STO["tracking"], REFERENCE_STO["prediction"])
    print(json.dumps(results["prediction"], indent=1), flush=True)
    store_reference(results, "measured by python -m benchmarks.walking_2d_moco")
