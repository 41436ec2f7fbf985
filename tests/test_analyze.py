"""Model outputs along trajectories (``ml.analyze``), their units and plots, and time stepping with contact.

Independent references: Drake's own centre-of-mass kinematics, Newton's law for
a ball resting on the floor, the activation state a muscle's output must echo.
"""
import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.units import coordinate_motion, unit_of

SPHERE = dict(stiffness=1e6, dissipation=2.0, static_friction=0.8, dynamic_friction=0.8, viscous_friction=0.5,
              transition_velocity=0.2)


def ball_model(mass=2.0, radius=0.05):
    """A ball on a planar joint (x, y, angle) with one contact sphere against the floor y = 0."""
    b = ml.ModelBuilder("ball", gravity=(0, -9.81, 0))
    b.add_body("ball", mass, inertia=(0.01, 0.01, 0.01))
    b.add_planar_joint("free", "ground", "ball", coordinates=("x", "y", "angle"))
    b.add_force_element(ml.SmoothSphereHalfSpaceForce("/forceset/contact", "ball", (0, 0, 0), radius, **SPHERE))
    model = b.build()
    model.add_force_element(ml.CoordinateActuator("/forceset/push", "x", 10.0))
    return model


def ball_trajectory(model, y0, times, x_speed=0.0):
    states = {c.value_path: np.zeros(times.size) for c in model.coordinates}
    states.update({c.speed_path: np.zeros(times.size) for c in model.coordinates})
    states["/jointset/free/y/value"][:] = y0
    states["/jointset/free/x/speed"][:] = x_speed
    return ml.Trajectory(times, states, {"/forceset/push": np.zeros(times.size)})


def test_ball_settles_on_the_floor_with_its_weight_on_the_contact():
    # Dropped from 2 cm above contact, the damped Hunt-Crossley contact must end up carrying m g (Newton,
    # ball at rest); 1.5 s is many contact periods (stiffness ~ 1e6 with a 2 kg ball: ~100 Hz).
    model = ball_model()
    t = np.linspace(0, 1.5, 16)
    sim = ml.simulate(model, ball_trajectory(model, 0.07, t), accuracy=1e-6)
    table = ml.analyze(model, sim, [".*normal_force", "/forceset/contact/force", "/com_velocity"])
    fn = table["/forceset/contact/normal_force"]
    assert fn[0] < 0.01  # in the air (the smoothing leaves ~2 mN at 2 cm)
    np.testing.assert_allclose(fn[-1], 2.0 * 9.81, rtol=2e-3)  # settled: the floor carries the weight
    np.testing.assert_allclose(table["/forceset/contact/force_y"][-1], 2.0 * 9.81, rtol=2e-3)
    assert abs(table["/com_velocity_y"][-1]) < 1e-3
    assert table.units["/forceset/contact/normal_force"] == "N" and table.units["/com_velocity_y"] == "m/s"


def test_com_outputs_match_drake():
    model = ml.models.n_link_pendulum(3, mass=1.3)
    rng = np.random.default_rng(3)
    t = np.linspace(0, 1, 5)
    states = {}
    for c in model.coordinates:
        states[c.value_path] = rng.uniform(-2, 2, t.size)
        states[c.speed_path] = rng.uniform(-2, 2, t.size)
    traj = ml.Trajectory(t, states, {n: np.zeros(t.size) for n in model.control_names()})
    table = ml.analyze(model, traj, ["/com_position", "/com_velocity"])
    plant = model.plant
    ctx = plant.CreateDefaultContext()
    for k in range(t.size):
        q = np.zeros(plant.num_positions())
        v = np.zeros(plant.num_velocities())
        for c in model.coordinates:
            q[c.q_index] = states[c.value_path][k]
            v[c.v_index] = states[c.speed_path][k]
        plant.SetPositions(ctx, q)
        plant.SetVelocities(ctx, v)
        p = plant.CalcCenterOfMassPositionInWorld(ctx)
        vc = plant.CalcCenterOfMassTranslationalVelocityInWorld(ctx)
        for i, axis in enumerate("xyz"):
            assert table[f"/com_position_{axis}"][k] == pytest.approx(p[i], abs=1e-12)
            assert table[f"/com_velocity_{axis}"][k] == pytest.approx(vc[i], abs=1e-12)


