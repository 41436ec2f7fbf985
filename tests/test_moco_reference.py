"""Tests of ``benchmarks.moco_reference`` against the analytic facts.

These run real OpenSim Moco solves and are skipped when ``opensim`` is not
importable. Reference values come from
``VERIFICATION.md``.
"""

import math
import os

import numpy as np
import pytest

pytest.importorskip("opensim")

# Make the repository root importable however pytest is invoked.

from benchmarks import moco_reference as mr

# Analytic solution of problem (a) (same optimal states for both variants).
C2 = -7.2917920742
C3 = -6.1048273597


def _q_exact(t):
    """Analytic optimal position of problem (a)."""
    return (C2 * (-t - np.exp(-t) / 2 + np.exp(t) / 2)
            + C3 * (1 - np.exp(-t) / 2 - np.exp(t) / 2))


def _u_exact(t):
    """Analytic optimal speed of problem (a)."""
    return (C2 * (-1 + np.exp(-t) / 2 + np.exp(t) / 2)
            + C3 * (np.exp(-t) / 2 - np.exp(t) / 2))


def _check_common(result, state_paths, control_paths):
    """Check the structure shared by every result dictionary."""
    assert result["success"] is True, result["status"]
    assert isinstance(result["status"], str)
    assert result["solve_time"] > 0
    assert result["nit"] is None or result["nit"] > 0
    t = result["time"]
    assert isinstance(t, np.ndarray) and t.ndim == 1
    assert np.all(np.diff(t) >= 0)
    assert set(result["states"]) == set(state_paths)
    assert set(result["controls"]) == set(control_paths)
    for values in list(result["states"].values()) + list(
            result["controls"].values()):
        assert values.shape == t.shape
    assert result["final_time"] == pytest.approx(t[-1])


@pytest.fixture
def clean_cwd(tmp_path, monkeypatch):
    """Run in an empty directory and assert that Moco left no files."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
@pytest.mark.parametrize("variant", ["kirk", "moco_test"])
def test_linear_matches_analytic(variant, mode, clean_cwd):
    result = mr.solve_linear(variant=variant, scheme="hermite-simpson",
                             mode=mode, N=50)
    q_path = "/jointset/j/coord/value"
    u_path = "/jointset/j/coord/speed"
    x_path = "/forceset/coordinateactuator"
    _check_common(result, [q_path, u_path], [x_path])

    j_star = mr.LINEAR_J_STAR[variant]
    assert result["j_star"] == j_star
    assert abs(result["objective"] - j_star) / j_star < 1e-3

    t = result["time"]
    assert t[0] == pytest.approx(0.0) and t[-1] == pytest.approx(2.0)
    assert len(t) == 2 * 50 + 1  # Hermite-Simpson: mesh + midpoints
    np.testing.assert_allclose(result["states"][q_path], _q_exact(t),
                               atol=1e-5)
    np.testing.assert_allclose(result["states"][u_path], _u_exact(t),
                               atol=1e-5)
    if variant == "kirk":
        x_exact = -C2 + (C2 - C3) * np.exp(t)
    else:
        x_exact = C2 - (C2 + C3) * np.exp(-t)
    np.testing.assert_allclose(result["controls"][x_path], x_exact,
                               atol=1e-2)


def test_linear_trapezoidal_grid(clean_cwd):
    result = mr.solve_linear(variant="kirk", scheme="trapezoidal",
                             mode="explicit", N=50)
    _check_common(result, ["/jointset/j/coord/value",
                           "/jointset/j/coord/speed"],
                  ["/forceset/coordinateactuator"])
    assert len(result["time"]) == 50 + 1
    assert abs(result["objective"] - mr.LINEAR_J_STAR["kirk"]) < 0.05


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
def test_sliding_mass_min_time(scheme, clean_cwd):
    result = mr.solve_sliding_mass(scheme=scheme, mode="explicit", N=50)
    pos = "/slider/position/value"
    spd = "/slider/position/speed"
    _check_common(result, [pos, spd], ["/actuator"])
    assert result["tf_star"] == pytest.approx(0.4)
    assert abs(result["final_time"] - 0.4) < 2e-3
    # Minimum-time goal: the objective is the final time itself.
    assert result["objective"] == pytest.approx(result["final_time"])
    assert result["states"][pos][0] == pytest.approx(0.0, abs=1e-8)
    assert result["states"][pos][-1] == pytest.approx(1.0, abs=1e-6)
    control = result["controls"]["/actuator"]
    # Bang-bang: +50 N first, -50 N at the end.
    assert control[1] == pytest.approx(50.0, abs=0.5)
    assert control[-2] == pytest.approx(-50.0, abs=0.5)


def test_double_pendulum_swing_up(clean_cwd):
    result = mr.solve_double_pendulum(scheme="hermite-simpson",
                                      mode="explicit", N=50)
    states = ["/jointset/j0/q0/value", "/jointset/j0/q0/speed",
              "/jointset/j1/q1/value", "/jointset/j1/q1/speed"]
    _check_common(result, states, ["/tau0", "/tau1"])
    s = result["states"]
    assert result["final_time"] == pytest.approx(1.0)
    assert s["/jointset/j0/q0/value"][0] == pytest.approx(0.0, abs=1e-8)
    assert s["/jointset/j0/q0/value"][-1] == pytest.approx(math.pi / 2,
                                                           abs=1e-6)
    assert s["/jointset/j1/q1/value"][-1] == pytest.approx(0.0, abs=1e-6)
    for path in ("/jointset/j0/q0/speed", "/jointset/j1/q1/speed"):
        assert s[path][0] == pytest.approx(0.0, abs=1e-6)
        assert s[path][-1] == pytest.approx(0.0, abs=1e-6)
    # Objective equals the integral of the squared torques.
    tau2 = result["controls"]["/tau0"] ** 2 + result["controls"]["/tau1"] ** 2
    integral = np.trapezoid(tau2, result["time"])
    assert result["objective"] == pytest.approx(integral, rel=2e-2)
    # Holding the links horizontal needs ~3g and ~g of torque, so the effort
    # must be of order 10^3 (Moco 4.6 gives about 2462.6 at this setting).
    assert 1e3 < result["objective"] < 5e3


def test_double_pendulum_model_geometry():
    import opensim as osim

    model = mr.build_double_pendulum_model()
    state = model.initSystem()
    assert [b.getName() for b in model.getBodySet()] == ["b0", "b1"]
    for body in model.getBodySet():
        assert body.getMass() == 1.0
    assert model.getComponent("/tau0").getConcreteClassName() == \
        "CoordinateActuator"
    model.realizePosition(state)
    np.testing.assert_allclose(
        model.getBodySet().get("b1").getPositionInGround(state).to_numpy(),
        [2.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(model.getGravity().to_numpy(),
                               [0.0, -9.80665, 0.0])
    assert isinstance(model, osim.Model)


def test_invalid_options_raise():
    with pytest.raises(ValueError):
        mr.solve_linear(scheme="euler")
    with pytest.raises(ValueError):
        mr.solve_sliding_mass(mode="semi-implicit")
    with pytest.raises(ValueError):
        mr.solve_linear(variant="other")
