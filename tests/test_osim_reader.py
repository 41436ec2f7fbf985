"""The .osim reader and OpenSim's functions, without OpenSim (the agreement with OpenSim 4.6 itself is in
test_osim_opensim.py)."""
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.functions import Constant, LinearFunction, MultiplierFunction, SimmSpline
from moco_lab.modeling.osim import OsimFormatError, body_fixed_xyz_rotation, read_osim
from moco_lab.modeling.path import ConditionalPathPoint, MovingPathPoint
from moco_lab.util.data import opensim_file

KNEE_X = (-2.0944, -1.99997, -1.5708, -1.45752, -1.39626, -1.0472, -0.698132, -0.526391, -0.349066, -0.174533, 0,
          0.00017453, 0.00034907, 0.0279253, 0.0872665, 0.174533, 2.0944)
KNEE_Y = (0.0155805, 0.0179938, 0.0275081, 0.0296564, 0.0307615, 0.0365695, 0.0422074, 0.0450902, 0.048391, 0.0534299,
          0.0617576, 0.0617669, 0.0617762, 0.0633083, 0.066994, 0.0733035, 0.0573481)  # rect_fem_r-P3, x (2D_gait)


def test_simm_spline_interpolates_and_is_twice_continuous():
    s = SimmSpline(KNEE_X, KNEE_Y)
    assert np.allclose(s(np.array(KNEE_X)), KNEE_Y, rtol=0, atol=1e-15)
    x, h = np.array(KNEE_X[1:-1]), 1e-7
    # continuity of value, slope and curvature across interior knots (from the coefficients on both sides)
    k = np.arange(1, len(KNEE_X) - 1)
    dx = np.diff(KNEE_X)[k - 1]
    left_value = np.array(KNEE_Y)[k - 1] + dx * (s.b[k - 1] + dx * (s.c[k - 1] + dx * s.d[k - 1]))
    left_slope = s.b[k - 1] + dx * (2 * s.c[k - 1] + 3 * dx * s.d[k - 1])
    left_curv = 2 * s.c[k - 1] + 6 * dx * s.d[k - 1]
    assert np.allclose(left_value, np.array(KNEE_Y)[k], atol=1e-14)
    assert np.allclose(left_slope, s.b[k], atol=1e-10) and np.allclose(left_curv, 2 * s.c[k], atol=1e-7)
    assert np.allclose((s(x + h) - s(x - h)) / (2 * h), s.derivative(x), atol=1e-6)


def test_simm_spline_end_conditions_are_forsythe_malcolm_moler():
    """FMM: the spline's third derivative at each end equals that of the cubic through the 4 end knots."""
    s = SimmSpline(KNEE_X, KNEE_Y)
    first = np.polyfit(KNEE_X[:4], KNEE_Y[:4], 3)[0] * 6
    last = np.polyfit(KNEE_X[-4:], KNEE_Y[-4:], 3)[0] * 6
    assert 6 * s.d[0] == pytest.approx(first, rel=1e-6)
    assert 6 * s.d[-2] == pytest.approx(last, rel=1e-6)


def test_simm_spline_extrapolates_linearly_with_the_end_slope():
    """OpenSim continues a SimmSpline outside its knots as a straight line (the squat knee relies on it)."""
    s = SimmSpline(KNEE_X, KNEE_Y)
    b0 = s.derivative(KNEE_X[0] + 1e-12)
    for dx in (0.1, 1.0):
        assert s(KNEE_X[0] - dx) == pytest.approx(KNEE_Y[0] - dx * b0, abs=1e-12)
        assert s(KNEE_X[-1] + dx) == pytest.approx(KNEE_Y[-1] + dx * s.b[-1], abs=1e-12)
    line = SimmSpline((0.0, 2.0), (1.0, 5.0))  # two knots: a straight line everywhere
    assert line(np.array([-1.0, 0.5, 3.0])) == pytest.approx([-1.0, 2.0, 7.0])
    with pytest.raises(ValueError, match="must increase"):
        SimmSpline((0.0, 0.0, 1.0), (1.0, 2.0, 3.0))


