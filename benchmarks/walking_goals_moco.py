"""OpenSim Moco 4.6's ``MocoContactImpulseTrackingGoal``, ``MocoStepLengthAsymmetryGoal``,
``MocoStepTimeAsymmetryGoal`` and ``MocoContactTrackingGoal`` with ``normalize_tracking_error`` on Moco's 2-D walking
tracking problem, evaluated and solved, as the reference ``tests/test_walking_goals_moco.py`` compares with (the
stored-reference pattern).

Moco's example2DWalking tracking problem (:func:`benchmarks.walking_2d_moco.track`) with more goals: two contact
impulse goals (:data:`IMPULSE`: the vertical impulse of the right foot against ``referenceGRF.xml``'s ``Right_GRF``
and the horizontal one of the left foot against ``Left_GRF``, each ``(∫ (F_model − F_ref) dt)² / (m g)``), step-length
and step-time asymmetry goals (:data:`STEP_LENGTH`, :data:`STEP_TIME`) and a normalized contact tracking goal
(:data:`NORMALIZED`).

* Evaluated (default): Moco is started at its stored tracking solution (``reference/walking_2d_moco_tracking.sto``)
  with no iteration allowed, so its console breakdown holds each goal's value at that trajectory (Moco's quadrature,
  on its own grid). Writes ``benchmarks/reference/walking_goals_moco.json``: Moco's goal values and objective, the
  settings, the environment.
* Solved (``--solve [tol]``): Moco solves the tracking problem with :data:`IMPULSE`'s goals and :data:`SOLVED`'s
  (one asymmetry goal of each kind) from that solution, at IPOPT tolerance 1e-4 (default) or ``tol``; adds the
  ``"solve"`` (``"solve_<tol>"``) entry to the same file and writes the solution next to it.

Usage::

    .venv/bin/python -m benchmarks.walking_goals_moco             # about a minute
    .venv/bin/python -m benchmarks.walking_goals_moco --solve     # about 3 minutes
    .venv/bin/python -m benchmarks.walking_goals_moco --solve 1e-6
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.compare_moco import environment, stored_reference
from benchmarks.walking_2d_moco import track

REFERENCE = Path(__file__).resolve().parent / "reference"
RIGHT, LEFT = ["contactHeel_r", "contactFront_r"], ["contactHeel_l", "contactFront_l"]
#: The goals added: name -> weight, impulse axis, groups (contact elements, ExternalForce of referenceGRF.xml).
#: (Moco 4.6 accepts one group per goal: with two it throws "Expected size of scale factors to be 1".)
IMPULSE = {"impulse_vertical_r": {"weight": 0.5, "impulse_axis": 1, "groups": [[RIGHT, "Right_GRF"]]},
           "impulse_fore_aft_l": {"weight": 2.0, "impulse_axis": 0, "groups": [[LEFT, "Left_GRF"]]}}


#: Step-length asymmetry goals: name -> properties (the feet's calcanei; strides chosen so that the feet's lead
#: over each other crosses the thresholds during the motion: each value is not 0).
STEP_LENGTH = {"step_length_symmetric": {"weight": 0.01, "left_foot_frame": "/bodyset/calcn_l",
                                         "right_foot_frame": "/bodyset/calcn_r", "walking_direction": "positive-x",
                                         "asymmetry_smoothing": 5.0, "target_asymmetry": 0.0, "stride_length": 0.5},
               "step_length_target": {"weight": 0.02, "left_foot_frame": "/bodyset/calcn_l",
                                      "right_foot_frame": "/bodyset/calcn_r", "walking_direction": "positive-x",
                                      "asymmetry_smoothing": 0.2, "target_asymmetry": 0.3, "stride_length": 0.6}}


#: Step-time asymmetry goals: name -> properties (each foot's two contact spheres, its heel giving its position).
STEP_TIME = {"step_time_default": {"weight": 0.1, "left_contact_group": [LEFT, "contactHeel_l"],
                                   "right_contact_group": [RIGHT, "contactHeel_r"]},
             "step_time_target": {"weight": 0.3, "left_contact_group": [LEFT, "contactHeel_l"],
                                  "right_contact_group": [RIGHT, "contactHeel_r"], "target_asymmetry": -0.2,
                                  "contact_force_threshold": 50.0, "contact_detection_smoothing": 0.05,
                                  "asymmetry_smoothing": 3.0}}


#: Contact tracking with ``normalize_tracking_error``: name -> weight, groups (as the example's ``contact`` goal, with
#: each direction's error divided by its reference column's peak), projection onto the x-y plane. Both tools refuse
#: to normalize by a column that is zero, and the example's data have no lateral force: the goal tracks
#: :func:`lateral_grf_files`' copy of them, whose z columns are 5 % of the vertical force (projected out of the error).
NORMALIZED = {"contact_normalized": {"weight": 0.7, "groups": [[RIGHT, "Right_GRF"], [LEFT, "Left_GRF"]],
                                     "projection": "plane", "projection_vector": [0.0, 0.0, 1.0],
                                     "external_loads": "referenceGRF_lateral.xml"}}


#: The goals of the solved problem (:func:`solve`): :data:`IMPULSE`'s and one goal of each asymmetry kind, gentle
#: enough that the tracking solution's basin holds the optimum. (With :data:`STEP_TIME`'s weights the step-time
#: terms dominate the objective and both tools leave that basin for a gait that tracks the data three times worse,
#: where both stop with ``Error_In_Step_Computation``: tried 2026-11-29.)
SOLVED = {"step_length": {"step_length": {"weight": 0.02, "left_foot_frame": "/bodyset/calcn_l",
                                          "right_foot_frame": "/bodyset/calcn_r", "walking_direction": "positive-x",
                                          "asymmetry_smoothing": 0.2, "target_asymmetry": 0.3, "stride_length": 0.6}},
          "step_time": {"step_time": {"weight": 0.01, "left_contact_group": [LEFT, "contactHeel_l"],
                                      "right_contact_group": [RIGHT, "contactHeel_r"], "target_asymmetry": 0.5,
                                      "contact_force_threshold": 50.0, "contact_detection_smoothing": 0.05,
                                      "asymmetry_smoothing": 1.0}}}


def lateral_grf_files(folder: Path) -> Path:
    """``referenceGRF.xml`` and its data copied into ``folder`` with a lateral force, z = 5 % of y, on each foot
    (``referenceGRF_lateral.xml`` / ``.sto``); returns the ``.xml``'s path."""
    from moco_lab.util.data import opensim_file

    lines = opensim_file("referenceGRF.sto").read_text().splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip() == "endheader")
    header = lines[end + 1].split("\t")
    out = lines[:end + 2]
    for line in lines[end + 2:]:
        values = line.split("\t")
        for side in "rl":
            y, z = header.index(f"ground_force_{side}_vy"), header.index(f"ground_force_{side}_vz")
            values[z] = repr(0.05 * float(values[y]))
        out.append("\t".join(values))
    folder = Path(folder)
    (folder / "referenceGRF_lateral.sto").write_text("\n".join(out) + "\n")
    xml = opensim_file("referenceGRF.xml").read_text().replace("<datafile>referenceGRF.sto</datafile>",
                                                                "<datafile>referenceGRF_lateral.sto</datafile>")
    (folder / "referenceGRF_lateral.xml").write_text(xml)
    return folder / "referenceGRF_lateral.xml"


