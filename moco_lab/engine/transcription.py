"""Direct collocation: transcribe a :class:`Problem` into a Drake ``MathematicalProgram``.

Schemes (seed 000, appendix): **trapezoidal** (Eq. 7; implicit dynamics Eq. 8)
and **separated Hermite–Simpson** (Eq. 12; implicit Eq. 15) with midpoint
states as variables and midpoint controls constrained to the mean of the
neighbouring mesh values, as in Moco.

Decision variables, all visible on the program (:attr:`Transcription.prog`):

=========  ==============  ===================================================
name       shape           meaning
=========  ==============  ===================================================
``t0``     scalar          initial time
``tf``     scalar          final time
``Y``      (ng, ny)        states on the grid, columns ``problem.state_names()``
``X``      (ng, nx)        controls, columns ``problem.control_names()``
``A``      (ng, na)        algebraic variables: generalized accelerations
                           (implicit mode), then the normalized tendon force
                           derivatives of muscles with implicit tendon dynamics
``P``      (np,)           parameters
=========  ==============  ===================================================

The grid has ``ng = N + 1`` points (trapezoidal) or ``2N + 1`` (mesh points and
interval midpoints interleaved, Hermite–Simpson) on a uniform mesh in
normalized time ``tau`` in [0, 1], ``t = t0 + tau (tf - t0)``.

Defect constraints and integral goals are evaluated in *chunks* of
``chunk_size`` mesh intervals: one Python callback per chunk evaluates every
node of the chunk with the vectorized kernels of :mod:`moco_lab.dynamics` and
returns exact Jacobians; each binding declares its gradient sparsity.
"""
from __future__ import annotations

import numpy as np
from pydrake.solvers import MathematicalProgram

from ..modeling.muscle import IMPLICIT_DERIVATIVE_BOUNDS
from ..ocp.goals import ControlGoal, FinalTimeGoal, PeriodicityGoal, StateTrackingGoal, UserGoal
from ..ocp.problem import Problem
from ..util.names import NamedValues
from .callbacks import drake_callable
from .collocation import MODES, SCHEMES, Grid, collocation_defects, quadrature_weights
from .kernel import kernel_for




