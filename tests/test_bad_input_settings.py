"""Bad settings, factory arguments, sweeps, marker files and tracking references through the public API: each a
clear error (standard class) that names the setting, argument, file line or column, raised before any solve.
"""
import math
import re

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.examples.gait2d import gait2d_tracking_study
from moco_lab.examples.squat import squat_to_stand_study
from moco_lab.results.trc import read_trc, write_trc


@pytest.mark.parametrize("factory, name", [
    (lambda n: squat_to_stand_study(num_mesh_intervals=n), "squat_to_stand_study: num_mesh_intervals"),
    (lambda n: ml.examples.walking_2d_study(num_mesh_intervals=n), "walking_2d: num_mesh_intervals"),
    (lambda n: gait2d_tracking_study(n), "gait2d_tracking_study: num_mesh_intervals"),
    (lambda n: ml.examples.double_pendulum_study(num_mesh_intervals=n), "double_pendulum: num_mesh_intervals"),
])
@pytest.mark.parametrize("value, error, words", [
    (2.5, TypeError, "must be a whole number, got 2.5 (float)"),
    ("10", TypeError, "must be a whole number, got '10' (str)"),
    (True, TypeError, "must be a whole number, got True (bool)"),
    (0, ValueError, "must be >= 1, got 0"),
])
def test_factories_refuse_mesh_sizes_instead_of_rounding(factory, name, value, error, words):
    with pytest.raises(error, match=f"^{re.escape(name)} {re.escape(words)}"):
        factory(value)


@pytest.mark.parametrize("value", [math.inf, math.nan, 0.0, -1e-3])
def test_tolerances_must_be_finite_and_positive(value):
    settings = ml.SolverSettings(optim_convergence_tolerance=value)
    with pytest.raises(ValueError, match="optim_convergence_tolerance must be a finite number > 0"):
        settings.validate()


@pytest.mark.parametrize("value, error", [
    ("0.5", TypeError), (True, TypeError), (None, TypeError), (math.nan, ValueError), (-math.inf, ValueError),
    (0.0, ValueError), (-2, ValueError),
])
def test_every_factory_and_tool_refuses_bad_numbers_the_same_way(value, error):
    """The one shared check (``util.checks.finite_number``): text or a bool is a ``TypeError``, NaN, infinity or a
    value out of range a ``ValueError``, both naming the argument; numpy scalars are numbers like any other."""
    from moco_lab.modeling.operators import scale_max_isometric_force

    with pytest.raises(error, match=r"walking_2d_prediction: speed must be a positive number of m/s, got "):
        ml.examples.walking_2d_study("prediction", speed=value)
    with pytest.raises(error, match=r"scale_max_isometric_force: factor must be a finite number > 0, got "):
        scale_max_isometric_force(ml.models.sliding_mass(), value)
    if value is not None:  # None is the optimizer's default tolerance
        with pytest.raises(error, match=r"optim_constraint_tolerance must be a finite number > 0 \(or None"):
            ml.SolverSettings(optim_constraint_tolerance=value).validate()


def test_numpy_scalars_are_accepted_as_numbers():
    from moco_lab.util.checks import finite_number, whole_number

    assert finite_number(np.float32(0.25), "x", 0, False) == 0.25
    assert finite_number(np.int64(3), "x") == 3.0 and whole_number(np.int64(3), "n") == 3
    assert isinstance(finite_number(np.float64(2.0), "x"), float)


def test_a_sweep_value_given_as_a_string_is_not_split_into_letters():
    with pytest.raises(TypeError, match=r"grid\(\): the values for 'solver.transcription_scheme' must be a list of "
                                        r"values, got 'trapezoidal' \(one value: \['trapezoidal'\]\)"):
        ml.grid(**{"solver.transcription_scheme": "trapezoidal"})
    with pytest.raises(TypeError, match="the values for 'property./x' must be a list"):
        ml.grid(**{"property./x": 3.0})


@pytest.mark.parametrize("workers", [-1, 0, 1.5, True])
def test_sweep_workers_must_be_a_positive_integer(workers):
    """``workers=-1`` used to start no worker and wait forever; now it is refused before anything starts."""
    study = ml.examples.double_pendulum_study(num_mesh_intervals=5)
    with pytest.raises(ValueError, match=rf"sweep: workers must be a positive integer .*got {workers!r}"):
        ml.sweep(study, {"solver.num_mesh_intervals": [5, 6]}, workers=workers)


