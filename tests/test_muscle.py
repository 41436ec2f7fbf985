"""Tests of moco_lab.muscle (DeGrooteFregly2016Muscle).

Three groups:

* reference values from OpenSim's own unit test of the muscle
  (``testDeGrooteFregly2016Muscle.cpp``) and curve values tabulated from OpenSim 4.6, analytic derivatives against central
  finite differences, inverse curves, internal consistency of the rigid,
  explicit and implicit formulations;
* numpy and SymPy evaluation of the *same* functions agree (``sympy.lambdify``),
  the SymPy expressions are smooth (no ``Abs``/``Piecewise``/``sign``) and their
  symbolic derivatives equal the analytic ones;
* cross-validation against the real OpenSim 4.6 (``@pytest.mark.opensim``,
  skipped without the ``opensim`` package): curve methods, stiffnesses,
  activation dynamics, rigid-tendon fiber kinematics and forces, explicit
  tendon dynamics, the implicit residual and ``equilibrateMuscles``.

Agreement measured with OpenSim 4.6 (max over the sample points; asserted with
a margin):

==============================================  =======================  ===========================
quantity                                        measured                 asserted
==============================================  =======================  ===========================
f_L, f_V, f_V⁻¹, f_PE, f_T, f_T⁻¹ and their     0 (bit-identical) to     rel 1e-12
derivatives                                     3.5e-15 rel (f_L')
f_PE, f_T integrals                             abs 3e-16 (OpenSim's     rel 1e-12 + abs 1e-15
                                                form cancels near 0)
activation derivative (fresh process each)      abs 4.4e-16              rel 1e-12 + abs 1e-12
rigid tendon: l_M, v_M, α, f_L, f_V, F_M, F_T   0 .. 4.2e-16 rel         rel 1e-12
explicit ḟ_T, l_M, v_M, v_T, F (compliant)      ≤ 2e-15 rel              rel 1e-11
implicit residual (state and state-free)        abs 3.3e-16              abs 1e-12
equilibrium f̃_T (OpenSim bisects to 1e-10)      abs 7.2e-11              abs 1e-9
==============================================  =======================  ===========================

OpenSim 4.6 keeps τ_a, τ_d and the activation smoothing of the first DGF
muscle whose derivatives it evaluates in a process (static locals), so the
activation comparison runs OpenSim in fresh subprocesses (about 1.5 s).
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sympy
from sympy.printing.numpy import NumPyPrinter

from moco_lab.modeling import muscle as mus
from moco_lab.modeling.muscle import DeGrooteFregly2016Muscle as DGF

_REPO_ROOT = str(Path(__file__).resolve().parents[1])

DEFAULT = DGF()
#: Non-default curve parameters, pennation and damping: exercises every property.
VARIANT = DGF(name="variant", max_isometric_force=350.0, optimal_fiber_length=0.12, tendon_slack_length=0.25,
              pennation_angle_at_optimal=0.3, max_contraction_velocity=8.0, active_force_width_scale=1.5,
              fiber_damping=0.01, passive_fiber_strain_at_one_norm_force=0.45,
              tendon_strain_at_one_norm_force=0.10, activation_time_constant=0.02,
              deactivation_time_constant=0.05, activation_dynamics_smoothing=10.0)
MUSCLES = [DEFAULT, VARIANT]
IDS = ["default", "variant"]

LM = np.linspace(0.2, 1.8, 161)      # normalized fiber lengths
VM = np.linspace(-1.0, 1.0, 161)     # normalized fiber velocities
LT = np.linspace(0.97, 1.12, 151)    # normalized tendon lengths
FT = np.linspace(0.0, 5.0, 101)      # normalized tendon forces


def _rng():
    return np.random.default_rng(20240607)


# ============================================================================
# Properties, validation, adapter
# ============================================================================

def test_defaults_are_opensims():
    m = DGF()
    expected = dict(name="muscle", max_isometric_force=1000.0, optimal_fiber_length=0.1, tendon_slack_length=0.2,
                    pennation_angle_at_optimal=0.0, max_contraction_velocity=10.0, activation_time_constant=0.015,
                    deactivation_time_constant=0.060, activation_dynamics_smoothing=0.1, default_activation=0.5,
                    default_normalized_tendon_force=0.5, active_force_width_scale=1.0, fiber_damping=0.0,
                    ignore_passive_fiber_force=False, passive_fiber_strain_at_one_norm_force=0.6,
                    tendon_strain_at_one_norm_force=0.049, tendon_compliance_dynamics_mode="explicit",
                    ignore_tendon_compliance=False, ignore_activation_dynamics=False, min_control=0.0,
                    max_control=1.0)
    for key, value in expected.items():
        assert getattr(m, key) == value, key
    assert m.state_variable_names == ["activation", "normalized_tendon_force"]
    assert m.implicit_derivative_names == []
    imp = m.replace(tendon_compliance_dynamics_mode="implicit")
    assert imp.implicit_derivative_names == ["implicitderiv_normalized_tendon_force"]
    assert imp.implicit_residual_names == ["implicitresidual_normalized_tendon_force"]
    rigid = m.replace(ignore_tendon_compliance=True, ignore_activation_dynamics=True)
    assert rigid.state_variable_names == [] and rigid.implicit_derivative_names == []


@pytest.mark.parametrize("key, value, message", [
    ("max_isometric_force", -1.0, "max_isometric_force must be > 0"),
    ("optimal_fiber_length", 0.0, "optimal_fiber_length must be > 0"),
    ("tendon_slack_length", -0.1, "tendon_slack_length must be > 0"),
    ("pennation_angle_at_optimal", math.pi / 2, "pennation_angle_at_optimal must be in [0, pi/2)"),
    ("pennation_angle_at_optimal", -0.1, "pennation_angle_at_optimal"),
    ("max_contraction_velocity", 0.0, "max_contraction_velocity must be > 0"),
    ("activation_time_constant", 0.0, "activation_time_constant must be > 0"),
    ("deactivation_time_constant", -1.0, "deactivation_time_constant must be > 0"),
    ("activation_dynamics_smoothing", 0.0, "activation_dynamics_smoothing must be > 0"),
    ("default_activation", 0.0, "default_activation must be > 0"),
    ("default_normalized_tendon_force", 5.5, "default_normalized_tendon_force must be in [0, 5]"),
    ("active_force_width_scale", 0.9, "active_force_width_scale must be >= 1"),
    ("fiber_damping", -0.01, "fiber_damping must be >= 0"),
    ("passive_fiber_strain_at_one_norm_force", 0.0, "passive_fiber_strain_at_one_norm_force must be > 0"),
    ("tendon_strain_at_one_norm_force", -0.049, "tendon_strain_at_one_norm_force must be > 0"),
    ("tendon_compliance_dynamics_mode", "implicitly", "must be 'explicit' or 'implicit'"),
    ("ignore_tendon_compliance", 1, "must be a bool"),
    ("max_isometric_force", "10", "must be a real number"),
    ("max_isometric_force", float("nan"), "must be finite"),
    ("min_control", 2.0, "min_control (2.0) must be <= max_control"),
    ("name", "", "non-empty string"),
])
def test_validation(key, value, message):
    with pytest.raises(ValueError, match="DeGrooteFregly2016Muscle") as info:
        DGF(**{key: value})
    assert message in str(info.value)
    m = DGF()
    old = getattr(m, key)
    with pytest.raises(ValueError):
        setattr(m, key, value)        # assignment is validated too ...
    assert getattr(m, key) == old     # ... and a rejected value is not kept


def test_rigid_tendon_allows_zero_slack_length():
    assert DGF(ignore_tendon_compliance=True, tendon_slack_length=0.0).tendon_slack_length == 0.0
    m = DGF(max_isometric_force=10)
    m.fiber_damping = 0.01
    assert m.fiber_damping == 0.01 and m.max_isometric_force == 10.0


def test_module_docstring_examples():
    import doctest

    result = doctest.testmod(mus)
    assert result.failed == 0 and result.attempted > 0


def test_namespace_adapter():
    import math as pymath
    assert mus._ns(np).asin is np.arcsin
    assert mus._ns(sympy).asin is sympy.asin
    assert mus._ns("sympy").exp is sympy.exp
    assert mus._ns(pymath).asin is pymath.asin
    # plain floats through the math module give the numpy values
    assert mus.force_velocity_multiplier(0.3, xp=pymath) == pytest.approx(mus.force_velocity_multiplier(0.3),
                                                                          rel=1e-15)


# ============================================================================
# Reference values (De Groote et al. 2016)
# ============================================================================

def test_key_points():
    m = DEFAULT
    assert m.calc_active_force_length_multiplier(1.0) == pytest.approx(1.0, abs=1e-15)
    assert abs(m.calc_force_velocity_multiplier(-1.0)) < 1e-10
    assert m.calc_force_velocity_multiplier(0.0) == pytest.approx(1.0, abs=1e-12)
    assert m.calc_force_velocity_multiplier(1.0) == pytest.approx(1.794, rel=1e-3)
    assert m.calc_passive_force_multiplier(0.2) == pytest.approx(0.0, abs=1e-15)
    assert m.calc_passive_force_multiplier(1.0) == pytest.approx(0.0182288, abs=1e-4 * 0.0182288)
    assert m.calc_passive_force_multiplier(1.6) == pytest.approx(1.0, rel=1e-12)
    assert m.calc_tendon_force_multiplier(1.0) == 0.0
    assert m.calc_tendon_force_multiplier(1.049) == pytest.approx(1.0, rel=1e-10)
    assert m.tendon_stiffness_parameter == pytest.approx(36.5665, abs=1e-4)
    assert mus.tendon_stiffness_parameter(0.10) == pytest.approx(17.9176, abs=1e-4)
    assert VARIANT.calc_tendon_force_multiplier(1.10) == pytest.approx(1.0, rel=1e-12)
    assert VARIANT.calc_passive_force_multiplier(1.45) == pytest.approx(1.0, rel=1e-12)
    # the width scale keeps the peak at 1 and widens the curve
    assert VARIANT.calc_active_force_length_multiplier(1.0) == pytest.approx(1.0, abs=1e-15)
    assert VARIANT.calc_active_force_length_multiplier(1.5) > DEFAULT.calc_active_force_length_multiplier(1.5)


def test_tabulated_curve_values():
    m = DEFAULT
    lm = np.array([0.2, 0.5, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8])
    fl = [0.007736, 0.054112, 0.302103, 0.836440, 1.000000, 0.793690, 0.380243, 0.124255, 0.031282]
    fpe = [0, 0.000565, 0.001184, 0.004740, 0.018229, 0.069401, 0.263532, 1.000000, 3.793915]
    np.testing.assert_allclose(m.calc_active_force_length_multiplier(lm), fl, atol=6e-7)
    np.testing.assert_allclose(m.calc_passive_force_multiplier(lm), fpe, atol=6e-7)
    vm = np.array([-1, -0.5, -0.25, 0, 0.25, 0.5, 1])
    fv = [0, 0.234036, 0.470826, 1, 1.400766, 1.588423, 1.794343]
    np.testing.assert_allclose(m.calc_force_velocity_multiplier(vm), fv, atol=6e-7)
    lt = np.array([0.98, 1.00, 1.01, 1.02, 1.03, 1.04, 1.049, 1.06])
    ft = [-0.103746, 0, 0.088295, 0.215569, 0.399031, 0.663486, 1.000000, 1.594189]
    np.testing.assert_allclose(m.calc_tendon_force_multiplier(lt), ft, atol=6e-7)


def test_activation_reference_values():
    m, fast = DEFAULT, DEFAULT.replace(activation_dynamics_smoothing=10.0)
    assert m.calc_activation_derivative(0.0, 1.0) == pytest.approx(77.06, abs=5e-3)
    assert fast.calc_activation_derivative(0.0, 1.0) == pytest.approx(133.33, abs=5e-3)
    assert m.calc_activation_derivative(0.5, 0.0) == pytest.approx(-18.14, abs=5e-3)
    assert fast.calc_activation_derivative(0.5, 0.0) == pytest.approx(-10.42, abs=5e-3)
    assert m.calc_activation_derivative(1.0, 0.0) == pytest.approx(-33.33, abs=5e-3)
    assert fast.calc_activation_derivative(1.0, 0.0) == pytest.approx(-33.33, abs=5e-3)
    # vectorized over any broadcastable shapes
    a = np.linspace(0, 1, 5)[:, None]
    e = np.linspace(0, 1, 3)[None, :]
    out = m.calc_activation_derivative(a, e)
    assert out.shape == (5, 3)
    assert out[0, 0] == 0.0 and out[2, 1] == 0.0


def test_opensim_unit_test_cases_rigid_tendon():
    """OpenSim's testDeGrooteFregly2016Muscle checks (De Groote et al. 2016)."""
    m = DGF(max_isometric_force=30.0, optimal_fiber_length=0.1, tendon_slack_length=0.2,
            ignore_tendon_compliance=True)
    info = m.calc_muscle_info(1.0, 0.1 + 0.2, 0.0)
    fpe1 = m.calc_passive_force_multiplier(1.0)
    assert info.tendon_force == pytest.approx(30.0 * (1 + fpe1), rel=1e-14)
    assert info.normalized_fiber_length == pytest.approx(1.0, rel=1e-15)
    assert info.fiber_velocity == 0.0 and info.tendon_velocity == 0.0
    assert info.fiber_force / 30.0 == pytest.approx(1 + fpe1, rel=1e-14)  # "stress"
    F = m.rigid_tendon_force(1.0, 0.5 * 0.1 + 0.2, 0.0)
    expected = 30.0 * (m.calc_active_force_length_multiplier(0.5) + m.calc_passive_force_multiplier(0.5))
    assert F == pytest.approx(expected, rel=1e-14)
    assert m.calc_tendon_force(1.0, 0.25, 0.0) == F


