"""Moco 4.6's pseudospectral schemes, ``legendre-gauss-k`` and ``legendre-gauss-radau-k`` (k = 1…9).

* Each scheme's nodes, differentiation and continuity coefficients against ``casadi.collocation_coeff``, which
  Moco's ``CasOC::LegendreGauss(Radau)`` calls; each scheme's exactness on polynomials (its defining property).
* Solutions against OpenSim Moco 4.6, stored with their provenance by ``benchmarks/pseudospectral_moco.py``:
  Kirk's linear problem (k = 1, 3, 5, both families, both modes), the sliding mass in minimum time (free final
  time), the double-pendulum swing-up (nonlinear), the bead on the parabola (kinematic constraints, Bordalba2023).
* Kinematic constraints with a pseudospectral scheme and Posa2016: refused with a clear message, as Moco refuses.

The Jacobians and exact Hessians of the pseudospectral transcriptions are checked against finite differences with
every other binding in ``test_transcription_jacobians.py`` and ``test_transcription_hessians.py``; the order of
accuracy is measured in lesson 01.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from moco_compare import relative_max_difference, stored_moco
from test_kinematic_constraints import actuated_study

import moco_lab as ml
from moco_lab.engine.collocation import PSEUDOSPECTRAL_SCHEMES, collocation_defects, quadrature_weights, scheme_for

HEADER, RUNS = stored_moco("pseudospectral_moco")

_CASADI_TABLES = """
import json, casadi
out = {}
for family in ("legendre", "radau"):
    for k in range(1, 10):
        roots = casadi.collocation_points(k, family)
        C, D, B = casadi.collocation_coeff(roots)
        out[f"{family}-{k}"] = [list(roots), [[float(C[i, j]) for j in range(C.size2())] for i in range(C.size1())],
                                [float(v) for v in D.nonzeros()] if D.nnz() == D.numel() else
                                [float(D[i]) for i in range(D.numel())], [float(B[i]) for i in range(B.numel())]]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def casadi_tables() -> dict:
    """casadi's tables, computed in another process: casadi's Python module loaded into this one would clash with
    the casadi library OpenSim's Moco links (an undefined symbol when a later test imports opensim). ``import
    opensim`` puts its own folder on ``LD_LIBRARY_PATH`` (with its older libcasadi); the child gets the path without
    it, or its casadi would load OpenSim's library."""
    import os
    from pathlib import Path

    env = dict(os.environ)
    if "LD_LIBRARY_PATH" in env:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in env["LD_LIBRARY_PATH"].split(os.pathsep)
                                                 if Path(p).name != "opensim")
    run = subprocess.run([sys.executable, "-c", _CASADI_TABLES], capture_output=True, text=True, env=env,
                         cwd=Path(__file__).resolve().parents[1])
    assert run.returncode == 0, f"casadi's tables could not be computed: {run.stderr[-3000:]}"
    return json.loads(run.stdout)


