"""Tests of ``moco_lab.demos``: the demo-problem registry, its settings and references. No solves."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab import demos

J_KIRK = 16.7507233968


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("MOCO_LAB_FAST", "1")


def test_registry():
    assert {"linear", "sliding_mass", "double_pendulum"} <= set(demos.DEMO_PROBLEMS)
    with pytest.raises(KeyError, match="Unknown demo problem"):
        demos.get_demo_problem("nope")
    with pytest.raises(TypeError):
        demos.get_demo_problem(3)

    def my_problem(settings):
        """Pose my problem."""
        return ml.examples.linear_study()

    demo = demos.get_demo_problem(my_problem)
    assert (demo.key, demo.title, demo.description) == ("my_problem", "my problem", "Pose my problem.")
    assert demos.get_demo_problem(demo) is demo


def test_builders_start_from_the_examples():
    """A demo problem with its default settings is the library's study (plus switched-off extras)."""
    for key, study in (("linear", ml.examples.linear_study()),
                       ("sliding_mass", ml.examples.sliding_mass_study()),
                       ("double_pendulum", ml.examples.double_pendulum_study())):
        built = demos.get_demo_problem(key).build(demos.default_settings(key))
        assert built.problem.state_names() == study.problem.state_names()
        for name in study.problem.state_names():
            assert built.problem.state_info(name) == study.problem.state_info(name)
        for name in study.problem.control_names():
            assert built.problem.control_info(name) == study.problem.control_info(name)
        goals = {g.name: g.weight for g in built.problem.goals}
        assert {g.name: g.weight for g in study.problem.goals}.items() <= goals.items()
        assert built.problem.time_final == study.problem.time_final
    # The problem options reach the builders.
    s = demos.default_settings("sliding_mass")
    built = demos.get_demo_problem("sliding_mass").build({**s, "tf_max": 3.0})
    assert built.problem.time_final.as_list() == [0.0, 3.0]
    built = demos.get_demo_problem("double_pendulum").build({"duration": 2.0})
    assert built.problem.time_final.as_list() == [2.0, 2.0]


def test_default_settings_lists_the_goals():
    s = demos.default_settings("linear")
    assert s["goals"] == {"effort": {"weight": 0.5, "exponent": 2.0}}
    assert s["mesh_intervals"] == 10  # fast mode
    assert s["variant"] == "kirk"
    s = demos.default_settings("sliding_mass")
    assert list(s["goals"]) == ["time", "effort"]
    assert s["goals"]["effort"]["weight"] == 0.0
    assert demos.base_settings("sliding_mass") == {**s, "goals": {}}


def test_references_only_where_they_apply():
    s = demos.default_settings("linear")
    ref = demos.linear_reference(s)
    assert ref.objective == pytest.approx(J_KIRK, abs=1e-9)
    assert demos.linear_reference({**s, "goals": {"effort": {"weight": 0.5, "exponent": 4}}}) is None
    assert demos.linear_reference({**s, "goals": {"effort": {"weight": 1.0, "exponent": 2}}}).objective == \
        pytest.approx(2 * J_KIRK, abs=1e-9)

    s = demos.default_settings("sliding_mass")
    ref = demos.sliding_mass_reference(s)
    assert ref.final_time == pytest.approx(0.4) and ref.objective == pytest.approx(0.4)
    traj = ref.trajectory(401)
    assert traj.states["/slider/position/value"][-1] == pytest.approx(1.0)
    assert traj.controls["/actuator"][0] == 50.0
    assert demos.sliding_mass_reference({**s, "mass": 8.0}).final_time == pytest.approx(0.8)
    assert demos.sliding_mass_reference({**s, "tf_max": 0.3}) is None
    assert demos.sliding_mass_reference({**s, "goals": {"time": {"weight": 1.0},
                                                        "effort": {"weight": 0.1, "exponent": 2}}}) is None
    assert demos.get_demo_problem("double_pendulum").reference is None


