"""The 3-D walking dashboard (``widgets/walking_3d.ipynb``): Moco's exampleMocoInverse with a learner's changes —
effort exponent, EMG-tracking weight, one muscle group's strength — and what they do to the activations against
the subject's EMG, the reserves and the pelvis residuals; the trial drawn in 3-D; the Moco paper's knee load
(moco_lab's stored solutions on the model's geometry paths)."""
from __future__ import annotations

import html
from typing import Callable

import ipywidgets as W
import numpy as np

from ..analysis.walking_3d import (
    STRENGTH_GROUPS,
    Walking3dRun,
    Walking3dSettings,
    run_walking_3d,
    solve_knee_load,
    trial_motion,
)
from ..examples.walking_3d import (
    WALKING_3D_KNEE_LOAD,
    KneeLoadResult,
    walking_3d_knee_load_results,
    walking_3d_model,
)
from ..solve.optimizer import Progress
from ..util.config import mesh
from ..viz.pose3d import animate_3d
from ..viz.walking_3d import plot_activations_vs_emg, plot_knee_load
from .components import (
    blank_figure,
    error_box,
    group_box,
    html_widget,
    panel_action,
    run_controls,
    show_figure,
    single_action_children,
)

__all__ = ["Walking3dPanel"]

_STYLE = {"description_width": "150px"}
_WIDE = {"width": "340px"}
NO_GROUP = "none (the model as it is)"
#: The knee-load weights a learner can choose (on each knee's goal; the Moco paper's 0.005).
KNEE_WEIGHTS = [("0 (minimum effort)", 0.0), ("0.001", 0.001), ("0.002", 0.002), ("0.005 (the paper's)", 0.005),
                ("0.01", 0.01), ("0.02", 0.02)]
#: Short names of the EMG groups for the numbers line (the figure's panels give them in full).
_SHORT = {"soleus": "SOL", "gastrocnemius": "GAS", "tibialis_anterior": "TA", "medial_hamstrings": "MH",
          "biceps_femoris": "BF", "vastus_lateralis": "VL", "vastus_medius": "VM", "rectus_femoris": "RF",
          "gluteus_maximus": "GMAX", "gluteus_medius": "GMED"}


def _ipopt_progress(line: W.HTML) -> Callable[[Progress], None]:
    """A ``progress`` callback that writes IPOPT's iteration and objective into the progress ``line``."""
    def show(p: Progress) -> None:
        line.value = f"⏳ IPOPT: iteration {p.iteration}, objective {p.objective:.5g}"
    return show


