"""The dashboards' solve panel: pose a demo problem, choose the transcription, solve, and watch.

:class:`SolvePanel` is an ``ipywidgets.VBox`` you can display in a notebook or a Voila page. Pose one of the demo
problems (:mod:`moco_lab.ui.demos`: ``DEMO_PROBLEMS`` maps a name to a ``DemoProblem`` whose
``build(settings)`` returns a ready :class:`~moco_lab.tools.study.Study`), choose the transcription scheme, the
multibody dynamics mode, the mesh, the optimizer and the goal weights and exponents, press **Solve**, and watch
the optimizer's progress, the states and controls (with the previous solution as a faded overlay and, where one
is known, the analytic solution), the problem's own extra figures, the cost breakdown and the iteration
history. The panel applies the generic settings itself (:func:`moco_lab.ui.demos.apply_settings`), so a builder
only poses the problem::

    from moco_lab.ui.solve_panel import SolvePanel
    SolvePanel(["linear", "sliding_mass"])          # two verification problems

    def my_builder(settings):                         # any study works too
        study = ml.Study()
        ...
        return study
    SolvePanel(my_builder)
"""
from __future__ import annotations

import html
import math
from typing import Sequence

import ipywidgets as W
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.verification import (
    METRIC_LABELS,
    solution_errors,
)
from ..results.trajectory import Solution
from ..solve.optimizer import IPOPT_STATUS_EXPLANATIONS, Progress, status_level
from ..viz.plotting import plot_trajectories
from .components import (
    DEFAULT_CHOICE,
    HESSIANS,
    SCHEME_LABELS,
    SCHEMES,
    SIDEBAR_STYLE,
    PanelBase,
    action_button,
    blank_figure,
    fmt_number,
    group_box,
    hessian_value,
    html_widget,
    log_slider_for,
    number_widget,
    show_figure,
    status_badge,
    tolerance_value,
    wide_layout,
)
from .demos import (
    DemoProblem,
    Option,
    Reference,
    apply_settings,
    base_settings,
    goal_settings,
)

__all__ = ['SolvePanel']


class SolvePanel(PanelBase):
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
    ``mesh_intervals``, ``optimizer``, ``hessian``, ``max_iterations``, ``tolerance``,
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
                                 style=SIDEBAR_STYLE, layout=wide_layout())
        self._solver_widgets()
        self.mesh_intervals = W.BoundedIntText(value=10, min=1, max=2000, description="mesh intervals N",
                                               style=SIDEBAR_STYLE, layout=wide_layout())
        self.max_iterations = W.BoundedIntText(value=3000, min=0, max=100000, description="max iterations",
                                               style=SIDEBAR_STYLE, layout=wide_layout())
        self.hessian = W.Dropdown(options=list(HESSIANS), value=DEFAULT_CHOICE, description="Hessian",
                                  style=SIDEBAR_STYLE, layout=wide_layout(),
                                  tooltip="IPOPT's Hessian of the Lagrangian: the problem's own choice, limited-memory "
                                          "(quasi-Newton, Moco's default) or exact (second derivatives; IPOPT only)")
        self.goals_box = W.VBox()
        self.show_reference = W.Checkbox(value=True, description="show analytic solution", indent=False,
                                         layout=wide_layout())
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
             group_box("Optimizer", self.optimizer, self.hessian, self.max_iterations, self.tolerance),
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
        self.option_widgets = {o.key: number_widget(o) for o in problem.options}
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
            w = W.FloatText(value=weight, description="weight", style=SIDEBAR_STYLE, layout=wide_layout(), tooltip=tip)
            ws = {"weight": w}
            shown: list[W.Widget] = [w]
            if name in problem.weight_sliders and weight > 0:
                shown.append(log_slider_for(w, *problem.weight_sliders[name]))
            if "exponent" in values:
                ws["exponent"] = W.FloatText(value=values["exponent"], description="exponent", style=SIDEBAR_STYLE,
                                             layout=wide_layout(), tooltip="∫ |x|^exponent dt; Moco requires >= 2")
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
        if "hessian" in settings:
            self.hessian.value = settings["hessian"] or DEFAULT_CHOICE
        if "max_iterations" in settings:
            self.max_iterations.value = int(settings["max_iterations"] or 0)
        if "tolerance" in settings:
            tol = settings["tolerance"]
            self.tolerance.value = DEFAULT_CHOICE if tol is None else float(tol)

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
             "optimizer": self.optimizer.value, "hessian": hessian_value(self.hessian.value),
             "max_iterations": self.max_iterations.value,
             "tolerance": tolerance_value(self.tolerance.value), "goals": goals}
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
            if self.demo.solve is not None:
                solution = self.demo.solve(study, self._on_progress)
            else:
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
            f"<span class='ml-chip'>J = <b>{fmt_number(sol.objective, 8)}</b></span>",
            f"<span class='ml-chip'>t_f = <b>{fmt_number(sol.final_time, 6)}</b> s</span>",
            f"<span class='ml-chip'><b>{sol.nit}</b> iterations</span>",
            f"<span class='ml-chip'>solve <b>{sol.solve_time:.3f}</b> s</span>",
            f"<span class='ml-chip'>max violation <b>{sol.constraint_violation:.1e}</b></span>",
            f"<span class='ml-chip'>{html.escape(SCHEME_LABELS.get(settings['scheme'], settings['scheme']))}, "
            f"{html.escape(settings['mode'])}, N = {settings['mesh_intervals']}, "
            f"{html.escape(settings['optimizer'])}"
            f"{', exact Hessian' if settings.get('hessian') == 'exact' else ''}</span>",
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
                                text=[fmt_number(v, 5) for v in values], textposition="auto",
                                hovertemplate="%{y}: %{x:.8g}<extra></extra>"))
        cost.update_layout(title=dict(text=f"Cost breakdown (J = {fmt_number(sol.objective, 6)})", font=dict(size=14)),
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
