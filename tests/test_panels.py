"""Tests of ``moco_lab.widgets``: the dashboard panels driven from Python, without a browser.

Widget values are set as a user would, the handlers are called (or the
buttons "clicked"), and the panel's numbers, messages and plot outputs are
checked. Runs in fast mode (small meshes).
"""
from __future__ import annotations

import base64

import numpy as np
import pytest

import moco_lab as ml
import moco_lab.tools.sweep as sweep_module
from moco_lab.analysis import problems
from moco_lab.analysis.verification import solution_errors
from moco_lab.ui import demos
from moco_lab.ui.convergence_panel import ConvergencePanel
from moco_lab.ui.solve_panel import SolvePanel

PLOTLY = "application/vnd.plotly.v1+json"


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setenv("MOCO_LAB_FAST", "1")


def plotly_bundle(out) -> dict:
    """The plotly figure JSON shown in an Output widget (rendered with the outputs-bundle pattern)."""
    assert len(out.outputs) == 1
    item = out.outputs[0]
    assert item["output_type"] == "display_data"
    return item["data"][PLOTLY]


def values(v) -> list:
    """Numbers of a plotly JSON array (plotly writes numpy arrays as base64 ``{"dtype", "bdata"}``)."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


def legend_names(fig) -> set[str]:
    return {t.name for t in fig.data}


# ------------------------------------------------------------- SolvePanel
@pytest.fixture
def panel():
    """A fresh panel for each test (after its initial solve), so no test depends on another's changes."""
    return SolvePanel(["linear", "sliding_mass"])


def test_initial_solve(panel):
    assert repr(panel) == "SolvePanel(problems=['linear', 'sliding_mass'])"
    assert panel.solution.success and panel.solve_count >= 1
    numbers = panel.numbers.value
    assert "Solve_Succeeded" in numbers and "N = 10" in numbers and "Hermite–Simpson" in numbers
    assert "|J − J*|" in numbers and "states RMS error" in numbers
    assert "done" in panel.progress_html.value
    assert panel.history and panel.history[-1].iteration == panel.solution.nit
    fig = plotly_bundle(panel.traj_out)
    assert "States and controls" in fig["layout"]["title"]["text"]
    assert {"solution", "analytic"} <= {t.get("name") for t in fig["data"]}
    assert {"cost", "history", "trajectories"} == set(panel.figures)
    cost = plotly_bundle(panel.cost_out)
    assert cost["data"][0]["y"] == ["effort"]
    assert cost["data"][0]["x"][0] == pytest.approx(panel.solution.goal_values["effort"])
    plotly_bundle(panel.history_out)
    assert not panel.solve_button.disabled and panel.solve_button.description == "Solve"


def test_change_scheme_and_mesh(panel):
    panel.problem_select.value = "linear"
    first = panel.solution
    first_numbers = panel.numbers.value
    panel.scheme.value = "trapezoidal"
    panel.mesh_intervals.value = 16
    seen = []
    panel.progress_html.observe(lambda change: seen.append(change["new"]), names="value")
    panel.solve_button.click()  # the button's handler, as a browser click would call it
    sol = panel.solution
    assert sol is not first and sol.success
    assert sol.objective == pytest.approx(16.84, abs=0.01)  # trapezoidal N = 16 (J* = 16.7507)
    assert panel.numbers.value != first_numbers and "trapezoidal, explicit, N = 16" in panel.numbers.value
    assert panel.previous is first
    fig = panel.figures["trajectories"]
    assert "previous" in legend_names(fig)
    assert "trapezoidal" in fig.layout.title.text and "N = 16" in fig.layout.title.text
    assert any("solving" in v and "iteration" in v for v in seen), seen  # live progress while solving
    assert "done" in seen[-1]
    # Turning the analytic overlay off re-renders without it.
    panel.show_reference.value = False
    assert "analytic" not in legend_names(panel.figures["trajectories"])
    panel.show_reference.value = True
    assert "analytic" in legend_names(panel.figures["trajectories"])


