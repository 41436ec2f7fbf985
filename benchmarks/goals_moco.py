"""OpenSim Moco 4.6's solutions of small problems with goals and path constraints moco_lab added — Moco's
``MocoJointReactionGoal``, ``MocoControlTrackingGoal``, ``MocoControlBoundConstraint``,
``MocoStateBoundConstraint`` and the output goals — stored as the reference ``tests/test_goals_moco.py``
compares with (the stored-reference pattern).

Both on OpenSim's double pendulum (``ModelFactory.createDoublePendulum()``; the swing-up of
:func:`benchmarks.moco_reference.solve_double_pendulum`: from horizontal to upright in 1 s, torques ``/tau0``,
``/tau1``), Hermite–Simpson, 30 mesh intervals, IPOPT tolerances 1e-8:

* ``joint_reaction`` (implicit multibody dynamics): effort (weight 1) plus ``MocoJointReactionGoal`` on the elbow
  ``/jointset/j1``, loads on the parent, expressed in the joint frame, its force-x and force-y (weight 0.1);
* ``control_tracking`` (explicit): effort (weight 0.01) plus ``MocoControlTrackingGoal`` (weight 1) of a reference
  table (:data:`REFERENCE`: ``/tau0`` = 10 sin 2πt + 8, ``/tau1`` = −6 cos πt, 26 rows; Moco splines it);
* ``control_bound``, ``state_bound``, ``control_equality`` (explicit, effort weight 1): Moco's
  ``MocoControlBoundConstraint`` and ``MocoStateBoundConstraint`` with bounds that are functions of time
  (:data:`BOUNDS`);
* ``output_*`` (explicit): Moco's ``MocoOutputGoal`` (a component, a vector's norm squared, two outputs combined),
  ``MocoOutputTrackingGoal`` and ``MocoOutputExtremumGoal`` next to effort (:data:`OUTPUTS`); Moco's
  ``MocoInitialOutputGoal``, ``MocoFinalOutputGoal`` and ``MocoOutputPeriodicityGoal`` (a cost and an endpoint
  constraint) with the speeds free at the ends they read (:data:`ENDPOINT_OUTPUTS`);
* ``translation_tracking`` (explicit): Moco's ``MocoTranslationTrackingGoal`` with a states reference
  (:data:`TRANSLATION`);
* ``angular_velocity_tracking``, ``orientation_tracking`` (explicit): Moco's ``MocoAngularVelocityTrackingGoal``
  and ``MocoOrientationTrackingGoal`` with the same states reference (:data:`ANGULAR_VELOCITY`, :data:`ORIENTATION`);
* ``acceleration_tracking``, ``acceleration_tracking_imu`` (implicit): Moco's ``MocoAccelerationTrackingGoal`` in
  ground, and with gravity subtracted in the bodies' axes (:data:`ACCELERATION`);
* ``generalized_force_tracking`` (implicit): Moco's ``MocoGeneralizedForceTrackingGoal`` (:data:`GENERALIZED_FORCE`);
* ``marker_final`` (explicit): Moco's ``MocoMarkerFinalGoal`` with the elbow's final angle free
  (:data:`MARKER_FINAL`);
* ``parameter_expression`` (explicit): Moco's ``MocoExpressionBasedParameterGoal`` on two optimized parameters
  (:data:`PARAMETER_EXPRESSION`); ``body_mass``: the same goal on both bodies' masses (:data:`BODY_MASS`);
* ``output_constraint``, ``output_bound_constraint``, ``frame_distance*`` (explicit, effort weight 1): Moco's
  ``MocoOutputConstraint``, ``MocoOutputBoundConstraint`` and ``MocoFrameDistanceConstraint`` (:data:`PATH_CONSTRAINTS`).

Writes ``benchmarks/reference/goals_moco.json``: per problem Moco's status, objective, goal values, iterations, time,
states and controls, with the environment (versions, machine, date) and the settings.

Usage::

    .venv/bin/python -m benchmarks.goals_moco     # a few minutes
"""
from __future__ import annotations

import json
import math

import numpy as np

from benchmarks import moco_reference as mr
from benchmarks.compare_moco import environment, stored_reference