def test_other_functions():
    assert LinearFunction(2.0, -1.0)(3.0) == 5.0 and Constant(0.25)(7.0) == 0.25
    m = MultiplierFunction(SimmSpline(KNEE_X, KNEE_Y), 0.5)
    assert m(0.1) == pytest.approx(0.5 * SimmSpline(KNEE_X, KNEE_Y)(0.1))


def test_body_fixed_xyz_orientation():
    a, b, c = 0.3, -0.7, 1.1
    Rx = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    Ry = np.array([[math.cos(b), 0, math.sin(b)], [0, 1, 0], [-math.sin(b), 0, math.cos(b)]])
    Rz = np.array([[math.cos(c), -math.sin(c), 0], [math.sin(c), math.cos(c), 0], [0, 0, 1]])
    assert np.allclose(body_fixed_xyz_rotation((a, b, c)).matrix(), Rx @ Ry @ Rz, atol=1e-15)


def test_2d_gait_as_read():
    model = read_osim("2D_gait.osim")  # the shipped copy, found by name
    root = ET.parse(opensim_file("2D_gait.osim")).getroot()
    masses = [float(b.findtext("mass")) for b in root.iter("Body")]
    plant_mass = model.plant.CalcTotalMass(model.plant.CreateDefaultContext())
    assert plant_mass == pytest.approx(sum(masses), rel=1e-15) and len(masses) == 12
    assert len(model.coordinates) == 10 and model.coordinate("knee_angle_r").path == "/jointset/knee_r/knee_angle_r"
    assert model.coordinate("knee_angle_r").range == pytest.approx((-2.094395102393195, 0.174532925199433))
    muscles = {e.path: e for e in model.force_elements if type(e).__name__ == "PathMuscle"}
    assert len(muscles) == 18 and "/hamstrings_r" in muscles
    ham = muscles["/hamstrings_r"].muscle
    assert (ham.max_isometric_force, ham.optimal_fiber_length, ham.ignore_tendon_compliance) == (
        2700.0, 0.109059287708541, True)
    kinds = {type(p).__name__ for m in muscles.values() for p in m.geometry.points}
    assert kinds == {"PathPoint", "ConditionalPathPoint", "MovingPathPoint"}
    rf = muscles["/rect_fem_r"].geometry.points
    moving = next(p for p in rf if isinstance(p, MovingPathPoint))
    assert moving.coordinates == ("knee_angle_r",) * 3 and isinstance(moving.functions[0], MultiplierFunction)
    psoas = next(p for p in muscles["/iliopsoas_r"].geometry.points if isinstance(p, ConditionalPathPoint))
    assert psoas.coordinate == "hip_flexion_r"
    contacts = [e for e in model.force_elements if type(e).__name__ == "SmoothSphereHalfSpaceForce"]
    assert sorted(c.path for c in contacts) == ["/contactFront_l", "/contactFront_r", "/contactHeel_l",
                                                 "/contactHeel_r"]
    assert all(np.allclose(c.plane_normal, (0, -1, 0), atol=1e-12) and c.stiffness == 3067776 for c in contacts)
    assert "/lumbarAct" in model.control_names() and "/hamstrings_r/activation" in model.state_names()


def _minimal(tmp_path, body: str, version: str = "40000"):
    text = f"""<?xml version="1.0"?>
<OpenSimDocument Version="{version}"><Model name="tiny">
  <BodySet><objects><Body name="b"><mass>1</mass><inertia>1 1 1 0 0 0</inertia></Body></objects></BodySet>
  <JointSet><objects>
    <PinJoint name="j"><socket_parent_frame>/ground</socket_parent_frame>
      <socket_child_frame>/bodyset/b</socket_child_frame>
      <coordinates><Coordinate name="q"><range>-1 1</range></Coordinate></coordinates></PinJoint>
  </objects></JointSet>
  {body}
</Model></OpenSimDocument>"""
    path = tmp_path / "tiny.osim"
    path.write_text(text)
    return path


