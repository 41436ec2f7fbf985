"""The walking dashboard (``widgets/walking.ipynb``, :mod:`moco_lab.ui.walking`): each walker's problem, its shipped
warm starts, and the panel driven from Python as the notebook builds it, switching walkers (about half a minute; the
browser test is in test_browser.py)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.analysis.gait2d import ground_reaction_forces
from moco_lab.analysis.walking import stretch_to_speed
from moco_lab.analysis.walking_2d import walking_2d_summary
from moco_lab.examples.gait2d import winter_gait
from moco_lab.modeling.gait2d import gait2d
from moco_lab.results import Duals
from moco_lab.results.trajectory import Trajectory, read_trajectory
from moco_lab.ui import demos
from moco_lab.ui import walking as wk
from moco_lab.ui.solve_panel import SolvePanel
from moco_lab.util.data import GAIT2D_PREDICTED_WALK, WALKING_2D_PREDICTED


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("MOCO_LAB_FAST", "1")
    wk.forget_warm_starts()  # no warm start left over from another test
    yield
    wk.forget_warm_starts()


def max_force(model, path):
    return model.force_element(path).properties()["max_isometric_force"]


# ------------------------------------------------------------------------------------------- warm starts
@pytest.mark.parametrize("n", sorted(GAIT2D_PREDICTED_WALK))
def test_gait2d_warm_starts_are_periodic_walks(n):
    """The files the gait2d walker starts from are what predicted_walk.md says: converged effort-only predictions of
    one periodic cycle at Winter's speed, with each foot on the ground about 55 % of the cycle and never both
    feet in the air."""
    traj = read_trajectory(GAIT2D_PREDICTED_WALK[n])
    assert traj.metadata["status"] == "Solve_Succeeded"
    assert f"gait2d_prediction_study({n})" in traj.metadata["problem"]
    assert traj.num_times == n + 1  # trapezoidal: one point per mesh point
    model = gait2d()
    g = winter_gait()
    hip_x = model.coordinate("hip_x").value_path
    assert traj.final_time == pytest.approx(g.duration, rel=1e-12)
    assert traj.states[hip_x][-1] - traj.states[hip_x][0] == pytest.approx(g.speed * g.duration, rel=1e-9)
    for name in model.state_names():
        if name != hip_x:  # periodicity is a linear constraint: met to round-off
            assert traj.states[name][-1] == pytest.approx(traj.states[name][0], abs=1e-6), name
    grf = ground_reaction_forces(model, traj)
    on = {s: grf[s][:-1, 1] > 0.05 * model.body_weight() for s in "rl"}
    for s in "rl":
        assert 0.5 < on[s].mean() < 0.65, (s, on[s].mean())
    assert not np.any(~on["r"] & ~on["l"])


@pytest.mark.parametrize("n", sorted(WALKING_2D_PREDICTED))
def test_walking_2d_warm_starts_are_symmetric_walks(n):
    """The files the 2-D walker starts from are what predicted_walk.md says: converged predictions of half a
    symmetric gait cycle at 1.2 m/s on Hermite–Simpson meshes of n intervals, judged feasible by the problem."""
    traj = ml.read_trajectory(WALKING_2D_PREDICTED[n])
    assert traj.metadata["status"] == "Solve_Succeeded"
    assert f"num_mesh_intervals={n}" in traj.metadata["problem"]
    assert traj.num_times == 2 * n + 1
    model = ml.examples.walking_2d_model()
    assert walking_2d_summary(model, traj).speed == pytest.approx(1.2, abs=1e-4)
    e = ml.examples.walking_2d_prediction(num_mesh_intervals=n).evaluate(traj)
    assert e.constraint_violation < 1e-4, e.worst_constraint   # the solver's tolerance
    # the stored objective is IPOPT's, whose effort integral is a variable tied to the trajectory's integral by a
    # constraint met to the tolerance 1e-4: the two agree to that (measured 9e-6)
    assert e.objective == pytest.approx(traj.metadata["objective"], rel=1e-4)


def test_shipped_walk_is_the_closest_mesh_and_a_copy():
    for walker in wk.WALKERS.values():
        meshes = sorted(walker.shipped)
        assert wk.shipped_walk(walker, 10**6).num_times == wk.shipped_walk(walker, meshes[-1]).num_times
        assert wk.shipped_walk(walker, 1).num_times == wk.shipped_walk(walker, meshes[0]).num_times
        a = wk.shipped_walk(walker, meshes[0])
        name = next(iter(a.states))
        a.states[name][:] = 99.0
        assert not np.any(wk.shipped_walk(walker, meshes[0]).states[name] == 99.0)


def test_stretch_to_speed_scales_the_hip_only():
    t = np.linspace(0.0, 1.0, 11)
    path = "/jointset/ground_trunk/hip_x/value"
    traj = Trajectory(t, {path: 0.2 + 1.5 * t, "/jointset/ground_trunk/hip_x/speed": np.full_like(t, 1.5),
                          "/jointset/knee_r/knee_angle_r/value": np.sin(t)})
    out = stretch_to_speed(traj, path, 0.9)
    assert out.states[path][0] == 0.2 and out.states[path][-1] - out.states[path][0] == pytest.approx(0.9)
    assert np.allclose(out.states["/jointset/ground_trunk/hip_x/speed"], 0.9)
    assert np.array_equal(out.states["/jointset/knee_r/knee_angle_r/value"], np.sin(t))
    assert traj.states[path][-1] == pytest.approx(1.7)  # the input is not changed


# ------------------------------------------------------------------------------------------- the problems
def test_every_walker_is_a_demo_problem_with_a_field_per_muscle_group():
    for key, walker in wk.WALKERS.items():
        demo = demos.get_demo_problem(key)
        keys = [o.key for o in demo.options]
        assert keys == ["speed", *(f"strength_{g}" for g in walker.groups), "warm_start"]
        model = walker.model()
        for group in walker.groups:  # every group names a muscle of each leg
            for side in "rl":
                assert max_force(model, walker.muscle_path(group, side)) > 0


def test_gait2d_settings_build_the_named_problem():
    settings = demos.default_settings("gait2d_walking")
    assert settings["goals"] == {"angles": {"weight": 0.0}, "effort": {"weight": 1.0, "exponent": 2.0}}
    assert settings["mode"] == "implicit" and settings["scheme"] == "trapezoidal" and settings["mesh_intervals"] == 25
    settings.update(speed=1.0, strength_soleus=50.0, warm_start="no")
    study = demos.apply_settings(wk.build_walk(wk.GAIT2D, settings), settings)
    model = study.problem.model
    normal = gait2d()
    for side in "rl":
        assert max_force(model, f"/forceset/soleus_{side}") == pytest.approx(
            0.5 * max_force(normal, f"/forceset/soleus_{side}"))
        assert max_force(model, f"/forceset/vasti_{side}") == max_force(normal, f"/forceset/vasti_{side}")
    hip_x = model.coordinate("hip_x").value_path
    info = study.problem.state_info(hip_x)
    assert info.final.lower == info.final.upper == pytest.approx(1.0 * 1.1396)
    guess = study.solver.guess
    assert guess.states[hip_x][-1] - guess.states[hip_x][0] == pytest.approx(1.0 * 1.1396)


@pytest.mark.parametrize("walker, change, hessian, warm", [
    # the shipped walk's own speed and mesh: Newton's method from the walk and the multipliers shipped with it
    (wk.GAIT2D, {}, "exact", True),
    (wk.GAIT2D, {"warm_start": "no"}, "exact", False),                # the walk alone, within the Newton radius
    (wk.GAIT2D, {"speed": 1.325 + 0.14}, "exact", False),            # within 0.15 m/s of the warm start
    (wk.GAIT2D, {"mesh_intervals": 30}, "exact", False),             # no multipliers shipped for this mesh
    (wk.GAIT2D, {"speed": 1.0}, "limited-memory", False),            # a far jump: the quasi-Newton method
    (wk.GAIT2D, {"speed": 1.6}, "limited-memory", False),
    (wk.WALKING_2D, {}, "exact", True),              # its shipped walk and multipliers, too
    (wk.WALKING_2D, {"warm_start": "no"}, "limited-memory", False),   # newton_radius 0: limited-memory from a guess
    # newton_radius 0 means never, even at exactly the guess' own speed (the shipped gait2d walk: 1.325 m/s to the
    # last bit; a distance of 0 <= 0 once selected Newton's method by accident)
    (dataclasses.replace(wk.GAIT2D, newton_radius=0.0), {"warm_start": "no"}, "limited-memory", False),
])
def test_second_derivatives_near_the_warm_start_only(walker, change, hessian, warm):
    settings = {**demos.default_settings(walker.key), **change}
    study = demos.apply_settings(wk.build_walk(walker, settings), settings)
    assert study.solver.optim_hessian_approximation == hessian
    assert study.solver.optim_warm_start is warm
    assert (study.solver.guess_duals is not None) is warm
    if hessian == "exact":
        assert (study.solver.optim_solver, study.solver.optim_linear_solver) == ("ipopt", "mumps")


@pytest.mark.parametrize("walker, n, problem, script, nit", [
    (wk.GAIT2D, 25, "gait2d_prediction_study(25) as the gait2d walking dashboard poses its first solve",
     "gait2d_warm_starts", None),
    (wk.GAIT2D, 50, "gait2d_prediction_study(50) as the gait2d walking dashboard poses its first solve",
     "gait2d_warm_starts", 1),
    (wk.WALKING_2D, 15, "num_mesh_intervals=15) as the walking dashboard poses its first solve",
     "walking_2d_warm_starts", None),
    (wk.WALKING_2D, 50, "num_mesh_intervals=50) as the walking dashboard poses its first solve",
     "walking_2d_warm_starts", 1),
])
def test_the_shipped_walks_carry_multipliers_that_fit_the_dashboards_program(walker, n, problem, script, nit):
    """Each shipped walk comes with the optimizer's multipliers at it, made by the dashboard's own first solve
    (benchmarks/shipped_multipliers.py; those on 50 intervals and the 2-D walker's on 15 continued to tolerance
    1e-6): the dashboard's first solve continues from them (Newton's method) instead of restarting IPOPT from the
    motion alone — measured on 2026-11-30: gait2d N = 50 1 iteration instead of 175, N = 25 16 instead of 31; the
    2-D walker 1 instead of 40 and 46. The multipliers fit one program structure only; this test fails when the
    transcription changes and says how to make them again. On the learner's mesh (50) it solves: a handful of
    iterations, to the walk's own objective (to 1e-6, the tolerance it was solved to). The test suite's meshes are
    solved by the panel test below."""
    duals, made_with = wk.shipped_duals(walker, n)
    assert duals is not None, f"no multipliers shipped beside {walker.shipped[n].name}"
    assert made_with == {**demos.default_settings(walker.key), "mesh_intervals": n}
    walk = read_trajectory(walker.shipped[n])
    assert problem in walk.metadata["problem"]
    if nit is None:
        return
    settings = dict(made_with)
    study = demos.apply_settings(wk.build_walk(walker, settings), settings)
    assert study.solver.optim_warm_start and study.solver.guess_duals.structure == duals.structure
    sol = study.solve()
    assert "warm start: the guess's multipliers" in sol.message, (
        f"{sol.message} -- the shipped multipliers no longer fit the dashboard's program: run "
        f"`python -m benchmarks.{script} --refine`")
    assert sol.success and sol.nit <= nit + 7, (sol.nit, sol.message)   # measured: nit
    assert sol.objective == pytest.approx(walk.metadata["objective"], rel=1e-6)


@pytest.mark.parametrize("walker", [wk.GAIT2D, wk.WALKING_2D])
def test_a_kept_solution_is_continued_from_its_multipliers_at_the_same_speed_only(walker):
    """A kept solution's multipliers (Solution.duals) go with it into the next solve (optim_warm_start, Newton's
    method) when only strengths or goals change, or the speed by at most the walker's ``warm_speed_change`` (the
    2-D walker: 0.4 m/s; gait2d: 0); a bigger change of speed, another mesh, scheme or ``warm_start = no`` starts
    from a guess as before. (Whether the multipliers fit the program is the IPOPT driver's check,
    tests/test_ipopt_mumps.)"""
    settings = demos.default_settings(walker.key)
    n = settings["mesh_intervals"]
    duals = Duals([0.0], [0.0], [0.0], "a program's digest")
    kept = ml.Solution(wk.shipped_walk(walker, n), success=True, status="Solve_Succeeded", message="", objective=0.0,
                       goal_values={}, nit=1, solve_time=0.0, duals=duals)
    wk.keep_for_warm_start(walker, kept, settings)
    effort = settings["goals"]["effort"]
    for change, warm in (({}, True), ({"strength_soleus": 50.0}, True),
                         ({"goals": {**settings["goals"], "effort": {**effort, "weight": 2 * effort["weight"]}}}, True),
                         ({"speed": settings["speed"] + 0.3}, False),      # the fast mesh: see below
                         ({"speed": settings["speed"] + 1e-12}, True),     # no change
                         ({"speed": settings["speed"] + 0.45}, False), ({"mesh_intervals": n + 2}, False),
                         ({"scheme": "trapezoidal" if settings["scheme"] != "trapezoidal" else "hermite-simpson"}, False),
                         ({"warm_start": "no"}, False)):
        s = {**settings, **change}
        solver = demos.apply_settings(wk.build_walk(walker, s), s).solver
        assert solver.optim_warm_start is warm and (solver.guess_duals is duals) is warm, change
        if warm:
            assert solver.optim_hessian_approximation == "exact" and solver.optim_linear_solver == "mumps"
    failed = ml.Solution(wk.shipped_walk(walker, n), success=False, status="Maximum_Iterations_Exceeded", message="",
                         objective=0.0, goal_values={}, nit=1, solve_time=0.0, duals=Duals([1.0], [0.0], [0.0], "x"))
    wk.keep_for_warm_start(walker, failed, {**settings, "speed": 1.0})   # not kept: the last good one stays
    assert wk.build_walk(walker, settings).solver.guess_duals is duals
    # a change of speed is continued only on meshes of warm_speed_mesh intervals or more (above: the fast mesh)
    assert walker is wk.GAIT2D or n < walker.warm_speed_mesh == 25
    fine = {**settings, "mesh_intervals": 50}
    wk.keep_for_warm_start(walker, kept, fine)
    for change, warm in (({}, True), ({"speed": settings["speed"] + 0.3}, walker is wk.WALKING_2D),
                         ({"speed": settings["speed"] + 0.45}, False)):
        s = {**fine, **change}
        assert demos.apply_settings(wk.build_walk(walker, s), s).solver.optim_warm_start is warm, change


def test_a_continuation_that_stops_is_solved_again_from_the_motion(monkeypatch):
    """solve_walk gives a continuation from multipliers WARM_ITERATION_CAP iterations; if it stops there, the same
    problem is solved again from the motion alone with the limited-memory Hessian and the message says so. On the
    sliding mass (it needs no walker: only the study's settings matter), 25 % heavier than the solution it continues
    from: 3 iterations warm (tests/test_ipopt_mumps.py); allowed two, it stops and the second solve still reaches
    the closed-form minimum time."""
    from analytic import sliding_mass_min_time

    def heavier(first):
        study = ml.examples.sliding_mass_study(2.5, "hermite-simpson", "explicit", 50)
        study.solver.set_hessian_approximation("exact")
        study.solver.guess, study.solver.optim_warm_start, study.solver.optim_max_iterations = first, True, 500
        return study

    start = ml.examples.sliding_mass_study(2.0, "hermite-simpson", "explicit", 50)
    start.solver.set_hessian_approximation("exact")
    first = start.solve()
    warm = wk.solve_walk(wk.WALKING_2D, heavier(first))
    assert warm.success and "warm start: the guess's multipliers" in warm.message and warm.nit <= 5, warm.message
    monkeypatch.setattr(wk, "WARM_ITERATION_CAP", 2)
    study = heavier(first)
    again = wk.solve_walk(wk.WALKING_2D, study)
    assert again.success, again.message
    assert ("solved again from the motion alone with the limited-memory Hessian after the continuation from the last "
            "solution's multipliers stopped (Maximum_Iterations_Exceeded, 2 iterations") in again.message
    assert "warm start: the guess's multipliers" not in again.message and again.nit > 2
    assert study.solver.optim_hessian_approximation == "limited-memory" and not study.solver.optim_warm_start
    assert study.solver.optim_max_iterations == 500   # the user's limit back for the second solve
    assert again.final_time == pytest.approx(sliding_mass_min_time(2.5), rel=1e-3)


def test_walking_2d_settings_build_the_named_problem():
    settings = demos.default_settings("walking_2d")
    assert settings["goals"]["effort"] == {"weight": 10.0, "exponent": 3.0}
    assert settings["mode"] == "explicit" and settings["scheme"] == "hermite-simpson"
    assert settings["mesh_intervals"] == 15 and settings["tolerance"] == 1e-4
    settings.update(speed=1.5, strength_soleus=50.0, warm_start="no")
    study = demos.apply_settings(wk.build_walk(wk.WALKING_2D, settings), settings)
    model = study.problem.model
    normal = ml.examples.walking_2d_model()
    for side in "rl":
        assert max_force(model, f"/soleus_{side}") == pytest.approx(0.5 * max_force(normal, f"/soleus_{side}"))
        assert max_force(model, f"/vasti_{side}") == max_force(normal, f"/vasti_{side}")
    assert study.problem.get_goal("speed").desired_average_speed == 1.5
    tx = model.coordinate("pelvis_tx").value_path
    guess = study.solver.guess
    assert (guess.states[tx][-1] - guess.states[tx][0]) / guess.final_time == pytest.approx(1.5, rel=1e-9)


@pytest.mark.parametrize("key, change, culprit", [
    ("gait2d_walking", {"speed": 5.0}, r"walking speed must be within \[0.3, 2.5\] m/s, got 5"),
    ("gait2d_walking", {"speed": "fast"}, "walking speed must be a number"),
    ("gait2d_walking", {"strength_soleus": 0.0}, "strength of soleus"),
    ("gait2d_walking", {"strength_vasti": -20.0}, "strength of vasti"),
    ("gait2d_walking", {"strength_glut_max": 50.0}, "no muscle group 'glut_max'"),  # a group of the other walker
    ("walking_2d", {"speed": 3.0}, r"walking speed must be within \[0.5, 2\] m/s"),
    ("walking_2d", {"strength_soleus": 301.0}, r"strength of soleus must be within \(0, 300\]"),
    ("walking_2d", {"strength_tib_ant": None}, "strength of tib_ant must be a number"),
    ("walking_2d", {"strength_deltoid": 80.0}, "no muscle group 'deltoid'"),
])
def test_bad_settings_name_the_culprit(key, change, culprit):
    settings = {**demos.default_settings(key), **change}
    with pytest.raises(ValueError, match=culprit):
        wk.build_walk(wk.WALKERS[key], settings)


# ---------------------------------------------------------------------------------------------- the panel
def test_panel_predicts_weakens_and_switches_walkers():
    """The dashboard as the notebook builds it opens with gait2d's converged prediction (from the shipped warm
    start); plantarflexors at 70 % re-predict from it: the effort and the peak soleus activation rise (lesson 10
    finds the same) and the previous walk stays in the Winter figure; a bad speed is reported in the panel instead
    of raised. Switching to Moco's 2-D walker predicts it at once (from its own shipped walk, not from gait2d's
    solution); its soleus at 50 % makes the gastrocnemius work harder. Each walker keeps its own warm start."""
    p = SolvePanel(["gait2d_walking", "walking_2d"])
    first = p.solution
    assert first.success, first.message
    # from the shipped walk and its multipliers (if this fails, run `python -m benchmarks.gait2d_warm_starts --refine`)
    assert "warm start: the guess's multipliers" in first.message
    assert p.mesh_intervals.value == 25 and set(p.goal_widgets) == {"angles", "effort"}
    assert {"motion", "winter"} <= set(p.figures)
    assert len(p.figures["trajectories"].layout.annotations) == 8  # the right leg's activations
    assert all(k in p.numbers.value for k in ("stance r / l", "double support", "flight", "peak soleus_r",
                                               "peak gastrocnemius_r"))
    names = {t.name for t in p.figures["winter"].data}
    assert {"Winter mean", "Winter ± 1 SD", "solution"} <= names and "previous" not in names

    for muscle in ("soleus", "gastrocnemius"):
        p.option_widgets[f"strength_{muscle}"].value = 70.0
    second = p.solve()
    assert second is not None and second.success, p.message.value
    assert "warm start: the guess's multipliers" in second.message  # the same speed and mesh: continued
    assert second.goal_values["effort"] > first.goal_values["effort"]
    peak = [s.states["/forceset/soleus_r/activation"].max() for s in (first, second)]
    assert peak[1] > peak[0] + 0.02, peak  # the calf is activated harder (lesson 10)
    assert "previous" in {t.name for t in p.figures["winter"].data}

    p.option_widgets["speed"].value = 5.0
    assert p.solve() is None and "walking speed" in p.message.value and p.solution is second

    p.problem_select.value = "walking_2d"  # solves at once
    third = p.solution
    assert third is not None and third.success, p.message.value
    assert "warm start: the guess's multipliers" in third.message   # its shipped walk and multipliers
    assert p.mesh_intervals.value == 15 and set(p.goal_widgets) == {"effort"}
    assert {"motion", "data"} <= set(p.figures) and "winter" not in p.figures
    assert len(p.figures["trajectories"].layout.annotations) == 9
    assert all(k in p.numbers.value for k in ("step", "double support", "peak vertical GRF", "peak soleus_r"))
    assert "previous" not in {t.name for t in p.figures["data"].data}
    p.option_widgets["strength_soleus"].value = 50.0
    fourth = p.solve()
    assert fourth is not None and fourth.success, p.message.value
    assert "warm start: the guess's multipliers" in fourth.message
    gastroc = [float(np.max(s.states["/gastroc_r/activation"])) for s in (third, fourth)]
    print("peak gastrocnemius activation, normal and weak soleus:", gastroc)
    assert gastroc[1] > gastroc[0]
    assert "previous" in {t.name for t in p.figures["data"].data}

    # gait2d's next solve would start from its own last solution, stretched to the speed asked for
    settings = {**demos.default_settings("gait2d_walking"), "speed": 1.325}
    guess = wk.build_walk(wk.GAIT2D, settings).solver.guess
    knee = gait2d().coordinate("knee_angle_r").value_path
    assert knee in guess.states and np.allclose(guess.states[knee], second.states[knee])
