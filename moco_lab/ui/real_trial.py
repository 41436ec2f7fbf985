"""The motion-capture dashboard's second tab (``widgets/motion_capture.ipynb``): the real walking trial of Moco's 3-D
example (lesson 17) — inverse kinematics with the trial's task file or equal weights, inverse dynamics with or without
the low-pass filter, the pelvis residual on the force plates, the mass the plates weigh, the segment masses fitted
to the residual and the masses and kinematics adjusted together — and the dashboard itself,
the synthetic pipeline and the real trial as two tabs."""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from ..analysis.real_trial import PLATES, RealTrialRun, RealTrialSettings, run_real_trial
from ..results.sto import read_table
from ..util.data import opensim_file
from ..viz.inverse_dynamics import plot_generalized_forces, plot_residual_percent, plot_root_residuals
from ..viz.pose3d import plot_marker_fit_3d
from .components import (
    group_box,
    html_widget,
    panel_action,
    run_controls,
    show_figure,
    single_action_children,
)
from .motion_capture import MotionCapturePanel

__all__ = ["RealTrialPanel", "MotionCaptureDashboard"]

_STYLE = {"description_width": "150px"}
_WIDE = {"width": "340px"}
_JOINTS = ("hip_flexion_r", "knee_angle_r", "ankle_angle_r")
MODEL_MASS = 85.27  #: kg, the model file's total mass (AddBiomechanics' fit of this subject)


