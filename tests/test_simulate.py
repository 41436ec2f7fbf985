"""Tests of ``moco_lab.simulate``: time-stepping a trajectory's controls.

Analytic cases check the simulator itself (Drake ``Simulator`` + moco_lab's
force elements); real solves check that simulating a solution's controls
reproduces the states the collocation predicted, to the accuracy the
transcription can deliver.
"""


import numpy as np
import pytest

import moco_lab as ml
from moco_lab.tools.simulate import ForceElementSystem, integration_schemes, simulate, simulate_solution

SQ, SU, SX = "/slider/position/value", "/slider/position/speed", "/actuator"
LQ, LU, LX = "/jointset/j/coord/value", "/jointset/j/coord/speed", "/forceset/coordinateactuator"


def constant_control(model, time, value, control):
    """A trajectory at rest at ``time[0]`` with one control held at ``value``."""
    n = len(time)
    return ml.Trajectory(time, states={name: np.zeros(n) for name in model.state_names()},
                         controls={control: np.full(n, float(value))})


# --------------------------------------------------------------- solves
def sliding_mass_study(scheme):
    """Minimum-time sliding mass (the library's): rest at 0 to rest at 1 m, |F| <= 50 N."""
    study = ml.examples.sliding_mass_study(scheme=scheme, num_mesh_intervals=50)
    solution = study.solve()
    assert solution.success, solution.summary()
    return study, solution


def double_pendulum_study(scheme):
    """Double-pendulum swing to q0 = pi/2 in 1 s, minimum effort."""
    study = ml.Study()
    p = study.problem
    p.set_model(ml.models.double_pendulum())
    p.set_time_bounds(0, 1)
    p.set_state_info("/jointset/j0/q0/value", (-10, 10), 0, np.pi / 2)
    p.set_state_info("/jointset/j1/q1/value", (-10, 10), 0, 0)
    p.set_state_info_pattern(".*speed", (-50, 50), 0, 0)
    p.set_control_info_pattern(".*", (-100, 100))
    p.add_goal(ml.ControlGoal("effort", 1))
    study.solver.transcription_scheme = scheme
    study.solver.num_mesh_intervals = 50
    solution = study.solve()
    assert solution.success, solution.summary()
    return study, solution


@pytest.fixture(scope="module")
def sliding_hs():
    return sliding_mass_study("hermite-simpson")


@pytest.fixture(scope="module")
def sliding_trap():
    return sliding_mass_study("trapezoidal")


@pytest.fixture(scope="module")
def pendulum_hs():
    study, solution = double_pendulum_study("hermite-simpson")
    return study, solution, simulate_solution(study, solution)


@pytest.fixture(scope="module")
def pendulum_trap():
    study, solution = double_pendulum_study("trapezoidal")
    return study, solution, simulate_solution(study, solution)


# ----------------------------------------------------------- 1. analytic
def test_sliding_mass_constant_force_is_exact():
    model = ml.models.sliding_mass(mass=2.0)
    t = np.linspace(0.0, 1.0, 11)
    sim = simulate(model, constant_control(model, t, 10.0, SX))
    # F = 10 N on 2 kg from rest: a = 5, q = 0.5 a t^2, u = a t.
    np.testing.assert_allclose(sim[SQ], 0.5 * (10 / 2) * t**2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sim[SU], (10 / 2) * t, rtol=0, atol=1e-9)
    # Same grid, the model's state names in order, the applied controls copied.
    np.testing.assert_array_equal(sim.time, t)
    assert sim.state_names() == model.state_names()
    np.testing.assert_array_equal(sim[SX], np.full(11, 10.0))


def test_controls_are_interpolated_piecewise_linearly():
    # Triangle pulse on three knots: x = 0 -> 10 N -> 0 over 1 s, 2 kg.
    # Linear interpolation gives a(t) = 10 t on [0, 0.5], so q(0.5) = 5/3 t^3
    # = 5/24; by symmetry u(1) = area = 2.5 m/s and q(1) = int (1-s) a(s) ds
    # = 2.5 - 2.5 * 0.5 = 1.25 m. A zero-order hold would give q(1) = 0.
    model = ml.models.sliding_mass(mass=2.0)
    t = np.array([0.0, 0.5, 1.0])
    traj = ml.Trajectory(t, states={SQ: np.zeros(3), SU: np.zeros(3)}, controls={SX: [0.0, 10.0, 0.0]})
    sim = simulate(model, traj)
    np.testing.assert_allclose(sim[SQ], [0.0, 5 / 24, 1.25], rtol=0, atol=1e-9)
    np.testing.assert_allclose(sim[SU], [0.0, 1.25, 2.5], rtol=0, atol=1e-9)


