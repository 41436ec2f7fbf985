"""The goals that use model outputs or endpoint functions, checked against closed forms on small problems.

Sliding mass m = 2 kg, force F = u (optimal force 1), rest to rest over a distance d in time T: the
minimum of ∫F² dt is 12 m² d² / T³ (cubic position, linear force). Hermite–Simpson integrates the
quadratic integrand and represents the cubic motion exactly, so the optima match the closed forms to the
optimizer's tolerance (1e-9 here; asserted at 1e-6 relative).
"""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.contact import Gait2dContactPoint

M = 2.0
X, V, F = "/slider/position/value", "/slider/position/speed", "/actuator"


def sliding(T=1.0, x_final=None, tf=None):
    study = ml.Study()
    p = study.problem
    p.set_model(ml.models.sliding_mass(mass=M))
    p.set_time_bounds(0, T if tf is None else tf)
    p.set_state_info(X, (-5, 5), 0, x_final)
    p.set_state_info(V, (-50, 50), 0, 0)
    p.set_control_info(F, (-100, 100))
    study.solver.num_mesh_intervals = 20
    study.solver.optim_convergence_tolerance = 1e-10
    study.solver.optim_constraint_tolerance = 1e-10
    return study


def moving_guess(d=0.5):
    """A guess that moves (‖Δr_com‖ has no derivative at zero displacement, as in Moco)."""
    t = np.linspace(0, 1, 11)
    return ml.Trajectory(t, {X: d * t, V: d + 0 * t}, {F: 0 * t})


def test_average_speed_as_an_endpoint_constraint():
    study = sliding(T=1.0)
    study.solver.guess = moving_guess()
    study.problem.add_goal(ml.ControlGoal("effort"))
    study.problem.add_goal(ml.AverageSpeedGoal("speed", desired_average_speed=0.7))
    sol = study.solve()
    assert sol.success, sol.message
    d = sol.states[X][-1]
    assert d == pytest.approx(0.7, rel=1e-8)                        # ‖Δr_com‖ / T = 0.7 m/s
    assert sol.objective == pytest.approx(12 * M ** 2 * 0.7 ** 2, rel=1e-6)
    assert sol.goal_values["speed"] == 0.0                          # a constraint adds nothing


def test_average_speed_as_a_cost_is_squared():
    study = sliding(T=1.0)
    study.solver.guess = moving_guess()
    study.problem.add_goal(ml.AverageSpeedGoal("speed", desired_average_speed=0.7, mode="cost", weight=1000.0))
    study.problem.add_goal(ml.ControlGoal("effort", 1.0))
    sol = study.solve()
    assert sol.success, sol.message
    d = sol.states[X][-1]
    # minimize 12 m² d² + 1000 (0.7 − d)²  ->  d = 1000·0.7 / (1000 + 48)
    assert d == pytest.approx(700 / 1048, rel=1e-6)
    assert sol.goal_values["speed"] == pytest.approx(1000 * (0.7 - d) ** 2, rel=1e-6)


def test_effort_divided_by_displacement():
    study = sliding(T=1.0, x_final=(0.5, 1.0))
    study.solver.guess = moving_guess(0.8)
    study.problem.add_goal(ml.ControlGoal("effort", 1.0, divide_by_displacement=True))
    sol = study.solve()
    assert sol.success, sol.message
    # J(d) = 12 m² d / T³ grows with d: the shortest allowed distance wins
    assert sol.states[X][-1] == pytest.approx(0.5, abs=1e-7)
    assert sol.objective == pytest.approx(12 * M ** 2 * 0.5, rel=1e-6)
    assert sol.goal_values["effort"] == pytest.approx(sol.objective, rel=1e-10)


def test_integral_goal_as_an_endpoint_constraint():
    """Minimum time on an energy budget: ∫F² dt ≤ E gives T* = (12 m² d² / E)^(1/3)."""
    study = sliding(T=None, x_final=1.0, tf=(0.2, 5.0))
    study.problem.add_goal(ml.FinalTimeGoal("time"))
    study.problem.add_goal(ml.ControlGoal("energy", mode="endpoint_constraint", bounds=(0.0, 48.0)))
    sol = study.solve()
    assert sol.success, sol.message
    assert sol.final_time == pytest.approx((12 * M ** 2 / 48.0) ** (1 / 3), rel=1e-6)


