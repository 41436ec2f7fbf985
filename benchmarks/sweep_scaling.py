"""What a sweep costs beyond its solves, and what a second worker buys, on this machine.

Measures, with the sliding-mass study:

* the per-task overhead of `ml.sweep` (rebuilding the study from its description, applying the change,
  packaging the row) against calling `study.solve()` directly, serially;
* the wall time of the same sweep of longer solves on a Dask local cluster with 1 and with 2 worker
  processes (cluster start-up included and reported apart);
* what a fresh worker pays before its first solve (imports, loading the compiled model), Dask's own cost per
  task (1,000 tasks that do nothing), the size of a task and of a result, and a worker's memory after solving
  the sliding mass and after solving the squat-to-stand (9 muscles): the numbers ``docs/sweeps_at_scale.md``
  scales up.

Writes ``benchmarks/sweep_scaling.md``. Run from the repository root (about 3 minutes)::

    .venv/bin/python benchmarks/sweep_scaling.py
"""
from __future__ import annotations

import datetime
import json
import os
import pickle
import platform
import statistics
import time
from pathlib import Path

import moco_lab as ml
from moco_lab.tools.sweep import apply_change, sweep

OUT = Path(__file__).with_suffix(".md")
SMALL = [{"solver.num_mesh_intervals": n} for n in (10, 12, 14, 16, 18, 20, 22, 24)]
LONG = [{"solver.num_mesh_intervals": n} for n in (300, 320, 340, 360, 380, 400, 420, 440)]


def direct(changes) -> float:
    start = time.perf_counter()
    for c in changes:
        apply_change(ml.examples.sliding_mass_study(), c).solve()
    return time.perf_counter() - start


def _noop(i: int) -> int:
    return i


def _rss_mb() -> float:
    import psutil  # comes with distributed

    return psutil.Process().memory_info().rss / 2**20


_FRESH = """
import time
start = time.perf_counter()
import moco_lab
imported = time.perf_counter()
moco_lab.examples.sliding_mass_study(num_mesh_intervals=10).solve()
solved = time.perf_counter()
moco_lab.examples.sliding_mass_study(num_mesh_intervals=10).solve()
print(imported - start, solved - imported, time.perf_counter() - solved)
"""


def fresh_process() -> tuple[float, float, float]:
    """What a fresh worker pays: import moco_lab (and pydrake), first small solve (the compiled model loaded
    from the disk cache), the same solve again; seconds, in a new Python process."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, check=True).stdout
    return tuple(float(x) for x in out.split())


def worker_costs() -> dict:
    """Fresh-worker start, Dask's cost per task, sizes and memory (one worker at a time)."""
    from distributed import Client, LocalCluster

    out = {}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        out["rss_idle"] = list(client.run(_rss_mb).values())[0]
        start = time.perf_counter()
        client.gather(client.map(_noop, range(1000), pure=False))
        out["dask_1000_tasks_s"] = (time.perf_counter() - start)
        sweep(ml.examples.sliding_mass_study(), LONG[-1:], client=client)
        out["rss_sliding"] = list(client.run(_rss_mb).values())[0]
        squat = ml.examples.squat_to_stand_study(assisted=False, num_mesh_intervals=50)
        out["squat_description_kb"] = len(json.dumps(squat.to_dict())) / 1024
        result = sweep(squat, [{}], client=client)
        out["squat_solve"] = result.rows[0]["solve_time"]
        out["rss_squat"] = list(client.run(_rss_mb).values())[0]
        out["squat_result_kb"] = len(pickle.dumps(result.solutions[0])) / 1024
    out["import"], out["first_solve"], out["second_solve"] = fresh_process()
    out["sliding_description_kb"] = len(json.dumps(ml.examples.sliding_mass_study().to_dict())) / 1024
    return out


