"""Ready-made studies: Moco's verification problems, posed exactly as Moco 4.6 poses them.

See ``VERIFICATION.md`` (a), (b). Each function
returns a fresh :class:`~moco_lab.tools.study.Study` (with a fresh model, so studies
never share state) that you can inspect, change and solve; lessons,
dashboards (:mod:`moco_lab.ui.demos`), tests and benchmarks all start from these.
Problem, bounds, goals and state/control paths mirror, line for line, the
OpenSim Moco studies of ``benchmarks/moco_reference.py``, so results can be
compared name by name::

    import moco_lab as ml
    solution = ml.examples.linear_study("kirk", "hermite-simpson", "explicit", 50).solve()
    solution.objective        # 16.7507... (ml.analysis.LINEAR_J_STAR["kirk"])

Every function takes the same transcription options:

``scheme``
    ``"trapezoidal"`` or ``"hermite-simpson"`` (Moco's ``transcription_scheme``).
``mode``
    ``"explicit"`` or ``"implicit"`` (Moco's ``multibody_dynamics_mode``).
``num_mesh_intervals``
    Number of uniform mesh intervals ``N``; the solution grid has ``N + 1``
    points (trapezoidal) or ``2 N + 1`` (Hermite-Simpson).
``tol`` (keyword only)
    If given, both the convergence and the constraint tolerance of the
    optimizer; ``None`` keeps IPOPT's defaults (``tol`` 1e-8,
    ``constr_viol_tol`` 1e-4), as Moco does.

:data:`VERIFICATION_STUDIES` names the studies compared with Moco by the benchmarks.
"""
from __future__ import annotations

import functools
import math

from ..modeling import library as models
from ..ocp.goals import ControlGoal, FinalTimeGoal
from ..results.trajectory import Trajectory
from ..tools.study import Study
from ..tools.track import Track
from ..util.checks import finite_number, whole_number

__all__ = ["linear_study", "sliding_mass_study", "double_pendulum_study", "suspended_mass_prediction_study",
           "suspended_mass_tracking_study", "parabola_study", "PARABOLA_MOTIONS", "VERIFICATION_STUDIES"]

_TX, _TY = "/jointset/tx/tx/value", "/jointset/ty/ty/value"
_VX, _VY = "/jointset/tx/tx/speed", "/jointset/ty/ty/speed"
_FX, _FY = "/forceset/force_x", "/forceset/force_y"
#: Motions of :func:`parabola_study`.
PARABOLA_MOTIONS = ("move", "release")



def _settings(study: Study, scheme: str, mode: str, num_mesh_intervals: int, tol: float | None) -> Study:
    """Apply the transcription options shared by all studies, validate them, and return ``study``."""
    solver = study.solver
    solver.transcription_scheme = scheme
    solver.multibody_dynamics_mode = mode
    solver.num_mesh_intervals = whole_number(num_mesh_intervals, f"{study.name}: num_mesh_intervals")
    if tol is not None:
        tol = finite_number(tol, f"{study.name}: tol", 0, False, "a finite number > 0 (or None for IPOPT's default)")
        solver.optim_convergence_tolerance = tol
        solver.optim_constraint_tolerance = tol
    solver.validate()
    return study


def linear_study(variant: str = "kirk", scheme: str = "hermite-simpson", mode: str = "explicit",
                 num_mesh_intervals: int = 50, *, tol: float | None = None) -> Study:
    """Problem (a): Kirk's linear minimum-effort problem.

    Unit mass on a slider (``q``, ``u``) with a viscous generalized force and a
    force actuator ``x``: ``udot = -u + x`` (``variant="kirk"``, the paper's
    Eq. 2) or ``udot = u + x`` (``variant="moco_test"``, Moco's
    ``testMocoAnalytic.cpp``). t in [0, 2] (fixed); q in [-10, 10], q: 0 -> 5;
    u in [-10, 10], u: 0 -> 2; x in [-50, 50]; goal ``ControlGoal("effort", 0.5)``,
    so ``J = 0.5 ∫ x² dt``. Closed form: :mod:`moco_lab.analysis`
    (J* = ``LINEAR_J_STAR[variant]``: 16.7507... for kirk, 12.7507... for moco_test).

    States ``/jointset/j/coord/value``, ``/jointset/j/coord/speed``; control
    ``/forceset/coordinateactuator``. Moco counterpart:
    ``benchmarks.moco_reference.solve_linear``.
    """
    study = Study(f"linear_{variant}")
    p = study.problem
    p.set_model(models.linear_problem(variant))
    p.set_time_bounds(0, 2)
    p.set_state_info("/jointset/j/coord/value", (-10, 10), 0, 5)
    p.set_state_info("/jointset/j/coord/speed", (-10, 10), 0, 2)
    p.set_control_info("/forceset/coordinateactuator", (-50, 50))
    p.add_goal(ControlGoal("effort", 0.5))
    return _settings(study, scheme, mode, num_mesh_intervals, tol)


