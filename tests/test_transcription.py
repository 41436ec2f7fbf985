"""The transcription's exact derivatives and its defect equations (the Moco paper, Eq. 7, 8, 12, 15)."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.engine.kernel import Kernel


def fd_jacobian(fun, z, eps=1e-6):
    cols = []
    for k in range(z.size):
        zp, zm = z.copy(), z.copy()
        zp[k] += eps
        zm[k] -= eps
        cols.append((np.atleast_1d(fun(zp)) - np.atleast_1d(fun(zm))) / (2 * eps))
    return np.column_stack(cols)


def free_time_study(scheme, mode):
    """Double pendulum with free final time, a parameter, and both integral goals."""
    study = ml.examples.double_pendulum_study(scheme, mode, 4)
    p = study.problem
    p.set_time_bounds(0, (0.5, 2))
    p.add_parameter("m1", "/bodyset/b1/mass", (0.5, 2))
    ref = ml.Trajectory([0, 0.7, 2.0], {"/jointset/j0/q0/value": [0, 1, 1.5]})
    p.add_goal(ml.StateTrackingGoal("track", 3.0, reference=ref, allow_unused_references=True))
    p.add_goal(ml.ControlGoal("effort4", 0.1, exponent=4))
    study.solver.chunk_size = 3  # two chunks: exercises the chunk boundary
    return study


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_chunk_jacobians_match_finite_differences(scheme, mode):
    tr = free_time_study(scheme, mode).transcribe()
    rng = np.random.default_rng(1)
    assert len(tr.chunks) == 2
    for chunk in tr.chunks:
        z = rng.uniform(-1, 1, chunk.nvar)
        z[0], z[1] = 0.1, 1.37  # t0, tf: no node on a kink of the piecewise-linear reference
        z[2] = 1.2  # mass parameter
        val, J = chunk.constraint(z, True)
        np.testing.assert_allclose(val, chunk.constraint(z, False)[0])
        Jfd = fd_jacobian(lambda zz: chunk.constraint(zz, False)[0], z)
        np.testing.assert_allclose(J, Jfd, rtol=1e-5, atol=1e-6)
        # every nonzero lies inside the declared sparsity pattern
        mask = np.zeros_like(J, bool)
        for r, c in chunk.sparsity:
            mask[r, c] = True
        assert not np.any((np.abs(Jfd) > 1e-9) & ~mask)
        # the cost sees only the chunk's variables that goals use (times, parameters, cost columns)
        zc = rng.uniform(-1, 1, chunk.cost_vars.size)
        zc[0], zc[1], zc[2] = 0.1, 1.37, 1.2
        c, g = chunk.cost(zc, True)
        np.testing.assert_allclose(g, fd_jacobian(lambda zz: chunk.cost(zz, False)[0], zc)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("prop", ["mass", "mass_scale"])
def test_kernel_matches_drake_forward_dynamics(prop):
    """The engine's forward dynamics with the outer body's mass a parameter against Drake's: ``mass`` (OpenSim's:
    the central inertia kept) against the plant context with that mass and the same central inertia, ``mass_scale``
    against Drake's ``SetMass`` (mass and inertia scaled together)."""
    from pydrake.multibody.tree import MultibodyForces, SpatialInertia

    model = ml.models.double_pendulum()
    kernel = Kernel(model, [f"/bodyset/b1/{prop}"])
    rng = np.random.default_rng(0)
    Q, U, X = (rng.normal(size=(6, 2)) for _ in range(3))
    A, _ = kernel.forward(Q, U, X, np.array([1.7]))
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    body = plant.GetBodyByName("b1")
    if prop == "mass_scale":
        body.SetMass(ctx, 1.7 * body.default_mass())
    else:
        com = body.default_spatial_inertia().get_com()
        central = body.default_spatial_inertia().Shift(com).CalcRotationalInertia()
        body.SetSpatialInertiaInBodyFrame(ctx, SpatialInertia.MakeFromCentralInertia(1.7, com, central))
    for k in range(6):
        plant.SetPositions(ctx, Q[k])
        plant.SetVelocities(ctx, U[k])
        f = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, f)
        expected = np.linalg.solve(plant.CalcMassMatrix(ctx), X[k] - plant.CalcInverseDynamics(ctx, np.zeros(2), f))
        np.testing.assert_allclose(A[k], expected, rtol=1e-12, atol=1e-12)
    R, _ = kernel.residual(Q, U, A, X, np.array([1.7]))
    np.testing.assert_allclose(R, 0, atol=1e-12)


@pytest.mark.parametrize("scheme", ["trapezoidal", "hermite-simpson"])
def test_solution_satisfies_the_defect_equations(scheme):
    """Check Eq. 7 / Eq. 12 directly on a solved sliding mass (udot = F/m)."""
    sol = ml.examples.sliding_mass_study(2.0, scheme, "explicit", 12).solve()
    t = sol.time
    q, u, x = sol.states["/slider/position/value"], sol.states["/slider/position/speed"], sol.controls["/actuator"]
    a = x / 2.0
    if scheme == "trapezoidal":
        h = np.diff(t)
        np.testing.assert_allclose(q[1:] - q[:-1], h / 2 * (u[1:] + u[:-1]), atol=1e-7)
        np.testing.assert_allclose(u[1:] - u[:-1], h / 2 * (a[1:] + a[:-1]), atol=1e-7)
    else:
        i0, im, i1 = np.arange(0, t.size - 1, 2), np.arange(1, t.size, 2), np.arange(2, t.size, 2)
        h = t[i1] - t[i0]
        np.testing.assert_allclose(q[im], (q[i0] + q[i1]) / 2 + h / 8 * (u[i0] - u[i1]), atol=1e-7)
        np.testing.assert_allclose(q[i1] - q[i0], h / 6 * (u[i0] + 4 * u[im] + u[i1]), atol=1e-7)
        np.testing.assert_allclose(u[i1] - u[i0], h / 6 * (a[i0] + 4 * a[im] + a[i1]), atol=1e-7)
        np.testing.assert_allclose(x[im], (x[i0] + x[i1]) / 2, atol=1e-9)  # midpoint control interpolation