N, TOL, SCHEME = 30, 1e-8, "hermite-simpson"
REACTION = {"joint_path": "/jointset/j1", "loads_frame": "parent", "reaction_measures": ["force-x", "force-y"],
            "weight": 0.1}
TRACKING_WEIGHT, EFFORT_WEIGHT_TRACKING = 1.0, 0.01


def reference_table() -> tuple[np.ndarray, dict]:
    """The control reference: 26 rows over [0, 1] s."""
    t = np.linspace(0.0, 1.0, 26)
    return t, {"/tau0": 10 * np.sin(2 * math.pi * t) + 8, "/tau1": -6 * np.cos(math.pi * t)}


def _study(mode: str, effort_weight: float):
    osim = mr.osim
    study = osim.MocoStudy()
    problem = mr.double_pendulum_problem(study)
    problem.addGoal(osim.MocoControlGoal("effort", effort_weight))
    mr._configure_solver(study, SCHEME, mode, N, TOL)
    return study, problem


def solve_joint_reaction() -> dict:
    osim = mr.osim
    study, problem = _study("implicit", 1.0)
    goal = osim.MocoJointReactionGoal("reaction", REACTION["weight"])
    goal.setJointPath(REACTION["joint_path"])
    goal.setLoadsFrame(REACTION["loads_frame"])
    measures = osim.StdVectorString()
    for m in REACTION["reaction_measures"]:
        measures.append(m)
    goal.setReactionMeasures(measures)
    problem.addGoal(goal)
    return mr._solve_study(study)


def _time_series_table(t: np.ndarray, columns: dict, vec3: bool = False):
    """``opensim.TimeSeriesTable`` of ``columns`` (name -> values) at times ``t``; with ``vec3``, a
    ``TimeSeriesTableVec3`` of (n, 3) columns."""
    osim = mr.osim
    table = osim.TimeSeriesTableVec3() if vec3 else osim.TimeSeriesTable()
    labels = osim.StdVectorString()
    for name in columns:
        labels.append(name)
    table.setColumnLabels(labels)
    for k, time in enumerate(t):
        row = osim.RowVectorVec3(len(columns), osim.Vec3(0)) if vec3 else osim.RowVector(len(columns), 0.0)
        for j, name in enumerate(columns):
            row[j] = osim.Vec3(*map(float, columns[name][k])) if vec3 else float(columns[name][k])
        table.appendRow(float(time), row)
    return table


def solve_control_tracking() -> dict:
    osim = mr.osim
    study, problem = _study("explicit", EFFORT_WEIGHT_TRACKING)
    t, columns = reference_table()
    table = _time_series_table(t, columns)
    goal = osim.MocoControlTrackingGoal("tracking", TRACKING_WEIGHT)
    goal.setReference(osim.TableProcessor(table))
    problem.addGoal(goal)
    return mr._solve_study(study)


#: Moco's bound constraints on the swing-up (explicit dynamics, effort weight 1): a time-varying upper and a constant
#: lower bound on both torques (active: /tau0 above 80 - 60 t early, /tau1 below -40 at the end); a lower bound on the
#: elbow's speed that rises with time (active near t = 0.2 s); /tau1 held equal to a cubic of time (close to the
#: unconstrained optimum's elbow torque, within 2 N·m: pinned far from it, the swing-up has no solution).
#: Functions as ``[type, numbers]``: ``["Constant", v]``, ``["LinearFunction", slope, intercept]``,
#: ``["PolynomialFunction", c0, c1, ...]`` (highest power first, as OpenSim).
BOUNDS = {
    "control_bound": {"kind": "control", "paths": ["/tau0", "/tau1"], "lower": ["Constant", -40.0],
                      "upper": ["LinearFunction", -60.0, 80.0], "equality_with_lower": False},
    "state_bound": {"kind": "state", "paths": ["/jointset/j1/q1/speed"], "lower": ["LinearFunction", 4.0, -5.5],
                    "upper": None, "equality_with_lower": False},
    "control_equality": {"kind": "control", "paths": ["/tau1"],
                         "lower": ["PolynomialFunction", 140.0, -510.0, 335.0, -25.0],
                         "upper": None, "equality_with_lower": True},
}


