"""Model factories and the model-building layer: names, physics, properties."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.engine.kernel import Kernel
from moco_lab.modeling.model import GRAVITY


def accelerations(model, q, u, x):
    kernel = Kernel(model)
    A, _ = kernel.forward(np.atleast_2d(q), np.atleast_2d(u), np.atleast_2d(x), np.zeros(0))
    return A[0]


def test_sliding_mass_is_newton():
    m = ml.models.sliding_mass(mass=2.0)
    assert accelerations(m, [0.3], [1.0], [10.0]) == pytest.approx([5.0])


@pytest.mark.parametrize("variant, sign", [("kirk", -1.0), ("moco_test", 1.0)])
def test_linear_problem_dynamics(variant, sign):
    m = ml.models.linear_problem(variant)
    # udot = sign * u + x
    assert accelerations(m, [0.0], [2.0], [0.5]) == pytest.approx([sign * 2.0 + 0.5])


def test_pendulum_under_gravity():
    m = ml.models.pendulum(mass=1.0, length=1.0, inertia=1.0)
    # horizontal link at rest: (m l² + I) qdd = -m g l
    assert accelerations(m, [0.0], [0.0], [0.0]) == pytest.approx([-GRAVITY / 2])
    # hanging straight down is an equilibrium
    assert accelerations(m, [-np.pi / 2], [0.0], [0.0]) == pytest.approx([0.0], abs=1e-12)


def test_double_pendulum_matches_opensim_values():
    """Reference accelerations read from OpenSim's createDoublePendulum (Simbody), zero torques."""
    m = ml.models.double_pendulum()
    np.testing.assert_allclose(accelerations(m, [0, 0], [0, 0], [0, 0]), [-5.88399, 3.92266], atol=1e-5)
    np.testing.assert_allclose(accelerations(m, [0.3, 0.7], [0, 0], [0, 0]), [-6.17210, 5.88317], atol=1e-5)


def test_model_builder_and_properties():
    b = ml.ModelBuilder("spring_mass", gravity=(0, 0, 0))
    b.add_body("cart", 3.0)
    b.add_slider_joint("rail", "ground", "cart", axis=(1, 0, 0), coordinate="x", range=(-1, 1))
    b.add_spring_generalized_force("/forceset/spring", "x", stiffness=12.0, rest_length=0.5, viscosity=0.0)
    b.add_coordinate_actuator("/forceset/push", "x", optimal_force=2.0, min_control=-1, max_control=1)
    model = b.build()
    assert model.state_names() == ["/jointset/rail/x/value", "/jointset/rail/x/speed"]
    assert model.coordinates[0].range == (-1, 1)
    assert set(model.properties()) == {
        "/bodyset/cart/mass", "/bodyset/cart/mass_scale", "/forceset/spring/stiffness", "/forceset/spring/viscosity",
        "/forceset/spring/rest_length", "/forceset/push/optimal_force"}
    # (3 kg) xdd = -12 (x - 0.5) + 2 * control
    assert accelerations(model, [1.0], [0.0], [1.0]) == pytest.approx([(-6.0 + 2.0) / 3.0])
    with pytest.raises(ValueError, match="Unknown coordinate"):
        b2 = ml.ModelBuilder()
        b2.add_body("a", 1.0)
        b2.add_slider_joint("s", "ground", "a")
        b2.add_coordinate_actuator("/act", "nope")
        b2.build()
    with pytest.raises(ValueError, match="mass must be a finite number >= 0"):
        ml.ModelBuilder().add_body("bad", -1.0)


def test_factory_spec_round_trip():
    m = ml.models.linear_problem("moco_test")
    again = ml.models.from_spec(m.spec)
    # the rebuilt model has the same physics (bodies, joints, forces), and another variant does not
    assert again.description() == m.description()
    assert again.forces[0].viscosity == -1.0
    assert ml.models.from_spec({"factory": "linear_problem", "kwargs": {"variant": "kirk"}}).description() \
        != m.description()
    with pytest.raises(ValueError, match="Unknown model factory"):
        ml.models.from_spec({"factory": "nope"})
    with pytest.raises(ValueError, match="Unknown variant"):
        ml.models.linear_problem("other")