def main() -> None:
    from distributed import Client, LocalCluster

    study = ml.examples.sliding_mass_study()
    direct(SMALL)  # warm the compiled-dynamics cache
    t_direct = statistics.median(direct(SMALL) for _ in range(3))
    t_serial = statistics.median(sweep(study, SMALL, client=None).wall_time for _ in range(3))
    overhead_ms = 1000 * (t_serial - t_direct) / len(SMALL)
    rows = {}
    for n in (1, 2):
        start = time.perf_counter()
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            startup = time.perf_counter() - start
            sweep(study, SMALL[:n], client=client)  # each worker imports pydrake and moco_lab once
            result = sweep(study, LONG, client=client)
        rows[n] = (startup, result.wall_time, sum(r["solve_time"] for r in result.rows))
    pickled_kb = len(pickle.dumps(result.solutions[-1])) / 1024
    t_long_serial = sweep(study, LONG, client=None).wall_time
    speedup = rows[1][1] / rows[2][1]
    w = worker_costs()
    lines = [
        "# Sweeps: overhead and workers",
        "",
        f"Generated by `benchmarks/sweep_scaling.py` on {datetime.date.today()}: {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, moco_lab {ml.__version__}. Sliding-mass study (Hermite–Simpson).",
        "",
        "| measurement | value |",
        "|---|--:|",
        f"| {len(SMALL)} small solves (N = 10…24) called directly, serially | {t_direct:.3f} s |",
        f"| the same through `ml.sweep(client=None)` | {t_serial:.3f} s |",
        f"| overhead per task (rebuild the study, apply the change, the row) | "
        f"{f'{overhead_ms:.1f} ms' if overhead_ms >= 0.05 else 'below 0.1 ms (within noise)'} |",
        f"| local cluster start-up, 1 / 2 workers | {rows[1][0]:.2f} s / {rows[2][0]:.2f} s |",
        f"| {len(LONG)} longer solves (N = 300…440), serially | {t_long_serial:.2f} s |",
        f"| the same on 1 worker / 2 workers (warm workers) | {rows[1][1]:.2f} s / {rows[2][1]:.2f} s |",
        f"| speed-up from 1 to 2 workers | {speedup:.2f}× |",
        f"| one solution (N = 440) as sent back by a worker (pickled) | {pickled_kb:.0f} kB |",
        f"| a fresh process (as a new worker): import moco_lab and pydrake / first solve, the compiled model "
        f"loaded from the disk cache (N = 10) / the same solve again | {w['import']:.2f} s / "
        f"{w['first_solve']:.2f} s / {w['second_solve']:.3f} s |",
        f"| Dask's own cost: 1,000 tasks that do nothing, one worker (scheduler, client and worker on "
        f"these 2 cores) | {w['dask_1000_tasks_s']:.2f} s ({w['dask_1000_tasks_s']:.1f} ms per task) |",
        f"| a task's description (`Study.to_dict()` as JSON): sliding mass / squat-to-stand | "
        f"{w['sliding_description_kb']:.1f} kB / {w['squat_description_kb']:.1f} kB |",
        f"| a squat-to-stand solution (N = 50) as sent back (pickled) | {w['squat_result_kb']:.0f} kB |",
        f"| worker memory (RSS): idle / after the sliding mass (N = 440) / after the squat-to-stand (N = 50, "
        f"solved in {w['squat_solve']:.1f} s) | {w['rss_idle']:.0f} / {w['rss_sliding']:.0f} / "
        f"{w['rss_squat']:.0f} MB |",
        "",
        "The overhead is what a task costs beyond its solve in this process; on workers add Dask's own "
        "scheduling (about a millisecond per task in Dask's documentation; measured above on a machine whose two "
        "cores also run the scheduler and the client) and the transfer of the result (the pickled solutions "
        "above). With 2 cores the speed-up is bounded by 2. Dask's nanny starts workers with "
        "`MALLOC_TRIM_THRESHOLD_=65536`, which made every solve about a third slower; a sweep's task raises "
        "the threshold again (`moco_lab.tools.sweep`). What these numbers mean for 1,000 tasks on 100 workers: "
        "`docs/sweeps_at_scale.md`.",
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
