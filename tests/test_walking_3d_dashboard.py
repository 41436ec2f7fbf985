"""The 3-D walking dashboard (moco_lab.ui.walking_3d) and the run behind it (moco_lab.analysis.walking_3d.
run_walking_3d), from Python; the browser test drives the same panel in Chromium. Fast mode (0.05 s mesh)."""
from __future__ import annotations

import pytest

from moco_lab.analysis.walking_3d import STRENGTH_GROUPS, Walking3dSettings, run_walking_3d
from moco_lab.ui.walking_3d import NO_GROUP, Walking3dPanel
from moco_lab.util.config import mesh

CALVES = "calves (soleus, gastrocnemius)"


@pytest.fixture(scope="module")
def panel():
    return Walking3dPanel()


def test_panel_opens_solved_with_the_trial_drawn(panel):
    assert "Solve_Succeeded" in panel.numbers.value and "excitation_effort" in panel.numbers.value
    assert "EMG correlation r: SOL" in panel.numbers.value and "pelvis residual force" in panel.numbers.value
    model_fig = panel.out_model.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert model_fig["layout"]["scene"]["yaxis"]["title"]["text"] == "y, up (m)" and model_fig["frames"]
    emg = panel.out_emg.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert sum(1 for t in emg["data"] if t["name"] == "EMG envelope") == 10
    assert repr(panel) == "Walking3dPanel()" and panel.settings() == Walking3dSettings(mesh_interval=mesh(0.02, 0.05))


def test_weaker_calves_work_harder_and_the_previous_solve_stays(panel):
    """Calves at 50 % (both legs; the model lesson 16's worked solutions solve too): the effort grows by about a
    third and the soleus' and medial gastrocnemius' mean activations rise most (measured: +0.12 and +0.05)."""
    effort0 = panel.run.result.solution.goal_values["excitation_effort"]
    panel.group.value, panel.strength.value = CALVES, 50.0
    panel.solve()
    run = panel.run
    assert run.settings.group == CALVES and run.settings.strength == 0.5 and panel.previous is not None
    assert 1.2 < run.result.solution.goal_values["excitation_effort"] / effort0 < 1.45
    assert "largest changes in mean activation" in panel.numbers.value and "soleus_" in panel.numbers.value
    emg = panel.out_emg.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    previous = [t for t in emg["data"] if t["name"].startswith("previous")]
    assert len(previous) == 10 and all(t["line"]["dash"] == "dot" for t in previous)
    assert any("calves at 50 %" in t["name"] for t in emg["data"])
    panel.group.value, panel.strength.value = NO_GROUP, 100.0


def test_emg_tracking_weight_and_a_failure_shown_in_the_panel(panel, monkeypatch):
    """EMG weight 10: the gastrocnemius follows its envelope (measured r 0.77 → 0.95) for a few percent more
    effort; a failed solve is reported in the panel, the button comes back."""
    panel.emg_weight.value = 10.0
    panel.solve()
    run = panel.run
    assert "emg_tracking" in run.result.solution.goal_values and run.emg["gastrocnemius"].correlation > 0.9
    assert "emg_tracking" in panel.numbers.value

    def fail(settings, progress=None):
        raise RuntimeError("IPOPT stopped without a solution: Maximum_Iterations_Exceeded")

    monkeypatch.setattr("moco_lab.ui.walking_3d.run_walking_3d", fail)
    panel.solve()
    assert "⚠ The solve failed" in panel.message.value and "Maximum_Iterations_Exceeded" in panel.message.value
    assert not panel.button.disabled and panel.button.description == "Solve"


def test_bad_settings_are_refused_by_name():
    with pytest.raises(KeyError, match="calves"):
        run_walking_3d(Walking3dSettings(group="calfs"))
    with pytest.raises(ValueError, match="emg_weight must be >= 0"):
        run_walking_3d(Walking3dSettings(emg_weight=-1.0))
    assert all(len(muscles) >= 3 for muscles in STRENGTH_GROUPS.values())