def test_muscle_outputs_echo_the_trajectory():
    # the outputs see the trajectory's columns in the right places: activation and excitation come back as given
    model = ml.models.suspended_mass()
    t = np.linspace(0, 1, 7)
    rng = np.random.default_rng(0)
    states = {c.value_path: rng.uniform(-0.1, 0.1, t.size) for c in model.coordinates}
    states.update({c.speed_path: rng.uniform(-0.1, 0.1, t.size) for c in model.coordinates})
    states.update({n: rng.uniform(0.1, 0.9, t.size) for n in model.auxiliary_state_names()})
    controls = {n: rng.uniform(0.1, 0.9, t.size) for n in model.control_names()}
    traj = ml.Trajectory(t, states, controls)
    table = ml.analyze(model, traj, "/forceset/.*/(activation|excitation|tendon_force)")
    for name in model.auxiliary_state_names():
        np.testing.assert_array_equal(table[name], states[name])
    for name in model.control_names():
        np.testing.assert_array_equal(table[f"{name}/excitation"], controls[name])
    # more activation at the same kinematics: more tendon force in every muscle
    more = ml.Trajectory(t, {**states, **{n: states[n] + 0.05 for n in model.auxiliary_state_names()}}, controls)
    table2 = ml.analyze(model, more, ".*tendon_force")
    forces = [n for n in table.names if n.endswith("tendon_force")]
    assert len(forces) == 3
    for n in forces:
        assert np.all(table2[n] > table[n]), n


def test_analyze_names_what_is_wrong():
    model = ball_model()
    traj = ball_trajectory(model, 0.1, np.linspace(0, 1, 3))
    with pytest.raises(KeyError, match="normal_force"):
        ml.analyze(model, traj, "/forceset/contact/normal_forc")  # suggestion offered
    with pytest.raises(ValueError, match="regular expression"):
        ml.analyze(model, traj, "(unclosed")
    missing = ml.Trajectory(traj.time, {"/jointset/free/x/value": traj.states["/jointset/free/x/value"]},
                            traj.controls)
    with pytest.raises(KeyError, match="states"):
        ml.analyze(model, missing, "/com_position")
    assert "/forceset/contact/indentation" in ml.analysis.output_names(model)


def test_units_of_variables_and_outputs():
    model = ball_model()
    assert coordinate_motion(model, "angle") == "rotational" and coordinate_motion(model, "x") == "translational"
    assert unit_of(model, "/jointset/free/angle/value") == "rad"
    assert unit_of(model, "/jointset/free/angle/speed") == "rad/s"
    assert unit_of(model, "/jointset/free/y/accel") == "m/s²"
    assert unit_of(model, "/forceset/push") == ""
    assert unit_of(model, "/forceset/push/actuation") == "N"
    assert unit_of(model, "/forceset/contact/point_y") == "m"
    pend = ml.models.pendulum()
    assert unit_of(pend, "/tau0/actuation") == "N·m"
    assert unit_of(pend, "/nonexistent") is None


def test_plot_outputs_labels_axes_with_units():
    model = ball_model()
    sim = ml.simulate(model, ball_trajectory(model, 0.07, np.linspace(0, 0.3, 7)), accuracy=1e-5)
    table = ml.analyze(model, sim, ["/forceset/contact/normal_force", "/com_position"])
    fig = ml.plot_outputs([table, table], labels=["a", "b"])
    assert len(fig.data) == 2 * 4
    titles = [fig.layout[f"yaxis{k if k > 1 else ''}"].title.text for k in range(1, 5)]
    assert titles == ["(N)", "(m)", "(m)", "(m)"]
    assert fig.layout.xaxis3.title.text == "time (s)"
    with pytest.raises(KeyError):
        ml.plot_outputs(table, ["/com_position"])  # vector outputs are plotted by component


def test_inverse_sees_the_contact_force():
    # A ball held still: in the air the y reserve must carry its whole weight; resting at the height where the
    # contact balances gravity (found by time stepping), the contact carries it and the reserve ~ nothing.
    from moco_lab.tools.inverse import Inverse

    model = ball_model()
    sim = ml.simulate(model, ball_trajectory(model, 0.07, np.linspace(0, 1.5, 4)), accuracy=1e-6)
    y_rest = float(sim.states["/jointset/free/y/value"][-1])
    weight = 2.0 * 9.81
    t = np.linspace(0, 0.2, 11)
    for y, expected in ((0.3, weight), (y_rest, 0.0)):
        kin = (t, {"/jointset/free/x/value": 0 * t, "/jointset/free/y/value": y + 0 * t,
                   "/jointset/free/angle/value": 0 * t})
        result = Inverse(model, kin, reserves_optimal_force=1.0, mesh_interval=0.05).solve()
        assert result.success
        reserve = next(f for p, f in result.reserve_forces.items() if "/y" in p or p.endswith("_y"))
        np.testing.assert_allclose(reserve, expected, atol=5e-3 * weight)
        np.testing.assert_allclose(result.net_generalized_forces["y"], expected, atol=5e-3 * weight)