def add_goals(osim, problem) -> None:
    """:data:`IMPULSE`'s, :data:`STEP_LENGTH`'s, :data:`STEP_TIME`'s and :data:`NORMALIZED`'s goals, as Moco's
    classes."""
    add_impulse_goals(osim, problem)
    lateral_grf_files(Path.cwd())   # the data folder
    add_asymmetry_goals(osim, problem, STEP_TIME, STEP_LENGTH)
    for name, spec in NORMALIZED.items():
        goal = _with_groups(osim, osim.MocoContactTrackingGoal(name, spec["weight"]), spec["external_loads"],
                            spec["groups"])
        goal.setProjection(spec["projection"])
        goal.setProjectionVector(osim.Vec3(*spec["projection_vector"]))
        goal.setNormalizeTrackingError(True)
        problem.addGoal(goal)


def add_solved_goals(osim, problem) -> None:
    """:data:`IMPULSE`'s and :data:`SOLVED`'s goals, as Moco's classes."""
    add_impulse_goals(osim, problem)
    add_asymmetry_goals(osim, problem, SOLVED["step_time"], SOLVED["step_length"])


def add_asymmetry_goals(osim, problem, step_time: dict, step_length: dict) -> None:
    """Moco's step-time and step-length asymmetry goals with the properties in ``step_time`` and ``step_length``
    (name -> properties)."""
    for name, spec in step_time.items():
        goal = osim.MocoStepTimeAsymmetryGoal(name, spec["weight"])
        for side, setter in (("left_contact_group", goal.setLeftContactGroup),
                             ("right_contact_group", goal.setRightContactGroup)):
            paths = osim.StdVectorString()
            for e in spec[side][0]:
                paths.append(e)
            setter(paths, spec[side][1])
        if "target_asymmetry" in spec:
            goal.setTargetAsymmetry(spec["target_asymmetry"])
            goal.setContactForceThreshold(spec["contact_force_threshold"])
            goal.setContactDetectionSmoothing(spec["contact_detection_smoothing"])
            goal.setAsymmetrySmoothing(spec["asymmetry_smoothing"])
        problem.addGoal(goal)
    for name, spec in step_length.items():
        goal = osim.MocoStepLengthAsymmetryGoal(name, spec["weight"])
        goal.setLeftFootFrame(spec["left_foot_frame"])
        goal.setRightFootFrame(spec["right_foot_frame"])
        goal.setWalkingDirection(spec["walking_direction"])
        goal.setAsymmetrySmoothing(spec["asymmetry_smoothing"])
        goal.setTargetAsymmetry(spec["target_asymmetry"])
        goal.setStrideLength(spec["stride_length"])
        problem.addGoal(goal)


