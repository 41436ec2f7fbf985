"""The 2-D walking dashboard (``widgets/walking_2d.ipynb``): its problem, its shipped warm starts and its panel driven
from Python (the browser test is in test_browser.py)."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.analysis.walking_2d import walking_2d_summary
from moco_lab.ui import demos
from moco_lab.ui import walking_2d as w2
from moco_lab.ui.solve_panel import SolvePanel
from moco_lab.util.data import WALKING_2D_PREDICTED


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("MOCO_LAB_FAST", "1")
    w2._LAST.clear()  # no warm start left over from another test
    yield
    w2._LAST.clear()


@pytest.mark.parametrize("n", sorted(WALKING_2D_PREDICTED))
def test_shipped_warm_starts_are_symmetric_walks(n):
    """The files the dashboard starts from are what predicted_walk.md says: converged predictions of half a
    symmetric gait cycle at 1.2 m/s on Hermite–Simpson meshes of n intervals, judged feasible by the problem."""
    traj = ml.read_trajectory(WALKING_2D_PREDICTED[n])
    assert traj.metadata["status"] == "Solve_Succeeded"
    assert f"num_mesh_intervals={n}" in traj.metadata["problem"]
    assert traj.num_times == 2 * n + 1
    model = ml.examples.walking_2d_model()
    assert walking_2d_summary(model, traj).speed == pytest.approx(1.2, abs=1e-4)
    e = ml.examples.walking_2d_prediction(num_mesh_intervals=n).evaluate(traj)
    assert e.constraint_violation < 1e-4, e.worst_constraint   # the solver's tolerance
    # the stored objective is IPOPT's, whose effort integral is a variable tied to the trajectory's integral by a
    # constraint met to the tolerance 1e-4: the two agree to that (measured 9e-6)
    assert e.objective == pytest.approx(traj.metadata["objective"], rel=1e-4)


def test_settings_build_the_named_problem():
    settings = demos.default_settings("walking_2d")
    assert settings["goals"]["effort"] == {"weight": 10.0, "exponent": 3.0}
    assert settings["mode"] == "explicit" and settings["scheme"] == "hermite-simpson"
    assert settings["mesh_intervals"] == 15 and settings["tolerance"] == 1e-4
    settings.update(speed=1.5, muscle="soleus", strength=50.0, warm_start="no")
    study = demos.apply_settings(w2.build_walking_2d(settings), settings)
    model = study.problem.model
    normal = ml.examples.walking_2d_model()

    def fmax(m, path):
        return m.force_element(path).properties()["max_isometric_force"]

    for side in "rl":
        assert fmax(model, f"/soleus_{side}") == pytest.approx(0.5 * fmax(normal, f"/soleus_{side}"))
        assert fmax(model, f"/vasti_{side}") == fmax(normal, f"/vasti_{side}")
    assert study.problem.get_goal("speed").desired_average_speed == 1.5
    tx = model.coordinate("pelvis_tx").value_path
    guess = study.solver.guess
    assert (guess.states[tx][-1] - guess.states[tx][0]) / guess.final_time == pytest.approx(1.5, rel=1e-9)


@pytest.mark.parametrize("bad, match", [({"speed": 3.0}, "speed"), ({"muscle": "deltoid"}, "muscle"),
                                        ({"strength": 0.0}, "strength")])
def test_bad_settings_name_the_culprit(bad, match):
    settings = {**demos.default_settings("walking_2d"), **bad}
    with pytest.raises(ValueError, match=match):
        w2.build_walking_2d(settings)


def test_panel_predicts_and_weakens_a_muscle():
    """The panel opens with a converged prediction (from the shipped warm start); the soleus at 50 % re-predicts
    from it (the previous solution becomes the guess): the gastrocnemius works harder for the push-off, the previous
    walk stays dashed in the data figure, and a bad setting is reported in the panel instead of raised."""
    p = SolvePanel(["walking_2d"])
    first = p.solution
    assert first.success, first.message
    assert p.mesh_intervals.value == 15 and "effort" in p.goal_widgets
    assert {"motion", "data"} <= set(p.figures)
    assert len(p.figures["trajectories"].layout.annotations) == 9  # the right leg's activations
    assert all(k in p.numbers.value for k in ("step", "double support", "peak vertical GRF",
                                               "peak soleus_r activation"))
    assert "previous" not in {t.name for t in p.figures["data"].data}
    assert w2._LAST.latest({}) is first  # the next solve's warm start

    p.option_widgets["strength"].value = 50.0
    second = p.solve()
    assert second is not None and second.success, p.message.value
    gastroc = [float(np.max(s.states["/gastroc_r/activation"])) for s in (first, second)]
    print("peak gastrocnemius activation, normal and weak soleus:", gastroc)
    assert gastroc[1] > gastroc[0]
    assert "previous" in {t.name for t in p.figures["data"].data}

    p.option_widgets["speed"].value = 5.0
    assert p.solve() is None and "walking speed" in p.message.value and p.solution is second
