"""The dashboards' convergence panel: one problem with a known answer on a sequence of meshes.

:class:`ConvergencePanel` solves a demo problem (:mod:`moco_lab.ui.demos`) whose analytic answer is known on
meshes ``N = 10, 20, 40, 80`` (run by :func:`moco_lab.sweep`) and plots the errors on log–log axes with the
observed orders of accuracy (:mod:`moco_lab.analysis`).
"""
from __future__ import annotations

import html
import math
from typing import Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from ..analysis.verification import (
    METRIC_LABELS,
    observed_orders,
    solution_errors,
)
from ..tools.sweep import SweepResult, sweep
from ..util.config import fast_mode
from .components import (
    METRIC_DASH,
    METRIC_SYMBOL,
    SCHEME_COLORS,
    SCHEME_LABELS,
    SCHEMES,
    SIDEBAR_STYLE,
    PanelBase,
    action_button,
    blank_figure,
    fmt_order,
    group_box,
    html_widget,
    show_figure,
    tolerance_value,
    wide_layout,
)
from .demos import (
    DemoProblem,
    apply_settings,
    default_settings,
)

__all__ = ['ConvergencePanel']


class ConvergencePanel(PanelBase):
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
        Schemes checked at start (default the Moco paper's two; the pseudospectral ones can be checked too).
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
                 meshes: Sequence[int] | None = None, schemes: Sequence[str] = SCHEMES[:2],
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
                                           layout=W.Layout(width="auto", margin="0 12px 0 0")) for s in SCHEMES}
        self._solver_widgets()
        self.meshes = W.Text(value=", ".join(str(n) for n in meshes), description="mesh intervals N",
                             style=SIDEBAR_STYLE, layout=wide_layout())
        self.run_button = action_button("Run mesh sequence")
        self.progress_bar = W.IntProgress(value=0, min=0, max=1, layout=wide_layout())
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
                    W.Box(list(self.scheme_boxes.values()), layout=W.Layout(flex_flow="row wrap")),
                    self.mode, self.meshes,
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
                        tolerance=tolerance_value(self.tolerance.value))
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
                    name=f"{METRIC_LABELS[metric]} — {SCHEME_LABELS[scheme]} (p ≈ {fmt_order(fit)})",
                    line=dict(color=SCHEME_COLORS[scheme], dash=METRIC_DASH[metric], width=2),
                    marker=dict(symbol=METRIC_SYMBOL[metric], size=8),
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
                 f"order <b>{fmt_order(self.orders[(s, m)][1])}</b></span>"
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
