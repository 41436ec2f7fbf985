"""The chunks' constraint rows and their Jacobians, all chunks at once, on the declared entries only.

A chunk's binding (:class:`~moco_lab.engine.chunks.Chunk`) returns its rows and a dense ``(rows, variables)``
Jacobian, which Drake's AutoDiff path needs; IPOPT's C interface (:mod:`moco_lab.solve.ipopt_mumps`) needs the rows
and the declared entries only. Each of those is one number the all-node quantities already hold — a defect's
``Ay·E + h·Af·∂F``, a residual's or kinematic row's derivative, a defect's ``±Δτ·Af·F`` in ``t0``, ``tf``, a
partial integral's ``−(t_f − t_0) q_k ∂s/∂z_k`` — so :class:`DynamicsJacobian` classifies every chunk's rows and
declared entries once and gathers them from the node dynamics and the goals' node data in a few vector operations
per evaluation (the 3-D inverse's 57 chunks: 10 ms → 0.4 ms per Jacobian). The numbers are the chunks' own,
operation for operation (``tests/test_transcription_jacobians.py`` checks them bit for bit).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ocp.goals import NodeData
from ..symbolic.batched import matmul
from .collocation import scheme_for

__all__ = ["DynamicsJacobian"]

# what a declared entry's value is gathered from
(_DEFECT_NODE, _DEFECT_T0, _DEFECT_TF, _DEFECT_P, _RES_NODE, _RES_P, _KIN_NODE, _KIN_P, _INT_NODE, _INT_T0, _INT_TF,
 _INT_P, _INT_SELF) = range(13)
# what a row's value is gathered from
_ROW_DEFECT, _ROW_RES, _ROW_KIN, _ROW_INT = range(4)


class DynamicsJacobian:
    """Every chunk's constraint rows and declared Jacobian entries at once (the IPOPT + MUMPS path calls it instead
    of each chunk's binding).

    Chunks with projection rows (Bordalba et al.) or output path rows are not covered (:meth:`covers`): those
    transcriptions keep the chunks' own evaluations.

    Attributes
    ----------
    evaluators : list of int
        ``id`` of the chunks' constraint evaluators, in chunk order.
    entries : list of (ndarray, ndarray)
        Each chunk's declared entries (rows, columns in the chunk's own variables), in the order :meth:`values`
        returns them.
    """

    @staticmethod
    def covers(tr: Any) -> bool:
        """Whether every chunk's rows are defects, residuals, kinematic rows and partial integrals only."""
        return bool(tr.chunks) and not tr.bordalba and not any(c.npath or c.proj_nodes.size for c in tr.chunks)

    def __init__(self, tr: Any):
        if not self.covers(tr):
            raise ValueError("DynamicsJacobian: the chunks have projection or output path rows")
        self.tr = tr
        sch = scheme_for(tr.scheme)
        self.Af, self.Ay = sch.defect_f, sch.defect_y
        ny, nb, na, npar, nkin = tr.ny, tr.nb, tr.nres, tr.npar, tr.nkin
        s, nrow = sch.stride, sch.rows
        self.nint = nint = len(tr.integral_goals)
        self.evaluators = [id(c.constraint_evaluator) for c in tr.chunks]
        self.entries = []
        parts = {k: [] for k in ("kind", "i", "c0", "dtau", "af")}
        rows = {k: [] for k in ("kind", "i")}
        dtau_all = self._dtau = np.diff(tr.grid.mesh)
        #: the chunks' nodes one after the other (a point two chunks share twice): where each chunk's start
        offset = np.concatenate([[0], np.cumsum([c.nloc for c in tr.chunks])])
        nloc_total = self._nloc_total = int(offset[-1])
        self._offset = offset[:-1]
        for ci, c in enumerate(tr.chunks):
            rc = np.array(c.sparsity, dtype=np.int64).reshape(-1, 2)
            r, col = rc[:, 0], rc[:, 1]
            self.entries.append((r, col))
            kind = np.full(r.size, -1)
            idx = np.zeros(r.size, np.int64)
            c0, dt, af = np.zeros(r.size), np.zeros(r.size), np.zeros(r.size)
            is_t0, is_tf = col == 0, col == 1
            is_p = (col >= 2) & (col < c.off)
            is_node = (col >= c.off) & (col < c.off + c.nloc * nb)
            is_self = col >= c.off + c.nloc * nb                 # the chunk's partial-integral variables
            k = np.where(is_node, (col - c.off) // nb, 0)
            b = np.where(is_node, (col - c.off) % nb, 0)
            p = np.where(is_p, col - 2, 0)
            g = c.g[np.minimum(k, c.nloc - 1)]
            # defect rows: interval l, defect row rr, state y
            d = r < c.ndef
            per = max(ny, 1)                                      # (no states: no defect rows)
            l, rr, y = r // (nrow * per), (r // per) % nrow, r % per
            gl = c.i0 + l                                         # the interval in the whole grid
            j = k - s * l                                         # the node's place in its interval
            m = d & is_node
            if np.any((j[m] < 0) | (j[m] > s)):
                raise AssertionError("DynamicsJacobian: a defect entry outside its interval's nodes")
            kind[m], idx[m] = _DEFECT_NODE, ((g * ny + y) * nb + b)[m]
            c0[m] = self.Ay[rr[m], j[m]] * (b[m] == y[m])
            dt[m], af[m] = dtau_all[gl[m]], self.Af[rr[m], j[m]]
            for flag, code in ((is_t0, _DEFECT_T0), (is_tf, _DEFECT_TF)):
                m = d & flag
                kind[m], idx[m], dt[m] = code, ((gl * nrow + rr) * ny + y)[m], dtau_all[gl[m]]
            m = d & is_p
            kind[m], idx[m], dt[m] = _DEFECT_P, (((gl * nrow + rr) * ny + y) * npar + p)[m], dtau_all[gl[m]]
            # residual rows: the owned node jj, residual a
            res = (r >= c.ndef) & (r < c.ndef + c.nres_rows)
            jj, a = (r - c.ndef) // max(na, 1), (r - c.ndef) % max(na, 1)
            owner = c.g[c.owned[np.clip(jj, 0, c.owned.size - 1)]] if c.owned.size else np.zeros(r.size, int)
            m = res & is_node
            if np.any(g[m] != owner[m]):
                raise AssertionError("DynamicsJacobian: a residual entry outside its node's block")
            kind[m], idx[m] = _RES_NODE, ((owner * na + a) * nb + b)[m]
            m = res & is_p
            kind[m], idx[m] = _RES_P, ((owner * na + a) * npar + p)[m]
            # kinematic rows: node and column of K = [φ, φ̇, φ̈]
            kin_node, kin_col = self._kinematic_rows(c)
            k0 = c.ndef + c.nres_rows
            kin = (r >= k0) & (r < k0 + c.nkin_rows)
            kr = np.where(kin, r - k0, c.nkin_rows)               # (other rows read the padding entry)
            kin_node, kin_col = np.append(kin_node, 0), np.append(kin_col, 0)
            m = kin & is_node
            if np.any(g[m] != kin_node[kr[m]]):
                raise AssertionError("DynamicsJacobian: a kinematic entry outside its node's block")
            kind[m], idx[m] = _KIN_NODE, ((kin_node[kr] * nkin + kin_col[kr]) * nb + b)[m]
            m = kin & is_p
            kind[m], idx[m] = _KIN_P, ((kin_node[kr] * nkin + kin_col[kr]) * npar + p)[m]
            # partial integrals J_c − (t_f − t_0) Σ_k q_k s(z_k): goal jg of chunk ci
            i0 = k0 + c.nkin_rows
            integ = (r >= i0) & (r < i0 + c.nint)
            jg = np.where(integ, r - i0, 0)
            m = integ & is_node
            kind[m], idx[m], af[m] = _INT_NODE, ((jg * nloc_total + offset[ci] + k) * nb + b)[m], c.quad[k[m]]
            for flag, code in ((is_t0, _INT_T0), (is_tf, _INT_TF)):
                m = integ & flag
                kind[m], idx[m] = code, (ci * nint + jg)[m]
            m = integ & is_p
            kind[m], idx[m] = _INT_P, ((ci * nint + jg) * npar + p)[m]
            m = integ & is_self
            if np.any(col[m] - (c.off + c.nloc * nb) != jg[m]):
                raise AssertionError("DynamicsJacobian: a partial integral's row reads another goal's variable")
            kind[m] = _INT_SELF
            if np.any(kind < 0):
                bad = int(np.flatnonzero(kind < 0)[0])
                raise AssertionError(f"DynamicsJacobian: chunk [{c.i0}, {c.i1}) declares entry ({r[bad]}, {col[bad]}), "
                                     "which no node quantity gives")
            for key, v in zip(parts, (kind, idx, c0, dt, af)):
                parts[key].append(v)
            # the chunk's rows, in its order: defects, residuals, kinematic rows, partial integrals
            rows["kind"] += [np.full(c.ndef, _ROW_DEFECT), np.full(c.nres_rows, _ROW_RES),
                             np.full(c.nkin_rows, _ROW_KIN), np.full(c.nint, _ROW_INT)]
            rows["i"] += [c.i0 * nrow * ny + np.arange(c.ndef),
                          (c.g[c.owned][:, None] * na + np.arange(na)[None, :]).reshape(-1),
                          (kin_node * nkin + kin_col)[:c.nkin_rows], ci * nint + np.arange(c.nint)]
            if c.nout != c.ndef + c.nres_rows + c.nkin_rows + c.nint:
                raise AssertionError(f"DynamicsJacobian: chunk [{c.i0}, {c.i1}) has rows it does not know")
        kind, index, c0, dtau, af = (np.concatenate(parts[key]) for key in parts)
        #: each kind's entries (positions in the output) and where their values are gathered from
        self._m = {code: np.flatnonzero(kind == code) for code in range(13)}
        self._i = {code: index[m] for code, m in self._m.items()}
        self._c0 = c0[self._m[_DEFECT_NODE]]
        self._af = {code: af[self._m[code]] for code in (_DEFECT_NODE, _INT_NODE)}
        self._dt = {code: dtau[self._m[code]] for code in (_DEFECT_NODE, _DEFECT_T0, _DEFECT_TF, _DEFECT_P)}
        self.size = kind.size
        row_kind, row_index = np.concatenate(rows["kind"]), np.concatenate(rows["i"]).astype(np.int64)
        self._rows = {code: (np.flatnonzero(row_kind == code), row_index[row_kind == code]) for code in range(4)}
        self.num_rows = row_kind.size
        #: (N, s + 1): every interval's grid points
        self._interval_nodes = s * np.arange(tr.grid.num_mesh_intervals)[:, None] + np.arange(s + 1)[None, :]
        #: each chunk's partial-integral variables' places in the program's variables
        self._partials = [c.var_full_index[c.var_index.size:] for c in tr.chunks]

    @staticmethod
    def _kinematic_rows(c: Any) -> tuple[np.ndarray, np.ndarray]:
        """Grid point and column of ``K = [φ, φ̇, φ̈]`` of each of the chunk's kinematic rows."""
        node, col = np.zeros(c.nkin_rows, np.int64), np.zeros(c.nkin_rows, np.int64)
        q = 0
        for kk, kcols in c.kin_rows:
            node[q:q + kcols.size], col[q:q + kcols.size] = c.g[kk], kcols
            q += kcols.size
        return node, col

    # ----------------------------------------------------------------------------------- evaluations
    def _integrals(self, x: np.ndarray, jac: bool) -> list:
        """Each chunk's integral goals' integrands ``s`` (nloc,) and, with ``jac``, their derivatives ``(dB (nloc,
        nb), dP (nloc, np), dT (nloc,))``: ``[chunk][goal]``, evaluated chunk by chunk on the node cache's arrays
        as the chunks read them (Chunk._data), so that the rows are theirs to the bit (an integrand's sums over a
        batch of nodes can round differently from one batch size to another)."""
        tr = self.tr
        t0, tf, P, _ = tr.split_full(x)
        dur = tf - t0
        data, douts = tr.cache.data_at(x, jac)
        out = []
        for c in tr.chunks:
            g = c.g
            sub = NodeData(t0 + c.tau * dur, data.Y[g], data.X[g], data.A[g], P,
                           {n: v[g] for n, v in data.outputs.items()})
            dsub = {n: (a[g], b[g]) for n, (a, b) in douts.items()}
            goals = []
            for b in tr.integral_goals:
                s, ds = b.integrand(sub, jac)
                goals.append((np.asarray(s, float), tr.chain_goal_derivative(ds, dsub, c.nloc) if jac else None))
            out.append(goals)
        return out

    def constraints(self, x: np.ndarray) -> np.ndarray:
        """Every chunk's rows at the program's variables ``x``, chunk after chunk (each chunk's in its order)."""
        tr = self.tr
        x = np.asarray(x, float)
        t0, tf, _, B = tr.split_full(x)
        dyn = tr.cache.dynamics_at(x, False)
        F, R, kin = dyn[0], dyn[3], dyn[6]
        dur = tf - t0
        out = np.empty(self.num_rows)
        m, i = self._rows[_ROW_DEFECT]
        if m.size:   # defect_y · Y + h defect_f · F over every interval (as collocation_defects writes them)
            nodes = self._interval_nodes
            Y = B[:, tr.layout.y]
            h = dur * self._dtau                            # each interval's duration
            d = (np.einsum("rj,ljy->lry", self.Ay, Y[nodes])
                 + h[:, None, None] * np.einsum("rj,ljy->lry", self.Af, F[nodes])).reshape(-1)
            out[m] = d[i]
        m, i = self._rows[_ROW_RES]
        out[m] = R.reshape(-1)[i]
        m, i = self._rows[_ROW_KIN]
        if m.size:
            out[m] = kin["K"].reshape(-1)[i]
        m, i = self._rows[_ROW_INT]
        if m.size:
            values = np.empty((len(tr.chunks), self.nint))
            for ci, (c, goals) in enumerate(zip(tr.chunks, self._integrals(x, False))):
                for j, (s, _) in enumerate(goals):
                    values[ci, j] = x[self._partials[ci][j]] - dur * float(matmul(c.quad, s))
            out[m] = values.reshape(-1)[i]
        return out

    def values(self, x: np.ndarray) -> np.ndarray:
        """The declared entries of every chunk's Jacobian at the program's variables ``x``, chunk after chunk."""
        x = np.asarray(x, float)
        t0, tf = self.tr.split_full(x)[:2]
        F, dF, dFp, R, dR, dRp, kin = self.tr.cache.dynamics_at(x, True)
        dur = tf - t0
        out = np.empty(self.size)
        m, i = self._m, self._i
        # defects at node columns: Ay·E + h·Af·∂F (as collocation_defects writes them)
        k = _DEFECT_NODE
        out[m[k]] = self._c0 + (dur * self._dt[k]) * self._af[k] * dF.reshape(-1)[i[k]]
        if m[_DEFECT_T0].size or m[_DEFECT_TF].size or m[_DEFECT_P].size:
            nodes = self._interval_nodes
            AfF = np.einsum("rj,ljy->lry", self.Af, F[nodes]).reshape(-1)
            out[m[_DEFECT_T0]] = -(self._dt[_DEFECT_T0] * AfF[i[_DEFECT_T0]])
            out[m[_DEFECT_TF]] = self._dt[_DEFECT_TF] * AfF[i[_DEFECT_TF]]
            if m[_DEFECT_P].size:
                AfdFp = np.einsum("rj,ljyp->lryp", self.Af, dFp[nodes]).reshape(-1)
                out[m[_DEFECT_P]] = (dur * self._dt[_DEFECT_P]) * AfdFp[i[_DEFECT_P]]
        out[m[_RES_NODE]] = dR.reshape(-1)[i[_RES_NODE]]
        out[m[_RES_P]] = dRp.reshape(-1)[i[_RES_P]]
        if m[_KIN_NODE].size or m[_KIN_P].size:
            out[m[_KIN_NODE]] = kin["dK"].reshape(-1)[i[_KIN_NODE]]
            out[m[_KIN_P]] = kin["dKp"].reshape(-1)[i[_KIN_P]]
        if self.nint:
            self._integral_entries(out, x, tf - t0)
        return out

    def _integral_entries(self, out: np.ndarray, x: np.ndarray, dur: float) -> None:
        """The partial integrals' entries (as :meth:`Chunk.constraint` writes them, chunk by chunk)."""
        tr, m, i = self.tr, self._m, self._i
        nc, nint, npar = len(tr.chunks), self.nint, tr.npar
        T0, TF, Pj = np.empty((nc, nint)), np.empty((nc, nint)), np.empty((nc, nint, npar))
        dBs = np.empty((nint, self._nloc_total, tr.nb))
        for ci, (c, goals) in enumerate(zip(tr.chunks, self._integrals(x, True))):
            q, tau, o = c.quad, c.tau, self._offset[ci]
            for j, (s, (dB, dP, dT)) in enumerate(goals):
                dBs[j, o:o + c.nloc] = dB
                Sq = float(matmul(q, s))
                T0[ci, j] = Sq - dur * float(matmul(q, dT * (1 - tau)))
                TF[ci, j] = -Sq - dur * float(matmul(q, dT * tau))
                Pj[ci, j] = -dur * matmul(q, dP)
        k = _INT_NODE
        out[m[k]] = -((dur * self._af[k]) * dBs.reshape(-1)[i[k]])
        out[m[_INT_T0]] = T0.reshape(-1)[i[_INT_T0]]
        out[m[_INT_TF]] = TF.reshape(-1)[i[_INT_TF]]
        out[m[_INT_P]] = Pj.reshape(-1)[i[_INT_P]]
        out[m[_INT_SELF]] = 1.0
