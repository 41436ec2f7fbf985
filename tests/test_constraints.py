"""Kinematic constraints (moco_lab.constraints): φ, G, Ġu, projections, coupling vector.

Analytic checks (parabola bead of Moco's exampleKinematicConstraints, couplers,
a rod on a double pendulum) and finite-difference checks of G and Ġu.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from pydrake.autodiffutils import AutoDiffXd, InitializeAutoDiff
from pydrake.symbolic import Expression, Variable

import moco_lab as ml
from moco_lab.modeling.constraints import (
    CoordinateCouplerConstraint,
    FixedDistanceConstraint,
    HolonomicConstraint,
    PointOnCurveConstraint,
    constraint_bias,
    constraint_jacobian,
    constraint_values,
    coupling_vector,
    project_positions,
    project_speeds,
)


def parabola_model(constraint=None):
    """Moco's parabola bead: massless body on slider tx (x), 1 kg body on slider ty (y); y = x²."""
    b = ml.ModelBuilder("parabola")
    b.add_body("massless", 0.0)
    b.add_body("body", 1.0)
    b.add_slider_joint("tx", "ground", "massless", axis=(1, 0, 0), coordinate="tx", range=(-2, 2))
    b.add_slider_joint("ty", "massless", "body", axis=(0, 1, 0), coordinate="ty", range=(-2, 2))
    b.add_constraint(constraint or PointOnCurveConstraint("parabola", lambda x: x * x, x="tx", y="/jointset/ty/ty"))
    return b.build()


def three_pin_model():
    """Three pins in a chain (coordinates a, b, c), no constraints yet."""
    b = ml.ModelBuilder("chain", gravity=(0, 0, 0))
    parent = "ground"
    for k, name in enumerate("abc"):
        b.add_body(f"B{name}", 1.0, com=(0.5, 0, 0), inertia=(0.1, 0.1, 0.1))
        b.add_pin_joint(f"j{name}", parent, f"B{name}", coordinate=name,
                        parent_offset=(1.0 if k else 0.0, 0, 0))
        parent = f"B{name}"
    return b


def rod_pendulum():
    """Double pendulum (links of 1 m along +x at q = 0) whose tip is tied to a ground point by a rod."""
    model = ml.models.double_pendulum()
    model.add_constraint(FixedDistanceConstraint("rod", "ground", (1.0, -1.5, 0.0), "b1", (0.0, 0.0, 0.0), 1.2))
    return model


def tip(q):
    """Tip (origin of b1) of the double pendulum: links of length 1."""
    return np.array([math.cos(q[0]) + math.cos(q[0] + q[1]), math.sin(q[0]) + math.sin(q[0] + q[1])])


def fd_jacobian(model, q, h=1e-6):
    cols = []
    for k in range(model.nq):
        e = np.zeros(model.nq)
        e[k] = h
        cols.append((constraint_values(model, q + e) - constraint_values(model, q - e)) / (2 * h))
    return np.array(cols).T


def fd_bias(model, q, u, h=1e-6):
    """d/dt (G(q) u) along q̇ = u, by central differences."""
    return (constraint_jacobian(model, q + h * u) @ u - constraint_jacobian(model, q - h * u) @ u) / (2 * h)


# --------------------------------------------------------------------------- names
def test_names_and_model_integration():
    model = parabola_model()
    (c,) = model.constraints
    assert c.path == "/constraintset/parabola" and c.num_equations == 1
    assert model.multiplier_names() == ["/constraintset/parabola/lambda_0"]
    h = HolonomicConstraint("two", lambda q: [q[0], q[1]], 2)
    assert h.multiplier_names() == ["/constraintset/two/lambda_0", "/constraintset/two/lambda_1"]
    # models without constraints are unchanged
    pend = ml.models.double_pendulum()
    assert pend.constraints == [] and pend.multiplier_names() == []
    assert constraint_values(pend, [0.1, 0.2]).shape == (0,)
    assert constraint_jacobian(pend, [0.1, 0.2]).shape == (0, 2)
    np.testing.assert_array_equal(project_speeds(pend, [0.1, 0.2], [1.0, 2.0]), [1.0, 2.0])
    np.testing.assert_array_equal(coupling_vector(pend, [0.1, 0.2], "q1"), [0.0, 1.0])


