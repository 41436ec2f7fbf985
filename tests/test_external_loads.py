"""OpenSim external-loads files and the net planar ground reaction (moco_lab.results.external_loads); measured loads
applied to a model by the ExternalForce element (moco_lab.modeling.external_loads): interpolation, frames, the engine's
time-dependent inputs in simulation, analysis and collocation."""
from __future__ import annotations

import numpy as np
import pytest

from moco_lab.results.external_loads import (
    external_force_data,
    planar_ground_reaction,
    read_external_loads,
)
from moco_lab.results.sto import read_table, write_table
from moco_lab.util.data import opensim_file


def test_read_the_shipped_external_loads():
    """Moco's testMocoTrack GRF files: two forces (right and left calcaneus) in ground, their columns found."""
    loads = read_external_loads(opensim_file("walk_gait1018_subject01_grf.xml"))
    assert [(f.name, f.applied_to_body) for f in loads.forces] == [("right", "calcn_r"), ("left", "calcn_l")]
    assert loads.datafile == opensim_file("walk_gait1018_subject01_grf.mot")
    time, columns, _ = read_table(loads.datafile)
    parts = external_force_data(loads, columns)
    assert parts["left"]["force"].shape == (1501, 3) and parts["right"]["torque"].shape == (1501, 3)
    with pytest.raises(KeyError, match="no column '1_ground_force_vx'"):
        external_force_data(loads, {k: v for k, v in columns.items() if k != "1_ground_force_vx"})


def test_net_reaction_of_the_shipped_walk():
    """Over the 2.5 s of walking the mean vertical force is the subject's weight (72.6 kg in the model file, the
    sum of its bodies; within 3 %: the trial is not a whole number of gait cycles); the net centre of pressure
    lies on the plates' floor (y = −0.0075 m), between the two plates' own centres of pressure (to 2 cm: the
    free torques move it a little) in every frame where both carry load."""
    import xml.etree.ElementTree as ET

    time, forces, cop = planar_ground_reaction(opensim_file("walk_gait1018_subject01_grf.xml"))
    root = ET.parse(opensim_file("walk_gait1018_subject01.osim")).getroot()
    mass = sum(float(b.findtext("mass")) for b in root.iter("Body"))
    assert mass == pytest.approx(72.6, abs=0.1)
    ok = np.isfinite(forces[:, 1])
    assert ok.mean() > 0.95
    assert np.nanmean(forces[:, 1]) == pytest.approx(mass * 9.80665, rel=0.03)
    assert np.all(cop[ok, 1] == -0.0075)
    _, columns, _ = read_table(opensim_file("walk_gait1018_subject01_grf.mot"))
    x = np.column_stack([columns["ground_force_px"], columns["1_ground_force_px"]])
    loaded = (columns["ground_force_vy"] > 50) & (columns["1_ground_force_vy"] > 50) & ok
    assert loaded.sum() > 100
    assert np.all(cop[loaded, 0] > x[loaded].min(axis=1) - 0.02) and np.all(cop[loaded, 0] < x[loaded].max(axis=1)
                                                                            + 0.02)


def _plates(tmp_path, F1, p1, t1, F2, p2, t2):
    time = np.arange(len(F1)) * 0.01
    cols = {}
    for pre, F, p, t in (("", F1, p1, t1), ("1_", F2, p2, t2)):
        for a, idx in zip("xyz", range(3)):
            cols[f"{pre}ground_force_v{a}"] = F[:, idx]
            cols[f"{pre}ground_force_p{a}"] = p[:, idx]
            cols[f"{pre}ground_torque_{a}"] = t[:, idx]
    write_table(tmp_path / "grf.mot", time, cols)
    xml = opensim_file("walk_gait1018_subject01_grf.xml").read_text().replace(
        "walk_gait1018_subject01_grf.mot", "grf.mot")
    (tmp_path / "grf.xml").write_text(xml)
    return tmp_path / "grf.xml"


