"""OpenSim Moco 4.6's solutions with its pseudospectral schemes, stored as the reference
``tests/test_pseudospectral.py`` compares with (the stored-reference pattern: CI compares, it does not re-solve).

Moco 4.6 transcribes with ``legendre-gauss-k`` and ``legendre-gauss-radau-k`` (k = 1..9; ``CasOC::LegendreGauss``,
``CasOC::LegendreGaussRadau``). The cases, each a small problem whose moco_lab counterpart is one of
:data:`moco_lab.examples.VERIFICATION_STUDIES` or the parabola:

* Kirk's linear minimum-effort problem, N = 10, both dynamics modes, k = 1, 3, 5 of both families — the defects,
  the quadrature and the controls interpolated inside the intervals (``legendre-gauss-radau-1``: Moco's integral
  is half the integral, see :mod:`moco_lab.engine.collocation`);
* the sliding mass in minimum time, N = 10, explicit, k = 2 of both families — a free final time;
* the double-pendulum swing-up, N = 10, both modes, k = 3 of both families — nonlinear dynamics;
* the actuated bead on the parabola, N = 10, both modes, ``kinematic_constraint_method = "Bordalba2023"`` (the one
  Moco accepts with these schemes), ``legendre-gauss-2``. (With ``legendre-gauss-radau-3`` neither Moco nor
  moco_lab converges on this problem at N = 10: Moco reaches its 3000-iteration limit in 70 s (explicit) and 129 s
  (implicit), measured when this script was written; such a case is no reference.)

IPOPT's tolerances are 1e-6 (convergence and constraints) in every case: at 1e-10 Moco's finite-difference
derivatives stop most of these solves with ``Error_In_Step_Computation`` (its objectives then agree with the 1e-6
ones to 10 digits). Writes ``benchmarks/reference/pseudospectral_moco.json``: per case
Moco's status, objective, iterations, time grid, states, controls, multipliers, with the environment (versions,
machine, date) and the settings.

Usage::

    .venv/bin/python -m benchmarks.pseudospectral_moco     # about 30 s
"""
from __future__ import annotations

import json

from benchmarks import moco_reference as mr
from benchmarks.compare_moco import environment, stored_reference

#: Mesh intervals and IPOPT tolerance of every case.
N, TOL = 10, 1e-6

#: case name -> (Moco solver, keyword arguments)
CASES: dict = {}
for _k in (1, 3, 5):
    for _family in ("legendre-gauss", "legendre-gauss-radau"):
        for _mode in ("explicit", "implicit"):
            CASES[f"linear-{_family}-{_k}-{_mode}"] = (mr.solve_linear, dict(variant="kirk", scheme=f"{_family}-{_k}",
                                                                            mode=_mode))
for _family in ("legendre-gauss", "legendre-gauss-radau"):
    CASES[f"sliding_mass-{_family}-2-explicit"] = (mr.solve_sliding_mass, dict(scheme=f"{_family}-2", mode="explicit"))
    for _mode in ("explicit", "implicit"):
        CASES[f"double_pendulum-{_family}-3-{_mode}"] = (mr.solve_double_pendulum,
                                                         dict(scheme=f"{_family}-3", mode=_mode))
for _mode in ("explicit", "implicit"):
    CASES[f"parabola-legendre-gauss-2-{_mode}"] = (mr.solve_parabola, dict(actuated=True, scheme="legendre-gauss-2",
                                                                           mode=_mode, method="Bordalba2023"))


def main() -> None:
    path, _ = stored_reference("pseudospectral_moco")
    results = {}
    for name, (solve, kwargs) in CASES.items():
        r = solve(N=N, tol=TOL, **kwargs)
        results[name] = {
            "settings": kwargs, "success": bool(r["success"]), "status": r["status"], "objective": r["objective"],
            "nit": r["nit"], "solve_time": r["solve_time"], "final_time": r["final_time"], "time": r["time"].tolist(),
            **{group: {k: v.tolist() for k, v in r[group].items()}
               for group in ("states", "controls", "multipliers", "derivatives")}}
        print(f"{name}: {r['status']}, {r['nit']} iterations, J = {r['objective']:.12g}, {r['solve_time']:.1f} s")
    settings = {"num_mesh_intervals": N, "optim_convergence_tolerance": TOL, "optim_constraint_tolerance": TOL,
                "interpolate_control_mesh_interior_points": "Moco's default (true)",
                "cases": {n: kw for n, (_, kw) in CASES.items()}}
    path.write_text(json.dumps({"environment": environment(), "settings": settings, "results": results}, indent=1)
                    + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