def test_ignore_passive_fiber_force():
    m = DEFAULT.replace(ignore_passive_fiber_force=True, ignore_tendon_compliance=True)
    np.testing.assert_array_equal(m.calc_passive_force_multiplier(LM), 0.0)
    np.testing.assert_array_equal(m.calc_passive_force_multiplier_derivative(LM), 0.0)
    x = sympy.Symbol("x")
    assert m.calc_passive_force_multiplier(x, xp=sympy) == 0
    # isometric at optimal length, full activation: exactly F_max
    assert m.rigid_tendon_force(1.0, 0.1 + 0.2, 0.0) == pytest.approx(1000.0, rel=1e-14)


# ============================================================================
# Derivatives, inverses, integrals
# ============================================================================

def _curve_pairs(m):
    """(name, f, df, sample points) for every curve with an analytic derivative."""
    return [
        ("active_force_length", m.calc_active_force_length_multiplier,
         m.calc_active_force_length_multiplier_derivative, LM),
        ("force_velocity", m.calc_force_velocity_multiplier, m.calc_force_velocity_multiplier_derivative, VM),
        ("force_velocity_inverse", m.calc_force_velocity_inverse_curve,
         m.calc_force_velocity_inverse_curve_derivative, np.linspace(0.0, 1.79, 101)),
        ("passive_force", m.calc_passive_force_multiplier, m.calc_passive_force_multiplier_derivative, LM),
        ("passive_integral", m.calc_passive_force_multiplier_integral, m.calc_passive_force_multiplier, LM),
        ("tendon_force", m.calc_tendon_force_multiplier, m.calc_tendon_force_multiplier_derivative, LT),
        ("tendon_integral", m.calc_tendon_force_multiplier_integral, m.calc_tendon_force_multiplier, LT),
        ("tendon_inverse", m.calc_tendon_force_length_inverse_curve,
         lambda f: 1.0 / m.calc_tendon_force_multiplier_derivative(m.calc_tendon_force_length_inverse_curve(f)),
         FT),
    ]


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_derivatives_match_central_differences(m):
    h = 1e-6
    for name, f, df, x in _curve_pairs(m):
        fd = (f(x + h) - f(x - h)) / (2 * h)
        scale = max(1.0, np.max(np.abs(df(x))))
        np.testing.assert_allclose(df(x), fd, rtol=1e-7, atol=1e-8 * scale, err_msg=name)


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_inverse_curves_round_trip(m):
    # 5e-14: OpenSim's ln(t + sqrt(t² + 1)) loses digits to cancellation for t = d2 ṽ + d3 << 0
    np.testing.assert_allclose(m.calc_force_velocity_inverse_curve(m.calc_force_velocity_multiplier(VM)), VM,
                               rtol=0, atol=5e-14)
    np.testing.assert_allclose(m.calc_tendon_force_multiplier(m.calc_tendon_force_length_inverse_curve(FT)), FT,
                               rtol=5e-14, atol=1e-15)
    np.testing.assert_allclose(m.calc_tendon_force_length_inverse_curve(m.calc_tendon_force_multiplier(LT)), LT,
                               rtol=1e-15, atol=0)
    # inverse tendon-velocity relation: ṽ_T = ḟ_T / f_T'(l̃_T)
    vt = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(m.calc_tendon_force_length_inverse_curve_derivative(
        vt * m.calc_tendon_force_multiplier_derivative(1.03), 1.03), vt, rtol=1e-15, atol=1e-15)


