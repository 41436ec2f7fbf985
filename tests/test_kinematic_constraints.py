"""Kinematic constraints in the transcription (the Moco paper, appendix; VERIFICATION.md d1).

The point mass on the parabola y = x² (``models.planar_point_mass("parabola")``; moco_lab's
φ = ty − tx², G = (−2 tx, 1); equations of motion m ẍ = f_x + 2x λ, m ÿ = f_y − m g − λ).
References are independent of the transcription: a time-stepping simulation (KKT solve for u̇ and
λ each step, with projection) and the multiplier derived by hand from the state and the forces.
"""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.analysis.constraints import constraint_violations
from moco_lab.tools.simulate import simulate

G_ACC = 9.80665
X, Y = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
XD, YD = "/jointset/tx/tx/speed", "/jointset/ty/ty/speed"
LAM = "/constraintset/curve/lambda_0"


def bead_study(scheme, mode, N=50):
    """d1: the bead released from rest at (−1, 1); no goals (a collocated initial-value problem)."""
    st = ml.Study("parabola_bead")
    p = st.problem
    p.set_model(ml.models.planar_point_mass("parabola", actuated=False))
    p.set_time_bounds(0, 0.8)
    p.set_state_info(X, (-2, 2), -1)
    p.set_state_info(Y, (-2, 2), 1)
    p.set_state_info(XD, (-5, 5), 0)
    p.set_state_info(YD, (-5, 5), 0)
    st.solver.transcription_scheme = scheme
    st.solver.multibody_dynamics_mode = mode
    st.solver.num_mesh_intervals = N
    return st


def actuated_study(scheme, mode, N=30):
    """The mass moved along the parabola from x = −1 to x = 0.5 in 1 s, at rest at both ends, minimum effort."""
    st = ml.Study("parabola_actuated")
    p = st.problem
    p.set_model(ml.models.planar_point_mass("parabola"))
    p.set_time_bounds(0, 1.0)
    p.set_state_info(X, (-2, 2), -1, 0.5)
    p.set_state_info(Y, (-2, 2), 1, 0.25)
    p.set_state_info(XD, (-10, 10), 0, 0)
    p.set_state_info(YD, (-10, 10), 0, 0)
    p.set_control_info("/forceset/force_x", (-100, 100))
    p.set_control_info("/forceset/force_y", (-100, 100))
    p.add_goal(ml.ControlGoal("effort"))
    st.solver.transcription_scheme = scheme
    st.solver.multibody_dynamics_mode = mode
    st.solver.num_mesh_intervals = N
    st.solver.optim_convergence_tolerance = 1e-10
    st.solver.optim_constraint_tolerance = 1e-10
    return st


def hand_multiplier(s, m=1.0):
    """λ from state and forces: eliminate ẍ, ÿ with ÿ = 2ẋ² + 2xẍ (the constraint's second derivative)."""
    x, xd = s.states[X], s.states[XD]
    fx, fy = s.controls["/forceset/force_x"], s.controls["/forceset/force_y"]
    return (fy - m * G_ACC - 2 * m * xd ** 2 - 2 * x * fx) / (1 + 4 * x ** 2)


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_bead_hermite_simpson_matches_time_stepping(mode):
    st = bead_study("hermite-simpson", mode)
    if mode == "implicit":
        # IPOPT with the exact Hessian (MUMPS): 158 iterations, 0.9 s, where the limited-memory one (SPRAL) takes 394
        # iterations, 13-16 s; the same trajectory to 1e-12 (measured on the Zen and Sandybridge kernels)
        st.solver.set_hessian_approximation("exact")
    s = st.solve()
    assert s.success, s.message
    assert s.objective == 0
    sim = simulate(st.problem.model, s)
    # states over the whole grid (mesh points and midpoints); measured 2.4e-6 (positions) and
    # 6.4e-5 (speeds, range 4.4) at N = 50
    for name, tol in ((X, 2e-5), (Y, 2e-5), (XD, 2e-4), (YD, 2e-4)):
        assert np.max(np.abs(s.states[name] - sim.states[name])) < tol, name
    # multipliers at mesh points (where φ̈ = 0 is enforced) vs the simulator's KKT multipliers;
    # measured 1.6e-4 on a range of 47
    lam, lam_sim = s.multipliers[LAM][::2], sim.multipliers[LAM][::2]
    assert np.ptp(lam_sim) > 40
    assert np.max(np.abs(lam - lam_sim)) < 1e-3
    v = constraint_violations(st.problem.model, s)
    for level in ("position", "velocity", "acceleration"):
        assert np.max(np.abs(v[level][::2])) < 1e-8, level
    assert 1e-8 < np.max(np.abs(v["position"][1::2])) < 1e-5  # midpoints: not enforced, O(h⁴)


