"""Interactive panels for teaching dashboards (ipywidgets + plotly, served with Voila).

Two panels, each an ``ipywidgets.VBox`` you can display in a notebook or a
Voila page:

:class:`SolvePanel`
    Pose one of the demo problems, choose the transcription scheme, the
    multibody dynamics mode, the mesh, the optimizer and the goal weights and
    exponents, press **Solve**, and watch the optimizer's progress, the states
    and controls (with the previous solution as a faded overlay and, where one
    is known, the analytic solution), the problem's own extra figures (e.g.
    the suspended mass's path), the cost breakdown and the iteration history.
:class:`ConvergencePanel`
    Solve a problem with a known analytic answer on a sequence of meshes
    (``N = 10, 20, 40, 80``, run by :func:`moco_lab.sweep`) and plot the errors on
    log–log axes with the observed orders of accuracy.

Both work on *demo problems* (:mod:`moco_lab.ui.demos`): ``DEMO_PROBLEMS`` maps a
name to a ``DemoProblem``, whose ``build(settings)`` returns a ready
:class:`~moco_lab.tools.study.Study`. The panel applies the generic settings
(scheme, mode, mesh, optimizer, goal weights and exponents, see
:func:`moco_lab.ui.demos.apply_settings`) itself, so a builder only poses the
problem; errors against a known solution and observed orders come from
:mod:`moco_lab.analysis`. The names of those modules that the panels use are
re-exported here too (``from moco_lab.ui.widgets import DEMO_PROBLEMS`` works)::

    from moco_lab.ui.widgets import SolvePanel
    SolvePanel(["linear", "sliding_mass"])          # two verification problems

    def my_builder(settings):                         # any study works too
        study = ml.Study()
        ...
        return study
    SolvePanel(my_builder)

Plots are rendered by assigning a plotly bundle to ``Output.outputs`` (no
``FigureWidget``, no ``with out: fig.show()``), which is reliable in Voila and
under nbclient/nbval. Every solve and every error is reported inside the
panel; a failed or mis-configured solve never raises out of a button click.
"""
from __future__ import annotations

import contextlib
import html
import json
import math
import time as _time
import traceback
from typing import Iterable, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.verification import (
    LINEAR_C2,
    LINEAR_C3,
    METRIC_LABELS,
    linear_exact_control,
    linear_exact_states,
    observed_orders,
    solution_errors,
)
from ..engine.collocation import DYNAMICS_MODES, SCHEMES
from ..results.trajectory import Solution
from ..solve.optimizer import IPOPT_STATUS_EXPLANATIONS, Progress, status_level
from ..solve.settings import SolverSettings
from ..tools.sweep import SweepResult, sweep
from ..util.config import fast_mode
from ..viz.plotting import plot_trajectories
from .demos import (
    DEMO_PROBLEMS,
    DemoProblem,
    Option,
    Reference,
    apply_settings,
    base_settings,
    default_settings,
    get_demo_problem,
    goal_settings,
    linear_reference,
    register_demo_problem,
    sliding_mass_reference,
)

__all__ = [
    "SolvePanel", "ConvergencePanel",
    # Re-exported from moco_lab.ui.demos and moco_lab.analysis, where they live:
    "Option", "Reference", "DemoProblem", "DEMO_PROBLEMS", "register_demo_problem", "get_demo_problem",
    "default_settings", "apply_settings", "linear_reference", "sliding_mass_reference",
    "METRIC_LABELS", "solution_errors", "observed_orders", "LINEAR_C2", "LINEAR_C3",
    "linear_exact_states", "linear_exact_control",
]

#: The schemes in the menus: the engine's, Moco's default (``SolverSettings``'s) first.
SCHEMES = tuple(sorted(SCHEMES, key=lambda s: s != SolverSettings().transcription_scheme))
OPTIMIZERS = ("ipopt", "snopt")
#: Tolerance choices offered by the panels (label, value); ``None`` keeps the optimizer's defaults.
TOLERANCES = (("optimizer default", None), ("1e-2", 1e-2), ("1e-3", 1e-3), ("1e-4", 1e-4), ("1e-6", 1e-6),
              ("1e-8", 1e-8), ("1e-10", 1e-10))
_DEFAULT = "default"  # dropdown value standing for None (an ipywidgets Dropdown cannot select None)


def _tolerance_value(value):
    return None if value == _DEFAULT else float(value)


SCHEME_LABELS = {"trapezoidal": "trapezoidal", "hermite-simpson": "Hermite–Simpson"}
_SCHEME_COLORS = {"trapezoidal": "#1f77b4", "hermite-simpson": "#d62728"}
_METRIC_DASH = {"states": "solid", "controls": "dash", "objective": "dot", "final_time": "solid"}
_METRIC_SYMBOL = {"states": "circle", "controls": "square", "objective": "diamond", "final_time": "circle"}


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


def _fmt(x: float, digits: int = 6) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


def _order(p: float) -> str:
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


_STYLE = {"description_width": "110px"}  # the sidebar's widgets: label column, then ...


def _wide() -> W.Layout:  # ... a fixed total width (a Layout of its own for each widget)
    return W.Layout(width="260px")


def _log_slider_for(number: W.FloatText, lo: float, hi: float) -> W.FloatLogSlider:
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


