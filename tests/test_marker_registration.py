"""Marker registration on the 3-D model (issue 36, point 1): each marker's offset on its body fitted with every
frame's pose (``moco_lab.tools.marker_registration``) — the Jacobian, known offsets recovered on a synthetic trial,
inverse kinematics with the registered markers, and bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from least_squares_check import jacobian_errors

import moco_lab as ml
from moco_lab.examples.walking_3d import walking_3d_markers
from moco_lab.tools.marker_ik import Marker, inverse_kinematics, marker_trajectories
from moco_lab.tools.marker_registration import _RegistrationProblem, register_markers
from moco_lab.util.data import opensim_file

#: displaced model markers (m, body frame) on three bodies: the registration should move them back
SHIFT = {"R.Knee": (0.015, 0.0, -0.01), "L.Heel": (0.0, 0.012, 0.0), "R.Shoulder": (-0.01, 0.0, 0.012)}


@pytest.fixture(scope="module")
def trial():
    """The model, its weighted markers, and the trial's every fourth frame (60 frames, 25 Hz) with IK poses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ml.read_osim(opensim_file("subject_walk_scaled.osim"), replace_millard=True)
    markers, measured, weights, _ = walking_3d_markers(model)
    data = {n: v[::4] for n, v in measured.items()}
    return model, markers, data, weights, inverse_kinematics(model, markers, data, weights=weights)


@pytest.fixture(scope="module")
def synthetic(trial):
    """Measurements made by the model's own markers at the IK poses plus 1 mm noise, and a model whose markers on
    three bodies were displaced by SHIFT: registration from IK with the displaced markers."""
    model, markers, _, weights, ik = trial
    truth = marker_trajectories(model, markers, ik.q)
    rng = np.random.default_rng(0)
    data = {m.name: truth[:, k] + 0.001 * rng.standard_normal(truth[:, k].shape) for k, m in enumerate(markers)}
    wrong = [Marker(m.name, m.body, tuple(np.add(m.location, SHIFT.get(m.name, (0.0, 0.0, 0.0))))) for m in markers]
    start = inverse_kinematics(model, wrong, data, weights=weights)
    return wrong, data, start, register_markers(model, wrong, data, start.q, weights=weights)


def test_known_offsets_recovered(trial, synthetic):
    """The three displaced markers move back to within 5 mm of where they were (1.2–1.8 cm displacements; measured
    within 3.8 mm: 60 frames of 1 mm noise and a 1 cm prior leave part of an offset to the poses, which can absorb a
    marker's displacement partly by turning its body), no other marker moves by more than 5 mm (measured 2.9 mm),
    and the marker error falls from IK's 4.3 mm RMS with the displaced markers to about the noise (< 1.5 mm; the
    noise's mean distance is 1.6 mm, a fit removes part of it)."""
    _, markers, _, weights, _ = trial
    wrong, data, start, reg = synthetic
    assert reg.success
    for name, d in SHIFT.items():
        assert np.linalg.norm(reg.offsets[name] + np.asarray(d)) < 0.005, (name, reg.offsets[name])
    assert max(np.linalg.norm(v) for n, v in reg.offsets.items() if n not in SHIFT) < 0.005
    assert start.rmse > 0.004 and reg.rmse < 0.0015
    moved = {m.name: np.subtract(m.location, w.location) for m, w in zip(reg.markers, wrong)}
    assert all(np.allclose(moved[n], reg.offsets[n], atol=1e-15) for n in reg.offsets)


def test_inverse_kinematics_with_the_registered_markers(trial, synthetic):
    """With the offsets fixed, each frame's pose of the registration is inverse kinematics' optimum: the IK tool,
    run with the registered markers, reaches the same marker error (1e-6 relative) at the same poses — within 2e-4
    rad in the flat directions (forearm pronation, wrist: measured 4.9e-5 rad, where the registration's stopping
    test, a 1e-10 relative change of the objective, leaves them), 1e-7 elsewhere."""
    model, _, _, weights, _ = trial
    _, data, _, reg = synthetic
    again = inverse_kinematics(model, reg.markers, data, weights=weights, initial_guess=reg.q[0])
    flat = [c.q_index for c in model.coordinates if c.name.startswith(("pro_sup", "wrist", "elbow", "arm_"))]
    rest = [i for i in range(again.q.shape[1]) if i not in flat]
    assert np.abs(again.q - reg.q)[:, flat].max() < 2e-4 and np.abs(again.q - reg.q)[:, rest].max() < 1e-7
    assert again.rmse == pytest.approx(reg.rmse, rel=1e-6)


def test_jacobian_against_finite_differences(trial):
    """The exact sparse Jacobian (poses and offsets, through the bodies' rotations) against central differences
    along random directions on six frames: relative error below 1e-7 (measured 3e-11); the couplers' Jacobian below
    1e-6."""
    model, markers, data, weights, ik = trial
    problem = _RegistrationProblem(model, markers, {n: v[20:26] for n, v in data.items()}, ik.q[20:26], weights,
                                   0.01, 0.01, "test")
    rng = np.random.default_rng(1)
    x = problem.x0 + 0.01 * rng.standard_normal(problem.n_x)
    r, J, phi, G, _ = problem.evaluate(x)
    errors = jacobian_errors(problem, x, rng)
    assert errors[0] < 1e-7 and errors[1] < 1e-6, errors  # the couplers' too
    assert J.shape == (r.size, 6 * 33 + 3 * len(markers)) and phi.size == 12


def test_bad_input(trial):
    model, markers, data, weights, ik = trial
    with pytest.raises(ValueError, match="Q must be"):
        register_markers(model, markers, data, ik.q[:, :5])
    with pytest.raises(KeyError, match="offset_sd for an unknown marker"):
        register_markers(model, markers, data, ik.q, offset_sd={"R.Kne": 0.01})
    with pytest.raises(ValueError, match="noise"):
        register_markers(model, markers, data, ik.q, noise=0.0)
    with pytest.raises(KeyError, match="no data for marker"):
        register_markers(model, markers, {n: v for n, v in list(data.items())[1:]}, ik.q)
