"""The 3-D full-body model of Moco's example3DWalking (``subject_walk_scaled.osim``, Rajagopal et al. 2016 as
fitted with AddBiomechanics), read by ``ml.read_osim`` and checked against OpenSim 4.6 on the same file.

Multi-coordinate ``CustomJoint``s (the 6-coordinate pelvis, hips, back, shoulders) are read as chains of
prismatic and revolute joints through massless frame bodies; the walker knee (one coordinate driving six axes with
polynomials) and the patellofemoral joint (splines) as exact one-coordinate transforms. At 50 random states within
the coordinate ranges (clipped to ±1.5, the coupled ``knee_angle_*_beta`` equal to the knee angle as the coupler
constraint makes it) both programs compute every body's origin and orientation, the mass matrix and the inverse
dynamics of the skeleton (gravity, velocity products, random accelerations; forces disabled on OpenSim's side).

Tolerance 1e-12 relative to each quantity's scale, as for the planar models (tests/test_osim_opensim.py): the
same closed forms in double precision in another order agree to a few ulps; a wrong axis, sign, frame or
polynomial coefficient changes them by 1e-6 or more. Measured: 4e-16 m (origins), 8e-16 (rotations), 4e-15
(mass matrix).
"""
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from osim_pair import (
    body_pose_errors,
    largest_relative_difference,
    mobility_order,
    their_accelerations,
    their_coordinates,
    their_reactions,
)

from moco_lab.engine.multibody import SymbolicMultibody
from moco_lab.modeling.functions import PolynomialFunction
from moco_lab.modeling.osim import OsimFormatError, read_osim, read_osim_string
from moco_lab.util.data import opensim_file

N_STATES = 50
RTOL = 1e-12
MODEL = "subject_walk_scaled.osim"
FBP = "subject_walk_scaled_FunctionBasedPathSet.xml"


@pytest.fixture(scope="module")
def ours():
    return read_osim(MODEL, replace_millard=True)


def test_reads_the_whole_model(ours):
    assert len(ours.coordinates) == 33 and len(ours.muscles) == 80 and len(ours.actuators) == 13
    assert len(ours.body_paths) == 22  # OpenSim's bodies; the frame bodies of the chains are not among them
    assert len(ours.frame_bodies) == 15  # pelvis 5, hips 2 × 2, back 2, shoulders 2 × 2
    assert sorted(ours.custom_joints) == ["patellofemoral_l", "patellofemoral_r", "walker_knee_l", "walker_knee_r"]
    pelvis = [c.name for c in ours.coordinates if c.joint_path == "/jointset/ground_pelvis"]
    assert sorted(pelvis) == sorted(["pelvis_tilt", "pelvis_list", "pelvis_rotation", "pelvis_tx", "pelvis_ty",
                                     "pelvis_tz"])
    assert "/jointset/hip_l/hip_adduction_l/value" in ours.state_names()
    assert all(ours.plant.GetBodyByName(b).default_mass() == 0.0 for b in ours.frame_bodies)
    assert sum(ours.plant.GetBodyByName(b).default_mass() for b in ours.body_paths) == pytest.approx(85.27, abs=0.01)


def test_polynomial_function_values_and_derivatives():
    """OpenSim's PolynomialFunction (coefficients from the highest power) against numpy's polyval, its
    derivatives against central differences (step 1e-5: truncation ~1e-10 for these coefficients)."""
    c = (0.0108320945, -0.0252183255, -0.0328478104, 0.079100012, -1.47e-08)  # walker_knee_r rotation2
    f = PolynomialFunction(c)
    x = np.linspace(-0.3, 2.2, 11)
    assert np.allclose(f(x), np.polyval(c, x), rtol=1e-15, atol=1e-17)
    h = 1e-5
    assert np.allclose(f.derivative(x), (f(x + h) - f(x - h)) / (2 * h), atol=1e-9)
    assert np.allclose(f.second_derivative(x), (f.derivative(x + h) - f.derivative(x - h)) / (2 * h), atol=1e-9)
    assert f(0.5) == pytest.approx(np.polyval(c, 0.5), rel=1e-15) and not f.is_constant()
    assert PolynomialFunction((0.0, 0.0, 2.5)).is_constant()
    with pytest.raises(ValueError, match="at least one coefficient"):
        PolynomialFunction(())


def _edited(edit) -> str:
    tree = ET.parse(opensim_file(MODEL))
    edit(tree.getroot())
    return ET.tostring(tree.getroot(), encoding="unicode")


def _axis(root, joint: str, axis: str):
    el = root.find(f".//CustomJoint[@name='{joint}']")
    return next(a for a in el.iter("TransformAxis") if a.get("name") == axis)


