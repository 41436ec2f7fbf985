"""Prescribed kinematics with and without kinematic constraints.

(The Moco paper and Moco's developer guide, "Prescribed kinematics".)

Two examples of the Moco papers, solved with :class:`moco_lab.inverse.Inverse` (Moco's ``MocoInverse``):

* a point mass prescribed on the circle ``(cos t, sin t)`` (no constraint): the applied forces are
  ``m a − m g⃗``, i.e. ``f_x = −m cos t``, ``f_y = −m sin t + m g``;
* a point mass on the line ``y = x`` (``φ = ty − tx``, ``G = ∂φ/∂q = (−1, 1)``) with ``x(t) = y(t) = sin t``:
  the multiplier λ keeps the mass on the line whatever the applied forces are.

moco_lab's residual is ``M u̇ + C − g − τ_applied + Gᵀλ = 0``, so for the line (both actuators with optimal
force 1, so control = force)::

    m ẍ = f_x − (Gᵀλ)_x = f_x + λ             (x row)
    m ÿ = f_y − m g − (Gᵀλ)_y = f_y − m g − λ  (y row)

and the force the line exerts on the mass is ``−Gᵀλ = (λ, −λ)``: perpendicular to the line's direction (1, 1).
Adding the rows eliminates λ: ``f_x + f_y = m (ẍ + ÿ + g)``, the only thing the motion fixes about the forces
(their component along the line). Everything else is chosen by the effort goal or the actuators available:

* both actuators, minimize ``∫ f_x² + f_y² dt``: at each instant minimize ``f_x² + f_y²`` subject to the sum
  above, so ``f_x = f_y = m (ẍ + ÿ + g) / 2`` (the applied force is tangent to the line) and, from the x row,
  ``λ = m ẍ − f_x = m (ẍ − ÿ − g) / 2``, which is ``−m g / 2`` here (ẍ = ÿ): the line carries the normal part
  of gravity;
* only ``force_x`` (``force_y`` bounded to 0): ``λ = −m (ÿ + g)`` (y row), ``f_x = m (ẍ + ÿ + g)``;
* only ``force_y``: ``λ = m ẍ`` (x row), ``f_y = m (ẍ + ÿ + g)``.
"""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.engine.collocation import CLASSICAL_SCHEMES as SCHEMES
from moco_lab.modeling.constraints import constraint_jacobian
from moco_lab.tools.inverse import Inverse, reserve_path

G = 9.80665
MASS = 2.0
TX, TY = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
AX, AY = "/jointset/tx/tx/accel", "/jointset/ty/ty/accel"
FX, FY = "/forceset/force_x", "/forceset/force_y"
LAMBDA = "/constraintset/curve/lambda_0"
TIGHT = dict(convergence_tolerance=1e-10, constraint_tolerance=1e-10)

T = 2 * np.pi
TIME = np.linspace(0.0, T, 201)  # one revolution / period, h = 0.0314 s
#: Interior of the data, away from the spline's end effects (see test_circle_forces_are_m_a_minus_gravity).
INSIDE = (0.5, T - 0.5)


def _line_data():
    return TIME, {TX: np.sin(TIME), TY: np.sin(TIME)}


def _circle_data():
    return TIME, {TX: np.cos(TIME), TY: np.sin(TIME)}


def _line_solution(scheme, disabled=None, **kwargs):
    model = ml.models.planar_point_mass("line", mass=MASS)
    if disabled is not None:  # an actuator that cannot act: control bounds [0, 0]
        (act,) = [a for a in model.actuators if a.path == disabled]
        act.min_control = act.max_control = 0.0
    inv = Inverse(model, _line_data(), mesh_interval=0.05, transcription_scheme=scheme, **TIGHT, **kwargs)
    result = inv.solve()
    assert result.success, result.solution.message
    return inv, result