def test_failed_solve_is_shown_and_panel_recovers(panel):
    panel.problem_select.value = "linear"
    good = panel.solution
    panel.max_iterations.value = 2
    sol = panel.solve()
    assert sol is not None and not sol.success
    assert sol.status == "Maximum_Iterations_Exceeded"
    # amber, not red: the iteration limit is a warning (the iterate may be close), explained in a tooltip
    assert "ml-warn" in panel.numbers.value and "⚑ Maximum_Iterations_Exceeded" in panel.numbers.value
    assert "FAILED" not in panel.numbers.value and "stopped at the iteration limit" in panel.numbers.value
    assert "ml-box-warn" in panel.message.value and "did not converge" in panel.message.value
    assert "stopped" in panel.progress_html.value
    assert panel.previous is good  # the overlay keeps the last good solution
    labels = legend_names(panel.figures["trajectories"])
    assert "last iterate (Maximum_Iterations_Exceeded)" in labels
    # Errors against the analytic answer are not reported for a failed solve.
    assert "|J − J*|" not in panel.numbers.value
    panel.max_iterations.value = 3000
    sol = panel.solve()
    assert sol.success and panel.message.value == ""
    assert "Solve_Succeeded" in panel.numbers.value


def test_infeasible_sliding_mass(panel):
    panel.problem_select.value = "sliding_mass"  # solves on selection
    assert panel.solution.success and "|t_f − t_f*|" in panel.numbers.value
    assert panel.previous is None  # a new problem starts without overlay
    assert set(panel.option_widgets) == {"mass", "tf_max"}
    assert set(panel.goal_widgets) == {"time", "effort"}
    assert panel.solution.final_time == pytest.approx(0.4, abs=0.01)
    panel.option_widgets["tf_max"].value = 0.3  # t_f* = 0.4 cannot be reached
    sol = panel.solve()
    assert sol is not None and not sol.success
    assert "FAILED" in panel.numbers.value and sol.status in panel.numbers.value
    assert sol.status in panel.message.value
    assert "t_f*" not in panel.numbers.value  # no analytic answer for an infeasible problem
    assert f"<b>{sol.nit}</b> iterations" in panel.progress_html.value  # the optimizer's own count
    panel.option_widgets["tf_max"].value = 5.0
    sol = panel.solve()
    assert sol.success and "|t_f − t_f*|" in panel.numbers.value and panel.message.value == ""


def test_goal_weights_change_the_solution(panel):
    panel.problem_select.value = "sliding_mass"
    panel.goal_widgets["effort"]["weight"].value = 0.001
    sol = panel.solve()
    assert sol.success and sol.final_time > 0.45  # effort makes the motion slower
    assert set(sol.goal_values) == {"time", "effort"} and sol.goal_values["effort"] > 0
    cost = panel.figures["cost"]
    assert list(cost.data[0].y) == ["time", "effort"]
    assert "t_f*" not in panel.numbers.value
    panel.goal_widgets["effort"]["weight"].value = 0.0


def test_bad_settings_are_shown_not_raised(panel):
    panel.problem_select.value = "linear"
    figures = dict(panel.figures)
    count = panel.solve_count
    panel.goal_widgets["effort"]["exponent"].value = 1.5
    assert panel.solve() is None
    assert "exponent must be a finite number &gt;= 2" in panel.message.value and "ml-box-error" in panel.message.value
    assert "exponent must be a finite number >= 2" in panel.error
    assert panel.figures == figures and panel.solve_count == count  # plots untouched
    assert not panel.solve_button.disabled and panel.solve_button.description == "Solve"
    panel.goal_widgets["effort"]["exponent"].value = 2.0
    assert panel.solve().success and panel.message.value == "" and panel.error is None


def test_snopt(panel):
    panel.problem_select.value = "linear"
    panel.optimizer.value = "snopt"
    try:
        sol = panel.solve()
        assert sol.success and sol.objective == pytest.approx(16.7507, abs=0.01)
        assert "snopt" in panel.numbers.value
    finally:
        panel.optimizer.value = "ipopt"


