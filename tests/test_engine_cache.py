"""Compiled dynamics are never stale, the disk cache is reused by a second process, edited models save honestly.

Every test edits a model *after* a solve (or after its kernel was compiled) and checks that the physics
the engine computes changed accordingly — by comparing with the same quantity computed independently
(closed forms, Drake, the muscle model evaluated directly), not merely with "something different".
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.engine.kernel import kernel_for
from moco_lab.modeling.forces import PointToPointSpringDamper


def small_prediction(N=8):
    study = ml.examples.suspended_mass_prediction_study(num_mesh_intervals=N)
    study.solver.optim_convergence_tolerance = 1e-6
    return study


def test_muscle_property_edit_changes_the_solution():
    """The issue's example: ×10 max isometric force after a solve must change the effort (and not silently reuse)."""
    study = small_prediction()
    before = study.solve()
    assert before.success, before.message
    for m in study.problem.model.muscles:
        m.muscle.max_isometric_force *= 10
    after = study.solve()
    assert after.success, after.message
    # ten times stronger muscles need far smaller excitations for the same motion
    assert after.goal_values["effort"] < 0.2 * before.goal_values["effort"]


def test_muscle_force_matches_the_muscle_model_after_an_edit():
    model = ml.models.suspended_mass()
    k = kernel_for(model)
    Q = np.array([[0.05, -0.2]])
    U = np.array([[0.1, -0.2]])
    Z = np.array([[0.4, 0.5, 0.6]])
    X = np.full((1, 3), 0.5)
    names = [f"/forceset/{n}/tendon_force" for n in ("left", "middle", "right")]
    lengths = k.outputs([f"/forceset/{n}/length" for n in ("left", "middle", "right")] +
                        [f"/forceset/{n}/lengthening_speed" for n in ("left", "middle", "right")], Q, U, X, Z=Z)
    model.muscles[0].muscle.optimal_fiber_length *= 1.3
    model.set_property("/forceset/middle/max_isometric_force", 123.0)
    out = kernel_for(model).outputs(names, Q, U, X, Z=Z)
    for j, m in enumerate(model.muscles):
        L = lengths[f"/forceset/{m.name}/length"][0, 0]
        V = lengths[f"/forceset/{m.name}/lengthening_speed"][0, 0]
        expected = m.muscle.calc_tendon_force(Z[0, j], L, V)   # the muscle model, evaluated directly
        assert out[names[j]][0, 0] == pytest.approx(expected, rel=1e-12)


def test_path_point_edit_changes_the_length():
    model = ml.models.suspended_mass()
    q = np.array([[0.03, -0.17]])
    k0 = kernel_for(model)
    name = "/forceset/left/length"
    L0 = k0.outputs([name], q, np.zeros((1, 2)), np.zeros((1, 3)), Z=np.zeros((1, 3)))[name][0, 0]
    origin = model.muscles[0].geometry.points[0]
    origin.location = (origin.location[0] - 0.1, origin.location[1], origin.location[2])
    L1 = kernel_for(model).outputs([name], q, np.zeros((1, 2)), np.zeros((1, 3)), Z=np.zeros((1, 3)))[name][0, 0]
    # straight line from the (moved) origin to the mass at (x, y)
    ox, oy, _ = origin.location
    assert L1 == pytest.approx(np.hypot(q[0, 0] - ox, q[0, 1] - oy), rel=1e-12)
    assert L0 == pytest.approx(np.hypot(q[0, 0] - ox - 0.1, q[0, 1] - oy), rel=1e-12)


