"""ml.sweep: one study over many changes, serially and on Dask workers, with the same answers."""
import os
import signal
import sys
import warnings

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.tools.sweep import apply_change, grid, sweep

MESHES = {"solver.num_mesh_intervals": [10, 20], "solver.transcription_scheme": ["trapezoidal", "hermite-simpson"]}


@pytest.fixture
def study():
    return ml.examples.sliding_mass_study()


def test_grid_and_changes(study):
    assert grid(a=[1, 2], b=[3]) == [{"a": 1, "b": 3}, {"a": 2, "b": 3}]
    with pytest.raises(ValueError, match="no values for 'a'"):
        grid(a=[])
    apply_change(study, {"solver.num_mesh_intervals": 7, "goal.time.weight": 2.0})
    assert study.solver.num_mesh_intervals == 7 and study.problem.get_goal("time").weight == 2.0
    with pytest.raises(KeyError, match="cannot apply 'mesh'"):
        apply_change(study, {"mesh": 3})


def test_serial_sweep_table_and_bad_inputs(study, tmp_path):
    result = sweep(study, MESHES, client=None, folder=tmp_path)
    assert len(result.rows) == 4 and all(result.column("success"))
    assert result.column("change:solver.num_mesh_intervals") == [10, 10, 20, 20]
    # each row is the study solved with its change: the same numbers as solving it by hand
    by_hand = apply_change(ml.examples.sliding_mass_study(), {"solver.num_mesh_intervals": 20,
                                                             "solver.transcription_scheme": "hermite-simpson"}).solve()
    assert result.rows[3]["objective"] == by_hand.objective and result.rows[3]["iterations"] == by_hand.nit
    assert result.rows[3]["goal:time"] == by_hand.goal_values["time"]
    # a rerun loads what is done (solutions included), solves nothing
    again = sweep(study, MESHES, client=None, folder=tmp_path)
    assert again.reused == 4 and again.column("objective") == result.column("objective")
    assert isinstance(again.solutions[1], ml.Solution) and np.array_equal(again.solutions[1].time,
                                                                           result.solutions[1].time)
    with pytest.raises(ValueError, match="no changes"):
        sweep(study, [], client=None)
    with pytest.raises(AttributeError, match=r"change 0 .*Unknown setting 'num_mesh_interval'"):
        sweep(study, [{"solver.num_mesh_interval": 5}], client=None)
    with pytest.raises(KeyError, match=r"change 1 .*Unknown goal .*effort"):
        sweep(study, [{"goal.time.weight": 1.0}, {"goal.effort.weight": 1.0}], client=None)


def test_a_failed_solve_is_a_row_not_a_crash(study):
    """Moving 1 m with |F| ≤ 50 N takes at least 0.4 s: a final time of 0.3 s is infeasible."""
    study.problem.set_time_bounds(0, (0.2, 2.0))
    result = sweep(study, [{"time.final": 0.3}, {"time.final": 0.5}], client=None)
    bad, good = result.rows
    assert not bad["success"] and bad["status"] != "error" and bad["error"] is None
    assert good["success"] and good["final_time"] == pytest.approx(0.5)


def test_dask_workers_give_the_serial_answers_bit_for_bit(study):
    pytest.importorskip("distributed")
    serial = sweep(study, MESHES, client=None)
    parallel = sweep(study, MESHES, client="local", workers=2)
    assert parallel.engine == "dask"
    for key in ("objective", "iterations", "status", "final_time", "goal:time"):
        assert parallel.column(key) == serial.column(key), key


def _sweep_killing_a_worker(study, client):
    """Six solves of about a second on ``client``; one worker process is killed when the first task finishes."""
    killed = []

    def kill_one(done, failed, total):
        if not killed:
            victim = sorted(client.scheduler_info()["workers"])[0]
            pid = client.run(os.getpid, workers=[victim])[victim]
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)  # the worker process dies mid-sweep

    changes = [{"solver.num_mesh_intervals": n} for n in (200, 250, 300, 350, 400, 450)]
    return sweep(study, changes, client=client, progress=kill_one), killed


