"""The Moco paper's squat-to-stand predictions (Dembia et al. 2020, Figure 6), posed as the paper's code poses them.

:func:`squat_to_stand_study` returns a :class:`~moco_lab.tools.study.Study` on
:func:`moco_lab.models.squat_to_stand`: rise from a deep squat (lumbar −22°, hip −98°,
knee −104°, ankle −30°) to upright (all 0), at rest at both ends, in a free final time
t_f ∈ [0.1, 2] s, minimizing squared controls (effort, weight 1) plus the final time
(weight 1), with each muscle's initial activation equal to its initial excitation.
Implicit multibody dynamics with the implicit accelerations and the implicit
tendon-force derivatives penalized (weights 0.001), Hermite–Simpson, 50 mesh intervals,
tolerances 1e-3. ``assisted=True`` adds the knee spring and optimizes its stiffness in
[0, 100] N·m/rad. The guess is the paper's: midpoint of the bounds, normalized tendon
forces 0.1, activations and excitations 0.05.
"""
from __future__ import annotations

import math
import re

from ..modeling.model import Model
from ..modeling.squat import squat_to_stand
from ..ocp.goals import ControlGoal, FinalTimeGoal, InitialActivationGoal
from ..tools.study import Study
from ..util.checks import finite_number, flag, one_of, whole_number

__all__ = ["squat_to_stand_study", "squat_to_stand_guess_values", "SQUAT_POSE", "SQUAT_SOLVER_OPTIONS"]

#: The squat's initial pose (rad) by coordinate path; each coordinate's lower bound is 1.5 times it.
SQUAT_POSE = {"/jointset/back/lumbar_extension": math.radians(-22), "/jointset/hip_r/hip_extension_r": math.radians(-98),
              "/jointset/knee_r/knee_extension_r": math.radians(-104),
              "/jointset/ankle_r/ankle_plantarflexion_r": math.radians(-30)}
_UPPER = {"/jointset/knee_r/knee_extension_r": 0.0}  # others: 0.5 rad


#: IPOPT options of the squat's studies: MUMPS permutes and scales the KKT system's columns before ordering it
#: (``mumps_permuting_scaling=7``, IPOPT's default, which the limited-memory solves use anyway) also with the exact
#: Hessian, where moco_lab's default turns that off (:data:`moco_lab.solve.optimizer.MUMPS_PERMUTING_SCALING_EXACT`,
#: measured better on the 2-D walker and the 3-D inverse). On the squat's KKT systems the scaling it then computes
#: once, from a weighted matching, leaves 513 delayed pivots instead of the 2,781 of its per-factorization iterative
#: scaling (ordering and estimated flops the same): the exact solve's KKT time 1.8 -> 1.2 s with the same 57
#: iterations to the same objective (docs/verification.md, 2026-11-30).
SQUAT_SOLVER_OPTIONS = {"mumps_permuting_scaling": 7}


def squat_to_stand_study(assisted: bool = False, num_mesh_intervals: int = 50, tol: float = 1e-3,
                         spring: float | None = None, linear_solver: str = "mumps") -> Study:
    """The paper's squat-to-stand study; ``assisted``: with the knee spring, its stiffness a parameter in [0, 100].

    Parameters
    ----------
    assisted : bool
        Add the knee spring (``/forceset/spring``) and optimize ``/forceset/spring/stiffness``
        (the parameter's guess is the middle of its bounds, 50 N·m/rad, the paper's model value).
    num_mesh_intervals : int
        The paper uses 50.
    tol : float
        Convergence and constraint tolerance (the paper: 1e-3).
    spring : float or None
        A knee spring of this fixed stiffness (N·m/rad), not optimized: for sweeps over the
        stiffness (``property./forceset/spring/stiffness``). Not with ``assisted``.
    linear_solver : {"mumps", "spral"}
        IPOPT's linear solver (``SolverSettings.optim_linear_solver``): ``"mumps"``, as Moco (IPOPT from the
        ``casadi`` wheel: about 3x faster here), or ``"spral"`` (Drake's own IPOPT).
    """
    who = "squat_to_stand_study"
    assisted = flag(assisted, f"{who}: assisted")
    tol = finite_number(tol, f"{who}: tol", 0, False)
    one_of(linear_solver, f"{who}: linear_solver", ("mumps", "spral"))
    if assisted and spring is not None:
        raise ValueError("squat_to_stand_study: give either assisted=True (stiffness optimized) or spring=k (fixed)")
    if spring is not None:
        spring = finite_number(spring, "squat_to_stand_study: spring", 0, what="a finite stiffness >= 0 (N·m/rad)")
    model = squat_to_stand(lumbar=True, knee_spring=50.0 if assisted else spring)
    study = Study("squat_to_stand_assisted" if assisted else "squat_to_stand")
    p = study.problem
    p.set_model(model)
    p.set_time_bounds(0.0, (0.1, 2.0))
    for path, q0 in SQUAT_POSE.items():
        p.set_state_info(f"{path}/value", (1.5 * q0, _UPPER.get(path, 0.5)), q0, 0.0)
    p.set_state_info_pattern(r"/jointset/.*/speed", None, 0.0, 0.0)
    p.add_goal(ControlGoal("effort"))
    p.add_goal(InitialActivationGoal("init_activation"))
    p.add_goal(FinalTimeGoal("time"))
    if assisted:
        p.add_parameter("stiffness", "/forceset/spring/stiffness", (0.0, 100.0))
    s = study.solver
    s.transcription_scheme = "hermite-simpson"
    s.multibody_dynamics_mode = "implicit"
    s.minimize_implicit_multibody_accelerations = True
    s.implicit_multibody_accelerations_weight = 0.001
    s.minimize_implicit_auxiliary_derivatives = True
    s.implicit_auxiliary_derivatives_weight = 0.001
    s.num_mesh_intervals = whole_number(num_mesh_intervals, "squat_to_stand_study: num_mesh_intervals")
    s.optim_convergence_tolerance = tol
    s.optim_constraint_tolerance = tol
    s.guess_values = squat_to_stand_guess_values(model)
    s.optim_linear_solver = linear_solver
    s.optim_solver_options = dict(SQUAT_SOLVER_OPTIONS)
    return study


def squat_to_stand_guess_values(model: Model) -> dict[str, float]:
    """The paper's guess (``SolverSettings.guess_values``): normalized tendon forces 0.1, activations and
    excitations 0.05; everything else (time, coordinates, speeds) the midpoint of its bounds, as Moco's guess."""
    values = {}
    for m in model.muscles:
        values[re.escape(f"{m.path}/activation")] = 0.05
        if f"{m.path}/normalized_tendon_force" in model.state_names():
            values[re.escape(f"{m.path}/normalized_tendon_force")] = 0.1
        values[re.escape(m.path)] = 0.05
    return values