def test_a_multi_coordinate_joint_beyond_the_chain_pattern_is_refused_by_name():
    def slope_two(root):
        _axis(root, "hip_r", "rotation2").find("LinearFunction/coefficients").text = "2 0"

    with pytest.raises(OsimFormatError, match=r"/jointset/hip_r/rotation2 is not the coordinate 'hip_adduction_r'"):
        read_osim_string(_edited(slope_two), replace_millard=True)

    def shared(root):  # one coordinate on two axes
        _axis(root, "back", "rotation3").find("coordinates").text = "lumbar_extension"

    with pytest.raises(OsimFormatError, match=r"lumbar_extension' drives several axes"):
        read_osim_string(_edited(shared), replace_millard=True)

    def tilted(root):  # a constant rotation between the hip's rotations
        axis = _axis(root, "hip_l", "rotation2")
        axis.find("coordinates").text = ""
        axis.find("LinearFunction").tag = "Constant"
        axis.find("Constant").append(ET.fromstring("<value>0.1</value>"))

    with pytest.raises(OsimFormatError, match=r"hip_l/rotation2 is a constant rotation of 0.1 rad"):
        read_osim_string(_edited(tilted), replace_millard=True)


# ---------------------------------------------------------------- against OpenSim 4.6
@pytest.fixture(scope="module")
def pair(ours):
    opensim = pytest.importorskip("opensim")
    theirs = opensim.Model(str(opensim_file(MODEL)))
    for force in theirs.getForceSet():
        force.set_appliesForce(False)  # the skeleton alone
    state = theirs.initSystem()
    rng = np.random.default_rng(20261127)
    C = ours.coordinates
    names = [c.name for c in C]
    lo = np.array([max(c.range[0], -1.5) for c in C])
    hi = np.array([min(c.range[1], 1.5) for c in C])
    Q = rng.uniform(lo, hi, size=(N_STATES, len(C)))
    for side in "rl":
        Q[:, names.index(f"knee_angle_{side}_beta")] = Q[:, names.index(f"knee_angle_{side}")]
    U = rng.normal(0.0, 1.0, size=Q.shape)
    A = rng.normal(0.0, 5.0, size=Q.shape)
    return opensim, theirs, state, Q, U, A


def _set(opensim, theirs, state, ours, q, u):
    coords = their_coordinates(theirs)
    for i, c in enumerate(ours.coordinates):
        coords[c.name].setValue(state, float(q[i]), False)
        coords[c.name].setSpeedValue(state, float(u[i]))


def _plant_vector(ours, values) -> list:
    """Model order (coordinates) → the plant's order (positions = velocities here)."""
    out = np.zeros(len(ours.coordinates))
    out[[c.q_index for c in ours.coordinates]] = values
    return list(out)




@pytest.mark.opensim
def test_coordinates_follow_opensim(pair, ours):
    _, theirs, *_ = pair
    assert {c.getAbsolutePathString() for c in theirs.getCoordinateSet()} == {c.path for c in ours.coordinates}
    assert {b.getName() for b in theirs.getBodySet()} == set(ours.body_paths)


@pytest.mark.opensim
def test_bodies_mass_matrix_and_inverse_dynamics(pair, ours):
    opensim, theirs, state, Q, U, A = pair
    tree = ours.tree()
    order = mobility_order(theirs, state, ours)
    v_index = [c.v_index for c in ours.coordinates]
    n = len(order)
    solver = opensim.InverseDynamicsSolver(theirs)
    worst = dict(origin=0.0, rotation=0.0, mass_matrix=0.0, inverse_dynamics=0.0)
    for k in range(N_STATES):
        _set(opensim, theirs, state, ours, Q[k], U[k])
        theirs.realizeVelocity(state)
        q = _plant_vector(ours, Q[k])
        origin, rotation = body_pose_errors(theirs, state, ours, q)
        worst["origin"], worst["rotation"] = max(worst["origin"], origin), max(worst["rotation"], rotation)

        def inverse_dynamics(u, a):
            return np.array(SymbolicMultibody(tree, q, u, a).inverse_dynamics(), float)[v_index]

        if k < 10:  # the mass matrix column by column (34 inverse dynamics): 10 states
            zero = [0.0] * n
            base = inverse_dynamics(zero, zero)
            Mc = np.column_stack([inverse_dynamics(zero, list(np.eye(n)[j])) - base for j in range(n)])[v_index]
            M = opensim.Matrix()
            theirs.getMatterSubsystem().calcM(state, M)
            Mo = np.array([[M.get(a, b) for b in order] for a in order])
            worst["mass_matrix"] = max(worst["mass_matrix"], np.abs(Mc - Mo).max() / np.abs(Mo).max())
        udot = opensim.Vector(n, 0.0)
        for i, mi in enumerate(order):
            udot.set(mi, float(A[k, i]))
        tau = solver.solve(state, udot)
        t_theirs = np.array([tau.get(mi) for mi in order])
        t_ours = inverse_dynamics(_plant_vector(ours, U[k]), _plant_vector(ours, A[k]))
        worst["inverse_dynamics"] = max(worst["inverse_dynamics"],
                                        np.abs(t_ours - t_theirs).max() / np.abs(t_theirs).max())
    print({key: f"{value:.1e}" for key, value in worst.items()})
    assert all(value < RTOL for value in worst.values()), worst