def test_custom_builder_and_solver_exception():
    def spring_free(settings):
        """Move the sliding mass 1 m in 1 s with minimum effort."""
        study = ml.examples.sliding_mass_study()
        study.problem.set_time_bounds(0, 1)
        study.problem.remove_goal("time")
        study.problem.add_goal(ml.ControlGoal("effort"))
        return study

    p = SolvePanel(spring_free)
    assert p.solution.success and p.problem_select.value == "spring_free"
    assert "Move the sliding mass" in p.header.value
    assert p.show_reference.layout.display == "none"
    assert set(p.goal_widgets) == {"effort"}

    class Broken(ml.Study):
        def solve(self, progress=None):
            raise RuntimeError("the optimizer crashed")

    def broken(settings):
        study = spring_free(settings)
        b = Broken()
        b.problem, b.solver = study.problem, study.solver
        return b

    p = SolvePanel(broken)
    assert p.solution is None and "the optimizer crashed" in p.message.value
    assert "The solver raised an error" in p.message.value
    assert not p.solve_button.disabled


def test_double_pendulum_panel():
    p = SolvePanel("double_pendulum", settings={"scheme": "trapezoidal"})
    assert p.solution.success
    fig = p.figures["trajectories"]
    assert len(fig.layout.annotations) == 6  # 4 states + 2 controls, one subplot each
    assert "analytic" not in legend_names(fig)


def test_no_solve_on_start():
    p = SolvePanel("linear", solve_on_start=False)
    assert p.solution is None and p.solve_count == 0
    assert plotly_bundle(p.traj_out)["layout"]["annotations"][0]["text"].startswith("Press Solve")
    p.solve()
    assert p.solution.success


# ------------------------------------------------------- ConvergencePanel
def test_convergence_linear():
    c = ConvergencePanel(["linear", "sliding_mass"])
    assert repr(c) == "ConvergencePanel(problems=['linear', 'sliding_mass'])"
    assert c.parse_meshes() == [5, 10, 20]  # fast mode
    assert len(c.results) == 6 and all(r["success"] for r in c.results)
    assert c.progress_bar.value == c.progress_bar.max == 6
    assert "6 solves done" in c.progress_html.value
    assert c.orders[("hermite-simpson", "states")][1] == pytest.approx(4, abs=0.4)
    assert c.orders[("trapezoidal", "states")][1] == pytest.approx(2, abs=0.4)
    assert c.orders[("hermite-simpson", "objective")][1] == pytest.approx(4, abs=0.4)
    fig = plotly_bundle(c.plot_out)
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    names = [t["name"] for t in fig["data"]]
    assert any(n.startswith("states RMS error — Hermite–Simpson (p ≈ 4") for n in names), names
    assert "<table" in c.table.value and "p = " in c.table.value

    # Only trapezoidal, implicit, another sequence.
    c.scheme_boxes["hermite-simpson"].value = False
    c.mode.value = "implicit"
    c.meshes.value = "8, 16"
    c.run_button.click()
    assert [r["N"] for r in c.results] == [8, 16] and {r["scheme"] for r in c.results} == {"trapezoidal"}
    assert "Hermite–Simpson" not in c.summary.value and "implicit" in c.figure.layout.title.text


def test_convergence_sliding_mass_and_bad_input():
    c = ConvergencePanel("sliding_mass", meshes=(10, 20), schemes=("trapezoidal",))
    pairs, fit = c.orders[("trapezoidal", "final_time")]
    assert fit == pytest.approx(2, abs=0.3)
    results = c.results
    for text, match in (("20, 10", "increasing"), ("10", "at least two"), ("10, x", "whole numbers")):
        c.meshes.value = text
        assert c.run() is None
        assert match in c.error and "ml-box-error" in c.message.value
        assert c.results is results  # the previous study stays on screen
    c.meshes.value = "10, 20"
    c.scheme_boxes["trapezoidal"].value = False
    assert c.run() is None and "check at least one" in c.error
    c.scheme_boxes["trapezoidal"].value = True
    assert c.run() is not None and c.error is None and c.message.value == ""


