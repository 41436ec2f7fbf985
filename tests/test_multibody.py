"""The engine's multibody recursions (moco_lab.engine.multibody) against Drake's own computations.

Random trees with every supported joint type (planar base, revolute and prismatic
joints on random axes, welds), random joint-frame poses, full 3-D inertias, joint
damping and a tilted gravity vector. At random states the derived expressions,
compiled, must reproduce Drake's ``CalcInverseDynamics`` (with its force elements),
``CalcMassMatrix``, point positions and velocities, the centre of mass and
``Jᵀ F``. All are rigid-body computations done in a different order, so they
agree to round-off: 1e-12 relative is 4 orders of magnitude above the ~1e-16
noise and far below any modelling error (a wrong sign, axis or offset gives O(1)).
"""
import numpy as np
import pytest
from pydrake.math import RigidTransform, RollPitchYaw
from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import (
    FixedOffsetFrame,
    JacobianWrtVariable,
    MultibodyForces,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    RotationalInertia,
    SpatialInertia,
    WeldJoint,
)

from moco_lab.engine.multibody import SymbolicMultibody, read_tree
from moco_lab.symbolic import Graph, compile_function, derivatives

RTOL = 1e-12


def random_tree(seed: int, n_links: int = 5):
    rng = np.random.default_rng(seed)
    plant = MultibodyPlant(0.0)

    def body(name):
        inertia = RotationalInertia(*rng.uniform(0.1, 0.3, 3), *rng.normal(size=3) * 0.01)
        return plant.AddRigidBody(name, SpatialInertia.MakeFromCentralInertia(
            rng.uniform(1, 5), rng.normal(size=3) * 0.1, inertia))

    def frames(name, parent, child):
        F = plant.AddFrame(FixedOffsetFrame(name + "_F", parent.body_frame(),
                                            RigidTransform(RollPitchYaw(rng.normal(size=3)), rng.normal(size=3) * 0.2)))
        M = plant.AddFrame(FixedOffsetFrame(name + "_M", child.body_frame(),
                                            RigidTransform(RollPitchYaw(rng.normal(size=3)), rng.normal(size=3) * 0.2)))
        return F, M

    base = body("base")
    plant.AddJoint(PlanarJoint("root", *frames("root", plant.world_body(), base), np.array([0.3, 0.4, 0.0])))
    parent = base
    for k in range(n_links):
        child = body(f"link{k}")
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        F, M = frames(f"j{k}", parent, child)
        if k % 3 == 2:
            plant.AddJoint(PrismaticJoint(f"j{k}", F, M, axis, damping=0.4))
        else:
            plant.AddJoint(RevoluteJoint(f"j{k}", F, M, axis, damping=0.3 * k))
        parent = child
    side = body("side")
    plant.AddJoint(RevoluteJoint("side", *frames("side", base, side), np.array([0.0, 0.0, 1.0])))
    welded = body("welded")
    plant.AddJoint(WeldJoint("weld", *frames("weld", side, welded),
                             RigidTransform(RollPitchYaw(0.1, 0.2, 0.3), [0.1, 0.0, 0.0])))
    plant.mutable_gravity_field().set_gravity_vector([0.3, -9.81, 0.2])
    plant.Finalize()
    return plant


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recursions_match_drake(seed):
    plant = random_tree(seed)
    nq = plant.num_positions()
    tree = read_tree(plant)
    g = Graph()
    q, u, a = (g.vars([f"{s}{i}" for i in range(nq)]) for s in "qua")
    mb = SymbolicMultibody(tree, q, u, a)
    tau = mb.inverse_dynamics()
    M = derivatives(tau, a)
    point = (0.1, -0.2, 0.3)
    link = tree.body_index("link4")
    p, v = mb.point_position(link, point), mb.point_velocity(link, point)
    com, vcom = mb.center_of_mass()
    force = (1.0, -2.0, 0.5)
    moment = (0.2, 0.1, -0.3)
    jtf = mb.generalized_forces([(link, p, force)], [(tree.body_index("link2"), moment)])
    outputs = tau + [M[i].get(j, 0.0) for i in range(nq) for j in range(nq)] + p + v + com + vcom + jtf
    fn = compile_function(outputs, q + u + a, name=f"drake_check_{seed}")
    ctx = plant.CreateDefaultContext()
    rng = np.random.default_rng(seed + 10)
    world = plant.world_frame()
    frame = plant.GetBodyByName("link4").body_frame()
    for _ in range(10):
        qv, uv, av = rng.normal(size=(3, nq))
        plant.SetPositions(ctx, qv)
        plant.SetVelocities(ctx, uv)
        forces = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, forces)  # gravity and joint damping
        Y = fn(np.concatenate([qv, uv, av])[None])[0]
        o = 0

        def take(k):
            nonlocal o
            o += k
            return Y[o - k:o]

        ID = plant.CalcInverseDynamics(ctx, av, forces)
        np.testing.assert_allclose(take(nq), ID, rtol=RTOL, atol=RTOL * np.abs(ID).max())
        Md = plant.CalcMassMatrix(ctx)
        np.testing.assert_allclose(take(nq * nq).reshape(nq, nq), Md, rtol=RTOL, atol=RTOL * np.abs(Md).max())
        pd = plant.CalcPointsPositions(ctx, frame, np.array(point).reshape(3, 1), world)[:, 0]
        J = plant.CalcJacobianTranslationalVelocity(ctx, JacobianWrtVariable.kV, frame, np.array(point), world, world)
        np.testing.assert_allclose(take(3), pd, atol=1e-13)
        np.testing.assert_allclose(take(3), J @ uv, atol=1e-13)
        np.testing.assert_allclose(take(3), plant.CalcCenterOfMassPositionInWorld(ctx), atol=1e-13)
        np.testing.assert_allclose(take(3), plant.CalcCenterOfMassTranslationalVelocityInWorld(ctx), atol=1e-13)
        Jw = plant.CalcJacobianAngularVelocity(ctx, JacobianWrtVariable.kV, plant.GetBodyByName("link2").body_frame(),
                                               world, world)
        np.testing.assert_allclose(take(nq), J.T @ np.array(force) + Jw.T @ np.array(moment), atol=1e-12)