def test_net_centre_of_pressure_is_the_point_of_equal_moment(tmp_path):
    """Two plates with forces, centres of pressure and free torques: the net force is their sum, and the net force at
    the net centre of pressure has, about any point of the plane, the moment of the two plates (their forces at
    their points plus their free torques) — checked about two points, to round-off."""
    rng = np.random.default_rng(2)
    T = 50
    F1, F2 = rng.normal([20, 400, 5], [30, 100, 5], (T, 3)), rng.normal([-10, 300, -5], [30, 100, 5], (T, 3))
    p1 = np.column_stack([rng.uniform(0, 1, T), np.zeros(T), rng.uniform(-0.1, 0.1, T)])
    p2 = np.column_stack([rng.uniform(0.5, 1.5, T), np.zeros(T), rng.uniform(-0.1, 0.1, T)])
    t1, t2 = rng.normal(0, 5, (T, 3)), rng.normal(0, 5, (T, 3))
    _, forces, cop = planar_ground_reaction(_plates(tmp_path, F1, p1, t1, F2, p2, t2))
    assert np.allclose(forces, (F1 + F2)[:, :2], atol=1e-9)
    for q in (np.zeros(2), np.array([0.7, 1.1])):
        def moment(F, p):
            return (p[:, 0] - q[0]) * F[:, 1] - (p[:, 1] - q[1]) * F[:, 0]
        plates = moment(F1[:, :2], p1[:, :2]) + moment(F2[:, :2], p2[:, :2]) + t1[:, 2] + t2[:, 2]
        assert np.allclose(moment(forces, cop), plates, atol=1e-9)
    # a frame without vertical force has no centre of pressure
    F1[3, 1], F2[3, 1] = 0.0, 5.0
    _, forces, cop = planar_ground_reaction(_plates(tmp_path, F1, p1, t1, F2, p2, t2))
    assert np.all(np.isnan(forces[3])) and np.all(np.isnan(cop[3])) and np.isfinite(cop[4]).all()
    with pytest.raises(ValueError, match="two different axes"):
        planar_ground_reaction(tmp_path / "grf.xml", forward="y", up="y")


# ----------------------------------------------------------------- the force element in the engine
import moco_lab as ml  # noqa: E402
from moco_lab.engine.kernel import kernel_for  # noqa: E402
from moco_lab.modeling.external_loads import ExternalForce  # noqa: E402

MASS, G = 2.0, 9.81


def _pendulum(*elements):
    """A rod on a pin about z at the origin, its centre of mass 1 m down the rod (body frame (0, −1, 0))."""
    b = ml.ModelBuilder("pendulum", gravity=(0, -G, 0))
    b.add_body("rod", MASS, com=(0, -1, 0), inertia=(0.1, 0.1, 0.1))
    b.add_pin_joint("pin", "ground", "rod", coordinate="theta")
    for e in elements:
        b.add_force_element(e)
    return b.build()


def test_interpolation_is_opensims():
    """One sample: constant; two or three: piecewise linear; four or more: the natural cubic spline through every
    sample (second derivative 0 at both ends), as OpenSim's ExternalForce (checked against OpenSim itself on the
    real force plates in tests/test_osim_opensim.py)."""
    t = np.array([0.0, 0.1, 0.3, 0.4, 0.7])
    F = np.column_stack([np.sin(5 * t), t ** 2, np.ones_like(t)])
    for n in (1, 2, 3, 5):
        e = ExternalForce("/x", "rod", t[:n], F[:n])
        v = e.input_values(t[:n])
        np.testing.assert_allclose(v["/x/force_x"], F[:n, 0], rtol=0, atol=1e-14)  # through every sample
        mid = e.input_values(np.array([0.05]))["/x/force_y"][0]
        expected = {1: 0.0, 2: 0.005, 3: 0.005}.get(n)  # constant t0² = 0; linear between 0 and 0.01
        if expected is not None:
            assert mid == pytest.approx(expected, abs=1e-15)
    spline = ExternalForce("/x", "rod", t, F)
    h = 1e-4
    for end in (t[0], t[-1]):
        v = [spline.input_values(np.array([end + k * h]))["/x/force_x"][0] for k in (-1, 0, 1)]
        assert abs(v[0] - 2 * v[1] + v[2]) / h ** 2 < 1e-6   # natural end: no curvature


