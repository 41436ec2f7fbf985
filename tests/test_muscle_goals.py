"""Moco's initial force and velocity equilibria of DeGrooteFregly2016 muscles with compliant tendons
(``moco_lab.ocp.muscle_goals``): each goal reads its residual of each such muscle at the start; the residuals
themselves equal OpenSim's ``calcEquilibriumResidual(l, v, a, f̃_T, 0)`` and
``calcLinearizedEquilibriumResidualDerivative`` (tests/test_muscle.py, to 1e-12 and 1e-10 relative); their exact
derivatives are checked in tests/test_transcription_hessians.py."""
import numpy as np
import pytest

import moco_lab as ml


def _study(model, goal) -> ml.Study:
    study = ml.Study()
    p = study.problem
    p.set_model(model)
    p.set_time_bounds(0, 0.5)
    p.set_state_info_pattern(r".*/value", (-0.4, 0.4))
    p.set_state_info_pattern(r".*/speed", (-15, 15))
    p.set_state_info_pattern(r".*/activation", (0.02, 1))
    if any(n.endswith("/normalized_tendon_force") for n in p.state_names()):
        p.set_state_info_pattern(r".*/normalized_tendon_force", (0, 2))
    p.add_goal(goal)
    study.solver.num_mesh_intervals = 4
    return study


def test_cost_is_the_sum_of_the_initial_residuals_squared():
    """On a trajectory whose first row is known, the cost mode's value is Σ_m r_m(t0)² over the three muscles, r the
    muscles' equilibrium residual with the tendon force held (computed here by the muscle model's own function on the
    path lengths and speeds the engine reports: to 1e-12). The endpoint-constraint mode (Moco's default) holds the
    same values, one row per muscle; its exact derivatives are checked with the Hessians."""
    model = ml.models.suspended_mass(tendon="explicit")
    rng = np.random.default_rng(5)
    t = np.linspace(0.0, 0.5, 9)
    states = {"/jointset/tx/tx/value": -0.1 + 0.1 * t, "/jointset/ty/ty/value": -0.2 + 0.05 * t,
              "/jointset/tx/tx/speed": 0.1 + 0 * t, "/jointset/ty/ty/speed": 0.05 + 0 * t}
    muscles = [e for e in model.force_elements if hasattr(e, "muscle")]
    for e in muscles:
        states[f"{e.path}/activation"] = rng.uniform(0.2, 0.6) + 0 * t
        states[f"{e.path}/normalized_tendon_force"] = rng.uniform(0.2, 0.8) + 0 * t
    traj = ml.Trajectory(t, states=states, controls={e.path: 0.3 + 0 * t for e in muscles})
    table = ml.analyze(model, traj, ".*/(length|lengthening_speed)")
    expected = [e.muscle.calc_implicit_residual(states[f"{e.path}/activation"][0], table.columns[f"{e.path}/length"][0],
                                                table.columns[f"{e.path}/lengthening_speed"][0],
                                                states[f"{e.path}/normalized_tendon_force"][0], 0.0) for e in muscles]
    assert min(abs(r) for r in expected) > 1e-3  # far from equilibrium: the test means something
    cost = _study(model, ml.InitialForceEquilibriumDGFGoal("eq", 2.0, mode="cost")).evaluate(traj)
    assert cost.goal_values["eq"] == pytest.approx(2.0 * sum(r * r for r in expected), rel=1e-12)
    # the velocity equilibrium: the linearized equilibrium's derivative (N/s), OpenSim's function (tests/test_muscle.py)
    expected = [e.muscle.calc_linearized_equilibrium_residual_derivative(
        states[f"{e.path}/activation"][0], table.columns[f"{e.path}/length"][0],
        table.columns[f"{e.path}/lengthening_speed"][0], states[f"{e.path}/normalized_tendon_force"][0])
        for e in muscles]
    assert min(abs(r) for r in expected) > 1e-3
    cost = _study(model, ml.InitialVelocityEquilibriumDGFGoal("veq", 0.5, mode="cost")).evaluate(traj)
    assert cost.goal_values["veq"] == pytest.approx(0.5 * sum(r * r for r in expected), rel=1e-12)


def test_models_without_explicit_compliant_tendons_are_refused_by_name():
    for model in (ml.models.suspended_mass(), ml.models.suspended_mass(tendon="implicit")):
        with pytest.raises(ValueError, match="no DeGrooteFregly2016 muscle with a compliant tendon integrated "
                                             "explicitly"):
            _study(model, ml.InitialForceEquilibriumDGFGoal()).transcribe()
    with pytest.raises(ValueError, match="InitialVelocityEquilibriumDGFGoal .* no DeGrooteFregly2016 muscle with a "
                                         "compliant tendon"):
        _study(ml.models.suspended_mass(), ml.InitialVelocityEquilibriumDGFGoal()).transcribe()
    _study(ml.models.suspended_mass(tendon="implicit"), ml.InitialVelocityEquilibriumDGFGoal()).transcribe()
    again = ml.ocp.goal_from_dict(ml.InitialForceEquilibriumDGFGoal("eq", mode="cost", weight=3.0).to_dict())
    assert type(again) is ml.InitialForceEquilibriumDGFGoal and again.mode == "cost" and again.weight == 3.0
