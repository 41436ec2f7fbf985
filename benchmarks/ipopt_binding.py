"""moco_lab's hand-written IPOPT binding against a maintained one (cyipopt), and the casadi wheel's IPOPT against
Debian's, on the same programs, in one run.

moco_lab drives IPOPT's C interface through ``ctypes`` (:mod:`moco_lab.solve.ipopt_mumps`) and loads the IPOPT 3.14
that the ``casadi`` wheel ships (MUMPS, METIS, OpenBLAS). The alternative is cyipopt, the maintained Cython binding,
on an IPOPT the system provides: PyPI has no Linux wheel of cyipopt, so it is built from source against Debian's
``coinor-libipopt-dev`` (IPOPT 3.11.9 with Debian's sequential MUMPS), which also needs ``liblapack-dev``,
``libblas-dev`` and a compiler. Three configurations separate the binding from the library:

* ``ctypes + casadi IPOPT 3.14``: moco_lab as it is;
* ``ctypes + Debian IPOPT 3.11``: the same binding on Debian's library (``MOCO_LAB_IPOPT_LIBRARY``);
* ``cyipopt + Debian IPOPT 3.11``: cyipopt's ``Problem`` with the same callbacks (moco_lab's program: objective,
  gradient, constraints, the declared sparse Jacobian, and the exact Hessian where a case uses it).

Every configuration solves each case's program from the same guess with the same IPOPT options (moco_lab's, minus
``limited_memory_aug_solver``, which IPOPT 3.11 does not have). Timed: the optimizer call alone (the program is
built before the clock starts), the best of two, in a process of its own per configuration and case; also the time
spent inside the Python callbacks. Cases: the squat to stand (limited-memory, tolerance 1e-3), Moco's 2-D walking
tracking (limited-memory, N = 50), Moco's testMocoTrack on gait10dof (exact Hessian), the 3-D MocoInverse
(limited-memory).

Writes ``benchmarks/ipopt_binding.md``. Needs cyipopt and Debian's IPOPT (``apt-get install coinor-libipopt-dev
liblapack-dev libblas-dev``, then ``pip install cyipopt``): not part of moco_lab's environment.

Usage::

    .venv/bin/python -m benchmarks.ipopt_binding
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEBIAN_IPOPT = "/usr/lib/libipopt.so.1"  # coinor-libipopt1v5
CONFIGS = {"ctypes + casadi IPOPT 3.14": ("ctypes", None), "ctypes + Debian IPOPT 3.11": ("ctypes", DEBIAN_IPOPT),
           "cyipopt + Debian IPOPT 3.11": ("cyipopt", DEBIAN_IPOPT)}
CASES = ("squat", "walking_2d_tracking", "gait10dof_track", "walking_3d_inverse")


def build(case: str):
    """``(program, settings, exact callbacks)`` of a case, its guess set as its solve would set it."""
    import moco_lab as ml
    from moco_lab.solve.guess import guess_from_bounds, guess_from_trajectory, set_guess

    if case == "walking_3d_inverse":
        inverse = ml.examples.walking_3d_inverse()
        tr, settings = inverse.transcribe(), inverse.settings
    else:
        study = {"squat": ml.examples.squat_to_stand_study, "walking_2d_tracking": ml.examples.walking_2d_tracking,
                 "gait10dof_track": lambda: ml.examples.gait10dof_track().initialize()}[case]()
        if case == "gait10dof_track":
            study.solver.optim_hessian_approximation = "exact"   # 11 iterations instead of 110 (hessian.md)
            study.solver.optim_linear_solver = "mumps"
        tr, settings = study.transcribe(), study.solver
    set_guess(tr, guess_from_trajectory(tr, settings.guess) if settings.guess is not None else guess_from_bounds(tr))
    return tr.prog, settings, tr.exact_callbacks


def options_for(settings) -> dict:
    """moco_lab's IPOPT options for ``settings`` (:func:`moco_lab.solve.optimizer.mumps_algorithm_options`), quiet,
    without ``limited_memory_aug_solver`` (IPOPT 3.14 only)."""
    from moco_lab.solve.optimizer import mumps_algorithm_options

    options = {"sb": "yes", "print_level": 0, **mumps_algorithm_options(settings), "linear_solver": "mumps"}
    options.pop("limited_memory_aug_solver", None)
    return options


class _Callbacks:
    """moco_lab's program behind cyipopt's callback interface."""

    def __init__(self, P):
        self.P, self.iterations = P, None

    def _at(self, x):
        xv = np.array(x, float)
        self.P.new_point(xv)
        return xv

    def objective(self, x):
        return self.P.objective(self._at(x), False)[0]

    def gradient(self, x):
        return self.P.objective(self._at(x), True)[1]

    def constraints(self, x):
        g = np.empty(self.P.m)
        self.P.constraints_at(self._at(x), g)
        return g

    def jacobianstructure(self):
        return self.P.jac_rows, self.P.jac_cols

    def jacobian(self, x):
        v = np.empty(self.P.nnz)
        self.P.jacobian_at(self._at(x), v)
        return v

    def hessianstructure(self):
        return (self.P.hess_rows, self.P.hess_cols) if hasattr(self.P, "hess_rows") else ([], [])

    def hessian(self, x, lagrange, obj_factor):
        v = np.empty(self.P.hess_nnz)
        self.P.hessian_at(self._at(x), float(obj_factor), np.array(lagrange, float), v)
        return v

    def intermediate(self, alg_mod, iter_count, *rest):
        self.iterations = int(iter_count)
        return True


def _time_callbacks(program_class) -> list[float]:
    """Wrap the program's evaluation methods (both bindings call them) to add up the seconds spent in them."""
    spent = [0.0]
    for name in ("new_point", "objective", "constraints_at", "jacobian_at", "hessian_at"):
        method = getattr(program_class, name)

        def timed(*args, _method=method):
            t = time.perf_counter()
            try:
                return _method(*args)
            finally:
                spent[0] += time.perf_counter() - t
        setattr(program_class, name, timed)
    return spent