def _trc(tmp_path, time):
    path = tmp_path / "trial.trc"
    write_trc(path, np.arange(len(time)) * 0.01, {"M1": np.zeros((len(time), 3))}, units="m")
    lines = path.read_text().splitlines()
    for k, t in enumerate(time):   # after 5 header lines and a blank one, row k is line 7 + k: frame, time, x, y, z
        cells = lines[6 + k].split("\t")
        cells[1] = t
        lines[6 + k] = "\t".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_marker_file_whose_time_goes_backwards_names_the_line(tmp_path):
    path = _trc(tmp_path, ["0", "0.01", "0.02", "0.015", "0.03"])
    with pytest.raises(ValueError, match=r"trial\.trc, line 10: time 0\.015 s does not increase \(the frame before, "
                                         r"line 9, is at 0\.02 s\)"):
        read_trc(path)
    path = _trc(tmp_path, ["0", "0.01", "", "0.03"])
    with pytest.raises(ValueError, match=r"trial\.trc, line 9: the time is missing or not finite"):
        read_trc(path)


def test_a_tracking_reference_with_nan_names_the_column():
    t = np.linspace(0, 1, 11)
    knee = -t.copy()
    knee[4] = np.nan
    with pytest.raises(ValueError, match=r"StateTrackingGoal 'track'.*column '/jointset/knee/knee_angle/value' has "
                                         r"1 NaN or infinite values \(the first at t = 0\.4 s\)"):
        ml.StateTrackingGoal("track", reference=(t, {"/jointset/knee/knee_angle/value": knee}))


def test_evaluate_refuses_a_trajectory_of_another_problem():
    """It used to score the bounds' midpoint for every missing column; now the missing columns are named."""
    study = ml.examples.double_pendulum_study(num_mesh_intervals=5)
    other = ml.Trajectory(np.linspace(0, 1, 3), states={"/jointset/tx/tx/value": np.zeros(3)})
    with pytest.raises(ValueError, match=r"evaluate: the trajectory has no values for 6 of the problem's 6 states and "
                                         r"controls \(\['/jointset/j0/q0/value'.*it has \['/jointset/tx/tx/value'\]"):
        study.evaluate(other)


def test_an_empty_trajectory_says_so():
    study = ml.examples.double_pendulum_study(num_mesh_intervals=5)
    study.solver.guess = ml.Trajectory(np.zeros(0))
    with pytest.raises(ValueError, match="this trajectory has no time points"):
        study.solve()


def test_periodic_trajectory_arguments():
    from moco_lab.results.periodic import create_periodic_trajectory

    half = ml.Trajectory(np.linspace(0, 0.5, 6), states={"/jointset/groundPelvis/pelvis_tx/value": np.zeros(6)})
    with pytest.raises(TypeError, match=r"add_patterns must be a list of patterns, got the string 'pelvis_tx' "
                                        r"\(one pattern: \['pelvis_tx'\]\)"):
        create_periodic_trajectory(half, add_patterns="pelvis_tx")
    with pytest.raises(ValueError, match=r"negate_patterns holds '\(\[', not a regular expression"):
        create_periodic_trajectory(half, negate_patterns=["(["])
    with pytest.raises(ValueError, match="the half cycle needs at least 2 times, got 1"):
        create_periodic_trajectory(ml.Trajectory([0.0], states={"a": [1.0]}))
    with pytest.raises(TypeError, match="half must be a Trajectory or Solution, got dict"):
        create_periodic_trajectory({"a": [1.0]})


def test_goal_weights_and_exponents_are_checked_whenever_they_are_set():
    """Factories and sweeps set them after construction; a NaN there used to pass silently."""
    goal = ml.ControlGoal("effort")
    with pytest.raises(ValueError, match="Goal 'effort': weight must be a finite number, got nan"):
        goal.weight = math.nan
    with pytest.raises(ValueError, match=r"ControlGoal 'effort': exponent must be a finite number >= 2 \(as in Moco\), got nan"):
        goal.exponent = math.nan
    with pytest.raises(TypeError, match="Goal 'effort': weight must be a finite number, got 'heavy'"):
        goal.weight = "heavy"
    assert goal.weight == 1.0 and goal.exponent == 2.0


