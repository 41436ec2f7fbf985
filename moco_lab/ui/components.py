"""The dashboards' building blocks: shared constants, small widgets and figure helpers, the panels' base class.

:class:`~moco_lab.ui.solve_panel.SolvePanel` and :class:`~moco_lab.ui.convergence_panel.ConvergencePanel` are
built from these, and so are the other dashboards' panels (``moco_lab.ui.moment_arms``,
``moco_lab.ui.motion_capture``). Plots are rendered by assigning a plotly bundle to ``Output.outputs``
(:func:`show_figure`: no ``FigureWidget``, no ``with out: fig.show()``), which is reliable in Voila and under
nbclient/nbval. Every error is reported inside the panel (:class:`PanelBase` shows it); a
failed or mis-configured action never raises out of a button click.
"""
from __future__ import annotations

import contextlib
import html
import json
import math
import time as _time
import traceback
from typing import Callable, Iterable, Iterator, Mapping

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from ..engine.collocation import CLASSICAL_SCHEMES, DYNAMICS_MODES
from ..engine.settings import SolverSettings
from ..results.trajectory import Solution
from ..solve.optimizer import IPOPT_STATUS_EXPLANATIONS, status_level
from .demos import (
    DemoProblem,
    Option,
    get_demo_problem,
)

#: The schemes the panels offer: the Moco paper's two (the default first) and one of each pseudospectral family
#: (any of Moco's ``legendre-gauss(-radau)-k`` works in code: ``study.solver.transcription_scheme``).
SCHEMES = tuple(sorted(CLASSICAL_SCHEMES, key=lambda s: s != SolverSettings().transcription_scheme)) + (
    "legendre-gauss-3", "legendre-gauss-radau-3")
OPTIMIZERS = ("ipopt", "snopt")
#: Tolerance choices offered by the panels (label, value); ``None`` keeps the optimizer's defaults.
TOLERANCES = (("optimizer default", None), ("1e-2", 1e-2), ("1e-3", 1e-3), ("1e-4", 1e-4), ("1e-6", 1e-6),
              ("1e-8", 1e-8), ("1e-10", 1e-10))
DEFAULT_CHOICE = "default"  # dropdown value standing for None (an ipywidgets Dropdown cannot select None)
#: Hessian choices offered by the panels (label, ``SolverSettings.optim_hessian_approximation``); the first keeps
#: the problem's own choice.
HESSIANS = (("problem's choice", DEFAULT_CHOICE), ("limited-memory (Moco's)", "limited-memory"),
            ("exact (IPOPT)", "exact"))


def tolerance_value(value: str | float) -> float | None:
    """The tolerance a dropdown's value stands for (``DEFAULT_CHOICE``: None, the optimizer's default)."""
    return None if value == DEFAULT_CHOICE else float(value)


def hessian_value(value: str) -> str | None:
    """The Hessian approximation a dropdown's value stands for (``DEFAULT_CHOICE``: None, the problem's own)."""
    return None if value == DEFAULT_CHOICE else value


SCHEME_LABELS = {"trapezoidal": "trapezoidal", "hermite-simpson": "Hermite–Simpson",
                 "legendre-gauss-3": "Legendre–Gauss 3", "legendre-gauss-radau-3": "Legendre–Gauss–Radau 3"}
SCHEME_COLORS = {"trapezoidal": "#1f77b4", "hermite-simpson": "#d62728", "legendre-gauss-3": "#2ca02c",
                 "legendre-gauss-radau-3": "#9467bd"}
METRIC_DASH = {"states": "solid", "controls": "dash", "objective": "dot", "final_time": "solid"}
METRIC_SYMBOL = {"states": "circle", "controls": "square", "objective": "diamond", "final_time": "circle"}


