"""Squat-to-stand against OpenSim Moco 4.6: the stored reference of benchmarks/squat_to_stand.py.

Moco takes one to two minutes per problem here, so its solutions are produced by that script (same model file —
the text of moco_lab.modeling.squat.squat_to_stand_osim — and the settings of the Moco paper's script) and stored
with their provenance in benchmarks/reference/; this test solves moco_lab's side (full mesh, 50 intervals; about
20 s) and compares. The paper's published stiffness is 88 N·m/rad (preprint) / 90 N·m/rad (PLOS Comput Biol).

Tolerances. Both tools stop when IPOPT's scaled measures fall below the tolerance, not at the exact optimum;
the yardstick for how far apart two stopping points may be is one tool against itself: moco_lab at 1e-3 and at
1e-4 differ by 1.4e-4 in the objective, 0.21° in the joint angles and 0.022 in the activations (measured).

* assisted (the paper's tolerance 1e-3): objective to 1e-3 relative (measured 4.0e-4), optimal stiffness to
  0.5 N·m/rad (measured 0.15), final time to 5e-3 relative (measured 1.7e-3);
* unassisted: at 1e-3 Moco stops at an objective 0.8 % above moco_lab's (1.5303 vs 1.5187) — at 1e-4 it reaches
  1.51870 and moco_lab 1.51847, so both tools are compared at 1e-4: objective to 1e-3 relative (measured 1.5e-4);
* trajectories on the normalized time (both on 50 Hermite–Simpson intervals): joint angles to 0.3° (measured
  0.08° assisted, 0.11° unassisted) and activations to 0.035 (measured 0.025 and 0.010).
"""
import json
from pathlib import Path

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.results.sto import read_table

REFERENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "reference"
STORED = json.loads((REFERENCE / "squat_to_stand_moco.json").read_text())


@pytest.fixture(scope="module")
def solutions():
    return {"assisted": ml.examples.squat_to_stand_study(assisted=True).solve(),
            "unassisted_tol1e-4": ml.examples.squat_to_stand_study(tol=1e-4).solve()}


def test_reference_has_its_provenance():
    env, settings = STORED["environment"], STORED["settings"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert settings["num_mesh_intervals"] == 50 and settings["optim_convergence_tolerance"] == 1e-3
    assert all(STORED["results"][k]["success"] for k in ("unassisted", "assisted", "unassisted_tol1e-4"))


def test_assisted_objective_and_stiffness_agree_with_moco(solutions):
    ours, theirs = solutions["assisted"], STORED["results"]["assisted"]
    assert ours.success
    print(f"stiffness: moco_lab {ours.parameters['stiffness']:.2f}, Moco {theirs['stiffness']:.2f}, "
          "paper 88 (preprint) / 90 (published) N·m/rad")
    assert ours.objective == pytest.approx(theirs["objective"], rel=1e-3)
    assert ours.parameters["stiffness"] == pytest.approx(theirs["stiffness"], abs=0.5)
    assert ours.final_time == pytest.approx(theirs["final_time"], rel=5e-3)
    assert 85 < ours.parameters["stiffness"] < 95  # the paper's 88 / 90


def test_unassisted_objective_agrees_with_moco_at_a_tighter_tolerance(solutions):
    ours, theirs = solutions["unassisted_tol1e-4"], STORED["results"]["unassisted_tol1e-4"]
    loose = STORED["results"]["unassisted"]
    assert ours.success
    assert ours.objective == pytest.approx(theirs["objective"], rel=1e-3)
    assert ours.final_time == pytest.approx(theirs["final_time"], rel=5e-3)
    assert loose["objective"] > theirs["objective"] + 5e-3  # Moco at the paper's 1e-3 stops visibly higher


@pytest.mark.parametrize("case", ["assisted", "unassisted_tol1e-4"])
def test_trajectories_agree_with_moco(solutions, case):
    ours = solutions[case]
    t, cols, _ = read_table(REFERENCE / f"squat_to_stand_moco_{case}.sto")
    tau = (t - t[0]) / (t[-1] - t[0])
    ours_tau = (ours.time - ours.time[0]) / (ours.time[-1] - ours.time[0])
    angles = [n for n in cols if n.endswith("/value") and "beta" not in n]
    activations = [n for n in cols if n.endswith("/activation")]
    assert len(angles) == 4 and len(activations) == 9
    worst_angle = max(np.abs(np.interp(tau, ours_tau, ours.states[n]) - cols[n]).max() for n in angles)
    worst_act = max(np.abs(np.interp(tau, ours_tau, ours.states[n]) - cols[n]).max() for n in activations)
    print(f"{case}: joint angles within {np.degrees(worst_angle):.3f} deg, activations within {worst_act:.4f}")
    assert np.degrees(worst_angle) < 0.3 and worst_act < 0.035


def test_each_problem_converges_from_the_other_ones_solution(solutions):
    """Robustness: warm-started from the other problem's solution instead of the paper's guess, each problem reaches the
    same optimum: objective to 1e-3 relative. The stiffness lands within 2.5 N·m/rad (measured 88.9 against 90.5):
    the objective is flat around the optimum — with the stiffness held at 80, 88.9, 90.5, 95 and 100 N·m/rad it is
    1.3678, 1.3673, 1.3649, 1.3645, 1.3678 (measured; 50 intervals, tolerance 1e-3) — so where IPOPT stops moves
    along the valley; the paper's 88 (preprint) and 90 (published) are a spread of the same kind."""
    assisted = ml.examples.squat_to_stand_study(assisted=True)
    assisted.solver.guess = solutions["unassisted_tol1e-4"]
    from_unassisted = assisted.solve()
    unassisted = ml.examples.squat_to_stand_study(tol=1e-4)
    unassisted.solver.guess = solutions["assisted"]
    from_assisted = unassisted.solve()
    assert from_unassisted.success and from_assisted.success
    assert from_unassisted.objective == pytest.approx(solutions["assisted"].objective, rel=1e-3)
    print(f"from the unassisted solution: k = {from_unassisted.parameters['stiffness']:.2f}, objective "
          f"{from_unassisted.objective:.6f} (from the paper's guess: {solutions['assisted'].objective:.6f})")
    assert from_unassisted.parameters["stiffness"] == pytest.approx(solutions["assisted"].parameters["stiffness"], abs=2.5)
    assert from_assisted.objective == pytest.approx(solutions["unassisted_tol1e-4"].objective, rel=1e-3)