def test_constraint_added_after_a_solve():
    study = ml.Study()
    p = study.problem
    model = ml.models.planar_point_mass()
    p.set_model(model)
    p.set_time_bounds(0, 1)
    p.set_state_info("/jointset/tx/tx/value", (-2, 2), -1, 0.5)
    p.set_state_info("/jointset/ty/ty/value", (-2, 2), 1, 0.25)
    p.set_state_info_pattern(".*/speed", (-5, 5), 0, 0)
    p.add_goal(ml.ControlGoal("effort"))
    study.solver.num_mesh_intervals = 10
    free = study.solve()
    assert free.success
    model.add_constraint(ml.PointOnCurveConstraint("curve", lambda x: x * x, x="tx", y="ty"))
    p.set_model(model)  # the problem re-reads the model's names (multipliers appear)
    on_curve = study.solve()
    assert on_curve.success, on_curve.message
    x, y = on_curve.states["/jointset/tx/tx/value"], on_curve.states["/jointset/ty/ty/value"]
    np.testing.assert_allclose(y[::2], x[::2] ** 2, atol=1e-8)       # φ = 0 at the mesh points
    assert np.max(np.abs(free.states["/jointset/ty/ty/value"][::2] - free.states["/jointset/tx/tx/value"][::2] ** 2)) > 0.05
    assert "/constraintset/curve/lambda_0" in on_curve.multipliers


def test_force_element_added_after_compilation_matches_drake():
    from pydrake.multibody.tree import MultibodyForces

    model = ml.models.double_pendulum()
    q, u = np.array([[0.3, -0.4]]), np.array([[0.5, 0.7]])
    before = kernel_for(model).applied(q, u, np.zeros((1, 0)), np.zeros((1, 2)), np.zeros(0))[0]
    assert np.allclose(before, 0)
    spring = PointToPointSpringDamper("/forceset/strap", "ground", (0.0, 0.5, 0.0), "b1", (0.0, 0.0, 0.0),
                                      stiffness=40.0, rest_length=0.3, damping=2.0)
    model.add_force_element(spring)
    after = kernel_for(model).applied(q, u, np.zeros((1, 0)), np.zeros((1, 2)), np.zeros(0))[0]
    # reference: the same spring as Drake's LinearSpringDamper, generalized forces by inverse dynamics
    from pydrake.multibody.tree import LinearSpringDamper

    b = ml.ModelBuilder("dp", gravity=(0, 0, 0))
    b.add_body("b0", 1.0, inertia=(1, 1, 1))
    b.add_pin_joint("j0", "ground", "b0", child_offset=(-1, 0, 0))
    b.add_body("b1", 1.0, inertia=(1, 1, 1))
    b.add_pin_joint("j1", "b0", "b1", child_offset=(-1, 0, 0))
    plant = b.plant
    plant.AddForceElement(LinearSpringDamper(plant.world_body(), [0, 0.5, 0], plant.GetBodyByName("b1"), [0, 0, 0],
                                             0.3, 40.0, 2.0))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q[0])
    plant.SetVelocities(ctx, u[0])
    forces = MultibodyForces(plant)
    plant.CalcForceElementsContribution(ctx, forces)
    zero = np.zeros(2)
    drake = plant.CalcInverseDynamics(ctx, zero, MultibodyForces(plant)) - plant.CalcInverseDynamics(ctx, zero, forces)
    np.testing.assert_allclose(after[0], drake, rtol=1e-12, atol=1e-12)


def test_parameters_are_part_of_the_key():
    model = ml.models.sliding_mass()
    k_fixed = kernel_for(model)
    k_param = kernel_for(model, ("/body/mass",))
    assert k_param.npar == 1 and k_fixed.npar == 0
    Q, U, X = np.zeros((1, 1)), np.zeros((1, 1)), np.array([[3.0]])
    a_fixed = k_fixed.evaluate(Q, U, X, np.zeros(0))["A"][0, 0]
    a_param = k_param.evaluate(Q, U, X, np.array([6.0]))["A"][0, 0]
    assert a_fixed == pytest.approx(3.0 / 2.0) and a_param == pytest.approx(3.0 / 6.0)


