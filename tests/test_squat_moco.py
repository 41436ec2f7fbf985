"""Squat-to-stand against OpenSim Moco 4.6: the stored reference of benchmarks/squat_to_stand.py.

Moco takes one to several minutes per problem here, so its solutions are produced by that script (same model file —
the text of moco_lab.modeling.squat.squat_to_stand_osim — and the settings of the Moco paper's script) and stored
with their provenance in benchmarks/reference/; this test solves moco_lab's side (full mesh, 50 intervals, IPOPT with
MUMPS as the factory sets it; about 10 s each) and compares. The paper's published stiffness is 88 N·m/rad
(preprint) / 90 N·m/rad (PLOS Comput Biol).

Tolerances. Both tools stop when IPOPT's scaled measures fall below the tolerance, not at the exact optimum, and the
objective is flat along a valley (stiffness against final time against effort), so at the paper's 1e-3 where an
optimizer stops depends on its path: the yardstick is each tool against itself. moco_lab at 1e-3 stops at 1.36606
from the paper's guess and at 1.36263 from the unassisted solution (2.5e-3 apart); Moco at 1e-3 stopped at
k = 90.32 N·m/rad (objective 1.36499) in the run of 2026-11-24 and at k = 89.30 (1.36508) in that of 2026-11-26,
same file and settings on another machine of this kind (1.0 N·m/rad apart). At 1e-4 both moco_lab starts reach
1.36265 and 1.36260 (3e-5 apart) and the tools agree to 3e-4 and 0.1 N·m/rad (measured, IPOPT + MUMPS). Hence:

* the paper's tolerance 1e-3: where IPOPT stops on the valley is decided by round-off, so the claim is a bracket,
  not agreement: the objective above moco_lab's own optimum at 1e-4 and less than 1.5 % above Moco's stopping value
  (measured on the assisted problem: 1.36435 with OpenBLAS's Sandybridge kernels, 1.36606 with Haswell's, 1.37643
  with SkylakeX's — the same problem, 74–81 iterations; Moco 1.36499 and 1.36508 in two runs); optimal stiffness to
  1.5 N·m/rad (measured 0.5–1.4; Moco against itself 1.02), final time to 5e-3 relative;
* both tools at 1e-4, both problems: objective to 1e-3 relative (measured 2.8e-4 and 2.1e-4), stiffness to
  0.5 N·m/rad (measured 0.09), final time to 5e-3 relative (measured 5e-4);
* trajectories at 1e-4 on the normalized time (both on 50 Hermite–Simpson intervals), largest difference at any
  time: joint angles to 0.3° and activations to 0.05 (measured, unassisted: 0.21° and 0.035 against Moco's run of
  2026-11-26, 0.13° and 0.011 against its run of 2026-11-24; Moco's two runs differ from each other by 0.11° and
  0.024, all in the gluteus maximus' activation; moco_lab with MUMPS and with SPRAL by 0.03° and 0.002).
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
            "assisted_tol1e-4": ml.examples.squat_to_stand_study(assisted=True, tol=1e-4).solve(),
            "unassisted_tol1e-4": ml.examples.squat_to_stand_study(tol=1e-4).solve()}


def test_reference_has_its_provenance():
    env, settings = STORED["environment"], STORED["settings"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert settings["num_mesh_intervals"] == 50 and settings["optim_convergence_tolerance"] == 1e-3
    assert all(STORED["results"][k]["success"] for k in ("unassisted", "assisted", "unassisted_tol1e-4",
                                                           "assisted_tol1e-4"))


def test_assisted_objective_and_stiffness_agree_with_moco(solutions):
    ours, theirs = solutions["assisted"], STORED["results"]["assisted"]
    assert ours.success
    print(f"stiffness: moco_lab {ours.parameters['stiffness']:.2f}, Moco {theirs['stiffness']:.2f}, "
          f"paper 88 (preprint) / 90 (published) N·m/rad; objective {ours.objective:.6f} (Moco {theirs['objective']:.6f})")
    optimum = solutions["assisted_tol1e-4"].objective
    assert optimum * (1 - 1e-4) < ours.objective < theirs["objective"] * 1.015
    assert ours.parameters["stiffness"] == pytest.approx(theirs["stiffness"], abs=1.5)
    assert ours.final_time == pytest.approx(theirs["final_time"], rel=5e-3)
    assert 85 < ours.parameters["stiffness"] < 95  # the paper's 88 / 90


@pytest.mark.parametrize("case", ["unassisted", "assisted"])
def test_objectives_agree_with_moco_at_a_tighter_tolerance(solutions, case):
    ours, theirs = solutions[f"{case}_tol1e-4"], STORED["results"][f"{case}_tol1e-4"]
    loose = STORED["results"][case]
    assert ours.success
    print(f"{case} at 1e-4: objective {ours.objective:.6f} (Moco {theirs['objective']:.6f}), final time "
          f"{ours.final_time:.4f} s (Moco {theirs['final_time']:.4f} s)")
    assert ours.objective == pytest.approx(theirs["objective"], rel=1e-3)
    assert ours.final_time == pytest.approx(theirs["final_time"], rel=5e-3)
    if case == "assisted":
        assert ours.parameters["stiffness"] == pytest.approx(theirs["stiffness"], abs=0.5)
    assert loose["objective"] > theirs["objective"]  # Moco at the paper's 1e-3 stops higher


@pytest.mark.parametrize("case", ["assisted_tol1e-4", "unassisted_tol1e-4"])
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
    assert np.degrees(worst_angle) < 0.3 and worst_act < 0.05


def test_each_problem_converges_from_the_other_ones_solution(solutions):
    """Robustness: warm-started from the other problem's solution instead of the paper's guess, each problem reaches the
    same optimum as from the paper's guess, both at tolerance 1e-4 (at 1e-3 the stopping points spread along the flat
    valley, see the module docstring): objective to 1e-3 relative (measured 3e-5 assisted), stiffness to 1 N·m/rad
    (measured 0.21: with the stiffness held at 80, 88.9, 90.5, 95 and 100 N·m/rad the objective is 1.3678, 1.3673,
    1.3649, 1.3645, 1.3678 — flat around the optimum; the paper's 88 and 90 are a spread of the same kind)."""
    assisted = ml.examples.squat_to_stand_study(assisted=True, tol=1e-4)
    assisted.solver.guess = solutions["unassisted_tol1e-4"]
    from_unassisted = assisted.solve()
    unassisted = ml.examples.squat_to_stand_study(tol=1e-4)
    unassisted.solver.guess = solutions["assisted"]
    from_assisted = unassisted.solve()
    assert from_unassisted.success and from_assisted.success
    reference = solutions["assisted_tol1e-4"]
    print(f"from the unassisted solution: k = {from_unassisted.parameters['stiffness']:.2f}, objective "
          f"{from_unassisted.objective:.6f} (from the paper's guess: k = {reference.parameters['stiffness']:.2f}, "
          f"{reference.objective:.6f})")
    assert from_unassisted.objective == pytest.approx(reference.objective, rel=1e-3)
    assert from_unassisted.parameters["stiffness"] == pytest.approx(reference.parameters["stiffness"], abs=1.0)
    assert from_assisted.objective == pytest.approx(solutions["unassisted_tol1e-4"].objective, rel=1e-3)
