"""moco_lab.tools.Track (Moco's MocoTrack): tracking a sliding mass and the suspended mass (the Moco paper, Figure 4)."""
import math

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.results.sto import write_table
from moco_lab.tools.track import Track

POS, SPEED = "/slider/position/value", "/slider/position/speed"


@pytest.fixture(scope="module")
def reference():
    """Minimum-effort sliding mass (2 kg, 1 m in 1 s, rest to rest): smooth states, peak force 12 N."""
    study = ml.examples.sliding_mass_study(num_mesh_intervals=20)
    study.problem.set_time_bounds(0, 1.0)
    study.problem.remove_goal("time")
    study.problem.add_goal(ml.ControlGoal("effort"))
    solution = study.solve()
    assert solution.success
    return solution.as_trajectory()


def _check_tracks(solution, reference):
    assert solution.success, solution.message
    assert solution.initial_time == reference.initial_time and solution.final_time == reference.final_time
    # MocoTrack's 1e-2 tolerances and a 0.001 effort weight: close, not exact (1 m travel, 1.5 m/s peak speed).
    assert solution.rms_difference(reference, [POS]) < 0.01
    assert solution.rms_difference(reference, [SPEED]) < 0.15


def test_track_sliding_mass_reproduces_reference(reference):
    track = Track(ml.models.sliding_mass(), reference, states_global_tracking_weight=10, mesh_interval=0.05)
    study = track.initialize()
    assert isinstance(study, ml.Study)
    assert study.solver.num_mesh_intervals == 20
    assert study.problem.time_initial.is_fixed and study.problem.time_final.is_fixed
    assert [g.name for g in study.problem.goals] == ["state_tracking", "control_effort"]
    tracking, effort = study.problem.goals
    assert tracking.weight == 10 and effort.weight == 0.001 and effort.exponent == 2
    assert study.solver.optim_convergence_tolerance == 1e-2 == study.solver.optim_constraint_tolerance
    # default bounds from the model, no initial/final values imposed
    info = study.problem.state_info(POS)
    assert info.initial is None and info.final is None
    _check_tracks(study.solve(), reference)


@pytest.mark.parametrize("mesh_interval, expected", [(0.05, 20), (0.03, 34), (0.3, 4), (2.0, 1)])
def test_num_mesh_intervals_from_mesh_interval(reference, mesh_interval, expected):
    track = Track(ml.models.sliding_mass(), reference, mesh_interval=mesh_interval)
    assert track.num_mesh_intervals == expected == math.ceil(1.0 / mesh_interval)
    assert track.initialize().solver.num_mesh_intervals == expected


def test_options_reach_the_study(reference):
    track = Track(ml.models.sliding_mass(), reference, states_weights={SPEED: 0}, state_pattern=r".*value",
                  control_effort_weight=0.5, control_effort_exponent=4, scheme="trapezoidal", mode="implicit",
                  optim_tolerance=None)
    study = track.initialize()
    tracking, effort = study.problem.goals
    assert tracking.pattern == r".*value" and tracking.weights == {SPEED: 0}
    assert effort.weight == 0.5 and effort.exponent == 4
    s = study.solver
    assert (s.transcription_scheme, s.multibody_dynamics_mode) == ("trapezoidal", "implicit")
    assert s.optim_convergence_tolerance is None and s.optim_constraint_tolerance is None
    # the study can be edited before solving, and each initialize() gives a fresh study
    study.problem.remove_goal("control_effort")
    assert [g.name for g in track.initialize().problem.goals] == ["state_tracking", "control_effort"]
    assert [g.name for g in Track(ml.models.sliding_mass(), reference, control_effort_weight=0)
            .initialize().problem.goals] == ["state_tracking"]


def test_reference_errors(reference):
    model = ml.models.sliding_mass()
    columns = {**reference.states, "/slider/positon/value": reference.states[POS]}
    with pytest.raises(KeyError, match=r"positon.*allow_unused_references"):
        Track(model, (reference.time, columns))
    track = Track(model, (reference.time, columns), allow_unused_references=True)
    assert track.initialize().problem.get_goal("state_tracking").allow_unused_references
    with pytest.raises(ValueError, match="at least 2"):
        Track(model, ([0.0], {POS: [0.0]}))
    with pytest.raises(ValueError, match="increasing"):
        Track(model, ([0.0, 0.0], {POS: [0.0, 1.0]}))
    for bad in (0, -0.01, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="mesh_interval"):
            Track(model, reference, mesh_interval=bad)
    with pytest.raises(KeyError, match="states_weights"):
        Track(model, reference, states_weights={"/nope": 1})
    with pytest.raises(ValueError, match="No column"):
        Track(model, (reference.time, {"/other": reference.time}), allow_unused_references=True)
    with pytest.raises(ValueError, match="No column"):
        Track(model, reference, state_pattern=r".*accel")
    with pytest.raises(TypeError, match="states_reference"):
        Track(model, 42)