def test_edited_model_round_trips_through_a_study_file(tmp_path):
    study = small_prediction(N=6)
    study.problem.model.set_property("/forceset/left/max_isometric_force", 55.0)
    study.problem.model.muscles[2].muscle.tendon_slack_length *= 1.01   # a property edit made by attribute
    path = tmp_path / "edited.json"
    study.save(path)
    saved = json.loads(path.read_text())["model"]
    assert saved["edits"]["/forceset/left/max_isometric_force"] == 55.0
    again = ml.Study.load(path)
    assert json.dumps(again.problem.model.description(), sort_keys=True) == \
        json.dumps(study.problem.model.description(), sort_keys=True)
    a, b = study.solve(), again.solve()
    assert a.success and b.success
    assert a.objective == b.objective                       # the same program, bit for bit


def test_unrecordable_edits_are_refused_with_the_reason():
    study = small_prediction(N=6)
    study.problem.model.add_force_element(ml.SpringGeneralizedForce("/forceset/extra", "tx", 3.0))
    with pytest.raises(TypeError, match="force_elements"):
        study.to_dict()
    study = small_prediction(N=6)
    study.problem.model.muscles[0].muscle.tendon_strain_at_one_norm_force = 0.04   # not an optimizable property
    with pytest.raises(TypeError, match="changed after the factory 'suspended_mass' built it"):
        study.to_dict()


def test_a_second_process_loads_compiled_dynamics_from_the_disk_cache(tmp_path):
    script = textwrap.dedent("""
        import json, sys
        import moco_lab as ml
        from moco_lab.engine import kernel as K
        K.build_statistics.clear()
        K.kernel_for(ml.models.suspended_mass(tendon="implicit")).compile_all()
        print(json.dumps(K.build_statistics))
    """)
    env = dict(os.environ, MOCO_LAB_CACHE=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                      check=True).stdout.strip().splitlines()[-1]) for _ in range(2)]
    first, second = runs
    assert first.get("compile", 0) > 0 and first.get("differentiate", 0) > 0
    assert "compile" not in second and "differentiate" not in second and second.get("load", 0) > 0
    # a changed model misses the cache
    script_changed = script.replace('tendon="implicit"', 'tendon="explicit"')
    third = json.loads(subprocess.run([sys.executable, "-c", script_changed], env=env, capture_output=True,
                                      text=True, check=True).stdout.strip().splitlines()[-1])
    assert third.get("compile", 0) > 0


def test_output_values_compile_no_jacobian():
    """Outputs asked for without their Jacobian compile a block of values only (a Jacobian compiled for nothing took
    5 minutes for the 3-D model's knee reactions after its knee-load solve); their values are the Jacobian block's,
    bit for bit (the same arithmetic), and which variables they depend on is read off the expressions."""
    model = ml.models.suspended_mass()
    Q, U = np.array([[0.05, -0.2], [0.0, 0.1]]), np.array([[0.1, -0.2], [0.3, 0.0]])
    Z, X = np.array([[0.4, 0.5, 0.6], [0.2, 0.3, 0.1]]), np.full((2, 3), 0.5)
    names = ["/forceset/left/tendon_force", "/forceset/middle/length"]
    k = kernel_for(model)
    k._blocks.clear()
    values = k.outputs(names, Q, U, X, Z=Z)
    assert ("outputs_values", tuple(names)) in k._blocks and ("outputs", tuple(names)) not in k._blocks
    with_jac = k.outputs(names, Q, U, X, Z=Z, jac=True)
    for name in names:
        assert np.array_equal(values[name], with_jac[name])
    # the dependence: the tendon force on q, u and the activation (a state), the length on q only — as the
    # Jacobian's non-zero columns say
    assert k.output_dependence(names[:1]) == {"q", "u", "z"}
    assert k.output_dependence(names[1:]) == {"q"}
    J = with_jac["J"]["/forceset/middle/length"]
    assert np.any(J["dq"]) and not np.any(J["du"]) and not np.any(J["dz"])
    with pytest.raises(KeyError, match="model output"):
        k.output_dependence(["/forceset/left/tendon_forc"])