def sliding_mass_study(mass: float = 2.0, scheme: str = "hermite-simpson", mode: str = "explicit",
                       num_mesh_intervals: int = 50, *, tol: float | None = None) -> Study:
    """Problem (b): move a sliding mass 1 m, from rest to rest, in minimum time.

    t0 = 0, t_f in [0, 5]; position in [-5, 5], 0 -> 1; speed in [-50, 50], 0
    at both ends; force in [-50, 50] N; goal ``FinalTimeGoal("time")`` (weight 1,
    Moco's name). Optimum: bang-bang +50 N then -50 N, switching at t_f / 2, with
    ``t_f* = 2 sqrt(mass / 50)`` (0.4 s for 2 kg; :func:`moco_lab.analysis.sliding_mass_tf_star`).

    States ``/slider/position/value``, ``/slider/position/speed``; control
    ``/actuator``. Moco counterpart: ``benchmarks.moco_reference.solve_sliding_mass``.
    """
    study = Study("sliding_mass")
    p = study.problem
    p.set_model(models.sliding_mass(mass=mass))
    p.set_time_bounds(0, (0, 5))
    p.set_state_info("/slider/position/value", (-5, 5), 0, 1)
    p.set_state_info("/slider/position/speed", (-50, 50), 0, 0)
    p.set_control_info("/actuator", (-50, 50))
    p.add_goal(FinalTimeGoal("time"))
    return _settings(study, scheme, mode, num_mesh_intervals, tol)


