"""The transcription's chunks: the dynamics, residuals and kinematic constraints of a run of mesh intervals.

Defects, residuals and kinematic-constraint rows are evaluated in *chunks* of ``chunk_size`` mesh intervals: one
Python callback per chunk (:class:`Chunk`) evaluates every node of the chunk with the compiled kernel
(:mod:`moco_lab.engine.kernel`) and returns exact Jacobians; the integral costs are summed chunk by chunk. Each
binding declares its Jacobian's structural non-zeros exactly: the chunk's own Jacobian assembly is run once on the
structural patterns of the kernel's derivatives (random positive entries where an entry can be non-zero, so
nothing cancels), and its non-zeros are the declared pattern. :class:`NodeCache` keeps the last point's node
evaluations, which the constraint and cost callbacks of one optimizer iteration share.

A chunk reads the variables, grid, kernel and goals of the
:class:`~moco_lab.engine.transcription.Transcription` it belongs to (``tr``), which creates it.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ocp.goals import NodeData
from ..symbolic.batched import matmul
from .collocation import collocation_defects, quadrature_weights, scheme_for
from .patterns import patterned

__all__ = ["Chunk", "NodeCache"]


class NodeCache:
    """Every grid point's dynamics and goal data at the optimizer's latest point, computed in one pass.

    Drake's IPOPT calls the program's visualization callbacks with the full
    decision vector whenever it evaluates the objective at a new point, which
    it does before it evaluates the constraints there. This cache is such a
    callback: it evaluates the kernel for all grid points at once (one compiled
    call instead of one per chunk) and keeps the result with the point. A chunk
    uses it only if its own variables equal the cached point's, bit for bit;
    otherwise it computes its nodes itself, so the cache can only save time,
    never change a result.
    """

    def __init__(self, tr: Any):
        self.tr = tr
        self.x = None
        self.terms = None
        self.data = None
        self.hits = self.misses = 0

    def update(self, x: np.ndarray) -> None:
        """Evaluate every node's dynamics (and, if goals need them, node data) at the full variable vector ``x``."""
        tr = self.tr
        x = np.array(x, float)
        t0, tf, P, B = tr.split_full(x)
        idx = np.arange(tr.grid.num_points)
        self.x = None  # invalid while computing (an exception leaves no stale data)
        self.terms = tr.node_dynamics(idx, B, P, True)
        T = t0 + tr.grid.tau * (tf - t0)
        self.data = tr.node_data(idx, B, P, T, True) if tr.outputs or tr.integral_goals or tr.integral_costs \
            else None
        self.x = x

    def holds(self, x: np.ndarray) -> bool:
        """Whether the cache holds the full variable vector ``x``, bit for bit."""
        return self.x is not None and np.array_equal(self.x, x)

    def dynamics_at(self, x: np.ndarray, jac: bool) -> tuple:
        """Every grid point's :meth:`Transcription.node_dynamics` at the full variable vector ``x`` (with their
        Jacobians if ``jac``): the cached ones when the cache holds ``x``, else computed (not kept)."""
        if self.holds(x) and (not jac or self.terms[1] is not None):
            return self.terms
        tr = self.tr
        _, _, P, B = tr.split_full(x)
        return tr.node_dynamics(np.arange(tr.grid.num_points), B, P, jac)

    def data_at(self, x: np.ndarray, jac: bool) -> tuple:
        """Every grid point's goal :class:`NodeData` and output derivatives at ``x``: the cached ones when the
        cache holds ``x``, else computed (not kept)."""
        if self.holds(x) and self.data is not None:
            return self.data
        tr = self.tr
        t0, tf, P, B = tr.split_full(x)
        return tr.node_data(np.arange(tr.grid.num_points), B, P, t0 + tr.grid.tau * (tf - t0), jac)

    def lookup(self, var_index: np.ndarray, z: np.ndarray) -> bool:
        """Whether the cached point has the values ``z`` at the variables ``var_index`` (counts hits and misses)."""
        if self.x is not None and np.array_equal(self.x[var_index], z):
            self.hits += 1
            return True
        self.misses += 1
        return False


