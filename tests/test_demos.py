"""Tests of ``moco_lab.demos``: the demo-problem registry, its settings and references.

No solves, except the small (fast-mode) solves of the ``parabola`` problem at the end.
"""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.analysis import problems
from moco_lab.ui import demos

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

    with pytest.raises(ValueError, match="exponent must be a finite number >= 2"):
        demos.apply_settings(build(s), {"goals": {"effort": {"exponent": 1.5}}})
    with pytest.raises(ValueError, match="finite"):
        demos.apply_settings(build(s), {"goals": {"effort": {"weight": float("nan")}}})
    with pytest.raises(KeyError):
        demos.apply_settings(build(s), {"goals": {"efort": {"weight": 1}}})
    with pytest.raises(ValueError, match="transcription_scheme"):
        demos.apply_settings(build(s), {"scheme": "euler"})
    assert demos.apply_settings(build(s), {"mesh_intervals": 8.0}).solver.num_mesh_intervals == 8  # FloatText
    # the Hessian: exact takes IPOPT's MUMPS build; SNOPT cannot take one, and the error says which setting
    assert s["hessian"] is None and demos.apply_settings(build(s), s).solver.optim_hessian_approximation == \
        "limited-memory"  # None: the problem's own choice
    lm = demos.apply_settings(build(s), {"hessian": "limited-memory"}).solver
    assert (lm.optim_hessian_approximation, lm.optim_linear_solver) == ("limited-memory", "spral")
    exact = demos.apply_settings(build(s), {"hessian": "exact"}).solver
    assert (exact.optim_hessian_approximation, exact.optim_solver, exact.optim_linear_solver) == ("exact", "ipopt",
                                                                                                    "mumps")
    with pytest.raises(ValueError, match="optim_hessian_approximation='exact' needs IPOPT"):
        demos.apply_settings(build(s), {"hessian": "exact", "optimizer": "snopt"})
    with pytest.raises(ValueError, match=r"hessian must be one of \['limited-memory', 'exact'\] or None, got 'bfgs'"):
        demos.apply_settings(build(s), {"hessian": "bfgs"})


def test_suspended_mass_tasks():
    """predict poses the paper's prediction; track poses Track on a given motion (no solve here)."""
    demo = demos.get_demo_problem("suspended_mass")
    s = demos.default_settings("suspended_mass")
    assert s["task"] == "predict" and s["mode"] == "explicit" and list(s["goals"]) == ["effort", "time"]
    (task,) = demo.options
    assert task.choices == ("predict", "track") and task.rebuild
    assert task.presets["track"] == {"mode": "implicit", "hessian": "exact"}
    assert task.presets["predict"] == {"mode": "explicit", "hessian": None}
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
    study = demos.suspended_mass_tracking(settings, prediction=motion)
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
        demos.apply_settings(demos.suspended_mass_tracking(settings, prediction=motion),
                             {"goals": {"time": {"weight": 0.01}}})


# ------------------------------------------------------------------ parabola
TX, TY = "/jointset/tx/tx/value", "/jointset/ty/ty/value"


def _solve_parabola(**changes):
    settings = {**demos.default_settings("parabola"), **changes}
    demo = demos.get_demo_problem("parabola")
    study = demos.apply_settings(demo.build(settings), settings)
    solution = study.solve()
    assert solution.success, solution.message
    return demo, settings, study, solution