def test_convergence_reports_failed_solves(monkeypatch):
    """A task of the sweep that raises is a failed row of the table (its text shown), not a crash."""
    real_run_task = sweep_module.run_task

    def run_task(description, change, folder=None, previous=None):
        if change["solver.num_mesh_intervals"] > 10:
            change = dict(change, **{"solver.no_such_setting": 1})  # raises inside the task
        return real_run_task(description, change, folder, previous)

    monkeypatch.setattr(sweep_module, "run_task", run_task)
    c = ConvergencePanel("linear", meshes=(5, 10, 20), schemes=("trapezoidal",))
    assert [r["success"] for r in c.results] == [True, True, False]
    assert "no_such_setting" in c.results[2]["status"] and "no_such_setting" in c.table.value
    assert c.progress_bar.bar_style == "warning" and "1 of 3 solves failed" in c.progress_html.value
    assert c.sweep_result.column("change:solver.num_mesh_intervals") == [5, 10, 20]
    with pytest.raises(ValueError, match="no analytic reference"):
        ConvergencePanel("double_pendulum")


def test_convergence_runs_through_the_sweep_tool():
    """The panel's numbers are those of ml.sweep over the mesh sequence (serial here; on Dask in test_sweep)."""
    c = ConvergencePanel("linear", meshes=(5, 10), schemes=("hermite-simpson",))
    demo = demos.get_demo_problem("linear")
    settings = demos.default_settings(demo)
    direct = []
    for n in (5, 10):
        study = demos.apply_settings(demo.build(settings), settings)
        study.solver.transcription_scheme, study.solver.num_mesh_intervals = "hermite-simpson", n
        direct.append(study.solve())
    assert [r["nit"] for r in c.results] == [s.nit for s in direct]
    ref = demo.reference(settings)
    for row, sol in zip(c.results, direct):
        assert row["errors"]["states"] == solution_errors(ref, sol, ["states"])["states"]


# -------------------------------------------------- suspended mass (Moco paper, Figure 4)
def test_suspended_mass_panel_effort_exponent():
    """Raising the effort exponent to 4 changes how the three muscles share the load; previous stays overlaid."""
    p = SolvePanel(["suspended_mass"])
    assert repr(p) == "SolvePanel(problems=['suspended_mass'])"
    assert "three muscles" in p.header.value
    assert p.solution.success and p.mesh_intervals.value == 10  # fast mode
    assert set(p.goal_widgets) == {"effort", "time"}
    assert p.goal_widgets["effort"]["exponent"].value == 2.0
    assert p.goal_widgets["time"]["weight"].value == pytest.approx(0.01)
    assert "exponent" not in p.goal_widgets["time"]
    assert p.show_reference.layout.display == "none"  # no closed form
    names = [f"/forceset/{m}/activation" for m in ("left", "middle", "right")]
    first = p.solution
    act2 = {n: first.states[n].copy() for n in names}
    assert "previous" not in legend_names(p.figures["trajectories"])

    p.goal_widgets["effort"]["exponent"].value = 4
    second = p.solve()
    assert second is not None and second.success and p.error is None
    assert p.previous is first and p.solution is second
    assert p.settings()["goals"]["effort"]["exponent"] == 4
    act4 = {n: second.states[n] for n in names}
    assert max(abs(act4[n].max() - act2[n].max()) for n in names) > 1e-3
    assert max(act4[n].max() for n in names) < max(act2[n].max() for n in names)  # the peak is spread out
    fig = p.figures["trajectories"]
    assert {"solution", "previous"} <= legend_names(fig)
    assert len(fig.layout.annotations) == 10  # 4 coordinate states + 3 activations + 3 excitations
    assert p.message.value == ""

    # A heavier final-time penalty makes the motion faster.
    p.goal_widgets["time"]["weight"].value = 1.0
    third = p.solve()
    assert third.success and third.final_time < second.final_time - 1e-3


