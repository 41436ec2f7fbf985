"""Body scaling in 3-D (issue 36, point 1): the full-body model scaled as OpenSim's ScaleTool scales it
(``moco_lab.tools.body_scaling.scale_model``, ``moco_lab.modeling.osim_scale``), checked against OpenSim 4.6's
``Model::scale`` on the same file; the scaled markers as exact functions of poses and factors
(``ScaledMarkerKinematics``) against the rebuilt model; scales fitted with marker offsets and poses
(``register_markers(..., scales=...)``) recovering known factors; bad input.

The factors are random per body and axis (0.8–1.25, one body uniform, three bodies left unscaled) so that every
rule is exercised: the cylinder rule of non-uniform inertias, the uniform one, offset frames on both sides of a
joint, the walker knee's and the patella's translation functions (``MultiplierFunction`` scales), wrap cylinders
on oblique frames, markers and path points.
"""
from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from least_squares_check import jacobian_errors
from osim_pair import body_pose_errors, their_coordinates

import moco_lab as ml
from moco_lab.examples.walking_3d import walking_3d_markers
from moco_lab.modeling.osim import read_osim_string
from moco_lab.modeling.osim_scale import model_element, scale_osim_document
from moco_lab.tools.body_scaling import default_coordinates, path_lengths, scale_model
from moco_lab.tools.marker_ik import inverse_kinematics, marker_trajectories
from moco_lab.tools.marker_registration import _RegistrationProblem, register_markers
from moco_lab.tools.scaled_markers import ScaledMarkerKinematics, scale_groups
from moco_lab.util.data import opensim_file

MODEL = "subject_walk_scaled.osim"
#: the rounding of the same products in the same order, printed round-trip: measured 3.4e-16 (1–2 ulp)
DOCUMENT_RTOL = 2e-15
#: as tests/test_osim3d.py: the same closed forms in another order agree to a few ulps (measured 7e-16 m)
KINEMATICS_TOL = 1e-12


def _random_scales() -> dict:
    rng = np.random.default_rng(20261128)
    root = ET.parse(opensim_file(MODEL)).getroot()
    bodies = [b.get("name") for b in model_element(root).iter("Body")]
    scales = {b: rng.uniform(0.8, 1.25, 3) for b in bodies[:-4]}
    scales[bodies[-4]] = 1.1  # uniform: the exact inertia rule
    return scales  # the last three bodies are not scaled


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ml.read_osim(opensim_file(MODEL), replace_millard=True)


@pytest.fixture(scope="module")
def scaled():
    return scale_model(MODEL, _random_scales(), replace_millard=True)


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    """OpenSim's ``Model::scale`` on the same file with the same factors, both mass options, printed and read back
    as XML; with OpenSim's models (default state) before and after, for the path lengths."""
    opensim = pytest.importorskip("opensim")
    out = {}
    for preserve in (False, True):
        m = opensim.Model(str(opensim_file(MODEL)))
        state = m.initSystem()
        before = {mm.getName(): mm.getLength(state) for mm in m.getMuscles()}
        scale_set = opensim.ScaleSet()
        for body, f in _random_scales().items():
            s = opensim.Scale()
            s.setSegmentName(body)
            s.setScaleFactors(opensim.Vec3(*(float(v) for v in np.broadcast_to(f, 3))))
            s.setApply(True)
            scale_set.cloneAndAppend(s)
        m.scale(state, scale_set, preserve, 80.0 if preserve else -1.0)
        path = tmp_path_factory.mktemp("scaled") / f"theirs_{preserve}.osim"
        m.printToXML(str(path))
        state = m.initSystem()
        after = {mm.getName(): mm.getLength(state) for mm in m.getMuscles()}
        out[preserve] = (ET.parse(path).getroot(), before, after, m, state, path)
    return opensim, out


def _leaves(el: ET.Element, path: str = "", out: dict | None = None) -> dict:
    """Every leaf element by its path of tags and names: its numbers, or its text."""
    out = {} if out is None else out
    here = f"{path}/{el.tag}" + (f"[{el.get('name')}]" if el.get("name") else "")
    if len(el) == 0:
        try:
            out[here] = np.array([float(v) for v in (el.text or "").split()])
        except ValueError:
            out[here] = (el.text or "").strip()
    for child in el:
        _leaves(child, here, out)
    return out


MUSCLE_LENGTHS = ("optimal_fiber_length", "tendon_slack_length")