def test_apply_settings_and_its_errors():
    s = demos.default_settings("linear")
    s.update(scheme="trapezoidal", mode="implicit", mesh_intervals=12, tolerance=1e-6, max_iterations=50)
    s["goals"]["effort"].update(weight=2.0, exponent=4)
    build = demos.get_demo_problem("linear").build
    study = demos.apply_settings(build(s), s)
    assert study.solver.transcription_scheme == "trapezoidal"
    assert study.solver.multibody_dynamics_mode == "implicit"
    assert study.solver.num_mesh_intervals == 12
    assert study.solver.optim_convergence_tolerance == 1e-6 == study.solver.optim_constraint_tolerance
    assert study.solver.optim_max_iterations == 50
    goal = study.problem.get_goal("effort")
    assert (goal.weight, goal.exponent) == (2.0, 4.0)

    with pytest.raises(ValueError, match="exponent must be >= 2"):
        demos.apply_settings(build(s), {"goals": {"effort": {"exponent": 1.5}}})
    with pytest.raises(ValueError, match="finite"):
        demos.apply_settings(build(s), {"goals": {"effort": {"weight": float("nan")}}})
    with pytest.raises(KeyError):
        demos.apply_settings(build(s), {"goals": {"efort": {"weight": 1}}})
    with pytest.raises(ValueError, match="transcription_scheme"):
        demos.apply_settings(build(s), {"scheme": "euler"})
    assert demos.apply_settings(build(s), {"mesh_intervals": 8.0}).solver.num_mesh_intervals == 8  # FloatText


def test_suspended_mass_tasks():
    """predict poses the paper's prediction; track poses Track on a given motion (no solve here)."""
    demo = demos.get_demo_problem("suspended_mass")
    s = demos.default_settings("suspended_mass")
    assert s["task"] == "predict" and s["mode"] == "explicit" and list(s["goals"]) == ["effort", "time"]
    (task,) = demo.options
    assert task.choices == ("predict", "track") and task.rebuild
    assert task.presets["track"] == {"mode": "implicit"} and task.presets["predict"] == {"mode": "explicit"}
    assert demo.extra_figures is not None and demo.extra_numbers is not None
    assert set(demo.weight_sliders) == {"state_tracking"}
    with pytest.raises(ValueError, match="task must be one of"):
        demo.build({**s, "task": "trak"})

    # A made-up motion to track (a straight line in 0.4 s), to check how the tracking study is posed.
    t = np.linspace(0, 0.4, 9)
    motion = ml.Trajectory(t, states={"/jointset/tx/tx/value": np.linspace(-0.14, 0.14, 9),
                                      "/jointset/ty/ty/value": np.linspace(-0.2, -0.15, 9),
                                      "/jointset/tx/tx/speed": np.full(9, 0.7),
                                      "/jointset/ty/ty/speed": np.full(9, 0.125),
                                      "/forceset/middle/activation": np.full(9, 0.5)})
    settings = {**s, "task": "track", "mesh_intervals": 8, "tracking_weight": 25.0}
    study = demos.suspended_mass_tracking_study(settings, prediction=motion)
    goals = {g.name: g for g in study.problem.goals}
    assert set(goals) == {"state_tracking", "control_effort"}
    assert goals["state_tracking"].weight == 25.0 and goals["state_tracking"].pattern == r".*(value|speed)$"
    assert (goals["control_effort"].weight, goals["control_effort"].exponent) == (0.001, 2.0)
    assert study.problem.time_final.as_list() == [0.4, 0.4]
    assert study.solver.num_mesh_intervals == 8
    assert study.solver.optim_convergence_tolerance is None  # IPOPT defaults, as the paper
    tx = study.problem.state_info("/jointset/tx/tx/value")
    assert tx.initial.as_list() == [-0.14, -0.14] and tx.final is None  # final value free
    # The panel's goal settings then apply to the tracking goals.
    track_settings = {**settings, "goals": {"state_tracking": {"weight": 100.0},
                                            "control_effort": {"weight": 0.001, "exponent": 4}}}
    study = demos.apply_settings(study, track_settings)
    assert study.problem.get_goal("control_effort").exponent == 4.0
    assert study.problem.get_goal("state_tracking").weight == 100.0
    # The prediction's goals do not exist in the tracking study: a clear KeyError, not a silent skip.
    with pytest.raises(KeyError):
        demos.apply_settings(demos.suspended_mass_tracking_study(settings, prediction=motion),
                             {"goals": {"time": {"weight": 0.01}}})
