"""Prescribed kinematics (MocoInverse): analytic inverse dynamics, muscle redundancy, reserves, errors."""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.tools.inverse import Inverse, add_reserves, reserve_path
from moco_lab.tools.simulate import simulate

MASS = 2.0


def _polynomial_motion(n=41):
    """x(t) = t^3 - t^4 / 2 on [0, 1]: a quartic, represented exactly by the quintic spline."""
    t = np.linspace(0.0, 1.0, n)
    return t, {"/slider/position/value": t ** 3 - 0.5 * t ** 4}


def _xdd(t):
    return 6 * t - 6 * t ** 2


@pytest.mark.parametrize("scheme", ["hermite-simpson", "trapezoidal"])
def test_sliding_mass_force_is_mass_times_acceleration(scheme):
    inv = Inverse(ml.models.sliding_mass(mass=MASS), _polynomial_motion(), mesh_interval=0.05,
                  transcription_scheme=scheme, spline_boundary="not-a-knot")
    result = inv.solve()
    s = result.solution
    assert s.success, s.message
    assert inv.num_mesh_intervals == 20
    # the only variables are the actuator control (and t0, tf, fixed); the prescribed q, u are inserted
    ip = inv.transcribe()
    assert ip.prog.num_vars() == ip.grid.num_points * 1 + 2
    np.testing.assert_allclose(s.controls["/actuator"], MASS * _xdd(s.time), atol=1e-8)
    np.testing.assert_allclose(s.states["/slider/position/speed"], 3 * s.time ** 2 - 2 * s.time ** 3, atol=1e-10)
    np.testing.assert_allclose(s.derivatives["/slider/position/accel"], _xdd(s.time), atol=1e-8)
    # objective: ∫ (m ẍ)² dt = 4 * 36 / 30 = 4.8; Simpson integrates the quartic with O(h^4) error
    exact = MASS ** 2 * 36 / 30
    tol = 1e-4 if scheme == "hermite-simpson" else 2e-2
    assert s.objective == pytest.approx(exact, rel=tol)
    assert s.goal_values["excitation_effort"] == pytest.approx(s.objective, rel=1e-10)
    assert result.reserve_summary() == "no reserve actuators"


@pytest.mark.parametrize("weight, share", [(1.0, 0.5), (4.0, 0.2)])
def test_reserves_share_the_force_as_the_effort_goal_dictates(weight, share):
    """Actuator and reserve (both optimal force 1): min x_a² + w x_r², x_a + x_r = F  ->  x_r = F / (1 + w)."""
    inv = Inverse(ml.models.sliding_mass(mass=MASS), _polynomial_motion(), mesh_interval=0.05,
                  reserves_optimal_force=1.0, reserves_weight=weight, spline_boundary="not-a-knot",
                  convergence_tolerance=1e-8,
                  constraint_tolerance=1e-10)
    result = inv.solve()
    assert result.success
    path = reserve_path("/slider/position")
    assert path == "/forceset/reserve_slider_position"
    need = result.net_generalized_forces["position"]
    np.testing.assert_allclose(need, MASS * _xdd(result.solution.time), atol=1e-7)
    np.testing.assert_allclose(result.reserve_forces[path], need / (1 + weight), atol=1e-6)
    (row,) = result.reserve_report()
    assert row.coordinate == "position"
    assert row.share == pytest.approx(share, rel=1e-6)
    assert row.peak == pytest.approx(np.max(np.abs(need)) / (1 + weight), rel=1e-6)
    assert f"{100 * share:.2f}%" in result.reserve_summary()


def test_effort_exponent_shares_the_force_by_its_power():
    """Exponent p: min |x_a|^p + w |x_r|^p with x_a + x_r = F  ->  |x_a|^(p-1) = w |x_r|^(p-1), x_r = F / (1 + w^(1/(p-1))):
    with p = 3 and w = 4 the reserve carries a third (with p = 2 it would carry a fifth)."""
    inv = Inverse(ml.models.sliding_mass(mass=MASS), _polynomial_motion(), mesh_interval=0.05,
                  reserves_optimal_force=1.0, reserves_weight=4.0, effort_exponent=3, spline_boundary="not-a-knot",
                  convergence_tolerance=1e-8, constraint_tolerance=1e-10)
    assert inv.problem().goals[0].exponent == 3.0
    result = inv.solve()
    assert result.success
    need = result.net_generalized_forces["position"]
    np.testing.assert_allclose(result.reserve_forces[reserve_path("/slider/position")], need / 3, atol=1e-6)
    with pytest.raises(ValueError, match="effort_exponent"):
        Inverse(ml.models.sliding_mass(), _polynomial_motion(), effort_exponent=1.5)


