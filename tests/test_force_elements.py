"""Force elements (moco_lab.modeling.forces, .contact, .passive) against independent evaluations.

Each element is put on a small model and evaluated by the engine's compiled
kernel at random states; the reference is computed here, independently: the
published equations written out in numpy with the point kinematics from
Drake's own ``CalcPointsPositions`` and Jacobians, Drake's own force elements
where one exists, OpenSim 4.6 for ``SmoothSphereHalfSpaceForce`` (optional),
and central finite differences for every Jacobian.
"""
import math

import numpy as np
import pytest
from pydrake.multibody.tree import JacobianWrtVariable

import moco_lab as ml
from moco_lab.engine.kernel import kernel_for
from moco_lab.modeling.contact import Gait2dContactPoint, SmoothSphereHalfSpaceForce
from moco_lab.modeling.forces import ExpressionCoordinateForce, PointToPointSpringDamper
from moco_lab.modeling.passive import PassiveJointMoment


def foot_model(*elements, with_ankle=True):
    """A shank on a planar joint (x, y, θ) with a foot on a pin (the 'ankle'), plus the given elements."""
    b = ml.ModelBuilder("foot", gravity=(0, -9.81, 0))
    b.add_body("shank", 3.5, com=(0, -0.2, 0), inertia=(0.06, 0.01, 0.06))
    b.add_planar_joint("base", "ground", "shank", coordinates=("tx", "ty", "rz"))
    if with_ankle:
        b.add_body("foot", 1.1, com=(0.08, -0.035, 0), inertia=(0.002, 0.018, 0.018))
        b.add_pin_joint("ankle", "shank", "foot", coordinate="ankle_angle", parent_offset=(0, -0.44, 0))
    for e in elements:
        b.add_force_element(e)
    return b.build()


def random_states(model, n, rng, height=(0.40, 0.52)):
    Q = np.zeros((n, model.nq))
    Q[:, 0] = rng.uniform(-0.2, 0.2, n)
    Q[:, 1] = rng.uniform(*height, n)  # the foot touches down around y ≈ 0.51
    Q[:, 2] = rng.uniform(-0.3, 0.3, n)
    if model.nq > 3:
        Q[:, 3] = rng.uniform(-0.4, 0.4, n)
    U = rng.normal(size=(n, model.nq)) * 0.5
    return Q, U


def drake_point(model, q, u, body, location):
    """World position, velocity and translational Jacobian of a body point, by Drake."""
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    plant.SetVelocities(ctx, u)
    frame = plant.GetBodyByName(body).body_frame()
    world = plant.world_frame()
    p = plant.CalcPointsPositions(ctx, frame, np.asarray(location, float).reshape(3, 1), world)[:, 0]
    J = plant.CalcJacobianTranslationalVelocity(ctx, JacobianWrtVariable.kV, frame, np.asarray(location, float),
                                                world, world)
    return p, J @ u, J


def applied(model, Q, U):
    k = kernel_for(model)
    n = Q.shape[0]
    return k.applied(Q, U, np.zeros((n, k.nz)), np.zeros((n, k.nx)), np.zeros(0))[0]