def test_suspended_mass_path_figure():
    """The extra "path" figure: in its own output, the solved x-y positions, origins, previous faded."""
    p = SolvePanel(["suspended_mass"])
    sol = p.solution
    assert set(p.figures) == {"trajectories", "cost", "history", "path"}
    assert list(p.extra_outs) == ["path"] and list(p.extra_box.children) == [p.extra_outs["path"]]
    fig = plotly_bundle(p.extra_outs["path"])
    assert fig["layout"]["title"]["text"] == "Path of the mass (predict)"
    traces = {t["name"]: t for t in fig["data"]}
    x, y = values(traces["solution"]["x"]), values(traces["solution"]["y"])
    assert x == pytest.approx(list(sol.states["/jointset/tx/tx/value"]))
    assert y == pytest.approx(list(sol.states["/jointset/ty/ty/value"]))
    assert (x[0], y[0], x[-1], y[-1]) == pytest.approx((-0.14, -0.20, 0.14, -0.15))
    origins = {n: (t["x"][0], t["y"][0]) for n, t in traces.items() if n.endswith(" origin")}
    assert origins == {"left origin": (-0.2, 0.0), "middle origin": (0.0, 0.0), "right origin": (0.2, 0.0)}
    snapshots = [n for n in traces if n.startswith("t = ")]
    assert len(snapshots) == 3 and snapshots[-1] == f"t = {sol.final_time:.3g} s"
    assert "previous" not in traces

    p.goal_widgets["time"]["weight"].value = 1.0  # faster
    second = p.solve()
    assert second.success
    fig = p.figures["path"]
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["previous"].x) == pytest.approx(list(sol.states["/jointset/tx/tx/value"]))
    assert list(by_name["solution"].x) == pytest.approx(list(second.states["/jointset/tx/tx/value"]))
    assert plotly_bundle(p.extra_outs["path"])["data"][0]["name"] == "previous"

    # A failed solve draws its last iterate, labelled as such.
    p.max_iterations.value = 2
    failed = p.solve()
    assert not failed.success
    assert f"last iterate ({failed.status})" in legend_names(p.figures["path"])
    assert "peak activation" not in p.numbers.value  # extra numbers only for a solution