def test_integrals_start_at_zero():
    assert DEFAULT.calc_passive_force_multiplier_integral(0.2) == pytest.approx(0.0, abs=1e-16)
    assert DEFAULT.calc_tendon_force_multiplier_integral(1.0) == pytest.approx(0.0, abs=1e-16)
    # against a quadrature
    from scipy.integrate import quad
    for m in MUSCLES:
        for upper in (0.7, 1.0, 1.6):
            assert m.calc_passive_force_multiplier_integral(upper) == pytest.approx(
                quad(m.calc_passive_force_multiplier, 0.2, upper, epsabs=0, epsrel=1e-13)[0], rel=1e-11)
        for upper in (0.98, 1.04, 1.1):
            assert m.calc_tendon_force_multiplier_integral(upper) == pytest.approx(
                quad(m.calc_tendon_force_multiplier, 1.0, upper, epsabs=0, epsrel=1e-13)[0], rel=1e-11)


# ============================================================================
# Musculotendon formulations: internal consistency
# ============================================================================

@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_rigid_fiber_kinematics(m):
    m = m.replace(ignore_tendon_compliance=True)
    rng = _rng()
    lmt = m.tendon_slack_length + m.optimal_fiber_length * rng.uniform(0.5, 1.5, 50)
    vmt = rng.uniform(-0.5, 0.5, 50)
    k = m.rigid_tendon_fiber_kinematics(lmt, vmt)
    # constant fiber height and l_M cos α = l_MT - l_slack
    w = m.optimal_fiber_length * math.sin(m.pennation_angle_at_optimal)
    np.testing.assert_allclose(k.fiber_length ** 2 - (lmt - m.tendon_slack_length) ** 2, w ** 2, atol=1e-15)
    np.testing.assert_allclose(k.fiber_length * k.cos_pennation_angle, lmt - m.tendon_slack_length, rtol=1e-14)
    # v_M = d l_M / dt along l_MT(t) = lmt + vmt t
    h = 1e-6
    fd = (m.rigid_tendon_fiber_kinematics(lmt + vmt * h, vmt).fiber_length
          - m.rigid_tendon_fiber_kinematics(lmt - vmt * h, vmt).fiber_length) / (2 * h)
    np.testing.assert_allclose(k.fiber_velocity, fd, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(k.normalized_fiber_velocity,
                               k.fiber_velocity / (m.max_contraction_velocity * m.optimal_fiber_length), rtol=1e-15)
    # pennation angular velocity = d α / dt
    info = m.calc_muscle_info(0.5, lmt, vmt)
    fd_alpha = (m.calc_muscle_info(0.5, lmt + vmt * h, vmt).pennation_angle
                - m.calc_muscle_info(0.5, lmt - vmt * h, vmt).pennation_angle) / (2 * h)
    np.testing.assert_allclose(info.pennation_angular_velocity, fd_alpha, rtol=1e-6, atol=1e-9)
    # the general routine agrees with the rigid shortcut
    np.testing.assert_allclose(info.tendon_force, m.rigid_tendon_force(0.5, lmt, vmt), rtol=1e-15)
    np.testing.assert_allclose(info.normalized_tendon_force * m.max_isometric_force, info.tendon_force, rtol=1e-15)


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_explicit_and_implicit_tendon_dynamics_agree(m):
    """Plugging the explicit ḟ_T into the implicit residual gives -β ṽ_M cos α (0 without damping)."""
    rng = _rng()
    n = 40
    # Build consistent states from the fiber side: a, l̃_M, ṽ_M give f̃_T (without damping).
    a = rng.uniform(0.05, 1.0, n)
    lm = m.optimal_fiber_length * rng.uniform(0.6, 1.5, n)
    vm_norm = rng.uniform(-0.9, 0.9, n)
    w = m.fiber_width
    cos_a = np.sqrt(lm ** 2 - w ** 2) / lm
    ftn = (a * m.calc_active_force_length_multiplier(lm / m.optimal_fiber_length)
           * m.calc_force_velocity_multiplier(vm_norm)
           + m.calc_passive_force_multiplier(lm / m.optimal_fiber_length)) * cos_a
    lt = m.calc_tendon_force_length_inverse_curve(ftn)
    lmt = m.tendon_slack_length * lt + lm * cos_a
    vmt = rng.uniform(-0.3, 0.3, n)
    exp_info = m.calc_muscle_info(a, lmt, vmt, ftn, mode="explicit")
    np.testing.assert_allclose(exp_info.fiber_length, lm, rtol=1e-13)
    np.testing.assert_allclose(exp_info.normalized_fiber_velocity, vm_norm, rtol=1e-10, atol=1e-12)
    dftn = m.calc_normalized_tendon_force_derivative(a, lmt, vmt, ftn)
    np.testing.assert_array_equal(dftn, exp_info.normalized_tendon_force_derivative)
    res = m.calc_implicit_residual(a, lmt, vmt, ftn, dftn)
    np.testing.assert_allclose(res, -m.fiber_damping * exp_info.normalized_fiber_velocity
                               * exp_info.cos_pennation_angle, atol=2e-14)
    imp_info = m.calc_muscle_info(a, lmt, vmt, ftn, dftn, mode="implicit")
    np.testing.assert_allclose(imp_info.fiber_velocity, exp_info.fiber_velocity, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(imp_info.tendon_velocity, exp_info.tendon_velocity, rtol=1e-11, atol=1e-14)
    # ḟ_T = d f_T(l̃_T)/dt: f_T'(l̃_T) v_T / l_slack
    np.testing.assert_allclose(dftn, m.calc_tendon_force_multiplier_derivative(lt)
                               * exp_info.tendon_velocity / m.tendon_slack_length, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(exp_info.tendon_force, m.compliant_tendon_force(ftn), rtol=1e-15)


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_equilibrium(m):
    lmt = m.tendon_slack_length + m.optimal_fiber_length * np.linspace(0.7, 1.4, 8)
    for a, v in [(1.0, 0.0), (0.3, 0.0), (0.5, 0.05), (0.8, -0.1)]:
        ftn = m.calc_equilibrium_normalized_tendon_force(a, lmt, v)
        assert ftn.shape == lmt.shape
        res = m.calc_implicit_residual(a, lmt, v, ftn, 0.0)
        np.testing.assert_allclose(res, 0.0, atol=1e-13)
    scalar = m.calc_equilibrium_normalized_tendon_force(1.0, lmt[3])
    assert np.ndim(scalar) == 0
    with pytest.raises(ValueError, match="same sign"):
        m.calc_equilibrium_normalized_tendon_force(1.0, m.tendon_slack_length * 2 + m.optimal_fiber_length * 10)


def test_formulation_errors():
    rigid = DEFAULT.replace(ignore_tendon_compliance=True)
    with pytest.raises(ValueError, match="compliant tendon"):
        rigid.calc_implicit_residual(1, 0.3, 0, 0.5, 0)
    with pytest.raises(ValueError, match="ignore_tendon_compliance=True"):
        DEFAULT.rigid_tendon_force(1, 0.3, 0)
    with pytest.raises(ValueError, match="norm_tendon_force is required"):
        DEFAULT.calc_muscle_info(1, 0.3, 0)
    with pytest.raises(ValueError, match="implicit mode needs"):
        DEFAULT.calc_muscle_info(1, 0.3, 0, 0.5, mode="implicit")
    assert rigid.calc_tendon_stiffness(1.0) == math.inf


# ============================================================================
# numpy and SymPy
# ============================================================================

_FORBIDDEN = (sympy.Abs, sympy.sign, sympy.Piecewise, sympy.Heaviside, sympy.Max, sympy.Min)


def _assert_smooth(expr):
    assert not expr.has(*_FORBIDDEN), f"non-smooth function in {expr}"


class _ExactFloatPrinter(NumPyPrinter):
    """SymPy prints a 53-bit Float with 15 significant digits (0.8150671134243542 -> 0.815067113424354),
    which perturbs constants by ~1e-16 relative and, where terms cancel (f_L'(1)), results by ~1e-12.
    ``repr(float(.))`` round-trips exactly."""

    def _print_Float(self, expr):
        return repr(float(expr))


_PRINTER = _ExactFloatPrinter({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True})


def _check_same(expr, symbols, numpy_value, *points, rtol=1e-12, atol=1e-14):
    _assert_smooth(expr)
    fn = sympy.lambdify(symbols, expr, modules="numpy", printer=_PRINTER)
    np.testing.assert_allclose(fn(*points) + 0 * points[0], numpy_value, rtol=rtol, atol=atol)


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_curves_numpy_and_sympy_agree(m):
    x = sympy.Symbol("x")
    for name, f, df, pts in _curve_pairs(m):
        _check_same(f(x, xp=sympy), x, f(pts), pts)
        if name != "tendon_inverse":
            _check_same(df(x, xp=sympy), x, df(pts), pts)
    _check_same(m.calc_tendon_force_length_inverse_curve_derivative(x, 1.02, xp=sympy), x,
                m.calc_tendon_force_length_inverse_curve_derivative(FT, 1.02), FT)


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_sympy_derivatives_equal_analytic(m):
    """d/dx of the SymPy curve expression equals the analytic derivative function."""
    x = sympy.Symbol("x")
    for _name, f, df, pts in _curve_pairs(m):
        d_expr = sympy.diff(f(x, xp=sympy), x)
        _check_same(d_expr, x, df(pts), pts, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_dynamics_numpy_and_sympy_agree(m):
    a, e, l, v, f, d = sympy.symbols("a e l v f d", real=True)
    rng = _rng()
    n = 30
    A = rng.uniform(0.05, 1, n)
    E = rng.uniform(0, 1, n)
    V = rng.uniform(-0.3, 0.3, n)
    F = rng.uniform(0.05, 1.5, n)
    D = rng.uniform(-5, 5, n)
    L = m.tendon_slack_length * m.calc_tendon_force_length_inverse_curve(F) \
        + m.optimal_fiber_length * rng.uniform(0.7, 1.3, n)
    _check_same(m.calc_activation_derivative(a, e, xp=sympy), (a, e), m.calc_activation_derivative(A, E), A, E)

    rigid = m.replace(ignore_tendon_compliance=True)
    LR = rigid.tendon_slack_length + rigid.optimal_fiber_length * rng.uniform(0.5, 1.5, n)
    expr = rigid.rigid_tendon_force(a, l, v, xp=sympy)
    _check_same(expr, (a, l, v), rigid.rigid_tendon_force(A, LR, V), A, LR, V)
    # symbolic gradient of the tendon force vs finite differences of the numpy version
    h = 1e-7
    for sym, bump in ((l, (0, h, 0)), (v, (0, 0, h)), (a, (h, 0, 0))):
        fd = (rigid.rigid_tendon_force(A + bump[0], LR + bump[1], V + bump[2])
              - rigid.rigid_tendon_force(A - bump[0], LR - bump[1], V - bump[2])) / (2 * h)
        _check_same(sympy.diff(expr, sym), (a, l, v), fd, A, LR, V, rtol=1e-6, atol=1e-6 * np.max(np.abs(fd)))

    expr = m.calc_normalized_tendon_force_derivative(a, l, v, f, xp=sympy)
    _check_same(expr, (a, l, v, f), m.calc_normalized_tendon_force_derivative(A, L, V, F), A, L, V, F,
                rtol=1e-11, atol=1e-12)
    expr = m.calc_implicit_residual(a, l, v, f, d, xp=sympy)
    _check_same(expr, (a, l, v, f, d), m.calc_implicit_residual(A, L, V, F, D), A, L, V, F, D)
    info = m.calc_muscle_info(a, l, v, f, d, mode="implicit", xp=sympy)
    for key in ("fiber_length", "pennation_angle", "fiber_velocity", "fiber_force", "pennation_angular_velocity"):
        _check_same(getattr(info, key), (a, l, v, f, d),
                    getattr(m.calc_muscle_info(A, L, V, F, D, mode="implicit"), key), A, L, V, F, D)


def test_symbolic_muscle_info_in_every_mode_equals_numeric():
    """The SymPy construction of every mode (once minutes long, from ``0.0 * expr``) gives the numeric values."""
    a, l, v, f, d = sympy.symbols("a l v f d", real=True)
    point = {a: 0.6, l: 0.3, v: -0.2, f: 0.7, d: 0.4}
    for m in MUSCLES:
        lm = m.optimal_fiber_length + m.tendon_slack_length  # a length where every curve is well defined
        point[l] = lm
        cases = [(m, dict(mode="explicit"), (a, l, v, f)), (m, dict(mode="implicit"), (a, l, v, f, d)),
                 (m.replace(ignore_tendon_compliance=True), {}, (a, l, v))]
        for muscle, kw, args in cases:
            sym = muscle.calc_muscle_info(*args, xp=sympy, **kw)
            num = muscle.calc_muscle_info(*[point[s] for s in args], **kw)
            for key in ("fiber_length", "fiber_velocity", "tendon_force"):
                expected = getattr(num, key)
                got = float(getattr(sym, key).subs(point)) if hasattr(getattr(sym, key), "subs") \
                    else float(getattr(sym, key))
                assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (muscle.name, kw, key)


def test_unpennated_fiber_length_is_smooth():
    """With α_opt = 0 the fiber length is l_MT - l_T, not sqrt((l_MT - l_T)²) = |l_MT - l_T|."""
    l, v, a = sympy.symbols("l v a", real=True)
    m = DEFAULT.replace(ignore_tendon_compliance=True)
    k = m.rigid_tendon_fiber_kinematics(l, v, xp=sympy)
    assert sympy.simplify(k.fiber_length - (l - m.tendon_slack_length)) == 0
    assert k.cos_pennation_angle == 1
    _assert_smooth(m.rigid_tendon_force(a, l, v, xp=sympy))


# ============================================================================
# Cross-validation with the real OpenSim 4.6
# ============================================================================

@pytest.fixture(scope="module")
def osim():
    return pytest.importorskip("opensim")


def _osim_muscle(osim, m):
    om = m.to_opensim()
    om.finalizeFromProperties()
    return om


def _rel_err(ours, theirs, floor=1e-300):
    """max |ours - theirs| / max(|theirs|, floor); both must be finite."""
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    assert np.all(np.isfinite(ours)) and np.all(np.isfinite(theirs)), (ours, theirs)
    return float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), floor)))