def status_badge(solution: Solution) -> str:
    """HTML chip of a solve's status: green converged, amber acceptable level or limit reached, red failed.

    The amber and red chips carry a one-line explanation as a tooltip (``title``).
    """
    level = status_level(solution.status, solution.success)
    status = html.escape(solution.status)
    why = html.escape(IPOPT_STATUS_EXPLANATIONS.get(solution.status, ""), quote=True)
    if level == "converged":
        return f"<span class='ml-chip ml-ok'>✔ {status}</span>"
    if level == "warning":
        return f"<span class='ml-chip ml-warn' title='{why}'>⚑ {status}</span>"
    return f"<span class='ml-chip ml-fail' title='{why}'>✖ FAILED: {status}</span>"


# ================================================================ helpers
#: The dashboards' shared style sheet (panels, sidebars, chips, message boxes, tables).
PANEL_CSS = """
<style>
.ml-panel { font-family: var(--jp-ui-font-family, system-ui, sans-serif); }
.ml-header h2 { margin: 4px 0 2px 0; font-size: 1.45em; font-weight: 600; }
.ml-header p { margin: 2px 0 6px 0; color: #444; max-width: 1100px; line-height: 1.35; }
.ml-sidebar { background: #f7f8fa; border: 1px solid #dfe3e8; border-radius: 8px; padding: 6px 10px 10px 10px; }
.ml-group { border-bottom: 1px solid #e4e7eb; padding-bottom: 4px; margin-bottom: 2px; }
.ml-group-title { font-weight: 600; color: #2b4a6f; font-size: 0.95em; text-transform: uppercase;
                  letter-spacing: 0.04em; margin-top: 2px; }
.ml-hint { color: #666; font-size: 0.85em; line-height: 1.3; }
.ml-goal { margin: 4px 0 0 2px; font-size: 0.92em; }
.ml-numbers { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.ml-chip { background: #eef2f7; border-radius: 12px; padding: 2px 10px; font-size: 0.92em; white-space: nowrap; }
.ml-chip b { color: #1d3557; }
.ml-ok { background: #d9f2e3; color: #135c2f; font-weight: 600; }
.ml-fail { background: #fbd9d9; color: #8a1111; font-weight: 700; }
.ml-warn { background: #fdecc8; color: #7a4a00; font-weight: 700; }
.ml-box-warn { background: #fff8e8; border: 1px solid #f0c36d; color: #6b4800; }
.ml-box { border-radius: 6px; padding: 6px 10px; margin: 4px 0; line-height: 1.35; }
.ml-box-fail { background: #fff1f1; border: 1px solid #e8a0a0; color: #7a1010; }
.ml-box-error { background: #fff7e6; border: 1px solid #f0c36d; color: #6b4800; }
.ml-box code { white-space: pre-wrap; }
.ml-progress { font-size: 0.9em; color: #333; min-height: 1.4em; }
.ml-table { border-collapse: collapse; font-size: 0.9em; margin-top: 4px; }
.ml-table th, .ml-table td { border-bottom: 1px solid #e3e3e3; padding: 3px 10px; text-align: right; }
.ml-table th { background: #f2f4f7; font-weight: 600; }
.ml-table td.ml-fail-cell { color: #8a1111; }
</style>
"""


def html_widget(value: str = "", classes: Iterable[str] = (), **layout: str) -> W.HTML:
    """An HTML widget with CSS ``classes`` (the panel stylesheet's ``ml-*``) and layout properties."""
    w = W.HTML(value, layout=W.Layout(**layout))
    for c in classes:
        w.add_class(c)
    return w


def group_box(title: str, *children: W.Widget) -> W.VBox:
    """A titled group of sidebar widgets."""
    box = W.VBox([html_widget(f"<div class='ml-group-title'>{html.escape(title)}</div>"), *children])
    box.add_class("ml-group")
    return box


def fmt_number(x: float, digits: int = 6) -> str:
    """``x`` to ``digits`` significant digits, an em dash for None, NaN or infinity."""
    if x is None or not np.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


def fmt_order(p: float) -> str:
    """An observed order of accuracy to one decimal, an em dash when unknown."""
    return f"{p:.1f}" if p is not None and np.isfinite(p) else "—"


