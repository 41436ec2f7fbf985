"""What lesson 16 and the 3-D walking dashboard compute and draw: activations against EMG envelopes, the pelvis
residuals, the 3-D stick figure. Checked on constructed trajectories whose answers are known by construction."""
import numpy as np
import plotly.graph_objects as go
import pytest

import moco_lab as ml
from moco_lab.analysis.pose import pose
from moco_lab.analysis.walking_3d import EMG_GROUPS, emg_comparison, group_activation, residual_loads
from moco_lab.results.trajectory import Trajectory
from moco_lab.viz.pose3d import animate_3d, plot_pose_3d
from moco_lab.viz.walking_3d import plot_activations_vs_emg, plot_residuals


def _bump(t, centre, width=0.08):
    return np.exp(-((t - centre) / width) ** 2)


def _activations(t, centres: dict) -> Trajectory:
    """Every muscle of every EMG group active as a bump at its group's centre (each muscle of a group scaled
    differently, so that the group mean is a known multiple of the bump)."""
    states = {}
    for g, muscles in EMG_GROUPS.items():
        for k, m in enumerate(muscles):
            states[f"/forceset/{m}/activation"] = 0.2 * (k + 1) * _bump(t, centres[g])
    return Trajectory(t, states)


@pytest.fixture(scope="module")
def emg():
    t = np.linspace(0.0, 2.0, 2001)
    centres = {g: 0.6 + 0.09 * i for i, g in enumerate(EMG_GROUPS)}
    return t, centres, {g: _bump(t, c) for g, c in centres.items()}


def test_group_activation_is_the_mean_of_the_groups_muscles(emg):
    t_emg, centres, _ = emg
    t = np.linspace(0.5, 1.6, 56)
    sol = _activations(t, centres)
    n = len(EMG_GROUPS["gluteus_maximus"])  # three muscles: 0.2, 0.4, 0.6 times the bump, mean 0.4
    at = np.array([0.7, 1.0, 1.3])
    expected = 0.2 * (n + 1) / 2 * _bump(at, centres["gluteus_maximus"])
    # linear interpolation of a smooth bump sampled every 0.02 s: error below h²/8 · max|f''| ≈ 0.02 of its peak
    assert np.allclose(group_activation(sol, "gluteus_maximus", at), expected, atol=0.02 * 0.4)
    assert np.array_equal(group_activation(sol, "soleus"), 0.2 * _bump(t, centres["soleus"]))
    with pytest.raises(KeyError, match="gluteus_maximus"):
        group_activation(sol, "gluteus_maximum")
    with pytest.raises(KeyError, match="no state '/forceset/soleus_r/activation'"):
        group_activation(Trajectory(t, {"x": t}), "soleus")


def test_emg_comparison_correlation_and_peak_timing(emg):
    t_emg, centres, envelopes = emg
    t = np.linspace(0.5, 1.6, 551)
    same = emg_comparison(_activations(t, centres), (t_emg, envelopes))
    assert set(same) == set(EMG_GROUPS)
    for g, c in same.items():  # the same shape, another amplitude: r = 1, the same peak
        assert c.correlation == pytest.approx(1.0, abs=1e-6), g
        assert c.activation_peak_time == pytest.approx(c.emg_peak_time, abs=1e-3) == pytest.approx(centres[g], abs=1e-3)
        assert c.peak_emg == pytest.approx(1.0, abs=1e-6)
    g = "vastus_medius"  # its bump at 1.14 s, the late one at 1.24 s: both far from the window's ends
    late = emg_comparison(_activations(t, {k: c + 0.1 for k, c in centres.items()}), (t_emg, envelopes), [g])
    assert list(late) == [g]
    assert late[g].activation_peak_time - late[g].emg_peak_time == pytest.approx(0.1, abs=2e-3)
    # Pearson's r of two bumps exp(-((t - c)/w)²) shifted by d over a window of length T that holds both:
    # ∫f = w√π, ∫f² = w√(π/2), ∫fg = w√(π/2) exp(-d²/2w²); r = (∫fg/T - (∫f/T)²) / (∫f²/T - (∫f/T)²)
    w, d, T = 0.08, 0.1, 1.1
    f1, f2, fg = w * np.sqrt(np.pi), w * np.sqrt(np.pi / 2), w * np.sqrt(np.pi / 2) * np.exp(-d ** 2 / (2 * w ** 2))
    r = (fg / T - (f1 / T) ** 2) / (f2 / T - (f1 / T) ** 2)
    assert late[g].correlation == pytest.approx(r, abs=2e-3)  # sums at 1 ms for integrals: ~1e-4
    with pytest.raises(ValueError, match="hardly overlap"):
        emg_comparison(_activations(t + 5.0, centres), (t_emg, envelopes))
    with pytest.raises(KeyError, match="EMG envelope"):
        emg_comparison(_activations(t, centres), (t_emg, envelopes), ["soleous"])


def _grounded_box() -> ml.Model:
    b = ml.ModelBuilder("box")
    b.add_body("box", 10.0, inertia=(1, 1, 1))
    b.add_planar_joint("free", "ground", "box")
    return ml.add_residuals(b.build(), 100.0, 20.0, 1.0)