@pytest.mark.opensim
def test_to_and_from_opensim(osim):
    for m in MUSCLES + [DEFAULT.replace(name="r", ignore_tendon_compliance=True, ignore_activation_dynamics=True,
                                        tendon_compliance_dynamics_mode="implicit", ignore_passive_fiber_force=True,
                                        min_control=0.01, max_control=0.9)]:
        assert DGF.from_opensim(m.to_opensim()) == m
    assert DGF.from_opensim(osim.DeGrooteFregly2016Muscle()) == DGF()


@pytest.mark.opensim
@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_curves_match_opensim(osim, m):
    om = _osim_muscle(osim, m)
    checks = [
        (om.calcActiveForceLengthMultiplier, m.calc_active_force_length_multiplier, LM),
        (om.calcActiveForceLengthMultiplierDerivative, m.calc_active_force_length_multiplier_derivative, LM),
        (om.calcForceVelocityMultiplier, m.calc_force_velocity_multiplier, VM),
        (om.calcForceVelocityInverseCurve, m.calc_force_velocity_inverse_curve, np.linspace(0.0, 1.79, 80)),
        (om.calcPassiveForceMultiplier, m.calc_passive_force_multiplier, LM[1:]),
        (om.calcPassiveForceMultiplierDerivative, m.calc_passive_force_multiplier_derivative, LM),
        (om.calcTendonForceMultiplier, m.calc_tendon_force_multiplier, LT),
        (om.calcTendonForceMultiplierDerivative, m.calc_tendon_force_multiplier_derivative, LT),
        (om.calcTendonForceLengthInverseCurve, m.calc_tendon_force_length_inverse_curve, FT),
        # The integrals are written differently (OpenSim's form cancels terms of order 1 near the
        # lower limit, ours does not; ours matches quadrature to 1e-11): compare with atol 1e-15.
        (om.calcPassiveForceMultiplierIntegral, m.calc_passive_force_multiplier_integral, LM),
        (om.calcTendonForceMultiplierIntegral, m.calc_tendon_force_multiplier_integral, LT),
    ]
    for theirs_fn, ours_fn, x in checks:
        theirs = np.array([theirs_fn(float(xi)) for xi in x])
        atol = 1e-15 if "Integral" in theirs_fn.__name__ else 1e-16   # 1e-16: at the curves' zeros
        np.testing.assert_allclose(ours_fn(x), theirs, rtol=1e-12, atol=atol, err_msg=theirs_fn.__name__)
    # normalized tendon velocity from ḟ_T
    for dft in (-3.0, 0.5, 7.0):
        assert m.calc_tendon_force_length_inverse_curve_derivative(dft, 1.03) == pytest.approx(
            om.calcTendonForceLengthInverseCurveDerivative(dft, 1.03), rel=1e-13)


