"""Muscle moment arms (moco_lab.moment_arms) on the lesson-06 models (moco_lab.coupled_models).

Tolerances follow OpenSim's testMomentArms.cpp: finite-difference step 1e-4 rad
with the constraints re-satisfied, |r_genforce − r_dl/dθ| <= 1e-3 m at 11
angles over the range; dynamic consistency r·s = effective torque to 1e-3
relative. Where exact agreement is expected (same quantity, two exact
methods) the tests are much tighter.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from moco_lab.analysis import moment_arms as ma
from moco_lab.modeling import coupled as cm
from moco_lab.modeling.constraints import constraint_values, coupling_vector

STEP, TOL = 1e-4, 1e-3  # OpenSim's testMomentArms: Δθ and |r − (−dl/dθ)| bound (m)


def knee_angles(n=11):
    return np.linspace(*cm.KNEE_RANGE, n)


# ---------------------------------------------------------------- the textbook case
@pytest.mark.parametrize("a,b", [(0.25, 0.05), (0.10, 0.30)])
def test_single_pin_is_distance_to_line_of_action(a, b):
    model = cm.single_pin(a=a, b=b)
    thetas = np.linspace(0.0, 2.6, 27)
    for th in thetas:
        # geometry by hand: origin (0, a) on the fixed upper arm, insertion b along the forearm (−y at θ = 0)
        origin = np.array([0.0, a])
        insertion = b * np.array([math.sin(th), -math.cos(th)])
        line = insertion - origin
        distance = abs(origin[0] * line[1] - origin[1] * line[0]) / np.linalg.norm(line)  # |p × e| from the pin
        analytic = a * b * math.sin(th) / math.sqrt(a * a + b * b + 2 * a * b * math.cos(th))
        assert distance == pytest.approx(abs(analytic), abs=1e-15)
        for method in ("generalized_force", "path_velocity", "partial_velocity", "no_coupling"):
            r = ma.moment_arm(model, [th], "brachialis", "elbow_flexion", method=method)
            assert r == pytest.approx(analytic, abs=1e-13), method
        r_fd = ma.moment_arm(model, [th], "brachialis", "/jointset/elbow/elbow_flexion", method="perturbation")
        assert r_fd == pytest.approx(analytic, abs=1e-9)  # O(Δθ²) truncation
    assert ma.path_length(model, [0.0], "brachialis") == pytest.approx(a + b, abs=1e-15)


# ------------------------------------------------------------- coupled coordinates
CASES = [
    (cm.patella_knee, "knee_angle", ("vasti", "rectus_femoris", "hamstrings"), cm.KNEE_RANGE, [0.4, 0.0, 0.0]),
    (cm.patella_knee, "hip_flexion", ("rectus_femoris", "hamstrings"), (-0.5, 1.2), [0.0, -0.7, 0.0]),
    (cm.composite_joint, "flex1", ("extensor", "flexor", "short_extensor"), (-0.6, 0.6), None),
    (lambda: cm.composite_joint(shares=(0.5, 0.5), name="wrist"), "flex1", ("extensor", "flexor"), (-0.6, 0.6),
     None),
]


@pytest.mark.parametrize("factory,coordinate,muscles,rng,q0", CASES,
                         ids=["patella-knee", "patella-hip", "spine-3-joints", "wrist-2-joints"])
def test_generalized_force_equals_perturbation_over_range(factory, coordinate, muscles, rng, q0):
    model = factory()
    thetas = np.linspace(*rng, 11)
    gf = ma.moment_arm_curves(model, muscles, coordinate, thetas, q0=q0)
    fd = ma.moment_arm_curves(model, muscles, coordinate, thetas, method="perturbation", q0=q0, step=STEP)
    pv = ma.moment_arm_curves(model, muscles, coordinate, thetas, method="path_velocity", q0=q0)
    pa = ma.moment_arm_curves(model, muscles, coordinate, thetas, method="partial_velocity", q0=q0)
    for m in muscles:
        worst = np.max(np.abs(gf[m] - fd[m]))
        print(f"{model.name} {coordinate} {m}: max |Cᵀf − (−Δl/Δθ)| = {worst:.2e} m")
        assert worst <= TOL              # OpenSim's criterion
        assert worst <= 1e-7             # what central differences with Δθ = 1e-4 actually give here
        np.testing.assert_allclose(pv[m], gf[m], atol=1e-12)  # exact methods agree to round-off
        np.testing.assert_allclose(pa[m], gf[m], atol=1e-12)
        assert np.max(np.abs(gf[m])) > 0.005  # a real muscle about this coordinate, not a trivial zero
    # single evaluations agree with the sweep
    q = np.zeros(model.nq) if q0 is None else np.array(q0, float)
    q[model.coordinate(coordinate).q_index] = thetas[3]
    assert ma.moment_arm(model, q, muscles[0], coordinate) == pytest.approx(gf[muscles[0]][3], abs=1e-14)


def test_patella_coupling_vector_is_the_coupler_slope():
    model = cm.patella_knee()
    for th in knee_angles():
        q = ma.assemble(model, [0.3, th, 0.0], "knee_angle")
        assert abs(constraint_values(model, q)[0]) < 1e-12
        assert q[2] == pytest.approx(0.75 * th + 0.06 * th * th, abs=1e-12)
        np.testing.assert_allclose(coupling_vector(model, q, "knee_angle"), [0.0, 1.0, 0.75 + 0.12 * th], atol=1e-12)
        # about the dependent coordinate: the knee moves 1/slope per unit patella rotation
        np.testing.assert_allclose(coupling_vector(model, q, "patella_angle"),
                                   [0.0, 1.0 / (0.75 + 0.12 * th), 1.0], rtol=1e-12)
        r_knee = ma.moment_arm(model, q, "vasti", "knee_angle")
        r_pat = ma.moment_arm(model, q, "vasti", "patella_angle")
        assert r_pat == pytest.approx(r_knee / (0.75 + 0.12 * th), rel=1e-12)
        # and the perturbation method with the *patella* as θ (knee re-assembled) agrees
        r_pat_fd = ma.moment_arm(model, q, "vasti", "patella_angle", method="perturbation")
        assert r_pat_fd == pytest.approx(r_pat, abs=1e-7)


def test_without_coupling_vector_the_answer_is_wrong_by_the_missing_terms():
    """Treating the dependent coordinate as independent (C = e_θ) drops Σ_{k≠θ} c_k f_k."""
    model = cm.patella_knee()
    worst = {}
    for m in ("vasti", "rectus_femoris", "hamstrings"):
        diffs = []
        for th in knee_angles():
            q = ma.assemble(model, [0.2, th, 0.0], "knee_angle")
            f = ma.path_generalized_forces(model, q, m)
            naive = ma.moment_arm(model, q, m, "knee_angle", method="no_coupling")
            right = ma.moment_arm(model, q, m, "knee_angle", method="perturbation")
            slope = 0.75 + 0.12 * th  # coupler slope, from the factory's documented function
            assert naive == pytest.approx(f[1], abs=1e-15)
            assert right - naive == pytest.approx(slope * f[2], abs=1e-7)  # the predictable difference
            diffs.append(abs(right - naive))
        worst[m] = max(diffs)
    print("max |r − r_no_coupling| (m):", {k: f"{v:.4f}" for k, v in worst.items()})
    assert worst["vasti"] > 3e-3 and worst["rectus_femoris"] > 3e-3   # several mm: beyond OpenSim's 1 mm
    assert worst["hamstrings"] < 1e-7                                  # no path point on the patella

    spine = cm.composite_joint(shares=(0.4, 0.35, 0.25))
    ratio = np.array([1.0, 0.35 / 0.4, 0.25 / 0.4])
    for th in np.linspace(-0.6, 0.6, 7):
        q = ma.assemble(spine, [th, 0.0, 0.0], "flex1")
        np.testing.assert_allclose(q, ratio * th, atol=1e-12)
        f = ma.path_generalized_forces(spine, q, "extensor")
        naive = ma.moment_arm(spine, q, "extensor", "flex1", method="no_coupling")
        right = ma.moment_arm(spine, q, "extensor", "flex1", method="perturbation")
        assert right - naive == pytest.approx(ratio[1:] @ f[1:], abs=1e-7)
        assert abs(right) > 2.0 * abs(naive)  # the naive answer sees only the first of three joints


def test_dynamic_consistency_r_times_s_equals_effective_torque():
    """OpenSim's second check: r·s vs the torque that the constrained equations of motion see."""
    cases = [(cm.patella_knee(), "knee_angle", ("vasti", "rectus_femoris", "hamstrings"), [0.3, -1.0, 0.0]),
             (cm.patella_knee(), "knee_angle", ("vasti",), [0.0, -0.1, 0.0]),
             (cm.patella_knee(), "hip_flexion", ("rectus_femoris", "hamstrings"), [0.6, -0.5, 0.0]),
             (cm.composite_joint(), "flex1", ("extensor", "flexor", "short_extensor"), [0.3, 0.0, 0.0])]
    for model, coordinate, muscles, q in cases:
        for m in muscles:
            d = ma.dynamic_consistency(model, q, m, coordinate, tension=10.0)
            assert d["r_times_s"] == pytest.approx(d["tau_effective"], rel=1e-3)
            assert d["r_times_s"] == pytest.approx(d["tau_inverse_dynamics"], rel=1e-3)
            assert abs(d["tau_effective"]) > 0.05  # N·m: a real torque
            # Eq. 22's weights from positions equal the velocity-projected coupling vector
            qa = ma.assemble(model, q, coordinate)
            np.testing.assert_allclose(d["weights"], coupling_vector(model, qa, coordinate), atol=1e-7)
    # the constraint does work on the individual joints (λ ≠ 0) but none along C
    d = ma.dynamic_consistency(cases[0][0], cases[0][3], "vasti", "knee_angle")
    assert np.max(np.abs(d["multipliers"])) > 1e-3