def finite_difference_check(model, rng, n=6, scale=1.0, rtol=1e-5):
    """Every Jacobian block of the residual, ż and the implicit residuals against central differences."""
    k = kernel_for(model)
    Q, U = random_states(model, n, rng)
    A = rng.normal(size=Q.shape)
    Z = rng.uniform(0.2, 0.8, size=(n, k.nz))
    W = rng.normal(size=(n, k.nw))
    X = rng.uniform(0.1, 0.9, size=(n, k.nx))
    res = k.evaluate(Q, U, X, np.zeros(0), Z=Z, A=A, jac=True, W=W)
    h = 1e-6
    blocks = {"dq": Q, "du": U, "dz": Z, "dw": W, "dx": X, "da": A}
    for key, base in blocks.items():
        for j in range(base.shape[1]):
            plus, minus = base.copy(), base.copy()
            plus[:, j] += h
            minus[:, j] -= h
            args = {"dq": Q, "du": U, "dz": Z, "dw": W, "dx": X, "da": A}
            vals = []
            for pert in (plus, minus):
                a = dict(args)
                a[key] = pert
                r = k.evaluate(a["dq"], a["du"], a["dx"], np.zeros(0), Z=a["dz"], A=a["da"], W=a["dw"])
                vals.append(np.hstack([r["R"], r["Zd"], r["Rw"]]))
            fd = (vals[0] - vals[1]) / (2 * h)
            exact = np.hstack([res["J"][key][:, :, j], *(
                [res["JZ"][key][:, :, j], res["JW"][key][:, :, j]] if key != "da" else
                [np.zeros((n, k.nz)), np.zeros((n, k.nw))])])
            # central differences of smooth O(1..1e4) functions with h = 1e-6: ~1e-8 relative error,
            # plus round-off 1e-16 * |value| / h
            tol = rtol * np.maximum(1.0, np.abs(exact)) + 1e-9 * scale / h
            assert np.all(np.abs(fd - exact) <= tol), (key, j, np.abs(fd - exact).max())