def test_bead_midpoint_drift_is_fourth_order():
    drift = []
    for N in (20, 40):
        s = bead_study("hermite-simpson", "explicit", N).solve()
        assert s.success
        drift.append(np.max(np.abs(s.states[Y] - s.states[X] ** 2)[1::2]))
    order = np.log2(drift[0] / drift[1])
    assert 3.5 < order < 4.6, (drift, order)


def test_bead_trapezoidal_enforces_position_level_only():
    st = bead_study("trapezoidal", "explicit")
    s = st.solve()
    assert s.success, s.message
    v = constraint_violations(st.problem.model, s)
    assert np.max(np.abs(v["position"])) < 1e-8
    assert np.max(np.abs(v["velocity"])) > 1e-3  # φ̇ is not a constraint of Eq. 7
    sim = simulate(st.problem.model, s)
    err = np.max(np.abs(s.states[X] - sim.states[X]))
    assert err < 1e-2  # measured 2.7e-3 (first-order accurate index-3 DAE)
    # the multiplier penalty (Moco's minimize_lagrange_multipliers) tames λ's oscillation
    lam_err = np.max(np.abs(s.multipliers[LAM] - sim.multipliers[LAM]))
    st.solver.minimize_lagrange_multipliers = True
    st.solver.lagrange_multiplier_weight = 1e-3
    s2 = st.solve()
    assert s2.success
    lam_err2 = np.max(np.abs(s2.multipliers[LAM] - sim.multipliers[LAM]))
    # measured 0.58 -> 0.27 N (16 -> 0.27 while the fixed initial state was repeated as a constraint row)
    assert lam_err2 < 0.35 and lam_err > 1.5 * lam_err2, (lam_err, lam_err2)
    assert s2.goal_values["lagrange_multipliers"] == pytest.approx(s2.objective, rel=1e-9)
    lam = s2.multipliers[LAM]
    w = st.transcribe().grid.quadrature * 0.8
    assert s2.objective == pytest.approx(1e-3 * float(w @ lam ** 2), rel=1e-9)


@pytest.mark.parametrize("scheme", ["hermite-simpson", "trapezoidal"])
def test_actuated_parabola(scheme):
    sols = {}
    for mode in ("explicit", "implicit"):
        st = actuated_study(scheme, mode)
        s = st.solve()
        assert s.success, s.message
        sols[mode] = s
        v = constraint_violations(st.problem.model, s)
        mesh = slice(None, None, 2) if scheme == "hermite-simpson" else slice(None)
        assert np.max(np.abs(v["position"][mesh])) < 1e-9
        if scheme == "hermite-simpson":
            assert np.max(np.abs(v["velocity"][mesh])) < 1e-9
            # φ̈ = 0 at mesh points: the multiplier is the hand-derived one there
            np.testing.assert_allclose(s.multipliers[LAM][mesh], hand_multiplier(s)[mesh], atol=1e-6)
    # explicit and implicit transcribe the same equations
    for name in (X, Y, XD, YD):
        np.testing.assert_allclose(sols["explicit"].states[name], sols["implicit"].states[name], atol=1e-6)
    assert sols["explicit"].objective == pytest.approx(sols["implicit"].objective, rel=1e-7)