def test_unknown_names_raise_with_suggestions():
    b = three_pin_model()
    with pytest.raises(KeyError, match="Did you mean.*'b'"):
        b.add_constraint(CoordinateCouplerConstraint("c1", dependent="bb", independent="a"))
    with pytest.raises(KeyError, match="Unknown coordinate 'zz'"):
        b.add_constraint(CoordinateCouplerConstraint("c1", dependent="b", independent=["a", "zz"]))
    with pytest.raises(KeyError, match="Did you mean.*'Bc'"):
        b.add_constraint(FixedDistanceConstraint("rod", "ground", (0, 0, 0), "Bcc", (0, 0, 0), 1.0))
    b.add_constraint(CoordinateCouplerConstraint("c1", dependent="/jointset/jb/b", independent="a"))
    with pytest.raises(ValueError, match="Duplicate constraint name"):
        b.add_constraint(CoordinateCouplerConstraint("c1", dependent="c", independent="a"))
    with pytest.raises(ValueError, match="cannot depend on itself"):
        CoordinateCouplerConstraint("c2", dependent="a", independent="a")
    with pytest.raises(ValueError, match="without '/'"):
        HolonomicConstraint("a/b", lambda q: [q[0]])
    model = b.build()
    with pytest.raises(KeyError, match="Did you mean"):
        model.add_constraint(CoordinateCouplerConstraint("c3", dependent="cc", independent="a"))
    with pytest.raises(KeyError, match="Did you mean"):
        project_positions(model, np.zeros(3), fixed=["aa"])


# ------------------------------------------------------------------- parabola
@pytest.mark.parametrize("x", [-1.0, -0.3, 0.0, 0.7, 1.9])
def test_parabola_analytic(x):
    model = parabola_model()
    y, xd, yd = 0.25, 0.8, -1.3
    q, u = np.array([x, y]), np.array([xd, yd])
    np.testing.assert_allclose(constraint_values(model, q), [y - x * x], atol=1e-15)
    np.testing.assert_allclose(constraint_jacobian(model, q), [[-2 * x, 1.0]], atol=1e-15)
    np.testing.assert_allclose(constraint_bias(model, q, u), [-2 * xd ** 2], rtol=1e-12)
    # projection keeping x: y = x²; coupling vector about tx: (1, 2x)
    qp = project_positions(model, q, fixed=["tx"])
    np.testing.assert_allclose(qp, [x, x * x], atol=1e-12)
    np.testing.assert_allclose(coupling_vector(model, qp, "tx"), [1.0, 2 * x], atol=1e-12)
    if x != 0.0:  # about ty the bead moves 1/(2x) in x per unit y
        np.testing.assert_allclose(coupling_vector(model, qp, "/jointset/ty/ty"), [1 / (2 * x), 1.0], rtol=1e-12)
    else:
        with pytest.raises(ValueError, match="lock"):
            coupling_vector(model, qp, "ty")


def test_parabola_as_coupler_and_as_body_point_agree():
    """Three ways to pose y = x²: coordinates, coupler (OpenSim's exampleKinematicConstraints), body point."""
    m1 = parabola_model()
    m2 = parabola_model(CoordinateCouplerConstraint("parabola", dependent="ty", independent="tx",
                                                    function=lambda x: x ** 2))
    m3 = parabola_model(PointOnCurveConstraint("parabola", lambda x: x * x, body="body"))
    q, u = np.array([0.6, -0.2]), np.array([1.1, 0.4])
    for m in (m2, m3):
        np.testing.assert_allclose(constraint_values(m, q), constraint_values(m1, q), atol=1e-14)
        np.testing.assert_allclose(constraint_jacobian(m, q), constraint_jacobian(m1, q), atol=1e-14)
        np.testing.assert_allclose(constraint_bias(m, q, u), constraint_bias(m1, q, u), atol=1e-12)


