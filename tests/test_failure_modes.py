"""Bad inputs and hard cases through the public API: every one a clear error that names the culprit, or an
honest unsuccessful solution that says what happened.

Each case asserts the exact class of the error and that the message names the variable, setting, column,
file line or status involved.
"""
import json
import math
import warnings

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.results.sto import StoFormatError

INF, NAN = math.inf, math.nan
POS = "/slider/position/value"
SPEED = "/slider/position/speed"


def sliding_mass(N=10, final_time=(0, 5), goal=True):
    """The library's minimum-time sliding mass, trapezoidal, with another final-time range or no goal."""
    study = ml.examples.sliding_mass_study(scheme="trapezoidal")
    study.solver.num_mesh_intervals = N   # unchecked here: some tests set bad sizes on purpose
    study.problem.set_time_bounds(0, final_time)
    if not goal:
        study.problem.goals.clear()
    return study


# ------------------------------------------------------------------ bounds
@pytest.mark.parametrize("kwargs, culprit", [
    (dict(bounds=(INF, INF)), "bounds"), (dict(initial=INF), "initial"), (dict(final=-INF), "final"),
    (dict(bounds=(0, NAN)), "bounds"), (dict(initial=NAN), "initial"), (dict(bounds=(INF, 5)), "bounds"),
])
def test_non_finite_fixed_values_and_nan_are_rejected_naming_the_state(kwargs, culprit):
    p = sliding_mass().problem
    with pytest.raises(ValueError) as err:
        p.set_state_info(POS, **kwargs)
    assert POS in str(err.value) and culprit in str(err.value)


def test_control_fixed_at_infinity_and_infinite_fixed_final_time_are_rejected():
    p = sliding_mass().problem
    with pytest.raises(ValueError, match=r"control '/actuator' bounds.*cannot be fixed at inf"):
        p.set_control_info("/actuator", INF)
    with pytest.raises(ValueError, match=r"final time.*cannot be fixed at inf"):
        p.set_time_bounds(0, INF)
    with pytest.raises(ValueError, match=r"initial time.*NaN"):
        p.set_time_bounds(NAN, 1)


def test_legitimate_infinite_bounds_still_solve():
    study = sliding_mass(final_time=(0, INF))
    study.problem.set_state_info(POS, (-INF, INF), 0, 1)
    sol = study.solve()
    assert sol.success and sol.final_time == pytest.approx(0.4, abs=0.01)


# ------------------------------------------------------------------ degenerate and aborted solves
def test_collapsed_time_grid_is_an_unsuccessful_inspectable_solution():
    # minimum time from rest at 0 to rest at 0: the optimum is t_f = t_0, a grid of identical times
    study = sliding_mass()
    study.problem.set_state_info(POS, (-5, 5), 0, 0)
    sol = study.solve()
    assert not sol.success and sol.status == "Degenerate_Time_Grid"
    assert "final time" in sol.message and "set_time_bounds" in sol.message
    data = sol.unseal()
    assert data.final_time == pytest.approx(data.initial_time, abs=1e-6)
    assert data.states[POS].shape == (11,)


def test_over_constrained_problem_reports_ipopts_status():
    # one mesh interval (8 variables) with 2 defect equations and 4 equality path constraints at each of the
    # 2 mesh points: 10 equations for 8 unknowns
    study = sliding_mass(N=1, final_time=1.0, goal=False)
    study.problem.add_path_constraint("too_many", lambda t, s, c, p: [s[POS], s[SPEED], c["/actuator"], s[POS] + 1],
                                      [0, 0, 0, 0], [0, 0, 0, 0])
    sol = study.solve()
    assert not sol.success
    assert sol.status == "Not_Enough_Degrees_Of_Freedom" and sol.nit == 0
    assert "over-constrained" in sol.message
    assert math.isnan(sol.constraint_violation)  # IPOPT returns NaN: not reported as 0


