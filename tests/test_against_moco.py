"""moco_lab against the real OpenSim Moco 4.6, problem by problem.

Each verification problem is solved twice with the same mesh (N = 50),
transcription scheme, multibody dynamics mode and optimizer tolerances
(IPOPT's defaults in both: ``tol`` 1e-8, ``constr_viol_tol`` 1e-4):

* by Moco (``MocoCasADiSolver``), through :mod:`benchmarks.moco_reference`, its solutions stored with their
  provenance by ``benchmarks/verification_moco.py`` (``benchmarks/reference/verification_moco.json``: CI compares,
  it does not re-solve with Moco);
* by moco_lab, through the studies of :mod:`moco_lab.examples` (``VERIFICATION_STUDIES``).

The two transcriptions are meant to be the *same* nonlinear program, so the
solutions must coincide to the optimizer's accuracy, not merely to the
discretization error. The tolerances below come from measurements (Moco
4.6, Drake 1.51.1, both IPOPT, all 16 cases at N = 50 and at N = 100):

=====================  ==================  ============  =====================
quantity               measured (max)      asserted      why this tolerance
=====================  ==================  ============  =====================
grid times             7e-15 * t_f         1e-12 * t_f   same grid formula
objective (relative)   7e-15               1e-9          see below
states, controls,      1.4e-8 of the       1e-6 of the   see below
implicit accelerations variable's range    range
=====================  ==================  ============  =====================

Why: IPOPT stops when the scaled KKT error is below 1e-8; the two solvers
reach that point along the same iterates for the linear and sliding-mass
problems (identical iteration counts) and along different ones for the double
pendulum (Moco's Jacobians come from finite differences, moco_lab's are
exact), so the converged trajectories may differ by O(1e-8) relative to their
range -- which is what the double pendulum shows (1e-9 .. 1.4e-8). 1e-6
leaves a margin of about 70 over the worst case measured while still being
orders of magnitude below any modelling difference (the discretization error
at N = 50 is 1e-3 .. 1e-2 of the range; the trapezoidal and Hermite-Simpson
objectives differ by 2e-3 .. 6e-4 relative). The objective is stationary at
the optimum, so it agrees even better (second order in the trajectory
difference); 1e-9 keeps a wide margin over the measured 7e-15 and is five
orders of magnitude stricter than the 1e-4 originally asked for.

The sliding mass has a free final time, which *is* its objective: for it
the normalized grids ``(t - t0) / (t_f - t0)`` are compared to 1e-12 and
``t_f`` to the objective tolerance; for the fixed-time problems the times
themselves are compared to 1e-12 * t_f.

Runtime: about 10 s of moco_lab solves, each case solved once and shared by the
tests of this module (Moco's, about 35 s, are the stored reference).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from moco_compare import assert_same_objective, assert_same_trajectories, stored_moco

import moco_lab as ml

#: Moco 4.6's solutions of every case, stored with their provenance by ``benchmarks/verification_moco.py``
HEADER, STORED = stored_moco("verification_moco")

#: Mesh intervals for every case.
N = 50
#: Optimizer tolerances: None = IPOPT's defaults (tol 1e-8, constr_viol_tol 1e-4) in both.
TOL = None

#: Grid times, relative to t_f (both build t0 + tau * (t_f - t0) on the same tau).
GRID_RTOL = 1e-12
#: Objectives, relative (measured <= 7e-15).
OBJECTIVE_RTOL = 1e-9
#: States, controls and implicit accelerations: max |difference| / range of
#: the variable in Moco's solution (measured <= 1.4e-8).
TRAJECTORY_RTOL = 1e-6

#: Problems whose final time is a decision variable.
FREE_FINAL_TIME = {"sliding_mass"}

CASES = [pytest.param(problem, scheme, mode, id=f"{problem}-{scheme}-{mode}")
         for problem in HEADER["settings"]["problems"] for scheme in HEADER["settings"]["schemes"]
         for mode in HEADER["settings"]["modes"]]


def test_reference_has_its_provenance():
    env, settings = HEADER["environment"], HEADER["settings"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert settings["num_mesh_intervals"] == N and len(STORED) == len(CASES) == 16
    assert set(settings["problems"]) == set(ml.examples.VERIFICATION_STUDIES)


@functools.lru_cache(maxsize=None)
def _solve_pair(problem: str, scheme: str, mode: str):
    """Moco's stored solution of one case and moco_lab's (solved once per test session).

    Returns
    -------
    (dict, moco_lab.Solution)
        Moco's result (the fields of ``benchmarks.moco_reference._solve_study`` the reference stores) and
        moco_lab's solution.
    """
    lab = ml.examples.VERIFICATION_STUDIES[problem](scheme=scheme, mode=mode, num_mesh_intervals=N, tol=TOL).solve()
    return STORED[f"{problem}-{scheme}-{mode}"], lab


@pytest.mark.parametrize("problem, scheme, mode", CASES)
def test_both_succeed_with_same_objective(problem, scheme, mode):
    moco, lab = _solve_pair(problem, scheme, mode)
    assert_same_objective(moco, lab, OBJECTIVE_RTOL)


@pytest.mark.parametrize("problem, scheme, mode", CASES)
def test_same_time_grid(problem, scheme, mode):
    moco, lab = _solve_pair(problem, scheme, mode)
    t_moco, t_lab = moco["time"], np.asarray(lab.time)
    expected_points = N + 1 if scheme == "trapezoidal" else 2 * N + 1
    assert t_moco.shape == (expected_points,)
    assert t_lab.shape == t_moco.shape
    tf = t_moco[-1]
    assert t_lab[0] == pytest.approx(t_moco[0], rel=0, abs=GRID_RTOL * tf)
    if problem in FREE_FINAL_TIME:
        # t_f is the objective here: compare it like one, and the normalized grids exactly.
        assert abs(t_lab[-1] - tf) <= OBJECTIVE_RTOL * tf
        tau_moco = (t_moco - t_moco[0]) / (t_moco[-1] - t_moco[0])
        tau_lab = (t_lab - t_lab[0]) / (t_lab[-1] - t_lab[0])
        assert np.max(np.abs(tau_lab - tau_moco)) <= GRID_RTOL
    else:
        assert np.max(np.abs(t_lab - t_moco)) <= GRID_RTOL * tf


@pytest.mark.parametrize("problem, scheme, mode", CASES)
def test_same_trajectories(problem, scheme, mode):
    moco, lab = _solve_pair(problem, scheme, mode)
    assert lab.success and moco["success"]
    groups = [("states", moco["states"], lab.states), ("controls", moco["controls"], lab.controls)]
    if mode == "implicit":
        # Moco reports the implicit-mode accelerations as "derivatives" (e.g. .../coord/accel).
        assert moco["derivatives"], "Moco returned no implicit-mode accelerations"
        groups.append(("derivatives", moco["derivatives"], lab.derivatives))
    assert_same_trajectories(groups, TRAJECTORY_RTOL)