def _number_widget(option: Option) -> W.Widget:
    kw = dict(description=option.label, tooltip=option.tooltip or None, style=_STYLE, layout=_wide())
    if option.choices:
        return W.Dropdown(options=list(option.choices), value=option.default, **kw)
    if isinstance(option.default, bool):
        return W.Checkbox(value=option.default, indent=False, **kw)
    if isinstance(option.default, int):
        return W.IntText(value=option.default, **kw)
    return W.FloatText(value=float(option.default), **kw)


class _Panel(W.VBox):
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
        self.mode = W.Dropdown(options=list(DYNAMICS_MODES), description="dynamics mode", style=_STYLE, layout=_wide())
        self.optimizer = W.Dropdown(options=list(OPTIMIZERS), description="optimizer", style=_STYLE,
                                    layout=_wide())
        self.tolerance = W.Dropdown(
            options=[(label, _DEFAULT if v is None else v) for label, v in TOLERANCES], value=_DEFAULT,
            description="tolerance", style=_STYLE, layout=_wide(),
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
        label, icon = button.description, button.icon
        self._busy = True
        button.disabled, button.description, button.icon = True, running, "spinner"
        try:
            yield
        finally:
            button.disabled, button.description, button.icon = False, label, icon
            self._busy = False

    def _due(self) -> bool:
        """True at most ~20 times a second: progress updates beyond that only slow the solve down."""
        now = _time.perf_counter()
        if now - self._last_progress < 0.05:
            return False
        self._last_progress = now
        return True


# ============================================================ SolvePanel
class SolvePanel(_Panel):
    """Pose, solve and inspect one demo problem interactively.

    Parameters
    ----------
    problems : str, DemoProblem, callable, or a sequence of them
        What to offer: registry names of :data:`DEMO_PROBLEMS` (default:
        the two verification problems ``"linear"`` and ``"sliding_mass"``),
        :class:`DemoProblem` objects, or builders ``settings -> Study``. With
        more than one a problem selector is shown.
    problem : str, optional
        Key of the problem selected first (default: the first).
    settings : dict, optional
        Overrides of the initial settings (see :func:`default_settings`),
        e.g. ``{"scheme": "trapezoidal", "mesh_intervals": 20}``.
    title : str, optional
        Panel heading (default: the selected problem's title).
    solve_on_start : bool, default True
        Solve once while the panel is built, so the dashboard opens with plots.

    Attributes
    ----------
    solution : Solution or None
        Last solution (unsealed if it failed, so it can be plotted).
    previous : Solution or None
        The last *successful* solution before ``solution`` (the faded overlay).
    history : list of Progress
        The optimizer iterations of the last solve.
    error : str or None
        The last settings/setup error shown in the panel (None after a solve).
    figures : dict of str -> plotly Figure
        The figures last rendered: ``"trajectories"``, ``"cost"``, ``"history"``
        and those of the problem's ``extra_figures`` hook (e.g. ``"path"``).
    solve_count : int
        Number of completed solve attempts.

    Widgets (public, e.g. for tests): ``problem_select``, ``scheme``, ``mode``,
    ``mesh_intervals``, ``optimizer``, ``max_iterations``, ``tolerance``,
    ``option_widgets`` (key -> widget), ``goal_widgets`` (goal -> {"weight",
    "exponent"} widgets), ``show_reference``, ``solve_button``,
    ``progress_html``, ``numbers``, ``message``, ``traj_out``, ``cost_out``,
    ``history_out``, ``extra_outs`` (figure name -> Output, one per figure of
    the problem's ``extra_figures`` hook, below the states and controls).

    Problem hooks (see :class:`~moco_lab.ui.demos.DemoProblem`): an
    :class:`~moco_lab.ui.demos.Option` with ``rebuild=True`` re-poses the
    problem when it changes (new goal widgets, then a solve), after selecting
    its ``presets``; ``extra_figures`` adds figures, ``extra_numbers`` adds
    entries to the numbers line, ``weight_sliders`` shows goal weights as
    logarithmic sliders. An error in a hook is shown in the panel.
    """

    def __init__(self, problems: Sequence[str] | None = ("linear", "sliding_mass"), *, problem: str | None = None,
                 settings: dict | None = None, title: str | None = None, solve_on_start: bool = True):
        key = self._offer(problems, problem)
        self._title = title
        self.solution: Solution | None = None
        self.previous: Solution | None = None
        self.history: list[Progress] = []
        self.figures: dict[str, go.Figure] = {}
        self.solve_count = 0
        self.option_widgets: dict[str, W.Widget] = {}
        self.goal_widgets: dict[str, dict[str, W.Widget]] = {}

        self.options_box = W.VBox()
        self.scheme = W.Dropdown(options=[(SCHEME_LABELS[s], s) for s in SCHEMES], description="scheme",
                                 style=_STYLE, layout=_wide())
        self._solver_widgets()
        self.mesh_intervals = W.BoundedIntText(value=10, min=1, max=2000, description="mesh intervals N",
                                               style=_STYLE, layout=_wide())
        self.max_iterations = W.BoundedIntText(value=3000, min=0, max=100000, description="max iterations",
                                               style=_STYLE, layout=_wide())
        self.goals_box = W.VBox()
        self.show_reference = W.Checkbox(value=True, description="show analytic solution", indent=False,
                                         layout=_wide())
        self.solve_button = action_button("Solve")
        self.progress_html = html_widget("<span class='ml-hint'>Press Solve to run the optimizer.</span>",
                                   ["ml-progress"], width="260px")
        self.numbers = html_widget(classes=["ml-numbers"])
        self.traj_out = W.Output(layout=W.Layout(width="100%", min_height="420px"))
        self.extra_outs: dict[str, W.Output] = {}
        self.extra_box = W.VBox(layout=W.Layout(width="100%"))
        self.cost_out = W.Output(layout=W.Layout(width="50%"))
        self.history_out = W.Output(layout=W.Layout(width="50%"))
        self._lay_out(
            [self.solve_button, self.progress_html,  # on top: visible without scrolling on a laptop screen
             self._problem_group(self.options_box),
             group_box("Transcription", self.scheme, self.mode, self.mesh_intervals),
             group_box("Optimizer", self.optimizer, self.max_iterations, self.tolerance),
             group_box("Goals", self.goals_box, self.show_reference)],
            [self.numbers, self.message, self.traj_out, self.extra_box,
             W.HBox([self.cost_out, self.history_out])])

        self._load_problem(key, settings)
        self.problem_select.observe(self._on_problem_change, names="value")
        self.solve_button.on_click(self._on_click)
        self.show_reference.observe(lambda change: self._render_plots(), names="value")
        if solve_on_start:
            self.solve()
        else:
            show_figure(self.traj_out, blank_figure("Press Solve to see the states and controls.", 420))

    # ---------------------------------------------------------- problem
    def _load_problem(self, key: str, overrides: dict | None = None) -> None:
        problem = self.problems[key]
        overrides = dict(overrides or {})
        settings = base_settings(problem)
        settings.update({k: v for k, v in overrides.items() if k != "goals"})
        for o in problem.options:  # the presets of the initial option values, unless overridden
            preset = (o.presets or {}).get(settings.get(o.key), {})
            settings.update({k: v for k, v in preset.items() if k not in overrides})
        self._goal_types = {}
        self._posed_for = None
        try:  # default_settings(problem), keeping the built goals for their types
            study = problem.build(settings)
            settings["goals"] = goal_settings(study)
            self._goal_types = {g.name: g for g in study.problem.goals}
            self._posed_for = tuple(settings.get(o.key) for o in problem.options if o.rebuild)
        except Exception as err:  # a broken builder: show it, keep the panel alive
            self._show_error("Could not build the problem", err)
        if overrides and "goals" in overrides:
            settings["goals"] = overrides["goals"]
        title = self._title or problem.title
        self.header.value = f"<h2>{html.escape(title)}</h2><p>{problem.description}</p>"
        self.option_widgets = {o.key: _number_widget(o) for o in problem.options}
        for o in problem.options:
            if o.key in settings:
                self.option_widgets[o.key].value = settings[o.key]
            if o.rebuild or o.presets:
                self.option_widgets[o.key].observe(
                    lambda change, option=o: self._on_option_change(option, change), names="value")
        self.options_box.children = list(self.option_widgets.values())
        self._set_goal_widgets(settings.get("goals", {}), problem)
        self._set_generic_widgets(settings)
        self.show_reference.layout.display = None if problem.reference else "none"
        for name in self.extra_outs:  # figures of the previous problem
            self.figures.pop(name, None)
        self.extra_outs = {}
        self.extra_box.children = ()
        self.previous = None
        self.solution = None

    def _set_goal_widgets(self, goals: dict, problem: DemoProblem) -> None:
        """One row of widgets per goal of ``goals`` (``{name: {"weight": w[, "exponent": p]}}``)."""
        self.goal_widgets = {}
        rows = []
        for name, values in goals.items():
            kind = type(self._goal_types.get(name)).__name__ if name in self._goal_types else ""
            weight = float(values.get("weight", 1.0))
            tip = f"weight of goal {name!r} (0 switches it off)"
            w = W.FloatText(value=weight, description="weight", style=_STYLE, layout=_wide(), tooltip=tip)
            ws = {"weight": w}
            shown: list[W.Widget] = [w]
            if name in problem.weight_sliders and weight > 0:
                shown.append(_log_slider_for(w, *problem.weight_sliders[name]))
            if "exponent" in values:
                ws["exponent"] = W.FloatText(value=values["exponent"], description="exponent", style=_STYLE,
                                             layout=_wide(), tooltip="∫ |x|^exponent dt; Moco requires >= 2")
            self.goal_widgets[name] = ws
            rows.append(html_widget(f"<div class='ml-goal'><b>{html.escape(name)}</b> "
                              f"<span class='ml-hint'>{html.escape(kind)}</span></div>"))
            rows.extend(shown + [x for k, x in ws.items() if k != "weight"])
        if not rows:
            rows = [html_widget("<span class='ml-hint'>This problem has no adjustable goals.</span>")]
        self.goals_box.children = rows

    def _set_generic_widgets(self, settings: dict) -> None:
        """Select the generic settings present in ``settings`` (scheme, mode, mesh, optimizer, ...)."""
        if "scheme" in settings:
            self.scheme.value = settings["scheme"]
        if "mode" in settings:
            self.mode.value = settings["mode"]
        if "mesh_intervals" in settings:
            self.mesh_intervals.value = int(settings["mesh_intervals"])
        if "optimizer" in settings:
            self.optimizer.value = settings["optimizer"]
        if "max_iterations" in settings:
            self.max_iterations.value = int(settings["max_iterations"] or 0)
        if "tolerance" in settings:
            tol = settings["tolerance"]
            self.tolerance.value = _DEFAULT if tol is None else float(tol)

    def _on_option_change(self, option: Option, change) -> None:
        """An option with ``presets`` or ``rebuild``: select the presets; for ``rebuild``, solve (re-posing)."""
        if self._busy:
            return
        self._set_generic_widgets((option.presets or {}).get(change["new"], {}))
        if option.rebuild:
            self.solve()  # _solve sees the change, lists the new problem's goals

    def _posed_key(self, settings: dict) -> tuple:
        """The values of the options with ``rebuild=True``: the goal widgets belong to one such tuple."""
        return tuple(settings.get(o.key) for o in self.demo.options if o.rebuild)

    def _on_problem_change(self, change) -> None:
        if self._busy:
            return
        self._load_problem(change["new"])
        self.message.value = ""
        self.solve()

    def settings(self) -> dict:
        """The settings dict currently selected in the widgets."""
        goals = {name: {k: w.value for k, w in ws.items()} for name, ws in self.goal_widgets.items()}
        s = {"scheme": self.scheme.value, "mode": self.mode.value, "mesh_intervals": self.mesh_intervals.value,
             "optimizer": self.optimizer.value, "max_iterations": self.max_iterations.value,
             "tolerance": _tolerance_value(self.tolerance.value), "goals": goals}
        s.update({k: w.value for k, w in self.option_widgets.items()})
        return s

    # ------------------------------------------------------------ solve
    def _on_click(self, _button=None) -> None:
        self.solve()

    def _on_progress(self, p: Progress) -> None:
        self.history.append(p)
        if self._due():
            self.progress_html.value = self._progress_text(p, running=True)

    @staticmethod
    def _progress_text(p: Progress | None, running: bool, note: str = "") -> str:
        if p is None:
            return f"<span class='ml-hint'>{note or 'Solving…'}</span>"
        head = "⏳ solving… " if running else note
        return (f"{head}iteration <b>{p.iteration}</b> · objective <b>{p.objective:.7g}</b><br>"
                f"constraint violation <b>{p.constraint_violation:.2e}</b> · {p.elapsed:.2f} s")

    def solve(self) -> Solution | None:
        """Solve with the current settings and update the panel (the Solve button's handler).

        Returns the Solution, or None if the settings could not be applied or
        the solver raised; the error is then shown in the panel. Never raises.
        """
        if self._busy:
            return None
        with self._busy_button(self.solve_button, "Solving…"):
            self.history = []
            self._last_progress = 0.0
            self.progress_html.value = self._progress_text(None, True, "⏳ transcribing the problem…")
            try:
                return self._solve(self.settings())
            except Exception as err:  # pragma: no cover - last line of defence, keep the kernel usable
                self._show_error("Unexpected error in the panel", err, with_trace=True)
                return None

    def _solve(self, settings: dict) -> Solution | None:
        try:
            study = self.demo.build(settings)
            posed = self._posed_key(settings)
            if posed != self._posed_for:  # an option with rebuild=True changed: the new problem's goals
                settings["goals"] = goal_settings(study)
                self._goal_types = {g.name: g for g in study.problem.goals}
                self._set_goal_widgets(settings["goals"], self.demo)
                self._posed_for = posed
                self.solution = self.previous = None  # the faded curve must belong to the problem shown
            study = apply_settings(study, settings)
            study.problem.validate()
        except Exception as err:
            self._show_error("These settings cannot be used", err)
            self.progress_html.value = "<span class='ml-hint'>Not solved: fix the settings and press Solve.</span>"
            return None
        try:
            solution = study.solve(progress=self._on_progress)
        except Exception as err:
            self._show_error("The solver raised an error", err, with_trace=True)
            self.progress_html.value = "<span class='ml-hint'>Not solved (see the message).</span>"
            return None
        self.solve_count += 1
        if self.solution is not None and self.solution.success:
            self.previous = self.solution
        if not solution.success:
            solution.unseal()  # we plot the failed iterate, labelled as such
        self.solution = solution
        self._settings_used = settings
        self.error = None
        level = status_level(solution.status, solution.success)
        if level == "converged":
            note = "✔ done"
        elif level == "warning":
            note = f"⚑ {'done' if solution.success else 'stopped'} ({html.escape(solution.status)})"
        else:
            note = "✖ stopped"
        self.progress_html.value = (
            f"{note}: <b>{solution.nit}</b> iterations · objective <b>{solution.objective:.7g}</b><br>"
            f"constraint violation <b>{solution.constraint_violation:.2e}</b> · {solution.solve_time:.2f} s")
        self._render_numbers(solution, settings)
        if self.demo.after_solve is not None:
            try:
                self.demo.after_solve(solution, settings)
            except Exception as err:  # shown, and the panel keeps working
                self._show_error("The problem's after-solve hook raised an error", err, with_trace=True)
        self._render_plots()
        return solution

    # --------------------------------------------------------- rendering
    def _reference(self, settings: dict) -> Reference | None:
        if self.demo.reference is None:
            return None
        try:
            return self.demo.reference(settings)
        except Exception:
            return None

    def _render_numbers(self, sol: Solution, settings: dict) -> None:
        ok = sol.success
        badge = status_badge(sol)
        chips = [
            badge,
            f"<span class='ml-chip'>J = <b>{_fmt(sol.objective, 8)}</b></span>",
            f"<span class='ml-chip'>t_f = <b>{_fmt(sol.final_time, 6)}</b> s</span>",
            f"<span class='ml-chip'><b>{sol.nit}</b> iterations</span>",
            f"<span class='ml-chip'>solve <b>{sol.solve_time:.3f}</b> s</span>",
            f"<span class='ml-chip'>max violation <b>{sol.constraint_violation:.1e}</b></span>",
            f"<span class='ml-chip'>{html.escape(SCHEME_LABELS.get(settings['scheme'], settings['scheme']))}, "
            f"{html.escape(settings['mode'])}, N = {settings['mesh_intervals']}, "
            f"{html.escape(settings['optimizer'])}</span>",
        ]
        ref = self._reference(settings)
        errors = solution_errors(ref, sol, self.demo.metrics or None) if ok else {}
        for k, v in errors.items():
            chips.append(f"<span class='ml-chip'>{html.escape(METRIC_LABELS[k])} = <b>{v:.2e}</b></span>")
        extra_error = None
        if ok and self.demo.extra_numbers is not None:
            try:
                extra = self.demo.extra_numbers(sol, settings)
                chips += [f"<span class='ml-chip'>{html.escape(str(k))}: <b>{html.escape(str(v))}</b></span>"
                          for k, v in extra.items()]
            except Exception as err:
                extra_error = err
        self.numbers.value = f"<div class='ml-numbers'>{''.join(chips)}</div>"
        if extra_error is not None:
            self._show_error("Could not compute the problem's extra numbers", extra_error, with_trace=True)
        elif ok and status_level(sol.status, sol.success) == "warning":
            self.message.value = (
                f"<div class='ml-box ml-box-warn'><b>{html.escape(sol.status)}</b>: "
                f"{html.escape(IPOPT_STATUS_EXPLANATIONS.get(sol.status, ''))}.</div>")
        elif ok:
            self.message.value = ""
        else:
            box = "ml-box-warn" if status_level(sol.status, sol.success) == "warning" else "ml-box-fail"
            self.message.value = (
                f"<div class='ml-box {box}'><b>The optimizer did not converge "
                f"({html.escape(sol.status)}).</b> {html.escape(sol.message)}<br>"
                "The plots show its last iterate, which is <b>not</b> a solution of the problem. "
                "Try more iterations, a different mesh, or check the bounds.</div>")

    def _render_plots(self) -> None:
        sol = self.solution
        if sol is None:
            return
        settings = getattr(self, "_settings_used", self.settings())
        trajs, labels = [sol], ["solution" if sol.success else f"last iterate ({sol.status})"]
        ref = self._reference(settings) if self.show_reference.value else None
        ref_traj = ref.trajectory() if ref is not None else None
        if ref_traj is not None:
            trajs.append(ref_traj)
            labels.append(ref.label)
        faded = [self.previous] if self.previous is not None else None
        names = None
        if self.demo.plotted is not None:
            try:
                names = list(self.demo.plotted(sol))
            except Exception as err:
                self._show_error("Could not select the variables to plot", err, with_trace=True)
        n_vars = len(names) if names is not None else len(sol.states) + len(sol.controls)
        columns = 3 if n_vars > 4 else 2
        what = self.demo.plotted_title if names is not None else "States and controls"
        title = (f"{what} — {SCHEME_LABELS.get(settings['scheme'], settings['scheme'])}, "
                 f"{settings['mode']}, N = {settings['mesh_intervals']}")
        fig = plot_trajectories(trajs, names=names, labels=labels, title=title, columns=columns, faded=faded)
        for trace in fig.data:
            if trace.legendgroup == "trajectory0" and not sol.success:
                trace.line.color = "#c0392b"
            elif trace.legendgroup == "trajectory1":  # the analytic solution: dark, dotted, on top
                trace.line.color = "#222222"
                trace.line.dash = "dot"
        rows = math.ceil(n_vars / columns)
        height = 70 + 230 * rows
        if n_vars % columns:  # an empty cell at the bottom right: the legend goes there
            legend = dict(orientation="v", xanchor="right", x=0.98, yanchor="middle", y=0.5 / rows,
                          font=dict(size=12), bordercolor="#ddd", borderwidth=1)
            top = 60
        else:
            legend = dict(orientation="h", xanchor="right", x=1, yanchor="bottom", y=1 + 36 / (height - 140))
            top = 90
        fig.update_layout(height=height, margin=dict(l=60, r=20, t=top, b=45), legend=legend,
                          title=dict(y=0.99, yanchor="top", font=dict(size=15)))
        self.figures["trajectories"] = fig
        show_figure(self.traj_out, fig)

        names = list(sol.goal_values)
        values = [sol.goal_values[n] for n in names]
        cost = go.Figure(go.Bar(x=values, y=names, orientation="h", marker_color="#4c78a8",
                                width=[0.55] * len(names),
                                text=[_fmt(v, 5) for v in values], textposition="auto",
                                hovertemplate="%{y}: %{x:.8g}<extra></extra>"))
        cost.update_layout(title=dict(text=f"Cost breakdown (J = {_fmt(sol.objective, 6)})", font=dict(size=14)),
                           height=260, margin=dict(l=90, r=20, t=45, b=40),
                           xaxis_title="weighted goal value", plot_bgcolor="white",
                           xaxis=dict(gridcolor="#e5e5e5", zerolinecolor="#999"),
                           yaxis=dict(autorange="reversed"))  # goals top to bottom in problem order
        self.figures["cost"] = cost
        show_figure(self.cost_out, cost)

        hist = make_subplots(specs=[[{"secondary_y": True}]])
        if self.history:
            it = [p.iteration for p in self.history]
            hist.add_trace(go.Scatter(x=it, y=[p.objective for p in self.history], name="objective",
                                      mode="lines+markers", marker_size=4, line_color="#4c78a8"), secondary_y=False)
            hist.add_trace(go.Scatter(x=it, y=[max(p.constraint_violation, 1e-16) for p in self.history],
                                      name="constraint violation", mode="lines+markers", marker_size=4,
                                      line=dict(color="#e45756", dash="dot")), secondary_y=True)
        hist.update_layout(title=dict(text="Optimizer iterations", font=dict(size=14)), height=260,
                           margin=dict(l=60, r=60, t=45, b=45), plot_bgcolor="white",
                           legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1,
                                       font=dict(size=11)))
        n_it = self.history[-1].iteration if self.history else 1
        # The progress callback can fire more often than the optimizer counts iterations (e.g. IPOPT
        # line-search trials and restoration); say so instead of contradicting the iteration count.
        x_title = "iteration" if n_it == sol.nit else f"progress report ({sol.nit} optimizer iterations)"
        hist.update_xaxes(title_text=x_title, gridcolor="#e5e5e5", tick0=0,
                          dtick=max(1, math.ceil(n_it / 8)))
        hist.update_yaxes(title_text="objective", secondary_y=False, gridcolor="#e5e5e5")
        viol = [max(p.constraint_violation, 1e-16) for p in self.history] or [1e-16, 1.0]
        lo, hi = math.floor(math.log10(min(viol))), math.ceil(math.log10(max(viol)))
        hi = max(hi, lo + 1)
        hist.update_yaxes(title_text="constraint violation", type="log", secondary_y=True, exponentformat="power",
                          range=[lo - 0.2, hi + 0.2], dtick=max(1, math.ceil((hi - lo) / 4)), showgrid=False)
        self.figures["history"] = hist
        show_figure(self.history_out, hist)
        self._render_extra_figures(sol, settings)

    def _render_extra_figures(self, sol: Solution, settings: dict) -> None:
        """The figures of the problem's ``extra_figures`` hook, each in its own Output (errors shown)."""
        hook = self.demo.extra_figures
        if hook is None:
            return
        try:
            extra = dict(hook(sol, self.previous, settings))
            clash = set(extra) & {"trajectories", "cost", "history"}
            if clash:
                raise ValueError(f"extra figure names {sorted(clash)} clash with the panel's own figures")
            for name, fig in extra.items():
                if not isinstance(fig, go.Figure):
                    raise TypeError(f"extra figure {name!r} is a {type(fig).__name__}, not a plotly Figure")
        except Exception as err:
            self._show_error("Could not draw the problem's extra figures", err, with_trace=True)
            for out in self.extra_outs.values():  # never leave a figure of another solution on screen
                show_figure(out, blank_figure("Not drawn (see the message above).", 200))
            return
        for name in [n for n in self.extra_outs if n not in extra]:
            self.extra_outs.pop(name)
            self.figures.pop(name, None)
        for name, fig in extra.items():
            if name not in self.extra_outs:
                self.extra_outs[name] = W.Output(layout=W.Layout(width="100%"))
            self.figures[name] = fig
            show_figure(self.extra_outs[name], fig)
        self.extra_box.children = tuple(self.extra_outs.values())