def test_results_do_not_depend_on_chunking():
    a = ml.examples.double_pendulum_study("hermite-simpson", "implicit", 12)
    b = ml.examples.double_pendulum_study("hermite-simpson", "implicit", 12)
    a.solver.chunk_size, b.solver.chunk_size = 1, 100
    sa, sb = a.solve(), b.solve()
    assert sa.objective == pytest.approx(sb.objective, rel=1e-10)
    assert sa.nit == sb.nit


def compliant_muscle_study(mode: str, tendon_mode: str):
    """A 1-dof slider pulled up by one compliant-tendon muscle against gravity (small, for derivative checks)."""
    from moco_lab.modeling.muscle import DeGrooteFregly2016Muscle

    b = ml.ModelBuilder("hanging")
    b.add_body("body", 0.5)
    b.add_slider_joint("ty", "ground", "body", axis=(0, 1, 0), coordinate="ty")
    b.add_muscle(DeGrooteFregly2016Muscle(name="m", max_isometric_force=30.0, optimal_fiber_length=0.1,
                                          tendon_slack_length=0.1, tendon_strain_at_one_norm_force=0.1,
                                          tendon_compliance_dynamics_mode=tendon_mode),
                 [("ground", (0.0, 0.0, 0.0)), ("body", (0.0, 0.0, 0.0))])
    study = ml.Study()
    p = study.problem
    p.set_model(b.build())
    p.set_time_bounds(0, (0.5, 1.0))
    p.set_state_info("/jointset/ty/ty/value", (-0.3, -0.1), -0.2, -0.15)
    p.add_goal(ml.ControlGoal("effort"))
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = 3
    study.solver.chunk_size = 2
    return study


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_implicit_tendon_dynamics_jacobians(mode):
    """Implicit tendon compliance: the derivative is a variable and Moco's residual a constraint."""
    study = compliant_muscle_study(mode, "implicit")
    tr = study.transcribe()
    assert tr.derivative_names[-1] == "/forceset/m/implicitderiv_normalized_tendon_force"
    assert study.problem.state_names()[2:] == ["/forceset/m/activation", "/forceset/m/normalized_tendon_force"]
    rng = np.random.default_rng(3)
    for chunk in tr.chunks:
        z = rng.uniform(0.2, 0.8, chunk.nvar)
        z[0], z[1] = 0.0, 0.7
        B = z[chunk.off:].reshape(chunk.nloc, tr.nb)
        B[:, 0] = rng.uniform(-0.25, -0.15, chunk.nloc)  # muscle length 0.15-0.25 m: fiber near optimal
        val, J = chunk.constraint(z, True)
        Jfd = fd_jacobian(lambda zz: chunk.constraint(zz, False)[0], z, eps=1e-7)
        np.testing.assert_allclose(J, Jfd, rtol=1e-4, atol=1e-5)
        assert val.size == chunk.ndef + chunk.owned.size * tr.na


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_explicit_tendon_dynamics_jacobians(mode):
    """Explicit tendon compliance: the tendon-force derivative from the fiber-velocity inverse, differentiated exactly."""
    study = compliant_muscle_study(mode, "explicit")
    tr = study.transcribe()
    assert not any("implicitderiv" in n for n in tr.derivative_names)
    rng = np.random.default_rng(4)
    for chunk in tr.chunks:
        z = rng.uniform(0.2, 0.8, chunk.nvar)
        z[0], z[1] = 0.0, 0.7
        B = z[chunk.off:].reshape(chunk.nloc, tr.nb)
        # muscle length 0.19-0.22 m: normalized fiber length near 1 (shorter fibers need huge
        # fiber velocities to balance the tendon, where the derivative overflows)
        B[:, 0] = rng.uniform(-0.22, -0.19, chunk.nloc)
        val, J = chunk.constraint(z, True)
        assert np.all(np.abs(val) < 1e4)
        Jfd = fd_jacobian(lambda zz: chunk.constraint(zz, False)[0], z, eps=1e-7)
        np.testing.assert_allclose(J, Jfd, rtol=1e-4, atol=1e-5)


def test_explicit_and_implicit_tendon_kernels_agree():
    """Where w equals the explicit tendon-force derivative, Moco's implicit residual vanishes."""
    from moco_lab.engine.kernel import kernel_for

    ke = kernel_for(compliant_muscle_study("explicit", "explicit").problem.model)
    ki = kernel_for(compliant_muscle_study("explicit", "implicit").problem.model)
    rng = np.random.default_rng(5)
    n = 20
    Q = rng.uniform(-0.22, -0.19, (n, 1))
    U = rng.uniform(-0.5, 0.5, (n, 1))
    X = rng.uniform(0.1, 0.9, (n, 1))
    Z = np.column_stack([rng.uniform(0.1, 0.9, n), rng.uniform(0.2, 1.2, n)])
    fdot = ke.evaluate(Q, U, X, np.zeros(0), Z=Z)["Zd"][:, 1]
    out = ki.evaluate(Q, U, X, np.zeros(0), Z=Z, W=fdot[:, None])
    np.testing.assert_allclose(out["Rw"][:, 0], 0.0, atol=1e-9 * (1 + np.max(np.abs(fdot))))
    np.testing.assert_allclose(out["A"], ke.evaluate(Q, U, X, np.zeros(0), Z=Z)["A"], rtol=1e-12)