def _with_groups(osim, goal, external_loads: str, groups):
    """``goal`` (a Moco contact goal) reading ``external_loads`` with its contact ``groups`` ((elements, force))."""
    goal.setExternalLoadsFile(external_loads)
    for elements, force in groups:
        paths = osim.StdVectorString()
        for e in elements:
            paths.append(e)
        goal.addContactGroup(paths, force)
    return goal


def add_impulse_goals(osim, problem) -> None:
    """:data:`IMPULSE`'s goals, as Moco's ``MocoContactImpulseTrackingGoal``."""
    for name, spec in IMPULSE.items():
        goal = _with_groups(osim, osim.MocoContactImpulseTrackingGoal(name, spec["weight"]), "referenceGRF.xml",
                            spec["groups"])
        goal.setImpulseAxis(spec["impulse_axis"])
        problem.addGoal(goal)


def solve(tol: float = 1e-4) -> None:
    """Moco solves the tracking problem with :data:`IMPULSE`'s and :data:`SOLVED`'s goals added, from its own
    tracking solution, to IPOPT tolerance ``tol``; writes
    ``reference/walking_goals_moco_solve.sto`` and the reference file's ``"solve"`` entry (``_solve_1e-06`` and
    ``"solve_1e-06"`` at another tolerance)."""
    path, _ = stored_reference("walking_goals_moco")
    stored = json.loads(path.read_text())
    key = "solve" if tol == 1e-4 else f"solve_{tol:g}"
    sto = REFERENCE / f"walking_goals_moco_{key}.sto"
    result = track(sto, tol=tol, guess=REFERENCE / "walking_2d_moco_tracking.sto", extra_goals=add_solved_goals)
    print(f"{result['status']}: objective {result['objective']:.10g} in {result['iterations']} iterations, "
          f"{result['wall']:.0f} s, goals {result['goals']}")
    stored[key] = {"environment": environment(), "settings": {
        "problem": "example2DWalking's tracking with the goals added", "goals": IMPULSE,
        **SOLVED, "guess": "reference/walking_2d_moco_tracking.sto",
        "optim_convergence_tolerance": tol, "optim_constraint_tolerance": tol, "optim_max_iterations": 1000,
        "solution": f"reference/{sto.name}"}, **result}
    path.write_text(json.dumps(stored, indent=1) + "\n")
    print(f"wrote {path} and {sto}")


def main() -> None:
    path, stored = stored_reference("walking_goals_moco")
    with tempfile.TemporaryDirectory() as tmp:
        result = track(Path(tmp) / "evaluated.sto", guess=REFERENCE / "walking_2d_moco_tracking.sto",
                       max_iterations=0, extra_goals=add_goals)
    print(f"{result['status']}: objective {result['objective']:.10g}, goals {result['goals']}")
    path.write_text(json.dumps({"environment": environment(), "settings": {
        "problem": "benchmarks.walking_2d_moco.track (example2DWalking's tracking), 50 mesh intervals",
        "trajectory": "reference/walking_2d_moco_tracking.sto", "max_iterations": 0, "goals": IMPULSE,
        "step_length": STEP_LENGTH, "step_time": STEP_TIME, "normalized": NORMALIZED},
        "status": result["status"], "objective": result["objective"], "goals": result["goals"],
        **{key: value for key, value in stored.items() if key.startswith("solve")}}, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--solve"]:
        solve(*map(float, sys.argv[2:]))
    else:
        main()
