"""Run one study over many changes — serially, or on Dask workers (a local cluster or any cluster).

A sweep is a list of *changes*, each a dict ``{setting: value}`` applied to a copy of the study:

* ``"solver.<name>"`` — a solver setting (``"solver.num_mesh_intervals"``, ``"solver.transcription_scheme"``);
* ``"goal.<name>.weight"`` (or another goal attribute, e.g. ``"goal.effort.exponent"``);
* ``"property.<path>"`` — a model property (``"property./forceset/spring/stiffness"``, see
  ``model.properties()``);
* ``"parameter.<name>"`` — a problem parameter held at this value (its bounds set to it): the same
  change as the property it stands for, but every task shares one compiled model, whereas a property
  is a constant of the compiled equations, so each value of a ``"property.…"`` sweep compiles its own;
* ``"time.final"`` — a fixed final time.

Pydrake objects do not pickle, so a task is the study's plain description (:meth:`Study.to_dict`, about a
kilobyte) plus its change; a worker rebuilds the study, applies the change and solves. Dask's
``distributed`` scheduler runs the tasks on single-threaded worker processes (``Solve`` holds the GIL) and
reruns the tasks of a worker that died. Each solution is written to ``folder`` under a hash of its task,
so running the same sweep again loads what is done instead of solving it again.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from ..modeling.library import data_files
from ..results.trajectory import Solution, read_trajectory
from ..symbolic import threads
from ..util.bounds import Bounds
from ..util.checks import finite_number
from ..util.data import file_sha256
from .study import Study

__all__ = ["sweep", "SweepResult", "grid", "apply_change", "run_task", "load_sweep", "text_bar", "local_workers"]

#: Columns of every row, before the change's own keys.
ROW_KEYS = ("task", "success", "status", "objective", "final_time", "iterations", "solve_time", "wall_time",
            "error", "warm_start")


def grid(**over: Sequence) -> list[dict]:
    """All combinations of the values given for each setting: ``grid(a=[1, 2], b=[3])`` → 2 changes."""
    if not over:
        raise ValueError("grid() needs at least one setting with values")
    keys = list(over)
    for k, values in over.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise TypeError(f"grid(): the values for {k!r} must be a list of values, got {values!r} (one value: "
                            f"[{values!r}])")
        if len(values) == 0:
            raise ValueError(f"grid(): no values for {k!r}")
    return [dict(zip(keys, combo)) for combo in product(*(over[k] for k in keys))]


def apply_change(study: Study, change: Mapping[str, Any]) -> Study:
    """Apply one change (see the module docstring) to ``study`` in place; ``KeyError``/``ValueError`` name the culprit."""
    for key, value in change.items():
        head, _, rest = key.partition(".")
        if head == "solver" and rest:
            setattr(study.solver, rest, value)  # unknown settings are refused with suggestions
        elif head == "goal" and "." in rest:
            name, attr = rest.rsplit(".", 1)
            goal = study.problem.get_goal(name)
            if not hasattr(goal, attr):
                raise KeyError(f"sweep: goal {name!r} has no attribute {attr!r}")
            setattr(goal, attr, value)
        elif head == "property" and rest:
            study.problem.model.set_property(rest, finite_number(value, key))
        elif head == "parameter" and rest:
            match = [p for p in study.problem.parameters if p.name == rest]
            if not match:
                raise KeyError(f"sweep: the problem has no parameter {rest!r}; it has "
                               f"{[p.name for p in study.problem.parameters]}")
            value = finite_number(value, key)
            match[0].bounds = Bounds.parse((value, value), f"parameter {rest!r}")
        elif key == "time.final":
            study.problem.set_time_bounds(study.problem.time_initial.lower,
                                          finite_number(value, "time.final", what="a final time in s"))
        else:
            raise KeyError(f"sweep: cannot apply {key!r}; use 'solver.<setting>', 'goal.<name>.<attribute>', "
                           "'property.<model property path>', 'parameter.<name>' or 'time.final'")
    return study


_MALLOC_CHECKED = False


def _undo_small_trim_threshold() -> None:
    """Give glibc's heap back its default trimming in a Dask worker (once per process).

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536`` (its config
    ``distributed.nanny.pre-spawn-environ``), so that data-frame workers hand freed memory back to the
    system. For a solve, which allocates and frees IPOPT's and SPRAL's work arrays at every iteration, that
    fixed small threshold costs about a third of the solve time (measured: the suspended-mass grid of
    lesson 15, 13.2 s on a worker against 10.3 s after this call; 12.9 s in a plain process started with
    the variable). Raising the threshold with ``mallopt`` restores the speed of a process started without
    the variable; memory freed at the top of the heap is still returned above 64 MiB.
    """
    global _MALLOC_CHECKED
    if _MALLOC_CHECKED:
        return
    _MALLOC_CHECKED = True
    if not os.environ.get("MALLOC_TRIM_THRESHOLD_") or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        M_TRIM_THRESHOLD = -1  # glibc's malloc.h
        libc.mallopt(M_TRIM_THRESHOLD, 64 * 2**20)
    except (OSError, AttributeError):  # not glibc: nothing to undo
        pass


def _task_id(description: dict, change: Mapping[str, Any]) -> str:
    text = json.dumps({"study": description, "change": change}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _change_text(change: Mapping[str, Any]) -> str:
    """The change as canonical text: what a task varies, the same on every machine even where its hash is not
    (a study whose guess is an earlier solution has a description that depends on the computer's rounding)."""
    return json.dumps(dict(change), sort_keys=True, default=str)


def _new_row(description: dict, change: Mapping[str, Any], warm_start: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(ROW_KEYS)
    row.update(task=_task_id(description, change), success=False, warm_start=warm_start,
               **{f"change:{k}": v for k, v in change.items()})
    return row


def _error_row(row: dict[str, Any], err: BaseException, seconds: float | None = None) -> dict[str, Any]:
    row.update(status="error", error="".join(traceback.format_exception_only(err)).strip(), wall_time=seconds)
    return row


def run_task(description: dict, change: Mapping[str, Any], folder: str | None = None,
             previous: tuple[dict, Solution | None] | None = None) -> tuple[dict, Solution | None]:
    """Rebuild the study from ``description``, apply ``change``, solve: ``(row, solution)``. Never raises.

    A task that raises (a bad change, a solver error) returns a row with ``status = "error"`` and the
    exception's text in ``error``. ``previous``: the result of the neighbouring task, whose solution (if it
    succeeded) is the initial guess (a warm start, ``row["warm_start"]`` says so).
    """
    _undo_small_trim_threshold()
    guess = previous[1] if previous is not None and previous[1] is not None and previous[0]["success"] else None
    row = _new_row(description, change, warm_start=guess is not None)
    start = time.perf_counter()
    before = {k: os.environ.get(k) for k in ("MOCO_LAB_SOLVE_TASK", "MOCO_LAB_SOLVE_CHANGE")}
    os.environ["MOCO_LAB_SOLVE_TASK"] = row["task"]  # names the task in the solve log (run_optimizer)
    os.environ["MOCO_LAB_SOLVE_CHANGE"] = _change_text(change)
    try:
        study = apply_change(Study.from_dict(description), change)
        if guess is not None:
            study.solver.guess = guess
        solution = study.solve()
    except Exception as err:  # the sweep goes on; the row says what happened
        return _error_row(row, err, time.perf_counter() - start), None
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    row.update(success=bool(solution.success), status=solution.status, objective=float(solution.objective),
               final_time=float(solution.final_time), iterations=int(solution.nit),
               solve_time=float(solution.solve_time), wall_time=time.perf_counter() - start)
    row.update({f"goal:{k}": float(v) for k, v in solution.goal_values.items()})
    if folder is not None:
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        if not solution.success:
            solution.unseal()
        solution.write_sto(path / f"{row['task']}.sto")
        # the data files the task read, with their hashes: load_sweep warns when one has changed since
        record = {**row, "files": data_files(description["model"])}
        (path / f"{row['task']}.json").write_text(json.dumps(record, default=str, indent=1))
    return row, solution


@dataclass
class SweepResult:
    """What a sweep returns.

    Attributes
    ----------
    rows : list of dict
        One per change, in the order given: the change (``change:<key>``), ``success``, ``status``,
        ``objective``, each goal's value (``goal:<name>``), your metrics (``metric:<name>``), ``final_time``,
        ``iterations``, ``solve_time`` (s, the optimizer's), ``wall_time`` (s, the whole task on its worker:
        rebuilding the study, transcribing, solving), ``error`` (text of an exception, if the task raised),
        ``warm_start`` and ``task`` (the hash naming its files in ``folder``).
    solutions : list of Solution or None
        Same order; None where the task raised.
    wall_time : float
        Seconds for the whole sweep.
    """

    rows: list[dict]
    solutions: list
    wall_time: float
    engine: str = "serial"
    reused: int = 0
    extra: dict = field(default_factory=dict)

    def column(self, key: str) -> list:
        """One column of the table (``"objective"``, ``"change:solver.num_mesh_intervals"``, ...)."""
        return [r.get(key) for r in self.rows]

    def to_dataframe(self) -> Any:
        """The table as a ``pandas.DataFrame`` (``pip install -e .[sweep]`` installs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.rows)


def text_bar(done: int, failed: int, total: int, elapsed: float, width: int = 30) -> str:
    """The terminal's progress line: ``sweep [#########.....] 6/10 done, 1 failed, 12 s, about 8 s left``."""
    filled = round(width * done / total) if total else width
    left = f", about {elapsed / done * (total - done):.0f} s left" if 0 < done < total else ""
    return (f"sweep [{'#' * filled}{'.' * (width - filled)}] {done}/{total} done, {failed} failed, "
            f"{elapsed:.0f} s{left}")


def load_sweep(folder: str | os.PathLike) -> SweepResult:
    """Every task a sweep has written to ``folder``, as a :class:`SweepResult` (rows and ``Solution`` s).

    For a folder that many sweeps or workers have filled (on a cluster, or by a class): no study is needed.
    Rows come in the order of their changes' values (then task hash). Only solved tasks have files (a task that
    raised has none), and a task whose two files are not both there is left out. ``wall_time`` of the result
    is 0 and ``reused`` the number of tasks loaded.
    """
    path = Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"load_sweep: no folder {str(path)!r}")
    loaded = [d for d in (_load_done(str(path), p.stem) for p in path.glob("*.json")) if d is not None]
    if not loaded:
        raise ValueError(f"load_sweep: {str(path)!r} holds no sweep results (<task>.json with its <task>.sto)")

    def value_key(v):  # numbers by value, anything else by its text
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, float(v), "")
        return (1, 0.0, json.dumps(v, sort_keys=True, default=str))

    def order(item):
        row = item[0]
        return tuple((k, *value_key(row[k])) for k in sorted(row) if k.startswith("change:")) + ((row["task"],),)

    loaded.sort(key=order)
    _warn_changed_files([(row["task"], files) for row, _, files in loaded], "load_sweep")
    return SweepResult([r for r, _, _ in loaded], [s for _, s, _ in loaded], 0.0, "folder", len(loaded))


