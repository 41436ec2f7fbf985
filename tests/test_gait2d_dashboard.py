"""The gait2d walking dashboard (``widgets/gait2d_walking.ipynb``): its problem, its shipped warm starts and its
panel driven from Python (about a minute; the browser test is in test_browser.py)."""
from __future__ import annotations

import numpy as np
import pytest

from moco_lab.analysis.gait2d import ground_reaction_forces
from moco_lab.examples.gait2d import winter_gait
from moco_lab.modeling.gait2d import gait2d
from moco_lab.results.trajectory import Trajectory, read_trajectory
from moco_lab.ui import demos
from moco_lab.ui import gait2d_walking as gw
from moco_lab.ui.solve_panel import SolvePanel
from moco_lab.util.data import GAIT2D_PREDICTED_WALK


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("MOCO_LAB_FAST", "1")
    gw._LAST.clear()  # no warm start left over from another test
    yield
    gw._LAST.clear()


@pytest.mark.parametrize("n", sorted(GAIT2D_PREDICTED_WALK))
def test_shipped_warm_starts_are_periodic_walks(n):
    """The files the dashboard starts from are what predicted_walk.md says: converged effort-only predictions of
    one periodic cycle at Winter's speed, with each foot on the ground about 55 % of the cycle and never both
    feet in the air."""
    traj = read_trajectory(GAIT2D_PREDICTED_WALK[n])
    assert traj.metadata["status"] == "Solve_Succeeded"
    assert f"gait2d_prediction_study({n})" in traj.metadata["problem"]
    assert traj.num_times == n + 1  # trapezoidal: one point per mesh point
    model = gait2d()
    g = winter_gait()
    hip_x = model.coordinate("hip_x").value_path
    assert traj.final_time == pytest.approx(g.duration, rel=1e-12)
    assert traj.states[hip_x][-1] - traj.states[hip_x][0] == pytest.approx(g.speed * g.duration, rel=1e-9)
    for name in model.state_names():
        if name != hip_x:  # periodicity is a linear constraint: met to round-off
            assert traj.states[name][-1] == pytest.approx(traj.states[name][0], abs=1e-6), name
    grf = ground_reaction_forces(model, traj)
    on = {s: grf[s][:-1, 1] > 0.05 * model.body_weight() for s in "rl"}
    for s in "rl":
        assert 0.5 < on[s].mean() < 0.65, (s, on[s].mean())
    assert not np.any(~on["r"] & ~on["l"])


def test_stretch_to_speed_scales_the_hip_only():
    t = np.linspace(0.0, 1.0, 11)
    path = "/jointset/ground_trunk/hip_x/value"
    traj = Trajectory(t, {path: 0.2 + 1.5 * t, "/jointset/ground_trunk/hip_x/speed": np.full_like(t, 1.5),
                          "/jointset/knee_r/knee_angle_r/value": np.sin(t)})
    from moco_lab.analysis.walking import stretch_to_speed

    out = stretch_to_speed(traj, path, 0.9)
    assert out.states[path][0] == 0.2 and out.states[path][-1] - out.states[path][0] == pytest.approx(0.9)
    assert np.allclose(out.states["/jointset/ground_trunk/hip_x/speed"], 0.9)
    assert np.array_equal(out.states["/jointset/knee_r/knee_angle_r/value"], np.sin(t))
    assert traj.states[path][-1] == pytest.approx(1.7)  # the input is not changed


def test_settings_build_the_named_problem():
    settings = demos.default_settings("gait2d_walking")
    assert settings["goals"] == {"angles": {"weight": 0.0}, "effort": {"weight": 1.0, "exponent": 2.0}}
    assert settings["mode"] == "implicit" and settings["scheme"] == "trapezoidal" and settings["mesh_intervals"] == 25
    settings.update(speed=1.0, strength_soleus=50.0, warm_start="no")
    study = demos.apply_settings(gw.build_gait2d_walking(settings), settings)
    model = study.problem.model
    normal = gait2d()
    for side in "rl":
        assert model.force_element(f"/forceset/soleus_{side}").max_isometric_force == pytest.approx(
            0.5 * normal.force_element(f"/forceset/soleus_{side}").max_isometric_force)
        assert model.force_element(f"/forceset/vasti_{side}").max_isometric_force == \
            normal.force_element(f"/forceset/vasti_{side}").max_isometric_force
    hip_x = model.coordinate("hip_x").value_path
    info = study.problem.state_info(hip_x)
    assert info.final.lower == info.final.upper == pytest.approx(1.0 * 1.1396)
    guess = study.solver.guess
    assert guess.states[hip_x][-1] - guess.states[hip_x][0] == pytest.approx(1.0 * 1.1396)


@pytest.mark.parametrize("change, culprit", [({"speed": 5.0}, "walking speed"),
                                             ({"strength_soleus": 0.0}, "strength of soleus"),
                                             ({"strength_vasti": -20.0}, "strength of vasti")])
def test_bad_settings_name_the_culprit(change, culprit):
    settings = {**demos.default_settings("gait2d_walking"), **change}
    with pytest.raises(ValueError, match=culprit):
        gw.build_gait2d_walking(settings)


def test_panel_predicts_then_weakens_the_calf():
    """The dashboard opens with a converged prediction (from the shipped warm start); plantarflexors at 70 %
    re-predict from it: the effort and the peak soleus activation rise (lesson 10 finds the same), the previous
    walk stays in the Winter figure, and a bad speed is reported in the panel instead of raised."""
    p = SolvePanel(["gait2d_walking"])
    first = p.solution
    assert first.success, first.message
    assert p.mesh_intervals.value == 25 and set(p.goal_widgets) == {"angles", "effort"}
    assert {"motion", "winter"} <= set(p.figures)
    assert len(p.figures["trajectories"].layout.annotations) == 8  # the right leg's activations
    assert all(k in p.numbers.value for k in ("stance r / l", "double support", "flight", "peak soleus_r"))
    names = {t.name for t in p.figures["winter"].data}
    assert {"Winter mean", "Winter ± 1 SD", "solution"} <= names and "previous" not in names
    assert gw._LAST.latest({}) is first  # the next solve's warm start

    for muscle in ("soleus", "gastrocnemius"):
        p.option_widgets[f"strength_{muscle}"].value = 70.0
    second = p.solve()
    assert second is not None and second.success, p.message.value
    assert second.goal_values["effort"] > first.goal_values["effort"]
    peak = [s.states["/forceset/soleus_r/activation"].max() for s in (first, second)]
    assert peak[1] > peak[0] + 0.02, peak  # measured 0.30 → 0.41
    assert "previous" in {t.name for t in p.figures["winter"].data}

    p.option_widgets["speed"].value = 5.0
    assert p.solve() is None and "walking speed" in p.message.value and p.solution is second