def test_nan_objective_reports_invalid_number():
    study = sliding_mass()
    study.problem.add_goal(ml.UserGoal("bad", integrand=lambda t, s, c, p: np.sqrt(-1.0 - s[SPEED] ** 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own warning for sqrt of a negative number
        sol = study.solve()
    assert not sol.success and sol.status == "Invalid_Number_Detected"
    assert "NaN" in sol.message


def test_solutions_report_unscaled_optimality():
    sol = sliding_mass().solve()
    assert sol.success
    assert set(sol.optimality) == {"dual_infeasibility", "constraint_violation", "complementarity", "nlp_error"}
    assert 0 <= sol.optimality["dual_infeasibility"] < 1e-6
    assert "unscaled dual infeasibility" in sol.message


# ------------------------------------------------------------------ names and settings
def test_solution_lookups_suggest_names():
    sol = sliding_mass().solve()
    with pytest.raises(KeyError, match=r"Unknown state '/slider/position/valu'.*Did you mean '/slider/position/value'"):
        sol.states["/slider/position/valu"]
    with pytest.raises(KeyError, match=r"Unknown control '/actuatr'.*'/actuator'"):
        sol.controls["/actuatr"]
    with pytest.raises(KeyError, match="trajectory column"):
        sol["/slider/position/sped"]


def test_misspelt_settings_are_refused():
    study = sliding_mass()
    with pytest.raises(AttributeError, match=r"Unknown setting 'num_mesh_interval'.*'num_mesh_intervals'"):
        study.solver.num_mesh_interval = 10
    study.solver.num_mesh_intervals = 12  # a real setting still works
    inverse_like = ml.Track(ml.models.sliding_mass(), (np.array([0, 1.0]), {POS: np.array([0, 1.0])}),
                            allow_unused_references=True)
    with pytest.raises(AttributeError, match="mesh_interval"):
        inverse_like.mesh_intervall = 0.01


@pytest.mark.parametrize("N", [0, -3, 2.5, "10"])
def test_bad_mesh_sizes_name_the_setting(N):
    study = sliding_mass()
    study.solver.num_mesh_intervals = N
    with pytest.raises(ValueError, match=r"num_mesh_intervals must be a positive integer"):
        study.solve()


def test_user_goal_with_math_functions_explains_autodiff():
    study = sliding_mass()
    study.problem.add_goal(ml.UserGoal("mine", integrand=lambda t, s, c, p: math.sin(s[POS])))
    with pytest.raises(TypeError) as err:
        study.solve()
    text = str(err.value)
    assert "UserGoal 'mine'" in text and "np.sin" in text and "math" in text


def test_no_goal_with_free_final_time_warns():
    study = sliding_mass(goal=False)
    with pytest.warns(UserWarning, match="no goals.*final time will be arbitrary"):
        study.transcribe()
    fixed = sliding_mass(final_time=1.0, goal=False)  # a feasibility problem: nothing is arbitrary
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed.transcribe()


def test_parameter_on_a_missing_property():
    p = sliding_mass().problem
    with pytest.raises(KeyError, match=r"Unknown model property '/body/mas'.*'/body/mass'"):
        p.add_parameter("m", "/body/mas", (1, 3))


def test_tracking_reference_without_the_tracked_columns():
    study = sliding_mass()
    ref = (np.array([0, 1.0]), {"/slider/position/valeu": np.array([0.0, 1.0])})
    study.problem.add_goal(ml.StateTrackingGoal("track", 1.0, reference=ref))
    with pytest.raises(KeyError) as err:
        study.solve()
    assert "/slider/position/valeu" in str(err.value)


# ------------------------------------------------------------------ files
STO_HEAD = "version=1\nnRows={rows}\nnColumns=2\ninDegrees=no\n"


@pytest.mark.parametrize("body, line, text", [
    (STO_HEAD.format(rows=2) + "time\tq\n0\t1\n1\t2\n", 7, "no 'endheader' line"),
    (STO_HEAD.format(rows=2) + "endheader\ntime\tq\n0\tabc\n1\t2\n", 7, "non-numeric value 'abc' in column 'q'"),
    (STO_HEAD.format(rows=3) + "endheader\ntime\tq\n0\t1\n1\t2\n0.5\t3\n", 9, "time 0.5 does not increase"),
])
def test_broken_sto_files_name_the_line(tmp_path, body, line, text):
    path = tmp_path / "bad.sto"
    path.write_text(body)
    study = sliding_mass()
    with pytest.raises(StoFormatError) as err:
        study.problem.add_goal(ml.StateTrackingGoal("track", 1.0, reference=str(path)))
    assert f"line {line}" in str(err.value) and text in str(err.value) and "bad.sto" in str(err.value)


def test_study_file_from_another_version(tmp_path):
    study = sliding_mass()
    path = tmp_path / "study.json"
    study.save(path)
    data = json.loads(path.read_text())
    assert data["moco_lab_version"] == ml.__version__
    data["format"], data["moco_lab_version"] = "moco_lab.study/0", "0.0.1"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"format 'moco_lab.study/0' \(written by moco_lab 0.0.1\).*reads"):
        ml.Study.load(path)
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="Not a moco_lab study file"):
        ml.Study.load(path)


# ------------------------------------------------------------------ round trips
def test_solution_with_multipliers_and_parameters_round_trips_through_sto(tmp_path):
    study = ml.Study()
    p = study.problem
    p.set_model(ml.models.planar_point_mass("parabola"))
    p.set_time_bounds(0, 1)
    p.set_state_info("/jointset/tx/tx/value", (-2, 2), -1, 0.5)
    p.set_state_info("/jointset/ty/ty/value", (-2, 2), 1, 0.25)
    for s in ("/jointset/tx/tx/speed", "/jointset/ty/ty/speed"):
        p.set_state_info(s, (-5, 5), 0, 0)
    p.add_goal(ml.ControlGoal())
    p.add_parameter("mass", "/bodyset/body/mass", (0.5, 2))
    study.solver.num_mesh_intervals = 8
    sol = study.solve()
    assert sol.success and sol.multipliers and sol.parameters
    path = tmp_path / "sol.sto"
    sol.write_sto(path)
    back = ml.Trajectory.read_sto(path)
    assert back.is_numerically_equal(sol.as_trajectory(), rtol=1e-15)
    assert back.parameters == pytest.approx(sol.parameters, rel=1e-15)


def test_study_of_a_built_model_refuses_to_save_with_a_reason(tmp_path):
    b = ml.ModelBuilder("mine")
    b.add_body("b", 1.0)
    b.add_slider_joint("s", "ground", "b")
    study = ml.Study()
    study.problem.set_model(b.build())
    study.problem.set_time_bounds(0, 1)
    with pytest.raises(TypeError, match="not built by a moco_lab.models factory"):
        study.save(tmp_path / "s.json")


def test_study_with_a_constrained_model_and_parameters_round_trips(tmp_path):
    study = ml.examples.parabola_study()
    study.problem.add_parameter("mass", "/bodyset/body/mass", (0.5, 2))
    study.solver.num_mesh_intervals = 6
    study.save(tmp_path / "p.json")
    loaded = ml.Study.load(tmp_path / "p.json")
    a, b = study.solve(), loaded.solve()
    assert a.success and b.success and a.objective == b.objective
    assert a.as_trajectory().is_numerically_equal(b.as_trajectory(), rtol=0, atol=0)
    assert b.multipliers and b.parameters