def test_drift_between_mesh_points_hermite_simpson_vs_trapezoidal():
    """Hermite–Simpson (with the velocity correction) drifts far less off the curve between mesh points
    than the trapezoidal scheme's piecewise-linear motion."""
    hs = actuated_study("hermite-simpson", "explicit").solve()
    tr = actuated_study("trapezoidal", "explicit").solve()
    drift_hs = np.max(np.abs(hs.states[Y] - hs.states[X] ** 2)[1::2])
    xm = 0.5 * (tr.states[X][1:] + tr.states[X][:-1])
    ym = 0.5 * (tr.states[Y][1:] + tr.states[Y][:-1])
    drift_tr = np.max(np.abs(ym - xm ** 2))
    assert drift_hs < 0.02 * drift_tr, (drift_hs, drift_tr)  # measured 1.4e-5 vs 2.8e-3 at N = 30
    gamma = hs.multipliers["/constraintset/curve/gamma_0"]
    assert np.all(gamma[::2] == 0) and np.any(gamma[1::2] != 0)


def test_solution_names_and_guess_round_trip():
    st = actuated_study("hermite-simpson", "implicit", N=10)
    s = st.solve()
    assert set(s.multipliers) == {LAM, "/constraintset/curve/gamma_0"}
    st.solver.guess = s
    s2 = st.solve()
    assert s2.success and s2.nit < s.nit
    np.testing.assert_allclose(s2.multipliers[LAM], s.multipliers[LAM], atol=1e-8)


def test_constraint_settings_are_validated():
    st = actuated_study("hermite-simpson", "explicit", N=5)
    st.solver.multiplier_bounds = (1.0, 2.0)
    with pytest.raises(ValueError, match="multiplier_bounds"):
        st.solve()
    st.solver.multiplier_bounds = (-1000, 1000)
    st.solver.velocity_correction_bounds = (0.0, 0.0)
    with pytest.raises(ValueError, match="velocity_correction_bounds"):
        st.solve()
    st.solver.velocity_correction_bounds = (-0.1, 0.1)
    st.solver.lagrange_multiplier_weight = -1
    with pytest.raises(ValueError, match="lagrange_multiplier_weight"):
        st.solve()


def test_constrained_simulation_stays_on_the_curve():
    st = bead_study("hermite-simpson", "explicit", N=20)
    s = st.solve()
    sim = simulate(st.problem.model, s)
    model = st.problem.model
    v = constraint_violations(model, sim)
    assert np.max(np.abs(v["position"])) < 1e-12
    assert np.max(np.abs(v["velocity"])) < 1e-12
    # the simulator's multiplier is the KKT value: the hand formula with zero forces
    x, xd = sim.states[X], sim.states[XD]
    np.testing.assert_allclose(sim.multipliers[LAM], (-G_ACC - 2 * xd ** 2) / (1 + 4 * x ** 2), rtol=1e-10)


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
def test_bead_bordalba_projection_method(scheme):
    """Bordalba et al. (2023), Moco's second method: each interval's end state is projected onto the
    manifold, φ and φ̇ hold at mesh points and φ̈ at every grid point; compared with time stepping."""
    st = bead_study(scheme, "explicit")
    st.solver.kinematic_constraint_method = "Bordalba2023"
    s = st.solve()
    assert s.success, s.message
    model = st.problem.model
    v = constraint_violations(model, s)
    mesh = slice(None, None, 2) if scheme == "hermite-simpson" else slice(None)
    assert np.max(np.abs(v["position"][mesh])) < 1e-9
    assert np.max(np.abs(v["velocity"][mesh])) < 1e-9
    assert np.max(np.abs(v["acceleration"])) < 1e-8  # at midpoints too
    sim = simulate(model, s)
    err = np.max(np.abs(s.states[X] - sim.states[X]))
    lam_err = np.max(np.abs(s.multipliers[LAM][mesh] - sim.multipliers[LAM][mesh]))
    if scheme == "hermite-simpson":
        assert err < 1e-5 and lam_err < 1e-3  # measured 2.0e-6 and 1.6e-4
    else:
        # measured 2.2e-3 and 0.27: no multiplier sawtooth, without any multiplier penalty (Posa: 16)
        assert err < 5e-3 and lam_err < 1.0
    lo, hi = st.solver.projection_slack_bounds
    mus = [v_ for k, v_ in s.multipliers.items() if "/mu_" in k]
    assert len(mus) == 2 and all(np.all((lo - 1e-12 <= m) & (m <= hi + 1e-12)) for m in mus)
    assert "state_projection" in s.goal_values