@pytest.mark.parametrize("scheme", SCHEMES)
def test_line_equations_of_motion_and_the_minimum_effort_split(scheme):
    inv, result = _line_solution(scheme)
    s = result.solution
    # only controls and the multiplier are variables: 3 per grid point
    ip = inv.transcribe()
    assert ip.prog.num_vars() == 3 * ip.grid.num_points + 2  # f_x, f_y, λ per grid point; t0, tf
    assert ip.grid.num_points == (2 * 126 + 1 if scheme == "hermite-simpson" else 127)
    fx, fy, lam = s.controls[FX], s.controls[FY], s.multipliers[LAMBDA]
    ax, ay = s.derivatives[AX], s.derivatives[AY]  # the spline's accelerations, the ones the solver used
    # the constraint Jacobian the residual uses: G = (-1, 1) everywhere on the line
    Gs = np.array([constraint_jacobian(inv.model, q) for q in np.column_stack([s.states[TX], s.states[TY]])])
    np.testing.assert_allclose(Gs, np.broadcast_to([[-1.0, 1.0]], Gs.shape), atol=1e-12)
    # equations of motion, by hand: m ẍ = f_x − (Gᵀλ)_x, m ÿ = f_y − m g − (Gᵀλ)_y
    GTl = np.einsum("nlq,nl->nq", Gs, lam[:, None])
    np.testing.assert_allclose(MASS * ax, fx - GTl[:, 0], atol=1e-9)
    np.testing.assert_allclose(MASS * ay, fy - MASS * G - GTl[:, 1], atol=1e-9)
    # the line's force on the mass, −Gᵀλ, is perpendicular to the line (direction (1, 1)) ...
    constraint_force = -GTl
    np.testing.assert_allclose(constraint_force @ [1.0, 1.0], 0.0, atol=1e-12)
    # ... and so is what is left of m a after the applied forces (f and gravity), independent of λ's sign
    residual_force = MASS * np.column_stack([ax, ay]) - np.column_stack([fx, fy - MASS * G])
    np.testing.assert_allclose(residual_force @ [1.0, 1.0], 0.0, atol=1e-9)
    np.testing.assert_allclose(residual_force, constraint_force, atol=1e-9)
    # minimum effort: f_x = f_y = m (ẍ + ÿ + g) / 2 (tangent to the line), λ = m (ẍ − ÿ − g) / 2 = −m g / 2
    np.testing.assert_allclose(fx, MASS * (ax + ay + G) / 2, atol=1e-8)
    np.testing.assert_allclose(fy, MASS * (ax + ay + G) / 2, atol=1e-8)
    np.testing.assert_allclose(lam, MASS * (ax - ay - G) / 2, atol=1e-8)
    np.testing.assert_allclose(lam, -MASS * G / 2, atol=1e-8)
    # the objective is ∫ f_x² + f_y² dt = ∫ m² (ẍ + g/2)² · 2 dt -> 2 m² (π + g² π / 2) for ẍ = −sin t
    exact = 2 * MASS ** 2 * (np.pi + G ** 2 * np.pi / 2)
    assert s.objective == pytest.approx(exact, rel=1e-3 if scheme == "hermite-simpson" else 2e-3)
    # the net generalized forces the motion needs from actuators and constraints (τ − Gᵀλ): m ẍ, m ÿ + m g
    np.testing.assert_allclose(result.net_generalized_forces["tx"], MASS * ax, atol=1e-9)
    np.testing.assert_allclose(result.net_generalized_forces["ty"], MASS * (ay + G), atol=1e-9)
    np.testing.assert_allclose(inv.kinematics_on(s.time)[2][:, 0], ax, atol=1e-14)
    # away from the data's ends the spline's acceleration is −sin t
    inside = (s.time > INSIDE[0]) & (s.time < INSIDE[1])
    np.testing.assert_allclose(ax[inside], -np.sin(s.time[inside]), atol=1e-7)
    np.testing.assert_allclose(fx[inside], MASS * (-np.sin(s.time[inside]) + G / 2), atol=1e-6)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("disabled", [FY, FX])
