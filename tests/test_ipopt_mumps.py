"""IPOPT with MUMPS (``SolverSettings.optim_linear_solver="mumps"``, moco_lab.solve.ipopt_mumps): the same programs
solved through IPOPT's C interface reach the same answers as closed forms and as Drake's own IPOPT.

Expected values come from outside the code under test: Hock and Schittkowski's problem 71 (IPOPT's own example,
optimum 17.0140173 at (1, 4.743, 3.82115, 1.37941)), the linear problem's and the sliding mass' closed forms
(tests/analytic.py), and Drake's IPOPT on the same program.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from analytic import linear_objective, sliding_mass_min_time
from pydrake.solvers import IpoptSolver, MathematicalProgram

import moco_lab as ml
from moco_lab.solve import ipopt_mumps
from moco_lab.solve.guess import guess_from_bounds, set_guess

pytestmark = pytest.mark.skipif(not ipopt_mumps.available(), reason="casadi's IPOPT is not installed")


def hs071(python_constraint: bool) -> tuple[MathematicalProgram, np.ndarray]:
    """HS071: min x1 x4 (x1 + x2 + x3) + x3  s.t.  x1 x2 x3 x4 >= 25,  x·x = 40,  1 <= x <= 5; guess (1, 5, 5, 1).

    The objective is a Python cost; the constraints are a Python function (Drake's AutoDiff path) or Drake's
    symbolic ones. An extra variable y = x1 (a linear equality) carries a quadratic cost (x1 - y)² and a linear cost
    2 (y - x1), both zero on the constraint, so the optimum is HS071's while every kind of binding is evaluated.
    """
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(4, "x")
    prog.AddBoundingBoxConstraint(1.0, 5.0, x)
    prog.AddCost(lambda z: z[0] * z[3] * (z[0] + z[1] + z[2]) + z[2], x)
    if python_constraint:
        prog.AddConstraint(lambda z: np.array([z[0] * z[1] * z[2] * z[3], z @ z]), [25.0, 40.0], [np.inf, 40.0], x)
    else:
        prog.AddConstraint(x[0] * x[1] * x[2] * x[3] >= 25.0)
        prog.AddConstraint(sum(x[i] * x[i] for i in range(4)) == 40.0)
    y = prog.NewContinuousVariables(1, "copy")
    prog.AddLinearEqualityConstraint(np.array([[1.0, -1.0]]), [0.0], np.array([x[0], y[0]]))
    prog.AddQuadraticCost((x[0] - y[0]) ** 2)
    prog.AddLinearCost(2.0 * (y[0] - x[0]))
    x0 = np.array([1.0, 5.0, 5.0, 1.0, 1.0])
    return prog, x0


@pytest.mark.parametrize("python_constraint", [True, False])
def test_hs071_reaches_its_published_optimum(python_constraint):
    prog, x0 = hs071(python_constraint)
    result = ipopt_mumps.solve_with_mumps(prog, x0, {"print_level": 0, "sb": "yes", "tol": 1e-10})
    assert result.success and result.status == "Solve_Succeeded"
    assert result.cost == pytest.approx(17.0140173, rel=1e-7)
    np.testing.assert_allclose(result.x[:4], [1.0, 4.74299963, 3.82114998, 1.37940829], rtol=1e-6)
    assert result.x[4] == pytest.approx(result.x[0], abs=1e-9)
    drake = IpoptSolver().Solve(prog, x0, None)
    assert drake.get_optimal_cost() == pytest.approx(result.cost, rel=1e-8)
    # the driver measures the final violation itself, as Drake's evaluation of every binding does
    assert result.constraint_violation == pytest.approx(ml.solve.max_constraint_violation(prog, result.x), abs=1e-12)
    P = ipopt_mumps._Program(prog, None)
    assert P.violation(x0) == pytest.approx(12.0, rel=1e-15)   # x·x = 52 at the guess, 40 required
    assert P.violation(x0) == ml.solve.max_constraint_violation(prog, x0)
    outside = x0 + np.array([0, 1.5, 0, 0, 0])                   # x2 = 6.5 > 5 and x·x = 69.25
    assert P.violation(outside) == pytest.approx(29.25) == ml.solve.max_constraint_violation(prog, outside)
    assert np.isnan(P.violation(np.full(5, np.nan)))


def test_linear_problem_matches_its_closed_form_and_drakes_ipopt():
    runs = {}
    for linear_solver in ("mumps", "spral"):
        study = ml.examples.linear_study("kirk", "hermite-simpson", "explicit", 50)
        study.solver.optim_linear_solver = linear_solver
        runs[linear_solver] = study.solve()
    for sol in runs.values():
        assert sol.success, sol.message
        assert sol.objective == pytest.approx(linear_objective("kirk"), rel=1e-6)
    for name, values in runs["mumps"].states.items():
        np.testing.assert_allclose(values, runs["spral"].states[name], atol=1e-6)


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_sliding_mass_minimum_time(mode):
    study = ml.examples.sliding_mass_study(2.0, "hermite-simpson", mode, 50)
    study.solver.optim_linear_solver = "mumps"
    reports = []
    sol = study.solve(progress=reports.append)
    assert sol.success, sol.message
    # Hermite–Simpson at N = 50: t_f - 0.4 ≈ 0.267 / N² from above (VERIFICATION.md, remark 5)
    assert sol.final_time - sliding_mass_min_time(2.0) == pytest.approx(0.267 / 50 ** 2, rel=0.05)
    # one progress report per IPOPT iteration, 0 .. nit, in order
    assert [r.iteration for r in reports] == list(range(sol.nit + 1))
    assert reports[-1].objective == pytest.approx(sol.objective, rel=1e-6)


def test_exact_jacobians_equal_drakes_autodiff_path():
    """The fast path (moco_lab's exact callables, Transcription.exact_callbacks) and the generic one (Drake's
    AutoDiffXd evaluation of the same bindings) give the same constraint values and Jacobian entries."""
    study = ml.examples.squat_to_stand_study(num_mesh_intervals=4)
    tr = study.transcribe()
    set_guess(tr, guess_from_bounds(tr))
    x = np.nan_to_num(tr.prog.GetInitialGuess(tr.prog.decision_variables()))
    x = x + np.random.default_rng(3).uniform(-0.01, 0.01, x.size)
    fast = ipopt_mumps._Program(tr.prog, tr.exact_callbacks)
    slow = ipopt_mumps._Program(tr.prog, None)
    assert sum(t.fun is not None for t in fast.constraints) >= 1
    assert fast.nnz == slow.nnz and np.array_equal(fast.jac_rows, slow.jac_rows)
    values = {}
    for name, P in (("fast", fast), ("slow", slow)):
        P.new_point(x)
        g, J = np.zeros(P.m), np.zeros(P.nnz)
        P.constraints_at(x, g)
        P.jacobian_at(x, J)
        values[name] = (g, J, *P.objective(x, True))
    for a, b in zip(values["fast"], values["slow"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_objective_gradient_kept_from_the_value_at_the_same_point():
    """IPOPT asks for the objective's gradient at nearly every point where it evaluated the objective: with the
    transcription's exact callables the gradient is computed with the value and kept for that point. The value is
    the one computed alone, the gradient the one computed alone (both bit for bit); at another point the gradient
    is computed afresh; a program with a cost Drake evaluates (no exact callable) computes only the value."""
    study = ml.examples.squat_to_stand_study(num_mesh_intervals=4)
    tr = study.transcribe()
    set_guess(tr, guess_from_bounds(tr))
    x = np.nan_to_num(tr.prog.GetInitialGuess(tr.prog.decision_variables()))
    rng = np.random.default_rng(5)
    x1, x2 = x + rng.uniform(-0.01, 0.01, x.size), x + rng.uniform(-0.01, 0.01, x.size)
    fast = ipopt_mumps._Program(tr.prog, tr.exact_callbacks)
    assert fast._gradient_with_value and any(k == "generic" for k, _, _ in fast.costs)
    calls = []
    plain = fast.objective
    fast.objective = lambda z, grad: calls.append(grad) or plain(z, grad)
    fast.new_point(x1)
    f1 = fast.objective_value(x1)
    g1 = fast.objective_gradient(x1)
    assert calls == [True]   # one evaluation for both
    f_alone, g_alone = plain(x1, False)[0], plain(x1, True)[1]
    assert f1 == f_alone and np.array_equal(g1, g_alone)
    fast.new_point(x2)
    g2 = fast.objective_gradient(x2)   # no value at x2 first: computed afresh
    assert calls == [True, True] and np.array_equal(g2, plain(x2, True)[1]) and not np.array_equal(g1, g2)
    slow = ipopt_mumps._Program(tr.prog, None)   # Drake's AutoDiffXd evaluations: the value alone
    assert not slow._gradient_with_value
    slow.new_point(x1)
    assert slow.objective_value(x1) == pytest.approx(f1, rel=1e-12) and slow._gradient_at is None


def test_errors_name_the_culprit(monkeypatch):
    with pytest.raises(ValueError, match="optim_linear_solver"):
        ml.SolverSettings(optim_linear_solver="ma27").validate()
    prog, x0 = hs071(True)
    with pytest.raises(ValueError, match="no_such_option"):
        ipopt_mumps.solve_with_mumps(prog, x0, {"no_such_option": 1.0, "print_level": 0, "sb": "yes"})

    def broken(z):
        raise ArithmeticError("the model broke at this point")

    prog.AddConstraint(broken, [0.0], [0.0], prog.decision_variables()[:1])
    with pytest.raises(ArithmeticError, match="the model broke"):
        ipopt_mumps.solve_with_mumps(prog, x0, {"print_level": 0, "sb": "yes"})
    monkeypatch.setenv("MOCO_LAB_IPOPT_LIBRARY", "/nonexistent/libipopt.so")
    with pytest.raises(RuntimeError, match="MOCO_LAB_IPOPT_LIBRARY"):
        ipopt_mumps.solve_with_mumps(prog, x0, {})


def test_mumps_solves_after_opensim_has_loaded_its_own_ipopt():
    """OpenSim's package ships another ``libipopt.so.3`` and ``libcoinmumps.so.3``; once Moco has solved, a plain
    ``dlopen`` of the casadi wheel's IPOPT returned OpenSim's (same SONAME) and every MUMPS solve ended in
    ``Restoration_Failed`` at its first iteration. In a fresh process (the order matters): Moco first, then
    moco_lab's MUMPS path, then Moco again."""
    pytest.importorskip("opensim")
    import subprocess
    import sys
    from pathlib import Path

    script = """
import opensim as osim
import moco_lab as ml

def moco():
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(osim.ModelFactory.createSlidingPointMass())
    problem.setTimeBounds(0, (0, 5))
    problem.setStateInfo("/slider/position/value", [-5, 5], 0, 1)
    problem.setStateInfo("/slider/position/speed", [-50, 50], 0, 0)
    problem.setControlInfo("/forceset/actuator", [-50, 50])
    problem.addGoal(osim.MocoFinalTimeGoal())
    study.initCasADiSolver().set_num_mesh_intervals(10)
    return study.solve().getStatus()

print("moco", moco())
study = ml.examples.sliding_mass_study(num_mesh_intervals=10)
study.solver.optim_linear_solver = "mumps"
solution = study.solve()
print("moco_lab", solution.status, solution.nit)
print("moco", moco())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[1])
    lines = [line for line in out.stdout.splitlines() if line.startswith(("moco ", "moco_lab "))]
    assert out.returncode == 0, out.stderr[-2000:]
    assert lines[0].startswith("moco Solve_Succeeded"), lines
    assert lines[1].startswith("moco_lab Solve_Succeeded"), lines
    assert lines[2].startswith("moco Solve_Succeeded"), lines


def test_kkt_structure_of_the_linear_problem_is_the_hand_derived_one():
    """Trapezoidal, explicit, effort ½x²: the Lagrangian's second derivatives are ∂²/∂xᵢ² (the cost), and the products
    of h = (t_f − t₀)/N with uᵢ and xᵢ (cost and defects) — 5 (N + 1) entries in the lower triangle, nothing else."""
    N = 4
    study = ml.examples.linear_study("kirk", "trapezoidal", "explicit", num_mesh_intervals=N)
    study.solver.set_hessian_approximation("exact")
    tr = study.transcribe()
    s = ipopt_mumps.kkt_structure(tr.prog, tr.exact_callbacks)
    names = [v.get_name() for v in tr.prog.decision_variables()]
    found = {(names[r], names[c]) for r, c in zip(s.hessian_rows, s.hessian_cols)}
    expected = {(f"x({i})", f"x({i})") for i in range(N + 1)}
    expected |= {(v, t) for i in range(N + 1) for v in (f"x({i})", f"y({i},1)") for t in ("t0(0)", "tf(0)")}
    assert found == expected and s.hessian_rows.size == 5 * (N + 1)
    assert np.all(s.hessian_rows >= s.hessian_cols)
    assert (s.num_variables, s.num_constraints) == (2 + 3 * (N + 1), 2 * N)
    assert ipopt_mumps.kkt_structure(tr.prog, tr.exact_callbacks, hessian=False).hessian_rows.size == 0


def test_kkt_structure_holds_every_second_derivative():
    """Double pendulum (Hermite-Simpson, nonlinear dynamics): at a random point and random multipliers, every entry
    of the Lagrangian's Hessian that finite differences of its exact gradient find (above 1e-6, against entries of
    order 1-100; central differences of step 1e-6 err by ~1e-8) lies in the declared structure."""
    study = ml.examples.double_pendulum_study(num_mesh_intervals=3)
    study.solver.set_hessian_approximation("exact")
    tr = study.transcribe()
    s = ipopt_mumps.kkt_structure(tr.prog, tr.exact_callbacks)
    P = ipopt_mumps._Program(tr.prog, tr.exact_callbacks)
    rng = np.random.default_rng(5)
    x0 = rng.uniform(-1, 1, P.n)
    x0[np.asarray(tr.prog.FindDecisionVariableIndices([tr.t0, tr.tf]))] = (0.0, 1.0)
    lam = rng.normal(size=P.m)

    def gradient(x):
        P.new_point(x)
        J = np.zeros(P.nnz)
        P.jacobian_at(x, J)
        return P.objective(x, True)[1] + sp.coo_matrix((J, (P.jac_rows, P.jac_cols)), shape=(P.m, P.n)).T @ lam

    H = np.array([(gradient(x0 + 1e-6 * e) - gradient(x0 - 1e-6 * e)) / 2e-6 for e in np.eye(P.n)])
    declared = np.zeros((P.n, P.n), bool)
    declared[s.hessian_rows, s.hessian_cols] = declared[s.hessian_cols, s.hessian_rows] = True
    assert np.abs(H).max() > 1.0 and np.abs(H[~declared]).max() < 1e-6
    assert np.abs(H[declared]).max() > 0 and s.hessian_rows.size < P.n * (P.n + 1) / 2 / 5   # sparse


def test_limited_memory_start_then_exact_hessian():
    """``optim_limited_memory_start``: a few limited-memory iterations (Drake's IPOPT), then IPOPT + MUMPS with the
    exact Hessian from where they stopped. The minimum time is unique, so the staged solve must end where the exact
    one does from the start; the iterations of both stages are counted and reported once each, in order."""
    runs, reports = {}, []
    for start in (0, 5):
        study = ml.examples.sliding_mass_study(2.0, "hermite-simpson", "explicit", 50)
        study.solver.set_hessian_approximation("exact")
        study.solver.optim_limited_memory_start = start
        study.solver.optim_convergence_tolerance = 1e-10
        runs[start] = study.solve(progress=reports.append if start else None)
    staged, exact = runs[5], runs[0]
    assert staged.success and exact.success, (staged.message, exact.message)
    # the optimum to the tolerance (1e-10 on a time of 0.4 s, which IPOPT's scaled error bounds)
    assert staged.final_time == pytest.approx(exact.final_time, rel=1e-8)
    assert staged.nit > 5 and [r.iteration for r in reports] == list(range(staged.nit + 1))
    # the iteration limit counts both stages
    study = ml.examples.sliding_mass_study(2.0, "hermite-simpson", "explicit", 50)
    study.solver.set_hessian_approximation("exact")
    study.solver.optim_limited_memory_start, study.solver.optim_max_iterations = 5, 7
    capped = study.solve()
    assert not capped.success and capped.nit == 7
    study.solver.optim_limited_memory_start = -1
    with pytest.raises(ValueError, match="optim_limited_memory_start"):
        study.solve()


def test_exact_hessian_options_are_moco_labs_and_yield_to_the_users():
    """With the exact Hessian IPOPT gets moco_lab's choices for it (docs/verification.md: the adaptive barrier update,
    no MUMPS column permutation, the filter's violation bound at 100 times the start's); the limited-memory Hessian
    gets IPOPT's own defaults (Moco's settings); ``optim_solver_options`` override either."""
    from moco_lab.engine.settings import SolverSettings
    from moco_lab.solve import optimizer

    s = SolverSettings()
    s.set_hessian_approximation("exact")
    options = optimizer.mumps_algorithm_options(s)
    assert options["hessian_approximation"] == "exact"
    assert (options["mu_strategy"], options["mumps_permuting_scaling"], options["theta_max_fact"]) == \
        ("adaptive", 0, 100.0)
    s.optim_solver_options = {"theta_max_fact": 1e4, "mu_strategy": "monotone"}
    options = optimizer.mumps_algorithm_options(s)
    assert (options["theta_max_fact"], options["mu_strategy"]) == (1e4, "monotone")
    s = SolverSettings()
    s.set_hessian_approximation("limited-memory")
    options = optimizer.mumps_algorithm_options(s)
    assert options["hessian_approximation"] == "limited-memory"
    assert not {"mu_strategy", "mumps_permuting_scaling", "theta_max_fact"} & set(options)


# ------------------------------------------------------------------------------------- warm starts (duals)
def test_warm_start_from_multipliers_at_the_driver():
    """HS071 solved once; from its optimum again, cold (IPOPT estimates the multipliers and pushes x 1e-2 into its
    bounds: x1 = 1 is at its bound) and warm (the optimum's multipliers, WARM_START_OPTIONS). A Newton step from a
    KKT point is zero, so the warm run only has to bring the barrier parameter down; the cold one re-finds the
    active bound. Both reach HS071's optimum; multipliers that belong to another program are refused."""
    prog, x0 = hs071(False)
    opts = {"print_level": 0, "sb": "yes", "tol": 1e-10}
    first = ipopt_mumps.solve_with_mumps(prog, x0, opts)
    assert first.warm_started is None and first.duals is not None
    d = first.duals
    assert d.constraints.shape == (3,) and d.lower.shape == d.upper.shape == (5,)
    assert d.lower[0] > 0.1 and np.all(d.lower[1:4] < 1e-8) and np.all(d.upper < 1e-8)  # only x1 >= 1 is active
    cold = ipopt_mumps.solve_with_mumps(prog, first.x, opts)
    warm = ipopt_mumps.solve_with_mumps(prog, first.x, opts, duals=d)
    assert cold.warm_started is None and warm.warm_started is True
    assert warm.cost == pytest.approx(17.0140173, rel=1e-7) and cold.cost == pytest.approx(17.0140173, rel=1e-7)
    assert warm.nit < cold.nit, (warm.nit, cold.nit)
    other, x_other = hs071(True)     # the same problem with its constraints as one Python function: rows in
    wrong = ipopt_mumps.solve_with_mumps(other, x_other, opts, duals=d)   # another Jacobian structure
    assert wrong.warm_started is False and wrong.success


def test_warm_start_from_a_solution_with_its_multipliers():
    """A study's Solution carries IPOPT's multipliers (``duals``); with ``optim_warm_start`` the next solve of a
    nearby problem (the sliding mass 25 % heavier) starts from them and the solution's motion, and reaches the
    closed form in fewer iterations than from the motion alone. Another mesh, a guess without multipliers and
    Drake's IPOPT start as without the setting, and the message says why."""
    def study(mass, n=50, linear_solver="mumps"):
        s = ml.examples.sliding_mass_study(mass, "hermite-simpson", "explicit", n)
        s.solver.set_hessian_approximation("exact" if linear_solver == "mumps" else "limited-memory")
        s.solver.optim_linear_solver = linear_solver
        return s

    first = study(2.0).solve()
    assert first.success and first.duals is not None and "warm start" not in first.message
    runs = {}
    for warm in (False, True):
        s = study(2.5)
        s.solver.guess, s.solver.optim_warm_start = first, warm
        runs[warm] = s.solve()
        assert runs[warm].success, runs[warm].message
        # Hermite–Simpson at N = 50 (as test_sliding_mass_minimum_time): within 0.05 % of the closed form
        assert runs[warm].final_time == pytest.approx(sliding_mass_min_time(2.5), rel=5e-4)
    assert "warm start: the guess's multipliers" in runs[True].message
    assert runs[True].nit < runs[False].nit, (runs[True].nit, runs[False].nit)
    # guess_duals: the multipliers with a guess that is another trajectory (the dashboards stretch theirs)
    s = study(2.5)
    s.solver.guess, s.solver.guess_duals, s.solver.optim_warm_start = first.as_trajectory(), first.duals, True
    assert "warm start: the guess's multipliers" in s.solve().message
    for s, why in ((study(2.5, n=40), "another structure"),
                   (study(2.5, linear_solver="spral"), "only IPOPT + MUMPS")):
        s.solver.guess, s.solver.optim_warm_start = first, True
        sol = s.solve()
        assert sol.success and "optim_warm_start ignored: " in sol.message and why in sol.message, sol.message
        assert sol.final_time == pytest.approx(sliding_mass_min_time(2.5), rel=1e-3)
    s = study(2.5)
    s.solver.guess, s.solver.optim_warm_start = first.as_trajectory(), True
    assert "the guess has no IPOPT + MUMPS multipliers" in s.solve().message


def test_duals_and_their_settings_are_checked(tmp_path):
    from moco_lab.engine.settings import SolverSettings
    from moco_lab.results import Duals, read_duals

    d = Duals([1.0, 2.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0], "abc")
    assert d.lower.flags.writeable is False
    with pytest.raises(ValueError, match="Duals.constraints must be a 1-D array of finite numbers"):
        Duals([np.nan], [0.0], [0.0], "abc")
    with pytest.raises(ValueError, match="lower and upper have different lengths"):
        Duals([1.0], [0.0], [0.0, 1.0], "abc")
    s = SolverSettings(guess_duals=d, optim_warm_start=True)
    s.validate()
    assert "guess_duals" not in s.to_dict() and s.to_dict()["optim_warm_start"] is True   # in memory only
    with pytest.raises(TypeError, match="guess_duals must be a Duals"):
        SolverSettings(guess_duals={"constraints": [1.0]}).validate()
    with pytest.raises(TypeError, match="optim_warm_start must be True or False"):
        SolverSettings(optim_warm_start="yes").validate()
    d.write(tmp_path / "d.npz", {"settings": {"speed": 1.2}})   # a file beside a shipped walk
    back, metadata = read_duals(tmp_path / "d.npz")
    assert metadata == {"settings": {"speed": 1.2}} and back.structure == "abc"
    for name in ("constraints", "lower", "upper"):
        np.testing.assert_array_equal(getattr(back, name), getattr(d, name))
    (tmp_path / "bad.npz").write_text("not an archive")
    with pytest.raises(ValueError, match="bad.npz is not a file of multipliers written by Duals.write"):
        read_duals(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", constraints=[1.0])
    with pytest.raises(ValueError, match="other.npz is not a file of multipliers"):
        read_duals(tmp_path / "other.npz")
    with pytest.raises(FileNotFoundError):
        read_duals(tmp_path / "missing.npz")
    with pytest.raises(TypeError, match="Solution: duals must be a Duals"):
        ml.Solution(ml.Trajectory([0.0, 1.0], {"x": [0.0, 1.0]}, {}), success=True, status="ok", message="",
                    objective=0.0, goal_values={}, nit=0, solve_time=0.0, duals=[1.0])
