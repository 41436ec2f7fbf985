"""Goals and path constraints, each checked with a real solve."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml

POS, SPD, ACT = "/slider/position/value", "/slider/position/speed", "/actuator"


def effort_study(N=20, scheme="hermite-simpson"):
    """Sliding mass 0 -> 1 m in 1 s, rest to rest, minimum effort: x(t) = m (6 - 12 t) for m = 2."""
    study = ml.examples.sliding_mass_study(2.0, scheme, "explicit", N)
    p = study.problem
    p.set_time_bounds(0, 1)
    p.remove_goal("time")
    p.add_goal(ml.ControlGoal("effort"))
    return study


def test_effort_goal_value_matches_the_analytic_optimum():
    sol = effort_study().solve()
    t = sol.time
    np.testing.assert_allclose(sol.controls[ACT], 2.0 * (6 - 12 * t), atol=1e-5)
    assert sol.objective == pytest.approx(48.0, rel=1e-8)  # ∫ (12 - 24 t)² dt = 48


def test_effort_exponent_and_control_weights():
    study = effort_study()
    g = study.problem.get_goal("effort")
    g.exponent = 4
    g.set_weight_for_control(ACT, 3.0)
    sol = study.solve()
    assert sol.success
    x, t = sol.controls[ACT], sol.time
    # the reported value is the goal's own quadrature of 3 |x|^4 (Simpson on the grid)
    w = np.zeros(t.size)
    h = t[2] - t[0]
    w[0:-1:2] += h / 6
    w[2::2] += h / 6
    w[1::2] += 4 * h / 6
    assert sol.goal_values["effort"] == pytest.approx(3.0 * w @ x**4, rel=1e-12)
    # a higher exponent flattens the control: its peak force is lower than with exponent 2
    assert np.max(np.abs(x)) < 12.0


def test_user_integrand_goal_equals_builtin_effort():
    study = effort_study(N=10)
    study.problem.remove_goal("effort")
    study.problem.add_goal(ml.UserGoal("mine", integrand=lambda t, s, c, p: c[ACT] ** 2))
    user = study.solve()
    builtin = effort_study(N=10).solve()
    assert user.objective == pytest.approx(builtin.objective, rel=1e-9)
    np.testing.assert_allclose(user.controls[ACT], builtin.controls[ACT], atol=1e-6)
    assert user.goal_values["mine"] == pytest.approx(user.objective, rel=1e-9)


def test_state_tracking_goal_reproduces_its_reference():
    reference = effort_study().solve()
    study = effort_study()
    p = study.problem
    p.remove_goal("effort")
    p.set_state_info(POS, (-5, 5), 0)  # final position left free: tracking must bring it there
    p.set_state_info(SPD, (-50, 50), 0)
    p.add_goal(ml.StateTrackingGoal("track", 1e4, reference=reference.as_trajectory()))
    p.add_goal(ml.ControlGoal("effort", 1e-3))
    # Tracking problems converge slowly to IPOPT's default 1e-8 with a
    # limited-memory Hessian (as in Moco, which uses 1e-2 in MocoTrack).
    study.solver.optim_convergence_tolerance = 1e-4
    sol = study.solve()
    assert sol.success, sol.message
    np.testing.assert_allclose(sol.states[POS], reference.states[POS], atol=1e-4)
    assert sol.goal_values["track"] < 1e-4 * sol.goal_values["effort"] * 1e2


def test_state_tracking_errors():
    study = effort_study()
    with pytest.raises(KeyError, match="reference column"):
        study.problem.add_goal(ml.StateTrackingGoal("t", reference=([0, 1], {"/slider/pos": [0, 1]})))
        study.solve()
    with pytest.raises(ValueError, match="increasing"):
        ml.StateTrackingGoal("t2", reference=([1, 0], {POS: [0, 1]}))


@pytest.mark.parametrize("mode", ["endpoint_constraint", "cost"])
def test_periodicity_goal(mode):
    """Start and end speeds free, but equal; positions 0 -> 1 in 1 s with minimum effort."""
    study = effort_study()
    p = study.problem
    p.set_state_info(SPD, (-50, 50))  # no rest conditions
    p.add_goal(ml.PeriodicityGoal("periodic", 1e3, pairs=[(SPD, SPD)], mode=mode))
    sol = study.solve()
    assert sol.success
    u = sol.states[SPD]
    tol = 1e-8 if mode == "endpoint_constraint" else 1e-2
    assert abs(u[-1] - u[0]) < tol
    # minimum effort with equal end speeds: cruise at 1 m/s, no force needed
    np.testing.assert_allclose(sol.controls[ACT], 0, atol=1e-2 if mode == "cost" else 1e-5)


def test_symmetry_goal_negates():
    study = effort_study()
    p = study.problem
    p.set_state_info(SPD, (-50, 50), 0.5)  # starts at +0.5 m/s, end free
    p.add_goal(ml.PeriodicityGoal("symmetry", pairs=[(SPD, SPD, True)]))
    sol = study.solve()
    assert sol.states[SPD][-1] == pytest.approx(-0.5, abs=1e-8)
    assert sol.goal_values["symmetry"] == 0.0


def test_path_constraint_is_respected_at_mesh_points():
    """Cap the speed at 1.2 m/s (unconstrained peak is 1.5 m/s)."""
    study = effort_study()
    study.problem.add_path_constraint("speed_cap", lambda t, s, c, p: [s[SPD]], [-1.2], [1.2])
    sol = study.solve()
    assert sol.success
    u = sol.states[SPD]
    assert np.max(u[::2]) <= 1.2 + 1e-6
    assert np.max(u[::2]) == pytest.approx(1.2, abs=1e-4)  # the cap is active
    assert sol.objective > 48.0  # constraining can only cost effort


def test_named_values_errors():
    v = ml.NamedValues(["/a", "/b"], np.array([1.0, 2.0]))
    assert v["/b"] == 2.0 and v[0] == 1.0 and len(v) == 2
    with pytest.raises(KeyError, match="Did you mean '/a'"):
        v["/aa"]


def test_disabled_goal_is_ignored():
    study = effort_study()
    study.problem.add_goal(ml.FinalTimeGoal("time", 10.0, enabled=False))
    sol = study.solve()
    assert set(sol.goal_values) == {"effort"}