def test_walker_knee_velocity_products_exact_and_as_simbody(ours):
    """The walker knee's coordinate drives three rotations. With ``velocity_products="exact"`` the angular
    acceleration is the time derivative of the angular velocity (central differences along q(t) = q + u t + a t²/2,
    step 1e-4: truncation ~1e-9); OpenSim's (``"simbody"``, what the reader uses, checked against OpenSim above)
    adds exactly ``(w₃ f₃' u) × (w₂ f₂' u)``, the second axis turning with the whole angular velocity."""
    import dataclasses

    from moco_lab.modeling.joints import rotation_about

    knee = ours.custom_joints["walker_knee_r"]
    assert knee.velocity_products == "simbody"
    exact = dataclasses.replace(knee, velocity_products="exact")
    q, u, a, h = 0.9, 1.7, -2.3, 1e-4

    def omega(t):
        return np.array(exact.kinematics(q + u * t + 0.5 * a * t * t, u + a * t, None)[2], float)

    dw_exact = np.array(exact.kinematics(q, u, a)[4], float)
    assert np.allclose(dw_exact, (omega(h) - omega(-h)) / (2 * h), rtol=0, atol=1e-7)
    dw_simbody = np.array(knee.kinematics(q, u, a)[4], float)
    # the axes in F: w2 = R(a1, f1) a2, w3 = R(a1, f1) R(a2, f2) a3
    (a1, f1), (a2, f2), (a3, f3) = knee.rotations
    R1 = np.array(rotation_about(a1, np.cos(f1(q)), np.sin(f1(q))))
    R2 = np.array(rotation_about(a2, np.cos(f2(q)), np.sin(f2(q))))
    w2, w3 = R1 @ a2, R1 @ R2 @ a3
    extra = np.cross(w3 * f3.derivative(q) * u, w2 * f2.derivative(q) * u)
    assert np.linalg.norm(extra) > 1e-3  # the difference is real here...
    assert np.allclose(dw_simbody - dw_exact, extra, rtol=0, atol=1e-14)  # ...and exactly that term


# ---------------------------------------------------------------- function-based paths (exampleMocoInverse's)
@pytest.fixture(scope="module")
def fbp_pair():
    """Both programs' model as exampleMocoInverse builds it for its muscles: DeGrooteFregly2016 muscles, rigid
    tendons, the function-based paths of the shipped path set; 30 random states, random activations."""
    opensim = pytest.importorskip("opensim")
    import moco_lab as ml

    ours = read_osim(MODEL, replace_millard=True)
    ml.operators.set_tendon_compliance(ours, "rigid")
    ml.operators.replace_paths_with_function_based_paths(ours, opensim_file(FBP))
    processor = opensim.ModelProcessor(str(opensim_file(MODEL)))
    processor.append(opensim.ModOpIgnoreTendonCompliance())
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    processor.append(opensim.ModOpReplacePathsWithFunctionBasedPaths(str(opensim_file(FBP))))
    theirs = processor.process()
    state = theirs.initSystem()
    rng = np.random.default_rng(31)
    C = ours.coordinates
    lo = np.array([max(c.range[0], -1.0) for c in C])
    hi = np.array([min(c.range[1], 1.0) for c in C])
    n = 30
    Q = rng.uniform(lo, hi, size=(n, len(C)))
    U = rng.normal(0.0, 1.0, size=Q.shape)
    act = rng.uniform(0.01, 1.0, size=(n, len(ours.muscles)))
    return opensim, ours, theirs, state, Q, U, act


def _trajectory(ours, Q, U, act):
    from moco_lab.results.trajectory import Trajectory

    n = Q.shape[0]
    states = {c.value_path: Q[:, i] for i, c in enumerate(ours.coordinates)}
    states |= {c.speed_path: U[:, i] for i, c in enumerate(ours.coordinates)}
    states |= {f"{m.path}/activation": act[:, j] for j, m in enumerate(ours.muscles)}
    return Trajectory(np.arange(n, dtype=float), states, {name: np.zeros(n) for name in ours.control_names()})


