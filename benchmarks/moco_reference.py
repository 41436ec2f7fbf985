"""Reference solutions computed with the real OpenSim Moco 4.6.

This module builds the verification problems of
``VERIFICATION.md`` with ``opensim``
(``import opensim as osim``) and solves them with ``MocoCasADiSolver`` so
that moco_lab's own transcriptions can be compared against Moco, number for
number and second for second.

Every ``solve_*`` function returns a plain ``dict`` (see :func:`_solve_study`)
and leaves nothing behind in the current working directory: each solve runs
inside a fresh temporary directory, with Moco's verbosity and IPOPT's print
level set to 0 and the remaining console output (IPOPT banner, CasADi
timings, Moco's objective breakdown) captured into the result's ``log``.

Problems
--------
(a) :func:`solve_linear`
    Kirk's linear minimum-effort problem, variants ``"kirk"`` (viscosity +1,
    ``udot = -u + x``) and ``"moco_test"`` (viscosity -1, ``udot = u + x``).
(b) :func:`solve_sliding_mass`
    Minimum-time point-to-point motion of a sliding mass.
(c) :func:`solve_suspended_mass_prediction`
    Minimum effort + 0.01 t_f motion of a point mass suspended by three
    DeGrooteFregly2016 muscles (mocopaper's verification problem).
extra :func:`solve_double_pendulum`
    Not one of the four documented problems: minimum-effort swing-up of
    ``osim.ModelFactory.createDoublePendulum()``.

Double pendulum geometry (``ModelFactory.createDoublePendulum()``, Moco 4.6)
----------------------------------------------------------------------------
Read from the model's own XML (``model.printToXML``) and checked with
Simbody (positions, mass matrix and accelerations, see below).

* Model name ``double_pendulum``. Gravity ``(0, -9.80665, 0)`` m/s^2 in
  ground (the OpenSim default; ground +y is "up").
* Bodies (in ``/bodyset``):

  - ``b0``: mass 1 kg, mass center at the body origin ``(0, 0, 0)``,
    inertia about the mass center ``[Ixx Iyy Izz Ixy Ixz Iyz] =
    [1 1 1 0 0 0]`` kg m^2 (so a point mass plus a rotational inertia of
    1 kg m^2 about its z axis).
  - ``b1``: identical to ``b0`` (mass 1 kg, COM at origin, inertia
    ``diag(1, 1, 1)`` about the COM).

  Each body also owns a visual-only ``PhysicalOffsetFrame``
  ``b<i>center`` at ``(-0.5, 0, 0)`` with an ``Ellipsoid`` of radii
  ``(0.5, 0.1, 0.1)``; it has no mass and no effect on dynamics.
* Joints (in ``/jointset``), both ``PinJoint`` (rotation about the common
  z axis of the parent and child joint frames; no frame rotations anywhere):

  - ``j0``: parent frame ``ground_offset`` = ground frame with translation
    ``(0, 0, 0)``; child frame ``b0_offset`` = ``b0`` frame translated by
    ``(-1, 0, 0)`` (expressed in ``b0``). Hence the pivot sits at the ground
    origin and the origin/COM of ``b0`` lies 1 m from the pivot along
    ``+x`` of ``b0``. Coordinate ``q0`` (path ``/jointset/j0/q0``) is the
    angle of ``b0`` relative to ground about +z (right-handed,
    counter-clockwise seen from +z).
  - ``j1``: parent frame ``b0_offset`` = ``b0`` frame with translation
    ``(0, 0, 0)`` (i.e. the elbow is AT the origin/COM of ``b0``); child frame
    ``b1_offset`` = ``b1`` frame translated by ``(-1, 0, 0)``. Hence the
    origin/COM of ``b1`` lies 1 m from the elbow along ``+x`` of ``b1``.
    Coordinate ``q1`` (path ``/jointset/j1/q1``) is the angle of ``b1``
    relative to ``b0`` about +z.

  Both coordinates: rotational, default value 0, range ``[-10, 10]``,
  not clamped, not locked.
* Actuators: two ``CoordinateActuator`` added with ``addComponent`` (NOT in
  the force set), so their paths are ``/tau0`` (on ``q0``) and ``/tau1``
  (on ``q1``); optimal force 1 (torque = control, N m); min/max control
  ``-inf``/``+inf`` (the problem below sets the bounds). ``/forceset`` is
  empty; there are no other forces, constraints or contact.
* Markers ``marker0``/``marker1`` at the origins of ``b0``/``b1``
  (irrelevant to the dynamics).
* Meaning of q = 0: both links point horizontally along ground ``+x``
  (perpendicular to gravity): ``b0`` COM at ``(1, 0, 0)``, ``b1`` COM at
  ``(2, 0, 0)``. ``q0 = pi/2, q1 = 0``: both links point straight UP
  (``b0`` at ``(0, 1, 0)``, ``b1`` at ``(0, 2, 0)``), i.e. the inverted
  position. ``q0 = 0, q1 = pi/2``: ``b1`` at ``(1, 1, 0)``.
* Resulting planar equations of motion (checked against Simbody at several
  configurations), with ``g = 9.80665``, ``c1 = cos q1``:

  ``M(q) = [[5 + 2 c1, 2 + c1], [2 + c1, 2]]`` (``[[7, 3], [3, 2]]`` at
  q = 0), gravity generalized forces
  ``tau_g = [-g (2 cos q0 + cos(q0 + q1)), -g cos(q0 + q1)]``, so at rest at
  ``q = (0, 0)`` with zero controls ``qddot = (-5.88399, 3.92266)`` rad/s^2;
  at ``q = (0.3, 0.7)``: ``qddot = (-6.17210, 5.88317)``.

Notes
-----
Solver settings not listed in each function are Moco's defaults
(IPOPT tol 1e-8, constr_viol_tol 1e-4, limited-memory Hessian, central
finite differences, initial guess from bounds). ``solve_time`` is the wall
time of ``study.solve()`` alone (it includes Moco's own problem setup, e.g.
building the CasADi functions), measured with :func:`time.perf_counter`.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
import time
from typing import Iterator, Optional

import numpy as np

try:
    import opensim as osim
except ImportError:  # pragma: no cover - exercised only without opensim
    osim = None

__all__ = [
    "LINEAR_J_STAR",
    "build_linear_model",
    "build_sliding_mass_model",
    "build_double_pendulum_model",
    "solve_linear",
    "solve_sliding_mass",
    "solve_double_pendulum",
    "SUSPENDED_MASS_MUSCLES",
    "build_suspended_mass_model",
    "solve_suspended_mass_prediction",
    "solve_inverse",
    "solve_suspended_mass_inverse",
    "in_fresh_process",
]

#: Analytic optimal objective of problem (a), per variant.
LINEAR_J_STAR = {"kirk": 16.7507233968, "moco_test": 12.7507233968}

_VISCOSITY = {"kirk": 1.0, "moco_test": -1.0}
#: Moco 4.6's transcription schemes: the paper's two and the pseudospectral ``legendre-gauss(-radau)-k``, k = 1..9.
_SCHEMES = ("trapezoidal", "hermite-simpson") + tuple(f"legendre-gauss-{k}" for k in range(1, 10)) + tuple(
    f"legendre-gauss-radau-{k}" for k in range(1, 10))
_MODES = ("explicit", "implicit")


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def _require_opensim() -> None:
    """Raise a clear error when the ``opensim`` package is unavailable."""
    if osim is None:
        raise ImportError(
            "benchmarks.moco_reference needs the 'opensim' package "
            "(pip install opensim)."
        )


def _check_options(scheme: str, mode: str, N: int) -> None:
    """Validate the transcription options shared by all problems.

    Parameters
    ----------
    scheme : str
        ``"trapezoidal"`` or ``"hermite-simpson"``.
    mode : str
        ``"explicit"`` or ``"implicit"``.
    N : int
        Number of mesh intervals (positive).
    """
    if scheme not in _SCHEMES:
        raise ValueError(f"scheme must be one of {_SCHEMES}, got {scheme!r}")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    if int(N) != N or N < 1:
        raise ValueError(f"N must be a positive integer, got {N!r}")


@contextlib.contextmanager
def _quiet_scratch_dir() -> Iterator[dict]:
    """Run a block in a temporary directory with console output captured.

    Moco may write files (e.g. ``MocoStudy_solution.sto`` or a failed
    trajectory) into the working directory; running inside a throw-away
    directory guarantees nothing is left in the caller's directory. IPOPT's
    banner and CasADi's timing table are printed by C++ code straight to
    file descriptor 1, bypassing both Python and OpenSim's logger, so the
    descriptor itself is redirected to a file for the duration of the block
    (OpenSim's logger, which also writes there, is captured the same way and
    its level is left untouched).

    Yields
    ------
    dict
        ``{"log": str}``; the captured output is stored under ``"log"`` when
        the block exits.
    """
    captured = {"log": ""}
    old_cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="moco_reference_") as tmp:
        log_path = os.path.join(tmp, "console.log")
        sys.stdout.flush()
        saved_fd = os.dup(1)
        try:
            with open(log_path, "w+b") as log_file:
                os.dup2(log_file.fileno(), 1)
                os.chdir(tmp)
                try:
                    yield captured
                finally:
                    sys.stdout.flush()
                    os.dup2(saved_fd, 1)
                    os.chdir(old_cwd)
                    log_file.seek(0)
                    captured["log"] = log_file.read().decode(
                        "utf-8", errors="replace")
        finally:
            os.close(saved_fd)


def _configure_solver(study, scheme: str, mode: str, N: int,
                      tol: Optional[float]):
    """Create and configure the study's ``MocoCasADiSolver``.

    Parameters
    ----------
    study : opensim.MocoStudy
        Study whose solver is initialised.
    scheme, mode : str
        Transcription scheme and multibody dynamics mode.
    N : int
        Number of mesh intervals.
    tol : float or None
        If given, both IPOPT's convergence tolerance and constraint
        tolerance; otherwise Moco's defaults are kept.

    Returns
    -------
    opensim.MocoCasADiSolver
        The configured solver.
    """
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(int(N))
    solver.set_transcription_scheme(scheme)
    solver.set_multibody_dynamics_mode(mode)
    solver.set_optim_solver("ipopt")
    if tol is not None:
        solver.set_optim_convergence_tolerance(float(tol))
        solver.set_optim_constraint_tolerance(float(tol))
    # Silence Moco's and IPOPT's console output (does not change the NLP).
    solver.set_verbosity(0)
    solver.set_optim_ipopt_print_level(0)
    return solver


def _columns(names, getter) -> dict:
    """Map each name to a 1-D numpy copy of ``getter(name)``."""
    return {name: np.array(getter(name), dtype=float).ravel()
            for name in names}


def _solve_study(study) -> dict:
    """Solve a configured study and convert the solution to plain Python.

    Parameters
    ----------
    study : opensim.MocoStudy
        Fully configured study (problem and solver).

    Returns
    -------
    dict
        ``success`` (bool), ``status`` (str, IPOPT's return status),
        ``objective`` (float), ``solve_time`` (s, wall time of
        ``study.solve()``), ``nit`` (int, IPOPT iterations, or None),
        ``time`` (ndarray of the solution grid, mesh and interior points),
        ``states``, ``controls``, ``multipliers`` and ``derivatives``
        (``{path: ndarray}``; ``derivatives`` holds the implicit-mode
        accelerations, empty in explicit mode), ``final_time`` (float),
        ``moco_solver_duration`` (s, Moco's own timer) and ``log`` (str,
        the console output of Moco, CasADi and IPOPT during the solve).
    """
    with _quiet_scratch_dir() as console:
        start = time.perf_counter()
        solution = study.solve()
        solve_time = time.perf_counter() - start

    success = bool(solution.success())
    status = str(solution.getStatus())
    if solution.isSealed():
        # A failed solution is sealed; unseal it to read the last iterate.
        solution.unseal()

    try:
        nit = int(solution.getNumIterations())
    except (AttributeError, RuntimeError):  # pragma: no cover
        nit = None

    t = np.array(solution.getTimeMat(), dtype=float).ravel()
    return {
        "success": success,
        "status": status,
        "objective": float(solution.getObjective()),
        "solve_time": solve_time,
        "nit": nit,
        "time": t,
        "states": _columns(solution.getStateNames(), solution.getStateMat),
        "controls": _columns(solution.getControlNames(),
                             solution.getControlMat),
        "multipliers": _columns(solution.getMultiplierNames(),
                                solution.getMultiplierMat),
        "derivatives": _columns(solution.getDerivativeNames(),
                                solution.getDerivativeMat),
        "final_time": float(solution.getFinalTime()),
        "parameters": {str(n): float(solution.getParameter(n)) for n in solution.getParameterNames()},
        "moco_solver_duration": float(solution.getSolverDuration()),
        "log": console["log"],
    }


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------
def build_linear_model(variant: str = "kirk"):
    """Build the model of problem (a), the linear minimum-effort OCP.

    Parameters
    ----------
    variant : {"kirk", "moco_test"}
        ``"kirk"``: viscosity +1 (generalized force -u, ``udot = -u + x``);
        ``"moco_test"``: viscosity -1 (force +u, ``udot = u + x``), as in
        ``testMocoAnalytic.cpp``.

    Returns
    -------
    opensim.Model
        Body ``b`` (1 kg, zero inertia, COM at origin) on ``SliderJoint j``
        (coordinate ``coord``, along ground x), a ``SpringGeneralizedForce``
        on ``coord`` (stiffness 0, rest length 0, viscosity +-1) and a
        ``CoordinateActuator`` ``/forceset/coordinateactuator`` (optimal
        force 1).
    """
    _require_opensim()
    if variant not in _VISCOSITY:
        raise ValueError(
            f"variant must be one of {tuple(_VISCOSITY)}, got {variant!r}")
    model = osim.Model()
    model.setName(f"linear_{variant}")
    body = osim.Body("b", 1.0, osim.Vec3(0), osim.Inertia(0))
    model.addBody(body)
    joint = osim.SliderJoint("j", model.getGround(), body)
    coord = joint.updCoordinate()
    coord.setName("coord")
    model.addJoint(joint)

    spring = osim.SpringGeneralizedForce("coord")
    spring.setName("spring")
    spring.setStiffness(0.0)
    spring.setRestLength(0.0)
    spring.setViscosity(_VISCOSITY[variant])
    model.addForce(spring)

    actuator = osim.CoordinateActuator("coord")
    actuator.setName("coordinateactuator")
    actuator.setOptimalForce(1.0)
    model.addForce(actuator)

    model.finalizeConnections()
    return model


def build_sliding_mass_model(mass: float = 2.0):
    """Build the model of problem (b), the sliding mass.

    Parameters
    ----------
    mass : float, optional
        Mass of ``body`` in kg (2 in Moco's example).

    Returns
    -------
    opensim.Model
        Gravity 0; body ``body`` (zero inertia) on ``SliderJoint slider``
        (coordinate ``/slider/position``, along ground x, joint added with
        ``addComponent``); ``CoordinateActuator /actuator`` with optimal
        force 1.
    """
    _require_opensim()
    model = osim.Model()
    model.setName("sliding_mass")
    model.set_gravity(osim.Vec3(0, 0, 0))
    body = osim.Body("body", float(mass), osim.Vec3(0), osim.Inertia(0))
    model.addComponent(body)
    joint = osim.SliderJoint("slider", model.getGround(), body)
    coord = joint.updCoordinate()
    coord.setName("position")
    model.addComponent(joint)

    actuator = osim.CoordinateActuator()
    actuator.setCoordinate(coord)
    actuator.setName("actuator")
    actuator.setOptimalForce(1.0)
    model.addComponent(actuator)

    model.finalizeConnections()
    return model


def build_double_pendulum_model():
    """Return OpenSim's ``ModelFactory.createDoublePendulum()`` model.

    Returns
    -------
    opensim.Model
        The double pendulum whose exact geometry is given in this module's
        docstring (coordinates ``/jointset/j0/q0``, ``/jointset/j1/q1``,
        actuators ``/tau0``, ``/tau1``).
    """
    _require_opensim()
    model = osim.ModelFactory.createDoublePendulum()
    model.finalizeConnections()
    return model


# --------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------
def solve_linear(*, variant: str = "kirk", scheme: str = "hermite-simpson",
                 mode: str = "explicit", N: int = 50,
                 tol: Optional[float] = None) -> dict:
    """Solve problem (a), Kirk's linear minimum-effort OCP, with Moco.

    t in [0, 2] (fixed); q in [-10, 10], q(0) = 0, q(2) = 5; u in [-10, 10],
    u(0) = 0, u(2) = 2; control x in [-50, 50]; goal
    ``MocoControlGoal("effort", 0.5)`` so J = 0.5 * int x^2 dt
    (J* = :data:`LINEAR_J_STAR` ``[variant]``).

    Parameters
    ----------
    variant : {"kirk", "moco_test"}, optional
        Sign of the viscous term, see :func:`build_linear_model`.
    scheme : str, optional
        Transcription scheme (one of Moco's, ``_SCHEMES``).
    mode : {"explicit", "implicit"}, optional
        Multibody dynamics mode.
    N : int, optional
        Number of mesh intervals.
    tol : float, optional
        IPOPT convergence and constraint tolerance (default: Moco's).

    Returns
    -------
    dict
        See :func:`_solve_study`; states ``/jointset/j/coord/value`` and
        ``/jointset/j/coord/speed``, control ``/forceset/coordinateactuator``.
        Also ``j_star``, the analytic optimum of the variant.
    """
    _require_opensim()
    _check_options(scheme, mode, N)
    study = osim.MocoStudy()
    study.setName(f"linear_{variant}")
    problem = study.updProblem()
    problem.setModel(build_linear_model(variant))
    problem.setTimeBounds(0, 2)
    problem.setStateInfo("/jointset/j/coord/value", [-10, 10], 0, 5)
    problem.setStateInfo("/jointset/j/coord/speed", [-10, 10], 0, 2)
    problem.setControlInfo("/forceset/coordinateactuator", [-50, 50])
    problem.addGoal(osim.MocoControlGoal("effort", 0.5))
    _configure_solver(study, scheme, mode, N, tol)
    result = _solve_study(study)
    result["j_star"] = LINEAR_J_STAR[variant]
    return result


def solve_sliding_mass(*, scheme: str = "hermite-simpson",
                       mode: str = "explicit", N: int = 50,
                       mass: float = 2.0,
                       tol: Optional[float] = None) -> dict:
    """Solve problem (b), the minimum-time sliding mass, with Moco.

    t0 = 0, t_f in [0, 5]; position in [-5, 5], 0 -> 1; speed in [-50, 50],
    0 at both ends; control in [-50, 50]; goal ``MocoFinalTimeGoal``
    (weight 1). Analytic optimum: t_f* = 2 sqrt(mass * 1 / 50) (0.4 s for
    2 kg), bang-bang control +50 then -50.

    Parameters
    ----------
    scheme : str, optional
        Transcription scheme (one of Moco's, ``_SCHEMES``).
    mode : {"explicit", "implicit"}, optional
        Multibody dynamics mode.
    N : int, optional
        Number of mesh intervals.
    mass : float, optional
        Sliding mass in kg.
    tol : float, optional
        IPOPT convergence and constraint tolerance (default: Moco's).

    Returns
    -------
    dict
        See :func:`_solve_study`; states ``/slider/position/value`` and
        ``/slider/position/speed``, control ``/actuator``. Also
        ``tf_star``, the analytic minimum time.
    """
    _require_opensim()
    _check_options(scheme, mode, N)
    study = osim.MocoStudy()
    study.setName("sliding_mass")
    problem = study.updProblem()
    problem.setModel(build_sliding_mass_model(mass))
    problem.setTimeBounds(osim.MocoInitialBounds(0.0),
                          osim.MocoFinalBounds(0.0, 5.0))
    problem.setStateInfo("/slider/position/value", [-5, 5], 0, 1)
    problem.setStateInfo("/slider/position/speed", [-50, 50], 0, 0)
    problem.setControlInfo("/actuator", [-50, 50])
    problem.addGoal(osim.MocoFinalTimeGoal("time", 1.0))
    _configure_solver(study, scheme, mode, N, tol)
    result = _solve_study(study)
    result["tf_star"] = 2.0 * math.sqrt(float(mass) * 1.0 / 50.0)
    return result


def solve_double_pendulum(*, scheme: str = "hermite-simpson",
                          mode: str = "explicit", N: int = 50,
                          tol: Optional[float] = None) -> dict:
    """Solve the minimum-effort double-pendulum swing-up with Moco.

    Model: ``osim.ModelFactory.createDoublePendulum()`` (geometry in the
    module docstring). t in [0, 1] fixed; q0 in [-10, 10], 0 -> pi/2;
    q1 in [-10, 10], 0 -> 0; both speeds in [-50, 50], 0 at both ends;
    controls ``/tau0``, ``/tau1`` in [-100, 100]; goal
    ``MocoControlGoal("effort", 1)`` with exponent 2, J = int (tau0^2 +
    tau1^2) dt.

    Parameters
    ----------
    scheme : str, optional
        Transcription scheme (one of Moco's, ``_SCHEMES``).
    mode : {"explicit", "implicit"}, optional
        Multibody dynamics mode.
    N : int, optional
        Number of mesh intervals.
    tol : float, optional
        IPOPT convergence and constraint tolerance (default: Moco's).

    Returns
    -------
    dict
        See :func:`_solve_study`; states ``/jointset/j0/q0/value``,
        ``/jointset/j0/q0/speed``, ``/jointset/j1/q1/value``,
        ``/jointset/j1/q1/speed``; controls ``/tau0``, ``/tau1``.
    """
    _require_opensim()
    _check_options(scheme, mode, N)
    study = osim.MocoStudy()
    study.setName("double_pendulum")
    problem = double_pendulum_problem(study)
    effort = osim.MocoControlGoal("effort", 1.0)
    effort.setExponent(2)
    problem.addGoal(effort)
    _configure_solver(study, scheme, mode, N, tol)
    return _solve_study(study)


def double_pendulum_problem(study):
    """The swing-up's problem in ``study`` (an ``opensim.MocoStudy``) without goals: the model, t in [0, 1], the
    states' and controls' bounds of :func:`solve_double_pendulum`. Returns the ``MocoProblem``."""
    _require_opensim()
    problem = study.updProblem()
    problem.setModel(build_double_pendulum_model())
    problem.setTimeBounds(0, 1)
    problem.setStateInfo("/jointset/j0/q0/value", [-10, 10], 0, math.pi / 2)
    problem.setStateInfo("/jointset/j0/q0/speed", [-50, 50], 0, 0)
    problem.setStateInfo("/jointset/j1/q1/value", [-10, 10], 0, 0)
    problem.setStateInfo("/jointset/j1/q1/speed", [-50, 50], 0, 0)
    problem.setControlInfo("/tau0", [-100, 100])
    problem.setControlInfo("/tau1", [-100, 100])
    return problem


# --------------------------------------------------------------------------
# Problem (c): point mass suspended by three DeGrooteFregly2016 muscles
# --------------------------------------------------------------------------
#: Muscles of problem (c): name -> (ground origin x, F_max [N], l_opt [m],
#: tendon slack length [m]); every origin has y = z = 0.
SUSPENDED_MASS_MUSCLES = {
    "left": (-0.2, 10.0, 0.20, 0.10),
    "middle": (0.0, 10.0, 0.09, 0.10),
    "right": (0.2, 20.0, 0.21, 0.09),
}


def build_suspended_mass_model():
    """Build the model of problem (c), the point mass suspended by three muscles.

    ``osim.ModelFactory.createPlanarPointMass()`` (massless body ``intermed``
    on ``SliderJoint tx`` along ground x; 1 kg body ``body`` with zero inertia
    on ``SliderJoint ty`` along ground y; gravity ``(0, -9.80665, 0)``) with
    its two ``CoordinateActuator`` s removed; coordinate ranges tx
    ``[-0.2, 0.2]``, ty ``[-0.4, 0]``; three ``DeGrooteFregly2016Muscle`` s
    ``left``, ``middle``, ``right`` (see :data:`SUSPENDED_MASS_MUSCLES`),
    each a straight 2-point path from its ground origin to the origin of
    ``body``, pennation 0, rigid tendon (``ignore_tendon_compliance``),
    activation dynamics on, every other property at its default (activation
    and deactivation time constants 0.015 / 0.060 s, ...), as in mocopaper's
    ``suspended_mass.py``.

    Returns
    -------
    opensim.Model
        States ``/jointset/tx/tx/{value,speed}``,
        ``/jointset/ty/ty/{value,speed}``, ``/forceset/<name>/activation``;
        controls ``/forceset/<name>`` (excitations).
    """
    _require_opensim()
    model = osim.ModelFactory.createPlanarPointMass()
    model.setName("suspended_mass")
    forces = model.updForceSet()
    # Remove the factory's two CoordinateActuators (force_x, force_y).
    for i in reversed(range(forces.getSize())):
        forces.remove(i)
    # Set the ranges on the joints' own coordinates: edits made through
    # updCoordinateSet() are lost when the model re-finalizes (the set is
    # rebuilt from the joints).
    for joint_name, (low, high) in (("tx", (-0.2, 0.2)), ("ty", (-0.4, 0.0))):
        coord = model.updJointSet().get(joint_name).upd_coordinates(0)
        coord.setRangeMin(low)
        coord.setRangeMax(high)

    body = model.getBodySet().get("body")
    for name, (x, fmax, lopt, lslack) in SUSPENDED_MASS_MUSCLES.items():
        muscle = osim.DeGrooteFregly2016Muscle()
        muscle.setName(name)
        muscle.set_max_isometric_force(fmax)
        muscle.set_optimal_fiber_length(lopt)
        muscle.set_tendon_slack_length(lslack)
        muscle.set_pennation_angle_at_optimal(0.0)
        muscle.set_ignore_tendon_compliance(True)
        muscle.set_ignore_activation_dynamics(False)
        muscle.addNewPathPoint("origin", model.getGround(),
                               osim.Vec3(x, 0, 0))
        muscle.addNewPathPoint("insertion", body, osim.Vec3(0, 0, 0))
        model.addForce(muscle)

    model.finalizeConnections()
    return model


def solve_suspended_mass_prediction(scheme: str = "hermite-simpson",
                                    mode: str = "explicit", N: int = 100,
                                    tol: Optional[float] = None) -> dict:
    """Solve problem (c), the suspended-mass prediction, with Moco.

    t0 = 0, t_f in [0.4, 0.8]; tx in [-0.2, 0.2], -0.14 -> +0.14; ty in
    [-0.4, 0], -0.20 -> -0.15; speeds in [-15, 15], 0 at both ends;
    activations in [0, 1], initial 0; excitations in [0, 1]; goals
    ``MocoControlGoal("effort", 1)`` (exponent 2, J_e = int sum e^2 dt) and
    ``MocoFinalTimeGoal("time", 0.01)``. Defaults = what mocopaper ran
    (Moco's defaults: N = 100, Hermite-Simpson, explicit).

    Parameters
    ----------
    scheme : str, optional
        Transcription scheme (one of Moco's, ``_SCHEMES``).
    mode : {"explicit", "implicit"}, optional
        Multibody dynamics mode.
    N : int, optional
        Number of mesh intervals.
    tol : float, optional
        IPOPT convergence and constraint tolerance (default: Moco's).

    Returns
    -------
    dict
        See :func:`_solve_study`; states ``/jointset/tx/tx/value``,
        ``/jointset/tx/tx/speed``, ``/jointset/ty/ty/value``,
        ``/jointset/ty/ty/speed``, ``/forceset/<name>/activation``; controls
        ``/forceset/<name>`` for ``name`` in ``left``, ``middle``, ``right``.

    Notes
    -----
    OpenSim 4.6 quirk (found while cross-checking the muscle model): all
    ``DeGrooteFregly2016Muscle`` s in one process share the activation /
    deactivation time constants of the first one evaluated. All three
    muscles here use the defaults (0.015 / 0.060 s), so in a fresh process it has
    no effect; after another model's muscles were evaluated in the same process
    (a test worker that ran another OpenSim test first) Moco solves another
    problem. Cross-checks therefore call it through :func:`in_fresh_process`.
    """
    _require_opensim()
    _check_options(scheme, mode, N)
    study = osim.MocoStudy()
    study.setName("suspended_mass_prediction")
    problem = study.updProblem()
    problem.setModel(build_suspended_mass_model())
    problem.setTimeBounds(osim.MocoInitialBounds(0.0),
                          osim.MocoFinalBounds(0.4, 0.8))
    problem.setStateInfo("/jointset/tx/tx/value", [-0.2, 0.2], -0.14, 0.14)
    problem.setStateInfo("/jointset/ty/ty/value", [-0.4, 0.0], -0.20, -0.15)
    problem.setStateInfo("/jointset/tx/tx/speed", [-15, 15], 0, 0)
    problem.setStateInfo("/jointset/ty/ty/speed", [-15, 15], 0, 0)
    for name in SUSPENDED_MASS_MUSCLES:
        problem.setStateInfo(f"/forceset/{name}/activation", [0, 1], 0)
        problem.setControlInfo(f"/forceset/{name}", [0, 1])
    effort = osim.MocoControlGoal("effort", 1.0)
    effort.setExponent(2)
    problem.addGoal(effort)
    problem.addGoal(osim.MocoFinalTimeGoal("time", 0.01))
    _configure_solver(study, scheme, mode, N, tol)
    return _solve_study(study)


def build_parabola_model(actuated: bool = False):
    """Moco's parabola example model (VERIFICATION.md d1).

    ``ModelFactory.createPlanarPointMass()`` (massless ``intermed`` on ``tx``, 1 kg ``body`` on
    ``ty``, gravity −9.80665 y) with a ``CoordinateCouplerConstraint`` ty = tx²
    (``PolynomialFunction([1, 0, 0])``; Moco represents it as 0 = tx² − ty, so its multiplier is
    the negative of moco_lab's, whose φ is ty − tx²). The factory's two ``CoordinateActuator`` s
    ``force_x``/``force_y`` (optimal force 1) are kept when ``actuated``.
    """
    _require_opensim()
    model = osim.ModelFactory.createPlanarPointMass()
    model.setName("parabola")
    if not actuated:
        forces = model.updForceSet()
        for i in reversed(range(forces.getSize())):
            forces.remove(i)
    constraint = osim.CoordinateCouplerConstraint()
    constraint.setName("parabola")
    constraint.setIndependentCoordinateNames(osim.ArrayStr("tx", 1))
    constraint.setDependentCoordinateName("ty")
    coefficients = osim.Vector(3, 0.0)
    coefficients.set(0, 1.0)
    constraint.setFunction(osim.PolynomialFunction(coefficients))
    model.addConstraint(constraint)
    model.finalizeConnections()
    return model


def solve_parabola(actuated: bool = False, *, mode: str = "explicit", N: int = 50,
                   tol: Optional[float] = None, scheme: str = "hermite-simpson",
                   method: str = "Posa2016") -> dict:
    """Solve the parabola problem with Moco (by default Hermite–Simpson with the Posa2016 method;
    ``method="Bordalba2023"`` works with both schemes).

    ``actuated=False``: d1, the bead released from rest at (−1, 1) over [0, 0.8] s, speeds in
    [−5, 5] and 0 at t = 0, no goals. ``actuated=True``: from x = −1 to x = 0.5 on the curve in 1 s,
    at rest at both ends, speeds in [−10, 10], forces in [−100, 100], ``MocoControlGoal`` (as
    ``tests/test_kinematic_constraints.py::actuated_study``).

    Returns
    -------
    dict
        See :func:`_solve_study`; the multiplier is ``multipliers["lambda_cid2_p0"]`` (Moco's name).
    """
    _require_opensim()
    _check_options(scheme, mode, N)
    study = osim.MocoStudy()
    problem = study.updProblem()
    problem.setModel(build_parabola_model(actuated))
    if actuated:
        problem.setTimeBounds(0.0, 1.0)
        problem.setStateInfo("/jointset/tx/tx/value", [-2, 2], -1, 0.5)
        problem.setStateInfo("/jointset/ty/ty/value", [-2, 2], 1, 0.25)
        problem.setStateInfo("/jointset/tx/tx/speed", [-10, 10], 0, 0)
        problem.setStateInfo("/jointset/ty/ty/speed", [-10, 10], 0, 0)
        problem.setControlInfo("/forceset/force_x", [-100, 100])
        problem.setControlInfo("/forceset/force_y", [-100, 100])
        problem.addGoal(osim.MocoControlGoal("effort"))
    else:
        problem.setTimeBounds(0.0, 0.8)
        problem.setStateInfo("/jointset/tx/tx/value", [-2, 2], -1)
        problem.setStateInfo("/jointset/ty/ty/value", [-2, 2], 1)
        problem.setStateInfo("/jointset/tx/tx/speed", [-5, 5], 0)
        problem.setStateInfo("/jointset/ty/ty/speed", [-5, 5], 0)
    solver = _configure_solver(study, scheme, mode, N, tol)
    solver.set_kinematic_constraint_method(method)
    return _solve_study(study)


def solve_inverse(osim_model, time, columns: dict, *, mesh_interval: float = 0.02,
                  scheme: str = "hermite-simpson", tol: Optional[float] = 1e-3) -> dict:
    """Run Moco's ``MocoInverse`` on prescribed coordinate values.

    Parameters
    ----------
    osim_model : opensim.Model
        E.g. :func:`build_suspended_mass_model` (used as is, no model operators).
    time : array (n,)
    columns : dict of coordinate value path -> array (n,), in metres / radians.
    mesh_interval : float
        ``MocoInverse``'s mesh interval (s).
    scheme : {"trapezoidal", "hermite-simpson"}
        Set on the study's solver after ``MocoInverse.initialize()``.
    tol : float or None
        ``convergence_tolerance`` and ``constraint_tolerance`` (MocoInverse default 1e-3).

    Returns
    -------
    dict
        See :func:`_solve_study` (the solution has the muscle states and
        controls; the kinematics are not inserted), plus ``num_mesh_intervals``.
    """
    _require_opensim()
    table = osim.TimeSeriesTable()
    names = list(columns)
    table.setColumnLabels(names)
    table.addTableMetaDataString("inDegrees", "no")
    for k, t in enumerate(np.asarray(time, float)):
        table.appendRow(float(t), osim.RowVector([float(columns[n][k]) for n in names]))
    inverse = osim.MocoInverse()
    inverse.setModel(osim.ModelProcessor(osim_model))
    inverse.setKinematics(osim.TableProcessor(table))
    inverse.set_initial_time(float(time[0]))
    inverse.set_final_time(float(time[-1]))
    inverse.set_mesh_interval(float(mesh_interval))
    if tol is not None:
        inverse.set_convergence_tolerance(float(tol))
        inverse.set_constraint_tolerance(float(tol))
    with _quiet_scratch_dir():
        study = inverse.initialize()
    solver = osim.MocoCasADiSolver.safeDownCast(study.updSolver())
    solver.set_transcription_scheme(scheme)
    solver.set_verbosity(0)
    solver.set_optim_ipopt_print_level(0)
    result = _solve_study(study)
    result["num_mesh_intervals"] = int(solver.get_num_mesh_intervals())
    return result


# --------------------------------------------------------------------------
# Command line summary
# --------------------------------------------------------------------------
def solve_suspended_mass_inverse(time, columns: dict, **options) -> dict:
    """:func:`solve_inverse` on :func:`build_suspended_mass_model` (the model built here, so that the call can run
    in another process: OpenSim objects do not pickle)."""
    return solve_inverse(build_suspended_mass_model(), time, columns, **options)


def _call(name: str, args: tuple, kwargs: dict):
    return globals()[name](*args, **kwargs)


def in_fresh_process(name: str, *args, **kwargs):
    """Call this module's function ``name`` in a new Python process and return its result (a dict of arrays).

    OpenSim 4.6 keeps the ``DeGrooteFregly2016Muscle``'s activation and deactivation time constants in
    function-local statics: in one process every DGF muscle uses the constants of the first one whose state
    derivatives were evaluated. A Moco solve of a model with muscles is Moco's answer to *that* model only in a
    process where no other model's muscle ran before; a test worker that ran another OpenSim test first gets another
    problem (the suspended mass's objective moved by 2.8 % that way). A spawned process starts clean.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_call, name, args, kwargs).result()


def _summary(label: str, result: dict) -> str:
    """Format one result as a single summary line."""
    return (f"{label:<32s} success={str(result['success']):<5s} "
            f"J={result['objective']:.10g}  tf={result['final_time']:.8f}  "
            f"nit={result['nit']}  solve_time={result['solve_time']:.3f} s")


def main(N: int = 50) -> None:
    """Print a one-line summary per problem x scheme x mode at ``N``.

    Parameters
    ----------
    N : int, optional
        Number of mesh intervals.
    """
    _require_opensim()
    print(f"OpenSim {osim.__version__}, N = {N}")
    for scheme in _SCHEMES[:2]:
        for mode in _MODES:
            tag = f"{scheme}/{mode}"
            for variant in LINEAR_J_STAR:
                res = solve_linear(variant=variant, scheme=scheme, mode=mode,
                                   N=N)
                print(_summary(f"linear[{variant}] {tag}", res)
                      + f"  (J*={res['j_star']:.10g})")
            res = solve_sliding_mass(scheme=scheme, mode=mode, N=N)
            print(_summary(f"sliding_mass {tag}", res)
                  + f"  (tf*={res['tf_star']:.4g})")
            res = solve_double_pendulum(scheme=scheme, mode=mode, N=N)
            print(_summary(f"double_pendulum {tag}", res))


if __name__ == "__main__":
    main()