def test_residual_loads_scale_controls_by_optimal_force():
    model = _grounded_box()
    t = np.linspace(0, 1, 11)
    controls = {a.path: np.sin(3 * t + k) for k, a in enumerate(model.actuators)}
    r = residual_loads(model, Trajectory(t, {}, controls))
    assert r.units == {"tx": "N", "ty": "N", "rz": "N·m"}
    for k, a in enumerate(model.actuators):
        assert np.allclose(r.forces[a.coordinate], a.optimal_force * np.sin(3 * t + k), rtol=0, atol=1e-15)
    forces = np.abs(np.concatenate([r.forces["tx"], r.forces["ty"]]))
    assert r.peak_force == pytest.approx(forces.max()) and r.peak_moment == pytest.approx(np.abs(r.forces["rz"]).max())
    assert r.peak_force_percent == pytest.approx(100 * forces.max() / (10.0 * 9.80665), rel=1e-12)
    fig = plot_residuals(model, Trajectory(t, {}, controls))
    assert fig.layout.xaxis.title.text == "time (s)" and fig.layout.yaxis.title.text == "force (N)"
    assert fig.layout.yaxis2.title.text == "moment (N·m)" and len(fig.data) == 3
    with pytest.raises(KeyError, match="no control"):
        residual_loads(model, Trajectory(t, {}, {}))
    plain = ml.models.double_pendulum()
    with pytest.raises(ValueError, match="no actuator whose path starts with '/forceset/residual_'"):
        residual_loads(plain, Trajectory(t, {}, {}))


def test_activations_against_emg_figure(emg):
    t_emg, centres, envelopes = emg
    t = np.linspace(0.5, 1.6, 56)
    fig = plot_activations_vs_emg({"a": _activations(t, centres), "b": _activations(t, centres)},
                                  (t_emg, envelopes))
    assert len(fig.data) == 3 * len(EMG_GROUPS)  # an envelope and two solutions per panel
    assert [a.text for a in fig.layout.annotations][:2] == ["soleus", "gastrocnemius"]
    assert fig.layout.yaxis.title.text == "activation, EMG (–)" and fig.layout.xaxis6.title.text == "time (s)"
    assert min(fig.data[0].x) >= 0.5 and max(fig.data[0].x) <= 1.6  # the envelope over the solutions' range
    with pytest.raises(ValueError, match="at least one solution"):
        plot_activations_vs_emg({})


def test_3d_stick_figure_and_animation():
    model = ml.read_osim("subject_walk_scaled.osim", replace_millard=True)
    fig = plot_pose_3d(model, {"hip_flexion_r": 0.5, "pelvis_ty": 0.95})
    names = [d.name for d in fig.data]
    assert names == ["bones", "joints", "markers", "muscles", "centre of mass", "floor (y = 0)"]
    markers = fig.data[2]
    assert len(markers.x) == 65 and "Head" in markers.text
    head = list(markers.text).index("Head")
    p = pose(model, {"hip_flexion_r": 0.5, "pelvis_ty": 0.95}).markers["Head"]
    assert (markers.x[head], markers.y[head], markers.z[head]) == tuple(p)
    assert fig.layout.scene.xaxis.title.text == "x, forward (m)" and fig.layout.scene.yaxis.title.text == "y, up (m)"
    assert fig.layout.scene.camera.up.y == 1
    assert len(fig.data[3].x) > 100  # geometry paths drawn (the file's muscles have path points)
    t = np.linspace(0, 1, 5)
    states = {c.value_path: np.zeros(5) for c in model.coordinates}
    states["/jointset/ground_pelvis/pelvis_tx/value"] = t
    anim = animate_3d(model, Trajectory(t, states), frames=5)
    assert len(anim.frames) == 5 and isinstance(anim.data[-1], go.Mesh3d)
    assert anim.frames[-1].data[4].x[0] - anim.frames[0].data[4].x[0] == pytest.approx(1.0)  # the COM moved 1 m


def test_mean_activations_and_the_trial_motion():
    """The mean of a known activation (a + b sin(2πt/T) over whole periods: a, by the trapezoidal rule to round-off)
    per muscle, by its name; the trial's motion at the requested frames over exampleMocoInverse's span, the
    patellar coupled coordinates following their knees (the file's LinearFunction: equal)."""
    model = ml.examples.walking_3d_model()
    t = np.linspace(0.0, 2.0, 401)
    states = {f"{m.path}/activation": 0.01 * (k + 1) + 0.3 * np.sin(2 * np.pi * t) for k, m in enumerate(model.muscles)}
    mean = ml.analysis.walking_3d.mean_activations(Trajectory(t, states), model)
    assert len(mean) == 80 and list(mean)[:1] == [model.muscles[0].path.split("/")[-1]]
    for k, m in enumerate(model.muscles):
        assert mean[m.path.split("/")[-1]] == pytest.approx(0.01 * (k + 1), abs=1e-14)
    with pytest.raises(ValueError, match="two times"):
        ml.analysis.walking_3d.mean_activations(Trajectory(t[:1], {n: v[:1] for n, v in states.items()}), model)
    motion = ml.analysis.walking_3d.trial_motion(model, 7)
    assert len(motion.time) == 7 and motion.time[0] == 0.48 and motion.time[-1] == pytest.approx(1.61)
    knee = motion.states["/jointset/walker_knee_r/knee_angle_r/value"]
    assert np.allclose(motion.states["/jointset/patellofemoral_r/knee_angle_r_beta/value"], knee, atol=1e-12)
    assert 0.0 <= knee.min() and knee.max() < 1.4  # a walking knee, radians