def _warn_changed_files(tasks: Sequence[tuple[str, dict]], who: str) -> None:
    """A ``UserWarning`` naming each data file (model, external loads) that tasks (``(task, {path: sha256})``)
    were solved with and that has changed or gone since: their solutions belong to the old data."""
    stale: dict[str, list[str]] = {}
    current: dict[str, str | None] = {}  # each file hashed once, however many tasks name it
    for task, files in tasks:
        for path, sha in files.items():
            if path not in current:
                current[path] = file_sha256(path) if Path(path).is_file() else None
            if current[path] != sha:
                stale.setdefault(path, []).append(task)
    for path, tasks in stale.items():
        warnings.warn(f"{who}: {len(tasks)} task(s) were solved with {path!r}, which has "
                      f"{'changed' if Path(path).is_file() else 'gone'} since (SHA-256 differs); their solutions "
                      f"belong to the old file (tasks {tasks[:3]}{' ...' if len(tasks) > 3 else ''})", stacklevel=3)


def _load_done(folder: str | None, task: str) -> tuple[dict, Solution, dict] | None:
    """The row, solution and data files (``{path: sha256}``) of a task written to ``folder``, if both its
    files are there."""
    if folder is None:
        return None
    json_path, sto_path = Path(folder) / f"{task}.json", Path(folder) / f"{task}.sto"
    if not (json_path.exists() and sto_path.exists()):
        return None
    row = json.loads(json_path.read_text())
    files = row.pop("files", None) or {}
    traj = read_trajectory(sto_path)
    goals = {k[len("goal:"):]: v for k, v in row.items() if k.startswith("goal:")}
    solution = Solution(traj, success=row["success"], status=row["status"], message=f"loaded from {sto_path.name}",
                        objective=row["objective"], goal_values=goals, nit=row["iterations"],
                        solve_time=row["solve_time"])
    return row, solution, files


