"""Studies: saving and loading, guesses, solution files, optimizer choice."""
from __future__ import annotations

import json

import numpy as np
import pytest

import moco_lab as ml


def test_study_file_round_trip_gives_identical_solve(tmp_path):
    study = ml.examples.sliding_mass_study(2.0, "trapezoidal", "implicit", 20)
    p = study.problem
    p.set_state_info_pattern(r".*/speed", (-40, 40))
    p.add_goal(ml.ControlGoal("effort", 1e-3, exponent=4)).set_weight_for_control("/actuator", 0.5)
    study.solver.optim_convergence_tolerance = 1e-9
    path = tmp_path / "sliding.json"
    study.save(path)
    text = path.read_text()
    data = json.loads(text)  # human-readable JSON
    assert data["model"] == {"factory": "sliding_mass", "kwargs": {"mass": 2.0}}
    assert data["solver"]["transcription_scheme"] == "trapezoidal"
    loaded = ml.Study.load(path)
    assert loaded.to_dict() == study.to_dict()
    a, b = study.solve(), loaded.solve()
    assert a.success and b.success
    assert a.objective == b.objective
    assert a.nit == b.nit
    assert a.as_trajectory().is_numerically_equal(b.as_trajectory(), rtol=0, atol=0)


def test_tracking_study_round_trip(tmp_path):
    ref = ml.examples.linear_study(num_mesh_intervals=20).solve()
    study = ml.examples.linear_study(num_mesh_intervals=20)
    study.problem.add_goal(ml.StateTrackingGoal("track", 10.0, reference=ref.as_trajectory(),
                                                weights={"/jointset/j/coord/speed": 0.5}))
    study.save(tmp_path / "s.json")
    loaded = ml.Study.load(tmp_path / "s.json")
    assert loaded.solve().objective == study.solve().objective


def test_unsaveable_studies_say_why(tmp_path):
    study = ml.examples.sliding_mass_study()
    study.problem.add_goal(ml.UserGoal("mine", integrand=lambda t, s, c, p: c[0] ** 2))
    with pytest.raises(TypeError, match="cannot be saved"):
        study.save(tmp_path / "x.json")
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    plant.Finalize()
    s2 = ml.Study()
    s2.problem.set_model(plant)
    with pytest.raises(TypeError, match="not built by a moco_lab.models factory"):
        s2.save(tmp_path / "y.json")
    with pytest.raises(ValueError, match="Not a moco_lab study file"):
        (tmp_path / "z.json").write_text("{}")
        ml.Study.load(tmp_path / "z.json")


def test_solution_as_guess_needs_fewer_iterations(tmp_path):
    study = ml.examples.double_pendulum_study("hermite-simpson", "explicit", 20)
    first = study.solve()
    assert first.success
    study.solver.guess = first
    again = study.solve()
    # IPOPT restarts its barrier parameter (no dual warm start), so a perfect
    # primal guess still takes some iterations, but fewer than from bounds
    assert again.success and again.nit < first.nit
    assert again.objective == pytest.approx(first.objective, rel=1e-8)
    # a guess read back from a .sto file works the same
    first.write_sto(tmp_path / "sol.sto")
    study.solver.guess = ml.Trajectory.read_sto(tmp_path / "sol.sto")
    assert study.solve().nit == again.nit


def test_guess_interpolated_onto_a_finer_mesh_and_other_scheme():
    coarse = ml.examples.double_pendulum_study("trapezoidal", "explicit", 10).solve()
    fine = ml.examples.double_pendulum_study("hermite-simpson", "implicit", 40)
    cold = fine.solve()
    fine.solver.guess = coarse
    warm = fine.solve()
    assert warm.success and cold.success
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
    assert warm.nit < cold.nit


def test_guess_from_bounds_is_mocos():
    from moco_lab.solve.guess import guess_from_bounds

    tr = ml.examples.sliding_mass_study(num_mesh_intervals=4).transcribe()
    g = guess_from_bounds(tr)
    assert g["t0"] == 0 and g["tf"] == 2.5
    np.testing.assert_array_equal(g["Y"][:, 0], [0, 0, 0, 0, 0, 0, 0, 0, 1])  # midpoint of (-5, 5); 0 -> 1 at ends
    np.testing.assert_array_equal(g["X"][:, 0], np.zeros(9))


def test_snopt_solves_the_same_problem():
    ipopt = ml.examples.linear_study(num_mesh_intervals=20).solve()
    study = ml.examples.linear_study(num_mesh_intervals=20)
    study.solver.optim_solver = "snopt"
    snopt = study.solve()
    assert snopt.success, snopt.message
    assert snopt.solver == "snopt" and snopt.nit > 0
    assert snopt.objective == pytest.approx(ipopt.objective, rel=1e-6)


def test_progress_is_reported_each_iteration():
    seen = []
    sol = ml.examples.sliding_mass_study(num_mesh_intervals=10).solve(progress=seen.append)
    assert [p.iteration for p in seen] == list(range(sol.nit + 1))  # IPOPT iterations 0..nit
    assert seen[-1].constraint_violation < 1e-6
    assert seen[-1].objective == pytest.approx(sol.objective, rel=1e-6)
    assert seen[0].constraint_violation > seen[-1].constraint_violation
    assert all(b.elapsed >= a.elapsed for a, b in zip(seen, seen[1:]))


def test_progress_with_snopt_and_on_failure():
    seen = []
    study = ml.examples.sliding_mass_study(num_mesh_intervals=10)
    study.problem.set_time_bounds(0, (0, 0.3))  # infeasible
    sol = study.solve(progress=seen.append)
    assert not sol.success and len(seen) == sol.nit + 1
    study = ml.examples.linear_study(num_mesh_intervals=10)
    study.solver.optim_solver = "snopt"
    seen.clear()
    sol = study.solve(progress=seen.append)
    assert sol.success and len(seen) >= sol.nit


def test_solution_metadata_and_goal_breakdown():
    study = ml.examples.sliding_mass_study(num_mesh_intervals=20)
    study.problem.add_goal(ml.ControlGoal("effort", 1e-4))
    sol = study.solve()
    assert sol.success and sol.status == "Solve_Succeeded"
    assert sol.fun == sol.objective
    assert sum(sol.goal_values.values()) == pytest.approx(sol.objective, rel=1e-9)
    assert set(sol.goal_values) == {"time", "effort"}
    assert sol.solve_time > 0 and sol.nit > 0
    assert "Solve_Succeeded" in sol.message
    desc = study.transcribe().describe()
    assert desc["num_grid_points"] == 41
    assert desc["num_variables"] == 2 + 41 * 3


def test_nlp_size_matches_the_appendix():
    """Variables: trapezoidal (N+1)(ny+nx), Hermite-Simpson (2N+1)(ny+nx), implicit adds nq per point."""
    N = 7
    for scheme, points in (("trapezoidal", N + 1), ("hermite-simpson", 2 * N + 1)):
        for mode, extra in (("explicit", 0), ("implicit", 2)):
            d = ml.examples.double_pendulum_study(scheme, mode, N).transcribe().describe()
            assert d["num_variables"] == 2 + points * (4 + 2 + extra)
            defects = N * 4 * (1 if scheme == "trapezoidal" else 2)
            midpoint_controls = N * 2 if scheme == "hermite-simpson" else 0
            assert d["num_constraints"] == defects + points * extra + midpoint_controls