def test_marker_tracking_equals_state_tracking_of_the_same_point():
    t = np.linspace(-0.1, 1.1, 25)
    ref = np.sin(2 * t)

    def solve(goal):
        study = sliding(T=1.0)
        study.problem.set_state_info(X, (-5, 5))
        study.problem.set_state_info(V, (-50, 50))
        study.problem.add_goal(ml.ControlGoal("effort", 1e-3))
        study.problem.add_goal(goal)
        sol = study.solve()
        assert sol.success, sol.message
        return sol

    marker = solve(ml.MarkerTrackingGoal("markers", 10.0, markers={"m": ("body", (0.0, 0.0, 0.0))},
                                         reference=(t, {"m_x": ref, "m_y": 0 * t})))
    state = solve(ml.StateTrackingGoal("states", 10.0, reference=(t, {X: ref})))
    # the marker sits at the body origin, which moves along x with the coordinate: identical problems
    # (the marker's y error is 0 − 0 and constant)
    np.testing.assert_allclose(marker.states[X], state.states[X], atol=1e-8)
    assert marker.objective == pytest.approx(state.objective, rel=1e-8)


def test_contact_tracking_pulls_the_contact_force_to_the_reference():
    """A 1 kg block on a gait2d contact point, an actuator pushing it down: track 2 m g of ground force."""
    g = 9.81
    b = ml.ModelBuilder("block", gravity=(0, -g, 0))
    b.add_body("block", 1.0, inertia=(0.01, 0.01, 0.01))
    b.add_slider_joint("lift", "ground", "block", axis=(0, 1, 0), coordinate="y", range=(-0.05, 0.1))
    b.add_force_element(Gait2dContactPoint("/forceset/contact", "block", (0, 0, 0), damping=1.0))
    b.add_coordinate_actuator("/push", "y", optimal_force=10.0, min_control=-5, max_control=5)
    model = b.build()
    study = ml.Study()
    p = study.problem
    p.set_model(model)
    p.set_time_bounds(0, 0.5)
    p.set_state_info("/jointset/lift/y/speed", (-1, 1), 0, 0)
    t = np.linspace(-0.1, 0.6, 8)
    p.add_goal(ml.ContactTrackingGoal("grf", 100.0, reference=(t, {"fx": 0 * t, "fy": 2 * g + 0 * t, "fz": 0 * t}),
                                      groups=[(["/forceset/contact"], ("fx", "fy", "fz"))]))
    p.add_goal(ml.ControlGoal("effort", 1e-4))
    study.solver.num_mesh_intervals = 10
    study.solver.optim_convergence_tolerance = 1e-10
    sol = study.solve()
    assert sol.success, sol.message
    push = 10.0 * sol.controls["/push"]
    # static equilibrium at the tracked force: contact 2mg up = weight mg + push mg down
    np.testing.assert_allclose(push, -g, rtol=1e-3)
    assert sol.goal_values["grf"] < 1e-4


def test_initial_activation_goal():
    study = ml.examples.suspended_mass_prediction_study(num_mesh_intervals=8)
    study.problem.set_state_info_pattern(r".*/activation", (0, 1))       # free initial activations
    study.problem.add_goal(ml.InitialActivationGoal())
    sol = study.solve()
    assert sol.success, sol.message
    for m in ("left", "middle", "right"):
        assert sol.states[f"/forceset/{m}/activation"][0] == pytest.approx(sol.controls[f"/forceset/{m}"][0],
                                                                          abs=1e-8)


def test_sum_squared_state_goal_value():
    study = sliding(T=1.0, x_final=1.0)
    study.problem.add_goal(ml.ControlGoal("effort"))
    study.problem.add_goal(ml.SumSquaredStateGoal("speed_squared", 0.5, pattern=".*/speed"))
    sol = study.solve()
    assert sol.success
    # Simpson's rule on the grid, as the goal integrates
    h = np.diff(sol.time[::2])
    v = sol.states[V]
    simpson = float(np.sum(h / 6 * (v[:-1:2] ** 2 + 4 * v[1::2] ** 2 + v[2::2] ** 2)))
    assert sol.goal_values["speed_squared"] == pytest.approx(0.5 * simpson, rel=1e-12)


