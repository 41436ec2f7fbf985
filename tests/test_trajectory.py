"""Trajectory and Solution containers."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml


def test_construction_checks():
    with pytest.raises(ValueError, match="strictly increasing"):
        ml.Trajectory([0, 1, 1], {"/q": [0, 1, 2]})
    with pytest.raises(ValueError, match="expected \\(3,\\)"):
        ml.Trajectory([0, 1, 2], {"/q": [0, 1]})


def test_lookup_and_interpolation():
    tr = ml.Trajectory([0, 1, 2], {"/q": [0, 2, 4]}, {"/u": [1, 1, 1]}, parameters={"m": 2})
    assert tr["/q"][1] == 2 and tr.get("/u")[0] == 1
    with pytest.raises(KeyError, match="Did you mean '/q'"):
        tr["/qq"]
    fine = tr.interpolate([0, 0.5, 1.5, 2])
    np.testing.assert_allclose(fine.states["/q"], [0, 1, 3, 4])
    assert fine.parameters == {"m": 2.0}
    assert tr.matrix("states").shape == (3, 1)


def test_rms_difference_uses_the_common_time_range():
    """Moco's helper compares outside the overlap with zero (remark 1); ours does not."""
    a = ml.Trajectory(np.linspace(0, 1, 11), {"/q": np.ones(11)})
    b = ml.Trajectory(np.linspace(0, 0.9, 10), {"/q": np.ones(10)})
    assert a.rms_difference(b) == 0.0
    c = ml.Trajectory(np.linspace(0, 1, 11), {"/q": np.ones(11) + 0.5})
    assert a.rms_difference(c) == pytest.approx(0.5)
    two = ml.Trajectory(np.linspace(0, 1, 11), {"/q": np.ones(11), "/r": np.ones(11)})
    off = ml.Trajectory(np.linspace(0, 1, 11), {"/q": np.ones(11) + 0.5, "/r": np.ones(11) + 0.5})
    assert two.rms_difference(off) == pytest.approx(0.5 * np.sqrt(2))
    assert two.rms_difference(off, per_column=True) == pytest.approx(0.5)  # Moco's normalization
    with pytest.raises(ValueError, match="do not overlap"):
        a.rms_difference(ml.Trajectory([2, 3], {"/q": [1, 1]}))


def test_failed_solution_is_sealed():
    tr = ml.Trajectory([0, 1], {"/q": [0, 1]})
    sol = ml.Solution(tr, success=False, status="Infeasible_Problem_Detected", message="m", objective=1.0,
                      goal_values={}, nit=3, solve_time=0.1)
    assert sol.is_sealed()
    with pytest.raises(RuntimeError, match="Infeasible_Problem_Detected"):
        sol.states
    assert sol.unseal().states["/q"][1] == 1
