"""Markers and inverse kinematics (moco_lab.tools.marker_ik) on the synthetic subject (moco_lab.examples.synthetic),
and gait2d's segment scales: the first steps of the scaling / IK lesson (issue 18)."""
from __future__ import annotations

import numpy as np
import pytest

from moco_lab.examples.synthetic import GAIT2D_MARKER_SET, gait2d_markers, synthetic_markers, synthetic_walk
from moco_lab.modeling.gait2d import gait2d, gait2d_segment_lengths
from moco_lab.tools.marker_ik import Marker, inverse_kinematics, marker_positions
from moco_lab.viz.gait2d import gait2d_points

SCALES = {"trunk": 0.97, "thigh": 0.95, "shank": 1.03, "foot": 0.98}  # a subject not proportioned like the model
ANGLES = ("trunk_angle", "hip_flexion_r", "knee_angle_r", "ankle_angle_r", "hip_flexion_l", "knee_angle_l",
          "ankle_angle_l")


@pytest.fixture(scope="module")
def walk():
    return synthetic_walk(68.0, 1.75, segment_scales=SCALES, rate=50.0, strides=1)


def test_segment_scales_move_the_joints():
    """The knee sits a scaled thigh length below the hip, the ankle a scaled shank length below the knee, the
    contact points scale with the foot; the markers placed on the model land on the joints they name (the
    knee marker, fixed to the thigh, is where the shank's frame is)."""
    model = gait2d(68.0, 1.75, muscles=False, segment_scales=SCALES)
    generic = gait2d_segment_lengths(gait2d(muscles=False))
    lengths = gait2d_segment_lengths(model)
    for seg, s in SCALES.items():
        assert lengths[seg] == pytest.approx(generic[seg] * 1.75 / 1.80 * s, rel=1e-12)
    q = {"hip_y": 0.9, "hip_flexion_r": 0.4, "knee_angle_r": -0.7, "ankle_angle_r": 0.2, "trunk_angle": 0.1}
    points = gait2d_points(model, q)
    qv = np.array([q.get(c.name, 0.0) for c in model.coordinates])
    at = dict(zip([m.name for m in gait2d_markers(model)], marker_positions(model, gait2d_markers(model), qv)))
    for name in ("knee_r", "ankle_r", "heel_r", "toe_r", "shoulder"):
        assert np.allclose(at[name][:2], points[name], atol=1e-12), name
    assert np.linalg.norm(points["knee_r"] - points["hip"]) == pytest.approx(lengths["thigh"], rel=1e-12)
    assert np.linalg.norm(points["ankle_r"] - points["knee_r"]) == pytest.approx(lengths["shank"], rel=1e-12)
    with pytest.raises(KeyError, match="unknown segment 'arm'"):
        gait2d(segment_scales={"arm": 1.1})
    with pytest.raises(ValueError, match="positive"):
        gait2d(segment_scales={"shank": 0.0})


def test_perfect_data_give_the_true_angles(walk):
    """The subject's own model and true marker locations on noise-free data: every joint angle within 0.01° (the
    issue's bound for perfect data; measured 2e-7° with SNOPT, 4e-5° with IPOPT, tolerance 1e-10) and the markers
    within a micrometre."""
    trial = synthetic_markers(walk, anatomical_error=0.0, tracking_error=0.0, noise=0.0)
    ik = inverse_kinematics(walk.model, trial.true_markers, trial.data)
    assert ik.success and ik.max_error < 1e-6
    for name in ANGLES:
        assert np.degrees(np.max(np.abs(ik.coordinates[name] - walk.coordinates[name]))) < 0.01, name


def test_noise_and_the_unscaled_model(walk):
    """5 mm noise per axis on the true model: marker RMSE near the noise's 7 mm per marker (measured 6.0 mm, the fit
    absorbs a little). The generic model (75 kg, 1.80 m, markers where a lab puts them on it) cannot fit the
    subject: centimetre marker errors and joint angles off by degrees — why lesson 12 scales the model first."""
    noisy = synthetic_markers(walk, seed=1)
    ik = inverse_kinematics(walk.model, noisy.true_markers, noisy.data)
    assert 0.004 < ik.rmse < 0.008, ik.rmse
    exact = synthetic_markers(walk, anatomical_error=0.0, tracking_error=0.0, noise=0.0)
    generic = inverse_kinematics(gait2d(muscles=False), exact.generic_markers, exact.data)
    assert generic.rmse > 0.01 and generic.max_error > 0.03  # measured 1.9 cm and 4.8 cm
    worst = max(np.degrees(np.sqrt(np.mean((generic.coordinates[n] - walk.coordinates[n]) ** 2))) for n in ANGLES)
    assert worst > 3.0  # measured 6.1° (knee)


def test_placement_errors_are_seeded_and_sized(walk):
    a, b = synthetic_markers(walk, seed=5), synthetic_markers(walk, seed=5)
    assert all(np.array_equal(a.data[k], b.data[k]) for k in a.data)
    placed = {m.name: np.array(m.location) for m in gait2d_markers(walk.model)}
    shifts = {kind: [np.linalg.norm(np.array(m.location) - placed[m.name]) for m in a.true_markers
                     if GAIT2D_MARKER_SET[m.name][2] == kind] for kind in ("anatomical", "tracking")}
    assert max(shifts["anatomical"]) < 0.025 and max(shifts["tracking"]) > 0.005  # 5 mm vs 15 mm per axis
    with pytest.raises(ValueError, match="noise"):
        synthetic_markers(walk, noise=-0.001)


def test_bad_marker_input_names_the_culprit(walk):
    model = walk.model
    markers = gait2d_markers(model)[:3]
    data = {m.name: np.zeros((4, 2)) for m in markers}
    with pytest.raises(KeyError, match="no data for marker"):
        inverse_kinematics(model, markers, {k: v for k, v in list(data.items())[1:]})
    with pytest.raises(KeyError, match="unknown marker"):
        inverse_kinematics(model, markers, {**data, "shoulderr": np.zeros((4, 2))})
    with pytest.raises(ValueError, match="same number of frames"):
        inverse_kinematics(model, markers, {**data, markers[0].name: np.zeros((5, 2))})
    with pytest.raises(KeyError, match="body"):
        marker_positions(model, [Marker("x", "femur_r", (0, 0))], np.zeros(9))


def test_snopt_and_ipopt_agree(walk):
    """The three optimizers find the same frame-by-frame solution on noisy data (to 1e-6 rad: each is converged to its
    tolerance on a smooth least-squares problem with one minimum near the previous frame's)."""
    trial = synthetic_markers(walk, seed=2)
    short = {k: v[:10] for k, v in trial.data.items()}
    a = inverse_kinematics(walk.model, trial.true_markers, short, solver="snopt")
    b = inverse_kinematics(walk.model, trial.true_markers, short, solver="ipopt")
    # moco_lab's own Gauss-Newton on the engine's kinematics (the 3-D models' solver): independent kinematics
    # (the engine's recursion, not Drake's) and an independent optimizer, the same answer
    c = inverse_kinematics(walk.model, trial.true_markers, short, solver="gauss-newton")
    assert a.success and b.success and c.success
    assert np.max(np.abs(a.q - b.q)) < 1e-6
    assert np.max(np.abs(a.q - c.q)) < 1e-6
    with pytest.raises(ValueError, match="snopt"):
        inverse_kinematics(walk.model, trial.true_markers, short, solver="lbfgs")