def _opensim_function(spec: list):
    osim = mr.osim
    kind, *numbers = spec
    if kind == "Constant":
        return osim.Constant(numbers[0])
    if kind == "LinearFunction":
        return osim.LinearFunction(numbers[0], numbers[1])
    coefficients = osim.Vector(len(numbers), 0.0)
    for i, c in enumerate(numbers):
        coefficients.set(i, c)
    return osim.PolynomialFunction(coefficients)


def _set_bound_functions(constraint, spec: dict) -> None:
    """A Moco bound constraint's ``lower``/``upper`` functions and ``equality_with_lower`` from ``spec``."""
    if spec["lower"] is not None:
        constraint.setLowerBound(_opensim_function(spec["lower"]))
    if spec["upper"] is not None:
        constraint.setUpperBound(_opensim_function(spec["upper"]))
    constraint.setEqualityWithLower(spec["equality_with_lower"])


def solve_bound(name: str) -> dict:
    """One of :data:`BOUNDS` as Moco's ``MocoControlBoundConstraint`` / ``MocoStateBoundConstraint``."""
    osim = mr.osim
    spec = BOUNDS[name]
    study, problem = _study("explicit", 1.0)
    if spec["kind"] == "control":
        constraint = osim.MocoControlBoundConstraint()
        for path in spec["paths"]:
            constraint.addControlPath(path)
    else:
        constraint = osim.MocoStateBoundConstraint()
        for path in spec["paths"]:
            constraint.addStatePath(path)
    constraint.setName(name)
    _set_bound_functions(constraint, spec)
    problem.addPathConstraint(constraint)
    return mr._solve_study(study)


#: Moco's output goals on the swing-up (explicit dynamics), each added to effort (weight ``effort_weight``), output
#: paths as Moco writes them. ``tracking_function`` as :data:`BOUNDS`' functions.
OUTPUTS = {
    "output_com_height": {"type": "OutputGoal", "weight": 500.0, "effort_weight": 1.0, "output_path": "|com_position",
                          "output_index": 1, "exponent": 1},
    "output_com_speed": {"type": "OutputGoal", "weight": 200.0, "effort_weight": 1.0, "output_path": "|com_velocity",
                         "output_index": -1, "exponent": 2},
    # the horizontal "extrapolated centre of mass" x + v/ω with ω = 1/s: two outputs added, one component
    "output_composite": {"type": "OutputGoal", "weight": 50.0, "effort_weight": 1.0, "output_path": "|com_position",
                         "second_output_path": "|com_velocity", "operation": "addition", "output_index": 0,
                         "exponent": 2},
    # (Moco 4.6 cannot evaluate the actuators' 'actuation' outputs in its goals on this model: stale-cache errors)
    "output_tracking": {"type": "OutputTrackingGoal", "weight": 1000.0, "effort_weight": 1.0,
                        "output_path": "|com_position", "output_index": 1, "exponent": 2,
                        "tracking_function": ["LinearFunction", 1.0, 0.0]},
    "output_extremum": {"type": "OutputExtremumGoal", "weight": 100.0, "effort_weight": 1.0,
                        "output_path": "|com_velocity", "output_index": 0, "exponent": 2,
                        "extremum_type": "maximum", "smoothing_factor": 1.0},
}


#: Moco's endpoint output goals on the swing-up with the speeds free at the end(s) the goal reads (``free``:
#: "initial", "final" or both): the COM's final velocity, its initial vertical velocity, the horizontal COM velocity
#: periodic as an endpoint constraint, and the change of the COM speed (each end's norm) as a cost.
ENDPOINT_OUTPUTS = {
    "output_final": {"type": "FinalOutputGoal", "weight": 10.0, "effort_weight": 1.0, "output_path": "|com_velocity",
                     "output_index": -1, "exponent": 2, "free": ["final"]},
    "output_initial": {"type": "InitialOutputGoal", "weight": 10.0, "effort_weight": 1.0,
                       "output_path": "|com_velocity", "output_index": 1, "exponent": 2, "free": ["initial"]},
    "output_periodic": {"type": "OutputPeriodicityGoal", "weight": 1.0, "effort_weight": 1.0,
                        "output_path": "|com_velocity", "output_index": 0, "exponent": 1,
                        "goal_mode": "endpoint_constraint", "free": ["initial", "final"]},
    "output_periodic_norm": {"type": "OutputPeriodicityGoal", "weight": 5.0, "effort_weight": 1.0,
                             "output_path": "|com_velocity", "output_index": -1, "exponent": 2,
                             "free": ["initial", "final"]},
}
OUTPUTS.update(ENDPOINT_OUTPUTS)