def _driven_suspended_mass():
    """The suspended mass moved by known, smooth excitations (time-stepped by Drake's Simulator)."""
    model = ml.models.suspended_mass()
    t = np.linspace(0.0, 0.5, 501)
    exc = {"/forceset/left": 0.3 + 0.2 * np.sin(4 * np.pi * t), "/forceset/middle": 0.5 + 0 * t,
           "/forceset/right": 0.3 + 0.2 * np.cos(4 * np.pi * t)}
    states = {"/jointset/tx/tx/value": 0 * t, "/jointset/ty/ty/value": -0.15 + 0 * t,
              "/jointset/tx/tx/speed": 0 * t, "/jointset/ty/ty/speed": 0 * t}
    states.update({f"{n}/activation": np.full_like(t, v[0]) for n, v in exc.items()})
    motion = simulate(model, ml.Trajectory(t, states, exc))
    effort = float(np.trapezoid(sum(v ** 2 for v in exc.values()), t))
    return model, motion, effort


@pytest.mark.parametrize("scheme", ["hermite-simpson", "trapezoidal"])
def test_suspended_mass_inverse_reproduces_the_motion(scheme):
    """Muscle redundancy: 3 muscles, 2 coordinates. The excitations that made the motion are feasible,
    so the inverse's minimal effort is no larger; time-stepping its excitations reproduces the motion."""
    model, motion, known_effort = _driven_suspended_mass()
    inv = Inverse(model, motion, mesh_interval=0.01, transcription_scheme=scheme,
                  convergence_tolerance=1e-6, constraint_tolerance=1e-8)
    result = inv.solve()
    s = result.solution
    assert s.success, s.message
    assert s.objective <= known_effort + 1e-6
    assert s.objective > 0.8 * known_effort  # the motion needs real muscle work
    for name in model.control_names():  # Moco's initial_activation: a(t0) = e(t0)
        assert s.states[f"{name}/activation"][0] == pytest.approx(s.controls[name][0], abs=1e-7)
    back = simulate(model, s)
    for c in ("/jointset/tx/tx/value", "/jointset/ty/ty/value"):
        err = np.max(np.abs(back.states[c] - s.states[c]))
        span = np.ptp(s.states[c])
        assert err < 0.02 * span, (c, err, span)  # open-loop drift of a time-stepped replay


def test_inverse_errors_are_clear():
    model = ml.models.sliding_mass()
    t, cols = _polynomial_motion()
    with pytest.raises(KeyError, match="lack coordinate"):
        Inverse(model, (t, {"/slider/positon/value": cols["/slider/position/value"]}))
    with pytest.raises(ValueError, match="not states of the model"):
        Inverse(model, (t, {**cols, "/other/value": t}))
    Inverse(model, (t, {**cols, "/other/value": t}), kinematics_allow_extra_columns=True)
    with pytest.raises(ValueError, match="inside the kinematics"):
        Inverse(model, (t, cols), final_time=2.0)
    with pytest.raises(ValueError, match="inside the kinematics"):
        Inverse(model, (t, cols), initial_time=0.5, final_time=0.4)
    with pytest.raises(ValueError, match="at least 4"):
        Inverse(model, (t[:3], {k: v[:3] for k, v in cols.items()}))
    with pytest.raises(ValueError, match="strictly increasing"):
        Inverse(model, (t[::-1], cols))
    with pytest.raises(ValueError, match="mesh_interval"):
        Inverse(model, (t, cols), mesh_interval=0)
    with pytest.raises(ValueError, match="spline_boundary"):
        Inverse(model, (t, cols), spline_boundary="clamped")
    with pytest.raises(ValueError, match="transcription_scheme must be one of"):
        Inverse(model, (t, cols), transcription_scheme="euler")
    with pytest.raises(ValueError, match="positive"):
        add_reserves(model, 0.0)
    with pytest.raises(KeyError, match="coordinate"):
        add_reserves(model, 1.0, coordinates=["postion"])
    with pytest.raises(ValueError, match="already has"):
        add_reserves(add_reserves(model, 1.0), 1.0)


