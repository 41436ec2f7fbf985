"""Shared checks for tests that compare a moco_lab Solution with an OpenSim Moco result dict
(as returned by ``benchmarks/moco_reference.py``)."""
from __future__ import annotations

import numpy as np


def relative_max_difference(ours, theirs) -> float:
    """max |ours - theirs| divided by the range (max - min) of ``theirs``."""
    theirs = np.asarray(theirs, dtype=float)
    scale = float(np.ptp(theirs))
    if scale == 0.0:
        scale = max(float(np.max(np.abs(theirs))), 1.0)
    return float(np.max(np.abs(np.asarray(ours) - theirs))) / scale


def assert_same_objective(moco: dict, lab, rtol: float) -> None:
    """Both succeeded and the objectives agree to ``rtol`` (relative)."""
    assert moco["success"], f"Moco failed: {moco['status']}"
    assert lab.success, f"moco_lab failed: {lab.message}"
    rel = abs(lab.objective - moco["objective"]) / abs(moco["objective"])
    assert rel <= rtol, (
        f"objective: moco_lab {lab.objective!r}, Moco {moco['objective']!r} (relative difference {rel:.2e})")


def assert_same_trajectories(groups, rtol: float) -> None:
    """``groups``: (name, Moco's {column: values}, moco_lab's {column: values}); same columns, values to ``rtol`` of range."""
    errors = {}
    for group, theirs, ours in groups:
        assert set(ours) == set(theirs), f"{group}: moco_lab {sorted(ours)} vs Moco {sorted(theirs)}"
        for name, values in theirs.items():
            errors[name] = relative_max_difference(ours[name], values)
    worst = max(errors, key=errors.get)
    assert errors[worst] <= rtol, (
        f"{worst}: max difference {errors[worst]:.2e} of its range (all: "
        + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()) + ")")


def stored_moco(name: str) -> tuple[dict, dict]:
    """A stored Moco reference ``benchmarks/reference/<name>.json`` (written by ``benchmarks/<name>.py``): its
    header (``environment``, ``settings``) and its runs, each with its arrays (time, and every group of columns:
    states, controls, multipliers) as numpy arrays."""
    import json
    from pathlib import Path

    import numpy as np

    stored = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "reference" / f"{name}.json").read_text())
    runs = {}
    for run, r in stored["results"].items():
        runs[run] = {key: (np.array(v) if key == "time" else
                           {k: np.array(c) for k, c in v.items()} if isinstance(v, dict) else v)
                     for key, v in r.items()}
    return {k: v for k, v in stored.items() if k != "results"}, runs