def solve_output(name: str) -> dict:
    """One of :data:`OUTPUTS` as Moco's ``MocoOutputGoal`` / ``MocoOutputTrackingGoal`` / ``MocoOutputExtremumGoal``."""
    osim = mr.osim
    spec = OUTPUTS[name]
    study, problem = _study("explicit", spec["effort_weight"])
    for path in ("/jointset/j0/q0/speed", "/jointset/j1/q1/speed"):
        problem.setStateInfo(path, [-50, 50], [] if "initial" in spec.get("free", ()) else 0,
                             [] if "final" in spec.get("free", ()) else 0)
    goal = getattr(osim, "Moco" + spec["type"])(name, spec["weight"])
    if spec.get("goal_mode") == "endpoint_constraint":
        goal.setMode("endpoint_constraint")
    goal.setOutputPath(spec["output_path"])
    if spec.get("second_output_path"):
        goal.setSecondOutputPath(spec["second_output_path"])
        goal.setOperation(spec["operation"])
    goal.setExponent(spec["exponent"])
    goal.setOutputIndex(spec["output_index"])
    if "tracking_function" in spec:
        goal.setTrackingFunction(_opensim_function(spec["tracking_function"]))
    if "extremum_type" in spec:
        goal.setExtremumType(spec["extremum_type"])
        goal.setSmoothingFactor(spec["smoothing_factor"])
    problem.addGoal(goal)
    return mr._solve_study(study)


#: Moco's output path constraints on the swing-up (explicit dynamics, effort weight 1), each binding: the COM's
#: speed squared below 12 (``MocoOutputConstraint``, bounds by ``MocoConstraintInfo``) and below 16 − 10 t
#: (``MocoOutputBoundConstraint``); the outer mass at least 1.3 m from the pivot, and at least 1.25 m along the
#: diagonal (1, 1, 0) (``MocoFrameDistanceConstraint``; unconstrained: 1.14 m and 1.12 m).
PATH_CONSTRAINTS = {
    "output_constraint": {"type": "OutputConstraint", "output_path": "|com_velocity", "output_index": -1,
                          "exponent": 2, "bounds": [0.0, 12.0]},
    "output_bound_constraint": {"type": "OutputBoundConstraint", "output_path": "|com_velocity", "output_index": -1,
                                "exponent": 2, "lower": None, "upper": ["LinearFunction", -10.0, 16.0],
                                "equality_with_lower": False},
    "frame_distance": {"type": "FrameDistanceConstraint", "pairs": [["/ground", "/bodyset/b1", 1.3, 10.0]],
                       "projection": "none", "projection_vector": None},
    "frame_distance_vector": {"type": "FrameDistanceConstraint", "pairs": [["/ground", "/bodyset/b1", 1.25, 10.0]],
                              "projection": "vector", "projection_vector": [1.0, 1.0, 0.0]},
}


def solve_path_constraint(name: str) -> dict:
    """One of :data:`PATH_CONSTRAINTS` as Moco's ``MocoOutputConstraint`` / ``MocoOutputBoundConstraint`` /
    ``MocoFrameDistanceConstraint``."""
    osim = mr.osim
    spec = PATH_CONSTRAINTS[name]
    study, problem = _study("explicit", 1.0)
    constraint = getattr(osim, "Moco" + spec["type"])()
    constraint.setName(name)
    if spec["type"] == "FrameDistanceConstraint":
        for f1, f2, lo, hi in spec["pairs"]:
            constraint.addFramePair(osim.MocoFrameDistanceConstraintPair(f1, f2, lo, hi))
        constraint.setProjection(spec["projection"])
        if spec["projection_vector"] is not None:
            constraint.setProjectionVector(osim.Vec3(*spec["projection_vector"]))
    else:
        constraint.setOutputPath(spec["output_path"])
        constraint.setExponent(spec["exponent"])
        constraint.setOutputIndex(spec["output_index"])
        if spec["type"] == "OutputConstraint":
            bounds = osim.StdVectorMocoBounds()
            bounds.append(osim.MocoBounds(*spec["bounds"]))
            constraint.updConstraintInfo().setBounds(bounds)
        else:
            _set_bound_functions(constraint, spec)
    problem.addPathConstraint(constraint)
    return mr._solve_study(study)