def test_frames_points_and_torques_on_a_pendulum():
    """Closed forms on a pendulum at any angle θ (generalized force about the pin, N·m):

    * a force (0, −10, 0) in ground at the ground point (0.5, −1, 0): applied to the rod's material point there,
      its moment about the pin is x·F_y = −5 whatever θ;
    * a force (1, 0, 0) in the rod's frame at the rod point (0, −1, 0): always perpendicular to the rod, moment
      +1;
    * a torque (0, 0, 2) in the rod's frame: +2 (about z, which the rotation keeps)."""
    t = np.array([0.0])
    ground = ExternalForce("/ground_force", "rod", t, [[0.0, -10.0, 0.0]], point=[[0.5, -1.0, 0.0]])
    body = ExternalForce("/body_force", "rod", t, [[1.0, 0.0, 0.0]], point=[[0.0, -1.0, 0.0]],
                         torque=[[0.0, 0.0, 2.0]], force_expressed_in="rod", point_expressed_in="rod")
    theta = np.linspace(-2.5, 2.5, 7)[:, None]
    for element, expected in ((ground, -5.0), (body, 3.0)):
        k = kernel_for(_pendulum(element))
        tau, _ = k.applied(theta, 0 * theta, None, np.zeros((7, 0)), None, E=k.inputs_at(np.zeros(7)))
        np.testing.assert_allclose(tau[:, 0], expected, rtol=0, atol=1e-12)


def test_simulation_and_analysis_see_the_loads():
    """A horizontal pendulum held by a measured upward force m·g at its centre of mass stays horizontal in a
    time-stepping simulation (Drake's Simulator; moved < 1e-9 rad in 0.5 s) and falls without it; ``analyze``
    reports the applied force at the trajectory's times (the data, interpolated)."""
    t = np.array([0.0, 0.25, 0.5, 1.0])
    hold = ExternalForce("/hold", "rod", t, np.tile([0.0, MASS * G, 0.0], (4, 1)), point=np.tile([0, -1.0, 0], (4, 1)),
                         point_expressed_in="rod")
    start = ml.Trajectory(np.linspace(0, 0.5, 6), {"/jointset/pin/theta/value": np.full(6, np.pi / 2),
                                                   "/jointset/pin/theta/speed": np.zeros(6)})
    held = ml.simulate(_pendulum(hold), start)
    assert np.abs(held.states["/jointset/pin/theta/value"] - np.pi / 2).max() < 1e-9
    fallen = ml.simulate(_pendulum(), start)
    assert np.pi / 2 - fallen.states["/jointset/pin/theta/value"][-1] > 0.5
    table = ml.analyze(_pendulum(hold), held, "/hold/force")
    np.testing.assert_allclose(table["/hold/force_y"], MASS * G, rtol=1e-14)


def test_bad_data_and_free_times_are_refused():
    with pytest.raises(ValueError, match=r"force must have shape \(2, 3\)"):
        ExternalForce("/x", "rod", [0.0, 1.0], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="not finite at t = 1 s"):
        ExternalForce("/x", "rod", [0.0, 1.0], [[1.0, 2.0, 3.0], [np.nan, 0.0, 0.0]])
    with pytest.raises(ValueError, match="strictly increasing"):
        ExternalForce("/x", "rod", [1.0, 0.0], [[1.0, 2.0, 3.0]] * 2)
    with pytest.raises(KeyError, match="foot"):
        _pendulum(ExternalForce("/x", "foot", [0.0], [[0.0, 1.0, 0.0]]))
    study = ml.Study()
    study.problem.set_model(_pendulum(ExternalForce("/x", "rod", [0.0, 1.0], [[0.0, 1.0, 0.0]] * 2)))
    study.problem.set_time_bounds(0, (0.5, 1.0))
    study.problem.add_goal(ml.FinalTimeGoal())
    with pytest.raises(ValueError, match=r"time-dependent inputs \(/x/force_x .*Fix both"):
        study.solve()