class Transcription:
    """The nonlinear program of a problem under given solver settings.

    Parameters
    ----------
    problem : Problem
    settings : moco_lab.solver.SolverSettings

    Attributes
    ----------
    prog : pydrake.solvers.MathematicalProgram
    grid : Grid
    t0, tf, Y, X, A, P : Drake decision variables (see module docstring).
    """

    def __init__(self, problem: Problem, settings):
        settings.validate()
        problem.validate()
        self.problem = problem
        self.settings = settings
        self.model = model = problem.model
        self.scheme = settings.transcription_scheme
        self.mode = settings.multibody_dynamics_mode
        self.grid = grid = Grid(self.scheme, settings.num_mesh_intervals)
        self.param_names = [p.name for p in problem.parameters]
        self.kernel = kernel_for(model, tuple(p.property for p in problem.parameters))
        self.state_names = problem.state_names()
        self.control_names = problem.control_names()
        self.nq = model.nq
        self.ny = len(self.state_names)
        self.nx = len(self.control_names)
        self.nacc = self.nq if self.mode == "implicit" else 0
        self.derivative_names = (model.accel_names() if self.nacc else []) + model.implicit_derivative_names()
        #: residual rows per node: implicit multibody dynamics, then implicit tendon dynamics
        self.nres = len(self.derivative_names)
        # kinematic constraints: multipliers λ at every grid point; Hermite–Simpson adds the
        # velocity corrections γ̃ (variables at interval midpoints, fixed to 0 at mesh points)
        self.multiplier_names = model.multiplier_names() if getattr(model, "constraints", None) else []
        self.nl = len(self.multiplier_names)
        #: Bordalba et al. (2023): projection of each interval's end state onto the constraint manifold
        self.bordalba = bool(self.nl) and settings.kinematic_constraint_method == "Bordalba2023"
        self.slack_names = ([n.replace("/lambda_", "/gamma_") for n in self.multiplier_names]
                            if self.scheme == "hermite-simpson" and not self.bordalba else [])
        self.ngam = len(self.slack_names)
        #: Bordalba: projection slacks μ (position and velocity level) and projected end states x̃
        self.projection_names = ([n.replace("/lambda_", f"/mu_{lvl}_") for lvl in ("p", "v")
                                  for n in self.multiplier_names] if self.bordalba else [])
        self.nmu = len(self.projection_names)
        self.nxt = 2 * self.nq if self.bordalba else 0
        # kinematic-constraint rows: columns of K = [φ, φ̇, φ̈] used at mesh points and at midpoints
        nl = self.nl
        if not nl:
            mesh_cols, mid_cols = [], []
        elif self.bordalba:  # φ, φ̇ at mesh points; φ̈ at every grid point
            mesh_cols, mid_cols = list(range(3 * nl)), list(range(2 * nl, 3 * nl))
        elif self.scheme == "trapezoidal":  # Eq. 7: φ at mesh points
            mesh_cols, mid_cols = list(range(nl)), []
        else:  # Posa et al.: φ, φ̇, φ̈ at mesh points
            mesh_cols, mid_cols = list(range(3 * nl)), []
        self.kin_mesh_cols, self.kin_mid_cols = np.array(mesh_cols, int), np.array(mid_cols, int)
        self.nkin = 3 * nl
        # columns of the algebraic block A: [u̇ (implicit), w, λ, γ̃, x̃, μ]
        self.a_gam = self.nres + nl
        self.a_xt = self.a_gam + self.ngam
        self.a_mu = self.a_xt + self.nxt
        self.na = self.a_mu + self.nmu
        self.npar = len(problem.parameters)
        self.nb = self.ny + self.nx + self.na
        #: grid points where a projection (x̃, μ) applies: mesh points that end an interval
        self.projection_nodes = grid.is_mesh.copy()
        self.projection_nodes[0] = False

        prog = self.prog = MathematicalProgram()
        ng = grid.num_points
        self.t0 = prog.NewContinuousVariables(1, "t0")[0]
        self.tf = prog.NewContinuousVariables(1, "tf")[0]
        self.Y = self._new(ng, self.ny, "y")
        self.X = self._new(ng, self.nx, "x")
        self.A = self._new(ng, self.na, "a")
        self.P = prog.NewContinuousVariables(self.npar, "p") if self.npar else np.empty(0, dtype=object)
        self._add_bounds()
        self._add_midpoint_controls()
        self.enabled_goals = [g for g in problem.goals if g.enabled]
        #: weight w_λ of Moco's multiplier penalty w_λ ∫ ‖λ‖² dt (0 when off or without constraints)
        self.multiplier_weight = (float(settings.lagrange_multiplier_weight)
                                  if settings.minimize_lagrange_multipliers and self.nl else 0.0)
        self.integral_goals = [g for g in self.enabled_goals if isinstance(g, (ControlGoal, StateTrackingGoal))]
        self._add_chunks()
        self._add_other_goals()
        self._add_path_constraints()

    # ------------------------------------------------------------ variables
    def _new(self, rows, cols, name):
        if cols == 0:
            return np.empty((rows, 0), dtype=object)
        return self.prog.NewContinuousVariables(rows, cols, name)

    def all_variables(self) -> np.ndarray:
        return self.prog.decision_variables()

    def _add_bounds(self):
        p, grid = self.problem, self.grid
        ng = grid.num_points
        lo, hi = [], []
        variables = [np.array([self.t0]), np.array([self.tf])]
        lo += [p.time_initial.lower, p.time_final.lower]
        hi += [p.time_initial.upper, p.time_final.upper]
        self.state_infos = [p.state_info(n) for n in self.state_names]
        self.control_infos = [p.control_info(n) for n in self.control_names]
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
            vb = float(self.settings.implicit_acceleration_bounds)
            nw = self.nres - self.nacc
            mlo, mhi = self.settings.multiplier_bounds
            glo, ghi = self.settings.velocity_correction_bounds
            xt_lo = [i.bounds.lower for i in self.state_infos[:self.nxt]]
            xt_hi = [i.bounds.upper for i in self.state_infos[:self.nxt]]
            lo_row = ([-vb] * self.nacc + [IMPLICIT_DERIVATIVE_BOUNDS[0]] * nw + [mlo] * self.nl + [glo] * self.ngam
                      + xt_lo + [self.settings.projection_slack_bounds[0]] * self.nmu)
            hi_row = ([vb] * self.nacc + [IMPLICIT_DERIVATIVE_BOUNDS[1]] * nw + [mhi] * self.nl + [ghi] * self.ngam
                      + xt_hi + [self.settings.projection_slack_bounds[1]] * self.nmu)
            Lo, Hi = np.tile(lo_row, (ng, 1)), np.tile(hi_row, (ng, 1))
            gcols = slice(self.a_gam, self.a_xt)
            Lo[grid.is_mesh, gcols] = 0.0  # γ̃ lives at interval midpoints only
            Hi[grid.is_mesh, gcols] = 0.0
            if self.bordalba:  # x̃, μ live at the mesh points that end an interval
                pcols = slice(self.a_xt, self.na)
                Lo[~self.projection_nodes, pcols] = 0.0
                Hi[~self.projection_nodes, pcols] = 0.0
                for k, info in enumerate(self.state_infos[:self.nxt]):
                    if info.final is not None:
                        Lo[-1, self.a_xt + k], Hi[-1, self.a_xt + k] = info.final.lower, info.final.upper
            variables.append(self.A.reshape(-1))
            lo.append(Lo.reshape(-1))
            hi.append(Hi.reshape(-1))
        for par in p.parameters:
            lo.append([par.bounds.lower])
            hi.append([par.bounds.upper])
        if self.npar:
            variables.append(self.P)
        self.prog.AddBoundingBoxConstraint(np.hstack([np.atleast_1d(np.asarray(v, float)) for v in lo]),
                                           np.hstack([np.atleast_1d(np.asarray(v, float)) for v in hi]),
                                           np.hstack(variables))

    def _add_midpoint_controls(self):
        if self.scheme != "hermite-simpson" or self.nx == 0:
            return
        coeffs = np.array([[1.0, -0.5, -0.5]])
        for i in range(self.grid.num_mesh_intervals):
            for j in range(self.nx):
                self.prog.AddLinearEqualityConstraint(
                    coeffs, [0.0], [self.X[2 * i + 1, j], self.X[2 * i, j], self.X[2 * i + 2, j]]
                ).evaluator().set_description(f"midpoint control {self.control_names[j]}")

    # --------------------------------------------------------------- chunks
    def _add_chunks(self):
        N = self.grid.num_mesh_intervals
        size = max(1, int(self.settings.chunk_size))
        self.chunks = []
        for i0 in range(0, N, size):
            chunk = _Chunk(self, i0, min(N, i0 + size))
            self.chunks.append(chunk)
            b = self.prog.AddConstraint(drake_callable(chunk.constraint, scalar=False), chunk.lower, chunk.upper, chunk.vars,
                                        description=f"dynamics [{i0}, {chunk.i1})")
            b.evaluator().SetGradientSparsityPattern(chunk.sparsity)
            if self.integral_goals or self.multiplier_weight:
                self.prog.AddCost(drake_callable(chunk.cost, scalar=True), chunk.vars)

    def node_dynamics(self, Y, X, Acc, P, jac: bool):
        """Dynamics at nodes: state derivatives ``F``, residuals ``R`` and kinematic-constraint rows ``K``.

        The state is ``y = [q, u, z]`` (z: muscle states); ``F = [u, udot, zdot]``
        with ``udot`` from forward dynamics (explicit) or the acceleration
        variables (implicit). The node block is ``[y, x, a]`` with ``a = [udot
        (implicit), w (implicit tendons), λ, γ̃]``.

        Returns
        -------
        F : (n, ny); dF : (n, ny, nb) w.r.t. the node block; dFp : (n, ny, np);
        R : (n, nres); dR : (n, nres, nb); dRp : (n, nres, np);
        kin : dict or None (models with kinematic constraints): ``K`` (n, nkin)
            rows ``φ`` (trapezoidal) or ``[φ, φ̇, φ̈]`` (Hermite–Simpson);
            ``corr`` (n, nq) the velocity correction ``G(q)ᵀγ̃``; with ``jac``,
            ``dK`` (n, nkin, nb), ``dKp`` (n, nkin, np) and ``dcorr`` (n, nq, nb).
        """
        nq, ny, nx, npar, nacc, nres, nl = self.nq, self.ny, self.nx, self.npar, self.nacc, self.nres, self.nl
        n = Y.shape[0]
        Q, U, Z = Y[:, :nq], Y[:, nq:2 * nq], Y[:, 2 * nq:]
        Lam = Acc[:, nres:nres + nl] if nl else None
        Gam = Acc[:, self.a_gam:self.a_gam + self.ngam]
        Acc, W = Acc[:, :nacc], Acc[:, nacc:nres]
        explicit = self.mode == "explicit"
        res = self.kernel.evaluate(Q, U, X, P, Z=Z, A=None if explicit else Acc, jac=jac, W=W, L=Lam)
        F = np.empty((n, ny))
        F[:, :nq] = U
        udot = res["A"] if explicit else Acc
        F[:, nq:2 * nq] = udot
        F[:, 2 * nq:] = res["Zd"]
        R = res["Rw"] if explicit else np.hstack([res["R"], res["Rw"]])
        kin = None
        if nl:
            c = res["constraints"]
            phidd = np.einsum("nlq,nq->nl", c["G"], udot) + c["bias"]
            K = np.hstack([c["phi"], c["phid"], phidd])
            if self.ngam:
                c_gam = self.kernel.constraints(Q, U, Lam, Gam[:, :self.ngam])
                corr = c_gam["GtG"]
            else:
                corr = np.zeros((n, nq))
            kin = {"K": K, "corr": corr}
            # Posa et al.'s velocity correction, as Moco applies it: q̇ = u + G(q)ᵀγ̃ at interval
            # midpoints (γ̃ is fixed to 0 at mesh points), so the Simpson rule for q sees it
            F[:, :nq] += corr
        if not jac:
            return F, None, None, R, None, None, kin

        def block(J, rows):
            """Derivatives w.r.t. the node block [q, u, z, x, accelerations, w, λ, γ̃] from a kernel Jacobian dict."""
            B = np.zeros((n, rows, self.nb))
            B[:, :, :nq] = J["dq"]
            B[:, :, nq:2 * nq] = J["du"]
            B[:, :, 2 * nq:ny] = J["dz"]
            B[:, :, ny:ny + nx] = J["dx"]
            if "da" in J:
                B[:, :, ny + nx:ny + nx + nacc] = J["da"]
            B[:, :, ny + nx + nacc:ny + nx + nres] = J["dw"]
            if nl:
                B[:, :, ny + nx + nres:ny + nx + nres + nl] = J["dl"]
            return B

        dF = np.zeros((n, ny, self.nb))
        dF[:, np.arange(nq), nq + np.arange(nq)] = 1.0
        dFp = np.zeros((n, ny, npar))
        dF[:, 2 * nq:, :] = block(res["JZ"], ny - 2 * nq)
        dFp[:, 2 * nq:, :] = res["JZ"]["dp"]
        dRw = block(res["JW"], res["Rw"].shape[1])
        if explicit:
            dUdot = block(res["J"], nq)
            dUdotp = res["J"]["dp"]
            dF[:, nq:2 * nq, :] = dUdot
            dFp[:, nq:2 * nq, :] = dUdotp
            dR, dRp = dRw, res["JW"]["dp"]
        else:
            dUdot = np.zeros((n, nq, self.nb))
            dUdot[:, np.arange(nq), ny + nx + np.arange(nq)] = 1.0
            dUdotp = np.zeros((n, nq, npar))
            dF[:, nq:2 * nq, :] = dUdot
            dR = np.concatenate([block(res["J"], nq), dRw], axis=1)
            dRp = np.concatenate([res["J"]["dp"], res["JW"]["dp"]], axis=1)
        if nl:
            c = res["constraints"]
            G = c["G"]
            dK = np.zeros((n, self.nkin, self.nb))
            dKp = np.zeros((n, self.nkin, npar))
            dK[:, :nl, :nq] = G
            dcorr = np.zeros((n, nq, self.nb))
            dK[:, nl:2 * nl, :nq] = c["phid_q"]
            dK[:, nl:2 * nl, nq:2 * nq] = G
            # φ̈ = G(q) u̇ + Ġu: explicit terms in q, u, plus G times u̇'s derivatives
            Ga_q = self.kernel.constraints(Q, U, A=udot)["Ga_q"]
            dK[:, 2 * nl:, :] = np.einsum("nlq,nqb->nlb", G, dUdot)
            dK[:, 2 * nl:, :nq] += Ga_q + c["bias_q"]
            dK[:, 2 * nl:, nq:2 * nq] += c["bias_u"]
            dKp[:, 2 * nl:, :] = np.einsum("nlq,nqp->nlp", G, dUdotp)
            if self.ngam:
                dcorr[:, :, :nq] = c_gam["GtG_q"]
                g0 = ny + nx + self.a_gam
                dcorr[:, :, g0:g0 + self.ngam] = np.transpose(G, (0, 2, 1))
            dF[:, :nq, :] += dcorr
            kin.update(dK=dK, dKp=dKp, dcorr=dcorr)
        return F, dF, dFp, R, dR, dRp, kin

    # ---------------------------------------------------------- other goals
    def _add_other_goals(self):
        prog = self.prog
        if self.bordalba and self.settings.minimize_state_projection_distance:
            w, n = float(self.settings.state_projection_distance_weight), self.nxt
            I = np.eye(n)
            Qm = 2 * w * np.block([[I, -I], [-I, I]])
            for k in np.flatnonzero(self.projection_nodes):
                v = np.concatenate([self.Y[k, :n], self.A[k, self.a_xt:self.a_xt + n]])
                prog.AddQuadraticCost(Qm, np.zeros(2 * n), v, is_convex=True)
        for g in self.enabled_goals:
            if isinstance(g, FinalTimeGoal):
                prog.AddLinearCost(np.array([g.weight]), 0.0, np.array([self.tf]))
            elif isinstance(g, PeriodicityGoal):
                for a, b, neg in g.pairs:
                    s = -1.0 if neg else 1.0
                    v = [self._endpoint(self.Y, self.X, b, -1), self._endpoint(self.Y, self.X, a, 0)]
                    if g.mode == "endpoint_constraint":
                        prog.AddLinearEqualityConstraint(np.array([[1.0, -s]]), [0.0], v)
                    else:
                        Qm = 2 * g.weight * np.array([[1.0, -s], [-s, 1.0]])
                        prog.AddQuadraticCost(Qm, np.zeros(2), v, is_convex=True)
            elif isinstance(g, UserGoal):
                self._add_user_goal(g)

    def _endpoint(self, Y, X, name: str, row: int):
        """Row ``row`` of the state or control column ``name`` (variables or values)."""
        if name in self.state_names:
            return Y[row, self.state_names.index(name)]
        return X[row, self.control_names.index(name)]

    def _named(self, y, x, p):
        return (NamedValues(self.state_names, y), NamedValues(self.control_names, x),
                NamedValues(self.param_names, p))

    def _add_user_goal(self, g: UserGoal):
        prog, ny, nx = self.prog, self.ny, self.nx
        w = g.weight
        if g.integrand_fn is not None:
            for k, (tau, c) in enumerate(zip(self.grid.tau, self.grid.quadrature)):
                vars_k = np.concatenate([[self.t0, self.tf], self.Y[k], self.X[k], self.P])

                def cost(z, tau=tau, c=c):
                    t0, tf = z[0], z[1]
                    y, x, p = z[2:2 + ny], z[2 + ny:2 + ny + nx], z[2 + ny + nx:]
                    t = t0 + tau * (tf - t0)
                    return w * c * (tf - t0) * g.integrand_fn(t, *self._named(y, x, p))

                prog.AddCost(cost, vars_k)
        if g.endpoint_fn is not None:
            vars_e = np.concatenate([[self.t0, self.tf], self.Y[0], self.Y[-1], self.X[0], self.X[-1], self.P])

            def ecost(z):
                t0, tf = z[0], z[1]
                o = 2
                y0, yf = z[o:o + ny], z[o + ny:o + 2 * ny]
                o += 2 * ny
                x0, xf = z[o:o + nx], z[o + nx:o + 2 * nx]
                p = z[o + 2 * nx:]
                s0, c0, pp = self._named(y0, x0, p)
                sf, cf, _ = self._named(yf, xf, p)
                return w * g.endpoint_fn(t0, tf, s0, sf, c0, cf, pp)

            prog.AddCost(ecost, vars_e)

    def _add_path_constraints(self):
        ny, nx = self.ny, self.nx
        for pc in self.problem.path_constraints:
            for k in np.flatnonzero(self.grid.is_mesh):
                tau = self.grid.tau[k]
                vars_k = np.concatenate([[self.t0, self.tf], self.Y[k], self.X[k], self.P])

                def con(z, tau=tau, pc=pc):
                    t = z[0] + tau * (z[1] - z[0])
                    y, x, p = z[2:2 + ny], z[2 + ny:2 + ny + nx], z[2 + ny + nx:]
                    out = pc.func(t, *self._named(y, x, p))
                    return np.atleast_1d(np.asarray(out, dtype=z.dtype))

                self.prog.AddConstraint(con, pc.lower, pc.upper, vars_k, description=f"path {pc.name}")

    # ------------------------------------------------------------ evaluation
    def unpack(self, values: np.ndarray) -> dict:
        """Split a full solution vector (``prog`` order) into named arrays."""
        idx = lambda V: self.prog.FindDecisionVariableIndices(V.reshape(-1)) if V.size else np.zeros(0, int)
        out = {"t0": values[idx(np.array([self.t0]))][0], "tf": values[idx(np.array([self.tf]))][0]}
        for key, V in (("Y", self.Y), ("X", self.X), ("A", self.A)):
            out[key] = values[idx(V)].reshape(V.shape) if V.size else np.zeros(V.shape)
        out["P"] = values[idx(self.P)] if self.npar else np.zeros(0)
        return out

    def goal_values(self, sol: dict) -> dict[str, float]:
        """Weighted value of each enabled goal at an unpacked solution.

        With ``minimize_lagrange_multipliers``, the multiplier penalty is
        reported as ``"lagrange_multipliers"`` (so the values sum to the objective).
        """
        t0, tf, Y, X, P = sol["t0"], sol["tf"], sol["Y"], sol["X"], sol["P"]
        T = t0 + self.grid.tau * (tf - t0)
        q = self.grid.quadrature * (tf - t0)
        values = {}
        if self.bordalba and self.settings.minimize_state_projection_distance:
            pn, n = self.projection_nodes, self.nxt
            d = sol["A"][pn, self.a_xt:self.a_xt + n] - sol["Y"][pn, :n]
            values["state_projection"] = float(self.settings.state_projection_distance_weight * np.sum(d ** 2))
        if self.multiplier_weight:
            Lam = sol["A"][:, self.nres:self.nres + self.nl]
            values["lagrange_multipliers"] = self.multiplier_weight * float(q @ np.sum(Lam ** 2, axis=1))
        for g in self.enabled_goals:
            if g in self.integral_goals:
                s = g.integrand(T, Y, X, P)[0]
                values[g.name] = g.weight * float(q @ s)
            elif isinstance(g, FinalTimeGoal):
                values[g.name] = g.weight * float(tf)
            elif isinstance(g, PeriodicityGoal):
                if g.mode == "cost":
                    tot = 0.0
                    for a, b, neg in g.pairs:
                        s = -1.0 if neg else 1.0
                        tot += (self._endpoint(Y, X, b, -1) - s * self._endpoint(Y, X, a, 0)) ** 2
                    values[g.name] = g.weight * tot
                else:
                    values[g.name] = 0.0
            elif isinstance(g, UserGoal):
                v = 0.0
                if g.integrand_fn is not None:
                    for k in range(self.grid.num_points):
                        v += q[k] * float(g.integrand_fn(T[k], *self._named(Y[k], X[k], P)))
                if g.endpoint_fn is not None:
                    s0, c0, pp = self._named(Y[0], X[0], P)
                    sf, cf, _ = self._named(Y[-1], X[-1], P)
                    v += float(g.endpoint_fn(t0, tf, s0, sf, c0, cf, pp))
                values[g.name] = g.weight * v
        return values

    def describe(self) -> dict:
        """Size of the nonlinear program (variables, constraints, bindings)."""
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
        }