#: Moco's ``MocoTranslationTrackingGoal`` on the swing-up (explicit, effort weight 0.1): both bodies' origins
#: tracking their positions along a states reference (21 rows over [0, 1] s: the shoulder on a smoothstep from 0 to
#: π/2, the elbow 0.6 sin πt, the swing-up's own end states), the outer body weighted 2.
TRANSLATION = {"weight": 2000.0, "effort_weight": 0.1, "frame_paths": ["/bodyset/b0", "/bodyset/b1"],
               "translation_weights": {"/bodyset/b1": 2.0}}


def translation_states() -> tuple[np.ndarray, dict]:
    """The states reference of :data:`TRANSLATION`: coordinates (and speeds) at 21 rows over [0, 1] s."""
    t = np.linspace(0.0, 1.0, 21)
    q0, u0 = math.pi / 2 * (3 * t ** 2 - 2 * t ** 3), math.pi / 2 * (6 * t - 6 * t ** 2)
    q1, u1 = 0.6 * np.sin(math.pi * t), 0.6 * math.pi * np.cos(math.pi * t)
    return t, {"/jointset/j0/q0/value": q0, "/jointset/j0/q0/speed": u0, "/jointset/j1/q1/value": q1,
               "/jointset/j1/q1/speed": u1}


def _solve_frame_tracking(goal_class: str, name: str, spec: dict, weights_key: str) -> dict:
    """A frame-tracking goal of Moco's (``goal_class``) on the swing-up with :func:`translation_states` as its states
    reference, ``spec``'s weight, frames and per-frame weights (``spec[weights_key]``)."""
    osim = mr.osim
    study, problem = _study("explicit", spec["effort_weight"])
    t, columns = translation_states()
    table = _time_series_table(t, columns)
    table.addTableMetaDataString("inDegrees", "no")
    goal = getattr(osim, goal_class)(name, spec["weight"])
    goal.setStatesReference(osim.TableProcessor(table))
    paths = osim.StdVectorString()
    for path in spec["frame_paths"]:
        paths.append(path)
    goal.setFramePaths(paths)
    for frame, w in spec[weights_key].items():
        goal.setWeightForFrame(frame, w)
    problem.addGoal(goal)
    return mr._solve_study(study)


def solve_translation_tracking() -> dict:
    return _solve_frame_tracking("MocoTranslationTrackingGoal", "translation", TRANSLATION, "translation_weights")


#: Moco's ``MocoAngularVelocityTrackingGoal`` on the swing-up (explicit, effort weight 0.1): both bodies' angular
#: velocities in ground tracking those along the same states reference (Moco computes them from its coordinates and
#: speeds), the inner body weighted 3.
ANGULAR_VELOCITY = {"weight": 20.0, "effort_weight": 0.1, "frame_paths": ["/bodyset/b0", "/bodyset/b1"],
                    "angular_velocity_weights": {"/bodyset/b0": 3.0}}


def solve_angular_velocity_tracking() -> dict:
    return _solve_frame_tracking("MocoAngularVelocityTrackingGoal", "angular_velocity", ANGULAR_VELOCITY,
                                 "angular_velocity_weights")


#: Moco's ``MocoOrientationTrackingGoal`` on the swing-up (explicit, effort weight 0.1): both bodies' orientations
#: tracking those along the same states reference (Moco computes them from its coordinates, turns them into
#: quaternions and splines those), the outer body weighted 2.
ORIENTATION = {"weight": 30.0, "effort_weight": 0.1, "frame_paths": ["/bodyset/b0", "/bodyset/b1"],
               "rotation_weights": {"/bodyset/b1": 2.0}}


def solve_orientation_tracking() -> dict:
    return _solve_frame_tracking("MocoOrientationTrackingGoal", "orientation", ORIENTATION, "rotation_weights")