def test_inputs_and_errors():
    model = cm.patella_knee()
    q = ma.assemble(model, [0.2, -0.8, 0.0], "knee_angle")
    r = ma.moment_arm(model, q, "vasti", "knee_angle")
    state = np.concatenate([q, np.zeros(3), [0.5, 0.5, 0.5]])
    assert ma.moment_arm(model, state, "/forceset/vasti", "/jointset/knee/knee_angle") == pytest.approx(r, abs=1e-14)
    ctx = model.plant.CreateDefaultContext()
    model.plant.SetPositions(ctx, q)
    assert ma.moment_arm(model, ctx, model.muscles[0], "knee_angle") == pytest.approx(r, abs=1e-14)
    values = {"/jointset/hip/hip_flexion/value": 0.2, "/jointset/knee/knee_angle/value": -0.8}
    assert ma.moment_arm(model, values, model.muscles[0].geometry, "knee_angle") == pytest.approx(r, abs=1e-12)
    with pytest.raises(KeyError, match="Did you mean.*vasti"):
        ma.moment_arm(model, q, "vastus", "knee_angle")
    with pytest.raises(KeyError, match="Did you mean"):
        ma.moment_arm(model, q, "vasti", "knee_angel")
    with pytest.raises(ValueError, match="Unknown method"):
        ma.moment_arm(model, q, "vasti", "knee_angle", method="tendon")