@pytest.mark.opensim
@pytest.mark.parametrize("preserve", [False, True])
def test_scaled_document_equals_opensims(theirs, preserve):
    """Every number OpenSim's scaled file holds (masses, centres of mass, inertias, offset frames, the custom joints'
    translation functions, markers, path points, wrap cylinders, display geometry; the total mass option), but the
    muscles' two lengths (next test), equals moco_lab's to DOCUMENT_RTOL, and both files have the same elements
    (the functions OpenSim wraps in a ``MultiplierFunction`` are wrapped in moco_lab's too)."""
    _, out = theirs
    root, *_ = out[preserve]
    mine = scale_osim_document(ET.parse(opensim_file(MODEL)).getroot(), _random_scales(),
                               preserve_mass_distribution=preserve, final_mass=80.0 if preserve else None)
    a, b = _leaves(mine), _leaves(root)
    assert set(a) == set(b)
    worst, compared = 0.0, 0
    for key, value in b.items():
        if key.endswith(MUSCLE_LENGTHS) or not isinstance(value, np.ndarray) or value.size == 0:
            assert isinstance(value, np.ndarray) or a[key] == value, key
            continue
        scale = max(np.abs(value).max(), 1e-300)
        worst = max(worst, float(np.abs(a[key] - value).max() / scale))
        compared += 1
    print(f"{compared} numbers, worst {worst:.1e}")
    assert compared > 2000 and worst < DOCUMENT_RTOL
    if preserve:
        masses = [float(x.findtext("mass")) for x in model_element(mine).iter("Body")]
        assert sum(masses) == pytest.approx(80.0, rel=1e-14)


@pytest.mark.opensim
def test_muscle_lengths_follow_their_paths_as_in_opensim(theirs, scaled):
    """OpenSim multiplies each muscle's optimal fibre and tendon slack lengths by its path's length after scaling
    over before, in the default pose. The rule: OpenSim's own ratios give OpenSim's values to DOCUMENT_RTOL. The
    lengths: moco_lab's ratios equal OpenSim's to 1e-12 for the 38 paths that do not wrap (lengths agree to
    round-off, tests/test_osim3d.py); for the 42 that wrap over cylinders the lengths themselves differ by up to 7 mm
    (OpenSim's tangent-point heuristic against moco_lab's geodesic, docs/models.md), so the ratios differ by up to
    2.5 % (measured 0.55 % with these factors, 1.4 % with others: ≤ 7 mm on 0.2–0.5 m paths, before and after)."""
    _, out = theirs
    root, before, after, *_ = out[False]
    original = {el.get("name"): el for el in ET.parse(opensim_file(MODEL)).getroot().iter("Millard2012EquilibriumMuscle")}
    theirs_el = {el.get("name"): el for el in root.iter("Millard2012EquilibriumMuscle")}
    mine_el = {el.get("name"): el for el in scaled.document.iter("Millard2012EquilibriumMuscle")}
    wraps = {n for n, el in original.items() if el.find(".//PathWrap") is not None}
    assert len(original) == 80 and len(wraps) == 42
    rule = plain = wrapped = 0.0
    for name, el in original.items():
        ratio = after[name] / before[name]
        for tag in MUSCLE_LENGTHS:
            value = float(el.findtext(tag))
            rule = max(rule, abs(value * ratio - float(theirs_el[name].findtext(tag))) / abs(value * ratio))
        error = abs(scaled.length_ratios[name] / ratio - 1.0)
        if name in wraps:
            wrapped = max(wrapped, error)
        else:
            plain = max(plain, error)
        assert float(mine_el[name].findtext("tendon_slack_length")) == pytest.approx(
            float(el.findtext("tendon_slack_length")) * scaled.length_ratios[name], rel=1e-15)
    print(f"rule {rule:.1e}, ratios: plain {plain:.1e}, wrapped {wrapped:.1e}")
    assert rule < DOCUMENT_RTOL and plain < 1e-12 and wrapped < 0.025