def test_line_with_one_actuator_lambda_takes_up_the_rest(scheme, disabled):
    """The motion is still feasible with one actuator: λ adjusts to whatever the applied forces are."""
    both = _line_solution(scheme)[1].solution
    s = _line_solution(scheme, disabled=disabled)[1].solution
    fx, fy, lam = s.controls[FX], s.controls[FY], s.multipliers[LAMBDA]
    ax, ay = s.derivatives[AX], s.derivatives[AY]
    np.testing.assert_allclose(s.controls[disabled], 0.0, atol=1e-12)
    # same equations of motion (G = (−1, 1))
    np.testing.assert_allclose(MASS * ax, fx + lam, atol=1e-9)
    np.testing.assert_allclose(MASS * ay, fy - MASS * G - lam, atol=1e-9)
    if disabled == FY:  # y row: λ = −m (ÿ + g); x row: f_x = m (ẍ + ÿ + g)
        np.testing.assert_allclose(lam, -MASS * (ay + G), atol=1e-9)
        np.testing.assert_allclose(fx, MASS * (ax + ay + G), atol=1e-9)
    else:  # x row: λ = m ẍ; y row: f_y = m (ẍ + ÿ + g)
        np.testing.assert_allclose(lam, MASS * ax, atol=1e-9)
        np.testing.assert_allclose(fy, MASS * (ax + ay + G), atol=1e-9)
    # the tangential component (f_x + f_y) is fixed by the motion; only the split and λ change
    np.testing.assert_allclose(fx + fy, both.controls[FX] + both.controls[FY], atol=1e-8)
    assert np.max(np.abs(lam - both.multipliers[LAMBDA])) > 5.0
    # one actuator costs more than two sharing the tangential load: ∫ (2F)² ≥ ∫ 2 F²
    assert s.objective > 1.9 * both.objective


@pytest.mark.parametrize("scheme", SCHEMES)
def test_circle_forces_are_m_a_minus_gravity(scheme):
    """f = m a − m g⃗: f_x = −m cos t, f_y = −m sin t + m g.

    End effect: the kinematics are an interpolating quintic spline with natural end conditions
    (q''' = q'''' = 0, as Moco's GCV spline), but sin t has q''' = ∓1 at t = 0, 2π. With h = 0.0314 s the
    spline's acceleration is off by 0.021 (≈ 0.66 h |q'''|) at the ends, 6e-4 at 0.1 s, 1e-5 at 0.25 s and
    1e-8 at 0.5 s from them (cos t, with q'''(0) = 0, only by 2e-4 at the ends). Solving over a time range
    strictly inside the data removes it.
    """
    model = ml.models.planar_point_mass(None, mass=MASS)
    full = Inverse(model, _circle_data(), mesh_interval=0.05, transcription_scheme=scheme, **TIGHT)
    inner = Inverse(model, _circle_data(), mesh_interval=0.05, transcription_scheme=scheme,
                    initial_time=INSIDE[0], final_time=INSIDE[1], **TIGHT)
    assert inner.num_mesh_intervals == int(np.ceil((INSIDE[1] - INSIDE[0]) / 0.05))
    errors = {}
    for name, inv in (("full", full), ("inner", inner)):
        result = inv.solve()
        s = result.solution
        assert s.success, s.message
        ip = inv.transcribe()
        assert ip.prog.num_vars() == 2 * ip.grid.num_points + 2  # only the two controls (and t0, tf)
        assert s.multipliers == {}
        t = s.time
        err = np.abs(np.column_stack([s.controls[FX] + MASS * np.cos(t), s.controls[FY] + MASS * np.sin(t)
                                      - MASS * G]))
        errors[name] = (t, err.max(axis=1))
        # the net generalized forces (what actuators must supply) are the same m a − m g⃗
        np.testing.assert_allclose(result.net_generalized_forces["tx"], s.controls[FX], atol=1e-9)
        np.testing.assert_allclose(result.net_generalized_forces["ty"], s.controls[FY], atol=1e-9)
        # the prescribed states are inserted in the solution, speeds from the spline
        np.testing.assert_allclose(s.states[TX], np.cos(t), atol=1e-9)
        np.testing.assert_allclose(s.states["/jointset/ty/ty/speed"], np.cos(t), atol=3e-4)  # 1.7e-4 at the ends
    t, err = errors["inner"]
    assert t[0] == pytest.approx(INSIDE[0]) and t[-1] == pytest.approx(INSIDE[1])
    assert err.max() < 1e-7  # measured 1e-8 (the spline's interpolation error)
    t, err = errors["full"]
    assert 0.01 * MASS < err.max() < 0.03 * MASS  # the end effect: 0.021 m
    assert err[(t >= INSIDE[0]) & (t <= INSIDE[1])].max() < 1e-7


