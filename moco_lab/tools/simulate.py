"""Forward simulation of a trajectory's controls by time stepping.

Moco checks a solution by re-simulating it: ``simulateTrajectoryWithTimeStepping``
drives the model with the solution's controls (a ``PiecewiseLinearFunction`` of
time), starts from the solution's initial state, integrates the equations of
motion with an error-controlled integrator and compares the result with the
states the collocation predicted. The difference measures how well the
transcription satisfied the *continuous* dynamics, not just its own discrete
defects.

:func:`simulate` does the same with Drake's ``Simulator``. The diagram is::

    +-------------------------+  generalized force  +-----------------+
    | ForceElementSystem      | ------------------> | MultibodyPlant  |
    | (actuators x(t), springs|                     | (continuous)    |
    |  dampers, muscles)      | <------------------ |                 |
    +-------------------------+      state [q, v]   +-----------------+

moco_lab's force elements (coordinate actuators, ``SpringGeneralizedForce``,
muscles) live outside the Drake plant, so a small :class:`ForceElementSystem`
evaluates their generalized forces with the model's compiled dynamics (the
same equations the optimizer uses; :meth:`Kernel.applied`) from the
plant state, its own muscle states, the time and the linearly interpolated
controls, integrates the muscle states, and feeds the plant's
``applied_generalized_force`` input port.

Examples
--------
>>> import moco_lab as ml
>>> from moco_lab.simulate import simulate, simulate_solution
>>> sim = simulate_solution(study, solution)                   # doctest: +SKIP
>>> solution.rms_difference(sim)                               # doctest: +SKIP
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
from pydrake.multibody.tree import SpatialInertia
from pydrake.systems.analysis import GetIntegrationSchemes, ResetIntegratorFromFlags, Simulator
from pydrake.systems.framework import BasicVector, DiagramBuilder, LeafSystem

from ..engine.kernel import kernel_for
from ..modeling.constraints import project_positions, project_speeds
from ..modeling.model import Model
from ..modeling.units import quantities_for
from ..results.trajectory import Trajectory
from ..util.names import did_you_mean

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from pydrake.systems.framework import Context

__all__ = ["ForceElementSystem", "simulate", "simulate_solution", "integration_schemes"]


#: Drake schemes without error estimation: ``max_step`` is their fixed step.
_FIXED_STEP = ("explicit_euler", "runge_kutta2", "semi_explicit_euler")
#: Drake schemes that do not apply to moco_lab's simulation diagram.
_UNSUPPORTED = ("cenic",)


def integration_schemes() -> list[str]:
    """Names accepted by ``simulate(..., integrator=...)`` (Drake's ``GetIntegrationSchemes()``).

    Error-controlled schemes (honour ``accuracy``): ``runge_kutta3``,
    ``runge_kutta5``, ``bogacki_shampine3``, ``radau1``, ``radau3``,
    ``implicit_euler``, ``velocity_implicit_euler``. Fixed-step schemes
    (``explicit_euler``, ``runge_kutta2``, ``semi_explicit_euler``) need
    ``max_step``. Drake's ``cenic`` (a contact integrator that needs a
    ``MultibodyPlant`` with geometry named ``plant``) is not offered.
    """
    return [s for s in GetIntegrationSchemes() if s not in _UNSUPPORTED]


class ForceElementSystem(LeafSystem):
    """Drake ``LeafSystem``: moco_lab's force elements as a generalized force.

    Input port ``state``
        The plant state ``[q, v]`` (size ``nq + nv``, Drake order), connect it
        to ``plant.get_state_output_port()``.
    Output port ``generalized_force``
        Size ``nv`` in Drake velocity order, connect it to
        ``plant.get_applied_generalized_force_input_port()``.
    Output port ``controls``
        The controls ``x(t)`` applied at the context time, in
        :attr:`Model.actuators` order (size ``num_controls``).

    Parameters
    ----------
    model : Model
    time : array_like, shape (n,)
        Strictly increasing knot times of the controls (``n >= 1``).
    controls : array_like, shape (n, num_controls)
        Control values at ``time``, columns in :attr:`Model.actuators` order.
        Interpolated piecewise linearly in time and held constant outside
        ``[time[0], time[-1]]`` (as Moco's ``PiecewiseLinearFunction`` controls).
    values : dict of str -> float, optional
        Force-element property overrides (property path -> value), inputs
        of the compiled dynamics.
    """

    def __init__(self, model: Model, time: ArrayLike, controls: ArrayLike, values: Mapping[str, float] | None = None):
        super().__init__()
        self._model = model
        # moco_lab's own compiled dynamics: the same equations the optimizer uses
        self._values = dict(values or {})
        self._kernel = kernel_for(model, tuple(self._values))
        self._P = np.array([self._values[k] for k in self._values], dtype=float)
        self._nz = len(model.auxiliary_state_names())
        if self._nz:
            self.DeclareContinuousState(self._nz)
        self._time = np.asarray(time, dtype=float)
        nu = model.num_controls
        self._controls = np.asarray(controls, dtype=float).reshape(self._time.size, nu)
        nq = model.nq
        # moco_lab orders u like q (by q_index); Drake's v may be ordered differently.
        self._q_index = np.array([c.q_index for c in model.coordinates], dtype=int)
        self._v_index = np.array([c.v_index for c in model.coordinates], dtype=int)
        self._nq = nq
        self._nv = model.plant.num_velocities()
        self._state_port = self.DeclareVectorInputPort("state", nq + self._nv)
        self.DeclareVectorOutputPort("generalized_force", self._nv, self._calc_force)
        self.DeclareVectorOutputPort("controls", nu, self._calc_controls)

    def controls_at(self, t: float) -> np.ndarray:
        """Piecewise-linear controls at time ``t``, shape ``(num_controls,)``."""
        time, X = self._time, self._controls
        if time.size == 1 or t <= time[0]:
            return X[0].copy()
        if t >= time[-1]:
            return X[-1].copy()
        k = int(np.searchsorted(time, t, side="right")) - 1
        w = (t - time[k]) / (time[k + 1] - time[k])
        return (1.0 - w) * X[k] + w * X[k + 1]

    def _calc_controls(self, context, output: BasicVector):
        output.SetFromVector(self.controls_at(context.get_time()))

    def _evaluate(self, context):
        s = self._state_port.Eval(context)
        q = s[: self._nq]
        v = s[self._nq:]
        u = np.empty(self._nq)
        u[self._q_index] = v[self._v_index]
        x = self.controls_at(context.get_time())
        z = context.get_continuous_state_vector().CopyToVector() if self._nz else np.zeros(0)
        E = self._kernel.inputs_at(np.array([context.get_time()]))
        tau, zd = self._kernel.applied(q[None, :], u[None, :], z[None, :], x[None, :], self._P, E=E)
        if self._kernel.nl:  # constraint forces −Gᵀλ from the KKT solve (the Moco paper, appendix)
            _, _, GtL = self._kernel.forward_constrained(q[None, :], u[None, :], x[None, :], self._P, Z=z[None, :],
                                                         E=E)
            tau = tau - GtL
        return tau[0], zd[0]

    def _calc_force(self, context, output: BasicVector):
        tau, _ = self._evaluate(context)
        tau_v = np.zeros(self._nv)
        tau_v[self._v_index] = np.asarray(tau, dtype=float)[self._q_index]
        output.SetFromVector(tau_v)

    def DoCalcTimeDerivatives(self, context: Context, derivatives: Any) -> None:
        """Drake hook: time derivatives of the force elements' states."""
        if self._nz:
            _, zd = self._evaluate(context)
            derivatives.get_mutable_vector().SetFromVector(zd)


def _split_parameters(model: Model, parameters: Mapping[str, float] | None):
    """Split ``{property_path: value}`` into body masses (body name -> (kg, factor of the rotational inertia or
    None: kept)) and force-element values."""
    masses: dict[str, tuple[float, float | None]] = {}
    values: dict[str, float] = {}
    for path, value in (parameters or {}).items():
        prop = model.property(path)  # KeyError with suggestions for unknown paths
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"Parameter {path!r} must be a number, got {value!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"Parameter {path!r} must be finite, got {value}")
        if prop.kind in ("body_mass", "body_scale"):
            if value < 0:
                raise ValueError(f"Parameter {path!r}: a body mass must be >= 0, got {value}")
            if prop.target in masses:
                raise ValueError(f"Parameter {path!r}: the body {prop.target!r} has another parameter on its mass")
            body = model.plant.GetBodyByName(prop.target)
            masses[prop.target] = ((value, None) if prop.kind == "body_mass"
                                   else (value * float(body.default_mass()), value))
        else:
            values[path] = value
    return masses, values


def simulate(
             model: Model,
             trajectory: Trajectory,
             *,
             parameters: Mapping[str, float] | None = None,
             accuracy: float = 1e-9,
             integrator: str = "runge_kutta3",
             max_step: float | None = None,
             ) -> Trajectory:
    """Time-step ``model`` driven by ``trajectory``'s controls (Moco's ``simulateTrajectoryWithTimeStepping``).

    The equations of motion are integrated by Drake's ``Simulator`` (not the
    collocation equations) from the trajectory's initial state over
    ``[trajectory.initial_time, trajectory.final_time]``, with the controls
    interpolated piecewise linearly between the trajectory's time points.
    The simulation runs on a clone of ``model.plant`` (a Drake system can sit
    in one diagram only); the model is not modified. The clone has no
    ``SceneGraph``, so plants whose dynamics need geometry (contact) are not
    supported.

    Parameters
    ----------
    model : Model
        The model the trajectory belongs to.
    trajectory : Trajectory
        Supplies the time grid ``time`` (shape ``(n,)``, ``n >= 2``), the
        initial state (``states[name][0]`` for every name in
        :meth:`Model.state_names`) and the controls (``controls[name]``, shape
        ``(n,)``, for every name in :meth:`Model.control_names`). Hermite–Simpson
        solutions include interval midpoints; they are used as further knots.
        Other columns (multipliers, derivatives) are ignored. A failed
        (sealed) :class:`~moco_lab.results.trajectory.Solution` raises; unseal it first.
    parameters : dict of str -> float, optional
        Model property path -> value to apply (see :meth:`Model.properties`),
        e.g. ``{"/body/mass": 4.0, "/forceset/spring/viscosity": 0.5}``. Body
        masses are set on the simulation's plant context (the model itself is
        not changed; ``mass`` keeps the rotational inertia about the centre of mass, as OpenSim does,
        ``mass_scale`` scales mass and inertia together); force-element properties override the model's values.
        The trajectory's own ``parameters`` are keyed by *parameter name*, not
        property path, so they are not applied automatically: use
        :func:`simulate_solution` to map them through a problem.
    accuracy : float, default 1e-9
        Target accuracy of an error-controlled integrator
        (``IntegratorBase.set_target_accuracy``): a bound on Drake's estimate
        of the *local* (per-step) error, not a guarantee on the global error.
        With the default ``runge_kutta3``, ``accuracy=1e-9`` gives global
        errors near 1e-10 on the tests' problems; ``runge_kutta5`` can end
        *above* ``accuracy`` (seen: 4e-8 at 1e-9 on ``linear_problem``), so
        compare schemes before trusting one. Ignored by fixed-step schemes.
    integrator : str, default ``"runge_kutta3"``
        A Drake scheme name from :func:`integration_schemes`, e.g.
        ``"runge_kutta3"`` (error-controlled, 3rd order), ``"runge_kutta5"``
        (error-controlled, 5th order), ``"radau3"`` (implicit).
    max_step : float, optional
        Maximum step size. Error-controlled schemes default to the whole
        duration (their steps are set by ``accuracy``; the integrator also stops
        at every time point of the trajectory); fixed-step schemes
        (``explicit_euler``, ``runge_kutta2``, ``semi_explicit_euler``) use it as
        the fixed step and require it.

    Returns
    -------
    Trajectory
        Same ``time`` as ``trajectory`` (shape ``(n,)``); ``states`` holds the
        simulated state at each time point, in :meth:`Model.state_names` order
        (coordinate values, then speeds); ``controls`` are copies of the
        controls that were applied, in :meth:`Model.control_names` order;
        ``parameters`` are copied from ``trajectory``. No multipliers or
        derivatives.

    Raises
    ------
    KeyError
        A state or control of the model is missing from ``trajectory``, or a
        ``parameters`` key is not a model property.
    ValueError
        Fewer than two time points, non-finite initial states or controls,
        controls the model does not have, an unknown integrator, a fixed-step
        integrator without ``max_step``, or a bad ``accuracy``/``max_step``.
    RuntimeError
        ``trajectory`` is a sealed (failed) solution.
    """
    if not isinstance(model, Model):
        raise TypeError(f"simulate expects a moco_lab Model, got {type(model).__name__}")
    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"simulate expects a moco_lab Trajectory, got {type(trajectory).__name__}")
    schemes = integration_schemes()
    if integrator not in schemes:
        raise ValueError(did_you_mean(integrator, schemes, "integrator"))
    fixed_step = integrator in _FIXED_STEP
    if fixed_step and max_step is None:
        raise ValueError(f"Integrator {integrator!r} takes fixed steps: pass max_step (the step size).")
    accuracy = float(accuracy)
    if not (math.isfinite(accuracy) and 0 < accuracy < 1):
        raise ValueError(f"accuracy must be in (0, 1), got {accuracy}")
    if max_step is not None:
        max_step = float(max_step)
        if not (math.isfinite(max_step) and max_step > 0):
            raise ValueError(f"max_step must be a positive number, got {max_step}")

    implicit = model.implicit_derivative_names()
    if implicit:
        raise ValueError(
            f"Muscles with implicit tendon dynamics ({implicit}) cannot be time-stepped: set their "
            "tendon_compliance_dynamics_mode to 'explicit' (the same muscle, an ODE form) to simulate.")
    time = trajectory.time
    if time.size < 2:
        raise ValueError(f"The trajectory needs at least two time points to simulate; it has {time.size}.")
    t0, tf = float(time[0]), float(time[-1])
    if not (math.isfinite(t0) and math.isfinite(tf)):
        raise ValueError(f"The trajectory's time range [{t0}, {tf}] is not finite.")

    states = trajectory.states  # raises for a sealed solution
    controls = trajectory.controls
    for name in model.state_names():
        if name not in states:
            raise KeyError(f"The trajectory has no initial value for state {name!r}: "
                           + did_you_mean(name, model.state_names(), "state")
                           + f" The trajectory's states are {list(states)}.")
    control_names = model.control_names()
    for name in control_names:
        if name not in controls:
            raise KeyError(f"The trajectory has no control {name!r} for actuator {name!r}. "
                           f"The trajectory's controls are {list(controls)}; the model's are {control_names}.")
    extra = [name for name in controls if name not in control_names]
    if extra:
        raise ValueError(f"The trajectory has controls the model does not have: {extra}. "
                         f"The model's controls are {control_names}.")
    X = trajectory.matrix("controls", control_names) if control_names else np.zeros((time.size, 0))
    if not np.all(np.isfinite(X)):
        bad = [n for k, n in enumerate(control_names) if not np.all(np.isfinite(X[:, k]))]
        raise ValueError(f"Controls {bad} contain NaN or infinite values.")
    y0 = {name: float(states[name][0]) for name in model.state_names()}
    bad = [n for n, v in y0.items() if not math.isfinite(v)]
    if bad:
        raise ValueError(f"Initial states {bad} are NaN or infinite.")

    if parameters is None and trajectory.parameters:
        warnings.warn(
            f"The trajectory has parameters {sorted(trajectory.parameters)} that are not applied: pass "
            "parameters={property_path: value} or use simulate_solution(study, solution).",
            stacklevel=2,
        )
    masses, values = _split_parameters(model, parameters)
    constrained = bool(getattr(model, "constraints", None))
    if constrained and masses:
        raise ValueError("Body-mass parameters cannot be simulated on a model with kinematic constraints yet "
                         f"({sorted(masses)}); build the model with those masses instead.")

    # ----------------------------------------------------------- the diagram
    # A Drake system can belong to one diagram only, so simulate a clone of the
    # model's plant (same bodies, joints, names and indices).
    model.require_drake_kinematics("simulate (Drake's Simulator integrates the plant's own dynamics)")
    plant = model.plant.Clone()
    builder = DiagramBuilder()
    builder.AddSystem(plant)
    forces = builder.AddSystem(ForceElementSystem(model, time, X, values))
    forces.set_name("moco_lab_force_elements")
    builder.Connect(plant.get_state_output_port(), forces.get_input_port(0))
    builder.Connect(forces.GetOutputPort("generalized_force"), plant.get_applied_generalized_force_input_port())
    diagram = builder.Build()

    simulator = Simulator(diagram)
    context = simulator.get_mutable_context()
    context.SetTime(t0)
    plant_context = plant.GetMyMutableContextFromRoot(context)
    if plant.num_actuators() > 0:
        # moco_lab models actuation itself (Model.from_plant maps each Drake
        # JointActuator to a CoordinateActuator); Drake's own actuation is zero.
        plant.get_actuation_input_port().FixValue(plant_context, np.zeros(plant.num_actuators()))
    for body_name, (mass, factor) in masses.items():
        body = plant.GetBodyByName(body_name)
        if factor is not None:  # Drake's SetMass keeps the unit inertia: mass and inertia scale together
            body.SetMass(plant_context, mass)
            continue
        # OpenSim's and Moco's mass: the rotational inertia about the centre of mass is kept
        central = body.default_spatial_inertia()
        com = central.get_com()
        inertia = central.Shift(com).CalcRotationalInertia()
        body.SetSpatialInertiaInBodyFrame(plant_context, SpatialInertia.MakeFromCentralInertia(mass, com, inertia))

    q0 = np.array(plant.GetPositions(plant_context), dtype=float)
    v0 = np.array(plant.GetVelocities(plant_context), dtype=float)
    for c in model.coordinates:
        q0[c.q_index] = y0[c.value_path]
        v0[c.v_index] = y0[c.speed_path]
    if constrained:
        def project():
            """Project q and u onto the constraint manifold (Simbody's projection after each step)."""
            q = plant.GetPositions(plant_context)
            v = plant.GetVelocities(plant_context)
            qm, um = q[[c.q_index for c in model.coordinates]], v[[c.v_index for c in model.coordinates]]
            qm = project_positions(model, qm)
            um = project_speeds(model, qm, um)
            for j, c in enumerate(model.coordinates):
                q[c.q_index], v[c.v_index] = qm[j], um[j]
            plant.SetPositions(plant_context, q)
            plant.SetVelocities(plant_context, v)
    plant.SetPositions(plant_context, q0)
    plant.SetVelocities(plant_context, v0)
    aux_names = model.auxiliary_state_names()
    if aux_names:
        forces.GetMyMutableContextFromRoot(context).get_mutable_continuous_state_vector().SetFromVector(
            np.array([y0[n] for n in aux_names]))

    integ = ResetIntegratorFromFlags(simulator, integrator, max_step if max_step is not None else tf - t0)
    if not fixed_step:
        integ.set_fixed_step_mode(False)
        integ.set_target_accuracy(accuracy)
    simulator.Initialize()

    # ------------------------------------------- step to each time point
    n = time.size
    Q = np.empty((n, model.nq))
    U = np.empty((n, model.nq))
    qi = [c.q_index for c in model.coordinates]
    vi = [c.v_index for c in model.coordinates]

    Zs = np.empty((n, len(aux_names)))
    forces_context = forces.GetMyContextFromRoot(context)

    def record(k):
        Q[k] = plant.GetPositions(plant_context)[qi]
        U[k] = plant.GetVelocities(plant_context)[vi]
        if aux_names:
            Zs[k] = forces_context.get_continuous_state_vector().CopyToVector()

    if constrained:
        project()  # the initial state is assembled, as Moco and OpenSim do
    record(0)
    for k in range(1, n):
        simulator.AdvanceTo(float(time[k]))
        if constrained:
            project()
        record(k)

    out_states = {}
    for j, c in enumerate(model.coordinates):
        out_states[c.value_path] = Q[:, j]
    for j, c in enumerate(model.coordinates):
        out_states[c.speed_path] = U[:, j]
    for j, name in enumerate(aux_names):
        out_states[name] = Zs[:, j]
    out_controls = {name: X[:, k].copy() for k, name in enumerate(control_names)}
    multipliers = {}
    if constrained:
        kernel = forces._kernel
        _, L, _ = kernel.forward_constrained(Q, U, X, forces._P, Z=Zs if aux_names else None,
                                             E=kernel.inputs_at(time))
        multipliers = {name: L[:, k] for k, name in enumerate(model.multiplier_names())}
    return Trajectory(time, states=out_states, controls=out_controls, multipliers=multipliers,
                      parameters=dict(trajectory.parameters),
                      quantities=quantities_for(model, [*out_states, *out_controls, *multipliers]))


