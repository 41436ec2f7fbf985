"""OpenSim Moco 4.6's ``MocoContactTrackingGoal::addScaleFactor`` on a small contact problem, stored as the evidence
``tests/test_contact_scale_factors.py`` reads (the stored-reference pattern).

Moco 4.6 crashes on the 2-D walker with a scale factor (a segmentation fault in ``MocoStudy::solve``), so a model
small enough to look at: a 2 kg ball (radius 0.05 m) on a ``PlanarJoint`` (``rz``, ``tx``, ``ty``) over the floor,
one ``SmoothSphereHalfSpaceForce`` (stiffness 1e6, dissipation 1, friction 0.8 / 0.8 / 0.5, transition velocity
0.2), ``CoordinateActuator`` s on ``tx`` and ``ty`` (optimal force 50 N, controls in [−1, 1]). The problem: t in
[0, 1] s, ``tx`` from 0 to 0.3 m, ``ty`` in [−0.05, 0.1] m, at rest at both ends; effort (weight 1) and contact
tracking (weight 0.1, projected onto the x-y plane) of a reference force on the ball, 3 sin(πt) N fore-aft and
m g (1 + 0.5 sin 2πt) N vertical (:data:`REFERENCE`), with one scale factor ``vertical_scale`` on its vertical
component; Hermite–Simpson, 30 mesh intervals.

Moco is started from its guess from bounds (the ball 2.5 cm above the floor: no contact force) with no iteration
allowed (the ball's centre 2.5 cm above the floor: the sphere 2.5 cm into it), the factor's bounds fixed at each
value of :data:`FACTORS`, and once without a factor. Its contact term is the same at every factor (to the last
digit) and without one; and with the factor free in [0.5, 2] it stays at its initial 1.25 through 20 iterations
(its gradient is zero): Moco 4.6 does not apply the factor it optimizes (measured 2026-11-29). The trajectory Moco
evaluated is stored with the values, so moco_lab scores the same point.

Writes ``benchmarks/reference/contact_scale_factor_moco.json`` (the values, settings, environment), the model
``contact_ball.osim`` (printed by OpenSim), the data ``contact_ball_grf.{xml,sto}`` and the trajectory
``contact_ball_guess.sto``.

Usage::

    .venv/bin/python -m benchmarks.contact_scale_factor_moco     # under a minute
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from benchmarks.compare_moco import environment, stored_reference
from benchmarks.moco_reference import _configure_solver, _quiet_scratch_dir

REFERENCE = Path(__file__).resolve().parent / "reference"
MASS, G = 2.0, 9.80665
#: The reference force: 51 rows over [0, 1] s.
REFERENCE_FORCE = {"fore_aft": "3 sin(pi t)", "vertical": "m g (1 + 0.5 sin(2 pi t))", "rows": 51}
FACTORS = (0.5, 1.0, 2.0)
SETTINGS = {"num_mesh_intervals": 30, "scheme": "hermite-simpson", "time": [0.0, 1.0], "tx": [0.0, 0.3],
            "ty_bounds": [-0.05, 0.1], "effort_weight": 1.0, "contact_weight": 0.1, "projection": "plane",
            "projection_vector": [0.0, 0.0, 1.0], "external_force": "Ball_GRF", "factor_index": 1,
            "free_factor_bounds": [0.5, 2.0], "free_factor_iterations": 20}


def build_model(osim):
    """The ball model (module docstring)."""
    model = osim.Model()
    model.setName("contact_ball")
    ball = osim.Body("ball", MASS, osim.Vec3(0), osim.Inertia(0.002, 0.002, 0.002))
    model.addBody(ball)
    joint = osim.PlanarJoint("ground_ball", model.getGround(), ball)
    for i, name in enumerate(("rz", "tx", "ty")):
        joint.upd_coordinates(i).setName(name)
    model.addJoint(joint)
    for name in ("tx", "ty"):
        actuator = osim.CoordinateActuator(name)
        actuator.setName(f"{name}_actuator")
        actuator.setOptimalForce(50.0)
        actuator.setMinControl(-1.0)
        actuator.setMaxControl(1.0)
        model.addForce(actuator)
    sphere = osim.ContactSphere(0.05, osim.Vec3(0), ball, "sphere")
    floor = osim.ContactHalfSpace(osim.Vec3(0), osim.Vec3(0, 0, -0.5 * math.pi), model.getGround(), "floor")
    model.addContactGeometry(sphere)
    model.addContactGeometry(floor)
    force = osim.SmoothSphereHalfSpaceForce("contact", sphere, floor)
    force.set_stiffness(1e6)
    force.set_dissipation(1.0)
    force.set_static_friction(0.8)
    force.set_dynamic_friction(0.8)
    force.set_viscous_friction(0.5)
    force.set_transition_velocity(0.2)
    model.addForce(force)
    model.finalizeConnections()
    return model


def write_data(folder: Path) -> None:
    """``contact_ball_grf.sto`` (the reference force on the ball, at the origin, no torque) and
    ``contact_ball_grf.xml`` (its ``ExternalLoads``, one ``ExternalForce`` named ``Ball_GRF``) in ``folder``."""
    t = np.linspace(0.0, 1.0, REFERENCE_FORCE["rows"])
    fx, fy = 3.0 * np.sin(math.pi * t), MASS * G * (1 + 0.5 * np.sin(2 * math.pi * t))
    columns = ["ground_force_vx", "ground_force_vy", "ground_force_vz", "ground_force_px", "ground_force_py",
               "ground_force_pz", "ground_torque_x", "ground_torque_y", "ground_torque_z"]
    lines = ["contact_ball_grf", "version=1", f"nRows={t.size}", f"nColumns={len(columns) + 1}", "inDegrees=no",
             "endheader", "\t".join(["time", *columns])]
    lines += ["\t".join(repr(float(v)) for v in (t[k], fx[k], fy[k], *[0.0] * 7)) for k in range(t.size)]
    (folder / "contact_ball_grf.sto").write_text("\n".join(lines) + "\n")
    (folder / "contact_ball_grf.xml").write_text(f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
\t<ExternalLoads name="contact_ball_grf">
\t\t<objects>
\t\t\t<ExternalForce name="{SETTINGS['external_force']}">
\t\t\t\t<applied_to_body>ball</applied_to_body>
\t\t\t\t<force_expressed_in_body>ground</force_expressed_in_body>
\t\t\t\t<point_expressed_in_body>ground</point_expressed_in_body>
\t\t\t\t<force_identifier>ground_force_v</force_identifier>
\t\t\t\t<point_identifier>ground_force_p</point_identifier>
\t\t\t\t<torque_identifier>ground_torque_</torque_identifier>
\t\t\t</ExternalForce>
\t\t</objects>
\t\t<groups />
\t\t<datafile>contact_ball_grf.sto</datafile>
\t</ExternalLoads>
</OpenSimDocument>
""")