def test_suspended_mass_tracking_mode():
    """track: the predicted motion is tracked; exponent 2 recovers its activations, exponent 4 does not.

    Fast mode (N = 10 for prediction and tracking, implicit tracking with the exact Hessian): about 0.14% and 10.8%
    of the peak (Moco 4.6 at N = 100 / 138: 0.21-0.33% and 10.7-11.1%).
    """
    p = SolvePanel(["suspended_mass"])
    predicted = p.solution
    p.option_widgets["task"].value = "track"  # re-poses the problem and solves it
    # no error; at most the amber note of a solve that stopped at IPOPT's acceptable level
    assert p.error is None and (p.message.value == "" or "ml-box-warn" in p.message.value), p.message.value
    assert p.mode.value == "implicit" and p.hessian.value == "exact"  # the task's presets
    assert "exact Hessian" in p.numbers.value
    assert set(p.goal_widgets) == {"state_tracking", "control_effort"}
    weight = p.goal_widgets["state_tracking"]["weight"]
    assert type(weight).__name__ == "FloatText" and weight.value == pytest.approx(10)
    slider = next(w for w in p.goals_box.children if type(w).__name__ == "FloatLogSlider")
    assert slider.value == pytest.approx(10) and 10 ** slider.min == pytest.approx(0.1)
    slider.value = 0.5  # dragging the log slider types the number ...
    assert weight.value == pytest.approx(0.5)
    weight.value = 10.0  # ... and typing a number moves the slider
    assert slider.value == pytest.approx(10)
    assert p.goal_widgets["control_effort"]["weight"].value == pytest.approx(0.001)
    assert p.goal_widgets["control_effort"]["exponent"].value == 2
    track2 = p.solution
    assert track2.success and set(track2.goal_values) == {"state_tracking", "control_effort"}
    assert track2.final_time == pytest.approx(predicted.final_time, rel=1e-6)  # the prediction's t_f, fixed
    prediction = demos.suspended_mass_prediction(p.settings())
    assert prediction.final_time == pytest.approx(predicted.final_time, rel=1e-6)  # same problem as predict
    rms2 = problems.suspended_mass_activation_rms(track2, prediction)
    assert rms2 < 1.0  # exponent 2 recovers the prediction's activations
    assert f"RMS {rms2:.3g}% of peak" in p.numbers.value and "activations vs prediction" in p.numbers.value
    assert p.previous is None  # a new task: the faded 'previous' curves belong to one problem only
    path = {t.name: t for t in p.figures["path"].data}
    assert "prediction (tracked)" in path and "previous" not in path
    assert "track" in p.figures["path"].layout.title.text
    assert list(path["solution"].y) == pytest.approx(list(track2.states["/jointset/ty/ty/value"]))

    p.goal_widgets["control_effort"]["exponent"].value = 4
    track4 = p.solve()
    assert track4.success and p.error is None
    rms4 = problems.suspended_mass_activation_rms(track4, prediction)
    assert rms4 > 5.0 and rms4 > 20 * rms2  # muscle redundancy: the effort exponent decides
    assert f"RMS {rms4:.3g}% of peak" in p.numbers.value
    assert p.previous is track2 and "previous" in {t.name for t in p.figures["path"].data}
    # The positions are tracked about equally well in both cases.
    pos = ["/jointset/tx/tx/value", "/jointset/ty/ty/value"]
    assert track4.rms_difference(prediction, pos) < 1e-3 and track2.rms_difference(prediction, pos) < 1e-3
    assert demos.suspended_mass_prediction(p.settings()) is prediction  # solved once, cached

    # A lighter tracking weight lets the positions (and the activations) drift from the prediction.
    p.goal_widgets["control_effort"]["exponent"].value = 2
    assert (slider.min, slider.max) == pytest.approx((-1, 2))  # log10 of the range 0.1 ... 100
    slider.value = 1.0
    assert weight.value == pytest.approx(1.0)
    loose = p.solve()
    assert loose.success and p.settings()["goals"]["state_tracking"]["weight"] == pytest.approx(1.0)
    assert loose.rms_difference(prediction, pos) > 3 * track2.rms_difference(prediction, pos)
    assert problems.suspended_mass_activation_rms(loose, prediction) > rms2
    weight.value = 1000.0  # a typed number outside the slider's range widens it: never clipped
    assert slider.value == pytest.approx(1000) and slider.max == pytest.approx(3)
    assert p.settings()["goals"]["state_tracking"]["weight"] == pytest.approx(1000)

    # Bad settings are shown in the panel, never a silent wrong answer.
    p.goal_widgets["control_effort"]["exponent"].value = 1.5
    assert p.solve() is None and "exponent must be a finite number &gt;= 2" in p.message.value
    p.goal_widgets["control_effort"]["exponent"].value = 2
    p.max_iterations.value = 2  # the prediction to track cannot converge
    assert p.solve() is None
    assert "prediction to track did not converge" in p.message.value and "ml-box-error" in p.message.value
    assert not p.solve_button.disabled
    p.max_iterations.value = 3000

    # Back to predict: the prediction's goals again, explicit mode.
    p.option_widgets["task"].value = "predict"
    assert set(p.goal_widgets) == {"effort", "time"} and p.mode.value == "explicit"
    assert p.hessian.value == "default" and p.settings()["hessian"] is None  # the problem's: limited-memory
    assert "exact Hessian" not in p.numbers.value
    assert p.solution.success and p.message.value == ""
    assert p.solution.final_time == pytest.approx(predicted.final_time, rel=1e-6)
    assert "activations vs prediction" not in p.numbers.value