def test_parabola_problem_is_posed():
    demo = demos.get_demo_problem("parabola")
    s = demos.default_settings("parabola")
    assert s["motion"] == "move" and s["w_lambda"] == 0.0 and s["mesh_intervals"] == 10  # fast mode
    assert s["goals"] == {"effort": {"weight": 1.0, "exponent": 2.0}}
    motion, weight = demo.options
    assert motion.choices == ("move", "release") and motion.rebuild and not weight.rebuild
    assert demo.extra_figures is not None and demo.extra_numbers is not None
    study = demo.build(s)
    p = study.problem
    assert p.time_final.as_list() == [1.0, 1.0]
    assert p.state_info(TX).initial.as_list() == [-1.0, -1.0] and p.state_info(TX).final.as_list() == [0.5, 0.5]
    assert p.state_info(TY).final.as_list() == [0.25, 0.25]
    assert not study.solver.minimize_lagrange_multipliers
    assert p.model.multiplier_names() == [problems.PARABOLA_LAMBDA]
    study = demo.build({**s, "w_lambda": 0.01})
    assert study.solver.minimize_lagrange_multipliers and study.solver.lagrange_multiplier_weight == 0.01
    release = demo.build({**s, "motion": "release"})
    assert release.problem.control_names() == [] and demos.goal_settings(release) == {}
    assert release.problem.time_final.as_list() == [0.8, 0.8]
    with pytest.raises(ValueError, match="motion must be one of"):
        demo.build({**s, "motion": "fall"})
    with pytest.raises(ValueError, match="w_lambda"):
        demo.build({**s, "w_lambda": -1.0})


def test_parabola_constraint_errors_by_scheme():
    # A made-up Hermite–Simpson-like grid: mesh points on the curve, midpoints 1e-3 above.
    t = np.linspace(0, 1, 5)
    x = np.linspace(-1, 1, 5)
    y = x**2
    y[1::2] += 1e-3
    traj = ml.Trajectory(t, states={TX: x, TY: y, "/jointset/tx/tx/speed": np.ones(5),
                                    "/jointset/ty/ty/speed": 2 * x})
    hs = problems.parabola_constraint_errors(traj, "hermite-simpson")
    np.testing.assert_allclose(hs["mesh_time"], [0, 0.5, 1])
    np.testing.assert_allclose(hs["phi_mesh"], 0, atol=1e-15)
    np.testing.assert_allclose(hs["phid_mesh"], 0, atol=1e-15)  # ẏ = 2xẋ
    np.testing.assert_allclose(hs["phi_mid"], [1e-3, 1e-3])
    tr = problems.parabola_constraint_errors(traj, "trapezoidal")  # every point a mesh point
    assert tr["mesh_time"].size == 5 and tr["mid_time"].size == 4
    np.testing.assert_allclose(tr["mid_time"], [0.125, 0.375, 0.625, 0.875])
    y_chord = 0.5 * (y[1:] + y[:-1])
    np.testing.assert_allclose(tr["phi_mid"], y_chord - (0.5 * (x[1:] + x[:-1])) ** 2)
    with pytest.raises(ValueError, match="2N \\+ 1"):
        problems.parabola_constraint_errors(ml.Trajectory(t[:4], states={k: v[:4] for k, v in traj.states.items()}),
                                         "hermite-simpson")
    with pytest.raises(ValueError, match="scheme"):
        problems.parabola_constraint_errors(traj, "euler")