def test_goal_errors_name_the_culprit():
    study = sliding()
    study.problem.add_goal(ml.MarkerTrackingGoal("m", markers={"a": ("bodyy", (0, 0, 0))},
                                                 reference=(np.array([0.0, 1.0]), {"a_x": np.zeros(2)})))
    with pytest.raises(KeyError, match="bodyy.*Did you mean 'body'"):
        study.solve()
    with pytest.raises(ValueError, match="cannot be an endpoint constraint"):
        ml.FinalTimeGoal(mode="endpoint_constraint")
    study = sliding()
    zeros = np.zeros(2)
    study.problem.add_goal(ml.ContactTrackingGoal("c", reference=(np.array([0.0, 1.0]), {"fx": zeros}),
                                                  groups=[(["/forceset/nope"], ("fx", "fy", "fz"))]))
    with pytest.raises(KeyError, match="reference column 'fy'"):
        study.solve()
    study = sliding()
    study.problem.add_goal(ml.ContactTrackingGoal("c", reference=(np.array([0.0, 1.0]),
                                                                  {"fx": zeros, "fy": zeros, "fz": zeros}),
                                                  groups=[(["/forceset/nope"], ("fx", "fy", "fz"))]))
    with pytest.raises(KeyError, match="model output '/forceset/nope/force'"):
        study.solve()


def test_control_tracking_against_the_closed_form():
    """Track r(t) = 1 + t with the force while the mass starts and ends at rest (so ∫F dt = m Δv = 0): the optimum
    is F = r − mean(r) = t − 1/2 and ∫(F − r)² dt = (3/2)² = 2.25 per unit weight. Hermite–Simpson integrates the
    quadratic integrand and the linear force exactly (tolerance 1e-10; asserted at 1e-6)."""
    study = sliding(T=1.0)
    t = np.linspace(0, 1, 7)
    study.problem.add_goal(ml.ControlTrackingGoal("emg", 3.0, reference=(t, {"envelope": 1 + t}),
                                                  reference_labels={F: "envelope"}))
    s = study.solve()
    assert s.success, s.message
    assert s.objective == pytest.approx(3.0 * 2.25, rel=1e-6)
    np.testing.assert_allclose(s.controls[F], s.time - 0.5, atol=1e-6)
    # without labels a column named like the control is tracked; other columns are refused unless allowed
    goal = ml.ControlTrackingGoal("by_name", reference=(t, {F: 1 + t, "other": t}), allow_unused_references=True)
    again = ml.ocp.goals.goal_from_dict(goal.to_dict())  # study files keep it
    assert again.to_dict() == goal.to_dict() and isinstance(again, ml.ControlTrackingGoal)
    study.problem.goals[:] = [goal]
    assert study.solve().objective == pytest.approx(2.25, rel=1e-6)


def test_control_tracking_names_what_is_wrong():
    study = sliding(T=1.0)
    t = np.linspace(0, 1, 7)
    for goal, error, match in (
            (ml.ControlTrackingGoal(reference=(t, {"/actuatr": t})), KeyError, r"Did you mean '/actuator'"),
            (ml.ControlTrackingGoal(reference=(t, {"emg": t}), reference_labels={F: "emh"}), KeyError,
             r"no column 'emh' \(for /actuator\)"),
            (ml.ControlTrackingGoal(reference=(t, {"emg": t}), reference_labels={"/actuatr": "emg"}), KeyError,
             r"reference label"),
            (ml.ControlTrackingGoal(reference=(t, {F: t}), control_weights={F: 0.0}), ValueError, "no control to track"),
            (ml.ControlTrackingGoal(), ValueError, "no reference")):
        study.problem.goals[:] = [goal]
        with pytest.raises(error, match=match):
            study.solve()