@pytest.mark.opensim
@pytest.mark.parametrize("m", MUSCLES, ids=IDS)
def test_stiffness_matches_opensim(osim, m):
    om = _osim_muscle(osim, m)
    for a, lm, fv in [(0.3, 0.8, 0.7), (1.0, 1.2, 1.3), (0.05, 1.5, 1.0)]:
        assert m.calc_fiber_stiffness(a, lm, fv) == pytest.approx(om.calcFiberStiffness(a, lm, fv), rel=1e-12)
    for lt in (1.0, 1.02, 1.05):
        assert m.calc_tendon_stiffness(lt) == pytest.approx(om.calcTendonStiffness(lt), rel=1e-12)


# -- models -------------------------------------------------------------------

def _point_mass_model(osim, muscles):
    """``ModelFactory.createPlanarPointMass()`` (actuators removed) with straight muscles.

    ``muscles``: list of (DGF, origin in ground); each inserts at the body origin.
    """
    model = osim.ModelFactory.createPlanarPointMass()
    fs = model.updForceSet()
    while fs.getSize():
        fs.remove(0)
    body = model.getBodySet().get("body")
    for m, origin in muscles:
        om = m.to_opensim()
        om.addNewPathPoint("origin", model.getGround(), osim.Vec3(*origin))
        om.addNewPathPoint("insertion", body, osim.Vec3(0, 0, 0))
        model.addForce(om)
    state = model.initSystem()
    handles = [osim.DeGrooteFregly2016Muscle.safeDownCast(model.getForceSet().get(m.name)) for m, _ in muscles]
    return model, state, handles


