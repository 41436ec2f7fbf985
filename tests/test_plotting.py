"""Tests of ``moco_lab.viz.plotting``: ``plot_trajectories``, ``plot_path`` and ``plot_path_forces``."""


import numpy as np
import plotly.graph_objects as go
import pytest

import moco_lab as ml
from moco_lab.results.trajectory import Solution, Trajectory
from moco_lab.viz.plotting import plot_path, plot_path_forces, plot_trajectories, short_names

Q = "/jointset/slider/position/value"
U = "/jointset/slider/position/speed"
F = "/forceset/actuator"
LAMBDA = "lambda_cid0_p0"


def make_trajectory(scale: float = 1.0, n: int = 11) -> Trajectory:
    time = np.linspace(0.0, 1.0, n)
    return Trajectory(
        time,
        states={Q: scale * time**2, U: scale * 2 * time},
        controls={F: scale * np.ones(n)},
        multipliers={LAMBDA: scale * np.sin(time)},
    )


def subplot_titles(fig: go.Figure) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def axes_used(fig: go.Figure) -> set[str]:
    return {trace.xaxis for trace in fig.data}


def test_two_trajectories(tmp_path):
    a, b = make_trajectory(1.0), make_trajectory(2.0)
    fig = plot_trajectories([a, b], labels=["solution", "guess"], title="Sliding mass")
    assert isinstance(fig, go.Figure) and not isinstance(fig, go.FigureWidget)
    # States then controls, one subplot each, short titles.
    assert subplot_titles(fig) == ["position/value", "position/speed", "actuator"]
    assert len(axes_used(fig)) == 3
    assert len(fig.data) == 2 * 3
    assert fig.layout.title.text == "Sliding mass"
    for label in ("solution", "guess"):
        traces = [t for t in fig.data if t.name == label]
        assert len(traces) == 3
        assert len({t.legendgroup for t in traces}) == 1
        assert sum(bool(t.showlegend) for t in traces) == 1  # one legend entry per trajectory
        assert len({t.line.color for t in traces}) == 1  # consistent color
        assert all(t.mode == "lines" for t in traces)
    colors = {t.name: t.line.color for t in fig.data}
    assert colors["solution"] != colors["guess"]
    # The data are the trajectories' own.
    q_guess = next(t for t in fig.data if t.name == "guess" and t.xaxis == fig.data[0].xaxis)
    assert np.array_equal(q_guess.y, b.states[Q])
    assert np.array_equal(q_guess.x, b.time)
    # Axis labels: time on the x axes of the bottom subplots, no units on y.
    x_titles = {fig.layout[name].title.text for name in fig.layout if name.startswith("xaxis")}
    assert "time (s)" in x_titles
    y_titles = [fig.layout[name].title.text for name in fig.layout if name.startswith("yaxis")]
    assert "state" in y_titles and "control" in y_titles
    fig.write_html(tmp_path / "figure.html")  # serializable


def test_single_trajectory_and_grid():
    fig = plot_trajectories(make_trajectory(), columns=1)
    assert len(fig.data) == 3
    assert fig.data[0].name == "trajectory"
    # One column: three rows, each with its own x axis on distinct rows.
    domains = sorted({tuple(fig.layout[t.yaxis.replace("y", "yaxis")].domain) for t in fig.data})
    assert len(domains) == 3


def test_names_filter():
    a, b = make_trajectory(1.0), make_trajectory(2.0)
    fig = plot_trajectories([a, b], names=[U, LAMBDA])
    assert subplot_titles(fig) == ["position/speed", LAMBDA]
    assert len(fig.data) == 4
    assert {t.name for t in fig.data} == {"trajectory 1", "trajectory 2"}
    fig = plot_trajectories(a, names=F)
    assert subplot_titles(fig) == ["actuator"] and len(fig.data) == 1


def test_faded_traces_are_drawn_first():
    a, previous = make_trajectory(1.0), make_trajectory(0.5)
    fig = plot_trajectories(a, faded=[previous, make_trajectory(0.25)])
    assert len(fig.data) == 3 * 3
    faded = fig.data[:6]
    assert all(t.line.dash == "dash" and t.legendgroup == "faded" for t in faded)
    assert sum(bool(t.showlegend) for t in faded) == 1
    assert all(t.line.dash is None for t in fig.data[6:])
    assert len({t.line.color for t in faded}) == 1
    assert faded[0].line.color != fig.data[6].line.color


def test_unknown_name_raises_helpful_key_error():
    with pytest.raises(KeyError, match=r"position/valeu.*Did you mean '/jointset/slider/position/value'"):
        plot_trajectories(make_trajectory(), names=["/jointset/slider/position/valeu"])


