"""OpenSim Moco 4.6's solutions of the parabola (the bead on y = x², kinematic constraint), stored as the reference
``tests/test_kinematic_constraints_moco.py`` compares with (the stored-reference pattern: CI compares, it does not
re-solve with Moco).

The four runs of that test, built by :func:`benchmarks.moco_reference.solve_parabola` (Hermite–Simpson, IPOPT's
default tolerances): the bead released from rest (N = 50) in explicit and implicit mode with Moco's Posa2016 method
and in explicit mode with Bordalba2023, and the actuated bead (N = 30, explicit, Posa2016). Writes
``benchmarks/reference/parabola_moco.json``: per run Moco's status, objective, iterations, times, states and
multipliers, with the environment (versions, machine, date) and the settings.

Usage::

    .venv/bin/python -m benchmarks.parabola_moco     # about 45 s (the implicit run: ~25 s)
"""
from __future__ import annotations

import json

from benchmarks import moco_reference as mr
from benchmarks.compare_moco import environment, stored_reference

#: name -> (actuated, mode, N, method), the runs of tests/test_kinematic_constraints_moco.py
RUNS = {"bead_explicit": (False, "explicit", 50, "Posa2016"), "bead_implicit": (False, "implicit", 50, "Posa2016"),
        "actuated_explicit": (True, "explicit", 30, "Posa2016"),
        "bead_bordalba": (False, "explicit", 50, "Bordalba2023")}


def main() -> None:
    path, _ = stored_reference("parabola_moco")
    results = {}
    for name, (actuated, mode, N, method) in RUNS.items():
        r = mr.solve_parabola(actuated, mode=mode, N=N, method=method)
        results[name] = {"success": bool(r["success"]), "status": r["status"], "objective": r["objective"],
                         "nit": r["nit"], "solve_time": r["solve_time"], "time": r["time"].tolist(),
                         "states": {k: v.tolist() for k, v in r["states"].items()},
                         "multipliers": {k: v.tolist() for k, v in r["multipliers"].items()}}
        print(f"{name}: {r['status']}, {r['nit']} iterations, {r['solve_time']:.1f} s")
    settings = {"scheme": "hermite-simpson", "tolerances": "IPOPT's defaults",
                "runs": {k: dict(zip(("actuated", "mode", "num_mesh_intervals", "kinematic_constraint_method"), v))
                         for k, v in RUNS.items()}}
    path.write_text(json.dumps({"environment": environment(), "settings": settings, "results": results}, indent=1)
                    + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