def test_unsupported_elements_are_named_or_skipped_with_a_warning(tmp_path):
    ok = read_osim(_minimal(tmp_path, ""))
    assert [c.path for c in ok.coordinates] == ["/jointset/j/q"]
    spring = "<ForceSet><objects><PrescribedForce name='spring'/></objects></ForceSet>"
    with pytest.raises(OsimFormatError, match=r"tiny.osim: the force PrescribedForce \('spring'\) "
                                              r"at /forceset/spring is not supported"):
        read_osim(_minimal(tmp_path, spring))
    with pytest.warns(UserWarning, match=r"skipped .*PrescribedForce \('spring'\) at /forceset/spring"):
        model = read_osim(_minimal(tmp_path, spring), skip_unsupported=True)
    assert model.force_elements == []
    weld = "<ConstraintSet><objects><WeldConstraint name='w'/></objects></ConstraintSet>"
    with pytest.raises(OsimFormatError, match=r"the constraint WeldConstraint \('w'\) at /constraintset/w"):
        read_osim(_minimal(tmp_path, weld))
    with pytest.raises(OsimFormatError, match=r"OpenSim 2.x format \(Version 20302\)"):
        read_osim(_minimal(tmp_path, "", version="20302"))
    with pytest.raises(FileNotFoundError, match="2D_gait.osim"):
        read_osim("2D_gate.osim")
    assert ml.read_osim is read_osim


def test_a_study_on_a_model_file_round_trips(tmp_path):
    """Study files record the model file (by name if shipped) and its hash; property edits are kept."""
    model = read_osim("2D_gait.osim")
    model.set_property("/hamstrings_r/max_isometric_force", 5400.0)
    study = ml.Study()
    study.problem.set_model(model)
    study.problem.set_time_bounds(0, 0.5)
    path = tmp_path / "walk.json"
    study.save(path)
    again = ml.Study.load(path)
    loaded = again.problem.model
    assert loaded.description() == model.description()
    assert loaded.properties()["/hamstrings_r/max_isometric_force"].default == 5400.0
    # a local copy of the file that is then edited: the study refuses to pose another problem
    copy = tmp_path / "mine.osim"
    copy.write_text(opensim_file("2D_gait.osim").read_text())
    study.problem.set_model(read_osim(copy))
    study.save(path)
    copy.write_text(copy.read_text().replace("<max_isometric_force>2700", "<max_isometric_force>2701", 1))
    with pytest.raises(ValueError, match=r"mine.osim' changed since it was read for this study"):
        ml.Study.load(path)


def test_coordinate_coupler_constraint(tmp_path):
    """OpenSim's coupler q_dep = scale · f(q_indep), here the squat model's patella: −1 · knee angle."""
    patella = """<Body name="p"><mass>0.1</mass><inertia>0.01 0.01 0.01 0 0 0</inertia></Body>
      </objects></BodySet>"""
    joint_and_coupler = """    <PinJoint name="pj"><socket_parent_frame>/bodyset/b</socket_parent_frame>
      <socket_child_frame>/bodyset/p</socket_child_frame>
      <coordinates><Coordinate name="beta"><range>-2 2</range></Coordinate></coordinates></PinJoint>
  </objects></JointSet>
  <ConstraintSet><objects><CoordinateCouplerConstraint name="couple">
    <coupled_coordinates_function><LinearFunction><coefficients>-1 0.1</coefficients></LinearFunction>
    </coupled_coordinates_function>
    <independent_coordinate_names>q</independent_coordinate_names>
    <dependent_coordinate_name>beta</dependent_coordinate_name><scale_factor>2</scale_factor>
  </CoordinateCouplerConstraint></objects></ConstraintSet>"""
    text = _minimal(tmp_path, "").read_text().replace("</objects></BodySet>", patella, 1)
    text = text.replace("  </objects></JointSet>", joint_and_coupler)
    path = tmp_path / "coupled.osim"
    path.write_text(text)
    model = read_osim(path)
    (c,) = model.constraints
    assert c.name == "couple" and c.dependent == "beta" and c.independent == ["q"]
    assert model.multiplier_names() == ["/constraintset/couple/lambda_0"]
    # φ = β − 2(−q + 0.1) vanishes on the coupled pose and not off it
    from moco_lab.analysis.constraints import constraint_violations

    q = np.array([0.3, -0.5])
    good = ml.Trajectory([0.0, 1.0], {"/jointset/j/q/value": q, "/jointset/pj/beta/value": 2 * (-q + 0.1),
                                     "/jointset/j/q/speed": [0.0, 0.0], "/jointset/pj/beta/speed": [0.0, 0.0]})
    assert np.allclose(constraint_violations(model, good)["position"], 0.0, atol=1e-15)
    bad = ml.Trajectory([0.0, 1.0], {"/jointset/j/q/value": q, "/jointset/pj/beta/value": -q,
                                    "/jointset/j/q/speed": [0.0, 0.0], "/jointset/pj/beta/speed": [0.0, 0.0]})
    assert np.allclose(np.abs(constraint_violations(model, bad)["position"][:, 0]), np.abs(q - 0.2))  # −q − 2(−q + 0.1)