def child(case: str, config: str, out: str) -> None:
    binding, library = CONFIGS[config]
    if library:
        os.environ["MOCO_LAB_IPOPT_LIBRARY"] = library
    from moco_lab.solve import ipopt_mumps

    spent = _time_callbacks(ipopt_mumps._Program)
    runs = []
    for _ in range(2):
        prog, settings, exact = build(case)
        options = options_for(settings)
        x0 = np.nan_to_num(np.asarray(prog.GetInitialGuess(prog.decision_variables()), float), nan=0.0)
        spent[0] = 0.0
        if binding == "ctypes":
            t = time.perf_counter()
            result = ipopt_mumps.solve_with_mumps(prog, x0, options, exact)
            wall = time.perf_counter() - t
            runs.append({"wall": wall, "nit": result.nit, "objective": result.cost, "status": result.status,
                         "callbacks": spent[0]})
        else:
            import cyipopt

            t = time.perf_counter()
            P = ipopt_mumps._Program(prog, exact, hessian=options["hessian_approximation"] == "exact")
            callbacks = _Callbacks(P)
            inf = ipopt_mumps._INF  # bounds as the ctypes driver hands them to IPOPT
            nlp = cyipopt.Problem(n=P.n, m=P.m, problem_obj=callbacks, lb=np.clip(P.xl, -inf, inf),
                                  ub=np.clip(P.xu, -inf, inf), cl=np.clip(P.gl, -inf, inf), cu=np.clip(P.gu, -inf, inf))
            for key, value in options.items():
                nlp.add_option(key, value)
            x, info = nlp.solve(x0)
            wall = time.perf_counter() - t
            message = info["status_msg"]
            runs.append({"wall": wall, "nit": callbacks.iterations, "objective": float(info["obj_val"]),
                         "status": message.decode() if isinstance(message, bytes) else str(message),
                         "callbacks": spent[0]})
    best = min(runs, key=lambda r: r["wall"])
    Path(out).write_text(json.dumps({"case": case, "config": config, **best}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--output", default=str(HERE / "ipopt_binding.md"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    folder = Path(tempfile.mkdtemp(prefix="moco_lab_binding_"))
    started = datetime.now(timezone.utc)
    rows = []
    for case in args.cases.split(","):
        for config in CONFIGS:
            out = folder / f"{case}-{len(rows)}.json"
            proc = subprocess.run([sys.executable, "-m", "benchmarks.ipopt_binding", "--child", case, config,
                                   str(out)], cwd=HERE.parent, capture_output=True, text=True)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                rows.append({"case": case, "config": config, "status": f"failed: {last[:150]}"})
            else:
                rows.append(json.loads(out.read_text()))
            print(rows[-1], flush=True)
    _write(Path(args.output), rows, started)


def _write(path: Path, rows: list[dict], started) -> None:
    import moco_lab

    try:
        import cyipopt
        cy = cyipopt.__version__
    except ImportError:
        cy = "not installed"
    lines = ["# IPOPT bindings: moco_lab's ctypes driver against cyipopt, casadi's IPOPT against Debian's", "",
             f"Written by `python -m benchmarks.ipopt_binding` on {started:%Y-%m-%d %H:%M} UTC; moco_lab "
             f"{moco_lab.__version__}, cyipopt {cy}, Python {platform.python_version()}, {os.cpu_count()} CPUs. "
             "Settings and what is timed: the script's docstring (the optimizer call alone, best of two). The two "
             "rows on Debian's IPOPT compare the bindings (same library, same iterates); the first two rows of a "
             "case compare the libraries (same binding). IPOPT 3.11 reports its status in words.", "",
             "| case | binding + IPOPT | iterations | solve s | in callbacks s | objective | status |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        def f(key, spec):
            v = r.get(key)
            return "–" if v is None else format(v, spec)
        lines.append(f"| {r['case']} | {r['config']} | {f('nit', 'd')} | {f('wall', '.2f')} | "
                     f"{f('callbacks', '.2f')} | {f('objective', '.8g')} | {r.get('status', '')} |")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