class Chunk:
    """Defects, residuals, kinematic rows and goal partial integrals of mesh intervals ``[i0, i1)`` in one binding."""

    def __init__(self, tr: Any, i0: int, i1: int):
        self.tr = tr
        self.i0, self.i1 = i0, i1
        s = tr.grid.stride
        self.g = np.arange(s * i0, s * i1 + 1)
        self.nloc = self.g.size
        self.L = i1 - i0
        self.off = 2 + tr.npar
        blocks = [np.concatenate([tr.Y[k], tr.X[k], tr.A[k]]) for k in self.g]
        # one partial-integral variable per goal that needs its integral
        self.partial = {b.name: tr.prog.NewContinuousVariables(1, f"I_{b.name}_{i0}")[0] for b in tr.integral_goals}
        self.node_vars = np.concatenate([[tr.t0, tr.tf], tr.P, *blocks])
        self.vars = np.concatenate([self.node_vars, list(self.partial.values())])
        # the plain integral costs read only some columns of each node block: bind only those
        self.cost_vars = np.concatenate([[tr.t0, tr.tf], tr.P, *[b[tr.cost_columns] for b in blocks]])
        self.nvar = self.vars.size
        self.dtau = np.diff(tr.grid.mesh)[i0:i1]
        self.tau = tr.grid.tau[self.g]
        # the chunk's first and last nodes are shared with neighbouring chunks:
        # quadrature weights only from this chunk's own intervals
        self.quad = quadrature_weights(tr.scheme, self.dtau)
        # residual and kinematic rows at the nodes this chunk owns
        last = i1 == tr.grid.num_mesh_intervals
        self.owned = np.arange(self.nloc if last else self.nloc - 1)
        self.kin_rows = []
        for k in self.owned if tr.nkin else []:
            cols = tr.kin_mesh_cols if tr.grid.is_mesh[self.g[k]] else tr.kin_mid_cols
            cols = tr.kin_endpoint_cols.get(int(self.g[k]), cols)
            if cols.size:
                self.kin_rows.append((int(k), cols))
        self.nkin_rows = sum(c.size for _, c in self.kin_rows)
        # Bordalba: projection rows x − x̃ − F_xᵀμ at owned mesh points that end an interval
        self.proj_nodes = np.array([k for k in self.owned if tr.projection_nodes[self.g[k]]], int) \
            if tr.bordalba else np.zeros(0, int)
        self.scheme = scheme_for(tr.scheme)
        #: (L, stride + 1): each interval's nodes, as chunk-local indices
        self.interval_nodes = self.scheme.stride * np.arange(self.L)[:, None] + np.arange(self.scheme.stride + 1)
        self.ndef = self.L * tr.ny * self.scheme.rows
        self.nres_rows = self.owned.size * tr.nres
        self.nint = len(self.partial)
        # output path constraint rows at the owned mesh points (node by node, each constraint row in turn)
        self.path_nodes = np.array([k for k in self.owned if tr.grid.is_mesh[self.g[k]]], int) \
            if tr.path_goals else np.zeros(0, int)
        self.npath = self.path_nodes.size * len(tr.path_goals)
        self.npre = self.ndef + self.nres_rows + self.nkin_rows + self.proj_nodes.size * tr.layout.nxt + self.nint
        self.nout = self.npre + self.npath
        self.lower = np.zeros(self.nout)
        self.upper = np.zeros(self.nout)
        for m, k in enumerate(self.path_nodes):
            rows = slice(self.npre + m * len(tr.path_goals), self.npre + (m + 1) * len(tr.path_goals))
            self.lower[rows], self.upper[rows] = tr.path_bounds(int(self.g[k]))
        self.sparsity = self._structure()

    def signature(self) -> tuple:
        """What the chunk's structures (its Jacobian's and its Hessians', in its own variables) depend on beyond the
        transcription: chunks with equal signatures have equal structures, found once (:meth:`shared_structure`).

        The structure runs take random values for every node quantity (patterns) and for ``t0`` and ``tf``, so a
        chunk's place in the grid enters only through the rows it owns, its kinematic, projection and path rows and
        its quadrature weights' zeros; the projection rows evaluate the kernel on the nodes' own data, so chunks with
        projection rows are told apart by their grid points.
        """
        return (self.L, self.nloc, self.nvar, self.nout, self.cost_vars.size, tuple(self.owned),
                tuple((k, tuple(cols)) for k, cols in self.kin_rows), tuple(self.path_nodes), self.nint,
                tuple(self.quad != 0), tuple(self.proj_nodes), tuple(self.g) if self.proj_nodes.size else ())

    def shared_structure(self, what: str, find: Callable[[], Any]) -> Any:
        """``find()``, computed once per ``what`` and :meth:`signature` in the transcription (57 equal chunks of the
        3-D inverse: one structure run instead of 57)."""
        store = self.tr.__dict__.setdefault("_chunk_structures", {})
        key = (what, self.signature())
        if key not in store:
            store[key] = find()
        return store[key]

    def _node_cols(self, k):
        o = self.off + k * self.tr.nb
        return np.arange(o, o + self.tr.nb)

    def _cached(self, z) -> bool:
        index = getattr(self, "var_index", None)
        return index is not None and self.tr.cache.lookup(index, z[:index.size])

    def _dynamics(self, z, B, P, jac):
        """The chunk's node dynamics: from the all-node cache when it holds this point, else computed."""
        if self._cached(z) and (jac <= (self.tr.cache.terms[1] is not None)):
            F, dF, dFp, R, dR, dRp, kin = self.tr.cache.terms
            g = self.g
            take = lambda a: None if a is None else a[g]  # noqa: E731
            kin = None if kin is None else {k: v[g] for k, v in kin.items()}
            return F[g], take(dF), take(dFp), R[g], take(dR), take(dRp), kin
        return self.tr.node_dynamics(self.g, B, P, jac)

    def _data(self, z, B, P, T, jac):
        """The goals' node data (and output derivatives) of the chunk's nodes, from the cache when possible."""
        if self._cached(z) and self.tr.cache.data is not None:
            data, douts = self.tr.cache.data
            g = self.g
            sub = NodeData(T, data.Y[g], data.X[g], data.A[g], P, {n: v[g] for n, v in data.outputs.items()})
            return sub, {n: (a[g], b[g]) for n, (a, b) in douts.items()}
        return self.tr.node_data(self.g, B, P, T, jac)

    def _split(self, z):
        tr = self.tr
        t0, tf = z[0], z[1]
        P = z[2:self.off]
        B = z[self.off:self.off + self.nloc * tr.nb].reshape(self.nloc, tr.nb)
        return t0, tf, P, B

    # -------------------------------------------------------------- the exact structure
    def _structure(self) -> list[tuple[int, int]]:
        """Structural non-zeros of the chunk's Jacobian: its assembly run on the derivatives' patterns (once per
        :meth:`signature`)."""
        return self.shared_structure("jacobian", self._find_structure)

    def _find_structure(self) -> list[tuple[int, int]]:
        rng = np.random.default_rng(12345)
        z = rng.uniform(0.5, 1.5, self.nvar)
        z[1] = z[0] + 1.0  # tf > t0
        with patterned(self.tr, rng):
            _, J = self.constraint(z, True)
        rows, cols = np.nonzero(J)
        return [(int(r), int(c)) for r, c in zip(rows, cols)]

    # -------------------------------------------------------------- constraint rows
    def constraint(self, z: np.ndarray, jac: bool) -> tuple[np.ndarray, Any]:
        """The chunk's constraint rows at its variables ``z`` and, if ``jac``, their Jacobian."""
        tr, lay = self.tr, self.tr.layout
        ny, nb = tr.ny, tr.nb
        t0, tf, P, B = self._split(z)
        F, dF, dFp, R, dR, dRp, kin = self._dynamics(z, B, P, jac)
        Y = B[:, lay.y]
        out = np.empty(self.nout)
        d = self.dtau[:, None]
        dur = tf - t0
        h = dur * d
        # Bordalba: each interval integrates to the projected state x̃ at its end (x̃ → x by projection)
        Yend = Y
        if tr.bordalba:
            Yend = Y.copy()
            Yend[:, :lay.nxt] = B[:, lay.xt]
        if not jac:
            out[:self.ndef] = collocation_defects(tr.scheme, Y, F, h[:, 0], Yend)[0]
        r = self.ndef
        if tr.nres:
            out[r:r + self.nres_rows] = R[self.owned].reshape(-1)
        r += self.nres_rows
        for k, kcols in self.kin_rows:
            out[r:r + kcols.size] = kin["K"][k, kcols]
            r += kcols.size
        if self.proj_nodes.size:
            pn, nxt = self.proj_nodes, lay.nxt
            inp = tr.node_inputs(self.g[pn], B[pn])
            pr = tr.kernel.projection(inp["Q"], inp["U"], inp["Mu"])
            out[r:r + pn.size * nxt] = (Y[pn, :nxt] - B[pn][:, lay.xt] - pr["proj"]).reshape(-1)
            r += pn.size * nxt
        # partial integrals: J_c − ∫_chunk s dt = 0
        integ = {}
        if self.nint or self.npath:
            T = t0 + self.tau * dur
            data, douts = self._data(z, B, P, T, jac)
        if self.nint:
            for j, b in enumerate(tr.integral_goals):
                s, ds = b.integrand(data, jac)
                Sq = float(matmul(self.quad, s))
                out[r + j] = z[self.off + self.nloc * nb + j] - dur * Sq
                integ[b.name] = (s, ds, Sq)
        # output path constraints: each row's value at the path nodes
        npg, paths = len(tr.path_goals), []
        for j, b in enumerate(tr.path_goals if self.npath else ()):
            s, ds = b.integrand(data, jac)
            out[self.npre + j:self.nout:npg] = np.asarray(s, float)[self.path_nodes]
            paths.append(ds)
        if not jac:
            return out, None
        J = np.zeros((self.nout, self.nvar))
        E = np.zeros((ny, nb))
        E[:, :ny] = np.eye(ny)
        Eend = E  # derivative of the interval's end state
        if tr.bordalba:
            Eend = E.copy()
            Eend[np.arange(lay.nxt), np.arange(lay.nxt)] = 0.0
            Eend[np.arange(lay.nxt), lay.xt.start + np.arange(lay.nxt)] = 1.0
        out[:self.ndef], Jnodes = collocation_defects(tr.scheme, Y, F, h[:, 0], Yend, dF, E, Eend)
        # the defects' h (defect_f · F) part: derivatives w.r.t. t0 (−), tf (+) and the parameters
        Af, idx = self.scheme.defect_f, self.interval_nodes
        AfF = np.einsum("rj,ljy->lry", Af, F[idx])  # (L, rows, ny)
        Jt = (d[:, :, None] * AfF).reshape(-1)
        J[:self.ndef, 0] = -Jt
        J[:self.ndef, 1] = Jt
        if tr.npar:
            J[:self.ndef, 2:self.off] = (h[:, :, None, None] * np.einsum("rj,ljyp->lryp", Af, dFp[idx])
                                         ).reshape(-1, tr.npar)
        J[:self.ndef, self.off:self.off + self.nloc * nb] = Jnodes
        r = self.ndef
        if tr.nres:
            na = tr.nres
            for j, k in enumerate(self.owned):
                rows = slice(r + j * na, r + (j + 1) * na)
                cols = self._node_cols(k)
                J[rows, cols[0]:cols[-1] + 1] = dR[k]
                if tr.npar:
                    J[rows, 2:self.off] = dRp[k]
        r += self.nres_rows
        for k, kcols in self.kin_rows:
            rows = slice(r, r + kcols.size)
            cols = self._node_cols(k)
            J[rows, cols[0]:cols[-1] + 1] = kin["dK"][k][kcols]
            if tr.npar:
                J[rows, 2:self.off] = kin["dKp"][k][kcols]
            r += kcols.size
        if self.proj_nodes.size:
            nxt = lay.nxt
            for j, k in enumerate(self.proj_nodes):
                rows = slice(r + j * nxt, r + (j + 1) * nxt)
                c0 = self._node_cols(k)[0]
                Jb = np.zeros((nxt, nb))
                Jb[:, :nxt] = np.eye(nxt) - pr["proj_x"][j]
                Jb[:, lay.xt] = -np.eye(nxt)
                Jb[:, lay.mu] = -np.transpose(pr["Fx"][j])
                J[rows, c0:c0 + nb] = Jb
            r += self.proj_nodes.size * nxt
        for j, bg in enumerate(tr.integral_goals):
            s, ds, Sq = integ[bg.name]
            row = r + j
            dB, dP, dT = tr.chain_goal_derivative(ds, douts, self.nloc)
            J[row, 0] = Sq - dur * float(matmul(self.quad, dT * (1 - self.tau)))
            J[row, 1] = -Sq - dur * float(matmul(self.quad, dT * self.tau))
            J[row, 2:self.off] = -dur * matmul(self.quad, dP)
            J[row, self.off:self.off + self.nloc * nb] = -(dur * self.quad[:, None] * dB).reshape(-1)
            J[row, self.off + self.nloc * nb + j] = 1.0
        pn = self.path_nodes
        for j, ds in enumerate(paths):  # all path nodes of one constraint row at once
            dB, dP, dT = tr.chain_goal_derivative(ds, douts, self.nloc)
            rows = self.npre + np.arange(pn.size) * npg + j
            J[rows, 0] = dT[pn] * (1 - self.tau[pn])
            J[rows, 1] = dT[pn] * self.tau[pn]
            J[rows, 2:self.off] = dP[pn]
            J[rows[:, None], self.off + pn[:, None] * nb + np.arange(nb)[None, :]] = dB[pn]
        return out, J

    # -------------------------------------------------------------- plain integral costs
    def cost(self, z: np.ndarray, jac: bool) -> tuple[float, Any]:
        """The chunk's share of the plain integral costs at its variables ``z`` and, if ``jac``, their gradient."""
        tr = self.tr
        cols = tr.cost_columns
        t0, tf, P = z[0], z[1], z[2:self.off]
        B = np.zeros((self.nloc, tr.nb))
        B[:, cols] = z[self.off:].reshape(self.nloc, cols.size)
        dur = tf - t0
        T = t0 + self.tau * dur
        data, douts = self._data_for_cost(z, B, P, T, jac)
        total = 0.0
        grad = np.zeros(self.cost_vars.size) if jac else None
        q = self.quad
        for b in tr.integral_costs:
            s, ds = b.integrand(data, jac)
            w = b.weight
            Sq = float(matmul(q, s))
            total += w * dur * Sq
            if jac:
                dB, dP, dT = tr.chain_goal_derivative(ds, douts, self.nloc)
                grad[0] += w * (-Sq + dur * float(matmul(q, dT * (1 - self.tau))))
                grad[1] += w * (Sq + dur * float(matmul(q, dT * self.tau)))
                if tr.npar:
                    grad[2:self.off] += w * dur * matmul(q, dP)
                grad[self.off:] += (w * dur * q[:, None] * dB[:, cols]).reshape(-1)
        return total, grad

    def _data_for_cost(self, z, B, P, T, jac):
        """Node data for the costs: from the all-node cache when its point matches, else computed."""
        cache = self.tr.cache
        index = getattr(self, "cost_index", None)
        if index is not None and cache.data is not None and cache.lookup(index, z):
            data, douts = cache.data
            g = self.g
            sub = NodeData(T, data.Y[g], data.X[g], data.A[g], P, {n: v[g] for n, v in data.outputs.items()})
            return sub, {n: (a[g], b[g]) for n, (a, b) in douts.items()}
        return self.tr.node_data(self.g, B, P, T, jac)