# ------------------------------------------------------------------------------------------ gait2d contact
@pytest.mark.parametrize("linear_term", [False, True])
def test_gait2d_contact_point_is_the_manuals_equations(linear_term):
    heel = Gait2dContactPoint("/forceset/heel", "foot", (-0.06, -0.0702, 0.0), linear_term=linear_term)
    model = foot_model(heel)
    rng = np.random.default_rng(1)
    Q, U = random_states(model, 25, rng)
    k = kernel_for(model)
    F = k.outputs(["/forceset/heel/force"], Q, U)["/forceset/heel/force"]
    tau = applied(model, Q, U)
    k_, b_, y0, gamma, v0 = 1e5, 1.0, 0.002, 1.0, 0.1   # the manual's values (gait2d manual §2.8)
    loaded = 0
    for i in range(Q.shape[0]):
        p, v, J = drake_point(model, Q[i], U[i], "foot", (-0.06, -0.0702, 0.0))
        d = 0.5 * (math.sqrt(p[1] ** 2 + y0 ** 2) - p[1])                    # Eq. 12
        fy = k_ * d * (1 - b_ * v[1]) - (p[1] if linear_term else 0.0)       # Eq. 13 (+ the code's −y)
        fx = -gamma * fy * v[0] / math.sqrt(v[0] ** 2 + v0 ** 2)              # Eq. 14
        np.testing.assert_allclose(F[i], [fx, fy, 0.0], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(tau[i], J.T @ np.array([fx, fy, 0.0]), rtol=1e-12, atol=1e-9)
        loaded += fy > 10
    assert loaded >= 5  # the random states do press the heel into the ground


def test_gait2d_contact_jacobians():
    model = foot_model(Gait2dContactPoint("/forceset/heel", "foot", (-0.06, -0.0702, 0.0)),
                       Gait2dContactPoint("/forceset/toe", "foot", (0.1636, -0.0702, 0.0), linear_term=True))
    finite_difference_check(model, np.random.default_rng(2), scale=1e4)


# ------------------------------------------------------------------------------------------ smooth sphere
SPHERE = dict(stiffness=3067776.0, dissipation=2.0, static_friction=0.8, dynamic_friction=0.8,
              viscous_friction=0.5, transition_velocity=0.2, constant_contact_force=1e-5, hertz_smoothing=300.0,
              hunt_crossley_smoothing=50.0)  # 2D_gait.osim's values


def sphere_reference(c, vc_at, R, n, E, diss, us, ud, uv, vt, cf, bd, bv):
    """Simbody's SmoothSphereHalfSpaceForceImpl::calcForce, written out: the force on the sphere and its point."""
    delta = float(np.dot(c, n)) + R           # plane through the origin
    p = c + R * n - 0.5 * delta * n
    v = vc_at(p)
    vn = float(v @ n)
    vtan = v - vn * n
    k = 0.5 * E ** (2 / 3)
    fh = (4 / 3) * k * math.sqrt(R * k) * math.sqrt(delta ** 2 + cf) ** 1.5
    fhs = fh * (0.5 + 0.5 * math.tanh(bd * delta))
    fhcs = fhs * (1 + 1.5 * diss * vn) * (0.5 + 0.5 * math.tanh(bv * (vn + 2 / (3 * diss))))
    vslip = math.sqrt(vtan @ vtan + cf)
    vrel = vslip / vt
    ff = fhcs * (min(vrel, 1) * (ud + 2 * (us - ud) / (1 + vrel ** 2)) + uv * vslip)
    force = fhcs * n + ff * vtan / vslip
    return -force, p


def test_smooth_sphere_half_space_force_is_simbodys():
    R, loc = 0.035, (0.031, -0.46, 0.0)
    sphere = SmoothSphereHalfSpaceForce("/forceset/contactHeel", "shank", loc, R, **SPHERE)
    model = foot_model(sphere, with_ankle=False)
    rng = np.random.default_rng(3)
    Q, U = random_states(model, 30, rng, height=(0.47, 0.50))
    k = kernel_for(model)
    F = k.outputs(["/forceset/contactHeel/force"], Q, U)["/forceset/contactHeel/force"]
    tau = applied(model, Q, U)
    plant = model.plant
    n_plane = np.array([0.0, -1.0, 0.0])
    loaded = 0
    for i in range(Q.shape[0]):
        c, vc, _ = drake_point(model, Q[i], U[i], "shank", loc)
        ctx = plant.CreateDefaultContext()
        plant.SetPositions(ctx, Q[i])
        plant.SetVelocities(ctx, U[i])
        X_WB = plant.GetBodyByName("shank").EvalPoseInWorld(ctx)
        omega = plant.GetBodyByName("shank").EvalSpatialVelocityInWorld(ctx).rotational()
        force, p = sphere_reference(c, lambda p_: vc + np.cross(omega, p_ - c), R, n_plane,
                                    *[SPHERE[key] for key in ("stiffness", "dissipation", "static_friction",
                                                              "dynamic_friction", "viscous_friction",
                                                              "transition_velocity", "constant_contact_force",
                                                              "hertz_smoothing", "hunt_crossley_smoothing")])
        np.testing.assert_allclose(F[i], force, rtol=1e-11, atol=1e-9)
        # Jᵀ F at the contact point (a point of the shank, given in its frame)
        p_B = X_WB.inverse().multiply(p)
        _, _, J = drake_point(model, Q[i], U[i], "shank", p_B)
        np.testing.assert_allclose(tau[i], J.T @ force, rtol=1e-10, atol=1e-8)
        loaded += -force[1] < -50
    assert loaded >= 5


def test_smooth_sphere_jacobians():
    model = foot_model(SmoothSphereHalfSpaceForce("/forceset/heel", "foot", (0.031, 0.01, 0.0), 0.035, **SPHERE),
                       SmoothSphereHalfSpaceForce("/forceset/front", "foot", (0.177, -0.016, 0.005), 0.015,
                                                  **SPHERE))
    finite_difference_check(model, np.random.default_rng(4), scale=1e4, rtol=1e-4)


@pytest.mark.opensim
def test_smooth_sphere_half_space_force_against_opensim():
    osim = pytest.importorskip("opensim")
    R, loc = 0.035, (0.031, -0.46, 0.0)
    ours = foot_model(SmoothSphereHalfSpaceForce("/forceset/contact", "shank", loc, R, **SPHERE), with_ankle=False)
    m = osim.Model()
    body = osim.Body("shank", 3.5, osim.Vec3(0, -0.2, 0), osim.Inertia(0.06, 0.01, 0.06))
    m.addBody(body)
    joint = osim.PlanarJoint("base", m.getGround(), body)
    m.addJoint(joint)
    sphere = osim.ContactSphere(R, osim.Vec3(*loc), body, "sphere")
    floor = osim.ContactHalfSpace(osim.Vec3(0, 0, 0), osim.Vec3(0, 0, -math.pi / 2), m.getGround(), "floor")
    m.addContactGeometry(sphere)
    m.addContactGeometry(floor)
    force = osim.SmoothSphereHalfSpaceForce("contact", sphere, floor)
    for key, setter in (("stiffness", "set_stiffness"), ("dissipation", "set_dissipation"),
                        ("static_friction", "set_static_friction"), ("dynamic_friction", "set_dynamic_friction"),
                        ("viscous_friction", "set_viscous_friction"), ("transition_velocity",
                                                                         "set_transition_velocity"),
                        ("constant_contact_force", "set_constant_contact_force"),
                        ("hertz_smoothing", "set_hertz_smoothing"),
                        ("hunt_crossley_smoothing", "set_hunt_crossley_smoothing")):
        getattr(force, setter)(SPHERE[key])
    m.addForce(force)
    state = m.initSystem()
    coords = [joint.getCoordinate(k) for k in range(3)]  # OpenSim's order: rz, tx, ty
    rng = np.random.default_rng(5)
    Q, U = random_states(ours, 15, rng, height=(0.47, 0.50))
    F = kernel_for(ours).outputs(["/forceset/contact/force"], Q, U)["/forceset/contact/force"]
    for i in range(Q.shape[0]):
        x, y, th = Q[i]
        for c, qv, uv in zip(coords, (th, x, y), (U[i, 2], U[i, 0], U[i, 1])):
            c.setValue(state, qv, False)
            c.setSpeedValue(state, uv)
        m.realizeVelocity(state)
        m.realizeDynamics(state)
        rec = force.getRecordValues(state)
        theirs = np.array([rec.get(k) for k in range(3)])  # force on the sphere, ground frame
        # same formula, same double arithmetic in a different order: agreement to ~1e-12 relative
        np.testing.assert_allclose(F[i], theirs, rtol=1e-9, atol=1e-8 * max(1.0, np.abs(theirs).max()))


# ------------------------------------------------------------------------------------------ passive moments
def test_passive_joint_moment_is_equation_1():
    elem = PassiveJointMoment("/forceset/ankle_rom", "ankle_angle", math.radians(-60), math.radians(60),
                              stiffness=5000, transition=math.radians(2), damping=0.1)
    model = foot_model(elem)
    rng = np.random.default_rng(6)
    Q, U = random_states(model, 40, rng)
    Q[:, 3] = np.linspace(-1.4, 1.4, 40)
    tau = applied(model, Q, U)

    def fplus(x, x0):  # Appendix A, Eq. 19
        return 0.5 * (x + np.sqrt(x * x + x0 * x0))

    phi, rate = Q[:, 3], U[:, 3]
    x0 = math.radians(2)
    expected = -5000 * (fplus(phi - math.radians(60), x0) - fplus(math.radians(-60) - phi, x0)) - 0.1 * rate
    np.testing.assert_allclose(tau[:, 3], expected, rtol=1e-13, atol=1e-10)
    assert np.all(tau[:, :3] == 0)
    assert expected.max() > 1000 and expected.min() < -1000    # both limits engaged somewhere


# ------------------------------------------------------------------------------------------ point-to-point
def test_point_to_point_spring_damper_matches_drakes_linear_spring_damper():
    from pydrake.multibody.tree import LinearSpringDamper

    spring = PointToPointSpringDamper("/forceset/strap", "shank", (0.02, -0.1, 0.01), "foot", (0.1, -0.03, -0.01),
                                      stiffness=800.0, rest_length=0.25, damping=12.0)
    model = foot_model(spring)
    # the same spring as a Drake force element, on a copy of the plant
    b = ml.ModelBuilder("foot", gravity=(0, 0, 0))
    b.add_body("shank", 3.5, com=(0, -0.2, 0), inertia=(0.06, 0.01, 0.06))
    b.add_planar_joint("base", "ground", "shank", coordinates=("tx", "ty", "rz"))
    b.add_body("foot", 1.1, com=(0.08, -0.035, 0), inertia=(0.002, 0.018, 0.018))
    b.add_pin_joint("ankle", "shank", "foot", coordinate="ankle_angle", parent_offset=(0, -0.44, 0))
    plant = b.plant
    plant.AddForceElement(LinearSpringDamper(plant.GetBodyByName("shank"), [0.02, -0.1, 0.01],
                                             plant.GetBodyByName("foot"), [0.1, -0.03, -0.01], 0.25, 800.0, 12.0))
    plant.Finalize()
    from pydrake.multibody.tree import MultibodyForces

    rng = np.random.default_rng(7)
    Q, U = random_states(model, 15, rng)
    tau = applied(model, Q, U)
    ctx = plant.CreateDefaultContext()
    for i in range(Q.shape[0]):
        plant.SetPositions(ctx, Q[i])
        plant.SetVelocities(ctx, U[i])
        forces = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, forces)  # the spring's forces on the two bodies
        # their generalized forces: ID(a = 0) without them minus ID(a = 0) with them (velocity terms cancel)
        zero = np.zeros(plant.num_velocities())
        drake = plant.CalcInverseDynamics(ctx, zero, MultibodyForces(plant)) - plant.CalcInverseDynamics(ctx, zero,
                                                                                                        forces)
        np.testing.assert_allclose(tau[i], drake, rtol=1e-12, atol=1e-10)
    finite_difference_check(model, np.random.default_rng(8), scale=1e3)