@pytest.mark.opensim
def test_function_based_paths_and_muscle_forces_agree_with_opensim(fbp_pair):
    """Lengths, lengthening speeds, moment arms (−∂l/∂q, every muscle about every coordinate it names) and tendon
    forces of the 80 muscles on function-based paths (order-5 polynomials of 1–4 coordinates) against OpenSim's, and
    the generalized forces those tensions apply (inverse dynamics with muscles, forces on the skeleton as generalized
    forces only). Same closed forms, evaluated in another order (OpenSim: Horner schemes): tolerance 1e-12 as
    above; measured 3e-16 m (lengths)."""
    from moco_lab.engine.kernel import kernel_for
    from moco_lab.tools.analyze import analyze

    opensim, ours, theirs, state, Q, U, act = fbp_pair
    n = Q.shape[0]
    table = analyze(ours, _trajectory(ours, Q, U, act), r".*/(length|lengthening_speed|tendon_force)")
    coords = their_coordinates(theirs)
    names = [c.name for c in ours.coordinates]
    # moment arms −∂l/∂q_i: the lengthening speed at a unit speed of q_i, at the first 5 states
    nc = len(names)
    arms = analyze(ours, _trajectory(ours, np.repeat(Q[:5], nc, 0), np.tile(np.eye(nc), (5, 1)),
                                     np.repeat(act[:5], nc, 0)), r".*/lengthening_speed")
    worst = dict(length=0.0, speed=0.0, arm=0.0, force=0.0)
    for k in range(n):
        _set(opensim, theirs, state, ours, Q[k], U[k])
        for j, m in enumerate(ours.muscles):
            opensim.Muscle.safeDownCast(theirs.getComponent(m.path)).setActivation(state, float(act[k, j]))
        theirs.realizeDynamics(state)
        for m in ours.muscles:
            mm = opensim.Muscle.safeDownCast(theirs.getComponent(m.path))
            worst["length"] = max(worst["length"], abs(mm.getLength(state) - table[f"{m.path}/length"][k]))
            worst["speed"] = max(worst["speed"], abs(mm.getLengtheningSpeed(state)
                                                     - table[f"{m.path}/lengthening_speed"][k]))
            worst["force"] = max(worst["force"], abs(mm.getTendonForce(state) - table[f"{m.path}/tendon_force"][k])
                                 / mm.getMaxIsometricForce())
            if k < 5:  # moment arms about every coordinate (zero for those the path does not name)
                for i, c in enumerate(names):
                    arm = -arms[f"{m.path}/lengthening_speed"][k * len(names) + i]
                    worst["arm"] = max(worst["arm"], abs(mm.computeMomentArm(state, coords[c]) - arm))
    # inverse dynamics with the muscles' generalized forces
    order = mobility_order(theirs, state, ours)
    rng = np.random.default_rng(5)
    A = rng.normal(0.0, 5.0, size=Q.shape)
    Z = np.column_stack([act[:, [m.path for m in ours.muscles].index(a.rsplit("/", 1)[0])]
                         for a in ours.auxiliary_state_names()])
    residual, _ = kernel_for(ours).residual(Q, U, A, np.zeros((n, len(ours.control_names()))), None, Z=Z)
    solver = opensim.InverseDynamicsSolver(theirs)
    worst_id = 0.0
    for k in range(n):
        _set(opensim, theirs, state, ours, Q[k], U[k])
        for j, m in enumerate(ours.muscles):
            opensim.Muscle.safeDownCast(theirs.getComponent(m.path)).setActivation(state, float(act[k, j]))
        theirs.realizeVelocity(state)
        udot = opensim.Vector(len(order), 0.0)
        for i, mi in enumerate(order):
            udot.set(mi, float(A[k, i]))
        if k == 0:
            solver.solve(state, udot)  # warm-up call (see tests/test_osim_opensim.py)
        tau = solver.solve(state, udot)
        t = np.array([tau.get(mi) for mi in order])
        worst_id = max(worst_id, np.abs(t - residual[k]).max() / np.abs(t).max())
    print({key: f"{value:.1e}" for key, value in worst.items()}, f"inverse dynamics {worst_id:.1e}")
    assert worst["length"] < RTOL and worst["speed"] < RTOL and worst["arm"] < RTOL  # m, m/s, m
    assert worst["force"] < RTOL and worst_id < RTOL


# ---------------------------------------------------------------- geometry paths, OpenSim's wrapping
GASTROCNEMII = ("gasmed_r", "gaslat_r", "gasmed_l", "gaslat_l")