def test_kinematic_constraint_method_is_validated():
    st = bead_study("trapezoidal", "explicit", N=5)
    st.solver.kinematic_constraint_method = "Bordalba"
    with pytest.raises(ValueError, match="kinematic_constraint_method"):
        st.solve()


def test_fixed_end_state_is_checked_not_repeated_as_a_constraint_row():
    """Where the bounds fix every coordinate, φ(q) is a number: checked at transcription, not a row.

    Kept as a row it made the Jacobian rank-deficient everywhere: trapezoidal, N = 100, w_λ = 0.01 then
    stopped at IPOPT's acceptable level with J = 3.150, 6 % above the answer
    (benchmarks/trapezoidal_constraints.md). The reference here is independent of the transcription:
    w_λ ∫ λ(x(t))² dt with the closed-form λ(x) = −5mg/(1 + 4x²)² along the time-stepped motion.
    Trapezoidal is second order: at N = 100 its objective is within 0.2 % of it (measured 0.06 %).
    """
    w = 0.01
    study = ml.examples.parabola_study("release", w)
    study.solver.transcription_scheme = "trapezoidal"
    study.solver.num_mesh_intervals = 100
    sol = study.solve()
    assert sol.status == "Solve_Succeeded", sol.message
    sim = simulate(study.problem.model, sol)
    x = np.asarray(sim.states[X])
    lam = -5 * 9.80665 / (1 + 4 * x**2) ** 2
    reference = w * float(np.trapezoid(lam**2, np.asarray(sim.time)))
    assert sol.objective == pytest.approx(reference, rel=2e-3)

    bad = ml.examples.parabola_study("release", w)
    bad.problem.set_state_info(Y, (-2, 2), 0.9)  # y(0) = 0.9 is off the curve y = x² at x(0) = −1
    with pytest.raises(ValueError, match=r"initial state .* violates the kinematic constraint '.*curve' "
                                         r"at the position level by 0\.1"):
        bad.solve()


def test_parabola_study_reaches_far_end_points():
    """``parabola_study("move", x_final=...)``: an end point higher than the default y bound (y = 2.25 at x = 1.5,
    lesson 04's question) is inside the problem's bounds and solvable; x_final outside x's bounds is refused by
    name."""
    study = ml.examples.parabola_study("move", x_final=1.5)
    info = study.problem.state_info(Y)
    assert info.final.lower == info.final.upper == pytest.approx(2.25) and info.bounds.upper >= 2.25
    study.solver.num_mesh_intervals = 10
    solution = study.solve()
    assert solution.success, solution.message
    assert solution.states[X][-1] == pytest.approx(1.5) and solution.states[Y][-1] == pytest.approx(2.25)
    default = ml.examples.parabola_study("move").problem.state_info(Y)
    assert (default.bounds.lower, default.bounds.upper) == (-2, 2)   # the default problem is unchanged
    with pytest.raises(ValueError, match=r"parabola_study: x_final must be within \(-2, 2\)"):
        ml.examples.parabola_study("move", x_final=2.5)