@pytest.mark.parametrize("meaning", ["mass", "mass_scale"])
def test_mass_as_a_parameter_against_drake(meaning):
    """A body's mass as a variable of the equations, against Drake's inverse dynamics with that body changed in the
    context: OpenSim's meaning (``masses``: the central inertia kept; the context's spatial inertia rebuilt from the
    same central inertia) and a body made denser (``inertia_scales`` too: Drake's ``SetMass``, which keeps the unit
    inertia)."""
    plant = random_tree(4, n_links=3)
    nq = plant.num_positions()
    tree = read_tree(plant)
    g = Graph()
    q, u, a = (g.vars([f"{s}{i}" for i in range(nq)]) for s in "qua")
    m = g.var("m")
    link = tree.body_index("link1")
    body = plant.GetBodyByName("link1")
    m0 = body.default_mass()
    if meaning == "mass":
        mb = SymbolicMultibody(tree, q, u, a, masses={link: m})
    else:
        mb = SymbolicMultibody(tree, q, u, a, masses={link: m}, inertia_scales={link: m * (1.0 / m0)})
    fn = compile_function(mb.inverse_dynamics(), q + u + a, [m], name=f"mass_param_{meaning}")
    ctx = plant.CreateDefaultContext()
    if meaning == "mass":
        com = body.default_spatial_inertia().get_com()
        central = body.default_spatial_inertia().Shift(com).CalcRotationalInertia()
        body.SetSpatialInertiaInBodyFrame(ctx, SpatialInertia.MakeFromCentralInertia(7.5, com, central))
    else:
        body.SetMass(ctx, 7.5)  # Drake keeps the unit inertia: I scales with m
    rng = np.random.default_rng(5)
    qv, uv, av = rng.normal(size=(3, nq))
    plant.SetPositions(ctx, qv)
    plant.SetVelocities(ctx, uv)
    forces = MultibodyForces(plant)
    plant.CalcForceElementsContribution(ctx, forces)
    ID = plant.CalcInverseDynamics(ctx, av, forces)
    np.testing.assert_allclose(fn(np.concatenate([qv, uv, av])[None], np.array([7.5]))[0], ID, rtol=RTOL,
                               atol=RTOL * np.abs(ID).max())


def test_unsupported_joints_and_force_elements_are_named():
    from pydrake.multibody.tree import BallRpyJoint, LinearSpringDamper

    plant = MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    plant.AddJoint(BallRpyJoint("ball", plant.world_frame(), b.body_frame()))
    plant.Finalize()
    with pytest.raises(NotImplementedError, match="'ball'.*ball_rpy"):
        read_tree(plant)
    plant = MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    plant.AddJoint(PrismaticJoint("slide", plant.world_frame(), b.body_frame(), [1.0, 0, 0]))
    plant.AddForceElement(LinearSpringDamper(plant.world_body(), [0, 0, 0], b, [0, 0, 0], 1.0, 10.0, 0.1))
    plant.Finalize()
    with pytest.raises(NotImplementedError, match="LinearSpringDamper"):
        read_tree(plant)
