"""The parabola (kinematic constraint) against the real OpenSim Moco 4.6: its solutions stored with their provenance by
``benchmarks/parabola_moco.py`` (``benchmarks/reference/parabola_moco.json``).

Same problem, same mesh (N = 50), Hermite–Simpson with Posa et al.'s method (Moco's
``Posa2016``), same tolerances. Moco's constraint is 0 = tx² − ty, moco_lab's ty − tx², so the
multipliers have opposite signs. Measured (bead, explicit): states agree to 6e-9, multipliers
to 7e-7 (range 47) at mesh points and midpoints alike; actuated: objectives equal to 3e-16,
states 1.5e-10, multipliers 1.9e-8 (range 28).
"""

import numpy as np
import pytest
from moco_compare import stored_moco
from test_kinematic_constraints import LAM, XD, YD, X, Y, actuated_study, bead_study

#: Moco 4.6's solutions, stored with their provenance by ``benchmarks/parabola_moco.py``
HEADER, RUNS = stored_moco("parabola_moco")


def _moco(name: str) -> dict:
    return RUNS[name]


def test_reference_has_its_provenance():
    env, runs = HEADER["environment"], HEADER["settings"]["runs"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert set(runs) == set(RUNS) and all(r["success"] for r in RUNS.values())
    assert runs["bead_implicit"] == {"actuated": False, "mode": "implicit", "num_mesh_intervals": 50,
                                     "kinematic_constraint_method": "Posa2016"}


@pytest.mark.parametrize("actuated, mode", [(False, "explicit"), (False, "implicit"), (True, "explicit")])
def test_parabola_agrees_with_moco(actuated, mode):
    # IPOPT's default tolerances in both (Moco fails with Error_In_Step_Computation at 1e-10)
    moco = _moco(f"{'actuated' if actuated else 'bead'}_{mode}")
    assert moco["success"], moco["status"]
    st = actuated_study("hermite-simpson", mode, N=30) if actuated else bead_study("hermite-simpson", mode, N=50)
    st.solver.optim_convergence_tolerance = st.solver.optim_constraint_tolerance = None
    ours = st.solve()
    assert ours.success, ours.message
    np.testing.assert_allclose(ours.time, moco["time"], atol=1e-9)  # t0 = 0 is a bound IPOPT relaxes by ~1e-10
    if actuated:
        assert ours.objective == pytest.approx(moco["objective"], rel=1e-7)
    for name in (X, Y, XD, YD):
        span = np.ptp(moco["states"][name])
        assert np.max(np.abs(ours.states[name] - moco["states"][name])) < 1e-6 * max(span, 1.0), name
    (moco_lambda,) = moco["multipliers"].values()
    lam = ours.multipliers[LAM]
    assert np.max(np.abs(lam + moco_lambda)) < 1e-5 * np.ptp(moco_lambda)


def test_bead_bordalba_agrees_with_moco():
    """Bordalba2023 with Hermite–Simpson on the bead (Moco's trapezoidal Bordalba run reports the
    problem infeasible, so only Hermite–Simpson is compared). Measured: positions 8e-7, speeds 5e-6,
    multipliers 7e-5 (range 47) — below the discretization error (2e-6 vs time stepping) but not to
    solver precision: the two programs differ in details (Moco warns that its NLP is overconstrained,
    the fixed initial state repeating φ = φ̇ = 0 at t = 0)."""
    moco = _moco("bead_bordalba")
    assert moco["success"], moco["status"]
    st = bead_study("hermite-simpson", "explicit", N=50)
    st.solver.kinematic_constraint_method = "Bordalba2023"
    ours = st.solve()
    assert ours.success, ours.message
    for name, tol in ((X, 5e-6), (Y, 5e-6), (XD, 3e-5), (YD, 3e-5)):
        assert np.max(np.abs(ours.states[name] - moco["states"][name])) < tol, name
    (moco_lambda,) = moco["multipliers"].values()
    assert np.max(np.abs(ours.multipliers[LAM] + moco_lambda)) < 5e-4