def test_a_lost_worker_has_its_tasks_rerun(study):
    """Kill one of two worker processes after the first task finishes: every task still ends with a result. The
    cluster is ``local_workers``' (lesson 15's): two workers, warmed up on the study before the sweep."""
    pytest.importorskip("distributed")
    from moco_lab.tools.sweep import local_workers

    with local_workers(2, warm_up=study) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        warm = client.run(lambda: "pydrake" in sys.modules and "moco_lab.engine.transcription" in sys.modules)
        assert list(warm.values()) == [True, True]  # the warm-up imported pydrake and built the program
        # the two workers share the cores: each splits its evaluations over its share (moco_lab.symbolic.threads)
        from moco_lab.symbolic import threads

        share = client.run(threads.threads)   # run on each worker
        assert list(share.values()) == [max(1, threads.threads() // 2)] * 2
        # solves of about a second each: when the first one ends, both workers are busy with the next ones
        result, killed = _sweep_killing_a_worker(study, client)
    assert killed and all(result.column("success")) and len(result.rows) == 6
    assert result.column("change:solver.num_mesh_intervals") == [200, 250, 300, 350, 400, 450]


def test_a_task_that_kills_too_many_workers_is_a_row(study):
    """With no worker loss allowed, the task running on a killed worker fails (Dask's KilledWorker): that is a
    row with the exception's text, and the other tasks complete."""
    distributed = pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        result, killed = _sweep_killing_a_worker(study, client)
    assert killed and len(result.rows) == 6
    lost = [r for r in result.rows if not r["success"]]
    assert len(lost) >= 1 and all(r["status"] == "error" and "KilledWorker" in r["error"] for r in lost)
    assert all(r["success"] for r in result.rows if r["status"] != "error")
    assert all(s is None for s, r in zip(result.solutions, result.rows) if r["status"] == "error")


def test_sweep_progress_bar(study):
    from moco_lab.ui.progress import SweepProgress

    bar = SweepProgress("mesh study")
    result = sweep(study, [{"solver.num_mesh_intervals": 10}, {"solver.num_mesh_intervals": 20}], client=None,
                   progress=bar)
    assert bar.bar.value == bar.bar.max == 2 and bar.done == 2 and bar.failed == 0 and bar.bar.bar_style == "success"
    assert "2/2 done, 0 failed" in bar.label.value and all(result.column("success"))


def test_warm_start_continuation(study):
    """Each change starts from the previous solution: the same optima, fewer iterations than cold starts."""
    changes = [{"solver.num_mesh_intervals": 40, "goal.time.weight": w} for w in (1.0, 1.1, 1.2, 1.3)]
    cold = sweep(study, changes, client=None)
    warm = sweep(study, changes, client=None, warm_start=True)
    assert warm.column("warm_start") == [False, True, True, True] and not any(cold.column("warm_start"))
    # the same optimum to IPOPT's default tolerance: warm and cold runs stop at different points within it
    # (measured 2.2e-7 relative)
    assert warm.column("objective") == pytest.approx(cold.column("objective"), rel=1e-6)
    assert sum(warm.column("iterations")[1:]) < sum(cold.column("iterations")[1:])
    pytest.importorskip("distributed")
    chained = sweep(study, changes, client="local", workers=2, warm_start=True)
    assert chained.column("iterations") == warm.column("iterations")  # the same chain, on workers


def test_continuation_from_multipliers():
    """With ``optim_warm_start`` (exact Hessian, IPOPT + MUMPS) a continuation starts each task from the previous
    solution's multipliers as well as its motion, in this process and on Dask workers (Solution.duals travel with
    the solution): the sliding mass, its mass a held parameter, reaches the closed-form minimum time of each mass
    (to the mesh's error, as in the test above) in fewer iterations than from the motion alone."""
    base = ml.examples.sliding_mass_study(num_mesh_intervals=20)
    base.problem.add_parameter("mass", "/body/mass", (0.5, 5.0))
    base.solver.set_hessian_approximation("exact")
    changes = {"parameter.mass": [1.0, 1.2, 1.4]}
    runs = {}
    for warm in (False, True):
        base.solver.optim_warm_start = warm
        runs[warm] = ml.sweep(base, changes, client=None, warm_start=True)
        assert all(runs[warm].column("success"))
        for m, sol in zip(changes["parameter.mass"], runs[warm].solutions):
            assert sol.final_time == pytest.approx(2 * (m / 50) ** 0.5, rel=5e-3)
    first, *rest = runs[True].solutions
    assert "optim_warm_start ignored: there is no guess" in first.message
    assert all("warm start: the guess's multipliers" in sol.message for sol in rest)
    assert sum(runs[True].column("iterations")[1:]) < sum(runs[False].column("iterations")[1:]), \
        (runs[True].column("iterations"), runs[False].column("iterations"))
    pytest.importorskip("distributed")
    chained = ml.sweep(base, changes, client="local", workers=2, warm_start=True)
    assert chained.column("iterations") == runs[True].column("iterations")   # the multipliers reached the workers
    assert all("warm start: the guess's multipliers" in sol.message for sol in chained.solutions[1:])


def test_parameter_changes_hold_a_parameter_and_share_one_compiled_model():
    """``"parameter.<name>"`` fixes a problem parameter (its bounds set to the value): the sliding mass with its mass as
    a parameter, held at 1 and 3 kg, reaches the minimum time 2·sqrt(m d / F) of each mass (to the mesh's error), and
    both tasks leave the model as it is (the mass stays a variable of the compiled equations, not a constant)."""
    base = ml.examples.sliding_mass_study(num_mesh_intervals=20)
    base.problem.add_parameter("mass", "/body/mass", (0.5, 5.0))
    result = ml.sweep(base, {"parameter.mass": [1.0, 3.0]}, client=None)
    assert all(result.column("success"))
    for m, sol in zip((1.0, 3.0), result.solutions):
        assert sol.parameters["mass"] == pytest.approx(m, abs=1e-9)
        assert sol.final_time == pytest.approx(2 * (m / 50) ** 0.5, rel=5e-3)  # ml.analysis.sliding_mass_tf_star
    studies = [apply_change(ml.Study.from_dict(base.to_dict()), {"parameter.mass": m}) for m in (1, 3)]
    assert studies[0].problem.model.description() == studies[1].problem.model.description()  # the model is untouched
    assert [s.problem.parameters[0].bounds.lower for s in studies] == [1.0, 3.0]
    with pytest.raises(KeyError, match="no parameter"):
        ml.sweep(base, {"parameter.stiffness": [1.0]}, client=None)


def test_metric_columns_of_your_own(study, tmp_path):
    """``metrics``: columns computed from each solution, in this process (any callable; also for tasks loaded from the
    folder); a metric that raises gives NaN and says why, without losing the sweep."""
    def peak_force(sol):
        return float(np.max(np.abs(sol.controls["/actuator"])))

    def broken(sol):
        raise RuntimeError("no such thing")

    changes = {"solver.num_mesh_intervals": [10, 20]}
    result = sweep(study, changes, client=None, folder=tmp_path, metrics={"peak_force": peak_force, "broken": broken})
    peaks = result.column("metric:peak_force")
    assert all(p == pytest.approx(50.0, rel=1e-6) for p in peaks)  # bang-bang at the force bound
    assert all(np.isnan(result.column("metric:broken")))
    assert all("metric 'broken'" in e and "no such thing" in e for e in result.column("error"))
    again = sweep(study, changes, client=None, folder=tmp_path, metrics={"peak_force": peak_force})
    assert again.reused == 2 and again.column("metric:peak_force") == peaks


def test_workers_get_glibc_default_heap_trimming_back(monkeypatch):
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which slows solves by about a third
    (benchmarks/sweep_scaling.md); a task raises the threshold once per process, and only where it was set."""
    import ctypes

    import moco_lab.tools.sweep as sweep_module

    calls = []

    class Libc:
        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    monkeypatch.setattr(sweep_module.sys, "platform", "linux")
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.setattr(sweep_module, "_MALLOC_CHECKED", False)
    sweep_module._undo_small_trim_threshold()
    assert calls == []  # a process started without the variable keeps glibc's own behaviour
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setattr(sweep_module, "_MALLOC_CHECKED", False)
    sweep_module._undo_small_trim_threshold()
    sweep_module._undo_small_trim_threshold()
    assert calls == [(-1, 64 * 2**20)]  # M_TRIM_THRESHOLD, once


def test_load_a_results_folder_and_the_text_bar(study, tmp_path):
    """A folder filled by two sweeps loads back as one table, ordered by the changes' values."""
    from moco_lab.tools.sweep import load_sweep, text_bar

    first = sweep(study, [{"solver.num_mesh_intervals": n} for n in (20, 5)], client=None, folder=tmp_path)
    sweep(study, [{"solver.num_mesh_intervals": 10}], client=None, folder=tmp_path)
    assert all(r["wall_time"] >= r["solve_time"] > 0 for r in first.rows)  # the task: rebuild + transcribe + solve
    loaded = load_sweep(tmp_path)
    assert loaded.column("change:solver.num_mesh_intervals") == [5, 10, 20]  # by value, not as text
    assert loaded.rows[2]["objective"] == first.rows[0]["objective"] and loaded.reused == 3
    assert isinstance(loaded.solutions[0], ml.Solution)
    assert np.array_equal(loaded.solutions[2].time, first.solutions[0].time)
    with pytest.raises(FileNotFoundError, match="no folder"):
        load_sweep(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no sweep results"):
        load_sweep(tmp_path / "empty")
    assert text_bar(6, 1, 10, 12.0) == ("sweep [##################............] 6/10 done, 1 failed, 12 s, "
                                        "about 8 s left")
    assert text_bar(10, 0, 10, 20.0).endswith("10/10 done, 0 failed, 20 s")


_PENDULUM = """<?xml version="1.0"?>
<OpenSimDocument Version="40000"><Model name="pendulum">
  <BodySet><objects><Body name="b"><mass>MASS</mass><mass_center>0 -0.5 0</mass_center>
    <inertia>0.01 0.01 0.01 0 0 0</inertia></Body></objects></BodySet>
  <JointSet><objects>
    <PinJoint name="j"><socket_parent_frame>/ground</socket_parent_frame>
      <socket_child_frame>/bodyset/b</socket_child_frame>
      <coordinates><Coordinate name="q"><range>-3 3</range></Coordinate></coordinates></PinJoint>
  </objects></JointSet>
  <ForceSet><objects><CoordinateActuator name="tau"><coordinate>q</coordinate><optimal_force>1</optimal_force>
  </CoordinateActuator></objects></ForceSet>
</Model></OpenSimDocument>"""


def _pendulum_study(path):
    study = ml.Study("pendulum")
    study.problem.set_model(ml.read_osim(path))
    study.problem.set_time_bounds(0, 1.0)
    study.problem.set_state_info("/jointset/j/q/value", (-3, 3), 0.0, 0.5)
    study.problem.set_state_info("/jointset/j/q/speed", (-20, 20), 0.0, 0.0)
    study.problem.add_goal(ml.ControlGoal("effort"))
    return study


def test_a_sweep_folder_notices_when_the_model_file_changes(tmp_path):
    """The task hash holds the model file's SHA-256: after the file changed, the old study's sweep is refused
    (naming the file), the re-read study's sweep solves anew rather than reuse the old solution, and
    load_sweep warns about the tasks solved with the old file."""
    from moco_lab.tools.sweep import load_sweep

    osim, folder = tmp_path / "pendulum.osim", tmp_path / "results"
    osim.write_text(_PENDULUM.replace("MASS", "1"))
    study = _pendulum_study(osim)
    change = [{"solver.num_mesh_intervals": 5}]
    first = sweep(study, change, client=None, folder=folder)
    assert first.rows[0]["success"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # unchanged data: no warning
        assert load_sweep(folder).reused == 1
    osim.write_text(_PENDULUM.replace("MASS", "2"))
    with pytest.raises(ValueError, match=r"sweep: The model file '.*pendulum\.osim' changed since it was read"):
        sweep(study, change, client=None, folder=folder)
    again = sweep(_pendulum_study(osim), change, client=None, folder=folder)
    assert again.reused == 0 and again.rows[0]["task"] != first.rows[0]["task"]
    assert again.rows[0]["objective"] > 1.5 * first.rows[0]["objective"]   # twice the mass to lift
    with pytest.warns(UserWarning, match=r"load_sweep: 1 task\(s\) were solved with '.*pendulum\.osim', which has "
                                         r"changed since .*" + first.rows[0]["task"]):
        both = load_sweep(folder)
    assert both.reused == 2
    osim.unlink()
    with pytest.warns(UserWarning, match=r"load_sweep: 2 task\(s\) were solved with .*which has gone since"):
        load_sweep(folder)


def test_the_solve_log_names_each_sweep_task(tmp_path, monkeypatch):
    """benchmarks/robustness.py compares solves across BLAS kernels row by row; a sweep's tasks finish in varying
    order on workers, so each logged solve carries its task's hash (the same on every machine) to be matched by."""
    import json

    log = tmp_path / "solves.jsonl"
    monkeypatch.setenv("MOCO_LAB_SOLVE_LOG", str(log))
    result = sweep(ml.examples.sliding_mass_study(num_mesh_intervals=5),
                   [{"solver.num_mesh_intervals": n} for n in (5, 6)], client=None)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["task"] for r in records] == [row["task"] for row in result.rows]
    assert [r["N"] for r in records] == [5, 6]
    assert [json.loads(r["change"]) for r in records] == [{"solver.num_mesh_intervals": n} for n in (5, 6)]
    assert "MOCO_LAB_SOLVE_TASK" not in os.environ   # restored after each task
    assert "MOCO_LAB_SOLVE_CHANGE" not in os.environ


def test_robustness_pairs_sweep_tasks_by_their_change(tmp_path):
    """A sweep whose study starts from an earlier solution has a description (and so a task hash) that differs
    between BLAS kernels; the robustness table pairs its rows by what each task changes (lesson 08's fixed
    stiffnesses were once compared across kernels in another order)."""
    import json

    from benchmarks.robustness import collect

    def log(name, order, hashes):
        path = tmp_path / name
        lines = [{"test": "", "label": "lessons/08.ipynb", "task": "", "change": "", "objective": 1.0}]
        lines += [{"test": "", "label": "lessons/08.ipynb", "task": hashes[k],
                   "change": json.dumps({"k": k}), "objective": float(k)} for k in order]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return collect(path)["lessons/08.ipynb"]

    first = log("a.jsonl", [20, 100, 50], {20: "ff", 50: "00", 100: "77"})
    second = log("b.jsonl", [50, 20, 100], {20: "01", 50: "fe", 100: "aa"})
    assert [r["objective"] for r in first] == [r["objective"] for r in second] == [1.0, 100.0, 20.0, 50.0]


def test_local_workers_refuses_bad_arguments(study):
    from moco_lab.tools.sweep import local_workers

    for n in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match="local_workers: n must be a positive integer"):
            with local_workers(n):
                pass
    with pytest.raises(TypeError, match="local_workers: warm_up must be a moco_lab Study, got dict"):
        with local_workers(1, warm_up=study.to_dict()):
            pass
