"""The linear centre-of-mass / mass fit (moco_lab.tools.mass_fit) and the synthetic walking subject
(moco_lab.examples.synthetic) it is taught on (lesson 13)."""
from __future__ import annotations

import numpy as np
import pytest

from moco_lab.analysis.pose import pose
from moco_lab.examples.synthetic import synthetic_walk
from moco_lab.tools.mass_fit import (
    com_linear_map,
    fit_mass,
    integrate_com,
    linear_residual_forces,
    residual_force_percent,
)


@pytest.fixture(scope="module")
def walk():
    return synthetic_walk(68.0, 1.75)


def _forces(T: int, mass: float, rng) -> np.ndarray:
    """Arbitrary forces that roughly hold a body up (not periodic, not smooth)."""
    return np.c_[rng.normal(0, 80, T), mass * 9.81 + rng.normal(0, 150, T)]


@pytest.mark.parametrize("d", [2, 3])
def test_the_linear_map_is_the_integration(d):
    """A @ [c0, v0, 1/m] + b equals the step-by-step semi-implicit Euler integration (to round-off: the
    positions are O(1 m), the sums O(100); measured 1e-14 m)."""
    rng = np.random.default_rng(3)
    T, dt, m = 150, 0.01, 71.3
    F = _forces(T, m, rng)
    if d == 3:
        F = np.c_[F, rng.normal(0, 30, T)]
    g = np.array([0.0, -9.81, 0.0][:d])
    c0, v0 = rng.normal(0, 1, d), rng.normal(0, 1, d)
    brute = integrate_com(c0, v0, m, F, dt, g)
    A, b = com_linear_map(F, dt, g)
    assert A.shape == (T * d, 2 * d + 1)
    assert np.max(np.abs(A @ np.r_[c0, v0, 1 / m] + b - brute.reshape(-1))) < 1e-8


def test_consistent_data_give_the_mass(walk):
    """Residual-free synthetic data: the fit returns the subject's 68 kg to 1e-9 relative (measured 5e-15) and
    reproduces the COM path; the true mass leaves no residual force, the generic 75 kg one too much."""
    fit = fit_mass(walk.com, walk.forces, walk.dt)
    assert fit.mass == pytest.approx(68.0, rel=1e-9)
    assert fit.position_max < 1e-9
    residual = linear_residual_forces(walk.com, walk.forces, 68.0, walk.dt)
    assert np.max(np.abs(residual)) < 1e-6 * 68 * 9.81
    wrong = residual_force_percent(linear_residual_forces(walk.com, walk.forces, 75.0, walk.dt), walk.forces)
    assert wrong > 5.0  # AddBiomechanics' scripts draw the line at 5 % (Hicks et al. 2015)


def test_noise_keeps_the_mass_within_half_a_percent():
    """5 mm COM noise and 10 N force noise at 100 Hz over two strides: every one of 20 seeds within 0.5 % (the
    issue's tolerance; measured mean −0.07 %, largest 0.2 %)."""
    errors = [fit_mass(w.com, w.forces, w.dt).mass / 68.0 - 1
              for w in (synthetic_walk(68.0, 1.75, com_noise=0.005, force_noise=10.0, seed=s) for s in range(20))]
    assert max(abs(e) for e in errors) < 0.005, errors


def test_a_force_scale_error_is_a_mass_error(walk):
    """Force plates reading 3 % high give exactly the mass 3 % high: the data cannot tell the two apart."""
    fit = fit_mass(walk.com, 1.03 * walk.forces, walk.dt)
    assert fit.mass == pytest.approx(1.03 * 68.0, rel=1e-9)


def test_the_synthetic_subject(walk):
    """The subject's COM is the model's (Drake's plant against moco_lab's own kinematics), the frames are 100 Hz
    over two strides, and over whole strides the ground holds the body up: mean vertical force = m g."""
    assert walk.dt == 0.01 and walk.time[0] == 0.0 and np.allclose(np.diff(walk.time), 0.01)
    assert walk.com.shape == walk.forces.shape == (walk.time.size, 2)
    for i in (0, 37, 150):
        q = {name: values[i] for name, values in walk.coordinates.items()}
        assert np.allclose(pose(walk.model, q).com[:2], walk.true_com[i], atol=1e-12)
    # the generated walk is periodic, so the impulse over whole strides balances the weight (up to the ends'
    # half frames: 1 %)
    assert np.mean(walk.forces[:, 1]) == pytest.approx(68.0 * 9.81, rel=0.01)
    assert 1.0 < np.max(walk.forces[:, 1]) / (68.0 * 9.81) < 1.6  # walking, not running


def test_bad_input_names_the_culprit():
    F = np.ones((10, 2))
    with pytest.raises(ValueError, match="shape"):
        fit_mass(np.ones((9, 2)), F, 0.01)
    with pytest.raises(ValueError, match="dt"):
        fit_mass(np.ones((10, 2)), F, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        fit_mass(np.ones((10, 2)), np.full((10, 2), np.nan), 0.01)
    with pytest.raises(ValueError, match="not positive"):  # forces pulling down: no positive mass explains them
        walk = synthetic_walk(68.0, 1.75)
        fit_mass(walk.com, -walk.forces, walk.dt)
    with pytest.raises(ValueError, match="noise"):
        synthetic_walk(com_noise=-1.0)


def test_a_subject_with_its_own_mass_distribution():
    """Segment masses unlike the model's (heavier trunk, lighter thighs; gait2d keeps the 68 kg total): the body
    parts weigh what was asked, the COM path changes (by millimetres), and the linear fit still finds 68 kg, since
    it sees only the COM and the forces."""
    from moco_lab.modeling.gait2d import gait2d

    factors = {"trunk": 1.1, "thigh": 0.9}
    model = gait2d(68.0, 1.75, muscles=False, segment_mass_scales=factors)
    plain = gait2d(68.0, 1.75, muscles=False)
    masses = {b.name: b.mass for b in model.tree().bodies.values()}
    base = {b.name: b.mass for b in plain.tree().bodies.values()}
    assert sum(masses.values()) == pytest.approx(68.0, rel=1e-12)
    ratio = {k: masses[k] / base[k] for k in masses}
    assert ratio["trunk"] / ratio["shank_r"] == pytest.approx(1.1) and ratio["thigh_l"] / ratio["foot_r"] == \
        pytest.approx(0.9)
    walk = synthetic_walk(68.0, 1.75, segment_mass_scales=factors)
    other = synthetic_walk(68.0, 1.75)
    assert 1e-4 < np.max(np.abs(walk.com - other.com)) < 0.05
    assert fit_mass(walk.com, walk.forces, walk.dt).mass == pytest.approx(68.0, rel=1e-9)
    with pytest.raises(KeyError, match="segment_mass_scales has an unknown segment 'pelvis'"):
        gait2d(segment_mass_scales={"pelvis": 1.2})