@pytest.mark.opensim
def test_scaled_model_bodies_and_markers_agree_with_opensims(theirs, scaled):
    """moco_lab's scaled model (read) against OpenSim's scaled model (live) at 20 random states: every body's origin
    and orientation and every marker's position to KINEMATICS_TOL, and every body's mass, centre of mass and
    inertia (what the scaled dynamics use) to DOCUMENT_RTOL relative (the centre of mass relative to 1 m: some are
    at the origin)."""
    opensim, out = theirs
    *_, m, state, _ = out[False]
    ours = scaled.model
    rng = np.random.default_rng(1)
    C = ours.coordinates
    names = [c.name for c in C]
    lo = np.array([max(c.range[0], -1.2) for c in C])
    hi = np.array([min(c.range[1], 1.2) for c in C])
    Q = rng.uniform(lo, hi, size=(20, len(C)))
    for side in "rl":
        Q[:, names.index(f"knee_angle_{side}_beta")] = Q[:, names.index(f"knee_angle_{side}")]
    Qp = np.zeros_like(Q)
    Qp[:, [c.q_index for c in C]] = Q
    markers = list(ours.markers.values())
    P = marker_trajectories(ours, markers, Qp)
    coords = their_coordinates(m)
    tree = ours.tree()
    worst = {"origin": 0.0, "rotation": 0.0, "marker": 0.0}
    for k in range(Q.shape[0]):
        for i, c in enumerate(C):
            coords[c.name].setValue(state, float(Q[k, i]), False)
        m.realizePosition(state)
        origin, rotation = body_pose_errors(m, state, ours, list(Qp[k]))
        worst["origin"], worst["rotation"] = max(worst["origin"], origin), max(worst["rotation"], rotation)
        for i, mk in enumerate(markers):
            p = m.getMarkerSet().get(mk.name).getLocationInGround(state)
            worst["marker"] = max(worst["marker"], np.abs(P[k, i] - [p.get(j) for j in range(3)]).max())
    print({key: f"{v:.1e}" for key, v in worst.items()})
    assert all(v < KINEMATICS_TOL for v in worst.values()), worst
    inertial = 0.0
    for b in tree.bodies.values():
        if b.name in ours.frame_bodies:
            continue
        body = m.getBodySet().get(b.name)
        com = body.getMassCenter()
        I = body.getInertia()
        moments, products = I.getMoments(), I.getProducts()
        theirs_I = np.array([[moments.get(0), products.get(0), products.get(1)],
                             [products.get(0), moments.get(1), products.get(2)],
                             [products.get(1), products.get(2), moments.get(2)]])
        inertial = max(inertial, abs(b.mass - body.getMass()) / body.getMass(),
                       np.abs(b.com - [com.get(j) for j in range(3)]).max() / max(np.abs(b.com).max(), 1.0),
                       np.abs(b.inertia_com - theirs_I).max() / np.abs(theirs_I).max())
    assert inertial < DOCUMENT_RTOL, inertial


def test_scaled_markers_are_the_rebuilt_models(model):
    """``ScaledMarkerKinematics`` (the unscaled model's compiled kinematics, affine in the factors) against
    :func:`scale_model`'s rebuilt model at 20 random poses and random factors on every group (per axis, ±15 %):
    the same positions to KINEMATICS_TOL (measured 7e-16 m: every length the scaling changes is accounted for, the
    walker knee's and the patella's spline translations included); its Jacobians (poses and factors) against
    central differences to 1e-7 (step 1e-6: truncation and round-off both below 1e-9 relative)."""
    groups = scale_groups(model, None)
    rng = np.random.default_rng(3)
    sigma = rng.uniform(-0.15, 0.15, (len(groups), 3))
    factors = {b: 1 + sigma[g] for g, members in enumerate(groups.values()) for b in members}
    rebuilt = scale_model(model, factors)
    markers = list(model.markers.values())
    kin = ScaledMarkerKinematics(model, markers, groups)
    C = model.coordinates
    Q = np.zeros((20, len(C)))
    Q[:, [c.q_index for c in C]] = rng.uniform([max(c.range[0], -1.0) for c in C],
                                               [min(c.range[1], 1.0) for c in C], size=(20, len(C)))
    P, JP, JS, *_ = kin(Q, sigma)
    expected = marker_trajectories(rebuilt.model, [rebuilt.model.markers[m.name] for m in markers], Q)
    assert np.abs(P - expected).max() < KINEMATICS_TOL
    h = 1e-6
    dq, ds = rng.standard_normal(Q.shape), rng.standard_normal(sigma.shape)
    fd = (kin(Q + h * dq, sigma + h * ds)[0] - kin(Q - h * dq, sigma - h * ds)[0]) / (2 * h)
    exact = np.einsum("tmin,tn->tmi", JP, dq) + np.einsum("tmigk,gk->tmi", JS, ds)
    assert np.abs(fd - exact).max() / np.abs(fd).max() < 1e-7


#: the synthetic subject: factors on five segment groups (uniform), the rest of the model as it is
TRUTH = {"pelvis": 1.04, "femur": 1.06, "tibia": 0.95, "torso": 1.03, "calcn": 1.05}
ARM = ("Elbow", "Forearm", "Wrist")


