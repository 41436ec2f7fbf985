"""Problem definition: names, bounds, defaults, and clear errors for bad input."""
from __future__ import annotations

import math
import re

import pytest

import moco_lab as ml


def sliding():
    study = ml.examples.sliding_mass_study(num_mesh_intervals=10)
    return study, study.problem


def test_names_follow_moco_paths():
    _, p = sliding()
    assert p.state_names() == ["/slider/position/value", "/slider/position/speed"]
    assert p.control_names() == ["/actuator"]
    lin = ml.examples.linear_study().problem
    assert lin.state_names() == ["/jointset/j/coord/value", "/jointset/j/coord/speed"]
    assert lin.control_names() == ["/forceset/coordinateactuator"]
    dp = ml.examples.double_pendulum_study().problem
    assert dp.state_names() == ["/jointset/j0/q0/value", "/jointset/j1/q1/value",
                                "/jointset/j0/q0/speed", "/jointset/j1/q1/speed"]
    assert dp.control_names() == ["/tau0", "/tau1"]


def test_unknown_state_name_lists_near_matches():
    _, p = sliding()
    with pytest.raises(KeyError) as err:
        p.set_state_info("/slider/positon/value", (-1, 1))
    msg = str(err.value)
    assert "Unknown state '/slider/positon/value'" in msg
    assert "'/slider/position/value'" in msg  # the near match is suggested


def test_unknown_control_name():
    _, p = sliding()
    with pytest.raises(KeyError, match="Did you mean '/actuator'"):
        p.set_control_info("/actuatr", (-1, 1))


def test_names_checked_when_model_set_later():
    p = ml.Problem()
    p.set_state_info("/nope/value", (0, 1))  # no model yet: accepted for now
    with pytest.raises(KeyError, match="Unknown state '/nope/value'"):
        p.set_model(ml.models.sliding_mass())


@pytest.mark.parametrize("bounds", [(1, -1), (5, 2)])
def test_inverted_bounds(bounds):
    _, p = sliding()
    with pytest.raises(ValueError, match="inverted bounds"):
        p.set_state_info("/slider/position/value", bounds)


def test_initial_bounds_outside_bounds():
    _, p = sliding()
    with pytest.raises(ValueError, match="initial bounds .* are outside its bounds"):
        p.set_state_info("/slider/position/value", (-1, 1), 2)
    with pytest.raises(ValueError, match="final bounds .* are outside its bounds"):
        p.set_control_info("/actuator", (-10, 10), None, (5, 20))


def test_inconsistent_time_bounds():
    _, p = sliding()
    with pytest.raises(ValueError, match="inverted"):
        p.set_time_bounds(0, (5, 1))
    with pytest.raises(ValueError, match="before initial time"):
        p.set_time_bounds((2, 3), (0, 1))
    with pytest.raises(ValueError, match="exceed the initial time"):
        p.set_time_bounds(1, 1)


def test_bad_bound_types():
    _, p = sliding()
    with pytest.raises(TypeError):
        p.set_state_info("/slider/position/value", "wide")
    with pytest.raises(ValueError):
        p.set_state_info("/slider/position/value", (1, 2, 3))
    with pytest.raises(ValueError, match="NaN"):
        ml.Bounds(math.nan, 1)


def test_defaults_like_moco():
    p = ml.Problem()
    p.set_model(ml.models.double_pendulum())
    assert p.state_info("/jointset/j0/q0/speed").bounds == ml.Bounds(-50, 50)
    assert p.state_info("/jointset/j0/q0/value").bounds == ml.Bounds()  # coordinate range (unbounded)
    assert p.control_info("/tau0").bounds == ml.Bounds()  # actuator control limits


def test_patterns_and_precedence():
    p = ml.examples.double_pendulum_study().problem
    p.set_state_info_pattern(r".*/value", (-3, 3))
    assert p.state_info("/jointset/j1/q1/value").bounds == ml.Bounds(-10, 10)  # explicit info wins
    p2 = ml.Problem()
    p2.set_model(ml.models.double_pendulum())
    p2.set_state_info_pattern(r".*/value", (-3, 3), 0)
    assert p2.state_info("/jointset/j1/q1/value").bounds == ml.Bounds(-3, 3)
    assert p2.state_info("/jointset/j1/q1/value").initial == ml.Bounds(0, 0)
    with pytest.raises(KeyError, match="matches no state"):
        p2.set_state_info_pattern(r"/nothing.*", (0, 1))


def test_goal_names_unique_and_lookup():
    _, p = sliding()
    with pytest.raises(ValueError, match="already exists"):
        p.add_goal(ml.FinalTimeGoal("time"))
    with pytest.raises(KeyError, match="Did you mean 'time'"):
        p.get_goal("tme")
    with pytest.raises(ValueError, match="exponent must be a finite number >= 2"):
        ml.ControlGoal(exponent=1)