# ----------------------------------------------------------- 2. analytic
@pytest.mark.parametrize("t0", [0.0, 0.7])
def test_linear_problem_matches_exponential_solution(t0):
    # udot = -u + x with x = 1 from rest at t0: u = 1 - e^{-s}, q = s - 1 + e^{-s}, s = t - t0.
    model = ml.models.linear_problem("kirk")
    t = t0 + np.linspace(0.0, 2.0, 21)
    sim = simulate(model, constant_control(model, t, 1.0, LX))
    s = t - t0
    np.testing.assert_allclose(sim[LU], 1 - np.exp(-s), rtol=0, atol=1e-8)
    np.testing.assert_allclose(sim[LQ], s - 1 + np.exp(-s), rtol=0, atol=1e-8)


def test_other_error_controlled_integrator():
    model = ml.models.linear_problem("kirk")
    t = np.linspace(0.0, 2.0, 21)
    sim = simulate(model, constant_control(model, t, 1.0, LX), integrator="bogacki_shampine3", accuracy=1e-10)
    np.testing.assert_allclose(sim[LU], 1 - np.exp(-t), rtol=0, atol=1e-8)


def test_fixed_step_euler_has_first_order_error():
    # Explicit Euler with step h has global error ~ C h: halving h halves it.
    model = ml.models.linear_problem("kirk")
    t = np.linspace(0.0, 2.0, 5)
    traj = constant_control(model, t, 1.0, LX)
    errors = [np.max(np.abs(simulate(model, traj, integrator="explicit_euler", max_step=h)[LU] - (1 - np.exp(-t))))
              for h in (1e-2, 5e-3)]
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)
    assert 1e-4 < errors[1] < 1e-2


# ------------------------------------------------------- 3. sliding mass
def test_sliding_mass_solution_resimulates(sliding_hs):
    study, solution = sliding_hs
    sim = simulate_solution(study, solution)
    rms = solution.rms_difference(sim, [SQ])
    # Measured: 4.9e-12 m. Hermite-Simpson is *exact* here: its midpoint
    # control is the mean of the interval's end controls, so the simulated
    # control is linear in each interval, the position is then a cubic in
    # time, and Simpson's rule integrates cubics exactly. The bang-bang switch
    # is no obstacle: the optimizer puts it inside one interval (knots 50, 25,
    # 0, -25, -50 N around t_f / 2), and the simulation applies that same ramp.
    # What is left is the NLP's constraint violation and the integrator's
    # tolerance (RK3 is also exact for cubics), far below 1e-10.
    assert rms < 1e-10, rms
    assert sim[SQ][-1] == pytest.approx(1.0, abs=1e-9)
    assert sim[SU][-1] == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_array_equal(sim.time, solution.time)  # 2N + 1 = 101 points incl. midpoints
    assert sim.num_times == 101


def test_sliding_mass_trapezoidal_error_is_analytic(sliding_trap):
    # Trapezoidal integrates u exactly (udot = x/m is linear per interval) but
    # q = int u dt with an O(h^3) error per interval, -h^3/12 * u'' where
    # u'' = (x_{k+1} - x_k) / (h m). Summed, it telescopes: the simulated final
    # position exceeds the predicted one by h^2 (x_0 - x_N) / (12 m) =
    # 100 h^2 / 24 ~ 2.67e-4 m here (measured RMS over the motion: 1.9e-4 m).
    study, solution = sliding_trap
    sim = simulate_solution(study, solution)
    h = solution.time[1] - solution.time[0]
    x = solution[SX]
    expected = h**2 * (x[0] - x[-1]) / (12 * 2.0)
    assert sim[SQ][-1] - solution[SQ][-1] == pytest.approx(expected, rel=1e-4)
    np.testing.assert_allclose(sim[SU], solution[SU], rtol=0, atol=1e-8)
    assert 1e-4 < solution.rms_difference(sim, [SQ]) < 3e-4


# ---------------------------------------------------- 4. double pendulum
def test_double_pendulum_hermite_simpson_resimulates(pendulum_hs):
    study, solution, sim = pendulum_hs
    rms = solution.rms_difference(sim)
    # Measured: 8.8e-6 over all four states (7.9e-7 rad for the angles alone).
    # Hermite-Simpson's error is O(h^4) (measured: 1.5e-4 at N = 25, 6.6e-7 at
    # N = 100); RK3 at accuracy 1e-9 contributes ~1e-10. 5e-5 is ~6x measured.
    assert rms < 5e-5, rms
    assert solution.rms_difference(sim, ["/jointset/j0/q0/value", "/jointset/j1/q1/value"]) < 5e-6
    assert sim["/jointset/j0/q0/value"][-1] == pytest.approx(np.pi / 2, abs=1e-4)