def test_expression_coordinate_force_and_its_jacobian():
    elem = ExpressionCoordinateForce(
        "/forceset/knee_limit", "ankle_angle",
        lambda q, u, p: -p["k"] * np.exp(-10 * (q["ankle_angle"] + 0.5)) - 0.3 * u["ankle_angle"] * q["rz"],
        constants={"k": 5.0})
    model = foot_model(elem)
    rng = np.random.default_rng(9)
    Q, U = random_states(model, 10, rng)
    tau = applied(model, Q, U)
    expected = -5.0 * np.exp(-10 * (Q[:, 3] + 0.5)) - 0.3 * U[:, 3] * Q[:, 2]
    np.testing.assert_allclose(tau[:, 3], expected, rtol=1e-13)
    assert model.property("/forceset/knee_limit/k").default == 5.0
    model.set_property("/forceset/knee_limit/k", 7.0)          # an edit changes the physics
    np.testing.assert_allclose(applied(model, Q, U)[:, 3], expected * 0 + (-7.0 * np.exp(-10 * (Q[:, 3] + 0.5))
                                                                          - 0.3 * U[:, 3] * Q[:, 2]), rtol=1e-13)
    finite_difference_check(model, np.random.default_rng(10), scale=1e3)


def test_elements_name_unknown_coordinates_and_bodies():
    with pytest.raises(ValueError, match="ankle_angel.*Did you mean 'ankle_angle'"):
        foot_model(PassiveJointMoment("/forceset/p", "ankle_angel", -1, 1))
    with pytest.raises(KeyError, match="fot.*Did you mean 'foot'"):
        foot_model(Gait2dContactPoint("/forceset/heel", "fot", (0, 0, 0)))
    with pytest.raises(ValueError, match="min_angle"):
        PassiveJointMoment("/forceset/p", "ankle_angle", 1, -1)
    with pytest.raises(ValueError, match="dissipation"):
        SmoothSphereHalfSpaceForce("/forceset/s", "foot", (0, 0, 0), 0.03, dissipation=0.0)