def test_curves_for_all_muscles_equal_pointwise_moment_arms():
    # the batched curves (what the dashboard's slider draws) are the one-angle-at-a-time moment arms
    model = cm.patella_knee()
    thetas = np.linspace(*cm.KNEE_RANGE, 61)
    curves = ma.moment_arm_curves(model, None, "knee_angle", thetas)
    assert set(curves) == {"vasti", "rectus_femoris", "hamstrings"} and curves["vasti"].shape == (61,)
    for muscle in curves:
        for k in (0, 17, 60):
            q = ma.assemble(model, [0.0, thetas[k], 0.0], "knee_angle")
            assert curves[muscle][k] == pytest.approx(ma.moment_arm(model, q, muscle, "knee_angle"), abs=1e-12)


def test_constant_moment_arm_cost():
    """gait2d's l = L0 − dθ: the length error grows like ∫ (r − d) dθ."""
    model = cm.patella_knee()
    thetas = np.linspace(*cm.KNEE_RANGE, 121)
    d = cm.GAIT2D_MOMENT_ARMS["vasti"]["knee_angle"]
    cost = ma.constant_moment_arm_cost(model, "vasti", "knee_angle", d, thetas)
    i0 = int(np.argmin(np.abs(thetas)))
    assert cost["length_error"][i0] == 0.0
    # d/dθ (l_const − l) = −d + r, checked with the path lengths' own differences
    slope = np.gradient(cost["length_error"], thetas)
    np.testing.assert_allclose(slope[1:-1], (cost["r"] - d)[1:-1], atol=2e-4)
    worst = np.max(np.abs(cost["length_error"]))
    lopt = cm.GAIT2D_MUSCLES["vasti"][1]
    print(f"vasti: max length error of the constant arm {100 * worst:.2f} cm = {100 * worst / lopt:.0f}% of l_opt")
    assert worst > 0.005  # the constant arm misses by more than 5 mm somewhere in the range