#: Moco's ``MocoAccelerationTrackingGoal`` on the swing-up (implicit: moco_lab needs the accelerations as
#: variables; effort weight 0.1): both bodies' origins tracking the accelerations of the states reference's motion
#: (:func:`acceleration_table`, exact derivatives of its coordinates), the outer one weighted 0.5; once in ground,
#: once with gravity subtracted and in each body's axes (an accelerometer's reading).
ACCELERATION = {"acceleration_tracking": {"weight": 0.05, "effort_weight": 0.1,
                                          "frame_paths": ["/bodyset/b0", "/bodyset/b1"],
                                          "acceleration_weights": {"/bodyset/b1": 0.5}, "gravity_offset": False,
                                          "express_accelerations_in_tracking_frames": False},
                "acceleration_tracking_imu": {"weight": 0.05, "effort_weight": 0.1,
                                              "frame_paths": ["/bodyset/b0", "/bodyset/b1"],
                                              "acceleration_weights": {"/bodyset/b1": 0.5}, "gravity_offset": True,
                                              "express_accelerations_in_tracking_frames": True}}


def acceleration_table() -> tuple[np.ndarray, dict]:
    """The accelerations (n, 3) of both bodies' origins along :func:`translation_states`' motion, in ground: the
    pendulum's links are 1 m along each body's x axis (b0 at (cos q0, sin q0), b1 one link further at the summed
    angle)."""
    t = np.linspace(0.0, 1.0, 21)
    q0, u0, a0 = math.pi / 2 * (3 * t ** 2 - 2 * t ** 3), math.pi / 2 * (6 * t - 6 * t ** 2), math.pi / 2 * (6 - 12 * t)
    q1, u1, a1 = 0.6 * np.sin(math.pi * t), 0.6 * math.pi * np.cos(math.pi * t), -0.6 * math.pi ** 2 * np.sin(math.pi * t)
    s = q0 + q1
    acc0 = np.column_stack([-np.sin(q0) * a0 - np.cos(q0) * u0 ** 2, np.cos(q0) * a0 - np.sin(q0) * u0 ** 2, 0 * t])
    us, as_ = u0 + u1, a0 + a1
    acc1 = acc0 + np.column_stack([-np.sin(s) * as_ - np.cos(s) * us ** 2, np.cos(s) * as_ - np.sin(s) * us ** 2, 0 * t])
    return t, {"/bodyset/b0": acc0, "/bodyset/b1": acc1}


def solve_acceleration_tracking(name: str) -> dict:
    osim = mr.osim
    spec = ACCELERATION[name]
    study, problem = _study("implicit", spec["effort_weight"])
    t, columns = acceleration_table()
    table = _time_series_table(t, columns, vec3=True)
    goal = osim.MocoAccelerationTrackingGoal(name, spec["weight"])
    goal.setAccelerationReference(table)
    paths = osim.StdVectorString()
    for path in spec["frame_paths"]:  # every column of the table: Moco 4.6 then tracks them all
        paths.append(path)
    goal.setFramePaths(paths)
    for frame, w in spec["acceleration_weights"].items():
        goal.setWeightForFrame(frame, w)
    goal.setGravityOffset(spec["gravity_offset"])
    goal.setExpressAccelerationsInTrackingFrames(spec["express_accelerations_in_tracking_frames"])
    problem.addGoal(goal)
    return mr._solve_study(study)


#: Moco's ``MocoGeneralizedForceTrackingGoal`` on the swing-up (implicit; effort weight 0.1): the generalized forces
#: beyond gravity and the elbow's actuator (``force_paths``: a regular expression) against the control reference's
#: curves relabelled as OpenSim's inverse-dynamics columns, the elbow's weighted 0.5, each error normalized by its
#: reference's peak.
GENERALIZED_FORCE = {"weight": 5.0, "effort_weight": 0.1, "force_paths": [".*tau1"],
                     "generalized_force_weights": {"q1_moment": 0.5}, "normalize_tracking_error": True}


def generalized_force_table() -> tuple[np.ndarray, dict]:
    """The reference of :data:`GENERALIZED_FORCE`: :func:`reference_table`'s curves as ``q0_moment``, ``q1_moment``."""
    t, columns = reference_table()
    return t, {"q0_moment": columns["/tau0"], "q1_moment": columns["/tau1"]}