def evaluate(osim, folder: Path, factor: float | tuple | None, max_iterations: int = 0) -> dict:
    """Moco's problem (module docstring) after ``max_iterations`` from its guess, the factor's bounds fixed at
    ``factor`` (a pair: free between them; None: no factor): status, objective, goal values, parameters; without a
    factor and an iteration the evaluated trajectory is written to ``folder`` (with a factor it would carry it)."""
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModelProcessor(osim.ModelProcessor(str(folder / "contact_ball.osim")))
    problem.setTimeBounds(*SETTINGS["time"])
    problem.setStateInfo("/jointset/ground_ball/tx/value", [-0.5, 1.0], *SETTINGS["tx"])
    problem.setStateInfo("/jointset/ground_ball/ty/value", SETTINGS["ty_bounds"])
    problem.setStateInfo("/jointset/ground_ball/rz/value", [-20.0, 20.0], 0.0)
    for coordinate in ("tx", "ty", "rz"):
        problem.setStateInfo(f"/jointset/ground_ball/{coordinate}/speed", [-10.0, 10.0], 0.0, 0.0)
    problem.addGoal(osim.MocoControlGoal("effort", SETTINGS["effort_weight"]))
    goal = osim.MocoContactTrackingGoal("contact", SETTINGS["contact_weight"])
    goal.setExternalLoadsFile(str(folder / "contact_ball_grf.xml"))
    paths = osim.StdVectorString()
    paths.append("/forceset/contact")
    goal.addContactGroup(paths, SETTINGS["external_force"])
    goal.setProjection(SETTINGS["projection"])
    goal.setProjectionVector(osim.Vec3(*SETTINGS["projection_vector"]))
    if factor is not None:
        goal.addScaleFactor("vertical_scale", SETTINGS["external_force"], SETTINGS["factor_index"],
                            osim.MocoBounds(*(factor if isinstance(factor, tuple) else (factor, factor))))
    problem.addGoal(goal)
    solver = _configure_solver(study, SETTINGS["scheme"], "explicit", SETTINGS["num_mesh_intervals"], None)
    solver.set_optim_max_iterations(max_iterations)
    with _quiet_scratch_dir():
        solution = study.solve()
    solution.unseal()
    if max_iterations == 0 and factor is None:
        solution.write(str(folder / "contact_ball_guess.sto"))
    return {"factor": factor, "max_iterations": max_iterations, "iterations": solution.getNumIterations(),
            "status": solution.getStatus(), "objective": solution.getObjective(),
            "goals": {name: solution.getObjectiveTerm(name) for name in solution.getObjectiveTermNames()},
            "parameters": {name: solution.getParameter(name) for name in solution.getParameterNames()}}


def main() -> None:
    import opensim as osim

    osim.Logger.setLevelString("error")
    path, _ = stored_reference("contact_scale_factor_moco")
    build_model(osim).printToXML(str(REFERENCE / "contact_ball.osim"))
    write_data(REFERENCE)
    free = evaluate(osim, REFERENCE, tuple(SETTINGS["free_factor_bounds"]), SETTINGS["free_factor_iterations"])
    runs = [evaluate(osim, REFERENCE, factor) for factor in (None, *FACTORS)]
    print(f"factor free in {free['factor']}: {free['iterations']} iterations, {free['parameters']}")
    for run in runs:
        print(f"factor {run['factor']}: {run['status']}, contact {run['goals']['contact']!r}, {run['parameters']}")
    path.write_text(json.dumps({"environment": environment(), "settings": dict(
        SETTINGS, reference_force=REFERENCE_FORCE, mass=MASS, g=G, model="reference/contact_ball.osim",
        external_loads="reference/contact_ball_grf.xml", trajectory="reference/contact_ball_guess.sto"),
        "runs": runs, "free": free}, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