def test_extra_figure_and_number_hooks_report_errors():
    """A DemoProblem's extra_figures / extra_numbers are rendered; their errors are shown, not raised."""
    import plotly.graph_objects as go

    base = demos.get_demo_problem("linear")
    calls = []

    def figures(solution, previous, settings):
        calls.append((solution, previous))
        if settings["mesh_intervals"] == 7:
            raise RuntimeError("cannot draw this")
        return {"control": go.Figure(go.Scatter(x=solution.time, y=solution.controls["/forceset/coordinateactuator"])),
                "final": go.Figure(go.Bar(x=["q"], y=[solution.states["/jointset/j/coord/value"][-1]]))}

    def numbers(solution, settings):
        if settings["mesh_intervals"] == 8:
            raise ValueError("no number")
        return {"final q": f"{solution.states['/jointset/j/coord/value'][-1]:.3f}"}

    demo = demos.DemoProblem(key="hooked", title="hooked", description="", build=base.build,
                             reference=base.reference, metrics=base.metrics, extra_figures=figures,
                             extra_numbers=numbers)
    p = SolvePanel(demo)
    assert set(p.figures) == {"trajectories", "cost", "history", "control", "final"}
    assert list(p.extra_outs) == ["control", "final"]
    assert plotly_bundle(p.extra_outs["final"])["data"][0]["y"] == [pytest.approx(5.0)]
    assert "final q: <b>5.000</b>" in p.numbers.value and calls[-1] == (p.solution, None)

    p.mesh_intervals.value = 7
    assert p.solve().success
    assert "Could not draw the problem&#x27;s extra figures" in p.message.value and "cannot draw this" in p.error
    assert "Not drawn" in str(plotly_bundle(p.extra_outs["control"]))  # no stale figure of another solution

    p.mesh_intervals.value = 8
    assert p.solve().success
    assert "extra numbers" in p.message.value and "no number" in p.error
    assert "Solve_Succeeded" in p.numbers.value

    p.mesh_intervals.value = 10
    assert p.solve().success and p.message.value == "" and "final q" in p.numbers.value

    clash = demos.DemoProblem(key="clash", title="clash", description="", build=base.build,
                              extra_figures=lambda s, prev, settings: {"cost": go.Figure()})
    p = SolvePanel(clash)
    assert p.solution.success and "clash with the panel" in p.error
    assert isinstance(p.figures["cost"].data[0], go.Bar)  # the panel's own figure is kept


def test_after_solve_hook_sees_every_solve_and_its_errors_are_shown():
    """DemoProblem.after_solve runs after each completed solve (failed ones too, unsealed); an error in it is
    shown in the panel and the plots are still drawn."""
    base = demos.get_demo_problem("linear")
    seen = []

    def after(solution, settings):
        seen.append((solution.success, settings["max_iterations"]))
        if settings["mesh_intervals"] == 9:
            raise RuntimeError("hook broke")

    demo = demos.DemoProblem(key="after", title="after", description="", build=base.build, after_solve=after)
    p = SolvePanel(demo)
    assert seen == [(True, 3000)]
    p.max_iterations.value = 1
    assert not p.solve().success and seen[-1] == (False, 1)
    p.max_iterations.value = 3000
    p.mesh_intervals.value = 9
    assert p.solve().success and "after-solve hook" in p.message.value and "hook broke" in p.error
    assert "trajectories" in p.figures and len(seen) == 3


def test_figure_with_controls_redraws_and_reports_errors():
    """The lessons' interactive figures: drawn at once with the controls' values, redrawn when one changes, an error
    in the drawing shown in place of the figure (the controls keep working)."""
    import ipywidgets as W
    import plotly.graph_objects as go

    from moco_lab.ui.components import figure_with_controls

    calls = []

    def draw(a, b):
        calls.append((a, b))
        if a < 0:
            raise ValueError("a must be >= 0")
        return go.Figure(go.Scatter(x=[0, 1], y=[a, b]))

    a, b = W.FloatSlider(value=1.0, min=-2, max=2), W.IntSlider(value=3)
    box = figure_with_controls(draw, {"a": a, "b": b})
    out = box.children[-1]
    assert calls == [(1.0, 3)] and list(box.children[:2]) == [a, b]
    assert out.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"][0]["y"] == [1.0, 3]
    b.value = 5
    assert calls[-1] == (1.0, 5) and out.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"][0]["y"] == [1.0, 5]
    a.value = -1.0
    assert out.outputs[0]["output_type"] == "stream" and "ValueError: a must be >= 0" in out.outputs[0]["text"]
    a.value = 0.5
    assert out.outputs[0]["output_type"] == "display_data"
    side = figure_with_controls(draw, {"a": a, "b": b}, side=True)
    assert isinstance(side, W.HBox)
