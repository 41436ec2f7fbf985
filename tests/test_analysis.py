"""Tests of ``moco_lab.analysis``: the library's closed forms against the independent ones of
``tests/analytic.py`` (the oracle), and the error measures and orders on synthetic data.
No solves.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from analytic import linear_objective, linear_solution, sliding_mass_min_time

import moco_lab as ml
from moco_lab import analysis as ma

Q, U, X = "/jointset/j/coord/value", "/jointset/j/coord/speed", "/forceset/coordinateactuator"
VARIANTS = ("kirk", "moco_test")


# ------------------------------------------------------------ closed forms
@pytest.mark.parametrize("variant", VARIANTS)
def test_linear_closed_form_matches_the_independent_derivation(variant):
    t = np.linspace(0, 2, 41)
    q, u, x = linear_solution(t, variant)
    states = ma.linear_exact_states(t)
    np.testing.assert_allclose(states[Q], q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(states[U], u, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ma.linear_exact_control(t, variant), x, rtol=0, atol=1e-10)
    assert ma.LINEAR_J_STAR[variant] == pytest.approx(linear_objective(variant), rel=1e-12)
    assert ma.LINEAR_EFFORT_INTEGRAL[variant] == pytest.approx(2 * linear_objective(variant), rel=1e-12)


def test_linear_constants_and_dynamics():
    assert ma.LINEAR_C2 == pytest.approx(-7.2917920742, abs=1e-9)
    assert ma.LINEAR_C3 == pytest.approx(-6.1048273597, abs=1e-9)
    assert ma.LINEAR_J_STAR == pytest.approx({"kirk": 16.7507233968, "moco_test": 12.7507233968}, abs=1e-9)
    t = np.linspace(0, 2, 20001)
    y = ma.linear_exact_states(t)
    q, u = y[Q], y[U]
    assert (q[0], u[0], q[-1], u[-1]) == pytest.approx((0, 0, 5, 2), abs=1e-12)
    udot = np.gradient(u, t)
    for variant, sign in (("kirk", -1), ("moco_test", 1)):  # udot = ∓u + x
        x = ma.linear_exact_control(t, variant)
        np.testing.assert_allclose(udot[1:-1], (sign * u + x)[1:-1], atol=1e-6)
    with pytest.raises(ValueError, match="Unknown variant"):
        ma.linear_exact_control(t, "other")


@pytest.mark.parametrize("mass", [2.0, 8.0])
def test_sliding_mass_closed_form(mass):
    tf = ma.sliding_mass_tf_star(mass)
    assert tf == pytest.approx(sliding_mass_min_time(mass), rel=1e-14)
    t = np.linspace(0, tf, 2001)
    y = ma.sliding_mass_exact_states(t, mass)
    q, u = y["/slider/position/value"], y["/slider/position/speed"]
    assert (q[0], u[0], q[-1], u[-1]) == pytest.approx((0, 0, 1, 0), abs=1e-12)
    np.testing.assert_allclose(np.gradient(q, t)[1:-1], u[1:-1], atol=1e-2)
    x = ma.sliding_mass_exact_control(t, mass)
    assert set(np.unique(x)) == {-50.0, 50.0}
    assert np.all(x[t < tf / 2] == 50.0) and np.all(x[t > tf / 2] == -50.0)


# ---------------------------------------------------------- error measures
def _trajectory(t, states=None, controls=None):
    return ml.Trajectory(np.asarray(t, float), states or {}, controls or {})


def test_state_error_is_the_papers_time_averaged_measure():
    t = np.linspace(0, 2, 11)
    exact = {Q: np.sin(t), U: np.cos(t)}
    # Constant offsets 0.3 and 0.4: sqrt(1/T ∫ (0.3² + 0.4²) dt) = 0.5.
    traj = _trajectory(t, {Q: exact[Q] + 0.3, U: exact[U] - 0.4})
    assert ma.state_error(traj, lambda tt: {Q: np.sin(tt), U: np.cos(tt)}) == pytest.approx(0.5, rel=1e-14)
    # An error e(t) = t on [0, 2]: the trapezoidal rule on this grid gives ∫ t² dt = 2.68, so sqrt(2.68 / 2).
    traj = _trajectory(t, {Q: exact[Q] + t})
    assert ma.state_error(traj, lambda tt: {Q: np.sin(tt)}) == pytest.approx(math.sqrt(1.34), rel=1e-14)


def test_control_error_is_the_rms_over_grid_points():
    t = np.array([0.0, 0.1, 1.0])  # uneven grid: RMS weighs every point alike
    traj = _trajectory(t, controls={X: np.array([1.0, 2.0, 3.0])})
    err = ma.control_error(traj, lambda tt: {X: np.array([1.0, 2.0, 0.0])})
    assert err == pytest.approx(math.sqrt(3.0), rel=1e-14)


def test_solution_errors_uses_what_the_reference_knows():
    t = np.linspace(0, 2, 21)
    traj = _trajectory(t, {Q: np.zeros_like(t)}, {X: np.ones_like(t)})

    class Known:
        states = staticmethod(lambda tt: {Q: np.full_like(tt, 0.5)})
        controls = None
        objective = 1.0  # not used: a Trajectory has no objective
        final_time = 1.5

    errors = ma.solution_errors(Known, traj)
    assert errors == pytest.approx({"states": 0.5, "final_time": 0.5})
    assert ma.solution_errors(Known, traj, ["final_time"]) == pytest.approx({"final_time": 0.5})
    assert ma.solution_errors(None, traj) == {}
    assert set(errors) <= set(ma.METRIC_LABELS)


# ---------------------------------------------------------- observed orders
def test_observed_orders_recovers_synthetic_orders():
    N = [10, 20, 40, 80]
    for p in (1.0, 2.0, 4.0):
        pairs, fit = ma.observed_orders(N, [3.0 * n ** -p for n in N])
        assert pairs == pytest.approx([p] * 3, rel=1e-12) and fit == pytest.approx(p, rel=1e-12)
    # Uneven refinement: the pairwise order divides by log(N_{i+1} / N_i), not by log 2.
    pairs, fit = ma.observed_orders([10, 30, 40], [n ** -2.0 for n in (10, 30, 40)])
    assert pairs == pytest.approx([2, 2]) and fit == pytest.approx(2)


def test_observed_orders_skips_unusable_errors():
    N = [10, 20, 40, 80]
    pairs, fit = ma.observed_orders(N, [1e-2, float("nan"), 1e-4, 1e-5])
    assert math.isnan(pairs[0]) and math.isnan(pairs[1]) and pairs[2] == pytest.approx(math.log2(10))
    assert fit == pytest.approx(-np.polyfit(np.log([10, 40, 80]), np.log([1e-2, 1e-4, 1e-5]), 1)[0])
    pairs, fit = ma.observed_orders(N, [-1e-2, -2e-2, 0.0, 1e-3])  # signed or zero errors give no order
    assert all(math.isnan(p) for p in pairs) and math.isnan(fit)
