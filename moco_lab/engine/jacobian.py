"""The chunks' constraint Jacobians, all chunks at once, on their declared entries only.

A chunk's binding (:class:`~moco_lab.engine.chunks.Chunk`) returns its Jacobian as a dense ``(rows, variables)``
array, which Drake's AutoDiff path needs; IPOPT's C interface (:mod:`moco_lab.solve.ipopt_mumps`) needs only the
declared entries. Each of those is one number the node dynamics already hold — a defect's ``Ay·E + h·Af·∂F``, a
residual's or kinematic row's derivative, a defect's ``±Δτ·Af·F`` in ``t0``, ``tf`` — so :class:`DynamicsJacobian`
classifies every chunk's declared entries once and gathers their values from the all-node dynamics in a few
vector operations per evaluation, instead of 57 dense assemblies for the 3-D inverse (10 ms → under 1 ms per
Jacobian there). The values are the dense assembly's, operation for operation (``tests/test_transcription_jacobians``
checks them bit for bit).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .collocation import scheme_for

__all__ = ["DynamicsJacobian"]

# what a declared entry's value is gathered from
_DEFECT_NODE, _DEFECT_T0, _DEFECT_TF, _DEFECT_P, _RES_NODE, _RES_P, _KIN_NODE, _KIN_P = range(8)


class DynamicsJacobian:
    """Every chunk's declared constraint-Jacobian entries at once (the IPOPT + MUMPS path calls it instead of each
    chunk's dense Jacobian).

    Chunks with projection rows (Bordalba et al.), partial-integral rows or output path rows are not covered
    (:meth:`covers`): those transcriptions keep the chunks' own Jacobians.

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
        """Whether every chunk's rows are defects, residuals and kinematic rows only."""
        return bool(tr.chunks) and not tr.bordalba and not any(c.nint or c.npath or c.proj_nodes.size
                                                                for c in tr.chunks)

    def __init__(self, tr: Any):
        if not self.covers(tr):
            raise ValueError("DynamicsJacobian: the chunks have projection, partial-integral or path rows")
        self.tr = tr
        sch = scheme_for(tr.scheme)
        self.stride, self.Af = sch.stride, sch.defect_f
        ny, nb, na, npar = tr.ny, tr.nb, tr.nres, tr.npar
        s, nrow = sch.stride, sch.rows
        self.evaluators = [id(c.constraint_evaluator) for c in tr.chunks]
        self.entries = []
        parts = {k: [] for k in ("kind", "i", "c0", "dtau", "af")}
        nkin = tr.nkin
        dtau_all = np.diff(tr.grid.mesh)
        for c in tr.chunks:
            rc = np.array(c.sparsity, dtype=np.int64).reshape(-1, 2)
            r, col = rc[:, 0], rc[:, 1]
            self.entries.append((r, col))
            kind = np.full(r.size, -1)
            idx = np.zeros(r.size, np.int64)
            c0, dt, af = np.zeros(r.size), np.zeros(r.size), np.zeros(r.size)
            is_t0, is_tf = col == 0, col == 1
            is_p = (col >= 2) & (col < c.off)
            is_node = col >= c.off
            k = np.where(is_node, (col - c.off) // nb, 0)
            b = np.where(is_node, (col - c.off) % nb, 0)
            p = np.where(is_p, col - 2, 0)
            g = c.g[np.minimum(k, c.nloc - 1)]
            # defect rows: interval l, defect row rr, state y
            d = r < c.ndef
            per = max(ny, 1)                                # (no states: no defect rows)
            l, rr, y = r // (nrow * per), (r // per) % nrow, r % per
            gl = c.i0 + l                                   # the interval in the whole grid
            j = k - s * l                                   # the node's place in its interval
            m = d & is_node
            if np.any((j[m] < 0) | (j[m] > s)):
                raise AssertionError("DynamicsJacobian: a defect entry outside its interval's nodes")
            kind[m], idx[m] = _DEFECT_NODE, ((g * ny + y) * nb + b)[m]
            c0[m] = sch.defect_y[rr[m], j[m]] * (b[m] == y[m])
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
            kin_node, kin_col = np.zeros(c.nkin_rows, np.int64), np.zeros(c.nkin_rows, np.int64)
            q = 0
            for kk, kcols in c.kin_rows:
                kin_node[q:q + kcols.size], kin_col[q:q + kcols.size] = c.g[kk], kcols
                q += kcols.size
            kin = (r >= c.ndef + c.nres_rows) & (r < c.ndef + c.nres_rows + c.nkin_rows)
            kr = np.where(kin, r - c.ndef - c.nres_rows, 0)
            if not c.nkin_rows:
                kin_node = kin_col = np.zeros(1, np.int64)
            m = kin & is_node
            if np.any(g[m] != kin_node[kr[m]]):
                raise AssertionError("DynamicsJacobian: a kinematic entry outside its node's block")
            kind[m], idx[m] = _KIN_NODE, ((kin_node[kr] * nkin + kin_col[kr]) * nb + b)[m]
            m = kin & is_p
            kind[m], idx[m] = _KIN_P, ((kin_node[kr] * nkin + kin_col[kr]) * npar + p)[m]
            if np.any(kind < 0):
                bad = int(np.flatnonzero(kind < 0)[0])
                raise AssertionError(f"DynamicsJacobian: chunk [{c.i0}, {c.i1}) declares entry ({r[bad]}, {col[bad]}), "
                                     "which no node quantity gives")
            for key, v in zip(parts, (kind, idx, c0, dt, af)):
                parts[key].append(v)
        kind, index, c0, dtau, af = (np.concatenate(parts[key]) for key in parts)
        #: each kind's entries (positions in the output) and where their values are gathered from
        self._m = {code: np.flatnonzero(kind == code) for code in range(8)}
        self._i = {code: index[m] for code, m in self._m.items()}
        self._c0, self._af = c0[self._m[_DEFECT_NODE]], af[self._m[_DEFECT_NODE]]
        self._dt = {code: dtau[self._m[code]] for code in (_DEFECT_NODE, _DEFECT_T0, _DEFECT_TF, _DEFECT_P)}
        self.size = kind.size
        #: (N, s + 1): every interval's grid points
        self._interval_nodes = s * np.arange(tr.grid.num_mesh_intervals)[:, None] + np.arange(s + 1)[None, :]

    def values(self, x: np.ndarray) -> np.ndarray:
        """The declared entries of every chunk's Jacobian at the program's variables ``x``, chunk after chunk."""
        tr = self.tr
        x = np.asarray(x, float)
        t0, tf, P, B = tr.split_full(x)
        cache = tr.cache
        if cache.x is not None and cache.terms[1] is not None and np.array_equal(cache.x, x):
            F, dF, dFp, R, dR, dRp, kin = cache.terms
        else:
            F, dF, dFp, R, dR, dRp, kin = tr.node_dynamics(np.arange(tr.grid.num_points), B, P, True)
        dur = tf - t0
        out = np.empty(self.size)
        m, i = self._m, self._i
        # defects at node columns: Ay·E + h·Af·∂F (as collocation_defects writes them)
        k = _DEFECT_NODE
        out[m[k]] = self._c0 + (dur * self._dt[k]) * self._af * dF.reshape(-1)[i[k]]
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
        return out