@pytest.fixture(scope="module")
def synthetic(model):
    """Markers of the scaled subject (``scale_model``) at the trial's IK poses (every fourth frame) plus 1 mm noise,
    fitted from the unscaled model. The arm markers are left out (weight 0): with the torso scaled the shoulder moves
    1.5 cm, and frame-by-frame IK on the unscaled model then finds the right arm rotated by 106° — a local minimum of
    three low-weight markers on a 7-coordinate arm that no scale fit from that start escapes."""
    markers, measured, weights, _ = walking_3d_markers(model)
    data = {n: v[::4] for n, v in measured.items()}
    weights = {n: (0.0 if n.endswith(ARM) else w) for n, w in weights.items()}
    ik = inverse_kinematics(model, markers, data, weights=weights)
    groups = {g: [b for b in model.body_paths if b.startswith(g)] for g in TRUTH}
    subject = scale_model(model, {b: TRUTH[g] for g, members in groups.items() for b in members})
    truth = marker_trajectories(subject.model, [subject.model.markers[m.name] for m in markers], ik.q)
    rng = np.random.default_rng(0)
    noisy = {m.name: truth[:, k] + 0.001 * rng.standard_normal(truth[:, k].shape) for k, m in enumerate(markers)}
    start = inverse_kinematics(model, markers, noisy, weights=weights)
    fit = register_markers(model, markers, noisy, start.q, weights=weights, scales=groups, uniform_scales=True)
    return markers, noisy, weights, groups, start, fit


def test_known_scales_recovered(model, synthetic):
    """The five factors within 1 % of the truth (measured 0.2–0.8 %: 60 frames of 1 mm noise, the offsets' 1 cm prior
    lets markers take part of a segment's length), the marker error from 1.4 cm RMS (unscaled IK) to about the
    noise (< 1.5 mm); and the scaled model built from the answer (``scale_model`` with the registered markers)
    puts the markers exactly where the fit did (1e-12 m)."""
    markers, noisy, weights, groups, start, fit = synthetic
    assert fit.success
    for g, value in TRUTH.items():
        assert fit.group_scales[g] == pytest.approx(np.full(3, value), rel=0.01), g
    assert start.rmse > 0.012 and fit.rmse < 0.0015
    built = scale_model(model, fit.scales, markers=fit.markers)
    P = marker_trajectories(built.model, [built.model.markers[m.name] for m in markers], fit.q)
    Y = np.stack([noisy[m.name] for m in markers], axis=1)
    assert np.allclose(np.linalg.norm(P - Y, axis=2), fit.errors, atol=1e-12)


def test_registration_jacobian_with_scales(model, synthetic):
    """The whole problem's Jacobian (poses, offsets, per-axis factors) against central differences (tolerance as for
    registration alone, tests/test_marker_registration.py)."""
    markers, noisy, weights, groups, start, _ = synthetic
    problem = _RegistrationProblem(model, markers, noisy, start.q, weights, 0.01, 0.01,
                                   "test", groups)
    rng = np.random.default_rng(5)
    x = problem.x0 + np.r_[np.zeros(problem.s_start - 3 * problem.K), 0.005 * rng.standard_normal(3 * problem.K),
                           0.05 * rng.standard_normal(problem.n_s)]
    r_err, phi_err = jacobian_errors(problem, x, rng)
    assert r_err < 1e-6 and phi_err < 1e-6


def test_default_pose():
    """The default pose holds the coupler (the patella's angle equal to the knee's) and the pelvis height the file
    gives (OpenSim assembles its default state so)."""
    pose = default_coordinates(ET.parse(opensim_file(MODEL)).getroot())
    assert pose["pelvis_ty"] == pytest.approx(0.93) and pose["knee_angle_r_beta"] == pose["knee_angle_r"] == 0.0


