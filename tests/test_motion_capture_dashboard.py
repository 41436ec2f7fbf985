"""The motion-capture pipeline (moco_lab.analysis.motion_capture) and its dashboard panel, from Python (the browser
test drives the same panel in Chromium)."""
from __future__ import annotations

import pytest

from moco_lab.analysis.motion_capture import MotionCaptureSettings, run_motion_capture
from moco_lab.ui.motion_capture import MotionCapturePanel


def test_pipeline_defaults_meet_the_lesson_bounds():
    """Lesson 14's comparison in one call: only masses + kinematics passes the 2 % and 1 % lines; raw IK is far
    off; the markers stay within 1.2× the scaling fit's RMSE; the total mass within 1 %."""
    run = run_motion_capture(MotionCaptureSettings(strides=1))
    f, m = run.percents["masses + kinematics"]
    assert run.joint.success and f < 2 and m < 1
    assert run.percents["raw IK"][0] > 100
    assert all(run.percents[k][0] > 2 for k in ("smoothed", "masses alone"))
    assert run.joint.marker_rmse <= 1.2 * run.scaling.ik.rmse
    assert run.joint.total_mass == pytest.approx(68.0, rel=0.01)
    assert set(run.seconds) >= {"scaling", "joint fit", "total"} and not run.notes


def test_tighter_mass_prior_brings_the_segments_closer():
    """With a 5 % mass prior the fitted segment masses are nearer the subject's than with 20 % (measured: largest
    error 1.1 kg against 6 kg on two strides): the data do not fix the distribution, the prior does."""
    def worst(mass_prior):
        run = run_motion_capture(MotionCaptureSettings(strides=1, mass_prior=mass_prior))
        return max(abs(run.joint.masses[k] - run.true_masses[k]) for k in run.true_masses)

    assert worst(0.05) < worst(0.2)


def test_panel_runs_and_reports(monkeypatch):
    """The panel runs on opening, shows the numbers and three figures, keeps the previous run's joint-fit bars,
    and shows a failed run's error in the panel instead of raising."""
    panel = MotionCapturePanel()
    assert "Solve_Succeeded" in panel.numbers.value and "total mass" in panel.numbers.value
    assert all(out.outputs for out in (panel.out_bars, panel.out_markers, panel.out_figure))
    panel.mass_prior.value = 5.0
    panel.solve()
    assert panel.previous is not None and panel.run.settings.mass_prior == pytest.approx(0.05)
    bars = panel.out_bars.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert "previous run (joint fit)" in bars["data"][0]["x"]
    def fail(settings, progress=None):
        raise ValueError("offset prior too small")

    monkeypatch.setattr("moco_lab.ui.motion_capture.run_motion_capture", fail)
    panel.solve()
    assert "⚠ The run failed" in panel.message.value and "offset prior too small" in panel.message.value
    assert not panel.button.disabled and panel.button.description == "Run"
    assert repr(panel) == "MotionCapturePanel()"