def test_millard_muscles_are_refused_or_replaced(tmp_path):
    muscle = """<ForceSet><objects><Millard2012EquilibriumMuscle name="m">
      <GeometryPath><PathPointSet><objects>
        <PathPoint name="o"><location>0 0.1 0</location><socket_parent_frame>/ground</socket_parent_frame></PathPoint>
        <PathPoint name="i"><location>0.2 0 0</location><socket_parent_frame>/bodyset/b</socket_parent_frame></PathPoint>
      </objects></PathPointSet></GeometryPath>
      <max_isometric_force>500</max_isometric_force><fiber_damping>0.01</fiber_damping>
      <TendonForceLengthCurve><strain_at_one_norm_force>0.06</strain_at_one_norm_force></TendonForceLengthCurve>
    </Millard2012EquilibriumMuscle></objects></ForceSet>"""
    path = _minimal(tmp_path, muscle)
    with pytest.raises(OsimFormatError, match=r"Millard2012EquilibriumMuscle 'm' .*replace_millard=True"):
        read_osim(path)
    (m,) = [e for e in read_osim(path, replace_millard=True).force_elements if isinstance(e, ml.PathMuscle)]
    assert m.path == "/forceset/m" and m.muscle.max_isometric_force == 500 and m.muscle.fiber_damping == 0.01
    assert m.muscle.tendon_strain_at_one_norm_force == 0.06
    assert m.muscle.passive_fiber_strain_at_one_norm_force == 0.7  # OpenSim's Millard default, as Moco copies it


def test_model_operators_edit_the_model_and_survive_a_study_file(tmp_path):
    from moco_lab.modeling import operators as ops

    model = read_osim("2D_gait.osim")
    fmax = {m.path: m.muscle.max_isometric_force for m in model.muscles}
    ops.scale_max_isometric_force(model, 2.0)
    ops.scale_max_isometric_force(model, 0.25, muscles=["/soleus_r", "gastroc_l"])  # one group weaker
    ops.ignore_passive_fiber_forces(model)
    ops.set_tendon_compliance(model, "implicit", muscles=["/soleus_r", "gastroc_r"])
    model.muscles[0].muscle.ignore_tendon_compliance = False  # an edit no operator records ...
    with pytest.raises(TypeError, match="changed after the factory 'read_osim' built it"):
        study = ml.Study()
        study.problem.set_model(model)
        study.save(tmp_path / "refused.json")  # ... is refused, not silently lost
    model.muscles[0].muscle.ignore_tendon_compliance = True
    weak = {"/soleus_r", "/gastroc_l"}
    assert all(m.muscle.max_isometric_force == (0.5 if m.path in weak else 2) * fmax[m.path] for m in model.muscles)
    assert all(m.muscle.ignore_passive_fiber_force for m in model.muscles)
    soleus = next(m for m in model.muscles if m.path == "/soleus_r").muscle
    assert soleus.tendon_compliance_dynamics_mode == "implicit"
    assert [op[0] for op in model.spec["operators"]] == ["scale_max_isometric_force", "scale_max_isometric_force",
                                                         "ignore_passive_fiber_forces", "set_tendon_compliance"]
    study = ml.Study()
    study.problem.set_model(model)
    study.save(tmp_path / "ops.json")
    again = ml.Study.load(tmp_path / "ops.json").problem.model
    assert again.description() == model.description()
    with pytest.raises(ValueError, match="factor must be a finite number > 0"):
        ops.scale_max_isometric_force(model, 0.0)
    with pytest.raises(ValueError, match="mode must be 'rigid', 'explicit' or 'implicit'"):
        ops.set_tendon_compliance(model, "stiff")
    with pytest.raises(KeyError, match="scale_max_isometric_force: Unknown muscle 'soleus'"):
        ops.scale_max_isometric_force(model, 0.5, muscles=["soleus"])
    with pytest.raises(KeyError, match="set_tendon_compliance: Unknown muscle '/solues_r'"):
        ops.set_tendon_compliance(model, "rigid", muscles=["/solues_r"])
    ops.remove_muscles(model)
    assert not model.muscles and not any(n.endswith("/activation") for n in model.state_names())