# ====================================================== ConvergencePanel
class ConvergencePanel(_Panel):
    """Mesh-refinement study against a known answer, with observed orders of accuracy.

    Parameters
    ----------
    problems : str, DemoProblem or sequence of them
        Problems with a :class:`Reference` (default ``"linear"`` and
        ``"sliding_mass"``).
    problem : str, optional
        Key selected first.
    meshes : sequence of int, optional
        Mesh sequence (default ``10, 20, 40, 80``; ``5, 10, 20`` under ``MOCO_LAB_FAST=1``).
    schemes : sequence of str, optional
        Schemes checked at start (default both).
    run_on_start : bool, default True
        Run the study once while the panel is built.
    client : None, "local", a ``distributed.Client`` or a scheduler address
        Where the solves run: the mesh sequence is one :func:`moco_lab.sweep` (one change
        ``{"solver.transcription_scheme", "solver.num_mesh_intervals"}`` per solve) of the problem's study,
        and this is the sweep's ``client``. Default None: one after another in this kernel (small
        problems solve faster here than a cluster starts).

    Attributes
    ----------
    results : list of dict
        One row per solve: ``scheme``, ``N``, ``success``, ``status``,
        ``nit``, ``solve_time`` and ``errors`` (metric -> value).
    sweep_result : SweepResult or None
        The last run as the sweep tool returned it (its table: ``sweep_result.to_dataframe()``).
    orders : dict
        ``(scheme, metric) -> (pairwise orders, fitted order)``.
    figure : plotly Figure or None
        The last log–log plot.
    error : str or None
        Last settings error shown in the panel.

    Widgets: ``problem_select``, ``scheme_boxes`` (scheme -> Checkbox),
    ``mode``, ``meshes``, ``optimizer``, ``tolerance``, ``run_button``,
    ``progress_bar``, ``progress_html``, ``summary``, ``message``,
    ``plot_out``, ``table``.
    """

    def __init__(self, problems: Sequence[str] | None = ("linear", "sliding_mass"), *, problem: str | None = None,
                 meshes: Sequence[int] | None = None, schemes: Sequence[str] = SCHEMES,
                 run_on_start: bool = True, client: object = None):
        self._offer(problems, problem)
        self.client = client
        self.sweep_result: SweepResult | None = None
        for p in self.problems.values():
            if p.reference is None or not p.metrics:
                raise ValueError(f"Demo problem {p.key!r} has no analytic reference; it cannot be used "
                                 "in a convergence study.")
        if meshes is None:
            meshes = (5, 10, 20) if fast_mode() else (10, 20, 40, 80)
        self.results: list[dict] = []
        self.orders: dict = {}
        self.figure: go.Figure | None = None
        self.run_count = 0

        self.scheme_boxes = {s: W.Checkbox(value=s in schemes, description=SCHEME_LABELS[s], indent=False,
                                           layout=W.Layout(width="150px")) for s in SCHEMES}
        self._solver_widgets()
        self.meshes = W.Text(value=", ".join(str(n) for n in meshes), description="mesh intervals N",
                             style=_STYLE, layout=_wide())
        self.run_button = action_button("Run mesh sequence")
        self.progress_bar = W.IntProgress(value=0, min=0, max=1, layout=_wide())
        self.progress_html = html_widget("<span class='ml-hint'>Press Run to solve on every mesh.</span>",
                                   ["ml-progress"], width="260px")
        self.summary = html_widget(classes=["ml-numbers"])
        self.plot_out = W.Output(layout=W.Layout(width="100%", min_height="460px"))
        self.table = html_widget()
        self._lay_out(
            [self.run_button, self.progress_bar, self.progress_html,  # on top: visible without scrolling
             self._problem_group(),
             group_box("Transcription",
                    html_widget("<span class='ml-hint'>schemes to compare</span>"),
                    W.HBox(list(self.scheme_boxes.values())), self.mode, self.meshes,
                    html_widget("<span class='ml-hint'>comma-separated and increasing</span>")),
             group_box("Optimizer", self.optimizer, self.tolerance)],
            [self.summary, self.message, self.plot_out, self.table])

        self._update_header()
        self.problem_select.observe(self._on_problem_change, names="value")
        self.run_button.on_click(lambda _b: self.run())
        if run_on_start:
            self.run()
        else:
            show_figure(self.plot_out, blank_figure("Press “Run mesh sequence” to start.", 460))

    def _update_header(self) -> None:
        p = self.demo
        metrics = ", ".join(METRIC_LABELS[m] for m in p.metrics)
        self.header.value = (f"<h2>{html.escape(p.title)}</h2>"
                             f"<p>{p.description}<br>Errors measured against the analytic solution: "
                             f"{html.escape(metrics)}. The observed order p is the slope of the error on "
                             f"log–log axes: error ≈ C·N<sup>−p</sup>.</p>")

    def _on_problem_change(self, change) -> None:
        if self._busy:
            return
        self._update_header()
        self.run()

    def parse_meshes(self) -> list[int]:
        """The mesh sequence typed in the ``meshes`` field (raises ValueError with a readable message)."""
        text = self.meshes.value.replace(";", ",").replace(" ", ",")
        parts = [p for p in text.split(",") if p.strip()]
        try:
            values = [int(p) for p in parts]
        except ValueError:
            raise ValueError(f"mesh intervals must be whole numbers separated by commas, got {self.meshes.value!r}") \
                from None
        if len(values) < 2:
            raise ValueError("give at least two mesh sizes to measure an order of accuracy")
        if any(v < 1 for v in values) or any(b <= a for a, b in zip(values, values[1:])):
            raise ValueError(f"mesh intervals must be positive and increasing, got {values}")
        if values[-1] > 2000:
            raise ValueError("mesh intervals above 2000 would take too long in a dashboard")
        return values

    def run(self) -> list[dict] | None:
        """Solve on every mesh for every checked scheme, then update the plot and the table (never raises)."""
        if self._busy:
            return None
        with self._busy_button(self.run_button, "Running…"):
            try:
                return self._run()
            except Exception as err:  # pragma: no cover - last line of defence
                self._show_error("Unexpected error in the panel", err)
                return None

    def _run(self) -> list[dict] | None:
        try:
            Ns = self.parse_meshes()
            schemes = [s for s, box in self.scheme_boxes.items() if box.value]
            if not schemes:
                raise ValueError("check at least one transcription scheme")
            demo = self.demo
            base = default_settings(demo)
            base.update(mode=self.mode.value, optimizer=self.optimizer.value,
                        tolerance=_tolerance_value(self.tolerance.value))
            study = apply_settings(demo.build(base), base)
        except Exception as err:
            self._show_error("These settings cannot be used", err)
            return None
        self.message.value = ""
        self.error = None
        reference = demo.reference(base)
        changes = [{"solver.transcription_scheme": s, "solver.num_mesh_intervals": N} for s in schemes for N in Ns]
        total = len(changes)
        self.progress_bar.max, self.progress_bar.value = total, 0
        self.progress_bar.bar_style = ""
        self.progress_html.value = f"⏳ solving on {total} meshes…"

        def progress(done: int, failed: int, total: int) -> None:
            self.progress_bar.value = done
            self.progress_html.value = f"⏳ {done} of {total} solves done" + (f", {failed} failed" if failed else "")

        def metric(name: str):
            return lambda solution: solution_errors(reference, solution, [name])[name]

        try:  # one study, one change per (scheme, N): the sweep tool runs them (in this kernel, or on `client`)
            swept = sweep(study, changes, client=self.client, progress=progress,
                          metrics={m: metric(m) for m in demo.metrics if reference is not None})
        except Exception as err:
            self._show_error("The mesh sequence could not be run", err)
            return None
        results = []
        for change, row in zip(changes, swept.rows):
            ok = bool(row["success"])
            results.append({
                "scheme": change["solver.transcription_scheme"], "N": change["solver.num_mesh_intervals"],
                "success": ok, "status": row["error"] or row["status"] or "", "nit": row["iterations"] or 0,
                "solve_time": row["solve_time"],
                "errors": {m: row[f"metric:{m}"] for m in demo.metrics if ok and f"metric:{m}" in row},
            })
        self.sweep_result = swept
        self.results = results
        self.run_count += 1
        failed = [r for r in results if not r["success"]]
        self.progress_bar.value = total
        self.progress_bar.bar_style = "warning" if failed else "success"
        self.progress_html.value = (f"✔ {total} solves done" if not failed
                                    else f"✖ {len(failed)} of {total} solves failed (see the table)")
        self._render(Ns, schemes, demo)
        return results

    def _render(self, Ns: list[int], schemes: list[str], demo: DemoProblem) -> None:
        fig = go.Figure()
        self.orders = {}
        all_errors = []
        for scheme in schemes:
            rows = [r for r in self.results if r["scheme"] == scheme]
            for metric in demo.metrics:
                e = [r["errors"].get(metric, float("nan")) for r in rows]
                pairs, fit = observed_orders(Ns, e)
                self.orders[(scheme, metric)] = (pairs, fit)
                all_errors += [v for v in e if np.isfinite(v) and v > 0]
                fig.add_trace(go.Scatter(
                    x=Ns, y=e, mode="lines+markers",
                    name=f"{METRIC_LABELS[metric]} — {SCHEME_LABELS[scheme]} (p ≈ {_order(fit)})",
                    line=dict(color=_SCHEME_COLORS[scheme], dash=_METRIC_DASH[metric], width=2),
                    marker=dict(symbol=_METRIC_SYMBOL[metric], size=8),
                    hovertemplate="N=%{x}<br>%{y:.3e}<extra>" + f"{METRIC_LABELS[metric]}, {scheme}</extra>"))
        if all_errors:  # slope guides N^-2 and N^-4 through the geometric middle of the data
            mid = math.exp(np.mean(np.log(all_errors)))
            n0 = math.sqrt(Ns[0] * Ns[-1])
            for p in (2, 4):
                y = [mid * (n / n0) ** -p for n in (Ns[0], Ns[-1])]
                fig.add_trace(go.Scatter(x=[Ns[0], Ns[-1]], y=y, mode="lines", name=f"slope −{p} (guide)",
                                         line=dict(color="rgba(120,120,120,0.55)", dash="dot", width=1),
                                         hoverinfo="skip"))
        mode = self.mode.value
        fig.update_layout(
            title=dict(text=f"Error versus mesh intervals — {mode} mode", font=dict(size=15)),
            height=460, margin=dict(l=70, r=20, t=50, b=50), plot_bgcolor="white",
            legend=dict(font=dict(size=11), bgcolor="rgba(255,255,255,0.8)"),
        )
        fig.update_xaxes(type="log", title_text="mesh intervals N", tickvals=Ns, ticktext=[str(n) for n in Ns],
                         gridcolor="#e5e5e5")
        span = math.log10(max(all_errors) / min(all_errors)) if all_errors else 0.0
        fig.update_yaxes(type="log", title_text="error", exponentformat="power", gridcolor="#e5e5e5",
                         dtick=1 if span >= 1.5 else "D2")
        self.figure = fig
        show_figure(self.plot_out, fig)

        # Summary chips: fitted orders.
        chips = [f"<span class='ml-chip'>{html.escape(METRIC_LABELS[m])}, {html.escape(SCHEME_LABELS[s])}: "
                 f"order <b>{_order(self.orders[(s, m)][1])}</b></span>"
                 for s in schemes for m in demo.metrics]
        self.summary.value = f"<div class='ml-numbers'>{''.join(chips)}</div>"

        # Table: N | per scheme & metric: error (order from the previous N) | status.
        head = "".join(f"<th>{html.escape(METRIC_LABELS[m])}<br>{html.escape(SCHEME_LABELS[s])}</th>"
                       for s in schemes for m in demo.metrics)
        body = []
        for i, N in enumerate(Ns):
            cells = []
            for s in schemes:
                row = next(r for r in self.results if r["scheme"] == s and r["N"] == N)
                for m in demo.metrics:
                    if not row["success"]:
                        cells.append(f"<td class='ml-fail-cell'>{html.escape(row['status'] or 'failed')}</td>")
                        continue
                    v = row["errors"].get(m, float("nan"))
                    order = self.orders[(s, m)][0][i - 1] if i > 0 else float("nan")
                    o = f" <span class='ml-hint'>(p = {order:.2f})</span>" if np.isfinite(order) else ""
                    cells.append(f"<td>{v:.3e}{o}</td>")
            body.append(f"<tr><td><b>{N}</b></td>{''.join(cells)}</tr>")
        self.table.value = (f"<table class='ml-table'><tr><th>N</th>{head}</tr>{''.join(body)}</table>"
                            "<div class='ml-hint'>p: order observed between this mesh and the previous one. "
                            "Errors stop decreasing once they reach the optimizer's tolerance.</div>")