def test_double_pendulum_trapezoidal_is_less_accurate(pendulum_hs, pendulum_trap):
    _, sol_hs, sim_hs = pendulum_hs
    _, sol_tr, sim_tr = pendulum_trap
    rms_hs = sol_hs.rms_difference(sim_hs)
    rms_tr = sol_tr.rms_difference(sim_tr)
    # Measured: trapezoidal 5.9e-3 vs Hermite-Simpson 8.8e-6 at N = 50.
    # Trapezoidal is second order (error ~ h^2; measured 2.3e-2, 5.9e-3, 1.6e-3
    # at N = 25, 50, 100) and Hermite-Simpson fourth order, so at h = 0.02 s
    # the gap is about two to three orders of magnitude.
    assert 1e-3 < rms_tr < 2e-2, rms_tr
    assert rms_tr > 100 * rms_hs, (rms_tr, rms_hs)


# ---------------------------------------------------------- 5. parameters
def test_body_mass_parameter_halves_the_distance():
    model = ml.models.sliding_mass(mass=2.0)
    t = np.linspace(0.0, 1.0, 11)
    traj = constant_control(model, t, 10.0, SX)
    light = simulate(model, traj)
    heavy = simulate(model, traj, parameters={"/body/mass": 4.0})
    np.testing.assert_allclose(heavy[SQ], 0.5 * light[SQ], rtol=0, atol=1e-9)
    assert heavy[SQ][-1] == pytest.approx(1.25, abs=1e-9)
    # The model itself is unchanged (the simulation works on a clone's context).
    assert model.plant.GetBodyByName("body").default_mass() == 2.0
    assert simulate(model, traj)[SQ][-1] == pytest.approx(2.5, abs=1e-9)


@pytest.mark.parametrize("prop, inertia", [("mass", 1.0), ("mass_scale", 3.0)])
def test_mass_parameters_mean_the_same_in_engine_and_simulator(prop, inertia):
    """``<body>/mass`` is OpenSim's property (Moco's mass parameter): the rotational inertia about the centre of mass is
    kept; ``<body>/mass_scale`` makes the body denser: mass and inertia scale together. Both bodies of the double
    pendulum (1 kg, central inertia 1 kg·m²) made 3 kg through either parameter must equal the pendulum built with
    3 kg and the expected inertia (1 or 3 kg·m²): in the engine's accelerations (the transcription's equations) and in
    Drake's simulation (another implementation of the dynamics; simulate() sets the plant context's spatial
    inertia). The two meanings differ by far more than the tolerances (round-off; the integrator's accuracy)."""
    from moco_lab.engine.kernel import Kernel

    model = ml.models.double_pendulum()
    reference = ml.models.double_pendulum(mass=3.0, inertia=inertia)
    paths = [f"/bodyset/b0/{prop}", f"/bodyset/b1/{prop}"]
    values = 3.0  # kg through mass, a factor of 3 on 1 kg through mass_scale
    Q, U = np.array([[0.3, -0.7]]), np.array([[0.5, 1.2]])
    X = np.zeros((1, len(model.control_names())))
    A_param, _ = Kernel(model, paths).forward(Q, U, X, np.array([[values, values]]))
    A_ref, _ = Kernel(reference).forward(Q, U, X, None)
    A_other, _ = Kernel(ml.models.double_pendulum(mass=3.0, inertia=4.0 - inertia)).forward(Q, U, X, None)
    np.testing.assert_allclose(A_param, A_ref, rtol=1e-12, atol=1e-12)
    assert np.abs(A_param - A_other).max() > 0.1  # the other meaning is far away
    t = np.linspace(0.0, 0.5, 6)
    start = {name: np.zeros(t.size) for name in model.state_names()}
    start[model.state_names()[0]][:] = 0.3
    traj = ml.Trajectory(t, states=start, controls={name: np.zeros(t.size) for name in model.control_names()})
    sim = simulate(model, traj, parameters=dict.fromkeys(paths, values))
    sim_ref = simulate(reference, traj)
    for name in model.state_names():
        np.testing.assert_allclose(sim[name], sim_ref[name], rtol=0, atol=1e-7, err_msg=name)


def test_force_parameter_changes_damping():
    # Viscosity c = 2: udot = -2u + 1, so u = (1 - e^{-2t}) / 2.
    model = ml.models.linear_problem("kirk")
    t = np.linspace(0.0, 2.0, 21)
    sim = simulate(model, constant_control(model, t, 1.0, LX), parameters={"/forceset/spring/viscosity": 2.0})
    np.testing.assert_allclose(sim[LU], 0.5 * (1 - np.exp(-2 * t)), rtol=0, atol=1e-8)