@pytest.fixture(scope="module")
def geometry_pair():
    """Both programs' model on the file's GeometryPaths (80 muscles, 46 wraps over 44 cylinders; moco_lab wrapping
    by OpenSim's construction), DeGrooteFregly2016 muscles with rigid tendons; 20 random states on the patella
    couplers' manifold (positions and speeds), random activations. Evaluated by the numpy backend: deriving the
    wrapped paths takes ~50 s, compiling them minutes."""
    opensim = pytest.importorskip("opensim")
    import moco_lab as ml

    ours = read_osim(MODEL, replace_millard=True, wrap_method="opensim")
    ml.operators.set_tendon_compliance(ours, "rigid")
    processor = opensim.ModelProcessor(str(opensim_file(MODEL)))
    processor.append(opensim.ModOpIgnoreTendonCompliance())
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    theirs = processor.process()
    state = theirs.initSystem()
    rng = np.random.default_rng(41)
    C = ours.coordinates
    names = [c.name for c in C]
    lo = np.array([max(c.range[0], -1.0) for c in C])
    hi = np.array([min(c.range[1], 1.0) for c in C])
    n = 20
    Q = rng.uniform(lo, hi, size=(n, len(C)))
    U = rng.normal(0.0, 1.0, size=Q.shape)
    for side in "rl":
        knee, beta = names.index(f"knee_angle_{side}"), names.index(f"knee_angle_{side}_beta")
        Q[:, beta], U[:, beta] = Q[:, knee], U[:, knee]
    act = rng.uniform(0.01, 1.0, size=(n, len(ours.muscles)))
    return opensim, ours, theirs, state, Q, U, act


@pytest.mark.opensim
def test_geometry_paths_with_opensims_wrapping_agree_with_opensim(geometry_pair, monkeypatch):
    """The 80 muscles on their GeometryPaths, wrapping by OpenSim's construction (``wrap_method="opensim"``), at 20
    random states: the 38 paths without wraps and the 38 with one wrap — lengths, lengthening speeds, tendon forces
    and moment arms about every coordinate (the patella following the knee, as OpenSim's ``computeMomentArm``
    moves coupled coordinates; first 3 states) — to round-off (1e-12, as the function-based paths; measured 6e-16 m,
    2e-13 m/s, 3e-15 m, 2e-13 of the maximum isometric force). The 4 gastrocnemii wrap twice: there moco_lab takes
    the shortest path over each cylinder, which OpenSim's iteration approaches to its 0.1° tangency (median
    difference 1e-7 m, asserted below 1e-6 m), except where OpenSim reports less than the chords between its own path
    points (up to 7 mm; docs/models.md)."""
    from moco_lab.tools.analyze import analyze

    monkeypatch.setenv("MOCO_LAB_BACKEND", "numpy")
    opensim, ours, theirs, state, Q, U, act = geometry_pair
    n = Q.shape[0]
    wraps = {m.path: len(m.geometry.wraps) for m in ours.muscles}
    assert sorted(wraps.values()).count(1) == 38 and sorted(wraps.values()).count(2) == 4
    table = analyze(ours, _trajectory(ours, Q, U, act), r".*/(length|lengthening_speed|tendon_force)")
    names = [c.name for c in ours.coordinates]
    nc = len(names)
    E = np.eye(nc)
    for side in "rl":
        E[names.index(f"knee_angle_{side}"), names.index(f"knee_angle_{side}_beta")] = 1.0  # the patella follows
    arms = analyze(ours, _trajectory(ours, np.repeat(Q[:3], nc, 0), np.tile(E, (3, 1)), np.repeat(act[:3], nc, 0)),
                   r".*/lengthening_speed")
    coords = their_coordinates(theirs)
    worst = dict(length=0.0, speed=0.0, arm=0.0, force=0.0)
    double = []
    for k in range(n):
        _set(opensim, theirs, state, ours, Q[k], U[k])
        for j, m in enumerate(ours.muscles):
            opensim.Muscle.safeDownCast(theirs.getComponent(m.path)).setActivation(state, float(act[k, j]))
        theirs.realizeDynamics(state)
        for m in ours.muscles:
            mm = opensim.Muscle.safeDownCast(theirs.getComponent(m.path))
            d_length = abs(mm.getLength(state) - table[f"{m.path}/length"][k])
            if wraps[m.path] == 2:
                double.append(d_length)
                continue
            worst["length"] = max(worst["length"], d_length)
            worst["speed"] = max(worst["speed"], abs(mm.getLengtheningSpeed(state)
                                                     - table[f"{m.path}/lengthening_speed"][k]))
            worst["force"] = max(worst["force"], abs(mm.getTendonForce(state) - table[f"{m.path}/tendon_force"][k])
                                 / mm.getMaxIsometricForce())
            if k < 3:
                for i, c in enumerate(names):
                    if not c.endswith("_beta"):
                        arm = -arms[f"{m.path}/lengthening_speed"][k * nc + i]
                        worst["arm"] = max(worst["arm"], abs(mm.computeMomentArm(state, coords[c]) - arm))
    print({key: f"{value:.1e}" for key, value in worst.items()}, f"gastrocnemii median {np.median(double):.1e} m")
    assert max(worst.values()) < RTOL
    assert np.median(double) < 1e-6