# ---------------------------------------------------------------------- couplers
def test_linear_coupler_with_several_independents():
    b = three_pin_model()
    b.add_constraint(CoordinateCouplerConstraint("sum", dependent="c", independent=["a", "b"], ratio=[0.5, -2.0],
                                                 offset=0.1))
    model = b.build()
    q = np.array([0.4, -0.3, 2.0])
    np.testing.assert_allclose(constraint_values(model, q), [2.0 - (0.5 * 0.4 + 2.0 * 0.3 + 0.1)], atol=1e-15)
    np.testing.assert_allclose(constraint_jacobian(model, q), [[-0.5, 2.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(constraint_bias(model, q, [1.0, 2.0, 3.0]), [0.0], atol=1e-14)
    qp = project_positions(model, q, fixed=["a", "b"])
    np.testing.assert_allclose(qp, [0.4, -0.3, 0.5 * 0.4 + 2.0 * 0.3 + 0.1], atol=1e-14)
    # two degrees of freedom remain: the other independent coordinate is held (coupling factor 0, Sherman, Seth & Delp 2013) ...
    np.testing.assert_allclose(coupling_vector(model, qp, "a"), [1.0, 0.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(coupling_vector(model, qp, "b"), [0.0, 1.0, -2.0], atol=1e-12)
    # ... whereas a bare projection of θ̇ = 1 over all speeds (hold_independent=False) lets it move too
    C = coupling_vector(model, qp, "a", hold_independent=False)
    assert abs(C[1]) > 0.1 and abs(constraint_jacobian(model, qp) @ C)[0] < 1e-12 and C[0] == 1.0


def test_nonlinear_coupler_bias():
    b = three_pin_model()
    b.add_constraint(CoordinateCouplerConstraint("sine", dependent="b", independent="a", function=np.sin))
    model = b.build()
    q, u = np.array([0.7, math.sin(0.7), 0.0]), np.array([1.5, -0.2, 0.3])
    np.testing.assert_allclose(constraint_jacobian(model, q), [[-math.cos(0.7), 1.0, 0.0]], atol=1e-15)
    # φ = q_b − sin(q_a): φ̈ = ü_b − cos(q_a) ü_a + sin(q_a) u_a²
    np.testing.assert_allclose(constraint_bias(model, q, u), [math.sin(0.7) * 1.5 ** 2], rtol=1e-12)
    np.testing.assert_allclose(coupling_vector(model, q, "a"), [1.0, math.cos(0.7), 0.0], atol=1e-12)


def test_bias_falls_back_to_finite_differences_for_float_only_functions():
    """A coupler function that rejects symbolic scalars: G by AutoDiff, Ġu by differences of G."""
    b = three_pin_model()
    b.add_constraint(CoordinateCouplerConstraint("poly", dependent="b", independent="a",
                                                 function=lambda x: x ** 3 if not isinstance(x, Expression)
                                                 else (_ for _ in ()).throw(TypeError("floats only"))))
    model = b.build()
    q, u = np.array([0.5, 0.125, 0.0]), np.array([2.0, 0.0, 0.0])
    np.testing.assert_allclose(constraint_jacobian(model, q), [[-3 * 0.25, 1.0, 0.0]], atol=1e-14)
    np.testing.assert_allclose(constraint_bias(model, q, u), [-6 * 0.5 * 4.0], rtol=1e-7)


# ------------------------------------------------------------------ fixed distance
def test_fixed_distance_analytic_and_finite_differences():
    model = rod_pendulum()
    anchor = np.array([1.0, -1.5])
    for q in (np.array([0.3, -1.1]), np.array([-0.9, 0.4]), np.array([1.2, 2.0])):
        p = tip(q)
        dist = np.linalg.norm(p - anchor)
        np.testing.assert_allclose(constraint_values(model, q), [dist - 1.2], atol=1e-14)
        # analytic G = e·∂p/∂q with e the unit vector anchor -> tip
        e = (p - anchor) / dist
        Jp = np.array([[-math.sin(q[0]) - math.sin(q[0] + q[1]), -math.sin(q[0] + q[1])],
                       [math.cos(q[0]) + math.cos(q[0] + q[1]), math.cos(q[0] + q[1])]])
        G = constraint_jacobian(model, q)
        np.testing.assert_allclose(G, [e @ Jp], atol=1e-13)
        np.testing.assert_allclose(G, fd_jacobian(model, q), atol=1e-8)
        u = np.array([0.7, -1.9])
        np.testing.assert_allclose(constraint_bias(model, q, u), fd_bias(model, q, u), rtol=1e-6, atol=1e-8)


def test_projections_on_the_rod_pendulum():
    model = rod_pendulum()
    q = project_positions(model, np.array([0.2, -0.8]), fixed=["q0"])
    assert q[0] == 0.2
    assert abs(constraint_values(model, q)[0]) < 1e-12
    np.testing.assert_allclose(np.linalg.norm(tip(q) - [1.0, -1.5]), 1.2, atol=1e-12)
    # all coordinates free: minimal-norm steps still converge onto the manifold
    q2 = project_positions(model, np.array([0.2, -0.8]))
    assert abs(constraint_values(model, q2)[0]) < 1e-12
    # speeds: G u = 0, and the change is the least-squares (minimum-norm) one: Δu ∈ range(Gᵀ)
    u0 = np.array([1.0, 0.5])
    u = project_speeds(model, q, u0)
    G = constraint_jacobian(model, q)
    assert abs(G @ u)[0] < 1e-12
    du = u - u0
    assert abs(du[0] * G[0, 1] - du[1] * G[0, 0]) < 1e-12  # du parallel to Gᵀ
    uf = project_speeds(model, q, u0, fixed=["q0"])
    assert uf[0] == 1.0 and abs(G @ uf)[0] < 1e-12
    # coupling vector: tangent of the manifold, normalized to q0-dot = 1
    C = coupling_vector(model, q, "q0")
    np.testing.assert_allclose(C, [1.0, -G[0, 0] / G[0, 1]], rtol=1e-12)


def test_projection_failure_is_reported():
    model = rod_pendulum()  # the tip cannot reach 3 m from the anchor
    bad = FixedDistanceConstraint("far", "ground", (0.0, 0.0, 0.0), "b1", (0.0, 0.0, 0.0), 3.0)
    model.add_constraint(bad)
    with pytest.raises(RuntimeError, match="did not converge"):
        project_positions(model, np.array([0.1, 0.1]), max_iterations=20)


# ------------------------------------------------------------------ scalar types
def test_phi_works_for_float_autodiff_and_symbolic():
    model = rod_pendulum()
    model.add_constraint(PointOnCurveConstraint("tip_on_line", lambda x: 0.5 * x - 0.2, body="b1"))
    model.add_constraint(HolonomicConstraint("user", lambda q: [np.sin(q[0]) * q[1], q[0] - 2 * q[1]], 2))
    model.add_constraint(CoordinateCouplerConstraint("cpl", dependent="q1", independent="q0", ratio=-1.5))
    q = np.array([0.4, -0.6])
    q_ad = InitializeAutoDiff(q).ravel()
    qv = [Variable("x0"), Variable("x1")]
    q_sym = np.array([Expression(v) for v in qv])
    for c in model.constraints:
        val = c.phi(q)
        assert val.dtype == float and val.shape == (c.num_equations,)
        ad = c.phi(q_ad)
        assert all(isinstance(e, AutoDiffXd) for e in ad)
        np.testing.assert_allclose([e.value() for e in ad], val, atol=1e-14)
        sym = c.phi(q_sym)
        assert all(isinstance(e, Expression) for e in sym)
        env = dict(zip(qv, q))
        np.testing.assert_allclose([e.Evaluate(env) for e in sym], val, atol=1e-12)
    G = constraint_jacobian(model, q)
    assert G.shape == (5, 2)
    np.testing.assert_allclose(G, fd_jacobian(model, q), atol=1e-8)
    np.testing.assert_allclose(G[2], [math.cos(0.4) * -0.6, math.sin(0.4)], atol=1e-14)
    np.testing.assert_allclose(G[3], [1.0, -2.0], atol=1e-14)
    np.testing.assert_allclose(G[4], [1.5, 1.0], atol=1e-14)
    u = np.array([-0.3, 1.2])
    np.testing.assert_allclose(constraint_bias(model, q, u), fd_bias(model, q, u), rtol=1e-6, atol=1e-8)
    assert model.multiplier_names() == ["/constraintset/rod/lambda_0", "/constraintset/tip_on_line/lambda_0",
                                        "/constraintset/user/lambda_0", "/constraintset/user/lambda_1",
                                        "/constraintset/cpl/lambda_0"]


def test_qdot_must_equal_u():
    """An RpyFloatingJoint has nq == nv but q̇ ≠ u: G = ∂φ/∂q would not be the velocity Jacobian."""
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import RpyFloatingJoint, SpatialInertia

    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("b", SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
    plant.AddJoint(RpyFloatingJoint("float", plant.world_frame(), body.body_frame()))
    plant.Finalize()
    model = ml.Model.from_plant(plant)
    model.add_constraint(HolonomicConstraint("h", lambda q: [q[0] + q[1]]))
    with pytest.raises(ValueError, match="q̇ = u"):
        constraint_jacobian(model, np.array([0.3, 0.4, 0.5, 0, 0, 0]))
