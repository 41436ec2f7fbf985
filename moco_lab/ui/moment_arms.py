"""The moment-arm dashboard (``widgets/moment_arms.ipynb``): drag θ, see the path, the forces and the curves."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import ipywidgets as W
import numpy as np

from ..analysis.moment_arms import METHOD_LABELS, assemble, moment_arm, moment_arm_curves, path_length
from ..modeling import coupled
from ..util.config import fast_mode
from ..viz.moment_arms import draw_configuration, plot_generalized_forces, plot_moment_arm_curves
from .components import PANEL_CSS

if TYPE_CHECKING:
    import ipywidgets as widgets

__all__ = ["MomentArmPanel"]


class MomentArmPanel(W.VBox):
    """Dashboard: drag θ, see the path, the line of action, ``f = JᵀF`` and the curves by each method.

    An ``ipywidgets.VBox``: display it in a notebook, or let Voila render the
    notebook's last expression ``MomentArmPanel()``. Curves (generalized force,
    perturbation, path velocity, and without the coupling vector) are
    computed when the model or muscle changes; the slider only redraws the
    configuration, the generalized forces and the marker on the curves.

    Parameters
    ----------
    model : str, optional
        Label of :attr:`MODELS` to start with (default: the patella knee).
    num_points : int, optional
        Angles per curve (default 61, 25 under ``MOCO_LAB_FAST=1``).
    """

    MODELS = {
        "Textbook: one pin, two-point path": ("single_pin", "elbow_flexion"),
        "Knee with a coupled patella": ("patella_knee", "knee_angle"),
        "Spine: flexion split over 3 joints": ("composite_joint", "flex1"),
    }

    ZOOM = {"single_pin": 0.32, "patella_knee": 0.2, "composite_joint": 0.25}  # half-width of the view (m)

    def __init__(self, model: str | None = None, num_points: int | None = None):
        self._factories = {"single_pin": coupled.single_pin, "patella_knee": coupled.patella_knee,
                           "composite_joint": coupled.composite_joint}
        self.num_points = num_points or (25 if fast_mode() else 61)
        labels = list(self.MODELS)
        self.model_select = W.Dropdown(options=labels, value=model or labels[1], description="model",
                                       layout=W.Layout(width="420px"))
        self.muscle_select = W.Dropdown(options=[], description="muscle")
        self.slider = W.FloatSlider(value=0.0, min=-1, max=1, step=0.01, description="θ (deg)",
                                    continuous_update=True, layout=W.Layout(width="520px"))
        self.numbers = W.HTML()
        self.numbers.add_class("ml-numbers")
        self.out_config, self.out_forces, self.out_curves = W.Output(), W.Output(), W.Output()
        self.header = W.HTML(
            "<h2>Muscle moment arms: OpenSim's generalized-force method</h2>"
            "<p>What is a muscle's moment arm when the joint is not a single pin? OpenSim answers with the "
            "<b>generalized-force method</b> (Sherman, Seth &amp; Delp 2013): find the coupling vector C (the speeds "
            "produced by turning the joint angle θ at unit rate with every constraint satisfied), pull on the "
            "muscle path with a unit tension, map the body forces to generalized forces f = Jᵀ F, and take "
            "<b>r = Cᵀ f</b>. Drag θ; the plots follow.</p>")
        self.header.add_class("ml-header")
        super().__init__([W.HTML(PANEL_CSS), self.header, W.HBox([self.model_select, self.muscle_select]),
                          self.slider, self.numbers, W.HBox([self.out_config, self.out_curves]), self.out_forces])
        self.add_class("ml-panel")
        self._busy = False
        self.model_select.observe(self._on_model, names="value")
        self.muscle_select.observe(self._on_muscle, names="value")
        self.slider.observe(self._on_theta, names="value")
        self._on_model()

    @property
    def widget(self) -> widgets.Widget:
        """The panel itself (an ``ipywidgets.VBox``)."""
        return self

    def __repr__(self) -> str:  # stable text/plain for nbval (no model ids, no numbers)
        return f"MomentArmPanel(model={self.model_select.value!r})"

    # -- helpers
    @staticmethod
    def _show(out, fig) -> None:
        bundle = json.loads(fig.to_json())
        out.outputs = ({"output_type": "display_data", "data": {"application/vnd.plotly.v1+json": bundle},
                        "metadata": {}},)

    def _error(self, err: BaseException) -> None:
        import html

        self.numbers.value = f"<pre class='ml-error'>⚠ {html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>"

    def _on_model(self, change=None) -> None:
        factory, coordinate = self.MODELS[self.model_select.value]
        self._factory = factory
        self.model = self._factories[factory]()
        self.coordinate = self.model.coordinate(coordinate)
        lo, hi = self.coordinate.range
        if factory == "composite_joint":
            lo, hi = -0.6, 0.6
        self.values = np.linspace(lo, hi, self.num_points)
        self._busy = True
        try:
            new_min, new_max = round(float(np.degrees(lo)), 1), round(float(np.degrees(hi)), 1)
            value = 0.0 if lo <= 0 <= hi else round(float(np.degrees(lo + hi) / 2), 1)
            # Widen, move the value, then narrow: the value never leaves the range, so neither the kernel nor
            # the browser clamps it (a browser-side clamp would come back later and overwrite the value).
            with self.slider.hold_sync():
                self.slider.min, self.slider.max = min(self.slider.min, new_min), max(self.slider.max, new_max)
                self.slider.value = value
                self.slider.min, self.slider.max = new_min, new_max
            self.muscle_select.options = [m.name for m in self.model.muscles]
            self.muscle_select.value = self.model.muscles[0].name
        finally:
            self._busy = False
        self._on_muscle()

    def _on_muscle(self, change=None) -> None:
        if self._busy or not self.muscle_select.value:
            return
        try:
            muscle = self.muscle_select.value
            self.curves = {METHOD_LABELS[m]: moment_arm_curves(self.model, [muscle], self.coordinate.path,
                                                               self.values, method=m)[muscle]
                           for m in ("generalized_force", "perturbation", "path_velocity", "no_coupling")}
            self._on_theta()
        except Exception as err:
            self._error(err)

    def _on_theta(self, change=None) -> None:
        if self._busy:
            return
        try:
            theta = float(np.radians(self.slider.value))
            muscle = self.muscle_select.value
            q = np.zeros(self.model.nq)
            q[self.coordinate.q_index] = theta
            q = assemble(self.model, q, self.coordinate.path)
            r = {m: moment_arm(self.model, q, muscle, self.coordinate.path, method=m, assemble_first=False)
                 for m in ("generalized_force", "perturbation", "path_velocity", "no_coupling")}
            fig = draw_configuration(self.model, q, muscle, self.coordinate.path, zoom=self.ZOOM[self._factory])
            fig.update_layout(title=f"{self.model_select.value}: {self.coordinate.name} = {self.slider.value:.1f}°",
                              width=560)
            self._show(self.out_config, fig)
            bars = plot_generalized_forces(self.model, q, muscle, self.coordinate.path)
            bars.update_layout(height=340, width=1180, legend=dict(orientation="v", y=1, x=1.08))
            self._show(self.out_forces, bars)
            curves = plot_moment_arm_curves(self.values, self.curves, theta=theta,
                                            title=f"moment arm of {muscle} about {self.coordinate.name}")
            curves.update_layout(legend=dict(orientation="h", y=-0.2), height=480, width=620)
            self._show(self.out_curves, curves)
            chips = [f"<span class='ml-chip'><b>{muscle}</b> at {self.coordinate.name} = "
                     f"<b>{self.slider.value:.1f}°</b></span>",
                     f"<span class='ml-chip'>path length <b>{100 * path_length(self.model, q, muscle):.2f}</b> cm"
                     "</span>"]
            chips += [f"<span class='ml-chip'>{METHOD_LABELS[m]}: <b>{100 * v:.3f}</b> cm</span>" for m, v in r.items()]
            self.numbers.value = f"<div class='ml-numbers'>{''.join(chips)}</div>"
        except Exception as err:
            self._error(err)
