"""The verification problems, posed in moco_lab exactly as Moco poses them.

Each builder returns a ready-to-solve :class:`moco_lab.Study` whose problem
and solver settings mirror, line for line, the OpenSim Moco study built by the
matching ``solve_*`` function of :mod:`benchmarks.moco_reference` (see
``/work/shared/reference/VERIFICATION_PROBLEMS.md`` for the specifications).
The state and control paths are the same in both, so results can be compared
name by name::

    from benchmarks.moco_lab_problems import linear_study
    solution = linear_study("kirk", "hermite-simpson", "explicit", N=50).solve()
    solution.objective        # 16.7507... (J* = 16.7507233968)

Every builder takes the same transcription options:

``scheme``
    ``"trapezoidal"`` or ``"hermite-simpson"`` (Moco's ``transcription_scheme``).
``mode``
    ``"explicit"`` or ``"implicit"`` (Moco's ``multibody_dynamics_mode``).
``N``
    Number of uniform mesh intervals (``num_mesh_intervals``); the solution
    grid has ``N + 1`` points (trapezoidal) or ``2 N + 1`` (Hermite-Simpson).
``tol``
    If given, both the convergence and the constraint tolerance of IPOPT;
    ``None`` keeps the defaults (``tol`` 1e-8, ``constr_viol_tol`` 1e-4), as
    Moco does.

Every builder creates a fresh model, so studies never share state; a study
can be modified (goals, bounds, settings) before calling ``solve()``.

Problems
--------
:func:`linear_study`
    (a) Kirk's linear minimum-effort problem, ``J = 0.5 ∫ x² dt``.
:func:`sliding_mass_study`
    (b) Minimum-time point-to-point motion of a sliding mass.
:func:`double_pendulum_study`
    Minimum-effort swing-up of the double pendulum to the inverted position.
"""
from __future__ import annotations

import math
from typing import Optional

import moco_lab as ml

__all__ = [
    "LINEAR_J_STAR",
    "PROBLEMS",
    "linear_study",
    "sliding_mass_study",
    "double_pendulum_study",
    "sliding_mass_tf_star",
]

#: Analytic optimal objective of problem (a), per variant.
LINEAR_J_STAR = {"kirk": 16.7507233968, "moco_test": 12.7507233968}


def _configure(study: ml.Study, scheme: str, mode: str, N: int, tol: Optional[float]) -> ml.Study:
    """Apply the transcription options shared by all builders and return ``study``."""
    solver = study.solver
    solver.transcription_scheme = scheme
    solver.multibody_dynamics_mode = mode
    solver.num_mesh_intervals = int(N)
    solver.optim_solver = "ipopt"
    if tol is not None:
        solver.optim_convergence_tolerance = float(tol)
        solver.optim_constraint_tolerance = float(tol)
    solver.validate()
    return study


def linear_study(variant: str = "kirk", scheme: str = "hermite-simpson", mode: str = "explicit",
                 N: int = 50, tol: Optional[float] = None) -> ml.Study:
    """Problem (a): Kirk's linear minimum-effort optimal control problem.

    Unit mass on a slider (``q``, ``u``) with a viscous generalized force and
    a force actuator ``x``: ``udot = -u + x`` (``variant="kirk"``) or
    ``udot = u + x`` (``variant="moco_test"``, as in Moco's
    ``testMocoAnalytic.cpp``). t in [0, 2] (fixed); q in [-10, 10],
    q(0) = 0, q(2) = 5; u in [-10, 10], u(0) = 0, u(2) = 2; x in [-50, 50];
    goal ``ControlGoal("effort", 0.5)``, so ``J = 0.5 ∫ x² dt``.
    Analytic optimum: :data:`LINEAR_J_STAR` ``[variant]``.

    States ``/jointset/j/coord/value``, ``/jointset/j/coord/speed``;
    control ``/forceset/coordinateactuator``.
    Moco counterpart: :func:`benchmarks.moco_reference.solve_linear`.
    """
    study = ml.Study(f"linear_{variant}")
    p = study.problem
    p.set_model(ml.models.linear_problem(variant))
    p.set_time_bounds(0, 2)
    p.set_state_info("/jointset/j/coord/value", (-10, 10), 0, 5)
    p.set_state_info("/jointset/j/coord/speed", (-10, 10), 0, 2)
    p.set_control_info("/forceset/coordinateactuator", (-50, 50))
    p.add_goal(ml.ControlGoal("effort", 0.5))
    return _configure(study, scheme, mode, N, tol)