@pytest.mark.opensim
def test_knee_reactions_with_muscles_on_geometry_paths_agree_with_opensim(geometry_pair, monkeypatch):
    """What the knee-load goal minimizes, with the muscles pulling on the bones: the reactions of both walker knees
    (and the patellofemoral joints, the hips and ankles) on parent and child, in ground, at 10 of the states with
    the muscles active, with the accelerations of OpenSim's forward dynamics — to round-off (5e-12 of the largest
    component, as the skeleton's reactions; measured 1e-14). The gastrocnemii, whose double-wrapped lengths
    agree only to OpenSim's iteration tolerance (the test above), are removed from both models."""
    from moco_lab.engine.kernel import Kernel

    monkeypatch.setenv("MOCO_LAB_BACKEND", "numpy")
    opensim, ours, _, _, Q, U, act = geometry_pair
    processor = opensim.ModelProcessor(str(opensim_file(MODEL)))
    processor.append(opensim.ModOpIgnoreTendonCompliance())
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    theirs = processor.process()
    for name in GASTROCNEMII:
        theirs.updForceSet().remove(theirs.getForceSet().getIndex(name))
    state = theirs.initSystem()
    import copy

    model = copy.deepcopy(ours)
    keep = [j for j, m in enumerate(model.muscles) if m.name not in GASTROCNEMII]
    model.muscles[:] = [model.muscles[j] for j in keep]
    act = act[:, keep]
    order = mobility_order(theirs, state, model)
    kernel = Kernel(model)
    joints = ["walker_knee_r", "walker_knee_l", "patellofemoral_r", "hip_l", "ankle_r"]
    keys = {(j, side, "ground"): kernel.system.add_joint_reaction_output(j, side, "/ground") for j in joints
            for side in ("parent", "child")}
    n = 10
    acc = np.zeros((n, Q.shape[1]))
    expected = []
    for k in range(-1, n):  # one warm-up realization, discarded (tests/test_osim_opensim.py)
        _set(opensim, theirs, state, model, Q[max(k, 0)], U[max(k, 0)])
        for j, m in enumerate(model.muscles):
            opensim.Muscle.safeDownCast(theirs.getComponent(m.path)).setActivation(state, float(act[max(k, 0), j]))
        theirs.realizeAcceleration(state)
        if k < 0:
            continue
        acc[k] = their_accelerations(state, order)
        expected.append(their_reactions(theirs, state, joints))
    traj = _trajectory(model, Q[:n], U[:n], act[:n])
    Z = np.column_stack([traj.states[a] for a in model.auxiliary_state_names()])
    X = np.zeros((n, len(model.control_names())))
    out = kernel.outputs(list(keys.values()), Q[:n], U[:n], X, None, Z=Z, A=acc)
    worst = largest_relative_difference(out, keys, expected)
    print(f"joint reactions with muscles on geometry paths {worst:.1e}")
    assert worst < 5e-12, worst


def test_multivariate_polynomial_coefficient_order():
    """OpenSim's order (MultivariatePolynomialFunction.cpp, generateCombinations): exponent tuples with the first
    variable's exponent varying slowest; for (x, y) of order 2: 1, y, y², x, x y, x²."""
    from moco_lab.modeling.functions import MultivariatePolynomialFunction

    c = [0.5, -1.0, 2.0, 3.0, -4.0, 0.25]
    f = MultivariatePolynomialFunction(c, 2, 2)
    x, y = 0.7, -1.3
    assert f([x, y]) == pytest.approx(0.5 - y + 2 * y * y + 3 * x - 4 * x * y + 0.25 * x * x, rel=1e-15)
    assert len(MultivariatePolynomialFunction(np.zeros(126), 4, 5).coefficients) == 126  # C(9, 5)
    with pytest.raises(ValueError, match="need 56 coefficients, got 55"):
        MultivariatePolynomialFunction(np.zeros(55), 3, 5)
    with pytest.raises(ValueError, match="called with 1 arguments"):
        f([x])


def test_function_based_path_replacement_refuses_what_it_cannot_place(tmp_path):
    import moco_lab as ml

    text = opensim_file(FBP).read_text()
    model = read_osim(MODEL, replace_millard=True, weld=["ankle_r"])
    with pytest.raises(KeyError, match=r"depends on '/jointset/ankle_r/ankle_angle_r', which is not a coordinate"):
        ml.operators.replace_paths_with_function_based_paths(model, opensim_file(FBP))
    assert all(type(m.geometry).__name__ == "GeometryPath" for m in model.muscles)  # nothing changed
    renamed = tmp_path / "paths.xml"
    renamed.write_text(text.replace('name="/forceset/soleus_r"', 'name="/forceset/solues_r"'))
    model = read_osim(MODEL, replace_millard=True)
    with pytest.raises(KeyError, match=r"'/forceset/solues_r'.*soleus_r"):
        ml.operators.replace_paths_with_function_based_paths(model, renamed)
    short = tmp_path / "short.xml"
    short.write_text(text.replace("<order>5</order>", "<order>4</order>", 1))
    with pytest.raises(ValueError, match=r"'/forceset/addbrev_r': .*need 35 coefficients, got 56"):
        ml.operators.replace_paths_with_function_based_paths(model, short)