def _set_kinematics(model, state, tx, ty, vx, vy):
    cs = model.getCoordinateSet()
    cs.get("tx").setValue(state, tx, False)
    cs.get("ty").setValue(state, ty, False)
    cs.get("tx").setSpeedValue(state, vx)
    cs.get("ty").setSpeedValue(state, vy)


def _kinematic_samples(n=12, compliant=False):
    """(tx, ty, tx speed, ty speed, activation) samples.

    Compliant tendons: a smaller region, in which every muscle's fiber stays in
    about l̃_M ∈ [0.45, 1.2] so that equilibrium exists on [0, 5].
    """
    rng = _rng()
    if compliant:
        return list(zip(rng.uniform(-0.05, 0.05, n), rng.uniform(-0.2, -0.15, n), rng.uniform(-0.3, 0.3, n),
                        rng.uniform(-0.3, 0.3, n), rng.uniform(0.3, 1.0, n)))
    return list(zip(rng.uniform(-0.1, 0.1, n), rng.uniform(-0.3, -0.12, n), rng.uniform(-0.5, 0.5, n),
                    rng.uniform(-0.5, 0.5, n), rng.uniform(0.05, 1.0, n)))


_ORIGINS = [(-0.2, 0.0, 0.0), (0.0, 0.0, 0.0), (0.2, 0.0, 0.0)]


def _suspended_mass_like(**kwargs):
    """The three muscles of VERIFICATION.md (c), optionally modified."""
    return [DGF("left", max_isometric_force=10, optimal_fiber_length=0.20, tendon_slack_length=0.10, **kwargs),
            DGF("middle", max_isometric_force=10, optimal_fiber_length=0.09, tendon_slack_length=0.10, **kwargs),
            DGF("right", max_isometric_force=20, optimal_fiber_length=0.21, tendon_slack_length=0.09, **kwargs)]


_RIGID_SETS = {
    "suspended_mass": dict(ignore_tendon_compliance=True),
    "pennated_damped": dict(ignore_tendon_compliance=True, pennation_angle_at_optimal=0.3, fiber_damping=0.01,
                            active_force_width_scale=1.5, passive_fiber_strain_at_one_norm_force=0.45,
                            max_contraction_velocity=6.0),
}