# ------------------------------------------------------------------- real OpenSim
@pytest.mark.opensim
def test_against_opensim_single_pin_and_coupler():
    osim = pytest.importorskip("opensim")
    a, b = 0.25, 0.05

    def build(coupled: bool):
        m = osim.Model()
        m.setGravity(osim.Vec3(0, -9.80665, 0))
        parent = m.getGround()
        bodies = []
        n = 2 if coupled else 1
        for k in range(n):
            body = osim.Body(f"seg{k}", 1.0, osim.Vec3(0), osim.Inertia(0.01))
            offset = osim.Vec3(0, 0, 0) if k == 0 else osim.Vec3(0, -0.1, 0)
            j = osim.PinJoint(f"j{k}", parent, offset, osim.Vec3(0), body, osim.Vec3(0), osim.Vec3(0))
            j.updCoordinate().setName(f"q{k}")
            m.addBody(body)
            m.addJoint(j)
            bodies.append(body)
            parent = body
        if coupled:
            c = osim.CoordinateCouplerConstraint()
            c.setName("coupler")
            c.setIndependentCoordinateNames(osim.ArrayStr("q0", 1))
            c.setDependentCoordinateName("q1")
            c.setFunction(osim.LinearFunction(0.6, 0.0))
            m.addConstraint(c)
        act = osim.PathActuator()
        act.setName("muscle")
        act.addNewPathPoint("origin", m.getGround(), osim.Vec3(0, a, 0))
        act.addNewPathPoint("insertion", bodies[-1], osim.Vec3(0.02, -b, 0))
        m.addForce(act)
        state = m.initSystem()
        return m, state, act

    def ours(coupled: bool):
        import moco_lab as ml
        from moco_lab.modeling.constraints import CoordinateCouplerConstraint
        from moco_lab.modeling.path import GeometryPath

        bld = ml.ModelBuilder("check")
        n = 2 if coupled else 1
        parent = "ground"
        for k in range(n):
            bld.add_body(f"seg{k}", 1.0, inertia=(0.01, 0.01, 0.01))
            bld.add_pin_joint(f"j{k}", parent, f"seg{k}", coordinate=f"q{k}",
                              parent_offset=(0, 0 if k == 0 else -0.1, 0))
            parent = f"seg{k}"
        if coupled:
            bld.add_constraint(CoordinateCouplerConstraint("coupler", "q1", "q0", ratio=0.6))
        return bld.build(), GeometryPath([("ground", (0, a, 0)), (parent, (0.02, -b, 0))])

    for coupled in (False, True):
        m, state, act = build(coupled)
        model, path = ours(coupled)
        coord = m.getCoordinateSet().get("q0")
        thetas = np.linspace(-np.pi / 2, 0.0, 11) if coupled else np.linspace(0.1, 2.5, 11)
        for th in thetas:
            coord.setValue(state, float(th))  # enforces the constraints (assembles)
            r_osim = act.getPath().computeMomentArm(state, coord)
            r = ma.moment_arm(model, [th] + ([0.6 * th] if coupled else []), path, "q0")
            assert abs(r_osim) > 1e-3 or abs(th) < 0.2  # a non-trivial curve
            assert r == pytest.approx(r_osim, abs=1e-6), (coupled, th)
