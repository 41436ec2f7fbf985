"""Squat-to-stand (the Moco paper, Figure 6): moco_lab and OpenSim Moco 4.6, same model file, same settings, one run.

Both tools solve the unassisted and the assisted (knee-spring stiffness optimized)
problems of :mod:`moco_lab.examples.squat` on the same model file — the text of
:func:`moco_lab.modeling.squat.squat_to_stand_osim` written to a temporary ``.osim`` — with
the settings of the paper's script (``code/squat_to_stand.py`` in stanfordnmbl/mocopaper):
Millard muscles replaced by DeGrooteFregly2016 ones, max isometric force ×2, passive fiber
force ignored, implicit tendon compliance dynamics; implicit multibody dynamics with the
implicit accelerations and auxiliary derivatives penalized (0.001), Hermite–Simpson, 50
intervals, tolerances 1e-3, Moco's CasADi solver with forward finite differences; goals
effort + initial activation + final time; the guess from bounds with normalized tendon forces
0.1, activations and excitations 0.05.

What is timed (wall clock): the whole ``solve()`` of a freshly built study. moco_lab *cold*:
the compiled-dynamics cache emptied (memory and disk, a temporary ``MOCO_LAB_CACHE``), so it
derives and compiles the equations; *warm*: the same again with the cache filled and the optimized rebuild of the
equations that the cold run starts in the background done (what a learner's later solves cost). Moco builds its
CasADi functions on every solve.

Two more cases solve both problems with both tools at tolerances 1e-4 (the paper's 1e-3 leaves
the optimizers stopping at visibly different points along a flat valley of the objective).

moco_lab solves with IPOPT + MUMPS (``optim_linear_solver="mumps"``, the factory's default, as Moco);
a *spral* row per case solves the same study warm with Drake's own IPOPT (SPRAL) for comparison.

Writes ``benchmarks/squat_to_stand.md`` (the table) and
``benchmarks/reference/squat_to_stand_moco.json`` plus the Moco solutions
(``squat_to_stand_moco_<case>.sto``): the stored reference the tests compare with, with its
provenance (versions, settings, date).

Usage::

    .venv/bin/python -m benchmarks.squat_to_stand            # four cases, ~20 min (Moco dominates)
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ["MOCO_LAB_CACHE"] = tempfile.mkdtemp(prefix="moco_lab_squat_")  # never the user's cache


import moco_lab as ml
from moco_lab.engine.kernel import clear_kernel_cache
from moco_lab.examples.squat import SQUAT_POSE
from moco_lab.modeling.squat import squat_to_stand_osim
from moco_lab.symbolic import codegen

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
SETTINGS = {"transcription_scheme": "hermite", "multibody_dynamics_mode": "implicit", "num_mesh_intervals": 50,
            "optim_convergence_tolerance": 1e-3, "optim_constraint_tolerance": 1e-3,
            "implicit_multibody_accelerations_weight": 0.001, "implicit_auxiliary_derivatives_weight": 0.001,
            "optim_finite_difference_scheme": "forward", "time_bounds": [0, [0.1, 2.0]],
            "stiffness_bounds": [0, 100], "spring_stiffness_in_model": 50}


# ------------------------------------------------------------------ Moco
def moco_study(model_file: str, assisted: bool, tol: float = 1e-3):
    """The paper's MocoStudy on ``model_file`` (the paper's script, line for line; ``tol`` its 1e-3)."""
    import opensim as osim

    model = osim.Model(model_file)
    model.finalizeConnections()
    osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    for muscle in model.getMuscles():
        muscle.set_max_isometric_force(2.0 * muscle.get_max_isometric_force())
        dgf = osim.DeGrooteFregly2016Muscle.safeDownCast(muscle)
        dgf.set_ignore_passive_fiber_force(True)
        dgf.set_tendon_compliance_dynamics_mode("implicit")
    if assisted:
        device = osim.SpringGeneralizedForce("knee_extension_r")
        device.setName("spring")
        device.setStiffness(50)
        device.setRestLength(0)
        device.setViscosity(0)
        model.addForce(device)
    study = osim.MocoStudy()
    solver = study.initCasADiSolver()
    solver.set_multibody_dynamics_mode("implicit")
    solver.set_minimize_implicit_multibody_accelerations(True)
    solver.set_implicit_multibody_accelerations_weight(0.001)
    solver.set_minimize_implicit_auxiliary_derivatives(True)
    solver.set_implicit_auxiliary_derivatives_weight(0.001)
    solver.set_num_mesh_intervals(50)
    solver.set_optim_convergence_tolerance(tol)
    solver.set_optim_constraint_tolerance(tol)
    solver.set_optim_finite_difference_scheme("forward")
    problem = study.updProblem()
    problem.setModelAsCopy(model)
    problem.setTimeBounds(0, [0.1, 2])
    for path, q0 in SQUAT_POSE.items():
        upper = 0.0 if "knee" in path else 0.5
        problem.setStateInfo(f"{path}/value", [1.5 * q0, upper], q0, 0)
    problem.setStateInfoPattern("/jointset/.*/speed", [], 0, 0)
    problem.addGoal(osim.MocoControlGoal("effort"))
    problem.addGoal(osim.MocoInitialActivationGoal("init_activation"))
    problem.addGoal(osim.MocoFinalTimeGoal("time"))
    if assisted:
        problem.addParameter(osim.MocoParameter("stiffness", "/forceset/spring", "stiffness", osim.MocoBounds(0, 100)))
        solver.set_parameters_require_initsystem(False)
    solver.resetProblem(problem)
    guess = solver.createGuess()
    n = guess.getNumTimes()
    for muscle in model.getMuscles():
        dgf = osim.DeGrooteFregly2016Muscle.safeDownCast(muscle)
        path = muscle.getAbsolutePathString()
        if not dgf.get_ignore_tendon_compliance():
            guess.setState(f"{path}/normalized_tendon_force", osim.createVectorLinspace(n, 0.1, 0.1))
        guess.setState(f"{path}/activation", osim.createVectorLinspace(n, 0.05, 0.05))
        guess.setControl(path, osim.createVectorLinspace(n, 0.05, 0.05))
    solver.setGuess(guess)
    return study


def run_moco(model_file: str, assisted: bool, sto: Path, tol: float = 1e-3) -> dict:
    study = moco_study(model_file, assisted, tol)
    t = time.perf_counter()
    solution = study.solve()
    wall = time.perf_counter() - t
    solution.unseal()
    solution.write(str(sto))
    out = {"success": bool(solution.success()), "status": solution.getStatus(), "objective": solution.getObjective(),
           "final_time": solution.getFinalTime(), "iterations": solution.getNumIterations(),
           "solver_duration": solution.getSolverDuration(), "wall": wall,
           "goals": {name: solution.getObjectiveTerm(name) for name in solution.getObjectiveTermNames()}}
    if assisted:
        out["stiffness"] = solution.getParameter("stiffness")
    return out


# ------------------------------------------------------------------ moco_lab
def run_moco_lab(assisted: bool, cold: bool, tol: float = 1e-3, linear_solver: str = "mumps") -> dict:
    if cold:
        clear_kernel_cache(disk=True)
    study = ml.examples.squat_to_stand_study(assisted=assisted, tol=tol, linear_solver=linear_solver)
    t = time.perf_counter()
    solution = study.solve()
    wall = time.perf_counter() - t
    if cold:  # the optimized rebuild it started (moco_lab.symbolic.codegen): the warm runs use it, undisturbed
        codegen.wait_for_optimized_builds()
    solution.unseal()
    out = {"success": solution.success, "status": solution.status, "objective": solution.objective,
           "final_time": solution.final_time, "iterations": solution.nit, "solver_duration": solution.solve_time,
           "wall": wall, "goals": dict(solution.goal_values)}
    if assisted:
        out["stiffness"] = solution.parameters["stiffness"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-moco", action="store_true", help="reuse the stored Moco reference")
    args = parser.parse_args()
    from benchmarks.compare_moco import environment, stored_reference  # imports OpenSim, the optional extra

    ref_file, stored = stored_reference("squat_to_stand_moco")
    rows = {}
    cases = [("unassisted", False, 1e-3), ("assisted", True, 1e-3), ("unassisted_tol1e-4", False, 1e-4),
             ("assisted_tol1e-4", True, 1e-4)]
    with tempfile.TemporaryDirectory() as tmp:
        model_file = str(Path(tmp) / "squat_to_stand_4dof9musc.osim")
        Path(model_file).write_text(squat_to_stand_osim(lumbar=True))
        for key, assisted, tol in cases:
            print(f"[{key}] moco_lab cold ...", flush=True)
            cold = run_moco_lab(assisted, cold=True, tol=tol)
            print(f"[{key}] moco_lab warm ...", flush=True)
            warm = run_moco_lab(assisted, cold=False, tol=tol)
            print(f"[{key}] moco_lab warm, Drake's IPOPT (SPRAL) ...", flush=True)
            spral = run_moco_lab(assisted, cold=False, tol=tol, linear_solver="spral")
            if args.skip_moco:
                moco = stored["results"][key]
            else:
                print(f"[{key}] Moco ...", flush=True)
                moco = run_moco(model_file, assisted, REFERENCE / f"squat_to_stand_moco_{key}.sto", tol)
            rows[key] = {"moco_lab_cold": cold, "moco_lab_warm": warm, "moco_lab_spral_warm": spral, "moco": moco}
            print(json.dumps(rows[key], indent=1, default=float), flush=True)
    env = environment()
    if not args.skip_moco:
        ref_file.write_text(json.dumps({
            "what": "OpenSim Moco 4.6 on the Moco paper's squat-to-stand problems (benchmarks/squat_to_stand.py)",
            "environment": env, "settings": SETTINGS,
            "results": {k: v["moco"] for k, v in rows.items()}}, indent=1, default=float))
    write_table(rows, env)


def write_table(rows: dict, env: dict) -> None:
    lines = ["# Squat-to-stand: moco_lab and OpenSim Moco 4.6, one run", "",
             f"{env['date']}; {env['machine']}; moco_lab {env['moco_lab']}, Drake {env['drake']}, "
             f"OpenSim {env['opensim']}. Produced by `benchmarks/squat_to_stand.py` (settings in its docstring).", "",
             "| problem | tool | objective | final time (s) | stiffness (N·m/rad) | iterations | solve (s) "
             "| per iteration (ms) | Moco ÷ moco_lab |",
             "|---|---|---|---|---|---|---|---|---|"]
    for key, r in rows.items():
        moco_wall = r["moco"]["wall"]
        for tool in ("moco_lab_cold", "moco_lab_warm", "moco_lab_spral_warm", "moco"):
            x = r[tool]
            k = f"{x['stiffness']:.2f}" if "stiffness" in x else "–"
            ratio = f"{moco_wall / x['wall']:.1f}×" if tool != "moco" else ""
            lines.append(f"| {key} | {tool.replace('_', ' ')} | {x['objective']:.6f} | {x['final_time']:.4f} | {k} | "
                         f"{x['iterations']} | {x['wall']:.1f} | {1000 * x['wall'] / max(1, x['iterations']):.0f} | "
                         f"{ratio} |")
    lines += ["", "Goal values:", ""]
    for key, r in rows.items():
        for tool in ("moco_lab_warm", "moco"):
            goals = ", ".join(f"{g} {v:.6f}" for g, v in sorted(r[tool]["goals"].items()))
            lines.append(f"- {key}, {tool.replace('_', ' ')}: {goals}")
    lines += ["", "moco lab cold / warm: IPOPT + MUMPS (`optim_linear_solver=\"mumps\"`, the study factory's default; "
              "cold: the compiled dynamics derived and compiled first); moco lab spral warm: the same study with "
              "Drake's own IPOPT (SPRAL on a reference BLAS)."]
    for key in ("unassisted", "assisted"):
        tight, loose = rows[f"{key}_tol1e-4"], rows[key]
        lines += ["", f"{key.capitalize()}, both tools at tolerances 1e-4 instead of the paper's 1e-3: objective "
                  f"{tight['moco_lab_warm']['objective']:.6f} (moco_lab) and {tight['moco']['objective']:.6f} (Moco), "
                  f"final time {tight['moco_lab_warm']['final_time']:.4f} and {tight['moco']['final_time']:.4f} s"
                  + (f", stiffness {tight['moco_lab_warm']['stiffness']:.2f} and {tight['moco']['stiffness']:.2f} "
                     "N·m/rad" if "stiffness" in tight["moco"] else "")
                  + f" (at 1e-3: {loose['moco_lab_warm']['objective']:.6f} and {loose['moco']['objective']:.6f}). "
                  "At 1e-3 the optimizers stop at different points of a flat valley; tightened, both reach the "
                  "same optimum."]
    lines += ["", "The paper reports an optimal stiffness of 88 N·m/rad (preprint) / 90 N·m/rad (PLOS Comput Biol "
              "2020), each problem solved in about 3 minutes on 8 threads (Moco 0.4.0)."]
    (HERE / "squat_to_stand.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