@pytest.mark.parametrize("k", range(1, 10))
@pytest.mark.parametrize("family", ["legendre", "radau"])
def test_tables_equal_casadis(family, k, casadi_tables):
    """casadi builds the Lagrange polynomials in the power basis: measured against the barycentric tables here its
    coefficients differ by up to 7e-11 at k = 9 (1e-16 at k = 2), while the tables here satisfy the exactness
    checks below to 1e-13; 1e-9 of the largest coefficient separates round-off from any wrong entry (the smallest
    entries are ~1e-2)."""
    name = f"legendre-gauss-{k}" if family == "legendre" else f"legendre-gauss-radau-{k}"
    sch = scheme_for(name)
    roots, C, D, B = (np.array(m, float) for m in casadi_tables[f"{family}-{k}"])
    np.testing.assert_allclose(sch.nodes[1:k + 1], roots, rtol=0, atol=1e-15)
    scale = np.max(np.abs(C))
    np.testing.assert_allclose(sch.defect_y[:k, :k + 1], C.T, rtol=0, atol=1e-9 * scale)
    np.testing.assert_array_equal(sch.defect_f[:k, 1:k + 1], -np.eye(k))
    if family == "legendre":
        np.testing.assert_allclose(-sch.defect_y[k, :k + 1], D.ravel(), rtol=0, atol=1e-9 * np.max(np.abs(D)))
        assert sch.defect_y[k, k + 1] == 1.0
    if name == "legendre-gauss-radau-1":
        # Moco's integral on this scheme weighs each interval's end by half the interval (casadi's weight of the
        # line through the start and the end, whose start weight Moco drops); the Radau rule weighs it by all of it
        assert B.ravel().tolist() == [0.5] and sch.weights.tolist() == [0.0, 1.0]
    else:
        np.testing.assert_allclose(sch.weights[1:k + 1], B.ravel(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", PSEUDOSPECTRAL_SCHEMES)
def test_exact_on_polynomials(name):
    """Defects vanish for states that are polynomials of degree k (the collocation polynomial's degree) on
    three intervals of unequal durations, and not for degree k + 1; the quadrature integrates degree 2k − 1 (Gauss)
    or 2k − 2 (Radau) exactly (and, checked where the error is above round-off, not one degree more). Round-off:
    the differentiation entries grow like k², values here are O(1): 1e-12 absolute."""
    sch = scheme_for(name)
    k = int(name.rsplit("-", 1)[1])
    radau = "radau" in name
    mesh = np.array([0.0, 0.3, 0.45, 1.0])
    h = np.diff(mesh)
    tau = np.concatenate([m + sch.nodes[:-1] * d for m, d in zip(mesh[:-1], h)] + [[1.0]])
    rng = np.random.default_rng(k)
    c = rng.normal(size=(k + 1, 2))  # two states, each a degree-k polynomial
    Y = np.polynomial.polynomial.polyval(tau, c).T
    F = np.polynomial.polynomial.polyval(tau, np.polynomial.polynomial.polyder(c)).T
    defects, _ = collocation_defects(name, Y, F, h)
    assert defects.size == 3 * sch.rows * 2
    assert np.max(np.abs(defects)) < 1e-12
    # one degree more: not a solution of the collocation equations (the scheme is not exact beyond its degree)
    Y2 = np.column_stack([tau ** (k + 1)] * 2)
    F2 = np.column_stack([(k + 1) * tau ** k] * 2)
    assert np.max(np.abs(collocation_defects(name, Y2, F2, h)[0])) > 1e-9  # measured: 9e-7 (Radau, k = 9) and more
    w = quadrature_weights(name, h)
    exact_degree = 2 * k - 2 if radau else 2 * k - 1
    for degree in range(exact_degree + 1):
        assert w @ tau ** degree == pytest.approx(1 / (degree + 1), abs=1e-13)
    if k <= 3:  # beyond, the rule's error for the next degree (~h^(2k+1)) sinks below round-off on this mesh
        assert abs(w @ tau ** (exact_degree + 1) - 1 / (exact_degree + 2)) > 1e-8


def _ours(case: str, moco: dict) -> ml.Solution:
    scheme, mode = str(moco["settings"]["scheme"]), str(moco["settings"]["mode"])
    N = HEADER["settings"]["num_mesh_intervals"]
    if case.startswith("linear"):
        study = ml.examples.linear_study("kirk", scheme, mode, N)
    elif case.startswith("sliding_mass"):
        study = ml.examples.sliding_mass_study(2.0, scheme, mode, N)
    elif case.startswith("double_pendulum"):
        study = ml.examples.double_pendulum_study(scheme, mode, N)
    else:
        study = actuated_study(scheme, mode, N)
        study.solver.kinematic_constraint_method = "Bordalba2023"
    # 1e-8: Moco's reference is at 1e-6 (its finite differences stop it at tighter ones), so ours is the sharper
    study.solver.optim_convergence_tolerance = study.solver.optim_constraint_tolerance = 1e-8
    return study.solve()


def test_reference_has_its_provenance():
    env, settings = HEADER["environment"], HEADER["settings"]
    assert env["opensim"].startswith("4.6") and env["date"] and env["moco_lab"] and env["drake"]
    assert settings["num_mesh_intervals"] == 10 and settings["optim_convergence_tolerance"] == 1e-6
    assert set(settings["cases"]) == set(RUNS)
    assert all(r["success"] for name, r in RUNS.items() if not name.startswith("parabola"))


SMOOTH = [name for name in RUNS if not name.startswith("parabola")]


@pytest.mark.parametrize("case", SMOOTH)
def test_same_solution_as_moco(case):
    """Same grid (the roots agree to 1e-15), same objective, same trajectories. Measured: objectives to 4e-9
    relative (2.4e-8 for the sliding mass, whose final time is free), states to 1.6e-6 and controls to 9e-6 of
    their ranges — the accuracy of Moco's solve at tolerance 1e-6. Bounds: 1e-7, 2e-5, 1e-4 of the range; a
    wrong defect row or weight moves the solution by orders of magnitude more (the schemes' own discretization
    differences at N = 10 are 1e-4 to 1e-2)."""
    moco = RUNS[case]
    ours = _ours(case, moco)
    assert ours.success, ours.message
    np.testing.assert_allclose(ours.time, moco["time"], rtol=0, atol=2e-8 * moco["time"][-1])
    objective = moco["objective"]
    if "radau-1" in case:  # Moco's integral is half the integral on this scheme (see test_tables_equal_casadis)
        objective *= 2
    assert ours.objective == pytest.approx(objective, rel=1e-7)
    for group in ("states", "controls"):
        bound = 2e-5 if group == "states" else 1e-4
        theirs, mine = moco[group], getattr(ours, group)
        errors = {n: relative_max_difference(mine[n], v) for n, v in theirs.items()}
        assert max(errors.values()) < bound, errors


@pytest.mark.parametrize("mode", ["explicit", "implicit"])
def test_kinematic_constraints_with_legendre_gauss_as_moco(mode):
    """The bead moved along the parabola with Bordalba's projection on ``legendre-gauss-2``: Moco stops with
    Error_In_Step_Computation (its finite differences), moco_lab converges (tolerance 1e-8); the two objectives agree
    to 2.9e-6 relative, the states to 3.5e-5 and the forces to 1.6e-4 of their ranges (measured): the distance of
    Moco's stopping point, not a difference of the programs (docs/solving.md, "Pseudospectral schemes", on the one
    detail in which they differ and why it does not show). Bounds 1e-5, 1e-4, 5e-4."""
    moco = RUNS[f"parabola-legendre-gauss-2-{mode}"]
    ours = _ours("parabola", moco)
    assert ours.status in ("Solve_Succeeded", "Solved_To_Acceptable_Level"), ours.message
    assert abs(ours.objective - moco["objective"]) < 1e-5 * moco["objective"]
    for group, bound in (("states", 1e-4), ("controls", 5e-4)):
        theirs, mine = moco[group], getattr(ours, group)
        errors = {n: relative_max_difference(mine[n], v) for n, v in theirs.items()}
        assert max(errors.values()) < bound, errors


def test_posa_with_a_pseudospectral_scheme_is_refused():
    study = actuated_study("legendre-gauss-radau-3", "explicit", 5)
    with pytest.raises(ValueError, match="kinematic_constraint_method='Bordalba2023'"):
        study.solve()


def test_controls_inside_intervals_are_interpolated_or_free():
    """Moco's ``interpolate_control_mesh_interior_points``: by default a control at a root lies on the line between
    its interval's end values; switched off, the pseudospectral scheme's higher order shows (Kirk's problem,
    ``legendre-gauss-3``, N = 4: the objective's error against the closed form drops from 4e-5 to 2.5e-6, measured)."""
    errors = {}
    for interpolate in (True, False):
        study = ml.examples.linear_study("kirk", "legendre-gauss-3", "explicit", 4, tol=1e-10)
        study.solver.interpolate_control_mesh_interior_points = interpolate
        sol = study.solve()
        assert sol.success, sol.message
        x, t = sol.controls["/forceset/coordinateactuator"], sol.time
        inside = x[1:4] - (x[0] + (t[1:4] - t[0]) / (t[4] - t[0]) * (x[4] - x[0]))
        assert (np.max(np.abs(inside)) < 1e-9) == interpolate
        errors[interpolate] = abs(sol.objective - ml.analysis.LINEAR_J_STAR["kirk"])
    assert errors[False] < errors[True] / 5