def simulate_solution(study_or_problem: Any, solution: Trajectory, **kwargs: Any) -> Trajectory:
    """Simulate a study's solution, applying its optimized parameters.

    Maps each parameter of ``problem.parameters`` (``Parameter(name,
    property, bounds)``) from ``solution.parameters[name]`` to its property
    path and calls :func:`simulate` on ``problem.model``.

    Parameters
    ----------
    study_or_problem : Study or Problem
        Whose ``model`` and ``parameters`` the solution belongs to.
    solution : Trajectory or Solution
    **kwargs
        Passed to :func:`simulate` (``accuracy``, ``integrator``,
        ``max_step``). A ``parameters`` dict is merged over the solution's
        parameters (its entries win).

    Returns
    -------
    Trajectory
        See :func:`simulate`.

    Raises
    ------
    KeyError
        The solution lacks a value for one of the problem's parameters.
    """
    problem = getattr(study_or_problem, "problem", study_or_problem)
    model = getattr(problem, "model", None)
    if model is None or not hasattr(problem, "parameters"):
        raise TypeError(
            f"simulate_solution expects a Study or a Problem with a model, got {type(study_or_problem).__name__}"
        )
    values = {}
    solved = solution.parameters  # raises for a sealed solution
    for p in problem.parameters:
        if p.name not in solved:
            raise KeyError(f"The solution has no value for parameter {p.name!r} (property {p.property!r}); "
                           f"its parameters are {sorted(solved)}.")
        values[p.property] = solved[p.name]
    values.update(kwargs.pop("parameters", None) or {})
    return simulate(model, solution, parameters=values, **kwargs)