def test_weak_actuators_need_reserves_which_take_the_rest():
    """Control bounds ±1 N cannot hold a 1 kg mass up (≈ 9.8 N); without reserves the inverse is infeasible.

    Reserves with optimal force R = 0.1 and weight 1 (cost x_a² + x_r², force x_a + R x_r = F):
    x: |F| = |cos t| ≤ 1, so the unbounded split holds, reserve force R² F / (1 + R²) (1 % of the need);
    y: F = g − sin t ≥ 8.8, the actuator saturates at 1 and the reserve force is F − 1.
    """
    model = ml.models.planar_point_mass(None, mass=1.0)
    for a in model.actuators:
        a.min_control, a.max_control = -1.0, 1.0
    failed = Inverse(model, _circle_data(), mesh_interval=0.1, max_iterations=100).solve()
    assert not failed.success
    result = Inverse(model, _circle_data(), mesh_interval=0.1, reserves_optimal_force=0.1,
                     initial_time=INSIDE[0], final_time=INSIDE[1], **TIGHT).solve()
    assert result.success, result.solution.message
    s = result.solution
    R = 0.1
    rx, ry = result.reserve_forces[reserve_path("/jointset/tx/tx")], result.reserve_forces[reserve_path("/jointset/ty/ty")]
    np.testing.assert_allclose(rx, -np.cos(s.time) * R ** 2 / (1 + R ** 2), atol=1e-6)
    np.testing.assert_allclose(ry, G - np.sin(s.time) - 1.0, atol=1e-6)
    np.testing.assert_allclose(s.controls[FY], 1.0, atol=1e-6)
    share = {row.coordinate: row.share for row in result.reserve_report()}
    assert share["tx"] == pytest.approx(R ** 2 / (1 + R ** 2), rel=1e-4)
    need = G - np.sin(s.time)
    assert share["ty"] == pytest.approx(np.sqrt(np.mean((need - 1) ** 2) / np.mean(need ** 2)), rel=1e-4)
    assert "of the net generalized force of ty" in result.reserve_summary()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_kinematics_that_violate_the_constraint_raise(scheme):
    t = TIME
    off_line = (t, {TX: np.sin(t), TY: np.sin(t) + 0.1})  # y = x + 0.1: parallel to the line, 0.1 off
    inv = Inverse(ml.models.planar_point_mass("line"), off_line, transcription_scheme=scheme)
    with pytest.raises(ValueError, match=r"violate the model's kinematic constraints by up to 0\.1 .*project_positions"):
        inv.solve()
    # a violation below the 1e-6 threshold is accepted (data rounded to ~7 digits)
    nearly = (t, {TX: np.sin(t), TY: np.sin(t) + 5e-7})
    assert Inverse(ml.models.planar_point_mass("line"), nearly, mesh_interval=0.2,
                   transcription_scheme=scheme).solve().success