def test_simulate_solution_maps_parameter_names_to_properties():
    problem = ml.Problem()
    problem.set_model(ml.models.sliding_mass(mass=2.0))
    problem.add_parameter("m", "/body/mass", (1, 10))
    t = np.linspace(0.0, 1.0, 11)
    traj = ml.Trajectory(t, states={SQ: np.zeros(11), SU: np.zeros(11)}, controls={SX: np.full(11, 10.0)},
                         parameters={"m": 4.0})
    study = ml.Study()
    study.problem = problem
    for owner in (problem, study):
        sim = simulate_solution(owner, traj)
        assert sim[SQ][-1] == pytest.approx(1.25, abs=1e-9)
        assert sim.parameters == {"m": 4.0}
    # An explicit override wins over the solution's value.
    assert simulate_solution(problem, traj, parameters={"/body/mass": 5.0})[SQ][-1] == pytest.approx(1.0, abs=1e-9)
    # simulate() alone does not know that "m" means /body/mass: it warns.
    with pytest.warns(UserWarning, match="not applied"):
        simulate(problem.model, traj)
    with pytest.raises(KeyError, match="'m'"):
        simulate_solution(problem, ml.Trajectory(t, states=traj.states, controls=traj.controls))


# -------------------------------------------------------------- 6. errors
def test_missing_control_or_state_is_named():
    model = ml.models.sliding_mass()
    t = np.linspace(0.0, 1.0, 3)
    with pytest.raises(KeyError, match="/actuator"):
        simulate(model, ml.Trajectory(t, states={SQ: np.zeros(3), SU: np.zeros(3)}))
    with pytest.raises(KeyError, match="/slider/position/speed"):
        simulate(model, ml.Trajectory(t, states={SQ: np.zeros(3)}, controls={SX: np.ones(3)}))
    with pytest.raises(ValueError, match="/tau0"):
        simulate(model, ml.Trajectory(t, states={SQ: np.zeros(3), SU: np.zeros(3)},
                                      controls={SX: np.ones(3), "/tau0": np.ones(3)}))


def test_bad_arguments_are_rejected():
    model = ml.models.sliding_mass()
    t = np.linspace(0.0, 1.0, 3)
    traj = constant_control(model, t, 1.0, SX)
    with pytest.raises(KeyError, match="/body/mass"):  # suggestion for a misspelt property
        simulate(model, traj, parameters={"/body/mas": 3.0})
    with pytest.raises(ValueError, match="runge_kutta3"):
        simulate(model, traj, integrator="runge_kuta3")
    with pytest.raises(ValueError, match="max_step"):
        simulate(model, traj, integrator="explicit_euler")
    with pytest.raises(ValueError, match="accuracy"):
        simulate(model, traj, accuracy=0)
    with pytest.raises(ValueError, match="two time points"):
        simulate(model, constant_control(model, [0.0], 1.0, SX))
    bad = ml.Trajectory(t, states={SQ: [np.nan, 0, 0], SU: np.zeros(3)}, controls={SX: np.ones(3)})
    with pytest.raises(ValueError, match=SQ):
        simulate(model, bad)
    assert "cenic" not in integration_schemes() and "runge_kutta5" in integration_schemes()


def test_failed_solution_is_sealed():
    model = ml.models.sliding_mass()
    traj = constant_control(model, np.linspace(0.0, 1.0, 3), 1.0, SX)
    failed = ml.Solution(traj, success=False, status="Infeasible_Problem_Detected", message="infeasible",
                         objective=0.0, goal_values={}, nit=3, solve_time=0.1)
    with pytest.raises(RuntimeError, match="sealed"):
        simulate(model, failed)
    sim = simulate(model, failed.unseal())
    assert sim[SQ][-1] == pytest.approx(0.25, abs=1e-9)


def test_force_element_system_outputs():
    # The LeafSystem alone: spring-damper force and interpolated controls at a given time and state.
    model = ml.models.linear_problem("kirk")
    system = ForceElementSystem(model, [0.0, 1.0], [[0.0], [4.0]], values={"/forceset/spring/viscosity": 3.0})
    context = system.CreateDefaultContext()
    context.SetTime(0.25)
    system.get_input_port(0).FixValue(context, [0.5, 2.0])  # q, v
    np.testing.assert_allclose(system.GetOutputPort("controls").Eval(context), [1.0])
    # 1 N control minus viscosity 3 * speed 2.
    np.testing.assert_allclose(system.GetOutputPort("generalized_force").Eval(context), [1.0 - 6.0])