def test_natural_spline_end_effect_is_confined_to_the_ends():
    """Moco's natural quintic spline bends the accelerations of a quartic near the ends only."""
    t, cols = _polynomial_motion(81)
    inv = Inverse(ml.models.sliding_mass(mass=MASS), (t, cols))
    tt = np.linspace(0, 1, 401)
    err = np.abs(inv.kinematics_on(tt)[2][:, 0] - _xdd(tt))
    assert err[tt < 0.05].max() > 1e-3  # the end effect is real ...
    inner = (tt > 0.15) & (tt < 0.85)
    assert err[inner].max() < 1e-3 * err.max()  # ... and decays fast away from the ends


def test_add_reserves_leaves_the_model_alone():
    model = ml.models.double_pendulum()
    withres = add_reserves(model, 5.0, coordinates=["q0"]) if "q0" in [c.name for c in model.coordinates] \
        else add_reserves(model, 5.0, coordinates=[model.coordinates[0].name])
    assert len(withres.actuators) == len(model.actuators) + 1
    assert withres.control_names()[-1] == reserve_path(model.coordinates[0].path)
    assert withres.actuators[-1].optimal_force == 5.0
    assert model.control_names() == ["/tau0", "/tau1"]
    assert withres.plant is model.plant


def test_failed_inverse_is_sealed():
    """A motion the actuator cannot produce (control bounded) fails and is sealed, never silently wrong."""
    model = ml.models.sliding_mass(mass=MASS)
    model.actuators[0].max_control = 1.0
    model.actuators[0].min_control = -1.0
    result = Inverse(model, _polynomial_motion(), mesh_interval=0.1, max_iterations=200).solve()
    assert not result.success
    with pytest.raises(RuntimeError, match="sealed"):
        result.solution.controls


def test_track_and_inverse_round_the_mesh_as_moco_does():
    """MocoTool::updateTimeInfo, shared by MocoTrack and MocoInverse: N = ceil(duration / mesh_interval) in
    floating point. 0.9 s at 0.03 s is 30.000000000000004 intervals in doubles, so Moco takes 31 — and so do both
    tools here (Inverse used to subtract 1e-9 first and take 30); the number is kept once, in the settings."""
    from moco_lab.tools import Track

    assert 0.9 / 0.03 > 30
    t = np.linspace(0, 0.9, 31)
    reference = (t, {"/slider/position/value": t ** 2})
    inverse = Inverse(ml.models.sliding_mass(), reference, mesh_interval=0.03)
    track = Track(ml.models.sliding_mass(), reference, mesh_interval=0.03)
    assert inverse.num_mesh_intervals == track.num_mesh_intervals == 31 == inverse.settings.num_mesh_intervals
    assert track.initialize().solver.num_mesh_intervals == 31
    inverse.settings.num_mesh_intervals = 40   # one place to change it
    assert inverse.num_mesh_intervals == 40


def test_inverse_add_goal():
    """Goals added to an Inverse join Moco's own (as on MocoInverse.initialize()'s problem); names stay unique."""
    import moco_lab as ml

    model, motion, _ = _driven_suspended_mass()
    inv = Inverse(model, motion, mesh_interval=0.05)
    t = motion.time
    goal = inv.add_goal(ml.ControlTrackingGoal("emg", 2.0, reference=(t, {"envelope": 0.3 + 0 * t}),
                                               reference_labels={model.control_names()[0]: "envelope"}))
    assert [g.name for g in inv.problem().goals][-1] == "emg" and goal in inv.goals
    with pytest.raises(ValueError, match="a goal named 'excitation_effort' is already in the problem"):
        inv.add_goal(ml.ControlGoal("excitation_effort"))
    with pytest.raises(TypeError, match="expected a moco_lab goal"):
        inv.add_goal("emg")