def test_function_derivatives_match_finite_differences_and_expressions():
    """f', f'' of each function (numbers, and as expressions of the engine's graph) against central differences:
    the custom joint's velocities and accelerations are built from them."""
    from moco_lab.symbolic import expr as sx
    from moco_lab.symbolic.codegen import compile_function

    s = SimmSpline(KNEE_X, KNEE_Y)
    fns = [s, MultiplierFunction(s, -0.5), LinearFunction(2.0, 1.0), Constant(3.0)]
    x = np.array([-2.5, -1.8, -0.3, 0.05, 1.0, 2.5])  # outside, inside and between the knots
    h = 1e-5
    g = sx.Graph()
    v = g.var("x")
    for f in fns:
        d1 = (f(x + h) - f(x - h)) / (2 * h)
        d2 = (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
        assert np.allclose(f.derivative(x), d1, atol=1e-8)
        assert np.allclose(f.second_derivative(x), d2, atol=1e-4)
        outs = [g.lift(f(v, sx)), g.lift(f.derivative(v, sx)), g.lift(f.second_derivative(v, sx))]
        fn = compile_function(outs, [v], backend="numpy")
        values = fn(x[:, None])
        assert np.allclose(values[:, 0], f(x), atol=1e-15) and np.allclose(values[:, 1], f.derivative(x), atol=1e-14)
        assert np.allclose(values[:, 2], f.second_derivative(x), atol=1e-12)


def test_squat_knee_is_a_custom_joint_with_extrapolated_spline_translations():
    """The squat model's knee translations are SimmSplines tabulated for 0…2.09 rad, used on −2.09…0: the joint
    centre moves with the splines' end-slope lines (opensim-core issue 4339: a few mm of the sign opposite to the table).
    Drake's own numeric kinematics would miss the translation, so they are refused with a message naming the
    joints."""
    from moco_lab.analysis.moment_arms import moment_arm
    from moco_lab.analysis.pose import pose
    from moco_lab.modeling.joints import CustomTransform

    model = read_osim(opensim_file("squatToStand_3dof9musc.osim"), replace_millard=True)
    knee = model.custom_joints["knee_r"]
    assert isinstance(knee, CustomTransform) and model.tree().joints[4].type == "custom"
    q = -1.8
    R, p = knee.pose(q)
    ty, tz = knee.translations[0][1], knee.translations[1][1]
    assert p[1] == pytest.approx(ty.y[0] + ty.b[0] * q, abs=1e-15) and p[2] == pytest.approx(tz.b[0] * q, abs=1e-15)
    assert -0.02 < p[2] < -0.005  # the opposite sign of every tabulated value
    assert np.allclose(R, [[1, 0, 0], [0, np.cos(q), -np.sin(q)], [0, np.sin(q), np.cos(q)]])
    standing, squat = pose(model), pose(model, {"knee_angle_r": q, "knee_angle_r_beta": -q, "hip_flexion_r": -1.7})
    assert squat.joints["hip_r"][1] < standing.joints["hip_r"][1] - 0.2  # the pelvis goes down in a squat
    with pytest.raises(NotImplementedError, match="knee_r"):
        moment_arm(model, np.zeros(model.nq), model.muscles[0], "knee_angle_r")


def test_an_opensim_3_file_is_upgraded_as_it_is_read():
    """walk_gait1018_subject01.osim (OpenSim 3.x, Version 30000; Moco's testMocoTrack model): joints nested in
    bodies become a JointSet with offset frames, the ground body becomes Ground, the pelvis's three-coordinate
    CustomJoint (rotation about z, translations along x and y, a constant 0.02 m along z) becomes a planar joint
    whose parent frame sits 0.02 m along z; 10 coordinates, 18 muscles (Millard, replaced as Moco does)."""
    with pytest.raises(OsimFormatError, match="Millard2012EquilibriumMuscle"):
        read_osim("walk_gait1018_subject01.osim")
    model = read_osim("walk_gait1018_subject01.osim", replace_millard=True)
    assert [c.name for c in model.coordinates] == [
        "pelvis_tx", "pelvis_ty", "pelvis_tilt", "hip_flexion_r", "knee_angle_r", "ankle_angle_r", "hip_flexion_l",
        "knee_angle_l", "ankle_angle_l", "lumbar_extension"]
    assert model.coordinate("pelvis_tilt").path == "/jointset/ground_pelvis/pelvis_tilt"
    assert len(model.muscles) == 18 and "/forceset/hamstrings_r/activation" in model.state_names()
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    q = np.random.default_rng(1).uniform(-0.5, 0.5, plant.num_positions())
    plant.SetPositions(ctx, q)
    pelvis = plant.EvalBodyPoseInWorld(ctx, plant.GetBodyByName("pelvis"))
    i = {c.name: c.q_index for c in model.coordinates}
    assert pelvis.translation() == pytest.approx([q[i["pelvis_tx"]], q[i["pelvis_ty"]], 0.02], abs=1e-15)
    assert pelvis.rotation().ToRollPitchYaw().yaw_angle() == pytest.approx(q[i["pelvis_tilt"]], abs=1e-15)


def _v3(tmp_path, joint: str) -> Path:
    text = f"""<?xml version="1.0"?>
<OpenSimDocument Version="30000"><Model name="old"><BodySet><objects>
  <Body name="ground"><mass>0</mass><Joint/></Body>
  <Body name="b"><mass>1</mass><inertia_xx>1</inertia_xx><inertia_yy>1</inertia_yy><inertia_zz>1</inertia_zz>
    <Joint>{joint}</Joint></Body>
</objects></BodySet></Model></OpenSimDocument>"""
    path = tmp_path / "old.osim"
    path.write_text(text)
    return path


def test_opensim_3_joints_the_reader_refuses(tmp_path):
    """A reversed 3.x joint, and a CustomJoint of several coordinates that is neither the planar pattern nor one
    coordinate per axis (here a rotation of twice a coordinate), are named."""
    coords = "".join(f"<Coordinate name='{n}'/>" for n in ("a", "b", "c"))
    axes = "".join(f"<TransformAxis name='{k}'><coordinates>{c}</coordinates><axis>{ax}</axis><function>"
                   f"<LinearFunction><coefficients>{slope} 0</coefficients></LinearFunction></function>"
                   "</TransformAxis>"
                   for k, c, ax, slope in (("rotation1", "a", "1 0 0", 2), ("translation1", "b", "1 0 0", 1),
                                           ("translation2", "c", "0 1 0", 1)))
    joint = (f"<CustomJoint name='j'><parent_body>ground</parent_body><CoordinateSet><objects>{coords}</objects>"
             f"</CoordinateSet><SpatialTransform>{axes}</SpatialTransform>{{extra}}</CustomJoint>")
    with pytest.raises(OsimFormatError, match=r"a CustomJoint with 3 coordinates that is neither a planar joint.* at "
                                              r"/jointset/j"):
        read_osim(_v3(tmp_path, joint.format(extra="")))
    with pytest.raises(OsimFormatError, match=r"the 3.x joint 'j' of body 'b' is reversed"):
        read_osim(_v3(tmp_path, joint.format(extra="<reverse>true</reverse>")))