class _Chunk:
    """Defects (and implicit residuals) of mesh intervals ``[i0, i1)`` in one binding."""

    def __init__(self, tr: Transcription, i0: int, i1: int):
        self.tr = tr
        self.i0, self.i1 = i0, i1
        s = tr.grid.stride
        self.g = np.arange(s * i0, s * i1 + 1)
        self.nloc = self.g.size
        self.L = i1 - i0
        ny = tr.ny
        self.off = 2 + tr.npar
        blocks = [np.concatenate([tr.Y[k], tr.X[k], tr.A[k]]) for k in self.g]
        self.vars = np.concatenate([[tr.t0, tr.tf], tr.P, *blocks])
        self.nvar = self.vars.size
        self.dtau = np.diff(tr.grid.mesh)[i0:i1]
        self.tau = tr.grid.tau[self.g]
        # the chunk's first and last nodes are shared with neighbouring chunks:
        # quadrature weights only from this chunk's own intervals
        self.quad = quadrature_weights(tr.scheme, self.dtau)
        # implicit residual rows at the nodes this chunk owns
        last = i1 == tr.grid.num_mesh_intervals
        self.owned = np.arange(self.nloc if last else self.nloc - 1)
        # kinematic constraints at the owned nodes: (local node, columns of K = [φ, φ̇, φ̈])
        self.kin_rows = []
        for k in self.owned if tr.nl else []:
            cols = tr.kin_mesh_cols if tr.grid.is_mesh[self.g[k]] else tr.kin_mid_cols
            if cols.size:
                self.kin_rows.append((int(k), cols))
        self.nkin_rows = sum(c.size for _, c in self.kin_rows)
        # Bordalba: projection rows x − x̃ − F_xᵀμ at owned mesh points that end an interval
        self.proj_nodes = np.array([k for k in self.owned if tr.projection_nodes[self.g[k]]], int) \
            if tr.bordalba else np.zeros(0, int)
        self.ndef = self.L * ny * (1 if tr.scheme == "trapezoidal" else 2)
        self.nres_rows = self.owned.size * tr.nres
        self.nout = self.ndef + self.nres_rows + self.nkin_rows + self.proj_nodes.size * tr.nxt
        self.lower = np.zeros(self.nout)
        self.upper = np.zeros(self.nout)
        self.sparsity = self._pattern()

    def _node_cols(self, k):
        o = self.off + k * self.tr.nb
        return np.arange(o, o + self.tr.nb)

    def _pattern(self):
        tr = self.tr
        ny, na = tr.ny, tr.nres
        glob = np.arange(self.off)
        pairs = []
        per = 1 if tr.scheme == "trapezoidal" else 2
        for l in range(self.L):
            nodes = [l, l + 1] if per == 1 else [2 * l, 2 * l + 1, 2 * l + 2]
            cols = np.concatenate([glob, *[self._node_cols(k) for k in nodes]])
            for r in range(l * ny * per, (l + 1) * ny * per):
                pairs.extend((r, int(c)) for c in cols)
        for j, k in enumerate(self.owned):
            cols = np.concatenate([np.arange(2, self.off), self._node_cols(k)])
            for r in range(self.ndef + j * na, self.ndef + (j + 1) * na):
                pairs.extend((r, int(c)) for c in cols)
        r = self.ndef + self.nres_rows
        for k, kcols in self.kin_rows:
            cols = np.concatenate([np.arange(2, self.off), self._node_cols(k)])
            for _ in kcols:
                pairs.extend((r, int(c)) for c in cols)
                r += 1
        for k in self.proj_nodes:
            cols = self._node_cols(k)
            for _ in range(tr.nxt):
                pairs.extend((r, int(c)) for c in cols)
                r += 1
        return pairs

    def _split(self, z):
        tr = self.tr
        t0, tf = z[0], z[1]
        P = z[2:self.off]
        B = z[self.off:].reshape(self.nloc, tr.nb)
        Y = B[:, :tr.ny]
        X = B[:, tr.ny:tr.ny + tr.nx]
        A = B[:, tr.ny + tr.nx:]
        return t0, tf, P, Y, X, A

    def constraint(self, z, jac):
        tr = self.tr
        ny, nb = tr.ny, tr.nb
        t0, tf, P, Y, X, Acc = self._split(z)
        F, dF, dFp, R, dR, dRp, kin = tr.node_dynamics(Y, X, Acc, P, jac)
        L = self.L
        out = np.empty(self.nout)
        d = self.dtau[:, None]
        dur = tf - t0
        h = dur * d
        # Bordalba: each interval integrates to the projected state x̃ at its end (x̃ → x by projection)
        Yend = Y
        if tr.bordalba:
            Yend = Y.copy()
            Yend[:, :tr.nxt] = Acc[:, tr.a_xt:tr.a_xt + tr.nxt]
        if not jac:
            out[:self.ndef] = collocation_defects(tr.scheme, Y, F, h[:, 0], Yend)[0]
        if tr.nres:
            out[self.ndef:self.ndef + self.nres_rows] = R[self.owned].reshape(-1)
        r = self.ndef + self.nres_rows
        for k, kcols in self.kin_rows:
            out[r:r + kcols.size] = kin["K"][k, kcols]
            r += kcols.size
        if self.proj_nodes.size:
            pn, nxt = self.proj_nodes, tr.nxt
            mu = Acc[pn, tr.a_mu:tr.a_mu + tr.nmu]
            pr = tr.kernel.projection(Y[pn, :tr.nq], Y[pn, tr.nq:nxt], mu)
            out[r:] = (Y[pn, :nxt] - Acc[pn, tr.a_xt:tr.a_xt + nxt] - pr["proj"]).reshape(-1)
        if not jac:
            return out, None
        J = np.zeros((self.nout, self.nvar))
        E = np.zeros((ny, nb))
        E[:, :ny] = np.eye(ny)
        Eend = E  # derivative of the interval's end state
        if tr.bordalba:
            Eend = E.copy()
            xt0 = ny + tr.nx + tr.a_xt
            Eend[np.arange(tr.nxt), np.arange(tr.nxt)] = 0.0
            Eend[np.arange(tr.nxt), xt0 + np.arange(tr.nxt)] = 1.0
        out[:self.ndef], Jnodes = collocation_defects(tr.scheme, Y, F, h[:, 0], Yend, dF, E, Eend)
        h3 = h[:, :, None]  # (L, 1, 1)
        if tr.scheme == "trapezoidal":
            a, b = np.arange(L), np.arange(L) + 1
            Jt = (d / 2 * (F[a] + F[b]))  # d out / d t0 ; minus for tf
            J[:self.ndef, 0] = Jt.reshape(-1)
            J[:self.ndef, 1] = -Jt.reshape(-1)
            if tr.npar:
                J[:self.ndef, 2:self.off] = (-h3 / 2 * (dFp[a] + dFp[b])).reshape(-1, tr.npar)
        else:
            a, m, b = 2 * np.arange(L), 2 * np.arange(L) + 1, 2 * np.arange(L) + 2
            Jh = d / 8 * (F[a] - F[b])
            Js = d / 6 * (F[a] + 4 * F[m] + F[b])
            Jt = np.stack([Jh, Js], axis=1).reshape(-1)
            J[:self.ndef, 0] = Jt
            J[:self.ndef, 1] = -Jt
            if tr.npar:
                Ph = -h3 / 8 * (dFp[a] - dFp[b])
                Ps = -h3 / 6 * (dFp[a] + 4 * dFp[m] + dFp[b])
                J[:self.ndef, 2:self.off] = np.stack([Ph, Ps], axis=1).reshape(-1, tr.npar)
        J[:self.ndef, self.off:] = Jnodes
        if tr.nres:
            na = tr.nres
            for j, k in enumerate(self.owned):
                rows = slice(self.ndef + j * na, self.ndef + (j + 1) * na)
                cols = self._node_cols(k)
                J[rows, cols[0]:cols[-1] + 1] = dR[k]
                if tr.npar:
                    J[rows, 2:self.off] = dRp[k]
        r = self.ndef + self.nres_rows
        for k, kcols in self.kin_rows:
            rows = slice(r, r + kcols.size)
            cols = self._node_cols(k)
            J[rows, cols[0]:cols[-1] + 1] = kin["dK"][k][kcols]
            if tr.npar:
                J[rows, 2:self.off] = kin["dKp"][k][kcols]
            r += kcols.size
        if self.proj_nodes.size:
            nxt, xt0, mu0 = tr.nxt, ny + tr.nx + tr.a_xt, ny + tr.nx + tr.a_mu
            for j, k in enumerate(self.proj_nodes):
                rows = slice(r + j * nxt, r + (j + 1) * nxt)
                c0 = self._node_cols(k)[0]
                Jb = np.zeros((nxt, nb))
                Jb[:, :nxt] = np.eye(nxt) - pr["proj_x"][j]
                Jb[:, xt0:xt0 + nxt] = -np.eye(nxt)
                Jb[:, mu0:mu0 + tr.nmu] = -np.transpose(pr["Fx"][j])
                J[rows, c0:c0 + nb] = Jb
        return out, J

    def cost(self, z, jac):
        tr = self.tr
        t0, tf, P, Y, X, Acc = self._split(z)
        dur = tf - t0
        T = t0 + self.tau * dur
        total = 0.0
        grad = np.zeros(self.nvar) if jac else None
        q = self.quad
        for g in tr.integral_goals:
            s, dY, dX, dP, dT = g.integrand(T, Y, X, P)
            w = g.weight
            Sq = float(q @ s)
            total += w * dur * Sq
            if jac:
                grad[0] += w * (-Sq + dur * float(q @ (dT * (1 - self.tau))))
                grad[1] += w * (Sq + dur * float(q @ (dT * self.tau)))
                if tr.npar:
                    grad[2:self.off] += w * dur * (q @ dP)
                B = grad[self.off:].reshape(self.nloc, tr.nb)
                B[:, :tr.ny] += w * dur * q[:, None] * dY
                B[:, tr.ny:tr.ny + tr.nx] += w * dur * q[:, None] * dX
        if tr.multiplier_weight:
            w = tr.multiplier_weight
            lo = tr.ny + tr.nx + tr.nres
            Lam = Acc[:, tr.nres:tr.nres + tr.nl]
            Sq = float(q @ np.sum(Lam ** 2, axis=1))
            total += w * dur * Sq
            if jac:
                grad[0] -= w * Sq
                grad[1] += w * Sq
                B = grad[self.off:].reshape(self.nloc, tr.nb)
                B[:, lo:lo + tr.nl] += 2 * w * dur * q[:, None] * Lam
        return total, grad