@pytest.mark.opensim
@pytest.mark.parametrize("variant", list(_RIGID_SETS))
def test_rigid_tendon_matches_opensim(osim, variant):
    ours = _suspended_mass_like(**_RIGID_SETS[variant])
    model, state, handles = _point_mass_model(osim, list(zip(ours, _ORIGINS)))
    worst = 0.0
    for tx, ty, vx, vy, act in _kinematic_samples():
        _set_kinematics(model, state, tx, ty, vx, vy)
        for om in handles:
            om.setActivation(state, act)
        model.realizeDynamics(state)
        for m, om in zip(ours, handles):
            lmt, vmt = om.getLength(state), om.getLengtheningSpeed(state)
            k = m.rigid_tendon_fiber_kinematics(lmt, vmt)
            info = m.calc_muscle_info(act, lmt, vmt)
            pairs = [
                (k.fiber_length, om.getFiberLength(state)),
                (k.fiber_velocity, om.getFiberVelocity(state)),
                (k.normalized_fiber_length, om.getNormalizedFiberLength(state)),
                (k.normalized_fiber_velocity, om.getNormalizedFiberVelocity(state)),
                (k.cos_pennation_angle, om.getCosPennationAngle(state)),
                (m.rigid_tendon_force(act, lmt, vmt), om.getTendonForce(state)),
                (info.fiber_force, om.getFiberForce(state)),
                (info.active_fiber_force, om.getActiveFiberForce(state)),
                (info.passive_fiber_damping_force + 1e-300, om.getPassiveFiberDampingForce(state) + 1e-300),
                (info.active_force_length_multiplier, om.getActiveForceLengthMultiplier(state)),
                (info.force_velocity_multiplier, om.getForceVelocityMultiplier(state)),
                (info.passive_force_multiplier, om.getPassiveForceMultiplier(state)),
                (info.pennation_angle + 1e-300, om.getPennationAngle(state) + 1e-300),
                (info.pennation_angular_velocity + 1e-300, om.getPennationAngularVelocity(state) + 1e-300),
            ]
            for ours_v, theirs_v in pairs:
                worst = max(worst, _rel_err(ours_v, theirs_v, floor=1e-12))
            assert om.getTendonForce(state) == pytest.approx(m.rigid_tendon_force(act, lmt, vmt), rel=1e-12)
    assert worst < 1e-12


@pytest.mark.opensim
@pytest.mark.parametrize("variant", ["default", "pennated_damped"])
def test_compliant_tendon_matches_opensim(osim, variant):
    """Explicit ḟ_T, fiber kinematics and forces; implicit residual; equilibrium (also with ḟ_T = 0 on the explicit
    muscle, Moco's initial force equilibrium)."""
    extra = {} if variant == "default" else dict(pennation_angle_at_optimal=0.3, fiber_damping=0.01,
                                                 active_force_width_scale=1.5, tendon_strain_at_one_norm_force=0.1)
    explicit = _suspended_mass_like(**extra)
    implicit = [m.replace(tendon_compliance_dynamics_mode="implicit") for m in explicit]
    model_e, state_e, handles_e = _point_mass_model(osim, list(zip(explicit, _ORIGINS)))
    model_i, state_i, handles_i = _point_mass_model(osim, list(zip(implicit, _ORIGINS)))
    rng = _rng()
    worst_exp = worst_res = worst_lin = 0.0
    for tx, ty, vx, vy, act in _kinematic_samples(compliant=True):
        _set_kinematics(model_e, state_e, tx, ty, vx, vy)
        _set_kinematics(model_i, state_i, tx, ty, vx, vy)
        model_e.realizeVelocity(state_e)
        # near-equilibrium tendon forces keep the explicit force-velocity inversion in range
        ftns = [m.calc_equilibrium_normalized_tendon_force(act, om.getLength(state_e))
                * rng.uniform(0.9, 1.1) for m, om in zip(explicit, handles_e)]
        dftns = rng.uniform(-10, 10, 3)
        for om, ftn in zip(handles_e, ftns):
            om.setActivation(state_e, act)
            om.setNormalizedTendonForce(state_e, ftn)
        for om, ftn, dftn in zip(handles_i, ftns, dftns):
            om.setActivation(state_i, act)
            om.setNormalizedTendonForce(state_i, ftn)
            om.setDiscreteVariableValue(state_i, "implicitderiv_normalized_tendon_force", dftn)
        model_e.realizeAcceleration(state_e)
        model_i.realizeDynamics(state_i)
        for m, om, ftn in zip(explicit, handles_e, ftns):
            lmt, vmt = om.getLength(state_e), om.getLengtheningSpeed(state_e)
            info = m.calc_muscle_info(act, lmt, vmt, ftn)
            theirs = om.getStateVariableDerivativeValue(state_e, "normalized_tendon_force")
            ours = m.calc_normalized_tendon_force_derivative(act, lmt, vmt, ftn)
            assert ours == info.normalized_tendon_force_derivative
            pairs = [(ours, theirs),
                     (info.fiber_length, om.getFiberLength(state_e)),
                     (info.tendon_length, om.getTendonLength(state_e)),
                     (info.fiber_velocity, om.getFiberVelocity(state_e)),
                     (info.tendon_velocity, om.getTendonVelocity(state_e)),
                     (info.force_velocity_multiplier, om.getForceVelocityMultiplier(state_e)),
                     (info.fiber_force, om.getFiberForce(state_e)),
                     (info.tendon_force, om.getTendonForce(state_e))]
            for o, t in pairs:
                worst_exp = max(worst_exp, _rel_err(o, t, floor=1e-12))
            # the force equilibrium with the tendon force held, as Moco's MocoInitialForceEquilibriumDGFGoal asks
            # OpenSim's explicit-tendon muscle for it (moco_lab's muscles' "equilibrium_residual" output)
            worst_res = max(worst_res, abs(m.calc_implicit_residual(act, lmt, vmt, ftn, 0.0)
                                           - om.calcEquilibriumResidual(lmt, vmt, act, ftn, 0.0)))
            # the linearized equilibrium's derivative (MocoInitialVelocityEquilibriumDGFGoal), N/s
            theirs = om.calcLinearizedEquilibriumResidualDerivative(lmt, vmt, act, ftn, 0.0)
            worst_lin = max(worst_lin, _rel_err(m.calc_linearized_equilibrium_residual_derivative(act, lmt, vmt, ftn),
                                                theirs, floor=1e-6))
        for m, om, ftn, dftn in zip(implicit, handles_i, ftns, dftns):
            lmt, vmt = om.getLength(state_i), om.getLengtheningSpeed(state_i)
            ours = m.calc_implicit_residual(act, lmt, vmt, ftn, dftn)
            theirs = om.getImplicitResidualNormalizedTendonForce(state_i)
            state_free = om.calcEquilibriumResidual(lmt, vmt, act, ftn, dftn)
            worst_res = max(worst_res, abs(ours - theirs), abs(ours - state_free))
            info = m.calc_muscle_info(act, lmt, vmt, ftn, dftn)
            worst_res = max(worst_res, _rel_err(info.fiber_velocity, om.getFiberVelocity(state_i), floor=1e-12))
            theirs = om.calcLinearizedEquilibriumResidualDerivative(lmt, vmt, act, ftn, dftn)
            worst_lin = max(worst_lin, _rel_err(m.calc_linearized_equilibrium_residual_derivative(
                act, lmt, vmt, ftn, dftn), theirs, floor=1e-6))
    assert worst_exp < 1e-11
    assert worst_res < 1e-12
    assert worst_lin < 1e-10


