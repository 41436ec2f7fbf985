"""Model geometry at a pose, stick figures and animations, moment arms from the compiled model."""
import math

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.analysis.moment_arms import compiled_moment_arms
from moco_lab.analysis.pose import coordinate_vector, pose
from moco_lab.modeling.path import ConditionalPathPoint
from moco_lab.results.trajectory import Trajectory
from moco_lab.viz.pose import animate, plot_pose


def test_double_pendulum_pose_matches_the_closed_form():
    L, q0, q1 = 1.0, 0.4, -1.1
    p = pose(ml.models.double_pendulum(length=L), {"q0": q0, "q1": q1})
    elbow = np.array([L * math.cos(q0), L * math.sin(q0), 0.0])
    tip = elbow + L * np.array([math.cos(q0 + q1), math.sin(q0 + q1), 0.0])
    assert np.allclose(p.joints["j0"], 0, atol=1e-15) and np.allclose(p.joints["j1"], elbow, atol=1e-15)
    bones = {body: (a, b) for body, a, b in p.bones}
    assert np.allclose(bones["b0"][0], 0, atol=1e-15) and np.allclose(bones["b0"][1], elbow, atol=1e-15)
    assert np.allclose(bones["b1"][1], tip, atol=1e-15)  # a leaf body ends at its centre of mass
    assert np.allclose(p.com, (elbow + tip) / 2, atol=1e-15)  # equal point masses at the body origins
    with pytest.raises(ValueError, match="expected 2 coordinate values"):
        coordinate_vector(ml.models.double_pendulum(), [0.1, 0.2, 0.3])


def test_conditional_points_are_drawn_only_while_active():
    model = ml.read_osim("2D_gait.osim")
    psoas = next(e for e in model.force_elements if e.path == "/iliopsoas_r")
    switch = next(p for p in psoas.geometry.points if isinstance(p, ConditionalPathPoint))
    inside = pose(model, {switch.coordinate: switch.range[1] - 0.1}).muscles["/iliopsoas_r"]
    outside = pose(model, {switch.coordinate: switch.range[1] + 0.1}).muscles["/iliopsoas_r"]
    assert len(inside) == len(psoas.geometry.points) and len(outside) == len(psoas.geometry.points) - 1
    spheres = pose(model).spheres
    assert sorted(spheres) == ["/contactFront_l", "/contactFront_r", "/contactHeel_l", "/contactHeel_r"]
    assert spheres["/contactHeel_r"][1] == pytest.approx(0.035)


def test_compiled_moment_arms_are_minus_the_length_slope():
    """Checked against a central difference of the compiled path length (away from the switches)."""
    model = ml.read_osim("2D_gait.osim")
    knee = np.array([-1.2, -0.6, -0.2])
    names = ["/vasti_r", "/rect_fem_r", "/bifemsh_r"]
    arms = compiled_moment_arms(model, "knee_angle_r", knee, names, pose={"pelvis_ty": 0.94})
    h = 1e-6

    def lengths(values):
        n = len(values)
        states = {c.value_path: (np.asarray(values) if c.name == "knee_angle_r" else
                                 np.full(n, 0.94 if c.name == "pelvis_ty" else 0.0)) for c in model.coordinates}
        states |= {c.speed_path: np.zeros(n) for c in model.coordinates}
        states |= {s: np.full(n, 0.5) for s in model.auxiliary_state_names()}
        tr = Trajectory(np.arange(n, dtype=float), states, {c: np.zeros(n) for c in model.control_names()})
        table = ml.analyze(model, tr, [f"{m}/length" for m in names])
        return {m: table[f"{m}/length"] for m in names}

    up, down = lengths(knee + h), lengths(knee - h)
    for m in names:
        # central difference error ~ h² l''' (1e-12) plus round-off ~ 1e-16 / h (1e-10): 1e-8 m is a safe bound
        assert np.allclose(arms[m], -(up[m] - down[m]) / (2 * h), atol=1e-8), m
    assert np.all(arms["/vasti_r"] > 0) and np.all(arms["/bifemsh_r"] < 0)


def test_stick_figure_and_animation():
    model = ml.models.double_pendulum()
    fig = plot_pose(model, {"q0": 0.3}, title="pendulum")
    assert fig.layout.xaxis.title.text == "x (m)" and fig.layout.yaxis.title.text == "y (m)"
    assert [t.name for t in fig.data] == ["bones", "joints", "muscles", "contact spheres", "centre of mass"]
    t = np.linspace(0, 1, 11)
    traj = Trajectory(t, {"/jointset/j0/q0/value": t, "/jointset/j1/q1/value": -t})
    anim = animate(model, traj, frames=5)
    assert len(anim.frames) == 5 and [s.label for s in anim.layout.sliders[0].steps] == [
        "0.00", "0.25", "0.50", "0.75", "1.00"]
    last = anim.frames[-1].data[0]  # bones at t = 1: the first link at q0 = 1
    assert last.x[1] == pytest.approx(math.cos(1.0)) and last.y[1] == pytest.approx(math.sin(1.0))
    with pytest.raises(KeyError, match="no column"):
        animate(model, Trajectory(t, {"/jointset/j0/q0/value": t}))