def solve_generalized_force_tracking() -> dict:
    osim = mr.osim
    spec = GENERALIZED_FORCE
    study, problem = _study("implicit", spec["effort_weight"])
    t, columns = generalized_force_table()
    goal = osim.MocoGeneralizedForceTrackingGoal("generalized_forces", spec["weight"])
    goal.setReference(osim.TableProcessor(_time_series_table(t, columns)))
    paths = osim.StdVectorString()
    for path in spec["force_paths"]:
        paths.append(path)
    goal.setForcePaths(paths)
    for label, w in spec["generalized_force_weights"].items():
        goal.setWeightForGeneralizedForce(label, w)
    goal.setNormalizeTrackingError(spec["normalize_tracking_error"])
    problem.addGoal(goal)
    return mr._solve_study(study)


#: Moco's ``MocoExpressionBasedParameterGoal`` on the swing-up (explicit, effort weight 1): both actuators' optimal
#: forces optimized (``MocoParameter``, bounds [0.5, 4]; effort alone pushes them to the upper bound), the goal an
#: expression of both that pulls them back.
PARAMETER_EXPRESSION = {"weight": 100.0, "expression": "square(f0 - 1.5) + 0.5*f0*f1^2 + exp(-f1)",
                        "parameters": {"f0": ["/tau0", "optimal_force"], "f1": ["/tau1", "optimal_force"]},
                        "bounds": [0.5, 4.0]}


#: Both bodies' masses optimized (``MocoParameter`` on OpenSim's ``mass`` property, which keeps each body's rotational
#: inertia about its centre of mass; the pendulum's bodies have 1 kg·m² about each axis) with the same expression
#: goal pulling them towards 1 kg against the effort, which lighter bodies lower: the inner mass settles inside its
#: bounds (0.63 kg), the outer one on its lower bound; the effort depends on whether the inertia follows the mass.
#: (Moco differentiates its problem by finite differences and re-realizes the model for every perturbed mass: about
#: 100 s for this solve, against seconds for the others.)
BODY_MASS = {"weight": 1000.0, "expression": "square(m0 - 1) + square(m1 - 1)",
             "parameters": {"m0": ["/bodyset/b0", "mass"], "m1": ["/bodyset/b1", "mass"]}, "bounds": [0.5, 3.0]}


def solve_parameter_expression(spec: dict = PARAMETER_EXPRESSION) -> dict:
    osim = mr.osim
    study, problem = _study("explicit", 1.0)
    goal = osim.MocoExpressionBasedParameterGoal("expression", spec["weight"], spec["expression"])
    for variable, (component, prop) in spec["parameters"].items():
        parameter = osim.MocoParameter(variable, component, prop, osim.MocoBounds(*spec["bounds"]))
        problem.addParameter(parameter)
        goal.addParameter(parameter, variable)
    problem.addGoal(goal)
    return mr._solve_study(study)


#: Moco's ``MocoMarkerFinalGoal`` on the swing-up (explicit, effort weight 1) with the elbow's final angle free: a
#: marker on the outer body brought towards a place in ground at the end.
MARKER_FINAL = {"weight": 50.0, "marker": "tip", "body": "b1", "location": [0.3, 0.2, 0.0],
                "reference_location": [0.8, 1.6, 0.0]}


def solve_marker_final() -> dict:
    osim = mr.osim
    spec = MARKER_FINAL
    study, problem = _study("explicit", 1.0)
    model = mr.build_double_pendulum_model()
    model.addMarker(osim.Marker(spec["marker"], model.getBodySet().get(spec["body"]), osim.Vec3(*spec["location"])))
    model.finalizeConnections()
    problem.setModel(model)
    problem.setStateInfo("/jointset/j1/q1/value", [-10, 10], 0, [])
    goal = osim.MocoMarkerFinalGoal("marker_final", spec["weight"])
    goal.setPointName(f"/markerset/{spec['marker']}")
    goal.setReferenceLocation(osim.Vec3(*spec["reference_location"]))
    problem.addGoal(goal)
    return mr._solve_study(study)


def _goal_values(result: dict) -> dict:
    """Moco's goal breakdown from its console log (``<name>: <value>`` after "Breakdown of objective")."""
    values, on = {}, False
    for line in result["log"].splitlines():
        if "Breakdown of objective" in line:
            on = True
            continue
        if on and ":" in line:
            name, _, value = line.strip().partition(":")
            try:
                values[name.strip()] = float(value.split()[0])
            except (ValueError, IndexError):
                on = False
    return values


