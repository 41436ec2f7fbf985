"""Direct collocation: transcribe a :class:`~moco_lab.ocp.problem.Problem` into a Drake ``MathematicalProgram``.

Schemes (the Moco paper, appendix): **trapezoidal** (Eq. 7; implicit dynamics Eq. 8)
and **separated Hermite–Simpson** (Eq. 12; implicit Eq. 15) with midpoint
states as variables and midpoint controls constrained to the mean of the
neighbouring mesh values, as in Moco; Moco 4.6's pseudospectral **legendre-gauss-k** and
**legendre-gauss-radau-k** (k = 1…9), with the states at each interval's roots as variables and the controls
there on the line between the interval's end values (:mod:`moco_lab.engine.collocation`).

Decision variables, all visible on the program (:attr:`Transcription.prog`):

=========  ==============  ===================================================
name       shape           meaning
=========  ==============  ===================================================
``t0``     scalar          initial time
``tf``     scalar          final time
``Y``      (ng, ny)        states on the grid, columns :attr:`Transcription.state_names`
``X``      (ng, nx)        controls, columns :attr:`Transcription.control_names`
``A``      (ng, na)        algebraic variables, columns :attr:`Transcription.algebraic_names`
                           (see :class:`~moco_lab.engine.layout.NodeLayout`)
``P``      (np,)           parameters
``I``      dict            one variable per goal whose value needs its integral
=========  ==============  ===================================================

The grid has ``ng = N + 1`` points (trapezoidal), ``2N + 1`` (mesh points and
interval midpoints interleaved, Hermite–Simpson), ``(k + 1) N + 1`` (Legendre–Gauss) or ``k N + 1``
(Legendre–Gauss–Radau) on a uniform mesh in
normalized time ``tau`` in [0, 1], ``t = t0 + tau (tf - t0)``.

Defects, residuals and kinematic-constraint rows are evaluated in *chunks* of
``chunk_size`` mesh intervals, each one Python callback with exact Jacobians
whose structural non-zeros are declared (:mod:`moco_lab.engine.chunks`);
endpoint goals are bound by :mod:`moco_lab.engine.endpoints`.

Goals are bound to the problem (:meth:`moco_lab.ocp.goals.Goal.bind`): plain
integral costs are summed chunk by chunk; goals whose value needs the
integral itself (divided by a displacement, or constrained) get a variable
``I`` fed by the chunks; endpoint functions get their own binding; linear
goals add Drake's native costs and constraints.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from pydrake.solvers import MathematicalProgram

from ..ocp.goals import BoundGoal, EndpointData, NodeData
from ..ocp.problem import Problem
from ..symbolic.batched import matmul
from ..util.memory import paused_gc
from ..util.names import NamedValues, did_you_mean
from .callbacks import ExactCallbacks, drake_callable, variable_indices
from .chunks import Chunk, NodeCache
from .collocation import DYNAMICS_MODES, PSEUDOSPECTRAL_SCHEMES, SCHEMES, Grid, scheme_for
from .endpoints import Endpoint, goal_value
from .hessian import ChunkHessian, DynamicsHessian, EndpointHessian, IntegralCostsHessian, unsupported_for_exact_hessian
from .jacobian import DynamicsJacobian
from .kernel import kernel_for
from .layout import NodeLayout
from .patterns import output_patterns
from .settings import SolverSettings

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["Transcription", "PrescribedKinematics", "SCHEMES", "DYNAMICS_MODES", "MAX_CHUNK_ENTRIES"]

#: Largest dense Jacobian (rows × variables) of one automatic dynamics chunk (see
#: :meth:`Transcription.chunk_intervals`).
MAX_CHUNK_ENTRIES = 150_000


@dataclass
class PrescribedKinematics:
    """Coordinates, speeds and accelerations given as data (Moco's prescribed kinematics, ``MocoInverse``).

    Attributes
    ----------
    initial_time, final_time : float
        The (fixed) time range.
    kinematics_on : callable ``t (n,) -> (Q, U, A)``
        Each of shape ``(n, nq)``.
    """

    initial_time: float
    final_time: float
    kinematics_on: Callable


class _GoalContext:
    """The transcription's :class:`~moco_lab.ocp.goals.GoalContext`."""

    def __init__(self, tr: "Transcription"):
        self._tr = tr
        self.model = tr.model
        self.state_names = list(tr.state_names)
        self.control_names = list(tr.control_names)
        self.algebraic_names = list(tr.algebraic_names)
        self.parameter_names = list(tr.param_names)
        self.total_mass = float(sum(b.mass for b in tr.kernel.system.tree.bodies.values()))
        self.gravity = float(np.linalg.norm(tr.kernel.system.tree.gravity))

    def output(self, name: str) -> str:
        outputs = self._tr.kernel.system.outputs
        if name not in outputs:
            raise KeyError(did_you_mean(name, list(outputs), "model output"))
        return name

    def output_size(self, name: str) -> int | None:
        return len(self._tr.kernel.system.outputs[name])

    def point_output(self, name: str, body: str, location: ArrayLike) -> tuple[str, str]:
        return self._tr.kernel.system.add_point_output(name, body, location)

    def angular_velocity_output(self, name: str, body: str) -> str:
        return self._tr.kernel.system.add_angular_velocity_output(name, body)

    def rotation_output(self, name: str, body: str) -> str:
        return self._tr.kernel.system.add_rotation_output(name, body)

    def generalized_force_output(self, name: str, force_paths: list[str]) -> str:
        tr = self._tr
        if not (tr.layout.nacc or tr.prescribed is not None):
            raise ValueError(f"the generalized forces ({name!r}) need the accelerations, which explicit multibody "
                             "dynamics do not have as variables: set multibody_dynamics_mode='implicit' (Moco "
                             "computes them in either mode), or prescribe the kinematics (Inverse)")
        return tr.kernel.system.add_generalized_force_output(name, force_paths)

    def acceleration_output(self, name: str, body: str, gravity_offset: bool, expressed_in_body: bool) -> str:
        tr = self._tr
        if not (tr.layout.nacc or tr.prescribed is not None):
            raise ValueError(f"a frame's acceleration ({body!r}) needs the accelerations, which explicit multibody "
                             "dynamics do not have as variables: set multibody_dynamics_mode='implicit' (Moco "
                             "computes it in either mode), or prescribe the kinematics (Inverse)")
        return tr.kernel.system.add_acceleration_output(name, body, gravity_offset, expressed_in_body)

    def output_values(self, name: str, states: dict) -> np.ndarray:
        coords = self._tr.model.coordinates
        missing = [c.value_path for c in coords if c.value_path not in states]
        if missing:
            raise KeyError(f"the states reference has no column for the coordinate {missing[0]!r}"
                           + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        n = len(states[coords[0].value_path])
        Q = np.column_stack([np.asarray(states[c.value_path], float) for c in coords]).reshape(n, len(coords))
        U = np.column_stack([np.asarray(states.get(c.speed_path, np.zeros(n)), float) for c in coords]).reshape(Q.shape)
        return np.asarray(self._tr.kernel.outputs((name,), Q, U)[name], float).reshape(n, -1)

    def joint_reaction_output(self, joint: str, loads_frame: str, expressed_in: str | None) -> str:
        tr = self._tr
        if not (tr.layout.nacc or tr.prescribed is not None):
            raise ValueError(f"a joint reaction ({joint!r}) needs the accelerations, which explicit multibody dynamics "
                             "do not have as variables: set multibody_dynamics_mode='implicit' (Moco computes it "
                             "in either mode), or prescribe the kinematics (Inverse)")
        return tr.kernel.system.add_joint_reaction_output(joint, loads_frame, expressed_in)


class _NativeTerms:
    """What a goal's ``native`` function may use: the program and its variables."""

    def __init__(self, tr: "Transcription"):
        self.prog, self.t0, self.tf, self.P = tr.prog, tr.t0, tr.tf, tr.P
        self.Y, self.X, self.A = tr.Y, tr.X, tr.A
        self.tau, self.quadrature = tr.grid.tau, tr.grid.quadrature
        self._tr = tr

    def endpoint_variable(self, name: str, row: int):
        """The variable of a state or control ``name`` at grid row ``row`` (0 or -1)."""
        return self._tr.endpoint(self.Y, self.X, name, row)


class Transcription:
    """The nonlinear program of a problem under given solver settings.

    Parameters
    ----------
    problem : Problem
    settings : SolverSettings
    prescribed : PrescribedKinematics, optional
        Coordinates, speeds and accelerations as data (only force-element
        states, controls, implicit derivatives and multipliers are variables;
        the multibody equations are residual rows).

    Attributes
    ----------
    prog : pydrake.solvers.MathematicalProgram
    grid : Grid
    layout : NodeLayout
    t0, tf, Y, X, A, P : Drake decision variables (see module docstring).
    bound_goals : list of BoundGoal
    """

    @paused_gc()   # building creates many objects at once (moco_lab.util.memory)
    def __init__(self, problem: Problem, settings: SolverSettings, prescribed: PrescribedKinematics | None = None):
        settings.validate()
        problem.validate()
        if prescribed is None and not any(g.enabled for g in problem.goals) and (
                not problem.time_final.is_fixed or not problem.time_initial.is_fixed or problem.parameters):
            free = [w for w, flag in (("the final time", not problem.time_final.is_fixed),
                                      ("the initial time", not problem.time_initial.is_fixed),
                                      ("the parameters", bool(problem.parameters))) if flag]
            warnings.warn(f"The problem has no goals, so any feasible motion is a solution and {' and '.join(free)} "
                          "will be arbitrary (add a goal, e.g. ml.FinalTimeGoal() or ml.ControlGoal()).",
                          UserWarning, stacklevel=3)
        self.problem = problem
        self.settings = settings
        self.model = model = problem.model
        self.prescribed = prescribed
        self.scheme = settings.transcription_scheme
        self.mode = "implicit" if prescribed is not None else settings.multibody_dynamics_mode
        self.grid = grid = Grid(self.scheme, settings.num_mesh_intervals)
        self.param_names = [p.name for p in problem.parameters]
        self.kernel = kernel_for(model, tuple(p.property for p in problem.parameters))
        nq = model.nq
        aux = model.auxiliary_state_names()
        self.state_names = aux if prescribed is not None else problem.state_names()
        self.control_names = problem.control_names()
        multipliers = model.multiplier_names() if model.constraints else []
        nl = len(multipliers)
        self.bordalba = bool(nl) and prescribed is None and settings.kinematic_constraint_method == "Bordalba2023"
        posa_hs = bool(nl) and prescribed is None and self.scheme == "hermite-simpson" and not self.bordalba
        if nl and prescribed is None and not self.bordalba and self.scheme in PSEUDOSPECTRAL_SCHEMES:
            raise ValueError(
                f"The model has kinematic constraints ({multipliers[0].rsplit('/lambda_', 1)[0]!r}"
                f"{' ...' if nl > 1 else ''}) and transcription_scheme={self.scheme!r}: with a pseudospectral "
                "scheme they are enforced only by kinematic_constraint_method='Bordalba2023' (as in Moco 4.6, "
                "which refuses Posa2016 there); set it, or use 'hermite-simpson' or 'trapezoidal'.")
        self.layout = lay = NodeLayout(
            nq=nq, nz=len(aux), nx=len(self.control_names), nacc=nq if self.mode == "implicit" and not prescribed else 0,
            nw=len(model.implicit_derivative_names()), nl=nl, ngam=nl if posa_hs else 0,
            nxt=2 * nq if self.bordalba else 0, nmu=2 * nl if self.bordalba else 0, prescribed=prescribed is not None)
        # names of the algebraic columns
        self.accel_names = model.accel_names() if lay.nacc else []
        self.implicit_names = model.implicit_derivative_names()
        self.derivative_names = self.accel_names + self.implicit_names
        self.multiplier_names = multipliers
        self.slack_names = [n.replace("/lambda_", "/gamma_") for n in multipliers] if lay.ngam else []
        self.projected_state_names = ([f"{n}/projected" for n in problem.state_names()[:2 * nq]]
                                      if self.bordalba else [])
        self.projection_names = ([n.replace("/lambda_", f"/mu_{lvl}_") for lvl in ("p", "v") for n in multipliers]
                                 if self.bordalba else [])
        self.algebraic_names = (self.derivative_names + self.multiplier_names + self.slack_names
                                + self.projected_state_names + self.projection_names)
        self.nq, self.ny, self.nx, self.na = nq, lay.ny, lay.nx, lay.na
        self.nl, self.nres, self.npar = nl, lay.nres, len(problem.parameters)
        self.nb = lay.size
        # kinematic-constraint rows: columns of K = [φ, φ̇, φ̈] used at mesh points and at midpoints
        if not nl or prescribed is not None:
            mesh_cols, mid_cols = [], []
        elif self.bordalba:  # φ, φ̇ at mesh points; φ̈ at every grid point
            mesh_cols, mid_cols = list(range(3 * nl)), list(range(2 * nl, 3 * nl))
        elif self.scheme == "trapezoidal":  # Eq. 7: φ at mesh points
            mesh_cols, mid_cols = list(range(nl)), []
        else:  # Posa et al.: φ, φ̇, φ̈ at mesh points
            mesh_cols, mid_cols = list(range(3 * nl)), []
        self.kin_mesh_cols, self.kin_mid_cols = np.array(mesh_cols, int), np.array(mid_cols, int)
        self.nkin = 3 * nl if prescribed is None else 0
        #: grid points where a projection (x̃, μ) applies: mesh points that end an interval
        self.projection_nodes = grid.is_mesh.copy()
        self.projection_nodes[0] = False
        if prescribed is not None:
            self.time_prescribed = prescribed.initial_time + grid.tau * (prescribed.final_time - prescribed.initial_time)
            self.Qp, self.Up, self.Ap = prescribed.kinematics_on(self.time_prescribed)
        #: the force elements' time-dependent inputs at the grid points (None without any): data on a fixed grid
        self.Ein = self._grid_inputs()

        prog = self.prog = MathematicalProgram()
        #: ``id(evaluator) -> (fun, evaluator, hessian)`` for the Python bindings built here: ``fun(z, jac)`` returns
        #: the value and the exact Jacobian directly (optimizers outside Drake call it instead of the AutoDiff path);
        #: with ``optim_hessian_approximation="exact"``, ``hessian`` is ``(rows, cols, h)``: the binding's Hessian
        #: structure (lower triangle, local variable indices) and ``h(z, weights) -> values`` (weights: the
        #: constraint rows' multipliers, or ``[σ]`` for a cost), else None; its ``grouped`` list holds the chunks'
        #: Hessians evaluated all chunks at once (:class:`~moco_lab.engine.hessian.DynamicsHessian`,
        #: :class:`~moco_lab.engine.hessian.IntegralCostsHessian`), which the optimizer calls instead
        self.exact_callbacks = ExactCallbacks()
        ng = grid.num_points
        self.t0 = prog.NewContinuousVariables(1, "t0")[0]
        self.tf = prog.NewContinuousVariables(1, "tf")[0]
        self.Y = self._new(ng, self.ny, "y")
        self.X = self._new(ng, self.nx, "x")
        self.A = self._new(ng, self.na, "a")
        self.P = prog.NewContinuousVariables(self.npar, "p") if self.npar else np.empty(0, dtype=object)
        self._add_bounds()
        self.kin_endpoint_cols = self._endpoint_kinematic_rows()
        self._add_midpoint_controls()
        # goals
        ctx = _GoalContext(self)
        self.bound_goals: list[BoundGoal] = [g.bind(ctx) for g in problem.goals if g.enabled]
        self.bound_goals += self._solver_goals()
        # Moco's output path constraints: rows at the mesh points, evaluated chunk by chunk like integrands
        self.path_rows = [c.bind(ctx) for c in problem.output_constraints]
        self.path_goals: list[BoundGoal] = [row for pr in self.path_rows for row in pr.rows]
        self.outputs = tuple(dict.fromkeys(n for b in (*self.bound_goals, *self.path_goals) for n in b.outputs))
        self.integral_costs = [b for b in self.bound_goals if b.plain_integral_cost]
        self.integral_goals = [b for b in self.bound_goals if b.integrand is not None and not b.plain_integral_cost]
        self.cost_columns = self._cost_columns()
        self.I = {b.name: prog.NewContinuousVariables(1, f"I_{b.name}")[0] for b in self.integral_goals}
        self._add_chunks()
        self._add_endpoint_goals()
        terms = _NativeTerms(self)
        for b in self.bound_goals:
            if b.native is not None:
                b.native(terms)
        self._add_path_constraints()
        self._add_bound_constraints()
        # the all-grid-point evaluation cache (see NodeCache); chunks look up their variables in it
        all_vars = prog.decision_variables()
        self._full_index = {
            "t0": prog.FindDecisionVariableIndex(self.t0), "tf": prog.FindDecisionVariableIndex(self.tf),
            "P": prog.FindDecisionVariableIndices(self.P) if self.npar else np.zeros(0, int),
            "B": variable_indices(prog, [np.hstack([self.Y, self.X, self.A])])[0].reshape(ng, self.nb)}
        self.cache = NodeCache(self)
        known = self.exact_callbacks.indices
        if settings.optim_solver == "ipopt":
            ev = prog.AddVisualizationCallback(self.cache.update, all_vars).evaluator()
            known[id(ev)] = (ev, np.arange(all_vars.size))
        # each chunk's variables' indices from the grid's (its node_vars, cost_vars and vars, as Chunk lists them)
        fi = self._full_index
        head = np.concatenate([[fi["t0"], fi["tf"]], fi["P"]]).astype(int)
        partials = variable_indices(prog, [np.array(list(c.partial.values()), dtype=object) for c in self.chunks])
        for c, partial in zip(self.chunks, partials):
            c.var_index = np.concatenate([head, fi["B"][c.g].reshape(-1)])
            c.cost_index = np.concatenate([head, fi["B"][c.g][:, self.cost_columns].reshape(-1)])
            c.var_full_index = np.concatenate([c.var_index, partial])
            known[id(c.constraint_evaluator)] = (c.constraint_evaluator, c.var_full_index)
            if self.integral_costs:
                known[id(c.cost_evaluator)] = (c.cost_evaluator, c.cost_index)
        # the bounds' variables, as _add_bounds lists them: t0, tf, then Y, X, A grid point by grid point, then P
        B, ny, nx = fi["B"], self.ny, self.nx
        box = self._box.evaluator()
        known[id(box)] = (box, np.concatenate([head[:2], B[:, :ny].reshape(-1), B[:, ny:ny + nx].reshape(-1),
                                               B[:, ny + nx:].reshape(-1), head[2:]]))
        if settings.optim_solver == "ipopt" and DynamicsJacobian.covers(self):
            self.exact_callbacks.grouped_jacobians.append(DynamicsJacobian(self))
        if settings.optim_hessian_approximation == "exact":
            self._add_hessians()

    def _grid_inputs(self) -> np.ndarray | None:
        """The model's time-dependent inputs (e.g. applied external loads) at every grid point, or None.

        They are data given on a time axis, so the grid's times must be known before the solve: both ends of the
        time interval fixed.
        """
        if not self.kernel.ne:
            return None
        if self.prescribed is not None:
            return self.kernel.inputs_at(self.time_prescribed)
        t0, tf = self.problem.time_initial, self.problem.time_final
        if not (t0.is_fixed and tf.is_fixed):
            names = self.kernel.system.e_names
            raise ValueError(
                f"The model has time-dependent inputs ({names[0]}{' ...' if len(names) > 1 else ''}: data such as "
                f"applied external loads), which need the time grid fixed before the solve; the problem's time "
                f"bounds are initial [{t0.lower:g}, {t0.upper:g}] and final [{tf.lower:g}, {tf.upper:g}] s. "
                "Fix both (problem.set_time_bounds(t0, tf)).")
        return self.kernel.inputs_at(t0.lower + self.grid.tau * (tf.lower - t0.lower))

    def split_full(self, x: np.ndarray) -> dict:
        """``(t0, tf, P, B (ng, nb))`` from a full decision vector."""
        fi = self._full_index
        return x[fi["t0"]], x[fi["tf"]], x[fi["P"]], x[fi["B"]]

    # ------------------------------------------------------------ variables
    def _new(self, rows, cols, name):
        if cols == 0:
            return np.empty((rows, 0), dtype=object)
        return self.prog.NewContinuousVariables(rows, cols, name)

    def all_variables(self) -> np.ndarray:
        """Every decision variable of the program, in Drake's order."""
        return self.prog.decision_variables()

    def _add_bounds(self):
        p, grid, lay, s = self.problem, self.grid, self.layout, self.settings
        ng = grid.num_points
        lo, hi = [], []
        variables = [np.array([self.t0]), np.array([self.tf])]
        if self.prescribed is not None:
            t0, tf = self.prescribed.initial_time, self.prescribed.final_time
            lo += [t0, tf]
            hi += [t0, tf]
        else:
            lo += [p.time_initial.lower, p.time_final.lower]
            hi += [p.time_initial.upper, p.time_final.upper]
        self.state_infos = p.state_infos(self.state_names)
        self.control_infos = p.control_infos(self.control_names)
        for infos, V in ((self.state_infos, self.Y), (self.control_infos, self.X)):
            if V.shape[1] == 0:
                continue
            L = np.array([[i.bounds.lower for i in infos]] * ng)
            U = np.array([[i.bounds.upper for i in infos]] * ng)
            for k, info in enumerate(infos):
                if info.initial is not None:
                    L[0, k], U[0, k] = info.initial.lower, info.initial.upper
                if info.final is not None:
                    L[-1, k], U[-1, k] = info.final.lower, info.final.upper
            variables.append(V.reshape(-1))
            lo.append(L.reshape(-1))
            hi.append(U.reshape(-1))
        if self.na:
            Lo, Hi = np.zeros((ng, self.na)), np.zeros((ng, self.na))
            col = lambda group: lay.in_algebraic(group)  # noqa: E731
            vb = float(s.implicit_acceleration_bounds)
            Lo[:, col(lay.acc)], Hi[:, col(lay.acc)] = -vb, vb
            wb = np.array([self.model.implicit_derivative_bounds(n) for n in self.implicit_names]).reshape(-1, 2)
            Lo[:, col(lay.w)], Hi[:, col(lay.w)] = wb[:, 0], wb[:, 1]
            Lo[:, col(lay.lam)], Hi[:, col(lay.lam)] = s.multiplier_bounds
            gc = col(lay.gam)
            Lo[:, gc], Hi[:, gc] = s.velocity_correction_bounds
            Lo[grid.is_mesh, gc] = Hi[grid.is_mesh, gc] = 0.0  # γ̃ lives at interval midpoints only
            if self.bordalba:  # x̃, μ live at the mesh points that end an interval
                xc, mc = col(lay.xt), col(lay.mu)
                Lo[:, xc] = [i.bounds.lower for i in self.state_infos[:lay.nxt]]
                Hi[:, xc] = [i.bounds.upper for i in self.state_infos[:lay.nxt]]
                Lo[:, mc], Hi[:, mc] = s.projection_slack_bounds
                pc = slice(xc.start, mc.stop)
                Lo[~self.projection_nodes, pc] = Hi[~self.projection_nodes, pc] = 0.0
                for k, info in enumerate(self.state_infos[:lay.nxt]):
                    if info.final is not None:
                        Lo[-1, xc.start + k], Hi[-1, xc.start + k] = info.final.lower, info.final.upper
            variables.append(self.A.reshape(-1))
            lo.append(Lo.reshape(-1))
            hi.append(Hi.reshape(-1))
        for par in p.parameters:
            lo.append([par.bounds.lower])
            hi.append([par.bounds.upper])
        if self.npar:
            variables.append(self.P)
        self._box = self.prog.AddBoundingBoxConstraint(np.hstack([np.atleast_1d(np.asarray(v, float)) for v in lo]),
                                                       np.hstack([np.atleast_1d(np.asarray(v, float)) for v in hi]),
                                                       np.hstack(variables))

    def _endpoint_kinematic_rows(self) -> dict[int, np.ndarray]:
        """The kinematic rows to enforce at the first and last grid points, where bounds fix the state.

        Where every coordinate value is fixed (initial or final bounds with lower = upper), ``φ(q)`` is a
        number, not a constraint: it is checked here (a ``ValueError`` names the constraint and the end when
        the fixed values violate it), and so is ``φ̇ = G(q) u`` where every speed is fixed too. With the
        trapezoidal scheme these rows are then left out of the program: kept, they make the constraint
        Jacobian rank-deficient at every point (LICQ fails), IPOPT needs several times the iterations and can
        stop at its acceptable level with an objective 6 % too high or fail in restoration (the released bead
        on the parabola, ``benchmarks/trapezoidal_constraints.md``). Hermite–Simpson keeps them, as Moco
        does: measured on the same bead while developing this check (2026-11-24), leaving them out there
        costs iterations (817 instead of 62 at N = 50) and fails at N = 100.

        Returns ``{grid point: kinematic columns}`` for the grid points whose rows differ from the default.
        """
        lay = self.layout
        if not self.nl or self.prescribed is not None or self.bordalba or self.npar or not self.kin_mesh_cols.size:
            return {}
        nl, nq = self.nl, self.nq
        q_cols = np.arange(self.nb)[lay.q]
        u_cols = np.arange(self.nb)[lay.u]
        ends = {0: ("initial", lambda i: i.initial), self.grid.num_points - 1: ("final", lambda i: i.final)}
        keep: dict[int, np.ndarray] = {}
        names = self.multiplier_names
        for node, (end, which) in ends.items():
            fixed = []
            for cols in (q_cols, u_cols):
                b = [which(self.state_infos[c]) for c in cols]
                fixed.append(None if any(x is None or x.lower != x.upper for x in b)
                             else np.array([x.lower for x in b], float))
            Q, U = fixed
            if Q is None:
                continue
            terms = self.kernel.constraints(Q[None, :], (U if U is not None else np.zeros(nq))[None, :])
            levels = [("position", "phi", range(nl))]
            if U is not None:
                levels.append(("velocity", "phid", range(nl, 2 * nl)))
            drop = set()
            for level, key, cols in levels:
                err = np.abs(terms[key][0])
                worst = int(np.argmax(err))
                if err[worst] > 1e-8:
                    raise ValueError(
                        f"The {end} state fixed by the bounds violates the kinematic constraint "
                        f"{names[worst].rsplit('/lambda_', 1)[0]!r} at the {level} level by {err[worst]:.3g}: "
                        f"make the {end} values consistent with the constraint, or leave one coordinate's "
                        f"{end} value free (set_state_info) so that the constraint fixes it")
                drop.update(cols)
            if self.scheme == "trapezoidal":
                keep[node] = np.array([c for c in self.kin_mesh_cols if c not in drop], int)
        return keep

    def _add_midpoint_controls(self):
        """Controls inside an interval on the line between its end values (Moco's
        ``interpolate_control_mesh_interior_points``): Hermite–Simpson's midpoint mean, the pseudospectral schemes'
        linear interpolation at each root (Bordalba et al. 2023)."""
        if (self.grid.stride == 1 or self.nx == 0 or self.prescribed is not None
                or not self.settings.interpolate_control_mesh_interior_points):
            return  # Moco's MocoInverse leaves midpoint controls free
        s = self.grid.stride
        nodes = scheme_for(self.scheme).nodes
        for i in range(self.grid.num_mesh_intervals):
            for j in range(1, s):
                coeffs = np.array([[1.0, -(1.0 - nodes[j]), -nodes[j]]])
                for c in range(self.nx):
                    self.prog.AddLinearEqualityConstraint(
                        coeffs, [0.0], [self.X[s * i + j, c], self.X[s * i, c], self.X[s * i + s, c]]
                    ).evaluator().set_description(f"midpoint control {self.control_names[c]}")

    # --------------------------------------------------------------- solver-setting goals
    def _solver_goals(self) -> list[BoundGoal]:
        """Costs the solver settings ask for, as bound goals (integrands over algebraic columns)."""
        s, lay, out = self.settings, self.layout, []

        def algebraic_effort(name, cols, weight):
            cols = np.arange(self.na)[cols]

            def integrand(d: NodeData, jac: bool):
                V = d.A[:, cols]
                s_ = np.sum(V * V, axis=1)
                if not jac:
                    return s_, {}
                dA = np.zeros_like(d.A)
                dA[:, cols] = 2 * V
                return s_, {"A": dA}

            def hessian(d: NodeData):
                return [(("A", j), ("A", j), np.full(d.t.size, 2.0)) for j in cols]

            return BoundGoal(name, float(weight), integrand=integrand, hessian=hessian, columns={"A": cols})

        if s.minimize_lagrange_multipliers and lay.nl:
            out.append(algebraic_effort("lagrange_multipliers", lay.in_algebraic(lay.lam), s.lagrange_multiplier_weight))
        if getattr(s, "minimize_implicit_multibody_accelerations", False) and lay.nacc:
            out.append(algebraic_effort("implicit_multibody_accelerations", lay.in_algebraic(lay.acc),
                                        s.implicit_multibody_accelerations_weight))
        if getattr(s, "minimize_implicit_auxiliary_derivatives", False) and lay.nw:
            out.append(algebraic_effort("implicit_auxiliary_derivatives", lay.in_algebraic(lay.w),
                                        s.implicit_auxiliary_derivatives_weight))
        if self.bordalba and s.minimize_state_projection_distance:
            w, n = float(s.state_projection_distance_weight), lay.nxt
            xc = lay.in_algebraic(lay.xt)
            nodes = self.projection_nodes

            def native(terms):
                I = np.eye(n)
                Qm = 2 * w * np.block([[I, -I], [-I, I]])
                for k in np.flatnonzero(nodes):
                    v = np.concatenate([terms.Y[k, :n], terms.A[k, xc]])
                    terms.prog.AddQuadraticCost(Qm, np.zeros(2 * n), v, is_convex=True)

            def value(sol):
                d = sol["A"][nodes, xc] - sol["Y"][nodes, :n]
                return float(w * np.sum(d ** 2))

            out.append(BoundGoal("state_projection", w, native=native, value=value))
        return out

    def _cost_columns(self) -> np.ndarray:
        """Node-block columns the plain integral costs read (their ``columns`` and their outputs' inputs)."""
        lay = self.layout
        used = np.zeros(self.nb, bool)
        groups = {"Y": lay.y, "X": lay.x, "A": lay.a}
        for b in self.integral_costs:
            if b.columns is None:
                return np.arange(self.nb)
            for key, idx in b.columns.items():
                sl = groups[key]
                cols = np.arange(sl.start, sl.stop)
                used[cols if idx is None else cols[np.asarray(idx, int)]] = True
        if any(b.outputs for b in self.integral_costs):
            pat = output_patterns(self)
            for b in self.integral_costs:
                for name in b.outputs:
                    used |= pat[name][0].any(axis=0)
        return np.flatnonzero(used)

    # --------------------------------------------------------------- chunks
    def chunk_intervals(self) -> int:
        """Mesh intervals per dynamics binding: ``settings.chunk_size``, or chosen from the node size.

        Drake hands a Python constraint's Jacobian to IPOPT through a *dense* AutoDiff matrix (rows × the
        binding's variables), so its cost grows with the square of the chunk. Automatically (``chunk_size``
        None), a chunk holds up to 10 intervals while that matrix stays below :data:`MAX_CHUNK_ENTRIES`
        entries: 10 for the verification problems, 3 for a gait model with muscles and contact (where it made
        an IPOPT iteration about twice as fast as 10; ``benchmarks/engine_scale.py``).
        """
        if self.settings.chunk_size is not None:
            return max(1, int(self.settings.chunk_size))
        per_interval = self.grid.stride
        rows = self.nres + self.layout.ny  # residual rows and defect rows per grid point (approximately)
        for size in range(10, 0, -1):
            points = per_interval * size + 1
            if (points * rows) * (points * self.nb) <= MAX_CHUNK_ENTRIES:
                return size
        return 1

    def _exact(self, binding, fun) -> Any:
        """Record ``fun(z, jac) -> (value, Jacobian)`` as the exact callable behind ``binding`` (see ``exact_callbacks``);
        returns the binding's evaluator."""
        ev = binding.evaluator()
        self.exact_callbacks[id(ev)] = (fun, ev, None)
        return ev

    def _add_hessians(self) -> None:
        """Each binding's exact Hessian (``optim_hessian_approximation="exact"``): structures declared once."""
        missing = unsupported_for_exact_hessian(self)
        if missing:
            raise ValueError("optim_hessian_approximation='exact' needs second derivatives of every term, and these "
                             f"have none: {'; '.join(missing)}. Use optim_hessian_approximation='limited-memory' "
                             "(IPOPT's quasi-Newton approximation) for this problem.")

        def register(ev, rows, cols, fn):
            fun = self.exact_callbacks[id(ev)][0]
            self.exact_callbacks[id(ev)] = (fun, ev, (rows, cols, fn))

        for c in self.chunks:
            h = c.hessian = ChunkHessian(c)
            register(c.constraint_evaluator, h.rows, h.cols, h.constraint)
            if self.integral_costs:
                register(c.cost_evaluator, h.cost_rows, h.cost_cols, h.cost)
        self.exact_callbacks.grouped.append(DynamicsHessian(self))
        if self.integral_costs:
            self.exact_callbacks.grouped.append(IntegralCostsHessian(self))
        for ep in self.endpoints:
            h = ep.hessian = EndpointHessian(ep)
            register(ep.evaluator, h.rows, h.cols, h.evaluate)

    def _add_chunks(self):
        N = self.grid.num_mesh_intervals
        size = self.chunk_intervals()
        self.chunks = []
        for i0 in range(0, N, size):
            chunk = Chunk(self, i0, min(N, i0 + size))
            self.chunks.append(chunk)
            b = self.prog.AddConstraint(drake_callable(chunk.constraint, scalar=False), chunk.lower, chunk.upper,
                                        chunk.vars, description=f"dynamics [{i0}, {chunk.i1})")
            b.evaluator().SetGradientSparsityPattern(chunk.sparsity)
            chunk.constraint_evaluator = self._exact(b, chunk.constraint)
            if self.integral_costs:
                chunk.cost_evaluator = self._exact(
                    self.prog.AddCost(drake_callable(chunk.cost, scalar=True), chunk.cost_vars), chunk.cost)
        # I = Σ chunk partial integrals (each chunk constrains its own partial-integral variable)
        for b in self.integral_goals:
            parts = [c.partial[b.name] for c in self.chunks]
            self.prog.AddLinearEqualityConstraint(np.array([[1.0] + [-1.0] * len(parts)]), [0.0],
                                                  np.array([self.I[b.name], *parts]))

    # --------------------------------------------------------------- node quantities
    def node_inputs(self, idx: np.ndarray, B: np.ndarray) -> dict:
        """Kernel inputs at grid points ``idx`` from their node blocks ``B`` (n, nb)."""
        lay = self.layout
        if self.prescribed is not None:
            Q, U, Acc = self.Qp[idx], self.Up[idx], self.Ap[idx]
        else:
            Q, U = B[:, lay.q], B[:, lay.u]
            Acc = B[:, lay.acc] if lay.nacc else None
        return {"Q": Q, "U": U, "Z": B[:, lay.z], "X": B[:, lay.x], "A": Acc, "W": B[:, lay.w],
                "L": B[:, lay.lam] if lay.nl else None, "Gam": B[:, lay.gam] if lay.ngam else None,
                "Mu": B[:, lay.mu] if lay.nmu else None, "E": None if self.Ein is None else self.Ein[idx]}

    def _block(self, J: dict, rows: int, n: int) -> np.ndarray:
        """Derivatives w.r.t. the node block from a kernel Jacobian dict (keys dq, du, dz, dw, dx, dl, da)."""
        lay = self.layout
        B = np.zeros((n, rows, self.nb))
        if not lay.prescribed:
            B[:, :, lay.q] = J["dq"]
            B[:, :, lay.u] = J["du"]
            if "da" in J and lay.nacc:
                B[:, :, lay.acc] = J["da"]
        B[:, :, lay.z] = J["dz"]
        B[:, :, lay.x] = J["dx"]
        B[:, :, lay.w] = J["dw"]
        if lay.nl:
            B[:, :, lay.lam] = J["dl"]
        return B

    def _scatter(self, blk: Any, entries: np.ndarray, n: int) -> tuple:
        """``dF, dFp, dR, dRp`` (as :meth:`node_dynamics` returns them) straight from the residual block's sparse
        Jacobian entries ``(n, nnz)`` (implicit and prescribed modes): the force elements' state derivatives are
        ``F``'s last rows, the multibody and implicit residuals ``R``'s rows; columns of the node block or the
        parameters. ``F``'s kinematic rows are left zero for the caller."""
        plans = self.__dict__.setdefault("_scatter_plans", {})
        if id(blk) not in plans:
            plans[id(blk)] = (blk, self._scatter_plan(blk))   # the block kept with its plan: its id stays unique
        nb, npar = self.nb, self.npar
        out = (np.zeros((n, self.ny, nb)), np.zeros((n, self.ny, npar)), np.zeros((n, self.nres, nb)),
               np.zeros((n, self.nres, npar)))
        for a, (sel, flat) in zip(out, plans[id(blk)][1]):
            a.reshape(n, -1)[:, flat] = entries[:, sel]
        return out

    def _scatter_plan(self, blk: Any) -> list:
        """For :meth:`_scatter`: ``(kernel entries, flat positions in a node's array)`` of ``dF, dFp, dR, dRp``; the
        kernel's columns the node block does not hold (prescribed ``q, u, u̇``, time inputs) are left out."""
        lay, klay = self.layout, self.kernel.layout
        nq, nz, ny, nb, npar = self.nq, lay.nz, self.ny, self.nb, self.npar
        col = np.full(klay.total, -1)
        groups = [("z", lay.z), ("x", lay.x), ("w", lay.w)]
        if not lay.prescribed:
            groups += [("q", lay.q), ("u", lay.u)] + ([("a", lay.acc)] if lay.nacc else [])
        if lay.nl:
            groups.append(("lam", lay.lam))
        for name, dest in groups:
            col[klay.slice(name)] = np.arange(dest.start, dest.stop)
        rows, cols = np.asarray(blk.rows), np.asarray(blk.cols)
        in_z = (rows >= nq) & (rows < nq + nz)
        frow = ny - nz + rows - nq                                 # a force element's state derivative: F's row
        rrow = np.where(rows < nq, rows, rows - nz)                # a residual: R's row
        is_p = cols >= klay.total
        node_col = np.where(is_p, -1, col[np.minimum(cols, klay.total - 1)])
        keep = is_p | (node_col >= 0)
        a = klay.slice("a")
        keep &= (rows < nq) | (cols < a.start) | (cols >= a.stop)     # only the residual reads u̇ (Kernel.evaluate)
        targets = []
        for rows_of, mask in ((frow, in_z), (rrow, ~in_z)):
            m = np.flatnonzero(mask & keep & ~is_p)
            targets.append((m, rows_of[m] * nb + node_col[m]))
            m = np.flatnonzero(mask & is_p)
            targets.append((m, rows_of[m] * npar + cols[m] - klay.total))
        return targets

    def node_dynamics(self, idx: np.ndarray, B: np.ndarray, P: np.ndarray, jac: bool) -> dict:
        """Dynamics at grid points ``idx``: state derivatives ``F``, residuals ``R``, kinematic rows ``K``.

        ``F`` holds the derivatives of the variable states ``[q̇ = u (+ G(q)ᵀγ̃), u̇, ż]`` (only ``ż``
        with prescribed kinematics); ``u̇`` comes from forward dynamics (explicit) or the acceleration
        variables (implicit). ``R`` holds the residual rows (multibody residual in implicit or prescribed
        mode, then the implicit derivatives' residuals); ``K`` the kinematic-constraint rows
        ``[φ, φ̇, φ̈]``.

        Returns
        -------
        F : (n, ny); dF : (n, ny, nb); dFp : (n, ny, np);
        R : (n, nres); dR : (n, nres, nb); dRp : (n, nres, np);
        kin : dict or None: ``K`` (n, nkin), with ``jac`` ``dK`` (n, nkin, nb), ``dKp``.
        """
        lay = self.layout
        nq, ny, npar, nl = self.nq, self.ny, self.npar, lay.nl
        n = B.shape[0]
        inp = self.node_inputs(idx, B)
        Q, U, Z, X, Acc, W, Lam = inp["Q"], inp["U"], inp["Z"], inp["X"], inp["A"], inp["W"], inp["L"]
        explicit = self.mode == "explicit"
        res = self.kernel.evaluate(Q, U, X, P, Z=Z, A=None if explicit else Acc, jac=jac, W=W, L=Lam, E=inp["E"],
                                   motion_fixed=lay.prescribed, dense=explicit)
        kin = None
        F = np.empty((n, ny))
        if lay.prescribed:
            F[:] = res["Zd"]
            R = np.hstack([res["R"], res["Rw"]])
        else:
            F[:, :nq] = U
            udot = res["A"] if explicit else Acc
            F[:, nq:2 * nq] = udot
            F[:, 2 * nq:] = res["Zd"]
            R = res["Rw"] if explicit else np.hstack([res["R"], res["Rw"]])
            if self.nkin:
                c = self.kernel.constraints(Q, U, Lam, inp["Gam"], A=udot)
                phidd = np.einsum("nlq,nq->nl", c["G"], udot) + c["bias"]
                kin = {"K": np.hstack([c["phi"], c["phid"], phidd])}
                # Posa et al.'s velocity correction, as Moco applies it: q̇ = u + G(q)ᵀγ̃ at interval midpoints
                # (γ̃ is fixed to 0 at mesh points), so the Simpson rule for q sees it
                if lay.ngam:
                    F[:, :nq] += c["GtG"]
        if not jac:
            return F, None, None, R, None, None, kin
        if explicit:
            dF = np.zeros((n, ny, self.nb))
            dFp = np.zeros((n, ny, npar))
            zrows = slice(ny - lay.nz, ny)
            dF[:, zrows, :] = self._block(res["JZ"], lay.nz, n)
            dFp[:, zrows, :] = res["JZ"]["dp"]
            dR, dRp = self._block(res["JW"], lay.nw, n), res["JW"]["dp"]
        else:
            dF, dFp, dR, dRp = self._scatter(*res["entries"], n)
        if not lay.prescribed:
            dF[:, np.arange(nq), lay.u.start + np.arange(nq)] = 1.0
            if explicit:
                dUdot = self._block(res["J"], nq, n)
                dUdotp = res["J"]["dp"]
            else:
                dUdot = np.zeros((n, nq, self.nb))
                dUdot[:, np.arange(nq), lay.acc.start + np.arange(nq)] = 1.0
                dUdotp = np.zeros((n, nq, npar))
            dF[:, nq:2 * nq, :] = dUdot
            dFp[:, nq:2 * nq, :] = dUdotp
            if self.nkin:
                G = c["G"]
                dK = np.zeros((n, self.nkin, self.nb))
                dKp = np.zeros((n, self.nkin, npar))
                dK[:, :nl, lay.q] = G
                dK[:, nl:2 * nl, lay.q] = c["phid_q"]
                dK[:, nl:2 * nl, lay.u] = G
                # φ̈ = G(q) u̇ + Ġu: explicit terms in q, u, plus G times u̇'s derivatives
                dK[:, 2 * nl:, :] = np.einsum("nlq,nqb->nlb", G, dUdot)
                dK[:, 2 * nl:, lay.q] += c["Ga_q"] + c["bias_q"]
                dK[:, 2 * nl:, lay.u] += c["bias_u"]
                dKp[:, 2 * nl:, :] = np.einsum("nlq,nqp->nlp", G, dUdotp)
                if lay.ngam:
                    dF[:, :nq, lay.q] += c["GtG_q"]
                    dF[:, :nq, lay.gam] += np.transpose(G, (0, 2, 1))
                kin.update(dK=dK, dKp=dKp)
        return F, dF, dFp, R, dR, dRp, kin

    def node_outputs(self, idx: np.ndarray, B: np.ndarray, P: np.ndarray, jac: bool) -> tuple[dict, dict]:
        """The goals' model outputs at grid points ``idx``: values ``{name: (n, k)}`` and, with ``jac``,
        ``{name: (d/d block (n, k, nb), d/dP (n, k, np))}``."""
        if not self.outputs:
            return {}, {}
        inp = self.node_inputs(idx, B)
        out = self.kernel.outputs(self.outputs, inp["Q"], inp["U"], inp["X"], P, Z=inp["Z"], A=inp["A"],
                                  W=inp["W"], L=inp["L"], jac=jac, E=inp["E"], motion_fixed=self.layout.prescribed)
        values = {n: out[n] for n in self.outputs}
        if not jac:
            return values, {}
        n, k = B.shape[0], None
        derivs = {}
        for name in self.outputs:
            J = out["J"][name]
            k = values[name].shape[1]
            derivs[name] = (self._block(J, k, n), J["dp"])
        return values, derivs

    def node_data(self, idx: np.ndarray, B: np.ndarray, P: np.ndarray, t: np.ndarray, jac: bool) -> NodeData:
        """A goal's :class:`~moco_lab.ocp.goals.NodeData` at grid points ``idx`` (and output derivatives)."""
        lay = self.layout
        outs, douts = self.node_outputs(idx, B, P, jac)
        Y = B[:, lay.y]
        return NodeData(t, Y, B[:, lay.x], B[:, lay.a], P, outs), douts

    def chain_goal_derivative(self, d: dict, douts: dict, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Derivatives of a goal quantity w.r.t. node blocks ``(n, nb)``, parameters ``(n, np)`` and time ``(n,)``."""
        lay = self.layout
        dB = np.zeros((n, self.nb))
        for key, sl in (("Y", lay.y), ("X", lay.x), ("A", lay.a)):
            if d.get(key) is not None:
                dB[:, sl] += d[key]
        dP = np.zeros((n, self.npar)) if d.get("P") is None else np.array(d["P"], float).reshape(n, self.npar)
        for name, g in (d.get("outputs") or {}).items():
            Jb, Jp = douts[name]
            dB += np.einsum("nk,nkb->nb", g, Jb)
            dP += np.einsum("nk,nkp->np", g, Jp)
        dt = np.zeros(n) if d.get("t") is None else np.asarray(d["t"], float)
        return dB, dP, dt

    # ---------------------------------------------------------- endpoint goals
    def _add_endpoint_goals(self):
        """One binding per goal whose value is an endpoint function, a division or a constrained integral."""
        self.endpoint_goals = [b for b in self.bound_goals if b.native is None and not b.plain_integral_cost]
        self.endpoints = []
        for b in self.endpoint_goals:
            ep = Endpoint(self, b)
            self.endpoints.append(ep)
            if b.mode == "cost":
                ep.evaluator = self._exact(self.prog.AddCost(drake_callable(ep.cost, scalar=True), ep.vars), ep.cost)
            else:
                ep.evaluator = self._exact(self.prog.AddConstraint(drake_callable(ep.constraint, scalar=False), b.lower,
                                                                   b.upper, ep.vars, description=f"goal {b.name}"),
                                           ep.constraint)

    def endpoint(self, Y: np.ndarray, X: np.ndarray, name: str, row: int) -> EndpointData:
        """Row ``row`` of the state or control column ``name`` (variables or values)."""
        if name in self.state_names:
            return Y[row, self.state_names.index(name)]
        return X[row, self.control_names.index(name)]

    def _named(self, y, x, p):
        return (NamedValues(self.state_names, y), NamedValues(self.control_names, x),
                NamedValues(self.param_names, p))

    def _add_path_constraints(self):
        ny, nx = self.ny, self.nx
        for pc in self.problem.path_constraints:
            for k in np.flatnonzero(self.grid.is_mesh):
                tau = self.grid.tau[k]
                vars_k = np.concatenate([[self.t0, self.tf], self.Y[k], self.X[k], self.P])

                def con(z, tau=tau, pc=pc):
                    t = z[0] + tau * (z[1] - z[0])
                    y, x, p = z[2:2 + ny], z[2 + ny:2 + ny + nx], z[2 + ny + nx:]
                    try:
                        out = pc.func(t, *self._named(y, x, p))
                    except TypeError as err:
                        from ..ocp.goals import explain_autodiff_error

                        raise explain_autodiff_error(err, f"Path constraint {pc.name!r}") from err
                    return np.atleast_1d(np.asarray(out, dtype=z.dtype))

                self.prog.AddConstraint(con, pc.lower, pc.upper, vars_k, description=f"path {pc.name}")

    def bounds_time(self, k: int) -> float:
        """Grid point ``k``'s time for bounds that are functions of time (``Problem.validate`` has refused such
        bounds on a free time grid, so the times are known; on a free grid the bounds are constants and any time
        serves)."""
        p = self.problem
        t0, tf = p.time_initial.lower, p.time_final.lower
        return t0 + self.grid.tau[k] * (tf - t0)

    def path_bounds(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The output path constraints' row bounds at grid point ``k``."""
        if not self.path_rows:
            return np.zeros(0), np.zeros(0)
        t = self.bounds_time(k)
        lows, highs = zip(*(pr.bounds(t) for pr in self.path_rows))
        return np.concatenate(lows), np.concatenate(highs)

    def _add_bound_constraints(self):
        """Moco's control and state bound constraints (:mod:`moco_lab.ocp.bound_constraints`): linear rows at the
        mesh points, ``lower(t) <= v <= upper(t)`` (``t``: :meth:`bounds_time`)."""
        p = self.problem
        for c in p.bound_constraints:
            columns = c.check_names(self.control_names if c.kind == "control" else self.state_names)
            if not columns:
                continue  # as Moco: no paths, no constraint
            V = self.X if c.kind == "control" else self.Y
            for k in np.flatnonzero(self.grid.is_mesh):
                lo, hi = c.bounds_at(self.bounds_time(k))
                n = len(columns)
                self.prog.AddLinearConstraint(np.eye(n), np.full(n, lo), np.full(n, hi), V[k, columns]).evaluator(
                ).set_description(f"bound {c.name}")

    # ------------------------------------------------------------ evaluation
    def unpack(self, values: np.ndarray) -> dict:
        """Split a full solution vector (``prog`` order) into named arrays."""
        def idx(V):
            return self.prog.FindDecisionVariableIndices(V.reshape(-1)) if V.size else np.zeros(0, int)

        out = {"t0": values[idx(np.array([self.t0]))][0], "tf": values[idx(np.array([self.tf]))][0]}
        for key, V in (("Y", self.Y), ("X", self.X), ("A", self.A)):
            out[key] = values[idx(V)].reshape(V.shape) if V.size else np.zeros(V.shape)
        out["P"] = values[idx(self.P)] if self.npar else np.zeros(0)
        return out

    def goal_values(self, sol: dict) -> dict[str, float]:
        """Weighted value of each goal at an unpacked solution (0 for goals enforced as constraints).

        With ``minimize_lagrange_multipliers``, the multiplier penalty is
        reported as ``"lagrange_multipliers"`` (so the values sum to the objective).
        """
        t0, tf, P = sol["t0"], sol["tf"], sol["P"]
        T = t0 + self.grid.tau * (tf - t0)
        q = self.grid.quadrature * (tf - t0)
        ng = self.grid.num_points
        idx = np.arange(ng)
        B = np.hstack([sol["Y"], sol["X"], sol["A"]])
        data, _ = self.node_data(idx, B, P, T, False)
        info = {"tf": tf, "t0": t0, "time": T, "quadrature": q, "Y": sol["Y"], "X": sol["X"], "A": sol["A"], "P": P,
                "endpoint": lambda name, row: self.endpoint(sol["Y"], sol["X"], name, row)}
        values = {}
        for b in self.bound_goals:
            if b.native is not None:
                values[b.name] = float(b.value(info)) if b.value is not None else 0.0
                continue
            integral = float(matmul(q, b.integrand(data, False)[0])) if b.integrand is not None else 0.0
            if b.plain_integral_cost:
                values[b.name] = b.weight * integral
                continue
            E = EndpointData(t0, tf, P, integral, data.row(0), data.row(ng - 1))
            g = goal_value(b, E, False)[0]
            values[b.name] = b.weight * float(np.sum(g)) if b.mode == "cost" else 0.0
        return values

    def describe(self) -> dict:
        """Size of the nonlinear program (variables, constraints, bindings, declared Jacobian non-zeros)."""
        prog = self.prog
        ncons = sum(b.evaluator().num_constraints() for b in prog.GetAllConstraints()
                    if b not in prog.bounding_box_constraints())
        return {
            "scheme": self.scheme,
            "mode": self.mode,
            "num_mesh_intervals": self.grid.num_mesh_intervals,
            "num_grid_points": self.grid.num_points,
            "num_variables": prog.num_vars(),
            "num_constraints": int(ncons),
            "num_dynamics_bindings": len(self.chunks),
            "declared_dynamics_nonzeros": int(sum(len(c.sparsity) for c in self.chunks)),
        }