def show_figure(out: W.Output, fig: go.Figure) -> None:
    """Render ``fig`` in ``out`` by assigning a display_data bundle.

    Voila renders an Output widget's display_data bundle directly, while a plotly ``FigureWidget``
    needs a JupyterLab extension that Voila may not load.
    """
    bundle = json.loads(fig.to_json())
    bundle["config"] = {"displaylogo": False}
    out.outputs = ({"output_type": "display_data",
                    "data": {"application/vnd.plotly.v1+json": bundle}, "metadata": {}},)


def figure_with_controls(draw: Callable[..., go.Figure], controls: Mapping[str, W.ValueWidget], *,
                         side: bool = False) -> W.Box:
    """A figure that redraws when a control changes: the ``ipywidgets.interact`` of plotly figures for lessons.

    ``draw(**values)`` gets each control's current value under its key in ``controls`` (name -> widget, e.g. a
    ``FloatSlider``) and returns a plotly figure, shown with :func:`show_figure` (so that it also renders in Voila).
    The controls sit above the figure, or left of it with ``side=True``. An error in ``draw`` is shown in place of
    the figure, and the controls keep working.
    """
    out = W.Output(layout=W.Layout(width="100%"))

    def redraw(change: object = None) -> None:
        try:
            show_figure(out, draw(**{name: widget.value for name, widget in controls.items()}))
        except Exception as err:  # show it where the figure was; the next change tries again
            out.outputs = ({"output_type": "stream", "name": "stderr", "text": f"Could not draw: {error_text(err)}"},)

    for widget in controls.values():
        widget.observe(redraw, names="value")
    redraw()
    if side:
        return W.HBox([W.VBox(list(controls.values())), out])
    return W.VBox([*controls.values(), out])


def blank_figure(text: str, height: int = 300) -> go.Figure:
    """An empty plot area with ``text`` in the middle (before the first solve)."""
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=14, color="#777"))
    fig.update_layout(height=height, xaxis=dict(visible=False), yaxis=dict(visible=False),
                      margin=dict(l=20, r=20, t=30, b=20), plot_bgcolor="white")
    return fig


def error_text(err: BaseException) -> str:
    """``Type: message`` of an exception (a ``KeyError``'s message without its quotes)."""
    msg = str(err)
    if isinstance(err, KeyError) and len(err.args) == 1 and isinstance(err.args[0], str):
        msg = err.args[0]
    return f"{type(err).__name__}: {msg}"


SIDEBAR_STYLE = {"description_width": "110px"}  # the sidebar's widgets: label column, then ...


@contextlib.contextmanager
def busy_button(button: W.Button, running: str) -> Iterator[None]:
    """Disable ``button`` and show ``running`` with a spinner while the body runs; then restore it."""
    label, icon = button.description, button.icon
    button.disabled, button.description, button.icon = True, running, "spinner"
    try:
        yield
    finally:
        button.disabled, button.description, button.icon = False, label, icon


@contextlib.contextmanager
def panel_action(progress: W.HTML, message: W.HTML, button: W.Button, *, working: str, busy: str,
                 failure: str) -> Iterator[None]:
    """A single-action panel's run of its action: ``working`` in the progress line (after ⏳), the message cleared,
    ``button`` busy (``busy`` on it) while the body runs; an exception in the body is shown, never swallowed
    silently — the progress line says the run stopped and ``message`` holds ``failure`` with the error's text. The
    body sets the progress line's success text."""
    progress.value = f"⏳ {working}"
    message.value = ""
    with busy_button(button, busy):
        try:
            yield
        except Exception as err:  # shown in the panel
            progress.value = "✖ stopped"
            message.value = error_box(failure, err)


def error_box(what: str, err: BaseException) -> str:
    """HTML of a panel's error message: ``what`` went wrong, and the error's text."""
    return (f"<div class='ml-box ml-box-error'><b>⚠ {html.escape(what)}.</b> "
            f"<code>{html.escape(error_text(err))}</code></div>")


