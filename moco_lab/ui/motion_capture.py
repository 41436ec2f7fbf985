"""The motion-capture dashboard (``widgets/motion_capture.ipynb``): lessons 12–14's pipeline with sliders for the
data's noise and placement error, the fits' prior widths and the smoothing weight; residuals against the gait-lab
lines, marker errors and the fitted model over the true subject."""
from __future__ import annotations

import html
import math

import ipywidgets as W
import numpy as np

from ..analysis.motion_capture import MotionCaptureRun, MotionCaptureSettings, run_motion_capture
from ..solve.optimizer import Progress
from ..util.config import fast_mode
from ..viz.motion_capture import plot_fit_over_truth, plot_marker_errors, plot_residual_bars
from .components import (
    blank_figure,
    group_box,
    html_widget,
    panel_action,
    run_controls,
    show_figure,
    single_action_children,
)

__all__ = ["MotionCapturePanel"]

_STYLE = {"description_width": "150px"}


def _slider(description: str, value: float, lo: float, hi: float, step: float, tooltip: str) -> W.FloatSlider:
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description, tooltip=tooltip,
                         style=_STYLE, layout=W.Layout(width="340px"), continuous_update=False)


class MotionCapturePanel(W.VBox):
    """Dashboard: set the data's noise and the fits' priors, press *Run*, compare the four reconstructions.

    An ``ipywidgets.VBox``: display it in a notebook, or let Voila render the notebook's last expression
    ``MotionCapturePanel()``. Each run makes the synthetic trial (:func:`~moco_lab.analysis.motion_capture.
    run_motion_capture`: one stride under ``MOCO_LAB_FAST=1``, two otherwise), scales and tracks it, and computes
    the residuals of raw inverse kinematics, smoothing alone, masses alone and masses + kinematics (Gauss–Newton,
    its iterations shown while it runs). The previous run's joint-fit residuals stay as an extra pair of bars.

    Parameters
    ----------
    run : bool
        Run once with the default settings when the panel opens (default True).
    """

    def __init__(self, run: bool = True):
        self.noise = _slider("marker noise (mm)", 5.0, 0.0, 15.0, 0.5,
                             "standard deviation of each marker coordinate's measurement noise, every frame")
        self.placement = _slider("placement error (mm)", 5.0, 0.0, 15.0, 0.5,
                                 "where anatomical markers really sit (standard deviation); tracking markers 3×")
        self.offset_prior = _slider("offset prior (mm)", 5.0, 1.0, 30.0, 0.5,
                                    "the scaling fit's prior width on anatomical marker offsets; tracking markers 3×")
        self.mass_prior = _slider("mass prior (%)", 20.0, 2.0, 60.0, 1.0,
                                  "the joint fit's prior width on each segment's mass factor")
        self.smoothing = W.FloatLogSlider(value=100.0, base=10, min=1, max=3.5, step=0.05,
                                          description="smoothing (rad/s²)", style=_STYLE,
                                          layout=W.Layout(width="340px"), continuous_update=False,
                                          tooltip="the joint fit's acceleration prior (sd of q̈): smaller = smoother")
        self.force_noise = _slider("force-plate noise (N)", 2.0, 0.0, 20.0, 0.5,
                                   "noise on each GRF component, every frame (centre of pressure: 1 mm per N)")
        self.seed = W.IntText(value=3, description="seed", style=_STYLE, layout=W.Layout(width="340px"))
        self.button, self.progress, self.numbers, self.message = run_controls("Run")
        self.out_bars, self.out_markers, self.out_figure = W.Output(), W.Output(), W.Output()
        self.header = html_widget(
            "<h2>Motion capture: from markers and forces to a dynamically consistent motion</h2>"
            "<p>A synthetic subject (68 kg, proportions and mass distribution unlike the generic model's) walks; "
            "the lab records 16 markers and one force plate. The pipeline of lessons 12–14: scale the model and "
            "track the markers (one MAP fit), then make the motion agree with the forces four ways: raw inverse "
            "kinematics, <b>smoothing</b> alone (6 Hz), segment <b>masses</b> alone, and <b>masses + "
            "kinematics</b> together (one least-squares fit). The bars show each one's residuals against the lines "
            "gait labs use: 5 % and 2 % of the peak GRF for the force, 1 % of peak GRF × COM height for the "
            "moment.</p>",
            classes=["ml-header"])
        super().__init__(single_action_children(
            self.header, [group_box("Data", self.noise, self.placement, self.force_noise, self.seed),
                          group_box("Priors", self.offset_prior, self.mass_prior, self.smoothing)],
            self.button, self.progress, [self.numbers, self.message, self.out_bars],
            W.HBox([self.out_figure, self.out_markers])))
        self.add_class("ml-panel")
        self.run: MotionCaptureRun | None = None
        self.previous: MotionCaptureRun | None = None
        self.button.on_click(lambda _b: self.solve())
        for out, text in ((self.out_bars, "press Run"), (self.out_markers, ""), (self.out_figure, "")):
            show_figure(out, blank_figure(text, 200))
        if run:
            self.solve()

    def __repr__(self) -> str:  # stable text/plain for nbval (no widget ids, no numbers)
        return "MotionCapturePanel()"

    def settings(self) -> MotionCaptureSettings:
        """The sliders as :class:`~moco_lab.analysis.motion_capture.MotionCaptureSettings`."""
        return MotionCaptureSettings(
            marker_noise=self.noise.value / 1000, placement_error=self.placement.value / 1000,
            offset_prior=self.offset_prior.value / 1000, mass_prior=self.mass_prior.value / 100,
            acceleration_sd=float(self.smoothing.value), force_noise=self.force_noise.value,
            cop_noise=self.force_noise.value / 1000, strides=1 if fast_mode() else 2, seed=int(self.seed.value))

    def _progress(self, p: Progress) -> None:
        self.progress.value = (f"⏳ masses + kinematics (Gauss–Newton): iteration {p.iteration}, "
                               f"objective {p.objective:.4g}")

    def solve(self) -> None:
        """Run the pipeline with the sliders' settings and redraw."""
        with panel_action(self.progress, self.message, self.button, working="synthetic data, scaling and inverse "
                          "kinematics…", busy="Running…", failure="The run failed"):
            run = run_motion_capture(self.settings(), progress=self._progress)
            self.previous, self.run = self.run, run
            self._draw()
            self.progress.value = f"✔ done in {run.seconds['total']:.1f} s"

    def _draw(self) -> None:
        run = self.run
        percents = dict(run.percents)
        if self.previous is not None:
            percents["previous run (joint fit)"] = self.previous.percents["masses + kinematics"]
        bars = plot_residual_bars(percents, title="Residuals of each reconstruction", height=400)
        bars.update_layout(width=880)
        show_figure(self.out_bars, bars)
        markers = plot_marker_errors({"scaling fit (IK)": run.scaling.ik.errors,
                                      "masses + kinematics": run.joint.marker_errors}, run.scaling.ik.names,
                                     height=420)
        markers.update_layout(width=700, legend=dict(orientation="h", y=1.12, x=0))
        show_figure(self.out_markers, markers)
        frame = int(np.argmax(run.walk.forces[:, 1]))
        over = plot_fit_over_truth(run.walk.model, run.true_q[frame], run.scaling.model, run.joint.q[frame],
                                   markers={n: run.trial.data[n][frame] for n in run.trial.data},
                                   title=f"Fitted over true at t = {run.walk.time[frame]:.2f} s (peak GRF)", height=420)
        over.update_layout(width=560, legend=dict(orientation="h", y=-0.15, x=0))
        show_figure(self.out_figure, over)
        j = run.joint
        f, m = run.percents["masses + kinematics"]
        ok = f < 2 and m < 1
        chips = [
            f"<span class='ml-chip {'ml-ok' if j.success else 'ml-fail'}'>{html.escape(j.status)}, "
            f"{j.iterations} iterations</span>",
            f"<span class='ml-chip {'ml-ok' if ok else 'ml-warn'}'>masses + kinematics: force <b>{f:.2f} %</b>, "
            f"moment <b>{m:.2f} %</b></span>",
            f"<span class='ml-chip'>markers RMSE <b>{1000 * j.marker_rmse:.1f}</b> mm "
            f"(IK {1000 * run.scaling.ik.rmse:.1f} mm, ×{j.marker_rmse / run.scaling.ik.rmse:.2f})</span>",
            f"<span class='ml-chip'>total mass <b>{j.total_mass:.2f}</b> kg (subject 68 kg)</span>",
            "<span class='ml-chip'>joint angles vs truth: " + ", ".join(
                f"{k} <b>{v:.2f}°</b>" for k, v in run.angle_rms.items() if k != "masses alone") + "</span>",
            "<span class='ml-chip'>segment masses (kg) fitted / subject: " + ", ".join(
                f"{k} <b>{j.masses[k]:.1f}</b>/{run.true_masses[k]:.1f}" for k in j.masses) + "</span>",
        ]
        if run.settings.acceleration_sd and math.isfinite(run.settings.acceleration_sd):
            chips.append(f"<span class='ml-chip'>smoothing q̈ sd {run.settings.acceleration_sd:.0f} rad/s²</span>")
        self.numbers.value = f"<div class='ml-numbers'>{''.join(chips)}</div>"
        if run.notes:
            self.message.value = "<div class='ml-box ml-box-warn'>" + "<br>".join(
                html.escape(n) for n in run.notes) + "</div>"
