"""OpenSim Moco 4.6's solutions of the verification problems, stored as the reference ``tests/test_against_moco.py``
compares with (the stored-reference pattern: CI compares, it does not re-solve with Moco).

Every case of that test: the linear problem (Kirk's and Moco's test variant), the sliding mass and the double
pendulum (:data:`benchmarks.compare_moco.MOCO_SOLVERS`), each with both schemes and both multibody dynamics modes, at
N = 50 with IPOPT's default tolerances. Writes ``benchmarks/reference/verification_moco.json``: per case Moco's
status, objective, iterations, final time, time grid, states, controls and implicit-mode accelerations, with the
environment (versions, machine, date) and the settings.

Usage::

    .venv/bin/python -m benchmarks.verification_moco     # about 35 s
"""
from __future__ import annotations

import json

from benchmarks.compare_moco import MOCO_SOLVERS, MODES, SCHEMES, environment, stored_reference

#: Mesh intervals of every case (tests/test_against_moco.py's N).
N = 50


def main() -> None:
    path, _ = stored_reference("verification_moco")
    results = {}
    for problem, (solve, kwargs) in MOCO_SOLVERS.items():
        for scheme in SCHEMES:
            for mode in MODES:
                r = solve(scheme=scheme, mode=mode, N=N, tol=None, **kwargs)
                results[f"{problem}-{scheme}-{mode}"] = {
                    "success": bool(r["success"]), "status": r["status"], "objective": r["objective"],
                    "nit": r["nit"], "solve_time": r["solve_time"], "final_time": r["final_time"],
                    "time": r["time"].tolist(),
                    **{group: {k: v.tolist() for k, v in r[group].items()}
                       for group in ("states", "controls", "derivatives")}}
                print(f"{problem} {scheme} {mode}: {r['status']}, {r['nit']} iterations, {r['solve_time']:.1f} s")
    settings = {"num_mesh_intervals": N, "tolerances": "IPOPT's defaults (tol 1e-8, constr_viol_tol 1e-4)",
                "problems": {p: kw for p, (_, kw) in MOCO_SOLVERS.items()}, "schemes": list(SCHEMES),
                "modes": list(MODES)}
    path.write_text(json.dumps({"environment": environment(), "settings": settings, "results": results}, indent=1)
                    + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
