"""Verification against closed-form answers (the Moco paper "Verification"; VERIFICATION.md a, b).

Every number here comes from a real solve compared with an answer derived in
``tests/analytic.py`` independently of moco_lab.
"""
from __future__ import annotations

import numpy as np
import pytest
from analytic import linear_objective, linear_solution, sliding_mass_min_time
from pydrake.multibody.tree import MultibodyForces

import moco_lab as ml

Q, U, X = "/jointset/j/coord/value", "/jointset/j/coord/speed", "/forceset/coordinateactuator"


def linear_errors(sol):
    """The paper's state error sqrt(∫ Σ err² dt / T) and the control RMS over all grid points."""
    t = sol.time
    q, u, x = linear_solution(t)
    err2 = (sol.states[Q] - q) ** 2 + (sol.states[U] - u) ** 2
    state = np.sqrt(np.trapezoid(err2, t) / (t[-1] - t[0]))
    control = np.sqrt(np.mean((sol.controls[X] - x) ** 2))
    return state, control


def solve_linear(scheme, mode="explicit", N=50, tol=None, variant="kirk"):
    study = ml.examples.linear_study(variant, scheme, mode, N)
    if tol is not None:
        study.solver.optim_convergence_tolerance = tol
        study.solver.optim_constraint_tolerance = tol
    sol = study.solve()
    assert sol.success, sol.message
    return sol


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_linear_problem_hermite_simpson_at_50_intervals(mode):
    sol = solve_linear("hermite-simpson", mode)
    state, control = linear_errors(sol)
    assert state <= 1e-7  # Moco 4.6: 5.2e-8 (remark 3)
    assert control <= 1e-3  # Moco 4.6: 4.6e-4
    assert sol.objective == pytest.approx(linear_objective("kirk"), rel=1e-6)


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_linear_problem_trapezoidal_at_50_intervals(mode):
    sol = solve_linear("trapezoidal", mode)
    state, control = linear_errors(sol)
    assert state <= 3e-3  # Moco 4.6: 1.6e-3
    assert control <= 5e-2  # Moco 4.6: 2.3e-2
    assert sol.objective == pytest.approx(linear_objective("kirk"), rel=2e-3)


def test_moco_test_variant_has_same_states_and_its_own_optimum():
    sol = solve_linear("hermite-simpson", variant="moco_test")
    t = sol.time
    q, u, _ = linear_solution(t, "kirk")  # same optimal states for both variants
    assert np.max(np.abs(sol.states[Q] - q)) < 1e-6
    assert sol.objective == pytest.approx(linear_objective("moco_test"), rel=1e-6)
    assert linear_objective("kirk") - linear_objective("moco_test") == pytest.approx(4.0, abs=1e-9)


@pytest.mark.parametrize("scheme, min_state_order, state_range", [
    ("trapezoidal", 1.8, (1.8, 2.2)),
    ("hermite-simpson", 3.5, (3.5, 4.3)),
])
def test_observed_orders_of_accuracy(scheme, min_state_order, state_range):
    # Tight optimizer tolerances so that the discretization error, not the
    # solver's stopping test, is what we measure (with IPOPT's default 1e-8
    # the Hermite-Simpson error at N=80, ~1e-8, is at the tolerance floor).
    Ns = [10, 20, 40, 80]
    errors = np.array([linear_errors(solve_linear(scheme, N=N, tol=1e-12)) for N in Ns])
    state_orders = np.log2(errors[:-1, 0] / errors[1:, 0])
    control_orders = np.log2(errors[:-1, 1] / errors[1:, 1])
    print(f"{scheme}: state errors {errors[:, 0]}, orders {state_orders}; control orders {control_orders}")
    assert np.all(state_orders >= min_state_order)
    assert np.all(state_orders <= state_range[1])
    # controls are piecewise linear between mesh points: second order at best
    assert np.all(control_orders >= 1.2) and np.all(control_orders <= 2.2)


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_sliding_mass_minimum_time(scheme, mode):
    sol = ml.examples.sliding_mass_study(2.0, scheme, mode, 50).solve()
    assert sol.success, sol.message
    tf_star = sliding_mass_min_time(2.0)
    assert tf_star == pytest.approx(0.4)
    assert abs(sol.final_time - tf_star) <= 1e-3
    # remark 5: t_f - 0.4 ≈ 0.40/N² (trapezoidal) and 0.267/N² (Hermite-Simpson), from above
    c = {"trapezoidal": 0.40, "hermite-simpson": 0.267}[scheme]
    assert sol.final_time - tf_star == pytest.approx(c / 50**2, rel=0.05)
    # bang-bang: full force forward in the first half, full brake in the second
    x = sol.controls["/actuator"]
    t = sol.time
    assert np.all(x[t < 0.35 * sol.final_time] > 49.0)
    assert np.all(x[t > 0.65 * sol.final_time] < -49.0)
    assert sol.goal_values == {"time": pytest.approx(sol.final_time)}


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
def test_explicit_and_implicit_agree(scheme):
    a = ml.examples.double_pendulum_study(scheme, "explicit", 20)
    b = ml.examples.double_pendulum_study(scheme, "implicit", 20)
    for s in (a, b):
        s.solver.optim_convergence_tolerance = 1e-10
        s.solver.optim_constraint_tolerance = 1e-10
    sa, sb = a.solve(), b.solve()
    assert sa.success and sb.success
    assert sa.objective == pytest.approx(sb.objective, rel=1e-7)
    for name in sa.states:
        np.testing.assert_allclose(sa.states[name], sb.states[name], atol=1e-6)
    for name in sa.controls:
        np.testing.assert_allclose(sa.controls[name], sb.controls[name], atol=1e-4 * 100)
    # implicit mode's acceleration variables are Drake's forward dynamics at the solved states
    model = b.problem.model
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    names = model.state_names()
    for k in range(sb.num_times):
        plant.SetPositionsAndVelocities(ctx, [sb.states[n][k] for n in names])
        tau = np.array([sb.controls["/tau0"][k], sb.controls["/tau1"][k]])
        forces = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, forces)
        bias = plant.CalcInverseDynamics(ctx, np.zeros(2), forces)  # C(q,u)u - tau_gravity
        expected = np.linalg.solve(plant.CalcMassMatrix(ctx), tau - bias)
        got = [sb.derivatives["/jointset/j0/q0/accel"][k], sb.derivatives["/jointset/j1/q1/accel"][k]]
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_schemes_converge_to_the_same_solution():
    """Trapezoidal and Hermite-Simpson differ at coarse meshes and agree as N grows."""
    diffs = []
    for N in (10, 40):
        trap = ml.examples.double_pendulum_study("trapezoidal", "explicit", N).solve()
        hs = ml.examples.double_pendulum_study("hermite-simpson", "explicit", N).solve()
        assert trap.success and hs.success
        mesh_hs = hs.states["/jointset/j0/q0/value"][::2]  # mesh points only
        diffs.append((abs(trap.objective - hs.objective) / hs.objective,
                      np.max(np.abs(trap.states["/jointset/j0/q0/value"] - mesh_hs))))
    (obj10, q10), (obj40, q40) = diffs
    assert obj40 < obj10 / 8 and q40 < q10 / 8  # second-order trapezoidal error shrinks ~16x
    assert obj40 < 1e-2  # measured 3.5e-3