def wide_layout() -> W.Layout:  # ... a fixed total width (a Layout of its own for each widget)
    """The sidebar widgets' layout: a fixed total width (a new Layout for each widget)."""
    return W.Layout(width="260px")


def log_slider_for(number: W.FloatText, lo: float, hi: float) -> W.FloatLogSlider:
    """A full-width log-scale slider kept in step with the editable ``number`` (the value the panel reads).

    Dragging sets the number (to 3 significant digits); typing a number moves the slider, widening its
    range when the typed value lies outside it (a typed value is never clipped).
    """
    value = float(number.value)
    lo, hi = math.log10(min(lo, value)), math.log10(max(hi, value))
    slider = W.FloatLogSlider(value=value, base=10, min=lo, max=hi, step=0.01, readout=False,
                              tooltip=f"drag: {10 ** lo:g} to {10 ** hi:g} on a log scale, or type the number",
                              layout=W.Layout(width="260px"), style={"description_width": "0px"})
    syncing = False

    def from_slider(change) -> None:
        nonlocal syncing
        if not syncing:
            syncing = True
            number.value = float(f"{change['new']:.3g}")
            syncing = False

    def from_number(change) -> None:
        nonlocal syncing
        v = change["new"]
        if syncing or not (v > 0 and math.isfinite(v)):
            return  # zero switches the goal off; the slider stays where it was
        syncing = True
        exponent = math.log10(v)
        slider.min, slider.max = min(slider.min, exponent), max(slider.max, exponent)
        slider.value = v
        syncing = False

    slider.observe(from_slider, names="value")
    number.observe(from_number, names="value")
    return slider


def action_button(description: str) -> W.Button:
    """The panels' primary action button (Solve, Run), full sidebar width."""
    return W.Button(description=description, button_style="primary", icon="play",
                    layout=W.Layout(width="260px", height="36px", margin="8px 0 4px 0"))


def number_widget(option: Option) -> W.Widget:
    """The input for a problem's own ``Option``: a dropdown, a checkbox, or an integer or float field."""
    kw = dict(description=option.label, tooltip=option.tooltip or None, style=SIDEBAR_STYLE, layout=wide_layout())
    if option.choices:
        return W.Dropdown(options=list(option.choices), value=option.default, **kw)
    if isinstance(option.default, bool):
        return W.Checkbox(value=option.default, indent=False, **kw)
    if isinstance(option.default, int):
        return W.IntText(value=option.default, **kw)
    return W.FloatText(value=float(option.default), **kw)


def run_controls(label: str) -> tuple[W.Button, W.HTML, W.HTML, W.HTML]:
    """A single-action panel's ``(button, progress line, numbers chips, message box)``: the action button labelled
    ``label``, the line under it that tells what runs, the chips of the last result and the place for errors."""
    return action_button(label), html_widget(classes=["ml-progress"], width="340px"), \
        html_widget(classes=["ml-numbers"]), html_widget()


def single_action_children(header: W.Widget, groups: list, button: W.Button, progress: W.Widget, main: list,
                           below: W.Widget) -> list:
    """The page of a single-action panel: the stylesheet, ``header``, a sidebar (the ``groups``, then ``button``
    and ``progress``) beside the ``main`` column (numbers, messages, a figure), and ``below`` under both."""
    sidebar = W.VBox([*groups, button, progress], layout=W.Layout(width="370px", min_width="370px",
                                                                  margin="0 12px 0 0"))
    sidebar.add_class("ml-sidebar")
    body = W.VBox(main, layout=W.Layout(flex="1 1 auto", width="auto", min_width="0"))
    return [W.HTML(PANEL_CSS), header, W.HBox([sidebar, body]), below]