def test_variable_missing_from_one_trajectory():
    a = make_trajectory()
    b = Trajectory(a.time, states={Q: a.states[Q]})
    fig = plot_trajectories([a, b], labels=["full", "partial"])
    assert len(fig.data) == 3 + 1
    assert sum(bool(t.showlegend) for t in fig.data if t.name == "partial") == 1


def test_labels_must_match():
    with pytest.raises(ValueError, match="2 labels for 1 trajectories"):
        plot_trajectories([make_trajectory()], labels=["a", "b"])


def test_hermite_simpson_grid():
    # Mesh points and midpoints: 2N + 1 times, drawn as plain lines.
    traj = make_trajectory(n=2 * 10 + 1)
    fig = plot_trajectories(traj)
    assert all(len(t.x) == 21 and t.mode == "lines" for t in fig.data)


def test_sealed_solution():
    solution = Solution(make_trajectory(), success=False, status="Infeasible_Problem_Detected",
                        message="infeasible", objective=1.0, goal_values={"goal": 1.0}, nit=3, solve_time=0.1)
    with pytest.raises(RuntimeError, match="sealed"):
        plot_trajectories(solution)
    fig = plot_trajectories(solution.unseal())
    assert len(fig.data) == 3 and fig.data[0].name == "solution"


def test_short_names():
    names = ["/jointset/a/q/value", "/jointset/b/q/value", "/forceset/act", "lambda", "/x/accel"]
    groups = ["states", "states", "controls", "multipliers", "derivatives"]
    assert short_names(names, groups) == ["a/q/value", "b/q/value", "act", "lambda", "x/accel"]


# ------------------------------------------------------------------ plot_path
X, Y = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
ORIGINS = {"left": (-0.2, 0.0), "middle": (0.0, 0.0), "right": (0.2, 0.0)}


def make_path(shift: float = 0.0, n: int = 11) -> Trajectory:
    time = np.linspace(0.0, 0.4, n)
    return Trajectory(time, states={X: np.linspace(-0.14, 0.14, n) + shift,
                                    Y: -0.2 + 0.05 * np.sin(np.pi * time / 0.4) + shift})


def test_plot_path_draws_the_positions_and_the_lines_to_the_anchors():
    traj, previous, reference = make_path(), make_path(0.01), make_path(-0.01)
    fig = plot_path(traj, X, Y, anchors=ORIGINS, faded=previous, references=[reference],
                    reference_labels=["prediction"], title="path")
    by_name = {}
    for t in fig.data:
        by_name.setdefault(t.name, []).append(t)
    path = by_name["solution"][0]
    np.testing.assert_array_equal(path.x, traj.states[X])
    np.testing.assert_array_equal(path.y, traj.states[Y])
    np.testing.assert_array_equal(by_name["previous"][0].x, previous.states[X])
    assert by_name["previous"][0].line.dash == "dash"
    np.testing.assert_array_equal(by_name["prediction"][0].y, reference.states[Y])
    assert fig.data[0].name == "previous"  # faded first, underneath
    for name, (ax, ay) in ORIGINS.items():
        (marker,) = by_name[f"{name} origin"]
        assert (marker.x[0], marker.y[0]) == (ax, ay) and marker.marker.symbol == "square"
    # Start, middle and end: a point plus one line from every origin to it.
    for t_snap in (0.0, 0.2, 0.4):
        lines, point = by_name[f"t = {t_snap:.3g} s"]
        px = float(np.interp(t_snap, traj.time, traj.states[X]))
        py = float(np.interp(t_snap, traj.time, traj.states[Y]))
        assert point.x[0] == pytest.approx(px) and point.y[0] == pytest.approx(py)
        assert [v for v in lines.x if v is not None] == pytest.approx([-0.2, px, 0.0, px, 0.2, px])
        assert [v for v in lines.y if v is not None] == pytest.approx([0.0, py] * 3)
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.title.text == "path"


def test_plot_path_without_anchors_and_errors():
    a, b = make_path(), make_path(0.02)
    fig = plot_path([a, b], X, Y, labels=["a", "b"], snapshots=(0.5,))
    assert [t.name for t in fig.data] == ["t = 0.2 s", "a", "b"]
    with pytest.raises(KeyError, match="Did you mean"):
        plot_path(a, X.replace("value", "valeu"), Y)
    with pytest.raises(ValueError, match="2 labels for 1 trajectories"):
        plot_path(a, X, Y, labels=["a", "b"])
    with pytest.raises(ValueError, match="at least one trajectory"):
        plot_path([], X, Y)
    sealed = Solution(a, success=False, status="x", message="", objective=1.0, goal_values={}, nit=1,
                      solve_time=0.1)
    with pytest.raises(RuntimeError, match="sealed"):
        plot_path(sealed, X, Y)