def test_parameter_optimization_recovers_the_mass():
    """Identify the mass from its motion under a known force.

    A 2 kg mass starts at rest and is pushed by F(t) = 10 sin(πt) N, so
    x(t) = (5/π)(t - sin(πt)/π). The study starts from a 1 kg model, imposes the
    known force with a path constraint, tracks the observed positions and frees
    ``/body/mass``: the tracking error is zero only for m = 2.
    """
    t = np.linspace(0, 1, 1001)
    x_obs = 5 / np.pi * (t - np.sin(np.pi * t) / np.pi)
    study = ml.Study()
    p = study.problem
    p.set_model(ml.models.sliding_mass(mass=1.0))
    p.set_time_bounds(0, 1)
    p.set_state_info("/slider/position/value", (-5, 5), 0)
    p.set_state_info("/slider/position/speed", (-50, 50), 0)
    p.set_control_info("/actuator", (-50, 50))
    p.add_path_constraint("known_force", lambda t, s, c, par: [c["/actuator"] - 10 * np.sin(np.pi * t)], [0], [0])
    p.add_goal(ml.StateTrackingGoal("track", 1.0, reference=(t, {"/slider/position/value": x_obs})))
    p.add_parameter("mass", "/body/mass", (0.5, 5.0))
    errors = []
    for N in (20, 40):
        study.solver.num_mesh_intervals = N
        sol = study.solve()
        assert sol.success, sol.message
        errors.append(abs(sol.parameters["mass"] - 2.0))
        # the path constraint holds at the mesh points
        mesh = sol.time[::2]
        np.testing.assert_allclose(sol.controls["/actuator"][::2], 10 * np.sin(np.pi * mesh), atol=1e-6)
    # Midpoint controls are the mean of the mesh values (Moco's interpolation),
    # slightly below the concave sin(πt): an O(h²) bias in the force, so in the
    # mass (measured 4.1e-3 kg at N=20, 1.03e-3 kg at N=40).
    print('mass errors', errors)
    assert errors[1] < 2e-3
    assert errors[0] / errors[1] == pytest.approx(4.0, rel=0.15)


def test_parameter_on_a_force_element():
    """Optimize the damper viscosity of the linear system: the best damping for a free coast."""
    study = ml.examples.linear_study("kirk", "hermite-simpson", "explicit", 30)
    p = study.problem
    p.add_parameter("viscosity", "/forceset/spring/viscosity", (-2.0, 2.0))
    sol = study.solve()
    assert sol.success
    # with the viscosity free the effort can only go down
    assert sol.objective < linear_objective("kirk")
    assert -2.0 <= sol.parameters["viscosity"] <= 2.0
    # re-solving with the viscosity fixed at the optimum gives the same objective
    fixed = ml.Study()
    fixed.problem = p
    p.parameters.clear()
    p.model.force_element("/forceset/spring").viscosity = sol.parameters["viscosity"]
    again = fixed.solve()
    assert again.objective == pytest.approx(sol.objective, rel=1e-6)
