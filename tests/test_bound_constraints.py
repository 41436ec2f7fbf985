"""Moco's control and state bound constraints (``moco_lab.ocp.bound_constraints``): what the rows are, the exact
Hessian with them, and bad input named. Agreement with OpenSim Moco 4.6 is in tests/test_goals_moco.py."""
from __future__ import annotations

import numpy as np
import pytest

import moco_lab as ml
from moco_lab.modeling.functions import Constant, LinearFunction, PolynomialFunction


def _swing_up(mode: str = "explicit") -> ml.Study:
    return ml.examples.double_pendulum_study("hermite-simpson", mode, 30, tol=1e-8)


def test_bounds_hold_at_the_mesh_points_and_bind():
    """The shoulder torque held under 80 - 60 t: at every mesh point the solution is at or under the line (to the
    constraint tolerance), touches it where the unconstrained swing-up exceeded it, and the effort rises."""
    free = _swing_up().solve()
    study = _swing_up()
    line = LinearFunction(-60.0, 80.0)
    study.problem.add_path_constraint(ml.ControlBoundConstraint("limit", ["/tau0"], upper_bound=line))
    sol = study.solve()
    assert free.success and sol.success
    mesh = sol.time[::2]   # Hermite-Simpson: the mesh points are every other grid point
    tau0 = sol.controls["/tau0"][::2]
    assert np.all(tau0 <= line(mesh) + 1e-7)
    assert np.any(free.controls["/tau0"][::2] > line(mesh) + 1.0)    # the unconstrained optimum breaks the bound
    assert np.min(np.abs(tau0 - line(mesh))) < 1e-6                     # and the constrained one touches it
    assert sol.objective > free.objective


def test_exact_hessian_takes_them():
    """Linear rows have no second derivatives: with the exact Hessian, started at the limited-memory optimum, IPOPT
    stays at that optimum (the swing-up has other local minima, so each is started there)."""
    runs = {}
    for approximation in ("limited-memory", "exact"):
        study = _swing_up()
        study.solver.set_hessian_approximation(approximation)
        study.solver.guess = runs.get("limited-memory")
        study.problem.add_path_constraint(ml.StateBoundConstraint("speed", ["/jointset/j1/q1/speed"],
                                                                  lower_bound=LinearFunction(4.0, -5.5)))
        runs[approximation] = study.solve()
    assert all(r.success for r in runs.values())
    assert runs["exact"].objective == pytest.approx(runs["limited-memory"].objective, rel=1e-7)
    assert runs["exact"].nit < 15


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="if equality_with_lower==true, upper bound function must not be set"):
        ml.ControlBoundConstraint("c", ["/tau0"], lower_bound=1.0, upper_bound=2.0, equality_with_lower=True)
    with pytest.raises(ValueError, match="if equality_with_lower==true, lower bound function must be set"):
        ml.StateBoundConstraint("c", ["/tau0"], equality_with_lower=True)
    with pytest.raises(TypeError, match="lower_bound must be an OpenSim function of time"):
        ml.ControlBoundConstraint("c", ["/tau0"], lower_bound=lambda t: t)
    study = _swing_up()
    study.problem.add_path_constraint(ml.ControlBoundConstraint("c", ["/tau2"], upper_bound=Constant(5.0)))
    with pytest.raises(KeyError, match=r"ControlBoundConstraint 'c'.*'/tau2'.*/tau0"):
        study.solve()
    with pytest.raises(ValueError, match="already exists"):
        study.problem.add_path_constraint(ml.StateBoundConstraint("c", []))
    with pytest.raises(TypeError, match="passed alone"):
        study.problem.add_path_constraint(ml.StateBoundConstraint("d", []), lambda *a: 0, 0, 1)
    with pytest.raises(TypeError, match="do not hold Moco.s path constraints"):
        study.to_dict()
    # a bound that moves with time on a free time grid would depend on the final time: refused by name
    study = _swing_up()
    study.problem.set_time_bounds(0.0, (0.5, 2.0))
    study.problem.add_path_constraint(ml.ControlBoundConstraint("ramp", ["/tau0"],
                                                                upper_bound=PolynomialFunction([1.0, 0.0, 50.0])))
    with pytest.raises(ValueError, match="ControlBoundConstraint 'ramp': its bounds vary with time"):
        study.solve()