class Walking3dPanel(W.VBox):
    """Dashboard: change the effort exponent, the EMG-tracking weight or a muscle group's strength, press *Solve*,
    compare the activations with the EMG and with the previous solve.

    An ``ipywidgets.VBox``: display it in a notebook, or let Voila render the notebook's last expression
    ``Walking3dPanel()``. Each solve is :func:`~moco_lab.analysis.walking_3d.run_walking_3d` on Moco's mesh (0.02 s;
    0.05 s under ``MOCO_LAB_FAST=1``); its IPOPT iterations are shown while it runs.

    Parameters
    ----------
    run : bool
        Solve once with the example's settings when the panel opens (default True).
    """

    def __init__(self, run: bool = True):
        self.exponent = W.Dropdown(options=[("2 (Moco's)", 2.0), ("3", 3.0), ("4", 4.0)], value=2.0,
                                   description="effort exponent", style=_STYLE, layout=W.Layout(**_WIDE))
        self.emg_weight = W.FloatSlider(value=0.0, min=0.0, max=100.0, step=5.0, description="EMG weight",
                                        style=_STYLE, layout=W.Layout(**_WIDE), continuous_update=False,
                                        tooltip="weight of the EMG-tracking goal on the right soleus, gastrocnemius "
                                                "and tibialis anterior (0: none; Moco's example: 50)")
        self.hessian = W.Dropdown(options=[("limited-memory (Moco's)", "limited-memory"), ("exact", "exact")],
                                  value="limited-memory", description="Hessian", style=_STYLE,
                                  layout=W.Layout(**_WIDE))
        self.group = W.Dropdown(options=[NO_GROUP, *STRENGTH_GROUPS], value=NO_GROUP, description="muscle group",
                                style=_STYLE, layout=W.Layout(**_WIDE))
        self.strength = W.FloatSlider(value=100.0, min=25.0, max=200.0, step=25.0, description="strength (%)",
                                      style=_STYLE, layout=W.Layout(**_WIDE), continuous_update=False,
                                      tooltip="the group's maximum isometric force, both legs, in % of the model's")
        self.button, self.progress, self.numbers, self.message = run_controls("Solve")
        self.out_emg, self.out_model = W.Output(), W.Output()
        self.header = html_widget(
            "<h2>Muscle activity in 3-D walking (Moco's exampleMocoInverse)</h2>"
            "<p>The subject's measured motion is prescribed on the full-body model (31 coordinates, 80 muscles); the "
            "optimizer finds the muscle activity that reproduces it under the measured ground forces with the least "
            "summed excitation<sup>p</sup>. Change the <b>effort exponent</b>, make four right-leg muscles follow "
            "their <b>EMG</b>, or weaken a <b>muscle group</b>, press <b>Solve</b>, and compare the activations "
            "(lines) with the subject's EMG envelopes (grey) and with the previous solve (dotted). A strength other "
            "than 100 % derives that model's equations on its first solve (about a second more). The <b>exact "
            "Hessian</b> (Newton's method instead of Moco's quasi-Newton one) solves the EMG tracking in a few "
            "seconds instead of half a minute.</p>",
            classes=["ml-header"])
        self.knee_button = W.Button(description="Show the stored study", layout=W.Layout(width="200px"),
                                    tooltip="moco_lab's stored solutions without and with the paper's knee-load goals")
        self.knee_weight = W.Dropdown(options=KNEE_WEIGHTS, value=WALKING_3D_KNEE_LOAD["weight"],
                                      description="knee-load weight", style=_STYLE, layout=W.Layout(**_WIDE))
        self.knee_solve_button = W.Button(description="Minimize with this weight", layout=W.Layout(width="200px"),
                                          tooltip="exampleMocoInverse on the geometry paths with this weight on each "
                                                  "knee's goal (0: minimum effort alone)")
        self.knee_progress, self.knee_numbers, self.out_knee = html_widget(classes=["ml-progress"]), html_widget(), \
            W.Output()
        self.knee_result: KneeLoadResult | None = None
        knee = W.VBox([html_widget(
            "<h3>The knee's load (the Moco paper)</h3><p>Minimizing the knee's joint reaction needs the muscles' "
            "pull on the bones: the model's <b>geometry paths</b> wrapping over their cylinders (with the "
            "function-based paths above, the knee's reaction does not depend on the muscles). <b>Show the stored "
            "study</b> draws moco_lab's own solutions, stored with their provenance: minimum effort, and with the "
            "paper's knee-load goals (weight 0.005 on each knee's front–back and axial force). <b>Minimize with this "
            "weight</b> solves the problem again with the weight you choose and draws it beside them; the first such "
            "solve derives the wrapped paths' equations (about 22 s on 2 cores), later ones take about 17 s."
            "</p>"), W.HBox([self.knee_button, self.knee_weight, self.knee_solve_button]),
            self.knee_progress, self.knee_numbers, self.out_knee])
        super().__init__(single_action_children(
            self.header, [group_box("Goal", self.exponent, self.emg_weight),
                          group_box("Model", self.group, self.strength), group_box("Solver", self.hessian)],
            self.button, self.progress, [self.numbers, self.message, self.out_model], W.VBox([self.out_emg, knee])))
        self.add_class("ml-panel")
        self.run: Walking3dRun | None = None
        self.previous: Walking3dRun | None = None
        self.button.on_click(lambda _b: self.solve())
        self.knee_button.on_click(lambda _b: self.show_knee_load())
        self.knee_solve_button.on_click(lambda _b: self.solve_knee_load())
        show_figure(self.out_emg, blank_figure("press Solve", 200))
        self._draw_model()
        if run:
            self.solve()

    def __repr__(self) -> str:  # stable text/plain for nbval (no widget ids, no numbers)
        return "Walking3dPanel()"

    def settings(self) -> Walking3dSettings:
        """The controls as :class:`~moco_lab.analysis.walking_3d.Walking3dSettings`."""
        group = None if self.group.value == NO_GROUP else self.group.value
        return Walking3dSettings(effort_exponent=float(self.exponent.value), emg_weight=float(self.emg_weight.value),
                                 group=group, strength=self.strength.value / 100.0,
                                 mesh_interval=mesh(0.02, 0.05), hessian=self.hessian.value)


    def _draw_model(self) -> None:
        """The trial on the model, animated (the motion is prescribed: the same for every solve)."""
        try:
            model = walking_3d_model()
            trial = trial_motion(model, mesh(30, 8))
            fig = animate_3d(model, trial, frames=len(trial.time), title="The trial (prescribed), 3-D: drag to rotate",
                             height=480)
            fig.update_layout(width=620)
            show_figure(self.out_model, fig)
        except Exception as err:  # shown, never swallowed silently
            self.message.value = error_box("The model could not be drawn", err)

    def solve(self) -> None:
        """Solve with the controls' settings and redraw."""
        with panel_action(self.progress, self.message, self.button, working="posing the problem…", busy="Solving…",
                          failure="The solve failed"):
            run = run_walking_3d(self.settings(), progress=_ipopt_progress(self.progress))
            self.previous, self.run = self.run, run
            self._draw()
            self.progress.value = f"✔ solved in {run.seconds:.1f} s"

    def show_knee_load(self) -> None:
        """Draw the stored knee-load study (and this panel's own knee-load solve, if any): both knees' reaction over
        the trial, the peaks, the effort, and the muscles whose activation changes most."""
        try:
            results = walking_3d_knee_load_results()
            basic, knee = results["basic"], results["knee"]
            curves = {"minimum effort (stored)": basic, "knee load minimized, weight 0.005 (stored)": knee}
            chips = []
            if self.knee_result is not None:
                weight = self.knee_result.provenance["weight"]
                curves[f"this solve (weight {weight:g})"] = self.knee_result
                knee = self.knee_result
            fig = plot_knee_load(curves)
            fig.update_layout(width=900)
            show_figure(self.out_knee, fig)
            if self.knee_result is not None:
                p = self.knee_result.provenance
                chips.append(f"<span class='ml-chip ml-ok'>{html.escape(str(p['status']))}, {p['iterations']} "
                             f"iterations, {p['seconds']:.0f} s (mesh {p['mesh_interval']:g} s)</span>")
            label = "stored minimum effort → " + ("this solve" if self.knee_result is not None else "stored knee load")
            for joint in WALKING_3D_KNEE_LOAD["joints"]:
                chips.append(f"<span class='ml-chip'>{joint[-1]} knee peak <b>{basic.peak_knee_force(joint):.1f} → "
                             f"{knee.peak_knee_force(joint):.1f}</b> body weights</span>")
            effort = [float(r.provenance["excitation_effort"]) for r in (basic, knee)]
            chips.append(f"<span class='ml-chip'>effort <b>{effort[0]:.2f} → {effort[1]:.2f}</b></span>")
            t = basic.time
            change = {m: float(np.mean(np.interp(t, knee.time, knee.activations[m])) - np.mean(basic.activations[m]))
                      for m in basic.activations}
            top = sorted(change, key=lambda m: -abs(change[m]))[:6]
            chips.append("<span class='ml-chip'>largest changes in mean activation: " + ", ".join(
                f"{m.rsplit('/', 1)[-1]} <b>{change[m]:+.2f}</b>" for m in top) + "</span>")
            self.knee_numbers.value = (f"<div class='ml-numbers'><span class='ml-chip'>{label}</span>"
                                       f"{''.join(chips)}</div>")
        except Exception as err:  # shown, never swallowed silently
            self.message.value = error_box("The knee-load results could not be shown", err)

    def solve_knee_load(self) -> None:
        """Solve the knee-load problem with the chosen weight (Moco's mesh; 0.05 s under ``MOCO_LAB_FAST=1``) and
        draw it beside the stored study."""
        with panel_action(self.knee_progress, self.message, self.knee_solve_button,
                          working="deriving the geometry paths' equations (the first time: a few seconds)…",
                          busy="Solving…", failure="The knee-load solve failed"):
            self.knee_result = solve_knee_load(float(self.knee_weight.value), mesh_interval=mesh(0.02, 0.05),
                                               progress=_ipopt_progress(self.knee_progress))
            self.show_knee_load()
            self.knee_progress.value = f"✔ solved in {self.knee_result.provenance['seconds']:.1f} s"

    def _describe(self, run: Walking3dRun) -> str:
        s = run.settings
        parts = [f"p = {s.effort_exponent:g}"]
        if s.emg_weight:
            parts.append(f"EMG weight {s.emg_weight:g}")
        if s.group is not None and s.strength != 1.0:
            parts.append(f"{s.group.split(' (')[0]} at {100 * s.strength:.0f} %")
        if s.hessian != "limited-memory":
            parts.append(f"{s.hessian} Hessian")
        return ", ".join(parts)

    def _draw(self) -> None:
        run = self.run
        sol = run.result.solution
        solutions = {f"this solve ({self._describe(run)})": sol}
        if self.previous is not None:
            solutions[f"previous ({self._describe(self.previous)})"] = self.previous.result.solution
        fig = plot_activations_vs_emg(solutions)
        if len(fig.data) and self.previous is not None:
            for trace in fig.data:
                if trace.name and trace.name.startswith("previous"):
                    trace.line.dash = "dot"
        fig.update_layout(width=1100)
        show_figure(self.out_emg, fig)
        share = max(r.share for r in run.result.reserve_report())
        goals = ", ".join(f"{k} <b>{v:.3f}</b>" for k, v in sol.goal_values.items() if k != "initial_activation")
        chips = [
            f"<span class='ml-chip {'ml-ok' if sol.success else 'ml-fail'}'>{html.escape(sol.status)}, "
            f"{sol.nit} iterations ({html.escape(run.settings.hessian)} Hessian)</span>",
            f"<span class='ml-chip'>{goals}</span>",
            "<span class='ml-chip' title='" + html.escape(", ".join(f"{v} = {k.replace('_', ' ')}"
                                                                    for k, v in _SHORT.items()), quote=True)
            + "'>EMG correlation r: " + " ".join(
                f"{_SHORT.get(g, g)} <b>{c.correlation:.2f}</b>" for g, c in run.emg.items()) + "</span>",
            f"<span class='ml-chip {'ml-ok' if share < 0.05 else 'ml-warn'}'>largest reserve share "
            f"<b>{100 * share:.1f} %</b> of its joint's need</span>",
            f"<span class='ml-chip'>pelvis residual force up to <b>{run.residuals.peak_force_percent:.1f} %</b> of "
            f"body weight</span>",
        ]
        if self.previous is not None:
            change = {m: run.mean_activation[m] - self.previous.mean_activation[m] for m in run.mean_activation}
            top = sorted(change, key=lambda m: -abs(change[m]))[:4]
            chips.append("<span class='ml-chip'>largest changes in mean activation since the previous solve: "
                         + ", ".join(f"{m} <b>{change[m]:+.2f}</b>" for m in top) + "</span>")
        self.numbers.value = f"<div class='ml-numbers'>{''.join(chips)}</div>"
        if share >= 0.05:
            self.message.value = ("<div class='ml-box ml-box-warn'>The reserves carry 5 % or more of a joint's "
                                  "moment: the muscles are too weak for this motion (see the reserve report in "
                                  "lesson 16).</div>")