def test_function_based_paths_are_recorded_for_study_files():
    import moco_lab as ml

    model = read_osim(MODEL, replace_millard=True)
    ml.operators.replace_paths_with_function_based_paths(model, opensim_file(FBP))
    (name, kwargs), = model.spec["operators"]
    assert name == "replace_paths_with_function_based_paths" and len(kwargs["sha256"]) == 64
    again = ml.operators.apply_operators(read_osim(MODEL, replace_millard=True), model.spec["operators"])
    assert [m.geometry.description() for m in again.muscles] == [m.geometry.description() for m in model.muscles]
    with pytest.raises(ValueError, match="changed since it was read for this study"):
        ml.operators.apply_operators(read_osim(MODEL, replace_millard=True),
                                     [[name, {**kwargs, "sha256": "0" * 64}]])


def test_residuals_and_reserves_as_moco_adds_them():
    """ModOpAddResiduals(250, 50, 1) then ModOpAddReserves(1) on the full-body model with welded toes: residuals on
    the pelvis's six coordinates (250 N·m rotations, 50 N translations, ±1), then reserves only where no actuator
    drives a coordinate and no coupler makes it dependent — the hips, knees and ankles (Moco's log lists the same 10)."""
    import moco_lab as ml

    model = read_osim(MODEL, replace_millard=True, weld=["mtp_r", "mtp_l"])
    with_residuals = ml.add_residuals(model, 250, 50, 1)
    residuals = with_residuals.actuators[len(model.actuators):]
    assert {a.path: a.optimal_force for a in residuals} == {
        f"/forceset/residual_jointset_ground_pelvis_pelvis_{c}": (250.0 if c in ("tilt", "list", "rotation") else 50.0)
        for c in ("tilt", "list", "rotation", "tx", "ty", "tz")}
    assert all((a.min_control, a.max_control) == (-1.0, 1.0) for a in residuals)
    full = ml.add_reserves(with_residuals, 1.0, skip_coordinates_with_actuators=True)
    reserves = sorted(a.coordinate for a in full.actuators[len(with_residuals.actuators):])
    assert reserves == sorted(f"{c}_{s}" for s in "rl" for c in ("hip_flexion", "hip_adduction", "hip_rotation",
                                                                  "knee_angle", "ankle_angle"))
    everywhere = ml.add_reserves(model, 1.0)  # moco_lab's default: every coordinate but the dependent ones
    assert len(everywhere.actuators) - len(model.actuators) == 31 - 2
    no_ground = ml.add_reserves(model, 1.0, skip_residual_coordinates=True)
    assert len(no_ground.actuators) - len(model.actuators) == 31 - 2 - 6
    with pytest.raises(ValueError, match="has no free coordinate of a joint on the ground"):
        ml.add_residuals(with_residuals, 250, 50)  # the pelvis is driven already


def test_inverse_kinematics_follow_the_coupler_as_mocos_assembly():
    """The trial's knee_angle_*_beta columns are in degrees (the header says radians): a dependent coordinate
    follows its coupler constraint, as Moco's assembly makes it, and the mismatch is said, not silent."""
    import moco_lab as ml

    model = read_osim(MODEL, replace_millard=True, weld=["mtp_r", "mtp_l"])
    with pytest.warns(UserWarning, match=r"knee_angle_r_beta/value differs from what the coupler constraint "
                                         r"'patellofemoral_knee_angle_r_con' makes it by up to 71"):
        inverse = ml.Inverse(model, str(opensim_file("coordinates.sto")), initial_time=0.48, final_time=1.61,
                             kinematics_allow_extra_columns=True)
    names = [c.name for c in model.coordinates]
    Q, U, A = inverse.kinematics_on(np.linspace(0.48, 1.61, 7))
    for side in "rl":
        i, j = names.index(f"knee_angle_{side}"), names.index(f"knee_angle_{side}_beta")
        assert np.array_equal(Q[:, i], Q[:, j]) and np.allclose(U[:, i], U[:, j], rtol=1e-12, atol=1e-12)


def test_markers_are_read_on_their_bodies(ours):
    """All 65 markers of the file's MarkerSet, on the bodies their frames name, locations as written."""
    assert len(ours.markers) == 65
    head = ours.markers["Head"]
    assert head.body == "torso" and head.location == (0.0, 0.694621986378, 0.0)
    assert {m.body for m in ours.markers.values()} <= set(ours.body_paths)