@pytest.mark.parametrize("make, words", [
    (lambda: squat_to_stand_study(spring=math.nan), "squat_to_stand_study: spring must be a finite stiffness >= 0"),
    (lambda: squat_to_stand_study(spring=-5.0), "squat_to_stand_study: spring must be a finite stiffness >= 0"),
    (lambda: ml.examples.walking_2d_study("prediction", speed=-1.0), "walking_2d_prediction: speed must be a "
                                                                      "positive number of m/s, got -1.0"),
    (lambda: gait2d_tracking_study(5, effort_weight=-1), "gait2d_tracking_study: effort_weight must be a finite "
                                                         "number >= 0, got -1"),
])
def test_factories_check_their_physical_arguments(make, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        make()


def test_factory_guess_must_be_a_trajectory():
    with pytest.raises(TypeError, match=r"walking_2d_prediction: guess must be a Trajectory or Solution \(e\.g\. "
                                        r"ml\.read_trajectory\(path\) for a file\), got str"):
        ml.examples.walking_2d_study("prediction", guess="tracking.sto")


def test_sweep_metrics_must_be_callables():
    study = ml.examples.double_pendulum_study(num_mesh_intervals=5)
    with pytest.raises(TypeError, match=r"sweep: metrics \['peak'\] are not callables"):
        ml.sweep(study, {"solver.num_mesh_intervals": [5]}, client=None, metrics={"peak": 3.0})


def test_reference_tables_name_the_bad_argument():
    from moco_lab.results.tables import filter_lowpass, interpolating_spline

    t = np.linspace(0, 1, 20)
    with pytest.raises(ValueError, match=r"interpolating_spline: degree must be odd \(1, 3, 5, \.\.\.\), got 4"):
        interpolating_spline(t, np.zeros(20), degree=4)
    with pytest.raises(TypeError, match=r"interpolating_spline: degree must be a whole number, got 5\.0"):
        interpolating_spline(t, np.zeros(20), degree=5.0)
    with pytest.raises(ValueError, match="interpolating_spline: times must be finite and increase strictly"):
        interpolating_spline(t[::-1], np.zeros(20))
    with pytest.raises(ValueError, match="interpolating_spline: values contain NaN or infinite values"):
        interpolating_spline(t, np.r_[np.zeros(19), np.nan])
    with pytest.raises(TypeError, match=r"filter_lowpass: the cutoff frequency must be positive \(Hz\), got '6'"):
        filter_lowpass(t, {"a": np.zeros(20)}, "6")


def test_periodic_symmetry_patterns_must_be_pairs():
    from moco_lab.results.periodic import create_periodic_trajectory

    half = ml.Trajectory([0.0, 1.0], states={"/jointset/hip_r/hip_flexion_r/value": [0.0, 1.0],
                                             "/jointset/hip_l/hip_flexion_l/value": [1.0, 0.0]})
    with pytest.raises(ValueError, match=r"create_periodic_trajectory: symmetry_patterns holds \('_r',\), not a pair "
                                         r"\(pattern, substitution\)"):
        create_periodic_trajectory(half, symmetry_patterns=[("_r",)])


@pytest.mark.parametrize("option, error, words", [
    (dict(states_global_tracking_weight=math.nan), ValueError,
     "Track: states_global_tracking_weight must be a finite number >= 0, got nan"),
    (dict(states_weights={"/slider/position/value": "2"}), TypeError,
     "Track: states_weights['/slider/position/value'] must be a finite number >= 0, got '2'"),
    (dict(states_weights=[1.0]), TypeError, "Track: states_weights must be a dict of state path -> weight, got list"),
    (dict(state_pattern="(["), ValueError, "Track: state_pattern '([' is not a regular expression"),
    (dict(control_effort_weight=-1.0), ValueError, "Track: control_effort_weight must be a finite number >= 0"),
    (dict(control_effort_exponent=math.nan), ValueError,
     "Track: control_effort_exponent must be a finite number >= 2 (as in Moco), got nan"),
    (dict(scheme="simpson"), ValueError, "Track: scheme must be one of ['trapezoidal', 'hermite-simpson'] or a "
                                         "pseudospectral 'legendre-gauss-k' / 'legendre-gauss-radau-k' with k = "
                                         "1...9, got 'simpson'"),
    (dict(mode="semi"), ValueError, "Track: mode must be one of ['explicit', 'implicit'], got 'semi'"),
    (dict(optim_tolerance=math.inf), ValueError, "Track: optim_tolerance must be a finite number > 0"),
    (dict(initial_time="0.1"), TypeError, "Track: initial_time must be a time in s, got '0.1'"),
    (dict(final_time=math.nan), ValueError, "Track: final_time must be a time in s, got nan"),
])
def test_track_checks_its_options_when_it_is_made(option, error, words):
    """MocoTrack's options, each checked in the constructor (not at solve time), naming the option."""
    from moco_lab.tools import Track

    t = np.linspace(0, 1, 11)
    reference = (t, {"/slider/position/value": t ** 2})
    with pytest.raises(error, match=re.escape(words)):
        Track(ml.models.sliding_mass(), reference, **option)


def _study_cases():
    """(call, exception class, the message's start): the factories, Inverse, sweeps and study files."""
    from moco_lab.examples import walking_2d as w2
    from moco_lab.tools.inverse import Inverse
    from moco_lab.tools.sweep import apply_change, sweep

    t = np.linspace(0, 1, 11)
    kinematics = (t, {"/slider/position/value": t})
    sliding = ml.examples.sliding_mass_study
    change = [{"solver.num_mesh_intervals": 5}]
    return [
        (lambda: squat_to_stand_study(tol=math.nan), ValueError, "squat_to_stand_study: tol must be a finite number "
                                                                 "> 0, got nan"),
        (lambda: squat_to_stand_study(linear_solver="ma27"), ValueError,
         "squat_to_stand_study: linear_solver must be one of ['mumps', 'spral'], got 'ma27'"),
        (lambda: squat_to_stand_study(assisted="yes"), TypeError,
         "squat_to_stand_study: assisted must be True or False, got 'yes'"),
        (lambda: gait2d_tracking_study(5, scheme="simpson"), ValueError,
         "gait2d_tracking_study: scheme must be one of ['trapezoidal', 'hermite-simpson'] or a pseudospectral "
         "'legendre-gauss-k' / 'legendre-gauss-radau-k' with k = 1...9, got 'simpson'"),
        (lambda: gait2d_tracking_study(5, hessian="bfgs"), ValueError,
         "gait2d_tracking_study: hessian must be one of ['exact', 'limited-memory'], got 'bfgs'"),
        (lambda: gait2d_tracking_study(5, limited_memory_start=-1), ValueError,
         "gait2d_tracking_study: limited_memory_start must be"),
        (lambda: gait2d_tracking_study(5, model="gait2d.osim"), TypeError,
         "gait2d_tracking_study: model must be a moco_lab Model, got str (read a file with ml.read_osim(path))"),
        (lambda: w2.walking_2d_study("tracking", tol=0), ValueError,
         "walking_2d_tracking: tol must be a finite number > 0, got 0"),
        (lambda: w2.walking_2d_study("tracking", grf_weight="1"), TypeError,
         "walking_2d_tracking: grf_weight must be a finite number >= 0, got '1'"),
        (lambda: w2.walking_2d_study("tracking", linear_solver="pardiso"), ValueError,
         "walking_2d_tracking: linear_solver must be one of ['mumps', 'spral'], got 'pardiso'"),
        (lambda: w2.walking_2d_study("prediction", effort_exponent=1), ValueError,
         "walking_2d_prediction: effort_exponent must be a finite number >= 2 (as in Moco), got 1"),
        (lambda: w2.walking_2d_study("prediction", time_bounds=(0.6, 0.4)), ValueError,
         "walking_2d_prediction: time_bounds must be (low, high) with low <= high, got (0.6, 0.4)"),
        (lambda: w2.walking_2d_study("prediction", time_bounds=0.5), TypeError,
         "walking_2d_prediction: time_bounds must be two final times (low, high) in s"),
        (lambda: w2.walking_2d_study("prediction", divide_by_displacement="no"), TypeError,
         "walking_2d_prediction: divide_by_displacement must be True or False, got 'no'"),
        (lambda: sliding(tol="1e-3"), TypeError,
         "sliding_mass: tol must be a finite number > 0 (or None for IPOPT's default), got '1e-3'"),
        (lambda: Inverse(ml.models.sliding_mass(), kinematics, mesh_interval=0), ValueError,
         "Inverse: mesh_interval must be a positive number of seconds, got 0"),
        (lambda: Inverse(ml.models.sliding_mass(), kinematics, reserves_optimal_force=math.nan), ValueError,
         "Inverse: reserves_optimal_force must be a force >= 0"),
        (lambda: Inverse(ml.models.sliding_mass(), kinematics, constraint_tolerance="1e-3"), TypeError,
         "Inverse: constraint_tolerance must be a finite number > 0, got '1e-3'"),
        (lambda: Inverse(ml.models.sliding_mass(), kinematics, max_iterations=2.5), TypeError,
         "Inverse: max_iterations must be a whole number, got 2.5"),
        (lambda: Inverse(ml.models.sliding_mass(), kinematics, initial_time=5.0), ValueError,
         "Inverse: initial_time: the time range [5.0, 1.0] must be increasing and inside the kinematics' range"),
        (lambda: Inverse(ml.models.sliding_mass(), kinematics, final_time="1"), TypeError,
         "Inverse: final_time must be a time in s"),
        (lambda: Inverse("sliding_mass.osim", kinematics), TypeError,
         "Inverse: model must be a moco_lab Model, got str"),
        (lambda: sweep("study.json", change, client=None), TypeError, "sweep: study must be a moco_lab Study, got str"),
        (lambda: sweep(sliding(num_mesh_intervals=5), [5], client=None), TypeError,
         "sweep: change 0 is 5, not a dict {setting: value}"),
        (lambda: sweep(sliding(num_mesh_intervals=5), change, client="remote"), ValueError,
         "sweep: client 'remote' is neither 'local' nor a scheduler address"),
        (lambda: sweep(sliding(num_mesh_intervals=5), change, client=3), TypeError,
         "sweep: client must be 'local', None, a distributed.Client or a scheduler address, got int"),
        (lambda: sweep(sliding(num_mesh_intervals=5), change, client=None, progress=3), TypeError,
         "sweep: progress must be True, False or a function (done, failed, total), got 3"),
        (lambda: apply_change(sliding(), {"time.final": "1"}), TypeError, "time.final must be a final time in s, "
                                                                          "got '1'"),
        (lambda: apply_change(sliding(), {"property./actuator/optimal_force": math.nan}), ValueError,
         "property./actuator/optimal_force must be a finite number, got nan"),
        (lambda: sliding().evaluate("solution.sto"), TypeError,
         "Study.evaluate: trajectory must be a Trajectory or Solution, got str (read a file with "
         "ml.read_trajectory(path))"),
        (lambda: ml.SolverSettings(optim_max_iterations="5").validate(), TypeError,
         "optim_max_iterations must be a whole number, got '5' (str)"),
        (lambda: ml.SolverSettings(implicit_acceleration_bounds=math.nan).validate(), ValueError,
         "implicit_acceleration_bounds must be a finite number > 0, got nan"),
        (lambda: ml.read_osim("2D_gait.osim", weld="knee_r"), TypeError,
         "read_osim: weld must be a list of joint names, got the string 'knee_r' (one name: ['knee_r'])"),
        (lambda: ml.read_osim(3), TypeError, "read_osim: path must be a file path"),
    ]


@pytest.mark.parametrize("index", range(len(_study_cases())))
def test_factories_inverse_sweeps_and_settings_name_the_bad_argument(index):
    """Every argument checked before anything is built or solved: the standard class, the function and the
    argument named (never silently stored to fail at solve time, split into letters or used as a truth value)."""
    call, error, words = _study_cases()[index]
    with pytest.raises(error, match="^" + re.escape(words)):
        call()


def test_a_sweep_folder_that_is_a_file_and_study_files_that_are_not_studies(tmp_path):
    from moco_lab.tools.sweep import sweep

    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(ValueError, match=r"sweep: folder '.*results' is a file, not a folder"):
        sweep(ml.examples.sliding_mass_study(num_mesh_intervals=5), [{}], client=None, folder=tmp_path / "results")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"'.*broken\.json' is not a moco_lab study file: not JSON \(Expecting "
                                         r"property name .* at line 1, column 2\)"):
        ml.Study.load(tmp_path / "broken.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"'.*list\.json': Not a moco_lab study \(a JSON object with 'format': "
                                         r"'moco_lab\.study/1'\), got a list"):
        ml.Study.load(tmp_path / "list.json")


def test_external_loads_and_recorded_operators_of_the_wrong_kind():
    from moco_lab.modeling import operators as ops

    with pytest.raises(TypeError, match="^add_external_loads: loads must be a path to a file, got int"):
        ops.add_external_loads(ml.models.sliding_mass(), 3)
    with pytest.raises(TypeError, match=r"^apply_operators: operators must be a list of \[name, kwargs\] pairs, got "
                                        r"str"):
        ops.apply_operators(ml.models.sliding_mass(), "remove_muscles")
    with pytest.raises(ValueError, match=r"^apply_operators: operators\[0\] is \['remove_muscles'\], not a pair"):
        ops.apply_operators(ml.models.sliding_mass(), [["remove_muscles"]])
