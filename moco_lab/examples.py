"""Ready-made studies: Moco's verification problems, posed exactly as Moco 4.6 poses them.

See ``shared/reference/VERIFICATION_PROBLEMS.md`` (a), (b). Each function
returns a fresh :class:`~moco_lab.study.Study` that you can inspect, change and
solve; lessons, dashboards, tests and benchmarks all start from these.
"""
from __future__ import annotations

import math

from .goals import ControlGoal, FinalTimeGoal
from .study import Study
from . import models

__all__ = ["linear_study", "sliding_mass_study", "double_pendulum_study"]


def _settings(study: Study, scheme: str, mode: str, num_mesh_intervals: int) -> Study:
    study.solver.transcription_scheme = scheme
    study.solver.multibody_dynamics_mode = mode
    study.solver.num_mesh_intervals = num_mesh_intervals
    return study


def linear_study(variant: str = "kirk", scheme: str = "hermite-simpson", mode: str = "explicit",
                 num_mesh_intervals: int = 50) -> Study:
    """Problem (a): minimum effort ``0.5 ∫ x² dt`` for ``q: 0 → 5``, ``u: 0 → 2`` on ``t ∈ [0, 2]``.

    ``variant="kirk"`` is the paper's ``udot = -u + x`` (J* = 16.7507...);
    ``"moco_test"`` is Moco's test, ``udot = u + x`` (J* = 12.7507...).
    """
    study = Study(f"linear_{variant}")
    p = study.problem
    p.set_model(models.linear_problem(variant))
    p.set_time_bounds(0, 2)
    p.set_state_info("/jointset/j/coord/value", (-10, 10), 0, 5)
    p.set_state_info("/jointset/j/coord/speed", (-10, 10), 0, 2)
    p.set_control_info("/forceset/coordinateactuator", (-50, 50))
    p.add_goal(ControlGoal("effort", 0.5))
    return _settings(study, scheme, mode, num_mesh_intervals)


def sliding_mass_study(mass: float = 2.0, scheme: str = "hermite-simpson", mode: str = "explicit",
                       num_mesh_intervals: int = 50) -> Study:
    """Problem (b): minimum time to move 1 m from rest to rest with ``|F| <= 50`` N (t_f* = 0.4 s for 2 kg)."""
    study = Study("sliding_mass")
    p = study.problem
    p.set_model(models.sliding_mass(mass=mass))
    p.set_time_bounds(0, (0, 5))
    p.set_state_info("/slider/position/value", (-5, 5), 0, 1)
    p.set_state_info("/slider/position/speed", (-50, 50), 0, 0)
    p.set_control_info("/actuator", (-50, 50))
    p.add_goal(FinalTimeGoal("time"))
    return _settings(study, scheme, mode, num_mesh_intervals)


def double_pendulum_study(scheme: str = "hermite-simpson", mode: str = "explicit",
                          num_mesh_intervals: int = 50) -> Study:
    """Swing OpenSim's double pendulum from horizontal (``q0 = 0``) to upright (``q0 = π/2``) in 1 s, minimum effort.

    Both links start along +x at rest and end pointing up at rest; torques in
    ``[-100, 100]``; goal ``∫ (tau0² + tau1²) dt``.
    """
    study = Study("double_pendulum")
    p = study.problem
    p.set_model(models.double_pendulum())
    p.set_time_bounds(0, 1)
    p.set_state_info("/jointset/j0/q0/value", (-10, 10), 0, math.pi / 2)
    p.set_state_info("/jointset/j1/q1/value", (-10, 10), 0, 0)
    p.set_state_info_pattern(r".*/speed", (-50, 50), 0, 0)
    p.set_control_info_pattern(r"/tau\d", (-100, 100))
    p.add_goal(ControlGoal("effort", 1.0))
    return _settings(study, scheme, mode, num_mesh_intervals)