def sliding_mass_tf_star(mass: float = 2.0, distance: float = 1.0, max_force: float = 50.0) -> float:
    """Analytic minimum time of problem (b): ``2 sqrt(mass * distance / max_force)``."""
    return 2.0 * math.sqrt(mass * distance / max_force)


def sliding_mass_study(scheme: str = "hermite-simpson", mode: str = "explicit", N: int = 50,
                       mass: float = 2.0, tol: Optional[float] = None) -> ml.Study:
    """Problem (b): move a sliding mass 1 m, from rest to rest, in minimum time.

    t0 = 0, t_f in [0, 5]; position in [-5, 5], 0 -> 1; speed in [-50, 50],
    0 at both ends; force in [-50, 50] N; goal ``FinalTimeGoal`` (weight 1).
    Analytic optimum: bang-bang +50 N then -50 N, switching at t_f / 2, with
    ``t_f* =`` :func:`sliding_mass_tf_star` ``(mass)`` (0.4 s for 2 kg).

    States ``/slider/position/value``, ``/slider/position/speed``;
    control ``/actuator``.
    Moco counterpart: :func:`benchmarks.moco_reference.solve_sliding_mass`.
    """
    study = ml.Study("sliding_mass")
    p = study.problem
    p.set_model(ml.models.sliding_mass(mass=mass))
    p.set_time_bounds(0, (0, 5))
    p.set_state_info("/slider/position/value", (-5, 5), 0, 1)
    p.set_state_info("/slider/position/speed", (-50, 50), 0, 0)
    p.set_control_info("/actuator", (-50, 50))
    p.add_goal(ml.FinalTimeGoal("time", 1.0))
    return _configure(study, scheme, mode, N, tol)


def double_pendulum_study(scheme: str = "hermite-simpson", mode: str = "explicit", N: int = 50,
                          tol: Optional[float] = None) -> ml.Study:
    """Minimum-effort swing-up of the double pendulum (OpenSim's ``createDoublePendulum``).

    t in [0, 1] (fixed); q0 in [-10, 10], 0 -> pi/2 (first link from
    horizontal to straight up); q1 in [-10, 10], 0 -> 0; both speeds in
    [-50, 50], 0 at both ends; torques ``/tau0``, ``/tau1`` in [-100, 100]
    N m; goal ``ControlGoal("effort", 1)`` (exponent 2), so
    ``J = ∫ (tau0² + tau1²) dt``. No analytic solution.

    States ``/jointset/j0/q0/{value,speed}``, ``/jointset/j1/q1/{value,speed}``;
    controls ``/tau0``, ``/tau1``.
    Moco counterpart: :func:`benchmarks.moco_reference.solve_double_pendulum`.
    """
    study = ml.Study("double_pendulum")
    p = study.problem
    p.set_model(ml.models.double_pendulum())
    p.set_time_bounds(0, 1)
    p.set_state_info("/jointset/j0/q0/value", (-10, 10), 0, math.pi / 2)
    p.set_state_info("/jointset/j0/q0/speed", (-50, 50), 0, 0)
    p.set_state_info("/jointset/j1/q1/value", (-10, 10), 0, 0)
    p.set_state_info("/jointset/j1/q1/speed", (-50, 50), 0, 0)
    p.set_control_info("/tau0", (-100, 100))
    p.set_control_info("/tau1", (-100, 100))
    p.add_goal(ml.ControlGoal("effort", 1.0, exponent=2))
    return _configure(study, scheme, mode, N, tol)


#: Problem name -> (moco_lab builder, extra keyword arguments) for the
#: problems compared against Moco (linear in both variants).
PROBLEMS = {
    "linear[kirk]": (linear_study, {"variant": "kirk"}),
    "linear[moco_test]": (linear_study, {"variant": "moco_test"}),
    "sliding_mass": (sliding_mass_study, {}),
    "double_pendulum": (double_pendulum_study, {}),
}