def double_pendulum_study(scheme: str = "hermite-simpson", mode: str = "explicit",
                          num_mesh_intervals: int = 50, *, tol: float | None = None) -> Study:
    """Swing OpenSim's double pendulum from horizontal (``q0 = 0``) to upright (``q0 = π/2``) in 1 s, minimum effort.

    Both links start along +x at rest and end pointing up at rest: q0 in
    [-10, 10], 0 -> π/2; q1 in [-10, 10], 0 -> 0; speeds in [-50, 50], 0 at both
    ends; torques ``/tau0``, ``/tau1`` in [-100, 100] N m; goal
    ``ControlGoal("effort", 1)`` (exponent 2), so ``J = ∫ (tau0² + tau1²) dt``.
    No closed form is known.

    States ``/jointset/j0/q0/{value,speed}``, ``/jointset/j1/q1/{value,speed}``;
    controls ``/tau0``, ``/tau1``. Moco counterpart:
    ``benchmarks.moco_reference.solve_double_pendulum``.
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
    return _settings(study, scheme, mode, num_mesh_intervals, tol)


def suspended_mass_prediction_study(scheme: str = "hermite-simpson", mode: str = "explicit",
                                    num_mesh_intervals: int = 100, *, tol: float | None = None) -> Study:
    """Problem (c), prediction: move the muscle-suspended point mass between two points, at rest at both ends.

    ``t_f`` in [0.4, 0.8]; tx in [-0.2, 0.2], -0.14 -> 0.14; ty in [-0.4, 0],
    -0.20 -> -0.15; speeds in [-15, 15], 0 at both ends; activations in
    [0, 1], 0 at the start; excitations in [0, 1]. Goals ``effort``
    (``∫ Σ e² dt``, weight 1) and ``time`` (``t_f``, weight 0.01). Moco's
    defaults: 100 mesh intervals, Hermite–Simpson, explicit (the Moco paper,
    Figure 4; ``VERIFICATION.md`` (c)).
    """
    study = Study("suspended_mass_prediction")
    p = study.problem
    p.set_model(models.suspended_mass())
    p.set_time_bounds(0, (0.4, 0.8))
    p.set_state_info("/jointset/tx/tx/value", (-0.2, 0.2), -0.14, 0.14)
    p.set_state_info("/jointset/ty/ty/value", (-0.4, 0.0), -0.20, -0.15)
    p.set_state_info_pattern(r".*/speed", (-15, 15), 0, 0)
    p.set_state_info_pattern(r".*/activation", (0, 1), 0)
    p.set_control_info_pattern(r"/forceset/.*", (0, 1))
    p.add_goal(ControlGoal("effort", 1.0))
    p.add_goal(FinalTimeGoal("time", 0.01))
    return _settings(study, scheme, mode, num_mesh_intervals, tol)


def suspended_mass_tracking_study(prediction: Trajectory, tracking_weight: float = 10.0,
                                  num_mesh_intervals: int = 30, scheme: str = "hermite-simpson",
                                  mode: str = "explicit") -> Study:
    """Track a predicted motion of the suspended mass (the Moco paper's Figure 4 tracking; lesson 03).

    As :class:`moco_lab.tools.Track` (Moco's ``MocoTrack``) poses it: t fixed
    to the prediction's ``[0, t_f]``; goal ``"state_tracking"`` on the
    positions and speeds (weight ``tracking_weight``) and goal
    ``"control_effort"`` (weight 0.001, exponent 2); initial positions and
    activations as in the prediction, final values free; IPOPT's default
    tolerances.

    Parameters
    ----------
    prediction : Trajectory
        The motion to track (e.g. a solution of :func:`suspended_mass_prediction_study`).
    tracking_weight : float
    num_mesh_intervals : int
        Mesh intervals over the prediction's duration.
    scheme, mode : str

    Returns
    -------
    Study
    """
    n = whole_number(num_mesh_intervals, "suspended_mass_tracking_study: num_mesh_intervals")
    track = Track(models.suspended_mass(), prediction, states_global_tracking_weight=float(tracking_weight),
                  state_pattern=r".*(value|speed)$", allow_unused_references=True,
                  mesh_interval=prediction.final_time / max(n, 1), optim_tolerance=None,
                  scheme=scheme, mode=mode)
    study = track.initialize()
    study.name = "suspended_mass_tracking"
    p = study.problem
    p.set_state_info(_TX, (-0.2, 0.2), -0.14)  # final values free
    p.set_state_info(_TY, (-0.4, 0.0), -0.20)
    p.set_state_info_pattern(r".*/activation", (0, 1), 0)
    p.set_state_info_pattern(r".*/speed", (-15, 15))
    return study


def parabola_study(motion: str = "move", w_lambda: float = 0.0, x_final: float = 0.5,
                   duration: float = 1.0) -> Study:
    """A 1 kg bead on the parabola ``y = x²`` (``models.planar_point_mass("parabola")``; the Moco paper, "Kinematic constraints").

    ``motion="move"``: actuated (``force_x``, ``force_y`` in [-50, 50] N),
    from rest at ``x = -1`` to rest at ``x = x_final`` (``y = x²`` at both
    ends) in exactly ``duration`` s, goal ``ControlGoal("effort", 1)``, so
    ``J = ∫ (f_x² + f_y²) dt``. ``motion="release"``: ``VERIFICATION.md``
    d1, the unactuated bead released from rest at ``(-1, 1)``, t in [0, 0.8]
    (``x_final`` and ``duration`` unused), no goals. Coordinates in [-2, 2] (``y`` up to ``x_final² + 1``
    where that is more, so that the end point is inside its bounds), speeds in [-5, 5]. ``w_lambda > 0`` sets
    ``minimize_lagrange_multipliers`` with ``lagrange_multiplier_weight = w_lambda`` (adds ``w_λ ∫ λ² dt``).
    Scheme, mode and mesh are the solver's defaults (set them on ``study.solver``).
    """
    if motion not in PARABOLA_MOTIONS:
        raise ValueError(f"motion must be one of {list(PARABOLA_MOTIONS)}, got {motion!r}")
    w = float(w_lambda)
    if not (math.isfinite(w) and w >= 0):
        raise ValueError(f"w_lambda must be a finite number >= 0, got {w_lambda}")
    actuated = motion == "move"
    study = Study(f"parabola_{motion}")
    p = study.problem
    p.set_model(models.planar_point_mass("parabola", actuated=actuated))
    if actuated:
        xf = float(x_final)
        if not -2 < xf < 2:
            raise ValueError(f"parabola_study: x_final must be within (-2, 2) (the bounds of x), got {x_final}")
        p.set_time_bounds(0, float(duration))
        p.set_state_info(_TX, (-2, 2), -1.0, xf)
        p.set_state_info(_TY, (-2, max(2.0, xf * xf + 1.0)), 1.0, xf * xf)  # room above the end point's y = x²
        p.set_state_info(_VX, (-5, 5), 0, 0)
        p.set_state_info(_VY, (-5, 5), 0, 0)
        p.set_control_info(_FX, (-50, 50))
        p.set_control_info(_FY, (-50, 50))
        p.add_goal(ControlGoal("effort", 1.0))
    else:
        p.set_time_bounds(0, 0.8)
        p.set_state_info(_TX, (-2, 2), -1.0)
        p.set_state_info(_TY, (-2, 2), 1.0)
        p.set_state_info(_VX, (-5, 5), 0)
        p.set_state_info(_VY, (-5, 5), 0)
    study.solver.minimize_lagrange_multipliers = w > 0
    if w > 0:
        study.solver.lagrange_multiplier_weight = w
    return study


#: The studies compared with OpenSim Moco, by the benchmarks' problem names:
#: ``VERIFICATION_STUDIES[name](scheme=..., mode=..., num_mesh_intervals=..., tol=...)`` returns a fresh study.
VERIFICATION_STUDIES = {
    "linear[kirk]": functools.partial(linear_study, "kirk"),
    "linear[moco_test]": functools.partial(linear_study, "moco_test"),
    "sliding_mass": sliding_mass_study,
    "double_pendulum": double_pendulum_study,
}