def _arrows(trace) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The segments ((x0, y0), (x1, y1)) of a None-separated line trace."""
    xs, ys = list(trace.x), list(trace.y)
    segs = []
    for k in range(0, len(xs), 3):
        assert xs[k + 2] is None and ys[k + 2] is None
        segs.append(((xs[k], ys[k]), (xs[k + 1], ys[k + 1])))
    return segs


def test_plot_path_forces_draws_arrows_from_the_path():
    traj = make_path(n=9)
    px, py = traj.states[X], traj.states[Y]
    fx, fy = np.full(9, 2.0), np.linspace(-1.0, 1.0, 9)
    fy[4] = 0.0
    fx[4] = 0.0  # a zero force: no arrow there
    curve = (np.linspace(-0.2, 0.2, 5), np.zeros(5))
    fig = plot_path_forces(traj, X, Y, {"push": (fx, fy), "pull": (-fx, -fy)}, curve=curve, curve_label="line",
                           scale=0.01, faded=make_path(0.01, n=9), title="forces")
    assert [t.name for t in fig.data] == ["line", "previous", "path", "push", "pull"]
    np.testing.assert_array_equal(fig.data[2].x, px)
    assert fig.layout.meta["arrow_scale"] == 0.01 and fig.layout.yaxis.scaleanchor == "x"
    segs = _arrows(fig.data[3])
    assert len(segs) == 3 * 8  # a shaft and two barbs per non-zero force
    shafts = segs[::3]
    for k, ((x0, y0), (x1, y1)) in zip([i for i in range(9) if i != 4], shafts):
        assert (x0, y0) == pytest.approx((px[k], py[k]))
        assert (x1 - x0, y1 - y0) == pytest.approx((0.01 * fx[k], 0.01 * fy[k]))
    for barb in segs[1::3] + segs[2::3]:  # barbs start at the tip of their shaft
        assert any(barb[0] == pytest.approx(s[1]) for s in shafts)
    (x0, y0), (x1, y1) = _arrows(fig.data[4])[0]
    assert (x1 - x0, y1 - y0) == pytest.approx((-0.02, 0.01))
    assert "N =" in fig.layout.annotations[0].text

    # Default scale: the longest arrow is 30% of the path's extent; every-th point only.
    fig = plot_path_forces(traj, X, Y, {"push": (fx, fy)}, every=2)
    extent = max(np.ptp(px), np.ptp(py))
    lengths = [np.hypot(b[0] - a[0], b[1] - a[1]) for a, b in _arrows(fig.data[-1])[::3]]
    assert len(lengths) == 4 and max(lengths) == pytest.approx(0.3 * extent)

    with pytest.raises(ValueError, match="expected 9 values"):
        plot_path_forces(traj, X, Y, {"push": (fx[:3], fy)})
    with pytest.raises(ValueError, match="every"):
        plot_path_forces(traj, X, Y, {"push": (fx, fy)}, every=0)
    with pytest.raises(KeyError):
        plot_path_forces(traj, "nope", Y, {})


def test_solution_plots_say_what_and_in_which_unit():
    sol = ml.examples.double_pendulum_study("hermite-simpson", "implicit", 6).solve()
    fig = plot_trajectories(sol, names=["/jointset/j0/q0/value", "/jointset/j0/q0/speed", "/tau0"])
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["q0 angle", "q0 angular velocity", "tau0 control"]
    assert [fig.layout[f"yaxis{k or ''}"].title.text for k in (0, 2, 3)] == [
        "angle (rad)", "angular velocity (rad/s)", "control (× 1 N·m)"]
    deg = plot_trajectories(sol, names=["/jointset/j0/q0/value"], degrees=True)
    assert deg.layout.yaxis.title.text == "angle (deg)"
    np.testing.assert_allclose(deg.data[0].y[-1], 90.0, rtol=1e-9)  # ends upright: π/2 rad


def test_muscle_variables_are_called_activation_and_excitation_on_the_unit_interval():
    study = ml.examples.suspended_mass_prediction_study(num_mesh_intervals=8)
    sol = study.solve()
    fig = plot_trajectories(sol, names=["/forceset/left/activation", "/forceset/left"])
    assert [a.text for a in fig.layout.annotations] == ["left activation", "left excitation"]
    assert fig.layout.yaxis.title.text == "activation" and fig.layout.yaxis2.title.text == "excitation"
    assert tuple(fig.layout.yaxis.range) == (-0.02, 1.02)
    sim = ml.simulate_solution(study, sol)  # simulations know their quantities too
    assert sim.quantities["/jointset/tx/tx/value"].axis_title() == "position (m)"
