"""gait2d (van den Bogert's reference manual): the model, its muscles, and the manual's freefall test.

Expected values come from the parameter table and the manual's equations, re-implemented here
independently of moco_lab.modeling.gait2d, and from the numbers the manual prints.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.engine.kernel import kernel_for
from moco_lab.modeling.gait2d import GAIT2D_COORDINATES, GAIT2D_MUSCLES, Gait2dMuscle, gait2d_parameters

PAR = gait2d_parameters()
MUSCLES = {f"{m['name']}_{side}": m for side in ("r", "l") for m in PAR["muscles"]}
JOINT = {"hip": "hip_flexion", "knee": "knee_angle", "ankle": "ankle_angle"}


@pytest.fixture(scope="module")
def model():
    return ml.models.gait2d()


@pytest.fixture(scope="module")
def kernel(model):
    return kernel_for(model)


def freefall_state(model):
    """The state of the manual's freefall test (gait2d_test.m): hip 1.2 m up, right hip +15°, right knee −15°,
    left hip −15°, left knee −25°, every L_CE = 1.4 L_CEopt, activations 0, at rest."""
    q = np.zeros(9)
    q[1] = 1.2
    q[3], q[4], q[6], q[7] = (math.radians(v) for v in (15, -15, -15, -25))
    z = np.array([1.4 if n.endswith("normalized_fiber_length") else 0.0 for n in model.auxiliary_state_names()])
    return q, z


def manual_residual(m: dict, q: dict, a: float, lce: float, vce: float, k1: float = 0.01) -> float:
    """Eq. 3–10 as the MEX source arranges them (units of F_max): F_SEE − (a F1 F2 + β V) − F_PEE."""
    c = PAR["muscle"]
    side = q["_side"]
    lm = m["l0"] - sum(d * q[f"{JOINT[j]}_{side}"] for j, d in m["d"].items())
    f1 = math.exp(-(((lce - 1.0) / m["width"]) ** 2))
    vmax, A, gmax = c["vmax"], c["hill_a"], c["gmax"]
    if vce < 0:
        f2 = (vmax + vce) / (vmax - vce / A)
    else:
        c3 = vmax * A * (gmax - 1) / (A + 1)
        f2 = (gmax * vce + c3) / (vce + c3)
    x = lce - m["pee_slack"]
    fpee = k1 * m["lceopt"] * x + (c["kpee"] * x * x if x > 0 else 0.0)
    s = lm - lce * m["lceopt"] - m["see_slack"]
    fsee = k1 * s + (s * s / (c["umax"] * m["see_slack"]) ** 2 if s > 0 else 0.0)
    return fsee - (a * f1 * f2 + c["damping"] * vce) - fpee


def evaluate(kernel, q, z, w=None, x=None, a=None):
    n = 1
    return kernel.evaluate(q[None], np.zeros((n, 9)), np.zeros((n, kernel.nx)) if x is None else x[None], None,
                           Z=z[None], A=np.zeros((n, 9)) if a is None else a[None],
                           W=np.zeros((n, kernel.nw)) if w is None else w[None])


# ------------------------------------------------------------------------------------------- the model
def test_segments_coordinates_and_names(model):
    names = model.state_names()
    assert len(names) == 50  # the manual's 9 q + 9 q̇ + 16 L_CE + 16 a
    assert [n.split("/")[-2] for n in names[:9]] == list(GAIT2D_COORDINATES)
    assert model.control_names() == [f"/forceset/{m}" for m in GAIT2D_MUSCLES]
    plant = model.plant
    total = sum(plant.GetBodyByName(b).default_mass() for b in
                ("trunk", "thigh_r", "shank_r", "foot_r", "thigh_l", "shank_l", "foot_l"))
    assert total == pytest.approx(75.0, abs=1e-12)
    for body, seg in (("trunk", "trunk"), ("thigh_l", "thigh"), ("shank_r", "shank"), ("foot_l", "foot")):
        M = plant.GetBodyByName(body).default_spatial_inertia()
        s = PAR["segments"][seg]
        assert M.get_mass() == s["mass"]
        np.testing.assert_allclose(M.get_com()[:2], s["com"], atol=1e-15)
        Izz_cm = M.Shift(M.get_com()).CalcRotationalInertia().get_moments()[2]
        assert Izz_cm == pytest.approx(s["inertia"], rel=1e-12)


def test_zero_posture_stands_on_flat_feet(model):
    """All coordinates zero: segments vertical, foot flat, hip at the ground origin (manual §2.3); heel and toe
    are then ThighLen + ShankLen + ankle height = 0.954 m below the hip."""
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, np.zeros(9))
    world = plant.world_frame()
    for side in ("r", "l"):
        foot = plant.GetBodyByName(f"foot_{side}").body_frame()
        pts = np.array([[-0.06, 0.1636], [-0.0702, -0.0702], [0.0, 0.0]])
        p = plant.CalcPointsPositions(ctx, foot, pts, world)
        np.testing.assert_allclose(p[0], [-0.06, 0.1636], atol=1e-15)
        np.testing.assert_allclose(p[1], [-0.954, -0.954], atol=1e-15)
    # a positive knee angle rotates the shank counter-clockwise (extension, manual §2.3): the ankle moves forward
    q = np.zeros(9)
    q[4] = 0.3
    plant.SetPositions(ctx, q)
    ankle = plant.CalcPointsPositions(ctx, plant.GetBodyByName("foot_r").body_frame(), np.zeros((3, 1)), world)
    assert ankle[0, 0] == pytest.approx(0.4428 * math.sin(0.3), abs=1e-15)


def test_scaling_as_the_mex_scale_command():
    """Masses × M/75, lengths and contact points × H/1.8, inertias × (M/75)(H/1.8)²; muscles unchanged."""
    small = ml.models.gait2d(mass=60.0, height=1.62)
    sm, sl = 60.0 / 75.0, 1.62 / 1.80
    M = small.plant.GetBodyByName("shank_r").default_spatial_inertia()
    s = PAR["segments"]["shank"]
    assert M.get_mass() == pytest.approx(s["mass"] * sm, rel=1e-15)
    np.testing.assert_allclose(M.get_com()[:2], np.array(s["com"]) * sl, rtol=1e-15)
    assert M.Shift(M.get_com()).CalcRotationalInertia().get_moments()[2] == pytest.approx(
        s["inertia"] * sm * sl**2, rel=1e-12)
    heel = small.force_element("/forceset/contact_heel_l")
    np.testing.assert_allclose(heel.location[:2], np.array(PAR["contact"]["heel"]) * sl, rtol=1e-15)
    vasti = small.force_element("/forceset/vasti_r")
    assert vasti.max_isometric_force == 7000.0 and vasti.l0 == 0.271
    assert small.spec == {"factory": "gait2d", "kwargs": {"mass": 60.0, "height": 1.62}}
    with pytest.raises(ValueError, match="mass and height must be positive"):
        ml.models.gait2d(mass=0)


def test_a_study_on_gait2d_round_trips():
    study = ml.Study("g")
    study.problem.set_model(ml.models.gait2d(height=1.7, contact_linear_term=True))
    again = ml.Study.from_dict(study.to_dict())
    m = again.problem.model
    assert m.spec["kwargs"] == {"height": 1.7, "contact_linear_term": True}
    assert m.force_element("/forceset/contact_toe_r").linear_term


# --------------------------------------------------------------------------- the manual's freefall test
def test_freefall_reproduces_the_manuals_printed_forces_and_multibody_rows():
    """The manual prints, for this state: GRF right foot (−0.000, 0.192) N, left foot (−0.000, 0.150) N, and
    multibody residuals 0.0000, 0.3417, −0.0263 for x, y and trunk angle (rows 4–9 depend on the muscles).

    Airborne contact force is k y0²/(4 y) to first order, so it scales with y0². With the manual's recommended
    y0 = 0.002 m both feet carry exactly four times the printed force (checked below), i.e. the run printed in
    the manual used y0 = 0.001 m; with that value the four printed numbers agree to their last digit, which
    checks the segment lengths, the joint sign conventions and Eq. 12–13 at the manual's own state. The
    residual's sign is the opposite of Autolev's form (moco_lab's is M q̈ + c − τ)."""
    recommended = ml.models.gait2d()
    model = ml.models.gait2d()
    for side in "rl":
        for pt in ("heel", "toe"):
            model.set_property(f"/forceset/contact_{pt}_{side}/transition", 0.001)
    feet = [f"/forceset/contact_{pt}_{side}/force" for side in "rl" for pt in ("heel", "toe")]
    q, z = freefall_state(model)
    forces = {}
    for name, m in (("recommended", recommended), ("printed", model)):
        k = kernel_for(m)
        out = k.outputs(feet, q[None], np.zeros((1, 9)))
        forces[name] = np.array([out[feet[0]][0] + out[feet[1]][0], out[feet[2]][0] + out[feet[3]][0]])[:, :2]
    np.testing.assert_allclose(forces["recommended"][:, 1] / forces["printed"][:, 1], 4.0, rtol=2e-3)
    np.testing.assert_allclose(forces["printed"], [[0.0, 0.192], [0.0, 0.150]], atol=5e-4)  # printed: %8.3f
    k = kernel_for(model)
    a = np.zeros(9)
    a[1] = -9.81
    R = evaluate(k, q, z, a=a)["R"][0]
    np.testing.assert_allclose(-R[:3], [0.0, 0.3417, -0.0263], atol=5e-5)  # printed: %11.4f


def test_freefall_contraction_and_activation_residuals(model, kernel):
    """At the freefall state (a = 0, V_CE = 0, u = 0) each contraction residual is Eq. 9's passive balance, and
    every activation derivative is zero. (The manual's printed contraction column, −0.0001 … −0.0407, was
    made with a parameter sheet that cannot be read any more; these values come from the table in
    gait2d_parameters.toml, computed here by an independent implementation of the equations.)"""
    q, z = freefall_state(model)
    res = evaluate(kernel, q, z)
    qd = dict(zip(GAIT2D_COORDINATES, q))
    expected = []
    for name in GAIT2D_MUSCLES:
        expected.append(manual_residual(MUSCLES[name], dict(qd, _side=name[-1]), 0.0, 1.4, 0.0))
    np.testing.assert_allclose(res["Rw"][0], expected, rtol=1e-12, atol=1e-15)
    assert np.all(res["Zd"][0] == 0.0)
    pee_stretched = [MUSCLES[n]["pee_slack"] < 1.4 for n in GAIT2D_MUSCLES]
    assert all((r < -0.04) == s for r, s in zip(res["Rw"][0], pee_stretched))  # −kPEE·0.2² dominates


def test_freefall_residuals_names_the_manuals_columns(model, kernel):
    """``analysis.gait2d.freefall_residuals`` (lesson 09's table) gives the columns of the manual's printout by name:
    the same numbers as the kernel evaluated by hand above, the multibody rows with Autolev's sign, and each foot's
    force as its heel plus its toe (the printout's lines labelled GRF_heel and GRF_toe are the two feet)."""
    from moco_lab.analysis.gait2d import freefall_residuals

    q, z = freefall_state(model)
    pose = {c: v for c, v in zip(GAIT2D_COORDINATES, q) if v != 0.0}
    r = freefall_residuals(model, pose)
    a = np.zeros(9)
    a[1] = -9.81
    res = evaluate(kernel, q, z, a=a)
    np.testing.assert_array_equal(r.multibody, -res["R"][0])
    np.testing.assert_array_equal(r.contraction, res["Rw"][0])
    assert r.activation.shape == (16,) and np.all(r.activation == 0.0)
    for side in "rl":
        np.testing.assert_allclose(r.feet[side], r.contact[f"heel_{side}"] + r.contact[f"toe_{side}"], rtol=1e-15)
    printed = ml.models.gait2d()
    for side in "rl":
        for pt in ("heel", "toe"):
            printed.set_property(f"/forceset/contact_{pt}_{side}/transition", 0.001)
    p = freefall_residuals(printed, pose)
    np.testing.assert_allclose([p.feet["r"][1], p.feet["l"][1]], [0.192, 0.150], atol=5e-4)  # printed: %8.3f
    heels = p.contact["heel_r"][1] + p.contact["heel_l"][1]
    assert abs(heels - 0.192) > 0.02  # read as heels and toes, the printout would not match
    with pytest.raises(KeyError, match="pose names no coordinate 'knee_r'"):
        freefall_residuals(model, {"knee_r": 0.3})


def test_contraction_residual_at_random_states(model, kernel):
    """Active, moving muscles (concentric and eccentric, stretched and slack tendons): Eq. 3–9 and Eq. 2."""
    rng = np.random.default_rng(4)
    names = model.auxiliary_state_names()
    for _ in range(20):
        q = np.concatenate([[0.0, 1.1, 0.1], rng.uniform(-0.8, 0.8, 6)])
        a = rng.uniform(0, 1, 16)
        lce = rng.uniform(0.5, 1.6, 16)
        z = np.array([a[i // 2] if n.endswith("activation") else lce[i // 2] for i, n in enumerate(names)])
        w = rng.uniform(-12, 12, 16)
        u = rng.uniform(0, 1, 16)
        res = evaluate(kernel, q, z, w=w, x=u)
        qd = dict(zip(GAIT2D_COORDINATES, q))
        for i, name in enumerate(GAIT2D_MUSCLES):
            r = manual_residual(MUSCLES[name], dict(qd, _side=name[-1]), a[i], lce[i], w[i])
            assert res["Rw"][0][i] == pytest.approx(r, rel=1e-11, abs=1e-13), name
            c = PAR["muscle"]
            assert res["Zd"][0][2 * i] == pytest.approx((u[i] - a[i]) * (c["c1"] * u[i] + c["c2"]), rel=1e-13)
            assert res["Zd"][0][2 * i + 1] == w[i]


def test_each_muscle_pulls_with_its_moment_arms(model, kernel):
    """Eq. 11: stretching one muscle's tendon (L_CE 1.4 → 0.9) changes the generalized forces by d_j ΔF on its
    own joints only, and by nothing elsewhere."""
    q, z0 = freefall_state(model)
    names = model.auxiliary_state_names()
    base = kernel.applied(q[None], np.zeros((1, 9)), z0[None], np.zeros((1, kernel.nx)), np.zeros(0))[0][0]
    qd = dict(zip(GAIT2D_COORDINATES, q))
    c = PAR["muscle"]
    for name in GAIT2D_MUSCLES:
        z = z0.copy()
        z[names.index(f"/forceset/{name}/normalized_fiber_length")] = 0.9
        tau = kernel.applied(q[None], np.zeros((1, 9)), z[None], np.zeros((1, kernel.nx)), np.zeros(0))[0][0]
        m, side = MUSCLES[name], name[-1]
        lm = m["l0"] - sum(d * qd[f"{JOINT[j]}_{side}"] for j, d in m["d"].items())

        def fsee(lce):
            s = lm - lce * m["lceopt"] - m["see_slack"]
            return 0.01 * s + (s * s / (c["umax"] * m["see_slack"]) ** 2 if s > 0 else 0.0)

        dF = m["fmax"] * (fsee(0.9) - fsee(1.4))
        expected = np.zeros(9)
        for j, d in m["d"].items():
            expected[GAIT2D_COORDINATES.index(f"{JOINT[j]}_{side}")] = d * dF
        np.testing.assert_allclose(tau - base, expected, rtol=1e-10, atol=1e-9 * abs(dF))
        assert dF > 0


def test_jacobians_against_finite_differences(model, kernel):
    """The manual's derivatives test: every Jacobian block (q, q̇, muscle states, V_CE, excitations, q̈)."""
    rng = np.random.default_rng(7)
    names = model.auxiliary_state_names()
    for _ in range(3):
        q = np.concatenate([[0.1, 0.93, 0.05], rng.uniform(-0.5, 0.5, 6)])  # feet near and in the ground
        u_ = rng.normal(size=9) * 0.5
        z = np.array([rng.uniform(0.05, 1) if n.endswith("activation") else rng.uniform(0.6, 1.5) for n in names])
        w = rng.uniform(-5, 5, 16)
        x = rng.uniform(0, 1, 16)
        a = rng.normal(size=9)
        args = {"dq": q, "du": u_, "dz": z, "dw": w, "dx": x, "da": a}

        def f(v):
            r = kernel.evaluate(v["dq"][None], v["du"][None], v["dx"][None], None, Z=v["dz"][None],
                                A=v["da"][None], W=v["dw"][None])
            return np.concatenate([r["R"][0], r["Zd"][0], r["Rw"][0]])

        res = kernel.evaluate(q[None], u_[None], x[None], None, Z=z[None], A=a[None], W=w[None], jac=True)
        for key, base in args.items():
            exact_blocks = [res["J"][key][0]]
            exact_blocks += [res["JZ"][key][0], res["JW"][key][0]] if key != "da" else \
                [np.zeros((kernel.nz, base.size)), np.zeros((kernel.nw, base.size))]
            exact = np.vstack(exact_blocks)
            h = 1e-6
            for j in range(base.size):
                plus, minus = dict(args), dict(args)
                plus[key] = base.copy()
                minus[key] = base.copy()
                plus[key][j] += h
                minus[key][j] -= h
                fd = (f(plus) - f(minus)) / (2 * h)
                # central differences: O(h²) truncation plus round-off ~1e-16·|f|/h (|f| up to ~1e4 N in contact)
                tol = 1e-5 * np.maximum(1.0, np.abs(exact[:, j])) + 1e-6
                assert np.all(np.abs(fd - exact[:, j]) <= tol), (key, j, np.abs(fd - exact[:, j]).max())


# ----------------------------------------------------------------------- where manual and code disagree
def test_the_documented_alternatives():
    m = dict(MUSCLES["soleus_r"])
    args = dict(path="/forceset/s", max_isometric_force=m["fmax"], optimal_fiber_length=m["lceopt"],
                width=m["width"], pee_slack=m["pee_slack"], see_slack=m["see_slack"], l0=m["l0"],
                moment_arms={"ankle_angle_r": -0.053})
    base = Gait2dMuscle(**args)
    lm = 0.31  # a stretched tendon
    f = base.forces(0.0, 1.0, 0.5, lm, np)
    # damping outside a·F1·F2 (default): ∂residual/∂V_CE = −β at zero activation; Eq. 5 literally: zero
    eq5 = Gait2dMuscle(**args, damping_form="eq5")
    h = 1e-7
    slope = lambda mus: (mus.forces(0.0, 1.0, 0.5 + h, lm, np)["residual"]  # noqa: E731
                         - mus.forces(0.0, 1.0, 0.5 - h, lm, np)["residual"]) / (2 * h)
    assert slope(base) == pytest.approx(-0.001, rel=1e-6) and slope(eq5) == 0.0
    # k1: the manual's text value (10 F_max/m) makes a slack tendon push 1000 times harder
    slack = 0.25
    k10 = Gait2dMuscle(**args, linear_stiffness=10.0)
    s = slack - 1.0 * m["lceopt"] - m["see_slack"]
    assert s < 0 and k10.forces(0, 1.0, 0, slack, np)["tendon"] == pytest.approx(10.0 * s, rel=1e-12)
    assert base.forces(0, 1.0, 0, slack, np)["tendon"] == pytest.approx(0.01 * s, rel=1e-12)
    # SEE stiffness from SEEslack (the definition of u_max) or from L_CEopt (the printed formula)
    stretch = lm - m["lceopt"] - m["see_slack"]
    alt = Gait2dMuscle(**args, see_stiffness_length="lceopt")
    assert f["tendon"] == pytest.approx(0.01 * stretch + stretch**2 / (0.04 * m["see_slack"]) ** 2, rel=1e-12)
    assert alt.forces(0.0, 1.0, 0.5, lm, np)["tendon"] == pytest.approx(
        0.01 * stretch + stretch**2 / (0.04 * m["lceopt"]) ** 2, rel=1e-12)
    # λ(a) (Eq. 6): at full activation λ = 1 − e^−3.82 + e^−3.82 = 1, at a = 0.3 V_max shrinks
    lam = Gait2dMuscle(**args, scaled_vmax=True)
    assert lam.forces(1.0, 1.0, -3.0, lm, np)["F2"] == pytest.approx(base.forces(1.0, 1.0, -3.0, lm, np)["F2"],
                                                                      rel=1e-14)
    lam03 = 1 - math.exp(-3.82 * 0.3) + 0.3 * math.exp(-3.82)
    assert lam.forces(0.3, 1.0, -3.0, lm, np)["F2"] == pytest.approx(
        (10 * lam03 - 3.0) / (10 * lam03 + 3.0 / 0.25), rel=1e-12)
    for bad, match in (({"damping_form": "inside"}, "damping_form"), ({"gmax": 1.0}, "gmax"),
                       ({"see_stiffness_length": "x"}, "see_stiffness_length"), ({"umax": 0.0}, "umax")):
        with pytest.raises(ValueError, match=match):
            Gait2dMuscle(**args, **bad)


# -------------------------------------------------------------------- strength and contact tests (§4)
def test_isometric_moments_are_the_muscles_equilibrium(model):
    """One posture, by hand: each muscle's fiber length from its force balance (bisection here, on the independent
    residual above), the moment Σ d F_max F_SEE plus Eq. 1 — against strength_curves."""
    from moco_lab.analysis.gait2d import strength_curves

    curves = strength_curves(model, "knee", angles_deg=[-60.0], posture_deg={"hip_flexion_r": 30.0})
    assert curves["positive_muscles"] == ["/forceset/rectus_femoris_r", "/forceset/vasti_r"]
    assert curves["negative_muscles"] == ["/forceset/hamstrings_r", "/forceset/gastrocnemius_r"]
    q = {c: 0.0 for c in GAIT2D_COORDINATES}
    q.update(hip_flexion_r=math.radians(30), knee_angle_r=math.radians(-60), _side="r")
    c = PAR["muscle"]

    def moment(active, level=1.0):
        total = 0.0
        for name, m in MUSCLES.items():
            if not name.endswith("_r") or "knee" not in m["d"]:
                continue
            a = level if f"/forceset/{name}" in active else 0.0
            lo, hi = -5.0, 20.0
            for _ in range(200):  # bisection: the residual falls as the fiber lengthens
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if manual_residual(m, q, a, mid, 0.0) > 0 else (lo, mid)
            lm = m["l0"] - sum(d * q[f"{JOINT[j]}_r"] for j, d in m["d"].items())
            s = lm - lo * m["lceopt"] - m["see_slack"]
            fsee = 0.01 * s + (s * s / (c["umax"] * m["see_slack"]) ** 2 if s > 0 else 0.0)
            total += m["d"]["knee"] * m["fmax"] * fsee
        rom = PAR["joint_range"]
        x0 = math.radians(rom["transition_deg"])
        fp = lambda x: 0.5 * (x + math.sqrt(x * x + x0 * x0))  # noqa: E731  (Appendix A)
        phi = q["knee_angle_r"]
        lo_, hi_ = (math.radians(v) for v in rom["knee_deg"])
        return total - rom["stiffness"] * (fp(phi - hi_) - fp(lo_ - phi))

    for key in ("positive", "negative", "passive"):
        active = curves.get(f"{key}_muscles", [])
        assert curves[key][0] == pytest.approx(moment(active), rel=1e-9, abs=1e-9), key
    assert curves["positive"][0] > 100 > 0 > -50 > curves["negative"][0]
    # a partial activation (lesson 09's exercise on λ(a)): the same balance with a = 0.3
    from moco_lab.analysis.gait2d import joint_moments

    angles = {"hip_flexion_r": math.radians(30), "knee_angle_r": math.radians(-60)}
    partial = joint_moments(model, angles, active=curves["positive_muscles"], activation=0.3)["knee_angle_r"]
    assert partial == pytest.approx(moment(curves["positive_muscles"], 0.3), rel=1e-9, abs=1e-9)
    assert curves["passive"][0] < partial < curves["positive"][0]
    for bad, error in ((1.5, ValueError), (float("nan"), ValueError), ("high", TypeError)):
        with pytest.raises(error, match="joint_moments: activation"):
            joint_moments(model, angles, active=curves["positive_muscles"], activation=bad)


def test_isokinetic_moments_follow_the_hill_curve(model):
    """Extensors lengthening (knee flexing, ω < 0) are stronger than isometric, shortening weaker; the flexors the
    other way round; near the neutral posture the passive moment stays small (joint damping −B ω and the slack
    muscles' damping β V_CE)."""
    from moco_lab.analysis.gait2d import strength_curves

    r = strength_curves(model, "knee", velocities_deg=[-300.0, 0.0, 300.0],
                        posture_deg={"knee_angle_r": -5.0, "knee_angle_l": -5.0})
    assert r["positive"][0] > r["positive"][1] > r["positive"][2] > 0
    assert r["negative"][2] < r["negative"][1] < r["negative"][0] < 0
    assert np.all(np.abs(r["passive"]) < 15.0) and r["passive"][0] > r["passive"][2]  # damping opposes ω


def test_heel_forces_are_equations_13_and_14(model):
    """The manual's GRF test (upright, feet tilted 0.3 rad): heel height from Drake's kinematics, forces by hand."""
    from moco_lab.analysis.gait2d import heel_force_curves

    heights, vy, vx = [0.95, 0.955, 0.96], [-1.0, 0.0, 0.5], [-0.2, -0.05, 0.1]
    g = heel_force_curves(model, heights, vy, vx)
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    k_, b_, y0, gamma, v0 = 1e5, 1.0, 0.002, 1.0, 0.1
    for i, hgt in enumerate(heights):
        q = np.zeros(9)
        q[1], q[5], q[8] = hgt, 0.3, 0.3
        plant.SetPositions(ctx, q)
        heel = plant.CalcPointsPositions(ctx, plant.GetBodyByName("foot_r").body_frame(),
                                         np.array([[-0.06], [-0.0702], [0.0]]), plant.world_frame())[:, 0]
        d = 0.5 * (math.sqrt(heel[1] ** 2 + y0**2) - heel[1])
        for j, v in enumerate(vy):
            assert g["vertical"][i, j] == pytest.approx(k_ * d * (1 - b_ * v), rel=1e-12, abs=1e-9)
        for j, v in enumerate(vx):
            assert g["horizontal"][j, i] == pytest.approx(-gamma * k_ * d * v / math.sqrt(v * v + v0 * v0),
                                                          rel=1e-12, abs=1e-9)
    assert g["vertical"][0, 0] > 1000  # pressed 5 mm into the ground, moving down at 1 m/s


# ---------------------------------------------------------------------- time stepping (the drop test)
def test_implicit_stepping_agrees_with_drakes_simulator():
    """The skeleton with contact and passive moments only (no implicit variables), dropped onto the ground: the
    implicit midpoint rule converges at second order, to Drake's error-controlled simulation."""
    from moco_lab.tools.implicit_step import simulate_implicit

    model = ml.models.gait2d(muscles=False)
    init = {"/jointset/ground_trunk/hip_y/value": 0.97, "/jointset/hip_r/hip_flexion_r/value": 0.3,
            "/jointset/knee_r/knee_angle_r/value": -0.4, "/jointset/hip_l/hip_flexion_l/value": -0.2}
    names = model.state_names()
    traj = ml.Trajectory([0.0, 0.2], states={n: np.full(2, init.get(n, 0.0)) for n in names}, controls={})
    drake = ml.simulate(model, traj, accuracy=1e-10)
    end = {n: drake.states[n][-1] for n in names if n.endswith("/value")}
    errors = []
    for h in (2e-3, 1e-3):
        mine = simulate_implicit(model, init, 0.2, h, method="midpoint")
        errors.append(max(abs(mine.states[n][-1] - end[n]) for n in end))
    assert errors[1] < 2e-3 and 3.0 < errors[0] / errors[1] < 5.0  # second order: the error falls by 4


def test_drop_test_passive_collapse_and_active_stiff_legs(model):
    """The manual's simulate test: dropped from its freefall posture, the model collapses with passive muscles and
    lands on stiff legs with all excitations at 50 %."""
    from moco_lab.tools.implicit_step import simulate_implicit

    q, z = freefall_state(model)
    init = {c.value_path: v for c, v in zip(model.coordinates, q)}
    init.update({n: v for n, v in zip(model.auxiliary_state_names(), z)})
    hip = "/jointset/ground_trunk/hip_y/value"
    passive = simulate_implicit(model, init, 0.5, 0.001)
    active = simulate_implicit(model, init, 0.5, 0.001, controls={n: 0.5 for n in model.control_names()})
    assert passive.states[hip][-1] < 0.3  # on the ground
    assert active.states[hip].min() > 0.85 and active.states[hip][-1] > 0.9  # standing
    # before touch-down (about 0.2 s) the centre of mass falls freely: the airborne contact forces are ~0.3 N
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    values = [c.value_path for c in model.coordinates]

    def com_height(traj, i):
        plant.SetPositions(ctx, np.array([traj.states[n][i] for n in values]))
        return plant.CalcCenterOfMassPositionInWorld(ctx)[1]

    i = int(np.searchsorted(passive.time, 0.15))
    for traj in (passive, active):
        fall = com_height(traj, 0) - com_height(traj, i)
        assert fall == pytest.approx(0.5 * 9.81 * traj.time[i] ** 2, abs=2e-3)  # backward Euler: O(g t h)
    with pytest.raises(KeyError, match="hip_yy"):
        simulate_implicit(model, {"/jointset/ground_trunk/hip_yy/value": 1.0}, 0.1, 0.01)
    with pytest.raises(ValueError, match="method"):
        simulate_implicit(model, init, 0.1, 0.01, method="rk4")


# -------------------------------------------------------------------------------------------- figures
def test_stick_figure_animation_and_strength_figure(model):
    from moco_lab.analysis.gait2d import strength_curves
    from moco_lab.viz.gait2d import animate_gait2d, gait2d_points, gait2d_stick, plot_strength_curves

    standing = {"hip_y": 0.95}
    pts = gait2d_points(model, standing)
    assert pts["shoulder"][1] == pytest.approx(0.95 + 0.504) and pts["toe_r"][0] == pytest.approx(0.1636)
    fig = gait2d_stick(model, standing, speeds={"hip_y": -0.1})
    names = [t.name for t in fig.data]
    assert names[:3] == ["trunk", "right leg", "left leg"] and names[3].startswith("contact force")
    arrows_y = [y for y in fig.data[3].y if y is not None]
    assert max(arrows_y) > 0.1  # the feet are pressed 4 mm into the ground: visible upward arrows
    assert fig.layout.xaxis.title.text == "x (m)" and fig.layout.yaxis.title.text == "y (m)"
    traj = ml.Trajectory([0.0, 1.0], states={c.value_path: np.array([0.0, 0.5]) if c.name == "hip_x" else
                                             np.full(2, 1.0 if c.name == "hip_y" else 0.0)
                                             for c in model.coordinates}, controls={})
    anim = animate_gait2d(model, traj, frames=5)
    assert len(anim.frames) == 5 and anim.frames[-1].data[0].x[0] == pytest.approx(0.5)
    curves = {"knee": strength_curves(model, "knee", angles_deg=[-90, -45, 0])}
    sfig = plot_strength_curves(curves)
    assert {a.title.text for a in sfig.select_yaxes()} == {"moment (N·m)"}
    assert {a.title.text for a in sfig.select_xaxes()} == {"angle (deg)"}
    with pytest.raises(ValueError, match="expected 9 coordinates"):
        gait2d_points(model, [0.0, 1.0])