def _warm_up(description: dict) -> int:
    """On a worker: rebuild a study and build its program (imports pydrake, loads the compiled model)."""
    Study.from_dict(description).transcribe()
    return os.getpid()


@contextlib.contextmanager
def local_workers(n: int, warm_up: Study | None = None) -> Iterator[Any]:
    """A Dask cluster of ``n`` single-threaded worker processes on this machine, as a ``distributed.Client`` for
    :func:`sweep`'s ``client``; closed when the ``with`` block ends.

    With ``warm_up``, every worker first rebuilds that study and builds its program: it imports pydrake and loads
    the compiled model from the disk cache (compiling it if this machine never has), so that timing a sweep on the
    workers measures the sweep alone. ``sweep(..., client="local", workers=n)`` starts and closes such a cluster
    itself, without the warm-up.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"local_workers: n must be a positive integer (worker processes), got {n!r}")
    if warm_up is not None and not isinstance(warm_up, Study):
        raise TypeError(f"local_workers: warm_up must be a moco_lab Study, got {type(warm_up).__name__}")
    from distributed import Client, LocalCluster

    log = logging.getLogger("distributed")  # the scheduler runs in this process: keep its INFO lines out of notebooks
    level = log.level
    log.setLevel(max(level, logging.WARNING))
    try:
        # the workers share the cores: each evaluates its nodes on its share of them (moco_lab.symbolic.threads)
        env = {"MOCO_LAB_THREADS": str(max(1, threads.threads() // int(n)))}
        with LocalCluster(n_workers=int(n), threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR, env=env) as cluster, Client(cluster) as client:
            if warm_up is not None:
                client.run(_warm_up, warm_up.to_dict())
            yield client
    finally:
        log.setLevel(level)


def sweep(study: Study, changes: Sequence[Mapping[str, Any]] | Mapping[str, Sequence], *,
          client: Any = "local", folder: str | os.PathLike | None = None, workers: int | None = None,
          progress: Callable[[int, int, int], None] | bool = False, warm_start: bool = False,
          metrics: Mapping[str, Callable[[Solution], float]] | None = None) -> SweepResult:
    """Solve ``study`` once per change.

    Parameters
    ----------
    study : Study
        Its model must have a recipe (a factory or a model file: what study files record).
    changes : list of dict, or dict of lists
        The changes (module docstring); a dict of lists is expanded with :func:`grid`.
    client : "local", None, a ``distributed.Client`` or a scheduler address
        ``"local"`` (default): a Dask ``LocalCluster`` with one single-threaded worker process per core
        (``workers`` to choose), closed afterwards. ``None``: run serially in this process. A ``Client`` or
        an address (``"tcp://host:8786"``): that cluster, left running.
    folder : path, optional
        Where each solution (``<task>.sto``) and row (``<task>.json``) are written; tasks already there
        are loaded, not solved again.
    progress : bool or callable
        ``True``: a text bar on standard error (:func:`text_bar`), rewritten after each task; a callable receives
        ``(done, failed, total)`` after each task.
    warm_start : bool
        Continuation: solve the changes in the order given, each from the previous one's solution (when
        it succeeded) — e.g. a stiffness swept in small steps. The tasks then run one after another (on
        workers, as a chain), so only independent sweeps gain from more workers.
    metrics : dict of str -> callable, optional
        Columns of your own: ``{"peak_vasti": lambda sol: sol.states["/forceset/vas_int_r/activation"].max()}``
        adds ``metric:peak_vasti`` to every row. They run in this process on the returned solutions (also those
        loaded from ``folder``), so any callable works; one that raises, or a failed solve, gives NaN and the
        reason in the row's ``error``.

    Returns
    -------
    SweepResult
    """
    if not isinstance(study, Study):
        raise TypeError(f"sweep: study must be a moco_lab Study, got {type(study).__name__}")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"sweep: progress must be True, False or a function (done, failed, total), got "
                        f"{progress!r}")
    if not (client is None or isinstance(client, str) or hasattr(client, "submit")):
        raise TypeError(f"sweep: client must be 'local', None, a distributed.Client or a scheduler address, got "
                        f"{type(client).__name__}")
    if isinstance(client, str) and client != "local" and "://" not in client and ":" not in client:
        raise ValueError(f"sweep: client {client!r} is neither 'local' nor a scheduler address such as "
                         "'tcp://host:8786'")
    if folder is not None and Path(folder).exists() and not Path(folder).is_dir():
        raise ValueError(f"sweep: folder {str(folder)!r} is a file, not a folder")
    if workers is not None and not (isinstance(workers, (int, np.integer)) and not isinstance(workers, bool)
                                    and workers >= 1):
        raise ValueError(f"sweep: workers must be a positive integer (or None for one per CPU), got {workers!r}")
    not_callable = [name for name, metric in (metrics or {}).items() if not callable(metric)]
    if not_callable:
        raise TypeError(f"sweep: metrics {not_callable} are not callables (each is a function of the solution, "
                        "e.g. lambda sol: sol.final_time)")
    if isinstance(changes, Mapping):
        changes = grid(**changes)
    if isinstance(changes, (str, bytes)) or not isinstance(changes, Sequence):
        raise TypeError(f"sweep: changes must be a list of dicts or a dict of lists, got {type(changes).__name__}")
    wrong = [i for i, c in enumerate(changes) if not isinstance(c, Mapping)]
    if wrong:
        raise TypeError(f"sweep: change {wrong[0]} is {changes[wrong[0]]!r}, not a dict {{setting: value}}")
    changes = [dict(c) for c in changes]
    if not changes:
        raise ValueError("sweep: no changes to run (an empty list or grid)")
    try:
        description = study.to_dict()  # TypeError for a study that cannot be rebuilt elsewhere
    except (TypeError, ValueError) as err:  # ValueError: a model or data file changed since it was read
        raise type(err)(f"sweep: {err}") from None
    for i, change in enumerate(changes):  # a change that cannot be applied fails here, not on every worker
        try:
            apply_change(Study.from_dict(description), change)
        except (KeyError, AttributeError, ValueError, TypeError) as err:
            text = err.args[0] if isinstance(err, KeyError) and err.args else err  # str(KeyError) adds quotes
            raise type(err)(f"sweep: change {i} {change!r}: {text}") from None
    folder = None if folder is None else str(folder)
    start = time.perf_counter()
    results: list = [None] * len(changes)
    reused = 0
    todo = []
    for i, change in enumerate(changes):
        done = _load_done(folder, _task_id(description, change))
        if done is not None:  # same task, so same data files: their hashes are part of the task's hash
            results[i] = done[:2]
            reused += 1
        else:
            todo.append(i)
    failed = sum(1 for r in results if r is not None and not r[0]["success"])
    finished = reused

    def report(row: dict) -> None:
        nonlocal finished, failed
        finished += 1
        failed += not row["success"]
        if callable(progress):
            progress(finished, failed, len(changes))
        elif progress:
            sys.stderr.write("\r" + text_bar(finished, failed, len(changes), time.perf_counter() - start))
            sys.stderr.flush()

    engine = "serial"
    if client is None:
        for i in todo:
            previous = results[i - 1] if warm_start and i > 0 else None
            results[i] = run_task(description, changes[i], folder, previous)
            report(results[i][0])
    elif todo:
        from distributed import Client, as_completed

        with contextlib.ExitStack() as owned:  # a local cluster is this sweep's, closed with it; others stay up
            if client == "local":
                n = workers or max(1, os.cpu_count() or 1)
                dask_client = owned.enter_context(local_workers(min(n, len(todo))))
            elif isinstance(client, str):
                dask_client = Client(client)
            else:
                dask_client = client
            engine = "dask"
            futures = {}
            chain: dict[int, Any] = {}
            for i in todo:
                previous = None
                if warm_start and i > 0:  # the neighbour's result: a future of this sweep, or one loaded
                    previous = chain.get(i - 1, results[i - 1])
                future = dask_client.submit(run_task, description, changes[i], folder, previous, pure=False,
                                            retries=1)
                chain[i] = future
                futures[future] = i
            for future in as_completed(futures):
                i = futures[future]
                try:
                    results[i] = future.result()
                except Exception as err:  # e.g. KilledWorker: the task took down more workers than allowed
                    results[i] = (_error_row(_new_row(description, changes[i]), err), None)
                report(results[i][0])
    if progress is True:
        sys.stderr.write("\n")
    rows = [r[0] for r in results]
    for name, metric in (metrics or {}).items():
        for row, (_, solution) in zip(rows, results):
            value, problem = float("nan"), None
            if solution is None or not solution.success:
                problem = "no successful solution"
            else:
                try:
                    value = float(metric(solution))
                except Exception as err:  # a metric's bug must not lose the sweep
                    problem = "".join(traceback.format_exception_only(err)).strip()
            row[f"metric:{name}"] = value
            if problem is not None and solution is not None and solution.success:
                row["error"] = "; ".join(x for x in (row.get("error"), f"metric {name!r}: {problem}") if x)
    return SweepResult(rows, [r[1] for r in results], time.perf_counter() - start, engine, reused)