@pytest.mark.opensim
def test_marker_positions_agree_with_opensim(pair, ours):
    """Every marker's world position at the 50 states, by the engine's recursion (``marker_trajectories`` and
    ``analysis.pose``, which the 3-D drawing uses) against OpenSim's ``Marker::getLocationInGround``; same
    tolerance as the body origins (a marker is a point fixed on a body: its origin plus a rotated offset)."""
    from moco_lab.analysis.pose import pose
    from moco_lab.tools.marker_ik import marker_trajectories

    opensim, theirs, state, Q, U, A = pair
    markers = list(ours.markers.values())
    P = marker_trajectories(ours, markers, np.array([_plant_vector(ours, q) for q in Q]))
    worst = 0.0
    for k in range(N_STATES):
        _set(opensim, theirs, state, ours, Q[k], U[k])
        theirs.realizePosition(state)
        for i, m in enumerate(markers):
            p = theirs.getMarkerSet().get(m.name).getLocationInGround(state)
            worst = max(worst, np.abs(P[k, i] - [p.get(j) for j in range(3)]).max())
    drawn = pose(ours, Q[0]).markers
    assert max(np.abs(drawn[m.name] - P[0, i]).max() for i, m in enumerate(markers)) < 1e-15
    print(f"markers {worst:.1e} m")
    assert worst < RTOL, worst


def test_a_marker_on_an_unknown_frame_or_the_ground_is_refused_by_name():
    def unknown(root):
        root.find(".//Marker[@name='Head']/socket_parent_frame").text = "/bodyset/skull"

    with pytest.raises(OsimFormatError, match="'/bodyset/skull'.*markerset/Head"):
        read_osim_string(_edited(unknown), replace_millard=True)

    def grounded(root):
        root.find(".//Marker[@name='Head']/socket_parent_frame").text = "/ground"

    with pytest.raises(OsimFormatError, match="marker 'Head' fixed on the ground"):
        read_osim_string(_edited(grounded), replace_millard=True)


@pytest.mark.opensim
def test_joint_reactions_agree_with_opensim(pair, monkeypatch):
    """The reaction loads Moco's JointReactionGoal minimizes, at 5 of the states with the accelerations of
    OpenSim's forward dynamics of the skeleton (gravity, the patella's coupler): the walker knee (one coordinate,
    six polynomial axes), the hip and the pelvis (chains of Drake joints through massless frames), the
    patellofemoral joint (coupled), the ankle (a pin on an oblique frame) and the back, on the parent and on the
    child, in ground and in the joint's own frames, against ``Joint::calcReactionOn{Parent,Child}ExpressedInGround``.
    Tolerance as for the inverse dynamics (measured 4e-13 relative to the largest component: the pelvis carries
    the whole body). Evaluated by the numpy backend (no C compile of the 3-D skeleton)."""
    from moco_lab.engine.kernel import Kernel
    from moco_lab.modeling.operators import remove_muscles

    monkeypatch.setenv("MOCO_LAB_BACKEND", "numpy")
    opensim, theirs, state, Q, U, A = pair
    skeleton = remove_muscles(read_osim(MODEL, replace_millard=True))
    order = mobility_order(theirs, state, skeleton)
    kernel = Kernel(skeleton)
    joints = ["walker_knee_r", "hip_r", "ground_pelvis", "patellofemoral_r", "ankle_r", "back"]
    names = {(j, side, frame): kernel.system.add_joint_reaction_output(j, side, "/ground" if frame == "ground" else None)
             for j in joints for side in ("parent", "child") for frame in ("ground", "own")}
    n = 5
    acc = np.zeros((n, Q.shape[1]))
    expected = []
    for k in range(n):
        _set(opensim, theirs, state, skeleton, Q[k], U[k])
        theirs.realizeAcceleration(state)
        acc[k] = their_accelerations(state, order)
        expected.append(their_reactions(theirs, state, joints, frames=("ground", "own")))
    Z = np.zeros((n, len(skeleton.auxiliary_state_names())))
    X = np.zeros((n, len(skeleton.control_names())))
    out = kernel.outputs(list(names.values()), Q[:n], U[:n], X, None, Z=Z, A=acc)
    worst = largest_relative_difference(out, names, expected)
    print(f"joint reactions {worst:.1e}")
    assert worst < 5e-12, worst


def test_joint_paths_are_the_files_joints(ours):
    """``Model.joint_paths()``: one entry per joint of the file's JointSet (22), a multi-coordinate CustomJoint as
    its chain of plant joints (the pelvis: six, translations first; the hips, back and shoulders: three)."""
    root = ET.parse(opensim_file("subject_walk_scaled.osim")).getroot()
    names = [j.get("name") for j in root.find(".//JointSet/objects")]
    paths = ours.joint_paths()
    assert sorted(paths) == sorted(f"/jointset/{n}" for n in names) and len(paths) == 22
    assert [n.split("ground_pelvis_")[1] for n in paths["/jointset/ground_pelvis"]] == [
        "pelvis_tx", "pelvis_ty", "pelvis_tz", "pelvis_tilt", "pelvis_list", "pelvis_rotation"]
    assert len(paths["/jointset/hip_r"]) == 3 and paths["/jointset/walker_knee_r"] == ["walker_knee_r"]