def test_parabola_demo_solves_with_figures_and_numbers():
    """Hermite–Simpson and trapezoidal solves (N = 10): arrows perpendicular to the curve, the numbers line."""
    demo, settings, study, hs = _solve_parabola()
    assert hs.states[TX][0] == pytest.approx(-1) and hs.states[TX][-1] == pytest.approx(0.5)
    x, lam = hs.states[TX], hs.multipliers[problems.PARABOLA_LAMBDA]
    assert np.all(lam < 0) and np.abs(lam).max() == pytest.approx(29.3, abs=0.5)
    assert problems.PARABOLA_GAMMA in hs.multipliers

    figures = demo.extra_figures(hs, None, settings)
    assert set(figures) == {"path", "constraint"}
    path = {t.name: t for t in figures["path"].data}
    assert list(path)[:3] == ["y = x²", "path", "constraint force −Gᵀλ"]
    assert list(path)[3] == "actuator force ×5"  # magnified: 5 N against the curve's 30 N
    np.testing.assert_allclose(path["path"].x, x)
    arrows = path["constraint force −Gᵀλ"]
    every = max(1, x.size // 40)
    shafts = [(arrows.x[k], arrows.y[k], arrows.x[k + 1], arrows.y[k + 1]) for k in range(0, len(arrows.x), 9)]
    assert len(shafts) == len(range(0, x.size, every))
    scale = figures["path"].layout.meta["arrow_scale"]
    for (x0, y0, x1, y1), k in zip(shafts, range(0, x.size, every)):
        assert (x0, y0) == pytest.approx((x[k], hs.states[TY][k]))
        dx, dy = x1 - x0, y1 - y0
        assert dx + 2 * x0 * dy == pytest.approx(0, abs=1e-12)  # ⟂ the tangent (1, 2x)
        assert np.hypot(dx, dy) == pytest.approx(scale * abs(lam[k]) * np.hypot(2 * x0, 1))
        assert dy > 0  # λ < 0: the curve pushes up
    constraint = {t.name: t for t in figures["constraint"].data}
    assert {"λ", "|φ| at mesh points", "|φ|, midpoint variables"} <= set(constraint)

    numbers = demo.extra_numbers(hs, settings)
    assert set(numbers) == {"max |φ| at mesh points", "max |φ̇| at mesh points", "max midpoint drift |φ|", "max |λ|"}
    err = problems.parabola_constraint_errors(hs, "hermite-simpson")
    drift_hs = np.abs(err["phi_mid"]).max()
    assert float(numbers["max |φ| at mesh points"]) < 1e-9 and float(numbers["max |φ̇| at mesh points"]) < 1e-9
    assert float(numbers["max midpoint drift |φ|"]) == pytest.approx(drift_hs, rel=0.05)
    assert numbers["max |λ|"] == f"{np.abs(lam).max():.3g} N"

    # Trapezoidal: φ only at mesh points, φ̇ ≠ 0, midpoints of the chords (Δx)²/4 above the curve.
    _, tsettings, _, tr = _solve_parabola(scheme="trapezoidal")
    err = problems.parabola_constraint_errors(tr, "trapezoidal")
    np.testing.assert_allclose(err["phi_mid"], np.diff(tr.states[TX]) ** 2 / 4, atol=1e-9)
    assert np.abs(err["phid_mesh"]).max() > 1e-2
    assert np.abs(err["phi_mid"]).max() > 10 * drift_hs
    assert "|φ|, linear interpolant at midpoints" in {t.name for t in demo.extra_figures(tr, hs, tsettings)["constraint"].data}
    assert "previous" in {t.name for t in demo.extra_figures(tr, hs, tsettings)["path"].data}

    # The penalty makes the actuators share the normal load: w / (|G|² + w) (trapezoidal, exact).
    _, _, _, pen = _solve_parabola(scheme="trapezoidal", w_lambda=0.1)
    x = pen.states[TX]
    G = np.stack([-2 * x, np.ones_like(x)])
    nG = np.hypot(*G)
    f_n = (G[0] * pen.controls["/forceset/force_x"] + G[1] * pen.controls["/forceset/force_y"]) / nG
    share = f_n / (f_n - pen.multipliers[problems.PARABOLA_LAMBDA] * nG)
    np.testing.assert_allclose(share, 0.1 / (nG**2 + 0.1), atol=1e-6)
    assert pen.goal_values["effort"] > tr.goal_values["effort"] + 0.5


def test_parabola_release_demo():
    demo, settings, _, sol = _solve_parabola(motion="release", goals={})
    x, lam = sol.states[TX], sol.multipliers[problems.PARABOLA_LAMBDA]
    assert sol.objective == 0 and x[-1] > 0.3
    # λ(x) = −5 m g / (1 + 4x²)², derived in lesson 04 (coarse mesh, mesh points)
    np.testing.assert_allclose(lam[::2], -5 * 9.80665 / (1 + 4 * x[::2] ** 2) ** 2, atol=0.1)
    figures = demo.extra_figures(sol, None, settings)
    assert [t.name for t in figures["path"].data] == ["y = x²", "path", "constraint force −Gᵀλ"]
    assert "release" in figures["path"].layout.title.text