def test_sto_reference_round_trip(reference, tmp_path):
    model = ml.models.sliding_mass()
    plain = tmp_path / "states.sto"
    write_table(plain, reference.time, reference.states)
    from_file = Track(model, plain, states_global_tracking_weight=10, mesh_interval=0.05)
    from_memory = Track(model, reference, states_global_tracking_weight=10, mesh_interval=0.05)
    np.testing.assert_array_equal(from_file.reference_time, reference.time)
    assert list(from_file.reference) == list(reference.states)
    for k in reference.states:
        np.testing.assert_array_equal(from_file.reference[k], reference.states[k])
    solution = from_file.solve()
    _check_tracks(solution, reference)
    assert solution.objective == pytest.approx(from_memory.solve().objective, rel=1e-12)
    # a full Moco trajectory file (states and controls): its states are tracked, the controls ignored
    full = tmp_path / "solution.sto"
    reference.write_sto(full)
    assert list(Track(model, str(full)).reference) == list(reference.states)
    degrees = tmp_path / "degrees.sto"
    write_table(degrees, reference.time, reference.states, {"inDegrees": True})
    # a file in degrees: rotational coordinates are converted (as OpenSim's TableProcessor); the slider translates,
    # so its columns are read as they are
    in_degrees = Track(model, degrees)
    for k in reference.states:
        np.testing.assert_array_equal(in_degrees.reference[k], reference.states[k])


@pytest.mark.slow
def test_suspended_mass_tracking_muscle_redundancy():
    """The Moco paper, Figure 4 (VERIFICATION.md (c), remark 2), on coarse meshes to keep the test short.

    Predict, then MocoTrack the predicted states (tracking weight 10, values
    and speeds only) and compare activations with the prediction's. With the
    prediction's effort exponent (2) tracking recovers its activations; with
    exponent 4 the redundant muscles share the force differently.

    The metric is Moco's ``compareContinuousVariablesRMSPattern(pred, 'states',
    '/forceset.*activation$')``: ``sqrt(∫ Σ err² dt / (T * ncols))``, i.e.
    ``Trajectory.rms_difference`` (common time range, no ``ncols``) divided by
    ``sqrt(ncols)``, as a percentage of the peak predicted activation.
    Moco 4.6 (N = 100 prediction, N = 138 tracking): 0.21-0.33% (exponent 2)
    and 10.7-11.1% (exponent 4). Measured here, implicit mode:
    N = 30 / 21 (this test; exponent 4 warm-started): 0.213% and 10.71%;
    N = 100 / 138 (the paper's meshes): 0.214% and 10.70%. Explicit mode,
    N = 30 / 21, from bounds: 0.216% and 10.77%, with ~5x more iterations.

    The solves use the exact Hessian (Newton's method): 19 + 23 + 21 IPOPT iterations, under a second, on the
    Zen and Sandybridge kernels alike (2026-11-29), to 0.174% and 10.719%; Moco's limited-memory Hessian
    reaches the same optima (0.173%, 10.719%; the predictions' objectives 2e-10 apart, the trackings' 8e-7 and
    4e-7 relative above the exact ones) in 26 + 241 + 640 iterations, 26 s.
    """
    prediction_study = ml.examples.suspended_mass_prediction_study(num_mesh_intervals=30)
    prediction_study.solver.set_hessian_approximation("exact")
    prediction = prediction_study.solve()
    assert prediction.success
    activations = [k for k in prediction.states if k.endswith("/activation")]
    assert len(activations) == 3
    peak = max(prediction.states[k].max() for k in activations)

    percent, previous = {}, None
    for exponent in (2, 4):
        # Remark 2: explicit mode needs hundreds of IPOPT iterations more; implicit reaches the same optimum.
        track = Track(ml.models.suspended_mass(), prediction, states_global_tracking_weight=10,
                      state_pattern=r".*(value|speed)$", allow_unused_references=True, mesh_interval=0.020,
                      control_effort_exponent=exponent, mode="implicit")
        study = track.initialize()
        assert study.solver.num_mesh_intervals == math.ceil(prediction.final_time / 0.020) == 21
        p = study.problem
        p.set_state_info("/jointset/tx/tx/value", (-0.2, 0.2), -0.14)     # final values free
        p.set_state_info("/jointset/ty/ty/value", (-0.4, 0.0), -0.20)
        p.set_state_info_pattern(r".*/activation", (0, 1), 0)
        p.set_state_info_pattern(r".*/speed", (-15, 15))
        study.solver.optim_convergence_tolerance = None                   # IPOPT defaults, as the paper
        study.solver.optim_constraint_tolerance = None
        study.solver.set_hessian_approximation("exact")
        if previous is not None:
            study.solver.guess = previous                                 # warm start
        solution = study.solve()
        assert solution.success, solution.message
        moco_rms = solution.rms_difference(prediction, activations) / math.sqrt(len(activations))
        percent[exponent] = 100 * moco_rms / peak
        print(f"exponent {exponent}: {percent[exponent]:.3f}% ({solution.nit} iterations, {solution.solve_time:.1f} s)")
        previous = solution

    assert percent[2] < 0.5, percent                  # tracking recovers the prediction's activations
    assert 9.0 < percent[4] < 13.0, percent           # Moco: 10.7-11.1%
    assert percent[4] > 20 * percent[2], percent      # muscle redundancy: the effort exponent decides