def test_goal_with_unknown_names_rejected_at_solve():
    study, p = sliding()
    g = p.add_goal(ml.ControlGoal("effort"))
    g.set_weight_for_control("/actuatr", 2.0)
    with pytest.raises(KeyError, match="Did you mean '/actuator'"):
        study.solve()


def test_parameter_errors():
    _, p = sliding()
    with pytest.raises(KeyError, match="Unknown model property '/body/mas'"):
        p.add_parameter("m", "/body/mas", (1, 2))
    with pytest.raises(ValueError, match="inverted bounds"):
        p.add_parameter("m", "/body/mass", (2, 1))
    p.add_parameter("m", "/body/mass", (1, 3))
    with pytest.raises(ValueError, match="already a parameter"):
        p.add_parameter("m2", "/body/mass", (1, 3))
    assert "/actuator/optimal_force" in p.model.properties()
    # bounds assigned later (lesson 08's exercise) are checked and converted like those given to add_parameter
    p.parameters[0].bounds = (0.5, 4)
    assert (p.parameters[0].bounds.lower, p.parameters[0].bounds.upper) == (0.5, 4.0)
    with pytest.raises(ValueError, match="parameter 'm' bounds: inverted bounds"):
        p.parameters[0].bounds = (4, 0.5)
    with pytest.raises(TypeError, match="parameter 'm' bounds: expected a number or a"):
        p.parameters[0].bounds = "wide"
    with pytest.raises(ValueError, match="Parameter 'm' needs bounds"):
        p.parameters[0].bounds = None


@pytest.mark.parametrize("setting, value, message", [
    ("transcription_scheme", "simpson", "transcription_scheme must be one of ['trapezoidal', 'hermite-simpson'] or"),
    ("transcription_scheme", "legendre-gauss-10", "with k = 1...9, got 'legendre-gauss-10' (did you mean "
                                                  "'legendre-gauss-1'"),
    ("multibody_dynamics_mode", "semi", "Unknown multibody_dynamics_mode 'semi'"),
    ("optim_solver", "knitro", "Unknown optim_solver 'knitro'"),
    ("num_mesh_intervals", 0, "positive integer"),
    ("optim_convergence_tolerance", -1.0, "must be a finite number > 0"),
])
def test_bad_solver_settings(setting, value, message):
    study, _ = sliding()
    setattr(study.solver, setting, value)
    with pytest.raises(ValueError, match=re.escape(message)):
        study.solve()


def test_missing_time_bounds_and_model():
    study = ml.Study()
    with pytest.raises(RuntimeError, match="set_model"):
        study.solve()
    study.problem.set_model(ml.models.sliding_mass())
    with pytest.raises(RuntimeError, match="set_time_bounds"):
        study.solve()


def test_infeasible_problem_is_reported_not_hidden():
    """1 m in at most 0.2 s with |F| <= 50 N is impossible for 2 kg (needs 0.4 s)."""
    study, p = sliding()
    p.set_time_bounds(0, (0, 0.2))
    sol = study.solve()
    assert not sol.success
    assert sol.status in ("Infeasible_Problem_Detected", "Restoration_Failed", "Maximum_Iterations_Exceeded",
                          "Search_Direction_Becomes_Too_Small")
    assert sol.status in sol.message
    assert sol.constraint_violation > 1e-3
    with pytest.raises(RuntimeError, match="sealed"):
        sol.states
    assert sol.unseal().states["/slider/position/value"].shape == sol.time.shape


def test_iteration_limit_reported():
    study, _ = sliding()
    study.solver.optim_max_iterations = 2
    sol = study.solve()
    assert not sol.success and sol.status == "Maximum_Iterations_Exceeded" and sol.nit == 2


def test_user_plant_names_from_drake():
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    urdf = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="upper"><inertial><mass value="1.0"/><origin xyz="0.5 0 0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="30" velocity="10"/></joint>
  <joint name="fix" type="fixed"><parent link="world"/><child link="base"/></joint>
  <transmission type="SimpleTransmission" name="t">
    <actuator name="motor"/><joint name="shoulder"/><mechanicalReduction>1</mechanicalReduction>
  </transmission>
</robot>"""
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModelsFromString(urdf, "urdf")
    plant.Finalize()
    p = ml.Problem()
    p.set_model(plant)  # a plain MultibodyPlant is wrapped with Drake's names
    assert p.state_names() == ["/jointset/shoulder/shoulder/value", "/jointset/shoulder/shoulder/speed"]
    assert p.control_names() == ["/forceset/motor"]
    assert p.state_info("/jointset/shoulder/shoulder/value").bounds == ml.Bounds(-2, 2)
    assert p.control_info("/forceset/motor").bounds == ml.Bounds(-30, 30)
    assert p.model.plant is plant  # Drake objects pass through unchanged


def test_discrete_plant_rejected():
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.01)
    plant.Finalize()
    with pytest.raises(ValueError, match="continuous"):
        ml.Model.from_plant(plant)