class RealTrialPanel(W.VBox):
    """The real trial: choose the marker weights and the filter, press *Compute*; move the frame slider to see the
    fitted model against the markers at another instant.

    Parameters
    ----------
    run : bool
        Compute once with the default settings when the panel opens (default True).
    """

    def __init__(self, run: bool = True):
        self.weights = W.ToggleButtons(options=["task file", "equal"], value="task file", description="marker weights",
                                       style={**_STYLE, "button_width": "90px"},
                                       tooltip="the IK task file's weights (pelvis 20, knees/ankles/heels 10, ...) "
                                               "or every marker 1")
        self.filter = W.Checkbox(value=True, description="low-pass filter the angles", style=_STYLE, layout=_WIDE,
                                 indent=False)
        self.cutoff = W.FloatSlider(value=6.0, min=2.0, max=15.0, step=0.5, description="cut-off (Hz)",
                                    style=_STYLE, layout=W.Layout(**_WIDE), continuous_update=False,
                                    tooltip="zero-lag Butterworth before inverse dynamics (OpenSim's tool)")
        self.frame = W.FloatSlider(value=1.0, min=0.0, max=2.37, step=0.01, description="frame shown (s)",
                                   style=_STYLE, layout=W.Layout(**_WIDE), continuous_update=False)
        self.button, self.progress, self.numbers, self.message = run_controls("Compute")
        self.out_fit, self.out_moments, self.out_residual = W.Output(), W.Output(), W.Output()
        self.out_reduction = W.Output()
        self.header = html_widget(
            "<h2>A real walking trial: inverse kinematics and inverse dynamics in 3-D</h2>"
            "<p>The trial Moco's 3-D example was built from: 41 markers at 100 Hz and two force plates, on the "
            "full-body model fitted to this subject. Inverse kinematics finds each frame's pose (the model's markers "
            "blue, the measured red, the error lines between them); inverse dynamics the joint moments that make the "
            "motion under the measured ground forces, against the trial's own <code>id_walk.sto</code>; the pelvis's "
            "residual force says how far markers, model and plates disagree (shaded: the frames on the plates), the "
            "plates weigh the subject, and residual reduction adjusts the segment masses, then masses and poses "
            "together, until motion and plates agree.</p>", classes=["ml-header"])
        super().__init__(single_action_children(
            self.header, [group_box("Inverse kinematics", self.weights),
                          group_box("Inverse dynamics", self.filter, self.cutoff), group_box("Show", self.frame)],
            self.button, self.progress, [self.numbers, self.message, self.out_residual, self.out_reduction],
            W.HBox([self.out_fit, self.out_moments])))
        self.add_class("ml-panel")
        self.run: RealTrialRun | None = None
        self.button.on_click(lambda _b: self.solve())
        self.filter.observe(lambda ch: setattr(self.cutoff, "disabled", not ch["new"]), names="value")
        self.frame.observe(lambda _ch: self._draw_fit(), names="value")
        self.progress.value = "press Compute"  # no placeholder figures: the panel may open in a hidden tab
        if run:
            self.solve()

    def __repr__(self) -> str:  # stable text/plain for nbval (no widget ids, no numbers)
        return "RealTrialPanel()"

    def settings(self) -> RealTrialSettings:
        """The controls as :class:`~moco_lab.analysis.real_trial.RealTrialSettings`."""
        return RealTrialSettings(lowpass_cutoff=float(self.cutoff.value) if self.filter.value else None,
                                 equal_weights=self.weights.value == "equal")

    def solve(self) -> None:
        """Run IK, inverse dynamics and the mass fit with the controls' settings and redraw."""
        with panel_action(self.progress, self.message, self.button, working="inverse kinematics (238 frames), "
                          "inverse dynamics, mass fits, residual reduction…", busy="Computing…",
                          failure="The computation failed"):
            self.run = run_real_trial(self.settings())
            self._draw()
            self.progress.value = f"✔ done in {self.run.seconds['total']:.1f} s"

    def _draw_fit(self) -> None:
        run = self.run
        if run is None:
            return
        k = int(np.argmin(np.abs(run.time - self.frame.value)))
        fig = plot_marker_fit_3d(run.model, run.ik.q[k], {n: v[k] for n, v in run.measured.items()},
                                 title=f"Pose and markers at t = {run.time[k]:.2f} s", height=480)
        fig.update_layout(width=560)
        show_figure(self.out_fit, fig)

    def _draw(self) -> None:
        run = self.run
        s = run.settings
        t_walk, walk, _ = read_table(opensim_file("id_walk.sto"))
        moments = plot_generalized_forces(run.dynamics, list(_JOINTS), columns=1, reference=(
            t_walk, {n: walk[f"{n}_moment"] for n in _JOINTS}), reference_label="id_walk.sto",
            title="Right leg joint moments", height=520)
        moments.update_layout(width=620, legend=dict(orientation="h", y=-0.08, x=0))
        show_figure(self.out_moments, moments)
        residual = plot_residual_percent(run.dynamics, run.model.body_weight(), window=PLATES,
                                         title="Pelvis residual force (off the plates: the body weight)", height=360)
        residual.update_layout(width=760)
        show_figure(self.out_residual, residual)
        reduction = plot_root_residuals({"the model's masses": run.segments.before,
                                         "fitted masses": run.segments.after,
                                         "masses and kinematics": run.together.after},
                                        title="Residual reduction on the plates", height=560)
        reduction.update_layout(width=760)
        show_figure(self.out_reduction, reduction)
        self._draw_fit()
        ok = run.residual_rms < 5
        before, after = run.segments.before.summary()["force_rms"], run.segments.after.summary()["force_rms"]
        bound = run.segments.at_bounds
        together = run.together.after.summary()["force_rms"]
        chips = [
            f"<span class='ml-chip {'ml-ok' if run.ik.success else 'ml-fail'}'>IK "
            f"{'converged' if run.ik.success else 'not converged'} in every frame</span>",
            f"<span class='ml-chip'>markers RMS <b>{100 * run.ik.rmse:.2f}</b> cm, largest "
            f"{100 * run.ik.max_error:.1f} cm ({html.escape('equal' if s.equal_weights else 'task-file')} "
            "weights)</span>",
            f"<span class='ml-chip {'ml-ok' if ok else 'ml-warn'}'>pelvis residual on the plates: RMS "
            f"<b>{run.residual_rms:.1f} %</b>, largest {run.residual_max:.0f} % of body weight</span>",
            f"<span class='ml-chip'>filter "
            f"{'off' if s.lowpass_cutoff is None else f'{s.lowpass_cutoff:g} Hz'}</span>",
            f"<span class='ml-chip'>the plates weigh <b>{run.mass.mass:.2f}</b> kg (model {MODEL_MASS} kg)</span>",
            f"<span class='ml-chip'>segment masses fitted to the residual: RMS <b>{before:.1f} → {after:.1f} %</b>"
            + (f" (on a bound, ×{run.segments.scales[bound[0]]:.1f}: {html.escape(', '.join(bound))} — the masses "
               "absorb errors of the kinematics)" if bound else "") + "</span>",
            f"<span class='ml-chip {'ml-ok' if together < 2 else 'ml-warn'}'>masses and kinematics together: RMS "
            f"<b>{together:.1f} %</b>, markers {100 * run.together.marker_rmse:.2f} cm RMS</span>",
        ]
        self.numbers.value = f"<div class='ml-numbers'>{''.join(chips)}</div>"


class MotionCaptureDashboard(W.Tab):
    """The motion-capture dashboard: the synthetic subject's pipeline (lessons 12–14) and the real trial (lesson 17)
    as two tabs; the real trial computes when its tab is first opened.

    Parameters
    ----------
    run : bool
        Run the synthetic pipeline when the dashboard opens (default True).
    """

    def __init__(self, run: bool = True):
        self.synthetic = MotionCapturePanel(run=run)
        self.real = RealTrialPanel(run=False)
        super().__init__(children=[self.synthetic, self.real],
                         titles=("Synthetic subject", "Real 3-D trial"))
        self.observe(self._opened, names="selected_index")

    def _opened(self, change: dict) -> None:
        if change["new"] == 1 and self.real.run is None:
            self.real.solve()

    def __repr__(self) -> str:  # stable text/plain for nbval
        return "MotionCaptureDashboard()"
