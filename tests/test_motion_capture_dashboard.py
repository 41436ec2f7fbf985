"""The motion-capture pipeline (moco_lab.analysis.motion_capture) and its dashboard panel, from Python (the browser
test drives the same panel in Chromium)."""
from __future__ import annotations

import pytest

from moco_lab.analysis import motion_capture as mc
from moco_lab.analysis.motion_capture import MotionCaptureSettings
from moco_lab.ui.motion_capture import MotionCapturePanel

#: The pipeline runs the tests need, each computed once (the panel's are the same settings: its defaults, then a
#: 5 % mass prior), keyed by their settings.
_RUNS: list = []


def run_once(settings: MotionCaptureSettings, progress=None):
    """``run_motion_capture(settings)``, computed once per settings for this module (the panel calls it too)."""
    for known, run in _RUNS:
        if known == settings:
            return run
    run = _REAL_RUN(settings, progress=progress)
    _RUNS.append((settings, run))
    return run


_REAL_RUN = mc.run_motion_capture


def test_pipeline_defaults_meet_the_lesson_bounds():
    """Lesson 14's comparison in one call: only masses + kinematics passes the 2 % and 1 % lines; raw IK is far
    off; the markers stay within 1.2× the scaling fit's RMSE; the total mass within 1 %."""
    run = run_once(MotionCaptureSettings(strides=1))
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
        run = run_once(MotionCaptureSettings(strides=1, mass_prior=mass_prior))
        return max(abs(run.joint.masses[k] - run.true_masses[k]) for k in run.true_masses)

    assert worst(0.05) < worst(0.2)


def test_panel_runs_and_reports(monkeypatch):
    """The panel runs on opening, shows the numbers and three figures, keeps the previous run's joint-fit bars,
    and shows a failed run's error in the panel instead of raising. (Its two runs are the module's: the panel's
    settings with the default sliders and with a 5 % mass prior are the two the tests above use.)"""
    monkeypatch.setattr("moco_lab.ui.motion_capture.run_motion_capture", run_once)
    panel = MotionCapturePanel()
    assert panel.run.settings == MotionCaptureSettings(strides=panel.run.settings.strides)  # the sliders' defaults
    assert "Gauss-Newton converged" in panel.numbers.value and "total mass" in panel.numbers.value
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


_REAL_TRIALS: list = []


def real_trial_once(settings=None):
    """``run_real_trial(settings)``, computed once per settings for this module (the panel calls it too)."""
    from moco_lab.analysis.real_trial import RealTrialSettings, run_real_trial

    settings = settings or RealTrialSettings()
    for known, run in _REAL_TRIALS:
        if known == settings:
            return run
    _REAL_TRIALS.append((settings, run_real_trial(settings)))
    return _REAL_TRIALS[-1][1]


def test_real_trial_run_and_settings():
    """The real trial in one call (lesson 17's numbers): IK converged, marker RMS 1.24 cm, pelvis residual on the
    plates 4.5 % RMS of body weight (8.2 % at most), the plates weigh 85.07 kg; without the filter the residual
    grows past 30 % (the marker noise differentiated twice); equal weights lower the plain marker RMS (1.16 cm)."""
    from moco_lab.analysis.real_trial import RealTrialSettings, run_real_trial

    run = real_trial_once()
    assert run.ik.success and run.ik.rmse == pytest.approx(0.0124, abs=5e-4)
    assert run.residual_rms == pytest.approx(4.47, abs=0.1) and run.residual_max == pytest.approx(8.25, abs=0.2)
    assert run.mass.mass == pytest.approx(85.07, abs=0.05)
    # residual reduction (tests/test_id_3d.py checks each step): masses alone 3.4 %, masses and kinematics < 1 %
    assert run.segments.after.summary()["force_rms"] == pytest.approx(3.39, abs=0.1)
    assert run.together.success and run.together.after.summary()["force_rms"] < 1.0
    assert set(run.measured) == set(run.ik.names) and run.measured["R.ASIS"].shape == (238, 3)
    raw = real_trial_once(RealTrialSettings(lowpass_cutoff=None, equal_weights=True))
    assert raw.residual_rms > 30 and raw.ik.rmse < run.ik.rmse
    assert raw.together.success and raw.together.after.summary()["force_rms"] < 1.0  # from the unfiltered motion
    with pytest.raises(ValueError, match="positive frequency"):
        run_real_trial(RealTrialSettings(lowpass_cutoff=-6.0))


def test_real_trial_panel_and_the_two_tabs(monkeypatch):
    """The dashboard's second tab computes when first opened; its numbers, four figures (3-D fit, moments against
    id_walk.sto, residual with the plates' window, the three residual reductions), the frame slider redraws the 3-D
    figure only; a failure shows in the panel."""
    from moco_lab.ui.real_trial import MotionCaptureDashboard

    monkeypatch.setattr("moco_lab.ui.real_trial.run_real_trial", real_trial_once)  # the module's run, computed once
    dashboard = MotionCaptureDashboard(run=False)
    assert dashboard.titles == ("Synthetic subject", "Real 3-D trial")
    real = dashboard.real
    assert real.run is None and not real.out_fit.outputs and real.progress.value == "press Compute"
    dashboard.selected_index = 1
    assert real.run is not None and "85.07" in real.numbers.value and "4.5 %" in real.numbers.value
    assert "4.5 → 3.4 %" in real.numbers.value and "masses and kinematics together: RMS <b>0.7 %" in real.numbers.value
    reduction = real.out_reduction.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert [d["name"].split(" (RMS")[0] for d in reduction["data"]][::2] == ["the model's masses", "fitted masses",
                                                                             "masses and kinematics"]
    fig = real.out_fit.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert fig["layout"]["title"]["text"] == "Pose and markers at t = 1.00 s"
    moments = real.out_moments.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert [d["name"] for d in moments["data"]][:2] == ["moco_lab", "id_walk.sto"]
    before = real.out_moments.outputs
    real.frame.value = 0.5
    assert real.out_fit.outputs[0]["data"]["application/vnd.plotly.v1+json"]["layout"]["title"]["text"] == \
        "Pose and markers at t = 0.50 s" and real.out_moments.outputs == before
    real.filter.value = False
    assert real.cutoff.disabled and real.settings().lowpass_cutoff is None
    real.weights.value = "equal"
    assert real.settings().equal_weights

    def fail(settings):
        raise ValueError("no force plates")

    monkeypatch.setattr("moco_lab.ui.real_trial.run_real_trial", fail)
    real.solve()
    assert "⚠ The computation failed" in real.message.value and "no force plates" in real.message.value
    assert repr(dashboard) == "MotionCaptureDashboard()" and repr(real) == "RealTrialPanel()"
