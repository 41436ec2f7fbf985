"""OpenSim Moco 4.6's ``exampleHangingMuscle``: Moco's initial-equilibrium goals for compliant tendons in a solve,
stored as the reference ``tests/test_hanging_muscle_moco.py`` compares with (the stored-reference pattern).

The example (``Bindings/Python/examples/Moco/exampleHangingMuscle.py``, opensim-core 4.6): a 0.5 kg point mass on a
slider along x, gravity 9.81 m/s² along x, hanging from one ``DeGrooteFregly2016Muscle`` (F_max 30 N, l_opt 0.10 m,
tendon slack 0.05 m, tendon strain at one norm force 0.10, fiber damping 0.01, v_max 10, pennation 0.10 rad, with
activation dynamics and a compliant tendon), lifted from 0.15 m to 0.14 m at rest in minimum time: t_f in
[0.05, 1] s, height in [0.14, 0.16], speed in [−1, 1] (0 at both ends), excitation in [0.01, 1];
``MocoInitialActivationGoal``; ``MocoFinalTimeGoal``; 25 mesh intervals, implicit multibody dynamics, tolerances
1e-4. Two variants: the example's (the tendon's dynamics implicit, ``MocoInitialVelocityEquilibriumDGFGoal`` in cost
mode, weight 0.001) and the same with explicit tendon dynamics and ``MocoInitialForceEquilibriumDGFGoal`` (same mode
and weight). Each also at tolerance 1e-6. The model differs from the example's in one place only: its body and joint
are in the model's body and joint sets (paths ``/bodyset/body``, ``/jointset/joint``), which ``ml.read_osim`` reads
(the example adds them as plain components), and it has no metabolics probes (they do not enter the problem).

Writes ``benchmarks/reference/hanging_muscle_moco.json`` (per case: status, iterations, objective, goal values, time,
states, controls; the environment and settings) and the two models, ``hanging_muscle_{implicit,explicit}.osim``
(printed by OpenSim).

Usage::

    .venv/bin/python -m benchmarks.hanging_muscle_moco     # about a minute
"""
from __future__ import annotations

import json

from benchmarks.compare_moco import environment, stored_reference
from benchmarks.moco_reference import _columns, _configure_solver, _quiet_scratch_dir

#: The cases: tendon dynamics mode -> the initial-equilibrium goal Moco pairs with it.
GOALS = {"implicit": "MocoInitialVelocityEquilibriumDGFGoal", "explicit": "MocoInitialForceEquilibriumDGFGoal"}
TOLERANCES = (1e-4, 1e-6)
SETTINGS = {"num_mesh_intervals": 25, "multibody_dynamics_mode": "implicit", "final_time_bounds": [0.05, 1.0],
            "height": {"bounds": [0.14, 0.16], "initial": 0.15, "final": 0.14},
            "speed": {"bounds": [-1, 1], "initial": 0, "final": 0}, "excitation_bounds": [0.01, 1],
            "equilibrium_goal": {"mode": "cost", "weight": 0.001}}


def build_model(osim, tendon_mode: str):
    """The example's model (module docstring) with ``tendon_compliance_dynamics_mode = tendon_mode``."""
    model = osim.Model()
    model.setName("hanging_muscle")
    model.set_gravity(osim.Vec3(9.81, 0, 0))
    body = osim.Body("body", 0.5, osim.Vec3(0), osim.Inertia(1))
    model.addBody(body)
    joint = osim.SliderJoint("joint", model.getGround(), body)
    joint.updCoordinate().setName("height")
    model.addJoint(joint)
    muscle = osim.DeGrooteFregly2016Muscle()
    muscle.setName("muscle")
    muscle.set_max_isometric_force(30.0)
    muscle.set_optimal_fiber_length(0.10)
    muscle.set_tendon_slack_length(0.05)
    muscle.set_tendon_strain_at_one_norm_force(0.10)
    muscle.set_ignore_activation_dynamics(False)
    muscle.set_ignore_tendon_compliance(False)
    muscle.set_fiber_damping(0.01)
    muscle.set_tendon_compliance_dynamics_mode(tendon_mode)
    muscle.set_max_contraction_velocity(10)
    muscle.set_pennation_angle_at_optimal(0.10)
    muscle.addNewPathPoint("origin", model.updGround(), osim.Vec3(0))
    muscle.addNewPathPoint("insertion", body, osim.Vec3(0))
    model.addForce(muscle)
    model.finalizeConnections()
    return model


def solve(osim, model, tendon_mode: str, tol: float) -> dict:
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModelAsCopy(model)
    problem.setTimeBounds(0, SETTINGS["final_time_bounds"])
    h, v = SETTINGS["height"], SETTINGS["speed"]
    problem.setStateInfo("/jointset/joint/height/value", h["bounds"], h["initial"], h["final"])
    problem.setStateInfo("/jointset/joint/height/speed", v["bounds"], v["initial"], v["final"])
    problem.setControlInfo("/forceset/muscle", SETTINGS["excitation_bounds"])
    activation = osim.MocoInitialActivationGoal()
    activation.setName("initial_activation")
    problem.addGoal(activation)
    equilibrium = getattr(osim, GOALS[tendon_mode])()
    equilibrium.setName("initial_equilibrium")
    equilibrium.setMode(SETTINGS["equilibrium_goal"]["mode"])
    equilibrium.setWeight(SETTINGS["equilibrium_goal"]["weight"])
    problem.addGoal(equilibrium)
    problem.addGoal(osim.MocoFinalTimeGoal("time"))
    _configure_solver(study, "hermite-simpson", SETTINGS["multibody_dynamics_mode"], SETTINGS["num_mesh_intervals"],
                      tol)   # Moco's default scheme, as the example
    with _quiet_scratch_dir():
        solution = study.solve()
    solution.unseal()
    return {"success": bool(solution.success()), "status": solution.getStatus(),
            "nit": int(solution.getNumIterations()), "objective": solution.getObjective(),
            "goals": {n: solution.getObjectiveTerm(n) for n in solution.getObjectiveTermNames()},
            "time": [float(t) for t in solution.getTimeMat().ravel()],
            **{group: {k: c.tolist() for k, c in _columns(names, getter).items()}
               for group, names, getter in (("states", solution.getStateNames(), solution.getStateMat),
                                            ("controls", solution.getControlNames(), solution.getControlMat))}}


def main() -> None:
    import opensim as osim

    path, _ = stored_reference("hanging_muscle_moco")
    results = {}
    for mode in GOALS:
        model = build_model(osim, mode)
        model.printToXML(str(path.parent / f"hanging_muscle_{mode}.osim"))
        for tol in TOLERANCES:
            r = results[f"{mode}_tol{tol:g}"] = solve(osim, model, mode, tol)
            print(f"{mode} tol {tol:g}: {r['status']}, {r['nit']} iterations, objective {r['objective']:.10g}")
    path.write_text(json.dumps({"environment": environment(), "settings": dict(SETTINGS, goals=GOALS,
                                                                              tolerances=list(TOLERANCES)),
                                "results": results}, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