@pytest.mark.opensim
@pytest.mark.parametrize("variant", ["default", "pennated_damped"])
def test_equilibrium_matches_opensim(osim, variant):
    extra = {} if variant == "default" else dict(pennation_angle_at_optimal=0.3, fiber_damping=0.01,
                                                 active_force_width_scale=1.5, tendon_strain_at_one_norm_force=0.1)
    ours = _suspended_mass_like(**extra)
    model, state, handles = _point_mass_model(osim, list(zip(ours, _ORIGINS)))
    worst = 0.0
    for i, (tx, ty, vx, vy, act) in enumerate(_kinematic_samples(8, compliant=True)):
        if i % 2 == 0:
            vx = vy = 0.0          # static equilibrium, and with motion (ḟ_T = 0 as OpenSim)
        _set_kinematics(model, state, tx, ty, vx, vy)
        for om in handles:
            om.setActivation(state, act)
        model.equilibrateMuscles(state)
        model.realizeVelocity(state)
        for m, om in zip(ours, handles):
            lmt, vmt = om.getLength(state), om.getLengtheningSpeed(state)
            ftn = m.calc_equilibrium_normalized_tendon_force(act, lmt, vmt)
            theirs = om.getNormalizedTendonForce(state)
            worst = max(worst, abs(float(ftn) - theirs))
            # the fiber length follows from f̃_T
            lm = m.calc_muscle_info(act, lmt, vmt, ftn, 0.0, mode="implicit").fiber_length
            assert lm == pytest.approx(om.getFiberLength(state), rel=1e-8)
    assert worst < 1e-9


_ACTIVATION_SCRIPT = textwrap.dedent(r"""
    import json, sys
    import numpy as np
    import opensim as osim
    sys.path.insert(0, sys.argv[1])
    from moco_lab.modeling.muscle import DeGrooteFregly2016Muscle as DGF

    out = []
    for props in json.loads(sys.argv[2]):
        m = DGF(**props)
        model = osim.ModelFactory.createPlanarPointMass()
        fs = model.updForceSet()
        while fs.getSize():
            fs.remove(0)
        om = m.to_opensim()
        om.addNewPathPoint("origin", model.getGround(), osim.Vec3(-0.2, 0, 0))
        om.addNewPathPoint("insertion", model.getBodySet().get("body"), osim.Vec3(0))
        model.addForce(om)
        state = model.initSystem()
        om = osim.DeGrooteFregly2016Muscle.safeDownCast(model.getForceSet().get(m.name))
        rows = []
        for a in np.linspace(0.0, 1.0, 6):
            for e in np.linspace(0.0, 1.0, 5):
                om.setActivation(state, float(a))
                model.realizeVelocity(state)
                controls = model.updControls(state)
                controls.set(0, float(e))
                model.setControls(state, controls)
                model.realizeAcceleration(state)
                assert om.getControl(state) == e
                rows.append([a, e, om.getStateVariableDerivativeValue(state, "activation")])
        out.append(rows)
    print(json.dumps(out))
""")


def _opensim_activation_derivatives(prop_sets):
    """Run in a fresh interpreter: OpenSim 4.6 freezes τ_a, τ_d, b per process (static locals)."""
    proc = subprocess.run([sys.executable, "-c", _ACTIVATION_SCRIPT, _REPO_ROOT, json.dumps(prop_sets)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [np.array(rows) for rows in json.loads(proc.stdout.strip().splitlines()[-1])]


_ACT_BASE = dict(ignore_tendon_compliance=True, max_isometric_force=10, optimal_fiber_length=0.2,
                 tendon_slack_length=0.1)
_ACT_OTHER = dict(activation_time_constant=0.02, deactivation_time_constant=0.05, activation_dynamics_smoothing=10.0)


@pytest.mark.opensim
def test_activation_derivative_matches_opensim(osim):
    """Default and non-default constants, each in a fresh OpenSim process.

    Also documents OpenSim 4.6's static-local caveat (De Groote et al. 2016): a second
    DGF muscle in the same process is integrated with the *first* muscle's
    τ_a, τ_d and smoothing, whatever its own properties say.
    """
    (default_rows,) = _opensim_activation_derivatives([dict(name="m", **_ACT_BASE)])
    other_rows, second_rows = _opensim_activation_derivatives([dict(name="m", **_ACT_BASE, **_ACT_OTHER),
                                                               dict(name="m", **_ACT_BASE)])
    default, other = DGF(**_ACT_BASE), DGF(**_ACT_BASE, **_ACT_OTHER)
    for m, rows in ((default, default_rows), (other, other_rows)):
        ours = m.calc_activation_derivative(rows[:, 0], rows[:, 1])
        np.testing.assert_allclose(ours, rows[:, 2], rtol=1e-12, atol=1e-12)
    # The caveat: the second (default-property) muscle got the first muscle's constants.
    np.testing.assert_allclose(second_rows[:, 2], other_rows[:, 2], rtol=1e-15, atol=0)
    assert not np.allclose(second_rows[:, 2], default_rows[:, 2])


def test_pydrake_symbolic_namespace():
    """The same functions also build pydrake.symbolic expressions."""
    ds = pytest.importorskip("pydrake.symbolic")
    m = VARIANT
    a, l, v, f, d = (ds.Variable(n) for n in "alvfd")
    env = {a: 0.5, l: 0.4, v: 0.1, f: 0.4, d: 2.0}
    args = (0.5, 0.4, 0.1, 0.4, 2.0)
    assert m.calc_implicit_residual(a, l, v, f, d, xp=ds).Evaluate(env) == pytest.approx(
        m.calc_implicit_residual(*args), rel=1e-14)
    assert m.calc_normalized_tendon_force_derivative(a, l, v, f, xp=ds).Evaluate(env) == pytest.approx(
        m.calc_normalized_tendon_force_derivative(*args[:4]), rel=1e-13)
    rigid = m.replace(ignore_tendon_compliance=True)
    assert rigid.rigid_tendon_force(a, l, v, xp=ds).Evaluate(env) == pytest.approx(
        rigid.rigid_tendon_force(*args[:3]), rel=1e-14)