@pytest.mark.opensim
def test_scaled_path_lengths_agree_with_opensims(theirs, scaled):
    """``path_lengths`` (the numeric graph of the engine's path expressions) on the scaled model against OpenSim's
    scaled model at 5 random poses: the 38 paths without wrapping to 1e-12 m (round-off; measured 1e-16 m), those
    that wrap within 8 mm (the wrapping methods' known difference, docs/models.md)."""
    opensim, out = theirs
    *_, m, state, _ = out[False]
    ours = scaled.model
    coords = their_coordinates(m)
    wraps = {el.get("name") for el in scaled.document.iter("Millard2012EquilibriumMuscle")
             if el.find(".//PathWrap") is not None}
    rng = np.random.default_rng(7)
    plain = wrapped = 0.0
    for _ in range(5):
        pose = {c.name: float(rng.uniform(max(c.range[0], -1.0), min(c.range[1], 1.0))) for c in ours.coordinates}
        for side in "rl":
            pose[f"knee_angle_{side}_beta"] = pose[f"knee_angle_{side}"]
        for name, value in pose.items():
            coords[name].setValue(state, value, False)
        m.realizePosition(state)
        lengths = path_lengths(ours, pose)
        for mm in m.getMuscles():
            d = abs(mm.getLength(state) - lengths[mm.getName()])
            if mm.getName() in wraps:
                wrapped = max(wrapped, d)
            else:
                plain = max(plain, d)
    print(f"plain {plain:.1e} m, wrapped {wrapped:.1e} m")
    assert plain < 1e-12 and wrapped < 0.008


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("scales, error, match", [
    ({"femur": 1.1}, KeyError, "femur_r"),
    ({"ground": 1.1}, ValueError, "ground cannot be scaled"),
    ({"femur_r": -1.0}, ValueError, "femur_r.*positive"),
    ({"femur_r": (1.0, 1.1)}, ValueError, "one positive number or three"),
    ({"femur_r": "big"}, ValueError, "one positive number or three"),
    ([1.1], TypeError, "dict body name"),
])
def test_bad_scales_are_refused_by_name(scales, error, match):
    with pytest.raises(error, match=match):
        scale_model(MODEL, scales, replace_millard=True)


def test_bad_groups_and_bounds_are_refused(model, synthetic):
    markers, noisy, weights, _, start, _ = synthetic
    with pytest.raises(KeyError, match="femur_r"):
        register_markers(model, markers, noisy, start.q, weights=weights, scales={"thigh": ["femur"]})
    with pytest.raises(ValueError, match="two groups"):
        register_markers(model, markers, noisy, start.q, weights=weights, scales={"a": ["femur_r"], "b": ["femur_r"]})
    with pytest.raises(ValueError, match="scale_bounds"):
        register_markers(model, markers, noisy, start.q, weights=weights, scales=["femur_r"], scale_bounds=(1.1, 2))
    with pytest.raises(TypeError, match="string"):
        register_markers(model, markers, noisy, start.q, weights=weights, scales="femur_r")


def test_a_model_read_with_options_is_scaled_with_them():
    """``scale_model(model)`` scales the model's file with the options it was read with (here two welded toes, whose
    coordinates are then not in the default pose the muscles' lengths are taken in), and refuses a model that was
    not read from a file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        welded = ml.read_osim(opensim_file(MODEL), replace_millard=True, weld=["mtp_r", "mtp_l"])
    scaled = scale_model(welded, {"femur_r": 1.05})
    assert {c.name for c in scaled.model.coordinates} == {c.name for c in welded.coordinates}
    assert "mtp_angle_r" not in {c.name for c in scaled.model.coordinates}
    assert max(scaled.length_ratios.values()) > 1.03 and min(scaled.length_ratios.values()) == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(ValueError, match="not read from an .osim file"):
        scale_model(ml.models.gait2d(75.0, 1.8, muscles=False), {"trunk": 1.1})


def test_a_marker_along_a_rotated_frames_axes_is_refused_by_the_fit(model, synthetic):
    """A marker placed on a rotated offset frame (here the ankle's frame on the tibia) has its location along that
    frame's axes, which OpenSim scales along those axes: the reader records it and the scale fit refuses it by name,
    while scaling the file itself (scale_model) still follows OpenSim; the shipped model has no such length."""
    assert model.along_rotated_axes == []
    root = ET.parse(opensim_file(MODEL)).getroot()
    marker = next(m for m in root.iter("Marker") if m.get("name") == "R.Ankle")
    marker.find("socket_parent_frame").text = "/jointset/ankle_r/tibia_r_offset"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        moved = read_osim_string(ET.tostring(root, encoding="unicode"), "moved.osim", replace_millard=True)
    assert moved.along_rotated_axes == ["the marker R.Ankle"]
    markers, noisy, weights, _, start, _ = synthetic
    with pytest.raises(NotImplementedError, match="the marker R.Ankle .*rotated offset frame"):
        register_markers(moved, [moved.markers[m.name] for m in markers], noisy, start.q, weights=weights,
                         scales=["tibia_r"])