class PanelBase(W.VBox):
    """What both panels share: the offered problems, the page layout, error messages and the busy state."""

    def _offer(self, problems, problem: str | None) -> str:
        """Set ``problems`` (key -> DemoProblem) and the ``problem_select`` dropdown; return the first key."""
        if isinstance(problems, (str, DemoProblem)) or callable(problems):
            problems = [problems]
        self.problems = {p.key: p for p in (get_demo_problem(x) for x in problems)}
        if not self.problems:
            raise ValueError(f"{type(self).__name__} needs at least one problem")
        key = problem or next(iter(self.problems))
        if key not in self.problems:
            raise KeyError(f"Problem {key!r} is not offered; choose one of {list(self.problems)}")
        self.error: str | None = None
        self._busy = False
        self._last_progress = 0.0
        self.header = html_widget(classes=["ml-header"])
        self.message = html_widget()  # settings errors and failed solves
        self.problem_select = W.Dropdown(options=[(p.title, k) for k, p in self.problems.items()], value=key,
                                         layout=W.Layout(width="262px"), tooltip="problem")
        self.problem_select.add_class("ml-problem")
        return key

    def _solver_widgets(self) -> None:
        """The ``mode``, ``optimizer`` and ``tolerance`` dropdowns."""
        self.mode = W.Dropdown(options=list(DYNAMICS_MODES), description="dynamics mode", style=SIDEBAR_STYLE,
                               layout=wide_layout())
        self.optimizer = W.Dropdown(options=list(OPTIMIZERS), description="optimizer", style=SIDEBAR_STYLE,
                                    layout=wide_layout())
        self.tolerance = W.Dropdown(
            options=[(label, DEFAULT_CHOICE if v is None else v) for label, v in TOLERANCES], value=DEFAULT_CHOICE,
            description="tolerance", style=SIDEBAR_STYLE, layout=wide_layout(),
            tooltip="IPOPT tol and constr_viol_tol (SNOPT: major optimality and feasibility tolerances)")

    def _problem_group(self, *children) -> W.VBox:
        """The sidebar's "Problem" group: the selector (when there is a choice) and ``children``."""
        hint = html_widget("<span class='ml-hint'>A new problem (or motion, task) is solved at once; "
                     "other changes wait for the button.</span>")
        return group_box("Problem", *([self.problem_select] if len(self.problems) > 1 else []), *children, hint)

    def _lay_out(self, sidebar: list, main: list) -> None:
        """Header on top; the settings sidebar on the left, the results on the right."""
        side = W.VBox(sidebar, layout=W.Layout(width="290px", min_width="290px", margin="0 12px 0 0",
                                               align_self="flex-start"))
        side.add_class("ml-sidebar")
        body = W.VBox(main, layout=W.Layout(flex="1 1 auto", width="auto", min_width="0"))
        super().__init__([html_widget(PANEL_CSS), self.header, W.HBox([side, body], layout=W.Layout(width="100%"))],
                         layout=W.Layout(width="100%"))
        self.add_class("ml-panel")

    def __repr__(self) -> str:  # stable text/plain for nbval (no model ids, no numbers)
        return f"{type(self).__name__}(problems={list(self.problems)})"

    @property
    def demo(self) -> DemoProblem:
        """The selected problem."""
        return self.problems[self.problem_select.value]

    def _show_error(self, what: str, err: BaseException, with_trace: bool = False) -> None:
        self.error = error_text(err)
        detail = ""
        if with_trace:
            tb = "".join(traceback.format_exception(err)[-3:])
            detail = f"<details><summary>details</summary><code>{html.escape(tb)}</code></details>"
        self.message.value = (f"<div class='ml-box ml-box-error'><b>⚠ {html.escape(what)}.</b> "
                              f"<code>{html.escape(self.error)}</code>{detail}</div>")

    @contextlib.contextmanager
    def _busy_button(self, button: W.Button, running: str):
        """Disable ``button`` and show ``running`` with a spinner while the body runs; then restore it."""
        self._busy = True
        try:
            with busy_button(button, running):
                yield
        finally:
            self._busy = False

    def _due(self) -> bool:
        """True at most ~20 times a second: progress updates beyond that only slow the solve down."""
        now = _time.perf_counter()
        if now - self._last_progress < 0.05:
            return False
        self._last_progress = now
        return True


# ============================================================ SolvePanel