def main() -> None:
    path, _ = stored_reference("goals_moco")
    results = {}
    cases = [("joint_reaction", solve_joint_reaction), ("control_tracking", solve_control_tracking),
             ("translation_tracking", solve_translation_tracking),
             ("angular_velocity_tracking", solve_angular_velocity_tracking),
             ("orientation_tracking", solve_orientation_tracking),
             *((name, lambda name=name: solve_acceleration_tracking(name)) for name in ACCELERATION),
             ("generalized_force_tracking", solve_generalized_force_tracking),
             ("parameter_expression", solve_parameter_expression),
             ("body_mass", lambda: solve_parameter_expression(BODY_MASS)), ("marker_final", solve_marker_final),
             *((name, lambda name=name: solve_bound(name)) for name in BOUNDS),
             *((name, lambda name=name: solve_output(name)) for name in OUTPUTS),
             *((name, lambda name=name: solve_path_constraint(name)) for name in PATH_CONSTRAINTS)]
    for name, solve in cases:
        r = solve()
        results[name] = {"success": bool(r["success"]), "status": r["status"], "objective": r["objective"],
                         "goals": _goal_values(r), "nit": r["nit"], "solve_time": r["solve_time"],
                         "parameters": r["parameters"],
                         "time": r["time"].tolist(), "states": {k: v.tolist() for k, v in r["states"].items()},
                         "controls": {k: v.tolist() for k, v in r["controls"].items()}}
        print(f"{name}: {r['status']}, objective {r['objective']:.10g}, {r['nit']} iterations, goals "
              f"{results[name]['goals']}")
    t, columns = reference_table()
    ts, states = translation_states()
    settings = {"marker_final": {**MARKER_FINAL, "mode": "explicit", "effort_weight": 1.0},
                "parameter_expression": {**PARAMETER_EXPRESSION, "mode": "explicit", "effort_weight": 1.0},
                "body_mass": {**BODY_MASS, "mode": "explicit", "effort_weight": 1.0},
                "translation_tracking": {**TRANSLATION, "mode": "explicit", "reference_time": ts.tolist(),
                                         "reference": {k: v.tolist() for k, v in states.items()}},
                "angular_velocity_tracking": {**ANGULAR_VELOCITY, "mode": "explicit", "reference_time": ts.tolist(),
                                              "reference": {k: v.tolist() for k, v in states.items()}},
                "orientation_tracking": {**ORIENTATION, "mode": "explicit", "reference_time": ts.tolist(),
                                         "reference": {k: v.tolist() for k, v in states.items()}},
                **{name: {**spec, "mode": "implicit", "reference_time": acceleration_table()[0].tolist(),
                          "reference": {k: v.tolist() for k, v in acceleration_table()[1].items()}}
                   for name, spec in ACCELERATION.items()},
                "generalized_force_tracking": {**GENERALIZED_FORCE, "mode": "implicit",
                                               "reference_time": generalized_force_table()[0].tolist(),
                                               "reference": {k: v.tolist()
                                                             for k, v in generalized_force_table()[1].items()}},
                "scheme": SCHEME, "num_mesh_intervals": N, "optim_convergence_tolerance": TOL,
                "optim_constraint_tolerance": TOL, "joint_reaction": {**REACTION, "mode": "implicit",
                                                                       "effort_weight": 1.0},
                "control_tracking": {"mode": "explicit", "effort_weight": EFFORT_WEIGHT_TRACKING,
                                     "tracking_weight": TRACKING_WEIGHT, "reference_time": t.tolist(),
                                     "reference": {k: v.tolist() for k, v in columns.items()}},
                **{name: {"mode": "explicit", "effort_weight": 1.0, **spec} for name, spec in BOUNDS.items()},
                **{name: {"mode": "explicit", **spec} for name, spec in OUTPUTS.items()},
                **{name: {"mode": "explicit", "effort_weight": 1.0, **spec} for name, spec in PATH_CONSTRAINTS.items()}}
    path.write_text(json.dumps({"environment": environment(), "settings": settings, "results": results}, indent=1)
                    + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
