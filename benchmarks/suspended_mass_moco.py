"""OpenSim Moco 4.6's solutions of problem (c), the suspended-mass prediction, stored as the reference
``tests/test_suspended_mass_moco.py`` compares with (the stored-reference pattern: CI compares, it does not re-solve
with Moco).

The two runs of that test, built by :func:`benchmarks.moco_reference.solve_suspended_mass_prediction` (each in a fresh
process: OpenSim 4.6 shares DeGrooteFregly2016 time constants between the models of one process), IPOPT's default
tolerances: Hermite–Simpson explicit with N = 100 (Moco's defaults, what the Moco paper ran) and trapezoidal explicit
with N = 50. Writes ``benchmarks/reference/suspended_mass_moco.json``: per run Moco's status, objective, iterations,
final time, time grid, states and controls, with the environment (versions, machine, date) and the settings.

Usage::

    .venv/bin/python -m benchmarks.suspended_mass_moco     # about 30 s
"""
from __future__ import annotations

import json

from benchmarks import moco_reference as mr
from benchmarks.compare_moco import environment, stored_reference

#: name -> (scheme, mode, N), the runs of tests/test_suspended_mass_moco.py
RUNS = {"hermite-simpson-explicit-N100": ("hermite-simpson", "explicit", 100),
        "trapezoidal-explicit-N50": ("trapezoidal", "explicit", 50)}


def main() -> None:
    path, _ = stored_reference("suspended_mass_moco")
    results = {}
    for name, (scheme, mode, N) in RUNS.items():
        r = mr.in_fresh_process("solve_suspended_mass_prediction", scheme, mode, N)
        results[name] = {"success": bool(r["success"]), "status": r["status"], "objective": r["objective"],
                         "nit": r["nit"], "solve_time": r["solve_time"], "final_time": r["final_time"],
                         "time": r["time"].tolist(), "states": {k: v.tolist() for k, v in r["states"].items()},
                         "controls": {k: v.tolist() for k, v in r["controls"].items()}}
        print(f"{name}: {r['status']}, {r['nit']} iterations, {r['solve_time']:.1f} s")
    settings = {"tolerances": "IPOPT's defaults (tol 1e-8, constr_viol_tol 1e-4)",
                "runs": {k: dict(zip(("scheme", "mode", "num_mesh_intervals"), v)) for k, v in RUNS.items()}}
    path.write_text(json.dumps({"environment": environment(), "settings": settings, "results": results}, indent=1)
                    + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
