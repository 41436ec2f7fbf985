"""Paths over cylinders (moco_lab.modeling.wrapping), without OpenSim: the closed form is the shortest path, OpenSim's
planar reference case, the quadrant rules, and the reader's refusals. Agreement with OpenSim 4.6 on the squat model's
8 wraps is in test_osim_opensim.py."""
import numpy as np
import pytest

from moco_lab.modeling.osim import OsimFormatError, read_osim
from moco_lab.modeling.wrapping import PathWrap, WrapCylinder, wrap_segment, wrapped_path_length
from moco_lab.util.data import opensim_file

AXES = (np.zeros(3), [np.eye(3)[0], np.eye(3)[1], np.eye(3)[2]])  # a cylinder frame equal to the world frame


def test_opensim_planar_reference_case():
    """OpenSim's testWrapCylinder 'Perpendicular 2': R = 1, path (2, −2, 0) → (−2, 2.1, 0); OpenSim 4.5's tangent
    points and wrapped arc length (a planar case, where OpenSim's construction is exact), to its tolerance 1e-9."""
    cyl = WrapCylinder("c", "ground", 1.0, 10.0)
    w = wrap_segment([2.0, -2.0, 0.0], [-2.0, 2.1, 0.0], cyl)
    assert float(w["wraps"]) > 0 and float(w["mandatory"]) > 0
    assert float(w["helix"]) == pytest.approx(0.689036814042993, abs=1e-9)
    assert np.allclose(np.array(w["T1"], float), [0.911437827766147, 0.411437827766148, 0.0], atol=1e-9)
    assert np.allclose(np.array(w["T2"], float), [0.441911556159668, 0.897058624913969, 0.0], atol=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_closed_form_is_a_smooth_tangent_path(seed):
    """The wrapped path is straight – helix – straight with no kink: at each tangent point the straight piece's
    direction is the helix's tangent (in the cross-section the straight piece touches the circle), which makes it
    the locally shortest path over the convex cylinder; its length is the sum of the three pieces."""
    rng = np.random.default_rng(seed)
    R = 0.04
    cyl = WrapCylinder("c", "ground", R, 1.0)
    ang = rng.uniform(0, 2 * np.pi)
    A = np.array([0.1 * np.cos(ang), 0.1 * np.sin(ang), rng.uniform(-0.05, 0.05)])
    turn = rng.uniform(-0.6, 0.6)
    B = np.array([0.12 * np.cos(ang + np.pi + turn), 0.12 * np.sin(ang + np.pi + turn), rng.uniform(-0.1, 0.1)])
    w = wrap_segment(A, B, cyl)
    assert float(w["wraps"]) > 0
    T1, T2 = np.array(w["T1"], float), np.array(w["T2"], float)
    assert np.hypot(*T1[:2]) == pytest.approx(R, abs=1e-15) and np.hypot(*T2[:2]) == pytest.approx(R, abs=1e-15)
    sense = 1.0 if (T1[0] * (T1[1] - A[1]) - T1[1] * (T1[0] - A[0])) > 0 else -1.0  # way around, seen from +z
    arc = (sense * (np.arctan2(T2[1], T2[0]) - np.arctan2(T1[1], T1[0]))) % (2 * np.pi) * R
    rise = T2[2] - T1[2]
    helix = np.hypot(arc, rise)
    for T, D in ((T1, T1 - A), (T2, B - T2)):
        tangent = np.array([-sense * T[1] / R * arc, sense * T[0] / R * arc, rise]) / helix
        assert np.allclose(D / np.linalg.norm(D), tangent, atol=1e-12)
    assert float(w["helix"]) == pytest.approx(helix, abs=1e-15)
    assert float(w["length"]) == pytest.approx(np.linalg.norm(T1 - A) + helix + np.linalg.norm(B - T2), abs=1e-14)


def test_opensims_construction_on_the_reference_case_and_against_the_shortest_path():
    """``WrapCylinder(method="opensim")`` (OpenSim 4.6's ``WrapCylinder::wrapLine``): on OpenSim's planar reference
    case it gives OpenSim's tangent points and arc (to 1e-9, as above); with both points in one cross-section
    (Δz = 0) the plane it slides the tangent points to is that cross-section, so on an all-quadrant cylinder it
    is the shortest path to round-off; obliquely it is never shorter than the shortest path and decides whether
    to wrap as it does. (With a quadrant, OpenSim's choice of tangent points and of "the long way round" can
    differ from the shortest path's even in a cross-section — by more than a turn where both points lie on the
    inactive side; the construction is checked against OpenSim itself on the squat and 3-D models in
    test_osim_opensim.py and test_osim3d.py.)"""
    cyl = WrapCylinder("c", "ground", 1.0, 10.0, method="opensim")
    w = wrap_segment([2.0, -2.0, 0.0], [-2.0, 2.1, 0.0], cyl)
    assert float(w["wraps"]) > 0
    assert float(w["helix"]) == pytest.approx(0.689036814042993, abs=1e-9)
    assert np.allclose(np.array(w["T1"], float), [0.911437827766147, 0.411437827766148, 0.0], atol=1e-9)
    assert np.allclose(np.array(w["T2"], float), [0.441911556159668, 0.897058624913969, 0.0], atol=1e-9)
    rng = np.random.default_rng(3)
    longer = 0
    ours = WrapCylinder("o", "ground", 0.04, 0.5, method="opensim")
    short = WrapCylinder("s", "ground", 0.04, 0.5)
    for _ in range(100):
        a, b = rng.uniform(0, 2 * np.pi, 2)
        ra, rb = rng.uniform(0.05, 0.15, 2)
        z = rng.uniform(-0.1, 0.1)
        for dz in (0.0, rng.uniform(-0.1, 0.1)):
            A, B = [ra * np.cos(a), ra * np.sin(a), z], [rb * np.cos(b), rb * np.sin(b), z + dz]
            wo, ws = wrap_segment(A, B, ours), wrap_segment(A, B, short)
            assert (float(wo["wraps"]) > 0) == (float(ws["wraps"]) > 0)
            if float(ws["wraps"]) <= 0:
                continue
            if dz == 0.0:
                assert float(wo["length"]) == pytest.approx(float(ws["length"]), abs=1e-15)
            else:
                assert float(wo["length"]) >= float(ws["length"]) - 1e-15
                longer += float(wo["length"]) > float(ws["length"]) + 1e-9
    assert longer > 10  # obliquely the construction is not the shortest path
    with pytest.raises(ValueError, match="method 'geodesic'"):
        WrapCylinder("bad", "ground", 1.0, 1.0, method="geodesic")
    with pytest.raises(ValueError, match="wrap_method 'exact'"):
        read_osim("squatToStand_3dof9musc.osim", wrap_method="exact")


def test_when_a_segment_wraps():
    cyl = WrapCylinder("c", "ground", 1.0, 2.0)
    assert float(wrap_segment([2, 0.5, 0], [-2, 0.5, 0], cyl)["wraps"]) > 0  # passes through
    assert float(wrap_segment([2, 1.5, 0], [-2, 1.5, 0], cyl)["wraps"]) < 0  # passes beside
    assert float(wrap_segment([0.5, 0, 0], [-2, 0.5, 0], cyl)["wraps"]) < 0  # a point inside the radius
    assert float(wrap_segment([2, 0.5, 5], [-2, 0.5, 5.2], cyl)["wraps"]) < 0  # beyond the cylinder's ends
    # quadrant +y: a segment crossing y = 0 on the inactive (−y) side is forced around over +y
    up = WrapCylinder("u", "ground", 1.0, 2.0, quadrant="y")
    w = wrap_segment([3, 0.5, 0], [-3, -3.5, 0], up)
    assert float(w["wraps"]) > 0 and float(w["mandatory"]) < 0
    assert float(w["T1"][1]) > 0 and float(w["T2"][1]) > 0  # the path goes over the +y side
    free = wrap_segment([3, 0.5, 0], [-3, -3.5, 0], WrapCylinder("f", "ground", 1.0, 2.0))
    assert float(free["wraps"]) < 0  # the same segment does not touch an all-quadrant cylinder
    with pytest.raises(ValueError, match="quadrant"):
        WrapCylinder("bad", "ground", 1.0, 1.0, quadrant="+w")


def test_path_length_through_points_and_two_wraps():
    """A straight path that misses both cylinders is the polyline; wrapping lengthens it; two wraps in a row converge
    with the passes (each wrap the geodesic given the other's tangent point)."""
    c1 = WrapCylinder("c1", "ground", 0.5, 4.0)
    c2 = WrapCylinder("c2", "ground", 0.5, 4.0, translation=(3.0, 0.0, 0.0))
    frames = {"c1": AXES, "c2": (np.array([3.0, 0.0, 0.0]), AXES[1])}
    pts = [np.array([-2.0, 2.0, 0.0]), np.array([5.0, 2.0, 0.3])]
    assert float(wrapped_path_length(pts, [PathWrap(c1), PathWrap(c2)], frames)) == pytest.approx(
        np.linalg.norm(pts[1] - pts[0]))
    pts = [np.array([-2.0, 0.2, 0.0]), np.array([5.0, 0.1, 0.3])]
    lengths = [float(wrapped_path_length(pts, [PathWrap(c1), PathWrap(c2)], frames, passes=n)) for n in (1, 2, 4, 8)]
    assert lengths[0] > np.linalg.norm(pts[1] - pts[0])
    assert abs(lengths[-1] - lengths[-2]) < 1e-12 and abs(lengths[1] - lengths[-1]) < 1e-6


def test_reader_refuses_other_wrap_objects(tmp_path):
    text = opensim_file("squatToStand_3dof9musc.osim").read_text()
    text = text.replace('<WrapCylinder name="KnExt_at_fem_r">', '<WrapEllipsoid name="KnExt_at_fem_r">', 1)
    i = text.index('<WrapEllipsoid name="KnExt_at_fem_r">')
    j = text.index("</WrapCylinder>", i)
    text = text[:j] + "</WrapEllipsoid>" + text[j + len("</WrapCylinder>"):]
    path = tmp_path / "ellipsoid.osim"
    path.write_text(text)
    with pytest.raises(OsimFormatError, match=r"KnExt_at_fem_r.*WrapEllipsoid.*rect_fem_r"):
        read_osim(path, replace_millard=True)


def test_drawn_paths_follow_the_wraps():
    """pose() draws wrapped muscles around their cylinders: the drawn polyline (helices sampled every 2 mm) is as
    long as the path the engine computes, to the chords' shortfall (< 0.1 mm here), and longer than the straight
    polyline through the path points."""
    from moco_lab.analysis.pose import pose
    from moco_lab.modeling import operators as ops
    from moco_lab.results.trajectory import Trajectory
    from moco_lab.tools.analyze import analyze

    model = ops.set_tendon_compliance(read_osim(opensim_file("squatToStand_3dof9musc.osim"), replace_millard=True),
                                      "rigid")
    squat = {"knee_angle_r": -1.8, "knee_angle_r_beta": 1.8, "hip_flexion_r": -1.7, "ankle_angle_r": 0.5}
    drawn = pose(model, squat).muscles
    states = {c.value_path: np.array([squat[c.name]]) for c in model.coordinates}
    states |= {c.speed_path: np.zeros(1) for c in model.coordinates}
    states |= {s: np.full(1, 0.5) for s in model.auxiliary_state_names()}
    table = analyze(model, Trajectory(np.zeros(1), states, {c: np.zeros(1) for c in model.control_names()}),
                    r".*/length")
    lengthened = 0
    for m in model.muscles:
        pts = drawn[m.path]
        polyline = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
        assert 0.0 <= table[f"{m.path}/length"][0] - polyline < 1e-4
        pose_points = np.array([np.asarray(pts[0]), np.asarray(pts[-1])])
        lengthened += polyline > np.linalg.norm(np.diff(pose_points, axis=0)) + 1e-3 and len(pts) > 5
    assert lengthened >= 4  # the wrapped muscles are drawn around their cylinders
